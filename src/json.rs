//! JSON fixtures: streaming import of the restricted format into blobs.
//!
//! The format is the `DataComponent`'s: values are booleans, numbers (stored as `f32`), strings,
//! objects (flattened into dotted keys: `{"stats": {"health": 100}}` is `stats.health`) and
//! arrays of numbers. The importer is a serde visitor that writes each value straight into the
//! blob as `serde_json` reads it: no `serde_json::Value` tree is built.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::blob::bulk::Builder;
use crate::store::{KeyName, Span};
use crate::text::Shortened;
use crate::{Blob, BlobError, BlobRef, Id, Key, MAX_PATH_SEGMENTS, Store, Value};

/// What is wrong with a JSON document, and where: the JSON path (a JSON Pointer such as
/// `/stats/health`) and the line and column where reading stopped.
///
/// # Examples
///
/// ```
/// use datacomp::{Blob, JsonErrorKind};
///
/// let err = Blob::from_json("{\"stats\": {\"health\": null}}").unwrap_err();
/// assert_eq!(err.kind(), &JsonErrorKind::Null);
/// assert_eq!(err.path(), "/stats/health");
/// assert_eq!((err.line(), err.column()), (1, 25));
/// assert_eq!(err.to_string(), "/stats/health (line 1, column 25): null is not a value");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct JsonError {
    kind: JsonErrorKind,
    path: String,
    line: usize,
    column: usize,
}

/// The kinds of [`JsonError`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum JsonErrorKind {
    /// Not JSON: `serde_json`'s description.
    Syntax(String),
    /// The document is not an object.
    NotAnObject,
    /// `null`, which the format has no value for.
    Null,
    /// An array element that is not a number: arrays hold numbers only.
    NotANumber,
    /// A number past the range of `f32`.
    NumberOutOfRange(f64),
    /// The same path twice in one entity: as two values, as two objects, or as a value and
    /// an object (which JSON could not write back).
    DuplicatePath(String),
    /// Two different paths whose keys hash to the same [`Key`].
    KeyCollision {
        /// The path seen first.
        first: String,
        /// The path seen second.
        second: String,
        /// Their key.
        key: Key,
    },
    /// The blob would pass its 4 GiB limit.
    Blob(BlobError),
    /// A member nested deeper than a key's name may be: its path has `segments` member names,
    /// past `limit` ([`MAX_PATH_SEGMENTS`]).
    TooDeep {
        /// Member names on the path.
        segments: usize,
        /// The most a name may have.
        limit: usize,
    },
}

impl JsonError {
    /// What is wrong.
    #[must_use]
    pub fn kind(&self) -> &JsonErrorKind {
        &self.kind
    }

    /// Where in the document: a JSON Pointer (`/stats/health`, `/position/2`; `""` is the top).
    #[must_use]
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The line (from 1) where reading stopped.
    #[must_use]
    pub fn line(&self) -> usize {
        self.line
    }

    /// The column (from 1) where reading stopped.
    #[must_use]
    pub fn column(&self) -> usize {
        self.column
    }
}

impl fmt::Display for JsonErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonErrorKind::Syntax(message) => f.write_str(message),
            JsonErrorKind::NotAnObject => f.write_str("an entity must be a JSON object"),
            JsonErrorKind::Null => f.write_str("null is not a value"),
            JsonErrorKind::NotANumber => f.write_str("arrays may hold numbers only"),
            JsonErrorKind::NumberOutOfRange(n) => write!(f, "{n:e} is past the range of f32"),
            JsonErrorKind::DuplicatePath(path) => write!(f, "{} is set twice", Shortened(path)),
            JsonErrorKind::KeyCollision { first, second, key } => {
                let (first, second) = (Shortened(first), Shortened(second));
                write!(f, "{second} and {first} hash to the same key {key}")
            }
            JsonErrorKind::Blob(e) => e.fmt(f),
            JsonErrorKind::TooDeep { segments, limit } => {
                write!(f, "the path has {segments} segments, past the limit of {limit}")
            }
        }
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Names are cut and escaped, so that a message is one short line.
        let path = Shortened(if self.path.is_empty() { "/" } else { &self.path });
        write!(f, "{path} (line {}, column {}): {}", self.line, self.column, self.kind)
    }
}

impl std::error::Error for JsonError {}

/// How strictly to read JSON: [`ImportOptions::strict`] (the default) or
/// [`ImportOptions::lenient`].
///
/// # Examples
///
/// ```
/// use datacomp::{Blob, ImportOptions};
///
/// let text = r#"{"armor_class": [{"type": "natural", "value": 17}], "title": null}"#;
/// assert!(Blob::from_json(text).is_err());
/// let (sheet, report) = Blob::from_json_with(text, &ImportOptions::lenient())?;
/// assert_eq!(sheet.get_str("armor_class.0.type"), Some("natural"));
/// assert_eq!(sheet.get_float("armor_class.0.value"), Some(17.0));
/// assert_eq!((report.converted_arrays, report.skipped_nulls), (1, 1));
/// # Ok::<(), datacomp::JsonError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImportOptions {
    lenient: bool,
}

impl ImportOptions {
    /// The restricted format only: `null`, arrays of anything but numbers and numbers past
    /// `f32` are errors.
    #[must_use]
    pub const fn strict() -> ImportOptions {
        ImportOptions { lenient: false }
    }

    /// For existing data: an array holding anything but numbers becomes an object keyed by
    /// decimal index (`armor_class.0.value`), `null` is skipped, and a number past `f32` is
    /// stored as the largest `f32` of its sign. [`ImportReport`] counts each change.
    #[must_use]
    pub const fn lenient() -> ImportOptions {
        ImportOptions { lenient: true }
    }

    /// Whether this is the lenient policy.
    #[must_use]
    pub const fn is_lenient(&self) -> bool {
        self.lenient
    }
}

/// What a lenient import changed to fit the format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImportReport {
    /// Arrays of other things than numbers, turned into objects keyed by index.
    pub converted_arrays: usize,
    /// `null` values skipped.
    pub skipped_nulls: usize,
    /// Numbers past `f32`, stored as the largest `f32` of their sign.
    pub rounded_numbers: usize,
}

impl Blob {
    /// Imports one entity from a JSON object, strictly: `null`, arrays holding anything but
    /// numbers, numbers past `f32`, a top level that is not an object, a path set twice and
    /// two paths whose keys collide are errors. An empty array is an empty float array.
    ///
    /// # Errors
    ///
    /// A [`JsonError`] with the JSON path and line and column.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    ///
    /// let sheet = Blob::from_json(r#"{
    ///     "name": "The One",
    ///     "stats": { "health": 100, "mana": 200 },
    ///     "status_effects": { "drunk": true },
    ///     "position": [12.5, 0, -3.25]
    /// }"#)?;
    /// assert_eq!(sheet.get_float("stats.mana"), Some(200.0));
    /// assert_eq!(sheet.get_floats("position"), Some(&[12.5, 0.0, -3.25][..]));
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    pub fn from_json(text: &str) -> Result<Blob, JsonError> {
        Blob::from_json_with(text, &ImportOptions::strict()).map(|(blob, _)| blob)
    }

