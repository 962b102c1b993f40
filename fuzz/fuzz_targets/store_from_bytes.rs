//! `Store::from_bytes` on any bytes: an error that `StoreView::new` and `save::describe` agree
//! with, or a store that passes every check and keeps working after edits.
#![no_main]

use datacomp::{Blob, Store, StoreView};
use datacomp_fuzz::{aligned, as_mutated_and_resealed, check_store};
use libfuzzer_sys::fuzz_target;
use zerocopy::IntoBytes;

fuzz_target!(|data: &[u8]| as_mutated_and_resealed(data, check));

fn check(data: &[u8]) {
    let words = aligned(data);
    let view = StoreView::new(&words.as_bytes()[..data.len()]);
    match Store::from_bytes(data) {
        Ok(mut store) => {
            datacomp::save::describe(data).expect("a file that loads is described");
            let view = view.expect("a file that loads is viewed");
            datacomp_fuzz::assert_view_matches(&view, &store);
            check_store(&store);

            // The loaded store keeps working: grow one entity past its room, remove another,
            // add one, compact.
            let ids: Vec<_> = store.iter().map(|(id, _)| id).collect();
            if let Some(&first) = ids.first() {
                store.get_mut(first).unwrap().set("fuzz.name", "x".repeat(64).as_str());
            }
            if let Some(&last) = ids.last() {
                assert!(store.remove(last));
                assert!(!store.contains(last));
            }
            let added = store.insert(&[("fuzz.added", true)].into_iter().collect::<Blob>());
            check_store(&store);
            store.compact();
            assert_eq!(store.stats().garbage_bytes, 0);
            assert_eq!(store.get(added).unwrap().get_bool("fuzz.added"), Some(true));
            check_store(&store);
        }
        Err(e) => {
            assert!(!e.to_string().is_empty());
            assert!(view.is_err(), "a view accepts what a load refuses: {e}");
        }
    }
}
