//! datacomp-pg against PostgreSQL (`DATACOMP_PG`, as the tests: `eval "$(pg/ci/start-postgres)"`)
//! and against the file-based default, beside the two baselines a backend would otherwise use:
//! a bare `UPDATE` of one `bytea` row (the floor for a 1-entity commit; goal: within 2x) and
//! each sheet as a `jsonb` document updated whole with a version check (the common practice;
//! goal: a 100,000-sheet world loads at least 5x faster than the documents).
//!
//! `cargo bench -p datacomp-pg` (or `-- --quick` to check it runs). Commits are timed alone:
//! each patch is made beforehand, with `Mark::take_delta`, outside the timing.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use datacomp::handle_map::Id;
use datacomp::{Store, StorePatch};
use datacomp_pg::{FileWorlds, PgWorlds, Seq, WorldId, Worlds};

const SHEETS: usize = 1000;
const LOAD_SHEETS: usize = 100_000;

fn params() -> String {
    std::env::var("DATACOMP_PG").unwrap_or_else(|_| {
        panic!(
            "DATACOMP_PG is not set: start a server with `eval \"$(pg/ci/start-postgres)\"` (stop it \
             with `pg/ci/stop-postgres \"$DATACOMP_PG_DIR\"`), or point DATACOMP_PG at one"
        )
    })
}

fn unique(name: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("bench-{name}-{}-{nanos}", std::process::id())
}

/// A sheet: the shape of the tests' and the store benchmarks' character sheets.
fn sheet(store: &mut Store, i: usize) -> Id {
    let id = store.insert_entries([("name", format!("sheet {i}").as_str())]).unwrap();
    let mut s = store.get_mut(id).unwrap();
    for (k, v) in
        [("stats.health", 100.0), ("stats.mana", 50.0), ("stats.level", 3.0), ("stats.xp", 1200.0)]
    {
        s.set(k, v).unwrap();
    }
    s.set("status.poisoned", false).unwrap();
    s.set("position", [i as f32, 2.0, 0.5]).unwrap();
    id
}

/// The same sheet as a JSON document.
fn sheet_json(i: usize) -> String {
    format!(
        r#"{{"name":"sheet {i}","stats":{{"health":100,"mana":50,"level":3,"xp":1200}},"status":{{"poisoned":false}},"position":[{i},2,0.5]}}"#
    )
}

/// A world of `n` sheets in `worlds`, and its store and seq.
fn world_of(worlds: &mut impl Worlds, name: &str, n: usize) -> (WorldId, Store, Seq) {
    let w = worlds.create_world(&unique(name)).unwrap();
    let (empty, seq) = worlds.load(w).unwrap();
    let mut local = empty.clone();
    for i in 0..n {
        sheet(&mut local, i);
    }
    let seq = worlds.commit(w, seq, &StorePatch::diff(&empty, &local)).unwrap();
    let (store, at) = worlds.load(w).unwrap();
    assert_eq!(at, seq);
    (w, store, seq)
}

/// Commits of `per` entities' edits by one writer, timed alone.
fn commits(
    worlds: &mut impl Worlds,
    w: WorldId,
    store: &mut Store,
    seq: &mut Seq,
    per: usize,
    iters: u64,
) -> Duration {
    let ids: Vec<Id> = store.iter().map(|(id, _)| id).collect();
    let mut mark = store.mark();
    let mut spent = Duration::ZERO;
    for i in 0..iters {
        for j in 0..per {
            let id = ids[(i as usize * per + j) % ids.len()];
            store.get_mut(id).unwrap().set("stats.health", (i % 1000) as f32).unwrap();
        }
        let patch = mark.take_delta(store);
        let start = Instant::now();
        *seq = worlds.commit(w, *seq, &patch).unwrap();
        spent += start.elapsed();
    }
    spent
}

