//! JSON fixtures: streaming import of the restricted format into blobs.
//!
//! The format is the `DataComponent`'s: values are booleans, numbers (stored as `f32`), strings,
//! objects (flattened into dotted keys: `{"stats": {"health": 100}}` is `stats.health`) and
//! arrays of numbers. The importer is a serde visitor that writes each value straight into the
//! blob as `serde_json` reads it: no `serde_json::Value` tree is built.

use std::borrow::Cow;
use std::fmt::{self, Write as _};

use fxhash::FxHashMap;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::blob::bulk::Builder;
use crate::names::{self, KeyNames};
use crate::number::{self, Fit, JsonF32, JsonF64};
use crate::store::Span;
use crate::text::Shortened;
use crate::{
    Blob, BlobError, BlobRef, HandleError, Id, Key, KeyPath, MAX_PATH_SEGMENTS, Store, Value,
};

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
    /// A number that the nearest `f32` changes beyond its rounding: a whole number it does not
    /// hold (and that is not written as that `f32` is written), or a nonzero number it holds
    /// only as zero. A fraction rounded to `f32`'s precision (`0.1`) is not refused.
    NotHeld {
        /// The number as written (`16777217`, `1e-50`).
        number: String,
        /// What it would be stored as (`16777216`, `0`).
        becomes: f32,
    },
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
            JsonErrorKind::NotHeld { number, becomes } => {
                let number = Shortened(number);
                write!(f, "{number} would be stored as {}: f32 cannot hold it", JsonF32(*becomes))
            }
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

/// How an export lays out its JSON: on one line, or indented two spaces a level as designers
/// write fixtures (float arrays on one line).
///
/// # Examples
///
/// ```
/// use datacomp::{ImportOptions, JsonStyle, Store};
///
/// let mut store = Store::new();
/// let id = store.import_json(r#"{"stats": {"hp": 7}}"#, &ImportOptions::strict())?[0];
/// assert_eq!(store.try_export_json(id, JsonStyle::Compact)?, r#"{"stats":{"hp":7}}"#);
/// assert_eq!(
///     store.try_export_json(id, JsonStyle::Pretty)?,
///     "{\n  \"stats\": {\n    \"hp\": 7\n  }\n}"
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum JsonStyle {
    /// One line, no spaces.
    #[default]
    Compact,
    /// One member a line, indented two spaces a level.
    Pretty,
}

/// Why an entity cannot be written as JSON.
///
/// # Examples
///
/// ```
/// use datacomp::{ExportError, JsonStyle, Store};
///
/// let mut store = Store::new();
/// let id = store.insert_entries([("stats.luck", f32::NAN)]);
/// let err = store.try_export_json(id, JsonStyle::Compact).unwrap_err();
/// assert!(matches!(&err, ExportError::NotFinite { key, .. } if key == "stats.luck"));
/// store.remove(id);
/// assert!(matches!(store.try_export_json(id, JsonStyle::Compact), Err(ExportError::Handle(_))));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ExportError {
    /// The handle names no live entity.
    Handle(HandleError),
    /// A float that JSON has no number for (NaN, infinity): any text written for it would not
    /// read back as it.
    NotFinite {
        /// The entity, when the export is of a store's entity.
        entity: Option<Id>,
        /// The key, as [`Store::key_label`] shows it.
        key: String,
        /// The float.
        value: f32,
    },
    /// The entity holds nothing at or under the path.
    NoPath {
        /// The entity.
        entity: Option<Id>,
        /// The path, as [`Store::key_label`] would show its key.
        path: String,
    },
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let entity = |id: &Option<Id>| id.map(|id| format!("entity {id}: ")).unwrap_or_default();
        match self {
            ExportError::Handle(e) => e.fmt(f),
            ExportError::NotFinite { entity: id, key, value } => {
                let (id, key) = (entity(id), Shortened(key));
                write!(f, "{id}{key} is {}, which JSON has no number for", JsonF32(*value))
            }
            ExportError::NoPath { entity: Some(id), path } => {
                write!(f, "entity {id} holds nothing at {}", Shortened(path))
            }
            ExportError::NoPath { entity: None, path } => {
                write!(f, "nothing at {}", Shortened(path))
            }
        }
    }
}

impl std::error::Error for ExportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ExportError::Handle(e) => Some(e),
            _ => None,
        }
    }
}

