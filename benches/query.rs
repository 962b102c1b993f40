//! Reading one key across many entities: `KeyCursor` reads, store columns and queries, each
//! beside `FxHashMap<u32, _>` (one map, or a `Vec` of them, one per sheet) and
//! `serde_json::Value` holding the same 15-key sheets.
//!
//! Run: `cargo bench --bench query`. The column group also times the physical limits: the
//! column's values in one `Vec<f32>`, summed, and copied into a warm and a fresh buffer.

#[path = "common/sheet.rs"]
mod sheet;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use datacomp::query::KeyCursor;
use datacomp::{Blob, Key, OwnedValue, Query, Store, StoreView};
use fxhash::FxHashMap;

const HEALTH: &str = "stats.health";
const POISONED: &str = "status_effects.poisoned";

/// The fx map's float at `key`.
#[inline]
fn fx_float(map: &FxHashMap<u32, OwnedValue>, key: u32) -> Option<f32> {
    match map.get(&key) {
        Some(OwnedValue::Float(f)) => Some(*f),
        _ => None,
    }
}

/// The JSON value's float at `segments`.
#[inline]
fn json_float(root: &serde_json::Value, segments: &[&str]) -> Option<f32> {
    sheet::json_path(root, segments).as_f64().map(|f| f as f32)
}

/// `n` sheets, each in every representation, whose health and poisoning vary (sheet `i` has
/// health `i % 100` and is poisoned when `i % 3 == 0`).
struct Sheets {
    blobs: Vec<Blob>,
    fx: Vec<FxHashMap<u32, OwnedValue>>,
    json: Vec<serde_json::Value>,
}

fn sheets(n: usize) -> Sheets {
    let health = Key::parse(HEALTH);
    let poisoned = Key::parse(POISONED);
    let mut out = Sheets { blobs: Vec::new(), fx: Vec::new(), json: Vec::new() };
    for i in 0..n {
        let hp = (i % 100) as f32;
        let sick = i % 3 == 0;
        let mut blob = sheet::build_blob();
        blob.set(health, hp).unwrap();
        blob.set(poisoned, sick).unwrap();
        out.blobs.push(blob);
        let mut fx = sheet::build_fxhashmap();
        fx.insert(health.raw(), OwnedValue::Float(hp));
        fx.insert(poisoned.raw(), OwnedValue::Bool(sick));
        out.fx.push(fx);
        let mut json = sheet::build_json();
        json["stats"]["health"] = serde_json::Value::from(f64::from(hp));
        json["status_effects"]["poisoned"] = serde_json::Value::Bool(sick);
        out.json.push(json);
    }
    out
}

/// One hot sheet, one key: the cursor's cached position against a hash probe.
fn one_key(c: &mut Criterion) {
    let blob = sheet::build_blob();
    let fx = sheet::build_fxhashmap();
    let json = sheet::build_json();
    let key = Key::parse(HEALTH);
    let segments: Vec<&str> = HEALTH.split('.').collect();
    let cursor = KeyCursor::new(key);
    let mut group = c.benchmark_group("get_float/one_key_hot");
    group.bench_function("datacomp_cursor", |b| {
        b.iter(|| black_box(&cursor).get_float(black_box(&blob)))
    });
    group.bench_function("datacomp_get", |b| b.iter(|| black_box(&blob).get_float(black_box(key))));
    group.bench_function("fxhashmap_u32", |b| {
        b.iter(|| fx_float(black_box(&fx), black_box(key.raw())))
    });
    group.bench_function("serde_json_path", |b| {
        b.iter(|| json_float(black_box(&json), black_box(&segments)))
    });
    group.finish();
}

/// One float from each of 10,000 sheets, each in its own allocation.
fn many_sheets(c: &mut Criterion) {
    let s = sheets(10_000);
    let key = Key::parse(HEALTH);
    let segments: Vec<&str> = HEALTH.split('.').collect();
    let mut group = c.benchmark_group("get_float/10000_sheets");
    group.bench_function("datacomp_cursor", |b| {
        b.iter(|| {
            let cursor = KeyCursor::new(key);
            black_box(&s.blobs).iter().filter_map(|blob| cursor.get_float(blob)).sum::<f32>()
        })
    });
    group.bench_function("datacomp_get", |b| {
        b.iter(|| black_box(&s.blobs).iter().filter_map(|blob| blob.get_float(key)).sum::<f32>())
    });
    // The same sheets in one store: its arena is one buffer, walked in order.
    let mut store = Store::new();
    for blob in &s.blobs {
        store.insert(blob);
    }
    group.bench_function("datacomp_store_column", |b| {
        b.iter(|| black_box(&store).column::<f32>(key).map(|(_, x)| x).sum::<f32>())
    });
    group.bench_function("vec_fxhashmap_u32", |b| {
        b.iter(|| black_box(&s.fx).iter().filter_map(|m| fx_float(m, key.raw())).sum::<f32>())
    });
    group.bench_function("serde_json_path", |b| {
        b.iter(|| black_box(&s.json).iter().filter_map(|j| json_float(j, &segments)).sum::<f32>())
    });
    group.finish();
}

