//! [`KeyNames`]: a store's key names as a tree of interned segments.

use std::collections::BTreeMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use hashbrown::HashTable;

use crate::key::{Key, KeyError, KeyPath, MAX_PATH_SEGMENTS};

/// The root: the entity's own object. It has no segment and is never a name.
pub(crate) const ROOT: u32 = 0;

/// The node is the name of its key.
const NAMED: u8 = 1;
/// The node was an array in an imported document: its members are indices `0`, `1`, ...
pub(crate) const ARRAY: u8 = 2;
/// Scratch of an import: the node is a path of the entity being read.
const CLAIMED: u8 = 4;
/// The flags a name carries (saved, compared); `CLAIMED` is an import's scratch.
const KEPT: u8 = NAMED | ARRAY;

/// Bits of [`Node::end_flags`] that hold the end of the node's text.
const END_BITS: u32 = 56;
const END_MASK: u64 = (1 << END_BITS) - 1;

/// One segment of the tree. 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Node {
    // INVARIANT: less than this node's own number (parents come first), so the tree has no
    // cycle and a walk to the root ends.
    parent: u32,
    /// The key of the path from the root to this node.
    key: Key,
    // INVARIANT: the low 56 bits are where this node's text ends in `KeyNames::text`; it
    // starts where the previous node's ends (the root's is empty). The top 8 bits are flags.
    end_flags: u64,
}

impl Node {
    fn end(self) -> usize {
        (self.end_flags & END_MASK) as usize
    }

    fn flags(self) -> u8 {
        (self.end_flags >> END_BITS) as u8
    }

    fn set_flags(&mut self, flags: u8) {
        self.end_flags = (self.end_flags & END_MASK) | (u64::from(flags) << END_BITS);
    }
}

/// The hasher of the segment table, seeded at random once per process: names come from
/// untrusted documents, and fixed seeds would let one craft a table of collisions.
fn seed() -> &'static RandomState {
    static SEED: OnceLock<RandomState> = OnceLock::new();
    SEED.get_or_init(RandomState::new)
}

fn hash(parent: u32, segment: &str) -> u64 {
    seed().hash_one((parent, segment))
}

/// A store's key names: a tree of segments, each node a parent and a segment's text, so a
/// prefix that many keys share is stored once. A node that names a key is *named*; the key of
/// a node is the hash of its path.
///
/// ```text
///  nodes:  0 root   1 "stats"   2 "health"   3 "mana"   4 "name"
///  parent:   -        0           1            1          0
///  named:    -        -           yes          yes        yes
///  text:   "statshealthmananame"   (each node's text ends where the next one's starts)
///  segments: (parent, text) -> node, hashed;   keys: Key -> its named node, in key order
/// ```
///
/// The node numbers are internal: two equal trees may number their nodes differently, and
/// `==` compares names, not numbers.
#[derive(Clone, Default)]
pub(crate) struct KeyNames {
    // INVARIANT: `nodes[i - 1]` is node `i` (the root is implicit); every node is named or
    // the parent of another (outside an import, which prunes what it leaves unused); no two
    // children of one node have the same text.
    nodes: Vec<Node>,
    text: String,
    // INVARIANT: holds every node's number, hashed by `hash(parent, text)`.
    segments: HashTable<u32>,
    // INVARIANT: holds exactly the named nodes, by their key (one name per key).
    keys: BTreeMap<Key, u32>,
    undo: Option<Undo>,
    // INVARIANT: changed (to a number no tree had before) by every change of a node, a segment
    // or a kept flag; 0 only for a tree that never changed (no names). Two trees of one
    // version hold the same names, so what is made from the names (a store's export plans)
    // is kept for as long as the version is the same.
    version: u64,
    /// The dotted paths that [`known`](KeyNames::known) found last, by a fingerprint of their
    /// text ([`recent_slot`]), each with its key and valid while `version` is the one it was
    /// found at: a write of one of them again is one comparison of texts, with no hash
    /// ([`known_text`](KeyNames::known_text)). Empty until the first is found.
    recent: Vec<Recent>,
    /// What [`nested`](KeyNames::nested) found, and at which version.
    nested: Nested,
    /// [`memo`](KeyNames::memo)'s answer: `version << 16 | 1 << 15 | answer`, or 0.
    memo: Memo,
}

/// One `u16` found from the names, kept for the version it was found at.
#[derive(Default)]
struct Memo(AtomicU64);

impl Clone for Memo {
    fn clone(&self) -> Memo {
        Memo(AtomicU64::new(self.0.load(Ordering::Relaxed)))
    }
}

/// [`KeyNames::nested`]'s answers: the last version found not to nest (0, a tree without
/// names, does not), and the last found to nest (`u64::MAX`: none yet). Atomic: a store is
/// read from many threads, and each finds the same answers.
struct Nested {
    flat_at: AtomicU64,
    nested_at: AtomicU64,
}

impl Default for Nested {
    fn default() -> Nested {
        Nested::new()
    }
}

impl Nested {
    const fn new() -> Nested {
        Nested { flat_at: AtomicU64::new(0), nested_at: AtomicU64::new(u64::MAX) }
    }
}

