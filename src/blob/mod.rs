//! [`Blob`]: one entity's data in one byte buffer.

pub(crate) mod bulk;
mod error;
pub(crate) mod layout;
pub(crate) mod patch;
mod view;
pub(crate) mod write;

use std::fmt;

use zerocopy::IntoBytes;

pub use error::BlobError;
pub use layout::{MAX_BYTES, RegionKind};
pub use patch::{Conflict, Conflicts, Patch, PatchTarget, Side};
pub(crate) use view::forward_read_api;
pub use view::{BlobRef, Iter, Keys};
use write::BlobWrite;

use crate::key::Key;
use crate::value::{AsValue, Value};

/// Bytes a blob takes on its first growth: room for a small character sheet.
const MIN_GROWTH_BYTES: usize = 128;

/// One entity's data (a character sheet) in one contiguous buffer with no pointers inside.
///
/// Keys map to a bool, an f32, a string or an f32 array. The header grows up from the start as
/// a structure of arrays (keys, type tags, inline values); string and array payloads grow down
/// from the end; both share the free space in the middle, and the buffer grows (geometrically,
/// repacking away holes) only when they meet.
///
/// ```text
/// ┌───┬──────┬─────────────┬──────┬─────────────────┬────────────┬────────────────────────────┐
/// │ n │pstart│ keys[n] u32 │ tags │ values[n] u32   │ ...free... │ [3│"Bob"] [2│1.0 2.0] ...│
/// └───┴──────┴─────────────┴──────┴─────────────────┴────────────┴────────────────────────────┘
///  header (grows up) ─────────────────────────────────▶          ◀──── payload (grows down)
/// ```
///
/// Offsets are 32-bit and relative to the buffer, so a blob is copied, moved and written to disk
/// as it is ([`as_bytes`](Blob::as_bytes)), and read back with validation
/// ([`from_bytes`](Blob::from_bytes)). A blob holds at most [`MAX_BYTES`] bytes (4 GiB).
///
/// Lookups scan the key array, which for the few dozen keys of an entity beats a hash map.
/// Equality compares the entries, not the bytes.
///
/// # Examples
///
/// ```
/// use datacomp::{Blob, Key};
///
/// let mut sheet = Blob::new();
/// sheet.set("name", "The One").unwrap();
/// sheet.set("stats.health", 100).unwrap();
/// sheet.set("stats.mana", 200).unwrap();
/// sheet.set("status_effects.drunk", true).unwrap();
/// sheet.set("position", [1.0, 2.0, 0.5]).unwrap();
///
/// const HEALTH: Key = Key::path(&["stats", "health"]);
/// assert_eq!(sheet.get_float(HEALTH), Some(100.0));
/// assert_eq!(sheet.get_str("name"), Some("The One"));
/// assert_eq!(sheet.get_floats("position"), Some(&[1.0, 2.0, 0.5][..]));
///
/// let copy = Blob::from_bytes(sheet.as_bytes()).unwrap();
/// assert_eq!(copy, sheet);
/// ```
#[derive(Clone, Default)]
pub struct Blob {
    // INVARIANT: empty (the empty blob, `layout::EMPTY`, with no allocation) or a region that
    // passes `layout::validate`.
    words: Vec<u32>,
}

impl Blob {
    /// An empty blob. It does not allocate until the first value is set.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    ///
    /// let blob = Blob::new();
    /// assert!(blob.is_empty());
    /// assert_eq!(blob.byte_len(), 8);
    /// ```
    #[must_use]
    pub const fn new() -> Blob {
        Blob { words: Vec::new() }
    }

