//! A store kept as rows of a table, one per entity (what `datacomp-pg` writes): the store's
//! *frame* (its handles, key names, data version and lineage, every blob empty), kept as an
//! ordinary save, and each entity's blob bytes in a row of its own. A commit that only edits
//! entities rewrites their rows and leaves the frame alone.
//!
//! ```text
//!  Store ──frame()──▶ frame: a Store, every blob empty ──to_bytes()──▶ one save (the frame row)
//!        ──iter()───▶ (Id, blob bytes) ─────────────────────────────▶ one row per entity
//!  from_frame(frame, rows) ◀── both, every row checked as a load checks a blob
//! ```
//!
//! The three [`StorePatch`] methods here let a table follow a delta entity by entity:
//! [`records`](StorePatch::records) (what it writes), [`is_entries_only`](StorePatch::is_entries_only)
//! (whether the frame changes) and [`apply_to_equal`](StorePatch::apply_to_equal) (a delta
//! applied to a store equal to its base, laid out as it may be).

use zerocopy::IntoBytes;

use crate::blob::{self, layout};
use crate::format::{LoadError, StoreError};
use crate::handle_map::Id;

use super::delta::{INSERTED, StorePatch, records};
use super::{ArenaFull, Span, Store};

/// The frame of `store`: a store with its handles (free slots and generations included), key
/// names, data version, lineage and prototype links, and every entity's blob empty. Saved, it is what a table
/// of entity rows needs beside the rows to give the store back ([`from_frame`]).
///
/// # Examples
///
/// ```
/// use datacomp::Store;
/// use datacomp::store::rows;
///
/// let mut world = Store::new();
/// let orc = world.insert_entries([("name", "Orc")])?;
/// let frame = rows::frame(&world);
/// assert_eq!(frame.get(orc).unwrap().len(), 0);
/// assert_eq!(frame.key_name("name".parse()?), Some("name".to_string()));
/// let back = rows::from_frame(&frame, world.iter().map(|(id, blob)| (id, blob.as_bytes())))?;
/// assert_eq!(back, world);
/// # Ok::<(), datacomp::Error>(())
/// ```
#[must_use]
pub fn frame(store: &Store) -> Store {
    let mut index = store.index.clone();
    let words = layout::EMPTY.len();
    let mut arena = Vec::with_capacity(index.len() * words);
    for span in index.values_mut() {
        *span = Span::new(arena.len(), words);
        arena.extend_from_slice(&layout::EMPTY);
    }
    let mut frame =
        Store::from_parts(index, arena, store.names.clone(), store.data_version, store.lineage);
    frame.links.clone_from(&store.links);
    frame
}

/// The store of `frame` (see [`frame`]) with each entity's blob read from its row: every row
/// checked as a load checks a blob, each live handle of the frame given exactly one row.
///
/// # Errors
///
/// [`StoreError::Blob`] naming the entity whose bytes are not a valid blob;
/// [`StoreError::DeltaEntity`] naming a row for a handle the frame does not hold, a second row
/// for one handle, a handle of the frame that no row holds, or an arena past 16 GiB.
///
/// # Examples
///
/// ```
/// use datacomp::Store;
/// use datacomp::format::{LoadError, StoreError};
/// use datacomp::store::rows;
///
/// let mut world = Store::new();
/// let orc = world.insert_entries([("name", "Orc")])?;
/// let frame = rows::frame(&world);
/// let err = rows::from_frame(&frame, [(orc, &[1_u8, 2, 3][..])]).unwrap_err();
/// assert!(matches!(err, LoadError::Store(StoreError::Blob { id, .. }) if id == orc));
/// # Ok::<(), datacomp::Error>(())
/// ```
pub fn from_frame<'a>(
    frame: &Store,
    rows: impl IntoIterator<Item = (Id, &'a [u8])>,
) -> Result<Store, LoadError> {
    let problem = |id, problem| LoadError::Store(StoreError::DeltaEntity { id, problem });
    let mut index = frame.index.clone();
    let mut filled = vec![false; index.len()];
    let mut arena: Vec<u32> = Vec::new();
    let mut scratch = layout::Scratch::default();
    for (id, bytes) in rows {
        let Some(dense) = index.dense_index(id) else {
            return Err(problem(id, "a row holds it, but the world's frame does not"));
        };
        if std::mem::replace(&mut filled[dense], true) {
            return Err(problem(id, "two rows hold it"));
        }
        let blob_error = |error| LoadError::Store(StoreError::Blob { id, error });
        blob::check_byte_len(bytes.len()).map_err(blob_error)?;
        let start = arena.len();
        if ArenaFull::check(start + bytes.len() / 4).is_err() {
            return Err(problem(id, "the arena would pass 2^32 words (16 GiB)"));
        }
        arena.resize(start + bytes.len() / 4, 0);
        arena[start..].as_mut_bytes().copy_from_slice(bytes);
        layout::validate(&arena[start..], &mut scratch).map_err(blob_error)?;
        if let Some(span) = index.get_mut(id) {
            // Live: its dense index was found above.
            *span = Span::new(start, arena.len() - start);
        }
    }
    if let Some((id, _)) = index.ids().zip(&filled).find(|&(_, &f)| !f) {
        return Err(problem(id, "the world's frame holds it, but no row does"));
    }
    let mut store =
        Store::from_parts(index, arena, frame.names.clone(), frame.data_version, frame.lineage);
    // The frame's links are checked (a loaded frame was) and its handles are these.
    store.links.clone_from(&frame.links);
    Ok(store)
}

