//! [`Store`]'s key names: the path of every key it was given as text (the tree itself is
//! `crate::names`).

use std::borrow::Cow;

use fxhash::FxHashSet;

use super::Store;
use crate::blob::BlobRef;
use crate::error::Error;
use crate::key::{AsKey, Key, KeyError, KeyPath};
use crate::names::{ROOT, label};

impl Store {
    /// The dotted name of `key`, if the store was given one: by a JSON import, a write with
    /// the key given as text, or [`insert_key_name`](Store::insert_key_name).
    ///
    /// A member name may hold a `.`, so two keys can have one dotted name; to show a key to
    /// people, use [`key_label`](Store::key_label).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ImportOptions, Key, Store};
    ///
    /// let mut store = Store::new();
    /// store.import(r#"{"status_effects": {"drunk": true}}"#, &ImportOptions::strict())?;
    /// let name = store.key_name(Key::parse("status_effects.drunk"));
    /// assert_eq!(name.as_deref(), Some("status_effects.drunk"));
    /// assert_eq!(store.key_name(Key::parse("stats.health")), None);
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    #[must_use]
    pub fn key_name(&self, key: Key) -> Option<String> {
        self.names().named(key).map(|node| self.names().dotted(node))
    }

    /// The JSON Pointer of `key` (`/a.b/c`: each segment exact, `~` written `~0` and `/`
    /// `~1`), if the store was given a name for it.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ImportOptions, Key, Store};
    ///
    /// let mut store = Store::new();
    /// store.import(r#"{"a.b": {"c/d": 1}}"#, &ImportOptions::strict())?;
    /// assert_eq!(store.key_pointer(Key::path(&["a.b", "c/d"])).as_deref(), Some("/a.b/c~1d"));
    /// assert_eq!(store.key_pointer(Key::parse("a.b.c")), None);
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    #[must_use]
    pub fn key_pointer(&self, key: Key) -> Option<String> {
        self.names().named(key).map(|node| self.names().pointer(node))
    }

