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

use crate::json::{self, Tree};
use crate::{Blob, BlobRef, Id, ImportOptions, ImportReport, JsonError, Store};

impl Blob {
    /// Imports one entity from an SJSON document, strictly: the rules of
    /// [`from_json`](Blob::from_json), for the SJSON form (see the crate's README).
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
        json::blob_from(*options, |entity| read::read_sjson(text, entity)).map(|(read, _)| read)
    }
}

impl Store {
    /// Imports entities from SJSON: a document is one entity, or, when its top level is an
    /// array, one entity per object in it. Returns their handles in document order. Atomic,
    /// and keeping key names, as [`import_json`](Store::import_json).
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
    /// they are identifiers, `=`, no commas, objects indented four spaces a level, float
    /// arrays on one line, whole numbers without a fraction. [`import_sjson`](Store::import_sjson)
    /// reads it back as the same entity. (A NaN or infinity, which neither JSON nor SJSON has a
    /// literal for, is written as `null`.)
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ImportOptions, Store};
    ///
    /// let mut store = Store::new();
    /// let text = r#"{"name": "The One", "stats": {"health": 100, "mana": 200},
    ///               "status_effects": {"drunk": true}, "color": [0, 0.5, 0.5, 0.7]}"#;
    /// let id = store.import_json(text, &ImportOptions::strict())?[0];
    /// assert_eq!(
    ///     store.export_sjson(id).unwrap(),
    ///     "name = \"The One\"
    /// stats = {
    ///     health = 100
    ///     mana = 200
    /// }
    /// status_effects = {
    ///     drunk = true
    /// }
    /// color = [0 0.5 0.5 0.7]"
    /// );
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    #[must_use]
    pub fn export_sjson(&self, id: Id) -> Option<String> {
        Some(self.export_blob_sjson(self.get(id)?))
    }

    /// Any blob as an SJSON document, nested by the names this store knows for its keys, as
    /// [`export_sjson`](Store::export_sjson) writes the store's own entities.
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
        let mut tree = Tree::for_names(self.names(), false);
        self.export_tree(blob, &mut tree);
        let mut out = Vec::new();
        write::write_entity(&tree, &mut out);
        write::into_string(out)
    }

    /// Every entity, in iteration order, as one SJSON document: an array of objects, one
    /// member a line, that [`import_sjson`](Store::import_sjson) reads back into the same
    /// entities (under new ids).
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
        if self.is_empty() {
            return "[]".to_owned();
        }
        let mut out = Vec::with_capacity(self.arena().len() * 4 * 2);
        let mut tree = Tree::for_names(self.names(), true);
        out.extend_from_slice(b"[\n");
        for (_, blob) in self.iter() {
            self.export_tree(blob, &mut tree);
            write::write_element(&tree, &mut out);
        }
        out.push(b']');
        write::into_string(out)
    }
}
