//! Many entries at once, in O(n log n): finding the keys of one blob in another, writing a
//! whole blob in one pass, and removing or setting many keys of a region at once.
//!
//! One entry at a time, the layout costs O(n) per write in a blob of n keys (a scan of the key
//! array, and a move of the tag and value arrays for a new key), which is right for an
//! entity's few dozen keys and quadratic for the 100,000 of a crafted document. Operations
//! that take a whole blob (import, equality, diff, merges, patches) use these instead.

use zerocopy::IntoBytes;

use super::layout::{self, HEADER_WORDS, header_bytes};
use crate::blob::{Blob, BlobError, MAX_BYTES};
use crate::key::Key;
use crate::value::Value;
use crate::value::{block_bytes, payload_len};

/// Blobs of up to this many keys are searched by a scan of their key array: for so few, a
/// scan beats sorting, and costs no allocation.
pub(crate) const SCAN_KEYS: usize = 32;

/// Where each key of a region is: a scan while it has few keys, a binary search of its keys
/// sorted (built once, in O(n log n)) past [`SCAN_KEYS`]. It holds no borrow of the region, so
/// the region may be written between lookups, as long as its first `n` keys stay put.
pub(crate) enum KeyIndex {
    /// Scan the first this many keys.
    Scan(usize),
    /// (key, position), in key order.
    Sorted(Vec<(u32, u32)>),
}

impl KeyIndex {
    /// The index of the keys of the valid region `w`.
    pub(crate) fn new(w: &[u32]) -> KeyIndex {
        let keys = layout::keys(w);
        if keys.len() <= SCAN_KEYS {
            return KeyIndex::Scan(keys.len());
        }
        // Positions fit in u32: a blob holds at most 4 GiB. Keys are unique, so sorting the
        // pairs sorts by key.
        let mut sorted: Vec<(u32, u32)> =
            keys.iter().enumerate().map(|(i, &key)| (key, i as u32)).collect();
        sorted.sort_unstable();
        KeyIndex::Sorted(sorted)
    }

    /// The position of `key` among the first keys of `w` this index was made for.
    pub(crate) fn find(&self, w: &[u32], key: Key) -> Option<usize> {
        match self {
            KeyIndex::Scan(n) => layout::position(&w[HEADER_WORDS..HEADER_WORDS + n], key.raw()),
            KeyIndex::Sorted(sorted) => sorted
                .binary_search_by_key(&key.raw(), |&(k, _)| k)
                .ok()
                .map(|i| sorted[i].1 as usize),
        }
    }
}

/// A valid region and its [`KeyIndex`]: lookups in O(log n).
pub(crate) struct Finder<'a> {
    words: &'a [u32],
    index: KeyIndex,
}

impl<'a> Finder<'a> {
    pub(crate) fn new(words: &'a [u32]) -> Finder<'a> {
        Finder { words, index: KeyIndex::new(words) }
    }

    /// Whether the region has `key`.
    pub(crate) fn contains(&self, key: Key) -> bool {
        self.index.find(self.words, key).is_some()
    }

    /// The position of `key`, if the region has it.
    pub(crate) fn find(&self, key: Key) -> Option<usize> {
        self.index.find(self.words, key)
    }

    /// The value of `key`, if the region has it.
    pub(crate) fn get(&self, key: Key) -> Option<Value<'a>> {
        self.find(key).map(|i| layout::entry(self.words, i))
    }
}

/// Writes a blob of exactly the `n` entries of `entries` (whose keys are unique) into `dst`,
/// which holds at least their header and payload blocks: keys, tags and values from the start,
/// each payload below the one before from the end (as [`layout::repack`] places them), the
/// rest zeroed. One pass: O(n) plus the payloads.
pub(crate) fn write_entries<'v>(
    dst: &mut [u32],
    n: usize,
    entries: impl IntoIterator<Item = (Key, Value<'v>)>,
) {
    let (tags, values) = (layout::tags_at(n), layout::values_at(n));
    dst[0] = n as u32;
    dst[tags..values].fill(0);
    let mut top = dst.len();
    let mut written = 0;
    for (i, (key, value)) in entries.into_iter().enumerate() {
        let ty = value.value_type();
        let raw = match value {
            Value::Bool(b) => u32::from(b),
            Value::Float(f) => f.to_bits(),
            Value::Null | Value::Tombstone => 0,
            Value::Str(_) | Value::Floats(_) => {
                top -= block_bytes(ty, payload_len(value)) as usize / 4;
                layout::write_payload(dst, top * 4, value);
                (top * 4) as u32
            }
        };
        dst[HEADER_WORDS + i] = key.raw();
        dst[tags..].as_mut_bytes()[i] = ty as u8;
        dst[values + i] = raw;
        written += 1;
    }
    debug_assert_eq!(written, n, "INVARIANT: the caller counted the entries");
    dst[1] = (top * 4) as u32;
    dst[values + n..top].fill(0);
}

