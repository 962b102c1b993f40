//! SJSON: the issue's sheet read back key by key, every JSON fixture read the same through the
//! SJSON reader, the SJSON fixtures equal to their JSON twins, export round trips (fixtures and
//! generated stores), a model test of the reader over randomly formatted documents, and bad
//! SJSON refused with its exact message, path, line and column, changing nothing.

use std::collections::BTreeMap;

use datacomp::key::MAX_PATH_SEGMENTS;
use datacomp::text::ImportReport;
use datacomp::text::JsonErrorKind;
use datacomp::text::{Imported, export_blob};
use datacomp::{
    Blob, ExportError, ExportOptions, HandleError, ImportOptions, JsonError, Key, OwnedValue,
    Store, TextFormat, Value,
};
use proptest::prelude::*;

fn fixture(path: &str) -> String {
    let full = format!("{}/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
}

fn strict() -> ImportOptions {
    ImportOptions::strict()
}

/// Strict and lenient imports of SJSON.
const SJSON: ImportOptions = ImportOptions::strict().format(TextFormat::Sjson);
const SJSON_LENIENT: ImportOptions = ImportOptions::lenient().format(TextFormat::Sjson);

/// One entity and what its import changed: `Blob::import` keeps no report, so the report is
/// that of the same text imported into a store, as one entity (the same importer and rules).
fn with_report(text: &str, options: &ImportOptions) -> Result<(Blob, ImportReport), JsonError> {
    let blob = Blob::import(text, options)?;
    let report = Store::new().import(text, options)?.report;
    Ok((blob, report))
}

/// A store's entities as JSON, and its key names: what two imports must agree on.
fn contents(store: &Store) -> (String, Vec<(Key, String)>) {
    let names = store.key_names().map(|(k, n)| (k, n.to_owned())).collect();
    (store.export_all(&ExportOptions::json()).unwrap(), names)
}

// ---------------------------------------------------------------------------------------------
// The issue's sheet

#[test]
fn the_sheet_of_the_issue_reads_back_key_by_key() {
    let text = fixture("sjson/the_one.sjson");
    let sheet = Blob::import(&text, &SJSON).unwrap();
    assert_eq!(sheet.len(), 6);
    assert_eq!(sheet.get("name"), Some(Value::Str("The One")));
    assert_eq!(sheet.get("stats.health"), Some(Value::Float(100.0)));
    assert_eq!(sheet.get("stats.mana"), Some(Value::Float(200.0)));
    assert_eq!(sheet.get("status_effects.drunk"), Some(Value::Bool(true)));
    assert_eq!(sheet.get("status_effects.delirious"), Some(Value::Bool(true)));
    assert_eq!(sheet.get("color"), Some(Value::Floats(&[0.0, 0.5, 0.5, 0.7])));
    let order: Vec<Key> = sheet.keys().collect();
    let expected = [
        "name",
        "stats.health",
        "stats.mana",
        "status_effects.drunk",
        "status_effects.delirious",
        "color",
    ];
    assert_eq!(order, expected.map(Key::parse), "document order");

    // The store import gives the same entity and remembers every name; the export writes the
    // sheet exactly as the issue does.
    let mut store = Store::new();
    let ids = store.import(&text, &SJSON).unwrap().ids;
    assert_eq!(ids.len(), 1);
    assert!(sheet == store.get(ids[0]).unwrap());
    for name in expected {
        assert_eq!(store.key_name(Key::parse(name)).as_deref(), Some(name));
    }
    assert_eq!(store.export(ids[0], &ExportOptions::sjson()).unwrap() + "\n", text);
}

#[test]
fn the_sjson_fixtures_equal_their_json_twins() {
    for name in ["classic", "wizard", "golem"] {
        let sjson = Blob::import(&fixture(&format!("sjson/{name}.sjson")), &SJSON).unwrap();
        let json = Blob::import(&fixture(&format!("sheets/{name}.json")), &ImportOptions::strict())
            .unwrap();
        assert!(sjson == json, "{name}");
        let order = |blob: &Blob| blob.keys().collect::<Vec<_>>();
        assert_eq!(order(&sjson), order(&json), "{name}: document order");
    }
    let (mut from_sjson, mut from_json) = (Store::new(), Store::new());
    let ids = from_sjson.import(&fixture("sjson/party.sjson"), &SJSON).unwrap().ids;
    from_json.import(&fixture("party.json"), &strict()).unwrap();
    assert_eq!(ids.len(), 4);
    assert_eq!(contents(&from_sjson), contents(&from_json));
}

// ---------------------------------------------------------------------------------------------
// Every JSON fixture through the SJSON reader

const JSON_FIXTURES: [&str; 4] =
    ["party.json", "sheets/classic.json", "sheets/wizard.json", "sheets/golem.json"];

#[test]
fn every_json_fixture_imports_through_sjson_as_through_json() {
    for name in JSON_FIXTURES {
        let text = fixture(name);
        for options in [ImportOptions::strict(), ImportOptions::lenient()] {
            let (mut json, mut sjson) = (Store::new(), Store::new());
            let json_ids = json.import(&text, &options).unwrap();
            let sjson_ids = sjson.import(&text, &options.format(TextFormat::Sjson)).unwrap();
            assert_eq!(json_ids.ids.len(), sjson_ids.ids.len(), "{name}");
            assert_eq!(json_ids.report, sjson_ids.report, "{name}: the reports");
            assert_eq!(contents(&json), contents(&sjson), "{name}");
            for (a, b) in json.iter().zip(sjson.iter()) {
                assert!(a.1 == b.1, "{name}");
                assert!(a.1.keys().eq(b.1.keys()), "{name}: document order");
            }
        }
        if !text.trim_start().starts_with('[') {
            assert_eq!(
                Blob::import(&text, &SJSON),
                Blob::import(&text, &ImportOptions::strict()),
                "{name}"
            );
        }
    }
}

#[test]
fn the_invalid_json_fixtures_fail_through_sjson_as_through_json() {
    // The format's rules give the same error at the same place; JSON's own syntax rules do
    // not all hold in SJSON (a trailing comma is allowed).
    let names = [
        "null_value",
        "array_of_objects",
        "mixed_array",
        "number_too_big",
        "not_an_object",
        "duplicate_path",
        "key_collision",
    ];
    for name in names {
        let text = fixture(&format!("invalid/{name}.json"));
        for options in [ImportOptions::strict(), ImportOptions::lenient()] {
            let json = with_report(&text, &options);
            let sjson = with_report(&text, &options.format(TextFormat::Sjson));
            match (json, sjson) {
                (Ok(json), Ok(sjson)) => assert!(json == sjson, "{name}"),
                (Err(json), Err(sjson)) => {
                    let place =
                        |e: &datacomp::JsonError| (e.kind().clone(), e.path().to_owned(), e.line());
                    assert_eq!(place(&sjson), place(&json), "{name}");
                    // On an object that breaks a rule as it opens (where a number must be, or
                    // at a path already set), serde_json points past the `{`; the SJSON reader
                    // points at it, the last character read, as both do for every other rule.
                    let past = usize::from(matches!(name, "array_of_objects" | "duplicate_path"));
                    assert_eq!(sjson.column() + past, json.column(), "{name}");
                }
                (json, sjson) => panic!("{name}: {json:?} against {sjson:?}"),
            }
            let (mut a, mut b) = (Store::new(), Store::new());
            let (json, sjson) =
                (a.import(&text, &options), b.import(&text, &options.format(TextFormat::Sjson)));
            let outcome = |r: Result<Imported, JsonError>| {
                r.map(|i| i.ids.len()).map_err(|e| (e.kind().clone(), e.path().to_owned()))
            };
            assert_eq!(outcome(json), outcome(sjson), "{name}");
            assert_eq!(contents(&a), contents(&b), "{name}");
        }
    }
    let comma = fixture("invalid/trailing_comma.json");
    let sheet = Blob::import(&comma, &SJSON).unwrap();
    assert!(sheet == Blob::import(&comma.replace("3,", "3"), &ImportOptions::strict()).unwrap());
}

// ---------------------------------------------------------------------------------------------
// Export

#[test]
fn arrays_export_as_arrays() {
    let text = r#"{"name": "Owlbear", "tags": ["beast", "large"], "flags": [true, false],
        "armor": [{"type": "natural", "value": 13}, {}], "grid": [[1, 2], [3], []],
        "mixed": [1, "two", {"x": 1}], "deep": [[{"a": 0.5}]], "none": []}"#;
    let mut store = Store::new();
    let Imported { ids, report } = store.import(text, &ImportOptions::lenient()).unwrap();
    // tags, flags, armor, grid, mixed, and deep with the array inside it.
    assert_eq!(report.converted_arrays, 7);
    let exported = store.export(ids[0], &ExportOptions::sjson()).unwrap();
    assert_eq!(
        exported,
        r#"name = "Owlbear"
tags = ["beast" "large"]
flags = [true false]
armor = [
    {
        type = "natural"
        value = 13
    }
]
grid = [[1 2] [3] []]
mixed = [
    1
    "two"
    {
        x = 1
    }
]
deep = [
    [
        {
            a = 0.5
        }
    ]
]
none = []"#
    );
    // `{}` of `armor` holds no key, so the entity has one armor element: the array is written
    // with the elements it holds. Read back, the same entity and the same JSON.
    let mut copy = Store::new();
    let again = copy.import(&exported, &SJSON_LENIENT).unwrap().ids[0];
    assert!(copy.get(again).unwrap() == store.get(ids[0]).unwrap());
    assert_eq!(
        copy.export(again, &ExportOptions::json()).unwrap(),
        store.export(ids[0], &ExportOptions::json()).unwrap()
    );
    assert!(
        copy.export(again, &ExportOptions::json()).unwrap().contains(r#""tags":["beast","large"]"#)
    );
}

#[test]
fn checked_exports_refuse_what_sjson_cannot_hold() {
    let mut store = Store::new();
    let ids = store.import("[{hp = 1} {hp = 2 stats = {luck = 3}}]", &SJSON).unwrap().ids;
    assert_eq!(
        store.export(ids[1], &ExportOptions::sjson()).unwrap(),
        "hp = 2\nstats = {\n    luck = 3\n}"
    );
    store.get_mut(ids[1]).unwrap().set("stats.luck", f32::NAN).unwrap();

    // The lossy export writes null, which reads back as a null (lenient) or not at all.
    let lossy = ExportOptions::sjson().non_finite_as_null();
    let unchecked = store.export(ids[1], &lossy).unwrap();
    assert_eq!(unchecked, "hp = 2\nstats = {\n    luck = null\n}");
    assert!(Blob::import(&unchecked, &SJSON).is_err());

    let err = store.export(ids[1], &ExportOptions::sjson()).unwrap_err();
    let ExportError::NotFinite { entity, key, value } = &err else { panic!("{err:?}") };
    assert_eq!((*entity, key.as_str()), (Some(ids[1]), "stats.luck"));
    assert!(value.is_nan());
    assert_eq!(err.to_string(), "entity 1v0t1: stats.luck is NaN, which JSON has no number for");
    // The same error as the JSON export's (compared as text: NaN is not equal to itself).
    let json = store.export(ids[1], &ExportOptions::json().pretty(true)).unwrap_err();
    assert!(matches!(&json, ExportError::NotFinite { value, .. } if value.is_nan()));
    assert_eq!(err.to_string(), json.to_string());

    store.get_mut(ids[1]).unwrap().set("stats.luck", 3).unwrap();
    store.get_mut(ids[1]).unwrap().set("pos", [1.0, f32::NEG_INFINITY]).unwrap();
    assert_eq!(
        store.export_all(&ExportOptions::sjson()),
        Err(ExportError::NotFinite {
            entity: Some(ids[1]),
            key: "pos".into(),
            value: f32::NEG_INFINITY
        })
    );
    assert_eq!(
        store.export_all(&ExportOptions::sjson()).err(),
        store.export_all(&ExportOptions::json()).err()
    );
    let blob = store.get(ids[1]).unwrap();
    assert_eq!(
        export_blob(&store, blob, &ExportOptions::sjson()),
        Err(ExportError::NotFinite { entity: None, key: "pos".into(), value: f32::NEG_INFINITY })
    );
    assert!(
        store.export(ids[0], &ExportOptions::sjson()).is_ok(),
        "the other entity still exports"
    );

    store.remove(ids[1]);
    assert!(matches!(
        store.export(ids[1], &ExportOptions::sjson()),
        Err(ExportError::Handle(HandleError::Stale { .. }))
    ));
    assert_eq!(
        store.export_all(&ExportOptions::sjson()).unwrap(),
        "[\n    {\n        hp = 1\n    }\n]"
    );
    assert_eq!(Store::new().export_all(&ExportOptions::sjson()).unwrap(), "[]");
}

#[test]
fn sjson_export_round_trips_every_fixture() {
    for name in JSON_FIXTURES.iter().chain(&["sjson/the_one.sjson", "sjson/wizard.sjson"]) {
        let text = fixture(name);
        let mut store = Store::new();
        let ids = store.import(&text, &SJSON).unwrap().ids;
        let mut again = Store::new();
        for &id in &ids {
            let exported = store.export(id, &ExportOptions::sjson()).unwrap();
            let copy = again.import(&exported, &SJSON).unwrap().ids;
            assert!(again.get(copy[0]).unwrap() == store.get(id).unwrap(), "{name}: {exported}");
            let blob = Blob::import(&exported, &SJSON).unwrap();
            assert!(blob == store.get(id).unwrap(), "{name}");
        }
        let all = store.export_all(&ExportOptions::sjson()).unwrap();
        let mut copy = Store::new();
        assert_eq!(copy.import(&all, &SJSON).unwrap().ids.len(), ids.len());
        assert_eq!(contents(&copy), contents(&store), "{name}");
        assert_eq!(
            copy.export_all(&ExportOptions::sjson()).unwrap(),
            all,
            "{name}: a second export is the same text"
        );
    }
}

#[test]
fn export_writes_the_designers_form() {
    let mut store = Store::new();
    let text = r#"{"name": "Orc", "9lives": true, "a.b": 1, "true": 0.25, "tab\t": "x\"y",
                  "stats": {"health": -0.0, "big": 1e20, "tiny": 1.5e-7}, "empty": [],
                  "deep": {"er": {"est": [1, -2.5]}}}"#;
    let id = store.import(text, &strict()).unwrap().ids[0];
    let exported = store.export(id, &ExportOptions::sjson()).unwrap();
    assert_eq!(
        exported,
        r#"name = "Orc"
"9lives" = true
"a.b" = 1
"true" = 0.25
"tab\t" = "x\"y"
stats = {
    health = -0.0
    big = 1e+20
    tiny = 1.5e-7
}
empty = []
deep = {
    er = {
        est = [1 -2.5]
    }
}"#
    );
    let again = Blob::import(&exported, &SJSON).unwrap();
    assert!(again == store.get(id).unwrap());
    assert_eq!(again.get_float("stats.health").map(f32::to_bits), Some((-0.0_f32).to_bits()));

    // Keys without a name go at the top by hash; an empty entity is an empty document.
    let unnamed = store.insert(&[(Key::from_raw(7), 1.0)].into_iter().collect::<Blob>());
    assert_eq!(store.export(unnamed, &ExportOptions::sjson()).unwrap(), "\"#00000007\" = 1");
    let empty = store.insert(&Blob::new());
    assert_eq!(store.export(empty, &ExportOptions::sjson()).unwrap(), "");
    assert!(Blob::import("", &SJSON).unwrap().is_empty());
    assert_eq!(Store::new().export_all(&ExportOptions::sjson()).unwrap(), "[]");
}

