//! The blob's byte format: the one implementation that `Blob`, `BlobRef` and the store's arena
//! slots all use.
//!
//! A blob is a region of 32-bit words (so it is 4-byte aligned and float payloads can be lent as
//! `&[f32]` without copying). The crate builds only for little-endian targets, so a word in
//! memory is a little-endian `u32` on disk and a region is written out as it is.
//!
//! ```text
//!  word:  0     1        2          2+n                   2+n+⌈n/4⌉
//!        ┌─────┬────────┬──────────┬──────────────────────┬───────────┬────────────┬─────────────────────────┐
//!        │  n  │ pstart │ keys[n]  │ tags[n] (u8, 0-pad)  │ values[n] │ ...free... │ [len│data] … [len│data] │
//!        └─────┴────────┴──────────┴──────────────────────┴───────────┴────────────┴─────────────────────────┘
//!        ─────────────────── header: grows up ──────────────────────▶              ◀─ payload: grows down ──
//!                                                                                  ^pstart          byte_len^
//! ```
//!
//! - `keys` are [`Key`](crate::Key) hashes; a lookup scans only this array.
//! - `tags` are [`ValueType`] discriminants, one byte each, padded with zeros to a whole word.
//! - `values` hold a bool (0 or 1) or an f32's bits inline, 0 for a null, or, for a string or
//!   float array, the byte offset of its payload block.
//! - A payload block is a `u32` length (bytes of a string, elements of a float array) followed by
//!   the data, padded to a whole word. Blocks are allocated top-down from `pstart`.
//! - A block that no value points at any more is a hole. A hole at `pstart` is given back at
//!   once; others are reclaimed when the region is repacked (on growth, or by `compact`).
//!
//! Functions here that read (`find`, `entry`, ...) assume a region that passed [`validate`];
//! those that write keep it valid.

use zerocopy::IntoBytes;

use crate::blob::BlobError;
use crate::key::Key;
use crate::value::{Value, ValueType, block_bytes, payload_len};

/// Words before the key array: the key count and the start of the payload region.
pub(crate) const HEADER_WORDS: usize = 2;

/// The largest blob, in bytes: offsets are `u32`s and everything is word-aligned.
pub const MAX_BYTES: usize = (u32::MAX - 3) as usize;

/// The encoding of the empty blob: no keys, payload region empty at the end of 8 bytes.
pub(crate) const EMPTY: [u32; HEADER_WORDS] = [0, 8];

/// Word index where the tag array of an `n`-key header starts.
#[inline]
pub(super) const fn tags_at(n: usize) -> usize {
    HEADER_WORDS + n
}

/// Word index where the value array of an `n`-key header starts.
#[inline]
pub(super) const fn values_at(n: usize) -> usize {
    tags_at(n) + n.div_ceil(4)
}

/// Bytes taken by the header of a blob with `n` keys.
#[inline]
pub(crate) const fn header_bytes(n: usize) -> usize {
    4 * (values_at(n) + n)
}

/// Bytes of a blob with room for `keys` entries and `payload_bytes` of payload, if that is
/// within [`MAX_BYTES`].
pub(crate) fn capacity_bytes(keys: usize, payload_bytes: usize) -> Option<usize> {
    // 9 header bytes a key at most (key, value, tag) plus 3 of tag padding and the 8 of counts.
    let header = keys.checked_mul(9)?.checked_add(11)?;
    let bytes = header.checked_add(payload_bytes.checked_next_multiple_of(4)?)?;
    (bytes <= MAX_BYTES).then(|| header_bytes(keys) + payload_bytes.next_multiple_of(4))
}

/// Not enough free space for a write; nothing was changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NeedSpace {
    /// Bytes a region needs for the write to succeed once this one is repacked into it.
    pub required: u64,
}

/// Number of keys.
#[inline]
pub(crate) fn len(w: &[u32]) -> usize {
    w[0] as usize
}

/// Byte offset of the lowest payload block (the end of free space).
#[inline]
pub(crate) fn payload_start(w: &[u32]) -> usize {
    w[1] as usize
}

/// The key array.
#[inline]
pub(crate) fn keys(w: &[u32]) -> &[u32] {
    &w[HEADER_WORDS..HEADER_WORDS + len(w)]
}

/// The key array and the tag array, back to back: the words that fix which keys a blob holds,
/// in which order, with which types (their length fixes the key count). Blobs with equal
/// layout words differ only in their values.
#[inline]
pub(crate) fn layout_words(w: &[u32]) -> &[u32] {
    &w[HEADER_WORDS..values_at(len(w))]
}

/// The key array, to rehash every key in place (a save's upgrade).
pub(crate) fn keys_mut(w: &mut [u32]) -> &mut [u32] {
    let n = len(w);
    &mut w[HEADER_WORDS..HEADER_WORDS + n]
}

#[inline]
fn tag(w: &[u32], i: usize) -> ValueType {
    let tag = w[tags_at(len(w))..].as_bytes()[i];
    match ValueType::from_tag(tag) {
        Some(ty) => ty,
        None => unreachable!("INVARIANT: validated regions hold known tags only"),
    }
}

#[inline]
fn raw_value(w: &[u32], i: usize) -> u32 {
    w[values_at(len(w)) + i]
}

/// Position of `key` in the header.
#[inline]
pub(crate) fn find(w: &[u32], key: Key) -> Option<usize> {
    position(keys(w), key.raw())
}

/// Position of `raw` in `keys`, four keys at a time.
///
/// Each group of four becomes a 4-bit match mask (one SSE compare and a movemask on x86), so a
/// lookup takes one branch per four keys instead of one per key: the exit branch, which depends
/// on where the key is, mispredicts a quarter as often. Measured on the bare scan of 15 keys
/// (see BENCHMARKS.md): a plain `position` scan took 41 ns to find each key once, this 26 ns.
#[inline]
pub(super) fn position(keys: &[u32], raw: u32) -> Option<usize> {
    let mut groups = keys.chunks_exact(4);
    let mut base = 0;
    for group in &mut groups {
        let mask = u32::from(group[0] == raw)
            | u32::from(group[1] == raw) << 1
            | u32::from(group[2] == raw) << 2
            | u32::from(group[3] == raw) << 3;
        if mask != 0 {
            return Some(base + mask.trailing_zeros() as usize);
        }
        base += 4;
    }
    groups.remainder().iter().position(|&k| k == raw).map(|i| base + i)
}

/// The type tag and the 32-bit header value of `key`'s entry: one pass that reads the key
/// count once. A typed getter compares the tag with its [`ValueType`]; [`decode`] turns the
/// pair into a [`Value`].
#[inline]
pub(crate) fn lookup(w: &[u32], key: Key) -> Option<(u8, u32)> {
    let n = len(w);
    let (keys, rest) = w[HEADER_WORDS..].split_at(n);
    let (tags, values) = rest.split_at(n.div_ceil(4));
    let i = position(keys, key.raw())?;
    Some((tags.as_bytes()[i], values[i]))
}

/// As [`lookup`], as a plain loop inlined at the caller: for a blob of a few keys (an
/// instance's overrides), where the grouped scan's setup and a call cost more than the keys.
#[inline]
pub(crate) fn lookup_few(w: &[u32], key: Key) -> Option<(u8, u32)> {
    let n = len(w);
    // The keys alone first: a miss (the common case) reads nothing else.
    let i = w.get(HEADER_WORDS..tags_at(n))?.iter().position(|&k| k == key.raw())?;
    let (t0, v0) = (tags_at(n), values_at(n));
    let header = w.get(..v0 + n)?;
    Some((header.as_bytes()[4 * t0 + i], header[v0 + i]))
}