impl From<HandleError> for ExportError {
    fn from(e: HandleError) -> ExportError {
        ExportError::Handle(e)
    }
}

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
    /// The restricted format only: `null`, arrays of anything but numbers, numbers past `f32`
    /// and numbers `f32` cannot hold within its rounding ([`JsonErrorKind::NotHeld`]: a whole
    /// number beyond 2^24 that it does not hold, a nonzero number that would be zero) are
    /// errors.
    #[must_use]
    pub const fn strict() -> ImportOptions {
        ImportOptions { lenient: false }
    }

    /// For existing data: an array holding anything but numbers becomes an object keyed by
    /// decimal index (`armor_class.0.value`), `null` is skipped, a number past `f32` (even
    /// past `f64`, as `1e400`) is stored as the largest `f32` of its sign, and a number `f32`
    /// cannot hold is stored as the nearest `f32` (`16777217` as `16777216`, `1e-50` as `0`).
    /// [`ImportReport`] counts each change.
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
///
/// # Examples
///
/// ```
/// use datacomp::{Blob, ImportOptions};
///
/// let text = r#"{"gold": [1, 16777217], "dust": 1e-50, "stars": 1e400}"#;
/// let (sheet, report) = Blob::from_json_with(text, &ImportOptions::lenient())?;
/// assert_eq!(sheet.get_floats("gold"), Some(&[1.0, 16_777_216.0][..]));
/// assert_eq!((sheet.get_float("dust"), sheet.get_float("stars")), (Some(0.0), Some(f32::MAX)));
/// assert_eq!(report.rounded_numbers, 3);
/// assert_eq!(report.first_rounded.as_deref(), Some("/gold/1"));
/// # Ok::<(), datacomp::JsonError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImportReport {
    /// Arrays of other things than numbers, turned into objects keyed by index.
    pub converted_arrays: usize,
    /// `null` values skipped.
    pub skipped_nulls: usize,
    /// Numbers stored as other than they were written, beyond `f32`'s rounding of a fraction:
    /// past `f32` (stored as the largest `f32` of their sign), whole numbers `f32` does not
    /// hold, and nonzero numbers too small for it (stored as the nearest `f32`, zero).
    pub rounded_numbers: usize,
    /// The JSON path (a JSON Pointer, as [`JsonError::path`]) of the first such number.
    pub first_rounded: Option<String>,
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
        read_with_extremes(text, options.lenient, |text| {
            blob_from(*options, |entity| read_json(text, entity))
        })
    }
}

/// Runs `serde_json` over `text`, feeding the importer's `entity`.
fn read_json(text: &str, entity: Entity<'_>) -> Result<(), ReadError> {
    let mut reader = serde_json::Deserializer::from_str(text);
    entity.deserialize(&mut reader).and_then(|()| reader.end()).map_err(|e| {
        let message = e.to_string();
        let message = message.rsplit_once(" at line ").map_or(&*message, |(m, _)| m);
        ReadError { message: message.to_owned(), line: e.line(), column: e.column() }
    })
}

/// Why a reader of text (`serde_json`, or the SJSON reader) stopped, and where: its own
/// description, which the importer's reason replaces when it has one.
pub(crate) struct ReadError {
    pub(crate) message: String,
    /// The line and column (from 1) where reading stopped.
    pub(crate) line: usize,
    pub(crate) column: usize,
}

/// Imports one entity with `read`, which runs a reader over a text and feeds
/// the importer's [`Entity`]: the one import of JSON and SJSON. Also says whether the
/// importer met a zero (see [`read_with_extremes`]).
pub(crate) fn blob_from(
    options: ImportOptions,
    read: impl FnOnce(Entity<'_>) -> Result<(), ReadError>,
) -> Result<((Blob, ImportReport), bool), JsonError> {
    let mut importer = Importer { lenient: options.lenient, ..Importer::default() };
    // Entries are gathered apart, then laid out once: O(1) a value, not a move of the header
    // per new key.
    let mut blob = Builder::default();
    match read(Entity { importer: &mut importer, blob: &mut blob, staging: None }) {
        Ok(()) => Ok(((blob.to_blob(), importer.report), importer.saw_zero)),
        Err(e) => Err(importer.error(&e)),
    }
}

/// `serde_json`'s message for a number past `f64`'s range.
const PAST_F64: &str = "number out of range";

/// Reads `text` with `read` (which returns what it read and whether it met an `f64` zero).
/// `serde_json` cannot hand some numbers over as written: one past `f64`'s range is an error,
/// and a nonzero one past its precision (`1e-400`) reads as zero. When the first read meets
/// either (a lenient one the first, any the second), the literals are found in one pass over
/// the text and the text is read again with a stand-in for each that keeps its fit (past
/// `f32`, or nonzero but zero as an `f32`) and its place: so the rules for numbers apply to
/// them too, with the right path, line and column. At most two reads, so O(n) still.
fn read_with_extremes<T>(
    text: &str,
    lenient: bool,
    mut read: impl FnMut(&str) -> Result<(T, bool), JsonError>,
) -> Result<T, JsonError> {
    let first = read(text);
    let past_f64 = match &first {
        Ok((_, false)) => return first.map(|(value, _)| value),
        Ok((_, true)) => false,
        Err(e) if lenient && e.kind == JsonErrorKind::Syntax(PAST_F64.to_owned()) => true,
        Err(_) => return first.map(|(value, _)| value),
    };
    let found = number::extremes(text, true);
    if !found.iter().any(|e| e.huge == past_f64) {
        return first.map(|(value, _)| value);
    }
    let stand_ins = number::replace_extremes(text, &found);
    read(&stand_ins).map(|(value, _)| value).map_err(|mut e| {
        // A refused stand-in is named by the literal it stands in for, and placed at its last
        // byte, as serde_json places a number.
        if let JsonErrorKind::NotHeld { number, .. } = &mut e.kind
            && let Some(at) = byte_offset(text, e.line, e.column)
            && let Some(x) = found.iter().find(|x| (x.start..x.end).contains(&at))
        {
            text[x.start..x.end].clone_into(number);
            e.column += x.end - 1 - at;
        }
        e
    })
}

/// The byte of `text` at `serde_json`'s `line` and `column` (both from 1; a column counts
/// bytes), if there is one.
fn byte_offset(text: &str, line: usize, column: usize) -> Option<usize> {
    let start = if line <= 1 { 0 } else { text.match_indices('\n').nth(line - 2)?.0 + 1 };
    let at = start + column.checked_sub(1)?;
    (at < text.len()).then_some(at)
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
    /// assert_eq!(store.key_name(Key::parse("stats.health")).as_deref(), Some("stats.health"));
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
        self.import_with(text, *options, true, read_json)
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
            self.names.rollback();
            self.names.begin();
            let mut importer = Importer {
                lenient: options.lenient,
                names: std::mem::take(&mut self.names),
                ..Importer::default()
            };
            let mut staging = Staging::default();
            let mut unused = Builder::default();
            let top =
                Entity { importer: &mut importer, blob: &mut unused, staging: Some(&mut staging) };
            let read = read(text, top);
            let base = self.arena.len();
            let fits = |()| {
                if u32::try_from(base + staging.arena.len()).is_ok() {
                    return Ok(());
                }
                let required = 4 * (base + staging.arena.len()) as u64;
                let kind = JsonErrorKind::Blob(BlobError::TooLarge { required });
                Err(JsonError { kind, path: String::new(), line: text.lines().count(), column: 1 })
            };
            let read = read.map_err(|e| importer.error(&e)).and_then(fits);
            importer.release_claims();
            if let Err(error) = read {
                // Nothing of a failed import stays: not even the names it met.
                importer.names.rollback();
                self.names = importer.names;
                return Err(error);
            }
            self.names = importer.names;
            Ok(((staging, importer.report), importer.saw_zero))
        };
        let (staging, report) = if extremes {
            read_with_extremes(text, options.lenient, stage)?
        } else {
            stage(text)?.0
        };
        // Paths that named nothing (empty objects, skipped nulls) are dropped.
        self.names.commit();
        // Each buffer freed as soon as it is copied, the index grown once: the peak is about
        // the staged entities twice, not more (`[{},{},...]` has 3 bytes of JSON an entity).
        let Staging { arena, spans, blob } = staging;
        drop(blob);
        let base = self.arena.len();
        self.arena.reserve_exact(arena.len());
        self.arena.extend_from_slice(&arena);
        drop(arena);
        self.index.reserve(spans.len());
        let mut offset = base;
        let ids = spans
            .iter()
            .map(|&words| {
                let span = Span::new(offset, words as usize);
                offset += words as usize;
                self.insert_span(span)
            })
            .collect();
        Ok((ids, report))
    }
}

