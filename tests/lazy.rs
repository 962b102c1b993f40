//! `LazyStoreView`: opened in O(entities), each blob checked on its first read; a damaged
//! chunk or blob costs the entities in it and no others.

mod common;

use datacomp::format::FileError;
use datacomp::format::StoreError;
use datacomp::{Blob, Id, LoadError, Store, StoreView, format};
use proptest::prelude::*;

use common::{reseal, table};

const ARENA: u32 = 5;

/// A store of `n` sheets of about 200 bytes each (a name, a stat, a float array and a bio),
/// some removed and some grown, so that spans are out of dense order.
fn world(n: usize, churn: u64) -> (Store, Vec<Id>) {
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
    for (i, id) in ids.clone().into_iter().enumerate() {
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
    ids.retain(|&id| store.contains(id));
    (store, ids)
}

/// `bytes` in 8-byte aligned memory, as a file read into a `Vec<u64>` or a memory map is.
fn aligned(bytes: &[u8]) -> Vec<u64> {
    bytes.chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect()
}

fn as_bytes(words: &[u64], len: usize) -> &[u8] {
    &zerocopy::IntoBytes::as_bytes(words)[..len]
}

/// The arena's offset and length in a save.
fn arena(bytes: &[u8]) -> (usize, usize) {
    let (_, offset, len) = table(bytes).into_iter().find(|e| e.0 == ARENA).unwrap();
    (offset, len)
}

#[test]
fn a_lazy_view_reads_what_a_full_view_reads() {
    let (store, ids) = world(700, 0);
    assert_eq!(ids.len(), 600);
    let dense: Vec<Id> = store.iter().map(|(id, _)| id).collect();
    let bytes = store.to_bytes();
    let words = aligned(&bytes);
    let bytes = as_bytes(&words, bytes.len());
    let full = StoreView::new(bytes).unwrap();
    let lazy = StoreView::lazy(bytes).unwrap();
    assert_eq!(lazy.len(), full.len());
    assert!(!lazy.is_empty());
    assert_eq!(lazy.iter().len(), dense.len());
    for (&id, (lazy_id, blob)) in dense.iter().zip(lazy.iter()) {
        assert_eq!(lazy_id, id);
        assert_eq!(blob.unwrap(), full.get(id).unwrap());
        // A second read remembers the first.
        assert_eq!(lazy.get(id).unwrap().unwrap(), store.get(id).unwrap());
    }
    let gone = store.iter().map(|(id, _)| id).next().unwrap();
    let mut smaller = store.clone();
    smaller.remove(gone);
    let bytes = smaller.to_bytes();
    let words = aligned(&bytes);
    let lazy = StoreView::lazy(as_bytes(&words, bytes.len())).unwrap();
    assert_eq!(lazy.get(gone).unwrap(), None, "a removed entity is not there");
    assert!(!lazy.contains(gone));
}

#[test]
fn opening_checks_the_index_but_no_blob() {
    let (store, ids) = world(300, 1);
    let good = store.to_bytes();
    let (arena_at, _) = arena(&good);

    // A bad blob, resealed: the open succeeds, that entity's read fails, others read.
    let first = store.get(ids[0]).unwrap().as_bytes().len();
    let mut bytes = good.clone();
    // The first live entity's blob: its key count, made huge.
    let span_of = |bytes: &[u8], id: Id| {
        let view = StoreView::new(bytes).unwrap();
        let blob = view.get(id).unwrap();
        blob.as_bytes().as_ptr() as usize - bytes.as_ptr() as usize
    };
    let words = aligned(&good);
    let at = span_of(as_bytes(&words, good.len()), ids[0]);
    assert!(at >= arena_at && first > 8);
    bytes[at + 3] = 0x7f;
    reseal(&mut bytes);
    let words = aligned(&bytes);
    let bytes = as_bytes(&words, bytes.len());
    let full_error = StoreView::new(bytes).unwrap_err();
    assert!(
        matches!(full_error, LoadError::Store(StoreError::Blob { id, .. }) if id == ids[0]),
        "{full_error}"
    );
    let lazy = StoreView::lazy(bytes).expect("the open reads no blob");
    assert_eq!(lazy.get(ids[0]).unwrap_err(), full_error);
    assert_eq!(lazy.get(ids[0]).unwrap_err(), full_error, "a bad blob stays bad");
    for &id in &ids[1..] {
        assert_eq!(lazy.get(id).unwrap().unwrap(), store.get(id).unwrap());
    }

    // An end offset past the arena (format 1.3) is found at the first read of the entities
    // whose blob it bounds; the full view refuses the file.
    let dense: Vec<Id> = store.iter().map(|(id, _)| id).collect();
    let mut bytes = good.clone();
    let (_, ends, _) = table(&good).into_iter().find(|e| e.0 == 14).unwrap();
    let end_of_second = u32::from_le_bytes(bytes[ends + 4..ends + 8].try_into().unwrap());
    bytes[ends..ends + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    reseal(&mut bytes);
    let words = aligned(&bytes);
    let bytes = as_bytes(&words, bytes.len());
    let (_, arena_len) = arena(bytes);
    let past = LoadError::Store(StoreError::SpanOutOfArena {
        id: dense[0],
        offset: 0,
        words: u32::MAX,
        arena_words: arena_len as u64 / 4,
    });
    assert_eq!(StoreView::new(bytes).unwrap_err(), past);
    let lazy = StoreView::lazy(bytes).expect("the open reads no end offset");
    assert_eq!(lazy.get(dense[0]).unwrap_err(), past);
    let decrease = LoadError::Store(StoreError::EndsDecrease {
        id: dense[1],
        start: u32::MAX,
        end: end_of_second,
    });
    assert_eq!(lazy.get(dense[1]).unwrap_err(), decrease);
    for &id in &dense[2..] {
        assert_eq!(lazy.get(id).unwrap().unwrap(), store.get(id).unwrap());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// Model test: one flipped byte in the arena. Every entity whose span touches that byte's
    /// chunk reads as that chunk's crc error, and every other entity reads exactly as the
    /// store holds it.
    #[test]
    fn a_damaged_chunk_costs_only_the_entities_in_it(
        n in 1_usize..700,
        churn in 0_u64..7,
        at in any::<prop::sample::Index>(),
        bit in 0_u8..8,
    ) {
        let (store, ids) = world(n, churn);
        let mut bytes = store.to_bytes();
        let (arena_at, arena_len) = arena(&bytes);
        // Where each entity's blob lies in the arena, from the undamaged save.
        let clean = aligned(&bytes);
        let clean = as_bytes(&clean, bytes.len());
        let view = StoreView::new(clean).unwrap();
        let ranges: Vec<std::ops::Range<usize>> = ids
            .iter()
            .map(|&id| {
                let blob = view.get(id).unwrap().as_bytes();
                let start = blob.as_ptr() as usize - clean.as_ptr() as usize - arena_at;
                start..start + blob.len()
            })
            .collect();
        let flipped = at.index(arena_len);
        bytes[arena_at + flipped] ^= 1 << bit;
        let words = aligned(&bytes);
        let bytes = as_bytes(&words, bytes.len());
        prop_assert!(StoreView::new(bytes).is_err());
        let lazy = StoreView::lazy(bytes).unwrap();
        let chunk = flipped / format::ARENA_CHUNK_BYTES;
        for (&id, range) in ids.iter().zip(ranges) {
            let original = store.get(id).unwrap();
            let first = range.start / format::ARENA_CHUNK_BYTES;
            let last = (range.end - 1) / format::ARENA_CHUNK_BYTES;
            match lazy.get(id) {
                Ok(Some(blob)) => {
                    prop_assert!(chunk < first || chunk > last, "{id} lies in the damaged chunk");
                    prop_assert_eq!(blob, original);
                }
                Err(LoadError::File(FileError::ChunkCrc { chunk: bad, .. })) => {
                    prop_assert_eq!(bad as usize, chunk);
                    prop_assert!((first..=last).contains(&chunk));
                }
                other => prop_assert!(false, "{id}: {other:?}"),
            }
        }
    }
}

/// A crafted format 1.3 save whose ends go `[e0, 0, e0, ...]`: the second entity's end comes
/// before its start (refused on its read), and the third starts at 0 again, on the first's
/// words. The full readers refuse the file; the lazy view handed out both entities at the
/// same arena words. It refuses the file too now, naming the pair, as the full view does for
/// overlapping spans.
#[test]
fn a_lazy_view_refuses_ends_that_put_two_blobs_on_the_same_words() {
    let mut store = Store::new();
    let ids: Vec<Id> = (0..4)
        .map(|i| {
            let mut sheet = Blob::new();
            sheet.set("name", format!("Sheet {i}").as_str()).unwrap();
            store.insert(&sheet)
        })
        .collect();
    let mut bytes = store.to_bytes();
    let (_, ends, len) = table(&bytes).into_iter().find(|e| e.0 == 14).unwrap();
    assert_eq!(len, 16, "four ends");
    let end_at = |bytes: &[u8], i: usize| {
        u32::from_le_bytes(bytes[ends + 4 * i..ends + 4 * i + 4].try_into().unwrap())
    };
    let first_end = end_at(&bytes, 0);
    bytes[ends + 4..ends + 8].copy_from_slice(&0_u32.to_le_bytes());
    bytes[ends + 8..ends + 12].copy_from_slice(&first_end.to_le_bytes());
    reseal(&mut bytes);
    let words = aligned(&bytes);
    let bytes = as_bytes(&words, bytes.len());
    assert!(Store::from_bytes(bytes).is_err());
    assert!(StoreView::new(bytes).is_err());
    let err = StoreView::lazy(bytes).unwrap_err();
    assert_eq!(err, LoadError::Store(StoreError::SpansOverlap { first: ids[0], second: ids[2] }));
}
