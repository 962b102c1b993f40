//! Error types: one enum per area, and [`Error`] that wraps them all.

use std::fmt;

use crate::handle_map::HandleMapError;
use crate::text::Shortened;
use crate::{DeltaError, FileError, Id, Key, StoreError, UpgradeError};

/// Why a blob could not be read from bytes, or could not grow.
///
/// Each variant names the place: the entry index (position in the header) and its key, or the
/// byte offset. Display messages are lowercase, with no trailing period.
///
/// # Examples
///
/// ```
/// use datacomp::{Blob, BlobError};
///
/// let err = Blob::from_bytes(&[0; 6]).unwrap_err();
/// assert_eq!(err, BlobError::Truncated { byte_len: 6 });
/// assert_eq!(err.to_string(), "blob is 6 bytes, shorter than its 8-byte header");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BlobError {
    /// The blob would need more bytes than its 32-bit offsets can address.
    TooLarge {
        /// Bytes the blob would need.
        required: u64,
    },
    /// Fewer bytes than the fixed header.
    Truncated {
        /// Bytes given.
        byte_len: usize,
    },
    /// A length that is not a whole number of 4-byte words.
    UnalignedLength {
        /// Bytes given.
        byte_len: usize,
    },
    /// The header arrays for the stated number of keys run past the end of the blob.
    HeaderOutOfBounds {
        /// Keys the header says it holds.
        keys: u32,
        /// Where those arrays would end.
        header_end: u64,
        /// The blob's size in bytes.
        byte_len: usize,
    },
    /// The start of the payload region is inside the header, past the end, or not 4-aligned.
    BadPayloadStart {
        /// The stored start of the payload region.
        payload_start: u32,
        /// The end of the header arrays.
        header_end: u64,
        /// The blob's size in bytes.
        byte_len: usize,
    },
    /// A type tag that is none of the four types.
    UnknownTag {
        /// Position of the entry in the header.
        index: usize,
        /// The entry's key.
        key: Key,
        /// The tag found.
        tag: u8,
    },
    /// A boolean stored as something other than 0 or 1.
    InvalidBool {
        /// Position of the entry in the header.
        index: usize,
        /// The entry's key.
        key: Key,
        /// The 32-bit value found.
        raw: u32,
    },
    /// A string or float array whose bytes are not all inside the payload region, or whose
    /// offset is not 4-aligned.
    PayloadOutOfBounds {
        /// Position of the entry in the header.
        index: usize,
        /// The entry's key.
        key: Key,
        /// Where the payload starts.
        offset: u32,
        /// Where the payload would end (its length included).
        end: u64,
        /// The start of the payload region.
        payload_start: u32,
        /// The blob's size in bytes.
        byte_len: usize,
    },
    /// A string that is not UTF-8.
    InvalidUtf8 {
        /// Position of the entry in the header.
        index: usize,
        /// The entry's key.
        key: Key,
        /// Where the string's bytes start.
        offset: u32,
        /// How many leading bytes are valid UTF-8.
        valid_up_to: usize,
    },
    /// The same key twice in the header.
    DuplicateKey {
        /// The key.
        key: Key,
        /// Position of its first entry.
        first: usize,
        /// Position of its second entry.
        second: usize,
    },
    /// Two payloads that share bytes: writing one would change the other.
    OverlappingPayloads {
        /// Position of the entry whose payload starts first.
        first: usize,
        /// Position of the entry whose payload starts inside the first one's.
        second: usize,
        /// Where the second payload starts.
        offset: u32,
    },
}

