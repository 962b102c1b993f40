//! Instruction counts of the whole-entity operations of benches/complexity.rs, for
//! BENCHMARKS.md's complexity section: the same crafted entity of N keys, each operation run
//! once in a function of its own, so that callgrind counts it alone and no other process on a
//! shared machine changes the figure:
//!
//! ```sh
//! cargo build --release --example complexity_cost
//! valgrind --tool=callgrind --collect-atstart=no --toggle-collect='complexity_cost::op_*' \
//!     --callgrind-out-file=cg.%p ../target/release/examples/complexity_cost 100000
//! callgrind_annotate --inclusive=yes cg.<pid> | grep op_
//! ```
//!
//! Divide each operation's count by N for its instructions per key.

#[path = "../common/entity.rs"]
mod entity;

use std::hint::black_box;

use datacomp::blob::Patch;
use datacomp::{Blob, ExportOptions, ImportOptions, Store};

#[inline(never)]
fn op_import_blob(text: &str) -> usize {
    Blob::import(black_box(text), &ImportOptions::strict()).unwrap().len()
}

#[inline(never)]
fn op_import_store(text: &str) -> usize {
    Store::new().import(black_box(text), &ImportOptions::strict()).unwrap().ids.len()
}

#[inline(never)]
fn op_serde_json_parse(text: &str) -> usize {
    serde_json::from_str::<serde_json::Value>(black_box(text)).unwrap().as_object().unwrap().len()
}

#[inline(never)]
fn op_export(e: &entity::Entities) -> usize {
    black_box(&e.store).export(e.id, &ExportOptions::json()).unwrap().len()
}

#[inline(never)]
fn op_eq(e: &entity::Entities) -> bool {
    black_box(&e.base) == black_box(&e.reversed)
}

#[inline(never)]
fn op_between(e: &entity::Entities) -> usize {
    Patch::between(e.base.as_blob_ref(), e.target.as_blob_ref()).as_bytes().len()
}

#[inline(never)]
fn op_merge3(e: &entity::Entities) -> usize {
    Blob::merge3(&e.base, &e.ours, &e.theirs).unwrap().len()
}

#[inline(never)]
fn op_apply(e: &entity::Entities, base: &mut Blob) -> usize {
    e.patch.apply(base);
    base.len()
}

#[inline(never)]
fn op_from_bytes(e: &entity::Entities) -> usize {
    Blob::from_bytes(black_box(e.base.as_bytes())).unwrap().len()
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1000);
    let e = entity::build(n);
    let mut base = e.base.clone();
    let results = [
        op_import_blob(&e.text),
        op_import_store(&e.text),
        op_serde_json_parse(&e.text),
        op_export(&e),
        usize::from(op_eq(&e)),
        op_between(&e),
        op_merge3(&e),
        op_apply(&e, &mut base),
        op_from_bytes(&e),
    ];
    println!("{n} keys: {results:?}");
}
