//! SJSON ("simplified JSON"), the form the Bitsquid and Stingray engines write their data in:
//! import through the JSON importer (the same rules, policies and errors), and export.
//!
//! ```text
//! name = "The One"        // the top level is an object without braces
//! stats = {
//!     health = 100        // `=` (or `:`) after a name; commas are optional
//!     mana = 200
//! }
//! color = [0 0.5 0.5 0.7] /* an array of numbers */
//! ```
//!
//! What the reader accepts:
//! - the top level is an object whose braces may be left out; a braced object, or (in a store
//!   import) an array of objects, is read too: every JSON document is an SJSON document;
//! - a member is a name, `=` or `:`, and a value; a name is unquoted when it is made of ASCII
//!   letters, digits and `_`, else a quoted string;
//! - members and array elements are separated by whitespace, or one comma (a trailing comma is
//!   allowed);
//! - `// comments` to the end of the line and `/* comments */` (not nested) wherever
//!   whitespace may go;
//! - values are JSON's: strings in double quotes with JSON's escapes, on one line (or
//!   `"""verbatim, over lines"""`), numbers in JSON's form, `true`, `false`, `null`, objects
//!   and arrays; a string value needs its quotes;
//! - an empty document is an entity with no keys; objects and arrays nest at most 127 deep,
//!   as in JSON.
//!
//! The reader is this crate's own (`read.rs`): a tokenizer that is a serde `Deserializer`, so
//! that values go straight into blobs through the JSON importer. The `serde_sjson` crate was
//! weighed (1.2.2) and left: it reads no number with a fraction or an exponent (`0.5` stops
//! at `.`, so the sheet above fails), no `:`, no braced or array top level (so no JSON
//! document), decodes no escapes, has no nesting limit (deep input overflows the stack), and
//! is GPL-3.0, which this crate's MIT/Apache users could not take.

mod read;
mod write;

use crate::blob::{Blob, BlobRef};
use crate::handle_map::Id;
use crate::store::Store;
use crate::text::error::{ExportError, JsonError};
use crate::text::options::{ImportOptions, ImportReport};
use crate::text::read::blob_from;

impl Blob {
    /// Imports one entity from an SJSON document, strictly: the rules of
    /// [`from_json`](Blob::from_json), for the SJSON form (see the crate's README),
    /// top-level raw-key members (`"#0000002a" = 1`) included.
    ///
    /// # Errors
    ///
    /// A [`JsonError`] with the path and line and column: [`JsonErrorKind::Syntax`] for
    /// text that is not SJSON, the other kinds as for JSON.
    ///
    /// [`JsonErrorKind::Syntax`]: crate::JsonErrorKind::Syntax
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    ///
    /// let sheet = Blob::from_sjson(
    ///     "name = \"The One\"
    ///      stats = {
    ///          health = 100
    ///          mana = 200
    ///      }
    ///      color = [0 0.5 0.5 0.7] // red, green, blue, alpha",
    /// )?;
    /// assert_eq!(sheet.get_str("name"), Some("The One"));
    /// assert_eq!(sheet.get_float("stats.mana"), Some(200.0));
    /// assert_eq!(sheet.get_floats("color"), Some(&[0.0, 0.5, 0.5, 0.7][..]));
    ///
    /// let err = Blob::from_sjson("stats = {\n    health =\n}").unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "/stats/health (line 3, column 1): expected a value after `=`, found `}`"
    /// );
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    pub fn from_sjson(text: &str) -> Result<Blob, JsonError> {
        Blob::from_sjson_with(text, &ImportOptions::strict()).map(|(blob, _)| blob)
    }

    /// Imports one entity from an SJSON document under `options`, and reports what a lenient
    /// import changed.
    ///
    /// # Errors
    ///
    /// As [`from_sjson`](Blob::from_sjson).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, ImportOptions};
    ///
    /// let text = "armor_class = [{type = \"natural\", value = 17}]\ntitle = null";
    /// let (sheet, report) = Blob::from_sjson_with(text, &ImportOptions::lenient())?;
    /// assert_eq!(sheet.get_float("armor_class.0.value"), Some(17.0));
    /// assert_eq!((report.converted_arrays, report.skipped_nulls), (1, 1));
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    pub fn from_sjson_with(
        text: &str,
        options: &ImportOptions,
    ) -> Result<(Blob, ImportReport), JsonError> {
        blob_from(*options, |entity| read::read_sjson(text, entity)).map(|(read, _)| read)
    }
}

