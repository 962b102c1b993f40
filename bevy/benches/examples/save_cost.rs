//! The instruction-count harness beside `benches/save_load.rs`: the same 100,000 sheets, in
//! ways a loaded machine disturbs less than criterion's means.
//!
//! - `once OP`: builds the apps, then runs OP once in `measured`, for
//!   `valgrind --tool=callgrind --toggle-collect=save_cost::measured`. OP is one of
//!   `request_frame` (the frame that asks for a save: its copy of the store), `empty_frame`,
//!   `snapshot` (the copy alone), `memcpy_warm`, `memcpy_fresh` (the save's bytes), `write`
//!   (the task's work: a full save to a file), `excerpt` (an autosave link's frame work after
//!   1,000 sheets changed: `Since::take`), `link_task` (the link's work on the pool:
//!   `Mark::take_delta_from`, its base's crc32 included), `take_delta` (both at once, as the
//!   frame did before), `load` (a `LoadGame` into a fresh app, waited for), `ron_save`,
//!   `ron_load` (the `DynamicWorld` peer).
//! - `frames`: a 60-frame run changing 1,000 sheets a frame (inside the frame), with an
//!   autosave every 10 frames (after its mirror is built) and without; prints each run's
//!   median and slowest frame (goal: no frame over 1.5x the median of the run without), every
//!   frame's time and allocations. Each frame is a call of `save_cost::measured_frame`, so that
//!   `valgrind --tool=callgrind --separate-threads=yes --collect-atstart=no
//!   --toggle-collect='save_cost::measured_frame*' --dump-after='save_cost::measured_frame*'` gives each frame's
//!   main-thread instructions (one dump per frame; `cargo run --example save_cost -- dumps
//!   FILES...` sums them up).
//!
//! Run: `cargo run --release -p datacomp-bevy-benches --example save_cost -- frames`.

#[path = "../common/mod.rs"]
mod common;

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use bevy_app::App;
use bevy_ecs::message::Messages;
use common::{
    HEALTH, SHEETS, datacomp_app, datacomp_load, datacomp_save, reflected_app, ron_load, ron_save,
};
use datacomp::Snapshot;
use datacomp_bevy::{Autosave, DataStore, DatacompPlugin, Every, SaveGame, Saved, Sheet, flush};

/// Counts allocations for `frames` (dhat's allocator: no unsafe code here).
#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

const OPS: [&str; 12] = [
    "request_frame",
    "empty_frame",
    "snapshot",
    "memcpy_warm",
    "memcpy_fresh",
    "write",
    "excerpt",
    "link_task",
    "take_delta",
    "load",
    "ron_save",
    "ron_load",
];

/// Changes the health of `count` sheets, starting at `from`.
fn change(app: &mut App, from: usize, count: usize) {
    let world = app.world_mut();
    let sheets: Vec<Sheet> =
        world.query::<&Sheet>().iter(world).skip(from).take(count).copied().collect();
    let mut data = world.resource_mut::<DataStore>();
    for sheet in sheets {
        let health = data.get(&sheet).and_then(|s| s.get_float(HEALTH)).unwrap_or(0.0);
        data.get_mut(&sheet).unwrap().set(HEALTH, health - 1.0).unwrap();
    }
}

/// Runs `op` once; everything it needs was built before.
#[inline(never)]
fn measured(op: &str, app: &mut App, dir: &Path, bytes: &[u8], warm: &mut [u8]) -> usize {
    let (ours, theirs) = (dir.join("world.dcmp"), dir.join("world.scn.ron"));
    match op {
        "request_frame" | "empty_frame" => {
            app.update();
            0
        }
        "snapshot" => Snapshot::new(app.world().resource::<DataStore>().store()).byte_len(),
        "memcpy_warm" => {
            warm.copy_from_slice(black_box(bytes));
            black_box(&warm).len()
        }
        "memcpy_fresh" => black_box(bytes.to_vec()).len(),
        "write" => {
            app.world().resource::<DataStore>().store().save(&ours).unwrap();
            0
        }
        "take_delta" => {
            let data = app.world().resource::<DataStore>();
            let mut mark = MARK.with(|m| m.take()).unwrap();
            mark.take_delta(data.store()).file_len()
        }
        "excerpt" => {
            let data = app.world().resource::<DataStore>();
            let mut since = MARK.with(|m| m.take()).unwrap().since();
            black_box(since.take(data.store())).entities().unwrap()
        }
        "link_task" => {
            let mut mark = MARK.with(|m| m.take()).unwrap();
            let excerpt = EXCERPT.with(|e| e.take()).unwrap();
            mark.take_delta_from(&excerpt).unwrap().file_len()
        }
        "load" => {
            datacomp_load(app, &ours);
            0
        }
        "ron_save" => {
            ron_save(app, &theirs);
            0
        }
        "ron_load" => {
            ron_load(app, &theirs);
            0
        }
        other => panic!("unknown operation {other}: one of {OPS:?}"),
    }
}

