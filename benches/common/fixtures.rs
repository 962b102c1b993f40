//! The JSON character sheets of `fixtures/sheets/`, one at a time or 10,000 in one array.

#![allow(dead_code)] // Each bench uses its own part of this module.

/// The text of `fixtures/sheets/<name>.json`.
pub fn sheet(name: &str) -> String {
    let path = format!("{}/../fixtures/sheets/{name}.json", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).expect("the fixture exists")
}

/// 10,000 character sheets (the classic and the wizard, alternating) in one JSON array.
pub fn ten_thousand_sheets() -> String {
    let (classic, wizard) = (sheet("classic"), sheet("wizard"));
    let sheets: Vec<&str> =
        (0..10_000).map(|i| if i % 2 == 0 { &*classic } else { &*wizard }).collect();
    format!("[{}]", sheets.join(","))
}
