//! `Store`'s import and exports, and [`export_blob`]. As hecs' `serialize` module builds on
//! `World`'s public API, this builds on the store's (`try_get`, `iter`, `key_label`) and a
//! few crate-internal accessors: `names()` and `arena()` to read; `names_mut()`, `check_room`
//! and `append_packed` for an import, which reads into the store's names and stages its
//! entities aside until the whole document has been read.

use std::borrow::Cow;

use crate::blob::bulk::Builder;
use crate::blob::{Blob, BlobError, BlobRef};
use crate::handle_map::Id;
use crate::key::{Key, KeyPath};
use crate::names;
use crate::store::proto::ABSTRACT_KEY;
use crate::store::{ArenaFull, Store};
use crate::text::TextFormat;

use super::entity::Entity;
use super::error::{ExportError, JsonError, JsonErrorKind};
use super::importer::{Importer, ReadError, Staging};
use super::link::Links;
use super::link::{any_reserved, check_ids, check_reserved};
use super::linked::{add_links, flat_blob, is_linked, write_all_flat, write_flat, write_linked};
use super::options::{ExportOptions, ImportOptions, ImportReport, Imported};
use super::plan::{self, NotFinite, Plans};
use super::read::{read_json, read_with_extremes, sjson_as_written, without_bom};
use super::resolve::{self, Target, Unresolved};
use super::sjson;
use super::write::{self, NO_NODE, ROOT, Tree, check_finite, into_string};