impl Store {
    /// Imports entities from SJSON: a document is one entity, or, when its top level is an
    /// array, one entity per object in it. Returns their handles in document order. Atomic,
    /// and keeping key names, as [`import_json`](Store::import_json); a top-level member
    /// `"#0000002a"` is that raw key, unnamed, as there.
    ///
    /// # Errors
    ///
    /// A [`JsonError`] with the path (led by the entity's position in an array) and line and
    /// column; the store is unchanged.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ImportOptions, JsonErrorKind, Store};
    ///
    /// let mut store = Store::new();
    /// let ids = store.import_sjson("name = \"Orc\"\nstats = { health = 30 }", &ImportOptions::strict())?;
    /// assert_eq!(store.get(ids[0]).unwrap().get_float("stats.health"), Some(30.0));
    ///
    /// let err = store.import_sjson("name = \"Imp\n", &ImportOptions::strict()).unwrap_err();
    /// assert_eq!((err.path(), err.line(), err.column()), ("/name", 1, 8));
    /// assert_eq!(
    ///     err.kind(),
    ///     &JsonErrorKind::Syntax("unterminated string: the line ends before its closing `\"`".into())
    /// );
    /// assert_eq!(store.len(), 1, "nothing of the failed import is kept");
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    pub fn import_sjson(
        &mut self,
        text: &str,
        options: &ImportOptions,
    ) -> Result<Vec<Id>, JsonError> {
        self.import_sjson_with_report(text, options).map(|(ids, _)| ids)
    }

    /// As [`import_sjson`](Store::import_sjson), also reporting what a lenient import changed.
    ///
    /// # Errors
    ///
    /// As [`import_sjson`](Store::import_sjson).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ImportOptions, Store};
    ///
    /// let mut store = Store::new();
    /// let (ids, report) = store.import_sjson_with_report(
    ///     "[{gold = 1e39} {gold = 2}]",
    ///     &ImportOptions::lenient(),
    /// )?;
    /// assert_eq!(store.get(ids[0]).unwrap().get_float("gold"), Some(f32::MAX));
    /// assert_eq!((ids.len(), report.rounded_numbers), (2, 1));
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    pub fn import_sjson_with_report(
        &mut self,
        text: &str,
        options: &ImportOptions,
    ) -> Result<(Vec<Id>, ImportReport), JsonError> {
        self.import_with(text, *options, false, read::read_sjson)
    }

    /// The entity of `id` as an SJSON document, nested by its keys' names as
    /// [`export_json`](Store::export_json) nests it: one member a line, unquoted names where
    /// they are identifiers, `=`, no commas, objects indented four spaces a level, arrays as
    /// arrays (of values on one line, of objects one element a line), whole numbers without a
    /// fraction. [`import_sjson`](Store::import_sjson) reads it back as the same entity.
    ///
    /// A NaN or infinity, which neither JSON nor SJSON has a number for, is written as `null`,
    /// which does not read back (strict import refuses it, lenient drops it):
    /// [`try_export_sjson`](Store::try_export_sjson) refuses such an entity instead, naming
    /// the key.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ImportOptions, Store};
    ///
    /// let mut store = Store::new();
    /// let text = r#"{"name": "The One", "stats": {"health": 100, "mana": 200},
    ///               "status_effects": {"drunk": true}, "color": [0, 0.5, 0.5, 0.7],
    ///               "tags": ["hero", "tall"], "armor": [{"type": "natural", "value": 17}]}"#;
    /// let id = store.import_json(text, &ImportOptions::lenient())?[0];
    /// let exported = store.export_sjson(id).unwrap();
    /// assert_eq!(
    ///     exported,
    ///     "name = \"The One\"
    /// stats = {
    ///     health = 100
    ///     mana = 200
    /// }
    /// status_effects = {
    ///     drunk = true
    /// }
    /// color = [0 0.5 0.5 0.7]
    /// tags = [\"hero\" \"tall\"]
    /// armor = [
    ///     {
    ///         type = \"natural\"
    ///         value = 17
    ///     }
    /// ]"
    /// );
    /// let mut copy = Store::new();
    /// let again = copy.import_sjson(&exported, &ImportOptions::lenient())?[0];
    /// assert_eq!(copy.export_json(again), store.export_json(id));
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    #[must_use]
    pub fn export_sjson(&self, id: Id) -> Option<String> {
        Some(self.export_blob_sjson(self.get(id)?))
    }

    /// Any blob as an SJSON document, nested by the names this store knows for its keys, as
    /// [`export_sjson`](Store::export_sjson) writes the store's own entities (a NaN or
    /// infinity as `null`: [`try_export_blob_sjson`](Store::try_export_blob_sjson) refuses
    /// it).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, ImportOptions, Key, Store};
    ///
    /// let mut store = Store::new();
    /// store.import_sjson("stats = { health = 1 }", &ImportOptions::strict())?;
    /// let mut sheet = Blob::new();
    /// sheet.set("stats.health", 75.5);
    /// sheet.set(Key::from_raw(42), true);
    /// assert_eq!(
    ///     store.export_blob_sjson(sheet.as_blob_ref()),
    ///     "stats = {\n    health = 75.5\n}\n\"#0000002a\" = true"
    /// );
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    #[must_use]
    pub fn export_blob_sjson(&self, blob: BlobRef<'_>) -> String {
        self.write_blob_with(blob, false, write::write_entity).unwrap_or_default()
    }

