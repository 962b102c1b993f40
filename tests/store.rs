//! `Store` in memory: a model test against a `HashMap` of `HashMap`s, and the arena's
//! bookkeeping (relocation on growth, garbage, compaction).

use std::collections::HashMap;

use datacomp::{Blob, BlobRef, ExportOptions, Id, Key, OwnedValue, Store, StoreView};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Insert(Vec<(usize, OwnedValue)>),
    InsertEmpty,
    /// Sets a key of the entity at this position of every handle ever issued.
    Set(prop::sample::Index, usize, OwnedValue),
    RemoveKey(prop::sample::Index, usize),
    Remove(prop::sample::Index),
    Compact,
    Clear,
    Clone,
    /// `to_bytes` -> `from_bytes`.
    SaveLoad,
    /// `to_bytes` -> `StoreView::new`, checked against the model.
    View,
}

const KEYS: usize = 8;

fn key(i: usize) -> Key {
    Key::new("k").child_key(Key::from_raw(i as u32))
}

fn value() -> impl Strategy<Value = OwnedValue> {
    prop_oneof![
        any::<bool>().prop_map(OwnedValue::Bool),
        any::<u32>().prop_map(|b| OwnedValue::Float(f32::from_bits(b))),
        "\\PC{0,12}".prop_map(OwnedValue::Str),
        // Strings that grow past any blob's room, to force moves to the arena's end.
        (0..3000usize).prop_map(|n| OwnedValue::Str("x".repeat(n))),
        prop::collection::vec(any::<f32>(), 0..40).prop_map(OwnedValue::Floats),
        Just(OwnedValue::Null),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => prop::collection::vec((0..KEYS, value()), 0..6).prop_map(Op::Insert),
        1 => Just(Op::InsertEmpty),
        10 => (any::<prop::sample::Index>(), 0..KEYS, value()).prop_map(|(e, k, v)| Op::Set(e, k, v)),
        3 => (any::<prop::sample::Index>(), 0..KEYS).prop_map(|(e, k)| Op::RemoveKey(e, k)),
        2 => any::<prop::sample::Index>().prop_map(Op::Remove),
        1 => Just(Op::Compact),
        1 => Just(Op::Clear),
        1 => Just(Op::Clone),
        2 => Just(Op::SaveLoad),
        1 => Just(Op::View),
    ]
}

type Model = HashMap<Id, HashMap<Key, OwnedValue>>;

fn assert_blob_matches(blob: BlobRef<'_>, expected: &HashMap<Key, OwnedValue>) {
    assert_eq!(blob.len(), expected.len());
    for (key, value) in expected {
        let got = blob.get(*key).unwrap_or_else(|| panic!("{key} missing"));
        assert!(got.is_identical(&value.as_value()), "{key}: {got:?} != {value:?}");
    }
}

fn assert_matches(store: &Store, model: &Model, issued: &[Id]) {
    assert_eq!(store.len(), model.len());
    for &id in issued {
        match model.get(&id) {
            Some(entries) => assert_blob_matches(store.get(id).expect("live"), entries),
            None => assert!(store.get(id).is_none() && !store.contains(id), "dead {id}"),
        }
    }
    let iterated: Vec<Id> = store.iter().map(|(id, _)| id).collect();
    assert_eq!(iterated.len(), model.len());
    assert!(iterated.iter().all(|id| model.contains_key(id)));
    let stats = store.stats();
    assert_eq!(stats.entities, model.len());
    assert_eq!(stats.live_bytes + stats.slack_bytes + stats.garbage_bytes, stats.arena_bytes);
    for (_, blob) in store.iter() {
        assert!(Blob::from_bytes(blob.as_bytes()).is_ok(), "every span holds a valid blob");
    }
}

