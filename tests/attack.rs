//! Regressions of the attack on the library's entry points: each test is an input that was
//! once refused with a misleading error, misread, or took unbounded time, and the answer it
//! gets now.

use datacomp::text::JsonErrorKind;
use datacomp::{Blob, ImportOptions, Migrations, Store};

/// A UTF-8 byte order mark, as Windows editors write at the start of a file.
const BOM: &str = "\u{feff}";

/// A JSON document that starts with a byte order mark was refused as "expected value" at line
/// 1, column 1, though SJSON (which every JSON document is) and `--keys` files skip the mark.
/// Each JSON entry point now skips it, and places errors as an editor that hides it shows them.
#[test]
fn json_entry_points_skip_a_byte_order_mark() {
    for options in [ImportOptions::strict(), ImportOptions::lenient()] {
        let blob = Blob::import(&format!("{BOM}{{\"hp\": 3}}"), &options).unwrap();
        assert_eq!(blob.get_float("hp"), Some(3.0));

        let mut store = Store::new();
        let ids = store.import(&format!("{BOM}[{{\"a\": 1}}, {{\"a\": 2}}]"), &options);
        let ids = ids.unwrap().ids;
        assert_eq!(ids.len(), 2);
        assert_eq!(store.get(ids[1]).unwrap().get_float("a"), Some(2.0));
    }
    let err =
        Blob::import(&format!("{BOM}{{\"hp\": null}}"), &ImportOptions::strict()).unwrap_err();
    assert_eq!(err.kind(), &JsonErrorKind::Null);
    assert_eq!((err.path(), err.line(), err.column()), ("/hp", 1, 11));

    let migrations =
        Migrations::from_json(&format!("{BOM}{{\"version\": 2, \"steps\": [{{\"to\": 2}}]}}"))
            .unwrap();
    assert_eq!(migrations.version(), 2);

    // Only a leading mark is skipped: one inside the document is still an error.
    let err = Blob::import(&format!("{{{BOM}\"hp\": 1}}"), &ImportOptions::strict()).unwrap_err();
    assert!(matches!(err.kind(), JsonErrorKind::Syntax(_)), "{err}");
    assert!(Migrations::from_json(&format!("{BOM}{BOM}{{}}")).is_err());
}

/// A raw handle-map header whose item size is wrong was refused as "section 'item size' is
/// 4294967295 bytes; its header says 8", which read backwards (the header says 4294967295, the
/// items are 8 bytes): now `HandleMapError::ItemSize`, in the header's words.
#[test]
fn a_wrong_item_size_is_named_with_what_the_header_holds() {
    use datacomp::HandleMap;
    use datacomp::handle_map::RawHandleMap;
    use datacomp::handle_map::RawHeader;
    use zerocopy::little_endian::U32;

    let mut map = HandleMap::new(1);
    map.insert(7_u64);
    let raw = map.as_raw();
    let header = RawHeader { item_size: U32::new(u32::MAX), ..raw.header };
    let err = HandleMap::<u64>::from_raw(&RawHandleMap { header, ..raw }).unwrap_err();
    assert_eq!(
        err,
        datacomp::handle_map::HandleMapError::ItemSize { expected: 8, found: u64::from(u32::MAX) }
    );
    assert_eq!(err.to_string(), "handle map: the header's item size is 4294967295, not 8");
}
