//! Error types: one enum per area, and [`Error`] that wraps them all.

use std::fmt;

use crate::blob::BlobError;
use crate::format::LoadError;
use crate::key::{KeyCollision, PathConflict, PathTooDeep, RawKeyName};

/// Any error of this crate: what the whole-file operations return.
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
    /// A blob was malformed or too large.
    Blob(BlobError),
    /// Saved bytes were malformed.
    Load(LoadError),
    /// Reading or writing a file failed.
    Io(std::io::Error),
    /// A key given as text is recorded in the store under another name.
    KeyCollision(KeyCollision),
    /// A key given as text has more segments than a name may have.
    PathTooDeep(PathTooDeep),
    /// A write would make one path of an entity both a value and an object.
    PathConflict(PathConflict),
    /// A name was given whose first segment reads as a raw key.
    RawKeyName(RawKeyName),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Blob(e) => e.fmt(f),
            Error::Load(e) => e.fmt(f),
            Error::Io(e) => e.fmt(f),
            Error::KeyCollision(e) => e.fmt(f),
            Error::PathTooDeep(e) => e.fmt(f),
            Error::PathConflict(e) => e.fmt(f),
            Error::RawKeyName(e) => e.fmt(f),
        }
    }
}

/// Transparent, as `Display` is: `source()` is the wrapped error's own source (see
/// [`LoadError`]'s), so a reporter that walks the chain prints each message once.
impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Blob(e) => e.source(),
            Error::Load(e) => e.source(),
            Error::Io(e) => e.source(),
            Error::KeyCollision(e) => e.source(),
            Error::PathTooDeep(e) => e.source(),
            Error::PathConflict(e) => e.source(),
            Error::RawKeyName(e) => e.source(),
        }
    }
}

impl From<BlobError> for Error {
    fn from(e: BlobError) -> Error {
        Error::Blob(e)
    }
}

impl From<LoadError> for Error {
    fn from(e: LoadError) -> Error {
        Error::Load(e)
    }
}

impl From<KeyCollision> for Error {
    fn from(e: KeyCollision) -> Error {
        Error::KeyCollision(e)
    }
}

impl From<RawKeyName> for Error {
    fn from(e: RawKeyName) -> Error {
        Error::RawKeyName(e)
    }
}

impl From<PathTooDeep> for Error {
    fn from(e: PathTooDeep) -> Error {
        Error::PathTooDeep(e)
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::Io(e)
    }
}

impl From<PathConflict> for Error {
    fn from(e: PathConflict) -> Error {
        Error::PathConflict(e)
    }
}
