//! [`BlobMut`]: one stored entity's blob, edited in place in the store's arena.

use std::fmt;

use super::{Span, Store};
use crate::blob::layout;
use crate::blob::write::{BlobWrite, stored_value};
use crate::blob::{BlobError, BlobRef};
use crate::error::Error;
use crate::handle_map::Id;
use crate::key::{AsKey, Key};
use crate::value::{AsValue, Value};

/// Words a blob gets at least when it moves to the end of the arena to grow: 128 bytes.
const MIN_GROWTH_WORDS: usize = 32;

/// One entity's blob inside a [`Store`], for editing: returned by [`Store::get_mut`].
///
/// Writes go straight into the arena; a blob that outgrows its span moves to the end of the
/// arena first.
pub struct BlobMut<'a> {
    pub(super) store: &'a mut Store,
    // INVARIANT: live in `store.index` for the whole borrow.
    pub(super) id: Id,
}

impl BlobMut<'_> {
    #[inline]
    fn span(&self) -> Span {
        *self.store.index.get(self.id).expect("INVARIANT: a BlobMut's id stays live")
    }

    /// The blob, read-only: the read API that `BlobMut` forwards to.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{BlobRef, Store};
    ///
    /// fn health(sheet: BlobRef<'_>) -> f32 {
    ///     sheet.get_float("stats.health").unwrap_or(0.0)
    /// }
    /// let mut store = Store::new();
    /// let id = store.insert_entries([("stats.health", 42)]).unwrap();
    /// let mut entity = store.get_mut(id).unwrap();
    /// entity.set("stats.health", 40)?;
    /// assert_eq!(health(entity.as_blob_ref()), 40.0);
    /// # Ok::<(), datacomp::Error>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn as_blob_ref(&self) -> BlobRef<'_> {
        BlobRef::from_valid(self.words())
    }

    /// Sets `key` to `value`, as [`Blob::set`](crate::blob::Blob::set) does, and records the
    /// name of a key given as text (`"stats.health"`, a [`KeyPath`](crate::KeyPath), such as a
    /// `const` one) in the store, so that export, tools and upgrades know it; or changes
    /// nothing: neither the entity nor the store's names. A key given as a [`Key`] records no
    /// name.
    ///
    /// Whether a write succeeds can depend on the data (an imported mod's names, the keys the
    /// entity already holds), so a write returns every refusal as an error and never panics
    /// on it.
    ///
    /// # Errors
    ///
    /// [`Error::Key`] with [`KeyError::Collision`](crate::key::KeyError::Collision) if the key
    /// is given as text and the store records its hash under another name (writing would
    /// overwrite that name's value), [`KeyError::PathTooDeep`](crate::key::KeyError::PathTooDeep)
    /// for a key given as text of more than [`MAX_PATH_SEGMENTS`](crate::key::MAX_PATH_SEGMENTS)
    /// segments, [`KeyError::RawKeyName`](crate::key::KeyError::RawKeyName) for a name whose
    /// first segment reads as a raw key (`#1a2b3c4d`),
    /// [`KeyError::PathConflict`](crate::key::KeyError::PathConflict) if the key is new
    /// to the entity and given as text, and the entity holds a value named on its path (`stats`
    /// for `stats.health`) or keys named under it (`stats.health` for `stats`): export could not
    /// write both; [`Error::Blob`] with [`BlobError::InexactInteger`] for an integer `f32`
    /// cannot hold exactly, and [`BlobError::TooLarge`] past 4 GiB for one blob.
    ///
    /// # Panics
    ///
    /// If the arena would pass 16 GiB (2^32 words: its offsets are 32-bit), a store's capacity.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Error, Key, KeyError, Store};
    ///
    /// let mut store = Store::new();
    /// let id = store.insert_empty();
    /// let mut entity = store.get_mut(id).unwrap();
    /// entity.set("stats.health", 95)?;
    /// entity.set(Key::parse("stats.mana"), 10)?;
    /// assert_eq!(store.key_name(Key::parse("stats.health")).as_deref(), Some("stats.health"));
    /// assert_eq!(store.key_name(Key::parse("stats.mana")), None);
    ///
    /// let mut entity = store.get_mut(id).unwrap();
    /// entity.set("sleep_haste_8", 1)?;
    /// // Another name with the same 32-bit hash.
    /// let err = entity.set("fury_sleep_272", 2).unwrap_err();
    /// assert!(matches!(err, Error::Key(KeyError::Collision { .. })));
    /// assert_eq!(entity.get_float("sleep_haste_8"), Some(1.0), "unchanged");
    ///
    /// // A value where a path runs through, or the other way round.
    /// assert!(matches!(entity.set("stats", 5), Err(Error::Key(KeyError::PathConflict { .. }))));
    /// assert!(matches!(
    ///     entity.set("stats.health.max", 5),
    ///     Err(Error::Key(KeyError::PathConflict { .. }))
    /// ));
    /// assert_eq!(entity.len(), 3, "unchanged");
    /// # Ok::<(), Error>(())
    /// ```
    pub fn set(&mut self, key: impl AsKey, value: impl AsValue) -> Result<(), Error> {
        // The text of a name found since the names last changed, for a key the entity holds:
        // no hash, nothing to check or record, and one lookup for the test and the write
        // (`KeyNames::known_text`, `BlobWrite::replace_entry`). Anything else, a value that
        // cannot be stored included, takes the full path below.
        if let Some(known) = key.as_dotted_text().and_then(|text| self.store.names.known_text(text))
            && let Ok(stored) = stored_value(&value)
            && self.replace(known, stored)?
        {
            return Ok(());
        }
        let path = key.as_path();
        // A name the store holds already, for a key the entity holds: nothing to check and
        // nothing to record (a lookup and a comparison a segment: `KeyNames::known`).
        let known = path
            .as_ref()
            .and_then(|path| self.store.names.known_again(path))
            .filter(|&key| self.as_blob_ref().contains_key(key));
        let path = if known.is_some() { None } else { path };
        let key = match (known, &path) {
            (Some(known), _) => known,
            (None, Some(path)) => {
                path.check_depth()?;
                path.check_not_raw()?;
                let key = self.store.names.check(path)?;
                // A new key may not make a path both a value and an object.
                let blob = self.as_blob_ref();
                if !blob.contains_key(key) {
                    self.store.check_placement(blob, path)?;
                }
                key
            }
            (None, None) => key.as_key(),
        };
        self.write(key, stored_value(&value)?)?;
        if let Some(path) = &path {
            // Checked above: recording cannot collide.
            self.store.names.record(path)?;
        }
        Ok(())
    }

    /// Sets `key` to `value`: [`set`](BlobMut::set), under its old name.
    ///
    /// # Errors
    ///
    /// As [`set`](BlobMut::set).
    #[deprecated(note = "`set` returns the `Result` now")]
    pub fn try_set(&mut self, key: impl AsKey, value: impl AsValue) -> Result<(), Error> {
        self.set(key, value)
    }

    /// Writes `key` in place, or after moving the blob to the arena's end with room.
    fn write(&mut self, key: Key, value: Value<'_>) -> Result<(), BlobError> {
        let before = self.store.own_keys_before(self.id);
        let moved = self.set_entry(key, value)?;
        // The keys it held, and perhaps `key`.
        self.wrote(moved, before, Some(key));
        Ok(())
    }

    /// As [`write`](BlobMut::write) if the entity holds `key`; returns whether it did (and
    /// changed nothing if not).
    #[inline]
    fn replace(&mut self, key: Key, value: Value<'_>) -> Result<bool, BlobError> {
        let before = self.store.own_keys_before(self.id);
        let Some(moved) = self.replace_entry(key, value)? else {
            return Ok(false);
        };
        // The keys it held: a value changed, not a key.
        self.wrote(moved, before, None);
        Ok(true)
    }

    /// After a write: the filter of an instance's own keys, which the write forgot
    /// (`Store::touch`), kept as `own_keys` (what it knew before) and the bit of `added`
    /// (the key written, if it may be new): an instance written every frame is read through
    /// its filter, not by a scan that learns it again. When the blob moved, its old span is
    /// garbage.
    #[inline]
    fn wrote(&mut self, moved: bool, own_keys: u64, added: Option<Key>) {
        self.store.own_keys_after(self.id, own_keys, added);
        if moved {
            self.store.compact_if_wasteful();
        }
    }

    /// Removes `key`; returns whether it was there.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Store;
    ///
    /// let mut store = Store::new();
    /// let id = store.insert_entries([("status_effects.drunk", true)]).unwrap();
    /// let mut entity = store.get_mut(id).unwrap();
    /// assert!(entity.remove("status_effects.drunk"));
    /// assert!(!entity.remove("status_effects.drunk"));
    /// assert!(entity.is_empty());
    /// ```
    pub fn remove(&mut self, key: impl Into<Key>) -> bool {
        let before = self.store.own_keys_before(self.id);
        let removed = self.remove_entry(key.into());
        // The keys it held, one fewer perhaps: still a filter of them.
        self.store.own_keys_after(self.id, before, None);
        removed
    }
}

