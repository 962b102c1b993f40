//! [`PgWorlds`]: worlds in PostgreSQL, one row per entity, a frame per world, and a change feed.
//!
//! ```text
//! datacomp_schema   (id = 1, version)                     the schema version, checked on first use
//! datacomp_worlds   (id, name, frame)                      a world and its frame (a save of the
//!                                                          store with every blob empty)
//! datacomp_entities (world, id, blob, seq)                 one row per live entity: its handle, its
//!                                                          blob's bytes, the seq that last wrote it
//! datacomp_feed     (world, seq, delta)                    every accepted commit's delta file; the
//!                                                          world's seq is its last (0 for none)
//! ```
//!
//! A commit takes its seq by appending its delta to the feed at `base + 1`: the feed's primary
//! key lets one commit take it, and a commit on an older base finds it taken (a conflict, and
//! nothing of it is written). A commit that only edits entities
//! ([`StorePatch::is_entries_only`]) is one statement: the delta appended and the edited rows
//! rewritten. The edited rows are read first, unless this connection wrote them in the
//! commit that made `base` (then it has them: one round trip in all). One that inserts or removes entities, or changes key names or the data
//! version, also rewrites the frame, in one transaction: O(entities) of the world, where an
//! edit is O(its entities). Only SQL that CockroachDB also accepts is used, but for `LISTEN` and
//! `pg_notify`, which are left out on a server that says it is CockroachDB.

use std::collections::HashMap;

use datacomp::blob::Patch;
use datacomp::format::StoreError;
use datacomp::handle_map::Id;
use datacomp::store::rows::{self, EntityRecord};
use datacomp::{Blob, LoadError, Store, StorePatch};
use postgres::error::SqlState;
use postgres::{Client, NoTls};

use crate::error::{CommitError, Error};
use crate::ids::{Seq, WorldId};
use crate::merge::ConflictPolicy;
use crate::worlds::Worlds;

/// The schema version this build creates, reads and writes.
pub const SCHEMA_VERSION: i64 = 1;

