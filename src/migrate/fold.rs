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

use fxhash::{FxHashMap, FxHashSet};

use super::PathText;
use super::plan::{Names, Plan};
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
    pub(super) loose: Vec<Key>,
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
}

/// Consecutive steps that commute: their plans, and (for two or more) the plan that does all
/// of them at once.
pub(super) struct Run<'m> {
    pub(super) plans: Vec<Plan<'m>>,
    pub(super) folded: Option<Plan<'m>>,
    /// The bytes the run may add to an entity: its plans' room.
    pub(super) room: usize,
}

impl<'m> Run<'m> {
    /// Every plan of the run: its steps', and the folded one.
    pub(super) fn plans(&self) -> impl Iterator<Item = &Plan<'m>> {
        self.plans.iter().chain(&self.folded)
    }

    /// The role table of the run so far.
    fn roles(&self) -> &FxHashMap<Key, u32> {
        match &self.folded {
            Some(folded) => &folded.roles,
            None => &self.plans[0].roles,
        }
    }
}

/// The plans (of the steps that run, in order) cut into runs of steps that commute, each run
/// of two or more folded; each plan given its place in the rewrite's scan stamps. Time: the
/// plans' roles and paths' segments, and one pass over the names' nodes.
pub(super) fn fold<'m>(plans: Vec<Plan<'m>>, names: &Names) -> Vec<Run<'m>> {
    // How many nodes have each key: a key two nodes share, or a loose key any node has, may
    // be read by a check of another step through that node.
    let mut nodes: FxHashMap<Key, u8> = FxHashMap::default();
    for node in 1..=names.node_count() {
        let count = nodes.entry(names.tree.key(node)).or_default();
        *count = count.saturating_add(1);
    }
    let alone = |plan: &Plan<'_>| {
        plan.footprint.alone
            || plan.footprint.loose.iter().any(|key| nodes.contains_key(key))
            || plan.role.iter().any(|role| nodes.get(&role.key).is_some_and(|&n| n > 1))
    };
    let mut runs: Vec<Run<'m>> = Vec::new();
    // The run's paths' keys, and the keys of the paths above them.
    let (mut at, mut above) = (FxHashSet::default(), FxHashSet::default());
    let mut open = false;
    for plan in plans {
        let apart = |run: &Run<'_>| {
            let print = &plan.footprint;
            !print.at.iter().any(|key| at.contains(key) || above.contains(key))
                && !print.above.iter().any(|key| at.contains(key))
                && !plan.role.iter().any(|role| run.roles().contains_key(&role.key))
        };
        let joins = open && !alone(&plan) && runs.last().is_some_and(apart);
        if !joins {
            at.clear();
            above.clear();
            runs.push(Run { plans: Vec::new(), folded: None, room: 0 });
        }
        open = !alone(&plan);
        at.extend(plan.footprint.at.iter().copied());
        above.extend(plan.footprint.above.iter().copied());
        let run = runs.last_mut().expect("INVARIANT: a run was pushed");
        if joins {
            let first = &run.plans[0];
            run.folded.get_or_insert_with(|| first.clone()).absorb(&plan);
        }
        run.room += plan.room;
        run.plans.push(plan);
    }
    let mut base = 0;
    for run in &mut runs {
        for plan in run.plans.iter_mut().chain(&mut run.folded) {
            plan.base = base;
            base += plan.role.len();
        }
    }
    runs
}
