//! The crate's errors: one small enum per area, beside the code that raises it, and [`Error`],
//! which every one of them converts into.
//!
//! # One error per area
//!
//! Each area raises one error type of its own, defined beside the code that raises it, so a
//! function's signature says what can go wrong there:
//! [`Blob::from_bytes`](crate::blob::Blob::from_bytes) returns a [`BlobError`], never a load's.
//!
//! | type | lives in | raised by | means |
//! |---|---|---|---|
//! | [`KeyError`] | `key/error.rs` | `Key`'s `FromStr`; a store's writes of keys given as text ([`BlobMut::set`](crate::store::BlobMut::set)), [`Store::insert_key_name`](crate::store::Store::insert_key_name), [`Store::check_key`](crate::store::Store::check_key), [`Store::merge_key_names`](crate::store::Store::merge_key_names) | text that is not a key; a name that collides with a recorded one, is deeper than a name may be, reads as a raw key, or would make a path both a value and an object |
//! | [`BlobError`] | `blob/error.rs` | [`Blob::from_bytes`](crate::blob::Blob::from_bytes), [`Patch::from_bytes`](crate::blob::Patch::from_bytes), a blob's writes ([`Blob::set`](crate::blob::Blob::set)) | bytes that are not a blob or a patch, naming the entry or byte; a blob past 4 GiB; an integer an `f32` does not hold exactly |
//! | [`HandleError`] | `handle_map/error.rs` | [`HandleMap::try_get`](crate::handle_map::HandleMap::try_get), [`Store::try_get`](crate::store::Store::try_get), `Id`'s `FromStr` | a handle that does not resolve (null, free, another map's, out of range, stale), or text that is not one |
//! | [`HandleMapError`] | `handle_map/error.rs` | [`HandleMap::from_raw`](crate::handle_map::HandleMap::from_raw), serde, a save's index | a handle map's raw sections break an invariant |
//! | [`FileError`] | `format/error.rs` | every reader of a save or delta file | the container: header, section table, placement, padding, crcs, or a file of the other kind |
//! | [`StoreError`] | `format/error.rs` | the readers of saves and deltas, [`StorePatch::apply`](crate::store::StorePatch::apply) | a file's sections that do not make a valid store; a delta that does not fit its base; a key hash 1 save that cannot be rehashed |
//! | [`LoadError`] | `format/error.rs` | [`Store::from_bytes`](crate::store::Store::from_bytes), [`StoreView::new`](crate::format::StoreView::new), [`StorePatch::from_bytes`](crate::store::StorePatch::from_bytes), [`StorePatch::apply`](crate::store::StorePatch::apply) and the other readers | a save or delta that did not load: a [`FileError`], [`HandleMapError`] or [`StoreError`] |
//! | [`QueryError`] | `query/error.rs` | [`Query::parse`](crate::query::Query::parse) | query text that does not parse, at a column |
//! | [`MigrateError`] | `migrate/mod.rs` | [`Migrations::from_json`](crate::migrate::Migrations::from_json), [`Migrations::apply`](crate::migrate::Migrations::apply) | migrations that do not read, or cannot run on a store (which is then unchanged) |
//! | [`JsonError`] | `json.rs` | JSON and SJSON imports | a document that is not of the format, at a JSON path, line and column |
//! | [`ExportError`] | `json.rs` | JSON and SJSON exports | an entity that cannot be written as text |
//! | [`Error`] | `error.rs` | whole-file operations ([`Store::load`](crate::store::Store::load), [`SaveFile`](crate::file::SaveFile)), a store's writes of keys given as text | any of the above, or an I/O error |
//!
//! `JsonError` and `ExportError` come with the `json` feature. A kind enum
//! ([`QueryErrorKind`](crate::query::QueryErrorKind), `JsonErrorKind`) is the *what* of an
//! error that also carries a *where* (a column, a JSON path): not an error of its own.
//!
//! # How they compose
//!
//! ```text
//! Error ─┬─ Key(KeyError)
//!        ├─ Blob(BlobError) ··············· BlobError::PatchSets(Box<BlobError>)
//!        ├─ Handle(HandleError)
//!        ├─ Load(LoadError) ─┬─ File(FileError)
//!        │                   ├─ HandleMap(HandleMapError)
//!        │                   └─ Store(StoreError) ·· Blob { id, error: BlobError },
//!        │                                           DeltaPatch { id, error: BlobError }
//!        ├─ Query(QueryError)
//!        ├─ Migrate(Box<MigrateError>) ···· KeyCollision { collision: KeyError, .. }
//!        ├─ Json(Box<JsonError>) ·········· JsonErrorKind::Blob(BlobError)
//!        ├─ Export(ExportError) ··········· ExportError::Handle(HandleError)
//!        └─ Io(std::io::Error)
//! ```
//!
//! - [`LoadError`] is a load's error, by layer: the file container ([`FileError`]), the
//!   store's index, a handle map ([`HandleMapError`]), and the store the sections hold
//!   ([`StoreError`], which also covers a delta's fit to its base and the rehash of a key hash
//!   1 save). Each layer converts into it with `From`, so a reader uses `?` on each.
//! - [`Error`] wraps them all, and every error of the crate converts into it with `From` (a
//!   layer of a load through [`Error::Load`]), so code that does several jobs returns
//!   `Result<_, datacomp::Error>` and uses `?` throughout. [`Error::Io`] is the one foreign
//!   error: a file that could not be read or written.
//! - An error that holds another (the dotted lines) adds where it happened: a
//!   [`StoreError::Blob`] is `entity 3v0: ` and the blob's message, and its `source()` is the
//!   [`BlobError`].
//!
//! Two variants of [`Error`] are boxed, [`Migrate`](Error::Migrate) and `Json`: their errors,
//! of 88 and 96 bytes, would make every `Result<_, Error>` larger. The others are at most the
//! 56 bytes of a [`LoadError`], and an `Error` is 64 (on 64-bit targets).
//!
//! # Messages
//!
//! Every `Display` message is lowercase, with no trailing period, on one line, and names the
//! numbers and the place: `section 'arena crcs': chunk size 3 is not a power of two ...`,
//! `entity 3v0: ...`, `column 4: ...`, `/stats/health (line 1, column 25): ...`. Text from
//! outside (names, paths, the input) is cut in the middle when long, with its control
//! characters escaped, so that a message cannot drive a terminal.
//!
//! # `source()` chains
//!
//! [`Error`] and [`LoadError`] are *transparent*: they add no words, so their `Display` is the
//! wrapped error's, and their `source()` is the wrapped error's own source, not the wrapped
//! error itself. A reporter that walks the chain (as `anyhow`'s `{:#}` does) then prints each
//! message once: a save of 8 bytes given to [`Store::load`](crate::store::Store::load) reports
//! `file of 8 bytes ends inside the file header, which needs 32`, once. An error that adds
//! words (a [`StoreError::Blob`], a [`BlobError::PatchSets`]) gives the error it holds as its
//! `source()`.
//!
//! # Examples
//!
//! ```
//! use datacomp::{Blob, BlobError, Error, Key, KeyError};
//!
//! fn load(bytes: &[u8]) -> Result<Blob, Error> {
//!     Ok(Blob::from_bytes(bytes)?)
//! }
//! assert!(matches!(load(&[1, 2, 3]), Err(Error::Blob(BlobError::Truncated { byte_len: 3 }))));
//!
//! fn key(text: &str) -> Result<Key, Error> {
//!     Ok(text.parse::<Key>()?)
//! }
//! assert!(matches!(key(""), Err(Error::Key(KeyError::Empty))));
//! assert_eq!(
//!     key("#12").unwrap_err().to_string(),
//!     "bad key \"#12\": a raw key is # and 8 hex digits, as in #1a2b3c4d"
//! );
//! ```

