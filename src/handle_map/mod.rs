//! [`HandleMap`]: items in a dense array, reached through generational [`Id`] handles.
//!
//! # Scope
//!
//! `HandleMap` is a general public container, not a private part of [`Store`](crate::Store):
//! any `T` (the store keeps its spans in one), its own handle type ([`Id`]), its own raw
//! sections ([`RawHandleMap`]) and serde form, and its own errors: [`HandleError`] for a
//! handle that does not resolve (or text that is not one), [`HandleMapError`] for raw or
//! serialized state that breaks an
//! invariant. It knows nothing of save files: a save's loader wraps a `HandleMapError` in
//! [`LoadError::HandleMap`](crate::LoadError::HandleMap), so the error type of a map read on its
//! own says only what is wrong with the map.

mod error;
mod id;
mod iter;
mod parse;
mod raw;
mod travel;

use std::cmp::Ordering;
use std::fmt;
use std::ops::{Index, IndexMut};

pub use error::{HandleError, HandleMapError};
pub use id::Id;
use iter::IdsOf;
pub use iter::{Drain, Iter, IterMut};
pub(crate) use raw::HandleMapView;
pub(crate) use raw::check_header;
pub use raw::{RawHandleMap, RawHeader};

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// End of the free list.
const NONE: u32 = u32::MAX;
/// The generation of a retired slot: no handle carries it, and the slot is never reused.
const RETIRED: u16 = u16::MAX;
/// The highest index of slot 0 (`base`): `reset` keeps half of the index space for the slots
/// after it, and a load refuses more, so a loaded map has room for new handles (unless it
/// already has 2^31 slots: a 16 GiB index).
const MAX_BASE: u32 = u32::MAX / 2;

/// A slot of the sparse array: the 64 bits of the handle it would issue now, with the index
/// replaced by the dense index of its item (live) or by the next slot of the free list (free,
/// with the free bit set).
///
/// So a handle is live exactly when its upper 32 bits (generation, type id, free bit) equal its
/// slot's and the slot is not free: one compare on the hot path.
#[derive(Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize), serde(transparent))]
#[repr(transparent)]
struct Slot(u64);

impl Slot {
    const FREE: u64 = 1 << 63;

    const fn live(dense: u32, generation: u16, type_id: u16) -> Slot {
        Slot(Id::new(dense, generation, type_id).to_bits())
    }

    const fn free(next: u32, generation: u16, type_id: u16) -> Slot {
        Slot(Id::new(next, generation, type_id).to_bits() | Slot::FREE)
    }

    /// The dense index of this slot's item if `id` is its live handle; else a number of at
    /// least 2^32, past every dense index (a map holds fewer than 2^32 - 1 items).
    ///
    /// The liveness test folded into the index: the upper 32 bits are the difference between
    /// the slot's and the handle's generation, type id and free bit, with the handle's free
    /// bit set on top (the slot's is then set too, or they differ). So one bounds check of the
    /// result against the item count tests both, with no branch of its own.
    #[inline]
    const fn dense_for(self, id: Id) -> u64 {
        let id = id.to_bits();
        (self.0 ^ (id & !0xffff_ffff)) | (id & Slot::FREE)
    }

    /// As [`dense_for`](Slot::dense_for), for a handle whose free bit is clear: what
    /// [`HandleMap::slot_index`] leaves (it sends the others past every slot), so the free bit
    /// need not be folded in again. The result's top bit is then this slot's free bit.
    #[inline]
    const fn dense_for_unfreed(self, id: Id) -> u64 {
        self.0 ^ (id.to_bits() & !0xffff_ffff)
    }

    /// This live slot, freed: its generation bumped (to [`RETIRED`] at most: a live slot's
    /// is below it, so the bump never carries into the type id), its next free slot `NONE`.
    #[inline]
    const fn freed(self) -> Slot {
        Slot(((self.0 & !0xffff_ffff) + (1 << 32)) | Slot::FREE | NONE as u64)
    }

    const fn type_id(self) -> u16 {
        Id::from_bits(self.0).type_id()
    }

    /// The handle of this live slot, which sits at handle index `index`.
    const fn id(self, index: u32) -> Id {
        Id::from_bits(self.0 & !0xffff_ffff | index as u64)
    }

    const fn index(self) -> u32 {
        self.0 as u32
    }

    const fn generation(self) -> u16 {
        (self.0 >> 32) as u16
    }

    const fn is_free(self) -> bool {
        self.0 & Slot::FREE != 0
    }

    const fn with_index(self, index: u32) -> Slot {
        Slot(self.0 & !0xffff_ffff | index as u64)
    }
}

/// The dense index of `id` in a map in its identity state with this `base` and `type_id`, if
/// `id` is live there; else a number at least the map's item count.
///
/// Such a map's live handles are exactly `Id::new(base + d, 0, type_id)` for each item `d`, so
/// `id`'s bits less those of the first, `first = H0 * 2^32 + base`, are `d` (H0 = `type_id`
/// << 16, below 2^31). Any other handle, `H * 2^32 + index`, gives (mod 2^64):
/// - `H == H0`, index below `base`: at least 2^64 - 2^32 (it wraps);
/// - `H > H0` (a later generation, the free bit): at least 2^32 - `base`, which is above the
///   item count: `base + slots <= u32::MAX` and an identity map has one slot an item;
/// - `H < H0` (a smaller type id): at least 2^64 - 2^63.
///
/// One subtraction; the caller's bounds check against the item count is the whole test.
#[inline]
const fn identity_dense(id: Id, base: u32, type_id: u16) -> usize {
    let first = Id::new(base, 0, type_id).to_bits();
    let dense = id.to_bits().wrapping_sub(first);
    // A no-op on 64-bit targets; on narrower ones a dead handle's number saturates.
    if dense > usize::MAX as u64 { usize::MAX } else { dense as usize }
}