    /// Every entity, in iteration order, as one SJSON document: an array of objects, one
    /// member a line, that [`import_sjson`](Store::import_sjson) reads back into the same
    /// entities (under new ids), unless one holds a NaN or infinity, written as `null`
    /// ([`try_export_all_sjson`](Store::try_export_all_sjson) refuses it).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ImportOptions, Store};
    ///
    /// let mut store = Store::new();
    /// store.import_json(r#"[{"name": "Orc"}, {}]"#, &ImportOptions::strict())?;
    /// let exported = store.export_all_sjson();
    /// assert_eq!(exported, "[\n    {\n        name = \"Orc\"\n    }\n    {}\n]");
    ///
    /// let mut copy = Store::new();
    /// copy.import_sjson(&exported, &ImportOptions::strict())?;
    /// assert_eq!(copy.export_all_sjson(), exported);
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    #[must_use]
    pub fn export_all_sjson(&self) -> String {
        self.export_all_sjson_checked(false).unwrap_or_default()
    }

    fn export_all_sjson_checked(&self, checked: bool) -> Result<String, ExportError> {
        if self.is_empty() {
            return Ok("[]".to_owned());
        }
        self.write_all_with(checked, [b"[\n", b"", b"]"], write::write_element)
    }
}

/// SJSON exports that refuse what SJSON cannot hold, as the JSON ones do.
impl Store {
    /// The entity of `id` as [`export_sjson`](Store::export_sjson) writes it, or why it cannot
    /// be written: a float that SJSON (as JSON) has no number for (NaN, infinity) is refused,
    /// naming the entity and key, as [`try_export_json`](Store::try_export_json) refuses it.
    ///
    /// # Errors
    ///
    /// [`ExportError::Handle`] if `id` names no live entity; [`ExportError::NotFinite`] for a
    /// NaN or infinity, the first in the entity's key order.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ExportError, ImportOptions, Store};
    ///
    /// let mut store = Store::new();
    /// let id = store.import_sjson("hp = 135\nspeed = 0.5", &ImportOptions::strict())?[0];
    /// assert_eq!(store.try_export_sjson(id)?, "hp = 135\nspeed = 0.5");
    ///
    /// store.get_mut(id).unwrap().set("speed", f32::NAN);
    /// let err = store.try_export_sjson(id).unwrap_err();
    /// assert!(matches!(&err, ExportError::NotFinite { key, .. } if key == "speed"));
    /// assert_eq!(err.to_string(), "entity 0v0t1: speed is NaN, which JSON has no number for");
    /// store.remove(id);
    /// assert!(matches!(store.try_export_sjson(id), Err(ExportError::Handle(_))));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn try_export_sjson(&self, id: Id) -> Result<String, ExportError> {
        let blob = self.try_get(id).map_err(ExportError::Handle)?;
        self.write_blob_with(blob, true, write::write_entity)
            .map_err(|(key, x)| self.not_finite(Some(id), key, x))
    }

    /// Any blob as [`try_export_sjson`](Store::try_export_sjson) writes the store's own
    /// entities.
    ///
    /// # Errors
    ///
    /// [`ExportError::NotFinite`] for a NaN or infinity, with no entity.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, ExportError, Store};
    ///
    /// let store = Store::new();
    /// let mut sheet = Blob::new();
    /// sheet.set("position", [1.0, 2.5]);
    /// assert_eq!(store.try_export_blob_sjson(sheet.as_blob_ref())?, "\"#38e2e10c\" = [1 2.5]");
    /// sheet.set("position", [1.0, f32::INFINITY]);
    /// let err = store.try_export_blob_sjson(sheet.as_blob_ref()).unwrap_err();
    /// assert!(matches!(err, ExportError::NotFinite { entity: None, value, .. } if value == f32::INFINITY));
    /// # Ok::<(), ExportError>(())
    /// ```
    pub fn try_export_blob_sjson(&self, blob: BlobRef<'_>) -> Result<String, ExportError> {
        self.write_blob_with(blob, true, write::write_entity)
            .map_err(|(key, x)| self.not_finite(None, key, x))
    }

    /// Every entity as [`export_all_sjson`](Store::export_all_sjson) writes them, or the
    /// first float (in iteration order) that SJSON has no number for.
    ///
    /// # Errors
    ///
    /// [`ExportError::NotFinite`] naming the entity and key.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ImportOptions, Store};
    ///
    /// let mut store = Store::new();
    /// let ids = store.import_sjson("[{x = 1} {x = 2.5}]", &ImportOptions::strict())?;
    /// assert_eq!(
    ///     store.try_export_all_sjson()?,
    ///     "[\n    {\n        x = 1\n    }\n    {\n        x = 2.5\n    }\n]"
    /// );
    /// store.get_mut(ids[1]).unwrap().set("x", f32::NEG_INFINITY);
    /// assert_eq!(
    ///     store.try_export_all_sjson().unwrap_err().to_string(),
    ///     "entity 1v0t1: x is -inf, which JSON has no number for"
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn try_export_all_sjson(&self) -> Result<String, ExportError> {
        self.export_all_sjson_checked(true)
    }
}
