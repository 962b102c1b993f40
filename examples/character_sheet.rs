//! One character sheet as one blob: build it, read it, edit it, look at its buffer, and round
//! trip it through bytes and JSON.
//!
//! Run with `cargo run --example character_sheet`.

use datacomp::blob::RegionKind;
use datacomp::{Blob, ImportOptions, KeyPath, Value};

// Keys are hashed paths; a `const` one is hashed at compile time, costs nothing on reads, and
// keeps its name for a store to export.
const HEALTH: KeyPath = KeyPath::dotted("stats.health");
const MANA: KeyPath = KeyPath::dotted("stats.mana");

/// The buffer to scale: `H` header, `.` free, `#` payload, `_` holes.
fn draw(label: &str, sheet: &Blob) {
    let len = sheet.byte_len();
    let mut bar = String::new();
    for (kind, offset, bytes) in sheet.as_blob_ref().regions() {
        let cells = ((offset + bytes) * 48 / len - offset * 48 / len).max(1);
        let c = match kind {
            RegionKind::Header => 'H',
            RegionKind::Free => '.',
            RegionKind::Payload(_) => '#',
            RegionKind::Hole => '_',
        };
        bar.extend(std::iter::repeat_n(c, cells));
    }
    println!("{label:<10} |{bar}| {len} bytes, {} of them holes", sheet.hole_bytes());
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Room for 8 keys and 96 payload bytes: one allocation, and edits below fit in place.
    let mut sheet = Blob::with_capacity(8, 96);
    sheet.set("name", "The One")?;
    sheet.set(HEALTH, 100)?;
    sheet.set(MANA, 200)?;
    sheet.set("status_effects.drunk", true)?;
    sheet.set("position", [12.5, 0.0, -3.25])?;
    draw("built", &sheet);

    // Typed reads borrow from the buffer: the float array is not copied.
    assert_eq!(sheet.get_float(HEALTH), Some(100.0));
    assert_eq!(sheet.get_str("name"), Some("The One"));
    let position: &[f32] = sheet.get_floats("position").unwrap_or_default();
    println!("position {position:?}, health {:?}", sheet.get(HEALTH));

    // Edits: a float in place, a longer string leaves a hole, a removal keeps the order.
    sheet.set(HEALTH, 95)?;
    sheet.set("name", "The One and Only")?;
    sheet.remove("status_effects.drunk");
    draw("edited", &sheet);
    sheet.compact();
    draw("compacted", &sheet);
    sheet.shrink_to_fit();
    draw("shrunk", &sheet);

    // The bytes are the blob: no pointers inside, so they go to disk or the network as they
    // are, and come back with every offset checked.
    let bytes = sheet.as_bytes().to_vec();
    let loaded = Blob::from_bytes(&bytes)?;
    assert_eq!(loaded, sheet);
    println!("{} bytes round trip: {:?}", bytes.len(), loaded);

    // Designers write JSON; the importer streams it straight into a blob.
    let from_json = Blob::import(
        r#"{"name": "Orc", "stats": {"health": 30, "mana": 0}, "loot": [0.5, 0.25]}"#,
        &ImportOptions::strict(),
    )?;
    assert_eq!(from_json.get(MANA), Some(Value::Float(0.0)));
    println!("from JSON: {from_json:?}");

    // Bad bytes are an error that says where, never a panic.
    let mut corrupt = bytes.clone();
    corrupt[0] = 200; // the key count
    println!("corrupted: {}", Blob::from_bytes(&corrupt).unwrap_err());
    Ok(())
}