impl Store {
    /// The entity of `id` as a JSON object, nested again by its keys' names: the inverse of
    /// [`import_json`](Store::import_json). A key without a name appears at the top level as
    /// `"#1a2b3c4d"`. Floats are written as [`JsonF32`] writes them: whole ones without a
    /// fraction, others in their shortest form that reads back as the same `f32`.
    ///
    /// A NaN or infinity, which JSON has no number for, is written as `null`, which does not
    /// read back (strict import refuses it, lenient drops it):
    /// [`try_export_json`](Store::try_export_json) refuses such an entity instead, naming the
    /// key.
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
        Some(self.export_blob_json(self.get(id)?))
    }

    /// Any blob as a JSON object, nested by the names this store knows for its keys, as
    /// [`export_json`](Store::export_json) writes the store's own entities (a NaN or infinity
    /// as `null`: [`try_export_blob_json`](Store::try_export_blob_json) refuses it).
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
        self.write_blob(blob, JsonStyle::Compact, false).unwrap_or_default()
    }

    /// The entity of `id` as [`export_json`](Store::export_json) writes it, indented two
    /// spaces a level, as designers write fixtures (a NaN or infinity as `null`:
    /// [`try_export_json`](Store::try_export_json) refuses it).
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
    ///     "{\n  \"stats\": {\n    \"health\": 75\n  }\n}"
    /// );
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    #[must_use]
    pub fn export_blob_json_pretty(&self, blob: BlobRef<'_>) -> String {
        self.write_blob(blob, JsonStyle::Pretty, false).unwrap_or_default()
    }

    /// The blob as JSON in `style`; with `checked`, the first NaN or infinity met instead.
    fn write_blob(
        &self,
        blob: BlobRef<'_>,
        style: JsonStyle,
        checked: bool,
    ) -> Result<String, (Key, f32)> {
        let mut tree = Tree::for_names(&self.names, false);
        if let (true, Some(bad)) = (checked, self.export_tree(blob, &mut tree)) {
            return Err(bad);
        }
        let mut out = Vec::new();
        tree.write(style == JsonStyle::Pretty, 0, &mut out);
        Ok(into_string(out))
    }

    /// Every entity, in iteration order, as a JSON array of objects: a document that
    /// [`import_json`](Store::import_json) reads back into the same entities (under new ids),
    /// unless one holds a NaN or infinity, written as `null`
    /// ([`try_export_all_json`](Store::try_export_all_json) refuses it).
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
        self.export_all(false, false).unwrap_or_default()
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
        self.export_all(true, false).unwrap_or_default()
    }

    /// Every entity as a JSON array, one entity's tree at a time, in one tree kept between
    /// entities: an export allocates per document, not per entity.
    fn export_all(&self, pretty: bool, checked: bool) -> Result<String, ExportError> {
        let (open, separator, close): (&[u8], &[u8], &[u8]) =
            if pretty { (b"[\n  ", b",\n  ", b"\n]") } else { (b"[", b",", b"]") };
        // JSON takes about twice the bytes of the blobs; a guess that saves most regrowth
        // without a pass over every blob to measure them.
        let mut out = Vec::with_capacity(self.arena.len() * 4 * 2);
        // Every entity: a slot per name costs no more than the entities' keys.
        let mut tree = Tree::for_names(&self.names, true);
        out.extend_from_slice(open);
        for (i, (id, blob)) in self.iter().enumerate() {
            if i > 0 {
                out.extend_from_slice(separator);
            }
            if let (true, Some((key, x))) = (checked, self.export_tree(blob, &mut tree)) {
                return Err(self.not_finite(Some(id), key, x));
            }
            tree.write(pretty, usize::from(pretty), &mut out);
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
        let mut not_finite = None;
        for (key, value) in blob {
            // Checked as the tree is built: no second pass over the values.
            if not_finite.is_none() {
                not_finite = check_finite(value).err().map(|x| (key, x));
            }
            let placed = self
                .names
                .named(key)
                .is_some_and(|node| tree.place(&self.names, node, names::ROOT, value));
            if !placed {
                // Unnamed, too deep, or its path runs through another key's value: at the
                // top, by hash.
                tree.push_member(ROOT, Cow::Owned(key.to_string()), Some(value), NO_NODE);
            }
        }
        tree.shape_arrays(&self.names);
        not_finite
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
        let blob = self.try_get(id).map_err(ExportError::Handle)?;
        self.write_blob(blob, style, true).map_err(|(key, x)| self.not_finite(Some(id), key, x))
    }

    /// Any blob as [`try_export_json`](Store::try_export_json) writes the store's own
    /// entities.
    ///
    /// # Errors
    ///
    /// [`ExportError::NotFinite`] for a NaN or infinity, with no entity.
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
        self.write_blob(blob, style, true).map_err(|(key, x)| self.not_finite(None, key, x))
    }

    /// Every entity as [`export_all_json`](Store::export_all_json) or
    /// [`export_all_json_pretty`](Store::export_all_json_pretty) writes them, or the first
    /// float (in iteration order) that JSON has no number for.
    ///
    /// # Errors
    ///
    /// [`ExportError::NotFinite`] naming the entity and key.
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
        if self.is_empty() {
            return Ok("[]".to_owned());
        }
        self.export_all(style == JsonStyle::Pretty, true)
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
        let mut tree = Tree::for_names(&self.names, false);
        tree.clear();
        let key = path.key();
        let node = self.names.named(key).filter(|&n| self.names.is_path(n, path));
        if let Some(value) = blob.get(key).filter(|_| node.is_some()) {
            check_finite(value).map_err(|x| self.not_finite(Some(id), key, x))?;
            tree.nodes[ROOT as usize].leaf = Some(value);
        } else {
            // The object at `path`: every named key of the entity under its node, placed as
            // export places them under the entity's own object.
            let top = self.names.find_path(path);
            let mut found = false;
            for (key, value) in blob {
                let Some((top, node)) = top.zip(self.names.named(key)) else { continue };
                if !self.names.is_under(node, top) {
                    continue;
                }
                check_finite(value).map_err(|x| self.not_finite(Some(id), key, x))?;
                found = true;
                if !tree.place(&self.names, node, top, value) {
                    // Its path runs through another key's value: by hash, as export does.
                    tree.push_member(ROOT, Cow::Owned(key.to_string()), Some(value), NO_NODE);
                }
            }
            if !found {
                let path = names::label(path.segments());
                return Err(ExportError::NoPath { entity: Some(id), path });
            }
            tree.shape_arrays(&self.names);
        }
        let mut out = Vec::new();
        tree.write(style == JsonStyle::Pretty, 0, &mut out);
        Ok(into_string(out))
    }

    fn not_finite(&self, entity: Option<Id>, key: Key, value: f32) -> ExportError {
        ExportError::NotFinite { entity, key: self.key_label(key).into_owned(), value }
    }
}

