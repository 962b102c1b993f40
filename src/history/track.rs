//! Marks and what changed since one: [`Mark`] and its answers about a store ([`Changes`],
//! deltas), built on the store's change tracker (`crate::store::track`). [`Store::mark`] is the
//! one entry point on `Store`: the tracker lives in the store, since every write stamps it.

use std::fmt;
use std::sync::OnceLock;

use crate::handle_map::Id;
use crate::store::delta::{Placement, Target};
use crate::store::{Store, StorePatch};

/// A store's state at one moment, kept so that what changed since then is found in time
/// proportional to the changes: made by [`Store::mark`].
///
/// A mark holds a copy of the store (as a [`Snapshot`](crate::Snapshot) does, one memcpy of
/// its buffers) and the epoch the store's change tracking started at that moment. Then
/// [`changes`](Mark::changes), [`delta`](Mark::delta) and [`take_delta`](Mark::take_delta)
/// look only at the slots the store stamped since: they cost O(changed), not O(entities). With
/// a mark of another store (a clone, a loaded copy) or one the store can no longer answer from
/// its log (after a [`Snapshot::restore`](crate::Snapshot::restore), a delta applied, a
/// `clear`, or more changes since than the store has slots, twice over), they compare every
/// entity instead, and give the same answer.
///
/// # Examples
///
/// ```
/// use datacomp::Store;
///
/// let mut world = Store::new();
/// let hero = world.insert_entries([("stats.health", 100.0)]).unwrap();
/// let orc = world.insert_entries([("stats.health", 30.0)]).unwrap();
/// let mark = world.mark();
///
/// world.get_mut(hero).unwrap().set("stats.health", 95.0).unwrap();
/// world.remove(orc);
/// let imp = world.insert_entries([("stats.health", 5.0)]).unwrap();
///
/// let changes = mark.changes(&world);
/// assert_eq!((changes.inserted(), changes.removed(), changes.changed()), (&[imp][..], &[orc][..], &[hero][..]));
/// assert_eq!(mark.state().get(orc).unwrap().get_float("stats.health"), Some(30.0));
/// ```
#[derive(Clone)]
pub struct Mark {
    /// The identity of the marked store.
    pub(crate) store: u64,
    /// The epoch the mark started: the store's slots stamped with it or later changed since.
    pub(crate) epoch: u64,
    /// The marked state.
    pub(crate) state: Store,
    /// The crc32 of `state`'s contents, for a delta's base, computed on first use.
    pub(crate) crc: OnceLock<u32>,
}

impl Mark {
    /// The marked state, to read.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Store;
    ///
    /// let mut world = Store::new();
    /// let id = world.insert_entries([("gold", 10.0)]).unwrap();
    /// let mark = world.mark();
    /// world.get_mut(id).unwrap().set("gold", 0.0).unwrap();
    /// assert_eq!(mark.state().get(id).unwrap().get_float("gold"), Some(10.0));
    /// ```
    #[must_use]
    pub fn state(&self) -> &Store {
        &self.state
    }

    /// The entities inserted, removed and changed in `store` since this mark, in O(changed)
    /// (see [`Mark`] for when it compares every entity instead).
    ///
    /// An entity changed and changed back counts as unchanged; one removed and another
    /// inserted in its slot counts as both.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Store;
    ///
    /// let mut world = Store::new();
    /// let old = world.insert_empty();
    /// let mark = world.mark();
    /// world.remove(old);
    /// let new = world.insert_empty(); // the same slot, the next generation
    /// let changes = mark.changes(&world);
    /// assert_eq!((changes.removed(), changes.inserted()), (&[old][..], &[new][..]));
    /// ```
    #[must_use]
    pub fn changes(&self, store: &Store) -> Changes {
        let old = &self.state;
        let mut changes = Changes::default();
        let Some(slots) = store.tracker().changed_since(self.store, self.epoch) else {
            for (id, blob) in store.iter() {
                match old.get(id) {
                    None => changes.inserted.push(id),
                    Some(before) if before != blob => changes.changed.push(id),
                    Some(_) => {}
                }
            }
            changes.removed = old.index().ids().filter(|&id| !store.contains(id)).collect();
            return changes.sort();
        };
        for slot in slots {
            let before = old.index().live_at_slot(slot as usize).map(|(id, _)| id);
            let now = store.index().live_at_slot(slot as usize).map(|(id, _)| id);
            match (before, now) {
                (Some(a), Some(b)) if a == b => {
                    if old.get(a) != store.get(a) {
                        changes.changed.push(a);
                    }
                }
                (before, now) => {
                    changes.removed.extend(before);
                    changes.inserted.extend(now);
                }
            }
        }
        changes.sort()
    }

