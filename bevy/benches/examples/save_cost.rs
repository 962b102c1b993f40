//! The instruction-count harness beside `benches/save_load.rs`: the same 100,000 sheets, in
//! ways a loaded machine disturbs less than criterion's means.
//!
//! - `once OP`: builds the apps, then runs OP once in `measured`, for
//!   `valgrind --tool=callgrind --toggle-collect=save_cost::measured`. OP is one of
//!   `request_frame` (the frame that asks for a save: it lends the store for its copy, made
//!   between frames), `empty_frame`, `snapshot` (the copy, made after the frame), `memcpy_warm`, `memcpy_fresh` (the save's bytes), `write`
//!   (the task's work: a full save to a file), `excerpt` (an autosave link's frame work after
//!   1,000 sheets changed: `Since::take`), `link_task` (the link's work on the pool:
//!   `Mark::take_delta_from`, its base's crc32 included), `take_delta` (both at once, as the
//!   frame did before), `load` (a `LoadGame` into a fresh app, waited for), `ron_save`,
//!   `ron_load` (the `DynamicWorld` peer).
//! - `allocations`: the allocations of each frame of the 60-frame run that `frame_times`
//!   times (all threads; the pool's jobs waited for before each frame, off the count).
//!
//! Run: `cargo run --release -p datacomp-bevy-benches --example save_cost -- allocations`.

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/frames.rs"]
mod frames;

use std::hint::black_box;
use std::path::Path;

use bevy_app::App;
use bevy_ecs::message::Messages;
use common::{
    SHEETS, datacomp_app, datacomp_load, datacomp_save, reflected_app, ron_load, ron_save,
};
use datacomp::Snapshot;
use datacomp_bevy::{DataStore, SaveGame, Saved, flush};

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
            frames::change(&mut app, 0, SHEETS / 100);
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

/// The allocations of each frame of `frames::run` (its frames' times are `frame_times`'s:
/// dhat's allocator takes one lock for every allocation of every thread, and a frame that
/// waits for the pool's allocation under it is slower for it, by up to 17 ms).
fn allocations() {
    let dir = tempfile::tempdir().unwrap();
    let _profiler = dhat::Profiler::builder().testing().build();
    let blocks = || dhat::HeapStats::get().total_blocks;
    for autosave in [false, true] {
        let run = frames::run(autosave, dir.path(), Some(blocks), false);
        let allocs = &run.allocs[frames::WARM_FRAMES..];
        let mut sorted = allocs.to_vec();
        sorted.sort_unstable();
        println!(
            "{}: allocations a frame: median {}, most {}: {:?}",
            if autosave { "autosave every 10 frames" } else { "no autosave" },
            sorted[sorted.len() / 2],
            sorted[sorted.len() - 1],
            allocs,
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["once", op] => once(op),
        ["allocations"] => allocations(),
        _ => eprintln!("usage: save_cost once OP | allocations (OP: one of {OPS:?})"),
    }
}