/// Items in a dense array, reached in O(1) through 64-bit generational [`Id`] handles.
///
/// ```text
///  handle Id{index 2, gen 1}
///           │
///  slots    ▼         (sparse: slot -> dense index, or next free slot)
///  ┌──────┬──────┬──────┬──────┐      free list (FIFO): head ─▶ 3 ─▶ tail
///  │ d1 g0│ d0 g4│ d2 g1│ free │
///  └──────┴──────┴──────┴──────┘
///  items    ┌─────┬─────┬─────┐       meta (dense -> slot)  ┌───┬───┬───┐
///  (dense)  │  A  │  B  │  C  │                              │ 1 │ 0 │ 2 │
///           └─────┴─────┴─────┘                              └───┴───┴───┘
/// ```
///
/// A map that has removed nothing since it was made, [`reset`](HandleMap::reset) or read in its
/// identity state ([`RawHeader::IDENTITY`]) answers a handle by arithmetic: a lookup reads its
/// item alone, no slot (one cache line, where a slot map reads two).
///
/// Items are tightly packed, so iterating is a slice walk. Removing one moves the last item into
/// its place (swap and pop) and patches that item's slot. A freed slot goes to the back of a
/// FIFO free list with its generation bumped, so the handle of a removed item never resolves
/// again. These hold where the griffin `handle_map` this follows did not:
///
/// - A handle from another map type, with the free bit, out of range, or stale resolves to
///   nothing (`get` gives `None`, `try_get` says why).
/// - [`clear`](HandleMap::clear) bumps the generation of every live slot, and
///   [`reset`](HandleMap::reset) moves the map's handles to indices no old handle has, so
///   neither lets an old handle reach a new item.
/// - A slot whose 16-bit generation would wrap is retired, never reused.
///
/// # Examples
///
/// ```
/// use datacomp::HandleMap;
///
/// let mut monsters = HandleMap::new(1);
/// let orc = monsters.insert("orc");
/// let troll = monsters.insert("troll");
/// assert_eq!(monsters.get(orc), Some(&"orc"));
///
/// assert_eq!(monsters.remove(orc), Some("orc"));
/// assert_eq!(monsters.get(orc), None, "a removed item's handle stays dead");
/// assert_eq!(monsters[troll], "troll");
/// assert_eq!(monsters.as_slice(), ["troll"]);
/// ```
pub struct HandleMap<T> {
    // INVARIANT: `items` and `meta` have the same length, at most u32::MAX - 1.
    items: Vec<T>,
    // INVARIANT: `meta[d]` is the slot of `items[d]`, and that slot is live with index `d`.
    meta: Vec<u32>,
    // INVARIANT: exactly `items.len()` slots are live; every other slot is either retired
    // (generation RETIRED) or on the free list; no live slot has generation RETIRED.
    slots: Vec<Slot>,
    // INVARIANT: the free list runs from `free_head` through each free slot's index to
    // `free_tail`, whose index is NONE; both are NONE when it is empty.
    free_head: u32,
    free_tail: u32,
    // INVARIANT: `base + slots.len() <= u32::MAX`; handles carry `base + slot`, so every
    // handle issued before the last `reset` has an index below `base`.
    base: u32,
    // INVARIANT: at most Id::MAX_TYPE_ID.
    type_id: u16,
    /// The map is known to be in its identity state ([`RawHeader::IDENTITY`]): slot `i` live
    /// with item `i` at the first generation for every slot, none free or retired; then a
    /// handle's dense index is arithmetic ([`identity_dense`]) and a lookup reads no slot.
    // INVARIANT: when true, the map is in its identity state (when false, it may be too: set
    // false by every change that can leave it, re-set only where it is known).
    identity: bool,
    /// Progress of the incremental [`defragment_by`](HandleMap::defragment_by).
    defrag: Defrag,
}

/// Where an interrupted insertion sort stands: items before `next` were in order, except that
/// the item at `moving` (if any) is still on its way down.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Defrag {
    next: usize,
    moving: Option<usize>,
}

impl<T> HandleMap<T> {
    /// An empty map whose handles carry `type_id`. It does not allocate.
    ///
    /// # Panics
    ///
    /// If `type_id` exceeds [`Id::MAX_TYPE_ID`] (type ids have 15 bits).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::HandleMap;
    ///
    /// let map: HandleMap<u64> = HandleMap::new(3);
    /// assert!(map.is_empty());
    /// assert_eq!(map.type_id(), 3);
    /// ```
    #[must_use]
    pub const fn new(type_id: u16) -> HandleMap<T> {
        assert!(type_id <= Id::MAX_TYPE_ID, "HandleMap type ids have 15 bits: at most 32767");
        HandleMap {
            items: Vec::new(),
            meta: Vec::new(),
            slots: Vec::new(),
            free_head: NONE,
            free_tail: NONE,
            base: 0,
            type_id,
            identity: true,
            defrag: Defrag { next: 0, moving: None },
        }
    }

