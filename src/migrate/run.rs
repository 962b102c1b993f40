//! [`Migrations::apply`]: each step compiled into a [`Plan`], runs of steps that commute
//! folded into one, then every entity rewritten into a new arena, swapped in at the end.
//!
//! ```text
//!  store, steps ──estimate──▶ the output's bytes from above: past max_output, refused
//!  names ──compile──▶ Plan per step: roles {key → moved to / moved from / removed / written /
//!                                           above a written path}
//!  plans ──fold─────▶ runs of steps that commute, each run of two or more one folded Plan
//!  runs  ──chain────▶ segments of runs that only rename and remove, composed per role
//!  (runs of renames that the model of the key tree takes are composed before, `prefix.rs`,
//!   and run as batches of their own: each entity's keys mapped to their final names)
//!  arena ──rewrite──▶ per entity, per run: one scan of its keys against the roles
//!                     (read only: errors and "nothing to do" leave it untouched), then
//!                     renames in place (a key word rewritten), removals in one pass,
//!                     writes; the result appended to a new arena
//!  new arena, spans, names, data version ──▶ swapped into the store, or nothing on an error
//! ```

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::Range;

use fxhash::FxHashMap;

use super::chain::{Chains, Entry, jump, plan_of};
use super::fold::{Run, fold};
use super::plan::{Move, NONE, Names, Plan, room_of};
use super::prefix::{self, Composed};
use super::repeat::{self, Compiler, Repeat};
use super::work::work_done;
use super::{CheckedStep, MigrateError, MigrationReport, Migrations, StepReport};
use crate::blob::BlobError;
use crate::blob::write::BlobWrite;
use crate::blob::{bulk, layout};
use crate::handle_map::Id;
use crate::key::Key;
use crate::names::ROOT;
use crate::store::Span;
use crate::store::Store;

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
    /// old ones), but for a run of renames composed (`prefix.rs`), where it records the paths
    /// the names end at, not those they pass through. The new arena is built aside and swapped in at the end, with every blob
    /// repacked (one a step changed) or copied as it was.
    ///
    /// Time: consecutive steps that commute (no path of one at, above or under a path of
    /// another, no key shared) run as one: one pass over every entity's keys per such run (one
    /// hash lookup a key, or one a key the run touches, whichever is fewer), the changes
    /// themselves, each set in one pass; and the names under each path a step renames or
    /// removes. Steps that do not commute keep their order, a visit each of the entities
    /// whose keys they touch; but runs that only rename and remove (a chain `a -> b`, `b -> c`)
    /// are composed: an entity holding one of their keys jumps them at once, its reports added
    /// up and walked through the steps once (`chain.rs`); runs of two or more steps that only
    /// rename, and one-default steps between them, are composed as prefix moves (`prefix.rs`:
    /// a step costs the nodes on its paths, an entity its keys and the defaults once, the run
    /// the names once) unless an entity could fail in them or a rename lands on held keys; and runs of renames that repeat (a subtree renamed back
    /// and forth onto held keys) are compiled and run three periods deep, the steps after
    /// them copies of the third, when it left each entity as it found it (`repeat.rs`).
    /// Memory: one copy of the arena, and tables the size of the names and paths the steps
    /// touch (twice, for the runs folded), at most a million roles (keys a step touches) or one
    /// per arena word at once: past that the steps run in batches, each over a copy of the
    /// arena the one before left.
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
    /// [`ArenaTooLarge`](MigrateError::ArenaTooLarge); and before any step runs,
    /// [`OutputTooLarge`](MigrateError::OutputTooLarge) if the migrated entities could take
    /// more than [`max_output`](Migrations::max_output) bytes.
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
        let running: Vec<&CheckedStep<'_>> = steps.iter().filter(|step| step.to > from).collect();
        if !running.is_empty() {
            let estimate = estimate(store, &running);
            if estimate > self.max_output {
                return Err(MigrateError::OutputTooLarge { estimate, limit: self.max_output });
            }
        }
        let fresh = || -> Vec<StepReport> {
            let report = |step: &&CheckedStep<'_>| StepReport {
                index: step.index,
                to: step.to,
                ..StepReport::default()
            };
            running.iter().map(report).collect()
        };
        let budget = budget(store);
        let found = repeat::find(&running);
        let composable = composable(&running);
        let (mut reports, mut names) = (fresh(), Names::of(store));
        // With the repeats, then (if an entity a repeat's third period visited came out of it
        // changed: `repeat.rs`) with every step compiled and run.
        for repeats in [&found[..], &[]] {
            let mut outcome = if composable.is_empty() {
                one_pass(store, &running, repeats, &mut names, &mut reports, budget)?
            } else {
                // Runs of renames composed (`prefix.rs`) run as batches of their own.
                Pass::OverBudget
            };
            if outcome == Pass::OverBudget {
                // Past the budget (a subtree of many names renamed back and forth, in ways
                // that do not repeat): the steps run in batches that fit it, each over the
                // arena the one before left.
                (reports, names) = (fresh(), Names::of(store));
                let batches = Batches { repeats, composable: &composable, budget };
                outcome = run_batches(store, &running, &batches, &mut names, &mut reports)?;
            }
            if outcome == Pass::Done {
                break;
            }
            (reports, names) = (fresh(), Names::of(store));
        }
        if !names.added.is_empty() {
            // Each new name was checked against every other when its step was compiled; the
            // nodes that lead to no name (a failed step's) are dropped.
            let mut tree = names.tree;
            tree.commit();
            *store.names_mut() = tree;
        }
        store.set_data_version(version);
        Ok(MigrationReport { from, to: version, steps: reports })
    }
}

/// How [`one_pass`] ended.
#[derive(PartialEq, Eq)]
enum Pass {
    /// The store migrated.
    Done,
    /// The plans' roles passed the budget: nothing run.
    OverBudget,
    /// An entity that a repeat's third period changed: nothing changed in the store.
    Diverged,
}

/// Compiles every step of `running` (a step's errors that need no entity come before any
/// entity's) but the copies of `repeats` (`repeat.rs`), then, if their roles fit `budget`,
/// runs them at once and swaps the result into `store`; the copies' reports those of the
/// steps they copy.
fn one_pass(
    store: &mut Store,
    running: &[&CheckedStep<'_>],
    repeats: &[Repeat],
    names: &mut Names,
    reports: &mut [StepReport],
    budget: usize,
) -> Result<Pass, MigrateError> {
    let mut compiler = Compiler::new(repeats, running.len());
    let (mut plans, mut held) = (Vec::new(), 0);
    for (p, step) in running.iter().enumerate() {
        let Some(plan) = compiler.compile(step, p, names)? else { continue };
        work_done(plan.role.len());
        held += plan.role.len();
        if held <= budget || p == 0 {
            plans.push(plan);
        }
    }
    if plans.len() < compiler.compiled() {
        return Ok(Pass::OverBudget);
    }
    if plans.iter().any(|plan| !plan.roles.is_empty()) {
        let (runs, stamps) = prepare(&mut plans, names);
        let periods = compiler.periods(&plans, &runs);
        let rewritten =
            rewrite(store, &plans, &runs, stamps, names, reports, &periods, usize::MAX, &mut 0)?;
        let Some(rewritten) = rewritten else { return Ok(Pass::Diverged) };
        store.replace_arena(rewritten.arena, rewritten.spans);
        // Change tracking: the entities a step changed, and only those, are stamped, so marks
        // see the migration in O(changed) (the data version travels in every delta).
        rewritten.changed.iter().for_each(|&id| store.touch(id));
    }
    compiler.report(reports);
    Ok(Pass::Done)
}

/// The most bytes the entities of `store` can take once `running` ran, in O(entities + steps):
/// theirs now, and each default and set of the steps added to every entity.
fn estimate(store: &Store, running: &[&CheckedStep<'_>]) -> u64 {
    let writes = running.iter().flat_map(|step| &step.writes);
    let room = writes.fold(0u64, |room, write| room.saturating_add(room_of(write.value) as u64));
    let live = (store.arena().len() - store.garbage_words()) as u64 * 4;
    live.saturating_add((store.len() as u64).saturating_mul(room))
}

/// The roles a migration's plans may hold at once (each a few dozen bytes in its tables): a
/// million, or one per arena word of the store if more.
fn budget(store: &Store) -> usize {
    #[cfg(test)]
    if let Some(budget) = tests::BUDGET.with(std::cell::Cell::get) {
        return budget;
    }
    (store.arena().len()).max(1 << 20)
}

/// Folds `plans` into runs, and gives each plan its scan stamps (the folded ones too) in one
/// table: the runs and the table's length.
fn prepare<'m>(plans: &mut [Plan<'m>], names: &Names) -> (Vec<Run<Plan<'m>>>, usize) {
    let node_keys = (1..=names.node_count()).map(|node| names.tree.key(node));
    let mut runs = fold(plans, node_keys);
    let mut base = 0;
    let folded = runs.iter_mut().filter_map(|run| run.folded.as_deref_mut());
    for plan in plans.iter_mut().chain(folded) {
        plan.base = base;
        base += plan.role.len();
    }
    (runs, base)
}

