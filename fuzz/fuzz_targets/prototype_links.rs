//! Prototype links in a save (format 1.5, section `prototypes`): any link values over a store
//! of up to 40 entities, written into a valid save and resealed, so that every input reaches
//! the links' checks. Every reader answers alike: the load, the view and the lazy view refuse
//! a link to no entity, a cycle or a chain past the limit with one error (which a naive walk
//! confirms) and a salvage then keeps no link; or all accept links the walk finds sound, and
//! the store reads each entity through its chain as the walk does.
//!
//! Input: a byte (the number of entities, mod 41), then the section's bytes (each `u32` 0 for
//! no prototype, else 1 + the prototype's dense position; a length not 4 per entity is itself
//! an error).
#![no_main]

use datacomp::store::MAX_CHAIN;
use datacomp::{Id, Key, Store, StoreView, Value};
use datacomp_fuzz::{aligned, check_store, reseal};
use libfuzzer_sys::fuzz_target;
use zerocopy::IntoBytes;

const BASE: Key = Key::path(&["base"]);

fuzz_target!(|data: &[u8]| check(data));

/// Entity `i`: `own` = i; `base` = i on every third; a tombstone at `base` on every fifth.
fn world(n: usize) -> (Store, Vec<Id>) {
    let mut store = Store::new();
    let ids = (0..n)
        .map(|i| {
            let id = store.insert_entries([("own", i as f32)]).unwrap();
            if i % 3 == 0 {
                store.get_mut(id).unwrap().set(BASE, i as f32).unwrap();
            } else if i % 5 == 4 {
                store.get_mut(id).unwrap().set(BASE, Value::Tombstone).unwrap();
            }
            id
        })
        .collect();
    (store, ids)
}

/// `save` with its `prototypes` section (the last, kind 16) holding `links`, resealed.
fn with_links(save: &[u8], links: &[u8]) -> Vec<u8> {
    let sections = usize::from(u16::from_le_bytes([save[14], save[15]]));
    let entry = 32 + 24 * (sections - 1);
    assert_eq!(save[entry..entry + 4], 16_u32.to_le_bytes(), "the prototypes are last");
    let offset = u64::from_le_bytes(save[entry + 8..entry + 16].try_into().unwrap()) as usize;
    let mut bytes = save[..offset].to_vec();
    bytes.extend_from_slice(links);
    bytes.resize(bytes.len().next_multiple_of(8), 0);
    bytes[entry + 16..entry + 24].copy_from_slice(&(links.len() as u64).to_le_bytes());
    reseal(&mut bytes);
    bytes
}

/// What a naive walk makes of `links` over `n` entities: each entity's chain (its
/// prototypes' positions, nearest first), or `None` for links no reader may accept.
fn walk(links: &[u8], n: usize) -> Option<Vec<Vec<usize>>> {
    if !(links.is_empty() || links.len() == 4 * n) {
        return None;
    }
    let up: Vec<Option<usize>> = links
        .chunks_exact(4)
        .map(|w| (u32::from_le_bytes(w.try_into().unwrap()) as usize).checked_sub(1))
        .collect();
    if up.iter().flatten().any(|&p| p >= n) {
        return None;
    }
    let up = |d: usize| up.get(d).copied().flatten();
    (0..n)
        .map(|d| {
            let chain: Vec<usize> = std::iter::successors(up(d), |&p| up(p)).take(n + 1).collect();
            (chain.len() <= MAX_CHAIN && !chain.contains(&d)).then_some(chain)
        })
        .collect()
}

fn check(data: &[u8]) {
    let Some((&n, links)) = data.split_first() else { return };
    let n = usize::from(n % 41);
    let (store, ids) = world(n);
    let bytes = with_links(&store.to_bytes(), links);
    let words = aligned(&bytes);
    let in_place = &words.as_bytes()[..bytes.len()];
    let loaded = Store::from_bytes(&bytes);
    let view = StoreView::new(in_place);
    assert_eq!(view.as_ref().err(), loaded.as_ref().err(), "the view and the load disagree");
    let lazy = StoreView::lazy(in_place).map(|lazy| lazy.len());
    assert_eq!(lazy.as_ref().err(), loaded.as_ref().err(), "the lazy view and the load disagree");
    let salvage = Store::salvage(&bytes).expect("a sound file but for its links salvages");
    let (loaded, chains) = match (loaded, walk(links, n)) {
        (Ok(loaded), Some(chains)) => (loaded, chains),
        (Err(_), None) => {
            assert_eq!(salvage.damaged.len(), 1, "the links are the one damage");
            assert!(ids.iter().all(|&id| salvage.store.prototype(id).is_none()));
            return;
        }
        (Ok(_), None) => panic!("links a walk refuses are accepted"),
        (Err(e), Some(_)) => panic!("links a walk finds sound are refused: {e}"),
    };
    let view = view.unwrap();
    for (d, chain) in chains.iter().enumerate() {
        let id = ids[d];
        assert_eq!(loaded.prototype(id), chain.first().map(|&p| ids[p]));
        assert_eq!(view.prototype(id), loaded.prototype(id));
        let resolved = loaded.resolved(id).unwrap();
        assert_eq!(
            resolved.chain().collect::<Vec<_>>(),
            chain.iter().map(|&p| ids[p]).collect::<Vec<_>>()
        );
        // `base` as the walk reads it: the nearest of the entity and its chain that holds it
        // (a value on every third, a tombstone on every fifth).
        let holder =
            std::iter::once(d).chain(chain.iter().copied()).find(|&e| e % 3 == 0 || e % 5 == 4);
        let expected = holder.filter(|e| e % 3 == 0).map(|e| e as f32);
        assert_eq!(resolved.get_float(BASE), expected, "entity {d}");
        assert_eq!(resolved.get_float("own"), Some(d as f32));
        assert_eq!(loaded.flatten(id).unwrap().get_float(BASE), expected);
    }
    assert!(salvage.lost.is_empty() && salvage.damaged.is_empty());
    assert!(salvage.store == loaded, "a salvage of a sound file is the load");
    check_store(&loaded);
}
