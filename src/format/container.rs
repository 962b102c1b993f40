//! The file container that saves and deltas share: a header, a section table, each
//! section's crc32, zero padding, and what [`describe`] reads of them. Writing a file to disk
//! atomically is the parent module's ([`write_atomically`](super::write_atomically)).
//!
//! ```text
//!  offset 0   ┌──────────────────────────────────────────────────────────┐
//!             │ FileHeader (32 B): magic "DATACOMP", format, key hash,    │
//!             │ section count, file length, crc32 of header + table,      │
//!             │ data version                                              │
//!  32         ├──────────────────────────────────────────────────────────┤
//!             │ SectionEntry × n (24 B each): kind, crc32, offset, length │
//!             ├──────── zero padding to 8 ───────────────────────────────┤
//!             │ section │ pad │ section │ pad │ ...                       │  each 8-aligned
//!             └──────────────────────────────────────────────────────────┘
//! ```
//!
//! A [`Layout`] lists the sections of one kind of file ([`FileKind`]): the store's save
//! ([`crate::save`]) and the delta ([`StorePatch`](crate::StorePatch)) each name theirs here,
//! so that a file of one kind read as the other is told apart by its first section.

use std::fmt;
use std::io::Write;

use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use super::error::{FileError, LoadError};
use super::version::{
    FORMAT_MAJOR, FORMAT_MINOR, KEY_HASH_FX32_BYTES, KEY_HASH_FX32_EMPTY, KEY_HASH_FX32_WORDS,
    MAGIC,
};

/// The section kind of the key tree (format 1.1 on).
pub(crate) const TREE_KIND: u32 = 13;

/// The section kind of format 1.0's flat list of key names.
pub(crate) const LIST_KIND: u32 = 6;

/// What a file holds: what [`describe`](super::describe) reads from its sections.
///
/// # Examples
///
/// ```
/// use datacomp::format::{self, FileKind};
/// use datacomp::{Store, StorePatch};
///
/// let base = Store::new();
/// let mut target = base.clone();
/// target.insert_empty();
/// assert_eq!(format::describe(&base.to_bytes())?.kind, FileKind::Save);
/// let delta = StorePatch::diff(&base, &target).to_bytes();
/// assert_eq!(format::describe(&delta)?.kind, FileKind::Delta);
/// assert_eq!(FileKind::Delta.to_string(), "delta");
/// # Ok::<(), datacomp::LoadError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FileKind {
    /// A full save of a store ([`Store::save`](crate::Store::save)).
    Save,
    /// A delta save: what changed since a base ([`StorePatch`](crate::StorePatch)).
    Delta,
}

impl FileKind {
    /// The kind's name as `datacomp inspect` and errors print it: `"save"` or `"delta"`.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::format::FileKind;
    ///
    /// assert_eq!(FileKind::Save.as_str(), "save");
    /// ```
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            FileKind::Save => "save",
            FileKind::Delta => "delta",
        }
    }
}

impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Sections start at multiples of this.
const ALIGN: usize = 8;

#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub(crate) struct FileHeader {
    magic: [u8; 8],
    major: U16,
    minor: U16,
    key_hash: U16,
    sections: U16,
    file_len: U64,
    /// crc32 of this header (with this field zero) and the section table.
    table_crc: U32,
    /// The data version of the store the file holds or (a delta) gives: see
    /// [`Store::data_version`](crate::Store::data_version). Format 1.0 wrote zero here, so its
    /// saves read as data version 0.
    data_version: U32,
}

#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub(crate) struct SectionEntry {
    kind: U32,
    crc: U32,
    offset: U64,
    len: U64,
}

