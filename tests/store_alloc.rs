//! Allocation counts of loading a save: a constant, whatever the number of entities.
//!
//! dhat counts every allocation in the process, so this file holds a single test.

use datacomp::{Blob, Store, StoreView};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

fn allocations<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let before = dhat::HeapStats::get().total_blocks;
    let out = std::hint::black_box(f());
    (out, dhat::HeapStats::get().total_blocks - before)
}

fn world(entities: usize) -> Vec<u8> {
    let mut store = Store::with_capacity(entities, entities * 128);
    let mut sheet = Blob::new();
    sheet.set("name", "The One");
    sheet.set("stats.health", 100);
    sheet.set("position", [1.0, 2.0, 3.0]);
    for _ in 0..entities {
        store.insert(&sheet);
    }
    store.to_bytes()
}

#[test]
fn loading_allocates_a_constant_number_of_times() {
    let _profiler = dhat::Profiler::builder().testing().build();
    for entities in [1_000, 100_000] {
        let bytes = world(entities);
        let (store, count) = allocations(|| Store::from_bytes(&bytes).unwrap());
        assert_eq!(store.len(), entities);
        // The index's items, meta and slots, the arena, and the span list that the overlap
        // check sorts: five, not one per entity.
        assert_eq!(count, 5, "Store::from_bytes of {entities} entities");

        let (view, count) = allocations(|| StoreView::new(&bytes).unwrap().len());
        assert_eq!(view, entities);
        assert_eq!(count, 1, "StoreView::new of {entities} entities: the sorted span list only");
    }
}
