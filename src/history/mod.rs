//! Time travel: [`Snapshot`]s (the whole store, copied at memcpy speed), change tracking
//! ([`Mark`], [`Changes`], deltas since a mark in O(changed)) and an undo/redo [`History`]
//! built on both.
//!
//! Each is a type that takes the store it reads or changes as an argument
//! ([`Snapshot::new`]`(&store)`, [`Mark::changes`]`(&store)`, [`History::undo`]`(&mut store)`),
//! with one entry point on `Store`: [`Store::mark`]. Change tracking itself stays inside the
//! store (`crate::store::track`), because every write stamps it: a mark only reads the
//! stamps, so it starts from the store that keeps them.
//!
//! A step records what each entity stores (overrides and tombstones, not what it reads
//! through its prototypes) and the prototype links that changed: undo puts both back.

mod excerpt;
mod snapshot;
mod track;

use std::collections::VecDeque;
use std::fmt;

pub use excerpt::{Excerpt, Since};
pub use snapshot::Snapshot;
pub use track::{Changes, Mark};

use crate::store::delta::Placement;
use crate::store::{Store, StorePatch};

/// Undo and redo over a store's committed states, each step a pair of deltas made from change
/// tracking: O(changed) to commit, undo or redo.
///
/// [`commit`](History::commit) records the store's state. The first commit copies it (the
/// history keeps one copy of the current committed state, beside its steps); each later one
/// looks only at the entities the store stamped since the commit before, and records the step
/// between them as two [`StorePatch`]es, forward and back. [`undo`](History::undo) and
/// [`redo`](History::redo) move the store one step, patching only those entities; changes not
/// yet committed are discarded first (as [`revert`](History::revert) does). A commit after an
/// undo drops the steps that redo would have replayed; the oldest steps are dropped to keep
/// the steps' bytes (as delta files) under `max_bytes`.
///
/// ```text
///  steps:   [s1][s2][s3][s4]      commit: drops s4.., appends s5, drops s1.. while over max_bytes
///                    ▲ cursor     undo: applies s3 back; redo: applies s4 forward
/// ```
///
/// Handles come back with the states: an entity removed and brought back by an undo has its
/// old handle, and a handle issued after a state is issued again once the store is back there.
///
/// # Examples
///
/// ```
/// use datacomp::{History, Store};
///
/// let mut world = Store::new();
/// let hero = world.insert_entries([("stats.health", 100.0)]).unwrap();
/// let mut history = History::with_max_bytes(64 << 20);
/// history.commit(&world);
///
/// world.get_mut(hero).unwrap().set("stats.health", 60.0).unwrap();
/// history.commit(&world);
/// world.remove(hero);
/// history.commit(&world);
///
/// assert!(history.undo(&mut world)); // the hero is back, at 60
/// assert_eq!(world.get(hero).unwrap().get_float("stats.health"), Some(60.0));
/// assert!(history.undo(&mut world)); // at 100
/// assert_eq!(world.get(hero).unwrap().get_float("stats.health"), Some(100.0));
/// assert!(!history.undo(&mut world), "nothing before the first commit");
/// assert!(history.redo(&mut world));
/// assert_eq!(world.get(hero).unwrap().get_float("stats.health"), Some(60.0));
/// ```
pub struct History {
    /// The steps' bytes stay at most this.
    max_bytes: usize,
    /// The committed state the store is at, as a mark of it; `None` before the first commit.
    mark: Option<Mark>,
    // INVARIANT: `steps[i]` turns the state before it into the one after it; the mark's state
    // is the one after `steps[cursor - 1]` (before `steps[cursor]`).
    steps: VecDeque<Step>,
    cursor: usize,
    // INVARIANT: the sum of the steps' `bytes`.
    bytes: usize,
}

/// One committed change: the delta from the state before to the state after, and back.
struct Step {
    forward: StorePatch,
    back: StorePatch,
    /// Both deltas' sizes as files.
    bytes: usize,
}

impl History {
    /// An empty history whose steps take at most `max_bytes` bytes (as delta files): past
    /// it, the oldest steps are forgotten.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::History;
    ///
    /// let history = History::with_max_bytes(1 << 20); // 1 MiB of steps
    /// assert!(!history.can_undo() && !history.can_redo());
    /// ```
    #[must_use]
    pub fn with_max_bytes(max_bytes: usize) -> History {
        History { max_bytes, mark: None, steps: VecDeque::new(), cursor: 0, bytes: 0 }
    }

    /// An empty history of at most `max_bytes` bytes of steps:
    /// [`with_max_bytes`](History::with_max_bytes), under a name that did not say its unit.
    #[deprecated(note = "use `History::with_max_bytes`, which names the unit")]
    #[must_use]
    pub fn new(max_bytes: usize) -> History {
        History::with_max_bytes(max_bytes)
    }

