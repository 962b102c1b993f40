//! How to read and write the text formats: [`ImportOptions`], [`ExportOptions`], and what a
//! lenient import changed ([`ImportReport`]).

#[cfg(doc)]
use super::error::{ExportError, JsonError, JsonErrorKind};

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