    /// An empty blob with room for `keys` entries and `payload_bytes` of payload, in one
    /// allocation.
    ///
    /// A string or float array takes [`Value::payload_bytes`] of payload: 4 bytes of length plus
    /// its data rounded up to 4 bytes. Filling the blob within that room does not allocate.
    ///
    /// # Panics
    ///
    /// If the blob would exceed [`MAX_BYTES`].
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, Value};
    ///
    /// let name = Value::Str("The One");
    /// let mut sheet = Blob::with_capacity(2, name.payload_bytes());
    /// let bytes = sheet.byte_len();
    /// sheet.set("name", name).unwrap();
    /// sheet.set("stats.health", 100.0).unwrap();
    /// assert_eq!(sheet.byte_len(), bytes, "no growth");
    /// assert_eq!(sheet.free_bytes(), 0);
    /// ```
    #[must_use]
    pub fn with_capacity(keys: usize, payload_bytes: usize) -> Blob {
        let Some(bytes) = layout::capacity_bytes(keys, payload_bytes) else {
            panic!(
                "Blob::with_capacity({keys}, {payload_bytes}) exceeds the format's limit of \
                 {MAX_BYTES} bytes"
            );
        };
        if bytes == layout::header_bytes(0) {
            return Blob::new();
        }
        let mut words = vec![0; bytes / 4];
        layout::init_empty(&mut words);
        Blob { words }
    }

    /// Reads a blob from bytes written by [`as_bytes`](Blob::as_bytes), checking every count,
    /// offset, length, type tag and string. The bytes are copied into an aligned buffer.
    ///
    /// # Errors
    ///
    /// A [`BlobError`] that names the first problem and where it is. Any input gives `Ok` or
    /// `Err`; none panics or reads out of bounds.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, BlobError};
    ///
    /// let mut sheet = Blob::new();
    /// sheet.set("name", "The One").unwrap();
    /// let bytes = sheet.as_bytes().to_vec();
    /// assert_eq!(Blob::from_bytes(&bytes).unwrap(), sheet);
    ///
    /// let mut bad = bytes.clone();
    /// bad[0] = 200; // claims 200 keys
    /// assert!(matches!(Blob::from_bytes(&bad), Err(BlobError::HeaderOutOfBounds { keys: 200, .. })));
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Blob, BlobError> {
        let byte_len = bytes.len();
        check_byte_len(byte_len)?;
        let mut words = vec![0u32; byte_len / 4];
        words.as_mut_bytes().copy_from_slice(bytes);
        layout::validate(&words, &mut layout::Scratch::default())?;
        Ok(Blob { words })
    }

    /// Wraps words that are known to hold a valid blob.
    pub(crate) fn from_valid_words(words: Vec<u32>) -> Blob {
        if words.as_slice() == layout::EMPTY {
            return Blob::new();
        }
        Blob { words }
    }

    /// Makes this blob a copy of the valid blob in `words`, repacked with `room` free bytes,
    /// reusing its allocation.
    pub(crate) fn repack_from(&mut self, words: &[u32], room: usize) {
        let len = (layout::used_bytes(words) + room).div_ceil(4);
        self.words.clear();
        self.words.resize(len, 0);
        layout::repack(words, &mut self.words);
    }

    /// Borrows the blob as a [`BlobRef`], the read API it shares with the store's entities.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, BlobRef};
    ///
    /// fn health(sheet: BlobRef<'_>) -> f32 {
    ///     sheet.get_float("stats.health").unwrap_or(0.0)
    /// }
    /// let mut sheet = Blob::new();
    /// sheet.set("stats.health", 42).unwrap();
    /// assert_eq!(health(sheet.as_blob_ref()), 42.0);
    /// ```
    #[must_use]
    pub fn as_blob_ref(&self) -> BlobRef<'_> {
        BlobRef::from_valid(self.words())
    }

    /// Sets `key` to `value`, replacing any old value of any type, or changes nothing.
    ///
    /// `value` may be a `bool`, an `f32`, an `f64` (rounded to the nearest `f32`) or any
    /// integer type (stored as `f32`), a `&str` or `&String`, a `&[f32]`, `&Vec<f32>` or
    /// `[f32; N]`, or a [`Value`]. A new payload that fits in the old one's place reuses it;
    /// otherwise it takes free space, and the buffer grows when there is none.
    ///
    /// # Errors
    ///
    /// [`BlobError::InexactInteger`] for an integer that `f32` cannot hold exactly (past 2^24
    /// in magnitude: `16_777_217` would become `16777216`), and [`BlobError::TooLarge`] if the
    /// blob would exceed [`MAX_BYTES`] (4 GiB). The blob is unchanged.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, BlobError};
    ///
    /// let mut sheet = Blob::new();
    /// sheet.set("stats.health", 100)?;
    /// sheet.set("stats.health", "full")?; // the type may change
    /// assert_eq!(sheet.get_str("stats.health"), Some("full"));
    /// assert_eq!(sheet.len(), 1);
    ///
    /// let gold: u64 = 1 << 40; // a power of two: held exactly
    /// sheet.set("gold", gold)?;
    /// assert_eq!(sheet.set("gold", gold + 1), Err(BlobError::InexactInteger { integer: "1099511627777".into() }));
    /// assert_eq!(sheet.get_float("gold"), Some(1099511627776.0), "unchanged");
    /// # Ok::<(), BlobError>(())
    /// ```
    pub fn set(&mut self, key: impl Into<Key>, value: impl AsValue) -> Result<(), BlobError> {
        let value = write::stored_value(&value)?;
        self.set_entry(key.into(), value).map(|_regrew| ())
    }

    /// Sets `key` to `value`: [`set`](Blob::set), under its old name.
    ///
    /// # Errors
    ///
    /// As [`set`](Blob::set).
    #[deprecated(note = "`set` returns the `Result` now")]
    pub fn try_set(&mut self, key: impl Into<Key>, value: impl AsValue) -> Result<(), BlobError> {
        self.set(key, value)
    }

    /// Removes `key`, returning whether it was there. Its payload becomes a hole (or free
    /// space, when it was the last one allocated). The other entries keep their order.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    ///
    /// let mut sheet = Blob::new();
    /// sheet.set("status_effects.drunk", true).unwrap();
    /// assert!(sheet.remove("status_effects.drunk"));
    /// assert!(!sheet.remove("status_effects.drunk"));
    /// assert!(sheet.is_empty());
    /// ```
    pub fn remove(&mut self, key: impl Into<Key>) -> bool {
        self.remove_entry(key.into())
    }

    /// Removes every entry, keeping the buffer.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    ///
    /// let mut sheet = Blob::new();
    /// sheet.set("name", "The One").unwrap();
    /// let bytes = sheet.byte_len();
    /// sheet.clear();
    /// assert!(sheet.is_empty());
    /// assert_eq!(sheet.byte_len(), bytes);
    /// ```
    pub fn clear(&mut self) {
        if !self.words.is_empty() {
            layout::init_empty(&mut self.words);
        }
    }

    /// Drops the holes left by overwrites and removals, keeping the buffer's size: the payloads
    /// are repacked against the end, and the reclaimed bytes join the free space.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    ///
    /// let mut sheet = Blob::new();
    /// sheet.set("name", "The One").unwrap();
    /// sheet.set("title", "Lord of the Keys").unwrap();
    /// sheet.set("name", "The One and Only").unwrap(); // outgrows its place: a hole
    /// assert_eq!(sheet.hole_bytes(), 12);
    /// let free = sheet.free_bytes();
    /// sheet.compact();
    /// assert_eq!(sheet.hole_bytes(), 0);
    /// assert_eq!(sheet.free_bytes(), free + 12);
    /// assert_eq!(sheet.get_str("name"), Some("The One and Only"));
    /// ```
    pub fn compact(&mut self) {
        if self.hole_bytes() > 0 {
            let mut words = vec![0; self.words.len()];
            layout::repack(&self.words, &mut words);
            self.words = words;
        }
    }

    /// Repacks the blob into a buffer of exactly [`used_bytes`](Blob::used_bytes): no free
    /// space, no holes.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    ///
    /// let mut sheet = Blob::with_capacity(100, 4096);
    /// sheet.set("stats.health", 100).unwrap();
    /// sheet.shrink_to_fit();
    /// assert_eq!(sheet.free_bytes(), 0);
    /// assert_eq!(sheet.byte_len(), 20);
    /// ```
    pub fn shrink_to_fit(&mut self) {
        let used = self.used_bytes();
        if used != self.byte_len() {
            let mut words = vec![0; used / 4];
            layout::repack(self.words(), &mut words);
            *self = Blob::from_valid_words(words);
        }
    }

    /// Makes sure that `additional` more bytes of keys and payloads fit without growing,
    /// repacking once if they do not.
    ///
    /// # Panics
    ///
    /// If the blob would exceed [`MAX_BYTES`].
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    ///
    /// let mut sheet = Blob::new();
    /// sheet.reserve(1000);
    /// assert!(sheet.free_bytes() >= 1000);
    /// ```
    #[track_caller]
    pub fn reserve(&mut self, additional: usize) {
        if self.free_bytes() < additional {
            let required = self.used_bytes() as u64 + additional as u64;
            if let Err(e) = self.regrow(required) {
                panic!("Blob::reserve: {e}");
            }
        }
    }
}

