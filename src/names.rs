//! A store's key names: the path of every key it was given as text, one name per key.
//!
//! Blobs hold only hashes. The store keeps each key's name (from a JSON import, from a write
//! with a key given as text, or given by hand), so that export nests keys again, tools show
//! them by name, and a save of an older key hash is rehashed from them. A name is kept as its
//! dotted form and as its JSON Pointer: a member name may hold a `.`, which only the pointer
//! tells apart from a separator.

use std::borrow::Cow;
use std::collections::BTreeMap;

use fxhash::FxHashSet;

use crate::store::KeyName;
use crate::{AsKey, BlobRef, Error, Key, KeyCollision, KeyPath, PathConflict, Store};

impl KeyName {
    /// The name of `path`, in both forms.
    pub(crate) fn from_path(path: &KeyPath<'_>) -> KeyName {
        let (mut dotted, mut pointer) = (String::new(), String::new());
        for (i, segment) in path.segments().enumerate() {
            if i > 0 {
                dotted.push('.');
            }
            dotted.push_str(&segment);
            crate::json::push_pointer_segment(&mut pointer, &segment);
        }
        KeyName { dotted, pointer }
    }

    /// Whether `path` has this name's segments. No allocation unless a segment holds an
    /// escape.
    pub(crate) fn is_path(&self, path: &KeyPath<'_>) -> bool {
        // Most writes name a known key by its usual text: compared byte for byte, `.` in a
        // dotted path against `/` in the pointer, when no byte needs an escape.
        let (given, stored) = (path.as_str().as_bytes(), self.pointer.as_bytes());
        let same_text = if path.is_pointer() {
            given == stored
        } else {
            stored.len() == given.len() + 1
                && stored[1..].iter().zip(given).all(|(&s, &g)| match g {
                    b'.' => s == b'/',
                    b'/' | b'~' => false,
                    g => s == g,
                })
        };
        same_text
            || self
                .pointer
                .strip_prefix('/')
                .is_some_and(|rest| rest.split('/').map(crate::json::unescape).eq(path.segments()))
    }

    /// Whether `path` may use this name's key `key`: it is this name, or a collision.
    pub(crate) fn check(&self, key: Key, path: &KeyPath<'_>) -> Result<(), KeyCollision> {
        if self.is_path(path) {
            return Ok(());
        }
        let name = KeyName::from_path(path).label().to_owned();
        Err(KeyCollision { key, name, known: self.label().to_owned() })
    }