    /// How to show `key` to people, one text per key: its dotted name where that reads back
    /// as this key (`stats.health`), else its JSON Pointer (`/a.b/c`, when a member name holds
    /// a dot), else its hash (`#1a2b3c4d`) when the store has no name for it. Each form is one
    /// the `datacomp` command takes as a KEY.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ImportOptions, Key, Store};
    ///
    /// let mut store = Store::new();
    /// store.import(r#"{"a.b": 1, "a": {"b": 2}}"#, &ImportOptions::strict())?;
    /// assert_eq!(store.key_label(Key::new("a.b")), "/a.b");
    /// assert_eq!(store.key_label(Key::parse("a.b")), "a.b");
    /// assert_eq!(store.key_label(Key::from_raw(42)), "#0000002a");
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    #[must_use]
    pub fn key_label(&self, key: Key) -> Cow<'_, str> {
        // Owned: a name is a path of segments in the tree, not one stored text.
        match self.names().named(key) {
            Some(node) => Cow::Owned(self.names().label(node)),
            None => Cow::Owned(key.to_string()),
        }
    }

    /// Every key name the store knows, as `(key, dotted name)` in ascending key order. Each
    /// name is built as the iterator reaches it; `len` builds none.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ImportOptions, Key, Store};
    ///
    /// let mut store = Store::new();
    /// store.import(r#"{"b": 1, "a": {"c": true}}"#, &ImportOptions::strict())?;
    /// let mut names: Vec<String> = store.key_names().map(|(_, name)| name).collect();
    /// names.sort();
    /// assert_eq!(names, ["a.c", "b"]);
    /// assert_eq!(store.key_names().len(), 2);
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    #[must_use]
    pub fn key_names(&self) -> impl ExactSizeIterator<Item = (Key, String)> + '_ {
        self.names().iter().map(|(key, node)| (key, self.names().dotted(node)))
    }

    /// Names the key of the dotted `path`, as an import of a document with that path would,
    /// and returns the key. A write with the key given as text names it too; use this before
    /// writing a key given as a [`Key`] that export should write by name, not as
    /// `"#1a2b3c4d"`. [`compact`](Store::compact) drops the name again if no entity holds
    /// the key by then.
    ///
    /// # Errors
    ///
    /// [`KeyError::Collision`] if the store knows the key under another name, and
    /// [`KeyError::PathTooDeep`] for a path of more than
    /// [`MAX_PATH_SEGMENTS`](crate::key::MAX_PATH_SEGMENTS) segments; nothing is changed.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, ExportOptions, Key, Store};
    ///
    /// let mut store = Store::new();
    /// let id = store.insert(&Blob::new());
    /// let key = store.insert_key_name("stats.luck")?;
    /// store.get_mut(id).unwrap().set(key, 7).unwrap();
    /// assert_eq!(store.key_name(key).as_deref(), Some("stats.luck"));
    /// assert_eq!(store.export(id, &ExportOptions::json()).unwrap(), r#"{"stats":{"luck":7}}"#);
    ///
    /// // Two names with one 32-bit hash: rare, but they exist.
    /// store.insert_key_name("sleep_haste_8")?;
    /// let err = store.insert_key_name("fury_sleep_272").unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "fury_sleep_272 and sleep_haste_8 hash to the same key #316ec2d7"
    /// );
    /// # Ok::<(), datacomp::Error>(())
    /// ```
    pub fn insert_key_name(&mut self, path: &str) -> Result<Key, Error> {
        let path = KeyPath::dotted(path);
        path.check_depth()?;
        path.check_not_raw()?;
        Ok(self.record_name(&path)?)
    }

    /// The key of `key`, after checking it against the names the store records: a path whose
    /// key is recorded under another name is refused, since reading or removing it would reach
    /// the other name's value. A key given as a [`Key`] is not checked. Records nothing.
    ///
    /// # Errors
    ///
    /// [`KeyError::Collision`] naming both paths.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Key, KeyPath, Store};
    ///
    /// let mut store = Store::new();
    /// store.insert_key_name("sleep_haste_8")?;
    /// assert_eq!(store.check_key("sleep_haste_8")?, Key::parse("sleep_haste_8"));
    /// assert!(store.check_key("fury_sleep_272").is_err());
    /// assert!(store.check_key(KeyPath::pointer("/fury_sleep_272").unwrap()).is_err());
    /// assert_eq!(store.check_key(Key::from_raw(0x316e_c2d7))?, Key::from_raw(0x316e_c2d7));
    /// # Ok::<(), datacomp::Error>(())
    /// ```
    pub fn check_key(&self, key: impl AsKey) -> Result<Key, KeyError> {
        let Some(path) = key.as_path() else {
            return Ok(key.as_key());
        };
        self.check_path(&path)
    }

    /// The key of `path`, or the collision of its name with the one recorded for its key.
    pub(crate) fn check_path(&self, path: &KeyPath<'_>) -> Result<Key, KeyError> {
        self.names().check(path)
    }

    /// Records the name of `path` unless the store knows its key under another name.
    pub(crate) fn record_name(&mut self, path: &KeyPath<'_>) -> Result<Key, KeyError> {
        self.names_mut().record(path)
    }

    /// Takes every key name of `other` that this store lacks, as a merge of the two stores'
    /// entities needs: a key that both name, differently, is two paths with one hash, and a
    /// merge that took both would mix their values. All or nothing. A path that `other`
    /// imported as an array is marked as one here too. O(size of both stores' names).
    ///
    /// # Errors
    ///
    /// [`KeyError::Collision`] for the first key (in key order) the two stores name differently;
    /// this store is unchanged.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ImportOptions, Key, Store};
    ///
    /// let mut ours = Store::new();
    /// ours.import(r#"{"x": 1}"#, &ImportOptions::strict())?;
    /// let mut theirs = Store::new();
    /// theirs.import(r#"{"x": 1, "a.b": 5}"#, &ImportOptions::strict())?;
    /// ours.merge_key_names(&theirs).unwrap();
    /// assert_eq!(ours.key_label(Key::new("a.b")), "/a.b", "a dot inside a name stays inside");
    ///
    /// let mut other = Store::new();
    /// other.insert_key_name("fury_sleep_272").unwrap();
    /// ours.insert_key_name("sleep_haste_8").unwrap();
    /// let err = ours.merge_key_names(&other).unwrap_err();
    /// assert_eq!(err.to_string(), "fury_sleep_272 and sleep_haste_8 hash to the same key #316ec2d7");
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    pub fn merge_key_names(&mut self, other: &Store) -> Result<(), KeyError> {
        self.names_mut().merge(other.names())
    }

    /// Checks that `other` names no key differently from this store, as
    /// [`merge_key_names`](Store::merge_key_names) would, without changing either: one walk of
    /// the two name trees node by node, O(n) in their nodes, never spelling a name out but for
    /// the error.
    ///
    /// # Errors
    ///
    /// [`KeyError::Collision`] for the first key (in key order) the two stores name
    /// differently, `other`'s name first.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Store;
    ///
    /// let (mut ours, mut other) = (Store::new(), Store::new());
    /// ours.insert_key_name("sleep_haste_8").unwrap();
    /// other.insert_key_name("stats.health").unwrap();
    /// assert!(ours.check_key_names(&other).is_ok());
    /// other.insert_key_name("fury_sleep_272").unwrap();
    /// let err = ours.check_key_names(&other).unwrap_err();
    /// assert_eq!(err.to_string(), "fury_sleep_272 and sleep_haste_8 hash to the same key #316ec2d7");
    /// ```
    pub fn check_key_names(&self, other: &Store) -> Result<(), KeyError> {
        self.names().check_merge(other.names()).map(|_| ())
    }
}

