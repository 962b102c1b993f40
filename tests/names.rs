//! A store's key names (a tree of segments) against a model, and the array shapes it records
//! for export.

use std::collections::BTreeMap;

use datacomp::{ExportOptions, ImportOptions, Key, KeyPath, Store, StorePatch};
use proptest::prelude::*;

/// A JSON Pointer of these segments.
fn pointer(segments: &[String]) -> String {
    segments.iter().map(|s| format!("/{}", s.replace('~', "~0").replace('/', "~1"))).collect()
}

#[derive(Clone, Debug)]
enum Op {
    /// `insert_key_name` of a dotted path of these segments (none holds a dot).
    Name(Vec<String>),
    /// A write of a key given as a JSON Pointer into entity `n % len`.
    Set(usize, Vec<String>),
    /// Removes entity `n % len`.
    Remove(usize),
    /// A document imported leniently: one entity holding these paths (an import that fails
    /// changes nothing).
    Import(Vec<Vec<String>>),
    Compact,
    SaveLoad,
    /// Merges the names of another store naming these paths.
    Merge(Vec<Vec<String>>),
}

fn segment() -> impl Strategy<Value = String> {
    // Few letters, so paths share prefixes; dots and slashes inside segments sometimes.
    prop_oneof![4 => "[ab]{1,2}", 1 => "[a./~]{0,2}"]
}

fn path() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(segment(), 1..4)
}

fn dotted_path() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec("[ab]{1,2}", 1..4)
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        dotted_path().prop_map(Op::Name),
        (any::<usize>(), path()).prop_map(|(n, p)| Op::Set(n, p)),
        any::<usize>().prop_map(Op::Remove),
        prop::collection::vec(path(), 1..4).prop_map(Op::Import),
        Just(Op::Compact),
        Just(Op::SaveLoad),
        prop::collection::vec(path(), 1..3).prop_map(Op::Merge),
    ]
}

/// A JSON object holding `1` at each path; `None` where two paths clash (one is a prefix of
/// another, or a path repeats), which an import refuses.
fn document(paths: &[Vec<String>]) -> Option<String> {
    let mut root = serde_json::Map::new();
    for path in paths {
        let mut object = &mut root;
        for (i, segment) in path.iter().enumerate() {
            if i + 1 == path.len() {
                if object.contains_key(segment) {
                    return None;
                }
                object.insert(segment.clone(), 1.into());
            } else {
                let member = object
                    .entry(segment.clone())
                    .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
                object = member.as_object_mut()?;
            }
        }
    }
    Some(serde_json::Value::Object(root).to_string())
}

/// The model: each key's segments, and the keys each entity holds.
#[derive(Default)]
struct Model {
    names: BTreeMap<Key, Vec<String>>,
    entities: Vec<(datacomp::Id, Vec<Key>)>,
}

impl Model {
    fn key(segments: &[String]) -> Key {
        let refs: Vec<&str> = segments.iter().map(String::as_str).collect();
        Key::path(&refs)
    }

    /// Whether `segments` may be named: its key is unnamed or named by it.
    fn fits(&self, segments: &[String]) -> bool {
        self.names.get(&Self::key(segments)).is_none_or(|known| known == segments)
    }

    fn name(&mut self, segments: &[String]) {
        self.names.entry(Self::key(segments)).or_insert_with(|| segments.to_vec());
    }
}