/// The channel commits notify on; the payload is `"<world> <seq>"`.
pub const CHANNEL: &str = "datacomp_worlds";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS datacomp_schema (
    id INT PRIMARY KEY,
    version BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS datacomp_worlds (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    frame BYTEA NOT NULL
);
CREATE TABLE IF NOT EXISTS datacomp_entities (
    world BIGINT NOT NULL,
    id BIGINT NOT NULL,
    blob BYTEA NOT NULL,
    seq BIGINT NOT NULL,
    PRIMARY KEY (world, id)
);
CREATE TABLE IF NOT EXISTS datacomp_feed (
    world BIGINT NOT NULL REFERENCES datacomp_worlds (id),
    seq BIGINT NOT NULL,
    delta BYTEA NOT NULL,
    PRIMARY KEY (world, seq)
);
";

/// Worlds kept in PostgreSQL 15 (or a server that speaks its protocol and SQL: CockroachDB,
/// without `LISTEN`). One connection, used from one thread; open one per writer.
///
/// ```text
///  load   ── one read-only snapshot: the frame and every entity row, each blob checked
///  commit ── seq = base? rows of the edited entities + the delta in the feed + NOTIFY, at once
/// ```
pub struct PgWorlds {
    client: Client,
    // Whether the schema's version was read and found to be this build's.
    schema_checked: bool,
    // Whether the server has LISTEN/NOTIFY (not CockroachDB).
    notify: bool,
    policy: ConflictPolicy,
    // The statements of the hot path, prepared on first use: a commit of edits is then two
    // round trips (read the edited rows, write), not four.
    prepared: Option<Prepared>,
    // Rows this connection knows as they are at a seq of one world: those its own commits
    // wrote. A commit on that very seq (the world did not move since this connection's last
    // commit) patches them without reading them back: one round trip.
    known: Option<KnownRows>,
}

/// Entity rows as they are at `seq` of `world`.
struct KnownRows {
    world: WorldId,
    seq: Seq,
    // INVARIANT: each blob is the entity's row at `seq`.
    rows: HashMap<i64, Vec<u8>>,
}

/// Most rows [`KnownRows`] keeps; past it, they are dropped and read again when needed.
const MAX_KNOWN_ROWS: usize = 1 << 16;

/// The prepared statements of a commit of edits.
struct Prepared {
    read_rows: postgres::Statement,
    commit_entries: postgres::Statement,
}

const READ_ROWS: &str = "SELECT id, blob FROM datacomp_entities WHERE world = $1 AND id = ANY($2)";

impl PgWorlds {
    /// Connects with libpq-style parameters (`host=/run/pg user=game dbname=game`) or a
    /// `postgresql://` URL, without TLS (a Unix socket, or a private network).
    ///
    /// # Errors
    ///
    /// [`Error::Db`] if the server cannot be reached or refuses the login.
    pub fn connect(params: &str) -> Result<PgWorlds, Error> {
        let mut client = Client::connect(params, NoTls)?;
        let version: String = client.query_one("SELECT version()", &[])?.get(0);
        Ok(PgWorlds {
            client,
            schema_checked: false,
            notify: !version.contains("CockroachDB"),
            policy: ConflictPolicy::default(),
            prepared: None,
            known: None,
        })
    }

    fn prepared(&mut self) -> Result<&Prepared, Error> {
        if self.prepared.is_none() {
            let commit = if self.notify { COMMIT_ENTRIES_NOTIFY } else { COMMIT_ENTRIES };
            self.prepared = Some(Prepared {
                read_rows: self.client.prepare(READ_ROWS)?,
                commit_entries: self.client.prepare(commit)?,
            });
        }
        Ok(self.prepared.as_ref().expect("INVARIANT: set above"))
    }

    /// Creates the tables, or checks those there: records [`SCHEMA_VERSION`] in a new
    /// database, and refuses one of a newer version.
    ///
    /// # Errors
    ///
    /// [`Error::SchemaVersion`] for a database of a newer schema; [`Error::Db`].
    pub fn migrate_schema(&mut self) -> Result<(), Error> {
        // Two sessions creating the tables at once: one of them fails on the catalog's unique
        // index, and finds them made on its next try.
        let mut tries = 0;
        loop {
            match self.try_migrate_schema() {
                Err(Error::Db(e))
                    if tries < 3
                        && [
                            SqlState::UNIQUE_VIOLATION,
                            SqlState::DUPLICATE_TABLE,
                            SqlState::DUPLICATE_OBJECT,
                        ]
                        .iter()
                        .any(|code| e.code() == Some(code)) =>
                {
                    tries += 1;
                }
                other => return other,
            }
        }
    }

    fn try_migrate_schema(&mut self) -> Result<(), Error> {
        let mut tx = self.client.transaction()?;
        tx.batch_execute(SCHEMA)?;
        tx.execute(
            "INSERT INTO datacomp_schema (id, version) VALUES (1, $1) ON CONFLICT (id) DO NOTHING",
            &[&SCHEMA_VERSION],
        )?;
        let found: i64 =
            tx.query_one("SELECT version FROM datacomp_schema WHERE id = 1", &[])?.get(0);
        if found > SCHEMA_VERSION {
            return Err(Error::SchemaVersion { found, supported: SCHEMA_VERSION });
        }
        // Version 1 is the first: no older version to upgrade from yet.
        tx.commit()?;
        self.schema_checked = true;
        Ok(())
    }

    /// Sets how [`Worlds::commit_merging`] settles a key both sides changed.
    pub fn set_conflict_policy(&mut self, policy: ConflictPolicy) {
        self.policy = policy;
    }

    /// Whether commits notify followers (`false` on CockroachDB, whose followers poll).
    #[must_use]
    pub fn notifies(&self) -> bool {
        self.notify
    }

    /// The connection, for what this type does not do (a test's `pg_terminate_backend`, say).
    pub fn client(&mut self) -> &mut Client {
        &mut self.client
    }

    fn check_schema(&mut self) -> Result<(), Error> {
        if self.schema_checked {
            return Ok(());
        }
        let found: i64 = match self
            .client
            .query_opt("SELECT version FROM datacomp_schema WHERE id = 1", &[])
        {
            Ok(Some(row)) => row.get(0),
            Ok(None) => return Err(Error::NoSchema),
            Err(e) if e.code() == Some(&SqlState::UNDEFINED_TABLE) => return Err(Error::NoSchema),
            Err(e) => return Err(e.into()),
        };
        if found != SCHEMA_VERSION {
            return Err(Error::SchemaVersion { found, supported: SCHEMA_VERSION });
        }
        self.schema_checked = true;
        Ok(())
    }

    /// The world's seq now.
    fn seq_of(&mut self, world: WorldId) -> Result<Seq, Error> {
        let row = self.client.query_opt(SEQ, &[&world.0])?;
        let row = row.ok_or_else(|| Error::NoWorld(world.to_string()))?;
        to_seq(world, row.get(0))
    }

    /// The whole blobs a patch writes: inserted ones as they are, changed ones as their rows
    /// (read now) with the patch applied.
    fn written_blobs(
        &mut self,
        world: WorldId,
        base: Seq,
        patch: &StorePatch,
    ) -> Result<(Vec<i64>, Vec<Vec<u8>>), CommitError> {
        let changed: Vec<i64> = patch
            .records()
            .filter(|(_, r)| matches!(r, EntityRecord::Changed(_)))
            .map(|(id, _)| id.to_bits().cast_signed())
            .collect();
        let mut old: HashMap<i64, Vec<u8>> = HashMap::with_capacity(changed.len());
        let known = self.known.take().filter(|k| k.world == world && k.seq == base);
        if let Some(mut known) = known {
            if changed.iter().all(|id| known.rows.contains_key(id)) {
                for id in &changed {
                    if let Some(row) = known.rows.remove(id) {
                        old.insert(*id, row);
                    }
                }
            }
            // Put back: the rows patched here return after the commit.
            self.known = Some(known);
        }
        if !changed.is_empty() && old.is_empty() {
            // Read before the write, outside its statement: the write happens only while the
            // world is still at `base`, and seqs only grow, so these rows are `base`'s then.
            let read = self.prepared()?.read_rows.clone();
            let rows = self.client.query(&read, &[&world.0, &changed])?;
            old.extend(rows.into_iter().map(|row| (row.get(0), row.get(1))));
        }
        let (mut ids, mut blobs) = (Vec::new(), Vec::new());
        for (id, record) in patch.records() {
            let key = id.to_bits().cast_signed();
            let bytes = match record {
                EntityRecord::Inserted(bytes) => bytes.to_vec(),
                EntityRecord::Changed(patch_bytes) => {
                    let Some(row) = old.get(&key) else {
                        let current = self.seq_of(world)?;
                        if current != base {
                            return Err(CommitError::Conflict { current });
                        }
                        return Err(Error::NotInWorld { world, id }.into());
                    };
                    let stored = |error| Error::Stored {
                        world,
                        what: "entity rows".to_string(),
                        error: LoadError::Store(StoreError::Blob { id, error }),
                    };
                    let mut blob = Blob::from_bytes(row).map_err(stored)?;
                    let bad_patch = |error| {
                        Error::Patch(LoadError::Store(StoreError::DeltaPatch { id, error }))
                    };
                    Patch::from_bytes(patch_bytes)
                        .and_then(|p| p.try_apply(&mut blob))
                        .map_err(bad_patch)?;
                    // Packed, as a delta applied to a replica packs it: rows and replicas
                    // hold the same bytes.
                    blob.shrink_to_fit();
                    blob.as_bytes().to_vec()
                }
                _ => {
                    let problem = "a record of a kind this build does not know";
                    return Err(Error::Patch(LoadError::Store(StoreError::DeltaEntity {
                        id,
                        problem,
                    }))
                    .into());
                }
            };
            ids.push(key);
            blobs.push(bytes);
        }
        Ok((ids, blobs))
    }

    /// A commit that changes the frame: one transaction, the world's row locked first.
    fn commit_framed(
        &mut self,
        world: WorldId,
        base: Seq,
        patch: &StorePatch,
        (ids, blobs): (&[i64], &[Vec<u8>]),
        delta: &[u8],
    ) -> Result<(Seq, Vec<i64>), CommitError> {
        let seq = next_seq(base)?;
        let mut tx = self.client.transaction()?;
        // The seq is taken first: once this row is in, no other commit can be at `base`, and
        // the frame read next is `base`'s.
        let taken = tx.execute(
            "INSERT INTO datacomp_feed (world, seq, delta) VALUES ($1, $2, $3)",
            &[&world.0, &seq, &delta],
        );
        if let Err(e) = taken {
            drop(tx);
            return Err(self.taken_or(world, e));
        }
        let row = tx.query_one("SELECT frame FROM datacomp_worlds WHERE id = $1", &[&world.0])?;
        let frame_bytes: &[u8] = row.get(0);
        let mut frame = Store::from_bytes(frame_bytes).map_err(|error| Error::Stored {
            world,
            what: "frame".to_string(),
            error,
        })?;
        let before: Vec<Id> = frame.iter().map(|(id, _)| id).collect();
        patch.apply_to_equal(&mut frame).map_err(Error::Patch)?;
        let removed: Vec<i64> = before
            .into_iter()
            .filter(|&id| !frame.contains(id))
            .map(|id| id.to_bits().cast_signed())
            .collect();
        let frame = rows::frame(&frame).to_bytes();
        tx.execute("UPDATE datacomp_worlds SET frame = $2 WHERE id = $1", &[&world.0, &frame])?;
        if !removed.is_empty() {
            tx.execute(
                "DELETE FROM datacomp_entities WHERE world = $1 AND id = ANY($2)",
                &[&world.0, &removed],
            )?;
        }
        tx.execute(
            "INSERT INTO datacomp_entities (world, id, blob, seq) \
             SELECT $1, u.id, u.blob, $4 FROM unnest($2::BIGINT[], $3::BYTEA[]) AS u (id, blob) \
             ON CONFLICT (world, id) DO UPDATE SET blob = excluded.blob, seq = excluded.seq",
            &[&world.0, &ids, &blobs, &seq],
        )?;
        if self.notify {
            let payload = format!("{world} {seq}");
            tx.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &payload])?;
        }
        tx.commit()?;
        Ok((to_seq(world, seq)?, removed))
    }

    /// The error of a statement that took a seq: a [`CommitError::Conflict`] when another
    /// commit has it (the feed's primary key), else the database's.
    fn taken_or(&mut self, world: WorldId, e: postgres::Error) -> CommitError {
        if e.code() == Some(&SqlState::FOREIGN_KEY_VIOLATION) {
            return Error::NoWorld(world.to_string()).into();
        }
        if e.code() != Some(&SqlState::UNIQUE_VIOLATION) {
            return e.into();
        }
        match self.seq_of(world) {
            Ok(current) => CommitError::Conflict { current },
            Err(e) => e.into(),
        }
    }

    /// Remembers the rows a commit from `base` to `seq` wrote (see [`KnownRows`]).
    fn remember(
        &mut self,
        world: WorldId,
        (base, seq): (Seq, Seq),
        (ids, blobs): (Vec<i64>, Vec<Vec<u8>>),
        removed: &[i64],
    ) {
        let mut known = match self.known.take() {
            Some(known) if known.world == world && known.seq == base => known,
            _ => KnownRows { world, seq, rows: HashMap::new() },
        };
        known.seq = seq;
        for id in removed {
            known.rows.remove(id);
        }
        if known.rows.len() + ids.len() > MAX_KNOWN_ROWS {
            known.rows.clear();
        }
        known.rows.extend(ids.into_iter().zip(blobs));
        self.known = Some(known);
    }
}

