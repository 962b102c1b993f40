//! Prototypes in the text formats: `$id`, `$prototype`, `$abstract`, `$remove`, `$relative`
//! and `$proportional` read by the store import, written back by the export, and every way a
//! document's links can be wrong, refused with the place and nothing changed.

use std::collections::{BTreeMap, BTreeSet};

use datacomp::store::{ABSTRACT_KEY, ID_KEY};
use datacomp::text::JsonErrorKind;
use datacomp::{
    ExportError, ExportOptions, Id, ImportOptions, JsonError, Store, TextFormat, Value, ValueType,
};
use proptest::collection::{btree_map, btree_set, vec};
use proptest::prelude::*;

const MONSTERS: &str = include_str!("../fixtures/prototypes/monsters.json");

fn import(store: &mut Store, text: &str) -> Result<Vec<Id>, JsonError> {
    store.import(text, &ImportOptions::strict()).map(|imported| imported.ids)
}

/// Imports `text` into a store holding one entity already, expecting an error, and checks
/// the import changed nothing; returns the error.
fn refused(text: &str) -> JsonError {
    let mut store = Store::new();
    import(&mut store, r#"{"$id": "old", "hp": 1}"#).unwrap();
    let before = store.clone();
    let err = import(&mut store, text).unwrap_err();
    assert_eq!(store, before, "a failed import changes nothing");
    assert_eq!(store.key_names().count(), before.key_names().count());
    err
}

#[test]
fn the_fixture_reads_in_any_order_with_sugar_and_removals() {
    let mut store = Store::new();
    let ids = import(&mut store, MONSTERS).unwrap();
    let [chief, orc, goblin, snaga, grishnak, gorbag] = ids[..] else { panic!("{ids:?}") };
    // The chieftain comes before its base in the file.
    assert_eq!(store.prototype(chief), Some(orc));
    assert_eq!(store.prototype(orc), None);
    for instance in [snaga, grishnak, gorbag] {
        assert_eq!(store.prototype(instance), Some(goblin));
    }
    // `$id` and `$abstract` are keys of the entity that holds them.
    assert_eq!(store.get(orc).unwrap().get_str(ID_KEY), Some("orc"));
    assert_eq!(store.get(goblin).unwrap().get_bool(ABSTRACT_KEY), Some(true));
    assert_eq!(store.get(snaga).unwrap().get(ID_KEY), None);
    // Sugar, resolved against the prototype once: 30 + 30, 4 x 1.5, stored as overrides.
    let sheet = store.resolved(chief).unwrap();
    assert_eq!(sheet.get_float("stats.health"), Some(60.0));
    assert_eq!(sheet.get_float("stats.armor"), Some(6.0));
    assert_eq!(sheet.get_with_source("stats.speed"), Some((Value::Float(1.0), orc)));
    assert_eq!(store.get(chief).unwrap().get_float("stats.health"), Some(60.0));
    // An instance stores its overrides only.
    assert_eq!(store.get(snaga).unwrap().len(), 1);
    assert_eq!(store.resolved(snaga).unwrap().get_float("stats.health"), Some(7.0));
    assert_eq!(store.resolved(grishnak).unwrap().get_float("stats.health"), Some(9.0));
    // `$remove` is a tombstone.
    assert_eq!(store.get(gorbag).unwrap().get("status_effects.poisoned"), Some(Value::Tombstone));
    assert_eq!(store.resolved(gorbag).unwrap().get("status_effects.poisoned"), None);
    assert_eq!(store.resolved(snaga).unwrap().get_bool("status_effects.poisoned"), Some(true));
}

#[test]
fn sugar_is_resolved_once_at_import_and_through_chains_and_the_store() {
    let mut store = Store::new();
    let base = r#"{"$id": "orc", "stats": {"health": 30, "armor": 4}}"#;
    let [orc] = import(&mut store, base).unwrap()[..] else { panic!() };
    // A second document reads the store's base; a chain's sugar reads the sugar above it.
    let text = r#"[
        {"$prototype": "chief", "$id": "heir", "$proportional": {"stats": {"health": 0.5}}},
        {"$prototype": "orc", "$id": "chief", "$relative": {"stats": {"health": 10, "armor": -1}}}
    ]"#;
    let [heir, chief] = import(&mut store, text).unwrap()[..] else { panic!() };
    assert_eq!(store.resolved(chief).unwrap().get_float("stats.health"), Some(40.0));
    assert_eq!(store.resolved(chief).unwrap().get_float("stats.armor"), Some(3.0));
    assert_eq!(store.resolved(heir).unwrap().get_float("stats.health"), Some(20.0));
    // Not re-resolved when the base changes: the result is the instance's own value.
    store.get_mut(orc).unwrap().set("stats.health", 100.0).unwrap();
    assert_eq!(store.resolved(chief).unwrap().get_float("stats.health"), Some(40.0));
    assert_eq!(store.resolved(chief).unwrap().get_float("stats.armor"), Some(3.0));
    store.get_mut(orc).unwrap().set("stats.armor", 9.0).unwrap();
    assert_eq!(store.resolved(chief).unwrap().get_float("stats.armor"), Some(3.0));
    // The export writes the result, not the sugar.
    assert_eq!(
        store.export(chief, &ExportOptions::json()).unwrap(),
        r#"{"$prototype":"orc","$id":"chief","stats":{"health":40,"armor":3}}"#
    );
}

