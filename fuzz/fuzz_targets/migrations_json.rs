//! `Migrations::from_json` of any text: an error whose message is one line; or migrations
//! that, run on a store of mixed names and layouts, either fail leaving it byte for byte as it
//! was, or give a store at the migrations' version that saves and loads back equal, exports
//! valid JSON, and that running them again leaves as it is.
#![no_main]

use datacomp::{Blob, ExportOptions, ImportOptions, Key, Migrations, Store};
use libfuzzer_sys::fuzz_target;

/// Entities with the paths a migration is likely to name: imported (named), set by hash
/// (unnamed), a member name holding a dot, values of every type, a removed entity.
fn store() -> Store {
    let mut store = Store::new();
    let text = r#"[{"a": 1, "b": {"c": true, "d": "x"}, "e": [1, 2]},
                   {"b": {"c": false}, "a.b": {"c": 2}, "f": "y"},
                   {}]"#;
    store.import(text, &ImportOptions::strict()).unwrap();
    let mut unnamed = Blob::new();
    unnamed.set(Key::parse("a"), 2.0).unwrap();
    unnamed.set(Key::parse("g.h"), "z").unwrap();
    store.insert(&unnamed);
    let gone = store.insert_entries([("a", 3.0)]).unwrap();
    store.remove(gone);
    store
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let migrations = match Migrations::from_json(text) {
        Ok(migrations) => migrations,
        Err(e) => {
            assert!(!e.to_string().contains('\n'), "{e:?}");
            return;
        }
    };
    let mut store = store();
    let before = store.to_bytes();
    match migrations.apply(&mut store) {
        Err(e) => {
            assert!(!e.to_string().contains('\n'), "{e:?}");
            assert_eq!(store.to_bytes(), before, "{e}: a failed migration changed the store");
        }
        Ok(report) => {
            assert_eq!(
                (report.to, store.data_version()),
                (migrations.version(), migrations.version())
            );
            let loaded = Store::from_bytes(&store.to_bytes()).expect("a migrated store saves");
            assert_eq!(loaded, store);
            serde_json::from_str::<serde_json::Value>(
                &store.export_all(&ExportOptions::json().non_finite_as_null()).unwrap(),
            )
            .expect("a migrated store exports JSON");
            let mut again = store.clone();
            let report = migrations.apply(&mut again).expect("migrating again succeeds");
            assert!(report.steps.is_empty());
            assert_eq!(again, store, "migrating again changed the store");
        }
    }
});
