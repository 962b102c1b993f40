//! `HandleMap` and `Id`: a model test against a `HashMap`, the safety promises griffin's
//! handle_map breaks, exact errors, and corruption sweeps of the raw and serde forms.

use std::collections::HashMap;

use datacomp::handle_map::HandleMapError;
use datacomp::handle_map::RawHandleMap;
use datacomp::{HandleError, HandleMap, Id};
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------------
// Model test

#[derive(Clone, Debug)]
enum Op {
    Insert(u64),
    InsertBatch(Vec<u64>),
    /// Removes the handle at this position of every handle ever issued (live or dead).
    Remove(prop::sample::Index),
    RemoveBatch(Vec<prop::sample::Index>),
    Swap(prop::sample::Index, prop::sample::Index),
    RetainEven,
    Clear,
    Reset,
    Drain,
    Defragment(Option<usize>),
    Sort,
    RawRoundTrip,
    SerdeRoundTrip,
    Clone,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        10 => any::<u64>().prop_map(Op::Insert),
        2 => prop::collection::vec(any::<u64>(), 0..20).prop_map(Op::InsertBatch),
        8 => any::<prop::sample::Index>().prop_map(Op::Remove),
        2 => prop::collection::vec(any::<prop::sample::Index>(), 0..8).prop_map(Op::RemoveBatch),
        2 => (any::<prop::sample::Index>(), any::<prop::sample::Index>()).prop_map(|(a, b)| Op::Swap(a, b)),
        1 => Just(Op::RetainEven),
        1 => Just(Op::Clear),
        1 => Just(Op::Reset),
        1 => Just(Op::Drain),
        2 => prop::option::of(0..8usize).prop_map(Op::Defragment),
        1 => Just(Op::Sort),
        2 => Just(Op::RawRoundTrip),
        1 => Just(Op::SerdeRoundTrip),
        1 => Just(Op::Clone),
    ]
}

/// Live handles and their values, and every handle that has died.
#[derive(Default)]
struct Model {
    live: HashMap<Id, u64>,
    issued: Vec<Id>,
    dead: Vec<Id>,
}

impl Model {
    fn insert(&mut self, id: Id, value: u64) {
        assert!(!self.issued.contains(&id), "{id} was issued before");
        self.live.insert(id, value);
        self.issued.push(id);
    }

    fn remove(&mut self, id: Id) -> Option<u64> {
        let value = self.live.remove(&id)?;
        self.dead.push(id);
        Some(value)
    }

    fn kill_all(&mut self) {
        self.dead.extend(self.live.drain().map(|(id, _)| id));
    }
}

fn pick(model: &Model, index: &prop::sample::Index) -> Id {
    if model.issued.is_empty() { Id::NULL } else { model.issued[index.index(model.issued.len())] }
}

fn assert_matches(map: &HandleMap<u64>, model: &Model) {
    assert_eq!(map.len(), model.live.len());
    assert_eq!(map.is_empty(), model.live.is_empty());
    for (&id, &value) in &model.live {
        assert_eq!(map.get(id), Some(&value), "live {id}");
        let dense = map.dense_index(id).expect("live handles have a dense index");
        assert_eq!(map.id_at(dense), Some(id));
        assert_eq!(map.as_slice()[dense], value);
    }
    for &id in &model.dead {
        assert_eq!(map.get(id), None, "dead {id} must never resolve");
        assert!(matches!(map.try_get(id), Err(HandleError::Stale { .. })), "dead {id}");
    }
    let iterated: HashMap<Id, u64> = map.iter().map(|(id, &v)| (id, v)).collect();
    assert_eq!(iterated, model.live, "iter yields exactly the live items");
    assert_eq!(map.ids().collect::<Vec<_>>(), map.iter().map(|(id, _)| id).collect::<Vec<_>>());
    assert_eq!(map.values().copied().collect::<Vec<_>>(), map.as_slice());
}

