//! Reproductions from an outside attack on the entry points the house restructuring changed
//! (import, export, load, parse, history, migrations). Public API only. Each test asserts
//! the behaviour the docs promise: seven defects found, all present at bec0243 (before the
//! restructuring), fixed in the hardening issue (30).

use datacomp::text::JsonErrorKind;
use datacomp::{Blob, ImportOptions, Key, MigrationStep, Migrations, Store, TextFormat};

fn lenient() -> ImportOptions {
    ImportOptions::lenient()
}

/// An error inside a leniently converted array (an array holding something other than
/// numbers, read as an object keyed by index) names only the array, not the place: the
/// member path is popped (`leave_index`) before the importer builds the error's pointer.
/// Objects name the full path (`/m/n/x`); arrays should too (`/m/1/x`).
#[test]
fn an_error_inside_a_lenient_array_names_its_full_path() {
    let err = Blob::import(r#"{"m": {"n": {"x": tru}}}"#, &lenient()).unwrap_err();
    assert_eq!(err.path(), "/m/n/x", "objects: the full path");

    let err = Blob::import(r#"{"m": ["a", {"x": tru}]}"#, &lenient()).unwrap_err();
    assert_eq!(err.path(), "/m/1/x", "{err}");

    let err = Blob::import(r#"{"m": ["a", tru]}"#, &lenient()).unwrap_err();
    assert_eq!(err.path(), "/m/1", "{err}");

    let err = Blob::import(r#"{"m": ["a", {"x": 1, "x": 2}]}"#, &lenient()).unwrap_err();
    assert_eq!(err.path(), "/m/1/x", "{err}");
}

/// The same through SJSON, whose reader shares the importer.
#[test]
fn an_error_inside_a_lenient_sjson_array_names_its_full_path() {
    let sjson = lenient().format(TextFormat::Sjson);
    let err = Blob::import(r#"m = ["a" {x = tru}]"#, &sjson).unwrap_err();
    assert_eq!(err.path(), "/m/1/x", "{err}");
}

/// Nested arrays past the depth limit, read leniently: the error says the path has 126
/// segments, but the path it gives is `/m/0` (2 segments), so the place is lost.
#[test]
fn too_deep_in_nested_lenient_arrays_names_the_deep_path() {
    let depth = 127;
    let text = format!(r#"{{"m": {}"s"{}}}"#, "[".repeat(depth), "]".repeat(depth));
    let mut store = Store::new();
    let before = store.to_bytes();
    let err = store.import(&text, &lenient()).unwrap_err();
    assert_eq!(store.to_bytes(), before, "the store is unchanged");
    let JsonErrorKind::TooDeep { segments, .. } = *err.kind() else { panic!("{err}") };
    let pointer_segments = err.path().split('/').count() - 1;
    assert_eq!(pointer_segments, segments, "the path names the place: {}", err.path());
}

/// A strict SJSON number too small for `f32` is reported as `1e-99` (the reader's stand-in),
/// not as written; JSON reports the literal (`1e-400`).
#[test]
fn a_strict_sjson_number_too_small_is_named_as_written() {
    let json = Blob::import(r#"{"a": 1e-400}"#, &ImportOptions::strict()).unwrap_err();
    assert!(
        matches!(json.kind(), JsonErrorKind::NotHeld { number, .. } if number == "1e-400"),
        "{json}"
    );
    let sjson = ImportOptions::strict().format(TextFormat::Sjson);
    let err = Blob::import("a = 1e-400", &sjson).unwrap_err();
    assert!(
        matches!(err.kind(), JsonErrorKind::NotHeld { number, .. } if number == "1e-400"),
        "{err}"
    );
}

/// A number past `f64` in a strict import: SJSON says `NumberOutOfRange` ("inf is past the
/// range of f32"), JSON a `Syntax` error ("number out of range"), though `ImportOptions::format`
/// promises "the same rules, policies and errors for both", and `JsonF32`'s `FromStr` calls it
/// `NumberOutOfRange`.
#[test]
fn a_number_past_f64_is_the_same_error_in_json_and_sjson() {
    let json = Blob::import(r#"{"a": 1e400}"#, &ImportOptions::strict()).unwrap_err();
    let sjson = ImportOptions::strict().format(TextFormat::Sjson);
    let sjson = Blob::import("a = 1e400", &sjson).unwrap_err();
    assert!(matches!(sjson.kind(), JsonErrorKind::NumberOutOfRange(_)), "{sjson}");
    assert!(matches!(json.kind(), JsonErrorKind::NumberOutOfRange(_)), "{json}");
}

/// A key collision with the empty member name showed that name as nothing:
/// `\u{0} and  hash to the same key #00000000` (two spaces, no name). (Under key hash 3 the
/// empty name and `\u{0}` are distinct keys; `vlpblmhc` shares the empty name's.)
#[test]
fn a_collision_with_the_empty_name_shows_the_name() {
    assert_eq!(Key::new("vlpblmhc"), Key::new(""));
    let err = Blob::import(r#"{"": 1, "vlpblmhc": 2}"#, &ImportOptions::strict()).unwrap_err();
    assert!(matches!(err.kind(), JsonErrorKind::KeyCollision { .. }));
    let message = err.to_string();
    assert!(!message.contains(" and  hash"), "the empty name is invisible: {message}");
    assert_eq!(
        message,
        "/vlpblmhc (line 1, column 21): vlpblmhc and / hash to the same key #fae88a6b"
    );
    assert!(Blob::import(r#"{"": 1, "\u0000": 2}"#, &ImportOptions::strict()).is_ok());
}

/// `Migrations::set` writes a key whose path is past `MAX_PATH_SEGMENTS` (125), which
/// `BlobMut::try_set`, `Store::insert_key_name` and import all refuse (`PathTooDeep`): a
/// migration makes a store the rest of the API could not.
#[test]
fn a_migration_refuses_a_path_past_the_segment_limit() {
    let mut store = Store::new();
    let id = store.import(r#"{"name": "a"}"#, &ImportOptions::strict()).unwrap().ids[0];
    let deep = "a.".repeat(200) + "b";
    assert!(store.get_mut(id).unwrap().set(deep.as_str(), 1.0).is_err());
    let before = store.to_bytes();
    let result = Migrations::new(1).step(MigrationStep::to(1).set(&deep, 1.0)).apply(&mut store);
    assert!(result.is_err(), "a 201-segment path was written");
    assert_eq!(store.to_bytes(), before);
    assert_eq!(store.get(id).unwrap().get_float(Key::parse(&deep)), None);
}
