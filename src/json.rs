//! JSON fixtures: streaming import of the restricted format into blobs.
//!
//! The format is the `DataComponent`'s: values are booleans, numbers (stored as `f32`), strings,
//! objects (flattened into dotted keys: `{"stats": {"health": 100}}` is `stats.health`) and
//! arrays of numbers. The importer is a serde visitor that writes each value straight into the
//! blob as `serde_json` reads it: no `serde_json::Value` tree is built.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt::{self, Write as _};

use fxhash::FxHashMap;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::blob::bulk::Builder;
use crate::names::{self, KeyNames};
use crate::number::{self, Fit, JsonF32, JsonF64};
use crate::text::Shortened;
use crate::{Blob, BlobError, HandleError, Id, Key, MAX_PATH_SEGMENTS, Value};

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
    pub(crate) kind: JsonErrorKind,
    pub(crate) path: String,
    pub(crate) line: usize,
    pub(crate) column: usize,
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
    /// An entity's top-level member named as a raw key (`#` and 8 hex digits, as in
    /// `#0000002a`: the key with that hash, unnamed) that holds an object, or an array of
    /// other things than numbers: a raw key holds one value.
    RawKeyNotAValue {
        /// The member's name as written.
        member: String,
        /// Whether it holds an object (else an array).
        object: bool,
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
            JsonErrorKind::RawKeyNotAValue { member, object } => {
                let not =
                    if *object { "an object" } else { "an array of other things than numbers" };
                write!(
                    f,
                    "member {} is a raw key and holds one value, not {not}",
                    Shortened(member)
                )
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
        /// The key, as [`Store::key_label`](crate::Store::key_label) shows it.
        key: String,
        /// The float.
        value: f32,
    },
    /// The entity holds nothing at or under the path.
    NoPath {
        /// The entity.
        entity: Option<Id>,
        /// The path, as [`Store::key_label`](crate::Store::key_label) would show its key.
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
    pub(crate) lenient: bool,
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

/// How a store writes JSON: the layout ([`JsonStyle`]) and what becomes of a float JSON has no
/// number for (NaN, infinity). The one options type of [`Store::export_json_with`],
/// [`Store::export_blob_json_with`], [`Store::export_all_json_with`] and
/// [`Store::try_export_json_at`]'s style; the older `export_*` methods are wrappers over it.
///
/// By default: compact, and a NaN or infinity is refused ([`ExportError::NotFinite`]), since
/// any text written for it would not read back as it.
///
/// [`Store::export_json_with`]: crate::Store::export_json_with
/// [`Store::export_blob_json_with`]: crate::Store::export_blob_json_with
/// [`Store::export_all_json_with`]: crate::Store::export_all_json_with
/// [`Store::try_export_json_at`]: crate::Store::try_export_json_at
///
/// # Examples
///
/// ```
/// use datacomp::{ExportOptions, ImportOptions, JsonStyle, Store};
///
/// let mut store = Store::new();
/// let id = store.import_json(r#"{"hp": 7}"#, &ImportOptions::strict())?[0];
/// let pretty = ExportOptions::new().style(JsonStyle::Pretty);
/// assert_eq!(store.export_json_with(id, &pretty)?, "{\n  \"hp\": 7\n}");
///
/// store.get_mut(id).unwrap().set("hp", f32::NAN);
/// assert!(store.export_json_with(id, &ExportOptions::new()).is_err());
/// let lossy = ExportOptions::new().non_finite_as_null();
/// assert_eq!(store.export_json_with(id, &lossy)?, r#"{"hp":null}"#);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExportOptions {
    pub(crate) style: JsonStyle,
    /// Write a NaN or infinity as `null` (which does not read back) instead of refusing it.
    pub(crate) lossy: bool,
}

impl ExportOptions {
    /// Compact, refusing a NaN or infinity.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ExportOptions, JsonStyle};
    ///
    /// assert_eq!(ExportOptions::new().get_style(), JsonStyle::Compact);
    /// assert!(!ExportOptions::new().is_lossy());
    /// ```
    #[must_use]
    pub const fn new() -> ExportOptions {
        ExportOptions { style: JsonStyle::Compact, lossy: false }
    }

    /// These options with `style`.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ExportOptions, JsonStyle};
    ///
    /// let pretty = ExportOptions::new().style(JsonStyle::Pretty);
    /// assert_eq!(pretty.get_style(), JsonStyle::Pretty);
    /// ```
    #[must_use]
    pub const fn style(self, style: JsonStyle) -> ExportOptions {
        ExportOptions { style, ..self }
    }

    /// These options writing a NaN or infinity as `null`, as the `export_*` methods without
    /// `try_` do: the text is always written, but such a value does not read back (strict
    /// import refuses `null`, lenient drops it).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::ExportOptions;
    ///
    /// assert!(ExportOptions::new().non_finite_as_null().is_lossy());
    /// ```
    #[must_use]
    pub const fn non_finite_as_null(self) -> ExportOptions {
        ExportOptions { lossy: true, ..self }
    }

    /// The layout.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ExportOptions, JsonStyle};
    ///
    /// assert_eq!(ExportOptions::default().get_style(), JsonStyle::Compact);
    /// ```
    #[must_use]
    pub const fn get_style(&self) -> JsonStyle {
        self.style
    }

    /// Whether a NaN or infinity is written as `null` rather than refused.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::ExportOptions;
    ///
    /// assert!(!ExportOptions::default().is_lossy());
    /// ```
    #[must_use]
    pub const fn is_lossy(&self) -> bool {
        self.lossy
    }
}

impl From<JsonStyle> for ExportOptions {
    /// Options of `style`, refusing a NaN or infinity: what the `try_export_*` methods take.
    fn from(style: JsonStyle) -> ExportOptions {
        ExportOptions::new().style(style)
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
///
/// // Nulls and empty objects store nothing, and are counted.
/// let text = r#"{"title": null, "buffs": {}, "stats": {"hp": 3, "extra": {}}}"#;
/// let (sheet, report) = Blob::from_json_with(text, &ImportOptions::lenient())?;
/// assert_eq!((sheet.len(), report.skipped_nulls, report.empty_objects), (1, 1, 2));
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
    /// Objects without members (`{}`) inside an entity, left out: an object's members are its
    /// keys, so an empty one stores nothing, and exports without it. Counted by strict imports
    /// too, which store them the same way. An entity that is itself `{}` is kept, with no keys.
    pub empty_objects: usize,
}

impl Blob {
    /// Imports one entity from a JSON object, strictly: `null`, arrays holding anything but
    /// numbers, numbers past `f32`, a top level that is not an object, a path set twice and
    /// two paths whose keys collide are errors. An empty array is an empty float array. A
    /// leading byte order mark is skipped. A top-level member named `#` and 8 hex digits
    /// (`"#0000002a"`, as [`Key`]'s `FromStr` reads a raw key) is that key, holding one
    /// value; deeper, it is a name.
    ///
    /// # Errors
    ///
    /// A [`JsonError`] with the JSON path and line and column; a raw-key member holding an
    /// object or an array of other things than numbers is [`JsonErrorKind::RawKeyNotAValue`].
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
    ///
    /// // A raw key, as an export writes a key without a name.
    /// let blob = Blob::from_json(r##"{"#0000002a": true, "a": {"#0000002a": 1}}"##)?;
    /// assert_eq!(blob.get_bool(datacomp::Key::from_raw(42)), Some(true));
    /// assert_eq!(blob.get_float("a.#0000002a"), Some(1.0));
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
        read_with_extremes(without_bom(text), options.lenient, |text| {
            blob_from(*options, |entity| read_json(text, entity))
        })
    }
}

/// `text` without a leading byte order mark, which some editors write and which is not part of
/// the document (RFC 8259 lets a reader skip it; the SJSON reader does too). Lines and columns
/// count from after it, as an editor that hides it shows them.
pub(crate) fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Runs `serde_json` over `text`, feeding the importer's `entity`.
pub(crate) fn read_json(text: &str, entity: Entity<'_>) -> Result<(), ReadError> {
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
pub(crate) fn read_with_extremes<T>(
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

/// The first float of `value` that JSON has no number for.
pub(crate) fn check_finite(value: Value<'_>) -> Result<(), f32> {
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
    pub(crate) nodes: Vec<TreeNode<'a>>,
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
pub(crate) struct TreeNode<'a> {
    name: Cow<'a, str>,
    pub(crate) leaf: Option<Value<'a>>,
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
    /// The blob entry (its position in the blob) that `leaf` is, or [`NO_NODE`]: what an
    /// export plan writes at this place for another entity of the same layout.
    pub(crate) entry: u32,
}

/// The entity's own object in a [`Tree`].
pub(crate) const ROOT: u32 = 0;
/// No node: the end of a list of members.
pub(crate) const NO_NODE: u32 = u32::MAX;

/// The bytes an export wrote: JSON from `serde_json`, ASCII punctuation and strings copied from
/// validated blobs (every blob's strings are checked UTF-8 when it is made or loaded), so always
/// UTF-8. Were that broken, the text keeps every valid byte and marks the others with U+FFFD
/// (and a debug build stops), rather than losing the whole document.
pub(crate) fn into_string(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|error| {
        debug_assert!(false, "an export wrote invalid UTF-8: {error}");
        String::from_utf8_lossy(error.as_bytes()).into_owned()
    })
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

    /// Whether `node` is written as an array (its members are its elements, in order).
    pub(crate) fn is_array(&self, node: u32) -> bool {
        self.nodes[node as usize].array
    }

    /// A tree for entities named by `names`; `all` when every entity will be exported.
    pub(crate) fn for_names(names: &KeyNames, all: bool) -> Tree<'a> {
        Tree { nodes: Vec::new(), placed: Placed::new(names.node_count(), all), chain: Vec::new() }
    }

    /// Empties the tree down to the entity's object, with no members.
    pub(crate) fn clear(&mut self) {
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
            entry: NO_NODE,
        };
        self.nodes.push(root);
        self.placed.clear();
    }

    /// Adds a member (a value and its blob entry, or with `leaf` `None` an empty object) after
    /// the last member of `object`, and returns it.
    pub(crate) fn push_member(
        &mut self,
        object: u32,
        name: Cow<'a, str>,
        leaf: Option<(Value<'a>, u32)>,
        source: u32,
    ) -> u32 {
        let node = self.nodes.len() as u32;
        let depth = self.nodes[object as usize].depth + 1;
        self.nodes.push(TreeNode {
            name,
            leaf: leaf.map(|(value, _)| value),
            first: NO_NODE,
            last: NO_NODE,
            next: NO_NODE,
            source,
            array: false,
            depth,
            entry: leaf.map_or(NO_NODE, |(_, entry)| entry),
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

    /// Puts `value` (blob entry `entry`) at the path of name-tree node `node` below `top` (the root, or the node
    /// whose object is exported), creating objects on the way (from the nearest one placed
    /// already). Returns the tree node of the value, or `None`, changing nothing, where the
    /// path meets a value, is an object in this entity, or is deeper than
    /// [`MAX_PATH_SEGMENTS`].
    pub(crate) fn place(
        &mut self,
        names: &'a KeyNames,
        node: u32,
        top: u32,
        (value, entry): (Value<'a>, u32),
    ) -> Option<u32> {
        if self.placed.get(node).is_some() {
            return None;
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
            let leaf = &mut self.nodes[object as usize];
            (leaf.leaf, leaf.entry) = (Some(value), entry);
        }
        self.chain = chain;
        fits.then_some(object)
    }

    /// Writes as arrays the objects whose name-tree node was an imported array and whose
    /// members are exactly its indices `0..n` (in any order), not all plain numbers: their
    /// members are relinked in index order. Any other object stays an object keyed by index,
    /// which reads back to the same keys: an array with a hole (a removed element, a skipped
    /// `null`), or one of numbers only (`[1, null]` leniently), which would read back as a
    /// float array.
    pub(crate) fn shape_arrays(&mut self, names: &KeyNames) {
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
    pub(crate) fn write(&self, pretty: bool, depth: usize, out: &mut Vec<u8>) {
        let separator: &[u8] = if pretty { b", " } else { b"," };
        self.write_with(pretty, depth, out, |out, _, value| write_value(out, value, separator));
    }

    /// Writes the entity as [`write`](Tree::write) does, each value by `leaf` (given the
    /// output, the value's tree node and the value).
    pub(crate) fn write_with(
        &self,
        pretty: bool,
        depth: usize,
        out: &mut Vec<u8>,
        mut leaf: impl FnMut(&mut Vec<u8>, &TreeNode<'a>, Value<'a>),
    ) {
        // Each open object or array, and its next member to write.
        let mut open: Vec<(u32, u32)> = Vec::new();
        self.open(ROOT, out, &mut open, &mut leaf);
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
                write_str(out, &self.nodes[member as usize].name);
                out.extend_from_slice(if pretty { b": " } else { b":" });
            }
            self.open(member, out, &mut open, &mut leaf);
        }
    }

    /// Writes a value whole (by `leaf`), or an object's or array's opening (pushed on `open`).
    fn open(
        &self,
        node: u32,
        out: &mut Vec<u8>,
        open: &mut Vec<(u32, u32)>,
        leaf: &mut impl FnMut(&mut Vec<u8>, &TreeNode<'a>, Value<'a>),
    ) {
        let tree_node = &self.nodes[node as usize];
        match tree_node.leaf {
            Some(value) => leaf(out, tree_node, value),
            None if tree_node.first == NO_NODE => out.extend_from_slice(b"{}"),
            None => {
                out.push(if tree_node.array { b'[' } else { b'{' });
                open.push((node, tree_node.first));
            }
        }
    }
}

/// Writes one value, for JSON and SJSON alike: strings with JSON's escapes, floats as
/// [`JsonF32`] writes them (a NaN or infinity as `null`; the checked exports refuse one before
/// writing), and float arrays on one line, elements separated by `separator` (`,` or `, ` in
/// JSON, a space in SJSON).
pub(crate) fn write_value(out: &mut Vec<u8>, value: Value<'_>, separator: &[u8]) {
    match value {
        Value::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
        Value::Float(f) => write_f32(out, f),
        Value::Str(s) => write_str(out, s),
        Value::Floats(floats) => {
            out.push(b'[');
            for (i, f) in floats.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(separator);
                }
                write_f32(out, *f);
            }
            out.push(b']');
        }
    }
}

/// Writes `x` as [`JsonF32`] serializes it: a whole number up to 2^24 (its own shortest
/// form) as plain digits, here without going through a serializer; any other through
/// [`JsonF32`] itself.
pub(crate) fn write_f32(out: &mut Vec<u8>, x: f32) {
    // Saturating, NaN to 0: equal to `x` back only for a whole `x` (or minus zero).
    let whole = x as i32;
    #[allow(clippy::cast_precision_loss)] // Exact below 2^24, and only compared there.
    let back = whole as f32;
    // Minus zero is written "-0.0" by `JsonF32`.
    #[allow(clippy::float_cmp)] // Exactly whole, on purpose.
    let exact = back == x;
    if exact && x.abs() <= 16_777_216.0 && !(x == 0.0 && x.is_sign_negative()) {
        let mut n = whole.unsigned_abs();
        let mut digits = [0_u8; 11];
        let mut at = digits.len();
        loop {
            at -= 1;
            digits[at] = b"0123456789"[(n % 10) as usize];
            n /= 10;
            if n == 0 {
                break;
            }
        }
        if x < 0.0 {
            at -= 1;
            digits[at] = b'-';
        }
        out.extend_from_slice(&digits[at..]);
    } else if x.is_finite() && x.fract() != 0.0 {
        // Not whole: `JsonF32` hands it to `serde_json` as it is (its shortest form).
        write_leaf(out, &x);
    } else {
        write_leaf(out, &JsonF32(x));
    }
}

/// What each byte of a string is written as inside JSON quotes, as `serde_json` escapes it: 0
/// for the byte itself, else the letter after the backslash (`u` for `\u00XX`). Control
/// characters, `"` and `\` are escaped; everything else (DEL, non-ASCII) is written as it is.
static ESCAPE: [u8; 256] = {
    let mut table = [0_u8; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = b'u';
        byte += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0a] = b'n';
    table[0x0c] = b'f';
    table[0x0d] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// Writes `s` as a JSON string, byte for byte as `serde_json` writes it, in one pass over its
/// bytes: runs that need no escape are copied whole.
pub(crate) fn write_str(out: &mut Vec<u8>, s: &str) {
    write_str_bytes(out, s.as_bytes());
}

/// Eight bytes with each byte `b`.
const fn splat(b: u8) -> u64 {
    u64::from_ne_bytes([b; 8])
}

/// Whether any of the eight bytes of `word` needs an escape: below 0x20, `"` or `\`. Exact: a
/// subtraction's borrow runs on only past a byte that matches, so a byte is flagged wrongly
/// only in a word where another is flagged rightly.
fn needs_escape(word: u64) -> bool {
    let has_zero = |v: u64| v.wrapping_sub(splat(1)) & !v & splat(0x80);
    let below_space = word.wrapping_sub(splat(0x20)) & !word & splat(0x80);
    below_space | has_zero(word ^ splat(b'"')) | has_zero(word ^ splat(b'\\')) != 0
}

/// [`write_str`] of the bytes of a string (UTF-8, as a validated blob holds it): runs of
/// eight bytes with nothing to escape are skipped a word at a time.
pub(crate) fn write_str_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut run = 0;
    let mut words = bytes.chunks_exact(8);
    let mut at = 0;
    for word in &mut words {
        if let Ok(word) = <[u8; 8]>::try_from(word)
            && needs_escape(u64::from_ne_bytes(word))
        {
            for i in at..at + 8 {
                escape_at(out, bytes, i, &mut run);
            }
        }
        at += 8;
    }
    for i in at..bytes.len() {
        escape_at(out, bytes, i, &mut run);
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

/// Writes the escape of `bytes[i]` if it needs one, after the run of bytes since `*run`,
/// which then starts after it.
#[inline]
fn escape_at(out: &mut Vec<u8>, bytes: &[u8], i: usize, run: &mut usize) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let byte = bytes[i];
    let escape = ESCAPE[byte as usize];
    if escape == 0 {
        return;
    }
    out.extend_from_slice(&bytes[*run..i]);
    if escape == b'u' {
        let hex = [HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 0xf)]];
        out.extend_from_slice(&[b'\\', b'u', b'0', b'0', hex[0], hex[1]]);
    } else {
        out.extend_from_slice(&[b'\\', escape]);
    }
    *run = i + 1;
}

/// A float, string or member name written by `serde_json`, so that escapes and float forms
/// are its own. Writing to a Vec cannot fail.
pub(crate) fn write_leaf<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
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
pub(crate) struct Staging {
    /// The entity being read; cleared, not reallocated, between entities.
    pub(crate) blob: Builder,
    pub(crate) arena: Vec<u32>,
    /// The words of each entity in `arena`, back to back. A blob is at most 4 GiB: 2^30
    /// words.
    pub(crate) spans: Vec<u32>,
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
pub(crate) struct Importer {
    /// The name-tree node of each open object (none at the top level: the root).
    pub(crate) levels: Vec<u32>,
    /// The member names on the current path, back to back, and where each one ends.
    pub(crate) path: String,
    pub(crate) path_ends: Vec<usize>,
    /// The index of the array element being read, if one is.
    pub(crate) element: Option<usize>,
    /// Every path met, as a tree of segments: the store's key names in a store import (its
    /// named nodes are the keys' names), a tree of its own in a blob import. A path is
    /// claimed once per entity, as a value or an object: twice is a path set twice, or a
    /// value and an object at one path (which JSON could not write back). Memory is one
    /// member name a path met, not one path.
    pub(crate) names: KeyNames,
    /// The nodes the entity being read claimed, released after it.
    pub(crate) claimed: Vec<u32>,
    /// The member name being read.
    pub(crate) segment: String,
    /// Numbers of the array being read.
    pub(crate) floats: Vec<f32>,
    /// Why the import stopped, when it is the format's rule and not JSON's.
    pub(crate) failure: Option<JsonErrorKind>,
    /// The lenient policy, and what it changed.
    pub(crate) lenient: bool,
    pub(crate) report: ImportReport,
    /// Whether a number was read as an `f64` zero: written so, or nonzero but past `f64`'s
    /// precision.
    pub(crate) saw_zero: bool,
    /// The position of the entity being read in a top-level array, if it is in one.
    pub(crate) entity: Option<usize>,
    /// The raw keys (top-level members `#xxxxxxxx`) the entity being read set, cleared after
    /// it. Hashed with a random seed: the keys come from the document.
    pub(crate) raw: HashSet<Key>,
}

impl Importer {
    /// Records why the import stops, as an error `serde_json` places in the text.
    fn fail<E: de::Error>(&mut self, kind: JsonErrorKind) -> E {
        self.failure = Some(kind);
        E::custom("datacomp format rule")
    }

    pub(crate) fn error(&mut self, e: &ReadError) -> JsonError {
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

    /// Releases the paths the last entity claimed, and forgets its raw keys.
    pub(crate) fn release_claims(&mut self) {
        for node in self.claimed.drain(..) {
            self.names.unclaim(node);
        }
        self.raw.clear();
    }

    /// The raw key the member just read names: an entity's top-level member `#` and 8 hex
    /// digits, as [`Key`]'s `FromStr` reads one. Deeper, such a member is a name.
    fn raw_member(&self) -> Option<Key> {
        if self.levels.is_empty() { crate::key::raw_label(&self.segment) } else { None }
    }

    /// A path (at `node`, named, claimed by this entity) whose key this entity set as a raw
    /// key: the collision of two members holding one key.
    fn raw_collision<E: de::Error>(&mut self, node: u32) -> Result<(), E> {
        if self.raw.is_empty() || !self.names.is_named(node) {
            return Ok(());
        }
        let key = self.names.key(node);
        if !self.raw.contains(&key) {
            return Ok(());
        }
        let (first, second) = (key.to_string(), self.names.dotted(node));
        Err(self.fail(JsonErrorKind::KeyCollision { first, second, key }))
    }

    /// Enters the top-level member `self.segment`, a raw key: on the path for errors, not in
    /// the names.
    fn enter_raw(&mut self) {
        self.path.push_str(&self.segment);
        self.path_ends.push(self.path.len());
    }

    /// Refuses what the current member, a raw key, holds: an object, or an array of other
    /// things than numbers (in strict and lenient imports alike: a lenient import would make
    /// members of them, which a raw key has none of).
    fn refuse_raw<E: de::Error>(&mut self, object: bool) -> E {
        let member = self.path.clone();
        self.fail(JsonErrorKind::RawKeyNotAValue { member, object })
    }

    /// Sets the raw `key` (the current member, `#xxxxxxxx`) in `blob`, unnamed. The same raw
    /// key twice is a member set twice; a path of this entity with that key is a collision.
    /// A key the store names is that named key.
    fn set_raw<E: de::Error>(
        &mut self,
        blob: &mut Builder,
        key: Key,
        value: Value<'_>,
    ) -> Result<(), E> {
        if let Some(node) = self.names.named(key)
            && self.names.is_claimed(node)
        {
            let (first, second) = (self.names.dotted(node), self.path.clone());
            return Err(self.fail(JsonErrorKind::KeyCollision { first, second, key }));
        }
        if !self.raw.insert(key) {
            return Err(self.fail(JsonErrorKind::DuplicatePath(self.path.clone())));
        }
        // No path of the entity holds the key (checked above, and `set` checks the paths
        // after), and no raw member before: the blob does not hold it yet.
        blob.push(key, value).map_err(|e| self.fail(JsonErrorKind::Blob(e)))
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
        self.claim(node)?;
        // A raw key the store names by this path: a value and an object at one path.
        self.raw_collision(node)
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
        self.raw_collision(node)?;
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
    pub(crate) importer: &'i mut Importer,
    pub(crate) blob: &'i mut Builder,
    /// In a store import: stage the entity there instead of reading into `blob`.
    pub(crate) staging: Option<&'i mut Staging>,
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
            None => read_members(self.importer, self.blob, map).map(drop),
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

/// Reads the members of an object into `blob`, under the importer's current path, and returns
/// how many it had.
fn read_members<'de, A: MapAccess<'de>>(
    importer: &mut Importer,
    blob: &mut Builder,
    mut map: A,
) -> Result<usize, A::Error> {
    let mut members = 0;
    while map.next_key_seed(Segment { importer: &mut *importer })?.is_some() {
        if let Some(key) = importer.raw_member() {
            importer.enter_raw();
            map.next_value_seed(RawMember { importer: &mut *importer, blob: &mut *blob, key })?;
        } else {
            let node = importer.enter()?;
            map.next_value_seed(Member { importer: &mut *importer, blob: &mut *blob, node })?;
        }
        importer.leave();
        members += 1;
    }
    Ok(members)
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
        let members = read_members(self.importer, self.blob, map)?;
        self.importer.levels.pop();
        if members == 0 {
            self.importer.report.empty_objects += 1;
        }
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

/// The value of an entity's top-level member named as a raw key (`#0000002a`): one value, the
/// key's, unnamed.
struct RawMember<'i> {
    importer: &'i mut Importer,
    blob: &'i mut Builder,
    key: Key,
}

impl<'de> DeserializeSeed<'de> for RawMember<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for RawMember<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a boolean, number, string or array of numbers")
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<(), E> {
        self.importer.set_raw(self.blob, self.key, Value::Bool(b))
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<(), E> {
        let n = self.importer.float(n)?;
        self.importer.set_raw(self.blob, self.key, Value::Float(n))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<(), E> {
        let n = self.importer.integer(n.into())?;
        self.importer.set_raw(self.blob, self.key, Value::Float(n))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<(), E> {
        let n = self.importer.integer(n.into())?;
        self.importer.set_raw(self.blob, self.key, Value::Float(n))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        self.importer.set_raw(self.blob, self.key, Value::Str(s))
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Member { importer: self.importer, blob: self.blob, node: names::ROOT }.visit_unit()
    }

    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        Err(self.importer.refuse_raw(true))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut floats = std::mem::take(&mut self.importer.floats);
        floats.clear();
        let result = loop {
            self.importer.element = Some(floats.len());
            match seq.next_element_seed(Number { importer: &mut *self.importer }) {
                Ok(Some(n)) => floats.push(n),
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        self.importer.element = None;
        let result = match result {
            Err(e) if self.importer.failure == Some(JsonErrorKind::NotANumber) => {
                drop(e);
                Err(self.importer.refuse_raw(false))
            }
            Err(e) => Err(e),
            Ok(()) => self.importer.set_raw(self.blob, self.key, Value::Floats(&floats)),
        };
        self.importer.floats = floats;
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

#[cfg(test)]
mod writer_tests {
    use super::*;

    fn str_text(s: &str) -> String {
        let mut out = Vec::new();
        write_str(&mut out, s);
        String::from_utf8(out).unwrap()
    }

    fn f32_text(x: f32) -> String {
        let mut out = Vec::new();
        write_f32(&mut out, x);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let every_ascii: String = (0_u8..0x80).map(char::from).collect();
        for s in
            ["", "plain", "\"", "\\", "a\u{7f}b", "é\u{1}\u{1f}—\n\r\t\u{8}\u{c}/", &every_ascii]
        {
            assert_eq!(str_text(s), serde_json::to_string(s).unwrap(), "{s:?}");
        }
        assert_eq!(str_text("a\"b\\c\u{1}"), r#""a\"b\\c\u0001""#);
    }

    #[test]
    fn floats_are_written_as_json_f32_serializes_them() {
        let cases = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            17.0,
            9.0,
            10.0,
            99.0,
            100.0,
            16_777_216.0,
            -16_777_216.0,
            16_777_218.0,
            123_456_792.0,
            1e13,
            0.5,
            -2.5,
            1e-7,
            f32::MAX,
            f32::MIN_POSITIVE,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ];
        for x in cases {
            assert_eq!(f32_text(x), serde_json::to_string(&JsonF32(x)).unwrap(), "{x}");
        }
        assert_eq!(f32_text(-16_777_216.0), "-16777216");
        assert_eq!(f32_text(f32::NAN), "null");
        assert_eq!(f32_text(-0.0), "-0.0");
    }

    proptest::proptest! {
        #[test]
        fn any_string_is_escaped_as_serde_json_escapes_it(s in "(\\PC|[\u{0}-\u{1f}\"\\\\\u{7f}])*") {
            proptest::prop_assert_eq!(str_text(&s), serde_json::to_string(&s).unwrap());
        }

        #[test]
        #[allow(clippy::cast_precision_loss)] // Whole numbers past 2^24 round: cases too.
        fn any_float_is_written_as_json_f32_serializes_it(bits in proptest::num::u32::ANY, whole in -20_000_000_i32..20_000_000) {
            for x in [f32::from_bits(bits), whole as f32] {
                proptest::prop_assert_eq!(f32_text(x), serde_json::to_string(&JsonF32(x)).unwrap());
            }
        }
    }
}