/// The first float of `value` that JSON has no number for.
fn check_finite(value: Value<'_>) -> Result<(), f32> {
    match value {
        Value::Float(x) if !x.is_finite() => Err(x),
        Value::Floats(xs) => xs.iter().find(|x| !x.is_finite()).map_or(Ok(()), |&x| Err(x)),
        _ => Ok(()),
    }
}

/// An exported entity, as one flat list of nodes: node [`ROOT`] is the entity's object, and
/// each object's members are linked in the order they were met. Cleared, not freed, between
/// entities. Nothing here recurses: a path is placed by a loop and the tree is written with an
/// explicit stack, so a name of any depth costs heap, not stack.
pub(crate) struct Tree<'a> {
    nodes: Vec<TreeNode<'a>>,
    /// The node of each name-tree node placed so far in this entity.
    placed: Placed,
    /// Scratch: name-tree nodes on the way to a key's node, and an array's members by index.
    chain: Vec<u32>,
}

/// The tree node of each name-tree node placed in the entity being exported: a table with a
/// slot per name-tree node, stamped with the entity it is valid for (no clearing between
/// entities), when the names are few or every entity is exported; else a hash map, so that
/// exporting one entity of a store of a million names does not allocate a slot for each.
enum Placed {
    Dense { stamp: u32, slots: Vec<(u32, u32)> },
    Sparse(FxHashMap<u32, u32>),
}

impl Default for Placed {
    fn default() -> Placed {
        Placed::Sparse(FxHashMap::default())
    }
}

