//! `Migrations` and `Migrations::apply`: the JSON format's errors (exact kinds, places and steps),
//! each step's semantics and errors (the store unchanged after each), a model test of random
//! migration sequences on random stores against a model of each entity's ordered entries, and
//! the property that migrating then exporting equals exporting then applying the same steps to
//! the JSON.

use std::collections::{BTreeMap, HashMap};

use datacomp::migrate::{MigrateError, MigrationReport};
use datacomp::{
    ExportOptions, Id, ImportOptions, Key, KeyError, MigrationStep, Migrations, OwnedValue, Store,
};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

fn parse_err(text: &str) -> MigrateError {
    Migrations::from_json(text).unwrap_err()
}

/// Migrations to `version` with one step to it.
fn one(version: u32, step: MigrationStep) -> Migrations {
    Migrations::new(version).step(step)
}

/// Runs a migration that must fail; checks the store is unchanged, byte for byte.
fn fails(store: &mut Store, migrations: &Migrations) -> MigrateError {
    let (before, bytes) = (store.clone(), store.to_bytes());
    let err = migrations.apply(store).unwrap_err();
    assert_eq!(*store, before, "{err}");
    assert_eq!(store.to_bytes(), bytes, "{err}");
    err
}

// ---------------------------------------------------------------------------------------------
// The JSON format

