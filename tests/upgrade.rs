//! Saves of key hash 1 load by rehashing every key, or not at all; deltas of key hash 1 are
//! refused. The saves here are made as key hash 1 wrote them: keys are key-hash-1 values, and
//! the header's key hash id is 1. Saves of key hash 2 load with the keys of names that hold
//! an empty segment rehashed (the only ones key hash 3 changed).

mod common;

use std::hash::Hasher;

use datacomp::format::FileError;
use datacomp::format::StoreError;
use datacomp::{
    Blob, Error, Id, Key, LoadError, LoadOptions, Store, StorePatch, StoreView, format,
};

/// A path's key under key hash 1: `FxHasher32::write` per segment, segments combined with
/// `write_u32`.
fn v1(path: &str) -> Key {
    let segment = |s: &str| {
        let mut hasher = fxhash::FxHasher32::default();
        hasher.write(s.as_bytes());
        hasher.finish() as u32
    };
    let mut segments = path.split('.');
    let first = segment(segments.next().unwrap());
    Key::from_raw(
        segments
            .fold(first, |hash, s| (hash.rotate_left(5) ^ segment(s)).wrapping_mul(0x2722_0a95)),
    )
}

/// `bytes` (a save or delta of this build, without key names) as key hash 1 wrote it: key hash
/// id 1 in the header, its crc updated.
fn as_key_hash_1(mut bytes: Vec<u8>) -> Vec<u8> {
    bytes[12..14].copy_from_slice(&1_u16.to_le_bytes());
    let sections = usize::from(u16::from_le_bytes([bytes[14], bytes[15]]));
    bytes[24..28].fill(0);
    let crc = crc32fast::hash(&bytes[..32 + 24 * sections]);
    bytes[24..28].copy_from_slice(&crc.to_le_bytes());
    bytes
}

/// A key hash 1 save of one entity per list, each path's value its position.
fn old_save(entities: &[&[&str]]) -> Vec<u8> {
    let mut store = Store::new();
    for paths in entities {
        let blob: Blob = paths.iter().enumerate().map(|(i, path)| (v1(path), i as f32)).collect();
        store.insert(&blob);
    }
    as_key_hash_1(store.to_bytes())
}

fn id(text: &str) -> Id {
    text.parse().unwrap()
}

#[test]
fn known_paths_rehash_every_key_and_become_its_names() {
    let bytes = old_save(&[&["name", "stats.health"], &["stats.health", "a.b"]]);
    let options = LoadOptions::new().known_keys(["stats.health", "name", "a.b", "x.y"]);
    let store = options.load_bytes(&bytes).unwrap();
    assert_eq!(store.get(id("0v0t1")).unwrap().get_float("name"), Some(0.0));
    assert_eq!(store.get(id("0v0t1")).unwrap().get_float("stats.health"), Some(1.0));
    assert_eq!(store.get(id("1v0t1")).unwrap().get_float("stats.health"), Some(0.0));
    assert_eq!(store.get(id("1v0t1")).unwrap().get_float("a.b"), Some(1.0));
    let names: Vec<String> = store.key_names().map(|(_, n)| n).collect();
    assert_eq!(names.len(), 3, "{names:?}: the unused x.y is not recorded");
    assert_eq!(store.key_name(Key::parse("a.b")).as_deref(), Some("a.b"));

    // A member name with a dot, given as a JSON Pointer.
    let dotted = old_save(&[&[]]);
    assert!(LoadOptions::new().load_bytes(&dotted).is_ok(), "no keys, no paths");
    let mut store = Store::new();
    let mut segment = fxhash::FxHasher32::default();
    segment.write(b"a.b");
    store.insert(&[(Key::from_raw(segment.finish() as u32), true)].into_iter().collect::<Blob>());
    let bytes = as_key_hash_1(store.to_bytes());
    let store = LoadOptions::new().known_keys(["/a.b"]).load_bytes(&bytes).unwrap();
    assert_eq!(store.get(id("0v0t1")).unwrap().get_bool(Key::new("a.b")), Some(true));
    assert_eq!(store.key_label(Key::new("a.b")), "/a.b");
}

