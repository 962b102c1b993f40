//! The key names in a save or delta file: the key tree (section kind 12, format 1.1 on) and
//! the flat list of format 1.0 (section kind 6), which still loads.
//!
//! ```text
//!  key tree:  count                                      LEB128 varint
//!             per node, parents first:
//!               number - parent   (1 .. number; 0 is the root)  varint
//!               len << 2 | flags  (bit 0 named, bit 1 array)     varint
//!               the segment's UTF-8 text (len bytes)
//!
//!  key names: u32 count, then (u32 key, u32 length) per name in ascending key order, then
//!             each name as a JSON Pointer (`/stats/health`), back to back       (format 1.0)
//! ```
//!
//! A node's key is not stored: it is the hash of its path, so it always matches. A shared
//! prefix is one node, so the section is at most about the size of the distinct segments.

use zerocopy::FromBytes;
use zerocopy::little_endian::U32;

use super::container::LIST_KIND;
use super::error::{LoadError, StoreError};
use super::version::{KEY_HASH_FX32_BYTES, KEY_HASH_FX32_WORDS};
use crate::key::{Key, KeyPath};
use crate::names::{ARRAY, KeyNames};

/// Flag bits a saved node may carry.
const NAMED_BIT: u64 = 1;
const ARRAY_BIT: u64 = 2;

fn push_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn varint_len(mut value: u64) -> usize {
    let mut len = 1;
    while value >= 0x80 {
        value >>= 7;
        len += 1;
    }
    len
}

/// Reads a varint of at most 64 bits from `bytes` at `*at`, moving `*at` past it.
fn read_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut value = 0_u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        let bits = u64::from(byte & 0x7f);
        if shift == 63 && bits > 1 {
            return None;
        }
        value |= bits << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

/// The codec, as the key names' own methods: what saves, deltas and snapshots call.
impl KeyNames {
    /// The key-tree section of these names: empty when there are none.
    pub(crate) fn encode_tree(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.tree_len());
        if self.node_count() == 0 {
            return out;
        }
        push_varint(&mut out, self.node_count() as u64);
        for (number, (parent, segment, flags)) in (1_u64..).zip(self.nodes()) {
            push_varint(&mut out, number - u64::from(parent));
            push_varint(&mut out, (segment.len() as u64) << 2 | flag_bits(flags));
            out.extend_from_slice(segment.as_bytes());
        }
        out
    }

    /// Bytes of the key-tree section of these names.
    pub(crate) fn tree_len(&self) -> usize {
        if self.node_count() == 0 {
            return 0;
        }
        let nodes = (1_u64..).zip(self.nodes()).map(|(number, (parent, segment, _))| {
            varint_len(number - u64::from(parent))
                + varint_len((segment.len() as u64) << 2 | 3)
                + segment.len()
        });
        varint_len(self.node_count() as u64) + nodes.sum::<usize>()
    }

    /// A save's names as it holds them: the tree, or (for key hash 1, written before the tree)
    /// the flat list (or none) its keys are rehashed from.
    pub(crate) fn saved(
        bytes: &[u8],
        kind: u32,
        key_hash: u16,
    ) -> Result<(Option<KeyNames>, NameList<'_>), LoadError> {
        Ok(match (key_hash, kind) {
            (KEY_HASH_FX32_WORDS, LIST_KIND) => (None, decode_list(bytes, key_hash)?),
            (KEY_HASH_FX32_WORDS, _) => {
                decode_tree(bytes, key_hash)?;
                (None, Vec::new())
            }
            _ => (Some(KeyNames::decode(bytes, kind, key_hash)?), Vec::new()),
        })
    }

    /// The key names of a save's names section of `kind` (12: a key tree, 6: a format 1.0 list),
    /// for a file of key hash 2.
    ///
    /// # Errors
    ///
    /// As [`decode_tree`] and [`decode_list`].
    pub(crate) fn decode(bytes: &[u8], kind: u32, key_hash: u16) -> Result<KeyNames, LoadError> {
        if kind != LIST_KIND {
            return decode_tree(bytes, key_hash);
        }
        let mut names = KeyNames::new();
        for (_, pointer) in decode_list(bytes, key_hash)? {
            let path = KeyPath::pointer(pointer).expect("INVARIANT: checked to be a JSON Pointer");
            // Distinct keys, each its pointer's: recording cannot collide.
            names.record(&path).map_err(|_| {
                LoadError::Store(StoreError::KeyName {
                    index: 0,
                    problem: "two names hash to one key",
                })
            })?;
        }
        Ok(names)
    }

    /// The format 1.0 key-name section of these names (kind 6): what a delta read from a format 1.0
    /// file writes again, since its base's crc covers the names in this form.
    pub(crate) fn encode_list(&self) -> Vec<u8> {
        let mut out = Vec::new();
        write_list(self, |bytes| out.extend_from_slice(bytes));
        out
    }

    /// Bytes of [`encode_list`](Self::encode_list)'s section.
    pub(crate) fn list_len(&self) -> usize {
        let mut len = 0;
        write_list(self, |bytes| len += bytes.len());
        len
    }

    /// Feeds `crc` the format 1.0 key-name section of these names, as deltas of format 1.0 checked
    /// their base with, without building it whole.
    pub(crate) fn crc_list(&self, crc: &mut crc32fast::Hasher) {
        write_list(self, |bytes| crc.update(bytes));
    }
}