    /// Imports one entity from a JSON object under `options`, and reports what a lenient
    /// import changed.
    ///
    /// # Errors
    ///
    /// A [`JsonError`] with the JSON path and line and column.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, ImportOptions};
    ///
    /// let (sheet, report) = Blob::from_json_with(r#"{"gold": 1e39}"#, &ImportOptions::lenient())?;
    /// assert_eq!(sheet.get_float("gold"), Some(f32::MAX));
    /// assert_eq!(report.rounded_numbers, 1);
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    pub fn from_json_with(
        text: &str,
        options: &ImportOptions,
    ) -> Result<(Blob, ImportReport), JsonError> {
        let mut importer = Importer { lenient: options.lenient, ..Importer::default() };
        // Entries are gathered apart, then laid out once: O(1) a value, not a move of the
        // header per new key.
        let mut blob = Builder::for_text(text.len());
        let mut reader = serde_json::Deserializer::from_str(text);
        let read = Entity { importer: &mut importer, blob: &mut blob, staging: None }
            .deserialize(&mut reader)
            .and_then(|()| reader.end());
        match read {
            Ok(()) => Ok((blob.to_blob(), importer.report)),
            Err(e) => Err(importer.error(&e)),
        }
    }
}

impl Store {
    /// Imports entities from JSON: a top-level object is one entity, a top-level array of
    /// objects gives one entity each. Returns their handles in document order.
    ///
    /// The import is atomic: on any error the store is unchanged. The store remembers the
    /// dotted name of every key it imports ([`key_name`](Store::key_name)); a key that it
    /// already knows under another name is a [`JsonErrorKind::KeyCollision`].
    ///
    /// # Errors
    ///
    /// A [`JsonError`] with the JSON path (led by the entity's position in an array) and line
    /// and column.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ImportOptions, Key, Store};
    ///
    /// let mut store = Store::new();
    /// let ids = store.import_json(
    ///     r#"[{"name": "Orc", "stats": {"health": 30}}, {"name": "Troll"}]"#,
    ///     &ImportOptions::strict(),
    /// )?;
    /// assert_eq!(store.get(ids[1]).unwrap().get_str("name"), Some("Troll"));
    /// assert_eq!(store.key_name(Key::parse("stats.health")), Some("stats.health"));
    ///
    /// let err = store.import_json(r#"[{"name": "Imp"}, {"name": null}]"#, &ImportOptions::strict());
    /// assert_eq!(err.unwrap_err().path(), "/1/name");
    /// assert_eq!(store.len(), 2, "nothing of the failed import is kept");
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    pub fn import_json(
        &mut self,
        text: &str,
        options: &ImportOptions,
    ) -> Result<Vec<Id>, JsonError> {
        self.import_json_with_report(text, options).map(|(ids, _)| ids)
    }

    /// As [`import_json`](Store::import_json), also reporting what a lenient import changed.
    ///
    /// # Errors
    ///
    /// As [`import_json`](Store::import_json).
    pub fn import_json_with_report(
        &mut self,
        text: &str,
        options: &ImportOptions,
    ) -> Result<(Vec<Id>, ImportReport), JsonError> {
        let mut importer = Importer {
            lenient: options.lenient,
            track_names: true,
            known: std::mem::take(&mut self.names),
            ..Importer::default()
        };
        let mut staging = Staging::default();
        let mut reader = serde_json::Deserializer::from_str(text);
        let mut unused = Builder::default();
        let top =
            Entity { importer: &mut importer, blob: &mut unused, staging: Some(&mut staging) };
        let read = top.deserialize(&mut reader).and_then(|()| reader.end());
        let base = self.arena.len();
        let fits = |()| {
            if u32::try_from(base + staging.arena.len()).is_ok() {
                return Ok(());
            }
            let required = 4 * (base + staging.arena.len()) as u64;
            let kind = JsonErrorKind::Blob(BlobError::TooLarge { required });
            Err(JsonError { kind, path: String::new(), line: text.lines().count(), column: 1 })
        };
        if let Err(error) = read.map_err(|e| importer.error(&e)).and_then(fits) {
            // Nothing of a failed import stays: not even the names it met.
            for key in importer.added {
                importer.known.remove(&key);
            }
            self.names = importer.known;
            return Err(error);
        }
        self.names = importer.known;
        self.arena.extend_from_slice(&staging.arena);
        let ids = staging
            .spans
            .iter()
            .map(|&(offset, words)| self.index.insert(Span::new(base + offset, words)))
            .collect();
        Ok((ids, importer.report))
    }
}

impl Store {
    /// The entity of `id` as a JSON object, nested again by its keys' names: the inverse of
    /// [`import_json`](Store::import_json). A key without a name appears at the top level as
    /// `"#1a2b3c4d"`. Floats are written in their shortest form that reads back as the same
    /// `f32` (a NaN or infinity, which JSON cannot hold, as `null`).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, ImportOptions, Key, Store};
    ///
    /// let mut store = Store::new();
    /// let text = r#"{"name":"The One","stats":{"health":100,"mana":0.1},"position":[1,2]}"#;
    /// let id = store.import_json(text, &ImportOptions::strict())?[0];
    /// assert_eq!(
    ///     store.export_json(id).unwrap(),
    ///     r#"{"name":"The One","stats":{"health":100.0,"mana":0.1},"position":[1.0,2.0]}"#
    /// );
    ///
    /// let unnamed = store.insert(&[(Key::from_raw(42), true)].into_iter().collect::<Blob>());
    /// assert_eq!(store.export_json(unnamed).unwrap(), r##"{"#0000002a":true}"##);
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    #[must_use]
    pub fn export_json(&self, id: Id) -> Option<String> {
        Some(self.export_blob_json(self.get(id)?))
    }

    /// Any blob as a JSON object, nested by the names this store knows for its keys, as
    /// [`export_json`](Store::export_json) writes the store's own entities.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, ImportOptions, Store};
    ///
    /// let mut store = Store::new();
    /// store.import_json(r#"{"stats": {"health": 1}}"#, &ImportOptions::strict())?;
    /// let mut sheet = Blob::new();
    /// sheet.set("stats.health", 75);
    /// assert_eq!(store.export_blob_json(sheet.as_blob_ref()), r#"{"stats":{"health":75.0}}"#);
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    #[must_use]
    pub fn export_blob_json(&self, blob: BlobRef<'_>) -> String {
        let mut tree = Tree::default();
        self.export_tree(blob, &mut Vec::new(), &mut tree);
        let mut out = Vec::new();
        tree.write(false, 0, &mut out);
        into_string(out)
    }