proptest! {
    #[test]
    fn handle_map_matches_a_hashmap_model(ops in prop::collection::vec(op(), 1..80)) {
        let mut map: HandleMap<u64> = HandleMap::new(5);
        let mut model = Model::default();
        for op in ops {
            match op {
                Op::Insert(v) => {
                    let id = map.insert(v);
                    prop_assert_eq!(id.type_id(), 5);
                    model.insert(id, v);
                }
                Op::InsertBatch(values) => {
                    let ids = map.insert_batch(values.clone());
                    prop_assert_eq!(ids.len(), values.len());
                    for (id, v) in ids.into_iter().zip(values) {
                        model.insert(id, v);
                    }
                }
                Op::Remove(i) => {
                    let id = pick(&model, &i);
                    prop_assert_eq!(map.remove(id), model.remove(id));
                }
                Op::RemoveBatch(picks) => {
                    let ids: Vec<Id> = picks.iter().map(|i| pick(&model, i)).collect();
                    let removed = ids.iter().filter(|&&id| model.remove(id).is_some()).count();
                    prop_assert_eq!(map.remove_batch(&ids), removed);
                }
                Op::Swap(a, b) => {
                    let (a, b) = (pick(&model, &a), pick(&model, &b));
                    let both_live = a != b && model.live.contains_key(&a) && model.live.contains_key(&b);
                    match map.get_disjoint_mut([a, b]) {
                        Some([x, y]) => {
                            prop_assert!(both_live);
                            std::mem::swap(x, y);
                            let (va, vb) = (model.live[&a], model.live[&b]);
                            model.live.insert(a, vb);
                            model.live.insert(b, va);
                        }
                        None => prop_assert!(!both_live),
                    }
                }
                Op::RetainEven => {
                    map.retain(|_, v| *v % 2 == 0);
                    let odd: Vec<Id> = model.live.iter().filter(|(_, v)| *v % 2 == 1).map(|(&id, _)| id).collect();
                    for id in odd {
                        model.remove(id);
                    }
                }
                Op::Clear => {
                    map.clear();
                    model.kill_all();
                }
                Op::Reset => {
                    map.reset();
                    model.kill_all();
                }
                Op::Drain => {
                    let drained: HashMap<Id, u64> = map.drain().collect();
                    prop_assert_eq!(&drained, &model.live);
                    model.kill_all();
                }
                Op::Defragment(budget) => {
                    let swaps = map.defragment_by(|a, b| a.cmp(b), budget);
                    if let Some(budget) = budget {
                        prop_assert!(swaps <= budget);
                    }
                }
                Op::Sort => {
                    map.sort_by(|a, b| a.cmp(b));
                    prop_assert!(map.as_slice().is_sorted());
                }
                Op::RawRoundTrip => {
                    let copy = HandleMap::<u64>::from_raw(&map.as_raw()).expect("own sections load");
                    map = copy;
                }
                Op::SerdeRoundTrip => {
                    let json = serde_json::to_string(&map).unwrap();
                    map = serde_json::from_str(&json).expect("own serde form loads");
                }
                Op::Clone => map = map.clone(),
            }
            assert_matches(&map, &model);
        }
    }

    #[test]
    fn forged_handles_resolve_only_when_they_equal_a_live_one(
        bits in prop::collection::vec(any::<u64>(), 1..64),
        count in 1..40usize,
    ) {
        let mut map = HandleMap::new(3);
        let ids = map.insert_batch(0..count as u64);
        for id in ids.iter().step_by(3) {
            map.remove(*id);
        }
        for &b in &bits {
            let forged = Id::from_bits(b);
            prop_assert_eq!(map.get(forged).is_some(), map.ids().any(|id| id == forged));
        }
    }

    /// Near misses of every handle ever issued (each single bit flipped, the next
    /// generations with and without the free bit, the index one off) on maps that were reset 0 to 2 times: `slot_index` has one branch
    /// for a map whose handles start at index 0 and one for a map whose `base` a reset
    /// raised. Every lookup agrees with the list of live handles, and `remove` removes
    /// exactly the live ones.
    #[test]
    fn near_miss_handles_resolve_only_when_live_with_and_without_a_base(
        resets in 0..3usize,
        count in 1..40usize,
        removals in prop::collection::vec(any::<prop::sample::Index>(), 0..20),
        reinserts in 0..20usize,
    ) {
        let mut map = HandleMap::new(3);
        let mut issued = Vec::new();
        for _ in 0..resets {
            issued.extend(map.insert_batch(0..count as u64));
            map.reset();
        }
        issued.extend(map.insert_batch(0..count as u64));
        for i in &removals {
            map.remove(issued[i.index(issued.len())]);
        }
        issued.extend(map.insert_batch(100..100 + reinserts as u64));
        let live: Vec<Id> = map.ids().collect();
        let mut probes = vec![Id::NULL];
        for id in &issued {
            let bits = id.to_bits();
            probes.extend((0..64).map(|b| Id::from_bits(bits ^ 1 << b)));
            // The slot's next generations, with and without the free bit (a freed slot
            // holds its next generation and the free bit).
            for next in [1_u64 << 32, 2 << 32] {
                let next = bits.wrapping_add(next);
                probes.extend([next, next | 1 << 63].map(Id::from_bits));
            }
            probes.push(Id::from_bits(bits.wrapping_add(1)));
            probes.push(Id::from_bits(bits.wrapping_sub(1)));
            probes.push(*id);
        }
        for &probe in &probes {
            let is_live = live.contains(&probe);
            prop_assert_eq!(map.get(probe).is_some(), is_live, "get {}", probe);
            prop_assert_eq!(map.contains(probe), is_live, "contains {}", probe);
            prop_assert_eq!(map.try_get(probe).is_ok(), is_live, "try_get {}", probe);
            if let Some(&value) = map.get(probe) {
                prop_assert_eq!(map.as_slice()[map.dense_index(probe).unwrap()], value);
            }
        }
        let mut copy = map.clone();
        let removed = probes.iter().filter(|&&p| copy.remove(p).is_some()).count();
        prop_assert_eq!(removed, live.len(), "each live handle removed once, no other");
        prop_assert!(copy.is_empty());
    }

    #[test]
    fn id_display_parses_back(bits in any::<u64>()) {
        let id = Id::from_bits(bits);
        prop_assert_eq!(id.to_string().parse::<Id>(), Ok(id));
    }
}

