//! A game's frames, for `frame_times` (their times) and `save_cost allocations` (their
//! allocations): 100,000 sheets, 1,000 of them changed inside each frame, 60 frames, with
//! an autosave every 10 frames and without.

#![allow(dead_code)] // Each example reads its own part of a run.

use std::path::Path;
use std::time::{Duration, Instant};

use bevy_app::{App, Update};
use bevy_ecs::message::Messages;
use bevy_ecs::resource::Resource;
use bevy_ecs::world::World;
use datacomp_bevy::{Autosave, DataStore, Every, Saved, Sheet, flush};

use crate::common::{HEALTH, SHEETS, datacomp_app};

/// Changes the health of `count` sheets, starting at `from`.
pub fn change(app: &mut App, from: usize, count: usize) {
    change_world(app.world_mut(), from, count);
}

fn change_world(world: &mut World, from: usize, count: usize) {
    let sheets: Vec<Sheet> =
        world.query::<&Sheet>().iter(world).skip(from).take(count).copied().collect();
    let mut data = world.resource_mut::<DataStore>();
    for sheet in sheets {
        let health = data.get(&sheet).and_then(|s| s.get_float(HEALTH)).unwrap_or(0.0);
        data.get_mut(&sheet).unwrap().set(HEALTH, health - 1.0).unwrap();
    }
}

/// The frames a run's [`game`] system ran.
#[derive(Resource, Default)]
struct Round(usize);

/// The game's work, a system of its `Update` schedule (inside the frame's schedules, as a
/// game's systems are): the health of the next 1,000 sheets changed.
fn game(world: &mut World) {
    let mut round = world.resource_mut::<Round>();
    let from = round.0 * 1000 % SHEETS;
    round.0 += 1;
    change_world(world, from, 1000);
}

/// Adds the game's [`game`] system (1,000 sheets changed a frame) to `app`.
pub fn with_game(app: &mut App) {
    app.init_resource::<Round>().add_systems(Update, game);
}

/// A run's frames.
pub struct Run {
    /// Each frame's time.
    pub times: Vec<Duration>,
    /// Each frame's allocations, when counted.
    pub allocs: Vec<u64>,
    /// The frames that built the autosave's mirror before the run (none without autosave).
    pub building: Vec<Duration>,
    /// Autosaves written.
    pub saves: usize,
    /// Hypervisor steal during the frames, in ticks of 10 ms (see [`steal`]).
    pub steal: Option<u64>,
    /// Per frame, what the threads did (see [`Trace`]); empty where `/proc` is not.
    pub traces: Vec<Trace>,
}

/// What the process's threads did during one frame, and before it since the last frame's
/// end, from `/proc/self/task/*/schedstat` and `stat`: whether a slow frame computed (the
/// main thread on a CPU all along), waited (off a CPU), faulted pages in, or ran beside the
/// save thread.
#[derive(Clone, Copy, Debug, Default)]
pub struct Trace {
    /// The main thread's µs on a CPU during the frame.
    pub main_cpu: u64,
    /// The main thread's minor page faults during the frame.
    pub main_faults: u64,
    /// Bevy's compute threads' µs on a CPU during the frame.
    pub compute_cpu: u64,
    /// The plugin's save thread's µs on a CPU during the frame, and before it.
    pub save_during: u64,
    pub save_before: u64,
}

/// A thread of this process, by its `/proc/self/task/<tid>` directory.
struct Thread(std::path::PathBuf);

impl Thread {
    /// The threads whose name starts with `name`.
    fn named(name: &str) -> Vec<Thread> {
        let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return Vec::new() };
        tasks
            .flatten()
            .filter(|task| {
                std::fs::read_to_string(task.path().join("comm"))
                    .is_ok_and(|comm| comm.starts_with(name))
            })
            .map(|task| Thread(task.path()))
            .collect()
    }

    /// The calling thread.
    fn current() -> Option<Thread> {
        std::fs::canonicalize("/proc/thread-self").ok().map(Thread)
    }

    /// µs on a CPU so far (`schedstat`'s first field, in ns).
    fn cpu(&self) -> u64 {
        let stat = std::fs::read_to_string(self.0.join("schedstat")).unwrap_or_default();
        stat.split_whitespace().next().and_then(|ns| ns.parse::<u64>().ok()).unwrap_or(0) / 1000
    }

    /// Minor page faults so far (`stat`'s 10th field; the name before it is in parentheses).
    fn faults(&self) -> u64 {
        let stat = std::fs::read_to_string(self.0.join("stat")).unwrap_or_default();
        let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        after.split_whitespace().nth(7).and_then(|n| n.parse().ok()).unwrap_or(0)
    }
}