/// Names up to this many nodes always get the dense table.
const DENSE_NODES: usize = 1 << 16;

impl Placed {
    /// A table for `nodes` name-tree nodes; dense when `dense` or the names are few.
    fn new(nodes: usize, dense: bool) -> Placed {
        if dense || nodes <= DENSE_NODES {
            Placed::Dense { stamp: 1, slots: vec![(0, 0); nodes + 1] }
        } else {
            Placed::Sparse(FxHashMap::default())
        }
    }

    /// Forgets every node placed.
    fn clear(&mut self) {
        match self {
            Placed::Dense { stamp, slots } => {
                *stamp = stamp.wrapping_add(1);
                if *stamp == 0 {
                    slots.fill((0, 0));
                    *stamp = 1;
                }
            }
            // Cleared in time to its size: kept when the entities are alike, replaced after
            // a large one, so that many small entities after it do not each clear a large
            // table.
            Placed::Sparse(map) if map.capacity() > 4 * map.len() + 64 => {
                *map = FxHashMap::default();
            }
            Placed::Sparse(map) => map.clear(),
        }
    }

    fn get(&self, node: u32) -> Option<u32> {
        match self {
            Placed::Dense { stamp, slots } => {
                slots.get(node as usize).filter(|s| s.0 == *stamp).map(|s| s.1)
            }
            Placed::Sparse(map) => map.get(&node).copied(),
        }
    }

    fn insert(&mut self, node: u32, placed: u32) {
        match self {
            Placed::Dense { stamp, slots } => slots[node as usize] = (*stamp, placed),
            Placed::Sparse(map) => {
                map.insert(node, placed);
            }
        }
    }
}

/// A member of an object or array: a value, or an object (an array) whose members start at
/// `first`.
struct TreeNode<'a> {
    name: Cow<'a, str>,
    leaf: Option<Value<'a>>,
    /// The first and last members of an object; [`NO_NODE`] when it has none.
    first: u32,
    last: u32,
    /// The next member of the same object; [`NO_NODE`] after the last.
    next: u32,
    /// The name-tree node this member is, or [`NO_NODE`] (the root, a key shown by hash).
    source: u32,
    /// Written as an array: its members are its indices `0..`, linked in that order.
    array: bool,
    /// Segments from the entity's object: a name deeper than an import takes (only an old
    /// save holds one) is written by hash, so that the export always imports back.
    depth: u32,
}

/// The entity's own object in a [`Tree`].
pub(crate) const ROOT: u32 = 0;
/// No node: the end of a list of members.
const NO_NODE: u32 = u32::MAX;

/// The bytes an export wrote: JSON from `serde_json` and ASCII punctuation, so always UTF-8.
fn into_string(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_default()
}

/// Whether `segment` is an array index as JSON documents number elements: `0`, or digits
/// without a leading zero, below `len`.
fn index_below(segment: &str, len: usize) -> Option<usize> {
    let canonical = segment == "0"
        || (!segment.is_empty()
            && !segment.starts_with('0')
            && segment.bytes().all(|b| b.is_ascii_digit()));
    segment.parse().ok().filter(|&i| canonical && i < len)
}

impl<'a> Tree<'a> {
    /// The first member of `object`, if it has one.
    pub(crate) fn first_member(&self, object: u32) -> Option<u32> {
        let first = self.nodes[object as usize].first;
        (first != NO_NODE).then_some(first)
    }

    /// The member after `node` in its object, if there is one.
    pub(crate) fn next_member(&self, node: u32) -> Option<u32> {
        let next = self.nodes[node as usize].next;
        (next != NO_NODE).then_some(next)
    }

    /// The member name of `node`.
    pub(crate) fn name(&self, node: u32) -> &str {
        &self.nodes[node as usize].name
    }