    /// The entity of `id` as [`export_json`](Store::export_json) writes it, indented two
    /// spaces a level, as designers write fixtures.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ImportOptions, Store};
    ///
    /// let mut store = Store::new();
    /// let id = store.import_json(r#"{"stats": {"health": 100}}"#, &ImportOptions::strict())?[0];
    /// assert_eq!(
    ///     store.export_json_pretty(id).unwrap(),
    ///     "{\n  \"stats\": {\n    \"health\": 100.0\n  }\n}"
    /// );
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    #[must_use]
    pub fn export_json_pretty(&self, id: Id) -> Option<String> {
        Some(self.export_blob_json_pretty(self.get(id)?))
    }

    /// Any blob as [`export_blob_json`](Store::export_blob_json) writes it, indented as
    /// [`export_json_pretty`](Store::export_json_pretty) writes the store's own entities.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, ImportOptions, Store};
    ///
    /// let mut store = Store::new();
    /// store.import_json(r#"{"stats": {"health": 1}}"#, &ImportOptions::strict())?;
    /// let mut sheet = Blob::new();
    /// sheet.set("stats.health", 75);
    /// assert_eq!(
    ///     store.export_blob_json_pretty(sheet.as_blob_ref()),
    ///     "{\n  \"stats\": {\n    \"health\": 75.0\n  }\n}"
    /// );
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    #[must_use]
    pub fn export_blob_json_pretty(&self, blob: BlobRef<'_>) -> String {
        let mut tree = Tree::default();
        self.export_tree(blob, &mut Vec::new(), &mut tree);
        let mut out = Vec::new();
        tree.write(true, 0, &mut out);
        into_string(out)
    }

    /// Every entity, in iteration order, as a JSON array of objects: a document that
    /// [`import_json`](Store::import_json) reads back into the same entities (under new ids).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ImportOptions, Store};
    ///
    /// let mut store = Store::new();
    /// let text = r#"[{"name": "Orc"}, {"name": "Troll", "stats": {"health": 3}}]"#;
    /// store.import_json(text, &ImportOptions::strict())?;
    /// let exported = store.export_all_json();
    /// assert_eq!(exported, r#"[{"name":"Orc"},{"name":"Troll","stats":{"health":3.0}}]"#);
    ///
    /// let mut copy = Store::new();
    /// copy.import_json(&exported, &ImportOptions::strict())?;
    /// assert_eq!(copy.export_all_json(), exported);
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    #[must_use]
    pub fn export_all_json(&self) -> String {
        self.export_all(false)
    }

    /// Every entity as [`export_all_json`](Store::export_all_json) writes them, indented two
    /// spaces a level.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ImportOptions, Store};
    ///
    /// let mut store = Store::new();
    /// store.import_json(r#"[{"alive": true}, {"alive": false}]"#, &ImportOptions::strict())?;
    /// assert_eq!(
    ///     store.export_all_json_pretty(),
    ///     "[\n  {\n    \"alive\": true\n  },\n  {\n    \"alive\": false\n  }\n]"
    /// );
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    #[must_use]
    pub fn export_all_json_pretty(&self) -> String {
        if self.is_empty() {
            return "[]".to_owned();
        }
        self.export_all(true)
    }

    /// Every entity as a JSON array, one entity's tree at a time, in one tree kept between
    /// entities: an export allocates per document, not per entity.
    fn export_all(&self, pretty: bool) -> String {
        let (open, separator, close): (&[u8], &[u8], &[u8]) =
            if pretty { (b"[\n  ", b",\n  ", b"\n]") } else { (b"[", b",", b"]") };
        // JSON takes about twice the bytes of the blobs; a guess that saves most regrowth
        // without a pass over every blob to measure them.
        let mut out = Vec::with_capacity(self.arena.len() * 4 * 2);
        let (mut segments, mut tree) = (Vec::new(), Tree::default());
        out.extend_from_slice(open);
        for (i, (_, blob)) in self.iter().enumerate() {
            if i > 0 {
                out.extend_from_slice(separator);
            }
            self.export_tree(blob, &mut segments, &mut tree);
            tree.write(pretty, usize::from(pretty), &mut out);
        }
        out.extend_from_slice(close);
        into_string(out)
    }

    /// Builds in `tree` the blob as a tree of objects, nested by the names this store knows
    /// for its keys. `segments` is scratch space, kept between calls so that it is allocated
    /// once.
    fn export_tree<'a>(
        &'a self,
        blob: BlobRef<'a>,
        segments: &mut Vec<Cow<'a, str>>,
        tree: &mut Tree<'a>,
    ) {
        tree.clear();
        for (key, value) in blob {
            let placed = self.names.get(&key).is_some_and(|name| {
                // A name deeper than an import takes (only an old save holds one) is written
                // by hash, so that the export always imports back.
                let depth = name.pointer.matches('/').count();
                if depth > MAX_PATH_SEGMENTS {
                    return false;
                }
                segments.clear();
                // Borrowed from the name unless a segment holds an escape.
                segments.extend(name.pointer.split('/').skip(1).map(unescape));
                tree.place(segments, value)
            });
            if !placed {
                // Unnamed, too deep, or its path runs through another key's value: at the
                // top, by hash.
                tree.push_member(ROOT, Cow::Owned(key.to_string()), Some(value));
            }
        }
    }
}

/// Appends `/segment` to a JSON Pointer, escaping `~` as `~0` and `/` as `~1`.
pub(crate) fn push_pointer_segment(pointer: &mut String, segment: &str) {
    pointer.push('/');
    for c in segment.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// A JSON Pointer segment's text: `~1` is `/`, `~0` is `~` (the inverse of
/// [`push_pointer_segment`]).
pub(crate) fn unescape(segment: &str) -> Cow<'_, str> {
    if segment.contains('~') {
        segment.replace("~1", "/").replace("~0", "~").into()
    } else {
        segment.into()
    }
}

/// An exported entity, as one flat list of nodes: node [`ROOT`] is the entity's object, and
/// each object's members are linked in the order they were met. Cleared, not freed, between
/// entities.
///
/// Nothing here recurses: a path is placed by a loop and the tree is written with an explicit
/// stack, so a name of any depth (an old save may hold one past [`MAX_PATH_SEGMENTS`]) costs
/// heap, not stack. An object's members are found by a scan while it has few of them, and
/// through `index` (a search, not a walk) once it has more, so that placing n keys under one
/// object is O(n log n), not O(n²).
#[derive(Default)]
struct Tree<'a> {
    nodes: Vec<TreeNode<'a>>,
    /// The members of every object past [`SCAN_MEMBERS`] members, by (object, name).
    index: BTreeMap<(u32, Cow<'a, str>), u32>,
    /// While writing: each open object and the next of its members to write.
    open: Vec<(u32, u32)>,
}

