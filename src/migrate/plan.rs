//! Each step of a migration compiled against the store's key names ([`Names`]) into a
//! [`Plan`]: a table of the keys it touches and what it does to each (moved to, moved from,
//! removed, written), and the paths it touches for folding. `run.rs` applies the
//! plans.

use fxhash::FxHashMap;

use super::fold::{Fold, Footprint};
use super::{CheckedStep, MigrateError, PathText};
use crate::key::{Key, KeyError, KeyPath, MAX_PATH_SEGMENTS};
use crate::names::{KeyNames, ROOT};
use crate::store::Store;
use crate::value::OwnedValue;

/// No move, no write: a role's empty link.
pub(super) const NONE: u32 = u32::MAX;

/// Every key name a migration knows: a copy of the store's key tree, with the names its steps
/// add. Walked by node (parent links), never spelled out whole: the tree stores a shared
/// prefix once, so the names' total length can be far beyond the file's.
pub(super) struct Names {
    pub(super) tree: KeyNames,
    /// Whether each node (by number; the root is 0) is the parent of another: an object's path.
    pub(super) has_child: Vec<bool>,
    /// Each node's first child, last child and next sibling (or [`NONE`]): a subtree is
    /// walked in its own size, not the tree's.
    pub(super) first_child: Vec<u32>,
    pub(super) last_child: Vec<u32>,
    pub(super) next_sibling: Vec<u32>,
    /// Per node, the last walk of [`under`](Names::under) that reached it.
    pub(super) visited: Vec<u32>,
    pub(super) visit: u32,
    /// The nodes the steps named, each with the plan (its position among those that run) that
    /// named it: a key a later step names is unnamed in an earlier one.
    pub(super) added: FxHashMap<u32, usize>,
    /// Per node, whether a removal took its key from every entity, and no step has put a key
    /// at it since: a later removal or rename has no role for it (so repeated removals of a
    /// subtree cost memory once, not once a step).
    gone: Vec<bool>,
    /// Per node, whether a removal took its whole subtree, and no step has put a key at or
    /// under it since: a later removal of it (or under it) walks nothing.
    gone_under: Vec<bool>,
    /// The nodes marked in `gone_under`.
    gone_roots: usize,
    /// How many times compiling changed what a later compile reads (a node, a name, a gone
    /// mark): two steps compiled without a change leave the names as they found them
    /// (`repeat.rs`).
    pub(super) changes: u64,
}

impl Names {
    pub(super) fn of(store: &Store) -> Names {
        let mut tree = store.names().clone();
        // Nodes added from here on are dropped at `commit` unless they lead to a name.
        tree.begin();
        let len = tree.node_count() + 1;
        let mut names = Names {
            tree,
            has_child: vec![false; len],
            first_child: vec![NONE; len],
            last_child: vec![NONE; len],
            next_sibling: vec![NONE; len],
            visited: vec![0; len],
            visit: 0,
            added: FxHashMap::default(),
            gone: vec![false; len],
            gone_under: vec![false; len],
            gone_roots: 0,
            changes: 0,
        };
        for node in 1..len as u32 {
            names.link(node);
        }
        names
    }

    pub(super) fn node_count(&self) -> u32 {
        self.tree.node_count() as u32
    }

    /// Adds `node` (the newest) as the last child of its parent.
    fn link(&mut self, node: u32) {
        let parent = self.tree.parent(node) as usize;
        self.has_child[parent] = true;
        match self.last_child[parent] {
            NONE => self.first_child[parent] = node,
            last => self.next_sibling[last as usize] = node,
        }
        self.last_child[parent] = node;
    }

    pub(super) fn intern(&mut self, parent: u32, segment: &str) -> u32 {
        let node = self.tree.intern(parent, segment);
        if node as usize >= self.has_child.len() {
            let len = node as usize + 1;
            self.has_child.resize(len, false);
            self.first_child.resize(len, NONE);
            self.last_child.resize(len, NONE);
            self.next_sibling.resize(len, NONE);
            self.visited.resize(len, 0);
            self.gone.resize(len, false);
            self.gone_under.resize(len, false);
            self.link(node);
            self.changes += 1;
        }
        node
    }

    /// The node of `path`, made (unnamed) where the tree lacks it.
    fn intern_path(&mut self, path: &PathText<'_>) -> u32 {
        let mut node = ROOT;
        for segment in path.segments() {
            node = self.intern(node, &segment);
        }
        node
    }

    /// The node of `path`, if the tree has it.
    fn find(&self, path: &PathText<'_>) -> Option<u32> {
        let mut node = ROOT;
        for segment in path.segments() {
            node = self.tree.child(node, &segment)?;
        }
        Some(node)
    }

