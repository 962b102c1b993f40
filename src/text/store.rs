//! The store's JSON entry points: [`Store::import_json`] and the exports. The reader and
//! writer they run are `read.rs` and `write.rs`; they reach the store through its public API
//! and a few crate-internal accessors (`names()`, `arena()`, `check_room`, `append_packed`).

use std::borrow::Cow;

use crate::blob::BlobRef;
use crate::blob::bulk::Builder;
use crate::error::BlobError;
use crate::handle_map::Id;
use crate::key::{Key, KeyPath};
use crate::names;
use crate::store::{ArenaFull, Store};

use super::entity::Entity;
use super::error::{ExportError, JsonError, JsonErrorKind};
use super::importer::{Importer, ReadError, Staging};
use super::options::{ExportOptions, ImportOptions, ImportReport, JsonStyle};
use super::plan::{self, NotFinite, Plans};
use super::read::{read_json, read_with_extremes, without_bom};
use super::write::{NO_NODE, ROOT, Tree, check_finite, into_string};

/// The options of the `export_*` methods without `try_`: a NaN or infinity written as `null`.
const LOSSY: ExportOptions = ExportOptions::new().non_finite_as_null();

impl Store {
    /// Imports entities from JSON: a top-level object is one entity, a top-level array of
    /// objects gives one entity each. Returns their handles in document order. A leading byte
    /// order mark is skipped.
    ///
    /// The import is atomic: on any error the store is unchanged. The store remembers the
    /// dotted name of every key it imports ([`key_name`](Store::key_name)); a key that it
    /// already knows under another name is a [`JsonErrorKind::KeyCollision`].
    ///
    /// An entity's top-level member named `#` and 8 hex digits (`"#0000002a"`, as
    /// [`Key`]'s `FromStr` reads a raw key) is that key, and gives it no name: what the
    /// export writes for a key the store has no name for, so such a key round-trips. It holds
    /// one value; a key the store names is that named key (exported by its name). Deeper,
    /// such a member is a name like any other.
    ///
    /// # Errors
    ///
    /// A [`JsonError`] with the JSON path (led by the entity's position in an array) and line
    /// and column. A raw-key member holding an object or an array of other things than
    /// numbers is [`JsonErrorKind::RawKeyNotAValue`]; the same raw key twice
    /// [`JsonErrorKind::DuplicatePath`]; a raw key of another path of the entity
    /// [`JsonErrorKind::KeyCollision`].
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
    /// assert_eq!(store.key_name(Key::parse("stats.health")).as_deref(), Some("stats.health"));
    ///
    /// let err = store.import_json(r#"[{"name": "Imp"}, {"name": null}]"#, &ImportOptions::strict());
    /// assert_eq!(err.unwrap_err().path(), "/1/name");
    /// assert_eq!(store.len(), 2, "nothing of the failed import is kept");
    ///
    /// // A key without a name exports by hash, and imports back as that key, unnamed.
    /// let id = store.import_json(r##"{"#0000002a": 7}"##, &ImportOptions::strict())?[0];
    /// assert_eq!(store.get(id).unwrap().get_float(Key::from_raw(42)), Some(7.0));
    /// assert_eq!(store.key_name(Key::from_raw(42)), None);
    /// assert_eq!(store.export_json(id).unwrap(), r##"{"#0000002a":7}"##);
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
        self.import_with(without_bom(text), *options, true, read_json)
    }

    /// Imports the entities of `text` with `read`, which runs a reader over the text and feeds
    /// the importer's [`Entity`]: the one store import of JSON and SJSON. With `extremes`, the
    /// numbers the reader cannot hand over as written are read again (see
    /// [`read_with_extremes`]).
    pub(crate) fn import_with(
        &mut self,
        text: &str,
        options: ImportOptions,
        extremes: bool,
        read: impl Fn(&str, Entity<'_>) -> Result<(), ReadError>,
    ) -> Result<(Vec<Id>, ImportReport), JsonError> {
        let mut stage = |text: &str| {
            // A second read of the text (see `read_with_extremes`) starts from the names as
            // they were: what the first added is taken back.
            self.names_mut().rollback();
            self.names_mut().begin();
            let mut importer = Importer {
                lenient: options.lenient,
                names: std::mem::take(self.names_mut()),
                ..Importer::default()
            };
            let mut staging = Staging::default();
            let mut unused = Builder::default();
            let top =
                Entity { importer: &mut importer, blob: &mut unused, staging: Some(&mut staging) };
            let read = read(text, top);
            let room = self.check_room(staging.arena.len());
            let fits = |()| {
                room.map_err(|ArenaFull { required }| {
                    let kind = JsonErrorKind::Blob(BlobError::TooLarge { required });
                    JsonError { kind, path: String::new(), line: text.lines().count(), column: 1 }
                })
            };
            let read = read.map_err(|e| importer.error(&e)).and_then(fits);
            importer.release_claims();
            if let Err(error) = read {
                // Nothing of a failed import stays: not even the names it met.
                importer.names.rollback();
                *self.names_mut() = importer.names;
                return Err(error);
            }
            *self.names_mut() = importer.names;
            Ok(((staging, importer.report), importer.saw_zero))
        };
        let (staging, report) = if extremes {
            read_with_extremes(text, options.lenient, stage)?
        } else {
            stage(text)?.0
        };
        // Paths that named nothing (empty objects, skipped nulls) are dropped.
        self.names_mut().commit();
        // Each buffer freed as soon as it is copied, the index grown once: the peak is about
        // the staged entities twice, not more (`[{},{},...]` has 3 bytes of JSON an entity).
        let Staging { arena, spans, blob } = staging;
        drop(blob);
        let ids = self
            .append_packed(arena, &spans)
            .expect("INVARIANT: the staged words were checked to fit before the names were kept");
        Ok((ids, report))
    }
}