thread_local! {
    static MARK: std::cell::Cell<Option<datacomp::Mark>> = const { std::cell::Cell::new(None) };
    static EXCERPT: std::cell::Cell<Option<datacomp::history::Excerpt>> =
        const { std::cell::Cell::new(None) };
}

fn once(op: &str) {
    let dir = tempfile::tempdir().unwrap();
    let mut app = datacomp_app(true);
    datacomp_save(&mut app, &dir.path().join("world.dcmp"));
    let bytes = std::fs::read(dir.path().join("world.dcmp")).unwrap();
    let mut warm = vec![0u8; bytes.len()];
    warm.copy_from_slice(&bytes);
    let mut app = match op {
        "request_frame" => {
            app.world_mut().write_message(SaveGame { path: dir.path().join("world.dcmp") });
            app
        }
        "take_delta" | "excerpt" | "link_task" => {
            let mark = app.world().resource::<DataStore>().store().mark();
            let mut since = mark.since();
            MARK.with(|m| m.set(Some(mark)));
            change(&mut app, 0, SHEETS / 100);
            let excerpt = since.take(app.world().resource::<DataStore>().store());
            EXCERPT.with(|e| e.set(Some(excerpt)));
            app
        }
        "load" => datacomp_app(false),
        "ron_save" => reflected_app(true),
        "ron_load" => {
            ron_save(&mut reflected_app(true), &dir.path().join("world.scn.ron"));
            reflected_app(false)
        }
        _ => app,
    };
    let out = measured(op, &mut app, dir.path(), &bytes, &mut warm);
    flush(app.world_mut());
    let saved = app.world_mut().resource_mut::<Messages<Saved>>().drain().count();
    println!("{op}: {out} ({saved} saves answered); the save is {} bytes", bytes.len());
}

/// A 60-frame run, each frame changing 1,000 sheets (inside the frame, as a game's systems
/// would) and updating the app: each frame's time and allocations (all threads; the pool's
/// jobs are waited for before each frame, off the clock, so that a frame's count is its own
/// and the ones its end starts). With autosave, the run starts once the mirror is whole (its
/// building frames run first, timed apart) and the chain's first full save is written.
fn run(autosave: bool, dir: &Path, count: bool) -> Run {
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
    let _ = DatacompPlugin::default(); // the plugin is in `datacomp_app`
    let (mut times, mut allocs, mut saves) = (Vec::new(), Vec::new(), 0);
    for _ in 0..60 {
        flush(app.world_mut());
        saves += app.world_mut().resource_mut::<Messages<Saved>>().drain().count();
        let blocks = if count { dhat::HeapStats::get().total_blocks } else { 0 };
        let start = Instant::now();
        measured_frame(&mut app, &mut round);
        times.push(start.elapsed());
        if count {
            allocs.push(dhat::HeapStats::get().total_blocks - blocks);
        }
    }
    flush(app.world_mut());
    saves += app.world_mut().resource_mut::<Messages<Saved>>().drain().count();
    Run { times, allocs, building, saves }
}

struct Run {
    times: Vec<Duration>,
    allocs: Vec<u64>,
    building: Vec<Duration>,
    saves: usize,
}

