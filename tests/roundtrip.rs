//! Designers' JSON round trips: a generated corpus in the shapes of real game data (issue 16)
//! is imported, saved, loaded and exported, and comes back as it was written, byte for byte,
//! compact and pretty; so do documents with arrays of every kind (objects, strings, mixed,
//! nested, empty), which a store records as arrays. The same documents go through SJSON
//! export and import and come back as the same JSON.

#[path = "common/corpus.rs"]
mod corpus;

use corpus::J;
use datacomp::text::ImportReport;
use datacomp::{ExportOptions, ImportOptions, Store, StorePatch, TextFormat};

/// The document's text in both forms an export writes.
fn texts(doc: &J) -> [String; 2] {
    let pretty = match doc {
        J::Arr(items) => J::pretty_all(items),
        other => other.pretty(0),
    };
    [doc.compact(), pretty]
}

/// `text` imported under `options`, saved to a file and loaded back.
fn import_save_load(text: &str, options: &ImportOptions) -> (Store, ImportReport) {
    let mut store = Store::new();
    let report = store.import(text, options).unwrap().report;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("world.dcmp");
    store.save(&path).unwrap();
    let loaded = Store::load(&path).unwrap();
    assert_eq!(loaded, store);
    (loaded, report)
}

/// Asserts two texts are equal, showing where they first differ (the texts are long).
#[track_caller]
fn assert_same(got: &str, expected: &str, name: &str) {
    if got == expected {
        return;
    }
    let at = got.bytes().zip(expected.bytes()).take_while(|(a, b)| a == b).count();
    let around = |text: &str| {
        let start = text.floor_char_boundary(at.saturating_sub(60));
        let end = text.ceil_char_boundary((at + 60).min(text.len()));
        text[start..end].to_owned()
    };
    panic!("{name}: differs at byte {at}:\n got: {}\nwant: {}", around(got), around(expected));
}

/// Checks that `store` exports exactly `entities`, whole and one by one, compact and pretty.
#[track_caller]
fn assert_exports(store: &Store, entities: &[J], name: &str) {
    let all = J::Arr(entities.to_vec());
    assert_same(&store.export_all(&ExportOptions::json()).unwrap(), &all.compact(), name);
    assert_same(
        &store.export_all(&ExportOptions::json().pretty(true)).unwrap(),
        &J::pretty_all(entities),
        name,
    );
    assert_eq!(store.len(), entities.len(), "{name}");
    for ((id, _), entity) in store.iter().zip(entities) {
        assert_same(&store.export(id, &ExportOptions::json()).unwrap(), &entity.compact(), name);
        assert_same(
            &store.export(id, &ExportOptions::json().pretty(true)).unwrap(),
            &entity.pretty(0),
            name,
        );
    }
}

#[test]
fn the_corpus_round_trips_byte_for_byte() {
    let documents = corpus::documents();
    assert!(documents.iter().any(|(_, d)| d.entities().len() >= 300), "a few-hundred-entity one");
    for (name, doc) in documents {
        let [compact, pretty] = texts(&doc);
        let runs = [
            (compact.as_str(), ImportOptions::strict()),
            (&pretty, ImportOptions::strict()),
            (&compact, ImportOptions::lenient()),
        ];
        for (text, options) in runs {
            let (store, report) = import_save_load(text, &options);
            assert_eq!(report, ImportReport::default(), "{name}: nothing to change");
            assert_exports(&store, &doc.entities(), name);
        }
    }
}

#[test]
fn edits_diffs_and_merges_keep_the_round_trip() {
    let (name, doc) = corpus::documents().into_iter().find(|(n, _)| *n == "monsters").unwrap();
    let entities = doc.entities();
    let (mut store, _) = import_save_load(&doc.compact(), &ImportOptions::strict());
    let base = store.clone();
    let ids: Vec<_> = store.iter().map(|(id, _)| id).collect();
    // A value changed and changed back, in place: the same document.
    for &id in &ids[..10] {
        let hp = store.get(id).unwrap().get_float("hit_points").unwrap();
        store.get_mut(id).unwrap().set("hit_points", hp + 1.5).unwrap();
        store.get_mut(id).unwrap().set("hit_points", hp).unwrap();
    }
    assert_exports(&store, &entities, name);
    // A change carried by a delta: the target's document, member order kept.
    store.get_mut(ids[3]).unwrap().set("abilities.wisdom", 31).unwrap();
    store.get_mut(ids[3]).unwrap().set("position", [0.5, 1.0, -2.25]).unwrap();
    let mut changed = entities.clone();
    let J::Obj(members) = &mut changed[3] else { panic!("an object") };
    for (member, value) in members.iter_mut() {
        match member.as_str() {
            "abilities" => {
                let J::Obj(abilities) = value else { panic!("an object") };
                abilities.iter_mut().find(|(a, _)| a == "wisdom").unwrap().1 = J::Num("31".into());
            }
            "position" => *value = J::Arr(["0.5", "1", "-2.25"].map(|n| J::Num(n.into())).into()),
            _ => {}
        }
    }
    assert_exports(&store, &changed, name);
    let delta = StorePatch::diff(&base, &store).to_bytes();
    let mut applied = base.clone();
    StorePatch::from_bytes(&delta).unwrap().apply(&mut applied).unwrap();
    assert_exports(&applied, &changed, name);
}

