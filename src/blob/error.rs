//! Why a blob or a blob patch could not be read from bytes, or could not grow: [`BlobError`].

use std::fmt;

use crate::key::Key;

/// Why a blob or a [`Patch`](crate::blob::Patch) could not be read from bytes, or a blob could not
/// grow.
///
/// Each variant names the place: the entry index (position in the header) and its key, or the
/// byte offset. A patch's own variants say so in their names (`Patch...`, `Removals...`,
/// [`SetAndRemoved`](BlobError::SetAndRemoved)); the values a patch sets are a blob, so their
/// problem is a blob's, inside [`PatchSets`](BlobError::PatchSets). Display messages are
/// lowercase, with no trailing period.
///
/// # Examples
///
/// ```
/// use datacomp::{Blob, BlobError};
/// use datacomp::blob::Patch;
///
/// let err = Blob::from_bytes(&[0; 6]).unwrap_err();
/// assert_eq!(err, BlobError::Truncated { byte_len: 6 });
/// assert_eq!(err.to_string(), "blob is 6 bytes, shorter than its 8-byte header");
///
/// let err = Patch::from_bytes(&[9, 0, 0, 0]).unwrap_err();
/// assert_eq!(err, BlobError::RemovalsOutOfBounds { removals: 9, byte_len: 4 });
/// assert_eq!(err.to_string(), "patch of 4 bytes claims 9 keys to remove, past its end");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BlobError {
    /// The blob would need more bytes than its 32-bit offsets can address.
    TooLarge {
        /// Bytes the blob would need.
        required: u64,
    },
    /// An integer given to a write (`set("gold", 16_777_217_u32)`) that `f32`, the type a
    /// blob stores numbers as, cannot hold exactly: refused rather than rounded.
    InexactInteger {
        /// The integer given, in decimal (text, as any integer type's value fits).
        integer: String,
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
    /// A type tag that is none of the five types.
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
    /// A null whose 32-bit header value is not 0 (a null has no data: 0 is its one form, so
    /// that equal blobs are equal bytes).
    InvalidNull {
        /// Position of the entry in the header.
        index: usize,
        /// The entry's key.
        key: Key,
        /// The 32-bit value found.
        raw: u32,
    },
    /// A tombstone ([`ValueType::Tombstone`](crate::ValueType::Tombstone), format 1.5) whose
    /// 32-bit header value is not 0: like a null, it has one form.
    InvalidTombstone {
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
    /// A patch with fewer bytes than its count of keys to remove.
    PatchTruncated {
        /// Bytes given.
        byte_len: usize,
    },
    /// A patch whose length is not a whole number of 4-byte words.
    PatchUnalignedLength {
        /// Bytes given.
        byte_len: usize,
    },
    /// A patch's keys to remove run past its end.
    RemovalsOutOfBounds {
        /// Keys to remove, as stated.
        removals: u32,
        /// The patch's size in bytes.
        byte_len: usize,
    },
    /// A patch's key to remove is not greater than the one before it (so a duplicate or out of
    /// order).
    RemovalsNotAscending {
        /// Position of the key among the keys to remove.
        index: usize,
    },
    /// The values a patch sets are not a valid blob: why, as a blob's error (boxed, as an enum
    /// cannot hold itself).
    PatchSets(Box<BlobError>),
    /// A key that a patch both sets and removes.
    SetAndRemoved {
        /// The key.
        key: Key,
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
            #[allow(clippy::cast_precision_loss)] // The nearest f32: what it would become.
            BlobError::InexactInteger { ref integer } => write!(
                f,
                "{integer} is not held exactly by an f32, the type numbers are stored as (it \
                 would become {}); every whole number up to 16777216 is",
                integer.parse::<i128>().map_or(f32::NAN, |n| n as f32)
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
            BlobError::InvalidNull { index, key, raw } => {
                write!(f, "entry {index} (key {key}): null stored as {raw}, not 0")
            }
            BlobError::InvalidTombstone { index, key, raw } => {
                write!(f, "entry {index} (key {key}): tombstone stored as {raw}, not 0")
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
            BlobError::PatchTruncated { byte_len } => {
                write!(f, "patch is {byte_len} bytes, shorter than its 4-byte count")
            }
            BlobError::PatchUnalignedLength { byte_len } => {
                write!(f, "patch is {byte_len} bytes, not a whole number of 4-byte words")
            }
            BlobError::RemovalsOutOfBounds { removals, byte_len } => write!(
                f,
                "patch of {byte_len} bytes claims {removals} keys to remove, past its end"
            ),
            BlobError::RemovalsNotAscending { index } => {
                write!(f, "key {index} to remove is not greater than the one before it")
            }
            BlobError::PatchSets(ref e) => write!(f, "the values to set: {e}"),
            BlobError::SetAndRemoved { key } => write!(f, "key {key} is both set and removed"),
        }
    }
}

impl std::error::Error for BlobError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BlobError::PatchSets(e) => Some(&**e),
            _ => None,
        }
    }
}
