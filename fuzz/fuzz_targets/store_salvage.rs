//! `Store::salvage` on any bytes: an error, or a valid store (which saves and loads back) of
//! the entities that check out, none of the reported ones in it; a file that loads whole
//! salvages whole.
#![no_main]

use datacomp::Store;
use datacomp_fuzz::{as_mutated_and_resealed, check_store};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| as_mutated_and_resealed(data, check));

fn check(data: &[u8]) {
    let Ok(salvage) = Store::salvage(data) else {
        return;
    };
    check_store(&salvage.store);
    for (id, _) in salvage.lost.iter() {
        assert!(salvage.store.get(id).is_none(), "{id} is lost and in the store");
    }
    let runs = salvage.lost.runs();
    assert_eq!(runs.iter().map(|r| r.len()).sum::<usize>(), salvage.lost.len());
    let again = Store::from_bytes(&salvage.store.to_bytes()).expect("a salvaged store saves");
    assert!(again == salvage.store);
    if let Ok(full) = Store::from_bytes(data) {
        assert!(salvage.lost.is_empty() && salvage.damaged.is_empty());
        assert!(salvage.store == full);
    }
}
