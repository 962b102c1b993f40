//! A game's frames, for `frame_times` (their times) and `save_cost allocations` (their
//! allocations): 100,000 sheets, 1,000 of them changed inside each frame, 60 frames, with
//! an autosave every 10 frames and without.

#![allow(dead_code)] // Each example reads its own part of a run.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use bevy_app::App;
use bevy_ecs::message::Messages;
use datacomp_bevy::{Autosave, DataStore, Every, Saved, Sheet, flush};

use crate::common::{HEALTH, SHEETS, datacomp_app};

/// Changes the health of `count` sheets, starting at `from`.
pub fn change(app: &mut App, from: usize, count: usize) {
    let world = app.world_mut();
    let sheets: Vec<Sheet> =
        world.query::<&Sheet>().iter(world).skip(from).take(count).copied().collect();
    let mut data = world.resource_mut::<DataStore>();
    for sheet in sheets {
        let health = data.get(&sheet).and_then(|s| s.get_float(HEALTH)).unwrap_or(0.0);
        data.get_mut(&sheet).unwrap().set(HEALTH, health - 1.0).unwrap();
    }
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
}

/// A 60-frame run, each frame changing 1,000 sheets (inside the frame, as a game's systems
/// would) and updating the app. Timed (no `blocks`): the frames start 1/60 s apart, as a
/// game's do, and the pool's jobs run in the time between, as they would in the game: both
/// runs idle alike between frames (a frame after an idle core is slower: waiting for the
/// pool before each frame made every autosave frame ~1.7x the plain run's, which never
/// waited). Counted (`blocks` counts the allocations so far): the pool's jobs waited for
/// before each frame, off the clock, so that a frame's count is its own and the ones its end
/// starts. With autosave, the run starts once the mirror is whole (its building frames run
/// first, timed apart) and the chain's first full save is written.
pub fn run(autosave: bool, dir: &Path, blocks: Option<fn() -> u64>) -> Run {
    let mut app = datacomp_app(true);
    let mut round = 0;
    let mut building = Vec::new();
    if autosave {
        let every =
            Autosave { every: Every::Frames(10), path: dir.join("auto.dcmp"), compact_every: 3 };
        app.insert_resource(every);
        loop {
            let start = Instant::now();
            warm_frame(&mut app, &mut round);
            building.push(start.elapsed());
            flush(app.world_mut());
            let saved = app.world_mut().resource_mut::<Messages<Saved>>().drain().count();
            if saved > 0 {
                break;
            }
        }
    }
    let (mut times, mut allocs, mut saves) = (Vec::new(), Vec::new(), 0);
    let stolen = steal();
    let period = Duration::from_secs(1) / 60;
    let mut next = Instant::now() + period;
    for _ in 0..60 {
        if blocks.is_some() {
            flush(app.world_mut());
        } else {
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
            next += period;
        }
        saves += app.world_mut().resource_mut::<Messages<Saved>>().drain().count();
        let before = blocks.map(|blocks| blocks());
        let start = Instant::now();
        measured_frame(&mut app, &mut round);
        times.push(start.elapsed());
        if let Some((blocks, before)) = blocks.zip(before) {
            allocs.push(blocks() - before);
        }
    }
    let steal = steal().zip(stolen).map(|(after, before)| after - before);
    flush(app.world_mut());
    saves += app.world_mut().resource_mut::<Messages<Saved>>().drain().count();
    Run { times, allocs, building, saves, steal }
}

/// The time the hypervisor took from this machine's CPUs so far (`steal` in `/proc/stat`, in
/// ticks of 10 ms), where there is one: a frame that waited for the host shows as a slow
/// frame whatever the game did.
pub fn steal() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    stat.lines().next()?.split_whitespace().nth(8)?.parse().ok()
}

/// 1,000 sheets changed, then the app's update: one frame of `run`, the unit callgrind
/// counts.
#[inline(never)]
pub fn measured_frame(app: &mut App, round: &mut usize) {
    change(app, (*round * 1000) % SHEETS, 1000);
    *round += 1;
    app.update();
}

/// A frame of `run` before it starts (the mirror's building), not counted.
#[inline(never)]
pub fn warm_frame(app: &mut App, round: &mut usize) {
    // Not the same body as `measured_frame`, which the linker would then fold into this one.
    *round += 1;
    change(app, (black_box(*round) - 1) * 1000 % SHEETS, 1000);
    app.update();
}
