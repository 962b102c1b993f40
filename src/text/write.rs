//! Writing an entity as JSON: the entity's tree (its keys nested again by their names), and
//! the writer of that tree and of each value, byte for byte as `serde_json` writes them.

use std::borrow::Cow;

use fxhash::FxHashMap;

use crate::blob::BlobRef;
use crate::key::{Key, MAX_PATH_SEGMENTS};
use crate::names::{self, KeyNames};
use crate::value::Value;

use super::number::JsonF32;

/// The first float of `value` that JSON has no number for.
pub(crate) fn check_finite(value: Value<'_>) -> Result<(), f32> {
    match value {
        Value::Float(x) if !x.is_finite() => Err(x),
        Value::Floats(xs) => xs.iter().find(|x| !x.is_finite()).map_or(Ok(()), |&x| Err(x)),
        _ => Ok(()),
    }
}

/// An exported entity, as one flat list of nodes: node [`ROOT`] is the entity's object, and
/// each object's members are linked in the order they were met. Cleared, not freed, between
/// entities. Nothing here recurses: a path is placed by a loop and the tree is written with an
/// explicit stack, so a name of any depth costs heap, not stack.
pub(crate) struct Tree<'a> {
    pub(crate) nodes: Vec<TreeNode<'a>>,
    /// The node of each name-tree node placed so far in this entity.
    placed: Placed,
    /// Scratch: name-tree nodes on the way to a key's node, and an array's members by index.
    chain: Vec<u32>,
}

/// The tree node of each name-tree node placed in the entity being exported: a table with a
/// slot per name-tree node, stamped with the entity it is valid for (no clearing between
/// entities), when the names are few or every entity is exported; else a hash map, so that
/// exporting one entity of a store of a million names does not allocate a slot for each.
enum Placed {
    Dense { stamp: u32, slots: Vec<(u32, u32)> },
    Sparse(FxHashMap<u32, u32>),
}

impl Default for Placed {
    fn default() -> Placed {
        Placed::Sparse(FxHashMap::default())
    }
}

/// Names up to this many nodes always get the dense table.
const DENSE_NODES: usize = 1 << 16;

impl Placed {
    /// A table for `nodes` name-tree nodes; dense when `dense` or the names are few.
    fn new(nodes: usize, dense: bool) -> Placed {
        if dense || nodes <= DENSE_NODES {
            Placed::Dense { stamp: 1, slots: vec![(0, 0); nodes + 1] }
        } else {
            Placed::Sparse(FxHashMap::default())
        }
    }

    /// Forgets every node placed.
    fn clear(&mut self) {
        match self {
            Placed::Dense { stamp, slots } => {
                *stamp = stamp.wrapping_add(1);
                if *stamp == 0 {
                    slots.fill((0, 0));
                    *stamp = 1;
                }
            }
            // Cleared in time to its size: kept when the entities are alike, replaced after
            // a large one, so that many small entities after it do not each clear a large
            // table.
            Placed::Sparse(map) if map.capacity() > 4 * map.len() + 64 => {
                *map = FxHashMap::default();
            }
            Placed::Sparse(map) => map.clear(),
        }
    }

    fn get(&self, node: u32) -> Option<u32> {
        match self {
            Placed::Dense { stamp, slots } => {
                slots.get(node as usize).filter(|s| s.0 == *stamp).map(|s| s.1)
            }
            Placed::Sparse(map) => map.get(&node).copied(),
        }
    }

    fn insert(&mut self, node: u32, placed: u32) {
        match self {
            Placed::Dense { stamp, slots } => slots[node as usize] = (*stamp, placed),
            Placed::Sparse(map) => {
                map.insert(node, placed);
            }
        }
    }
}

/// A member of an object or array: a value, or an object (an array) whose members start at
/// `first`.
pub(crate) struct TreeNode<'a> {
    name: Cow<'a, str>,
    pub(crate) leaf: Option<Value<'a>>,
    /// The first and last members of an object; [`NO_NODE`] when it has none.
    first: u32,
    last: u32,
    /// The next member of the same object; [`NO_NODE`] after the last.
    next: u32,
    /// The name-tree node this member is, or [`NO_NODE`] (the root, a key shown by hash).
    source: u32,
    /// Written as an array: its members are its indices `0..`, linked in that order.
    array: bool,
    /// Segments from the entity's object: a name deeper than an import takes (only an old
    /// save holds one) is written by hash, so that the export always imports back.
    depth: u32,
    /// The blob entry (its position in the blob) that `leaf` is, or [`NO_NODE`]: what an
    /// export plan writes at this place for another entity of the same layout.
    pub(crate) entry: u32,
}