/// Keeping each path of an entity a value or an object, never both: what export needs to write
/// the entity back.
impl Store {
    /// Whether `blob`, an entity of this store, may take a new value at `path`: no value of it
    /// is named as a path on the way to `path` (`stats` for `stats.health`), and none is named
    /// under `path`. Keys without a name are not checked (their place is unknown; export
    /// writes them by hash). O(segments + keys × depth) lookups, in the name tree.
    pub(crate) fn check_placement(
        &self,
        blob: BlobRef<'_>,
        path: &KeyPath<'_>,
    ) -> Result<(), KeyError> {
        let conflict = |other: u32, under| KeyError::PathConflict {
            path: label(path.segments()),
            other: self.names().label(other),
            under,
        };
        let segments: Vec<Cow<'_, str>> = path.segments().collect();
        let on_the_way = &segments[..segments.len().saturating_sub(1)];
        // A long path against a big entity: one set of its keys, not a scan a segment.
        let keys: Option<FxHashSet<Key>> =
            (on_the_way.len() * blob.len() > 4096).then(|| blob.keys().collect());
        let holds =
            |key: Key| keys.as_ref().map_or_else(|| blob.contains_key(key), |k| k.contains(&key));
        let mut node = ROOT;
        for segment in on_the_way {
            // A prefix the tree lacks names nothing, and neither does anything under it.
            let Some(next) = self.names().child(node, segment) else {
                return Ok(());
            };
            node = next;
            if self.names().is_named(node) && holds(self.names().key(node)) {
                return Err(conflict(node, false));
            }
        }
        let Some(end) = segments.last().and_then(|last| self.names().child(node, last)) else {
            return Ok(());
        };
        for key in blob.keys() {
            let Some(held) = self.names().named(key) else { continue };
            let mut other = held;
            while other != ROOT {
                other = self.names().parent(other);
                if other == end {
                    return Err(conflict(held, true));
                }
            }
        }
        Ok(())
    }

    /// Whether every path of `blob`, a new entity whose keys' names are recorded, is a value
    /// or an object, never both. O(keys × depth) lookups, in the name tree.
    pub(crate) fn check_entity_paths(&self, blob: BlobRef<'_>) -> Result<(), KeyError> {
        let keys: FxHashSet<Key> = blob.keys().collect();
        for key in blob.keys() {
            let Some(node) = self.names().named(key) else { continue };
            let mut prefix = node;
            while prefix != ROOT {
                prefix = self.names().parent(prefix);
                if prefix != ROOT
                    && self.names().is_named(prefix)
                    && keys.contains(&self.names().key(prefix))
                {
                    let (path, other) = (self.names().label(node), self.names().label(prefix));
                    return Err(KeyError::PathConflict { path, other, under: false });
                }
            }
        }
        Ok(())
    }
}
