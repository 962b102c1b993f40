//! [`Store`]: every entity's blob in one arena, reached through [`Id`] handles.
//!
//! This module tree is the only code that writes the store's arena, index and names: its
//! fields are private here, other modules read them through crate-internal accessors
//! (`arena()`, `index()`, `names()`), and add entities through `insert*`, `append_packed`
//! (blobs built aside: owns the check of the arena's 16 GiB limit, `ArenaFull`) or build a
//! store with `from_parts` (parts read from a file: counts the garbage). The store knows no
//! file layout: its save, views and the delta file are [`crate::format`]'s.
//!
//! - `mod.rs`: `Store`, `BlobMut`, `StoreStats`, the arena's growth and compaction.
//! - `names.rs`: the store's key names (the tree itself is `crate::names`).
//! - `track.rs`: the change tracker every write stamps (the marks built on it are
//!   [`crate::history`]'s).
//! - `proto.rs`: prototypes: each instance's link ([`Store::prototype`]), resolved reads
//!   ([`Resolved`]), overrides, tombstones, flatten and detach, and the O(n) check of links
//!   that every reader of a file runs.
//! - `delta.rs`: [`StorePatch`]: `StorePatch::diff`, `apply` and the merges; its errors are
//!   [`StoreError`](crate::format::StoreError)'s `Delta...` variants.
//! - `merge.rs`: [`merge3`], the three-way merge of whole stores (blobs key by key, prototype
//!   links three-way, checked whole).
//! - `rows.rs`: a store as a frame and one row per entity (what `datacomp-pg` keeps), and the
//!   delta's records, read entity by entity.
//!
//! `Store`'s JSON and SJSON import and exports are [`crate::text`]'s (`text/store.rs`): they
//! use the accessors above, and `check_room` and `append_packed` for an import.

mod blob_mut;
pub(crate) mod delta;
mod merge;
mod names;
pub(crate) mod proto;
pub mod rows;
mod track;

use std::fmt;

use zerocopy::little_endian::U32;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::blob::layout;
use crate::blob::{Blob, BlobRef};
use crate::error::Error;
use crate::handle_map::{HandleError, HandleMap, Id};
use crate::key::{AsKey, Key};
use crate::names::KeyNames;
#[cfg(feature = "json")]
use crate::text::id_index::IdIndex;
#[cfg(feature = "json")]
use crate::text::plan::PlanCache;
use crate::value::AsValue;
use proto::Links;

pub use blob_mut::BlobMut;
pub use delta::StorePatch;
pub use merge::{LinkConflict, MergeReport, PathConflict, merge3, merge3_entity};
pub use proto::{ABSTRACT_KEY, ID_KEY, MAX_CHAIN, Resolved};
pub(crate) use track::Tracker;

/// The handle map type id of a store's entities.
pub(crate) const STORE_TYPE_ID: u16 = 1;
/// Compaction runs when garbage passes half the arena and the arena is at least this big.
const MIN_COMPACT_WORDS: usize = 4096;

/// Where one entity's blob lives in the arena, in 32-bit words: the first word and the words
/// reserved for it (its whole buffer, free space included).
///
/// Little-endian and unaligned, so a save file's index is read in place as `&[Span]`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout, Unaligned,
)]
#[repr(C)]
pub(crate) struct Span {
    offset: U32,
    words: U32,
}

impl Span {
    /// A span; both fit in 32 bits (the arena's size is checked when it grows).
    pub(crate) fn new(offset: usize, words: usize) -> Span {
        Span { offset: U32::new(offset as u32), words: U32::new(words as u32) }
    }

    pub(crate) fn offset(self) -> usize {
        self.offset.get() as usize
    }

    pub(crate) fn words(self) -> usize {
        self.words.get() as usize
    }

    pub(crate) fn range(self) -> std::ops::Range<usize> {
        self.offset()..self.offset() + self.words()
    }
}

/// The arena would pass its limit of 2^32 words (16 GiB): spans are 32-bit. Each entry point
/// reports it in its own error ([`BlobError::TooLarge`] for an import, a delta's
/// [`StoreError::DeltaEntity`](crate::format::StoreError::DeltaEntity), a panic for
/// [`Store::insert`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ArenaFull {
    /// The arena's bytes that were asked for.
    pub(crate) required: u64,
}

