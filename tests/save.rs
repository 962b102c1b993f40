//! The save file: round trips, exact errors, and truncation and corruption sweeps (with the
//! checksums left as they are, and re-sealed so that the checks behind them are reached).

use datacomp::format::FileError;
use datacomp::format::StoreError;
use datacomp::handle_map::HandleMapError;
use datacomp::{
    Blob, BlobError, Error, ExportOptions, Id, ImportOptions, Key, LoadError, Store, StoreView,
};
use proptest::prelude::*;

mod common;
use common::{reseal, table, u32_at};

/// A store with history: removed entities (stale handles), a moved blob (garbage), floats.
fn world() -> (Store, Vec<Id>, Vec<Id>) {
    let mut store = Store::new();
    let mut live = Vec::new();
    let mut dead = Vec::new();
    for i in 0..8_u16 {
        let mut sheet = Blob::new();
        sheet.set("name", format!("entity {i}").as_str()).unwrap();
        sheet.set("stats.health", f32::from(i) * 10.0).unwrap();
        sheet.set("position", [f32::from(i), 0.5, -1.0]).unwrap();
        live.push(store.insert(&sheet));
    }
    for id in [live.remove(6), live.remove(2)] {
        store.remove(id);
        dead.push(id);
    }
    store
        .get_mut(live[0])
        .unwrap()
        .set("bio", "a much longer string that makes this blob move")
        .unwrap();
    (store, live, dead)
}

fn assert_same(a: &Store, b: &Store, live: &[Id], dead: &[Id]) {
    assert_eq!(a.len(), b.len());
    for &id in live {
        assert_eq!(b.get(id).expect("live handles survive"), a.get(id).unwrap().to_blob());
    }
    for &id in dead {
        assert!(b.get(id).is_none(), "stale handles stay stale");
    }
    // A save holds no garbage: the loaded store's arena is the original's live blobs.
    let (a, b) = (a.stats(), b.stats());
    assert_eq!(
        (a.entities, a.live_bytes, a.slack_bytes),
        (b.entities, b.live_bytes, b.slack_bytes)
    );
    assert_eq!((b.garbage_bytes, b.arena_bytes), (0, a.arena_bytes - a.garbage_bytes));
}

#[test]
fn handles_and_blobs_survive_a_round_trip() {
    let (store, live, dead) = world();
    let bytes = store.to_bytes();
    assert_eq!(bytes.len() % 8, 0);
    assert_eq!(&bytes[..8], b"DATACOMP");
    let loaded = Store::from_bytes(&bytes).unwrap();
    assert_same(&store, &loaded, &live, &dead);
    assert_eq!(loaded.to_bytes(), bytes, "a loaded store saves to the same bytes");

    let mut written = Vec::new();
    store.write_to(&mut written).unwrap();
    assert_eq!(written, bytes);
    let read = Store::read_from(&bytes[..]).unwrap();
    assert_same(&store, &read, &live, &dead);

    // New entities after loading never reuse a stale handle.
    let mut loaded = loaded;
    let fresh = loaded.insert_empty();
    assert!(!dead.contains(&fresh));
}

#[test]
fn a_view_reads_the_save_in_place() {
    let (store, live, dead) = world();
    let bytes = store.to_bytes();
    let view = StoreView::new(&bytes).unwrap();
    assert_eq!(view.len(), store.len());
    for &id in &live {
        let blob = view.get(id).expect("live handles resolve in the view");
        assert_eq!(blob, store.get(id).unwrap().to_blob());
        let range = bytes.as_ptr_range();
        assert!(range.contains(&blob.as_bytes().as_ptr()), "read in place, not copied");
    }
    assert!(dead.iter().all(|&id| view.get(id).is_none() && !view.contains(id)));
    let ids: Vec<Id> = view.iter().map(|(id, _)| id).collect();
    assert_eq!(ids, store.iter().map(|(id, _)| id).collect::<Vec<_>>(), "same dense order");
}

#[test]
fn a_view_needs_an_aligned_buffer() {
    let (store, _, _) = world();
    let bytes = store.to_bytes();
    let mut shifted = vec![0_u8; bytes.len() + 1];
    shifted[1..].copy_from_slice(&bytes);
    let err = StoreView::new(&shifted[1..]).unwrap_err();
    assert!(
        matches!(err, LoadError::Store(StoreError::Misaligned { section: "arena", .. })),
        "{err}"
    );
    assert!(Store::from_bytes(&shifted[1..]).is_ok(), "a copy does not care");
    // Copied a chunk at a time (one thread) or into zeroed words (two), aligned or not: the
    // same store.
    for threads in [1, 2] {
        let options = datacomp::LoadOptions::new().threads(threads);
        assert!(options.load_bytes(&shifted[1..]).unwrap() == store, "{threads} threads");
        assert!(options.load_bytes(&bytes).unwrap() == store, "{threads} threads");
    }
}

/// Both readers accept exactly the same inputs: one validator, two ways to read.
fn assert_readers_agree(bytes: &[u8]) {
    let store = Store::from_bytes(bytes);
    let view = StoreView::new(bytes);
    assert_eq!(view.as_ref().err(), store.as_ref().err(), "view and copy disagree");
}