// ---------------------------------------------------------------------------------------------
// The reader

#[test]
fn every_form_the_reader_takes() {
    let text = r#"
        // Comments, `:` or `=`, commas or none, quoted names, braces at the top or not.
        a = 1, b: 2 c = 3,
        "d e" = "quoted \"name\" \u00e9 \ud83d\ude00 \n\t\\\/"
        f = """verbatim "quotes", \n stays
two lines"""
        g = [1, 2 3,] /* a trailing comma */ h = { i = true, j = false, }
        k = -0.5e-1 l = 0 m = 1E+2 n = {}
    "#;
    let sheet = Blob::import(text, &SJSON).unwrap();
    assert_eq!(sheet.get_float("a"), Some(1.0));
    assert_eq!(sheet.get_float("b"), Some(2.0));
    assert_eq!(sheet.get_float("c"), Some(3.0));
    assert_eq!(sheet.get_str(Key::new("d e")), Some("quoted \"name\" é 😀 \n\t\\/"));
    assert_eq!(sheet.get_str("f"), Some("verbatim \"quotes\", \\n stays\ntwo lines"));
    assert_eq!(sheet.get_floats("g"), Some(&[1.0, 2.0, 3.0][..]));
    assert_eq!(sheet.get_bool("h.i"), Some(true));
    assert_eq!(sheet.get_bool("h.j"), Some(false));
    assert_eq!(sheet.get_float("k"), Some(-0.05));
    assert_eq!(sheet.get_float("l"), Some(0.0));
    assert_eq!(sheet.get_float("m"), Some(100.0));
    assert_eq!(sheet.len(), 11, "the empty object holds nothing");

    // A braced top level and JSON itself; a byte order mark; CRLF line ends.
    for text in ["{ a = 1 }", r#"{"a": 1}"#, "\u{feff}a = 1", "// x\r\na = 1\r\n"] {
        let sheet = Blob::import(text, &SJSON).unwrap();
        assert_eq!((sheet.len(), sheet.get_float("a")), (1, Some(1.0)), "{text:?}");
    }
    // An empty document is an entity with no keys; an array of objects is several entities.
    for text in ["", "  // nothing\n /* at all */ "] {
        assert!(Blob::import(text, &SJSON).unwrap().is_empty(), "{text:?}");
    }
    let mut store = Store::new();
    let ids = store.import("[{a = 1} {a = 2}, {}]", &SJSON).unwrap().ids;
    assert_eq!(ids.len(), 3);
    assert_eq!(store.get(ids[1]).unwrap().get_float("a"), Some(2.0));
}

