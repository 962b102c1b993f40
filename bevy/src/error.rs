//! The plugin's errors: [`FixtureError`] (a fixture file that did not load, reported by the
//! asset server) and [`Error`] (a save, load or fixture link that failed, reported in a
//! message). Messages are lowercase, with no trailing period, and name the file and place.

use std::fmt;
use std::path::PathBuf;

use datacomp::migrate::MigrateError;
use datacomp::{JsonError, KeyError, LoadError};

/// Why a fixture file did not load: the file, and what was wrong in it, at its JSON path and
/// line:column for a text fixture, or at its section and byte for a `.dcmp` one. Bevy's asset
/// server reports it as the load's failure ([`AssetLoadFailedEvent`](bevy_asset::AssetLoadFailedEvent)
/// and the log).
///
/// # Examples
///
/// ```
/// use datacomp_bevy::{Fixture, FixtureSettings};
///
/// let err = Fixture::from_bytes("orcs.json", br#"{"hp": [1, "two"]}"#, &FixtureSettings::default()).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "orcs.json: /hp/1 (line 1, column 16): arrays may hold numbers only"
/// );
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub struct FixtureError {
    /// The file, as the asset server names it.
    pub file: String,
    /// What was wrong.
    pub kind: FixtureErrorKind,
}

/// What was wrong with a fixture file: the *what* of a [`FixtureError`].
#[derive(Debug)]
#[non_exhaustive]
pub enum FixtureErrorKind {
    /// The file could not be read.
    Io(std::io::Error),
    /// A text fixture that is not UTF-8.
    NotUtf8 {
        /// The byte where the first invalid sequence starts.
        byte: usize,
    },
    /// A JSON or SJSON fixture that did not import: its JSON path, line and column.
    Json(Box<JsonError>),
    /// A `.dcmp` fixture that did not load: its section and byte.
    Save(LoadError),
    /// A file whose extension names no fixture format.
    Extension(String),
}

impl fmt::Display for FixtureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.file)?;
        match &self.kind {
            FixtureErrorKind::Io(e) => write!(f, "cannot be read: {e}"),
            FixtureErrorKind::NotUtf8 { byte } => {
                write!(f, "is not UTF-8 text: an invalid sequence at byte {byte}")
            }
            FixtureErrorKind::Json(e) => write!(f, "{e}"),
            FixtureErrorKind::Save(e) => write!(f, "{e}"),
            FixtureErrorKind::Extension(ext) => write!(
                f,
                "extension {ext:?} is none of a fixture's (json, sjson, dcmp): name the format in \
                 the loader settings"
            ),
        }
    }
}

impl std::error::Error for FixtureError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            FixtureErrorKind::Io(e) => Some(e),
            FixtureErrorKind::Json(e) => Some(e.as_ref()),
            FixtureErrorKind::Save(e) => Some(e),
            FixtureErrorKind::NotUtf8 { .. } | FixtureErrorKind::Extension(_) => None,
        }
    }
}