/// The entity's own object in a [`Tree`].
pub(crate) const ROOT: u32 = 0;
/// No node: the end of a list of members.
pub(crate) const NO_NODE: u32 = u32::MAX;

/// The bytes an export wrote: JSON from `serde_json`, ASCII punctuation and strings copied from
/// validated blobs (every blob's strings are checked UTF-8 when it is made or loaded), so always
/// UTF-8. Were that broken, the text keeps every valid byte and marks the others with U+FFFD
/// (and a debug build stops), rather than losing the whole document.
pub(crate) fn into_string(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|error| {
        debug_assert!(false, "an export wrote invalid UTF-8: {error}");
        String::from_utf8_lossy(error.as_bytes()).into_owned()
    })
}

/// Whether `segment` is an array index as JSON documents number elements: `0`, or digits
/// without a leading zero, below `len`.
fn index_below(segment: &str, len: usize) -> Option<usize> {
    let canonical = segment == "0"
        || (!segment.is_empty()
            && !segment.starts_with('0')
            && segment.bytes().all(|b| b.is_ascii_digit()));
    segment.parse().ok().filter(|&i| canonical && i < len)
}

impl<'a> Tree<'a> {
    /// The first member of `object`, if it has one.
    pub(crate) fn first_member(&self, object: u32) -> Option<u32> {
        let first = self.nodes[object as usize].first;
        (first != NO_NODE).then_some(first)
    }

    /// The member after `node` in its object, if there is one.
    pub(crate) fn next_member(&self, node: u32) -> Option<u32> {
        let next = self.nodes[node as usize].next;
        (next != NO_NODE).then_some(next)
    }

    /// The member name of `node`.
    pub(crate) fn name(&self, node: u32) -> &str {
        &self.nodes[node as usize].name
    }

