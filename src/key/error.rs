//! Why text is not a key, or a key's name could not be recorded: [`KeyError`].

use std::fmt;

use super::Key;
use crate::text::shown::Shortened;

/// Why text is not a key ([`Key`]'s [`FromStr`](std::str::FromStr)), or why a name could not be
/// recorded where a [`Store`](crate::Store) records names (a write with a key given as text,
/// [`Store::insert_key_name`](crate::Store::insert_key_name), a merge of names, a migration's
/// paths).
///
/// Display messages are lowercase, with no trailing period; a path or name in them is cut in
/// the middle when long.
///
/// # Examples
///
/// ```
/// use datacomp::{Error, KeyError, Store};
/// use datacomp::key::MAX_PATH_SEGMENTS;
///
/// let mut store = Store::new();
/// let id = store.insert_empty();
/// let path = vec!["a"; 200].join(".");
/// let err = store.get_mut(id).unwrap().set(path.as_str(), 1).unwrap_err();
/// let Error::Key(KeyError::PathTooDeep { segments, limit, .. }) = &err else { panic!("{err}") };
/// assert_eq!((*segments, *limit), (200, MAX_PATH_SEGMENTS));
/// assert!(err.to_string().ends_with("has 200 segments, past the limit of 125"));
/// assert!(store.get(id).unwrap().is_empty() && store.key_names().len() == 0, "unchanged");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyError {
    /// Text given as a key is empty (a key left out, more likely than the empty segment).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Key, KeyError};
    ///
    /// let err = "".parse::<Key>().unwrap_err();
    /// assert_eq!(err, KeyError::Empty);
    /// assert_eq!(
    ///     err.to_string(),
    ///     "bad key \"\": a key is a dotted path, a JSON Pointer or # and 8 hex digits"
    /// );
    /// ```
    Empty,
    /// Text given as a key starts with `#` but is not `#` and eight hex digits (`#1a2b3c4d`).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Key, KeyError};
    ///
    /// let err = "#xyzxyzxy".parse::<Key>().unwrap_err();
    /// assert_eq!(err, KeyError::BadHash { input: "#xyzxyzxy".into() });
    /// assert_eq!(
    ///     err.to_string(),
    ///     "bad key \"#xyzxyzxy\": a raw key is # and 8 hex digits, as in #1a2b3c4d"
    /// );
    /// ```
    BadHash {
        /// The text as given (cut in the middle when shown).
        input: String,
    },
    /// A name whose key a [`Store`](crate::Store) already knows under another name: two paths
    /// that hash to the same [`Key`]. See
    /// [`Store::insert_key_name`](crate::Store::insert_key_name).
    Collision {
        /// The key both names hash to.
        key: Key,
        /// The name given.
        name: String,
        /// The name the store knows.
        known: String,
    },
    /// A key path with more segments than [`MAX_PATH_SEGMENTS`](crate::key::MAX_PATH_SEGMENTS),
    /// given where a store records names: such a name could not be exported as JSON that
    /// imports back.
    PathTooDeep {
        /// The path as given (cut in the middle when shown).
        path: String,
        /// Its segments.
        segments: usize,
        /// The most a name may have: [`MAX_PATH_SEGMENTS`](crate::key::MAX_PATH_SEGMENTS).
        limit: usize,
    },
    /// A key path whose first segment is a raw key's label (`#` and 8 hex digits, as in
    /// `#0000002a`), given where a store records names: JSON import reads an entity's
    /// top-level member so named as that raw key (what export writes for a key without a
    /// name), so such a name would not read back as itself. A key given as a
    /// [`Key`](crate::Key) is not a name and is not refused; deeper segments
    /// (`stats.#0000002a`) are names as any other.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Error, Key, KeyError, Store};
    ///
    /// let mut store = Store::new();
    /// let id = store.insert_empty();
    /// let err = store.get_mut(id).unwrap().set("#0000002a.x", 1).unwrap_err();
    /// let Error::Key(KeyError::RawKeyName { path, raw }) = &err else { panic!("{err}") };
    /// assert_eq!((path.as_str(), *raw), ("#0000002a.x", Key::from_raw(42)));
    /// assert_eq!(
    ///     err.to_string(),
    ///     "key path #0000002a.x starts with #0000002a, which JSON reads as a raw key, not a name"
    /// );
    /// assert!(store.insert_key_name("#0000002A.hp").is_err(), "either case of hex digits");
    ///
    /// // The raw key itself, and the same text deeper in a path, are fine.
    /// store.get_mut(id).unwrap().set(Key::from_raw(42), 1)?;
    /// store.get_mut(id).unwrap().set("stats.#0000002a", 2)?;
    /// # Ok::<(), Error>(())
    /// ```
    RawKeyName {
        /// The path as given (cut in the middle when shown).
        path: String,
        /// The raw key its first segment reads as.
        raw: Key,
    },
    /// A write that would make one path of an entity both a value and an object (`stats` set
    /// to 5 where the entity holds `stats.health`, or the other way round): JSON could not
    /// write the entity back, so a store refuses it. See
    /// [`BlobMut::set`](crate::BlobMut::set).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Error, KeyError, Store};
    ///
    /// let mut store = Store::new();
    /// let id = store.insert_entries([("stats.health", 30)]).unwrap();
    /// let Err(Error::Key(e)) = store.get_mut(id).unwrap().set("stats", 5) else {
    ///     panic!("refused")
    /// };
    /// let KeyError::PathConflict { path, other, under } = &e else { panic!("{e}") };
    /// assert_eq!((path.as_str(), other.as_str(), *under), ("stats", "stats.health", true));
    /// assert_eq!(e.to_string(), "stats is an object (it holds stats.health), so it cannot hold a value");
    /// ```
    PathConflict {
        /// The path written, as [`Store::key_label`](crate::Store::key_label) shows keys.
        path: String,
        /// The key in the way: one under `path` (`stats.health` for `stats`), or a value on
        /// its way (`stats` for `stats.health`).
        other: String,
        /// Whether `other` is under `path` (so `path` is an object), rather than on its way.
        under: bool,
    },
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyError::Empty => {
                let why = "a key is a dotted path, a JSON Pointer or # and 8 hex digits";
                write!(f, "bad key \"\": {why}")
            }
            KeyError::BadHash { input } => {
                let why = "a raw key is # and 8 hex digits, as in #1a2b3c4d";
                write!(f, "bad key \"{}\": {why}", Shortened(input))
            }
            KeyError::Collision { key, name, known } => {
                let (name, known) = (Shortened(name), Shortened(known));
                write!(f, "{name} and {known} hash to the same key {key}")
            }
            KeyError::PathTooDeep { path, segments, limit } => {
                let path = Shortened(path);
                write!(f, "key path {path} has {segments} segments, past the limit of {limit}")
            }
            KeyError::RawKeyName { path, raw } => {
                let path = Shortened(path);
                write!(
                    f,
                    "key path {path} starts with {raw}, which JSON reads as a raw key, not a name"
                )
            }
            KeyError::PathConflict { path, other, under } => {
                let (path, other) = (Shortened(path), Shortened(other));
                if *under {
                    write!(f, "{path} is an object (it holds {other}), so it cannot hold a value")
                } else {
                    write!(f, "{other} holds a value, so {path} cannot be set under it")
                }
            }
        }
    }
}

impl std::error::Error for KeyError {}
