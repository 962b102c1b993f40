//! Instruction counts of issue 31's goals, each beside its peer in the same process, on both
//! sheet shapes (benches/common/sheet.rs: `sheet`, ~380 arena bytes, and `small`, ~200): a
//! loaded machine moves times by 2x, and instructions not at all.
//!
//! ```sh
//! cargo build --release --example goal_cost
//! valgrind --tool=callgrind --collect-atstart=no --toggle-collect=goal_cost::measured \
//!     --callgrind-out-file=cg.out ../target/release/examples/goal_cost OP SHAPE
//! callgrind_annotate cg.out | grep 'PROGRAM TOTALS'   # divide by the count it prints
//! ```
//!
//! Cache misses (what a get or a column touches): add `--cache-sim=yes --LL=524288,8,64` (a
//! 32 KiB D1 and a 512 KiB last level, as this machine's L1 and L2); the totals then give
//! `D1mr` (D1 read misses) and `DLmr` (L2 read misses). Valgrind 3.19's cachegrind has no
//! `--toggle-collect`: callgrind's cache simulation is the same one.
//!
//! OP (ours, then its peer):
//! - `index`, `get`, `dsm_index`: 100,000 shuffled `map[id]` and `get` of a `HandleMap<u64>`,
//!   `DenseSlotMap`'s `map[key]` (SHAPE is ignored); `index_churned`, `get_churned`,
//!   `dsm_index_churned`: the same after every 10th item was removed and inserted again.
//! - `store_get`, `dsm_blob_get`: 100,000 shuffled `Store::get` of a sheet and its
//!   `stats.health`, against a `DenseSlotMap<Blob>` of the same sheets and the same read.
//! - `set_text`, `set_key`: `set("stats.health", x)` and `set(HEALTH, x)` (a `const Key`) on
//!   each of 10,000 stored sheets, whose store already holds the name.
//! - `from_bytes`, `memcpy_fresh`; `view`, `memcpy_warm`: loading the save of 100,000 sheets
//!   (one thread), against a copy of its bytes into a new and into a touched buffer.
//! - `commit`, `snapshot`: `History::commit` after 1% of 100,000 sheets changed, against a
//!   `Snapshot` of the same store.
//! - `column`, `fx_column`: the sum of `stats.health` over 10,000 sheets, a store column
//!   against a `Vec<FxHashMap<u32, OwnedValue>>`.
//! - `export_each`, `serde_each`: `Store::export` of each of 10,000 sheets, against
//!   `serde_json::to_string` of each one's `serde_json::Value`.
//!
//! `goal_cost faults SHAPE` (no callgrind) runs the load and commit goals three times each in
//! one process, in `benches/shapes.rs`'s order, and prints the page faults of each run: a run
//! that faults a page per 4 KiB it writes got fresh memory, one that faults none reused memory
//! the allocator kept. Callgrind counts no page fault; a timed run pays for each.

#[path = "../common/maps.rs"]
mod maps;
#[path = "../common/order.rs"]
mod order;
#[path = "../common/sheet.rs"]
mod sheet;

use std::hint::black_box;

use datacomp::{Blob, ExportOptions, HandleMap, History, Id, Key, LoadOptions, Snapshot, Store};
use slotmap::DenseSlotMap;

const HEALTH: Key = Key::path(&["stats", "health"]);

/// What an operation runs over, built before measuring (one of them, once: sizes do not matter).
#[allow(clippy::large_enum_variant)]
enum Input {
    Maps(HandleMap<u64>, Vec<Id>, DenseSlotMap<slotmap::DefaultKey, u64>, Vec<slotmap::DefaultKey>),
    Sheets(Store, Vec<Id>, DenseSlotMap<slotmap::DefaultKey, Blob>, Vec<slotmap::DefaultKey>),
    Store(Store, Vec<Id>),
    Bytes(Vec<u8>, Vec<u8>),
    History(Store, History),
    Fx(Vec<fxhash::FxHashMap<u32, datacomp::OwnedValue>>),
    Trees(Vec<serde_json::Value>),
}

fn store_of(shape: &str, entities: usize) -> (Store, Vec<Id>) {
    sheet::store_of(sheet::shape(shape), entities)
}

fn input(op: &str, shape: &str) -> Input {
    match op {
        "index" | "get" | "dsm_index" => {
            let (map, ids, dense, keys) = maps::shuffled_maps();
            Input::Maps(map, ids, dense, keys)
        }
        "index_churned" | "get_churned" | "dsm_index_churned" => {
            let (map, ids, dense, keys) = maps::churned_maps();
            Input::Maps(map, ids, dense, keys)
        }
        "store_get" | "dsm_blob_get" => {
            let (store, ids, dense, keys) = maps::shuffled_sheets(sheet::shape(shape), maps::N);
            Input::Sheets(store, ids, dense, keys)
        }
        "set_text" | "set_key" | "column" | "export_each" => {
            let (store, ids) = store_of(shape, 10_000);
            Input::Store(store, ids)
        }
        "fx_column" => Input::Fx(vec![sheet::build_fxhashmap_of(sheet::shape(shape)); 10_000]),
        "serde_each" => Input::Trees(vec![sheet::build_json_of(sheet::shape(shape)); 10_000]),
        "from_bytes" | "memcpy_fresh" | "view" | "memcpy_warm" => {
            let bytes = store_of(shape, 100_000).0.to_bytes();
            let warm = vec![1_u8; bytes.len()];
            Input::Bytes(bytes, warm)
        }
        "commit" | "snapshot" => {
            let (mut store, ids) = store_of(shape, 100_000);
            let mut history = History::with_max_bytes(1 << 30);
            history.commit(&store);
            for &id in ids.iter().step_by(100) {
                store.get_mut(id).unwrap().set(HEALTH, 1.0).unwrap();
            }
            Input::History(store, history)
        }
        other => panic!("unknown operation {other}"),
    }
}

