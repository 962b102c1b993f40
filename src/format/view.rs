//! [`StoreView`]: a save file read in place, every read borrowing from its bytes.

use zerocopy::little_endian::U32;

use super::check::{self, Spans, blob_at};
use super::error::LoadError;
use super::lazy::LazyStoreView;
use super::saved_names::SavedKeyNames;
use super::upgrade::LoadOptions;
use crate::blob::BlobRef;
use crate::handle_map::{HandleMapView, Id};

/// A save file read in place: validated once, as [`Store::from_bytes`](crate::Store::from_bytes)
/// would, then every read borrows straight from the bytes. Nothing is copied, so it works over a
/// memory-mapped file.
///
/// The arena's floats are lent as `&[f32]`, so the bytes must be 4-byte aligned in memory: a
/// memory map or a `Vec` from the global allocator is; a sub-slice at an odd offset is not.
///
/// # Examples
///
/// ```
/// use datacomp::{Blob, Store, StoreView};
///
/// let mut store = Store::new();
/// let id = store.insert(&[("name", "The One")].into_iter().collect::<Blob>());
/// let bytes = store.to_bytes();
///
/// let view = StoreView::new(&bytes).unwrap();
/// assert_eq!(view.get(id).unwrap().get_str("name"), Some("The One"));
/// assert_eq!(view.len(), 1);
/// ```
#[derive(Clone, Copy)]
pub struct StoreView<'a> {
    index: HandleMapView<'a>,
    // INVARIANT: one span per item of `index`, each inside `arena` holding a valid blob (or
    // empty: the empty blob); end offsets (format 1.3) that never decrease.
    spans: Spans<'a>,
    arena: &'a [u32],
    // INVARIANT: empty, or one per item of `index`, checked by `proto::check_dense`.
    prototypes: &'a [U32],
}

impl<'a> StoreView<'a> {
    /// Validates `bytes` as a save file and reads it in place.
    ///
    /// # Errors
    ///
    /// As [`Store::from_bytes`](crate::Store::from_bytes),
    /// [`StoreError::Misaligned`](crate::format::StoreError::Misaligned) if the arena is not 4-byte
    /// aligned in memory, and [`StoreError::KeyHashView`](super::StoreError::KeyHashView)
    /// for a save of key hash 1, whose keys must be rehashed into a [`Store`](crate::Store)
    /// first.
    pub fn new(bytes: &'a [u8]) -> Result<StoreView<'a>, LoadError> {
        LoadOptions::new().view(bytes)
    }

    /// Checks the header, the section table and the index, and leaves each blob (its end
    /// offsets, its bytes and the crcs of the arena chunks it lies in) to its first read. A
    /// format 1.3 save of a store that never removed an entity opens with no work per entity
    /// but the crc of its index and a byte of state; otherwise the handle map is checked,
    /// O(entities), and (format 1.2 and before) every span, with no walk of the arena. See
    /// [`LazyStoreView`] for what a lazy view does not check.
    ///
    /// # Errors
    ///
    /// As [`new`](StoreView::new), but for the arena's contents, whose errors come from
    /// [`LazyStoreView::get`].
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, Store, StoreView};
    ///
    /// let mut store = Store::new();
    /// let id = store.insert(&[("name", "The One")].into_iter().collect::<Blob>());
    /// let bytes = store.to_bytes();
    ///
    /// let lazy = StoreView::lazy(&bytes)?;
    /// assert_eq!(lazy.len(), 1);
    /// assert_eq!(lazy.get(id)?.unwrap().get_str("name"), Some("The One"));
    /// # Ok::<(), datacomp::LoadError>(())
    /// ```
    pub fn lazy(bytes: &'a [u8]) -> Result<LazyStoreView<'a>, LoadError> {
        LazyStoreView::new(bytes)
    }

    /// The blob of `id`, if it is live in the saved store.
    #[must_use]
    pub fn get(&self, id: Id) -> Option<BlobRef<'a>> {
        let dense = self.index.dense_index(id)?;
        Some(blob_at(self.arena, self.spans.range(dense)))
    }

    /// Whether `id` is live in the saved store.
    #[must_use]
    pub fn contains(&self, id: Id) -> bool {
        self.index.dense_index(id).is_some()
    }