/// The sections of a file, in file order, and what the file is.
pub(crate) struct Layout<const N: usize> {
    pub(crate) kind: FileKind,
    /// The format's minor version the header names: [`FORMAT_MINOR`], or an older one's
    /// whose sections these are.
    pub(crate) minor: u16,
    pub(crate) sections: [(u32, &'static str); N],
    /// The section whose checksum [`parse`] leaves to the caller, who checks it with the
    /// section's contents, on all cores (see [`crate::load`]).
    pub(crate) deferred: Option<u32>,
    /// A section that, when the file has it, holds a crc per chunk of the deferred one (format
    /// 1.1); it is written after the required ones.
    pub(crate) chunk_crcs: Option<(u32, &'static str)>,
}

impl<const N: usize> Layout<N> {
    /// This layout as format `minor` wrote it, with the key names as the flat list that the
    /// key tree replaced ([`REPLACED`]) in the tree's slot.
    pub(crate) const fn with_names_list(self, minor: u16) -> Layout<N> {
        let mut sections = self.sections;
        let mut i = 0;
        while i < N {
            if sections[i].0 == REPLACED[0].2 {
                sections[i] = (REPLACED[0].0, REPLACED[0].1);
            }
            i += 1;
        }
        Layout { minor, sections, ..self }
    }

    /// This layout as format `minor` (1.2 or before) wrote it, with the index's spans
    /// ([`REPLACED`]) in the slot of the end offsets that replaced them in format 1.3.
    #[cfg(test)]
    pub(crate) const fn with_spans(self, minor: u16) -> Layout<N> {
        let mut sections = self.sections;
        let mut i = 0;
        while i < N {
            if sections[i].0 == REPLACED[1].2 {
                sections[i] = (REPLACED[1].0, REPLACED[1].1);
            }
            i += 1;
        }
        Layout { minor, sections, ..self }
    }
}

/// The section of a save's index items as end offsets (format 1.3): the end of each entity's
/// blob in the arena, in words, one little-endian `u32` per entity in dense order; blob `i`
/// is the arena's words `end[i - 1]..end[i]` (from 0 for the first).
pub(crate) const ENDS: (u32, &str) = (14, "index ends");

/// The section kind of a save's index items as spans (format 1.2 and before): an offset and a
/// length, `u32` each, per entity in dense order.
pub(crate) const SPANS_KIND: u32 = 2;

/// A full save: a store's index and arena.
pub(crate) const SAVE: Layout<6> = Layout {
    kind: FileKind::Save,
    minor: FORMAT_MINOR,
    sections: [
        (1, "index header"),
        ENDS,
        (3, "index meta"),
        (4, "index slots"),
        (5, "arena"),
        (TREE_KIND, "key tree"),
    ],
    deferred: Some(ARENA),
    chunk_crcs: Some(ARENA_CRCS),
};

/// The sections a save is written with: [`SAVE`]'s, then its arena's chunk crcs, its
/// lineage and its prototype links.
pub(crate) const SAVE_WRITTEN: Layout<9> = Layout {
    kind: FileKind::Save,
    minor: FORMAT_MINOR,
    sections: [
        SAVE.sections[0],
        SAVE.sections[1],
        SAVE.sections[2],
        SAVE.sections[3],
        SAVE.sections[4],
        SAVE.sections[5],
        ARENA_CRCS,
        LINEAGE,
        PROTOTYPES,
    ],
    deferred: Some(ARENA),
    chunk_crcs: Some(ARENA_CRCS),
};

/// The section of a save's arena chunk crcs (format 1.1): a `u32` chunk size, then a `u32`
/// crc32 of each chunk of the arena.
const ARENA_CRCS: (u32, &str) = (12, "arena crcs");

/// The section kind of a save's arena.
pub(crate) const ARENA: u32 = 5;

/// The section of a save's lineage (format 1.4): the store's
/// [`lineage`](crate::Store::lineage), 16 bytes, a little-endian `u128`; empty for a store
/// that has none (one loaded from a save of 1.3 or before). Optional: a save without it reads
/// as a store without a lineage.
pub(crate) const LINEAGE: (u32, &str) = (15, "lineage");

/// The section of the prototype links (format 1.5), in saves and deltas alike; optional (a
/// file without it has no links) and empty when no entity has a prototype.
///
/// - In a save: one little-endian `u32` per entity in dense order (as `index ends`): 0 for
///   an entity without a prototype, else 1 + its prototype's dense position.
/// - In a delta: the links that differ from the base's, as pairs of little-endian `u64`
///   handles (instance, prototype; [`Id::NULL`](crate::Id::NULL)'s bits for "none"), in
///   ascending order of the instance's bits, one pair per entity live in the target whose
///   prototype changed (a removed entity's link goes with it).
pub(crate) const PROTOTYPES: (u32, &str) = (16, "prototypes");

/// A delta save: what changed since a base save (see [`StorePatch`](crate::StorePatch)).
pub(crate) const DELTA: Layout<6> = Layout {
    kind: FileKind::Delta,
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

/// The sections a delta is written with: [`DELTA`]'s, then its prototype links.
pub(crate) const DELTA_WRITTEN: Layout<7> = Layout {
    kind: FileKind::Delta,
    minor: FORMAT_MINOR,
    sections: [
        DELTA.sections[0],
        DELTA.sections[1],
        DELTA.sections[2],
        DELTA.sections[3],
        DELTA.sections[4],
        DELTA.sections[5],
        PROTOTYPES,
    ],
    deferred: None,
    chunk_crcs: None,
};

/// A delta save of format 1.1 (the last whose key names are a flat list, kind 6; its base's
/// crc covers them in that form): a delta read with such names is written back the same way.
pub(crate) const DELTA_LIST: Layout<6> = DELTA.with_names_list(1);

/// Sections of an older format that a later one replaced: each stands in the slot of its
/// successor (format 1.0's key names as a flat list where the key tree is now; format 1.2's
/// index spans where the end offsets are now).
const REPLACED: [(u32, &str, u32); 2] =
    [(LIST_KIND, "key names", TREE_KIND), (SPANS_KIND, "index items", ENDS.0)];

/// A file that passed [`parse`]: its header, its section table, and the known sections, in
/// the order of its kind's list.
pub(crate) struct Parsed<'a, const N: usize> {
    pub(crate) header: FileHeader,
    pub(crate) table: &'a [SectionEntry],
    pub(crate) sections: [&'a [u8]; N],
    /// How the deferred section's bytes are checked: the caller must.
    pub(crate) deferred: Option<ArenaCrc<'a>>,
    /// The kind of section found in each slot: the kind's own, or the one it replaced.
    pub(crate) kinds: [u32; N],
    /// A save's lineage section, if it has one (format 1.4), unchecked; empty if damaged in a
    /// tolerant parse.
    pub(crate) lineage: Option<&'a [u8]>,
    /// The prototype links section, if the file has one (format 1.5), unchecked.
    pub(crate) prototypes: Option<&'a [u8]>,
}

impl<const N: usize> Parsed<'_, N> {
    /// The key hash the file's keys were made with: [`KEY_HASH_FX32_WORDS`],
    /// [`KEY_HASH_FX32_BYTES`] or [`KEY_HASH_FX32_EMPTY`] (`parse` refuses others).
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
        .chain(&DELTA_WRITTEN.sections)
        .copied()
        .chain(REPLACED.iter().map(|&(k, name, _)| (k, name)))
        .find(|&(k, _)| k == kind)
        .map_or("unknown", |(_, name)| name)
}

/// Writes a file of `kind` for a store of `data_version`: the header and table, then each
/// section and its padding.
pub(crate) fn write_file<const N: usize>(
    kind: &Layout<N>,
    sections: &[&[u8]; N],
    data_version: u32,
    out: impl Write,
) -> std::io::Result<()> {
    let parts: [&[&[u8]]; N] = std::array::from_fn(|i| std::slice::from_ref(&sections[i]));
    write_file_crcs(kind, &parts, [None; N], data_version, out)
}

/// As [`write_file`], each section given as the parts it is written from, one after the
/// other (a store's live blobs, with no copy that packs them), and the crcs of some sections
/// given (computed as they were built).
pub(crate) fn write_file_crcs<const N: usize>(
    kind: &Layout<N>,
    sections: &[&[&[u8]]; N],
    crcs: [Option<u32>; N],
    data_version: u32,
    mut out: impl Write,
) -> std::io::Result<()> {
    out.write_all(&file_head(kind, sections, crcs, data_version))?;
    for parts in sections {
        for part in *parts {
            out.write_all(part)?;
        }
        let len = parts_len(parts);
        out.write_all(&[0; ALIGN][..len.next_multiple_of(ALIGN) - len])?;
    }
    Ok(())
}

/// The bytes of a section written from `parts`.
fn parts_len(parts: &[&[u8]]) -> usize {
    parts.iter().map(|part| part.len()).sum()
}

/// Bytes of a file whose sections have these lengths: the header, the table, and each
/// section padded to 8.
pub(crate) fn file_len<const N: usize>(section_lens: [usize; N]) -> usize {
    let head = size_of::<FileHeader>() + N * size_of::<SectionEntry>();
    head.next_multiple_of(ALIGN)
        + section_lens.iter().map(|l| l.next_multiple_of(ALIGN)).sum::<usize>()
}

/// The header and section table for these sections.
fn file_head<const N: usize>(
    kind: &Layout<N>,
    sections: &[&[&[u8]]; N],
    crcs: [Option<u32>; N],
    data_version: u32,
) -> Vec<u8> {
    let table_end = size_of::<FileHeader>() + N * size_of::<SectionEntry>();
    let mut offset = table_end.next_multiple_of(ALIGN);
    let mut table = Vec::with_capacity(N);
    for (((kind, _), parts), crc) in kind.sections.iter().zip(sections).zip(crcs) {
        let crc = crc.unwrap_or_else(|| {
            let mut crc = crc32fast::Hasher::new();
            parts.iter().for_each(|part| crc.update(part));
            crc.finalize()
        });
        let len = parts_len(parts);
        table.push(SectionEntry {
            kind: U32::new(*kind),
            crc: U32::new(crc),
            offset: U64::new(offset as u64),
            len: U64::new(len as u64),
        });
        offset = (offset + len).next_multiple_of(ALIGN);
    }
    let mut header = FileHeader {
        magic: MAGIC,
        major: U16::new(FORMAT_MAJOR),
        minor: U16::new(kind.minor),
        key_hash: U16::new(KEY_HASH_FX32_EMPTY),
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

/// Checks the header, the table, padding and crcs, and returns them with the sections of
/// `kind`, all of which must be there.
pub(crate) fn parse<'a, const N: usize>(
    bytes: &'a [u8],
    kind: &Layout<N>,
) -> Result<Parsed<'a, N>, LoadError> {
    parse_tolerant(bytes, kind, false).map(|(parsed, _)| parsed)
}

/// The file header of `bytes`, checked (magic, major version, key hash, length), and the
/// bytes after it.
fn read_file_header(bytes: &[u8]) -> Result<(FileHeader, &[u8]), LoadError> {
    let len = bytes.len() as u64;
    let (header, rest) = FileHeader::read_from_prefix(bytes).map_err(|_| {
        LoadError::File(FileError::Truncated { what: "file header", needed: 32, len })
    })?;
    if header.magic != MAGIC {
        return Err(LoadError::File(FileError::BadMagic { found: header.magic }));
    }
    let (major, minor) = (header.major.get(), header.minor.get());
    if major != FORMAT_MAJOR {
        return Err(LoadError::File(FileError::UnsupportedVersion { major, minor }));
    }
    if ![KEY_HASH_FX32_WORDS, KEY_HASH_FX32_BYTES, KEY_HASH_FX32_EMPTY]
        .contains(&header.key_hash.get())
    {
        return Err(LoadError::File(FileError::UnsupportedKeyHash {
            key_hash: header.key_hash.get(),
        }));
    }
    if header.file_len.get() != len {
        return Err(LoadError::File(FileError::FileLength {
            expected: header.file_len.get(),
            found: len,
        }));
    }
    Ok((header, rest))
}

/// Sections a salvage can do without: the key names (entities keep their keys, unnamed), the
/// arena's chunk crcs (the arena's whole crc in the table stands in for them) and the lineage
/// (the salvaged store has none).
const EXPENDABLE: [u32; 4] = [LIST_KIND, TREE_KIND, ARENA_CRCS.0, LINEAGE.0];

/// As [`parse`]; with `tolerant`, a section of [`EXPENDABLE`] that fails its crc (or, for the
/// chunk crcs, does not read) is left out, empty, and its error returned beside the file.
pub(crate) fn parse_tolerant<'a, const N: usize>(
    bytes: &'a [u8],
    kind: &Layout<N>,
    tolerant: bool,
) -> Result<(Parsed<'a, N>, Vec<LoadError>), LoadError> {
    let mut damaged = Vec::new();
    let len = bytes.len() as u64;
    let (header, rest) = read_file_header(bytes)?;
    let count = usize::from(header.sections.get());
    let table_len = count * size_of::<SectionEntry>();
    let table_bytes = rest.get(..table_len).ok_or_else(|| {
        LoadError::File(FileError::Truncated {
            what: "section table",
            needed: (32 + table_len) as u64,
            len,
        })
    })?;
    let mut crc = crc32fast::Hasher::new();
    crc.update(FileHeader { table_crc: U32::ZERO, ..header }.as_bytes());
    crc.update(table_bytes);
    let found = crc.finalize();
    if found != header.table_crc.get() {
        let expected = header.table_crc.get();
        return Err(LoadError::File(FileError::Crc {
            section: "header and table",
            offset: 0,
            expected,
            found,
        }));
    }
    let table = <[SectionEntry]>::ref_from_bytes(table_bytes).map_err(|_| {
        LoadError::File(FileError::Truncated { what: "section table", needed: 0, len })
    })?;

    let mut sections = [&bytes[..0]; N];
    let mut kinds = kind.sections.map(|(k, _)| k);
    let mut seen = [false; N];
    let mut deferred = None;
    // The optional sections found: the arena's chunk crcs, a save's lineage, the prototypes.
    let mut optional: [Option<&[u8]>; 3] = [None; 3];
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
            return Err(LoadError::File(FileError::SectionBounds {
                section: name,
                offset,
                len: section_len,
                file_len: len,
            }));
        };
        let repeated = slot.is_some_and(|slot| seen[slot]);
        if repeated || offset % ALIGN as u64 != 0 || offset < end as u64 {
            return Err(LoadError::File(FileError::SectionPlacement { section: name, offset }));
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
                let error =
                    LoadError::File(FileError::Crc { section: name, offset, expected, found });
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
        } else if let Some(i) = optional_slot(kind, entry.kind.get()) {
            // At most one of each.
            if optional[i].replace(section).is_some() {
                return Err(LoadError::File(FileError::SectionPlacement { section: name, offset }));
            }
        }
    }
    let [chunk_crcs, lineage, prototypes] = optional;
    // A damaged one (left empty) is left out: the whole crc checks the arena.
    let chunk_crcs = chunk_crcs.filter(|s: &&[u8]| !s.is_empty());
    check_zero(bytes, end, bytes.len())?;
    if let Some(missing) = seen.iter().position(|&s| !s) {
        // The other kind of file, told apart by its first section.
        let other = [&SAVE, &DELTA].into_iter().find(|other| {
            other.kind != kind.kind && table.first().is_some_and(|e| e.kind == other.sections[0].0)
        });
        if let Some(other) = other {
            let (expected, found) = (kind.kind.as_str(), other.kind.as_str());
            return Err(LoadError::File(FileError::FileKind { expected, found }));
        }
        return Err(LoadError::File(FileError::MissingSection {
            section: kind.sections[missing].1,
        }));
    }
    let arena_len = kind.sections.iter().position(|&(k, _)| Some(k) == kind.deferred);
    let arena_len = arena_len.map_or(0, |slot| sections[slot].len());
    let deferred = with_chunks(deferred, chunk_crcs, arena_len, tolerant.then_some(&mut damaged))?;
    Ok((Parsed { header, table, sections, deferred, kinds, lineage, prototypes }, damaged))
}

