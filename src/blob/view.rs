//! [`BlobRef`]: the read API of a blob, over borrowed words.

use std::fmt;
use std::iter::FusedIterator;

use zerocopy::IntoBytes;

use super::layout::RegionKind;
use super::{Blob, layout};
use crate::{Key, Value, ValueType};

/// A borrowed, validated blob: the read API shared by [`Blob`] and the store's entities.
///
/// It is a thin `Copy` wrapper around a 4-byte aligned word slice; its values borrow from that
/// slice, so strings and float arrays are returned without copying.
///
/// # Examples
///
/// ```
/// use datacomp::Blob;
///
/// let mut sheet = Blob::new();
/// sheet.set("stats.health", 100.0);
/// let view = sheet.as_blob_ref();
/// assert_eq!(view.get_float("stats.health"), Some(100.0));
/// assert_eq!(view.len(), 1);
/// ```
#[derive(Clone, Copy)]
pub struct BlobRef<'a> {
    // INVARIANT: `words` passes `layout::validate`.
    words: &'a [u32],
}

impl<'a> BlobRef<'a> {
    /// Wraps a region that passed [`layout::validate`] or was written by `layout` functions.
    pub(crate) fn from_valid(words: &'a [u32]) -> BlobRef<'a> {
        BlobRef { words }
    }

    /// The value of `key`, if the blob has it.
    ///
    /// `key` may be a [`Key`] (fastest: a scan of the key array) or a dotted path (`&str`),
    /// which is hashed first.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, Key, Value};
    ///
    /// const MANA: Key = Key::path(&["stats", "mana"]);
    /// let mut sheet = Blob::new();
    /// sheet.set(MANA, 200);
    /// assert_eq!(sheet.as_blob_ref().get(MANA), Some(Value::Float(200.0)));
    /// assert_eq!(sheet.as_blob_ref().get("stats.health"), None);
    /// ```
    #[inline]
    #[must_use]
    pub fn get(self, key: impl Into<Key>) -> Option<Value<'a>> {
        self.value_of(layout::lookup(self.words, key.into()))
    }

    /// The boolean at `key`; `None` if it is missing or of another type.
    #[must_use]
    pub fn get_bool(self, key: impl Into<Key>) -> Option<bool> {
        Self::bool_of(layout::lookup(self.words, key.into()))
    }

    /// The float at `key`; `None` if it is missing or of another type.
    #[must_use]
    pub fn get_float(self, key: impl Into<Key>) -> Option<f32> {
        Self::float_of(layout::lookup(self.words, key.into()))
    }