#[test]
fn numbers_written_otherwise_come_back_as_people_write_them() {
    let text = r#"{"a": 17.0, "b": 0.50, "c": 1E3, "d": 2.5e0, "e": -0, "f": 0.1000000, "g": [1.0, 3e-1],
        "h": 12345679.5, "i": 1.00000001}"#;
    let written =
        r#"{"a":17,"b":0.5,"c":1000,"d":2.5,"e":-0.0,"f":0.1,"g":[1,0.3],"h":12345680,"i":1}"#;
    // Two of them lose digits (issue 29), and the report says so: `h` and `i` are written
    // back as other decimals, the same f32s.
    let mut expected = ImportReport::default();
    expected.lost_digits = 2;
    expected.first_lost_digits = Some("/h".into());
    expected.lost_digits_example = Some("12345679.5 -> 12345680".into());
    for options in [ImportOptions::strict(), ImportOptions::lenient()] {
        let (store, report) = import_save_load(text, &options);
        assert_eq!(report, expected);
        let (id, _) = store.iter().next().unwrap();
        let exported = store.export(id, &ExportOptions::json()).unwrap();
        assert_eq!(exported, written);
        assert!(J::parse(&exported).same_as_f32(&J::parse(text)), "the same numbers as f32");
    }
}

/// The shapes of issue 16 that need the store's array shapes (its key tree records which
/// paths are arrays): arrays of objects, of strings, mixed, nested and empty ones.
#[test]
fn documents_with_arrays_of_every_kind_round_trip() {
    for (name, doc) in corpus::array_documents() {
        for text in texts(&doc) {
            let (store, _) = import_save_load(&text, &ImportOptions::lenient());
            let (id, _) = store.iter().next().unwrap();
            let exported = store.export(id, &ExportOptions::json()).unwrap();
            assert_eq!(exported, doc.compact(), "{name}");
        }
    }
}

/// The store's entities written as SJSON (checked), read back by a new store under
/// `options` and saved and loaded: the JSON it exports, compact.
fn through_sjson(store: &Store, options: &ImportOptions) -> String {
    let sjson = store.export_all(&ExportOptions::sjson()).unwrap();
    let mut copy = Store::new();
    copy.import(&sjson, &options.format(TextFormat::Sjson)).unwrap();
    let copy = Store::from_bytes(&copy.to_bytes()).unwrap();
    for ((id, _), (copy_id, _)) in store.iter().zip(copy.iter()) {
        let one = store.export(id, &ExportOptions::sjson()).unwrap();
        let mut alone = Store::new();
        let again = alone.import(&one, &options.format(TextFormat::Sjson)).unwrap().ids[0];
        assert_eq!(
            alone.export(again, &ExportOptions::json()),
            copy.export(copy_id, &ExportOptions::json())
        );
    }
    copy.export_all(&ExportOptions::json()).unwrap()
}

/// SJSON export writes what JSON export writes (issue 16): the corpus, strictly, and the
/// documents with arrays of every kind, leniently, come back as the same JSON text through
/// an SJSON export and import; arrays are written as SJSON arrays, not as objects keyed by
/// index (which a new store would export as objects).
#[test]
fn the_corpus_and_arrays_round_trip_through_sjson() {
    for (name, doc) in corpus::documents() {
        let (store, _) = import_save_load(&doc.compact(), &ImportOptions::strict());
        let all = J::Arr(doc.entities());
        assert_same(&through_sjson(&store, &ImportOptions::strict()), &all.compact(), name);
    }
    for (name, doc) in corpus::array_documents() {
        let (store, _) = import_save_load(&doc.compact(), &ImportOptions::lenient());
        let all = J::Arr(vec![doc.clone()]);
        assert_same(&through_sjson(&store, &ImportOptions::lenient()), &all.compact(), name);
        let (id, _) = store.iter().next().unwrap();
        let sjson = store.export(id, &ExportOptions::sjson()).unwrap();
        assert!(!sjson.contains("\"0\" ="), "{name}: an array written as an object: {sjson}");
    }
}

