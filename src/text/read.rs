//! Reading text into blobs: the entry points of the one importer of JSON and SJSON. A reader
//! of text (`serde_json` here, the SJSON reader in `sjson/read.rs`) is run over the document
//! and feeds the importer's seed ([`Entity`]), which writes each value straight into a blob
//! as it is read: no `serde_json::Value` tree is built.

use serde::de::DeserializeSeed;

use crate::blob::Blob;
use crate::blob::bulk::Builder;
use crate::text::TextFormat;

use super::entity::Entity;
use super::error::{JsonError, JsonErrorKind};
use super::importer::{Importer, ReadError};
use super::number::{self, Fit, JsonF32, fit_f64, fit_integer, is_json_number};
use super::options::ImportOptions;
use super::shown::Shortened;
use super::sjson::read::read_sjson;

impl Blob {
    /// Imports one entity from a JSON or SJSON document (as `options` say), which must be an
    /// object: with [`ImportOptions::strict`], `null`, arrays holding anything but numbers,
    /// numbers past `f32`, a top level that is not an object, a path set twice and two paths
    /// whose keys collide are errors; [`ImportOptions::lenient`] reads existing data as its
    /// rules say. An empty array is an empty float array. A leading byte order mark is
    /// skipped. A top-level member named `#` and 8 hex digits (`"#0000002a"`, as [`Key`]'s
    /// `FromStr` reads a raw key) is that key, holding one value; deeper, it is a name.
    ///
    /// The keys' names are not kept (a blob holds hashes): [`Store::import`] keeps them, and
    /// reports what a lenient import changed.
    ///
    /// [`Key`]: crate::key::Key
    /// [`Store::import`]: crate::store::Store::import
    ///
    /// # Errors
    ///
    /// A [`JsonError`] with the path (a JSON Pointer) and line and column:
    /// [`JsonErrorKind::Syntax`] for text that is not JSON (or SJSON); a raw-key member
    /// holding an object or an array of other things than numbers is
    /// [`JsonErrorKind::RawKeyNotAValue`].
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, ImportOptions, Key, TextFormat};
    ///
    /// let sheet = Blob::import(r#"{
    ///     "name": "The One",
    ///     "stats": { "health": 100, "mana": 200 },
    ///     "status_effects": { "drunk": true },
    ///     "position": [12.5, 0, -3.25]
    /// }"#, &ImportOptions::strict())?;
    /// assert_eq!(sheet.get_float("stats.mana"), Some(200.0));
    /// assert_eq!(sheet.get_floats("position"), Some(&[12.5, 0.0, -3.25][..]));
    ///
    /// // A raw key, as an export writes a key without a name.
    /// let text = r##"{"#0000002a": true, "a": {"#0000002a": 1}}"##;
    /// let blob = Blob::import(text, &ImportOptions::strict())?;
    /// assert_eq!(blob.get_bool(Key::from_raw(42)), Some(true));
    /// assert_eq!(blob.get_float("a.#0000002a"), Some(1.0));
    ///
    /// // SJSON: the same entity, as designers write it.
    /// let sjson = ImportOptions::strict().format(TextFormat::Sjson);
    /// let sheet = Blob::import(
    ///     "name = \"The One\"
    ///      stats = {
    ///          health = 100
    ///          mana = 200
    ///      }
    ///      color = [0 0.5 0.5 0.7] // red, green, blue, alpha",
    ///     &sjson,
    /// )?;
    /// assert_eq!(sheet.get_str("name"), Some("The One"));
    /// assert_eq!(sheet.get_floats("color"), Some(&[0.0, 0.5, 0.5, 0.7][..]));
    /// let err = Blob::import("stats = {\n    health =\n}", &sjson).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "/stats/health (line 3, column 1): expected a value after `=`, found `}`"
    /// );
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    pub fn import(text: &str, options: &ImportOptions) -> Result<Blob, JsonError> {
        match options.format {
            TextFormat::Json => read_with_extremes(without_bom(text), |text| {
                blob_from(*options, |entity| read_json(text, entity))
            }),
            TextFormat::Sjson => blob_from(*options, |entity| read_sjson(text, entity))
                .map(|(blob, _)| blob)
                .map_err(|e| sjson_as_written(text, e)),
        }
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

/// Imports one entity with `read`, which runs a reader over a text and feeds the importer's
/// [`Entity`]: the one blob import of JSON and SJSON. Also says whether the importer met a
/// zero (see [`read_with_extremes`]).
fn blob_from(
    options: ImportOptions,
    read: impl FnOnce(Entity<'_>) -> Result<(), ReadError>,
) -> Result<(Blob, bool), JsonError> {
    let mut importer =
        Importer { lenient: options.lenient, exact: options.exact, ..Importer::default() };
    // Entries are gathered apart, then laid out once: O(1) a value, not a move of the header
    // per new key.
    let mut blob = Builder::default();
    match read(Entity { importer: &mut importer, blob: &mut blob, staging: None }) {
        Ok(()) => Ok((blob.to_blob(), importer.saw_zero)),
        Err(e) => Err(importer.error(&e)),
    }
}

/// `serde_json`'s message for a number past `f64`'s range.
const PAST_F64: &str = "number out of range";

/// Reads `text` with `read` (which returns what it read and whether it met an `f64` zero).
/// `serde_json` cannot hand some numbers over as written: one past `f64`'s range is an error,
/// and a nonzero one past its precision (`1e-400`) reads as zero. When the first read meets
/// either, the literals are found in one pass over
/// the text and the text is read again with a stand-in for each that keeps its fit (past
/// `f32`, or nonzero but zero as an `f32`) and its place: so the rules for numbers apply to
/// them too, with the right path, line and column. At most two reads, so O(n) still.
pub(crate) fn read_with_extremes<T>(
    text: &str,
    mut read: impl FnMut(&str) -> Result<(T, bool), JsonError>,
) -> Result<T, JsonError> {
    let first = read(text);
    let past_f64 = match &first {
        Ok((_, false)) => return first.map(|(value, _)| value),
        Ok((_, true)) => false,
        // Strict too: past f64 is past f32, the same error as in SJSON (`NumberOutOfRange`).
        Err(e) if e.kind == JsonErrorKind::Syntax(PAST_F64.to_owned()) => true,
        Err(_) => return first.map(|(value, _)| value),
    };
    let found = number::extremes(text, true);
    if !found.iter().any(|e| e.huge == past_f64) {
        return first.map(|(value, _)| value);
    }
    let stand_ins = number::replace_extremes(text, &found);
    read(&stand_ins).map(|(value, _)| value).map_err(|mut e| {
        name_as_written(text, &found, &mut e);
        e
    })
}

/// A refused stand-in is named by the literal it stands in for (one of `found`, where the
/// error is), and placed at its last byte, as `serde_json` places a number.
fn name_as_written(text: &str, found: &[number::Extreme], e: &mut JsonError) {
    let Some(at) = byte_offset(text, e.line, e.column) else { return };
    let Some(x) = found.iter().find(|x| (x.start..x.end).contains(&at)) else { return };
    let literal = &text[x.start..x.end];
    match &mut e.kind {
        JsonErrorKind::NotHeld { number, .. } => literal.clone_into(number),
        JsonErrorKind::NumberOutOfRange(n) => *n = literal.parse().unwrap_or(*n),
        _ => return,
    }
    e.column += x.end - 1 - at;
}

/// An SJSON error that names the stand-in the reader gives for a nonzero number past `f64`'s
/// precision (`1e-99`) names the number as written instead.
pub(crate) fn sjson_as_written(text: &str, mut e: JsonError) -> JsonError {
    if matches!(&e.kind, JsonErrorKind::NotHeld { number, .. } if number.trim_start_matches('-') == "1e-99")
    {
        name_as_written(text, &number::extremes(text, true), &mut e);
    }
    e
}

/// The byte of `text` at `serde_json`'s `line` and `column` (both from 1; a column counts
/// bytes), if there is one.
fn byte_offset(text: &str, line: usize, column: usize) -> Option<usize> {
    let start = if line <= 1 { 0 } else { text.match_indices('\n').nth(line - 2)?.0 + 1 };
    let at = start + column.checked_sub(1)?;
    (at < text.len()).then_some(at)
}

impl std::str::FromStr for JsonF32 {
    type Err = JsonErrorKind;

    /// Reads a JSON number (`17`, `-0.5e1`) as strict import reads it: the nearest `f32`, or an
    /// error if that changes the number beyond rounding ([`NotHeld`]), or it is past `f32`'s
    /// range.
    ///
    /// # Errors
    ///
    /// [`Syntax`] for text that is not a JSON number; [`NumberOutOfRange`] past `f32`
    /// (infinity for text past `f64` too); [`NotHeld`] for a whole number `f32` does not hold
    /// or a nonzero number it holds only as zero.
    ///
    /// [`Syntax`]: crate::text::JsonErrorKind::Syntax
    /// [`NumberOutOfRange`]: crate::text::JsonErrorKind::NumberOutOfRange
    /// [`NotHeld`]: crate::text::JsonErrorKind::NotHeld
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::text::JsonErrorKind;
    /// use datacomp::text::JsonF32;
    ///
    /// assert_eq!("-0.5e1".parse::<JsonF32>(), Ok(JsonF32(-5.0)));
    /// assert_eq!("123456790".parse::<JsonF32>(), Ok(JsonF32(123_456_792.0)));
    /// let err = "16777217".parse::<JsonF32>().unwrap_err();
    /// assert_eq!(err, JsonErrorKind::NotHeld { number: "16777217".into(), becomes: 16_777_216.0 });
    /// assert!(matches!("1e400".parse::<JsonF32>(), Err(JsonErrorKind::NumberOutOfRange(_))));
    /// assert!(matches!("+1".parse::<JsonF32>(), Err(JsonErrorKind::Syntax(_))));
    /// ```
    fn from_str(text: &str) -> Result<JsonF32, JsonErrorKind> {
        if !is_json_number(text) {
            return Err(JsonErrorKind::Syntax(format!("{} is not a JSON number", Shortened(text))));
        }
        let integer = !text.contains(['.', 'e', 'E']);
        let fit = match text.parse::<i128>() {
            // (Zero as an f64, which keeps the sign of "-0".)
            Ok(n) if integer && n != 0 && n.unsigned_abs() <= u128::from(u64::MAX) => {
                fit_integer(n)
            }
            // Read exactly, unlike serde_json: a nonzero past f64's precision is not zero.
            _ => match text.parse::<f64>() {
                Ok(wide) if wide.is_infinite() => {
                    return Err(JsonErrorKind::NumberOutOfRange(wide));
                }
                Ok(wide)
                    if wide == 0.0
                        && text
                            .bytes()
                            .take_while(|b| !matches!(b, b'e' | b'E'))
                            .any(|b| matches!(b, b'1'..=b'9')) =>
                {
                    Fit::Changes(0.0f32.copysign(wide as f32))
                }
                Ok(wide) => fit_f64(wide),
                Err(_) => {
                    return Err(JsonErrorKind::Syntax(format!(
                        "{} is not a JSON number",
                        Shortened(text)
                    )));
                }
            },
        };
        match fit {
            // Read as an import reads it: within rounding, digits lost or not.
            Fit::Holds(x) | Fit::LosesDigits(x) => Ok(JsonF32(x)),
            Fit::Changes(becomes) => {
                Err(JsonErrorKind::NotHeld { number: text.to_owned(), becomes })
            }
            Fit::OutOfRange => {
                Err(JsonErrorKind::NumberOutOfRange(text.parse().unwrap_or(f64::INFINITY)))
            }
        }
    }
}
