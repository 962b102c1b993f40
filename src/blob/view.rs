//! [`BlobRef`]: the read API of a blob, over borrowed words.

use std::fmt;
use std::iter::FusedIterator;

use zerocopy::IntoBytes;

use super::layout::RegionKind;
use super::{Blob, layout};
use crate::key::Key;
use crate::names::KeyNames;
use crate::value::{Value, ValueType};

/// A borrowed, validated blob: the read API shared by [`Blob`] and the store's entities.
///
/// It is a thin `Copy` wrapper around a 4-byte aligned word slice; its values borrow from that
/// slice, so strings and float arrays are returned without copying.
///
/// Its read methods are the one definition of the read API: [`Blob`] and
/// [`BlobMut`](crate::BlobMut) have the same methods (`get`, `get_float`, `len`, `iter`,
/// `free_bytes`, ...), generated from one list, each forwarding here through `as_blob_ref()`,
/// so `sheet.get_float("stats.health")` reads the same on all three without an import.
///
/// # Examples
///
/// ```
/// use datacomp::Blob;
///
/// let mut sheet = Blob::new();
/// sheet.set("stats.health", 100.0).unwrap();
/// let view = sheet.as_blob_ref();
/// assert_eq!(view.get_float("stats.health"), Some(100.0));
/// assert_eq!(view.len(), 1);
/// ```
#[derive(Clone, Copy)]
pub struct BlobRef<'a> {
    // INVARIANT: `words` passes `layout::validate`.
    words: &'a [u32],
    /// The key names of the store the blob is in, if it is in one: for `Debug` only (reads
    /// never look at them).
    names: Option<&'a KeyNames>,
}

impl<'a> BlobRef<'a> {
    /// Wraps a region that passed [`layout::validate`] or was written by `layout` functions.
    pub(crate) fn from_valid(words: &'a [u32]) -> BlobRef<'a> {
        BlobRef { words, names: None }
    }

    /// The same blob, shown (by `Debug`) with the key names of the store it is in.
    #[inline]
    pub(crate) fn with_names(self, names: &'a KeyNames) -> BlobRef<'a> {
        BlobRef { names: Some(names), ..self }
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
    /// sheet.set(MANA, 200).unwrap();
    /// assert_eq!(sheet.as_blob_ref().get(MANA), Some(Value::Float(200.0)));
    /// assert_eq!(sheet.as_blob_ref().get("stats.health"), None);
    ///
    /// // The same method on the blob itself.
    /// assert_eq!(sheet.get(Key::path(&["stats", "mana"])), Some(Value::Float(200.0)));
    /// assert_eq!(sheet.get("stats.health"), None);
    /// ```
    #[inline]
    #[must_use]
    pub fn get(self, key: impl Into<Key>) -> Option<Value<'a>> {
        self.value_of(layout::lookup(self.words, key.into()))
    }

    /// The boolean at `key`; `None` if it is missing or of another type.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    ///
    /// let mut sheet = Blob::new();
    /// sheet.set("status_effects.drunk", true).unwrap();
    /// assert_eq!(sheet.get_bool("status_effects.drunk"), Some(true));
    /// assert_eq!(sheet.get_float("status_effects.drunk"), None);
    /// ```
    #[must_use]
    pub fn get_bool(self, key: impl Into<Key>) -> Option<bool> {
        Self::bool_of(layout::lookup(self.words, key.into()))
    }

    /// The float at `key`; `None` if it is missing or of another type.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    ///
    /// let mut sheet = Blob::new();
    /// sheet.set("stats.health", 99.5).unwrap();
    /// assert_eq!(sheet.get_float("stats.health"), Some(99.5));
    /// ```
    #[must_use]
    pub fn get_float(self, key: impl Into<Key>) -> Option<f32> {
        Self::float_of(layout::lookup(self.words, key.into()))
    }

    /// The string at `key`; `None` if it is missing or of another type.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    ///
    /// let mut sheet = Blob::new();
    /// sheet.set("name", "The One").unwrap();
    /// assert_eq!(sheet.get_str("name"), Some("The One"));
    /// ```
    #[must_use]
    pub fn get_str(self, key: impl Into<Key>) -> Option<&'a str> {
        self.str_of(layout::lookup(self.words, key.into()))
    }

    /// The float array at `key`, borrowed from the buffer without copying; `None` if it is
    /// missing or of another type.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    ///
    /// let mut sheet = Blob::new();
    /// sheet.set("color", [0.0, 0.5, 0.5, 0.7]).unwrap();
    /// assert_eq!(sheet.get_floats("color"), Some(&[0.0, 0.5, 0.5, 0.7][..]));
    /// ```
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
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    ///
    /// let mut sheet = Blob::new();
    /// sheet.set("name", "The One").unwrap();
    /// assert!(sheet.contains_key("name"));
    /// assert!(!sheet.contains_key("title"));
    /// ```
    #[must_use]
    pub fn contains_key(self, key: impl Into<Key>) -> bool {
        layout::find(self.words, key.into()).is_some()
    }

    /// Number of keys.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    ///
    /// let mut sheet = Blob::new();
    /// sheet.set("a", 1).unwrap();
    /// sheet.set("b", 2).unwrap();
    /// sheet.set("a", 3).unwrap();
    /// assert_eq!(sheet.len(), 2);
    /// ```
    #[must_use]
    pub fn len(self) -> usize {
        layout::len(self.words)
    }

    /// Whether the blob has no keys.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    ///
    /// assert!(Blob::new().is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// Iterates over `(Key, Value)` entries in header order: insertion order, less the removed
    /// ones.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, Key, Value};
    ///
    /// let mut sheet = Blob::new();
    /// sheet.set("name", "The One").unwrap();
    /// sheet.set("stats.health", 100).unwrap();
    /// let entries: Vec<_> = sheet.iter().collect();
    /// assert_eq!(entries, [
    ///     (Key::parse("name"), Value::Str("The One")),
    ///     (Key::parse("stats.health"), Value::Float(100.0)),
    /// ]);
    /// ```
    #[must_use]
    pub fn iter(self) -> Iter<'a> {
        Iter { words: self.words, front: 0, back: self.len() }
    }

