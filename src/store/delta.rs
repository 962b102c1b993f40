//! [`StorePatch`]: what changed between two stores, how it is found and how it applies.
//!
//! Diffs, merges and deltas work on what each entity stores (its overrides and tombstones),
//! not on what it reads through its prototypes, and carry the prototype links that changed.
//!
//! A delta names its base by a crc32 of the base's contents, records the target's handle map
//! as the slots and dense entries that differ from the base's, and records each entity the
//! target changed: a [`Patch`](crate::blob::Patch) for one the base has, the whole blob for
//! one it does not. Removed entities need no record: the target's handle map no longer has
//! them. The fields are the delta file's sections; their bytes (writing, reading, checking)
//! are `crate::format::delta`'s, which is why they are `pub(crate)`.

use std::fmt;

use zerocopy::little_endian::{U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::blob::{Blob, layout, patch};
use crate::format::{LoadError, StoreError};
use crate::handle_map::{HandleMap, Id, RawHandleMap, RawHeader};
use crate::names::KeyNames;

use super::proto::{self, Links};
use super::{ArenaFull, Span, Store, garbage_of};

/// A record of the entities section: an entity the base does not have, whole.
pub(crate) const INSERTED: u32 = 1;
/// A record of the entities section: a patch of the base's entity.
pub(crate) const CHANGED: u32 = 2;
/// Words of a record's head: the id (two words), the kind, the data's length in words.
pub(crate) const RECORD_HEAD: usize = 4;

/// A slot of the target's handle map that differs from the base's.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub(crate) struct SlotChange {
    pub(crate) slot: U32,
    pub(crate) value: U64,
}

/// An entity live in the target whose prototype differs from the base's: its handle and its
/// prototype's (`Id::NULL`'s bits for none), as the delta file's `prototypes` section holds
/// them (format 1.5).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub(crate) struct LinkChange {
    pub(crate) instance: U64,
    pub(crate) prototype: U64,
}

impl LinkChange {
    fn new(instance: Id, prototype: Option<Id>) -> LinkChange {
        LinkChange {
            instance: U64::new(instance.to_bits()),
            prototype: U64::new(prototype.unwrap_or(Id::NULL).to_bits()),
        }
    }
}

/// The link changes between `base` and `target` for the target's entities `ids`, in ascending
/// order of the instance's bits.
fn link_changes(
    base: &Store,
    target: &impl Target,
    ids: impl Iterator<Item = Id>,
) -> Vec<LinkChange> {
    if base.links.is_empty() && !target.has_links() {
        return Vec::new();
    }
    let mut changes: Vec<LinkChange> = ids
        .filter_map(|id| {
            let now = target.prototype(id);
            (now != base.links.prototype(id)).then(|| LinkChange::new(id, now))
        })
        .collect();
    changes.sort_unstable_by_key(|c| c.instance.get());
    changes
}

/// The state a delta goes to, as [`StorePatch::diff_slots`] reads it at the slots it is
/// given: a whole [`Store`], or only what changed in one (an
/// [`Excerpt`](crate::history::Excerpt), taken in O(changed)).
pub(crate) trait Target {
    /// The target's handle map header.
    fn header(&self) -> RawHeader;
    /// The raw bits of slot `slot`; `None` past the target's last slot.
    fn slot_bits(&self, slot: u32) -> Option<U64>;
    /// The handle and dense position of slot `slot`, when it is live.
    fn live_at_slot(&self, slot: u32) -> Option<(Id, usize)>;
    /// The blob of `id`, live at a slot `live_at_slot` answered for.
    fn blob(&self, id: Id) -> crate::BlobRef<'_>;
    /// Whether the target may hold prototype links (false: it holds none).
    fn has_links(&self) -> bool;
    /// The prototype of `id`, live at a slot `live_at_slot` answered for.
    fn prototype(&self, id: Id) -> Option<Id>;
    /// The target's key names when they differ from `base`'s: compared whole, or (`grown`: two
    /// states of one store, tracked between them) by their count, since tracked names only
    /// grow.
    fn names_unless_base(&self, base: &Store, grown: bool) -> Option<KeyNames>;
    /// The target's data version.
    fn data_version(&self) -> u32;
}

impl Target for Store {
    fn header(&self) -> RawHeader {
        self.index.as_raw().header
    }

    fn slot_bits(&self, slot: u32) -> Option<U64> {
        let slots = <[U64]>::ref_from_bytes(self.index.as_raw().slots)
            .expect("INVARIANT: a handle map's own sections");
        slots.get(slot as usize).copied()
    }

    fn live_at_slot(&self, slot: u32) -> Option<(Id, usize)> {
        self.index.live_at_slot(slot as usize)
    }

    fn blob(&self, id: Id) -> crate::BlobRef<'_> {
        self.get(id).expect("INVARIANT: live in the target's index")
    }

    fn has_links(&self) -> bool {
        !self.links.is_empty()
    }

    fn prototype(&self, id: Id) -> Option<Id> {
        self.links.prototype(id)
    }

    fn names_unless_base(&self, base: &Store, grown: bool) -> Option<KeyNames> {
        let differ =
            if grown { self.names.len() != base.names.len() } else { self.names != base.names };
        differ.then(|| self.names.clone())
    }

    fn data_version(&self) -> u32 {
        self.data_version
    }
}

