#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(clippy::pedantic)]
#![allow(clippy::cast_possible_truncation, clippy::module_name_repetitions)]

// A blob is written to disk as its in-memory words, and float payloads are lent as `&[f32]`
// straight from those words: both need the words to be little-endian.
#[cfg(not(target_endian = "little"))]
compile_error!(
    "datacomp stores blobs as little-endian words and supports little-endian targets only"
);

pub mod blob;
pub mod error;
pub mod file;
pub mod format;
pub mod handle_map;
mod history;
#[cfg(feature = "json")]
mod json;
mod key;
mod migrate;
mod names;
#[cfg(feature = "json")]
mod number;
pub mod query;
#[cfg(feature = "json")]
mod sjson;
mod store;
pub mod text;
mod value;

pub use blob::BlobError;
pub use blob::{
    Blob, BlobRef, Conflict, Conflicts, Iter as BlobIter, Keys as BlobKeys, MAX_BYTES, Patch,
    PatchTarget, RegionKind, Side,
};
pub use error::Error;
pub use file::SaveFile;
pub use format::{
    FileError, LazyStoreView, LoadError, LoadOptions, Salvage, SavedKeyNames, StoreError, StoreView,
};
pub use handle_map::HandleError;
pub use handle_map::{
    Drain as HandleMapDrain, HandleMap, HandleMapError, Id, Iter as HandleMapIter,
    IterMut as HandleMapIterMut, RawHandleMap, RawHeader,
};
pub use history::{Changes, History, Mark, Snapshot};
#[cfg(feature = "json")]
pub use json::{
    ExportError, ExportOptions, ImportOptions, ImportReport, JsonError, JsonErrorKind, JsonStyle,
};
pub use key::KeyError;
pub use key::{AsKey, Key, KeyPath, MAX_PATH_SEGMENTS};
pub use migrate::{MigrateError, MigrationReport, MigrationStep, Migrations, StepReport};
#[cfg(feature = "json")]
pub use number::JsonF32;
pub use query::{Query, QueryError, QueryErrorKind};
pub use store::{BlobMut, Store, StorePatch, StoreStats};
pub use value::{AsValue, OwnedValue, Value, ValueType};