    /// The value of `node`, or `None` for an object.
    pub(crate) fn leaf(&self, node: u32) -> Option<Value<'a>> {
        self.nodes[node as usize].leaf
    }

    /// A tree for entities named by `names`; `all` when every entity will be exported.
    pub(crate) fn for_names(names: &KeyNames, all: bool) -> Tree<'a> {
        Tree { nodes: Vec::new(), placed: Placed::new(names.node_count(), all), chain: Vec::new() }
    }

    /// Empties the tree down to the entity's object, with no members.
    fn clear(&mut self) {
        self.nodes.clear();
        let root = TreeNode {
            name: Cow::Borrowed(""),
            leaf: None,
            first: NO_NODE,
            last: NO_NODE,
            next: NO_NODE,
            source: NO_NODE,
            array: false,
            depth: 0,
        };
        self.nodes.push(root);
        self.placed.clear();
    }

    /// Adds a member (a value, or with `leaf` `None` an empty object) after the last member of
    /// `object`, and returns it.
    fn push_member(
        &mut self,
        object: u32,
        name: Cow<'a, str>,
        leaf: Option<Value<'a>>,
        source: u32,
    ) -> u32 {
        let node = self.nodes.len() as u32;
        let depth = self.nodes[object as usize].depth + 1;
        self.nodes.push(TreeNode {
            name,
            leaf,
            first: NO_NODE,
            last: NO_NODE,
            next: NO_NODE,
            source,
            array: false,
            depth,
        });
        let parent = &mut self.nodes[object as usize];
        let last = std::mem::replace(&mut parent.last, node);
        if last == NO_NODE {
            parent.first = node;
        } else {
            self.nodes[last as usize].next = node;
        }
        node
    }

    /// Puts `value` at the path of name-tree node `node` below `top` (the root, or the node
    /// whose object is exported), creating objects on the way (from the nearest one placed
    /// already). Returns false, changing nothing, where the path meets
    /// a value, is an object in this entity, or is deeper than [`MAX_PATH_SEGMENTS`].
    fn place(&mut self, names: &'a KeyNames, node: u32, top: u32, value: Value<'a>) -> bool {
        if self.placed.get(node).is_some() {
            return false;
        }
        let mut chain = std::mem::take(&mut self.chain);
        chain.clear();
        let mut at = node;
        let mut object = loop {
            chain.push(at);
            let parent = names.parent(at);
            if parent == top {
                break ROOT;
            }
            if let Some(placed) = self.placed.get(parent) {
                break placed;
            }
            at = parent;
        };
        let object_node = &self.nodes[object as usize];
        let fits = object_node.leaf.is_none()
            && object_node.depth as usize + chain.len() <= MAX_PATH_SEGMENTS;
        if fits {
            for &n in chain.iter().rev() {
                object = self.push_member(object, Cow::Borrowed(names.segment(n)), None, n);
                self.placed.insert(n, object);
            }
            self.nodes[object as usize].leaf = Some(value);
        }
        self.chain = chain;
        fits
    }

    /// Writes as arrays the objects whose name-tree node was an imported array and whose
    /// members are exactly its indices `0..n` (in any order), not all plain numbers: their
    /// members are relinked in index order. Any other object stays an object keyed by index,
    /// which reads back to the same keys: an array with a hole (a removed element, a skipped
    /// `null`), or one of numbers only (`[1, null]` leniently), which would read back as a
    /// float array.
    fn shape_arrays(&mut self, names: &KeyNames) {
        let mut slots = std::mem::take(&mut self.chain);
        for object in 0..self.nodes.len() {
            let node = &self.nodes[object];
            if node.source == NO_NODE || node.leaf.is_some() || !names.is_array(node.source) {
                continue;
            }
            let mut len = 0;
            let mut member = node.first;
            while member != NO_NODE {
                len += 1;
                member = self.nodes[member as usize].next;
            }
            slots.clear();
            slots.resize(len, NO_NODE);
            let mut member = self.nodes[object].first;
            let (mut whole, mut numbers) = (true, true);
            while member != NO_NODE {
                let node = &self.nodes[member as usize];
                match index_below(&node.name, len) {
                    // Distinct names under one node: each index is met once.
                    Some(i) => slots[i] = member,
                    None => whole = false,
                }
                numbers &= matches!(node.leaf, Some(Value::Float(_)));
                member = node.next;
            }
            if !whole || numbers {
                continue;
            }
            for pair in slots.windows(2) {
                self.nodes[pair[0] as usize].next = pair[1];
            }
            if let (Some(&first), Some(&last)) = (slots.first(), slots.last()) {
                self.nodes[last as usize].next = NO_NODE;
                let node = &mut self.nodes[object];
                (node.first, node.last, node.array) = (first, last, true);
            }
        }
        self.chain = slots;
    }

    /// Writes the entity: compact, or `pretty` as designers write fixtures (one member a line,
    /// indented two spaces a level from `depth`, float arrays on one line: `[12.0, 0.0]`).
    /// Iterative: a path of any depth writes without recursion.
    fn write(&self, pretty: bool, depth: usize, out: &mut Vec<u8>) {
        // Each open object or array, and its next member to write.
        let mut open: Vec<(u32, u32)> = Vec::new();
        self.open(ROOT, out, pretty, &mut open);
        while let Some(top) = open.last_mut() {
            let (object, member) = *top;
            let node = &self.nodes[object as usize];
            if member == NO_NODE {
                open.pop();
                if pretty {
                    out.push(b'\n');
                    push_indent(out, depth + open.len());
                }
                out.push(if node.array { b']' } else { b'}' });
                continue;
            }
            top.1 = self.nodes[member as usize].next;
            if member != node.first {
                out.push(b',');
            }
            if pretty {
                out.push(b'\n');
                push_indent(out, depth + open.len());
            }
            if !node.array {
                write_leaf(out, &self.nodes[member as usize].name);
                out.extend_from_slice(if pretty { b": " } else { b":" });
            }
            self.open(member, out, pretty, &mut open);
        }
    }

    /// Writes a value whole, or an object's or array's opening (pushed on `open`).
    fn open(&self, node: u32, out: &mut Vec<u8>, pretty: bool, open: &mut Vec<(u32, u32)>) {
        let tree_node = &self.nodes[node as usize];
        match tree_node.leaf {
            Some(value) => write_value(out, value, pretty),
            None if tree_node.first == NO_NODE => out.extend_from_slice(b"{}"),
            None => {
                out.push(if tree_node.array { b'[' } else { b'{' });
                open.push((node, tree_node.first));
            }
        }
    }
}

