//! [`Migrations::apply`]: each step compiled against the store's key names into a table of the
//! keys it touches, then every entity rewritten into a new arena, swapped in at the end.
//!
//! ```text
//!  names ──compile──▶ Plan per step: roles {key → moved to / moved from / removed / written /
//!                                           above a written path}
//!  arena ──rewrite──▶ per entity, per step: one scan of its keys against the roles
//!                     (read only: errors and "nothing to do" leave it untouched), then
//!                     renames in place (a key word rewritten), removals in one pass,
//!                     writes; the result appended to a new arena
//!  new arena, spans, names, data version ──▶ swapped into the store, or nothing on an error
//! ```

use std::borrow::Cow;

use fxhash::{FxHashMap, FxHashSet};

use super::{CheckedStep, MigrateError, MigrationReport, Migrations, StepReport, under_or_at};
use crate::blob::BlobError;
use crate::blob::layout;
use crate::blob::write::BlobWrite;
use crate::handle_map::Id;
use crate::key::{Key, KeyError, KeyPath};
use crate::store::Span;
use crate::store::Store;
use crate::value::OwnedValue;

/// No move, no write: a role's empty link.
const NONE: u32 = u32::MAX;

impl Migrations {
    /// Runs the steps that lead past `store`'s data version, in order, on every entity, and
    /// sets its data version to [`version`](Migrations::version); or changes nothing and says
    /// why. A store already at the version is left as it is, so migrating twice is
    /// the same as once.
    ///
    /// A subtree (`rename` or `remove` of `inventory`) is found through the store's key names:
    /// a key under the path that the store has no name for (one set through a [`Key`] value)
    /// is not found, and stays where it is. Renamed keys keep their values, types and
    /// positions in each entity; the store records the names of the new paths (and keeps the
    /// old ones). The new arena is built aside and swapped in at the end, with every blob
    /// repacked (one a step changed) or copied as it was.
    ///
    /// Time: one pass over every entity's keys per step that runs (one hash lookup a key),
    /// the changes themselves, and one pass over the key names per step that renames or
    /// removes; memory: one copy of the arena, and tables the size of the names and paths the
    /// steps touch.
    ///
    /// # Errors
    ///
    /// Without a change to the store:
    /// [`StoreAhead`](MigrateError::StoreAhead) if its data version is past the migrations';
    /// the errors of [`Migrations::from_json`]'s checks for steps out of order, bad paths and
    /// overlaps; [`KeyCollision`](MigrateError::KeyCollision) for a path whose key the store
    /// names differently; and, naming the step and the entity,
    /// [`RenameOntoKey`](MigrateError::RenameOntoKey),
    /// [`PathIsObject`](MigrateError::PathIsObject) (a default or set at a path the entity
    /// holds keys under), [`PathThroughValue`](MigrateError::PathThroughValue),
    /// [`BlobTooLarge`](MigrateError::BlobTooLarge) and
    /// [`ArenaTooLarge`](MigrateError::ArenaTooLarge).
    ///
    /// # Panics
    ///
    /// Never: the panics in its code guard invariants that the checks before them establish
    /// (each new name was checked against every other when its step was compiled).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{MigrationStep, Migrations, Store};
    /// use datacomp::migrate::MigrateError;
    ///
    /// let mut store = Store::new();
    /// let id = store.insert_entries([("hp", 30.0), ("stats.health", 25.0)]).unwrap();
    /// let migrations = Migrations::new(2).step(MigrationStep::to(2).rename("hp", "stats.health"));
    /// let before = store.clone();
    /// let err = migrations.apply(&mut store).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     format!("steps[0] (to 2), entity {id}: renaming hp onto stats.health, which the entity holds")
    /// );
    /// assert_eq!(store, before, "nothing changed");
    ///
    /// store.set_data_version(5);
    /// let err = migrations.apply(&mut store).unwrap_err();
    /// assert_eq!(err, MigrateError::StoreAhead { data_version: 5, version: 2 });
    /// ```
    pub fn apply(&self, store: &mut Store) -> Result<MigrationReport, MigrateError> {
        let steps = self.check()?;
        let (from, version) = (store.data_version(), self.version);
        if from > version {
            return Err(MigrateError::StoreAhead { data_version: from, version });
        }
        let mut names = Names::of(store);
        let plans = steps
            .iter()
            .filter(|step| step.to > from)
            .map(|step| Plan::compile(step, &mut names))
            .collect::<Result<Vec<_>, _>>()?;
        let mut reports: Vec<StepReport> = plans
            .iter()
            .map(|plan| StepReport { index: plan.index, to: plan.to, ..StepReport::default() })
            .collect();
        if plans.iter().any(|plan| !plan.roles.is_empty()) {
            let Rewritten { arena, spans, changed } = rewrite(store, &plans, &names, &mut reports)?;
            store.replace_arena(arena, spans);
            // Change tracking: the entities a step changed, and only those, are stamped, so
            // marks see the migration in O(changed) (the data version travels in every delta).
            for id in changed {
                store.touch(id);
            }
        }
        for pointer in names.added() {
            let path =
                KeyPath::pointer(pointer).expect("INVARIANT: a name's pointer starts with /");
            store.record_name(&path).expect("INVARIANT: each new name was checked when compiled");
        }
        store.set_data_version(version);
        Ok(MigrationReport { from, to: version, steps: reports })
    }
}

