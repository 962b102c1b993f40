//! Time travel on 100,000 character sheets: a snapshot and a restore beside memcpy of the same
//! bytes (into a fresh buffer and into a warm one) and a clone of the usual
//! `Vec<HashMap<String, serde_json::Value>>`; and, with 1% of the sheets changed (1,000 sheets:
//! their health), a history commit, undo and redo, `Mark::changes` and `Mark::delta`, beside
//! what they replace: a full snapshot per commit, and `StorePatch::diff` against a copy.
//!
//! Run: `cargo bench --bench history -- --warm-up-time 1 --measurement-time 3`. It prints the
//! sizes first.
//!
//! The `cpu_time/` group measures the same operations in CPU time (the thread's user and system
//! time, page faults included, from `/proc/thread-self/stat`, in 10 ms ticks over samples of
//! hundreds of milliseconds): on a shared machine, wall-clock time also counts the time other
//! processes held the cores, which weighs most on the shortest operations.

#[path = "common/changed_world.rs"]
mod changed_world;
#[path = "common/sheet.rs"]
mod sheet;

use std::hint::black_box;
use std::time::Duration;

use changed_world::{CHANGE_EVERY, ENTITIES, json_world, worlds};
use criterion::{Bencher, Criterion, criterion_group, criterion_main};
use datacomp::{History, Id, Snapshot, Store, StorePatch};

/// The bytes of the store's buffers, as one buffer: what a memcpy of the store copies.
fn store_bytes(store: &Store) -> Vec<u8> {
    Snapshot::new(store).as_store().to_bytes()
}

/// Sets the health of every 100th sheet: 1% of them, each to a value that differs from the
/// last round's.
fn change_one_percent(store: &mut Store, ids: &[Id], round: &mut u32) {
    *round += 1;
    for &id in ids.iter().step_by(CHANGE_EVERY) {
        store.get_mut(id).unwrap().set(sheet::ONE_KEY, *round as f32).unwrap();
    }
}

fn snapshot_restore(c: &mut Criterion) {
    let (world, _) = worlds();
    let bytes = store_bytes(&world);
    let snapshot = Snapshot::new(&world);
    println!(
        "store: {} entities, snapshot {} bytes, save {} bytes",
        world.len(),
        snapshot.byte_len(),
        bytes.len()
    );
    let json = json_world(&world);

    let mut group = c.benchmark_group("snapshot/100k_sheets");
    group.sample_size(10);
    group.bench_function("datacomp_snapshot", |b| b.iter(|| Snapshot::new(black_box(&world))));
    group.bench_function("memcpy_fresh_buffer", |b| b.iter(|| black_box(&bytes[..]).to_vec()));
    let mut target = world.clone();
    group.bench_function("datacomp_restore", |b| {
        b.iter(|| black_box(&snapshot).restore(&mut target))
    });
    let mut warm = vec![0_u8; bytes.len()];
    group.bench_function("memcpy_warm_buffer", |b| {
        b.iter(|| warm.copy_from_slice(black_box(&bytes[..])))
    });
    group.bench_function("hashmap_world_clone", |b| b.iter(|| black_box(&json).clone()));
    group.finish();
}

fn commit_undo_redo(c: &mut Criterion) {
    let (mut world, _) = worlds();
    let ids: Vec<Id> = world.iter().map(|(id, _)| id).collect();
    let mut round = 0;
    let bytes = store_bytes(&world);
    let mut warm = vec![0_u8; bytes.len()];

    let mut group = c.benchmark_group("history/100k_sheets_1pct_changed");
    group.sample_size(10);
    group.bench_function("memcpy_warm_buffer", |b| {
        b.iter(|| warm.copy_from_slice(black_box(&bytes[..])))
    });
    group.bench_function("memcpy_fresh_buffer", |b| b.iter(|| black_box(&bytes[..]).to_vec()));
    // What each round of the others costs before its own work.
    group.bench_function("writes_only", |b| {
        b.iter(|| change_one_percent(&mut world, &ids, &mut round));
    });
    // The peer of a commit: a snapshot per commit.
    group.bench_function("writes_and_snapshot", |b| {
        b.iter(|| {
            change_one_percent(&mut world, &ids, &mut round);
            Snapshot::new(black_box(&world))
        });
    });
    let mut history = History::with_max_bytes(256 << 20);
    history.commit(&world);
    group.bench_function("writes_and_history_commit", |b| {
        b.iter(|| {
            change_one_percent(&mut world, &ids, &mut round);
            assert!(history.commit(&world));
        });
    });
    // Undo and redo of a step of 1,000 sheets, in turn.
    let mut undo = true;
    group.bench_function("history_undo_or_redo", |b| {
        b.iter(|| {
            let moved = if undo { history.undo(&mut world) } else { history.redo(&mut world) };
            undo = !undo;
            assert!(moved);
        });
    });
    if !undo {
        history.redo(&mut world);
    }

    // Changes since a mark, beside StorePatch::diff against a copy (what a delta took before): the
    // 1,000 sheets changed since the mark, read without writing.
    let mark = world.mark();
    let copy = Snapshot::new(&world);
    change_one_percent(&mut world, &ids, &mut round);
    let _ = mark.delta(&world); // the mark's crc32, once
    group.bench_function("changes_since", |b| b.iter(|| black_box(&mark).changes(&world)));
    group.bench_function("delta_since", |b| b.iter(|| black_box(&mark).delta(&world)));
    group.bench_function("store_diff", |b| {
        b.iter(|| StorePatch::diff(copy.as_store(), black_box(&world)))
    });
    group.finish();
    println!(
        "history after the run: {history:?}; a step of {} changed sheets: {} bytes",
        ENTITIES / CHANGE_EVERY,
        history.byte_len() / history.undo_steps().max(1),
    );
}

