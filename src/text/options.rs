//! How to read and write the text formats: [`ImportOptions`] and [`ExportOptions`], and what
//! an import gives back ([`Imported`], with its [`ImportReport`]).

use crate::handle_map::Id;
use crate::text::TextFormat;
#[cfg(doc)]
use crate::text::error::{ExportError, JsonError, JsonErrorKind};

/// How to read a document: its format ([`TextFormat::Json`] unless [`format`] says otherwise),
/// and how strictly, [`ImportOptions::strict`] (the default) or [`ImportOptions::lenient`].
///
/// [`format`]: ImportOptions::format
///
/// # Examples
///
/// ```
/// use datacomp::{Blob, ImportOptions, Store, TextFormat, Value};
///
/// let text = r#"{"armor_class": [{"type": "natural", "value": 17}], "title": null}"#;
/// assert!(Blob::import(text, &ImportOptions::strict()).is_err());
/// let sheet = Blob::import(text, &ImportOptions::lenient())?;
/// assert_eq!(sheet.get_str("armor_class.0.type"), Some("natural"));
/// assert_eq!(sheet.get_float("armor_class.0.value"), Some(17.0));
/// assert_eq!(sheet.get("title"), Some(Value::Null));
///
/// // A store import also says what the lenient rules changed, and where.
/// let mut store = Store::new();
/// let sjson = "armor_class = [{type = \"natural\", value = 17}]\ntitle = null";
/// let imported = store.import(sjson, &ImportOptions::lenient().format(TextFormat::Sjson))?;
/// assert_eq!(imported.report.converted_arrays, 1);
/// assert_eq!(imported.report.first_converted.as_deref(), Some("/armor_class"));
/// # Ok::<(), datacomp::JsonError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImportOptions {
    pub(crate) lenient: bool,
    pub(crate) format: TextFormat,
    /// Refuse a number that loses digits ([`JsonErrorKind::LosesDigits`]), where it is
    /// otherwise reported.
    pub(crate) exact: bool,
}

impl ImportOptions {
    /// The restricted format only, read as JSON: `null` ([`JsonErrorKind::Null`], whose
    /// message names the lenient import), arrays of anything but numbers, numbers past `f32`
    /// and numbers `f32` cannot hold within its rounding ([`JsonErrorKind::NotHeld`]: a whole
    /// number beyond 2^24 that it does not hold, a nonzero number that would be zero) are
    /// errors. A fraction that loses digits (`3.141592653589793`, stored as `3.1415927`) is
    /// read and reported, unless [`exact_numbers`](ImportOptions::exact_numbers) refuses it.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ImportOptions, TextFormat};
    ///
    /// let strict = ImportOptions::strict();
    /// assert!(!strict.is_lenient());
    /// assert_eq!((strict.get_format(), strict), (TextFormat::Json, ImportOptions::default()));
    /// ```
    #[must_use]
    pub const fn strict() -> ImportOptions {
        ImportOptions { lenient: false, format: TextFormat::Json, exact: false }
    }

    /// For existing data, read as JSON: an array holding anything but numbers becomes an
    /// object keyed by decimal index (`armor_class.0.value`, written back as an array), `null`
    /// is kept ([`Value::Null`](crate::Value::Null)), a number past
    /// `f32` (even past `f64`, as `1e400`) is stored as the largest `f32` of its sign, and a
    /// number `f32` cannot hold is stored as the nearest `f32` (`16777217` as `16777216`,
    /// `1e-50` as `0`). [`ImportReport`] counts each change.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, ImportOptions};
    ///
    /// let sheet = Blob::import(r#"{"gold": 1e39, "title": null}"#, &ImportOptions::lenient())?;
    /// assert_eq!((sheet.get_float("gold"), sheet.len()), (Some(f32::MAX), 2));
    /// assert_eq!(sheet.get("title"), Some(datacomp::Value::Null));
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    #[must_use]
    pub const fn lenient() -> ImportOptions {
        ImportOptions { lenient: true, format: TextFormat::Json, exact: false }
    }

