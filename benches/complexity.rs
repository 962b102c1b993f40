//! How the whole-blob operations scale: one entity of 1,000 to 1,000,000 keys (a crafted
//! document, far past any character sheet), one group per operation, each size beside the peer
//! a user would otherwise pick and memcpy of the same bytes (into a warm buffer and into a fresh
//! one). Every operation is O(n log n): the time per key (criterion's throughput, in
//! elements) grows by at most a log factor from 1k to 1M keys.
//!
//! Run: `cargo bench --bench complexity` (or one group: `-- complexity/import`); instruction
//! counts of the same operations: `examples/complexity_cost.rs`. The 1M-key
//! inputs take a few seconds to build, once, on the first benchmark that needs them.
//!
//! The entity: keys `k0`, `k1`, ... at the top level, a quarter each strings, floats, booleans
//! and two-float arrays. `target` changes every tenth key, removes every twentieth and adds
//! n/20; `ours` and `theirs` make disjoint changes of the same kinds (no conflicts).

#[path = "common/entity.rs"]
mod entity;

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::{Arc, Mutex, OnceLock};

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use datacomp::blob::Patch;
use datacomp::{Blob, ExportOptions, ImportOptions, OwnedValue, Store};
use entity::Entities;
use fxhash::FxHashMap;

const SIZES: [usize; 4] = [1_000, 10_000, 100_000, 1_000_000];

type Map = FxHashMap<u32, OwnedValue>;

struct Data {
    entities: Entities,
    tree: serde_json::Value,
    maps: [Map; 5],
}

impl std::ops::Deref for Data {
    type Target = Entities;

    fn deref(&self) -> &Entities {
        &self.entities
    }
}

fn map(blob: &Blob) -> Map {
    blob.iter().map(|(k, v)| (k.raw(), v.to_owned_value())).collect()
}

fn build(n: usize) -> Data {
    let entities = entity::build(n);
    let tree = serde_json::from_str(&entities.text).expect("parses");
    let e = &entities;
    let maps = [map(&e.base), map(&e.reversed), map(&e.target), map(&e.ours), map(&e.theirs)];
    Data { entities, tree, maps }
}

/// The inputs of size `n`, built on first use.
fn data(n: usize) -> Arc<Data> {
    static CACHE: OnceLock<Mutex<HashMap<usize, Arc<Data>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    let mut cache = cache.lock().unwrap();
    Arc::clone(cache.entry(n).or_insert_with(|| Arc::new(build(n))))
}

fn sizes(c: &mut Criterion, operation: &str, mut each: impl FnMut(&mut Group<'_>, usize)) {
    let mut group = c.benchmark_group(format!("complexity/{operation}"));
    for n in SIZES {
        group.throughput(Throughput::Elements(n as u64));
        group.sample_size(if n >= 100_000 { 10 } else { 20 });
        each(&mut group, n);
    }
    group.finish();
}

type Group<'a> = criterion::BenchmarkGroup<'a, criterion::measurement::WallTime>;

/// memcpy of `bytes(data)` bytes: into a buffer kept between iterations, and into a new one.
fn memcpy(group: &mut Group<'_>, n: usize, bytes: fn(&Data) -> usize) {
    group.bench_function(BenchmarkId::new("memcpy_warm", n), |b| {
        let data = data(n);
        let source = vec![7_u8; bytes(&data)];
        let mut warm = vec![0_u8; source.len()];
        b.iter(|| warm.copy_from_slice(black_box(&source)))
    });
    group.bench_function(BenchmarkId::new("memcpy_fresh", n), |b| {
        let data = data(n);
        let source = vec![7_u8; bytes(&data)];
        b.iter(|| black_box(&source).to_vec())
    });
}

fn import(c: &mut Criterion) {
    sizes(c, "import", |group, n| {
        group.bench_function(BenchmarkId::new("datacomp_blob", n), |b| {
            let data = data(n);
            b.iter(|| Blob::import(black_box(&data.text), &ImportOptions::strict()).unwrap())
        });
        group.bench_function(BenchmarkId::new("datacomp_store", n), |b| {
            let data = data(n);
            b.iter(|| Store::new().import(black_box(&data.text), &ImportOptions::strict()))
        });
        group.bench_function(BenchmarkId::new("serde_json_value", n), |b| {
            let data = data(n);
            b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(&data.text)).unwrap())
        });
        memcpy(group, n, |d| d.text.len());
    });
}

fn export(c: &mut Criterion) {
    sizes(c, "export", |group, n| {
        group.bench_function(BenchmarkId::new("datacomp", n), |b| {
            let data = data(n);
            b.iter(|| {
                black_box(&data.store).export(data.id, &ExportOptions::json().non_finite_as_null())
            })
        });
        group.bench_function(BenchmarkId::new("serde_json", n), |b| {
            let data = data(n);
            b.iter(|| serde_json::to_string(black_box(&data.tree)).unwrap())
        });
        memcpy(group, n, |d| d.text.len());
    });
}

