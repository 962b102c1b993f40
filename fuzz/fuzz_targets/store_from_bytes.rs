//! `Store::from_bytes` on any bytes: an error that `StoreView::new` and `format::describe` agree
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
            let info = datacomp::format::describe(data).expect("a file that loads is described");
            if info.key_hash == datacomp::format::KEY_HASH_FX32_WORDS {
                // Rehashed into the store; a view cannot rehash in place.
                let key_hash = info.key_hash;
                let refused = datacomp::format::StoreError::KeyHashView { key_hash };
                assert_eq!(view.err(), Some(datacomp::LoadError::Store(refused)));
                let again = Store::from_bytes(&store.to_bytes()).expect("an upgraded store saves");
                assert_eq!(again, store);
            } else {
                let view = view.expect("a file that loads is viewed");
                datacomp_fuzz::assert_view_matches(&view, &store);
            }
            check_store(&store);

            // The loaded store keeps working: grow one entity past its room, remove another,
            // add one, compact.
            let ids: Vec<_> = store.iter().map(|(id, _)| id).collect();
            if let Some(&first) = ids.first() {
                // A saved name may collide with this one: then nothing changes.
                let mut entity = store.get_mut(first).unwrap();
                match entity.set("fuzz.name", "x".repeat(64).as_str()) {
                    Ok(()) | Err(datacomp::Error::Key(datacomp::KeyError::Collision { .. })) => {}
                    Err(e) => panic!("{e}"),
                }
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