impl ArenaFull {
    /// The one check of the arena's limit: `Ok` when an arena of `words` words is in it.
    pub(crate) fn check(words: usize) -> Result<(), ArenaFull> {
        match u32::try_from(words) {
            Ok(_) => Ok(()),
            Err(_) => Err(ArenaFull { required: (words as u64).saturating_mul(4) }),
        }
    }
}

/// The words of an arena of `arena_words` that no span of `index` covers.
fn garbage_of(index: &HandleMap<Span>, arena_words: usize) -> usize {
    arena_words - index.values().map(|span| span.words()).sum::<usize>()
}

/// Every entity's data in one arena: a [`HandleMap`] of spans over ONE buffer that holds every
/// blob, in the byte format of [`Blob`]. No allocation per entity, no pointer anywhere.
///
/// ```text
///  index: HandleMap<Span>   ┌────────┬────────┬────────┐
///  (dense, by Id)           │ 0..12  │ 40..72 │ 12..28 │
///                           └───┬────┴───┬────┴───┬────┘
///  arena: [u32]  ┌──────────────▼─┬──────┼─────────▼──┬──────────┬──▼───────────────────────┐
///                │ blob A         │ blob C           │ garbage  │ blob B (moved to grow)   │
///                └────────────────┴──────────────────┴──────────┴──────────────────────────┘
/// ```
///
/// A blob that outgrows its span moves to the end of the arena with room to grow; its old span
/// becomes garbage. When garbage passes half the arena, the arena is compacted in one pass in
/// dense order, so that iteration walks memory linearly. Offsets are relative, so a move is a
/// memcpy.
///
/// # Examples
///
/// ```
/// use datacomp::{Blob, Store};
///
/// let mut world = Store::new();
/// let mut sheet = Blob::new();
/// sheet.set("name", "The One").unwrap();
/// sheet.set("stats.health", 100).unwrap();
/// let hero = world.insert(&sheet);
///
/// world.get_mut(hero).unwrap().set("stats.health", 95).unwrap();
/// assert_eq!(world.get(hero).unwrap().get_float("stats.health"), Some(95.0));
/// assert!(world.remove(hero));
/// assert!(world.get(hero).is_none());
/// ```
#[derive(Clone)]
pub struct Store {
    // INVARIANT: every span lies inside `arena`, no two spans overlap, and each span's words
    // pass `layout::validate`.
    index: HandleMap<Span>,
    arena: Vec<u32>,
    // INVARIANT: the arena words that no span covers.
    garbage_words: usize,
    /// The name of every key the store was given as text: by a JSON import, a write, or by
    /// hand (one name per key), as a tree of segments.
    // INVARIANT (for change tracking): names are only added, except where they are replaced
    // or dropped (a delta applied, a restore, `compact`), which calls `tracker.touch_all()`; a
    // name a failed write added and took back (`rollback`) changes nothing.
    names: KeyNames,
    /// The version of the game's data the entities follow (see [`Store::data_version`]).
    data_version: u32,
    /// The history this store belongs to (see [`Store::lineage`]): drawn at random by `new`,
    /// kept by clones, saves, loads, deltas applied and merges; `None` for a store loaded from
    /// a save of format 1.3 or before.
    lineage: Option<u128>,
    /// Each instance's prototype (see [`proto`]): part of the store's contents.
    // INVARIANT: every link is between live entities, with no cycle and no chain past
    // `MAX_CHAIN` (`Links`'s own invariant); a change of a link is stamped in `tracker`.
    links: Links,
    // INVARIANT: every change to a slot of `index` or to its entity's bytes is stamped here
    // (`touch`), or the tracker is told that everything changed (`Tracker::touch_all`).
    tracker: Tracker,
    /// The JSON plans of one-entity exports ([`Store::export`]), by key layout, kept while
    /// the names' version is the one they were made for. Not part of the store's state:
    /// a clone starts without them.
    #[cfg(feature = "json")]
    export_plans: PlanCache,
    /// The entities that have a `$id`, by it, for the imports that resolve prototype names,
    /// kept while `tracker.writes()` is the one it was made at. Not part of the store's
    /// state: a clone starts without it.
    #[cfg(feature = "json")]
    id_index: IdIndex,
}

/// A store's memory use: what [`Store::stats`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct StoreStats {
    /// Entities (blobs).
    pub entities: usize,
    /// Bytes of the arena.
    pub arena_bytes: usize,
    /// Bytes the blobs would take repacked: headers and live payloads.
    pub live_bytes: usize,
    /// Bytes inside blobs that are free space or holes: room to grow in place.
    pub slack_bytes: usize,
    /// Bytes of the arena that no blob uses: left by removed and moved blobs, reclaimed by
    /// compaction.
    pub garbage_bytes: usize,
}