    /// The changes from this mark's state to `store` as a delta, in O(changed): equal to
    /// [`StorePatch::diff`]`(mark.state(), store)`, byte for byte.
    ///
    /// The first delta from a mark also computes the crc32 of the marked state (the base the
    /// delta names; a pass over its bytes at crc32 speed), which the mark keeps for later
    /// ones.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Store, StorePatch};
    ///
    /// let mut world = Store::new();
    /// let id = world.insert_entries([("gold", 10.0)]).unwrap();
    /// let base = world.to_bytes(); // the base save
    /// let mark = world.mark();
    /// world.get_mut(id).unwrap().set("gold", 12.0).unwrap();
    ///
    /// let delta = mark.delta(&world);
    /// assert_eq!(delta.to_bytes(), StorePatch::diff(mark.state(), &world).to_bytes());
    /// let mut loaded = Store::from_bytes(&base)?;
    /// delta.apply(&mut loaded)?;
    /// assert_eq!(loaded, world);
    /// # Ok::<(), datacomp::LoadError>(())
    /// ```
    ///
    /// The incremental save of a world whose base was saved when the mark was taken: the
    /// delta saved as a file ([`StorePatch::save`], atomic), applied to that base with
    /// [`StorePatch::apply`] (or `datacomp apply`).
    ///
    /// ```
    /// use datacomp::{Store, StorePatch};
    ///
    /// let dir = std::env::temp_dir().join(format!("save-delta-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir)?;
    /// let mut world = Store::new();
    /// let id = world.insert_entries([("gold", 10.0)]).unwrap();
    /// world.save(dir.join("base.dcmp"))?;
    /// let base = world.mark();
    ///
    /// world.get_mut(id).unwrap().set("gold", 12.0).unwrap();
    /// base.delta(&world).save(dir.join("autosave.delta"))?;
    ///
    /// let mut loaded = Store::load(dir.join("base.dcmp"))?;
    /// StorePatch::load(dir.join("autosave.delta"))?.apply(&mut loaded)?;
    /// assert_eq!(loaded, world);
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn delta(&self, store: &Store) -> StorePatch {
        match self.changed_slots(store) {
            Some(slots) => {
                StorePatch::diff_slots(&self.state, store, (&slots, true), self.crc(), None)
            }
            None => StorePatch::diff(&self.state, store),
        }
    }

    /// The changes in `store` since this mark as a delta (as [`delta`](Mark::delta)), moving
    /// the mark to the state that applying the delta to its base gives: the next link of a
    /// chain of deltas, each made from the one before, in O(changed).
    ///
    /// The mark's state is then the delta's apply result, byte for byte (not the store's
    /// layout), so the next delta's base is exactly what a loader of the chain has. Each link
    /// computes the crc32 of the state it starts from (see [`delta`](Mark::delta)).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Store, StorePatch};
    ///
    /// let mut world = Store::new();
    /// let id = world.insert_entries([("turn", 0.0)]).unwrap();
    /// let base = world.to_bytes();
    /// let mut mark = world.mark();
    /// let mut chain = Vec::new();
    /// for turn in 1..=3 {
    ///     world.get_mut(id).unwrap().set("turn", turn as f32).unwrap();
    ///     chain.push(mark.take_delta(&world).to_bytes());
    /// }
    ///
    /// let mut loaded = Store::from_bytes(&base)?;
    /// for link in &chain {
    ///     StorePatch::from_bytes(link)?.apply(&mut loaded)?;
    /// }
    /// assert_eq!(loaded, world);
    /// # Ok::<(), datacomp::LoadError>(())
    /// ```
    pub fn take_delta(&mut self, store: &Store) -> StorePatch {
        let delta = match self.changed_slots(store) {
            Some(slots) => self.take_slots(store, &slots),
            None => self.take_whole(store),
        };
        self.store = store.tracker().id();
        self.epoch = store.tracker().next_epoch();
        delta
    }

