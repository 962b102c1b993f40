//! `StorePatch::diff` and `StorePatch`: the diff/apply identity against random edits (through the
//! delta file, onto a loaded base), the handle map restored slot for slot, a wrong base
//! refused, exact errors, and truncation and corruption sweeps of the delta file.

use datacomp::format::FileError;
use datacomp::format::StoreError;
use datacomp::{Blob, Error, Id, ImportOptions, Key, LoadError, OwnedValue, Store, StorePatch};
use proptest::prelude::*;

mod common;
use common::{reseal, table};

#[derive(Clone, Debug)]
enum Edit {
    Insert(Vec<(usize, OwnedValue)>),
    Set(prop::sample::Index, usize, OwnedValue),
    RemoveKey(prop::sample::Index, usize),
    Remove(prop::sample::Index),
    Compact,
    Name(usize),
    DataVersion(u32),
}

const KEYS: usize = 6;

fn key(i: usize) -> Key {
    Key::parse(&format!("pool.k{i}"))
}

fn value() -> impl Strategy<Value = OwnedValue> {
    prop_oneof![
        any::<bool>().prop_map(OwnedValue::Bool),
        any::<u32>().prop_map(|b| OwnedValue::Float(f32::from_bits(b))),
        "\\PC{0,10}".prop_map(OwnedValue::Str),
        (0..400_usize).prop_map(|n| OwnedValue::Str("x".repeat(n))),
        prop::collection::vec(any::<f32>(), 0..12).prop_map(OwnedValue::Floats),
        Just(OwnedValue::Null),
    ]
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        3 => prop::collection::vec((0..KEYS, value()), 0..5).prop_map(Edit::Insert),
        6 => (any::<prop::sample::Index>(), 0..KEYS, value()).prop_map(|(e, k, v)| Edit::Set(e, k, v)),
        2 => (any::<prop::sample::Index>(), 0..KEYS).prop_map(|(e, k)| Edit::RemoveKey(e, k)),
        3 => any::<prop::sample::Index>().prop_map(Edit::Remove),
        1 => Just(Edit::Compact),
        1 => (0..KEYS).prop_map(Edit::Name),
        1 => (0..3_u32).prop_map(Edit::DataVersion),
    ]
}

fn run(store: &mut Store, edits: &[Edit]) {
    for edit in edits {
        let ids: Vec<Id> = store.iter().map(|(id, _)| id).collect();
        match edit {
            Edit::Insert(entries) => {
                store.insert(&entries.iter().map(|(k, v)| (key(*k), v)).collect::<Blob>());
            }
            Edit::Set(e, k, v) if !ids.is_empty() => {
                store.get_mut(*e.get(&ids)).unwrap().set(key(*k), v).unwrap();
            }
            Edit::RemoveKey(e, k) if !ids.is_empty() => {
                store.get_mut(*e.get(&ids)).unwrap().remove(key(*k));
            }
            Edit::Remove(e) if !ids.is_empty() => {
                store.remove(*e.get(&ids));
            }
            Edit::Compact => store.compact(),
            Edit::Name(k) => {
                store.insert_key_name(&format!("pool.k{k}")).unwrap();
            }
            Edit::DataVersion(version) => store.set_data_version(*version),
            _ => {}
        }
    }
}