// ---------------------------------------------------------------------------------------------
// The promises griffin's handle_map breaks

#[test]
fn one_slot_reused_200000_times_never_aliases() {
    let mut map = HandleMap::new(0);
    let mut old = Vec::with_capacity(200_000);
    for i in 0..200_000_u64 {
        let id = map.insert(i);
        assert_eq!(map.remove(id), Some(i));
        old.push(id);
    }
    let current = map.insert(u64::MAX);
    assert!(old.iter().all(|&id| map.get(id).is_none()), "no earlier handle resolves");
    // 65,535 generations per slot (0..=65534), then the slot is retired for good.
    assert_eq!(old[0].index(), 0);
    assert_eq!(old[65_534], Id::from_bits(u64::from(65_534_u16) << 32));
    assert_eq!(old[65_535].index(), 1, "slot 0 retired after generation 65534");
    assert_eq!(current.index(), (200_000 / 65_535) as u32);
    let unique: std::collections::HashSet<Id> = old.iter().copied().collect();
    assert_eq!(unique.len(), old.len(), "every handle issued is different");
    // Retired slots survive a save and load.
    let copy = HandleMap::<u64>::from_raw(&map.as_raw()).unwrap();
    assert_eq!(copy[current], u64::MAX);
    assert!(old.iter().all(|&id| copy.get(id).is_none()));
}

#[test]
fn clear_bumps_generations_and_reset_moves_indices() {
    let mut map = HandleMap::new(0);
    let a = map.insert('a');
    let b = map.insert('b');
    map.clear();
    let c = map.insert('c');
    assert_eq!((c.index(), c.generation()), (0, 1), "clear reuses slot 0 at the next generation");
    assert_eq!(map.try_get(a), Err(HandleError::Stale { id: a, current: Some(1) }));
    assert_eq!(map.get(b), None);

    map.reset();
    let d = map.insert('d');
    assert_eq!((d.index(), d.generation()), (2, 0), "reset starts past every old slot");
    for old in [a, b, c] {
        assert_eq!(map.try_get(old), Err(HandleError::Stale { id: old, current: None }));
    }
    assert_eq!(map[d], 'd');
}

#[test]
fn freed_slots_are_reused_first_in_first_out() {
    let mut map = HandleMap::new(0);
    let ids = map.insert_batch(0..4_u64);
    map.remove(ids[2]);
    map.remove(ids[0]);
    assert_eq!(map.insert(10).index(), 2, "the slot freed first is reused first");
    assert_eq!(map.insert(11).index(), 0);
    assert_eq!(map.insert(12).index(), 4, "then new slots");
}

#[test]
fn removing_the_last_item_and_removing_everything() {
    let mut map = HandleMap::new(0);
    let ids = map.insert_batch([1_u64, 2, 3]);
    assert_eq!(map.remove(ids[2]), Some(3), "the last item: nothing moves");
    assert_eq!(map.as_slice(), [1, 2]);
    assert_eq!(map.remove(ids[0]), Some(1), "the first: the last moves into its place");
    assert_eq!(map.as_slice(), [2]);
    assert_eq!(map.dense_index(ids[1]), Some(0));
    assert_eq!(map.remove(ids[1]), Some(2));
    assert!(map.is_empty());
    assert!(ids.iter().all(|&id| !map.contains(id)));
    assert_eq!(map.iter().count(), 0);
}