impl Store {
    /// Imports entities from a JSON or SJSON document, as `options` say: a top-level object
    /// is one entity (in SJSON its braces may be left out), a top-level array of objects gives
    /// one entity each. Returns their handles in document order, and what a lenient import
    /// changed. A leading byte order mark is skipped.
    ///
    /// An entity's top-level `$id`, `$prototype`, `$abstract`, `$remove`, `$relative` and
    /// `$proportional` name and link [prototypes](crate::text#prototypes), within the document
    /// (in any order) and to the store's entities; the links are resolved once the document is
    /// read.
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
    /// A [`JsonError`] with the path (a JSON Pointer led by the entity's position in an
    /// array) and line and column: [`JsonErrorKind::Syntax`] for text that is not JSON (or
    /// SJSON), the format's own rules otherwise. A raw-key member holding an object or an
    /// array of other things than numbers is [`JsonErrorKind::RawKeyNotAValue`]; the same raw
    /// key twice [`JsonErrorKind::DuplicatePath`]; a raw key of another path of the entity
    /// [`JsonErrorKind::KeyCollision`]. Prototypes' errors (an unknown name, a `$id` taken, a
    /// cycle, a chain past the limit) are placed at the member at fault.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ExportOptions, ImportOptions, Key, Store, TextFormat};
    ///
    /// let mut store = Store::new();
    /// let ids = store.import(
    ///     r#"[{"name": "Orc", "stats": {"health": 30}}, {"name": "Troll"}]"#,
    ///     &ImportOptions::strict(),
    /// )?.ids;
    /// assert_eq!(store.get(ids[1]).unwrap().get_str("name"), Some("Troll"));
    /// assert_eq!(store.key_name(Key::parse("stats.health")).as_deref(), Some("stats.health"));
    ///
    /// let err = store.import(r#"[{"name": "Imp"}, {"name": null}]"#, &ImportOptions::strict());
    /// assert_eq!(err.unwrap_err().path(), "/1/name");
    /// assert_eq!(store.len(), 2, "nothing of the failed import is kept");
    ///
    /// // SJSON, leniently: what the rules changed is reported.
    /// let sjson = ImportOptions::lenient().format(TextFormat::Sjson);
    /// let imported = store.import("[{gold = 1e39} {gold = 2}]", &sjson)?;
    /// assert_eq!(store.get(imported.ids[0]).unwrap().get_float("gold"), Some(f32::MAX));
    /// assert_eq!((imported.ids.len(), imported.report.rounded_numbers), (2, 1));
    ///
    /// // A key without a name exports by hash, and imports back as that key, unnamed.
    /// let id = store.import(r##"{"#0000002a": 7}"##, &ImportOptions::strict())?.ids[0];
    /// assert_eq!(store.get(id).unwrap().get_float(Key::from_raw(42)), Some(7.0));
    /// assert_eq!(store.key_name(Key::from_raw(42)), None);
    /// assert_eq!(store.export(id, &ExportOptions::json())?, r##"{"#0000002a":7}"##);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn import(&mut self, text: &str, options: &ImportOptions) -> Result<Imported, JsonError> {
        match options.format {
            TextFormat::Json => import_with(self, without_bom(text), *options, true, read_json),
            TextFormat::Sjson => import_with(self, text, *options, false, sjson::read::read_sjson),
        }
    }

    /// The entity of `id` as a document of `options`' format, nested again by its keys'
    /// names: the inverse of [`import`](Store::import). A key without a name appears at the
    /// top level as `"#1a2b3c4d"`. Floats are written as [`JsonF32`](crate::text::JsonF32)
    /// writes them: whole ones without a fraction, others in their shortest form that reads
    /// back as the same `f32`.
    ///
    /// # Errors
    ///
    /// [`ExportError::Handle`] if `id` names no live entity; [`ExportError::NotFinite`] for a
    /// NaN or infinity (the first in the entity's key order), which JSON and SJSON have no
    /// number for, unless `options` write it as `null`
    /// ([`non_finite_as_null`](ExportOptions::non_finite_as_null)).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, ExportOptions, ImportOptions, Key, Store};
    ///
    /// let mut store = Store::new();
    /// let text = r#"{"name":"The One","stats":{"health":100,"mana":0.1},"position":[1,2]}"#;
    /// let id = store.import(text, &ImportOptions::strict())?.ids[0];
    /// assert_eq!(store.export(id, &ExportOptions::json())?, text);
    /// assert_eq!(
    ///     store.export(id, &ExportOptions::json().pretty(true))?,
    ///     "{\n  \"name\": \"The One\",\n  \"stats\": {\n    \"health\": 100,\n    \"mana\": 0.1\n  },\n  \"position\": [1, 2]\n}"
    /// );
    /// assert_eq!(
    ///     store.export(id, &ExportOptions::sjson())?,
    ///     "name = \"The One\"\nstats = {\n    health = 100\n    mana = 0.1\n}\nposition = [1 2]"
    /// );
    ///
    /// let unnamed = store.insert(&[(Key::from_raw(42), true)].into_iter().collect::<Blob>());
    /// assert_eq!(store.export(unnamed, &ExportOptions::json())?, r##"{"#0000002a":true}"##);
    ///
    /// store.get_mut(id).unwrap().set("stats.mana", f32::NAN).unwrap();
    /// let err = store.export(id, &ExportOptions::json()).unwrap_err();
    /// assert_eq!(err.to_string(), "entity 0v0t1: stats.mana is NaN, which JSON has no number for");
    /// let lossy = ExportOptions::json().non_finite_as_null();
    /// assert!(store.export(id, &lossy)?.contains(r#""mana":null"#));
    /// store.remove(id);
    /// assert!(store.export(id, &ExportOptions::json()).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn export(&self, id: Id, options: &ExportOptions) -> Result<String, ExportError> {
        let blob = self.try_get(id).map_err(ExportError::Handle)?;
        check_entity(self, id, blob, options.flatten)?;
        if options.flatten {
            return write_flat(self, id, *options);
        }
        if is_linked(self, Some(id), blob) {
            return write_linked(self, Some(id), blob, *options);
        }
        write_entity(self, blob, *options)
            .map_err(|(key, x)| ExportError::not_finite(self, Some(id), key, x))
    }

    /// Every entity, in iteration order, as one document of `options`' format: an array of
    /// objects (`[]` for none) that [`import`](Store::import) reads back into the same
    /// entities (under new ids). JSON is written from layout plans: the first entity of each
    /// key layout is built as a tree and written, and what was written between its values
    /// kept; every later entity of that layout is written from it, byte for byte as its tree
    /// would write it.
    ///
    /// # Errors
    ///
    /// [`ExportError::NotFinite`] naming the entity and key of the first NaN or infinity (in
    /// iteration order), unless `options` write it as `null`; [`ExportError::ReservedKey`] as
    /// [`export`](Store::export); [`ExportError::DuplicateId`] naming two entities written
    /// that hold one `$id` (set through the API), which an import of the document would
    /// refuse.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ExportOptions, ImportOptions, Store};
    ///
    /// let mut store = Store::new();
    /// assert_eq!(store.export_all(&ExportOptions::json())?, "[]");
    /// let text = r#"[{"name": "Orc"}, {"name": "Troll", "stats": {"health": 3}}]"#;
    /// let ids = store.import(text, &ImportOptions::strict())?.ids;
    /// let exported = store.export_all(&ExportOptions::json())?;
    /// assert_eq!(exported, r#"[{"name":"Orc"},{"name":"Troll","stats":{"health":3}}]"#);
    /// assert_eq!(
    ///     store.export_all(&ExportOptions::sjson())?,
    ///     "[\n    {\n        name = \"Orc\"\n    }\n    {\n        name = \"Troll\"\n        stats = {\n            health = 3\n        }\n    }\n]"
    /// );
    ///
    /// let mut copy = Store::new();
    /// copy.import(&exported, &ImportOptions::strict())?;
    /// assert_eq!(copy.export_all(&ExportOptions::json())?, exported);
    ///
    /// store.get_mut(ids[1]).unwrap().set("stats.health", f32::NEG_INFINITY).unwrap();
    /// assert_eq!(
    ///     store.export_all(&ExportOptions::json()).unwrap_err().to_string(),
    ///     "entity 1v0t1: stats.health is -inf, which JSON has no number for"
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn export_all(&self, options: &ExportOptions) -> Result<String, ExportError> {
        if self.is_empty() {
            return Ok("[]".to_owned());
        }
        let checked = !options.lossy;
        if any_reserved(self) {
            for (id, blob) in self.iter() {
                check_entity(self, id, blob, options.flatten)?;
            }
            // The entities written: a flattened export leaves abstract bases out.
            let written = |&(_, blob): &(Id, BlobRef<'_>)| {
                !options.flatten || blob.get_bool(ABSTRACT_KEY) != Some(true)
            };
            check_ids(self.iter().filter(written))?;
        }
        if options.flatten {
            return write_all_flat(self, *options);
        }
        match options.format {
            TextFormat::Json => write_all_planned(self, options.pretty, checked),
            TextFormat::Sjson => {
                write_all_with(self, checked, [b"[\n", b"", b"]"], sjson::write::write_element)
            }
        }
    }

    /// What the entity of `id` holds at `path` (as `jq` would print it): the value of the key
    /// `path`, or the object of every key under it, nested by their names as
    /// [`export`](Store::export) nests a whole entity. `path` is a dotted path (`stats.speed`)
    /// or a JSON Pointer (`/a.b/c`), as [`KeyPath`] reads them. In SJSON, an object is written
    /// as a document (its members, without braces) and a value as SJSON writes a value.
    ///
    /// # Errors
    ///
    /// [`ExportError::Handle`] if `id` names no live entity; [`ExportError::NoPath`] if the
    /// entity holds nothing at or under `path`; [`ExportError::NotFinite`] for a NaN or
    /// infinity there, unless `options` write it as `null`.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ExportOptions, ImportOptions, Store};
    ///
    /// let mut store = Store::new();
    /// let text = r#"{"name": "Orc", "stats": {"health": 30, "speed": {"walk": 1.5}}}"#;
    /// let id = store.import(text, &ImportOptions::strict())?.ids[0];
    /// let json = ExportOptions::json();
    /// assert_eq!(store.export_at(id, "stats", &json)?, r#"{"health":30,"speed":{"walk":1.5}}"#);
    /// assert_eq!(store.export_at(id, "/stats/speed/walk", &json)?, "1.5");
    /// assert_eq!(
    ///     store.export_at(id, "stats", &ExportOptions::sjson())?,
    ///     "health = 30\nspeed = {\n    walk = 1.5\n}"
    /// );
    /// let err = store.export_at(id, "stat", &json).unwrap_err();
    /// assert_eq!(err.to_string(), "entity 0v0t1 holds nothing at stat");
    ///
    /// // An array read leniently is written back as one.
    /// let lenient = ImportOptions::lenient();
    /// let id = store.import(r#"{"types": [{"slot": 1}, {"slot": 2, "name": null}]}"#, &lenient)?.ids[0];
    /// assert_eq!(store.export_at(id, "types", &json)?, r#"[{"slot":1},{"slot":2,"name":null}]"#);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn export_at(
        &self,
        id: Id,
        path: &str,
        options: &ExportOptions,
    ) -> Result<String, ExportError> {
        let path = KeyPath::pointer(path).unwrap_or_else(|| KeyPath::dotted(path));
        let own = self.try_get(id).map_err(ExportError::Handle)?;
        let flat = if options.flatten { Some(flat_blob(self, id)?) } else { None };
        let blob = flat.as_ref().map_or(own, Blob::as_blob_ref);
        let names = self.names();
        let check = |key, value| match check_finite(value) {
            Err(x) if !options.lossy => Err(ExportError::not_finite(self, Some(id), key, x)),
            _ => Ok(()),
        };
        let mut tree = Tree::for_names(names, false);
        tree.clear();
        let key = path.key();
        let node = names.named(key).filter(|&n| names.is_path(n, &path));
        // A removed inherited key is not held.
        let held = blob.get(key).filter(|&value| node.is_some() && !write::is_tombstone(value));
        if let Some(value) = held {
            check(key, value)?;
            tree.nodes[ROOT as usize].leaf = Some(value);
        } else {
            // The object at `path`: every named key of the entity under its node, placed as
            // export places them under the entity's own object.
            let top = names.find_path(&path);
            let mut found = false;
            for (key, value) in blob {
                let Some((top, node)) = top.zip(names.named(key)) else { continue };
                if write::is_tombstone(value) {
                    continue;
                }
                if !names.is_under(node, top) {
                    continue;
                }
                check(key, value)?;
                found = true;
                if tree.place(names, node, top, (value, NO_NODE)).is_none() {
                    // Its path runs through another key's value: by hash, as export does.
                    let name = Cow::Owned(key.to_string());
                    tree.push_member(ROOT, name, Some((value, NO_NODE)), NO_NODE);
                }
            }
            let Some(top) = top.filter(|_| found) else {
                let path = names::label(path.segments());
                return Err(ExportError::NoPath { entity: Some(id), path });
            };
            // A former array at `path` is written back as one, as the whole entity's export
            // writes it: in JSON (an SJSON document is an object's members).
            if options.format == TextFormat::Json {
                tree.root_is(top);
            }
            tree.shape_arrays(names);
        }
        let mut out = Vec::new();
        match (options.format, tree.leaf(ROOT)) {
            (TextFormat::Json, _) => tree.write(options.pretty, 0, &mut out),
            (TextFormat::Sjson, Some(value)) => write::write_value(&mut out, value, b" "),
            (TextFormat::Sjson, None) => sjson::write::write_entity(&tree, &mut out),
        }
        Ok(into_string(out))
    }
}