/// A blob built one new key at a time, in O(1) each: the header entries and the payload
/// blocks are kept apart until [`Builder::write`] lays them out in one pass. The caller makes
/// sure no key is pushed twice. Cleared, not freed, between blobs.
#[derive(Default)]
#[cfg_attr(not(feature = "json"), allow(dead_code))] // JSON import builds blobs with it
pub(crate) struct Builder {
    /// Each entry's key, type tag, and a bool's or float's bits or the word offset of its
    /// payload block in `payload`.
    entries: Vec<[u32; 3]>,
    /// Payload blocks (length word, then data) in entry order.
    payload: Vec<u32>,
}

#[cfg_attr(not(feature = "json"), allow(dead_code))]
impl Builder {
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.payload.clear();
    }

    /// Appends `key`, which the builder must not hold yet.
    ///
    /// # Errors
    ///
    /// [`BlobError::TooLarge`] if the blob would pass [`MAX_BYTES`]; nothing is appended.
    pub(crate) fn push(&mut self, key: Key, value: Value<'_>) -> Result<(), BlobError> {
        let ty = value.value_type();
        let block = block_bytes(ty, payload_len(value));
        let required =
            header_bytes(self.entries.len() + 1) as u64 + self.payload.len() as u64 * 4 + block;
        if required > MAX_BYTES as u64 {
            return Err(BlobError::TooLarge { required });
        }
        let raw = match value {
            Value::Bool(b) => u32::from(b),
            Value::Float(f) => f.to_bits(),
            Value::Null | Value::Tombstone => 0,
            Value::Str(_) | Value::Floats(_) => {
                let at = self.payload.len();
                self.payload.resize(at + block as usize / 4, 0);
                layout::write_payload(&mut self.payload, at * 4, value);
                at as u32
            }
        };
        self.entries.push([key.raw(), u32::from(ty as u8), raw]);
        Ok(())
    }

    /// Bytes of the blob: its header and payloads, no free space.
    pub(crate) fn byte_len(&self) -> usize {
        header_bytes(self.entries.len()) + self.payload.len() * 4
    }

    /// Writes the blob into `dst`, which holds at least [`byte_len`](Builder::byte_len)
    /// bytes, as [`write_entries`] lays one out.
    pub(crate) fn write(&self, dst: &mut [u32]) {
        let n = self.entries.len();
        let (tags, values) = (layout::tags_at(n), layout::values_at(n));
        dst[0] = n as u32;
        dst[tags..values].fill(0);
        let mut top = dst.len();
        for (i, &[key, tag, raw]) in self.entries.iter().enumerate() {
            dst[HEADER_WORDS + i] = key;
            dst[tags..].as_mut_bytes()[i] = tag as u8;
            dst[values + i] = match crate::ValueType::from_tag(tag as u8) {
                Some(ty @ (crate::ValueType::Str | crate::ValueType::Floats)) => {
                    let at = raw as usize;
                    let words = block_bytes(ty, u64::from(self.payload[at])) as usize / 4;
                    top -= words;
                    dst[top..top + words].copy_from_slice(&self.payload[at..at + words]);
                    (top * 4) as u32
                }
                _ => raw,
            };
        }
        dst[1] = (top * 4) as u32;
        dst[values + n..top].fill(0);
    }

    /// The blob, in a buffer of exactly its bytes.
    pub(crate) fn to_blob(&self) -> Blob {
        let mut words = vec![0; self.byte_len() / 4];
        self.write(&mut words);
        Blob::from_valid_words(words)
    }
}

