//! `LoadError` by layer: each layer's error, raised by a real load, comes back wrapped in its own
//! variant, transparent: `Display` is the inner error's words and `source()` the inner error's
//! own source, so a chain of errors prints each message once; and every error of the crate
//! converts into `Error` the same way.

use std::error::Error as _;

use datacomp::blob::Patch;
use datacomp::format::FileError;
use datacomp::format::StoreError;
use datacomp::handle_map::HandleMapError;
use datacomp::migrate::MigrateError;
use datacomp::{
    Blob, BlobError, Error, HandleError, Id, Key, KeyError, LoadError, MigrationStep, Migrations,
    Query, Store, StorePatch, StoreView,
};

mod common;
use common::{reseal, table, u32_at};

/// A save of format 1.0 and key hash 1 whose keys are not all named (see tests/golden.rs).
const GOLDEN_V1: &[u8] = include_bytes!("../fixtures/world_v1.dcmp");

/// Section kinds of a save.
const INDEX_HEADER: u32 = 1;
const ARENA: u32 = 5;

fn store() -> Store {
    let mut store = Store::new();
    for name in ["Ada", "Bob"] {
        store.insert(&[("name", name)].into_iter().collect::<Blob>());
    }
    store
}

fn section(bytes: &[u8], kind: u32) -> usize {
    table(bytes).iter().find(|&&(k, _, _)| k == kind).unwrap().1
}

/// `bytes` changed by `edit`, checksums recomputed so the checks behind them are reached.
fn edited(bytes: &[u8], edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut bytes = bytes.to_vec();
    edit(&mut bytes);
    reseal(&mut bytes);
    bytes
}

/// Checks that `err` is the layer's transparent wrapping of `inner`: its `Display` is the inner
/// one's, word for word, and its `source()` is the inner one's source (not `inner` itself,
/// whose words `err` already printed).
fn wraps<E: std::error::Error + PartialEq + 'static>(err: &LoadError, inner: &E) {
    assert_eq!(err.to_string(), inner.to_string());
    assert_eq!(
        err.source().map(|s| s.to_string()),
        inner.source().map(|s| s.to_string()),
        "{err:?}"
    );
}