/// Where [`parse_tolerant`] keeps an optional section of a file of `kind`, if `entry_kind`
/// is one: 0 for the arena's chunk crcs, 1 for a save's lineage, 2 for the prototype links.
fn optional_slot<const N: usize>(kind: &Layout<N>, entry_kind: u32) -> Option<usize> {
    if kind.chunk_crcs.is_some_and(|(k, _)| k == entry_kind) {
        Some(0)
    } else if entry_kind == PROTOTYPES.0 {
        Some(2)
    } else {
        (kind.kind == FileKind::Save && entry_kind == LINEAGE.0).then_some(1)
    }
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
    match (chunked(offset, crcs, arena_len), damaged) {
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
        Some(at) => Err(LoadError::File(FileError::Padding { offset: (start + at) as u64 })),
        None => Ok(()),
    }
}

/// How a save's arena bytes are covered by checksums.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ArenaCrc<'a> {
    /// One crc32 of the whole arena (format 1.0), in the section table.
    Whole {
        /// The arena's offset in the file, for errors.
        offset: u64,
        /// The crc32 stored.
        expected: u32,
    },
    /// A crc32 of each `chunk_bytes` of the arena (the last one may be shorter).
    Chunks {
        /// The arena's offset in the file, for errors.
        offset: u64,
        // INVARIANT: a power of two; `crcs.len()` is the arena's bytes divided by it, rounded
        // up.
        chunk_bytes: usize,
        crcs: &'a [U32],
    },
}

