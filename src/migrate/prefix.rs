//! Prefix moves: a run of steps that rename (two or more of them), and of steps that set one
//! default between them, composed on a model of the key tree in which a rename of a subtree
//! re-points one node (its parent and last segment), never its subtree; each entity's keys are
//! then mapped to their final names once, as it is written, and the defaults' keys appended.
//!
//! The model starts from the names as the steps before the run left them, the nodes the
//! entities hold counted (per node, and per subtree). A rename finds its source node by its
//! path as the model has it at its step, takes it from its parent, and hangs it at its new
//! path, making the nodes of that path that the model lacks (a node only passed through is
//! never named in the store: the names recorded are the final ones). A default finds (or
//! makes) its node the same way at its step, and every entity holds a key there from then on,
//! moved by the later renames with the node: it ends at the name its node ends at. Per step,
//! the keys it renames are the count under its source; the entities it changes, the entities
//! counted at the node that is each one's lowest moved node (see below), or, for a default,
//! the entities that lacked its key.
//!
//! A run is composed only where no entity can fail on the way and every entity's reports come
//! out of the counts; else [`compose`] returns `None` and its steps are compiled and run one
//! by one as any others (`plan.rs`, `run.rs`), which raise the step's own errors:
//! - every key an entity holds is named (a key with no name moves only by its hash);
//! - no source is a raw key;
//! - a rename's new path holds no key of any entity (no node there with a key counted under
//!   it: one whose subtree holds none is set aside) and runs through no held key (a value); a
//!   default's path has no held key under it or above it, and no entity holds its key before
//!   the run;
//! - no name would pass 125 segments (per node, a height from above), no entity 4 GiB;
//! - each entity's moved keys share their lowest moved node above them (moved together: it is
//!   changed by a step exactly when that node is under the step's source), the defaults' keys
//!   too (from their step on); or, for renames only, following the entity on its own costs
//!   under half the keys the steps move;
//! - the final names collide with no other name.
//!
//! Time: per step, the nodes on its paths; once per run, the nodes of the names and of the
//! entities' keys, and each default once per entity (the key it adds); no step walks a
//! subtree.

use std::borrow::Cow;

use fxhash::{FxHashMap, FxHashSet};

use super::plan::{NONE, Names, room_of};
use super::work::work_done;
use super::{CheckedStep, MigrateError, StepReport};
use crate::blob::layout;
use crate::key::{Key, KeyError, MAX_PATH_SEGMENTS};
use crate::names::ROOT;
use crate::store::Store;
use crate::value::OwnedValue;

/// The end of a node set aside (see [`compose`]).
const ASIDE: u32 = NONE - 1;

/// Whether `step` only sets one default: it may join a run [`compose`] takes.
pub(super) fn one_default(step: &CheckedStep<'_>) -> bool {
    step.removes.is_empty()
        && step.renames.is_empty()
        && step.writes.len() == 1
        && step.writes[0].default
}

/// Whether `step` only renames, by paths: it may join a run [`compose`] takes.
pub(super) fn renames_only(step: &CheckedStep<'_>) -> bool {
    step.removes.is_empty()
        && step.writes.is_empty()
        && !step.renames.is_empty()
        && step.renames.iter().all(|(from, _)| from.raw.is_none())
}

/// The model of the key tree: the names' nodes (by number) and the nodes the run made
/// (numbered after them).
struct Model<'n> {
    names: &'n Names,
    /// Each node's parent now ([`NONE`]: set aside).
    up: Vec<u32>,
    /// Whether a node of the names was re-pointed (its place in the names is no more its own).
    moved: Vec<bool>,
    /// The segments of nodes re-pointed or made.
    segment: FxHashMap<u32, String>,
    /// The children of re-pointed and made nodes, by (parent, segment).
    kids: FxHashMap<(u32, String), u32>,
    /// Keys held at each node, and under it (itself too).
    held: Vec<u64>,
    sum: Vec<u64>,
    /// Entities counted at each node, and under it.
    ents: Vec<u64>,
    /// From above, how many segments below each node the deepest node under it lies.
    height: Vec<u32>,
    /// Per entity whose moved keys lie under two or more lowest moved nodes, its keys under
    /// each node above them; and the last step that counted it.
    split: Vec<FxHashMap<u32, u64>>,
    counted: Vec<usize>,
    steps: usize,
    /// The entities migrated, each of which a default gives its key where it lacks it.
    entities: u64,
    /// Per node, the last step (from 1) that re-pointed it, or 0.
    last: Vec<usize>,
    /// Per default run: its step, its node, and the nodes above it then.
    defaults: Vec<(usize, u32, Vec<u32>)>,
    /// Per step, the nodes at which entities are counted from it on (their first moved key a
    /// default's).
    joins: FxHashMap<usize, Vec<u32>>,
}

