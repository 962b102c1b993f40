//! What must hold of anything a load or an import accepted, shared by the fuzz targets.
//!
//! Each check reads the value through every public accessor and compares the answers with one
//! another, with a copy, and with a save -> load round trip. A failed check panics, which
//! libFuzzer reports as a crash with the input that caused it.

use std::collections::HashMap;

use datacomp::blob::RegionKind;
use datacomp::text::{ExportError, ImportReport};
use datacomp::{
    Blob, BlobRef, ExportOptions, Id, ImportOptions, Key, OwnedValue, Store, StorePatch, StoreView,
    Value,
};
use zerocopy::IntoBytes;

/// A blob's entries as a model: a map from key to value.
pub type Entries = HashMap<Key, OwnedValue>;

/// Copies `bytes` into a 4-byte aligned buffer, as a file read into memory or a memory map
/// would be: [`StoreView`] lends floats as `&[f32]` and refuses misaligned bytes.
#[must_use]
pub fn aligned(bytes: &[u8]) -> Vec<u32> {
    let mut words = vec![0_u32; bytes.len().div_ceil(4)];
    words.as_mut_bytes()[..bytes.len()].copy_from_slice(bytes);
    words
}

/// The entries of `blob`, read by iteration.
#[must_use]
pub fn entries(blob: BlobRef<'_>) -> Entries {
    blob.iter().map(|(key, value)| (key, value.to_owned_value())).collect()
}

/// Panics unless `blob` holds exactly `expected` (floats by bit pattern).
pub fn assert_entries(blob: BlobRef<'_>, expected: &Entries) {
    assert_eq!(blob.len(), expected.len(), "{blob:?} against {expected:?}");
    for (key, value) in expected {
        let got = blob.get(*key).unwrap_or_else(|| panic!("{key} is missing from {blob:?}"));
        assert!(got.is_identical(&value.as_value()), "{key}: {got:?} != {value:?}");
    }
}

