//! JSON import: the fixtures read back with exact values, each invalid fixture fails at its exact
//! place, and random documents import as a model says.

use std::collections::BTreeMap;

use datacomp::text::ImportReport;
use datacomp::text::Imported;
use datacomp::text::JsonErrorKind;
use datacomp::{Blob, ImportOptions, JsonError, Key, KeyError, OwnedValue, TextFormat, Value};
use proptest::prelude::*;

fn fixture(path: &str) -> String {
    let full = format!("{}/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
}

#[test]
fn the_classic_sheet() {
    let sheet = Blob::import(&fixture("sheets/classic.json"), &ImportOptions::strict()).unwrap();
    assert_eq!(sheet.len(), 5);
    assert_eq!(sheet.get_str("name"), Some("The One"));
    assert_eq!(sheet.get_float("stats.health"), Some(100.0));
    assert_eq!(sheet.get_float("stats.mana"), Some(200.0));
    assert_eq!(sheet.get_bool("status_effects.drunk"), Some(true));
    assert_eq!(sheet.get_bool("status_effects.delirious"), Some(true));
    let order: Vec<Key> = sheet.keys().collect();
    let expected =
        ["name", "stats.health", "stats.mana", "status_effects.drunk", "status_effects.delirious"];
    assert_eq!(order, expected.map(Key::parse), "document order");
}

#[test]
#[allow(clippy::approx_constant)] // The fixture's 0.7071068, as written: not f32's 1/sqrt(2).
fn a_rich_sheet() {
    let sheet = Blob::import(&fixture("sheets/wizard.json"), &ImportOptions::strict()).unwrap();
    // 4 top-level, 8 stats, 3 resistances, 3 effects, 3 transforms, color, 3 inventory,
    // 9 spellbook, bio, motto.
    assert_eq!(sheet.len(), 36);
    assert_eq!(sheet.get_str("class"), Some("Wizard"));
    assert_eq!(sheet.get_float("experience"), Some(48_250.5));
    assert_eq!(sheet.get_float("resistances.frost"), Some(-0.1));
    assert_eq!(
        sheet.get_floats("transform.rotation"),
        Some(&[0.0, 0.707_106_8, 0.0, 0.707_106_8][..])
    );
    assert_eq!(
        sheet.get_floats("inventory.slots_free"),
        Some(&[][..]),
        "an empty array is an empty float array"
    );
    assert_eq!(sheet.get_floats("inventory.weights").map(<[f32]>::len), Some(12));
    assert_eq!(sheet.get_float("spellbook.fireball.cooldown"), Some(8.5));
    assert_eq!(sheet.get_bool("spellbook.polymorph.known"), Some(false));
    assert_eq!(sheet.get_str("motto"), Some("Ünïcödé is just bytes ✓"));
    assert!(sheet.get_str("bio").is_some_and(|bio| bio.len() > 300 && bio.ends_with("linearly.")));
    assert_eq!(Blob::from_bytes(sheet.as_bytes()).unwrap(), sheet);
}

#[test]
fn each_invalid_fixture_fails_at_its_place() {
    let cases: [(&str, JsonErrorKind, &str, usize, usize); 8] = [
        ("null_value", JsonErrorKind::Null, "/stats/health", 4, 22),
        ("array_of_objects", JsonErrorKind::NotANumber, "/armor_class/0", 3, 22),
        ("mixed_array", JsonErrorKind::NotANumber, "/position/2", 2, 30),
        ("number_too_big", JsonErrorKind::NumberOutOfRange(1e39), "/stats/gold", 2, 27),
        ("trailing_comma", JsonErrorKind::Syntax("trailing comma".into()), "", 4, 1),
        ("not_an_object", JsonErrorKind::NotAnObject, "", 1, 1),
        ("duplicate_path", JsonErrorKind::DuplicatePath("stats".into()), "/stats", 3, 15),
        (
            "key_collision",
            JsonErrorKind::KeyCollision {
                first: "sleep_haste_8".into(),
                second: "fury_sleep_272".into(),
                key: Key::from_raw(0x316e_c2d7),
            },
            "/fury_sleep_272",
            3,
            23,
        ),
    ];
    for (name, kind, path, line, column) in cases {
        let err = Blob::import(&fixture(&format!("invalid/{name}.json")), &ImportOptions::strict())
            .unwrap_err();
        assert_eq!(
            (err.kind(), err.path(), err.line(), err.column()),
            (&kind, path, line, column),
            "{name}"
        );
    }
}

#[test]
fn numbers_past_f32_are_those_that_round_to_infinity() {
    // Found by the export property test: f32::MAX's shortest form is above it as an f64.
    let blob =
        Blob::import(r#"{"max": 3.4028235e38, "min": -3.4028235e38}"#, &ImportOptions::strict())
            .unwrap();
    assert_eq!(blob.get_float("max"), Some(f32::MAX));
    assert_eq!(blob.get_float("min"), Some(-f32::MAX));
    let err = Blob::import(r#"{"big": 3.5e38}"#, &ImportOptions::strict()).unwrap_err();
    assert_eq!(err.kind(), &JsonErrorKind::NumberOutOfRange(3.5e38));
}

/// The error and its message for `text` read strictly.
fn strict_error(text: &str) -> (JsonErrorKind, String) {
    let err = Blob::import(text, &ImportOptions::strict()).unwrap_err();
    (err.kind().clone(), err.to_string())
}

fn not_held(number: &str, becomes: f32) -> JsonErrorKind {
    JsonErrorKind::NotHeld { number: number.into(), becomes }
}

#[test]
fn strict_refuses_numbers_f32_would_change_beyond_rounding() {
    let cases: [(&str, JsonErrorKind, &str); 7] = [
        (
            r#"{"hp": 16777217}"#,
            not_held("16777217", 16_777_216.0),
            "/hp (line 1, column 15): 16777217 would be stored as 16777216: f32 cannot hold it",
        ),
        (
            "{\"stats\": {\n  \"xp\": 123456789}}",
            not_held("123456789", 123_456_792.0),
            "/stats/xp (line 2, column 17): 123456789 would be stored as 123456790: f32 cannot hold it",
        ),
        (
            r#"{"xp": [1, -16777217]}"#,
            not_held("-16777217", -16_777_216.0),
            "/xp/1 (line 1, column 20): -16777217 would be stored as -16777216: f32 cannot hold it",
        ),
        (
            r#"{"dust": 1e-50}"#,
            not_held("1e-50", 0.0),
            "/dust (line 1, column 14): 1e-50 would be stored as 0: f32 cannot hold it",
        ),
        (
            // Past f64's precision too: serde_json reads it as zero, the importer looks again.
            r#"{"a": 0.0, "dust": [0.5, -1e-400]}"#,
            not_held("-1e-400", -0.0),
            "/dust/1 (line 1, column 32): -1e-400 would be stored as -0.0: f32 cannot hold it",
        ),
        (
            r#"{"big": 18446744073709551615}"#,
            not_held("18446744073709551615", 1.844_674_4e19),
            "/big (line 1, column 28): 18446744073709551615 would be stored as 1.8446744e+19: f32 cannot hold it",
        ),
        (
            r#"{"big": 1.2345678912e29}"#,
            not_held("1.2345678912e+29", 1.234_567_9e29),
            "/big (line 1, column 23): 1.2345678912e+29 would be stored as 1.2345679e+29: f32 cannot hold it",
        ),
    ];
    for (text, kind, message) in cases {
        assert_eq!(strict_error(text), (kind, message.to_owned()), "{text}");
    }
    // Past f64 as well as f32: past f32's range, as SJSON says, at the number's last byte.
    let err = Blob::import(r#"{"stars": 1e400}"#, &ImportOptions::strict()).unwrap_err();
    assert_eq!(err.kind(), &JsonErrorKind::NumberOutOfRange(f64::INFINITY));
    assert_eq!((err.path(), err.line(), err.column()), ("/stars", 1, 15));
    assert_eq!(err.to_string(), "/stars (line 1, column 15): inf is past the range of f32");
}

#[test]
fn strict_keeps_numbers_f32_holds_within_rounding() {
    let text = r#"{"a": 16777216, "b": 123456790, "c": 123456792, "d": 0.1, "e": 1e-45,
        "f": 3.14159265358979, "g": 1e20, "h": 0.0, "i": -0.0, "j": 3.4028235e38,
        "k": 1.8446744e19, "l": 18446744073709551616, "m": 1e-38, "n": -0}"#;
    let blob = Blob::import(text, &ImportOptions::strict()).unwrap();
    let expected: [(&str, f32); 14] = [
        ("a", 16_777_216.0),
        ("b", 123_456_792.0),
        ("c", 123_456_792.0),
        ("d", 0.1),
        ("e", 1e-45),
        ("f", std::f32::consts::PI),
        ("g", 1e20),
        ("h", 0.0),
        ("i", -0.0),
        ("j", f32::MAX),
        ("k", 1.844_674_4e19),
        ("l", 1.844_674_4e19),
        ("m", 1e-38),
        ("n", -0.0),
    ];
    for (key, x) in expected {
        assert_eq!(blob.get_float(key).map(f32::to_bits), Some(x.to_bits()), "{key}");
    }
}

#[test]
fn lenient_rounds_what_strict_refuses_and_says_where_first() {
    let text = r#"{"a": 1, "b": {"c": [0.5, 1e400]}, "d": -1e999, "e": 16777217, "f": 1e-400,
        "g": "1e400", "h": 1e-50}"#;
    let (blob, r) = lenient(text);
    assert_eq!(r, report(&[], &["/b/c/1", "/d", "/e", "/f", "/h"]));
    assert_eq!(blob.get_floats("b.c"), Some(&[0.5, f32::MAX][..]));
    assert_eq!(blob.get_float("d"), Some(-f32::MAX));
    assert_eq!(blob.get_float("e"), Some(16_777_216.0));
    assert_eq!(blob.get_float("f"), Some(0.0));
    assert_eq!(blob.get_str("g"), Some("1e400"), "a string is not a number");
    assert_eq!(blob.get_float("h"), Some(0.0));
    // The same text into a store: the same report, and the names once each.
    let mut store = Store::new();
    let Imported { ids, report: r } = store.import(text, &ImportOptions::lenient()).unwrap();
    assert_eq!(r, report(&[], &["/b/c/1", "/d", "/e", "/f", "/h"]));
    assert_eq!(store.get(ids[0]).unwrap().to_blob(), blob);
    assert_eq!(store.key_names().len(), 7);
    // Errors after a literal past f64 still say where they are.
    let err = Blob::import(r#"{"a": 1e400, "b": nul}"#, &ImportOptions::lenient());
    let err = err.unwrap_err();
    assert!(matches!(err.kind(), JsonErrorKind::Syntax(_)), "{err}");
    assert_eq!((err.path(), err.column()), ("/b", 22));
}

#[test]
fn a_store_import_refused_for_a_tiny_number_changes_nothing() {
    let mut store = Store::new();
    store.import(r#"{"kept": 1}"#, &ImportOptions::strict()).unwrap();
    let before = (store.to_bytes(), store.key_names().len());
    // The first read succeeds (serde_json reads 1e-400 as 0); the second refuses it.
    let text = r#"[{"x": 0.0}, {"y": 2, "z": [1e-400]}]"#;
    let err = store.import(text, &ImportOptions::strict()).unwrap_err();
    assert_eq!(err.kind(), &not_held("1e-400", 0.0));
    assert_eq!((err.path(), err.column()), ("/1/z/0", 34));
    assert_eq!((store.to_bytes(), store.key_names().len()), before);
}

#[test]
fn messages_say_where_and_what() {
    let err = Blob::import(&fixture("invalid/number_too_big.json"), &ImportOptions::strict())
        .unwrap_err();
    assert_eq!(err.to_string(), "/stats/gold (line 2, column 27): 1e39 is past the range of f32");
    let err =
        Blob::import(&fixture("invalid/key_collision.json"), &ImportOptions::strict()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "/fury_sleep_272 (line 3, column 23): fury_sleep_272 and sleep_haste_8 hash to the same key #316ec2d7"
    );
    let err = Blob::import("{\"a/b~c\": null}", &ImportOptions::strict()).unwrap_err();
    assert_eq!(err.path(), "/a~1b~0c", "JSON Pointer escapes");
}

#[test]
fn every_truncation_of_a_fixture_is_an_error() {
    let text = fixture("sheets/wizard.json");
    let closing_brace = text.trim_end().len() - 1;
    for len in (0..=closing_brace).filter(|&l| text.is_char_boundary(l)) {
        let err = Blob::import(&text[..len], &ImportOptions::strict()).unwrap_err();
        assert!(matches!(err.kind(), JsonErrorKind::Syntax(_)), "cut at {len}: {err}");
    }
}

// ---------------------------------------------------------------------------------------------
// Lenient

fn lenient(text: &str) -> (Blob, ImportReport) {
    with_report(text, &ImportOptions::lenient()).unwrap()
}

/// One entity and what its import changed: `Blob::import` keeps no report, so the report is
/// that of the same text imported into a store, as one entity (the same importer and rules).
fn with_report(text: &str, options: &ImportOptions) -> Result<(Blob, ImportReport), JsonError> {
    let blob = Blob::import(text, options)?;
    let report = Store::new().import(text, options)?.report;
    Ok((blob, report))
}

/// A report of arrays converted (the first at `converted[0]`) and numbers rounded.
fn report(converted: &[&str], rounded: &[&str]) -> ImportReport {
    let mut report = ImportReport::default();
    report.converted_arrays = converted.len();
    report.first_converted = converted.first().map(|&path| path.to_owned());
    report.rounded_numbers = rounded.len();
    report.first_rounded = rounded.first().map(|&path| path.to_owned());
    report
}

#[test]
fn lenient_turns_the_invalid_fixtures_into_data() {
    let (owlbear, r) = lenient(&fixture("invalid/array_of_objects.json"));
    assert_eq!(r, report(&["/armor_class"], &[]));
    assert_eq!(owlbear.get_str("name"), Some("Owlbear"));
    assert_eq!(owlbear.get_str("armor_class.0.type"), Some("natural"));
    assert_eq!(owlbear.get_float("armor_class.0.value"), Some(17.0));
    assert_eq!(owlbear.len(), 3);

    let (mixed, r) = lenient(&fixture("invalid/mixed_array.json"));
    assert_eq!(r, report(&["/position"], &[]));
    assert_eq!(mixed.get("position.0"), Some(Value::Float(1.0)), "numbers before the first other");
    assert_eq!(mixed.get("position.1"), Some(Value::Float(2.0)));
    assert_eq!(mixed.get("position.2"), Some(Value::Str("three")));
    assert!(!mixed.contains_key("position"));

    let (nobody, r) = lenient(&fixture("invalid/null_value.json"));
    assert_eq!(r, report(&[], &[]));
    assert_eq!(nobody.len(), 2);
    assert_eq!(nobody.get("stats.health"), Some(Value::Null), "null is kept");

    let (rich, r) = lenient(&fixture("invalid/number_too_big.json"));
    assert_eq!(r, report(&[], &["/stats/gold"]));
    assert_eq!(rich.get_float("stats.gold"), Some(f32::MAX));

    // What JSON itself forbids stays an error.
    let err = Blob::import(&fixture("invalid/trailing_comma.json"), &ImportOptions::lenient());
    assert!(matches!(err.unwrap_err().kind(), JsonErrorKind::Syntax(_)));
}

/// Empty objects store nothing (an object's members are its keys); every import counts the
/// ones it leaves out, strict and lenient, blob and store, JSON and SJSON (issue 16).
#[test]
fn empty_objects_are_left_out_and_counted() {
    let text = r#"{"name": "Imp", "buffs": {}, "stats": {"hp": 3, "extra": {}, "more": {"x": {}}},
                  "list": [{}, {"a": 1}], "gone": {"only": null}}"#;
    let mut expected = ImportReport::default();
    // `buffs`, `stats.extra`, `stats.more.x` and the array's first element; `gone` holds a
    // member (a null), so it is kept, not an empty object.
    expected.empty_objects = 4;
    expected.first_empty_object = Some("/buffs".into());
    expected.converted_arrays = 1;
    expected.first_converted = Some("/list".into());
    let (blob, report) = lenient(text);
    assert_eq!(report, expected);
    assert_eq!(blob.len(), 4);
    assert_eq!(blob.get("gone.only"), Some(Value::Null));
    assert_eq!(blob.get_float("list.1.a"), Some(1.0));
    let sjson = ImportOptions::lenient().format(TextFormat::Sjson);
    let (sjson, report) = with_report(text, &sjson).unwrap();
    assert_eq!((sjson, report), (blob, expected.clone()));

    let mut store = Store::new();
    let Imported { ids, report } = store
        .import(&format!("[{text}, {{}}, {{\"e\": {{}}}}]"), &ImportOptions::lenient())
        .unwrap();
    expected.empty_objects += 1; // `e`; the entity `{}` itself is kept, with no keys
    // Paths in an array of entities start with the entity's index.
    expected.first_empty_object = Some("/0/buffs".into());
    expected.first_converted = Some("/0/list".into());
    assert_eq!(report, expected);
    assert_eq!(ids.len(), 3);
    assert_eq!(
        store.export(ids[0], &ExportOptions::json()).unwrap(),
        r#"{"name":"Imp","stats":{"hp":3},"list":{"1":{"a":1}},"gone":{"only":null}}"#
    );
    assert_eq!(store.export(ids[1], &ExportOptions::json()).unwrap(), "{}");

    // Strict leaves them out the same way, and says so.
    let strict = r#"{"a": {}, "b": {"c": {}}, "d": 1}"#;
    let (blob, report) = with_report(strict, &ImportOptions::strict()).unwrap();
    assert_eq!((blob.len(), report.empty_objects), (1, 2));
    assert_eq!(blob, Blob::import(strict, &ImportOptions::strict()).unwrap());
}

#[test]
fn lenient_arrays_of_every_shape() {
    let (blob, r) = lenient(
        r#"{"a": [1, null, 2], "b": [[1, 2], [3]], "c": [{"x": 1}, 5, true], "d": [-1e39]}"#,
    );
    assert_eq!(r, report(&["/a", "/b", "/c"], &["/d/0"]));
    assert_eq!(blob.get_float("a.0"), Some(1.0));
    assert_eq!(blob.get("a.1"), Some(Value::Null), "the null is kept");
    assert_eq!(blob.get_float("a.2"), Some(2.0));
    assert_eq!(blob.get_floats("b.0"), Some(&[1.0, 2.0][..]));
    assert_eq!(blob.get_floats("b.1"), Some(&[3.0][..]));
    assert_eq!(blob.get_float("c.0.x"), Some(1.0));
    assert_eq!(blob.get_float("c.1"), Some(5.0));
    assert_eq!(blob.get_bool("c.2"), Some(true));
    assert_eq!(blob.get_floats("d"), Some(&[-f32::MAX][..]), "a number array stays one");
    assert_eq!(blob.len(), 9);

    // A converted array is an object: its path may not also hold a value, before or after.
    for (text, column) in
        [(r#"{"a": [1, {"b": 2}], "a": 5}"#, 27), (r#"{"a": 5, "a": [true]}"#, 19)]
    {
        let err = Blob::import(text, &ImportOptions::lenient()).unwrap_err();
        assert_eq!(err.kind(), &JsonErrorKind::DuplicatePath("a".into()), "{err}");
        assert_eq!((err.path(), err.column()), ("/a", column), "{text}");
    }
}

/// A path holds one value or one object: a document that gives it both (as two members of
/// the same name) could not be exported back, since JSON has no way to write both. Found by
/// the `json_import` fuzz target, where the fixture's `stats` object met a later `stats` array.
#[test]
fn a_path_is_a_value_or_an_object_never_both() {
    let cases = [
        (r#"{"stats": {"health": 64}, "stats": [0.2, 1]}"#, "/stats", 43),
        (r#"{"stats": [0.2, 1], "stats": {"health": 64}}"#, "/stats", 30),
        (r#"{"a": {"b": {"c": 1}, "b": true}}"#, "/a/b", 31),
        (r#"{"a": {"b": 1}, "a": {"c": 2}}"#, "/a", 22),
    ];
    for options in [ImportOptions::strict(), ImportOptions::lenient()] {
        for (text, path, column) in cases {
            let err = Blob::import(text, &options).unwrap_err();
            let dotted = path[1..].replace('/', ".");
            assert_eq!(err.kind(), &JsonErrorKind::DuplicatePath(dotted), "{text}: {err}");
            assert_eq!((err.path(), err.line(), err.column()), (path, 1, column), "{text}");
            let mut store = Store::new();
            assert!(store.import(text, &options).is_err());
            assert!(store.is_empty() && store.key_names().len() == 0);
        }
    }
    // The same path in two entities is two entities, and each exports back as it was read.
    let mut store = Store::new();
    let text = r#"[{"stats": {"health": 64}}, {"stats": [0.2, 1]}]"#;
    let ids = store.import(text, &ImportOptions::strict()).unwrap().ids;
    assert_eq!(store.export(ids[0], &ExportOptions::json()).unwrap(), r#"{"stats":{"health":64}}"#);
    assert_eq!(store.export(ids[1], &ExportOptions::json()).unwrap(), r#"{"stats":[0.2,1]}"#);
}

// ---------------------------------------------------------------------------------------------
// Random documents against a model

#[derive(Clone, Debug)]
enum Node {
    Leaf(OwnedValue),
    Object(BTreeMap<String, Node>),
}

fn leaf() -> impl Strategy<Value = OwnedValue> {
    prop_oneof![
        any::<bool>().prop_map(OwnedValue::Bool),
        (-1e6_f32..1e6).prop_map(OwnedValue::Float),
        "\\PC{0,24}".prop_map(OwnedValue::Str),
        prop::collection::vec(-1e6_f32..1e6, 0..8).prop_map(OwnedValue::Floats),
        Just(OwnedValue::Null),
    ]
}

fn node() -> impl Strategy<Value = Node> {
    leaf().prop_map(Node::Leaf).prop_recursive(3, 24, 6, |inner| {
        prop::collection::btree_map("[a-z]{1,6}", inner, 0..6).prop_map(Node::Object)
    })
}

fn to_json(node: &Node) -> serde_json::Value {
    match node {
        Node::Leaf(OwnedValue::Bool(b)) => serde_json::Value::Bool(*b),
        Node::Leaf(OwnedValue::Float(f)) => serde_json::json!(f),
        Node::Leaf(OwnedValue::Str(s)) => serde_json::Value::String(s.clone()),
        Node::Leaf(OwnedValue::Floats(f)) => serde_json::json!(f),
        // The generator makes no tombstone (an instance's, not a fixture's).
        Node::Leaf(OwnedValue::Null | OwnedValue::Tombstone) => serde_json::Value::Null,
        Node::Object(members) => members.iter().map(|(k, v)| (k.clone(), to_json(v))).collect(),
    }
}

/// The (key, value) pairs a document flattens to.
fn flatten(
    members: &BTreeMap<String, Node>,
    parent: Option<Key>,
    out: &mut Vec<(Key, OwnedValue)>,
) {
    for (name, node) in members {
        let key = parent.map_or_else(|| Key::new(name), |p| p.child(name));
        match node {
            Node::Leaf(value) => out.push((key, value.clone())),
            Node::Object(inner) => flatten(inner, Some(key), out),
        }
    }
}

proptest! {
    #[test]
    fn random_documents_import_as_the_model_says(
        members in prop::collection::btree_map("[a-z]{1,6}", node(), 0..8),
    ) {
        let text = to_json(&Node::Object(members.clone())).to_string();
        let mut expected = Vec::new();
        flatten(&members, None, &mut expected);
        // A document in the restricted format reads the same under both policies; one with
        // a null reads leniently, and strictly is refused (or collides first).
        let nulls = expected.iter().any(|(_, v)| *v == OwnedValue::Null);
        let lenient = with_report(&text, &ImportOptions::lenient());
        let strict = with_report(&text, &ImportOptions::strict());
        if nulls {
            let refused = strict.as_ref().map_err(JsonError::kind);
            prop_assert!(
                matches!(refused, Err(JsonErrorKind::Null | JsonErrorKind::KeyCollision { .. })),
                "{:?}", refused
            );
        } else {
            prop_assert_eq!(
                lenient.as_ref().map(|(blob, r)| (blob.clone(), r.clone())).map_err(Clone::clone),
                strict
            );
        }
        let options = if nulls { ImportOptions::lenient() } else { ImportOptions::strict() };
        match Blob::import(&text, &options) {
            Ok(blob) => {
                prop_assert_eq!(blob.len(), expected.len());
                for (key, value) in &expected {
                    let got = blob.get(*key).unwrap();
                    // f32 -> JSON -> f32 round-trips exactly.
                    prop_assert!(got.is_identical(&value.as_value()), "{}: {:?} vs {:?}", key, got, value);
                }
            }
            // Short random names can collide: then both paths must be in the model.
            Err(e) => match e.kind() {
                JsonErrorKind::KeyCollision { key, .. } => {
                    prop_assert!(expected.iter().filter(|(k, _)| k == key).count() >= 2);
                }
                other => prop_assert!(false, "{other:?}: {e}"),
            },
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Lenient: arbitrary JSON against a model of the lenient rules

fn any_json() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        (-1e6_f64..1e6).prop_map(|f| serde_json::json!(f as f32)),
        Just(serde_json::json!(1e39)),
        "[a-z]{0,8}".prop_map(serde_json::Value::String),
    ];
    leaf.prop_recursive(3, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(serde_json::Value::Array),
            prop::collection::btree_map("[a-z]{1,5}", inner, 0..5)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

/// The lenient rules, written plainly: what each path becomes.
fn flatten_lenient(value: &serde_json::Value, key: Key, out: &mut Vec<(Key, OwnedValue)>) {
    let number = |n: f64| (n.clamp(-f64::from(f32::MAX), f64::from(f32::MAX))) as f32;
    match value {
        serde_json::Value::Null => out.push((key, OwnedValue::Null)),
        serde_json::Value::Bool(b) => out.push((key, OwnedValue::Bool(*b))),
        serde_json::Value::Number(n) => {
            out.push((key, OwnedValue::Float(number(n.as_f64().unwrap()))))
        }
        serde_json::Value::String(s) => out.push((key, OwnedValue::Str(s.clone()))),
        serde_json::Value::Array(items) if items.iter().all(serde_json::Value::is_number) => {
            let floats = items.iter().map(|n| number(n.as_f64().unwrap())).collect();
            out.push((key, OwnedValue::Floats(floats)));
        }
        serde_json::Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                flatten_lenient(item, key.child(&i.to_string()), out);
            }
        }
        serde_json::Value::Object(members) => {
            for (name, member) in members {
                flatten_lenient(member, key.child(name), out);
            }
        }
    }
}

proptest! {
    #[test]
    fn lenient_import_follows_the_lenient_rules(
        members in prop::collection::btree_map("[a-z]{1,5}", any_json(), 0..6),
    ) {
        let text = serde_json::Value::Object(members.clone().into_iter().collect()).to_string();
        let mut expected = Vec::new();
        for (name, value) in &members {
            flatten_lenient(value, Key::new(name), &mut expected);
        }
        match Blob::import(&text, &ImportOptions::lenient()) {
            Ok(blob) => {
                prop_assert_eq!(blob.len(), expected.len(), "{}", text);
                for (key, value) in &expected {
                    let got = blob.get(*key);
                    prop_assert!(got.is_some_and(|g| g.is_identical(&value.as_value())), "{}: {:?} vs {:?} in {}", key, got, value, text);
                }
            }
            Err(e) => match e.kind() {
                JsonErrorKind::KeyCollision { key, .. } => {
                    prop_assert!(expected.iter().filter(|(k, _)| k == key).count() >= 2);
                }
                other => prop_assert!(false, "{other:?}: {e} in {text}"),
            },
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Importing into a store

use datacomp::Store;

fn party() -> String {
    format!("[{}, {}]", fixture("sheets/classic.json"), fixture("sheets/wizard.json"))
}

#[test]
fn a_store_imports_an_array_of_entities_in_order_with_their_names() {
    let mut store = Store::new();
    let ids = store.import(&party(), &ImportOptions::strict()).unwrap().ids;
    assert_eq!(ids.len(), 2);
    for (id, name) in ids.iter().zip(["classic", "wizard"]) {
        let expected =
            Blob::import(&fixture(&format!("sheets/{name}.json")), &ImportOptions::strict())
                .unwrap();
        assert_eq!(store.get(*id).unwrap(), expected, "{name}: as Blob::import reads it");
    }
    assert_eq!(
        store.key_name(Key::parse("spellbook.blink.cooldown")).as_deref(),
        Some("spellbook.blink.cooldown")
    );
    assert_eq!(store.key_name(Key::parse("name")).as_deref(), Some("name"));
    assert_eq!(store.key_name(Key::parse("no.such.key")), None);

    let one = store.import(&fixture("sheets/classic.json"), &ImportOptions::strict()).unwrap().ids;
    assert_eq!(one.len(), 1, "a top-level object is one entity");
    assert_eq!(store.len(), 3);
    assert_eq!(store.stats().garbage_bytes, 0, "staged blobs are stored repacked");
}

#[test]
fn a_failed_import_changes_nothing() {
    let mut store = Store::new();
    store.import(&fixture("sheets/classic.json"), &ImportOptions::strict()).unwrap();
    let (stats, bytes) = (store.stats(), store.to_bytes());
    let text = format!(
        "[{}, {{\"fresh.key\": 1}}, {}]",
        fixture("sheets/wizard.json"),
        fixture("invalid/null_value.json")
    );
    let err = store.import(&text, &ImportOptions::strict()).unwrap_err();
    assert_eq!((err.kind(), err.path()), (&JsonErrorKind::Null, "/2/stats/health"));
    assert_eq!(store.stats(), stats);
    assert_eq!(store.to_bytes(), bytes, "not one byte of the store changed");
    assert_eq!(store.key_name(Key::parse("class")), None, "no name of the failed import is kept");

    let err = store.import("[{\"a\": 1}, 42]", &ImportOptions::strict()).unwrap_err();
    assert_eq!((err.kind(), err.path()), (&JsonErrorKind::NotAnObject, "/1"));
    assert_eq!(store.len(), 1);
}

#[test]
fn a_key_known_under_another_name_is_a_collision() {
    let mut store = Store::new();
    store.import("{\"sleep_haste_8\": 1}", &ImportOptions::strict()).unwrap();
    let err = store
        .import("{\"other\": true,\n \"fury_sleep_272\": 2}", &ImportOptions::strict())
        .unwrap_err();
    let expected = JsonErrorKind::KeyCollision {
        first: "sleep_haste_8".into(),
        second: "fury_sleep_272".into(),
        key: Key::from_raw(0x316e_c2d7),
    };
    assert_eq!(
        (err.kind(), err.path(), err.line(), err.column()),
        (&expected, "/fury_sleep_272", 2, 20)
    );
    assert_eq!(store.len(), 1);
    assert_eq!(store.key_name(Key::parse("other")), None);
    // The same name again is no collision.
    store.import("{\"sleep_haste_8\": 2}", &ImportOptions::strict()).unwrap();
    assert_eq!(store.len(), 2);
}

#[test]
fn names_given_by_hand_follow_the_import_rules_and_are_saved() {
    let mut store = Store::new();
    store.import(r#"{"a": {"b~/": 1}}"#, &ImportOptions::strict()).unwrap();
    // The name an import gave, given again: no change.
    assert_eq!(store.insert_key_name("a.b~/").unwrap(), Key::path(&["a", "b~/"]));
    let luck = store.insert_key_name("stats.luck").unwrap();
    assert_eq!(luck, Key::parse("stats.luck"));
    assert_eq!(
        store.insert_key_name("fury_sleep_272").unwrap(),
        Key::from_raw(0x316e_c2d7),
        "no collision while the other name is unknown"
    );
    let err = store.insert_key_name("sleep_haste_8").unwrap_err();
    let datacomp::Error::Key(err @ KeyError::Collision { .. }) = err else { panic!("{err}") };
    assert_eq!(
        err,
        KeyError::Collision {
            key: Key::from_raw(0x316e_c2d7),
            name: "sleep_haste_8".into(),
            known: "fury_sleep_272".into()
        }
    );
    let KeyError::Collision { key, .. } = err else { unreachable!() };
    assert_eq!(store.key_name(key).as_deref(), Some("fury_sleep_272"), "unchanged");
    // An import meets the hand-given name like one it gave itself.
    let err = store.import(r#"{"sleep_haste_8": 1}"#, &ImportOptions::strict()).unwrap_err();
    assert!(matches!(err.kind(), JsonErrorKind::KeyCollision { .. }), "{err}");
    let loaded = Store::from_bytes(&store.to_bytes()).unwrap();
    assert_eq!(loaded.key_name(luck).as_deref(), Some("stats.luck"));
    assert_eq!(loaded.key_name(Key::path(&["a", "b~/"])).as_deref(), Some("a.b~/"));
}

// ---------------------------------------------------------------------------------------------
// Export

#[test]
fn import_export_import_gives_the_same_entities() {
    let mut store = Store::new();
    let ids = store.import(&party(), &ImportOptions::strict()).unwrap().ids;
    for id in ids {
        let exported = store.export(id, &ExportOptions::json()).unwrap();
        let again = Blob::import(&exported, &ImportOptions::strict()).unwrap();
        assert_eq!(again, store.get(id).unwrap(), "{exported}");
    }
    let classic =
        store.import(&fixture("sheets/classic.json"), &ImportOptions::strict()).unwrap().ids[0];
    assert_eq!(
        store.export(classic, &ExportOptions::json()).unwrap(),
        r#"{"name":"The One","stats":{"health":100,"mana":200},"status_effects":{"drunk":true,"delirious":true}}"#,
        "nested again, in document order"
    );
}

#[test]
fn a_whole_store_exports_as_an_array_that_imports_back() {
    let mut store = Store::new();
    let ids = store.import(&fixture("party.json"), &ImportOptions::strict()).unwrap().ids;
    store.remove(ids[1]);
    for exported in [
        store.export_all(&ExportOptions::json()).unwrap(),
        store.export_all(&ExportOptions::json().pretty(true)).unwrap(),
    ] {
        let mut again = Store::new();
        let new_ids = again.import(&exported, &ImportOptions::strict()).unwrap().ids;
        assert_eq!(new_ids.len(), 3);
        for ((_, before), (_, after)) in store.iter().zip(again.iter()) {
            assert_eq!(before, after, "in iteration order");
        }
        assert_eq!(
            again.export_all(&ExportOptions::json()).unwrap(),
            store.export_all(&ExportOptions::json()).unwrap()
        );
    }
    // Pretty output is the compact output, indented, with float arrays on one line.
    assert_eq!(
        store.export(ids[2], &ExportOptions::json().pretty(true)).unwrap(),
        r#"{
  "name": "Cave Troll",
  "kind": "monster",
  "stats": {
    "health": 140,
    "mana": 0,
    "armor": 9,
    "regeneration": 2.5
  },
  "transform": {
    "position": [12, 0, -40.5],
    "scale": [2.2, 2.2, 2.2]
  },
  "status_effects": {
    "enraged": true,
    "stunned": false
  }
}"#
    );
    for (id, _) in store.iter() {
        let pretty: serde_json::Value =
            serde_json::from_str(&store.export(id, &ExportOptions::json().pretty(true)).unwrap())
                .unwrap();
        let compact: serde_json::Value =
            serde_json::from_str(&store.export(id, &ExportOptions::json()).unwrap()).unwrap();
        assert_eq!(pretty, compact);
    }
    assert_eq!(
        store.export(ids[1], &ExportOptions::json().pretty(true).non_finite_as_null()).ok(),
        None,
        "removed"
    );
    assert_eq!(Store::new().export_all(&ExportOptions::json()).unwrap(), "[]");
}

#[test]
fn member_names_with_dots_slashes_and_tildes_survive_export() {
    let mut store = Store::new();
    let text = r#"{"a.b":{"c/d~e":1,"f":[1.5]},"g":"h"}"#;
    let id = store.import(text, &ImportOptions::strict()).unwrap().ids[0];
    assert_eq!(
        store.export(id, &ExportOptions::json()).unwrap(),
        r#"{"a.b":{"c/d~e":1,"f":[1.5]},"g":"h"}"#
    );
    assert_eq!(store.key_name(Key::new("a.b").child("f")).as_deref(), Some("a.b.f"));
}

#[test]
fn keys_without_a_place_export_by_hash() {
    let mut store = Store::new();
    let id = store.import(r#"{"a": 1}"#, &ImportOptions::strict()).unwrap().ids[0];
    store.import(r#"{"a": {"b": 2}}"#, &ImportOptions::strict()).unwrap();
    let mut blob = store.get_mut(id).unwrap();
    // Named a.b by the other entity, but a is a value here; a Key is written unchecked.
    blob.set(Key::parse("a.b"), 2.0).unwrap();
    blob.set(Key::from_raw(7), "unnamed").unwrap();
    let exported = store.export(id, &ExportOptions::json()).unwrap();
    let a_b = Key::parse("a.b");
    assert_eq!(exported, format!(r##"{{"a":1,"{a_b}":2,"#00000007":"unnamed"}}"##));
    assert_eq!(
        store.export(datacomp::Id::NULL, &ExportOptions::json().non_finite_as_null()).ok(),
        None
    );
}

proptest! {
    #[test]
    fn whatever_imports_leniently_exports_to_what_imports_back_the_same(
        members in prop::collection::btree_map("[a-z]{1,5}", any_json(), 0..6),
    ) {
        let text = serde_json::Value::Object(members.into_iter().collect()).to_string();
        let mut store = Store::new();
        let lenient = ImportOptions::lenient();
        if let Ok(Imported { ids, .. }) = store.import(&text, &lenient) {
            let exported = store.export(ids[0], &ExportOptions::json()).unwrap();
            let again = Blob::import(&exported, &lenient);
            prop_assert!(again.is_ok(), "{} -> {}: {:?}", text, exported, again);
            prop_assert_eq!(again.unwrap(), store.get(ids[0]).unwrap().to_blob());
            let pretty = store.export(ids[0], &ExportOptions::json().pretty(true)).unwrap();
            let again = Blob::import(&pretty, &lenient).unwrap();
            prop_assert_eq!(again, store.get(ids[0]).unwrap().to_blob());
            // Arrays come back as arrays: a second round trip writes the same text.
            let mut copy = Store::new();
            let id = copy.import(&exported, &lenient).unwrap().ids[0];
            prop_assert_eq!(copy.export(id, &ExportOptions::json()).unwrap(), exported);
        }
    }
}

#[test]
fn the_party_file_imports_four_entities() {
    let mut store = Store::new();
    let ids = store.import(&fixture("party.json"), &ImportOptions::strict()).unwrap().ids;
    assert_eq!(ids.len(), 4);
    let names: Vec<_> =
        ids.iter().map(|&id| store.get(id).unwrap().get_str("name").unwrap().to_owned()).collect();
    assert_eq!(names, ["The One", "Orc Raider", "Cave Troll", "Mirabel"], "document order");
    let troll = store.get(ids[2]).unwrap();
    assert_eq!(troll.get_float("stats.regeneration"), Some(2.5));
    assert_eq!(troll.get_floats("transform.scale"), Some(&[2.2, 2.2, 2.2][..]));
    let merchant = store.get(ids[3]).unwrap();
    assert_eq!(merchant.get_float("shop.stock.rope"), Some(40.0));
    assert_eq!(merchant.get_floats("shop.prices"), Some(&[2.5, 40.0, 0.75][..]));
    assert_eq!(
        store.key_name(Key::parse("shop.stock.potion")).as_deref(),
        Some("shop.stock.potion")
    );
    for id in ids {
        let again = Blob::import(
            &store.export(id, &ExportOptions::json()).unwrap(),
            &ImportOptions::strict(),
        )
        .unwrap();
        assert_eq!(again, store.get(id).unwrap());
    }
}

#[test]
fn a_sheet_with_many_keys_and_long_strings() {
    let golem = Blob::import(&fixture("sheets/golem.json"), &ImportOptions::strict()).unwrap();
    assert_eq!(golem.len(), 58, "3 + 10 stats + 8 resistances + 24 rune fields + 6 joints + 3 + 4");
    assert_eq!(golem.get_float("stats.speed"), Some(0.6));
    assert_eq!(golem.get_float("resistances.lightning"), Some(-0.25));
    assert_eq!(golem.get_bool("runes.rune_03.active"), Some(true));
    assert_eq!(golem.get_float("runes.rune_04.charge"), Some(0.48));
    assert_eq!(golem.get_floats("joints.neck"), Some(&[0.0, 0.1, 0.2, 0.3][..]));
    assert_eq!(
        golem.get_str("inscriptions.base"),
        Some("Do not feed the golem. It does not eat, but it remembers.")
    );
    assert!(golem.get_str("inscriptions.chest").is_some_and(|s| s.len() > 140));
    assert_eq!(golem.get_bool("patrol.loop"), Some(true));
    assert_eq!(
        Blob::from_bytes(golem.as_bytes()).unwrap(),
        golem,
        "past 32 keys: scratch validation"
    );
    let mut store = Store::new();
    let id = store.import(&fixture("sheets/golem.json"), &ImportOptions::strict()).unwrap().ids[0];
    assert_eq!(
        Blob::import(&store.export(id, &ExportOptions::json()).unwrap(), &ImportOptions::strict())
            .unwrap(),
        golem
    );
}

/// A 20,000-byte member name in an error is cut to its ends and a count, and control
/// characters in it are escaped: the message stays one short line.
#[test]
fn long_and_hostile_names_are_cut_and_escaped_in_errors() {
    let long = "m".repeat(20_000);
    let err = Blob::import(&format!("{{\"{long}\": null}}"), &ImportOptions::strict()).unwrap_err();
    assert_eq!(err.path().len(), 20_001, "the path itself is whole");
    let cut = format!("/{}[...19809 bytes cut...]{}", "m".repeat(95), "m".repeat(96));
    assert_eq!(
        err.to_string(),
        format!(
            "{cut} (line 1, column 20009): null is read by the lenient import only, not the strict one"
        )
    );

    let err = Blob::import(&format!("{{\"{long}\": 1, \"{long}\": 2}}"), &ImportOptions::strict())
        .unwrap_err();
    assert!(err.to_string().len() < 600, "{err}");

    let err = Blob::import("{\"a\\u001b[2J\\nb\": null}", &ImportOptions::strict()).unwrap_err();
    assert_eq!(
        err.to_string(),
        r"/a\u{1b}[2J\nb (line 1, column 22): null is read by the lenient import only, not the strict one"
    );

    let key = datacomp::Key::parse("k");
    let err = KeyError::Collision { key, name: long.clone(), known: format!("{long}\n") };
    let cut = format!("{}[...19808 bytes cut...]{}", "m".repeat(96), "m".repeat(96));
    let cut_too = format!("{}[...19809 bytes cut...]{}\\n", "m".repeat(96), "m".repeat(95));
    assert_eq!(err.to_string(), format!("{cut} and {cut_too} hash to the same key {key}"));
}

#[test]
fn a_lenient_import_of_twenty_thousand_objects_keeps_every_key() {
    // Key hash 1 collided on such arrays past about 10,000 elements. Key hash 2 gives
    // `inventory.2241.count` the key of the object `inventory.18937`: harmless, since an
    // object's key is never stored, and not a collision.
    assert_eq!(Key::parse("inventory.2241.count"), Key::parse("inventory.18937"));
    let items: Vec<String> = (0..20_000).map(|i| format!(r#"{{"count": {i}}}"#)).collect();
    let text = format!(r#"{{"inventory": [{}]}}"#, items.join(","));
    let mut store = Store::new();
    let Imported { ids, report } = store.import(&text, &ImportOptions::lenient()).unwrap();
    assert_eq!(report.converted_arrays, 1);
    let sheet = store.get(ids[0]).unwrap();
    assert_eq!(sheet.len(), 20_000);
    assert_eq!(sheet.get_float("inventory.19999.count"), Some(19_999.0));
    assert_eq!(sheet.get_float("inventory.2241.count"), Some(2241.0));
    assert_eq!(store.key_names().len(), 20_000);
    // A value and an object of one path still clash, at any depth.
    for text in [r#"{"a": {"b": 1, "b": {"c": 2}}}"#, r#"{"a": {"b": {"c": 2}, "b": 1}}"#] {
        let err = Blob::import(text, &ImportOptions::strict()).unwrap_err();
        assert_eq!(err.kind(), &JsonErrorKind::DuplicatePath("a.b".into()), "{text}");
    }
}

// ---------------------------------------------------------------------------------------------
// Export: numbers as people write them, and nothing that does not read back

use datacomp::text::export_blob;
use datacomp::{ExportError, ExportOptions};

#[test]
fn exports_write_whole_numbers_without_a_fraction_and_others_shortest() {
    let mut store = Store::new();
    let text = r#"{"hp":135,"ac":[17,0.5,-2],"big":123456790,"huge":1e+20,"tiny":1e-7,"zero":-0.0,"max":3.4028235e+38}"#;
    let id = store.import(text, &ImportOptions::strict()).unwrap().ids[0];
    assert_eq!(store.export(id, &ExportOptions::json()).unwrap(), text);
    assert_eq!(store.export(id, &ExportOptions::json()).unwrap(), text);
    assert_eq!(
        store.export(id, &ExportOptions::json().pretty(true)).unwrap(),
        "{\n  \"hp\": 135,\n  \"ac\": [17, 0.5, -2],\n  \"big\": 123456790,\n  \"huge\": 1e+20,\n  \
         \"tiny\": 1e-7,\n  \"zero\": -0.0,\n  \"max\": 3.4028235e+38\n}"
    );
}

#[test]
fn export_refuses_what_json_has_no_number_for() {
    let mut store = Store::new();
    let ids =
        store.import(r#"[{"a": {"b": 1}}, {"c": [1, 2]}]"#, &ImportOptions::strict()).unwrap().ids;
    store.get_mut(ids[0]).unwrap().set("a.x", f32::INFINITY).unwrap();
    store.get_mut(ids[1]).unwrap().set("c", [1.0, f32::NAN]).unwrap();
    let not_finite =
        |entity, key: &str, value: f32| ExportError::NotFinite { entity, key: key.into(), value };
    for pretty in [false, true] {
        let options = ExportOptions::json().pretty(pretty);
        let err = store.export(ids[1], &options).unwrap_err();
        assert!(matches!(&err, ExportError::NotFinite { entity: Some(id), key, value }
            if *id == ids[1] && key == "c" && value.is_nan()));
        assert_eq!(
            store.export_all(&options).unwrap_err(),
            not_finite(Some(ids[0]), "a.x", f32::INFINITY)
        );
        let blob = store.get(ids[0]).unwrap();
        assert_eq!(
            export_blob(&store, blob, &options).unwrap_err(),
            not_finite(None, "a.x", f32::INFINITY)
        );
        let at = store.export_at(ids[0], "a", &options);
        assert_eq!(at.unwrap_err(), not_finite(Some(ids[0]), "a.x", f32::INFINITY));
        let fine = store.export_at(ids[0], "a.b", &options);
        assert_eq!(fine.unwrap(), "1");
    }
    // A lossy export writes null, which does not read back as the float.
    let lossy = ExportOptions::json().non_finite_as_null();
    assert_eq!(store.export(ids[1], &lossy).unwrap(), r#"{"c":[1,null]}"#);
    let exported = store.export(ids[1], &lossy).unwrap();
    assert!(Blob::import(&exported, &ImportOptions::strict()).is_err());
    let back = Blob::import(&exported, &ImportOptions::lenient()).unwrap();
    assert_eq!(back.get("c.1"), Some(Value::Null));
    // Removed, the entity no longer stops the export.
    store.remove(ids[1]);
    store.get_mut(ids[0]).unwrap().remove("a.x");
    assert_eq!(store.export_all(&ExportOptions::json()).unwrap(), r#"[{"a":{"b":1}}]"#);
    assert!(matches!(store.export(ids[1], &ExportOptions::json()), Err(ExportError::Handle(_))));
}

#[test]
fn a_subtree_exports_as_the_whole_entity_nests_it() {
    let mut store = Store::new();
    let text =
        r#"{"name":"Orc","stats":{"hp":30,"speed":{"walk":1.5,"run":[3,4]}},"stats.x":{"y":true}}"#;
    let id = store.import(text, &ImportOptions::strict()).unwrap().ids[0];
    let at = |path: &str| store.export_at(id, path, &ExportOptions::json());
    assert_eq!(at("stats").unwrap(), r#"{"hp":30,"speed":{"walk":1.5,"run":[3,4]}}"#);
    assert_eq!(at("stats.speed").unwrap(), r#"{"walk":1.5,"run":[3,4]}"#);
    assert_eq!(at("stats.speed.run").unwrap(), "[3,4]");
    assert_eq!(at("name").unwrap(), r#""Orc""#);
    assert_eq!(at("/stats.x").unwrap(), r#"{"y":true}"#);
    assert_eq!(
        at("stats.x").unwrap_err(),
        ExportError::NoPath { entity: Some(id), path: "stats.x".into() }
    );
    assert_eq!(
        at("stats.hp.max").unwrap_err().to_string(),
        format!("entity {id} holds nothing at stats.hp.max")
    );
}

/// Every combination of `ExportOptions`: the same text where every float is finite, whether
/// checked or lossy and for a stored entity or any blob; then the error or the `null`.
#[test]
fn export_options_give_the_same_text_or_the_same_error() {
    let mut store = Store::new();
    let text = r#"[{"name": "Orc", "stats": {"hp": 30, "speed": 1.5}}, {"pos": [1, 2]}]"#;
    let ids = store.import(text, &ImportOptions::strict()).unwrap().ids;
    let lossy = ExportOptions::json().non_finite_as_null();
    for pretty in [false, true] {
        let (checked, lossy) = (ExportOptions::json().pretty(pretty), lossy.pretty(pretty));
        assert_eq!((checked.is_pretty(), checked.is_lossy()), (pretty, false));
        for &id in &ids {
            let expected = store.export(id, &checked).unwrap();
            assert_eq!(store.export(id, &checked).unwrap(), expected);
            assert_eq!(store.export(id, &lossy).unwrap(), expected);
            let blob = store.get(id).unwrap();
            assert_eq!(export_blob(&store, blob, &checked).unwrap(), expected);
        }
        let all = store.export_all(&checked).unwrap();
        assert_eq!(store.export_all(&checked).unwrap(), all);
        assert_eq!(store.export_all(&lossy).unwrap(), all);
    }
    assert_eq!(
        store.export(ids[0], &ExportOptions::json()).unwrap(),
        r#"{"name":"Orc","stats":{"hp":30,"speed":1.5}}"#
    );
    assert_eq!(
        store.export_all(&ExportOptions::json()).unwrap(),
        store.export_all(&lossy).unwrap()
    );

    store.get_mut(ids[1]).unwrap().set("pos", [1.0, f32::INFINITY]).unwrap();
    let err = store.export(ids[1], &ExportOptions::json()).unwrap_err();
    assert_eq!(err, store.export(ids[1], &ExportOptions::json()).unwrap_err());
    assert!(matches!(err, ExportError::NotFinite { entity: Some(e), .. } if e == ids[1]));
    assert_eq!(store.export(ids[1], &lossy).unwrap(), r#"{"pos":[1,null]}"#);
    assert_eq!(store.export(ids[1], &lossy.pretty(false)).unwrap(), r#"{"pos":[1,null]}"#);
    let all = store.export_all(&ExportOptions::json()).unwrap_err();
    assert_eq!(all, store.export_all(&ExportOptions::json()).unwrap_err());

    store.remove(ids[0]);
    let dead = store.export(ids[0], &lossy).unwrap_err();
    assert!(matches!(dead, ExportError::Handle(_)), "{dead}");
    assert_eq!(store.export(ids[0], &ExportOptions::json().non_finite_as_null()).ok(), None);
    assert_eq!(Store::new().export_all(&lossy.pretty(true)).unwrap(), "[]");
}

/// The library's import errors name no option of the command (`--lenient`, `--exact-numbers`):
/// the command adds its own hints (its `lenient_hint`), so one place owns them, and a program
/// using the library is not told about flags it does not have.
#[test]
fn import_errors_name_no_flag_of_the_command() {
    let strict = ImportOptions::strict();
    let cases = [
        (r#"{"a": null}"#, strict),
        (r#"{"a": [1, "x"]}"#, strict),
        (r#"{"a": 1e40}"#, strict),
        (r#"{"a": 3.141592653589793}"#, strict.exact_numbers(true)),
        (r#"{"a": 1, "a": {"b": 2}}"#, strict),
        ("[1]", strict),
    ];
    for (text, options) in cases {
        for options in [options, options.format(TextFormat::Sjson)] {
            let err = Blob::import(text, &options).unwrap_err();
            let message = err.to_string();
            assert!(!message.contains("--"), "{text}: {message}");
        }
    }
    let err = Blob::import(r#"{"a": null}"#, &strict).unwrap_err();
    assert_eq!(err.kind(), &JsonErrorKind::Null);
    assert_eq!(
        err.to_string(),
        "/a (line 1, column 10): null is read by the lenient import only, not the strict one"
    );
}