impl Store {
    /// The entity of `id` as a JSON object, nested again by its keys' names: the inverse of
    /// [`import_json`](Store::import_json). A key without a name appears at the top level as
    /// `"#1a2b3c4d"`. Floats are written as [`JsonF32`](crate::JsonF32) writes them: whole ones
    /// without a fraction, others in their shortest form that reads back as the same `f32`.
    ///
    /// A NaN or infinity, which JSON has no number for, is written as `null`, which does not
    /// read back (strict import refuses it, lenient drops it):
    /// [`try_export_json`](Store::try_export_json) refuses such an entity instead, naming the
    /// key.
    ///
    /// A thin wrapper kept for existing callers: [`export_json_with`](Store::export_json_with) with
    /// `ExportOptions::new().non_finite_as_null()`, `None` for a dead handle.
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
    ///     r#"{"name":"The One","stats":{"health":100,"mana":0.1},"position":[1,2]}"#
    /// );
    ///
    /// let unnamed = store.insert(&[(Key::from_raw(42), true)].into_iter().collect::<Blob>());
    /// assert_eq!(store.export_json(unnamed).unwrap(), r##"{"#0000002a":true}"##);
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    #[must_use]
    pub fn export_json(&self, id: Id) -> Option<String> {
        self.export_json_with(id, &LOSSY).ok()
    }

    /// Any blob as a JSON object, nested by the names this store knows for its keys, as
    /// [`export_json`](Store::export_json) writes the store's own entities (a NaN or infinity
    /// as `null`: [`try_export_blob_json`](Store::try_export_blob_json) refuses it).
    ///
    /// A thin wrapper kept for existing callers:
    /// [`export_blob_json_with`](Store::export_blob_json_with) with
    /// `ExportOptions::new().non_finite_as_null()`.
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
    /// assert_eq!(store.export_blob_json(sheet.as_blob_ref()), r#"{"stats":{"health":75}}"#);
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    #[must_use]
    pub fn export_blob_json(&self, blob: BlobRef<'_>) -> String {
        self.export_blob_json_with(blob, &LOSSY).unwrap_or_default()
    }

    /// The entity of `id` as [`export_json`](Store::export_json) writes it, indented two
    /// spaces a level, as designers write fixtures (a NaN or infinity as `null`:
    /// [`try_export_json`](Store::try_export_json) refuses it).
    ///
    /// A thin wrapper kept for existing callers: [`export_json_with`](Store::export_json_with) with
    /// `ExportOptions::new().non_finite_as_null().style(JsonStyle::Pretty)`.
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
    ///     "{\n  \"stats\": {\n    \"health\": 100\n  }\n}"
    /// );
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    #[must_use]
    pub fn export_json_pretty(&self, id: Id) -> Option<String> {
        self.export_json_with(id, &LOSSY.style(JsonStyle::Pretty)).ok()
    }

