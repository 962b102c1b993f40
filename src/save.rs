//! The save file: a header, a section table and a [`Store`]'s raw buffers, little-endian.
//!
//! ```text
//!  offset 0   ┌──────────────────────────────────────────────────────────┐
//!             │ FileHeader (32 B): magic "DATACOMP", format 1.2, key hash 2,│
//!             │ section count, file length, crc32 of header + table,      │
//!             │ data version                                              │
//!  32         ├──────────────────────────────────────────────────────────┤
//!             │ SectionEntry × n (24 B each): kind, crc32, offset, length │
//!             ├──────── zero padding to 8 ───────────────────────────────┤
//!             │ index header │ index items (spans) │ index meta │ slots   │  each 8-aligned,
//!             │ arena (every blob, as stored)      │ key tree             │  zero-padded
//!             └──────────────────────────────────────────────────────────┘
//! ```
//!
//! Saving is a few large writes with no per-entity encoding; loading checks the header, the
//! table, every section's crc32 and that all padding is zero (so a change to any byte of the
//! file is caught), then the handle map's invariants, that every span lies inside the arena and
//! no two overlap, and every blob, as `Blob::from_bytes` would.
//!
//! The header names the key hash its keys were made with. A save of key hash 1
//! ([`KEY_HASH_FX32_WORDS`]) loads into a [`Store`] by rehashing every key from its name, or from
//! a path the caller knows ([`LoadOptions::known_keys`](crate::LoadOptions::known_keys)); a key
//! neither explains is an error, and nothing loads half-upgraded. A [`StoreView`] reads in place
//! and cannot rehash, so it reads key hash 2 only.
//!
//! A delta save ([`StorePatch`](crate::StorePatch)) is the same header and table over sections
//! of its own (`delta base`, `delta index header`, `delta slot changes`, `delta meta changes`,
//! `delta entities`, and `key tree` when they changed), with the same checks; reading either
//! kind of file as the other is a [`LoadError::FileKind`].
//!
//! The key names are a tree of segments (section kind 13, `key tree`, from format 1.2): a
//! prefix that many keys share is saved once. A file of format 1.0 holds them as a flat list
//! of JSON Pointers instead (kind 6, `key names`), which still loads; this build writes 1.2.

use std::io::{Read, Write};
use std::path::Path;

use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::handle_map::{HandleMapView, RawHandleMap, RawHeader};
use crate::load::{self, ArenaCrc, LazyStoreView};
use crate::names::KeyNames;
use crate::names::codec::{LIST_KIND, TREE_KIND};
use crate::store::{STORE_TYPE_ID, Span};
use crate::{BlobRef, Error, HandleMap, Id, LoadError, LoadOptions, Store};

/// The first 8 bytes of every save file.
pub const MAGIC: [u8; 8] = *b"DATACOMP";
/// The format's major version: a reader refuses a newer one.
pub const FORMAT_MAJOR: u16 = 1;
/// The format's minor version: additions an older reader may ignore, and changes a newer
/// reader reads both sides of.
///
/// - 0: the first format.
/// - 1: the header's last word, zero before, holds the data version
///   ([`Store::data_version`]); a delta's `delta base` section adds the base's data version.
///   A save adds a crc32 of each 64 KiB chunk of its arena ([`ARENA_CHUNK_BYTES`]), in a
///   section of its own (`arena crcs`, kind 12), so that the arena is checked on all cores, a
///   lazy view checks only the chunks it reads, and damage is confined to its chunk. The arena
///   keeps its whole crc in the table, so a 1.0 reader still reads a 1.1 save, and the chunk
///   crcs are optional: a save without them is checked whole.
/// - 2: the key names are a tree of segments (section `key tree`, kind 13) in place of the
///   flat list of JSON Pointers (`key names`, kind 6), which still loads.
pub const FORMAT_MINOR: u16 = 2;
/// The bytes of the arena each crc of a save's `arena crcs` section covers (the last chunk may
/// be shorter).
pub const ARENA_CHUNK_BYTES: usize = 64 << 10;
/// Key hash 1: fxhash's 32-bit round fed each segment four bytes (a word) at a time, segments
/// combined in order. Retired: numbered names such as `item_1409` and `item_1482` collided. A
/// save of it loads by rehashing its keys (see [`LoadOptions`]).
pub const KEY_HASH_FX32_WORDS: u16 = 1;
/// Key hash 2, the one [`Key`](crate::Key) computes and every save of this build names: fxhash's 32-bit
/// round fed each segment's bytes one at a time, segments combined in order.
pub const KEY_HASH_FX32_BYTES: u16 = 2;
/// Sections start at multiples of this.
const ALIGN: usize = 8;

#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct FileHeader {
    magic: [u8; 8],
    major: U16,
    minor: U16,
    key_hash: U16,
    sections: U16,
    file_len: U64,
    /// crc32 of this header (with this field zero) and the section table.
    table_crc: U32,
    /// The data version of the store the file holds or (a delta) gives: see
    /// [`Store::data_version`]. Format 1.0 wrote zero here, so its saves read as data
    /// version 0.
    data_version: U32,
}

#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct SectionEntry {
    kind: U32,
    crc: U32,
    offset: U64,
    len: U64,
}