impl Store {
    /// An empty store, the first of a new [lineage](Store::lineage). It does not allocate.
    #[must_use]
    pub fn new() -> Store {
        Store {
            index: HandleMap::new(STORE_TYPE_ID),
            arena: Vec::new(),
            garbage_words: 0,
            names: KeyNames::new(),
            data_version: 0,
            lineage: Some(new_lineage()),
            links: Links::new(),
            tracker: Tracker::new(),
            #[cfg(feature = "json")]
            export_plans: PlanCache::new(),
            #[cfg(feature = "json")]
            id_index: IdIndex::new(),
        }
    }

    /// An empty store with room for `entities` blobs taking `bytes` in all.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Store;
    ///
    /// let store = Store::with_capacity(1000, 256 * 1000);
    /// assert!(store.is_empty());
    /// ```
    #[must_use]
    pub fn with_capacity(entities: usize, bytes: usize) -> Store {
        Store {
            index: HandleMap::with_capacity(STORE_TYPE_ID, entities),
            arena: Vec::with_capacity(bytes.div_ceil(4)),
            garbage_words: 0,
            names: KeyNames::new(),
            data_version: 0,
            lineage: Some(new_lineage()),
            links: Links::new(),
            tracker: Tracker::new(),
            #[cfg(feature = "json")]
            export_plans: PlanCache::new(),
            #[cfg(feature = "json")]
            id_index: IdIndex::new(),
        }
    }

    /// Number of entities.
    #[must_use]
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether the store has no entities.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Appends `words` words of arena and returns their span.
    ///
    /// # Panics
    ///
    /// If the arena would pass 2^32 words (16 GiB): spans are 32-bit.
    pub(crate) fn allocate(&mut self, words: usize) -> Span {
        let offset = self.arena.len();
        let end = offset + words;
        assert!(ArenaFull::check(end).is_ok(), "Store: the arena would pass 2^32 words (16 GiB)");
        self.arena.resize(end, 0);
        Span::new(offset, words)
    }

    /// Whether `extra` more words fit in the arena: [`ArenaFull`] if they would take it past
    /// its limit.
    #[cfg_attr(not(feature = "json"), allow(dead_code))] // Its one caller is the JSON import.
    pub(crate) fn check_room(&self, extra: usize) -> Result<(), ArenaFull> {
        ArenaFull::check(self.arena.len().saturating_add(extra))
    }

    /// Appends blobs packed back to back in `words` (the `i`th `lens[i]` words long) as new
    /// entities, in order, and returns their handles: the one way in for entities built aside
    /// (a JSON import). All or nothing: on [`ArenaFull`] nothing changes. `words` is freed as
    /// soon as it is copied, and the index grows once.
    ///
    /// The caller keeps the arena's invariant: each blob is valid and `lens` sums to
    /// `words.len()`.
    #[cfg_attr(not(feature = "json"), allow(dead_code))] // Its one caller is the JSON import.
    pub(crate) fn append_packed(
        &mut self,
        words: Vec<u32>,
        lens: &[u32],
    ) -> Result<Vec<Id>, ArenaFull> {
        debug_assert_eq!(lens.iter().map(|&n| n as usize).sum::<usize>(), words.len());
        self.check_room(words.len())?;
        let base = self.arena.len();
        self.arena.reserve_exact(words.len());
        self.arena.extend_from_slice(&words);
        drop(words);
        self.index.reserve(lens.len());
        let mut offset = base;
        let ids = lens
            .iter()
            .map(|&len| {
                let span = Span::new(offset, len as usize);
                offset += len as usize;
                self.insert_span(span)
            })
            .collect();
        Ok(ids)
    }

    /// A store of parts read from a file (a save, a salvage): garbage is what no span of
    /// `index` covers. Untracked.
    ///
    /// The caller has checked the arena's invariant: each span lies inside `arena`, holds a
    /// valid blob, and overlaps no other.
    pub(crate) fn from_parts(
        index: HandleMap<Span>,
        arena: Vec<u32>,
        names: KeyNames,
        data_version: u32,
        lineage: Option<u128>,
    ) -> Store {
        Store {
            garbage_words: garbage_of(&index, arena.len()),
            index,
            arena,
            names,
            data_version,
            lineage,
            links: Links::new(),
            tracker: Tracker::new(),
            #[cfg(feature = "json")]
            export_plans: PlanCache::new(),
            #[cfg(feature = "json")]
            id_index: IdIndex::new(),
        }
    }

