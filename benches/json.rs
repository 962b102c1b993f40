//! JSON import beside `serde_json::from_str::<serde_json::Value>` of the same text: the tree a
//! user would otherwise parse into.
//!
//! Run: `cargo bench --bench json`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use datacomp::{Blob, ImportOptions, Store};

fn import(c: &mut Criterion) {
    for name in ["classic", "wizard"] {
        let path = format!("{}/fixtures/sheets/{name}.json", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(path).expect("the fixture exists");
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

/// 10,000 character sheets (the classic and the wizard, alternating) in one JSON array.
fn import_many(c: &mut Criterion) {
    let sheet = |name: &str| {
        let path = format!("{}/fixtures/sheets/{name}.json", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(path).expect("the fixture exists")
    };
    let (classic, wizard) = (sheet("classic"), sheet("wizard"));
    let sheets: Vec<&str> =
        (0..10_000).map(|i| if i % 2 == 0 { &*classic } else { &*wizard }).collect();
    let text = format!("[{}]", sheets.join(","));
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

criterion_group!(benches, import, import_many);
criterion_main!(benches);