/// The sections of a file, in file order, and what the file is.
pub(crate) struct FileKind<const N: usize> {
    name: &'static str,
    /// The format's minor version the header names: [`FORMAT_MINOR`], or an older one's
    /// whose sections these are.
    minor: u16,
    sections: [(u32, &'static str); N],
    /// The section whose checksum [`parse`] leaves to the caller, who checks it with the
    /// section's contents, on all cores (see [`load`](crate::load)).
    deferred: Option<u32>,
    /// A section that, when the file has it, holds a crc per chunk of the deferred one (format
    /// 1.1); it is written after the required ones.
    chunk_crcs: Option<(u32, &'static str)>,
}

/// A full save: a store's index and arena.
const SAVE: FileKind<6> = FileKind {
    name: "save",
    minor: FORMAT_MINOR,
    sections: [
        (1, "index header"),
        (2, "index items"),
        (3, "index meta"),
        (4, "index slots"),
        (5, "arena"),
        (TREE_KIND, "key tree"),
    ],
    deferred: Some(ARENA),
    chunk_crcs: Some(ARENA_CRCS),
};

/// The sections a save is written with: [`SAVE`]'s, then its arena's chunk crcs.
const SAVE_WRITTEN: FileKind<7> = FileKind {
    name: "save",
    minor: FORMAT_MINOR,
    sections: [
        SAVE.sections[0],
        SAVE.sections[1],
        SAVE.sections[2],
        SAVE.sections[3],
        SAVE.sections[4],
        SAVE.sections[5],
        ARENA_CRCS,
    ],
    deferred: Some(ARENA),
    chunk_crcs: Some(ARENA_CRCS),
};

/// The section of a save's arena chunk crcs (format 1.1): a `u32` chunk size, then a `u32`
/// crc32 of each chunk of the arena.
const ARENA_CRCS: (u32, &str) = (12, "arena crcs");

/// The section kind of a save's arena.
const ARENA: u32 = 5;

/// A delta save: what changed since a base save (see [`StorePatch`](crate::StorePatch)).
pub(crate) const DELTA: FileKind<6> = FileKind {
    name: "delta",
    minor: FORMAT_MINOR,
    sections: [
        (7, "delta base"),
        (8, "delta index header"),
        (9, "delta slot changes"),
        (10, "delta meta changes"),
        (11, "delta entities"),
        (TREE_KIND, "key tree"),
    ],
    deferred: None,
    chunk_crcs: None,
};

/// A full save as format 1.0 laid it out, its key names a flat list (kind 6): for tests that
/// check such files load.
#[cfg(test)]
pub(crate) fn to_bytes_with_list(store: &Store, list: &[u8]) -> Vec<u8> {
    const SAVE_1_0: FileKind<6> = FileKind {
        name: "save",
        minor: 0,
        sections: [
            (1, "index header"),
            (2, "index items"),
            (3, "index meta"),
            (4, "index slots"),
            (5, "arena"),
            (LIST_KIND, "key names"),
        ],
        deferred: Some(ARENA),
        chunk_crcs: None,
    };
    let raw = store.index.as_raw();
    let sections =
        [raw.header.as_bytes(), raw.items, raw.meta, raw.slots, store.arena.as_bytes(), list];
    let mut out = Vec::new();
    write_file(&SAVE_1_0, &sections, 0, &mut out).expect("writing to a Vec cannot fail");
    out
}

/// A delta save of format 1.1 (the last whose key names are a flat list, kind 6; its base's
/// crc covers them in that form): a delta read with such names is written back the same way.
pub(crate) const DELTA_LIST: FileKind<6> = FileKind {
    name: "delta",
    minor: 1,
    sections: [
        (7, "delta base"),
        (8, "delta index header"),
        (9, "delta slot changes"),
        (10, "delta meta changes"),
        (11, "delta entities"),
        (LIST_KIND, "key names"),
    ],
    deferred: None,
    chunk_crcs: None,
};

/// Sections of format 1.0 that a later one replaced: each stands in the slot of its
/// successor (the key names' flat list where the key tree is now).
const REPLACED: [(u32, &str, u32); 1] = [(LIST_KIND, "key names", TREE_KIND)];

/// A file that passed [`parse`]: its header, its section table, and the known sections, in
/// the order of its kind's list.
pub(crate) struct Parsed<'a, const N: usize> {
    header: FileHeader,
    table: &'a [SectionEntry],
    pub(crate) sections: [&'a [u8]; N],
    /// How the deferred section's bytes are checked: the caller must.
    deferred: Option<ArenaCrc<'a>>,
    /// The kind of section found in each slot: the kind's own, or the one it replaced.
    pub(crate) kinds: [u32; N],
}

impl<const N: usize> Parsed<'_, N> {
    /// The key hash the file's keys were made with: [`KEY_HASH_FX32_WORDS`] or
    /// [`KEY_HASH_FX32_BYTES`] (`parse` refuses others).
    pub(crate) fn key_hash(&self) -> u16 {
        self.header.key_hash.get()
    }

    /// The data version of the store the file holds (or a delta gives).
    pub(crate) fn data_version(&self) -> u32 {
        self.header.data_version.get()
    }
}

/// What a section kind holds, or `"unknown"` for a kind from a newer minor version.
fn kind_name(kind: u32) -> &'static str {
    SAVE_WRITTEN
        .sections
        .iter()
        .chain(&DELTA.sections)
        .copied()
        .chain(REPLACED.iter().map(|&(k, name, _)| (k, name)))
        .find(|&(k, _)| k == kind)
        .map_or("unknown", |(_, name)| name)
}

/// Writes a file of `kind` for a store of `data_version`: the header and table, then each
/// section and its padding.
pub(crate) fn write_file<const N: usize>(
    kind: &FileKind<N>,
    sections: &[&[u8]; N],
    data_version: u32,
    out: impl Write,
) -> std::io::Result<()> {
    write_file_crcs(kind, sections, [None; N], data_version, out)
}

/// As [`write_file`], with the crcs of some sections given (computed as they were built).
fn write_file_crcs<const N: usize>(
    kind: &FileKind<N>,
    sections: &[&[u8]; N],
    crcs: [Option<u32>; N],
    data_version: u32,
    mut out: impl Write,
) -> std::io::Result<()> {
    out.write_all(&file_head(kind, sections, crcs, data_version))?;
    for bytes in sections {
        out.write_all(bytes)?;
        out.write_all(&[0; ALIGN][..bytes.len().next_multiple_of(ALIGN) - bytes.len()])?;
    }
    Ok(())
}

/// Bytes of a file whose sections have these lengths: the header, the table, and each
/// section padded to 8.
pub(crate) fn file_len<const N: usize>(section_lens: [usize; N]) -> usize {
    let head = size_of::<FileHeader>() + N * size_of::<SectionEntry>();
    head.next_multiple_of(ALIGN)
        + section_lens.iter().map(|l| l.next_multiple_of(ALIGN)).sum::<usize>()
}

/// Saves and deltas are written through the one implementation of atomic writes.
pub(crate) use crate::file::write_atomically as save_atomically;

/// The header and section table for these sections.
fn file_head<const N: usize>(
    kind: &FileKind<N>,
    sections: &[&[u8]; N],
    crcs: [Option<u32>; N],
    data_version: u32,
) -> Vec<u8> {
    let table_end = size_of::<FileHeader>() + N * size_of::<SectionEntry>();
    let mut offset = table_end.next_multiple_of(ALIGN);
    let mut table = Vec::with_capacity(N);
    for (((kind, _), bytes), crc) in kind.sections.iter().zip(sections).zip(crcs) {
        table.push(SectionEntry {
            kind: U32::new(*kind),
            crc: U32::new(crc.unwrap_or_else(|| crc32fast::hash(bytes))),
            offset: U64::new(offset as u64),
            len: U64::new(bytes.len() as u64),
        });
        offset = (offset + bytes.len()).next_multiple_of(ALIGN);
    }
    let mut header = FileHeader {
        magic: MAGIC,
        major: U16::new(FORMAT_MAJOR),
        minor: U16::new(kind.minor),
        key_hash: U16::new(KEY_HASH_FX32_BYTES),
        sections: U16::new(N as u16),
        file_len: U64::new(offset as u64),
        table_crc: U32::ZERO,
        data_version: U32::new(data_version),
    };
    let mut crc = crc32fast::Hasher::new();
    crc.update(header.as_bytes());
    crc.update(table.as_bytes());
    header.table_crc = U32::new(crc.finalize());
    let mut head = Vec::with_capacity(table_end.next_multiple_of(ALIGN));
    head.extend_from_slice(header.as_bytes());
    head.extend_from_slice(table.as_bytes());
    head.resize(table_end.next_multiple_of(ALIGN), 0);
    head
}

impl Store {
    /// Writes the save file: the header and table, then each section and its padding. A few
    /// large writes; no per-entity encoding.
    ///
    /// # Errors
    ///
    /// Whatever `out` returns.
    pub fn write_to(&self, out: impl Write) -> std::io::Result<()> {
        let raw = self.index.as_raw();
        // In the order of SAVE's sections; the key tree stays empty until a name is recorded.
        let names = self.names.encode_tree();
        let arena = self.arena.as_bytes();
        let (chunk_crcs, arena_crc) = load::chunk_crcs(arena, ARENA_CHUNK_BYTES);
        let sections =
            [raw.header.as_bytes(), raw.items, raw.meta, raw.slots, arena, &names, &chunk_crcs];
        let mut crcs = [None; 7];
        crcs[4] = Some(arena_crc);
        write_file_crcs(&SAVE_WRITTEN, &sections, crcs, self.data_version, out)
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
        let raw = self.index.as_raw();
        let sections = [
            size_of::<RawHeader>(),
            raw.items.len(),
            raw.meta.len(),
            raw.slots.len(),
            self.arena.len() * 4,
            self.names.tree_len(),
            4 + 4 * (self.arena.len() * 4).div_ceil(ARENA_CHUNK_BYTES),
        ];
        let mut bytes = Vec::with_capacity(file_len(sections));
        self.write_to(&mut bytes).expect("writing to a Vec cannot fail");
        bytes
    }

