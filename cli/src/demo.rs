//! The demo that `cargo run --release` runs: the bundled fixtures imported, one sheet shown and
//! edited, and a world of copies saved and loaded back, with sizes and timings.

use std::io::Write;
use std::time::Instant;

use datacomp::{Blob, ExportOptions, ImportOptions, Store, TextFormat};

use crate::output::{Bytes, Failure, print_buffer, print_entries};

/// The fixtures, built into the binary so that the demo runs from anywhere.
const FIXTURES: [(&str, &str); 4] = [
    ("party.json", include_str!("../demo/party.json")),
    ("sheets/classic.json", include_str!("../demo/sheets/classic.json")),
    ("sheets/wizard.json", include_str!("../demo/sheets/wizard.json")),
    ("sheets/golem.json", include_str!("../demo/sheets/golem.json")),
];

/// The character sheet the design comes from, as the Bitsquid and Stingray designers write
/// their data: SJSON.
const SJSON_SHEET: (&str, &str) =
    ("sjson/the_one.sjson", include_str!("../demo/sjson/the_one.sjson"));

/// Entities in the world that is saved and loaded.
const WORLD: usize = 100_000;

/// Bytes a second, for people.
fn rate(bytes: usize, seconds: f64) -> String {
    format!("{}/s", Bytes((bytes as f64 / seconds.max(1e-9)) as usize))
}

pub fn run(out: &mut dyn Write) -> Result<(), Failure> {
    writeln!(out, "datacomp demo: each entity's data in one pointerless buffer, every buffer in")?;
    writeln!(out, "one arena, and the world saved and loaded as raw bytes.\n")?;

    // 1. Import.
    let start = Instant::now();
    let mut store = Store::new();
    let mut json_bytes = 0;
    for (name, text) in FIXTURES {
        store
            .import(text, &ImportOptions::strict())
            .map_err(|e| Failure::at(format!("bundled fixture {name}"), e))?;
        json_bytes += text.len();
    }
    let elapsed = start.elapsed();
    let names: Vec<&str> = FIXTURES.iter().map(|(name, _)| *name).collect();
    writeln!(out, "1. Imported the bundled fixtures ({}):", names.join(", "))?;
    writeln!(
        out,
        "   {} entities and {} key names from {} of JSON in {elapsed:.1?}\n",
        store.len(),
        store.key_names().len(),
        Bytes(json_bytes)
    )?;

    // 2. One sheet.
    let (hero, sheet) = store
        .iter()
        .find(|(_, blob)| blob.get_str("name") == Some("The One"))
        .ok_or_else(|| Failure::Message("the party fixture has no \"The One\"".into()))?;
    writeln!(out, "2. The character sheet of \"The One\", entity {hero}:")?;
    print_entries(&store, sheet, out)?;
    print_buffer(&store, sheet, out)?;

    // 3. Edits.
    let position = store.insert_key_name("transform.position").map_err(|e| Failure::at(hero, e))?;
    let mut sheet = store.try_get_mut(hero).map_err(|e| Failure::at(hero, e))?;
    sheet.set("name", "The One, Bane of the Cave Troll").map_err(|e| Failure::at(hero, e))?;
    sheet.remove("status_effects.drunk");
    sheet.set(position, [12.5, 0.0, -3.25]).map_err(|e| Failure::at(hero, e))?;
    let sheet = store.try_get(hero).map_err(|e| Failure::at(hero, e))?;
    writeln!(
        out,
        "\n3. Edited in the store: the name grew, \"status_effects.drunk\" was removed and a\n   \
         float array was set. The blob outgrew its span, so it moved to the arena's end with\n   \
         room to grow:"
    )?;
    print_entries(&store, sheet, out)?;
    print_buffer(&store, sheet, out)?;

    // 4. A world of copies, saved and loaded.
    let originals: Vec<Blob> = store.iter().map(|(_, blob)| blob.to_blob()).collect();
    for blob in originals.iter().cycle().take(WORLD - store.len()) {
        store.insert(blob);
    }
    let stats = store.stats();
    let path = std::env::temp_dir().join(format!("datacomp-demo-{}.dcmp", std::process::id()));
    let start = Instant::now();
    // A file of its own: no other writer, so no lock.
    store.save(&path).map_err(|e| Failure::at(path.display(), format!("cannot write: {e}")))?;
    let save_time = start.elapsed();
    let file_len = std::fs::metadata(&path).map_or(0, |m| m.len() as usize);
    let start = Instant::now();
    let loaded = crate::files::load(&path);
    let load_time = start.elapsed();
    // The file goes whatever the load gave.
    let _ = std::fs::remove_file(&path);
    let loaded = loaded?;
    if loaded != store {
        return Err(Failure::at(path.display(), "the world read back differs from the one saved"));
    }
    // The same two steps in memory, without the disk.
    let start = Instant::now();
    let bytes = store.to_bytes();
    let encode_time = start.elapsed();
    let start = Instant::now();
    let decoded = Store::from_bytes(&bytes).map_err(|e| Failure::at("the saved bytes", e))?;
    let decode_time = start.elapsed();
    drop(decoded);
    writeln!(
        out,
        "\n4. A world of {} entities (copies of these {}) saved to {} and loaded back:",
        store.len(),
        originals.len(),
        path.display()
    )?;
    writeln!(
        out,
        "   file  {} ({} bytes an entity; the arena {}, {} of it live)",
        Bytes(file_len),
        file_len / store.len().max(1),
        Bytes(stats.arena_bytes),
        Bytes(stats.live_bytes),
    )?;
    writeln!(
        out,
        "   save  {save_time:>9.1?}  {:>12}  temp file, fsync, rename: never half a save",
        rate(file_len, save_time.as_secs_f64())
    )?;
    writeln!(
        out,
        "   load  {load_time:>9.1?}  {:>12}  every checksum, handle, span and blob checked",
        rate(file_len, load_time.as_secs_f64())
    )?;
    writeln!(
        out,
        "   in memory: to_bytes {encode_time:.1?} ({}), from_bytes {decode_time:.1?} ({}), \
         checks included",
        rate(bytes.len(), encode_time.as_secs_f64()),
        rate(bytes.len(), decode_time.as_secs_f64()),
    )?;
    writeln!(out, "   the loaded world equals the saved one, entity for entity.")?;

    // 5. The sheet in SJSON.
    let (name, text) = SJSON_SHEET;
    let mut sheets = Store::new();
    let ids = sheets
        .import(text, &ImportOptions::strict().format(TextFormat::Sjson))
        .map_err(|e| Failure::at(format!("bundled fixture {name}"), e))?
        .ids;
    let id = *ids.first().ok_or_else(|| Failure::at(name, "no entity in the sheet"))?;
    let sheet = sheets.try_get(id).map_err(|e| Failure::at(name, e))?;
    writeln!(
        out,
        "\n5. The sheet as the designers of Bitsquid and Stingray write it (SJSON, {name}):"
    )?;
    for line in text.lines() {
        writeln!(out, "   | {line}")?;
    }
    writeln!(out, "   imported as it is, key by key:")?;
    print_entries(&sheets, sheet, out)?;
    let again = sheets.export(id, &ExportOptions::sjson().non_finite_as_null()).unwrap_or_default();
    let same = if again.trim_end() == text.trim_end() { "the same text" } else { "different text" };
    writeln!(out, "   and `export --format sjson` writes it back: {same}.")?;
    writeln!(out, "\nNext: `datacomp --help`, or `cargo run --release -- --help`.")?;
    Ok(())
}