    /// An empty map with room for `capacity` items.
    ///
    /// # Panics
    ///
    /// If `type_id` exceeds [`Id::MAX_TYPE_ID`].
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::HandleMap;
    ///
    /// let map: HandleMap<u64> = HandleMap::with_capacity(0, 100);
    /// assert!(map.capacity() >= 100);
    /// ```
    #[must_use]
    pub fn with_capacity(type_id: u16, capacity: usize) -> HandleMap<T> {
        let mut map = HandleMap::new(type_id);
        map.reserve(capacity);
        map
    }

    /// The type id that this map's handles carry.
    #[must_use]
    pub const fn type_id(&self) -> u16 {
        self.type_id
    }

    /// Number of items.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::HandleMap;
    ///
    /// let mut map = HandleMap::new(0);
    /// let id = map.insert('a');
    /// map.insert('b');
    /// map.remove(id);
    /// assert_eq!(map.len(), 1);
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the map has no items.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Items the map holds before its dense array reallocates.
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.items.capacity()
    }

    /// Makes room for `additional` more items without reallocating.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::HandleMap;
    ///
    /// let mut map = HandleMap::new(0);
    /// map.reserve(10);
    /// assert!(map.capacity() >= 10);
    /// map.insert(1_u64);
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        self.items.reserve(additional);
        self.meta.reserve(additional);
        let spare_slots = self.slots.len() - self.items.len();
        self.slots.reserve(additional.saturating_sub(spare_slots));
    }

    /// The handle that the next [`insert`](HandleMap::insert) will return, and its slot.
    ///
    /// # Panics
    ///
    /// If the map has used every slot index its 32-bit handles can name.
    fn next_id(&self) -> (Id, usize) {
        let slot = if self.free_head == NONE { self.slots.len() } else { self.free_head as usize };
        let generation = self.slots.get(slot).map_or(0, |s| s.generation());
        let index = u64::from(self.base) + slot as u64;
        assert!(
            index < u64::from(u32::MAX) && self.items.len() < u32::MAX as usize - 1,
            "HandleMap: all 2^32 - 1 handle indices are used; reset() or a new map frees them"
        );
        (Id::new(index as u32, generation, self.type_id), slot)
    }

    /// Inserts `value` and returns its handle.
    ///
    /// The slot comes from the front of the free list (the slot freed longest ago), else a new
    /// one.
    ///
    /// # Panics
    ///
    /// If the map has used all 2^32 - 1 handle indices since it was made or last reset.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::HandleMap;
    ///
    /// let mut map = HandleMap::new(0);
    /// let a = map.insert(10_u64);
    /// assert_eq!(map[a], 10);
    /// ```
    pub fn insert(&mut self, value: T) -> Id {
        self.insert_with(|_| value)
    }

    /// Inserts the value that `make` builds from its own handle: for items that store it.
    ///
    /// # Panics
    ///
    /// As [`insert`](HandleMap::insert). If `make` panics, the map is unchanged.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{HandleMap, Id};
    ///
    /// struct Node { me: Id }
    /// let mut nodes = HandleMap::new(0);
    /// let id = nodes.insert_with(|me| Node { me });
    /// assert_eq!(nodes[id].me, id);
    /// ```
    pub fn insert_with(&mut self, make: impl FnOnce(Id) -> T) -> Id {
        let (id, slot) = self.next_id();
        let value = make(id);
        if slot == self.slots.len() {
            self.slots.push(Slot::free(NONE, 0, self.type_id));
        } else {
            self.free_head = self.slots[slot].index();
            if self.free_head == NONE {
                self.free_tail = NONE;
            }
        }
        // A reused slot is free, so the map is not in its identity state; a new one at the
        // first generation keeps it there.
        self.slots[slot] = Slot::live(self.items.len() as u32, id.generation(), self.type_id);
        self.items.push(value);
        self.meta.push(slot as u32);
        id
    }

    /// Inserts every value, returning their handles in order.
    ///
    /// # Panics
    ///
    /// As [`insert`](HandleMap::insert).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::HandleMap;
    ///
    /// let mut map = HandleMap::new(0);
    /// let ids = map.insert_batch([1_u64, 2, 3]);
    /// assert_eq!(ids.iter().map(|&id| map[id]).collect::<Vec<_>>(), [1, 2, 3]);
    /// ```
    pub fn insert_batch(&mut self, values: impl IntoIterator<Item = T>) -> Vec<Id> {
        let values = values.into_iter();
        self.reserve(values.size_hint().0);
        values.map(|value| self.insert(value)).collect()
    }

    /// The slot and dense index of `id`, if it is live in this map.
    ///
    /// One comparison with the slot checks the generation, the type id and the free bit
    /// together; only a failure pays for finding out why ([`diagnose`](HandleMap::diagnose)).
    #[inline]
    fn live_slot(&self, id: Id) -> Option<(usize, usize)> {
        if self.identity {
            // Slot `i` holds item `i`.
            let dense = identity_dense(id, self.base, self.type_id);
            return (dense < self.items.len()).then_some((dense, dense));
        }
        let (slot, dense) = self.slot_and_dense(id)?;
        (dense < self.items.len()).then_some((slot, dense))
    }

    /// The slot of `id` and what [`Slot::dense_for`] says of it: `id`'s dense index if `id`
    /// is live, else a number past every dense index. `None` if `id` names no slot.
    #[inline]
    fn slot_and_dense(&self, id: Id) -> Option<(usize, usize)> {
        let slot = self.slot_index(id);
        let dense = self.slots.get(slot)?.dense_for_unfreed(id);
        // A no-op on 64-bit targets; on narrower ones a dead handle's number saturates.
        Some((slot, usize::try_from(dense).unwrap_or(usize::MAX)))
    }

    /// The slot that `id` names: its index less `base`; past every slot if the index is
    /// below `base` (it wraps: `base + slots <= u32::MAX`) or `id` has the free bit, which is
    /// kept in the slot number for that (one `and` here saves two in the liveness test).
    ///
    /// A map that was never [`reset`](HandleMap::reset) (nor loaded with a nonzero `base`)
    /// takes the first branch: its slot number is the handle's index and free bit, one `and`.
    /// The branch is the same on every call, so a loop over handles is unswitched on it and
    /// its body loses the subtraction; small enough, the compiler then unrolls it as it does
    /// `DenseSlotMap::get`'s. The second branch is written so that the compiler cannot prove
    /// it equal to the first when `base` is 0 (a wrapping `index_and_free - base` it can, and
    /// folds the branch away): a checked subtraction, whose underflow (an index below `base`)
    /// gives `u64::MAX`, past every slot as the wrapped difference was. It costs a map with a
    /// nonzero `base` one conditional move a lookup.
    #[inline]
    fn slot_index(&self, id: Id) -> usize {
        let bits = id.to_bits();
        let slot = if self.base == 0 {
            bits & (Slot::FREE | 0xffff_ffff)
        } else {
            (bits & (Slot::FREE | 0xffff_ffff))
                .checked_sub(u64::from(self.base))
                .unwrap_or(u64::MAX)
        };
        // A no-op on 64-bit targets; on narrower ones a number past every slot saturates.
        usize::try_from(slot).unwrap_or(usize::MAX)
    }

    /// Why `id` does not resolve: cold and out of line, so that `try_get` and `map[id]` are
    /// `get`'s instructions and a branch to here, and no reason is built before it is needed.
    #[cold]
    #[inline(never)]
    fn diagnose(&self, id: Id) -> HandleError {
        if id.is_free() {
            return if id.is_null() { HandleError::Null } else { HandleError::Free { id } };
        }
        if id.type_id() != self.type_id {
            return HandleError::WrongType { id, expected: self.type_id };
        }
        let Some(slot) = id.index().checked_sub(self.base) else {
            // Issued before the last reset.
            return HandleError::Stale { id, current: None };
        };
        let Some(&entry) = self.slots.get(slot as usize) else {
            let slots = u64::from(self.base) + self.slots.len() as u64;
            return HandleError::OutOfRange { id, slots };
        };
        if entry.generation() != id.generation() {
            let current = (entry.generation() != RETIRED).then_some(entry.generation());
            return HandleError::Stale { id, current };
        }
        HandleError::Free { id }
    }

    /// `map[id]`'s panic, with the reason: out of line, as [`diagnose`](HandleMap::diagnose).
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn index_failed(&self, id: Id) -> ! {
        panic!("HandleMap[{id}]: {}", self.diagnose(id))
    }

    /// The item of `id`, or why there is none.
    ///
    /// # Errors
    ///
    /// [`HandleError::Stale`] for a removed item's handle, [`HandleError::WrongType`] for
    /// another map's, [`HandleError::OutOfRange`] or [`HandleError::Free`] for a forged one,
    /// [`HandleError::Null`] for [`Id::NULL`].
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{HandleError, HandleMap};
    ///
    /// let mut map = HandleMap::new(0);
    /// let id = map.insert("gold");
    /// assert_eq!(map.try_get(id), Ok(&"gold"));
    /// map.remove(id);
    /// assert!(matches!(map.try_get(id), Err(HandleError::Stale { .. })));
    /// ```
    #[inline]
    pub fn try_get(&self, id: Id) -> Result<&T, HandleError> {
        match self.get(id) {
            Some(item) => Ok(item),
            None => Err(self.diagnose(id)),
        }
    }

    /// The item of `id`, mutably, or why there is none.
    ///
    /// # Errors
    ///
    /// As [`try_get`](HandleMap::try_get).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{HandleError, HandleMap, Id};
    ///
    /// let mut map = HandleMap::new(0);
    /// let id = map.insert(1_u64);
    /// *map.try_get_mut(id)? += 1;
    /// assert_eq!(map[id], 2);
    /// assert_eq!(map.try_get_mut(Id::NULL), Err(HandleError::Null));
    /// # Ok::<(), HandleError>(())
    /// ```
    #[inline]
    pub fn try_get_mut(&mut self, id: Id) -> Result<&mut T, HandleError> {
        let Some((_, dense)) = self.live_slot(id) else {
            return Err(self.diagnose(id));
        };
        Ok(&mut self.items[dense])
    }

    /// The item of `id`, if it is live in this map.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{HandleMap, Id};
    ///
    /// let mut map = HandleMap::new(0);
    /// let id = map.insert(5_u64);
    /// assert_eq!(map.get(id), Some(&5));
    /// assert_eq!(map.get(Id::NULL), None);
    /// ```
    #[inline]
    #[must_use]
    pub fn get(&self, id: Id) -> Option<&T> {
        // A map that never removed an item: no slot to read, one cache line a lookup.
        if self.identity {
            return self.items.get(identity_dense(id, self.base, self.type_id));
        }
        // One bounds check tests both that `id` is live and that its item is in range.
        let (_, dense) = self.slot_and_dense(id)?;
        self.items.get(dense)
    }

    /// The item of `id`, mutably, if it is live in this map.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::HandleMap;
    ///
    /// let mut map = HandleMap::new(0);
    /// let id = map.insert(5_u64);
    /// *map.get_mut(id).unwrap() += 1;
    /// assert_eq!(map[id], 6);
    /// ```
    #[inline]
    pub fn get_mut(&mut self, id: Id) -> Option<&mut T> {
        if self.identity {
            return self.items.get_mut(identity_dense(id, self.base, self.type_id));
        }
        let (_, dense) = self.slot_and_dense(id)?;
        self.items.get_mut(dense)
    }

    /// Whether `id` is live in this map.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::HandleMap;
    ///
    /// let mut map = HandleMap::new(0);
    /// let id = map.insert(());
    /// assert!(map.contains(id));
    /// map.remove(id);
    /// assert!(!map.contains(id));
    /// ```
    #[must_use]
    pub fn contains(&self, id: Id) -> bool {
        self.live_slot(id).is_some()
    }

    /// Mutable references to the items of `N` distinct live handles at once.
    ///
    /// `None` if any handle is not live, or two are the same.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::HandleMap;
    ///
    /// let mut map = HandleMap::new(0);
    /// let (a, b) = (map.insert(1_u64), map.insert(2_u64));
    /// let [x, y] = map.get_disjoint_mut([a, b]).unwrap();
    /// std::mem::swap(x, y);
    /// assert_eq!((map[a], map[b]), (2, 1));
    /// assert!(map.get_disjoint_mut([a, a]).is_none());
    /// ```
    pub fn get_disjoint_mut<const N: usize>(&mut self, ids: [Id; N]) -> Option<[&mut T; N]> {
        let mut dense = [0; N];
        for (d, id) in dense.iter_mut().zip(ids) {
            *d = self.live_slot(id)?.1;
        }
        self.items.get_disjoint_mut(dense).ok()
    }

    /// Position of `id`'s item in the dense array ([`as_slice`](HandleMap::as_slice)).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::HandleMap;
    ///
    /// let mut map = HandleMap::new(0);
    /// let (a, b) = (map.insert('a'), map.insert('b'));
    /// map.remove(a);
    /// assert_eq!(map.dense_index(b), Some(0), "b moved into a's place");
    /// assert_eq!(map.id_at(0), Some(b));
    /// ```
    #[must_use]
    pub fn dense_index(&self, id: Id) -> Option<usize> {
        self.live_slot(id).map(|(_, dense)| dense)
    }

    /// The item of `id`, which the caller knows to be live (a store's prototype: its links'
    /// invariant): the generation test left out, for the walk up a prototype chain. Any
    /// handle is safe to pass: one that is not live gives another item or `None`, never a
    /// panic.
    #[inline]
    pub(crate) fn get_known_live(&self, id: Id) -> Option<&T> {
        // A map that never removed an item: arithmetic, no slot read (the walk up a chain
        // then waits on one load fewer, as a plain `get` does).
        if self.identity {
            return self.items.get(identity_dense(id, self.base, self.type_id));
        }
        // An index below `base` wraps past every slot.
        let slot = id.index().wrapping_sub(self.base) as usize;
        self.items.get(self.slots.get(slot)?.index() as usize)
    }

    /// The handle of the item at `dense_index` of the dense array.
    #[must_use]
    pub fn id_at(&self, dense_index: usize) -> Option<Id> {
        let slot = *self.meta.get(dense_index)? as usize;
        Some(self.id_of_slot(slot))
    }

    /// The handle of live slot `slot`.
    fn id_of_slot(&self, slot: usize) -> Id {
        self.slots[slot].id(self.base + slot as u32)
    }

    /// The handle of live slot `slot`, or [`Id::NULL`] past the slots (which a live slot is
    /// not): no panic path, so that a handle made and not used costs nothing.
    #[inline]
    pub(crate) fn id_of_live_slot(&self, slot: u32) -> Id {
        self.slots.get(slot as usize).map_or(Id::NULL, |s| s.id(self.base + slot))
    }

    /// The slot and the item of each live entry, in dense order: for a loop that reads by a
    /// handle's index (`base() + slot`) and makes the handle only where it needs it
    /// ([`id_of_live_slot`](HandleMap::id_of_live_slot)).
    pub(crate) fn slots_and_items(&self) -> impl ExactSizeIterator<Item = (u32, &T)> + '_ {
        self.meta.iter().copied().zip(&self.items)
    }

    /// The index of slot 0: a live slot `s` is the handle index `base() + s`.
    pub(crate) fn base(&self) -> u32 {
        self.base
    }

    fn push_free(&mut self, slot: u32) {
        // An empty list's tail, NONE, is past every slot: one test for both.
        match self.slots.get_mut(self.free_tail as usize) {
            // The tail's index is NONE (all ones): flipping the bits that `slot` lacks writes
            // `slot` in one xor, where `with_index` masks and ors.
            Some(tail) => {
                debug_assert_eq!(tail.index(), NONE);
                *tail = Slot(tail.0 ^ u64::from(!slot));
            }
            None => self.free_head = slot,
        }
        self.free_tail = slot;
    }

    /// Removes the item of `id` and returns it. The last item moves into its place.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::HandleMap;
    ///
    /// let mut map = HandleMap::new(0);
    /// let id = map.insert("potion");
    /// assert_eq!(map.remove(id), Some("potion"));
    /// assert_eq!(map.remove(id), None);
    /// ```
    pub fn remove(&mut self, id: Id) -> Option<T> {
        // One lookup of the slot: its entry is read, and freed, through the one reference
        // taken here. Not `slot_index`: no loop of removes is unrolled, so its branch on
        // `base` would only add instructions here.
        let index_and_free = id.to_bits() & (Slot::FREE | 0xffff_ffff);
        let slot = index_and_free.wrapping_sub(u64::from(self.base));
        let slot = usize::try_from(slot).unwrap_or(usize::MAX);
        let at = self.slots.get_mut(slot)?;
        let entry = *at;
        let dense = usize::try_from(entry.dense_for_unfreed(id)).unwrap_or(usize::MAX);
        if dense >= self.items.len() {
            return None;
        }
        let freed = entry.freed();
        *at = freed;
        self.identity = false;
        // INVARIANT: `slot` < `slots.len()` <= u32::MAX.
        Some(self.remove_live(slot as u32, freed, dense))
    }

    /// Takes out the live item at `dense`, whose slot `slot` the caller has just freed (it
    /// holds `freed`): moves the last item into `dense`, and links `slot` to the free list
    /// unless it is retired.
    ///
    /// Not inlined: inlined into a caller's loop, with the lookup, its dozen live values
    /// spilled and shuffled between registers (75 instructions a remove in `query_min`'s
    /// loop; `DenseSlotMap::remove`, 55, is not inlined either).
    #[inline(never)]
    fn remove_live(&mut self, slot: u32, freed: Slot, dense: usize) -> T {
        let value = self.items.swap_remove(dense);
        // `meta` is as long as `items` was: its last entry is the slot of the item that moved
        // into `dense` (none if the removed item was the last).
        if let Some(moved) = self.meta.pop()
            && let Some(at) = self.meta.get_mut(dense)
        {
            *at = moved;
            // The moved item's slot holds its old dense index, the last one (`items.len()`
            // now): one xor turns it into `dense`.
            let last = self.items.len() as u32;
            if let Some(moved) = self.slots.get_mut(moved as usize) {
                debug_assert_eq!(moved.index(), last);
                *moved = Slot(moved.0 ^ u64::from(last ^ dense as u32));
            }
        }
        if freed.generation() != RETIRED {
            self.push_free(slot);
        }
        // The item moved from the end may belong anywhere: sorting starts over.
        self.defrag = Defrag::default();
        value
    }

    /// Removes the items of every live handle in `ids`; returns how many it removed.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::HandleMap;
    ///
    /// let mut map = HandleMap::new(0);
    /// let ids = map.insert_batch([1_u64, 2, 3]);
    /// assert_eq!(map.remove_batch(&[ids[0], ids[2], ids[0]]), 2);
    /// assert_eq!(map.as_slice(), [2]);
    /// ```
    pub fn remove_batch(&mut self, ids: &[Id]) -> usize {
        ids.iter().filter(|&&id| self.remove(id).is_some()).count()
    }

    /// Keeps only the items for which `keep` returns `true`.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::HandleMap;
    ///
    /// let mut map = HandleMap::new(0);
    /// let ids = map.insert_batch(1_u64..=6);
    /// map.retain(|_, n| *n % 2 == 0);
    /// assert_eq!(map.len(), 3);
    /// assert!(!map.contains(ids[0]));
    /// assert_eq!(map[ids[1]], 2);
    /// ```
    pub fn retain(&mut self, mut keep: impl FnMut(Id, &mut T) -> bool) {
        let mut dense = 0;
        while dense < self.items.len() {
            let id = self.id_of_slot(self.meta[dense] as usize);
            if keep(id, &mut self.items[dense]) {
                dense += 1;
            } else {
                // The last item moves into `dense`: look at it next.
                self.remove(id);
            }
        }
    }

    /// Removes every item. Every live slot's generation is bumped, so no old handle resolves,
    /// and the slots are reused in index order.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::HandleMap;
    ///
    /// let mut map = HandleMap::new(0);
    /// let old = map.insert(1_u64);
    /// map.clear();
    /// let new = map.insert(2_u64);
    /// assert_eq!(new.index(), old.index(), "the slot is reused...");
    /// assert_eq!(map.get(old), None, "...but the old handle stays dead");
    /// ```
    pub fn clear(&mut self) {
        self.items.clear();
        self.free_all_slots();
    }

    /// Frees every live slot and rebuilds the free list in slot order.
    fn free_all_slots(&mut self) {
        self.identity = self.slots.is_empty();
        self.meta.clear();
        self.free_head = NONE;
        self.free_tail = NONE;
        for slot in 0..self.slots.len() {
            let entry = self.slots[slot];
            let generation =
                if entry.is_free() { entry.generation() } else { entry.generation() + 1 };
            self.slots[slot] = Slot::free(NONE, generation, self.type_id);
            if generation != RETIRED {
                self.push_free(slot as u32);
            }
        }
        self.defrag = Defrag::default();
    }

    /// Drops every item and forgets every slot, keeping the allocations: faster than
    /// [`clear`](HandleMap::clear) on a map with many slots, since it does not visit them.
    ///
    /// Old handles still never resolve: new handles start at the index after every slot the
    /// map had, and an older index is stale. When the 32-bit index space runs low, `reset`
    /// falls back to `clear`, which reuses slots under new generations.
    ///
    /// A reset map (its slot 0 past index 0) looks its handles up through one more instruction
    /// than a map that was never reset (about 1.3x [`get`](HandleMap::get)'s time on a hot
    /// loop, BENCHMARKS.md "Issue 18, third pass"); [`clear`](HandleMap::clear) keeps the
    /// faster path, at the cost of visiting every slot.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::HandleMap;
    ///
    /// let mut map = HandleMap::new(0);
    /// let old = map.insert(1_u64);
    /// map.reset();
    /// let new = map.insert(2_u64);
    /// assert_ne!(new, old);
    /// assert_eq!(map.get(old), None);
    /// assert_eq!(map[new], 2);
    /// ```
    pub fn reset(&mut self) {
        let next_base = u64::from(self.base) + self.slots.len() as u64;
        // Keep half of the index space for slots after the reset.
        if next_base > u64::from(MAX_BASE) {
            self.clear();
            return;
        }
        self.items.clear();
        self.meta.clear();
        self.slots.clear();
        self.free_head = NONE;
        self.free_tail = NONE;
        self.base = next_base as u32;
        self.identity = true;
        self.defrag = Defrag::default();
    }

    /// Removes every item, returning them with their handles in dense order. The map is then
    /// empty, as after [`clear`](HandleMap::clear).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::HandleMap;
    ///
    /// let mut map = HandleMap::new(0);
    /// let a = map.insert('a');
    /// let drained: Vec<_> = map.drain().collect();
    /// assert_eq!(drained, [(a, 'a')]);
    /// assert!(map.is_empty());
    /// assert!(!map.contains(a));
    /// ```
    pub fn drain(&mut self) -> Drain<T> {
        let ids: Vec<Id> = (0..self.items.len()).filter_map(|d| self.id_at(d)).collect();
        let items = std::mem::take(&mut self.items);
        self.free_all_slots();
        Drain { inner: ids.into_iter().zip(items) }
    }

    /// Swaps two items of the dense array and patches their slots: handles stay valid.
    fn swap_dense(&mut self, a: usize, b: usize) {
        self.identity = false;
        self.items.swap(a, b);
        self.meta.swap(a, b);
        for d in [a, b] {
            let slot = self.meta[d] as usize;
            self.slots[slot] = self.slots[slot].with_index(d as u32);
        }
    }

    /// Sorts the dense array a few swaps at a time: an insertion sort that a later call resumes
    /// where this one stopped, so that a frame can spend a fixed budget on it. Handles stay
    /// valid; iteration order is what changes.
    ///
    /// Returns the number of swaps made: 0 when the array is in order. A pass that ends starts
    /// again on the next call (items may have changed); removing an item restarts it too.
    ///
    /// Insertion sort suits arrays that are nearly in order; to sort a shuffled array at once,
    /// [`sort_by`](HandleMap::sort_by) is O(n log n).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::HandleMap;
    ///
    /// let mut map = HandleMap::new(0);
    /// let ids = map.insert_batch([3_u64, 1, 2]);
    /// while map.defragment_by(|a, b| a.cmp(b), Some(1)) > 0 {}
    /// assert_eq!(map.as_slice(), [1, 2, 3]);
    /// assert_eq!(map[ids[0]], 3, "handles follow their items");
    /// ```
    pub fn defragment_by(
        &mut self,
        mut compare: impl FnMut(&T, &T) -> Ordering,
        max_swaps: Option<usize>,
    ) -> usize {
        let len = self.items.len();
        if self.defrag.next >= len {
            self.defrag = Defrag::default();
        }
        let mut swaps = 0;
        let mut next = self.defrag.next.max(1);
        let mut moving = self.defrag.moving.take();
        while next < len {
            let mut at = moving.take().unwrap_or(next);
            while at > 0 && compare(&self.items[at - 1], &self.items[at]) == Ordering::Greater {
                if max_swaps == Some(swaps) {
                    self.defrag = Defrag { next, moving: Some(at) };
                    return swaps;
                }
                self.swap_dense(at - 1, at);
                swaps += 1;
                at -= 1;
            }
            next += 1;
        }
        self.defrag = Defrag { next: len, moving: None };
        swaps
    }

    /// Sorts the dense array at once (O(n log n), stable). Handles stay valid.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::HandleMap;
    ///
    /// let mut map = HandleMap::new(0);
    /// let ids = map.insert_batch([30_u64, 10, 20]);
    /// map.sort_by(|a, b| a.cmp(b));
    /// assert_eq!(map.as_slice(), [10, 20, 30]);
    /// assert_eq!(map[ids[0]], 30);
    /// ```
    pub fn sort_by(&mut self, mut compare: impl FnMut(&T, &T) -> Ordering) {
        let items = std::mem::take(&mut self.items);
        let mut pairs: Vec<(T, u32)> = items.into_iter().zip(self.meta.iter().copied()).collect();
        pairs.sort_by(|a, b| compare(&a.0, &b.0));
        self.meta.clear();
        self.items.reserve(pairs.len());
        for (dense, (item, slot)) in pairs.into_iter().enumerate() {
            self.items.push(item);
            self.meta.push(slot);
            self.slots[slot as usize] = self.slots[slot as usize].with_index(dense as u32);
        }
        // Still in its identity state if no item moved.
        self.identity =
            self.identity && self.meta.iter().enumerate().all(|(d, &s)| s as usize == d);
        self.defrag = Defrag { next: self.items.len(), moving: None };
    }

    /// The items in dense order, as one slice.
    #[must_use]
    pub fn as_slice(&self) -> &[T] {
        &self.items
    }

    /// Iterates over `(Id, &T)` in dense order.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::HandleMap;
    ///
    /// let mut map = HandleMap::new(0);
    /// let a = map.insert(1_u64);
    /// let b = map.insert(2_u64);
    /// assert_eq!(map.iter().collect::<Vec<_>>(), [(a, &1), (b, &2)]);
    /// ```
    #[must_use]
    pub fn iter(&self) -> Iter<'_, T> {
        Iter {
            ids: IdsOf { slots: &self.slots, base: self.base },
            inner: self.meta.iter().zip(self.items.iter()),
        }
    }

    /// Iterates over `(Id, &mut T)` in dense order.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::HandleMap;
    ///
    /// let mut map = HandleMap::new(0);
    /// let a = map.insert(1_u64);
    /// for (_, value) in map.iter_mut() {
    ///     *value *= 10;
    /// }
    /// assert_eq!(map[a], 10);
    /// ```
    pub fn iter_mut(&mut self) -> IterMut<'_, T> {
        IterMut {
            ids: IdsOf { slots: &self.slots, base: self.base },
            inner: self.meta.iter().zip(self.items.iter_mut()),
        }
    }

    /// Iterates over the items in dense order: a slice walk.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::HandleMap;
    ///
    /// let mut map = HandleMap::new(0);
    /// map.insert_batch([1_u64, 2, 3]);
    /// assert_eq!(map.values().sum::<u64>(), 6);
    /// ```
    pub fn values(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }

    /// Iterates mutably over the items in dense order: a slice walk.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::HandleMap;
    ///
    /// let mut map = HandleMap::new(0);
    /// let id = map.insert(1_u64);
    /// map.values_mut().for_each(|v| *v += 1);
    /// assert_eq!(map[id], 2);
    /// ```
    pub fn values_mut(&mut self) -> std::slice::IterMut<'_, T> {
        self.items.iter_mut()
    }

    /// Iterates over the handles in dense order.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::HandleMap;
    ///
    /// let mut map = HandleMap::new(0);
    /// let ids = map.insert_batch(['a', 'b']);
    /// assert_eq!(map.ids().collect::<Vec<_>>(), ids);
    /// ```
    #[must_use]
    pub fn ids(&self) -> impl ExactSizeIterator<Item = Id> + '_ {
        (0..self.items.len()).map(|dense| self.id_of_slot(self.meta[dense] as usize))
    }
}

