//! An arbitrary sequence of `Store` and `HandleMap` operations, save -> load included, checked
//! against a model after every step: a `HashMap` from handle to entries for the store, a
//! `HashMap` from handle to item for the map, and every handle ever issued.
#![no_main]

use std::collections::HashMap;

use datacomp::{Blob, HandleMap, Id, Key, OwnedValue, Store, StorePatch, StoreView};
use datacomp_fuzz::{
    Entries, aligned, assert_entries, assert_view_matches, check_store, probe_handle,
};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use zerocopy::IntoBytes;

/// A value to set: `Long` grows a string past any blob's room, to force a move.
#[derive(Arbitrary, Debug)]
enum Val {
    Bool(bool),
    Float(u32),
    Str(String),
    Long(u16),
    Floats(Vec<u32>),
    Null,
}

impl Val {
    fn owned(&self) -> OwnedValue {
        match self {
            Val::Bool(b) => OwnedValue::Bool(*b),
            Val::Float(bits) => OwnedValue::Float(f32::from_bits(*bits)),
            Val::Str(s) => OwnedValue::Str(s.clone()),
            Val::Long(n) => OwnedValue::Str("x".repeat(usize::from(*n) % 6000)),
            Val::Floats(bits) => {
                OwnedValue::Floats(bits.iter().map(|&b| f32::from_bits(b)).collect())
            }
            Val::Null => OwnedValue::Null,
        }
    }
}

/// `entity` picks one of every handle ever issued (live or not) by position, modulo their
/// count; `key` one of [`KEYS`] keys.
#[derive(Arbitrary, Debug)]
enum Op {
    Insert(Vec<(u8, Val)>),
    InsertEmpty,
    Set {
        entity: u16,
        key: u8,
        value: Val,
    },
    RemoveKey {
        entity: u16,
        key: u8,
    },
    Remove {
        entity: u16,
    },
    /// A handle from outside, as raw bits.
    Probe(u64),
    NameKey(u8),
    Compact,
    Clear,
    Clone,
    /// `to_bytes` -> `from_bytes`, carrying on with the loaded store.
    SaveLoad,
    /// `to_bytes` -> `StoreView::new`.
    View,
    /// Remembers the store, as a base save.
    Checkpoint,
    /// `StorePatch::diff` from the checkpoint -> delta file -> applied to the checkpoint's save,
    /// carrying on with the result.
    DeltaFromCheckpoint,

    MapInsert(u32),
    MapInsertBatch(Vec<u32>),
    MapSet {
        entity: u16,
        value: u32,
    },
    MapRemove {
        entity: u16,
    },
    MapRemoveBatch(Vec<u16>),
    MapProbe(u64),
    MapDisjoint {
        a: u16,
        b: u16,
    },
    MapRetain {
        modulus: u8,
    },
    MapSort,
    MapDefragment {
        max_swaps: Option<u8>,
    },
    MapClear,
    MapReset,
    MapDrain,
    /// `as_raw` -> `from_raw`, carrying on with the loaded map.
    MapRawRoundTrip,
    /// serde JSON out and back in, carrying on with the loaded map.
    MapSerdeRoundTrip,
}

const KEYS: usize = 16;

fn key(k: u8) -> Key {
    Key::parse(&format!("fuzz.k{}", usize::from(k) % KEYS))
}

fn pick(issued: &[Id], entity: u16) -> Option<Id> {
    (!issued.is_empty()).then(|| issued[usize::from(entity) % issued.len()])
}

#[derive(Default)]
struct StoreModel {
    entities: HashMap<Id, Entries>,
    issued: Vec<Id>,
    names: HashMap<Key, String>,
}

fn assert_store(store: &Store, model: &StoreModel) {
    assert_eq!(store.len(), model.entities.len());
    for &id in &model.issued {
        match model.entities.get(&id) {
            Some(entries) => {
                assert_entries(store.get(id).expect("a live handle resolves"), entries)
            }
            None => assert!(store.get(id).is_none() && !store.contains(id), "{id} is dead"),
        }
    }
    assert!(store.iter().all(|(id, _)| model.entities.contains_key(&id)));
    assert_eq!(store.key_names().len(), model.names.len());
    for (key, name) in &model.names {
        assert_eq!(store.key_name(*key).as_deref(), Some(name.as_str()));
    }
}

#[derive(Default)]
struct MapModel {
    items: HashMap<Id, u32>,
    issued: Vec<Id>,
}