// ---------------------------------------------------------------------------------------------
// Real data has nulls (issue 29): documents shaped like a public game-data corpus (arrays of
// objects with nullable fields, null-only objects, empty arrays, multilingual strings with
// escapes, 6-deep nesting) come back through JSON and SJSON as the same documents.

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// Names as real fixtures hold them: several scripts, quotes, backslashes, control
/// characters, an emoji, a lone escape-worthy U+2028.
const NAMES: [&str; 8] = [
    "Pecha",
    "モモンのみ",
    "복숭아열매",
    "Baie \"Pêcha\"",
    "桃子果",
    "line\nbreak\ttab \\ slash",
    "🍑 peach\u{1}\u{1f}",
    "Печа\u{2028}ягода",
];

fn string(rng: &mut Rng) -> serde_json::Value {
    serde_json::Value::from(NAMES[rng.below(NAMES.len() as u64) as usize])
}

/// A number whose shortest `f32` form is itself: whole, or a short fraction.
fn number(rng: &mut Rng) -> serde_json::Value {
    const FRACTIONS: [f64; 6] = [0.1, 2.5, 19.99, -0.25, 0.8660254, 1e-7];
    if rng.chance(70) {
        serde_json::Value::from(rng.below(2000) as i64 - 1000)
    } else {
        serde_json::Value::from(FRACTIONS[rng.below(FRACTIONS.len() as u64) as usize])
    }
}

/// `null` two times in five, else the value `value` makes.
fn nullable(rng: &mut Rng, value: impl FnOnce(&mut Rng) -> serde_json::Value) -> serde_json::Value {
    if rng.chance(40) { serde_json::Value::Null } else { value(rng) }
}

/// One document of the corpus: a berry or a creature, every field of its shape.
fn nullable_document(rng: &mut Rng, index: u64) -> serde_json::Value {
    use serde_json::json;
    let resource = |rng: &mut Rng| {
        let name = string(rng);
        json!({"name": name, "url": nullable(rng, string)})
    };
    let flavors: Vec<_> = (0..rng.below(4))
        .map(|_| {
            json!({
                "potency": nullable(rng, number),
                "flavor": resource(rng),
                "effect_chance": null,
            })
        })
        .collect();
    let names: Vec<_> = (0..rng.below(3) + 1)
        .map(|_| json!({"language": {"name": string(rng), "url": null}, "name": string(rng)}))
        .collect();
    let deep = nullable(rng, number);
    json!({
        "id": index,
        "name": string(rng),
        "firmness": nullable(rng, resource),
        "flavors": flavors,
        "held_by": [],
        "natural_gift_power": nullable(rng, number),
        "sprites": {
            "default": null,
            "other": {"dream_world": {"front_default": null}, "home": {"front": null, "shiny": null}},
        },
        "names": names,
        "stats": [number(rng), number(rng), 0.1],
        "mixed": [null, number(rng), string(rng), true, [1, 2], []],
        "only_nulls": [null, null],
        "deep": {"a": {"b": {"c": {"d": {"e": {"f": deep, "g": null}}}}}},
        "growth": nullable(rng, |rng| json!({"time": number(rng), "rate": null})),
        "smoothness": nullable(rng, number),
        "flags": {"legendary": rng.chance(10), "mythical": null},
    })
}

/// The corpus: `n` documents.
fn nullable_corpus(n: u64) -> Vec<serde_json::Value> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    (0..n).map(|i| nullable_document(&mut rng, i)).collect()
}

