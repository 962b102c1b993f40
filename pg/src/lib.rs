//! datacomp worlds shared by many game servers through PostgreSQL: one row per entity, a
//! change feed of deltas, and per-key merges of concurrent commits; and the same interface over
//! a directory of save files and delta chains, so a game or test runs with no server.
//!
//! # The model
//!
//! A *world* is a [`Store`](datacomp::Store) at a sequence number ([`Seq`]): 0 when created
//! (empty), one more for each accepted commit. A commit is a
//! [`StorePatch`](datacomp::StorePatch) from the world at a `base` seq; it is refused with
//! [`CommitError::Conflict`] when the world has moved past `base`. [`Worlds::commit_merging`]
//! handles that case: it reads what was committed since, merges it key by key with the local
//! edits ([`Blob::merge3`](datacomp::Blob::merge3): a removal beats a change, and a key two
//! sides changed differently is a reported conflict that the [`ConflictPolicy`] settles), and
//! tries again, so no accepted edit is ever lost.
//!
//! - [`PgWorlds`]: PostgreSQL 15 (and SQL that CockroachDB also accepts). Each entity is a row
//!   (its handle, its blob's bytes, the seq that last wrote it); the world's row holds its
//!   *frame* (handles, key names, data version: `datacomp::store::rows`), and every
//!   accepted delta is appended to the world's change feed, whose primary key (world, seq)
//!   lets one commit take each seq. A commit that only edits entities is one statement and
//!   writes the delta and their rows.
//! - [`FileWorlds`]: the embedded default, a folder per world: a base save and one delta file
//!   per accepted commit, created exclusively so that two processes cannot both take a seq.
//! - [`Follower`]: a replica [`Store`](datacomp::Store) kept current from the change feed,
//!   woken by `LISTEN`/`NOTIFY` (payload: the world and the seq), or by polling where the
//!   server has no `LISTEN` (CockroachDB).
//!
//! ```no_run
//! use datacomp_pg::{PgWorlds, Worlds};
//!
//! let mut worlds = PgWorlds::connect("host=/tmp user=game dbname=game")?;
//! worlds.migrate_schema()?;
//! let world = worlds.create_world("shard-7")?;
//! let (base, seq) = worlds.load(world)?;
//! let mut local = base.clone();
//! local.insert_entries([("name", "Orc"), ("stats.health", "30")])?;
//! let (seq, conflicts) = worlds.commit_merging(world, &base, seq, &local)?;
//! assert!(conflicts.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(clippy::pedantic)]
#![allow(clippy::module_name_repetitions)]

mod error;
mod files;
mod follower;
mod ids;
mod merge;
mod pg;
mod worlds;

pub use error::{CommitError, Error};
pub use files::{FileWorlds, MAX_NAME_BYTES};
pub use follower::Follower;
pub use ids::{Seq, WorldId};
pub use merge::{ConflictPolicy, Conflicts};
pub use pg::{CHANNEL, PgWorlds, SCHEMA_VERSION};
pub use worlds::{MAX_MERGE_TRIES, Worlds};

// The README's example compiles as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
