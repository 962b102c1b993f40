//! JSON import, strict and lenient, of any text: an error that leaves the store byte for byte
//! as it was, or entities that pass every check, agree between `Blob::import` and
//! `Store::import`, and export back to JSON that imports as the same entities.
#![no_main]

use datacomp::{Blob, ExportOptions, ImportOptions, Imported, Store};
use datacomp_fuzz::{check_blob, check_report_pair, check_store, export_alone};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let strict = ImportOptions::strict();
    let lenient = ImportOptions::lenient();

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

    // The report of the strict store import, when it succeeds.
    let mut strict_report = None;
    for options in [strict, lenient] {
        // A store that already holds an entity and a name, to see that a failure keeps both.
        let mut store = Store::new();
        store.import(r#"{"name": "before", "stats": {"health": 1}}"#, &strict).unwrap();
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
                // Export, then import into a new store: the same entities. Leniently: a lenient
                // import's arrays of strings or mixed values export as arrays, which only a
                // lenient import reads back.
                let mut again = Store::new();
                let lossy = ExportOptions::json().non_finite_as_null();
                for &id in &ids {
                    let (json, expected) = export_alone(&store, id, lossy);
                    let copy = again
                        .import(&json, &ImportOptions::lenient())
                        .unwrap_or_else(|e| panic!("the export {json} of {text:?} fails: {e}"));
                    assert!(
                        again.get(copy.ids[0]).unwrap().to_blob() == expected,
                        "{text:?} exported as {json} imports differently"
                    );
                }
            }
        }
    }
});