#[test]
fn numbers_follow_the_rules_of_json_numbers() {
    // An SJSON number reads as the same JSON number does: the same f32, the same refusal in a
    // strict import (16777217 is not an f32; 1e-50 would become 0; 1e39 and 1e400 are past
    // f32's range), the same rounding and clamping, counted, in a lenient one.
    let literals = [
        "0",
        "-0",
        "17",
        "0.1",
        "-2.5",
        "16777216",
        "16777217",
        "123456789",
        "123456790",
        "1.00000017881393432617187499",
        "3.4028235e38",
        "1e39",
        "-1e400",
        "1e-50",
        "1e-400",
        "-1e-400",
        "1.5e-45",
        "5e-324",
    ];
    for literal in literals {
        for options in [ImportOptions::strict(), ImportOptions::lenient()] {
            let json = with_report(&format!("{{\"a\": {literal}}}"), &options);
            let sjson = with_report(&format!("a = {literal}"), &options.format(TextFormat::Sjson));
            match (json, sjson) {
                (Ok((j, jr)), Ok((s, sr))) => {
                    let (j, s) = (j.get_float("a").unwrap(), s.get_float("a").unwrap());
                    assert_eq!(j.to_bits(), s.to_bits(), "{literal}: {j} and {s}");
                    assert_eq!(jr.rounded_numbers, sr.rounded_numbers, "{literal}");
                }
                // serde_json refuses a number past f64's range as a syntax error; SJSON says
                // what it is. Any other refusal is the same.
                (Err(j), Err(s)) if literal.contains("e400") => {
                    assert_eq!(
                        s.kind(),
                        &JsonErrorKind::NumberOutOfRange(f64::NEG_INFINITY),
                        "{j}"
                    );
                }
                (Err(j), Err(s)) => assert_eq!(
                    std::mem::discriminant(j.kind()),
                    std::mem::discriminant(s.kind()),
                    "{literal}: {j} and {s}"
                ),
                (j, s) => panic!("{literal}: JSON gives {j:?}, SJSON {s:?}"),
            }
        }
    }
    let err = Blob::import("gold = 1e39", &SJSON).unwrap_err();
    assert_eq!(err.kind(), &JsonErrorKind::NumberOutOfRange(1e39));
    let (sheet, report) = with_report("gold = -1e400", &SJSON_LENIENT).unwrap();
    assert_eq!((sheet.get_float("gold"), report.rounded_numbers), (Some(-f32::MAX), 1));
}