    /// Any blob as [`export_blob_json`](Store::export_blob_json) writes it, indented as
    /// [`export_json_pretty`](Store::export_json_pretty) writes the store's own entities.
    ///
    /// A thin wrapper kept for existing callers:
    /// [`export_blob_json_with`](Store::export_blob_json_with), lossy and pretty.
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
    ///     "{\n  \"stats\": {\n    \"health\": 75\n  }\n}"
    /// );
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    #[must_use]
    pub fn export_blob_json_pretty(&self, blob: BlobRef<'_>) -> String {
        self.export_blob_json_with(blob, &LOSSY.style(JsonStyle::Pretty)).unwrap_or_default()
    }

    /// The blob as JSON in `style`; with `checked`, the first NaN or infinity met instead.
    fn write_blob(
        &self,
        blob: BlobRef<'_>,
        style: JsonStyle,
        checked: bool,
    ) -> Result<String, (Key, f32)> {
        self.write_blob_with(blob, checked, |tree, out| {
            tree.write(style == JsonStyle::Pretty, 0, out);
        })
    }

    /// The blob's tree as `write` writes it (JSON or SJSON); with `checked`, the first NaN or
    /// infinity met instead, before anything is written.
    pub(crate) fn write_blob_with(
        &self,
        blob: BlobRef<'_>,
        checked: bool,
        write: impl FnOnce(&Tree<'_>, &mut Vec<u8>),
    ) -> Result<String, (Key, f32)> {
        let mut tree = Tree::for_names(self.names(), false);
        if let (true, Some(bad)) = (checked, self.export_tree(blob, &mut tree)) {
            return Err(bad);
        }
        // JSON takes about twice the bytes of the blob: one allocation, not a doubling series.
        let mut out = Vec::with_capacity(blob.byte_len() * 2);
        write(&tree, &mut out);
        Ok(into_string(out))
    }

    /// Every entity, in iteration order, as a JSON array of objects: a document that
    /// [`import_json`](Store::import_json) reads back into the same entities (under new ids),
    /// unless one holds a NaN or infinity, written as `null`
    /// ([`try_export_all_json`](Store::try_export_all_json) refuses it).
    ///
    /// A thin wrapper kept for existing callers:
    /// [`export_all_json_with`](Store::export_all_json_with) with
    /// `ExportOptions::new().non_finite_as_null()`.
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
    /// assert_eq!(exported, r#"[{"name":"Orc"},{"name":"Troll","stats":{"health":3}}]"#);
    ///
    /// let mut copy = Store::new();
    /// copy.import_json(&exported, &ImportOptions::strict())?;
    /// assert_eq!(copy.export_all_json(), exported);
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    #[must_use]
    pub fn export_all_json(&self) -> String {
        self.export_all_json_with(&LOSSY).unwrap_or_default()
    }

    /// Every entity as [`export_all_json`](Store::export_all_json) writes them, indented two
    /// spaces a level.
    ///
    /// A thin wrapper kept for existing callers:
    /// [`export_all_json_with`](Store::export_all_json_with), lossy and pretty.
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
        self.export_all_json_with(&LOSSY.style(JsonStyle::Pretty)).unwrap_or_default()
    }

    /// Every entity as a JSON array. The first entity of each key layout is built as a tree
    /// (one tree kept between entities) and written, and what was written between its values
    /// kept as the layout's plan; every later entity of that layout is written from the plan
    /// (see `store::plan`), byte for byte as its tree would write it. An export allocates per
    /// document, not per entity.
    fn export_all(&self, pretty: bool, checked: bool) -> Result<String, ExportError> {
        let [open, separator, close]: [&[u8]; 3] =
            if pretty { [b"[\n  ", b",\n  ", b"\n]"] } else { [b"[", b",", b"]"] };
        let values: &[u8] = if pretty { b", " } else { b"," };
        let depth = usize::from(pretty);
        // JSON takes about twice the bytes of the blobs; a guess that saves most regrowth
        // without a pass over every blob to measure them.
        let mut out = Vec::with_capacity(self.arena().len() * 4 * 2);
        let mut tree = Tree::for_names(self.names(), true);
        let mut plans = Plans::new();
        out.extend_from_slice(open);
        for (i, (id, blob)) in self.iter().enumerate() {
            if i > 0 {
                out.extend_from_slice(separator);
            }
            if !plans.looking() {
                if let (true, Some((key, x))) = (checked, self.export_tree(blob, &mut tree)) {
                    return Err(self.not_finite(Some(id), key, x));
                }
                tree.write(pretty, depth, &mut out);
                continue;
            }
            let layout = plan::layout_words(blob);
            let hash = plans.hash(layout);
            match plans.write(hash, layout, blob, checked, values, &mut out) {
                Some(Ok(())) => continue,
                Some(Err(NotFinite)) => {
                    // The first in the entity's key order, as the tree path names it.
                    let (key, x) = blob
                        .iter()
                        .find_map(|(key, value)| check_finite(value).err().map(|x| (key, x)))
                        .expect("INVARIANT: the plan met a value that is not finite");
                    return Err(self.not_finite(Some(id), key, x));
                }
                None => {}
            }
            if let (true, Some((key, x))) = (checked, self.export_tree(blob, &mut tree)) {
                return Err(self.not_finite(Some(id), key, x));
            }
            plans.write_and_record(&tree, (hash, layout), (pretty, depth), values, &mut out);
        }
        out.extend_from_slice(close);
        Ok(into_string(out))
    }

