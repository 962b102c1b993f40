//! SJSON import, strict and lenient, of any text: an error that leaves the store byte for byte
//! as it was, or entities that pass every check, agree between `Blob::import` and
//! `Store::import` of SJSON, and export back to SJSON that imports as the same entities. Text that
//! the JSON importer accepts, the SJSON reader accepts as the same entities (JSON is SJSON).
#![no_main]

use datacomp::{Blob, BlobRef, ExportOptions, ImportOptions, Imported, Store, TextFormat, Value};
use datacomp_fuzz::{check_blob, check_report_pair, check_store, export_alone};
use libfuzzer_sys::fuzz_target;

/// Whether two floats read from the same decimal text agree: the SJSON reader rounds once to
/// `f32`, `serde_json` through `f64` (one unit in the last place apart at most), and reads
/// `-0` as the integer 0.
fn same_float(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || a == b || a.to_bits().abs_diff(b.to_bits()) == 1
}

/// Whether `json` and `sjson` hold the same keys with the same values, floats as above.
fn same_entries(json: BlobRef<'_>, sjson: BlobRef<'_>) -> bool {
    json.len() == sjson.len()
        && json.iter().all(|(key, value)| match (value, sjson.get(key)) {
            (Value::Float(a), Some(Value::Float(b))) => same_float(a, b),
            (Value::Floats(a), Some(Value::Floats(b))) => {
                a.len() == b.len() && a.iter().zip(b).all(|(&a, &b)| same_float(a, b))
            }
            (a, b) => b.is_some_and(|b| b.is_identical(&a)),
        })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let strict = ImportOptions::strict().format(TextFormat::Sjson);
    let lenient = ImportOptions::lenient().format(TextFormat::Sjson);

    // One entity: a strict success is a lenient success.
    let strict_blob = Blob::import(text, &strict);
    let lenient_blob = Blob::import(text, &lenient);
    if let Ok(blob) = &strict_blob {
        check_blob(blob.as_blob_ref());
        let other = lenient_blob.as_ref().expect("what strict accepts, lenient accepts");
        assert!(other == blob, "strict and lenient read {text:?} differently");
    }
    if let Ok(blob) = &lenient_blob {
        check_blob(blob.as_blob_ref());
    }
    if let Err(e) = &strict_blob {
        assert!(e.line() >= 1 && e.column() >= 1, "{text:?}: {e}");
    }

    // JSON is SJSON: the same entries (nulls too), and (a one-entity store import reports) the
    // same arrays converted and empty objects. (Not the digits lost: serde_json may read a
    // long decimal one f64 step from the nearest, SJSON never.)
    for options in [ImportOptions::strict(), ImportOptions::lenient()] {
        let sjson_options = options.format(TextFormat::Sjson);
        if let Ok(json) = Blob::import(text, &options) {
            let sjson = Blob::import(text, &sjson_options);
            let sjson =
                sjson.unwrap_or_else(|e| panic!("{text:?}: JSON reads it, SJSON fails: {e}"));
            assert!(same_entries(json.as_blob_ref(), sjson.as_blob_ref()), "{text:?}");
            let report = |options| Store::new().import(text, &options).map(|i| i.report);
            let json_report = report(options).expect("a lone object a blob reads, a store reads");
            let sjson_report = report(sjson_options).expect("and so in SJSON");
            assert_eq!(json_report.converted_arrays, sjson_report.converted_arrays);
            assert_eq!(json_report.first_converted, sjson_report.first_converted);
            assert_eq!(json_report.empty_objects, sjson_report.empty_objects);
        }
    }

    // The report of the strict store import, when it succeeds.
    let mut strict_report = None;
    for options in [strict, lenient] {
        // A store that already holds an entity and a name, to see that a failure keeps both.
        let mut store = Store::new();
        store.import("name = \"before\"\nstats = { health = 1 }", &strict).unwrap();
        let before = store.to_bytes();
        match store.import(text, &options) {
            Err(e) => {
                assert_eq!(store.to_bytes(), before, "a failed import changed the store");
                assert!(!e.to_string().is_empty());
                assert!(strict_report.is_none(), "what strict accepts, lenient accepts");
            }
            Ok(Imported { ids, report }) => {
                assert_eq!(store.len(), 1 + ids.len());
                check_store(&store);
                check_report_pair(&mut strict_report, options.is_lenient(), report);
                // A lone object imports as `Blob::import` reads it.
                let single = if options.is_lenient() {
                    lenient_blob.as_ref().ok()
                } else {
                    strict_blob.as_ref().ok()
                };
                if let (Some(blob), [id]) = (single, &ids[..]) {
                    assert!(*blob == store.get(*id).unwrap(), "{text:?}: store and blob differ");
                }
                // Export, then import into a new store: the same entities, one by one and all
                // at once. Leniently: a lenient import's arrays of strings or mixed values
                // export as arrays, which only a lenient import reads back.
                let mut again = Store::new();
                for &id in &ids {
                    let (sjson, expected) = export_alone(&store, id, ExportOptions::sjson());
                    let copy = again
                        .import(&sjson, &lenient)
                        .unwrap_or_else(|e| panic!("the export {sjson:?} of {text:?} fails: {e}"));
                    assert!(
                        again.get(copy.ids[0]).unwrap().to_blob() == expected,
                        "{text:?} exported as {sjson:?} imports differently"
                    );
                }
                let all = store.export_all(&ExportOptions::sjson()).unwrap();
                let mut copy = Store::new();
                let copied = copy.import(&all, &lenient).unwrap().ids;
                assert_eq!(copied.len(), store.len(), "{all:?}");
                for ((_, a), (_, b)) in copy.iter().zip(store.iter()) {
                    assert!(a.to_blob() == b, "{all:?}");
                }
                // Arrays come back as arrays: the copy exports the same JSON.
                let lossy = ExportOptions::json().non_finite_as_null();
                assert_eq!(copy.export_all(&lossy), store.export_all(&lossy), "{all:?}");
            }
        }
    }
});
