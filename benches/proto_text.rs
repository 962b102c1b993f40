//! Issue 32's prototypes in the text formats: importing and exporting 10,000 goblins written
//! as instances (`$prototype` and two overrides each) beside the same goblins written whole.
//!
//! - `proto_import`: `Store::import` of the instances' document (10 named prototypes, links
//!   resolved after the read), of the flattened document, and `serde_json`'s `Value` of the
//!   instances' document (the peer: a parse that builds a tree and resolves nothing).
//! - `proto_export`: `Store::export_all` of the world of instances (each written from its
//!   tree, with `$prototype`) and of the flattened world (from export plans).
//!
//! Run: `cargo bench --bench proto_text`.

#[path = "common/goblins.rs"]
mod goblins;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use datacomp::{ExportOptions, ImportOptions, Store};

/// The world of instances with a `$id` on each prototype, and its document.
fn instances() -> (Store, String) {
    let (mut store, ids) = goblins::instances();
    let mut kinds: Vec<_> = ids.iter().filter_map(|&id| store.prototype(id)).collect();
    kinds.sort_unstable_by_key(|id| id.index());
    kinds.dedup();
    for (p, &kind) in kinds.iter().enumerate() {
        store.get_mut(kind).unwrap().set("$id", format!("kind{p}").as_str()).unwrap();
    }
    let text = store.export_all(&ExportOptions::json()).unwrap();
    (store, text)
}

fn import(c: &mut Criterion) {
    let (_, linked) = instances();
    let (flat, _) = goblins::flattened();
    let flat = flat.export_all(&ExportOptions::json()).unwrap();
    let mut group = c.benchmark_group("proto_import");
    group.sample_size(20);
    group.bench_function("datacomp_instances", |b| {
        b.iter(|| Store::new().import(black_box(&linked), &ImportOptions::strict()).unwrap());
    });
    group.bench_function("datacomp_flattened", |b| {
        b.iter(|| Store::new().import(black_box(&flat), &ImportOptions::strict()).unwrap());
    });
    group.bench_function("serde_json_value_instances", |b| {
        b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(&linked)).unwrap());
    });
    group.finish();
}

fn export(c: &mut Criterion) {
    let (store, _) = instances();
    let (flat, _) = goblins::flattened();
    let mut group = c.benchmark_group("proto_export");
    group.sample_size(20);
    group.bench_function("datacomp_instances", |b| {
        b.iter(|| black_box(&store).export_all(&ExportOptions::json()).unwrap());
    });
    group.bench_function("datacomp_flattened", |b| {
        b.iter(|| black_box(&flat).export_all(&ExportOptions::json()).unwrap());
    });
    group.finish();
}

criterion_group!(benches, import, export);
criterion_main!(benches);
