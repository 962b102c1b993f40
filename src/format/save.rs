//! [`Store`]'s save and load: the save file's sections written from, and read into, a store.

use std::io::{Read, Write};
use std::path::Path;

use zerocopy::IntoBytes;
use zerocopy::little_endian::U32;

use super::check::{self, SaveParts, Spans, index_and_arena};
use super::container::{SAVE_WRITTEN, chunk_crcs, file_len, write_file_crcs};
use super::error::LoadError;
use super::upgrade::{self, LoadOptions};
use super::version::{ARENA_CHUNK_BYTES, KEY_HASH_FX32_BYTES};
use crate::blob::layout;
use crate::error::Error;
use crate::file::write_atomically;
use crate::handle_map::{HandleMap, RawHeader};
use crate::names::KeyNames;
use crate::store::proto::{self, Links};
use crate::store::{Span, Store};

/// A full save as format 1.0 laid it out, its key names a flat list (kind 6): for tests that
/// check such files load.
#[cfg(test)]
pub(crate) fn to_bytes_with_list(store: &Store, list: &[u8]) -> Vec<u8> {
    use super::container::{Layout, SAVE, write_file};
    const SAVE_1_0: Layout<6> =
        Layout { chunk_crcs: None, ..SAVE.with_names_list(0).with_spans(0) };
    let raw = store.index().as_raw();
    let sections =
        [raw.header.as_bytes(), raw.items, raw.meta, raw.slots, store.arena().as_bytes(), list];
    let mut out = Vec::new();
    write_file(&SAVE_1_0, &sections, 0, &mut out).expect("writing to a Vec cannot fail");
    out
}

impl Store {
    /// Writes the save file: the header and table, then each section and its padding. A few
    /// large writes; no per-entity encoding.
    ///
    /// The arena is written blob after blob in dense order, with no hole and no bytes for an
    /// empty blob, straight from the store's arena: no packed copy is made (a save's memory
    /// is a list of the arena's runs of blobs that lie back to back, at most one per entity).
    ///
    /// # Errors
    ///
    /// Whatever `out` returns.
    pub fn write_to(&self, out: impl Write) -> std::io::Result<()> {
        self.write_packed(&self.packed(), out)
    }