proptest! {
    #[test]
    fn store_matches_a_hashmap_model(ops in prop::collection::vec(op(), 1..60)) {
        let mut store = Store::new();
        let mut model = Model::new();
        let mut issued: Vec<Id> = Vec::new();
        let pick = |issued: &[Id], i: &prop::sample::Index| {
            if issued.is_empty() { Id::NULL } else { issued[i.index(issued.len())] }
        };
        for op in ops {
            match op {
                Op::Insert(entries) => {
                    let mut blob = Blob::new();
                    let mut expected = HashMap::new();
                    for (k, v) in entries {
                        blob.set(key(k), &v).unwrap();
                        expected.insert(key(k), v);
                    }
                    let id = store.insert(&blob);
                    prop_assert!(!issued.contains(&id));
                    issued.push(id);
                    model.insert(id, expected);
                }
                Op::InsertEmpty => {
                    let id = store.insert_empty();
                    issued.push(id);
                    model.insert(id, HashMap::new());
                }
                Op::Set(e, k, v) => {
                    let id = pick(&issued, &e);
                    match (store.get_mut(id), model.get_mut(&id)) {
                        (Some(mut blob), Some(entries)) => {
                            blob.set(key(k), &v).unwrap();
                            prop_assert!(blob.get(key(k)).unwrap().is_identical(&v.as_value()));
                            entries.insert(key(k), v);
                        }
                        (None, None) => {}
                        _ => prop_assert!(false, "liveness of {} disagrees", id),
                    }
                }
                Op::RemoveKey(e, k) => {
                    let id = pick(&issued, &e);
                    if let (Some(mut blob), Some(entries)) = (store.get_mut(id), model.get_mut(&id)) {
                        prop_assert_eq!(blob.remove(key(k)), entries.remove(&key(k)).is_some());
                    }
                }
                Op::Remove(e) => {
                    let id = pick(&issued, &e);
                    prop_assert_eq!(store.remove(id), model.remove(&id).is_some());
                }
                Op::Compact => {
                    store.compact();
                    prop_assert_eq!(store.stats().garbage_bytes, 0);
                }
                Op::Clear => {
                    store.clear();
                    model.clear();
                }
                Op::Clone => store = store.clone(),
                Op::View => {
                    let bytes = store.to_bytes();
                    let view = StoreView::new(&bytes).expect("a store's own save is viewable");
                    prop_assert_eq!(view.len(), model.len());
                    for &id in &issued {
                        match (view.get(id), model.get(&id)) {
                            (Some(blob), Some(entries)) => assert_blob_matches(blob, entries),
                            (None, None) => {}
                            _ => prop_assert!(false, "view and model disagree on {}", id),
                        }
                    }
                }
                Op::SaveLoad => {
                    let before = store.stats();
                    store = Store::from_bytes(&store.to_bytes()).expect("a store's own save loads");
                    // A save holds the live blobs, no garbage.
                    let after = store.stats();
                    prop_assert_eq!(
                        (after.entities, after.live_bytes, after.slack_bytes),
                        (before.entities, before.live_bytes, before.slack_bytes)
                    );
                    prop_assert_eq!(after.garbage_bytes, 0);
                    prop_assert_eq!(after.arena_bytes, before.arena_bytes - before.garbage_bytes);
                }
            }
            assert_matches(&store, &model, &issued);
        }
    }
}

#[test]
fn a_blob_that_outgrows_its_span_moves_and_leaves_garbage() {
    let mut store = Store::new();
    let a = store.insert(&[("name", "a")].into_iter().collect());
    let b = store.insert(&[("name", "b")].into_iter().collect());
    let before = store.stats();
    assert_eq!(before.garbage_bytes, 0);
    assert_eq!(
        before.arena_bytes,
        2 * 28,
        "each stored repacked: 20 bytes of header, 8 of payload"
    );
    store.get_mut(a).unwrap().set("name", "a name far too long for the span it had").unwrap();
    let after = store.stats();
    assert_eq!(after.garbage_bytes, 28, "a's old span");
    assert!(after.arena_bytes >= before.arena_bytes + 128, "moved to the end with room to grow");
    assert_eq!(
        store.get(a).unwrap().get_str("name"),
        Some("a name far too long for the span it had")
    );
    assert_eq!(store.get(b).unwrap().get_str("name"), Some("b"));
    // The moved blob lies after b in memory; compaction puts them back in dense order.
    let addr = |id| store.get(id).unwrap().as_bytes().as_ptr() as usize;
    assert!(addr(a) > addr(b));
    store.compact();
    let addr = |id| store.get(id).unwrap().as_bytes().as_ptr() as usize;
    assert!(addr(a) < addr(b), "iteration walks memory in order after compact");
    assert_eq!(store.stats().garbage_bytes, 0);
}

#[test]
fn garbage_never_passes_half_of_a_large_arena() {
    let mut store = Store::new();
    let ids: Vec<Id> = (0..500).map(|_| store.insert_empty()).collect();
    for round in 1..40 {
        for &id in &ids {
            store.get_mut(id).unwrap().set("bio", "x".repeat(round * 8).as_str()).unwrap();
        }
        let stats = store.stats();
        if stats.arena_bytes >= 4 * 4096 {
            assert!(stats.garbage_bytes * 2 <= stats.arena_bytes, "round {round}: {stats:?}");
        }
    }
    assert!(
        ids.iter().all(|&id| store.get(id).unwrap().get_str("bio").map(str::len) == Some(39 * 8))
    );
}

