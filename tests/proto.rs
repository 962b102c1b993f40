//! Prototypes: resolved reads through chains, overrides, clears, tombstones, detach and links,
//! against a `HashMap` model; the links through saves, deltas and every reader; crafted links
//! refused with their exact errors.

use std::collections::HashMap;

use datacomp::blob::Side;
use datacomp::format::StoreError;
use datacomp::query::KeyCursor;
use datacomp::store::{LinkConflict, MAX_CHAIN, merge3};
use datacomp::{
    Error, HandleError, History, Id, Key, KeyError, LoadError, Store, StorePatch, StoreView, Value,
};
use proptest::prelude::*;

mod common;
use common::{rebuild, table};

const PROTOTYPES: u32 = 16;
/// `$id` and `$abstract` belong to the entity that holds them: they are never inherited.
/// `stats` is a value where `stats.health` and `stats.mana` make an object: one entity holds
/// one or the others, and a nearer one shadows the farther.
const KEYS: [&str; 7] =
    ["name", "stats.health", "stats.mana", "flags.fearless", "$id", "$abstract", "stats"];
/// The positions in [`KEYS`] of `$id` and `$abstract`.
const OWN_ONLY: [usize; 2] = [4, 5];
/// The position of `stats` in [`KEYS`], and of the keys under it.
const STATS: usize = 6;
const UNDER_STATS: [usize; 2] = [1, 2];

/// Whether keys `a` and `b` (positions in [`KEYS`]) cannot be held by one entity: one is a
/// value on the other's path.
fn conflict(a: usize, b: usize) -> bool {
    (a == STATS && UNDER_STATS.contains(&b)) || (b == STATS && UNDER_STATS.contains(&a))
}

/// Whether an entity that stores `own` and misses key `k` shadows its prototypes' `k`: an
/// entry (a tombstone too) on `k`'s path, or a value under it.
fn shadows(own: &HashMap<usize, Own>, k: usize) -> bool {
    let on_the_way = UNDER_STATS.contains(&k) && own.contains_key(&STATS);
    let under = k == STATS && UNDER_STATS.iter().any(|u| matches!(own.get(u), Some(Own::Val(_))));
    on_the_way || under
}

/// What an entity stores: a value, or a tombstone.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Own {
    Val(f32),
    Tomb,
}

/// The model: each entity's own entries (by key position) and prototype.
#[derive(Clone, Debug, Default)]
struct Model {
    entities: HashMap<Id, (HashMap<usize, Own>, Option<Id>)>,
}

impl Model {
    fn prototype(&self, id: Id) -> Option<Id> {
        self.entities[&id].1
    }

    /// The value `id` reads at key `k`: its own, else up the chain (but `$id` and
    /// `$abstract`, its own or none); a tombstone ends it.
    fn resolve(&self, id: Id, k: usize) -> Option<f32> {
        let mut at = Some(id);
        while let Some(e) = at {
            match self.entities[&e].0.get(&k) {
                Some(Own::Val(v)) => return Some(*v),
                Some(Own::Tomb) => return None,
                None if OWN_ONLY.contains(&k) => return None,
                None if shadows(&self.entities[&e].0, k) => return None,
                None => at = self.prototype(e),
            }
        }
        None
    }

    fn depth(&self, id: Id) -> usize {
        std::iter::successors(self.prototype(id), |&p| self.prototype(p)).count()
    }

    /// The longest chain below `id`.
    fn height(&self, id: Id) -> usize {
        self.entities
            .keys()
            .filter_map(|&e| {
                std::iter::successors(self.prototype(e), |&p| self.prototype(p))
                    .position(|p| p == id)
                    .map(|i| i + 1)
            })
            .max()
            .unwrap_or(0)
    }

    fn instances(&self, id: Id) -> usize {
        self.entities.values().filter(|(_, p)| *p == Some(id)).count()
    }
}

#[derive(Clone, Debug)]
enum Op {
    Insert(Vec<(usize, f32)>),
    InsertInstance(usize),
    Set(usize, usize, f32),
    ClearOverride(usize, usize),
    RemoveInherited(usize, usize),
    SetPrototype(usize, Option<usize>),
    Detach(usize),
    Remove(usize),
    SaveLoad,
}

fn op() -> impl Strategy<Value = Op> {
    let key = 0..KEYS.len();
    let value = (0..100).prop_map(|v| v as f32);
    prop_oneof![
        prop::collection::vec((key.clone(), value.clone()), 0..4).prop_map(Op::Insert),
        (0..64_usize).prop_map(Op::InsertInstance),
        (0..64_usize, key.clone(), value).prop_map(|(e, k, v)| Op::Set(e, k, v)),
        (0..64_usize, key.clone()).prop_map(|(e, k)| Op::ClearOverride(e, k)),
        (0..64_usize, key).prop_map(|(e, k)| Op::RemoveInherited(e, k)),
        (0..64_usize, prop::option::of(0..64_usize)).prop_map(|(e, p)| Op::SetPrototype(e, p)),
        (0..64_usize).prop_map(Op::Detach),
        (0..64_usize).prop_map(Op::Remove),
        Just(Op::SaveLoad),
    ]
}

/// The `i`th live entity (in a fixed order), if there is one.
fn pick(ids: &[Id], i: usize) -> Option<Id> {
    (!ids.is_empty()).then(|| ids[i % ids.len()])
}

fn key(k: usize) -> Key {
    Key::parse(KEYS[k])
}

/// Whether entity `e` refuses key `k` as a new key: it holds one on `k`'s path or under it.
fn clashes(model: &Model, e: Id, k: usize) -> bool {
    let own = &model.entities[&e].0;
    !own.contains_key(&k) && own.keys().any(|&held| conflict(held, k))
}

/// Runs `op` on the store and the model alike.
fn step(store: &mut Store, model: &mut Model, op: &Op) {
    let mut ids: Vec<Id> = model.entities.keys().copied().collect();
    ids.sort_unstable();
    match *op {
        Op::Insert(ref entries) => {
            let clash = entries.iter().any(|&(a, _)| entries.iter().any(|&(b, _)| conflict(a, b)));
            let entries: Vec<(&str, f32)> = entries.iter().map(|&(k, v)| (KEYS[k], v)).collect();
            let result = store.insert_entries(entries.iter().copied());
            if clash {
                assert!(matches!(result, Err(Error::Key(KeyError::PathConflict { .. }))));
                return;
            }
            let id = result.unwrap();
            let own = entries
                .iter()
                .map(|&(name, v)| (KEYS.iter().position(|&k| k == name).unwrap(), Own::Val(v)))
                .collect();
            model.entities.insert(id, (own, None));
        }
        Op::InsertInstance(p) => {
            let Some(p) = pick(&ids, p) else { return };
            let result = store.insert_instance(p);
            if model.depth(p) + 1 > MAX_CHAIN {
                assert!(matches!(result, Err(Error::Handle(HandleError::PrototypeChain { .. }))));
            } else {
                model.entities.insert(result.unwrap(), (HashMap::new(), Some(p)));
            }
        }
        Op::Set(e, k, v) => {
            let Some(e) = pick(&ids, e) else { return };
            let result = store.get_mut(e).unwrap().set(KEYS[k], v);
            if clashes(model, e, k) {
                assert!(matches!(result, Err(Error::Key(KeyError::PathConflict { .. }))));
                return;
            }
            result.unwrap();
            model.entities.get_mut(&e).unwrap().0.insert(k, Own::Val(v));
        }
        Op::ClearOverride(e, k) => {
            let Some(e) = pick(&ids, e) else { return };
            let had = model.entities.get_mut(&e).unwrap().0.remove(&k).is_some();
            assert_eq!(store.clear_override(e, KEYS[k]).unwrap(), had);
        }
        Op::RemoveInherited(e, k) => {
            let Some(e) = pick(&ids, e) else { return };
            let has_prototype = model.prototype(e).is_some();
            let result = store.remove_inherited(e, KEYS[k]);
            if has_prototype && clashes(model, e, k) {
                assert!(matches!(result, Err(Error::Key(KeyError::PathConflict { .. }))));
                return;
            }
            result.unwrap();
            let own = &mut model.entities.get_mut(&e).unwrap().0;
            if has_prototype {
                own.insert(k, Own::Tomb);
            } else {
                own.remove(&k);
            }
        }
        Op::SetPrototype(e, p) => {
            let Some(e) = pick(&ids, e) else { return };
            let p = p.and_then(|p| pick(&ids, p));
            let result = store.set_prototype(e, p);
            match p {
                Some(p)
                    if p == e
                        || std::iter::successors(Some(p), |&a| model.prototype(a))
                            .any(|a| a == e) =>
                {
                    let expected = HandleError::PrototypeCycle { id: e, prototype: p };
                    assert!(matches!(result, Err(Error::Handle(ref h)) if *h == expected));
                }
                Some(p) if model.depth(p) + 1 + model.height(e) > MAX_CHAIN => {
                    assert!(matches!(
                        result,
                        Err(Error::Handle(HandleError::PrototypeChain { .. }))
                    ));
                }
                _ => {
                    result.unwrap();
                    model.entities.get_mut(&e).unwrap().1 = p;
                }
            }
        }
        Op::Detach(e) => {
            let Some(e) = pick(&ids, e) else { return };
            let flat: HashMap<usize, Own> = (0..KEYS.len())
                .filter_map(|k| model.resolve(e, k).map(|v| (k, Own::Val(v))))
                .collect();
            store.detach(e).unwrap();
            model.entities.insert(e, (flat, None));
        }
        Op::Remove(e) => {
            let Some(e) = pick(&ids, e) else { return };
            let instances = model.instances(e);
            if instances > 0 {
                assert!(!store.remove(e), "a prototype with instances stays");
                let err = store.try_remove(e).unwrap_err();
                let expected = HandleError::HasInstances { id: e, instances: instances as u64 };
                assert!(matches!(err, Error::Handle(ref h) if *h == expected), "{err}");
            } else {
                assert!(store.remove(e));
                model.entities.remove(&e);
            }
        }
        Op::SaveLoad => {
            let bytes = store.to_bytes();
            let loaded = Store::from_bytes(&bytes).unwrap();
            assert_eq!(loaded, *store);
            *store = loaded;
        }
    }
}

