//! The crate's errors: [`Error`] for every operation, and [`CommitError`], a commit's, which
//! adds the one outcome a caller acts on: the world moved past the commit's base.

use std::fmt;

use datacomp::LoadError;
use datacomp::handle_map::Id;

use crate::ids::{Seq, WorldId};

/// What went wrong with a world: the database, a file, or bytes that do not check out.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The database refused a statement, or the connection failed.
    Db(postgres::Error),
    /// A world's file could not be read or written.
    Io(std::io::Error),
    /// The database has no datacomp tables: [`PgWorlds::migrate_schema`](crate::PgWorlds::migrate_schema) makes them.
    NoSchema,
    /// The database's tables are of a schema version this crate does not know (a newer one).
    SchemaVersion {
        /// The version the database records.
        found: i64,
        /// The newest version this crate reads and writes.
        supported: i64,
    },
    /// No world has this id (or name).
    NoWorld(String),
    /// A world of this name exists already.
    WorldExists(String),
    /// A world's name is empty, too long, or holds a character a file name cannot.
    BadName(String),
    /// Stored bytes of a world did not check out: its frame, an entity's row (the error
    /// names the entity), or a delta of its feed; nothing was loaded.
    Stored {
        /// The world.
        world: WorldId,
        /// What held the bytes: `frame`, `entity rows`, `delta 17`.
        what: String,
        /// Why, naming the entity where there is one.
        error: LoadError,
    },
    /// A row holds a value no world can have (a negative seq, a handle that is not one).
    BadRow {
        /// The world.
        world: WorldId,
        /// What is wrong.
        problem: String,
    },
    /// A patch changes an entity the world does not hold at the patch's base.
    NotInWorld {
        /// The world.
        world: WorldId,
        /// The entity.
        id: Id,
    },
    /// A patch did not apply to the world at its base.
    Patch(LoadError),
    /// The local store and the world could not be merged: their data versions differ, or a
    /// key has two names.
    Merge(String),
    /// `commit_merging` lost the race this many times in a row: the world is written faster
    /// than this writer merges.
    Contended {
        /// The tries made.
        tries: u32,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Db(e) => write!(f, "database: {e}"),
            Error::Io(e) => write!(f, "file: {e}"),
            Error::NoSchema => write!(
                f,
                "the database has no datacomp tables: run PgWorlds::migrate_schema (or `datacomp pg \
                 push`, which does) first"
            ),
            Error::SchemaVersion { found, supported } => write!(
                f,
                "the database's datacomp tables are of schema version {found}; this build reads \
                 versions up to {supported}"
            ),
            Error::NoWorld(world) => write!(f, "no world {world}"),
            Error::WorldExists(name) => write!(f, "a world named {name:?} exists already"),
            Error::BadName(name) => write!(
                f,
                "bad world name {name:?}: 1 to 200 letters, digits, '-', '_' or '.', not starting \
                 with '.'"
            ),
            Error::Stored { world, what, error } => write!(f, "world {world}: {what}: {error}"),
            Error::BadRow { world, problem } => write!(f, "world {world}: {problem}"),
            Error::NotInWorld { world, id } => {
                write!(
                    f,
                    "world {world}: the patch changes entity {id}, which the world does not hold"
                )
            }
            Error::Patch(e) => write!(f, "the patch does not apply to the world: {e}"),
            Error::Merge(e) => write!(f, "cannot merge into the world: {e}"),
            Error::Contended { tries } => {
                write!(f, "the world moved on during each of {tries} merges in a row: gave up")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Db(e) => Some(e),
            Error::Io(e) => Some(e),
            Error::Stored { error, .. } | Error::Patch(error) => Some(error),
            _ => None,
        }
    }
}

impl From<postgres::Error> for Error {
    fn from(e: postgres::Error) -> Error {
        Error::Db(e)
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::Io(e)
    }
}

/// Why a commit was not accepted.
#[derive(Debug)]
#[non_exhaustive]
pub enum CommitError {
    /// The world moved past the commit's base: it is at `current`. Read the changes since
    /// ([`Worlds::changes_since`](crate::Worlds::changes_since)), or use
    /// [`Worlds::commit_merging`](crate::Worlds::commit_merging), which does.
    Conflict {
        /// The world's seq now.
        current: Seq,
    },
    /// Anything else: nothing was committed.
    Other(Error),
}

impl fmt::Display for CommitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommitError::Conflict { current } => {
                write!(f, "the world moved on to seq {current}: merge the changes since and retry")
            }
            CommitError::Other(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl std::error::Error for CommitError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CommitError::Conflict { .. } => None,
            CommitError::Other(e) => Some(e),
        }
    }
}

impl From<Error> for CommitError {
    fn from(e: Error) -> CommitError {
        CommitError::Other(e)
    }
}

impl From<postgres::Error> for CommitError {
    fn from(e: postgres::Error) -> CommitError {
        CommitError::Other(Error::Db(e))
    }
}

impl From<std::io::Error> for CommitError {
    fn from(e: std::io::Error) -> CommitError {
        CommitError::Other(Error::Io(e))
    }
}