forward_read_api!(Blob);

impl BlobWrite for Blob {
    #[inline]
    fn words(&self) -> &[u32] {
        if self.words.is_empty() { &layout::EMPTY } else { &self.words }
    }

    #[inline]
    fn words_mut(&mut self) -> Option<&mut [u32]> {
        (!self.words.is_empty()).then_some(&mut self.words[..])
    }

    /// Repacks the blob into a new buffer of at least `required` bytes: the same size when
    /// dropping holes leaves a quarter of it free, else geometrically larger.
    fn regrow(&mut self, required: u64) -> Result<(), BlobError> {
        if required > MAX_BYTES as u64 {
            return Err(BlobError::TooLarge { required });
        }
        // Whole words; MAX_BYTES is one, so this stays within it.
        let required = (required as usize).next_multiple_of(4);
        let current = self.byte_len();
        let bytes = if self.words.is_empty() {
            required.max(MIN_GROWTH_BYTES)
        } else if required <= current / 4 * 3 {
            current
        } else {
            required.max(current.saturating_mul(2)).min(MAX_BYTES)
        };
        let mut words = vec![0; bytes / 4];
        layout::repack(self.words(), &mut words);
        self.words = words;
        Ok(())
    }
}

impl fmt::Debug for Blob {
    /// The entries, as a map from key to value: `{#1a2b3c4d: Float(100.0)}` (a blob holds
    /// only its keys' hashes; a store's entity, from [`Store::get`](crate::Store::get), shows
    /// the names the store knows).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.as_blob_ref(), f)
    }
}