    /// Iterates over the keys in header order.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, Key};
    ///
    /// let mut sheet = Blob::new();
    /// sheet.set("stats.mana", 200).unwrap();
    /// assert_eq!(sheet.keys().collect::<Vec<_>>(), [Key::parse("stats.mana")]);
    /// ```
    #[must_use]
    pub fn keys(self) -> Keys<'a> {
        Keys { keys: layout::keys(self.words).iter() }
    }

    /// Copies the blob into an owned [`Blob`] (one allocation, the same bytes).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Store;
    ///
    /// let mut store = Store::new();
    /// let id = store.insert_entries([("name", "Orc")]).unwrap();
    /// let copy = store.get(id).unwrap().to_blob();
    /// assert_eq!(copy.get_str("name"), Some("Orc"));
    /// assert_eq!(store.get_mut(id).unwrap().to_blob(), copy);
    /// ```
    #[must_use]
    pub fn to_blob(self) -> Blob {
        Blob::from_valid_words(self.words.to_vec())
    }

    /// The blob's bytes as they are stored (header, free space and payloads): write them
    /// anywhere and read them back with [`Blob::from_bytes`].
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    ///
    /// let mut sheet = Blob::new();
    /// sheet.set("stats.health", 100.0).unwrap();
    /// let bytes = sheet.as_bytes();
    /// assert_eq!(bytes.len(), sheet.byte_len());
    /// assert_eq!(&bytes[0..4], &1u32.to_le_bytes(), "one key");
    /// ```
    #[must_use]
    pub fn as_bytes(self) -> &'a [u8] {
        self.words.as_bytes()
    }

    /// The blob's words, as the store's arena holds them.
    pub(crate) fn as_words(self) -> &'a [u32] {
        self.words
    }

    /// Size of the buffer in bytes: header, free space and payload region.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    ///
    /// let blob = Blob::with_capacity(4, 64);
    /// assert_eq!(blob.byte_len(), blob.header_bytes() + blob.free_bytes() + blob.payload_bytes());
    /// ```
    #[must_use]
    pub fn byte_len(self) -> usize {
        self.words.len() * 4
    }

    /// Bytes taken by the header: counts, keys, type tags and inline values.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    ///
    /// let mut sheet = Blob::new();
    /// sheet.set("stats.health", 100).unwrap();
    /// // 8 bytes of counts, then a 4-byte key, a tag padded to 4 bytes and a 4-byte value.
    /// assert_eq!(sheet.header_bytes(), 20);
    /// ```
    #[must_use]
    pub fn header_bytes(self) -> usize {
        layout::header_bytes(self.len())
    }

    /// Bytes between the header and the payload region: room to grow without reallocating.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    ///
    /// let blob = Blob::with_capacity(0, 100);
    /// assert_eq!(blob.free_bytes(), 100);
    /// ```
    #[must_use]
    pub fn free_bytes(self) -> usize {
        layout::free_bytes(self.words)
    }

    /// Bytes of the payload region: string and float-array blocks, holes included.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    ///
    /// let mut sheet = Blob::new();
    /// sheet.set("name", "The One").unwrap();
    /// assert_eq!(sheet.payload_bytes(), 4 + 8);
    /// ```
    #[must_use]
    pub fn payload_bytes(self) -> usize {
        self.byte_len() - layout::payload_start(self.words)
    }

    /// Bytes of the payload region that no value uses: left by overwrites and removals, and
    /// reclaimed when the buffer regrows or by [`Blob::compact`].
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    ///
    /// let mut sheet = Blob::new();
    /// sheet.set("name", "The One").unwrap();
    /// sheet.set("title", "Sir").unwrap();
    /// sheet.remove("name"); // not the last payload allocated: leaves a hole
    /// assert_eq!(sheet.hole_bytes(), 12);
    /// ```
    #[must_use]
    pub fn hole_bytes(self) -> usize {
        layout::hole_bytes(self.words)
    }

    /// Bytes the blob would take with no free space and no holes, as after
    /// [`Blob::shrink_to_fit`].
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    ///
    /// let mut sheet = Blob::with_capacity(10, 100);
    /// sheet.set("name", "The One").unwrap();
    /// assert_eq!(sheet.used_bytes(), sheet.header_bytes() + 12);
    /// ```
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
    /// use datacomp::{Blob, Key};
    /// use datacomp::blob::RegionKind;
    ///
    /// let mut sheet = Blob::with_capacity(2, 48);
    /// sheet.set("name", "Ann").unwrap();
    /// sheet.set("title", "Queen").unwrap();
    /// sheet.set("name", "Annabel").unwrap(); // outgrows its block: the old one becomes a hole
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
    /// The entries, as a map from key to value: each key by its name when the blob is a
    /// store's and the store knows it (`{name: Str("Orc"), stats.health: Float(25.0)}`, as
    /// [`Store::key_label`](crate::Store::key_label) shows it), else by its hash
    /// (`{#1a2b3c4d: Float(25.0)}`: a [`Blob`] holds only hashes).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        /// A key as `Debug` shows it: its name, unquoted, or its hash.
        struct Shown<'n>(Key, Option<&'n KeyNames>);

        impl fmt::Debug for Shown<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self.1.and_then(|names| Some((names, names.named(self.0)?))) {
                    Some((names, node)) => f.write_str(&names.label(node)),
                    None => fmt::Debug::fmt(&self.0, f),
                }
            }
        }

        let names = self.names;
        f.debug_map().entries(self.iter().map(|(key, value)| (Shown(key, names), value))).finish()
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