    /// Adds a copy of `blob` (repacked: no free space, no holes) and returns its handle.
    ///
    /// # Panics
    ///
    /// If the arena would pass 16 GiB.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, Store};
    ///
    /// let mut store = Store::new();
    /// let mut sheet = Blob::with_capacity(100, 10_000);
    /// sheet.set("name", "Bob").unwrap();
    /// let id = store.insert(&sheet);
    /// assert_eq!(store.get(id).unwrap(), sheet);
    /// assert_eq!(store.stats().arena_bytes, sheet.used_bytes());
    /// ```
    pub fn insert(&mut self, blob: &Blob) -> Id {
        let source = blob.as_blob_ref();
        let span = self.allocate(source.used_bytes() / 4);
        layout::repack(source.as_words(), &mut self.arena[span.range()]);
        self.insert_span(span)
    }

    /// Adds an entity whose blob is at `span` (already written) and returns its handle.
    pub(crate) fn insert_span(&mut self, span: Span) -> Id {
        let id = self.index.insert(span);
        self.touch(id);
        id
    }

    /// Stamps `id`'s slot as changed, for change tracking (`history`): O(1), and nothing at
    /// all until a mark is taken.
    // Inlined always: a call cost a tenth of a set (measured: `goal_cost set_key`).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn touch(&mut self, id: Id) {
        // Its own keys may change: the filter its link keeps of them is forgotten.
        self.links.forget(id);
        self.tracker.count_write();
        if self.tracker.is_tracking()
            && let Some(slot) = self.index.slot_of(id)
        {
            self.tracker.touch(slot, self.index.slot_count());
        }
    }

    /// Stamps every slot as changed (`Tracker::touch_all`), and forgets every filter of
    /// own keys the links keep: for a change of many entities, or of the names.
    pub(crate) fn touch_all(&mut self) {
        self.links.forget_all();
        self.tracker.touch_all();
    }

    /// Adds an empty entity and returns its handle.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Store;
    ///
    /// let mut store = Store::new();
    /// let id = store.insert_empty();
    /// assert!(store.get(id).unwrap().is_empty());
    /// ```
    pub fn insert_empty(&mut self) -> Id {
        let span = self.allocate(layout::EMPTY.len());
        self.arena[span.range()].copy_from_slice(&layout::EMPTY);
        self.insert_span(span)
    }

    /// Adds an entity with these entries, set in order as [`Blob::set`] sets them, and
    /// records the name of every key given as text (as [`BlobMut::set`] does); or changes
    /// nothing.
    ///
    /// # Errors
    ///
    /// [`Error::Key`] with [`KeyError::Collision`](crate::key::KeyError::Collision) if a key
    /// given as text is recorded (in the store, or by an earlier entry) under another name,
    /// [`KeyError::PathTooDeep`](crate::key::KeyError::PathTooDeep) for a key given as text of
    /// more than [`MAX_PATH_SEGMENTS`](crate::key::MAX_PATH_SEGMENTS) segments,
    /// [`KeyError::PathConflict`](crate::key::KeyError::PathConflict) if one path would be both
    /// a value and an object (`stats` and `stats.health`); [`Error::Blob`] for an integer `f32`
    /// cannot hold exactly ([`BlobError::InexactInteger`](crate::BlobError::InexactInteger)),
    /// or if the entity would pass 4 GiB.
    ///
    /// # Panics
    ///
    /// If the arena would pass 16 GiB.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Error, Key, KeyError, Store};
    ///
    /// let mut store = Store::new();
    /// let id = store.insert_entries([("name", "Orc")])?;
    /// assert_eq!(store.get(id).unwrap().get_str("name"), Some("Orc"));
    /// assert_eq!(store.key_name(Key::parse("name")).as_deref(), Some("name"));
    ///
    /// let err = store.insert_entries([("sleep_haste_8", 1), ("fury_sleep_272", 2)]);
    /// assert!(matches!(err, Err(Error::Key(KeyError::Collision { .. }))));
    /// assert!(store.len() == 1 && store.key_names().len() == 1, "unchanged");
    /// # Ok::<(), Error>(())
    /// ```
    pub fn insert_entries<K: AsKey, V: AsValue>(
        &mut self,
        entries: impl IntoIterator<Item = (K, V)>,
    ) -> Result<Id, Error> {
        self.names.begin();
        let mut set = Vec::new();
        let record = || -> Result<Blob, Error> {
            for (key, value) in entries {
                let key = match key.as_path() {
                    Some(path) => {
                        path.check_depth()?;
                        path.check_not_raw()?;
                        self.names.record(&path)?
                    }
                    None => key.as_key(),
                };
                set.push((key, value));
            }
            // All at once: O(n log n), where setting each in turn scans the keys for each.
            let mut blob = Blob::new();
            blob.try_set_all(&set)?;
            self.check_entity_paths(blob.as_blob_ref())?;
            Ok(blob)
        };
        match record() {
            Ok(blob) => {
                self.names.commit();
                Ok(self.insert(&blob))
            }
            Err(e) => {
                self.names.rollback();
                Err(e)
            }
        }
    }

    /// Adds an entity with these entries: [`insert_entries`](Store::insert_entries), under its
    /// old name.
    ///
    /// # Errors
    ///
    /// As [`insert_entries`](Store::insert_entries).
    #[deprecated(note = "`insert_entries` returns the `Result` now")]
    pub fn try_insert_entries<K: AsKey, V: AsValue>(
        &mut self,
        entries: impl IntoIterator<Item = (K, V)>,
    ) -> Result<Id, Error> {
        self.insert_entries(entries)
    }

    /// The blob of `id`, if it is live.
    // Inlined into the caller's crate: a call returned the `BlobRef` through memory, 8 more
    // instructions a get than the lookup itself.
    #[inline]
    #[must_use]
    pub fn get(&self, id: Id) -> Option<BlobRef<'_>> {
        self.blob(id)
    }

    /// [`get`](Store::get), inlined where it is called: for the walk up a prototype chain,
    /// where a call cost a twentieth of an inherited read (measured: `proto_cost`).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn blob(&self, id: Id) -> Option<BlobRef<'_>> {
        let span = *self.index.get(id)?;
        Some(BlobRef::from_valid(&self.arena[span.range()]).with_names(&self.names))
    }

    /// The blob of prototype `p`, known live (the links' invariant): [`blob`](Store::blob)
    /// without the generation test, for the walk up a chain.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn prototype_blob(&self, p: Id) -> Option<BlobRef<'_>> {
        let span = *self.index.get_known_live(p)?;
        Some(BlobRef::from_valid(&self.arena[span.range()]).with_names(&self.names))
    }

    /// The blob of `id`, or why there is none: for messages that say which handle was bad and
    /// how.
    ///
    /// # Errors
    ///
    /// A [`HandleError`]: the null handle, another map's handle, one past the slots, a free
    /// slot, or a stale generation.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, HandleError, Store};
    ///
    /// let mut store = Store::new();
    /// let id = store.insert(&Blob::new());
    /// assert!(store.try_get(id).is_ok());
    /// store.remove(id);
    /// let err = store.try_get(id).unwrap_err();
    /// assert_eq!(err, HandleError::Stale { id, current: Some(1) });
    /// assert_eq!(err.to_string(), "handle 0v0t1 is stale: its slot is at generation 1 now");
    /// ```
    pub fn try_get(&self, id: Id) -> Result<BlobRef<'_>, HandleError> {
        let span = *self.index.try_get(id)?;
        Ok(BlobRef::from_valid(&self.arena[span.range()]).with_names(&self.names))
    }

    /// The blob of `id` for editing, if it is live.
    pub fn get_mut(&mut self, id: Id) -> Option<BlobMut<'_>> {
        self.index.contains(id).then_some(BlobMut { store: self, id })
    }

    /// The blob of `id` for editing, or why there is none.
    ///
    /// # Errors
    ///
    /// As [`try_get`](Store::try_get).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, HandleError, Id, Store};
    ///
    /// let mut store = Store::new();
    /// let id = store.insert(&Blob::new());
    /// store.try_get_mut(id)?.set("stats.health", 95).unwrap();
    /// assert_eq!(store.get(id).unwrap().get_float("stats.health"), Some(95.0));
    /// assert_eq!(store.try_get_mut(Id::NULL).unwrap_err(), HandleError::Null);
    /// # Ok::<(), HandleError>(())
    /// ```
    pub fn try_get_mut(&mut self, id: Id) -> Result<BlobMut<'_>, HandleError> {
        self.index.try_get(id)?;
        Ok(BlobMut { store: self, id })
    }

    /// Whether `id` is a live entity.
    #[must_use]
    pub fn contains(&self, id: Id) -> bool {
        self.index.contains(id)
    }

    /// Removes the entity of `id`; returns whether it was removed: `false` if it was not
    /// there, or if it is the [prototype](Store::prototype) of live entities, which is left as
    /// it is ([`try_remove`](Store::try_remove) says so). Its span becomes garbage.
    pub fn remove(&mut self, id: Id) -> bool {
        if !self.links.is_empty() {
            if self.links.instances(id) > 0 {
                return false;
            }
            if self.links.prototype(id).is_some() && self.index.contains(id) {
                self.links.set(id, None);
            }
        }
        let Some(rewrites) = self.index.slots_remove_rewrites(id) else {
            return false;
        };
        for slot in rewrites {
            self.tracker.touch(slot, self.index.slot_count());
        }
        let Some(span) = self.index.remove(id) else {
            return false;
        };
        self.garbage_words += span.words();
        self.compact_if_wasteful();
        true
    }

    /// Removes every entity, keeping the arena's allocation. Old handles never resolve.
    pub fn clear(&mut self) {
        self.index.clear();
        self.arena.clear();
        self.links.clear();
        self.garbage_words = 0;
        self.touch_all();
    }

    /// Iterates over `(Id, BlobRef)` in dense order, which after [`compact`](Store::compact)
    /// is memory order.
    #[must_use]
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (Id, BlobRef<'_>)> + '_ {
        // The arena as a slice, not through `self`: a loop over entities keeps its address
        // and length in registers.
        let (names, arena) = (&self.names, self.arena.as_slice());
        self.index.iter().map(move |(id, span)| {
            (id, BlobRef::from_valid(&arena[span.range()]).with_names(names))
        })
    }

    /// Rewrites the arena without garbage, blobs in dense order, each keeping its span's size
    /// and repacked: holes left by removed and overwritten values are dropped and free space
    /// is zeroed, so no byte of a removed entity or value is left in the arena. Drops the
    /// names of keys that no entity holds any more (a removed entity's, say), so that a save
    /// after it holds no removed name either.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, Key, Store};
    ///
    /// let mut store = Store::new();
    /// let ids: Vec<_> = (0..3).map(|_| store.insert(&Blob::new())).collect();
    /// store.get_mut(ids[1]).unwrap().set("secret.plan", "north").unwrap();
    /// store.remove(ids[1]);
    /// assert!(store.stats().garbage_bytes > 0);
    /// assert!(store.key_name(Key::parse("secret.plan")).is_some());
    /// store.compact();
    /// assert_eq!(store.stats().garbage_bytes, 0);
    /// assert_eq!(store.stats().arena_bytes, 16);
    /// assert_eq!(store.key_name(Key::parse("secret.plan")), None);
    /// ```
    pub fn compact(&mut self) {
        self.compact_arena(true);
        // Every blob's bytes repacked (holes dropped, free space zeroed): marks compare the
        // store whole once, so that a copy kept by one (an autosave's mirror) is scrubbed too.
        self.touch_all();
        if !self.names.is_empty() {
            let mut used: Vec<Key> = self.iter().flat_map(|(_, blob)| blob.keys()).collect();
            used.sort_unstable();
            used.dedup();
            let before = self.names.len();
            self.names.retain(|key| used.binary_search(&key).is_ok());
            if self.names.len() != before {
                // Names dropped: marks must compare them whole (see `names`).
                self.touch_all();
            }
        }
    }

    /// Rewrites the arena without garbage, keeping the names: each blob repacked (no hole,
    /// free space zeroed) for [`compact`](Store::compact), or with `repack` false moved as it
    /// is, what runs on its own when garbage passes half the arena. A move leaves every blob's
    /// bytes as they were, so when it runs (which depends on the garbage, and a store loaded
    /// from a save has none: a save writes the live blobs only) changes no blob, no save and
    /// no delta's base crc.
    fn compact_arena(&mut self, repack: bool) {
        let live = self.arena.len() - self.garbage_words;
        let mut arena = vec![0; live];
        let mut end = 0;
        for span in self.index.values_mut() {
            let moved = Span::new(end, span.words());
            if repack {
                // INVARIANT: a span holds a valid blob, so its used bytes fit in its own size.
                layout::repack(&self.arena[span.range()], &mut arena[moved.range()]);
            } else {
                arena[moved.range()].copy_from_slice(&self.arena[span.range()]);
            }
            end += span.words();
            *span = moved;
        }
        self.arena = arena;
        self.garbage_words = 0;
    }

    /// Puts `arena` in place of the arena and `spans` (one per entity, in dense order) in place
    /// of the entities' spans: for an operation that builds every blob anew aside and swaps
    /// them in at the end, or changes nothing (a migration).
    ///
    /// The caller keeps the arena's invariant: each span lies inside `arena`, holds a valid
    /// blob, and overlaps no other, and stamps each entity it changed (`touch`): spans moved
    /// alone are no change to track.
    pub(crate) fn replace_arena(&mut self, arena: Vec<u32>, spans: Vec<Span>) {
        debug_assert_eq!(spans.len(), self.len());
        for (span, new) in self.index.values_mut().zip(spans) {
            *span = new;
        }
        self.garbage_words = garbage_of(&self.index, arena.len());
        self.arena = arena;
        // The caller stamps the entities it changed; the links' filters go at once.
        self.links.forget_all();
    }

    pub(crate) fn compact_if_wasteful(&mut self) {
        if self.arena.len() >= MIN_COMPACT_WORDS && self.garbage_words * 2 > self.arena.len() {
            self.compact_arena(false);
        }
    }

    /// The handles and spans of the entities, for reading (history compares slots with it).
    pub(crate) fn index(&self) -> &HandleMap<Span> {
        &self.index
    }

    /// The handles and spans, for a test to break the arena's invariant on purpose.
    #[cfg(test)]
    pub(crate) fn index_mut(&mut self) -> &mut HandleMap<Span> {
        &mut self.index
    }

    /// The arena's words, for reading.
    pub(crate) fn arena(&self) -> &[u32] {
        &self.arena
    }

    /// The arena's words that no span covers.
    pub(crate) fn garbage_words(&self) -> usize {
        self.garbage_words
    }

    /// The key names, for reading.
    pub(crate) fn names(&self) -> &KeyNames {
        &self.names
    }

    /// The key names, for recording and taking back names (see the INVARIANT on `names`).
    pub(crate) fn names_mut(&mut self) -> &mut KeyNames {
        &mut self.names
    }

    /// The plans of one-entity JSON exports.
    #[cfg(feature = "json")]
    pub(crate) fn export_plans(&self) -> &PlanCache {
        &self.export_plans
    }

    /// The index of `$id`s that imports resolve prototype names with.
    #[cfg(feature = "json")]
    pub(crate) fn id_index(&self) -> &IdIndex {
        &self.id_index
    }

    /// The change tracker, for reading.
    pub(crate) fn tracker(&self) -> &Tracker {
        &self.tracker
    }

    /// Makes this store's state `source`'s, copying into its own buffers; everything counts as
    /// changed.
    pub(crate) fn copy_from(&mut self, source: &Store) {
        // Every field named: a field added to `Store` must be decided on here.
        #[cfg(feature = "json")]
        let Store {
            index,
            arena,
            garbage_words,
            names,
            data_version,
            lineage,
            links,
            tracker: _,
            export_plans: _,
            id_index: _,
        } = source;
        #[cfg(not(feature = "json"))]
        let Store { index, arena, garbage_words, names, data_version, lineage, links, tracker: _ } =
            source;
        self.index.clone_from(index);
        self.arena.clone_from(arena);
        self.garbage_words = *garbage_words;
        self.data_version = *data_version;
        self.lineage = *lineage;
        self.links.clone_from(links);
        if self.names != *names {
            self.names.clone_from(names);
        }
        self.touch_all();
    }

    /// Memory use: entities, arena size, live bytes, slack inside blobs, garbage.
    #[must_use]
    pub fn stats(&self) -> StoreStats {
        let (live_bytes, slack_bytes) = self.iter().fold((0, 0), |(live, slack), (_, blob)| {
            (live + blob.used_bytes(), slack + blob.byte_len() - blob.used_bytes())
        });
        StoreStats {
            entities: self.len(),
            arena_bytes: self.arena.len() * 4,
            live_bytes,
            slack_bytes,
            garbage_bytes: self.garbage_words * 4,
        }
    }
}