/// Where a [`KeyCursor`](crate::query::KeyCursor) last found its key: the blob's key count and the
/// key's position. Any value is safe to pass to [`lookup_at`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Shape {
    pub keys: u32,
    pub at: u32,
}

/// The tag and header value of `key` if the blob has `shape.keys` keys and `key` at
/// `shape.at`; `None` if not (whether or not it has `key` elsewhere).
///
/// Entities made from one fixture share a layout, so this usually answers. The key, tag and
/// value are read at addresses known before the key count is loaded, so the CPU issues all
/// those loads at once; two compares then confirm them. Any `shape` is safe: it is checked
/// against the blob, and keys are unique, so a stale one never gives another key's entry.
#[inline]
pub(crate) fn lookup_at(w: &[u32], key: Key, shape: Shape) -> Option<(u8, u32)> {
    Probe::new(shape)?.entry(w, key)
}

/// A [`Shape`] with the header offsets it implies computed once: a loop over blobs of one
/// layout (a column) holds it as a constant and tries each blob with two compares.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Probe {
    keys: u32,
    // INVARIANT: `key_word < header_words`, `tag_byte < 4 * header_words` and
    // `value_word < header_words`: the offsets of entry `at < keys` of a `keys`-key header.
    key_word: usize,
    tag_byte: usize,
    value_word: usize,
    header_words: usize,
}

impl Probe {
    /// The probe that no blob passes (its header would be the whole address space).
    pub(crate) const NONE: Probe =
        Probe { keys: 0, key_word: 0, tag_byte: 0, value_word: 0, header_words: usize::MAX };

    /// The probe of `shape`; `None` if no blob has it (`at` is not below `keys`).
    #[inline]
    pub(crate) fn new(shape: Shape) -> Option<Probe> {
        let (n, at) = (shape.keys as usize, shape.at as usize);
        if at >= n {
            return None;
        }
        let (t0, v0) = (tags_at(n), values_at(n));
        Some(Probe {
            keys: shape.keys,
            key_word: HEADER_WORDS + at,
            tag_byte: 4 * t0 + at,
            value_word: v0 + at,
            header_words: v0 + n,
        })
    }

    /// The tag and header value of `key` if the blob has this probe's shape and `key` where
    /// it says (as [`lookup_at`]).
    #[inline]
    pub(crate) fn entry(self, w: &[u32], key: Key) -> Option<(u8, u32)> {
        let header = w.get(..self.header_words)?;
        if header[0] == self.keys && header[self.key_word] == key.raw() {
            // The tag byte read from its word (little-endian), inside the header: no bounds
            // check of the tag bytes of their own.
            Some((header.as_bytes()[self.tag_byte], header[self.value_word]))
        } else {
            None
        }
    }
}

/// As [`lookup`], and the shape `key` was found in, for [`lookup_at`] to try next time.
#[inline]
pub(crate) fn lookup_shape(w: &[u32], key: Key) -> Option<(u8, u32, Shape)> {
    let n = len(w);
    let (t0, v0) = (tags_at(n), values_at(n));
    // One bounds check for the whole header: the arrays cut from it have known lengths.
    let header = &w[..v0 + n];
    let i = position(&header[HEADER_WORDS..t0], key.raw())?;
    let tags = &header[t0..v0].as_bytes()[..n];
    let values = &header[v0..];
    // n < 2^30: a blob holds at most 4 GiB.
    Some((tags[i], values[i], Shape { keys: n as u32, at: i as u32 }))
}

/// The payload block of entry `i`, as (byte offset, bytes), if its value has one.
pub(super) fn block(w: &[u32], i: usize) -> Option<(usize, usize)> {
    let ty = tag(w, i);
    match ty {
        ValueType::Bool | ValueType::Float | ValueType::Null | ValueType::Tombstone => None,
        ValueType::Str | ValueType::Floats => {
            let offset = raw_value(w, i) as usize;
            let len = u64::from(w[offset / 4]);
            Some((offset, block_bytes(ty, len) as usize))
        }
    }
}

/// Whether entry `i` of `a` and entry `i` of `b` hold identical values (as
/// [`Value::is_identical`]: the same type and bits), compared as raw words without decoding.
pub(crate) fn same_entry(a: &[u32], b: &[u32], i: usize) -> bool {
    let ty = tag(a, i);
    if ty != tag(b, i) {
        return false;
    }
    let (ra, rb) = (raw_value(a, i), raw_value(b, i));
    match ty {
        ValueType::Bool | ValueType::Float | ValueType::Null | ValueType::Tombstone => ra == rb,
        ValueType::Str | ValueType::Floats => {
            let (da, db) = (ra as usize / 4, rb as usize / 4);
            let len = a[da] as usize;
            if len != b[db] as usize {
                return false;
            }
            if ty == ValueType::Str {
                // Padding bytes past the string's end are not compared.
                let words = len.div_ceil(4);
                a[da + 1..=da + words].as_bytes()[..len] == b[db + 1..=db + words].as_bytes()[..len]
            } else {
                a[da + 1..=da + len] == b[db + 1..=db + len]
            }
        }
    }
}

/// Appends to `out` the positions of the entries of `a` and `b` (valid blobs with the same
/// key array) whose values differ (as [`same_entry`] tells). When their tags match too (the
/// same layout: entities of one fixture), a float or boolean is one word compared, and only
/// strings and arrays compare payloads; when their payload regions are the same words too (a
/// change of inline values only), an entry with the same value word is the same.
pub(crate) fn differing_entries(a: &[u32], b: &[u32], out: &mut Vec<u32>) {
    let n = len(a) as u32;
    if layout_words(a) != layout_words(b) {
        out.extend((0..n).filter(|&i| !same_entry(a, b, i as usize)));
        return;
    }
    let tags = &a[tags_at(n as usize)..].as_bytes()[..n as usize];
    let (va, vb) = (raw_values(a), raw_values(b));
    let same_payloads =
        a.len() == b.len() && a[payload_start(a) / 4..] == b[payload_start(b) / 4..];
    for (i, ((&tag, &ra), &rb)) in tags.iter().zip(va).zip(vb).enumerate() {
        let scalar = tag == ValueType::Float as u8 || tag == ValueType::Bool as u8;
        let differs =
            if scalar || (same_payloads && ra == rb) { ra != rb } else { !same_entry(a, b, i) };
        if differs {
            out.push(i as u32);
        }
    }
}

/// The value of entry `i`.
#[inline]
pub(crate) fn entry(w: &[u32], i: usize) -> Value<'_> {
    decode(w, tag(w, i) as u8, raw_value(w, i))
}

