//! [`DeltaError`]: why a delta could not be read or applied to a store.

use std::fmt;

use crate::{Id, PatchError};

/// Why a delta save (a [`StorePatch`](crate::StorePatch)) could not be read, or applied to a
/// store: its own sections, or a mismatch with the base it is applied to.
///
/// [`LoadError::Delta`](crate::LoadError::Delta) wraps it; the container's, the handle map's
/// and the entities' errors of a delta are the [`FileError`](crate::FileError),
/// [`HandleMapError`](crate::HandleMapError) and [`StoreError`](crate::StoreError) a full save
/// gives, in their own [`LoadError`](crate::LoadError) variants.
///
/// # Examples
///
/// ```
/// use datacomp::{DeltaError, LoadError, Store};
///
/// let base = Store::new();
/// let mut target = base.clone();
/// target.set_data_version(2);
/// let delta = Store::diff(&base, &target);
/// let mut migrated = base.clone();
/// migrated.set_data_version(1);
/// let err = delta.apply(&mut migrated).unwrap_err();
/// assert_eq!(err, LoadError::Delta(DeltaError::DataVersion { expected: 0, found: 1 }));
/// assert!(err.to_string().starts_with("the delta was made from a base of data version 0"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeltaError {
    /// A delta of another key hash than this build's stores (key hash 2).
    KeyHash {
        /// The key-hash id found.
        key_hash: u16,
    },
    /// A section of the delta is not the size its contents call for (`delta base`, `delta
    /// index header`, whole entries of the slot and meta changes).
    SectionSize {
        /// The section.
        section: &'static str,
        /// Bytes the counts call for.
        expected: u64,
        /// Bytes found.
        found: u64,
    },
    /// A delta applied to a store of another data version than its base's.
    DataVersion {
        /// The data version of the base the delta was made from.
        expected: u32,
        /// The data version of the store it was applied to.
        found: u32,
    },
    /// A delta applied to a store that is not the base it was made from.
    Base {
        /// The crc32 of the base the delta was made from.
        expected: u32,
        /// The crc32 of the store it was applied to.
        found: u32,
    },
    /// An entry of a delta's slot or meta changes is out of order or out of range.
    Change {
        /// The section.
        section: &'static str,
        /// The entry's position in the section.
        index: u64,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// A record of a delta's entities section is malformed.
    Record {
        /// Where the record starts in the section, in bytes.
        offset: u64,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// A delta's patch of an entity is not a valid patch.
    Patch {
        /// The entity.
        id: Id,
        /// Why.
        error: PatchError,
    },
    /// A delta and its base disagree about an entity.
    Entity {
        /// The entity.
        id: Id,
        /// What is wrong.
        problem: &'static str,
    },
}

impl fmt::Display for DeltaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            DeltaError::KeyHash { key_hash } => write!(
                f,
                "the delta uses key hash {key_hash}, and stores now use key hash 2: apply it to \
                 its base with the release that wrote it, then load that save to upgrade it"
            ),
            DeltaError::SectionSize { section, expected, found } => {
                write!(f, "section '{section}' is {found} bytes; its header says {expected}")
            }
            DeltaError::DataVersion { expected, found } => write!(
                f,
                "the delta was made from a base of data version {expected}, not this store's \
                 {found}: apply it before migrating, or make it from the migrated base"
            ),
            DeltaError::Base { expected, found } => write!(
                f,
                "the delta was made from a base with crc32 {expected:08x}, not this store \
                 ({found:08x})"
            ),
            DeltaError::Change { section, index, problem } => {
                write!(f, "section '{section}', entry {index}: {problem}")
            }
            DeltaError::Record { offset, problem } => {
                write!(f, "section 'delta entities', record at byte {offset}: {problem}")
            }
            DeltaError::Patch { id, ref error } => {
                write!(f, "the patch of entity {id}: {error}")
            }
            DeltaError::Entity { id, problem } => write!(f, "entity {id}: {problem}"),
        }
    }
}

impl std::error::Error for DeltaError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DeltaError::Patch { error, .. } => Some(error),
            _ => None,
        }
    }
}
