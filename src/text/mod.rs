//! The text formats: JSON and SJSON import and export, and showing untrusted text to people.
//!
//! - `shown.rs`: [`Escaped`] and [`Shortened`], how error messages show names (always
//!   compiled, with or without the `json` feature).
//! - `options.rs`, `error.rs`: the options, reports and errors of import and export.
//! - `read.rs`: the entry points of the importer; `importer.rs`: its state and rules;
//!   `entity.rs`: the serde seeds that drive it.
//! - `write.rs`: an entity's tree and the writer of JSON; `plan.rs`: export plans, an
//!   entity's JSON without its values, made once per key layout.
//! - `number.rs`: numbers as JSON holds them ([`JsonF32`]).
//! - `store.rs`: `Store`'s import and exports.
//! - `sjson/`: the SJSON reader and writer.

#[cfg(feature = "json")]
mod entity;
#[cfg(feature = "json")]
pub(crate) mod error;
#[cfg(feature = "json")]
mod importer;
#[cfg(feature = "json")]
pub(crate) mod number;
#[cfg(feature = "json")]
pub(crate) mod options;
#[cfg(feature = "json")]
mod plan;
#[cfg(feature = "json")]
pub(crate) mod read;
pub(crate) mod shown;
#[cfg(feature = "json")]
mod sjson;
#[cfg(feature = "json")]
mod store;
#[cfg(feature = "json")]
pub(crate) mod write;

#[cfg(feature = "json")]
pub use error::{ExportError, JsonError, JsonErrorKind};
#[cfg(feature = "json")]
pub use number::JsonF32;
#[cfg(feature = "json")]
pub use options::{ExportOptions, ImportOptions, ImportReport, JsonStyle};
pub use shown::{Escaped, SHORTENED_BYTES, Shortened};