fn check(store: &Store, model: &Model) -> Result<(), TestCaseError> {
    let names: Vec<(Key, String)> = store.key_names().collect();
    let expected: Vec<(Key, String)> =
        model.names.iter().map(|(&key, segments)| (key, segments.join("."))).collect();
    prop_assert_eq!(names, expected);
    for (&key, segments) in &model.names {
        prop_assert_eq!(store.key_pointer(key), Some(pointer(segments)));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn the_name_tree_behaves_as_a_map_of_paths(ops in prop::collection::vec(op(), 1..24)) {
        let mut store = Store::new();
        let mut model = Model::default();
        for _ in 0..2 {
            let id = store.insert_empty();
            model.entities.push((id, Vec::new()));
        }
        for op in ops {
            match op {
                Op::Name(segments) => {
                    let result = store.insert_key_name(&segments.join("."));
                    prop_assert_eq!(result.is_ok(), model.fits(&segments));
                    if result.is_ok() {
                        model.name(&segments);
                    }
                }
                Op::Set(n, segments) => {
                    if model.entities.is_empty() {
                        continue;
                    }
                    let at = n % model.entities.len();
                    let text = pointer(&segments);
                    let path = KeyPath::pointer(&text).unwrap();
                    let result = store.get_mut(model.entities[at].0).unwrap().set(path, 1.0);
                    // A new key may not make a path both a value and an object: no path the
                    // entity holds is a prefix of this one, nor under it.
                    let key = Model::key(&segments);
                    let placed = model.entities[at].1.contains(&key)
                        || model.entities[at].1.iter().all(|held| {
                            let Some(held) = model.names.get(held) else { return true };
                            let n = held.len().min(segments.len());
                            held[..n] != segments[..n]
                        });
                    prop_assert_eq!(result.is_ok(), model.fits(&segments) && placed);
                    if result.is_ok() {
                        model.entities[at].1.push(Model::key(&segments));
                        model.name(&segments);
                    }
                }
                Op::Remove(n) => {
                    if model.entities.is_empty() {
                        continue;
                    }
                    let (id, _) = model.entities.remove(n % model.entities.len());
                    prop_assert!(store.remove(id));
                }
                Op::Import(paths) => {
                    let Some(text) = document(&paths) else { continue };
                    let before = store.clone();
                    let fits = paths.iter().all(|p| model.fits(p))
                        && {
                            let mut keys: Vec<Key> = paths.iter().map(|p| Model::key(p)).collect();
                            keys.sort_unstable();
                            keys.windows(2).all(|w| w[0] != w[1])
                        };
                    match store.import(&text, &ImportOptions::lenient()) {
                        Ok(imported) => {
                            prop_assert!(fits, "{}", text);
                            for path in &paths {
                                model.name(path);
                            }
                            let keys = paths.iter().map(|p| Model::key(p)).collect();
                            model.entities.push((imported.ids[0], keys));
                        }
                        Err(_) => {
                            prop_assert!(!fits, "{}", text);
                            prop_assert_eq!(&store, &before, "a failed import changes nothing");
                        }
                    }
                }
                Op::Compact => {
                    store.compact();
                    let used: Vec<Key> =
                        model.entities.iter().flat_map(|(_, keys)| keys.clone()).collect();
                    model.names.retain(|key, _| used.contains(key));
                }
                Op::SaveLoad => {
                    let loaded = Store::from_bytes(&store.to_bytes()).unwrap();
                    prop_assert_eq!(&loaded, &store);
                    prop_assert_eq!(loaded.to_bytes(), store.to_bytes());
                    store = loaded;
                }
                Op::Merge(paths) => {
                    let mut other = Store::new();
                    let mut named = Vec::new();
                    for path in &paths {
                        let text = pointer(path);
                        if other.check_key(KeyPath::pointer(&text).unwrap()).is_ok() {
                            let id = other.insert_empty();
                            other.get_mut(id).unwrap().set(KeyPath::pointer(&text).unwrap(), 1.0).unwrap();
                            named.push(path.clone());
                        }
                    }
                    let before = store.clone();
                    let fits = named.iter().all(|p| model.fits(p));
                    let result = store.merge_key_names(&other);
                    prop_assert_eq!(result.is_ok(), fits);
                    if fits {
                        for path in &named {
                            model.name(path);
                        }
                    } else {
                        prop_assert_eq!(&store, &before);
                    }
                }
            }
            check(&store, &model)?;
            prop_assert_eq!(&store.clone(), &store);
        }
    }
}

/// A monster sheet in the shapes of public datasets: arrays of objects, of strings, of
/// booleans, mixed, nested, and empty.
const MONSTER: &str = r#"{"name":"Owlbear","armor_class":[{"type":"natural","value":17}],"senses":["darkvision","keen smell"],"flags":[true,false],"mixed":[1,"two",[3,4],{"five":5}],"grid":[[1,2],[3]],"empty":[],"speed":{"walk":40}}"#;

/// [`MONSTER`] as export writes it: the very text, in the document's order, whole numbers
/// without a fraction.
const EXPORTED: &str = MONSTER;

/// `text` as a JSON value with every number as an `f64` (members compared whatever their
/// order).
fn as_exported(text: &str) -> serde_json::Value {
    fn floats(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Number(n) => *value = serde_json::Value::from(n.as_f64().unwrap()),
            serde_json::Value::Array(items) => items.iter_mut().for_each(floats),
            serde_json::Value::Object(members) => members.values_mut().for_each(floats),
            _ => {}
        }
    }
    let mut value: serde_json::Value = serde_json::from_str(text).unwrap();
    floats(&mut value);
    value
}