    /// The arena as a save writes it: each blob in dense order, back to back, the empty
    /// blob's two words left out (a zero-length blob), with the end of each in words; as the
    /// runs of the store's own arena it is written from (blobs that lie back to back there
    /// are one run: the whole arena, for a fresh import or a compacted store with no empty
    /// blob). No copy of the blobs is made.
    fn packed(&self) -> Packed<'_> {
        let spans = self.index().as_slice();
        let mut ends = Vec::with_capacity(spans.len());
        let mut arena: Vec<&[u8]> = Vec::new();
        let mut run = 0..0;
        let mut end = 0;
        for &span in spans {
            let range = span.range();
            // The empty blob is written as no bytes.
            if self.arena()[range.clone()] != layout::EMPTY {
                end += range.len();
                if run.end == range.start {
                    run.end = range.end;
                } else {
                    if !run.is_empty() {
                        arena.push(self.arena()[run].as_bytes());
                    }
                    run = range;
                }
            }
            // The arena is at most 2^32 words, so an end fits.
            ends.push(U32::new(end as u32));
        }
        if !run.is_empty() {
            arena.push(self.arena()[run].as_bytes());
        }
        Packed { ends, arena, words: end }
    }

    /// Writes the save file of [`packed`](Store::packed)'s arena and ends.
    fn write_packed(&self, packed: &Packed, out: impl Write) -> std::io::Result<()> {
        let raw = self.index().as_raw_compact();
        let header = RawHeader { item_size: U32::new(4), ..raw.header };
        // In the order of SAVE's sections; the key tree stays empty until a name is recorded.
        let names = self.names().encode_tree();
        let (chunk_crcs, arena_crc) = chunk_crcs(&packed.arena, ARENA_CHUNK_BYTES);
        let lineage = self.lineage().map(u128::to_le_bytes);
        let lineage: &[u8] = lineage.as_ref().map_or(&[], |bytes| bytes);
        let links = self.links().to_dense(self.index());
        let whole = [
            header.as_bytes(),
            packed.ends.as_bytes(),
            raw.meta,
            raw.slots,
            &[], // the arena: its runs
            &names,
            &chunk_crcs,
            lineage,
            links.as_bytes(),
        ];
        let sections: [&[&[u8]]; 9] = std::array::from_fn(|i| match i {
            4 => &packed.arena[..],
            _ => std::slice::from_ref(&whole[i]),
        });
        let mut crcs = [None; 9];
        crcs[4] = Some(arena_crc);
        write_file_crcs(&SAVE_WRITTEN, &sections, crcs, self.data_version(), out)
    }

    /// The save file as bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, Store};
    ///
    /// let mut store = Store::new();
    /// let id = store.insert(&[("stats.health", 100.0)].into_iter().collect::<Blob>());
    /// let bytes = store.to_bytes();
    /// let loaded = Store::from_bytes(&bytes).unwrap();
    /// assert_eq!(loaded.get(id).unwrap().get_float("stats.health"), Some(100.0));
    /// ```
    #[must_use]
    #[allow(clippy::missing_panics_doc)] // Writing to a Vec cannot fail.
    pub fn to_bytes(&self) -> Vec<u8> {
        // Room for every section and its padding, so the buffer is allocated once.
        let packed = self.packed();
        let raw = self.index().as_raw_compact();
        let arena_bytes = 4 * packed.words;
        let sections = [
            size_of::<RawHeader>(),
            packed.ends.as_bytes().len(),
            raw.meta.len(),
            raw.slots.len(),
            arena_bytes,
            self.names().tree_len(),
            4 + 4 * arena_bytes.div_ceil(ARENA_CHUNK_BYTES),
            size_of::<u128>(),
            if self.links().is_empty() { 0 } else { 4 * self.len() },
        ];
        let mut bytes = Vec::with_capacity(file_len(sections));
        self.write_packed(&packed, &mut bytes).expect("writing to a Vec cannot fail");
        bytes
    }

    /// Reads a store from save-file bytes, checking everything (see the [`format`](crate::format)
    /// module). Handles saved with the store resolve in the loaded one, and stale ones stay
    /// stale. A save of key hash 1 is rehashed from its key names; one with keys it never named
    /// needs their paths: see [`LoadOptions::load_bytes`].
    ///
    /// # Errors
    ///
    /// A [`LoadError`] that names the section, offset or entity at fault.
    pub fn from_bytes(bytes: &[u8]) -> Result<Store, LoadError> {
        LoadOptions::new().load_bytes(bytes)
    }

    /// Reads a whole save file from `input`, as [`from_bytes`](Store::from_bytes) does.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] if reading fails, [`Error::Load`] if the bytes are not a valid save.
    pub fn read_from(input: impl Read) -> Result<Store, Error> {
        // Read no further than the header says the file holds.
        let bytes = super::read::read_capped(input, None)?;
        Ok(Store::from_bytes(&bytes)?)
    }

    /// Saves to `path` atomically: writes a temporary file in the same directory, flushes it
    /// to disk, then renames it over `path` and flushes the directory. A crash at any moment
    /// leaves either the old file or the new one, complete. A symbolic link at `path` is
    /// followed and kept, the old file's permissions are kept, and a planted file or link at
    /// the temporary name is never written through: see
    /// [`file::write_atomically`](crate::file::write_atomically).
    ///
    /// The arena is written blob after blob in dense order (format 1.3), so the garbage
    /// between blobs (removed entities, old copies of moved ones) never reaches the disk; but
    /// each blob is written as it is in memory, so removed and overwritten values inside a
    /// live blob do, until compaction: [`compact`](Store::compact) first when the file must
    /// hold none of them.
    ///
    /// Two saves to one path at once both succeed and leave one of the two files, complete.
    /// For a load-change-save that another writer must not interleave with, hold a
    /// [`SaveFile`](crate::SaveFile) lock.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] if any step fails; the temporary file is removed and `path` is untouched.
    ///
    /// # Examples
    ///
    /// A save that holds no byte of a removed entity, removed key or overwritten value:
    ///
    /// ```
    /// use datacomp::{Blob, Store};
    ///
    /// let mut store = Store::new();
    /// let secret = store.insert(&[("name", "Secret Agent")].into_iter().collect::<Blob>());
    /// store.insert(&[("name", "Bob")].into_iter().collect::<Blob>());
    /// store.remove(secret);
    ///
    /// let path = std::env::temp_dir().join(format!("doc-compacted-{}.dcmp", std::process::id()));
    /// store.compact();
    /// store.save(&path)?;
    /// let bytes = std::fs::read(&path)?;
    /// assert!(!bytes.windows(6).any(|w| w == b"Secret"));
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        write_atomically(path.as_ref(), |out| self.write_to(out))
    }

    /// Loads a store saved with [`save`](Store::save).
    ///
    /// # Errors
    ///
    /// [`Error::Io`] if the file cannot be read, [`Error::Load`] if it is not a valid save.
    /// (A save of key hash 1 with keys it never named loads with [`LoadOptions::load`].)
    pub fn load(path: impl AsRef<Path>) -> Result<Store, Error> {
        LoadOptions::new().load(path)
    }
}

