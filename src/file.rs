//! Writing files that a crash, a second writer or a hostile directory cannot break:
//! [`write_atomically`], which every save uses, and [`SaveFile`], a save held under an
//! exclusive lock for a read-modify-write.
//!
//! # What a write does
//!
//! ```text
//!  world.dcmp ──symlinks followed──▶ saves/world.dcmp                 (the link is kept)
//!  saves/world.dcmp.tmp-<pid>-<n>    created exclusively (never through a symlink),
//!                                    locked, given the old file's permissions and owner,
//!                                    written, fsynced
//!  rename over saves/world.dcmp      atomic: readers see the old file or the new one
//!  fsync saves/                      the rename itself survives a power cut
//!  remove stale saves/world.dcmp.tmp-*   left by a killed writer (no process holds their lock)
//! ```
//!
//! Any error before the rename removes the temporary file and leaves the target as it was.
//!
//! # Concurrent writers
//!
//! Two [`write_atomically`] calls on one path never damage each other: each writes its own
//! temporary file, and the last rename wins. A read-modify-write (load, change, save) needs
//! more: a second writer that loads between the first's load and save loses the first's
//! change. [`SaveFile::lock`] takes an exclusive OS lock (`flock` on Unix, `LockFileEx` on
//! Windows) on a sidecar file, `<save>.lock`, which is held until the `SaveFile` is dropped.
//!
//! The lock is on a sidecar, not on the save, because a save replaces the save file by
//! renaming: a lock on the old file would be a lock on a file that no longer has the name,
//! and a writer waiting for it would then read a file nobody locks. The sidecar lives only as
//! long as the lock: the holder removes it before it lets go, so a finished command leaves
//! nothing beside the save. A writer that was waiting then holds the lock of a file that no
//! longer has the name, so every writer, once it holds a lock, checks that the name still
//! names its file, and starts over with a new one if not: the one lock that counts is the
//! lock of the file the name names, and only its holder removes it. (Where a file cannot be
//! removed while another process has it open, on Windows, the sidecar stays, harmlessly.)
//! Locks are advisory: they order writers that take them (every `datacomp` command that
//! writes, and code that uses [`SaveFile`]), not plain [`Store::save`] calls.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::Error;
use crate::store::Store;
use crate::text::shown::Shortened;

/// Symbolic links followed from a save path before giving up: Linux's own limit.
const MAX_LINKS: usize = 40;
/// Names tried for a temporary file before giving up.
const TEMP_TRIES: usize = 1000;
/// What a temporary file's name adds to its target's: `world.dcmp.tmp-<pid>-<n>`.
const TEMP_INFIX: &str = ".tmp-";
/// What a lock file's name adds to its save's: `world.dcmp.lock`.
const LOCK_SUFFIX: &str = ".lock";

/// Temporary files made by this process so far: with the pid, a name no other writer uses.
static NEXT_TEMP: AtomicU64 = AtomicU64::new(0);

/// Writes a file atomically: `write` fills a new temporary file beside `path`, which is
/// flushed to disk and renamed over `path`, then the directory is flushed. A crash at any
/// moment leaves either the old file or the new one, complete.
///
/// - A symbolic link at `path` is followed (to any depth): its final target is replaced and
///   the link kept.
/// - The temporary file is created exclusively, so a file or link planted at its name is
///   never written through; it takes the replaced file's permissions (and owner, where the
///   OS lets it).
/// - Temporary files of `path` left by a writer that was killed are removed.
/// - A `path` that names a device or a pipe (`/dev/stdout`) is written directly: there is no
///   file to replace.
///
/// # Errors
///
/// [`Error::Io`] if a step fails: the temporary file is removed and `path` is untouched. If
/// only the last step, flushing the directory, fails, the new file is in place but may not
/// survive a power cut; the error says so.
///
/// # Examples
///
/// ```
/// use std::io::Write;
///
/// let path = std::env::temp_dir().join(format!("doc-atomic-{}.json", std::process::id()));
/// datacomp::file::write_atomically(&path, |out| out.write_all(b"{}\n"))?;
/// assert_eq!(std::fs::read(&path)?, b"{}\n");
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_atomically(
    path: impl AsRef<Path>,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), Error> {
    write_file(path.as_ref(), write).map_err(Error::Io)
}