    /// [`take_delta`](Mark::take_delta) of the `slots` of `target`: the delta, with this
    /// state moved to the delta's apply result.
    pub(crate) fn take_slots(&mut self, target: &impl Target, slots: &[u32]) -> StorePatch {
        let delta = StorePatch::diff_slots(&self.state, target, (slots, true), self.crc(), None);
        delta.apply_trusted(&mut self.state, Placement::AsApply);
        self.crc = OnceLock::new();
        delta
    }

    /// [`take_delta`](Mark::take_delta) by comparing every entity of `store`.
    pub(crate) fn take_whole(&mut self, store: &Store) -> StorePatch {
        let delta = StorePatch::diff(&self.state, store);
        // The mark's state is the delta's base, crc and all: the apply cannot fail.
        if delta.apply(&mut self.state).is_err() {
            self.state = store.copy_state();
        }
        self.crc = OnceLock::new();
        delta
    }

    /// The slots of `store` whose state may differ from the mark's, sorted; `None` when the
    /// store cannot tell and every slot must be compared.
    pub(crate) fn changed_slots(&self, store: &Store) -> Option<Vec<u32>> {
        let mut slots = store.tracker().changed_since(self.store, self.epoch)?;
        slots.sort_unstable();
        Some(slots)
    }

    /// The crc32 of the marked state's contents: the base a delta from it names.
    pub(crate) fn crc(&self) -> u32 {
        *self.crc.get_or_init(|| self.state.content_crc(false))
    }
}

impl fmt::Debug for Mark {
    /// The epoch and size: `Mark { epoch: 3, entities: 100000, .. }`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mark")
            .field("epoch", &self.epoch)
            .field("entities", &self.state.len())
            .finish_non_exhaustive()
    }
}

/// The entities inserted, removed and changed between a [`Mark`] and now: what
/// [`Mark::changes`] returns. Each list is sorted by handle index.
///
/// # Examples
///
/// ```
/// use datacomp::Store;
///
/// let mut world = Store::new();
/// let id = world.insert_entries([("gold", 10.0)]).unwrap();
/// let mark = world.mark();
/// world.get_mut(id).unwrap().set("gold", 11.0).unwrap();
/// world.get_mut(id).unwrap().set("gold", 10.0).unwrap(); // back as it was
/// assert!(mark.changes(&world).is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changes {
    inserted: Vec<Id>,
    removed: Vec<Id>,
    changed: Vec<Id>,
}

impl Changes {
    /// Entities live now that were not live at the mark.
    #[must_use]
    pub fn inserted(&self) -> &[Id] {
        &self.inserted
    }

    /// Entities live at the mark that are not live now.
    #[must_use]
    pub fn removed(&self) -> &[Id] {
        &self.removed
    }

    /// Entities live at both whose entries differ (as [`BlobRef`](crate::BlobRef)'s `==`).
    #[must_use]
    pub fn changed(&self) -> &[Id] {
        &self.changed
    }

    /// Whether no entity was inserted, removed or changed.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.inserted.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }

    /// Entities inserted, removed or changed.
    #[must_use]
    pub fn len(&self) -> usize {
        self.inserted.len() + self.removed.len() + self.changed.len()
    }

    fn sort(mut self) -> Changes {
        for ids in [&mut self.inserted, &mut self.removed, &mut self.changed] {
            ids.sort_unstable_by_key(|id| (id.index(), id.generation()));
        }
        self
    }
}