impl<'n> Model<'n> {
    fn new(
        names: &'n Names,
        (held, ents, entities): (&[u64], &[u64], u64),
        split: &[Vec<(u32, u64)>],
        joins: FxHashMap<usize, Vec<u32>>,
    ) -> Model<'n> {
        let len = names.node_count() as usize + 1;
        let tree = &names.tree;
        let mut up: Vec<u32> =
            (0..len as u32).map(|n| if n == ROOT { NONE } else { tree.parent(n) }).collect();
        up[ROOT as usize] = NONE;
        let (mut sum, mut ents, mut height) = (held.to_vec(), ents.to_vec(), vec![0u32; len]);
        // A parent's number is below its children's.
        for node in (1..len).rev() {
            let parent = up[node] as usize;
            sum[parent] += sum[node];
            ents[parent] += ents[node];
            height[parent] = height[parent].max(height[node] + 1);
        }
        work_done(len);
        let mut sums = Vec::with_capacity(split.len());
        for anchors in split {
            let mut sum: FxHashMap<u32, u64> = FxHashMap::default();
            for &(anchor, count) in anchors {
                let mut above = anchor;
                while above != NONE {
                    work_done(1);
                    *sum.entry(above).or_default() += count;
                    above = up[above as usize];
                }
            }
            sums.push(sum);
        }
        Model {
            names,
            split: sums,
            counted: vec![usize::MAX; split.len()],
            steps: 0,
            entities,
            last: vec![0; len],
            defaults: Vec::new(),
            joins,
            up,
            moved: vec![false; len],
            segment: FxHashMap::default(),
            kids: FxHashMap::default(),
            held: held.to_vec(),
            sum,
            ents,
            height,
        }
    }

    fn segment(&self, node: u32) -> &str {
        match self.segment.get(&node) {
            Some(segment) => segment,
            None => self.names.tree.segment(node),
        }
    }

    fn is_name_node(&self, node: u32) -> bool {
        node <= self.names.node_count()
    }

    /// The child of `parent` with `segment`, as the model has it now.
    fn child(&self, parent: u32, segment: &str) -> Option<u32> {
        if let Some(&kid) = self.kids.get(&(parent, segment.to_owned())) {
            return Some(kid);
        }
        if !self.is_name_node(parent) {
            return None;
        }
        let kid = self.names.tree.child(parent, segment)?;
        (!self.moved[kid as usize]).then_some(kid)
    }

    fn find<'s>(&self, segments: impl Iterator<Item = Cow<'s, str>>) -> Option<u32> {
        let mut node = ROOT;
        for segment in segments {
            node = self.child(node, &segment)?;
        }
        Some(node)
    }

    /// Takes `node` from its parent (its counts from every node above it).
    fn detach(&mut self, node: u32) {
        let parent = self.up[node as usize];
        let segment = self.segment(node).to_owned();
        let (sum, ents) = (self.sum[node as usize], self.ents[node as usize]);
        let mut above = parent;
        while above != NONE {
            work_done(1);
            self.sum[above as usize] -= sum;
            self.ents[above as usize] -= ents;
            above = self.up[above as usize];
        }
        self.carry(node, parent, false);
        self.kids.remove(&(parent, segment.clone()));
        if self.is_name_node(node) {
            self.moved[node as usize] = true;
        }
        self.segment.insert(node, segment);
        self.up[node as usize] = NONE;
    }

    /// Hangs `node` (taken from its parent) under `parent` with `segment`.
    fn attach(&mut self, node: u32, parent: u32, segment: &str) {
        if self.is_name_node(node) {
            self.moved[node as usize] = true;
        }
        self.segment.insert(node, segment.to_owned());
        self.kids.insert((parent, segment.to_owned()), node);
        self.up[node as usize] = parent;
        let (sum, ents) = (self.sum[node as usize], self.ents[node as usize]);
        let (mut above, mut height) = (parent, self.height[node as usize] + 1);
        while above != NONE {
            work_done(1);
            self.sum[above as usize] += sum;
            self.ents[above as usize] += ents;
            self.height[above as usize] = self.height[above as usize].max(height);
            height += 1;
            above = self.up[above as usize];
        }
        self.carry(node, parent, true);
    }

    /// Adds (or takes) the keys under `node` of each entity followed on its own to (from)
    /// `parent` and every node above it.
    fn carry(&mut self, node: u32, parent: u32, add: bool) {
        work_done(self.split.len());
        for split in &mut self.split {
            let Some(&count) = split.get(&node) else { continue };
            let mut above = parent;
            while above != NONE {
                work_done(1);
                let at = split.entry(above).or_default();
                if add {
                    *at += count;
                } else {
                    *at -= count;
                    if *at == 0 {
                        split.remove(&above);
                    }
                }
                above = self.up[above as usize];
            }
        }
    }

    /// A node the names lack, under `parent`.
    fn make(&mut self, parent: u32, segment: &str) -> u32 {
        let node = self.up.len() as u32;
        for list in [&mut self.held, &mut self.sum, &mut self.ents] {
            list.push(0);
        }
        self.up.push(NONE);
        self.height.push(0);
        self.last.push(0);
        self.attach(node, parent, segment);
        node
    }

    /// Runs one step on the model: `None` if an entity could fail at it (see the module's
    /// page). With `report`, counts what it renames.
    fn step(&mut self, step: &CheckedStep<'_>, report: &mut StepReport) -> Option<()> {
        let mut found = Vec::with_capacity(step.renames.len());
        for (from, dst) in &step.renames {
            work_done(1);
            if let Some(node) = self.find(from.segments()) {
                found.push((node, dst));
            }
        }
        // The renames of a step move at once: every source is taken first.
        self.steps += 1;
        for &(node, _) in &found {
            report.renamed += self.sum[node as usize] as usize;
            report.entities += self.ents[node as usize] as usize;
            for (split, counted) in self.split.iter().zip(&mut self.counted) {
                if *counted != self.steps && split.contains_key(&node) {
                    *counted = self.steps;
                    report.entities += 1;
                }
            }
            self.detach(node);
        }
        for (node, dst) in found {
            let segments: Vec<Cow<'_, str>> = dst.segments().collect();
            let (last, through) = segments.split_last().expect("INVARIANT: a path has a segment");
            let at = self.through(through)?;
            if let Some(there) = self.child(at, last) {
                if self.sum[there as usize] > 0 {
                    return None;
                }
                // Names no entity holds a key of: set aside.
                self.detach(there);
            }
            if segments.len() + self.height[node as usize] as usize > MAX_PATH_SEGMENTS {
                return None;
            }
            self.attach(node, at, last);
            self.last[node as usize] = self.steps;
        }
        if let Some(write) = step.writes.first() {
            self.default(&write.path, report)?;
        }
        Some(())
    }

    /// The node of the path `through` (made where the model lacks it), unless a key is held
    /// at it or above it: a path under it would run through a value.
    fn through(&mut self, through: &[Cow<'_, str>]) -> Option<u32> {
        let mut at = ROOT;
        for segment in through {
            at = match self.child(at, segment) {
                Some(kid) if self.held[kid as usize] > 0 => return None,
                Some(kid) => kid,
                None => self.make(at, segment),
            };
        }
        Some(at)
    }

    /// Runs a default of `path` on the model: every entity that lacks its key gets it.
    fn default(&mut self, path: &super::PathText<'_>, report: &mut StepReport) -> Option<()> {
        let segments: Vec<Cow<'_, str>> = path.segments().collect();
        let (last, through) = segments.split_last().expect("INVARIANT: a path has a segment");
        let at = self.through(through)?;
        let node = match self.child(at, last) {
            Some(node) => node,
            None => self.make(at, last),
        };
        if self.sum[node as usize] > 0 {
            // Keys under it (the default would make a value of an object), or at it: an
            // entity that holds the key already (from before the run, an earlier default of
            // the run, or a rename onto its path) keeps its value, which a composed run cannot
            // tell from the others'; run step by step.
            return None;
        }
        let lacking = self.entities - self.held[node as usize];
        report.defaulted += lacking as usize;
        report.entities += lacking as usize;
        self.held[node as usize] = self.entities;
        let mut chain = Vec::new();
        let mut above = node;
        while above != NONE {
            work_done(1);
            self.sum[above as usize] += lacking;
            if above != ROOT {
                chain.push(above);
            }
            above = self.up[above as usize];
        }
        self.defaults.push((self.steps, node, chain));
        for anchor in self.joins.remove(&self.steps).unwrap_or_default() {
            let mut above = anchor;
            while above != NONE {
                work_done(1);
                self.ents[above as usize] += 1;
                above = self.up[above as usize];
            }
        }
        Some(())
    }
}

