//! Saves, loads and autosaves, off the main thread: [`SaveGame`], [`LoadGame`], [`Autosave`],
//! [`Migrations`], and what they report ([`Saved`], [`Loaded`]).
//!
//! # What a frame pays
//!
//! A [`SaveGame`] costs its frame no copy: at its very end the frame lends the store to a
//! thread of the plugin's (`datacomp copies`), which copies the store's buffers (a
//! [`Snapshot`], memcpy speed, no allocation per sheet; after the first save, into the buffers
//! of the last save's copy, which the plugin keeps) while the game waits for its next frame;
//! that frame takes the store back at its start (`First`), and a write between frames takes
//! it back at once (waiting for the copy, or making it if it has not begun). The save itself
//! (its crcs, the atomic write, the fsyncs) runs on the plugin's save thread (`datacomp
//! saves`), and keeps out of the frames' way three ways: its jobs start at a frame's very end
//! (a schedule of the plugin's after `Last`), its file writes wait while a frame runs (a gate
//! closed from `First` to that end, a 256 KB piece at a time), and on Linux it runs under the
//! `SCHED_IDLE` policy (else at nice 19), so that waking it never takes the core the frame
//! runs on and a frame's thread takes its core back at once. On a machine of two cores, with
//! nice 19 alone and jobs started in the frame, a frame now and then lost its core to the save
//! thread for 2-6 ms (a scheduler trace of `frame_times`: the kernel let the woken save thread
//! run its slice). It still runs at full speed on a core the game leaves idle, and while a
//! game waits for it ([`flush`], [`AppExit`]: the gate is then open). The price: on a machine
//! whose every core other processes keep busy, it waits for them, and so does a game waiting
//! for it (two nice-0 busy loops beside `frame_times autosave`, which flushes after each of
//! its ~100 building frames: 71 s, alone 1.9 s).
//!
//! An [`Autosave`] never copies the store in a frame. The pool keeps a mirror of it (a
//! [`Mark`]: the state the last autosave left); the sheets changed since are copied between
//! frames: the frame an autosave is due in lends the store, at its very end, to a thread of
//! the plugin's (`datacomp copies`), which copies them ([`Since::add`]: O(changed), into
//! reused buffers) while the game waits for its next frame; the next frame takes the store
//! back at its start (`First`), and a write before it (between frames) takes it back at once,
//! waiting for the copy or making it if it has not begun. The frames between copy nothing:
//! their changes wait in the store's change log, each sheet once however often it changed.
//! A game whose frames follow each other with no time between (less than [`PACED`]) has its
//! frames lend the store every frame instead, each copying its own changes (added to the
//! autosave's, which compacts itself: [`Since::add`]), so that no frame waits for more than
//! one frame's copy.
//! The copying thread runs under Linux's `SCHED_BATCH` policy: a fair share of the CPU, and
//! waking it does not take the waking frame's core (under the normal policy the frame that
//! lent the store waited ~30 µs for the copy it had just asked for).
//!
//! Measured (`frame_times`, 100,000 sheets, 1,000 changed a frame, an autosave every 10
//! frames at 60 frames a second): the frames' median 0.99-1.03x the same run's without
//! autosave (with the copy in the frame it was 1.11-1.19x: each frame copied its changes and
//! handed them to the pool). The link's delta ([`Mark::take_delta_from`]: the comparison, the
//! crc32 of its base, the mirror's patching), every full save and every compaction are made
//! from the mirror, on the pool. The mirror is built without a full copy: it starts empty
//! ([`Mark::blank`]) and takes [`MIRROR_SLOTS_PER_FRAME`] of the store's slots a frame (the
//! changes made meanwhile laid over them; each slice copied between frames as above), so the
//! chain's first full save waits until it is whole (on [`AppExit`] the rest is copied at
//! once, in the frame). A [`LoadGame`] builds it from the loaded store on the pool, at no
//! frame cost. A [`LoadGame`] reads, checks, salvages, applies the autosave chain
//! ([`StorePatch::apply_chain`]: two crc32s, not one a link) and migrates on the pool; its
//! frame swaps the store in and re-links the entities.
//!
//! When the save thread falls far behind (no idle core for it, or a write that does not
//! return), an autosave due keeps its changes for the next one rather than queue a job (the
//! next copies added to them between frames; a [`flush`] or [`AppExit`] queues them): a
//! stalled save thread holds O(the store) of autosaves; a [`SaveGame`] asked then is refused
//! ([`Error::Behind`]: each waiting save holds a copy of the store). Limit: the save thread is
//! one for the process (a write that never returns delays every app's saves, and [`AppExit`]
//! waits for it).
//!
//! # One writer
//!
//! Saves, autosave links and loads run one at a time, in the order they were asked for: a
//! load after a save in the same frame reads that save, and an autosave link is never written
//! before the full save it follows. On [`AppExit`] the plugin waits for every write.
//!
//! # Autosave files
//!
//! An autosave at `path` is a full save at `path` and a chain of deltas beside it,
//! `path.1.delta`, `path.2.delta`, ..., each made from the state the one before leaves
//! ([`Mark::take_delta`]). A full save (every `compact_every` links, and the first) replaces
//! `path` atomically and then removes the old chain; it is the mirror's state, written on the
//! pool. A [`LoadGame`] of `path` loads the save and
//! applies the links in order while they apply: a link that does not load or does not fit
//! (one of an older chain, left by a crash between the full save and the removal) ends the
//! chain there, and [`LoadReport::chain_end`] says why.

use std::collections::VecDeque;
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use bevy_app::AppExit;
use bevy_ecs::message::{Message, MessageReader, MessageWriter};
use bevy_ecs::resource::Resource;
use bevy_ecs::system::{Res, ResMut};
use bevy_ecs::world::{Mut, World};
use bevy_tasks::futures::check_ready;
use bevy_tasks::{Task, TaskPool, TaskPoolBuilder, block_on};
use datacomp::file::write_atomically;
use datacomp::history::{Excerpt, Since};
use datacomp::{LoadError, Mark, Snapshot, Store, StorePatch};

use crate::error::Error;
use crate::lend::{Loan, copy_into};
use crate::store::{DataStore, relink};

/// Asks the plugin to save the [`DataStore`] to `path`: after the frame it is copied (memcpy
/// speed, between frames: see the module's docs), then written atomically on the plugin's
/// save thread. [`Saved`] reports the outcome. A save
/// removes the autosave links beside `path` (`path.1.delta`, ...), which no longer follow it.
#[derive(Message, Clone, Debug, PartialEq, Eq)]
pub struct SaveGame {
    /// Where to save.
    pub path: PathBuf,
}

/// Asks the plugin to load the save at `path` (and the autosave links beside it) in place of
/// the [`DataStore`]'s store, and re-link the entities: each entity whose [`Sheet`](crate::Sheet)
/// the save holds is kept, the others despawned, and an entity spawned for each other sheet.
/// [`Loaded`] reports the outcome; a load that fails changes nothing.
#[derive(Message, Clone, Debug, PartialEq, Eq)]
pub struct LoadGame {
    /// The save.
    pub path: PathBuf,
}

/// A save finished (or failed): the answer to a [`SaveGame`] or an autosave.
#[derive(Message, Debug)]
pub struct Saved {
    /// The file written.
    pub path: PathBuf,
    /// What was written.
    pub kind: SaveKind,
    /// Its size in bytes, or why it failed (the file is then as it was).
    pub result: Result<u64, Error>,
}

/// What a [`Saved`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SaveKind {
    /// A [`SaveGame`].
    Save,
    /// An autosave's first full save (and the first after a load, a new path or a failed
    /// autosave), written from the pool's mirror of the store.
    AutosaveFull,
    /// An autosave's link: its number in the chain, from 1.
    AutosaveLink(u32),
    /// An autosave's chain of this many links folded into its full save, on the pool: the
    /// mirror's state (where the last link left it) written and the links removed.
    AutosaveCompacted(u32),
}

