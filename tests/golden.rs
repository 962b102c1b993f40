//! Saves written by earlier builds, committed in `fixtures/`: if a change to the code cannot read
//! one, or reads it differently, old saves would break.
//!
//! - `world_v1.dcmp`: format 1.0, key hash 1, keys set without names (so it loads with the
//!   paths of its keys, rehashed to key hash 2).
//! - `world_v2.dcmp`: format 1.0, key hash 2, with key names. Written by [`write_golden_v2`]:
//!   regenerate only for a new format or key hash, as a new file:
//!   `cargo test --test golden -- --ignored write_golden_v2`.
//! - `delta_v2.delta`: format 1.0, a delta from `world_v2.dcmp` (written by
//!   [`write_golden_delta_v2`]).
//! - `world_data0.dcmp`: format 1.0, key hash 2, data version 0 (before saves had one): the
//!   sheets the README's migrations (`fixtures/migrations_v3.json`) take to data version 3
//!   (written by [`write_golden_data0`]).
//! - `world_data3.dcmp`: format 1.1, data version 3: `world_data0.dcmp` migrated (written by
//!   [`write_golden_data3`]).
//! - `world_v3.dcmp`: format 1.1 with the arena's chunk crcs: `world_v2`'s world and 200 more
//!   sheets, so that the arena spans two 64 KiB chunks (written by [`write_golden_v3`]).
//! - `world_v4.dcmp`, `delta_v4.dcmp`: format 1.2, key names as a tree of segments (section
//!   kind 13), with imported arrays (written by [`write_golden_v4`]). Every older file holds
//!   its names as a flat list (kind 6).
//! - `world_v5.dcmp`, `world_v5_identity.dcmp`, `delta_v5.dcmp`: format 1.3, the index as end
//!   offsets (section kind 14) with empty entities of zero bytes: `world_v5.dcmp` is
//!   `world_v4.dcmp`'s world (removals, garbage) with two empty entities, its handle map in
//!   full; `world_v5_identity.dcmp` a fresh import (an identity handle map: no `index meta`
//!   or `index slots` bytes); the delta is `delta_v4.dcmp`'s change on `world_v5.dcmp`
//!   (written by [`write_golden_v5`]). Every older save's index holds spans (kind 2).
//! - `world_v6.dcmp`, `delta_v6.dcmp`: format 1.4, key hash 3: nulls (type tag 5), a lineage
//!   (section kind 15) and keys with an empty segment (`""`, `sprites.""`), with a removed
//!   entity; the delta nulls a value, fills a null, sets an empty-segment key and inserts an
//!   entity (written by [`write_golden_v6`]). Every older save has no lineage, no null and is
//!   of key hash 2 or 1.
//! - `world_v7.dcmp`, `delta_v7.dcmp`: format 1.5, prototype links (section kind 16) and
//!   tombstones (type tag 6): an abstract base, a prototype reading through it, an instance of
//!   that one (a chain of 2) with a tombstone, a plain entity and a removed one; the delta
//!   relinks the instance to the base, links the plain entity, unlinks nothing else, adds a
//!   tombstone and inserts an instance (written by [`write_golden_v7`]). Every older save has
//!   no link and no tombstone.

use datacomp::format::FileError;
use datacomp::format::StoreError;
use datacomp::{
    Blob, ExportOptions, Id, ImportOptions, Key, LoadError, LoadOptions, Migrations, Store,
    StorePatch, StoreView, Value, format,
};

const GOLDEN_V1: &[u8] = include_bytes!("../fixtures/world_v1.dcmp");
const GOLDEN_V2: &[u8] = include_bytes!("../fixtures/world_v2.dcmp");
const GOLDEN_DELTA_V2: &[u8] = include_bytes!("../fixtures/delta_v2.delta");
const PATH_DELTA_V2: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/delta_v2.delta");
const GOLDEN_DATA0: &[u8] = include_bytes!("../fixtures/world_data0.dcmp");
const PATH_DATA0: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/world_data0.dcmp");
const GOLDEN_DATA3: &[u8] = include_bytes!("../fixtures/world_data3.dcmp");
const PATH_DATA3: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/world_data3.dcmp");
/// Format 1.1 with the arena's chunk crcs: `world_v2`'s world and 200 more sheets, so that the
/// arena spans two 64 KiB chunks.
const GOLDEN_V3: &[u8] = include_bytes!("../fixtures/world_v3.dcmp");
const PATH_V3: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/world_v3.dcmp");
const MIGRATIONS_V3: &str = include_str!("../fixtures/migrations_v3.json");

/// A file in `fixtures/` written by an earlier build, and what its header says.
struct Golden {
    name: &'static str,
    bytes: &'static [u8],
    kind: &'static str,
    minor: u16,
    key_hash: u16,
    data_version: u32,
}

/// Every golden file. A format change adds a row (and the file of the format it replaces);
/// no row is ever removed.
const GOLDEN: [Golden; 15] = [
    Golden {
        name: "world_v1.dcmp",
        bytes: GOLDEN_V1,
        kind: "save",
        minor: 0,
        key_hash: 1,
        data_version: 0,
    },
    Golden {
        name: "world_v2.dcmp",
        bytes: GOLDEN_V2,
        kind: "save",
        minor: 0,
        key_hash: 2,
        data_version: 0,
    },
    Golden {
        name: "delta_v2.delta",
        bytes: GOLDEN_DELTA_V2,
        kind: "delta",
        minor: 0,
        key_hash: 2,
        data_version: 0,
    },
    Golden {
        name: "world_data0.dcmp",
        bytes: GOLDEN_DATA0,
        kind: "save",
        minor: 0,
        key_hash: 2,
        data_version: 0,
    },
    Golden {
        name: "world_data3.dcmp",
        bytes: GOLDEN_DATA3,
        kind: "save",
        minor: 1,
        key_hash: 2,
        data_version: 3,
    },
    Golden {
        name: "world_v3.dcmp",
        bytes: GOLDEN_V3,
        kind: "save",
        minor: 1,
        key_hash: 2,
        data_version: 0,
    },
    Golden {
        name: "world_v4.dcmp",
        bytes: GOLDEN_V4,
        kind: "save",
        minor: 2,
        key_hash: 2,
        data_version: 0,
    },
    Golden {
        name: "delta_v4.dcmp",
        bytes: GOLDEN_DELTA_V4,
        kind: "delta",
        minor: 2,
        key_hash: 2,
        data_version: 0,
    },
    Golden {
        name: "world_v5.dcmp",
        bytes: GOLDEN_V5,
        kind: "save",
        minor: 3,
        key_hash: 2,
        data_version: 0,
    },
    Golden {
        name: "world_v5_identity.dcmp",
        bytes: GOLDEN_V5_IDENTITY,
        kind: "save",
        minor: 3,
        key_hash: 2,
        data_version: 2,
    },
    Golden {
        name: "delta_v5.dcmp",
        bytes: GOLDEN_DELTA_V5,
        kind: "delta",
        minor: 3,
        key_hash: 2,
        data_version: 0,
    },
    Golden {
        name: "world_v6.dcmp",
        bytes: GOLDEN_V6,
        kind: "save",
        minor: 4,
        key_hash: 3,
        data_version: 4,
    },
    Golden {
        name: "delta_v6.dcmp",
        bytes: GOLDEN_DELTA_V6,
        kind: "delta",
        minor: 4,
        key_hash: 3,
        data_version: 4,
    },
    Golden {
        name: "world_v7.dcmp",
        bytes: GOLDEN_V7,
        kind: "save",
        minor: 5,
        key_hash: 3,
        data_version: 5,
    },
    Golden {
        name: "delta_v7.dcmp",
        bytes: GOLDEN_DELTA_V7,
        kind: "delta",
        minor: 5,
        key_hash: 3,
        data_version: 5,
    },
];

