//! Saves written by earlier builds, committed in `fixtures/`: if a change to the code cannot read
//! one, or reads it differently, old saves would break.
//!
//! - `world_v1.dcmp`: format 1.0, key hash 1, keys set without names (so it loads with the
//!   paths of its keys, rehashed to key hash 2).
//! - `world_v2.dcmp`: format 1.0, key hash 2, with key names (a flat list, section kind 6).
//! - `delta_v2.dcmp`: a delta of format 1.0 from `world_v2.dcmp` (names as a flat list, its
//!   base's crc over them in that form).
//! - `world_v3.dcmp`, `delta_v3.dcmp`: format 1.1, key names as a tree of segments (section
//!   kind 12), with imported arrays.
//!
//! Each newest file is written by an ignored test (`cargo test --test golden -- --ignored
//! write_golden`); regenerate only for a new format, as new files, and add them to the tables
//! [`SAVES`] and [`DELTAS`].

use datacomp::{Blob, Id, ImportOptions, Key, LoadError, LoadOptions, Store, StoreView, save};

const GOLDEN_V1: &[u8] = include_bytes!("../fixtures/world_v1.dcmp");
const GOLDEN_V2: &[u8] = include_bytes!("../fixtures/world_v2.dcmp");

/// The paths of every key in `world_v1.dcmp`.
const V1_KEYS: [&str; 8] = [
    "name",
    "stats.health",
    "stats.mana",
    "status_effects.drunk",
    "status_effects.delirious",
    "position",
    "color",
    "bio",
];

fn id(text: &str) -> Id {
    text.parse().unwrap()
}

/// `bytes` copied into 8-byte aligned memory (include_bytes! promises no alignment).
fn aligned(bytes: &[u8]) -> Vec<u64> {
    bytes.chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect()
}

#[test]
fn the_v1_save_loads_with_its_known_keys_and_every_value_reads_back_by_name() {
    let info = save::describe(GOLDEN_V1).unwrap();
    assert_eq!((info.major, info.minor, info.key_hash), (1, 0, save::KEY_HASH_FX32_WORDS));

    let store = Store::from_bytes_with(GOLDEN_V1, &LoadOptions::new().known_keys(V1_KEYS))
        .expect("format 1.0 saves of key hash 1 load with their keys' paths");
    assert_eq!(store.len(), 2);
    let classic = store.get(id("0v0t1")).unwrap();
    assert_eq!(classic.get_str("name"), Some("The One"));
    assert_eq!(classic.get_float("stats.health"), Some(100.0));
    assert_eq!(classic.get_float("stats.mana"), Some(200.0));
    assert_eq!(classic.get_bool("status_effects.drunk"), Some(true));
    assert_eq!(classic.get_bool("status_effects.delirious"), Some(true));
    assert_eq!(classic.len(), 5);
    let wizard = store.get(id("1v0t1")).unwrap();
    assert_eq!(wizard.get_str("name"), Some("Wizard"));
    assert_eq!(wizard.get_floats("position"), Some(&[12.5, 0.0, -3.25][..]));
    assert_eq!(wizard.get_floats("color"), Some(&[0.0, 0.5, 0.5, 0.7][..]));
    assert_eq!(wizard.get_str("bio"), Some("Keeper of offsets, breaker of pointers."));
    assert_eq!(wizard.len(), 4);
    assert!(store.get(id("2v0t1")).is_none(), "the removed goblin stays stale");
    assert!(store.stats().garbage_bytes > 0, "the wizard's old span is still garbage");

    // The paths it used are now its names: its next save upgrades by itself.
    let mut names: Vec<String> = store.key_names().map(|(_, name)| name).collect();
    names.sort_unstable();
    let mut expected = V1_KEYS.map(String::from);
    expected.sort_unstable();
    assert_eq!(names, expected);
    let again = Store::from_bytes(&store.to_bytes()).unwrap();
    assert_eq!(again, store);
    assert_eq!(save::describe(&store.to_bytes()).unwrap().key_hash, save::KEY_HASH_FX32_BYTES);
}