/// Everything that must hold of a valid blob: each entry reads back through `get`, the typed
/// getters and `contains_key`; no key appears twice; the byte counters and the region map
/// cover the buffer exactly; and its bytes load back as an equal blob.
pub fn check_blob(blob: BlobRef<'_>) {
    let mut seen = HashMap::new();
    for (key, value) in blob {
        assert!(seen.insert(key, ()).is_none(), "{key} is iterated twice");
        let got = blob.get(key).expect("an iterated key is found");
        assert!(got.is_identical(&value), "{key}: get {got:?}, iterated {value:?}");
        assert!(blob.contains_key(key));
        assert_eq!(blob.get_bool(key), value.as_bool());
        assert_eq!(blob.get_float(key).map(f32::to_bits), value.as_float().map(f32::to_bits));
        assert_eq!(blob.get_str(key), value.as_str());
        let floats =
            |v: Option<&[f32]>| v.map(|f| f.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        assert_eq!(floats(blob.get_floats(key)), floats(value.as_floats()));
    }
    assert_eq!(seen.len(), blob.len());
    assert_eq!(blob.keys().count(), blob.len());
    assert_eq!(blob.is_empty(), blob.iter().next().is_none());

    let len = blob.byte_len();
    assert_eq!(blob.as_bytes().len(), len);
    // The payload region counts its holes.
    let counted = blob.header_bytes() + blob.free_bytes() + blob.payload_bytes();
    assert_eq!(counted, len, "the byte counters of {blob:?}");
    assert_eq!(blob.used_bytes(), len - blob.free_bytes() - blob.hole_bytes());
    let mut end = 0;
    let mut payload_blocks = 0;
    let (mut header, mut free, mut payload, mut holes) = (0, 0, 0, 0);
    for (kind, offset, bytes) in blob.regions() {
        assert_eq!(offset, end, "regions leave a gap or overlap: {:?}", blob.regions());
        assert!(bytes > 0, "an empty region: {:?}", blob.regions());
        end += bytes;
        match kind {
            RegionKind::Header => header += bytes,
            RegionKind::Free => free += bytes,
            RegionKind::Hole => holes += bytes,
            RegionKind::Payload(key) => {
                payload += bytes;
                payload_blocks += 1;
                let value = blob.get(key).expect("a payload block's key is present");
                assert!(matches!(value, Value::Str(_) | Value::Floats(_)), "{key} owns a payload");
            }
        }
    }
    assert_eq!(end, len, "the regions cover the buffer");
    assert_eq!(
        (header, free, payload + holes, holes),
        (blob.header_bytes(), blob.free_bytes(), blob.payload_bytes(), blob.hole_bytes())
    );
    let with_payload = blob.iter().filter(|(_, v)| matches!(v, Value::Str(_) | Value::Floats(_)));
    assert_eq!(payload_blocks, with_payload.count());

    let copy = Blob::from_bytes(blob.as_bytes()).expect("a valid blob's own bytes load");
    assert!(copy == blob, "the copy {copy:?} differs from {blob:?}");
    assert!(blob.to_blob() == blob);
}

/// Edits a valid blob and checks it against a model after every step: set a key of each type
/// (growing past its room), overwrite, remove every key, compact and shrink.
pub fn exercise_blob(mut blob: Blob, seed: u8) {
    let mut model = entries(blob.as_blob_ref());
    let fresh = Key::from_raw(0x5eed_0000 | u32::from(seed));
    let existing: Vec<Key> = blob.keys().collect();
    let long = "x".repeat(usize::from(seed) * 8);
    let floats: Vec<f32> = (0..seed).map(f32::from).collect();
    let values = [
        OwnedValue::Bool(seed.is_multiple_of(2)),
        OwnedValue::Float(f32::from(seed)),
        OwnedValue::Str(long),
        OwnedValue::Floats(floats),
        OwnedValue::Null,
    ];
    for (i, value) in values.iter().enumerate() {
        let key = existing.get(i).copied().unwrap_or(fresh);
        blob.set(key, value).unwrap();
        model.insert(key, value.clone());
        assert_entries(blob.as_blob_ref(), &model);
        check_blob(blob.as_blob_ref());
    }
    blob.compact();
    assert_entries(blob.as_blob_ref(), &model);
    assert_eq!(blob.hole_bytes(), 0, "compact leaves no holes");
    check_blob(blob.as_blob_ref());
    for key in blob.keys().collect::<Vec<_>>() {
        assert!(blob.remove(key));
        assert!(!blob.remove(key), "a key is removed once");
        model.remove(&key);
        assert_entries(blob.as_blob_ref(), &model);
    }
    blob.shrink_to_fit();
    assert!(blob.is_empty());
    check_blob(blob.as_blob_ref());
}

/// Everything that must hold of a valid store: its stats add up, every entity is a valid blob
/// found by its handle, the save -> load round trip gives an equal store, [`StoreView`] reads
/// the save the same, and the JSON export is valid JSON.
pub fn check_store(store: &Store) {
    let stats = store.stats();
    assert_eq!(stats.entities, store.len());
    assert_eq!(stats.live_bytes + stats.slack_bytes + stats.garbage_bytes, stats.arena_bytes);
    let mut ids = HashMap::new();
    for (id, blob) in store.iter() {
        assert!(ids.insert(id, ()).is_none(), "{id} is iterated twice");
        assert!(store.contains(id));
        let found = store.get(id).expect("an iterated handle resolves");
        assert_eq!(found.as_bytes(), blob.as_bytes());
        check_blob(blob);
    }
    assert_eq!(ids.len(), store.len());
    for (key, name) in store.key_names() {
        assert_eq!(store.key_name(key), Some(name));
    }

    let bytes = store.to_bytes();
    let loaded = Store::from_bytes(&bytes).expect("a store's own save loads");
    assert!(loaded == *store, "the loaded store differs");
    assert_eq!(loaded.to_bytes().len(), bytes.len());
    let words = aligned(&bytes);
    let view = StoreView::new(&words.as_bytes()[..bytes.len()]).expect("a store's own save views");
    assert_view_matches(&view, store);
    let info = datacomp::format::describe(&bytes).expect("a store's own save is described");
    assert_eq!(info.file_len, bytes.len() as u64);

    // An instance of a prototype without a `$id` has no name to be written by: that store
    // exports flattened, and refuses only that.
    let export_all = |options: ExportOptions| match store.export_all(&options) {
        Err(ExportError::UnnamedPrototype { .. }) => store.export_all(&options.flatten(true)),
        other => other,
    };
    let json = export_all(ExportOptions::json().non_finite_as_null()).unwrap();
    let parsed: Result<serde_json::Value, _> = serde_json::from_str(&json);
    assert!(parsed.is_ok(), "export wrote invalid JSON: {json}");
    assert!(
        serde_json::from_str::<serde_json::Value>(
            &export_all(ExportOptions::json().pretty(true).non_finite_as_null()).unwrap()
        )
        .is_ok()
    );
}

/// One entity's export that imports into a new store alone, and the blob it imports as. An
/// instance names a prototype the new store lacks: it is exported flattened and reads back as
/// what it resolves to ([`Store::flatten`]).
pub fn export_alone(store: &Store, id: Id, options: ExportOptions) -> (String, Blob) {
    let own = store.get(id).expect("a live entity");
    if store.prototype(id).is_none() {
        return (store.export(id, &options).unwrap(), own.to_blob());
    }
    let text = store.export(id, &options.flatten(true)).unwrap();
    (text, store.flatten(id).expect("a live entity"))
}

/// Panics unless `view` holds the same handles and blobs as `store`.
pub fn assert_view_matches(view: &StoreView<'_>, store: &Store) {
    assert_eq!(view.len(), store.len());
    assert_eq!(view.is_empty(), store.is_empty());
    assert_eq!(view.iter().len(), store.len());
    for (id, blob) in view.iter() {
        assert!(view.contains(id));
        let theirs = store.get(id).unwrap_or_else(|| panic!("{id} is in the view only"));
        assert!(theirs.to_blob() == blob, "{id} differs");
        assert_eq!(view.get(id).map(BlobRef::as_bytes), Some(blob.as_bytes()));
    }
}

/// Whether a handle from outside resolves the same in every reader: `get`, `contains` and
/// `try_get` agree.
pub fn probe_handle(store: &Store, id: Id) {
    let found = store.get(id);
    assert_eq!(found.is_some(), store.contains(id));
    assert_eq!(found.is_some(), store.try_get(id).is_ok());
    if let Err(e) = store.try_get(id) {
        assert!(!e.to_string().is_empty());
    }
}

/// Rewrites a would-be save file's length and checksums to match its bytes, as far as its
/// section table can be read: the fuzzers mutate bytes at random, and without this nearly
/// every mutation would stop at the crc32 check, never reaching the checks behind it.
///
/// The layout is the one `datacomp::save` documents: a 32-byte header (the section count at
/// 14, the file length at 16, the table's crc32 at 24), then 24-byte entries (a section's crc32
/// at 4, its offset at 8, its length at 16).
pub fn reseal(bytes: &mut [u8]) {
    if bytes.len() < 32 {
        return;
    }
    let sections = usize::from(u16::from_le_bytes([bytes[14], bytes[15]]));
    let table_end = (32 + 24 * sections).min(bytes.len());
    let u64_at = |bytes: &[u8], at: usize| {
        u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
    };
    reseal_chunks(bytes, table_end);
    for entry in (32..table_end).step_by(24).filter(|&at| at + 24 <= table_end) {
        let (offset, len) = (u64_at(bytes, entry + 8), u64_at(bytes, entry + 16));
        let section = usize::try_from(offset).ok().and_then(|offset| {
            let end = offset.checked_add(usize::try_from(len).ok()?)?;
            bytes.get(offset..end)
        });
        if let Some(section) = section {
            let crc = crc32fast::hash(section);
            bytes[entry + 4..entry + 8].copy_from_slice(&crc.to_le_bytes());
        }
    }
    let file_len = bytes.len() as u64;
    bytes[16..24].copy_from_slice(&file_len.to_le_bytes());
    bytes[24..28].fill(0);
    let crc = crc32fast::hash(&bytes[..table_end]);
    bytes[24..28].copy_from_slice(&crc.to_le_bytes());
}

/// Recomputes the crc of each chunk of the arena (section kind 5) in the `arena crcs` section
/// (kind 12, format 1.1), where both sections and the chunk size are sound.
fn reseal_chunks(bytes: &mut [u8], table_end: usize) {
    let section = |bytes: &[u8], kind: u32| {
        (32..table_end).step_by(24).filter(|&at| at + 24 <= table_end).find_map(|at| {
            let entry = &bytes[at..at + 24];
            if u32::from_le_bytes(entry[..4].try_into().ok()?) != kind {
                return None;
            }
            let offset = usize::try_from(u64::from_le_bytes(entry[8..16].try_into().ok()?)).ok()?;
            let len = usize::try_from(u64::from_le_bytes(entry[16..24].try_into().ok()?)).ok()?;
            let end = offset.checked_add(len).filter(|&end| end <= bytes.len())?;
            Some(offset..end)
        })
    };
    let (Some(arena), Some(crcs)) = (section(bytes, 5), section(bytes, 12)) else {
        return;
    };
    let Some(chunk) = bytes.get(crcs.start..crcs.start + 4) else {
        return;
    };
    let chunk = u32::from_le_bytes(chunk.try_into().expect("4 bytes")) as usize;
    if !chunk.is_power_of_two() || crcs.len() != 4 + 4 * arena.len().div_ceil(chunk) {
        return;
    }
    let sums: Vec<u32> = bytes[arena].chunks(chunk).map(crc32fast::hash).collect();
    for (i, sum) in sums.into_iter().enumerate() {
        let at = crcs.start + 4 + 4 * i;
        bytes[at..at + 4].copy_from_slice(&sum.to_le_bytes());
    }
}

/// Runs `check` on a would-be save file as mutated (mostly refused by the crc32 checks), then
/// [`reseal`]ed, so that the mutation reaches the checks behind them.
pub fn as_mutated_and_resealed(data: &[u8], check: impl Fn(&[u8])) {
    check(data);
    let mut resealed = data.to_vec();
    reseal(&mut resealed);
    if resealed != data {
        check(&resealed);
    }
}

/// The base store that the `delta_apply` seeds are made from and applied to: the character
/// sheets of `fixtures/`, built in code so that the target needs no files.
#[must_use]
pub fn seed_base() -> Store {
    let mut store = Store::new();
    let sheets = r#"[
        {"name": "Ann", "stats": {"health": 10, "mana": 5}, "pos": [1, 2], "alive": true},
        {"name": "Bob", "stats": {"health": 20, "mana": 6}, "pos": [3, 4], "alive": true},
        {"name": "Cid", "stats": {"health": 30, "mana": 7}, "pos": [5, 6], "alive": false},
        {"name": "Dee", "stats": {"health": 40, "mana": 8}, "pos": [7, 8], "alive": true}
    ]"#;
    store.import(sheets, &ImportOptions::strict()).expect("the seed sheets import");
    store
}