#[test]
fn every_golden_file_keeps_its_header_and_passes_every_check() {
    for golden in &GOLDEN {
        let info =
            format::describe(golden.bytes).unwrap_or_else(|e| panic!("{}: {e}", golden.name));
        assert_eq!(
            (info.kind.as_str(), info.major, info.minor, info.key_hash, info.data_version),
            (golden.kind, 1, golden.minor, golden.key_hash, golden.data_version),
            "{}",
            golden.name
        );
        let data_version = match golden.kind {
            "delta" => StorePatch::from_bytes(golden.bytes).map(|d| d.data_version()),
            _ => LoadOptions::new()
                .known_keys(V1_KEYS)
                .load_bytes(golden.bytes)
                .map(|s| s.data_version()),
        };
        let data_version = data_version.unwrap_or_else(|e| panic!("{}: {e}", golden.name));
        assert_eq!(data_version, golden.data_version, "{}", golden.name);
    }
}

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
    let info = format::describe(GOLDEN_V1).unwrap();
    assert_eq!((info.major, info.minor, info.key_hash), (1, 0, format::KEY_HASH_FX32_WORDS));

    let store = LoadOptions::new()
        .known_keys(V1_KEYS)
        .load_bytes(GOLDEN_V1)
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
    let mut expected = V1_KEYS;
    expected.sort_unstable();
    assert_eq!(names, expected);
    let again = Store::from_bytes(&store.to_bytes()).unwrap();
    assert_eq!(again, store);
    assert_eq!(format::describe(&store.to_bytes()).unwrap().key_hash, format::KEY_HASH_FX32_EMPTY);
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
    assert_eq!(err, LoadError::Store(StoreError::UnexplainedKeys { keys }));
    assert_eq!(
        err.to_string(),
        "save uses key hash 1, and 8 keys have no name in it to rehash them from: #01140106 \
         (entity 0v0t1), #093c6f30 (entity 0v0t1), #1321b8fc (entity 0v0t1), #2dd391b7 (entity \
         0v0t1), #725a187c (entity 1v0t1), #cada97f2 (entity 1v0t1), #d053329f (entity 1v0t1), \
         #f78becf6 (entity 0v0t1); give their paths as known keys"
    );

    // All but one path: only that key is unexplained.
    let options = LoadOptions::new().known_keys(V1_KEYS.iter().copied().filter(|&k| k != "bio"));
    let err = options.load_bytes(GOLDEN_V1).unwrap_err();
    assert_eq!(
        err,
        LoadError::Store(StoreError::UnexplainedKeys { keys: vec![(wizard, raw(0xcada_97f2))] })
    );

    // Paths the save does not use cost nothing and are not recorded.
    let options = LoadOptions::new().known_keys(V1_KEYS).known_keys(["unused", "/a.b/c"]);
    let store = options.load_bytes(GOLDEN_V1).unwrap();
    assert_eq!(store.key_names().len(), V1_KEYS.len());

    // A view reads in place and cannot rehash.
    let words = aligned(GOLDEN_V1);
    let view = StoreView::new(zerocopy::IntoBytes::as_bytes(words.as_slice()));
    assert_eq!(view.unwrap_err(), LoadError::Store(StoreError::KeyHashView { key_hash: 1 }));
}

/// The world `world_v2.dcmp` holds: an imported sheet (names recorded, one member name with a
/// dot), a sheet built by library calls with keys as text (names recorded) and one key given
/// as a raw `Key` (no name), a removed entity (its handle stale) whose slot was reused, and a
/// sheet that grew (so the arena holds garbage).
fn golden_world_v2() -> Store {
    let mut store = Store::new();
    let text = r#"{"name": "The One", "stats": {"health": 100, "mana": 200},
                   "status_effects": {"drunk": true}, "a.b": {"c": 1}, "a": {"b": {"c": 2}}}"#;
    store.import(text, &ImportOptions::strict()).unwrap();
    let wizard = store.insert_empty();
    let mut sheet = store.get_mut(wizard).unwrap();
    sheet.set("name", "Wizard").unwrap();
    sheet.set("transform.position", [12.5, 0.0, -3.25]).unwrap();
    sheet.set(Key::from_raw(0xdead_beef), true).unwrap();
    let goblin = store.insert(&[("name", "Goblin")].into_iter().collect::<Blob>());
    store.remove(goblin);
    store.insert_entries([("name", "Orc"), ("kind", "monster")]).unwrap();
    store.get_mut(wizard).unwrap().set("bio", "Keeper of offsets, breaker of pointers.").unwrap();
    store
}

#[test]
fn the_v2_save_loads_with_its_contents_and_names() {
    let info = format::describe(GOLDEN_V2).unwrap();
    assert_eq!((info.major, info.minor, info.key_hash), (1, 0, format::KEY_HASH_FX32_BYTES));
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
        store.export(id("1v0t1"), &ExportOptions::json()).unwrap(),
        r##"{"name":"Wizard","transform":{"position":[12.5,0,-3.25]},"#deadbeef":true,"bio":"Keeper of offsets, breaker of pointers."}"##
    );
    assert_eq!(store.key_names().len(), 9);

    // Its names were a flat list; this build writes them as a tree (and the arena's chunk
    // crcs), and reads that back.
    assert_eq!(store, golden_world_v2());
    assert_eq!(Store::from_bytes(&store.to_bytes()).unwrap(), store);

    let words = aligned(GOLDEN_V2);
    let view = StoreView::new(zerocopy::IntoBytes::as_bytes(words.as_slice())).unwrap();
    assert_eq!(view.get(id("1v0t1")).unwrap(), wizard.to_blob());
    assert_eq!(view.len(), 3);
}