/// The value with type tag `tag` and 32-bit header value `raw`.
// Always: a few compares that every reader runs per value; left to LLVM, the export plans'
// loop called it out of line once the text formats moved to their own module (+1.2%
// instructions exporting 10,000 sheets, callgrind).
#[allow(clippy::inline_always)]
#[inline(always)]
pub(crate) fn decode(w: &[u32], tag: u8, raw: u32) -> Value<'_> {
    // Inline types first, with plain compares: cheaper than a jump table on the hot path.
    if tag == ValueType::Float as u8 {
        return Value::Float(f32::from_bits(raw));
    }
    if tag == ValueType::Bool as u8 {
        return Value::Bool(raw != 0);
    }
    if tag == ValueType::Str as u8 {
        // Safe Rust re-checks UTF-8 here (a few ns for a short string); `validate` guarantees
        // it passes.
        match std::str::from_utf8(str_bytes(w, raw)) {
            Ok(s) => Value::Str(s),
            Err(_) => unreachable!("INVARIANT: validated regions hold UTF-8 strings"),
        }
    } else if tag == ValueType::Null as u8 {
        Value::Null
    } else if tag == ValueType::Tombstone as u8 {
        Value::Tombstone
    } else {
        debug_assert_eq!(tag, ValueType::Floats as u8, "INVARIANT: validated tags");
        let data = raw as usize / 4 + 1;
        let len = w[data - 1] as usize;
        let words: &[u32] = &w[data..data + len];
        Value::Floats(zerocopy::transmute_ref!(words))
    }
}

/// The 32-bit header values of every entry, in entry order (see [`decode`]).
#[inline]
#[cfg_attr(not(feature = "json"), allow(dead_code))] // Used by the JSON export plans.
pub(crate) fn raw_values(w: &[u32]) -> &[u32] {
    let n = len(w);
    &w[values_at(n)..values_at(n) + n]
}

/// The bytes of the string whose header value is `raw`: [`decode`] without its UTF-8 re-check,
/// for a writer that copies them as they are and for a compare with known text (a validated
/// region holds UTF-8).
#[inline]
pub(crate) fn str_bytes(w: &[u32], raw: u32) -> &[u8] {
    let data = raw as usize / 4 + 1;
    let len = w[data - 1] as usize;
    &w[data..data + len.div_ceil(4)].as_bytes()[..len]
}

/// Bytes of the payload region that live values use.
fn live_payload_bytes(w: &[u32]) -> usize {
    (0..len(w)).filter_map(|i| block(w, i)).map(|(_, bytes)| bytes).sum()
}

/// Bytes the blob needs if repacked: header plus live payloads.
pub(crate) fn used_bytes(w: &[u32]) -> usize {
    header_bytes(len(w)) + live_payload_bytes(w)
}

/// Bytes between the header and the payload region.
pub(crate) fn free_bytes(w: &[u32]) -> usize {
    payload_start(w) - header_bytes(len(w))
}

/// Bytes of the payload region that no value points at.
pub(crate) fn hole_bytes(w: &[u32]) -> usize {
    w.len() * 4 - payload_start(w) - live_payload_bytes(w)
}

/// The region's bytes from first to last as `(kind, offset, len)`: the header, the free
/// space (if any), then each payload block and each hole between them in address order.
/// Adjacent holes are merged; empty regions are left out.
pub(crate) fn regions(w: &[u32]) -> Vec<(RegionKind, usize, usize)> {
    let header = header_bytes(len(w));
    let mut out = vec![(RegionKind::Header, 0, header)];
    let start = payload_start(w);
    if start > header {
        out.push((RegionKind::Free, header, start - header));
    }
    let mut blocks: Vec<(usize, usize, Key)> = (0..len(w))
        .filter_map(|i| {
            block(w, i).map(|(offset, bytes)| (offset, bytes, Key::from_raw(keys(w)[i])))
        })
        .collect();
    blocks.sort_unstable_by_key(|&(offset, ..)| offset);
    let mut at = start;
    for (offset, bytes, key) in blocks {
        // INVARIANT (validate): blocks lie inside the payload region and are disjoint.
        if offset > at {
            out.push((RegionKind::Hole, at, offset - at));
        }
        out.push((RegionKind::Payload(key), offset, bytes));
        at = offset + bytes;
    }
    if w.len() * 4 > at {
        out.push((RegionKind::Hole, at, w.len() * 4 - at));
    }
    out
}

/// What a stretch of a blob's buffer holds: see [`BlobRef::regions`](crate::BlobRef::regions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegionKind {
    /// Counts, keys, tags and inline values.
    Header,
    /// Unused bytes between the header and the payload region: room to grow in place.
    Free,
    /// The payload block (length and data) of the string or float array of this key.
    Payload(Key),
    /// Payload bytes no value points at: left by an overwrite or a removal, reclaimed by
    /// `compact` or the next regrowth.
    Hole,
}

/// Writes the empty blob over the whole region: no keys, all of it free.
pub(crate) fn init_empty(w: &mut [u32]) {
    w[0] = 0;
    w[1] = (w.len() * 4) as u32;
}

/// Sets `key` to `value`, reusing the old payload's place when the new one fits in it.
///
/// # Errors
///
/// [`NeedSpace`] if the free space is too small; the region is then unchanged.
pub(crate) fn set(w: &mut [u32], key: Key, value: Value<'_>) -> Result<(), NeedSpace> {
    let n = len(w);
    let free = free_bytes(w) as u64;
    let new_block = block_bytes(value.value_type(), payload_len(value));
    let Some(i) = find(w, key) else {
        let growth = (header_bytes(n + 1) - header_bytes(n)) as u64;
        if growth + new_block > free {
            return Err(NeedSpace { required: used_bytes(w) as u64 + growth + new_block });
        }
        push_entry(w, key);
        write_value(w, n, value);
        return Ok(());
    };
    overwrite(w, i, value)
}

/// Sets entry `i` to `value`, reusing the old payload's place when the new one fits in it.
///
/// # Errors
///
/// [`NeedSpace`] if the free space is too small; the region is then unchanged.
pub(super) fn overwrite(w: &mut [u32], i: usize, value: Value<'_>) -> Result<(), NeedSpace> {
    let free = free_bytes(w) as u64;
    let new_block = block_bytes(value.value_type(), payload_len(value));
    let old = block(w, i);
    if let Some((offset, old_bytes)) = old
        && new_block > 0
        && new_block <= old_bytes as u64
    {
        // Overwrite in place; the old block's tail becomes a hole.
        write_payload(w, offset, value);
        write_entry(w, i, value.value_type(), offset as u32);
        return Ok(());
    }
    // A block at the bottom of the payload region is given back before allocating.
    let reclaimable = match old {
        Some((offset, bytes)) if offset == payload_start(w) => bytes as u64,
        _ => 0,
    };
    if new_block > free + reclaimable {
        return Err(NeedSpace { required: used_bytes(w) as u64 + new_block });
    }
    if let Some(old) = old {
        release(w, old);
    }
    write_value(w, i, value);
    Ok(())
}

/// Removes `key`, keeping the order of the other entries. Returns whether it was there.
pub(crate) fn remove(w: &mut [u32], key: Key) -> bool {
    let Some(i) = find(w, key) else {
        return false;
    };
    if let Some(old) = block(w, i) {
        release(w, old);
    }
    let n = len(w);
    let (t0, v0) = (tags_at(n), values_at(n));
    let (t1, v1) = (tags_at(n - 1), values_at(n - 1));
    // Every array moves down, lowest first, so nothing is overwritten before it has moved:
    // the new key array ends at t1 < t0, the new tag array ends at v1 < v0.
    w.copy_within(HEADER_WORDS + i + 1..HEADER_WORDS + n, HEADER_WORDS + i);
    let bytes = w.as_mut_bytes();
    bytes.copy_within(4 * t0..4 * t0 + i, 4 * t1);
    bytes.copy_within(4 * t0 + i + 1..4 * t0 + n, 4 * t1 + i);
    bytes[4 * t1 + n - 1..4 * v1].fill(0);
    w.copy_within(v0..v0 + i, v1);
    w.copy_within(v0 + i + 1..v0 + n, v1 + i);
    w[0] = (n - 1) as u32;
    true
}