/// Summing one float over 100,000 entities: a store's column (and a view's) against the same
/// loop over a `Vec` of fx maps and of JSON values.
fn column(c: &mut Criterion) {
    const N: usize = 100_000;
    let s = sheets(N);
    let mut store = Store::with_capacity(N, N * 400);
    for blob in &s.blobs {
        store.insert(blob);
    }
    let bytes = store.to_bytes();
    let view = StoreView::new(&bytes).expect("a store's bytes load");
    let key = Key::parse(HEALTH);
    let segments: Vec<&str> = HEALTH.split('.').collect();
    let mut group = c.benchmark_group("sum_f32/100000_entities");
    group.bench_function("datacomp_store_column", |b| {
        b.iter(|| black_box(&store).column::<f32>(key).map(|(_, x)| x).sum::<f32>())
    });
    group.bench_function("datacomp_view_column", |b| {
        b.iter(|| {
            black_box(&view).column::<f32>(key).expect("no links").map(|(_, x)| x).sum::<f32>()
        })
    });
    group.bench_function("datacomp_store_iter_get", |b| {
        b.iter(|| black_box(&store).iter().filter_map(|(_, blob)| blob.get_float(key)).sum::<f32>())
    });
    group.bench_function("vec_fxhashmap_u32", |b| {
        b.iter(|| black_box(&s.fx).iter().filter_map(|m| fx_float(m, key.raw())).sum::<f32>())
    });
    group.bench_function("serde_json_path", |b| {
        b.iter(|| black_box(&s.json).iter().filter_map(|j| json_float(j, &segments)).sum::<f32>())
    });
    // The physical limits: the column's values already in one `Vec<f32>`, summed, and copied
    // (memcpy) into a warm buffer and into a fresh one.
    let values: Vec<f32> = store.column::<f32>(key).map(|(_, x)| x).collect();
    group.bench_function("vec_f32_sum", |b| b.iter(|| black_box(&values).iter().sum::<f32>()));
    let mut warm = vec![0.0_f32; values.len()];
    group.bench_function("memcpy_warm", |b| {
        b.iter(|| warm.copy_from_slice(black_box(&values)));
    });
    group.bench_function("memcpy_fresh", |b| b.iter(|| black_box(&values).to_vec()));
    group.finish();

    // A two-key filter over the same entities: the parsed query against the same test written
    // by hand over the peers.
    let text = format!("{POISONED} and {HEALTH} < 20");
    let query = Query::parse(&text).expect("the filter parses");
    let (health, poisoned) = (key.raw(), Key::parse(POISONED).raw());
    let mut group = c.benchmark_group("query/100000_entities");
    group.bench_function("datacomp_store_query", |b| {
        b.iter(|| black_box(&store).query(&query).count())
    });
    group.bench_function("vec_fxhashmap_u32", |b| {
        b.iter(|| {
            black_box(&s.fx)
                .iter()
                .filter(|m| {
                    matches!(m.get(&poisoned), Some(OwnedValue::Bool(true)))
                        && fx_float(m, health).is_some_and(|h| h < 20.0)
                })
                .count()
        })
    });
    group.bench_function("serde_json_path", |b| {
        b.iter(|| {
            black_box(&s.json)
                .iter()
                .filter(|j| {
                    j["status_effects"]["poisoned"].as_bool() == Some(true)
                        && json_float(j, &segments).is_some_and(|h| h < 20.0)
                })
                .count()
        })
    });
    group.finish();
}

/// An entity found by its name among 10,000 sheets: `Store::find` beside a scan of a
/// `Vec<FxHashMap>`, and the same store's `&str` column filtered by hand.
fn find(c: &mut Criterion) {
    const N: usize = 10_000;
    let name = Key::parse("name");
    let (store, fx) = sheet::named_sheets(N);
    let wanted = format!("Orc {}", N * 3 / 4);
    let mut group = c.benchmark_group("find/10000_sheets");
    group.bench_function("datacomp_store_find", |b| {
        b.iter(|| black_box(&store).find(name, black_box(wanted.as_str())).count())
    });
    group.bench_function("datacomp_store_column_filter", |b| {
        b.iter(|| {
            let wanted = black_box(wanted.as_str());
            black_box(&store).column::<&str>(name).filter(|&(_, n)| n == wanted).count()
        })
    });
    group.bench_function("vec_fxhashmap_u32", |b| {
        b.iter(|| {
            let wanted = black_box(wanted.as_str());
            black_box(&fx)
                .iter()
                .filter(|m| matches!(m.get(&name.raw()), Some(OwnedValue::Str(s)) if s == wanted))
                .count()
        })
    });
    group.finish();
}

criterion_group!(benches, one_key, many_sheets, column, find);
criterion_main!(benches);
