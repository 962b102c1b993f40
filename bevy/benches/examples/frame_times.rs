//! The frame times of issue 33's goal: a 60-frame run at 60 frames a second, 100,000 sheets,
//! 1,000 of them changed inside each frame, with an autosave every 10 frames (links, a
//! compaction every 3) and without. Goal: no frame of the run with autosave over 1.5x the
//! median frame of the run without.
//!
//! The system allocator (no dhat here: its allocator takes one lock for every allocation of
//! every thread, and a frame that waited under it for the pool's allocations was up to 17 ms
//! slower; `save_cost allocations` counts them). Prints each run's median, 2nd slowest and
//! slowest frame, the hypervisor's steal during it, and every frame's time.
//!
//! `frame_times plain` or `frame_times autosave` runs one alone, for
//! `valgrind --tool=callgrind --collect-atstart=no --toggle-collect='frame_times::frames::measured_frame'`
//! (the frames' instructions).
//!
//! Run: `cargo run --release -p datacomp-bevy-benches --example frame_times`.

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/frames.rs"]
mod frames;

use std::time::Duration;

use frames::{Run, run};

fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2]
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let which: Vec<bool> = match std::env::args().nth(1).as_deref() {
        Some("plain") => vec![false],
        Some("autosave") => vec![true],
        None => vec![false, true],
        Some(other) => return eprintln!("usage: frame_times [plain|autosave], not {other}"),
    };
    let runs: Vec<(bool, Run)> = which.into_iter().map(|a| (a, run(a, dir.path(), None))).collect();
    let plain = median(&runs[0].1.times);
    for (autosave, Run { times, building, saves, steal, .. }) in &runs {
        let mut sorted = times.clone();
        sorted.sort();
        let (at, slowest) = times.iter().enumerate().max_by_key(|(_, t)| **t).unwrap();
        // The goal's own measure: the frames over 1.5x the median without autosave.
        let over: Vec<usize> = (0..times.len()).filter(|&i| times[i] * 2 > plain * 3).collect();
        println!(
            "{}: median frame {:?}, 2nd slowest {:?}, slowest {slowest:?} (frame {at}): {:.2}x \
             the median without autosave; {} frames over 1.5x it {over:?}; hypervisor steal \
             {steal:?} ticks of 10 ms; {saves} autosaves written",
            if *autosave { "autosave every 10 frames" } else { "no autosave" },
            median(times),
            sorted[sorted.len() - 2],
            slowest.as_secs_f64() / plain.as_secs_f64(),
            over.len(),
        );
        println!("  frames (µs): {:?}", times.iter().map(Duration::as_micros).collect::<Vec<_>>());
        if let Some(worst) = building.iter().max() {
            println!(
                "  the mirror's building: {} frames before the run, slowest {worst:?}",
                building.len()
            );
        }
    }
}