/// Every key name a migration knows: the store's, then those its steps add, each with the
/// keys of its leading segments, so that the names under a path are found by hash lookups.
struct Names {
    entries: Vec<Name>,
    by_key: FxHashMap<Key, u32>,
    /// The keys of each name's paths of 1, 2, ... segments (the last is its own key).
    prefixes: Vec<Key>,
    /// Keys of paths that some name lies under: objects' paths.
    objects: FxHashSet<Key>,
    /// The first entry a step added.
    from_store: usize,
}

struct Name {
    key: Key,
    pointer: String,
    /// Its range of `prefixes`.
    prefixes: (u32, u32),
}

impl Names {
    fn of(store: &Store) -> Names {
        let mut names = Names {
            entries: Vec::with_capacity(store.key_names().len()),
            by_key: FxHashMap::default(),
            prefixes: Vec::new(),
            objects: FxHashSet::default(),
            from_store: 0,
        };
        for (key, _) in store.key_names() {
            let pointer = store.key_pointer(key).expect("INVARIANT: a named key has a pointer");
            // Escaped as a migration's paths are (a save may hold `~2`, which reads as itself),
            // so that the same path is the same text.
            let mut canonical = String::with_capacity(pointer.len());
            for segment in pointer[1..].split('/') {
                crate::key::push_pointer_segment(&mut canonical, &crate::key::unescape(segment));
            }
            names.push(key, canonical);
        }
        names.from_store = names.entries.len();
        names
    }

    fn push(&mut self, key: Key, pointer: String) {
        let start = self.prefixes.len();
        push_prefix_keys(&pointer, &mut self.prefixes);
        let end = self.prefixes.len();
        self.objects.extend(&self.prefixes[start..end - 1]);
        self.by_key.insert(key, self.entries.len() as u32);
        self.entries.push(Name { key, pointer, prefixes: (start as u32, end as u32) });
    }

    fn prefixes_of(&self, entry: usize) -> &[Key] {
        let (start, end) = self.entries[entry].prefixes;
        &self.prefixes[start as usize..end as usize]
    }

    /// The key of `pointer`, unless a name of another path has it.
    fn check(&self, pointer: &str) -> Result<Key, KeyError> {
        let key = Key::from_pointer(pointer).expect("INVARIANT: a path's pointer starts with /");
        match self.by_key.get(&key) {
            Some(&known) if self.entries[known as usize].pointer != pointer => {
                Err(KeyError::Collision {
                    key,
                    name: label(pointer).into_owned(),
                    known: label(&self.entries[known as usize].pointer).into_owned(),
                })
            }
            _ => Ok(key),
        }
    }