/// A dense entry (its slot) of the target's handle map that differs from the base's.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub(crate) struct MetaChange {
    pub(crate) dense: U32,
    pub(crate) slot: U32,
}

/// The changes that turn one [`Store`] into another: entities inserted, removed and changed,
/// each changed entity as a [`Patch`](crate::blob::Patch), with the target's handles exactly.
///
/// Made by [`StorePatch::diff`], applied by [`apply`](StorePatch::apply) to the base it was made
/// from, and saved as a delta file ([`save`](StorePatch::save),
/// [`to_bytes`](StorePatch::to_bytes)): the save file's header and checks, with sections of its
/// own. For a world where 1% of entities changed, the delta is about 1% of a full save.
///
/// Applying gives a store equal to the target (`==`: the same handles and entries) whose
/// handle map is the target's, slot for slot: the same handles resolve, stale ones stay stale,
/// and the next insert gets the handle the target would give. The blobs' bytes may be laid out
/// differently (a patched blob is repacked).
///
/// The base must be the very store the delta was made from, byte for byte: loaded from that
/// store's save, or kept in memory. An equal store laid out differently (compacted, say) is
/// refused. So the usual pattern is one base save and each later save a delta from it; to
/// chain deltas instead, make each one from the store the previous apply produced.
///
/// # Examples
///
/// ```
/// use datacomp::{Blob, Store, StorePatch};
///
/// let mut base = Store::new();
/// let hero = base.insert(&[("stats.health", 100.0)].into_iter().collect::<Blob>());
/// let orc = base.insert(&[("stats.health", 30.0)].into_iter().collect::<Blob>());
/// let saved = base.to_bytes();
///
/// let mut now = base.clone();
/// now.get_mut(hero).unwrap().set("stats.health", 95.0).unwrap();
/// now.remove(orc);
/// let imp = now.insert(&[("stats.health", 5.0)].into_iter().collect::<Blob>());
///
/// let delta = StorePatch::diff(&base, &now);
/// assert_eq!((delta.inserted(), delta.changed()), (1, 1));
/// let bytes = delta.to_bytes();
///
/// // Later: load the base, then the delta.
/// let mut world = Store::from_bytes(&saved)?;
/// StorePatch::from_bytes(&bytes)?.apply(&mut world)?;
/// assert_eq!(world, now);
/// assert!(!world.contains(orc));
/// assert_eq!(world.get(imp).unwrap().get_float("stats.health"), Some(5.0));
/// # Ok::<(), datacomp::LoadError>(())
/// ```
#[derive(Clone)]
pub struct StorePatch {
    /// The crc32 of the base's contents ([`Store::content_crc`]).
    pub(crate) base_crc: u32,
    /// The target's handle map header.
    pub(crate) header: RawHeader,
    // INVARIANT (for patches `diff` makes; `from_bytes` checks the order, `apply` the range):
    // ascending slot and dense positions.
    pub(crate) slots: Vec<SlotChange>,
    pub(crate) meta: Vec<MetaChange>,
    /// Records in the target's dense order: `[id low, id high, kind, n, n words of data]`,
    /// the data a valid blob (`INSERTED`) or patch (`CHANGED`).
    pub(crate) entities: Vec<u32>,
    pub(crate) inserted: usize,
    pub(crate) changed: usize,
    /// The target's key names, whole; `None` when they are the base's (most deltas), which
    /// the file marks with flag bit 0 of its `delta base` section.
    pub(crate) names: Option<KeyNames>,
    /// Read from a delta whose names section is the flat list of formats 1.0 and 1.1:
    /// `base_crc` covers the base's names in that form, and the file is written again so.
    pub(crate) list_names: bool,
    /// The base's data version: a store of another one is refused.
    pub(crate) base_data_version: u32,
    /// The target's data version, which applying gives the base.
    pub(crate) data_version: u32,
    // INVARIANT (for patches `diff` makes; `from_bytes` checks the order, `apply` the
    // handles): ascending instance bits.
    /// The prototype links that differ from the base's (format 1.5).
    pub(crate) links: Vec<LinkChange>,
}

impl Store {
    /// A crc32 of the store's contents: its handle map (without the arena offsets) and every
    /// blob's bytes in dense order, its key names (as the key tree, or with `list_names` as
    /// the flat list of formats 1.0 and 1.1, which their deltas were made with), and its data
    /// version unless 0 (so that a delta of format 1.0 keeps its base's crc). A store and the
    /// store loaded from its save have the same; a delta checks its base by it. Equal stores
    /// whose blobs are laid out differently (one compacted, say) have different ones.
    pub(crate) fn content_crc(&self, list_names: bool) -> u32 {
        let raw = self.index.as_raw();
        let mut crc = crc32fast::Hasher::new();
        crc.update(raw.header.as_bytes());
        crc.update(raw.meta);
        crc.update(raw.slots);
        for (_, blob) in self.iter() {
            crc.update(blob.as_bytes());
        }
        if list_names {
            self.names.crc_list(&mut crc);
        } else {
            crc.update(&self.names.encode_tree());
        }
        if self.data_version != 0 {
            crc.update(&self.data_version.to_le_bytes());
        }
        // Format 1.5: the links, where there are any (so a store without keeps its crc).
        if !self.links.is_empty() {
            for id in self.index.ids() {
                if let Some(p) = self.links.prototype(id) {
                    crc.update(&id.to_bits().to_le_bytes());
                    crc.update(&p.to_bits().to_le_bytes());
                }
            }
        }
        crc.finalize()
    }
}

