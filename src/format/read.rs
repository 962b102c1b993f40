//! Reading a save or delta file into memory, capped by what its header says it holds: an
//! endless or huge input (`/dev/zero`, a pipe) is not read past the header's length.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use super::error::{FileError, LoadError};
use super::version::MAGIC;
use crate::error::Error;

/// The most bytes read from an input whose size is unknown (a pipe, a device) for one file:
/// 4 GiB. A header that claims more from such an input is refused before anything past it is
/// read; a regular file's size is known, and its header must match it.
pub const MAX_STREAM_BYTES: u64 = 1 << 32;

/// The bytes of the save or delta file at `path`, read no further than its header says the
/// file holds (plus one byte, to see that it ends there). Bytes that do not start with a file
/// header are returned as far as the header's 32 bytes, for the loader to refuse.
///
/// # Errors
///
/// [`Error::Io`] if the file cannot be read, or its size is unknown and its header claims more
/// than [`MAX_STREAM_BYTES`]; [`Error::Load`] with [`FileError::FileLength`] if it is a
/// regular file of another length than its header says (nothing past the header is read).
///
/// # Examples
///
/// ```
/// use datacomp::format::read_file;
///
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/world_v5.dcmp");
/// assert_eq!(read_file(path)?, std::fs::read(path)?);
/// # #[cfg(unix)]
/// assert_eq!(read_file("/dev/zero")?, [0; 32], "the 32 bytes a header takes, no more");
/// # Ok::<(), datacomp::Error>(())
/// ```
pub fn read_file(path: impl AsRef<Path>) -> Result<Vec<u8>, Error> {
    let file = File::open(path)?;
    let meta = file.metadata()?;
    read_capped(file, meta.is_file().then_some(meta.len()))
}

/// [`read_file`] of any reader: `size` is the input's length where it is known.
pub(crate) fn read_capped(mut input: impl Read, size: Option<u64>) -> Result<Vec<u8>, Error> {
    let mut bytes = Vec::with_capacity(size.map_or(32, |s| s.min(1 << 30) as usize));
    (&mut input).take(32).read_to_end(&mut bytes)?;
    if bytes.len() < 32 || bytes[..8] != MAGIC {
        return Ok(bytes);
    }
    let claimed = u64::from_le_bytes(bytes[16..24].try_into().expect("8 bytes"));
    match size {
        Some(size) if size != claimed => {
            let error = FileError::FileLength { expected: claimed, found: size };
            return Err(LoadError::File(error).into());
        }
        None if claimed > MAX_STREAM_BYTES => {
            return Err(Error::Io(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "the file header says the file holds {claimed} bytes, past the \
                     {MAX_STREAM_BYTES} read from an input of unknown size"
                ),
            )));
        }
        _ => {}
    }
    // Grown as bytes arrive, not reserved from the claim.
    input.take(claimed.saturating_sub(32).saturating_add(1)).read_to_end(&mut bytes)?;
    Ok(bytes)
}
