//! Inputs sized to hurt: names of thousands of segments, entities of hundreds of thousands of
//! keys. Each test reproduces a defect of issue 15 (a stack overflow, a quadratic operation)
//! at a size where the old code fails or takes far longer than the test allows, and checks
//! the result exactly.
//!
//! Sizes keep a debug `cargo test` fast; the largest cases are `#[ignore]`d, to run in
//! release: `cargo test --release --test hostile_sizes -- --include-ignored`.

use datacomp::key::MAX_PATH_SEGMENTS;
use datacomp::{ExportOptions, Key, Store, StorePatch};

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
        let compact = store.export(id, &ExportOptions::json()).unwrap();
        let pretty = store.export(id, &ExportOptions::json().pretty(true)).unwrap();
        (compact, pretty, store.export_all(&ExportOptions::json()).unwrap())
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
    store.get_mut(id).unwrap().set(deepest.as_str(), [1.0, 2.0]).unwrap();
    let exported = store.export_all(&ExportOptions::json()).unwrap();
    let nested = "{\"a\":".repeat(MAX_PATH_SEGMENTS);
    assert_eq!(exported, format!("[{nested}[1,2]{}]", "}".repeat(MAX_PATH_SEGMENTS)));

    // 127 levels of JSON, the most the importer reads: the export imports back.
    let mut copy = Store::new();
    let ids = copy.import(&exported, &datacomp::ImportOptions::strict()).unwrap().ids;
    assert_eq!(copy.get(ids[0]).unwrap().get_floats(deepest.as_str()), Some(&[1.0, 2.0][..]));
    assert_eq!(copy.export_all(&ExportOptions::json()).unwrap(), exported);
}

#[test]
fn every_way_a_name_enters_refuses_a_path_past_the_limit_and_changes_nothing() {
    use datacomp::{Blob, Error, KeyError, KeyPath};

    let mut store = Store::new();
    let id = store.insert_empty();
    let too_deep = |path: &str, segments| KeyError::PathTooDeep {
        path: path.to_owned(),
        segments,
        limit: MAX_PATH_SEGMENTS,
    };

    // The issue's path: 60,001 segments.
    let dotted = deep_path(60_001);
    let err = store.get_mut(id).unwrap().set(dotted.as_str(), 1).unwrap_err();
    let Error::Key(err @ KeyError::PathTooDeep { .. }) = err else { panic!("{err}") };
    assert_eq!(err, too_deep(&dotted, 60_001));
    let shown = err.to_string();
    assert!(shown.starts_with("key path a.a.a."), "{shown}");
    assert!(shown.ends_with(" has 60001 segments, past the limit of 125"), "{shown}");
    assert!(shown.len() < 300, "the path is cut: {} bytes", shown.len());

    let pointer = "/b".repeat(MAX_PATH_SEGMENTS + 1);
    let err = store.get_mut(id).unwrap().set(KeyPath::pointer(&pointer).unwrap(), 1);
    assert!(
        matches!(err, Err(Error::Key(e @ KeyError::PathTooDeep { .. })) if e == too_deep(&pointer, 126))
    );

    let just_over = deep_path(MAX_PATH_SEGMENTS + 1);
    let err = store.insert_entries([("name", 1.0), (just_over.as_str(), 2.0)]);
    assert!(
        matches!(err, Err(Error::Key(e @ KeyError::PathTooDeep { .. })) if e == too_deep(&just_over, 126))
    );
    let err = store.insert_key_name(&just_over);
    assert!(
        matches!(err, Err(Error::Key(e @ KeyError::PathTooDeep { .. })) if e == too_deep(&just_over, 126))
    );

    assert_eq!(store.len(), 1);
    assert!(store.get(id).unwrap().is_empty());
    assert_eq!(store.key_names().len(), 0, "no name recorded");

    // At the limit, each takes the path.
    let deepest = deep_path(MAX_PATH_SEGMENTS);
    store.get_mut(id).unwrap().set(deepest.as_str(), 1).unwrap();
    assert_eq!(store.insert_key_name(&deepest).unwrap(), Key::parse(&deepest));
    assert_eq!(store.key_name(Key::parse(&deepest)).as_deref(), Some(deepest.as_str()));
    // Reading a deeper path records nothing, so it is not refused: it finds nothing.
    assert_eq!(store.check_key(dotted.as_str()).unwrap(), Key::parse(&dotted));
    let blob: Blob = store.get(id).unwrap().to_blob();
    assert_eq!(blob.get(dotted.as_str()), None);
}

