//! Issue 32's prototypes: the two read goals, each beside its peer in one group (`proto`),
//! so that one quiet run times both comparisons back to back.
//!
//! - `get_inherited` vs `get_flattened`: a get of an inherited key through a one-level chain
//!   (`resolved(id).get_float`) against a get of the same key stored in the entity
//!   (`get(id).get_float` in the flattened world); 10,000 goblins each. Goal ≤1.5x.
//! - `cursor_instances` vs `cursor_flattened`: one `KeyCursor` (a store column) over 10,000
//!   instances of 10 prototypes, against the same column over the flattened world. Goal
//!   ≤1.2x.
//!
//! Run: `cargo bench --bench proto`. Instruction counts: `examples/proto_cost.rs` (which
//! also counts a resolved get of an override, `get_own`). Sizes are exact, not timed:
//! `tests/proto.rs` asserts them, and `examples/proto_cost.rs sizes` prints them.

#[path = "common/goblins.rs"]
mod goblins;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use goblins::INHERITED;

fn proto(c: &mut Criterion) {
    let (store, ids) = goblins::instances();
    let (flat, _) = goblins::flattened();
    let mut group = c.benchmark_group("proto");
    group.bench_function("get_inherited", |b| {
        b.iter(|| {
            let store = black_box(&store);
            ids.iter().filter_map(|&id| store.resolved(id)?.get_float(INHERITED)).sum::<f32>()
        });
    });
    group.bench_function("get_flattened", |b| {
        b.iter(|| {
            let flat = black_box(&flat);
            ids.iter().filter_map(|&id| flat.get(id)?.get_float(INHERITED)).sum::<f32>()
        });
    });
    group.bench_function("cursor_instances", |b| {
        b.iter(|| black_box(&store).column::<f32>(INHERITED).map(|(_, x)| x).sum::<f32>());
    });
    group.bench_function("cursor_flattened", |b| {
        b.iter(|| black_box(&flat).column::<f32>(INHERITED).map(|(_, x)| x).sum::<f32>());
    });
    group.finish();
}

criterion_group!(benches, proto);
criterion_main!(benches);
