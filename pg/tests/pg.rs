//! datacomp-pg against a real PostgreSQL 15 (`DATACOMP_PG`): round trips equal to the file
//! path, conflicts, corrupted rows, killed transactions, and the change feed.

mod common;

use std::time::{Duration, Instant};

use common::{Rng, add_sheets, connect, params, unique};
use datacomp::format::StoreError;
use datacomp::store::PathConflict;
use datacomp::{ExportOptions, ImportOptions, Key, LoadError, Store, StorePatch};
use datacomp_pg::{CommitError, Error, FileWorlds, Follower, PgWorlds, Seq, Worlds};

/// Commits `local` (an edit of `base`, the world at `seq`) with a plain commit, and returns
/// the new seq.
fn commit_store(
    worlds: &mut impl Worlds,
    world: datacomp_pg::WorldId,
    base: &Store,
    seq: Seq,
    local: &Store,
) -> Seq {
    worlds.commit(world, seq, &StorePatch::diff(base, local)).expect("commit")
}

/// The same history, committed to a database world and to a file world, step by step: each
/// load equals the local store, the file path's load, and a save's round trip.
#[test]
fn round_trips_equal_the_file_path() {
    let mut pg = connect();
    let dir = tempfile::tempdir().unwrap();
    let mut files = FileWorlds::open(dir.path()).unwrap();
    let name = unique("round-trip");
    let (w_pg, w_files) = (pg.create_world(&name).unwrap(), files.create_world(&name).unwrap());
    assert_eq!(pg.world(&name).unwrap(), Some(w_pg));
    assert_eq!(files.world(&name).unwrap(), Some(w_files));
    assert!(matches!(pg.create_world(&name), Err(Error::WorldExists(_))));
    assert!(matches!(files.create_world(&name), Err(Error::WorldExists(_))));

    let (empty, seq) = pg.load(w_pg).unwrap();
    assert_eq!((empty.len(), seq), (0, Seq(0)));
    let mut rng = Rng(7);
    let mut base = empty;
    let mut local = base.clone();
    add_sheets(&mut local, 50, &mut rng);
    let ids: Vec<_> = local.iter().map(|(id, _)| id).collect();

    type Step = fn(&mut Store, &[datacomp::Id]);
    let steps: [Step; 5] = [
        |_, _| {},
        |s, ids| {
            // Edits only: the one-statement commit.
            s.get_mut(ids[3]).unwrap().set("stats.health", 1.0).unwrap();
            s.get_mut(ids[4]).unwrap().remove("firmness");
        },
        |s, ids| {
            // Removes and inserts: the frame moves.
            s.remove(ids[0]);
            s.remove(ids[10]);
            s.insert_entries([("name", "Imp"), ("loot.gold", "12")]).unwrap();
        },
        |s, _| s.set_data_version(2),
        |s, ids| {
            s.get_mut(ids[5]).unwrap().set("a.new.key", "names move too").unwrap();
        },
    ];
    let mut seq = Seq(0);
    for (i, step) in steps.iter().enumerate() {
        if i > 0 {
            step(&mut local, &ids);
        }
        let s1 = commit_store(&mut pg, w_pg, &base, seq, &local);
        let s2 = commit_store(&mut files, w_files, &base, seq, &local);
        assert_eq!((s1, s2), (Seq(seq.0 + 1), Seq(seq.0 + 1)), "step {i}");
        seq = s1;
        let (from_pg, at) = pg.load(w_pg).unwrap();
        let (from_files, at_files) = files.load(w_files).unwrap();
        let saved = Store::from_bytes(&local.to_bytes()).unwrap();
        assert_eq!((at, at_files), (seq, seq));
        assert_eq!(from_pg, local, "step {i}");
        assert_eq!(from_files, local, "step {i}");
        assert_eq!(from_pg, saved, "step {i}");
        assert_eq!(from_pg.data_version(), local.data_version());
        assert_eq!(from_pg.key_names().count(), local.key_names().count());
        base = from_pg;
        local = base.clone();
    }
    // The feed replays to the same world, from the empty one.
    let feed = pg.changes_since(w_pg, Seq(0)).unwrap();
    assert_eq!(feed.iter().map(|(s, _)| s.0).collect::<Vec<_>>(), [1, 2, 3, 4, 5]);
    let mut replay = rows_empty(&mut pg);
    for (_, patch) in &feed {
        patch.apply_to_equal(&mut replay).unwrap();
    }
    assert_eq!(replay, base);
    assert_eq!(pg.changes_since(w_pg, Seq(3)).unwrap().len(), 2);
    assert!(pg.changes_since(w_pg, seq).unwrap().is_empty());
    assert_eq!(files.changes_since(w_files, Seq(0)).unwrap().len(), 5);
}