/// A member of an object: a value, or an object whose members start at `first`.
struct TreeNode<'a> {
    name: Cow<'a, str>,
    leaf: Option<Value<'a>>,
    /// The first and last members of an object; [`NO_NODE`] when it has none.
    first: u32,
    last: u32,
    /// The next member of the same object; [`NO_NODE`] after the last.
    next: u32,
    /// How many members an object has.
    members: u32,
}

/// The entity's own object in a [`Tree`].
const ROOT: u32 = 0;
/// No node: the end of a list of members.
const NO_NODE: u32 = u32::MAX;
/// Members of an object found by a scan of its list; past this many, through the tree's index.
const SCAN_MEMBERS: u32 = 16;

/// The bytes an export wrote: JSON from `serde_json` and ASCII punctuation, so always UTF-8.
fn into_string(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_default()
}

impl<'a> Tree<'a> {
    /// Empties the tree down to the entity's object, with no members.
    fn clear(&mut self) {
        self.nodes.clear();
        self.index.clear();
        self.nodes.push(TreeNode::new(Cow::Borrowed(""), None));
    }

    /// The members of object `object`, in order.
    fn members(&self, object: u32) -> impl Iterator<Item = u32> + '_ {
        let first = self.nodes[object as usize].first;
        std::iter::successors((first != NO_NODE).then_some(first), |&node| {
            let next = self.nodes[node as usize].next;
            (next != NO_NODE).then_some(next)
        })
    }

    /// The member of `object` named `name`, if it has one (the first, if several).
    #[allow(clippy::ptr_arg)] // The index is searched with a key of its own type.
    fn member(&self, object: u32, name: &Cow<'a, str>) -> Option<u32> {
        if self.nodes[object as usize].members <= SCAN_MEMBERS {
            self.members(object).find(|&m| self.nodes[m as usize].name == *name)
        } else {
            self.index.get(&(object, name.clone())).copied()
        }
    }

    /// Adds a member (a value, or with `leaf` `None` an empty object) after the last member of
    /// `object`, and returns it.
    fn push_member(&mut self, object: u32, name: Cow<'a, str>, leaf: Option<Value<'a>>) -> u32 {
        let node = self.nodes.len() as u32;
        self.nodes.push(TreeNode::new(name, leaf));
        let parent = &mut self.nodes[object as usize];
        let last = std::mem::replace(&mut parent.last, node);
        parent.members += 1;
        let members = parent.members;
        if last == NO_NODE {
            parent.first = node;
        } else {
            self.nodes[last as usize].next = node;
        }
        if members == SCAN_MEMBERS + 1 {
            // From now on this object's members are searched for: index the ones it has.
            let listed: Vec<u32> = self.members(object).collect();
            for member in listed {
                let name = self.nodes[member as usize].name.clone();
                self.index.entry((object, name)).or_insert(member);
            }
        } else if members > SCAN_MEMBERS {
            let name = self.nodes[node as usize].name.clone();
            self.index.entry((object, name)).or_insert(node);
        }
        node
    }

    /// Puts `value` at the path `segments` under the entity's object, creating objects on the
    /// way. Returns false, changing nothing, where the path meets a value or ends on an
    /// existing member.
    fn place(&mut self, segments: &[Cow<'a, str>], value: Value<'a>) -> bool {
        let Some((last, parents)) = segments.split_last() else {
            return false;
        };
        let mut object = ROOT;
        // Once an object is created, the rest of the path meets nothing: placing succeeds,
        // and nothing was changed before it.
        let mut created = false;
        for segment in parents {
            let found = if created { None } else { self.member(object, segment) };
            object = match found {
                Some(member) if self.nodes[member as usize].leaf.is_some() => return false,
                Some(member) => member,
                None => {
                    created = true;
                    self.push_member(object, segment.clone(), None)
                }
            };
        }
        if !created && self.member(object, last).is_some() {
            return false;
        }
        self.push_member(object, last.clone(), Some(value));
        true
    }

    /// Writes the entity's object: compact as `serde_json` writes it, or `pretty` as designers
    /// write fixtures (one member a line, indented two spaces a level from `depth`, float
    /// arrays on one line: `[12.0, 0.0, -40.5]`). A loop over an explicit stack of open
    /// objects, so that no depth of nesting can overflow the call stack.
    fn write(&mut self, pretty: bool, depth: usize, out: &mut Vec<u8>) {
        let mut open = std::mem::take(&mut self.open);
        open.clear();
        let mut node = ROOT;
        loop {
            // `node`'s value, or the opening of its object.
            let TreeNode { leaf, first, .. } = self.nodes[node as usize];
            match leaf {
                Some(value) => write_value(out, value, pretty),
                None if first == NO_NODE => out.extend_from_slice(b"{}"),
                None => {
                    out.push(b'{');
                    open.push((node, first));
                }
            }
            // The next member to write, closing every object that has none left.
            node = loop {
                let level = depth + open.len();
                let Some((object, next)) = open.last_mut() else {
                    self.open = open;
                    return;
                };
                if *next == NO_NODE {
                    open.pop();
                    if pretty {
                        out.push(b'\n');
                        push_indent(out, level - 1);
                    }
                    out.push(b'}');
                    continue;
                }
                let member = *next;
                if member != self.nodes[*object as usize].first {
                    out.push(b',');
                }
                *next = self.nodes[member as usize].next;
                if pretty {
                    out.push(b'\n');
                    push_indent(out, level);
                }
                write_leaf(out, &self.nodes[member as usize].name);
                out.extend_from_slice(if pretty { b": " } else { b":" });
                break member;
            };
        }
    }
}

impl<'a> TreeNode<'a> {
    fn new(name: Cow<'a, str>, leaf: Option<Value<'a>>) -> TreeNode<'a> {
        TreeNode { name, leaf, first: NO_NODE, last: NO_NODE, next: NO_NODE, members: 0 }
    }
}

/// Writes one value: floats in their shortest form that reads back as the same `f32` (a NaN
/// or infinity as `null`), by `serde_json`, and float arrays on one line (with a space after
/// each comma when `pretty`).
fn write_value(out: &mut Vec<u8>, value: Value<'_>, pretty: bool) {
    match value {
        Value::Bool(b) => write_leaf(out, &b),
        Value::Float(f) => write_leaf(out, &f),
        Value::Str(s) => write_leaf(out, s),
        Value::Floats(floats) => {
            out.push(b'[');
            for (i, f) in floats.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(if pretty { b", " } else { b"," });
                }
                write_leaf(out, f);
            }
            out.push(b']');
        }
    }
}