fn flag_bits(flags: u8) -> u64 {
    let named = u64::from(flags & 1 != 0) * NAMED_BIT;
    let array = u64::from(flags & ARRAY != 0) * ARRAY_BIT;
    named | array
}

/// Reads a key-tree section, checking that every node's parent comes before it, its text is
/// UTF-8, no two children of one node have the same text, no two named nodes have one key,
/// every node is named or leads to a named one, and no byte is left over. O(section).
///
/// # Errors
///
/// [`StoreError::KeyTree`](crate::format::StoreError::KeyTree) naming the node and the problem.
pub(crate) fn decode_tree(bytes: &[u8], key_hash: u16) -> Result<KeyNames, LoadError> {
    let mut names = KeyNames::new();
    if bytes.is_empty() {
        return Ok(names);
    }
    let bad =
        |node: u64, problem: &'static str| LoadError::Store(StoreError::KeyTree { node, problem });
    if key_hash == KEY_HASH_FX32_WORDS {
        // Written only by builds of key hash 2, whose keys a node's path gives.
        return Err(bad(0, "a key tree in a save of key hash 1"));
    }
    let mut at = 0;
    let count = read_varint(bytes, &mut at).ok_or_else(|| bad(0, "the count is cut short"))?;
    // Each node takes at least two bytes: the count is bounded by the section's size.
    if count == 0 || count > (bytes.len() / 2) as u64 || count >= u64::from(u32::MAX) {
        return Err(bad(0, "the count does not fit the section"));
    }
    // Whether each node (the root first) is the parent of another.
    let mut parents = vec![false; count as usize + 1];
    for number in 1..=count {
        let distance = read_varint(bytes, &mut at).ok_or_else(|| bad(number, "cut short"))?;
        if distance == 0 || distance > number {
            return Err(bad(number, "its parent does not come before it"));
        }
        let parent = (number - distance) as u32;
        let head = read_varint(bytes, &mut at).ok_or_else(|| bad(number, "cut short"))?;
        let (len, flags) = (head >> 2, head & 3);
        let text = usize::try_from(len)
            .ok()
            .and_then(|len| bytes.get(at..at.checked_add(len)?))
            .ok_or_else(|| bad(number, "its text runs past the section"))?;
        at += text.len();
        let text = std::str::from_utf8(text).map_err(|_| bad(number, "its text is not UTF-8"))?;
        let node = names.intern(parent, text);
        if u64::from(node) != number {
            return Err(bad(number, "another child of its parent has the same text"));
        }
        parents[parent as usize] = true;
        if flags & NAMED_BIT != 0 && names.name(node).is_err() {
            return Err(bad(number, "its key is named by an earlier node"));
        }
        if flags & ARRAY_BIT != 0 {
            names.set_array(node);
        }
    }
    if at != bytes.len() {
        return Err(bad(count, "bytes are left after the last node"));
    }
    if let Some(number) = (1..=count).find(|&n| !parents[n as usize] && !names.is_named(n as u32)) {
        return Err(bad(number, "it names no key and leads to none"));
    }
    Ok(names)
}