fn baseline_tables(client: &mut postgres::Client, n: usize) {
    client
        .batch_execute(
            "DROP TABLE IF EXISTS datacomp_bench_bytea, datacomp_bench_jsonb;
             CREATE TABLE datacomp_bench_bytea (id BIGINT PRIMARY KEY, blob BYTEA NOT NULL);
             CREATE TABLE datacomp_bench_jsonb (id BIGINT PRIMARY KEY, doc JSONB NOT NULL, version BIGINT NOT NULL);",
        )
        .unwrap();
    let mut store = Store::new();
    let id = sheet(&mut store, 0);
    let blob = store.get(id).unwrap().as_bytes().to_vec();
    for chunk in (0..n as i64).collect::<Vec<_>>().chunks(10_000) {
        let docs: Vec<String> = chunk.iter().map(|&i| sheet_json(i as usize)).collect();
        let blobs: Vec<&[u8]> = chunk.iter().map(|_| blob.as_slice()).collect();
        client
            .execute(
                "INSERT INTO datacomp_bench_jsonb SELECT u.id, u.doc::JSONB, 0 FROM unnest($1::BIGINT[], $2::TEXT[]) AS u (id, doc)",
                &[&chunk, &docs],
            )
            .unwrap();
        client
            .execute(
                "INSERT INTO datacomp_bench_bytea SELECT * FROM unnest($1::BIGINT[], $2::BYTEA[])",
                &[&chunk, &blobs],
            )
            .unwrap();
    }
}