/// A load finished (or failed): the answer to a [`LoadGame`].
#[derive(Message, Debug)]
pub struct Loaded {
    /// The save.
    pub path: PathBuf,
    /// What was loaded, or why nothing was.
    pub result: Result<LoadReport, Error>,
}

/// What a [`LoadGame`] loaded.
#[derive(Debug)]
#[non_exhaustive]
pub struct LoadReport {
    /// Sheets in the loaded store.
    pub sheets: usize,
    /// Sheets a damaged save lost ([`Damaged::Salvage`]): 0 for a whole one.
    pub lost: usize,
    /// Why the save did not load whole, when it was salvaged.
    pub damage: Option<LoadError>,
    /// Autosave links applied.
    pub links: u32,
    /// Why the chain of links ended before its last file, if it did: the link's number and
    /// the error.
    pub chain_end: Option<(u32, datacomp::Error)>,
    /// The save's data version, when [`Migrations`] moved it to theirs.
    pub migrated_from: Option<u32>,
    /// Entities kept (their `Sheet` is in the save).
    pub kept: usize,
    /// Entities spawned for sheets no entity held.
    pub spawned: usize,
    /// Entities despawned (their `Sheet` is not in the save).
    pub despawned: usize,
}

/// What to do with a save that does not load whole (a damaged chunk, a truncated file).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Damaged {
    /// Load what [`Store::salvage`] keeps: every sheet whose bytes check out
    /// ([`LoadReport::lost`] counts the others).
    #[default]
    Salvage,
    /// Refuse it: [`Error::Damaged`], and nothing changes.
    Refuse,
}

/// The game's data migrations, as a resource: a save whose data version is older is migrated
/// on load (all or nothing: a migration that fails loads nothing), and a new store takes
/// their version. A save from a newer data version than theirs is refused.
#[derive(Resource, Clone, Debug, PartialEq)]
pub struct Migrations(pub datacomp::Migrations);

/// Autosaves: every `every`, and on `AppExit`, a link of the delta chain beside `path` (the
/// changes since the last autosave), after a first full save at `path`; every `compact_every`
/// links the chain is folded into the full save on the I/O pool. As a resource, the game can change it (or remove it) while it runs.
///
/// ```
/// use std::time::Duration;
/// use datacomp_bevy::{Autosave, DatacompPlugin, Every};
///
/// let plugin = DatacompPlugin::default().autosave(Autosave {
///     every: Every::Time(Duration::from_secs(30)),
///     path: "saves/autosave.dcmp".into(),
///     ..Autosave::default()
/// });
/// ```
#[derive(Resource, Clone, Debug, PartialEq)]
pub struct Autosave {
    /// How often.
    pub every: Every,
    /// The full save's path; links are `path.1.delta`, `path.2.delta`, ...
    pub path: PathBuf,
    /// Links folded into the full save at a time (1 to [`MAX_LINKS`]).
    pub compact_every: u32,
}

impl Default for Autosave {
    /// Every 600 frames to `autosave.dcmp`, a full save every 10 links.
    fn default() -> Autosave {
        Autosave { every: Every::Frames(600), path: "autosave.dcmp".into(), compact_every: 10 }
    }
}

/// How often an [`Autosave`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Every {
    /// Every this many frames (0 and 1: every frame).
    Frames(u32),
    /// When at least this long has passed since the last (checked once a frame).
    Time(Duration),
}

/// The path of link `n` of the autosave chain of `path`: `path.n.delta`.
#[must_use]
pub fn link_path(path: &Path, n: u32) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{n}.delta"));
    PathBuf::from(name)
}

/// Slots of the store copied into the autosave's mirror a frame while it is built (see the
/// module's docs): at 1,024 a store of 100,000 sheets is mirrored in 98 frames, each followed
/// by a copy of about 1,024 sheets (between frames).
pub const MIRROR_SLOTS_PER_FRAME: u32 = 1024;

/// Where an autosave stands.
#[derive(Resource)]
pub(crate) struct AutosaveState {
    /// Where the mirror (the [`Mark`] the jobs hold) stands in the store's change tracking:
    /// `excerpt` holds what changed since. `None` until the first autosave frame, and after
    /// the mirror was lost.
    since: Option<Since>,
    /// What changed since the mirror's position, copied for the next autosave.
    excerpt: Excerpt,
    /// The mirror's number: a job of an older one does not touch a newer one.
    mirror: u64,
    /// The next slot to copy while the mirror is built.
    building: Option<u32>,
    /// Whether the chain at `path` has its full save (asked for): links follow it.
    based: bool,
    /// Links written since the full save.
    links: u32,
    /// The path the chain is at.
    path: Option<PathBuf>,
    /// Links folded into the full save at a time (the [`Autosave`]'s).
    compact_every: u32,
    frames: u32,
    at: Instant,
    /// This frame's copy, asked for (see [`autosave`]).
    asked: Option<Asked>,
    /// The copy being made between frames (`Jobs::loan`): `since` and `excerpt` are the
    /// loan's until [`collect`] takes them back.
    lent: Option<Asked>,
    /// When the last frame ended: the next frame's start tells whether the game leaves time
    /// between its frames.
    ended: Option<Instant>,
    /// The frames follow each other with no time between ([`PACED`]): each frame's changes
    /// are copied (between it and the next), not only the autosave's.
    eager: bool,
    /// An autosave due was kept (the save thread far behind): `excerpt` holds its changes,
    /// queued with the next autosave, or at a [`flush`].
    kept: bool,
}

impl Default for AutosaveState {
    fn default() -> AutosaveState {
        AutosaveState {
            since: None,
            excerpt: Excerpt::default(),
            mirror: 0,
            building: None,
            based: false,
            links: 0,
            path: None,
            compact_every: 1,
            frames: 0,
            at: Instant::now(),
            asked: None,
            lent: None,
            ended: None,
            eager: false,
            kept: false,
        }
    }
}

/// How loads read saves, from the plugin's options.
#[derive(Resource, Clone, Copy, Debug, Default)]
pub(crate) struct LoadPolicy {
    pub damaged: Damaged,
}

/// A file job, run on the I/O pool.
enum Job {
    /// A [`SaveGame`]: its copy of the store (made between frames: `None` until then, and
    /// the job starts only once it is made).
    Save { path: PathBuf, copy: Option<Box<Snapshot>>, kind: SaveKind },
    /// A new mirror (`Mark::blank`), number `.0`: the chain's mark from now on.
    Seed(u64, Box<Mark>),
    /// A part of mirror `mirror`'s building (a frame's slice of slots and changes): the
    /// excerpt absorbed into it.
    Absorb { mirror: u64, excerpt: Excerpt, mark: Option<Box<Mirror>> },
    /// An autosave's full save: the excerpt (if any) absorbed into the mirror, then its state
    /// written.
    Full {
        path: PathBuf,
        mirror: u64,
        excerpt: Option<Excerpt>,
        kind: SaveKind,
        mark: Option<Box<Mirror>>,
    },
    /// An autosave link: the delta from the mirror (given when the job starts, once the
    /// jobs before it gave it back) to the state the excerpt was taken at. `broken`: an
    /// autosave before it failed, so the link is not written (the mirror still moves on).
    Link {
        path: PathBuf,
        mirror: u64,
        excerpt: Excerpt,
        n: u32,
        mark: Option<Box<Mirror>>,
        broken: bool,
    },
    Load {
        path: PathBuf,
        damaged: Damaged,
        migrations: Option<datacomp::Migrations>,
        /// Whether to build the autosave's mirror of the loaded store.
        mirror: bool,
    },
}

/// The autosave's mirror, on the pool between its jobs: the state the last autosave left,
/// and what changed since, gathered from the frames' excerpts.
struct Mirror {
    mark: Mark,
    gathered: Excerpt,
    /// Whether anything was gathered since the mark last moved.
    any: bool,
}

impl Mirror {
    fn new(mark: Mark) -> Mirror {
        Mirror { mark, gathered: Excerpt::default(), any: false }
    }

