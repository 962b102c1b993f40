//! `Key`: golden hashes (keys are saved, so they must never change) and path composition.

use datacomp::Key;
use proptest::prelude::*;

/// Hashes pinned at the crate's first release. Saved files hold these numbers: if this test
/// fails, every save written before the change reads back with its keys lost.
#[test]
fn golden_hashes_never_change() {
    let golden: [(&str, u32, u32); 7] = [
        // (path, Key::new(path), Key::parse(path))
        ("", 0x0000_0000, 0x0000_0000),
        ("name", 0x0114_0106, 0x0114_0106),
        ("stats", 0x7870_cb3f, 0x7870_cb3f),
        ("health", 0x4278_c3f4, 0x4278_c3f4),
        ("position", 0xd053_329f, 0xd053_329f),
        ("stats.health", 0x3091_398b, 0x2dd3_91b7),
        ("status_effects.drunk", 0xb0eb_4db4, 0x093c_6f30),
    ];
    for (path, new, parse) in golden {
        assert_eq!(Key::new(path).raw(), new, "Key::new({path:?})");
        assert_eq!(Key::parse(path).raw(), parse, "Key::parse({path:?})");
    }
}

#[test]
fn the_four_spellings_of_a_path_agree() {
    const HEALTH: Key = Key::path(&["stats", "health"]);
    assert_eq!(HEALTH, Key::new("stats").child("health"));
    assert_eq!(HEALTH, Key::parse("stats.health"));
    assert_eq!(HEALTH, Key::from("stats.health"));
    assert_eq!(HEALTH, Key::new("stats").child_key(Key::new("health")));
    assert_eq!(HEALTH.raw(), 0x2dd3_91b7);
}

#[test]
fn order_and_nesting_matter() {
    assert_ne!(Key::parse("a.b"), Key::parse("b.a"));
    assert_ne!(Key::parse("a.b"), Key::new("a.b"));
    assert_ne!(Key::parse("a"), Key::parse("a."));
    assert_ne!(Key::parse("a..b"), Key::parse("a.b"));
    // A segment that contains a dot, given on its own, is one segment.
    assert_eq!(Key::path(&["a.b", "c"]), Key::new("a.b").child("c"));
    assert_ne!(Key::path(&["a.b", "c"]), Key::parse("a.b.c"));
}

#[test]
fn empty_path_is_the_empty_segment() {
    assert_eq!(Key::path(&[]), Key::new(""));
    assert_eq!(Key::parse(""), Key::new(""));
    assert_eq!(Key::default(), Key::new(""));
}

#[test]
fn debug_and_display_are_hash_and_eight_hex_digits() {
    let key = Key::parse("stats.health");
    assert_eq!(format!("{key:?}"), "#2dd391b7");
    assert_eq!(key.to_string(), "#2dd391b7");
    assert_eq!(Key::from_raw(0xab).to_string(), "#000000ab");
}

proptest! {
    #[test]
    fn parse_is_path_of_the_split(segments in prop::collection::vec("[a-z_é0-9]{0,12}", 1..6)) {
        let refs: Vec<&str> = segments.iter().map(String::as_str).collect();
        prop_assert_eq!(Key::parse(&segments.join(".")), Key::path(&refs));
    }

    #[test]
    fn raw_round_trips(raw in any::<u32>()) {
        prop_assert_eq!(Key::from_raw(raw).raw(), raw);
    }
}