    /// Names `pointer` (unless it is named already) and returns its key.
    fn add(&mut self, pointer: String) -> Result<Key, KeyError> {
        let key = self.check(&pointer)?;
        if !self.by_key.contains_key(&key) {
            self.push(key, pointer);
        }
        Ok(key)
    }

    /// The entries at or under the paths of `roots` (pointers, their keys in `by_root`): for
    /// each, its entry and the root's position.
    fn under(&self, roots: &[&str], by_root: &FxHashMap<Key, usize>) -> Vec<(usize, usize)> {
        let mut found = Vec::new();
        for entry in 0..self.entries.len() {
            let pointer = &self.entries[entry].pointer;
            // A hash match is checked against the text: two paths can share a key.
            let root = self.prefixes_of(entry).iter().find_map(|prefix| {
                by_root.get(prefix).copied().filter(|&r| under_or_at(pointer, roots[r]))
            });
            if let Some(root) = root {
                found.push((entry, root));
            }
        }
        found
    }

    /// The names the migration added, to record in the store.
    fn added(&self) -> impl Iterator<Item = &str> {
        self.entries[self.from_store..].iter().map(|name| name.pointer.as_str())
    }
}

/// Appends the keys of `pointer`'s leading 1, 2, ... segments (the last is its own key).
fn push_prefix_keys(pointer: &str, out: &mut Vec<Key>) {
    let mut key: Option<Key> = None;
    for segment in pointer[1..].split('/') {
        let segment = Key::new(&crate::key::unescape(segment));
        let next = key.map_or(segment, |parent| parent.child_key(segment));
        out.push(next);
        key = Some(next);
    }
}

/// How a name is shown in messages, as [`Store::key_label`] shows one: dotted where that
/// reads back as the same path, else the JSON Pointer.
fn label(pointer: &str) -> Cow<'_, str> {
    let segments: Vec<Cow<'_, str>> = pointer[1..].split('/').map(crate::key::unescape).collect();
    let dotted = segments.join(".");
    let reads_back = segments.iter().all(|s| !s.contains('.'))
        && !dotted.is_empty()
        && !dotted.starts_with(['/', '#']);
    if reads_back { Cow::Owned(dotted) } else { Cow::Borrowed(pointer) }
}

/// What a step does to one key, whichever entity holds it.
#[derive(Clone, Copy)]
struct Role {
    key: Key,
    /// The move that takes this key away, or [`NONE`].
    moved: u32,
    /// The move that brings a key here, or [`NONE`].
    arrives: u32,
    /// The default or set of this key, or [`NONE`].
    written: u32,
    /// Removed (after the renames).
    removed: bool,
}

/// A key moved to a new path: a rename's source key, or a key under its source path.
struct Move {
    from: u32,
    to: u32,
    /// The name of the key moved (an entry of [`Names`]), or [`NONE`] for a key without one,
    /// moved by the rename's own path.
    from_name: u32,
    /// The rename of the step that moves it.
    rename: u32,
    /// The name of its new path.
    to_name: u32,
    /// Its range of [`Plan::above`].
    above: (u32, u32),
    /// Whether some name lies under its new path.
    has_under: bool,
}

/// A default or a set of a step.
struct Write<'m> {
    role: u32,
    value: &'m OwnedValue,
    default: bool,
    pointer: &'m str,
    above: (u32, u32),
    has_under: bool,
}

/// One step, compiled against the names: the roles of the keys it touches.
struct Plan<'m> {
    step: &'m CheckedStep<'m>,
    index: usize,
    to: u32,
    roles: FxHashMap<Key, u32>,
    role: Vec<Role>,
    moves: Vec<Move>,
    writes: Vec<Write<'m>>,
    /// For each written path (a move's new path, a default, a set), the roles of the paths
    /// above it and the length of their pointers: such a key held by the entity would make
    /// the write run through a value.
    above: Vec<(u32, u32)>,
    /// Bytes a blob may grow by in this step: the defaults and sets.
    room: usize,
    /// The names known when the step was compiled (the first entries of [`Names`]): a key a
    /// later step names is unnamed here.
    known: usize,
}