    /// Reads a store from save-file bytes, checking everything (see the [`save`](crate::save)
    /// module). Handles saved with the store resolve in the loaded one, and stale ones stay
    /// stale. A save of key hash 1 is rehashed from its key names; one with keys it never named
    /// needs their paths: see [`from_bytes_with`](Store::from_bytes_with).
    ///
    /// # Errors
    ///
    /// A [`LoadError`] that names the section, offset or entity at fault.
    pub fn from_bytes(bytes: &[u8]) -> Result<Store, LoadError> {
        Store::from_bytes_with(bytes, &LoadOptions::new())
    }

    /// Reads a store from save-file bytes as [`from_bytes`](Store::from_bytes) does, and
    /// upgrades a save of key hash 1 with the help of `options`: every key is rehashed from
    /// its name in the save, else from the known path that hashed to it under key hash 1.
    ///
    /// # Errors
    ///
    /// As [`from_bytes`](Store::from_bytes); for a key hash 1 save also
    /// [`LoadError::UnexplainedKeys`] listing every key (with an entity that holds it) that
    /// neither a name nor a known path explains, [`LoadError::AmbiguousKnownKeys`] when two
    /// known paths had the hash of a key the save holds, and [`LoadError::UpgradeCollision`]
    /// when two keys that entities hold rehash to one (a saved name no entity holds gives way).
    /// Nothing loads half-upgraded.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{LoadError, LoadOptions, Store};
    ///
    /// // A key hash 1 save, written before key hash 2, whose keys were set without names.
    /// let old = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/world_v1.dcmp"))?;
    /// let err = Store::from_bytes(&old).unwrap_err();
    /// assert!(matches!(err, LoadError::UnexplainedKeys { .. }));
    ///
    /// let known = [
    ///     "name", "stats.health", "stats.mana", "status_effects.drunk",
    ///     "status_effects.delirious", "position", "color", "bio",
    /// ];
    /// let world = Store::from_bytes_with(&old, &LoadOptions::new().known_keys(known))?;
    /// let hero = "0v0t1".parse()?;
    /// assert_eq!(world.get(hero).unwrap().get_float("stats.health"), Some(100.0));
    /// // Now it knows every name: its next save upgrades by itself.
    /// assert_eq!(world.key_names().len(), known.len());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_bytes_with(bytes: &[u8], options: &LoadOptions) -> Result<Store, LoadError> {
        let SaveParts {
            key_hash,
            data_version,
            arena_crc,
            index: raw_index,
            arena,
            names,
            names_kind,
        } = index_and_arena(bytes)?;
        // Key hash 1 was written before the key tree: its names are a list (or none) to
        // rehash the keys from.
        let (tree, list) = KeyNames::saved(names, names_kind, key_hash)?;
        let index: HandleMap<Span> = HandleMap::from_raw(&raw_index)?;
        let id_at = |d| index.id_at(d).unwrap_or_default();
        let mut words =
            load::copy_arena(arena, arena_crc, index.as_slice(), id_at, options.threads)?;
        let names = match tree {
            Some(tree) => tree,
            None => crate::upgrade::rehash(&index, &mut words, &list, options)?,
        };
        let used: usize = index.values().map(|s| s.words()).sum();
        Ok(Store {
            garbage_words: words.len() - used,
            index,
            arena: words,
            names,
            data_version,
            ..Store::new()
        })
    }