impl PartialEq for Blob {
    /// Equal when both hold the same keys with identical values (floats compared by bit
    /// pattern, so a NaN equals itself), whatever the order of entries and the layout of
    /// bytes.
    fn eq(&self, other: &Blob) -> bool {
        self.as_blob_ref().same_entries(other.as_blob_ref())
    }
}

impl Eq for Blob {}

impl PartialEq<BlobRef<'_>> for Blob {
    fn eq(&self, other: &BlobRef<'_>) -> bool {
        self.as_blob_ref().same_entries(*other)
    }
}

impl<'a> IntoIterator for &'a Blob {
    type Item = (Key, Value<'a>);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl<K: Into<Key>, V: AsValue> Extend<(K, V)> for Blob {
    /// Sets each entry in turn, as [`Blob::set`] does: a later entry for a key replaces an
    /// earlier one, in its place. Past the first 32 entries, the rest are set at once, in
    /// O(n log n) for n keys, where setting each in turn would scan the keys for each.
    ///
    /// # Panics
    ///
    /// Where [`try_extend`](Blob::try_extend) returns an error: for an integer `f32` cannot
    /// hold exactly, or past [`MAX_BYTES`]. For entries that come from data, use `try_extend`.
    #[track_caller]
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, entries: I) {
        let mut entries = entries.into_iter();
        for (key, value) in entries.by_ref().take(bulk::SCAN_KEYS) {
            if let Err(e) = self.set(key, value) {
                panic!("Blob::extend: {e}");
            }
        }
        let rest: Vec<(Key, V)> = entries.map(|(key, value)| (key.into(), value)).collect();
        if let Err(e) = self.try_set_all(&rest) {
            panic!("Blob::extend: {e}");
        }
    }
}