/// The most segments above any of `anchors` in the names.
fn depth_of(names: &Names, anchors: &[(u32, u64)]) -> usize {
    anchors.iter().map(|&(anchor, _)| names.tree.ancestors(anchor).count()).max().unwrap_or(0)
}

/// Per node, the entities whose moved keys all lie under it as their lowest moved node
/// (`lowest`), and the entities whose keys move apart, each its lowest moved nodes with its
/// keys under each; `None` if following those costs over half of `most` (the keys the `steps`
/// move, and the steps).
#[allow(clippy::type_complexity)]
fn anchors(
    store: &Store,
    names: &Names,
    (lowest, defaults): (&[u32], &[(usize, u32, u32)]),
    most: usize,
    steps: usize,
) -> Option<(Vec<u64>, Vec<Vec<(u32, u64)>>, FxHashMap<usize, Vec<u32>>)> {
    let len = lowest.len();
    // The defaults' nodes that entities may hold (a name's), and the lowest moved node of
    // each default's key with the first step that gives a key under it.
    let default_nodes: FxHashSet<u32> =
        defaults.iter().map(|d| d.1).filter(|&node| (node as usize) < len).collect();
    let mut firsts: Vec<(u32, usize)> = Vec::new();
    for &(at, _, low) in defaults.iter().filter(|d| d.2 != ROOT) {
        match firsts.iter().find(|first| first.0 == low) {
            Some(_) => {}
            None => firsts.push((low, at)),
        }
        if firsts.len() > 1 {
            // Keys of defaults moved apart.
            return None;
        }
    }
    let mut joins: FxHashMap<usize, Vec<u32>> = FxHashMap::default();
    // Each entity counted at its moved keys' lowest moved node, if they share one; else (its
    // keys moved apart) followed on its own, if that costs under half the keys the steps move
    // (else the steps, folded where they commute, are cheaper one by one).
    let mut ents = vec![0u64; len];
    let (mut split, mut followed) = (Vec::new(), 0usize);
    let mut lows: Vec<u32> = Vec::new();
    for (_, blob) in store.iter() {
        lows.clear();
        let mut holds_default = false;
        for &raw in layout::keys(blob.as_words()) {
            let node = names.tree.named(Key::from_raw(raw)).expect("INVARIANT: named");
            holds_default |= default_nodes.contains(&node);
            if lowest[node as usize] != ROOT {
                lows.push(lowest[node as usize]);
            }
        }
        lows.sort_unstable();
        if holds_default {
            // (Which defaults it lacks: rare, and not followed: each entity lacks every one.)
            return None;
        }
        if let Some(&(low, at)) = firsts.first() {
            match (lows.first(), lows.last()) {
                (None, _) => {
                    joins.entry(at).or_default().push(low);
                    continue;
                }
                (Some(&first), Some(&last)) if first == last && first == low => {}
                _ => return None,
            }
        }
        match (lows.first(), lows.last()) {
            (None, _) => {}
            (Some(&first), Some(&last)) if first == last => ents[first as usize] += 1,
            _ => {
                let mut anchors: Vec<(u32, u64)> = Vec::new();
                for &low in &lows {
                    match anchors.last_mut() {
                        Some((at, count)) if *at == low => *count += 1,
                        _ => anchors.push((low, 1)),
                    }
                }
                // A check a step, and the walks above its keys.
                let walks = anchors.len().saturating_mul(depth_of(names, &anchors));
                followed = followed.saturating_add(steps).saturating_add(walks);
                if followed.saturating_mul(2) > most {
                    return None;
                }
                split.push(anchors);
            }
        }
    }
    Some((ents, split, joins))
}