impl fmt::Display for BlobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            BlobError::TooLarge { required } => write!(
                f,
                "blob would need {required} bytes, past the format's limit of {} bytes",
                crate::blob::MAX_BYTES
            ),
            BlobError::Truncated { byte_len } => {
                write!(f, "blob is {byte_len} bytes, shorter than its 8-byte header")
            }
            BlobError::UnalignedLength { byte_len } => {
                write!(f, "blob is {byte_len} bytes, not a whole number of 4-byte words")
            }
            BlobError::HeaderOutOfBounds { keys, header_end, byte_len } => write!(
                f,
                "header of {keys} keys ends at byte {header_end}, past the blob's {byte_len} bytes"
            ),
            BlobError::BadPayloadStart { payload_start, header_end, byte_len } => write!(
                f,
                "payload region starts at byte {payload_start}: not a multiple of 4 in \
                 {header_end}..={byte_len} (header end..blob end)"
            ),
            BlobError::UnknownTag { index, key, tag } => {
                write!(f, "entry {index} (key {key}): unknown type tag {tag}")
            }
            BlobError::InvalidBool { index, key, raw } => {
                write!(f, "entry {index} (key {key}): boolean stored as {raw}, not 0 or 1")
            }
            BlobError::PayloadOutOfBounds { index, key, offset, end, payload_start, byte_len } => {
                write!(
                    f,
                    "entry {index} (key {key}): payload at bytes {offset}..{end} is not a \
                     4-aligned range inside the payload region {payload_start}..{byte_len}"
                )
            }
            BlobError::InvalidUtf8 { index, key, offset, valid_up_to } => write!(
                f,
                "entry {index} (key {key}): string at byte {offset} is not UTF-8 after \
                 {valid_up_to} valid bytes"
            ),
            BlobError::DuplicateKey { key, first, second } => {
                write!(f, "key {key} appears twice, at entries {first} and {second}")
            }
            BlobError::OverlappingPayloads { first, second, offset } => write!(
                f,
                "entry {second}: payload at byte {offset} overlaps the payload of entry {first}"
            ),
        }
    }
}

impl std::error::Error for BlobError {}

/// Why a [`Patch`](crate::Patch) could not be read from bytes.
///
/// # Examples
///
/// ```
/// use datacomp::{Patch, PatchError};
///
/// let err = Patch::from_bytes(&[9, 0, 0, 0]).unwrap_err();
/// assert_eq!(err, PatchError::RemovalsOutOfBounds { removals: 9, byte_len: 4 });
/// assert_eq!(err.to_string(), "patch of 4 bytes claims 9 keys to remove, past its end");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PatchError {
    /// Fewer bytes than the count of keys to remove.
    Truncated {
        /// Bytes given.
        byte_len: usize,
    },
    /// A length that is not a whole number of 4-byte words.
    UnalignedLength {
        /// Bytes given.
        byte_len: usize,
    },
    /// The keys to remove run past the end.
    RemovalsOutOfBounds {
        /// Keys to remove, as stated.
        removals: u32,
        /// The patch's size in bytes.
        byte_len: usize,
    },
    /// A key to remove is not greater than the one before it (so a duplicate or out of order).
    RemovalsNotAscending {
        /// Position of the key among the keys to remove.
        index: usize,
    },
    /// The values to set are not a valid blob.
    Sets(BlobError),
    /// A key is both set and removed.
    SetAndRemoved {
        /// The key.
        key: Key,
    },
}

impl fmt::Display for PatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PatchError::Truncated { byte_len } => {
                write!(f, "patch is {byte_len} bytes, shorter than its 4-byte count")
            }
            PatchError::UnalignedLength { byte_len } => {
                write!(f, "patch is {byte_len} bytes, not a whole number of 4-byte words")
            }
            PatchError::RemovalsOutOfBounds { removals, byte_len } => write!(
                f,
                "patch of {byte_len} bytes claims {removals} keys to remove, past its end"
            ),
            PatchError::RemovalsNotAscending { index } => {
                write!(f, "key {index} to remove is not greater than the one before it")
            }
            PatchError::Sets(e) => write!(f, "the values to set: {e}"),
            PatchError::SetAndRemoved { key } => write!(f, "key {key} is both set and removed"),
        }
    }
}

impl std::error::Error for PatchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PatchError::Sets(e) => Some(e),
            _ => None,
        }
    }
}

