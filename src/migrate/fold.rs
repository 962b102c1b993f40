//! Folding: consecutive steps that commute run as one plan, so that a migration of many small
//! steps rewrites each entity once per run of them, not once per step.
//!
//! Two steps commute when they are apart: no path of one is a path of the other, or above or
//! under one (so neither moves, removes or writes a key the other touches, nor a key above or
//! under a path the other writes, which its checks read), and no key of one is a key of the
//! other. Applied in one pass, each step of a run then sees the entity, as far as its keys
//! and checks can tell, as it would after the steps before it; a run's report and errors are
//! the steps' own. Steps that do not commute (a rename, then a set of the new path; a chain
//! `a -> b`, `b -> c`) start a new run, and keep their order.
//!
//! Paths are compared by the keys of their prefixes, so two paths of one hash (a 32-bit
//! coincidence) count as one: a run ends early, never late. A step with a raw key (`#0000002a`,
//! a key with no path), or a key whose hash a node of another path of the names shares, runs
//! alone.
//!
//! Built on what a plan says of itself ([`Fold`]): this file knows nothing else of plans.

use std::ops::Range;

use fxhash::{FxHashMap, FxHashSet};

use super::PathText;
use crate::key::Key;

/// The paths a step touches, as keys, for [`fold`].
#[derive(Clone, Default)]
pub(super) struct Footprint {
    /// The key of each path.
    at: Vec<Key>,
    /// The keys of the paths above each path (its proper prefixes).
    above: Vec<Key>,
    /// Keys of paths the names have no node for (a rename or removal of an unknown path), which
    /// stand for whatever key an entity holds with their hash.
    loose: Vec<Key>,
    /// A raw key among its paths.
    alone: bool,
}

impl Footprint {
    /// Adds `path` (and its prefixes).
    pub(super) fn add(&mut self, path: &PathText<'_>) {
        if path.raw.is_some() {
            self.alone = true;
            return;
        }
        let mut key: Option<Key> = None;
        for segment in path.segments() {
            if let Some(prefix) = key {
                self.above.push(prefix);
            }
            key = Some(key.map_or_else(|| Key::new(&segment), |prefix| prefix.child(&segment)));
        }
        self.at.extend(key);
    }

    /// Makes its step run alone (`repeat.rs`).
    pub(super) fn run_alone(&mut self) {
        self.alone = true;
    }

    /// Adds the key of a path the names have no node for.
    pub(super) fn add_loose(&mut self, key: Key) {
        self.loose.push(key);
    }
}

/// What [`fold`] needs of a step's plan.
pub(super) trait Fold: Clone {
    /// The paths it touches; taken (emptied) once the plan is placed in a run.
    fn footprint(&mut self) -> &mut Footprint;
    /// The keys it touches.
    fn keys(&self) -> impl Iterator<Item = Key>;
    /// Whether it touches `key`.
    fn touches(&self, key: Key) -> bool;
    /// Folds `next`, the plan of the step after its last, apart from it, into it.
    fn absorb(&mut self, next: &Self);
    /// The bytes it may add to an entity.
    fn room(&self) -> usize;
}

/// Consecutive steps that commute: their plans (by position), and for two or more the plan
/// that does all of them at once.
pub(super) struct Run<P> {
    pub(super) plans: Range<usize>,
    pub(super) folded: Option<Box<P>>,
    /// The bytes the run may add to an entity: its plans' room.
    pub(super) room: usize,
}

/// The plans (of the steps that run, in order) cut into runs of steps that commute, each run
/// of two or more folded. `node_keys` is the key of every node of the names (the steps' names
/// among them). Time: the plans' keys and paths' segments, and the nodes.
pub(super) fn fold<P: Fold>(plans: &mut [P], node_keys: impl Iterator<Item = Key>) -> Vec<Run<P>> {
    // How many nodes have each key: a key two nodes share, or a loose key any node has, may
    // be read by a check of another step through that node.
    let mut nodes: FxHashMap<Key, u8> = FxHashMap::default();
    for key in node_keys {
        let count = nodes.entry(key).or_default();
        *count = count.saturating_add(1);
    }
    let alone = |print: &Footprint, plan: &P| {
        print.alone
            || print.loose.iter().any(|key| nodes.contains_key(key))
            || plan.keys().any(|key| nodes.get(&key).is_some_and(|&n| n > 1))
    };
    let mut runs: Vec<Run<P>> = Vec::new();
    // The run's paths' keys, and the keys of the paths above them.
    let (mut at, mut above) = (FxHashSet::default(), FxHashSet::default());
    // Whether the run may take more plans, once asked (a plan that runs alone closes its run),
    // and the paths of its first plan until then: steps that overlap, the common case, never
    // ask, so a plan's keys are looked at only when it could fold.
    let (mut open, mut first_print): (Option<bool>, Footprint) = (None, Footprint::default());
    for p in 0..plans.len() {
        let print = std::mem::take(plans[p].footprint());
        let plan = &plans[p];
        let apart = runs.last().is_some_and(|run| {
            let first = &plans[run.plans.start];
            let held = |key: Key| match &run.folded {
                Some(folded) => folded.touches(key),
                None => first.touches(key),
            };
            !print.at.iter().any(|key| at.contains(key) || above.contains(key))
                && !print.above.iter().any(|key| at.contains(key))
                && !plan.keys().any(held)
        });
        let joins = apart
            && *open.get_or_insert_with(|| {
                let run = runs.last().expect("INVARIANT: apart from a run");
                !alone(&first_print, &plans[run.plans.start])
            })
            && !alone(&print, plan);
        if !joins {
            at.clear();
            above.clear();
            runs.push(Run { plans: p..p, folded: None, room: 0 });
        }
        at.extend(print.at.iter().copied());
        above.extend(print.above.iter().copied());
        if !joins {
            (open, first_print) = (None, print);
        }
        let run = runs.last_mut().expect("INVARIANT: a run was pushed");
        if joins {
            let first = &plans[run.plans.start];
            run.folded.get_or_insert_with(|| Box::new(first.clone())).absorb(&plans[p]);
        }
        run.room += plans[p].room();
        run.plans.end = p + 1;
    }
    runs
}
