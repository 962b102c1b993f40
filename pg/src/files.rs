//! [`FileWorlds`]: the embedded default, worlds as save files and delta chains in a folder.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use datacomp::{Store, StorePatch};

use crate::error::{CommitError, Error};
use crate::ids::{Seq, WorldId};
use crate::merge::ConflictPolicy;
use crate::worlds::Worlds;

/// Numbers the temp files of this process's commits: unique among its writers too (threads
/// with a `FileWorlds` each).
static TEMPS: AtomicU64 = AtomicU64::new(0);

/// Longest world name, in bytes.
pub const MAX_NAME_BYTES: usize = 200;

/// Checks a world's name: 1 to [`MAX_NAME_BYTES`] ASCII letters, digits, `-`, `_` or `.`, not
/// starting with `.` (it names a folder).
pub(crate) fn check_name(name: &str) -> Result<(), Error> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME_BYTES
        && !name.starts_with('.')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    if ok { Ok(()) } else { Err(Error::BadName(datacomp::text::Shortened(name).to_string())) }
}

/// Worlds kept as files, with no server: a folder per world holding its base save
/// (`base.dcmp`, the empty world) and one delta file per accepted commit (`<seq>.delta`, 20
/// digits), what the crate's own saves and deltas are. Each delta is written whole to a temp
/// file and then linked to its name, which fails when the name exists: of two processes
/// committing on one base, one gets the seq and the other a [`CommitError::Conflict`].
///
/// ```text
/// DIR/shard-7/id            the world's id
/// DIR/shard-7/base.dcmp     seq 0
/// DIR/shard-7/00000000000000000001.delta, ...  each commit, in order
/// ```
///
/// A load reads the base and applies every delta: O(history). It keeps the last world it
/// loaded or committed, so a writer's next commit checks its patch against it without a read.
pub struct FileWorlds {
    dir: PathBuf,
    // The last world state seen: a commit on it checks its patch without a load.
    cache: Option<(WorldId, Seq, Store)>,
    policy: ConflictPolicy,
}

impl FileWorlds {
    /// Worlds in the folder `dir` (made if missing).
    ///
    /// # Errors
    ///
    /// [`Error::Io`] if the folder cannot be made.
    pub fn open(dir: impl AsRef<Path>) -> Result<FileWorlds, Error> {
        fs::create_dir_all(dir.as_ref())?;
        Ok(FileWorlds {
            dir: dir.as_ref().to_path_buf(),
            cache: None,
            policy: ConflictPolicy::default(),
        })
    }

    /// Sets how [`Worlds::commit_merging`] settles a key both sides changed.
    pub fn set_conflict_policy(&mut self, policy: ConflictPolicy) {
        self.policy = policy;
    }

    /// The folder of the world with this id.
    fn folder(&self, world: WorldId) -> Result<PathBuf, Error> {
        for entry in fs::read_dir(&self.dir)? {
            let path = entry?.path();
            if read_id(&path)? == Some(world) {
                return Ok(path);
            }
        }
        Err(Error::NoWorld(world.to_string()))
    }

    /// The seqs of the world's deltas, sorted.
    fn seqs(folder: &Path) -> Result<Vec<u64>, Error> {
        let mut seqs = Vec::new();
        for entry in fs::read_dir(folder)? {
            let name = entry?.file_name();
            let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(".delta")) else { continue };
            if stem.len() == 20
                && let Ok(seq) = stem.parse::<u64>()
            {
                seqs.push(seq);
            }
        }
        seqs.sort_unstable();
        Ok(seqs)
    }

    fn delta_path(folder: &Path, seq: u64) -> PathBuf {
        folder.join(format!("{seq:020}.delta"))
    }

    /// The world at its last seq: the cached state moved forward, or a load.
    fn current(&mut self, world: WorldId) -> Result<(Store, Seq), Error> {
        match self.cache.take() {
            Some((w, mut seq, mut store)) if w == world => {
                for (at, patch) in self.changes_since(world, seq)? {
                    patch.apply_to_equal(&mut store).map_err(|error| stored(world, at, error))?;
                    seq = at;
                }
                Ok((store, seq))
            }
            _ => self.load(world),
        }
    }
}

fn stored(world: WorldId, seq: Seq, error: datacomp::LoadError) -> Error {
    Error::Stored { world, what: format!("delta {seq}"), error }
}

