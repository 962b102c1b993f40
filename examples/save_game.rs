//! A world of entities in one `Store`: imported from JSON, edited through handles, saved
//! atomically, loaded with full validation, and read in place with `StoreView`.
//!
//! Run with `cargo run --example save_game`.

use datacomp::{ExportOptions, HandleError, ImportOptions, KeyPath, Store, StoreView};

const PARTY: &str = include_str!("../fixtures/party.json");

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut world = Store::new();
    let ids = world.import(PARTY, &ImportOptions::strict())?.ids;
    let (hero, orc) = (ids[0], ids[1]);
    println!("imported {} entities: {ids:?}", world.len());

    // Handles are 64-bit generational ids; they print and parse as `index v generation t type`.
    println!("the hero is {hero}; parsed back: {:?}", hero.to_string().parse::<datacomp::Id>()?);

    // Keys new to the store get names (a key given as text, or a `const KeyPath`), so that
    // export writes them by name, not by hash. Every write returns a `Result`.
    const LUCK: KeyPath = KeyPath::dotted("stats.luck");
    let title = world.insert_key_name("title")?;
    // Edit in place; a blob that outgrows its span moves to the arena's end.
    let mut sheet = world.get_mut(hero).expect("just imported");
    sheet.set("stats.health", 95)?;
    sheet.set(title, "Keeper of Offsets")?;
    sheet.set(LUCK, 7_u8)?;
    world.remove(orc);
    assert_eq!(world.try_get(orc).unwrap_err(), HandleError::Stale { id: orc, current: Some(1) });
    println!("{:?}", world.stats());

    // Save: a header, a section table and raw buffers; temp file, fsync, rename.
    let path = std::env::temp_dir().join(format!("save-game-{}.dcmp", std::process::id()));
    world.save(&path)?;
    let loaded = Store::load(&path)?;
    assert_eq!(loaded, world); // same handles, same entries, same key names
    assert_eq!(loaded.get(hero).expect("saved").get_float("stats.health"), Some(95.0));
    assert!(loaded.get(orc).is_none(), "a stale handle stays stale after a load");

    // Or validate once and read in place, with no copy.
    let bytes = std::fs::read(&path)?;
    std::fs::remove_file(&path)?;
    let view = StoreView::new(&bytes)?;
    for (id, sheet) in view.iter() {
        println!("{id}: {} ({} keys)", sheet.get_str("name").unwrap_or("?"), sheet.len());
    }

    // Back to JSON for the designers.
    println!("{}", loaded.export(hero, &ExportOptions::json().pretty(true)).expect("live"));

    // A damaged save is refused with the reason, and nothing is loaded.
    let mut damaged = bytes.clone();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 1;
    println!("damaged: {}", Store::from_bytes(&damaged).unwrap_err());
    Ok(())
}