impl<'m> Plan<'m> {
    fn compile(step: &'m CheckedStep<'m>, names: &mut Names) -> Result<Plan<'m>, MigrateError> {
        let collision =
            |collision| MigrateError::KeyCollision { step: step.index, to: step.to, collision };
        let mut plan = Plan {
            step,
            index: step.index,
            to: step.to,
            roles: FxHashMap::default(),
            role: Vec::new(),
            moves: Vec::new(),
            writes: Vec::new(),
            above: Vec::new(),
            room: 0,
            known: 0,
        };

        if !step.renames.is_empty() {
            let roots: Vec<&str> = step.renames.iter().map(|(from, _)| &*from.pointer).collect();
            let mut by_root = FxHashMap::default();
            let mut unnamed = Vec::new();
            for (r, root) in roots.iter().enumerate() {
                let key = names.check(root).map_err(collision)?;
                if let Some(&first) = by_root.get(&key) {
                    // Two source paths, neither named, with one hash: which one an entity's
                    // key is cannot be told.
                    let (name, known) =
                        (label(root).into_owned(), label(roots[first]).into_owned());
                    return Err(collision(KeyError::Collision { key, name, known }));
                }
                by_root.insert(key, r);
                if !names.by_key.contains_key(&key) {
                    unnamed.push((key, r));
                }
            }
            // (key, its name's entry or NONE, rename)
            let mut moves: Vec<(Key, u32, usize)> = names
                .under(&roots, &by_root)
                .into_iter()
                .map(|(entry, r)| (names.entries[entry].key, entry as u32, r))
                .collect();
            // A source without a name moves by its key (its subtree cannot be found).
            moves.extend(unnamed.into_iter().map(|(key, r)| (key, NONE, r)));
            for (from, from_name, r) in moves {
                let (root, dst) = (&step.renames[r].0.pointer, &step.renames[r].1.pointer);
                let rest = match from_name {
                    NONE => "",
                    entry => &names.entries[entry as usize].pointer[root.len()..],
                };
                let to = names.add(format!("{dst}{rest}")).map_err(collision)?;
                let m = plan.moves.len() as u32;
                let (from_role, to_role) = (plan.role_of(from), plan.role_of(to));
                plan.role[from_role as usize].moved = m;
                plan.role[to_role as usize].arrives = m;
                plan.moves.push(Move {
                    from: from_role,
                    to: to_role,
                    from_name,
                    rename: r as u32,
                    to_name: names.by_key[&to],
                    above: (0, 0),
                    has_under: false,
                });
            }
        }

        if !step.removes.is_empty() {
            let roots: Vec<&str> = step.removes.iter().map(|path| &*path.pointer).collect();
            let mut by_root = FxHashMap::default();
            for (r, root) in roots.iter().enumerate() {
                let key = names.check(root).map_err(collision)?;
                by_root.insert(key, r);
                let role = plan.role_of(key);
                plan.role[role as usize].removed = true;
            }
            // Names the renames above added are found too: removals follow renames.
            for (entry, _) in names.under(&roots, &by_root) {
                let role = plan.role_of(names.entries[entry].key);
                plan.role[role as usize].removed = true;
            }
        }

        for write in &step.writes {
            let key = names.add(write.path.pointer.clone()).map_err(collision)?;
            let role = plan.role_of(key);
            plan.role[role as usize].written = plan.writes.len() as u32;
            plan.room += 16 + write.value.as_value().payload_bytes();
            plan.writes.push(Write {
                role,
                value: write.value,
                default: write.default,
                pointer: &write.path.pointer,
                above: (0, 0),
                has_under: false,
            });
        }