/// The id a world's folder records, or `None` for a folder that is not a world's.
fn read_id(folder: &Path) -> Result<Option<WorldId>, Error> {
    match fs::read_to_string(folder.join("id")) {
        Ok(text) => Ok(text.trim().parse().ok().map(WorldId)),
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

impl Worlds for FileWorlds {
    fn create_world(&mut self, name: &str) -> Result<WorldId, Error> {
        check_name(name)?;
        let mut next = 1;
        for entry in fs::read_dir(&self.dir)? {
            if let Some(id) = read_id(&entry?.path())? {
                next = next.max(id.0 + 1);
            }
        }
        let folder = self.dir.join(name);
        match fs::create_dir(&folder) {
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                return Err(Error::WorldExists(name.to_string()));
            }
            other => other?,
        }
        Store::new().save(folder.join("base.dcmp")).map_err(to_io)?;
        datacomp::file::write_atomically(folder.join("id"), |out| writeln!(out, "{next}"))
            .map_err(to_io)?;
        Ok(WorldId(next))
    }

    fn world(&mut self, name: &str) -> Result<Option<WorldId>, Error> {
        check_name(name)?;
        read_id(&self.dir.join(name))
    }

    fn load(&mut self, world: WorldId) -> Result<(Store, Seq), Error> {
        let folder = self.folder(world)?;
        let mut store = Store::load(folder.join("base.dcmp")).map_err(|e| match e {
            datacomp::Error::Load(error) => {
                Error::Stored { world, what: "base.dcmp".to_string(), error }
            }
            other => to_io(other),
        })?;
        let mut seq = Seq(0);
        for (at, patch) in self.changes_since(world, Seq(0))? {
            patch.apply_to_equal(&mut store).map_err(|error| stored(world, at, error))?;
            seq = at;
        }
        self.cache = Some((world, seq, store.clone()));
        Ok((store, seq))
    }

    fn commit(
        &mut self,
        world: WorldId,
        base: Seq,
        patch: &StorePatch,
    ) -> Result<Seq, CommitError> {
        let (mut store, current) = self.current(world)?;
        if current != base {
            self.cache = Some((world, current, store));
            return Err(CommitError::Conflict { current });
        }
        // Checked before it is written: a patch that does not apply changes nothing.
        let before = store.clone();
        if let Err(e) = patch.apply_to_equal(&mut store) {
            self.cache = Some((world, current, before));
            return Err(Error::Patch(e).into());
        }
        let folder = self.folder(world)?;
        let next = base.0 + 1;
        let n = TEMPS.fetch_add(1, Ordering::Relaxed);
        let temp = folder.join(format!(".{next}.{}.{n}.tmp", std::process::id()));
        patch.save(&temp).map_err(to_io)?;
        let linked = fs::hard_link(&temp, Self::delta_path(&folder, next));
        fs::remove_file(&temp)?;
        match linked {
            Ok(()) => {
                self.cache = Some((world, Seq(next), store));
                Ok(Seq(next))
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                self.cache = Some((world, current, before));
                let current = Self::seqs(&folder)?.last().copied().unwrap_or(0);
                Err(CommitError::Conflict { current: Seq(current) })
            }
            Err(e) => Err(e.into()),
        }
    }

    fn changes_since(&mut self, world: WorldId, seq: Seq) -> Result<Vec<(Seq, StorePatch)>, Error> {
        let folder = self.folder(world)?;
        let mut changes = Vec::new();
        for (expected, at) in
            (seq.0 + 1..).zip(Self::seqs(&folder)?.into_iter().filter(|&s| s > seq.0))
        {
            if at != expected {
                let problem = format!("delta {expected} is missing: the chain jumps to {at}");
                return Err(Error::BadRow { world, problem });
            }
            let patch = StorePatch::load(Self::delta_path(&folder, at)).map_err(|e| match e {
                datacomp::Error::Load(error) => stored(world, Seq(at), error),
                other => to_io(other),
            })?;
            changes.push((Seq(at), patch));
        }
        Ok(changes)
    }

    fn conflict_policy(&self) -> ConflictPolicy {
        self.policy
    }
}

/// The crate's whole-file errors that are not a load's: I/O.
fn to_io(e: datacomp::Error) -> Error {
    match e {
        datacomp::Error::Io(e) => Error::Io(e),
        other => Error::Io(std::io::Error::other(other.to_string())),
    }
}