/// The crc32 of each `chunk_bytes` of `arena`, as an `arena crcs` section (the chunk size,
/// then the crcs), and the crc32 of the whole arena, combined from them.
pub(crate) fn chunk_crcs(arena: &[&[u8]], chunk_bytes: usize) -> (Vec<u8>, u32) {
    let len = parts_len(arena);
    let mut section = Vec::with_capacity(4 + 4 * len.div_ceil(chunk_bytes));
    section.extend_from_slice(&(chunk_bytes as u32).to_le_bytes());
    let mut whole = crc32fast::Hasher::new();
    let (mut chunk, mut filled) = (crc32fast::Hasher::new(), 0);
    let mut end_chunk = |chunk: &mut crc32fast::Hasher, filled: &mut usize| {
        let crc = std::mem::take(chunk).finalize();
        section.extend_from_slice(&crc.to_le_bytes());
        whole.combine(&crc32fast::Hasher::new_with_initial_len(crc, *filled as u64));
        *filled = 0;
    };
    // The parts split into chunks as their concatenation would be.
    for part in arena {
        let mut rest = *part;
        while !rest.is_empty() {
            let (now, later) = rest.split_at(rest.len().min(chunk_bytes - filled));
            chunk.update(now);
            filled += now.len();
            rest = later;
            if filled == chunk_bytes {
                end_chunk(&mut chunk, &mut filled);
            }
        }
    }
    if filled > 0 {
        end_chunk(&mut chunk, &mut filled);
    }
    (section, whole.finalize())
}