/// A float, string or member name written by `serde_json`, so that escapes and float forms
/// are its own. Writing to a Vec cannot fail.
fn write_leaf<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    let _ = serde_json::to_writer(out, value);
}

fn push_indent(out: &mut Vec<u8>, depth: usize) {
    for _ in 0..depth {
        out.extend_from_slice(b"  ");
    }
}

/// Entities read so far by a store import, repacked back to back: committed to the store only
/// when the whole document has been read.
#[derive(Default)]
struct Staging {
    /// The entity being read; cleared, not reallocated, between entities.
    blob: Builder,
    arena: Vec<u32>,
    /// (offset, words) of each entity in `arena`.
    spans: Vec<(usize, usize)>,
}

impl Staging {
    /// Reads one entity's members and stages its blob.
    fn entity<'de, A: MapAccess<'de>>(
        &mut self,
        importer: &mut Importer,
        map: A,
    ) -> Result<(), A::Error> {
        self.blob.clear();
        importer.claims.clear();
        read_members(importer, &mut self.blob, map)?;
        // Laid out straight into the staged arena, with no free space.
        let used = self.blob.byte_len() / 4;
        let offset = self.arena.len();
        self.arena.resize(offset + used, 0);
        self.blob.write(&mut self.arena[offset..]);
        self.spans.push((offset, used));
        Ok(())
    }
}

/// Where the importer is, what it has seen, and why it stopped.
#[derive(Default)]
struct Importer {
    /// The key of each open object (none at the top level).
    parents: Vec<Key>,
    /// The member names on the current path, back to back, and where each one ends.
    path: String,
    path_ends: Vec<usize>,
    /// The index of the array element being read, if one is.
    element: Option<usize>,
    /// Every path the entity has claimed so far, as a value or an object.
    claims: Claims,
    /// The member name being read.
    segment: String,
    /// Numbers of the array being read.
    floats: Vec<f32>,
    /// Why the import stopped, when it is the format's rule and not JSON's.
    failure: Option<JsonErrorKind>,
    /// The lenient policy, and what it changed.
    lenient: bool,
    report: ImportReport,
    /// The position of the entity being read in a top-level array, if it is in one.
    entity: Option<usize>,
    /// When importing into a store: every key's dotted name, the store's and this import's,
    /// and the keys this import added (removed again if it fails).
    track_names: bool,
    known: BTreeMap<Key, KeyName>,
    added: Vec<Key>,
}

/// Every path an entity has claimed so far, as a value or as an object, each with its member
/// name and the object it is in: a path is spelled out again (for an error) by following
/// those links, so memory is one member name a claim, not one path.
///
/// Found by a scan while there are few; past [`SCAN_CLAIMS`], through a map from each key to
/// its latest claim, whose claims of the same key are chained: one search a claim, O(log n),
/// whatever the keys (a hash set of attacker-chosen 32-bit keys can be flooded into one
/// bucket). A chain holds one value at most and one object a depth, so it is short. The map is
/// empty, and allocates nothing, for an entity of a few dozen keys.
#[derive(Default)]
struct Claims {
    list: Vec<Claim>,
    /// The claims' member names, back to back, in claim order.
    names: String,
    /// Past [`SCAN_CLAIMS`] claims: each key's latest claim.
    latest: BTreeMap<Key, u32>,
    /// The last object found as a parent, (key, depth) -> claim: a member's siblings share it.
    parent: Option<(Key, u32, u32)>,
}

/// One claimed path.
#[derive(Clone, Copy)]
struct Claim {
    key: Key,
    /// Member names on the path (at most [`MAX_PATH_SEGMENTS`]).
    depth: u32,
    object: bool,
    /// The claim of the object it is a member of; [`NO_CLAIM`] at the entity's top level.
    parent: u32,
    /// The claim of the same key before it; [`NO_CLAIM`] for the first (kept past
    /// [`SCAN_CLAIMS`] only).
    earlier: u32,
    /// Where its member name ends in `names` (it starts where the previous one's ends).
    name_end: u32,
}

/// Claims found by a scan of the list.
const SCAN_CLAIMS: usize = 32;
/// No claim: the parent of a member of the entity's top level.
const NO_CLAIM: u32 = u32::MAX;

impl Claim {
    /// Whether a claim of its key for a value (or an object, with `object`) at `depth` clashes
    /// with this one: two values always do, anything else at one depth only.
    fn clashes(&self, depth: u32, object: bool) -> bool {
        self.depth == depth || !(object || self.object)
    }
}

impl Claims {
    fn clear(&mut self) {
        self.list.clear();
        self.names.clear();
        self.latest.clear();
        self.parent = None;
    }

    /// Claims `key` at `depth` as a value or an `object`, a member named `name` of the object
    /// claimed as `parent`; or, changing nothing, the claims it clashes with, in claim order.
    fn claim(
        &mut self,
        key: Key,
        depth: u32,
        object: bool,
        parent: Option<u32>,
        name: &str,
    ) -> Result<(), Vec<u32>> {
        let at = self.list.len() as u32;
        let mut claim = Claim {
            key,
            depth,
            object,
            parent: parent.unwrap_or(NO_CLAIM),
            earlier: NO_CLAIM,
            name_end: (self.names.len() + name.len()) as u32,
        };
        if self.list.len() < SCAN_CLAIMS {
            let clashes: Vec<u32> = (0..at)
                .filter(|&c| {
                    let other = &self.list[c as usize];
                    other.key == key && other.clashes(depth, object)
                })
                .collect();
            if !clashes.is_empty() {
                return Err(clashes);
            }
        } else {
            if self.list.len() == SCAN_CLAIMS {
                // From now on, searched for: chain the claims so far.
                for i in 0..SCAN_CLAIMS {
                    let key = self.list[i].key;
                    if let Some(earlier) = self.latest.insert(key, i as u32) {
                        self.list[i].earlier = earlier;
                    }
                }
            }
            match self.latest.entry(key) {
                std::collections::btree_map::Entry::Vacant(entry) => {
                    entry.insert(at);
                }
                std::collections::btree_map::Entry::Occupied(mut entry) => {
                    let mut clashes = Vec::new();
                    let mut c = *entry.get();
                    while c != NO_CLAIM {
                        let other = &self.list[c as usize];
                        if other.clashes(depth, object) {
                            clashes.push(c);
                        }
                        c = other.earlier;
                    }
                    if !clashes.is_empty() {
                        clashes.reverse();
                        return Err(clashes);
                    }
                    claim.earlier = entry.insert(at);
                }
            }
        }
        self.names.push_str(name);
        self.list.push(claim);
        Ok(())
    }

