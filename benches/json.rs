//! JSON import beside `serde_json::from_str::<serde_json::Value>` of the same text (the tree a
//! user would otherwise parse into), and export beside `serde_json` writing that tree.
//!
//! Run: `cargo bench --bench json`.

#[path = "common/fixtures.rs"]
mod fixtures;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use datacomp::{Blob, ImportOptions, Store};

fn import(c: &mut Criterion) {
    for name in ["classic", "wizard"] {
        let text = fixtures::sheet(name);
        let mut group = c.benchmark_group(format!("import/{name}_sheet"));
        group.bench_function("datacomp_blob", |b| {
            b.iter(|| Blob::from_json(black_box(&text)).unwrap())
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
            store.import_json(black_box(&text), &ImportOptions::strict()).unwrap();
            store
        })
    });
    group.bench_function("serde_json_value", |b| {
        b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(&text)).unwrap())
    });
    group.finish();
}

/// The same 10,000 sheets written back as JSON, beside `serde_json` writing the `Value` tree
/// it parsed them into.
fn export_many(c: &mut Criterion) {
    let text = fixtures::ten_thousand_sheets();
    let mut store = Store::new();
    store.import_json(&text, &ImportOptions::strict()).unwrap();
    let tree: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut group = c.benchmark_group("export/10000_sheets");
    group.sample_size(10);
    group.bench_function("datacomp_compact", |b| b.iter(|| black_box(&store).export_all_json()));
    group.bench_function("serde_json_compact", |b| {
        b.iter(|| serde_json::to_string(black_box(&tree)).unwrap())
    });
    group.bench_function("datacomp_pretty", |b| {
        b.iter(|| black_box(&store).export_all_json_pretty())
    });
    group.bench_function("serde_json_pretty", |b| {
        b.iter(|| serde_json::to_string_pretty(black_box(&tree)).unwrap())
    });
    group.finish();
}

criterion_group!(benches, import, import_many, export_many);
criterion_main!(benches);