/// 1,000 sheets changed, then the app's update: one frame of `run`, the unit callgrind
/// dumps.
#[inline(never)]
fn measured_frame(app: &mut App, round: &mut usize) {
    change(app, (*round * 1000) % SHEETS, 1000);
    *round += 1;
    app.update();
}

/// A frame of `run` before it starts (the mirror's building), not dumped.
#[inline(never)]
fn warm_frame(app: &mut App, round: &mut usize) {
    // Not the same body as `measured_frame`, which the linker would then fold into this one.
    *round += 1;
    change(app, (black_box(*round) - 1) * 1000 % SHEETS, 1000);
    app.update();
}

/// Each frame's instructions from callgrind's dumps of `frames` (`--dump-after`, one file a
/// frame, in order: the run without autosave, then the one with), as each run's median and
/// slowest frame.
fn dumps(files: &[&str]) {
    let mut counts: Vec<(u32, u64)> = files
        .iter()
        .filter_map(|file| {
            let text = std::fs::read_to_string(file).ok()?;
            let part = text.lines().find_map(|l| l.strip_prefix("part: "))?.trim().parse().ok()?;
            let total = text.lines().find_map(|l| l.strip_prefix("totals: "))?;
            Some((part, total.split_whitespace().next()?.parse().ok()?))
        })
        .collect();
    counts.sort_unstable();
    let counts: Vec<u64> = counts.into_iter().map(|(_, ir)| ir).collect();
    for (name, run) in ["no autosave", "autosave every 10 frames"].iter().zip(counts.chunks(60)) {
        let mut sorted = run.to_vec();
        sorted.sort_unstable();
        let median = sorted[sorted.len() / 2];
        let (at, max) = run.iter().enumerate().max_by_key(|(_, ir)| **ir).unwrap();
        let over: Vec<String> = run
            .iter()
            .enumerate()
            .filter(|(_, ir)| **ir * 2 > median * 3)
            .map(|(i, ir)| format!("frame {i}: {ir}"))
            .collect();
        println!(
            "{name}: median frame {median} Ir, slowest {max} Ir (frame {at}), {:.2}x; over 1.5x: {over:?}",
            *max as f64 / median as f64
        );
    }
}

fn frames() {
    let dir = tempfile::tempdir().unwrap();
    // Times without dhat's profiler (it takes a backtrace at every allocation: half of a
    // frame's instructions), then the allocations with it, in runs of their own.
    let timed = [run(false, dir.path(), false), run(true, dir.path(), false)];
    let counted = {
        let _profiler = dhat::Profiler::builder().testing().build();
        [run(false, dir.path(), true), run(true, dir.path(), true)]
    };
    let median = |times: &[Duration]| {
        let mut sorted = times.to_vec();
        sorted.sort();
        sorted[sorted.len() / 2]
    };
    let plain = median(&timed[0].times);
    for (Run { times, building, saves, .. }, Run { allocs, .. }) in timed.iter().zip(&counted) {
        let (at, slowest) = times.iter().enumerate().max_by_key(|(_, t)| **t).unwrap();
        let mut allocs_sorted = allocs.clone();
        allocs_sorted.sort_unstable();
        println!(
            "{}: median frame {:?}, slowest {slowest:?} (frame {at}), {:.2}x the median without \
             autosave; allocations a frame: median {}, most {}; {saves} autosaves written",
            if building.is_empty() { "no autosave" } else { "autosave every 10 frames" },
            median(times),
            slowest.as_secs_f64() / plain.as_secs_f64(),
            allocs_sorted[allocs.len() / 2],
            allocs_sorted[allocs.len() - 1],
        );
        println!("  frames (µs): {:?}", times.iter().map(Duration::as_micros).collect::<Vec<_>>());
        println!("  allocations: {allocs:?}");
        if let Some(worst) = building.iter().max() {
            println!(
                "  the mirror's building: {} frames before the run, slowest {worst:?}",
                building.len()
            );
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["once", op] => once(op),
        ["frames"] => frames(),
        ["dumps", ref files @ ..] => dumps(files),
        _ => eprintln!("usage: save_cost once OP | frames | dumps FILES (OP: one of {OPS:?})"),
    }
}