    /// Names `node` for plan `p`, unless another node names its key: a key may be put there.
    pub(super) fn name(&mut self, node: u32, p: usize) -> Result<Key, KeyError> {
        if std::mem::take(&mut self.gone[node as usize]) {
            self.changes += 1;
        }
        // (A path a step puts a key at is at most 125 segments deep.)
        let mut above = node;
        while self.gone_roots > 0 && above != ROOT {
            if std::mem::take(&mut self.gone_under[above as usize]) {
                self.gone_roots -= 1;
                self.changes += 1;
            }
            above = self.tree.parent(above);
        }
        let was = self.tree.is_named(node);
        match self.tree.name(node) {
            Ok(key) => {
                if !was {
                    self.added.insert(node, p);
                    self.changes += 1;
                }
                Ok(key)
            }
            Err(other) => Err(KeyError::Collision {
                key: self.tree.key(node),
                name: self.tree.label(node),
                known: self.tree.label(other),
            }),
        }
    }

    /// Whether a removal took the subtree of `node` or of a node above it, and no step put a
    /// key in it since. (A path a step names is at most 125 segments deep.)
    fn gone_above(&self, mut node: u32) -> bool {
        while self.gone_roots > 0 && node != ROOT {
            if self.gone_under[node as usize] {
                return true;
            }
            node = self.tree.parent(node);
        }
        false
    }

    /// Whether `node` names a key in plan `p`.
    pub(super) fn named_in(&self, node: u32, p: usize) -> bool {
        self.tree.is_named(node) && self.added.get(&node).is_none_or(|&by| by <= p)
    }

    /// The key of a step's path, unless a name of another path has it.
    fn check(&self, path: &PathText<'_>) -> Result<Key, KeyError> {
        if let Some(raw) = path.raw {
            return Ok(raw);
        }
        let pointer = KeyPath::pointer(&path.pointer).expect("INVARIANT: a path's pointer");
        self.tree.check(&pointer)
    }

    /// Every node at or under one of `roots` (nodes, each with its position), each once with
    /// the root it was reached from, in ascending order of node (parents first): a walk of
    /// the subtrees, so a step pays for the names it touches, not for the whole tree.
    fn under(&mut self, roots: &[(u32, u32)]) -> Vec<(u32, u32)> {
        self.visit += 1;
        let visit = self.visit;
        let (mut found, mut stack) = (Vec::new(), Vec::new());
        for &(root, r) in roots {
            stack.push(root);
            while let Some(node) = stack.pop() {
                if self.visited[node as usize] == visit {
                    continue;
                }
                self.visited[node as usize] = visit;
                found.push((node, r));
                let mut child = self.first_child[node as usize];
                while child != NONE {
                    stack.push(child);
                    child = self.next_sibling[child as usize];
                }
            }
        }
        found.sort_unstable();
        found
    }

    pub(super) fn label(&self, node: u32) -> String {
        self.tree.label(node)
    }
}

/// What a step does to one key, whichever entity holds it.
#[derive(Clone, Copy)]
pub(super) struct Role {
    pub(super) key: Key,
    /// The move that takes this key away, or [`NONE`].
    pub(super) moved: u32,
    /// The move that brings a key here, or [`NONE`].
    pub(super) arrives: u32,
    /// The default or set of this key, or [`NONE`].
    pub(super) written: u32,
    /// Removed (after the renames).
    pub(super) removed: bool,
    /// The step whose role it is, by position among the steps that run (a folded plan holds
    /// the roles of several, each key in one).
    pub(super) p: u32,
}

/// A key moved to a new path: a rename's source key, or a key under its source path.
#[derive(Clone, Copy)]
pub(super) struct Move<'m> {
    pub(super) from: u32,
    pub(super) to: u32,
    /// The node of the key moved, or [`NONE`] for a key moved by the rename's own path (one
    /// without a name, or a raw key).
    pub(super) from_name: u32,
    /// The rename's own source path.
    pub(super) source: &'m PathText<'m>,
    /// The node of its new path.
    pub(super) to_name: u32,
    /// Whether some name lies under its new path.
    pub(super) has_under: bool,
}

/// A default or a set of a step.
#[derive(Clone, Copy)]
pub(super) struct Write<'m> {
    pub(super) role: u32,
    pub(super) value: &'m OwnedValue,
    pub(super) default: bool,
    /// The node of its path.
    pub(super) node: u32,
    pub(super) has_under: bool,
}