/// Why a handle did not resolve in a [`HandleMap`](crate::HandleMap).
///
/// # Examples
///
/// ```
/// use datacomp::{HandleError, HandleMap};
///
/// let mut map = HandleMap::new(1);
/// let id = map.insert("x");
/// map.remove(id);
/// let err = map.try_get(id).unwrap_err();
/// assert_eq!(err, HandleError::Stale { id, current: Some(1) });
/// assert_eq!(err.to_string(), "handle 0v0t1 is stale: its slot is at generation 1 now");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HandleError {
    /// [`Id::NULL`](crate::Id::NULL).
    Null,
    /// The handle's slot holds no item, or the handle has its free bit set: no map issued it.
    Free {
        /// The handle.
        id: Id,
    },
    /// The handle belongs to a map of another type id.
    WrongType {
        /// The handle.
        id: Id,
        /// The type id of the map it was used with.
        expected: u16,
    },
    /// The handle's index is past every slot the map has.
    OutOfRange {
        /// The handle.
        id: Id,
        /// One past the map's highest slot index.
        slots: u64,
    },
    /// The handle's item was removed (or the map cleared or reset) since it was issued.
    Stale {
        /// The handle.
        id: Id,
        /// The slot's generation now: `None` when the slot was reset away or retired.
        current: Option<u16>,
    },
}

impl fmt::Display for HandleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            HandleError::Null => f.write_str("the null handle never resolves"),
            HandleError::Free { id } => write!(f, "handle {id} names a free slot"),
            HandleError::WrongType { id, expected } => write!(
                f,
                "handle {id} has type id {}, but this map's type id is {expected}",
                id.type_id()
            ),
            HandleError::OutOfRange { id, slots } => {
                write!(f, "handle {id} is out of range: the map has slot indices below {slots}")
            }
            HandleError::Stale { id, current: Some(generation) } => {
                write!(f, "handle {id} is stale: its slot is at generation {generation} now")
            }
            HandleError::Stale { id, current: None } => {
                write!(f, "handle {id} is stale: its slot was reset or retired")
            }
        }
    }
}

impl std::error::Error for HandleError {}

/// Why saved bytes could not be loaded, by layer: the file container, the store's index (a
/// handle map), the store it holds, the upgrade of an old key hash, or a delta's own sections.
/// Each layer's error says which section, entry or entity is at fault; this enum adds no words
/// of its own, so its `Display` is the inner error's, and [`source`](std::error::Error::source)
/// gives the inner error.
///
/// | layer                         | checks                                                   |
/// |-------------------------------|----------------------------------------------------------|
/// | [`File`](LoadError::File)     | header, section table, placement, padding, crcs, kind    |
/// | [`HandleMap`](LoadError::HandleMap) | the index's handle-map sections                    |
/// | [`Store`](LoadError::Store)   | index header, spans, blobs, key names, alignment in place |
/// | [`Upgrade`](LoadError::Upgrade) | rehashing a key hash 1 save's keys                     |
/// | [`Delta`](LoadError::Delta)   | a delta's own sections and its fit to the base           |
///
/// # Examples
///
/// ```
/// use std::error::Error as _;
/// use datacomp::{FileError, HandleMap, HandleMapError, LoadError, Store};
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
/// let short = datacomp::RawHandleMap { items: &raw.items[..4], ..raw };
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
    /// The file's sections do not hold a valid store.
    Store(StoreError),
    /// A save of key hash 1 whose keys cannot be rehashed (as asked).
    Upgrade(UpgradeError),
    /// A delta's own sections are malformed, or it does not fit the store it is applied to.
    Delta(DeltaError),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::File(error) => fmt::Display::fmt(error, f),
            LoadError::HandleMap(error) => fmt::Display::fmt(error, f),
            LoadError::Store(error) => fmt::Display::fmt(error, f),
            LoadError::Upgrade(error) => fmt::Display::fmt(error, f),
            LoadError::Delta(error) => fmt::Display::fmt(error, f),
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

impl From<UpgradeError> for LoadError {
    fn from(error: UpgradeError) -> Self {
        LoadError::Upgrade(error)
    }
}

impl From<DeltaError> for LoadError {
    fn from(error: DeltaError) -> Self {
        LoadError::Delta(error)
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
            LoadError::Upgrade(error) => error.source(),
            LoadError::Delta(error) => error.source(),
        }
    }
}

