//! Two worlds of 100,000 character sheets, the second with 1% of them changed, in datacomp's
//! `Store` and in the usual `Vec<HashMap<String, serde_json::Value>>`, with that peer's diff:
//! shared by the delta benchmark and the allocation counts.

#![allow(dead_code)] // Each bench uses its own part of this module.

use std::collections::HashMap;

use datacomp::{Id, Store};

use super::sheet;

pub const ENTITIES: usize = 100_000;
/// Every 100th sheet changes: 1%.
pub const CHANGE_EVERY: usize = 100;

pub type JsonSheet = HashMap<String, serde_json::Value>;

pub fn worlds() -> (Store, Store) {
    let sheet = sheet::build_blob();
    let mut base = Store::with_capacity(ENTITIES, ENTITIES * sheet.used_bytes());
    let ids: Vec<Id> = (0..ENTITIES).map(|_| base.insert(&sheet)).collect();
    let mut target = base.clone();
    for (i, &id) in ids.iter().enumerate().step_by(CHANGE_EVERY) {
        let mut entity = target.get_mut(id).unwrap();
        entity.set("stats.health", 90.0 - (i % 50) as f32).unwrap();
        entity.set("bio", format!("Changed at turn {i}.").as_str()).unwrap();
    }
    (base, target)
}

pub fn json_world(store: &Store) -> Vec<JsonSheet> {
    let names: HashMap<_, _> =
        sheet::SHEET.iter().map(|(p, _)| (datacomp::Key::parse(p), *p)).collect();
    store
        .iter()
        .map(|(_, blob)| {
            blob.iter().map(|(k, v)| (names[&k].to_owned(), sheet::to_json(v))).collect()
        })
        .collect()
}

/// The peer's diff: for each pair of maps, the keys set (new or different) and removed.
pub fn json_diff(base: &[JsonSheet], target: &[JsonSheet]) -> Vec<(usize, JsonSheet, Vec<String>)> {
    let mut changes = Vec::new();
    for (i, (old, new)) in base.iter().zip(target).enumerate() {
        let set: JsonSheet = new
            .iter()
            .filter(|(k, v)| old.get(*k) != Some(v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let removed: Vec<String> = old.keys().filter(|k| !new.contains_key(*k)).cloned().collect();
        if !set.is_empty() || !removed.is_empty() {
            changes.push((i, set, removed));
        }
    }
    changes
}
