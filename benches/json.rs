//! JSON import beside `serde_json::from_str::<serde_json::Value>` of the same text (the tree a
//! user would otherwise parse into), and export beside `serde_json` writing that tree, with
//! memcpy of the text (into a warm buffer and into a fresh one) as the physical limit.
//!
//! Run: `cargo bench --bench json`.

#[path = "common/fixtures.rs"]
mod fixtures;

#[path = "../tests/common/corpus.rs"]
mod corpus;

use std::hint::black_box;

use criterion::{
    BenchmarkGroup, Criterion, criterion_group, criterion_main, measurement::WallTime,
};
use datacomp::{Blob, ExportOptions, ImportOptions, Store};

/// What the `datacomp_compact` and `datacomp_pretty` exports write: a NaN or infinity as
/// `null`, with no error to build; `datacomp_try_compact` refuses one.
const LOSSY: ExportOptions = ExportOptions::json().non_finite_as_null();

/// memcpy of `bytes` into a buffer reused between iterations, and into a fresh one.
fn memcpy(group: &mut BenchmarkGroup<'_, WallTime>, bytes: &[u8]) {
    let mut warm = vec![0u8; bytes.len()];
    group.bench_function("memcpy_warm", |b| {
        b.iter(|| warm.copy_from_slice(black_box(bytes)));
    });
    group.bench_function("memcpy_fresh", |b| b.iter(|| black_box(bytes).to_vec()));
}

fn import(c: &mut Criterion) {
    for name in ["classic", "wizard"] {
        let text = fixtures::sheet(name);
        let mut group = c.benchmark_group(format!("import/{name}_sheet"));
        group.bench_function("datacomp_blob", |b| {
            b.iter(|| Blob::import(black_box(&text), &ImportOptions::strict()).unwrap())
        });
        group.bench_function("serde_json_value", |b| {
            b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(&text)).unwrap())
        });
        group.finish();
    }
}

fn import_many(c: &mut Criterion) {
    let text = fixtures::ten_thousand_sheets();
    println!("import/10000_sheets: {} bytes of JSON", text.len());
    let mut group = c.benchmark_group("import/10000_sheets");
    group.sample_size(10);
    group.bench_function("datacomp_store", |b| {
        b.iter(|| {
            let mut store = Store::new();
            store.import(black_box(&text), &ImportOptions::strict()).unwrap();
            store
        })
    });
    group.bench_function("serde_json_value", |b| {
        b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(&text)).unwrap())
    });
    memcpy(&mut group, text.as_bytes());
    group.finish();
}

/// 10,000 monster sheets in the shapes of designers' files (the round-trip corpus: more
/// strings, nested objects, whole numbers), imported and exported beside serde_json.
fn monsters(c: &mut Criterion) {
    let text = corpus::monsters(10_000).compact();
    println!("10000_monsters: {} bytes of JSON", text.len());
    let mut group = c.benchmark_group("import/10000_monsters");
    group.sample_size(10);
    group.bench_function("datacomp_store", |b| {
        b.iter(|| {
            let mut store = Store::new();
            store.import(black_box(&text), &ImportOptions::strict()).unwrap();
            store
        })
    });
    group.bench_function("serde_json_value", |b| {
        b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(&text)).unwrap())
    });
    memcpy(&mut group, text.as_bytes());
    group.finish();

    let mut store = Store::new();
    store.import(&text, &ImportOptions::strict()).unwrap();
    assert_eq!(store.export_all(&ExportOptions::json()).unwrap(), text, "a round trip");
    let tree: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut group = c.benchmark_group("export/10000_monsters");
    group.sample_size(10);
    group.bench_function("datacomp_compact", |b| b.iter(|| black_box(&store).export_all(&LOSSY)));
    group.bench_function("datacomp_try_compact", |b| {
        b.iter(|| black_box(&store).export_all(&ExportOptions::json()).unwrap())
    });
    group.bench_function("serde_json_compact", |b| {
        b.iter(|| serde_json::to_string(black_box(&tree)).unwrap())
    });
    group.bench_function("datacomp_pretty", |b| {
        b.iter(|| black_box(&store).export_all(&LOSSY.pretty(true)))
    });
    group.bench_function("serde_json_pretty", |b| {
        b.iter(|| serde_json::to_string_pretty(black_box(&tree)).unwrap())
    });
    memcpy(&mut group, text.as_bytes());
    group.finish();
}

/// One sheet exported from a store (built as a tree and written: no plan is reused for one
/// entity), beside `serde_json` writing the `Value` it parsed the sheet into.
fn export_one(c: &mut Criterion) {
    for name in ["classic", "wizard"] {
        let text = fixtures::sheet(name);
        let mut store = Store::new();
        let id = store.import(&text, &ImportOptions::strict()).unwrap().ids[0];
        let tree: serde_json::Value = serde_json::from_str(&text).unwrap();
        let mut group = c.benchmark_group(format!("export/{name}_sheet"));
        group.bench_function("datacomp_compact", |b| {
            b.iter(|| black_box(&store).export(id, &LOSSY).unwrap())
        });
        group.bench_function("serde_json_compact", |b| {
            b.iter(|| serde_json::to_string(black_box(&tree)).unwrap())
        });
        group.bench_function("datacomp_pretty", |b| {
            b.iter(|| black_box(&store).export(id, &LOSSY.pretty(true)).unwrap())
        });
        group.bench_function("serde_json_pretty", |b| {
            b.iter(|| serde_json::to_string_pretty(black_box(&tree)).unwrap())
        });
        memcpy(&mut group, store.export(id, &ExportOptions::json()).unwrap().as_bytes());
        group.finish();
    }
}

/// The same 10,000 sheets written back as JSON, beside `serde_json` writing the `Value` tree
/// it parsed them into.
fn export_many(c: &mut Criterion) {
    let text = fixtures::ten_thousand_sheets();
    let mut store = Store::new();
    store.import(&text, &ImportOptions::strict()).unwrap();
    let tree: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut group = c.benchmark_group("export/10000_sheets");
    group.sample_size(10);
    group.bench_function("datacomp_compact", |b| b.iter(|| black_box(&store).export_all(&LOSSY)));
    // What the command runs: NaN and infinity refused first, in one more pass over the values.
    group.bench_function("datacomp_try_compact", |b| {
        b.iter(|| black_box(&store).export_all(&ExportOptions::json()).unwrap())
    });
    group.bench_function("serde_json_compact", |b| {
        b.iter(|| serde_json::to_string(black_box(&tree)).unwrap())
    });
    group.bench_function("datacomp_pretty", |b| {
        b.iter(|| black_box(&store).export_all(&LOSSY.pretty(true)))
    });
    group.bench_function("serde_json_pretty", |b| {
        b.iter(|| serde_json::to_string_pretty(black_box(&tree)).unwrap())
    });
    memcpy(&mut group, store.export_all(&ExportOptions::json()).unwrap().as_bytes());
    group.finish();
}

criterion_group!(benches, import, import_many, export_one, export_many, monsters);
criterion_main!(benches);