impl Clone for Nested {
    fn clone(&self) -> Nested {
        let load = |at: &AtomicU64| AtomicU64::new(at.load(Ordering::Relaxed));
        Nested { flat_at: load(&self.flat_at), nested_at: load(&self.nested_at) }
    }
}

/// Slots of [`KeyNames::recent`].
const RECENT: usize = 32;
/// The longest path [`KeyNames::recent`] keeps: the slots hold at most 32 such.
const RECENT_BYTES: usize = 64;

/// The slot of [`KeyNames::recent`] for the dotted path `text`: its length and two of its
/// bytes (the last and the middle one), so that finding it costs no hash. Paths that share a
/// slot only evict each other: a hit compares the whole text.
#[inline]
fn recent_slot(text: &str) -> usize {
    let bytes = text.as_bytes();
    let last = bytes.last().map_or(0, |&byte| usize::from(byte));
    let middle = bytes.get(bytes.len() / 2).map_or(0, |&byte| usize::from(byte));
    (bytes.len() ^ last ^ middle << 2) % RECENT
}

/// A dotted path that names its key in the tree of version `version`.
#[derive(Clone)]
struct Recent {
    version: u64,
    key: Key,
    text: String,
}

/// The last version any tree took ([`KeyNames::version`]).
static VERSIONS: AtomicU64 = AtomicU64::new(0);

/// What [`KeyNames::rollback`] restores: the sizes at [`KeyNames::begin`], and the older
/// nodes that changed since.
#[derive(Clone, Default)]
struct Undo {
    nodes: usize,
    /// Older nodes and their flags before they changed.
    flags: Vec<(u32, u8)>,
}

impl KeyNames {
    /// No names. Does not allocate.
    pub(crate) const fn new() -> KeyNames {
        KeyNames {
            nodes: Vec::new(),
            text: String::new(),
            segments: HashTable::new(),
            keys: BTreeMap::new(),
            undo: None,
            version: 0,
            recent: Vec::new(),
            nested: Nested::new(),
            memo: Memo(AtomicU64::new(0)),
        }
    }

    /// `find(self)`, found once per version of the names (15 bits kept). One memo: its one
    /// user is the text formats' check of reserved top-level names (`text/link.rs`), which
    /// always passes the same `find`.
    #[inline]
    pub(crate) fn memo(&self, find: impl FnOnce(&KeyNames) -> u16) -> u16 {
        let kept = self.memo.0.load(Ordering::Relaxed);
        if kept >> 16 == self.version && kept & 1 << 15 != 0 {
            return (kept & 0x7fff) as u16;
        }
        let found = find(self) & 0x7fff;
        self.memo.0.store(self.version << 16 | 1 << 15 | u64::from(found), Ordering::Relaxed);
        found
    }

    /// Whether one name lies under another (`stats` and `stats.health` both name keys): only
    /// then can an entity's value shadow a path its prototype holds as an object, or the
    /// reverse (`store::proto`). O(1) while the names are the same version, else O(nodes)
    /// once.
    #[inline]
    pub(crate) fn nested(&self) -> bool {
        self.nested.flat_at.load(Ordering::Relaxed) != self.version && self.find_nested()
    }

    #[cold]
    #[inline(never)]
    fn find_nested(&self) -> bool {
        if self.nested.nested_at.load(Ordering::Relaxed) == self.version {
            return true;
        }
        // `under[n]`: a named node lies above node `n`. Parents come first (`Node::parent`).
        let mut under = vec![false; self.nodes.len() + 1];
        let mut nested = false;
        for n in 1..=self.nodes.len() {
            let parent = self.nodes[n - 1].parent as usize;
            under[n] = parent != 0 && (self.is_named(parent as u32) || under[parent]);
            if under[n] && self.is_named(n as u32) {
                nested = true;
                break;
            }
        }
        let at = if nested { &self.nested.nested_at } else { &self.nested.flat_at };
        at.store(self.version, Ordering::Relaxed);
        nested
    }

    /// A number that changes whenever the names do, and that no other set of names has: what
    /// is made from the names stays valid while it is the same.
    pub(crate) fn version(&self) -> u64 {
        self.version
    }

    /// Marks a change: a version no tree had.
    fn changed(&mut self) {
        self.version = VERSIONS.fetch_add(1, Ordering::Relaxed) + 1;
    }

    /// Number of names (named nodes).
    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there are no names.
    pub(crate) fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Number of nodes, without the root.
    pub(crate) fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Bytes of segment text.
    #[cfg(test)]
    pub(crate) fn text_len(&self) -> usize {
        self.text.len()
    }

    fn node(&self, node: u32) -> Node {
        self.nodes[node as usize - 1]
    }

    fn node_mut(&mut self, node: u32) -> &mut Node {
        &mut self.nodes[node as usize - 1]
    }

    /// The parent of `node` (not the root).
    pub(crate) fn parent(&self, node: u32) -> u32 {
        self.node(node).parent
    }

    /// The key of `node`'s path (not the root).
    pub(crate) fn key(&self, node: u32) -> Key {
        self.node(node).key
    }

