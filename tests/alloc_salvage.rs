//! Peak heap of [`Store::salvage`] per byte of a hostile input: a save of format 1.3 whose
//! entities are all lost (ends that zigzag over a one-word arena: every other one decreases,
//! the rest share the one word) must not cost memory out of proportion to its bytes.
//!
//! dhat's heap profiler counts every allocation in this process, so this file holds a single
//! test.

use datacomp::Store;

mod common;
use common::{rebuild, table};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

#[test]
fn salvage_of_lost_entities_costs_memory_in_proportion_to_the_file() {
    let n = 100_000_usize;
    let mut store = Store::new();
    for _ in 0..n {
        store.insert_empty();
    }
    let empties = store.to_bytes();
    assert_eq!(table(&empties).iter().find(|e| e.0 == 5).unwrap().2, 0, "no arena bytes");
    // Ends 1, 0, 1, 0, ... over a one-word arena (an invalid blob).
    let ends: Vec<u8> = (0..n).flat_map(|i| (1 - (i as u32 & 1)).to_le_bytes()).collect();
    let bytes = rebuild(&empties, &[(14, ends), (5, vec![0; 4])], None);
    drop(store);

    let _profiler = dhat::Profiler::builder().testing().build();
    let before = dhat::HeapStats::get().curr_bytes;
    let salvage = Store::salvage(&bytes).unwrap();
    let peak = dhat::HeapStats::get().max_bytes - before;
    assert_eq!((salvage.lost.len(), salvage.store.len()), (n, 0));
    let per_byte = peak as f64 / bytes.len() as f64;
    eprintln!("salvage peak heap {peak} bytes for a file of {} bytes: {per_byte:.1}x", bytes.len());
    // The index rebuilt (20 bytes an entity), a span (8) and a lost run (a handle, a count and
    // an error: each entity's error here names it, so each is a run of one) an entity, for 4
    // bytes of file: up to 30 bytes of memory a byte of input. (Entities lost to a damaged
    // chunk share one run: see alloc_salvage_chunks.rs.)
    assert!(per_byte < 30.0, "{per_byte:.1} bytes of heap a byte of input");
}