/// Writes one value: floats as [`JsonF32`] writes them (the exports refuse a NaN or infinity
/// before writing), and float arrays on one line (with a space after each comma when `pretty`).
fn write_value(out: &mut Vec<u8>, value: Value<'_>, pretty: bool) {
    match value {
        Value::Bool(b) => write_leaf(out, &b),
        Value::Float(f) => write_leaf(out, &JsonF32(f)),
        Value::Str(s) => write_leaf(out, s),
        Value::Floats(floats) => {
            out.push(b'[');
            for (i, f) in floats.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(if pretty { b", " } else { b"," });
                }
                write_leaf(out, &JsonF32(*f));
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
    /// The words of each entity in `arena`, back to back. A blob is at most 4 GiB: 2^30
    /// words.
    spans: Vec<u32>,
}

impl Staging {
    /// Reads one entity's members and stages its blob.
    fn entity<'de, A: MapAccess<'de>>(
        &mut self,
        importer: &mut Importer,
        map: A,
    ) -> Result<(), A::Error> {
        self.blob.clear();
        importer.release_claims();
        read_members(importer, &mut self.blob, map)?;
        // Laid out straight into the staged arena, with no free space.
        let used = self.blob.byte_len() / 4;
        let offset = self.arena.len();
        self.arena.resize(offset + used, 0);
        self.blob.write(&mut self.arena[offset..]);
        self.spans.push(used as u32);
        Ok(())
    }
}

/// Where the importer is, what it has seen, and why it stopped.
#[derive(Default)]
struct Importer {
    /// The name-tree node of each open object (none at the top level: the root).
    levels: Vec<u32>,
    /// The member names on the current path, back to back, and where each one ends.
    path: String,
    path_ends: Vec<usize>,
    /// The index of the array element being read, if one is.
    element: Option<usize>,
    /// Every path met, as a tree of segments: the store's key names in a store import (its
    /// named nodes are the keys' names), a tree of its own in a blob import. A path is
    /// claimed once per entity, as a value or an object: twice is a path set twice, or a
    /// value and an object at one path (which JSON could not write back). Memory is one
    /// member name a path met, not one path.
    names: KeyNames,
    /// The nodes the entity being read claimed, released after it.
    claimed: Vec<u32>,
    /// The member name being read.
    segment: String,
    /// Numbers of the array being read.
    floats: Vec<f32>,
    /// Why the import stopped, when it is the format's rule and not JSON's.
    failure: Option<JsonErrorKind>,
    /// The lenient policy, and what it changed.
    lenient: bool,
    report: ImportReport,
    /// Whether a number was read as an `f64` zero: written so, or nonzero but past `f64`'s
    /// precision.
    saw_zero: bool,
    /// The position of the entity being read in a top-level array, if it is in one.
    entity: Option<usize>,
}

impl Importer {
    /// Records why the import stops, as an error `serde_json` places in the text.
    fn fail<E: de::Error>(&mut self, kind: JsonErrorKind) -> E {
        self.failure = Some(kind);
        E::custom("datacomp format rule")
    }

    fn error(&mut self, e: &ReadError) -> JsonError {
        let kind = self.failure.take().unwrap_or_else(|| JsonErrorKind::Syntax(e.message.clone()));
        JsonError { kind, path: self.pointer(), line: e.line, column: e.column }
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
            crate::key::push_pointer_segment(&mut pointer, segment);
        }
        pointer
    }

    /// Enters the member named `self.segment`, returning its name-tree node; refuses a member
    /// deeper than a name may be ([`MAX_PATH_SEGMENTS`]).
    fn enter<E: de::Error>(&mut self) -> Result<u32, E> {
        self.path.push_str(&self.segment);
        self.path_ends.push(self.path.len());
        let segments = self.path_ends.len();
        if segments > MAX_PATH_SEGMENTS {
            return Err(self.fail(JsonErrorKind::TooDeep { segments, limit: MAX_PATH_SEGMENTS }));
        }
        let parent = self.levels.last().copied().unwrap_or(names::ROOT);
        Ok(self.names.intern(parent, &self.segment))
    }

    fn leave(&mut self) {
        self.path_ends.pop();
        self.path.truncate(self.path_ends.last().copied().unwrap_or(0));
    }

    /// Releases the paths the last entity claimed.
    fn release_claims(&mut self) {
        for node in self.claimed.drain(..) {
            self.names.unclaim(node);
        }
    }

    /// Claims `node` (the current path) for a value or an object of this entity: a path
    /// claimed before in this entity is set twice.
    fn claim<E: de::Error>(&mut self, node: u32) -> Result<(), E> {
        if self.names.claim(node) {
            self.claimed.push(node);
            return Ok(());
        }
        let path = self.names.dotted(node);
        Err(self.fail(JsonErrorKind::DuplicatePath(path)))
    }

    /// Opens the object at `node` (the current path): later members are its children.
    fn open_object<E: de::Error>(&mut self, node: u32) -> Result<(), E> {
        self.claim(node)
    }

    /// Sets `node` (the current path) in `blob`, as the name of its key. A key named by
    /// another path (in this entity, or in the store) is a collision: the blob holds one
    /// value a key.
    fn set<E: de::Error>(
        &mut self,
        blob: &mut Builder,
        node: u32,
        value: Value<'_>,
    ) -> Result<(), E> {
        self.claim(node)?;
        let key = match self.names.name(node) {
            Ok(key) => key,
            Err(other) => {
                let key = self.names.key(node);
                let (first, second) = self.names.collision_paths(other, node);
                return Err(self.fail(JsonErrorKind::KeyCollision { first, second, key }));
            }
        };
        // A key no other path of the entity holds, and this path is claimed once: the blob
        // does not hold it yet.
        blob.push(key, value).map_err(|e| self.fail(JsonErrorKind::Blob(e)))
    }

    /// The `f32` a number read as an `f64` is stored as (see [`crate::number`]).
    fn float<E: de::Error>(&mut self, n: f64) -> Result<f32, E> {
        // serde_json reads a nonzero number past f64's precision as zero: such a zero sends
        // the import to look for one in the text (see `read_with_extremes`).
        self.saw_zero |= n == 0.0;
        match number::fit_f64(n) {
            Fit::Holds(x) => Ok(x),
            Fit::Changes(x) => self.changed(x, || JsonF64(n).to_string()),
            Fit::OutOfRange if self.lenient => {
                self.changed(f32::MAX.copysign(n as f32), String::new)
            }
            Fit::OutOfRange => Err(self.fail(JsonErrorKind::NumberOutOfRange(n))),
        }
    }

    /// The `f32` an integer is stored as.
    fn integer<E: de::Error>(&mut self, n: i128) -> Result<f32, E> {
        match number::fit_integer(n) {
            Fit::Holds(x) => Ok(x),
            Fit::Changes(x) => self.changed(x, || n.to_string()),
            // No 64-bit integer is past f32's range; the float rule would say so if one were.
            #[allow(clippy::cast_precision_loss)]
            Fit::OutOfRange => self.float(n as f64),
        }
    }

    /// A number stored as `x`, which is not what was written (`written`): refused, or counted
    /// by a lenient import.
    fn changed<E: de::Error>(
        &mut self,
        x: f32,
        written: impl FnOnce() -> String,
    ) -> Result<f32, E> {
        if !self.lenient {
            return Err(self.fail(JsonErrorKind::NotHeld { number: written(), becomes: x }));
        }
        self.report.rounded_numbers += 1;
        if self.report.first_rounded.is_none() {
            self.report.first_rounded = Some(self.pointer());
        }
        Ok(x)
    }

    /// Enters the member named by decimal `index` of the array at `node`: a lenient array of
    /// other things than numbers holds its elements as members keyed by index.
    fn enter_index<E: de::Error>(&mut self, node: u32, index: usize) -> Result<u32, E> {
        self.segment.clear();
        let _ = write!(self.segment, "{index}");
        self.levels.push(node);
        self.enter()
    }

    fn leave_index(&mut self) {
        self.leave();
        self.levels.pop();
    }
}