/// Deltas from [`seed_base`]: each kind of change, for the `delta_apply` seeds.
#[must_use]
pub fn seed_deltas() -> Vec<(&'static str, Vec<u8>)> {
    let base = seed_base();
    let ids: Vec<Id> = base.iter().map(|(id, _)| id).collect();
    let mut changed = base.clone();
    changed.get_mut(ids[0]).unwrap().set("stats.health", 11.0).unwrap();
    changed.get_mut(ids[1]).unwrap().remove("pos");
    changed.get_mut(ids[2]).unwrap().set("name", "a name long enough to move the blob").unwrap();
    let mut removed = changed.clone();
    removed.remove(ids[3]);
    let mut inserted = removed.clone();
    inserted
        .import(r#"{"name": "Eve", "stats": {"luck": 1}}"#, &ImportOptions::strict())
        .expect("a new sheet imports");
    inserted.insert(&Blob::new());
    [("changed", changed), ("removed", removed), ("inserted", inserted), ("none", base.clone())]
        .into_iter()
        .map(|(name, target)| (name, StorePatch::diff(&base, &target).to_bytes()))
        .collect()
}

/// Checks the report of a store import of one text, given in turn for the strict import and
/// then the lenient one (`strict_report` is `None` until a strict import succeeded): a strict
/// success reports nothing but the empty objects it left out and the numbers that lose digits,
/// and the lenient import of the same text reports exactly that too.
pub fn check_report_pair(
    strict_report: &mut Option<ImportReport>,
    lenient: bool,
    report: ImportReport,
) {
    if lenient {
        if let Some(strict_report) = strict_report {
            assert_eq!(&report, strict_report, "strict and lenient report differently");
        }
    } else {
        let mut expected = ImportReport::default();
        expected.empty_objects = report.empty_objects;
        expected.first_empty_object.clone_from(&report.first_empty_object);
        expected.lost_digits = report.lost_digits;
        expected.first_lost_digits.clone_from(&report.first_lost_digits);
        expected.lost_digits_example.clone_from(&report.lost_digits_example);
        assert_eq!(report, expected, "a strict import reports only empty objects and digits");
        assert_eq!(report.empty_objects > 0, report.first_empty_object.is_some());
        assert_eq!(report.lost_digits > 0, report.first_lost_digits.is_some());
        *strict_report = Some(report);
    }
}