    /// Every entity as [`export_all`](Store::export_all) writes them, each from its own tree,
    /// with no plan: the reference the plans are tested against.
    #[cfg(test)]
    pub(crate) fn export_all_by_trees(
        &self,
        options: ExportOptions,
    ) -> Result<String, ExportError> {
        if self.is_empty() {
            return Ok("[]".to_owned());
        }
        let pretty = options.style == JsonStyle::Pretty;
        let frame: [&[u8]; 3] =
            if pretty { [b"[\n  ", b",\n  ", b"\n]"] } else { [b"[", b",", b"]"] };
        self.write_all_with(!options.lossy, frame, |tree, out| {
            tree.write(pretty, usize::from(pretty), out);
        })
    }

    /// Every entity in iteration order, each tree as `write` writes it (JSON or SJSON),
    /// framed by `[open, separator, close]`; with `checked`, the first NaN or infinity met
    /// instead, naming its entity. One tree is kept between entities.
    pub(crate) fn write_all_with(
        &self,
        checked: bool,
        [open, separator, close]: [&[u8]; 3],
        mut write: impl FnMut(&Tree<'_>, &mut Vec<u8>),
    ) -> Result<String, ExportError> {
        // JSON takes about twice the bytes of the blobs; a guess that saves most regrowth
        // without a pass over every blob to measure them.
        let mut out = Vec::with_capacity(self.arena().len() * 4 * 2);
        // Every entity: a slot per name costs no more than the entities' keys.
        let mut tree = Tree::for_names(self.names(), true);
        out.extend_from_slice(open);
        for (i, (id, blob)) in self.iter().enumerate() {
            if i > 0 {
                out.extend_from_slice(separator);
            }
            if let (true, Some((key, x))) = (checked, self.export_tree(blob, &mut tree)) {
                return Err(self.not_finite(Some(id), key, x));
            }
            write(&tree, &mut out);
        }
        out.extend_from_slice(close);
        Ok(into_string(out))
    }

    /// Builds in `tree` the blob as a tree of objects and arrays, nested by the names this
    /// store knows for its keys, and returns the first float JSON has no number for (NaN,
    /// infinity), if any. O(the keys and the path nodes they need), with no recursion.
    pub(crate) fn export_tree<'a>(
        &'a self,
        blob: BlobRef<'a>,
        tree: &mut Tree<'a>,
    ) -> Option<(Key, f32)> {
        tree.clear();
        // A node a key, the root, and the objects on the way (grown as met).
        tree.nodes.reserve(blob.len() + 1);
        let mut not_finite = None;
        for (entry, (key, value)) in (0..).zip(blob) {
            // Checked as the tree is built: no second pass over the values.
            if not_finite.is_none() {
                not_finite = check_finite(value).err().map(|x| (key, x));
            }
            let placed = self
                .names()
                .named(key)
                .and_then(|node| tree.place(self.names(), node, names::ROOT, (value, entry)));
            if placed.is_none() {
                // Unnamed, too deep, or its path runs through another key's value: at the
                // top, by hash.
                let name = Cow::Owned(key.to_string());
                tree.push_member(ROOT, name, Some((value, entry)), NO_NODE);
            }
        }
        tree.shape_arrays(self.names());
        not_finite
    }
}