    /// How people see the name: dotted where the dotted text reads back as this very key in a
    /// KEY argument (no segment holds a `.`, and it does not start as a pointer or a raw hash
    /// does), else the JSON Pointer. So two keys never show alike: `{"a.b": 1, "a": {"b": 2}}`
    /// shows `/a.b` and `a.b`.
    pub(crate) fn label(&self) -> &str {
        let segments = self.pointer.bytes().filter(|&b| b == b'/').count();
        let dots = self.dotted.bytes().filter(|&b| b == b'.').count();
        let reads_back =
            segments == dots + 1 && !self.dotted.is_empty() && !self.dotted.starts_with(['/', '#']);
        if reads_back { &self.dotted } else { &self.pointer }
    }
}

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
    /// store.import_json(r#"{"status_effects": {"drunk": true}}"#, &ImportOptions::strict())?;
    /// assert_eq!(store.key_name(Key::parse("status_effects.drunk")), Some("status_effects.drunk"));
    /// assert_eq!(store.key_name(Key::parse("stats.health")), None);
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    #[must_use]
    pub fn key_name(&self, key: Key) -> Option<&str> {
        self.names.get(&key).map(|name| name.dotted.as_str())
    }

    /// The name of `key` as a JSON Pointer (`/stats/health`, `/a.b/c`), if the store was given
    /// one: the exact segments, where the dotted name of [`key_name`](Store::key_name) cannot
    /// tell a `.` inside a member name from a separator.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ImportOptions, Key, Store};
    ///
    /// let mut store = Store::new();
    /// store.import_json(r#"{"a.b": {"c": 1}, "a": {"b": {"c": 2}}}"#, &ImportOptions::strict())?;
    /// assert_eq!(store.key_pointer(Key::path(&["a.b", "c"])), Some("/a.b/c"));
    /// assert_eq!(store.key_pointer(Key::parse("a.b.c")), Some("/a/b/c"));
    /// assert_eq!(store.key_name(Key::path(&["a.b", "c"])), Some("a.b.c"));
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    #[must_use]
    pub fn key_pointer(&self, key: Key) -> Option<&str> {
        self.names.get(&key).map(|name| name.pointer.as_str())
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
    /// store.import_json(r#"{"a.b": 1, "a": {"b": 2}}"#, &ImportOptions::strict())?;
    /// assert_eq!(store.key_label(Key::new("a.b")), "/a.b");
    /// assert_eq!(store.key_label(Key::parse("a.b")), "a.b");
    /// assert_eq!(store.key_label(Key::from_raw(42)), "#0000002a");
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    #[must_use]
    pub fn key_label(&self, key: Key) -> Cow<'_, str> {
        match self.names.get(&key) {
            Some(name) => Cow::Borrowed(name.label()),
            None => Cow::Owned(key.to_string()),
        }
    }

    /// Every key name the store knows, as `(key, dotted name)` in ascending key order.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ImportOptions, Key, Store};
    ///
    /// let mut store = Store::new();
    /// store.import_json(r#"{"b": 1, "a": {"c": true}}"#, &ImportOptions::strict())?;
    /// let mut names: Vec<&str> = store.key_names().map(|(_, name)| name).collect();
    /// names.sort();
    /// assert_eq!(names, ["a.c", "b"]);
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    #[must_use]
    pub fn key_names(&self) -> impl ExactSizeIterator<Item = (Key, &str)> + '_ {
        self.names.iter().map(|(&key, name)| (key, name.dotted.as_str()))
    }

    /// Names the key of the dotted `path`, as an import of a document with that path would,
    /// and returns the key. A write with the key given as text names it too; use this before
    /// writing a key given as a [`Key`] that export should write by name, not as
    /// `"#1a2b3c4d"`.
    ///
    /// # Errors
    ///
    /// [`Error::KeyCollision`] if the store knows the key under another name, and
    /// [`Error::PathTooDeep`] for a path of more than [`MAX_PATH_SEGMENTS`](crate::MAX_PATH_SEGMENTS)
    /// segments; nothing is changed.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, Key, Store};
    ///
    /// let mut store = Store::new();
    /// let id = store.insert(&Blob::new());
    /// let key = store.insert_key_name("stats.luck")?;
    /// store.get_mut(id).unwrap().set(key, 7);
    /// assert_eq!(store.key_name(key), Some("stats.luck"));
    /// assert_eq!(store.export_json(id).unwrap(), r#"{"stats":{"luck":7}}"#);
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
        Ok(self.record_name(&path)?)
    }

    /// The key of `key`, after checking it against the names the store records: a path whose
    /// key is recorded under another name is refused, since reading or removing it would reach
    /// the other name's value. A key given as a [`Key`] is not checked. Records nothing.
    ///
    /// # Errors
    ///
    /// [`KeyCollision`] naming both paths.
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
    pub fn check_key(&self, key: impl AsKey) -> Result<Key, KeyCollision> {
        let Some(path) = key.as_path() else {
            return Ok(key.as_key());
        };
        self.check_path(&path)
    }

    /// The key of `path`, or the collision of its name with the one recorded for its key.
    pub(crate) fn check_path(&self, path: &KeyPath<'_>) -> Result<Key, KeyCollision> {
        let key = path.key();
        self.names.get(&key).map_or(Ok(()), |known| known.check(key, path))?;
        Ok(key)
    }

    /// Records the name of `path` unless the store knows its key under another name.
    pub(crate) fn record_name(&mut self, path: &KeyPath<'_>) -> Result<Key, KeyCollision> {
        let key = self.check_path(path)?;
        self.names.entry(key).or_insert_with(|| KeyName::from_path(path));
        Ok(key)
    }

    /// Takes every key name of `other` that this store lacks, as a merge of the two stores'
    /// entities needs: a key that both name, differently, is two paths with one hash, and a
    /// merge that took both would mix their values. All or nothing.
    ///
    /// # Errors
    ///
    /// [`KeyCollision`] for the first key (in key order) the two stores name differently;
    /// this store is unchanged.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ImportOptions, Key, Store};
    ///
    /// let mut ours = Store::new();
    /// ours.import_json(r#"{"x": 1}"#, &ImportOptions::strict())?;
    /// let mut theirs = Store::new();
    /// theirs.import_json(r#"{"x": 1, "a.b": 5}"#, &ImportOptions::strict())?;
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
    pub fn merge_key_names(&mut self, other: &Store) -> Result<(), KeyCollision> {
        for (&key, theirs) in &other.names {
            if let Some(ours) = self.names.get(&key)
                && ours.pointer != theirs.pointer
            {
                let (name, known) = (theirs.label().to_owned(), ours.label().to_owned());
                return Err(KeyCollision { key, name, known });
            }
        }
        for (&key, theirs) in &other.names {
            self.names.entry(key).or_insert_with(|| theirs.clone());
        }
        Ok(())
    }
}