/// Runs the steps in batches whose plans' roles fit `budget`, each batch over the arena the
/// one before left (a copy of `store`), and swaps the last into `store`. The error is that
/// of the first entity (in store order) to fail, at its first failing step, as in one pass:
/// once an entity fails, later batches run only the entities before it.
fn run_batches(
    store: &mut Store,
    running: &[&CheckedStep<'_>],
    batches: &Batches<'_>,
    names: &mut Names,
    reports: &mut [StepReport],
) -> Result<Pass, MigrateError> {
    let Batches { repeats, composable, budget } = *batches;
    let mut compiler = Compiler::new(repeats, running.len());
    let mut current: Option<Store> = None;
    let (mut changed, mut spans, mut failed) = (Vec::new(), Vec::new(), None);
    let mut p = 0;
    let starts = |p: usize| {
        let at = composable.binary_search_by_key(&p, |run| run.start).ok()?;
        Some(composable[at].clone())
    };
    while p < running.len() {
        if let Some(run) = starts(p) {
            let source = current.as_ref().unwrap_or(store);
            let (steps, into) = (&running[run.clone()], &mut reports[run.clone()]);
            if let Some(composed) = prefix::compose(source, steps, p, names, into)? {
                let entities = failed.as_ref().map_or(usize::MAX, |&(at, _)| at);
                let rewritten = rewrite_composed(source, &composed, entities)?;
                compiler.skip(run.clone());
                changed.extend(rewritten.changed);
                spans.clone_from(&rewritten.spans);
                let next = current.get_or_insert_with(|| store.clone());
                next.replace_arena(rewritten.arena, rewritten.spans);
                p = run.end;
                continue;
            }
        }
        let (mut plans, mut held) = (Vec::new(), 0);
        // (A repeat's third period runs in one batch; a run of renames composed starts its
        // own.)
        while p < running.len()
            && (plans.is_empty() || ((held < budget || compiler.inside(p)) && starts(p).is_none()))
        {
            if let Some(plan) = compiler.compile(running[p], p, names)? {
                work_done(plan.role.len());
                held += plan.role.len();
                plans.push(plan);
            }
            p += 1;
        }
        if plans.is_empty() {
            continue;
        }
        let (runs, stamps) = prepare(&mut plans, names);
        let periods = compiler.periods(&plans, &runs);
        let entities = failed.as_ref().map_or(usize::MAX, |&(at, _)| at);
        let source = current.as_ref().unwrap_or(store);
        let mut at = 0;
        let rewritten = match rewrite(
            source, &plans, &runs, stamps, names, reports, &periods, entities, &mut at,
        ) {
            Ok(rewritten) => rewritten,
            Err(error) => {
                failed = Some((at, error));
                // The entities before it (which pass), for the batches after.
                rewrite(source, &plans, &runs, stamps, names, reports, &periods, at, &mut 0)?
            }
        };
        let Some(rewritten) = rewritten else { return Ok(Pass::Diverged) };
        changed.extend(rewritten.changed);
        spans.clone_from(&rewritten.spans);
        let next = current.get_or_insert_with(|| store.clone());
        next.replace_arena(rewritten.arena, rewritten.spans);
    }
    if let Some((_, error)) = failed {
        return Err(error);
    }
    if let Some(current) = current {
        store.replace_arena(current.arena().to_vec(), spans);
    }
    changed.sort_unstable();
    changed.dedup();
    for id in changed {
        store.touch(id);
    }
    compiler.report(reports);
    Ok(Pass::Done)
}

/// How [`run_batches`] cuts the steps: the repeats (`repeat.rs`), the runs of renames it
/// tries to compose (`prefix.rs`), and the roles a batch may hold.
#[derive(Clone, Copy)]
struct Batches<'a> {
    repeats: &'a [Repeat],
    composable: &'a [Range<usize>],
    budget: usize,
}

/// The runs of consecutive steps that only rename or set one default, two or more of them
/// renames (`prefix.rs`), by position among `running`.
fn composable(running: &[&CheckedStep<'_>]) -> Vec<Range<usize>> {
    #[cfg(test)]
    if tests::STEPWISE.with(std::cell::Cell::get) {
        return Vec::new();
    }
    let mut runs = Vec::new();
    let mut start = 0;
    while start < running.len() {
        let (mut end, mut renames) = (start, 0);
        while end < running.len()
            && (prefix::renames_only(running[end]) || prefix::one_default(running[end]))
        {
            renames += usize::from(prefix::renames_only(running[end]));
            end += 1;
        }
        if renames >= 2 {
            runs.push(start..end);
        }
        start = end.max(start + 1);
    }
    runs
}

/// Every entity before `entities` with its keys that `composed` moves rewritten to their
/// final names (in place: a key keeps its position) and its defaults appended in order, into
/// a new arena.
fn rewrite_composed(
    store: &Store,
    composed: &Composed<'_>,
    entities: usize,
) -> Result<Rewritten, MigrateError> {
    let room: usize = composed.defaults.iter().map(|&(_, value)| room_of(value)).sum();
    let entries = composed.defaults.iter().map(|&(key, value)| (key, value.as_value()));
    let header = composed.defaults.len();
    let payload: usize = entries.clone().map(|(_, value)| value.payload_bytes()).sum();
    let mut spare = Vec::new();
    let live = store.arena().len() - store.garbage_words();
    let mut arena: Vec<u32> = Vec::new();
    grow(&mut arena, live).map_err(|bytes| MigrateError::OutOfMemory { bytes })?;
    let (mut spans, mut changed) = (Vec::with_capacity(store.len()), Vec::new());
    let mut scratch = Vec::new();
    for (position, (id, blob)) in store.iter().enumerate() {
        let source = blob.as_words();
        let keys = layout::keys(source);
        work_done(keys.len());
        let mut copied = false;
        let moves = keys.iter().any(|&raw| composed.ends.contains_key(&Key::from_raw(raw)));
        if position < entities && (moves || header > 0) {
            copy_once(source, &mut scratch, &mut copied, room);
            for key in layout::keys_mut(&mut scratch) {
                if let Some(end) = composed.ends.get(&Key::from_raw(*key)) {
                    *key = end.raw();
                }
            }
            if header > 0 {
                // The defaults' keys, new to every entity, appended in order.
                let n = layout::len(&scratch);
                let room = layout::header_bytes(n + header) - layout::header_bytes(n) + payload;
                let mut growing = Growing { words: &mut scratch, spare: &mut spare };
                growing.reserve_bytes(room).expect("INVARIANT: composed runs stay under 4 GiB");
                bulk::set_all_found(&mut scratch, entries.clone(), |_, _| None);
            }
            changed.push(id);
        }
        spans.push(append(&mut arena, source, (&mut scratch, copied, false), id)?);
    }
    Ok(Rewritten { arena, spans, changed })
}

/// Reusable state of the rewrite: per role of each plan (at the plan's `base`), the scan stamp
/// (the entity's scan number when it holds the key); and buffers.
struct Work {
    scan: u64,
    seen: Vec<u64>,
    /// The entity being rewritten (a number), and per step the last entity it changed: a
    /// step's report counts each entity it changes once.
    entity: u64,
    counted: Vec<u64>,
    /// The roles the entity holds, with their positions, in key order.
    hits: Vec<(u32, u32)>,
    drops: Vec<usize>,
    /// The keys the plan placed where the entity had none, in order, each with its step.
    placed: Vec<(u32, Placed)>,
    spare: Vec<u32>,
    /// The writes that change the entity, set together.
    sets: Vec<u32>,
    /// The position of each key of the entity being rewritten, while `indexed`.
    index: FxHashMap<Key, u32>,
    indexed: bool,
    /// Per node, the last check that walked past it: a walk up the tree stops where an
    /// earlier one of the same check passed, so a check costs the nodes it meets once.
    walked: Vec<u64>,
    /// Per node, the last check that found a held name under it.
    below: Vec<u64>,
    walk: u64,
}

impl Work {
    fn new(stamps: usize, steps: usize, nodes: usize) -> Work {
        Work {
            scan: 0,
            seen: vec![0; stamps],
            entity: 0,
            counted: vec![0; steps],
            hits: Vec::new(),
            drops: Vec::new(),
            placed: Vec::new(),
            spare: Vec::new(),
            sets: Vec::new(),
            index: FxHashMap::default(),
            indexed: false,
            walked: vec![0; nodes],
            below: vec![0; nodes],
            walk: 0,
        }
    }

    /// Makes the index of the entity's `keys`, unless it holds it.
    fn index(&mut self, keys: &[u32]) {
        if !self.indexed {
            work_done(keys.len());
            self.index.clear();
            self.index.extend(keys.iter().enumerate().map(|(i, &k)| (Key::from_raw(k), i as u32)));
            self.indexed = true;
        }
    }
}

/// The report of step `p`, counting the entity (by its number in `counted`) as changed by it.
fn count<'r>(
    reports: &'r mut [StepReport],
    counted: &mut [u64],
    entity: u64,
    p: u32,
) -> &'r mut StepReport {
    let report = &mut reports[p as usize];
    if counted[p as usize] != entity {
        counted[p as usize] = entity;
        report.entities += 1;
    }
    report
}