#[test]
fn unknown_fields_are_refused_with_their_step() {
    let err = parse_err(r#"{"version": 1, "steps": [], "extra": 1}"#);
    assert_eq!(
        err,
        MigrateError::UnknownField { line: 1, column: 35, step: None, field: "extra".into() }
    );
    assert_eq!(
        err.to_string(),
        "migrations, line 1 column 35: unknown field \"extra\"; migrations have version and steps"
    );
    let text = "{\"version\": 3, \"steps\": [\n  {\"to\": 2},\n  {\"to\": 3, \"sets\": {}}\n]}";
    assert_eq!(
        parse_err(text),
        MigrateError::UnknownField { line: 3, column: 18, step: Some(1), field: "sets".into() }
    );
}

#[test]
fn the_shape_of_every_field_is_checked() {
    let json = |text: &str| match parse_err(text) {
        MigrateError::Json { step, message, .. } => (step, message),
        other => panic!("{text}: {other:?}"),
    };
    assert_eq!(json(r#"{"steps": []}"#), (None, "missing field `version`".into()));
    assert_eq!(json(r#"{"version": 1}"#), (None, "missing field `steps`".into()));
    assert_eq!(
        json(r#"{"version": 1, "steps": [{"remove": []}]}"#),
        (Some(0), "missing field `to`".into())
    );
    assert_eq!(
        json(r#"{"version": 2, "steps": [{"to": 1}, {"to": "2"}]}"#),
        (Some(1), "invalid type: string \"2\", expected u32".into())
    );
    assert_eq!(
        json(r#"{"version": 1, "steps": [{"to": 1, "to": 1}]}"#),
        (Some(0), "duplicate field \"to\"".into())
    );
    assert_eq!(
        json(r#"{"version": 1, "steps": [{"to": 1, "remove": [], "remove": []}]}"#),
        (Some(0), "duplicate field \"remove\"".into())
    );
    assert_eq!(
        json(r#"{"version": 1, "version": 1, "steps": []}"#),
        (None, "duplicate field \"version\"".into())
    );
    assert_eq!(
        json(r#"{"version": 1, "steps": [{"to": 1, "rename": {"a": 1}}]}"#),
        (Some(0), "invalid type: integer `1`, expected a string".into())
    );
    assert_eq!(
        json(r#"{"version": 1, "steps": [{"to": 1, "remove": "a"}]}"#),
        (Some(0), "invalid type: string \"a\", expected a sequence".into())
    );
    assert_eq!(
        json(r#"{"version": -1, "steps": []}"#),
        (None, "invalid value: integer `-1`, expected u32".into())
    );
    assert_eq!(json(r#"{"version": 1, "steps": []} x"#), (None, "trailing characters".into()));
    assert_eq!(
        json("[]"),
        (None, "invalid type: sequence, expected an object with version and steps".into())
    );
    assert_eq!(json(""), (None, "EOF while parsing a value".into()));
    // After the steps, an error is in no step.
    assert_eq!(
        json(r#"{"steps": [{"to": 1}], "version": "1"}"#),
        (None, "invalid type: string \"1\", expected u32".into())
    );
}

#[test]
fn values_are_booleans_numbers_strings_or_arrays_of_numbers() {
    let migrations = Migrations::from_json(
        r#"{"version": 1, "steps": [{"to": 1, "set": {"b": true, "f": 0.1, "s": "x", "a": [1, 2.5], "e": []}}]}"#,
    )
    .unwrap();
    let built = one(
        1,
        MigrationStep::to(1)
            .set("b", true)
            .set("f", 0.1_f32)
            .set("s", "x")
            .set("a", [1.0_f32, 2.5])
            .set("e", Vec::<f32>::new()),
    );
    assert_eq!(migrations, built);
    let value = |v: &str| match parse_err(&format!(
        r#"{{"version": 1, "steps": [{{"to": 1, "default": {{"p": {v}}}}}]}}"#
    )) {
        MigrateError::Value { step: 0, path, problem, .. } if path == "p" => problem,
        other => panic!("{v}: {other:?}"),
    };
    let any = "a value is a boolean, a number, a string, an array of numbers or null";
    assert_eq!(value(r#"{"luck": 1}"#), any);
    assert_eq!(value("[1, null]"), "an array holds numbers only");
    // Null is a value (issue 29): set, defaulted and read back as one.
    let nulls = Migrations::from_json(
        r#"{"version": 1, "steps": [{"to": 1, "set": {"firmness": null}, "default": {"gift": null}}]}"#,
    )
    .unwrap();
    let mut store = Store::new();
    let id =
        store.import(r#"{"firmness": "soft", "hp": 1}"#, &ImportOptions::strict()).unwrap().ids[0];
    nulls.apply(&mut store).unwrap();
    let sheet = store.get(id).unwrap();
    assert_eq!(sheet.get("firmness"), Some(datacomp::Value::Null));
    assert_eq!(sheet.get("gift"), Some(datacomp::Value::Null));
    assert_eq!(
        store.export(id, &ExportOptions::json()).unwrap(),
        r#"{"firmness":null,"hp":1,"gift":null}"#
    );
    assert_eq!(value("1e39"), "a number past the range of f32");
    assert_eq!(value("[1, 1e39]"), "a number past the range of f32");
    assert_eq!(value("[1, \"x\"]"), "an array holds numbers only");
    assert_eq!(value("[[1]]"), "an array holds numbers only");
    // Deep nesting stops at the reader's limit, with an error, not a crash.
    let deep = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
    let err =
        parse_err(&format!(r#"{{"version": 1, "steps": [{{"to": 1, "set": {{"p": {deep}}}}}]}}"#));
    assert!(
        matches!(err, MigrateError::Json { step: Some(0), ref message, .. } if message == "recursion limit exceeded"),
        "{err:?}"
    );
}

#[test]
fn steps_are_in_order_and_up_to_the_version() {
    let order = parse_err(r#"{"version": 3, "steps": [{"to": 2}, {"to": 2}]}"#);
    assert_eq!(order, MigrateError::StepOrder { step: 1, to: 2, previous: 2 });
    assert_eq!(
        order.to_string(),
        "steps[1] (to 2): steps are in ascending order of to, and the step before leads to 2"
    );
    let zero = parse_err(r#"{"version": 3, "steps": [{"to": 0}]}"#);
    assert_eq!(zero, MigrateError::StepOrder { step: 0, to: 0, previous: 0 });
    assert_eq!(zero.to_string(), "steps[0] (to 0): a step leads to a data version above 0");
    let past = parse_err(r#"{"version": 3, "steps": [{"to": 4}]}"#);
    assert_eq!(past, MigrateError::StepPastVersion { step: 0, to: 4, version: 3 });
    assert_eq!(past.to_string(), "steps[0] (to 4): past the migrations' version 3");
    // Built in code, the same checks run when it is used.
    let mut store = Store::new();
    let built = Migrations::new(3).step(MigrationStep::to(3)).step(MigrationStep::to(2));
    assert_eq!(fails(&mut store, &built), MigrateError::StepOrder { step: 1, to: 2, previous: 3 });
}

#[test]
fn overlapping_paths_where_that_is_ambiguous_are_refused() {
    let overlap =
        |step: &str| parse_err(&format!(r#"{{"version": 1, "steps": [{{"to": 1, {step}}}]}}"#));
    let err = overlap(r#""rename": {"a": "x", "a.b": "y"}"#);
    assert_eq!(
        err,
        MigrateError::Overlap {
            step: 0,
            to: 1,
            what: "renames from",
            first: "a".into(),
            second: "a.b".into()
        }
    );
    assert_eq!(
        err.to_string(),
        "steps[0] (to 1): renames from a and a.b overlap (one is the other, or under it)"
    );
    // A dotted path and the pointer of the same path are one path.
    assert!(matches!(
        overlap(r#""rename": {"a.b": "x", "/a/b": "y"}"#),
        MigrateError::Overlap { what: "renames from", .. }
    ));
    assert!(matches!(
        overlap(r#""rename": {"a": "x", "b": "x.y"}"#),
        MigrateError::Overlap { what: "renames to", .. }
    ));
    assert!(matches!(
        overlap(r#""default": {"a": 1}, "set": {"a.b": 2}"#),
        MigrateError::Overlap { what: "defaults and sets", .. }
    ));
    // Not overlapping: a sibling with a longer name, a member name holding a dot.
    assert!(
        Migrations::from_json(
            r#"{"version": 1, "steps": [{"to": 1, "rename": {"a": "x", "ab": "y", "/a.b": "z"}}]}"#
        )
        .is_ok()
    );
    // A path is not empty, and a rename goes somewhere else.
    assert_eq!(
        overlap(r#""remove": [""]"#),
        MigrateError::BadPath {
            step: 0,
            to: 1,
            path: String::new(),
            problem: "a path is a dotted path or a JSON Pointer, and not empty"
        }
    );
    assert_eq!(
        overlap(r#""rename": {"a.b": "/a/b"}"#).to_string(),
        "steps[0] (to 1): bad path \"a.b\": a rename to the same path"
    );
}

// ---------------------------------------------------------------------------------------------
// What each step does

/// A store imported from `json` (names recorded).
fn imported(json: &str) -> (Store, Vec<Id>) {
    let mut store = Store::new();
    let ids = store.import(json, &ImportOptions::strict()).unwrap().ids;
    (store, ids)
}

#[test]
fn renames_in_one_step_move_at_once_so_two_keys_can_swap() {
    let (mut store, ids) = imported(r#"{"a": 1, "b": {"x": 2, "y": "s"}}"#);
    let step = MigrationStep::to(1).rename("a", "b").rename("b", "a");
    let report = one(1, step).apply(&mut store).unwrap();
    assert_eq!(report.steps[0].renamed, 3);
    assert_eq!(
        store.export(ids[0], &ExportOptions::json()).unwrap(),
        r#"{"b":1,"a":{"x":2,"y":"s"}}"#
    );
}

#[test]
fn steps_chain_and_a_store_runs_only_the_steps_above_its_version() {
    let migrations = Migrations::new(4)
        .step(MigrationStep::to(2).rename("hp", "stats.health"))
        .step(MigrationStep::to(3).rename("stats", "attributes"))
        .step(MigrationStep::to(4).default("attributes.health", 10));
    let (mut old, ids) = imported(r#"[{"hp": 5}, {"name": "x"}]"#);
    let report = migrations.apply(&mut old).unwrap();
    assert_eq!(report.steps.iter().map(|s| s.to).collect::<Vec<_>>(), [2, 3, 4]);
    assert_eq!(
        old.export(ids[0], &ExportOptions::json()).unwrap(),
        r#"{"attributes":{"health":5}}"#
    );
    assert_eq!(
        old.export(ids[1], &ExportOptions::json()).unwrap(),
        r#"{"name":"x","attributes":{"health":10}}"#
    );

    // A store at version 3 holds version 3 keys: only the last step runs.
    let (mut newer, ids) = imported(r#"[{"hp": 5, "stats": {"mana": 1}}]"#);
    newer.set_data_version(3);
    let report = migrations.apply(&mut newer).unwrap();
    assert_eq!((report.from, report.steps.len(), report.steps[0].to), (3, 1, 4));
    assert_eq!(
        newer.export(ids[0], &ExportOptions::json()).unwrap(),
        r#"{"hp":5,"stats":{"mana":1},"attributes":{"health":10}}"#
    );
    assert_eq!(newer.data_version(), 4);
}

#[test]
fn a_step_renames_then_removes_then_defaults_then_sets() {
    let (mut store, ids) = imported(r#"[{"hp": 5, "old": 1}, {"old": 2}]"#);
    // The first entity's hp becomes stats.health, which the set of stats.health.max would run
    // through; the second has no hp.
    let step = MigrationStep::to(1).rename("hp", "stats.health").set("stats.health.max", 1);
    let err = fails(&mut store, &one(1, step.clone()));
    assert_eq!(
        err,
        MigrateError::PathIsObject {
            step: 0,
            to: 1,
            id: ids[0],
            op: "rename",
            path: "stats.health".into(),
            under: "stats.health.max".into()
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "steps[0] (to 1), entity {}: rename stats.health would make a value of an object: \
             the entity holds stats.health.max",
            ids[0]
        )
    );
    // Seen from the set's side (the entity's stats.health is already there).
    let (mut other, other_ids) = imported(r#"{"stats": {"health": 5}}"#);
    assert_eq!(
        fails(&mut other, &one(1, step)),
        MigrateError::PathThroughValue {
            step: 0,
            to: 1,
            id: other_ids[0],
            op: "set",
            path: "stats.health.max".into(),
            value: "stats.health".into()
        }
    );
    let step = MigrationStep::to(1)
        .rename("hp", "stats.health")
        .rename("old", "gone")
        .remove("gone")
        .default("stats.health", 100)
        .set("tag", "v1");
    let report = one(1, step).apply(&mut store).unwrap();
    let s = report.steps[0];
    assert_eq!((s.entities, s.renamed, s.removed, s.defaulted, s.set), (2, 3, 2, 1, 2));
    assert_eq!(
        store.export(ids[0], &ExportOptions::json()).unwrap(),
        r#"{"stats":{"health":5},"tag":"v1"}"#
    );
    assert_eq!(
        store.export(ids[1], &ExportOptions::json()).unwrap(),
        r#"{"stats":{"health":100},"tag":"v1"}"#
    );
}

#[test]
fn a_set_to_the_value_held_changes_nothing() {
    let (mut store, ids) = imported(r#"[{"tag": "v1"}, {"tag": "v0"}]"#);
    let before = store.get(ids[0]).unwrap().as_bytes().to_vec();
    let report = one(1, MigrationStep::to(1).set("tag", "v1")).apply(&mut store).unwrap();
    assert_eq!((report.steps[0].entities, report.steps[0].set), (1, 1));
    assert_eq!(store.get(ids[0]).unwrap().as_bytes(), before, "copied as it was");
    assert_eq!(store.get(ids[1]).unwrap().get_str("tag"), Some("v1"));
}

#[test]
fn a_key_without_a_name_moves_only_by_its_own_path() {
    let mut store = Store::new();
    let hero = store.insert_entries([("inventory.sword", 1)]).unwrap();
    // Set by hash: the store has no name for these.
    let mut sheet = store.get_mut(hero).unwrap();
    sheet.set(Key::parse("inventory.shield"), 2).unwrap();
    sheet.set(Key::parse("hp"), 3).unwrap();
    let step = MigrationStep::to(1).rename("inventory", "items").rename("hp", "stats.health");
    one(1, step).apply(&mut store).unwrap();
    let hero = store.get(hero).unwrap();
    assert_eq!(hero.get_float("items.sword"), Some(1.0), "found by its name");
    assert_eq!(hero.get_float("inventory.shield"), Some(2.0), "no name: not found under inventory");
    assert_eq!(hero.get_float("stats.health"), Some(3.0), "its own path, exactly");
    assert_eq!(store.key_name(Key::parse("stats.health")).as_deref(), Some("stats.health"));
}

#[test]
fn paths_with_dots_in_member_names_are_json_pointers() {
    let (mut store, ids) = imported(r#"{"a.b": {"c": 1}, "a": {"b": {"c": 2}}}"#);
    one(1, MigrationStep::to(1).rename("/a.b", "x")).apply(&mut store).unwrap();
    assert_eq!(
        store.export(ids[0], &ExportOptions::json()).unwrap(),
        r#"{"x":{"c":1},"a":{"b":{"c":2}}}"#
    );
    one(2, MigrationStep::to(2).rename("a.b", "/y.z")).apply(&mut store).unwrap();
    assert_eq!(
        store.export(ids[0], &ExportOptions::json()).unwrap(),
        r#"{"x":{"c":1},"y.z":{"c":2}}"#
    );
    assert_eq!(store.key_label(Key::path(&["y.z", "c"])), "/y.z/c");
}

#[test]
fn entity_errors_name_the_step_entity_and_keys_and_change_nothing() {
    let (mut store, ids) =
        imported(r#"[{"name": "a"}, {"hp": 1, "stats": {"health": 2}}, {"stats": {"mana": 1}}]"#);
    let err = fails(&mut store, &one(2, MigrationStep::to(2).rename("hp", "stats.health")));
    assert_eq!(
        err,
        MigrateError::RenameOntoKey {
            step: 0,
            to: 2,
            id: ids[1],
            from: "hp".into(),
            onto: "stats.health".into()
        }
    );
    let err = fails(&mut store, &one(2, MigrationStep::to(2).default("stats", 1)));
    assert_eq!(
        err,
        MigrateError::PathIsObject {
            step: 0,
            to: 2,
            id: ids[1],
            op: "default",
            path: "stats".into(),
            under: "stats.health".into()
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "steps[0] (to 2), entity {}: default stats would make a value of an object: the \
             entity holds stats.health",
            ids[1]
        )
    );
    assert_eq!(
        fails(&mut store, &one(2, MigrationStep::to(2).rename("hp", "stats"))),
        MigrateError::PathIsObject {
            step: 0,
            to: 2,
            id: ids[1],
            op: "rename",
            path: "stats".into(),
            under: "stats.health".into()
        }
    );
    // Two names with one hash.
    store.insert_key_name("sleep_haste_8").unwrap();
    let err = fails(&mut store, &one(2, MigrationStep::to(2).set("fury_sleep_272", 1)));
    let collision = KeyError::Collision {
        key: Key::parse("sleep_haste_8"),
        name: "fury_sleep_272".into(),
        known: "sleep_haste_8".into(),
    };
    assert_eq!(err, MigrateError::KeyCollision { step: 0, to: 2, collision });
    assert_eq!(
        err.to_string(),
        "steps[0] (to 2): fury_sleep_272 and sleep_haste_8 hash to the same key #316ec2d7"
    );
    store.set_data_version(3);
    assert_eq!(
        fails(&mut store, &Migrations::new(2)),
        MigrateError::StoreAhead { data_version: 3, version: 2 }
    );
}

#[test]
fn an_empty_store_or_no_steps_only_sets_the_version() {
    let mut store = Store::new();
    let report = Migrations::from_json(r#"{"version": 9, "steps": []}"#).unwrap().apply(&mut store);
    assert_eq!(report.unwrap().to_string(), "data version 0 -> 9\n");
    assert_eq!(store.data_version(), 9);
    let (mut store, _) = imported(r#"{"a": 1}"#);
    let before = store.to_bytes();
    let report = one(1, MigrationStep::to(1).remove("b")).apply(&mut store).unwrap();
    assert_eq!(report.steps[0].keys(), 0);
    assert_eq!(report.to_string(), "data version 0 -> 1\n  steps[0] (to 1): 0 entities changed\n");
    assert_eq!(store.to_bytes()[32..], before[32..], "only the header's data version changed");
}

/// A 4,096-float default on 1M entities ran until an allocation failed (33.9 s, 7.77 GB). The
/// output is estimated first, from above: past the limit, refused before any step runs.
#[test]
fn a_migration_whose_output_could_pass_the_limit_is_refused_before_it_runs() {
    let mut store = Store::new();
    for i in 0..100 {
        store.insert_entries([("n", i as f32)]).unwrap();
    }
    store.insert_entries([("f", 1.0)]).unwrap();
    let held: u64 = store.iter().map(|(_, blob)| blob.byte_len() as u64).sum();
    // Steps at or under the store's version run not, and add nothing to the estimate.
    store.set_data_version(1);
    let curve = vec![0.5f32; 4096];
    let migrations = Migrations::new(3)
        .step(MigrationStep::to(1).set("never", vec![0.0f32; 100_000]))
        .step(MigrationStep::to(2).default("f", curve.clone()).set("tag", "v2"))
        .step(MigrationStep::to(3).rename("n", "m").remove("gone"));
    // 101 entities, each may gain the curve (16 + 4 + 16,384 bytes) and the tag (16 + 4 + 4:
    // "v2" padded to a word).
    let estimate = held + 101 * (16 + 4 + 16_384 + 16 + 4 + 4);
    let err = fails(&mut store, &migrations.clone().max_output(estimate - 1));
    assert_eq!(err, MigrateError::OutputTooLarge { estimate, limit: estimate - 1 });
    assert_eq!(
        err.to_string(),
        format!(
            "the migrated entities could take up to {estimate} bytes (every default and set \
             added to each), past the limit of {} bytes",
            estimate - 1
        )
    );
    // At the limit it runs, and takes no more than the estimate.
    let report = migrations.max_output(estimate).apply(&mut store).unwrap();
    assert_eq!(report.steps[0].entities, 101);
    let taken: u64 = store.iter().map(|(_, blob)| blob.byte_len() as u64).sum();
    assert!(taken <= estimate && taken > 100 * 16_384, "{taken} of {estimate}");
    assert_eq!(store.len(), 101);
    // A store at the version runs no step: no estimate, whatever the limit.
    let again = Migrations::new(3).step(MigrationStep::to(3).set("tag", "v3")).max_output(0);
    assert!(again.apply(&mut store).unwrap().steps.is_empty());
    // The default limit: 4 GiB, here and from JSON.
    let parsed = Migrations::from_json(r#"{"version": 1, "steps": []}"#).unwrap();
    assert_eq!(parsed, Migrations::new(1).max_output(Migrations::DEFAULT_MAX_OUTPUT));
    assert_eq!(Migrations::DEFAULT_MAX_OUTPUT, 4 << 30);
}

#[test]
fn the_report_counts_and_reads() {
    let (mut store, _) = imported(r#"[{"hp": 1, "old": 2}, {"hp": 3}]"#);
    let migrations = Migrations::from_json(include_str!("../fixtures/migrations_v3.json")).unwrap();
    let report = migrations.apply(&mut store).unwrap();
    assert_eq!(
        report.to_string(),
        "data version 0 -> 3\n  steps[0] (to 2): 2 entities changed: 2 keys renamed\n  \
         steps[1] (to 3): 2 entities changed: 4 keys defaulted, 2 set\n"
    );
}

// ---------------------------------------------------------------------------------------------
// Model test: random migration sequences on random stores

/// Segments of the paths the tests use; `u` marks paths written without a name.
const SEGMENTS: [&str; 3] = ["a", "b", "u"];

type Path = Vec<String>;

fn key_of(path: &[String]) -> Key {
    Key::path(&path.iter().map(String::as_str).collect::<Vec<_>>())
}

fn dotted(path: &[String]) -> String {
    path.join(".")
}

fn named(path: &[String]) -> bool {
    !path.iter().any(|s| s == "u")
}

fn path() -> impl Strategy<Value = Path> {
    prop::collection::vec(prop::sample::select(&SEGMENTS[..]).prop_map(str::to_owned), 1..=2)
}

fn value() -> impl Strategy<Value = OwnedValue> {
    prop_oneof![
        any::<bool>().prop_map(OwnedValue::Bool),
        (-4..4_i32).prop_map(|f| OwnedValue::Float(f as f32)),
        "[xy]{0,3}".prop_map(OwnedValue::Str),
        prop::collection::vec((0..3_i32).prop_map(|f| f as f32), 0..3).prop_map(OwnedValue::Floats),
        Just(OwnedValue::Null),
    ]
}

#[derive(Clone, Debug, Default)]
struct StepSpec {
    renames: Vec<(Path, Path)>,
    removes: Vec<Path>,
    defaults: Vec<(Path, OwnedValue)>,
    sets: Vec<(Path, OwnedValue)>,
}

fn step_spec() -> impl Strategy<Value = StepSpec> {
    (
        prop::collection::vec((path(), path()), 0..3),
        prop::collection::vec(path(), 0..2),
        prop::collection::vec((path(), value()), 0..2),
        prop::collection::vec((path(), value()), 0..2),
    )
        .prop_map(|(renames, removes, defaults, sets)| StepSpec {
            renames,
            removes,
            defaults,
            sets,
        })
}

#[derive(Clone, Debug)]
enum Op {
    /// Migrations to the store's version plus `ahead` (or minus 1, when `ahead` is `None`:
    /// a store already past them), with steps `back` versions below it, most of them above
    /// the store's version.
    Migrate(Option<u32>, Vec<(u32, StepSpec)>),
    SaveLoad,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (
            prop::option::weighted(0.9, prop_oneof![1 => Just(0_u32), 4 => 1..4_u32]),
            prop::collection::vec((0..3_u32, step_spec()), 1..4),
        )
            .prop_map(|(ahead, steps)| Op::Migrate(ahead, steps)),
        1 => Just(Op::SaveLoad),
    ]
}

/// The version and the steps (in order, at distinct versions from 1 up to it) of an
/// [`Op::Migrate`] on a store at `current`.
fn versions(
    current: u32,
    ahead: Option<u32>,
    steps: &[(u32, StepSpec)],
) -> (u32, Vec<(u32, StepSpec)>) {
    let version = match ahead {
        Some(ahead) => current + ahead,
        None => current.saturating_sub(1),
    };
    let mut steps: Vec<(u32, StepSpec)> = steps
        .iter()
        .filter(|(back, _)| *back < version)
        .map(|(back, spec)| (version - back, spec.clone()))
        .collect();
    steps.sort_by_key(|(to, _)| *to);
    steps.dedup_by_key(|(to, _)| *to);
    (version, steps)
}

fn migrations_of(version: u32, steps: &[(u32, StepSpec)]) -> Migrations {
    let mut migrations = Migrations::new(version);
    for (to, spec) in steps {
        let mut step = MigrationStep::to(*to);
        for (from, dst) in &spec.renames {
            step = step.rename(&dotted(from), &dotted(dst));
        }
        for path in &spec.removes {
            step = step.remove(&dotted(path));
        }
        for (path, value) in &spec.defaults {
            step = step.default(&dotted(path), value);
        }
        for (path, value) in &spec.sets {
            step = step.set(&dotted(path), value);
        }
        migrations = migrations.step(step);
    }
    migrations
}

/// The store as the model sees it: each entity's entries in blob order, the names, the data
/// version.
#[derive(Clone, Debug)]
struct Model {
    entities: Vec<(Id, Vec<(Key, OwnedValue)>)>,
    names: HashMap<Key, Path>,
    version: u32,
}

/// What went wrong, as the model tells it: the kind, and the step and entity where known.
#[derive(Debug, PartialEq)]
enum ModelError {
    Static,
    StoreAhead,
    RenameOntoKey(usize, Id),
    PathIsObject(usize, Id),
    PathThroughValue(usize, Id),
}

fn kind_of(err: &MigrateError) -> ModelError {
    match *err {
        MigrateError::StoreAhead { .. } => ModelError::StoreAhead,
        MigrateError::RenameOntoKey { step, id, .. } => ModelError::RenameOntoKey(step, id),
        MigrateError::PathIsObject { step, id, .. } => ModelError::PathIsObject(step, id),
        MigrateError::PathThroughValue { step, id, .. } => ModelError::PathThroughValue(step, id),
        MigrateError::Overlap { .. } | MigrateError::BadPath { .. } => ModelError::Static,
        ref other => panic!("the model makes no {other:?}"),
    }
}

fn under_or_at(path: &[String], root: &[String]) -> bool {
    path.len() >= root.len() && path[..root.len()] == *root
}

fn overlap(paths: &[&Path]) -> bool {
    paths
        .iter()
        .enumerate()
        .any(|(i, a)| paths[i + 1..].iter().any(|b| under_or_at(a, b) || under_or_at(b, a)))
}

impl Model {
    /// Runs the steps; returns, for each step that ran, the entities it changed and the keys
    /// it renamed, removed, defaulted and set.
    fn migrate(
        &mut self,
        version: u32,
        steps: &[(u32, StepSpec)],
    ) -> Result<Vec<[usize; 5]>, ModelError> {
        for (_, spec) in steps {
            if spec.renames.iter().any(|(from, to)| from == to)
                || overlap(&spec.renames.iter().map(|(from, _)| from).collect::<Vec<_>>())
                || overlap(&spec.renames.iter().map(|(_, to)| to).collect::<Vec<_>>())
                || overlap(
                    &spec.defaults.iter().chain(&spec.sets).map(|(p, _)| p).collect::<Vec<_>>(),
                )
            {
                return Err(ModelError::Static);
            }
        }
        if self.version > version {
            return Err(ModelError::StoreAhead);
        }
        // Names as each step sees them: before its renames, after them (for its removals),
        // and after its writes.
        let mut names = self.names.clone();
        let mut seen = Vec::new();
        let pending: Vec<(usize, &StepSpec)> = steps
            .iter()
            .enumerate()
            .filter(|(_, (to, _))| *to > self.version)
            .map(|(i, (_, s))| (i, s))
            .collect();
        for &(_, spec) in &pending {
            let before = names.clone();
            for path in names.clone().values() {
                if let Some((from, to)) =
                    spec.renames.iter().find(|(from, _)| under_or_at(path, from))
                {
                    let mut dst = to.clone();
                    dst.extend_from_slice(&path[from.len()..]);
                    names.entry(key_of(&dst)).or_insert(dst);
                }
            }
            for (from, to) in &spec.renames {
                if !before.contains_key(&key_of(from)) {
                    names.entry(key_of(to)).or_insert_with(|| to.clone());
                }
            }
            let after_renames = names.clone();
            for (path, _) in spec.defaults.iter().chain(&spec.sets) {
                names.entry(key_of(path)).or_insert_with(|| path.clone());
            }
            seen.push((before, after_renames, names.clone()));
        }
        let mut entities = self.entities.clone();
        let mut reports = vec![[0; 5]; pending.len()];
        for (id, entries) in &mut entities {
            let steps = pending.iter().zip(&seen).zip(&mut reports);
            for ((&(index, spec), (before, after_renames, after)), report) in steps {
                let counts = step(spec, entries, before, after_renames, after)
                    .map_err(|kind| kind(index, *id))?;
                report[0] += usize::from(counts.iter().any(|&n| n > 0));
                for (total, n) in report[1..].iter_mut().zip(counts) {
                    *total += n;
                }
            }
        }
        self.entities = entities;
        self.names = names;
        self.version = version;
        Ok(reports)
    }
}

/// One step on one entity's entries, as the semantics say, key by key.
fn step(
    spec: &StepSpec,
    entries: &mut Vec<(Key, OwnedValue)>,
    before: &HashMap<Key, Path>,
    after_renames: &HashMap<Key, Path>,
    after: &HashMap<Key, Path>,
) -> Result<[usize; 4], fn(usize, Id) -> ModelError> {
    // Renames: where each key goes.
    let dst_of = |key: Key| -> Option<Key> {
        match before.get(&key) {
            Some(path) => {
                spec.renames.iter().find(|(from, _)| under_or_at(path, from)).map(|(from, to)| {
                    let mut dst = to.clone();
                    dst.extend_from_slice(&path[from.len()..]);
                    key_of(&dst)
                })
            }
            None => {
                spec.renames.iter().find(|(from, _)| key_of(from) == key).map(|(_, to)| key_of(to))
            }
        }
    };
    let moves: Vec<Option<Key>> = entries.iter().map(|(key, _)| dst_of(*key)).collect();
    for dst in moves.iter().flatten() {
        if let Some(i) = entries.iter().position(|(key, _)| key == dst)
            && moves[i].is_none()
        {
            return Err(ModelError::RenameOntoKey);
        }
    }
    // Keys renamed, removed, defaulted, set.
    let mut counts = [moves.iter().flatten().count(), 0, 0, 0];
    let mut placed: Vec<Key> = Vec::new();
    for (entry, dst) in entries.iter_mut().zip(&moves) {
        if let Some(dst) = dst {
            entry.0 = *dst;
            placed.push(*dst);
        }
    }
    // Removals.
    let removed = |key: Key| match after_renames.get(&key) {
        Some(path) => spec.removes.iter().any(|root| under_or_at(path, root)),
        None => spec.removes.iter().any(|root| key_of(root) == key),
    };
    let held = entries.len();
    entries.retain(|(key, _)| !removed(*key));
    counts[1] = held - entries.len();
    placed.retain(|key| !removed(*key));
    // Defaults, then sets.
    let writes =
        spec.defaults.iter().map(|w| (w, true)).chain(spec.sets.iter().map(|w| (w, false)));
    for ((path, value), default) in writes {
        let key = key_of(path);
        match entries.iter_mut().find(|(k, _)| *k == key) {
            Some(_) if default => continue,
            Some(entry) if entry.1 == *value => continue,
            Some(entry) => entry.1 = value.clone(),
            None => {
                entries.push((key, value.clone()));
                placed.push(key);
            }
        }
        counts[if default { 2 } else { 3 }] += 1;
    }
    // The structure around each key placed where there was none.
    for key in placed {
        let path = &after[&key];
        for len in 1..path.len() {
            if entries.iter().any(|(k, _)| *k == key_of(&path[..len])) {
                return Err(ModelError::PathThroughValue);
            }
        }
        let under = entries.iter().any(|(k, _)| {
            after.get(k).is_some_and(|p| p.len() > path.len() && under_or_at(p, path))
        });
        if under {
            return Err(ModelError::PathIsObject);
        }
    }
    Ok(counts)
}

/// A report's counts as the model gives them: per step, entities, renamed, removed, defaulted,
/// set.
fn counts_of(report: &MigrationReport) -> Vec<[usize; 5]> {
    let steps = report.steps.iter();
    steps.map(|s| [s.entities, s.renamed, s.removed, s.defaulted, s.set]).collect()
}

/// A store of `sheets` (each an entity's entries; `u` paths set without a name), and its model.
fn seeded(sheets: &[Vec<(Path, OwnedValue)>]) -> (Store, Model) {
    let mut store = Store::new();
    let mut model = Model { entities: Vec::new(), names: HashMap::new(), version: 0 };
    for sheet in sheets {
        let id = store.insert_empty();
        let mut entries: Vec<(Key, OwnedValue)> = Vec::new();
        for (path, value) in sheet {
            let key = key_of(path);
            if named(path) {
                // A path that would be both a value and an object is refused (issue 16).
                match store.get_mut(id).unwrap().set(&*dotted(path), value) {
                    Ok(()) => {}
                    Err(datacomp::Error::Key(KeyError::PathConflict { .. })) => continue,
                    Err(e) => panic!("{e}"),
                }
                model.names.insert(key, path.clone());
            } else {
                store.get_mut(id).unwrap().set(key, value).unwrap();
            }
            match entries.iter_mut().find(|(k, _)| *k == key) {
                Some(entry) => entry.1 = value.clone(),
                None => entries.push((key, value.clone())),
            }
        }
        model.entities.push((id, entries));
    }
    check(&store, &model);
    (store, model)
}

fn check(store: &Store, model: &Model) {
    assert_eq!(store.len(), model.entities.len());
    assert_eq!(store.data_version(), model.version);
    for (id, entries) in &model.entities {
        let blob = store.get(*id).unwrap();
        let got: Vec<(Key, OwnedValue)> =
            blob.iter().map(|(k, v)| (k, v.to_owned_value())).collect();
        assert_eq!(&got, entries, "entity {id}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Every migration (or its error: kind, step and entity) is what the model says, and an
    /// error changes nothing.
    #[test]
    fn migrations_match_the_model(
        sheets in prop::collection::vec(prop::collection::vec((path(), value()), 0..6), 1..6),
        ops in prop::collection::vec(op(), 1..6),
    ) {
        let (mut store, mut model) = seeded(&sheets);
        for op in &ops {
            match op {
                Op::Migrate(ahead, steps) => {
                    let (version, steps) = versions(store.data_version(), *ahead, steps);
                    let before = (store.clone(), store.to_bytes());
                    let got = migrations_of(version, &steps).apply(&mut store);
                    let expected = model.migrate(version, &steps);
                    match (&got, &expected) {
                        (Ok(report), Ok(counts)) => prop_assert_eq!(&counts_of(report), counts),
                        (Err(err), Err(kind)) => {
                            prop_assert_eq!(&kind_of(err), kind, "{}", err);
                            prop_assert_eq!(&store, &before.0);
                            prop_assert_eq!(store.to_bytes(), before.1.clone());
                        }
                        _ => prop_assert!(false, "store {:?}, model {:?}", got, expected),
                    }
                }
                Op::SaveLoad => store = Store::from_bytes(&store.to_bytes()).unwrap(),
            }
            check(&store, &model);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Folding: long lists of small steps, many of them apart

/// Segments of the folding test: more of them, so that many steps are apart.
const MANY: [&str; 6] = ["a", "b", "c", "d", "e", "u"];

fn many_path() -> impl Strategy<Value = Path> {
    prop::collection::vec(prop::sample::select(&MANY[..]).prop_map(str::to_owned), 1..=2)
}

/// A small step: most change one key (or subtree), some are whole steps.
fn small_step() -> impl Strategy<Value = StepSpec> {
    prop_oneof![
        3 => (many_path(), many_path())
            .prop_map(|rename| StepSpec { renames: vec![rename], ..StepSpec::default() }),
        2 => many_path().prop_map(|path| StepSpec { removes: vec![path], ..StepSpec::default() }),
        3 => (many_path(), value())
            .prop_map(|write| StepSpec { defaults: vec![write], ..StepSpec::default() }),
        3 => (many_path(), value())
            .prop_map(|write| StepSpec { sets: vec![write], ..StepSpec::default() }),
        1 => step_spec(),
    ]
}

/// A chain of renames (`p0 -> p1`, `p1 -> p2`, ...), each maybe followed by a small step
/// (a set, default or removal of another path folds beside it), maybe ending in the removal
/// of its last path or the subtree above it: runs that `chain.rs` composes.
fn chain_steps() -> impl Strategy<Value = Vec<StepSpec>> {
    let link = (many_path(), prop::option::weighted(0.3, small_step()));
    (many_path(), prop::collection::vec(link, 1..8), 0..3_usize).prop_map(|(start, links, end)| {
        let (mut steps, mut from) = (Vec::new(), start);
        for (to, beside) in links {
            steps.push(StepSpec { renames: vec![(from, to.clone())], ..StepSpec::default() });
            steps.extend(beside);
            from = to;
        }
        match end {
            1 => steps.push(StepSpec { removes: vec![from], ..StepSpec::default() }),
            2 => steps.push(StepSpec { removes: vec![from[..1].to_vec()], ..StepSpec::default() }),
            _ => {}
        }
        steps
    })
}

/// A subtree renamed back and forth (`x -> y`, `y -> x`, ...), round a cycle of three paths,
/// or one to three renames taken in turn, four times and up to 8 steps more: runs that
/// `repeat.rs` compiles and runs three periods of, the rest copies. Entities hold keys at,
/// under and above the paths.
fn back_and_forth() -> impl Strategy<Value = Vec<StepSpec>> {
    let rename = || (many_path(), many_path());
    let cycle = prop_oneof![
        3 => rename().prop_map(|(x, y)| vec![(x.clone(), y.clone()), (y, x)]),
        1 => (many_path(), many_path(), many_path())
            .prop_map(|(x, y, z)| vec![(x.clone(), y.clone()), (y, z.clone()), (z, x)]),
        1 => prop::collection::vec(rename(), 1..=3),
    ];
    (cycle, 0..8_usize).prop_map(|(cycle, more)| {
        let step = |i: usize| StepSpec {
            renames: vec![cycle[i % cycle.len()].clone()],
            ..StepSpec::default()
        };
        (0..4 * cycle.len() + more).map(step).collect()
    })
}

/// The steps run one at a time, each as migrations of its own, on `store`: the reports'
/// counts, or the first error as the whole migrations would name it.
fn one_at_a_time(store: &mut Store, steps: &[(u32, StepSpec)]) -> Result<Vec<[usize; 5]>, String> {
    let mut counts = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        match migrations_of(step.0, std::slice::from_ref(step)).apply(store) {
            Ok(report) => counts.extend(counts_of(&report)),
            Err(err) => {
                return Err(err.to_string().replacen("steps[0]", &format!("steps[{i}]"), 1));
            }
        }
    }
    Ok(counts)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(768))]

    /// Up to 60 small steps, rename chains (`chain_steps`) and renames back and forth
    /// (`back_and_forth`), so that runs of steps that commute are folded into one pass, chains
    /// composed (`chain.rs`) and repeats copied (`repeat.rs`): the
    /// store, the report, and any error (kind, step and entity; nothing changed) are the
    /// model's, which applies each step to each entity key by key; and the same as running
    /// the steps one at a time, each as migrations of its own (then no step folds): equal
    /// stores, equal reports, the same error message.
    #[test]
    fn folded_steps_match_the_model_and_the_steps_one_at_a_time(
        sheets in prop::collection::vec(
            prop::collection::vec((many_path(), value()), 0..8), 1..5),
        specs in prop::collection::vec(prop_oneof![
            3 => small_step().prop_map(|step| vec![step]),
            1 => chain_steps(),
            1 => back_and_forth(),
        ], 1..30),
    ) {
        let specs: Vec<StepSpec> = specs.into_iter().flatten().take(60).collect();
        matches_the_model_and_the_steps_one_at_a_time(&sheets, specs)?;
    }

    /// Renames back and forth (`back_and_forth`) between a few small steps: most copied
    /// (`repeat.rs`), the rest as above.
    #[test]
    fn repeated_renames_match_the_model_and_the_steps_one_at_a_time(
        sheets in prop::collection::vec(
            prop::collection::vec((many_path(), value()), 0..8), 1..5),
        before in prop::collection::vec(small_step(), 0..3),
        repeated in back_and_forth(),
        after in prop::collection::vec(small_step(), 0..3),
    ) {
        let specs = before.into_iter().chain(repeated).chain(after).collect();
        matches_the_model_and_the_steps_one_at_a_time(&sheets, specs)?;
    }
}

/// The migration of `specs` on stores seeded from `sheets`: the model's, and the same as the
/// steps run one at a time (see `folded_steps_match_the_model_and_the_steps_one_at_a_time`).
fn matches_the_model_and_the_steps_one_at_a_time(
    sheets: &[Vec<(Path, OwnedValue)>],
    specs: Vec<StepSpec>,
) -> Result<(), TestCaseError> {
    let (mut store, mut model) = seeded(sheets);
    let steps: Vec<(u32, StepSpec)> =
        specs.into_iter().enumerate().map(|(i, spec)| (i as u32 + 1, spec)).collect();
    let before = (store.clone(), store.to_bytes());
    let got = migrations_of(steps.len() as u32, &steps).apply(&mut store);
    let expected = model.migrate(steps.len() as u32, &steps);
    let mut alone = before.0.clone();
    let one_by_one = one_at_a_time(&mut alone, &steps);
    match (&got, &expected) {
        (Ok(report), Ok(counts)) => {
            prop_assert_eq!(&counts_of(report), counts);
            check(&store, &model);
            prop_assert_eq!(one_by_one.as_ref(), Ok(counts));
            same_but_passed_names(&alone, &store)?;
        }
        (Err(err), Err(kind)) => {
            prop_assert_eq!(&kind_of(err), kind, "{}", err);
            prop_assert_eq!(&store, &before.0);
            prop_assert_eq!(store.to_bytes(), before.1);
            if *kind != ModelError::Static {
                // A migration rewrites entity by entity: its error is the first entity's
                // (in store order) that fails, at that entity's first failing step.
                let first = before.0.iter().map(|(id, _)| id).find_map(|id| {
                    let mut single = before.0.clone();
                    let others: Vec<Id> =
                        single.iter().map(|(other, _)| other).filter(|&o| o != id).collect();
                    for other in others {
                        assert!(single.remove(other));
                    }
                    one_at_a_time(&mut single, &steps).err()
                });
                prop_assert_eq!(first, Some(err.to_string()));
            }
        }
        _ => prop_assert!(false, "store {:?}, model {:?}", got, expected),
    }
    Ok(())
}

/// `store` is `alone` (the steps run one at a time) but for names: every name it has, `alone`
/// has, and every key an entity holds is named in both. A run of renames composed
/// (`prefix.rs`) names only where keys end, not the paths they pass through on the way.
fn same_but_passed_names(alone: &Store, store: &Store) -> Result<(), TestCaseError> {
    prop_assert_eq!(alone.data_version(), store.data_version());
    prop_assert_eq!(alone.len(), store.len());
    for ((id, a), (other, b)) in alone.iter().zip(store.iter()) {
        prop_assert_eq!(id, other);
        prop_assert_eq!(a.as_bytes(), b.as_bytes(), "entity {}", id);
        for key in b.keys() {
            prop_assert_eq!(alone.key_name(key), store.key_name(key), "entity {}", id);
        }
    }
    for (key, name) in store.key_names() {
        prop_assert_eq!(alone.key_name(key), Some(name));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Migrate then export == export then migrate the JSON

/// A JSON document's leaves by path: what an entity exports, flattened.
type Leaves = BTreeMap<Path, serde_json::Value>;

fn flatten(value: &serde_json::Value, path: &mut Path, out: &mut Leaves) {
    match value {
        serde_json::Value::Object(members) => {
            for (name, member) in members {
                path.push(name.clone());
                flatten(member, path, out);
                path.pop();
            }
        }
        // Numbers as the f32 a blob holds them as, so both sides compare alike.
        serde_json::Value::Number(n) => {
            out.insert(path.clone(), serde_json::json!(n.as_f64().unwrap() as f32));
        }
        serde_json::Value::Array(items) => {
            let floats: Vec<f32> = items.iter().map(|i| i.as_f64().unwrap() as f32).collect();
            out.insert(path.clone(), serde_json::json!(floats));
        }
        leaf => {
            out.insert(path.clone(), leaf.clone());
        }
    }
}

fn json_of(value: &OwnedValue) -> serde_json::Value {
    match value {
        OwnedValue::Bool(b) => serde_json::json!(b),
        OwnedValue::Float(f) => serde_json::json!(f),
        OwnedValue::Str(s) => serde_json::json!(s),
        OwnedValue::Floats(f) => serde_json::json!(f),
        // The generator makes no tombstone (an instance's, not a migration's).
        OwnedValue::Null | OwnedValue::Tombstone => serde_json::Value::Null,
    }
}

/// Whether a leaf at `path` fits among `leaves`: none above it, none under it.
fn fits(leaves: &Leaves, path: &Path) -> bool {
    !leaves.keys().any(|p| p != path && (under_or_at(p, path) || under_or_at(path, p)))
}

/// A step on one exported document, as JSON: subtrees detached and attached, leaves set.
fn json_step(spec: &StepSpec, leaves: &mut Leaves) -> Result<(), ()> {
    let mut moved = Vec::new();
    for (from, to) in &spec.renames {
        let paths: Vec<Path> = leaves.keys().filter(|p| under_or_at(p, from)).cloned().collect();
        for path in paths {
            let value = leaves.remove(&path).unwrap();
            let mut dst = to.clone();
            dst.extend_from_slice(&path[from.len()..]);
            moved.push((dst, value));
        }
    }
    let mut placed = Vec::new();
    for (dst, value) in moved {
        if leaves.insert(dst.clone(), value).is_some() {
            return Err(());
        }
        placed.push(dst);
    }
    leaves.retain(|path, _| !spec.removes.iter().any(|root| under_or_at(path, root)));
    placed.retain(|path| leaves.contains_key(path));
    for (path, value) in &spec.defaults {
        if !leaves.contains_key(path) {
            leaves.insert(path.clone(), json_of(value));
            placed.push(path.clone());
        }
    }
    for (path, value) in &spec.sets {
        if leaves.insert(path.clone(), json_of(value)).is_none() {
            placed.push(path.clone());
        }
    }
    if placed.iter().all(|path| fits(leaves, path)) { Ok(()) } else { Err(()) }
}

/// A document of nested objects over the named segments.
fn document() -> impl Strategy<Value = serde_json::Value> {
    let leaf = value().prop_map(|v| json_of(&v));
    let name = prop::sample::select(&["a", "b", "c"][..]).prop_map(str::to_owned);
    leaf.prop_recursive(3, 12, 3, move |inner| {
        prop::collection::btree_map(name.clone(), inner, 1..3)
            .prop_map(|members| serde_json::Value::Object(members.into_iter().collect()))
    })
    .prop_filter_map("an entity is an object", |v| v.is_object().then_some(v))
}

fn named_path() -> impl Strategy<Value = Path> {
    prop::collection::vec(prop::sample::select(&["a", "b", "c"][..]).prop_map(str::to_owned), 1..=3)
}

fn named_step() -> impl Strategy<Value = StepSpec> {
    (
        prop::collection::vec((named_path(), named_path()), 0..3),
        prop::collection::vec(named_path(), 0..2),
        prop::collection::vec((named_path(), value()), 0..2),
        prop::collection::vec((named_path(), value()), 0..2),
    )
        .prop_map(|(renames, removes, defaults, sets)| StepSpec {
            renames,
            removes,
            defaults,
            sets,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Exporting the migrated store gives the exported store with the same renames,
    /// removals, defaults and sets applied to its JSON; and one fails exactly when the other
    /// does.
    #[test]
    fn migrate_then_export_is_export_then_migrate(
        documents in prop::collection::vec(document(), 1..5),
        specs in prop::collection::vec(named_step(), 1..4),
    ) {
        let mut store = Store::new();
        store.import(&serde_json::Value::Array(documents).to_string(), &ImportOptions::lenient()).unwrap();
        let steps: Vec<(u32, StepSpec)> =
            specs.into_iter().enumerate().map(|(i, s)| (i as u32 + 1, s)).collect();
        let migrations = migrations_of(steps.len() as u32, &steps);
        let exported: serde_json::Value = serde_json::from_str(&store.export_all(&ExportOptions::json()).unwrap()).unwrap();
        let mut documents: Vec<Leaves> = exported.as_array().unwrap().iter().map(|doc| {
            let mut leaves = Leaves::new();
            flatten(doc, &mut Vec::new(), &mut leaves);
            leaves
        }).collect();
        let json = documents.iter_mut().try_for_each(|leaves| {
            steps.iter().try_for_each(|(_, spec)| json_step(spec, leaves))
        });
        let statically_bad = steps.iter().any(|(_, spec)| {
            spec.renames.iter().any(|(from, to)| from == to)
                || overlap(&spec.renames.iter().map(|(from, _)| from).collect::<Vec<_>>())
                || overlap(&spec.renames.iter().map(|(_, to)| to).collect::<Vec<_>>())
                || overlap(&spec.defaults.iter().chain(&spec.sets).map(|(p, _)| p).collect::<Vec<_>>())
        });
        let migrated = migrations.apply(&mut store);
        if statically_bad {
            prop_assert!(matches!(migrated, Err(MigrateError::Overlap { .. } | MigrateError::BadPath { .. })), "{:?}", migrated);
            return Ok(());
        }
        prop_assert_eq!(migrated.is_ok(), json.is_ok(), "{:?}", migrated);
        if migrated.is_ok() {
            let exported: serde_json::Value = serde_json::from_str(&store.export_all(&ExportOptions::json()).unwrap()).unwrap();
            let got: Vec<Leaves> = exported.as_array().unwrap().iter().map(|doc| {
                let mut leaves = Leaves::new();
                flatten(doc, &mut Vec::new(), &mut leaves);
                leaves
            }).collect();
            prop_assert_eq!(got, documents);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Sweeps of the README's migrations

/// Runs `text` as migrations on `store`: an error is one line and changes nothing.
fn run_any(store: &Store, text: &str) -> Option<Store> {
    let migrations = match Migrations::from_json(text) {
        Ok(migrations) => migrations,
        Err(err) => {
            assert!(!err.to_string().contains('\n'), "{err:?}");
            return None;
        }
    };
    let mut migrated = store.clone();
    match migrations.apply(&mut migrated) {
        Ok(_) => Some(migrated),
        Err(err) => {
            assert!(!err.to_string().contains('\n'), "{err:?}");
            assert_eq!(&migrated, store, "{err}");
            None
        }
    }
}

#[test]
fn every_truncation_of_the_migrations_is_an_error_and_every_corruption_is_handled() {
    let text = include_str!("../fixtures/migrations_v3.json");
    let (store, _) = imported(r#"[{"hp": 1, "inventory": {"a": 1}, "legacy": 2}, {"x": "y"}]"#);
    for len in 0..text.trim_end().len() {
        assert!(Migrations::from_json(&text[..len]).is_err(), "{len} bytes");
    }
    assert!(run_any(&store, text).is_some());
    // Each byte replaced by each of a few that change the document's shape or content.
    let mut migrated = 0;
    for at in 0..text.len() {
        for replacement in ["\"", "{", "]", "0", "x", ".", "/", ",", " "] {
            let mut corrupt = text.to_owned();
            corrupt.replace_range(at..at + 1, replacement);
            migrated += usize::from(run_any(&store, &corrupt).is_some());
        }
    }
    assert!(migrated > 100, "most one-byte changes of names and values still run: {migrated}");
}

/// A rename that keeps changing what it finds (`a.c -> a` strips one `c` a step, from a key
/// 12 `c`s deep, every name on the way known): its third pair changes the entity, so the
/// migration runs again with no step copied (`repeat.rs`), and
/// the store, the report and the names are those of the steps one at a time; with the steps
/// taken back and forth over the same entity, they are copies, with the same result.
#[test]
fn a_repeat_that_changes_an_entity_runs_every_step() {
    let deep = |n: usize| ["a".to_owned()].into_iter().chain(vec!["c".to_owned(); n]);
    let path = |n: usize| deep(n).chain(["x".to_owned()]).collect::<Vec<_>>();
    let strip = StepSpec {
        renames: vec![(vec!["a".into(), "c".into()], vec!["a".into()])],
        ..StepSpec::default()
    };
    let there =
        StepSpec { renames: vec![(vec!["a".into()], vec!["b".into()])], ..StepSpec::default() };
    let back =
        StepSpec { renames: vec![(vec!["b".into()], vec!["a".into()])], ..StepSpec::default() };
    for steps in [vec![strip; 12], [there, back].into_iter().cycle().take(13).collect()] {
        let steps: Vec<(u32, StepSpec)> =
            steps.into_iter().enumerate().map(|(i, spec)| (i as u32 + 1, spec)).collect();
        let mut store = Store::new();
        // Every path of the way named (by an entity since removed): the steps add no name.
        let named = store.insert_entries((0..=12).map(|n| (dotted(&path(n)), 0.0))).unwrap();
        assert!(store.remove(named));
        store.insert_entries([(dotted(&path(12)), 1.0)]).unwrap();
        store.insert_entries([(dotted(&path(5)), 2.0), ("b.z".to_owned(), 3.0)]).unwrap();
        let mut alone = store.clone();
        let report = migrations_of(steps.len() as u32, &steps).apply(&mut store).unwrap();
        let one_by_one = one_at_a_time(&mut alone, &steps).unwrap();
        assert_eq!(counts_of(&report), one_by_one);
        assert_eq!(store, alone);
        assert_eq!(store.to_bytes(), alone.to_bytes());
    }
}