/// Loading with options: a store read from a save's bytes or file, as
/// [`Store::from_bytes`] and [`Store::load`] read one with the default options.
impl LoadOptions {
    /// Reads a store from save-file bytes as [`Store::from_bytes`] does, with these options: a
    /// save of key hash 1 is upgraded with the help of the [known keys](LoadOptions::known_keys)
    /// (every key is rehashed from its name in the save, else from the known path that hashed
    /// to it under key hash 1), and the arena is checked on at most
    /// [`threads`](LoadOptions::threads) threads.
    ///
    /// # Errors
    ///
    /// As [`Store::from_bytes`]; for a key hash 1 save also
    /// [`StoreError::UnexplainedKeys`](super::StoreError::UnexplainedKeys) listing every key
    /// (with an entity that holds it) that neither a name nor a known path explains,
    /// [`StoreError::AmbiguousKnownKeys`](super::StoreError::AmbiguousKnownKeys) when two
    /// known paths had the hash of a key the save holds, and
    /// [`StoreError::UpgradeCollision`](super::StoreError::UpgradeCollision) when two keys that entities
    /// hold rehash to one (a saved name no entity holds gives way).
    /// Nothing loads half-upgraded.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{LoadError, LoadOptions, Store};
    /// use datacomp::format::StoreError;
    ///
    /// // A key hash 1 save, written before key hash 2, whose keys were set without names.
    /// let old = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/world_v1.dcmp"))?;
    /// let err = Store::from_bytes(&old).unwrap_err();
    /// assert!(matches!(err, LoadError::Store(StoreError::UnexplainedKeys { .. })));
    ///
    /// let known = [
    ///     "name", "stats.health", "stats.mana", "status_effects.drunk",
    ///     "status_effects.delirious", "position", "color", "bio",
    /// ];
    /// let world = LoadOptions::new().known_keys(known).load_bytes(&old)?;
    /// let hero = "0v0t1".parse()?;
    /// assert_eq!(world.get(hero).unwrap().get_float("stats.health"), Some(100.0));
    /// // Now it knows every name: its next save upgrades by itself.
    /// assert_eq!(world.key_names().len(), known.len());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn load_bytes(&self, bytes: &[u8]) -> Result<Store, LoadError> {
        let SaveParts {
            key_hash,
            data_version,
            arena_crc,
            index: raw_index,
            arena,
            names,
            names_kind,
            items_kind,
            lineage,
            prototypes,
        } = index_and_arena(bytes)?;
        // Key hash 1 was written before the key tree: its names are a list (or none) to
        // rehash the keys from.
        let (tree, list) = KeyNames::saved(names, names_kind, key_hash)?;
        // Format 1.3's end offsets, as spans.
        let owned = check::owned_spans(&raw_index, items_kind)?;
        let raw_index = owned.as_ref().map_or(raw_index, |owned| owned.raw(&raw_index));
        let mut index: HandleMap<Span> = HandleMap::from_raw(&raw_index)?;
        let id_at = |d| index.id_at(d).unwrap_or_default();
        // Before the arena: a bad link fails the load before its costliest part.
        proto::check_dense(prototypes, id_at)?;
        // The end offsets as the file holds them are checked, as a view checks them: the same
        // error for the same file.
        let spans = owned.as_ref().map_or(Spans::Spans(index.as_slice()), |owned| owned.ends);
        let mut words = check::copy_arena(arena, arena_crc, spans, id_at, self.threads)?;
        drop(owned);
        check::fill_empties(index.values_mut(), &mut words)?;
        let names = match tree {
            Some(tree) => {
                if key_hash == KEY_HASH_FX32_BYTES {
                    upgrade::from_hash2(&index, &mut words, &tree)?;
                }
                tree
            }
            None => upgrade::rehash(&index, &mut words, &list, self)?,
        };
        let links = Links::from_dense(prototypes, |d| index.id_at(d).unwrap_or_default());
        let mut store = Store::from_parts(index, words, names, data_version, lineage);
        store.set_links(links);
        Ok(store)
    }

    /// Loads a store saved with [`Store::save`], with these options, as
    /// [`load_bytes`](LoadOptions::load_bytes) reads one (as [`std::fs::OpenOptions::open`]
    /// opens a file with its options).
    ///
    /// # Errors
    ///
    /// [`Error::Io`] if the file cannot be read, [`Error::Load`] if it is not a valid save or
    /// cannot be upgraded.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::LoadOptions;
    ///
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/world_v2.dcmp");
    /// let world = LoadOptions::new().known_keys(["name"]).load(path)?;
    /// assert_eq!(world.len(), 3);
    /// # Ok::<(), datacomp::Error>(())
    /// ```
    pub fn load(&self, path: impl AsRef<Path>) -> Result<Store, Error> {
        Ok(self.load_bytes(&super::read::read_file(path)?)?)
    }
}

/// A store's arena as a save writes it: see [`Store::packed`].
struct Packed<'a> {
    /// The end of each blob in the written arena, in words, in dense order.
    ends: Vec<U32>,
    /// The written arena: these runs of the store's arena, one after the other.
    arena: Vec<&'a [u8]>,
    /// Its length in words.
    words: usize,
}