/// Removes the entries at `positions` (ascending, each below the key count), keeping the order
/// of the others, in one pass however many go: their payload blocks become holes, which a
/// repack drops.
pub(crate) fn remove_at(w: &mut [u32], positions: &[usize]) {
    if positions.is_empty() {
        return;
    }
    let n = len(w);
    let m = n - positions.len();
    let (t0, v0) = (tags_at(n), values_at(n));
    let (t1, v1) = (tags_at(m), values_at(m));
    // The kept indices, ascending: each array moves down, lowest entry first, as in `remove`,
    // so every entry is read before anything is written over it (t1 <= t0, v1 <= v0).
    let kept = || {
        let mut next = positions.iter().peekable();
        (0..n).filter(move |&i| next.next_if_eq(&&i).is_none())
    };
    for (j, i) in kept().enumerate() {
        w[HEADER_WORDS + j] = w[HEADER_WORDS + i];
    }
    let bytes = w.as_mut_bytes();
    for (j, i) in kept().enumerate() {
        bytes[4 * t1 + j] = bytes[4 * t0 + i];
    }
    bytes[4 * t1 + m..4 * v1].fill(0);
    for (j, i) in kept().enumerate() {
        w[v1 + j] = w[v0 + i];
    }
    w[0] = m as u32;
}

/// Moves the payload region down against the header, so that the blob's free space comes last,
/// and returns the words the blob takes then: `w[..returned]` is a valid blob holding the same
/// entries (holes in the payload region stay: [`repack`] drops them).
pub(crate) fn shrink(w: &mut [u32]) -> usize {
    let n = len(w);
    let (header, start) = (header_bytes(n) / 4, payload_start(w) / 4);
    let free = start - header;
    if free == 0 {
        return w.len();
    }
    w.copy_within(start.., header);
    let values = values_at(n);
    for i in 0..n {
        if matches!(tag(w, i), ValueType::Str | ValueType::Floats) {
            w[values + i] -= (free * 4) as u32;
        }
    }
    w[1] = (header * 4) as u32;
    w.len() - free
}

/// Copies the blob in `src` into `dst`, packing the live payloads against `dst`'s end in entry
/// order and zeroing the free space: holes are dropped.
///
/// `dst` must hold at least [`used_bytes`]`(src)` bytes and must not be `src`.
pub(crate) fn repack(src: &[u32], dst: &mut [u32]) {
    let n = len(src);
    let header = header_bytes(n) / 4;
    dst[..header].copy_from_slice(&src[..header]);
    let mut top = dst.len();
    let values = values_at(n);
    for i in 0..n {
        if let Some((offset, bytes)) = block(src, i) {
            let (from, words) = (offset / 4, bytes / 4);
            top -= words;
            dst[top..top + words].copy_from_slice(&src[from..from + words]);
            dst[values + i] = (top * 4) as u32;
        }
    }
    dst[1] = (top * 4) as u32;
    dst[header..top].fill(0);
}

/// Frees a payload block: at the bottom of the region it is given back, elsewhere it becomes a
/// hole.
fn release(w: &mut [u32], (offset, bytes): (usize, usize)) {
    if offset == payload_start(w) {
        w[1] = (offset + bytes) as u32;
    }
}

/// Appends `key` as entry `n`, moving the tag and value arrays up to make room. The caller has
/// checked there is room and writes the entry's tag and value next.
fn push_entry(w: &mut [u32], key: Key) {
    let n = len(w);
    let (t0, v0) = (tags_at(n), values_at(n));
    let (t1, v1) = (tags_at(n + 1), values_at(n + 1));
    // Every array moves up, highest first: the values land above the old tags' end, the tags
    // land where the old values started, the new key lands where the old tags started.
    w.copy_within(v0..v0 + n, v1);
    w.copy_within(t0..t0 + n.div_ceil(4), t1);
    if n.is_multiple_of(4) {
        // A new tag word: clear whatever free space held, so its padding is zero.
        w[t1 + n / 4] = 0;
    }
    w[HEADER_WORDS + n] = key.raw();
    w[0] = (n + 1) as u32;
}

/// Writes `value` as entry `i`, allocating its payload block below the payload region if it
/// has one. The caller has checked there is room.
pub(super) fn write_value(w: &mut [u32], i: usize, value: Value<'_>) {
    let ty = value.value_type();
    let raw = match value {
        Value::Bool(b) => u32::from(b),
        Value::Float(f) => f.to_bits(),
        Value::Null | Value::Tombstone => 0,
        Value::Str(_) | Value::Floats(_) => {
            let bytes = block_bytes(ty, payload_len(value)) as usize;
            let offset = payload_start(w) - bytes;
            write_payload(w, offset, value);
            w[1] = offset as u32;
            offset as u32
        }
    };
    write_entry(w, i, ty, raw);
}

fn write_entry(w: &mut [u32], i: usize, ty: ValueType, raw: u32) {
    let n = len(w);
    w[tags_at(n)..].as_mut_bytes()[i] = ty as u8;
    w[values_at(n) + i] = raw;
}

/// Writes the payload block of a string or float array at byte `offset`, zeroing its padding.
pub(super) fn write_payload(w: &mut [u32], offset: usize, value: Value<'_>) {
    let data = offset / 4 + 1;
    w[data - 1] = payload_len(value) as u32;
    match value {
        Value::Str(s) => {
            let words = &mut w[data..data + s.len().div_ceil(4)];
            let bytes = words.as_mut_bytes();
            bytes[..s.len()].copy_from_slice(s.as_bytes());
            bytes[s.len()..].fill(0);
        }
        Value::Floats(f) => {
            let floats: &[u32] = zerocopy::transmute_ref!(f);
            w[data..data + f.len()].copy_from_slice(floats);
        }
        Value::Bool(_) | Value::Float(_) | Value::Null | Value::Tombstone => {}
    }
}

/// Blobs with up to this many keys are validated without allocating: their uniqueness and
/// overlap checks, when the fast proofs fail, sort arrays on the stack.
const STACK_ENTRIES: usize = 32;

/// Reusable state for [`validate`], so that validating many blobs allocates a bounded number
/// of times, not once per blob: buffers for the sorts of blobs with more than
/// [`STACK_ENTRIES`] keys, the key array last proven free of duplicates, and the layout (keys
/// and tags) last accepted whole, with the entries whose values a blob of it must check.
pub(crate) struct Scratch {
    keys: Vec<(u32, u32)>,
    blocks: Vec<(u32, u32, u32)>,
    // INVARIANT: `unique_keys[..unique_len]` holds no key twice. Inline, so that a scratch
    // made for one blob allocates nothing.
    unique_keys: [u32; STACK_ENTRIES],
    unique_len: usize,
    // INVARIANT: `layout[..layout_len]` (0: none) are the key and tag words of a blob that
    // `validate` accepted: a blob with these words has unique keys and known tags, and only
    // the values of its entries in `limits` and `payloads` can be wrong (a float is any 32
    // bits). `limits[..limit_len]`: each entry of an inline type but float, with the largest
    // value its type takes (a boolean 1, a null 0); `payloads[..payload_len]`: each entry
    // with a payload block, in entry order, and whether it is a string.
    layout: [u32; LAYOUT_WORDS],
    layout_len: usize,
    layout_keys: usize,
    limits: [(u8, u8); STACK_ENTRIES],
    limit_len: usize,
    payloads: [(u8, bool); STACK_ENTRIES],
    payload_len: usize,
}