/// Any blob, stored or not, as a document of `options`' format, nested by the names `store`
/// knows for its keys, as [`Store::export`] writes the store's own entities.
///
/// # Errors
///
/// [`ExportError::NotFinite`] for a NaN or infinity, with no entity, unless `options` write it
/// as `null`.
///
/// # Examples
///
/// ```
/// use datacomp::{Blob, ExportError, ExportOptions, ImportOptions, Key, Store};
/// use datacomp::text::export_blob;
///
/// let mut store = Store::new();
/// store.import(r#"{"stats": {"health": 1}}"#, &ImportOptions::strict())?;
/// let mut sheet = Blob::new();
/// sheet.set("stats.health", 75.5).unwrap();
/// sheet.set(Key::from_raw(42), true).unwrap();
/// let blob = sheet.as_blob_ref();
/// assert_eq!(
///     export_blob(&store, blob, &ExportOptions::json())?,
///     r##"{"stats":{"health":75.5},"#0000002a":true}"##
/// );
/// assert_eq!(
///     export_blob(&store, blob, &ExportOptions::sjson())?,
///     "stats = {\n    health = 75.5\n}\n\"#0000002a\" = true"
/// );
///
/// sheet.set("position", [1.0, f32::INFINITY]).unwrap();
/// let err = export_blob(&store, sheet.as_blob_ref(), &ExportOptions::json()).unwrap_err();
/// assert!(matches!(err, ExportError::NotFinite { entity: None, value, .. } if value == f32::INFINITY));
/// assert_eq!(err.to_string(), "#38e2e10c is inf, which JSON has no number for");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn export_blob(
    store: &Store,
    blob: BlobRef<'_>,
    options: &ExportOptions,
) -> Result<String, ExportError> {
    check_reserved(store, None, blob)?;
    if is_linked(store, None, blob) {
        return write_linked(store, None, blob, *options);
    }
    write_entity(store, blob, *options)
        .map_err(|(key, x)| ExportError::not_finite(store, None, key, x))
}

