//! `store::rows`: a store as its frame and one row per entity, and a delta followed entity by
//! entity. Model test: random edits, inserts, removals and prototype links; each state rebuilt from its frame and
//! rows equals it, and each delta applied with `apply_to_equal` to an equal store laid out
//! otherwise gives the target. Sweeps: every truncation and a corrupted byte of a row are
//! refused naming the entity, never a panic.

use datacomp::format::{LoadError, StoreError};
use datacomp::store::rows::{self, EntityRecord};
use datacomp::{Blob, Id, Store, StorePatch};
use proptest::prelude::*;

/// `Link` is `set_prototype(entity, Some(prototype))`, or `None` when they are the same entity
/// (a link the store refuses, a cycle or a chain too long, changes nothing).
#[derive(Clone, Debug)]
enum Op {
    Set { entity: usize, key: u8, value: f32 },
    Remove { entity: usize },
    Insert { key: u8 },
    RemoveKey { entity: usize, key: u8 },
    Link { entity: usize, prototype: usize },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<usize>(), 0..12_u8, -1000.0_f32..1000.0).prop_map(|(entity, key, value)| Op::Set { entity, key, value }),
        1 => any::<usize>().prop_map(|entity| Op::Remove { entity }),
        2 => (0..12_u8).prop_map(|key| Op::Insert { key }),
        1 => (any::<usize>(), 0..12_u8).prop_map(|(entity, key)| Op::RemoveKey { entity, key }),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(entity, prototype)| Op::Link { entity, prototype }),
    ]
}

fn name(key: u8) -> String {
    format!("stats.k{key}")
}

fn run(store: &mut Store, op: &Op) {
    let ids: Vec<Id> = store.iter().map(|(id, _)| id).collect();
    let pick = |i: usize| (!ids.is_empty()).then(|| ids[i % ids.len()]);
    match *op {
        Op::Set { entity, key, value } => {
            if let Some(id) = pick(entity) {
                store.get_mut(id).unwrap().set(name(key).as_str(), value).unwrap();
            }
        }
        Op::Remove { entity } => {
            if let Some(id) = pick(entity) {
                store.remove(id);
            }
        }
        Op::Insert { key } => {
            store.insert_entries([(name(key).as_str(), 1.0)]).unwrap();
        }
        Op::RemoveKey { entity, key } => {
            if let Some(id) = pick(entity) {
                store.get_mut(id).unwrap().remove(name(key).parse::<datacomp::Key>().unwrap());
            }
        }
        Op::Link { entity, prototype } => {
            if let (Some(id), Some(prototype)) = (pick(entity), pick(prototype)) {
                let before = store.clone();
                let to = (id != prototype).then_some(prototype);
                if store.set_prototype(id, to).is_err() {
                    assert_eq!(*store, before, "a refused link changes nothing");
                }
            }
        }
    }
}

/// The store rebuilt from its frame (through a save, as a table keeps it) and its rows.
fn rebuilt(store: &Store) -> Store {
    let frame = Store::from_bytes(&rows::frame(store).to_bytes()).unwrap();
    let rows: Vec<(Id, Vec<u8>)> =
        store.iter().map(|(id, b)| (id, b.as_bytes().to_vec())).collect();
    rows::from_frame(&frame, rows.iter().map(|(id, b)| (*id, b.as_slice()))).unwrap()
}

proptest! {
    #[test]
    fn frames_rows_and_deltas_follow_the_store(steps in prop::collection::vec(prop::collection::vec(op(), 1..6), 1..12)) {
        let mut store = Store::new();
        store.insert_entries([("stats.k0", 0.0)]).unwrap();
        // A replica kept as a table would keep it: rebuilt from rows, then deltas applied.
        let mut replica = rebuilt(&store);
        for step in &steps {
            let before = store.clone();
            for op in step {
                run(&mut store, op);
            }
            let delta = StorePatch::diff(&before, &store);
            // Inserted records are the target's blobs; changed ones patch the base's.
            for (id, record) in delta.records() {
                match record {
                    EntityRecord::Inserted(bytes) => {
                        prop_assert!(!before.contains(id));
                        prop_assert_eq!(Blob::from_bytes(bytes).unwrap(), store.get(id).unwrap().to_blob());
                    }
                    EntityRecord::Changed(bytes) => {
                        let mut blob = before.get(id).unwrap().to_blob();
                        datacomp::blob::Patch::from_bytes(bytes).unwrap().try_apply(&mut blob).unwrap();
                        prop_assert_eq!(blob, store.get(id).unwrap().to_blob());
                    }
                    _ => prop_assert!(false, "a record of an unknown kind"),
                }
            }
            // Entries only: the frame (handles, free slots, names) stays as it was; and a
            // step of value edits to keys already named is entries only.
            let frames_equal = rows::frame(&before).to_bytes() == rows::frame(&store).to_bytes();
            prop_assert!(!delta.is_entries_only() || frames_equal);
            let edits_only = step.iter().all(|op| matches!(op, Op::Set { .. }))
                && before.key_names().count() == store.key_names().count()
                && !before.is_empty();
            prop_assert!(!edits_only || delta.is_entries_only());
            delta.apply_to_equal(&mut replica).unwrap();
            prop_assert_eq!(&replica, &store);
            prop_assert_eq!(&rebuilt(&store), &store);
        }
    }
}

#[test]
fn damaged_rows_are_refused_naming_the_entity() {
    let mut store = Store::new();
    let ids: Vec<Id> = (0..3)
        .map(|i| {
            store.insert_entries([("name", format!("sheet {i}").as_str()), ("title", "x")]).unwrap()
        })
        .collect();
    let frame = rows::frame(&store);
    let good: Vec<Vec<u8>> =
        ids.iter().map(|&id| store.get(id).unwrap().as_bytes().to_vec()).collect();
    let with = |victim: usize, bytes: &[u8]| {
        let rows = ids
            .iter()
            .enumerate()
            .map(|(i, &id)| (id, if i == victim { bytes } else { good[i].as_slice() }));
        rows::from_frame(&frame, rows.collect::<Vec<_>>())
    };
    assert_eq!(with(9, &[]).unwrap(), store);
    for len in 0..good[1].len() {
        let err = with(1, &good[1][..len]).unwrap_err();
        assert!(
            matches!(err, LoadError::Store(StoreError::Blob { id, .. }) if id == ids[1]),
            "{len}: {err}"
        );
    }
    for at in 0..good[1].len() {
        let mut bad = good[1].clone();
        bad[at] ^= 0xff;
        // A flipped byte is refused or reads as another valid blob: never a panic.
        if let Err(err) = with(1, &bad) {
            assert!(
                matches!(err, LoadError::Store(StoreError::Blob { id, .. }) if id == ids[1]),
                "{at}: {err}"
            );
        }
    }
    let two = [(ids[0], good[0].as_slice()), (ids[0], good[0].as_slice())];
    let err = rows::from_frame(&frame, two).unwrap_err();
    assert_eq!(err.to_string(), format!("entity {}: two rows hold it", ids[0]));
    let err = rows::from_frame(&frame, [(ids[0], good[0].as_slice())]).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("entity {}: the world's frame holds it, but no row does", ids[1])
    );
    let stranger = Id::from_bits(ids[2].to_bits() + (1 << 40));
    let err = rows::from_frame(&frame, [(stranger, good[0].as_slice())]).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("entity {stranger}: a row holds it, but the world's frame does not")
    );
}