fn write_file(path: &Path, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    if is_special(path) {
        // A device or a pipe (`/dev/stdout` is a link to one): nothing to rename over.
        let mut out = io::BufWriter::new(OpenOptions::new().write(true).open(path)?);
        write(&mut out)?;
        return out.flush();
    }
    let target = follow_links(path)?;
    let existing = match std::fs::metadata(&target) {
        Ok(meta) => Some(meta),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let name = target.file_name().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "the path names no file to write")
    })?;
    let dir = parent_dir(&target);
    let mut temp = Temp::create(dir, name, existing.as_ref()).map_err(|e| {
        // The directory, not the file, must be writable: say so.
        let what = format!(
            "a temporary file cannot be created in {}, to replace {} with: {e}",
            Shortened(&dir.display().to_string()),
            Shortened(&name.to_string_lossy())
        );
        io::Error::new(e.kind(), what)
    })?;
    {
        let mut out = io::BufWriter::new(&mut temp.file);
        write(&mut out)?;
        out.flush()?;
    }
    if let Some(meta) = &existing {
        keep_metadata(&temp.file, meta)?;
    }
    temp.file.sync_all()?;
    std::fs::rename(&temp.path, &target)?;
    temp.remove_on_drop = false;
    drop(temp);
    sync_dir(dir).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!(
                "the file is replaced, but its directory {} could not be flushed to disk, so \
                 the change may not survive a power cut: {e}",
                Shortened(&dir.display().to_string())
            ),
        )
    })?;
    remove_stale_temps(dir, name);
    Ok(())
}

/// Whether `path` (links followed) is neither a regular file nor a directory: a device, a pipe
/// or a socket, which is written in place.
fn is_special(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|meta| !meta.is_file() && !meta.is_dir())
}

/// `path` with every symbolic link at its end followed: the file a write must replace. A
/// path that does not exist (yet) is its own target; so is a link whose target is missing.
fn follow_links(path: &Path) -> io::Result<PathBuf> {
    let mut path = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = std::fs::read_link(&path)?;
                // A relative link is relative to the link's directory; joining an absolute
                // one replaces the directory.
                path = parent_dir(&path).join(link);
            }
            _ => return Ok(path),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// The directory holding `path`: `.` for a bare file name.
fn parent_dir(path: &Path) -> &Path {
    path.parent().filter(|dir| !dir.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// A temporary file being written, removed when dropped unless it was renamed into place.
struct Temp {
    path: PathBuf,
    file: File,
    remove_on_drop: bool,
}

impl Temp {
    /// Creates `<dir>/<name>.tmp-<pid>-<n>` exclusively (an existing file or link at that name
    /// is never opened), with the permissions of `like` if given, and locks it so that
    /// [`remove_stale_temps`] leaves it alone.
    fn create(
        dir: &Path,
        name: &std::ffi::OsStr,
        like: Option<&std::fs::Metadata>,
    ) -> io::Result<Temp> {
        let pid = std::process::id();
        for _ in 0..TEMP_TRIES {
            let n = NEXT_TEMP.fetch_add(1, Ordering::Relaxed);
            let mut temp_name = name.to_os_string();
            temp_name.push(format!("{TEMP_INFIX}{pid}-{n}"));
            let path = dir.join(temp_name);
            let mut options = OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            if let Some(like) = like {
                // Never wider than the old file while the data goes in (the umask may narrow
                // it further; `keep_metadata` sets it exactly).
                use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
                options.mode(like.permissions().mode() & 0o777);
            }
            #[cfg(not(unix))]
            let _ = like;
            let file = match options.open(&path) {
                Ok(file) => file,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            };
            let mut temp = Temp { path, file, remove_on_drop: true };
            // Where the file system has no locks, stale temporary files are left alone.
            if temp.file.lock().is_err() || names_file(&temp.path, &temp.file) {
                return Ok(temp);
            }
            // Another writer took it for stale and removed it before the lock: the name is
            // no longer ours to remove. Start over.
            temp.remove_on_drop = false;
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("no free name for a temporary file among {TEMP_TRIES} tried"),
        ))
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if self.remove_on_drop {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Gives the new file the old one's permissions, and on Unix its owner when the OS lets this
/// process (root may; others keep their own).
fn keep_metadata(file: &File, old: &std::fs::Metadata) -> io::Result<()> {
    file.set_permissions(old.permissions())?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let new = file.metadata()?;
        if (new.uid(), new.gid()) != (old.uid(), old.gid()) {
            // Best effort: an unprivileged process may not give files away.
            let _ = std::os::unix::fs::fchown(file, Some(old.uid()), Some(old.gid()));
        }
    }
    Ok(())
}

/// Flushes a directory's entries (a rename in it) to disk. Windows cannot open directories as
/// files and orders renames itself.
fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    File::open(dir)?.sync_all()?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Whether `path` still names the open `file` (and not a file put there since).
fn names_file(path: &Path, file: &File) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::symlink_metadata(path), file.metadata()) {
            (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        path.is_file()
    }
}

/// Whether `file_name` is one of [`Temp::create`]'s names for `name`: `<name>.tmp-<pid>-<n>`.
fn is_temp_of(file_name: &std::ffi::OsStr, name: &std::ffi::OsStr) -> bool {
    let rest = file_name.as_encoded_bytes().strip_prefix(name.as_encoded_bytes());
    let Some(rest) = rest.and_then(|r| r.strip_prefix(TEMP_INFIX.as_bytes())) else {
        return false;
    };
    let mut parts = rest.split(|&b| b == b'-');
    let number = |part: Option<&[u8]>| {
        part.is_some_and(|p| !p.is_empty() && p.iter().all(u8::is_ascii_digit))
    };
    number(parts.next()) && number(parts.next()) && parts.next().is_none()
}

/// Calls `each` with every temporary file of `name` in `dir` that no writer holds (left by a
/// writer that was killed: a lock dies with its process), while holding its lock, so that a
/// writer that has just created it and not yet locked it finds it gone and starts over.
/// Only regular files, opened read-only: a link planted at such a name is neither followed
/// nor touched. A file that cannot be checked is skipped.
fn for_each_stale(
    dir: &Path,
    name: &std::ffi::OsStr,
    mut each: impl FnMut(PathBuf),
) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if !is_temp_of(&entry.file_name(), name) {
            continue;
        }
        let path = entry.path();
        if !std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
            continue;
        }
        let Ok(file) = File::open(&path) else {
            continue;
        };
        if names_file(&path, &file) && file.try_lock().is_ok() {
            each(path);
        }
    }
    Ok(())
}