/// One step, compiled against the names: the roles of the keys it touches. Or a run of steps
/// that commute, folded into one (`fold.rs`): the union of their roles, each kept with its step.
#[derive(Clone)]
pub(super) struct Plan<'m> {
    pub(super) step: &'m CheckedStep<'m>,
    /// The positions among the steps that run of its first and last step (the same for one).
    pub(super) first: usize,
    pub(super) p: usize,
    /// `(index, to)` of each of its steps, first to last, for reports and errors.
    pub(super) steps: Vec<(usize, u32)>,
    /// Where its roles' scan stamps start in the rewrite's table (`run.rs`).
    pub(super) base: usize,
    pub(super) roles: FxHashMap<Key, u32>,
    pub(super) role: Vec<Role>,
    pub(super) moves: Vec<Move<'m>>,
    pub(super) writes: Vec<Write<'m>>,
    /// Bytes a blob may grow by in this plan: the defaults and sets.
    pub(super) room: usize,
    /// The paths it touches, for folding.
    pub(super) footprint: Footprint,
}

impl<'m> Plan<'m> {
    pub(super) fn compile(
        step: &'m CheckedStep<'m>,
        p: usize,
        names: &mut Names,
    ) -> Result<Plan<'m>, MigrateError> {
        let collision =
            |collision| MigrateError::KeyCollision { step: step.index, to: step.to, collision };
        let mut plan = Plan {
            step,
            first: p,
            p,
            steps: vec![(step.index, step.to)],
            base: 0,
            roles: FxHashMap::default(),
            role: Vec::new(),
            moves: Vec::new(),
            writes: Vec::new(),
            room: 0,
            footprint: Footprint::default(),
        };
        for (from, dst) in &step.renames {
            plan.footprint.add(from);
            plan.footprint.add(dst);
        }
        for path in step.removes.iter().chain(step.writes.iter().map(|w| &w.path)) {
            plan.footprint.add(path);
        }

        if !step.renames.is_empty() {
            plan.compile_renames(names)?;
        }

        if !step.removes.is_empty() {
            let mut roots = Vec::new();
            for root in &step.removes {
                let key = names.check(root).map_err(collision)?;
                let role = plan.role_of(key);
                plan.role[role as usize].removed = true;
                if root.raw.is_none() {
                    match names.find(root) {
                        // A subtree an earlier step removed, with nothing put in it since, is
                        // walked no more.
                        Some(node) if !names.gone_above(node) => roots.push((node, 0)),
                        Some(_) => {}
                        None => plan.footprint.add_loose(key),
                    }
                }
            }
            // Names the renames above added are found too: removals follow renames.
            for (node, _) in names.under(&roots) {
                if names.named_in(node, p) && !names.gone[node as usize] {
                    let role = plan.role_of(names.tree.key(node));
                    plan.role[role as usize].removed = true;
                }
                if !std::mem::replace(&mut names.gone[node as usize], true) {
                    names.changes += 1;
                }
            }
            for &(root, _) in &roots {
                if !std::mem::replace(&mut names.gone_under[root as usize], true) {
                    names.gone_roots += 1;
                    names.changes += 1;
                }
            }
        }

        for write in &step.writes {
            let node = names.intern_path(&write.path);
            let key = names.name(node, p).map_err(collision)?;
            let role = plan.role_of(key);
            plan.role[role as usize].written = plan.writes.len() as u32;
            plan.room += room_of(write.value);
            plan.writes.push(Write {
                role,
                value: write.value,
                default: write.default,
                node,
                has_under: false,
            });
        }