/// An empty world's store, as a new world loads.
fn rows_empty(pg: &mut PgWorlds) -> Store {
    let w = pg.create_world(&unique("empty")).unwrap();
    pg.load(w).unwrap().0
}

#[test]
fn a_stale_base_is_a_conflict_and_changes_nothing() {
    for pg_side in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let mut worlds: Box<dyn Worlds> = if pg_side {
            Box::new(connect())
        } else {
            Box::new(FileWorlds::open(dir.path()).unwrap())
        };
        let w = worlds.create_world(&unique("stale")).unwrap();
        let (base, _) = worlds.load(w).unwrap();
        let mut a = base.clone();
        let id = a.insert_entries([("hp", 1.0)]).unwrap();
        let s1 = worlds.commit(w, Seq(0), &StorePatch::diff(&base, &a)).unwrap();
        let mut b = base.clone();
        b.insert_entries([("hp", 2.0)]).unwrap();
        let err = worlds.commit(w, Seq(0), &StorePatch::diff(&base, &b)).unwrap_err();
        assert!(matches!(err, CommitError::Conflict { current: Seq(1) }), "{err}");
        assert_eq!(
            err.to_string(),
            "the world moved on to seq 1: merge the changes since and retry"
        );
        let (now, seq) = worlds.load(w).unwrap();
        assert_eq!((seq, now.get(id).unwrap().get_float("hp")), (s1, Some(1.0)));
        // An edit on the stale base is refused the same way.
        let mut c = a.clone();
        c.get_mut(id).unwrap().set("hp", 3.0).unwrap();
        let mut stale = a.clone();
        stale.get_mut(id).unwrap().set("hp", 9.0).unwrap();
        assert_eq!(worlds.commit(w, s1, &StorePatch::diff(&a, &c)).unwrap(), Seq(2));
        let err = worlds.commit(w, s1, &StorePatch::diff(&a, &stale)).unwrap_err();
        assert!(matches!(err, CommitError::Conflict { current: Seq(2) }));
        assert_eq!(worlds.load(w).unwrap().0.get(id).unwrap().get_float("hp"), Some(3.0));
        assert!(matches!(worlds.load(datacomp_pg::WorldId(-5)), Err(Error::NoWorld(_))));
    }
}

#[test]
fn merging_keeps_both_sides_and_reports_conflicts() {
    let mut worlds = connect();
    let w = worlds.create_world(&unique("merge")).unwrap();
    let (empty, _) = worlds.load(w).unwrap();
    let mut seed = empty.clone();
    let hero = seed.insert_entries([("hp", 10.0), ("mp", 5.0), ("gold", 1.0)]).unwrap();
    let orc = seed.insert_entries([("hp", 30.0)]).unwrap();
    let s1 = worlds.commit(w, Seq(0), &StorePatch::diff(&empty, &seed)).unwrap();
    let (base, _) = worlds.load(w).unwrap();

    // Theirs: hp and gold of the hero, and the orc removed.
    let mut theirs = base.clone();
    theirs.get_mut(hero).unwrap().set("hp", 11.0).unwrap();
    theirs.get_mut(hero).unwrap().set("gold", 2.0).unwrap();
    theirs.remove(orc);
    worlds.commit(w, s1, &StorePatch::diff(&base, &theirs)).unwrap();
    // Ours, from the same base: hp differently (a conflict), mp (kept), the orc changed
    // (removal beats it), and an imp inserted.
    let mut ours = base.clone();
    ours.get_mut(hero).unwrap().set("hp", 12.0).unwrap();
    ours.get_mut(hero).unwrap().set("mp", 6.0).unwrap();
    ours.get_mut(orc).unwrap().set("hp", 1.0).unwrap();
    let imp = ours.insert_entries([("name", "Imp")]).unwrap();
    let (seq, conflicts) = worlds.commit_merging(w, &base, s1, &ours).unwrap();
    assert_eq!(seq, Seq(3));
    assert_eq!(conflicts.keys.len(), 1);
    let (id, c) = &conflicts.keys[0];
    assert_eq!(
        (*id, c.key, &c.ours, &c.theirs),
        (
            hero,
            "hp".parse().unwrap(),
            &datacomp::OwnedValue::Float(12.0),
            &datacomp::OwnedValue::Float(11.0)
        )
    );
    let (now, _) = worlds.load(w).unwrap();
    let h = now.get(hero).unwrap();
    assert_eq!(
        (h.get_float("hp"), h.get_float("mp"), h.get_float("gold")),
        (Some(11.0), Some(6.0), Some(2.0))
    );
    assert!(!now.contains(orc));
    let imp_now = conflicts.moved.iter().find(|(l, _)| *l == imp).map_or(imp, |m| m.1);
    assert_eq!(now.get(imp_now).unwrap().get_str("name"), Some("Imp"));
    assert_eq!(now.len(), 2);

    // The local policy: ours wins the conflicting key.
    worlds.set_conflict_policy(datacomp_pg::ConflictPolicy::Local);
    let mut a = now.clone();
    a.get_mut(hero).unwrap().set("hp", 50.0).unwrap();
    worlds.commit(w, seq, &StorePatch::diff(&now, &a)).unwrap();
    let mut b = now.clone();
    b.get_mut(hero).unwrap().set("hp", 60.0).unwrap();
    let (_, conflicts) = worlds.commit_merging(w, &now, seq, &b).unwrap();
    assert_eq!(conflicts.keys.len(), 1);
    assert_eq!(worlds.load(w).unwrap().0.get(hero).unwrap().get_float("hp"), Some(60.0));
}

