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

use super::fold::Run;
use super::plan::{NONE, Names, Plan};
use super::{CheckedStep, MigrateError, StepReport};

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

/// Compiles the steps that run, in order, but the copies of their repeats.
pub(super) struct Compiler<'r> {
    repeats: &'r [Repeat],
    /// Per step, the step it copies, or `None`.
    copies: Vec<Option<usize>>,
    /// Per step, the repeat whose third period it is in, or whose copies it starts.
    marks: Vec<Option<&'r Repeat>>,
    /// The names' changes before the third period being compiled.
    changes: u64,
}

impl<'r> Compiler<'r> {
    pub(super) fn new(repeats: &'r [Repeat], n: usize) -> Compiler<'r> {
        let mut copies = vec![None; n];
        let mut marks = vec![None; n];
        for repeat in repeats {
            for p in repeat.copies.clone() {
                copies[p] = Some(repeat.first + (p - repeat.copies.start) % repeat.period);
            }
            marks[repeat.first..=repeat.copies.start].fill(Some(repeat));
        }
        Compiler { repeats, copies, marks, changes: 0 }
    }

    /// The plan of `step`, at `p` among the steps that run (after every step before it), or
    /// `None` for a copy. A third period's plans run alone: each entity they visit is checked
    /// before and after them.
    pub(super) fn compile<'m>(
        &mut self,
        step: &'m CheckedStep<'m>,
        p: usize,
        names: &mut Names,
    ) -> Result<Option<Plan<'m>>, MigrateError> {
        let mark = self.marks[p];
        if let Some(repeat) = mark {
            if repeat.first == p {
                self.changes = names.changes;
            } else if repeat.copies.start == p && names.changes != self.changes {
                // The third period changed the names: its copies are compiled and run.
                self.copies[repeat.copies.clone()].fill(None);
            }
        }
        if self.copies[p].is_some() {
            return Ok(None);
        }
        let mut plan = Plan::compile(step, p, names)?;
        if mark.is_some_and(|repeat| p < repeat.copies.start) {
            plan.footprint.run_alone();
        }
        Ok(Some(plan))
    }

    /// Takes the steps of `range` out of every repeat: they ran composed (`prefix.rs`), so
    /// none is a copy and none runs watched.
    pub(super) fn skip(&mut self, range: Range<usize>) {
        for p in range {
            self.copies[p] = None;
            self.marks[p] = None;
        }
    }

    /// Whether `p` is inside a third period, past its first step: the plans of a period run
    /// together.
    pub(super) fn inside(&self, p: usize) -> bool {
        self.marks[p].is_some_and(|repeat| repeat.first < p && p < repeat.copies.start)
    }

    /// The steps compiled so far, and every step once all are.
    pub(super) fn compiled(&self) -> usize {
        self.copies.iter().filter(|copy| copy.is_none()).count()
    }

    /// Per run of `runs` (of `plans`, compiled), the last run of the third period it is in,
    /// for the repeats whose copies are not compiled, or [`NONE`].
    pub(super) fn periods(&self, plans: &[Plan<'_>], runs: &[Run<Plan<'_>>]) -> Vec<u32> {
        let mut periods = vec![NONE; runs.len()];
        let run_of = |p: usize| {
            let i = plans.binary_search_by_key(&p, |plan| plan.p).ok()?;
            Some(runs.partition_point(|run| run.plans.end <= i) as u32)
        };
        for repeat in self.repeats.iter().filter(|r| self.copies[r.copies.start].is_some()) {
            let Some(last) = run_of(repeat.copies.start - 1) else { continue };
            for p in repeat.first..repeat.copies.start {
                if let Some(r) = run_of(p) {
                    periods[r as usize] = last;
                }
            }
        }
        periods
    }

    /// Gives each copy the report of the step it copies.
    pub(super) fn report(&self, reports: &mut [StepReport]) {
        for (p, copy) in self.copies.iter().enumerate() {
            if let &Some(copy) = copy {
                let (index, to) = (reports[p].index, reports[p].to);
                reports[p] = StepReport { index, to, ..reports[copy] };
            }
        }
    }
}
