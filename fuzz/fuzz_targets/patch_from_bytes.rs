//! `Patch::from_bytes` on any bytes: an error, or a patch that reads back equal and applies to
//! an empty blob and to a character sheet, each checked against a model of what it sets and
//! removes.
#![no_main]

use datacomp::Blob;
use datacomp::blob::Patch;
use datacomp_fuzz::{assert_entries, check_blob, entries};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(patch) = Patch::from_bytes(data) else {
        return;
    };
    assert_eq!(patch.as_bytes(), data, "a loaded patch keeps its bytes as they were");
    assert_eq!(Patch::from_bytes(patch.as_bytes()).as_ref(), Ok(&patch));
    check_blob(patch.sets());
    assert_eq!(patch.len(), patch.sets().len() + patch.removals().len());

    let mut sheet = Blob::new();
    sheet.set("name", "The One").unwrap();
    sheet.set("stats.health", 100.0).unwrap();
    // Some of the patch's own keys, so that removals and overwrites hit.
    for (i, key) in patch.removals().chain(patch.sets().keys()).enumerate().take(8) {
        sheet.set(key, "x".repeat(i * 5).as_str()).unwrap();
    }
    for mut target in [Blob::new(), sheet] {
        let mut expected = entries(target.as_blob_ref());
        for key in patch.removals() {
            expected.remove(&key);
        }
        expected.extend(entries(patch.sets()));
        patch.apply(&mut target);
        assert_entries(target.as_blob_ref(), &expected);
        check_blob(target.as_blob_ref());
    }
});
