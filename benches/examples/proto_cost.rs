//! Instruction counts of issue 32's prototype goals, each beside its peer in the same
//! process (see `benches/proto.rs` for the timed forms), and the sizes of the size goal.
//!
//! ```sh
//! cargo build --release --example proto_cost
//! valgrind --tool=callgrind --collect-atstart=no --toggle-collect=proto_cost::measured \
//!     --callgrind-out-file=cg.out ../target/release/examples/proto_cost OP
//! callgrind_annotate cg.out | grep 'PROGRAM TOTALS'   # divide by 10,000
//! ```
//!
//! OP (ours, then its peer): `get_inherited`, `get_own` (a resolved get of an override),
//! `get_flat` (the inherited key stored in each flattened goblin); `column_instances`,
//! `column_flat` (one cursor over the 10,000 goblins). `sizes` prints the save sizes.

#[path = "../common/goblins.rs"]
mod goblins;

use std::hint::black_box;

use datacomp::{Id, Store};
use goblins::{INHERITED, OWN};

#[inline(never)]
fn measured(op: &str, store: &Store, ids: &[Id]) -> f32 {
    let store = black_box(store);
    match op {
        "get_inherited" => {
            ids.iter().filter_map(|&id| store.resolved(id)?.get_float(INHERITED)).sum()
        }
        "get_own" => ids.iter().filter_map(|&id| store.resolved(id)?.get_float(OWN)).sum(),
        "get_flat" => ids.iter().filter_map(|&id| store.get(id)?.get_float(INHERITED)).sum(),
        "column_instances" | "column_flat" => store.column::<f32>(INHERITED).map(|(_, x)| x).sum(),
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
    let (store, ids) = match op.as_str() {
        "get_flat" | "column_flat" => goblins::flattened(),
        _ => goblins::instances(),
    };
    println!("{}", measured(&op, &store, &ids));
}
