//! `Query::parse` of any text: an error whose column lies inside the text (or just past it)
//! and whose message is one line, or a query that gives each entity of a store of mixed
//! layouts the same answer however often and in whatever order it runs (its key cursors'
//! cached positions must never change an answer).
#![no_main]

use datacomp::{Blob, Query, Store};
use libfuzzer_sys::fuzz_target;

/// Entities with the keys a query is likely to name, in different orders and types.
fn store() -> Store {
    let mut store = Store::new();
    let sheets: [&[(&str, f32)]; 3] =
        [&[("a", 1.0), ("b", 2.0)], &[("b", -1.0), ("c", 0.0), ("a", 5.0)], &[]];
    for sheet in sheets {
        store.insert(&sheet.iter().copied().collect::<Blob>());
    }
    let mut mixed = Blob::new();
    mixed.set("c", true).unwrap();
    mixed.set("a", "x").unwrap();
    mixed.set("b", [1.0, 2.0]).unwrap();
    mixed.set("d.e", false).unwrap();
    store.insert(&mixed);
    store
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Query::parse(text) {
        Err(e) => {
            assert!((1..=text.chars().count() + 1).contains(&e.column()), "{text:?}: {e}");
            let message = e.to_string();
            assert!(message.starts_with(&format!("column {}: ", e.column())), "{message}");
            assert!(!message.contains('\n'), "{message:?}");
        }
        Ok(query) => {
            let store = store();
            let blobs: Vec<_> = store.iter().map(|(_, blob)| blob).collect();
            let forward: Vec<bool> = blobs.iter().map(|b| query.matches(*b)).collect();
            let mut backward: Vec<bool> = blobs.iter().rev().map(|b| query.matches(*b)).collect();
            backward.reverse();
            assert_eq!(forward, backward, "{text:?}: the answer depends on the order");
            let fresh: Vec<bool> = blobs.iter().map(|b| query.clone().matches(*b)).collect();
            assert_eq!(forward, fresh, "{text:?}");
            let passed: Vec<bool> =
                store.iter().map(|(id, _)| store.query(&query).any(|(q, _)| q == id)).collect();
            assert_eq!(forward, passed, "{text:?}");
        }
    }
});