    /// Reads a whole save file from `input`, as [`from_bytes`](Store::from_bytes) does.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] if reading fails, [`Error::Load`] if the bytes are not a valid save.
    pub fn read_from(mut input: impl Read) -> Result<Store, Error> {
        let mut bytes = Vec::new();
        input.read_to_end(&mut bytes)?;
        Ok(Store::from_bytes(&bytes)?)
    }

    /// Saves to `path` atomically: writes a temporary file in the same directory, flushes it
    /// to disk, then renames it over `path` and flushes the directory. A crash at any moment
    /// leaves either the old file or the new one, complete. A symbolic link at `path` is
    /// followed and kept, the old file's permissions are kept, and a planted file or link at
    /// the temporary name is never written through: see
    /// [`file::write_atomically`](crate::file::write_atomically).
    ///
    /// The arena is written as it is in memory, so bytes that no entity uses any more reach
    /// the disk: removed entities and old copies of moved ones (until compaction, which runs
    /// on its own only once garbage passes half of an arena of 16 KiB or more), and, inside a
    /// blob, removed and overwritten values. Use [`save_compacted`](Store::save_compacted)
    /// when the file must hold none of them.
    ///
    /// Two saves to one path at once both succeed and leave one of the two files, complete.
    /// For a load-change-save that another writer must not interleave with, hold a
    /// [`SaveFile`](crate::SaveFile) lock.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] if any step fails; the temporary file is removed and `path` is untouched.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        save_atomically(path.as_ref(), |out| self.write_to(out))
    }

    /// [`compact`](Store::compact)s the store, then [`save`](Store::save)s it: the file holds
    /// no byte of a removed entity, removed key or overwritten value.
    ///
    /// # Errors
    ///
    /// As [`save`](Store::save).
    ///
    /// # Examples
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
    /// store.save_compacted(&path)?;
    /// let bytes = std::fs::read(&path)?;
    /// assert!(!bytes.windows(6).any(|w| w == b"Secret"));
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn save_compacted(&mut self, path: impl AsRef<Path>) -> Result<(), Error> {
        self.compact();
        self.save(path)
    }

    /// Loads a store saved with [`save`](Store::save).
    ///
    /// # Errors
    ///
    /// [`Error::Io`] if the file cannot be read, [`Error::Load`] if it is not a valid save.
    pub fn load(path: impl AsRef<Path>) -> Result<Store, Error> {
        Store::load_with(path, &LoadOptions::new())
    }

    /// Loads a store saved with [`save`](Store::save), upgrading a save of key hash 1 as
    /// [`from_bytes_with`](Store::from_bytes_with) does.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] if the file cannot be read, [`Error::Load`] if it is not a valid save or
    /// cannot be upgraded.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{LoadOptions, Store};
    ///
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/world_v2.dcmp");
    /// let world = Store::load_with(path, &LoadOptions::new().known_keys(["name"]))?;
    /// assert_eq!(world.len(), 3);
    /// # Ok::<(), datacomp::Error>(())
    /// ```
    pub fn load_with(path: impl AsRef<Path>, options: &LoadOptions) -> Result<Store, Error> {
        Ok(Store::from_bytes_with(&std::fs::read(path)?, options)?)
    }
}

