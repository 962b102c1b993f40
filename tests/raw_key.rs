//! Raw keys in JSON and SJSON import: an entity's top-level member `#` and 8 hex digits (as
//! `Key::from_str` reads a raw key) is that key, unnamed, so a key the store has no name for
//! exports by hash and imports back as the same key. Round trips of random stores with
//! unnamed keys of every value type, and the exact errors of what a raw member cannot be.

use std::collections::BTreeSet;

use datacomp::text::JsonErrorKind;
use datacomp::{
    Blob, ExportOptions, ImportOptions, JsonError, Key, KeyPath, OwnedValue, Store, TextFormat,
    Value,
};
use proptest::prelude::*;

fn strict() -> ImportOptions {
    ImportOptions::strict()
}

fn lenient() -> ImportOptions {
    ImportOptions::lenient()
}

/// An entity's keys and values, in key order.
fn entries(blob: datacomp::BlobRef<'_>) -> Vec<(Key, OwnedValue)> {
    let mut entries: Vec<_> = blob.iter().map(|(k, v)| (k, v.to_owned_value())).collect();
    entries.sort_by_key(|(k, _)| *k);
    entries
}

/// Every entity of `store`, in order.
fn all(store: &Store) -> Vec<Vec<(Key, OwnedValue)>> {
    store.iter().map(|(_, blob)| entries(blob)).collect()
}

fn names(store: &Store) -> Vec<(Key, String)> {
    store.key_names().collect()
}

/// A store import of `text` under both policies, JSON: the error, which must be the same.
fn import_error(text: &str) -> JsonError {
    let mut store = Store::new();
    store.insert_key_name("kept").unwrap();
    let before = names(&store);
    let strict_err = store.import(text, &strict()).unwrap_err();
    let lenient_err = store.import(text, &lenient()).unwrap_err();
    assert_eq!(strict_err, lenient_err, "{text}");
    // All or nothing: no entity, no name.
    assert_eq!(store.len(), 0, "{text}");
    assert_eq!(names(&store), before, "{text}");
    // The blob import says the same of one entity.
    if text.starts_with('{') {
        assert_eq!(
            Blob::import(text, &ImportOptions::strict()).unwrap_err().kind(),
            strict_err.kind(),
            "{text}"
        );
    }
    strict_err
}

// ---------------------------------------------------------------------------------------------
// The attacker's reproduction (tests/attack.rs on branch `attack`), fixed

