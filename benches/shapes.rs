//! Issue 31's goals on both sheet shapes (benches/common/sheet.rs: `sheet`, ~380 arena bytes,
//! and `small`, ~200), each beside its peer and its limit in the same group: `map[id]` and
//! `get` against `DenseSlotMap`, on fresh and churned maps; `Store::get` and a float read
//! against a `DenseSlotMap<Blob>` of the same sheets; a text-key write against a `const Key` write; a load against
//! a memcpy into a fresh buffer and a view against a warm one; a history commit after 1% of
//! the sheets changed against a snapshot; a column sum against `Vec<FxHashMap>`; a one-entity
//! JSON export against `serde_json::to_string` of the same document. Instruction counts of the
//! same operations: `examples/goal_cost.rs`.
//!
//! Fresh and warm memory, the same for both shapes: a `memcpy_fresh`, a load and a snapshot
//! write memory new to the process (a page fault every 4 KiB), a `memcpy_warm` and a view
//! write none. glibc's allocator would otherwise decide this by size: after a block of up to
//! 32 MiB is freed it serves blocks that size from memory it keeps, so the small shape's 20 MB
//! copies, loads and snapshots ran on warm pages from the third iteration on, while the
//! sheet's 38 MB ones were mapped fresh each time (`goal_cost faults SHAPE` counts them). So
//! this bench runs itself again with `GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072`
//! (the default threshold, fixed): every block of 128 KiB or more is mapped fresh and unmapped
//! when freed. A `GLIBC_TUNABLES` already set is kept as it is.
//!
//! Run: `cargo bench --bench shapes -- --warm-up-time 1 --measurement-time 3 [FILTER]`.

#[path = "common/maps.rs"]
mod maps;
#[path = "common/order.rs"]
mod order;
#[path = "common/sheet.rs"]
mod sheet;

use std::hint::black_box;

use criterion::{Criterion, criterion_group};
use datacomp::{ExportOptions, History, Key, LoadOptions, OwnedValue, Snapshot};

const HEALTH: Key = Key::path(&["stats", "health"]);
const SHAPES: [&str; 2] = ["sheet", "small"];

/// `map[id]` and `get` against `DenseSlotMap`'s `map[key]`: the same 100,000 `u64`s, each get
/// reading its item, in the same shuffled order (`common/maps.rs`). `fresh`: maps that never
/// removed (ours answers by arithmetic, one cache line a get: the item's); `churned`: every
/// 10th item removed and inserted again (ours reads the slot, then the item, as the peer).
fn index(c: &mut Criterion) {
    for (state, maps) in [("fresh", maps::shuffled_maps()), ("churned", maps::churned_maps())] {
        let (map, ids, dense, keys) = maps;
        let mut group = c.benchmark_group(format!("shapes/index_100k_shuffled/{state}"));
        group.bench_function("datacomp_index", |b| {
            b.iter(|| {
                let map = black_box(&map);
                ids.iter().map(|&id| map[id]).sum::<u64>()
            })
        });
        group.bench_function("datacomp_get", |b| {
            b.iter(|| {
                let map = black_box(&map);
                ids.iter().map(|&id| *map.get(id).unwrap()).sum::<u64>()
            })
        });
        group.bench_function("dense_slotmap_index", |b| {
            b.iter(|| {
                let dense = black_box(&dense);
                keys.iter().map(|&k| dense[k]).sum::<u64>()
            })
        });
        group.finish();
    }
}

/// `Store::get` of a sheet and one float read from it, against a `DenseSlotMap<Blob>` of the
/// same sheets and the same read: 100,000 of each shape, in one shuffled order. Each get touches
/// our span (the slot too after a removal), then the sheet in the arena; the peer's slot, its
/// `Blob` (a pointer), then the sheet in its own allocation.
fn store_get(c: &mut Criterion, shape: &str) {
    let (store, ids, dense, keys) = maps::shuffled_sheets(sheet::shape(shape), maps::N);
    let mut group = c.benchmark_group(format!("shapes/get_100k_shuffled/{shape}"));
    group.bench_function("datacomp_store_get", |b| {
        b.iter(|| {
            let store = black_box(&store);
            ids.iter().filter_map(|&id| store.get(id).unwrap().get_float(HEALTH)).sum::<f32>()
        })
    });
    group.bench_function("dense_slotmap_blob", |b| {
        b.iter(|| {
            let dense = black_box(&dense);
            keys.iter().filter_map(|&k| dense[k].as_blob_ref().get_float(HEALTH)).sum::<f32>()
        })
    });
    group.finish();
}

