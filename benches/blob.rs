//! Blob benchmarks on a 15-key character sheet, each beside the peers a user would otherwise
//! pick: `FxHashMap<u32, _>` over the same key hashes, the usual `HashMap<String,
//! serde_json::Value>`, a nested `serde_json::Value`, and memcpy (the physical limit).
//!
//! Run: `cargo bench --bench blob`.

#[path = "common/sheet.rs"]
mod sheet;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use datacomp::{Blob, Key, KeyPath, OwnedValue};

fn get(c: &mut Criterion) {
    let blob = sheet::build_blob();
    let fx = sheet::build_fxhashmap();
    let strings = sheet::build_string_hashmap();
    let json = sheet::build_json();
    let keys = sheet::keys();
    let raw: Vec<u32> = keys.iter().map(|k| k.raw()).collect();
    let paths: Vec<&str> = sheet::SHEET.iter().map(|(p, _)| *p).collect();
    let segments: Vec<Vec<&str>> = paths.iter().map(|p| p.split('.').collect()).collect();
    let fx_get = |k: &u32| sheet::use_value(fx.get(k).map(OwnedValue::as_value));

    // Look a value up and read it: every implementation ends in the same `use_value`.
    let mut group = c.benchmark_group("get/one_key");
    let key = Key::parse(sheet::ONE_KEY);
    let one_segments: Vec<&str> = sheet::ONE_KEY.split('.').collect();
    group.bench_function("datacomp", |b| {
        b.iter(|| sheet::use_value(black_box(&blob).get(black_box(key))))
    });
    group.bench_function("fxhashmap_u32", |b| b.iter(|| fx_get(black_box(&key.raw()))));
    group.bench_function("fxhashmap_u32_ref_only", |b| {
        b.iter(|| black_box(&fx).get(&black_box(key.raw())).is_some())
    });
    group.bench_function("hashmap_string", |b| {
        b.iter(|| sheet::use_json(black_box(&strings).get(black_box(sheet::ONE_KEY))))
    });
    group.bench_function("serde_json_path", |b| {
        b.iter(|| {
            sheet::use_json(Some(sheet::json_path(black_box(&json), black_box(&one_segments))))
        })
    });
    group.finish();

    // Every key once: the average over positions in the key array.
    let mut group = c.benchmark_group("get/15_keys");
    group.bench_function("datacomp", |b| {
        b.iter(|| keys.iter().map(|&k| sheet::use_value(black_box(&blob).get(k))).sum::<u32>())
    });
    group.bench_function("fxhashmap_u32", |b| {
        b.iter(|| raw.iter().map(|k| fx_get(black_box(k))).sum::<u32>())
    });
    group.bench_function("hashmap_string", |b| {
        b.iter(|| paths.iter().map(|&p| sheet::use_json(black_box(&strings).get(p))).sum::<u32>())
    });
    group.bench_function("serde_json_path", |b| {
        b.iter(|| {
            segments
                .iter()
                .map(|s| sheet::use_json(Some(sheet::json_path(black_box(&json), s))))
                .sum::<u32>()
        })
    });
    group.finish();

    // The typed getter a game calls every frame.
    let mut group = c.benchmark_group("get_float/one_key");
    group.bench_function("datacomp", |b| b.iter(|| black_box(&blob).get_float(black_box(key))));
    group.bench_function("fxhashmap_u32", |b| {
        b.iter(|| match black_box(&fx).get(&black_box(key.raw())) {
            Some(OwnedValue::Float(f)) => Some(*f),
            _ => None,
        })
    });
    group.bench_function("serde_json_path", |b| {
        b.iter(|| sheet::json_path(black_box(&json), black_box(&one_segments)).as_f64())
    });
    group.finish();
}

/// One float from each of many sheets, as a system does every frame: here memory, not the
/// lookup's instructions, sets the pace, and one buffer per sheet is what the layout is for.
fn get_many(c: &mut Criterion) {
    const SHEETS: usize = 10_000;
    let key = Key::parse(sheet::ONE_KEY);
    let one_segments: Vec<&str> = sheet::ONE_KEY.split('.').collect();
    let blobs: Vec<Blob> = (0..SHEETS).map(|_| sheet::build_blob()).collect();
    let fx: Vec<_> = (0..SHEETS).map(|_| sheet::build_fxhashmap()).collect();
    let strings: Vec<_> = (0..SHEETS).map(|_| sheet::build_string_hashmap()).collect();
    let json: Vec<_> = (0..SHEETS).map(|_| sheet::build_json()).collect();

    let mut group = c.benchmark_group("get_float/10000_sheets");
    group.bench_function("datacomp", |b| {
        b.iter(|| black_box(&blobs).iter().filter_map(|s| s.get_float(key)).sum::<f32>())
    });
    group.bench_function("fxhashmap_u32", |b| {
        b.iter(|| {
            black_box(&fx)
                .iter()
                .filter_map(|s| match s.get(&key.raw()) {
                    Some(OwnedValue::Float(f)) => Some(*f),
                    _ => None,
                })
                .sum::<f32>()
        })
    });
    group.bench_function("hashmap_string", |b| {
        b.iter(|| {
            black_box(&strings)
                .iter()
                .filter_map(|s| s.get(sheet::ONE_KEY)?.as_f64())
                .map(|f| f as f32)
                .sum::<f32>()
        })
    });
    group.bench_function("serde_json_path", |b| {
        b.iter(|| {
            black_box(&json)
                .iter()
                .filter_map(|s| sheet::json_path(s, &one_segments).as_f64())
                .map(|f| f as f32)
                .sum::<f32>()
        })
    });
    group.finish();
}