/// The key and tag words of the largest layout a [`Scratch`] keeps.
const LAYOUT_WORDS: usize = STACK_ENTRIES + STACK_ENTRIES / 4;

impl Default for Scratch {
    fn default() -> Scratch {
        Scratch {
            keys: Vec::new(),
            blocks: Vec::new(),
            unique_keys: [0; STACK_ENTRIES],
            unique_len: 0,
            layout: [0; LAYOUT_WORDS],
            layout_len: 0,
            layout_keys: 0,
            limits: [(0, 0); STACK_ENTRIES],
            limit_len: 0,
            payloads: [(0, false); STACK_ENTRIES],
            payload_len: 0,
        }
    }
}

/// `n` entries of `stack`, or of `heap` resized to `n` when the stack is too small.
fn sort_space<'a, T: Copy + Default>(
    stack: &'a mut [T],
    heap: &'a mut Vec<T>,
    n: usize,
) -> &'a mut [T] {
    if n <= stack.len() {
        &mut stack[..n]
    } else {
        heap.clear();
        heap.resize(n, T::default());
        heap
    }
}

/// Checks that `w` is a well-formed blob: every count, offset and length is in bounds, tags are
/// known, booleans are 0 or 1, strings are UTF-8, keys are unique and payloads do not overlap.
///
/// `w` is untrusted: this reads only through checked accesses and never panics.
///
/// One pass over the entries checks each one and proves the common cases of the two global
/// properties without sorting: payload blocks laid out top-down in entry order (as `set` and
/// `repack` write them) are disjoint if each ends where the one before starts or lower, and a
/// key array equal to the last one proven unique (entities made from one fixture share their
/// keys) is unique. Other blobs take [`keys_unique`] and [`blocks_disjoint`], which sort: that
/// path also finds the exact pair an error names.
///
/// # Errors
///
/// The first problem found, as a [`BlobError`] naming the entry or byte: entries in order,
/// then duplicate keys, then overlapping payloads.
#[inline]
pub(crate) fn validate(w: &[u32], scratch: &mut Scratch) -> Result<(), BlobError> {
    match known_layout(w, scratch) {
        Some(true) => Ok(()),
        Some(false) => blocks_disjoint(w, scratch),
        None => validate_all(w, scratch),
    }
}

/// [`validate`] of a blob whose layout (key and tag words) is the one `scratch` last accepted,
/// which proves its keys unique and its tags known: its header's bounds and the values of its
/// entries that are not floats are checked, without naming what is wrong. `Some(top_down)` if
/// all is right (`top_down`: its payload blocks lie top-down in entry order), `None` if not, or
/// for another layout: then [`validate_all`] checks it whole, and names the first error.
#[inline]
fn known_layout(w: &[u32], scratch: &Scratch) -> Option<bool> {
    let n = scratch.layout_keys;
    if scratch.layout_len == 0 || w.len() * 4 > MAX_BYTES {
        return None;
    }
    let &[count, payload_start] = w.first_chunk()?;
    let header_end = values_at(n) + n;
    if count as usize != n
        || w.get(HEADER_WORDS..values_at(n))? != &scratch.layout[..scratch.layout_len]
        || !payload_start.is_multiple_of(4)
        || (payload_start as usize) < header_end * 4
        || payload_start as usize > w.len() * 4
    {
        return None;
    }
    let values = w.get(values_at(n)..header_end)?;
    let mut over = false;
    for &(i, limit) in &scratch.limits[..scratch.limit_len] {
        over |= *values.get(usize::from(i))? > u32::from(limit);
    }
    let (mut floor, mut top_down) = (w.len(), true);
    for &(i, text) in &scratch.payloads[..scratch.payload_len] {
        let raw = *values.get(usize::from(i))?;
        if !raw.is_multiple_of(4) || raw < payload_start {
            return None;
        }
        // In words: the block's length word, its data, and the word past it.
        let at = raw as usize / 4;
        let len = *w.get(at)? as usize;
        let end = at.checked_add(1 + if text { len.div_ceil(4) } else { len })?;
        let data = w.get(at + 1..end)?;
        if text && check_utf8(data, data.as_bytes().get(..len)?).is_err() {
            return None;
        }
        top_down &= end <= floor;
        floor = at;
    }
    (!over).then_some(top_down)
}

/// [`validate`] of any blob, which records its layout in `scratch` when it accepts it.
#[inline(never)]
fn validate_all(w: &[u32], scratch: &mut Scratch) -> Result<(), BlobError> {
    let byte_len = w.len() * 4;
    if byte_len > MAX_BYTES {
        return Err(BlobError::TooLarge { required: byte_len as u64 });
    }
    // `let else`, not `ok_or`: an error built on the good path costs a drop per blob.
    let Some(([n, payload_start], _)) = w.split_first_chunk().map(|(h, rest)| (*h, rest)) else {
        return Err(BlobError::Truncated { byte_len });
    };
    // n < 2^32 and byte_len <= MAX_BYTES, so none of this overflows u64.
    let n64 = u64::from(n);
    let header_end = 4 * (HEADER_WORDS as u64 + 2 * n64 + n64.div_ceil(4));
    if header_end > byte_len as u64 {
        return Err(BlobError::HeaderOutOfBounds { keys: n, header_end, byte_len });
    }
    if payload_start % 4 != 0
        || u64::from(payload_start) < header_end
        || payload_start as usize > byte_len
    {
        return Err(BlobError::BadPayloadStart { payload_start, header_end, byte_len });
    }
    // The header fits, so these slices are in bounds.
    let n = n as usize;
    let keys = &w[HEADER_WORDS..HEADER_WORDS + n];
    let tags = &w[tags_at(n)..values_at(n)].as_bytes()[..n];
    let values = &w[values_at(n)..values_at(n) + n];
    let mut entries = Entries {
        w,
        payload_start,
        byte_len,
        // Blocks so far are disjoint if each ended at or below the start of the one before
        // it: `floor` is the lowest start so far (byte_len fits in u32: it is at most
        // MAX_BYTES).
        floor: byte_len as u32,
        top_down: true,
    };

    for (i, ((&key, &tag), &raw)) in keys.iter().zip(tags).zip(values).enumerate() {
        let ty = ValueType::from_tag(tag).ok_or_else(|| BlobError::UnknownTag {
            index: i,
            key: Key::from_raw(key),
            tag,
        })?;
        entries.check(i, key, ty, raw)?;
    }

    if keys != &scratch.unique_keys[..scratch.unique_len] {
        keys_unique(keys, scratch)?;
        if let Some(cache) = scratch.unique_keys.get_mut(..n) {
            cache.copy_from_slice(keys);
            scratch.unique_len = n;
        }
    }
    if !entries.top_down {
        blocks_disjoint(w, scratch)?;
    }
    let header = layout_words(w);
    if let Some(layout) = scratch.layout.get_mut(..header.len())
        && n <= STACK_ENTRIES
    {
        layout.copy_from_slice(header);
        (scratch.layout_len, scratch.layout_keys) = (header.len(), n);
        (scratch.limit_len, scratch.payload_len) = (0, 0);
        for (i, &tag) in tags.iter().enumerate() {
            // n <= STACK_ENTRIES: the index fits in a byte. Every tag is known (checked above).
            let i = i as u8;
            match ValueType::from_tag(tag) {
                Some(ValueType::Float) | None => {}
                Some(ValueType::Bool) => {
                    scratch.limits[scratch.limit_len] = (i, 1);
                    scratch.limit_len += 1;
                }
                Some(ValueType::Null | ValueType::Tombstone) => {
                    scratch.limits[scratch.limit_len] = (i, 0);
                    scratch.limit_len += 1;
                }
                Some(ty @ (ValueType::Str | ValueType::Floats)) => {
                    scratch.payloads[scratch.payload_len] = (i, ty == ValueType::Str);
                    scratch.payload_len += 1;
                }
            }
        }
    }
    Ok(())
}

