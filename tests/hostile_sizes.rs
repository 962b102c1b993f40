//! Inputs sized to hurt: names of thousands of segments, entities of hundreds of thousands of
//! keys. Each test reproduces a defect of issue 15 (a stack overflow, a quadratic operation)
//! at a size where the old code fails or takes far longer than the test allows, and checks
//! the result exactly.
//!
//! Sizes keep a debug `cargo test` fast; the largest cases are `#[ignore]`d, to run in
//! release: `cargo test --release --test hostile_sizes -- --include-ignored`.

use datacomp::{Key, MAX_PATH_SEGMENTS, Store};

/// A save written before names had a depth limit: entity `0v0t1` holds `name` ("Deep",
/// set without a name), `stats.health` = 7 and a key named by 20,000 segments `a.a.a...a`
/// (= 1). Exporting it overflowed the stack (issue 15, item 2).
const DEEP_NAME: &[u8] = include_bytes!("../fixtures/deep_name.dcmp");
const DEEP_SEGMENTS: usize = 20_000;

fn deep_path(segments: usize) -> String {
    vec!["a"; segments].join(".")
}

/// Runs `f` on a thread with a 256 KiB stack, an eighth of a test thread's: nothing that
/// walks a deep name may recurse per segment.
fn on_a_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let thread = std::thread::Builder::new().stack_size(256 * 1024).spawn(f).unwrap();
    thread.join().expect("no stack overflow")
}

