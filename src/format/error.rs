//! Why a save or a delta did not load: [`LoadError`] and its layers.
//!
//! | layer | raised by | what is wrong |
//! |---|---|---|
//! | [`FileError`] | `container.rs` | the header, section table, placement, padding or crcs |
//! | [`HandleMapError`] | `crate::handle_map` | the index's handle-map sections |
//! | [`StoreError`] | `check.rs`, `names.rs`, `lazy.rs`, `salvage.rs`, `upgrade.rs`, `delta.rs`, `crate::store` | the index's ends, the blobs, the key names; a key hash 1 save's rehash; a delta's own sections, or its fit to the base |

use std::fmt;

use super::version::FORMAT_MAJOR;
use crate::blob::BlobError;
use crate::handle_map::{HandleMapError, Id};
use crate::key::Key;
use crate::text::shown::Shortened;

/// Why bytes are not a well-formed datacomp file: its header, section table, section
/// placement, padding or checksums (the whole file's or the arena's chunks), or a file of the
/// other kind. This is the container that saves and deltas share; whether the sections then
/// hold a valid store is [`StoreError`]'s concern.
///
/// [`LoadError::File`] wraps it. Display messages are lowercase, with no
/// trailing period, and name the section or byte at fault.
///
/// # Examples
///
/// ```
/// use datacomp::{LoadError, Store};
/// use datacomp::format::FileError;
///
/// let bytes = [b"NOTASAVE".as_slice(), &[0; 24]].concat(); // a whole header's length
/// let err = Store::from_bytes(&bytes).unwrap_err();
/// assert_eq!(err, LoadError::File(FileError::BadMagic { found: *b"NOTASAVE" }));
/// assert_eq!(
///     err.to_string(),
///     "not a datacomp save: starts with [4e, 4f, 54, 41, 53, 41, 56, 45], not \"DATACOMP\""
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileError {
    /// The file ends before the part named.
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Bytes it needs.
        needed: u64,
        /// Bytes the file has.
        len: u64,
    },
    /// The file does not start with "DATACOMP".
    BadMagic {
        /// The first 8 bytes found.
        found: [u8; 8],
    },
    /// A major format version this build cannot read.
    UnsupportedVersion {
        /// Major version found.
        major: u16,
        /// Minor version found.
        minor: u16,
    },
    /// A key hash this build does not compute.
    UnsupportedKeyHash {
        /// The key-hash id found.
        key_hash: u16,
    },
    /// The file is not as long as its header says.
    FileLength {
        /// Length in the header.
        expected: u64,
        /// Length found.
        found: u64,
    },
    /// A section's checksum does not match: its bytes changed.
    Crc {
        /// The section.
        section: &'static str,
        /// Where it starts.
        offset: u64,
        /// The checksum stored.
        expected: u32,
        /// The checksum of the bytes found.
        found: u32,
    },
    /// A chunk of the arena does not match its checksum: its bytes changed.
    ChunkCrc {
        /// The chunk's number: it holds the arena's bytes from `chunk * chunk size`.
        chunk: u64,
        /// Where it starts in the file.
        offset: u64,
        /// The checksum stored.
        expected: u32,
        /// The checksum of the bytes found.
        found: u32,
    },
    /// A save's `arena crcs` section gives a chunk size that is not a power of two from 1 KiB
    /// to 1 GiB.
    ChunkSize {
        /// The chunk size found, in bytes.
        chunk_bytes: u32,
    },
    /// A section of the container's own (`arena crcs`: one crc per chunk of the arena) is not
    /// the size its header and the arena call for.
    SectionSize {
        /// The section.
        section: &'static str,
        /// Bytes the counts call for.
        expected: u64,
        /// Bytes found.
        found: u64,
    },
    /// A section runs past the end of the file.
    SectionBounds {
        /// The section.
        section: &'static str,
        /// Where it starts.
        offset: u64,
        /// Its length.
        len: u64,
        /// The file's length.
        file_len: u64,
    },
    /// A section is repeated, not 8-aligned, or overlaps what comes before it.
    SectionPlacement {
        /// The section.
        section: &'static str,
        /// Where it starts.
        offset: u64,
    },
    /// A section the format requires is missing.
    MissingSection {
        /// The section.
        section: &'static str,
    },
    /// A padding byte is not zero.
    Padding {
        /// Its offset in the file.
        offset: u64,
    },
    /// A file of the other kind: a delta save read as a full save, or the reverse.
    FileKind {
        /// `"save"` or `"delta"`: what was asked for.
        expected: &'static str,
        /// What the file is.
        found: &'static str,
    },
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            FileError::Truncated { what, needed, len } => {
                write!(f, "file of {len} bytes ends inside the {what}, which needs {needed}")
            }
            FileError::BadMagic { found } => {
                write!(f, "not a datacomp save: starts with {found:02x?}, not \"DATACOMP\"")
            }
            FileError::UnsupportedVersion { major, minor } => write!(
                f,
                "save format {major}.{minor} is not supported: this build reads format \
                 {FORMAT_MAJOR}.x"
            ),
            FileError::UnsupportedKeyHash { key_hash } => {
                write!(f, "save uses key hash {key_hash}, which this build does not compute")
            }
            FileError::FileLength { expected, found } => {
                write!(f, "file is {found} bytes; its header says {expected}")
            }
            FileError::Crc { section, offset, expected, found } => write!(
                f,
                "section '{section}' at byte {offset}: crc32 {found:08x} does not match the \
                 stored {expected:08x}"
            ),
            FileError::ChunkCrc { chunk, offset, expected, found } => write!(
                f,
                "arena chunk {chunk} at byte {offset}: crc32 {found:08x} does not match the \
                 stored {expected:08x}"
            ),
            FileError::ChunkSize { chunk_bytes } => write!(
                f,
                "section 'arena crcs': chunk size {chunk_bytes} is not a power of two from 1 KiB \
                 to 1 GiB"
            ),
            FileError::SectionSize { section, expected, found } => {
                write!(f, "section '{section}' is {found} bytes; its header says {expected}")
            }
            FileError::SectionBounds { section, offset, len, file_len } => write!(
                f,
                "section '{section}' at bytes {offset}..{offset}+{len} runs past the file's \
                 {file_len} bytes"
            ),
            FileError::SectionPlacement { section, offset } => write!(
                f,
                "section '{section}' at byte {offset} is repeated, not 8-aligned, or overlaps \
                 the part before it"
            ),
            FileError::MissingSection { section } => write!(f, "section '{section}' is missing"),
            FileError::Padding { offset } => write!(f, "padding byte {offset} is not zero"),
            FileError::FileKind { expected, found } => {
                write!(f, "this is a {found} file, not a {expected} file")
            }
        }
    }
}