/// What [`validate`] knows of a blob while it checks its entries' values.
struct Entries<'a> {
    w: &'a [u32],
    payload_start: u32,
    byte_len: usize,
    floor: u32,
    top_down: bool,
}

impl Entries<'_> {
    /// Checks the value of entry `i` (key `key`, type `ty`, value word `raw`): a boolean is 0
    /// or 1, a payload lies in bounds (and a string's is UTF-8); notes whether the payloads
    /// are still top-down.
    // Always: called in two loops of `validate`, and out of line it costs a load a third
    // more instructions (callgrind, `goal_cost view`: 637 -> 784 a sheet).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn check(&mut self, i: usize, key: u32, ty: ValueType, raw: u32) -> Result<(), BlobError> {
        let (w, payload_start, byte_len) = (self.w, self.payload_start, self.byte_len);
        match ty {
            ValueType::Bool if raw > 1 => {
                Err(BlobError::InvalidBool { index: i, key: Key::from_raw(key), raw })
            }
            ValueType::Null if raw != 0 => {
                Err(BlobError::InvalidNull { index: i, key: Key::from_raw(key), raw })
            }
            ValueType::Tombstone if raw != 0 => {
                Err(BlobError::InvalidTombstone { index: i, key: Key::from_raw(key), raw })
            }
            ValueType::Bool | ValueType::Float | ValueType::Null | ValueType::Tombstone => Ok(()),
            ValueType::Str | ValueType::Floats => {
                let out_of_bounds = |end: u64| BlobError::PayloadOutOfBounds {
                    index: i,
                    key: Key::from_raw(key),
                    offset: raw,
                    end,
                    payload_start,
                    byte_len,
                };
                if !raw.is_multiple_of(4) || raw < payload_start {
                    return Err(out_of_bounds(u64::from(raw) + 4));
                }
                let len =
                    *w.get(raw as usize / 4).ok_or_else(|| out_of_bounds(u64::from(raw) + 4))?;
                let end = u64::from(raw) + block_bytes(ty, u64::from(len));
                if end > byte_len as u64 {
                    return Err(out_of_bounds(end));
                }
                if ty == ValueType::Str {
                    let start = raw as usize + 4;
                    let data = &w[start / 4..end as usize / 4];
                    check_utf8(data, &w.as_bytes()[start..start + len as usize]).map_err(
                        |valid_up_to| BlobError::InvalidUtf8 {
                            index: i,
                            key: Key::from_raw(key),
                            offset: raw,
                            valid_up_to,
                        },
                    )?;
                }
                // end <= byte_len, so it fits in u32.
                self.top_down &= end as u32 <= self.floor;
                self.floor = raw;
                Ok(())
            }
        }
    }
}

/// Checks that `text` is UTF-8. `words` are the words that hold it (with its padding): if no
/// byte of them has its top bit set, the text is ASCII (an OR over words, which vectorizes);
/// else (non-ASCII text, or padding that is not zero) the text itself is checked. The error is
/// the length of the longest valid prefix.
#[inline]
fn check_utf8(words: &[u32], text: &[u8]) -> Result<(), usize> {
    if words.iter().fold(0, |acc, &word| acc | word) & 0x8080_8080 == 0 {
        return Ok(());
    }
    check_non_ascii(text)
}

/// [`check_utf8`] of a text that is not ASCII: out of line, so that the ASCII test inlined
/// in a loop keeps the loop's registers.
#[cold]
#[inline(never)]
fn check_non_ascii(text: &[u8]) -> Result<(), usize> {
    std::str::from_utf8(text).map(|_| ()).map_err(|e| e.valid_up_to())
}

/// Checks that `keys` holds no key twice. Up to 64 keys: a 64-bit filter on each key's top
/// bits (keys are hashes), with a scan of the keys before it only when its bit was already
/// set. More, or a duplicate found: a sort, which names the pair (the lowest duplicated key,
/// its first two positions).
fn keys_unique(keys: &[u32], scratch: &mut Scratch) -> Result<(), BlobError> {
    if keys.len() <= 64 {
        let mut seen = 0_u64;
        let mut clash = false;
        for (i, &key) in keys.iter().enumerate() {
            let bit = 1_u64 << (key >> 26);
            if seen & bit != 0 && keys[..i].contains(&key) {
                clash = true;
                break;
            }
            seen |= bit;
        }
        if !clash {
            return Ok(());
        }
    }
    let mut key_stack = [(0, 0); STACK_ENTRIES];
    let sorted_keys = sort_space(&mut key_stack, &mut scratch.keys, keys.len());
    for (slot, (i, &key)) in sorted_keys.iter_mut().zip(keys.iter().enumerate()) {
        *slot = (key, i as u32);
    }
    sorted_keys.sort_unstable();
    for pair in sorted_keys.windows(2) {
        if pair[0].0 == pair[1].0 {
            let (first, second) = (pair[0].1 as usize, pair[1].1 as usize);
            return Err(BlobError::DuplicateKey { key: Key::from_raw(pair[0].0), first, second });
        }
    }
    Ok(())
}

