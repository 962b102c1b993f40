//! A [`HandleMap`]'s state as raw byte sections (for save files) and as serde data: both are
//! read back through one validator, [`HandleMap::from_parts`].

use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use super::HandleMapError;
use super::{Defrag, HandleMap, Id, MAX_BASE, NONE, RETIRED, Slot, identity_dense};

/// The fixed part of a [`HandleMap`]'s raw sections: counts, free-list ends, type id.
///
/// Little-endian and unaligned, so it is read from any byte offset of a file.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct RawHeader {
    /// The map's type id.
    pub type_id: U16,
    /// Zero, or [`RawHeader::IDENTITY`] (from format 1.3 of a save; zero before).
    pub flags: U16,
    /// Index of slot 0 in handles (raised by `reset`).
    pub base: U32,
    /// Number of items.
    pub len: U32,
    /// Number of slots.
    pub slots: U32,
    /// First slot of the free list, or `u32::MAX`.
    pub free_head: U32,
    /// Last slot of the free list, or `u32::MAX`.
    pub free_tail: U32,
    /// `size_of::<T>()`, checked on load so that a map of one item type is not read as
    /// another.
    pub item_size: U32,
}

impl RawHeader {
    /// Flag of a map in its identity state: slot `i` holds item `i` for every `i`, every slot
    /// at the first generation, no free slot (a map that never removed an item, since it was
    /// made or last reset). Its `meta` and `slots` sections are then left out (empty), its
    /// slot count is its item count, its free list empty, and a reader rebuilds them.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::HandleMap;
    /// use datacomp::handle_map::RawHandleMap;
    /// use datacomp::handle_map::RawHeader;
    ///
    /// let mut map = HandleMap::new(2);
    /// let ids = map.insert_batch([10_u64, 20, 30]);
    /// let full = map.as_raw();
    /// let mut header = full.header;
    /// header.flags.set(RawHeader::IDENTITY);
    /// let identity = RawHandleMap { header, meta: &[], slots: &[], ..full };
    /// let copy: HandleMap<u64> = HandleMap::from_raw(&identity).unwrap();
    /// assert_eq!(copy[ids[2]], 30);
    /// assert_eq!(copy.as_raw().slots, full.slots);
    /// ```
    pub const IDENTITY: u16 = 1;
}

/// A [`HandleMap`]'s whole state as a header and three byte sections, written and read with no
/// per-item encoding.
///
/// - `items`: the dense items, `len * size_of::<T>()` bytes;
/// - `meta`: each item's slot, `len` little-endian `u32`s;
/// - `slots`: `slots` little-endian `u64`s, each the bits of the handle its slot would issue,
///   with the index replaced by the item's dense index (live) or the next free slot (free bit
///   set).
///
/// A header flagged [`RawHeader::IDENTITY`] has empty `meta` and `slots`: both follow from
/// the item count.
///
/// # Examples
///
/// ```
/// use datacomp::HandleMap;
/// use datacomp::handle_map::RawHandleMap;
///
/// let mut map = HandleMap::new(1);
/// let id = map.insert(42_u64);
/// let raw = map.as_raw();
/// let copy: HandleMap<u64> = HandleMap::from_raw(&raw).unwrap();
/// assert_eq!(copy[id], 42);
///
/// let mut bad_slots = raw.slots.to_vec();
/// bad_slots[0] = 7; // item 0's slot now points at item 7
/// let bad = RawHandleMap { slots: &bad_slots, ..raw };
/// assert!(HandleMap::<u64>::from_raw(&bad).is_err());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct RawHandleMap<'a> {
    /// Counts, free-list ends and type id.
    pub header: RawHeader,
    /// The dense items' bytes.
    pub items: &'a [u8],
    /// Each item's slot.
    pub meta: &'a [u8],
    /// The sparse slots.
    pub slots: &'a [u8],
}