/// The world `world_v3.dcmp` holds: `world_v2`'s, and 200 sheets of about 400 bytes with
/// strings and float arrays, so that the arena spans two chunks.
fn golden_world_v3() -> Store {
    let mut store = golden_world_v2();
    for i in 0..200_u16 {
        let mut sheet = Blob::new();
        sheet.set("name", format!("Goblin {i}").as_str()).unwrap();
        sheet.set("stats.health", f32::from(i)).unwrap();
        sheet.set("position", [f32::from(i), 0.5, -1.0]).unwrap();
        sheet.set("bio", "g".repeat(300 + usize::from(i % 7)).as_str()).unwrap();
        store.insert(&sheet);
    }
    store
}

#[test]
fn the_v3_save_loads_with_its_contents_and_chunk_crcs() {
    let info = format::describe(GOLDEN_V3).unwrap();
    let arena = info.sections.iter().find(|s| s.name == "arena").unwrap();
    let crcs = info.sections.iter().find(|s| s.name == "arena crcs").unwrap();
    assert!(arena.len > 64 << 10, "the arena spans two chunks");
    assert_eq!(crcs.len, 4 + 4 * arena.len.div_ceil(64 << 10));
    let arena_bytes = &GOLDEN_V3[arena.offset as usize..(arena.offset + arena.len) as usize];
    assert_eq!(arena.crc, crc32fast::hash(arena_bytes), "a 1.0 reader still checks the arena");
    let store = Store::from_bytes(GOLDEN_V3).unwrap();
    assert_eq!(store, golden_world_v3());
    // Its names were a flat list: this build writes them as a tree, and reads that back.
    assert_eq!(Store::from_bytes(&store.to_bytes()).unwrap(), store);
    let goblin = store.get(id("202v0t1")).unwrap();
    assert_eq!(goblin.get_str("name"), Some("Goblin 199"));
    assert_eq!(goblin.get_floats("position"), Some(&[199.0, 0.5, -1.0][..]));

    // A changed byte in the second chunk is named by its chunk.
    let mut words = aligned(GOLDEN_V3);
    let at = (arena.offset + (64 << 10) + 100) as usize;
    zerocopy::IntoBytes::as_mut_bytes(words.as_mut_slice())[at] ^= 1;
    let bytes = &zerocopy::IntoBytes::as_bytes(words.as_slice())[..GOLDEN_V3.len()];
    let err = Store::from_bytes(bytes).unwrap_err();
    assert!(matches!(err, LoadError::File(FileError::ChunkCrc { chunk: 1, .. })), "{err}");
    assert_eq!(StoreView::new(bytes).unwrap_err(), err);
}

#[test]
#[ignore = "writes fixtures/world_v3.dcmp: only for a new format version or key hash"]
fn write_golden_v3() {
    golden_world_v3().save(PATH_V3).unwrap();
}

/// The target `delta_v2.delta` leads `world_v2.dcmp` to: a value changed, a key removed, an
/// entity removed, one inserted, and a new key name.
fn golden_target_v2() -> Store {
    let mut store = golden_world_v2();
    store.get_mut(id("0v0t1")).unwrap().set("stats.health", 75).unwrap();
    store.get_mut(id("1v0t1")).unwrap().remove("bio");
    store.remove(id("2v1t1"));
    store.insert_entries([("name", "Imp"), ("stats.luck", "high")]).unwrap();
    store
}

#[test]
fn the_v2_delta_applies_to_the_v2_save() {
    let info = format::describe(GOLDEN_DELTA_V2).unwrap();
    assert_eq!((info.kind.as_str(), info.major, info.minor), ("delta", 1, 0));
    let delta = StorePatch::from_bytes(GOLDEN_DELTA_V2).expect("format 1.0 deltas load");
    assert_eq!((delta.inserted(), delta.changed()), (1, 2));
    assert_eq!((delta.base_data_version(), delta.data_version()), (0, 0));
    let mut world = Store::from_bytes(GOLDEN_V2).unwrap();
    delta.apply(&mut world).expect("it applies to the save it was made from");
    assert_eq!(world, golden_target_v2());
    let imp = world.get(id("2v2t1")).unwrap();
    assert_eq!((imp.get_str("name"), imp.get_str("stats.luck")), (Some("Imp"), Some("high")));
    assert_eq!(world.get(id("0v0t1")).unwrap().get_float("stats.health"), Some(75.0));
    assert!(!world.get(id("1v0t1")).unwrap().contains_key("bio"));
    assert_eq!(world.key_name(Key::parse("stats.luck")).as_deref(), Some("stats.luck"));
}

#[test]
#[ignore = "writes fixtures/delta_v2.delta: only for a new format version"]
fn write_golden_delta_v2() {
    StorePatch::diff(&golden_world_v2(), &golden_target_v2()).save(PATH_DELTA_V2).unwrap();
}

/// The world `world_data0.dcmp` holds: sheets of a game's first data version, which the
/// README's migrations take to version 3 (`hp` and `inventory` renamed, `legacy` removed, new
/// defaults and a schema tag). Entity 3 holds a key without a name; entity 4 was removed.
fn golden_world_data0() -> Store {
    let mut store = Store::new();
    let text = r#"[
        {"name": "Hero", "hp": 100, "inventory": {"sword": 1, "potion": 3}, "legacy": true,
         "stats": {"mana": 50}},
        {"name": "Orc", "hp": 30, "inventory": {"club": 1}, "legacy": {"xp": 5, "kills": [1, 2]}},
        {"name": "Sage", "stats": {"health": 80, "luck": 7}, "flags": {"tutorial_done": false},
         "position": [1, 2, 3]}
    ]"#;
    store.import(text, &ImportOptions::strict()).unwrap();
    let odd = store.insert_empty();
    let mut sheet = store.get_mut(odd).unwrap();
    sheet.set("name", "Odd").unwrap();
    sheet.set(Key::from_raw(0xdead_beef), true).unwrap();
    let gone = store.insert_entries([("name", "Gone"), ("hp", "1")]).unwrap();
    store.remove(gone);
    store
}

#[test]
fn the_data0_save_loads_with_its_contents() {
    let info = format::describe(GOLDEN_DATA0).unwrap();
    assert_eq!((info.major, info.minor, info.key_hash), (1, 0, format::KEY_HASH_FX32_BYTES));
    let store = Store::from_bytes(GOLDEN_DATA0).unwrap();
    assert_eq!(store, golden_world_data0());
    assert_eq!(store.len(), 4);
    let hero = store.get(id("0v0t1")).unwrap();
    assert_eq!(hero.get_float("hp"), Some(100.0));
    assert_eq!(hero.get_float("inventory.potion"), Some(3.0));
    assert_eq!(hero.get_bool("legacy"), Some(true));
    let orc = store.get(id("1v0t1")).unwrap();
    assert_eq!(orc.get_floats("legacy.kills"), Some(&[1.0, 2.0][..]));
    assert_eq!(store.get(id("3v0t1")).unwrap().get_bool(Key::from_raw(0xdead_beef)), Some(true));
    assert!(store.get(id("4v0t1")).is_none());
}