    /// `excerpt` gathered (and left empty, for reuse): `false` when it does not follow what
    /// was gathered.
    fn gather(&mut self, excerpt: &mut Excerpt) -> bool {
        self.any = true;
        self.gathered.append(excerpt)
    }

    /// The mark moved by what was gathered: `false` when it does not follow the mark.
    fn absorb(&mut self) -> bool {
        self.gathered.settle();
        let fits = !self.any || self.mark.absorb(&self.gathered);
        self.gathered.clear();
        self.any = false;
        fits
    }

    /// The delta from the mark to what was gathered, the mark moved there: `None` when it
    /// does not follow the mark.
    fn link(&mut self) -> Option<StorePatch> {
        self.gathered.settle();
        let patch = self.mark.take_delta_from(&self.gathered);
        self.gathered.clear();
        self.any = false;
        patch
    }
}

/// What a job gives back for later ones.
#[derive(Default)]
struct Kept {
    /// A save's copy: its buffers serve the next save's copy.
    copy: Option<Box<Snapshot>>,
    /// The mirror (and its number), at the state the job left it.
    mark: Option<(u64, Box<Mirror>)>,
    /// An excerpt's buffers, for a later frame's.
    excerpt: Option<Excerpt>,
}

/// A loaded store, its report, and the mirror's mark made from it.
type LoadedStore = (Store, LoadReport, Option<Mark>);

/// A job's outcome, handled on the main thread.
enum Done {
    /// A save (or a part of a mirror, which answers nothing), and what it keeps.
    Saved(Option<Saved>, Kept),
    Loaded {
        path: PathBuf,
        result: Result<Box<LoadedStore>, Error>,
    },
}

/// The file jobs: one running, the rest waiting in order.
#[derive(Resource, Default)]
pub(crate) struct Jobs {
    waiting: VecDeque<Job>,
    running: Option<Task<Done>>,
    /// A written save's copy, kept so that the next save copies into buffers that exist (no
    /// allocation, no page faults): the frame then pays a warm memcpy.
    spare: Option<Snapshot>,
    /// The autosave's mirror and its number, between the jobs that use it.
    chain: Option<(u64, Box<Mirror>)>,
    /// Excerpts whose jobs are done, for later frames: their buffers stay warm.
    excerpts: Vec<Excerpt>,
    /// An autosave failed: links are not written until the next full save.
    broken: bool,
    /// Closed while a frame runs: the jobs' writes wait at it.
    gate: Arc<Gate>,
    /// The mirrors before this one were of a store a load replaced: their jobs answer
    /// [`Error::Replaced`] (a load without a mirror of its own leaves no `chain` to tell).
    replaced: u64,
    /// The store's loan for the copies the frame asked for (see [`lend`]).
    loan: Option<Arc<Loan>>,
}

/// Closed from a frame's start (`First`) to its very end (the plugin's schedule after
/// `Last`): the pool's file writes wait at it, a piece at a time ([`Paced`]), so that a save's
/// stream of bytes goes to the file between frames and not beside a frame's systems, whose
/// memory it would share. A blocking [`pump`] (the game waits for the jobs) opens it. A write
/// waiting when a frame ends goes, even if the next frame has started already (a game whose
/// frames follow each other with no time between still writes a piece a frame).
struct Gate {
    /// Whether a frame runs, and how many have ended.
    state: Mutex<(bool, u64)>,
    ended: Condvar,
    /// The longest a write waits: a frame that long (or one that never ended: a panic
    /// between its start and its end) is not one to keep a save from.
    wait: Duration,
}

impl Default for Gate {
    fn default() -> Gate {
        Gate { state: Mutex::new((false, 0)), ended: Condvar::new(), wait: GATE_WAIT }
    }
}

/// A [`Gate`]'s longest wait.
const GATE_WAIT: Duration = Duration::from_millis(100);

impl Gate {
    fn set(&self, in_frame: bool) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.0 && !in_frame {
            state.1 = state.1.wrapping_add(1);
        }
        state.0 = in_frame;
        drop(state);
        if !in_frame {
            self.ended.notify_all();
        }
    }

    /// Returns when no frame runs, or a frame ended since the call (or after the gate's
    /// longest wait).
    fn pass(&self) {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let ends = state.1;
        let wait = |state: &mut (bool, u64)| state.0 && state.1 == ends;
        let waited = self.ended.wait_timeout_while(state, self.wait, wait);
        drop(waited.unwrap_or_else(PoisonError::into_inner));
    }
}

/// The most bytes a write passes at a time: a frame that starts during one shares the memory
/// with at most this much copying (~0.1 ms).
const PIECE: usize = 256 << 10;

/// A file's writer whose writes wait at the [`Gate`], [`PIECE`] bytes at a time: the gate
/// is passed once a piece, not once a write (a save of a store whose blobs moved writes a run
/// of the arena per entity).
struct Paced<'a, W> {
    out: W,
    gate: &'a Gate,
    /// The bytes that may go before the gate is passed again.
    left: usize,
}

impl<'a, W> Paced<'a, W> {
    fn new(out: W, gate: &'a Gate) -> Paced<'a, W> {
        Paced { out, gate, left: 0 }
    }
}

impl<W: Write> Write for Paced<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            self.gate.pass();
            self.left = PIECE;
        }
        let written = self.out.write(&buf[..buf.len().min(self.left)])?;
        self.left -= written;
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

impl Jobs {
    fn push(&mut self, job: Job) {
        self.waiting.push_back(job);
    }

    /// The saves waiting for their copy (asked in the frame not yet lent, or lent).
    fn uncopied(&self) -> usize {
        self.waiting.iter().filter(|job| matches!(job, Job::Save { copy: None, .. })).count()
    }

    /// `excerpt`, to send to a job, and in its place a spare one whose job is done (its
    /// buffers warm), or a new one.
    fn swap_excerpt(&mut self, excerpt: &mut Excerpt) -> Excerpt {
        std::mem::replace(excerpt, self.excerpts.pop().unwrap_or_default())
    }

    /// The mirror, for a job of mirror `mirror` (none for an older one's).
    fn mark_for(&mut self, mirror: u64) -> Option<Box<Mirror>> {
        match &self.chain {
            Some((number, _)) if *number == mirror => self.chain.take().map(|(_, mark)| mark),
            _ => None,
        }
    }

    /// Takes back mirror `mirror`, unless a newer one came meanwhile.
    fn keep_mark(&mut self, mirror: u64, mark: Box<Mirror>) {
        if self.chain.as_ref().is_none_or(|(number, _)| *number <= mirror) {
            self.chain = Some((mirror, mark));
        }
    }
}

/// Queues a write for each [`SaveGame`] of this frame (its copy of the store made between
/// frames, [`lend`]; refused while the save thread is far behind), then each [`LoadGame`].
pub(crate) fn request(
    mut saves: MessageReader<SaveGame>,
    mut loads: MessageReader<LoadGame>,
    mut refused: MessageWriter<Saved>,
    (policy, migrations, autosave): (
        Res<LoadPolicy>,
        Option<Res<Migrations>>,
        Option<Res<Autosave>>,
    ),
    mut jobs: ResMut<Jobs>,
    mut state: ResMut<AutosaveState>,
) {
    for save in saves.read() {
        let waiting = jobs.waiting.len();
        if waiting >= BEHIND {
            // Each save waiting holds a copy of the store: behind a write that does not
            // return, they would grow without end.
            let result = Err(Error::Behind { path: save.path.clone(), waiting });
            refused.write(Saved { path: save.path.clone(), kind: SaveKind::Save, result });
            continue;
        }
        // Its copy is made between frames ([`lend`]), and given to it at the next frame's
        // start ([`collect`]).
        jobs.push(Job::Save { path: save.path.clone(), copy: None, kind: SaveKind::Save });
        if state.path.as_deref() == Some(save.path.as_path()) {
            // A save over the autosave's full save (it removes the links beside it): the
            // chain starts again from a full save.
            (state.based, state.links) = (false, 0);
        }
    }
    for load in loads.read() {
        jobs.push(Job::Load {
            path: load.path.clone(),
            damaged: policy.damaged,
            migrations: migrations.as_ref().map(|m| m.0.clone()),
            mirror: autosave.is_some(),
        });
    }
}