/// One entity, which must be an object: the top level of `Blob::from_json`, or of a store
/// import (where it may also be an array of entities). The seed that a reader of JSON or SJSON
/// is given.
pub(crate) struct Entity<'i> {
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
        let node = importer.enter()?;
        map.next_value_seed(Member { importer: &mut *importer, blob: &mut *blob, node })?;
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
    node: u32,
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
        self.importer.set(self.blob, self.node, Value::Bool(b))
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<(), E> {
        let n = self.importer.float(n)?;
        self.importer.set(self.blob, self.node, Value::Float(n))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<(), E> {
        let n = self.importer.integer(n.into())?;
        self.importer.set(self.blob, self.node, Value::Float(n))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<(), E> {
        let n = self.importer.integer(n.into())?;
        self.importer.set(self.blob, self.node, Value::Float(n))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        self.importer.set(self.blob, self.node, Value::Str(s))
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        if !self.importer.lenient {
            return Err(self.importer.fail(JsonErrorKind::Null));
        }
        self.importer.report.skipped_nulls += 1;
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        self.importer.open_object(self.node)?;
        self.importer.levels.push(self.node);
        read_members(self.importer, self.blob, map)?;
        self.importer.levels.pop();
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Member { importer, blob, node } = self;
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
                    node,
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
                let member = importer.enter_index(node, index)?;
                let seed = Member { importer: &mut *importer, blob: &mut *blob, node: member };
                let read = seq.next_element_seed(seed);
                importer.leave_index();
                if read?.is_none() {
                    break Ok(());
                }
                index += 1;
            }
        } else {
            importer.set(blob, node, Value::Floats(&floats))
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
    /// The array's name-tree node.
    node: u32,
    /// The numbers read so far.
    floats: &'i [f32],
}

impl LenientElement<'_> {
    /// Writes the numbers read so far as members `0..`, then returns the member for this
    /// element.
    fn convert<E: de::Error>(&mut self) -> Result<Member<'_>, E> {
        // From here on the path names members by index, not elements.
        self.importer.element = None;
        self.importer.open_object(self.node)?;
        // Marked, so that export writes it back as an array.
        self.importer.names.set_array(self.node);
        for (index, &n) in self.floats.iter().enumerate() {
            let member = self.importer.enter_index(self.node, index)?;
            let set = self.importer.set(self.blob, member, Value::Float(n));
            self.importer.leave_index();
            set?;
        }
        let index = self.floats.len();
        let node = self.importer.enter_index(self.node, index)?;
        Ok(Member { importer: &mut *self.importer, blob: &mut *self.blob, node })
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
        self.importer.float(n)
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<f32, E> {
        self.importer.integer(n.into())
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<f32, E> {
        self.importer.integer(n.into())
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
    fn a_name_of_100_000_segments_exports_by_hash_without_recursion() {
        let exported = on_a_small_stack(|| {
            let mut store = Store::new();
            let id = store.insert_empty();
            let mut node = names::ROOT;
            for _ in 0..100_000 {
                node = store.names.intern(node, "a");
            }
            let key = store.names.name(node).unwrap();
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
