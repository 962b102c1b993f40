//! The text formats: JSON and SJSON, read into blobs and written from them; and how error
//! messages show untrusted text to people ([`Escaped`], [`Shortened`]).
//!
//! # The formats
//!
//! Both hold the `DataComponent`'s data: booleans, numbers (stored as `f32`), strings,
//! objects (flattened into dotted keys: `{"stats": {"health": 100}}` is the key
//! `stats.health`) and arrays of numbers. [`TextFormat::Json`] is JSON. [`TextFormat::Sjson`]
//! is SJSON ("simplified JSON"), the form the Bitsquid and Stingray engines write their data
//! in:
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
//! What the SJSON reader accepts:
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
//! # Strict and lenient
//!
//! An import reads the restricted format only ([`ImportOptions::strict`]: `null`, arrays of
//! anything but numbers and numbers `f32` does not hold are errors), or existing data
//! ([`ImportOptions::lenient`]: `null` is kept as [`Value::Null`](crate::Value::Null), such
//! arrays become objects keyed by index and are written back as arrays, numbers are stored as
//! the nearest `f32`), and reports what it changed, with the first path of each kind of
//! change ([`ImportReport`]). A number is never changed silently: a fraction that `f32`
//! writes back as another decimal (`3.141592653589793` as `3.1415927`) is reported by every
//! import, and refused with [`ImportOptions::exact_numbers`].
//! Either way an error says where: a [`JsonError`] has the path (a JSON Pointer), the line
//! and the column.
//!
//! # Import and export
//!
//! One import and one export per target, the choices in an options struct:
//! - [`Store::import`] reads a document (one entity, or an array of them) into a store, all or
//!   nothing, keeping the keys' names; [`Blob::import`] reads one entity into a blob.
//! - [`Store::export`] writes one entity, [`Store::export_all`] every entity (as a document
//!   that imports back), [`Store::export_at`] what an entity holds at a path, and
//!   [`export_blob`] any blob, nested by a store's names. [`ExportOptions`] picks the format,
//!   the layout, and whether a NaN or infinity (which neither format has a number for) is
//!   refused ([`ExportError::NotFinite`]) or written as `null`.
//!
//! ```
//! use datacomp::{ExportOptions, ImportOptions, Store, TextFormat};
//!
//! let mut store = Store::new();
//! let sjson = ImportOptions::strict().format(TextFormat::Sjson);
//! let ids = store.import("name = \"Orc\"\nstats = { health = 30 }", &sjson)?.ids;
//! assert_eq!(store.export(ids[0], &ExportOptions::json())?, r#"{"name":"Orc","stats":{"health":30}}"#);
//! assert_eq!(store.export_at(ids[0], "stats.health", &ExportOptions::json())?, "30");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Prototypes
//!
//! An entity's top level may hold six members of its own (deeper, and any other `$` name such
//! as `$schema`, are names like any other):
//!
//! - `"$id": "orc"`: the entity's stable name, by which instances name it. Stored as the
//!   string key `$id` ([`ID_KEY`](crate::store::ID_KEY)) of its own blob, so it lives in saves,
//!   diffs and merges as any key does, and is never inherited (an instance reads its own `$id`
//!   or none). One entity of a store has a given `$id`: an import refuses a second.
//! - `"$prototype": "orc"`: the entity is an instance of the entity whose `$id` that is, in
//!   the same document (before or after it) or in the store already. Not a key: it is the
//!   store's link ([`Store::prototype`](crate::Store::prototype)).
//! - `"$abstract": true`: a base that only lends its values, stored as the key `$abstract`
//!   ([`ABSTRACT_KEY`](crate::store::ABSTRACT_KEY)), never inherited. It is an entity like any
//!   other to the library; what leaves it out is a listing: `datacomp list` and `datacomp query` (unless `--all`) and an export of
//!   every entity flattened.
//! - `"$remove": ["status_effects.poisoned", "/a.b/c"]`: keys the instance does not inherit
//!   (tombstones), each a dotted path, a JSON Pointer or a raw `#1a2b3c4d`. A `null` is a
//!   value (of a lenient import), not a removal.
//! - `"$relative": {"stats": {"health": 10}}` and `"$proportional": {"stats": {"armor":
//!   1.5}}`: numbers added to, or multiplied with, the number the prototype holds at that key
//!   (through its chain). They are resolved once, by the import: the instance stores the
//!   result as its own value, which does not follow a later change of the prototype's, and
//!   exports write the result.
//!
//! In SJSON these names are quoted (`"$prototype" = "orc"`): a bare name is letters, digits
//! and `_`.
//!
//! A key set through the API at one of these names (or under one) would be read back as the
//! member, not as its value: every export refuses it ([`ExportError::ReservedKey`], naming
//! the entity and the key's path), but a `$id` holding a non-empty string and a `$abstract`
//! holding a boolean, which mean what they say. Rename such a key (no escape is read).
//!
//! `$id` and `$abstract` belong to the entity that holds them: an instance reads them through
//! its prototype as any key ([`Store::resolved`](crate::Store::resolved)), but a flattened
//! export and `datacomp flatten` do not copy them into it.
//!
//! The links are resolved when the whole document has been read, before anything reaches the
//! store: O(n) in the document's entities and the store's (one hash map of names). An
//! unknown name ([`JsonErrorKind::UnknownPrototype`]), a `$id` taken
//! ([`JsonErrorKind::DuplicateId`]), a cycle ([`JsonErrorKind::PrototypeCycle`]), a chain of
//! more than [`MAX_CHAIN`](crate::store::MAX_CHAIN) prototypes above an entity
//! ([`JsonErrorKind::ChainTooLong`]), a number the prototype does not hold
//! ([`JsonErrorKind::NoBaseNumber`]) fail the import, which changes nothing, with the path,
//! line and column of the member at fault.
//!
//! An export writes an instance as what it stores: `$prototype` first (its prototype's
//! `$id`: a prototype without one is [`ExportError::UnnamedPrototype`]), its own values, and
//! `$remove` last; [`ExportOptions::flatten`] writes each entity whole instead. Either way
//! the document imports back into an equal store.
//!
//! ```
//! use datacomp::{ExportOptions, ImportOptions, Store};
//!
//! let mut store = Store::new();
//! let text = r#"[
//!     {"$prototype": "goblin", "name": "Snaga", "$remove": ["flags.poisoned"]},
//!     {"$id": "goblin", "$abstract": true, "stats": {"health": 7}, "flags": {"poisoned": true}},
//!     {"$prototype": "goblin", "name": "Grishnak", "$relative": {"stats": {"health": 2}}}
//! ]"#;
//! let ids = store.import(text, &ImportOptions::strict())?.ids;
//! assert_eq!(store.prototype(ids[0]), Some(ids[1]));
//! let snaga = store.resolved(ids[0]).unwrap();
//! assert_eq!((snaga.get_float("stats.health"), snaga.get_bool("flags.poisoned")), (Some(7.0), None));
//! assert_eq!(store.resolved(ids[2]).unwrap().get_float("stats.health"), Some(9.0));
//! assert_eq!(
//!     store.export(ids[0], &ExportOptions::json())?,
//!     r#"{"$prototype":"goblin","name":"Snaga","$remove":["flags.poisoned"]}"#
//! );
//! assert_eq!(
//!     store.export(ids[2], &ExportOptions::json().flatten(true))?,
//!     r#"{"name":"Grishnak","stats":{"health":9},"flags":{"poisoned":true}}"#
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Where the code is
//!
//! - `options.rs`, `error.rs`: the options, reports and errors of import and export.
//! - `read.rs`: the importer's entry points ([`Blob::import`]); `importer.rs`: its state and
//!   rules; `entity.rs`: the serde seeds that drive it, writing each value straight into a
//!   blob as it is read (no `serde_json::Value` tree).
//! - `write.rs`: an entity's tree and the JSON writer; `plan.rs`: export plans, an entity's
//!   JSON without its values, made once per key layout.
//! - `number.rs`: numbers as JSON holds them ([`JsonF32`]).
//! - `link.rs`: prototypes' reserved members and what a document said with them;
//!   `resolve.rs`: the links resolved once the document has been read; `linked.rs`: exports
//!   of instances (with `$prototype` and `$remove`) and flattened ones.
//! - `store.rs`: the store's import and exports, built on its public API and a few
//!   crate-internal accessors.
//! - `sjson/`: the SJSON reader and writer.
//! - `shown.rs`: [`Escaped`] and [`Shortened`], compiled with or without the `json` feature.
//!
//! [`Store::import`]: crate::store::Store::import
//! [`Store::export`]: crate::store::Store::export
//! [`Store::export_all`]: crate::store::Store::export_all
//! [`Store::export_at`]: crate::store::Store::export_at
//! [`Blob::import`]: crate::blob::Blob::import