    /// The value of `node`, or `None` for an object.
    pub(crate) fn leaf(&self, node: u32) -> Option<Value<'a>> {
        self.nodes[node as usize].leaf
    }

    /// Whether `node` is written as an array (its members are its elements, in order).
    pub(crate) fn is_array(&self, node: u32) -> bool {
        self.nodes[node as usize].array
    }

    /// A tree for entities named by `names`; `all` when every entity will be exported.
    pub(crate) fn for_names(names: &KeyNames, all: bool) -> Tree<'a> {
        Tree { nodes: Vec::new(), placed: Placed::new(names.node_count(), all), chain: Vec::new() }
    }

    /// Empties the tree down to the entity's object, with no members.
    pub(crate) fn clear(&mut self) {
        self.nodes.clear();
        let root = TreeNode {
            name: Cow::Borrowed(""),
            leaf: None,
            first: NO_NODE,
            last: NO_NODE,
            next: NO_NODE,
            source: NO_NODE,
            array: false,
            depth: 0,
            entry: NO_NODE,
        };
        self.nodes.push(root);
        self.placed.clear();
    }

    /// Adds a member (a value and its blob entry, or with `leaf` `None` an empty object) after
    /// the last member of `object`, and returns it.
    pub(crate) fn push_member(
        &mut self,
        object: u32,
        name: Cow<'a, str>,
        leaf: Option<(Value<'a>, u32)>,
        source: u32,
    ) -> u32 {
        let node = self.nodes.len() as u32;
        let depth = self.nodes[object as usize].depth + 1;
        self.nodes.push(TreeNode {
            name,
            leaf: leaf.map(|(value, _)| value),
            first: NO_NODE,
            last: NO_NODE,
            next: NO_NODE,
            source,
            array: false,
            depth,
            entry: leaf.map_or(NO_NODE, |(_, entry)| entry),
        });
        let parent = &mut self.nodes[object as usize];
        let last = std::mem::replace(&mut parent.last, node);
        if last == NO_NODE {
            parent.first = node;
        } else {
            self.nodes[last as usize].next = node;
        }
        node
    }

    /// Adds a member holding `value` before the first member of `object`, and returns it.
    pub(crate) fn push_first(&mut self, object: u32, name: &'a str, value: Value<'a>) -> u32 {
        let first = self.nodes[object as usize].first;
        let node = self.push_member(object, Cow::Borrowed(name), Some((value, NO_NODE)), NO_NODE);
        if first != NO_NODE {
            // Unlinked from the end, linked at the start.
            let mut last = first;
            while self.nodes[last as usize].next != node {
                last = self.nodes[last as usize].next;
            }
            self.nodes[last as usize].next = NO_NODE;
            let parent = &mut self.nodes[object as usize];
            (parent.first, parent.last) = (node, last);
            self.nodes[node as usize].next = first;
        }
        node
    }

    /// Adds an array of strings named `name` after the last member of `object`: each string
    /// an element, held as the element's name (see [`write_member_value`]).
    pub(crate) fn push_strings(
        &mut self,
        object: u32,
        name: &'a str,
        strings: impl IntoIterator<Item = String>,
    ) {
        let array = self.push_member(object, Cow::Borrowed(name), None, NO_NODE);
        self.nodes[array as usize].array = true;
        for string in strings {
            let leaf = Some((Value::Tombstone, NO_NODE));
            self.push_member(array, Cow::Owned(string), leaf, NO_NODE);
        }
    }

    /// Puts `value` (blob entry `entry`) at the path of name-tree node `node` below `top` (the root, or the node
    /// whose object is exported), creating objects on the way (from the nearest one placed
    /// already). Returns the tree node of the value, or `None`, changing nothing, where the
    /// path meets a value, is an object in this entity, or is deeper than
    /// [`MAX_PATH_SEGMENTS`].
    pub(crate) fn place(
        &mut self,
        names: &'a KeyNames,
        node: u32,
        top: u32,
        (value, entry): (Value<'a>, u32),
    ) -> Option<u32> {
        if self.placed.get(node).is_some() {
            return None;
        }
        let mut chain = std::mem::take(&mut self.chain);
        chain.clear();
        let mut at = node;
        let mut object = loop {
            chain.push(at);
            let parent = names.parent(at);
            if parent == top {
                break ROOT;
            }
            if let Some(placed) = self.placed.get(parent) {
                break placed;
            }
            at = parent;
        };
        let object_node = &self.nodes[object as usize];
        let fits = object_node.leaf.is_none()
            && object_node.depth as usize + chain.len() <= MAX_PATH_SEGMENTS;
        if fits {
            for &n in chain.iter().rev() {
                object = self.push_member(object, Cow::Borrowed(names.segment(n)), None, n);
                self.placed.insert(n, object);
            }
            let leaf = &mut self.nodes[object as usize];
            (leaf.leaf, leaf.entry) = (Some(value), entry);
        }
        self.chain = chain;
        fits.then_some(object)
    }

    /// Builds the blob as a tree of objects and arrays, nested by `names` (the names of its
    /// store's keys), and returns the first float JSON has no number for (NaN, infinity), if
    /// any. O(the keys and the path nodes they need), with no recursion.
    pub(crate) fn build(&mut self, names: &'a KeyNames, blob: BlobRef<'a>) -> Option<(Key, f32)> {
        self.build_entries(names, blob.len(), blob)
    }

    /// [`build`](Tree::build) from any `len` entries (with unique keys), such as what an
    /// entity reads through its prototypes.
    pub(crate) fn build_entries(
        &mut self,
        names: &'a KeyNames,
        len: usize,
        entries: impl IntoIterator<Item = (Key, Value<'a>)>,
    ) -> Option<(Key, f32)> {
        self.clear();
        // A node a key, the root, and the objects on the way (grown as met).
        self.nodes.reserve(len + 1);
        let mut not_finite = None;
        for (entry, (key, value)) in (0..).zip(entries) {
            // A removed inherited key is not a member: the export lists it under `$remove`.
            if is_tombstone(value) {
                continue;
            }
            // Checked as the tree is built: no second pass over the values.
            if not_finite.is_none() {
                not_finite = check_finite(value).err().map(|x| (key, x));
            }
            let placed = names
                .named(key)
                .and_then(|node| self.place(names, node, names::ROOT, (value, entry)));
            if placed.is_none() {
                // Unnamed, too deep, or its path runs through another key's value: at the
                // top, by hash.
                let name = Cow::Owned(key.to_string());
                self.push_member(ROOT, name, Some((value, entry)), NO_NODE);
            }
        }
        self.shape_arrays(names);
        not_finite
    }

    /// Makes the root stand for name-tree node `node`, as the object at a path does in
    /// [`Store::export_at`](crate::store::Store::export_at): [`shape_arrays`](Tree::shape_arrays)
    /// then writes it as an array if `node` was one.
    pub(crate) fn root_is(&mut self, node: u32) {
        self.nodes[ROOT as usize].source = node;
    }

    /// Writes as arrays the objects whose name-tree node was an imported array and whose
    /// members are exactly its indices `0..n` (in any order), not all plain numbers: their
    /// members are relinked in index order. Any other object stays an object keyed by index,
    /// which reads back to the same keys: an array with a hole (a removed element), or one of
    /// numbers only (`[1, "x"]` whose `"x"` was removed), which would read back as a float
    /// array. (`[1, null]` is an array: its null is a member.)
    pub(crate) fn shape_arrays(&mut self, names: &KeyNames) {
        let mut slots = std::mem::take(&mut self.chain);
        for object in 0..self.nodes.len() {
            let node = &self.nodes[object];
            if node.source == NO_NODE || node.leaf.is_some() || !names.is_array(node.source) {
                continue;
            }
            let mut len = 0;
            let mut member = node.first;
            while member != NO_NODE {
                len += 1;
                member = self.nodes[member as usize].next;
            }
            slots.clear();
            slots.resize(len, NO_NODE);
            let mut member = self.nodes[object].first;
            let (mut whole, mut numbers) = (true, true);
            while member != NO_NODE {
                let node = &self.nodes[member as usize];
                match index_below(&node.name, len) {
                    // Distinct names under one node: each index is met once.
                    Some(i) => slots[i] = member,
                    None => whole = false,
                }
                numbers &= matches!(node.leaf, Some(Value::Float(_)));
                member = node.next;
            }
            if !whole || numbers {
                continue;
            }
            for pair in slots.windows(2) {
                self.nodes[pair[0] as usize].next = pair[1];
            }
            if let (Some(&first), Some(&last)) = (slots.first(), slots.last()) {
                self.nodes[last as usize].next = NO_NODE;
                let node = &mut self.nodes[object];
                (node.first, node.last, node.array) = (first, last, true);
            }
        }
        self.chain = slots;
    }

    /// Writes the entity: compact, or `pretty` as designers write fixtures (one member a line,
    /// indented two spaces a level from `depth`, float arrays on one line: `[12.0, 0.0]`).
    /// Iterative: a path of any depth writes without recursion.
    pub(crate) fn write(&self, pretty: bool, depth: usize, out: &mut Vec<u8>) {
        let separator: &[u8] = if pretty { b", " } else { b"," };
        self.write_with(pretty, depth, out, |out, node, value| {
            write_member_value(out, &node.name, value, separator);
        });
    }

    /// Writes the entity as [`write`](Tree::write) does, each value by `leaf` (given the
    /// output, the value's tree node and the value).
    pub(crate) fn write_with(
        &self,
        pretty: bool,
        depth: usize,
        out: &mut Vec<u8>,
        mut leaf: impl FnMut(&mut Vec<u8>, &TreeNode<'a>, Value<'a>),
    ) {
        // Each open object or array, and its next member to write.
        let mut open: Vec<(u32, u32)> = Vec::new();
        self.open(ROOT, out, &mut open, &mut leaf);
        while let Some(top) = open.last_mut() {
            let (object, member) = *top;
            let node = &self.nodes[object as usize];
            if member == NO_NODE {
                open.pop();
                if pretty {
                    out.push(b'\n');
                    push_indent(out, depth + open.len());
                }
                out.push(if node.array { b']' } else { b'}' });
                continue;
            }
            top.1 = self.nodes[member as usize].next;
            if member != node.first {
                out.push(b',');
            }
            if pretty {
                out.push(b'\n');
                push_indent(out, depth + open.len());
            }
            if !node.array {
                write_str(out, &self.nodes[member as usize].name);
                out.extend_from_slice(if pretty { b": " } else { b":" });
            }
            self.open(member, out, &mut open, &mut leaf);
        }
    }

    /// Writes a value whole (by `leaf`), or an object's or array's opening (pushed on `open`).
    fn open(
        &self,
        node: u32,
        out: &mut Vec<u8>,
        open: &mut Vec<(u32, u32)>,
        leaf: &mut impl FnMut(&mut Vec<u8>, &TreeNode<'a>, Value<'a>),
    ) {
        let tree_node = &self.nodes[node as usize];
        match tree_node.leaf {
            Some(value) => leaf(out, tree_node, value),
            None if tree_node.first == NO_NODE => out.extend_from_slice(b"{}"),
            None => {
                out.push(if tree_node.array { b'[' } else { b'{' });
                open.push((node, tree_node.first));
            }
        }
    }
}

/// Whether `value` is a tombstone: a key removed from what an instance inherits.
pub(crate) fn is_tombstone(value: Value<'_>) -> bool {
    value.is_tombstone()
}

/// Writes the value of a member named `name`: `value`, or, for a [`Tree::push_strings`]
/// element (a tombstone leaf), its name as a string.
pub(crate) fn write_member_value(
    out: &mut Vec<u8>,
    name: &str,
    value: Value<'_>,
    separator: &[u8],
) {
    if is_tombstone(value) {
        write_str(out, name);
    } else {
        write_value(out, value, separator);
    }
}

/// Writes one value, for JSON and SJSON alike: strings with JSON's escapes, floats as
/// [`JsonF32`] writes them (a NaN or infinity as `null`; the checked exports refuse one before
/// writing), and float arrays on one line, elements separated by `separator` (`,` or `, ` in
/// JSON, a space in SJSON).
pub(crate) fn write_value(out: &mut Vec<u8>, value: Value<'_>, separator: &[u8]) {
    match value {
        Value::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
        Value::Float(f) => write_f32(out, f),
        Value::Str(s) => write_str(out, s),
        // A tombstone is no member's value: an entity's tree leaves it out and lists its key
        // under `$remove` (`Tree::push_strings`). Only a lone value could meet one here.
        Value::Null | Value::Tombstone => out.extend_from_slice(b"null"),
        Value::Floats(floats) => {
            out.push(b'[');
            for (i, f) in floats.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(separator);
                }
                write_f32(out, *f);
            }
            out.push(b']');
        }
    }
}