/// The entries of `new` (an array of `T`s as bytes) that `old` lacks or holds differently,
/// made into changes by `change(position, entry)`.
fn changed_entries<T, C>(old: &[u8], new: &[u8], change: impl Fn(u32, T) -> C) -> Vec<C>
where
    T: FromBytes + Immutable + Unaligned + PartialEq + Copy,
{
    let old = <[T]>::ref_from_bytes(old).expect("INVARIANT: a handle map's own sections");
    let new = <[T]>::ref_from_bytes(new).expect("INVARIANT: a handle map's own sections");
    new.iter()
        .enumerate()
        .filter(|&(i, entry)| old.get(i) != Some(entry))
        .map(|(i, &entry)| change(i as u32, entry))
        .collect()
}

/// The entities section of a patch as [`StorePatch::diff`] builds it, in the target's dense order.
#[derive(Default)]
struct Records {
    entities: Vec<u32>,
    removals: Vec<u32>,
    inserted: usize,
    changed: usize,
}

impl Records {
    /// The record of the target's entity `id`, if `base` does not hold it as it is.
    fn push(&mut self, base: &Store, id: Id, blob: crate::BlobRef<'_>) {
        let entities = &mut self.entities;
        match base.get(id) {
            Some(old) if old.as_words() == blob.as_words() => {}
            Some(old) => {
                push_record_head(entities, id, CHANGED, 0);
                let start = entities.len();
                patch::write_between(old, blob, entities, &mut self.removals);
                self.end_patch(start);
            }
            None => {
                // Repacked: no free space or holes travel in the delta.
                let words = blob.as_words();
                let used = layout::used_bytes(words) / 4;
                push_record_head(entities, id, INSERTED, used);
                let start = entities.len();
                entities.resize(start + used, 0);
                layout::repack(words, &mut entities[start..]);
                self.inserted += 1;
            }
        }
    }

    /// The record of the target's entity `id`, which `forward` (the patch from the target to
    /// `base`) changes, as the patch that takes `forward` back: O(its changes).
    fn push_reverse(&mut self, id: Id, blob: crate::BlobRef<'_>, forward: &[u32]) {
        push_record_head(&mut self.entities, id, CHANGED, 0);
        let start = self.entities.len();
        patch::write_reverse(blob, forward, &mut self.entities, &mut self.removals);
        self.end_patch(start);
    }

    /// Closes the patch record whose data starts at `start`: drops it when it changes nothing
    /// (the entities have equal entries, their bytes aside), else writes its length.
    fn end_patch(&mut self, start: usize) {
        let (removals, sets) = (self.entities[start], &self.entities[start + 1..]);
        if removals == 0 && layout::len(sets) == 0 {
            self.entities.truncate(start - RECORD_HEAD);
        } else {
            self.entities[start - 1] = (self.entities.len() - start) as u32;
            self.changed += 1;
        }
    }

    /// The patch, with the target's key names when they differ from the base's (see
    /// [`Target::names_unless_base`]).
    fn into_patch(
        self,
        base: &Store,
        target: &impl Target,
        base_crc: u32,
        (slots, meta): (Vec<SlotChange>, Vec<MetaChange>),
        names_grown: bool,
        links: Vec<LinkChange>,
    ) -> StorePatch {
        StorePatch {
            base_crc,
            header: target.header(),
            slots,
            meta,
            entities: self.entities,
            inserted: self.inserted,
            changed: self.changed,
            names: target.names_unless_base(base, names_grown),
            list_names: false,
            base_data_version: base.data_version,
            data_version: target.data_version(),
            links,
        }
    }
}

/// Appends a record's head; its `words` of data follow.
fn push_record_head(entities: &mut Vec<u32>, id: Id, kind: u32, words: usize) {
    let bits = id.to_bits();
    entities.extend_from_slice(&[bits as u32, (bits >> 32) as u32, kind, words as u32]);
}