#[test]
fn an_unnamed_key_exported_by_hash_imports_back_as_the_same_key() {
    let mut store = Store::new();
    let id = store.insert(&[(Key::from_raw(42), 7.0_f32)].into_iter().collect::<Blob>());
    let text = store.export(id, &ExportOptions::json()).unwrap();
    assert_eq!(text, r##"{"#0000002a":7}"##);
    let mut back = Store::new();
    let ids = back.import(&text, &ImportOptions::strict()).unwrap().ids;
    let blob = back.get(ids[0]).unwrap();
    assert_eq!(blob.get_float(Key::from_raw(42)), Some(7.0));
    // Unnamed: the import registers no name.
    assert_eq!(back.key_names().len(), 0);
    assert_eq!(back.export(ids[0], &ExportOptions::json()).unwrap(), text);
}

#[test]
fn a_raw_member_holds_each_kind_of_value_unnamed() {
    let text = r##"{"#00000001":true,"#00000002":1.5,"#00000003":"x","#00000004":[1,2],"#00000005":[],"n":3}"##;
    for options in [strict(), lenient()] {
        let mut store = Store::new();
        let ids = store.import(text, &options).unwrap().ids;
        let blob = store.get(ids[0]).unwrap();
        assert_eq!(blob.get(Key::from_raw(1)), Some(Value::Bool(true)));
        assert_eq!(blob.get(Key::from_raw(2)), Some(Value::Float(1.5)));
        assert_eq!(blob.get(Key::from_raw(3)), Some(Value::Str("x")));
        assert_eq!(blob.get(Key::from_raw(4)), Some(Value::Floats(&[1.0, 2.0])));
        assert_eq!(blob.get(Key::from_raw(5)), Some(Value::Floats(&[])));
        assert_eq!(blob.get_float("n"), Some(3.0));
        assert_eq!(blob.len(), 6);
        assert_eq!(names(&store), vec![(Key::parse("n"), "n".to_owned())]);
        assert_eq!(store.export(ids[0], &ExportOptions::json()).unwrap(), text);
    }
    let blob = Blob::import(text, &ImportOptions::strict()).unwrap();
    assert_eq!(blob.get(Key::from_raw(4)), Some(Value::Floats(&[1.0, 2.0])));
    assert_eq!(blob.len(), 6);
}

#[test]
fn uppercase_hex_is_a_raw_key_as_key_from_str_reads_it() {
    let key: Key = "#00AbCdEf".parse().unwrap();
    assert_eq!(key, Key::from_raw(0x00ab_cdef));
    let blob = Blob::import(r##"{"#00AbCdEf": 1}"##, &ImportOptions::strict()).unwrap();
    assert_eq!(blob.get_float(Key::from_raw(0x00ab_cdef)), Some(1.0));
    // Anything `Key::from_str` refuses as a raw key is a name, as before.
    for name in ["#abc", "#0000002a0", "#+000002a", "#0000002g", "#", "##0000002a"] {
        assert!(name.parse::<Key>().is_err(), "{name}");
        let blob = Blob::import(&format!(r#"{{"{name}": 1}}"#), &ImportOptions::strict()).unwrap();
        assert_eq!(blob.get_float(Key::path(&[name])), Some(1.0), "{name}");
        assert_eq!(blob.len(), 1);
    }
}

#[test]
fn a_nested_raw_looking_member_stays_a_name() {
    let mut store = Store::new();
    let ids = store.import(r##"{"a":{"#0000002a":1}}"##, &strict()).unwrap().ids;
    let blob = store.get(ids[0]).unwrap();
    let key = Key::path(&["a", "#0000002a"]);
    assert_eq!(blob.get_float(key), Some(1.0));
    assert_eq!(blob.get_float(Key::from_raw(42)), None);
    assert_eq!(names(&store), vec![(key, "a.#0000002a".to_owned())]);
    // In a lenient array of other things than numbers, an element's member too.
    let blob = Blob::import(r##"{"a":[{"#0000002a":1}]}"##, &lenient()).unwrap();
    assert_eq!(blob.get_float(Key::path(&["a", "0", "#0000002a"])), Some(1.0));
}

#[test]
fn a_raw_key_the_store_names_is_that_named_key() {
    let mut store = Store::new();
    let health = store.insert_key_name("stats.health").unwrap();
    let text = format!(r#"{{"{health}": 5}}"#);
    let ids = store.import(&text, &strict()).unwrap().ids;
    assert_eq!(store.get(ids[0]).unwrap().get_float("stats.health"), Some(5.0));
    // Export writes the name.
    assert_eq!(store.export(ids[0], &ExportOptions::json()).unwrap(), r#"{"stats":{"health":5}}"#);
    // In another entity of the same document, a name met before is known too.
    let text = format!(r#"[{{"stats":{{"mana":1}}}},{{"{}":2}}]"#, Key::parse("stats.mana"));
    let ids = store.import(&text, &strict()).unwrap().ids;
    assert_eq!(store.export(ids[1], &ExportOptions::json()).unwrap(), r#"{"stats":{"mana":2}}"#);
}

// ---------------------------------------------------------------------------------------------
// What a raw member cannot be

#[test]
fn an_object_under_a_raw_member_is_refused_in_strict_and_lenient() {
    let err = import_error(r##"{"ok":1,"#0000002a":{"b":1}}"##);
    let member = "#0000002a".to_owned();
    assert_eq!(err.kind(), &JsonErrorKind::RawKeyNotAValue { member, object: true });
    assert_eq!(err.path(), "/#0000002a");
    assert_eq!((err.line(), err.column()), (1, 21));
    assert_eq!(
        err.to_string(),
        "/#0000002a (line 1, column 21): member #0000002a is a raw key and holds one value, not an object"
    );
    // An empty object too: a raw key holds no members.
    let err = import_error(r##"{"#0000002A":{}}"##);
    let member = "#0000002A".to_owned();
    assert_eq!(err.kind(), &JsonErrorKind::RawKeyNotAValue { member, object: true });
}

#[test]
fn an_array_of_other_things_under_a_raw_member_is_refused_in_strict_and_lenient() {
    for (text, path) in [
        (r##"{"#0000002a":[1,"x"]}"##, "/#0000002a"),
        (r##"{"#0000002a":[true]}"##, "/#0000002a"),
        (r##"{"#0000002a":[[1]]}"##, "/#0000002a"),
        (r##"{"#0000002a":[{}]}"##, "/#0000002a"),
        (r##"[{"n":1},{"#0000002a":[null]}]"##, "/1/#0000002a"),
    ] {
        let err = import_error(text);
        let member = "#0000002a".to_owned();
        assert_eq!(err.kind(), &JsonErrorKind::RawKeyNotAValue { member, object: false }, "{text}");
        assert_eq!(err.path(), path, "{text}");
        assert!(err.to_string().ends_with(
            "member #0000002a is a raw key and holds one value, not an array of other things than numbers"
        ));
    }
}

#[test]
fn a_raw_member_set_twice_is_a_duplicate_path() {
    let err = import_error(r##"{"#0000002a":1,"#0000002a":2}"##);
    assert_eq!(err.kind(), &JsonErrorKind::DuplicatePath("#0000002a".to_owned()));
    assert_eq!(err.path(), "/#0000002a");
    // Written in two cases, the same key: the second as written.
    let err = import_error(r##"{"#0000002a":1,"#0000002A":"x"}"##);
    assert_eq!(err.kind(), &JsonErrorKind::DuplicatePath("#0000002A".to_owned()));
    // In two entities of one document, no collision.
    let mut store = Store::new();
    let ids = store.import(r##"[{"#0000002a":1},{"#0000002a":2}]"##, &strict()).unwrap().ids;
    assert_eq!(store.get(ids[1]).unwrap().get_float(Key::from_raw(42)), Some(2.0));
}

#[test]
fn a_raw_key_of_another_path_of_the_entity_is_a_collision() {
    let key = Key::parse("stats.health");
    // The path first, then the raw key.
    let err = import_error(&format!(r#"{{"stats":{{"health":1}},"{key}":2}}"#));
    let expected =
        JsonErrorKind::KeyCollision { first: "stats.health".into(), second: key.to_string(), key };
    assert_eq!(err.kind(), &expected);
    assert_eq!(err.path(), format!("/{key}"));
    // The raw key first, then the path.
    let err = import_error(&format!(r#"{{"{key}":2,"stats":{{"health":1}}}}"#));
    let expected =
        JsonErrorKind::KeyCollision { first: key.to_string(), second: "stats.health".into(), key };
    assert_eq!(err.kind(), &expected);
    assert_eq!(err.path(), "/stats/health");
    // A key of one segment, both ways, and in SJSON.
    let a = Key::parse("a");
    let err = import_error(&format!(r#"{{"a":true,"{a}":"x"}}"#));
    assert!(matches!(err.kind(), JsonErrorKind::KeyCollision { key, .. } if *key == a));
    let err = Blob::import(
        &format!("\"{a}\" = 1\na = 2"),
        &ImportOptions::strict().format(TextFormat::Sjson),
    )
    .unwrap_err();
    let expected = JsonErrorKind::KeyCollision { first: a.to_string(), second: "a".into(), key: a };
    assert_eq!(err.kind(), &expected);
}

#[test]
fn a_raw_key_the_store_names_beside_an_object_at_that_path_is_a_collision() {
    // The store names `a`; the entity sets it raw and opens `a` as an object: a value and an
    // object at one path, which JSON could not write back.
    let mut store = Store::new();
    let a = store.insert_key_name("a").unwrap();
    for text in [format!(r#"{{"{a}":1,"a":{{"b":2}}}}"#), format!(r#"{{"a":{{"b":2}},"{a}":1}}"#)] {
        let err = store.import(&text, &strict()).unwrap_err();
        assert!(
            matches!(err.kind(), JsonErrorKind::KeyCollision { key, .. } if *key == a),
            "{text}: {err}"
        );
        assert_eq!(store.len(), 0);
        assert_eq!(names(&store), vec![(a, "a".to_owned())]);
    }
}

#[test]
fn a_failed_import_with_raw_members_keeps_no_name() {
    let mut store = Store::new();
    let text = r##"[{"x":{"y":1},"#00000001":2},{"z":1,"#00000001":{}}]"##;
    assert!(store.import(text, &strict()).is_err());
    assert_eq!(store.len(), 0);
    assert_eq!(store.key_names().len(), 0);
}

// ---------------------------------------------------------------------------------------------
// Round trips of random stores with unnamed keys

fn value() -> impl Strategy<Value = OwnedValue> {
    prop_oneof![
        any::<bool>().prop_map(OwnedValue::Bool),
        (-1e6_f32..1e6).prop_map(OwnedValue::Float),
        "\\PC{0,6}".prop_map(OwnedValue::Str),
        prop::collection::vec(-1e6_f32..1e6, 0..4).prop_map(OwnedValue::Floats),
        Just(OwnedValue::Null),
    ]
}

/// Named paths a random store may use (registered by name), beside raw keys.
const PATHS: [&str; 5] = ["name", "stats.health", "stats.mana", "pos", "a.#0000002a"];

/// An entity: values at paths of [`PATHS`] (by index), and at raw keys.
type Entity = (Vec<(usize, OwnedValue)>, Vec<(u32, OwnedValue)>);

fn entity() -> impl Strategy<Value = Entity> {
    (
        prop::collection::vec((0..PATHS.len(), value()), 0..4),
        prop::collection::vec((any::<u32>(), value()), 0..4),
    )
}

/// A store of `entities`, the named ones registered as names, the raw ones unnamed.
fn store_of(entities: &[Entity]) -> Store {
    let mut store = Store::new();
    let named: BTreeSet<Key> =
        PATHS.iter().map(|p| Key::path(&p.split('.').collect::<Vec<_>>())).collect();
    for path in PATHS {
        store.insert_key_name(path).unwrap();
    }
    for (paths, raws) in entities {
        let mut blob = Blob::new();
        for (i, v) in paths {
            let key = Key::path(&PATHS[*i].split('.').collect::<Vec<_>>());
            blob.set(key, v.as_value()).unwrap();
        }
        for (raw, v) in raws {
            let key = Key::from_raw(*raw);
            // A raw key that a name's key or a prefix of one would be is another test's.
            if named.contains(&key) || key == Key::parse("stats") || key == Key::from_raw(42) {
                continue;
            }
            blob.set(key, v.as_value()).unwrap();
        }
        store.insert(&blob);
    }
    store
}

/// The names of the [`PATHS`] that `entities` use, in key order.
fn used_names(entities: &[Entity]) -> Vec<(Key, String)> {
    let used: BTreeSet<usize> =
        entities.iter().flat_map(|(p, _)| p.iter().map(|(i, _)| *i)).collect();
    let mut names: Vec<(Key, String)> =
        used.into_iter().map(|i| (Key::parse(PATHS[i]), PATHS[i].to_owned())).collect();
    names.sort();
    names
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn unnamed_keys_round_trip_through_json_and_sjson(
        entities in prop::collection::vec(entity(), 1..5),
    ) {
        let store = store_of(&entities);
        let text = store.export_all(&ExportOptions::json()).unwrap();
        // Leniently: the values hold nulls.
        let mut back = Store::new();
        back.import(&text, &lenient()).unwrap();
        prop_assert_eq!(all(&back), all(&store), "{}", text);
        // Raw keys stay unnamed; the names are those the entities use.
        prop_assert_eq!(names(&back), used_names(&entities), "{}", text);
        prop_assert_eq!(back.export_all(&ExportOptions::json()).unwrap(), text);

        let text = store.export_all(&ExportOptions::sjson()).unwrap();
        let mut back = Store::new();
        back.import(&text, &lenient().format(TextFormat::Sjson)).unwrap();
        prop_assert_eq!(all(&back), all(&store), "{}", text);
        prop_assert_eq!(names(&back), used_names(&entities), "{}", text);

        // One entity at a time, through `Blob::import`.
        for (id, blob) in store.iter() {
            let text = store.export(id, &ExportOptions::json()).unwrap();
            prop_assert_eq!(entries(Blob::import(&text, &lenient()).unwrap().as_blob_ref()), entries(blob));
        }
    }
}

/// The rule's other side (README, "Keys without a name"): a name whose first segment is a raw
/// key's label would export as that member and read back as the raw key, so every write path
/// that records names refuses it (`Error::RawKeyName`, `MigrateError::BadPath`), changing
/// nothing; the raw key itself, and the label deeper in a path, are fine.
#[test]
fn a_name_starting_with_a_raw_key_label_is_refused_where_names_are_recorded() {
    use datacomp::migrate::MigrateError;
    use datacomp::{Error, KeyError, MigrationStep, Migrations};

    let mut store = Store::new();
    let id = store.insert(&Blob::new());
    let raw = Key::from_raw(42);
    let refused = |path: &str| KeyError::RawKeyName { path: path.to_owned(), raw };
    let why = |result: Result<_, Error>| match result {
        Err(Error::Key(e @ KeyError::RawKeyName { .. })) => e,
        other => panic!("not refused as a raw key name: {other:?}"),
    };
    let mut entity = store.get_mut(id).unwrap();
    for path in ["/#0000002a", "/#0000002A/x"] {
        let pointer = KeyPath::pointer(path).unwrap();
        assert_eq!(why(entity.set(pointer, 1.0_f32)), refused(path));
    }
    assert_eq!(why(entity.set("#0000002a.x", true)), refused("#0000002a.x"));
    assert_eq!(why(store.insert_key_name("#0000002a").map(|_| ())), refused("#0000002a"));
    let err = why(store.insert_entries([("n", 1.0_f32), ("#0000002a", 2.0)]).map(|_| ()));
    assert_eq!(err, refused("#0000002a"));
    assert_eq!(
        err.to_string(),
        "key path #0000002a starts with #0000002a, which JSON reads as a raw key, not a name"
    );
    assert_eq!((store.len(), store.key_names().len()), (1, 0), "nothing changed");
    assert!(store.get(id).unwrap().is_empty());

    // Migrations: a rename to such a path, and a default at one, are bad paths.
    for step in [
        MigrationStep::to(2).rename("n", "#0000002a"),
        MigrationStep::to(2).default("/#0000002a/x", 1.0_f32),
    ] {
        let err = Migrations::new(2).step(step).apply(&mut store).unwrap_err();
        assert!(matches!(err, MigrateError::BadPath { step: 0, to: 2, .. }), "{err}");
    }
    assert_eq!(store.data_version(), 0, "unchanged");

    // Not refused: the raw key itself, a label deeper in a path, a label of another length.
    let mut entity = store.get_mut(id).unwrap();
    entity.set(raw, 1.0_f32).unwrap();
    entity.set("stats.#0000002a", 2.0_f32).unwrap();
    entity.set("#0000002", 3.0_f32).unwrap();
    let text = store.export(id, &ExportOptions::json()).unwrap();
    assert_eq!(text, r##"{"#0000002a":1,"stats":{"#0000002a":2},"#0000002":3}"##);
    let mut back = Store::new();
    let ids = back.import(&text, &strict()).unwrap().ids;
    assert_eq!(entries(back.get(ids[0]).unwrap()), entries(store.get(id).unwrap()));
}

#[test]
fn a_null_raw_member_is_refused_strictly_and_kept_leniently() {
    let text = r##"{"#0000002a": null, "n": 1}"##;
    let err = Blob::import(text, &ImportOptions::strict()).unwrap_err();
    assert_eq!(err.kind(), &JsonErrorKind::Null);
    assert_eq!(err.path(), "/#0000002a");
    let blob = Blob::import(text, &lenient()).unwrap();
    // The report of a lenient import is a store import's: nothing changed.
    let report = Store::new().import(text, &lenient()).unwrap().report;
    assert_eq!(report, datacomp::text::ImportReport::default());
    let mut expected =
        vec![(Key::from_raw(42), OwnedValue::Null), (Key::parse("n"), OwnedValue::Float(1.0))];
    expected.sort_by_key(|(k, _)| *k);
    assert_eq!(entries(blob.as_blob_ref()), expected);
}