/// Reads a format 1.0 key-name section into `(key, JSON Pointer)` pairs, checking that every
/// name is a JSON Pointer that hashes to its key under `key_hash`, in ascending key order,
/// with no byte left over.
///
/// # Errors
///
/// [`StoreError::KeyName`](crate::format::StoreError::KeyName) naming the entry and the problem.
/// Names of a flat list: each key and its JSON Pointer.
pub(crate) type NameList<'a> = Vec<(Key, &'a str)>;

pub(crate) fn decode_list(bytes: &[u8], key_hash: u16) -> Result<Vec<(Key, &str)>, LoadError> {
    let mut names = Vec::new();
    if bytes.is_empty() {
        return Ok(names);
    }
    let bad = |index: u64, problem: &'static str| {
        LoadError::Store(StoreError::KeyName { index, problem })
    };
    let (count, rest) =
        U32::read_from_prefix(bytes).map_err(|_| bad(0, "the count is cut short"))?;
    let count = u64::from(count.get());
    let table_len = usize::try_from(count * 8).map_err(|_| bad(0, "the count is too large"))?;
    let (table, mut text) = (rest.get(..table_len), rest.get(table_len..).unwrap_or_default());
    let table = table.ok_or_else(|| bad(0, "the table runs past the section"))?;
    names.reserve(count as usize);
    let mut previous: Option<Key> = None;
    for (index, entry) in table.chunks_exact(8).enumerate() {
        let index = index as u64;
        let key = Key::from_raw(u32::from_le_bytes([entry[0], entry[1], entry[2], entry[3]]));
        let len = u32::from_le_bytes([entry[4], entry[5], entry[6], entry[7]]) as usize;
        if previous.is_some_and(|p| p >= key) {
            return Err(bad(index, "keys are not in ascending order"));
        }
        previous = Some(key);
        let pointer =
            text.get(..len).ok_or_else(|| bad(index, "the name runs past the section"))?;
        text = &text[len..];
        let pointer =
            std::str::from_utf8(pointer).map_err(|_| bad(index, "the name is not UTF-8"))?;
        // One spelling per name: `~2` would read as the `~02` a store writes, and two
        // spellings of one name compare unequal.
        let raw = pointer.as_bytes();
        if raw
            .iter()
            .enumerate()
            .any(|(i, &b)| b == b'~' && !matches!(raw.get(i + 1), Some(b'0' | b'1')))
        {
            return Err(bad(index, "the name holds a '~' that is neither '~0' nor '~1'"));
        }
        let hashed = match pointer.strip_prefix('/') {
            None => return Err(bad(index, "the name is not a JSON Pointer")),
            Some(path) if key_hash == KEY_HASH_FX32_WORDS => {
                crate::key::v1::path(path.split('/').map(crate::key::unescape))
            }
            Some(path) if key_hash == KEY_HASH_FX32_BYTES => {
                crate::key::v2::path(path.split('/').map(crate::key::unescape))
            }
            Some(_) => Key::from_pointer(pointer).unwrap_or_default(),
        };
        if hashed != key {
            return Err(bad(index, "the name does not hash to its key"));
        }
        names.push((key, pointer));
    }
    if !text.is_empty() {
        return Err(bad(count, "bytes are left after the last name"));
    }
    Ok(names)
}

