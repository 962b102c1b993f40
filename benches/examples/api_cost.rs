//! Instruction counts of the first-hour API's reads, for BENCHMARKS.md: a read with a `const
//! KeyPath` (a key that keeps its name) beside one with a `const Key`, and `Store::find`
//! beside a scan of a `Vec<FxHashMap>`, each in a function of its own, so that callgrind
//! counts it alone and no other process on a shared machine changes the figure:
//!
//! ```sh
//! cd benches && cargo build --release --example api_cost
//! valgrind --tool=callgrind --collect-atstart=no --toggle-collect='api_cost::op_*' \
//!     --callgrind-out-file=cg.%p ../target/release/examples/api_cost 10000
//! callgrind_annotate --inclusive=yes cg.<pid> | grep op_
//! ```
//!
//! Divide a `get` count by N (reads) and a `find` count by N (entities scanned).

#[path = "../common/sheet.rs"]
mod sheet;

use std::hint::black_box;

use datacomp::{Blob, Key, KeyPath, OwnedValue, Store};
use fxhash::FxHashMap;

const HEALTH_KEY: Key = Key::path(&["stats", "health"]);
const HEALTH_PATH: KeyPath = KeyPath::dotted("stats.health");

#[inline(never)]
fn op_get_const_key(blob: &Blob, n: usize) -> f32 {
    (0..n).map(|_| black_box(blob).get_float(HEALTH_KEY).unwrap_or(0.0)).sum()
}

#[inline(never)]
fn op_get_const_key_path(blob: &Blob, n: usize) -> f32 {
    (0..n).map(|_| black_box(blob).get_float(HEALTH_PATH).unwrap_or(0.0)).sum()
}

#[inline(never)]
fn op_find(store: &Store, wanted: &str) -> usize {
    black_box(store).find(Key::parse("name"), black_box(wanted)).count()
}

#[inline(never)]
fn op_column_filter(store: &Store, wanted: &str) -> usize {
    let wanted = black_box(wanted);
    black_box(store).column::<&str>(Key::parse("name")).filter(|&(_, n)| n == wanted).count()
}

#[inline(never)]
fn op_fx_scan(maps: &[FxHashMap<u32, OwnedValue>], wanted: &str) -> usize {
    let name = Key::parse("name").raw();
    let wanted = black_box(wanted);
    black_box(maps)
        .iter()
        .filter(|m| matches!(m.get(&name), Some(OwnedValue::Str(s)) if s == wanted))
        .count()
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let blob = sheet::build_blob();
    let (store, maps) = sheet::named_sheets(n);
    let wanted = format!("Orc {}", n * 3 / 4);
    let results = (
        op_get_const_key(&blob, n),
        op_get_const_key_path(&blob, n),
        op_find(&store, &wanted),
        op_column_filter(&store, &wanted),
        op_fx_scan(&maps, &wanted),
    );
    println!("{results:?}");
}