#[test]
fn export_writes_overrides_and_links_and_imports_back_into_an_equal_store() {
    for format in [TextFormat::Json, TextFormat::Sjson] {
        let mut store = Store::new();
        let ids = import(&mut store, MONSTERS).unwrap();
        store.remove_inherited(ids[0], "status_effects.enraged").unwrap();
        let options = match format {
            TextFormat::Json => ExportOptions::json().pretty(true),
            TextFormat::Sjson => ExportOptions::sjson(),
        };
        let text = store.export_all(&options).unwrap();
        let mut copy = Store::new();
        let copied = copy.import(&text, &ImportOptions::strict().format(format)).unwrap().ids;
        assert_eq!(copied, ids, "{format:?}");
        assert_eq!(copy, store, "{format:?}: {text}");
        for &id in &ids {
            assert_eq!(copy.prototype(id), store.prototype(id), "{format:?}");
        }
        assert_eq!(copy.export_all(&options).unwrap(), text);
    }
    let mut store = Store::new();
    let ids = import(&mut store, MONSTERS).unwrap();
    assert_eq!(
        store.export(ids[5], &ExportOptions::json()).unwrap(),
        r#"{"$prototype":"goblin","name":"Gorbag","$remove":["status_effects.poisoned"]}"#
    );
    assert_eq!(
        store.export(ids[5], &ExportOptions::sjson()).unwrap(),
        "\"$prototype\" = \"goblin\"\nname = \"Gorbag\"\n\"$remove\" = [\"status_effects.poisoned\"]"
    );
    assert_eq!(
        store.export(ids[5], &ExportOptions::json().pretty(true)).unwrap(),
        "{\n  \"$prototype\": \"goblin\",\n  \"name\": \"Gorbag\",\n  \"$remove\": [\n    \"status_effects.poisoned\"\n  ]\n}"
    );
}

