//! [`StoreError`]: why the sections of a well-formed file do not hold a valid store.

use std::fmt;

use crate::{BlobError, Id};

/// Why the sections of a well-formed file (a save, or a delta's store sections) do not hold a
/// valid store: the index header, the entities' spans in the arena, their blobs, the key
/// names, or the arena's place in memory for a read in place.
///
/// The container around them (header, table, checksums) is [`FileError`](crate::FileError)'s
/// concern, the index's handle map [`HandleMapError`](crate::HandleMapError)'s.
/// [`LoadError::Store`](crate::LoadError::Store) wraps it.
///
/// # Examples
///
/// ```
/// use datacomp::{Blob, LoadError, Store, StoreError, StoreView};
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
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreError {
    /// A store section's size disagrees with what describes it (the index header's fixed
    /// size, the arena's whole words, one span per index item).
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
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StoreError::Blob { error, .. } => Some(error),
            _ => None,
        }
    }
}
