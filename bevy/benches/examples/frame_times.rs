//! The frame times of issue 33's goal: a 60-frame run at 60 frames a second, 100,000 sheets,
//! 1,000 of them changed inside each frame, with an autosave every 10 frames (links, a
//! compaction every 3) and without. Goal: no frame of the run with autosave over 1.5x the
//! median frame of the run without.
//!
//! A virtual machine's frames stall now and then whatever the game does (here the run
//! without autosave passes 1.5x its own median in about half its runs), so the pair of runs
//! is made `REPEATS` times, alternating, and the goal is read twice: on each run's frames as
//! they came (how many passed 1.5x, beside how many of the plain run's own did), and on the
//! median of each frame's time over the runs (the frame after a link is the same frame in
//! every run: what autosave costs shows there, a stall of the machine does not).
//!
//! The system allocator (no dhat here: its allocator takes one lock for every allocation of
//! every thread, and a frame that waited under it for the pool's allocations was up to 17 ms
//! slower; `save_cost allocations` counts them). For each run: its median, 2nd slowest and
//! slowest frame, the hypervisor's steal during it; with `-v` every frame's time and the save
//! thread's time on a CPU during it and before it.
//!
//! `frame_times plain` or `frame_times autosave` makes one run alone, for
//! `valgrind --tool=callgrind --collect-atstart=no --toggle-collect='frame_times::frames::measured_frame'`
//! (the frames' instructions).
//!
//! `--uncapped`: the frames follow each other with no time between (a game that is not paced,
//! whose next frame takes the store back while the autosave's copy may still run).
//!
//! Run: `cargo run --release -p datacomp-bevy-benches --example frame_times [-- -v]`.

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/frames.rs"]
mod frames;

use std::time::Duration;

use frames::{Run, WARM_FRAMES, run};

/// Pairs of runs (without autosave, with it).
const REPEATS: usize = 7;

fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2]
}

/// The frames over 1.5x `median`.
fn over(times: &[Duration], median: Duration) -> Vec<usize> {
    (0..times.len()).filter(|&i| times[i] * 2 > median * 3).collect()
}

fn micros(times: &[Duration]) -> Vec<u128> {
    times.iter().map(Duration::as_micros).collect()
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let verbose = args.iter().any(|a| a == "-v");
    let uncapped = args.iter().any(|a| a == "--uncapped");
    let (which, repeats): (Vec<bool>, usize) =
        match args.iter().find(|a| !a.starts_with('-')).map(String::as_str) {
            Some("plain") => (vec![false], 1),
            Some("autosave") => (vec![true], 1),
            None => (vec![false, true], REPEATS),
            Some(other) => {
                return eprintln!(
                    "usage: frame_times [plain|autosave] [-v] [--uncapped], not {other}"
                );
            }
        };
    let mut runs: Vec<(bool, Run)> = Vec::new();
    for _ in 0..repeats {
        for &autosave in &which {
            runs.push((autosave, run(autosave, dir.path(), None, uncapped)));
        }
    }
    for (autosave, Run { times, building, saves, steal, traces, .. }) in &runs {
        let (warm, times) = times.split_at(WARM_FRAMES);
        let own = median(times);
        let mut sorted = times.to_vec();
        sorted.sort();
        let (at, slowest) = times.iter().enumerate().max_by_key(|(_, t)| **t).unwrap();
        println!(
            "{}: median {own:?}, 2nd slowest {:?}, slowest {slowest:?} (frame {at}); frames over \
             1.5x its median {:?}; steal {steal:?} ticks of 10 ms; {saves} autosaves; the \
             {WARM_FRAMES} frames before: slowest {:?}",
            if *autosave { "autosave" } else { "plain   " },
            sorted[sorted.len() - 2],
            over(times, own),
            warm.iter().max().unwrap(),
        );
        if verbose {
            let all = warm.iter().chain(times);
            for (i, (time, t)) in all.zip(traces).enumerate() {
                println!(
                    "  frame {:3}: {:5} µs; main thread {:5} µs on a CPU, {:3} page faults; \
                     compute threads {:4} µs; save thread {:5} µs during, {:5} µs before",
                    i as isize - WARM_FRAMES as isize,
                    time.as_micros(),
                    t.main_cpu,
                    t.main_faults,
                    t.compute_cpu,
                    t.save_during,
                    t.save_before
                );
            }
            if let Some(worst) = building.iter().max() {
                println!("  the mirror built in {} frames, slowest {worst:?}", building.len());
            }
        }
    }
    // Each frame's median over the runs of each side.
    let profile = |autosave: bool| -> Vec<Duration> {
        let side: Vec<&Run> = runs.iter().filter(|r| r.0 == autosave).map(|r| &r.1).collect();
        (WARM_FRAMES..side.first().map_or(0, |r| r.times.len()))
            .map(|i| median(&side.iter().map(|r| r.times[i]).collect::<Vec<_>>()))
            .collect()
    };
    if which.len() == 2 {
        let (plain, auto) = (profile(false), profile(true));
        let base = median(&plain);
        let pooled: Vec<Duration> =
            runs.iter().filter(|r| !r.0).flat_map(|r| r.1.times[WARM_FRAMES..].to_vec()).collect();
        let pooled = median(&pooled);
        let auto_pooled: Vec<Duration> =
            runs.iter().filter(|r| r.0).flat_map(|r| r.1.times[WARM_FRAMES..].to_vec()).collect();
        let auto_pooled = median(&auto_pooled);
        let raw = |autosave: bool| -> Vec<usize> {
            let measured = |r: &Run| over(&r.times[WARM_FRAMES..], pooled).len();
            runs.iter().filter(|r| r.0 == autosave).map(|r| measured(&r.1)).collect()
        };
        let slowest = auto.iter().max().unwrap();
        println!(
            "over {repeats} runs each: median frame {pooled:?} plain, {auto_pooled:?} autosave \
             ({:.2}x); frames over 1.5x the plain one, by run: plain {:?}, autosave {:?}",
            auto_pooled.as_secs_f64() / pooled.as_secs_f64(),
            raw(false),
            raw(true)
        );
        println!(
            "each frame's median over the runs: plain median {base:?}, slowest {:?}; autosave \
             median {:?}, slowest {slowest:?} = {:.2}x the plain median; frames over 1.5x: {:?}",
            plain.iter().max().unwrap(),
            median(&auto),
            slowest.as_secs_f64() / base.as_secs_f64(),
            over(&auto, base),
        );
        println!("  plain (µs):    {:?}", micros(&plain));
        println!("  autosave (µs): {:?}", micros(&auto));
    }
}