/// Why a save, a load or a fixture's link into the store failed: what [`Saved`](crate::Saved),
/// [`Loaded`](crate::Loaded) and [`FixtureLinkFailed`](crate::FixtureLinkFailed) carry. A
/// failed load changes nothing: the store and the entities stay as they were.
///
/// # Examples
///
/// ```
/// use datacomp_bevy::Error;
///
/// let err = Error::NoSuchEntity { fixture: "orcs.json".into(), index: 7, len: 3 };
/// assert_eq!(err.to_string(), "fixture orcs.json has 3 entities, and no entity 7");
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be written or read, or a save did not load; the library's error says
    /// which section and byte.
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        error: datacomp::Error,
    },
    /// A damaged save that the plugin was told to refuse ([`Damaged::Refuse`](crate::Damaged)).
    Damaged {
        /// The save.
        path: PathBuf,
        /// Why it does not load whole.
        error: LoadError,
    },
    /// A save's data could not be migrated to the game's data version: nothing was loaded.
    Migrate {
        /// The save.
        path: PathBuf,
        /// Why.
        error: Box<MigrateError>,
    },
    /// An autosave link not written because its chain broke before it (its full save or a
    /// link before it failed): the next autosave starts a new chain with a full save.
    ChainBroken {
        /// The link's file.
        path: PathBuf,
        /// Its number in the chain.
        link: u32,
    },
    /// An autosave (a full save or a link) not written because the plugin's mirror of the
    /// store was lost (what changed since it did not follow it): the mirror is built again,
    /// and the next autosave is a full save.
    MirrorLost {
        /// The file the autosave would have written.
        path: PathBuf,
    },
    /// An autosave not written because a [`LoadGame`](crate::LoadGame) asked for before it
    /// replaced the store it would have saved: the next autosave is a full save of the loaded
    /// one.
    Replaced {
        /// The file the autosave would have written.
        path: PathBuf,
    },
    /// A [`SaveGame`](crate::SaveGame) not taken: the save thread is far behind (this many
    /// jobs wait: a write that does not return, a disk that does not keep up), and each
    /// save waiting would hold a copy of the store. Nothing was written; ask again later.
    Behind {
        /// The save's file.
        path: PathBuf,
        /// The jobs waiting.
        waiting: usize,
    },
    /// A [`FromFixture`](crate::FromFixture) names an entity past the fixture's end.
    NoSuchEntity {
        /// The fixture file.
        fixture: String,
        /// The index asked for.
        index: usize,
        /// The fixture's entities.
        len: usize,
    },
    /// A fixture names a key as the store names another key of the same hash.
    KeyNames {
        /// The fixture file.
        fixture: String,
        /// The collision.
        error: KeyError,
    },
    /// A fixture entity that could not be written into the store.
    Write {
        /// The fixture file.
        fixture: String,
        /// The entity's index in it.
        index: usize,
        /// Why.
        error: datacomp::Error,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::File { path, error } => write!(f, "{}: {error}", path.display()),
            Error::Damaged { path, error } => {
                write!(f, "{}: a damaged save, refused: {error}", path.display())
            }
            Error::Migrate { path, error } => {
                write!(f, "{}: the save's data does not migrate: {error}", path.display())
            }
            Error::ChainBroken { path, link } => write!(
                f,
                "{}: autosave link {link} not written: its chain broke before it (a full save or \
                 an earlier link failed)",
                path.display()
            ),
            Error::MirrorLost { path } => write!(
                f,
                "{}: autosave not written: the mirror of the store it is made from was lost; \
                 the next autosave is a full save",
                path.display()
            ),
            Error::Replaced { path } => write!(
                f,
                "{}: autosave not written: a load replaced the store it would have saved",
                path.display()
            ),
            Error::Behind { path, waiting } => write!(
                f,
                "{}: not saved: the save thread has {waiting} jobs waiting (a write that does \
                 not return?); ask again later",
                path.display()
            ),
            Error::NoSuchEntity { fixture, index, len } => {
                write!(f, "fixture {fixture} has {len} entities, and no entity {index}")
            }
            Error::KeyNames { fixture, error } => {
                write!(f, "fixture {fixture}: its key names do not fit the store's: {error}")
            }
            Error::Write { fixture, index, error } => {
                write!(f, "fixture {fixture}, entity {index}: {error}")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::File { error, .. } | Error::Write { error, .. } => Some(error),
            Error::Damaged { error, .. } => Some(error),
            Error::Migrate { error, .. } => Some(error.as_ref()),
            Error::KeyNames { error, .. } => Some(error),
            Error::NoSuchEntity { .. }
            | Error::Behind { .. }
            | Error::ChainBroken { .. }
            | Error::MirrorLost { .. }
            | Error::Replaced { .. } => None,
        }
    }
}