#[test]
#[ignore = "writes fixtures/world_data0.dcmp: only for a new format version"]
fn write_golden_data0() {
    golden_world_data0().save(PATH_DATA0).unwrap();
}

/// `world_data0.dcmp` migrated by the README's migrations.
fn golden_world_data3() -> Store {
    let mut store = Store::from_bytes(GOLDEN_DATA0).unwrap();
    Migrations::from_json(MIGRATIONS_V3).unwrap().apply(&mut store).unwrap();
    store
}

#[test]
fn the_data0_save_migrates_to_the_readme_version_3() {
    let migrations = Migrations::from_json(MIGRATIONS_V3).unwrap();
    let mut store = Store::from_bytes(GOLDEN_DATA0).unwrap();
    let report = migrations.apply(&mut store).unwrap();
    assert_eq!((report.from, report.to, store.data_version()), (0, 3, 3));
    let counts: Vec<_> = report
        .steps
        .iter()
        .map(|s| (s.index, s.to, s.entities, s.renamed, s.removed, s.defaulted, s.set))
        .collect();
    // Step 0: Hero's hp and 2 inventory keys, the Orc's hp and club. Step 1: Hero's legacy, the
    // Orc's 2 legacy keys; luck and tutorial_done where missing (3 each: not the Sage); a schema
    // for all 4.
    assert_eq!(counts, [(0, 2, 2, 5, 0, 0, 0), (1, 3, 4, 0, 3, 6, 4)]);

    let export = |id: &str| store.export(self::id(id), &ExportOptions::json()).unwrap();
    assert_eq!(
        export("0v0t1"),
        r#"{"name":"Hero","stats":{"health":100,"mana":50,"luck":1},"items":{"sword":1,"potion":3},"flags":{"tutorial_done":true},"schema":"v3"}"#
    );
    assert_eq!(
        export("1v0t1"),
        r#"{"name":"Orc","stats":{"health":30,"luck":1},"items":{"club":1},"flags":{"tutorial_done":true},"schema":"v3"}"#
    );
    assert_eq!(
        export("2v0t1"),
        r#"{"name":"Sage","stats":{"health":80,"luck":7},"flags":{"tutorial_done":false},"position":[1,2,3],"schema":"v3"}"#
    );
    // The key without a name stays where it was: only its own path could have moved it.
    assert_eq!(
        export("3v0t1"),
        r##"{"name":"Odd","#deadbeef":true,"stats":{"luck":1},"flags":{"tutorial_done":true},"schema":"v3"}"##
    );
    assert!(store.get(id("4v0t1")).is_none(), "the removed entity stays stale");
    for path in
        ["stats.health", "items.sword", "items.potion", "items.club", "stats.luck", "schema"]
    {
        assert_eq!(
            store.key_name(Key::parse(path)).as_deref(),
            Some(path),
            "the new names are recorded"
        );
    }

    // Saved and loaded: format 1.1, data version 3; migrating again is a no-op.
    let mut loaded = Store::from_bytes(&store.to_bytes()).unwrap();
    assert_eq!(loaded, store);
    assert_eq!(format::describe(&store.to_bytes()).unwrap().data_version, 3);
    let before = loaded.clone();
    let again = migrations.apply(&mut loaded).unwrap();
    assert_eq!((again.from, again.to), (3, 3));
    assert!(again.steps.is_empty());
    assert_eq!(loaded, before);
    assert_eq!(Store::from_bytes(GOLDEN_DATA3).unwrap(), store, "the golden result");
}

#[test]
#[ignore = "writes fixtures/world_data3.dcmp: only for a new format version"]
fn write_golden_data3() {
    golden_world_data3().save(PATH_DATA3).unwrap();
}

#[test]
fn a_key_hash_1_save_migrates_once_upgraded() {
    let mut store = LoadOptions::new()
        .known_keys(V1_KEYS)
        .load_bytes(GOLDEN_V1)
        .expect("upgraded with its keys' paths, which become its names");
    assert_eq!(store.data_version(), 0);
    let migrations = Migrations::from_json(
        r#"{"version": 1, "steps": [{"to": 1, "rename": {"stats": "attributes", "status_effects": "effects"}, "default": {"attributes.luck": 1}}]}"#,
    )
    .unwrap();
    migrations.apply(&mut store).unwrap();
    let classic = store.get(id("0v0t1")).unwrap();
    assert_eq!(classic.get_float("attributes.health"), Some(100.0));
    assert_eq!(classic.get_bool("effects.delirious"), Some(true));
    assert_eq!(classic.get_float("attributes.luck"), Some(1.0));
    assert!(!classic.contains_key("stats.health"));
    let loaded = Store::from_bytes(&store.to_bytes()).unwrap();
    assert_eq!((loaded.data_version(), &loaded), (1, &store));
}

const GOLDEN_V4: &[u8] = include_bytes!("../fixtures/world_v4.dcmp");
const GOLDEN_DELTA_V4: &[u8] = include_bytes!("../fixtures/delta_v4.dcmp");
const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/");

/// The world `world_v4.dcmp` holds: [`golden_world_v2`]'s, and a sheet imported leniently
/// with the shapes designers' JSON has (arrays of objects, of strings, mixed, nested, empty)
/// under a long shared prefix.
fn golden_world_v4() -> Store {
    let mut store = golden_world_v2();
    let prefix = "a_long_shared_prefix_".repeat(4);
    let text = format!(
        r#"{{"name": "Monster", "armor_class": [{{"type": "natural", "value": 17}}],
            "{prefix}": {{"senses": ["darkvision", "tremorsense"], "mixed": [1, "two", true],
            "grid": [[1, 2], [3]], "empty": []}}}}"#
    );
    store.import(&text, &ImportOptions::lenient()).unwrap();
    store
}

/// The target of `delta_v4.dcmp`, made from [`golden_world_v4`]: a new name under an array.
fn golden_delta_v4_target() -> Store {
    let mut store = golden_world_v4();
    let monster = id("3v0t1");
    store.get_mut(monster).unwrap().set("armor_class.0.note", "scaly").unwrap();
    store.get_mut(monster).unwrap().remove("name");
    store
}

const GOLDEN_V5: &[u8] = include_bytes!("../fixtures/world_v5.dcmp");
const GOLDEN_V5_IDENTITY: &[u8] = include_bytes!("../fixtures/world_v5_identity.dcmp");
const GOLDEN_DELTA_V5: &[u8] = include_bytes!("../fixtures/delta_v5.dcmp");