        plan.locate_writes(names);
        plan.known = names.entries.len();
        Ok(plan)
    }

    /// Now that every name of the step is known: records what lies above each written path
    /// (a move's new path, a default, a set), and whether some name lies under it.
    fn locate_writes(&mut self, names: &Names) {
        let mut prefixes = Vec::new();
        for m in 0..self.moves.len() {
            prefixes.clear();
            let pointer = &names.entries[self.moves[m].to_name as usize].pointer;
            push_prefix_keys(pointer, &mut prefixes);
            let above = self.push_above(&prefixes, pointer);
            let has_under = prefixes.last().is_some_and(|key| names.objects.contains(key));
            (self.moves[m].above, self.moves[m].has_under) = (above, has_under);
        }
        for w in 0..self.writes.len() {
            prefixes.clear();
            push_prefix_keys(self.writes[w].pointer, &mut prefixes);
            let above = self.push_above(&prefixes, self.writes[w].pointer);
            let has_under = prefixes.last().is_some_and(|key| names.objects.contains(key));
            (self.writes[w].above, self.writes[w].has_under) = (above, has_under);
        }
    }

    /// The role of `key`, made if it has none.
    fn role_of(&mut self, key: Key) -> u32 {
        let next = self.role.len() as u32;
        *self.roles.entry(key).or_insert_with(|| {
            self.role.push(Role { key, moved: NONE, arrives: NONE, written: NONE, removed: false });
            next
        })
    }

    /// Records the paths above a written path (all of `prefixes` but its last) and returns
    /// their range of `above`.
    fn push_above(&mut self, prefixes: &[Key], pointer: &str) -> (u32, u32) {
        let start = self.above.len() as u32;
        // The pointer's length up to each '/' after the first: the text of each path above.
        let ends = pointer.match_indices('/').skip(1).map(|(at, _)| at as u32);
        for (&key, end) in prefixes.iter().zip(ends) {
            let role = self.role_of(key);
            self.above.push((role, end));
        }
        (start, self.above.len() as u32)
    }
}

/// Reusable state of the rewrite: per plan, the scan stamp of each role (the entity's scan
/// number when it holds the key) and where it holds it; and buffers.
struct Work {
    scan: u64,
    seen: Vec<Vec<u64>>,
    at: Vec<Vec<u32>>,
    /// The roles the entity holds, with their positions, in key order.
    hits: Vec<(u32, u32)>,
    drops: Vec<usize>,
    /// The keys the step placed where the entity had none, in order.
    placed: Vec<Placed>,
    spare: Vec<u32>,
}

/// A key a step placed: by a move, or by a default or set.
#[derive(Clone, Copy)]
enum Placed {
    Move(u32),
    Write(u32),
}

/// What [`rewrite`] builds, to be swapped into the store.
struct Rewritten {
    arena: Vec<u32>,
    /// Each entity's span in `arena`, in dense order.
    spans: Vec<Span>,
    /// The entities a step changed, in dense order: those change tracking stamps.
    changed: Vec<Id>,
}