/// The counters a [`Trace`] is the difference of.
struct Threads {
    main: Option<Thread>,
    compute: Vec<Thread>,
    save: Option<Thread>,
}

impl Threads {
    fn find() -> Threads {
        Threads {
            main: Thread::current(),
            compute: Thread::named("Compute Task"),
            save: Thread::named("datacomp saves").pop(),
        }
    }

    /// (main cpu, main faults, compute cpu, save cpu) now.
    fn read(&self) -> [u64; 4] {
        [
            self.main.as_ref().map_or(0, Thread::cpu),
            self.main.as_ref().map_or(0, Thread::faults),
            self.compute.iter().map(Thread::cpu).sum(),
            self.save.as_ref().map_or(0, Thread::cpu),
        ]
    }
}

/// Frames a run makes before its 60 (timed too, and reported apart): a game's first frames
/// after loading (its buffers' first growth, the first compaction's) are not the frames it
/// makes for the rest of its life.
pub const WARM_FRAMES: usize = 30;

/// A 60-frame run (after [`WARM_FRAMES`]), each frame an update of the app, whose [`game`]
/// system changes 1,000 sheets; `times` and `traces` hold the warm-up frames first. Timed (no `blocks`): the frames start 1/60 s apart, as a game's do,
/// and the pool's jobs run in the time between, as they would in the game: both runs idle
/// alike between frames (a frame after an idle core is slower: waiting for the
/// pool before each frame made every autosave frame ~1.7x the plain run's, which never
/// waited). Counted (`blocks` counts the allocations so far): the pool's jobs waited for
/// before each frame, off the clock, so that a frame's count is its own and the ones its end
/// starts. With autosave, the run starts once the mirror is whole (its building frames run
/// first, timed apart) and the chain's first full save is written. `uncapped`: each frame
/// starts as the last ends (a game with no time between its frames), not 1/60 s apart.
pub fn run(autosave: bool, dir: &Path, blocks: Option<fn() -> u64>, uncapped: bool) -> Run {
    let mut app = datacomp_app(true);
    with_game(&mut app);
    let mut building = Vec::new();
    if autosave {
        let every =
            Autosave { every: Every::Frames(10), path: dir.join("auto.dcmp"), compact_every: 3 };
        app.insert_resource(every);
        loop {
            let start = Instant::now();
            app.update();
            building.push(start.elapsed());
            flush(app.world_mut());
            let saved = app.world_mut().resource_mut::<Messages<Saved>>().drain().count();
            if saved > 0 {
                break;
            }
        }
    }
    let (mut times, mut allocs, mut saves) = (Vec::new(), Vec::new(), 0);
    let mut traces = Vec::new();
    let threads = Threads::find();
    let mut last = threads.read();
    let stolen = steal();
    let period = Duration::from_secs(1) / 60;
    let mut next = Instant::now() + period;
    for _ in 0..WARM_FRAMES + 60 {
        if blocks.is_some() {
            flush(app.world_mut());
        } else if !uncapped {
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
            next += period;
        }
        saves += app.world_mut().resource_mut::<Messages<Saved>>().drain().count();
        // The threads' counters read outside the frame's time and allocations.
        let at_start = threads.read();
        let before = blocks.map(|blocks| blocks());
        let start = Instant::now();
        measured_frame(&mut app);
        times.push(start.elapsed());
        if let Some((blocks, before)) = blocks.zip(before) {
            allocs.push(blocks() - before);
        }
        let at_end = threads.read();
        traces.push(Trace {
            main_cpu: at_end[0] - at_start[0],
            main_faults: at_end[1] - at_start[1],
            compute_cpu: at_end[2] - at_start[2],
            save_during: at_end[3] - at_start[3],
            save_before: at_start[3] - last[3],
        });
        last = at_end;
    }
    let steal = steal().zip(stolen).map(|(after, before)| after - before);
    flush(app.world_mut());
    saves += app.world_mut().resource_mut::<Messages<Saved>>().drain().count();
    Run { times, allocs, building, saves, steal, traces }
}

/// The time the hypervisor took from this machine's CPUs so far (`steal` in `/proc/stat`, in
/// ticks of 10 ms), where there is one: a frame that waited for the host shows as a slow
/// frame whatever the game did.
pub fn steal() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    stat.lines().next()?.split_whitespace().nth(8)?.parse().ok()
}

/// One frame of `run`: the app's update (its [`game`] system changes 1,000 sheets), the
/// unit callgrind counts.
#[inline(never)]
pub fn measured_frame(app: &mut App) {
    app.update();
}