/// Refuses the entity `id` (its `blob`, or what it reads if `flatten`) if an import would
/// misread a key of it ([`check_reserved`]).
fn check_entity(
    store: &Store,
    id: Id,
    blob: BlobRef<'_>,
    flatten: bool,
) -> Result<(), ExportError> {
    if flatten && let Some(read) = store.resolved(id) {
        return check_reserved(store, Some(id), read.iter().map(|(k, v, _)| (k, v)));
    }
    check_reserved(store, Some(id), blob)
}

/// Imports the entities of `text` with `read`, which runs a reader over the text and feeds
/// the importer's [`Entity`]: the one store import of JSON and SJSON. With `extremes`, the
/// numbers the reader cannot hand over as written are read again (see
/// [`read_with_extremes`]).
fn import_with(
    store: &mut Store,
    text: &str,
    options: ImportOptions,
    extremes: bool,
    read: impl Fn(&str, Entity<'_>) -> Result<(), ReadError>,
) -> Result<Imported, JsonError> {
    let writes_before = store.tracker().writes();
    let mut stage = |text: &str| {
        let (mut staging, report, saw_zero, links) = stage_once(store, text, options, &read, None)?;
        match resolve::resolve(store, &mut staging, &links) {
            Ok(resolved) => Ok(((staging, report, resolved), saw_zero)),
            Err(unresolved) => Err(place(store, text, options, &read, unresolved)),
        }
    };
    let (staging, report, resolved) = if extremes {
        read_with_extremes(text, stage)?
    } else {
        stage(text).map_err(|e| sjson_as_written(text, e))?.0
    };
    // Paths that named nothing (empty objects) are dropped.
    store.names_mut().commit();
    // Each buffer freed as soon as it is copied, the index grown once: the peak is about the
    // staged entities twice, not more (`[{},{},...]` has 3 bytes of JSON an entity).
    let Staging { arena, spans, blob } = staging;
    drop(blob);
    let ids = store
        .append_packed(arena, &spans)
        .expect("INVARIANT: the staged words were checked to fit before the names were kept");
    // Bases before their instances, each link checked by `resolve` as the store checks it.
    for (entity, target) in resolved.links {
        let prototype = match target {
            Target::Document(base) => ids[base as usize],
            Target::Store(base) => base,
        };
        store
            .set_prototype(ids[entity as usize], Some(prototype))
            .expect("INVARIANT: the links were checked as the store checks them");
    }
    resolve::imported(store, writes_before, &ids);
    Ok(Imported { ids, report })
}

/// Reads `text` with `read` into a staging area, into the store's names (begun, not
/// committed: on an error they are taken back), stopping at `fail_at` if it is given: the
/// one reading of a store import. Gives back the entities, the report, whether a zero was met
/// (see `read_with_extremes`) and the links the document gave.
fn stage_once(
    store: &mut Store,
    text: &str,
    options: ImportOptions,
    read: &impl Fn(&str, Entity<'_>) -> Result<(), ReadError>,
    fail_at: Option<Unresolved>,
) -> Result<(Staging, ImportReport, bool, Links), JsonError> {
    // A second read of the text (see `read_with_extremes`) starts from the names as they
    // were: what the first added is taken back.
    store.names_mut().rollback();
    store.names_mut().begin();
    let mut importer = Importer {
        lenient: options.lenient,
        exact: options.exact,
        names: std::mem::take(store.names_mut()),
        ..Importer::default()
    };
    importer.links.store = true;
    importer.links.fail_at = fail_at;
    let mut staging = Staging::default();
    let mut unused = Builder::default();
    let top = Entity { importer: &mut importer, blob: &mut unused, staging: Some(&mut staging) };
    let read = read(text, top);
    let room = store.check_room(staging.arena.len());
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
        *store.names_mut() = importer.names;
        return Err(error);
    }
    *store.names_mut() = importer.names;
    Ok((staging, importer.report, importer.saw_zero, importer.links))
}

/// The error of links that do not hold (`unresolved`), placed: the text is read again,
/// stopping at the member the error is about, whose line and column the reader gives. The
/// names the reads met are taken back.
fn place(
    store: &mut Store,
    text: &str,
    options: ImportOptions,
    read: &impl Fn(&str, Entity<'_>) -> Result<(), ReadError>,
    unresolved: Unresolved,
) -> JsonError {
    let (entity, _, kind) = unresolved.clone();
    if let Err(error) = stage_once(store, text, options, read, Some(unresolved)) {
        return error;
    }
    // The second read met the member the first did: it cannot get past it. Should it all the
    // same, the error names the entity without a place in the text.
    store.names_mut().rollback();
    JsonError { kind, path: format!("/{entity}"), line: 0, column: 0 }
}

/// One entity as `options` say, or its first NaN or infinity (key order) when they refuse
/// one.
fn write_entity(
    store: &Store,
    blob: BlobRef<'_>,
    options: ExportOptions,
) -> Result<String, (Key, f32)> {
    let checked = !options.lossy;
    match options.format {
        TextFormat::Json => {
            let pretty = options.pretty;
            let version = store.names().version();
            store
                .export_plans()
                .with(version, pretty, |plans| write_planned(store, blob, plans, pretty, checked))
                .unwrap_or_else(|| {
                    write_blob_with(store, blob, checked, |tree, out| tree.write(pretty, 0, out))
                })
        }
        TextFormat::Sjson => write_blob_with(store, blob, checked, sjson::write::write_entity),
    }
}

/// One entity as JSON from the plan of its layout, made from its tree (and kept in `plans`)
/// if there is none yet: byte for byte what its tree writes. With `checked`, the first NaN or
/// infinity (key order) instead.
fn write_planned(
    store: &Store,
    blob: BlobRef<'_>,
    plans: &mut Plans,
    pretty: bool,
    checked: bool,
) -> Result<String, (Key, f32)> {
    if !plans.looking() {
        return write_blob_with(store, blob, checked, |tree, out| tree.write(pretty, 0, out));
    }
    let values: &[u8] = if pretty { b", " } else { b"," };
    let layout = plan::layout_words(blob);
    let hash = plans.hash(layout);
    // JSON takes about twice the bytes of the blob: one allocation, not a doubling series.
    let mut out = Vec::with_capacity(blob.byte_len() * 2);
    match plans.write(hash, layout, blob, checked, values, &mut out) {
        Some(Ok(())) => return Ok(into_string(out)),
        Some(Err(NotFinite)) => return Err(first_not_finite(blob)),
        None => {}
    }
    let mut tree = Tree::for_names(store.names(), false);
    if let (true, Some(bad)) = (checked, tree.build(store.names(), blob)) {
        return Err(bad);
    }
    if plans.met_before(hash) {
        plans.write_and_record(&tree, (hash, layout), (pretty, 0), values, &mut out);
    } else {
        // A layout met once makes no plan: a one-off export of a large entity pays for none.
        tree.write(pretty, 0, &mut out);
    }
    Ok(into_string(out))
}

/// The first NaN or infinity of `blob` in key order, as the tree path names it: for a plan
/// that met one.
fn first_not_finite(blob: BlobRef<'_>) -> (Key, f32) {
    blob.iter()
        .find_map(|(key, value)| check_finite(value).err().map(|x| (key, x)))
        .expect("INVARIANT: the plan met a value that is not finite")
}

/// The blob's tree as `write` writes it (JSON or SJSON); with `checked`, the first NaN or
/// infinity met instead, before anything is written.
fn write_blob_with(
    store: &Store,
    blob: BlobRef<'_>,
    checked: bool,
    write: impl FnOnce(&Tree<'_>, &mut Vec<u8>),
) -> Result<String, (Key, f32)> {
    let mut tree = Tree::for_names(store.names(), false);
    if let (true, Some(bad)) = (checked, tree.build(store.names(), blob)) {
        return Err(bad);
    }
    // JSON takes about twice the bytes of the blob: one allocation, not a doubling series.
    let mut out = Vec::with_capacity(blob.byte_len() * 2);
    write(&tree, &mut out);
    Ok(into_string(out))
}

/// Every entity as a JSON array. The first entity of each key layout is built as a tree (one
/// tree kept between entities) and written, and what was written between its values kept as
/// the layout's plan; every later entity of that layout is written from the plan (see
/// `plan.rs`), byte for byte as its tree would write it. An export allocates per document,
/// not per entity.
fn write_all_planned(store: &Store, pretty: bool, checked: bool) -> Result<String, ExportError> {
    let [open, separator, close]: [&[u8]; 3] =
        if pretty { [b"[\n  ", b",\n  ", b"\n]"] } else { [b"[", b",", b"]"] };
    let values: &[u8] = if pretty { b", " } else { b"," };
    let depth = usize::from(pretty);
    // JSON takes about twice the bytes of the blobs; a guess that saves most regrowth without
    // a pass over every blob to measure them.
    let mut out = Vec::with_capacity(store.arena().len() * 4 * 2);
    let mut tree = Tree::for_names(store.names(), true);
    let mut plans = Plans::new();
    out.extend_from_slice(open);
    for (i, (id, blob)) in store.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(separator);
        }
        if is_linked(store, Some(id), blob) {
            // `$prototype` and `$remove` besides its keys: from its tree, with no plan.
            if let (true, Some((key, x))) = (checked, tree.build(store.names(), blob)) {
                return Err(ExportError::not_finite(store, Some(id), key, x));
            }
            add_links(&mut tree, store, Some(id), blob)?;
            tree.write(pretty, depth, &mut out);
            continue;
        }
        if !plans.looking() {
            if let (true, Some((key, x))) = (checked, tree.build(store.names(), blob)) {
                return Err(ExportError::not_finite(store, Some(id), key, x));
            }
            tree.write(pretty, depth, &mut out);
            continue;
        }
        let layout = plan::layout_words(blob);
        let hash = plans.hash(layout);
        match plans.write(hash, layout, blob, checked, values, &mut out) {
            Some(Ok(())) => continue,
            Some(Err(NotFinite)) => {
                let (key, x) = first_not_finite(blob);
                return Err(ExportError::not_finite(store, Some(id), key, x));
            }
            None => {}
        }
        if let (true, Some((key, x))) = (checked, tree.build(store.names(), blob)) {
            return Err(ExportError::not_finite(store, Some(id), key, x));
        }
        plans.write_and_record(&tree, (hash, layout), (pretty, depth), values, &mut out);
    }
    out.extend_from_slice(close);
    Ok(into_string(out))
}

/// Every entity in iteration order, each tree as `write` writes it (JSON or SJSON), framed by
/// `[open, separator, close]`; with `checked`, the first NaN or infinity met instead, naming
/// its entity. One tree is kept between entities.
fn write_all_with(
    store: &Store,
    checked: bool,
    [open, separator, close]: [&[u8]; 3],
    mut write: impl FnMut(&Tree<'_>, &mut Vec<u8>),
) -> Result<String, ExportError> {
    // JSON takes about twice the bytes of the blobs; a guess that saves most regrowth without
    // a pass over every blob to measure them.
    let mut out = Vec::with_capacity(store.arena().len() * 4 * 2);
    // Every entity: a slot per name costs no more than the entities' keys.
    let mut tree = Tree::for_names(store.names(), true);
    out.extend_from_slice(open);
    for (i, (id, blob)) in store.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(separator);
        }
        if let (true, Some((key, x))) = (checked, tree.build(store.names(), blob)) {
            return Err(ExportError::not_finite(store, Some(id), key, x));
        }
        add_links(&mut tree, store, Some(id), blob)?;
        write(&tree, &mut out);
    }
    out.extend_from_slice(close);
    Ok(into_string(out))
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
    fn a_name_of_100_000_segments_exports_by_hash_without_recursion() {
        let exported = on_a_small_stack(|| {
            let mut store = Store::new();
            let id = store.insert_empty();
            let mut node = names::ROOT;
            for _ in 0..100_000 {
                node = store.names_mut().intern(node, "a");
            }
            let key = store.names_mut().name(node).unwrap();
            store.get_mut(id).unwrap().set(key, 1.0).unwrap();
            assert_eq!(store.key_name(key).map(|n| n.len()), Some(2 * 100_000 - 1));
            store.export(id, &ExportOptions::json()).unwrap()
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
            blob.set(format!("m{i}.x").as_str(), 1.0).unwrap();
        }
        blob.remove(Key::parse("m30.x"));
        // Keys given as `Key`s skip the check of paths: a value on the way to another.
        blob.set(Key::parse("m30"), true).unwrap();
        blob.set(Key::parse("m30.x.y"), false).unwrap();
        store.insert_key_name("m30").unwrap();
        store.insert_key_name("m30.x.y").unwrap();
        let exported = store.export(id, &ExportOptions::json()).unwrap();
        let expected: Vec<String> =
            (0..40).rev().filter(|&i| i != 30).map(|i| format!(r#""m{i}":{{"x":1}}"#)).collect();
        let through = Key::parse("m30.x.y");
        assert_eq!(exported, format!(r#"{{{},"m30":true,"{through}":false}}"#, expected.join(",")));
    }

    #[test]
    fn a_path_exports_as_sjson_as_an_object_or_a_value() {
        let mut store = Store::new();
        let text = r#"{"name": "Orc", "stats": {"hp": 30, "run": [3, 4.5], "x.y": true}}"#;
        let id = store.import(text, &ImportOptions::strict()).unwrap().ids[0];
        let sjson = ExportOptions::sjson();
        assert_eq!(store.export_at(id, "name", &sjson).unwrap(), r#""Orc""#);
        assert_eq!(store.export_at(id, "stats.run", &sjson).unwrap(), "[3 4.5]");
        assert_eq!(store.export_at(id, "/stats/x.y", &sjson).unwrap(), "true");
        assert_eq!(
            store.export_at(id, "stats", &sjson).unwrap(),
            "hp = 30\nrun = [3 4.5]\n\"x.y\" = true"
        );
        // Lossy or not, as the whole entity's export.
        store.get_mut(id).unwrap().set("stats.hp", f32::NAN).unwrap();
        assert!(store.export_at(id, "stats", &sjson).is_err());
        let lossy = sjson.non_finite_as_null();
        assert_eq!(store.export_at(id, "stats.hp", &lossy).unwrap(), "null");
        let json = ExportOptions::json().non_finite_as_null();
        assert_eq!(store.export_at(id, "stats.hp", &json).unwrap(), "null");
    }
}