/// The typed parts that both raw sections and serde data are read into, then checked by
/// [`HandleMap::from_parts`].
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename = "HandleMap", deny_unknown_fields))]
struct Parts<T> {
    type_id: u16,
    base: u32,
    free_head: u32,
    free_tail: u32,
    items: Vec<T>,
    meta: Vec<u32>,
    slots: Vec<Slot>,
}

/// [`check`] of `parts`, a map whose meta and slots are kept.
fn check_parts<T>(parts: &Parts<T>) -> Result<(), HandleMapError> {
    let Parts { type_id, base, free_head, free_tail, .. } = *parts;
    let fields = Fields { type_id, base, free_head, free_tail, identity: false };
    let (meta, slots): (&[U32], &[U64]) = (
        zerocopy::transmute_ref!(parts.meta.as_slice()),
        zerocopy::transmute_ref!(parts.slots.as_slice()),
    );
    check(fields, parts.items.len(), meta, slots)
}

/// The fixed fields that, with the meta and slot arrays, make a handle map's state.
#[derive(Clone, Copy)]
struct Fields {
    type_id: u16,
    base: u32,
    free_head: u32,
    free_tail: u32,
    /// Flagged [`RawHeader::IDENTITY`]: `meta` and `slots` are left out, implied by the count.
    identity: bool,
}

/// The checks of the fixed fields for a map of `len` items in `slot_count` slots.
fn check_fields(fields: Fields, len: u64, slot_count: u64) -> Result<(), HandleMapError> {
    let Fields { type_id, base, .. } = fields;
    if type_id > Id::MAX_TYPE_ID {
        return Err(HandleMapError::TypeId { type_id });
    }
    if base > MAX_BASE {
        return Err(HandleMapError::Base { base, max: MAX_BASE });
    }
    if u64::from(base) + slot_count > u64::from(u32::MAX) || len >= u64::from(u32::MAX) - 1 {
        return Err(HandleMapError::IndexSpace { base, slots: slot_count });
    }
    Ok(())
}

/// The meta and slot arrays of an identity map of `len` items (see [`RawHeader::IDENTITY`]).
fn identity_parts(len: usize, type_id: u16) -> (Vec<u32>, Vec<Slot>) {
    // `len` is below 2^32 - 1: `check_fields` passed.
    let meta = (0..len as u32).collect();
    let slots = (0..len as u32).map(|i| Slot::live(i, 0, type_id)).collect();
    (meta, slots)
}

/// Checks every invariant of a handle map's state, wherever it lives: owned vectors (cast to
/// these little-endian slices at no cost) or sections of a file read in place.
fn check(fields: Fields, len: usize, meta: &[U32], slots: &[U64]) -> Result<(), HandleMapError> {
    let Fields { type_id, free_head, free_tail, .. } = fields;
    let len = len as u64;
    if meta.len() as u64 != len {
        return Err(HandleMapError::Meta { items: len, meta: meta.len() as u64 });
    }
    let slot_count = slots.len() as u64;
    check_fields(fields, len, slot_count)?;
    let slot_at = |s: usize| slots.get(s).map(|bits| Slot(bits.get()));
    let mut live = 0_u64;
    let mut retired = 0_u64;
    for (s, bits) in slots.iter().enumerate() {
        let slot = Slot(bits.get());
        let s = s as u32;
        if slot.type_id() != type_id {
            return Err(HandleMapError::SlotType { slot: s, found: slot.type_id(), type_id });
        }
        if slot.is_free() {
            retired += u64::from(slot.generation() == RETIRED);
            continue;
        }
        live += 1;
        let dense = slot.index();
        let back = meta.get(dense as usize).map(|m| m.get());
        if slot.generation() == RETIRED || back != Some(s) {
            return Err(HandleMapError::SlotLink { slot: s, dense, back });
        }
    }
    if live != len {
        return Err(HandleMapError::LiveCount { live, len });
    }
    // The free list must visit each free, unretired slot once and end at the tail. A walk
    // that revisits a slot never ends, so reaching the end in exactly that many steps proves
    // the list acyclic and complete.
    let free = slot_count - len - retired;
    let (mut at, mut last) = (free_head, NONE);
    for step in 0..free {
        let slot = slot_at(at as usize).filter(|s| s.is_free() && s.generation() != RETIRED);
        let Some(slot) = slot else {
            return Err(HandleMapError::FreeList { step, slot: at, free });
        };
        last = at;
        at = slot.index();
    }
    if at != NONE || free_tail != last {
        return Err(HandleMapError::FreeListEnd { free, tail: free_tail, last, next: at });
    }
    Ok(())
}

