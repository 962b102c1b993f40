//! Repeats: a run of rename-only steps that repeats with a short period (a subtree renamed
//! back and forth, `x -> y`, `y -> x`, 10,000 times, or round a cycle `x -> y -> z -> x`)
//! costs an entity a visit per step, and its compile the subtree per step. Past its first
//! three periods, such a run is not compiled: each step after the third period is a copy of
//! the third period's step in its place, run by no entity, its report that step's.
//!
//! Why that is exact, checked rather than argued:
//! - a step's plan is a function of the step and the names it is compiled against; the third
//!   period is compiled without changing the names ([`Names::changes`](super::plan::Names)
//!   unchanged: no node, no name, no gone mark made), so each later period, compiled, would
//!   find the same names and make the same plans, and change the names no more;
//! - the third period's steps run alone (no fold, no composed chain), and every entity they
//!   visit is the same (its keys, in order: renames change nothing else) after the period as
//!   before it: so each later period finds it as the third did, and does to it (changes,
//!   reports, no error) what the third did. An entity that comes out of the third period
//!   changed makes the migration run again without repeats, every step compiled and run.
//!
//! Time: the steps compared a few times each; then three periods of a repeat cost what steps
//! cost, its copies a report each.

use std::ops::Range;

use super::CheckedStep;

/// A run of steps that repeats, as it runs: the first step of its third period (by position
/// among the steps that run), the period, and the steps after that period that copy it.
pub(super) struct Repeat {
    pub(super) first: usize,
    pub(super) period: usize,
    pub(super) copies: Range<usize>,
}

/// Periods compiled and run before the copies: the first two may add names (the second names
/// the images of the first's), the third checks that they added the last.
const PERIODS: usize = 3;

/// The longest period looked for: a subtree moved round a cycle of four paths.
const MOST: usize = 4;

/// The repeats of `running`: maximal runs of rename-only steps, each the step a period before
/// it, with at least one period of copies past their first three. Whole periods are copied:
/// the steps after them run as compiled. Time: each step compared with at most `MOST` x
/// (`PERIODS` + 1) x `MOST` others, a run's steps once more.
pub(super) fn find(running: &[&CheckedStep<'_>]) -> Vec<Repeat> {
    let renames_only = |step: &CheckedStep<'_>| step.removes.is_empty() && step.writes.is_empty();
    let same = |a: &CheckedStep<'_>, b: &CheckedStep<'_>| {
        a.renames.len() == b.renames.len()
            && a.renames
                .iter()
                .zip(&b.renames)
                .all(|((af, at), (bf, bt))| af.given == bf.given && at.given == bt.given)
    };
    let mut repeats = Vec::new();
    let mut start = 0;
    while start < running.len() {
        // Per period, how far from `start` the steps repeat with it; the one that copies most.
        let mut best: Option<Repeat> = None;
        for period in 1..=MOST {
            let mut end = start;
            while end < running.len()
                && renames_only(running[end])
                && (end < start + period || same(running[end], running[end - period]))
            {
                end += 1;
            }
            let first = start + (PERIODS - 1) * period;
            let many = (end - start).saturating_sub(PERIODS * period) / period * period;
            if many > 0 && best.as_ref().is_none_or(|best| many > best.copies.len()) {
                let copies = first + period..first + period + many;
                best = Some(Repeat { first, period, copies });
            }
        }
        match best {
            Some(repeat) => {
                start = repeat.copies.end;
                repeats.push(repeat);
            }
            None => start += 1,
        }
    }
    repeats
}

/// Per step of the `n` that run, the step it copies, or `None`.
pub(super) fn copies(repeats: &[Repeat], n: usize) -> Vec<Option<usize>> {
    let mut copies = vec![None; n];
    for repeat in repeats {
        for p in repeat.copies.clone() {
            copies[p] = Some(repeat.first + (p - repeat.copies.start) % repeat.period);
        }
    }
    copies
}
