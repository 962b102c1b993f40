//! JSON import beside `serde_json::from_str::<serde_json::Value>` of the same text: the tree a
//! user would otherwise parse into.
//!
//! Run: `cargo bench --bench json`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use datacomp::Blob;

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

criterion_group!(benches, import);
criterion_main!(benches);