impl Store {
    /// The version of the game's data the store's entities follow: 0 for a new store and for
    /// a save written before saves had one (format 1.0); set by
    /// [`set_data_version`](Store::set_data_version) or by a migration
    /// ([`Migrations::apply`](crate::Migrations::apply)). Saved with the store.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Store;
    ///
    /// let mut store = Store::new();
    /// assert_eq!(store.data_version(), 0);
    /// store.set_data_version(3);
    /// let loaded = Store::from_bytes(&store.to_bytes())?;
    /// assert_eq!(loaded.data_version(), 3);
    /// # Ok::<(), datacomp::LoadError>(())
    /// ```
    #[must_use]
    pub fn data_version(&self) -> u32 {
        self.data_version
    }

    /// Sets the data version without changing any entity: for a store built by this version of
    /// the game (a new world, a JSON import of current fixtures). To bring older data up to
    /// date, migrate it instead ([`Migrations::apply`](crate::Migrations::apply)).
    ///
    /// Time travel sees it: a delta since a [`Mark`](crate::Mark) and a
    /// [`History`](crate::History) step carry the data version, which no entity stamp needs.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Store;
    ///
    /// let mut store = Store::new();
    /// store.set_data_version(7);
    /// assert_eq!(store.data_version(), 7);
    /// ```
    pub fn set_data_version(&mut self, version: u32) {
        self.data_version = version;
    }