/// (document, message, path, line, column) of each kind of bad SJSON.
fn bad_documents() -> Vec<(String, String, String, usize, usize)> {
    let cases: Vec<(String, &str, &str, usize, usize)> = vec![
        // The four the issue names.
        (
            fixture("sjson/invalid/unterminated_string.sjson"),
            "unterminated string: the line ends before its closing `\"`",
            "/name",
            1,
            8,
        ),
        (
            "name = \"The One".into(),
            "unterminated string: the text ends before its closing `\"`",
            "/name",
            1,
            8,
        ),
        (
            fixture("sjson/invalid/missing_value.sjson"),
            "expected a value after `=`, found `mana`",
            "/stats/health",
            4,
            5,
        ),
        ("a = ".into(), "expected a value after `=`, found the end of the text", "/a", 1, 5),
        ("a: , b = 1".into(), "expected a value after `:`, found `,`", "/a", 1, 4),
        (
            fixture("sjson/invalid/unclosed_object.sjson"),
            "unclosed object: this `{` has no matching `}`",
            "/stats",
            2,
            9,
        ),
        ("a = [1 2".into(), "unclosed array: this `[` has no matching `]`", "/a/2", 1, 5),
        (
            fixture("sjson/invalid/unterminated_comment.sjson"),
            "unterminated comment: no `*/` closes this `/*`",
            "",
            1,
            14,
        ),
        // And the rest of the grammar.
        (
            fixture("sjson/invalid/unquoted_string.sjson"),
            "expected a value after `=`, found `The` (strings are written in double quotes)",
            "/name",
            1,
            8,
        ),
        (
            fixture("sjson/invalid/missing_equals.sjson"),
            "expected `=` or `:` after the member name `name`, found `\"`",
            "",
            1,
            6,
        ),
        (fixture("sjson/invalid/stray_brace.sjson"), "unexpected `}`: no object is open", "", 2, 1),
        (
            "a = [1 x]".into(),
            "expected a value, found `x`: strings are written in double quotes",
            "/a/1",
            1,
            8,
        ),
        ("a = 1,, b = 2".into(), "expected a member name, found `,`", "", 1, 7),
        ("a = [1,, 2]".into(), "expected a value or `]`, found `,`", "/a/1", 1, 8),
        ("a = [1 }".into(), "expected a value or `]`, found `}`", "/a/1", 1, 8),
        ("a = { b = 1 ]".into(), "expected a member name, found `]`", "/a", 1, 13),
        ("{ a = 1 } b = 2".into(), "unexpected `b` after the end of the document", "", 1, 11),
        ("a = 01".into(), "invalid number `01`", "/a", 1, 5),
        ("a = 1.".into(), "invalid number `1.`", "/a", 1, 5),
        ("a = [1-2]".into(), "invalid number `1-2`", "/a/0", 1, 6),
        ("a = 12abc".into(), "invalid number `12abc`", "/a", 1, 5),
        (
            "a = \"\\q\"".into(),
            "invalid escape `\\q` in a string (JSON's escapes: \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)",
            "/a",
            1,
            6,
        ),
        (
            "a = \"\\u12\"".into(),
            "invalid `\\u` escape: four hexadecimal digits must follow",
            "/a",
            1,
            6,
        ),
        ("a = \"\\ud800x\"".into(), "lone leading surrogate in a `\\u` escape", "/a", 1, 6),
        ("a = \"\\udc00\"".into(), "lone trailing surrogate in a `\\u` escape", "/a", 1, 6),
        (
            "a = \"x\ty\"".into(),
            "control character U+0009 in a string: write it as an escape (\\t, \\u0009)",
            "/a",
            1,
            7,
        ),
        (
            "a = \"\"\"never closed".into(),
            "unterminated string: no `\"\"\"` closes this `\"\"\"`",
            "/a",
            1,
            5,
        ),
        ("a = @".into(), "expected a value, found `@`", "/a", 1, 5),
        ("é = 1".into(), "expected a member name, found `é`", "", 1, 1),
        // The line and column count characters, and CRLF lines as lines.
        (
            "\"é\" = 1\r\nb = \"x".into(),
            "unterminated string: the text ends before its closing `\"`",
            "/b",
            2,
            5,
        ),
    ];
    cases.into_iter().map(|(t, m, p, l, c)| (t, m.to_owned(), p.to_owned(), l, c)).collect()
}