/// The world `world_v5.dcmp` holds: [`golden_world_v4`]'s (a removal, so its handle map is
/// saved in full, and garbage in its arena) with two empty entities, one of them between two
/// others.
fn golden_world_v5() -> Store {
    let mut store = golden_world_v4();
    let empty = store.insert_empty();
    store.insert_entries([("name", "Last")]).unwrap();
    store.insert_empty();
    assert!(store.get(empty).unwrap().is_empty());
    store
}

/// The world `world_v5_identity.dcmp` holds: a fresh import (an identity handle map) with an
/// empty entity, at data version 2.
fn golden_world_v5_identity() -> Store {
    let mut store = Store::new();
    let text = r#"[{"name": "Ann", "stats": {"hp": 10}}, {}, {"name": "Bo", "tags": [1, 2]}, {}]"#;
    store.import(text, &ImportOptions::strict()).unwrap();
    store.set_data_version(2);
    store
}

/// The target of `delta_v5.dcmp`, made from [`golden_world_v5`]: as `delta_v4.dcmp`'s, and an
/// empty entity given a value.
fn golden_delta_v5_target() -> Store {
    let mut store = golden_world_v5();
    let monster = id("3v0t1");
    store.get_mut(monster).unwrap().set("armor_class.0.note", "scaly").unwrap();
    store.get_mut(monster).unwrap().remove("name");
    store.get_mut(id("4v0t1")).unwrap().set("name", "Filled").unwrap();
    store
}

const GOLDEN_V6: &[u8] = include_bytes!("../fixtures/world_v6.dcmp");
const GOLDEN_DELTA_V6: &[u8] = include_bytes!("../fixtures/delta_v6.dcmp");

/// The world `world_v6.dcmp` holds: a lenient import with nulls (at the top, in an object, in
/// an array of objects), keys with an empty segment (`""` at the top and under `sprites`), an
/// empty entity, and a removed one (so the handle map is saved in full), at data version 4.
/// Its lineage is random: the file's is the one written, which a load keeps.
fn golden_world_v6() -> Store {
    let mut store = Store::new();
    let text = r#"[{"name": "Pecha", "firmness": null, "sprites": {"default": null, "": "blank"}},
                   {"types": [{"slot": 1, "type": null}], "hp": 3, "": 7},
                   {"name": "Gone"}, {}]"#;
    store.import(text, &ImportOptions::lenient()).unwrap();
    store.remove(id("2v0t1"));
    store.insert_entries([("name", "Oran"), ("sprites.", "shiny")]).unwrap();
    store.set_data_version(4);
    store
}

/// The target of `delta_v6.dcmp`, made from [`golden_world_v6`]: a value nulled, a null
/// filled, an empty-segment key set, and an entity inserted.
fn golden_delta_v6_target() -> Store {
    let mut store = golden_world_v6();
    store.get_mut(id("0v0t1")).unwrap().set("name", Value::Null).unwrap();
    store.get_mut(id("0v0t1")).unwrap().set("firmness", "soft").unwrap();
    store.get_mut(id("3v0t1")).unwrap().set("", 1).unwrap();
    store.insert_entries([("name", "Sitrus"), ("berry.", "ripe")]).unwrap();
    store
}

const GOLDEN_V7: &[u8] = include_bytes!("../fixtures/world_v7.dcmp");
const GOLDEN_DELTA_V7: &[u8] = include_bytes!("../fixtures/delta_v7.dcmp");

/// The world `world_v7.dcmp` holds, at data version 5: `creature` (0v0t1), an abstract base
/// named by `$id`; `orc` (1v0t1), its instance with a `$id` and overrides; `chief`, an
/// instance of `orc` (2v1t1, a chain of 2, in the slot of a removed entity, so the handle map is
/// saved in full) that stores a tombstone for the inherited `title`; `rock` (3v0t1), a plain
/// entity.
fn golden_world_v7() -> Store {
    let mut store = Store::new();
    let creature = store
        .insert_entries([
            ("$id", Value::Str("creature")),
            ("$abstract", Value::Bool(true)),
            ("stats.health", Value::Float(10.0)),
            ("stats.speed", Value::Float(5.0)),
            ("title", Value::Str("Beast")),
            ("flags.wild", Value::Bool(true)),
        ])
        .unwrap();
    let orc = store.insert_instance(creature).unwrap();
    let mut sheet = store.get_mut(orc).unwrap();
    sheet.set("$id", "orc").unwrap();
    sheet.set("name", "Orc").unwrap();
    sheet.set("stats.health", 30).unwrap();
    let gone = store.insert_entries([("name", "Gone")]).unwrap();
    assert!(store.remove(gone));
    let chief = store.insert_instance(orc).unwrap();
    assert_eq!(chief, id("2v1t1"));
    store.get_mut(chief).unwrap().set("name", "Chief").unwrap();
    store.remove_inherited(chief, "title").unwrap();
    store.insert_entries([("name", "Rock")]).unwrap();
    store.set_data_version(5);
    store
}

/// The target of `delta_v7.dcmp`, made from [`golden_world_v7`]: `chief` relinked to
/// `creature` (a link changed), `rock` made an instance of `orc` (a link added), `orc`'s
/// inherited `flags.wild` tombstoned, and a new instance of `chief` (a chain of 2) inserted.
fn golden_delta_v7_target() -> Store {
    let mut store = golden_world_v7();
    let (creature, orc, chief, rock) = (id("0v0t1"), id("1v0t1"), id("2v1t1"), id("3v0t1"));
    store.set_prototype(chief, Some(creature)).unwrap();
    store.set_prototype(rock, Some(orc)).unwrap();
    store.remove_inherited(orc, "flags.wild").unwrap();
    let heir = store.insert_instance(chief).unwrap();
    store.get_mut(heir).unwrap().set("name", "Heir").unwrap();
    store
}

/// Makes the world a golden file holds.
type World = fn() -> Store;

