//! The 15-key character sheet every blob benchmark uses, in each representation a user might
//! pick: a `Blob`, an `FxHashMap<u32, OwnedValue>` keyed by the same hashes, the usual
//! `HashMap<String, serde_json::Value>` of dotted paths, and a nested `serde_json::Value`.
//! Beside it the small sheet ([`SMALL`]): also 15 keys, but short texts and few floats, the
//! shape most game entities have (~200 arena bytes against the sheet's ~380).

#![allow(dead_code)] // Each bench uses its own part of this module.

use std::collections::HashMap;

use datacomp::{Blob, Id, Key, OwnedValue, Store, Value};
use fxhash::FxHashMap;

/// The sheet's dotted paths and values.
pub const SHEET: [(&str, Value<'static>); 15] = [
    ("name", Value::Str("The One")),
    ("class", Value::Str("Wizard")),
    ("level", Value::Float(12.0)),
    ("stats.health", Value::Float(100.0)),
    ("stats.mana", Value::Float(200.0)),
    ("stats.strength", Value::Float(8.0)),
    ("stats.dexterity", Value::Float(14.0)),
    ("stats.intelligence", Value::Float(18.0)),
    ("status_effects.drunk", Value::Bool(true)),
    ("status_effects.delirious", Value::Bool(true)),
    ("status_effects.poisoned", Value::Bool(false)),
    ("position", Value::Floats(&[12.5, 0.0, -3.25])),
    ("color", Value::Floats(&[0.0, 0.5, 0.5, 0.7])),
    ("inventory.weights", Value::Floats(&[1.0, 2.5, 0.25, 4.0, 1.5, 3.0, 0.5, 2.0])),
    (
        "bio",
        Value::Str(
            "Born in a buffer far away, the One learned early that every pointer is a promise \
             someone else has to keep, and chose offsets instead.",
        ),
    ),
];

/// The small sheet: a name, a title, six stats, three status flags, a 3-float position, level,
/// xp and class. Its `stats.health` is at the same path as the sheet's.
pub const SMALL: [(&str, Value<'static>); 15] = [
    ("name", Value::Str("Grunt")),
    ("title", Value::Str("the Orc")),
    ("stats.health", Value::Float(100.0)),
    ("stats.mana", Value::Float(20.0)),
    ("stats.strength", Value::Float(16.0)),
    ("stats.dexterity", Value::Float(9.0)),
    ("stats.intelligence", Value::Float(6.0)),
    ("stats.wisdom", Value::Float(7.0)),
    ("status_effects.drunk", Value::Bool(false)),
    ("status_effects.delirious", Value::Bool(false)),
    ("status_effects.poisoned", Value::Bool(true)),
    ("position", Value::Floats(&[12.5, 0.0, -3.25])),
    ("level", Value::Float(3.0)),
    ("xp", Value::Float(1250.0)),
    ("class", Value::Str("Warrior")),
];

/// A sheet shape by name: `sheet` ([`SHEET`]) or `small` ([`SMALL`]).
pub fn shape(name: &str) -> &'static [(&'static str, Value<'static>)] {
    match name {
        "sheet" => &SHEET,
        "small" => &SMALL,
        other => panic!("unknown shape {other}: sheet or small"),
    }
}

/// A blob of `shape`, sized exactly.
pub fn build_blob_of(shape: &[(&str, Value<'_>)]) -> Blob {
    let payload = shape.iter().map(|(_, v)| v.payload_bytes()).sum();
    let mut blob = Blob::with_capacity(shape.len(), payload);
    for &(path, value) in shape {
        blob.set(path, value).unwrap();
    }
    blob
}

/// A store of `entities` copies of `shape`, with their names recorded (as an import or a first
/// text-key write records them), and their ids.
pub fn store_of(shape: &[(&str, Value<'_>)], entities: usize) -> (Store, Vec<Id>) {
    let blob = build_blob_of(shape);
    let mut store = Store::with_capacity(entities, entities * blob.used_bytes());
    for &(path, _) in shape {
        store.insert_key_name(path).unwrap();
    }
    let ids = (0..entities).map(|_| store.insert(&blob)).collect();
    (store, ids)
}

/// The path that `get/one_key` looks up: in the middle of the sheet.
pub const ONE_KEY: &str = "stats.health";

pub fn keys() -> Vec<Key> {
    SHEET.iter().map(|(path, _)| Key::parse(path)).collect()
}

/// Payload bytes the sheet needs, for an exact `Blob::with_capacity`.
pub fn payload_bytes() -> usize {
    SHEET.iter().map(|(_, v)| v.payload_bytes()).sum()
}

pub fn build_blob() -> Blob {
    build_blob_of(&SHEET)
}

pub fn build_fxhashmap() -> FxHashMap<u32, OwnedValue> {
    build_fxhashmap_of(&SHEET)
}

pub fn build_fxhashmap_of(shape: &[(&str, Value<'_>)]) -> FxHashMap<u32, OwnedValue> {
    shape.iter().map(|(path, v)| (Key::parse(path).raw(), v.to_owned_value())).collect()
}

pub fn to_json(value: Value<'_>) -> serde_json::Value {
    match value {
        Value::Bool(b) => serde_json::Value::Bool(b),
        Value::Float(f) => serde_json::Value::from(f64::from(f)),
        Value::Str(s) => serde_json::Value::from(s),
        Value::Floats(f) => f.iter().map(|&x| serde_json::Value::from(f64::from(x))).collect(),
        Value::Null | Value::Tombstone => serde_json::Value::Null,
    }
}

pub fn build_string_hashmap() -> HashMap<String, serde_json::Value> {
    SHEET.iter().map(|(path, v)| ((*path).to_owned(), to_json(*v))).collect()
}

/// The nested object a designer would write.
pub fn build_json() -> serde_json::Value {
    build_json_of(&SHEET)
}

/// The nested object of `shape`.
pub fn build_json_of(shape: &[(&str, Value<'_>)]) -> serde_json::Value {
    let mut root = serde_json::Map::new();
    for &(path, value) in shape {
        let mut object = &mut root;
        let mut segments = path.split('.').peekable();
        while let Some(segment) = segments.next() {
            if segments.peek().is_none() {
                object.insert(segment.to_owned(), to_json(value));
            } else {
                object = object
                    .entry(segment)
                    .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()))
                    .as_object_mut()
                    .expect("sheet paths never nest under a value");
            }
        }
    }
    serde_json::Value::Object(root)
}

/// `root["stats"]["health"]`, for any path.
pub fn json_path<'a>(root: &'a serde_json::Value, segments: &[&str]) -> &'a serde_json::Value {
    segments.iter().fold(root, |v, s| &v[s])
}

/// What a caller does with a looked-up value: branch on its type and read it. Every `get`
/// benchmark ends here, so that all implementations do the same work.
#[inline]
pub fn use_value(value: Option<Value<'_>>) -> u32 {
    match value {
        None | Some(Value::Null | Value::Tombstone) => 0,
        Some(Value::Bool(b)) => u32::from(b),
        Some(Value::Float(f)) => f.to_bits(),
        Some(Value::Str(s)) => s.len() as u32,
        Some(Value::Floats(f)) => f.len() as u32,
    }
}

/// [`use_value`] for a `serde_json::Value`.
#[inline]
pub fn use_json(value: Option<&serde_json::Value>) -> u32 {
    match value {
        None | Some(serde_json::Value::Null | serde_json::Value::Object(_)) => 0,
        Some(serde_json::Value::Bool(b)) => u32::from(*b),
        Some(serde_json::Value::Number(n)) => (n.as_f64().unwrap_or(0.0) as f32).to_bits(),
        Some(serde_json::Value::String(s)) => s.len() as u32,
        Some(serde_json::Value::Array(a)) => a.len() as u32,
    }
}

/// `n` sheets named `Orc 0` .. `Orc {n - 1}` (the 15-key sheet otherwise), in one `Store` and
/// as `FxHashMap`s: what a find by name scans.
pub fn named_sheets(n: usize) -> (datacomp::Store, Vec<FxHashMap<u32, OwnedValue>>) {
    let name = Key::parse("name");
    let mut store = datacomp::Store::new();
    let mut fx = Vec::with_capacity(n);
    for i in 0..n {
        let mut blob = build_blob();
        let named = format!("Orc {i}");
        blob.set(name, named.as_str()).unwrap();
        store.insert(&blob);
        let mut map = build_fxhashmap();
        map.insert(name.raw(), OwnedValue::Str(named));
        fx.push(map);
    }
    (store, fx)
}
