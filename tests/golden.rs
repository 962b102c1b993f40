//! A save written by format 1.0, committed as `fixtures/world_v1.dcmp`: if a change to the code
//! cannot read it, or reads it differently, old saves would break.
//!
//! Regenerate only when the format's major version changes, as a new file:
//! `cargo test --test golden -- --ignored write_golden`.

use datacomp::{Blob, Id, Store, StoreView};

const GOLDEN: &[u8] = include_bytes!("../fixtures/world_v1.dcmp");
const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/world_v1.dcmp");

/// The world the golden file holds: the classic sheet, a richer one, a removed entity (its
/// handle stale) and a sheet that grew (so the arena holds garbage).
fn golden_world() -> Store {
    let mut store = Store::new();
    let mut classic = Blob::new();
    classic.set("name", "The One");
    classic.set("stats.health", 100);
    classic.set("stats.mana", 200);
    classic.set("status_effects.drunk", true);
    classic.set("status_effects.delirious", true);
    store.insert(&classic);
    let mut wizard = Blob::new();
    wizard.set("name", "Wizard");
    wizard.set("position", [12.5, 0.0, -3.25]);
    wizard.set("color", [0.0, 0.5, 0.5, 0.7]);
    let wizard = store.insert(&wizard);
    let goblin = store.insert(&[("name", "Goblin")].into_iter().collect());
    store.remove(goblin);
    store.get_mut(wizard).unwrap().set("bio", "Keeper of offsets, breaker of pointers.");
    store
}

fn id(text: &str) -> Id {
    text.parse().unwrap()
}

#[test]
fn the_golden_save_loads_with_its_contents() {
    let store = Store::from_bytes(GOLDEN).expect("format 1.0 saves load");
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
    assert!(store.get(id("2v0t1")).is_none(), "the removed goblin stays stale");
    assert!(store.stats().garbage_bytes > 0, "the wizard's old span is still garbage");

    assert_eq!(store.to_bytes(), GOLDEN, "a loaded golden save writes back byte for byte");
    assert_eq!(golden_world().to_bytes(), GOLDEN, "this build writes the golden bytes");

    // In place: copy into 8-byte aligned memory first (include_bytes! promises no alignment).
    let words: Vec<u64> =
        GOLDEN.chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
    let view = StoreView::new(zerocopy::IntoBytes::as_bytes(words.as_slice())).unwrap();
    assert_eq!(view.get(id("1v0t1")).unwrap(), wizard.to_blob());
}

#[test]
#[ignore = "writes fixtures/world_v1.dcmp: only for a new format version"]
fn write_golden() {
    golden_world().save(PATH).unwrap();
}