    /// The claim of the object at `key` and `depth`, if there is one.
    fn object(&mut self, key: Key, depth: u32) -> Option<u32> {
        if let Some((k, d, c)) = self.parent
            && (k, d) == (key, depth)
        {
            return Some(c);
        }
        let is = |c: &Claim| c.object && c.key == key && c.depth == depth;
        let found = if self.list.len() <= SCAN_CLAIMS {
            self.list.iter().rposition(is).map(|i| i as u32)
        } else {
            let mut c = self.latest.get(&key).copied().unwrap_or(NO_CLAIM);
            while c != NO_CLAIM && !is(&self.list[c as usize]) {
                c = self.list[c as usize].earlier;
            }
            (c != NO_CLAIM).then_some(c)
        };
        if let Some(c) = found {
            self.parent = Some((key, depth, c));
        }
        found
    }

    /// The dotted path of `claim`, spelled out from the member names on its way.
    fn dotted(&self, claim: u32) -> String {
        let mut path = Vec::new();
        let mut at = claim;
        while at != NO_CLAIM {
            let start = at.checked_sub(1).map_or(0, |i| self.list[i as usize].name_end);
            let Claim { name_end, parent, .. } = self.list[at as usize];
            path.push(&self.names[start as usize..name_end as usize]);
            at = parent;
        }
        path.reverse();
        path.join(".")
    }
}

impl Importer {
    /// Records why the import stops, as an error `serde_json` places in the text.
    fn fail<E: de::Error>(&mut self, kind: JsonErrorKind) -> E {
        self.failure = Some(kind);
        E::custom("datacomp format rule")
    }

    fn error(&mut self, e: &serde_json::Error) -> JsonError {
        let kind = self.failure.take().unwrap_or_else(|| {
            let message = e.to_string();
            let message = message.rsplit_once(" at line ").map_or(&*message, |(m, _)| m);
            JsonErrorKind::Syntax(message.to_owned())
        });
        JsonError { kind, path: self.pointer(), line: e.line(), column: e.column() }
    }

    /// The member names on the current path.
    fn segments(&self) -> impl Iterator<Item = &str> {
        let starts = std::iter::once(0).chain(self.path_ends.iter().copied());
        starts.zip(self.path_ends.iter().copied()).map(|(start, end)| &self.path[start..end])
    }

    /// The current path as a JSON Pointer into the document: `/stats/health`, `/position/2`,
    /// `/1/name` for the second entity of an array.
    fn pointer(&self) -> String {
        let mut pointer = String::new();
        if let Some(entity) = self.entity {
            let _ = write!(pointer, "/{entity}");
        }
        pointer.push_str(&self.member_pointer());
        if let Some(index) = self.element {
            let _ = write!(pointer, "/{index}");
        }
        pointer
    }

    /// The member path within the entity as a JSON Pointer: the key's exact segments.
    fn member_pointer(&self) -> String {
        let mut pointer = String::new();
        for segment in self.segments() {
            push_pointer_segment(&mut pointer, segment);
        }
        pointer
    }

    /// Whether `pointer` (a key's stored JSON Pointer) names the current member path.
    fn is_current_path(&self, pointer: &str) -> bool {
        pointer.strip_prefix('/').is_some_and(|path| {
            path.split('/').map(unescape).eq(self.segments().map(std::borrow::Cow::Borrowed))
        })
    }

    /// Appends the current path, dotted, to `out`.
    fn write_dotted(&self, out: &mut String) {
        for (i, segment) in self.segments().enumerate() {
            if i > 0 {
                out.push('.');
            }
            out.push_str(segment);
        }
    }

    /// Enters the member named `self.segment`, returning its key; refuses a member deeper
    /// than a name may be ([`MAX_PATH_SEGMENTS`]).
    fn enter<E: de::Error>(&mut self) -> Result<Key, E> {
        let key = match self.parents.last() {
            Some(parent) => parent.child(&self.segment),
            None => Key::new(&self.segment),
        };
        self.path.push_str(&self.segment);
        self.path_ends.push(self.path.len());
        let segments = self.path_ends.len();
        if segments > MAX_PATH_SEGMENTS {
            return Err(self.fail(JsonErrorKind::TooDeep { segments, limit: MAX_PATH_SEGMENTS }));
        }
        Ok(key)
    }

    fn leave(&mut self) {
        self.path_ends.pop();
        self.path.truncate(self.path_ends.last().copied().unwrap_or(0));
    }

    /// Claims `key` (the current path) for a value or an object. A key the entity already
    /// holds as a value, or as an object at this depth, was claimed before in this document:
    /// by the same path, or by another whose key collides. Two values always clash (the blob
    /// holds one value a key); an object's key is never stored, so it clashes only with a
    /// value or object of its own depth (`inventory.2241.count` and the object
    /// `inventory.18937` share a key, harmlessly). A path may hold a value or an object, not
    /// both, or export could not write the entity back.
    fn claim<E: de::Error>(&mut self, key: Key, object: bool) -> Result<(), E> {
        let depth = self.path_ends.len() as u32;
        let parent = match self.parents.last() {
            Some(&parent) => self.claims.object(parent, depth - 1),
            None => None,
        };
        let name = self.path_ends.len().checked_sub(2).map_or(0, |i| self.path_ends[i]);
        let Err(clashes) = self.claims.claim(key, depth, object, parent, &self.path[name..]) else {
            return Ok(());
        };
        let mut current = String::new();
        self.write_dotted(&mut current);
        // The same path if it is one of them, else the one claimed first.
        let names: Vec<String> = clashes.iter().map(|&c| self.claims.dotted(c)).collect();
        let kind = if let Some(same) = names.iter().find(|name| **name == current) {
            JsonErrorKind::DuplicatePath(same.clone())
        } else {
            let first = names.into_iter().next().unwrap_or_default();
            JsonErrorKind::KeyCollision { first, second: current, key }
        };
        Err(self.fail(kind))
    }

    /// Opens the object at `key` (the current path): later members are its children.
    fn open_object<E: de::Error>(&mut self, key: Key) -> Result<(), E> {
        self.claim(key, true)
    }

    /// Sets `key` (the current path) in `blob`.
    fn set<E: de::Error>(
        &mut self,
        blob: &mut Builder,
        key: Key,
        value: Value<'_>,
    ) -> Result<(), E> {
        self.claim(key, false)?;
        if self.track_names {
            match self.known.get(&key) {
                // Compared segment by segment: most keys are met again under the same name,
                // and that costs no allocation.
                Some(first) if !self.is_current_path(&first.pointer) => {
                    // As the store shows them: a dotted name only where it reads back.
                    let mut dotted = String::new();
                    self.write_dotted(&mut dotted);
                    let second = KeyName { dotted, pointer: self.member_pointer() };
                    let (first, second) = (first.label().to_owned(), second.label().to_owned());
                    return Err(self.fail(JsonErrorKind::KeyCollision { first, second, key }));
                }
                Some(_) => {}
                None => {
                    let mut dotted = String::new();
                    self.write_dotted(&mut dotted);
                    let pointer = self.member_pointer();
                    self.known.insert(key, KeyName { dotted, pointer });
                    self.added.push(key);
                }
            }
        }
        // A new key, since `claim` refused one the blob holds.
        blob.push(key, value).map_err(|e| self.fail(JsonErrorKind::Blob(e)))
    }