/// Where [`StorePatch::apply_trusted`] puts changed entities, and from what.
#[derive(Clone, Copy)]
pub(crate) enum Placement<'a> {
    /// The bytes [`StorePatch::apply`] gives each entity (a loader of the delta has them), a
    /// changed entity's into its own span when they are its size (a number changed: the
    /// common change), else at the arena's end, as `apply` places them all: a mark's state
    /// that takes delta after delta of such changes grows no garbage.
    AsApply,
    /// In their own span where they still fit.
    InPlace,
    /// Copied from this store (the patch's target, which holds every changed entity whole),
    /// into the slot's old span where it fits: one copy, no patching.
    CopyFrom(&'a Store),
    /// Copied from this target word for word, free space and all (not repacked), into the
    /// slot's old span when it is the same size: the base's save then has the target's bytes.
    Verbatim(&'a dyn Target),
}

/// Copies the blob in `words` into the base's arena: into `reuse` if it fits, else at the
/// arena's end. Returns its span.
fn copy_blob(words: &[u32], reuse: Option<Span>, base: &mut Store) -> Span {
    if let Some(span) = reuse.filter(|span| span.words() == words.len()) {
        // A blob is self-describing, free space and holes included: copied as it is.
        base.arena[span.range()].copy_from_slice(words);
        return span;
    }
    let used = layout::used_bytes(words) / 4;
    let span = reuse.filter(|span| span.words() >= used).unwrap_or_else(|| base.allocate(used));
    layout::repack(words, &mut base.arena[span.range()]);
    span
}

/// Patches the base's entity at `old` with the `CHANGED` record, in its span if it still fits
/// there, else at the arena's end. Returns its span.
fn patch_in_place(record: &Record<'_>, old: Span, base: &mut Store, scratch: &mut Blob) -> Span {
    if patch::apply_in_place(record.data, &mut base.arena[old.range()]) {
        return old;
    }
    repatch(record, old, base, scratch, |len| len <= old.words())
}

/// Patches the base's entity at `old` with the `CHANGED` record into a repacked copy (the
/// bytes [`place_record`] gives), then writes it into `old` if `fits` its length in words,
/// else at the arena's end. Returns its span.
fn repatch(
    record: &Record<'_>,
    old: Span,
    base: &mut Store,
    scratch: &mut Blob,
    fits: impl Fn(usize) -> bool,
) -> Span {
    scratch.repack_from(&base.arena[old.range()], patch::room_needed(record.data));
    patch::apply(record.data, scratch).expect("INVARIANT: a trusted patch applies to its base");
    let words = scratch.as_blob_ref().as_words();
    let len = layout::used_bytes(words) / 4;
    let span = if fits(len) { old } else { base.allocate(len) };
    layout::repack(words, &mut base.arena[span.range()]);
    span
}

/// Appends the blob of `record` to the base's arena: an inserted entity's as it is, a changed
/// one's patched from `old`, its span in the base. Returns its span.
fn place_record(
    record: &Record<'_>,
    old: Option<Span>,
    base: &mut Store,
    scratch: &mut Blob,
) -> Result<Span, LoadError> {
    let (id, data) = (record.id, record.data);
    let start = base.arena.len();
    match (record.kind, old) {
        (INSERTED, _) => base.arena.extend_from_slice(data),
        (_, Some(old)) => {
            // Repacked with the patch's room, so that applying it does not regrow.
            scratch.repack_from(&base.arena[old.range()], patch::room_needed(data));
            patch::apply(data, scratch)
                .map_err(|error| LoadError::Store(StoreError::Blob { id, error }))?;
            let words = scratch.as_blob_ref().as_words();
            base.arena.resize(start + layout::used_bytes(words) / 4, 0);
            layout::repack(words, &mut base.arena[start..]);
        }
        (_, None) => {
            let problem = "the delta patches it, but the base does not have it";
            return Err(LoadError::Store(StoreError::DeltaEntity { id, problem }));
        }
    }
    if ArenaFull::check(base.arena.len()).is_err() {
        base.arena.truncate(start);
        let problem = "the arena would pass 2^32 words (16 GiB)";
        return Err(LoadError::Store(StoreError::DeltaEntity { id, problem }));
    }
    Ok(Span::new(start, base.arena.len() - start))
}

/// One record of the entities section.
pub(super) struct Record<'a> {
    pub(super) id: Id,
    pub(super) kind: u32,
    pub(super) data: &'a [u32],
}

/// Walks the records of a checked entities section.
pub(super) fn records(mut words: &[u32]) -> impl Iterator<Item = Record<'_>> {
    std::iter::from_fn(move || {
        let (head, rest) = words.split_at_checked(RECORD_HEAD)?;
        let (data, rest) = rest.split_at(head[3] as usize);
        words = rest;
        let id = Id::from_bits(u64::from(head[0]) | u64::from(head[1]) << 32);
        Some(Record { id, kind: head[2], data })
    })
}

impl StorePatch {
    /// The changes that turn `base` into `target`: see [`StorePatch`].
    ///
    /// Entities are matched by handle: one live in both is changed (when its entries differ),
    /// one live only in `target` is inserted, one live only in `base` removed. Unchanged
    /// entities cost a comparison of their bytes (and of their entries, when the bytes
    /// differ) and nothing in the patch.
    #[must_use]
    pub fn diff(base: &Store, target: &Store) -> StorePatch {
        let (old, new) = (base.index.as_raw(), target.index.as_raw());
        let slots = changed_entries(old.slots, new.slots, |slot, value: U64| SlotChange {
            slot: U32::new(slot),
            value,
        });
        let meta = changed_entries(old.meta, new.meta, |dense, slot: U32| MetaChange {
            dense: U32::new(dense),
            slot,
        });

        let mut records = Records::default();
        for (id, blob) in target.iter() {
            records.push(base, id, blob);
        }
        let links = link_changes(base, target, target.index.ids());
        records.into_patch(base, target, base.content_crc(false), (slots, meta), false, links)
    }

