//! Saves and loads of 100,000 character sheets inside a Bevy `App`, beside what a Bevy user
//! would otherwise do: the same data as reflected components, saved as a `DynamicWorld` (0.19's
//! `DynamicScene`) to RON and loaded back with its deserializer. Both write through the same
//! atomic write (temp file, fsync, rename), so the files' formats are what differs.
//!
//! - `save/100k_sheets`: datacomp's `SaveGame` (the frame that asks, then the write on the I/O
//!   pool, waited for) beside `DynamicWorld` to RON.
//! - `load/100k_sheets`: `LoadGame` into a fresh app (read, check, swap, one entity spawned per
//!   sheet) beside RON to `DynamicWorld` written into a fresh world.
//! - `save_frame/100k_sheets`: the frame that asks for a save (it lends the store for its
//!   copy, made between frames) and the next one at 60 frames a second (it takes the store
//!   back), beside an empty frame (back to back, and after 1/60 s idle) and a memcpy of the save's bytes into a buffer that exists
//!   (`memcpy_warm`) and a new one (`memcpy_fresh`). Goal: at most 1.5x a memcpy.
//!
//! Run: `cargo bench -p datacomp-bevy-benches --bench save_load` (a quiet machine; the RON peer takes
//! seconds an iteration).

mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use bevy_ecs::message::Messages;
use common::{datacomp_app, datacomp_load, datacomp_save, reflected_app, ron_load, ron_save};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use datacomp_bevy::{SaveGame, Saved, flush};

fn benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let (ours, theirs) = (dir.path().join("world.dcmp"), dir.path().join("world.scn.ron"));
    let mut app = datacomp_app(true);
    let mut peer = reflected_app(true);
    // The files the loads read, and their sizes.
    datacomp_save(&mut app, &ours);
    ron_save(&mut peer, &theirs);
    let sizes = [&ours, &theirs].map(|p| std::fs::metadata(p).unwrap().len());
    eprintln!("100k sheets: datacomp save {} bytes, DynamicWorld RON {} bytes", sizes[0], sizes[1]);

    let mut group = c.benchmark_group("save/100k_sheets");
    group.sample_size(10).measurement_time(Duration::from_secs(20));
    group.bench_function("datacomp", |b| b.iter(|| datacomp_save(&mut app, &ours)));
    group.bench_function("dynamic_world_ron", |b| b.iter(|| ron_save(&mut peer, &theirs)));
    group.finish();

    let mut group = c.benchmark_group("load/100k_sheets");
    group.sample_size(10).measurement_time(Duration::from_secs(20));
    group.bench_function("datacomp", |b| {
        b.iter_batched(
            || datacomp_app(false),
            |mut app| {
                datacomp_load(&mut app, &ours);
                app
            },
            BatchSize::PerIteration,
        );
    });
    group.bench_function("dynamic_world_ron", |b| {
        b.iter_batched(
            || reflected_app(false),
            |mut app| {
                ron_load(&mut app, &theirs);
                app
            },
            BatchSize::PerIteration,
        );
    });
    group.finish();

    // The frame that asks for a save, beside a memcpy of the save's bytes.
    let bytes = std::fs::read(&ours).unwrap();
    let mut warm = vec![0u8; bytes.len()];
    let mut group = c.benchmark_group("save_frame/100k_sheets");
    // The frame that asks, and the next of a game at 60 frames a second, which takes the
    // store back from the copy made in the time between.
    for (name, next) in [("datacomp_request_frame", false), ("datacomp_next_frame", true)] {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut spent = Duration::ZERO;
                for _ in 0..iters {
                    app.world_mut().write_message(SaveGame { path: ours.clone() });
                    if next {
                        app.update();
                        std::thread::sleep(Duration::from_secs(1) / 60);
                    }
                    let start = Instant::now();
                    app.update();
                    spent += start.elapsed();
                    flush(app.world_mut()); // the write, off the clock
                    app.world_mut().resource_mut::<Messages<Saved>>().clear();
                }
                spent
            });
        });
    }
    group.bench_function("empty_frame", |b| b.iter(|| app.update()));
    // The same after 1/60 s idle: a frame after an idle core is slower (caches, clocks).
    group.bench_function("empty_frame_after_idle", |b| {
        b.iter_custom(|iters| {
            let mut spent = Duration::ZERO;
            for _ in 0..iters {
                std::thread::sleep(Duration::from_secs(1) / 60);
                let start = Instant::now();
                app.update();
                spent += start.elapsed();
            }
            spent
        });
    });
    group.bench_function("memcpy_warm", |b| {
        b.iter(|| warm.copy_from_slice(black_box(&bytes)));
    });
    group.bench_function("memcpy_fresh", |b| b.iter(|| black_box(black_box(&bytes).to_vec())));
    group.finish();
}

criterion_group!(save_load, benches);
criterion_main!(save_load);
