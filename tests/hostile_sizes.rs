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
        assert_eq!(store.key_name(Key::parse(&deep)), Some(deep.as_str()));
        let compact = store.export_json(id).unwrap();
        let pretty = store.export_json_pretty(id).unwrap();
        (compact, pretty, store.export_all_json())
    });
    let hash = Key::parse(&deep_path(DEEP_SEGMENTS));
    assert_eq!(hash.to_string(), "#76077a0b");
    assert_eq!(compact, r##"{"#de9577cc":"Deep","#76077a0b":1.0,"stats":{"health":7.0}}"##);
    assert_eq!(
        pretty,
        "{\n  \"#de9577cc\": \"Deep\",\n  \"#76077a0b\": 1.0,\n  \"stats\": {\n    \"health\": \
         7.0\n  }\n}"
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
    assert_eq!(exported, format!("[{nested}[1.0,2.0]{}]", "}".repeat(MAX_PATH_SEGMENTS)));

    // 127 levels of JSON, the most the importer reads: the export imports back.
    let mut copy = Store::new();
    let ids = copy.import_json(&exported, &datacomp::ImportOptions::strict()).unwrap();
    assert_eq!(copy.get(ids[0]).unwrap().get_floats(deepest.as_str()), Some(&[1.0, 2.0][..]));
    assert_eq!(copy.export_all_json(), exported);
}