/// Checks the header's flags, item size and each section's size against the header's
/// counts, as [`HandleMap::from_raw`] and a view do first: for an owner that reads the items
/// its own way (a save's end offsets) before it builds the map.
pub(crate) fn check_header(raw: &RawHandleMap<'_>, item_size: usize) -> Result<(), HandleMapError> {
    check_sizes(raw, item_size).map(|_| ())
}

/// Checks the header's item size and each section's size against the header's counts.
fn check_sizes(raw: &RawHandleMap<'_>, item_size: usize) -> Result<Fields, HandleMapError> {
    let header = &raw.header;
    let item_size = item_size as u64;
    let flags = header.flags.get();
    if flags & !RawHeader::IDENTITY != 0 {
        return Err(HandleMapError::Flags { flags });
    }
    let identity = flags & RawHeader::IDENTITY != 0;
    if u64::from(header.item_size.get()) != item_size {
        let found = u64::from(header.item_size.get());
        return Err(HandleMapError::ItemSize { expected: item_size, found });
    }
    let len = u64::from(header.len.get());
    let slots = u64::from(header.slots.get());
    if identity {
        let checks = [
            ("slots", header.slots.get(), header.len.get()),
            ("free list", header.free_head.get(), NONE),
            ("free list", header.free_tail.get(), NONE),
        ];
        if let Some((field, found, expected)) = checks.into_iter().find(|&(_, f, e)| f != e) {
            return Err(HandleMapError::Identity { field, found, expected });
        }
    }
    // An identity map's meta and slots are left out.
    let kept = u64::from(!identity);
    let sizes = [
        ("items", raw.items, len * item_size),
        ("meta", raw.meta, kept * len * 4),
        ("slots", raw.slots, kept * slots * 8),
    ];
    for (section, bytes, expected) in sizes {
        if bytes.len() as u64 != expected {
            return Err(HandleMapError::SectionSize {
                section,
                expected,
                found: bytes.len() as u64,
            });
        }
    }
    Ok(Fields {
        type_id: header.type_id.get(),
        base: header.base.get(),
        free_head: header.free_head.get(),
        free_tail: header.free_tail.get(),
        identity,
    })
}

impl<T> HandleMap<T> {
    /// Checks every invariant of `parts` and builds the map.
    fn from_parts(parts: Parts<T>) -> Result<HandleMap<T>, HandleMapError> {
        check_parts(&parts)?;
        Ok(HandleMap::from_valid_parts(parts, false))
    }

    /// Builds the map of `parts` that hold every invariant [`check`] tests; `identity` when
    /// they are known to be an identity map's ([`RawHeader::IDENTITY`]).
    fn from_valid_parts(parts: Parts<T>, identity: bool) -> HandleMap<T> {
        let Parts { type_id, base, free_head, free_tail, items, meta, slots } = parts;
        let sorted = items.len();
        let mut map = HandleMap {
            items,
            meta,
            slots,
            free_head,
            free_tail,
            base,
            type_id,
            identity,
            defrag: Defrag { next: sorted, moving: None },
        };
        // Known for a map read flagged as one; else looked for (O(items), as the check was).
        map.identity = identity || map.scan_identity();
        map
    }
}

