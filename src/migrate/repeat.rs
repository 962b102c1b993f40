//! Repeats: a run of rename-only steps that repeats with period two (a subtree renamed back
//! and forth, `x -> y`, `y -> x`, 10,000 times) costs an entity a visit per step, and its
//! compile the subtree per step. Past its first three pairs, such a run is not compiled: each
//! step after the third pair is a copy of the third pair's step of its parity, run by no
//! entity, its report that step's.
//!
//! Why that is exact, checked rather than argued:
//! - a step's plan is a function of the step and the names it is compiled against; the third
//!   pair is compiled without changing the names ([`Names::changes`](super::plan::Names)
//!   unchanged: no node, no name, no gone mark made), so each later pair, compiled, would find
//!   the same names and make the same plans, and change the names no more;
//! - the third pair's steps run alone (no fold, no composed chain), and every entity they visit
//!   is the same (its keys, in order: renames change nothing else) after the pair as before
//!   it: so each later pair finds it as the third pair did, and does to it (changes, reports,
//!   no error) what the third pair did. An entity that comes out of the third pair changed
//!   makes the migration run again without repeats, every step compiled and run.
//!
//! Time: the runs' steps compared once; then three pairs of a repeat cost what steps cost.

use std::ops::Range;

use super::CheckedStep;

/// A run of steps that repeats with period two, as it runs: its third pair (the first of its
/// two steps, by position among the steps that run) and the steps after it that copy it.
pub(super) struct Repeat {
    pub(super) pair: usize,
    pub(super) copies: Range<usize>,
}

/// Pairs compiled and run before the copies: the first two may add names (the second names
/// the images of the first's), the third checks that they added the last.
const PAIRS: usize = 3;

/// The repeats of `running`: maximal runs of rename-only steps, each the step two before it,
/// with at least two copies past their first three pairs. An even number of copies: the step
/// after them (a run of odd length ends with one) runs as compiled.
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
        let mut end = start;
        while end < running.len()
            && renames_only(running[end])
            && (end < start + 2 || same(running[end], running[end - 2]))
        {
            end += 1;
        }
        let len = end - start;
        if len >= 2 * PAIRS + 2 {
            let first = start + 2 * PAIRS;
            let copies = (len - 2 * PAIRS) / 2 * 2;
            repeats.push(Repeat { pair: first - 2, copies: first..first + copies });
        }
        start = if len >= 2 * PAIRS + 2 {
            end
        } else if len >= 2 {
            // (The last two steps of a run that did not repeat may start one.)
            end - 1
        } else {
            start + 1
        };
    }
    repeats
}

/// Per step of the `n` that run, the step it copies, or `None`.
pub(super) fn copies(repeats: &[Repeat], n: usize) -> Vec<Option<usize>> {
    let mut copies = vec![None; n];
    for repeat in repeats {
        for p in repeat.copies.clone() {
            copies[p] = Some(repeat.pair + (p - repeat.copies.start) % 2);
        }
    }
    copies
}