    /// The history the store belongs to: a random 128-bit number drawn by [`Store::new`] (and
    /// [`with_capacity`](Store::with_capacity)), saved with the store (format 1.4) and kept by
    /// everything that derives one store from another: a clone, a save and its load, an
    /// import or any edit, a delta applied, a migration, an upgrade, a merge into it. Two
    /// stores of one lineage share an ancestor; two of different lineages were made apart
    /// (two imports), so a three-way merge of them means nothing, and `datacomp merge`
    /// refuses one. `None` for a store loaded from a save of format 1.3 or before (or a
    /// salvage whose lineage did not read): nothing is known of its history. Not part of
    /// `==`, which compares contents.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Store;
    ///
    /// let world = Store::new();
    /// let copy = Store::from_bytes(&world.to_bytes())?;
    /// assert!(world.lineage().is_some());
    /// assert_eq!(copy.lineage(), world.lineage());
    /// assert_ne!(Store::new().lineage(), world.lineage(), "another world");
    /// assert_eq!(copy, Store::new(), "the same contents");
    /// # Ok::<(), datacomp::LoadError>(())
    /// ```
    #[must_use]
    pub fn lineage(&self) -> Option<u128> {
        self.lineage
    }
}

/// A lineage nobody else draws: 128 bits from std's randomly keyed hasher (seeded from the
/// OS once per thread, its keys then stepped on each use) over the time, the process and a
/// count, so that two stores of one process differ as well as two of two machines.
fn new_lineage() -> u128 {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let count = COUNT.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    let half = |salt: u64| {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(salt);
        hasher.write_u64(count);
        hasher.write_u128(nanos);
        hasher.write_u32(std::process::id());
        hasher.finish()
    };
    u128::from(half(0)) << 64 | u128::from(half(1))
}

