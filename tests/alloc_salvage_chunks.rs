//! Peak heap of [`Store::salvage`] per byte of a save whose every arena chunk is damaged: a
//! million small entities, all lost to their chunks' crcs, are reported as a run a chunk, so
//! the memory salvage holds beyond its output store is in proportion to the damaged chunks,
//! not to the entities.
//!
//! dhat's heap profiler counts every allocation in this process, so this file holds a single
//! test.

use datacomp::{Blob, Store};

mod common;
use common::table;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

#[test]
fn salvage_of_an_all_lost_file_reports_runs_not_entities() {
    let n = 1_000_000_usize;
    let mut store = Store::new();
    let sheet: Blob = [("hp", 1.0_f32)].into_iter().collect();
    for _ in 0..n {
        store.insert(&sheet);
    }
    let mut bytes = store.to_bytes();
    drop(store);
    // One changed byte in each 64 KiB chunk of the arena (section 5).
    let &(_, offset, len) = table(&bytes).iter().find(|e| e.0 == 5).unwrap();
    let chunks = len.div_ceil(64 * 1024);
    for c in 0..chunks {
        bytes[offset + c * 64 * 1024] ^= 1;
    }

    let _profiler = dhat::Profiler::builder().testing().build();
    let before = dhat::HeapStats::get().curr_bytes;
    let salvage = Store::salvage(&bytes).unwrap();
    let peak = dhat::HeapStats::get().max_bytes - before;
    let held = dhat::HeapStats::get().curr_bytes - before;
    assert_eq!((salvage.lost.len(), salvage.store.len()), (n, 0));
    let per_byte = peak as f64 / bytes.len() as f64;
    eprintln!(
        "salvage of {} bytes ({chunks} chunks): peak heap {peak} bytes ({per_byte:.2}x), held {held}",
        bytes.len()
    );
    // A run a chunk (an entity across two chunks is lost to the first): not one an entity.
    let runs = salvage.lost.runs();
    assert!(runs.len() <= chunks, "{} runs for {chunks} chunks", runs.len());
    assert_eq!(runs.iter().map(|r| r.len()).sum::<usize>(), n);
    // The output store (its arena, 20 bytes of index an entity) and, while checking, a byte
    // and a 12-byte sweep entry an entity, for 24 bytes of file an entity: before runs, each
    // entity's entry made it 5.0 bytes of heap a byte of input.
    assert!(per_byte < 2.5, "{per_byte:.2} bytes of heap a byte of input");
}