#[test]
fn save_and_load_a_file() {
    let (store, live, dead) = world();
    let dir = std::env::temp_dir().join(format!("datacomp-save-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("world.dcmp");
    store.save(&path).unwrap();
    store.save(&path).unwrap(); // over an existing file
    let loaded = Store::load(&path).unwrap();
    assert_same(&store, &loaded, &live, &dead);
    let leftovers: Vec<_> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(leftovers, ["world.dcmp"], "no temporary file is left behind");
    assert!(matches!(Store::load(dir.join("missing.dcmp")), Err(Error::Io(_))));
    std::fs::write(&path, b"not a save").unwrap();
    assert!(matches!(
        Store::load(&path),
        Err(Error::Load(LoadError::File(FileError::Truncated { .. })))
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_truncation_is_an_error() {
    let (store, _, _) = world();
    let bytes = store.to_bytes();
    for len in 0..bytes.len() {
        assert!(Store::from_bytes(&bytes[..len]).is_err(), "cut to {len} of {}", bytes.len());
        assert_readers_agree(&bytes[..len]);
    }
}

#[test]
fn a_change_to_any_byte_is_detected() {
    let mut store = Store::new();
    store.insert(&[("name", "The One")].into_iter().collect());
    store.insert(&[("stats.health", 100.0)].into_iter().collect());
    let bytes = store.to_bytes();
    for at in 0..bytes.len() {
        for bit in 0..8 {
            let mut bad = bytes.clone();
            bad[at] ^= 1 << bit;
            assert!(Store::from_bytes(&bad).is_err(), "bit {bit} of byte {at} flipped");
            assert_readers_agree(&bad);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Re-sealing: recompute every checksum, so that the checks behind them are reached.

fn section(bytes: &[u8], kind: u32) -> (usize, usize) {
    let (_, offset, len) = *table(bytes).iter().find(|(k, _, _)| *k == kind).unwrap();
    (offset, len)
}

#[test]
fn describe_reads_the_header_and_table_a_load_checks() {
    let (store, _, _) = world();
    let bytes = store.to_bytes();
    let info = datacomp::format::describe(&bytes).unwrap();
    let minor = datacomp::format::FORMAT_MINOR;
    assert_eq!(
        (info.major, info.minor, info.key_hash, info.data_version),
        (1, minor, datacomp::format::KEY_HASH_FX32_EMPTY, 0)
    );
    assert_eq!(info.file_len, bytes.len() as u64);
    let expected: Vec<(u32, usize, usize)> = table(&bytes);
    let got: Vec<(u32, usize, usize)> =
        info.sections.iter().map(|s| (s.kind, s.offset as usize, s.len as usize)).collect();
    assert_eq!(got, expected);
    for s in &info.sections {
        let (offset, len) = (s.offset as usize, s.len as usize);
        assert_eq!(s.crc, crc32fast::hash(&bytes[offset..offset + len]), "{}", s.name);
    }
    let arena = info.sections.iter().find(|s| s.name == "arena").unwrap();
    let stats = store.stats();
    assert_eq!(arena.len as usize, stats.arena_bytes - stats.garbage_bytes, "no garbage saved");
    // A file that fails the first checks fails them here too, with the same error.
    let mut bad = bytes.clone();
    bad[40] ^= 1;
    assert_eq!(datacomp::format::describe(&bad), Err(Store::from_bytes(&bad).unwrap_err()));
    assert!(datacomp::format::describe(&bytes[..31]).is_err());
}

const ENDS: u32 = 14;
const ARENA: u32 = 5;

#[test]
fn each_malformation_gets_its_own_error() {
    let (store, live, _) = world();
    let good = store.to_bytes();
    let edit = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut bytes = good.clone();
        f(&mut bytes);
        reseal(&mut bytes);
        Store::from_bytes(&bytes).err()
    };

    assert_eq!(
        edit(&|b| b[0] = b'X'),
        Some(LoadError::File(FileError::BadMagic { found: *b"XATACOMP" }))
    );
    let minor = datacomp::format::FORMAT_MINOR;
    assert_eq!(
        edit(&|b| b[8] = 2),
        Some(LoadError::File(FileError::UnsupportedVersion { major: 2, minor }))
    );
    assert_eq!(
        edit(&|b| b[12] = 7),
        Some(LoadError::File(FileError::UnsupportedKeyHash { key_hash: 7 }))
    );
    let (index_header, _) = section(&good, 1);
    assert_eq!(
        edit(&|b| b[index_header] = 5),
        Some(LoadError::Store(StoreError::TypeId { expected: 1, found: 5 })),
        "the index header's type id"
    );
    let len = good.len() as u64;
    assert_eq!(
        edit(&|b| b.extend_from_slice(&[0; 8])),
        Some(LoadError::File(FileError::FileLength { expected: len, found: len + 8 }))
    );
    // A section kind the reader does not know, in place of the arena: checked, then skipped.
    assert_eq!(
        edit(&|b| b[32 + 24 * 4] = 99),
        Some(LoadError::File(FileError::MissingSection { section: "arena" }))
    );

    let (arena, arena_len) = section(&good, ARENA);
    let mut unsealed = good.clone();
    unsealed[arena + 9] ^= 0x40;
    assert!(matches!(
        Store::from_bytes(&unsealed),
        Err(LoadError::File(FileError::ChunkCrc { chunk: 0, offset, .. })) if offset == arena as u64
    ));
    // The index header is 28 bytes, followed by 4 bytes of padding to the next section.
    let (index_header, index_header_len) = section(&good, 1);
    assert_eq!(index_header_len, 28);
    let padding = index_header + 28;
    assert_eq!(
        edit(&|b| b[padding] = 1),
        Some(LoadError::File(FileError::Padding { offset: padding as u64 }))
    );

    // End offsets: live[0] is the entity at dense index 0 (its end is the section's first),
    // live[1] at dense index 1.
    let (ends, ends_len) = section(&good, ENDS);
    assert_eq!(ends_len, 4 * store.len());
    let arena_words = (arena_len / 4) as u64;
    let span_words = u32_at(&good, ends);
    let past = arena_words as u32 + 1;
    assert_eq!(
        edit(&|b| b[ends..ends + 4].copy_from_slice(&past.to_le_bytes())),
        Some(LoadError::Store(StoreError::SpanOutOfArena {
            id: live[0],
            offset: 0,
            words: past,
            arena_words
        }))
    );
    // The second entity's end before its start, the first's end.
    let before = span_words - 1;
    assert_eq!(
        edit(&|b| b[ends + 4..ends + 8].copy_from_slice(&before.to_le_bytes())),
        Some(LoadError::Store(StoreError::EndsDecrease {
            id: live[1],
            start: span_words,
            end: before
        }))
    );
    // A blob whose key count claims more than its span holds.
    let blob_start = arena;
    assert_eq!(
        edit(&|b| b[blob_start..blob_start + 4].copy_from_slice(&1000_u32.to_le_bytes())),
        Some(LoadError::Store(StoreError::Blob {
            id: live[0],
            error: BlobError::HeaderOutOfBounds {
                keys: 1000,
                header_end: 4 * (2 + 2000 + 250),
                byte_len: 4 * span_words as usize,
            },
        }))
    );
}

#[test]
fn error_messages_say_what_and_where() {
    let (store, _, _) = world();
    let mut bytes = store.to_bytes();
    bytes[8] = 3;
    bytes[10..12].fill(0);
    reseal(&mut bytes);
    assert_eq!(
        Store::from_bytes(&bytes).unwrap_err().to_string(),
        "save format 3.0 is not supported: this build reads format 1.x"
    );
}

/// What any accepted input must give: a store whose every entity reads fully and that saves
/// and loads again.
fn check_loaded(store: &Store) {
    for (id, blob) in store.iter() {
        assert_eq!(store.get(id).unwrap().len(), blob.len());
        assert!(Blob::from_bytes(blob.as_bytes()).is_ok());
    }
    let again = Store::from_bytes(&store.to_bytes()).expect("a loaded store saves and loads");
    assert_eq!(again.len(), store.len());
}

#[test]
fn ten_thousand_random_corruptions_of_a_larger_save() {
    let mut store = Store::new();
    for i in 0..200_u16 {
        let mut sheet = Blob::new();
        sheet.set("name", format!("entity {i}").as_str()).unwrap();
        sheet.set("stats.health", f32::from(i)).unwrap();
        sheet.set("position", [f32::from(i), 1.0, 2.0]).unwrap();
        store.insert(&sheet);
    }
    let bytes = store.to_bytes();
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut accepted = 0;
    for round in 0..10_000 {
        let mut bad = bytes.clone();
        for _ in 0..1 + next() % 4 {
            let at = (next() % bad.len() as u64) as usize;
            bad[at] = next() as u8;
        }
        // Half the rounds re-seal, so that the checks behind the checksums are reached.
        if round % 2 == 1 {
            reseal(&mut bad);
        }
        assert_readers_agree(&bad);
        if let Ok(loaded) = Store::from_bytes(&bad) {
            check_loaded(&loaded);
            accepted += 1;
        }
    }
    assert!(accepted < 10_000, "corruptions must be caught");
}

proptest! {
    #[test]
    fn resealed_corruptions_are_an_error_or_a_valid_store(
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
    ) {
        let (store, _, _) = world();
        let mut bytes = store.to_bytes();
        // Past the header and table: the sections, where only the structural checks remain.
        let body = 32 + 24 * 6;
        for (at, value) in edits {
            let at = body + at.index(bytes.len() - body);
            bytes[at] = value;
        }
        reseal(&mut bytes);
        assert_readers_agree(&bytes);
        if let Ok(loaded) = Store::from_bytes(&bytes) {
            check_loaded(&loaded);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Key names

/// The key tree's section kind (format 1.1), and format 1.0's flat list of names.
const TREE: u32 = 13;
const LIST: u32 = 6;

fn named_world() -> (Store, Vec<Id>) {
    let mut store = Store::new();
    let text = r#"[{"name": "Orc", "stats": {"health": 30}}, {"a.b": {"c/d~e": [1, 2]}}]"#;
    let ids = store.import(text, &ImportOptions::strict()).unwrap().ids;
    (store, ids)
}

#[test]
fn key_names_survive_save_and_load() {
    let (store, ids) = named_world();
    let bytes = store.to_bytes();
    let loaded = Store::from_bytes(&bytes).unwrap();
    for key in ["name", "stats.health"] {
        assert_eq!(loaded.key_name(Key::parse(key)).as_deref(), Some(key));
    }
    assert_eq!(loaded.key_name(Key::new("a.b").child("c/d~e")).as_deref(), Some("a.b.c/d~e"));
    for &id in &ids {
        assert_eq!(
            loaded.export(id, &ExportOptions::json().non_finite_as_null()).ok(),
            store.export(id, &ExportOptions::json().non_finite_as_null()).ok(),
            "export reads the saved names"
        );
    }
    assert_eq!(loaded.to_bytes(), bytes);
    assert_eq!(StoreView::new(&bytes).unwrap().len(), 2);
}

#[test]
fn each_key_tree_malformation_gets_its_own_error() {
    let (store, _) = named_world();
    let good = store.to_bytes();
    let (tree, len) = section(&good, TREE);
    let edit = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut bytes = good.clone();
        f(&mut bytes);
        reseal(&mut bytes);
        let view = StoreView::new(&bytes).err();
        let load = Store::from_bytes(&bytes).err();
        assert_eq!(view, load, "view and copy agree");
        load
    };
    let bad = |node, problem| Some(LoadError::Store(StoreError::KeyTree { node, problem }));
    // name, stats, stats/health, a.b, a.b/c~1d~0e: varint count, then per node its parent's
    // distance, its length and flags, its text.
    assert_eq!(good[tree], 5, "five nodes");
    assert_eq!(&good[tree + 1..tree + 7], b"\x01\x11name", "`name`: under the root, named");
    assert_eq!(edit(&|b| b[tree] = 100), bad(0, "the count does not fit the section"));
    assert_eq!(edit(&|b| b[tree] = 4), bad(4, "bytes are left after the last node"));
    assert_eq!(edit(&|b| b[tree + 1] = 0), bad(1, "its parent does not come before it"));
    assert_eq!(edit(&|b| b[tree + 1] = 2), bad(1, "its parent does not come before it"));
    assert_eq!(edit(&|b| b[tree + 3] = 0xff), bad(1, "its text is not UTF-8"));
    assert_eq!(edit(&|b| b[tree + 2] = 0x10), bad(1, "it names no key and leads to none"));
    // The last node, `c/d~e` under `a.b`, becomes `stats` under the root: a repeat.
    assert_eq!(len, 34);
    assert_eq!(&good[tree + 27..tree + 34], b"\x01\x15c/d~e");
    assert_eq!(
        edit(&|b| {
            b[tree + 27] = 5;
            b[tree + 29..tree + 34].copy_from_slice(b"stats");
        }),
        bad(5, "another child of its parent has the same text")
    );
    // A renamed segment is another valid path: the keys it named are unnamed now, and the
    // crc is what catches a change that no one resealed.
    let renamed = edit(&|b| b[tree + 3] = b'N');
    assert_eq!(renamed, None);
}

/// Format 1.0's flat list of key names (in `fixtures/world_v2.dcmp`), checked as before.
#[test]
fn each_key_name_list_malformation_gets_its_own_error() {
    let good = include_bytes!("../fixtures/world_v2.dcmp").to_vec();
    let (names, len) = section(&good, LIST);
    let edit = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut bytes = good.clone();
        f(&mut bytes);
        reseal(&mut bytes);
        // The fixture is not 4-aligned in memory here: the copy is the reader to check.
        Store::from_bytes(&bytes).err()
    };
    let count = u32_at(&good, names) as usize;
    assert_eq!(count, 9);
    let text = names + 4 + 8 * count;
    let first_len = u32_at(&good, names + 8) as usize;
    // Change one letter of the first name: it no longer hashes to its key.
    assert_eq!(
        edit(&|b| b[text + 1] ^= 0x01),
        Some(LoadError::Store(StoreError::KeyName {
            index: 0,
            problem: "the name does not hash to its key"
        }))
    );
    // The second entry repeats the first one's key: not in ascending order.
    assert_eq!(
        edit(&|b| b.copy_within(names + 4..names + 8, names + 12)),
        Some(LoadError::Store(StoreError::KeyName {
            index: 1,
            problem: "keys are not in ascending order"
        }))
    );
    // One name fewer in the count: the last name's bytes are left over.
    let fewer = (count as u32 - 1).to_le_bytes();
    let result = edit(&|b| b[names..names + 4].copy_from_slice(&fewer));
    assert!(matches!(result, Some(LoadError::Store(StoreError::KeyName { .. }))), "{result:?}");
    // A name that is not a JSON Pointer.
    assert_eq!(
        edit(&|b| b[text] = b'x'),
        Some(LoadError::Store(StoreError::KeyName {
            index: 0,
            problem: "the name is not a JSON Pointer"
        }))
    );
    assert!(len > text - names + first_len);
}

/// A save whose handle map starts its slots near `u32::MAX` (checksums resealed) would load,
/// then panic on the next insert: a load refuses a base past what `reset` gives.
#[test]
fn a_handle_base_that_leaves_no_room_is_refused() {
    let mut store = Store::new();
    store.insert(&Blob::new());
    let bytes = store.to_bytes();
    let (_, header, _) = table(&bytes)[0];
    for (base, ok) in [(u32::MAX - 2, false), (u32::MAX / 2 + 1, false), (u32::MAX / 2, true)] {
        let mut bad = bytes.clone();
        bad[header + 4..header + 8].copy_from_slice(&base.to_le_bytes());
        reseal(&mut bad);
        match Store::from_bytes(&bad) {
            Err(err) => {
                assert!(!ok, "{base}: {err}");
                assert_eq!(
                    err,
                    LoadError::HandleMap(HandleMapError::Base { base, max: u32::MAX / 2 })
                );
                assert_eq!(StoreView::new(&bad).unwrap_err(), err);
            }
            Ok(mut loaded) => {
                assert!(ok, "{base} loaded");
                let id = loaded.insert(&Blob::new());
                assert_eq!(id.index(), base + 1);
            }
        }
    }
    let inner = HandleMapError::Base { base: u32::MAX - 2, max: u32::MAX / 2 };
    let err = LoadError::from(inner.clone());
    assert_eq!(err, LoadError::HandleMap(inner.clone()));
    let message = "handle map: the first slot's index 4294967293 is past 2147483647, the highest \
                   a reset gives, and could leave no index for new handles";
    assert_eq!(err.to_string(), message);
    assert_eq!(inner.to_string(), message);
    // Transparent: the wrapper's source is the handle map error's own (it has none).
    assert!(std::error::Error::source(&err).is_none());
}

/// `bytes` with its key-name section replaced by one name, `pointer`, under `key`, as the flat
/// list of formats 1.0 and 1.1 (kind 6) in place of the key tree; the sections after it move.
fn with_one_name(bytes: &[u8], key: Key, pointer: &str) -> Vec<u8> {
    let (offset, len) = section(bytes, TREE);
    let old_end = (offset + len).next_multiple_of(8);
    let mut out = bytes[..offset].to_vec();
    out.extend_from_slice(&1_u32.to_le_bytes());
    out.extend_from_slice(&key.raw().to_le_bytes());
    out.extend_from_slice(&(pointer.len() as u32).to_le_bytes());
    out.extend_from_slice(pointer.as_bytes());
    let names_len = (out.len() - offset) as u64;
    out.resize(out.len().next_multiple_of(8), 0);
    let new_end = out.len();
    out.extend_from_slice(&bytes[old_end..]);
    let sections = table(bytes);
    let names_at = sections.iter().position(|(kind, _, _)| *kind == TREE).unwrap();
    for (i, (_, section_offset, _)) in sections.into_iter().enumerate() {
        let entry = 32 + 24 * i;
        if i == names_at {
            out[entry..entry + 4].copy_from_slice(&LIST.to_le_bytes());
            out[entry + 16..entry + 24].copy_from_slice(&names_len.to_le_bytes());
        } else if i > names_at {
            let moved = (section_offset - old_end + new_end) as u64;
            out[entry + 8..entry + 16].copy_from_slice(&moved.to_le_bytes());
        }
    }
    let file_len = out.len() as u64;
    out[16..24].copy_from_slice(&file_len.to_le_bytes());
    reseal(&mut out);
    out
}

/// Attack: a name holding a `~` that is not `~0` or `~1` (`/~2`, not a JSON Pointer escape)
/// loaded as a second spelling of `/~02`; a merge with a save that spelled it right then
/// failed with "~2 and ~2 hash to the same key". Every name has one spelling.
#[test]
fn a_name_with_a_tilde_that_is_no_escape_is_refused() {
    let key = Key::new("~2");
    let mut store = Store::new();
    store.insert(&[(key, 1.0)].into_iter().collect::<Blob>());
    let good = with_one_name(&store.to_bytes(), key, "/~02");
    assert_eq!(Store::from_bytes(&good).unwrap().key_name(key).as_deref(), Some("~2"));
    for bad in ["/~2", "/~", "/a~/b", "/~~0"] {
        let bytes = with_one_name(&store.to_bytes(), Key::from_pointer(bad).unwrap(), bad);
        let expected = Some(LoadError::Store(StoreError::KeyName {
            index: 0,
            problem: "the name holds a '~' that is neither '~0' nor '~1'",
        }));
        assert_eq!(Store::from_bytes(&bytes).err(), expected, "{bad}");
        assert_eq!(StoreView::new(&bytes).err(), expected, "{bad}");
    }
}

/// A save of more than 1 MiB is checked on every core: the answer is the one thread's, for a
/// good file and for one with a bad blob in each half (resealed), whichever half comes first.
#[test]
fn a_big_save_loads_the_same_on_any_number_of_threads() {
    let mut store = Store::new();
    let mut sheet = Blob::new();
    sheet.set("name", "Goblin").unwrap();
    sheet.set("bio", "g".repeat(200).as_str()).unwrap();
    let ids: Vec<Id> = (0..6000).map(|_| store.insert(&sheet)).collect();
    // Some grown, so that spans are out of dense order in the second half.
    for id in ids.iter().skip(4000).step_by(3) {
        store.get_mut(*id).unwrap().set("bio", "h".repeat(300).as_str()).unwrap();
    }
    let good = store.to_bytes();
    assert!(good.len() > 1 << 20);
    let one = datacomp::LoadOptions::new().threads(1);
    let two = datacomp::LoadOptions::new().threads(2);
    let mut shifted = vec![0_u8; good.len() + 1];
    shifted[1..].copy_from_slice(&good);
    for options in [&one, &two] {
        assert!(options.load_bytes(&good).unwrap() == store);
        assert_eq!(options.view(&good).unwrap().len(), 6000);
        // Unaligned, over many 64 KiB chunks.
        assert!(options.load_bytes(&shifted[1..]).unwrap() == store);
    }
    let (arena, _) = section(&good, ARENA);
    // Each blob's first byte is its key count: 2 keys; made 0xff.
    let view = StoreView::new(&good).unwrap();
    let offset =
        |id: Id| view.get(id).unwrap().as_bytes().as_ptr() as usize - good.as_ptr() as usize;
    let (early, late) = (offset(ids[100]), offset(ids[5999]));
    assert!(early > arena && late > early);
    for spots in [vec![late], vec![early, late]] {
        let mut bytes = good.clone();
        for &at in &spots {
            bytes[at] = 0xff;
        }
        reseal(&mut bytes);
        let expected = one.load_bytes(&bytes).unwrap_err();
        let first = if spots.len() == 2 { ids[100] } else { ids[5999] };
        assert!(
            matches!(expected, LoadError::Store(StoreError::Blob { id, .. }) if id == first),
            "{expected}"
        );
        assert_eq!(two.load_bytes(&bytes).unwrap_err(), expected);
        assert_eq!(two.view(&bytes).unwrap_err(), expected);
        assert_eq!(one.view(&bytes).unwrap_err(), expected);
    }
}

/// Attack: `compact` then `save` (once `save_compacted`) promised "no byte of a removed entity,
/// removed key or overwritten value", yet the name of a removed key stayed in the key-name
/// table. Names that no entity holds are left out of a compacted save; a plain save keeps them.
#[test]
fn a_compacted_save_holds_no_name_of_a_removed_key() {
    let dir = tempfile::TempDir::new().unwrap();
    let path = dir.path().join("world.dcmp");
    let mut store = Store::new();
    let id = store.insert_empty();
    store.get_mut(id).unwrap().set("name", "Bob").unwrap();
    store.get_mut(id).unwrap().set("password_is_hunter2", 1.0).unwrap();
    store.get_mut(id).unwrap().remove(Key::parse("password_is_hunter2"));
    let has = |bytes: &[u8]| bytes.windows(7).any(|w| w == b"hunter2");
    assert!(has(&store.to_bytes()), "a plain save keeps every name");
    store.compact();
    store.save(&path).unwrap();
    assert!(!has(&std::fs::read(&path).unwrap()));
    let loaded = Store::load(&path).unwrap();
    assert_eq!(loaded.key_names().map(|(_, n)| n).collect::<Vec<_>>(), ["name"]);
    assert_eq!(store.key_names().len(), 1, "the store forgot it too");
    assert_eq!(loaded.get(id).unwrap().get_str("name"), Some("Bob"));
}

// ---------------------------------------------------------------------------------------------
// Format 1.3's index: end offsets, empty blobs of zero bytes, identity handle maps.

const META: u32 = 3;
const SLOTS: u32 = 4;

/// An operation on a store, for the model test of format 1.3's index.
#[derive(Clone, Debug)]
enum Edit {
    /// A sheet of `keys` floats (0: the empty blob, as an import of `{}` makes it).
    Insert {
        keys: u8,
    },
    InsertEmpty,
    /// Removes the entity at this position of the live ones: the handle map leaves its
    /// identity state.
    Remove(prop::sample::Index),
    /// Grows the entity at this position: it moves to the arena's end, leaving garbage.
    Grow(prop::sample::Index),
    /// Removes every entity (their slots' generations bumped).
    Clear,
    Compact,
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (0_u8..6).prop_map(|keys| Edit::Insert { keys }),
        2 => Just(Edit::InsertEmpty),
        1 => any::<prop::sample::Index>().prop_map(Edit::Remove),
        2 => any::<prop::sample::Index>().prop_map(Edit::Grow),
        1 => Just(Edit::Clear),
        1 => Just(Edit::Compact),
    ]
}

/// Reads `bytes` every way there is and checks each against `model` (every handle ever
/// issued: live ones with their blob, the others absent).
fn assert_every_reader_matches(bytes: &[u8], model: &[(Id, Option<Blob>)]) {
    let words: Vec<u64> =
        bytes.chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
    let aligned = &zerocopy::IntoBytes::as_bytes(words.as_slice())[..bytes.len()];
    let store = Store::from_bytes(bytes).unwrap();
    let view = StoreView::new(aligned).unwrap();
    let lazy = StoreView::lazy(aligned).unwrap();
    let salvage = Store::salvage(bytes).unwrap();
    assert!(salvage.lost.is_empty() && salvage.damaged.is_empty());
    assert_eq!(salvage.store, store);
    let live = model.iter().filter(|(_, b)| b.is_some()).count();
    assert_eq!((store.len(), view.len(), lazy.len()), (live, live, live));
    for (id, blob) in model {
        match blob {
            Some(blob) => {
                assert_eq!(store.get(*id).unwrap(), *blob, "{id}");
                assert_eq!(view.get(*id).unwrap(), *blob, "{id}");
                assert_eq!(lazy.get(*id).unwrap().unwrap(), *blob, "{id}");
            }
            None => {
                assert!(store.get(*id).is_none() && view.get(*id).is_none(), "{id}");
                assert!(!lazy.contains(*id) && lazy.get(*id).unwrap().is_none(), "{id}");
            }
        }
    }
    let dense: Vec<Id> = store.iter().map(|(id, _)| id).collect();
    assert_eq!(view.iter().map(|(id, _)| id).collect::<Vec<_>>(), dense);
    assert_eq!(lazy.iter().map(|(id, _)| id).collect::<Vec<_>>(), dense);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Model test: random stores (inserts, empty entities, removals, moves, clears,
    /// compactions) saved and read back by `Store::from_bytes`, `StoreView::new`,
    /// `StoreView::lazy` and `Store::salvage` equal a model of every handle issued; a store
    /// that never left its identity state saves no meta or slot bytes, the others save
    /// them in full; an empty entity costs its 4-byte end and no arena byte; a save of the
    /// loaded store is the same bytes.
    #[test]
    fn every_reader_reads_a_1_3_save_as_the_store_it_was(
        edits in prop::collection::vec(edit(), 0..60),
    ) {
        let mut store = Store::new();
        let mut model: Vec<(Id, Option<Blob>)> = Vec::new();
        let mut identity = true;
        for (step, edit) in edits.into_iter().enumerate() {
            let live: Vec<usize> = (0..model.len()).filter(|&i| model[i].1.is_some()).collect();
            match edit {
                Edit::Insert { keys } => {
                    const NAMES: [&str; 6] = ["k0", "k1", "k2", "k3", "k4", "k5"];
                    let blob: Blob = NAMES[..usize::from(keys)]
                        .iter()
                        .zip(0_u16..)
                        .map(|(&name, k)| (name, f32::from(k) + step as f32))
                        .collect();
                    model.push((store.insert(&blob), Some(blob)));
                }
                Edit::InsertEmpty => model.push((store.insert_empty(), Some(Blob::new()))),
                Edit::Remove(at) if !live.is_empty() => {
                    let i = live[at.index(live.len())];
                    prop_assert!(store.remove(model[i].0));
                    model[i].1 = None;
                    identity = false;
                }
                Edit::Grow(at) if !live.is_empty() => {
                    let i = live[at.index(live.len())];
                    let text = "g".repeat(40 + step);
                    store.get_mut(model[i].0).unwrap().set("bio", text.as_str()).unwrap();
                    model[i].1.as_mut().unwrap().set("bio", text.as_str()).unwrap();
                }
                Edit::Clear => {
                    store.clear();
                    model.iter_mut().for_each(|(_, blob)| *blob = None);
                    identity &= model.is_empty();
                }
                Edit::Compact => store.compact(),
                Edit::Remove(_) | Edit::Grow(_) => {}
            }
        }
        let bytes = store.to_bytes();
        assert_every_reader_matches(&bytes, &model);
        let (_, meta) = section(&bytes, META);
        let (_, slots) = section(&bytes, SLOTS);
        let (_, ends) = section(&bytes, ENDS);
        let (_, arena) = section(&bytes, ARENA);
        prop_assert_eq!(ends, 4 * store.len());
        if identity {
            prop_assert_eq!((meta, slots), (0, 0));
        } else if !model.is_empty() {
            prop_assert_eq!(meta, 4 * store.len());
            prop_assert!(slots >= 8 * store.len() && slots > 0);
        }
        let empties = store.iter().filter(|(_, b)| b.as_bytes() == [0, 0, 0, 0, 8, 0, 0, 0]).count();
        let stats = store.stats();
        prop_assert_eq!(arena, stats.arena_bytes - stats.garbage_bytes - 8 * empties);
        let loaded = Store::from_bytes(&bytes).unwrap();
        prop_assert_eq!(loaded.to_bytes(), bytes, "a loaded 1.3 save writes back the same bytes");
    }
}

/// A save's index header (section 1), for editing: (offset of the header in the file).
fn index_header(bytes: &[u8]) -> usize {
    section(bytes, 1).0
}

/// Every reader's error for `bytes`, which must be one and the same.
fn error_of(bytes: &[u8]) -> LoadError {
    let store = Store::from_bytes(bytes).unwrap_err();
    assert_eq!(StoreView::new(bytes).unwrap_err(), store, "view");
    assert_eq!(StoreView::lazy(bytes).unwrap_err(), store, "lazy view");
    assert_eq!(Store::salvage(bytes).unwrap_err(), store, "salvage");
    store
}

#[test]
fn a_1_3_index_header_that_contradicts_itself_is_refused_by_every_reader() {
    // A fresh store: an identity map, its meta and slots left out.
    let mut fresh = Store::new();
    for i in 0..5_u8 {
        fresh.insert_entries([("hp", f32::from(i))]).unwrap();
    }
    fresh.insert_empty();
    let identity = fresh.to_bytes();
    assert_eq!((section(&identity, META).1, section(&identity, SLOTS).1), (0, 0));
    let at = index_header(&identity);
    assert_eq!(u32_at(&identity, at), 1 | (1 << 16), "type id 1, flags IDENTITY");
    let edit = |bytes: &[u8], offset: usize, value: u32| {
        let mut bytes = bytes.to_vec();
        bytes[offset..offset + 4].copy_from_slice(&value.to_le_bytes());
        reseal(&mut bytes);
        bytes
    };
    let map = |e: HandleMapError| LoadError::HandleMap(e);
    // An identity map with a free list.
    assert_eq!(
        error_of(&edit(&identity, at + 16, 0)),
        map(HandleMapError::Identity { field: "free list", found: 0, expected: u32::MAX })
    );
    assert_eq!(
        error_of(&edit(&identity, at + 20, 3)),
        map(HandleMapError::Identity { field: "free list", found: 3, expected: u32::MAX })
    );
    // An identity map whose slot count is not its item count.
    assert_eq!(
        error_of(&edit(&identity, at + 12, 7)),
        map(HandleMapError::Identity { field: "slots", found: 7, expected: 6 })
    );
    // An unknown flag.
    assert_eq!(
        error_of(&edit(&identity, at, 1 | (3 << 16))),
        map(HandleMapError::Flags { flags: 3 })
    );
    // A count past what the sections hold: no overflow, the size is wrong.
    let huge = edit(&edit(&identity, at + 8, u32::MAX - 2), at + 12, u32::MAX - 2);
    assert_eq!(
        error_of(&huge),
        map(HandleMapError::SectionSize {
            section: "items",
            expected: 4 * u64::from(u32::MAX - 2),
            found: 24
        })
    );
    // The ends' item size must be 4.
    assert_eq!(
        error_of(&edit(&identity, at + 24, 8)),
        map(HandleMapError::ItemSize { expected: 4, found: 8 })
    );

    // A map that removed (slots saved in full), flagged as an identity map: its meta and
    // slots are present where an identity map has none.
    let mut churned = fresh.clone();
    let gone = churned.iter().map(|(id, _)| id).nth(1).unwrap();
    churned.remove(gone);
    churned.insert_empty(); // reuses the slot: as many slots as items, at generation 1
    let full = churned.to_bytes();
    let at = index_header(&full);
    assert_eq!(section(&full, META).1, 4 * 6);
    assert_eq!(
        error_of(&edit(&full, at, 1 | (1 << 16))),
        map(HandleMapError::SectionSize { section: "meta", expected: 0, found: 24 })
    );
}

#[test]
fn ends_that_decrease_or_pass_the_arena_are_refused_by_every_full_reader() {
    let mut store = Store::new();
    let ids: Vec<Id> =
        (0..4_u8).map(|i| store.insert_entries([("hp", f32::from(i))]).unwrap()).collect();
    let empty = store.insert_empty();
    let bytes = store.to_bytes();
    let (ends, _) = section(&bytes, ENDS);
    let (_, arena) = section(&bytes, ARENA);
    let end = |i: usize| u32_at(&bytes, ends + 4 * i);
    // The empty entity ends where the one before it does: it has no bytes.
    assert_eq!(end(4), end(3));
    assert_eq!(end(3) as usize * 4, arena);
    let edit = |i: usize, value: u32| {
        let mut bad = bytes.clone();
        bad[ends + 4 * i..ends + 4 * i + 4].copy_from_slice(&value.to_le_bytes());
        reseal(&mut bad);
        bad
    };
    let full_error = |bytes: &[u8]| {
        let error = Store::from_bytes(bytes).unwrap_err();
        assert_eq!(StoreView::new(bytes).unwrap_err(), error);
        error
    };
    let arena_words = (arena / 4) as u64;
    // The last end past the arena.
    assert_eq!(
        full_error(&edit(4, end(3) + 1)),
        LoadError::Store(StoreError::SpanOutOfArena {
            id: empty,
            offset: end(3),
            words: 1,
            arena_words
        })
    );
    // The second end before the first.
    assert_eq!(
        full_error(&edit(1, end(0) - 1)),
        LoadError::Store(StoreError::EndsDecrease { id: ids[1], start: end(0), end: end(0) - 1 })
    );
    // The first end at 0: the first entity becomes empty, and the second's blob holds the
    // first's bytes too, with its header where the first's was: a valid blob of the first's
    // keys, in a span twice its size. Everything reads; the content moved.
    let shifted = edit(0, 0);
    let loaded = Store::from_bytes(&shifted).unwrap();
    assert!(loaded.get(ids[0]).unwrap().is_empty());
    assert_eq!(loaded.get(ids[1]).unwrap(), store.get(ids[0]).unwrap());
}