#[test]
fn bad_sjson_says_what_and_where_and_changes_nothing() {
    let mut store = Store::new();
    store.import("name = \"before\"\nstats = { health = 1 }", &SJSON).unwrap();
    let before = (store.to_bytes(), contents(&store));
    for (text, message, path, line, column) in bad_documents() {
        for options in [ImportOptions::strict(), ImportOptions::lenient()] {
            let err = Blob::import(&text, &options.format(TextFormat::Sjson)).unwrap_err();
            let got = (err.kind(), err.path(), err.line(), err.column());
            let kind = JsonErrorKind::Syntax(message.clone());
            assert_eq!(got, (&kind, &*path, line, column), "{text:?}: {err}");
            let err = store.import(&text, &options.format(TextFormat::Sjson)).unwrap_err();
            assert_eq!(err.kind(), &kind, "{text:?}");
            assert_eq!((store.to_bytes(), contents(&store)), before, "{text:?} changed the store");
        }
    }
}

#[test]
fn the_format_rules_hold_in_sjson_with_their_places() {
    let cases = [
        ("stats = {\n  health = null\n}", JsonErrorKind::Null, "/stats/health", 2, 15),
        ("a = [1 true]", JsonErrorKind::NotANumber, "/a/1", 1, 11),
        ("42", JsonErrorKind::NotAnObject, "", 1, 2),
        (
            &fixture("sjson/invalid/duplicate_path.sjson"),
            JsonErrorKind::DuplicatePath("stats".into()),
            "/stats",
            2,
            9,
        ),
    ];
    for (text, kind, path, line, column) in cases {
        let err = Blob::import(text, &SJSON).unwrap_err();
        assert_eq!((err.kind(), err.path(), err.line(), err.column()), (&kind, path, line, column));
    }
    assert_eq!(
        Blob::import("[{a = 1}]", &SJSON).unwrap_err().kind(),
        &JsonErrorKind::NotAnObject,
        "one entity is one object"
    );
    let err = Store::new().import("[{a = 1} {a = null}]", &SJSON).unwrap_err();
    assert_eq!((err.kind(), err.path()), (&JsonErrorKind::Null, "/1/a"));
}