/// Writes the format 1.0 key-name section of `names` to `out`, piece by piece: the count, the
/// (key, length) table in key order, then each name as a JSON Pointer.
fn write_list(names: &KeyNames, mut out: impl FnMut(&[u8])) {
    if names.is_empty() {
        return;
    }
    out(&(names.len() as u32).to_le_bytes());
    for (key, node) in names.iter() {
        out(&key.raw().to_le_bytes());
        out(&(names.pointer(node).len() as u32).to_le_bytes());
    }
    for (_, node) in names.iter() {
        out(names.pointer(node).as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(paths: &[&str]) -> KeyNames {
        let mut names = KeyNames::new();
        for path in paths {
            names.record(&KeyPath::pointer(path).unwrap()).unwrap();
        }
        names
    }

    #[test]
    fn varints_round_trip_and_refuse_overflow() {
        for value in [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let mut out = Vec::new();
            push_varint(&mut out, value);
            assert_eq!(out.len(), varint_len(value));
            let mut at = 0;
            assert_eq!(read_varint(&out, &mut at), Some(value));
            assert_eq!(at, out.len());
        }
        let mut at = 0;
        assert_eq!(read_varint(&[0xff; 10], &mut at), None);
        let mut at = 0;
        assert_eq!(read_varint(&[0x80, 0x80], &mut at), None);
    }

    #[test]
    fn a_tree_round_trips_with_its_marks_in_the_size_it_announces() {
        let mut names = tree(&["/stats/health", "/stats/mana", "/a.b/c~1d", "/tags/0", "/"]);
        let tags = names.named(Key::parse("tags.0")).map(|n| names.parent(n)).unwrap();
        names.set_array(tags);
        let bytes = names.encode_tree();
        assert_eq!(bytes.len(), names.tree_len());
        let loaded = decode_tree(&bytes, 2).unwrap();
        assert_eq!(loaded, names);
        assert_eq!(loaded.encode_tree(), bytes);
        assert!(loaded.is_array(tags));
        assert_eq!(bytes[0], 8, "8 nodes");
        assert_eq!(&bytes[1..8], b"\x01\x14stats", "the first node: under the root, 5 bytes");
    }

    #[test]
    fn every_malformed_tree_is_refused_with_its_node() {
        let bad = |node, problem| Err(LoadError::Store(StoreError::KeyTree { node, problem }));
        let check = |bytes: &[u8]| decode_tree(bytes, 2).map(|_| ());
        assert_eq!(check(&[0]), bad(0, "the count does not fit the section"));
        assert_eq!(check(&[9, 1, 1]), bad(0, "the count does not fit the section"));
        assert_eq!(check(&[0x80]), bad(0, "the count is cut short"));
        assert_eq!(check(&[1, 0, 1]), bad(1, "its parent does not come before it"));
        assert_eq!(check(&[1, 2, 1]), bad(1, "its parent does not come before it"));
        assert_eq!(check(&[1, 1, 9, b'a']), bad(1, "its text runs past the section"));
        assert_eq!(check(&[1, 1, 5, 0xff]), bad(1, "its text is not UTF-8"));
        assert_eq!(
            check(&[2, 1, 5, b'a', 2, 5, b'a']),
            bad(2, "another child of its parent has the same text")
        );
        assert_eq!(check(&[1, 1, 5, b'a', 0]), bad(1, "bytes are left after the last node"));
        assert_eq!(check(&[1, 1, 4, b'a']), bad(1, "it names no key and leads to none"));
        assert_eq!(
            check(&[2, 1, 4, b'a', 1, 4, b'b']),
            bad(2, "it names no key and leads to none")
        );
        assert_eq!(check(&[1, 1, 5, b'a']), Ok(()));
        assert_eq!(
            decode_tree(&[1, 1, 5, b'a'], KEY_HASH_FX32_WORDS).unwrap_err(),
            LoadError::Store(StoreError::KeyTree {
                node: 0,
                problem: "a key tree in a save of key hash 1"
            })
        );
        // "sleep_haste_8" and "fury_sleep_272" share a key.
        let mut colliding = vec![2, 1, 13 << 2 | 1];
        colliding.extend_from_slice(b"sleep_haste_8");
        colliding.extend_from_slice(&[2, 14 << 2 | 1]);
        colliding.extend_from_slice(b"fury_sleep_272");
        assert_eq!(check(&colliding), bad(2, "its key is named by an earlier node"));
    }

    #[test]
    fn the_flat_list_of_format_1_0_reads_into_the_tree() {
        let names = tree(&["/stats/health", "/a.b/c~1d"]);
        let mut list = Vec::new();
        let mut crc = crc32fast::Hasher::new();
        names.crc_list(&mut crc);
        // The list as format 1.0 wrote it.
        let pointers: Vec<(Key, String)> =
            names.iter().map(|(k, n)| (k, names.pointer(n))).collect();
        list.extend_from_slice(&2_u32.to_le_bytes());
        for (key, pointer) in &pointers {
            list.extend_from_slice(&key.raw().to_le_bytes());
            list.extend_from_slice(&(pointer.len() as u32).to_le_bytes());
        }
        for (_, pointer) in &pointers {
            list.extend_from_slice(pointer.as_bytes());
        }
        assert_eq!(crc.finalize(), crc32fast::hash(&list));
        assert_eq!(names.encode_list(), list);
        assert_eq!(names.list_len(), list.len());
        assert_eq!(KeyNames::decode(&list, LIST_KIND, 2).unwrap(), names);
    }
}
