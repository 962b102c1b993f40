//! Migrating 100,000 character sheets (a subtree renamed, `stats` to `attributes`, and a
//! default, `attributes.luck`, that every sheet lacks, so that every sheet is rewritten), beside
//! a full `Store::from_bytes` of the same store (the goal: at most 3x), memcpy of the save's
//! bytes into a warm and a fresh buffer, and the same migration done the usual ways: on nested
//! `serde_json::Value` sheets, and on `FxHashMap<u32, OwnedValue>` sheets keyed by the same
//! hashes; in place (an error halfway leaves half the sheets migrated), and on a copy made
//! first (all or nothing, as `Migrations::apply` is: it builds the new arena aside).
//!
//! Run: `cargo bench --bench migrate -- --warm-up-time 1 --measurement-time 3`. The group
//! `migrate/1000_entities_10000_one_key_steps` times a migration of many small steps.

#[path = "common/sheet.rs"]
mod sheet;

use std::hint::black_box;

use criterion::measurement::WallTime;
use criterion::{BatchSize, BenchmarkGroup, Criterion, criterion_group, criterion_main};
use datacomp::{Key, MigrationStep, Migrations, OwnedValue, Store};
use fxhash::FxHashMap;

const ENTITIES: usize = 100_000;

/// 100,000 sheets, every key named (as a JSON import names them).
fn store() -> Store {
    let sheet = sheet::build_blob();
    let mut store = Store::with_capacity(ENTITIES, ENTITIES * sheet.used_bytes());
    for _ in 0..ENTITIES {
        store.insert(&sheet);
    }
    for (path, _) in sheet::SHEET {
        store.insert_key_name(path).unwrap();
    }
    store
}

fn migrations() -> Migrations {
    Migrations::new(2)
        .step(MigrationStep::to(2).rename("stats", "attributes").default("attributes.luck", 1))
}

/// The same migration on a nested JSON sheet.
fn migrate_json(sheet: &mut serde_json::Value) {
    let object = sheet.as_object_mut().unwrap();
    if let Some(stats) = object.remove("stats") {
        assert!(object.insert("attributes".to_owned(), stats).is_none());
    }
    let attributes = object
        .entry("attributes")
        .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()))
        .as_object_mut()
        .unwrap();
    attributes.entry("luck").or_insert_with(|| serde_json::Value::from(1.0));
}

/// The same migration on a sheet keyed by hashes: the renamed keys listed from the names.
fn migrate_fx(sheet: &mut FxHashMap<u32, OwnedValue>, renames: &[(u32, u32)], luck: u32) {
    for &(from, to) in renames {
        if let Some(value) = sheet.remove(&from) {
            assert!(sheet.insert(to, value).is_none());
        }
    }
    sheet.entry(luck).or_insert(OwnedValue::Float(1.0));
}

/// `datacomp_migrate`: `migrations` applied to a fresh clone of `store` (the clone not timed).
fn bench_migrate(group: &mut BenchmarkGroup<'_, WallTime>, store: &Store, migrations: &Migrations) {
    group.bench_function("datacomp_migrate", |b| {
        b.iter_batched(
            || store.clone(),
            |mut store| {
                black_box(migrations).apply(&mut store).unwrap();
                store
            },
            BatchSize::LargeInput,
        )
    });
}

