//! `Store::salvage`: what checks out of a damaged save is kept under its handles, the rest is
//! reported; the salvaged store equals the original minus the reported entities.

mod common;

use datacomp::format::StoreError;
use datacomp::format::{FileError, Lost};
use datacomp::{Blob, Id, LoadError, LoadOptions, Store, format};
use proptest::prelude::*;

use common::{reseal, table};

const ARENA: u32 = 5;

/// `n` sheets of about 200 to 500 bytes, some removed and some grown (spans out of order).
fn world(n: usize, churn: u64) -> Store {
    let mut store = Store::new();
    let mut ids = Vec::new();
    for i in 0..n {
        let mut sheet = Blob::new();
        sheet.set("name", format!("Sheet {i}").as_str()).unwrap();
        sheet.set("stats.health", f32::from(i as u16)).unwrap();
        sheet.set("position", [1.0, 2.0, f32::from(i as u16)]).unwrap();
        sheet.set("bio", "b".repeat(100 + i % 50).as_str()).unwrap();
        ids.push(store.insert(&sheet));
    }
    for (i, id) in ids.into_iter().enumerate() {
        match (i as u64 + churn) % 7 {
            0 => {
                store.remove(id);
            }
            1 => {
                let longer = "g".repeat(300);
                store.get_mut(id).unwrap().set("bio", longer.as_str()).unwrap();
            }
            _ => {}
        }
    }
    store
}

fn arena(bytes: &[u8]) -> (usize, usize) {
    let (_, offset, len) = table(bytes).into_iter().find(|e| e.0 == ARENA).unwrap();
    (offset, len)
}

/// The original store minus the lost entities, in the order they were reported.
fn minus(store: &Store, lost: &Lost) -> Store {
    let mut expected = store.clone();
    for (id, _) in lost.iter() {
        assert!(expected.remove(id), "{id} is reported once and was in the store");
    }
    expected
}

#[test]
fn an_undamaged_save_salvages_whole() {
    let store = world(500, 3);
    let salvage = Store::salvage(&store.to_bytes()).unwrap();
    assert!(salvage.lost.is_empty());
    assert!(salvage.store == store);
}

#[test]
fn a_bad_blob_is_lost_alone_and_the_rest_saves_and_loads() {
    let store = world(300, 3);
    let mut bytes = store.to_bytes();
    // With nothing removed before it, the first entity's blob starts the arena: a huge key
    // count.
    let (arena_at, _) = arena(&bytes);
    let first = store.iter().next().unwrap().0;
    assert_eq!(first, "0v0t1".parse().unwrap());
    bytes[arena_at + 3] = 0x7f;
    reseal(&mut bytes);
    let full = Store::from_bytes(&bytes).unwrap_err();
    assert!(matches!(full, LoadError::Store(StoreError::Blob { id, .. }) if id == first), "{full}");
    let salvage = Store::salvage(&bytes).unwrap();
    assert_eq!(salvage.lost.iter().collect::<Vec<_>>(), [(first, &full)]);
    assert_eq!((salvage.lost.runs().len(), salvage.lost.why(first)), (1, Some(&full)));
    assert!(salvage.store == minus(&store, &salvage.lost));
    let again = Store::from_bytes(&salvage.store.to_bytes()).unwrap();
    assert!(again == salvage.store);
    assert!(again.get(first).is_none(), "a lost entity's handle is stale");
}

#[test]
fn a_format_1_0_save_with_a_changed_arena_byte_loses_every_entity() {
    let golden = include_bytes!("../fixtures/world_v2.dcmp");
    let mut bytes = golden.to_vec();
    let (arena_at, _) = arena(&bytes);
    bytes[arena_at + 5] ^= 1;
    let salvage = Store::salvage(&bytes).unwrap();
    assert_eq!(salvage.lost.len(), 3);
    assert!(
        salvage
            .lost
            .iter()
            .all(|(_, e)| matches!(e, LoadError::File(FileError::Crc { section: "arena", .. })))
    );
    assert!(salvage.store.is_empty());
    assert_eq!(salvage.store.key_names().len(), 9, "the names are kept");
}

#[test]
fn unreadable_headers_and_indexes_are_errors() {
    let store = world(50, 6); // nothing removed or moved: spans in dense order
    let good = store.to_bytes();
    assert!(matches!(
        Store::salvage(&good[..20]),
        Err(LoadError::File(FileError::Truncated { .. }))
    ));
    let mut bytes = good.clone();
    let (_, ends, _) = table(&good).into_iter().find(|e| e.0 == 14).unwrap();
    bytes[ends] ^= 1;
    assert!(matches!(
        Store::salvage(&bytes),
        Err(LoadError::File(FileError::Crc { section: "index ends", .. }))
    ));
    // The first entity's end moved to the third's (resealed): the second ends before it
    // starts, and the first and third overlap. The three are lost, the others kept.
    let mut bytes = good.clone();
    let end = |b: &[u8], i: usize| {
        u32::from_le_bytes(b[ends + 4 * i..ends + 4 * i + 4].try_into().unwrap())
    };
    let (second, third) = (end(&good, 1), end(&good, 2));
    bytes[ends..ends + 4].copy_from_slice(&third.to_le_bytes());
    reseal(&mut bytes);
    let salvage = Store::salvage(&bytes).unwrap();
    let ids: Vec<Id> = store.iter().map(|(id, _)| id).take(3).collect();
    assert_eq!(salvage.lost.len(), 3, "{:?}", salvage.lost);
    let lost: Vec<_> = salvage.lost.iter().collect();
    assert_eq!(lost.iter().map(|(id, _)| *id).collect::<Vec<_>>(), ids);
    let decrease =
        LoadError::Store(StoreError::EndsDecrease { id: ids[1], start: third, end: second });
    assert_eq!(lost[1].1, &decrease);
    let overlap = LoadError::Store(StoreError::SpansOverlap { first: ids[0], second: ids[2] });
    assert_eq!((lost[0].1, lost[2].1), (&overlap, &overlap));
    // Each names its entity: a run of one each.
    assert_eq!(salvage.lost.runs().len(), 3);
    assert!(salvage.store == minus(&store, &salvage.lost));
}