/// A save file's parts, as [`index_and_arena`] reads them.
pub(crate) struct SaveParts<'a> {
    pub(crate) key_hash: u16,
    pub(crate) data_version: u32,
    /// How the arena's bytes are checksummed: not checked yet.
    pub(crate) arena_crc: ArenaCrc<'a>,
    pub(crate) index: RawHandleMap<'a>,
    pub(crate) arena: &'a [u8],
    pub(crate) names: &'a [u8],
    /// The names section's kind: the key tree, or format 1.0's list.
    pub(crate) names_kind: u32,
}

/// The key hash, the handle map's sections, the arena's bytes and the key names of a save
/// file, after [`parse`] and the checks of their sizes.
pub(crate) fn index_and_arena(bytes: &[u8]) -> Result<SaveParts<'_>, LoadError> {
    index_and_arena_tolerant(bytes, false).map(|(parts, _)| parts)
}

/// As [`index_and_arena`], with [`parse_tolerant`]: the sections it left out, and why.
pub(crate) fn index_and_arena_tolerant(
    bytes: &[u8],
    tolerant: bool,
) -> Result<(SaveParts<'_>, Vec<LoadError>), LoadError> {
    let (parsed, damaged) = parse_tolerant(bytes, &SAVE, tolerant)?;
    let [header, items, meta, slots, arena, names] = parsed.sections;
    let header = RawHeader::read_from_bytes(header).map_err(|_| LoadError::SectionSize {
        section: "index header",
        expected: size_of::<RawHeader>() as u64,
        found: header.len() as u64,
    })?;
    if arena.len() % 4 != 0 {
        let found = arena.len() as u64;
        return Err(LoadError::SectionSize { section: "arena", expected: found & !3, found });
    }
    // A store's handles always carry its type id.
    if header.type_id.get() != STORE_TYPE_ID {
        let found = header.type_id.get();
        return Err(LoadError::StoreTypeId { expected: STORE_TYPE_ID, found });
    }
    let index = RawHandleMap { header, items, meta, slots };
    let arena_crc = parsed.deferred.ok_or(LoadError::MissingSection { section: "arena" })?;
    let parts = SaveParts {
        key_hash: parsed.key_hash(),
        data_version: parsed.data_version(),
        arena_crc,
        index,
        arena,
        names,
        names_kind: parsed.kinds[5],
    };
    Ok((parts, damaged))
}

/// A save file read in place: validated once, as [`Store::from_bytes`] would, then every read
/// borrows straight from the bytes. Nothing is copied, so it works over a memory-mapped file.
///
/// The arena's floats are lent as `&[f32]`, so the bytes must be 4-byte aligned in memory: a
/// memory map or a `Vec` from the global allocator is; a sub-slice at an odd offset is not.
///
/// # Examples
///
/// ```
/// use datacomp::{Blob, Store, StoreView};
///
/// let mut store = Store::new();
/// let id = store.insert(&[("name", "The One")].into_iter().collect::<Blob>());
/// let bytes = store.to_bytes();
///
/// let view = StoreView::new(&bytes).unwrap();
/// assert_eq!(view.get(id).unwrap().get_str("name"), Some("The One"));
/// assert_eq!(view.len(), 1);
/// ```
#[derive(Clone, Copy)]
pub struct StoreView<'a> {
    index: HandleMapView<'a>,
    // INVARIANT: one span per item of `index`, each inside `arena` holding a valid blob.
    spans: &'a [Span],
    arena: &'a [u32],
}

