//! `StoreView::lazy` on any bytes, each entity read through it: an error, or a view whose
//! every readable blob is valid, and which agrees with `StoreView::new` on a file that passes
//! the full check.
#![no_main]

use datacomp::{BlobRef, StoreView};
use datacomp_fuzz::{aligned, as_mutated_and_resealed, check_blob};
use libfuzzer_sys::fuzz_target;
use zerocopy::IntoBytes;

fuzz_target!(|data: &[u8]| as_mutated_and_resealed(data, check));

fn check(data: &[u8]) {
    let words = aligned(data);
    let bytes = &words.as_bytes()[..data.len()];
    let full = StoreView::new(bytes);
    let Ok(lazy) = StoreView::lazy(bytes) else {
        assert!(full.is_err(), "a file the full check passes opens lazily");
        return;
    };
    for (id, blob) in lazy.iter() {
        // A second read gives the same answer.
        let again = lazy.get(id).map(|b| b.map(BlobRef::as_bytes));
        assert_eq!(again, blob.clone().map(|b| Some(b.as_bytes())));
        match (blob, &full) {
            (Ok(blob), Ok(full)) => assert_eq!(Some(blob), full.get(id)),
            (Ok(blob), Err(_)) => check_blob(blob),
            (Err(e), Ok(_)) => panic!("{id} fails lazily but not in full: {e}"),
            (Err(_), Err(_)) => {}
        }
    }
    if let Ok(full) = full {
        assert_eq!(lazy.len(), full.len());
    }
}
