//! Issue 32's prototype worlds: 10 goblin prototypes of 20 keys, and 10,000 goblins, each an
//! instance of one of them (in turn) that overrides 2 keys (its name and its health); beside
//! them the same world flattened (every goblin a standalone copy of what it reads, no links).

#![allow(dead_code)] // Each bench uses its own part of this module.

use datacomp::{Blob, Id, Key, Store};

/// Prototypes, instances.
pub const PROTOTYPES: usize = 10;
pub const GOBLINS: usize = 10_000;

/// A key every goblin inherits (the 12th of the prototype's 20), and one each overrides.
pub const INHERITED: Key = Key::path(&["stats", "armor"]);
pub const OWN: Key = Key::path(&["stats", "health"]);

/// The prototype `p` of a goblin: 20 keys (a name, a title, 14 numbers, 2 flags, a position,
/// a short bio).
fn prototype(p: usize) -> Blob {
    let mut sheet = Blob::new();
    sheet.set("name", format!("Goblin kind {p}").as_str()).unwrap();
    sheet.set("title", "the Goblin").unwrap();
    for (i, stat) in [
        "health",
        "mana",
        "strength",
        "dexterity",
        "intelligence",
        "wisdom",
        "charisma",
        "speed",
        "level",
        "armor",
        "xp",
        "gold",
        "luck",
        "reach",
    ]
    .iter()
    .enumerate()
    {
        sheet.set(format!("stats.{stat}").as_str(), (p * 100 + i) as f32).unwrap();
    }
    sheet.set("status_effects.poisoned", p.is_multiple_of(2)).unwrap();
    sheet.set("status_effects.hasted", false).unwrap();
    sheet.set("position", [p as f32, 0.0, -1.0]).unwrap();
    sheet.set("bio", "Small, green, and fond of shiny things.").unwrap();
    assert_eq!(sheet.len(), 20);
    sheet
}

/// Goblin `i`'s overrides: its name and its health.
fn overrides(i: usize) -> Blob {
    let mut sheet = Blob::new();
    sheet.set("name", format!("Goblin {i}").as_str()).unwrap();
    sheet.set(OWN, (i % 50) as f32).unwrap();
    sheet
}

/// The world of instances and the goblins' handles, in insertion order: each blob inserted
/// whole (packed, as an import appends them), then linked.
pub fn instances() -> (Store, Vec<Id>) {
    let mut store = Store::new();
    let kinds: Vec<Id> = (0..PROTOTYPES).map(|p| store.insert(&prototype(p))).collect();
    let goblins = (0..GOBLINS)
        .map(|i| {
            let id = store.insert(&overrides(i));
            store.set_prototype(id, Some(kinds[i % PROTOTYPES])).unwrap();
            id
        })
        .collect();
    (store, goblins)
}

/// The same world flattened, built the same way (the same handles): every goblin a
/// standalone copy of what it reads.
pub fn flattened() -> (Store, Vec<Id>) {
    let (instances, goblins) = instances();
    let mut store = Store::new();
    for p in 0..PROTOTYPES {
        store.insert(&prototype(p));
    }
    let ids: Vec<Id> =
        goblins.iter().map(|&id| store.insert(&instances.flatten(id).unwrap())).collect();
    assert_eq!(ids, goblins);
    (store, ids)
}
