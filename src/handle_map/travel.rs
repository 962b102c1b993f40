//! Slot-level reads and writes for time travel: change tracking records which slots a change
//! rewrote, and undo, redo and marks put exactly those slots back, so that a step costs what it
//! changed, not the size of the map.
//!
//! The writers break the map's invariants until the caller has written every slot and dense
//! position that differs from the state it restores; they are for `history`, which recorded
//! both states itself.

use super::{Defrag, HandleMap, Id, NONE, Slot};
use crate::handle_map::RawHeader;

impl<T> HandleMap<T> {
    /// The position of `id`'s slot among the slots, when `id` is live.
    #[inline]
    pub(crate) fn slot_of(&self, id: Id) -> Option<usize> {
        self.live_slot(id).map(|(slot, _)| slot)
    }

    /// The slots that [`remove`](HandleMap::remove)`(id)` rewrites: `id`'s own, the last
    /// item's (which moves into its dense position) and the free list's tail (which links to
    /// it). `None` when `id` is not live.
    pub(crate) fn slots_remove_rewrites(&self, id: Id) -> Option<[usize; 3]> {
        let (slot, _) = self.live_slot(id)?;
        // INVARIANT: `id` is live, so there is a last item.
        let last = *self.meta.last()? as usize;
        let tail = if self.free_tail == NONE { slot } else { self.free_tail as usize };
        Some([slot, last, tail])
    }

    /// Number of slots (live, free and retired).
    pub(crate) fn slot_count(&self) -> usize {
        self.slots.len()
    }

    /// The handle and dense index of slot `slot`, when it is live.
    pub(crate) fn live_at_slot(&self, slot: usize) -> Option<(Id, usize)> {
        let entry = *self.slots.get(slot)?;
        (!entry.is_free()).then(|| (entry.id(self.base + slot as u32), entry.index() as usize))
    }

    /// Gives the map `header`'s base, free-list ends and numbers of items and slots. New dense
    /// positions hold `fill` and new slots are free until the caller sets them.
    ///
    /// INVARIANT (for the caller): afterwards, every slot and dense position whose state differs
    /// from the one `header` belongs to is set with [`set_slot`](HandleMap::set_slot) and
    /// [`set_dense`](HandleMap::set_dense), which restores every invariant of the map.
    pub(crate) fn set_shape(&mut self, header: &RawHeader, fill: T)
    where
        T: Clone,
    {
        let len = header.len.get() as usize;
        self.items.resize(len, fill);
        self.meta.resize(len, NONE);
        self.slots.resize(header.slots.get() as usize, Slot::free(NONE, 0, self.type_id));
        self.base = header.base.get();
        self.free_head = header.free_head.get();
        self.free_tail = header.free_tail.get();
        // The slots the caller writes may leave any state.
        self.identity = false;
        self.defrag = Defrag::default();
    }

    /// Sets slot `slot`'s bits (see [`set_shape`](HandleMap::set_shape)'s invariant).
    pub(crate) fn set_slot(&mut self, slot: usize, bits: u64) {
        self.slots[slot] = Slot(bits);
    }

    /// Puts `item` of slot `slot` at dense position `dense` (see
    /// [`set_shape`](HandleMap::set_shape)'s invariant).
    pub(crate) fn set_dense(&mut self, dense: usize, slot: usize, item: T) {
        self.items[dense] = item;
        self.meta[dense] = slot as u32;
    }
}