/// Checks that no two payload blocks of `w` overlap, by sorting them by offset. `w` passed
/// the entry checks of [`validate`]: every block is in bounds.
fn blocks_disjoint(w: &[u32], scratch: &mut Scratch) -> Result<(), BlobError> {
    let n = len(w);
    let mut block_stack = [(0, 0, 0); STACK_ENTRIES];
    let blocks = sort_space(&mut block_stack, &mut scratch.blocks, n);
    let mut count = 0;
    for i in 0..n {
        if let Some((offset, bytes)) = block(w, i) {
            blocks[count] = (offset as u32, (offset + bytes) as u32, i as u32);
            count += 1;
        }
    }
    let blocks = &mut blocks[..count];
    blocks.sort_unstable();
    for pair in blocks.windows(2) {
        let ((_, first_end, first), (second_start, _, second)) = (pair[0], pair[1]);
        if second_start < first_end {
            let (first, second) = (first as usize, second as usize);
            return Err(BlobError::OverlappingPayloads { first, second, offset: second_start });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fresh(bytes: usize) -> Vec<u32> {
        let mut w = vec![0xdead_beef; bytes / 4];
        init_empty(&mut w);
        w
    }

    fn check(w: &[u32]) {
        validate(w, &mut Scratch::default()).expect("region stays valid");
    }

    #[test]
    fn a_known_layout_checks_only_the_values_that_can_be_wrong() {
        let mut w = fresh(256);
        set(&mut w, Key::from_raw(1), Value::Str("name")).unwrap();
        set(&mut w, Key::from_raw(2), Value::Float(2.0)).unwrap();
        set(&mut w, Key::from_raw(3), Value::Bool(true)).unwrap();
        set(&mut w, Key::from_raw(4), Value::Floats(&[1.0, 2.0])).unwrap();
        let used = shrink(&mut w);
        let w = &w[..used];
        let mut scratch = Scratch::default();
        assert_eq!(validate(w, &mut scratch), Ok(()));
        assert_eq!(scratch.layout_len, 4 + 1, "four keys and one word of tags");
        assert_eq!(&scratch.limits[..scratch.limit_len], [(2, 1)], "the boolean");
        assert_eq!(&scratch.payloads[..scratch.payload_len], [(0, true), (3, false)]);
        // The same layout, each value broken in turn: the warm scratch finds what a cold one
        // does.
        let values = values_at(4);
        for (entry, bad) in [(0, 3), (2, 2), (3, u32::MAX - 3), (1, 0x7fc0_0000)] {
            let mut broken = w.to_vec();
            broken[values + entry] = bad;
            let cold = validate(&broken, &mut Scratch::default());
            assert_eq!(validate(&broken, &mut scratch), cold, "entry {entry}");
            assert_eq!(cold.is_ok(), entry == 1, "entry {entry}: {cold:?}");
        }
        // A string that is not UTF-8.
        let mut broken = w.to_vec();
        let at = broken[values] as usize / 4 + 1;
        broken[at] = 0xffff_ffff;
        assert!(matches!(validate(&broken, &mut scratch), Err(BlobError::InvalidUtf8 { .. })));
    }

    /// A blob of the layout a scratch holds, broken in its header, its null, a block or its
    /// length (what the known-layout pass checks without naming), gets the error a cold
    /// scratch gives; a valid one whose blocks are not top-down is accepted by both.
    #[test]
    fn a_known_layout_with_a_broken_header_or_block_gets_the_cold_answer() {
        let mut w = fresh(256);
        set(&mut w, Key::from_raw(1), Value::Str("héllo")).unwrap();
        set(&mut w, Key::from_raw(2), Value::Null).unwrap();
        set(&mut w, Key::from_raw(3), Value::Floats(&[1.0, 2.0])).unwrap();
        let used = shrink(&mut w);
        let w = w[..used].to_vec();
        let mut warm = Scratch::default();
        assert_eq!(validate(&w, &mut warm), Ok(()));
        assert_eq!(&warm.limits[..warm.limit_len], [(1, 0)], "the null");
        assert_eq!(&warm.payloads[..warm.payload_len], [(0, true), (2, false)]);
        let values = values_at(3);
        let (text, floats) = (w[values] as usize / 4, w[values + 2] as usize / 4);
        let with = |changes: &[(usize, u32)]| {
            let mut broken = w.clone();
            for &(at, word) in changes {
                broken[at] = word;
            }
            broken
        };
        let end = (w.len() * 4) as u32;
        // Both blocks take three words: swapped, they are valid but not top-down.
        let mut swapped = w.clone();
        swapped.copy_within(text..text + 3, floats);
        swapped[text..text + 3].copy_from_slice(&w[floats..floats + 3]);
        swapped[values] = w[values + 2];
        swapped[values + 2] = w[values];
        let cases = [
            ("the null not 0", with(&[(values + 1, 1)]), false),
            ("payload start not a word", with(&[(1, w[1] + 1)]), false),
            ("payload start in the header", with(&[(1, 4)]), false),
            ("payload start past the end", with(&[(1, end + 4)]), false),
            ("a key count of one more", with(&[(0, 4)]), false),
            ("a string's length past the end", with(&[(text, 1000)]), false),
            ("a float array's length past the end", with(&[(floats, 1000)]), false),
            ("an offset below payload start", with(&[(values, w[1] - 4)]), false),
            ("an offset past the end", with(&[(values + 2, end)]), false),
            ("a string cut inside a character", with(&[(text, 2)]), false),
            ("truncated", w[..w.len() - 1].to_vec(), false),
            ("blocks swapped", swapped, true),
        ];
        for (what, blob, valid) in cases {
            let cold = validate(&blob, &mut Scratch::default());
            assert_eq!(cold.is_ok(), valid, "{what}: {cold:?}");
            assert_eq!(validate(&w, &mut warm), Ok(()), "{what}: the layout is kept");
            assert_eq!(validate(&blob, &mut warm), cold, "{what}");
        }
    }

    /// Same-layout blobs: a changed float is found by its word, a changed string by its
    /// payload; with the same payload words, two value words that point at equal strings in
    /// different blocks are the same value.
    #[test]
    fn differing_entries_of_one_layout() {
        let mut w = fresh(256);
        set(&mut w, Key::from_raw(1), Value::Str("same")).unwrap();
        set(&mut w, Key::from_raw(2), Value::Float(1.0)).unwrap();
        set(&mut w, Key::from_raw(3), Value::Str("same")).unwrap();
        let used = shrink(&mut w);
        let a = w[..used].to_vec();
        let differing = |b: &[u32]| {
            let mut out = Vec::new();
            differing_entries(&a, b, &mut out);
            out
        };
        assert_eq!(differing(&a), [] as [u32; 0]);
        let values = values_at(3);
        let mut b = a.clone();
        b[values + 1] = 2.0_f32.to_bits();
        assert_eq!(differing(&b), [1], "the float");
        // Entry 0 points at entry 2's block: the same text, from another block.
        b[values] = a[values + 2];
        assert_eq!(differing(&b), [1]);
        let mut c = a.clone();
        let text = a[values + 2] as usize / 4 + 1;
        c[text] = u32::from_le_bytes(*b"SAME");
        assert_eq!(differing(&c), [2], "the second string's text");
    }

    #[test]
    fn header_sizes() {
        assert_eq!(header_bytes(0), 8);
        assert_eq!(header_bytes(1), 8 + 4 + 4 + 4);
        assert_eq!(header_bytes(4), 8 + 16 + 4 + 16);
        assert_eq!(header_bytes(5), 8 + 20 + 8 + 20);
    }

    #[test]
    fn shrink_puts_the_free_space_last() {
        let mut w = fresh(512);
        set(&mut w, Key::from_raw(1), Value::Str("a string")).unwrap();
        set(&mut w, Key::from_raw(2), Value::Float(2.0)).unwrap();
        set(&mut w, Key::from_raw(3), Value::Floats(&[1.0, 2.0])).unwrap();
        set(&mut w, Key::from_raw(1), Value::Str("abc")).unwrap(); // leaves a hole
        let entries = |w: &[u32]| -> Vec<(u32, crate::OwnedValue)> {
            (0..len(w)).map(|i| (keys(w)[i], entry(w, i).to_owned_value())).collect()
        };
        let before = entries(&w);
        let used = shrink(&mut w);
        assert_eq!(used * 4, used_bytes(&w[..used]) + hole_bytes(&w[..used]));
        assert_eq!((free_bytes(&w[..used]), hole_bytes(&w[..used])), (0, 4));
        check(&w[..used]);
        assert_eq!(entries(&w[..used]), before);
        assert_eq!(shrink(&mut w[..used]), used, "nothing left to move");
    }

    #[test]
    fn remove_at_is_remove_of_each_position_in_one_pass() {
        // Every subset of 9 entries (tag words of 4, 4 and 1), strings among floats.
        for mask in 0..1_u32 << 9 {
            let mut w = fresh(1024);
            for k in 0..9_u32 {
                let value = if k % 3 == 0 {
                    Value::Str("payload")
                } else {
                    Value::Float(f32::from(k as u8))
                };
                set(&mut w, Key::from_raw(k), value).unwrap();
            }
            let mut expected = w.clone();
            let positions: Vec<usize> = (0..9).filter(|i| mask & 1 << i != 0).collect();
            for &i in positions.iter().rev() {
                assert!(remove(&mut expected, Key::from_raw(i as u32)));
            }
            remove_at(&mut w, &positions);
            check(&w);
            let entries = |w: &[u32]| -> Vec<(u32, crate::OwnedValue)> {
                (0..len(w)).map(|i| (keys(w)[i], entry(w, i).to_owned_value())).collect()
            };
            assert_eq!(entries(&w), entries(&expected), "mask {mask:09b}");
        }
    }

    #[test]
    fn push_and_remove_keep_arrays_in_step_across_tag_word_boundaries() {
        let mut w = fresh(1024);
        for k in 0..9u32 {
            set(&mut w, Key::from_raw(k), Value::Float(f32::from(k as u8))).unwrap();
            check(&w);
        }
        for k in [4u32, 0, 8, 3] {
            assert!(remove(&mut w, Key::from_raw(k)));
            check(&w);
        }
        let left: Vec<u32> = keys(&w).to_vec();
        assert_eq!(left, [1, 2, 5, 6, 7]);
        for (i, &k) in left.iter().enumerate() {
            assert_eq!(entry(&w, i), Value::Float(f32::from(k as u8)));
        }
    }

    #[test]
    fn need_space_leaves_the_region_unchanged() {
        let mut w = fresh(32);
        set(&mut w, Key::from_raw(1), Value::Str("abcd")).unwrap();
        let before = w.clone();
        let err = set(&mut w, Key::from_raw(2), Value::Str("too long for the rest")).unwrap_err();
        assert_eq!(w, before);
        // header of 2 keys (28) + "abcd" block (8) + new block (4 + 24).
        assert_eq!(err.required, 28 + 8 + 28);
    }

    #[test]
    fn a_freed_block_at_the_bottom_is_given_back() {
        let mut w = fresh(256);
        set(&mut w, Key::from_raw(1), Value::Str("first")).unwrap();
        set(&mut w, Key::from_raw(2), Value::Str("second")).unwrap();
        let start = payload_start(&w);
        set(&mut w, Key::from_raw(2), Value::Str("second, longer than before")).unwrap();
        assert_eq!(hole_bytes(&w), 0);
        assert_eq!(payload_start(&w), start + 12 - 4 - 28);
        set(&mut w, Key::from_raw(1), Value::Str("first, now longer")).unwrap();
        assert_eq!(hole_bytes(&w), 12, "the old 'first' block in the middle is a hole");
        check(&w);
    }

    /// The global checks by brute force: the duplicated key the sort would name (the lowest
    /// one, its first two positions), else the overlap of the first two blocks in (start, end,
    /// entry) order that overlap.
    fn brute_force(w: &[u32]) -> Result<(), BlobError> {
        let keys = keys(w);
        let mut dup: Option<(u32, usize, usize)> = None;
        for i in 0..keys.len() {
            for j in i + 1..keys.len() {
                if keys[i] == keys[j] && dup.is_none_or(|(k, a, b)| (keys[i], i, j) < (k, a, b)) {
                    dup = Some((keys[i], i, j));
                }
            }
        }
        if let Some((key, first, second)) = dup {
            return Err(BlobError::DuplicateKey { key: Key::from_raw(key), first, second });
        }
        let mut blocks: Vec<(u32, u32, u32)> = (0..len(w))
            .filter_map(|i| block(w, i).map(|(o, b)| (o as u32, (o + b) as u32, i as u32)))
            .collect();
        blocks.sort_unstable();
        for pair in blocks.windows(2) {
            if pair[1].0 < pair[0].1 {
                let (first, second) = (pair[0].2 as usize, pair[1].2 as usize);
                return Err(BlobError::OverlappingPayloads { first, second, offset: pair[1].0 });
            }
        }
        Ok(())
    }

    proptest::proptest! {
        /// A blob of the layout a warm scratch holds (every value type, a non-ASCII string),
        /// with one or two of its words set to any value, a nearby one or a small one: the
        /// warm scratch's short pass answers as a cold scratch's full pass does.
        #[test]
        fn a_warm_scratch_answers_as_a_cold_one(
            changes in proptest::collection::vec((0_usize..64, proptest::num::u32::ANY, 0_u8..3), 1..3),
        ) {
            let mut w = fresh(256);
            set(&mut w, Key::from_raw(1), Value::Str("Grunt")).unwrap();
            set(&mut w, Key::from_raw(2), Value::Float(-3.25)).unwrap();
            set(&mut w, Key::from_raw(3), Value::Bool(true)).unwrap();
            set(&mut w, Key::from_raw(4), Value::Null).unwrap();
            set(&mut w, Key::from_raw(5), Value::Floats(&[12.5, 0.0, -3.25])).unwrap();
            set(&mut w, Key::from_raw(6), Value::Str("Orc ü")).unwrap();
            let used = shrink(&mut w);
            let clean = w[..used].to_vec();
            let mut broken = clean.clone();
            for (at, word, how) in changes {
                let at = at % broken.len();
                broken[at] = match how {
                    0 => word,
                    1 => broken[at].wrapping_add(word % 9).wrapping_sub(4),
                    _ => word % 300,
                };
            }
            let mut warm = Scratch::default();
            proptest::prop_assert_eq!(validate(&clean, &mut warm), Ok(()));
            let cold = validate(&broken, &mut Scratch::default());
            proptest::prop_assert_eq!(validate(&broken, &mut warm), cold);
        }

        /// The fast proofs (top-down blocks, the cached unique key array, the key filter) give
        /// exactly the answer of the sorting checks, with a fresh scratch or one that holds the
        /// keys of the blob before, on blobs whose keys and offsets were rewritten at random.
        #[test]
        fn fast_proofs_agree_with_brute_force(
            entries in proptest::collection::vec((0_u32..40, 0_u8..4, 0_usize..12), 0..40),
            rewrites in proptest::collection::vec((proptest::bool::ANY, 0_usize..40, 0_usize..40), 0..3),
            shift in 0_u32..32,
        ) {
            let mut w = fresh(4096);
            for &(key, kind, len) in &entries {
                // Keys spread over the top bits too, so the filter sees clashes and misses.
                let key = Key::from_raw(key.rotate_right(shift));
                let text = "abcdefghijkl";
                let floats = [1.5_f32; 12];
                let value = match kind {
                    0 => Value::Bool(len % 2 == 0),
                    1 => Value::Float(f32::from(len as u8)),
                    2 => Value::Str(&text[..len]),
                    _ => Value::Floats(&floats[..len]),
                };
                set(&mut w, key, value).unwrap();
            }
            let n = len(&w);
            let clean = w.clone();
            for &(offsets, a, b) in &rewrites {
                if n == 0 {
                    break;
                }
                let (a, b) = (a % n, b % n);
                let at = if offsets { values_at(n) } else { HEADER_WORDS };
                w[at + a] = w[at + b];
            }
            // Rewritten offsets may fail the entry checks (a bool's value as an offset): those
            // come first, and the global checks are not reached.
            let expected = match validate(&w, &mut Scratch::default()) {
                Ok(()) | Err(BlobError::DuplicateKey { .. } | BlobError::OverlappingPayloads { .. }) => {
                    brute_force(&w)
                }
                Err(other) => Err(other),
            };
            proptest::prop_assert_eq!(validate(&w, &mut Scratch::default()), expected.clone());
            let mut warm = Scratch::default();
            proptest::prop_assert_eq!(validate(&clean, &mut warm), Ok(()));
            proptest::prop_assert_eq!(validate(&w, &mut warm), expected.clone());
            proptest::prop_assert_eq!(validate(&w, &mut warm), expected);
        }
    }
}