fn per_shape(c: &mut Criterion) {
    for shape in SHAPES {
        store_get(c, shape);
        let rows = sheet::shape(shape);
        let (mut store, ids) = sheet::store_of(rows, 10_000);

        let mut group = c.benchmark_group(format!("shapes/set_10k/{shape}"));
        group.bench_function("datacomp_text_key", |b| {
            b.iter(|| {
                for &id in &ids {
                    store.get_mut(id).unwrap().set(black_box("stats.health"), 5.0).unwrap();
                }
            })
        });
        group.bench_function("datacomp_const_key", |b| {
            b.iter(|| {
                for &id in &ids {
                    store.get_mut(id).unwrap().set(black_box(HEALTH), 5.0).unwrap();
                }
            })
        });
        group.finish();

        let fx = vec![sheet::build_fxhashmap_of(rows); 10_000];
        let mut group = c.benchmark_group(format!("shapes/sum_f32_10k/{shape}"));
        group.bench_function("datacomp_store_column", |b| {
            b.iter(|| black_box(&store).column::<f32>(HEALTH).map(|(_, x)| x).sum::<f32>())
        });
        group.bench_function("vec_fxhashmap", |b| {
            b.iter(|| {
                black_box(&fx)
                    .iter()
                    .filter_map(|m| match m.get(&HEALTH.raw()) {
                        Some(OwnedValue::Float(x)) => Some(*x),
                        _ => None,
                    })
                    .sum::<f32>()
            })
        });
        group.finish();

        let trees = vec![sheet::build_json_of(rows); 10_000];
        let lossy = ExportOptions::json().non_finite_as_null();
        let mut group = c.benchmark_group(format!("shapes/export_each_10k/{shape}"));
        group.sample_size(20);
        group.bench_function("datacomp_export", |b| {
            b.iter(|| ids.iter().map(|&id| store.export(id, &lossy).unwrap().len()).sum::<usize>())
        });
        group.bench_function("serde_json_to_string", |b| {
            b.iter(|| trees.iter().map(|t| serde_json::to_string(t).unwrap().len()).sum::<usize>())
        });
        group.finish();

        let (mut world, ids) = sheet::store_of(rows, 100_000);
        let bytes = world.to_bytes();
        let one_thread = LoadOptions::new().threads(1);
        let mut group = c.benchmark_group(format!("shapes/load_100k/{shape}"));
        group.sample_size(10);
        group.bench_function("memcpy_fresh", |b| b.iter(|| black_box(&bytes[..]).to_vec()));
        group.bench_function("memcpy_warm", |b| {
            let mut out = vec![0_u8; bytes.len()];
            b.iter(|| {
                out.copy_from_slice(black_box(&bytes));
                black_box(&out);
            })
        });
        group.bench_function("datacomp_from_bytes", |b| {
            b.iter(|| datacomp::Store::from_bytes(black_box(&bytes)).unwrap())
        });
        group.bench_function("datacomp_from_bytes_1_thread", |b| {
            b.iter(|| one_thread.load_bytes(black_box(&bytes)).unwrap())
        });
        group.bench_function("datacomp_store_view", |b| {
            b.iter(|| datacomp::StoreView::new(black_box(&bytes)).unwrap().len())
        });
        group.finish();

        // As benches/history.rs: each round writes 1% of the sheets, then takes a snapshot
        // (the peer) or commits; `writes_only` is what both pay before their own work.
        let mut round = 0_u32;
        let mut write = |world: &mut datacomp::Store| {
            round += 1;
            for &id in ids.iter().step_by(100) {
                world.get_mut(id).unwrap().set(HEALTH, round as f32).unwrap();
            }
        };
        let mut group = c.benchmark_group(format!("shapes/commit_100k_1pct/{shape}"));
        group.sample_size(10);
        group.bench_function("writes_only", |b| b.iter(|| write(&mut world)));
        group.bench_function("writes_and_snapshot", |b| {
            b.iter(|| {
                write(&mut world);
                Snapshot::new(black_box(&world))
            })
        });
        let mut history = History::with_max_bytes(1 << 30);
        history.commit(&world);
        group.bench_function("writes_and_history_commit", |b| {
            b.iter(|| {
                write(&mut world);
                assert!(history.commit(&world));
            })
        });
        group.finish();
    }
}

criterion_group!(benches, index, per_shape);

/// The allocator setting this bench runs under: see the file's docs.
const FRESH_BLOCKS: &str = "glibc.malloc.mmap_threshold=131072";

fn main() {
    if cfg!(all(target_os = "linux", target_env = "gnu"))
        && std::env::var_os("GLIBC_TUNABLES").is_none()
    {
        let me = std::env::current_exe().expect("the bench's own path");
        let status = std::process::Command::new(me)
            .args(std::env::args_os().skip(1))
            .env("GLIBC_TUNABLES", FRESH_BLOCKS)
            .status()
            .expect("the bench runs itself again");
        std::process::exit(status.code().unwrap_or(1));
    }
    eprintln!("shapes: GLIBC_TUNABLES={:?}", std::env::var("GLIBC_TUNABLES").unwrap_or_default());
    benches();
    Criterion::default().configure_from_args().final_summary();
}