    /// Records the store's state as the next step; returns whether there was a change to
    /// record (the first commit records the state it starts from, and returns `false`).
    ///
    /// Costs O(changed since the last commit) (see [`Mark`] for when it compares every entity
    /// instead), plus a copy of the store on the first commit.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{History, Store};
    ///
    /// let mut world = Store::new();
    /// let mut history = History::with_max_bytes(1 << 20);
    /// assert!(!history.commit(&world), "the starting state");
    /// assert!(!history.commit(&world), "nothing changed");
    /// world.insert_empty();
    /// assert!(history.commit(&world));
    /// assert_eq!(history.undo_steps(), 1);
    /// ```
    pub fn commit(&mut self, store: &Store) -> bool {
        let Some(mark) = &mut self.mark else {
            self.mark = Some(store.mark());
            return false;
        };
        let Some(step) = Step::between(mark, store) else {
            // Another store whose handles are numbered from elsewhere: start over from it.
            self.clear();
            self.mark = Some(store.mark());
            return false;
        };
        step.forward.apply_trusted(&mut mark.state, Placement::CopyFrom(store));
        mark.store = store.tracker().id();
        mark.epoch = store.tracker().next_epoch();
        if step.forward.changes_nothing(&step.back) {
            return false;
        }
        for dropped in self.steps.drain(self.cursor..) {
            self.bytes -= dropped.bytes;
        }
        self.bytes += step.bytes;
        self.steps.push_back(step);
        self.cursor += 1;
        while self.bytes > self.max_bytes {
            let Some(oldest) = self.steps.pop_front() else { break };
            self.bytes -= oldest.bytes;
            self.cursor -= 1;
        }
        true
    }

    /// Puts the store back to the state before the last step; returns `false` (and changes
    /// nothing) when there is no step to undo. Changes not committed are discarded.
    ///
    /// Costs O(changed by the step and since the last commit); a store other than the one
    /// committed is first made the committed state whole.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{History, Store};
    ///
    /// let mut world = Store::new();
    /// let mut history = History::with_max_bytes(1 << 20);
    /// history.commit(&world);
    /// let id = world.insert_empty();
    /// history.commit(&world);
    /// assert!(history.undo(&mut world));
    /// assert!(!world.contains(id));
    /// assert!(!history.undo(&mut world));
    /// ```
    pub fn undo(&mut self, store: &mut Store) -> bool {
        if self.cursor == 0 {
            return false;
        }
        self.cursor -= 1;
        self.travel(store, |step| &step.back, self.cursor);
        true
    }

    /// Replays the step that the last [`undo`](History::undo) took back; returns `false` (and
    /// changes nothing) when there is none. Changes not committed are discarded.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{History, Store};
    ///
    /// let mut world = Store::new();
    /// let mut history = History::with_max_bytes(1 << 20);
    /// history.commit(&world);
    /// let id = world.insert_entries([("gold", 5.0)]).unwrap();
    /// history.commit(&world);
    /// history.undo(&mut world);
    /// assert!(history.redo(&mut world));
    /// assert_eq!(world.get(id).unwrap().get_float("gold"), Some(5.0));
    /// assert!(!history.redo(&mut world));
    /// ```
    pub fn redo(&mut self, store: &mut Store) -> bool {
        if self.cursor == self.steps.len() {
            return false;
        }
        self.cursor += 1;
        self.travel(store, |step| &step.forward, self.cursor - 1);
        true
    }

    /// Discards the changes made since the last commit (or the last undo or redo); returns
    /// `false` when nothing was committed yet. O(changed).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{History, Store};
    ///
    /// let mut world = Store::new();
    /// let id = world.insert_entries([("gold", 5.0)]).unwrap();
    /// let mut history = History::with_max_bytes(1 << 20);
    /// history.commit(&world);
    /// world.get_mut(id).unwrap().set("gold", 0.0).unwrap();
    /// assert!(history.revert(&mut world));
    /// assert_eq!(world.get(id).unwrap().get_float("gold"), Some(5.0));
    /// ```
    pub fn revert(&mut self, store: &mut Store) -> bool {
        let Some(mark) = &mut self.mark else {
            return false;
        };
        revert(store, mark);
        mark.store = store.tracker().id();
        mark.epoch = store.tracker().next_epoch();
        true
    }

    /// Reverts the store to the mark's state, then applies `patch(steps[at])` to both.
    fn travel(&mut self, store: &mut Store, patch: impl Fn(&Step) -> &StorePatch, at: usize) {
        let mark = self.mark.as_mut().expect("INVARIANT: a step was committed after the mark");
        revert(store, mark);
        let patch = patch(&self.steps[at]);
        patch.apply_trusted(store, Placement::InPlace);
        patch.apply_trusted(&mut mark.state, Placement::CopyFrom(store));
        mark.store = store.tracker().id();
        mark.epoch = store.tracker().next_epoch();
    }