#[test]
fn defragment_on_empty_and_one_item_maps() {
    let mut map: HandleMap<u64> = HandleMap::new(0);
    assert_eq!(map.defragment_by(|a, b| a.cmp(b), None), 0);
    assert_eq!(map.defragment_by(|a, b| a.cmp(b), Some(0)), 0);
    let id = map.insert(7);
    assert_eq!(map.defragment_by(|a, b| a.cmp(b), None), 0);
    map.sort_by(|a, b| a.cmp(b));
    assert_eq!(map[id], 7);
}

#[test]
fn defragment_resumes_where_it_stopped() {
    let mut map = HandleMap::new(0);
    let values = [9_u64, 3, 7, 1, 8, 2, 6, 4, 5, 0];
    let ids = map.insert_batch(values);
    let mut total = 0;
    let mut calls = 0;
    loop {
        let swaps = map.defragment_by(|a, b| a.cmp(b), Some(3));
        assert!(swaps <= 3);
        total += swaps;
        calls += 1;
        if swaps == 0 {
            break;
        }
    }
    assert_eq!(map.as_slice(), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // Insertion sort makes exactly one swap per inversion, however it is cut up.
    let inversions = (0..values.len())
        .flat_map(|i| (i + 1..values.len()).map(move |j| (i, j)))
        .filter(|&(i, j)| values[i] > values[j])
        .count();
    assert_eq!(total, inversions);
    assert!(calls > inversions / 3);
    for (id, value) in ids.iter().zip(values) {
        assert_eq!(map[*id], value, "handles follow their items");
    }
}

// ---------------------------------------------------------------------------------------------
// Errors

#[test]
fn each_bad_handle_gets_its_own_error() {
    let mut map = HandleMap::new(2);
    let live = map.insert(1_u64);
    let removed = map.insert(2_u64);
    map.remove(removed);
    let other = HandleMap::<u64>::new(3).insert(0);
    let free_bit = Id::from_bits(live.to_bits() | 1 << 63);
    // The current generation of a free slot: a handle the map never issued.
    let never_issued = Id::from_bits(removed.to_bits() + (1 << 32));
    let past_end = Id::from_bits(live.to_bits() + 10);

    assert_eq!(map.try_get(live), Ok(&1));
    assert_eq!(map.try_get(Id::NULL), Err(HandleError::Null));
    assert_eq!(map.try_get(free_bit), Err(HandleError::Free { id: free_bit }));
    assert_eq!(map.try_get(other), Err(HandleError::WrongType { id: other, expected: 2 }));
    assert_eq!(map.try_get(past_end), Err(HandleError::OutOfRange { id: past_end, slots: 2 }));
    assert_eq!(map.try_get(removed), Err(HandleError::Stale { id: removed, current: Some(1) }));
    assert_eq!(map.try_get(never_issued), Err(HandleError::Free { id: never_issued }));
    assert_eq!(
        HandleError::OutOfRange { id: past_end, slots: 2 }.to_string(),
        "handle 10v0t2 is out of range: the map has slot indices below 2"
    );
    assert_eq!(
        HandleError::WrongType { id: other, expected: 2 }.to_string(),
        "handle 0v0t3 has type id 3, but this map's type id is 2"
    );
}

#[test]
#[should_panic(expected = "HandleMap[1v0]: handle 1v0 is stale: its slot is at generation 1 now")]
fn index_panics_with_the_reason() {
    let mut map = HandleMap::new(0);
    map.insert(0_u64);
    let id = map.insert(1_u64);
    map.remove(id);
    let _ = map[id];
}

#[test]
#[should_panic(expected = "type ids have 15 bits")]
fn type_ids_past_15_bits_panic() {
    let _ = HandleMap::<u64>::new(0x8000);
}

#[test]
fn id_forms() {
    let id = HandleMap::new(7).insert(());
    assert_eq!(format!("{id}"), "0v0t7");
    assert_eq!(format!("{id:?}"), "Id(0v0t7)");
    assert_eq!(Id::NULL.to_string(), "null");
    assert_eq!("null".parse::<Id>(), Ok(Id::NULL));
    assert_eq!(
        "12v3".parse::<Id>().map(|id| (id.index(), id.generation(), id.type_id())),
        Ok((12, 3, 0))
    );
    for bad in
        ["", "v", "12", "12v", "v3", "12v3t", "12v3t32768", "-1v0", "12v65536", "12 v3", "12v3x"]
    {
        let err = bad.parse::<Id>().unwrap_err();
        assert!(err.to_string().contains("is not an id"), "{bad:?}: {err}");
    }
    let debug = format!("{:?}", {
        let mut map = HandleMap::new(0);
        map.insert("orc");
        map
    });
    assert_eq!(debug, r#"{0v0: "orc"}"#);
}

// ---------------------------------------------------------------------------------------------
// Raw sections and serde: untrusted input

/// A map with live, free and retired-looking history: the input for the sweeps.
fn churned() -> HandleMap<u64> {
    let mut map = HandleMap::new(9);
    let ids = map.insert_batch(0..12_u64);
    for id in [ids[3], ids[7], ids[0], ids[11]] {
        map.remove(id);
    }
    map.insert(100);
    map
}

/// What any input must give: an error, or a map whose every handle reads its item.
fn check_loaded(map: &HandleMap<u64>) {
    let ids: Vec<Id> = map.ids().collect();
    assert_eq!(ids.len(), map.len());
    for (d, &id) in ids.iter().enumerate() {
        assert_eq!(map.dense_index(id), Some(d));
        assert_eq!(map.get(id), Some(&map.as_slice()[d]));
    }
    let mut map = map.clone();
    let id = map.insert(7);
    assert_eq!(map[id], 7);
    let raw = map.as_raw();
    HandleMap::<u64>::from_raw(&raw).expect("a loaded map saves and loads again");
}

#[test]
fn raw_sections_reject_each_inconsistency() {
    let map = churned();
    let raw = map.as_raw();
    let mut slots: Vec<u64> =
        raw.slots.chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
    let bytes = |slots: &[u64]| slots.iter().flat_map(|s| s.to_le_bytes()).collect::<Vec<u8>>();
    let load = |slots: &[u8]| HandleMap::<u64>::from_raw(&RawHandleMap { slots, ..raw });

    // Slot 1 is live at dense index 1; point it at dense 2 instead.
    let original = slots.clone();
    slots[1] = (slots[1] & !0xffff_ffff) | 2;
    assert_eq!(
        load(&bytes(&slots)),
        Err(HandleMapError::SlotLink { slot: 1, dense: 2, back: Some(2) })
    );

    // The free list is 7 -> 0 -> 11 (FIFO after removing 3, 7, 0, 11 and reusing 3).
    slots.clone_from(&original);
    let free_link = |s: u64| s & 0xffff_ffff;
    assert_eq!(free_link(slots[7]), 0);
    slots[0] = (slots[0] & !0xffff_ffff) | 7; // 0 links back to 7: a cycle
    assert_eq!(
        load(&bytes(&slots)),
        Err(HandleMapError::FreeListEnd { free: 3, tail: 11, last: 7, next: 0 })
    );

    slots.clone_from(&original);
    slots[7] = (slots[7] & !0xffff_ffff) | 1; // 7 links to live slot 1
    assert_eq!(load(&bytes(&slots)), Err(HandleMapError::FreeList { step: 1, slot: 1, free: 3 }));

    slots.clone_from(&original);
    slots[4] ^= 1 << 50; // type id 9 becomes 13
    assert_eq!(
        load(&bytes(&slots)),
        Err(HandleMapError::SlotType { slot: 4, found: 13, type_id: 9 })
    );

    let short = RawHandleMap { meta: &raw.meta[..raw.meta.len() - 4], ..raw };
    assert_eq!(
        HandleMap::<u64>::from_raw(&short),
        Err(HandleMapError::SectionSize { section: "meta", expected: 36, found: 32 })
    );
    let as_u32 = HandleMap::<u32>::from_raw(&raw).unwrap_err();
    assert_eq!(as_u32, HandleMapError::ItemSize { expected: 4, found: 8 });
}

#[test]
fn every_truncation_and_bit_flip_of_the_raw_sections_is_an_error_or_a_valid_map() {
    let map = churned();
    let raw = map.as_raw();
    let header = zerocopy::IntoBytes::as_bytes(&raw.header).to_vec();
    let sections: [&[u8]; 4] = [&header, raw.items, raw.meta, raw.slots];
    for (which, section) in sections.iter().enumerate() {
        for len in 0..section.len() {
            let cut = &section[..len];
            let candidate = match which {
                0 => continue, // the header is fixed-size: the store reads it whole
                1 => RawHandleMap { items: cut, ..raw },
                2 => RawHandleMap { meta: cut, ..raw },
                _ => RawHandleMap { slots: cut, ..raw },
            };
            assert!(
                HandleMap::<u64>::from_raw(&candidate).is_err(),
                "section {which} cut to {len}"
            );
        }
        for at in 0..section.len() * 8 {
            let mut flipped = section.to_vec();
            flipped[at / 8] ^= 1 << (at % 8);
            let header_copy;
            let candidate = match which {
                0 => {
                    header_copy = zerocopy::FromBytes::read_from_bytes(&flipped[..]).unwrap();
                    RawHandleMap { header: header_copy, ..raw }
                }
                1 => RawHandleMap { items: &flipped, ..raw },
                2 => RawHandleMap { meta: &flipped, ..raw },
                _ => RawHandleMap { slots: &flipped, ..raw },
            };
            if let Ok(loaded) = HandleMap::<u64>::from_raw(&candidate) {
                check_loaded(&loaded);
            }
        }
    }
}

#[test]
fn zero_sized_items_round_trip() {
    let mut map = HandleMap::new(0);
    let ids = map.insert_batch([(), (), ()]);
    map.remove(ids[1]);
    let raw = map.as_raw();
    assert!(raw.items.is_empty());
    let copy = HandleMap::<()>::from_raw(&raw).unwrap();
    assert_eq!(copy, map);
    assert!(copy.contains(ids[0]) && !copy.contains(ids[1]) && copy.contains(ids[2]));
}

#[test]
fn serde_rejects_an_inconsistent_map() {
    let map = churned();
    let json = serde_json::to_string(&map).unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&json).unwrap();
    value["meta"][0] = serde_json::json!(5);
    let err = serde_json::from_value::<HandleMap<u64>>(value).unwrap_err();
    assert!(err.to_string().starts_with("handle map: live slot"), "{err}");
    let back: HandleMap<u64> = serde_json::from_str(&json).unwrap();
    assert_eq!(back.as_slice(), map.as_slice());
    let id: Id =
        serde_json::from_str(&serde_json::to_string(&map.id_at(0).unwrap()).unwrap()).unwrap();
    assert_eq!(back.get(id), map.get(id));
}

// ---------------------------------------------------------------------------------------------
// Break it

/// The lookups at their largest: a million items; ten million random handles and three near
/// misses of every handle (a flipped free bit, the next generation, the next index) against
/// the set of live ones, for both branches of the slot lookup (a fresh map, and one reset
/// first); then every handle removed twice, in shuffled order. Run in release:
/// `cargo test --release --test handle_map -- --ignored break_it`.
#[test]
#[ignore = "a million items and ten million forged handles: seconds in release, minutes in debug"]
fn break_it_a_million_items_and_ten_million_forged_handles() {
    use std::collections::HashSet;
    let n = 1_000_000_u64;
    for resets in [0, 1] {
        let mut map = HandleMap::new(7);
        for _ in 0..resets {
            map.insert_batch(0..n);
            map.reset();
        }
        let ids = map.insert_batch(0..n);
        let live: HashSet<Id> = ids.iter().copied().collect();
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut resolved = 0;
        for _ in 0..10_000_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let forged = Id::from_bits(state);
            let got = map.get(forged);
            assert_eq!(got.is_some(), live.contains(&forged), "{forged}");
            resolved += usize::from(got.is_some());
        }
        assert_eq!(resolved, 0, "random bits name none of a million live handles");
        for &id in &ids {
            let bits = id.to_bits();
            for miss in [bits | 1 << 63, bits + (1 << 32), bits + 1] {
                let miss = Id::from_bits(miss);
                assert_eq!(map.get(miss).is_some(), live.contains(&miss), "{miss}");
            }
            assert_eq!(map.get(id), Some(&(u64::from(id.index()) - u64::from(ids[0].index()))));
        }
        let mut order = ids.clone();
        for i in (1..order.len()).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            order.swap(i, (state % (i as u64 + 1)) as usize);
        }
        let removed = order.iter().filter(|&&id| map.remove(id).is_some()).count();
        assert_eq!(removed, ids.len());
        assert!(order.iter().all(|&id| map.remove(id).is_none()), "a second remove finds nothing");
        assert!(map.is_empty());
    }
}