    /// The segment of `node` (the root's is empty).
    pub(crate) fn segment(&self, node: u32) -> &str {
        if node == ROOT {
            return "";
        }
        let start = if node == 1 { 0 } else { self.node(node - 1).end() };
        &self.text[start..self.node(node).end()]
    }

    fn flags(&self, node: u32) -> u8 {
        if node == ROOT { 0 } else { self.node(node).flags() }
    }

    /// Whether `node` names its key.
    pub(crate) fn is_named(&self, node: u32) -> bool {
        self.flags(node) & NAMED != 0
    }

    /// Whether `node` was an array in an imported document.
    // Used by JSON import and export only.
    #[cfg_attr(not(feature = "json"), allow(dead_code))]
    pub(crate) fn is_array(&self, node: u32) -> bool {
        self.flags(node) & ARRAY != 0
    }

    /// The named node of `key`.
    pub(crate) fn named(&self, key: Key) -> Option<u32> {
        self.keys.get(&key).copied()
    }

    /// The named nodes, in ascending key order.
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = (Key, u32)> + '_ {
        self.keys.iter().map(|(&key, &node)| (key, node))
    }

    /// The child of `parent` with this segment.
    pub(crate) fn child(&self, parent: u32, segment: &str) -> Option<u32> {
        self.segments
            .find(hash(parent, segment), |&n| {
                self.node(n).parent == parent && self.segment(n) == segment
            })
            .copied()
    }

    /// The child of `parent` with this segment, added if there is none.
    ///
    /// # Panics
    ///
    /// Past 2^32 - 1 nodes or 2^56 bytes of text.
    pub(crate) fn intern(&mut self, parent: u32, segment: &str) -> u32 {
        let hashed = hash(parent, segment);
        if let Some(&found) = self
            .segments
            .find(hashed, |&n| self.node(n).parent == parent && self.segment(n) == segment)
        {
            return found;
        }
        let number = u32::try_from(self.nodes.len() + 1)
            .ok()
            .filter(|&n| n != u32::MAX)
            .expect("key names: more than 2^32 - 2 segments");
        self.changed();
        self.text.push_str(segment);
        let end = self.text.len() as u64;
        assert!(end <= END_MASK, "key names: more than 2^56 bytes of text");
        let key = if parent == ROOT { Key::new(segment) } else { self.key(parent).child(segment) };
        self.nodes.push(Node { parent, key, end_flags: end });
        let (nodes, text) = (&self.nodes, &self.text);
        self.segments.insert_unique(hashed, number, |&n| node_hash(nodes, text, n));
        number
    }

    /// Sets `flag` on `node`, remembering the old flags of an older node during an import.
    fn set_flag(&mut self, node: u32, flag: u8) {
        let flags = self.node(node).flags();
        if flags & flag != 0 {
            return;
        }
        if let Some(undo) = &mut self.undo
            && (node as usize) <= undo.nodes
        {
            undo.flags.push((node, flags));
        }
        self.changed();
        self.node_mut(node).set_flags(flags | flag);
    }

    /// Makes `node` the name of its key, or returns the node that names the key already.
    pub(crate) fn name(&mut self, node: u32) -> Result<Key, u32> {
        let key = self.key(node);
        match self.keys.get(&key) {
            Some(&named) if named == node => Ok(key),
            Some(&other) => Err(other),
            None => {
                self.keys.insert(key, node);
                self.set_flag(node, NAMED);
                Ok(key)
            }
        }
    }

    /// Marks `node` as an array of imported members.
    pub(crate) fn set_array(&mut self, node: u32) {
        if node != ROOT {
            self.set_flag(node, ARRAY);
        }
    }

    /// Claims `node` for the entity an import reads; false if it was claimed already (the
    /// same path twice in one entity).
    // Used by JSON import and export only.
    #[cfg_attr(not(feature = "json"), allow(dead_code))]
    pub(crate) fn claim(&mut self, node: u32) -> bool {
        let n = self.node_mut(node);
        let flags = n.flags();
        n.set_flags(flags | CLAIMED);
        flags & CLAIMED == 0
    }

    /// Releases a claim of [`claim`](KeyNames::claim).
    // Used by JSON import and export only.
    #[cfg_attr(not(feature = "json"), allow(dead_code))]
    pub(crate) fn unclaim(&mut self, node: u32) {
        if let Some(n) = self.nodes.get_mut((node as usize).wrapping_sub(1)) {
            let flags = n.flags();
            n.set_flags(flags & !CLAIMED);
        }
    }

    /// Whether `node` is claimed by the entity being imported.
    // Used by JSON import and export only.
    #[cfg_attr(not(feature = "json"), allow(dead_code))]
    pub(crate) fn is_claimed(&self, node: u32) -> bool {
        self.flags(node) & CLAIMED != 0
    }

    /// The two paths of the collision an import meets when `node` (the path it reads) hashes
    /// to the key `other` names already: first `other`, then `node`. Paths of the entity being
    /// imported are shown as written (dotted); a path the store knew already as the store shows
    /// it, dotted only where that reads back.
    // Used by JSON import and export only.
    #[cfg_attr(not(feature = "json"), allow(dead_code))]
    pub(crate) fn collision_paths(&self, other: u32, node: u32) -> (String, String) {
        if self.is_claimed(other) {
            // The empty name shows as its pointer, `/`, not as nothing.
            let shown = |n| match self.dotted(n) {
                dotted if dotted.is_empty() => self.label(n),
                dotted => dotted,
            };
            (shown(other), shown(node))
        } else {
            (self.label(other), self.label(node))
        }
    }

    /// Starts a change that [`rollback`](KeyNames::rollback) can undo.
    pub(crate) fn begin(&mut self) {
        self.undo = Some(Undo { nodes: self.nodes.len(), flags: Vec::new() });
    }

    /// Keeps the change since [`begin`](KeyNames::begin), dropping the nodes it added that
    /// name nothing (the path of an empty object, say).
    pub(crate) fn commit(&mut self) {
        if let Some(undo) = self.undo.take() {
            self.rebuild_from(undo.nodes as u32 + 1, |_| true);
        }
    }

    /// Undoes every change since [`begin`](KeyNames::begin).
    pub(crate) fn rollback(&mut self) {
        let Some(undo) = self.undo.take() else {
            return;
        };
        self.changed();
        for number in (undo.nodes + 1..=self.nodes.len()).rev() {
            let number = number as u32;
            self.forget_segment(number);
            if self.is_named(number) {
                self.keys.remove(&self.key(number));
            }
        }
        self.nodes.truncate(undo.nodes);
        let end = self.nodes.last().map_or(0, |n| n.end());
        self.text.truncate(end);
        for &(node, flags) in undo.flags.iter().rev() {
            if flags & NAMED == 0 && self.is_named(node) {
                self.keys.remove(&self.key(node));
            }
            // Claims were released before: an import rolls back after its entity.
            self.node_mut(node).set_flags(flags & !CLAIMED);
        }
    }

    /// Removes `node` from the segment table.
    fn forget_segment(&mut self, node: u32) {
        let hashed = hash(self.parent(node), self.segment(node));
        if let Ok(entry) = self.segments.find_entry(hashed, |&n| n == node) {
            entry.remove();
        }
    }

    /// Drops the names whose key `keep` refuses, then every node from `from` on that names
    /// nothing and leads to no name; nodes before `from` are kept. Renumbers what follows a
    /// dropped node. O(nodes from `from` on, and their text).
    fn rebuild_from(&mut self, from: u32, mut keep: impl FnMut(Key) -> bool) {
        let start = from as usize;
        let count = self.nodes.len();
        if start > count {
            return;
        }
        self.changed();
        let mut live = vec![false; count + 1 - start];
        for number in (start..=count).rev() {
            let node = self.node(number as u32);
            if node.flags() & NAMED != 0 {
                if keep(node.key) {
                    live[number - start] = true;
                } else {
                    self.keys.remove(&node.key);
                    self.node_mut(number as u32).set_flags(node.flags() & !NAMED);
                }
            }
            if live[number - start] && node.parent as usize >= start {
                live[node.parent as usize - start] = true;
            }
        }
        if live.iter().all(|&l| l) {
            return;
        }
        for number in start..=count {
            self.forget_segment(number as u32);
        }
        let text_start = if start == 1 { 0 } else { self.node(from - 1).end() };
        let tail_text = self.text.split_off(text_start);
        let tail = self.nodes.split_off(start - 1);
        // Old number -> new, for the kept nodes of the tail.
        let mut renumber = vec![0_u32; tail.len()];
        let mut text_at = 0;
        for (i, node) in tail.iter().enumerate() {
            let segment = &tail_text[text_at..node.end() - text_start];
            text_at = node.end() - text_start;
            if !live[i] {
                continue;
            }
            let parent = if node.parent >= from {
                renumber[(node.parent - from) as usize]
            } else {
                node.parent
            };
            let number = self.nodes.len() as u32 + 1;
            renumber[i] = number;
            self.text.push_str(segment);
            let mut kept = Node { parent, key: node.key, end_flags: self.text.len() as u64 };
            kept.set_flags(node.flags());
            self.nodes.push(kept);
            let (nodes, text) = (&self.nodes, &self.text);
            self.segments
                .insert_unique(hash(parent, segment), number, |&n| node_hash(nodes, text, n));
            if kept.flags() & NAMED != 0 {
                self.keys.insert(kept.key, number);
            }
        }
    }

    /// Keeps only the names whose key `keep` accepts, and the nodes that lead to them.
    pub(crate) fn retain(&mut self, keep: impl FnMut(Key) -> bool) {
        self.rebuild_from(1, keep);
    }

    /// The nodes from the root's child down to `node`, in path order.
    pub(crate) fn path_of(&self, mut node: u32, out: &mut Vec<u32>) {
        out.clear();
        while node != ROOT {
            out.push(node);
            node = self.parent(node);
        }
        out.reverse();
    }

    /// The segments of `node`'s path, in order.
    pub(crate) fn segments_of(&self, node: u32) -> Vec<&str> {
        let mut path = Vec::new();
        self.path_of(node, &mut path);
        path.into_iter().map(|n| self.segment(n)).collect()
    }

    /// `node`'s path, dotted: `stats.health`.
    pub(crate) fn dotted(&self, node: u32) -> String {
        self.segments_of(node).join(".")
    }

    /// `node`'s path as a JSON Pointer: `/a.b/c`.
    pub(crate) fn pointer(&self, node: u32) -> String {
        let mut pointer = String::new();
        for segment in self.segments_of(node) {
            crate::key::push_pointer_segment(&mut pointer, segment);
        }
        pointer
    }

    /// How people see `node`'s path (see [`label`]).
    pub(crate) fn label(&self, node: u32) -> String {
        label(self.segments_of(node).into_iter())
    }

    /// The node of `path`, if the tree has it (named or not).
    // Used by JSON import and export only.
    #[cfg_attr(not(feature = "json"), allow(dead_code))]
    pub(crate) fn find_path(&self, path: &KeyPath<'_>) -> Option<u32> {
        self.find(path)
    }

    /// The proper ancestors of `node` below the root, nearest first: `stats` for
    /// `stats.health`. O(depth).
    pub(crate) fn ancestors(&self, node: u32) -> impl Iterator<Item = u32> + '_ {
        // The root has no parent to ask for: the walk ends before it.
        let below_root = |at: u32| (at != ROOT).then_some(at);
        std::iter::successors(below_root(self.parent(node)), move |&at| below_root(self.parent(at)))
    }

    /// Whether `top` is a proper ancestor of `node`. O(depth).
    pub(crate) fn is_under(&self, mut node: u32, top: u32) -> bool {
        while node != ROOT {
            node = self.parent(node);
            if node == top {
                return true;
            }
        }
        false
    }

    /// The node of `path`, if the tree has it (named or not).
    // Used by JSON import and export only.
    #[cfg_attr(not(feature = "json"), allow(dead_code))]
    pub(crate) fn find(&self, path: &KeyPath<'_>) -> Option<u32> {
        let mut node = ROOT;
        for segment in path.segments() {
            node = self.child(node, &segment)?;
        }
        Some(node)
    }

    /// Whether `node`'s path is `path`. No allocation unless a segment holds an escape.
    pub(crate) fn is_path(&self, node: u32, path: &KeyPath<'_>) -> bool {
        let text = path.as_str();
        let (rest, separator) = if path.is_pointer() { (&text[1..], '/') } else { (text, '.') };
        let mut node = node;
        for segment in rest.rsplit(separator) {
            if node == ROOT {
                return false;
            }
            let same = if path.is_pointer() {
                crate::key::unescape(segment) == self.segment(node)
            } else {
                segment == self.segment(node)
            };
            if !same {
                return false;
            }
            node = self.parent(node);
        }
        node == ROOT
    }

    /// The key of the dotted path `text` if [`known_again`](KeyNames::known_again) found it
    /// since the names last changed, without hashing `text`: a length and a byte compare with
    /// the path found last for its slot. `None` is no answer: the caller takes the full path.
    #[inline]
    pub(crate) fn known_text(&self, text: &str) -> Option<Key> {
        let recent = self.recent.get(recent_slot(text))?;
        (recent.version == self.version && recent.text == text).then_some(recent.key)
    }

    /// As [`known`](KeyNames::known), remembering what it finds: a path found since the names
    /// last changed is one comparison with the path found last for its text's slot.
    #[inline]
    pub(crate) fn known_again(&mut self, path: &KeyPath<'_>) -> Option<Key> {
        let text = path.as_str();
        let slot = recent_slot(text);
        if !path.is_pointer()
            && let Some(recent) = self.recent.get(slot)
            && recent.version == self.version
            && recent.text == text
        {
            return Some(recent.key);
        }
        let key = self.known(path)?;
        if text.len() <= RECENT_BYTES {
            if self.recent.is_empty() {
                // A version no tree has: every slot starts empty.
                let empty =
                    Recent { version: u64::MAX, key: Key::from_raw(0), text: String::new() };
                self.recent.resize(RECENT, empty);
            }
            let recent = &mut self.recent[slot];
            (recent.version, recent.key) = (self.version, key);
            recent.text.clear();
            recent.text.push_str(text);
        }
        Some(key)
    }

    /// The key of the dotted `path` if this tree names that key by exactly `path`, and `path`
    /// is one a write may name (at most [`MAX_PATH_SEGMENTS`] segments, not a raw key's
    /// label): then checking `path` finds no collision and recording it changes nothing, so a
    /// write of a name the store knows skips both. One map lookup and a comparison a segment
    /// (the node's text against the path's, from the end; a node whose text holds a `.` never
    /// matches, as [`is_path`](KeyNames::is_path) splits the path at every `.`). `None`
    /// otherwise, and for a JSON Pointer: the full checks decide.
    #[inline]
    pub(crate) fn known(&self, path: &KeyPath<'_>) -> Option<Key> {
        let text = path.as_str().as_bytes();
        // A raw key's label starts with '#': `check_not_raw` decides those.
        if path.is_pointer() || text.first() == Some(&b'#') {
            return None;
        }
        let key = path.key();
        let (nodes, names) = (&self.nodes, self.text.as_bytes());
        let mut node = *self.keys.get(&key)? as usize;
        let mut rest = text;
        for _ in 0..MAX_PATH_SEGMENTS {
            // Node `node` is `nodes[node - 1]`; its text starts where the previous one's ends.
            let this = nodes.get(node.wrapping_sub(1))?;
            let start = if node == 1 { 0 } else { nodes.get(node - 2)?.end() };
            let segment = names.get(start..this.end())?;
            let (head, tail) = rest.split_at_checked(rest.len().checked_sub(segment.len())?)?;
            if tail != segment || segment.contains(&b'.') {
                return None;
            }
            node = this.parent as usize;
            if node == ROOT as usize {
                return head.is_empty().then_some(key);
            }
            rest = head.strip_suffix(b".")?;
        }
        None
    }

    /// The key of `path`, or the collision of its name with the one recorded for its key.
    pub(crate) fn check(&self, path: &KeyPath<'_>) -> Result<Key, KeyError> {
        let key = path.key();
        match self.keys.get(&key) {
            Some(&node) if !self.is_path(node, path) => Err(KeyError::Collision {
                key,
                name: label(path.segments()),
                known: self.label(node),
            }),
            _ => Ok(key),
        }
    }

    /// Records `path` as the name of its key, unless its key has another name.
    pub(crate) fn record(&mut self, path: &KeyPath<'_>) -> Result<Key, KeyError> {
        let key = self.check(path)?;
        if !self.keys.contains_key(&key) {
            let mut node = ROOT;
            for segment in path.segments() {
                node = self.intern(node, &segment);
            }
            let named = self.name(node);
            debug_assert_eq!(named, Ok(key), "a path's node has the path's key");
        }
        Ok(key)
    }

    /// For each node of `other`, in order, the node of this tree with the same path, or
    /// `u32::MAX` where there is none. O(other's nodes and text).
    fn correspondence(&self, other: &KeyNames) -> Vec<u32> {
        let mut map = vec![u32::MAX; other.nodes.len() + 1];
        map[0] = ROOT;
        for number in 1..=other.nodes.len() as u32 {
            let parent = map[other.parent(number) as usize];
            if parent != u32::MAX {
                map[number as usize] =
                    self.child(parent, other.segment(number)).unwrap_or(u32::MAX);
            }
        }
        map
    }

    /// Takes every name of `other` that this tree lacks (and its array marks), all or nothing.
    pub(crate) fn merge(&mut self, other: &KeyNames) -> Result<(), KeyError> {
        let mut map = self.check_merge(other)?;
        for number in 1..=other.nodes.len() as u32 {
            let mut ours = map[number as usize];
            if ours == u32::MAX {
                ours = self.intern(map[other.parent(number) as usize], other.segment(number));
                map[number as usize] = ours;
            }
            let flags = other.flags(number) & KEPT;
            if flags & NAMED != 0 {
                let named = self.name(ours);
                debug_assert!(named.is_ok(), "checked above");
            }
            if flags & ARRAY != 0 {
                self.set_flag(ours, ARRAY);
            }
        }
        Ok(())
    }

    /// Nodes in order with their parent, text and saved flags: what a save writes.
    /// The correspondence of `other`'s nodes to this tree's (as `correspondence`), unless a key
    /// that both name is named by different paths: the first such key, `other`'s name first.
    pub(crate) fn check_merge(&self, other: &KeyNames) -> Result<Vec<u32>, KeyError> {
        let map = self.correspondence(other);
        for (&key, &theirs) in &other.keys {
            if let Some(&ours) = self.keys.get(&key)
                && map[theirs as usize] != ours
            {
                let (name, known) = (other.label(theirs), self.label(ours));
                return Err(KeyError::Collision { key, name, known });
            }
        }
        Ok(map)
    }

    pub(crate) fn nodes(&self) -> impl Iterator<Item = (u32, &str, u8)> + '_ {
        (1..=(self.nodes.len() as u32))
            .map(|n| (self.parent(n), self.segment(n), self.flags(n) & KEPT))
    }
}