/// A seq read from a row: never negative.
fn to_seq(world: WorldId, seq: i64) -> Result<Seq, Error> {
    u64::try_from(seq)
        .map(Seq)
        .map_err(|_| Error::BadRow { world, problem: format!("negative seq {seq}") })
}

/// The seq after `base`, as a `BIGINT`.
fn next_seq(base: Seq) -> Result<i64, Error> {
    from_seq(base)?.checked_add(1).ok_or_else(|| Error::NoWorld(format!("after seq {base} (2^63)")))
}

/// A seq as a `BIGINT`.
fn from_seq(seq: Seq) -> Result<i64, Error> {
    i64::try_from(seq.0).map_err(|_| Error::NoWorld(format!("at seq {seq} (past 2^63)")))
}

/// The commit statement when the frame stays, ending in `$select`: the delta goes into the feed
/// at seq `$2` (the base's next), which the feed's primary key lets only one commit take (any
/// other fails, and nothing of it is written), and the rows are written with it (`FROM w`).
macro_rules! commit_entries {
    ($select:literal) => {
        concat!(
            "WITH w AS (
                INSERT INTO datacomp_feed (world, seq, delta) VALUES ($1, $2, $5) RETURNING seq
            ), e AS (
                INSERT INTO datacomp_entities (world, id, blob, seq)
                SELECT $1, u.id, u.blob, w.seq FROM w, unnest($3::BIGINT[], $4::BYTEA[]) AS u (id, blob)
                ON CONFLICT (world, id) DO UPDATE SET blob = excluded.blob, seq = excluded.seq
            ) ",
            $select
        )
    };
}