impl<'a> StoreView<'a> {
    /// Validates `bytes` as a save file and reads it in place.
    ///
    /// # Errors
    ///
    /// As [`Store::from_bytes`], [`LoadError::Misaligned`] if the arena is not 4-byte aligned
    /// in memory, and [`LoadError::KeyHashView`] for a save of key hash 1, whose keys must be
    /// rehashed into a [`Store`] first.
    pub fn new(bytes: &'a [u8]) -> Result<StoreView<'a>, LoadError> {
        StoreView::new_with(bytes, &LoadOptions::new())
    }

    /// Validates `bytes` as [`new`](StoreView::new) does, with `options`' limit on threads
    /// ([`LoadOptions::threads`]); a view cannot rehash, so known keys do not apply.
    ///
    /// # Errors
    ///
    /// As [`new`](StoreView::new).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{LoadOptions, Store, StoreView};
    ///
    /// let bytes = Store::new().to_bytes();
    /// let view = StoreView::new_with(&bytes, &LoadOptions::new().threads(1))?;
    /// assert!(view.is_empty());
    /// # Ok::<(), datacomp::LoadError>(())
    /// ```
    pub fn new_with(bytes: &'a [u8], options: &LoadOptions) -> Result<StoreView<'a>, LoadError> {
        let SaveParts {
            key_hash,
            arena_crc,
            index: raw_index,
            arena: arena_bytes,
            names,
            names_kind,
            ..
        } = index_and_arena(bytes)?;
        if key_hash != KEY_HASH_FX32_BYTES {
            return Err(LoadError::KeyHashView { key_hash });
        }
        // Checked as a load checks them; a view reads blobs, not names.
        KeyNames::decode(names, names_kind, key_hash)?;
        let index = HandleMapView::new(&raw_index, size_of::<Span>())?;
        // Span is unaligned, and the items section's size was checked against the count.
        let spans =
            <[Span]>::ref_from_bytes(raw_index.items).map_err(|_| LoadError::SectionSize {
                section: "index items",
                expected: (index.len() * size_of::<Span>()) as u64,
                found: raw_index.items.len() as u64,
            })?;
        let arena = <[u32]>::ref_from_bytes(arena_bytes).map_err(|_| LoadError::Misaligned {
            section: "arena",
            address: arena_bytes.as_ptr() as usize,
        })?;
        let id_at = |d| index.id_at(d);
        load::check_arena(arena_bytes, arena, arena_crc, spans, id_at, options.threads)?;
        Ok(StoreView { index, spans, arena })
    }

    /// Checks the header, the section table, the index and that every span lies inside the
    /// arena with no two overlapping, and leaves each blob (and the crcs of the arena chunks
    /// it lies in) to its first read: opening costs O(entities), with no walk of the arena.
    ///
    /// # Errors
    ///
    /// As [`new`](StoreView::new), but for the arena's contents, whose errors come from
    /// [`LazyStoreView::get`].
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, Store, StoreView};
    ///
    /// let mut store = Store::new();
    /// let id = store.insert(&[("name", "The One")].into_iter().collect::<Blob>());
    /// let bytes = store.to_bytes();
    ///
    /// let lazy = StoreView::lazy(&bytes)?;
    /// assert_eq!(lazy.len(), 1);
    /// assert_eq!(lazy.get(id)?.unwrap().get_str("name"), Some("The One"));
    /// # Ok::<(), datacomp::LoadError>(())
    /// ```
    pub fn lazy(bytes: &'a [u8]) -> Result<LazyStoreView<'a>, LoadError> {
        LazyStoreView::new(bytes)
    }

    /// The blob of `id`, if it is live in the saved store.
    #[must_use]
    pub fn get(&self, id: Id) -> Option<BlobRef<'a>> {
        let dense = self.index.dense_index(id)?;
        Some(BlobRef::from_valid(&self.arena[self.spans[dense].range()]))
    }

    /// Whether `id` is live in the saved store.
    #[must_use]
    pub fn contains(&self, id: Id) -> bool {
        self.index.dense_index(id).is_some()
    }

    /// Number of entities.
    #[must_use]
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether the saved store has no entities.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Iterates over `(Id, BlobRef)` in the saved dense order.
    #[must_use]
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (Id, BlobRef<'a>)> + '_ {
        (0..self.len())
            .map(|d| (self.index.id_at(d), BlobRef::from_valid(&self.arena[self.spans[d].range()])))
    }
}

impl std::fmt::Debug for StoreView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreView")
            .field("entities", &self.len())
            .field("arena_bytes", &(self.arena.len() * 4))
            .finish()
    }
}

/// A save file's header and section table: what `datacomp inspect` prints.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct FileInfo {
    /// `"save"` for a full save, `"delta"` for a delta save.
    pub kind: &'static str,
    /// The format's major version ([`FORMAT_MAJOR`]).
    pub major: u16,
    /// The format's minor version.
    pub minor: u16,
    /// The key hash ([`KEY_HASH_FX32_BYTES`], or [`KEY_HASH_FX32_WORDS`] for an old save).
    pub key_hash: u16,
    /// The data version of the store the file holds, or a delta gives
    /// ([`Store::data_version`]); 0 for a file of format 1.0.
    pub data_version: u32,
    /// The file's length in bytes.
    pub file_len: u64,
    /// The section table, in table order.
    pub sections: Vec<SectionInfo>,
}