/// Writes `x` as [`JsonF32`] serializes it: a whole number up to 2^24 (its own shortest
/// form) as plain digits, here without going through a serializer; any other through
/// [`JsonF32`] itself.
pub(crate) fn write_f32(out: &mut Vec<u8>, x: f32) {
    // Saturating, NaN to 0: equal to `x` back only for a whole `x` (or minus zero).
    let whole = x as i32;
    #[allow(clippy::cast_precision_loss)] // Exact below 2^24, and only compared there.
    let back = whole as f32;
    // Minus zero is written "-0.0" by `JsonF32`.
    #[allow(clippy::float_cmp)] // Exactly whole, on purpose.
    let exact = back == x;
    if exact && x.abs() <= 16_777_216.0 && !(x == 0.0 && x.is_sign_negative()) {
        let mut n = whole.unsigned_abs();
        let mut digits = [0_u8; 11];
        let mut at = digits.len();
        loop {
            at -= 1;
            digits[at] = b"0123456789"[(n % 10) as usize];
            n /= 10;
            if n == 0 {
                break;
            }
        }
        if x < 0.0 {
            at -= 1;
            digits[at] = b'-';
        }
        out.extend_from_slice(&digits[at..]);
    } else if x.is_finite() && x.fract() != 0.0 {
        // Not whole: `JsonF32` hands it to `serde_json` as it is (its shortest form).
        write_leaf(out, &x);
    } else {
        write_leaf(out, &JsonF32(x));
    }
}