#[test]
fn a_key_no_path_explains_is_an_error_naming_entity_and_hash() {
    let bytes = old_save(&[&["name"], &["name", "secret"]]);
    let err = LoadOptions::new().known_keys(["name"]).load_bytes(&bytes);
    let err = err.unwrap_err();
    assert_eq!(
        err,
        LoadError::Store(StoreError::UnexplainedKeys { keys: vec![(id("1v0t1"), v1("secret"))] })
    );
    assert_eq!(
        err.to_string(),
        format!(
            "save uses key hash 1, and 1 key has no name in it to rehash it from: {} \
             (entity 1v0t1); give their paths as known keys",
            v1("secret")
        )
    );
    // Through a file too, as Error::Load.
    let path = std::env::temp_dir().join(format!("upgrade-{}.dcmp", std::process::id()));
    std::fs::write(&path, &bytes).unwrap();
    let loaded = LoadOptions::new().known_keys(["name", "secret"]).load(&path);
    assert_eq!(loaded.unwrap().len(), 2);
    assert!(matches!(
        Store::load(&path),
        Err(Error::Load(LoadError::Store(StoreError::UnexplainedKeys { .. })))
    ));
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn many_unexplained_keys_are_listed_in_the_error_and_counted_in_its_message() {
    let paths: Vec<String> = (0..20).map(|i| format!("k{i}")).collect();
    let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
    let bytes = old_save(&[&refs]);
    let Err(LoadError::Store(StoreError::UnexplainedKeys { keys })) = Store::from_bytes(&bytes)
    else {
        panic!("unexplained keys");
    };
    assert_eq!(keys.len(), 20);
    assert!(keys.windows(2).all(|w| w[0].1 < w[1].1), "in key order");
    let message = Store::from_bytes(&bytes).unwrap_err().to_string();
    assert!(message.contains("20 keys") && message.contains(" and 12 more;"), "{message}");
}

#[test]
fn two_known_paths_with_the_old_hash_of_a_held_key_are_ambiguous() {
    // Key hash 1 gave these one key; key hash 2 gives them two.
    assert_eq!(v1("item_1409"), v1("item_1482"));
    let bytes = old_save(&[&["item_1409"]]);
    let options = LoadOptions::new().known_keys(["item_1409", "item_1482"]);
    assert_eq!(
        options.load_bytes(&bytes).unwrap_err(),
        LoadError::Store(StoreError::AmbiguousKnownKeys {
            key: v1("item_1409"),
            first: "item_1409".into(),
            second: "item_1482".into()
        })
    );
    // Unless the save does not hold that key.
    let bytes = old_save(&[&["name"]]);
    let options = options.known_keys(["name"]);
    assert_eq!(options.load_bytes(&bytes).unwrap().key_names().len(), 1);
}

#[test]
fn two_keys_that_rehash_to_one_are_an_error_naming_both_paths() {
    assert_ne!(v1("sleep_haste_8"), v1("fury_sleep_272"));
    assert_eq!(Key::parse("sleep_haste_8"), Key::parse("fury_sleep_272"));
    let bytes = old_save(&[&["sleep_haste_8"], &["fury_sleep_272"]]);
    let options = LoadOptions::new().known_keys(["sleep_haste_8", "fury_sleep_272"]);
    let err = options.load_bytes(&bytes).unwrap_err();
    assert_eq!(
        err,
        LoadError::Store(StoreError::UpgradeCollision {
            key: Key::parse("sleep_haste_8"),
            first: "sleep_haste_8".into(),
            second: "fury_sleep_272".into()
        })
    );
    assert_eq!(
        err.to_string(),
        "sleep_haste_8 and fury_sleep_272 rehash to the same key #316ec2d7 under key hash 2"
    );
}

#[test]
fn key_hashes_other_than_1_to_3_are_refused_and_views_read_key_hash_1_never() {
    let mut bytes = old_save(&[&["name"]]);
    assert_eq!(format::describe(&bytes).unwrap().key_hash, 1);
    assert_eq!(
        StoreView::new(&bytes).unwrap_err(),
        LoadError::Store(StoreError::KeyHashView { key_hash: 1 })
    );
    bytes[12] = 4;
    let bytes = {
        let sections = usize::from(bytes[14]);
        bytes[24..28].fill(0);
        let crc = crc32fast::hash(&bytes[..32 + 24 * sections]);
        bytes[24..28].copy_from_slice(&crc.to_le_bytes());
        bytes
    };
    assert_eq!(
        Store::from_bytes(&bytes).unwrap_err(),
        LoadError::File(FileError::UnsupportedKeyHash { key_hash: 4 })
    );
}

#[test]
fn a_delta_of_key_hash_1_is_refused_before_it_touches_a_store() {
    let mut base = Store::new();
    let hero = base.insert(&[("health", 100.0)].into_iter().collect::<Blob>());
    let mut now = base.clone();
    now.get_mut(hero).unwrap().set(Key::parse("health"), 95.0).unwrap();
    let delta = StorePatch::diff(&base, &now).to_bytes();
    assert!(StorePatch::from_bytes(&delta).is_ok());
    let old = as_key_hash_1(delta);
    let err = StorePatch::from_bytes(&old).unwrap_err();
    assert_eq!(err, LoadError::Store(StoreError::DeltaKeyHash { key_hash: 1 }));
    assert_eq!(
        err.to_string(),
        "the delta uses key hash 1, and stores now use key hash 3: apply it to its base with the \
         release that wrote it, then load that save to upgrade it"
    );
    assert_eq!(format::describe(&old).unwrap().kind, format::FileKind::Delta);
}

/// Attack: upgrade errors quote paths the caller or the save gave, which may be 100 KB long
/// and hold control characters; the message must stay one short line.
#[test]
fn upgrade_errors_cut_long_paths_and_escape_control_characters() {
    // The escape lands in the part a message keeps: the end.
    let long = format!("{}\u{1b}[2J", "p".repeat(100_000));
    let (sleep, fury) = (format!("{long}.sleep_haste_8"), format!("{long}.fury_sleep_272"));
    let bytes = old_save(&[&[sleep.as_str()], &[fury.as_str()]]);
    let options = LoadOptions::new().known_keys([sleep.as_str(), fury.as_str()]);
    let err = options.load_bytes(&bytes).unwrap_err();
    assert!(matches!(err, LoadError::Store(StoreError::UpgradeCollision { .. })), "{err:?}");
    let message = err.to_string();
    assert!(message.len() < 1000, "{} bytes", message.len());
    assert!(message.contains("bytes cut") && !message.contains('\u{1b}'), "{message}");
    assert!(message.contains(".sleep_haste_8") && message.contains(".fury_sleep_272"), "{message}");
    assert!(message.contains(r"\u{1b}[2J.sleep_haste_8"), "{message}");
    assert!(message.contains(" rehash to the same key #"), "{message}");

    let (a, b) = (format!("{long}.item_1409"), format!("{long}.item_1482"));
    let bytes = old_save(&[&[a.as_str()]]);
    let options = LoadOptions::new().known_keys([a.as_str(), b.as_str()]);
    let err = options.load_bytes(&bytes).unwrap_err();
    assert!(matches!(err, LoadError::Store(StoreError::AmbiguousKnownKeys { .. })), "{err:?}");
    let message = err.to_string();
    assert!(message.len() < 1000, "{} bytes", message.len());
    assert!(message.contains("bytes cut") && !message.contains('\u{1b}'), "{message}");
    assert!(message.contains(r"\u{1b}[2J.item_14"), "{message}");
}

/// `bytes` (a save from `old_save`, with an empty key-name section) ending with a key-name
/// section naming each path under its key hash 1 key, sealed again.
fn with_old_names(bytes: Vec<u8>, paths: &[&str]) -> Vec<u8> {
    let mut names: Vec<(Key, String)> =
        paths.iter().map(|p| (v1(p), format!("/{}", p.replace('.', "/")))).collect();
    names.sort();
    let mut section = (names.len() as u32).to_le_bytes().to_vec();
    for (key, pointer) in &names {
        section.extend_from_slice(&key.raw().to_le_bytes());
        section.extend_from_slice(&(pointer.len() as u32).to_le_bytes());
    }
    for (_, pointer) in &names {
        section.extend_from_slice(pointer.as_bytes());
    }
    let mut bytes = bytes;
    let sections = usize::from(u16::from_le_bytes([bytes[14], bytes[15]]));
    let index = (0..sections).find(|i| bytes[32 + 24 * i] == 13).expect("a key-name section");
    let entry = 32 + 24 * index;
    // The sections after it (the arena's chunk crcs, which a save may go without) are dropped.
    bytes[entry + 24..32 + 24 * sections].fill(0);
    bytes[14..16].copy_from_slice(&(index as u16 + 1).to_le_bytes());
    let offset = u64::from_le_bytes(bytes[entry + 8..entry + 16].try_into().unwrap());
    let mut out = bytes[..offset as usize].to_vec();
    // Key hash 1 saves hold their names as the flat list (kind 6).
    out[entry] = 6;
    out.extend_from_slice(&section);
    out.resize(out.len().next_multiple_of(8), 0);
    out[entry + 4..entry + 8].copy_from_slice(&crc32fast::hash(&section).to_le_bytes());
    out[entry + 16..entry + 24].copy_from_slice(&(section.len() as u64).to_le_bytes());
    let len = out.len() as u64;
    out[16..24].copy_from_slice(&len.to_le_bytes());
    as_key_hash_1(out)
}

/// Attack: a key hash 1 store could record both names of a pair that key hash 2 gives one
/// key (they had two keys then), while no entity holds one of them any more. Such a save
/// must still upgrade: the name that names no value gives way, since no option can drop it.
#[test]
fn a_saved_name_no_entity_holds_gives_way_to_a_held_one_that_rehashes_alike() {
    let bytes = with_old_names(
        old_save(&[&["sleep_haste_8", "name"]]),
        &["fury_sleep_272", "sleep_haste_8", "name"],
    );
    let store = Store::from_bytes(&bytes).unwrap();
    let hero = store.get(id("0v0t1")).unwrap();
    assert_eq!(hero.get_float("sleep_haste_8"), Some(0.0));
    assert_eq!(store.key_name(Key::parse("sleep_haste_8")).as_deref(), Some("sleep_haste_8"));
    assert_eq!(store.key_names().len(), 2);
    let err = store.check_key("fury_sleep_272").unwrap_err();
    let datacomp::KeyError::Collision { known, .. } = err else { panic!("{err}") };
    assert_eq!(known, "sleep_haste_8");

    // Neither held: the first in key hash 1 order stays, whichever way the table lists them.
    let first =
        if v1("sleep_haste_8") < v1("fury_sleep_272") { "sleep_haste_8" } else { "fury_sleep_272" };
    let bytes =
        with_old_names(old_save(&[&["name"]]), &["fury_sleep_272", "sleep_haste_8", "name"]);
    let store = Store::from_bytes(&bytes).unwrap();
    assert_eq!(store.key_name(Key::parse("sleep_haste_8")).as_deref(), Some(first));
    assert_eq!(store.key_names().len(), 2);

    // Both held: still an error naming both (a value would be lost).
    let bytes = with_old_names(
        old_save(&[&["sleep_haste_8"], &["fury_sleep_272"]]),
        &["fury_sleep_272", "sleep_haste_8"],
    );
    let err = Store::from_bytes(&bytes).unwrap_err();
    let LoadError::Store(StoreError::UpgradeCollision { key, .. }) = err else { panic!("{err:?}") };
    assert_eq!(key, Key::parse("sleep_haste_8"));
}

/// A save of key hash 2 (format 1.3, before key hash 3): its keys differ from key hash 3's only
/// where a name holds an empty segment (key hash 2 hashed it as 0). It loads with those keys
/// rehashed from their names, every other key as it was; a view reads it in place only when
/// no name holds an empty segment.
#[test]
fn a_key_hash_2_save_loads_with_its_empty_segment_keys_rehashed() {
    let mut store = Store::new();
    let text = r#"[{"": 1, "a": {"": 2, "b": 3}}, {"name": "x"}]"#;
    let ids = store.import(text, &datacomp::ImportOptions::strict()).unwrap().ids;
    let now = store.to_bytes();
    assert_eq!(format::describe(&now).unwrap().key_hash, format::KEY_HASH_FX32_EMPTY);
    // The same save as key hash 2 wrote it: `""` was key 0, `a.` was `a` combined with 0.
    let (empty, a_empty) = (Key::parse(""), Key::parse("a."));
    let (empty_v2, a_empty_v2) = (Key::from_raw(0), Key::new("a").child_key(Key::from_raw(0)));
    let mut old = now.clone();
    old[12] = 2;
    let (_, arena, len) = common::table(&old).into_iter().find(|e| e.0 == 5).unwrap();
    let mut replaced = 0;
    for at in (arena..arena + len).step_by(4) {
        let word = u32::from_le_bytes(old[at..at + 4].try_into().unwrap());
        for (new, v2) in [(empty, empty_v2), (a_empty, a_empty_v2)] {
            if word == new.raw() {
                old[at..at + 4].copy_from_slice(&v2.raw().to_le_bytes());
                replaced += 1;
            }
        }
    }
    assert_eq!(replaced, 2);
    common::reseal(&mut old);
    let loaded = Store::from_bytes(&old).unwrap();
    assert_eq!(loaded, store, "rehashed from the names");
    let blob = loaded.get(ids[0]).unwrap();
    assert_eq!((blob.get_float(empty), blob.get_float(a_empty)), (Some(1.0), Some(2.0)));
    assert_eq!(blob.get_float("a.b"), Some(3.0));
    assert_eq!(
        StoreView::new(&old).unwrap_err(),
        LoadError::Store(StoreError::KeyHashView { key_hash: 2 })
    );
    // A key hash 2 save whose names hold no empty segment reads in place as it is.
    let mut plain = Store::new();
    plain.import(r#"{"a": {"b": 3}}"#, &datacomp::ImportOptions::strict()).unwrap();
    let mut bytes = plain.to_bytes();
    bytes[12] = 2;
    common::reseal(&mut bytes);
    let view = StoreView::new(&bytes).unwrap();
    assert_eq!(view.iter().next().unwrap().1.get_float("a.b"), Some(3.0));
}