    /// These options, reading `format`: the same rules, policies and errors for both.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, ImportOptions, TextFormat};
    ///
    /// let sjson = ImportOptions::strict().format(TextFormat::Sjson);
    /// let sheet = Blob::import("stats = { health = 100 }", &sjson)?;
    /// assert_eq!(sheet.get_float("stats.health"), Some(100.0));
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    #[must_use]
    pub const fn format(self, format: TextFormat) -> ImportOptions {
        ImportOptions { format, ..self }
    }

    /// These options refusing, when `exact`, a number that loses digits: a fraction whose
    /// nearest `f32`, written in its shortest form, is another decimal
    /// ([`JsonErrorKind::LosesDigits`]: `3.141592653589793` would come back as `3.1415927`;
    /// `0.1` and `19.99` come back as written). Without it such numbers are read and counted
    /// in [`ImportReport::lost_digits`].
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, ImportOptions};
    /// use datacomp::text::JsonErrorKind;
    ///
    /// let text = r#"{"pi": 3.141592653589793, "price": 19.99}"#;
    /// assert!(Blob::import(text, &ImportOptions::strict()).is_ok());
    /// let exact = ImportOptions::strict().exact_numbers(true);
    /// assert!(exact.is_exact_numbers());
    /// let err = Blob::import(text, &exact).unwrap_err();
    /// assert_eq!(
    ///     err.kind(),
    ///     &JsonErrorKind::LosesDigits { number: "3.141592653589793".into(), becomes: 3.1415927 }
    /// );
    /// assert_eq!(err.path(), "/pi");
    /// # Ok::<(), datacomp::JsonError>(())
    /// ```
    #[must_use]
    pub const fn exact_numbers(self, exact: bool) -> ImportOptions {
        ImportOptions { exact, ..self }
    }

    /// Whether a number that loses digits is refused.
    #[must_use]
    pub const fn is_exact_numbers(&self) -> bool {
        self.exact
    }

    /// Whether this is the lenient policy.
    #[must_use]
    pub const fn is_lenient(&self) -> bool {
        self.lenient
    }

    /// The format read.
    #[must_use]
    pub const fn get_format(&self) -> TextFormat {
        self.format
    }
}

/// How to write entities: the format ([`ExportOptions::json`] or [`ExportOptions::sjson`]),
/// the layout of JSON ([`pretty`]), and what becomes of a float that JSON has no number for
/// (NaN, infinity).
///
/// By default: JSON on one line, and a NaN or infinity is refused
/// ([`ExportError::NotFinite`], naming the entity and key), since any text written for it
/// would not read back as it; [`non_finite_as_null`] writes it as `null` instead.
///
/// [`pretty`]: ExportOptions::pretty
/// [`non_finite_as_null`]: ExportOptions::non_finite_as_null
///
/// # Examples
///
/// ```
/// use datacomp::{ExportOptions, ImportOptions, Store};
///
/// let mut store = Store::new();
/// let id = store.import(r#"{"hp": 7}"#, &ImportOptions::strict())?.ids[0];
/// let pretty = ExportOptions::json().pretty(true);
/// assert_eq!(store.export(id, &pretty)?, "{\n  \"hp\": 7\n}");
/// assert_eq!(store.export(id, &ExportOptions::sjson())?, "hp = 7");
///
/// store.get_mut(id).unwrap().set("hp", f32::NAN).unwrap();
/// assert!(store.export(id, &ExportOptions::json()).is_err());
/// let lossy = ExportOptions::json().non_finite_as_null();
/// assert_eq!(store.export(id, &lossy)?, r#"{"hp":null}"#);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExportOptions {
    pub(crate) format: TextFormat,
    /// JSON indented two spaces a level (SJSON has one layout).
    pub(crate) pretty: bool,
    /// Write a NaN or infinity as `null` (which does not read back) instead of refusing it.
    pub(crate) lossy: bool,
    /// Write each entity's resolved values, without its prototype link.
    pub(crate) flatten: bool,
}

