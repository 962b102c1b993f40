//! `SavedKeyNames`: a save's key names read without its entities, against the names of the
//! store that wrote it, over every truncation and every bit flip of the file.

use datacomp::format::SavedKeyNames;
use datacomp::{ImportOptions, Key, LoadOptions, Store};

fn world() -> Store {
    let mut store = Store::new();
    let docs = [
        r#"{"name": "Orc", "stats": {"health": 30, "mana": 0}, "a.b": {"c/d": true}}"#,
        r#"{"name": "Elf", "position": [1, 2, 3], "status_effects": {"poisoned": false}}"#,
    ];
    for doc in docs {
        store.import(doc, &ImportOptions::strict()).expect("imports");
    }
    store
}

/// The names `names` gives for each of `store`'s named keys, and its count.
fn same_names(names: &SavedKeyNames, store: &Store) -> bool {
    names.len() == store.key_names().len()
        && store.key_names().all(|(key, name)| names.key_name(key) == Some(name))
}

#[test]
fn a_save_reads_back_the_names_of_the_store_that_wrote_it() {
    let store = world();
    let names = SavedKeyNames::from_bytes(&store.to_bytes()).expect("a save's names read");
    assert_eq!(names.len(), 6);
    assert!(same_names(&names, &store));
    assert!(names.contains_key(Key::path(&["a.b", "c/d"])));
    assert!(!names.contains_key(Key::parse("a.b.c/d")));
    assert_eq!(names.check_key("stats.health"), Ok(Key::parse("stats.health")));
    assert!(!names.contains_key(Key::parse("stats")), "an object's path names no key");
}

#[test]
fn every_truncation_and_bit_flip_is_an_error_or_the_same_names() {
    let store = world();
    let bytes = store.to_bytes();
    for len in 0..bytes.len() {
        assert!(SavedKeyNames::from_bytes(&bytes[..len]).is_err(), "cut at {len}");
    }
    let mut flipped = bytes.clone();
    for at in 0..bytes.len() {
        for bit in [0x01, 0x80] {
            flipped[at] ^= bit;
            match SavedKeyNames::from_bytes(&flipped) {
                // Only a flip in bytes the names do not depend on (the arena, whose crc this
                // does not check, or padding) leaves them readable, and then they are the same.
                Ok(names) => assert!(same_names(&names, &store), "flip {bit:#x} at {at}"),
                Err(_) => assert!(
                    Store::from_bytes(&flipped).is_err(),
                    "flip {bit:#x} at {at}: a load accepts what the names refuse"
                ),
            }
            flipped[at] ^= bit;
        }
    }
}

#[test]
fn a_view_gives_the_same_names_and_errors_as_a_read_of_the_names() {
    let store = world();
    let bytes = store.to_bytes();
    let (view, names) = LoadOptions::new().view_with_key_names(&bytes).expect("a view");
    assert_eq!(view.len(), 2);
    assert!(same_names(&names, &store));
    // A damaged names section is the same error either way.
    let mut flipped = bytes.clone();
    let at = bytes.windows(6).position(|w| w == b"health").expect("the names hold health");
    flipped[at] ^= 1;
    let from_view = LoadOptions::new().view_with_key_names(&flipped).map(|(_, n)| n.len());
    let read = SavedKeyNames::from_bytes(&flipped).map(|n| n.len());
    assert!(read.is_err());
    assert_eq!(from_view, read);
}
