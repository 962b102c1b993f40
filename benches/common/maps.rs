//! 100,000 `u64`s in a `HandleMap` and in slotmap's `DenseSlotMap`, with their handles in one
//! shuffled order: the `map[id]` goal's pair (benches/shapes.rs, examples/goal_cost.rs), fresh
//! and churned; and 100,000 sheets in a `Store` and in a `DenseSlotMap<Blob>`, for `get`.
//!
//! The same data on both sides, in the same places: item `i` is the `i`-th inserted in both
//! maps, and both handle lists visit the items in the same shuffled order, so each side's
//! `get` reaches the same dense positions (both maps swap the last item into a removed one's
//! place, so a churned pair stays alike too).

use datacomp::{Blob, HandleMap, Id, Store, Value};
use slotmap::{DefaultKey, DenseSlotMap};

use super::order;

/// Items in each map.
pub const N: usize = 100_000;

/// Both maps and their handles, each list in the same order.
pub type Maps = (HandleMap<u64>, Vec<Id>, DenseSlotMap<DefaultKey, u64>, Vec<DefaultKey>);

/// Both maps of `0..N`, and their handles in the same shuffled order. The `HandleMap` never
/// removed an item (its identity state: a lookup reads no slot).
pub fn shuffled_maps() -> Maps {
    let mut map = HandleMap::new(0);
    let ids: Vec<Id> = (0..N as u64).map(|i| map.insert(i)).collect();
    let mut dense = DenseSlotMap::new();
    let keys: Vec<DefaultKey> = (0..N as u64).map(|i| dense.insert(i)).collect();
    let order = order::shuffled(N);
    let ids = order.iter().map(|&i| ids[i]).collect();
    let keys = order.iter().map(|&i| keys[i]).collect();
    (map, ids, dense, keys)
}

/// As [`shuffled_maps`], after churn: every 10th item removed and as many inserted again (into
/// the freed slots, at a new generation), so that both maps read each handle's slot for its
/// dense position: the general path, as after any removal.
pub fn churned_maps() -> Maps {
    let (mut map, ids, mut dense, keys) = shuffled_maps();
    let (mut ids, mut keys): (Vec<Id>, Vec<DefaultKey>) = (ids, keys);
    for i in (0..N).step_by(10) {
        map.remove(ids[i]);
        dense.remove(keys[i]);
        ids[i] = map.insert(i as u64);
        keys[i] = dense.insert(i as u64);
    }
    (map, ids, dense, keys)
}

/// `entities` sheets of `shape` in a `Store` and as `Blob`s in a `DenseSlotMap`, with their
/// handles in one shuffled order: the same bytes each, in one arena on our side, one
/// allocation each on the peer's.
pub fn shuffled_sheets(
    shape: &[(&str, Value<'_>)],
    entities: usize,
) -> (Store, Vec<Id>, DenseSlotMap<DefaultKey, Blob>, Vec<DefaultKey>) {
    let (store, ids) = super::sheet::store_of(shape, entities);
    let blob = super::sheet::build_blob_of(shape);
    let mut dense = DenseSlotMap::new();
    let keys: Vec<DefaultKey> = (0..entities).map(|_| dense.insert(blob.clone())).collect();
    let order = order::shuffled(entities);
    let ids = order.iter().map(|&i| ids[i]).collect();
    let keys = order.iter().map(|&i| keys[i]).collect();
    (store, ids, dense, keys)
}