    /// [`StorePatch::diff`] of two states of one store, looking only at `slots` (sorted), which
    /// hold every slot whose bits or entity differ between them: the same patch in O(changed).
    ///
    /// A slot's dense position in `target` differs from `base`'s only where its bits differ,
    /// so the dense positions whose slot changed are those of the changed slots live in
    /// `target`.
    ///
    /// With `reverse_of`, the patch from `target` to `base` over the same slots, an entity's
    /// record is that patch's taken back, in O(its changes) rather than a comparison of the two
    /// blobs (the records say the same; their bytes may differ from `diff`'s).
    ///
    /// `tracked`: the slots are those the store's tracker stamped between the two states, which
    /// also means their key names differ exactly when their counts do (see `Store::names`).
    pub(crate) fn diff_slots(
        base: &Store,
        target: &impl Target,
        (slots, tracked): (&[u32], bool),
        base_crc: u32,
        reverse_of: Option<&StorePatch>,
    ) -> StorePatch {
        let old = base.index.as_raw();
        let old_slots = <[U64]>::ref_from_bytes(old.slots).expect("INVARIANT: own sections");
        let old_meta = <[U32]>::ref_from_bytes(old.meta).expect("INVARIANT: own sections");
        let slot_changes = slots
            .iter()
            .filter_map(|&slot| {
                let value = target.slot_bits(slot)?;
                (old_slots.get(slot as usize) != Some(&value))
                    .then_some(SlotChange { slot: U32::new(slot), value })
            })
            .collect();
        let mut live: Vec<(usize, u32, Id)> = slots
            .iter()
            .filter_map(|&slot| {
                let (id, dense) = target.live_at_slot(slot)?;
                Some((dense, slot, id))
            })
            .collect();
        live.sort_unstable_by_key(|&(dense, ..)| dense);
        let meta = live
            .iter()
            .filter(|&&(dense, slot, _)| old_meta.get(dense) != Some(&U32::new(slot)))
            .map(|&(dense, slot, _)| MetaChange {
                dense: U32::new(dense as u32),
                slot: U32::new(slot),
            })
            .collect();
        let links = link_changes(base, target, live.iter().map(|&(_, _, id)| id));
        let mut records = Records::default();
        let forward: Vec<Record<'_>> = match reverse_of {
            Some(patch) => {
                let mut changed: Vec<Record<'_>> =
                    self::records(&patch.entities).filter(|r| r.kind == CHANGED).collect();
                changed.sort_unstable_by_key(|r| r.id.to_bits());
                changed
            }
            None => Vec::new(),
        };
        for (_, _, id) in live {
            let blob = target.blob(id);
            if reverse_of.is_none() {
                records.push(base, id, blob);
            } else if base.contains(id) {
                // Live in both: changed exactly when the forward patch has a record for it.
                if let Ok(i) = forward.binary_search_by_key(&id.to_bits(), |r| r.id.to_bits()) {
                    records.push_reverse(id, blob, forward[i].data);
                }
            } else {
                records.push(base, id, blob);
            }
        }
        records.into_patch(base, target, base_crc, (slot_changes, meta), tracked, links)
    }

    /// Entities the patch inserts (live in the target, not in the base).
    #[must_use]
    pub fn inserted(&self) -> usize {
        self.inserted
    }

    /// Whether applying the patch changes nothing, given `back`, the patch from its target to
    /// its base (whose header is the base's).
    pub(crate) fn changes_nothing(&self, back: &StorePatch) -> bool {
        self.slots.is_empty()
            && self.meta.is_empty()
            && self.entities.is_empty()
            && self.names.is_none()
            && self.links.is_empty()
            && self.header == back.header
            && self.data_version == back.data_version
    }

    /// Entities the patch changes (live in both, with other entries).
    #[must_use]
    pub fn changed(&self) -> usize {
        self.changed
    }

    /// The data version of the store the patch was made from: it applies to no other.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Store, StorePatch};
    ///
    /// let mut base = Store::new();
    /// base.set_data_version(2);
    /// let mut target = base.clone();
    /// target.set_data_version(3);
    /// let delta = StorePatch::diff(&base, &target);
    /// assert_eq!((delta.base_data_version(), delta.data_version()), (2, 3));
    /// ```
    #[must_use]
    pub fn base_data_version(&self) -> u32 {
        self.base_data_version
    }

    /// The data version of the target, which applying gives the base.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Store, StorePatch};
    ///
    /// let mut target = Store::new();
    /// target.set_data_version(4);
    /// let delta = StorePatch::from_bytes(&StorePatch::diff(&Store::new(), &target).to_bytes())?;
    /// assert_eq!(delta.data_version(), 4);
    /// # Ok::<(), datacomp::LoadError>(())
    /// ```
    #[must_use]
    pub fn data_version(&self) -> u32 {
        self.data_version
    }

    /// Applies the patch to the store it was made from, giving the target (its data version
    /// included); or changes nothing.
    ///
    /// # Errors
    ///
    /// [`StoreError::DeltaDataVersion`] (in [`LoadError::Store`]) if `base` has another data version
    /// than the store the patch was made from (migrate it, or apply the delta before migrating);
    /// [`StoreError::DeltaBase`] if `base` is not the store the patch was made from (its
    /// [contents' crc32](StorePatch) differs), and the errors of a load for a handle map or
    /// entity that does not check out.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{LoadError, Store, StorePatch};
    /// use datacomp::format::StoreError;
    ///
    /// let base = Store::new();
    /// let mut target = base.clone();
    /// target.insert_entries([("name", "Orc")]).unwrap();
    /// target.set_data_version(2);
    /// let delta = StorePatch::diff(&base, &target);
    ///
    /// let mut migrated = base.clone();
    /// migrated.set_data_version(1);
    /// let err = delta.apply(&mut migrated).unwrap_err();
    /// assert_eq!(err, LoadError::Store(StoreError::DeltaDataVersion { expected: 0, found: 1 }));
    ///
    /// let mut world = base.clone();
    /// delta.apply(&mut world)?;
    /// assert_eq!((world.data_version(), world), (2, target));
    /// # Ok::<(), LoadError>(())
    /// ```
    pub fn apply(&self, base: &mut Store) -> Result<(), LoadError> {
        if base.data_version != self.base_data_version {
            let (expected, found) = (self.base_data_version, base.data_version);
            return Err(LoadError::Store(StoreError::DeltaDataVersion { expected, found }));
        }
        let found = base.content_crc(self.list_names);
        if found != self.base_crc {
            return Err(LoadError::Store(StoreError::DeltaBase { expected: self.base_crc, found }));
        }
        self.apply_unchecked_base(base)
    }

    /// Applies a chain of deltas in order, each made from the state the one before leaves
    /// (as [`Mark::take_delta`](crate::Mark::take_delta) makes them), as far as they apply:
    /// what [`apply`](StorePatch::apply) of each in turn does, stopping at the first that
    /// fails, with two crc32s of the whole store rather than one per link.
    ///
    /// Each link's base is still checked: the first link's against `base` and the last's
    /// against the state the others leave, by the crc32 each delta names; a link between
    /// them that is not of this chain (stale, foreign) leaves a state the last crc does not
    /// match, and the chain is then applied again link by link (each base checked) from the
    /// state after the first, to find the first link that does not apply. Each link's apply
    /// still checks the target's handle map and places every entity: O(store) a link.
    ///
    /// # Errors
    ///
    /// The position of the first link that does not apply and the error
    /// [`apply`](StorePatch::apply) gives for it; `base` is then the state the links before it
    /// leave.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Store, StorePatch};
    /// use datacomp::format::StoreError;
    /// use datacomp::LoadError;
    ///
    /// let mut world = Store::new();
    /// let id = world.insert_entries([("turn", 0.0)]).unwrap();
    /// let base = world.clone();
    /// let mut mark = world.mark();
    /// let mut chain = Vec::new();
    /// for turn in 1..=4 {
    ///     world.get_mut(id).unwrap().set("turn", turn as f32).unwrap();
    ///     chain.push(mark.take_delta(&world));
    /// }
    /// let mut loaded = base.clone();
    /// StorePatch::apply_chain(&chain, &mut loaded).unwrap();
    /// assert_eq!(loaded, world);
    ///
    /// // Link 3 twice: the chain ends at the second, and the store is as link 3 left it.
    /// chain[3] = chain[2].clone();
    /// let mut loaded = base.clone();
    /// let (at, error) = StorePatch::apply_chain(&chain, &mut loaded).unwrap_err();
    /// assert!(matches!((at, error), (3, LoadError::Store(StoreError::DeltaBase { .. }))));
    /// assert_eq!(loaded.get(id).unwrap().get_float("turn"), Some(3.0));
    /// ```
    pub fn apply_chain(chain: &[StorePatch], base: &mut Store) -> Result<(), (usize, LoadError)> {
        let Some((first, rest)) = chain.split_first() else { return Ok(()) };
        first.apply(base).map_err(|error| (0, error))?;
        let Some((last, middle)) = rest.split_last() else { return Ok(()) };
        // From here on a failure needs the state after the first link again.
        let after_first = base.clone();
        let whole = middle.iter().all(|link| link.apply_unchecked_base(base).is_ok());
        if whole && last.base_matches(base) {
            return last.apply_unchecked_base(base).map_err(|error| (chain.len() - 1, error));
        }
        // Something after the first link does not belong, or does not apply: link by link
        // from the state after the first, as `apply` of each does, to find where.
        *base = after_first;
        for (i, link) in chain.iter().enumerate().skip(1) {
            link.apply(base).map_err(|error| (i, error))?;
        }
        Ok(())
    }

    /// Whether `store` is this delta's base by the crc32 it names (and its data version).
    fn base_matches(&self, store: &Store) -> bool {
        store.data_version == self.base_data_version
            && store.content_crc(self.list_names) == self.base_crc
    }

    /// [`apply`](StorePatch::apply) after its checks of the base (the data version is checked
    /// here too): the rest of the patch is checked as it is placed.
    pub(super) fn apply_unchecked_base(&self, base: &mut Store) -> Result<(), LoadError> {
        if base.data_version != self.base_data_version {
            let (expected, found) = (self.base_data_version, base.data_version);
            return Err(LoadError::Store(StoreError::DeltaDataVersion { expected, found }));
        }
        let mut index = self.target_index(base)?;
        let links = self.target_links(&base.links, &index)?;
        // Unchanged entities stay where they are in the base's arena; changed and inserted
        // ones are appended, and the appended words are cut off again on an error.
        let base_words = base.arena.len();
        let spans = match self.place_entities(&index, base) {
            Ok(spans) => spans,
            Err(e) => {
                base.arena.truncate(base_words);
                return Err(e);
            }
        };
        for (span, new) in index.values_mut().zip(spans) {
            *span = new;
        }
        base.garbage_words = garbage_of(&index, base.arena.len());
        base.index = index;
        base.links = links;
        base.touch_all();
        if let Some(names) = &self.names {
            base.names.clone_from(names);
        }
        base.data_version = self.data_version;
        base.compact_if_wasteful();
        Ok(())
    }

    /// The span of each entity of the target's `index`, in dense order: the base's own for an
    /// unchanged entity, and one appended to the base's arena for a changed or inserted one.
    fn place_entities(
        &self,
        index: &HandleMap<Span>,
        base: &mut Store,
    ) -> Result<Vec<Span>, LoadError> {
        let mut spans = Vec::with_capacity(index.len());
        let mut records = records(&self.entities).peekable();
        let mut scratch = Blob::new();
        for (id, _) in index {
            let old = base.index.get(id).copied();
            let span = match (records.next_if(|record| record.id == id), old) {
                (Some(record), old) => place_record(&record, old, base, &mut scratch)?,
                (None, Some(old)) => old,
                (None, None) => {
                    let problem = "neither the base nor the delta has it";
                    return Err(LoadError::Store(StoreError::DeltaEntity { id, problem }));
                }
            };
            spans.push(span);
        }
        if let Some(record) = records.next() {
            let problem = "the delta has a record for it out of the target's order, or for a \
                           handle the target does not have";
            return Err(LoadError::Store(StoreError::DeltaEntity { id: record.id, problem }));
        }
        Ok(spans)
    }

    /// Applies the patch to a store it was made from, trusted (it was made here, from that
    /// store's state, whatever the store's arena layout): O(changed), no base check. With
    /// [`Placement::AsApply`] each entity's bytes are the ones [`apply`](StorePatch::apply)
    /// gives (and so the save, the deltas from it, and the crc of its contents); with
    /// [`Placement::InPlace`] a changed entity that still fits its span stays there, and no
    /// garbage is made.
    ///
    /// The slots to look at are the patch's own: a slot whose bits differ has a slot change,
    /// an entity whose bytes differ has a record, and the base's slots past the target's last
    /// are dropped.
    pub(crate) fn apply_trusted(&self, base: &mut Store, placement: Placement<'_>) {
        let index_base = self.header.base.get();
        // Slots past the target's last are dropped: their entities are removed too.
        let dropped = self.header.slots.get()..base.index.slot_count() as u32;
        let mut slots: Vec<u32> = self
            .slots
            .iter()
            .map(|change| change.slot.get())
            .chain(records(&self.entities).map(|record| record.id.index().wrapping_sub(index_base)))
            .chain(dropped)
            .collect();
        slots.sort_unstable();
        slots.dedup();
        // Where each of those slots' entities is before the index changes.
        let old: Vec<Option<(Id, Span)>> = slots
            .iter()
            .map(|&slot| {
                let (id, dense) = base.index.live_at_slot(slot as usize)?;
                Some((id, base.index.as_slice()[dense]))
            })
            .collect();
        let used_before = base.arena.len() - base.garbage_words;
        let freed: usize = old.iter().flatten().map(|(_, span)| span.words()).sum();

        base.index.set_shape(&self.header, Span::new(0, 0));
        for change in &self.slots {
            base.index.set_slot(change.slot.get() as usize, change.value.get());
        }
        let mut live: Vec<(usize, usize, Id)> = slots
            .iter()
            .enumerate()
            .filter_map(|(i, &slot)| {
                let (id, dense) = base.index.live_at_slot(slot as usize)?;
                Some((dense, i, id))
            })
            .collect();
        live.sort_unstable_by_key(|&(dense, ..)| dense);
        let mut records = records(&self.entities).peekable();
        let mut scratch = Blob::new();
        let mut placed = 0;
        for (dense, i, id) in live {
            let kept = old[i].filter(|&(was, _)| was == id).map(|(_, span)| span);
            let span = match records.next_if(|record| record.id == id) {
                Some(record) => match (placement, kept) {
                    (Placement::CopyFrom(source), _) => {
                        let blob = source.get(id).expect("INVARIANT: the target has its entities");
                        copy_blob(blob.as_words(), old[i].map(|(_, span)| span), base)
                    }
                    (Placement::Verbatim(source), _) => {
                        let words = source.blob(id).as_words();
                        let reuse = old[i].map(|(_, span)| span);
                        let span =
                            if let Some(span) = reuse.filter(|span| span.words() == words.len()) {
                                span
                            } else {
                                base.allocate(words.len())
                            };
                        base.arena[span.range()].copy_from_slice(words);
                        span
                    }
                    (Placement::InPlace, Some(old)) if record.kind == CHANGED => {
                        patch_in_place(&record, old, base, &mut scratch)
                    }
                    (Placement::AsApply, Some(old)) if record.kind == CHANGED => {
                        repatch(&record, old, base, &mut scratch, |len| len == old.words())
                    }
                    _ => place_record(&record, kept, base, &mut scratch)
                        .expect("INVARIANT: a trusted patch applies to its base"),
                },
                None => kept.expect("INVARIANT: an entity without a record is the base's"),
            };
            placed += span.words();
            base.index.set_dense(dense, slots[i] as usize, span);
            // Its blob may be new (or patched in place): its link's filter goes.
            base.links.forget(id);
        }
        debug_assert!(records.next().is_none(), "every record is of a live entity");
        // Links: a removed entity's go with it; then the patch's.
        for &(was, _) in old.iter().flatten() {
            if !base.index.contains(was) {
                base.links.set(was, None);
            }
        }
        for change in &self.links {
            let prototype = Id::from_bits(change.prototype.get());
            let prototype = (prototype != Id::NULL).then_some(prototype);
            base.links.set(Id::from_bits(change.instance.get()), prototype);
        }
        base.garbage_words = base.arena.len() - (used_before - freed + placed);
        if let Some(names) = &self.names {
            // Names replaced whole: marks must compare them whole (see `Store::names`).
            base.names.clone_from(names);
            base.touch_all();
        }
        base.data_version = self.data_version;
        base.tracker.count_write();
        if base.tracker.is_tracking() {
            let count = base.index.slot_count();
            for &slot in &slots {
                base.tracker.touch(slot as usize, count);
            }
        }
        base.compact_if_wasteful();
    }

    /// The target's prototype links: the base's `links` of entities the target holds, with
    /// the patch's changes, checked as a load checks a save's (each end live in the target,
    /// no cycle, no chain past the limit). O(entities) when there are links.
    fn target_links(&self, links: &Links, index: &HandleMap<Span>) -> Result<Links, LoadError> {
        if links.is_empty() && self.links.is_empty() {
            return Ok(Links::new());
        }
        let mut target = Links::new();
        for (instance, prototype) in links.iter() {
            if index.contains(instance) {
                target.set(instance, Some(prototype));
            }
        }
        for change in &self.links {
            let (instance, prototype) = (change.instance.get(), change.prototype.get());
            let id = Id::from_bits(instance);
            if !index.contains(id) {
                let problem = "the delta links it to a prototype, but the target does not have it";
                return Err(LoadError::Store(StoreError::DeltaEntity { id, problem }));
            }
            let prototype = (prototype != Id::NULL.to_bits()).then(|| Id::from_bits(prototype));
            target.set(id, prototype);
        }
        for (id, prototype) in target.iter() {
            if !index.contains(prototype) {
                let prototype = prototype.to_bits();
                return Err(LoadError::Store(StoreError::PrototypeMissing { id, prototype }));
            }
        }
        let dense = target.to_dense(index);
        proto::check_dense(&dense, |d| index.id_at(d).unwrap_or_default())?;
        Ok(target)
    }

    /// The target's handle map: the base's raw sections with the patch's changes written
    /// over them, checked as a load checks them. Its spans are placeholders.
    fn target_index(&self, base: &Store) -> Result<HandleMap<Span>, LoadError> {
        let old = base.index.as_raw();
        let (len, slot_count) = (self.header.len.get() as usize, self.header.slots.get() as usize);
        // Every entry past the base's is a change, so the changes bound the sizes, before
        // anything is allocated for them.
        let out_of_range = |section, index: usize, problem| {
            LoadError::Store(StoreError::DeltaChange { section, index: index as u64, problem })
        };
        if slot_count > old.slots.len() / 8 + self.slots.len() {
            return Err(out_of_range(
                "delta slot changes",
                self.slots.len(),
                "too few for the slots",
            ));
        }
        if len > old.meta.len() / 4 + self.meta.len() {
            return Err(out_of_range(
                "delta meta changes",
                self.meta.len(),
                "too few for the entities",
            ));
        }
        let mut slots = old.slots.to_vec();
        slots.resize(slot_count * 8, 0);
        for (i, change) in self.slots.iter().enumerate() {
            let at = change.slot.get() as usize * 8;
            let slot = slots.get_mut(at..at + 8);
            let slot =
                slot.ok_or_else(|| out_of_range("delta slot changes", i, "past the last slot"))?;
            slot.copy_from_slice(change.value.as_bytes());
        }
        let mut meta = old.meta.to_vec();
        meta.resize(len * 4, 0);
        for (i, change) in self.meta.iter().enumerate() {
            let at = change.dense.get() as usize * 4;
            let entry = meta.get_mut(at..at + 4);
            let entry = entry
                .ok_or_else(|| out_of_range("delta meta changes", i, "past the last entity"))?;
            entry.copy_from_slice(change.slot.as_bytes());
        }
        let items = vec![0; len * size_of::<Span>()];
        let raw = RawHandleMap { header: self.header, items: &items, meta: &meta, slots: &slots };
        Ok(HandleMap::from_raw(&raw)?)
    }
}