    /// The string at `key`; `None` if it is missing or of another type.
    #[must_use]
    pub fn get_str(self, key: impl Into<Key>) -> Option<&'a str> {
        self.str_of(layout::lookup(self.words, key.into()))
    }

    /// The float array at `key`, borrowed from the blob; `None` if it is missing or of
    /// another type.
    #[must_use]
    pub fn get_floats(self, key: impl Into<Key>) -> Option<&'a [f32]> {
        self.floats_of(layout::lookup(self.words, key.into()))
    }

    // The typed reads of an entry found by a lookup, as `(tag, header value)`: shared by the
    // getters above and by `KeyCursor`, which finds entries its own way.

    #[inline]
    pub(crate) fn value_of(self, found: Option<(u8, u32)>) -> Option<Value<'a>> {
        let (tag, raw) = found?;
        Some(layout::decode(self.words, tag, raw))
    }

    #[inline]
    pub(crate) fn bool_of(found: Option<(u8, u32)>) -> Option<bool> {
        match found? {
            (tag, raw) if tag == ValueType::Bool as u8 => Some(raw != 0),
            _ => None,
        }
    }

    #[inline]
    pub(crate) fn float_of(found: Option<(u8, u32)>) -> Option<f32> {
        match found? {
            (tag, raw) if tag == ValueType::Float as u8 => Some(f32::from_bits(raw)),
            _ => None,
        }
    }

    #[inline]
    pub(crate) fn str_of(self, found: Option<(u8, u32)>) -> Option<&'a str> {
        match found? {
            (tag, raw) if tag == ValueType::Str as u8 => {
                layout::decode(self.words, tag, raw).as_str()
            }
            _ => None,
        }
    }

    #[inline]
    pub(crate) fn floats_of(self, found: Option<(u8, u32)>) -> Option<&'a [f32]> {
        match found? {
            (tag, raw) if tag == ValueType::Floats as u8 => {
                layout::decode(self.words, tag, raw).as_floats()
            }
            _ => None,
        }
    }

    /// Whether the blob has a value at `key`.
    #[must_use]
    pub fn contains_key(self, key: impl Into<Key>) -> bool {
        layout::find(self.words, key.into()).is_some()
    }

    /// Number of keys.
    #[must_use]
    pub fn len(self) -> usize {
        layout::len(self.words)
    }

    /// Whether the blob has no keys.
    #[must_use]
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// Iterates over the entries in header order: insertion order, less the removed ones.
    #[must_use]
    pub fn iter(self) -> Iter<'a> {
        Iter { words: self.words, front: 0, back: self.len() }
    }

    /// Iterates over the keys in header order.
    #[must_use]
    pub fn keys(self) -> Keys<'a> {
        Keys { keys: layout::keys(self.words).iter() }
    }

    /// Copies the blob into an owned [`Blob`] (one allocation, the same bytes).
    #[must_use]
    pub fn to_blob(self) -> Blob {
        Blob::from_valid_words(self.words.to_vec())
    }

    /// The blob's bytes as they are stored: header, free space and payloads.
    #[must_use]
    pub fn as_bytes(self) -> &'a [u8] {
        self.words.as_bytes()
    }

    /// The blob's words, as the store's arena holds them.
    pub(crate) fn as_words(self) -> &'a [u32] {
        self.words
    }

    /// Size of the buffer in bytes.
    #[must_use]
    pub fn byte_len(self) -> usize {
        self.words.len() * 4
    }

    /// Bytes taken by the header (counts, keys, tags, inline values).
    #[must_use]
    pub fn header_bytes(self) -> usize {
        layout::header_bytes(self.len())
    }

    /// Bytes between the header and the payload region: room to grow without reallocating.
    #[must_use]
    pub fn free_bytes(self) -> usize {
        layout::free_bytes(self.words)
    }

    /// Bytes of the payload region (string and float-array blocks, holes included).
    #[must_use]
    pub fn payload_bytes(self) -> usize {
        self.byte_len() - layout::payload_start(self.words)
    }

    /// Bytes of the payload region that no value uses: left by overwrites and removals,
    /// reclaimed when the blob regrows or is compacted.
    #[must_use]
    pub fn hole_bytes(self) -> usize {
        layout::hole_bytes(self.words)
    }

    /// Bytes the blob would take if repacked with no free space and no holes.
    #[must_use]
    pub fn used_bytes(self) -> usize {
        layout::used_bytes(self.words)
    }

    /// The buffer's layout from its first byte to its last: the header, the free space, each
    /// payload block and each hole, as `(kind, byte offset, bytes)`. The lengths add up to
    /// [`byte_len`](BlobRef::byte_len). For diagrams and tools; reads do not need it.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, Key, RegionKind};
    ///
    /// let mut sheet = Blob::with_capacity(2, 48);
    /// sheet.set("name", "Ann");
    /// sheet.set("title", "Queen");
    /// sheet.set("name", "Annabel"); // outgrows its block: the old one becomes a hole
    /// let kinds: Vec<RegionKind> = sheet.as_blob_ref().regions().iter().map(|r| r.0).collect();
    /// assert_eq!(
    ///     kinds,
    ///     [
    ///         RegionKind::Header,
    ///         RegionKind::Free,
    ///         RegionKind::Payload(Key::parse("name")),
    ///         RegionKind::Payload(Key::parse("title")),
    ///         RegionKind::Hole,
    ///     ]
    /// );
    /// ```
    #[must_use]
    pub fn regions(self) -> Vec<(RegionKind, usize, usize)> {
        layout::regions(self.words)
    }

    /// Whether both blobs hold the same keys with identical values (floats by bit pattern),
    /// whatever the order of their entries and the layout of their bytes. Equal bytes are
    /// equal entries: that memcmp answers first, as it does for most unchanged entities.
    pub(crate) fn same_entries(self, other: BlobRef<'_>) -> bool {
        if self.words == other.words {
            return true;
        }
        if self.len() != other.len() {
            return false;
        }
        // Through an index of `other`'s keys: O(n log n), not a scan per key.
        let other = super::bulk::Finder::new(other.words);
        self.iter().all(|(key, value)| other.get(key).is_some_and(|o| value.is_identical(&o)))
    }
}

impl fmt::Debug for BlobRef<'_> {
    /// The entries, as a map from key to value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl PartialEq for BlobRef<'_> {
    /// Equal when both hold the same keys with identical values (floats compared by bit
    /// pattern), whatever the order of entries and the layout of bytes.
    fn eq(&self, other: &Self) -> bool {
        self.same_entries(*other)
    }
}

impl PartialEq<Blob> for BlobRef<'_> {
    fn eq(&self, other: &Blob) -> bool {
        self.same_entries(other.as_blob_ref())
    }
}

impl<'a> IntoIterator for BlobRef<'a> {
    type Item = (Key, Value<'a>);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// Iterator over a blob's `(Key, Value)` entries in header order.
///
/// Returned by [`Blob::iter`] and [`BlobRef::iter`].
#[derive(Clone)]
pub struct Iter<'a> {
    words: &'a [u32],
    front: usize,
    back: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = (Key, Value<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.front == self.back {
            return None;
        }
        let i = self.front;
        self.front += 1;
        Some((Key::from_raw(layout::keys(self.words)[i]), layout::entry(self.words, i)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.back - self.front;
        (left, Some(left))
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.front == self.back {
            return None;
        }
        self.back -= 1;
        let i = self.back;
        Some((Key::from_raw(layout::keys(self.words)[i]), layout::entry(self.words, i)))
    }
}

impl ExactSizeIterator for Iter<'_> {}
impl FusedIterator for Iter<'_> {}

impl fmt::Debug for Iter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.clone()).finish()
    }
}

/// Iterator over a blob's keys in header order.
///
/// Returned by [`Blob::keys`] and [`BlobRef::keys`].
#[derive(Clone, Debug)]
pub struct Keys<'a> {
    keys: std::slice::Iter<'a, u32>,
}

impl Iterator for Keys<'_> {
    type Item = Key;

    fn next(&mut self) -> Option<Key> {
        self.keys.next().copied().map(Key::from_raw)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.keys.size_hint()
    }
}

impl DoubleEndedIterator for Keys<'_> {
    fn next_back(&mut self) -> Option<Key> {
        self.keys.next_back().copied().map(Key::from_raw)
    }
}

impl ExactSizeIterator for Keys<'_> {}
impl FusedIterator for Keys<'_> {}

impl<'a> From<&'a Blob> for BlobRef<'a> {
    fn from(blob: &'a Blob) -> BlobRef<'a> {
        blob.as_blob_ref()
    }
}
