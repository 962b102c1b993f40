//! Loading a save of key hash 1: every key rehashed to key hash 2, from its name in the save
//! or from a path the caller knows.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;

use super::error::{LoadError, StoreError};
use crate::blob::layout;
use crate::handle_map::{HandleMap, Id};
use crate::key::{Key, KeyPath, v1, v2};
use crate::names::{KeyNames, ROOT, label};
use crate::store::Span;

/// How to load a save: the paths of keys that a save of key hash 1 holds without names, and
/// the threads that check the arena. Built, then used, as [`std::fs::OpenOptions`] is: a store
/// is read with [`load`](LoadOptions::load) (a file) or [`load_bytes`](LoadOptions::load_bytes),
/// a save read in place with [`view`](LoadOptions::view) or
/// [`view_with_key_names`](LoadOptions::view_with_key_names).
/// [`Store::from_bytes`](crate::Store::from_bytes), [`Store::load`](crate::Store::load) and
/// [`StoreView::new`](crate::format::StoreView::new) are the same with the default options.
///
/// A store of key hash 1 recorded names only for keys a JSON import met; keys set with
/// `Blob::set` or `BlobMut::set` were saved as bare hashes. To rehash such a key, the loader
/// hashes each known path the old way, and the path that gives the key's old hash is its name.
///
/// # Examples
///
/// ```
/// use datacomp::{LoadOptions, Store};
///
/// let options = LoadOptions::new().known_keys(["name", "stats.health", "/a.b/c"]);
/// let store = options.load_bytes(&Store::new().to_bytes())?;
/// assert!(store.is_empty());
/// # Ok::<(), datacomp::LoadError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadOptions {
    known: Vec<String>,
    /// At most this many threads check the arena; `None`: one per core.
    pub(crate) threads: Option<usize>,
}

impl LoadOptions {
    /// Options that know no paths: a save of key hash 1 loads only if it names every key.
    #[must_use]
    pub fn new() -> LoadOptions {
        LoadOptions::default()
    }

    /// Adds paths that keys of a key hash 1 save may have: dotted (`stats.health`), or JSON
    /// Pointers (`/a.b/c`) for member names that hold a dot. A path the save does not use
    /// costs nothing and is not recorded; one it uses becomes the key's name in the store.
    #[must_use]
    pub fn known_keys<'a>(mut self, paths: impl IntoIterator<Item = &'a str>) -> LoadOptions {
        self.known.extend(paths.into_iter().map(str::to_owned));
        self
    }

    /// Checks the arena on at most `threads` threads (1: on the calling thread only). By
    /// default a load uses one thread per core for an arena of 1 MiB or more, and the calling
    /// thread alone below that.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{LoadOptions, Store};
    ///
    /// let bytes = Store::new().to_bytes();
    /// let one_thread = LoadOptions::new().threads(1);
    /// assert!(one_thread.load_bytes(&bytes)?.is_empty());
    /// assert!(one_thread.view(&bytes)?.is_empty());
    /// # Ok::<(), datacomp::LoadError>(())
    /// ```
    #[must_use]
    pub fn threads(mut self, threads: usize) -> LoadOptions {
        self.threads = Some(threads.max(1));
        self
    }
}

/// A key hash 1 key that a name or a known path explains.
struct Explained<'a> {
    /// Its name in the save (a JSON Pointer), which a store recorded: kept even when no
    /// entity holds it.
    saved: Option<KeyPath<'a>>,
    /// Else the first known path with its old hash, and another one, if there is one. Names
    /// are built only for paths an entity uses, so a long list of paths costs little.
    known: Option<KeyPath<'a>>,
    rival: Option<KeyPath<'a>>,
    /// Whether an entity holds it.
    used: bool,
}

impl Explained<'_> {
    /// The key's name (a saved one, else its known path).
    fn name(&self) -> KeyPath<'_> {
        match (self.saved, self.known) {
            (Some(name), _) | (None, Some(name)) => name,
            (None, None) => unreachable!("INVARIANT: an entry has a saved name or a known path"),
        }
    }
}