/// What each byte of a string is written as inside JSON quotes, as `serde_json` escapes it: 0
/// for the byte itself, else the letter after the backslash (`u` for `\u00XX`). Control
/// characters, `"` and `\` are escaped; everything else (DEL, non-ASCII) is written as it is.
static ESCAPE: [u8; 256] = {
    let mut table = [0_u8; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = b'u';
        byte += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0a] = b'n';
    table[0x0c] = b'f';
    table[0x0d] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// Writes `s` as a JSON string, byte for byte as `serde_json` writes it, in one pass over its
/// bytes: runs that need no escape are copied whole.
pub(crate) fn write_str(out: &mut Vec<u8>, s: &str) {
    write_str_bytes(out, s.as_bytes());
}

/// Eight bytes with each byte `b`.
const fn splat(b: u8) -> u64 {
    u64::from_ne_bytes([b; 8])
}

/// Whether any of the eight bytes of `word` needs an escape: below 0x20, `"` or `\`. Exact: a
/// subtraction's borrow runs on only past a byte that matches, so a byte is flagged wrongly
/// only in a word where another is flagged rightly.
fn needs_escape(word: u64) -> bool {
    let has_zero = |v: u64| v.wrapping_sub(splat(1)) & !v & splat(0x80);
    let below_space = word.wrapping_sub(splat(0x20)) & !word & splat(0x80);
    below_space | has_zero(word ^ splat(b'"')) | has_zero(word ^ splat(b'\\')) != 0
}

/// [`write_str`] of the bytes of a string (UTF-8, as a validated blob holds it): runs of
/// eight bytes with nothing to escape are skipped a word at a time.
pub(crate) fn write_str_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut run = 0;
    let mut words = bytes.chunks_exact(8);
    let mut at = 0;
    for word in &mut words {
        if let Ok(word) = <[u8; 8]>::try_from(word)
            && needs_escape(u64::from_ne_bytes(word))
        {
            for i in at..at + 8 {
                escape_at(out, bytes, i, &mut run);
            }
        }
        at += 8;
    }
    for i in at..bytes.len() {
        escape_at(out, bytes, i, &mut run);
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

/// Writes the escape of `bytes[i]` if it needs one, after the run of bytes since `*run`,
/// which then starts after it.
#[inline]
fn escape_at(out: &mut Vec<u8>, bytes: &[u8], i: usize, run: &mut usize) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let byte = bytes[i];
    let escape = ESCAPE[byte as usize];
    if escape == 0 {
        return;
    }
    out.extend_from_slice(&bytes[*run..i]);
    if escape == b'u' {
        let hex = [HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 0xf)]];
        out.extend_from_slice(&[b'\\', b'u', b'0', b'0', hex[0], hex[1]]);
    } else {
        out.extend_from_slice(&[b'\\', escape]);
    }
    *run = i + 1;
}