#[test]
fn a_flattened_export_writes_entities_whole_and_leaves_out_abstract_ones() {
    let mut store = Store::new();
    let ids = import(&mut store, MONSTERS).unwrap();
    let flat = ExportOptions::json().flatten(true);
    assert_eq!(
        store.export(ids[5], &flat).unwrap(),
        r#"{"name":"Gorbag","kind":"monster","stats":{"health":7,"armor":1,"speed":1.25},"loot_table":[0.5,0.25]}"#
    );
    // A named base keeps its own `$id`; its instance does not take it.
    let chief = store.export(ids[0], &flat).unwrap();
    assert!(chief.starts_with(r#"{"$id":"orc_chieftain","name":"Orc Chieftain""#), "{chief}");
    assert_eq!(chief.matches("$id").count(), 1);
    let all = store.export_all(&flat).unwrap();
    let mut copy = Store::new();
    let copied = import(&mut copy, &all).unwrap();
    assert_eq!(copied.len(), 5, "the abstract goblin is left out");
    for (&id, &from) in copied.iter().zip(&[ids[0], ids[1], ids[3], ids[4], ids[5]]) {
        assert_eq!(copy.prototype(id), None);
        assert_eq!(copy.export(id, &flat).unwrap(), store.export(from, &flat).unwrap());
    }
    // export_at reads through the chain with flatten, the own blob without.
    assert_eq!(
        store.export_at(ids[3], "stats", &flat).unwrap(),
        r#"{"health":7,"armor":1,"speed":1.25}"#
    );
    assert!(matches!(
        store.export_at(ids[3], "stats", &ExportOptions::json()),
        Err(ExportError::NoPath { .. })
    ));
    assert!(matches!(
        store.export_at(ids[5], "status_effects.poisoned", &ExportOptions::json()),
        Err(ExportError::NoPath { .. })
    ));
}

#[test]
fn a_prototype_without_an_id_is_refused_by_the_export_but_not_flattened() {
    let mut store = Store::new();
    let orc = store.insert_entries([("hp", 30.0)]).unwrap();
    let grunt = store.insert_instance(orc).unwrap();
    let err = store.export(grunt, &ExportOptions::json()).unwrap_err();
    assert_eq!(err, ExportError::UnnamedPrototype { entity: Some(grunt), prototype: orc });
    assert_eq!(
        err.to_string(),
        "entity 1v0t1: its prototype 0v0t1 has no $id to name it by (set one, or export flattened)"
    );
    assert!(store.export_all(&ExportOptions::sjson()).is_err());
    assert_eq!(store.export(grunt, &ExportOptions::json().flatten(true)).unwrap(), r#"{"hp":30}"#);
    store.get_mut(orc).unwrap().set("$id", "orc").unwrap();
    assert_eq!(store.export(grunt, &ExportOptions::json()).unwrap(), r#"{"$prototype":"orc"}"#);
}

#[test]
fn two_entities_given_one_id_through_the_api_are_refused_by_a_whole_export() {
    let mut store = Store::new();
    let ids = import(&mut store, MONSTERS).unwrap();
    let [_, orc, goblin, snaga, ..] = ids[..] else { panic!("{ids:?}") };
    // An instance named as its abstract base: a flattened export leaves the base out, so
    // only the one named "goblin" is written, and it reads back.
    store.get_mut(snaga).unwrap().set("$id", "goblin").unwrap();
    for (options, format) in
        [(ExportOptions::json(), TextFormat::Json), (ExportOptions::sjson(), TextFormat::Sjson)]
    {
        let err = store.export_all(&options).unwrap_err();
        assert_eq!(
            err,
            ExportError::DuplicateId { id: "goblin".to_owned(), first: goblin, second: snaga }
        );
        assert_eq!(
            err.to_string(),
            format!(
                "entities {goblin} and {snaga} both have the $id \"goblin\": an import would \
                 refuse the second (give each a name of its own)"
            )
        );
        let flat = store.export_all(&options.flatten(true)).unwrap();
        let mut again = Store::new();
        let format = ImportOptions::strict().format(format);
        assert_eq!(again.import(&flat, &format).unwrap().ids.len(), 5);
    }
    // Two written entities: refused flattened too; one export of either is one entity.
    store.get_mut(snaga).unwrap().set("$id", "orc").unwrap();
    let err = store.export_all(&ExportOptions::json().flatten(true)).unwrap_err();
    assert_eq!(err, ExportError::DuplicateId { id: "orc".to_owned(), first: orc, second: snaga });
    assert!(store.export(snaga, &ExportOptions::json()).is_ok());
    // Named apart, the store exports and reads back whole.
    store.get_mut(snaga).unwrap().set("$id", "snaga").unwrap();
    let text = store.export_all(&ExportOptions::json()).unwrap();
    let mut again = Store::new();
    assert_eq!(import(&mut again, &text).unwrap().len(), 6);
}

#[test]
fn an_unknown_prototype_is_refused_at_its_member() {
    let err = refused("[{\"$id\": \"a\"},\n {\"$prototype\": \"orcc\", \"hp\": 2}]");
    assert_eq!(err.kind(), &JsonErrorKind::UnknownPrototype { name: "orcc".into() });
    assert_eq!((err.path(), err.line(), err.column()), ("/1/$prototype", 2, 22));
    assert_eq!(
        err.to_string(),
        r#"/1/$prototype (line 2, column 22): no entity has the $id "orcc""#
    );
}

#[test]
fn a_second_id_is_refused_in_the_document_and_against_the_store() {
    let err = refused(r#"[{"$id": "a"}, {"$id": "b"}, {"$id": "a"}]"#);
    assert_eq!(err.kind(), &JsonErrorKind::DuplicateId { id: "a".into(), first: "/0".into() });
    assert_eq!((err.path(), err.line(), err.column()), ("/2/$id", 1, 40));
    let err = refused(r#"{"hp": 3, "$id": "old"}"#);
    assert_eq!(
        err.kind(),
        &JsonErrorKind::DuplicateId { id: "old".into(), first: "entity 0v0t1".into() }
    );
    assert_eq!(
        err.to_string(),
        r#"/$id (line 1, column 22): the $id "old" is taken, by entity 0v0t1"#
    );
}

#[test]
fn cycles_are_refused_however_long() {
    let err = refused(r#"{"$id": "a", "$prototype": "a"}"#);
    assert_eq!(err.kind(), &JsonErrorKind::PrototypeCycle { id: "a".into(), len: 1 });
    assert_eq!(err.path(), "/$prototype");
    let err = refused(r#"[{"$id": "a", "$prototype": "b"}, {"$id": "b", "$prototype": "a"}]"#);
    assert_eq!(err.kind(), &JsonErrorKind::PrototypeCycle { id: "a".into(), len: 2 });
    assert_eq!((err.path(), err.line(), err.column()), ("/0/$prototype", 1, 31));
    assert_eq!(
        err.to_string(),
        r#"/0/$prototype (line 1, column 31): the prototype chain of "a" comes back to it, through 2 entities"#
    );
    let n = 10_000;
    let ring: Vec<String> =
        (0..n).map(|i| format!(r#"{{"$id": "e{i}", "$prototype": "e{}"}}"#, (i + 1) % n)).collect();
    let err = refused(&format!("[{}]", ring.join(",\n")));
    assert_eq!(err.kind(), &JsonErrorKind::PrototypeCycle { id: "e0".into(), len: n });
    assert_eq!((err.path(), err.line()), ("/0/$prototype", 1));
}

/// A document of a chain: entity `i` has the prototype `i + 1`, the last none.
fn chain(entities: usize) -> String {
    let links: Vec<String> = (0..entities)
        .map(|i| match i + 1 {
            next if next < entities => format!(r#"{{"$id": "e{i}", "$prototype": "e{next}"}}"#),
            _ => format!(r#"{{"$id": "e{i}", "hp": 1}}"#),
        })
        .collect();
    format!("[{}]", links.join(",\n"))
}

#[test]
fn a_chain_past_the_limit_is_refused_at_the_entity_that_passes_it() {
    let limit = datacomp::store::MAX_CHAIN;
    let mut store = Store::new();
    let ids = import(&mut store, &chain(limit + 1)).unwrap();
    assert_eq!(store.resolved(ids[0]).unwrap().chain().count(), limit);
    assert_eq!(store.resolved(ids[0]).unwrap().get_float("hp"), Some(1.0));
    let err = refused(&chain(limit + 2));
    assert_eq!(err.kind(), &JsonErrorKind::ChainTooLong { len: limit + 1, limit });
    assert_eq!((err.path(), err.line()), ("/0/$prototype", 1));
    // Through the store: a base already at the limit takes no instance.
    let err = import(&mut store, r#"{"$prototype": "e0"}"#).unwrap_err();
    assert_eq!(err.kind(), &JsonErrorKind::ChainTooLong { len: limit + 1, limit });
    assert_eq!(
        err.to_string(),
        format!(
            "/$prototype (line 1, column 19): the entity would have 17 prototypes above it, past the limit of {limit}"
        )
    );
}

#[test]
fn reserved_members_hold_what_they_say() {
    let cases: [(&str, &str, &str, &str); 7] = [
        (r#"{"$id": 7}"#, "/$id", "$id", "a non-empty string, the entity's stable name"),
        (r#"{"$id": ""}"#, "/$id", "$id", "a non-empty string, the entity's stable name"),
        (
            r#"{"$prototype": null}"#,
            "/$prototype",
            "$prototype",
            "a string, the $id of the entity's prototype",
        ),
        (r#"{"$abstract": "yes"}"#, "/$abstract", "$abstract", "true or false"),
        (r#"{"$remove": "hp"}"#, "/$remove", "$remove", "an array of key paths (strings)"),
        (r#"{"$remove": ["hp", 3]}"#, "/$remove/1", "$remove", "an array of key paths (strings)"),
        (r#"{"$relative": {"hp": "x"}}"#, "/$relative/hp", "$relative", "an object of numbers"),
    ];
    for (text, path, member, expected) in cases {
        let err = refused(text);
        assert_eq!(err.kind(), &JsonErrorKind::Reserved { member, expected }, "{text}");
        assert_eq!(err.path(), path, "{text}");
    }
    // Deeper, and any other `$` name, is a name like any other.
    let mut store = Store::new();
    let ids = import(&mut store, r#"{"$schema": "x", "a": {"$id": 1, "$prototype": 2}}"#).unwrap();
    assert_eq!(store.get(ids[0]).unwrap().get_float("a.$prototype"), Some(2.0));
    assert_eq!(store.prototype(ids[0]), None);
}

#[test]
fn sugar_and_removals_need_a_prototype_that_holds_a_number() {
    let err = refused(r#"{"hp": 1, "$relative": {"hp2": 3}}"#);
    assert_eq!(err.kind(), &JsonErrorKind::NeedsStore { member: "$relative" });
    assert_eq!(err.path(), "/$relative/hp2");
    let err = refused(r#"{"$remove": ["hp"]}"#);
    assert_eq!(err.kind(), &JsonErrorKind::NeedsStore { member: "$remove" });
    assert_eq!(err.path(), "/$remove/0");
    let base = r#"{"$id": "b", "name": "B", "hp": 4}"#;
    let err =
        refused(&format!(r#"[{base}, {{"$prototype": "b", "$proportional": {{"name": 2}}}}]"#));
    assert_eq!(
        err.kind(),
        &JsonErrorKind::NoBaseNumber { member: "$proportional", found: Some(ValueType::Str) }
    );
    assert_eq!(err.path(), "/1/$proportional/name");
    assert_eq!(
        err.to_string(),
        format!(
            "/1/$proportional/name (line 1, column {}): $proportional needs a number in the prototype, which holds a string here",
            base.len() + 50
        )
    );
    let err = refused(&format!(r#"[{base}, {{"$prototype": "b", "$relative": {{"mp": 2}}}}]"#));
    assert_eq!(err.kind(), &JsonErrorKind::NoBaseNumber { member: "$relative", found: None });
    // A removed key is not there to add to.
    let text = format!(
        r#"[{base}, {{"$id": "c", "$prototype": "b", "$remove": ["hp"]}}, {{"$prototype": "c", "$relative": {{"hp": 1}}}}]"#
    );
    assert_eq!(
        refused(&text).kind(),
        &JsonErrorKind::NoBaseNumber { member: "$relative", found: None }
    );
    // A key set and given as sugar is set twice.
    let text = format!(r#"[{base}, {{"$prototype": "b", "hp": 1, "$relative": {{"hp": 1}}}}]"#);
    assert_eq!(refused(&text).kind(), &JsonErrorKind::DuplicatePath("hp".into()));
    // Past f32.
    let text = r#"[{"$id": "b", "hp": 3e38}, {"$prototype": "b", "$proportional": {"hp": 10}}]"#;
    assert!(matches!(refused(text).kind(), JsonErrorKind::NumberOutOfRange(_)));
}

#[test]
fn a_blob_import_has_no_prototype() {
    let err =
        datacomp::Blob::import(r#"{"$prototype": "orc"}"#, &ImportOptions::strict()).unwrap_err();
    assert_eq!(err.kind(), &JsonErrorKind::NeedsStore { member: "$prototype" });
    let blob =
        datacomp::Blob::import(r#"{"$id": "orc", "$abstract": true}"#, &ImportOptions::strict())
            .unwrap();
    assert_eq!((blob.get_str(ID_KEY), blob.get_bool(ABSTRACT_KEY)), (Some("orc"), Some(true)));
}

#[test]
fn sjson_fixtures_name_prototypes_too() {
    let text = "[\n{\n\"$id\" = \"orc\"\nhp = 30\n}\n{\n\"$prototype\" = \"orcc\"\n}\n]";
    let mut store = Store::new();
    let err = store.import(text, &ImportOptions::strict().format(TextFormat::Sjson)).unwrap_err();
    assert_eq!(err.kind(), &JsonErrorKind::UnknownPrototype { name: "orcc".into() });
    assert_eq!((err.path(), err.line()), ("/1/$prototype", 7));
    assert!(store.is_empty());
    let fixed = text.replace("orcc", "orc");
    let ids = store.import(&fixed, &ImportOptions::strict().format(TextFormat::Sjson)).unwrap().ids;
    assert_eq!(store.resolved(ids[1]).unwrap().get_float("hp"), Some(30.0));
}

/// One entity of a generated document: its prototype (an entity made before it, so there is
/// no cycle), its own numbers by key index, and the key indices it removes.
type Spec = (Option<usize>, BTreeMap<usize, i32>, BTreeSet<usize>);

fn forest() -> impl Strategy<Value = Vec<Spec>> {
    let entity = (any::<u16>(), btree_map(0usize..6, -50i32..50, 0..4), btree_set(0usize..6, 0..3));
    vec(entity, 1..24).prop_map(|raw| {
        let mut depth: Vec<usize> = Vec::new();
        raw.into_iter()
            .enumerate()
            .map(|(i, (pick, own, removed))| {
                let parent = (i > 0 && pick % 3 != 0).then(|| pick as usize % i);
                // Within the store's limit; a deeper pick has no prototype.
                let parent = parent.filter(|&p| depth[p] < datacomp::store::MAX_CHAIN);
                depth.push(parent.map_or(0, |p| depth[p] + 1));
                let removed = match parent {
                    Some(_) => removed.into_iter().filter(|k| !own.contains_key(k)).collect(),
                    None => BTreeSet::new(),
                };
                (parent, own, removed)
            })
            .collect()
    })
}

/// What entity `i` reads at key index `k`, by the rules: its own, nothing if it removes it,
/// else its prototype's.
fn model(specs: &[Spec], mut i: usize, k: usize) -> Option<f32> {
    loop {
        let (parent, own, removed) = &specs[i];
        if let Some(&x) = own.get(&k) {
            return Some(x as f32);
        }
        if removed.contains(&k) {
            return None;
        }
        i = (*parent)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn documents_of_any_order_read_as_the_rules_say_and_round_trip(
        (specs, order) in forest().prop_flat_map(|specs| {
            let order: Vec<usize> = (0..specs.len()).collect();
            (Just(specs), Just(order).prop_shuffle())
        }),
        sjson in any::<bool>(),
    ) {
        let entities: Vec<String> = order
            .iter()
            .map(|&i| {
                let (parent, own, removed) = &specs[i];
                let mut members = vec![format!(r#""$id": "e{i}""#)];
                members.extend(parent.map(|p| format!(r#""$prototype": "e{p}""#)));
                members.extend(own.iter().map(|(k, x)| format!(r#""k{k}": {x}"#)));
                if !removed.is_empty() {
                    let keys: Vec<String> = removed.iter().map(|k| format!(r#""k{k}""#)).collect();
                    members.push(format!(r#""$remove": [{}]"#, keys.join(", ")));
                }
                format!("{{{}}}", members.join(", "))
            })
            .collect();
        let text = format!("[{}]", entities.join(",\n"));
        let mut store = Store::new();
        let ids = import(&mut store, &text).unwrap();
        // Position in the document -> the entity's number.
        let mut id_of = vec![ids[0]; specs.len()];
        for (&i, &id) in order.iter().zip(&ids) {
            id_of[i] = id;
        }
        for (i, (parent, _, _)) in specs.iter().enumerate() {
            prop_assert_eq!(store.prototype(id_of[i]), parent.map(|p| id_of[p]));
            let sheet = store.resolved(id_of[i]).unwrap();
            for k in 0..6 {
                prop_assert_eq!(sheet.get_float(format!("k{k}").as_str()), model(&specs, i, k), "e{} k{}", i, k);
            }
        }
        let (options, format) = if sjson {
            (ExportOptions::sjson(), TextFormat::Sjson)
        } else {
            (ExportOptions::json(), TextFormat::Json)
        };
        let exported = store.export_all(&options).unwrap();
        let mut copy = Store::new();
        let copied = copy.import(&exported, &ImportOptions::strict().format(format)).unwrap().ids;
        prop_assert_eq!(&copied, &ids);
        prop_assert!(copy == store);
        for &id in &ids {
            prop_assert_eq!(copy.prototype(id), store.prototype(id));
        }
    }
}

/// A key set through the API at a name a fixture's top level reserves would be misread by
/// an import: export refuses it, naming the entity and the key; `$id` holding a name and
/// `$abstract` a boolean are what they mean and round trip.
#[test]
fn export_refuses_keys_at_reserved_names_that_an_import_would_misread() {
    use datacomp::ExportError;
    let mut store = Store::new();
    store.insert_entries([("$id", Value::Str("orc")), ("$abstract", Value::Bool(true))]).unwrap();
    let json = ExportOptions::json();
    let text = store.export_all(&json).unwrap();
    assert_eq!(text, r#"[{"$id":"orc","$abstract":true}]"#);
    let mut again = Store::new();
    again.import(&text, &ImportOptions::strict()).unwrap();
    assert_eq!(again.export_all(&json).unwrap(), text);
    for (key, value) in [
        ("$prototype", Value::Str("orc")),
        ("$remove", Value::Float(1.0)),
        ("$relative.stats.health", Value::Float(2.0)),
        ("$proportional", Value::Bool(true)),
        ("$id", Value::Float(7.0)),
        ("$id", Value::Str("")),
        ("$abstract", Value::Str("yes")),
        ("$id.first", Value::Str("x")),
    ] {
        let mut store = Store::new();
        store.insert_entries([("name", "Rock")]).unwrap();
        let id = store.insert_entries([(key, value)]).unwrap();
        let expected = ExportError::ReservedKey { entity: Some(id), key: key.to_owned() };
        assert_eq!(store.export(id, &json), Err(expected.clone()), "{key}");
        assert_eq!(store.export_all(&json), Err(expected.clone()), "{key}");
        assert_eq!(store.export_all(&ExportOptions::sjson()), Err(expected.clone()), "{key}");
        assert_eq!(store.export(id, &json.flatten(true)), Err(expected.clone()), "{key}");
        assert_eq!(
            expected.to_string(),
            format!(
                "entity 1v0t1: {key} is at a name a fixture reserves: an import would read it as that member, not as this value (rename the key)"
            )
        );
        let blob = store.get(id).unwrap();
        let err = datacomp::text::export_blob(&store, blob, &json).unwrap_err();
        assert_eq!(err, ExportError::ReservedKey { entity: None, key: key.to_owned() });
    }
    // A tombstone there is written as `$remove`, and reads back.
    let mut store = Store::new();
    let base = store.insert_entries([("$id", "base")]).unwrap();
    let instance = store.insert_instance(base).unwrap();
    store.remove_inherited(instance, "$prototype").unwrap();
    let text = store.export(instance, &json).unwrap();
    assert_eq!(text, r#"{"$prototype":"base","$remove":["$prototype"]}"#);
    let mut again = Store::new();
    again.import(r#"{"$id":"base"}"#, &ImportOptions::strict()).unwrap();
    let read = again.import(&text, &ImportOptions::strict()).unwrap().ids[0];
    assert_eq!(again.get(read).unwrap().get("$prototype"), Some(Value::Tombstone));
    // An instance inheriting a key at a reserved name: refused when flattened.
    let mut store = Store::new();
    let base = store.insert_entries([("$id", "base")]).unwrap();
    store.get_mut(base).unwrap().set("$remove", 1).unwrap();
    let instance = store.insert_instance(base).unwrap();
    let expected = ExportError::ReservedKey { entity: Some(instance), key: "$remove".to_owned() };
    assert_eq!(store.export(instance, &json.flatten(true)), Err(expected));
    assert_eq!(
        store.export(base, &json).unwrap_err().to_string().get(..22),
        Some("entity 0v0t1: $remove ")
    );
}

/// Imports resolve `$prototype` against the store's `$id`s through an index kept between
/// imports (one scan of the store for many documents): it follows every other change of the
/// store, a renamed `$id`, a removal, a delta, a restore, and refuses a taken name.
#[test]
fn the_index_of_ids_follows_every_change_between_imports() {
    use datacomp::{History, StorePatch};
    let strict = ImportOptions::strict();
    let mut store = Store::new();
    let orc = store.import(r#"{"$id": "orc", "hp": 30}"#, &strict).unwrap().ids[0];
    let grunt = store.import(r#"{"$prototype": "orc"}"#, &strict).unwrap().ids[0];
    assert_eq!(store.prototype(grunt), Some(orc));
    let elf = store.import(r#"{"$id": "elf", "hp": 9}"#, &strict).unwrap().ids[0];
    let unknown = |store: &mut Store, name: &str| {
        let text = format!(r#"{{"$prototype": "{name}"}}"#);
        let err = store.import(&text, &strict).unwrap_err();
        assert!(
            matches!(err.kind(), JsonErrorKind::UnknownPrototype { name: n } if n == name),
            "{err}"
        );
    };
    // Renamed through the API: the old name is gone, the new one found.
    store.get_mut(orc).unwrap().set("$id", "troll").unwrap();
    unknown(&mut store, "orc");
    let troll_kin = store.import(r#"{"$prototype": "troll"}"#, &strict).unwrap().ids[0];
    assert_eq!(store.prototype(troll_kin), Some(orc));
    let err = store.import(r#"{"$id": "troll"}"#, &strict).unwrap_err();
    assert_eq!(
        err.kind(),
        &JsonErrorKind::DuplicateId { id: "troll".to_owned(), first: format!("entity {orc}") }
    );
    // Removed: its name is free again.
    assert!(store.remove(elf));
    unknown(&mut store, "elf");
    let new_elf = store.import(r#"{"$id": "elf"}"#, &strict).unwrap().ids[0];
    let kin = store.import(r#"{"$prototype": "elf"}"#, &strict).unwrap().ids[0];
    assert_eq!(store.prototype(kin), Some(new_elf));
    // A delta that renames, applied to an untracked store.
    let mut renamed = store.clone();
    renamed.get_mut(new_elf).unwrap().set("$id", "sylph").unwrap();
    let delta = StorePatch::diff(&store, &renamed);
    delta.apply(&mut store).unwrap();
    unknown(&mut store, "elf");
    let sylph_kin = store.import(r#"{"$prototype": "sylph"}"#, &strict).unwrap().ids[0];
    assert_eq!(store.prototype(sylph_kin), Some(new_elf));
    // Undone by history: the name comes back.
    let mut history = History::with_max_bytes(1 << 20);
    history.commit(&store);
    store.get_mut(new_elf).unwrap().set("$id", "dryad").unwrap();
    history.commit(&store);
    let dryad_kin = store.import(r#"{"$prototype": "dryad"}"#, &strict).unwrap().ids[0];
    assert_eq!(store.prototype(dryad_kin), Some(new_elf));
    assert!(history.undo(&mut store));
    unknown(&mut store, "dryad");
    let back = store.import(r#"{"$prototype": "sylph"}"#, &strict).unwrap().ids[0];
    assert_eq!(store.prototype(back), Some(new_elf));
}