/// Removes the temporary files of `name` in `dir` left by killed writers. Best effort: this
/// save has succeeded whatever happens here.
fn remove_stale_temps(dir: &Path, name: &std::ffi::OsStr) {
    let _ = for_each_stale(dir, name, |path| {
        let _ = std::fs::remove_file(path);
    });
}

/// The temporary files of the save at `path` that a killed writer left, and that the next
/// save there removes: what `datacomp verify` reports.
///
/// # Errors
///
/// [`Error::Io`] if the directory cannot be read.
///
/// # Examples
///
/// ```
/// let dir = std::env::temp_dir().join(format!("doc-stale-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// std::fs::write(dir.join("world.dcmp.tmp-4242-0"), b"half a save")?;
/// let stale = datacomp::file::stale_temps(dir.join("world.dcmp"))?;
/// assert_eq!(stale, [dir.join("world.dcmp.tmp-4242-0")]);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn stale_temps(path: impl AsRef<Path>) -> Result<Vec<PathBuf>, Error> {
    let target = follow_links(path.as_ref())?;
    let mut stale = Vec::new();
    if let Some(name) = target.file_name() {
        for_each_stale(parent_dir(&target), name, |path| stale.push(path))?;
    }
    stale.sort();
    Ok(stale)
}

/// A save file held under an exclusive lock, for a read-modify-write that no other writer
/// can interleave with: [`lock`](SaveFile::lock), [`load`](SaveFile::load), change the store,
/// [`save`](SaveFile::save), drop.
///
/// The lock is an OS advisory lock on `<save>.lock` beside the save (after symbolic links are
/// followed, so every link to one save shares one lock); see the [module docs](self) for why
/// it is not the save itself. It is released when the `SaveFile` is dropped, which removes
/// the lock file, or when its process dies (which leaves the lock file, unlocked, for the next
/// writer to take and remove). Taking it twice in one process waits forever, as in two
/// processes.
///
/// # Examples
///
/// ```
/// use datacomp::{Blob, SaveFile, Store};
///
/// let path = std::env::temp_dir().join(format!("doc-savefile-{}.dcmp", std::process::id()));
/// Store::new().save(&path)?;
///
/// let file = SaveFile::lock(&path)?; // waits while another writer holds it
/// let mut store = file.load()?;
/// store.insert(&[("name", "Bob")].into_iter().collect::<Blob>());
/// file.save(&store)?;
/// drop(file); // the next writer may go
///
/// assert_eq!(Store::load(&path)?.len(), 1);
/// assert!(!path.with_extension("dcmp.lock").exists()); // the lock file went with the lock
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), datacomp::Error>(())
/// ```
#[derive(Debug)]
pub struct SaveFile {
    /// The save, symbolic links followed.
    path: PathBuf,
    /// The lock file, open and locked for as long as `self` lives, and its path; `None` for a
    /// device or a pipe, which is written in place and has no save to guard.
    // INVARIANT: while `self` lives, the path names the locked file (checked after locking).
    lock: Option<(File, PathBuf)>,
}