#[test]
fn nesting_stops_where_json_stops() {
    for levels in [MAX_PATH_SEGMENTS, MAX_PATH_SEGMENTS + 1, MAX_PATH_SEGMENTS + 2] {
        let json = format!("{}1{}", "{\"a\":".repeat(levels), "}".repeat(levels));
        let braced_ok = Blob::import(&json, &ImportOptions::strict()).is_ok();
        assert_eq!(Blob::import(&json, &SJSON).is_ok(), braced_ok, "{levels} braced levels");
        // Without the top level's braces: the same depth of objects.
        let braces = levels - 1;
        let sjson = format!("a = {}1{}", "{a = ".repeat(braces), "}".repeat(braces));
        assert_eq!(Blob::import(&sjson, &SJSON).is_ok(), braced_ok, "{levels} levels");
        // The value's path has `levels` segments.
        assert_eq!(braced_ok, levels <= MAX_PATH_SEGMENTS);
    }
    // Far past the limit: an error, not a stack overflow.
    let deep = format!("a = {}", "[".repeat(1_000_000));
    assert!(Blob::import(&deep, &SJSON).is_err());
}

#[test]
fn every_truncation_of_a_fixture_is_handled() {
    let text = fixture("sjson/wizard.sjson");
    let mut store = Store::new();
    store.import(&fixture("sjson/the_one.sjson"), &SJSON).unwrap();
    let before = store.to_bytes();
    for len in (0..text.len()).filter(|&l| text.is_char_boundary(l)) {
        let cut = &text[..len];
        match (Blob::import(cut, &SJSON), store.import(cut, &SJSON)) {
            (Ok(blob), Ok(imported)) => {
                assert!(blob == store.get(imported.ids[0]).unwrap(), "cut at {len}");
                store = Store::from_bytes(&before).unwrap();
            }
            (Err(a), Err(b)) => {
                assert_eq!(a.kind(), b.kind(), "cut at {len}");
                assert!(a.line() >= 1 && a.column() >= 1);
                assert_eq!(store.to_bytes(), before, "cut at {len}");
            }
            (a, b) => panic!("cut at {len}: {a:?} against {b:?}"),
        }
    }
}