/// Runs `op` once over `input`; returns something that depends on all of it.
#[inline(never)]
fn measured(op: &str, input: &mut Input) -> usize {
    let lossy = ExportOptions::json().non_finite_as_null();
    match (op, input) {
        ("store_get", Input::Sheets(store, ids, ..)) => {
            let store = black_box(&*store);
            ids.iter().filter_map(|&id| store.get(id).unwrap().get_float(HEALTH)).sum::<f32>()
                as usize
        }
        ("dsm_blob_get", Input::Sheets(_, _, dense, keys)) => {
            let dense = black_box(&*dense);
            keys.iter().filter_map(|&k| dense[k].as_blob_ref().get_float(HEALTH)).sum::<f32>()
                as usize
        }
        ("index" | "index_churned", Input::Maps(map, ids, ..)) => {
            let map = black_box(&*map);
            ids.iter().map(|&id| map[id]).sum::<u64>() as usize
        }
        ("get" | "get_churned", Input::Maps(map, ids, ..)) => {
            let map = black_box(&*map);
            ids.iter().map(|&id| *map.get(id).unwrap()).sum::<u64>() as usize
        }
        ("dsm_index" | "dsm_index_churned", Input::Maps(_, _, dense, keys)) => {
            let dense = black_box(&*dense);
            keys.iter().map(|&k| dense[k]).sum::<u64>() as usize
        }
        ("set_text", Input::Store(store, ids)) => {
            for (i, &id) in ids.iter().enumerate() {
                store.get_mut(id).unwrap().set(black_box("stats.health"), i as f32).unwrap();
            }
            store.len()
        }
        ("set_key", Input::Store(store, ids)) => {
            for (i, &id) in ids.iter().enumerate() {
                store.get_mut(id).unwrap().set(black_box(HEALTH), i as f32).unwrap();
            }
            store.len()
        }
        ("column", Input::Store(store, _)) => {
            black_box(&*store).column::<f32>(HEALTH).map(|(_, x)| x).sum::<f32>() as usize
        }
        ("fx_column", Input::Fx(maps)) => black_box(&*maps)
            .iter()
            .filter_map(|m| match m.get(&HEALTH.raw()) {
                Some(datacomp::OwnedValue::Float(x)) => Some(*x),
                _ => None,
            })
            .sum::<f32>() as usize,
        ("export_each", Input::Store(store, ids)) => {
            ids.iter().map(|&id| store.export(id, &lossy).unwrap().len()).sum()
        }
        ("serde_each", Input::Trees(trees)) => {
            trees.iter().map(|t| serde_json::to_string(t).unwrap().len()).sum()
        }
        ("from_bytes", Input::Bytes(bytes, _)) => {
            LoadOptions::new().threads(1).load_bytes(black_box(bytes)).unwrap().len()
        }
        ("memcpy_fresh", Input::Bytes(bytes, _)) => black_box(bytes.to_vec()).len(),
        ("view", Input::Bytes(bytes, _)) => {
            LoadOptions::new().threads(1).view(black_box(bytes)).unwrap().len()
        }
        ("memcpy_warm", Input::Bytes(bytes, warm)) => {
            warm.copy_from_slice(black_box(bytes));
            black_box(&*warm).len()
        }
        ("commit", Input::History(store, history)) => usize::from(history.commit(store)),
        ("snapshot", Input::History(store, _)) => Snapshot::new(black_box(store)).byte_len(),
        (op, _) => panic!("unknown operation {op}"),
    }
}

/// The minor page faults of this process so far (Linux: field 10 of `/proc/self/stat`).
fn minor_faults() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The command's name, in parentheses, may hold spaces: count fields after it.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    after.split_whitespace().nth(7).and_then(|f| f.parse().ok()).unwrap_or(0)
}

/// `goal_cost faults SHAPE`: see the file's docs.
fn faults(shape: &str) {
    let tunables = std::env::var("GLIBC_TUNABLES").unwrap_or_default();
    println!("{shape}: GLIBC_TUNABLES={tunables:?}");
    let mut bytes = Input::Bytes(store_of(shape, 100_000).0.to_bytes(), Vec::new());
    if let Input::Bytes(saved, warm) = &mut bytes {
        *warm = vec![1_u8; saved.len()];
        println!("save: {} bytes ({} pages)", saved.len(), saved.len().div_ceil(4096));
    }
    let mut history = input("commit", shape);
    for op in ["memcpy_fresh", "memcpy_warm", "from_bytes", "view", "snapshot", "commit"] {
        let input = if matches!(op, "snapshot" | "commit") { &mut history } else { &mut bytes };
        let runs: Vec<u64> = (0..3)
            .map(|_| {
                let before = minor_faults();
                black_box(measured(op, input));
                minor_faults() - before
            })
            .collect();
        println!("{op:>12}: page faults of 3 runs {runs:?}");
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [op, shape] = &args[..]
        && op == "faults"
    {
        return faults(shape);
    }
    let (op, shape) = match &args[..] {
        [op] => (op.as_str(), "sheet"),
        [op, shape] => (op.as_str(), shape.as_str()),
        _ => {
            eprintln!("usage: goal_cost OP [sheet|small]   (see the file's docs)");
            std::process::exit(2);
        }
    };
    let blob = sheet::build_blob_of(sheet::shape(shape));
    eprintln!("{shape}: {} keys, {} arena bytes a sheet", blob.len(), blob.used_bytes());
    let mut input = input(op, shape);
    black_box(measured(op, &mut input));
}
