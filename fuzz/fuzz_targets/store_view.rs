//! `StoreView::new` on any bytes, read in place, then probed with handles taken from the input:
//! an error, or a view that agrees with `Store::from_bytes` on every handle.
#![no_main]

use datacomp::{Id, Store, StoreView};
use datacomp_fuzz::{
    aligned, as_mutated_and_resealed, assert_view_matches, check_blob, probe_handle,
};
use libfuzzer_sys::fuzz_target;
use zerocopy::IntoBytes;

fuzz_target!(|data: &[u8]| as_mutated_and_resealed(data, check));

fn check(data: &[u8]) {
    let words = aligned(data);
    let bytes = &words.as_bytes()[..data.len()];
    let Ok(view) = StoreView::new(bytes) else {
        return;
    };
    for (_, blob) in view.iter() {
        check_blob(blob);
    }
    let store = Store::from_bytes(bytes).expect("a file that views loads");
    assert_view_matches(&view, &store);
    // Every 8 bytes of the input, read as a handle: forged handles resolve in neither or both.
    for chunk in data.chunks_exact(8) {
        let id = Id::from_bits(u64::from_le_bytes(chunk.try_into().unwrap()));
        assert_eq!(view.get(id).map(|b| b.as_bytes()), store.get(id).map(|b| b.as_bytes()));
        assert_eq!(view.contains(id), store.contains(id));
        probe_handle(&store, id);
    }
}