#[test]
fn every_corruption_of_a_fixture_is_handled() {
    let text = fixture("sjson/wizard.sjson");
    // Each structural character replaced by each other one: never a panic, and an error or
    // a valid blob.
    let marks = [b'{', b'}', b'[', b']', b'"', b'=', b':', b',', b'/', b'*', b'\\', b'\n', b'x'];
    let bytes = text.as_bytes();
    for at in (0..bytes.len()).filter(|&i| marks.contains(&bytes[i])) {
        for &mark in &marks {
            let mut changed = bytes.to_vec();
            changed[at] = mark;
            let changed = String::from_utf8(changed).unwrap();
            if let Ok(blob) = Blob::import(&changed, &SJSON) {
                assert!(Blob::from_bytes(blob.as_bytes()).is_ok());
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Random documents against a model, randomly formatted

#[derive(Clone, Debug)]
enum Node {
    Leaf(OwnedValue),
    Object(BTreeMap<String, Node>),
}

fn leaf() -> impl Strategy<Value = OwnedValue> {
    prop_oneof![
        any::<bool>().prop_map(OwnedValue::Bool),
        any::<f32>().prop_filter("finite", |f| f.is_finite()).prop_map(OwnedValue::Float),
        "\\PC{0,12}|.{0,6}".prop_map(OwnedValue::Str),
        prop::collection::vec(-1e6_f32..1e6, 0..6).prop_map(OwnedValue::Floats),
        Just(OwnedValue::Null),
    ]
}

/// Member names: identifiers, and names that need quotes (spaces, quotes, escapes, dots).
fn name() -> impl Strategy<Value = String> {
    prop_oneof![3 => "[a-z_][a-z0-9_]{0,5}", 1 => "[a-z \"\\\\./é0-9]{1,5}"]
}

fn node() -> impl Strategy<Value = Node> {
    leaf().prop_map(Node::Leaf).prop_recursive(3, 24, 5, |inner| {
        prop::collection::btree_map(name(), inner, 0..5).prop_map(Node::Object)
    })
}

/// How one document is written: each choice taken from the byte stream, cycling.
struct Style {
    choices: Vec<u8>,
    next: usize,
}

impl Style {
    fn pick(&mut self, n: u8) -> u8 {
        let c = self.choices.get(self.next % self.choices.len().max(1)).copied().unwrap_or(0);
        self.next += 1;
        c % n
    }

    fn space(&mut self, out: &mut String) {
        out.push_str(match self.pick(6) {
            0 | 1 => " ",
            2 => "\n  ",
            3 => " /* c */ ",
            4 => " // c\n",
            _ => "\t\r\n",
        });
    }

    fn name(&mut self, name: &str, out: &mut String) {
        let bare = name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if bare && self.pick(2) == 0 {
            out.push_str(name);
        } else {
            out.push_str(&serde_json::to_string(name).unwrap());
        }
    }

    fn members(&mut self, members: &BTreeMap<String, Node>, out: &mut String) {
        for (name, node) in members {
            self.name(name, out);
            self.space(out);
            out.push(if self.pick(2) == 0 { '=' } else { ':' });
            self.space(out);
            self.node(node, out);
            if self.pick(3) == 0 {
                out.push(',');
            }
            self.space(out);
        }
    }

    fn node(&mut self, node: &Node, out: &mut String) {
        match node {
            Node::Leaf(OwnedValue::Bool(b)) => out.push_str(if *b { "true" } else { "false" }),
            Node::Leaf(OwnedValue::Float(f)) => out.push_str(&float(*f)),
            Node::Leaf(OwnedValue::Str(s)) => out.push_str(&serde_json::to_string(s).unwrap()),
            // The generator makes no tombstone (an instance's, not a fixture's).
            Node::Leaf(OwnedValue::Null | OwnedValue::Tombstone) => out.push_str("null"),
            Node::Leaf(OwnedValue::Floats(floats)) => {
                out.push('[');
                for f in floats {
                    self.space(out);
                    out.push_str(&float(*f));
                    if self.pick(2) == 0 {
                        out.push(',');
                    }
                }
                out.push(']');
            }
            Node::Object(members) => {
                out.push('{');
                self.space(out);
                self.members(members, out);
                out.push('}');
            }
        }
    }
}

/// `f` as text that reads back as `f`, written as the crate writes it ([`JsonF32`]): where two
/// shortest forms are equally near (`-193286.625` as `.62` or `.63`), another writer's choice
/// is another decimal, which an import reports as losing digits.
fn float(f: f32) -> String {
    datacomp::text::JsonF32(f).to_string()
}

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
    // Sized to keep a debug test run short.
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn randomly_formatted_documents_import_as_the_model_says(
        members in prop::collection::btree_map(name(), node(), 0..6),
        choices in prop::collection::vec(any::<u8>(), 1..32),
        braced in any::<bool>(),
    ) {
        let mut style = Style { choices, next: 0 };
        let mut text = String::new();
        if braced {
            text.push('{');
        }
        style.members(&members, &mut text);
        if braced {
            text.push('}');
        }
        let mut expected = Vec::new();
        flatten(&members, None, &mut expected);
        // A null is read leniently; strictly, it is refused, naming the lenient import.
        let nulls = expected.iter().any(|(_, v)| *v == OwnedValue::Null);
        let options = if nulls { SJSON_LENIENT } else { SJSON };
        if nulls {
            let strict = Blob::import(&text, &SJSON);
            prop_assert!(
                strict.as_ref().is_err_and(|e| matches!(
                    e.kind(),
                    JsonErrorKind::Null | JsonErrorKind::KeyCollision { .. }
                )),
                "{:?} in {}", strict, text
            );
        }
        match Blob::import(&text, &options) {
            Ok(blob) => {
                prop_assert_eq!(blob.len(), expected.len(), "{}", text);
                for (key, value) in &expected {
                    let got = blob.get(*key);
                    prop_assert!(
                        got.is_some_and(|g| g.is_identical(&value.as_value())),
                        "{}: {:?} vs {:?} in {}", key, got, value, text
                    );
                }
                let (lenient, report) = with_report(&text, &SJSON_LENIENT).unwrap();
                prop_assert!(lenient == blob);
                // Nothing a lenient import changes; both count the empty objects left out.
                let (_, strict_report) = with_report(&text, &options).unwrap();
                prop_assert_eq!(&report, &strict_report);
                let mut empty_objects_only = ImportReport::default();
                empty_objects_only.empty_objects = report.empty_objects;
                empty_objects_only.first_empty_object.clone_from(&report.first_empty_object);
                prop_assert_eq!(report, empty_objects_only);
            }
            // Random names can collide, or be one path written twice ("a.b" as a name and as
            // a path): then the model holds the key twice.
            Err(e) => match e.kind() {
                JsonErrorKind::KeyCollision { key, .. } => {
                    prop_assert!(expected.iter().filter(|(k, _)| k == key).count() >= 2);
                }
                other => prop_assert!(false, "{:?}: {} in {}", other, e, text),
            },
        }
    }

    #[test]
    fn generated_stores_round_trip_through_sjson_export(
        entities in prop::collection::vec(prop::collection::btree_map(name(), node(), 0..5), 0..5),
    ) {
        // Built by JSON import, which gives every key its name.
        let json: Vec<serde_json::Value> = entities.iter().map(to_json).collect();
        // Leniently: the nodes hold nulls.
        let mut store = Store::new();
        if store.import(&serde_json::Value::Array(json).to_string(), &ImportOptions::lenient()).is_err() {
            return Ok(()); // Colliding random names: nothing to export.
        }
        let all = store.export_all(&ExportOptions::sjson()).unwrap();
        let mut copy = Store::new();
        let ids = copy.import(&all, &SJSON_LENIENT);
        prop_assert!(ids.is_ok(), "{}: {:?}", all, ids);
        prop_assert_eq!(contents(&copy), contents(&store), "{}", all);
        for ((_, a), (_, b)) in store.iter().zip(copy.iter()) {
            prop_assert!(a.to_blob() == b, "{}", all);
        }
        for (id, blob) in store.iter() {
            let one = store.export(id, &ExportOptions::sjson()).unwrap();
            let again = Blob::import(&one, &SJSON_LENIENT);
            prop_assert!(again.as_ref().is_ok_and(|b| *b == blob), "{}: {:?}", one, again);
        }
    }
}

fn to_json(members: &BTreeMap<String, Node>) -> serde_json::Value {
    fn node(node: &Node) -> serde_json::Value {
        match node {
            Node::Leaf(OwnedValue::Bool(b)) => serde_json::Value::Bool(*b),
            Node::Leaf(OwnedValue::Float(f)) => serde_json::json!(f),
            Node::Leaf(OwnedValue::Str(s)) => serde_json::Value::String(s.clone()),
            Node::Leaf(OwnedValue::Floats(f)) => serde_json::json!(f),
            Node::Leaf(OwnedValue::Null | OwnedValue::Tombstone) => serde_json::Value::Null,
            Node::Object(members) => to_json(members),
        }
    }
    members.iter().map(|(k, v)| (k.clone(), node(v))).collect()
}