/// The handle maps behave the same from here on: the same handles for the same inserts.
fn assert_same_future(mut a: Store, mut b: Store) {
    for _ in 0..4 {
        assert_eq!(a.insert_empty(), b.insert_empty());
    }
    let first = a.iter().next().map(|(id, _)| id);
    if let Some(id) = first {
        assert!(a.remove(id) && b.remove(id));
        assert_eq!(a.insert_empty(), b.insert_empty());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A delta of any edits, saved and read back, applied to the loaded base, gives the
    /// target, with the target's handle map.
    #[test]
    fn apply_of_diff_gives_the_target(
        before in prop::collection::vec(edit(), 0..30),
        after in prop::collection::vec(edit(), 0..30),
    ) {
        let mut base = Store::new();
        run(&mut base, &before);
        let mut target = base.clone();
        run(&mut target, &after);

        let delta = StorePatch::diff(&base, &target);
        let bytes = delta.to_bytes();
        prop_assert_eq!(bytes.len(), delta.file_len());
        let read = StorePatch::from_bytes(&bytes).unwrap();
        prop_assert_eq!((read.inserted(), read.changed()), (delta.inserted(), delta.changed()));

        let mut loaded = Store::from_bytes(&base.to_bytes()).unwrap();
        read.apply(&mut loaded).unwrap();
        prop_assert_eq!(&loaded, &target);
        // The result saves and loads like any store.
        prop_assert_eq!(&Store::from_bytes(&loaded.to_bytes()).unwrap(), &target);
        assert_same_future(loaded, target.clone());

        // In memory, onto the base itself.
        let mut in_memory = base.clone();
        delta.apply(&mut in_memory).unwrap();
        prop_assert_eq!(&in_memory, &target);

        // Nothing changed: nothing in the delta but the header, and applying changes nothing.
        let none = StorePatch::diff(&target, &target);
        prop_assert_eq!((none.inserted(), none.changed()), (0, 0));
        let mut same = target.clone();
        none.apply(&mut same).unwrap();
        prop_assert_eq!(&same, &target);
    }
}

fn worlds() -> (Store, Store, Vec<Id>) {
    let mut base = Store::new();
    let sheets = r#"[
        {"name": "Ann", "stats": {"health": 10, "mana": 5}, "pos": [1, 2]},
        {"name": "Bob", "stats": {"health": 20, "mana": 6}, "pos": [3, 4]},
        {"name": "Cid", "stats": {"health": 30, "mana": 7}, "pos": [5, 6]},
        {"name": "Dee", "stats": {"health": 40, "mana": 8}, "pos": [7, 8]}
    ]"#;
    let ids = base.import(sheets, &ImportOptions::strict()).unwrap().ids;
    let mut target = base.clone();
    target.get_mut(ids[0]).unwrap().set("stats.health", 11).unwrap();
    target.get_mut(ids[1]).unwrap().remove("pos");
    target.remove(ids[2]);
    let new = target.import(r#"{"name": "Eve", "stats": {"luck": 1}}"#, &ImportOptions::strict());
    assert_eq!(new.unwrap().ids.len(), 1);
    (base, target, ids)
}

#[test]
fn a_delta_counts_its_changes_and_is_small() {
    let (base, target, _) = worlds();
    let delta = StorePatch::diff(&base, &target);
    assert_eq!((delta.inserted(), delta.changed()), (1, 2));
    let debug = format!("{delta:?}");
    assert!(debug.starts_with("StorePatch { base_crc: "), "{debug}");
    assert!(debug.contains("entities: 4, inserted: 1, changed: 2"), "{debug}");
    assert!(delta.file_len() < base.to_bytes().len(), "{} bytes", delta.file_len());
}

#[test]
fn a_delta_carries_the_key_names_only_when_they_changed() {
    let (base, target, ids) = worlds();
    assert!(target.key_names().len() > base.key_names().len());
    let mut edited = base.clone();
    edited.get_mut(ids[0]).unwrap().set("stats.mana", 1).unwrap();
    let (renamed, same) = (StorePatch::diff(&base, &target), StorePatch::diff(&base, &edited));
    let names_len = |delta: &StorePatch| {
        let bytes = delta.to_bytes();
        table(&bytes).iter().find(|(kind, _, _)| *kind == 13).unwrap().2
    };
    assert!(names_len(&renamed) > 0);
    assert_eq!(names_len(&same), 0);
    let mut world = base.clone();
    StorePatch::from_bytes(&same.to_bytes()).unwrap().apply(&mut world).unwrap();
    assert_eq!(world, edited);
    assert_eq!(world.key_names().len(), base.key_names().len());
}

#[test]
fn a_delta_refuses_another_base_and_changes_nothing() {
    let (base, target, ids) = worlds();
    let delta = StorePatch::diff(&base, &target);
    let mut other = base.clone();
    other.get_mut(ids[3]).unwrap().set("stats.mana", 9).unwrap();
    let before = other.clone();
    let err = delta.apply(&mut other).unwrap_err();
    assert!(matches!(err, LoadError::Store(StoreError::DeltaBase { .. })), "{err}");
    assert!(err.to_string().starts_with("the delta was made from a base with crc32 "), "{err}");
    assert_eq!(other, before);
    // A compacted copy is equal, but laid out differently: a delta needs the exact base.
    let mut compacted = base.clone();
    compacted
        .get_mut(ids[0])
        .unwrap()
        .set("name", "A much longer name that moves the blob")
        .unwrap();
    compacted.get_mut(ids[0]).unwrap().set("name", "Ann").unwrap();
    assert_eq!(compacted, base);
    assert!(matches!(
        delta.apply(&mut compacted),
        Err(LoadError::Store(StoreError::DeltaBase { .. }))
    ));
}

#[test]
fn a_delta_refuses_a_base_of_another_data_version_and_gives_its_target_its_own() {
    let (mut base, mut target, _) = worlds();
    base.set_data_version(2);
    target.set_data_version(3);
    let delta = StorePatch::from_bytes(&StorePatch::diff(&base, &target).to_bytes()).unwrap();
    assert_eq!((delta.base_data_version(), delta.data_version()), (2, 3));
    let info = datacomp::format::describe(&delta.to_bytes()).unwrap();
    assert_eq!(info.data_version, 3, "the header names the data version the delta gives");

    for version in [0, 1, 3, u32::MAX] {
        let mut other = base.clone();
        other.set_data_version(version);
        let before = other.clone();
        let err = delta.apply(&mut other).unwrap_err();
        assert_eq!(
            err,
            LoadError::Store(StoreError::DeltaDataVersion { expected: 2, found: version })
        );
        assert_eq!(other, before, "nothing changed");
    }
    assert_eq!(
        LoadError::Store(StoreError::DeltaDataVersion { expected: 2, found: 3 }).to_string(),
        "the delta was made from a base of data version 2, not this store's 3: apply it before \
         migrating, or make it from the migrated base"
    );
    let mut world = Store::from_bytes(&base.to_bytes()).unwrap();
    delta.apply(&mut world).unwrap();
    assert_eq!(world.data_version(), 3);
    assert_eq!(world, target);
}

#[test]
fn the_delta_base_section_holds_the_base_data_version() {
    let (mut base, target, _) = worlds();
    base.set_data_version(5);
    let good = StorePatch::diff(&base, &target).to_bytes();
    let at = section(&good, 7);
    assert_eq!(at.len(), 12, "crc32, flags, the base's data version");
    assert_eq!(good[at.start + 8..at.end], 5_u32.to_le_bytes());
    // Format 1.0 wrote the crc32 and the flags only (see tests/golden.rs); any other size is
    // refused.
    let mut long = good.clone();
    let table_entry = table(&good).iter().position(|(kind, _, _)| *kind == 7).unwrap();
    long[32 + 24 * table_entry + 16..32 + 24 * table_entry + 24]
        .copy_from_slice(&16_u64.to_le_bytes());
    reseal(&mut long);
    assert_eq!(
        StorePatch::from_bytes(&long).unwrap_err(),
        LoadError::Store(StoreError::SectionSize {
            section: "delta base",
            expected: 12,
            found: 16
        })
    );
}

#[test]
fn a_delta_and_a_save_are_told_apart() {
    let (base, target, _) = worlds();
    let delta = StorePatch::diff(&base, &target).to_bytes();
    let kind = |expected, found| LoadError::File(FileError::FileKind { expected, found });
    assert_eq!(Store::from_bytes(&delta).unwrap_err(), kind("save", "delta"));
    assert_eq!(StorePatch::from_bytes(&base.to_bytes()).unwrap_err(), kind("delta", "save"));
    assert_eq!(kind("save", "delta").to_string(), "this is a delta file, not a save file");
    let info = datacomp::format::describe(&delta).unwrap();
    assert_eq!(info.kind, datacomp::format::FileKind::Delta);
    let names: Vec<&str> = info.sections.iter().map(|s| s.name).collect();
    assert_eq!(
        names,
        [
            "delta base",
            "delta index header",
            "delta slot changes",
            "delta meta changes",
            "delta entities",
            "key tree",
            "prototypes"
        ]
    );
    assert_eq!(
        datacomp::format::describe(&base.to_bytes()).unwrap().kind,
        datacomp::format::FileKind::Save
    );
}

#[test]
fn save_and_load_a_delta_file() {
    let (base, target, _) = worlds();
    let dir = std::env::temp_dir().join(format!("datacomp-delta-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (base_path, delta_path) = (dir.join("base.dcmp"), dir.join("delta.dcmp"));
    base.save(&base_path).unwrap();
    StorePatch::diff(&base, &target).save(&delta_path).unwrap();
    let mut world = Store::load(&base_path).unwrap();
    StorePatch::load(&delta_path).unwrap().apply(&mut world).unwrap();
    assert_eq!(world, target);
    assert!(matches!(StorePatch::load(dir.join("missing")), Err(Error::Io(_))));
    assert!(matches!(
        StorePatch::load(&base_path),
        Err(Error::Load(LoadError::File(FileError::FileKind { .. })))
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The byte range of the section of `kind`.
fn section(bytes: &[u8], kind: u32) -> std::ops::Range<usize> {
    let (_, offset, len) = *table(bytes).iter().find(|(k, _, _)| *k == kind).unwrap();
    offset..offset + len
}

#[test]
fn each_delta_malformation_gets_its_own_error() {
    let (base, target, ids) = worlds();
    let good = StorePatch::diff(&base, &target).to_bytes();
    let edit = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut bytes = good.clone();
        f(&mut bytes);
        reseal(&mut bytes);
        StorePatch::from_bytes(&bytes).err()
    };
    let entities = section(&good, 11);
    let slots = section(&good, 9);
    let first_record = entities.start;
    let word = |b: &mut Vec<u8>, at: usize, value: u32| {
        b[at..at + 4].copy_from_slice(&value.to_le_bytes());
    };

    assert_eq!(
        edit(&|b| word(b, first_record + 8, 3)),
        Some(LoadError::Store(StoreError::DeltaRecord {
            offset: 0,
            problem: "the record's kind is neither 1 (inserted) nor 2 (changed)"
        }))
    );
    assert_eq!(
        edit(&|b| word(b, first_record + 12, 1_000_000)),
        Some(LoadError::Store(StoreError::DeltaRecord {
            offset: 0,
            problem: "the record's data runs past the section"
        }))
    );
    // The first record is the patch of ids[0]; its removal count now claims 1000 keys.
    let err = edit(&|b| word(b, first_record + 16, 1000)).unwrap();
    let LoadError::Store(StoreError::DeltaPatch { id, error: patch_error }) = &err else {
        panic!("not a patch error: {err}");
    };
    assert_eq!(*id, ids[0]);
    // `LoadError` is transparent: its words are the delta error's, and its source is the delta
    // error's own, the patch's error.
    let LoadError::Store(delta_error) = &err else { unreachable!() };
    assert_eq!(delta_error.to_string(), err.to_string(), "the wrapper adds no words");
    let patch_source = std::error::Error::source(&err).expect("the patch error is the source");
    assert_eq!(patch_source.downcast_ref::<datacomp::BlobError>(), Some(patch_error));
    assert_eq!(
        std::error::Error::source(delta_error).map(ToString::to_string),
        Some(patch_error.to_string())
    );
    assert_eq!(
        edit(&|b| b.copy_within(slots.start + 12..slots.start + 24, slots.start)),
        Some(LoadError::Store(StoreError::DeltaChange {
            section: "delta slot changes",
            index: 1,
            problem: "not after the entry before it"
        }))
    );
    assert_eq!(
        edit(&|b| word(b, section(&good, 7).start + 4, 2)),
        Some(LoadError::Store(StoreError::DeltaChange {
            section: "delta base",
            index: 1,
            problem: "flags other than bit 0 (names are the base's) are set"
        }))
    );
    // `good` carries the target's names (it has a new one); flag 1 says they are the base's.
    assert_eq!(
        edit(&|b| word(b, section(&good, 7).start + 4, 1)),
        Some(LoadError::Store(StoreError::DeltaChange {
            section: "delta base",
            index: 1,
            problem: "the names are the base's, yet the key tree section is not empty"
        }))
    );

    // Checks that need the base: applied, they fail and change nothing.
    let apply = |bytes: &[u8]| {
        let mut world = base.clone();
        let result = StorePatch::from_bytes(bytes).unwrap().apply(&mut world);
        assert_eq!(world, base, "a failed apply changed the store");
        result.err()
    };
    let mut moved = good.clone();
    // The last changed slot now lies past the target's last slot.
    moved[slots.end - 12..slots.end - 8].copy_from_slice(&1_000_u32.to_le_bytes());
    reseal(&mut moved);
    let err = apply(&moved).unwrap();
    assert!(
        matches!(
            err,
            LoadError::Store(StoreError::DeltaChange { section: "delta slot changes", .. })
        ),
        "{err}"
    );
    // The first record now names an entity the target does not have.
    let mut stray = good.clone();
    stray[first_record..first_record + 8].copy_from_slice(&ids[2].to_bits().to_le_bytes());
    reseal(&mut stray);
    let err = apply(&stray).unwrap();
    assert!(matches!(err, LoadError::Store(StoreError::DeltaEntity { .. })), "{err}");
}

/// Every truncation of a delta file, and every bit flip, is an error; re-sealed after each
/// flip, so that the flip reaches the checks behind the crc32s, a flip gives an error (and an
/// unchanged store) or a delta that applies to a valid store; none panics.
#[test]
fn delta_truncation_and_corruption_sweeps() {
    let (base, target, _) = worlds();
    let good = StorePatch::diff(&base, &target).to_bytes();
    for len in 0..good.len() {
        assert!(StorePatch::from_bytes(&good[..len]).is_err(), "{len}");
    }
    for at in 0..good.len() {
        for bit in 0..8 {
            let mut bad = good.clone();
            bad[at] ^= 1 << bit;
            assert!(StorePatch::from_bytes(&bad).is_err(), "bit {bit} of byte {at}");
            reseal(&mut bad);
            let Ok(delta) = StorePatch::from_bytes(&bad) else { continue };
            let mut world = base.clone();
            match delta.apply(&mut world) {
                Ok(()) => assert_eq!(Store::from_bytes(&world.to_bytes()).unwrap(), world),
                Err(_) => assert_eq!(world, base),
            }
        }
    }
}

/// `apply` of each link in turn, stopping at the first that fails: what `apply_chain` must
/// give, in less time.
fn apply_in_turn(chain: &[StorePatch], store: &mut Store) -> Result<(), (usize, LoadError)> {
    for (i, link) in chain.iter().enumerate() {
        link.apply(store).map_err(|error| (i, error))?;
    }
    Ok(())
}

/// A chain of 8 links (inserts, removals, changes, a data version bump) and one of another
/// world: `apply_chain` gives what applying each in turn gives (the same state, the same
/// failing link and error) for the chain whole, cut short, and with every link replaced by
/// every other (stale, repeated, out of order) or by the foreign one.
#[test]
fn apply_chain_is_apply_of_each_in_turn_whatever_the_links() {
    let mut world = Store::new();
    let ids: Vec<Id> =
        (0..40_u16).map(|i| world.insert_entries([("gold", f32::from(i))]).unwrap()).collect();
    let base = world.clone();
    let mut other = world.clone();
    let mut mark = world.mark();
    let mut other_mark = other.mark();
    let mut chain = Vec::new();
    for round in 0..8_usize {
        let r = round as f32;
        world.get_mut(ids[round]).unwrap().set("gold", -r).unwrap();
        world.remove(ids[20 + round]);
        world.insert_entries([("gold", r), ("round", r)]).unwrap();
        if round == 5 {
            world.set_data_version(2);
        }
        chain.push(mark.take_delta(&world));
    }
    other.get_mut(ids[3]).unwrap().set("gold", 99.0).unwrap();
    let foreign = other_mark.take_delta(&other);
    other.get_mut(ids[3]).unwrap().set("gold", 98.0).unwrap();
    let foreign_next = other_mark.take_delta(&other);

    let check = |links: &[StorePatch], what: &str| {
        let (mut fast, mut slow) = (base.clone(), base.clone());
        let got = StorePatch::apply_chain(links, &mut fast);
        let want = apply_in_turn(links, &mut slow);
        assert_eq!(got, want, "{what}");
        assert_eq!(fast, slow, "{what}");
        got
    };
    assert_eq!(check(&chain, "whole"), Ok(()));
    for len in 0..chain.len() {
        assert_eq!(check(&chain[..len], "cut short"), Ok(()));
    }
    let mut broken = 0;
    for at in 0..chain.len() {
        for with in (0..chain.len()).map(|j| &chain[j]).chain([&foreign, &foreign_next]) {
            let mut links = chain.clone();
            links[at] = with.clone();
            if check(&links, &format!("link {at} replaced")).is_err() {
                broken += 1;
            }
        }
    }
    // Every replacement by another link breaks the chain (none is its own).
    assert_eq!(broken, chain.len() * (chain.len() + 1));
    // A stale link in the middle: the chain ends there, with the base error.
    let mut links = chain.clone();
    links[4] = chain[2].clone();
    let mut store = base.clone();
    let (at, error) = StorePatch::apply_chain(&links, &mut store).unwrap_err();
    assert_eq!(at, 4);
    assert!(matches!(error, LoadError::Store(StoreError::DeltaBase { .. })), "{error:?}");
}