fn monster() -> (Store, datacomp::Id) {
    let mut store = Store::new();
    let id = store.import(MONSTER, &ImportOptions::lenient()).unwrap().ids[0];
    (store, id)
}

#[test]
fn arrays_of_every_shape_export_as_arrays_in_their_order() {
    let (store, id) = monster();
    assert_eq!(store.export(id, &ExportOptions::json()).unwrap(), EXPORTED);
    assert_eq!(as_exported(EXPORTED), as_exported(MONSTER));
    let pretty = store.export(id, &ExportOptions::json().pretty(true)).unwrap();
    assert!(pretty.contains("\"armor_class\": [\n    {\n      \"type\": \"natural\""), "{pretty}");
    assert!(pretty.contains("\"grid\": [\n    [1, 2],\n    [3]\n  ]"), "{pretty}");
    assert_eq!(as_exported(&pretty), as_exported(MONSTER));
    // The keys are the elements' indices, as before.
    let sheet = store.get(id).unwrap();
    assert_eq!(sheet.get_str("armor_class.0.type"), Some("natural"));
    assert_eq!(sheet.get_str("mixed.1"), Some("two"));
    assert_eq!(sheet.get_floats("mixed.2"), Some(&[3.0, 4.0][..]));
}

#[test]
fn array_shapes_survive_save_load_diff_and_merge() {
    let (store, id) = monster();
    let loaded = Store::from_bytes(&store.to_bytes()).unwrap();
    assert_eq!(loaded.export(id, &ExportOptions::json()).unwrap(), EXPORTED);

    // A delta whose target imported the arrays carries the marks with the names.
    let mut base = Store::new();
    let hero = base.import(r#"{"name": "Hero"}"#, &ImportOptions::strict()).unwrap().ids[0];
    let mut target = base.clone();
    let monster_id = target.import(MONSTER, &ImportOptions::lenient()).unwrap().ids[0];
    let delta = StorePatch::diff(&base, &target);
    let mut applied = base.clone();
    datacomp::StorePatch::from_bytes(&delta.to_bytes()).unwrap().apply(&mut applied).unwrap();
    assert_eq!(applied.export(monster_id, &ExportOptions::json()).unwrap(), EXPORTED);
    assert_eq!(applied.export(hero, &ExportOptions::json()).unwrap(), r#"{"name":"Hero"}"#);

    // Merged names carry the marks: the other store's entity exports with them.
    let mut merged = Store::new();
    merged.merge_key_names(&store).unwrap();
    let copy = merged.insert(&store.get(id).unwrap().to_blob());
    assert_eq!(merged.export(copy, &ExportOptions::json()).unwrap(), EXPORTED);
}

#[test]
fn edits_under_an_array_export_what_reads_back_the_same() {
    let (mut store, id) = monster();
    let mut sheet = store.get_mut(id).unwrap();
    // A new element at the next index: still an array.
    sheet.set("armor_class.1.type", "shield").unwrap();
    sheet.set("senses.2", "blindsight").unwrap();
    // A member that is not an index: the array becomes an object keyed by index.
    sheet.set("flags.note", "set by hand").unwrap();
    // A removed middle element leaves a hole: an object too.
    sheet.remove("mixed.1");
    let exported = store.export(id, &ExportOptions::json()).unwrap();
    let value: serde_json::Value = serde_json::from_str(&exported).unwrap();
    assert_eq!(value["armor_class"][1]["type"], "shield");
    assert_eq!(value["senses"], serde_json::json!(["darkvision", "keen smell", "blindsight"]));
    assert_eq!(value["flags"], serde_json::json!({"0": true, "1": false, "note": "set by hand"}));
    assert_eq!(value["mixed"], serde_json::json!({"0": 1, "2": [3, 4], "3": {"five": 5}}));
    // Whatever the shapes, the export reads back to the same entity.
    let mut copy = Store::new();
    let again = copy.import(&exported, &ImportOptions::lenient()).unwrap().ids[0];
    assert_eq!(copy.get(again).unwrap(), store.get(id).unwrap());
    // Elements set back in any order are an array again, written in index order.
    let mut sheet = store.get_mut(id).unwrap();
    sheet.remove("senses.0");
    sheet.set("senses.0", "truesight").unwrap();
    let value: serde_json::Value =
        serde_json::from_str(&store.export(id, &ExportOptions::json()).unwrap()).unwrap();
    assert_eq!(value["senses"], serde_json::json!(["truesight", "keen smell", "blindsight"]));
}

#[test]
fn a_lenient_array_left_with_numbers_only_exports_as_an_object() {
    // Its `null` is a member: the array is written back as it was read.
    let mut store = Store::new();
    let id = store.import(r#"{"a": [1, null, 3]}"#, &ImportOptions::lenient()).unwrap().ids[0];
    assert_eq!(store.export(id, &ExportOptions::json()).unwrap(), r#"{"a":[1,null,3]}"#);
    // With the null removed, what is left would read back as a float array, another key.
    store.get_mut(id).unwrap().remove("a.1");
    let exported = store.export(id, &ExportOptions::json()).unwrap();
    assert_eq!(exported, r#"{"a":{"0":1,"2":3}}"#);
    let mut copy = Store::new();
    let again = copy.import(&exported, &ImportOptions::strict()).unwrap().ids[0];
    assert_eq!(copy.get(again).unwrap(), store.get(id).unwrap());
}

#[test]
fn a_key_as_deep_as_a_name_may_be_exports_saves_and_imports_back() {
    let limit = datacomp::key::MAX_PATH_SEGMENTS;
    let path = vec!["a"; limit].join(".");
    let mut store = Store::new();
    let id = store.insert_empty();
    store.get_mut(id).unwrap().set(path.as_str(), 1.0).unwrap();
    let exported = store.export(id, &ExportOptions::json()).unwrap();
    // `{"a":` a level, the value, `}` a level.
    assert_eq!(exported.len(), limit * 5 + 1 + limit);
    let pretty = store.export(id, &ExportOptions::json().pretty(true)).unwrap();
    let mut copy = Store::new();
    let again = copy.import(&pretty, &ImportOptions::strict()).unwrap().ids[0];
    assert_eq!(copy.get(again).unwrap(), store.get(id).unwrap());
    let loaded = Store::from_bytes(&store.to_bytes()).unwrap();
    assert_eq!(loaded.key_name(Key::parse(&path)).as_deref(), Some(path.as_str()));
    // One segment more is refused where a name is recorded.
    let deeper = format!("{path}.a");
    let err = store.get_mut(id).unwrap().set(deeper.as_str(), 1.0).unwrap_err();
    assert!(matches!(err, datacomp::Error::Key(datacomp::KeyError::PathTooDeep { .. })), "{err}");
}

/// Key hash 3: empty member names are legal JSON and hash distinctly, so a document of them
/// imports (key hash 2 refused `[{"": 1}, {"": {"": 2}}]`: `""` and `"."` were one key), and a
/// fresh save of it loads back with each name.
#[test]
fn empty_member_names_are_distinct_keys_through_a_save() {
    let mut store = Store::new();
    let text = r#"[{"": 1}, {"": {"": 2}}, {"a": {"": {"": 3}}, "a..": 4}]"#;
    let ids = store.import(text, &datacomp::ImportOptions::strict()).unwrap().ids;
    let loaded = Store::from_bytes(&store.to_bytes()).unwrap();
    assert_eq!(loaded, store);
    assert_eq!(loaded.get(ids[0]).unwrap().get_float(Key::parse("")), Some(1.0));
    assert_eq!(loaded.get(ids[1]).unwrap().get_float(Key::parse(".")), Some(2.0));
    let third = loaded.get(ids[2]).unwrap();
    assert_eq!(third.get_float(Key::parse("a..")), Some(3.0));
    assert_eq!(third.get_float(Key::path(&["a.."])), Some(4.0));
    // Messages show an empty segment: the empty name as its pointer, others dotted.
    assert_eq!(loaded.key_label(Key::parse("")), "/");
    assert_eq!(loaded.key_label(Key::parse(".")), ".");
    assert_eq!(loaded.key_label(Key::path(&["a.."])), "/a..");
}