/// A path the committed side made a value (`stats`) while the local edit added a key under
/// it (`stats.health`) is a path conflict in the merging commit's report: the policy takes
/// one side's state for every key of the clash, so the world never holds both (which no
/// import could read back), and a key outside the clash keeps both sides' edits.
#[test]
fn merging_reports_a_path_one_side_made_a_value_and_the_other_an_object() {
    let mut worlds = connect();
    let w = worlds.create_world(&unique("paths")).unwrap();
    let (empty, _) = worlds.load(w).unwrap();
    let mut seed = empty.clone();
    let orc = seed.insert_entries([("name", "Orc"), ("gold", "1")]).unwrap();
    let s1 = worlds.commit(w, Seq(0), &StorePatch::diff(&empty, &seed)).unwrap();
    let (base, _) = worlds.load(w).unwrap();

    let mut theirs = base.clone();
    theirs.get_mut(orc).unwrap().set("stats", 5.0).unwrap();
    let s2 = worlds.commit(w, s1, &StorePatch::diff(&base, &theirs)).unwrap();
    let mut ours = base.clone();
    ours.get_mut(orc).unwrap().set("stats.health", 30.0).unwrap();
    ours.get_mut(orc).unwrap().set("gold", "2").unwrap();
    let (seq, conflicts) = worlds.commit_merging(w, &base, s1, &ours).unwrap();
    assert_eq!(seq, Seq(s2.0 + 1));
    let (stats, health) = (Key::parse("stats"), Key::parse("stats.health"));
    assert_eq!(conflicts.paths, [PathConflict { id: orc, value: stats, under: health }]);
    assert!(conflicts.keys.is_empty() && conflicts.links.is_empty() && conflicts.moved.is_empty());
    assert!(!conflicts.is_empty());
    // The committed value stands (the default policy); the local gold is kept.
    let (now, _) = worlds.load(w).unwrap();
    let o = now.get(orc).unwrap();
    assert_eq!(
        (o.get_float("stats"), o.get_float("stats.health"), o.get_str("gold")),
        (Some(5.0), None, Some("2"))
    );
    let text = now.export(orc, &ExportOptions::json()).unwrap();
    Store::new().import(&text, &ImportOptions::strict()).unwrap();

    // The local policy: the local object replaces the committed value.
    worlds.set_conflict_policy(datacomp_pg::ConflictPolicy::Local);
    let mut again = base.clone();
    again.get_mut(orc).unwrap().set("stats.health", 40.0).unwrap();
    let (_, conflicts) = worlds.commit_merging(w, &base, s1, &again).unwrap();
    assert_eq!(conflicts.paths, [PathConflict { id: orc, value: stats, under: health }]);
    let (now, _) = worlds.load(w).unwrap();
    let o = now.get(orc).unwrap();
    assert_eq!(
        (o.get_float("stats"), o.get_float("stats.health"), o.get_str("gold")),
        (None, Some(40.0), Some("2"))
    );
}