impl fmt::Debug for StorePatch {
    /// Counts: `StorePatch { base_crc: 1a2b3c4d, entities: 100000, inserted: 10, changed: 990,
    /// slot_changes: 20, meta_changes: 20, file_len: 123456 }`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StorePatch")
            .field("base_crc", &format_args!("{:08x}", self.base_crc))
            .field("entities", &self.header.len.get())
            .field("inserted", &self.inserted)
            .field("changed", &self.changed)
            .field("slot_changes", &self.slots.len())
            .field("meta_changes", &self.meta.len())
            .field("link_changes", &self.links.len())
            .field("file_len", &self.file_len())
            .finish_non_exhaustive()
    }
}

impl Store {
    /// Makes live entity `id`'s bytes `words` (a valid blob of the same contents or not),
    /// word for word, free space and all: in its span when the size is the same, else at the
    /// arena's end. For a mirror whose save must be its store's byte for byte: a write that
    /// left an entity's contents as they were may still have moved its bytes.
    pub(crate) fn set_words_verbatim(&mut self, id: Id, words: &[u32]) {
        let Some(&span) = self.index.get(id) else { return };
        if self.arena[span.range()] == *words {
            return;
        }
        let span = if span.words() == words.len() {
            span
        } else {
            self.garbage_words += span.words();
            self.allocate(words.len())
        };
        self.arena[span.range()].copy_from_slice(words);
        if let Some(item) = self.index.get_mut(id) {
            *item = span;
        }
    }
}
