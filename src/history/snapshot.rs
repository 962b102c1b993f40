//! [`Snapshot`]: a store's whole state as a copy of its buffers, restored with memcpys.

use std::fmt;

use crate::store::Store;

/// A store's whole state, copied: its index, arena and key names as buffers, with no allocation
/// per entity. Made by [`Snapshot::new`], put back by [`Snapshot::restore`], retaken in place
/// by [`Snapshot::copy_from`].
///
/// ```text
///  Store                                   Snapshot (one memcpy per buffer)
///  index: HandleMap<Span> ─┬─ items ─────▶ items
///                          ├─ meta  ─────▶ meta
///                          └─ slots ─────▶ slots
///  arena: [u32] ──────────────────────────▶ arena (garbage included: no walk over entities)
///  key names ─────────────────────────────▶ key names
/// ```
///
/// A restore copies the buffers back into the store's own allocations (no allocation once they
/// are big enough) and gives back the exact state: the same handles resolve, stale ones stay
/// stale, and the next insert gets the handle it got after the snapshot was taken. Handles
/// issued after the snapshot are issued again, to the entities inserted after the restore: that
/// is what makes a re-simulation from a snapshot deterministic.
///
/// # Examples
///
/// ```
/// use datacomp::{Snapshot, Store};
///
/// let mut world = Store::new();
/// let hero = world.insert_entries([("stats.health", 100.0)]).unwrap();
/// let before = Snapshot::new(&world);
///
/// world.get_mut(hero).unwrap().set("stats.health", 0.0).unwrap();
/// world.remove(hero);
///
/// before.restore(&mut world);
/// assert_eq!(world.get(hero).unwrap().get_float("stats.health"), Some(100.0));
/// assert_eq!(&world, before.as_store());
/// ```
#[derive(Clone)]
pub struct Snapshot {
    /// The copied state; never tracked.
    state: Store,
}

impl Snapshot {
    /// A copy of `store`'s whole state. One memcpy per buffer, no allocation per entity.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Snapshot, Store};
    ///
    /// let mut world = Store::new();
    /// let id = world.insert_entries([("gold", 10.0)]).unwrap();
    /// let snapshot = Snapshot::new(&world);
    /// world.remove(id);
    /// snapshot.restore(&mut world);
    /// assert!(world.contains(id));
    /// ```
    #[must_use]
    pub fn new(store: &Store) -> Snapshot {
        Snapshot { state: store.copy_state() }
    }

    /// Copies `store`'s whole state into this snapshot, reusing its buffers (as
    /// [`Clone::clone_from`] does): no allocation once they are big enough, so a ring of
    /// snapshots (one per frame of a rollback window) costs memcpys only.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Snapshot, Store};
    ///
    /// let mut world = Store::new();
    /// let id = world.insert_entries([("x", 0.0)]).unwrap();
    /// let mut ring = vec![Snapshot::new(&world); 4];
    /// for frame in 0..8 {
    ///     ring[frame % 4].copy_from(&world);
    ///     world.get_mut(id).unwrap().set("x", frame as f32 + 1.0).unwrap();
    /// }
    /// ring[5 % 4].restore(&mut world); // the world before frame 5
    /// assert_eq!(world.get(id).unwrap().get_float("x"), Some(5.0));
    /// ```
    pub fn copy_from(&mut self, store: &Store) {
        self.state.copy_from(store);
    }

    /// Puts this snapshot's state back into `store` (the store it was taken of, or any
    /// other): index, arena and key names, copied into the store's own buffers. Marks and
    /// histories of `store` see every entity as changed once (their next look compares every
    /// entity).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Snapshot, Store};
    ///
    /// let mut world = Store::new();
    /// let start = Snapshot::new(&world);
    /// for _ in 0..3 {
    ///     world.insert_entries([("gold", 1.0)]).unwrap();
    /// }
    /// start.restore(&mut world);
    /// assert!(world.is_empty());
    /// ```
    pub fn restore(&self, store: &mut Store) {
        store.copy_from(&self.state);
    }

    /// The state held, to read (get, iterate, export, diff) without restoring it.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Snapshot, Store, StorePatch};
    ///
    /// let mut world = Store::new();
    /// let id = world.insert_entries([("gold", 10.0)]).unwrap();
    /// let snapshot = Snapshot::new(&world);
    /// world.get_mut(id).unwrap().set("gold", 0.0).unwrap();
    /// assert_eq!(snapshot.as_store().get(id).unwrap().get_float("gold"), Some(10.0));
    /// assert_eq!(StorePatch::diff(snapshot.as_store(), &world).changed(), 1);
    /// ```
    #[must_use]
    pub fn as_store(&self) -> &Store {
        &self.state
    }

    /// The state held, as a store of its own.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Snapshot, Store};
    ///
    /// let mut world = Store::new();
    /// world.insert_empty();
    /// let copy = Snapshot::new(&world).into_store();
    /// assert_eq!(copy, world);
    /// ```
    #[must_use]
    pub fn into_store(self) -> Store {
        self.state
    }

    /// Bytes of the buffers held: index, arena (garbage included) and key names.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Snapshot, Store};
    ///
    /// let mut world = Store::new();
    /// world.insert_entries([("gold", 10.0)]).unwrap();
    /// assert!(Snapshot::new(&world).byte_len() >= world.stats().arena_bytes);
    /// ```
    #[must_use]
    pub fn byte_len(&self) -> usize {
        self.state.buffer_bytes()
    }
}

impl fmt::Debug for Snapshot {
    /// Sizes: `Snapshot { entities: 100000, bytes: 4000000 }`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Snapshot")
            .field("entities", &self.state.len())
            .field("bytes", &self.byte_len())
            .finish()
    }
}

impl Store {
    /// A copy of the state, untracked: what snapshots and marks hold. (A clone's tracker
    /// starts untracked.)
    pub(crate) fn copy_state(&self) -> Store {
        self.clone()
    }

    /// Bytes of the store's buffers: the index's items, meta and slots, the arena, and the key
    /// names as a save holds them.
    pub(crate) fn buffer_bytes(&self) -> usize {
        let raw = self.index().as_raw();
        raw.items.len()
            + raw.meta.len()
            + raw.slots.len()
            + self.arena().len() * 4
            + self.names().tree_len()
    }
}
