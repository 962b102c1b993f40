//! Allocation counts: a blob is one buffer, so it costs one allocation, not one per value; and
//! loading a store costs a constant number, not one per entity.
//!
//! dhat's heap profiler counts every allocation in this process, so this file holds a single
//! test: parallel tests would count each other's allocations.

use std::hash::Hasher;

use datacomp::{Blob, Key, LoadOptions, Store, StoreView, Value};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// Allocations made by `f`, which must not free what it returns before the count is taken.
fn allocations<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let before = dhat::HeapStats::get().total_blocks;
    let out = std::hint::black_box(f());
    (out, dhat::HeapStats::get().total_blocks - before)
}

const NAME: Value<'static> = Value::Str("The One");
const POSITION: Value<'static> = Value::Floats(&[1.0, 2.0, 0.5]);

fn fill(sheet: &mut Blob) {
    sheet.set("name", NAME);
    sheet.set("stats.health", 100.0);
    sheet.set("stats.mana", 200.0);
    sheet.set("status_effects.drunk", true);
    sheet.set("status_effects.delirious", true);
    sheet.set("position", POSITION);
}

#[test]
fn allocation_counts() {
    let _profiler = dhat::Profiler::builder().testing().build();
    blob_allocations();
    store_load_allocations();
    known_keys_allocations();
}

fn blob_allocations() {
    let (_, count) = allocations(Blob::new);
    assert_eq!(count, 0, "an empty blob allocates nothing");

    let (sheet, count) = allocations(|| {
        let mut sheet = Blob::with_capacity(6, NAME.payload_bytes() + POSITION.payload_bytes());
        fill(&mut sheet);
        sheet
    });
    assert_eq!(count, 1, "a sheet of known size is one allocation");
    assert_eq!(sheet.free_bytes(), 0);

    let (_, count) = allocations(|| {
        let mut sheet = Blob::new();
        fill(&mut sheet);
        sheet
    });
    assert_eq!(count, 1, "the first growth leaves room for a small sheet");

    let (_, count) = allocations(|| {
        let health = Key::parse("stats.health");
        (
            sheet.get(health),
            sheet.get_str("name"),
            sheet.get_floats("position"),
            sheet.iter().count(),
        )
    });
    assert_eq!(count, 0, "reads borrow from the buffer");

    let (mut copy, count) = allocations(|| sheet.clone());
    assert_eq!(count, 1, "a clone is one memcpy'd buffer");

    let (_, count) = allocations(|| {
        copy.set("name", "Another"); // fits in place
        copy.remove("status_effects.drunk");
        copy.set("stats.health", 50.0);
    });
    assert_eq!(count, 0, "edits that fit do not allocate");

    let (read, count) = allocations(|| Blob::from_bytes(sheet.as_bytes()).unwrap());
    assert_eq!(read, sheet);
    assert_eq!(count, 1, "from_bytes: the aligned copy, and nothing for validation");

    let (big, _) =
        allocations(|| (0..100).map(|i| (Key::from_raw(i), "payload")).collect::<Blob>());
    let (_, count) = allocations(|| Blob::from_bytes(big.as_bytes()).unwrap());
    assert_eq!(count, 3, "past 32 keys, validation sorts in two scratch buffers");
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

fn store_load_allocations() {
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

/// A key hash 1 save of one entity holding `name` (by its key hash 1 key), without names.
fn old_world() -> Vec<u8> {
    let mut hasher = fxhash::FxHasher32::default();
    hasher.write(b"name");
    let mut store = Store::new();
    store.insert(&[(Key::from_raw(hasher.finish() as u32), 1.0)].into_iter().collect::<Blob>());
    let mut bytes = store.to_bytes();
    bytes[12..14].copy_from_slice(&1_u16.to_le_bytes());
    bytes[24..28].fill(0);
    let crc = crc32fast::hash(&bytes[..32 + 24 * usize::from(bytes[14])]);
    bytes[24..28].copy_from_slice(&crc.to_le_bytes());
    bytes
}

/// Attack: `datacomp upgrade --keys` with 10 million paths took 1.9 GB, most of it one map
/// entry per path. A known path that no entity needs must cost no allocation.
fn known_keys_allocations() {
    let bytes = old_world();
    let counts: Vec<u64> = [10, 5_000]
        .into_iter()
        .map(|paths| {
            let mut known: Vec<String> = (0..paths).map(|i| format!("item_{i}.count")).collect();
            known.push("name".into());
            let options = LoadOptions::new().known_keys(known.iter().map(String::as_str));
            let (store, count) = allocations(|| Store::from_bytes_with(&bytes, &options).unwrap());
            assert_eq!(store.key_name(Key::parse("name")), Some("name"));
            count
        })
        .collect();
    assert_eq!(counts[0], counts[1], "allocations with 10 and 5,000 known paths");
}
