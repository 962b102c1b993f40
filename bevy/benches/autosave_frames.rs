//! The frames of a game that autosaves, 100,000 sheets and 1,000 of them changed a frame
//! (between frames, off the clock), beside the same frames without autosave. Goal (issue 33):
//! no frame of a 60-frame run with an autosave every 10 frames over 1.5x the median frame of
//! the same run without.
//!
//! - `frame/no_autosave`: a frame of an app without autosave (the median's frame).
//! - `frame/autosave_link`: a frame whose autosave is a delta link: it copies the sheets
//!   changed this frame (`Since::add`, into warm buffers); the delta itself is made from the
//!   pool's mirror and written there, waited for off the clock.
//! - `frame/autosave_full`: the frame of a chain's full save (a new path each frame): the same
//!   copy of this frame's changes; the full save is the mirror's, written on the pool. The
//!   mirror is built before (off the clock), a slice of slots a frame.
//! - `task/link`: the link's work on the pool (the delta from the chain's mark, its base's
//!   crc32, the mark patched, the file written), for the record.
//!
//! Run: `cargo bench -p datacomp-bevy-benches --bench autosave_frames` (a quiet machine).
//! `cargo run --release -p datacomp-bevy-benches --example frame_times` prints a whole 60-frame
//! run's median and slowest frame.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use bevy_app::App;
use bevy_ecs::message::Messages;
use common::{HEALTH, SHEETS, datacomp_app};
use criterion::{Criterion, criterion_group, criterion_main};
use datacomp_bevy::{Autosave, DataStore, Every, SaveKind, Saved, Sheet, flush};

/// Changes the health of 1,000 sheets, the next thousand each call.
fn change(app: &mut App, round: &mut usize) {
    let world = app.world_mut();
    let from = (*round * 1000) % SHEETS;
    *round += 1;
    let sheets: Vec<Sheet> =
        world.query::<&Sheet>().iter(world).skip(from).take(1000).copied().collect();
    let mut data = world.resource_mut::<DataStore>();
    for sheet in sheets {
        let health = data.get(&sheet).and_then(|s| s.get_float(HEALTH)).unwrap_or(0.0);
        data.get_mut(&sheet).unwrap().set(HEALTH, health - 1.0).unwrap();
    }
}

/// What each frame of `frames` must have saved.
#[derive(Clone, Copy)]
enum Expect {
    Nothing,
    Full,
    Link,
}

/// The idle time before every timed frame, whatever the variant: a frame that follows a wait
/// (for the pool's job) starts on an idle core and is slower for it, so every variant's
/// frames follow the same wait (`frame_times` paces its runs at 60 fps for the same reason).
const IDLE: Duration = Duration::from_millis(2);

/// `iters` frames of `app`, each after 1,000 changes, the frame alone timed; the jobs it
/// started are waited for off the clock, then [`IDLE`].
fn frames(app: &mut App, iters: u64, round: &mut usize, expect: Expect) -> Duration {
    let mut spent = Duration::ZERO;
    for _ in 0..iters {
        change(app, round);
        std::thread::sleep(IDLE);
        let start = Instant::now();
        app.update();
        spent += start.elapsed();
        flush(app.world_mut());
        let saved: Vec<Saved> = app.world_mut().resource_mut::<Messages<Saved>>().drain().collect();
        let ok = match (expect, &saved[..]) {
            (Expect::Nothing, []) => true,
            (Expect::Full, [saved]) => saved.kind == SaveKind::AutosaveFull,
            (Expect::Link, [saved]) => matches!(saved.kind, SaveKind::AutosaveLink(_)),
            _ => false,
        };
        assert!(ok && saved.iter().all(|s| s.result.is_ok()), "{saved:?}");
    }
    spent
}

fn autosave(app: &mut App, path: &Path, every: u32, compact_every: u32) {
    app.insert_resource(Autosave { every: Every::Frames(every), path: path.into(), compact_every });
}

/// Frames (off the clock) until the autosave's mirror is whole and its first full save
/// written: `MIRROR_SLOTS_PER_FRAME` slots a frame.
fn until_full(app: &mut App, round: &mut usize) {
    loop {
        change(app, round);
        app.update();
        flush(app.world_mut());
        let saved: Vec<Saved> = app.world_mut().resource_mut::<Messages<Saved>>().drain().collect();
        if let [saved] = &saved[..] {
            assert!(saved.kind == SaveKind::AutosaveFull && saved.result.is_ok(), "{saved:?}");
            return;
        }
    }
}

fn benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auto.dcmp");
    let mut group = c.benchmark_group("autosave_frames/100k_sheets");
    group.sample_size(20).measurement_time(Duration::from_secs(10));

    let mut plain = datacomp_app(true);
    let mut round = 0;
    group.bench_function("frame/no_autosave", |b| {
        b.iter_custom(|iters| frames(&mut plain, iters, &mut round, Expect::Nothing));
    });
    drop(plain);

    // Every frame a link (the chain never folds: compactions are on the pool anyway).
    let mut linking = datacomp_app(true);
    autosave(&mut linking, &path, 1, datacomp_bevy::save::MAX_LINKS);
    until_full(&mut linking, &mut round);
    group.bench_function("frame/autosave_link", |b| {
        b.iter_custom(|iters| {
            let mut spent = Duration::ZERO;
            for _ in 0..iters {
                // A new chain once this one is long, off the clock.
                if std::fs::exists(datacomp_bevy::save::link_path(&path, 500)).unwrap() {
                    let name = dir.path().join(format!("auto{round}.dcmp"));
                    autosave(&mut linking, &name, 1, datacomp_bevy::save::MAX_LINKS);
                    frames(&mut linking, 1, &mut round, Expect::Full);
                }
                spent += frames(&mut linking, 1, &mut round, Expect::Link);
            }
            spent
        });
    });
    drop(linking);

    // Every frame a full save: another path each frame (a new chain).
    let mut full = datacomp_app(true);
    autosave(&mut full, &dir.path().join("full.dcmp"), 1, 1);
    until_full(&mut full, &mut round);
    let mut paths = 0;
    group.bench_function("frame/autosave_full", |b| {
        b.iter_custom(|iters| {
            let mut spent = Duration::ZERO;
            for _ in 0..iters {
                paths += 1;
                autosave(&mut full, &dir.path().join(format!("full{}.dcmp", paths % 2)), 1, 1);
                spent += frames(&mut full, 1, &mut round, Expect::Full);
            }
            spent
        });
    });
    drop(full);

    // The pool's side of a link: from the moment the frame ends to the file written.
    let mut task = datacomp_app(true);
    autosave(&mut task, &path.with_extension("task.dcmp"), 1, datacomp_bevy::save::MAX_LINKS);
    until_full(&mut task, &mut round);
    group.bench_function("task/link", |b| {
        b.iter_custom(|iters| {
            let mut spent = Duration::ZERO;
            for _ in 0..iters {
                change(&mut task, &mut round);
                task.update();
                let start = Instant::now();
                flush(task.world_mut());
                spent += start.elapsed();
                task.world_mut().resource_mut::<Messages<Saved>>().clear();
            }
            spent
        });
    });
    group.finish();
}

criterion_group!(autosave_frames, benches);
criterion_main!(autosave_frames);
