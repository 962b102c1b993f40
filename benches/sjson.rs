//! SJSON import and export of the character sheets of `fixtures/sjson/` (the classic and the
//! wizard, alternating), beside the JSON import of the same sheets as JSON (`fixtures/sheets/`),
//! `serde_json::from_str::<serde_json::Value>` of that JSON (the tree a user would otherwise
//! parse into) and memcpy of the SJSON text into a warm and into a fresh buffer (the physical
//! limit).
//!
//! The `serde_sjson` crate is not a peer here: it reads no number with a fraction (`0.5` stops
//! at the `.`), so it cannot read these sheets, and it is GPL-3.0.
//!
//! Run: `cargo bench --bench sjson`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use datacomp::{Blob, ExportOptions, ImportOptions, Store, TextFormat};

const SHEETS: usize = 10_000;

fn fixture(path: &str) -> String {
    let path = format!("{}/../fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).expect("the fixture exists")
}

/// The classic and the wizard, as SJSON and as JSON.
fn sheets() -> [(String, String); 2] {
    ["classic", "wizard"].map(|name| {
        (fixture(&format!("sjson/{name}.sjson")), fixture(&format!("sheets/{name}.json")))
    })
}

/// Every other sheet the classic, the rest the wizard.
fn alternating<T>(pair: &[T; 2]) -> impl Iterator<Item = &T> {
    (0..SHEETS).map(move |i| &pair[i % 2])
}

fn import_one(c: &mut Criterion) {
    let [_, (sjson, json)] = sheets();
    let mut group = c.benchmark_group("import_sjson/wizard_sheet");
    group.bench_function("datacomp_blob_sjson", |b| {
        b.iter(|| {
            Blob::import(black_box(&sjson), &ImportOptions::strict().format(TextFormat::Sjson))
                .unwrap()
        })
    });
    group.bench_function("datacomp_blob_json", |b| {
        b.iter(|| Blob::import(black_box(&json), &ImportOptions::strict()).unwrap())
    });
    group.bench_function("serde_json_value", |b| {
        b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(&json)).unwrap())
    });
    let mut warm = vec![0_u8; sjson.len()];
    group.bench_function("memcpy_warm", |b| {
        b.iter(|| warm.copy_from_slice(black_box(sjson.as_bytes())))
    });
    group.bench_function("memcpy_fresh", |b| b.iter(|| black_box(sjson.as_bytes()).to_vec()));
    group.finish();
}

/// 10,000 sheets, each a document of its own, as designers keep them (one file a sheet), into
/// one store.
fn import_documents(c: &mut Criterion) {
    let pair = sheets();
    let sjson: Vec<&str> = alternating(&pair).map(|(s, _)| s.as_str()).collect();
    let json: Vec<&str> = alternating(&pair).map(|(_, j)| j.as_str()).collect();
    let bytes: usize = sjson.iter().map(|s| s.len()).sum();
    println!("import_sjson/10000_documents: {bytes} bytes of SJSON");
    let mut group = c.benchmark_group("import_sjson/10000_documents");
    group.sample_size(10);
    group.bench_function("datacomp_store_sjson", |b| {
        b.iter(|| {
            let mut store = Store::new();
            for text in &sjson {
                store
                    .import(black_box(text), &ImportOptions::strict().format(TextFormat::Sjson))
                    .unwrap();
            }
            store
        })
    });
    group.bench_function("datacomp_store_json", |b| {
        b.iter(|| {
            let mut store = Store::new();
            for text in &json {
                store.import(black_box(text), &ImportOptions::strict()).unwrap();
            }
            store
        })
    });
    group.bench_function("serde_json_value", |b| {
        b.iter(|| {
            json.iter()
                .map(|text| serde_json::from_str::<serde_json::Value>(black_box(text)).unwrap())
                .collect::<Vec<_>>()
        })
    });
    let mut warm = vec![0_u8; bytes];
    group.bench_function("memcpy_warm", |b| {
        b.iter(|| {
            let mut at = 0;
            for text in &sjson {
                warm[at..at + text.len()].copy_from_slice(black_box(text.as_bytes()));
                at += text.len();
            }
        })
    });
    group.bench_function("memcpy_fresh", |b| {
        b.iter(|| sjson.iter().map(|text| black_box(text.as_bytes()).to_vec()).collect::<Vec<_>>())
    });
    group.finish();
}