impl SaveFile {
    /// Takes the exclusive lock of the save at `path` (which need not exist yet), waiting
    /// while another writer holds it.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] if `path` names a directory (one that exists, or any path ending in a
    /// separator, `saves/`), or the lock file cannot be created or opened (a read-only
    /// directory), is a symbolic link, or cannot be locked.
    pub fn lock(path: impl AsRef<Path>) -> Result<SaveFile, Error> {
        let given = path.as_ref();
        if is_special(given) {
            return Ok(SaveFile { path: given.to_path_buf(), lock: None });
        }
        let path = follow_links(given)?;
        // Checked before the lock file is made: a command that then fails to write a
        // directory left `saves.lock` beside it.
        let ends_in_separator = given
            .as_os_str()
            .as_encoded_bytes()
            .last()
            .is_some_and(|&b| std::path::is_separator(b.into()));
        if ends_in_separator || std::fs::metadata(&path).is_ok_and(|meta| meta.is_dir()) {
            return Err(Error::Io(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the path names a directory, not a file",
            )));
        }
        let lock_path = lock_path(&path)?;
        if std::fs::symlink_metadata(&lock_path).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(Error::Io(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "the lock file {} is a symbolic link; refusing to lock through it",
                    Shortened(&lock_path.display().to_string())
                ),
            )));
        }
        let shown = || Shortened(&lock_path.display().to_string()).to_string();
        loop {
            let lock = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&lock_path)
                .map_err(|e| {
                    // A save the user may write, in a directory they may not: say which file.
                    let what =
                        format!("the lock file {} cannot be created or opened: {e}", shown());
                    io::Error::new(e.kind(), what)
                })?;
            lock.lock().map_err(|e| {
                io::Error::new(e.kind(), format!("the lock file {} cannot be locked: {e}", shown()))
            })?;
            // The writer before this one removed the file while this one waited for it: its
            // lock guards nothing now. Each turn follows another writer's whole hold, so this
            // ends once the writers ahead are done.
            if names_file(&lock_path, &lock) {
                return Ok(SaveFile { path, lock: Some((lock, lock_path)) });
            }
        }
    }

    /// The save's path, symbolic links followed.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Loads the store, as [`Store::load`] does.
    ///
    /// # Errors
    ///
    /// As [`Store::load`].
    pub fn load(&self) -> Result<Store, Error> {
        Store::load(&self.path)
    }

    /// Saves `store` atomically, as [`Store::save`] does, still holding the lock.
    ///
    /// # Errors
    ///
    /// As [`Store::save`].
    pub fn save(&self, store: &Store) -> Result<(), Error> {
        store.save(&self.path)
    }
}

impl Drop for SaveFile {
    /// Removes the lock file, then lets go of its lock (closing it): a waiting writer then
    /// finds the name gone and makes a new one (see [`SaveFile::lock`]).
    fn drop(&mut self) {
        if let Some((file, lock_path)) = self.lock.take() {
            // Best effort: a lock file left behind is only untidy, never unsafe.
            let _ = std::fs::remove_file(&lock_path);
            drop(file);
        }
    }
}

/// `<path>.lock`.
fn lock_path(path: &Path) -> io::Result<PathBuf> {
    let mut name: OsString = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"))?
        .to_os_string();
    name.push(LOCK_SUFFIX);
    Ok(path.with_file_name(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_file_name_lives_in_the_current_directory() {
        assert_eq!(parent_dir(Path::new("world.dcmp")), Path::new("."));
        assert_eq!(parent_dir(Path::new("saves/world.dcmp")), Path::new("saves"));
        assert_eq!(parent_dir(Path::new("/world.dcmp")), Path::new("/"));
    }

    #[test]
    fn temp_names_are_recognised_exactly() {
        let name = std::ffi::OsStr::new("world.dcmp");
        let is = |s: &str| is_temp_of(std::ffi::OsStr::new(s), name);
        assert!(is("world.dcmp.tmp-12-0"));
        assert!(is("world.dcmp.tmp-4294967295-18446744073709551615"));
        for not in [
            "world.dcmp",
            "world.dcmp.tmp-12",
            "world.dcmp.tmp-12-",
            "world.dcmp.tmp--3",
            "world.dcmp.tmp-12-3-4",
            "world.dcmp.tmp-1a-3",
            "other.dcmp.tmp-12-0",
            "xworld.dcmp.tmp-12-0",
            "world.dcmp.lock",
        ] {
            assert!(!is(not), "{not}");
        }
    }
}