#[test]
fn documents_full_of_nulls_round_trip_through_json_and_sjson() {
    let docs = nullable_corpus(300);
    let nulls = docs.iter().map(|d| d.to_string().matches("null").count()).sum::<usize>();
    assert!(nulls > 300 * 10, "{nulls} nulls");
    let text = serde_json::Value::Array(docs.clone()).to_string();
    let (store, report) = import_save_load(&text, &ImportOptions::lenient());
    // Arrays of objects are converted (and written back as arrays); nothing else changed.
    assert!(report.converted_arrays > 0);
    assert_eq!(
        (report.rounded_numbers, report.lost_digits, report.empty_objects),
        (0, 0, 0),
        "{report:?}"
    );
    let parse = |text: &str| serde_json::from_str::<serde_json::Value>(text).unwrap();

    // JSON, whole and one entity at a time, compact and pretty.
    let all = serde_json::Value::Array(docs.clone());
    assert_eq!(parse(&store.export_all(&ExportOptions::json()).unwrap()), all);
    assert_eq!(parse(&store.export_all(&ExportOptions::json().pretty(true)).unwrap()), all);
    for ((id, _), doc) in store.iter().zip(&docs) {
        assert_eq!(&parse(&store.export(id, &ExportOptions::json()).unwrap()), doc);
    }

    // SJSON: written, read back leniently (as a new store), saved and loaded.
    let back = through_sjson(&store, &ImportOptions::lenient());
    assert_eq!(parse(&back), all);

    // Each document alone, as its own file would be: JSON and SJSON.
    for doc in docs.iter().take(50) {
        let mut one = Store::new();
        let id = one.import(&doc.to_string(), &ImportOptions::lenient()).unwrap().ids[0];
        assert_eq!(&parse(&one.export(id, &ExportOptions::json()).unwrap()), doc);
        let sjson = one.export(id, &ExportOptions::sjson()).unwrap();
        let mut again = Store::new();
        let sjson_options = ImportOptions::lenient().format(TextFormat::Sjson);
        let id = again.import(&sjson, &sjson_options).unwrap().ids[0];
        assert_eq!(&parse(&again.export(id, &ExportOptions::json()).unwrap()), doc, "{sjson}");
    }
}

/// Objects that hold only nulls are objects of their own (1,392 of them vanished before).
#[test]
fn null_only_objects_and_arrays_of_nulls_round_trip() {
    let text = r#"{"sprites":{"default":null,"back":{"shiny":null}},"a":[null],"b":[[null],{"c":null}],"n":null}"#;
    let mut store = Store::new();
    let imported = store.import(text, &ImportOptions::lenient()).unwrap();
    let id = imported.ids[0];
    assert_eq!(imported.report.empty_objects, 0);
    assert_eq!(store.get(id).unwrap().len(), 6);
    assert_eq!(store.export(id, &ExportOptions::json()).unwrap(), text);
    let sjson = store.export(id, &ExportOptions::sjson()).unwrap();
    assert_eq!(
        sjson,
        "sprites = {\n    default = null\n    back = {\n        shiny = null\n    }\n}\n\
         a = [null]\nb = [\n    [null]\n    {\n        c = null\n    }\n]\nn = null"
    );
    let mut again = Store::new();
    let options = ImportOptions::lenient().format(TextFormat::Sjson);
    let id = again.import(&sjson, &options).unwrap().ids[0];
    assert_eq!(again.export(id, &ExportOptions::json()).unwrap(), text);
}

// ---------------------------------------------------------------------------------------------
// A number never changes silently (issue 29): every import that changes a number reports it,
// and what it does not report comes back equal.

/// Numbers as people and tools write them: exact and inexact fractions, large integers,
/// exponents, subnormals, the edges of f32.
const NUMBERS: [&str; 40] = [
    "0.1",
    "19.99",
    "0.5",
    "-33.25",
    "0.7071068",
    "0.70710678",
    "0.7071067811865476",
    "3.141592653589793",
    "3.1415927",
    "0.3333333333333333",
    "0.33333334",
    "1234567.89",
    "1234567.9",
    "0.30000000000000004",
    "0.10000000149011612",
    "16777216",
    "16777217",
    "123456789",
    "123456790",
    "9007199254740993",
    "18446744073709551615",
    "1e20",
    "1.5e10",
    "1.2345678912e+29",
    "2.5e-3",
    "1e-7",
    "6.02214076e23",
    "3.4028235e38",
    "3.4028236e38",
    "1e39",
    "1.17549435e-38",
    "1.1754944e-38",
    "1e-40",
    "1.4e-45",
    "1e-45",
    "1.5e-45",
    "7e-46",
    "1e-50",
    "-0.0",
    "100.000",
];

/// Decimal texts with 1 to 17 significant digits, plain and with exponents, over f32's range.
fn random_numbers(n: usize) -> Vec<String> {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    (0..n)
        .map(|_| {
            let digits = rng.below(17) as usize + 1;
            let mut mantissa: String =
                (0..digits).map(|_| char::from(b'0' + rng.below(10) as u8)).collect();
            mantissa.replace_range(..1, &(rng.below(9) + 1).to_string());
            let sign = if rng.chance(20) { "-" } else { "" };
            if rng.chance(50) {
                // Plain: the point somewhere in or before the digits.
                let point = rng.below(digits as u64 + 4) as usize;
                if point == 0 || point > digits {
                    let zeros = "0".repeat(point.saturating_sub(digits));
                    format!("{sign}0.{zeros}{mantissa}")
                } else if point == digits {
                    format!("{sign}{mantissa}")
                } else {
                    format!("{sign}{}.{}", &mantissa[..point], &mantissa[point..])
                }
            } else {
                let exponent = rng.below(86) as i64 - 46;
                let (head, tail) = mantissa.split_at(1);
                let tail = if tail.is_empty() { String::new() } else { format!(".{tail}") };
                format!("{sign}{head}{tail}e{exponent}")
            }
        })
        .collect()
}

