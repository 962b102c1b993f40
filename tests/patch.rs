//! `Patch`, `Blob::merge` and `Blob::merge3`: the diff/apply identity on blobs and on a store's
//! entities, merges against a `HashMap` model, exact errors, and truncation and corruption
//! sweeps of `Patch::from_bytes`.

use std::collections::HashMap;

use datacomp::blob::Conflict;
use datacomp::blob::Patch;
use datacomp::blob::Side;
use datacomp::store::{PathConflict, merge3};
use datacomp::{Blob, BlobError, ExportOptions, ImportOptions, Key, OwnedValue, Store, Value};
use proptest::prelude::*;

/// A small pool, so that both sides of a merge touch the same keys; and a large one, past the
/// 32 keys below which a blob's keys are found by a scan, not through a sorted index.
const KEY_POOL: usize = 10;
const LARGE_POOL: usize = 48;

fn pool() -> impl Strategy<Value = usize> {
    prop_oneof![3 => Just(KEY_POOL), 1 => Just(LARGE_POOL)]
}

fn key(i: usize) -> Key {
    Key::path(&["pool", &i.to_string()])
}

fn value() -> impl Strategy<Value = OwnedValue> {
    prop_oneof![
        any::<bool>().prop_map(OwnedValue::Bool),
        // Every bit pattern: NaNs and signed zeros are values like any other.
        any::<u32>().prop_map(|b| OwnedValue::Float(f32::from_bits(b))),
        // A few small floats, so that both sides of a merge often make the same change.
        (0..3_u8).prop_map(|f| OwnedValue::Float(f32::from(f))),
        "\\PC{0,12}".prop_map(OwnedValue::Str),
        (0..600_usize).prop_map(|n| OwnedValue::Str("x".repeat(n))),
        prop::collection::vec(any::<u32>().prop_map(f32::from_bits), 0..20)
            .prop_map(OwnedValue::Floats),
        Just(OwnedValue::Null),
    ]
}

type Entries = HashMap<Key, OwnedValue>;

/// Entries of the pool: any number of the small one; of the large one, each key with
/// probability 0.85 (so that most blobs have more than 32 keys).
fn entries(pool: usize) -> BoxedStrategy<Entries> {
    if pool == KEY_POOL {
        return prop::collection::hash_map((0..pool).prop_map(key), value(), 0..pool).boxed();
    }
    prop::collection::vec(prop::option::weighted(0.85, value()), pool)
        .prop_map(|values| {
            values.into_iter().enumerate().filter_map(|(i, v)| Some((key(i), v?))).collect()
        })
        .boxed()
}

fn two_entries() -> impl Strategy<Value = (Entries, Entries)> {
    pool().prop_flat_map(|pool| (entries(pool), entries(pool)))
}

fn blob(entries: &Entries) -> Blob {
    entries.iter().map(|(k, v)| (*k, v)).collect()
}

fn model(blob: &Blob) -> Entries {
    blob.iter().map(|(k, v)| (k, v.to_owned_value())).collect()
}

/// Values compared by bit pattern, as blobs compare them.
fn identical(a: Option<&OwnedValue>, b: Option<&OwnedValue>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.as_value().is_identical(&b.as_value()),
        (a, b) => a.is_none() && b.is_none(),
    }
}

fn assert_same(blob: &Blob, expected: &Entries) {
    assert_eq!(blob.len(), expected.len(), "{blob:?} against {expected:?}");
    let found = model(blob);
    for (k, v) in expected {
        assert!(identical(found.get(k), Some(v)), "{k}: {blob:?} against {expected:?}");
    }
}

/// An edit of `base`: each key of the pool kept, removed, or set to a new value.
fn edited(base: Entries, pool: usize) -> impl Strategy<Value = Entries> {
    prop::collection::vec((0..4_u8, value()), pool).prop_map(move |edits| {
        let mut out = base.clone();
        for (i, (what, value)) in edits.into_iter().enumerate() {
            match what {
                0 => {
                    out.remove(&key(i));
                }
                1 => {
                    out.insert(key(i), value);
                }
                _ => {}
            }
        }
        out
    })
}