#[test]
fn the_v1_save_without_its_keys_names_every_unexplained_key() {
    let err = Store::from_bytes(GOLDEN_V1).unwrap_err();
    let raw = |r: u32| Key::from_raw(r);
    let (classic, wizard) = (id("0v0t1"), id("1v0t1"));
    // In key order (of key hash 1), each with the first entity that holds it.
    let keys = vec![
        (classic, raw(0x0114_0106)), // name
        (classic, raw(0x093c_6f30)), // status_effects.drunk
        (classic, raw(0x1321_b8fc)), // status_effects.delirious
        (classic, raw(0x2dd3_91b7)), // stats.health
        (wizard, raw(0x725a_187c)),  // color
        (wizard, raw(0xcada_97f2)),  // bio
        (wizard, raw(0xd053_329f)),  // position
        (classic, raw(0xf78b_ecf6)), // stats.mana
    ];
    assert_eq!(err, LoadError::UnexplainedKeys { keys });
    assert_eq!(
        err.to_string(),
        "save uses key hash 1, and 8 keys have no name in it to rehash them from: #01140106 \
         (entity 0v0t1), #093c6f30 (entity 0v0t1), #1321b8fc (entity 0v0t1), #2dd391b7 (entity \
         0v0t1), #725a187c (entity 1v0t1), #cada97f2 (entity 1v0t1), #d053329f (entity 1v0t1), \
         #f78becf6 (entity 0v0t1); give their paths as known keys"
    );

    // All but one path: only that key is unexplained.
    let options = LoadOptions::new().known_keys(V1_KEYS.iter().copied().filter(|&k| k != "bio"));
    let err = Store::from_bytes_with(GOLDEN_V1, &options).unwrap_err();
    assert_eq!(err, LoadError::UnexplainedKeys { keys: vec![(wizard, raw(0xcada_97f2))] });

    // Paths the save does not use cost nothing and are not recorded.
    let options = LoadOptions::new().known_keys(V1_KEYS).known_keys(["unused", "/a.b/c"]);
    let store = Store::from_bytes_with(GOLDEN_V1, &options).unwrap();
    assert_eq!(store.key_names().len(), V1_KEYS.len());

    // A view reads in place and cannot rehash.
    let words = aligned(GOLDEN_V1);
    let view = StoreView::new(zerocopy::IntoBytes::as_bytes(words.as_slice()));
    assert_eq!(view.unwrap_err(), LoadError::KeyHashView { key_hash: 1 });
}

/// The world `world_v2.dcmp` holds: an imported sheet (names recorded, one member name with a
/// dot), a sheet built by library calls with keys as text (names recorded) and one key given
/// as a raw `Key` (no name), a removed entity (its handle stale) whose slot was reused, and a
/// sheet that grew (so the arena holds garbage).
fn golden_world_v2() -> Store {
    let mut store = Store::new();
    let text = r#"{"name": "The One", "stats": {"health": 100, "mana": 200},
                   "status_effects": {"drunk": true}, "a.b": {"c": 1}, "a": {"b": {"c": 2}}}"#;
    store.import_json(text, &ImportOptions::strict()).unwrap();
    let wizard = store.insert_empty();
    let mut sheet = store.get_mut(wizard).unwrap();
    sheet.set("name", "Wizard");
    sheet.set("transform.position", [12.5, 0.0, -3.25]);
    sheet.set(Key::from_raw(0xdead_beef), true);
    let goblin = store.insert(&[("name", "Goblin")].into_iter().collect::<Blob>());
    store.remove(goblin);
    store.insert_entries([("name", "Orc"), ("kind", "monster")]);
    store.get_mut(wizard).unwrap().set("bio", "Keeper of offsets, breaker of pointers.");
    store
}

