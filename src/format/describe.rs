//! What a file's header and section table say, checked: [`describe`], for `datacomp inspect`.

use super::check::check_checksums;
use super::container::{DELTA, FileInfo, FileKind, Parsed, SAVE, parse};
use super::error::{FileError, LoadError};

/// Reads a save file's header and section table, after checking them, every section's crc
/// and the padding, as a load does first. It does not check the sections' contents: use
/// [`Store::from_bytes`](crate::Store::from_bytes) or [`StoreView::new`](crate::StoreView::new) for
/// that.
///
/// # Errors
///
/// The [`LoadError`] of the first check that fails.
///
/// # Examples
///
/// ```
/// use datacomp::{format, Store};
///
/// let mut store = Store::new();
/// store.set_data_version(3);
/// let info = format::describe(&store.to_bytes())?;
/// assert_eq!((info.major, info.minor), (1, format::FORMAT_MINOR));
/// assert_eq!(info.data_version, 3);
/// let names: Vec<&str> = info.sections.iter().map(|s| s.name).collect();
/// assert_eq!(
///     names,
///     [
///         "index header", "index ends", "index meta", "index slots", "arena", "key tree",
///         "arena crcs", "lineage", "prototypes",
///     ]
/// );
/// # Ok::<(), datacomp::LoadError>(())
/// ```
pub fn describe(bytes: &[u8]) -> Result<FileInfo, LoadError> {
    let (kind, header, table) = match parse(bytes, &SAVE) {
        Ok(Parsed { header, table, sections, deferred, .. }) => {
            if let Some(crc) = deferred {
                check_checksums(sections[4], crc)?;
            }
            (FileKind::Save, header, table)
        }
        Err(LoadError::File(FileError::FileKind { found, .. }))
            if found == FileKind::Delta.as_str() =>
        {
            let Parsed { header, table, .. } = parse(bytes, &DELTA)?;
            (FileKind::Delta, header, table)
        }
        Err(e) => return Err(e),
    };
    Ok(FileInfo::read(kind, &header, table))
}