#[test]
fn an_import_refuses_a_member_nested_past_the_limit_and_changes_nothing() {
    use datacomp::text::JsonErrorKind;
    use datacomp::{Blob, ImportOptions};

    let nested = |depth: usize, leaf: &str| {
        format!("{}{leaf}{}", "{\"a\":".repeat(depth), "}".repeat(depth))
    };
    let too_deep = JsonErrorKind::TooDeep { segments: 126, limit: MAX_PATH_SEGMENTS };
    let pointer_126 = "/a".repeat(126);

    assert_eq!(Blob::import(&nested(125, "true"), &ImportOptions::strict()).unwrap().len(), 1);
    let err = Blob::import(&nested(126, "true"), &ImportOptions::strict()).unwrap_err();
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
    let err = Blob::import(&nested(60_000, "true"), &ImportOptions::strict()).unwrap_err();
    assert_eq!((err.kind(), err.path()), (&too_deep, pointer_126.as_str()));

    // In a store, a lenient array of arrays (members by index) counts its levels as well.
    let mut store = Store::new();
    let text = nested(125, "[[0]]");
    let err = store.import(&text, &ImportOptions::lenient()).unwrap_err();
    assert_eq!(err.kind(), &too_deep);
    assert_eq!(err.path(), format!("{}/0", "/a".repeat(125)));
    assert!(store.is_empty() && store.key_names().len() == 0, "nothing of it stays");
    // Past serde_json's 127 levels its own limit answers first, refusing as well.
    let err = store.import(&format!("[{{}},{text}]"), &ImportOptions::lenient());
    let err = err.unwrap_err();
    assert_eq!(err.kind(), &JsonErrorKind::Syntax("recursion limit exceeded".into()));
    assert!(store.is_empty() && store.key_names().len() == 0, "nothing of it stays");
}

// ---------------------------------------------------------------------------------------------
// Quadratic time (issue 15, item 4)
//
// Each operation on one entity of 50,000 keys, always, and of 1,000,000 in release. Measured
// before the fix in debug: `Blob::from_json` of 50,000 keys took 20 s of CPU, `==` 11.6 s,
// `Patch::between` 26 s (in release, 200,000 keys took 9.6 s to import); now each takes under
// 0.2 s. The bound is on the thread's CPU time, so a loaded machine does not trip it.

use std::time::Instant;

use datacomp::blob::Patch;
use datacomp::{Blob, ImportOptions, Value};

/// Seconds of CPU that no O(n log n) operation here comes near, even in debug at 1M keys, and
/// that each quadratic one passed by far at 50,000.
const QUADRATIC_CPU: f64 = 5.0;

/// CPU seconds this thread has run (Linux); elsewhere, wall-clock seconds since the first call.
fn thread_cpu() -> f64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    match (fields.get(11).and_then(|f| f.parse::<f64>().ok()), fields.get(12)) {
        (Some(user), Some(system)) => (user + system.parse::<f64>().unwrap_or(0.0)) / 100.0,
        _ => {
            static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
            START.get_or_init(Instant::now).elapsed().as_secs_f64()
        }
    }
}

fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let start = thread_cpu();
    let out = f();
    let took = thread_cpu() - start;
    assert!(took < QUADRATIC_CPU, "{what} took {took:.2} s of CPU");
    out
}