#[test]
fn the_v2_save_loads_with_its_contents_and_names() {
    let info = save::describe(GOLDEN_V2).unwrap();
    assert_eq!((info.major, info.minor, info.key_hash), (1, 0, save::KEY_HASH_FX32_BYTES));
    let store = Store::from_bytes(GOLDEN_V2).expect("format 1.0 saves of key hash 2 load");
    assert_eq!(store.len(), 3);

    let classic = store.get(id("0v0t1")).unwrap();
    assert_eq!(classic.get_str("name"), Some("The One"));
    assert_eq!(classic.get_float("stats.health"), Some(100.0));
    assert_eq!(classic.get_float("stats.mana"), Some(200.0));
    assert_eq!(classic.get_bool("status_effects.drunk"), Some(true));
    assert_eq!(classic.get_float(Key::path(&["a.b", "c"])), Some(1.0));
    assert_eq!(classic.get_float("a.b.c"), Some(2.0));
    assert_eq!(classic.len(), 6);
    let wizard = store.get(id("1v0t1")).unwrap();
    assert_eq!(wizard.get_str("name"), Some("Wizard"));
    assert_eq!(wizard.get_floats("transform.position"), Some(&[12.5, 0.0, -3.25][..]));
    assert_eq!(wizard.get_bool(Key::from_raw(0xdead_beef)), Some(true));
    assert_eq!(wizard.get_str("bio"), Some("Keeper of offsets, breaker of pointers."));
    assert_eq!(wizard.len(), 4);
    assert!(store.get(id("2v0t1")).is_none(), "the removed goblin stays stale");
    let orc = store.get(id("2v1t1")).unwrap();
    assert_eq!((orc.get_str("name"), orc.get_str("kind")), (Some("Orc"), Some("monster")));
    assert!(store.stats().garbage_bytes > 0, "the wizard's old span is still garbage");

    // Names: each shown dotted only where that reads back as the key.
    let labels: Vec<String> = classic.keys().map(|k| store.key_label(k).into_owned()).collect();
    assert_eq!(
        labels,
        ["name", "stats.health", "stats.mana", "status_effects.drunk", "/a.b/c", "a.b.c"]
    );
    assert_eq!(store.key_label(Key::from_raw(0xdead_beef)), "#deadbeef");
    assert_eq!(
        store.export_json(id("1v0t1")).unwrap(),
        r##"{"name":"Wizard","transform":{"position":[12.5,0.0,-3.25]},"#deadbeef":true,"bio":"Keeper of offsets, breaker of pointers."}"##
    );
    assert_eq!(store.key_names().len(), 9);

    assert_eq!(store, golden_world_v2());

    let words = aligned(GOLDEN_V2);
    let view = StoreView::new(zerocopy::IntoBytes::as_bytes(words.as_slice())).unwrap();
    assert_eq!(view.get(id("1v0t1")).unwrap(), wizard.to_blob());
    assert_eq!(view.len(), 3);
}

const GOLDEN_DELTA_V2: &[u8] = include_bytes!("../fixtures/delta_v2.dcmp");

/// The target of `delta_v2.dcmp` (format 1.0, key hash 2, with its key names: kind 6), made
/// from [`golden_world_v2`]: a changed entity with a new named key, an inserted one, a removed
/// one.
fn golden_delta_v2_target() -> Store {
    let mut store = golden_world_v2();
    store.get_mut(id("0v0t1")).unwrap().set("stats.luck", 7);
    store.get_mut(id("0v0t1")).unwrap().remove("stats.mana");
    store.remove(id("2v1t1"));
    let text = r#"{"name": "Imp", "tags": {"0": "small", "1": "red"}, "x.y": {"z": true}}"#;
    store.import_json(text, &ImportOptions::lenient()).unwrap();
    store
}

#[test]
fn the_v2_delta_applies_to_its_base_with_its_names() {
    let info = save::describe(GOLDEN_DELTA_V2).unwrap();
    assert_eq!((info.kind, info.major, info.minor), ("delta", 1, 0));
    let delta = datacomp::StorePatch::from_bytes(GOLDEN_DELTA_V2).unwrap();
    let mut world = Store::from_bytes(GOLDEN_V2).unwrap();
    delta.apply(&mut world).expect("a format 1.0 delta applies to its base");
    assert_eq!(world, golden_delta_v2_target());
    assert_eq!(world.len(), 3);
    let classic = world.get(id("0v0t1")).unwrap();
    assert_eq!(classic.get_float("stats.luck"), Some(7.0));
    assert_eq!(classic.get_float("stats.mana"), None);
    assert!(world.get(id("2v1t1")).is_none());
    assert_eq!(world.key_label(Key::path(&["x.y", "z"])), "/x.y/z");
    assert_eq!(world.key_label(Key::parse("tags.1")), "tags.1");
    assert_eq!(world.key_names().len(), 13);
}

/// The world `world_v3.dcmp` holds: [`golden_world_v2`]'s, and a sheet imported leniently
/// with the shapes designers' JSON has (arrays of objects, of strings, mixed, nested, empty)
/// under a long shared prefix.
fn golden_world_v3() -> Store {
    let mut store = golden_world_v2();
    let prefix = "a_long_shared_prefix_".repeat(4);
    let text = format!(
        r#"{{"name": "Monster", "armor_class": [{{"type": "natural", "value": 17}}],
            "{prefix}": {{"senses": ["darkvision", "tremorsense"], "mixed": [1, "two", true],
            "grid": [[1, 2], [3]], "empty": []}}}}"#
    );
    store.import_json(&text, &ImportOptions::lenient()).unwrap();
    store
}

