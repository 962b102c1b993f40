//! Saving and loading 100,000 character sheets, beside memcpy of the same bytes (the physical
//! limit: into a fresh buffer, and into a warm one), serde_json of the usual
//! `Vec<HashMap<String, serde_json::Value>>`, postcard of the equivalent typed
//! `Vec<HashMap<String, V>>`, and rkyv (the fastest validating zero-copy format) of the same
//! typed structure, validated with bytecheck. Loads run on all cores and on one thread.
//!
//! Run: `cargo bench --bench store -- load/` (or `save/`). It prints the save sizes and the
//! arena's garbage after a churn workload before timing.

#[path = "common/sheet.rs"]
mod sheet;

use std::collections::HashMap;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use datacomp::{LoadOptions, Store, StoreView, Value};
use rkyv::rancor;
use serde::{Deserialize, Serialize};

const ENTITIES: usize = 100_000;

/// A value for formats that are not self-describing (postcard cannot decode serde_json::Value).
#[derive(Serialize, Deserialize, rkyv::Archive, rkyv::Serialize, rkyv::Deserialize)]
enum V {
    Bool(bool),
    Float(f32),
    Str(String),
    Floats(Vec<f32>),
    Null,
}

fn typed(value: Value<'_>) -> V {
    match value {
        Value::Bool(b) => V::Bool(b),
        Value::Float(f) => V::Float(f),
        Value::Str(s) => V::Str(s.to_owned()),
        Value::Floats(f) => V::Floats(f.to_vec()),
        Value::Null | Value::Tombstone => V::Null,
    }
}

fn store() -> Store {
    let sheet = sheet::build_blob();
    let mut store = Store::with_capacity(ENTITIES, ENTITIES * sheet.used_bytes());
    for _ in 0..ENTITIES {
        store.insert(&sheet);
    }
    store
}

fn report_sizes(store: &Store, json: &[u8], postcard: &[u8], rkyv: &[u8]) {
    let save = store.to_bytes().len();
    println!("save file: {save} bytes, {:.1} per entity", save as f64 / ENTITIES as f64);
    println!(
        "serde_json: {} bytes, {:.1} per entity",
        json.len(),
        json.len() as f64 / ENTITIES as f64
    );
    println!(
        "postcard: {} bytes, {:.1} per entity",
        postcard.len(),
        postcard.len() as f64 / ENTITIES as f64
    );
    println!("rkyv: {} bytes, {:.1} per entity", rkyv.len(), rkyv.len() as f64 / ENTITIES as f64);

    // Churn: every entity's bio grows and shrinks over 10 rounds, and 10% are replaced.
    let mut churned = store.clone();
    let mut ids: Vec<_> = churned.iter().map(|(id, _)| id).collect();
    let template = sheet::build_blob();
    for round in 0..10_usize {
        for (i, id) in ids.iter_mut().enumerate() {
            if (i + round) % 10 == 0 {
                churned.remove(*id);
                *id = churned.insert(&template);
            } else {
                let bio = "x".repeat(40 + (i * 7 + round * 13) % 200);
                churned.get_mut(*id).unwrap().set("bio", bio.as_str()).unwrap();
            }
        }
    }
    let stats = churned.stats();
    println!(
        "after churn: arena {} bytes, {:.1}% garbage, {:.1}% slack inside blobs, {:.1}% live",
        stats.arena_bytes,
        100.0 * stats.garbage_bytes as f64 / stats.arena_bytes as f64,
        100.0 * stats.slack_bytes as f64 / stats.arena_bytes as f64,
        100.0 * stats.live_bytes as f64 / stats.arena_bytes as f64,
    );
}