/// Each frame with an [`Autosave`]: asks for the copy of the sheets changed this frame (and,
/// while the mirror is built, its next slice of slots) for the autosave's excerpt, made
/// between frames ([`lend`]); and counts the frame towards the next autosave, which
/// [`collect`] queues with the copy. On `AppExit` the copy is made here, and the last
/// autosave queued at once.
pub(crate) fn autosave(
    settings: Option<Res<Autosave>>,
    mut state: ResMut<AutosaveState>,
    data: Res<DataStore>,
    mut jobs: ResMut<Jobs>,
    mut exits: MessageReader<AppExit>,
) {
    let Some(settings) = settings else { return };
    let quitting = exits.read().count() > 0;
    let state = &mut *state;
    let store = data.store();
    if state.path.as_deref() != Some(settings.path.as_path()) {
        // A new path (or the first autosave): its chain starts from a full save.
        state.based = false;
        state.links = 0;
        state.path = Some(settings.path.clone());
    }
    state.compact_every = settings.compact_every;
    if state.since.is_none() {
        // A new mirror, empty: filled a slice of slots a frame from now.
        let mark = Mark::blank(store);
        state.since = Some(mark.since());
        state.mirror += 1;
        state.building = Some(0);
        (state.based, state.links) = (false, 0);
        state.excerpt.clear();
        jobs.push(Job::Seed(state.mirror, Box::new(mark)));
    }
    let copy = match state.building {
        Some(from) if quitting => from..u32::MAX,
        Some(from) => from..from.saturating_add(MIRROR_SLOTS_PER_FRAME),
        None => 0..0,
    };
    let due = quitting
        || match settings.every {
            Every::Frames(n) => {
                state.frames = state.frames.saturating_add(1);
                state.frames >= n
            }
            Every::Time(every) => state.at.elapsed() >= every,
        };
    if !due && state.building.is_none() && !state.eager {
        // Nothing to copy this frame: the changes wait in the store's change log (each sheet
        // once however often it changed) for the autosave's copy.
        return;
    }
    let asked = Asked { mirror: state.mirror, copy, due, now: quitting };
    if quitting {
        let Some(since) = &mut state.since else { return };
        let filled = since.add(store, &mut state.excerpt, asked.copy.clone());
        queue(state, &mut jobs, &asked, filled);
    } else {
        state.asked = Some(asked);
    }
}

/// A frame's copy for the autosave, asked for by [`autosave`], made between frames.
pub(crate) struct Asked {
    /// The mirror it is for.
    mirror: u64,
    /// The slots copied whatever changed (the mirror's next slice while it is built).
    copy: Range<u32>,
    /// Whether the autosave is due with it.
    due: bool,
    /// Queued however far behind the save thread is (the app quits, or waits for the jobs).
    now: bool,
}

/// The frame's very end: the store lent, for the copies this frame asked for, to the
/// plugin's copying thread (`crate::lend`): the autosave's ([`autosave`]; unless the mirror
/// it was for is gone: a load landed, or a job lost it), with the mirror's position and the
/// excerpt, and one of the whole store for each [`SaveGame`] ([`request`]).
fn lend(world: &mut World) {
    // A loan not taken back (no `First` since: an app that runs its schedules by hand).
    collect(world);
    let autosave = world.get_resource_mut::<AutosaveState>().and_then(|mut state| {
        state.ended = Some(Instant::now());
        let asked = state.asked.take()?;
        if asked.mirror != state.mirror {
            return None;
        }
        let since = state.since.take()?;
        // Added to the copies kept before (frames copied one by one, or an autosave kept
        // while the save thread is behind): the excerpt compacts itself now and then.
        let excerpt = std::mem::take(&mut state.excerpt);
        let copy = asked.copy.clone();
        state.lent = Some(asked);
        Some(crate::lend::Changes { since, excerpt, copy })
    });
    let mut jobs = world.resource_mut::<Jobs>();
    let saves = jobs.uncopied();
    if autosave.is_none() && saves == 0 {
        return;
    }
    // The first save into the buffers of the last one's copy (a warm memcpy).
    let saves: Vec<Option<Snapshot>> =
        (0..saves).map(|i| if i == 0 { jobs.spare.take() } else { None }).collect();
    let lend = |store| crate::lend::Lend { store, autosave, saves };
    let loan = world.resource_mut::<DataStore>().lend(lend);
    world.resource_mut::<Jobs>().loan = Some(loan);
}

/// The least time between two frames (from one's end to the next's start) for the game to
/// count as paced: then only an autosave's frame lends the store for a copy (of every change
/// since the last autosave, made while the game waits for its next frame); below it, every
/// frame does (its own changes), so that a frame that starts at once waits for at most one
/// frame's copy.
pub const PACED: Duration = Duration::from_millis(1);

/// The frame's start (and a flush): the lent store taken back (waiting for its copies if
/// they are not done), each save's copy given to its job, and the autosave's jobs for the
/// frame it was lent after queued.
fn collect(world: &mut World) {
    let Some(loan) = world.resource_mut::<Jobs>().loan.take() else { return };
    world.resource_mut::<DataStore>().store_mut();
    // `None`: the copy panicked (it cannot: a panic caught); the saves are copied here, the
    // autosave's mirror built again.
    let copied = loan.take();
    let (changes, saves) = copied.map_or((None, Vec::new()), |c| (c.autosave, c.saves));
    give_copies(world, saves);
    world.resource_scope(|world, mut jobs: Mut<Jobs>| {
        let jobs = &mut *jobs;
        let Some(mut state) = world.get_resource_mut::<AutosaveState>() else { return };
        let Some(asked) = state.lent.take() else { return };
        let Some(copied) = changes else {
            state.since = None;
            state.building = None;
            return;
        };
        state.since = Some(copied.since);
        state.excerpt = copied.excerpt;
        queue(&mut state, jobs, &asked, copied.filled);
    });
}

/// Gives the saves waiting for their copy the copies `made` (in the order they were asked
/// for), and those left a copy made here (the first into the last save's buffers).
fn give_copies(world: &mut World, made: Vec<Snapshot>) {
    world.resource_scope(|world, mut jobs: Mut<Jobs>| {
        if jobs.uncopied() == 0 {
            return;
        }
        let store = world.resource::<DataStore>().store();
        let jobs = &mut *jobs;
        let mut made = made.into_iter();
        for job in &mut jobs.waiting {
            if let Job::Save { copy: copy @ None, .. } = job {
                let copied = made.next().unwrap_or_else(|| copy_into(jobs.spare.take(), store));
                *copy = Some(Box::new(copied));
            }
        }
    });
}