#[test]
fn each_layer_comes_back_through_load_error_transparently() {
    let good = store().to_bytes();

    // The container: not a datacomp file at all.
    let err = Store::from_bytes(&[b"NOTASAVE".as_slice(), &[0; 24]].concat()).unwrap_err();
    let inner = FileError::BadMagic { found: *b"NOTASAVE" };
    assert_eq!(err, LoadError::File(inner.clone()));
    wraps(&err, &inner);

    // The handle map: a base past what `reset` gives.
    let header = section(&good, INDEX_HEADER);
    let base = u32::MAX - 2;
    let bytes = edited(&good, |b| b[header + 4..header + 8].copy_from_slice(&base.to_le_bytes()));
    let err = Store::from_bytes(&bytes).unwrap_err();
    let inner = HandleMapError::Base { base, max: u32::MAX / 2 };
    assert_eq!(err, LoadError::HandleMap(inner.clone()));
    wraps(&err, &inner);

    // The store's content: an index of another type id, and a blob whose key count runs
    // past its span (three layers: the load, the entity, the blob).
    let bytes = edited(&good, |b| b[header] = 5);
    let err = Store::from_bytes(&bytes).unwrap_err();
    let inner = StoreError::TypeId { expected: 1, found: 5 };
    assert_eq!(err, LoadError::Store(inner.clone()));
    wraps(&err, &inner);

    let arena = section(&good, ARENA);
    // The first entity's blob: from word 0 to the first end offset (section `index ends`).
    let words = u32_at(&good, section(&good, 14)) as usize;
    let bytes = edited(&good, |b| b[arena..arena + 4].copy_from_slice(&1000_u32.to_le_bytes()));
    let err = Store::from_bytes(&bytes).unwrap_err();
    let blob = BlobError::HeaderOutOfBounds {
        keys: 1000,
        header_end: 4 * (2 + 2000 + 250),
        byte_len: 4 * words,
    };
    let id = store().iter().next().unwrap().0;
    let inner = StoreError::Blob { id, error: blob.clone() };
    assert_eq!(err, LoadError::Store(inner.clone()));
    wraps(&err, &inner);
    let blob_source = err.source().unwrap();
    assert_eq!(blob_source.downcast_ref::<BlobError>(), Some(&blob));
    assert_eq!(err.to_string(), format!("entity {id}: {blob}"));

    // The upgrade: a key hash 1 save with unnamed keys, and the same save read in place.
    let err = Store::from_bytes(GOLDEN_V1).unwrap_err();
    let LoadError::Store(inner @ StoreError::UnexplainedKeys { keys }) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(keys.len(), 8);
    wraps(&err, inner);
    let mut words = vec![0_u64; GOLDEN_V1.len().div_ceil(8)];
    zerocopy::IntoBytes::as_mut_bytes(words.as_mut_slice())[..GOLDEN_V1.len()]
        .copy_from_slice(GOLDEN_V1);
    let aligned = &zerocopy::IntoBytes::as_bytes(words.as_slice())[..GOLDEN_V1.len()];
    let err = StoreView::new(aligned).unwrap_err();
    let inner = StoreError::KeyHashView { key_hash: 1 };
    assert_eq!(err, LoadError::Store(inner.clone()));
    wraps(&err, &inner);

    // The delta: applied to a store that is not its base.
    let base = store();
    let mut target = base.clone();
    target.insert_empty();
    let delta = StorePatch::diff(&base, &target);
    let mut other = target.clone();
    let err = delta.apply(&mut other).unwrap_err();
    let LoadError::Store(inner @ StoreError::DeltaBase { .. }) = &err else { panic!("{err:?}") };
    wraps(&err, inner);
    assert_eq!(other, target, "unchanged");
    // A delta's own section of the wrong size is the delta's, not the container's: the
    // `delta base` section (kind 7) said to be 16 bytes long.
    let delta_bytes = delta.to_bytes();
    let entry = 32 + 24 * table(&delta_bytes).iter().position(|e| e.0 == 7).unwrap();
    let long = edited(&delta_bytes, |b| {
        b[entry + 16..entry + 24].copy_from_slice(&16_u64.to_le_bytes());
    });
    let err = StorePatch::from_bytes(&long).unwrap_err();
    let inner = StoreError::SectionSize { section: "delta base", expected: 12, found: 16 };
    assert_eq!(err, LoadError::Store(inner.clone()));
    wraps(&err, &inner);
    assert_eq!(err.to_string(), "section 'delta base' is 16 bytes; its header says 12");
}

#[test]
fn the_crate_error_chains_down_to_the_layer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("short.dcmp");
    std::fs::write(&path, b"DATACOMP").unwrap();
    let err = Store::load(&path).unwrap_err();
    let inner = FileError::Truncated { what: "file header", needed: 32, len: 8 };
    let Error::Load(load) = &err else { panic!("{err:?}") };
    assert_eq!(load, &LoadError::File(inner.clone()));
    // Error -> LoadError -> FileError, transparent: one message, printed once.
    let mut chain = Vec::new();
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(&err);
    while let Some(e) = next {
        chain.push(e.to_string());
        next = e.source();
    }
    assert_eq!(chain, vec![inner.to_string()]);
    assert_eq!(chain[0], "file of 8 bytes ends inside the file header, which needs 32");
}

/// `inner` converted into the crate's `Error`, checked transparent: the same words, and the
/// inner error's own source (not `inner` itself).
fn converts<E: std::error::Error + Clone + Into<Error>>(inner: &E) -> Error {
    let err: Error = inner.clone().into();
    assert_eq!(err.to_string(), inner.to_string());
    assert_eq!(
        err.source().map(|s| s.to_string()),
        inner.source().map(|s| s.to_string()),
        "{err:?}"
    );
    err
}