impl Default for Store {
    /// [`Store::new`]: an empty store of a new lineage.
    fn default() -> Store {
        Store::new()
    }
}

impl PartialEq for Store {
    /// Equal when both hold the same live handles, each with equal entries (as
    /// [`BlobRef`]'s `==`: what each stores, not what it resolves to) and the same prototype,
    /// the same key names and the same data version: the same contents, whatever the order
    /// of entities, the arena's layout or garbage.
    fn eq(&self, other: &Store) -> bool {
        self.len() == other.len()
            && self.data_version == other.data_version
            && self.links == other.links
            && self.names == other.names
            && self.iter().all(|(id, blob)| other.get(id).is_some_and(|o| o == blob))
    }
}

impl fmt::Debug for Store {
    /// The entities by handle, each as its entries, keys by name where an import named them:
    /// `{0v0t1: {stats.health: Float(100.0), #0000002a: Bool(true)}}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        /// Prints with `Display`, for map keys.
        struct Plain<T>(T);
        impl<T: fmt::Display> fmt::Debug for Plain<T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }
        struct Named<'a>(&'a Store, BlobRef<'a>);
        impl fmt::Debug for Named<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let entries =
                    self.1.iter().map(|(key, value)| (Plain(self.0.key_label(key)), value));
                f.debug_map().entries(entries).finish()
            }
        }
        f.debug_map().entries(self.iter().map(|(id, blob)| (Plain(id), Named(self, blob)))).finish()
    }
}