impl std::error::Error for FileError {}

/// Why saved bytes could not be loaded, by layer: the file container, the store's index (a
/// handle map), or the store it holds (with the upgrade of an old key hash, and a delta's own
/// sections and its fit to its base). Each layer's error says which section, entry or entity
/// is at fault; this enum adds no words of its own, so its `Display` is the inner error's, and
/// [`source`](std::error::Error::source) gives the inner error's source.
///
/// | layer                         | checks                                                   |
/// |-------------------------------|----------------------------------------------------------|
/// | [`File`](LoadError::File)     | header, section table, placement, padding, crcs, kind    |
/// | [`HandleMap`](LoadError::HandleMap) | the index's handle-map sections                    |
/// | [`Store`](LoadError::Store)   | index header, spans, blobs, key names, alignment in place; rehashing a key hash 1 save's keys; a delta's own sections and its fit to the base |
///
/// # Examples
///
/// ```
/// use std::error::Error as _;
/// use datacomp::{HandleMap, LoadError, Store};
/// use datacomp::format::FileError;
/// use datacomp::handle_map::HandleMapError;
///
/// let err = Store::from_bytes(b"DATACOMP").unwrap_err();
/// let inner = FileError::Truncated { what: "file header", needed: 32, len: 8 };
/// assert_eq!(err, LoadError::File(inner.clone()));
/// assert_eq!(err.to_string(), inner.to_string(), "the inner error's words");
/// assert!(err.source().is_none(), "transparent: the layer error has no source of its own");
///
/// let mut map = HandleMap::new(0);
/// map.insert(1_u64);
/// let raw = map.as_raw();
/// let short = datacomp::handle_map::RawHandleMap { items: &raw.items[..4], ..raw };
/// let err = LoadError::from(HandleMap::<u64>::from_raw(&short).unwrap_err());
/// let inner = HandleMapError::SectionSize { section: "items", expected: 8, found: 4 };
/// assert_eq!(err, LoadError::HandleMap(inner));
/// assert_eq!(err.to_string(), "section 'items' is 4 bytes; its header says 8");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoadError {
    /// The bytes are not a well-formed datacomp file (or are a file of the other kind).
    File(FileError),
    /// A handle map's sections (the store's index) are malformed.
    HandleMap(HandleMapError),
    /// The file's sections do not hold a valid store, a key hash 1 save cannot be rehashed (as
    /// asked), or a delta's own sections are malformed or it does not fit its base.
    Store(StoreError),
}