impl Blob {
    /// Sets each entry in turn, as [`set`](Blob::set) does, or changes nothing: a later entry
    /// for a key replaces an earlier one, in its place. The entries are set at once, in
    /// O(n log n) for n keys, where setting each in turn would scan the keys for each.
    ///
    /// # Errors
    ///
    /// As [`set`](Blob::set), for the first entry it refuses; the blob is unchanged.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, BlobError};
    ///
    /// let mut sheet = Blob::new();
    /// sheet.try_extend([("stats.health", 30), ("stats.mana", 5)])?;
    /// assert_eq!(sheet.get_float("stats.mana"), Some(5.0));
    /// let err = sheet.try_extend([("stats.health", 1), ("gold", i32::MAX)]).unwrap_err();
    /// assert_eq!(err, BlobError::InexactInteger { integer: "2147483647".into() });
    /// assert_eq!(sheet.get_float("stats.health"), Some(30.0), "unchanged");
    /// # Ok::<(), BlobError>(())
    /// ```
    pub fn try_extend<K: Into<Key>, V: AsValue>(
        &mut self,
        entries: impl IntoIterator<Item = (K, V)>,
    ) -> Result<(), BlobError> {
        let entries: Vec<(Key, V)> =
            entries.into_iter().map(|(key, value)| (key.into(), value)).collect();
        self.try_set_all(&entries)
    }

    /// Sets the entries as setting each in turn would, or changes nothing: one search of the
    /// blob's keys through an index, the new keys appended at once. O(n log n).
    pub(crate) fn try_set_all<V: AsValue>(
        &mut self,
        entries: &[(Key, V)],
    ) -> Result<(), BlobError> {
        if entries.is_empty() {
            return Ok(());
        }
        for (_, value) in entries {
            write::stored_value(value)?;
        }
        let picks = bulk::last_wins(entries.iter().map(|&(key, _)| key));
        let values = || picks.iter().map(|&i| (entries[i].0, entries[i].1.as_value()));
        // Room for every pick as a new key, and for every payload.
        let n = self.len();
        let header = layout::header_bytes(n + picks.len()) - layout::header_bytes(n);
        self.set_all(
            header + values().map(|(_, value)| value.payload_bytes()).sum::<usize>(),
            values(),
        )?;
        Ok(())
    }
}

impl<K: Into<Key>, V: AsValue> FromIterator<(K, V)> for Blob {
    /// A blob holding the entries; a later entry for the same key replaces an earlier one.
    ///
    /// # Panics
    ///
    /// As [`extend`](Extend::extend): for entries that come from data, use
    /// [`Blob::try_extend`] on a new blob.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    ///
    /// let sheet: Blob = [("stats.health", 100.0), ("stats.mana", 200.0)].into_iter().collect();
    /// assert_eq!(sheet.get_float("stats.mana"), Some(200.0));
    /// ```
    fn from_iter<I: IntoIterator<Item = (K, V)>>(entries: I) -> Blob {
        let mut blob = Blob::new();
        blob.extend(entries);
        blob
    }
}

/// The checks of a blob's length that come before its layout's: at least a header, whole
/// words, at most [`MAX_BYTES`].
pub(crate) fn check_byte_len(byte_len: usize) -> Result<(), BlobError> {
    if byte_len < layout::header_bytes(0) {
        return Err(BlobError::Truncated { byte_len });
    }
    if !byte_len.is_multiple_of(4) {
        return Err(BlobError::UnalignedLength { byte_len });
    }
    if byte_len > MAX_BYTES {
        return Err(BlobError::TooLarge { required: byte_len as u64 });
    }
    Ok(())
}