impl Store {
    /// Marks this moment, so that what changes from here on is found in O(changed): see
    /// [`Mark`]. Costs one copy of the store's buffers. The store's first write after its
    /// first mark also allocates and fills its change log, once: 32 bytes a slot (3.2 MB for
    /// 100,000 entities), so that no later write grows it.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Store;
    ///
    /// let mut world = Store::new();
    /// let mark = world.mark();
    /// let id = world.insert_empty();
    /// assert_eq!(mark.changes(&world).inserted(), [id]);
    /// ```
    #[must_use]
    pub fn mark(&self) -> Mark {
        Mark {
            store: self.tracker().id(),
            epoch: self.tracker().next_epoch(),
            state: self.copy_state(),
            crc: OnceLock::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::migrate::{MigrationStep, Migrations};
    use crate::store::{Store, StorePatch};

    /// A migration stamps the entities it rewrote, and only those: a mark before it is still
    /// answered from the log, in O(changed), not by comparing every entity.
    #[test]
    fn a_migration_stamps_only_the_entities_it_rewrote() {
        let mut world = Store::new();
        let ids: Vec<_> =
            (0..100_u16).map(|i| world.insert_entries([("gold", f32::from(i))]).unwrap()).collect();
        world.get_mut(ids[40]).unwrap().set("hp", 1.0).unwrap();
        let mark = world.mark();
        let step = MigrationStep::to(1).rename("hp", "stats.hp");
        Migrations::new(1).step(step).apply(&mut world).unwrap();
        let slot = world.index().slot_of(ids[40]).unwrap() as u32;
        assert_eq!(mark.changed_slots(&world), Some(vec![slot]));
        world.set_data_version(7);
        assert_eq!(mark.changed_slots(&world), Some(vec![slot]), "no entity changed");
        assert_eq!(mark.delta(&world).to_bytes(), StorePatch::diff(&mark.state, &world).to_bytes());
    }

    /// A migration that changes no entity (no entity holds its keys) stamps nothing.
    #[test]
    fn a_migration_of_no_entity_stamps_nothing() {
        let mut world = Store::new();
        world.insert_entries([("gold", 1.0)]).unwrap();
        let mark = world.mark();
        let step = MigrationStep::to(2).rename("hp", "stats.hp");
        Migrations::new(2).step(step).apply(&mut world).unwrap();
        assert_eq!(mark.changed_slots(&world), Some(vec![]));
        assert!(mark.changes(&world).is_empty());
        assert_eq!(mark.delta(&world).to_bytes(), StorePatch::diff(&mark.state, &world).to_bytes());
    }

    /// A mark that takes delta after delta of changes that keep each entity's size (a number
    /// changed) grows no garbage: each changed entity is written back into its own span, with
    /// the bytes a loader of the delta gets (its state's save and the next delta's base crc are
    /// a loader's); an entity that grew moves to the arena's end, as `apply` places it.
    #[test]
    fn a_mark_taking_same_size_changes_grows_no_garbage() {
        let mut world = Store::new();
        let ids: Vec<_> =
            (0..200_u16).map(|i| world.insert_entries([("gold", f32::from(i))]).unwrap()).collect();
        let mut mark = world.mark();
        let mut loaded = Store::from_bytes(&mark.state.to_bytes()).unwrap();
        let arena = mark.state.stats().arena_bytes;
        for round in 1..=5_u16 {
            for &id in &ids[usize::from(round) * 10..usize::from(round) * 10 + 50] {
                world.get_mut(id).unwrap().set("gold", -f32::from(round)).unwrap();
            }
            let delta = mark.take_delta(&world);
            StorePatch::from_bytes(&delta.to_bytes()).unwrap().apply(&mut loaded).unwrap();
            let stats = mark.state.stats();
            assert_eq!((stats.arena_bytes, stats.garbage_bytes), (arena, 0), "round {round}");
            assert_eq!(mark.state.to_bytes(), loaded.to_bytes(), "round {round}");
            assert_eq!(mark.crc(), loaded.content_crc(false), "round {round}");
        }
        world.get_mut(ids[3]).unwrap().set("name", "grown").unwrap();
        let delta = mark.take_delta(&world);
        StorePatch::from_bytes(&delta.to_bytes()).unwrap().apply(&mut loaded).unwrap();
        assert!(mark.state.stats().arena_bytes > arena, "the grown one moved to the end");
        assert_eq!(mark.state.to_bytes(), loaded.to_bytes());
    }
}
