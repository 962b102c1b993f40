//! Diffs and deltas of 100,000 character sheets where 1% changed (1,000 sheets: their health
//! and their bio), beside what a user would otherwise do: save or load the whole world (the
//! delta's purpose is to avoid that), diff the usual `Vec<HashMap<String, serde_json::Value>>`
//! map by map, and the physical limits, a memcmp of the two saves and a memcpy of one.
//! Also one sheet's `Blob::diff` and `Patch::apply` beside the same on a `HashMap`.
//!
//! Run: `cargo bench --bench delta`. It prints the delta's size against the full save's first.

#[path = "common/changed_world.rs"]
mod changed_world;
#[path = "common/sheet.rs"]
mod sheet;

use std::hint::black_box;

use changed_world::{CHANGE_EVERY, ENTITIES, json_diff, json_world, worlds};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use datacomp::{Blob, Store, StorePatch};

fn report_sizes(base: &Store, delta: &StorePatch) {
    let full = base.to_bytes().len();
    let bytes = delta.file_len();
    println!(
        "full save: {full} bytes; delta of 1% changed: {bytes} bytes ({:.2}% of the full save, {:.1} bytes per changed entity)",
        100.0 * bytes as f64 / full as f64,
        bytes as f64 / (ENTITIES / CHANGE_EVERY) as f64,
    );
    println!("{delta:?}");
}

fn store_delta(c: &mut Criterion) {
    let (base, target) = worlds();
    let (base_bytes, target_bytes) = (base.to_bytes(), target.to_bytes());
    let (base_json, target_json) = (json_world(&base), json_world(&target));
    let delta = StorePatch::diff(&base, &target);
    let delta_bytes = delta.to_bytes();
    report_sizes(&base, &delta);
    assert_eq!(json_diff(&base_json, &target_json).len(), ENTITIES / CHANGE_EVERY);

    let mut group = c.benchmark_group("diff/100k_sheets_1pct_changed");
    group.sample_size(10);
    // Reading both saves through: the 4 KiB pages that differ.
    group.bench_function("memcmp_of_the_saves_by_page", |b| {
        b.iter(|| {
            let pages =
                black_box(&base_bytes).chunks(4096).zip(black_box(&target_bytes).chunks(4096));
            pages.filter(|(a, b)| a != b).count()
        })
    });
    group.bench_function("datacomp_store_diff", |b| {
        b.iter(|| StorePatch::diff(black_box(&base), black_box(&target)))
    });
    group.bench_function("json_maps_diff", |b| {
        b.iter(|| json_diff(black_box(&base_json), black_box(&target_json)))
    });
    group.finish();

    let mut group = c.benchmark_group("apply/100k_sheets_1pct_changed");
    group.sample_size(10);
    group
        .bench_function("memcpy_of_the_save", |b| b.iter(|| black_box(&target_bytes[..]).to_vec()));
    group.bench_function("datacomp_delta_from_bytes_and_apply", |b| {
        b.iter_batched_ref(
            || base.clone(),
            |world| StorePatch::from_bytes(black_box(&delta_bytes)).unwrap().apply(world).unwrap(),
            BatchSize::LargeInput,
        )
    });
    group.bench_function("datacomp_full_from_bytes", |b| {
        b.iter(|| Store::from_bytes(black_box(&target_bytes)).unwrap())
    });
    group.finish();

    let mut group = c.benchmark_group("write/100k_sheets_1pct_changed");
    group.sample_size(10);
    group.bench_function("datacomp_delta_to_bytes", |b| b.iter(|| black_box(&delta).to_bytes()));
    group.bench_function("datacomp_full_to_bytes", |b| b.iter(|| black_box(&target).to_bytes()));
    group.finish();
}

fn blob_patch(c: &mut Criterion) {
    let base = sheet::build_blob();
    let mut target = base.clone();
    target.set("stats.health", 95.0).unwrap();
    target.set("bio", "Changed.").unwrap();
    target.remove("status_effects.drunk");
    let patch = Blob::diff(&base, &target);
    let base_map = sheet::build_string_hashmap();
    let mut target_map = base_map.clone();
    target_map.insert("stats.health".into(), serde_json::json!(95.0));
    target_map.insert("bio".into(), serde_json::json!("Changed."));
    target_map.remove("status_effects.drunk");

    let mut group = c.benchmark_group("patch/15_key_sheet_3_changes");
    group.bench_function("datacomp_diff", |b| {
        b.iter(|| Blob::diff(black_box(&base), black_box(&target)))
    });
    group.bench_function("hashmap_string_diff", |b| {
        b.iter(|| {
            json_diff(
                std::slice::from_ref(black_box(&base_map)),
                std::slice::from_ref(black_box(&target_map)),
            )
        })
    });
    group.bench_function("datacomp_apply", |b| {
        b.iter_batched_ref(|| base.clone(), |blob| patch.apply(blob), BatchSize::SmallInput)
    });
    group.bench_function("hashmap_string_apply", |b| {
        let changes = json_diff(std::slice::from_ref(&base_map), std::slice::from_ref(&target_map));
        let (_, set, removed) = &changes[0];
        b.iter_batched_ref(
            || base_map.clone(),
            |map| {
                for key in removed {
                    map.remove(key);
                }
                map.extend(set.iter().map(|(k, v)| (k.clone(), v.clone())));
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, store_delta, blob_patch);
criterion_main!(benches);
