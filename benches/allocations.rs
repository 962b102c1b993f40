//! Allocation counts for the blob benchmarks' operations, beside the same peers: time is half
//! the cost of scattered data, the allocator's work and the heap's fragmentation the other.
//!
//! Run: `cargo bench --bench allocations`. Prints a table; `tests/alloc.rs` asserts datacomp's
//! own counts.

#[path = "common/changed_world.rs"]
mod changed_world;
#[path = "common/fixtures.rs"]
mod fixtures;
#[path = "common/sheet.rs"]
mod sheet;

use std::hint::black_box;

use datacomp::{Blob, ExportOptions, ImportOptions, Store, StorePatch};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

fn count<T>(f: impl FnOnce() -> T) -> u64 {
    let before = dhat::HeapStats::get().total_blocks;
    let out = black_box(f());
    let after = dhat::HeapStats::get().total_blocks;
    drop(out);
    after - before
}

fn main() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let blob = sheet::build_blob();
    let bytes = blob.as_bytes().to_vec();
    let fx = sheet::build_fxhashmap();
    let strings = sheet::build_string_hashmap();
    let json = sheet::build_json();
    let text = serde_json::to_string(&json).expect("the sheet serializes");
    let keys = sheet::keys();

    let mut changed = blob.clone();
    changed.set("stats.health", 95.0).unwrap();
    changed.set("bio", "Changed.").unwrap();
    changed.remove("status_effects.drunk");
    let patch = Blob::diff(&blob, &changed);

    let (base, target) = changed_world::worlds();
    let (base_json, target_json) =
        (changed_world::json_world(&base), changed_world::json_world(&target));
    let delta = StorePatch::diff(&base, &target).to_bytes();
    let target_bytes = target.to_bytes();
    let mut world = base.clone();
    let sheets = fixtures::ten_thousand_sheets();
    let mut imported = Store::new();
    imported.import(&sheets, &ImportOptions::strict()).expect("the sheets import");
    let tree: serde_json::Value = serde_json::from_str(&sheets).expect("the sheets parse");

    let rows = [
        ("build/15_keys", "datacomp_with_capacity", count(sheet::build_blob)),
        ("build/15_keys", "datacomp_new", count(|| sheet::SHEET.into_iter().collect::<Blob>())),
        ("build/15_keys", "fxhashmap_u32", count(sheet::build_fxhashmap)),
        ("build/15_keys", "hashmap_string", count(sheet::build_string_hashmap)),
        ("build/15_keys", "serde_json", count(sheet::build_json)),
        ("clone/15_keys", "datacomp", count(|| blob.clone())),
        ("clone/15_keys", "fxhashmap_u32", count(|| fx.clone())),
        ("clone/15_keys", "hashmap_string", count(|| strings.clone())),
        ("clone/15_keys", "serde_json", count(|| json.clone())),
        ("from_bytes/15_keys", "memcpy", count(|| bytes.clone())),
        ("from_bytes/15_keys", "datacomp", count(|| Blob::from_bytes(&bytes))),
        (
            "from_bytes/15_keys",
            "serde_json_from_str",
            count(|| serde_json::from_str::<serde_json::Value>(&text)),
        ),
        (
            "get/15_keys",
            "datacomp",
            count(|| keys.iter().filter(|&&k| blob.get(k).is_some()).count()),
        ),
        ("patch/15_key_sheet_3_changes", "datacomp_diff", count(|| Blob::diff(&blob, &changed))),
        (
            "patch/15_key_sheet_3_changes",
            "datacomp_apply (to a blob with no room)",
            count(|| patch.apply(&mut blob.clone())) - 1,
        ),
        (
            "diff/100k_sheets_1pct_changed",
            "datacomp_store_diff",
            count(|| StorePatch::diff(&base, &target)),
        ),
        (
            "diff/100k_sheets_1pct_changed",
            "json_maps_diff",
            count(|| changed_world::json_diff(&base_json, &target_json)),
        ),
        (
            "apply/100k_sheets_1pct_changed",
            "datacomp_delta_from_bytes_and_apply",
            count(|| StorePatch::from_bytes(&delta).unwrap().apply(&mut world).unwrap()),
        ),
        (
            "apply/100k_sheets_1pct_changed",
            "datacomp_full_from_bytes",
            count(|| Store::from_bytes(&target_bytes).unwrap()),
        ),
        (
            "import/10000_sheets",
            "datacomp_store",
            count(|| Store::new().import(&sheets, &ImportOptions::strict())),
        ),
        (
            "import/10000_sheets",
            "serde_json_value",
            count(|| serde_json::from_str::<serde_json::Value>(&sheets)),
        ),
        (
            "export/10000_sheets",
            "datacomp_compact",
            count(|| imported.export_all(&ExportOptions::json().non_finite_as_null())),
        ),
        ("export/10000_sheets", "serde_json_compact", count(|| serde_json::to_string(&tree))),
        (
            "export/10000_sheets",
            "datacomp_pretty",
            count(|| imported.export_all(&ExportOptions::json().pretty(true).non_finite_as_null())),
        ),
        ("export/10000_sheets", "serde_json_pretty", count(|| serde_json::to_string_pretty(&tree))),
    ];
    println!("| operation | implementation | allocations |");
    println!("|---|---|---:|");
    for (operation, name, allocations) in rows {
        println!("| {operation} | {name} | {allocations} |");
    }
}