fn equality(c: &mut Criterion) {
    sizes(c, "eq", |group, n| {
        group.bench_function(BenchmarkId::new("datacomp", n), |b| {
            let data = data(n);
            b.iter(|| black_box(&data.base) == black_box(&data.reversed))
        });
        group.bench_function(BenchmarkId::new("fxhashmap", n), |b| {
            let data = data(n);
            b.iter(|| black_box(&data.maps[0]) == black_box(&data.maps[1]))
        });
        memcpy(group, n, |d| d.base.byte_len());
    });
}

/// The FxHashMap peer of `Patch::between`: the changed entries, and the removed keys sorted.
fn map_diff(base: &Map, target: &Map) -> (Vec<(u32, OwnedValue)>, Vec<u32>) {
    let sets = target
        .iter()
        .filter(|(k, v)| base.get(k) != Some(v))
        .map(|(k, v)| (*k, v.clone()))
        .collect();
    let mut removals: Vec<u32> = base.keys().filter(|k| !target.contains_key(k)).copied().collect();
    removals.sort_unstable();
    (sets, removals)
}

fn between(c: &mut Criterion) {
    sizes(c, "between", |group, n| {
        group.bench_function(BenchmarkId::new("datacomp", n), |b| {
            let data = data(n);
            b.iter(|| Patch::between(data.base.as_blob_ref(), data.target.as_blob_ref()))
        });
        group.bench_function(BenchmarkId::new("fxhashmap", n), |b| {
            let data = data(n);
            b.iter(|| map_diff(black_box(&data.maps[0]), black_box(&data.maps[2])))
        });
        memcpy(group, n, |d| d.base.byte_len());
    });
}

fn apply(c: &mut Criterion) {
    sizes(c, "apply", |group, n| {
        group.bench_function(BenchmarkId::new("datacomp", n), |b| {
            let data = data(n);
            b.iter_batched_ref(
                || data.base.clone(),
                |base| data.patch.apply(base),
                BatchSize::LargeInput,
            )
        });
        group.bench_function(BenchmarkId::new("fxhashmap", n), |b| {
            let data = data(n);
            let (sets, removals) = map_diff(&data.maps[0], &data.maps[2]);
            b.iter_batched_ref(
                || data.maps[0].clone(),
                |base| {
                    for key in &removals {
                        base.remove(key);
                    }
                    for (key, value) in &sets {
                        base.insert(*key, value.clone());
                    }
                },
                BatchSize::LargeInput,
            )
        });
        memcpy(group, n, |d| d.base.byte_len());
    });
}

/// The FxHashMap peer of `Blob::merge3`, by the same rule (no conflicts in these inputs).
fn map_merge3(base: &Map, ours: &Map, theirs: &Map) -> Map {
    let mut merged = ours.clone();
    for (key, b) in base {
        match (ours.get(key), theirs.get(key)) {
            (Some(o), None) if o == b => {
                merged.remove(key);
            }
            (Some(o), Some(t)) if o == b && t != b => {
                merged.insert(*key, t.clone());
            }
            _ => {}
        }
    }
    for (key, t) in theirs {
        if !base.contains_key(key) && !ours.contains_key(key) {
            merged.insert(*key, t.clone());
        }
    }
    merged
}

fn merge3(c: &mut Criterion) {
    sizes(c, "merge3", |group, n| {
        group.bench_function(BenchmarkId::new("datacomp", n), |b| {
            let data = data(n);
            b.iter(|| Blob::merge3(&data.base, &data.ours, &data.theirs).unwrap())
        });
        group.bench_function(BenchmarkId::new("fxhashmap", n), |b| {
            let data = data(n);
            b.iter(|| map_merge3(&data.maps[0], &data.maps[3], &data.maps[4]))
        });
        memcpy(group, n, |d| d.base.byte_len());
    });
}

/// Validating an entity's bytes (a save's or a patch's blob is untrusted): `Blob::from_bytes`,
/// beside `serde_json` reading the same entity's text into a `Value` (what a user would
/// otherwise load).
fn from_bytes(c: &mut Criterion) {
    sizes(c, "from_bytes", |group, n| {
        group.bench_function(BenchmarkId::new("datacomp", n), |b| {
            let data = data(n);
            b.iter(|| Blob::from_bytes(black_box(data.base.as_bytes())).unwrap())
        });
        group.bench_function(BenchmarkId::new("serde_json_value", n), |b| {
            let data = data(n);
            b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(&data.text)).unwrap())
        });
        memcpy(group, n, |d| d.base.byte_len());
    });
}

criterion_group!(benches, import, equality, between, merge3, apply, export, from_bytes);
criterion_main!(benches);