/// The hash of node `n` in the segment table, from the nodes and text themselves.
fn node_hash(nodes: &[Node], text: &str, n: u32) -> u64 {
    let node = nodes[n as usize - 1];
    let start = if n == 1 { 0 } else { nodes[n as usize - 2].end() };
    hash(node.parent, &text[start..node.end()])
}

/// How people see a path: dotted where the dotted text reads back as this very key in a KEY
/// argument (no segment holds a `.`, and it does not start as a pointer or a raw hash does),
/// else the JSON Pointer. So two keys never show alike: `{"a.b": 1, "a": {"b": 2}}` shows
/// `/a.b` and `a.b`.
pub(crate) fn label<S: AsRef<str>>(segments: impl Iterator<Item = S>) -> String {
    let segments: Vec<S> = segments.collect();
    let dotted = segments.iter().map(AsRef::as_ref).collect::<Vec<_>>().join(".");
    let reads_back = segments.iter().all(|s| !s.as_ref().contains('.'))
        && !dotted.is_empty()
        && !dotted.starts_with(['/', '#']);
    if reads_back {
        return dotted;
    }
    let mut pointer = String::new();
    for segment in &segments {
        crate::key::push_pointer_segment(&mut pointer, segment.as_ref());
    }
    pointer
}

impl PartialEq for KeyNames {
    /// The same names with the same array marks, whatever the nodes' numbers.
    fn eq(&self, other: &KeyNames) -> bool {
        // Most comparisons are of a tree and its copy (a snapshot, a loaded save): node for
        // node, no allocation.
        if self.nodes == other.nodes && self.text == other.text {
            return true;
        }
        self.nodes.len() == other.nodes.len()
            && self.keys.len() == other.keys.len()
            && other.correspondence(self).iter().enumerate().skip(1).all(|(ours, &theirs)| {
                theirs != u32::MAX && self.flags(ours as u32) & KEPT == other.flags(theirs) & KEPT
            })
    }
}