/// Any error of this crate: what the whole-file operations return.
///
/// # Examples
///
/// ```
/// use datacomp::{Blob, BlobError, Error};
///
/// fn load(bytes: &[u8]) -> Result<Blob, Error> {
///     Ok(Blob::from_bytes(bytes)?)
/// }
/// assert!(matches!(load(&[1, 2, 3]), Err(Error::Blob(BlobError::Truncated { byte_len: 3 }))));
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A blob was malformed or too large.
    Blob(BlobError),
    /// Saved bytes were malformed.
    Load(LoadError),
    /// Reading or writing a file failed.
    Io(std::io::Error),
    /// A key given as text is recorded in the store under another name.
    KeyCollision(KeyCollision),
    /// A key given as text has more segments than a name may have.
    PathTooDeep(PathTooDeep),
    /// A write would make one path of an entity both a value and an object.
    PathConflict(PathConflict),
    /// A name was given whose first segment reads as a raw key.
    RawKeyName(RawKeyName),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Blob(e) => e.fmt(f),
            Error::Load(e) => e.fmt(f),
            Error::Io(e) => e.fmt(f),
            Error::KeyCollision(e) => e.fmt(f),
            Error::PathTooDeep(e) => e.fmt(f),
            Error::PathConflict(e) => e.fmt(f),
            Error::RawKeyName(e) => e.fmt(f),
        }
    }
}

/// Transparent, as `Display` is: `source()` is the wrapped error's own source (see
/// [`LoadError`]'s), so a reporter that walks the chain prints each message once.
impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Blob(e) => e.source(),
            Error::Load(e) => e.source(),
            Error::Io(e) => e.source(),
            Error::KeyCollision(e) => e.source(),
            Error::PathTooDeep(e) => e.source(),
            Error::PathConflict(e) => e.source(),
            Error::RawKeyName(e) => e.source(),
        }
    }
}

impl From<BlobError> for Error {
    fn from(e: BlobError) -> Error {
        Error::Blob(e)
    }
}

impl From<LoadError> for Error {
    fn from(e: LoadError) -> Error {
        Error::Load(e)
    }
}

impl From<KeyCollision> for Error {
    fn from(e: KeyCollision) -> Error {
        Error::KeyCollision(e)
    }
}

impl From<RawKeyName> for Error {
    fn from(e: RawKeyName) -> Error {
        Error::RawKeyName(e)
    }
}

impl From<PathTooDeep> for Error {
    fn from(e: PathTooDeep) -> Error {
        Error::PathTooDeep(e)
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::Io(e)
    }
}

/// A name whose key a [`Store`](crate::Store) already knows under another name: two paths that
/// hash to the same [`Key`]. See [`Store::insert_key_name`](crate::Store::insert_key_name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyCollision {
    /// The key both names hash to.
    pub key: Key,
    /// The name given.
    pub name: String,
    /// The name the store knows.
    pub known: String,
}

impl fmt::Display for KeyCollision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (name, known) = (Shortened(&self.name), Shortened(&self.known));
        write!(f, "{name} and {known} hash to the same key {}", self.key)
    }
}

impl std::error::Error for KeyCollision {}

/// A key path with more segments than [`MAX_PATH_SEGMENTS`](crate::MAX_PATH_SEGMENTS), given
/// where a store records names: such a name could not be exported as JSON that imports back.
///
/// # Examples
///
/// ```
/// use datacomp::{Error, MAX_PATH_SEGMENTS, PathTooDeep, Store};
///
/// let mut store = Store::new();
/// let id = store.insert_empty();
/// let path = vec!["a"; 200].join(".");
/// let err = store.get_mut(id).unwrap().try_set(path.as_str(), 1).unwrap_err();
/// let Error::PathTooDeep(deep) = &err else { panic!("{err}") };
/// assert_eq!((deep.segments, deep.limit), (200, MAX_PATH_SEGMENTS));
/// assert!(err.to_string().ends_with("has 200 segments, past the limit of 125"));
/// assert!(store.get(id).unwrap().is_empty() && store.key_names().len() == 0, "unchanged");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathTooDeep {
    /// The path as given (cut in the middle when shown).
    pub path: String,
    /// Its segments.
    pub segments: usize,
    /// The most a name may have: [`MAX_PATH_SEGMENTS`](crate::MAX_PATH_SEGMENTS).
    pub limit: usize,
}