/// Queues what the frame `asked` for, once its copy is in the excerpt (`filled`: the copy
/// range reached the store's last slot).
fn queue(state: &mut AutosaveState, jobs: &mut Jobs, asked: &Asked, filled: bool) {
    let building = state.building.is_some();
    if building {
        state.building = (!filled).then_some(asked.copy.end);
    }
    let mirror = state.mirror;
    if state.building.is_some() || (building && !asked.due) {
        // A part of the mirror's building (an autosave due meanwhile waits for the whole
        // mirror): absorbed into the mirror on the pool.
        let excerpt = jobs.swap_excerpt(&mut state.excerpt);
        jobs.push(Job::Absorb { mirror, excerpt, mark: None });
        return;
    }
    if !asked.due {
        // A frame's copy of a game whose frames leave no time between: kept until the
        // autosave, which then copies only its own frame's changes.
        return;
    }
    state.frames = 0;
    state.at = Instant::now();
    state.kept = false;
    if jobs.waiting.len() >= BEHIND && !asked.now {
        state.kept = true;
        // The save thread far behind (no idle core for it, or a write that does not return):
        // the changes are kept for the next autosave, the later copies added to them on the
        // copying thread, so that a stalled save thread holds O(the store), not
        // O(autosaves), and no frame copies them.
        return;
    }
    // INVARIANT: `autosave` set the path before it asked for the copy.
    let Some(path) = state.path.clone() else { return };
    let excerpt = jobs.swap_excerpt(&mut state.excerpt);
    if !state.based {
        let kind = SaveKind::AutosaveFull;
        jobs.push(Job::Full { path, mirror, excerpt: Some(excerpt), kind, mark: None });
        (state.based, state.links) = (true, 0);
        return;
    }
    state.links += 1;
    let n = state.links;
    let link = link_path(&path, n);
    jobs.push(Job::Link { path: link, mirror, excerpt, n, mark: None, broken: false });
    if n >= state.compact_every.clamp(1, MAX_LINKS) {
        // The mirror's state, where the link leaves it, written on the pool: no copy here.
        let kind = SaveKind::AutosaveCompacted(n);
        jobs.push(Job::Full { path, mirror, excerpt: None, kind, mark: None });
        state.links = 0;
    }
}

/// How far [`pump`] goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pump {
    /// Finishes the job that is done, and starts none (the frame's start: a load is swapped
    /// in before the game's systems run).
    Finish,
    /// Finishes the job that is done and starts the next (the frame's very end).
    Start,
    /// Runs every job, blocking until the last is done (the gate opened).
    Block,
}

/// Finishes the job that is done, and starts the next as `how` says. A job starts only at a
/// frame's very end (or when the game waits for the jobs): the pool's work begins when the
/// frame's is done, not beside its systems.
fn pump(world: &mut World, how: Pump) {
    let block = how == Pump::Block;
    if block {
        // The game waits for the jobs: nothing to keep their writes from.
        world.resource::<Jobs>().gate.set(false);
    }
    loop {
        let mut jobs = world.resource_mut::<Jobs>();
        if let Some(task) = &mut jobs.running {
            let done = if block {
                let task = jobs.running.take();
                task.map(block_on)
            } else {
                let done = check_ready(task);
                if done.is_some() {
                    jobs.running = None;
                }
                done
            };
            let Some(done) = done else { return };
            finish(world, done);
            continue;
        }
        if how == Pump::Finish || matches!(jobs.waiting.front(), Some(Job::Save { copy: None, .. }))
        {
            // A save waits for its copy, made between frames.
            return;
        }
        let Some(mut job) = jobs.waiting.pop_front() else { return };
        match &mut job {
            Job::Seed(..) => {
                let Job::Seed(mirror, mark) = job else { unreachable!("matched") };
                jobs.keep_mark(mirror, Box::new(Mirror::new(*mark)));
                jobs.broken = false;
                continue;
            }
            Job::Absorb { mirror, .. } | Job::Full { mirror, .. } | Job::Link { mirror, .. }
                if *mirror < jobs.replaced
                    || jobs.chain.as_ref().is_some_and(|(number, _)| number > mirror) =>
            {
                // Of a mirror a load replaced (asked for before the load was done): the state
                // it would save is gone; an autosave says so.
                let replaced = match job {
                    Job::Absorb { mut excerpt, .. } => {
                        excerpt.clear();
                        jobs.excerpts.push(excerpt);
                        None
                    }
                    Job::Link { mut excerpt, path, n, .. } => {
                        excerpt.clear();
                        jobs.excerpts.push(excerpt);
                        Some((path, SaveKind::AutosaveLink(n)))
                    }
                    Job::Full { path, kind, .. } => Some((path, kind)),
                    _ => unreachable!("matched"),
                };
                if let Some((path, kind)) = replaced {
                    let result = Err(Error::Replaced { path: path.clone() });
                    world.write_message(Saved { path, kind, result });
                }
                continue;
            }
            Job::Absorb { mirror, mark, .. } => *mark = jobs.mark_for(*mirror),
            Job::Full { mirror, mark, .. } => {
                *mark = jobs.mark_for(*mirror);
                jobs.broken = false;
            }
            Job::Link { mirror, mark, broken, .. } => {
                *mark = jobs.mark_for(*mirror);
                *broken = jobs.broken;
            }
            Job::Save { .. } | Job::Load { .. } => {}
        }
        let gate = Arc::clone(&jobs.gate);
        jobs.running = Some(pool().spawn(async move { run(job, &gate) }));
        if !block {
            return;
        }
    }
}

/// The thread the file jobs run on (see the module's docs), started on first use.
fn pool() -> &'static TaskPool {
    static POOL: OnceLock<TaskPool> = OnceLock::new();
    POOL.get_or_init(|| {
        TaskPoolBuilder::new()
            .num_threads(1)
            .thread_name("datacomp saves".to_owned())
            .on_thread_spawn(lowest_priority)
            .build()
    })
}

/// Gives the calling thread the lowest priority it can take without privileges: on Linux
/// the `SCHED_IDLE` policy, else nice 19 (elsewhere `setpriority` would lower the whole
/// process: nothing is done there). A thread cannot raise it back, so it is done only on the
/// plugin's own thread.
///
/// Nice 19 is not enough: the kernel's scheduler (EEVDF) lets a woken nice-19 thread take the
/// CPU of a nice-0 one and keep it for its slice. In a scheduler trace of `frame_times`, the
/// main thread that woke the save thread to start a job lost its CPU to it for 2.6-4.4 ms,
/// inside the frame. A `SCHED_IDLE` thread never takes a CPU from a thread of the normal
/// policy, and gives its CPU up the moment one wakes there.
fn lowest_priority() {
    #[cfg(target_os = "linux")]
    {
        use thread_priority::{NormalThreadSchedulePolicy, ThreadPriority, ThreadSchedulePolicy};
        let idle = ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Idle);
        let thread = thread_priority::thread_native_id();
        if thread_priority::set_thread_priority_and_policy(thread, ThreadPriority::Min, idle)
            .is_err()
        {
            // Refused (a sandbox without the call): nice 19, or the priority it has.
            let _ = rustix::process::setpriority_process(Some(rustix::thread::gettid()), 19);
        }
    }
}

/// Runs every file job asked for so far, blocking until the last is done, and handles their
/// outcomes (a load's store swapped in, [`Saved`] and [`Loaded`] written): for a test, or
/// before a game quits (the plugin does it on `AppExit` by itself).
pub fn flush(world: &mut World) {
    collect(world);
    // Saves asked in a frame not yet ended (a flush inside it, `AppExit`): copied now.
    give_copies(world, Vec::new());
    // An autosave kept while the save thread was behind: queued now.
    world.resource_scope(|world, mut jobs: Mut<Jobs>| {
        if let Some(mut state) = world.get_resource_mut::<AutosaveState>()
            && state.kept
        {
            let asked = Asked { mirror: state.mirror, copy: 0..0, due: true, now: true };
            queue(&mut state, &mut jobs, &asked, false);
        }
    });
    pump(world, Pump::Block);
}

/// The frame's start (`First`): the gate closed, the store taken back from the copy made
/// between frames and the autosave's jobs queued, the job that is done finished.
pub(crate) fn finish_jobs(world: &mut World) {
    world.resource::<Jobs>().gate.set(true);
    if let Some(mut state) = world.get_resource_mut::<AutosaveState>()
        && let Some(ended) = state.ended.take()
    {
        state.eager = ended.elapsed() < PACED;
    }
    collect(world);
    pump(world, Pump::Finish);
}

/// The frame's very end (the plugin's schedule after `Last`, whose only system this is, so
/// that the frame waits for no other thread after it): the gate opened, the next job
/// started, and the store lent for the autosave's copy.
pub(crate) fn frame_end(world: &mut World) {
    world.resource::<Jobs>().gate.set(false);
    pump(world, Pump::Start);
    lend(world);
}

/// On `AppExit` (the system runs only then): every write finished before the app goes.
pub(crate) fn flush_on_exit(world: &mut World) {
    flush(world);
}