use std::fmt;

use crate::blob::BlobError;
use crate::format::{FileError, LoadError, StoreError};
use crate::handle_map::{HandleError, HandleMapError};
use crate::key::KeyError;
use crate::migrate::MigrateError;
use crate::query::error::QueryError;
#[cfg(feature = "json")]
use crate::text::{ExportError, JsonError};

/// Any error of this crate: what the whole-file operations return, and what every error of
/// the crate converts into (see [the module](self) for the design).
///
/// Transparent: its `Display` is the wrapped error's, and its `source()` the wrapped error's
/// own source.
///
/// # Examples
///
/// ```
/// use datacomp::{Blob, BlobError, Error};
///
/// fn load(bytes: &[u8]) -> Result<Blob, Error> {
///     Ok(Blob::from_bytes(bytes)?)
/// }
/// assert!(matches!(load(&[1, 2, 3]), Err(Error::Blob(BlobError::Truncated { byte_len: 3 }))));
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// Text that is not a key, or a name a store refused.
    Key(KeyError),
    /// A blob or patch was malformed, or a blob too large.
    Blob(BlobError),
    /// A handle did not resolve, or text is not a handle.
    Handle(HandleError),
    /// Saved bytes (a save or a delta) were malformed, or a delta did not fit its store; a
    /// [`FileError`], [`HandleMapError`] or [`StoreError`] converts into this.
    Load(LoadError),
    /// A query's text did not parse.
    Query(QueryError),
    /// Migrations did not read, or could not run (boxed: the error is large).
    Migrate(Box<MigrateError>),
    /// A JSON or SJSON document did not import (boxed: the error is large).
    #[cfg(feature = "json")]
    Json(Box<JsonError>),
    /// An entity could not be exported as text.
    #[cfg(feature = "json")]
    Export(ExportError),
    /// Reading or writing a file failed.
    Io(std::io::Error),
}

/// Writes the `Display` and `std::error::Error` of a transparent wrapper (the inner error's
/// words, and the inner error's own source) and a `From` for each inner error (boxed by
/// `.into()` where the variant holds a `Box`), then a `From` for each error that reaches it
/// through a layer. A macro because `Error` has a variant per area: written out, three lists
/// of them (and the `cfg`s of the optional ones) would have to be kept in step by hand.
/// `LoadError` writes its three out (see `format/error.rs`: it cannot import this file).
macro_rules! transparent {
    (
        $outer:ident {
            $( $(#[$attr:meta])* $variant:ident($inner:ty), )*
        }
        through {
            $( $layered:ty => $layer:ident, )*
        }
    ) => {
        impl fmt::Display for $outer {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self {
                    $( $(#[$attr])* $outer::$variant(e) => fmt::Display::fmt(e, f), )*
                }
            }
        }

        impl std::error::Error for $outer {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                match self {
                    $( $(#[$attr])* $outer::$variant(e) => e.source(), )*
                }
            }
        }

        $(
            $(#[$attr])*
            impl From<$inner> for $outer {
                fn from(e: $inner) -> $outer {
                    $outer::$variant(e.into())
                }
            }
        )*

        $(
            impl From<$layered> for $outer {
                fn from(e: $layered) -> $outer {
                    $outer::$layer(e.into())
                }
            }
        )*
    };
}

transparent! {
    Error {
        Key(KeyError),
        Blob(BlobError),
        Handle(HandleError),
        Load(LoadError),
        Query(QueryError),
        Migrate(MigrateError),
        #[cfg(feature = "json")]
        Json(JsonError),
        #[cfg(feature = "json")]
        Export(ExportError),
        Io(std::io::Error),
    }
    through {
        FileError => Load,
        HandleMapError => Load,
        StoreError => Load,
    }
}
