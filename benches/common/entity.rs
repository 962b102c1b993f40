//! The crafted entities of the complexity benchmark (benches/complexity.rs), shared with its
//! instruction-count harness (examples/complexity_cost.rs): one entity of n keys `k0`, `k1`,
//! ... at the top level, a quarter each strings, floats, booleans and two-float arrays; a
//! target that changes every tenth key, removes every twentieth and adds n/20; and `ours` and
//! `theirs`, which make disjoint changes of the same kinds (no conflicts).

#![allow(dead_code)] // Each user takes its own part.

use std::fmt::Write as _;

use datacomp::blob::Patch;
use datacomp::{Blob, Id, ImportOptions, Store};

/// An entity as JSON: each member `(name, i, variant)` holds, by `i % 4`, a string, a float,
/// a boolean or a two-float array, which `variant` changes.
pub fn json(members: impl Iterator<Item = (String, usize, u32)>) -> String {
    let mut out = String::from("{");
    for (at, (name, i, variant)) in members.enumerate() {
        if at > 0 {
            out.push(',');
        }
        let v = i as u32 + variant * 7;
        let _ = match i % 4 {
            0 => write!(out, "\"{name}\":\"v{v}\""),
            1 => write!(out, "\"{name}\":{v}.5"),
            2 => write!(out, "\"{name}\":{}", v.is_multiple_of(2)),
            _ => write!(out, "\"{name}\":[{v}.0,{}.25]", v + 1),
        };
    }
    out.push('}');
    out
}

/// The base's keys `k{i}` in order, with `edit` deciding each one's fate (`None` leaves it
/// out, else the variant of its value), then n/20 new keys `{added}{i}`.
pub fn edited(n: usize, edit: impl Fn(usize) -> Option<u32>, added: Option<&str>) -> String {
    let kept = (0..n).filter_map(|i| Some((format!("k{i}"), i, edit(i)?)));
    let new =
        added.into_iter().flat_map(|tag| (0..n / 20).map(move |i| (format!("{tag}{i}"), i, 3)));
    json(kept.chain(new))
}

/// The blobs and store of size `n`.
pub struct Entities {
    pub text: String,
    pub base: Blob,
    /// The base's entries in reverse order: equal, with other bytes.
    pub reversed: Blob,
    pub target: Blob,
    pub ours: Blob,
    pub theirs: Blob,
    pub patch: Patch,
    pub store: Store,
    pub id: Id,
}

pub fn build(n: usize) -> Entities {
    let blob = |text: &str| {
        Blob::import(text, &ImportOptions::strict()).expect("the generated entity imports")
    };
    let text = edited(n, |_| Some(0), None);
    let reversed = blob(&json((0..n).rev().map(|i| (format!("k{i}"), i, 0))));
    // Every tenth key changed, every twentieth removed, n/20 added.
    let changed = |at: usize, removed: usize, variant: u32| {
        move |i: usize| match (i % 10, i % 20) {
            (_, r) if r == removed => None,
            (c, _) if c == at => Some(variant),
            _ => Some(0),
        }
    };
    let target = blob(&edited(n, changed(0, 1, 1), Some("t")));
    let ours = blob(&edited(n, changed(0, 1, 1), None));
    let theirs = blob(&edited(n, changed(5, 11, 2), Some("u")));
    let base = blob(&text);
    let patch = Blob::diff(&base, &target);
    let mut store = Store::new();
    let id = store.import(&text, &ImportOptions::strict()).expect("imports").ids[0];
    Entities { text, base, reversed, target, ours, theirs, patch, store, id }
}