/// Every entity rewritten by every plan into a new arena.
fn rewrite(
    store: &Store,
    plans: &[Plan<'_>],
    names: &Names,
    reports: &mut [StepReport],
) -> Result<Rewritten, MigrateError> {
    let room: usize = plans.iter().map(|plan| plan.room).sum();
    let live = store.arena().len() - store.garbage_words();
    let mut arena = Vec::with_capacity(live + store.len() * room.min(64) / 4);
    let mut spans = Vec::with_capacity(store.len());
    let mut changed = Vec::new();
    let mut work = Work {
        scan: 0,
        seen: plans.iter().map(|plan| vec![0; plan.role.len()]).collect(),
        at: plans.iter().map(|plan| vec![0; plan.role.len()]).collect(),
        hits: Vec::new(),
        drops: Vec::new(),
        placed: Vec::new(),
        spare: Vec::new(),
    };
    // The entity being rewritten, once a step changes it.
    let mut scratch = Vec::new();
    for (id, blob) in store.iter() {
        let source = blob.as_words();
        let (mut copied, mut holes) = (false, false);
        for (p, (plan, report)) in plans.iter().zip(reports.iter_mut()).enumerate() {
            let words = if copied { &scratch[..] } else { source };
            if !plan.scan(words, p, &mut work, id, names)? {
                continue;
            }
            if !copied {
                let len = (layout::used_bytes(source) + room).div_ceil(4);
                scratch.clear();
                scratch.resize(len.min(layout::MAX_BYTES / 4), 0);
                layout::repack(source, &mut scratch);
                copied = true;
            }
            holes |= plan.apply(p, &mut scratch, &mut work, id, names, report)?;
        }
        if copied {
            changed.push(id);
        }
        let start = arena.len();
        if holes {
            // Repacked: no byte of a removed or overwritten value stays.
            let used = layout::used_bytes(&scratch) / 4;
            arena.resize(start + used, 0);
            layout::repack(&scratch, &mut arena[start..]);
        } else if copied {
            let used = layout::shrink(&mut scratch);
            arena.extend_from_slice(&scratch[..used]);
        } else {
            arena.extend_from_slice(source);
        }
        if u32::try_from(arena.len()).is_err() {
            return Err(MigrateError::ArenaTooLarge { id });
        }
        spans.push(Span::new(start, arena.len() - start));
    }
    Ok(Rewritten { arena, spans, changed })
}

impl Plan<'_> {
    /// Reads which keys of this plan the entity holds (into `work`), checks the renames, and
    /// says whether the step changes the entity. Changes nothing.
    fn scan(
        &self,
        words: &[u32],
        p: usize,
        work: &mut Work,
        id: Id,
        names: &Names,
    ) -> Result<bool, MigrateError> {
        work.scan += 1;
        let scan = work.scan;
        work.hits.clear();
        for (position, raw) in layout::keys(words).iter().enumerate() {
            if let Some(&role) = self.roles.get(&Key::from_raw(*raw)) {
                work.seen[p][role as usize] = scan;
                work.at[p][role as usize] = position as u32;
                work.hits.push((role, position as u32));
            }
        }
        let seen = &work.seen[p];
        let mut changes = false;
        for &(r, _) in &work.hits {
            let role = self.role[r as usize];
            if role.moved != NONE {
                let to = self.moves[role.moved as usize].to;
                // The key it moves onto is held, and stays: it does not move away itself.
                if seen[to as usize] == scan && self.role[to as usize].moved == NONE {
                    let m = &self.moves[role.moved as usize];
                    return Err(MigrateError::RenameOntoKey {
                        step: self.index,
                        to: self.to,
                        id,
                        from: label(self.source_text(m, names)).into_owned(),
                        onto: label(&names.entries[m.to_name as usize].pointer).into_owned(),
                    });
                }
                changes = true;
            }
            changes |= role.removed;
        }
        if changes {
            return Ok(true);
        }
        // No key moves or goes: a write changes the entity if it lacks the key, or (a set)
        // holds another value.
        Ok(self.writes.iter().any(|write| {
            let role = self.role[write.role as usize];
            if seen[write.role as usize] != scan {
                return true;
            }
            !write.default
                && !layout::lookup(words, role.key).is_some_and(|(tag, raw)| {
                    layout::decode(words, tag, raw).is_identical(&write.value.as_value())
                })
        }))
    }

    /// The path a move takes its key from: its name, or the rename's own path.
    fn source_text<'n>(&'n self, m: &Move, names: &'n Names) -> &'n str {
        match m.from_name {
            NONE => &self.step.renames[m.rename as usize].0.pointer,
            entry => &names.entries[entry as usize].pointer,
        }
    }

    /// Whether the role's key is held after the renames (of the entity `scan` read).
    fn after_renames(&self, seen: &[u64], scan: u64, r: u32) -> bool {
        let role = self.role[r as usize];
        (seen[r as usize] == scan && role.moved == NONE)
            || (role.arrives != NONE
                && seen[self.moves[role.arrives as usize].from as usize] == scan)
    }

    /// Whether the role's key is held after the removals.
    fn after_removals(&self, seen: &[u64], scan: u64, r: u32) -> bool {
        !self.role[r as usize].removed && self.after_renames(seen, scan, r)
    }

    /// Whether the role's key is held after the whole step.
    fn after_step(&self, seen: &[u64], scan: u64, r: u32) -> bool {
        self.role[r as usize].written != NONE || self.after_removals(seen, scan, r)
    }

    /// Applies the step to the entity in `words`, which [`scan`](Plan::scan) read last;
    /// returns whether it may have left holes (a removal, an overwrite).
    fn apply(
        &self,
        p: usize,
        words: &mut Vec<u32>,
        work: &mut Work,
        id: Id,
        names: &Names,
        report: &mut StepReport,
    ) -> Result<bool, MigrateError> {
        let (scan, seen) = (work.scan, &work.seen[p]);
        report.entities += 1;
        // Renames: the key word rewritten in place. Removals: in one pass.
        work.drops.clear();
        let keys = layout::keys_mut(words);
        for &(r, position) in &work.hits {
            let role = self.role[r as usize];
            let now = if role.moved == NONE {
                role
            } else {
                let to = self.moves[role.moved as usize].to;
                keys[position as usize] = self.role[to as usize].key.raw();
                report.renamed += 1;
                self.role[to as usize]
            };
            if now.removed {
                work.drops.push(position as usize);
            }
        }
        layout::remove_at(words, &work.drops);
        report.removed += work.drops.len();

        // The paths written where there was no key: checked against the entity's structure.
        work.placed.clear();
        for &(r, _) in &work.hits {
            let role = self.role[r as usize];
            if role.moved != NONE && !self.role[self.moves[role.moved as usize].to as usize].removed
            {
                work.placed.push(Placed::Move(role.moved));
            }
        }
        let mut holes = !work.drops.is_empty();
        for (w, write) in self.writes.iter().enumerate() {
            let held = self.after_removals(seen, scan, write.role);
            let key = self.role[write.role as usize].key;
            let value = write.value.as_value();
            if held {
                if write.default {
                    continue;
                }
                let (tag, raw) = layout::lookup(words, key).expect("INVARIANT: held");
                if layout::decode(words, tag, raw).is_identical(&value) {
                    continue;
                }
                // The old value's payload, if any, becomes a hole.
                holes = true;
            } else {
                work.placed.push(Placed::Write(w as u32));
            }
            set_growing(words, &mut work.spare, key, value).map_err(|required| {
                MigrateError::BlobTooLarge { step: self.index, to: self.to, id, required }
            })?;
            if write.default {
                report.defaulted += 1;
            } else {
                report.set += 1;
            }
        }

        for &placed in &work.placed {
            let (pointer, op, (start, end), has_under) = match placed {
                Placed::Move(m) => {
                    let m = &self.moves[m as usize];
                    (&*names.entries[m.to_name as usize].pointer, "rename", m.above, m.has_under)
                }
                Placed::Write(w) => {
                    let w = &self.writes[w as usize];
                    let op = if w.default { "default" } else { "set" };
                    (w.pointer, op, w.above, w.has_under)
                }
            };
            for &(r, len) in &self.above[start as usize..end as usize] {
                if self.after_step(seen, scan, r) {
                    return Err(MigrateError::PathThroughValue {
                        step: self.index,
                        to: self.to,
                        id,
                        op,
                        path: label(pointer).into_owned(),
                        value: label(&pointer[..len as usize]).into_owned(),
                    });
                }
            }
            if has_under {
                let under = layout::keys(words).iter().find_map(|&raw| {
                    let entry = *names.by_key.get(&Key::from_raw(raw))?;
                    let name = &names.entries.get(entry as usize)?.pointer;
                    if entry as usize >= self.known {
                        return None;
                    }
                    (name.len() > pointer.len() && under_or_at(name, pointer)).then_some(name)
                });
                if let Some(under) = under {
                    return Err(MigrateError::PathIsObject {
                        step: self.index,
                        to: self.to,
                        id,
                        op,
                        path: label(pointer).into_owned(),
                        under: label(under).into_owned(),
                    });
                }
            }
        }
        Ok(holes)
    }
}

