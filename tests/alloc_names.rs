//! Memory of key names (issue 15 item 5): importing JSON of n bytes takes at most ~16n bytes
//! of heap at its peak plus a constant, and its save at most ~4n, whatever the shape of the
//! names. Before the key tree, a long prefix shared by M keys was stored M times:
//! `{"<L bytes>": {"aaaa": 0, ...}}` of 109 KB took 293 MiB to import and wrote a 100 MB save.
//!
//! dhat counts every allocation in this process, so this file holds a single test; each case
//! runs under its own profiler, whose peak is the case's.

use datacomp::{Blob, ImportOptions, Store};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// The peak of heap bytes while `f` runs, over what was live when it started, and its result.
fn peak<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let profiler = dhat::Profiler::builder().testing().build();
    let out = std::hint::black_box(f());
    let peak = dhat::HeapStats::get().max_bytes;
    drop(profiler);
    (out, peak)
}

/// `{"<prefix>": {"m0": 0, "m1": 1, ...}}`: every key shares a `prefix_len`-byte prefix.
fn deep_prefix(prefix_len: usize, members: usize) -> String {
    let mut text = format!("{{\"{}\":{{", "p".repeat(prefix_len));
    for i in 0..members {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!("\"m{i}\":{}", i % 10));
    }
    text.push_str("}}");
    text
}

/// Imports `text` into a new store and saves it: checks the peak and the save's size against
/// `16n + 64 KiB` and `4n + 4 KiB` plus 4 bytes an entity, and returns them.
///
/// The 4 bytes are the index's, whatever the JSON: each entity's end offset in the arena
/// (format 1.3; a fresh import's handle map is an identity map, whose slots and links are
/// left out, and an empty entity has no bytes). It was 28 in format 1.2: a span (8), a
/// dense-to-slot link (4), a slot (8) and the smallest blob (8). `[{},{},...]` has 3 bytes of
/// JSON an entity, so its save is about 1.3n (9.3n in format 1.2); no name is in it.
fn check(case: &str, text: &str, options: &ImportOptions) -> (usize, usize) {
    let n = text.len();
    let (store, import_peak) = peak(|| {
        let mut store = Store::new();
        store.import(text, options).unwrap();
        store
    });
    let (save, save_peak) = peak(|| store.to_bytes());
    eprintln!(
        "{case}: {n} bytes of JSON: import peak {import_peak} B ({:.1}n), save {} B ({:.1}n), \
         save peak {save_peak} B",
        import_peak as f64 / n as f64,
        save.len(),
        save.len() as f64 / n as f64,
    );
    assert!(import_peak <= 16 * n + 65_536, "{case}: import peak {import_peak} B for {n} B");
    let bound = 4 * n + 4096 + 4 * store.len();
    assert!(save.len() <= bound, "{case}: save of {} B for {n} B", save.len());
    let loaded = Store::from_bytes(&save).unwrap();
    assert_eq!(loaded, store, "{case}");
    (import_peak, save.len())
}

/// Sizes are cut by this in a debug build, where dhat's counting is slow; release builds
/// (`cargo test --release --test alloc_names`) run the sizes.
const CUT: usize = if cfg!(debug_assertions) { 8 } else { 1 };

#[test]
fn names_take_memory_and_save_bytes_in_proportion_to_the_json() {
    // The 109 KB and 218 KB documents, sized as they were.
    let small = deep_prefix(50_000 / CUT, 6_500 / CUT);
    let large = deep_prefix(100_000 / CUT, 13_000 / CUT);
    assert!((100_000..120_000).contains(&(small.len() * CUT)), "{}", small.len());
    assert!((200_000..240_000).contains(&(large.len() * CUT)), "{}", large.len());
    check("deep prefix, 109 KB", &small, &ImportOptions::strict());
    let (peak_large, save_large) = check("deep prefix, 218 KB", &large, &ImportOptions::strict());
    // Twice the document, about twice the memory: linear, not quadratic (it was 4x).
    let (peak_small, save_small) =
        check("deep prefix, 109 KB again", &small, &ImportOptions::strict());
    assert!(peak_large < 3 * peak_small, "{peak_large} vs {peak_small}");
    assert!(save_large < 3 * save_small, "{save_large} vs {save_small}");

    // A blob import keeps no names, but its claims of paths are a tree as well.
    let (_, blob_peak) = peak(|| Blob::import(&small, &ImportOptions::strict()).unwrap());
    eprintln!("deep prefix, 109 KB, Blob::import: peak {blob_peak} B");
    assert!(blob_peak <= 16 * small.len() + 65_536, "{blob_peak}");

    // Nesting as deep as serde_json reads (127 levels) of long names, each level with a few
    // values: every level's name once.
    let mut nested = String::new();
    for i in 0..120 {
        nested.push_str(&format!("{{\"a\":1,\"b\":true,\"{}{i}\":", "n".repeat(2_000 / CUT)));
    }
    nested.push('1');
    nested.push_str(&"}".repeat(120));
    check("120 levels of 2 KB names", &nested, &ImportOptions::strict());

    // Arrays of objects, leniently: every element's index is a segment.
    let elements: Vec<String> =
        (0..5_000 / CUT).map(|i| format!("{{\"type\":\"natural\",\"value\":{i}}}")).collect();
    let arrays = format!("{{\"armor_class\":[{}]}}", elements.join(","));
    check("5,000 objects in an array", &arrays, &ImportOptions::lenient());

    // Many empty entities: `[{},{},...]`.
    let empties = format!("[{}]", vec!["{}"; 100_000 / CUT].join(","));
    let (_, save) = check("100,000 empty entities", &empties, &ImportOptions::strict());
    assert!(save <= 4 * (100_000 / CUT) + 4096, "{save} B: more than 4 bytes an entity");
}