fn build(c: &mut Criterion) {
    let keys = sheet::keys();
    let mut group = c.benchmark_group("build/15_keys");
    group.bench_function("datacomp_with_capacity", |b| {
        b.iter(|| {
            let mut blob = Blob::with_capacity(keys.len(), sheet::payload_bytes());
            for (&key, (_, value)) in keys.iter().zip(sheet::SHEET) {
                blob.set(key, value).unwrap();
            }
            blob
        })
    });
    group.bench_function("datacomp_new", |b| {
        b.iter(|| {
            let mut blob = Blob::new();
            for (&key, (_, value)) in keys.iter().zip(sheet::SHEET) {
                blob.set(key, value).unwrap();
            }
            blob
        })
    });
    group.bench_function("fxhashmap_u32", |b| b.iter(sheet::build_fxhashmap));
    group.bench_function("hashmap_string", |b| b.iter(sheet::build_string_hashmap));
    group.bench_function("serde_json", |b| b.iter(sheet::build_json));
    group.finish();
}

fn copy(c: &mut Criterion) {
    let blob = sheet::build_blob();
    let bytes = blob.as_bytes().to_vec();
    let fx = sheet::build_fxhashmap();
    let json = sheet::build_json();
    let mut group = c.benchmark_group("clone/15_keys");
    group.bench_function("memcpy", |b| b.iter(|| black_box(&bytes).clone()));
    group.bench_function("datacomp", |b| b.iter(|| black_box(&blob).clone()));
    group.bench_function("fxhashmap_u32", |b| b.iter(|| black_box(&fx).clone()));
    group.bench_function("serde_json", |b| b.iter(|| black_box(&json).clone()));
    group.finish();

    let text = serde_json::to_string(&json).expect("the sheet serializes");
    let mut group = c.benchmark_group("from_bytes/15_keys");
    group.bench_function("memcpy", |b| b.iter(|| black_box(&bytes[..]).to_vec()));
    group.bench_function("datacomp", |b| b.iter(|| Blob::from_bytes(black_box(&bytes))));
    group.bench_function("serde_json_from_str", |b| {
        b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(&text)))
    });
    group.finish();
}

/// Hashing the sheet's 15 dotted paths into keys: key hash 2 (`Key::parse`, one Fx round per
/// byte) beside key hash 1 (`FxHasher32::write`, four bytes a round, per segment), and std's
/// SipHash over each whole path (what a `HashMap<String, _>` computes per lookup).
fn key(c: &mut Criterion) {
    use std::hash::{BuildHasher, Hasher};
    let paths: Vec<&str> = sheet::SHEET.iter().map(|(p, _)| *p).collect();
    let mut group = c.benchmark_group("key/parse_15_paths");
    group.bench_function("datacomp_key_hash_2", |b| {
        b.iter(|| {
            for path in black_box(&paths) {
                black_box(Key::parse(path));
            }
        });
    });
    group.bench_function("fxhasher32_write_key_hash_1", |b| {
        let segment = |s: &str| {
            let mut hasher = fxhash::FxHasher32::default();
            hasher.write(s.as_bytes());
            hasher.finish() as u32
        };
        b.iter(|| {
            for path in black_box(&paths) {
                let mut segments = path.split('.');
                let first = segment(segments.next().unwrap_or(""));
                black_box(
                    segments.fold(first, |h, s| {
                        (h.rotate_left(5) ^ segment(s)).wrapping_mul(0x2722_0a95)
                    }),
                );
            }
        });
    });
    let sip = std::collections::hash_map::RandomState::new();
    group.bench_function("std_siphash_whole_path", |b| {
        b.iter(|| {
            for path in black_box(&paths) {
                black_box(sip.hash_one(path));
            }
        });
    });
    group.finish();
}

/// A `const KeyPath` (a key that keeps its name in a store) against today's `const Key` of the
/// same path: both hash at compile time, so a read costs the same.
fn get_const_key(c: &mut Criterion) {
    const HEALTH_KEY: Key = Key::path(&["stats", "health"]);
    const HEALTH_PATH: KeyPath = KeyPath::dotted("stats.health");
    let blob = sheet::build_blob();
    let mut group = c.benchmark_group("get_float/const_key");
    group.bench_function("datacomp_const_key", |b| {
        b.iter(|| black_box(&blob).get_float(HEALTH_KEY))
    });
    group.bench_function("datacomp_const_key_path", |b| {
        b.iter(|| black_box(&blob).get_float(HEALTH_PATH))
    });
    group.finish();
}

criterion_group!(benches, get, get_many, build, copy, key, get_const_key);
criterion_main!(benches);