/// A handle map's sections, validated and read in place: how a view of a save file resolves
/// handles without copying.
#[derive(Clone, Copy)]
pub(crate) struct HandleMapView<'a> {
    base: u32,
    type_id: u16,
    /// Number of items.
    len: usize,
    /// An identity map ([`RawHeader::IDENTITY`]): `meta` and `slots` are empty, and handles
    /// are answered arithmetically.
    identity: bool,
    // INVARIANT: empty for an identity map, else `len` entries that with `slots` pass `check`.
    meta: &'a [U32],
    slots: &'a [U64],
}

impl<'a> HandleMapView<'a> {
    /// Checks `raw` as [`HandleMap::from_raw`] does, for items of `item_size` bytes, without
    /// copying it.
    pub(crate) fn new(raw: &RawHandleMap<'a>, item_size: usize) -> Result<Self, HandleMapError> {
        let fields = check_sizes(raw, item_size)?;
        // Unaligned element types: only the sizes could fail, and they were checked.
        let size_error = |section| HandleMapError::SectionSize { section, expected: 0, found: 0 };
        let meta = <[U32]>::ref_from_bytes(raw.meta).map_err(|_| size_error("meta"))?;
        let slots = <[U64]>::ref_from_bytes(raw.slots).map_err(|_| size_error("slots"))?;
        let len = raw.header.len.get() as usize;
        if fields.identity {
            // O(1): nothing per item to check.
            check_fields(fields, len as u64, len as u64)?;
        } else {
            check(fields, meta.len(), meta, slots)?;
        }
        let (base, type_id, identity) = (fields.base, fields.type_id, fields.identity);
        Ok(HandleMapView { base, type_id, len, identity, meta, slots })
    }

    /// Number of items.
    pub(crate) fn len(self) -> usize {
        self.len
    }

    /// The dense index of `id`, if it is live.
    pub(crate) fn dense_index(self, id: Id) -> Option<usize> {
        if self.identity {
            // `base + len` fits in 32 bits (`check_fields`), as `identity_dense` needs.
            let dense = identity_dense(id, self.base, self.type_id);
            return (dense < self.len).then_some(dense);
        }
        let slot = Slot(self.slots.get(id.index().wrapping_sub(self.base) as usize)?.get());
        let dense = usize::try_from(slot.dense_for(id)).ok()?;
        (dense < self.len).then_some(dense)
    }

    /// The handle of the item at `dense` (below `len`).
    pub(crate) fn id_at(self, dense: usize) -> Id {
        if self.identity {
            return Id::new(self.base + dense as u32, 0, self.type_id);
        }
        let slot = self.meta[dense].get();
        Slot(self.slots[slot as usize].get()).id(self.base + slot)
    }
}