impl<T: Clone> Clone for HandleMap<T> {
    fn clone(&self) -> Self {
        HandleMap {
            items: self.items.clone(),
            meta: self.meta.clone(),
            slots: self.slots.clone(),
            free_head: self.free_head,
            free_tail: self.free_tail,
            base: self.base,
            type_id: self.type_id,
            identity: self.identity,
            defrag: self.defrag,
        }
    }

    /// Copies `source` into this map's buffers, reusing their allocations: a snapshot's
    /// restore is three memcpys into warm memory.
    fn clone_from(&mut self, source: &Self) {
        self.items.clone_from(&source.items);
        self.meta.clone_from(&source.meta);
        self.slots.clone_from(&source.slots);
        self.free_head = source.free_head;
        self.free_tail = source.free_tail;
        self.base = source.base;
        self.type_id = source.type_id;
        self.identity = source.identity;
        self.defrag = source.defrag;
    }
}

impl<T> Default for HandleMap<T> {
    /// An empty map with type id 0.
    fn default() -> HandleMap<T> {
        HandleMap::new(0)
    }
}

impl<T: fmt::Debug> fmt::Debug for HandleMap<T> {
    /// `{0v0: item, 1v0: item}`: the items by handle, in dense order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Display<D>(D);
        impl<D: fmt::Display> fmt::Debug for Display<D> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }
        f.debug_map().entries(self.iter().map(|(id, v)| (Display(id), v))).finish()
    }
}