/// Exports with [`ExportOptions`]: the ones the other `export_*` methods wrap.
impl Store {
    /// The entity of `id` as a JSON object, nested again by its keys' names (the inverse of
    /// [`import_json`](Store::import_json)), laid out and checked as `options` say. A key
    /// without a name appears at the top level as `"#1a2b3c4d"`; floats are written as
    /// [`JsonF32`](crate::JsonF32) writes them.
    ///
    /// # Errors
    ///
    /// [`ExportError::Handle`] if `id` names no live entity; [`ExportError::NotFinite`] for a
    /// NaN or infinity (the first in the entity's key order) unless `options` write it as
    /// `null`.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ExportOptions, ImportOptions, JsonStyle, Store};
    ///
    /// let mut store = Store::new();
    /// let id = store.import_json(r#"{"stats": {"hp": 7}}"#, &ImportOptions::strict())?[0];
    /// assert_eq!(store.export_json_with(id, &ExportOptions::new())?, r#"{"stats":{"hp":7}}"#);
    /// let pretty = ExportOptions::new().style(JsonStyle::Pretty);
    /// assert_eq!(
    ///     store.export_json_with(id, &pretty)?,
    ///     "{\n  \"stats\": {\n    \"hp\": 7\n  }\n}"
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn export_json_with(&self, id: Id, options: &ExportOptions) -> Result<String, ExportError> {
        let blob = self.try_get(id).map_err(ExportError::Handle)?;
        self.write_blob(blob, options.style, !options.lossy)
            .map_err(|(key, x)| self.not_finite(Some(id), key, x))
    }

    /// Any blob as JSON, nested by the names this store knows for its keys, as
    /// [`export_json_with`](Store::export_json_with) writes the store's own entities.
    ///
    /// # Errors
    ///
    /// [`ExportError::NotFinite`] for a NaN or infinity, with no entity, unless `options`
    /// write it as `null`.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, ExportOptions, ImportOptions, Store};
    ///
    /// let mut store = Store::new();
    /// store.import_json(r#"{"stats": {"health": 1}}"#, &ImportOptions::strict())?;
    /// let mut sheet = Blob::new();
    /// sheet.set("stats.health", 75);
    /// let json = store.export_blob_json_with(sheet.as_blob_ref(), &ExportOptions::new())?;
    /// assert_eq!(json, r#"{"stats":{"health":75}}"#);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn export_blob_json_with(
        &self,
        blob: BlobRef<'_>,
        options: &ExportOptions,
    ) -> Result<String, ExportError> {
        self.write_blob(blob, options.style, !options.lossy)
            .map_err(|(key, x)| self.not_finite(None, key, x))
    }

    /// Every entity, in iteration order, as a JSON array of objects (`[]` for none): a
    /// document that [`import_json`](Store::import_json) reads back into the same entities
    /// (under new ids).
    ///
    /// # Errors
    ///
    /// [`ExportError::NotFinite`] naming the entity and key of the first NaN or infinity (in
    /// iteration order), unless `options` write it as `null`.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ExportOptions, ImportOptions, Store};
    ///
    /// let mut store = Store::new();
    /// assert_eq!(store.export_all_json_with(&ExportOptions::new())?, "[]");
    /// store.import_json(r#"[{"x": 1}, {"x": 2.5}]"#, &ImportOptions::strict())?;
    /// assert_eq!(store.export_all_json_with(&ExportOptions::new())?, r#"[{"x":1},{"x":2.5}]"#);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn export_all_json_with(&self, options: &ExportOptions) -> Result<String, ExportError> {
        if self.is_empty() {
            return Ok("[]".to_owned());
        }
        self.export_all(options.style == JsonStyle::Pretty, !options.lossy)
    }
}