/// A float, string or member name written by `serde_json`, so that escapes and float forms
/// are its own. Writing to a Vec cannot fail.
pub(crate) fn write_leaf<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    let _ = serde_json::to_writer(out, value);
}

fn push_indent(out: &mut Vec<u8>, depth: usize) {
    for _ in 0..depth {
        out.extend_from_slice(b"  ");
    }
}

#[cfg(test)]
mod writer_tests {
    use super::*;

    fn str_text(s: &str) -> String {
        let mut out = Vec::new();
        write_str(&mut out, s);
        String::from_utf8(out).unwrap()
    }

    fn f32_text(x: f32) -> String {
        let mut out = Vec::new();
        write_f32(&mut out, x);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let every_ascii: String = (0_u8..0x80).map(char::from).collect();
        for s in
            ["", "plain", "\"", "\\", "a\u{7f}b", "é\u{1}\u{1f}—\n\r\t\u{8}\u{c}/", &every_ascii]
        {
            assert_eq!(str_text(s), serde_json::to_string(s).unwrap(), "{s:?}");
        }
        assert_eq!(str_text("a\"b\\c\u{1}"), r#""a\"b\\c\u0001""#);
    }

    #[test]
    fn floats_are_written_as_json_f32_serializes_them() {
        let cases = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            17.0,
            9.0,
            10.0,
            99.0,
            100.0,
            16_777_216.0,
            -16_777_216.0,
            16_777_218.0,
            123_456_792.0,
            1e13,
            0.5,
            -2.5,
            1e-7,
            f32::MAX,
            f32::MIN_POSITIVE,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ];
        for x in cases {
            assert_eq!(f32_text(x), serde_json::to_string(&JsonF32(x)).unwrap(), "{x}");
        }
        assert_eq!(f32_text(-16_777_216.0), "-16777216");
        assert_eq!(f32_text(f32::NAN), "null");
        assert_eq!(f32_text(-0.0), "-0.0");
    }

    proptest::proptest! {
        #[test]
        fn any_string_is_escaped_as_serde_json_escapes_it(s in "(\\PC|[\u{0}-\u{1f}\"\\\\\u{7f}])*") {
            proptest::prop_assert_eq!(str_text(&s), serde_json::to_string(&s).unwrap());
        }

        #[test]
        #[allow(clippy::cast_precision_loss)] // Whole numbers past 2^24 round: cases too.
        fn any_float_is_written_as_json_f32_serializes_it(bits in proptest::num::u32::ANY, whole in -20_000_000_i32..20_000_000) {
            for x in [f32::from_bits(bits), whole as f32] {
                proptest::prop_assert_eq!(f32_text(x), serde_json::to_string(&JsonF32(x)).unwrap());
            }
        }
    }
}
