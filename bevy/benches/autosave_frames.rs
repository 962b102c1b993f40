//! The frames of a game that autosaves every 10 frames, 100,000 sheets and 1,000 of them
//! changed inside each frame (by a system of its `Update`), beside the same frames without
//! autosave. Goal (issue 33): no frame of a 60-frame run with an autosave every 10 frames
//! over 1.5x the median frame of the same run without.
//!
//! Every frame follows the same idle time ([`IDLE`], 60 frames a second): a game paced by
//! its display leaves time between its frames, and the autosave's copy is made in it.
//!
//! - `frame/no_autosave`: a frame of an app without autosave (the median's frame).
//! - `frame/autosave`: the frame an autosave is due in: it lends the store to the plugin's
//!   copying thread at its end (the copy of the 10 frames' changes is made after it).
//! - `frame/after_autosave`: the frame after, which takes the store back at its start
//!   (the copy done in the idle time before it).
//! - `between/copy_and_link`: the work after an autosave's frame, waited for from its end:
//!   the copy of the 10,000 sheets changed since the last (on the copying thread), the link's
//!   delta, crc32 and file write (on the save thread), every third link its compaction.
//!
//! Run: `cargo bench -p datacomp-bevy-benches --bench autosave_frames` (a quiet machine).
//! `cargo run --release -p datacomp-bevy-benches --example frame_times` prints whole 60-frame
//! runs (at 60 frames a second, and `--uncapped`).

mod common;
#[path = "common/frames.rs"]
mod frames;

use std::time::{Duration, Instant};

use bevy_app::App;
use bevy_ecs::message::Messages;
use common::datacomp_app;
use criterion::{Criterion, criterion_group, criterion_main};
use datacomp_bevy::{Autosave, Every, SaveKind, Saved, flush};

/// The idle time before every frame: a game at 60 frames a second (whose frames here take
/// ~0.5 ms). With 2 ms the save thread fell behind (a link and every third a compaction,
/// ~30 ms of its work, every 10 frames): autosaves then wait, and so do their copies.
const IDLE: Duration = Duration::from_millis(16);

/// Frames between autosaves.
const EVERY: u32 = 10;

/// One frame after [`IDLE`], timed.
fn frame(app: &mut App) -> Duration {
    std::thread::sleep(IDLE);
    let start = Instant::now();
    app.update();
    start.elapsed()
}

/// An app with 100,000 sheets and the game's system; with an autosave every [`EVERY`] frames
/// (a compaction every 3 links), its mirror built and its first full save written, the next
/// frame the first of ten whose tenth is due.
fn game(dir: Option<&std::path::Path>) -> App {
    let mut app = datacomp_app(true);
    frames::with_game(&mut app);
    let Some(dir) = dir else { return app };
    let path = dir.join("auto.dcmp");
    app.insert_resource(Autosave { every: Every::Frames(EVERY), path, compact_every: 3 });
    loop {
        app.update();
        flush(app.world_mut());
        let saved: Vec<Saved> = app.world_mut().resource_mut::<Messages<Saved>>().drain().collect();
        if let [saved] = &saved[..] {
            assert!(saved.kind == SaveKind::AutosaveFull && saved.result.is_ok(), "{saved:?}");
            return app;
        }
    }
}

/// Ten frames (one autosave), `timed` (0 to 9) of them timed.
fn ten(app: &mut App, timed: usize) -> Duration {
    let mut spent = Duration::ZERO;
    for i in 0..EVERY as usize {
        let time = frame(app);
        if i == timed {
            spent += time;
        }
    }
    let saved = app.world_mut().resource_mut::<Messages<Saved>>();
    assert!(saved.iter_current_update_messages().all(|s| s.result.is_ok()));
    spent
}

fn benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("autosave_frames/100k_sheets");
    group.sample_size(20).measurement_time(Duration::from_secs(15));

    let mut plain = game(None);
    group.bench_function("frame/no_autosave", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| frame(&mut plain)).sum());
    });
    drop(plain);

    // Ten frames an iteration: the tenth is due, the first follows the last one due.
    let mut autosaving = game(Some(dir.path()));
    group.bench_function("frame/autosave", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| ten(&mut autosaving, 9)).sum());
    });
    group.bench_function("frame/after_autosave", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| ten(&mut autosaving, 0)).sum());
    });
    group.bench_function("between/copy_and_link", |b| {
        b.iter_custom(|iters| {
            let mut spent = Duration::ZERO;
            for _ in 0..iters {
                for _ in 0..EVERY - 1 {
                    frame(&mut autosaving);
                }
                // The tenth is due: its copy and link, waited for from its end.
                std::thread::sleep(IDLE);
                autosaving.update();
                let start = Instant::now();
                flush(autosaving.world_mut());
                spent += start.elapsed();
                autosaving.world_mut().resource_mut::<Messages<Saved>>().clear();
            }
            spent
        });
    });
    group.finish();
}

criterion_group!(autosave_frames, benches);
criterion_main!(autosave_frames);
