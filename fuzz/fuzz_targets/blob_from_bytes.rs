//! `Blob::from_bytes` on any bytes: an error, or a blob that passes every check and survives
//! editing.
#![no_main]

use datacomp::Blob;
use datacomp_fuzz::{check_blob, exercise_blob};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match Blob::from_bytes(data) {
        Ok(blob) => {
            assert_eq!(blob.as_bytes(), data, "a loaded blob keeps its bytes as they were");
            check_blob(blob.as_blob_ref());
            exercise_blob(blob, data.last().copied().unwrap_or(0));
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
});
