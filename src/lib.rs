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
mod column;
mod cursor;
mod error;
pub mod file;
pub mod handle_map;
mod history;
mod key;
mod load;
mod migrate;
mod names;
mod query;
mod store;
pub mod text;
mod upgrade;
mod value;

pub use blob::{
    Blob, BlobRef, Conflict, Conflicts, Iter as BlobIter, Keys as BlobKeys, MAX_BYTES, Patch,
    PatchTarget, RegionKind, Side,
};
pub use cursor::KeyCursor;
pub use error::{
    BlobError, Error, HandleError, KeyCollision, LoadError, PatchError, PathConflict, PathTooDeep,
    RawKeyName,
};
pub use file::{FileError, SaveFile};
pub use handle_map::{
    Drain as HandleMapDrain, HandleMap, HandleMapError, Id, Iter as HandleMapIter,
    IterMut as HandleMapIterMut, ParseIdError, RawHandleMap, RawHeader,
};
pub use history::{Changes, History, Mark, Snapshot};
pub use key::{AsKey, Key, KeyPath, MAX_PATH_SEGMENTS, ParseKeyError, ParseKeyErrorKind};
pub use load::{LazyStoreView, Salvage};
pub use migrate::{MigrateError, MigrationReport, MigrationStep, Migrations, StepReport};
pub use names::SavedKeyNames;
pub use query::{Query, QueryError, QueryErrorKind};
pub use store::{BlobMut, Store, StoreStats, StoreView, save};
pub use store::{DeltaError, StoreError, StorePatch};
#[cfg(feature = "json")]
pub use text::{
    ExportError, ExportOptions, ImportOptions, ImportReport, JsonError, JsonErrorKind, JsonF32,
    TextFormat,
};
pub use upgrade::{LoadOptions, UpgradeError};
pub use value::{AsValue, OwnedValue, Value, ValueType};