/// Exports that refuse what JSON cannot hold.
impl Store {
    /// The entity of `id` as JSON, as [`export_json`](Store::export_json) or
    /// [`export_json_pretty`](Store::export_json_pretty) writes it, or why it cannot be
    /// written: a float that JSON has no number for (NaN, infinity) is refused, naming the
    /// entity and key, since any text written for it would not read back as it.
    ///
    /// # Errors
    ///
    /// [`ExportError::Handle`] if `id` names no live entity; [`ExportError::NotFinite`] for a
    /// NaN or infinity, the first in the entity's key order.
    ///
    /// A thin wrapper kept for existing callers: [`export_json_with`](Store::export_json_with) with
    /// `style.into()`.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ExportError, ImportOptions, JsonStyle, Store};
    ///
    /// let mut store = Store::new();
    /// let id = store.import_json(r#"{"hp": 135, "speed": 0.5}"#, &ImportOptions::strict())?[0];
    /// assert_eq!(store.try_export_json(id, JsonStyle::Compact)?, r#"{"hp":135,"speed":0.5}"#);
    ///
    /// store.get_mut(id).unwrap().set("speed", f32::NAN);
    /// let err = store.try_export_json(id, JsonStyle::Pretty).unwrap_err();
    /// assert_eq!(err.to_string(), "entity 0v0t1: speed is NaN, which JSON has no number for");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn try_export_json(&self, id: Id, style: JsonStyle) -> Result<String, ExportError> {
        self.export_json_with(id, &style.into())
    }

    /// Any blob as [`try_export_json`](Store::try_export_json) writes the store's own
    /// entities.
    ///
    /// # Errors
    ///
    /// [`ExportError::NotFinite`] for a NaN or infinity, with no entity.
    ///
    /// A thin wrapper kept for existing callers:
    /// [`export_blob_json_with`](Store::export_blob_json_with) with `style.into()`.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, ExportError, JsonStyle, Store};
    ///
    /// let store = Store::new();
    /// let mut sheet = Blob::new();
    /// sheet.set("position", [1.0, f32::INFINITY]);
    /// let err = store.try_export_blob_json(sheet.as_blob_ref(), JsonStyle::Compact).unwrap_err();
    /// assert!(matches!(err, ExportError::NotFinite { entity: None, value, .. } if value == f32::INFINITY));
    /// assert_eq!(err.to_string(), "#38e2e10c is inf, which JSON has no number for");
    /// ```
    pub fn try_export_blob_json(
        &self,
        blob: BlobRef<'_>,
        style: JsonStyle,
    ) -> Result<String, ExportError> {
        self.export_blob_json_with(blob, &style.into())
    }

    /// Every entity as [`export_all_json`](Store::export_all_json) or
    /// [`export_all_json_pretty`](Store::export_all_json_pretty) writes them, or the first
    /// float (in iteration order) that JSON has no number for.
    ///
    /// # Errors
    ///
    /// [`ExportError::NotFinite`] naming the entity and key.
    ///
    /// A thin wrapper kept for existing callers:
    /// [`export_all_json_with`](Store::export_all_json_with) with `style.into()`.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ImportOptions, JsonStyle, Store};
    ///
    /// let mut store = Store::new();
    /// let ids = store.import_json(r#"[{"x": 1}, {"x": 2.5}]"#, &ImportOptions::strict())?;
    /// assert_eq!(store.try_export_all_json(JsonStyle::Compact)?, r#"[{"x":1},{"x":2.5}]"#);
    /// store.get_mut(ids[1]).unwrap().set("x", f32::NEG_INFINITY);
    /// assert_eq!(
    ///     store.try_export_all_json(JsonStyle::Compact).unwrap_err().to_string(),
    ///     "entity 1v0t1: x is -inf, which JSON has no number for"
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn try_export_all_json(&self, style: JsonStyle) -> Result<String, ExportError> {
        self.export_all_json_with(&style.into())
    }

    /// What the entity of `id` holds at `path`, as JSON (as `jq` would print it): the value of
    /// the key `path`, or the object of every key under it, nested by their names as
    /// [`try_export_json`](Store::try_export_json) nests a whole entity.
    ///
    /// # Errors
    ///
    /// [`ExportError::Handle`] if `id` names no live entity; [`ExportError::NoPath`] if the
    /// entity holds nothing at or under `path`; [`ExportError::NotFinite`] for a NaN or
    /// infinity there.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ImportOptions, JsonStyle, KeyPath, Store};
    ///
    /// let mut store = Store::new();
    /// let text = r#"{"name": "Orc", "stats": {"health": 30, "speed": {"walk": 1.5}}}"#;
    /// let id = store.import_json(text, &ImportOptions::strict())?[0];
    /// let stats = KeyPath::dotted("stats");
    /// assert_eq!(
    ///     store.try_export_json_at(id, &stats, JsonStyle::Compact)?,
    ///     r#"{"health":30,"speed":{"walk":1.5}}"#
    /// );
    /// let walk = KeyPath::dotted("stats.speed.walk");
    /// assert_eq!(store.try_export_json_at(id, &walk, JsonStyle::Compact)?, "1.5");
    /// let err = store.try_export_json_at(id, &KeyPath::dotted("stat"), JsonStyle::Compact);
    /// assert_eq!(err.unwrap_err().to_string(), "entity 0v0t1 holds nothing at stat");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn try_export_json_at(
        &self,
        id: Id,
        path: &KeyPath<'_>,
        style: JsonStyle,
    ) -> Result<String, ExportError> {
        let blob = self.try_get(id).map_err(ExportError::Handle)?;
        let mut tree = Tree::for_names(self.names(), false);
        tree.clear();
        let key = path.key();
        let node = self.names().named(key).filter(|&n| self.names().is_path(n, path));
        if let Some(value) = blob.get(key).filter(|_| node.is_some()) {
            check_finite(value).map_err(|x| self.not_finite(Some(id), key, x))?;
            tree.nodes[ROOT as usize].leaf = Some(value);
        } else {
            // The object at `path`: every named key of the entity under its node, placed as
            // export places them under the entity's own object.
            let top = self.names().find_path(path);
            let mut found = false;
            for (key, value) in blob {
                let Some((top, node)) = top.zip(self.names().named(key)) else { continue };
                if !self.names().is_under(node, top) {
                    continue;
                }
                check_finite(value).map_err(|x| self.not_finite(Some(id), key, x))?;
                found = true;
                if tree.place(self.names(), node, top, (value, NO_NODE)).is_none() {
                    // Its path runs through another key's value: by hash, as export does.
                    let name = Cow::Owned(key.to_string());
                    tree.push_member(ROOT, name, Some((value, NO_NODE)), NO_NODE);
                }
            }
            if !found {
                let path = names::label(path.segments());
                return Err(ExportError::NoPath { entity: Some(id), path });
            }
            tree.shape_arrays(self.names());
        }
        let mut out = Vec::new();
        tree.write(style == JsonStyle::Pretty, 0, &mut out);
        Ok(into_string(out))
    }

    /// The error for a float that JSON and SJSON have no number for, naming its key.
    pub(crate) fn not_finite(&self, entity: Option<Id>, key: Key, value: f32) -> ExportError {
        ExportError::NotFinite { entity, key: self.key_label(key).into_owned(), value }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Store;

    /// Runs `f` on a thread with a 64 KiB stack: enough for a loop, far too little for a
    /// recursion per level of a deep tree.
    fn on_a_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        let thread = std::thread::Builder::new().stack_size(64 * 1024).spawn(f).unwrap();
        thread.join().expect("no stack overflow")
    }

    #[test]
    fn a_name_of_100_000_segments_exports_by_hash_without_recursion() {
        let exported = on_a_small_stack(|| {
            let mut store = Store::new();
            let id = store.insert_empty();
            let mut node = names::ROOT;
            for _ in 0..100_000 {
                node = store.names_mut().intern(node, "a");
            }
            let key = store.names_mut().name(node).unwrap();
            store.get_mut(id).unwrap().set(key, 1.0);
            assert_eq!(store.key_name(key).map(|n| n.len()), Some(2 * 100_000 - 1));
            store.export_json(id).unwrap()
        });
        // Deeper than an import takes: written by hash, so that the export imports back.
        let key = Key::parse(&vec!["a"; 100_000].join("."));
        assert_eq!(exported, format!(r#"{{"{key}":1}}"#));
    }

    #[test]
    fn members_keep_their_order_and_a_path_through_a_value_goes_by_hash() {
        let mut store = Store::new();
        let id = store.insert_empty();
        let mut blob = store.get_mut(id).unwrap();
        for i in (0..40).rev() {
            blob.set(format!("m{i}.x").as_str(), 1.0);
        }
        blob.remove(Key::parse("m30.x"));
        // Keys given as `Key`s skip the check of paths: a value on the way to another.
        blob.set(Key::parse("m30"), true);
        blob.set(Key::parse("m30.x.y"), false);
        store.insert_key_name("m30").unwrap();
        store.insert_key_name("m30.x.y").unwrap();
        let exported = store.export_json(id).unwrap();
        let expected: Vec<String> =
            (0..40).rev().filter(|&i| i != 30).map(|i| format!(r#""m{i}":{{"x":1}}"#)).collect();
        let through = Key::parse("m30.x.y");
        assert_eq!(exported, format!(r#"{{{},"m30":true,"{through}":false}}"#, expected.join(",")));
    }
}