crate::blob::forward_read_api!(BlobMut<'_>, to_blob);

impl BlobWrite for BlobMut<'_> {
    #[inline]
    fn words(&self) -> &[u32] {
        &self.store.arena[self.span().range()]
    }

    // Measured: left to itself LLVM calls it from `set_entry`, 7% more instructions a set.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn words_mut(&mut self) -> Option<&mut [u32]> {
        // The caller writes the region: the entity changes.
        self.store.touch(self.id);
        let span = self.span();
        Some(&mut self.store.arena[span.range()])
    }

    /// Moves the blob to the arena's end, repacked into at least `required` bytes (and at
    /// least twice its size, so that a run of growing writes moves it O(log n) times).
    fn regrow(&mut self, required: u64) -> Result<(), BlobError> {
        if required > layout::MAX_BYTES as u64 {
            return Err(BlobError::TooLarge { required });
        }
        let span = self.span();
        let required = (required as usize).div_ceil(4);
        let words = required.max(2 * span.words()).max(MIN_GROWTH_WORDS);
        let words = words.min(layout::MAX_BYTES / 4);
        let moved = self.store.allocate(words);
        let (old, new) = self.store.arena.split_at_mut(moved.offset());
        layout::repack(&old[span.range()], new);
        *self.store.index.get_mut(self.id).expect("INVARIANT: a BlobMut's id stays live") = moved;
        self.store.garbage_words += span.words();
        Ok(())
    }
}

impl crate::blob::PatchTarget for BlobMut<'_> {}

impl<'b> IntoIterator for &'b BlobMut<'_> {
    type Item = (Key, Value<'b>);
    type IntoIter = crate::blob::Iter<'b>;

    fn into_iter(self) -> crate::blob::Iter<'b> {
        self.iter()
    }
}

impl fmt::Debug for BlobMut<'_> {
    /// As a store's [`BlobRef`] shows: keys by name where the store knows them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.as_blob_ref().with_names(self.store.names()), f)
    }
}