/// The same 10,000 sheets in one document: an SJSON array of objects, and a JSON array.
fn import_array(c: &mut Criterion) {
    let pair = sheets();
    let braced: Vec<String> = alternating(&pair).map(|(s, _)| format!("{{\n{s}}}")).collect();
    let sjson = format!("[\n{}\n]", braced.join("\n"));
    let json: Vec<&str> = alternating(&pair).map(|(_, j)| j.as_str()).collect();
    let json = format!("[{}]", json.join(","));
    println!("import_sjson/10000_sheets: {} bytes of SJSON, {} of JSON", sjson.len(), json.len());
    let mut group = c.benchmark_group("import_sjson/10000_sheets");
    group.sample_size(10);
    group.bench_function("datacomp_store_sjson", |b| {
        b.iter(|| {
            let mut store = Store::new();
            store
                .import(black_box(&sjson), &ImportOptions::strict().format(TextFormat::Sjson))
                .unwrap();
            store
        })
    });
    group.bench_function("datacomp_store_json", |b| {
        b.iter(|| {
            let mut store = Store::new();
            store.import(black_box(&json), &ImportOptions::strict()).unwrap();
            store
        })
    });
    group.bench_function("serde_json_value", |b| {
        b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(&json)).unwrap())
    });
    let mut warm = vec![0_u8; sjson.len()];
    group.bench_function("memcpy_warm", |b| {
        b.iter(|| warm.copy_from_slice(black_box(sjson.as_bytes())))
    });
    group.bench_function("memcpy_fresh", |b| b.iter(|| black_box(sjson.as_bytes()).to_vec()));
    group.finish();
}

/// The 10,000 sheets written back: SJSON, pretty JSON, and `serde_json` writing the tree.
fn export(c: &mut Criterion) {
    let pair = sheets();
    let json: Vec<&str> = alternating(&pair).map(|(_, j)| j.as_str()).collect();
    let json = format!("[{}]", json.join(","));
    let mut store = Store::new();
    store.import(&json, &ImportOptions::strict()).unwrap();
    let tree: serde_json::Value = serde_json::from_str(&json).unwrap();
    let written = store.export_all(&ExportOptions::sjson()).unwrap();
    let mut group = c.benchmark_group("export_sjson/10000_sheets");
    group.sample_size(10);
    group.bench_function("datacomp_sjson", |b| {
        b.iter(|| black_box(&store).export_all(&ExportOptions::sjson().non_finite_as_null()))
    });
    // What the command runs: NaN and infinity refused as each entity's tree is built.
    group.bench_function("datacomp_try_sjson", |b| {
        b.iter(|| black_box(&store).export_all(&ExportOptions::sjson()).unwrap())
    });
    group.bench_function("datacomp_json_pretty", |b| {
        b.iter(|| {
            black_box(&store).export_all(&ExportOptions::json().pretty(true).non_finite_as_null())
        })
    });
    group.bench_function("serde_json_pretty", |b| {
        b.iter(|| serde_json::to_string_pretty(black_box(&tree)).unwrap())
    });
    let mut warm = vec![0_u8; written.len()];
    group.bench_function("memcpy_warm", |b| {
        b.iter(|| warm.copy_from_slice(black_box(written.as_bytes())))
    });
    group.bench_function("memcpy_fresh", |b| b.iter(|| black_box(written.as_bytes()).to_vec()));
    group.finish();
}

criterion_group!(benches, import_one, import_documents, import_array, export);
criterion_main!(benches);