fn migrate(c: &mut Criterion) {
    let store = store();
    let bytes = store.to_bytes();
    let migrations = migrations();
    {
        let mut check = store.clone();
        let report = migrations.apply(&mut check).unwrap();
        println!("{report}");
        assert_eq!(report.steps[0].entities, ENTITIES);
    }
    let json: Vec<serde_json::Value> = (0..ENTITIES).map(|_| sheet::build_json()).collect();
    let fx: Vec<FxHashMap<u32, OwnedValue>> =
        (0..ENTITIES).map(|_| sheet::build_fxhashmap()).collect();
    let renames: Vec<(u32, u32)> = sheet::SHEET
        .iter()
        .filter_map(|(path, _)| path.strip_prefix("stats."))
        .map(|rest| {
            (
                Key::parse(&format!("stats.{rest}")).raw(),
                Key::parse(&format!("attributes.{rest}")).raw(),
            )
        })
        .collect();
    let luck = Key::parse("attributes.luck").raw();

    let mut group = c.benchmark_group("migrate/100k_sheets");
    group.sample_size(10);
    group.bench_function("memcpy_into_reused_buffer", |b| {
        let mut out = Vec::with_capacity(bytes.len());
        b.iter(|| {
            out.clear();
            out.extend_from_slice(black_box(&bytes));
        })
    });
    group.bench_function("memcpy", |b| b.iter(|| black_box(&bytes[..]).to_vec()));
    group.bench_function("datacomp_from_bytes", |b| {
        b.iter(|| Store::from_bytes(black_box(&bytes)).unwrap())
    });
    bench_migrate(&mut group, &store, &migrations);
    group.bench_function("serde_json_value", |b| {
        b.iter_batched(
            || json.clone(),
            |mut sheets| {
                for sheet in &mut sheets {
                    migrate_json(sheet);
                }
                sheets
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("fxhashmap_u32", |b| {
        b.iter_batched(
            || fx.clone(),
            |mut sheets| {
                for sheet in &mut sheets {
                    migrate_fx(sheet, &renames, luck);
                }
                sheets
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("serde_json_value_on_a_copy", |b| {
        b.iter(|| {
            let mut sheets = black_box(&json).clone();
            for sheet in &mut sheets {
                migrate_json(sheet);
            }
            sheets
        })
    });
    group.bench_function("fxhashmap_u32_on_a_copy", |b| {
        b.iter(|| {
            let mut sheets = black_box(&fx).clone();
            for sheet in &mut sheets {
                migrate_fx(sheet, &renames, luck);
            }
            sheets
        })
    });
    group.finish();
}

/// Issue 30: 1,000 entities of 50 keys, 10,000 one-key steps (each a `set` of a new key: they
/// commute, so `Migrations::apply` folds them into one pass an entity), beside the same steps
/// on `FxHashMap<u32, OwnedValue>` entities, step by step, in place.
fn many_steps(c: &mut Criterion) {
    let (entities, keys, steps) = (1_000, 50, 10_000);
    let mut store = Store::new();
    let mut fx: Vec<FxHashMap<u32, OwnedValue>> = Vec::new();
    for _ in 0..entities {
        let entries = (0..keys).map(|k| (format!("k{k}"), 1));
        store.insert_entries(entries).unwrap();
        fx.push(
            (0..keys)
                .map(|k| (Key::parse(&format!("k{k}")).raw(), OwnedValue::Float(1.0)))
                .collect(),
        );
    }
    let step = |i: usize| MigrationStep::to(i as u32 + 1).set(&format!("s{i}"), 2);
    let migrations = (0..steps).fold(Migrations::new(steps as u32), |m, i| m.step(step(i)));
    let written: Vec<u32> = (0..steps).map(|i| Key::parse(&format!("s{i}")).raw()).collect();
    let mut group = c.benchmark_group("migrate/1000_entities_10000_one_key_steps");
    group.sample_size(10);
    bench_migrate(&mut group, &store, &migrations);
    group.bench_function("fxhashmap_u32_step_by_step", |b| {
        b.iter_batched(
            || fx.clone(),
            |mut sheets| {
                for &key in &written {
                    for sheet in &mut sheets {
                        sheet.insert(key, OwnedValue::Float(2.0));
                    }
                }
                sheets
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

/// Issue 30: a subtree renamed back and forth (`x -> y`, `y -> x`), 10,000 steps, over one
/// entity of 10,000 names under `x` (345 s before `repeat.rs`) and over 1,000 entities of 10.
fn renames_back_and_forth(c: &mut Criterion) {
    let steps = 10_000;
    let step = |i: u32| {
        let (from, to) = if i.is_multiple_of(2) { ("x", "y") } else { ("y", "x") };
        MigrationStep::to(i + 1).rename(from, to)
    };
    let migrations = (0..steps).fold(Migrations::new(steps), |m, i| m.step(step(i)));
    let mut group = c.benchmark_group("migrate/renames_back_and_forth_10000_steps");
    group.sample_size(10);
    for (entities, names) in [(1, 10_000), (1_000, 10)] {
        let mut store = Store::new();
        for _ in 0..entities {
            store.insert_entries((0..names).map(|k| (format!("x.k{k}"), 1))).unwrap();
        }
        group.bench_function(format!("{entities}_entities_{names}_names"), |b| {
            b.iter_batched(
                || store.clone(),
                |mut store| migrations.apply(&mut store).unwrap(),
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

/// Issue 30: renames no repeat finds, composed as prefix moves (`prefix.rs`), 10,000 steps: a
/// subtree moved round a cycle of five paths, 1,000 entities of 10 keys (17.1 s through the
/// release CLI before); and 100 subtrees of 100 names, one entity each, each step moving one
/// to a free one of 200 paths (a random walk that never repeats).
fn renames_that_do_not_repeat(c: &mut Criterion) {
    let steps = 10_000_u32;
    let cycle = ["x", "y", "z", "w", "v"];
    let round = (0..steps).fold(Migrations::new(steps), |m, i| {
        let (from, to) = (cycle[i as usize % 5], cycle[(i as usize + 1) % 5]);
        m.step(MigrationStep::to(i + 1).rename(from, to))
    });
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let mut slots: Vec<usize> = (0..200).collect();
    let random = (0..steps).fold(Migrations::new(steps), |m, i| {
        let (taken, free) = (next(100), 100 + next(100));
        let step = MigrationStep::to(i + 1)
            .rename(&format!("s{}", slots[taken]), &format!("s{}", slots[free]));
        slots.swap(taken, free);
        m.step(step)
    });
    let mut group = c.benchmark_group("migrate/renames_that_do_not_repeat_10000_steps");
    group.sample_size(10);
    let cases = [
        ("cycle_of_5_1000_entities_10_keys", &round, 1_000, 10, 0),
        ("random_walk_100_subtrees_100_names", &random, 100, 100, 100),
    ];
    for (name, migrations, entities, keys, tops) in cases {
        let mut store = Store::new();
        for e in 0..entities {
            let top = if tops == 0 { "x".to_owned() } else { format!("s{}", e % tops) };
            store.insert_entries((0..keys).map(|k| (format!("{top}.k{k}"), 1))).unwrap();
        }
        group.bench_function(name, |b| {
            b.iter_batched(
                || store.clone(),
                |mut store| migrations.apply(&mut store).unwrap(),
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, migrate, many_steps, renames_back_and_forth, renames_that_do_not_repeat);
criterion_main!(benches);