impl<T: PartialEq> PartialEq for HandleMap<T> {
    /// Equal when both have the same type id and the same live handles, each to an equal item,
    /// whatever the order of the dense arrays.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::HandleMap;
    ///
    /// let mut a = HandleMap::new(0);
    /// let ids = a.insert_batch([1_u64, 2]);
    /// let mut b = a.clone();
    /// b.sort_by(|x, y| y.cmp(x));
    /// assert_eq!(a, b, "same handles, same items");
    /// b.remove(ids[0]);
    /// assert_ne!(a, b);
    /// ```
    fn eq(&self, other: &HandleMap<T>) -> bool {
        self.type_id == other.type_id
            && self.len() == other.len()
            && self.iter().all(|(id, item)| other.get(id) == Some(item))
    }
}

impl<T: Eq> Eq for HandleMap<T> {}

impl<T> Index<Id> for HandleMap<T> {
    type Output = T;

    /// # Panics
    ///
    /// If `id` does not resolve; the message says why (stale, wrong type, out of range).
    #[inline]
    #[track_caller]
    fn index(&self, id: Id) -> &T {
        match self.get(id) {
            Some(item) => item,
            None => self.index_failed(id),
        }
    }
}

impl<T> IndexMut<Id> for HandleMap<T> {
    /// # Panics
    ///
    /// If `id` does not resolve; the message says why.
    #[inline]
    #[track_caller]
    fn index_mut(&mut self, id: Id) -> &mut T {
        let Some((_, dense)) = self.live_slot(id) else { self.index_failed(id) };
        &mut self.items[dense]
    }
}
