//! JSON import, strict and lenient, of any text: an error that leaves the store byte for byte
//! as it was, or entities that pass every check, agree between `Blob::from_json` and
//! `Store::import_json`, and export back to JSON that imports as the same entities.
#![no_main]

use datacomp::{Blob, ImportOptions, ImportReport, Store};
use datacomp_fuzz::{check_blob, check_store};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let strict = ImportOptions::strict();
    let lenient = ImportOptions::lenient();

    // One entity: a strict success is a lenient success with nothing more to report (both
    // count the empty objects they leave out).
    let strict_read = Blob::from_json_with(text, &strict);
    let strict_blob = strict_read.as_ref().map(|(blob, _)| blob);
    let lenient_blob = Blob::from_json_with(text, &lenient);
    if let Ok((blob, strict_report)) = &strict_read {
        check_blob(blob.as_blob_ref());
        let (other, report) = lenient_blob.as_ref().expect("what strict accepts, lenient accepts");
        assert!(other == blob, "strict and lenient read {text:?} differently");
        assert_eq!(report, strict_report);
        let mut empty_objects_only = ImportReport::default();
        empty_objects_only.empty_objects = report.empty_objects;
        assert_eq!(*report, empty_objects_only);
    }
    if let Ok((blob, _)) = &lenient_blob {
        check_blob(blob.as_blob_ref());
    }

    for options in [strict, lenient] {
        // A store that already holds an entity and a name, to see that a failure keeps both.
        let mut store = Store::new();
        store.import_json(r#"{"name": "before", "stats": {"health": 1}}"#, &strict).unwrap();
        let before = store.to_bytes();
        match store.import_json_with_report(text, &options) {
            Err(e) => {
                assert_eq!(store.to_bytes(), before, "a failed import changed the store");
                assert!(!e.to_string().is_empty());
            }
            Ok((ids, _)) => {
                assert_eq!(store.len(), 1 + ids.len());
                check_store(&store);
                // A lone object imports as `Blob::from_json_with` reads it.
                let single = if options.is_lenient() {
                    lenient_blob.as_ref().ok().map(|(blob, _)| blob)
                } else {
                    strict_blob.ok()
                };
                if let (Some(blob), [id]) = (single, &ids[..]) {
                    assert!(*blob == store.get(*id).unwrap(), "{text:?}: store and blob differ");
                }
                // Export, then import into a new store: the same entities. Leniently: a lenient
                // import's arrays of strings or mixed values export as arrays, which only a
                // lenient import reads back.
                let mut again = Store::new();
                let exported: Vec<String> =
                    ids.iter().map(|&id| store.export_json(id).unwrap()).collect();
                for (json, &id) in exported.iter().zip(&ids) {
                    let copy = again
                        .import_json(json, &ImportOptions::lenient())
                        .unwrap_or_else(|e| panic!("the export {json} of {text:?} fails: {e}"));
                    assert!(
                        again.get(copy[0]).unwrap().to_blob() == store.get(id).unwrap(),
                        "{text:?} exported as {json} imports differently"
                    );
                }
            }
        }
    }
});