/// Every name under a moved node (by `lowest`) with the node of the names it ends at (made
/// where the names lack it), when the run leaves it reachable: the entities' keys among them.
#[allow(clippy::type_complexity)]
fn finals(
    (up, segments, moved_now): (Vec<u32>, FxHashMap<u32, String>, Vec<bool>),
    names: &mut Names,
    lowest: &[u32],
    defaults: &[(usize, u32, u32)],
) -> (Vec<(u32, u32)>, Vec<u32>) {
    let len = lowest.len();
    // The final node of each node: its own, or its path's in the names (made).
    let total = up.len();
    let mut place = vec![NONE; total];
    place[ROOT as usize] = ROOT;
    let segment_of = |node: u32, names: &Names| -> String {
        match segments.get(&node) {
            Some(segment) => segment.clone(),
            None => names.tree.segment(node).to_owned(),
        }
    };
    let mut chain = Vec::new();
    let mut end_of = |node: u32, names: &mut Names| -> u32 {
        let mut at = node;
        while place[at as usize] == NONE {
            chain.push(at);
            at = up[at as usize];
            if at == NONE {
                // Set aside: no key under it is held, and it ends at no name.
                for node in chain.drain(..) {
                    place[node as usize] = ASIDE;
                }
                return ASIDE;
            }
        }
        if place[at as usize] == ASIDE {
            for node in chain.drain(..) {
                place[node as usize] = ASIDE;
            }
            return ASIDE;
        }
        while let Some(node) = chain.pop() {
            work_done(1);
            let parent = place[up[node as usize] as usize];
            let same = (node as usize) < moved_now.len()
                && !moved_now[node as usize]
                && parent == names.tree.parent(node);
            place[node as usize] =
                if same { node } else { names.intern(parent, &segment_of(node, names)) };
        }
        place[node as usize]
    };
    // Every name under a moved node ends at a name (the entities' keys among them).
    let mut finals = Vec::new();
    for node in 1..len as u32 {
        if lowest[node as usize] != ROOT && names.tree.is_named(node) {
            let to = end_of(node, names);
            if to != ASIDE {
                finals.push((node, to));
            }
        }
    }
    // And each default's node (held by every entity: never set aside).
    let ends = defaults.iter().map(|&(_, node, _)| end_of(node, names)).collect();
    (finals, ends)
}