impl<T: IntoBytes + FromBytes + Immutable + KnownLayout> HandleMap<T> {
    /// The map's whole state as raw byte sections, borrowed: no per-item encoding.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::HandleMap;
    ///
    /// let mut map = HandleMap::new(0);
    /// map.insert_batch([1_u32, 2, 3]);
    /// let raw = map.as_raw();
    /// assert_eq!(raw.header.len.get(), 3);
    /// assert_eq!(raw.items, [1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0]);
    /// ```
    #[must_use]
    pub fn as_raw(&self) -> RawHandleMap<'_> {
        RawHandleMap {
            header: RawHeader {
                type_id: U16::new(self.type_id),
                flags: U16::ZERO,
                base: U32::new(self.base),
                len: U32::new(self.items.len() as u32),
                slots: U32::new(self.slots.len() as u32),
                free_head: U32::new(self.free_head),
                free_tail: U32::new(self.free_tail),
                item_size: U32::new(size_of::<T>() as u32),
            },
            items: self.items.as_bytes(),
            meta: self.meta.as_bytes(),
            slots: self.slots.as_bytes(),
        }
    }

    /// Reads a map back from [`as_raw`](HandleMap::as_raw) sections, copying them into aligned
    /// buffers and checking everything: section sizes, ranges, the dense <-> slot bijection,
    /// generations, and that the free list is acyclic and holds every free slot.
    ///
    /// # Errors
    ///
    /// A [`HandleMapError`] that says which section and which slot or item is wrong.
    pub fn from_raw(raw: &RawHandleMap<'_>) -> Result<HandleMap<T>, HandleMapError> {
        let fields = check_sizes(raw, size_of::<T>())?;
        let Fields { type_id, base, free_head, free_tail, identity } = fields;
        let len = raw.header.len.get() as usize;
        let slots = raw.header.slots.get() as usize;
        if identity {
            check_fields(fields, len as u64, len as u64)?;
            // Valid as built, with no walk of its slots: `check_sizes` proved the free list
            // empty and one slot an item, `check_fields` the type and the index space.
            let (meta, slots) = identity_parts(len, type_id);
            let items = copy_aligned::<T>(raw.items, len);
            let parts = Parts { type_id, base, free_head, free_tail, items, meta, slots };
            debug_assert_eq!(check_parts(&parts), Ok(()));
            return Ok(HandleMap::from_valid_parts(parts, true));
        }
        HandleMap::from_parts(Parts {
            type_id,
            base,
            free_head,
            free_tail,
            items: copy_aligned::<T>(raw.items, len),
            meta: copy_aligned::<u32>(raw.meta, len),
            slots: copy_aligned::<Slot>(raw.slots, slots),
        })
    }
}

impl<T> HandleMap<T> {
    /// Whether the map is in its identity state ([`RawHeader::IDENTITY`]): slot `i` holds item
    /// `i`, every generation the first, no free slot. O(1) when the map knows it (it was
    /// made, reset or read as one and has not removed since), else O(items).
    pub(crate) fn is_identity(&self) -> bool {
        self.identity || self.scan_identity()
    }

    /// [`is_identity`](HandleMap::is_identity) by a walk of the slots.
    fn scan_identity(&self) -> bool {
        self.free_head == NONE
            && self.slots.len() == self.items.len()
            && self.meta.iter().enumerate().all(|(i, &m)| m as usize == i)
            && (0_u32..).zip(&self.slots).all(|(i, &s)| s == Slot::live(i, 0, self.type_id))
    }
}

impl<T: IntoBytes + FromBytes + Immutable + KnownLayout> HandleMap<T> {
    /// As [`as_raw`](HandleMap::as_raw), with the `meta` and `slots` sections left out and the
    /// header flagged [`RawHeader::IDENTITY`] when the map is in its identity state: what a save
    /// writes.
    pub(crate) fn as_raw_compact(&self) -> RawHandleMap<'_> {
        let mut raw = self.as_raw();
        if self.is_identity() {
            raw.header.flags = U16::new(RawHeader::IDENTITY);
            raw.meta = &[];
            raw.slots = &[];
        }
        raw
    }
}

/// `bytes` as `count` values of `T` (zero-sized ones included): one zeroed allocation and one
/// copy. `bytes` holds exactly `count` of them.
fn copy_aligned<T: IntoBytes + FromBytes>(bytes: &[u8], count: usize) -> Vec<T> {
    let mut out: Vec<T> = std::iter::repeat_with(T::new_zeroed).take(count).collect();
    out.as_mut_bytes().copy_from_slice(bytes);
    out
}

#[cfg(feature = "serde")]
mod serde_impl {
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::{HandleMap, Parts};

