//! [`StoreView`]: a save file read in place, every read borrowing from its bytes.

use crate::handle_map::HandleMapView;
use crate::load::{self, LazyStoreView, Spans, blob_at};
use crate::{BlobRef, Id, LoadError, LoadOptions, SavedKeyNames};

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
}

impl<'a> StoreView<'a> {
    /// Validates `bytes` as a save file and reads it in place.
    ///
    /// # Errors
    ///
    /// As [`Store::from_bytes`](crate::Store::from_bytes),
    /// [`StoreError::Misaligned`](crate::StoreError::Misaligned) if the arena is not 4-byte
    /// aligned in memory, and [`UpgradeError::KeyHashView`](crate::UpgradeError::KeyHashView)
    /// for a save of key hash 1, whose keys must be rehashed into a [`Store`](crate::Store)
    /// first.
    pub fn new(bytes: &'a [u8]) -> Result<StoreView<'a>, LoadError> {
        StoreView::new_with(bytes, &LoadOptions::new())
    }

    /// Validates `bytes` as [`new`](StoreView::new) does, with `options`' limit on threads
    /// ([`LoadOptions::threads`]); a view cannot rehash, so known keys do not apply.
    ///
    /// # Errors
    ///
    /// As [`new`](StoreView::new).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{LoadOptions, Store, StoreView};
    ///
    /// let bytes = Store::new().to_bytes();
    /// let view = StoreView::new_with(&bytes, &LoadOptions::new().threads(1))?;
    /// assert!(view.is_empty());
    /// # Ok::<(), datacomp::LoadError>(())
    /// ```
    pub fn new_with(bytes: &'a [u8], options: &LoadOptions) -> Result<StoreView<'a>, LoadError> {
        StoreView::with_key_names(bytes, options).map(|(view, _)| view)
    }

    /// Validates `bytes` as [`new_with`](StoreView::new_with) does, and gives the save's key
    /// names beside the view: what [`SavedKeyNames::from_bytes`] reads, without reading the
    /// file's sections and names a second time.
    ///
    /// # Errors
    ///
    /// As [`new`](StoreView::new).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ImportOptions, Key, LoadOptions, Store, StoreView};
    ///
    /// let mut store = Store::new();
    /// store.import(r#"{"stats": {"health": 12}}"#, &ImportOptions::strict())?;
    /// let bytes = store.to_bytes();
    /// let (view, names) = StoreView::with_key_names(&bytes, &LoadOptions::new())?;
    /// assert_eq!(view.len(), 1);
    /// assert!(names.contains_key(Key::parse("stats.health")));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_key_names(
        bytes: &'a [u8],
        options: &LoadOptions,
    ) -> Result<(StoreView<'a>, SavedKeyNames), LoadError> {
        let load::InPlace { names, index, spans, arena_bytes, arena, arena_crc } =
            load::in_place(bytes)?;
        let id_at = |d| index.id_at(d);
        load::check_arena(arena_bytes, arena, arena_crc, spans, id_at, options.threads)?;
        Ok((StoreView { index, spans, arena }, SavedKeyNames { names }))
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

impl std::fmt::Debug for StoreView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreView")
            .field("entities", &self.len())
            .field("arena_bytes", &(self.arena.len() * 4))
            .finish()
    }
}