impl Eq for KeyNames {}

impl std::fmt::Debug for KeyNames {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter().map(|(key, node)| (key, self.label(node)))).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(text: &str) -> KeyPath<'_> {
        KeyPath::pointer(text).unwrap_or_else(|| KeyPath::dotted(text))
    }

    #[test]
    fn a_shared_prefix_is_stored_once() {
        let mut names = KeyNames::new();
        let long = "p".repeat(1000);
        for i in 0..100 {
            names.record(&path(&format!("{long}.m{i}"))).unwrap();
        }
        assert_eq!(names.len(), 100);
        assert_eq!(names.node_count(), 101);
        assert!(names.text_len() < 1000 + 100 * 3, "{}", names.text_len());
        let node = names.named(Key::path(&[&long, "m7"])).unwrap();
        assert_eq!(names.dotted(node), format!("{long}.m7"));
        assert_eq!(names.pointer(node), format!("/{long}/m7"));
    }

    #[test]
    fn labels_are_dotted_only_where_they_read_back() {
        let mut names = KeyNames::new();
        for text in ["/a.b/c", "a.b.c", "/#x", "/~1y", "/"] {
            names.record(&path(text)).unwrap();
        }
        let label = |text: &str| names.label(names.find(&path(text)).unwrap());
        assert_eq!(label("/a.b/c"), "/a.b/c");
        assert_eq!(label("a.b.c"), "a.b.c");
        assert_eq!(label("/#x"), "/#x");
        assert_eq!(label("/~1y"), "/~1y");
        assert_eq!(label("/"), "/");
    }

    #[test]
    fn a_collision_names_both_paths_and_changes_nothing() {
        let mut names = KeyNames::new();
        names.record(&path("sleep_haste_8")).unwrap();
        let before = names.clone();
        let err = names.record(&path("fury_sleep_272")).unwrap_err();
        let KeyError::Collision { name, known, .. } = err else { panic!("{err}") };
        assert_eq!(name, "fury_sleep_272");
        assert_eq!(known, "sleep_haste_8");
        assert_eq!(names, before);
        assert_eq!(names.node_count(), 1);
    }

    #[test]
    fn known_is_only_a_name_recorded_as_exactly_that_dotted_path() {
        let mut names = KeyNames::new();
        for text in ["stats.health", "sleep_haste_8", "/a.b", "/#0000002a", "name"] {
            names.record(&path(text)).unwrap();
        }
        let known = |text: &str| names.known(&KeyPath::dotted(text));
        assert_eq!(known("stats.health"), Some(Key::parse("stats.health")));
        assert_eq!(known("name"), Some(Key::parse("name")));
        assert_eq!(known("sleep_haste_8"), Some(Key::parse("sleep_haste_8")));
        // Its hash is sleep_haste_8's: the full check reports the collision.
        assert_eq!(Key::parse("fury_sleep_272"), Key::parse("sleep_haste_8"));
        assert_eq!(known("fury_sleep_272"), None);
        assert!(names.check(&path("fury_sleep_272")).is_err());
        // `a.b` is one segment there; dotted, it is two.
        assert_eq!(known("a.b"), None);
        assert_eq!(known("#0000002a"), None);
        // A prefix that names nothing, a longer path, and the same path as a pointer.
        assert_eq!(known("stats"), None);
        assert_eq!(known("x.stats.health"), None);
        assert_eq!(names.known(&path("/stats/health")), None);
        assert_eq!(known(".stats.health"), None);

        // Remembered, and forgotten when the names change.
        assert_eq!(names.known_again(&path("stats.health")), Some(Key::parse("stats.health")));
        assert_eq!(names.known_again(&path("stats.health")), Some(Key::parse("stats.health")));
        assert_eq!(names.known_again(&path("fury_sleep_272")), None);
        let version = names.version();
        names.record(&path("stats.mana")).unwrap();
        assert_ne!(names.version(), version);
        names.retain(|key| key != Key::parse("stats.health"));
        assert_eq!(names.known_again(&path("stats.health")), None);
    }

    #[test]
    fn known_text_is_a_text_found_again_since_the_names_last_changed() {
        let mut names = KeyNames::new();
        for text in ["stats.health", "xtats.health", "sleep_haste_8"] {
            names.record(&path(text)).unwrap();
        }
        let (health, twin) = (Key::parse("stats.health"), Key::parse("xtats.health"));
        assert_eq!(names.known_text("stats.health"), None, "not found yet");
        assert_eq!(names.known_again(&path("stats.health")), Some(health));
        assert_eq!(names.known_text("stats.health"), Some(health));
        // One fingerprint (length, last and middle byte), another text: no answer.
        assert_eq!(recent_slot("xtats.health"), recent_slot("stats.health"));
        assert_eq!(names.known_text("xtats.health"), None);
        assert_eq!(names.known_again(&path("xtats.health")), Some(twin));
        assert_eq!(names.known_text("xtats.health"), Some(twin));
        assert_eq!(names.known_text("stats.health"), None, "evicted by its slot's twin");
        assert_eq!(names.known_text(""), None);
        // A hash twin of a remembered name is not it.
        assert_eq!(names.known_again(&path("sleep_haste_8")), Some(Key::parse("sleep_haste_8")));
        assert_eq!(names.known_text("sleep_haste_8"), Some(Key::parse("sleep_haste_8")));
        assert_eq!(names.known_text("fury_sleep_272"), None);
        assert_eq!(names.known_again(&path("fury_sleep_272")), None);
        // A change of the names forgets every text, even of names it keeps.
        names.record(&path("stats.mana")).unwrap();
        assert_eq!(names.known_text("xtats.health"), None);
        assert_eq!(names.known_text("sleep_haste_8"), None);
        assert_eq!(names.known_again(&path("xtats.health")), Some(twin));
        names.retain(|key| key != twin);
        assert_eq!(names.known_text("xtats.health"), None);
        assert_eq!(names.known_again(&path("xtats.health")), None);
    }

    #[test]
    fn rollback_restores_nodes_names_and_marks() {
        let mut names = KeyNames::new();
        names.record(&path("a.b")).unwrap();
        let before = names.clone();
        names.begin();
        let a = names.find(&path("a")).unwrap();
        names.name(a).unwrap();
        names.set_array(a);
        names.record(&path("c.d.e")).unwrap();
        assert_eq!(names.len(), 3);
        names.rollback();
        assert_eq!(names, before);
        assert_eq!((names.len(), names.node_count(), names.text_len()), (1, 2, 2));
        assert!(!names.is_named(a) && !names.is_array(a));
        assert_eq!(names.find(&path("c")), None);
        // The tree still interns and finds after a rollback.
        names.record(&path("c.x")).unwrap();
        assert_eq!(names.dotted(names.named(Key::parse("c.x")).unwrap()), "c.x");
    }

    #[test]
    fn commit_drops_nodes_that_lead_to_no_name() {
        let mut names = KeyNames::new();
        names.record(&path("keep")).unwrap();
        names.begin();
        let empty = names.intern(ROOT, "empty");
        names.intern(empty, "deeper");
        let a = names.intern(ROOT, "a");
        let b = names.intern(a, "b");
        names.name(b).unwrap();
        names.commit();
        assert_eq!(names.node_count(), 3);
        assert_eq!(names.find(&path("empty")), None);
        let b = names.named(Key::parse("a.b")).unwrap();
        assert_eq!(names.dotted(b), "a.b");
        assert_eq!(names.child(names.find(&path("a")).unwrap(), "b"), Some(b));
        assert_eq!(names.text_len(), "keepab".len());
    }

    #[test]
    fn retain_keeps_the_names_asked_for_and_their_prefixes() {
        let mut names = KeyNames::new();
        for text in ["a.b", "a.c", "d", "e.f.g"] {
            names.record(&path(text)).unwrap();
        }
        names.retain(|key| key == Key::parse("a.c") || key == Key::parse("e.f.g"));
        let mut expected = KeyNames::new();
        for text in ["e.f.g", "a.c"] {
            expected.record(&path(text)).unwrap();
        }
        assert_eq!(names, expected, "equal whatever the node order");
        assert_eq!(names.node_count(), 5);
    }

    #[test]
    fn merge_takes_missing_names_and_refuses_a_collision_whole() {
        let mut ours = KeyNames::new();
        ours.record(&path("x.y")).unwrap();
        let mut theirs = KeyNames::new();
        theirs.record(&path("x.z")).unwrap();
        theirs.record(&path("/a.b")).unwrap();
        let z = theirs.find(&path("x")).unwrap();
        theirs.set_array(z);
        ours.merge(&theirs).unwrap();
        assert_eq!(ours.len(), 3);
        assert!(ours.is_array(ours.find(&path("x")).unwrap()));
        assert_eq!(ours.label(ours.named(Key::new("a.b")).unwrap()), "/a.b");

        let mut other = KeyNames::new();
        other.record(&path("fury_sleep_272")).unwrap();
        other.record(&path("new.one")).unwrap();
        ours.record(&path("sleep_haste_8")).unwrap();
        let before = ours.clone();
        let err = ours.merge(&other).unwrap_err();
        let KeyError::Collision { name, known, .. } = err else { panic!("{err}") };
        assert_eq!((name.as_str(), known.as_str()), ("fury_sleep_272", "sleep_haste_8"));
        assert_eq!(ours, before);
    }

    #[test]
    fn claims_mark_paths_of_one_entity() {
        let mut names = KeyNames::new();
        let a = names.intern(ROOT, "a");
        assert!(names.claim(a));
        assert!(!names.claim(a));
        names.unclaim(a);
        assert!(names.claim(a));
        names.unclaim(a);
        assert_eq!(names.flags(a), 0);
    }
}