#[test]
fn a_save_with_a_20_000_segment_name_loads_reads_and_exports_it_by_hash() {
    let (compact, pretty, all) = on_a_small_stack(|| {
        let store = Store::from_bytes(DEEP_NAME).expect("the save loads");
        let id = "0v0t1".parse().unwrap();
        let deep = deep_path(DEEP_SEGMENTS);
        let entity = store.get(id).unwrap();
        assert_eq!(entity.get_float(deep.as_str()), Some(1.0));
        assert_eq!(store.key_name(Key::parse(&deep)).as_deref(), Some(deep.as_str()));
        let compact = store.export_json(id).unwrap();
        let pretty = store.export_json_pretty(id).unwrap();
        (compact, pretty, store.export_all_json())
    });
    let hash = Key::parse(&deep_path(DEEP_SEGMENTS));
    assert_eq!(hash.to_string(), "#76077a0b");
    assert_eq!(compact, r##"{"#de9577cc":"Deep","#76077a0b":1,"stats":{"health":7}}"##);
    assert_eq!(
        pretty,
        "{\n  \"#de9577cc\": \"Deep\",\n  \"#76077a0b\": 1,\n  \"stats\": {\n    \"health\": \
         7\n  }\n}"
    );
    assert_eq!(all, format!("[{compact}]"));
}

#[test]
fn a_name_of_the_deepest_allowed_path_exports_nested_and_imports_back() {
    let mut store = Store::new();
    let id = store.insert_empty();
    let deepest = deep_path(MAX_PATH_SEGMENTS);
    store.get_mut(id).unwrap().set(deepest.as_str(), [1.0, 2.0]);
    let exported = store.export_all_json();
    let nested = "{\"a\":".repeat(MAX_PATH_SEGMENTS);
    assert_eq!(exported, format!("[{nested}[1,2]{}]", "}".repeat(MAX_PATH_SEGMENTS)));

    // 127 levels of JSON, the most the importer reads: the export imports back.
    let mut copy = Store::new();
    let ids = copy.import_json(&exported, &datacomp::ImportOptions::strict()).unwrap();
    assert_eq!(copy.get(ids[0]).unwrap().get_floats(deepest.as_str()), Some(&[1.0, 2.0][..]));
    assert_eq!(copy.export_all_json(), exported);
}

#[test]
fn every_way_a_name_enters_refuses_a_path_past_the_limit_and_changes_nothing() {
    use datacomp::{Blob, Error, KeyPath, PathTooDeep};

    let mut store = Store::new();
    let id = store.insert_empty();
    let too_deep = |path: &str, segments| PathTooDeep {
        path: path.to_owned(),
        segments,
        limit: MAX_PATH_SEGMENTS,
    };

    // The issue's path: 60,001 segments.
    let dotted = deep_path(60_001);
    let err = store.get_mut(id).unwrap().try_set(dotted.as_str(), 1).unwrap_err();
    let Error::PathTooDeep(err) = err else { panic!("{err}") };
    assert_eq!(err, too_deep(&dotted, 60_001));
    let shown = err.to_string();
    assert!(shown.starts_with("key path a.a.a."), "{shown}");
    assert!(shown.ends_with(" has 60001 segments, past the limit of 125"), "{shown}");
    assert!(shown.len() < 300, "the path is cut: {} bytes", shown.len());

    let pointer = "/b".repeat(MAX_PATH_SEGMENTS + 1);
    let err = store.get_mut(id).unwrap().try_set(KeyPath::pointer(&pointer).unwrap(), 1);
    assert!(matches!(err, Err(Error::PathTooDeep(e)) if e == too_deep(&pointer, 126)));

    let just_over = deep_path(MAX_PATH_SEGMENTS + 1);
    let err = store.try_insert_entries([("name", 1.0), (just_over.as_str(), 2.0)]);
    assert!(matches!(err, Err(Error::PathTooDeep(e)) if e == too_deep(&just_over, 126)));
    let err = store.insert_key_name(&just_over);
    assert!(matches!(err, Err(Error::PathTooDeep(e)) if e == too_deep(&just_over, 126)));

    assert_eq!(store.len(), 1);
    assert!(store.get(id).unwrap().is_empty());
    assert_eq!(store.key_names().len(), 0, "no name recorded");

    // At the limit, each takes the path.
    let deepest = deep_path(MAX_PATH_SEGMENTS);
    store.get_mut(id).unwrap().try_set(deepest.as_str(), 1).unwrap();
    assert_eq!(store.insert_key_name(&deepest).unwrap(), Key::parse(&deepest));
    assert_eq!(store.key_name(Key::parse(&deepest)).as_deref(), Some(deepest.as_str()));
    // Reading a deeper path records nothing, so it is not refused: it finds nothing.
    assert_eq!(store.check_key(dotted.as_str()).unwrap(), Key::parse(&dotted));
    let blob: Blob = store.get(id).unwrap().to_blob();
    assert_eq!(blob.get(dotted.as_str()), None);
}

#[test]
fn an_import_refuses_a_member_nested_past_the_limit_and_changes_nothing() {
    use datacomp::{Blob, ImportOptions, JsonErrorKind};

    let nested = |depth: usize, leaf: &str| {
        format!("{}{leaf}{}", "{\"a\":".repeat(depth), "}".repeat(depth))
    };
    let too_deep = JsonErrorKind::TooDeep { segments: 126, limit: MAX_PATH_SEGMENTS };
    let pointer_126 = "/a".repeat(126);

    assert_eq!(Blob::from_json(&nested(125, "true")).unwrap().len(), 1);
    let err = Blob::from_json(&nested(126, "true")).unwrap_err();
    assert_eq!((err.kind(), err.path()), (&too_deep, pointer_126.as_str()));
    assert_eq!((err.line(), err.column()), (1, 125 * 5 + 4), "at the member name's end");
    assert_eq!(
        err.to_string(),
        format!(
            "{} (line 1, column 629): the path has 126 segments, past the limit of 125",
            datacomp::text::Shortened(&pointer_126)
        )
    );
    // Far deeper than serde_json's own limit: refused at the same place, by the same rule.
    let err = Blob::from_json(&nested(60_000, "true")).unwrap_err();
    assert_eq!((err.kind(), err.path()), (&too_deep, pointer_126.as_str()));

    // In a store, a lenient array of arrays (members by index) counts its levels as well.
    let mut store = Store::new();
    let text = nested(125, "[[0]]");
    let err = store.import_json(&text, &ImportOptions::lenient()).unwrap_err();
    assert_eq!(err.kind(), &too_deep);
    assert_eq!(err.path(), format!("{}/0", "/a".repeat(125)));
    assert!(store.is_empty() && store.key_names().len() == 0, "nothing of it stays");
    // Past serde_json's 127 levels its own limit answers first, refusing as well.
    let err = store.import_json(&format!("[{{}},{text}]"), &ImportOptions::lenient());
    let err = err.unwrap_err();
    assert_eq!(err.kind(), &JsonErrorKind::Syntax("recursion limit exceeded".into()));
    assert!(store.is_empty() && store.key_names().len() == 0, "nothing of it stays");
}
