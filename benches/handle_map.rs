//! HandleMap against slotmap's `DenseSlotMap` and `SlotMap` in the same run, with a `Vec` as
//! the physical limit: 100,000 `u64` items, handles used in a shuffled order.
//!
//! Run: `cargo bench --bench handle_map`.

#[path = "common/order.rs"]
mod order;

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use datacomp::{HandleMap, Id};
use order::shuffled;
use slotmap::{DefaultKey, DenseSlotMap, SlotMap};

const N: usize = 100_000;

struct Maps {
    handle_map: HandleMap<u64>,
    handle_ids: Vec<Id>,
    dense: DenseSlotMap<DefaultKey, u64>,
    dense_keys: Vec<DefaultKey>,
    sparse: SlotMap<DefaultKey, u64>,
    sparse_keys: Vec<DefaultKey>,
}

fn maps() -> Maps {
    let mut handle_map = HandleMap::new(1);
    let mut dense = DenseSlotMap::new();
    let mut sparse = SlotMap::new();
    let order = shuffled(N);
    let handle_ids: Vec<Id> = (0..N as u64).map(|v| handle_map.insert(v)).collect();
    let dense_keys: Vec<_> = (0..N as u64).map(|v| dense.insert(v)).collect();
    let sparse_keys: Vec<_> = (0..N as u64).map(|v| sparse.insert(v)).collect();
    Maps {
        handle_map,
        handle_ids: order.iter().map(|&i| handle_ids[i]).collect(),
        dense,
        dense_keys: order.iter().map(|&i| dense_keys[i]).collect(),
        sparse,
        sparse_keys: order.iter().map(|&i| sparse_keys[i]).collect(),
    }
}

fn insert(c: &mut Criterion) {
    let mut group = c.benchmark_group("insert/100k");
    group.bench_function("datacomp", |b| {
        b.iter(|| {
            let mut map = HandleMap::new(1);
            for v in 0..N as u64 {
                black_box(map.insert(v));
            }
            map
        })
    });
    group.bench_function("dense_slotmap", |b| {
        b.iter(|| {
            let mut map = DenseSlotMap::new();
            for v in 0..N as u64 {
                black_box(map.insert(v));
            }
            map
        })
    });
    group.bench_function("slotmap", |b| {
        b.iter(|| {
            let mut map = SlotMap::new();
            for v in 0..N as u64 {
                black_box(map.insert(v));
            }
            map
        })
    });
    group.bench_function("vec_push", |b| {
        b.iter(|| {
            let mut vec = Vec::new();
            for v in 0..N as u64 {
                vec.push(black_box(v));
            }
            vec
        })
    });
    group.finish();
}

fn get(c: &mut Criterion) {
    let m = maps();
    let mut group = c.benchmark_group("get/100k_shuffled");
    group.bench_function("datacomp", |b| {
        b.iter(|| {
            m.handle_ids.iter().map(|&id| m.handle_map.get(id).copied().unwrap_or(0)).sum::<u64>()
        })
    });
    group.bench_function("dense_slotmap", |b| {
        b.iter(|| m.dense_keys.iter().map(|&k| m.dense.get(k).copied().unwrap_or(0)).sum::<u64>())
    });
    group.bench_function("slotmap", |b| {
        b.iter(|| m.sparse_keys.iter().map(|&k| m.sparse.get(k).copied().unwrap_or(0)).sum::<u64>())
    });
    let values = m.handle_map.as_slice().to_vec();
    let order = shuffled(N);
    group.bench_function("vec_index", |b| b.iter(|| order.iter().map(|&i| values[i]).sum::<u64>()));
    group.finish();
}

fn remove(c: &mut Criterion) {
    let m = maps();
    let mut group = c.benchmark_group("remove/100k_shuffled");
    group.bench_function("datacomp", |b| {
        b.iter_batched_ref(
            || m.handle_map.clone(),
            |map| m.handle_ids.iter().map(|&id| map.remove(id).unwrap_or(0)).sum::<u64>(),
            BatchSize::LargeInput,
        )
    });
    group.bench_function("dense_slotmap", |b| {
        b.iter_batched_ref(
            || m.dense.clone(),
            |map| m.dense_keys.iter().map(|&k| map.remove(k).unwrap_or(0)).sum::<u64>(),
            BatchSize::LargeInput,
        )
    });
    group.bench_function("slotmap", |b| {
        b.iter_batched_ref(
            || m.sparse.clone(),
            |map| m.sparse_keys.iter().map(|&k| map.remove(k).unwrap_or(0)).sum::<u64>(),
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

fn iterate(c: &mut Criterion) {
    let m = maps();
    let vec = m.handle_map.as_slice().to_vec();
    let mut group = c.benchmark_group("iterate/100k");
    group.bench_function("datacomp_values", |b| {
        b.iter(|| black_box(&m.handle_map).values().sum::<u64>())
    });
    group.bench_function("datacomp_with_ids", |b| {
        b.iter(|| {
            black_box(&m.handle_map).iter().map(|(id, v)| u64::from(id.index()) ^ v).sum::<u64>()
        })
    });
    group.bench_function("dense_slotmap", |b| b.iter(|| black_box(&m.dense).values().sum::<u64>()));
    group.bench_function("slotmap", |b| b.iter(|| black_box(&m.sparse).values().sum::<u64>()));
    group.bench_function("vec", |b| b.iter(|| black_box(&vec).iter().sum::<u64>()));
    group.finish();
}

fn sort(c: &mut Criterion) {
    let mut map = HandleMap::new(1);
    let values: Vec<u64> = shuffled(N).into_iter().map(|v| v as u64).collect();
    map.insert_batch(values.iter().copied());
    let mut group = c.benchmark_group("sort/100k_shuffled");
    group.sample_size(20);
    group.bench_function("datacomp_sort_by", |b| {
        b.iter_batched_ref(|| map.clone(), |m| m.sort_by(|a, b| a.cmp(b)), BatchSize::LargeInput)
    });
    group.bench_function("vec_sort", |b| {
        b.iter_batched_ref(|| values.clone(), |v| v.sort(), BatchSize::LargeInput)
    });
    group.finish();

    // The incremental defragment on a nearly sorted array: 1% of items out of place.
    let mut nearly = HandleMap::new(1);
    nearly.insert_batch(0..N as u64);
    let ids: Vec<Id> = nearly.ids().collect();
    for pair in ids.chunks(200) {
        let [a, b] = nearly.get_disjoint_mut([pair[0], pair[199]]).expect("live");
        std::mem::swap(a, b);
    }
    let mut group = c.benchmark_group("defragment/100k_nearly_sorted");
    group.sample_size(20);
    group.bench_function("datacomp_defragment_by", |b| {
        b.iter_batched_ref(
            || nearly.clone(),
            |m| m.defragment_by(|a, b| a.cmp(b), None),
            BatchSize::LargeInput,
        )
    });
    group.bench_function("datacomp_sort_by", |b| {
        b.iter_batched_ref(|| nearly.clone(), |m| m.sort_by(|a, b| a.cmp(b)), BatchSize::LargeInput)
    });
    group.finish();
}

criterion_group!(benches, insert, get, remove, iterate, sort);
criterion_main!(benches);