        // Now that every name of the step is known: whether some name lies under each written
        // path (a move's new path, a default, a set).
        for m in &mut plan.moves {
            m.has_under = names.has_child[m.to_name as usize];
        }
        for w in &mut plan.writes {
            w.has_under = names.has_child[w.node as usize];
        }
        Ok(plan)
    }

    /// The moves of the step's renames: every named key at or under a source path (found by
    /// one pass over the tree's nodes, parents first), its new path made node by node.
    fn compile_renames(&mut self, names: &mut Names) -> Result<(), MigrateError> {
        let (step, p, plan) = (self.step, self.p, self);
        let collision =
            |collision| MigrateError::KeyCollision { step: step.index, to: step.to, collision };
        let mut by_root: FxHashMap<Key, usize> = FxHashMap::default();
        // (node, rename) of each source the tree has; (key, rename) of each moved by key.
        let (mut roots, mut by_key) = (Vec::new(), Vec::new());
        for (r, (from, _)) in step.renames.iter().enumerate() {
            let key = names.check(from).map_err(collision)?;
            if let Some(&first) = by_root.get(&key) {
                // Two source paths, neither named, with one hash: which one an entity's
                // key is cannot be told.
                let first: &PathText<'_> = &step.renames[first].0;
                let (name, known) = (from.label(), first.label());
                return Err(collision(KeyError::Collision { key, name, known }));
            }
            by_root.insert(key, r);
            if from.raw.is_some() {
                // A raw key moves alone: it names no subtree.
                by_key.push((key, r));
                continue;
            }
            match names.find(from) {
                Some(node) => roots.push((node, r as u32)),
                None => plan.footprint.add_loose(key),
            }
            if names.tree.named(key).is_none() {
                by_key.push((key, r));
            }
        }
        // The new path of every node at or under a source, made parents first (sources do not
        // overlap: a node's parent is under the same source, or the node is the source).
        let mut image: FxHashMap<u32, (u32, u32)> = FxHashMap::default();
        let mut segment = String::new();
        // (node, rename) of each named key moved.
        let mut named_moves = Vec::new();
        let sources: FxHashMap<u32, u32> = roots.iter().copied().collect();
        for (node, r) in names.under(&roots) {
            let (at, d) = match image.get(&names.tree.parent(node)) {
                Some(&(parent_at, parent_depth)) if !sources.contains_key(&node) => {
                    segment.clear();
                    segment.push_str(names.tree.segment(node));
                    (names.intern(parent_at, &segment), parent_depth + 1)
                }
                _ => {
                    let dst = &step.renames[r as usize].1;
                    (names.intern_path(dst), dst.segments().count() as u32)
                }
            };
            if d as usize > MAX_PATH_SEGMENTS {
                return Err(MigrateError::BadPath {
                    step: step.index,
                    to: step.to,
                    path: step.renames[r as usize].1.given.to_owned(),
                    problem: "the rename would put a name past 125 segments",
                });
            }
            image.insert(node, (at, d));
            if names.tree.is_named(node) {
                named_moves.push((node, r));
            }
        }
        // Each with whether a removal took its key from every entity: then only its new path
        // is named (in the same order, for the same error).
        let mut moves: Vec<(Key, u32, u32, u32, bool)> = Vec::with_capacity(named_moves.len());
        for (node, r) in named_moves {
            let gone = names.gone[node as usize];
            moves.push((names.tree.key(node), node, r, image[&node].0, gone));
        }
        for (key, r) in by_key {
            let dst = names.intern_path(&step.renames[r].1);
            moves.push((key, NONE, r as u32, dst, false));
        }
        for (from, from_name, r, to_name, gone) in moves {
            let to = names.name(to_name, p).map_err(collision)?;
            if gone {
                continue;
            }
            let m = plan.moves.len() as u32;
            let (from_role, to_role) = (plan.role_of(from), plan.role_of(to));
            plan.role[from_role as usize].moved = m;
            plan.role[to_role as usize].arrives = m;
            plan.moves.push(Move {
                from: from_role,
                to: to_role,
                from_name,
                source: &step.renames[r as usize].0,
                to_name,
                has_under: false,
            });
        }
        Ok(())
    }

    /// The role of `key`, made if it has none.
    fn role_of(&mut self, key: Key) -> u32 {
        let next = self.role.len() as u32;
        *self.roles.entry(key).or_insert_with(|| {
            let p = self.p as u32;
            self.role.push(Role {
                key,
                moved: NONE,
                arrives: NONE,
                written: NONE,
                removed: false,
                p,
            });
            next
        })
    }
}

impl Fold for Plan<'_> {
    fn footprint(&mut self) -> &mut Footprint {
        &mut self.footprint
    }

    fn keys(&self) -> impl Iterator<Item = Key> {
        self.role.iter().map(|role| role.key)
    }

    fn touches(&self, key: Key) -> bool {
        self.roles.contains_key(&key)
    }

    fn room(&self) -> usize {
        self.room
    }

    /// Folds `next` (the plan of the step after this plan's last, whose keys and paths are
    /// apart from this plan's: see `fold.rs`) into this plan.
    fn absorb(&mut self, next: &Self) {
        let (roles, moves, writes) =
            (self.role.len() as u32, self.moves.len() as u32, self.writes.len() as u32);
        let shift = |link: u32, by: u32| if link == NONE { NONE } else { link + by };
        for role in &next.role {
            self.roles.insert(role.key, self.role.len() as u32);
            self.role.push(Role {
                moved: shift(role.moved, moves),
                arrives: shift(role.arrives, moves),
                written: shift(role.written, writes),
                ..*role
            });
        }
        self.moves.extend(next.moves.iter().map(|m| Move {
            from: m.from + roles,
            to: m.to + roles,
            ..*m
        }));
        self.writes.extend(next.writes.iter().map(|w| Write { role: w.role + roles, ..*w }));
        self.steps.extend_from_slice(&next.steps);
        self.room += next.room;
        (self.p, self.step) = (next.p, next.step);
    }
}

/// The most bytes a default or set of `value` adds to an entity: its payload and a key's
/// header (with alignment).
pub(super) fn room_of(value: &OwnedValue) -> usize {
    16 + value.as_value().payload_bytes()
}