#[test]
fn handles_of_removed_and_cleared_entities_stay_dead() {
    let mut store = Store::new();
    let a = store.insert_empty();
    assert!(store.remove(a));
    assert!(!store.remove(a));
    assert!(store.get_mut(a).is_none());
    let b = store.insert_empty();
    assert_ne!(a, b);
    store.clear();
    assert!(store.get(b).is_none());
    let c = store.insert_empty();
    assert!(store.get(a).is_none() && store.get(b).is_none() && store.get(c).is_some());
}

#[test]
fn debug_shows_entities_and_their_entries_by_name_where_known() {
    let mut store = Store::new();
    store.insert(&[("stats.health", 100.0)].into_iter().collect());
    assert_eq!(format!("{store:?}"), "{0v0t1: {#761767e6: Float(100.0)}}");
    store.import(r#"{"stats": {"health": 5}}"#, &datacomp::ImportOptions::strict()).unwrap();
    assert_eq!(
        format!("{store:?}"),
        "{0v0t1: {stats.health: Float(100.0)}, 1v0t1: {stats.health: Float(5.0)}}",
        "an import names the key for every entity"
    );
}

#[test]
fn stores_are_equal_by_contents_not_by_layout() {
    let mut a = Store::new();
    let ids: Vec<Id> = (0..4u8)
        .map(|i| a.insert(&[("level", f32::from(i)), ("xp", 0.5)].into_iter().collect()))
        .collect();
    a.get_mut(ids[1]).unwrap().set("name", "grows out of its span").unwrap();
    let mut b = Store::from_bytes(&a.to_bytes()).unwrap();
    assert_eq!(a, b);
    b.compact();
    assert_eq!(a, b, "compaction moves bytes, not contents");
    // Given as a `Key`, so that no name is recorded: only the value differs.
    let xp = Key::parse("xp");
    b.get_mut(ids[2]).unwrap().set(xp, f32::from_bits(0.5f32.to_bits() + 1)).unwrap();
    assert_ne!(a, b, "one float bit");
    b.get_mut(ids[2]).unwrap().set(xp, 0.5).unwrap();
    assert_eq!(a, b);
    b.insert_key_name("xp").unwrap();
    assert_ne!(a, b, "key names are contents: export writes them");
    a.insert_key_name("xp").unwrap();
    assert_eq!(a, b);
    b.remove(ids[3]);
    assert_ne!(a, b);
    // The same entries under other handles are other contents.
    let mut c = Store::new();
    c.insert(&Blob::new());
    let mut d = Store::new();
    let gone = d.insert(&Blob::new());
    d.remove(gone);
    d.insert(&Blob::new());
    assert_ne!(c, d);
    assert_eq!(c.try_get(Id::NULL).unwrap_err(), datacomp::HandleError::Null);
}

/// `compact` leaves no byte of a removed entity, a removed key or an overwritten value in the
/// arena: holes inside blobs are dropped and free space is zeroed, not only the garbage
/// between blobs.
#[test]
fn compaction_leaves_no_removed_bytes() {
    let mut store = Store::new();
    let gone = store.insert(&[("name", "Removed Entity")].into_iter().collect::<Blob>());
    let id = store.insert(
        &[("name", "A Very Long Old Name Indeed"), ("note", "Removed Key")]
            .into_iter()
            .collect::<Blob>(),
    );
    store.remove(gone);
    let mut blob = store.get_mut(id).unwrap();
    blob.set("name", "Short").unwrap(); // in place: the old tail is a hole
    blob.remove("note"); // its block is given back as free space, unzeroed
    let kept = store.get(id).unwrap().to_blob();
    let has = |store: &Store, text: &str| {
        store.to_bytes().windows(text.len()).any(|w| w == text.as_bytes())
    };
    // A save writes the live blobs only (format 1.3): a removed entity's bytes, garbage
    // between blobs, never reach it; what is inside a live blob does, until compaction.
    assert!(store.stats().garbage_bytes > 0);
    assert!(!has(&store, "Removed Entity"));
    for text in ["Old Name", "Removed Key"] {
        assert!(has(&store, text), "before: {text}");
    }
    store.compact();
    for text in ["Removed", "Old Name", "Key"] {
        assert!(!has(&store, text), "{text}");
    }
    assert_eq!(store.get(id).unwrap(), kept);
    assert_eq!(Store::from_bytes(&store.to_bytes()).unwrap(), store);
}

// ---------------------------------------------------------------------------------------------
// Key names: every write with a key given as text records its name

use datacomp::key::MAX_PATH_SEGMENTS;
use datacomp::{Error, ImportOptions, KeyError, KeyPath};

/// Two names with one key hash 2 value.
const FIRST: &str = "sleep_haste_8";
const SECOND: &str = "fury_sleep_272";

#[test]
fn writes_with_keys_given_as_text_record_their_names() {
    let mut store = Store::new();
    let id = store.insert_empty();
    let mut entity = store.get_mut(id).unwrap();
    entity.set("stats.health", 95).unwrap();
    let mana = String::from("stats.mana");
    entity.set(&mana, 5).unwrap();
    entity.set(KeyPath::pointer("/a.b/c").unwrap(), true).unwrap();
    entity.set(Key::parse("unnamed"), 1).unwrap();
    let mut names: Vec<String> = store.key_names().map(|(_, n)| n.to_owned()).collect();
    names.sort();
    assert_eq!(names, ["a.b.c", "stats.health", "stats.mana"]);
    assert_eq!(store.key_label(Key::path(&["a.b", "c"])), "/a.b/c");
    assert_eq!(store.key_name(Key::parse("unnamed")), None, "a Key value has no name");
    assert_eq!(
        store.export(id, &ExportOptions::json()).unwrap(),
        format!(
            r#"{{"stats":{{"health":95,"mana":5}},"a.b":{{"c":true}},"{}":1}}"#,
            Key::parse("unnamed")
        )
    );

    let orc = store.insert_entries([("name", "Orc"), ("kind", "monster")]).unwrap();
    assert_eq!(store.get(orc).unwrap().get_str("kind"), Some("monster"));
    assert_eq!(store.key_name(Key::parse("kind")).as_deref(), Some("kind"));
    // Saved and loaded, the names come back: the next key hash upgrade needs no help.
    let loaded = Store::from_bytes(&store.to_bytes()).unwrap();
    assert_eq!(loaded, store);
}

#[test]
fn a_write_whose_name_collides_changes_nothing() {
    assert_eq!(Key::parse(FIRST), Key::parse(SECOND), "the pair collides");
    let mut store = Store::new();
    let id = store.insert_empty();
    store.get_mut(id).unwrap().set(FIRST, 1).unwrap();
    let before = (store.clone(), store.to_bytes());
    let err = store.get_mut(id).unwrap().set(SECOND, "a long string that would regrow");
    let Err(Error::Key(collision @ KeyError::Collision { .. })) = err else { panic!("{err:?}") };
    assert_eq!(
        collision,
        KeyError::Collision { key: Key::parse(FIRST), name: SECOND.into(), known: FIRST.into() }
    );
    assert_eq!(store, before.0);
    assert_eq!(store.to_bytes(), before.1, "not one byte changed");
    // A pointer that names the other path collides too; the raw key is the caller's choice.
    let pointer = format!("/{SECOND}");
    let err = store.get_mut(id).unwrap().set(KeyPath::pointer(&pointer).unwrap(), 2);
    assert!(matches!(err, Err(Error::Key(KeyError::Collision { .. }))));
    let KeyError::Collision { known, .. } = store.check_key(SECOND).unwrap_err() else { panic!() };
    assert_eq!(known, FIRST);
    assert_eq!(store.check_key(FIRST), Ok(Key::parse(FIRST)));
    // A whole insert is refused as one: no entity, no name.
    let err = store.insert_entries([("fresh", 1), (SECOND, 2)]);
    assert!(matches!(err, Err(Error::Key(KeyError::Collision { .. }))));
    let err = store.insert_entries([("x", 1), ("y.z", 2), ("x", 3)]).map(|_| ());
    assert!(err.is_ok(), "the same name twice is no collision");
    let mut again = Store::new();
    let err = again.insert_entries([(FIRST, 1), (SECOND, 2)]);
    assert!(matches!(err, Err(Error::Key(KeyError::Collision { .. }))), "within one insert");
    assert!(again.is_empty() && again.key_names().len() == 0);
}

#[test]
fn set_returns_a_collision_and_changes_nothing() {
    let mut store = Store::new();
    let id = store.insert_empty();
    store.get_mut(id).unwrap().set(FIRST, 1).unwrap();
    let err = store.get_mut(id).unwrap().set(SECOND, 2).unwrap_err();
    assert_eq!(err.to_string(), "fury_sleep_272 and sleep_haste_8 hash to the same key #316ec2d7");
    assert_eq!(store.get(id).unwrap().get_float(FIRST), Some(1.0));
    assert_eq!(store.key_names().map(|(_, name)| name).collect::<Vec<_>>(), [FIRST]);
}

#[test]
fn a_known_text_written_again_keeps_every_refusal() {
    use datacomp::BlobError;

    let mut store = Store::new();
    let (a, b) = (store.insert_empty(), store.insert_empty());
    // Written three times: the third finds the text remembered (no hash, one lookup).
    for x in [1, 2, 3] {
        store.get_mut(a).unwrap().set(FIRST, x).unwrap();
        store.get_mut(a).unwrap().set("stats.health", x).unwrap();
    }
    assert_eq!(store.get(a).unwrap().get_float(FIRST), Some(3.0));
    assert_eq!(store.get(a).unwrap().get_float("stats.health"), Some(3.0));
    // Its hash twin is still refused, and changes nothing.
    let bytes = store.to_bytes();
    let err = store.get_mut(a).unwrap().set(SECOND, 4).unwrap_err();
    assert_eq!(err.to_string(), "fury_sleep_272 and sleep_haste_8 hash to the same key #316ec2d7");
    assert_eq!(store.to_bytes(), bytes);
    // A remembered text on an entity that does not hold it: the full checks, then the write.
    store.get_mut(b).unwrap().set("stats", 1).unwrap();
    let err = store.get_mut(b).unwrap().set("stats.health", 5).unwrap_err();
    assert!(matches!(err, Error::Key(KeyError::PathConflict { .. })), "{err:?}");
    store.get_mut(b).unwrap().set(FIRST, 7).unwrap();
    assert_eq!(store.get(b).unwrap().get_float(FIRST), Some(7.0));
    // A value f32 cannot hold, for a remembered text the entity holds: refused, unchanged.
    let err = store.get_mut(a).unwrap().set("stats.health", 16_777_217_u32).unwrap_err();
    assert!(matches!(err, Error::Blob(BlobError::InexactInteger { .. })), "{err:?}");
    assert_eq!(store.get(a).unwrap().get_float("stats.health"), Some(3.0));
    // A longer value than the old one's place: the blob regrows.
    let long = "x".repeat(300);
    store.get_mut(a).unwrap().set(FIRST, long.as_str()).unwrap();
    assert_eq!(store.get(a).unwrap().get_str(FIRST), Some(long.as_str()));
    // The names change (one forgotten): the remembered text is not trusted.
    store.get_mut(a).unwrap().remove(Key::parse(FIRST));
    store.get_mut(b).unwrap().remove(Key::parse(FIRST));
    store.compact();
    store.get_mut(a).unwrap().set(SECOND, 8).unwrap();
    assert_eq!(store.get(a).unwrap().get_float(SECOND), Some(8.0));
    assert_eq!(store.key_name(Key::parse(SECOND)).as_deref(), Some(SECOND));
}

#[test]
fn names_that_differ_only_in_their_dots_show_apart() {
    let mut store = Store::new();
    let id = store.import(r#"{"a.b": 1, "a": {"b": 2}}"#, &ImportOptions::strict()).unwrap().ids;
    let labels: Vec<String> =
        store.get(id[0]).unwrap().keys().map(|k| store.key_label(k).into_owned()).collect();
    assert_eq!(labels, ["/a.b", "a.b"]);
    assert_eq!(
        store.key_name(Key::new("a.b")).as_deref(),
        Some("a.b"),
        "the dotted name is ambiguous"
    );
    assert_eq!(
        format!("{store:?}"),
        "{0v0t1: {/a.b: Float(1.0), a.b: Float(2.0)}}",
        "Debug shows labels"
    );
    // Names that would read as a pointer or a hash, or as nothing, show as pointers.
    let mut odd = Store::new();
    odd.import(r##"{"": 1, "#x": 2, "/y": 3, "k": {"": 4}}"##, &ImportOptions::strict()).unwrap();
    let mut labels: Vec<String> = odd.key_names().map(|(k, _)| odd.key_label(k).into()).collect();
    labels.sort();
    assert_eq!(labels, ["/", "/#x", "/~1y", "k."], "k. is k and an empty member: it reads back");
}

#[test]
fn merging_names_keeps_dots_and_refuses_two_names_for_one_key() {
    let mut ours = Store::new();
    ours.import(r#"{"x": 1}"#, &ImportOptions::strict()).unwrap();
    let mut theirs = Store::new();
    theirs.import(r#"{"x": 1, "a.b": 5}"#, &ImportOptions::strict()).unwrap();
    ours.merge_key_names(&theirs).unwrap();
    assert_eq!(ours.key_label(Key::new("a.b")), "/a.b");
    let id = ours.insert(&theirs.iter().next().unwrap().1.to_blob());
    assert_eq!(ours.export(id, &ExportOptions::json()).unwrap(), r#"{"x":1,"a.b":5}"#);

    ours.insert_key_name(FIRST).unwrap();
    let mut other = Store::new();
    other.insert_key_name("fresh").unwrap();
    other.insert_key_name(SECOND).unwrap();
    let before = ours.clone();
    let err = ours.merge_key_names(&other).unwrap_err();
    assert_eq!(
        err,
        KeyError::Collision { key: Key::parse(FIRST), name: SECOND.into(), known: FIRST.into() }
    );
    assert_eq!(ours, before, "all or nothing: fresh was not taken either");
}

// ---------------------------------------------------------------------------------------------
// A path is a value or an object, never both

fn conflict(path: &str, other: &str, under: bool) -> KeyError {
    KeyError::PathConflict { path: path.into(), other: other.into(), under }
}

#[test]
fn a_value_where_a_path_runs_through_is_refused_and_changes_nothing() {
    let mut store = Store::new();
    let id = store.insert_entries([("stats.health", 30.0), ("name.first", 1.0)]).unwrap();
    let unrelated = store.insert_entries([("stats", 1.0)]).unwrap();
    let before = (store.clone(), store.to_bytes());
    let cases: [(&str, KeyError); 4] = [
        ("stats", conflict("stats", "stats.health", true)),
        ("stats.health.max", conflict("stats.health.max", "stats.health", false)),
        ("name", conflict("name", "name.first", true)),
        ("name.first.a.b", conflict("name.first.a.b", "name.first", false)),
    ];
    for (path, expected) in cases {
        let err = store.get_mut(id).unwrap().set(path, 5).unwrap_err();
        let Error::Key(got @ KeyError::PathConflict { .. }) = err else {
            panic!("{path}: {err:?}")
        };
        assert_eq!(got, expected, "{path}");
        assert_eq!(store, before.0, "{path}");
        assert_eq!(store.to_bytes(), before.1, "{path}: not one byte changed");
    }
    assert_eq!(
        conflict("stats.health.max", "stats.health", false).to_string(),
        "stats.health holds a value, so stats.health.max cannot be set under it"
    );
    // Other entities, siblings, overwrites and member names with dots are no conflict.
    store.get_mut(id).unwrap().set("stats.mana", 3).unwrap();
    store.get_mut(id).unwrap().set("stats.health", 31).unwrap();
    store.get_mut(id).unwrap().set(KeyPath::pointer("/stats.health.max").unwrap(), 2).unwrap();
    store.get_mut(unrelated).unwrap().set("stat", 2).unwrap();
    assert_eq!(
        store.export(id, &ExportOptions::json()).unwrap(),
        r#"{"stats":{"health":31,"mana":3},"name":{"first":1},"stats.health.max":2}"#
    );
    // A key given as a Key has no name and is not checked: export writes it by hash.
    store.get_mut(id).unwrap().set(Key::parse("stats"), 9).unwrap();
    assert!(
        store
            .export(id, &ExportOptions::json())
            .unwrap()
            .contains(&format!("\"{}\":9", Key::parse("stats")))
    );
}

#[test]
fn an_entity_inserted_with_a_value_where_a_path_runs_through_is_refused() {
    let mut store = Store::new();
    for (entries, expected) in [
        (vec![("a.b", 1.0), ("a", 2.0)], conflict("a.b", "a", false)),
        (vec![("a", 2.0), ("x", 0.0), ("a.b.c", 1.0)], conflict("a.b.c", "a", false)),
    ] {
        let err = store.insert_entries(entries.clone()).unwrap_err();
        let Error::Key(got @ KeyError::PathConflict { .. }) = err else {
            panic!("{entries:?}: {err:?}")
        };
        assert_eq!(got, expected);
        assert!(store.is_empty() && store.key_names().len() == 0, "nothing kept");
    }
    // Names the store knows from elsewhere place keys given as Keys.
    store.insert_entries([("gear", 1.0)]).unwrap();
    store.insert_entries([("gear.sword", 1.0)]).unwrap();
    let err = store.insert_entries([(Key::parse("gear"), 1.0), (Key::parse("gear.sword"), 2.0)]);
    assert!(matches!(err, Err(Error::Key(KeyError::PathConflict { .. }))), "{err:?}");
    // A Key written into an entity is the caller's choice, unchecked.
    let id = store.insert_entries([("gear.sword", 1.0)]).unwrap();
    assert!(store.get_mut(id).unwrap().set(Key::parse("gear"), 2.0).is_ok());
    // A long path and a large entity stay cheap: one set of keys, not a scan per segment.
    let many: Vec<(String, f32)> = (0..5_000).map(|i| (format!("k{i}"), 1.0)).collect();
    let big = store.insert_entries(many.iter().map(|(k, v)| (k.as_str(), *v))).unwrap();
    let deep = format!("k4999.{}", vec!["x"; MAX_PATH_SEGMENTS - 1].join("."));
    let err = store.get_mut(big).unwrap().set(deep.as_str(), 1).unwrap_err();
    assert!(matches!(err, Error::Key(KeyError::PathConflict { under: false, .. })), "{err}");
}

#[derive(Clone, Debug)]
enum PathOp {
    Set(Vec<u8>, f32),
    Remove(Vec<u8>),
    SaveLoad,
}

fn path_op() -> impl Strategy<Value = PathOp> {
    // Segments from a small alphabet, so that prefixes meet often; "a.b" as one segment too.
    let path = prop::collection::vec(0u8..4, 1..4);
    prop_oneof![
        4 => (path.clone(), prop_oneof![Just(1.0f32), Just(0.5), Just(-3.0), Just(16_777_216.0), Just(1e-7), Just(3.4e38)])
            .prop_map(|(p, v)| PathOp::Set(p, v)),
        1 => path.prop_map(PathOp::Remove),
        1 => Just(PathOp::SaveLoad),
    ]
}

const SEGMENTS: [&str; 4] = ["a", "b", "a.b", "c~/d"];

fn pointer(path: &[u8]) -> String {
    path.iter()
        .map(|&s| format!("/{}", SEGMENTS[s as usize].replace('~', "~0").replace('/', "~1")))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Writes with text keys against a model of paths: a write that would make a path a value
    /// and an object is refused, and after every step the entity exports to JSON that imports
    /// back strictly as the same entity.
    #[test]
    fn text_writes_keep_every_entity_exportable(ops in prop::collection::vec(path_op(), 1..40)) {
        let mut store = Store::new();
        let id = store.insert_empty();
        let mut model: std::collections::BTreeMap<Vec<u8>, f32> = Default::default();
        for op in ops {
            match op {
                PathOp::Set(path, x) => {
                    let text = pointer(&path);
                    let clash = model.keys().any(|p| {
                        p != &path && (p.starts_with(&path) || path.starts_with(p))
                    });
                    let result = store.get_mut(id).unwrap().set(KeyPath::pointer(&text).unwrap(), x);
                    prop_assert_eq!(result.is_err(), clash, "{} over {:?}", text, model);
                    if !clash {
                        model.insert(path, x);
                    }
                }
                PathOp::Remove(path) => {
                    let removed = store.get_mut(id).unwrap().remove(Key::from_pointer(&pointer(&path)).unwrap());
                    prop_assert_eq!(removed, model.remove(&path).is_some());
                }
                PathOp::SaveLoad => store = Store::from_bytes(&store.to_bytes()).unwrap(),
            }
            let entity = store.get(id).unwrap();
            prop_assert_eq!(entity.len(), model.len());
            for (path, x) in &model {
                let key = Key::from_pointer(&pointer(path)).unwrap();
                prop_assert_eq!(entity.get_float(key).map(f32::to_bits), Some(x.to_bits()));
            }
            let json = store.export(id, &ExportOptions::json()).unwrap();
            let back = Blob::import(&json, &ImportOptions::strict()).unwrap();
            prop_assert_eq!(back, entity.to_blob(), "{}", json);
        }
    }
}

/// Whether a write succeeds can depend on the data (names an import recorded, keys the entity
/// holds, a number's size): every such write returns its refusal, and changes nothing.
#[test]
fn writes_from_data_return_errors_and_change_nothing() {
    use datacomp::migrate::MigrateError;
    use datacomp::{BlobError, MigrationStep, Migrations};

    let mut store = Store::new();
    let modded = store.import(r#"{"stats": {"health": 30}}"#, &ImportOptions::strict()).unwrap();
    let orc = modded.ids[0];
    let bytes = store.to_bytes();
    let unchanged = |store: &Store| assert_eq!(store.to_bytes(), bytes, "nothing changed");

    // The issue's example: a value where the entity has keys under it.
    let err = store.get_mut(orc).unwrap().set("stats", 1.0).unwrap_err();
    let Error::Key(KeyError::PathConflict { path, other, under: true }) = &err else {
        panic!("{err:?}")
    };
    assert_eq!((path.as_str(), other.as_str()), ("stats", "stats.health"));
    unchanged(&store);
    // A key under a value, a name colliding with one recorded, a raw key's form, too deep.
    let err = store.get_mut(orc).unwrap().set("stats.health.max", 1.0).unwrap_err();
    assert!(matches!(err, Error::Key(KeyError::PathConflict { under: false, .. })), "{err:?}");
    store.insert_key_name(FIRST).unwrap();
    let bytes = store.to_bytes();
    let unchanged = |store: &Store| assert_eq!(store.to_bytes(), bytes, "nothing changed");
    let err = store.get_mut(orc).unwrap().set(SECOND, 1.0).unwrap_err();
    assert!(matches!(err, Error::Key(KeyError::Collision { .. })), "{err:?}");
    let err = store.get_mut(orc).unwrap().set("#0000002a.x", 1.0).unwrap_err();
    assert!(matches!(err, Error::Key(KeyError::RawKeyName { .. })), "{err:?}");
    let deep = vec!["a"; 126].join(".");
    let err = store.get_mut(orc).unwrap().set(deep.as_str(), 1.0).unwrap_err();
    assert!(matches!(err, Error::Key(KeyError::PathTooDeep { segments: 126, .. })), "{err:?}");
    // An integer f32 does not hold, given as text or as a Key.
    let err = store.get_mut(orc).unwrap().set("gold", 16_777_217_u32).unwrap_err();
    let Error::Blob(BlobError::InexactInteger { integer }) = &err else { panic!("{err:?}") };
    assert_eq!(integer, "16777217");
    let err = store.get_mut(orc).unwrap().set(Key::parse("gold"), u64::MAX).unwrap_err();
    assert!(matches!(err, Error::Blob(BlobError::InexactInteger { .. })), "{err:?}");
    unchanged(&store);

    // A new entity: the same refusals, all or nothing.
    let err = store.insert_entries([("stats", 1.0), ("stats.health", 2.0)]).unwrap_err();
    assert!(matches!(err, Error::Key(KeyError::PathConflict { .. })), "{err:?}");
    let err = store.insert_entries([("name", 1_i64), ("gold", i64::MAX)]).unwrap_err();
    assert!(matches!(err, Error::Blob(BlobError::InexactInteger { .. })), "{err:?}");
    let err = store.insert_entries([(SECOND, 1)]).unwrap_err();
    assert!(matches!(err, Error::Key(KeyError::Collision { .. })), "{err:?}");
    unchanged(&store);

    // A migration given an integer in code refuses it when it runs, before changing anything.
    let step = MigrationStep::to(1).default("stats.mana", 5).set("gold", 16_777_217_i64);
    let err = Migrations::new(1).step(step).apply(&mut store).unwrap_err();
    assert_eq!(
        err,
        MigrateError::InexactInteger {
            step: 0,
            to: 1,
            path: "gold".into(),
            integer: "16777217".into()
        }
    );
    assert_eq!(
        err.to_string(),
        "steps[0] (to 1): the value of \"gold\" is 16777217, which an f32 (the type numbers are \
         stored as) does not hold exactly"
    );
    unchanged(&store);

    // And every one of them, on valid data, writes.
    let mut entity = store.get_mut(orc).unwrap();
    entity.set("stats.mana", 16_777_216_u32).unwrap();
    entity.set(KeyPath::dotted("stats.luck"), 3_u8).unwrap();
    assert_eq!(entity.get_float("stats.mana"), Some(16_777_216.0));
    let id = store.insert_entries([("gold", 7_usize)]).unwrap();
    assert_eq!(store.get(id).unwrap().get_float("gold"), Some(7.0));
}

/// `Debug` of a store's entity shows each key by the name the store knows, else its hash;
/// a standalone `Blob` holds only hashes.
#[test]
fn debug_shows_key_names_where_the_store_knows_them() {
    let mut world = Store::new();
    let orc = world.insert_entries([("name", "Orc")]).unwrap();
    let mut entity = world.get_mut(orc).unwrap();
    entity.set(KeyPath::pointer("/bow/range.max").unwrap(), 30).unwrap();
    entity.set(Key::from_raw(0x2a), true).unwrap();
    let shown = r#"{name: Str("Orc"), /bow/range.max: Float(30.0), #0000002a: Bool(true)}"#;
    assert_eq!(format!("{entity:?}"), shown);
    assert_eq!(format!("{:?}", world.get(orc).unwrap()), shown);
    assert_eq!(format!("{:?}", world.try_get(orc).unwrap()), shown);
    assert_eq!(format!("{:?}", world.iter().next().unwrap().1), shown);
    let blob = world.get(orc).unwrap().to_blob();
    assert_eq!(
        format!("{blob:?}"),
        format!(
            "{{{:?}: Str(\"Orc\"), {:?}: Float(30.0), #0000002a: Bool(true)}}",
            Key::parse("name"),
            Key::path(&["bow", "range.max"])
        )
    );
}
