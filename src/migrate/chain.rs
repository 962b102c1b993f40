//! Composition: consecutive runs that only rename and remove (a chain `a -> b`, `b -> c`, which
//! do not commute, so do not fold) taken by an entity in one jump, so that a chain of many
//! steps costs an entity its keys, not a visit per step.
//!
//! A *segment* is two or more consecutive runs whose plans write nothing and move no key onto
//! a path that names lie under. Its *keys* are every key its plans touch and every key above a
//! path one of them moves a key to. An entity that holds exactly one of those keys can fail
//! none of the segment's checks (no other key of it is touched, stands above a new path, or
//! lies under one), and its one key goes where the steps take it, one at a time: so it is
//! moved (or removed) at once to where the segment leaves it, found from the role it enters
//! by, and the steps' reports are added up per role entered by and walked through the steps
//! once at the end. An entity that holds two or more of the keys runs the segment step by step
//! (its errors and reports are the steps' own).
//!
//! Time: the segments' roles and the ancestors of their new paths, once; an entity, its keys
//! per segment it enters.

use std::ops::Range;

use fxhash::{FxHashMap, FxHashSet};

use super::StepReport;
use super::fold::Run;
use super::plan::{NONE, Names, Plan};
use crate::blob::layout;
use crate::key::Key;
use crate::names::ROOT;

/// Runs an entity may jump (see the module's page).
pub(super) struct Segment {
    pub(super) runs: Range<u32>,
    /// The keys its plans touch, and those above its new paths.
    keys: FxHashSet<Key>,
    /// Per key its roles may leave an entity holding, the first run after the segment that
    /// touches it, or [`NONE`] (set by `Visits::new`).
    pub(super) after: FxHashMap<Key, u32>,
}

/// The segments of a migration's runs, and what an entity's jump through one needs.
pub(super) struct Chains {
    /// Per run, its segment, or [`NONE`].
    segment_of: Vec<u32>,
    pub(super) segments: Vec<Segment>,
    /// Per role of each plan (at the plan's `base`), the key its key ends as at the end of the
    /// role's segment (`None`: removed on the way), and whether a step on the way changes it.
    ends: Vec<(Option<Key>, bool)>,
    /// Per role of each plan, the entities that entered its segment by it.
    entered: Vec<u64>,
}

/// How an entity takes a segment (see [`Chains::entry`]).
pub(super) enum Entry {
    /// Its one key of the segment, `key`, ends as `end` (`None`: removed), changed on the way
    /// or not; `next` is the first run after the segment that touches it, or [`NONE`].
    Jump {
        key: Key,
        end: Option<Key>,
        changes: bool,
        next: u32,
    },
    Stepwise,
    AsAny,
}

/// Moves `key` of the entity in `words` to `end` in place (its position kept), or removes it
/// (`None`): whether that left a hole.
pub(super) fn jump(words: &mut [u32], key: Key, end: Option<Key>) -> bool {
    let keys = layout::keys_mut(words);
    let at = keys
        .iter()
        .position(|&raw| raw == key.raw())
        .expect("INVARIANT: the entity holds its segment's key");
    if let Some(end) = end {
        keys[at] = end.raw();
        return false;
    }
    layout::remove_at(words, &[at]);
    true
}

/// The plan that runs `run` whole: its folded plan, or its one plan.
pub(super) fn plan_of<'p, 'm>(plans: &'p [Plan<'m>], run: &'p Run<Plan<'m>>) -> &'p Plan<'m> {
    run.folded.as_deref().unwrap_or(&plans[run.plans.start])
}