/// One entity of the members `(i, variant)`: key `k{i}` holds, by `i % 4`, a string, a float,
/// a boolean or a float array, each changed by an odd `variant`.
fn entity(members: impl Iterator<Item = (usize, u32)>) -> String {
    let mut out = String::from("{");
    for (at, (i, variant)) in members.enumerate() {
        if at > 0 {
            out.push(',');
        }
        let v = i as u32 + variant;
        out.push_str(&match i % 4 {
            0 => format!("\"k{i}\":\"v{v}\""),
            1 => format!("\"k{i}\":{v}.5"),
            2 => format!("\"k{i}\":{}", v.is_multiple_of(2)),
            _ => format!("\"k{i}\":[{v}.0,0.25]"),
        });
    }
    out.push('}');
    out
}

fn key(i: usize) -> Key {
    Key::new(&format!("k{i}"))
}

#[test]
fn an_entity_of_50_000_keys_imports_exports_and_imports_back() {
    import_export(50_000);
}

#[test]
#[ignore = "1M keys: run in release"]
fn an_entity_of_1_000_000_keys_imports_exports_and_imports_back() {
    import_export(1_000_000);
}

fn import_export(n: usize) {
    let text = entity((0..n).map(|i| (i, 0)));
    let blob = timed("Blob::import", || Blob::import(&text, &ImportOptions::strict()).unwrap());
    assert_eq!(blob.len(), n);
    assert_eq!(blob.get(key(0)), Some(Value::Str("v0")));
    let last = n - 4;
    assert_eq!(blob.get(key(last + 1)), Some(Value::Float((last + 1) as f32 + 0.5)));
    assert_eq!(blob.get(key(last + 2)), Some(Value::Bool(true)));
    assert_eq!(blob.get(key(last + 3)), Some(Value::Floats(&[(last + 3) as f32, 0.25])));
    assert_eq!(blob.keys().nth(n / 2 + 1), Some(key(n / 2 + 1)), "in document order");

    let mut store = Store::new();
    let ids = timed("Store::import", || store.import(&text, &ImportOptions::strict()).unwrap().ids);
    assert!(store.get(ids[0]).unwrap() == blob.as_blob_ref());
    let exported = timed("export", || store.export(ids[0], &ExportOptions::json()).unwrap());
    assert!(exported.starts_with(r#"{"k0":"v0","k1":1.5,"k2":true,"k3":[3,0.25],"k4":"#));
    let again = timed("import of the export", || {
        Blob::import(&exported, &ImportOptions::strict()).unwrap()
    });
    assert_eq!(again, blob);

    // A member repeated at the end is found, and named.
    let twice = format!("{},\"k7\":1}}", &text[..text.len() - 1]);
    let err = timed("a duplicate", || Blob::import(&twice, &ImportOptions::strict()).unwrap_err());
    assert_eq!(err.kind(), &datacomp::text::JsonErrorKind::DuplicatePath("k7".into()));
    assert_eq!(err.path(), "/k7");
}

#[test]
fn equality_diff_apply_and_merge3_of_50_000_keys() {
    whole_blob_operations(50_000);
}

#[test]
#[ignore = "1M keys: run in release"]
fn equality_diff_apply_and_merge3_of_1_000_000_keys() {
    whole_blob_operations(1_000_000);
}

#[allow(clippy::cast_precision_loss)]
fn whole_blob_operations(n: usize) {
    let added = n / 100;
    let blob = |members: &mut dyn Iterator<Item = (usize, u32)>| {
        Blob::import(&entity(members), &ImportOptions::strict()).unwrap()
    };
    // Keys with `i % 10` in `changed` get `variant`, in `removed` are left out; `added` new
    // keys follow.
    let edit = |changed: usize, removed: usize, variant: u32, added: usize| {
        let kept = (0..n).filter(move |i| i % 10 != removed);
        kept.map(move |i| (i, if i % 10 == changed { variant } else { 0 }))
            .chain((n..n + added).map(|i| (i, 0)))
    };
    let base = blob(&mut (0..n).map(|i| (i, 0)));
    let reversed = blob(&mut (0..n).rev().map(|i| (i, 0)));
    assert_ne!(base.as_bytes(), reversed.as_bytes());
    assert!(timed("==", || base == reversed));
    let changed = blob(&mut (0..n).rev().map(|i| (i, u32::from(i == n / 3))));
    assert!(timed("!=", || base != changed));

    let target = blob(&mut edit(0, 1, 1, added));
    let patch =
        timed("Patch::between", || Patch::between(base.as_blob_ref(), target.as_blob_ref()));
    assert_eq!(patch.sets().len(), n / 10 + added);
    assert_eq!(patch.removals().len(), n / 10);
    assert_eq!(patch.sets().get(key(20)), Some(Value::Str("v21")));
    assert_eq!(patch.sets().get(key(n + 3)), Some(Value::Floats(&[(n + 3) as f32, 0.25])));
    let mut patched = base.clone();
    timed("apply", || patch.apply(&mut patched));
    assert_eq!(patched, target);
    assert!(patched.keys().eq(target.keys()), "in the target's order");

    let ours = blob(&mut edit(0, 1, 1, 0));
    let theirs = blob(&mut edit(5, 6, 3, added));
    let merged = timed("merge3", || Blob::merge3(&base, &ours, &theirs).unwrap());
    let expected = blob(
        &mut (0..n)
            .filter(|i| i % 10 != 1 && i % 10 != 6)
            .map(|i| {
                (
                    i,
                    match i % 10 {
                        0 => 1,
                        5 => 3,
                        _ => 0,
                    },
                )
            })
            .chain((n..n + added).map(|i| (i, 0))),
    );
    assert_eq!(merged, expected);
    assert!(merged.keys().eq(expected.keys()), "ours' order, then theirs' new keys");

    // The same through two stores and a delta.
    let (mut before, mut after) = (Store::new(), Store::new());
    let id = before.insert(&base);
    assert_eq!(after.insert(&target), id);
    let delta = timed("Store::diff", || StorePatch::diff(&before, &after));
    assert_eq!(delta.changed(), 1);
    timed("StorePatch::apply", || delta.apply(&mut before).unwrap());
    assert!(before == after);
}

#[test]
fn extend_and_insert_entries_of_50_000_entries() {
    extend_and_insert(50_000);
}

#[test]
#[ignore = "1M keys: run in release"]
fn extend_and_insert_entries_of_1_000_000_entries() {
    extend_and_insert(1_000_000);
}

#[allow(clippy::cast_precision_loss)]
fn extend_and_insert(n: usize) {
    // Every key twice: the second value wins, in the first one's place.
    let entries = || (0..2 * n).map(|j| (key(j % n), (j / n) as f32));
    let blob: Blob = timed("collect", || entries().collect());
    assert_eq!(blob.len(), n);
    assert!(blob.iter().enumerate().all(|(i, (k, v))| k == key(i) && v == Value::Float(1.0)));

    let mut store = Store::new();
    let names: Vec<String> = (0..n).map(|i| format!("k{i}")).collect();
    let id = timed("insert_entries", || {
        store.insert_entries(names.iter().map(|name| (name.as_str(), 2.0))).unwrap()
    });
    assert_eq!(store.get(id).unwrap().len(), n);
    assert_eq!(store.get(id).unwrap().get_float(names[n - 1].as_str()), Some(2.0));
    assert_eq!(store.key_names().len(), n);
}

// ---------------------------------------------------------------------------------------------
// Import claims past the scan, against a model

/// A member: a name (from a pool small enough that names sometimes repeat) and a number or an
/// object.
#[derive(Clone, Debug)]
enum Node {
    Number(u8),
    Object(Vec<(u16, Node)>),
}

/// Up to `width` members named from `0..pool`, nested objects of up to 4 members named from
/// `0..8`, `depth` levels down.
fn members(depth: u32, width: usize, pool: u16) -> BoxedStrategy<Vec<(u16, Node)>> {
    let leaf = any::<u8>().prop_map(Node::Number);
    let node = if depth == 0 {
        leaf.boxed()
    } else {
        prop_oneof![3 => leaf, 1 => members(depth - 1, 4, 8).prop_map(Node::Object)].boxed()
    };
    prop::collection::vec((0..pool, node), 0..width).boxed()
}

/// The JSON text (member names `n0`, `n1`, ...), and the first path (dotted) that is
/// claimed twice in document order (an object is claimed where it opens), if any; else the
/// values by path.
fn render(
    members: &[(u16, Node)],
    prefix: &str,
    out: &mut String,
    seen: &mut std::collections::HashSet<String>,
    values: &mut Vec<(String, f32)>,
    first_repeat: &mut Option<String>,
) {
    out.push('{');
    for (i, (name, node)) in members.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let path = if prefix.is_empty() { format!("n{name}") } else { format!("{prefix}.n{name}") };
        out.push_str(&format!("\"n{name}\":"));
        if !seen.insert(path.clone()) && first_repeat.is_none() {
            *first_repeat = Some(path.clone());
        }
        match node {
            Node::Number(n) => {
                out.push_str(&n.to_string());
                values.push((path, f32::from(*n)));
            }
            Node::Object(inner) => render(inner, &path, out, seen, values, first_repeat),
        }
    }
    out.push('}');
}

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Entities of up to 80 top-level members (past the 32 claims found by a scan), names
    /// sometimes repeating: the import refuses the first path claimed twice (as a value or an
    /// object), naming it; else it holds every value.
    #[test]
    fn an_import_finds_the_first_path_claimed_twice(doc in members(2, 80, 1_500)) {
        let (mut text, mut seen, mut values, mut repeat) =
            (String::new(), std::collections::HashSet::new(), Vec::new(), None);
        render(&doc, "", &mut text, &mut seen, &mut values, &mut repeat);
        match (Blob::import(&text, &ImportOptions::strict()), repeat) {
            (Ok(blob), None) => {
                prop_assert_eq!(blob.len(), values.len());
                for (path, value) in &values {
                    prop_assert_eq!(blob.get_float(path.as_str()), Some(*value));
                }
                let mut store = Store::new();
                store.import(&text, &ImportOptions::strict()).unwrap();
            }
            (Err(err), Some(path)) => {
                prop_assert_eq!(err.kind(), &datacomp::text::JsonErrorKind::DuplicatePath(path.clone()));
                prop_assert_eq!(err.path(), format!("/{}", path.replace('.', "/")));
            }
            (got, expected) => prop_assert!(false, "{text}: {got:?}, expected a repeat of {expected:?}"),
        }
    }
}

#[test]
fn past_the_scan_colliding_keys_are_refused_and_keys_of_other_depths_are_not() {
    use datacomp::text::JsonErrorKind;
    let filler: String = (0..40).map(|i| format!("\"f{i}\":{i},")).collect();
    // Two names with one key, the second after 40 other claims.
    let text = format!("{{{filler}\"sleep_haste_8\":1,\"x\":{{}},\"fury_sleep_272\":2}}");
    let err = Blob::import(&text, &ImportOptions::strict()).unwrap_err();
    assert_eq!(
        err.kind(),
        &JsonErrorKind::KeyCollision {
            first: "sleep_haste_8".into(),
            second: "fury_sleep_272".into(),
            key: Key::parse("sleep_haste_8"),
        }
    );
    // An object and a value of one key at different depths are different paths.
    assert_eq!(Key::parse("inventory.2241.count"), Key::parse("inventory.18937"));
    let text =
        format!("{{{filler}\"inventory\":{{\"2241\":{{\"count\":3}},\"18937\":{{\"count\":4}}}}}}");
    let blob = Blob::import(&text, &ImportOptions::strict()).unwrap();
    assert_eq!(blob.len(), 42);
    assert_eq!(blob.get_float("inventory.18937.count"), Some(4.0));
}
