//! The measurement harness behind BENCHMARKS.md's "JSON export from layout plans" section,
//! beside the criterion groups `export/10000_sheets` and `export/10000_monsters`
//! (benches/json.rs): the same documents, measured in ways a loaded machine disturbs less.
//!
//! - `once OP`: imports the documents, then runs OP once in `measured` (for
//!   `valgrind --tool=callgrind --collect-atstart=no --toggle-collect=export_cost::measured`):
//!   instruction counts, which no load changes. OP is one of [`OPS`].
//! - `min N`: N rounds of every operation one after another; prints each one's minimum and
//!   the ratios to `serde_json` writing the `Value` it parsed the same text into.
//!
//! - `break CASE`: builds a hostile store, exports it once compact and once pretty, and prints
//!   the time of each export (run under `/usr/bin/time -v` for the peak RSS). CASE is `wide`
//!   (one entity of 1,000,000 keys, nested under about 1,000 objects), `long_name` (100 entities
//!   of one key whose name is 100 KB of quotes, each escaped, and a 100 KB string value), or
//!   `different` (100,000 entities, each of its own layout: no plan is ever reused).
//!
//! Run: `cargo run --release --example export_cost -- min 30`.

#[path = "../common/fixtures.rs"]
mod fixtures;

#[path = "../../tests/common/corpus.rs"]
mod corpus;

use std::hint::black_box;
use std::time::{Duration, Instant};

use datacomp::{ExportOptions, ImportOptions, Key, Store, TextFormat};

/// The operations, by name: `s_` on the 10,000 sheets, `m_` on the 10,000 monsters.
const OPS: [&str; 17] = [
    "s_import",
    "s_import_lenient",
    "s_import_sjson",
    "s_serde_import",
    "s_each",
    "s_compact",
    "s_try_compact",
    "s_pretty",
    "s_serde_compact",
    "s_serde_pretty",
    "s_memcpy",
    "m_compact",
    "m_try_compact",
    "m_pretty",
    "m_serde_compact",
    "m_serde_pretty",
    "m_memcpy",
];

/// The exports that write a NaN or infinity as `null` rather than refuse it.
const LOSSY: ExportOptions = ExportOptions::json().non_finite_as_null();

struct Doc {
    store: Store,
    tree: serde_json::Value,
    text: String,
    /// The store's SJSON export: what `import_sjson` reads.
    sjson: String,
}

fn doc(text: String) -> Doc {
    let mut store = Store::new();
    store.import(&text, &ImportOptions::strict()).unwrap();
    let tree = serde_json::from_str(&text).unwrap();
    let sjson = store.export_all(&ExportOptions::sjson().non_finite_as_null()).unwrap();
    Doc { store, tree, text, sjson }
}

/// Runs operation `op` once; returns the bytes written (the entities read, for an import).
#[inline(never)]
fn measured(op: &str, sheets: &Doc, monsters: &Doc) -> usize {
    let (d, name) = match op.split_once('_') {
        Some(("s", name)) => (sheets, name),
        Some(("m", name)) => (monsters, name),
        _ => panic!("unknown operation {op}: one of {OPS:?}"),
    };
    let store = black_box(&d.store);
    let import = |text: &str, options: ImportOptions| {
        Store::new().import(black_box(text), &options).unwrap().ids.len()
    };
    match name {
        // The import the store was built by, again (strict, lenient, of its SJSON export).
        "import" => import(&d.text, ImportOptions::strict()),
        "import_lenient" => import(&d.text, ImportOptions::lenient()),
        "import_sjson" => import(&d.sjson, ImportOptions::strict().format(TextFormat::Sjson)),
        // The peer: serde_json reading the same text into its `Value`.
        "serde_import" => serde_json::from_str::<serde_json::Value>(black_box(&d.text))
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        "compact" => store.export_all(&LOSSY).unwrap().len(),
        // One blob at a time: `Store::export` of every entity (a tree each, no plan).
        "each" => store.iter().map(|(id, _)| store.export(id, &LOSSY).unwrap().len()).sum(),
        // Refusing a NaN or infinity: the check costs a test a value.
        "try_compact" => store.export_all(&ExportOptions::json()).unwrap().len(),
        "pretty" => store.export_all(&LOSSY.pretty(true)).unwrap().len(),
        "serde_compact" => serde_json::to_string(black_box(&d.tree)).unwrap().len(),
        "serde_pretty" => serde_json::to_string_pretty(black_box(&d.tree)).unwrap().len(),
        "memcpy" => black_box(d.text.as_bytes().to_vec()).len(),
        _ => panic!("unknown operation {op}: one of {OPS:?}"),
    }
}