    /// The prototype of `id` in the saved store (see [`Store::prototype`]), if `id` is live
    /// and has one. A view's reads ([`get`](StoreView::get), [`iter`](StoreView::iter), its
    /// queries) are of what each entity stores; load the save into a store to read through
    /// prototypes.
    ///
    /// [`Store::prototype`]: crate::Store::prototype
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Store, StoreView};
    ///
    /// let mut store = Store::new();
    /// let orc = store.insert_entries([("name", "Orc")])?;
    /// let grunt = store.insert_instance(orc)?;
    /// let bytes = store.to_bytes();
    /// let view = StoreView::new(&bytes)?;
    /// assert_eq!((view.prototype(grunt), view.prototype(orc)), (Some(orc), None));
    /// # Ok::<(), datacomp::Error>(())
    /// ```
    #[must_use]
    pub fn prototype(&self, id: Id) -> Option<Id> {
        let dense = self.index.dense_index(id)?;
        let up = (self.prototypes.get(dense)?.get() as usize).checked_sub(1)?;
        Some(self.index.id_at(up))
    }

    /// Refuses the queries of a view of a save with prototype links
    /// ([`StoreError::LinkedView`](super::StoreError::LinkedView)): O(entities).
    pub(crate) fn check_unlinked(&self) -> Result<(), LoadError> {
        let instances = self.prototypes.iter().filter(|p| p.get() != 0).count() as u64;
        if instances == 0 {
            return Ok(());
        }
        Err(super::StoreError::LinkedView { instances }.into())
    }

    /// Number of entities.
    #[must_use]
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether the saved store has no entities.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Iterates over `(Id, BlobRef)` in the saved dense order.
    #[must_use]
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (Id, BlobRef<'a>)> + '_ {
        (0..self.len()).map(|d| (self.index.id_at(d), blob_at(self.arena, self.spans.range(d))))
    }
}

/// Views with options: a save read in place, as [`StoreView::new`] reads one with the default
/// options.
impl LoadOptions {
    /// Validates `bytes` as a save file and reads it in place, as [`StoreView::new`] does, with
    /// these options' limit on [`threads`](LoadOptions::threads); a view cannot rehash, so
    /// known keys do not apply.
    ///
    /// # Errors
    ///
    /// As [`StoreView::new`].
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{LoadOptions, Store};
    ///
    /// let bytes = Store::new().to_bytes();
    /// let view = LoadOptions::new().threads(1).view(&bytes)?;
    /// assert!(view.is_empty());
    /// # Ok::<(), datacomp::LoadError>(())
    /// ```
    pub fn view<'a>(&self, bytes: &'a [u8]) -> Result<StoreView<'a>, LoadError> {
        self.view_with_key_names(bytes).map(|(view, _)| view)
    }

    /// Validates `bytes` as [`view`](LoadOptions::view) does, and gives the save's key names
    /// beside the view: what [`SavedKeyNames::from_bytes`] reads, without reading the file's
    /// sections and names a second time.
    ///
    /// # Errors
    ///
    /// As [`StoreView::new`].
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ImportOptions, Key, LoadOptions, Store};
    ///
    /// let mut store = Store::new();
    /// store.import(r#"{"stats": {"health": 12}}"#, &ImportOptions::strict())?;
    /// let bytes = store.to_bytes();
    /// let (view, names) = LoadOptions::new().view_with_key_names(&bytes)?;
    /// assert_eq!(view.len(), 1);
    /// assert!(names.contains_key(Key::parse("stats.health")));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn view_with_key_names<'a>(
        &self,
        bytes: &'a [u8],
    ) -> Result<(StoreView<'a>, SavedKeyNames), LoadError> {
        let check::InPlace { names, index, spans, arena_bytes, arena, arena_crc, prototypes } =
            check::in_place(bytes)?;
        let id_at = |d| index.id_at(d);
        check::check_arena(arena_bytes, arena, arena_crc, spans, id_at, self.threads)?;
        Ok((StoreView { index, spans, arena, prototypes }, SavedKeyNames { names }))
    }
}

impl std::fmt::Debug for StoreView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreView")
            .field("entities", &self.len())
            .field("arena_bytes", &(self.arena.len() * 4))
            .finish()
    }
}