impl ExportOptions {
    /// JSON on one line, refusing a NaN or infinity: the default.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ExportOptions, TextFormat};
    ///
    /// let json = ExportOptions::json();
    /// assert_eq!((json.get_format(), json.is_pretty(), json.is_lossy()), (TextFormat::Json, false, false));
    /// assert_eq!(json, ExportOptions::default());
    /// ```
    #[must_use]
    pub const fn json() -> ExportOptions {
        ExportOptions { format: TextFormat::Json, pretty: false, lossy: false, flatten: false }
    }

    /// SJSON, refusing a NaN or infinity: one member a line, unquoted names where they are
    /// identifiers, `=`, no commas, objects indented four spaces a level, arrays as arrays, as
    /// designers write character sheets. SJSON has this one layout: [`pretty`] changes nothing.
    ///
    /// [`pretty`]: ExportOptions::pretty
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ExportOptions, TextFormat};
    ///
    /// assert_eq!(ExportOptions::sjson().get_format(), TextFormat::Sjson);
    /// ```
    #[must_use]
    pub const fn sjson() -> ExportOptions {
        ExportOptions { format: TextFormat::Sjson, pretty: false, lossy: false, flatten: false }
    }

    /// These options with JSON laid out one member a line, indented two spaces a level as
    /// designers write fixtures (float arrays on one line), when `pretty`; on one line, with
    /// no spaces, when not.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::ExportOptions;
    ///
    /// assert!(ExportOptions::json().pretty(true).is_pretty());
    /// ```
    #[must_use]
    pub const fn pretty(self, pretty: bool) -> ExportOptions {
        ExportOptions { pretty, ..self }
    }

    /// These options writing a NaN or infinity as `null`: the text is always written, but such
    /// a value does not read back as itself (strict import refuses `null`, lenient reads it as
    /// [`Value::Null`](crate::Value::Null)).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::ExportOptions;
    ///
    /// assert!(ExportOptions::json().non_finite_as_null().is_lossy());
    /// ```
    #[must_use]
    pub const fn non_finite_as_null(self) -> ExportOptions {
        ExportOptions { lossy: true, ..self }
    }

    /// These options writing, when `flatten`, each entity whole: every value it reads through
    /// its prototypes, as its own, without `$prototype` or `$remove`; an export of every
    /// entity then leaves out the abstract ones (`"$abstract": true`), which only lend their
    /// values. `$id` and `$abstract` are written only by the entity that holds them. Without
    /// it (the default), an instance is written as what it stores: its overrides, the
    /// `$prototype` it reads the rest from, and the keys it removes (`$remove`); see
    /// [the module docs](crate::text#prototypes).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ExportOptions, ImportOptions, Store};
    ///
    /// let mut store = Store::new();
    /// let text = r#"[{"$id": "orc", "hp": 30, "armor": 4}, {"$prototype": "orc", "hp": 45}]"#;
    /// let ids = store.import(text, &ImportOptions::strict())?.ids;
    /// assert_eq!(store.export(ids[1], &ExportOptions::json())?, r#"{"$prototype":"orc","hp":45}"#);
    /// let flat = ExportOptions::json().flatten(true);
    /// assert!(flat.is_flatten());
    /// assert_eq!(store.export(ids[1], &flat)?, r#"{"hp":45,"armor":4}"#);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub const fn flatten(self, flatten: bool) -> ExportOptions {
        ExportOptions { flatten, ..self }
    }

    /// Whether each entity is written whole, through its prototypes.
    #[must_use]
    pub const fn is_flatten(&self) -> bool {
        self.flatten
    }

    /// The format written.
    #[must_use]
    pub const fn get_format(&self) -> TextFormat {
        self.format
    }

    /// Whether JSON is indented, one member a line.
    #[must_use]
    pub const fn is_pretty(&self) -> bool {
        self.pretty
    }

    /// Whether a NaN or infinity is written as `null` rather than refused.
    #[must_use]
    pub const fn is_lossy(&self) -> bool {
        self.lossy
    }
}