/// A row whose bytes were damaged is reported with its entity, and nothing is loaded; so is
/// a row for a handle the frame lacks, and a missing row.
#[test]
fn a_corrupted_row_is_reported_not_loaded() {
    let mut worlds = connect();
    let w = worlds.create_world(&unique("corrupt")).unwrap();
    let (empty, _) = worlds.load(w).unwrap();
    let mut local = empty.clone();
    add_sheets(&mut local, 20, &mut Rng(3));
    worlds.commit(w, Seq(0), &StorePatch::diff(&empty, &local)).unwrap();
    let victim = local.iter().nth(7).unwrap().0;
    let key = victim.to_bits().cast_signed();
    let good: Vec<u8> = worlds
        .client()
        .query_one("SELECT blob FROM datacomp_entities WHERE world = $1 AND id = $2", &[&w.0, &key])
        .unwrap()
        .get(0);

    let mut bad = good.clone();
    bad[0] = 200; // claims 200 keys
    for (bytes, what) in
        [(bad, "a header past the blob"), (good[..6].to_vec(), "truncated"), (vec![], "empty")]
    {
        worlds
            .client()
            .execute(
                "UPDATE datacomp_entities SET blob = $3 WHERE world = $1 AND id = $2",
                &[&w.0, &key, &bytes],
            )
            .unwrap();
        let err = worlds.load(w).unwrap_err();
        let Error::Stored { error: LoadError::Store(StoreError::Blob { id, .. }), .. } = &err
        else {
            panic!("{what}: {err:?}");
        };
        assert_eq!(*id, victim, "{what}");
        assert!(err.to_string().contains(&format!("entity {victim}")), "{err}");
    }
    // A commit that patches the damaged row is refused too, naming it (on a connection of
    // its own: the one that wrote the row remembers its bytes, and would not read them).
    let mut edit = local.clone();
    edit.get_mut(victim).unwrap().set("stats.health", 3.0).unwrap();
    let err = connect().commit(w, Seq(1), &StorePatch::diff(&local, &edit)).unwrap_err();
    assert!(
        matches!(&err, CommitError::Other(Error::Stored { error: LoadError::Store(StoreError::Blob { id, .. }), .. }) if *id == victim),
        "{err}"
    );

    worlds
        .client()
        .execute(
            "UPDATE datacomp_entities SET blob = $3 WHERE world = $1 AND id = $2",
            &[&w.0, &key, &good],
        )
        .unwrap();
    assert_eq!(worlds.load(w).unwrap().0, local);
    // A row the frame does not hold.
    let stray = datacomp::Id::from_bits(victim.to_bits() + (1 << 40)).to_bits().cast_signed();
    worlds
        .client()
        .execute(
            "INSERT INTO datacomp_entities (world, id, blob, seq) VALUES ($1, $2, $3, 1)",
            &[&w.0, &stray, &good],
        )
        .unwrap();
    let err = worlds.load(w).unwrap_err();
    assert!(
        matches!(
            &err,
            Error::Stored { error: LoadError::Store(StoreError::DeltaEntity { .. }), .. }
        ),
        "{err}"
    );
    worlds
        .client()
        .execute("DELETE FROM datacomp_entities WHERE world = $1 AND id = $2", &[&w.0, &stray])
        .unwrap();
    // A row gone.
    worlds
        .client()
        .execute("DELETE FROM datacomp_entities WHERE world = $1 AND id = $2", &[&w.0, &key])
        .unwrap();
    let err = worlds.load(w).unwrap_err();
    assert!(
        err.to_string()
            .contains(&format!("entity {victim}: the world's frame holds it, but no row does")),
        "{err}"
    );
    // A damaged frame.
    worlds
        .client()
        .execute("UPDATE datacomp_worlds SET frame = '\\x00' WHERE id = $1", &[&w.0])
        .unwrap();
    let err = worlds.load(w).unwrap_err();
    assert!(
        matches!(&err, Error::Stored { what, error: LoadError::File(_), .. } if what == "frame"),
        "{err}"
    );
}

