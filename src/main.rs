//! `datacomp`: for now, a demo of one entity's blob. Run it with `cargo run --release`.
//!
//! It builds the classic character sheet, prints its entries and the layout of its buffer,
//! edits it, writes the raw bytes to a temporary file, reads them back with validation and
//! checks that nothing changed.

use std::process::ExitCode;
use std::time::Instant;

use datacomp::{Blob, Key};

/// The names of the sheet's keys: a blob stores only their hashes.
const NAMES: [&str; 7] = [
    "name",
    "stats.health",
    "stats.mana",
    "status_effects.drunk",
    "status_effects.delirious",
    "position",
    "title",
];

fn name_of(key: Key) -> String {
    NAMES.iter().find(|n| Key::parse(n) == key).map_or_else(|| key.to_string(), |n| (*n).to_owned())
}

fn print_entries(sheet: &Blob) {
    for (key, value) in sheet {
        println!("  {:<26} {key}  {value:?}", name_of(key));
    }
}

/// The buffer drawn to scale: `H` header, `.` free, `P` payload (holes included).
fn print_layout(label: &str, sheet: &Blob) {
    const WIDTH: usize = 64;
    let len = sheet.byte_len();
    let cells = |bytes: usize| (bytes * WIDTH + len / 2) / len;
    let header = cells(sheet.header_bytes());
    let free = cells(sheet.free_bytes());
    let payload = WIDTH - header - free;
    println!(
        "{label:<9} [{}{}{}]  {len} bytes: {} header, {} free, {} payload ({} of it holes)",
        "H".repeat(header),
        ".".repeat(free),
        "P".repeat(payload),
        sheet.header_bytes(),
        sheet.free_bytes(),
        sheet.payload_bytes(),
        sheet.hole_bytes(),
    );
}

fn run() -> Result<(), datacomp::Error> {
    // Room for the edits below, so that they show holes and free space instead of regrowing.
    let mut sheet = Blob::with_capacity(8, 96);
    sheet.set("name", "The One");
    sheet.set("stats.health", 100);
    sheet.set("stats.mana", 200);
    sheet.set("status_effects.drunk", true);
    sheet.set("status_effects.delirious", true);
    println!("The classic character sheet, as one blob:");
    print_entries(&sheet);
    print_layout("built", &sheet);

    sheet.set("position", [12.5, 0.0, -3.25]);
    sheet.set("name", "The One and Only"); // outgrows its place below `position`: a hole
    sheet.remove("status_effects.drunk");
    sheet.set("title", "Keeper of Offsets");
    print_layout("edited", &sheet);
    sheet.compact();
    print_layout("compacted", &sheet);
    sheet.shrink_to_fit();
    print_layout("shrunk", &sheet);

    let path = std::env::temp_dir().join(format!("datacomp-demo-{}.blob", std::process::id()));
    let start = Instant::now();
    std::fs::write(&path, sheet.as_bytes())?;
    let bytes = std::fs::read(&path)?;
    let loaded = Blob::from_bytes(&bytes)?;
    let elapsed = start.elapsed();
    std::fs::remove_file(&path)?;
    if loaded != sheet {
        return Err(std::io::Error::other("the blob read back differs from the one written").into());
    }
    println!(
        "Wrote {} bytes to {}, read them back and validated them in {elapsed:.1?}: equal.",
        bytes.len(),
        path.display()
    );
    println!("After the round trip:");
    print_entries(&loaded);
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("datacomp: {e}");
            ExitCode::FAILURE
        }
    }
}
