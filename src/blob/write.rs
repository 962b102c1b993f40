//! The one write path of a blob: [`BlobWrite`], over "words + regrow", whoever owns the words.
//!
//! A [`Blob`](crate::Blob) owns its buffer; a store's [`BlobMut`](crate::BlobMut) writes a span
//! of the arena and moves it to the arena's end to grow. Each says only where its words are and
//! how it regrows them; setting, removing and reserving room are written once, here, and so are
//! a [`Patch`](crate::blob::Patch)'s application and the merges, which reach the owner through this
//! trait and nothing else.

use super::{bulk, layout};
use crate::blob::BlobError;
use crate::key::Key;
use crate::value::{AsValue, Value, exact_value};

/// The value a write stores for `value`: [`AsValue::as_value`], unless it is an integer that
/// `f32` cannot hold exactly. Every write of a caller's value goes through here.
///
/// # Errors
///
/// [`BlobError::InexactInteger`].
#[inline]
pub(crate) fn stored_value<V: AsValue + ?Sized>(value: &V) -> Result<Value<'_>, BlobError> {
    exact_value(value).map_err(|integer| BlobError::InexactInteger { integer: integer.to_string() })
}

/// An owner of one valid blob region that can regrow it: the write path that [`Blob`]
/// and the store's [`BlobMut`] share.
///
/// Public in name only: the module is private to the crate, so no other crate can name it,
/// call its methods or implement it. It seals [`PatchTarget`](super::PatchTarget).
///
/// [`Blob`]: crate::Blob
/// [`BlobMut`]: crate::BlobMut
pub trait BlobWrite {
    /// The blob's words: a valid region (the empty blob's constant encoding when nothing is
    /// allocated).
    fn words(&self) -> &[u32];

    /// The blob's words, to write in place; `None` for an empty blob with no buffer, which
    /// regrows before its first write. An owner that tracks changes records one here: every
    /// write goes through it.
    fn words_mut(&mut self) -> Option<&mut [u32]>;

    /// Repacks the blob (holes dropped) into a buffer of at least `required` bytes, by the
    /// owner's growth policy.
    ///
    /// # Errors
    ///
    /// [`BlobError::TooLarge`] if `required` passes [`MAX_BYTES`](crate::blob::MAX_BYTES); the blob is
    /// unchanged.
    fn regrow(&mut self, required: u64) -> Result<(), BlobError>;

    /// Sets `key` to `value` in place, or after regrowing once when there is no room; returns
    /// whether it regrew.
    ///
    /// # Errors
    ///
    /// [`BlobError::TooLarge`] past [`MAX_BYTES`](crate::blob::MAX_BYTES); the blob is unchanged.
    fn set_entry(&mut self, key: Key, value: Value<'_>) -> Result<bool, BlobError> {
        let done = match self.words_mut() {
            Some(words) => layout::set(words, key, value),
            // An empty blob without a buffer: the constant encoding tells the write's need.
            None => layout::set(&mut layout::EMPTY.clone(), key, value),
        };
        let Err(need) = done else {
            return Ok(false);
        };
        self.regrow_and_set(need.required, key, value)?;
        Ok(true)
    }

    /// After a write that did not fit: regrows to `required` bytes, then sets `key` to `value`.
    ///
    /// # Errors
    ///
    /// [`BlobError::TooLarge`] past [`MAX_BYTES`](crate::blob::MAX_BYTES); the blob is unchanged.
    fn regrow_and_set(
        &mut self,
        required: u64,
        key: Key,
        value: Value<'_>,
    ) -> Result<(), BlobError> {
        self.regrow(required)?;
        let words = self.words_mut().expect("INVARIANT: a regrown blob has a buffer");
        layout::set(words, key, value)
            .expect("INVARIANT: a write fits once the blob is repacked into its requirement");
        Ok(())
    }

    /// Sets `key` to `value` if the blob holds `key` (one lookup for the test and the write),
    /// regrowing once when there is no room: `Some(regrew)`; `None`, and nothing changed (not
    /// even recorded as a change), if the blob does not hold `key`.
    ///
    /// # Errors
    ///
    /// [`BlobError::TooLarge`] past [`MAX_BYTES`](crate::blob::MAX_BYTES); the blob is unchanged.
    #[inline]
    fn replace_entry(&mut self, key: Key, value: Value<'_>) -> Result<Option<bool>, BlobError> {
        let Some(i) = layout::find(self.words(), key) else {
            return Ok(None);
        };
        // A held key: the blob has a buffer.
        let words = self.words_mut().expect("INVARIANT: a blob that holds a key has a buffer");
        let Err(need) = layout::overwrite(words, i, value) else {
            return Ok(Some(false));
        };
        self.regrow_and_set(need.required, key, value)?;
        Ok(Some(true))
    }

    /// Removes `key`, returning whether it was there.
    fn remove_entry(&mut self, key: Key) -> bool {
        self.words_mut().is_some_and(|words| layout::remove(words, key))
    }

    /// Makes sure `additional` bytes of keys and payloads fit without regrowing, regrowing at
    /// most once.
    ///
    /// # Errors
    ///
    /// [`BlobError::TooLarge`] past [`MAX_BYTES`](crate::blob::MAX_BYTES); the blob is unchanged.
    fn reserve_bytes(&mut self, additional: usize) -> Result<(), BlobError> {
        let words = self.words();
        if layout::free_bytes(words) < additional {
            self.regrow(layout::used_bytes(words) as u64 + additional as u64)?;
        }
        Ok(())
    }

    /// Sets every entry (unique keys) at once through one index of the blob's keys, after
    /// reserving `room` bytes for them (at most once regrowing): O(n log n), or changes
    /// nothing.
    ///
    /// # Errors
    ///
    /// [`BlobError::TooLarge`] past [`MAX_BYTES`](crate::blob::MAX_BYTES); the blob is unchanged.
    fn set_all<'v, I>(&mut self, room: usize, entries: I) -> Result<(), BlobError>
    where
        I: IntoIterator<Item = (Key, Value<'v>)>,
        I::IntoIter: Clone,
    {
        self.remove_and_set_all(&[], room, entries)
    }

    /// Removes the keys in `removals` (sorted) and sets `sets`, growing at most once, or
    /// changes nothing: the application of a [`Patch`](crate::blob::Patch).
    ///
    /// # Errors
    ///
    /// [`BlobError::TooLarge`] past [`MAX_BYTES`](crate::blob::MAX_BYTES); the blob is unchanged.
    fn remove_and_set_all<'v, I>(
        &mut self,
        removals: &[u32],
        room: usize,
        sets: I,
    ) -> Result<(), BlobError>
    where
        I: IntoIterator<Item = (Key, Value<'v>)>,
        I::IntoIter: Clone,
    {
        self.reserve_bytes(room)?;
        // No buffer: an empty blob, with nothing to set, so nothing to remove either.
        if let Some(words) = self.words_mut() {
            // All removals in one pass, then all sets through one index: O(n log n).
            bulk::remove_sorted(words, removals);
            bulk::set_all(words, sets);
        }
        Ok(())
    }
}