/// A job's work, on the pool: its file writes wait at `gate`.
fn run(job: Job, gate: &Gate) -> Done {
    match job {
        Job::Save { path, copy: Some(copy), kind } => {
            let result = save(&path, copy.as_store(), gate);
            Done::Saved(
                Some(Saved { path, kind, result }),
                Kept { copy: Some(copy), ..Kept::default() },
            )
        }
        // INVARIANT: a save starts once its copy is made (`pump`).
        Job::Save { copy: None, .. } => Done::Saved(None, Kept::default()),
        Job::Seed(mirror, mark) => Done::Saved(
            None,
            Kept { mark: Some((mirror, Box::new(Mirror::new(*mark)))), ..Kept::default() },
        ),
        Job::Absorb { mirror, mut excerpt, mark } => {
            let mark = mark
                .and_then(|mut mark| (mark.gather(&mut excerpt) && mark.absorb()).then_some(mark));
            let kept =
                Kept { mark: mark.map(|mark| (mirror, mark)), excerpt: Some(excerpt), copy: None };
            Done::Saved(None, kept)
        }
        Job::Full { path, mirror, excerpt, kind, mark } => {
            let mut excerpt = excerpt;
            let mark = mark.and_then(|mut mark| {
                let gathered = excerpt.as_mut().is_none_or(|excerpt| mark.gather(excerpt));
                (gathered && mark.absorb()).then_some(mark)
            });
            let result = match &mark {
                Some(mark) => save(&path, mark.mark.state(), gate),
                None => Err(Error::MirrorLost { path: path.clone() }),
            };
            let kept = Kept { mark: mark.map(|mark| (mirror, mark)), excerpt, copy: None };
            Done::Saved(Some(Saved { path, kind, result }), kept)
        }
        Job::Link { path, mirror, mut excerpt, n, mark, broken } => {
            // The delta, its base's crc32 and the mirror's patching: here, not in the frame.
            let kind = SaveKind::AutosaveLink(n);
            let chain_broken = || Err(Error::ChainBroken { path: path.clone(), link: n });
            let lost = || Err(Error::MirrorLost { path: path.clone() });
            let mark = mark.and_then(|mut mark| mark.gather(&mut excerpt).then_some(mark));
            let (result, mark) = match mark {
                None => (lost(), None),
                Some(mut mark) if broken => {
                    // Not written, but the mirror moves on.
                    let fits = mark.absorb();
                    (chain_broken(), fits.then_some(mark))
                }
                Some(mut mark) => match mark.link() {
                    None => (lost(), None),
                    Some(patch) => {
                        let paced = |out: &mut dyn Write| patch.write_to(Paced::new(out, gate));
                        let result = write_atomically(&path, paced)
                            .map(|()| patch.file_len() as u64)
                            .map_err(|error| Error::File { path: path.clone(), error });
                        (result, Some(mark))
                    }
                },
            };
            let kept =
                Kept { mark: mark.map(|mark| (mirror, mark)), excerpt: Some(excerpt), copy: None };
            Done::Saved(Some(Saved { path, kind, result }), kept)
        }
        Job::Load { path, damaged, migrations, mirror } => {
            let result = load(&path, damaged, migrations.as_ref()).map(|(store, report)| {
                // The autosave's mirror, copied here rather than in a frame.
                let mark = mirror.then(|| store.mark());
                Box::new((store, report, mark))
            });
            Done::Loaded { path, result }
        }
    }
}

/// Jobs waiting at which the save thread counts as far behind: an autosave's changes are then
/// kept for the next one, and a [`SaveGame`] is refused ([`Error::Behind`]), instead of
/// queueing (each job holds at most a copy of the store's sheets: the queue, at most this many
/// and a link's compaction).
const BEHIND: usize = 16;

/// The most links a chain holds: a load follows no more, and an autosave folds its chain at
/// this many links whatever `compact_every` says. A load applies its chain with
/// [`StorePatch::apply_chain`]: the crc32 of the whole state is taken for the first link's
/// base and the last's, not for each link's (each link's apply still walks every sheet).
pub const MAX_LINKS: u32 = 1024;