#[test]
fn every_error_of_the_crate_converts_into_the_crate_error_transparently() {
    let key = "".parse::<Key>().unwrap_err();
    assert!(matches!(converts(&key), Error::Key(KeyError::Empty)));

    let blob = Blob::from_bytes(&[0; 6]).unwrap_err();
    assert!(matches!(converts(&blob), Error::Blob(BlobError::Truncated { byte_len: 6 })));
    // A patch's values that are no blob: the patch error holds the blob's as its source.
    let patch = Patch::from_bytes(&[0; 4]).unwrap_err();
    assert!(patch.source().is_some());
    assert!(matches!(converts(&patch), Error::Blob(BlobError::PatchSets(_))));

    let handle = "12v".parse::<Id>().unwrap_err();
    assert!(matches!(converts(&handle), Error::Handle(HandleError::Parse { .. })));

    // A load's layers reach `Error` through `LoadError`.
    let map = HandleMapError::Base { base: u32::MAX, max: u32::MAX / 2 };
    assert_eq!(converts(&map).to_string(), LoadError::HandleMap(map.clone()).to_string());
    assert!(matches!(converts(&map), Error::Load(LoadError::HandleMap(_))));
    let file = FileError::Padding { offset: 40 };
    assert!(matches!(converts(&file), Error::Load(LoadError::File(_))));
    let id = Id::NULL;
    let store = StoreError::Blob { id, error: blob.clone() };
    assert!(matches!(converts(&store), Error::Load(LoadError::Store(StoreError::Blob { .. }))));
    let load = LoadError::from(StoreError::DeltaBase { expected: 1, found: 2 });
    assert!(matches!(converts(&load), Error::Load(_)));

    let query = Query::parse("has").unwrap_err();
    assert!(matches!(converts(&query), Error::Query(_)));

    // Boxed in `Error`, and transparent all the same.
    let mut names = Store::new();
    names.insert_key_name("sleep_haste_8").unwrap();
    let step = MigrationStep::to(2).set("fury_sleep_272", 1);
    let migrate = Migrations::new(2).step(step).apply(&mut names).unwrap_err();
    assert!(matches!(&migrate, MigrateError::KeyCollision { .. }), "{migrate}");
    assert!(matches!(converts(&migrate), Error::Migrate(_)));

    #[cfg(feature = "json")]
    {
        let json = Blob::import("{\"a\": null}", &datacomp::ImportOptions::strict()).unwrap_err();
        assert!(matches!(converts(&json), Error::Json(_)));
        let mut store = Store::new();
        let gone = store.insert_empty();
        store.remove(gone);
        let export = store.export(gone, &datacomp::ExportOptions::json()).unwrap_err();
        assert!(matches!(converts(&export), Error::Export(datacomp::ExportError::Handle(_))));
    }

    let io = Error::from(std::io::Error::other("disk on fire"));
    assert_eq!(io.to_string(), "disk on fire");
    assert!(matches!(io, Error::Io(_)));
}

/// A load returns `Result<Store, LoadError>` or `Result<StoreView, LoadError>`: nesting the
/// errors by layer must not make those results bigger (56 and 72 bytes before, on 64-bit):
/// no bigger than the view itself, which grew from 72 to 88 bytes with format 1.3 (its index
/// reads end offsets or spans, and answers an identity map's handles without slots), and to
/// 104 with format 1.5 (its prototype links).
#[test]
#[cfg(target_pointer_width = "64")]
fn nesting_does_not_grow_the_error() {
    use std::mem::size_of;
    assert_eq!(size_of::<LoadError>(), 56);
    // The crate's error wraps every area's (the two large ones boxed) in no more than before.
    assert_eq!(size_of::<Error>(), 64);
    assert_eq!(size_of::<StoreView<'static>>(), 104);
    assert_eq!(size_of::<Result<StoreView<'static>, LoadError>>(), 104);
    assert!(size_of::<FileError>() <= size_of::<LoadError>());
    assert!(size_of::<StoreError>() <= size_of::<LoadError>());
}