/// One entry of a save file's section table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SectionInfo {
    /// The section kind: 1 to 5 and 12 in format 1.1 (6 for the key names of format 1.0).
    pub kind: u32,
    /// What the kind holds (`"arena"`, `"key tree"`), or `"unknown"` for a kind from a newer
    /// minor version.
    pub name: &'static str,
    /// Where the section starts in the file (a multiple of 8).
    pub offset: u64,
    /// The section's length in bytes, without padding.
    pub len: u64,
    /// The crc32 of the section's bytes.
    pub crc: u32,
}

/// Reads a save file's header and section table, after checking them, every section's crc
/// and the padding, as a load does first. It does not check the sections' contents: use
/// [`Store::from_bytes`] or [`StoreView::new`] for that.
///
/// # Errors
///
/// The [`LoadError`] of the first check that fails.
///
/// # Examples
///
/// ```
/// use datacomp::{save, Store};
///
/// let mut store = Store::new();
/// store.set_data_version(3);
/// let info = save::describe(&store.to_bytes())?;
/// assert_eq!((info.major, info.minor), (1, save::FORMAT_MINOR));
/// assert_eq!(info.data_version, 3);
/// let names: Vec<&str> = info.sections.iter().map(|s| s.name).collect();
/// assert_eq!(
///     names,
///     [
///         "index header", "index items", "index meta", "index slots", "arena", "key tree",
///         "arena crcs",
///     ]
/// );
/// # Ok::<(), datacomp::LoadError>(())
/// ```
pub fn describe(bytes: &[u8]) -> Result<FileInfo, LoadError> {
    let (kind, header, table) = match parse(bytes, &SAVE) {
        Ok(Parsed { header, table, sections, deferred, .. }) => {
            if let Some(crc) = deferred {
                load::check_checksums(sections[4], crc)?;
            }
            (SAVE.name, header, table)
        }
        Err(LoadError::FileKind { found, .. }) if found == DELTA.name => {
            let Parsed { header, table, .. } = parse(bytes, &DELTA)?;
            (DELTA.name, header, table)
        }
        Err(e) => return Err(e),
    };
    let sections = table
        .iter()
        .map(|entry| SectionInfo {
            kind: entry.kind.get(),
            name: kind_name(entry.kind.get()),
            offset: entry.offset.get(),
            len: entry.len.get(),
            crc: entry.crc.get(),
        })
        .collect();
    Ok(FileInfo {
        kind,
        major: header.major.get(),
        minor: header.minor.get(),
        key_hash: header.key_hash.get(),
        data_version: header.data_version.get(),
        file_len: header.file_len.get(),
        sections,
    })
}

/// Checks the header, the table, padding and crcs, and returns them with the sections of
/// `kind`, all of which must be there.
pub(crate) fn parse<'a, const N: usize>(
    bytes: &'a [u8],
    kind: &FileKind<N>,
) -> Result<Parsed<'a, N>, LoadError> {
    parse_tolerant(bytes, kind, false).map(|(parsed, _)| parsed)
}

/// The file header of `bytes`, checked (magic, major version, key hash, length), and the
/// bytes after it.
fn read_file_header(bytes: &[u8]) -> Result<(FileHeader, &[u8]), LoadError> {
    let len = bytes.len() as u64;
    let (header, rest) = FileHeader::read_from_prefix(bytes).map_err(|_| LoadError::Truncated {
        what: "file header",
        needed: 32,
        len,
    })?;
    if header.magic != MAGIC {
        return Err(LoadError::BadMagic { found: header.magic });
    }
    let (major, minor) = (header.major.get(), header.minor.get());
    if major != FORMAT_MAJOR {
        return Err(LoadError::UnsupportedVersion { major, minor });
    }
    if ![KEY_HASH_FX32_WORDS, KEY_HASH_FX32_BYTES].contains(&header.key_hash.get()) {
        return Err(LoadError::UnsupportedKeyHash { key_hash: header.key_hash.get() });
    }
    if header.file_len.get() != len {
        return Err(LoadError::FileLength { expected: header.file_len.get(), found: len });
    }
    Ok((header, rest))
}

/// Sections a salvage can do without: the key names (entities keep their keys, unnamed) and
/// the arena's chunk crcs (the arena's whole crc in the table stands in for them).
const EXPENDABLE: [u32; 3] = [LIST_KIND, TREE_KIND, ARENA_CRCS.0];