/// `i` as a link number (a chain is at most [`MAX_LINKS`] long).
fn link_number(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

/// Writes a full save atomically, then removes the links of the chain that followed the file
/// it replaced.
fn save(path: &Path, store: &Store, gate: &Gate) -> Result<u64, Error> {
    let fail = |error| Error::File { path: path.to_owned(), error };
    write_atomically(path, |out| store.write_to(Paced::new(out, gate))).map_err(fail)?;
    let len = std::fs::metadata(path).map_err(|e| fail(e.into()))?.len();
    for n in 1..=MAX_LINKS {
        match std::fs::remove_file(link_path(path, n)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
            Err(e) => return Err(Error::File { path: link_path(path, n), error: e.into() }),
        }
    }
    Ok(len)
}

/// Reads a save (salvaging it when damaged, as `damaged` says), applies its chain of links and
/// migrates it.
fn load(
    path: &Path,
    damaged: Damaged,
    migrations: Option<&datacomp::Migrations>,
) -> Result<(Store, LoadReport), Error> {
    let fail = |error| Error::File { path: path.to_owned(), error };
    let mut report = LoadReport {
        sheets: 0,
        lost: 0,
        damage: None,
        links: 0,
        chain_end: None,
        migrated_from: None,
        kept: 0,
        spawned: 0,
        despawned: 0,
    };
    // Read no further than the header says (a device such as /dev/zero gives its 32 bytes).
    let (bytes, short) = match datacomp::format::read_file(path) {
        Ok(bytes) => (bytes, None),
        Err(datacomp::Error::Load(error)) => (Vec::new(), Some(error)),
        Err(error) => return Err(fail(error)),
    };
    let whole = match short {
        Some(error) => Err(error),
        None => Store::from_bytes(&bytes),
    };
    let mut store = match (whole, damaged) {
        (Ok(store), _) => store,
        (Err(error), Damaged::Refuse) => {
            return Err(Error::Damaged { path: path.to_owned(), error });
        }
        (Err(error), Damaged::Salvage) => {
            let bytes = if bytes.is_empty() {
                // A regular file longer or shorter than its header says: all of it, as it is.
                let file = std::fs::metadata(path).map_err(|e| fail(e.into()))?;
                if !file.is_file() {
                    return Err(Error::Damaged { path: path.to_owned(), error });
                }
                std::fs::read(path).map_err(|e| fail(e.into()))?
            } else {
                bytes
            };
            let salvage = Store::salvage(&bytes).map_err(|e| fail(e.into()))?;
            report.lost = salvage.lost.len();
            report.damage = Some(error);
            salvage.store
        }
    };
    // The links that load, in order; then applied as far as they fit.
    let mut chain = Vec::new();
    for n in 1..=MAX_LINKS {
        let link = link_path(path, n);
        if !link.exists() {
            break;
        }
        match StorePatch::load(&link) {
            Ok(delta) => chain.push(delta),
            Err(error) => {
                report.chain_end = Some((n, error));
                break;
            }
        }
    }
    report.links = link_number(chain.len());
    if let Err((i, error)) = StorePatch::apply_chain(&chain, &mut store) {
        report.links = link_number(i);
        report.chain_end = Some((link_number(i + 1), error.into()));
    }
    if let Some(migrations) = migrations
        && store.data_version() != migrations.version()
    {
        let from = store.data_version();
        migrations
            .apply(&mut store)
            .map_err(|error| Error::Migrate { path: path.to_owned(), error: Box::new(error) })?;
        report.migrated_from = Some(from);
    }
    report.sheets = store.len();
    Ok((store, report))
}

/// A finished job's outcome, on the main thread.
fn finish(world: &mut World, done: Done) {
    match done {
        Done::Saved(saved, kept) => {
            let mut jobs = world.resource_mut::<Jobs>();
            if let Some(copy) = kept.copy {
                jobs.spare = Some(*copy);
            }
            if let Some(mut excerpt) = kept.excerpt {
                excerpt.clear();
                jobs.excerpts.push(excerpt);
            }
            let lost = kept.mark.is_none();
            if let Some((mirror, mark)) = kept.mark {
                jobs.keep_mark(mirror, mark);
            }
            let failed =
                saved.as_ref().is_some_and(|s| s.result.is_err() && s.kind != SaveKind::Save);
            if failed {
                jobs.broken = true;
            }
            let autosave_job = saved.as_ref().is_none_or(|s| s.kind != SaveKind::Save);
            // A job of the current mirror that lost it leaves none (an older one's had none).
            let current = jobs.chain.is_none();
            if let Some(mut autosave) = world.get_resource_mut::<AutosaveState>() {
                if failed {
                    // The chain has no base on disk to follow, or a hole: the next autosave
                    // writes a full save from the mirror.
                    autosave.based = false;
                    autosave.links = 0;
                }
                if autosave_job && lost && current {
                    // The mirror is gone (an excerpt that did not fit it): built again.
                    autosave.since = None;
                    autosave.building = None;
                }
            }
            if let Some(saved) = saved {
                world.write_message(saved);
            }
        }
        Done::Loaded { path, result } => {
            let result = result.map(|loaded| {
                let (store, mut report, mark) = *loaded;
                world.resource_mut::<DataStore>().replace(store);
                let relinked = relink(world);
                (report.kept, report.spawned, report.despawned) =
                    (relinked.kept, relinked.spawned, relinked.despawned);
                world.resource_mut::<Jobs>().chain = None;
                if let Some(mut autosave) = world.get_resource_mut::<AutosaveState>() {
                    // The next autosave is a full one, from the mirror of the loaded store.
                    autosave.mirror += 1;
                    autosave.kept = false;
                    let replaced = autosave.mirror;
                    world.resource_mut::<Jobs>().replaced = replaced;
                    let mut autosave = world.resource_mut::<AutosaveState>();
                    autosave.building = None;
                    (autosave.based, autosave.links) = (false, 0);
                    autosave.excerpt.clear();
                    autosave.since = mark.as_ref().map(Mark::since);
                    let mirror = autosave.mirror;
                    if let Some(mark) = mark {
                        world.resource_mut::<Jobs>().chain =
                            Some((mirror, Box::new(Mirror::new(mark))));
                    }
                }
                report
            });
            world.write_message(Loaded { path, result });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An app with the task pools and the plugin.
    fn plugin_app() -> bevy_app::App {
        let mut app = bevy_app::App::new();
        app.add_plugins((bevy_app::TaskPoolPlugin::default(), crate::DatacompPlugin::default()));
        app
    }

    /// A writer that keeps what it is given and the size of each write.
    #[derive(Default)]
    struct Recorder {
        bytes: Vec<u8>,
        writes: Vec<usize>,
    }

    impl Write for &mut Recorder {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.bytes.extend_from_slice(buf);
            self.writes.push(buf.len());
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// While the save thread is stalled (here by a save to a pipe nobody reads yet), frames
    /// go on, autosaving every frame: once `BEHIND` jobs wait, an autosave's changes are kept
    /// for the next one and a save is refused, instead of queueing more; once the thread goes
    /// on, the chain holds every change.
    #[cfg(target_os = "linux")]
    #[test]
    fn autosaves_behind_a_stalled_save_thread_queue_at_most_behind_jobs() {
        use std::io::Read;

        use crate::Sheet;

        let dir = tempfile::tempdir().unwrap();
        let pipe = dir.path().join("stalled.dcmp");
        let made = std::process::Command::new("mkfifo").arg(&pipe).status().unwrap();
        assert!(made.success());
        let auto = dir.path().join("auto.dcmp");
        let mut app = plugin_app();
        let every = Every::Frames(1);
        app.insert_resource(Autosave { every, path: auto.clone(), compact_every: 3 });
        let sheets: Vec<Sheet> = {
            let mut data = app.world_mut().resource_mut::<DataStore>();
            (0..2000_u16)
                .map(|i| data.insert(&[("hp", f32::from(i))].into_iter().collect()))
                .collect()
        };
        // The mirror built (a slice of slots a frame), then the save thread stalled.
        while app.world().resource::<AutosaveState>().building.is_some()
            || app.world().resource::<AutosaveState>().since.is_none()
        {
            app.update();
            flush(app.world_mut());
        }
        let asked = app.world().resource::<DataStore>().store().clone();
        app.world_mut().write_message(SaveGame { path: pipe.clone() });
        app.update();
        for frame in 0..300_u16 {
            let mut data = app.world_mut().resource_mut::<DataStore>();
            for &sheet in sheets.iter().skip(usize::from(frame) * 7 % 2000).take(50) {
                data.get_mut(&sheet).unwrap().set("hp", -f32::from(frame)).unwrap();
            }
            // Paced: only the autosaves' frames lend the store.
            std::thread::sleep(2 * PACED);
            app.update();
        }
        // Links, each third with its compaction, until BEHIND wait; then the changes are
        // kept for the first autosave once the jobs drain, each frame's added to them
        // (compacted past 2 x 4,096 entries: `Since::add`).
        let waiting = &app.world().resource::<Jobs>().waiting;
        let links = waiting.iter().filter(|job| matches!(job, Job::Link { .. })).count();
        assert_eq!((waiting.len(), links), (BEHIND, BEHIND / 4 * 3));
        collect(app.world_mut());
        let kept = app.world().resource::<AutosaveState>().excerpt.entities().unwrap();
        assert!((1000..=2 * 4096 + 50).contains(&kept), "{kept} entities kept");
        // A save asked now is refused at once (each would hold a copy of the store).
        app.world_mut().write_message(SaveGame { path: dir.path().join("refused.dcmp") });
        app.update();
        let mut answers = app.world_mut().resource_mut::<bevy_ecs::message::Messages<Saved>>();
        let answers: Vec<Saved> = answers.drain().collect();
        assert!(
            matches!(
                &answers[..],
                [Saved { result: Err(Error::Behind { waiting: BEHIND, .. }), .. }]
            ),
            "{answers:?}"
        );
        let message = answers[0].result.as_ref().unwrap_err().to_string();
        assert!(message.ends_with("refused.dcmp: not saved: the save thread has 16 jobs waiting (a write that does not return?); ask again later"), "{message}");
        assert_eq!(app.world().resource::<Jobs>().waiting.len(), BEHIND);

        // The reader comes: the save and the gathered changes go through, and an autosave
        // now writes the store as it is.
        let reader = std::thread::spawn(move || {
            let mut bytes = Vec::new();
            std::fs::File::open(&pipe).unwrap().read_to_end(&mut bytes).unwrap();
            bytes
        });
        flush(app.world_mut());
        let piped = reader.join().unwrap();
        assert!(
            Store::from_bytes(&piped).unwrap() == asked,
            "the save holds the store it was asked of"
        );
        app.insert_resource(Autosave {
            every: Every::Frames(1),
            path: auto.clone(),
            compact_every: 1,
        });
        app.update();
        flush(app.world_mut());
        let saved = Store::load(&auto).unwrap();
        assert!(saved == *app.world().resource::<DataStore>().store(), "the autosave is the store");
    }

    /// Frames with time between them lend the store only for the autosave's copy (every
    /// third frame here), of every change since the last; frames that follow each other at
    /// once lend it every frame, for their own.
    #[test]
    fn only_the_autosaves_frame_lends_the_store_when_frames_are_paced() {
        let dir = tempfile::tempdir().unwrap();
        let mut app = plugin_app();
        let sheets: Vec<_> = {
            let mut data = app.world_mut().resource_mut::<DataStore>();
            (0..100_u8)
                .map(|i| data.insert(&[("hp", f32::from(i))].into_iter().collect()))
                .collect()
        };
        let path = dir.path().join("auto.dcmp");
        app.insert_resource(Autosave { every: Every::Frames(3), path, compact_every: 10 });
        while app.world().resource::<AutosaveState>().building.is_some()
            || !app.world().resource::<AutosaveState>().based
        {
            app.update();
            flush(app.world_mut());
        }
        let lent = |app: &mut bevy_app::App, paced: bool| -> Vec<bool> {
            (0..6)
                .map(|frame| {
                    let mut data = app.world_mut().resource_mut::<DataStore>();
                    data.get_mut(&sheets[frame]).unwrap().set("hp", -1.0).unwrap();
                    if paced {
                        std::thread::sleep(2 * PACED);
                    }
                    app.update();
                    app.world().resource::<AutosaveState>().lent.is_some()
                })
                .collect()
        };
        // The first paced frame still follows the flush at once.
        lent(&mut app, true);
        assert_eq!(lent(&mut app, true), [false, false, true, false, false, true]);
        assert_eq!(lent(&mut app, false)[1..], [true; 5]);
        flush(app.world_mut());
        let path = dir.path().join("auto.dcmp");
        let mut chain = Store::load(&path).unwrap();
        let links: Vec<u32> =
            (1..=MAX_LINKS).take_while(|&n| link_path(&path, n).exists()).collect();
        for &n in &links {
            datacomp::StorePatch::load(link_path(&path, n)).unwrap().apply(&mut chain).unwrap();
        }
        assert_eq!(links, [1, 2, 3, 4, 5, 6]);
        assert!(chain == *app.world().resource::<DataStore>().store(), "every change saved");
    }

    /// The frame that asks for a save lends the store for its copy, made between frames; the
    /// next frame gives the copy to the save's job, which writes the store as it was asked.
    #[test]
    fn a_saves_copy_is_made_between_frames() {
        let dir = tempfile::tempdir().unwrap();
        let mut app = plugin_app();
        let sheet = app
            .world_mut()
            .resource_mut::<DataStore>()
            .insert(&[("hp", 1.0)].into_iter().collect());
        let path = dir.path().join("world.dcmp");
        app.world_mut().write_message(SaveGame { path: path.clone() });
        app.update();
        let asked = app.world().resource::<DataStore>().store().clone();
        let jobs = app.world().resource::<Jobs>();
        assert!(jobs.loan.is_some(), "lent for the copy");
        assert!(matches!(jobs.waiting.front(), Some(Job::Save { copy: None, .. })));
        // A write between frames takes the store back once the copy is made.
        let mut data = app.world_mut().resource_mut::<DataStore>();
        data.get_mut(&sheet).unwrap().set("hp", 2.0).unwrap();
        app.update();
        assert!(app.world().resource::<Jobs>().loan.is_none());
        flush(app.world_mut());
        assert!(Store::load(&path).unwrap() == asked, "the store as it was asked");
    }

    /// A paced writer passes at most `PIECE` bytes a write, in order, through an open gate.
    #[test]
    fn paced_writes_go_a_piece_at_a_time() {
        let gate = Gate::default();
        let data: Vec<u8> = (0..PIECE * 2 + 10).map(|i| u8::try_from(i % 251).unwrap()).collect();
        let mut recorder = Recorder::default();
        Paced::new(&mut recorder, &gate).write_all(&data).unwrap();
        assert_eq!(recorder.bytes, data);
        assert_eq!(recorder.writes, [PIECE, PIECE, 10]);
        // Writes smaller than a piece share one: the pieces count bytes, not writes.
        let mut recorder = Recorder::default();
        let mut paced = Paced::new(&mut recorder, &gate);
        paced.write_all(&data[..10]).unwrap();
        paced.write_all(&data[10..]).unwrap();
        assert_eq!(recorder.bytes, data);
        assert_eq!(recorder.writes, [10, PIECE - 10, PIECE, 10]);
    }

    /// While a frame runs (the gate closed) a paced write waits, and it goes on when the frame
    /// ends; a gate never opened lets it go after the gate's longest wait.
    #[test]
    fn paced_writes_wait_for_the_frames_end() {
        let gate = Gate { wait: Duration::from_mins(1), ..Gate::default() };
        gate.set(true);
        let data = vec![7_u8; PIECE + 1];
        let written = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|scope| {
            let writer = scope.spawn(|| {
                let mut recorder = Recorder::default();
                for piece in data.chunks(PIECE) {
                    Paced::new(&mut recorder, &gate).write_all(piece).unwrap();
                    written.fetch_add(piece.len(), std::sync::atomic::Ordering::SeqCst);
                }
                recorder.bytes
            });
            std::thread::sleep(Duration::from_millis(50));
            assert_eq!(written.load(std::sync::atomic::Ordering::SeqCst), 0, "written in a frame");
            gate.set(false);
            assert_eq!(writer.join().unwrap(), data);
        });

        // A frame that ends and the next that starts at once let a waiting write go.
        let busy = Gate { wait: Duration::from_secs(10), ..Gate::default() };
        busy.set(true);
        let start = Instant::now();
        std::thread::scope(|scope| {
            let writer = scope.spawn(|| {
                let mut recorder = Recorder::default();
                Paced::new(&mut recorder, &busy).write_all(b"between").unwrap();
                recorder.bytes
            });
            // Frames back to back until the write went (it waits from before one's end).
            while !writer.is_finished() {
                std::thread::sleep(Duration::from_millis(5));
                busy.set(false);
                busy.set(true);
            }
            assert_eq!(writer.join().unwrap(), b"between");
        });
        assert!(start.elapsed() < Duration::from_secs(5), "went only at the longest wait");

        let stuck = Gate { wait: Duration::from_millis(20), ..Gate::default() };
        stuck.set(true);
        let mut recorder = Recorder::default();
        let start = Instant::now();
        Paced::new(&mut recorder, &stuck).write_all(b"late").unwrap();
        assert!(start.elapsed() >= Duration::from_millis(20));
        assert_eq!(recorder.bytes, b"late");
    }

    /// A link job without the chain's mark, or with a mark the excerpt does not follow,
    /// writes nothing and says the mirror was lost (and gives back no mark: it is built again);
    /// with the mark it writes the delta that `take_delta` gives and gives the mark back; a
    /// link after a failed autosave (`broken`) writes nothing but moves the mark on.
    #[test]
    fn a_link_is_made_from_the_chains_mark_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("auto.dcmp.1.delta");
        let mut store = Store::new();
        let id = store.insert_entries([("hp", 1.0)]).unwrap();
        let mark = store.mark();
        let (mut twin, stranger) = (mark.clone(), store.mark());
        let mut since = mark.since();
        store.get_mut(id).unwrap().set("hp", 2.0).unwrap();
        let excerpt = since.take(&store);
        let link = |mark: Option<Mark>, broken: bool| {
            let job = Job::Link {
                path: path.clone(),
                mirror: 1,
                excerpt: excerpt.clone(),
                n: 1,
                mark: mark.map(|mark| Box::new(Mirror::new(mark))),
                broken,
            };
            match run(job, &Gate::default()) {
                Done::Saved(saved, kept) => (saved.unwrap(), kept),
                Done::Loaded { .. } => unreachable!("a link job saves"),
            }
        };
        for mark in [None, Some(stranger)] {
            let (saved, kept) = link(mark, false);
            assert!(matches!(saved.result, Err(Error::MirrorLost { .. })), "{saved:?}");
            assert!(kept.mark.is_none() && kept.excerpt.is_some());
            assert!(!path.exists());
        }
        let (saved, kept) = link(Some(mark.clone()), true);
        assert!(matches!(saved.result, Err(Error::ChainBroken { link: 1, .. })));
        assert!(!path.exists());
        assert_eq!(kept.mark.unwrap().1.mark.state(), &store);
        let (saved, kept) = link(Some(mark), false);
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(saved.result.unwrap(), bytes.len() as u64);
        assert_eq!(bytes, twin.take_delta(&store).to_bytes());
        let (mirror, mark) = kept.mark.expect("the mark comes back");
        assert_eq!((mirror, mark.mark.state()), (1, &store));
    }
}
