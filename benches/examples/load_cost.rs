//! The measurement harness behind BENCHMARKS.md's issue 17 section, beside the criterion
//! group `load/100k_sheets` (benches/store.rs): the same 100,000 character sheets, measured in
//! ways that a loaded machine disturbs less than criterion's means.
//!
//! - `min N`: N rounds; each round times a warm memcpy of the save's bytes, a memcpy into a
//!   fresh buffer, then every load, one after the other; prints the minimum of each and the
//!   goals' ratios. A round that another process interrupts is slow for every operation in it,
//!   and the minimum keeps the round that ran undisturbed.
//! - `once OP`: builds the save, then runs OP once in `measured` (for
//!   `valgrind --tool=callgrind --toggle-collect=load_cost::measured`): instruction counts,
//!   which no load changes. OP is one of `memcpy_warm`, `memcpy_fresh`, `view`, `view_1`,
//!   `lazy`, `from_bytes`, `from_bytes_1`. `once OP removed` does it on the save of a store
//!   that removed one entity: its handle map is saved in full (format 1.3 leaves an identity
//!   map's meta and slots out), so the lazy open checks it.
//! - `salvage`: a 10,000-sheet save, one arena byte flipped in each 4 KiB of the arena in turn;
//!   prints the most entities one flipped byte cost `Store::salvage`, beside the entities a
//!   64 KiB chunk holds.
//!
//! Run: `cargo run --release --example load_cost -- min 60`.

#[path = "../common/sheet.rs"]
mod sheet;

use std::hint::black_box;
use std::time::{Duration, Instant};

use datacomp::{LoadOptions, Store, StoreView};

const ENTITIES: usize = 100_000;

fn save(entities: usize) -> Vec<u8> {
    let sheet = sheet::build_blob();
    let mut store = Store::with_capacity(entities, entities * sheet.used_bytes());
    for _ in 0..entities {
        store.insert(&sheet);
    }
    store.to_bytes()
}

/// The operations, by name.
const OPS: [&str; 7] =
    ["memcpy_warm", "memcpy_fresh", "view", "view_1", "lazy", "from_bytes", "from_bytes_1"];

/// Runs operation `op` once over `bytes`; `warm` is the warm memcpy's destination.
#[inline(never)]
fn measured(op: &str, bytes: &[u8], warm: &mut [u8]) -> usize {
    let one = LoadOptions::new().threads(1);
    match op {
        "memcpy_warm" => {
            warm.copy_from_slice(black_box(bytes));
            black_box(&warm).len()
        }
        "memcpy_fresh" => black_box(bytes.to_vec()).len(),
        "view" => StoreView::new(black_box(bytes)).unwrap().len(),
        "view_1" => one.view(black_box(bytes)).unwrap().len(),
        "lazy" => StoreView::lazy(black_box(bytes)).unwrap().len(),
        "from_bytes" => Store::from_bytes(black_box(bytes)).unwrap().len(),
        "from_bytes_1" => one.load_bytes(black_box(bytes)).unwrap().len(),
        other => panic!("unknown operation {other}: one of {OPS:?}"),
    }
}

fn min_of(rounds: usize) {
    let bytes = save(ENTITIES);
    let mut warm = vec![0_u8; bytes.len()];
    let mut best = [Duration::MAX; OPS.len()];
    for _ in 0..rounds {
        for (i, op) in OPS.iter().enumerate() {
            let start = Instant::now();
            black_box(measured(op, &bytes, &mut warm));
            best[i] = best[i].min(start.elapsed());
        }
    }
    println!("{} bytes, {ENTITIES} entities, minimum of {rounds} rounds:", bytes.len());
    let ms = |i: usize| best[i].as_secs_f64() * 1e3;
    for (i, op) in OPS.iter().enumerate() {
        println!("  {op:>13}: {:9.3} ms", ms(i));
    }
    println!(
        "StoreView::new / warm memcpy:          {:.2}x (2 threads), {:.2}x (1 thread)",
        ms(2) / ms(0),
        ms(3) / ms(0)
    );
    println!(
        "Store::from_bytes / fresh memcpy:      {:.2}x (2 threads), {:.2}x (1 thread)",
        ms(5) / ms(1),
        ms(6) / ms(1)
    );
    println!(
        "StoreView::lazy / StoreView::new:      {:.1}% (2 threads), {:.1}% (1 thread)",
        100.0 * ms(4) / ms(2),
        100.0 * ms(4) / ms(3)
    );
}

fn salvage() {
    const SHEETS: usize = 10_000;
    let bytes = save(SHEETS);
    let info = datacomp::format::describe(&bytes).unwrap();
    let arena = info.sections.iter().find(|s| s.name == "arena").unwrap();
    let (start, len) = (arena.offset as usize, arena.len as usize);
    let per_chunk = (64 * 1024) / (len / SHEETS);
    let (mut worst, mut flips, mut total) = (0, 0, 0);
    for at in (start..start + len).step_by(4096) {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x10;
        let salvaged = Store::salvage(&damaged).unwrap();
        assert_eq!(salvaged.store.len() + salvaged.lost.len(), SHEETS);
        worst = worst.max(salvaged.lost.len());
        total += salvaged.lost.len();
        flips += 1;
    }
    println!(
        "{SHEETS} sheets, arena {len} bytes ({} bytes a sheet, about {per_chunk} a 64 KiB chunk): \
         {flips} saves with one flipped byte, at most {worst} entities lost, {:.1} on average",
        len / SHEETS,
        total as f64 / flips as f64
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["min", n] => min_of(n.parse().expect("a number of rounds")),
        ["once", op] => {
            let bytes = save(ENTITIES);
            let mut warm = vec![0_u8; bytes.len()];
            black_box(measured(op, &bytes, &mut warm));
        }
        ["once", op, "removed"] => {
            let mut store = Store::from_bytes(&save(ENTITIES + 1)).unwrap();
            let first = store.iter().map(|(id, _)| id).next().unwrap();
            store.remove(first);
            let bytes = store.to_bytes();
            let mut warm = vec![0_u8; bytes.len()];
            black_box(measured(op, &bytes, &mut warm));
        }
        ["salvage"] => salvage(),
        _ => eprintln!("usage: load_cost min N | once OP [removed] | salvage   (OP: {OPS:?})"),
    }
}