/// The target of `delta_v3.dcmp`, made from [`golden_world_v3`]: a new name under an array.
fn golden_delta_v3_target() -> Store {
    let mut store = golden_world_v3();
    let monster = id("3v0t1");
    store.get_mut(monster).unwrap().set("armor_class.0.note", "scaly");
    store.get_mut(monster).unwrap().remove("name");
    store
}

/// Every golden save of key hash 2: its bytes, its format's minor version, the world it
/// holds. The last is this build's format: it writes those very bytes.
/// Makes the world a golden file holds.
type World = fn() -> Store;

fn saves() -> [(&'static [u8], u16, World); 2] {
    [(GOLDEN_V2, 0, golden_world_v2), (GOLDEN_V3, 1, golden_world_v3)]
}

/// Every golden delta: its bytes, its format's minor version, its base's world and its
/// target's. The last is this build's format.
fn deltas() -> [(&'static [u8], u16, World, World); 2] {
    [
        (GOLDEN_DELTA_V2, 0, golden_world_v2, golden_delta_v2_target),
        (GOLDEN_DELTA_V3, 1, golden_world_v3, golden_delta_v3_target),
    ]
}

const GOLDEN_V3: &[u8] = include_bytes!("../fixtures/world_v3.dcmp");
const GOLDEN_DELTA_V3: &[u8] = include_bytes!("../fixtures/delta_v3.dcmp");
const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/");

#[test]
fn every_golden_save_loads_as_its_world_and_the_newest_writes_back_byte_for_byte() {
    let saves = saves();
    for (i, &(bytes, minor, world)) in saves.iter().enumerate() {
        let info = save::describe(bytes).unwrap();
        assert_eq!((info.major, info.minor, info.key_hash), (1, minor, save::KEY_HASH_FX32_BYTES));
        let store = Store::from_bytes(bytes).unwrap();
        assert_eq!(store, world(), "format 1.{minor}");
        assert_eq!(store.export_all_json(), world().export_all_json(), "format 1.{minor}");
        // Saved again in this build's format, it loads the same.
        assert_eq!(Store::from_bytes(&store.to_bytes()).unwrap(), store, "format 1.{minor}");
        let words = aligned(bytes);
        let view = StoreView::new(zerocopy::IntoBytes::as_bytes(words.as_slice())).unwrap();
        assert_eq!(view.len(), store.len());
        if i + 1 == saves.len() {
            assert_eq!(store.to_bytes(), bytes, "a loaded golden save writes back byte for byte");
            assert_eq!(world().to_bytes(), bytes, "this build writes the golden bytes");
            assert_eq!(minor, save::FORMAT_MINOR);
        }
    }
}

#[test]
fn every_golden_delta_applies_to_its_base_and_reads_back_the_same() {
    let deltas = deltas();
    for (i, &(bytes, minor, base, target)) in deltas.iter().enumerate() {
        let info = save::describe(bytes).unwrap();
        assert_eq!((info.kind, info.major, info.minor), ("delta", 1, minor));
        let delta = datacomp::StorePatch::from_bytes(bytes).unwrap();
        let mut world = base();
        delta.apply(&mut world).unwrap();
        assert_eq!(world, target(), "format 1.{minor}");
        // Written again, a delta keeps its form: its base's crc was made with it.
        assert_eq!(delta.to_bytes(), bytes, "format 1.{minor}");
        if i + 1 == deltas.len() {
            assert_eq!(Store::diff(&base(), &target()).to_bytes(), bytes);
        }
    }
}

#[test]
fn the_v3_world_exports_its_arrays_as_arrays() {
    let store = Store::from_bytes(GOLDEN_V3).unwrap();
    let prefix = "a_long_shared_prefix_".repeat(4);
    assert_eq!(
        store.export_json(id("3v0t1")).unwrap(),
        format!(
            r#"{{"name":"Monster","armor_class":[{{"type":"natural","value":17.0}}],"{prefix}":{{"senses":["darkvision","tremorsense"],"mixed":[1.0,"two",true],"grid":[[1.0,2.0],[3.0]],"empty":[]}}}}"#
        )
    );
}

#[test]
#[ignore = "writes the newest golden files: only for a new format"]
fn write_golden() {
    golden_world_v3().save(format!("{DIR}world_v3.dcmp")).unwrap();
    Store::diff(&golden_world_v3(), &golden_delta_v3_target())
        .save(format!("{DIR}delta_v3.dcmp"))
        .unwrap();
}