/// The store reads as the model says: own entries, links, resolved values and sources.
fn check(store: &Store, model: &Model) {
    assert_eq!(store.len(), model.entities.len());
    for (&id, (own, prototype)) in &model.entities {
        assert_eq!(store.prototype(id), *prototype, "{id}");
        let blob = store.get(id).unwrap();
        assert_eq!(blob.len(), own.len(), "{id}");
        for (&k, &v) in own {
            let stored = match v {
                Own::Val(v) => Value::Float(v),
                Own::Tomb => Value::Tombstone,
            };
            assert_eq!(blob.get(key(k)), Some(stored), "{id} {}", KEYS[k]);
        }
        let resolved = store.resolved(id).unwrap();
        let chain: Vec<Id> = std::iter::successors(*prototype, |&p| model.prototype(p)).collect();
        assert_eq!(resolved.chain().collect::<Vec<_>>(), chain);
        let mut expected: Vec<(Key, f32)> = Vec::new();
        for (k, name) in KEYS.iter().enumerate() {
            let v = model.resolve(id, k);
            assert_eq!(resolved.get_float(key(k)), v, "{id} {name}");
            assert_eq!(resolved.contains_key(key(k)), v.is_some());
            if let Some(v) = v {
                expected.push((key(k), v));
                // The source: the nearest entity whose blob holds the key.
                let source = std::iter::once(id)
                    .chain(chain.iter().copied())
                    .find(|e| model.entities[e].0.contains_key(&k))
                    .unwrap();
                assert_eq!(resolved.get_with_source(key(k)), Some((Value::Float(v), source)));
            }
            assert_eq!(KeyCursor::new(key(k)).get_resolved(resolved), v, "{id} {name}");
        }
        let mut all: Vec<(Key, f32)> =
            resolved.iter().map(|(k, v, _)| (k, v.as_float().unwrap())).collect();
        all.sort_by_key(|&(k, _)| k);
        expected.sort_by_key(|&(k, _)| k);
        assert_eq!(all, expected, "{id}");
        assert_eq!(resolved.len(), expected.len());
        let flat = store.flatten(id).unwrap();
        assert_eq!(flat.len(), expected.len());
        for &(k, v) in &expected {
            assert_eq!(flat.get_float(k), Some(v));
        }
    }
    // A column reads each entity as its resolved reads do (each prototype's entry found once).
    for (k, name) in KEYS.iter().enumerate() {
        let column: HashMap<Id, f32> = store.column::<f32>(key(k)).collect();
        let expected: HashMap<Id, f32> =
            model.entities.keys().filter_map(|&id| Some((id, model.resolve(id, k)?))).collect();
        assert_eq!(column, expected, "{name}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Random operations against the model, checked after each; each step's delta (through
    /// its bytes) takes the store before it to the store after it.
    #[test]
    fn prototypes_behave_as_the_model(ops in prop::collection::vec(op(), 1..40)) {
        let mut store = Store::new();
        let mut model = Model::default();
        for op in &ops {
            let before = store.clone();
            step(&mut store, &mut model, op);
            check(&store, &model);
            let delta = StorePatch::from_bytes(&StorePatch::diff(&before, &store).to_bytes()).unwrap();
            let mut applied = Store::from_bytes(&before.to_bytes()).unwrap();
            delta.apply(&mut applied).unwrap();
            prop_assert_eq!(&applied, &store);
        }
    }
}

/// An orc, a chieftain of it, and a goblin of the chieftain that removes the title.
fn lineage_world() -> (Store, [Id; 4]) {
    let mut store = Store::new();
    let orc = store.insert_entries([("name", "Orc"), ("title", "Brute")]).unwrap();
    store.get_mut(orc).unwrap().set("stats.health", 30).unwrap();
    let chief = store.insert_instance(orc).unwrap();
    store.get_mut(chief).unwrap().set("title", "Chieftain").unwrap();
    store.get_mut(chief).unwrap().set("stats.health", 90).unwrap();
    let heir = store.insert_instance(chief).unwrap();
    store.remove_inherited(heir, "title").unwrap();
    let loner = store.insert_entries([("name", "Loner")]).unwrap();
    (store, [orc, chief, heir, loner])
}

#[test]
fn a_tombstone_hides_every_prototype_above_it() {
    let (store, [orc, chief, heir, _]) = lineage_world();
    let heir_sheet = store.resolved(heir).unwrap();
    assert_eq!(heir_sheet.get_str("title"), None, "the chieftain's and the orc's both hidden");
    assert_eq!(heir_sheet.get_float("stats.health"), Some(90.0));
    assert_eq!(heir_sheet.get_with_source("name"), Some((Value::Str("Orc"), orc)));
    assert_eq!(heir_sheet.get_with_source("stats.health"), Some((Value::Float(90.0), chief)));
    assert_eq!(store.get(heir).unwrap().get("title"), Some(Value::Tombstone));
    let flat = store.flatten(heir).unwrap();
    assert_eq!(flat.len(), 2);
    assert!(!flat.contains_key("title"));
    // Removing the tombstone brings back the nearest value.
    let mut store = store;
    assert!(store.clear_override(heir, "title").unwrap());
    assert_eq!(store.resolved(heir).unwrap().get_str("title"), Some("Chieftain"));
}

#[test]
fn links_survive_every_reader_of_a_save_and_a_delta() {
    let (store, [orc, chief, heir, loner]) = lineage_world();
    let bytes = store.to_bytes();
    let info = datacomp::format::describe(&bytes).unwrap();
    assert_eq!(info.minor, 5);
    let section = info.sections.iter().find(|s| s.kind == PROTOTYPES).unwrap();
    assert_eq!((section.name, section.len), ("prototypes", 16));
    let at = usize::try_from(section.offset).unwrap();
    let dense: Vec<u32> =
        bytes[at..at + 16].chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(dense, [0, 1, 2, 0], "1 + the prototype's dense position, 0 for none");

    let loaded = Store::from_bytes(&bytes).unwrap();
    assert_eq!(loaded, store);
    assert_eq!(loaded.prototype(heir), Some(chief));
    assert_eq!(loaded.resolved(heir).unwrap().get_str("name"), Some("Orc"));
    let words = aligned(&bytes);
    let aligned_bytes = &zerocopy::IntoBytes::as_bytes(words.as_slice())[..bytes.len()];
    let view = StoreView::new(aligned_bytes).unwrap();
    assert_eq!(
        [orc, chief, heir, loner].map(|id| view.prototype(id)),
        [None, Some(orc), Some(chief), None]
    );
    StoreView::lazy(aligned_bytes).unwrap();
    let salvage = Store::salvage(&bytes).unwrap();
    assert!(salvage.lost.is_empty() && salvage.damaged.is_empty());
    assert_eq!(salvage.store, store);

    // A delta that relinks, unlinks and adds an instance.
    let mut target = store.clone();
    target.set_prototype(heir, Some(orc)).unwrap();
    target.detach(chief).unwrap();
    let imp = target.insert_instance(loner).unwrap();
    let delta = StorePatch::diff(&store, &target);
    let bytes = delta.to_bytes();
    assert_eq!(bytes.len(), delta.file_len());
    let mut applied = loaded.clone();
    StorePatch::from_bytes(&bytes).unwrap().apply(&mut applied).unwrap();
    assert_eq!(applied, target);
    assert_eq!((applied.prototype(heir), applied.prototype(chief)), (Some(orc), None));
    assert_eq!(applied.prototype(imp), Some(loner));
    // The base's crc covers its links: a store linked otherwise is not the base.
    let mut other = loaded;
    other.set_prototype(heir, None).unwrap();
    assert!(matches!(
        StorePatch::from_bytes(&bytes).unwrap().apply(&mut other),
        Err(LoadError::Store(StoreError::DeltaBase { .. }))
    ));
}

#[test]
fn history_undoes_and_redoes_a_link() {
    let (mut store, [orc, chief, heir, _]) = lineage_world();
    let mut history = History::with_max_bytes(1 << 20);
    history.commit(&store);
    store.set_prototype(heir, Some(orc)).unwrap();
    store.detach(chief).unwrap();
    history.commit(&store);
    let after = store.clone();
    assert!(history.undo(&mut store));
    assert_eq!((store.prototype(heir), store.prototype(chief)), (Some(chief), Some(orc)));
    assert_eq!(store, lineage_world().0);
    assert!(history.redo(&mut store));
    assert_eq!(store, after);
}

/// Columns and `find` read a live entity's link by its handle's index alone: the entry of a
/// removed instance must be gone when its slot is reused, and back after an undo.
#[test]
fn a_reused_slot_reads_no_link_of_the_instance_removed_from_it() -> Result<(), Error> {
    let mut store = Store::new();
    let orc = store.insert_entries([("hp", 30.0)])?;
    let grunt = store.insert_instance(orc)?;
    let mut history = History::with_max_bytes(1 << 20);
    history.commit(&store);
    assert!(store.remove(grunt));
    let chest = store.insert_entries([("name", "chest")])?;
    assert_eq!(chest.index(), grunt.index(), "the slot is reused");
    assert_eq!(store.column::<f32>("hp").collect::<Vec<_>>(), [(orc, 30.0)]);
    assert_eq!(store.find("hp", 30.0).collect::<Vec<_>>(), [orc]);
    assert_eq!(store.resolved(chest).unwrap().get_float("hp"), None);
    history.commit(&store);
    assert!(history.undo(&mut store));
    assert_eq!(store.column::<f32>("hp").collect::<Vec<_>>(), [(orc, 30.0), (grunt, 30.0)]);
    assert_eq!(store.find("hp", 30.0).collect::<Vec<_>>(), [orc, grunt]);
    assert!(history.redo(&mut store));
    assert_eq!(store.column::<f32>("hp").collect::<Vec<_>>(), [(orc, 30.0)]);
    assert_eq!(store.resolved(chest).unwrap().get_float("hp"), None);
    Ok(())
}

#[test]
fn cycles_and_long_chains_are_refused_where_they_would_be_made() {
    let mut store = Store::new();
    let root = store.insert_empty();
    let mut chain = vec![root];
    for _ in 0..MAX_CHAIN {
        chain.push(store.insert_instance(*chain.last().unwrap()).unwrap());
    }
    let last = *chain.last().unwrap();
    assert_eq!(store.resolved(last).unwrap().chain().count(), MAX_CHAIN);
    let err = store.insert_instance(last).unwrap_err();
    assert!(matches!(
        err,
        Error::Handle(HandleError::PrototypeChain { id: Id::NULL, prototype, length: 17, limit: 16 })
            if prototype == last
    ));
    assert_eq!(
        err.to_string(),
        format!(
            "entity {last} as the prototype of a new instance would make a chain of 17 \
             prototypes, past the limit of 16"
        )
    );
    // Relinking the root under a new entity lengthens every chain below it.
    let top = store.insert_empty();
    let err = store.set_prototype(root, Some(top)).unwrap_err();
    assert!(matches!(err, Error::Handle(HandleError::PrototypeChain { length: 17, .. })));
    // A cycle, and a link to itself.
    let err = store.set_prototype(root, Some(last)).unwrap_err();
    assert!(
        matches!(err, Error::Handle(HandleError::PrototypeCycle { id, prototype }) if id == root && prototype == last)
    );
    assert_eq!(
        err.to_string(),
        format!("entity {last} reads through {root}: as {root}'s prototype it would make a cycle")
    );
    let err = store.set_prototype(top, Some(top)).unwrap_err();
    assert_eq!(err.to_string(), format!("entity {top} cannot be its own prototype"));
    // A stale prototype is the handle's own error.
    store.remove(top);
    let err = store.insert_instance(top).unwrap_err();
    assert!(matches!(err, Error::Handle(HandleError::Stale { .. })));
    // Refused links changed nothing.
    assert_eq!(store.prototype(root), None);
    assert_eq!(store.len(), MAX_CHAIN + 1);
}

#[test]
fn a_prototype_with_instances_is_not_removed() {
    let (mut store, [orc, chief, heir, _]) = lineage_world();
    let before = store.clone();
    assert!(!store.remove(chief));
    assert_eq!(store, before, "nothing changed");
    let err = store.try_remove(chief).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("entity {chief} is the prototype of 1 live entity: detach or relink it first")
    );
    store.detach(heir).unwrap();
    assert_eq!(store.resolved(heir).unwrap().get_float("stats.health"), Some(90.0));
    store.try_remove(chief).unwrap();
    assert!(store.remove(orc), "its one instance went with the chieftain");
    assert_eq!(store.get(heir).unwrap().get_str("name"), Some("Orc"), "the detached copy");
}

/// An 8-aligned copy, for the views.
fn aligned(bytes: &[u8]) -> Vec<u64> {
    let mut out = vec![0_u64; bytes.len().div_ceil(8)];
    for (i, b) in bytes.iter().enumerate() {
        out[i / 8] |= u64::from(*b) << (8 * (i % 8));
    }
    out
}

/// The save `bytes` with its `prototypes` section made `dense`.
fn with_links(bytes: &[u8], dense: &[u32]) -> Vec<u8> {
    let section: Vec<u8> = dense.iter().flat_map(|w| w.to_le_bytes()).collect();
    rebuild(bytes, &[(PROTOTYPES, section)], None)
}

/// Every reader's answer to `bytes`: the load's error, which the view and the lazy view
/// give alike; a salvage does without the links (and says why).
fn refused(bytes: &[u8]) -> LoadError {
    let err = Store::from_bytes(bytes).unwrap_err();
    let words = aligned(bytes);
    let aligned_bytes = &zerocopy::IntoBytes::as_bytes(words.as_slice())[..bytes.len()];
    assert_eq!(StoreView::new(aligned_bytes).unwrap_err(), err);
    assert_eq!(StoreView::lazy(aligned_bytes).unwrap_err(), err);
    let salvage = Store::salvage(bytes).unwrap();
    assert_eq!(salvage.damaged, std::slice::from_ref(&err));
    assert!(salvage.store.iter().all(|(id, _)| salvage.store.prototype(id).is_none()));
    err
}

#[test]
fn crafted_links_in_a_save_are_load_errors_naming_the_entity() {
    let mut store = Store::new();
    let ids: Vec<Id> = (0..4).map(|_| store.insert_empty()).collect();
    let bytes = store.to_bytes();
    assert_eq!(table(&bytes).iter().find(|e| e.0 == PROTOTYPES).unwrap().2, 0, "no links");
    let missing = |id, prototype| LoadError::Store(StoreError::PrototypeMissing { id, prototype });
    assert_eq!(refused(&with_links(&bytes, &[0, 5, 0, 0])), missing(ids[1], 5));
    assert_eq!(
        refused(&with_links(&bytes, &[0, 0, 0, u32::MAX])),
        missing(ids[3], u64::from(u32::MAX))
    );
    let cycle = |id| LoadError::Store(StoreError::PrototypeCycle { id });
    assert_eq!(refused(&with_links(&bytes, &[0, 0, 3, 0])), cycle(ids[2]), "itself");
    let err = refused(&with_links(&bytes, &[2, 3, 4, 1]));
    assert_eq!(err, cycle(ids[0]), "0 -> 1 -> 2 -> 3 -> 0");
    assert_eq!(
        err.to_string(),
        format!("section 'prototypes': entity {}'s prototype chain comes back to it", ids[0])
    );
    let size = LoadError::Store(StoreError::SectionSize {
        section: "prototypes",
        expected: 16,
        found: 12,
    });
    assert_eq!(refused(&with_links(&bytes, &[0, 1, 0])), size);
    // A chain of 17 links over 18 entities, in the worst order (each entity's prototype after it).
    let mut long = Store::new();
    let ids: Vec<Id> = (0..MAX_CHAIN + 2).map(|_| long.insert_empty()).collect();
    let bytes = long.to_bytes();
    let dense: Vec<u32> =
        (0..ids.len() as u32).map(|d| if d + 1 < ids.len() as u32 { d + 2 } else { 0 }).collect();
    let err = refused(&with_links(&bytes, &dense));
    assert_eq!(err, LoadError::Store(StoreError::PrototypeChain { id: ids[0], limit: MAX_CHAIN }));
    assert_eq!(
        err.to_string(),
        format!("section 'prototypes': entity {} has more than 16 prototypes above it", ids[0])
    );
    // One link fewer is the longest chain allowed.
    let mut dense = dense;
    dense[0] = 0;
    let loaded = Store::from_bytes(&with_links(&bytes, &dense)).unwrap();
    assert_eq!(loaded.resolved(ids[1]).unwrap().chain().count(), MAX_CHAIN);
}

#[test]
fn a_salvage_loses_the_instances_of_a_lost_prototype() {
    // The orc's blob is the arena's first: a bad one loses it, and its chain with it.
    let (store, [orc, chief, heir, loner]) = lineage_world();
    let mut bytes = store.to_bytes();
    let (_, arena, _) = *table(&bytes).iter().find(|e| e.0 == 5).unwrap();
    bytes[arena + 4] ^= 0xff;
    let bytes = rebuild(&bytes, &[], None); // crcs resealed: the blob itself is bad
    let salvage = Store::salvage(&bytes).unwrap();
    let lost: Vec<Id> = salvage.lost.iter().map(|(id, _)| id).collect();
    assert_eq!(lost, [orc, chief, heir]);
    assert_eq!(
        salvage.lost.why(heir),
        Some(&LoadError::Store(StoreError::PrototypeMissing { id: heir, prototype: 2 }))
    );
    assert_eq!(salvage.store.len(), 1);
    assert_eq!(salvage.store.get(loner).unwrap().get_str("name"), Some("Loner"));
}

/// The delta `bytes` with its `prototypes` section made `pairs`.
fn delta_with_links(bytes: &[u8], pairs: &[(Id, Id)]) -> Vec<u8> {
    let section: Vec<u8> = pairs
        .iter()
        .flat_map(|(i, p)| i.to_bits().to_le_bytes().into_iter().chain(p.to_bits().to_le_bytes()))
        .collect();
    rebuild(bytes, &[(PROTOTYPES, section)], None)
}

#[test]
fn crafted_links_in_a_delta_are_errors_that_change_nothing() {
    let (base, [orc, chief, heir, loner]) = lineage_world();
    let mut target = base.clone();
    target.get_mut(loner).unwrap().set("name", "Hermit").unwrap();
    let bytes = StorePatch::diff(&base, &target).to_bytes();
    let apply = |bytes: &[u8]| {
        let mut store = base.clone();
        let result = StorePatch::from_bytes(bytes).and_then(|d| d.apply(&mut store));
        if result.is_err() {
            assert_eq!(store, base, "nothing changed");
        }
        result
    };
    apply(&bytes).unwrap();
    let missing = Id::from_bits(orc.to_bits() + 77);
    assert_eq!(
        apply(&delta_with_links(&bytes, &[(loner, missing)])).unwrap_err(),
        LoadError::Store(StoreError::PrototypeMissing { id: loner, prototype: missing.to_bits() })
    );
    assert_eq!(
        apply(&delta_with_links(&bytes, &[(orc, heir)])).unwrap_err(),
        LoadError::Store(StoreError::PrototypeCycle { id: orc })
    );
    let err = apply(&delta_with_links(&bytes, &[(missing, orc)])).unwrap_err();
    assert!(matches!(err, LoadError::Store(StoreError::DeltaEntity { id, .. }) if id == missing));
    let err = apply(&delta_with_links(&bytes, &[(loner, orc), (chief, Id::NULL)])).unwrap_err();
    assert_eq!(
        err,
        LoadError::Store(StoreError::DeltaChange {
            section: "prototypes",
            index: 1,
            problem: "not after the entry before it"
        })
    );
    // Unlinking the chieftain through a delta is fine; the orc then has no instance.
    let mut store = base.clone();
    let delta = StorePatch::from_bytes(&delta_with_links(&bytes, &[(chief, Id::NULL)])).unwrap();
    delta.apply(&mut store).unwrap();
    assert_eq!(store.prototype(chief), None);
    assert!(store.remove(orc));
}

#[test]
fn queries_columns_and_find_read_through_prototypes() -> Result<(), Box<dyn std::error::Error>> {
    let (mut store, [orc, chief, heir, loner]) = lineage_world();
    let weak = datacomp::Query::parse("stats.health < 50")?;
    let ids: Vec<Id> = store.query(&weak).map(|(id, _)| id).collect();
    assert_eq!(ids, [orc], "the orc's own 30; the chieftain's line overrides it with 90");
    let grunt = store.insert_instance(orc).unwrap();
    let ids: Vec<Id> = store.query(&weak).map(|(id, _)| id).collect();
    assert_eq!(ids, [orc, grunt], "a grunt inherits 30");
    let titled = datacomp::Query::parse("has title")?;
    let ids: Vec<Id> = store.query(&titled).map(|(id, _)| id).collect();
    assert_eq!(ids, [orc, chief, grunt], "the heir's tombstone hides its title");
    let names: Vec<(Id, &str)> = store.column::<&str>("name").collect();
    assert_eq!(
        names,
        [(orc, "Orc"), (chief, "Orc"), (heir, "Orc"), (loner, "Loner"), (grunt, "Orc")]
    );
    assert_eq!(store.find("title", "Chieftain").collect::<Vec<_>>(), [chief]);
    assert_eq!(store.find("name", "Orc").count(), 4);
    assert_eq!(store.find("stats.health", 90).collect::<Vec<_>>(), [chief, heir]);
    // What the entity stores is what the query hands back. A view reads that alone, so its
    // queries, columns and `find` refuse a save with links rather than miss what instances
    // inherit.
    let (_, blob) = store.query(&weak).nth(1).unwrap();
    assert!(blob.is_empty());
    let bytes = store.to_bytes();
    let words = aligned(&bytes);
    let view = StoreView::new(&zerocopy::IntoBytes::as_bytes(words.as_slice())[..bytes.len()])?;
    let linked = LoadError::Store(StoreError::LinkedView { instances: 3 });
    assert_eq!(view.find("name", "Orc").err(), Some(linked.clone()));
    assert_eq!(view.column::<f32>("stats.health").err(), Some(linked.clone()));
    assert_eq!(view.query(&weak).err(), Some(linked.clone()));
    assert_eq!(
        linked.to_string(),
        "3 entities of the save read through prototypes: a view's queries read what each entity \
         stores and would miss what they inherit; load the save into a store to query it"
    );
    Ok(())
}

/// Columns and `find` over 200 prototypes (more than a column remembers: their slots share
/// places in its table) in chains of three, with instances that override, tombstone or
/// inherit, and a key of another type: each entity reads as the rules of its making say.
#[test]
fn columns_over_many_prototypes_read_as_their_chains_say() -> Result<(), Error> {
    let mut store = Store::new();
    // Each entity (in insertion order, the dense order) and the value it reads at "level".
    let mut expected: Vec<(Id, Option<Value<'static>>)> = Vec::new();
    for p in 0..200_u16 {
        let top = store.insert_entries([("level", f32::from(p % 7))])?;
        expected.push((top, Some(Value::Float(f32::from(p % 7)))));
        let mid = store.insert_instance(top)?;
        let mut reads = Some(Value::Float(f32::from(p % 7)));
        if p % 3 == 0 {
            store.get_mut(mid).unwrap().set("level", "high")?;
            reads = Some(Value::Str("high"));
        }
        if p % 5 == 0 {
            store.remove_inherited(mid, "level")?;
            reads = None;
        }
        expected.push((mid, reads));
        for i in 0..4_u16 {
            let grunt = store.insert_instance(mid)?;
            let own = match (p + i) % 4 {
                0 => {
                    store.get_mut(grunt).unwrap().set("level", 100.0 + f32::from(i))?;
                    Some(Value::Float(100.0 + f32::from(i)))
                }
                1 => {
                    store.remove_inherited(grunt, "level")?;
                    None
                }
                2 => {
                    store.get_mut(grunt).unwrap().set("gold", 1.0)?;
                    reads
                }
                _ => reads,
            };
            expected.push((grunt, own));
        }
    }
    let floats: Vec<(Id, f32)> = store.column::<f32>("level").collect();
    let want: Vec<(Id, f32)> =
        expected.iter().filter_map(|&(id, v)| Some((id, v?.as_float()?))).collect();
    assert_eq!(floats, want);
    let names: Vec<(Id, &str)> = store.column::<&str>("level").collect();
    let want: Vec<(Id, &str)> =
        expected.iter().filter_map(|&(id, v)| Some((id, v?.as_str()?))).collect();
    assert_eq!(names, want);
    assert!(!names.is_empty() && floats.len() > 600, "both kinds are there");
    for level in [0, 3, 100, 101] {
        let found: Vec<Id> = store.find("level", level).collect();
        let want: Vec<Id> = expected
            .iter()
            .filter(|&&(_, v)| v.and_then(|v| v.as_float()) == Some(level as f32))
            .map(|&(id, _)| id)
            .collect();
        assert_eq!(found, want, "level {level}");
    }
    Ok(())
}

/// A save whose handles start at the largest base (2^31 - 1): its links are kept by index
/// from the lowest linked one, not from 0 (that took 32 GB), and read, relink and unlink.
#[test]
fn links_of_a_map_at_the_largest_base_take_room_for_their_entities_alone() {
    let mut store = Store::new();
    let orc = store.insert_entries([("stats.health", 30)]).unwrap();
    let grunts: Vec<Id> = (0..3).map(|_| store.insert_instance(orc).unwrap()).collect();
    store.get_mut(grunts[1]).unwrap().set("stats.health", 5).unwrap();
    let bytes = store.to_bytes();
    let base = u32::MAX / 2;
    let (_, offset, len) = *table(&bytes).iter().find(|e| e.0 == 1).unwrap();
    let mut header = bytes[offset..offset + len].to_vec();
    header[4..8].copy_from_slice(&base.to_le_bytes());
    let mut loaded = Store::from_bytes(&rebuild(&bytes, &[(1, header)], None)).unwrap();
    let ids: Vec<Id> = loaded.iter().map(|(id, _)| id).collect();
    assert_eq!(
        ids.iter().map(|id| id.index()).collect::<Vec<_>>(),
        [base, base + 1, base + 2, base + 3]
    );
    let health = |s: &Store, id| s.resolved(id).unwrap().get_float("stats.health");
    assert_eq!(
        ids.iter().map(|&id| health(&loaded, id)).collect::<Vec<_>>(),
        [Some(30.0), Some(30.0), Some(5.0), Some(30.0)]
    );
    assert_eq!(
        loaded.column::<f32>("stats.health").map(|(_, h)| h).collect::<Vec<_>>(),
        [30.0, 30.0, 5.0, 30.0]
    );
    // Links made in falling index order (each below the lowest so far), then undone.
    let (orc, grunts) = (ids[0], &ids[1..]);
    for &g in grunts.iter().rev() {
        loaded.set_prototype(g, None).unwrap();
    }
    assert_eq!(loaded.prototype(grunts[0]), None);
    assert_eq!(health(&loaded, grunts[0]), None);
    for &g in grunts.iter().rev() {
        loaded.set_prototype(g, Some(orc)).unwrap();
        assert_eq!(loaded.prototype(g), Some(orc));
    }
    let top = loaded.insert_empty();
    loaded.set_prototype(orc, Some(top)).unwrap();
    assert_eq!(loaded.resolved(grunts[0]).unwrap().chain().collect::<Vec<_>>(), [orc, top]);
    assert!(loaded.set_prototype(top, Some(grunts[0])).is_err(), "a cycle");
    assert_eq!(
        ids.iter().map(|&id| health(&loaded, id)).collect::<Vec<_>>(),
        [Some(30.0), Some(30.0), Some(5.0), Some(30.0)]
    );
    let again = Store::from_bytes(&loaded.to_bytes()).unwrap();
    assert_eq!(again, loaded);
}

#[path = "../benches/common/goblins.rs"]
mod goblins;

/// Issue 32's size goal, measured exactly: 10,000 goblins of 10 prototypes, each overriding 2
/// of 20 keys, take at most a quarter of the flattened world's save.
#[test]
fn goblins_that_store_only_overrides_take_under_a_quarter_of_the_flattened_save() {
    let (instances, ids) = goblins::instances();
    let (flat, _) = goblins::flattened();
    for &id in ids.iter().step_by(997) {
        assert_eq!(instances.flatten(id).unwrap(), flat.get(id).unwrap(), "{id}");
    }
    let (small, large) = (instances.to_bytes().len(), flat.to_bytes().len());
    assert!(small * 4 <= large, "{small} bytes of {large}");
    // 52 bytes a goblin (a 44-byte blob, its end offset, its link) against 284: 18.4%.
    assert_eq!((small, large), (523_208, 2_843_312));
}

/// `$id` and `$abstract` belong to the entity that holds them: no resolved read inherits
/// them (get, iter, flatten, detach, queries, columns, `find`, cursors), and an instance's
/// own `$id` reads as its own.
#[test]
fn id_and_abstract_are_never_inherited() {
    let mut store = Store::new();
    let base = store
        .insert_entries([
            ("$id", Value::Str("beast")),
            ("$abstract", Value::Bool(true)),
            ("stats.health", Value::Float(10.0)),
        ])
        .unwrap();
    let orc = store.insert_instance(base).unwrap();
    store.get_mut(orc).unwrap().set("$id", "orc").unwrap();
    let grunt = store.insert_instance(orc).unwrap();
    let sheet = store.resolved(grunt).unwrap();
    assert_eq!((sheet.get("$id"), sheet.get("$abstract")), (None, None));
    assert_eq!((sheet.get_str("$id"), sheet.get_bool("$abstract")), (None, None));
    assert_eq!(sheet.get_with_source("$id"), None);
    assert!(!sheet.contains_key("$abstract"));
    let all: Vec<(Key, Value<'_>, Id)> = sheet.iter().collect();
    assert_eq!(all, [(Key::parse("stats.health"), Value::Float(10.0), base)]);
    let orc_reads = store.resolved(orc).unwrap();
    assert_eq!(orc_reads.get_with_source("$id"), Some((Value::Str("orc"), orc)));
    assert_eq!(orc_reads.get("$abstract"), None);
    assert_eq!(orc_reads.len(), 2);
    assert_eq!(store.resolved(base).unwrap().get_bool("$abstract"), Some(true));
    let flat = store.flatten(grunt).unwrap();
    assert_eq!(flat.iter().collect::<Vec<_>>(), [(Key::parse("stats.health"), Value::Float(10.0))]);
    let flat_orc = store.flatten(orc).unwrap();
    assert_eq!(
        flat_orc.iter().collect::<Vec<_>>(),
        [(Key::new("$id"), Value::Str("orc")), (Key::parse("stats.health"), Value::Float(10.0))]
    );
    // Reads of many entities: columns, `find`, cursors and queries.
    assert_eq!(store.column::<&str>("$id").collect::<Vec<_>>(), [(base, "beast"), (orc, "orc")]);
    assert_eq!(store.column::<bool>("$abstract").collect::<Vec<_>>(), [(base, true)]);
    assert_eq!(store.find("$id", "orc").collect::<Vec<_>>(), [orc]);
    assert_eq!(store.find("$abstract", true).collect::<Vec<_>>(), [base]);
    let cursor = KeyCursor::new("$abstract");
    assert_eq!(cursor.get_resolved(store.resolved(grunt).unwrap()), None);
    let health = KeyCursor::new("stats.health");
    assert_eq!(health.get_resolved(store.resolved(grunt).unwrap()), Some(10.0));
    let abstract_ = datacomp::Query::parse("has /$abstract").unwrap();
    assert_eq!(store.query(&abstract_).map(|(id, _)| id).collect::<Vec<_>>(), [base]);
    // Detached, an instance keeps what it reads: not its prototype's name or mark.
    store.detach(grunt).unwrap();
    let own: Vec<_> = store.get(grunt).unwrap().iter().collect();
    assert_eq!(own, [(Key::parse("stats.health"), Value::Float(10.0))]);
    store.detach(orc).unwrap();
    assert_eq!(store.get(orc).unwrap().get_str("$id"), Some("orc"));
    assert_eq!(store.get(orc).unwrap().get("$abstract"), None);
}

/// Three stores of eight entities with the links `links` (each `(instance, prototype)`, by
/// position), all made from one: a base for a merge.
fn linked(links: &[(usize, usize)]) -> (Store, Vec<Id>) {
    let mut store = Store::new();
    let ids: Vec<Id> =
        (0..8).map(|i| store.insert_entries([("level", i as f32)]).unwrap()).collect();
    for &(i, p) in links {
        store.set_prototype(ids[i], Some(ids[p])).unwrap();
    }
    (store, ids)
}

/// The links of `store` over `ids`.
fn links_of(store: &Store, ids: &[Id]) -> Vec<Option<Id>> {
    ids.iter().map(|&id| store.prototype(id)).collect()
}

/// A merge takes the link one side changed, reports and settles the one both changed, and
/// keeps merging the blobs as before.
#[test]
fn a_merge_takes_links_three_way() {
    let (base, e) = linked(&[(1, 0), (2, 0), (3, 0), (4, 0)]);
    let (mut ours, mut theirs) = (base.clone(), base.clone());
    ours.set_prototype(e[1], Some(e[5])).unwrap(); // ours alone
    theirs.set_prototype(e[2], Some(e[6])).unwrap(); // theirs alone
    theirs.set_prototype(e[3], None).unwrap(); // theirs unlinks
    ours.set_prototype(e[4], Some(e[5])).unwrap(); // both, differently
    theirs.set_prototype(e[4], Some(e[6])).unwrap();
    ours.set_prototype(e[7], Some(e[0])).unwrap(); // both, the same
    theirs.set_prototype(e[7], Some(e[0])).unwrap();
    ours.get_mut(e[2]).unwrap().set("name", "Ours").unwrap();
    let expected =
        |four: Id| vec![None, Some(e[5]), Some(e[6]), None, Some(four), None, None, Some(e[0])];
    let conflict =
        LinkConflict { id: e[4], base: Some(e[0]), ours: Some(e[5]), theirs: Some(e[6]) };
    let (merged, report) = merge3(&base, &ours, &theirs, Side::Ours).unwrap();
    assert_eq!(links_of(&merged, &e), expected(e[5]));
    assert_eq!(report.link_conflicts, [conflict]);
    assert_eq!((report.conflict_count(), report.merged.len()), (1, 0));
    assert_eq!(merged.get(e[2]).unwrap().get_str("name"), Some("Ours"));
    assert_eq!(merged.resolved(e[2]).unwrap().chain().collect::<Vec<_>>(), [e[6]]);
    let (merged, report) = merge3(&base, &ours, &theirs, Side::Theirs).unwrap();
    assert_eq!(links_of(&merged, &e), expected(e[6]));
    assert_eq!(report.link_conflicts, [conflict]);
    // The merged store saves, loads and diffs as any other: its links are checked.
    assert_eq!(Store::from_bytes(&merged.to_bytes()).unwrap(), merged);
}

/// Entities a side inserted or removed: theirs' new prototype and its instance keep their
/// link under the handles the merge gives them; a prototype theirs removed (relinking its
/// instances) is removed once ours' links to it are merged away.
#[test]
fn a_merge_moves_links_of_inserted_entities_and_removes_a_prototype_after_its_links() {
    let (base, e) = linked(&[(1, 0), (2, 1)]);
    let (mut ours, mut theirs) = (base.clone(), base.clone());
    let ours_new = ours.insert_entries([("name", "Ours")]).unwrap();
    let base_new = theirs.insert_entries([("name", "Base")]).unwrap();
    let instance = theirs.insert_instance(base_new).unwrap();
    theirs.set_prototype(e[3], Some(base_new)).unwrap();
    // Theirs removes the chain's middle: the heir reads through the root now.
    theirs.set_prototype(e[2], Some(e[0])).unwrap();
    assert!(theirs.remove(e[1]));
    let (merged, report) = merge3(&base, &ours, &theirs, Side::Ours).unwrap();
    assert_eq!(ours_new, base_new, "both sides gave the new entity the same handle");
    let moved = |t: Id| report.inserted.iter().find(|&&(at, _)| at == t).unwrap().1;
    assert_eq!(report.inserted.len(), 2);
    let (m0, m1) = (moved(base_new), moved(instance));
    assert_ne!(m0, ours_new, "theirs' entity moved: ours' holds its handle");
    assert_eq!(merged.prototype(m1), Some(m0), "the instance follows its prototype's move");
    assert_eq!(merged.prototype(e[3]), Some(m0));
    assert_eq!(merged.prototype(e[2]), Some(e[0]));
    assert_eq!(report.removed, [e[1]]);
    assert!(!merged.contains(e[1]));
    assert_eq!(merged.resolved(m1).unwrap().get_str("name"), Some("Base"));
    assert!(report.link_conflicts.is_empty());
}

/// Merged links that no side made alone are refused whole: a cycle, a chain past the limit,
/// a link to an entity the merge removes (either way round). Nothing is returned.
#[test]
fn a_merge_refuses_links_that_make_a_cycle_a_long_chain_or_read_through_a_removal() {
    // A cycle: ours links 0 under 1, theirs 1 under 0.
    let (base, e) = linked(&[]);
    let (mut ours, mut theirs) = (base.clone(), base.clone());
    ours.set_prototype(e[0], Some(e[1])).unwrap();
    theirs.set_prototype(e[1], Some(e[0])).unwrap();
    let err = merge3(&base, &ours, &theirs, Side::Ours).unwrap_err();
    let expected = HandleError::PrototypeCycle { id: e[0], prototype: e[1] };
    assert!(matches!(err, Error::Handle(ref h) if *h == expected), "{err}");
    assert_eq!(
        err.to_string(),
        "entity 1v0t1 reads through 0v0t1: as 0v0t1's prototype it would make a cycle"
    );

    // A chain: ours hangs a chain of 7 under a chain of 8 (16 links), theirs puts the
    // chain of 8 under another entity (17).
    let mut base = Store::new();
    let x: Vec<Id> = (0..9).map(|_| base.insert_empty()).collect();
    let y: Vec<Id> = (0..8).map(|_| base.insert_empty()).collect();
    let z = base.insert_empty();
    for pair in x.windows(2).chain(y.windows(2)) {
        base.set_prototype(pair[1], Some(pair[0])).unwrap();
    }
    let (mut ours, mut theirs) = (base.clone(), base.clone());
    ours.set_prototype(y[0], Some(x[8])).unwrap();
    theirs.set_prototype(x[0], Some(z)).unwrap();
    let err = merge3(&base, &ours, &theirs, Side::Ours).unwrap_err();
    let expected = HandleError::PrototypeChain {
        id: y[7],
        prototype: y[6],
        length: MAX_CHAIN + 1,
        limit: MAX_CHAIN,
    };
    assert!(matches!(err, Error::Handle(ref h) if *h == expected), "{err}");

    // Theirs removed a prototype (detaching its instance); ours made a new instance of it.
    let (base, e) = linked(&[(1, 0)]);
    let (mut ours, mut theirs) = (base.clone(), base.clone());
    let new = ours.insert_instance(e[0]).unwrap();
    theirs.detach(e[1]).unwrap();
    assert!(theirs.remove(e[0]));
    let err = merge3(&base, &ours, &theirs, Side::Ours).unwrap_err();
    let expected = HandleError::PrototypeRemoved { id: new, prototype: e[0] };
    assert!(matches!(err, Error::Handle(ref h) if *h == expected), "{err}");
    assert_eq!(
        err.to_string(),
        format!(
            "entity {new} would read through 0v0t1, which the merge removes: one side removed a prototype the other links it to"
        )
    );
    // The reverse: ours removed it, theirs linked an entity to it.
    let (mut ours, mut theirs) = (base.clone(), base.clone());
    ours.detach(e[1]).unwrap();
    assert!(ours.remove(e[0]));
    theirs.set_prototype(e[2], Some(e[0])).unwrap();
    let err = merge3(&base, &ours, &theirs, Side::Ours).unwrap_err();
    let expected = HandleError::PrototypeRemoved { id: e[2], prototype: e[0] };
    assert!(matches!(err, Error::Handle(ref h) if *h == expected), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Random links on each side of a merge of eight entities, against the three-way rule:
    /// each entity's merged link is the side that changed it (ours on a conflict), each
    /// conflict is reported, and a merge whose links make a cycle is refused.
    #[test]
    fn merged_links_follow_the_three_way_rule(
        base_links in prop::collection::vec((0..8_usize, 0..8_usize), 0..6),
        ours_links in prop::collection::vec((0..8_usize, prop::option::of(0..8_usize)), 0..6),
        theirs_links in prop::collection::vec((0..8_usize, prop::option::of(0..8_usize)), 0..6),
    ) {
        let (mut base, e) = linked(&[]);
        for (i, p) in base_links {
            let _ = base.set_prototype(e[i], Some(e[p]));
        }
        let (mut ours, mut theirs) = (base.clone(), base.clone());
        for (i, p) in ours_links {
            let _ = ours.set_prototype(e[i], p.map(|p| e[p]));
        }
        for (i, p) in theirs_links {
            let _ = theirs.set_prototype(e[i], p.map(|p| e[p]));
        }
        let (b, o, t) = (links_of(&base, &e), links_of(&ours, &e), links_of(&theirs, &e));
        let mut conflicts = Vec::new();
        let expected: Vec<Option<Id>> = (0..8)
            .map(|i| match (b[i], o[i], t[i]) {
                (b, o, t) if t == b || t == o => o,
                (b, o, t) if o == b => t,
                (b, o, t) => {
                    conflicts.push(LinkConflict { id: e[i], base: b, ours: o, theirs: t });
                    o
                }
            })
            .collect();
        let cycle = (0..8).any(|i| {
            let mut at = Some(i);
            (0..9).all(|_| {
                at = at.and_then(|a| expected[a]).map(|p| e.iter().position(|&x| x == p).unwrap());
                at.is_some()
            })
        });
        match merge3(&base, &ours, &theirs, Side::Ours) {
            Ok((merged, report)) => {
                prop_assert!(!cycle);
                prop_assert_eq!(links_of(&merged, &e), expected);
                prop_assert_eq!(report.link_conflicts, conflicts);
            }
            Err(Error::Handle(HandleError::PrototypeCycle { .. })) => prop_assert!(cycle),
            Err(other) => prop_assert!(false, "{other}"),
        }
    }
}

/// An own value over an inherited object, and an own object over an inherited value: the
/// nearer shadows the farther whole, in reads, `iter`, `flatten`, columns, queries and
/// exports, so that no reader ever sees `stats` and `stats.health` both.
#[test]
fn a_path_conflict_across_a_chain_is_settled_by_the_nearer_entity() {
    let mut store = Store::new();
    let orc = store
        .insert_entries([
            ("$id", Value::Str("orc")),
            ("stats.health", Value::Float(30.0)),
            ("stats.mana", Value::Float(5.0)),
            ("name", Value::Str("Orc")),
        ])
        .unwrap();
    // A leaf over the orc's object.
    let rock = store.insert_instance(orc).unwrap();
    store.get_mut(rock).unwrap().set("stats", 7).unwrap();
    let sheet = store.resolved(rock).unwrap();
    assert_eq!(sheet.get_float("stats"), Some(7.0));
    assert_eq!((sheet.get("stats.health"), sheet.get_float("stats.mana")), (None, None));
    let all: Vec<(Key, Value<'_>, Id)> = sheet.iter().collect();
    let (stats, name) = (Key::parse("stats"), Key::parse("name"));
    assert_eq!(all, [(stats, Value::Float(7.0), rock), (name, Value::Str("Orc"), orc)]);
    let flat = store.flatten(rock).unwrap();
    let flat: Vec<_> = flat.iter().collect();
    assert_eq!(flat, [(stats, Value::Float(7.0)), (name, Value::Str("Orc"))]);
    assert_eq!(store.column::<f32>("stats.health").collect::<Vec<_>>(), [(orc, 30.0)]);
    assert_eq!(KeyCursor::new("stats.mana").get_resolved(sheet), None);
    let weak = datacomp::Query::parse("stats.health < 50").unwrap();
    assert_eq!(store.query(&weak).map(|(id, _)| id).collect::<Vec<_>>(), [orc]);
    let flat_json = datacomp::ExportOptions::json().flatten(true);
    assert_eq!(store.export(rock, &flat_json).unwrap(), r#"{"stats":7,"name":"Orc"}"#);
    let own_json = datacomp::ExportOptions::json();
    assert_eq!(store.export(rock, &own_json).unwrap(), r#"{"$prototype":"orc","stats":7}"#);

    // An object over a leaf: the chieftain's `stats` value, under an heir's own object.
    let chief = store.insert_instance(orc).unwrap();
    store.get_mut(chief).unwrap().set("$id", "chief").unwrap();
    store.get_mut(chief).unwrap().set("stats", 9).unwrap();
    let heir = store.insert_instance(chief).unwrap();
    assert_eq!(store.resolved(heir).unwrap().get_float("stats"), Some(9.0), "the chief's");
    assert_eq!(store.resolved(heir).unwrap().get("stats.health"), None, "the chief shadows it");
    store.get_mut(heir).unwrap().set("stats.health", 1).unwrap();
    let sheet = store.resolved(heir).unwrap();
    assert_eq!((sheet.get("stats"), sheet.get_float("stats.health")), (None, Some(1.0)));
    assert_eq!(sheet.get("stats.mana"), None, "the chief's value shadows the orc's object");
    let health = Key::parse("stats.health");
    let all: Vec<(Key, Value<'_>, Id)> = sheet.iter().collect();
    assert_eq!(all, [(health, Value::Float(1.0), heir), (name, Value::Str("Orc"), orc)]);
    assert_eq!(store.column::<f32>("stats").collect::<Vec<_>>(), [(rock, 7.0), (chief, 9.0)]);
    assert_eq!(store.export(heir, &flat_json).unwrap(), r#"{"stats":{"health":1},"name":"Orc"}"#);
    // A tombstone on the path removes the whole inherited object.
    let bare = store.insert_instance(orc).unwrap();
    store.remove_inherited(bare, "stats").unwrap();
    let all: Vec<(Key, Value<'_>, Id)> = store.resolved(bare).unwrap().iter().collect();
    assert_eq!(all, [(name, Value::Str("Orc"), orc)]);
    assert_eq!(store.resolved(bare).unwrap().get("stats.health"), None);
    // Detached, each keeps what it read; saved and loaded, each reads the same.
    let loaded = Store::from_bytes(&store.to_bytes()).unwrap();
    for id in [rock, heir, bare] {
        assert_eq!(loaded.flatten(id), store.flatten(id));
    }
    store.detach(heir).unwrap();
    let own: Vec<_> = store.get(heir).unwrap().iter().collect();
    assert_eq!(own, [(health, Value::Float(1.0)), (name, Value::Str("Orc"))]);
}

/// The keys of the remembered-places test: more than the 64 places a store remembers, so
/// that keys share places and each prototype's layout moves them.
const HINTED: usize = 80;

fn hinted(k: usize) -> Key {
    Key::path(&["k", &k.to_string()])
}

/// An operation of the remembered-places test, on the entity `e % len`.
#[derive(Clone, Debug)]
enum HintOp {
    Set(usize, usize, f32),
    Clear(usize, usize),
    RemoveInherited(usize, usize),
    Relink(usize, usize),
    Detach(usize),
    Mark,
    Restore,
    ApplyDelta,
    Merge,
    SaveLoad,
}

fn hint_op() -> impl Strategy<Value = HintOp> {
    let (e, k) = (0..16_usize, 0..HINTED);
    prop_oneof![
        4 => (e.clone(), k.clone(), 0..100_u8).prop_map(|(e, k, v)| HintOp::Set(e, k, f32::from(v))),
        2 => (e.clone(), k.clone()).prop_map(|(e, k)| HintOp::Clear(e, k)),
        1 => (e.clone(), k).prop_map(|(e, k)| HintOp::RemoveInherited(e, k)),
        1 => (e.clone(), 0..4_usize).prop_map(|(e, p)| HintOp::Relink(e, p)),
        1 => e.prop_map(HintOp::Detach),
        1 => Just(HintOp::Mark),
        1 => Just(HintOp::Restore),
        1 => Just(HintOp::ApplyDelta),
        1 => Just(HintOp::Merge),
        1 => Just(HintOp::SaveLoad),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    /// An inherited read tries the place its key was last found in a prototype before a scan
    /// (`store::proto`'s hints, kept by no write): after every kind of change, each resolved
    /// read and each column agrees with the flattened entity, which reads no hint.
    #[test]
    fn remembered_places_never_give_another_value(ops in prop::collection::vec(hint_op(), 1..40)) {
        let mut store = Store::new();
        // Four prototypes of different layouts (keys in different orders and numbers), and
        // twelve instances, three of each.
        let bases: Vec<Id> = (0..4)
            .map(|b| {
                let keys = (0..HINTED).filter(|k| k % (b + 2) != 0).map(|k| (hinted((k * (b + 3)) % HINTED), k as f32));
                store.insert_entries(keys).unwrap()
            })
            .collect();
        for i in 0..12 {
            store.insert_instance(bases[i % 4]).unwrap();
        }
        let ids: Vec<Id> = store.iter().map(|(id, _)| id).collect();
        let instance = |e: usize| ids[4 + e % 12];
        let mut marked = store.clone();
        for op in &ops {
            match *op {
                HintOp::Set(e, k, v) => store.get_mut(ids[e % 16]).unwrap().set(hinted(k), v).unwrap(),
                HintOp::Clear(e, k) => {
                    store.clear_override(ids[e % 16], hinted(k)).unwrap();
                }
                HintOp::RemoveInherited(e, k) => store.remove_inherited(instance(e), hinted(k)).unwrap(),
                HintOp::Relink(e, p) => store.set_prototype(instance(e), Some(bases[p])).unwrap(),
                HintOp::Detach(e) => store.detach(instance(e)).unwrap(),
                HintOp::Mark => marked = store.clone(),
                HintOp::Restore => datacomp::history::Snapshot::new(&marked).restore(&mut store),
                HintOp::ApplyDelta => StorePatch::diff(&store, &marked).apply(&mut store).unwrap(),
                HintOp::Merge => store = merge3(&marked, &marked, &store, Side::Theirs).unwrap().0,
                HintOp::SaveLoad => store = Store::from_bytes(&store.to_bytes()).unwrap(),
            }
            let flat: Vec<datacomp::Blob> = ids.iter().map(|&id| store.flatten(id).unwrap()).collect();
            for k in (0..HINTED).map(hinted) {
                let column: HashMap<Id, f32> = store.column::<f32>(k).collect();
                for (&id, flat) in ids.iter().zip(&flat) {
                    let slow = flat.get_float(k);
                    prop_assert_eq!(store.resolved(id).unwrap().get_float(k), slow, "{} {:?}", id, op);
                    prop_assert_eq!(column.get(&id).copied(), slow, "{} {:?}", id, op);
                }
            }
        }
    }
}

/// Two threads read one store's inherited keys at once, each key at its own place in
/// prototypes of two layouts, while the 64 remembered places are shared (80 keys): every
/// read is right, whatever place the other thread left.
#[test]
fn readers_on_two_threads_share_the_remembered_places() {
    let mut store = Store::new();
    let forward = store.insert_entries((0..HINTED).map(|k| (hinted(k), k as f32))).unwrap();
    let backward = store.insert_entries((0..HINTED).rev().map(|k| (hinted(k), k as f32))).unwrap();
    let instances: Vec<Id> = (0..8)
        .map(|i| store.insert_instance(if i % 2 == 0 { forward } else { backward }).unwrap())
        .collect();
    let wrong = on_two_threads(|t| {
        let mut wrong = 0;
        for round in 0..2_000 {
            for (i, &id) in instances.iter().enumerate() {
                let k = (round * 7 + i * 13 + t * 29) % HINTED;
                let read = store.resolved(id).unwrap().get_float(hinted(k));
                wrong += usize::from(read != Some(k as f32));
            }
        }
        wrong
    });
    assert_eq!(wrong, 0);
}

/// The sum of what `reader` returns on two threads at once, each given its number (0, 1).
fn on_two_threads(reader: impl Fn(usize) -> usize + Sync) -> usize {
    let reader = &reader;
    std::thread::scope(|scope| {
        let readers: Vec<_> = (0..2).map(|t| scope.spawn(move || reader(t))).collect();
        readers.into_iter().map(|r| r.join().unwrap()).sum()
    })
}

/// The keys of the own-keys-filter test: fewer than the filter's 63 bits, each instance
/// holding a few of them, so that a filter mostly says "not here".
const FILTERED: usize = 24;

fn filtered(k: usize) -> Key {
    Key::path(&["f", &k.to_string()])
}

/// An operation of the own-keys-filter test, on instance `e % 12` (or entity `e % 15`).
#[derive(Clone, Debug)]
enum FilterOp {
    Set(usize, usize, f32),
    Clear(usize, usize),
    RemoveInherited(usize, usize),
    Relink(usize, usize),
    Unlink(usize),
    Detach(usize),
    /// Removes the instance and inserts another in its slot (the links' entry reused).
    Replace(usize, usize),
    Rename(usize),
    Compact,
    Mark,
    Restore,
    ApplyDelta,
    UndoDelta,
    Merge,
    SaveLoad,
    Clone,
    Commit,
    Undo,
    Redo,
}

fn filter_op() -> impl Strategy<Value = FilterOp> {
    let (e, k) = (0..15_usize, 0..FILTERED);
    prop_oneof![
        5 => (e.clone(), k.clone(), 0..100_u8).prop_map(|(e, k, v)| FilterOp::Set(e, k, f32::from(v))),
        2 => (e.clone(), k.clone()).prop_map(|(e, k)| FilterOp::Clear(e, k)),
        2 => (e.clone(), k.clone()).prop_map(|(e, k)| FilterOp::RemoveInherited(e, k)),
        1 => (e.clone(), 0..3_usize).prop_map(|(e, p)| FilterOp::Relink(e, p)),
        1 => e.clone().prop_map(FilterOp::Unlink),
        1 => e.clone().prop_map(FilterOp::Detach),
        1 => (e, 0..3_usize).prop_map(|(e, p)| FilterOp::Replace(e, p)),
        1 => k.prop_map(FilterOp::Rename),
        1 => Just(FilterOp::Compact),
        1 => Just(FilterOp::Mark),
        1 => Just(FilterOp::Restore),
        1 => Just(FilterOp::ApplyDelta),
        1 => Just(FilterOp::UndoDelta),
        1 => Just(FilterOp::Merge),
        1 => Just(FilterOp::SaveLoad),
        1 => Just(FilterOp::Clone),
        2 => Just(FilterOp::Commit),
        2 => Just(FilterOp::Undo),
        1 => Just(FilterOp::Redo),
    ]
}

/// Every resolved read of `store`'s `ids` (a get, a column, a cursor) against the flattened
/// entity, which reads no filter and no hint; each read twice, so that the second one reads
/// what the first learned.
fn reads_match_flattened(store: &Store, ids: &[Id], op: &FilterOp) -> Result<(), TestCaseError> {
    let flat: Vec<datacomp::Blob> = ids.iter().map(|&id| store.flatten(id).unwrap()).collect();
    for _ in 0..2 {
        for k in (0..FILTERED).map(filtered) {
            let column: HashMap<Id, f32> = store.column::<f32>(k).collect();
            let cursor = KeyCursor::new(k);
            for (&id, flat) in ids.iter().zip(&flat) {
                let slow = flat.get_float(k);
                let sheet = store.resolved(id).unwrap();
                prop_assert_eq!(sheet.get_float(k), slow, "{} {:?} {:?}", id, k, op);
                prop_assert_eq!(sheet.get(k), flat.get(k), "{} {:?} {:?}", id, k, op);
                prop_assert_eq!(column.get(&id).copied(), slow, "{} {:?} {:?}", id, k, op);
                prop_assert_eq!(cursor.get_resolved(sheet), slow, "{} {:?} {:?}", id, k, op);
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// A resolved read skips an instance's own blob where the filter of its own keys (kept in
    /// memory beside its link, learned by reads, never saved) says the key is not there:
    /// after every kind of change (sets, clears, tombstones, relinks, unlinks, detach, a slot
    /// reused, a migration's rename, compaction, restore, deltas both ways, undo and redo,
    /// merges, loads, clones), read after reads that learned the filters, each get, column
    /// and cursor agrees with the flattened entity.
    #[test]
    fn own_key_filters_never_hide_an_override(ops in prop::collection::vec(filter_op(), 1..40)) {
        let mut store = Store::new();
        // Three prototypes of every key (in different orders), twelve instances of 0 to 2
        // overrides each.
        let bases: Vec<Id> = (0..3)
            .map(|b| {
                let keys = (0..FILTERED).map(|k| (filtered((k * (2 * b + 1)) % FILTERED), (100 * b + k) as f32));
                store.insert_entries(keys).unwrap()
            })
            .collect();
        for i in 0..12 {
            let id = store.insert_instance(bases[i % 3]).unwrap();
            for o in 0..i % 3 {
                store.get_mut(id).unwrap().set(filtered((i * 5 + o * 7) % FILTERED), -(i as f32)).unwrap();
            }
        }
        let mut marked = store.clone();
        let mut version = 0;
        let mut history = History::with_max_bytes(1 << 20);
        history.commit(&store);
        let live = |store: &Store| store.iter().map(|(id, _)| id).collect::<Vec<Id>>();
        reads_match_flattened(&store, &live(&store), &FilterOp::Mark)?;
        for op in &ops {
            // Entities as the store has them now (a restore or a delta may bring others back).
            let ids = live(&store);
            let others: Vec<Id> = ids.iter().copied().filter(|id| !bases.contains(id)).collect();
            let instance = |e: usize| others[e % others.len()];
            match *op {
                FilterOp::Set(e, k, v) => store.get_mut(ids[e % ids.len()]).unwrap().set(filtered(k), v).unwrap(),
                FilterOp::Clear(e, k) => {
                    store.clear_override(ids[e % ids.len()], filtered(k)).unwrap();
                }
                FilterOp::RemoveInherited(e, k) => store.remove_inherited(instance(e), filtered(k)).unwrap(),
                FilterOp::Relink(e, p) => store.set_prototype(instance(e), Some(bases[p])).unwrap(),
                FilterOp::Unlink(e) => store.set_prototype(instance(e), None).unwrap(),
                FilterOp::Detach(e) => store.detach(instance(e)).unwrap(),
                FilterOp::Replace(e, p) => {
                    // The new instance takes a free slot: the one just freed, or another.
                    prop_assert!(store.remove(instance(e)));
                    store.insert_instance(bases[p]).unwrap();
                }
                FilterOp::Rename(k) => {
                    version += 2;
                    let from = format!("f.{k}");
                    let to = format!("f.{}", (k + 1) % FILTERED);
                    let remove = datacomp::MigrationStep::to(version - 1).remove(&to);
                    let rename = datacomp::MigrationStep::to(version).rename(&from, &to);
                    let migrations = datacomp::Migrations::new(version).step(remove).step(rename);
                    migrations.apply(&mut store).unwrap();
                }
                FilterOp::Compact => store.compact(),
                FilterOp::Mark => marked = store.clone(),
                FilterOp::Restore => datacomp::history::Snapshot::new(&marked).restore(&mut store),
                FilterOp::ApplyDelta => StorePatch::diff(&store, &marked).apply(&mut store).unwrap(),
                FilterOp::UndoDelta => {
                    let mut back = marked.clone();
                    StorePatch::diff(&back, &store).apply(&mut back).unwrap();
                    store = back;
                }
                FilterOp::Merge => store = merge3(&marked, &marked, &store, Side::Theirs).unwrap().0,
                FilterOp::SaveLoad => store = Store::from_bytes(&store.to_bytes()).unwrap(),
                FilterOp::Clone => store = store.clone(),
                FilterOp::Commit => {
                    history.commit(&store);
                }
                FilterOp::Undo => {
                    history.undo(&mut store);
                }
                FilterOp::Redo => {
                    history.redo(&mut store);
                }
            }
            reads_match_flattened(&store, &live(&store), op)?;
        }
    }
}

/// Two threads read a store whose instances' filters are all unknown: each learns them as it
/// reads (the two may store a filter at once), and every get and column is right.
#[test]
fn readers_on_two_threads_learn_the_filters_at_once() {
    let mut store = Store::new();
    let base = store.insert_entries((0..FILTERED).map(|k| (filtered(k), k as f32))).unwrap();
    let instances: Vec<Id> = (0..64)
        .map(|i| {
            let id = store.insert_instance(base).unwrap();
            store.get_mut(id).unwrap().set(filtered(i % FILTERED), -1.0).unwrap();
            id
        })
        .collect();
    let expected = |i: usize, k: usize| if k == i % FILTERED { -1.0 } else { k as f32 };
    for _ in 0..20 {
        // A fresh copy each round: a clone's filters start unknown.
        let store = store.clone();
        let wrong = on_two_threads(|t| {
            let mut wrong = 0;
            for k in 0..FILTERED {
                let k = (k + t * 7) % FILTERED;
                let column: HashMap<Id, f32> = store.column::<f32>(filtered(k)).collect();
                for (i, &id) in instances.iter().enumerate() {
                    let get = store.resolved(id).unwrap().get_float(filtered(k));
                    wrong += usize::from(get != Some(expected(i, k)));
                    wrong += usize::from(column.get(&id) != Some(&expected(i, k)));
                }
            }
            wrong
        });
        assert_eq!(wrong, 0);
    }
}