/// The f64 nearest to the decimal `text` (Rust's reading, correctly rounded).
fn wide(text: &str) -> f64 {
    text.parse().unwrap()
}

#[test]
fn every_changed_number_is_reported_and_the_rest_come_back_equal() {
    use datacomp::text::JsonErrorKind;
    let numbers: Vec<String> =
        NUMBERS.iter().map(|&n| n.to_owned()).chain(random_numbers(3000)).collect();
    let mut counts = [0_usize; 4]; // same, lost digits, rounded, refused
    for text in &numbers {
        for format in [TextFormat::Json, TextFormat::Sjson] {
            for base in [ImportOptions::strict(), ImportOptions::lenient()] {
                let options = base.format(format);
                let doc = match format {
                    TextFormat::Json => format!(r#"{{"x": {text}, "a": [{text}]}}"#),
                    _ => format!("x = {text}\na = [{text}]"),
                };
                let mut store = Store::new();
                let imported = match store.import(&doc, &options) {
                    Ok(imported) => imported,
                    Err(e) => {
                        // Refused is said: only strict imports refuse, and only these.
                        assert!(!options.is_lenient(), "{text}: {e}");
                        assert!(
                            matches!(
                                e.kind(),
                                JsonErrorKind::NotHeld { .. } | JsonErrorKind::NumberOutOfRange(_)
                            ),
                            "{text}: {e}"
                        );
                        assert_eq!(e.path(), "/x", "{text}");
                        counts[3] += 1;
                        continue;
                    }
                };
                let report = imported.report;
                let blob = store.get(imported.ids[0]).unwrap();
                let x = blob.get_float("x").unwrap();
                assert_eq!(blob.get_floats("a"), Some(&[x][..]), "{text}");
                let written = store.export_at(imported.ids[0], "x", &ExportOptions::json());
                let written = written.unwrap();
                match (report.lost_digits, report.rounded_numbers) {
                    (0, 0) => {
                        // Unreported: the same number comes back (serde_json reads decimals
                        // below 1e-13 and past 1e22 to within one f64 step, so there the rule
                        // grants that step).
                        let (a, b) = (wide(text), wide(&written));
                        let slack = u64::from(!(1e-13..1e22).contains(&a.abs()));
                        assert!(
                            a.to_bits().abs_diff(b.to_bits()) <= slack,
                            "{text} came back as {written}, unreported ({format:?})"
                        );
                        counts[0] += 1;
                    }
                    (2, 0) => {
                        assert_eq!(report.first_lost_digits.as_deref(), Some("/x"), "{text}");
                        let example = report.lost_digits_example.unwrap();
                        assert!(example.ends_with(&format!(" -> {written}")), "{example}");
                        assert_ne!(wide(text), wide(&written), "{text}: reported, yet equal");
                        // And refused when asked.
                        let exact = Store::new().import(&doc, &options.exact_numbers(true));
                        let e = exact.unwrap_err();
                        assert!(matches!(e.kind(), JsonErrorKind::LosesDigits { .. }), "{e}");
                        assert_eq!(e.path(), "/x");
                        counts[1] += 1;
                    }
                    (0, 2) => {
                        assert!(options.is_lenient(), "{text}: strict rounds nothing");
                        assert_eq!(report.first_rounded.as_deref(), Some("/x"), "{text}");
                        counts[2] += 1;
                    }
                    other => panic!("{text}: {other:?} in {report:?}"),
                }
            }
        }
    }
    // Every kind was met, many times.
    assert!(counts.iter().all(|&n| n > 100), "{counts:?}");
    // A few exactly: π loses digits, 0.1 and 19.99 do not.
    let report = |text: &str| {
        let doc = format!(r#"{{"x": {text}}}"#);
        Store::new().import(&doc, &ImportOptions::strict()).unwrap().report
    };
    assert_eq!(
        report("3.141592653589793").lost_digits_example.as_deref(),
        Some("3.141592653589793 -> 3.1415927")
    );
    assert_eq!(
        report("0.3333333333333333").lost_digits_example.as_deref(),
        Some("0.3333333333333333 -> 0.33333334")
    );
    assert_eq!(
        report("1234567.89").lost_digits_example.as_deref(),
        Some("1234567.89 -> 1234567.9")
    );
    assert_eq!((report("0.1").lost_digits, report("19.99").lost_digits), (0, 0));
}