/// Sets `key` in the blob in `words` through the blob write path ([`BlobWrite::set_entry`]),
/// moving it into a larger buffer (by way of `spare`) when it lacks room; `Err` with the bytes
/// it would need past 4 GiB.
fn set_growing(
    words: &mut Vec<u32>,
    spare: &mut Vec<u32>,
    key: Key,
    value: crate::Value<'_>,
) -> Result<(), u64> {
    match (Growing { words, spare }).set_entry(key, value) {
        Ok(_) => Ok(()),
        Err(BlobError::TooLarge { required }) => Err(required),
        Err(error) => unreachable!("INVARIANT: a set fails only as too large, not {error}"),
    }
}

/// A migration's working copy of one blob (always a valid region), regrown by way of a spare
/// buffer that the next regrow reuses: the owner side of [`BlobWrite`].
struct Growing<'a> {
    words: &'a mut Vec<u32>,
    spare: &'a mut Vec<u32>,
}

impl BlobWrite for Growing<'_> {
    fn words(&self) -> &[u32] {
        self.words
    }

    fn words_mut(&mut self) -> Option<&mut [u32]> {
        Some(self.words)
    }

    /// Repacks into `spare`, grown to at least `required` bytes and twice the blob, then swaps
    /// the two.
    fn regrow(&mut self, required: u64) -> Result<(), BlobError> {
        if required > layout::MAX_BYTES as u64 {
            return Err(BlobError::TooLarge { required });
        }
        let len = (required as usize).div_ceil(4).max(2 * self.words.len());
        let len = len.min(layout::MAX_BYTES / 4);
        self.spare.clear();
        self.spare.resize(len, 0);
        layout::repack(self.words, self.spare);
        std::mem::swap(self.words, self.spare);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    #[test]
    fn set_growing_regrows_through_the_spare_and_keeps_every_entry() {
        let mut words = layout::EMPTY.to_vec();
        let mut spare = Vec::new();
        let mut sizes = vec![words.len()];
        let text = "a string payload that takes room";
        let value_of = |i: u16| {
            if i.is_multiple_of(2) { Value::Float(f32::from(i)) } else { Value::Str(text) }
        };
        for i in 0..300_u16 {
            let value = value_of(i);
            set_growing(&mut words, &mut spare, Key::from_raw(i.into()), value).unwrap();
            if sizes.last() != Some(&words.len()) {
                sizes.push(words.len());
            }
        }
        // Each regrow at least doubles: a run of sets regrows O(log n) times.
        assert!(sizes.windows(2).all(|w| w[1] >= 2 * w[0]), "{sizes:?}");
        layout::validate(&words, &mut layout::Scratch::default()).unwrap();
        for i in 0..300_u16 {
            let (tag, raw) = layout::lookup(&words, Key::from_raw(i.into())).unwrap();
            assert_eq!(layout::decode(&words, tag, raw), value_of(i), "key {i}");
        }
    }

    #[test]
    fn a_regrow_past_the_limit_changes_nothing() {
        let mut words = layout::EMPTY.to_vec();
        let mut spare = Vec::new();
        set_growing(&mut words, &mut spare, Key::from_raw(1), Value::Bool(true)).unwrap();
        let before = words.clone();
        let required = layout::MAX_BYTES as u64 + 1;
        let mut growing = Growing { words: &mut words, spare: &mut spare };
        assert_eq!(growing.regrow(required), Err(BlobError::TooLarge { required }));
        assert_eq!(words, before);
    }
}
