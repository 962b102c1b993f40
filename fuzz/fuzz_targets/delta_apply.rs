//! `StorePatch::from_bytes` on any bytes (as mutated, then with its crc32s fixed up), applied to
//! the base its seeds were made from: an error that leaves the base byte for byte as it was, or
//! a store that passes every check.
#![no_main]

use std::sync::OnceLock;

use datacomp::{Store, StorePatch};
use datacomp_fuzz::{as_mutated_and_resealed, check_store, seed_base};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| as_mutated_and_resealed(data, check));

fn check(data: &[u8]) {
    static BASE: OnceLock<(Store, Vec<u8>)> = OnceLock::new();
    let (base, base_bytes) = BASE.get_or_init(|| {
        let base = seed_base();
        let bytes = base.to_bytes();
        (base, bytes)
    });
    let Ok(delta) = StorePatch::from_bytes(data) else {
        return;
    };
    assert_eq!(
        StorePatch::from_bytes(&delta.to_bytes()).map(|d| d.to_bytes()),
        Ok(delta.to_bytes())
    );
    assert_eq!(delta.file_len(), delta.to_bytes().len());
    let mut world = base.clone();
    match delta.apply(&mut world) {
        Ok(()) => check_store(&world),
        Err(e) => {
            assert!(!e.to_string().is_empty());
            assert_eq!(&world.to_bytes(), base_bytes, "a failed apply changed the base: {e}");
        }
    }
}