/// As [`parse`]; with `tolerant`, a section of [`EXPENDABLE`] that fails its crc (or, for the
/// chunk crcs, does not read) is left out, empty, and its error returned beside the file.
pub(crate) fn parse_tolerant<'a, const N: usize>(
    bytes: &'a [u8],
    kind: &FileKind<N>,
    tolerant: bool,
) -> Result<(Parsed<'a, N>, Vec<LoadError>), LoadError> {
    let mut damaged = Vec::new();
    let len = bytes.len() as u64;
    let (header, rest) = read_file_header(bytes)?;
    let count = usize::from(header.sections.get());
    let table_len = count * size_of::<SectionEntry>();
    let table_bytes = rest.get(..table_len).ok_or(LoadError::Truncated {
        what: "section table",
        needed: (32 + table_len) as u64,
        len,
    })?;
    let mut crc = crc32fast::Hasher::new();
    crc.update(FileHeader { table_crc: U32::ZERO, ..header }.as_bytes());
    crc.update(table_bytes);
    let found = crc.finalize();
    if found != header.table_crc.get() {
        let expected = header.table_crc.get();
        return Err(LoadError::Crc { section: "header and table", offset: 0, expected, found });
    }
    let table = <[SectionEntry]>::ref_from_bytes(table_bytes)
        .map_err(|_| LoadError::Truncated { what: "section table", needed: 0, len })?;

    let mut sections = [&bytes[..0]; N];
    let mut kinds = kind.sections.map(|(k, _)| k);
    let mut seen = [false; N];
    let mut deferred = None;
    let mut chunk_crcs = None;
    // Everything between the table and the first section, and between sections, is padding.
    let mut end = size_of::<FileHeader>() + table_len;
    for entry in table {
        // A newer minor version may add sections: they are checked like the others, then
        // skipped.
        let replaced = REPLACED.iter().find(|&&(old, _, _)| old == entry.kind.get());
        let slot_kind = replaced.map_or(entry.kind.get(), |&(_, _, new)| new);
        let slot = kind.sections.iter().position(|&(k, _)| k == slot_kind);
        let name = kind_name(entry.kind.get());
        let (offset, section_len) = (entry.offset.get(), entry.len.get());
        let section_end = offset.checked_add(section_len).filter(|&e| e <= len);
        let Some(section_end) = section_end else {
            return Err(LoadError::SectionBounds {
                section: name,
                offset,
                len: section_len,
                file_len: len,
            });
        };
        let repeated = slot.is_some_and(|slot| seen[slot]);
        if repeated || offset % ALIGN as u64 != 0 || offset < end as u64 {
            return Err(LoadError::SectionPlacement { section: name, offset });
        }
        check_zero(bytes, end, offset as usize)?;
        end = section_end as usize;
        let mut section = &bytes[offset as usize..end];
        if kind.deferred == Some(entry.kind.get()) {
            deferred = Some(ArenaCrc::Whole { offset, expected: entry.crc.get() });
        } else {
            let found = crc32fast::hash(section);
            if found != entry.crc.get() {
                let expected = entry.crc.get();
                let error = LoadError::Crc { section: name, offset, expected, found };
                if !(tolerant && EXPENDABLE.contains(&entry.kind.get())) {
                    return Err(error);
                }
                damaged.push(error);
                section = &section[..0];
            }
        }
        if let Some(slot) = slot {
            seen[slot] = true;
            sections[slot] = section;
            kinds[slot] = entry.kind.get();
        } else if kind.chunk_crcs.is_some_and(|(k, _)| k == entry.kind.get()) {
            if chunk_crcs.is_some() {
                return Err(LoadError::SectionPlacement { section: name, offset });
            }
            // A damaged one (left empty) is left out: the whole crc checks the arena.
            chunk_crcs = Some(section).filter(|s| !s.is_empty());
        }
    }
    check_zero(bytes, end, bytes.len())?;
    if let Some(missing) = seen.iter().position(|&s| !s) {
        // The other kind of file, told apart by its first section.
        let other = [&SAVE, &DELTA].into_iter().find(|other| {
            other.name != kind.name && table.first().is_some_and(|e| e.kind == other.sections[0].0)
        });
        if let Some(other) = other {
            return Err(LoadError::FileKind { expected: kind.name, found: other.name });
        }
        return Err(LoadError::MissingSection { section: kind.sections[missing].1 });
    }
    let arena_len = kind.sections.iter().position(|&(k, _)| Some(k) == kind.deferred);
    let arena_len = arena_len.map_or(0, |slot| sections[slot].len());
    let deferred = with_chunks(deferred, chunk_crcs, arena_len, tolerant.then_some(&mut damaged))?;
    Ok((Parsed { header, table, sections, deferred, kinds }, damaged))
}

/// A file with chunk crcs is checked chunk by chunk: they cover every byte of the deferred
/// section (of `arena_len` bytes). A chunk section that does not read is an error, or, with
/// `damaged` (a salvage), noted there and left out.
fn with_chunks<'a>(
    deferred: Option<ArenaCrc<'a>>,
    chunk_crcs: Option<&'a [u8]>,
    arena_len: usize,
    damaged: Option<&mut Vec<LoadError>>,
) -> Result<Option<ArenaCrc<'a>>, LoadError> {
    let (Some(ArenaCrc::Whole { offset, .. }), Some(crcs)) = (deferred, chunk_crcs) else {
        return Ok(deferred);
    };
    match (load::chunked(offset, crcs, arena_len), damaged) {
        (Ok(chunks), _) => Ok(Some(chunks)),
        (Err(error), Some(damaged)) => {
            damaged.push(error);
            Ok(deferred)
        }
        (Err(error), None) => Err(error),
    }
}

/// Padding, `bytes[start..end]`, must be zero, so that a change to any byte of a file is
/// caught.
fn check_zero(bytes: &[u8], start: usize, end: usize) -> Result<(), LoadError> {
    match bytes[start..end].iter().position(|&b| b != 0) {
        Some(at) => Err(LoadError::Padding { offset: (start + at) as u64 }),
        None => Ok(()),
    }
}