/// Reads an `arena crcs` section for an arena of `arena_len` bytes at file offset `offset`.
///
/// # Errors
///
/// [`FileError::ChunkSize`] for a chunk size that is not a power of two from 1 KiB to 1 GiB,
/// [`FileError::SectionSize`] when the section does not hold one crc per chunk.
pub(crate) fn chunked(
    offset: u64,
    section: &[u8],
    arena_len: usize,
) -> Result<ArenaCrc<'_>, LoadError> {
    let (chunk_bytes, crcs) = U32::read_from_prefix(section).map_err(|_| {
        LoadError::File(FileError::SectionSize {
            section: "arena crcs",
            expected: 4,
            found: section.len() as u64,
        })
    })?;
    let chunk_bytes = chunk_bytes.get();
    if !chunk_bytes.is_power_of_two() || !(1 << 10..=1 << 30).contains(&chunk_bytes) {
        return Err(LoadError::File(FileError::ChunkSize { chunk_bytes }));
    }
    let chunk_bytes = chunk_bytes as usize;
    let count = arena_len.div_ceil(chunk_bytes);
    let crcs =
        <[U32]>::ref_from_bytes(crcs).ok().filter(|c| c.len() == count).ok_or_else(|| {
            LoadError::File(FileError::SectionSize {
                section: "arena crcs",
                expected: 4 + 4 * count as u64,
                found: section.len() as u64,
            })
        })?;
    Ok(ArenaCrc::Chunks { offset, chunk_bytes, crcs })
}

/// A save file's header and section table: what `datacomp inspect` prints.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct FileInfo {
    /// A full save or a delta save.
    pub kind: FileKind,
    /// The format's major version ([`FORMAT_MAJOR`]).
    pub major: u16,
    /// The format's minor version.
    pub minor: u16,
    /// The key hash ([`KEY_HASH_FX32_EMPTY`], or [`KEY_HASH_FX32_BYTES`] or
    /// [`KEY_HASH_FX32_WORDS`] for an old save).
    pub key_hash: u16,
    /// The data version of the store the file holds, or a delta gives
    /// ([`Store::data_version`](crate::Store::data_version)); 0 for a file of format 1.0.
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

impl FileInfo {
    /// What a checked file's header and section table say.
    pub(crate) fn read(kind: FileKind, header: &FileHeader, table: &[SectionEntry]) -> FileInfo {
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
        FileInfo {
            kind,
            major: header.major.get(),
            minor: header.minor.get(),
            key_hash: header.key_hash.get(),
            data_version: header.data_version.get(),
            file_len: header.file_len.get(),
            sections,
        }
    }
}