fn base_and_two_edits() -> impl Strategy<Value = (Entries, Entries, Entries)> {
    pool().prop_flat_map(|pool| {
        entries(pool).prop_flat_map(move |base| {
            (Just(base.clone()), edited(base.clone(), pool), edited(base, pool))
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// `apply(base, diff(base, target)) == target`, on a `Blob` and on a store's entity, and
    /// through the patch's bytes; the patch holds exactly the keys that differ.
    #[test]
    fn apply_of_diff_gives_the_target((base, target) in two_entries()) {
        let (base_blob, target_blob) = (blob(&base), blob(&target));
        let patch = Blob::diff(&base_blob, &target_blob);

        let changed = target.iter().filter(|(k, v)| !identical(base.get(k), Some(v))).count();
        let removed = base.keys().filter(|k| !target.contains_key(k)).count();
        prop_assert_eq!(patch.sets().len(), changed);
        prop_assert_eq!(patch.removals().len(), removed);
        prop_assert_eq!(patch.is_empty(), changed + removed == 0);

        let mut patched = base_blob.clone();
        patch.apply(&mut patched);
        prop_assert_eq!(&patched, &target_blob);

        let read = Patch::from_bytes(patch.as_bytes()).unwrap();
        prop_assert_eq!(&read, &patch);
        let mut patched = base_blob.clone();
        read.apply(&mut patched);
        assert_same(&patched, &target);

        let mut store = Store::new();
        let id = store.insert(&base_blob);
        let other = store.insert(&target_blob);
        patch.apply(&mut store.get_mut(id).unwrap());
        prop_assert!(store.get(id).unwrap() == target_blob.as_blob_ref());
        prop_assert!(store.get(other).unwrap() == target_blob.as_blob_ref(), "a neighbour");

        prop_assert!(Blob::diff(&target_blob, &target_blob).is_empty());
    }

    /// `merge`: every key of the other side, over every key of this one.
    #[test]
    fn merge_takes_every_key_of_the_other((ours, theirs) in two_entries()) {
        let mut merged = blob(&ours);
        merged.merge(&blob(&theirs));
        let mut expected = ours.clone();
        expected.extend(theirs.clone());
        assert_same(&merged, &expected);
    }

    /// `merge3` against a model of the rule, key by key.
    #[test]
    fn merge3_follows_the_rule((base, ours, theirs) in base_and_two_edits()) {
        let mut expected = Entries::new();
        let mut conflicts = Vec::new();
        for i in 0..LARGE_POOL {
            let k = key(i);
            let (b, o, t) = (base.get(&k), ours.get(&k), theirs.get(&k));
            let result = if identical(o, t) || identical(t, b) {
                o
            } else if identical(o, b) {
                t
            } else if o.is_none() || t.is_none() {
                None // remove beats change
            } else {
                conflicts.push(k);
                o
            };
            if let Some(v) = result {
                expected.insert(k, v.clone());
            }
        }

        match Blob::merge3(&blob(&base), &blob(&ours), &blob(&theirs)) {
            Ok(merged) => {
                prop_assert!(conflicts.is_empty(), "missed conflicts {:?}", conflicts);
                assert_same(&merged, &expected);
            }
            Err(found) => {
                let mut keys: Vec<Key> = found.conflicts().iter().map(|c| c.key).collect();
                keys.sort();
                conflicts.sort();
                prop_assert_eq!(&keys, &conflicts);
                for c in found.conflicts() {
                    prop_assert!(identical(c.base.as_ref(), base.get(&c.key)));
                    prop_assert!(identical(Some(&c.ours), ours.get(&c.key)));
                    prop_assert!(identical(Some(&c.theirs), theirs.get(&c.key)));
                }
                assert_same(&found.clone().into_ours(), &expected);
                for k in &conflicts {
                    expected.insert(*k, theirs[k].clone());
                }
                assert_same(&found.into_theirs(), &expected);
            }
        }
    }

    /// Any bytes give a patch or an error, and a patch that loads applies without panicking.
    #[test]
    fn any_bytes_give_a_patch_or_an_error(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        if let Ok(patch) = Patch::from_bytes(&bytes) {
            let mut target = Blob::new();
            patch.apply(&mut target);
            prop_assert_eq!(target.len(), patch.sets().len());
        }
    }
}

fn sample_patch() -> (Blob, Blob, Patch) {
    let mut base = Blob::new();
    base.set("name", "The One").unwrap();
    base.set("stats.health", 100).unwrap();
    base.set("status_effects.drunk", true).unwrap();
    base.set("inventory.weights", [1.0, 2.5]).unwrap();
    let mut target = base.clone();
    target.set("stats.health", 95).unwrap();
    target.set("name", "The One, Twice Removed").unwrap();
    target.remove("status_effects.drunk");
    target.remove("inventory.weights");
    target.set("transform.position", [1.0, 2.0, 3.0]).unwrap();
    let patch = Blob::diff(&base, &target);
    (base, target, patch)
}

#[test]
fn a_patch_lists_its_changes() {
    let (_, _, patch) = sample_patch();
    assert_eq!(patch.len(), 5);
    let sets = patch.sets();
    assert_eq!(sets.get_float("stats.health"), Some(95.0));
    assert_eq!(sets.get_str("name"), Some("The One, Twice Removed"));
    assert_eq!(sets.get_floats("transform.position"), Some(&[1.0, 2.0, 3.0][..]));
    let mut removed: Vec<Key> = patch.removals().collect();
    removed.sort();
    let mut expected = vec![Key::parse("status_effects.drunk"), Key::parse("inventory.weights")];
    expected.sort();
    assert_eq!(removed, expected);
    // Removals are stored in ascending order of their raw value, as the format requires.
    let raw: Vec<u32> = patch.removals().map(Key::raw).collect();
    assert!(raw.is_sorted());
    assert_eq!(
        format!("{:?}", Blob::diff(&Blob::new(), &[("a", 1.0)].into_iter().collect())),
        format!("Patch {{ set: {{{}: Float(1.0)}}, remove: [] }}", Key::parse("a"))
    );
}

#[test]
fn a_patch_applies_to_a_store_entity_moving_it_at_most_once() {
    let (base, target, patch) = sample_patch();
    let mut store = Store::new();
    let id = store.insert(&base);
    let neighbour = store.insert(&base);
    let garbage = store.stats().garbage_bytes;
    let span = store.get(id).unwrap().byte_len();
    patch.apply(&mut store.get_mut(id).unwrap());
    assert!(store.get(id).unwrap() == target.as_blob_ref());
    assert!(store.get(neighbour).unwrap() == base.as_blob_ref());
    // The entity moved once (its old span became garbage) or not at all.
    let moved = store.stats().garbage_bytes - garbage;
    assert!(moved == 0 || moved == span, "{moved} bytes of garbage, from a {span}-byte span");
}

#[test]
fn patch_from_bytes_names_each_malformation() {
    let (_, _, patch) = sample_patch();
    let good = patch.as_bytes().to_vec();
    let words = |bytes: &[u8]| -> Vec<u32> {
        bytes.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
    };
    let to_bytes =
        |words: &[u32]| -> Vec<u8> { words.iter().flat_map(|w| w.to_le_bytes()).collect() };
    let w = words(&good);
    assert_eq!(w[0], 2, "two removals lead the patch");

    assert_eq!(Patch::from_bytes(&[]), Err(BlobError::PatchTruncated { byte_len: 0 }));
    assert_eq!(Patch::from_bytes(&good[..7]), Err(BlobError::PatchUnalignedLength { byte_len: 7 }));
    let mut bad = w.clone();
    bad[0] = 1000;
    assert_eq!(
        Patch::from_bytes(&to_bytes(&bad)),
        Err(BlobError::RemovalsOutOfBounds { removals: 1000, byte_len: good.len() })
    );
    let mut bad = w.clone();
    bad.swap(1, 2);
    assert_eq!(
        Patch::from_bytes(&to_bytes(&bad)),
        Err(BlobError::RemovalsNotAscending { index: 1 })
    );
    let mut bad = w.clone();
    bad[2] = bad[1];
    assert_eq!(
        Patch::from_bytes(&to_bytes(&bad)),
        Err(BlobError::RemovalsNotAscending { index: 1 })
    );
    // The first removal replaced by a key that is also set (keeping the order).
    let set_key = patch.sets().keys().map(Key::raw).find(|&k| k < w[2]).unwrap();
    let mut bad = w.clone();
    bad[1] = set_key;
    assert_eq!(
        Patch::from_bytes(&to_bytes(&bad)),
        Err(BlobError::SetAndRemoved { key: Key::from_raw(set_key) })
    );
    // Only the count: no room for the blob of values.
    assert_eq!(
        Patch::from_bytes(&[0, 0, 0, 0]),
        Err(BlobError::PatchSets(Box::new(BlobError::Truncated { byte_len: 0 })))
    );
    let err = Patch::from_bytes(&to_bytes(&[0, 5, 8])).unwrap_err();
    assert!(
        matches!(&err, BlobError::PatchSets(sets) if matches!(**sets, BlobError::HeaderOutOfBounds { .. })),
        "{err}"
    );
    assert!(err.to_string().starts_with("the values to set: "), "{err}");
}

/// Every truncation and every single-bit flip of a patch gives an error or a patch that
/// applies; none panics.
#[test]
fn patch_truncation_and_corruption_sweeps() {
    let (base, _, patch) = sample_patch();
    let good = patch.as_bytes();
    for len in 0..good.len() {
        let result = Patch::from_bytes(&good[..len]);
        assert!(result.is_err() || len.is_multiple_of(4), "{len}");
    }
    let mut rejected = 0;
    for bit in 0..good.len() * 8 {
        let mut bad = good.to_vec();
        bad[bit / 8] ^= 1 << (bit % 8);
        match Patch::from_bytes(&bad) {
            // A flip inside string bytes or float bits is another valid patch.
            Ok(read) => {
                assert_eq!(Patch::from_bytes(read.as_bytes()).unwrap(), read);
                let mut target = base.clone();
                read.apply(&mut target);
            }
            Err(_) => rejected += 1,
        }
    }
    // The count, the removals' order, and each flip of the header's key count.
    assert!(rejected >= 32 + 8, "{rejected} corruptions rejected");
}

#[test]
fn merge3_remove_beats_change_on_either_side() {
    let base: Blob = [("gold", 10.0), ("mana", 5.0)].into_iter().collect();
    let ours: Blob = [("mana", 5.0)].into_iter().collect(); // removed gold
    let theirs: Blob = [("gold", 20.0), ("mana", 5.0)].into_iter().collect(); // changed gold
    let expected: Blob = [("mana", 5.0)].into_iter().collect();
    assert_eq!(Blob::merge3(&base, &ours, &theirs).unwrap(), expected);
    assert_eq!(Blob::merge3(&base, &theirs, &ours).unwrap(), expected);
}

#[test]
fn merge3_conflicts_name_every_side() {
    let base: Blob = [("health", 100.0)].into_iter().collect();
    let ours: Blob =
        [("health", Value::Float(90.0)), ("title", Value::Str("Lord"))].into_iter().collect();
    let theirs: Blob =
        [("health", Value::Float(80.0)), ("title", Value::Str("Lady"))].into_iter().collect();
    let conflicts = Blob::merge3(&base, &ours, &theirs).unwrap_err();
    assert_eq!(
        conflicts.conflicts(),
        [
            Conflict {
                key: Key::parse("health"),
                base: Some(OwnedValue::Float(100.0)),
                ours: OwnedValue::Float(90.0),
                theirs: OwnedValue::Float(80.0),
            },
            Conflict {
                key: Key::parse("title"),
                base: None,
                ours: OwnedValue::Str("Lord".into()),
                theirs: OwnedValue::Str("Lady".into()),
            },
        ]
    );
    assert_eq!(
        conflicts.to_string(),
        format!(
            "2 keys changed differently on both sides: {} (ours Float(90.0), theirs Float(80.0)) \
             {} (ours Str(\"Lord\"), theirs Str(\"Lady\"))",
            Key::parse("health"),
            Key::parse("title")
        )
    );
    let mixed =
        conflicts.resolve(|c| if c.key == Key::parse("title") { Side::Theirs } else { Side::Ours });
    assert_eq!(mixed.get_float("health"), Some(90.0));
    assert_eq!(mixed.get_str("title"), Some("Lady"));
}

/// `entity` of `store` as an import of its export reads it: the import refuses a path that
/// is both a value and an object, so this is `Err` for an entity that holds both.
fn reimported(store: &Store, entity: datacomp::Id) -> Result<Store, String> {
    let text = store.export(entity, &ExportOptions::json()).map_err(|e| e.to_string())?;
    let mut again = Store::new();
    again.import(&text, &ImportOptions::strict()).map_err(|e| e.to_string())?;
    Ok(again)
}

#[test]
fn a_store_merge_settles_a_value_and_keys_under_it_by_prefer() {
    let mut base = Store::new();
    let id = base.insert_entries([("name", "Orc")]).unwrap();
    let (mut ours, mut theirs) = (base.clone(), base.clone());
    ours.get_mut(id).unwrap().set("stats", 5.0).unwrap();
    theirs.get_mut(id).unwrap().set("stats.health", 3.0).unwrap();
    theirs.get_mut(id).unwrap().set("stats.mana", 4.0).unwrap();
    // Each side's change merges key by key: a blob, with no names, holds all three.
    let blobs = [&base, &ours, &theirs].map(|s| s.get(id).unwrap().to_blob());
    assert_eq!(Blob::merge3(&blobs[0], &blobs[1], &blobs[2]).unwrap().len(), 4);

    let (stats, health) = (Key::parse("stats"), Key::parse("stats.health"));
    let clash = PathConflict { id, value: stats, under: health };
    let (merged, report) = merge3(&base, &ours, &theirs, Side::Ours).unwrap();
    assert_eq!((report.path_conflicts.as_slice(), report.conflict_count()), (&[clash][..], 1));
    assert_eq!(report.merged, [id]);
    assert_eq!(merged.get(id).unwrap().to_blob(), ours.get(id).unwrap().to_blob());
    reimported(&merged, id).unwrap();

    let (merged, report) = merge3(&base, &ours, &theirs, Side::Theirs).unwrap();
    assert_eq!(report.path_conflicts, [clash]);
    assert_eq!(merged.get(id).unwrap().to_blob(), theirs.get(id).unwrap().to_blob());
    reimported(&merged, id).unwrap();

    // The sides the other way round: ours the object, theirs the value.
    let (merged, report) = merge3(&base, &theirs, &ours, Side::Ours).unwrap();
    assert_eq!(report.path_conflicts, [clash]);
    assert_eq!(merged.get(id).unwrap().to_blob(), theirs.get(id).unwrap().to_blob());
    // A change of a key no clash holds is kept: only the clash's keys take a side.
    theirs.get_mut(id).unwrap().set("name", "Grunt").unwrap();
    let (merged, _) = merge3(&base, &ours, &theirs, Side::Ours).unwrap();
    let entity = merged.get(id).unwrap();
    assert_eq!((entity.get_str("name"), entity.get_float("stats")), (Some("Grunt"), Some(5.0)));
    assert_eq!((entity.len(), entity.get("stats.health")), (2, None));
}

/// The nested names a merge's sides pick keys from: values and objects on one path.
const NESTED: [&str; 7] = ["a", "a.b", "a.b.c", "a.d", "e", "e.f", "g"];

/// A side's edits: set (a float) or remove a key of [`NESTED`]; a set the store refuses (a
/// value and a key under it) is skipped, so that each side is an entity a store holds.
fn nested_edits() -> impl Strategy<Value = Vec<(usize, Option<f32>)>> {
    proptest::collection::vec((0..NESTED.len(), proptest::option::of(0.0f32..8.0)), 0..8)
}

fn with_edits(store: &Store, id: datacomp::Id, edits: &[(usize, Option<f32>)]) -> Store {
    let mut store = store.clone();
    for &(k, value) in edits {
        let mut entity = store.get_mut(id).unwrap();
        match value {
            // A set the store refuses changes nothing: the side stays one a store holds.
            Some(x) => {
                let _ = entity.set(NESTED[k], x);
            }
            None => {
                entity.remove(Key::parse(NESTED[k]));
            }
        }
    }
    store
}

proptest! {
    /// Whatever each side adds or removes on nested paths, a store merge's entity is one an
    /// import takes back, and without a path conflict it is the merge of the blobs.
    #[test]
    fn a_store_merge_never_holds_a_value_and_a_key_under_it(
        base in nested_edits(),
        ours in nested_edits(),
        theirs in nested_edits(),
        prefer_ours in any::<bool>(),
    ) {
        let mut start = Store::new();
        let id = start.insert_entries([("name", "x")]).unwrap();
        let base = with_edits(&start, id, &base);
        let (ours, theirs) = (with_edits(&base, id, &ours), with_edits(&base, id, &theirs));
        let prefer = if prefer_ours { Side::Ours } else { Side::Theirs };
        let (merged, report) = merge3(&base, &ours, &theirs, prefer).unwrap();
        prop_assert!(reimported(&merged, id).is_ok(), "{:?}", reimported(&merged, id));
        let entity = merged.get(id).unwrap();
        for (i, outer) in NESTED.iter().enumerate() {
            for inner in NESTED.iter().filter(|n| n.starts_with(&format!("{outer}."))) {
                prop_assert!(
                    !(entity.contains_key(Key::parse(outer)) && entity.contains_key(Key::parse(inner))),
                    "{} and {} both held ({})", outer, inner, i
                );
            }
        }
        if report.path_conflicts.is_empty() {
            let blobs = [&base, &ours, &theirs].map(|s| s.get(id).unwrap().to_blob());
            let expected = match Blob::merge3(&blobs[0], &blobs[1], &blobs[2]) {
                Ok(blob) => blob,
                Err(found) => found.resolve(|_| prefer),
            };
            prop_assert_eq!(entity.to_blob(), expected);
        }
    }
}