#[cfg(feature = "json")]
mod entity;
#[cfg(feature = "json")]
mod error;
#[cfg(feature = "json")]
pub(crate) mod id_index;
#[cfg(feature = "json")]
mod importer;
#[cfg(feature = "json")]
mod link;
#[cfg(feature = "json")]
mod linked;
#[cfg(feature = "json")]
mod number;
#[cfg(feature = "json")]
mod options;
#[cfg(feature = "json")]
pub(crate) mod plan;
#[cfg(feature = "json")]
pub(crate) mod read;
#[cfg(feature = "json")]
mod resolve;
pub(crate) mod shown;
#[cfg(feature = "json")]
mod sjson;
#[cfg(feature = "json")]
mod store;
#[cfg(feature = "json")]
mod write;

#[cfg(feature = "json")]
pub use error::{ExportError, JsonError, JsonErrorKind};
#[cfg(feature = "json")]
pub use number::JsonF32;
#[cfg(feature = "json")]
pub use options::{ExportOptions, ImportOptions, ImportReport, Imported};
pub use shown::{Escaped, SHORTENED_BYTES, Shortened};
#[cfg(feature = "json")]
pub use store::export_blob;

/// The text formats: what [`ImportOptions::format`] reads and [`ExportOptions`] writes.
///
/// # Examples
///
/// ```
/// use datacomp::{Blob, ImportOptions, TextFormat};
///
/// let options = ImportOptions::strict().format(TextFormat::Sjson);
/// assert_eq!(Blob::import("hp = 7", &options)?.get_float("hp"), Some(7.0));
/// assert_eq!(TextFormat::default(), TextFormat::Json);
/// # Ok::<(), datacomp::JsonError>(())
/// ```
#[cfg(feature = "json")]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TextFormat {
    /// JSON (RFC 8259).
    #[default]
    Json,
    /// SJSON, the Bitsquid and Stingray form: see the [module docs](self).
    Sjson,
}