impl fmt::Display for PathTooDeep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (path, segments, limit) = (Shortened(&self.path), self.segments, self.limit);
        write!(f, "key path {path} has {segments} segments, past the limit of {limit}")
    }
}

impl std::error::Error for PathTooDeep {}

/// A key path whose first segment is a raw key's label (`#` and 8 hex digits, as in
/// `#0000002a`), given where a store records names: JSON import reads an entity's top-level
/// member so named as that raw key (what export writes for a key without a name), so such a
/// name would not read back as itself. A key given as a [`Key`](crate::Key) is not a name and
/// is not refused; deeper segments (`stats.#0000002a`) are names as any other.
///
/// # Examples
///
/// ```
/// use datacomp::{Error, Key, Store};
///
/// let mut store = Store::new();
/// let id = store.insert_empty();
/// let err = store.get_mut(id).unwrap().try_set("#0000002a.x", 1).unwrap_err();
/// let Error::RawKeyName(raw) = &err else { panic!("{err}") };
/// assert_eq!((raw.path.as_str(), raw.raw), ("#0000002a.x", Key::from_raw(42)));
/// assert_eq!(
///     err.to_string(),
///     "key path #0000002a.x starts with #0000002a, which JSON reads as a raw key, not a name"
/// );
/// assert!(store.insert_key_name("#0000002A.hp").is_err(), "either case of hex digits");
///
/// // The raw key itself, and the same text deeper in a path, are fine.
/// store.get_mut(id).unwrap().try_set(Key::from_raw(42), 1)?;
/// store.get_mut(id).unwrap().try_set("stats.#0000002a", 2)?;
/// # Ok::<(), Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawKeyName {
    /// The path as given (cut in the middle when shown).
    pub path: String,
    /// The raw key its first segment reads as.
    pub raw: crate::Key,
}

impl fmt::Display for RawKeyName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (path, raw) = (Shortened(&self.path), self.raw);
        write!(f, "key path {path} starts with {raw}, which JSON reads as a raw key, not a name")
    }
}

impl std::error::Error for RawKeyName {}

/// A write that would make one path of an entity both a value and an object (`stats` set to 5
/// where the entity holds `stats.health`, or the other way round): JSON could not write the
/// entity back, so a store refuses it. See [`BlobMut::try_set`](crate::BlobMut::try_set).
///
/// # Examples
///
/// ```
/// use datacomp::{Error, Store};
///
/// let mut store = Store::new();
/// let id = store.insert_entries([("stats.health", 30)]);
/// let Err(Error::PathConflict(e)) = store.get_mut(id).unwrap().try_set("stats", 5) else {
///     panic!("refused")
/// };
/// assert_eq!((e.path.as_str(), e.other.as_str(), e.under), ("stats", "stats.health", true));
/// assert_eq!(e.to_string(), "stats is an object (it holds stats.health), so it cannot hold a value");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathConflict {
    /// The path written, as [`Store::key_label`](crate::Store::key_label) shows keys.
    pub path: String,
    /// The key in the way: one under `path` (`stats.health` for `stats`), or a value on its
    /// way (`stats` for `stats.health`).
    pub other: String,
    /// Whether `other` is under `path` (so `path` is an object), rather than on its way.
    pub under: bool,
}

impl fmt::Display for PathConflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (path, other) = (Shortened(&self.path), Shortened(&self.other));
        if self.under {
            write!(f, "{path} is an object (it holds {other}), so it cannot hold a value")
        } else {
            write!(f, "{other} holds a value, so {path} cannot be set under it")
        }
    }
}

impl std::error::Error for PathConflict {}

impl From<PathConflict> for Error {
    fn from(e: PathConflict) -> Error {
        Error::PathConflict(e)
    }
}