fn assert_map(map: &HandleMap<u32>, model: &MapModel) {
    assert_eq!(map.len(), model.items.len());
    assert_eq!(map.as_slice().len(), model.items.len());
    for &id in &model.issued {
        assert_eq!(map.get(id), model.items.get(&id), "{id}");
        assert_eq!(map.contains(id), model.items.contains_key(&id));
    }
    let mut seen = 0;
    for (dense, (id, &item)) in map.iter().enumerate() {
        assert_eq!(model.items.get(&id), Some(&item), "{id} is iterated");
        assert_eq!(map.dense_index(id), Some(dense));
        assert_eq!(map.id_at(dense), Some(id));
        seen += 1;
    }
    assert_eq!(seen, model.items.len());
}

fuzz_target!(|ops: Vec<Op>| {
    let mut store = Store::new();
    let mut model = StoreModel::default();
    let mut map: HandleMap<u32> = HandleMap::new(7);
    let mut map_model = MapModel::default();
    let mut checkpoint: Option<Store> = None;

    for op in ops {
        match op {
            Op::Insert(entries) => {
                let mut blob = Blob::new();
                let mut expected = Entries::new();
                for (k, value) in &entries {
                    blob.set(key(*k), value.owned()).unwrap();
                    expected.insert(key(*k), value.owned());
                }
                let id = store.insert(&blob);
                assert!(model.entities.insert(id, expected).is_none(), "{id} was issued twice");
                model.issued.push(id);
            }
            Op::InsertEmpty => {
                let id = store.insert_empty();
                assert!(model.entities.insert(id, Entries::new()).is_none());
                model.issued.push(id);
            }
            Op::Set { entity, key: k, value } => {
                let Some(id) = pick(&model.issued, entity) else { continue };
                match (store.get_mut(id), model.entities.get_mut(&id)) {
                    (Some(mut blob), Some(entries)) => {
                        blob.set(key(k), value.owned()).unwrap();
                        entries.insert(key(k), value.owned());
                    }
                    (None, None) => assert!(store.try_get_mut(id).is_err()),
                    _ => panic!("{id}: the store and the model disagree on whether it is live"),
                }
            }
            Op::RemoveKey { entity, key: k } => {
                let Some(id) = pick(&model.issued, entity) else { continue };
                if let Some(mut blob) = store.get_mut(id) {
                    let entries = model.entities.get_mut(&id).expect("live in the model");
                    assert_eq!(blob.remove(key(k)), entries.remove(&key(k)).is_some());
                }
            }
            Op::Remove { entity } => {
                let Some(id) = pick(&model.issued, entity) else { continue };
                assert_eq!(store.remove(id), model.entities.remove(&id).is_some());
            }
            Op::Probe(bits) => {
                let id = Id::from_bits(bits);
                probe_handle(&store, id);
                assert_eq!(store.contains(id), model.entities.contains_key(&id), "{id}");
            }
            Op::NameKey(k) => {
                let name = format!("fuzz.k{}", usize::from(k) % KEYS);
                let named = store.insert_key_name(&name).expect("the fuzz keys do not collide");
                assert_eq!(named, key(k));
                model.names.insert(named, name);
            }
            Op::Compact => {
                store.compact();
                assert_eq!(store.stats().garbage_bytes, 0);
                // Compaction drops the names of keys no entity holds (so that a save after it
                // holds no removed name): a name recorded for a key never set goes too.
                let held = |key: &Key| model.entities.values().any(|e| e.contains_key(key));
                model.names.retain(|key, _| held(key));
            }
            Op::Clear => {
                store.clear();
                model.entities.clear();
            }
            Op::Clone => store = store.clone(),
            Op::SaveLoad => {
                let bytes = store.to_bytes();
                let loaded = Store::from_bytes(&bytes).expect("a store's own save loads");
                assert!(loaded == store);
                store = loaded;
                check_store(&store);
            }
            Op::View => {
                let bytes = store.to_bytes();
                let words = aligned(&bytes);
                let view = StoreView::new(&words.as_bytes()[..bytes.len()]).expect("it views");
                assert_view_matches(&view, &store);
            }
            Op::Checkpoint => checkpoint = Some(store.clone()),
            Op::DeltaFromCheckpoint => {
                let Some(base) = &checkpoint else { continue };
                let delta = StorePatch::diff(base, &store).to_bytes();
                let mut applied = Store::from_bytes(&base.to_bytes()).expect("a base loads");
                let delta = StorePatch::from_bytes(&delta).expect("a delta's own bytes load");
                delta.apply(&mut applied).expect("a delta applies to its own base");
                assert!(applied == store, "the delta did not give the target");
                store = applied;
            }

            Op::MapInsert(item) => {
                let id = map.insert(item);
                assert!(map_model.items.insert(id, item).is_none(), "{id} was issued twice");
                map_model.issued.push(id);
            }
            Op::MapInsertBatch(items) => {
                let ids = map.insert_batch(items.iter().copied());
                assert_eq!(ids.len(), items.len());
                for (id, item) in ids.into_iter().zip(items) {
                    assert!(map_model.items.insert(id, item).is_none(), "{id} was issued twice");
                    map_model.issued.push(id);
                }
            }
            Op::MapSet { entity, value } => {
                let Some(id) = pick(&map_model.issued, entity) else { continue };
                match (map.get_mut(id), map_model.items.get_mut(&id)) {
                    (Some(item), Some(expected)) => (*item, *expected) = (value, value),
                    (None, None) => assert!(map.try_get_mut(id).is_err()),
                    _ => panic!("{id}: the map and the model disagree on whether it is live"),
                }
            }
            Op::MapRemove { entity } => {
                let Some(id) = pick(&map_model.issued, entity) else { continue };
                assert_eq!(map.remove(id), map_model.items.remove(&id));
            }
            Op::MapRemoveBatch(entities) => {
                let ids: Vec<Id> =
                    entities.iter().filter_map(|&e| pick(&map_model.issued, e)).collect();
                let expected = ids.iter().filter(|id| map_model.items.remove(id).is_some()).count();
                assert_eq!(map.remove_batch(&ids), expected);
            }
            Op::MapProbe(bits) => {
                let id = Id::from_bits(bits);
                assert_eq!(map.get(id), map_model.items.get(&id), "{id}");
                assert_eq!(map.try_get(id).ok(), map_model.items.get(&id));
            }
            Op::MapDisjoint { a, b } => {
                let (Some(a), Some(b)) = (pick(&map_model.issued, a), pick(&map_model.issued, b))
                else {
                    continue;
                };
                let both_live =
                    map_model.items.contains_key(&a) && map_model.items.contains_key(&b);
                match map.get_disjoint_mut([a, b]) {
                    Some([x, y]) => {
                        assert!(both_live && a != b);
                        std::mem::swap(x, y);
                        let (va, vb) = (map_model.items[&a], map_model.items[&b]);
                        map_model.items.insert(a, vb);
                        map_model.items.insert(b, va);
                    }
                    None => assert!(!both_live || a == b),
                }
            }
            Op::MapRetain { modulus } => {
                let modulus = u32::from(modulus.max(1));
                map.retain(|_, item| *item % modulus != 0);
                map_model.items.retain(|_, item| *item % modulus != 0);
            }
            Op::MapSort => map.sort_by(|a, b| a.cmp(b)),
            Op::MapDefragment { max_swaps } => {
                let swaps = map.defragment_by(|a, b| a.cmp(b), max_swaps.map(usize::from));
                if let Some(max) = max_swaps {
                    assert!(swaps <= usize::from(max));
                }
                if max_swaps.is_none() {
                    // That pass finished what an earlier, bounded one left; the next starts
                    // over, and sorts.
                    map.defragment_by(|a, b| a.cmp(b), None);
                    assert!(map.as_slice().is_sorted(), "an unbounded pass from the start sorts");
                }
            }
            Op::MapClear => {
                map.clear();
                map_model.items.clear();
            }
            Op::MapReset => {
                map.reset();
                map_model.items.clear();
            }
            Op::MapDrain => {
                let mut drained: Vec<(Id, u32)> = map.drain().collect();
                let mut expected: Vec<(Id, u32)> = map_model.items.drain().collect();
                drained.sort_unstable_by_key(|&(id, _)| id.to_bits());
                expected.sort_unstable_by_key(|&(id, _)| id.to_bits());
                assert_eq!(drained, expected);
            }
            Op::MapRawRoundTrip => {
                let copy =
                    HandleMap::<u32>::from_raw(&map.as_raw()).expect("a map's own raw loads");
                assert!(copy == map);
                map = copy;
            }
            Op::MapSerdeRoundTrip => {
                let json = serde_json::to_string(&map).expect("a map serializes");
                let copy: HandleMap<u32> = serde_json::from_str(&json).expect("and reads back");
                assert!(copy == map);
                map = copy;
            }
        }
        assert_store(&store, &model);
        assert_map(&map, &map_model);
    }
    check_store(&store);
});