/// Waits until `pid`'s backend waits on a lock.
fn wait_until_blocked(admin: &mut postgres::Client, pid: i32) {
    let start = Instant::now();
    loop {
        let row = admin
            .query_opt(
                "SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'",
                &[&pid],
            )
            .unwrap();
        if row.is_some() {
            return;
        }
        assert!(start.elapsed() < Duration::from_secs(120), "backend {pid} never blocked");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A commit whose backend is killed mid-transaction (after it moved the seq, waiting for an
/// entity row another session holds) leaves the world at its last seq, rows and feed as they
/// were; the next commit on that seq is accepted.
#[test]
fn a_killed_transaction_leaves_the_world_at_its_last_seq() {
    let mut worlds = connect();
    let w = worlds.create_world(&unique("killed")).unwrap();
    let (empty, _) = worlds.load(w).unwrap();
    let mut local = empty.clone();
    add_sheets(&mut local, 10, &mut Rng(5));
    let s1 = worlds.commit(w, Seq(0), &StorePatch::diff(&empty, &local)).unwrap();
    let (base, _) = worlds.load(w).unwrap();
    let victim = base.iter().nth(2).unwrap().0;

    // Edits only (the one-statement commit), then a removal (the framed transaction).
    let mut edit = base.clone();
    edit.get_mut(victim).unwrap().set("stats.health", 99.0).unwrap();
    let mut removal = base.clone();
    removal.get_mut(victim).unwrap().set("stats.health", 98.0).unwrap();
    removal.remove(base.iter().nth(4).unwrap().0);
    for local in [edit, removal] {
        let patch = StorePatch::diff(&base, &local);
        let mut admin = postgres::Client::connect(&params(), postgres::NoTls).unwrap();
        let mut holder = postgres::Client::connect(&params(), postgres::NoTls).unwrap();
        let mut tx = holder.transaction().unwrap();
        tx.execute(
            "SELECT 1 FROM datacomp_entities WHERE world = $1 AND id = $2 FOR UPDATE",
            &[&w.0, &victim.to_bits().cast_signed()],
        )
        .unwrap();
        let mut writer = PgWorlds::connect(&params()).unwrap();
        let pid: i32 = writer.client().query_one("SELECT pg_backend_pid()", &[]).unwrap().get(0);
        let committing = std::thread::spawn(move || writer.commit(w, s1, &patch));
        wait_until_blocked(&mut admin, pid);
        let killed: bool =
            admin.query_one("SELECT pg_terminate_backend($1)", &[&pid]).unwrap().get(0);
        assert!(killed);
        let result = committing.join().unwrap();
        assert!(matches!(result, Err(CommitError::Other(Error::Db(_)))), "{result:?}");
        tx.rollback().unwrap();
        let (now, seq) = worlds.load(w).unwrap();
        assert_eq!((seq, &now), (s1, &base));
        assert!(worlds.changes_since(w, s1).unwrap().is_empty());
    }
    let mut edit = base.clone();
    edit.get_mut(victim).unwrap().set("stats.health", 97.0).unwrap();
    assert_eq!(worlds.commit(w, s1, &StorePatch::diff(&base, &edit)).unwrap(), Seq(2));
}

/// Without the schema, every operation says to make it; a schema of a newer version is
/// refused. In a PostgreSQL schema (namespace) of the test's own.
#[test]
fn the_schema_is_checked() {
    let mut admin = postgres::Client::connect(&params(), postgres::NoTls).unwrap();
    let schema = unique("schema").replace('-', "_");
    admin.batch_execute(&format!("CREATE SCHEMA {schema}")).unwrap();
    let own = format!("{} options='-c search_path={schema}'", params());

    let mut worlds = PgWorlds::connect(&own).unwrap();
    assert!(matches!(worlds.create_world("w"), Err(Error::NoSchema)));
    assert!(matches!(worlds.load(datacomp_pg::WorldId(1)), Err(Error::NoSchema)));
    worlds.migrate_schema().unwrap();
    worlds.migrate_schema().unwrap(); // again: nothing to do
    let w = worlds.create_world("w").unwrap();
    let version: i64 = admin
        .query_one(&format!("SELECT version FROM {schema}.datacomp_schema WHERE id = 1"), &[])
        .unwrap()
        .get(0);
    assert_eq!(version, datacomp_pg::SCHEMA_VERSION);

    admin.batch_execute(&format!("UPDATE {schema}.datacomp_schema SET version = 2")).unwrap();
    let mut newer = PgWorlds::connect(&own).unwrap();
    let err = newer.load(w).unwrap_err();
    assert!(matches!(err, Error::SchemaVersion { found: 2, supported: 1 }), "{err}");
    assert_eq!(
        err.to_string(),
        "the database's datacomp tables are of schema version 2; this build reads versions up to 1"
    );
    assert!(matches!(newer.migrate_schema(), Err(Error::SchemaVersion { found: 2, .. })));
    admin.batch_execute(&format!("DROP SCHEMA {schema} CASCADE")).unwrap();
}

#[test]
fn a_follower_converges() {
    follower_converges(|w| Follower::new(&params(), w).unwrap());
}

/// The follower of a server without `LISTEN` (CockroachDB) polls the feed, and converges too.
#[test]
fn a_polling_follower_converges() {
    follower_converges(|w| Follower::polling(&params(), w, Duration::from_millis(20)).unwrap());
}

fn follower_converges(start: impl FnOnce(datacomp_pg::WorldId) -> Follower) {
    let mut worlds = connect();
    let w = worlds.create_world(&unique("follow")).unwrap();
    let mut follower = start(w);
    assert_eq!(follower.seq(), Seq(0));
    let (mut base, mut seq) = worlds.load(w).unwrap();
    let mut rng = Rng(11);
    let mut local = base.clone();
    add_sheets(&mut local, 30, &mut rng);
    for round in 0..40 {
        let ids: Vec<_> = local.iter().map(|(id, _)| id).collect();
        let id = ids[rng.below(ids.len() as u64) as usize];
        match round % 7 {
            3 => {
                local.remove(id);
            }
            5 => add_sheets(&mut local, 2, &mut rng),
            _ => local.get_mut(id).unwrap().set("stats.health", round as f32).unwrap(),
        }
        seq = worlds.commit(w, seq, &StorePatch::diff(&base, &local)).unwrap();
        base = worlds.load(w).unwrap().0;
        local = base.clone();
    }
    let start = Instant::now();
    while follower.seq() < seq {
        follower.wait(Duration::from_secs(5)).unwrap();
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the follower is stuck at {}",
            follower.seq()
        );
    }
    assert_eq!(follower.seq(), seq);
    assert_eq!(follower.store(), &base);
    let (mut a, mut b) = (follower.store().clone(), base.clone());
    a.compact();
    b.compact();
    assert_eq!(a.to_bytes(), b.to_bytes());
}

/// A damaged delta in the feed is reported by its seq, a patch of an entity the world lacks
/// is refused, and neither changes the world.
#[test]
fn a_damaged_delta_and_a_stray_patch_are_refused() {
    let mut worlds = connect();
    let w = worlds.create_world(&unique("feed")).unwrap();
    let (empty, _) = worlds.load(w).unwrap();
    let mut local = empty.clone();
    add_sheets(&mut local, 5, &mut Rng(9));
    let s1 = worlds.commit(w, Seq(0), &StorePatch::diff(&empty, &local)).unwrap();

    // A patch made from another store: it edits an entity this world does not hold.
    let mut other = Store::new();
    add_sheets(&mut other, 9, &mut Rng(1));
    let stray = other.iter().nth(8).unwrap().0;
    let mut edited = other.clone();
    edited.get_mut(stray).unwrap().set("stats.health", 1.0).unwrap();
    let err = connect().commit(w, s1, &StorePatch::diff(&other, &edited)).unwrap_err();
    assert!(
        matches!(&err, CommitError::Other(Error::NotInWorld { id, .. }) if *id == stray),
        "{err}"
    );
    assert_eq!(worlds.load(w).unwrap(), (local.clone(), s1));

    worlds
        .client()
        .execute(
            "UPDATE datacomp_feed SET delta = substr(delta, 1, 40) WHERE world = $1 AND seq = 1",
            &[&w.0],
        )
        .unwrap();
    let err = worlds.changes_since(w, Seq(0)).unwrap_err();
    assert!(matches!(&err, Error::Stored { what, .. } if what == "delta 1"), "{err}");
    assert!(err.to_string().starts_with(&format!("world {w}: delta 1: ")), "{err}");
    let err = Follower::new(&params(), w).and_then(|mut f| f.catch_up().map(|_| f.seq()));
    assert!(err.is_ok(), "a follower starts from the rows, not the feed: {err:?}");
    assert_eq!(worlds.load(w).unwrap().1, s1);
}
