//! Why a key name could not be recorded: [`KeyCollision`], [`PathTooDeep`], [`RawKeyName`],
//! [`PathConflict`].

use std::fmt;

use super::Key;
use crate::text::Shortened;

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