fn bench(c: &mut Criterion) {
    let params = params();
    let mut pg = PgWorlds::connect(&params).unwrap();
    pg.migrate_schema().unwrap();
    let mut baseline = postgres::Client::connect(&params, postgres::NoTls).unwrap();
    baseline_tables(&mut baseline, LOAD_SHEETS);
    let dir = tempfile::tempdir().unwrap();
    let mut files = FileWorlds::open(dir.path()).unwrap();
    let blob = {
        let mut s = Store::new();
        let id = sheet(&mut s, 0);
        s.get(id).unwrap().as_bytes().to_vec()
    };

    let mut group = c.benchmark_group("commit");
    for per in [1, 100] {
        let (w, mut store, mut seq) = world_of(&mut pg, "commit", SHEETS);
        group.bench_function(format!("{per}_entities/1_writer/datacomp_pg"), |b| {
            b.iter_custom(|iters| commits(&mut pg, w, &mut store, &mut seq, per, iters));
        });
        let (w, mut store, mut seq) = world_of(&mut files, &format!("commit-{per}"), SHEETS);
        group.bench_function(format!("{per}_entities/1_writer/file_worlds"), |b| {
            b.iter_custom(|iters| commits(&mut files, w, &mut store, &mut seq, per, iters));
        });
        group.bench_function(format!("{per}_entities/1_writer/bare_update_bytea"), |b| {
            let ids: Vec<i64> = (0..per as i64).collect();
            let blobs: Vec<&[u8]> = ids.iter().map(|_| blob.as_slice()).collect();
            // Prepared once, as datacomp-pg prepares its own: one round trip each.
            let one = baseline.prepare("UPDATE datacomp_bench_bytea SET blob = $2 WHERE id = $1").unwrap();
            let many = baseline
                .prepare("UPDATE datacomp_bench_bytea AS t SET blob = u.blob FROM unnest($1::BIGINT[], $2::BYTEA[]) AS u (id, blob) WHERE t.id = u.id")
                .unwrap();
            b.iter(|| {
                if per == 1 {
                    baseline.execute(&one, &[&0_i64, &blobs[0]]).unwrap()
                } else {
                    baseline.execute(&many, &[&ids, &blobs]).unwrap()
                }
            });
        });
        group.bench_function(format!("{per}_entities/1_writer/jsonb_documents"), |b| {
            let ids: Vec<i64> = (0..per as i64).collect();
            let docs: Vec<String> = (0..per).map(sheet_json).collect();
            let update = baseline
                .prepare(
                    "UPDATE datacomp_bench_jsonb AS t SET doc = u.doc::JSONB, version = t.version + 1 \
                     FROM unnest($1::BIGINT[], $2::TEXT[]) AS u (id, doc) WHERE t.id = u.id",
                )
                .unwrap();
            // Whole documents, each with its version bumped (a conditional write's cost).
            b.iter(|| baseline.execute(&update, &[&ids, &docs]).unwrap());
        });
        // Four writers: each its own connection, editing its own entities of one world
        // (datacomp: through commit_merging, since the world's seq is shared), or its own
        // rows (the baselines).
        let (w, _, _) = world_of(&mut pg, "writers", SHEETS);
        group.bench_function(format!("{per}_entities/4_writers/datacomp_pg"), |b| {
            b.iter_custom(|iters| {
                let threads: Vec<_> = (0..4)
                    .map(|t| {
                        let params = params.clone();
                        std::thread::spawn(move || {
                            let mut worlds = PgWorlds::connect(&params).unwrap();
                            let (mut base, mut seq) = worlds.load(w).unwrap();
                            let ids: Vec<Id> =
                                base.iter().map(|(id, _)| id).skip(t * 250).take(250).collect();
                            let start = Instant::now();
                            for i in 0..iters.div_ceil(4) {
                                let mut local = base.clone();
                                for j in 0..per {
                                    let id = ids[(i as usize * per + j) % ids.len()];
                                    local
                                        .get_mut(id)
                                        .unwrap()
                                        .set("stats.health", (i % 1000) as f32)
                                        .unwrap();
                                }
                                let (at, _) = worlds.commit_merging(w, &base, seq, &local).unwrap();
                                for (s, patch) in worlds.changes_since(w, seq).unwrap() {
                                    patch.apply_to_equal(&mut base).unwrap();
                                    seq = s;
                                }
                                assert!(seq >= at);
                            }
                            start.elapsed()
                        })
                    })
                    .collect();
                threads.into_iter().map(|t| t.join().unwrap()).max().unwrap_or_default()
            });
        });
        group.bench_function(format!("{per}_entities/4_writers/bare_update_bytea"), |b| {
            b.iter_custom(|iters| {
                let threads: Vec<_> = (0..4_i64)
                    .map(|t| {
                        let (params, blob) = (params.clone(), blob.clone());
                        std::thread::spawn(move || {
                            let mut client = postgres::Client::connect(&params, postgres::NoTls).unwrap();
                            let ids: Vec<i64> = (0..per as i64).map(|i| t * 1000 + i).collect();
                            let blobs: Vec<&[u8]> = ids.iter().map(|_| blob.as_slice()).collect();
                            let update = client
                                .prepare("UPDATE datacomp_bench_bytea AS t SET blob = u.blob FROM unnest($1::BIGINT[], $2::BYTEA[]) AS u (id, blob) WHERE t.id = u.id")
                                .unwrap();
                            let start = Instant::now();
                            for _ in 0..iters.div_ceil(4) {
                                client.execute(&update, &[&ids, &blobs]).unwrap();
                            }
                            start.elapsed()
                        })
                    })
                    .collect();
                threads.into_iter().map(|t| t.join().unwrap()).max().unwrap_or_default()
            });
        });
    }
    group.finish();

    let mut group = c.benchmark_group("load/100000_sheets");
    group.sample_size(10);
    let (w, store, _) = world_of(&mut pg, "load", LOAD_SHEETS);
    group.bench_function("datacomp_pg", |b| {
        b.iter(|| {
            let (loaded, _) = pg.load(w).unwrap();
            assert_eq!(loaded.len(), store.len());
            black_box(loaded)
        });
    });
    let (w, _, _) = world_of(&mut files, "load", LOAD_SHEETS);
    group.bench_function("file_worlds", |b| b.iter(|| black_box(files.load(w).unwrap())));
    group.bench_function("jsonb_documents", |b| {
        b.iter(|| {
            let rows =
                baseline.query("SELECT id, doc::TEXT FROM datacomp_bench_jsonb", &[]).unwrap();
            let docs: Vec<(i64, serde_json::Value)> = rows
                .iter()
                .map(|r| (r.get(0), serde_json::from_str(r.get::<_, &str>(1)).unwrap()))
                .collect();
            assert_eq!(docs.len(), LOAD_SHEETS);
            black_box(docs)
        });
    });
    group.bench_function("bare_select_bytea", |b| {
        b.iter(|| {
            black_box(baseline.query("SELECT id, blob FROM datacomp_bench_bytea", &[]).unwrap())
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