// Written out rather than through `crate::error`'s macro, which `Error` uses: this file would
// then import `error.rs`, which imports this file for `Error::Load`, a circle. Three variants.
impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::File(error) => fmt::Display::fmt(error, f),
            LoadError::HandleMap(error) => fmt::Display::fmt(error, f),
            LoadError::Store(error) => fmt::Display::fmt(error, f),
        }
    }
}

/// Transparent, as `Display` is: the layer's error is this error (match the variant to get it),
/// so `source()` is the layer error's own source, and a reporter that walks the chain prints
/// each message once.
impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LoadError::File(error) => error.source(),
            LoadError::HandleMap(error) => error.source(),
            LoadError::Store(error) => error.source(),
        }
    }
}

impl From<FileError> for LoadError {
    fn from(error: FileError) -> Self {
        LoadError::File(error)
    }
}

impl From<HandleMapError> for LoadError {
    fn from(error: HandleMapError) -> Self {
        LoadError::HandleMap(error)
    }
}

impl From<StoreError> for LoadError {
    fn from(error: StoreError) -> Self {
        LoadError::Store(error)
    }
}

/// Why a file's sections do not make a valid store, a delta does not fit its base, or a save
/// of key hash 1 cannot be rehashed (as asked).
///
/// - **A file's sections** (a save's, or a delta's store sections): the index header, the
///   entities' spans in the arena, their blobs, the key names, or the arena's place in memory
///   for a read in place.
/// - **A delta** ([`StorePatch`](crate::store::StorePatch)): its own sections (the `Delta...`
///   variants, and [`SectionSize`](StoreError::SectionSize) for a delta section's size), or a
///   mismatch with the base it is applied to.
/// - **The key-hash upgrade**: a save of key hash 1 is well-formed and its store valid, but its
///   keys cannot be brought to this build's key hash: nothing in the bytes is wrong, and the
///   same save loads once the caller gives the paths it lacks
///   ([`LoadOptions::known_keys`](super::LoadOptions::known_keys)) or loads it into a
///   [`Store`](crate::store::Store) rather than a view ([`KeyHashView`](StoreError::KeyHashView),
///   [`UnexplainedKeys`](StoreError::UnexplainedKeys),
///   [`AmbiguousKnownKeys`](StoreError::AmbiguousKnownKeys),
///   [`UpgradeCollision`](StoreError::UpgradeCollision)).
///
/// The container around them (header, table, checksums) is [`FileError`]'s concern, the
/// index's handle map [`HandleMapError`]'s. [`LoadError::Store`] wraps it.
///
/// # Examples
///
/// ```
/// use datacomp::{Blob, LoadError, Store, StorePatch, StoreView};
/// use datacomp::format::StoreError;
///
/// let mut store = Store::new();
/// store.insert(&[("name", "Ada")].into_iter().collect::<Blob>());
/// let bytes = store.to_bytes();
/// // The same bytes one byte off a word boundary: a view cannot read the arena in place.
/// let mut shifted = vec![0_u8; bytes.len() + 1];
/// shifted[1..].copy_from_slice(&bytes);
/// let err = StoreView::new(&shifted[1..]).unwrap_err();
/// assert!(matches!(err, LoadError::Store(StoreError::Misaligned { section: "arena", .. })));
/// assert!(err.to_string().ends_with("not 4-byte aligned: read the file into an aligned buffer"));
///
/// let err = LoadError::from(StoreError::TypeId { expected: 1, found: 5 });
/// assert_eq!(
///     err.to_string(),
///     "section 'index header': type id 5, but store handles carry type id 1"
/// );
///
/// // A delta applied to a store that is not its base.
/// let base = Store::new();
/// let mut target = base.clone();
/// target.set_data_version(2);
/// let delta = StorePatch::diff(&base, &target);
/// let mut migrated = base.clone();
/// migrated.set_data_version(1);
/// let err = delta.apply(&mut migrated).unwrap_err();
/// assert_eq!(err, LoadError::Store(StoreError::DeltaDataVersion { expected: 0, found: 1 }));
/// assert!(err.to_string().starts_with("the delta was made from a base of data version 0"));
///
/// // A key hash 1 save read in place.
/// let err = LoadError::from(StoreError::KeyHashView { key_hash: 1 });
/// assert!(err.to_string().starts_with("save uses key hash 1: a view cannot rehash keys"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreError {
    /// A store or delta section's size disagrees with what describes it (the index header's
    /// fixed size, the arena's whole words, one span per index item; `delta base`, `delta
    /// index header`, whole entries of the slot and meta changes).
    SectionSize {
        /// The section.
        section: &'static str,
        /// Bytes the counts call for.
        expected: u64,
        /// Bytes found.
        found: u64,
    },
    /// A store's index carries another type id than every store's handles do.
    TypeId {
        /// The type id of store handles.
        expected: u16,
        /// The type id found.
        found: u16,
    },
    /// An entity's span runs past the arena.
    SpanOutOfArena {
        /// The entity.
        id: Id,
        /// First word of the span.
        offset: u32,
        /// Words in the span.
        words: u32,
        /// Words in the arena.
        arena_words: u64,
    },
    /// An entity's blob ends before it starts: the index's end offsets (format 1.3) decrease.
    EndsDecrease {
        /// The entity.
        id: Id,
        /// Where its blob starts, in words: the end of the one before it.
        start: u32,
        /// Where its blob ends, in words.
        end: u32,
    },
    /// Two entities' spans share arena words.
    SpansOverlap {
        /// The entity whose span starts first.
        first: Id,
        /// The entity whose span starts inside it.
        second: Id,
    },
    /// An entity's blob is malformed.
    Blob {
        /// The entity.
        id: Id,
        /// What is wrong with its blob.
        error: BlobError,
    },
    /// A section that is read in place is not aligned in memory for its elements.
    Misaligned {
        /// The section.
        section: &'static str,
        /// Its address in memory.
        address: usize,
    },
    /// The key-name section is malformed.
    KeyName {
        /// The entry at fault (its position in key order).
        index: u64,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// The key-tree section (the key names as a tree of segments) is malformed.
    KeyTree {
        /// The node at fault, counted from 1 in file order (0: the section's head).
        node: u64,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// A delta of another key hash than this build's stores (key hash 2).
    DeltaKeyHash {
        /// The key-hash id found.
        key_hash: u16,
    },
    /// A delta applied to a store of another data version than its base's.
    DeltaDataVersion {
        /// The data version of the base the delta was made from.
        expected: u32,
        /// The data version of the store it was applied to.
        found: u32,
    },
    /// A delta applied to a store that is not the base it was made from.
    DeltaBase {
        /// The crc32 of the base the delta was made from.
        expected: u32,
        /// The crc32 of the store it was applied to.
        found: u32,
    },
    /// An entry of a delta's slot or meta changes is out of order or out of range.
    DeltaChange {
        /// The section.
        section: &'static str,
        /// The entry's position in the section.
        index: u64,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// A record of a delta's entities section is malformed.
    DeltaRecord {
        /// Where the record starts in the section, in bytes.
        offset: u64,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// A delta's patch of an entity is not a valid patch.
    DeltaPatch {
        /// The entity.
        id: Id,
        /// Why, as [`Patch::from_bytes`](crate::blob::Patch::from_bytes) says it.
        error: BlobError,
    },
    /// A delta and its base disagree about an entity, or a store's rows and its frame do
    /// ([`store::rows::from_frame`](crate::store::rows::from_frame)).
    DeltaEntity {
        /// The entity.
        id: Id,
        /// What is wrong.
        problem: &'static str,
    },
    /// A save of key hash 1 read in place: its keys must be rehashed into a
    /// [`Store`](crate::Store) first.
    KeyHashView {
        /// The key-hash id found.
        key_hash: u16,
    },
    /// A query, column or `find` over a [`StoreView`](super::StoreView) of a save whose
    /// entities read through prototypes: a view reads what each entity stores, so it would
    /// miss every inherited value; a [`Store`](crate::Store) resolves them.
    LinkedView {
        /// The entities of the save that have a prototype.
        instances: u64,
    },
    /// A save of key hash 1 holds keys that neither its key names nor the known paths
    /// ([`LoadOptions::known_keys`](super::LoadOptions::known_keys)) explain, so they cannot be
    /// rehashed.
    UnexplainedKeys {
        /// Each such key (its key hash 1 value), in key order, with the first entity that holds
        /// it.
        keys: Vec<(Id, Key)>,
    },
    /// Two known paths had the key hash 1 value of a key the save holds: which one it is
    /// cannot be told.
    AmbiguousKnownKeys {
        /// The key's key hash 1 value.
        key: Key,
        /// One path.
        first: String,
        /// The other.
        second: String,
    },
    /// Two keys that entities of a key hash 1 save hold rehash to one key.
    UpgradeCollision {
        /// The key both rehash to.
        key: Key,
        /// One path.
        first: String,
        /// The other.
        second: String,
    },
    /// A prototype link (format 1.5: section `prototypes`) names no live entity of the store:
    /// in a save, a dense position past the entities; in a delta, a handle the target does
    /// not hold.
    PrototypeMissing {
        /// The instance.
        id: Id,
        /// Its prototype as the file names it: a save's 1-based dense position, a delta's
        /// handle bits.
        prototype: u64,
    },
    /// Prototype links (format 1.5) that make a cycle: `id`'s chain comes back to it.
    PrototypeCycle {
        /// An entity on the cycle.
        id: Id,
    },
    /// Prototype links (format 1.5) that put more than `limit`
    /// ([`MAX_CHAIN`](crate::store::MAX_CHAIN)) prototypes above an entity.
    PrototypeChain {
        /// The entity with the long chain.
        id: Id,
        /// The most a chain may hold.
        limit: usize,
    },
}

/// [`StoreError::LinkedView`]'s words.
fn linked_view(f: &mut fmt::Formatter<'_>, instances: u64) -> fmt::Result {
    let (s, read, inherit) = match instances {
        1 => ("y", "reads", "it inherits"),
        _ => ("ies", "read", "they inherit"),
    };
    write!(
        f,
        "{instances} entit{s} of the save {read} through prototypes: a view's queries read what \
         each entity stores and would miss what {inherit}; load the save into a store to query it"
    )
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            StoreError::SectionSize { section, expected, found } => {
                write!(f, "section '{section}' is {found} bytes; its header says {expected}")
            }
            StoreError::TypeId { expected, found } => write!(
                f,
                "section 'index header': type id {found}, but store handles carry type id {expected}"
            ),
            StoreError::SpanOutOfArena { id, offset, words, arena_words } => write!(
                f,
                "entity {id}: span of {words} words at word {offset} runs past the arena's \
                 {arena_words} words"
            ),
            StoreError::SpansOverlap { first, second } => {
                write!(f, "entities {first} and {second} share arena bytes")
            }
            StoreError::EndsDecrease { id, start, end } => write!(
                f,
                "section 'index ends': entity {id} ends at word {end}, before its start at word \
                 {start} (where the entity before it ends)"
            ),
            StoreError::Blob { id, ref error } => write!(f, "entity {id}: {error}"),
            StoreError::Misaligned { section, address } => write!(
                f,
                "section '{section}' lies at address {address:#x}, not 4-byte aligned: read the \
                 file into an aligned buffer"
            ),
            StoreError::KeyName { index, problem } => {
                write!(f, "section 'key names', entry {index}: {problem}")
            }
            StoreError::KeyTree { node, problem } => {
                write!(f, "section 'key tree', node {node}: {problem}")
            }
            StoreError::DeltaKeyHash { key_hash } => write!(
                f,
                "the delta uses key hash {key_hash}, and stores now use key hash 3: apply it to \
                 its base with the release that wrote it, then load that save to upgrade it"
            ),
            StoreError::DeltaDataVersion { expected, found } => write!(
                f,
                "the delta was made from a base of data version {expected}, not this store's \
                 {found}: apply it before migrating, or make it from the migrated base"
            ),
            StoreError::DeltaBase { expected, found } => write!(
                f,
                "the delta was made from a base with crc32 {expected:08x}, not this store \
                 ({found:08x})"
            ),
            StoreError::DeltaChange { section, index, problem } => {
                write!(f, "section '{section}', entry {index}: {problem}")
            }
            StoreError::DeltaRecord { offset, problem } => {
                write!(f, "section 'delta entities', record at byte {offset}: {problem}")
            }
            StoreError::DeltaPatch { id, ref error } => {
                write!(f, "the patch of entity {id}: {error}")
            }
            StoreError::DeltaEntity { id, problem } => write!(f, "entity {id}: {problem}"),
            StoreError::KeyHashView { key_hash } => write!(
                f,
                "save uses key hash {key_hash}: a view cannot rehash keys in place; load it into a \
                 store, which upgrades it"
            ),
            StoreError::LinkedView { instances } => linked_view(f, instances),
            StoreError::UnexplainedKeys { ref keys } => {
                /// Keys listed in the message; the rest are counted.
                const SHOWN: usize = 8;
                let (n, [have, them]) = match keys.len() {
                    1 => (1, ["key has", "it"]),
                    n => (n, ["keys have", "them"]),
                };
                write!(
                    f,
                    "save uses key hash 1, and {n} {have} no name in it to rehash {them} from: "
                )?;
                for (i, (id, key)) in keys.iter().take(SHOWN).enumerate() {
                    let separator = if i > 0 { ", " } else { "" };
                    write!(f, "{separator}{key} (entity {id})")?;
                }
                if keys.len() > SHOWN {
                    write!(f, " and {} more", keys.len() - SHOWN)?;
                }
                f.write_str("; give their paths as known keys")
            }
            StoreError::AmbiguousKnownKeys { key, ref first, ref second } => write!(
                f,
                "known keys {} and {} both had key hash 1 value {key}, which the save holds: \
                 which one it is cannot be told",
                Shortened(first),
                Shortened(second)
            ),
            StoreError::UpgradeCollision { key, ref first, ref second } => {
                let (first, second) = (Shortened(first), Shortened(second));
                write!(f, "{first} and {second} rehash to the same key {key} under key hash 2")
            }
            StoreError::PrototypeMissing { .. }
            | StoreError::PrototypeCycle { .. }
            | StoreError::PrototypeChain { .. } => self.fmt_prototype(f),
        }
    }
}

impl StoreError {
    /// `Display` of the prototype variants (format 1.5).
    fn fmt_prototype(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("section 'prototypes': ")?;
        match *self {
            StoreError::PrototypeMissing { id, prototype } => write!(
                f,
                "entity {id} names prototype {prototype}, which is no live entity of the store"
            ),
            StoreError::PrototypeCycle { id } => {
                write!(f, "entity {id}'s prototype chain comes back to it")
            }
            StoreError::PrototypeChain { id, limit } => {
                write!(f, "entity {id} has more than {limit} prototypes above it")
            }
            _ => Ok(()),
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StoreError::Blob { error, .. } | StoreError::DeltaPatch { error, .. } => Some(error),
            _ => None,
        }
    }
}