/// A world's seq: its feed's last, 0 for none.
const SEQ: &str = "SELECT COALESCE(max(seq), 0) FROM datacomp_feed WHERE world = $1 \
     AND EXISTS (SELECT 1 FROM datacomp_worlds WHERE id = $1)";

/// A world's seq and frame.
const SEQ_AND_FRAME: &str = "SELECT (SELECT COALESCE(max(f.seq), 0) FROM datacomp_feed AS f WHERE f.world = w.id), \
     w.frame FROM datacomp_worlds AS w WHERE w.id = $1";

/// The commit of edits.
const COMMIT_ENTRIES: &str = commit_entries!("SELECT seq FROM w");

/// [`COMMIT_ENTRIES`] with the notification, sent when the transaction commits.
const COMMIT_ENTRIES_NOTIFY: &str =
    commit_entries!("SELECT w.seq, pg_notify($6, $7 || w.seq::TEXT)::TEXT FROM w");

impl Worlds for PgWorlds {
    fn create_world(&mut self, name: &str) -> Result<WorldId, Error> {
        self.check_schema()?;
        crate::files::check_name(name)?;
        let frame = rows::frame(&Store::new()).to_bytes();
        let row = self.client.query_opt(
            "INSERT INTO datacomp_worlds (name, frame) VALUES ($1, $2) \
             ON CONFLICT (name) DO NOTHING RETURNING id",
            &[&name, &frame],
        )?;
        // No row returned: the name was taken.
        row.map(|row| WorldId(row.get(0))).ok_or_else(|| Error::WorldExists(name.to_string()))
    }