/// A run of rename-only steps composed: per key an entity holds that the run moves, the key
/// it ends as.
pub(super) struct Composed<'m> {
    pub(super) ends: FxHashMap<Key, Key>,
    /// The defaults, in order: the key each ends as, and its value (every entity lacks them).
    pub(super) defaults: Vec<(Key, &'m OwnedValue)>,
}

/// Composes `steps` (renames only, at positions `first..` among the steps that run) against
/// `names` and the entities of `store` (those before `entities` are migrated), naming the
/// final paths and counting the steps' reports into `reports` (theirs, in order); `None`,
/// with neither changed, where the run must run step by step (see the module's page).
pub(super) fn compose<'m>(
    store: &Store,
    steps: &[&CheckedStep<'m>],
    first: usize,
    names: &mut Names,
    reports: &mut [StepReport],
) -> Result<Option<Composed<'m>>, MigrateError> {
    let len = names.node_count() as usize + 1;
    let mut held = vec![0u64; len];
    let writes = steps.iter().flat_map(|step| &step.writes);
    let room: usize = writes.map(|write| room_of(write.value)).sum();
    for (_, blob) in store.iter() {
        if layout::used_bytes(blob.as_words()).saturating_add(room) > layout::MAX_BYTES {
            // (The step that passes 4 GiB is the error: step by step.)
            return Ok(None);
        }
        let keys = layout::keys(blob.as_words());
        work_done(keys.len());
        for &raw in keys {
            let Some(node) = names.tree.named(Key::from_raw(raw)) else { return Ok(None) };
            held[node as usize] += 1;
        }
    }
    // First the model alone: which nodes move, and whether any entity could fail.
    let entities = store.len() as u64;
    let zero = vec![0; len];
    let mut model = Model::new(names, (&held, &zero, entities), &[], FxHashMap::default());
    let mut scratch = StepReport::default();
    for step in steps {
        if model.step(step, &mut scratch).is_none() {
            return Ok(None);
        }
    }
    // Per default, its step, node, and the lowest node above its key (itself too) that a later
    // step moves (the root: none).
    let defaults: Vec<(usize, u32, u32)> = model
        .defaults
        .iter()
        .map(|(at, node, chain)| {
            let after = chain.iter().find(|&&above| model.last[above as usize] > *at);
            (*at, *node, after.copied().unwrap_or(ROOT))
        })
        .collect();
    let moved = model.moved;
    // Per node of the names, its lowest moved node at or above it (the root: none).
    let mut lowest = vec![NONE; len];
    lowest[ROOT as usize] = ROOT;
    for node in 1..len {
        lowest[node] =
            if moved[node] { node as u32 } else { lowest[names.tree.parent(node as u32) as usize] };
    }
    work_done(len);
    let most = scratch.renamed + steps.len();
    let Some((ents, split, joins)) = anchors(store, names, (&lowest, &defaults), most, steps.len())
    else {
        return Ok(None);
    };
    // Then again, counting.
    let mut model = Model::new(names, (&held, &ents, entities), &split, joins);
    let mut counted = vec![StepReport::default(); steps.len()];
    for (step, report) in steps.iter().zip(&mut counted) {
        model.step(step, report).expect("INVARIANT: the model ran the same before");
    }
    let Model { up, segment, moved, .. } = model;
    let (finals, default_ends) = finals((up, segment, moved), names, &lowest, &defaults);
    // The final names collide with no other.
    let targets: FxHashSet<u32> =
        finals.iter().map(|&(_, to)| to).chain(default_ends.iter().copied()).collect();
    let mut seen: FxHashSet<Key> = FxHashSet::default();
    for &to in &targets {
        let key = names.tree.key(to);
        let other = names.tree.named(key).filter(|&other| other != to);
        if other.is_some() || !seen.insert(key) {
            return Ok(None);
        }
    }
    let p = first + steps.len() - 1;
    let mut keyed = FxHashMap::default();
    for &(node, to) in &finals {
        let key = names.name(to, p).map_err(|collision: KeyError| MigrateError::KeyCollision {
            step: steps[steps.len() - 1].index,
            to: steps[steps.len() - 1].to,
            collision,
        })?;
        if held[node as usize] > 0 {
            keyed.insert(names.tree.key(node), key);
        }
    }
    let mut written = Vec::with_capacity(default_ends.len());
    let values = steps.iter().filter_map(|step| step.writes.first().map(|write| write.value));
    for (&to, value) in default_ends.iter().zip(values) {
        let key = names.name(to, p).map_err(|collision: KeyError| MigrateError::KeyCollision {
            step: steps[steps.len() - 1].index,
            to: steps[steps.len() - 1].to,
            collision,
        })?;
        written.push((key, value));
    }
    #[cfg(test)]
    super::work::COMPOSED.with(|n| {
        let (followed, defaulted) = (!split.is_empty(), !written.is_empty());
        n.set(n.get() + 1 + (u64::from(followed) << 24) + (u64::from(defaulted) << 48));
    });
    for (report, counted) in reports.iter_mut().zip(counted) {
        report.renamed += counted.renamed;
        report.entities += counted.entities;
        report.defaulted += counted.defaulted;
    }
    Ok(Some(Composed { ends: keyed, defaults: written }))
}
