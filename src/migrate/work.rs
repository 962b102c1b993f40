//! The work counters: units of work done by a migration's compile and rewrite (roles made,
//! keys and roles visited, words moved, nodes walked), counted in tests that hold a migration
//! to its bound (`run.rs`: `folded_steps_cost_the_keys_not_the_steps` and others); nothing
//! outside tests.

#[cfg(test)]
use std::cell::Cell;

#[cfg(test)]
thread_local! {
    /// The work on this thread: see [`work_done`].
    pub(super) static WORK: Cell<u64> = const { Cell::new(0) };
    /// Runs of renames composed on this thread (`prefix.rs`), those (times 2^24) that
    /// followed an entity whose keys moved apart, and those (times 2^48) with defaults.
    pub(super) static COMPOSED: Cell<u64> = const { Cell::new(0) };
}

/// Counts `units` of work.
#[cfg(test)]
pub(super) fn work_done(units: usize) {
    WORK.with(|work| work.set(work.get() + units as u64));
}

#[cfg(not(test))]
#[inline(always)]
pub(super) fn work_done(_units: usize) {}