/// Rehashes the keys of every entity of `index` in `arena` (checked spans, valid blobs) from key
/// hash 1 to key hash 2, and returns the key names under their new keys. `names` are the
/// save's `(old key, JSON Pointer)` pairs. On an error `arena` is unchanged.
///
/// Work and memory grow with the keys the save holds and names, not with the known paths:
/// each known path costs one hash, and is kept only if an entity holds its old key.
pub(crate) fn rehash(
    index: &HandleMap<Span>,
    arena: &mut [u32],
    names: &[(Key, &str)],
    options: &LoadOptions,
) -> Result<KeyNames, LoadError> {
    // Every key an entity holds, with the first entity (in dense order) that holds it.
    let mut held: BTreeMap<Key, Id> = BTreeMap::new();
    for (id, span) in index {
        for &raw in layout::keys(&arena[span.range()]) {
            held.entry(Key::from_raw(raw)).or_insert(id);
        }
    }

    // Old key -> its name: the save's names first, since they are what the store recorded.
    let mut explained: BTreeMap<Key, Explained<'_>> = names
        .iter()
        .map(|&(old, pointer)| {
            let used = held.contains_key(&old);
            let saved = KeyPath::pointer(pointer);
            (old, Explained { saved, known: None, rival: None, used })
        })
        .collect();
    for text in &options.known {
        let path = KeyPath::pointer(text).unwrap_or_else(|| KeyPath::dotted(text));
        let old = v1::path(path.segments());
        if !held.contains_key(&old) {
            // No entity needs it: a path list of millions costs no entry per path.
            continue;
        }
        let entry = explained.entry(old).or_insert(Explained {
            saved: None,
            known: None,
            rival: None,
            used: true,
        });
        match (entry.saved, &entry.known) {
            (Some(_), _) => {}
            (None, None) => entry.known = Some(path),
            (None, Some(first)) => {
                if entry.rival.is_none() && !first.segments().eq(path.segments()) {
                    entry.rival = Some(path);
                }
            }
        }
    }

    let unexplained: Vec<(Id, Key)> = held
        .iter()
        .filter(|(old, _)| !explained.contains_key(old))
        .map(|(&old, &id)| (id, old))
        .collect();
    if !unexplained.is_empty() {
        return Err(StoreError::UnexplainedKeys { keys: unexplained }.into());
    }

    // New key -> its name, and whether an entity holds it.
    let mut new_names: BTreeMap<Key, (KeyPath<'_>, bool)> = BTreeMap::new();
    let mut map = BTreeMap::new();
    for (&old, entry) in &explained {
        let name = entry.name();
        if let (true, Some(rival)) = (entry.used, &entry.rival) {
            let (first, second) = (label(name.segments()), label(rival.segments()));
            return Err(StoreError::AmbiguousKnownKeys { key: old, first, second }.into());
        }
        let key = name.key();
        match new_names.entry(key) {
            Entry::Vacant(vacant) => {
                vacant.insert((name, entry.used));
            }
            Entry::Occupied(mut other) => match (other.get().1, entry.used) {
                (true, true) => {
                    let (first, second) = (label(other.get().0.segments()), label(name.segments()));
                    return Err(StoreError::UpgradeCollision { key, first, second }.into());
                }
                // A saved name that no entity holds gives way to one that an entity does (or,
                // both unheld, to the first): it names no value, so nothing is lost, and
                // refusing would leave the save unloadable, since no option can drop it.
                (false, true) => {
                    other.insert((name, true));
                }
                (_, false) => continue,
            },
        }
        if entry.used {
            map.insert(old, key);
        }
    }

    // Every key an entity holds is in `map`, and `map` is one to one: each blob keeps distinct
    // keys. Spans do not overlap (checked), so each key is rehashed once.
    for span in index.values() {
        for raw in layout::keys_mut(&mut arena[span.range()]) {
            *raw =
                map.get(&Key::from_raw(*raw)).expect("INVARIANT: every held key is mapped").raw();
        }
    }
    let mut tree = KeyNames::new();
    for (path, _) in new_names.values() {
        // One path a key, each hashing to its key: recording cannot collide.
        let recorded = tree.record(path);
        debug_assert!(recorded.is_ok(), "distinct keys");
    }
    Ok(tree)
}

/// For a save of key hash 2: each named key whose path holds an empty segment (the only keys
/// key hash 3 gives another value), as (its key-hash-2 value, its key now), found in one pass
/// over the name tree, parents first.
pub(crate) fn hash2_changes(names: &KeyNames) -> Vec<(Key, Key)> {
    // Per node (the root first): its key-hash-2 value, where that is not its key now.
    let mut old: Vec<Option<Key>> = vec![None; names.node_count() + 1];
    let mut changes = Vec::new();
    for node in 1..=names.node_count() as u32 {
        let (parent, segment) = (names.parent(node), names.segment(node));
        let parent_old = old[parent as usize];
        if !segment.is_empty() && parent_old.is_none() {
            continue;
        }
        let key = if parent == ROOT {
            v2::first(segment)
        } else {
            v2::child(parent_old.unwrap_or_else(|| names.key(parent)), segment)
        };
        old[node as usize] = Some(key);
        if names.is_named(node) {
            changes.push((key, names.key(node)));
        }
    }
    changes
}

/// Rewrites the keys of a save of key hash 2 in `arena` (the blobs of `index`) to key hash 3:
/// only keys whose names hold an empty segment change ([`hash2_changes`]). One pass over the
/// keys, and none when no name holds an empty segment.
///
/// # Errors
///
/// [`StoreError::UpgradeCollision`] for an entity that would hold a rehashed key twice (it
/// held, unnamed, the key the name now has).
pub(crate) fn from_hash2(
    index: &HandleMap<Span>,
    arena: &mut [u32],
    names: &KeyNames,
) -> Result<(), LoadError> {
    let changes = hash2_changes(names);
    if changes.is_empty() {
        return Ok(());
    }
    let map: fxhash::FxHashMap<Key, Key> = changes.into_iter().collect();
    let mut keys = Vec::new();
    for span in index.values() {
        let mut rewritten = false;
        for raw in layout::keys_mut(&mut arena[span.range()]) {
            if let Some(new) = map.get(&Key::from_raw(*raw)) {
                *raw = new.raw();
                rewritten = true;
            }
        }
        if !rewritten {
            continue;
        }
        keys.clear();
        keys.extend_from_slice(layout::keys(&arena[span.range()]));
        keys.sort_unstable();
        if let Some(pair) = keys.windows(2).find(|pair| pair[0] == pair[1]) {
            let key = Key::from_raw(pair[0]);
            let first = names.named(key).map_or_else(|| key.to_string(), |n| names.label(n));
            let second = key.to_string();
            return Err(StoreError::UpgradeCollision { key, first, second }.into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blob::Blob;
    use crate::format::StoreError;
    use crate::store::Store;

    /// A key hash 1 save whose entity holds `held` and whose names table names `named`.
    fn old_save(held: &[&str], named: &[&str]) -> Vec<u8> {
        let v1_key = |pointer: &str| v1::path(KeyPath::pointer(pointer).unwrap().segments());
        let mut store = Store::new();
        store.insert(&held.iter().map(|p| (v1_key(p), 1.0)).collect::<Blob>());
        let mut list: Vec<(Key, &str)> = named.iter().map(|&p| (v1_key(p), p)).collect();
        list.sort_unstable();
        // The flat key-name section of formats 1.0 and 1.1: count, (key, length) in key
        // order, the pointers.
        let mut section = (list.len() as u32).to_le_bytes().to_vec();
        for (key, pointer) in &list {
            section.extend_from_slice(&key.raw().to_le_bytes());
            section.extend_from_slice(&(pointer.len() as u32).to_le_bytes());
        }
        for (_, pointer) in &list {
            section.extend_from_slice(pointer.as_bytes());
        }
        let mut bytes = crate::format::save::to_bytes_with_list(&store, &section);
        bytes[12] = 1;
        let sections = usize::from(bytes[14]);
        bytes[24..28].fill(0);
        let crc = crc32fast::hash(&bytes[..32 + 24 * sections]);
        bytes[24..28].copy_from_slice(&crc.to_le_bytes());
        bytes
    }

    #[test]
    fn keys_named_in_the_save_rehash_from_their_names_and_names_win_over_known_paths() {
        let bytes =
            old_save(&["/stats/health", "/a.b/c~1d"], &["/stats/health", "/a.b/c~1d", "/x"]);
        // A known path is ignored for a key the save names.
        let options = LoadOptions::new().known_keys(["stats.health", "a.b.c/d"]);
        for store in [Store::from_bytes(&bytes), options.load_bytes(&bytes)] {
            let store = store.unwrap();
            let (_, blob) = store.iter().next().unwrap();
            assert_eq!(blob.get_float("stats.health"), Some(1.0));
            assert_eq!(blob.get_float(Key::path(&["a.b", "c/d"])), Some(1.0));
            assert_eq!(store.key_label(Key::path(&["a.b", "c/d"])), "/a.b/c~1d");
            assert_eq!(
                store.key_name(Key::parse("x")).as_deref(),
                Some("x"),
                "unheld names are kept"
            );
            assert_eq!(store.key_names().len(), 3);
        }
    }

    #[test]
    fn a_corrupt_old_name_is_refused_as_it_hashes_under_key_hash_1() {
        let mut bytes = old_save(&["/name"], &["/name"]);
        // The names section is the last; its one name is its last 5 bytes before padding.
        let at = bytes.windows(5).rposition(|w| w == b"/name").unwrap();
        bytes[at + 1] = b'N';
        // Fix the names section's crc: entry 6 of the table.
        let entry = 32 + 24 * 5;
        let offset = u64::from_le_bytes(bytes[entry + 8..entry + 16].try_into().unwrap());
        let len = u64::from_le_bytes(bytes[entry + 16..entry + 24].try_into().unwrap());
        let crc = crc32fast::hash(&bytes[offset as usize..(offset + len) as usize]);
        bytes[entry + 4..entry + 8].copy_from_slice(&crc.to_le_bytes());
        bytes[24..28].fill(0);
        let sections = usize::from(u16::from_le_bytes([bytes[14], bytes[15]]));
        let crc = crc32fast::hash(&bytes[..32 + 24 * sections]);
        bytes[24..28].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(
            Store::from_bytes(&bytes).unwrap_err(),
            LoadError::Store(StoreError::KeyName {
                index: 0,
                problem: "the name does not hash to its key"
            })
        );
    }
}