    fn number<E: de::Error>(&mut self, n: f64) -> Result<f32, E> {
        // Past f32's range means rounding to infinity: the shortest decimal form of f32::MAX,
        // 3.4028235e38, is a little above it as an f64 and must still read back.
        let rounded = n as f32;
        if rounded.is_finite() {
            return Ok(rounded);
        }
        if !self.lenient {
            return Err(self.fail(JsonErrorKind::NumberOutOfRange(n)));
        }
        self.report.rounded_numbers += 1;
        Ok(f32::MAX.copysign(n as f32))
    }

    /// Enters the member named by decimal `index` of the array at `key`: lenient arrays become
    /// objects keyed by index.
    fn enter_index<E: de::Error>(&mut self, key: Key, index: usize) -> Result<Key, E> {
        self.segment.clear();
        let _ = write!(self.segment, "{index}");
        self.parents.push(key);
        self.enter()
    }

    fn leave_index(&mut self) {
        self.leave();
        self.parents.pop();
    }
}

/// One entity, which must be an object: the top level of `Blob::from_json`, or of a store
/// import (where it may also be an array of entities).
struct Entity<'i> {
    importer: &'i mut Importer,
    blob: &'i mut Builder,
    /// In a store import: stage the entity there instead of reading into `blob`.
    staging: Option<&'i mut Staging>,
}

impl<'de> DeserializeSeed<'de> for Entity<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Entity<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        match self.staging {
            Some(staging) => staging.entity(self.importer, map),
            None => read_members(self.importer, self.blob, map),
        }
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Err(self.importer.fail(JsonErrorKind::NotAnObject))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Err(self.importer.fail(JsonErrorKind::NotAnObject))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Err(self.importer.fail(JsonErrorKind::NotAnObject))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Err(self.importer.fail(JsonErrorKind::NotAnObject))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Err(self.importer.fail(JsonErrorKind::NotAnObject))
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Err(self.importer.fail(JsonErrorKind::NotAnObject))
    }

    /// A store import's top level may be an array of entities; nothing else may be one.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Some(staging) = self.staging.filter(|_| self.importer.entity.is_none()) else {
            return Err(self.importer.fail(JsonErrorKind::NotAnObject));
        };
        loop {
            self.importer.entity = Some(staging.spans.len());
            let seed = Entity {
                importer: &mut *self.importer,
                blob: &mut *self.blob,
                staging: Some(&mut *staging),
            };
            if seq.next_element_seed(seed)?.is_none() {
                break;
            }
        }
        self.importer.entity = None;
        Ok(())
    }
}

/// Reads the members of an object into `blob`, under the importer's current path.
fn read_members<'de, A: MapAccess<'de>>(
    importer: &mut Importer,
    blob: &mut Builder,
    mut map: A,
) -> Result<(), A::Error> {
    while map.next_key_seed(Segment { importer: &mut *importer })?.is_some() {
        let key = importer.enter()?;
        map.next_value_seed(Member { importer: &mut *importer, blob: &mut *blob, key })?;
        importer.leave();
    }
    Ok(())
}

/// A member's name, copied into the importer's reusable buffer.
struct Segment<'i> {
    importer: &'i mut Importer,
}

impl<'de> DeserializeSeed<'de> for Segment<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Visitor<'_> for Segment<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<(), E> {
        self.importer.segment.clear();
        self.importer.segment.push_str(name);
        Ok(())
    }
}

/// A member's value, written into the blob at `key`.
struct Member<'i> {
    importer: &'i mut Importer,
    blob: &'i mut Builder,
    key: Key,
}

impl<'de> DeserializeSeed<'de> for Member<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Member<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a boolean, number, string, object or array of numbers")
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<(), E> {
        self.importer.set(self.blob, self.key, Value::Bool(b))
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<(), E> {
        let n = self.importer.number(n)?;
        self.importer.set(self.blob, self.key, Value::Float(n))
    }

    #[allow(clippy::cast_precision_loss)] // Numbers are stored as f32: that is the format.
    fn visit_i64<E: de::Error>(self, n: i64) -> Result<(), E> {
        self.visit_f64(n as f64)
    }

    #[allow(clippy::cast_precision_loss)]
    fn visit_u64<E: de::Error>(self, n: u64) -> Result<(), E> {
        self.visit_f64(n as f64)
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        self.importer.set(self.blob, self.key, Value::Str(s))
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        if !self.importer.lenient {
            return Err(self.importer.fail(JsonErrorKind::Null));
        }
        self.importer.report.skipped_nulls += 1;
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        self.importer.open_object(self.key)?;
        self.importer.parents.push(self.key);
        read_members(self.importer, self.blob, map)?;
        self.importer.parents.pop();
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Member { importer, blob, key } = self;
        let mut floats = std::mem::take(&mut importer.floats);
        floats.clear();
        let mut converted = false;
        loop {
            let index = floats.len();
            importer.element = Some(index);
            let element = if importer.lenient {
                let seed = LenientElement {
                    importer: &mut *importer,
                    blob: &mut *blob,
                    key,
                    floats: &floats,
                };
                seq.next_element_seed(seed)?
            } else {
                seq.next_element_seed(Number { importer: &mut *importer })?.map(Element::Number)
            };
            importer.element = None;
            match element {
                Some(Element::Number(n)) => floats.push(n),
                Some(Element::Converted) => {
                    converted = true;
                    break;
                }
                None => break,
            }
        }
        let result = if converted {
            // The rest of the array, member by member at its index.
            importer.report.converted_arrays += 1;
            let mut index = floats.len() + 1;
            loop {
                let member = importer.enter_index(key, index)?;
                let seed = Member { importer: &mut *importer, blob: &mut *blob, key: member };
                let read = seq.next_element_seed(seed);
                importer.leave_index();
                if read?.is_none() {
                    break Ok(());
                }
                index += 1;
            }
        } else {
            importer.set(blob, key, Value::Floats(&floats))
        };
        importer.floats = floats;
        result
    }
}

/// What reading one element of a lenient array gave.
enum Element {
    /// A number, while every element so far was one.
    Number(f32),
    /// The first element that is not a number: the array is now an object keyed by index, and
    /// the numbers before it and this element are written as its members.
    Converted,
}

