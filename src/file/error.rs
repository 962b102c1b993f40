//! [`FileError`]: why bytes are not a well-formed datacomp file (a save or a delta), whatever
//! they hold.

use std::fmt;

/// Why bytes are not a well-formed datacomp file: its header, section table, section
/// placement, padding or checksums (the whole file's or the arena's chunks), or a file of the
/// other kind. This is the container that saves and deltas share; whether the sections then
/// hold a valid store is [`StoreError`](crate::StoreError)'s concern.
///
/// [`LoadError::File`](crate::LoadError::File) wraps it. Display messages are lowercase, with no
/// trailing period, and name the section or byte at fault.
///
/// # Examples
///
/// ```
/// use datacomp::{FileError, LoadError, Store};
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
                "save format {major}.{minor} is not supported: this build reads format {}.x",
                crate::save::FORMAT_MAJOR
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