    fn world(&mut self, name: &str) -> Result<Option<WorldId>, Error> {
        self.check_schema()?;
        let row =
            self.client.query_opt("SELECT id FROM datacomp_worlds WHERE name = $1", &[&name])?;
        Ok(row.map(|row| WorldId(row.get(0))))
    }

    fn load(&mut self, world: WorldId) -> Result<(Store, Seq), Error> {
        self.check_schema()?;
        let mut tx = self
            .client
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()?;
        let row = tx.query_opt(SEQ_AND_FRAME, &[&world.0])?;
        let row = row.ok_or_else(|| Error::NoWorld(world.to_string()))?;
        let seq = to_seq(world, row.get(0))?;
        let frame = Store::from_bytes(row.get(1)).map_err(|error| Error::Stored {
            world,
            what: "frame".to_string(),
            error,
        })?;
        let rows =
            tx.query("SELECT id, blob FROM datacomp_entities WHERE world = $1", &[&world.0])?;
        tx.commit()?;
        let store = rows::from_frame(
            &frame,
            rows.iter().map(|row| {
                (Id::from_bits(row.get::<_, i64>(0).cast_unsigned()), row.get::<_, &[u8]>(1))
            }),
        )
        .map_err(|error| Error::Stored {
            world,
            what: "entity rows".to_string(),
            error,
        })?;
        Ok((store, seq))
    }

    fn commit(
        &mut self,
        world: WorldId,
        base: Seq,
        patch: &StorePatch,
    ) -> Result<Seq, CommitError> {
        self.check_schema()?;
        let (ids, blobs) = self.written_blobs(world, base, patch)?;
        let delta = patch.to_bytes();
        if !patch.is_entries_only() {
            let (seq, removed) = self.commit_framed(world, base, patch, (&ids, &blobs), &delta)?;
            self.remember(world, (base, seq), (ids, blobs), &removed);
            return Ok(seq);
        }
        let next = next_seq(base)?;
        let statement = self.prepared()?.commit_entries.clone();
        let row = if self.notify {
            let prefix = format!("{world} ");
            self.client
                .query_opt(&statement, &[&world.0, &next, &ids, &blobs, &delta, &CHANNEL, &prefix])
        } else {
            self.client.query_opt(&statement, &[&world.0, &next, &ids, &blobs, &delta])
        };
        let row = match row {
            Ok(row) => row,
            Err(e) => return Err(self.taken_or(world, e)),
        };
        match row {
            Some(row) => {
                let seq = to_seq(world, row.get(0))?;
                self.remember(world, (base, seq), (ids, blobs), &[]);
                Ok(seq)
            }
            None => Err(CommitError::Conflict { current: self.seq_of(world)? }),
        }
    }

    fn changes_since(&mut self, world: WorldId, seq: Seq) -> Result<Vec<(Seq, StorePatch)>, Error> {
        self.check_schema()?;
        let after = from_seq(seq)?;
        let rows = self.client.query(
            "SELECT seq, delta FROM datacomp_feed WHERE world = $1 AND seq > $2 ORDER BY seq",
            &[&world.0, &after],
        )?;
        if rows.is_empty() {
            // An empty answer for a world that does not exist is an error, not "no changes".
            self.seq_of(world)?;
        }
        rows.iter()
            .map(|row| {
                let at = to_seq(world, row.get(0))?;
                let patch = StorePatch::from_bytes(row.get(1)).map_err(|error| Error::Stored {
                    world,
                    what: format!("delta {at}"),
                    error,
                })?;
                Ok((at, patch))
            })
            .collect()
    }

    fn conflict_policy(&self) -> ConflictPolicy {
        self.policy
    }
}