/// Gives `$owner` (a type with `fn as_blob_ref(&self) -> BlobRef<'_>`) the read API of
/// [`BlobRef`]: one inherent method per entry of the list below, each forwarding to the
/// `BlobRef` method of its name, so that the API is written once, callers need no import, and
/// a read through `Blob` or `BlobMut` compiles to the `BlobRef` read it forwards to.
///
/// `forward_read_api!(Blob)` gives the list; `forward_read_api!(BlobMut<'_>, to_blob)` adds
/// `to_blob` (an owned blob has `clone` instead).
macro_rules! forward_read_api {
    ($owner:ty) => {
        $crate::blob::forward_read_api! { @list $owner;
            /// The value of `key`, if the blob has it.
            get(key: impl Into<$crate::Key>) -> Option<$crate::Value<'_>>;
            /// The boolean at `key`; `None` if it is missing or of another type.
            get_bool(key: impl Into<$crate::Key>) -> Option<bool>;
            /// The float at `key`; `None` if it is missing or of another type.
            get_float(key: impl Into<$crate::Key>) -> Option<f32>;
            /// The string at `key`; `None` if it is missing or of another type.
            get_str(key: impl Into<$crate::Key>) -> Option<&str>;
            /// The float array at `key`, borrowed without copying; `None` if it is missing or of
            /// another type.
            get_floats(key: impl Into<$crate::Key>) -> Option<&[f32]>;
            /// Whether the blob has a value at `key`.
            contains_key(key: impl Into<$crate::Key>) -> bool;
            /// Number of keys.
            len() -> usize;
            /// Whether the blob has no keys.
            is_empty() -> bool;
            /// Iterates over `(Key, Value)` entries in header order.
            iter() -> $crate::blob::Iter<'_>;
            /// Iterates over the keys in header order.
            keys() -> $crate::blob::Keys<'_>;
            /// The blob's bytes as they are stored.
            as_bytes() -> &[u8];
            /// Size of the buffer in bytes: header, free space and payload region.
            byte_len() -> usize;
            /// Bytes taken by the header: counts, keys, type tags and inline values.
            header_bytes() -> usize;
            /// Bytes between the header and the payload region: room to grow without
            /// reallocating.
            free_bytes() -> usize;
            /// Bytes of the payload region: string and float-array blocks, holes included.
            payload_bytes() -> usize;
            /// Bytes of the payload region that no value uses.
            hole_bytes() -> usize;
            /// Bytes the blob would take with no free space and no holes.
            used_bytes() -> usize;
            /// The buffer's layout from its first byte to its last, as `(kind, byte offset,
            /// bytes)`.
            regions() -> Vec<($crate::blob::RegionKind, usize, usize)>;
        }
    };
    ($owner:ty, to_blob) => {
        $crate::blob::forward_read_api!($owner);
        $crate::blob::forward_read_api! { @list $owner;
            /// Copies the blob into an owned [`Blob`](crate::Blob).
            to_blob() -> $crate::Blob;
        }
    };
    (@list $owner:ty; $(
        $(#[doc = $doc:literal])*
        $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;
    )*) => {
        impl $owner {
            $(
                $(#[doc = $doc])*
                #[doc = ""]
                #[doc = concat!(
                    "The same as [`BlobRef::", stringify!($name), "`](crate::BlobRef::",
                    stringify!($name), "), which has the details and an example."
                )]
                #[inline]
                #[must_use]
                pub fn $name(&self, $($arg: $ty),*) -> $ret {
                    self.as_blob_ref().$name($($arg),*)
                }
            )*
        }
    };
}
pub(crate) use forward_read_api;