/// Keeping each path of an entity a value or an object, never both: what export needs to write
/// the entity back.
impl Store {
    /// Whether `blob`, an entity of this store, may take a new value at `path`: no value of it
    /// is named as a path on the way to `path` (`stats` for `stats.health`), and none is named
    /// under `path`. Keys without a name are not checked (their place is unknown; export
    /// writes them by hash). O(segments + keys) lookups.
    pub(crate) fn check_placement(
        &self,
        blob: BlobRef<'_>,
        path: &KeyPath<'_>,
    ) -> Result<(), PathConflict> {
        let name = KeyName::from_path(path);
        let conflict = |other: &KeyName, under| PathConflict {
            path: name.label().to_owned(),
            other: other.label().to_owned(),
            under,
        };
        let segments: Vec<Cow<'_, str>> = path.segments().collect();
        let on_the_way = &segments[..segments.len().saturating_sub(1)];
        // A long path against a big entity: one set of its keys, not a scan a segment.
        let keys: Option<FxHashSet<Key>> =
            (on_the_way.len() * blob.len() > 4096).then(|| blob.keys().collect());
        let holds =
            |key: Key| keys.as_ref().map_or_else(|| blob.contains_key(key), |k| k.contains(&key));
        let (mut key, mut prefix) = (None::<Key>, String::new());
        for segment in on_the_way {
            let next = key.map_or_else(|| Key::new(segment), |k| k.child(segment));
            key = Some(next);
            crate::json::push_pointer_segment(&mut prefix, segment);
            if let Some(other) =
                self.names.get(&next).filter(|n| holds(next) && n.pointer == prefix)
            {
                return Err(conflict(other, false));
            }
        }
        let under = format!("{}/", name.pointer);
        for key in blob.keys() {
            if let Some(other) = self.names.get(&key).filter(|n| n.pointer.starts_with(&under)) {
                return Err(conflict(other, true));
            }
        }
        Ok(())
    }

    /// Whether every path of `blob`, a new entity, is a value or an object, never both, with
    /// its keys named by `named` or else by the store. O(segments of its names) lookups.
    pub(crate) fn check_entity_paths(
        &self,
        blob: BlobRef<'_>,
        named: &BTreeMap<Key, KeyName>,
    ) -> Result<(), PathConflict> {
        let name_of = |key: Key| named.get(&key).or_else(|| self.names.get(&key));
        let keys: FxHashSet<Key> = blob.keys().collect();
        for key in blob.keys() {
            let Some(name) = name_of(key) else { continue };
            let (mut prefix_key, mut end) = (None::<Key>, 0);
            let raw: Vec<&str> = name.pointer.split('/').skip(1).collect();
            for raw_segment in &raw[..raw.len().saturating_sub(1)] {
                let segment = crate::json::unescape(raw_segment);
                let next = prefix_key.map_or_else(|| Key::new(&segment), |k| k.child(&segment));
                prefix_key = Some(next);
                end += 1 + raw_segment.len();
                if !keys.contains(&next) {
                    continue;
                }
                if let Some(other) = name_of(next).filter(|n| n.pointer == name.pointer[..end]) {
                    let (path, other) = (name.label().to_owned(), other.label().to_owned());
                    return Err(PathConflict { path, other, under: false });
                }
            }
        }
        Ok(())
    }
}