#[test]
fn a_key_hash_1_save_is_rehashed_as_it_is_salvaged() {
    // world_v1 names none of its keys: like a load, salvage cannot rehash them.
    let golden = include_bytes!("../fixtures/world_v1.dcmp");
    let err = Store::salvage(golden).unwrap_err();
    let full = LoadOptions::new().load_bytes(golden).unwrap_err();
    assert_eq!(err, full);
    assert!(matches!(err, LoadError::Store(StoreError::UnexplainedKeys { .. })));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// Model test: damage in one chunk (a flipped byte, or a run of garbage inside it). The
    /// salvaged store is the original minus exactly the reported entities, every one of which
    /// lies in the damaged chunk, and no entity outside it is lost.
    #[test]
    fn salvage_is_the_original_minus_the_damaged_chunk(
        n in 1_usize..700,
        churn in 0_u64..7,
        at in any::<prop::sample::Index>(),
        garbage in prop::collection::vec(any::<u8>(), 1..64),
    ) {
        let store = world(n, churn);
        let good = store.to_bytes();
        let (arena_at, arena_len) = arena(&good);
        let chunk = format::ARENA_CHUNK_BYTES;
        let start = at.index(arena_len);
        let end = (start + garbage.len()).min((start / chunk + 1) * chunk).min(arena_len);
        let mut bytes = good.clone();
        for (b, g) in bytes[arena_at + start..arena_at + end].iter_mut().zip(&garbage) {
            *b ^= g | 1;
        }
        let damaged = start / chunk;
        let salvage = Store::salvage(&bytes).unwrap();
        prop_assert!(salvage.store == minus(&store, &salvage.lost));

        // Where each entity lies in the arena: from a view of the undamaged save.
        let words: Vec<u64> =
            good.chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
        let clean = &zerocopy::IntoBytes::as_bytes(words.as_slice())[..good.len()];
        let view = datacomp::StoreView::new(clean).unwrap();
        for (id, blob) in view.iter() {
            let first = blob.as_bytes().as_ptr() as usize - clean.as_ptr() as usize - arena_at;
            let last = first + blob.as_bytes().len() - 1;
            let touches = (first / chunk..=last / chunk).contains(&damaged);
            match salvage.lost.why(id) {
                Some(LoadError::File(FileError::ChunkCrc { chunk: c, .. })) => {
                    prop_assert!(touches);
                    prop_assert_eq!(*c as usize, damaged);
                }
                Some(other) => prop_assert!(false, "{id}: {other}"),
                None => prop_assert!(!touches, "{id} lies in the damaged chunk and was kept"),
            }
        }
        let reloaded = Store::from_bytes(&salvage.store.to_bytes()).unwrap();
        prop_assert!(reloaded == salvage.store);
    }
}

#[test]
fn damaged_names_or_chunk_crcs_are_done_without() {
    let store = world(300, 2);
    let good = store.to_bytes();
    assert!(Store::salvage(&good).unwrap().damaged.is_empty());
    let section = |kind: u32| table(&good).into_iter().find(|e| e.0 == kind).unwrap();

    // Key names: every entity is kept, with no names.
    let mut named = Store::new();
    let id = named.insert_entries([("name", "Orc"), ("kind", "monster")]).unwrap();
    let good_named = named.to_bytes();
    let (_, names_at, _) = table(&good_named).into_iter().find(|e| e.0 == 13).unwrap();
    let mut bytes = good_named.clone();
    bytes[names_at + 10] ^= 1;
    let salvage = Store::salvage(&bytes).unwrap();
    assert!(salvage.lost.is_empty());
    let at = names_at as u64;
    assert!(matches!(
        salvage.damaged[..],
        [LoadError::File(FileError::Crc { section: "key tree", offset, .. })] if offset == at
    ));
    assert_eq!(salvage.store.key_names().len(), 0);
    assert_eq!(salvage.store.get(id).unwrap().get_str("name"), Some("Orc"));

    // Chunk crcs: the arena's whole crc stands in; an intact arena is kept whole.
    let (_, crcs_at, _) = section(12);
    let mut bytes = good.clone();
    bytes[crcs_at + 5] ^= 1;
    assert!(matches!(
        Store::from_bytes(&bytes),
        Err(LoadError::File(FileError::Crc { section: "arena crcs", .. }))
    ));
    let salvage = Store::salvage(&bytes).unwrap();
    assert!(matches!(
        salvage.damaged[..],
        [LoadError::File(FileError::Crc { section: "arena crcs", .. })]
    ));
    assert!(salvage.lost.is_empty() && salvage.store == store);
    // ... and a changed arena byte then costs every entity.
    let (_, arena_at, _) = section(ARENA);
    bytes[arena_at + 100] ^= 1;
    let salvage = Store::salvage(&bytes).unwrap();
    assert_eq!(salvage.lost.len(), store.len());
    assert!(
        salvage
            .lost
            .iter()
            .all(|(_, e)| matches!(e, LoadError::File(FileError::Crc { section: "arena", .. })))
    );
}