/// Removes from the valid region `w` every key of `removals` (sorted ascending), keeping the
/// order of the others, in one pass over each header array: O(n log r). Their payloads become
/// holes. Returns how many were removed.
pub(crate) fn remove_sorted(w: &mut [u32], removals: &[u32]) -> usize {
    let n = layout::len(w);
    if n <= SCAN_KEYS || removals.len() <= 1 {
        // Few keys or one removal: a move of the arrays per removal costs no more.
        return removals.iter().filter(|&&key| layout::remove(w, Key::from_raw(key))).count();
    }
    let keys = layout::keys(w);
    let kept: Vec<u32> =
        (0..n as u32).filter(|&i| removals.binary_search(&keys[i as usize]).is_err()).collect();
    let m = kept.len();
    if m == n {
        return 0;
    }
    let (t0, v0) = (layout::tags_at(n), layout::values_at(n));
    let (t1, v1) = (layout::tags_at(m), layout::values_at(m));
    // Each array moves down, lowest first, and within it every entry to a place at or below
    // its own: nothing is overwritten before it is read. The new tags end below the old
    // values (4·t1 + m <= 4·v0), the new values start above the new tags.
    for (j, &i) in kept.iter().enumerate() {
        w[HEADER_WORDS + j] = w[HEADER_WORDS + i as usize];
    }
    let bytes = w.as_mut_bytes();
    for (j, &i) in kept.iter().enumerate() {
        bytes[4 * t1 + j] = bytes[4 * t0 + i as usize];
    }
    bytes[4 * t1 + m..4 * v1].fill(0);
    for (j, &i) in kept.iter().enumerate() {
        w[v1 + j] = w[v0 + i as usize];
    }
    w[0] = m as u32;
    n - m
}

/// Sets every entry of `entries` (whose keys are unique) in the valid region `w`, which has
/// the free space for all of them (a header entry and a payload block each): the region's keys
/// are found through one [`KeyIndex`], and the new ones are appended after one move of the tag
/// and value arrays, in O(n log n) in all. Overwrites reuse a payload's place as
/// [`layout::set`] does.
pub(crate) fn set_all<'v, I>(w: &mut [u32], entries: I)
where
    I: IntoIterator<Item = (Key, Value<'v>)>,
    I::IntoIter: Clone,
{
    let index = KeyIndex::new(w);
    set_all_found(w, entries, |w, key| index.find(w, key));
}

/// [`set_all`] with the region's keys found by `find` (the position of a key among the
/// region's first keys, which stay put), such as an index the caller keeps: new keys are
/// appended in the order of `entries`.
pub(crate) fn set_all_found<'v, I>(
    w: &mut [u32],
    entries: I,
    find: impl Fn(&[u32], Key) -> Option<usize>,
) where
    I: IntoIterator<Item = (Key, Value<'v>)>,
    I::IntoIter: Clone,
{
    let entries = entries.into_iter();
    let n = layout::len(w);
    let new = entries.clone().filter(|&(key, _)| find(w, key).is_none()).count();
    if new > 0 {
        let (t0, v0) = (layout::tags_at(n), layout::values_at(n));
        let (t1, v1) = (layout::tags_at(n + new), layout::values_at(n + new));
        // The arrays move up, highest first (as `layout::set` makes room for one key).
        w.copy_within(v0..v0 + n, v1);
        let bytes = w.as_mut_bytes();
        bytes.copy_within(4 * t0..4 * t0 + n, 4 * t1);
        bytes[4 * t1 + n..4 * v1].fill(0);
        w[0] = (n + new) as u32;
    }
    // The first n keys stay put, so `find` still finds them; new keys go after them.
    let mut next = n;
    for (key, value) in entries {
        if let Some(at) = find(w, key) {
            layout::overwrite(w, at, value)
                .expect("INVARIANT: the caller made room for every entry");
        } else {
            w[HEADER_WORDS + next] = key.raw();
            layout::write_value(w, next, value);
            next += 1;
        }
    }
}

/// Of entries with these keys, the ones that setting them in turn would leave: for each key
/// its last entry, in the place of its first. Their positions, in that order; O(n log n).
pub(crate) fn last_wins(keys: impl Iterator<Item = Key>) -> Vec<usize> {
    let mut order: Vec<(u32, usize)> = keys.enumerate().map(|(i, k)| (k.raw(), i)).collect();
    order.sort_unstable();
    let mut picks: Vec<(usize, usize)> =
        order.chunk_by(|a, b| a.0 == b.0).map(|same| (same[0].1, same[same.len() - 1].1)).collect();
    picks.sort_unstable();
    picks.into_iter().map(|(_, last)| last).collect()
}
