//! [`SavedKeyNames`]: a save file's key names, read without its entities.

use super::check::{index_and_arena, view_names};
use super::error::LoadError;
use crate::key::{AsKey, Key, KeyError};
use crate::names::KeyNames;

/// A save file's key names, read and checked without loading its entities: what keys given
/// as text are checked against when the save itself is read in place, through a
/// [`StoreView`](crate::StoreView) (`datacomp query` does so).
///
/// Reading it checks the file's section table and the crc of every section but the arena
/// (whose bytes it does not read), and decodes the names as a load does: O(size of the names
/// and the handle map's sections).
///
/// # Examples
///
/// ```
/// use datacomp::{ImportOptions, Key, Store};
/// use datacomp::format::SavedKeyNames;
///
/// let mut store = Store::new();
/// store.import(r#"{"stats": {"health": 12}}"#, &ImportOptions::strict())?;
/// let names = SavedKeyNames::from_bytes(&store.to_bytes())?;
/// assert!(names.contains_key(Key::parse("stats.health")));
/// assert!(!names.contains_key(Key::parse("stats.mana")));
/// assert_eq!(names.key_name(Key::parse("stats.health")).as_deref(), Some("stats.health"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct SavedKeyNames {
    pub(crate) names: KeyNames,
}

impl SavedKeyNames {
    /// Reads the key names of the save file `bytes`.
    ///
    /// # Errors
    ///
    /// A [`LoadError`] if `bytes` is not a save (a delta, a damaged or truncated file), as
    /// [`Store::from_bytes`](crate::Store::from_bytes) says it, and
    /// [`StoreError::KeyHashView`](super::StoreError::KeyHashView) for a save of key hash
    /// 1, whose names are a list to rehash its keys from
    /// ([`StoreView::new`](crate::StoreView::new) refuses it too).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Store;
    /// use datacomp::format::SavedKeyNames;
    ///
    /// assert!(SavedKeyNames::from_bytes(&Store::new().to_bytes())?.is_empty());
    /// assert!(SavedKeyNames::from_bytes(b"not a save").is_err());
    /// # Ok::<(), datacomp::LoadError>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<SavedKeyNames, LoadError> {
        let names = view_names(&index_and_arena(bytes)?)?;
        Ok(SavedKeyNames { names })
    }

    /// Number of keys the save names.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Store;
    /// use datacomp::format::SavedKeyNames;
    ///
    /// let mut store = Store::new();
    /// store.insert_key_name("stats.luck")?;
    /// assert_eq!(SavedKeyNames::from_bytes(&store.to_bytes())?.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether the save names no key.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Store;
    /// use datacomp::format::SavedKeyNames;
    ///
    /// assert!(SavedKeyNames::from_bytes(&Store::new().to_bytes())?.is_empty());
    /// # Ok::<(), datacomp::LoadError>(())
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Whether the save has a name for `key`.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Key, Store};
    /// use datacomp::format::SavedKeyNames;
    ///
    /// let mut store = Store::new();
    /// store.insert_key_name("gold")?;
    /// let names = SavedKeyNames::from_bytes(&store.to_bytes())?;
    /// assert!(names.contains_key(Key::parse("gold")));
    /// assert!(!names.contains_key(Key::from_raw(7)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn contains_key(&self, key: Key) -> bool {
        self.names.named(key).is_some()
    }

    /// The dotted name of `key`, if the save has one. As
    /// [`Store::key_name`](crate::Store::key_name).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Key, Store};
    /// use datacomp::format::SavedKeyNames;
    ///
    /// let mut store = Store::new();
    /// store.insert_key_name("stats.luck")?;
    /// let names = SavedKeyNames::from_bytes(&store.to_bytes())?;
    /// assert_eq!(names.key_name(Key::parse("stats.luck")).as_deref(), Some("stats.luck"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn key_name(&self, key: Key) -> Option<String> {
        self.names.named(key).map(|node| self.names.dotted(node))
    }

    /// The key of `key`, after checking it against the save's names, as
    /// [`Store::check_key`](crate::Store::check_key) does: a path whose key the save names
    /// otherwise is refused. A key given as a [`Key`] is not checked.
    ///
    /// # Errors
    ///
    /// [`KeyError::Collision`] naming both paths.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Key, Store};
    /// use datacomp::format::SavedKeyNames;
    ///
    /// let mut store = Store::new();
    /// store.insert_key_name("sleep_haste_8")?;
    /// let names = SavedKeyNames::from_bytes(&store.to_bytes())?;
    /// assert_eq!(names.check_key("sleep_haste_8")?, Key::parse("sleep_haste_8"));
    /// let err = names.check_key("fury_sleep_272").unwrap_err();
    /// assert_eq!(err.to_string(), "fury_sleep_272 and sleep_haste_8 hash to the same key #316ec2d7");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn check_key(&self, key: impl AsKey) -> Result<Key, KeyError> {
        match key.as_path() {
            Some(path) => self.names.check(&path),
            None => Ok(key.as_key()),
        }
    }
}

impl std::fmt::Debug for SavedKeyNames {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SavedKeyNames").field("len", &self.len()).finish()
    }
}