/// Golden saves of key hash 2 with the world each holds; those of this build's format
/// ([`format::FORMAT_MINOR`]) it writes byte for byte.
fn saves() -> [(&'static [u8], World); 7] {
    [
        (GOLDEN_V7, golden_world_v7),
        (GOLDEN_V6, golden_world_v6),
        (GOLDEN_V2, golden_world_v2),
        (GOLDEN_DATA3, golden_world_data3),
        (GOLDEN_V4, golden_world_v4),
        (GOLDEN_V5, golden_world_v5),
        (GOLDEN_V5_IDENTITY, golden_world_v5_identity),
    ]
}

/// Golden deltas with their base's and target's worlds; those of this build's format it
/// writes byte for byte.
fn deltas() -> [(&'static [u8], World, World); 5] {
    [
        (GOLDEN_DELTA_V7, golden_world_v7, golden_delta_v7_target),
        (GOLDEN_DELTA_V6, golden_world_v6, golden_delta_v6_target),
        (GOLDEN_DELTA_V2, golden_world_v2, golden_target_v2),
        (GOLDEN_DELTA_V4, golden_world_v4, golden_delta_v4_target),
        (GOLDEN_DELTA_V5, golden_world_v5, golden_delta_v5_target),
    ]
}

/// Whether `bytes` are of this build's format.
fn newest(bytes: &[u8]) -> bool {
    format::describe(bytes).unwrap().minor == format::FORMAT_MINOR
}

#[test]
fn every_golden_save_loads_as_its_world_and_the_newest_writes_back_byte_for_byte() {
    let saves = saves();
    for (i, &(bytes, world)) in saves.iter().enumerate() {
        let store = Store::from_bytes(bytes).unwrap();
        assert_eq!(store, world(), "save {i}");
        assert_eq!(
            store.export_all(&ExportOptions::json()).unwrap(),
            world().export_all(&ExportOptions::json()).unwrap(),
            "save {i}"
        );
        // Saved again, it is of this build's format, and loads the same, handles and all.
        let again = store.to_bytes();
        assert_eq!(format::describe(&again).unwrap().minor, format::FORMAT_MINOR, "save {i}");
        assert_eq!(Store::from_bytes(&again).unwrap(), store, "save {i}");
        let words = aligned(bytes);
        let aligned_bytes = zerocopy::IntoBytes::as_bytes(words.as_slice());
        let view = StoreView::new(aligned_bytes).unwrap();
        let lazy = StoreView::lazy(aligned_bytes).unwrap();
        assert_eq!((view.len(), lazy.len()), (store.len(), store.len()));
        for (id, blob) in store.iter() {
            assert_eq!(view.get(id), Some(blob), "save {i}");
            assert_eq!(lazy.get(id).unwrap(), Some(blob), "save {i}");
        }
        let salvage = Store::salvage(bytes).unwrap();
        assert!(salvage.lost.is_empty(), "save {i}");
        assert_eq!(salvage.store, store, "save {i}");
        if newest(bytes) {
            assert_eq!(store.to_bytes(), bytes, "a loaded golden save writes back byte for byte");
            assert_eq!(
                sections_but_lineage(&world().to_bytes()),
                sections_but_lineage(bytes),
                "this build writes the golden bytes (its lineage drawn anew)"
            );
        }
    }
}

/// Each section of a save but its lineage (random for a new store): kind and bytes.
fn sections_but_lineage(bytes: &[u8]) -> Vec<(u32, Vec<u8>)> {
    let info = format::describe(bytes).unwrap();
    let section = |s: &format::SectionInfo| {
        let at = usize::try_from(s.offset).unwrap();
        (s.kind, bytes[at..at + usize::try_from(s.len).unwrap()].to_vec())
    };
    info.sections.iter().filter(|s| s.kind != 15).map(section).collect()
}

#[test]
fn every_golden_delta_applies_to_its_base_and_reads_back_the_same() {
    let deltas = deltas();
    for (i, &(bytes, base, target)) in deltas.iter().enumerate() {
        let delta = StorePatch::from_bytes(bytes).unwrap();
        let mut world = base();
        delta.apply(&mut world).unwrap();
        assert_eq!(world, target(), "delta {i}");
        // Written again, a delta keeps the form of its names: its base's crc covers them so.
        let mut again = base();
        StorePatch::from_bytes(&delta.to_bytes()).unwrap().apply(&mut again).unwrap();
        assert_eq!(again, target(), "delta {i}");
        if newest(bytes) {
            assert_eq!(delta.to_bytes(), bytes);
            assert_eq!(StorePatch::diff(&base(), &target()).to_bytes(), bytes);
        }
    }
}

#[test]
fn the_v4_world_exports_its_arrays_as_arrays() {
    let store = Store::from_bytes(GOLDEN_V4).unwrap();
    let prefix = "a_long_shared_prefix_".repeat(4);
    assert_eq!(
        store.export(id("3v0t1"), &ExportOptions::json()).unwrap(),
        format!(
            r#"{{"name":"Monster","armor_class":[{{"type":"natural","value":17}}],"{prefix}":{{"senses":["darkvision","tremorsense"],"mixed":[1,"two",true],"grid":[[1,2],[3]],"empty":[]}}}}"#
        )
    );
}

#[test]
#[ignore = "writes fixtures/world_v7.dcmp and delta_v7.dcmp: only for a new format"]
fn write_golden_v7() {
    golden_world_v7().save(format!("{DIR}world_v7.dcmp")).unwrap();
    StorePatch::diff(&golden_world_v7(), &golden_delta_v7_target())
        .save(format!("{DIR}delta_v7.dcmp"))
        .unwrap();
}

/// Format 1.5 in the goldens: `world_v7.dcmp`'s links and tombstone, exactly, through every
/// reader (a store, a view, a salvage), what its entities read, and its delta's link changes.
#[test]
fn the_v7_save_keeps_its_links_and_tombstones() {
    let (creature, orc, chief, rock) = (id("0v0t1"), id("1v0t1"), id("2v1t1"), id("3v0t1"));
    let store = Store::from_bytes(GOLDEN_V7).unwrap();
    let links = |s: &Store| [creature, orc, chief, rock].map(|e| s.prototype(e));
    assert_eq!(links(&store), [None, Some(creature), Some(orc), None]);
    assert_eq!(links(&Store::salvage(GOLDEN_V7).unwrap().store), links(&store));
    let words = aligned(GOLDEN_V7);
    let view = StoreView::new(zerocopy::IntoBytes::as_bytes(words.as_slice())).unwrap();
    let view_links = [creature, orc, chief, rock].map(|e| view.prototype(e));
    assert_eq!(view_links, [None, Some(creature), Some(orc), None]);
    assert!(store.get(id("2v0t1")).is_none(), "the removed entity stays stale");
    // What each stores: the chief its name and a tombstone, nothing it inherits.
    let own = |e: Id| store.get(e).unwrap().iter().collect::<Vec<_>>();
    assert_eq!(
        own(chief),
        [(Key::new("name"), Value::Str("Chief")), (Key::new("title"), Value::Tombstone)]
    );
    assert_eq!(own(orc).len(), 3);
    assert_eq!(own(creature).len(), 6);
    // What the chief reads, and from where, through its chain of 2.
    let sheet = store.resolved(chief).unwrap();
    assert_eq!(sheet.chain().collect::<Vec<_>>(), [orc, creature]);
    assert_eq!(sheet.get_with_source("name"), Some((Value::Str("Chief"), chief)));
    assert_eq!(sheet.get_with_source("stats.health"), Some((Value::Float(30.0), orc)));
    assert_eq!(sheet.get_with_source("stats.speed"), Some((Value::Float(5.0), creature)));
    assert_eq!(sheet.get_with_source("flags.wild"), Some((Value::Bool(true), creature)));
    assert_eq!(sheet.get("title"), None, "the tombstone hides the base's title");
    assert_eq!(store.resolved(orc).unwrap().get_str("title"), Some("Beast"));
    assert_eq!(
        store.export_all(&ExportOptions::json()).unwrap(),
        r#"[{"$id":"creature","$abstract":true,"stats":{"health":10,"speed":5},"title":"Beast","flags":{"wild":true}},{"$prototype":"creature","$id":"orc","name":"Orc","stats":{"health":30}},{"$prototype":"orc","name":"Chief","$remove":["title"]},{"name":"Rock"}]"#
    );
    // The delta: two links changed, a tombstone added, an instance inserted.
    let mut applied = store.clone();
    StorePatch::from_bytes(GOLDEN_DELTA_V7).unwrap().apply(&mut applied).unwrap();
    assert_eq!(applied, golden_delta_v7_target());
    assert_eq!(links(&applied), [None, Some(creature), Some(creature), Some(orc)]);
    let heir = id("4v0t1");
    assert_eq!(applied.prototype(heir), Some(chief));
    assert_eq!(applied.get(orc).unwrap().get("flags.wild"), Some(Value::Tombstone));
    let heir_reads = applied.resolved(heir).unwrap();
    assert_eq!(heir_reads.get_with_source("name"), Some((Value::Str("Heir"), heir)));
    assert_eq!(heir_reads.get_with_source("stats.health"), Some((Value::Float(10.0), creature)));
    assert_eq!(heir_reads.get("title"), None, "the chief's tombstone, under its new prototype");
    assert_eq!(applied.resolved(rock).unwrap().get("flags.wild"), None, "orc's tombstone");
}

#[test]
#[ignore = "writes fixtures/world_v6.dcmp and delta_v6.dcmp: only for a new format"]
fn write_golden_v6() {
    golden_world_v6().save(format!("{DIR}world_v6.dcmp")).unwrap();
    StorePatch::diff(&golden_world_v6(), &golden_delta_v6_target())
        .save(format!("{DIR}delta_v6.dcmp"))
        .unwrap();
}

/// Format 1.4 in the goldens: `world_v6.dcmp` keeps its lineage through every reader that
/// makes a store, reads its nulls and empty-segment keys, and its delta applies to it.
#[test]
fn the_v6_save_keeps_its_lineage_nulls_and_empty_segment_keys() {
    let store = Store::from_bytes(GOLDEN_V6).unwrap();
    let info = format::describe(GOLDEN_V6).unwrap();
    let lineage = info.sections.iter().find(|s| s.kind == 15).expect("a lineage section");
    let at = usize::try_from(lineage.offset).unwrap();
    let saved = u128::from_le_bytes(GOLDEN_V6[at..at + 16].try_into().unwrap());
    assert_eq!(store.lineage(), Some(saved));
    assert_eq!(Store::salvage(GOLDEN_V6).unwrap().store.lineage(), Some(saved));
    assert_eq!(Store::from_bytes(&store.to_bytes()).unwrap().lineage(), Some(saved));
    let pecha = store.get(id("0v0t1")).unwrap();
    assert_eq!(pecha.get("firmness"), Some(Value::Null));
    assert_eq!(pecha.get("sprites.default"), Some(Value::Null));
    assert_eq!(pecha.get_str(Key::path(&["sprites", ""])), Some("blank"));
    let second = store.get(id("1v0t1")).unwrap();
    assert_eq!((second.get_float(""), second.get("types.0.type")), (Some(7.0), Some(Value::Null)));
    assert!(store.get(id("2v0t1")).is_none(), "the removed entity stays stale");
    assert_eq!(store.get(id("2v1t1")).unwrap().get_str("sprites."), Some("shiny"));
    assert_eq!(store.get(id("3v0t1")).unwrap().len(), 0);
    assert_eq!(
        store.export(id("0v0t1"), &ExportOptions::json()).unwrap(),
        r#"{"name":"Pecha","firmness":null,"sprites":{"default":null,"":"blank"}}"#
    );
    let mut applied = store.clone();
    StorePatch::from_bytes(GOLDEN_DELTA_V6).unwrap().apply(&mut applied).unwrap();
    assert_eq!(applied, golden_delta_v6_target());
    assert_eq!(applied.lineage(), Some(saved), "a delta applied keeps the base's lineage");
    assert_eq!(applied.get(id("0v0t1")).unwrap().get("name"), Some(Value::Null));
}

#[test]
#[ignore = "writes fixtures/world_v5.dcmp, world_v5_identity.dcmp and delta_v5.dcmp: only for \
            a new format"]
fn write_golden_v5() {
    golden_world_v5().save(format!("{DIR}world_v5.dcmp")).unwrap();
    golden_world_v5_identity().save(format!("{DIR}world_v5_identity.dcmp")).unwrap();
    StorePatch::diff(&golden_world_v5(), &golden_delta_v5_target())
        .save(format!("{DIR}delta_v5.dcmp"))
        .unwrap();
}

/// Format 1.3's index in the goldens: end offsets, empty blobs of zero bytes, and the identity
/// handle map's meta and slots left out.
#[test]
fn the_v5_saves_hold_end_offsets_and_leave_out_what_follows_from_them() {
    let section = |bytes: &[u8], name: &str| {
        let info = format::describe(bytes).unwrap();
        info.sections.iter().find(|s| s.name == name).map(|s| s.len)
    };
    for bytes in [GOLDEN_V5, GOLDEN_V5_IDENTITY] {
        assert_eq!(section(bytes, "index items"), None);
        let entities = Store::from_bytes(bytes).unwrap().len() as u64;
        assert_eq!(section(bytes, "index ends"), Some(4 * entities));
    }
    // world_v5: a removed entity (its slot reused) keeps the handle map in full.
    let full = Store::from_bytes(GOLDEN_V5).unwrap();
    assert_eq!(section(GOLDEN_V5, "index meta"), Some(4 * full.len() as u64));
    assert_ne!(section(GOLDEN_V5, "index slots"), Some(0));
    assert_eq!(section(GOLDEN_V5_IDENTITY, "index meta"), Some(0));
    assert_eq!(section(GOLDEN_V5_IDENTITY, "index slots"), Some(0));
    // The arena holds the two sheets and nothing for the two empty entities.
    let identity = Store::from_bytes(GOLDEN_V5_IDENTITY).unwrap();
    let sheets: u64 = identity.iter().map(|(_, b)| b.byte_len() as u64).filter(|&n| n > 8).sum();
    assert_eq!(section(GOLDEN_V5_IDENTITY, "arena"), Some(sheets));
    assert_eq!(identity.iter().filter(|(_, b)| b.is_empty()).count(), 2);
}

#[test]
#[ignore = "writes fixtures/world_v4.dcmp and delta_v4.dcmp: only for a new format"]
fn write_golden_v4() {
    golden_world_v4().save(format!("{DIR}world_v4.dcmp")).unwrap();
    StorePatch::diff(&golden_world_v4(), &golden_delta_v4_target())
        .save(format!("{DIR}delta_v4.dcmp"))
        .unwrap();
}

/// Format 1.4: every golden save (1.3 and before) still loads, as a store without a lineage,
/// which a new save keeps (an empty `lineage` section); a fresh store's save holds its lineage
/// in a section of its own, which every reader keeps, and a salvage too.
#[test]
fn golden_saves_load_without_a_lineage_and_fresh_saves_keep_theirs() {
    for golden in GOLDEN.iter().filter(|g| g.kind == "save" && g.minor < 4) {
        let store = LoadOptions::new().known_keys(V1_KEYS).load_bytes(golden.bytes).unwrap();
        assert_eq!(store.lineage(), None, "{}", golden.name);
        let again = Store::from_bytes(&store.to_bytes()).unwrap();
        assert_eq!((again.lineage(), again == store), (None, true), "{}", golden.name);
        assert_eq!(Store::salvage(golden.bytes).map(|s| s.store.lineage()).ok().flatten(), None);
    }
    let mut fresh = Store::new();
    fresh.insert_entries([("name", "Orc")]).unwrap();
    let lineage = fresh.lineage().expect("a new store has a lineage");
    let bytes = fresh.to_bytes();
    let info = format::describe(&bytes).unwrap();
    assert_eq!(info.minor, format::FORMAT_MINOR);
    let section = info.sections.iter().find(|s| s.kind == 15).expect("the lineage section");
    assert_eq!((section.name, section.len), ("lineage", 16));
    let at = usize::try_from(section.offset).unwrap();
    assert_eq!(bytes[at..at + 16], lineage.to_le_bytes());
    assert_eq!(Store::from_bytes(&bytes).unwrap().lineage(), Some(lineage));
    assert_eq!(Store::salvage(&bytes).unwrap().store.lineage(), Some(lineage));
    assert_eq!(fresh.clone().lineage(), Some(lineage));
    assert_ne!(Store::new().lineage(), Some(lineage));
}

/// Format 1.4 adds the null value (type tag 5): the goldens of 1.3 and before load as they did
/// (the tests above), and a fresh save holding nulls is of 1.4 and reads back through every
/// reader, as does a delta that sets and clears them.
#[test]
fn a_fresh_save_holds_nulls_and_every_reader_reads_them() {
    let text = r#"[{"name": "Pecha", "firmness": null, "sprites": {"default": null}},
                   {"types": [{"slot": 1, "type": null}], "hp": 3}]"#;
    let mut store = Store::new();
    store.import(text, &ImportOptions::lenient()).unwrap();
    let bytes = store.to_bytes();
    let info = format::describe(&bytes).unwrap();
    assert_eq!((info.major, info.minor), (1, format::FORMAT_MINOR));
    let loaded = Store::from_bytes(&bytes).unwrap();
    assert_eq!(loaded, store);
    let (first, second) = (id("0v0t1"), id("1v0t1"));
    assert_eq!(loaded.get(first).unwrap().get("firmness"), Some(Value::Null));
    assert_eq!(loaded.get(second).unwrap().get("types.0.type"), Some(Value::Null));
    assert_eq!(
        loaded.export_all(&ExportOptions::json()).unwrap(),
        r#"[{"name":"Pecha","firmness":null,"sprites":{"default":null}},{"types":[{"slot":1,"type":null}],"hp":3}]"#
    );
    let words = aligned(&bytes);
    let aligned_bytes = zerocopy::IntoBytes::as_bytes(words.as_slice());
    let view = StoreView::new(aligned_bytes).unwrap();
    let lazy = StoreView::lazy(aligned_bytes).unwrap();
    for (id, blob) in store.iter() {
        assert_eq!(view.get(id), Some(blob));
        assert_eq!(lazy.get(id).unwrap(), Some(blob));
    }
    let salvage = Store::salvage(&bytes).unwrap();
    assert!(salvage.lost.is_empty());
    assert_eq!(salvage.store, store);

    // A delta that nulls a value and fills a null, through its bytes.
    let mut target = store.clone();
    target.get_mut(first).unwrap().set("name", Value::Null).unwrap();
    target.get_mut(first).unwrap().set("firmness", "soft").unwrap();
    let delta = StorePatch::diff(&store, &target);
    let delta = StorePatch::from_bytes(&delta.to_bytes()).unwrap();
    let mut applied = store.clone();
    delta.apply(&mut applied).unwrap();
    assert_eq!(applied, target);
    assert_eq!(applied.get(first).unwrap().get("name"), Some(Value::Null));
}

/// 1.4 and 1.5 change no section of a save without nulls, tombstones or prototypes: this build
/// writes each 1.3 golden world with every section the golden holds, byte for byte, and adds
/// only its lineage (kind 15) and an empty `prototypes` section (kind 16).
#[test]
fn a_save_without_nulls_keeps_the_1_3_sections_and_adds_its_lineage() {
    fn bytes_of<'a>(file: &'a [u8], section: &format::SectionInfo) -> &'a [u8] {
        let at = usize::try_from(section.offset).unwrap();
        &file[at..at + usize::try_from(section.len).unwrap()]
    }
    for (bytes, world) in
        [(GOLDEN_V5, golden_world_v5 as World), (GOLDEN_V5_IDENTITY, golden_world_v5_identity)]
    {
        let written = world().to_bytes();
        let (old, new) = (format::describe(bytes).unwrap(), format::describe(&written).unwrap());
        assert_eq!((old.minor, new.minor), (3, format::FORMAT_MINOR));
        for section in &old.sections {
            let same = new.sections.iter().find(|s| s.kind == section.kind).expect(section.name);
            assert_eq!(bytes_of(&written, same), bytes_of(bytes, section), "{}", section.name);
        }
        let added: Vec<(u32, u64)> = new
            .sections
            .iter()
            .filter(|s| old.sections.iter().all(|o| o.kind != s.kind))
            .map(|s| (s.kind, s.len))
            .collect();
        assert_eq!(added, [(15, 16), (16, 0)], "the lineage and no links");
    }
}