/// The calling thread's CPU time (user and system), in the kernel's 10 ms ticks (Linux; zero
/// elsewhere, where the `cpu_time/` group measures nothing).
fn cpu_time() -> Duration {
    let Ok(stat) = std::fs::read_to_string("/proc/thread-self/stat") else {
        return Duration::ZERO;
    };
    // After the command name in parentheses: fields 3.. (state, ppid, ...); utime and stime
    // are fields 14 and 15.
    let fields: Vec<u64> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().skip(1).map(|f| f.parse().unwrap_or(0)).collect())
        .unwrap_or_default();
    let ticks = fields.get(10).copied().unwrap_or(0) + fields.get(11).copied().unwrap_or(0);
    Duration::from_millis(ticks * 10)
}

/// Times `routine` in CPU time.
fn cpu<O>(b: &mut Bencher<'_>, mut routine: impl FnMut() -> O) {
    b.iter_custom(|iters| {
        let start = cpu_time();
        for _ in 0..iters {
            black_box(routine());
        }
        cpu_time() - start
    });
}

fn cpu_times(c: &mut Criterion) {
    let (mut world, _) = worlds();
    let ids: Vec<Id> = world.iter().map(|(id, _)| id).collect();
    let mut round = 0;
    let bytes = store_bytes(&world);
    let mut warm = vec![0_u8; bytes.len()];
    let snapshot = Snapshot::new(&world);

    let mut group = c.benchmark_group("cpu_time/100k_sheets_1pct_changed");
    group.sample_size(10);
    group.bench_function("memcpy_fresh_buffer", |b| cpu(b, || black_box(&bytes[..]).to_vec()));
    group.bench_function("datacomp_snapshot", |b| cpu(b, || Snapshot::new(black_box(&world))));
    group.bench_function("memcpy_warm_buffer", |b| {
        cpu(b, || warm.copy_from_slice(black_box(&bytes[..])));
    });
    let mut target = world.clone();
    group.bench_function("datacomp_restore", |b| {
        cpu(b, || black_box(&snapshot).restore(&mut target))
    });
    group.bench_function("writes_only", |b| {
        cpu(b, || change_one_percent(&mut world, &ids, &mut round));
    });
    let mut history = History::with_max_bytes(256 << 20);
    history.commit(&world);
    group.bench_function("writes_and_history_commit", |b| {
        cpu(b, || {
            change_one_percent(&mut world, &ids, &mut round);
            assert!(history.commit(&world));
        });
    });
    let mut undo = true;
    group.bench_function("history_undo_or_redo", |b| {
        cpu(b, || {
            let moved = if undo { history.undo(&mut world) } else { history.redo(&mut world) };
            undo = !undo;
            assert!(moved);
        });
    });
    if !undo {
        history.redo(&mut world);
    }
    let mark = world.mark();
    let copy = Snapshot::new(&world);
    change_one_percent(&mut world, &ids, &mut round);
    let _ = mark.delta(&world);
    group.bench_function("changes_since", |b| cpu(b, || black_box(&mark).changes(&world)));
    group.bench_function("delta_since", |b| cpu(b, || black_box(&mark).delta(&world)));
    group.bench_function("store_diff", |b| {
        cpu(b, || StorePatch::diff(copy.as_store(), black_box(&world)));
    });
    group.finish();
}

criterion_group!(benches, snapshot_restore, commit_undo_redo, cpu_times);
criterion_main!(benches);
