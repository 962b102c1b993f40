//! Issue 32's prototypes: resolved reads beside reads of the same world flattened.
//!
//! - `proto_get`: a get of an inherited key through a one-level chain (`resolved(id)
//!   .get_float`), against a get of the same key stored in the entity (`get(id).get_float` in
//!   the flattened world), and a resolved get of an own key; 10,000 goblins each.
//! - `proto_cursor`: one `KeyCursor` (a store column) over 10,000 instances of 10 prototypes,
//!   against the same column over the flattened world.
//!
//! Run: `cargo bench --bench proto`. Sizes are exact, not timed: `tests/proto.rs` asserts
//! them, and `examples/proto_cost.rs sizes` prints them.

#[path = "common/goblins.rs"]
mod goblins;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use goblins::{INHERITED, OWN};

fn get(c: &mut Criterion) {
    let (store, ids) = goblins::instances();
    let (flat, _) = goblins::flattened();
    let mut group = c.benchmark_group("proto_get");
    group.bench_function("datacomp_inherited", |b| {
        b.iter(|| {
            let store = black_box(&store);
            ids.iter().filter_map(|&id| store.resolved(id)?.get_float(INHERITED)).sum::<f32>()
        });
    });
    group.bench_function("datacomp_own", |b| {
        b.iter(|| {
            let store = black_box(&store);
            ids.iter().filter_map(|&id| store.resolved(id)?.get_float(OWN)).sum::<f32>()
        });
    });
    group.bench_function("flattened", |b| {
        b.iter(|| {
            let flat = black_box(&flat);
            ids.iter().filter_map(|&id| flat.get(id)?.get_float(INHERITED)).sum::<f32>()
        });
    });
    group.finish();
}

fn cursor(c: &mut Criterion) {
    let (store, _) = goblins::instances();
    let (flat, _) = goblins::flattened();
    let mut group = c.benchmark_group("proto_cursor");
    group.bench_function("datacomp_instances", |b| {
        b.iter(|| black_box(&store).column::<f32>(INHERITED).map(|(_, x)| x).sum::<f32>());
    });
    group.bench_function("flattened", |b| {
        b.iter(|| black_box(&flat).column::<f32>(INHERITED).map(|(_, x)| x).sum::<f32>());
    });
    group.finish();
}

criterion_group!(benches, get, cursor);
criterion_main!(benches);