/// An element of an array read leniently.
struct LenientElement<'i> {
    importer: &'i mut Importer,
    blob: &'i mut Builder,
    /// The array's key.
    key: Key,
    /// The numbers read so far.
    floats: &'i [f32],
}

impl LenientElement<'_> {
    /// Writes the numbers read so far as members `0..`, then returns the member for this
    /// element.
    fn convert<E: de::Error>(&mut self) -> Result<Member<'_>, E> {
        // From here on the path names members by index, not elements.
        self.importer.element = None;
        self.importer.open_object(self.key)?;
        for (index, &n) in self.floats.iter().enumerate() {
            let member = self.importer.enter_index(self.key, index)?;
            let set = self.importer.set(self.blob, member, Value::Float(n));
            self.importer.leave_index();
            set?;
        }
        let index = self.floats.len();
        let key = self.importer.enter_index(self.key, index)?;
        Ok(Member { importer: &mut *self.importer, blob: &mut *self.blob, key })
    }

    /// Reads this element as a member of the converted array.
    fn read_as_member<E: de::Error>(
        mut self,
        read: impl FnOnce(Member<'_>) -> Result<(), E>,
    ) -> Result<Element, E> {
        let member = self.convert()?;
        let result = read(member);
        self.importer.leave_index();
        result.map(|()| Element::Converted)
    }
}

impl<'de> DeserializeSeed<'de> for LenientElement<'_> {
    type Value = Element;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Element, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for LenientElement<'_> {
    type Value = Element;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array element")
    }

    // Numbers follow the one rule for array numbers, in `Number`.
    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Element, E> {
        Number { importer: self.importer }.visit_f64(n).map(Element::Number)
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Element, E> {
        Number { importer: self.importer }.visit_i64(n).map(Element::Number)
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Element, E> {
        Number { importer: self.importer }.visit_u64(n).map(Element::Number)
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Element, E> {
        self.read_as_member(|m| m.visit_bool(b))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Element, E> {
        self.read_as_member(|m| m.visit_str(s))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Element, E> {
        self.read_as_member(|m| m.visit_unit())
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Element, A::Error> {
        self.read_as_member(|m| m.visit_map(map))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Element, A::Error> {
        self.read_as_member(|m| m.visit_seq(seq))
    }
}

/// An array element, which must be a number.
struct Number<'i> {
    importer: &'i mut Importer,
}

impl<'de> DeserializeSeed<'de> for Number<'_> {
    type Value = f32;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<f32, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Number<'_> {
    type Value = f32;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number")
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<f32, E> {
        self.importer.number(n)
    }

    #[allow(clippy::cast_precision_loss)]
    fn visit_i64<E: de::Error>(self, n: i64) -> Result<f32, E> {
        self.importer.number(n as f64)
    }

    #[allow(clippy::cast_precision_loss)]
    fn visit_u64<E: de::Error>(self, n: u64) -> Result<f32, E> {
        self.importer.number(n as f64)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<f32, E> {
        Err(self.importer.fail(JsonErrorKind::NotANumber))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<f32, E> {
        Err(self.importer.fail(JsonErrorKind::NotANumber))
    }

    fn visit_unit<E: de::Error>(self) -> Result<f32, E> {
        Err(self.importer.fail(JsonErrorKind::NotANumber))
    }

    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<f32, A::Error> {
        Err(self.importer.fail(JsonErrorKind::NotANumber))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<f32, A::Error> {
        Err(self.importer.fail(JsonErrorKind::NotANumber))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `f` on a thread with a 64 KiB stack: enough for a loop, far too little for a
    /// recursion per level of a deep tree.
    fn on_a_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        let thread = std::thread::Builder::new().stack_size(64 * 1024).spawn(f).unwrap();
        thread.join().expect("no stack overflow")
    }

    #[test]
    fn a_path_of_100_000_segments_is_placed_and_written_without_recursion() {
        let compact = on_a_small_stack(|| {
            let segments = vec![Cow::Borrowed("a"); 100_000];
            let mut tree = Tree::default();
            tree.clear();
            assert!(tree.place(&segments, Value::Float(1.0)));
            assert!(!tree.place(&segments, Value::Float(2.0)), "the path is taken");
            assert!(!tree.place(&segments[..50_000], Value::Float(3.0)), "ends on an object");
            assert!(!tree.place(&[segments.clone(), vec!["b".into()]].concat(), Value::Bool(true)));
            let mut out = Vec::new();
            tree.write(false, 0, &mut out);
            into_string(out)
        });
        assert_eq!(compact, format!("{}1.0{}", "{\"a\":".repeat(100_000), "}".repeat(100_000)));

        // Pretty output indents each level, so it grows with the square of the depth: 1,000.
        let pretty = on_a_small_stack(|| {
            let segments = vec![Cow::Borrowed("a"); 1_000];
            let mut tree = Tree::default();
            tree.clear();
            assert!(tree.place(&segments, Value::Floats(&[1.0, 2.0])));
            let mut out = Vec::new();
            tree.write(true, 0, &mut out);
            into_string(out)
        });
        let mut expected = String::from("{");
        for depth in 1..=1_000 {
            let _ = write!(expected, "\n{}\"a\": ", "  ".repeat(depth));
            expected.push(if depth == 1_000 { '[' } else { '{' });
        }
        expected.push_str("1.0, 2.0]");
        for depth in (0..1_000).rev() {
            let _ = write!(expected, "\n{}}}", "  ".repeat(depth));
        }
        assert_eq!(pretty, expected);
    }

    #[test]
    fn members_past_the_scan_are_found_through_the_index_in_order() {
        let mut tree = Tree::default();
        tree.clear();
        let names: Vec<String> = (0..40).map(|i| format!("m{i}")).collect();
        for name in &names {
            let path = [Cow::Borrowed(name.as_str()), Cow::Borrowed("x")];
            assert!(tree.place(&path, Value::Float(1.0)));
        }
        // Runs through a value, ends on an existing member, or nests into member 35.
        assert!(!tree.place(&[Cow::Borrowed("m30"), "x".into(), "y".into()], Value::Bool(true)));
        assert!(!tree.place(&[Cow::Borrowed("m30")], Value::Bool(true)));
        assert!(tree.place(&[Cow::Borrowed("m35"), "y".into()], Value::Bool(true)));
        assert!(tree.place(&[Cow::Borrowed("m40")], Value::Bool(false)));
        let mut out = Vec::new();
        tree.write(false, 0, &mut out);
        let mut expected: Vec<String> =
            (0..40).map(|i| format!("\"m{i}\":{{\"x\":1.0}}")).collect();
        expected[35] = "\"m35\":{\"x\":1.0,\"y\":true}".to_owned();
        expected.push("\"m40\":false".to_owned());
        assert_eq!(into_string(out), format!("{{{}}}", expected.join(",")));
    }
}
