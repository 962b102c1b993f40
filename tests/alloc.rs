//! Allocation counts: a blob is one buffer, so it costs one allocation, not one per value; and
//! loading a store costs a constant number, not one per entity.
//!
//! dhat's heap profiler counts every allocation in this process, on every thread, so this file
//! is a test binary of its own without the test harness (`harness = false` in Cargo.toml): its
//! `main` runs every check on the one thread there is. Under libtest the test ran on a thread
//! of its own while the harness's main thread, just after spawning it, did its own bookkeeping
//! (a timeout queue, a map of running tests): on a loaded machine that landed inside the first
//! counted load, which then counted 9 allocations instead of 5, one run in a dozen.

use std::hash::Hasher;

use datacomp::{Blob, History, Key, LoadOptions, Snapshot, Store, StoreView, Value};

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
    sheet.set("name", NAME).unwrap();
    sheet.set("stats.health", 100.0).unwrap();
    sheet.set("stats.mana", 200.0).unwrap();
    sheet.set("status_effects.drunk", true).unwrap();
    sheet.set("status_effects.delirious", true).unwrap();
    sheet.set("position", POSITION).unwrap();
}

fn main() {
    let _profiler = dhat::Profiler::builder().testing().build();
    blob_allocations();
    store_load_allocations();
    known_keys_allocations();
    time_travel_allocations();
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
        copy.set("name", "Another").unwrap(); // fits in place
        copy.remove("status_effects.drunk");
        copy.set("stats.health", 50.0).unwrap();
    });
    assert_eq!(count, 0, "edits that fit do not allocate");

    let (read, count) = allocations(|| Blob::from_bytes(sheet.as_bytes()).unwrap());
    assert_eq!(read, sheet);
    assert_eq!(count, 1, "from_bytes: the aligned copy, and nothing for validation");

    let (big, _) =
        allocations(|| (0..100).map(|i| (Key::from_raw(i), "payload")).collect::<Blob>());
    let (_, count) = allocations(|| Blob::from_bytes(big.as_bytes()).unwrap());
    assert_eq!(count, 2, "past 64 keys, the key check sorts in a scratch buffer");
}

fn world(entities: usize) -> Vec<u8> {
    let mut store = Store::with_capacity(entities, entities * 128);
    let mut sheet = Blob::new();
    sheet.set("name", "The One").unwrap();
    sheet.set("stats.health", 100).unwrap();
    sheet.set("position", [1.0, 2.0, 3.0]).unwrap();
    for _ in 0..entities {
        store.insert(&sheet);
    }
    store.to_bytes()
}

fn store_load_allocations() {
    for entities in [1_000, 100_000] {
        let bytes = world(entities);
        // One thread: the index's items, meta and slots, the arena, and one more whatever the
        // entities (four before format 1.4); spans in order need no sorted list. Not one per
        // entity: the same count for 1,000 and 100,000.
        let one = LoadOptions::new().threads(1);
        let (store, count) = allocations(|| one.load_bytes(&bytes).unwrap());
        assert_eq!(store.len(), entities);
        assert_eq!(count, 5, "Store::from_bytes of {entities} entities on one thread");
        let (view, count) = allocations(|| one.view(&bytes).unwrap().len());
        assert_eq!(view, entities);
        assert_eq!(count, 0, "StoreView::new of {entities} entities on one thread");

        // On threads, the threads' own and a few lists of parts more, still not one per entity.
        let (_, threaded) = allocations(|| Store::from_bytes(&bytes).unwrap());
        assert!(threaded <= 4 + 20, "Store::from_bytes of {entities} entities: {threaded}");
        let (_, count) = allocations(|| StoreView::new(&bytes).unwrap().len());
        assert!(count <= 20, "StoreView::new of {entities} entities: {count}");
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
            let (store, count) = allocations(|| options.load_bytes(&bytes).unwrap());
            assert_eq!(store.key_name(Key::parse("name")).as_deref(), Some("name"));
            count
        })
        .collect();
    assert_eq!(counts[0], counts[1], "allocations with 10 and 5,000 known paths");
}

/// A store of `entities` sheets with three key names.
fn named_world(entities: usize) -> Store {
    let mut store = Store::from_bytes(&world(entities)).unwrap();
    for name in ["name", "stats.health", "position"] {
        store.insert_key_name(name).unwrap();
    }
    store
}

fn time_travel_allocations() {
    let mut counts = Vec::new();
    for entities in [1_000, 100_000] {
        let mut store = named_world(entities);
        let (snapshot, snapshot_count) = allocations(|| Snapshot::new(&store));
        // The index's items, meta and slots, the arena; the names: the tree's nodes, text and
        // segment table, and one B-tree node of its keys, whatever the names. Nothing per
        // entity.
        assert_eq!(snapshot_count, 4 + 4, "Snapshot::new of {entities} entities");

        let ids: Vec<_> = store.iter().map(|(id, _)| id).take(10).collect();
        for &id in &ids {
            store.get_mut(id).unwrap().set(Key::parse("stats.health"), 1.0).unwrap();
        }
        let (_, restore_count) = allocations(|| snapshot.restore(&mut store));
        assert_eq!(restore_count, 0, "Store::restore of {entities} entities into its own buffers");
        let mut empty = Store::new();
        let (_, count) = allocations(|| snapshot.restore(&mut empty));
        assert_eq!(count, snapshot_count, "Store::restore into an empty store: one per buffer");

        let (mark, mark_count) = allocations(|| store.mark());
        assert_eq!(mark_count, snapshot_count, "Store::mark is a snapshot");
        drop(mark);

        // A commit of 10 changed entities costs the same whatever the store's size.
        let mut history = History::with_max_bytes(usize::MAX);
        history.commit(&store);
        for &id in &ids {
            store.get_mut(id).unwrap().set(Key::parse("stats.health"), 2.0).unwrap();
        }
        let (_, commit_count) = allocations(|| history.commit(&store));
        let (_, undo_count) = allocations(|| history.undo(&mut store));
        let (_, redo_count) = allocations(|| history.redo(&mut store));
        counts.push((commit_count, undo_count, redo_count));
    }
    assert_eq!(
        counts[0], counts[1],
        "commit, undo, redo allocations of 1,000 and 100,000 entities"
    );
    println!("commit, undo, redo of 10 changed entities: {:?} allocations", counts[0]);
}