impl Chains {
    pub(super) fn new(
        plans: &[Plan<'_>],
        runs: &[Run<Plan<'_>>],
        stamps: usize,
        names: &Names,
        may_join: impl Fn(u32) -> bool,
    ) -> Chains {
        let mut chains = Chains {
            segment_of: vec![NONE; runs.len()],
            segments: Vec::new(),
            ends: Vec::new(),
            entered: Vec::new(),
        };
        // A run may join a segment when it writes nothing and moves nothing onto a path with
        // names under it.
        let joins = |r: usize| {
            let plan = plan_of(plans, &runs[r]);
            may_join(r as u32) && plan.writes.is_empty() && plan.moves.iter().all(|m| !m.has_under)
        };
        let mut start = 0;
        while start < runs.len() {
            let mut end = start;
            while end < runs.len() && joins(end) {
                end += 1;
            }
            if end - start >= 2 {
                let s = chains.segments.len() as u32;
                chains.segment_of[start..end].fill(s);
                chains.segments.push(Segment {
                    runs: start as u32..end as u32,
                    keys: FxHashSet::default(),
                    after: FxHashMap::default(),
                });
            }
            start = end.max(start + 1);
        }
        if chains.segments.is_empty() {
            return chains;
        }
        chains.ends = vec![(None, false); stamps];
        chains.entered = vec![0; stamps];
        for segment in &mut chains.segments {
            // Backward: where a key held before each run ends at the segment's end.
            let mut ends: FxHashMap<Key, (Option<Key>, bool)> = FxHashMap::default();
            let mut leaves = Vec::new();
            for r in segment.runs.clone().rev() {
                let plan = plan_of(plans, &runs[r as usize]);
                leaves.clear();
                for (i, role) in plan.role.iter().enumerate() {
                    segment.keys.insert(role.key);
                    let now = match role.moved {
                        NONE => *role,
                        m => plan.role[plan.moves[m as usize].to as usize],
                    };
                    let changes = role.moved != NONE || role.removed;
                    let end = if now.removed {
                        (None, true)
                    } else {
                        let (end, later) =
                            ends.get(&now.key).copied().unwrap_or((Some(now.key), false));
                        (end, changes || later)
                    };
                    chains.ends[plan.base + i] = end;
                    if changes {
                        leaves.push((role.key, end));
                    }
                }
                // (All of a run's moves at once: two may swap.)
                ends.extend(leaves.iter().copied());
                for m in &plan.moves {
                    let mut above = names.tree.parent(m.to_name);
                    while above != ROOT {
                        segment.keys.insert(names.tree.key(above));
                        above = names.tree.parent(above);
                    }
                }
            }
        }
        chains
    }

    /// The segment of run `r`, or [`NONE`].
    pub(super) fn segment_of(&self, r: u32) -> u32 {
        self.segment_of.get(r as usize).copied().unwrap_or(NONE)
    }

    /// An entity that holds `keys` is visited by `run`, of segment `s`: whether it jumps the
    /// segment (counted as it enters), runs it step by step, or runs `run` as any (a stale
    /// visit: the run touches none of its keys).
    pub(super) fn entry(
        &mut self,
        s: u32,
        plans: &[Plan<'_>],
        run: &Run<Plan<'_>>,
        keys: &[u32],
    ) -> Entry {
        let segment = &self.segments[s as usize];
        let mut held =
            keys.iter().map(|&raw| Key::from_raw(raw)).filter(|k| segment.keys.contains(k));
        let (Some(key), None) = (held.next(), held.next()) else { return Entry::Stepwise };
        let plan = plan_of(plans, run);
        let Some(&role) = plan.roles.get(&key) else { return Entry::AsAny };
        let stamp = plan.base + role as usize;
        let (end, changes) = self.ends[stamp];
        if changes {
            self.entered[stamp] += 1;
        }
        let next = end.and_then(|end| segment.after.get(&end).copied()).unwrap_or(NONE);
        Entry::Jump { key, end, changes, next }
    }

    /// Adds to `reports` what the entities that jumped did, step by step: each role's entities
    /// walked through the segment's runs once.
    pub(super) fn report(
        &self,
        plans: &[Plan<'_>],
        runs: &[Run<Plan<'_>>],
        reports: &mut [StepReport],
    ) {
        for segment in &self.segments {
            let mut holding: FxHashMap<Key, u64> = FxHashMap::default();
            let mut arrived = Vec::new();
            for r in segment.runs.clone() {
                let plan = plan_of(plans, &runs[r as usize]);
                for (i, role) in plan.role.iter().enumerate() {
                    let n = self.entered[plan.base + i];
                    if n > 0 {
                        *holding.entry(role.key).or_default() += n;
                    }
                }
                arrived.clear();
                for role in &plan.role {
                    if role.moved == NONE && !role.removed {
                        continue;
                    }
                    let Some(n) = holding.remove(&role.key) else { continue };
                    let report = &mut reports[role.p as usize];
                    report.entities += n as usize;
                    let now = match role.moved {
                        NONE => *role,
                        m => {
                            report.renamed += n as usize;
                            plan.role[plan.moves[m as usize].to as usize]
                        }
                    };
                    if now.removed {
                        report.removed += n as usize;
                    } else {
                        arrived.push((now.key, n));
                    }
                }
                for &(key, n) in &arrived {
                    *holding.entry(key).or_default() += n;
                }
            }
        }
    }
}