fn save_and_load(c: &mut Criterion) {
    let store = store();
    let bytes = store.to_bytes();
    let json_world: Vec<HashMap<String, serde_json::Value>> =
        (0..ENTITIES).map(|_| sheet::build_string_hashmap()).collect();
    let typed_world: Vec<HashMap<String, V>> = (0..ENTITIES)
        .map(|_| sheet::SHEET.iter().map(|(p, v)| ((*p).to_owned(), typed(*v))).collect())
        .collect();
    let json = serde_json::to_vec(&json_world).unwrap();
    let postcard = postcard::to_allocvec(&typed_world).unwrap();
    let rkyv_bytes = rkyv::to_bytes::<rancor::Error>(&typed_world).unwrap();
    report_sizes(&store, &json, &postcard, &rkyv_bytes);

    let mut group = c.benchmark_group("save/100k_sheets");
    group.sample_size(10);
    group.bench_function("memcpy", |b| b.iter(|| black_box(&bytes).clone()));
    group.bench_function("datacomp_to_bytes", |b| b.iter(|| black_box(&store).to_bytes()));
    group.bench_function("memcpy_into_reused_buffer", |b| {
        let mut out = Vec::with_capacity(bytes.len());
        b.iter(|| {
            out.clear();
            out.extend_from_slice(black_box(&bytes));
        })
    });
    group.bench_function("datacomp_write_to", |b| {
        let mut out = Vec::with_capacity(bytes.len());
        b.iter(|| {
            out.clear();
            black_box(&store).write_to(&mut out).unwrap();
        })
    });
    // A store a game has played with: every tenth sheet grew a key, so it moved to the
    // arena's end (the blobs no longer lie back to back; an autosave's mirror after links is
    // so). Its save is written from the arena's runs, with no packed copy of the blobs.
    let mut played = store.clone();
    let ids: Vec<_> = played.iter().map(|(id, _)| id).step_by(10).collect();
    for id in ids {
        played.get_mut(id).unwrap().set("inventory.gold", 1.0).unwrap();
    }
    group.bench_function("datacomp_write_to_moved_tenth", |b| {
        let mut out = Vec::with_capacity(played.to_bytes().len());
        b.iter(|| {
            out.clear();
            black_box(&played).write_to(&mut out).unwrap();
        })
    });
    group.bench_function("serde_json", |b| {
        b.iter(|| serde_json::to_vec(black_box(&json_world)).unwrap())
    });
    group.bench_function("postcard", |b| {
        b.iter(|| postcard::to_allocvec(black_box(&typed_world)).unwrap())
    });
    group.bench_function("rkyv", |b| {
        b.iter(|| rkyv::to_bytes::<rancor::Error>(black_box(&typed_world)).unwrap())
    });
    group.finish();

    let one_thread = LoadOptions::new().threads(1);
    let mut group = c.benchmark_group("load/100k_sheets");
    group.sample_size(10);
    group.bench_function("memcpy", |b| b.iter(|| black_box(&bytes[..]).to_vec()));
    group.bench_function("memcpy_warm", |b| {
        let mut out = vec![0_u8; bytes.len()];
        b.iter(|| {
            out.copy_from_slice(black_box(&bytes));
            black_box(&out);
        })
    });
    group.bench_function("datacomp_from_bytes", |b| {
        b.iter(|| Store::from_bytes(black_box(&bytes)).unwrap())
    });
    group.bench_function("datacomp_from_bytes_1_thread", |b| {
        b.iter(|| one_thread.load_bytes(black_box(&bytes)).unwrap())
    });
    group.bench_function("datacomp_store_view", |b| {
        b.iter(|| StoreView::new(black_box(&bytes)).unwrap().len())
    });
    group.bench_function("datacomp_lazy_open", |b| {
        b.iter(|| StoreView::lazy(black_box(&bytes)).unwrap().len())
    });
    group.bench_function("datacomp_store_view_1_thread", |b| {
        b.iter(|| one_thread.view(black_box(&bytes)).unwrap().len())
    });
    // Validation and access: rkyv's bytecheck walks every map, key and value, as a view
    // checks every blob.
    group.bench_function("rkyv_access", |b| {
        b.iter(|| {
            rkyv::access::<rkyv::Archived<Vec<HashMap<String, V>>>, rancor::Error>(black_box(
                &rkyv_bytes,
            ))
            .unwrap()
            .len()
        })
    });
    group.bench_function("serde_json", |b| {
        b.iter(|| {
            serde_json::from_slice::<Vec<HashMap<String, serde_json::Value>>>(black_box(&json))
                .unwrap()
        })
    });
    group.bench_function("postcard", |b| {
        b.iter(|| postcard::from_bytes::<Vec<HashMap<String, V>>>(black_box(&postcard)).unwrap())
    });
    group.finish();
}

/// One write into a stored sheet: by a path given as text (hashed, and its name checked against
/// and recorded in the store's names), by a path hashed without a name, and by a precomputed
/// `Key`; beside an `FxHashMap<u32, _>` insert over the precomputed hash.
fn set(c: &mut Criterion) {
    let mut store = Store::new();
    let id = store.insert(&sheet::build_blob());
    store.get_mut(id).unwrap().set(sheet::ONE_KEY, 1.0).unwrap();
    let key = datacomp::Key::parse(sheet::ONE_KEY);
    let mut fx = sheet::build_fxhashmap();
    let mut group = c.benchmark_group("set/one_key");
    group.bench_function("datacomp_path_named", |b| {
        b.iter(|| store.get_mut(id).unwrap().set(black_box(sheet::ONE_KEY), 95.0));
    });
    group.bench_function("datacomp_path_unnamed", |b| {
        b.iter(|| {
            let key = datacomp::Key::parse(black_box(sheet::ONE_KEY));
            store.get_mut(id).unwrap().set(key, 95.0).unwrap();
        });
    });
    group.bench_function("datacomp_key", |b| {
        b.iter(|| store.get_mut(id).unwrap().set(black_box(key), 95.0));
    });
    group.bench_function("fxhashmap_u32", |b| {
        b.iter(|| fx.insert(black_box(key.raw()), datacomp::OwnedValue::Float(95.0)));
    });
    group.finish();
}

criterion_group!(benches, save_and_load, set);
criterion_main!(benches);