    #[derive(Serialize)]
    #[serde(rename = "HandleMap")]
    struct Out<'a, T> {
        type_id: u16,
        base: u32,
        free_head: u32,
        free_tail: u32,
        items: &'a [T],
        meta: &'a [u32],
        slots: Vec<u64>,
    }

    impl<T: Serialize> Serialize for HandleMap<T> {
        /// The whole state: items, meta, slots and free-list ends, as one struct.
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            Out {
                type_id: self.type_id,
                base: self.base,
                free_head: self.free_head,
                free_tail: self.free_tail,
                items: &self.items,
                meta: &self.meta,
                slots: self.slots.iter().map(|s| s.0).collect(),
            }
            .serialize(serializer)
        }
    }

    impl<'de, T: Deserialize<'de>> Deserialize<'de> for HandleMap<T> {
        /// Reads the serialized state and checks it as [`HandleMap::from_raw`] does.
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<HandleMap<T>, D::Error> {
            HandleMap::from_parts(Parts::deserialize(deserializer)?).map_err(D::Error::custom)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Handles near every slot of `map`: each live one, with its free bit set, its generation
    /// one off, another type id, and indices just past the slots and below `base`.
    fn probes(map: &HandleMap<u64>) -> Vec<Id> {
        let base = map.as_raw().header.base.get();
        let slots = map.as_raw().header.slots.get();
        let mut ids = vec![Id::NULL];
        for index in base.saturating_sub(2)..base + slots + 2 {
            for generation in [0, 1, 2, 3, RETIRED - 1, RETIRED] {
                for type_id in [map.type_id(), map.type_id() + 1, map.type_id().saturating_sub(1)] {
                    let id = Id::new(index, generation, type_id);
                    ids.push(id);
                    ids.push(Id::from_bits(id.to_bits() | 1 << 63));
                }
            }
        }
        ids
    }

    #[test]
    fn a_view_resolves_exactly_the_handles_the_map_does() {
        let mut map = HandleMap::new(3);
        let first = map.insert_batch(0..5_u64);
        map.reset();
        let ids = map.insert_batch(10..20_u64);
        for &id in &ids[..6] {
            map.remove(id);
        }
        map.insert_batch(30..33_u64);
        let raw = map.as_raw();
        let view = HandleMapView::new(&raw, size_of::<u64>()).expect("a map's own sections");
        let mut live = 0;
        for id in probes(&map).into_iter().chain(first).chain(ids) {
            assert_eq!(view.dense_index(id), map.dense_index(id), "{id:?}");
            assert_eq!(map.get(id).is_some(), map.dense_index(id).is_some(), "{id:?}");
            if let Some(dense) = view.dense_index(id) {
                assert_eq!(view.id_at(dense), id);
                live += 1;
            }
        }
        // The 7 live handles, each found once among the probes and once among `ids`.
        assert_eq!(live, 7 + 4);
    }

    /// An identity map's view (no meta, no slots: handles answered arithmetically) resolves
    /// exactly the handles the map does, and reads back into an equal map; the map leaves the
    /// identity state at its first removal, and a reset (a raised base) keeps it.
    #[test]
    fn an_identity_view_resolves_exactly_the_handles_the_map_does() {
        let mut map = HandleMap::new(5);
        map.insert_batch(0..3_u64);
        map.reset();
        let ids = map.insert_batch(10..16_u64);
        assert!(map.is_identity());
        let raw = map.as_raw_compact();
        assert_eq!(raw.header.flags.get(), RawHeader::IDENTITY);
        assert!(raw.meta.is_empty() && raw.slots.is_empty());
        let view = HandleMapView::new(&raw, size_of::<u64>()).expect("an identity map's sections");
        let mut live = 0;
        for id in probes(&map).into_iter().chain(ids.iter().copied()) {
            assert_eq!(view.dense_index(id), map.dense_index(id), "{id:?}");
            if let Some(dense) = view.dense_index(id) {
                assert_eq!(view.id_at(dense), id);
                live += 1;
            }
        }
        assert_eq!(live, 6 + 6);
        let copy: HandleMap<u64> = HandleMap::from_raw(&raw).unwrap();
        assert_eq!(copy.as_raw().slots, map.as_raw().slots);
        assert_eq!(copy.as_raw().meta, map.as_raw().meta);
        assert_eq!(copy.as_raw().header, map.as_raw().header);
        map.remove(ids[5]);
        assert!(!map.is_identity(), "a removal leaves a free slot");
        assert_eq!(map.as_raw_compact().header.flags.get(), 0);
        map.insert(16);
        assert!(!map.is_identity(), "the reused slot is at generation 1");
    }

    /// A map that knows it is in its identity state answers handles by arithmetic, reading no
    /// slot: every probe (stale generations, the free bit, other type ids, indices below `base`
    /// and past the slots) resolves exactly as through the slots, on maps whose `base` 0, 1 or
    /// 2 resets raised.
    #[test]
    fn the_identity_lookup_resolves_exactly_what_the_slots_do() {
        for resets in 0..3 {
            let mut map = HandleMap::new(5);
            let mut issued = Vec::new();
            for _ in 0..resets {
                issued.extend(map.insert_batch(0..4_u64));
                map.reset();
            }
            issued.extend(map.insert_batch(10..17_u64));
            assert!(map.identity);
            let mut slow = map.clone();
            slow.identity = false;
            let mut live = 0;
            for id in probes(&map).into_iter().chain(issued.iter().copied()) {
                assert_eq!(map.get(id), slow.get(id), "{id:?}");
                assert_eq!(map.try_get(id), slow.try_get(id), "{id:?}");
                assert_eq!(map.dense_index(id), slow.dense_index(id), "{id:?}");
                assert_eq!(map.contains(id), slow.contains(id), "{id:?}");
                assert_eq!(map.clone().get_mut(id).copied(), slow.get_mut(id).copied(), "{id:?}");
                live += usize::from(map.contains(id));
            }
            // The 7 live handles, each once among the probes and once among `issued`.
            assert_eq!(live, 7 + 7, "resets {resets}");
        }
    }

    /// The identity flag is set exactly while the map is in its identity state, through each
    /// change that can leave it (and the ones that keep it).
    #[test]
    fn each_change_that_can_leave_the_identity_state_drops_the_flag() {
        fn flag(map: &HandleMap<u64>) -> bool {
            assert_eq!(map.identity, map.scan_identity(), "the flag says what the slots say");
            map.identity
        }
        let mut map = HandleMap::new(1);
        assert!(flag(&map), "new");
        map.clear();
        assert!(flag(&map), "an empty map cleared");
        let ids = map.insert_batch([3, 2, 1_u64]);
        assert!(flag(&map), "inserts into new slots");
        map.sort_by(|a, b| b.cmp(a));
        assert!(flag(&map), "a sort that moves no item");
        map.sort_by(u64::cmp);
        assert!(!flag(&map), "a sort that moves items");
        map.reset();
        let ids_after = map.insert_batch([3, 1, 2_u64]);
        assert!(flag(&map), "a reset, then inserts");
        assert_eq!(map.defragment_by(u64::cmp, None), 2);
        assert!(!flag(&map), "a defragment that swapped");
        map.reset();
        map.insert_batch([1, 2_u64]);
        let compact = map.as_raw_compact();
        assert_eq!(compact.header.flags.get(), RawHeader::IDENTITY);
        assert!(flag(&HandleMap::<u64>::from_raw(&compact).unwrap()), "read flagged");
        assert!(flag(&HandleMap::<u64>::from_raw(&map.as_raw()).unwrap()), "read in full");
        let last = map.insert(3);
        map.remove(last);
        assert!(!flag(&map), "a removal, even of the last item");
        assert!(!flag(&HandleMap::<u64>::from_raw(&map.as_raw()).unwrap()), "read back");
        map.reset();
        map.insert(1);
        map.clear();
        assert!(!flag(&map), "clear bumps the generations");
        map.reset();
        map.insert(1);
        drop(map.drain());
        assert!(!flag(&map), "drain");
        assert!(ids.iter().chain(&ids_after).all(|&id| map.get(id).is_none()));
    }
}
