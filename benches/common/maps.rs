//! 100,000 `u64`s in a `HandleMap` and in slotmap's `DenseSlotMap`, with their handles in one
//! shuffled order: the `map[id]` goal's pair (benches/shapes.rs, examples/goal_cost.rs).

use datacomp::{HandleMap, Id};
use slotmap::{DefaultKey, DenseSlotMap};

use super::order;

/// Items in each map.
pub const N: usize = 100_000;

/// Both maps of `0..N`, and their handles in the same shuffled order.
pub fn shuffled_maps() -> (HandleMap<u64>, Vec<Id>, DenseSlotMap<DefaultKey, u64>, Vec<DefaultKey>)
{
    let mut map = HandleMap::new(0);
    let ids: Vec<Id> = (0..N as u64).map(|i| map.insert(i)).collect();
    let mut dense = DenseSlotMap::new();
    let keys: Vec<DefaultKey> = (0..N as u64).map(|i| dense.insert(i)).collect();
    let order = order::shuffled(N);
    let ids = order.iter().map(|&i| ids[i]).collect();
    let keys = order.iter().map(|&i| keys[i]).collect();
    (map, ids, dense, keys)
}