/// The document of a `break` case.
fn hostile(case: &str) -> String {
    match case {
        "wide" => {
            // A million names, leaving out the few whose 32-bit key another has already.
            let mut seen = std::collections::HashSet::new();
            let mut left = 1_000_000;
            let mut groups = Vec::new();
            for g in 0.. {
                if left == 0 {
                    break;
                }
                let (group, mut keys) = (format!("g{g}"), Vec::new());
                for k in 0..1000 {
                    let member = format!("k{k}");
                    if left > 0 && seen.insert(Key::path(&[&group, &member])) {
                        keys.push(format!("\"{member}\":{k}"));
                        left -= 1;
                    }
                }
                groups.push(format!("\"{group}\":{{{}}}", keys.join(",")));
            }
            format!("{{{}}}", groups.join(","))
        }
        "long_name" => {
            let name = "\\\"".repeat(100_000);
            let value = "x".repeat(100_000);
            let one = format!("{{\"{name}\":\"{value}\"}}");
            format!("[{}]", vec![one; 100].join(","))
        }
        "different" => {
            let entities: Vec<String> =
                (0..100_000).map(|i| format!("{{\"a\":1,\"k{i}\":{{\"x\":2}}}}")).collect();
            format!("[{}]", entities.join(","))
        }
        _ => panic!("unknown case {case}: wide, long_name or different"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let ["break", case] = args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        let text = hostile(case);
        let mut store = Store::new();
        store.import(&text, &ImportOptions::strict()).unwrap();
        for (style, pretty) in [("Compact", false), ("Pretty", true)] {
            let start = Instant::now();
            let out = store.export_all(&ExportOptions::json().pretty(pretty)).unwrap();
            let took = start.elapsed();
            println!(
                "{case} {style}: {} bytes of JSON in, {} out, {took:?}",
                text.len(),
                out.len()
            );
        }
        return;
    }
    let sheets = doc(fixtures::ten_thousand_sheets());
    let monsters = doc(corpus::monsters(10_000).compact());
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["once", op] => println!("{op}: {} bytes", measured(op, &sheets, &monsters)),
        ["min", n] => {
            let rounds: usize = n.parse().expect("a number of rounds");
            let mut best = [Duration::MAX; OPS.len()];
            for _ in 0..rounds {
                for (i, op) in OPS.iter().enumerate() {
                    let start = Instant::now();
                    black_box(measured(op, &sheets, &monsters));
                    best[i] = best[i].min(start.elapsed());
                }
            }
            for (op, t) in OPS.iter().zip(best) {
                println!("{op:>16}: {:8.3} ms", t.as_secs_f64() * 1e3);
            }
            for (ours, peer) in
                [(0, 3), (4, 8), (5, 8), (6, 8), (7, 9), (11, 14), (12, 14), (13, 15)]
            {
                let ratio = best[ours].as_secs_f64() / best[peer].as_secs_f64();
                println!("{} / {}: {ratio:.3}", OPS[ours], OPS[peer]);
            }
        }
        _ => eprintln!("usage: export_cost once OP | min N   (OP one of {OPS:?})"),
    }
}
