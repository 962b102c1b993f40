//! Error types: one enum per area, and [`Error`] that wraps them all.

use std::fmt;

use crate::blob::BlobError;
use crate::format::LoadError;
use crate::key::KeyError;

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
    /// Text that is not a key, or a name a store refused.
    Key(KeyError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Blob(e) => e.fmt(f),
            Error::Load(e) => e.fmt(f),
            Error::Io(e) => e.fmt(f),
            Error::Key(e) => e.fmt(f),
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
            Error::Key(e) => e.source(),
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

impl From<KeyError> for Error {
    fn from(e: KeyError) -> Error {
        Error::Key(e)
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::Io(e)
    }
}