    /// Whether there is a step to undo.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{History, Store};
    ///
    /// let mut world = Store::new();
    /// let mut history = History::with_max_bytes(1 << 20);
    /// history.commit(&world);
    /// world.insert_empty();
    /// history.commit(&world);
    /// assert!(history.can_undo());
    /// ```
    #[must_use]
    pub fn can_undo(&self) -> bool {
        self.cursor > 0
    }

    /// Whether there is a step to redo.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{History, Store};
    ///
    /// let mut world = Store::new();
    /// let mut history = History::with_max_bytes(1 << 20);
    /// history.commit(&world);
    /// world.insert_empty();
    /// history.commit(&world);
    /// history.undo(&mut world);
    /// assert!(history.can_redo());
    /// ```
    #[must_use]
    pub fn can_redo(&self) -> bool {
        self.cursor < self.steps.len()
    }

    /// Steps that [`undo`](History::undo) can take back.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{History, Store};
    ///
    /// let mut world = Store::new();
    /// let mut history = History::with_max_bytes(1 << 20);
    /// history.commit(&world);
    /// for _ in 0..3 {
    ///     world.insert_empty();
    ///     history.commit(&world);
    /// }
    /// assert_eq!(history.undo_steps(), 3);
    /// ```
    #[must_use]
    pub fn undo_steps(&self) -> usize {
        self.cursor
    }

    /// Steps that [`redo`](History::redo) can replay.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{History, Store};
    ///
    /// let mut world = Store::new();
    /// let mut history = History::with_max_bytes(1 << 20);
    /// history.commit(&world);
    /// world.insert_empty();
    /// history.commit(&world);
    /// history.undo(&mut world);
    /// assert_eq!(history.redo_steps(), 1);
    /// ```
    #[must_use]
    pub fn redo_steps(&self) -> usize {
        self.steps.len() - self.cursor
    }

    /// Bytes of the steps held (their deltas as files), at most `max_bytes`. The copy of the
    /// committed state is not counted.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{History, Store};
    ///
    /// let mut world = Store::new();
    /// let mut history = History::with_max_bytes(1 << 20);
    /// history.commit(&world);
    /// world.insert_entries([("name", "Orc")]).unwrap();
    /// history.commit(&world);
    /// assert!(history.byte_len() > 0 && history.byte_len() <= 1 << 20);
    /// ```
    #[must_use]
    pub fn byte_len(&self) -> usize {
        self.bytes
    }

    /// Forgets every step and the committed state: the next commit starts over.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{History, Store};
    ///
    /// let mut world = Store::new();
    /// let mut history = History::with_max_bytes(1 << 20);
    /// history.commit(&world);
    /// world.insert_empty();
    /// history.commit(&world);
    /// history.clear();
    /// assert!(!history.can_undo() && history.byte_len() == 0);
    /// ```
    pub fn clear(&mut self) {
        self.mark = None;
        self.steps.clear();
        self.cursor = 0;
        self.bytes = 0;
    }
}

/// Makes `store` the mark's state again, patching only the slots stamped since the mark (or
/// copying the state whole when the store cannot tell them).
fn revert(store: &mut Store, mark: &Mark) {
    match mark.changed_slots(store) {
        Some(slots) => StorePatch::diff_slots(store, &mark.state, (&slots, true), 0, None)
            .apply_trusted(store, Placement::InPlace),
        None => store.copy_from(&mark.state),
    }
}

impl Step {
    /// The step from the mark's state to the store's; `None` when their handle maps number
    /// slots from different indices (a map that was reset), which a step cannot express.
    fn between(mark: &Mark, store: &Store) -> Option<Step> {
        let (before, after) = (&mark.state, store);
        let tracked = mark.changed_slots(store);
        let is_tracked = tracked.is_some();
        let slots = if let Some(slots) = tracked {
            slots
        } else {
            let (a, b) = (before.index().as_raw().header, after.index().as_raw().header);
            if a.base != b.base {
                return None;
            }
            let count = before.index().slot_count().max(after.index().slot_count());
            (0..count as u32).collect()
        };
        // The crc of a base is only checked when a delta file is applied: these never are.
        let forward = StorePatch::diff_slots(before, after, (&slots, is_tracked), 0, None);
        let back = StorePatch::diff_slots(after, before, (&slots, is_tracked), 0, Some(&forward));
        let bytes = forward.file_len() + back.file_len();
        Some(Step { forward, back, bytes })
    }
}

impl fmt::Debug for History {
    /// Counts: `History { undo_steps: 3, redo_steps: 1, bytes: 5120, max_bytes: 1048576, .. }`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("History")
            .field("undo_steps", &self.undo_steps())
            .field("redo_steps", &self.redo_steps())
            .field("bytes", &self.bytes)
            .field("max_bytes", &self.max_bytes)
            .finish_non_exhaustive()
    }
}