/// What a [`StorePatch`] writes of one entity: see [`StorePatch::records`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EntityRecord<'a> {
    /// An entity the base does not have: its whole blob's bytes (a valid blob).
    Inserted(&'a [u8]),
    /// An entity the base has: the bytes of the [`Patch`](crate::blob::Patch) of its entries
    /// (read with [`Patch::from_bytes`](crate::blob::Patch::from_bytes)).
    Changed(&'a [u8]),
}

impl StorePatch {
    /// Each entity the patch writes, in the target's dense order: its handle and its record.
    /// An entity the patch removes has no record: the target's handles no longer hold it.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, Store, StorePatch};
    /// use datacomp::store::rows::EntityRecord;
    ///
    /// let mut base = Store::new();
    /// let hero = base.insert_entries([("stats.health", 100.0)])?;
    /// let mut now = base.clone();
    /// now.get_mut(hero).unwrap().set("stats.health", 95.0)?;
    /// let imp = now.insert_entries([("name", "Imp")])?;
    /// let delta = StorePatch::diff(&base, &now);
    /// let records: Vec<_> = delta.records().collect();
    /// assert_eq!(records.len(), 2);
    /// assert!(matches!(records[0], (id, EntityRecord::Changed(_)) if id == hero));
    /// let EntityRecord::Inserted(bytes) = records[1].1 else { panic!() };
    /// assert_eq!((records[1].0, Blob::from_bytes(bytes)?), (imp, now.get(imp).unwrap().to_blob()));
    /// # Ok::<(), datacomp::Error>(())
    /// ```
    pub fn records(&self) -> impl Iterator<Item = (Id, EntityRecord<'_>)> + '_ {
        records(&self.entities).map(|record| {
            let bytes = record.data.as_bytes();
            let written = if record.kind == INSERTED {
                EntityRecord::Inserted(bytes)
            } else {
                EntityRecord::Changed(bytes)
            };
            (record.id, written)
        })
    }

    /// Whether the patch only changes the entries of entities its base has: it inserts and
    /// removes none, moves no handle, links no prototype, and keeps the key names and the data
    /// version (so a
    /// store's [`frame`] is the same before and after it).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Store, StorePatch};
    ///
    /// let mut base = Store::new();
    /// let hero = base.insert_entries([("stats.health", 100.0)])?;
    /// let mut now = base.clone();
    /// now.get_mut(hero).unwrap().set("stats.health", 95.0)?;
    /// assert!(StorePatch::diff(&base, &now).is_entries_only());
    /// now.remove(hero);
    /// assert!(!StorePatch::diff(&base, &now).is_entries_only());
    /// # Ok::<(), datacomp::Error>(())
    /// ```
    #[must_use]
    pub fn is_entries_only(&self) -> bool {
        self.slots.is_empty()
            && self.meta.is_empty()
            && self.inserted == 0
            && self.names.is_none()
            && self.data_version == self.base_data_version
            && self.links.is_empty()
    }

    /// [`apply`](StorePatch::apply) to a store *equal* to the patch's base (the same handles,
    /// free slots included, entries, key names and data version), whatever its blobs' layout:
    /// a store rebuilt from rows, or a replica that applied the same deltas. The base's bytes
    /// are not compared (no crc of the contents): the caller knows which state `base` is (by a
    /// sequence number, say). Every part of the patch is still checked; on an error `base`
    /// is unchanged.
    ///
    /// # Errors
    ///
    /// As [`apply`](StorePatch::apply), but for [`StoreError::DeltaBase`].
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Store, StorePatch};
    ///
    /// let mut base = Store::new();
    /// let hero = base.insert_entries([("stats.health", 100.0), ("mana", 5.0)])?;
    /// let mut now = base.clone();
    /// now.get_mut(hero).unwrap().set("stats.health", 95.0)?;
    /// let delta = StorePatch::diff(&base, &now);
    ///
    /// let mut replica = base.clone();
    /// replica.get_mut(hero).unwrap().set("stats.health", 1e6)?; // grows, then back: laid out anew
    /// replica.get_mut(hero).unwrap().set("stats.health", 100.0)?;
    /// replica.compact();
    /// delta.apply_to_equal(&mut replica)?;
    /// assert_eq!(replica, now);
    /// # Ok::<(), datacomp::Error>(())
    /// ```
    pub fn apply_to_equal(&self, base: &mut Store) -> Result<(), LoadError> {
        self.apply_unchecked_base(base)
    }
}