/// What [`Store::import`] gives back: the new entities' handles, in document order, and what
/// the import changed to fit the format.
///
/// [`Store::import`]: crate::store::Store::import
///
/// # Examples
///
/// ```
/// use datacomp::{ImportOptions, Store};
/// use datacomp::text::Imported;
///
/// let mut store = Store::new();
/// let Imported { ids, report } = store.import(r#"[{"hp": 1}, {"hp": [{}]}]"#, &ImportOptions::lenient())?;
/// assert_eq!((ids.len(), report.converted_arrays), (2, 1));
/// assert_eq!(report.first_empty_object.as_deref(), Some("/1/hp/0"));
/// # Ok::<(), datacomp::JsonError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Imported {
    /// The handles of the entities read, in document order.
    pub ids: Vec<Id>,
    /// What the import changed (a strict import changes no value: it counts empty objects and
    /// numbers that lose digits).
    pub report: ImportReport,
}

/// What an import changed to fit the format: for each kind of change, how many and the path
/// (a JSON Pointer, as [`JsonError::path`]) of the first, so that a designer can find them.
///
/// # Examples
///
/// ```
/// use datacomp::{ImportOptions, Store};
///
/// let mut store = Store::new();
/// let text = r#"{"gold": [1, 16777217], "dust": 1e-50, "stars": 1e400}"#;
/// let imported = store.import(text, &ImportOptions::lenient())?;
/// let sheet = store.get(imported.ids[0]).unwrap();
/// assert_eq!(sheet.get_floats("gold"), Some(&[1.0, 16_777_216.0][..]));
/// assert_eq!((sheet.get_float("dust"), sheet.get_float("stars")), (Some(0.0), Some(f32::MAX)));
/// assert_eq!(imported.report.rounded_numbers, 3);
/// assert_eq!(imported.report.first_rounded.as_deref(), Some("/gold/1"));
///
/// // Fractions that lose digits, strict or lenient: counted, with an example.
/// let text = r#"{"pi": 3.141592653589793, "price": 19.99, "third": [0.3333333333333333]}"#;
/// let report = store.import(text, &ImportOptions::strict())?.report;
/// assert_eq!(report.lost_digits, 2);
/// assert_eq!(report.first_lost_digits.as_deref(), Some("/pi"));
/// assert_eq!(report.lost_digits_example.as_deref(), Some("3.141592653589793 -> 3.1415927"));
///
/// // Empty objects store nothing, and are counted; nulls are kept.
/// let text = r#"{"title": null, "buffs": {}, "stats": {"hp": 3, "extra": {}}}"#;
/// let imported = store.import(text, &ImportOptions::lenient())?;
/// let report = imported.report;
/// assert_eq!(store.get(imported.ids[0]).unwrap().len(), 2);
/// assert_eq!(report.empty_objects, 2);
/// assert_eq!(report.first_empty_object.as_deref(), Some("/buffs"));
/// # Ok::<(), datacomp::JsonError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImportReport {
    /// Arrays of other things than numbers, turned into objects keyed by index (and written
    /// back as arrays).
    pub converted_arrays: usize,
    /// The path of the first such array.
    pub first_converted: Option<String>,
    /// Numbers stored as other than they were written, beyond `f32`'s rounding of a fraction:
    /// past `f32` (stored as the largest `f32` of their sign), whole numbers `f32` does not
    /// hold, and nonzero numbers too small for it (stored as the nearest `f32`, zero).
    pub rounded_numbers: usize,
    /// The JSON path (a JSON Pointer, as [`JsonError::path`]) of the first such number.
    pub first_rounded: Option<String>,
    /// Fractions held within `f32`'s rounding but written back as another decimal
    /// (`3.141592653589793` as `3.1415927`), in strict and lenient imports alike (refused
    /// with [`ImportOptions::exact_numbers`]).
    pub lost_digits: usize,
    /// The path of the first such number.
    pub first_lost_digits: Option<String>,
    /// The first such number and what it is stored as: `3.141592653589793 -> 3.1415927`.
    pub lost_digits_example: Option<String>,
    /// Objects without members (`{}`) inside an entity, left out: an object's members are its
    /// keys, so an empty one stores nothing, and exports without it. Counted by strict imports
    /// too, which store them the same way. An entity that is itself `{}` is kept, with no keys.
    pub empty_objects: usize,
    /// The path of the first such object.
    pub first_empty_object: Option<String>,
}
