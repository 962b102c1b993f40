//! Instruction counts of issue 32's prototype goals, each beside its peer in the same
//! process (see `benches/proto.rs` for the timed forms), and the sizes of the size goal.
//!
//! ```sh
//! cargo build --release --example proto_cost
//! valgrind --tool=callgrind --collect-atstart=no --toggle-collect='proto_cost::measured*' \
//!     --callgrind-out-file=cg.out ../target/release/examples/proto_cost OP
//! callgrind_annotate cg.out | grep 'PROGRAM TOTALS'   # divide by 10,000
//! ```
//!
//! With `--cache-sim=yes`, the same run counts D1 and LL misses (`D1mr`, `DLmr`).
//!
//! OP (ours, then its peer): `get_inherited`, `get_own` (a resolved get of an override),
//! `get_flat` (the inherited key stored in each flattened goblin); `column_instances`,
//! `column_flat` (one cursor over the 10,000 goblins); `set_get` (a write of each goblin's
//! health, then a resolved get of its inherited key). Each counts a run after a warm-up
//! run, as criterion times one after others; `OP cold` counts the first run instead. `sizes` prints the save sizes; `times`
//! a rough paired timing (the fastest of 400 runs of each side, in turn).

#[path = "../common/goblins.rs"]
mod goblins;

use std::hint::black_box;

use datacomp::{Id, Store};
use goblins::{INHERITED, OWN};

/// One run of `routine`, out of line as criterion's `iter` runs a bench's closure: the
/// closure is compiled as the bench compiles it (a `match` of every operation in one function
/// let the compiler inline what the bench's closure calls, and counted 71 and 30 instructions
/// an entity where the bench ran 109 and 79).
#[inline(never)]
fn measured<R>(mut routine: impl FnMut() -> R) -> R {
    routine()
}

/// A run left out of the count: the warm-up before the measured run, as criterion's
/// iterations run after others (the caches a read learns, hints and filters, learned). Its
/// body differs from `measured`'s, so that the two are not merged into one symbol.
#[inline(never)]
fn warm_up<R>(mut routine: impl FnMut() -> R) -> R {
    black_box(routine())
}

/// `body` as the closure of `measured` (counted) or of `warm_up`: two closures, each inlined
/// into its own caller as criterion's `iter` inlines a bench's.
macro_rules! go {
    ($counted:expr, $body:expr) => {
        if $counted { measured(|| $body) } else { warm_up(|| $body) }
    };
}

/// `op` over `store`, each the closure `benches/proto.rs` times: counted, or a warm-up.
fn run(op: &str, store: &Store, ids: &[Id], counted: bool) -> f32 {
    match op {
        "get_inherited" => go!(counted, {
            let store = black_box(store);
            ids.iter().filter_map(|&id| store.resolved(id)?.get_float(INHERITED)).sum::<f32>()
        }),
        "get_own" => go!(counted, {
            let store = black_box(store);
            ids.iter().filter_map(|&id| store.resolved(id)?.get_float(OWN)).sum::<f32>()
        }),
        "get_flat" => go!(counted, {
            let store = black_box(store);
            ids.iter().filter_map(|&id| store.get(id)?.get_float(INHERITED)).sum::<f32>()
        }),
        "column_instances" | "column_flat" => {
            go!(counted, { black_box(store).column::<f32>(INHERITED).map(|(_, x)| x).sum::<f32>() })
        }
        other => panic!("unknown operation {other}"),
    }
}

fn main() {
    let op = std::env::args().nth(1).unwrap_or_default();
    if op == "sizes" {
        let (instances, flat) = (goblins::instances().0, goblins::flattened().0);
        let (a, b) = (instances.to_bytes().len(), flat.to_bytes().len());
        println!("instances {a} bytes, flattened {b} bytes: {:.1}%", 100.0 * a as f64 / b as f64);
        return;
    }
    if op == "times" {
        times();
        return;
    }
    let (store, ids) = match op.as_str() {
        "get_flat" | "column_flat" => goblins::flattened(),
        _ => goblins::instances(),
    };
    // A cold run (`OP cold`) counts the first pass, where the reads learn their caches.
    let cold = std::env::args().nth(2).as_deref() == Some("cold");
    if op == "set_get" {
        let mut store = store;
        if !cold {
            black_box(set_get(&mut store, &ids, false));
        }
        println!("{}", set_get(&mut store, &ids, true));
        return;
    }
    if !cold {
        black_box(run(&op, &store, &ids, false));
    }
    println!("{}", run(&op, &store, &ids, true));
}

/// `set_get` over `store`: a frame's write of each goblin's own health, then a read of its
/// inherited key (what a write costs the read after it), counted or a warm-up.
fn set_get(store: &mut Store, ids: &[Id], counted: bool) -> f32 {
    go!(counted, {
        ids.iter()
            .filter_map(|&id| {
                store.get_mut(id)?.set(OWN, 1.0).ok()?;
                store.resolved(id)?.get_float(INHERITED)
            })
            .sum::<f32>()
    })
}

/// A rough paired timing for a loaded machine, where criterion's times move 2x: each goal's
/// two sides run in turn, 400 times, and the fastest run of each is kept (a run that no other
/// process interrupted). The quiet criterion run (`benches/proto.rs`) is the figure.
fn times() {
    let (instances, ids) = goblins::instances();
    let (flat, _) = goblins::flattened();
    let sides = [
        ("get_inherited", &instances),
        ("get_flat", &flat),
        ("column_instances", &instances),
        ("column_flat", &flat),
    ];
    let mut best = [u128::MAX; 4];
    for _ in 0..400 {
        for (fastest, &(op, store)) in best.iter_mut().zip(&sides) {
            let start = std::time::Instant::now();
            black_box(run(op, store, &ids, true));
            *fastest = (*fastest).min(start.elapsed().as_nanos());
        }
    }
    let ratio = |a: u128, b: u128| a as f64 / b as f64;
    println!(
        "get: inherited {} ns, flat {} ns, {:.2}x; column: instances {} ns, flat {} ns, {:.2}x",
        best[0],
        best[1],
        ratio(best[0], best[1]),
        best[2],
        best[3],
        ratio(best[2], best[3])
    );
}