/// A key a step placed: by a move, or by a default or set.
#[derive(Clone, Copy)]
enum Placed {
    Move(u32),
    Write(u32),
}

/// What [`Plan::scan`] found in an entity.
enum Scanned {
    /// The plan changes nothing in it.
    Unchanged,
    /// The plan changes it.
    Changes,
    /// A rename of step `p` onto a key the entity holds: the error, unless one of the plan's
    /// earlier steps fails first.
    Refused(u32, MigrateError),
}

/// What [`rewrite`] builds, to be swapped into the store.
struct Rewritten {
    arena: Vec<u32>,
    /// Each entity's span in `arena`, in dense order.
    spans: Vec<Span>,
    /// The entities a step changed, in dense order: those change tracking stamps.
    changed: Vec<Id>,
}

/// Every entity rewritten by every run of plans into a new arena: by the run's folded plan,
/// or, where the run could pass a blob's 4 GiB (so that which step fails is the same as step
/// by step), by its plans one after another.
#[allow(clippy::too_many_arguments)]
fn rewrite(
    store: &Store,
    plans: &[Plan<'_>],
    runs: &[Run<Plan<'_>>],
    stamps: usize,
    names: &Names,
    reports: &mut [StepReport],
    periods: &[u32],
    entities: usize,
    at: &mut usize,
) -> Result<Option<Rewritten>, MigrateError> {
    let room: usize = plans.iter().map(|plan| plan.room).sum();
    let live = store.arena().len() - store.garbage_words();
    // Room for what the steps may add to every entity, if that much can be had; else the arena
    // grows as it is written. Either way an allocation that fails is an error naming its size,
    // not an abort.
    let most = live.saturating_add(store.len().saturating_mul(room) / 4);
    let mut arena: Vec<u32> = Vec::new();
    if arena.try_reserve_exact(most.min(u32::MAX as usize)).is_err() {
        grow(&mut arena, live).map_err(|bytes| MigrateError::OutOfMemory { bytes })?;
    }
    let mut spans = Vec::with_capacity(store.len());
    let mut changed = Vec::new();
    let mut work = Work::new(stamps, reports.len(), names.node_count() as usize + 1);
    let period_of = |r: u32| periods.get(r as usize).copied().unwrap_or(NONE);
    let mut chains = Chains::new(plans, runs, stamps, names, |r| period_of(r) == NONE);
    let mut watch = Watch { before: Vec::new(), until: NONE };
    let mut visits = Visits::new(plans, runs, stamps, &mut chains);
    // The entity being rewritten, once a step changes it.
    let mut scratch = Vec::new();
    for (position, (id, blob)) in store.iter().enumerate() {
        *at = position;
        let source = blob.as_words();
        let (mut copied, mut holes) = (false, false);
        work.indexed = false;
        work.entity += 1;
        visits.start(layout::keys(source));
        // The segment (`chain.rs`) the entity runs step by step: it holds two of its keys.
        let mut stepwise = NONE;
        // Past `entities`, copied as it is: no run visits it.
        while let Some(r) = visits.next().filter(|_| position < entities) {
            if !watch.visit(r, period_of(r), if copied { &scratch } else { source }) {
                return Ok(None);
            }
            let run = &runs[r as usize];
            let s = chains.segment_of(r);
            if s != NONE && s != stepwise {
                let words = if copied { &scratch[..] } else { source };
                work_done(layout::len(words));
                match chains.entry(s, plans, run, layout::keys(words)) {
                    Entry::Jump { key, end, changes, next } => {
                        visits.skip(chains.segments[s as usize].runs.end, next);
                        if changes {
                            copy_once(source, &mut scratch, &mut copied, room);
                            holes |= jump(&mut scratch, key, end);
                            work.indexed = false;
                        }
                        continue;
                    }
                    Entry::Stepwise => stepwise = s,
                    Entry::AsAny => {}
                }
            }
            // (The header and the whole payload region, holes too: at least the bytes used,
            // and read in O(1).)
            let near_limit = |words: &[u32]| {
                let used = layout::header_bytes(layout::len(words)) + words.len() * 4
                    - layout::payload_start(words);
                used.saturating_add(run.room) > layout::MAX_BYTES
            };
            let plans = match &run.folded {
                Some(folded) if !near_limit(if copied { &scratch } else { source }) => {
                    std::slice::from_ref(&**folded)
                }
                _ => &plans[run.plans.clone()],
            };
            for plan in plans {
                let words = if copied { &scratch[..] } else { source };
                let (limit, refused) = match plan.scan(words, &mut work, id, names) {
                    Scanned::Unchanged => {
                        visits.requeue(plan, &work, false);
                        continue;
                    }
                    Scanned::Changes => (NONE, None),
                    Scanned::Refused(p, error) => (p, Some(error)),
                };
                copy_once(source, &mut scratch, &mut copied, room);
                // A refused rename fails the migration, unless a step of the plan before it
                // does (the steps it holds before the rename's, applied, are checked first).
                holes |= plan.apply(&mut scratch, &mut work, limit, id, names, reports)?;
                if let Some(error) = refused {
                    return Err(error);
                }
                visits.requeue(plan, &work, true);
            }
        }
        if !watch.visit(NONE, NONE, if copied { &scratch } else { source }) {
            return Ok(None);
        }
        if copied {
            changed.push(id);
        }
        spans.push(append(&mut arena, source, (&mut scratch, copied, holes), id)?);
    }
    chains.report(plans, runs, reports);
    Ok(Some(Rewritten { arena, spans, changed }))
}

/// The keys of an entity before the third period of a repeat (`repeat.rs`), while it runs
/// the period: after it, the entity must be as it was.
struct Watch {
    before: Vec<u32>,
    /// The period's last run, or [`NONE`] while none runs.
    until: u32,
}

impl Watch {
    /// Before run `r` ([`NONE`]: the end) visits the entity in `words`, with the last run of
    /// the period that `r` is in (or [`NONE`]): false if the entity came out of a period
    /// changed.
    fn visit(&mut self, r: u32, period: u32, words: &[u32]) -> bool {
        if self.until != NONE && r > self.until {
            self.until = NONE;
            work_done(self.before.len());
            if layout::keys(words) != &self.before[..] {
                return false;
            }
        }
        if self.until == NONE && period != NONE {
            work_done(layout::len(words));
            self.before.clear();
            self.before.extend_from_slice(layout::keys(words));
            self.until = period;
        }
        true
    }
}

/// Appends to `arena` the entity: `source` as it was, or its copy `scratch` (that may hold
/// `holes`) if `copied`.
fn append(
    arena: &mut Vec<u32>,
    source: &[u32],
    (scratch, copied, holes): (&mut Vec<u32>, bool, bool),
    id: Id,
) -> Result<Span, MigrateError> {
    let start = arena.len();
    let more = if holes {
        layout::used_bytes(scratch) / 4
    } else if copied {
        layout::shrink(scratch)
    } else {
        source.len()
    };
    if u32::try_from(start + more).is_err() {
        return Err(MigrateError::ArenaTooLarge { id });
    }
    grow(arena, more).map_err(|bytes| MigrateError::OutOfMemory { bytes })?;
    if holes {
        // Repacked: no byte of a removed or overwritten value stays.
        arena.resize(start + more, 0);
        layout::repack(scratch, &mut arena[start..]);
    } else if copied {
        arena.extend_from_slice(&scratch[..more]);
    } else {
        arena.extend_from_slice(source);
    }
    Ok(Span::new(start, arena.len() - start))
}

/// Copies the entity in `source` into `scratch`, repacked with `room` bytes to spare, unless
/// it is `copied` there already.
fn copy_once(source: &[u32], scratch: &mut Vec<u32>, copied: &mut bool, room: usize) {
    if !*copied {
        let len = (layout::used_bytes(source) + room).div_ceil(4);
        scratch.clear();
        scratch.resize(len.min(layout::MAX_BYTES / 4), 0);
        layout::repack(source, scratch);
        *copied = true;
    }
}

/// Which runs an entity is visited by: those that write (every entity), and those that touch
/// a key it holds, found by each held key's next such run (a heap). A run that writes nothing
/// and touches none of an entity's keys leaves it as it is, so it is skipped without a look:
/// an entity costs its keys, the runs that write and the changes, not every run.
struct Visits {
    /// Per key, the first run that touches it.
    first: FxHashMap<Key, u32>,
    /// The runs that write (ascending), and the next of them for the entity.
    writing: Vec<u32>,
    next_write: usize,
    /// The next run of each key the entity holds (a key's may repeat, or be stale: a visit
    /// that finds nothing changes nothing).
    heap: BinaryHeap<Reverse<u32>>,
    /// Per role of each plan (at the plan's `base`), the first later run that touches its
    /// key, or [`NONE`]: what a visit queues for the keys it leaves, without a lookup.
    after: Vec<u32>,
}

impl Visits {
    /// Also notes, per segment of `chains`, the first run after it that touches each of its
    /// keys.
    fn new(
        plans: &[Plan<'_>],
        runs: &[Run<Plan<'_>>],
        stamps: usize,
        chains: &mut Chains,
    ) -> Visits {
        // Runs from the last: each role's next run is the first later one seen with its key.
        let mut first: FxHashMap<Key, u32> = FxHashMap::default();
        let mut writing = Vec::new();
        let mut after = vec![NONE; stamps];
        for (r, run) in runs.iter().enumerate().rev() {
            let r = r as u32;
            let s = chains.segment_of(r);
            if s != NONE && chains.segments[s as usize].runs.end == r + 1 {
                let segment = &mut chains.segments[s as usize];
                for run in &runs[segment.runs.start as usize..=r as usize] {
                    for role in &plan_of(plans, run).role {
                        let next = first.get(&role.key).copied().unwrap_or(NONE);
                        segment.after.insert(role.key, next);
                    }
                }
            }
            let folded = run.folded.as_deref();
            let all = || plans[run.plans.clone()].iter().chain(folded);
            for plan in all() {
                for (i, role) in plan.role.iter().enumerate() {
                    after[plan.base + i] = first.get(&role.key).copied().unwrap_or(NONE);
                }
            }
            for role in plans[run.plans.clone()].iter().flat_map(|plan| &plan.role) {
                first.insert(role.key, r);
            }
            if plans[run.plans.clone()].iter().any(|plan| !plan.writes.is_empty()) {
                writing.push(r);
            }
        }
        writing.reverse();
        Visits { first, writing, next_write: 0, heap: BinaryHeap::new(), after }
    }

    /// Starts an entity that holds `keys`.
    fn start(&mut self, keys: &[u32]) {
        work_done(keys.len());
        self.heap.clear();
        self.next_write = 0;
        for &raw in keys {
            self.push(Key::from_raw(raw));
        }
    }

    /// Queues the first run that touches `key`.
    fn push(&mut self, key: Key) {
        if let Some(&r) = self.first.get(&key) {
            self.heap.push(Reverse(r));
        }
    }

    /// After the entity jumped a segment that ends before run `end`: forgets the runs before
    /// it, and queues `next` (unless [`NONE`]), the next run of the key it left.
    fn skip(&mut self, end: u32, next: u32) {
        while self.heap.peek().is_some_and(|top| top.0 < end) {
            self.heap.pop();
        }
        if next != NONE {
            self.heap.push(Reverse(next));
        }
    }

    /// The next run to visit the entity with.
    fn next(&mut self) -> Option<u32> {
        let write = self.writing.get(self.next_write).copied();
        let r = match (self.heap.peek().map(|top| top.0), write) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        };
        while self.heap.peek().is_some_and(|top| top.0 == r) {
            self.heap.pop();
        }
        if write == Some(r) {
            self.next_write += 1;
        }
        Some(r)
    }

    /// After a run's `plan` scanned the entity (and applied itself, if `applied`): queues the
    /// next run of each key the plan touched that the entity holds now.
    fn requeue(&mut self, plan: &Plan<'_>, work: &Work, applied: bool) {
        work_done(work.hits.len());
        let mut queue = |r: u32| {
            let next = self.after[plan.base + r as usize];
            if next != NONE {
                self.heap.push(Reverse(next));
            }
        };
        for &(h, _) in &work.hits {
            let role = plan.role[h as usize];
            let now = match role.moved {
                NONE => h,
                m => plan.moves[m as usize].to,
            };
            if !plan.role[now as usize].removed {
                queue(now);
            }
        }
        if applied {
            for &w in &work.sets {
                queue(plan.writes[w as usize].role);
            }
        }
    }
}

/// Makes room in `arena` for `more` words (doubling, else exactly); `Err` with the bytes the
/// arena would take when neither can be allocated.
fn grow(arena: &mut Vec<u32>, more: usize) -> Result<(), u64> {
    if arena.capacity() - arena.len() >= more
        || arena.try_reserve(more).is_ok()
        || arena.try_reserve_exact(more).is_ok()
    {
        return Ok(());
    }
    Err((arena.len() as u64 + more as u64) * 4)
}

impl Plan<'_> {
    /// `steps[i] (to v)` of the plan's step `p`: (index, to).
    fn step_of(&self, p: u32) -> (usize, u32) {
        self.steps[p as usize - self.first]
    }

    /// Reads which keys of this plan the entity holds (into `work`), checks the renames, and
    /// says whether the plan changes the entity. Changes nothing.
    fn scan(&self, words: &[u32], work: &mut Work, id: Id, names: &Names) -> Scanned {
        work.scan += 1;
        let scan = work.scan;
        work.hits.clear();
        let keys = layout::keys(words);
        if self.role.len() < keys.len() {
            // Fewer roles than keys: each role looked up in the entity's index, kept across
            // its steps, so a run of small steps costs their roles, not the entity's keys each.
            work.index(keys);
            work_done(self.role.len());
            for (r, role) in self.role.iter().enumerate() {
                if let Some(&position) = work.index.get(&role.key) {
                    work.hits.push((r as u32, position));
                }
            }
            work.hits.sort_unstable_by_key(|&(_, position)| position);
        } else {
            work_done(keys.len());
            for (position, raw) in keys.iter().enumerate() {
                if let Some(&role) = self.roles.get(&Key::from_raw(*raw)) {
                    work.hits.push((role, position as u32));
                }
            }
        }
        let seen = &mut work.seen[self.base..self.base + self.role.len()];
        for &(role, _) in &work.hits {
            seen[role as usize] = scan;
        }
        let mut changes = false;
        let mut refused: Option<(u32, MigrateError)> = None;
        for &(r, _) in &work.hits {
            let role = self.role[r as usize];
            if role.moved != NONE {
                let m = &self.moves[role.moved as usize];
                // The key it moves onto is held, and stays: it does not move away itself. The
                // first such key of the earliest step is the error.
                if seen[m.to as usize] == scan
                    && self.role[m.to as usize].moved == NONE
                    && refused.as_ref().is_none_or(|&(p, _)| role.p < p)
                {
                    let (step, to) = self.step_of(role.p);
                    let error = MigrateError::RenameOntoKey {
                        step,
                        to,
                        id,
                        from: source_label(m, names),
                        onto: names.label(m.to_name),
                    };
                    refused = Some((role.p, error));
                }
                changes = true;
            }
            changes |= role.removed;
        }
        if let Some((p, error)) = refused {
            return Scanned::Refused(p, error);
        }
        if changes {
            return Scanned::Changes;
        }
        // No key moves or goes: a write changes the entity if it lacks the key, or (a set)
        // holds another value.
        work_done(self.writes.len());
        let changes = self.writes.iter().any(|write| {
            let role = self.role[write.role as usize];
            if seen[write.role as usize] != scan {
                return true;
            }
            !write.default
                && !layout::lookup(words, role.key).is_some_and(|(tag, raw)| {
                    layout::decode(words, tag, raw).is_identical(&write.value.as_value())
                })
        });
        if changes { Scanned::Changes } else { Scanned::Unchanged }
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

    /// Applies the plan's steps before `limit` (all of them for [`NONE`]) to the entity in
    /// `words`, which [`scan`](Plan::scan) read last; returns whether it may have left holes
    /// (a removal, an overwrite). The steps of a folded plan touch no key and no path of
    /// one another, so each sees the entity as it would step by step.
    fn apply(
        &self,
        words: &mut Vec<u32>,
        work: &mut Work,
        limit: u32,
        id: Id,
        names: &Names,
        reports: &mut [StepReport],
    ) -> Result<bool, MigrateError> {
        let scan = work.scan;
        if limit != NONE {
            let role = &self.role;
            work.hits.retain(|&(r, _)| role[r as usize].p < limit);
        }
        let seen = &work.seen[self.base..self.base + self.role.len()];
        work_done(work.hits.len() + self.writes.len());
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
                let report = &mut reports[role.p as usize];
                report.renamed += 1;
                self.role[to as usize]
            };
            if now.removed {
                work.drops.push(position as usize);
                reports[role.p as usize].removed += 1;
            }
        }
        for &(r, _) in &work.hits {
            let role = self.role[r as usize];
            if role.moved != NONE || role.removed {
                count(reports, &mut work.counted, work.entity, role.p);
            }
        }
        if work.indexed {
            if work.drops.is_empty() {
                // Renamed keys keep their positions (all taken out first: two may swap).
                for &(r, _) in &work.hits {
                    let role = self.role[r as usize];
                    if role.moved != NONE {
                        work.index.remove(&role.key);
                    }
                }
                for &(r, position) in &work.hits {
                    let role = self.role[r as usize];
                    if role.moved != NONE {
                        let to = self.role[self.moves[role.moved as usize].to as usize].key;
                        work.index.insert(to, position);
                    }
                }
            } else {
                // Removals move the keys after them: the index is made again when needed.
                work.indexed = false;
            }
        }
        if !work.drops.is_empty() {
            work_done(layout::len(words));
            layout::remove_at(words, &work.drops);
        }

        // The paths written where there was no key: checked against the entity's structure.
        work.placed.clear();
        for &(r, _) in &work.hits {
            let role = self.role[r as usize];
            if role.moved != NONE && !self.role[self.moves[role.moved as usize].to as usize].removed
            {
                work.placed.push((role.p, Placed::Move(role.moved)));
            }
        }
        let mut holes = !work.drops.is_empty();
        // The writes that change the entity, all set in one pass (a step may hold thousands).
        work.sets.clear();
        for (w, write) in self.writes.iter().enumerate() {
            let p = self.role[write.role as usize].p;
            if p >= limit {
                break;
            }
            let held = self.after_removals(seen, scan, write.role);
            if held {
                if write.default {
                    continue;
                }
                let key = self.role[write.role as usize].key;
                let (tag, raw) = layout::lookup(words, key).expect("INVARIANT: held");
                if layout::decode(words, tag, raw).is_identical(&write.value.as_value()) {
                    continue;
                }
                // The old value's payload, if any, becomes a hole.
                holes = true;
            } else {
                work.placed.push((p, Placed::Write(w as u32)));
            }
            work.sets.push(w as u32);
            let report = count(reports, &mut work.counted, work.entity, p);
            if write.default {
                report.defaulted += 1;
            } else {
                report.set += 1;
            }
        }
        if !work.sets.is_empty() {
            self.set_writes(words, work, id)?;
        }
        if !work.placed.is_empty() {
            self.check_placed(words, work, id, names)?;
        }
        Ok(holes)
    }

    /// Sets the writes of `work.sets` in the entity in `words`, in one pass: the entity's index
    /// finds the keys it holds, new ones are appended in order, and it regrows at most once.
    fn set_writes(
        &self,
        words: &mut Vec<u32>,
        work: &mut Work,
        id: Id,
    ) -> Result<(), MigrateError> {
        let sets = std::mem::take(&mut work.sets);
        let entries = sets.iter().map(|&w| {
            let write = &self.writes[w as usize];
            (self.role[write.role as usize].key, write.value.as_value())
        });
        let n = layout::len(words);
        work_done(n + sets.len());
        let header = layout::header_bytes(n + sets.len()) - layout::header_bytes(n);
        let room = header + entries.clone().map(|(_, v)| v.payload_bytes()).sum::<usize>();
        // The entity's index finds the held keys (a step's writes cost their own count,
        // not the entity's keys); new keys are appended in order.
        work.index(layout::keys(words));
        let mut growing = Growing { words, spare: &mut work.spare };
        growing.reserve_bytes(room).map_err(|error| match error {
            BlobError::TooLarge { required } => {
                // A folded plan never gets here (a run that could pass 4 GiB runs step by
                // step), so the plan's step is the one.
                let (step, to) = self.step_of(self.p as u32);
                MigrateError::BlobTooLarge { step, to, id, required }
            }
            error => unreachable!("INVARIANT: a set fails only as too large, not {error}"),
        })?;
        let index = &work.index;
        bulk::set_all_found(words, entries.clone(), |_, key| {
            index.get(&key).map(|&at| at as usize)
        });
        let mut next = n as u32;
        for (key, _) in entries {
            if let std::collections::hash_map::Entry::Vacant(slot) = work.index.entry(key) {
                slot.insert(next);
                next += 1;
            }
        }
        work.sets = sets;
        Ok(())
    }

    /// Checks each key the plan placed against the entity it left in `words`, step by step:
    /// no key it holds is above a placed path (the path would run through a value), nor, where
    /// names lie under a placed path, named under it (a value would be made of an object).
    /// Each check walks up the tree from the placed nodes and the held names, each node once.
    /// (The steps of a folded plan are apart: the keys above and under one step's paths are
    /// the same after the plan as after that step.)
    fn check_placed(
        &self,
        words: &[u32],
        work: &mut Work,
        id: Id,
        names: &Names,
    ) -> Result<(), MigrateError> {
        let tree = &names.tree;
        let mut below_done = false;
        work.walk += 1;
        let walk = work.walk;
        // In step order, and in order within a step: its moves, then its writes.
        work.placed.sort_by_key(|&(p, _)| p);
        for i in 0..work.placed.len() {
            let (p, placed) = work.placed[i];
            let (step, to) = self.step_of(p);
            let (node, op, has_under) = match placed {
                Placed::Move(m) => {
                    let m = &self.moves[m as usize];
                    (m.to_name, "rename", m.has_under)
                }
                Placed::Write(w) => {
                    let w = &self.writes[w as usize];
                    (w.node, if w.default { "default" } else { "set" }, w.has_under)
                }
            };
            let mut above = tree.parent(node);
            while above != ROOT && work.walked[above as usize] != walk {
                work.walked[above as usize] = walk;
                work.index(layout::keys(words));
                if work.index.contains_key(&tree.key(above)) {
                    return Err(MigrateError::PathThroughValue {
                        step,
                        to,
                        id,
                        op,
                        path: names.label(node),
                        value: names.label(above),
                    });
                }
                above = tree.parent(above);
            }
            if !has_under {
                continue;
            }
            if !below_done {
                // Every node above a name the entity holds (as the plan's last step knows the
                // names: a name a later step adds is under none of the plan's paths).
                below_done = true;
                work_done(layout::len(words));
                for &raw in layout::keys(words) {
                    let Some(held) = tree.named(Key::from_raw(raw)) else { continue };
                    if !names.named_in(held, self.p) {
                        continue;
                    }
                    let mut above = tree.parent(held);
                    while above != ROOT && work.below[above as usize] != walk {
                        work.below[above as usize] = walk;
                        above = tree.parent(above);
                    }
                }
            }
            if work.below[node as usize] == walk {
                // The first held name under it, for the message.
                let under = layout::keys(words)
                    .iter()
                    .filter_map(|&raw| tree.named(Key::from_raw(raw)))
                    .find(|&held| names.named_in(held, self.p) && tree.is_under(held, node))
                    .expect("INVARIANT: a held name is under the node");
                return Err(MigrateError::PathIsObject {
                    step,
                    to,
                    id,
                    op,
                    path: names.label(node),
                    under: names.label(under),
                });
            }
        }
        Ok(())
    }
}

/// The path a move takes its key from, as messages show it: its name, or the rename's own
/// path.
fn source_label(m: &Move<'_>, names: &Names) -> String {
    match m.from_name {
        NONE => m.source.label(),
        node => names.label(node),
    }
}

#[cfg(test)]
/// Sets `key` in the blob in `words` through the blob write path ([`BlobWrite::set_entry`]),
/// moving it into a larger buffer (by way of `spare`) when it lacks room; `Err` with the bytes
/// it would need past 4 GiB. A set looks for the key among the blob's and moves its header to
/// insert it: the blob's keys counted as work (a step's writes set one at a time this way cost
/// an entity keys x writes: what `set_writes` replaced).
fn set_growing(
    words: &mut Vec<u32>,
    spare: &mut Vec<u32>,
    key: Key,
    value: crate::Value<'_>,
) -> Result<(), u64> {
    work_done(layout::len(words));
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
    use std::cell::Cell;

    use super::*;
    use crate::migrate::MigrationStep;
    use crate::value::Value;

    use crate::migrate::work::{COMPOSED, WORK};

    thread_local! {
        /// The budget of a migration's roles at once on this thread, if set: see [`budget`].
        pub(super) static BUDGET: Cell<Option<usize>> = const { Cell::new(None) };
        /// Whether runs of renames are compiled step by step, never composed (`prefix.rs`).
        pub(super) static STEPWISE: Cell<bool> = const { Cell::new(false) };
    }

    /// Subtrees renamed in ways no repeat (`repeat.rs`, periods up to four) finds: round a
    /// cycle of five paths, and a random sequence that moves one of 50 subtrees to a free one
    /// of 100 paths each step. Compiled and run step by step, each step costs its subtree's
    /// names and a visit of each entity holding one (30.2M and 814,000 units for these 2,000
    /// steps); composed (`prefix.rs`), the names, the entities' keys and the steps, a few
    /// times each (22,207 and 32,203). And the same back and forth with a default between
    /// every two renames, 400 steps: each rename moved the defaults before it too (entities x
    /// steps^2 / 8).
    #[test]
    fn renames_that_do_not_repeat_cost_the_keys_and_the_steps() {
        let (entities, keys, steps) = (100_usize, 50_usize, 2_000_u32);
        let seed = Cell::new(0x9e37_79b9_7f4a_7c15_u64);
        let next = |n: usize| random(&seed, n);
        let cycle = ["x", "y", "z", "w", "v"];
        let round = (0..steps).fold(Migrations::new(steps), |m, i| {
            let (from, to) = (cycle[i as usize % 5], cycle[(i as usize + 1) % 5]);
            m.step(MigrationStep::to(i + 1).rename(from, to))
        });
        let mut slots: Vec<usize> = (0..100).collect();
        let random = (0..steps).fold(Migrations::new(steps), |m, i| {
            // Slots 0..50 are taken, 50..100 free: one taken moves to a free one.
            let (taken, free) = (next(50), 50 + next(50));
            let step = MigrationStep::to(i + 1)
                .rename(&format!("s{}", slots[taken]), &format!("s{}", slots[free]));
            slots.swap(taken, free);
            m.step(step)
        });
        // Back and forth with a default between (`x -> y`, default `y.d1`, `y -> x`, default
        // `x.d3`, ...): every rename moves every default before it too.
        let short = 400;
        let between = (0..short).fold(Migrations::new(short), |m, i| {
            let step = MigrationStep::to(i + 1);
            let (from, to) = if i % 4 < 2 { ("x", "y") } else { ("y", "x") };
            m.step(match i % 2 {
                0 => step.rename(from, to),
                _ => step.default(&format!("{to}.d{i}"), 1),
            })
        });
        let cases = [
            ("cycle", &round, None, 0),
            ("random", &random, Some(50), 0),
            ("between", &between, None, short as usize / 2),
        ];
        for (name, migrations, top, defaults) in cases {
            let mut store = Store::new();
            for e in 0..entities {
                let at = top.map_or("x".to_owned(), |top| format!("s{}", e % top));
                store.insert_entries((0..keys).map(|k| (format!("{at}.k{k}"), 1))).unwrap();
            }
            let mut stepwise = store.clone();
            STEPWISE.with(|s| s.set(true));
            WORK.with(|work| work.set(0));
            let expected = migrations.apply(&mut stepwise).unwrap();
            let before = WORK.with(Cell::get);
            STEPWISE.with(|s| s.set(false));
            WORK.with(|work| work.set(0));
            let report = migrations.apply(&mut store).unwrap();
            let work = WORK.with(Cell::get);
            assert_eq!(report, expected, "{name}");
            let steps = migrations.steps().len();
            let bound = 12 * (entities * (keys + defaults) + steps) as u64;
            assert!(work <= bound, "{name}: {work} units, past {bound}");
            assert!(before > 4 * bound, "{name}: {before} units step by step");
            let id = store.iter().next().unwrap().0;
            let json = crate::ExportOptions::json();
            assert_eq!(store.export(id, &json), stepwise.export(id, &json), "{name}");
        }
    }

    /// Random runs of renames and subtree renames, broken by defaults, removals and sets, over
    /// random key trees: composed (`prefix.rs`), each entity's keys and values, the reports
    /// and the error are those of the steps compiled and run one by one.
    #[test]
    fn composed_renames_are_the_steps_one_by_one() {
        const SEGMENTS: [&str; 6] = ["a", "b", "c", "d", "e", "f"];
        let seed = Cell::new(0x2545_f491_4f6c_dd1d_u64);
        let next = |n: usize| random(&seed, n);
        let path = || {
            let depth = 1 + next(3);
            let segments: Vec<&str> = (0..depth).map(|_| SEGMENTS[next(6)]).collect();
            segments.join(".")
        };
        let (mut composed, mut followed, mut defaulted, mut failed) = (0, 0, 0, 0);
        let cases = 3_000;
        for case in 0..cases {
            let mut store = Store::new();
            for _ in 0..=next(5) {
                let keys: Vec<(String, u8)> = (0..=next(4) as u8).map(|k| (path(), k)).collect();
                // (Keys that do not fit together make no entity.)
                let _ = store.insert_entries(keys);
            }
            let steps = 2 + next(12);
            let migrations = (0..steps).fold(Migrations::new(steps as u32), |m, i| {
                let step = MigrationStep::to(i as u32 + 1);
                m.step(match next(10) {
                    0 => step.remove(&path()),
                    1 => step.default(&path(), next(3) as u8),
                    2 => step.set(&path(), next(3) as u8),
                    // Two renames at once, apart or not (a swap).
                    3 => {
                        let (a, b) = (path(), path());
                        step.rename(&a, &b).rename(&b, &a)
                    }
                    _ => step.rename(&path(), &path()),
                })
            });
            let mut stepwise = store.clone();
            STEPWISE.with(|s| s.set(true));
            let expected = migrations.apply(&mut stepwise);
            STEPWISE.with(|s| s.set(false));
            let before = COMPOSED.with(Cell::get);
            let got = migrations.apply(&mut store);
            let after = COMPOSED.with(Cell::get);
            let field = |n: u64, at: u32| (n >> at) & 0xff_ffff;
            composed += usize::from(field(after, 0) > field(before, 0));
            followed += usize::from(field(after, 24) > field(before, 24));
            defaulted += usize::from(field(after, 48) > field(before, 48));
            match (&got, &expected) {
                (Ok(got), Ok(expected)) => {
                    assert_eq!(got, expected, "case {case}");
                    let json = crate::ExportOptions::json();
                    for ((id, _), (other, _)) in store.iter().zip(stepwise.iter()) {
                        assert_eq!(id, other, "case {case}");
                        let (a, b) = (store.export(id, &json), stepwise.export(id, &json));
                        assert_eq!(a.unwrap(), b.unwrap(), "case {case}, entity {id}");
                        let (a, b) = (store.get(id).unwrap(), stepwise.get(id).unwrap());
                        assert_eq!(a.as_words(), b.as_words(), "case {case}, entity {id}");
                    }
                    assert_eq!(store.data_version(), stepwise.data_version());
                }
                (Err(got), Err(expected)) => {
                    assert_eq!(got.to_string(), expected.to_string(), "case {case}");
                    failed += 1;
                }
                _ => panic!("case {case}: {got:?} composed, {expected:?} step by step"),
            }
        }
        assert!(composed > cases / 10, "{composed} of {cases} composed a run");
        assert!(followed > cases / 100, "{followed} of {cases} followed an entity");
        assert!(defaulted > cases / 100, "{defaulted} of {cases} composed a default");
        assert!(failed > cases / 20 && failed < 3 * cases / 4, "{failed} of {cases} failed");
    }

    /// A number below `n` from the xorshift generator in `seed`.
    fn random(seed: &Cell<u64>, n: usize) -> usize {
        let mut x = seed.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        seed.set(x);
        (x % n as u64) as usize
    }

    /// The work of migrating `entities` entities of `keys` keys each by `steps` steps made by
    /// `step` (given its position).
    fn work_of(
        entities: usize,
        keys: usize,
        steps: usize,
        step: impl Fn(usize) -> MigrationStep,
    ) -> u64 {
        let mut store = Store::new();
        for _ in 0..entities {
            store.insert_entries((0..keys).map(|k| (format!("k{k}"), 1))).unwrap();
        }
        let migrations = (0..steps).fold(Migrations::new(steps as u32), |m, i| m.step(step(i)));
        WORK.with(|work| work.set(0));
        let report = migrations.apply(&mut store).unwrap();
        assert_eq!(report.steps.len(), steps);
        WORK.with(Cell::get)
    }

    /// One-key steps that are apart fold into one pass over each entity: the work grows with
    /// the entities' keys and the steps, not with entities x steps x keys (it was about
    /// entities x steps x (keys + steps / 2) words moved, one step at a time). Steps that do
    /// not commute cost an entity only where they change it.
    #[test]
    fn folded_steps_cost_the_keys_not_the_steps() {
        let (entities, keys) = (40, 50);
        let set = |i: usize| MigrationStep::to(i as u32 + 1).set(&format!("s{i}"), 2);
        let default = |i: usize| MigrationStep::to(i as u32 + 1).default(&format!("d{i}"), 1);
        let rename =
            |i: usize| MigrationStep::to(i as u32 + 1).rename(&format!("k{i}"), &format!("r{i}"));
        let remove = |i: usize| MigrationStep::to(i as u32 + 1).remove(&format!("k{i}"));
        // A chain of renames does not commute: a run a step. An entity holding none of its
        // keys is not visited by it; one holding the first pays a visit a step.
        let chain = |start: &'static str| {
            move |i: usize| {
                let from = if i == 0 { start.to_owned() } else { format!("c{i}") };
                MigrationStep::to(i as u32 + 1).rename(&from, &format!("c{}", i + 1))
            }
        };
        for steps in [50, 500, 2_000] {
            // Each entity ends with keys + steps keys: a pass over them, a few times.
            let written = (entities * (keys + steps)) as u64;
            assert!(work_of(entities, keys, steps, set) <= 6 * written, "{steps} sets");
            assert!(work_of(entities, keys, steps, default) <= 6 * written, "{steps} defaults");
            let kept = (entities * keys + steps) as u64;
            assert!(work_of(entities, keys, steps, rename) <= 6 * kept, "{steps} renames");
            assert!(work_of(entities, keys, steps, remove) <= 6 * kept, "{steps} removals");
            assert!(work_of(entities, keys, steps, chain("z")) <= 6 * kept, "{steps} chained");
            let moved = work_of(entities, keys, steps, chain("k0"));
            // Composed (`chain.rs`): an entity holding one key of the chain jumps it at once
            // (one visit a step would be entities x steps: 80,000 units for 2,000 steps).
            assert!(moved <= 6 * kept, "{steps} chained renames of a held key: {moved}");
        }
    }

    /// A subtree renamed back and forth (`x -> y`, `y -> x`: 10,000 steps over 10,000 names took
    /// 345 s) cost a compile of the subtree and a visit of each entity's keys a step: about
    /// (names + entities x keys) x steps units (24.9M for these 2,000 steps, 1.27M for 101).
    /// Past three periods the steps are copies (`repeat.rs`): the work is that of three periods
    /// (90,812 units for 8 steps as for 2,000), and the same round a cycle of three paths
    /// (153,127 for 101 steps, 9 of them then 2 compiled).
    #[test]
    fn renames_back_and_forth_cost_the_keys_not_the_steps() {
        let (entities, keys) = (20, 200);
        let cycles: [&[(&str, &str)]; 2] =
            [&[("x", "y"), ("y", "x")], &[("x", "y"), ("y", "z"), ("z", "x")]];
        for (cycle, steps) in cycles.into_iter().flat_map(|c| [8, 101, 2_000].map(|n| (c, n))) {
            let mut store = Store::new();
            for e in 0..entities {
                let held = (0..keys).map(|k| (format!("x.k{k}"), 1));
                // Some hold keys under `y` too, which the renames take with them from the
                // second step on.
                let under_y = (0..e % 3).map(|k| (format!("y.b{k}"), 2));
                store.insert_entries(held.chain(under_y)).unwrap();
            }
            let step = |i: u32| {
                let (from, to) = cycle[i as usize % cycle.len()];
                MigrationStep::to(i + 1).rename(from, to)
            };
            let migrations = (0..steps).fold(Migrations::new(steps), |m, i| m.step(step(i)));
            WORK.with(|work| work.set(0));
            let report = migrations.apply(&mut store).unwrap();
            let work = WORK.with(Cell::get);
            // Each of the three periods and of the steps after them scans every key a few
            // times.
            let per_key = 12 * cycle.len() as u64 + 6;
            let bound = per_key * (entities * keys) as u64 + 6 * u64::from(steps);
            assert!(work <= bound, "{cycle:?} x {steps}: {work} units, past {bound}");
            let last = report.steps.last().unwrap();
            // The last step moves every key of every entity (a `y.b` key, once taken, too).
            let moved = (0..entities).map(|e| keys + e % 3).sum::<usize>();
            assert_eq!((last.entities, last.renamed), (entities, moved), "{cycle:?} x {steps}");
            let at = cycle[(steps as usize - 1) % cycle.len()].1;
            let id = store.iter().next().unwrap().0;
            let kept = format!("{at}.k{}", keys - 1);
            assert!(store.get(id).unwrap().contains_key(kept.as_str()), "{cycle:?} x {steps}");
        }
    }

    /// Each default of a step was added to each entity one at a time, each scanning and moving
    /// its keys (1,000 entities x 10,000 defaults: 27.9 s): about entities x defaults^2 / 2
    /// units (250M for these 20 x 5,000). A step's writes are set in one pass (`set_writes`):
    /// the entity's keys and the writes, a few times.
    #[test]
    fn a_step_of_many_defaults_costs_its_writes_once() {
        let (entities, keys) = (20, 50);
        for writes in [100, 1_000, 5_000] {
            let step = |_| {
                let step = MigrationStep::to(1);
                let step = (0..writes).fold(step, |step, i| step.default(&format!("d{i}"), i));
                // Half of the sets overwrite keys the entities hold.
                (0..keys).step_by(2).fold(step, |step, k| step.set(&format!("k{k}"), 2))
            };
            let work = work_of(entities, keys, 1, step);
            let bound = 6 * (entities * (keys + writes)) as u64;
            assert!(work <= bound, "{writes} defaults: {work} units, past {bound}");
        }
    }

    /// The roles of a migration's plans (each a few words in its tables), compiled.
    fn roles_of(store: &Store, migrations: &Migrations) -> usize {
        let steps = migrations.check().unwrap();
        let mut names = Names::of(store);
        let plans = steps.iter().enumerate().map(|(p, step)| Plan::compile(step, p, &mut names));
        plans.map(|plan| plan.unwrap().role.len()).sum()
    }

    /// 10,000 removals of a subtree of 10,000 names took 4.2 GB: each held a role per name. A
    /// subtree a removal took holds none until a step puts a key in it again (then its names
    /// that hold no key still hold none), so repeated removals cost the names once.
    #[test]
    fn repeated_subtree_removals_hold_each_name_once() {
        let (names, steps) = (400, 400);
        let mut store = Store::new();
        store.insert_entries((0..names).map(|k| (format!("x.k{k}"), 1))).unwrap();
        let removals = (0..steps)
            .fold(Migrations::new(steps), |m, i| m.step(MigrationStep::to(i + 1).remove("x")));
        assert_eq!(roles_of(&store, &removals), names + steps as usize);
        // Each removal then a default of one name in the subtree: that name is put back, the
        // others stay gone.
        let refilled = (0..steps).fold(Migrations::new(2 * steps), |m, i| {
            m.step(MigrationStep::to(2 * i + 1).remove("x"))
                .step(MigrationStep::to(2 * i + 2).default("x.k0", 2))
        });
        assert!(roles_of(&store, &refilled) <= names + 3 * steps as usize);
        let mut migrated = store.clone();
        let report = refilled.apply(&mut migrated).unwrap();
        assert_eq!(report.steps[0].removed, names);
        assert_eq!(report.steps[2].removed, 1);
        assert_eq!(report.steps[2 * steps as usize - 1].defaulted, 1);
    }

    /// Migrations past the budget of roles run in batches (`run_batches`), each over the arena
    /// the one before left: on 3,000 random migrations of random stores (a quarter renames
    /// taken in turn, whose copies are not compiled), with budgets of 1 to 8 roles, the store
    /// (its bytes too), the report and the error are those of one pass.
    #[test]
    fn batches_of_steps_run_as_one_pass() {
        const SEGMENTS: [&str; 3] = ["a", "b", "c"];
        let seed = Cell::new(0x9e37_79b9_7f4a_7c15_u64);
        let next = |n: usize| random(&seed, n);
        let (mut batched, mut failed) = (0, 0);
        for case in 0..3_000 {
            let path = || {
                let first = SEGMENTS[next(3)];
                if next(2) == 0 {
                    first.to_owned()
                } else {
                    format!("{first}.{}", SEGMENTS[next(3)])
                }
            };
            let mut store = Store::new();
            for _ in 0..=next(4) {
                let keys: Vec<(String, u8)> = (0..next(4) as u8).map(|k| (path(), k)).collect();
                // (Keys that do not fit together, `a` and `a.b`, make no entity.)
                let _ = store.insert_entries(keys);
            }
            let steps = 1 + next(12);
            // A quarter of them renames taken in turn (`repeat.rs`), 8 to 19 steps.
            let cycle: Vec<(String, String)> = (0..=next(3)).map(|_| (path(), path())).collect();
            let repeats = case % 4 == 0;
            let steps = if repeats { 4 * cycle.len() + next(8) } else { steps };
            let migrations = (0..steps).fold(Migrations::new(steps as u32), |m, i| {
                let step = MigrationStep::to(i as u32 + 1);
                if repeats {
                    let (from, to) = &cycle[i % cycle.len()];
                    return m.step(step.rename(from, to));
                }
                m.step(match next(4) {
                    0 => step.rename(&path(), &path()),
                    1 => step.remove(&path()),
                    2 => step.default(&path(), next(3) as u8),
                    _ => step.set(&path(), next(3) as u8),
                })
            });
            let mut one_pass = store.clone();
            let expected = migrations.apply(&mut one_pass);
            BUDGET.with(|budget| budget.set(Some(1 + case % 8)));
            let got = migrations.apply(&mut store);
            BUDGET.with(|budget| budget.set(None));
            match (&got, &expected) {
                (Ok(got), Ok(expected)) => {
                    assert_eq!(got, expected, "case {case}");
                    assert_eq!(store, one_pass, "case {case}");
                    assert_eq!(store.to_bytes(), one_pass.to_bytes(), "case {case}");
                }
                (Err(got), Err(expected)) => {
                    assert_eq!(got.to_string(), expected.to_string(), "case {case}");
                    failed += 1;
                }
                _ => panic!("case {case}: {got:?} in batches, {expected:?} in one pass"),
            }
            batched += 1;
        }
        assert!(failed > 300 && failed < 2_700, "{failed} of {batched} failed");
    }

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
