//! Designers' JSON round trips: a generated corpus in the shapes of real game data (issue 16)
//! is imported, saved, loaded and exported, and comes back as it was written, byte for byte,
//! compact and pretty; so do documents with arrays of every kind (objects, strings, mixed,
//! nested, empty), which a store records as arrays. The same documents go through SJSON
//! export and import and come back as the same JSON.

#[path = "common/corpus.rs"]
mod corpus;

use corpus::J;
use datacomp::text::ImportReport;
use datacomp::{ExportOptions, ImportOptions, Store, StorePatch, TextFormat};

/// The document's text in both forms an export writes.
fn texts(doc: &J) -> [String; 2] {
    let pretty = match doc {
        J::Arr(items) => J::pretty_all(items),
        other => other.pretty(0),
    };
    [doc.compact(), pretty]
}

/// `text` imported under `options`, saved to a file and loaded back.
fn import_save_load(text: &str, options: &ImportOptions) -> (Store, ImportReport) {
    let mut store = Store::new();
    let report = store.import(text, options).unwrap().report;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("world.dcmp");
    store.save(&path).unwrap();
    let loaded = Store::load(&path).unwrap();
    assert_eq!(loaded, store);
    (loaded, report)
}

/// Asserts two texts are equal, showing where they first differ (the texts are long).
#[track_caller]
fn assert_same(got: &str, expected: &str, name: &str) {
    if got == expected {
        return;
    }
    let at = got.bytes().zip(expected.bytes()).take_while(|(a, b)| a == b).count();
    let around = |text: &str| {
        let start = text.floor_char_boundary(at.saturating_sub(60));
        let end = text.ceil_char_boundary((at + 60).min(text.len()));
        text[start..end].to_owned()
    };
    panic!("{name}: differs at byte {at}:\n got: {}\nwant: {}", around(got), around(expected));
}

/// Checks that `store` exports exactly `entities`, whole and one by one, compact and pretty.
#[track_caller]
fn assert_exports(store: &Store, entities: &[J], name: &str) {
    let all = J::Arr(entities.to_vec());
    assert_same(&store.export_all(&ExportOptions::json()).unwrap(), &all.compact(), name);
    assert_same(
        &store.export_all(&ExportOptions::json().pretty(true)).unwrap(),
        &J::pretty_all(entities),
        name,
    );
    assert_eq!(store.len(), entities.len(), "{name}");
    for ((id, _), entity) in store.iter().zip(entities) {
        assert_same(&store.export(id, &ExportOptions::json()).unwrap(), &entity.compact(), name);
        assert_same(
            &store.export(id, &ExportOptions::json().pretty(true)).unwrap(),
            &entity.pretty(0),
            name,
        );
    }
}

#[test]
fn the_corpus_round_trips_byte_for_byte() {
    let documents = corpus::documents();
    assert!(documents.iter().any(|(_, d)| d.entities().len() >= 300), "a few-hundred-entity one");
    for (name, doc) in documents {
        let [compact, pretty] = texts(&doc);
        let runs = [
            (compact.as_str(), ImportOptions::strict()),
            (&pretty, ImportOptions::strict()),
            (&compact, ImportOptions::lenient()),
        ];
        for (text, options) in runs {
            let (store, report) = import_save_load(text, &options);
            assert_eq!(report, ImportReport::default(), "{name}: nothing to change");
            assert_exports(&store, &doc.entities(), name);
        }
    }
}

#[test]
fn edits_diffs_and_merges_keep_the_round_trip() {
    let (name, doc) = corpus::documents().into_iter().find(|(n, _)| *n == "monsters").unwrap();
    let entities = doc.entities();
    let (mut store, _) = import_save_load(&doc.compact(), &ImportOptions::strict());
    let base = store.clone();
    let ids: Vec<_> = store.iter().map(|(id, _)| id).collect();
    // A value changed and changed back, in place: the same document.
    for &id in &ids[..10] {
        let hp = store.get(id).unwrap().get_float("hit_points").unwrap();
        store.get_mut(id).unwrap().set("hit_points", hp + 1.5).unwrap();
        store.get_mut(id).unwrap().set("hit_points", hp).unwrap();
    }
    assert_exports(&store, &entities, name);
    // A change carried by a delta: the target's document, member order kept.
    store.get_mut(ids[3]).unwrap().set("abilities.wisdom", 31).unwrap();
    store.get_mut(ids[3]).unwrap().set("position", [0.5, 1.0, -2.25]).unwrap();
    let mut changed = entities.clone();
    let J::Obj(members) = &mut changed[3] else { panic!("an object") };
    for (member, value) in members.iter_mut() {
        match member.as_str() {
            "abilities" => {
                let J::Obj(abilities) = value else { panic!("an object") };
                abilities.iter_mut().find(|(a, _)| a == "wisdom").unwrap().1 = J::Num("31".into());
            }
            "position" => *value = J::Arr(["0.5", "1", "-2.25"].map(|n| J::Num(n.into())).into()),
            _ => {}
        }
    }
    assert_exports(&store, &changed, name);
    let delta = StorePatch::diff(&base, &store).to_bytes();
    let mut applied = base.clone();
    StorePatch::from_bytes(&delta).unwrap().apply(&mut applied).unwrap();
    assert_exports(&applied, &changed, name);
}

#[test]
fn numbers_written_otherwise_come_back_as_people_write_them() {
    let text = r#"{"a": 17.0, "b": 0.50, "c": 1E3, "d": 2.5e0, "e": -0, "f": 0.1000000, "g": [1.0, 3e-1],
        "h": 12345679.5, "i": 1.00000001}"#;
    let written =
        r#"{"a":17,"b":0.5,"c":1000,"d":2.5,"e":-0.0,"f":0.1,"g":[1,0.3],"h":12345680,"i":1}"#;
    for options in [ImportOptions::strict(), ImportOptions::lenient()] {
        let (store, report) = import_save_load(text, &options);
        assert_eq!(report, ImportReport::default());
        let (id, _) = store.iter().next().unwrap();
        let exported = store.export(id, &ExportOptions::json()).unwrap();
        assert_eq!(exported, written);
        assert!(J::parse(&exported).same_as_f32(&J::parse(text)), "the same numbers as f32");
    }
}

/// The shapes of issue 16 that need the store's array shapes (its key tree records which
/// paths are arrays): arrays of objects, of strings, mixed, nested and empty ones.
#[test]
fn documents_with_arrays_of_every_kind_round_trip() {
    for (name, doc) in corpus::array_documents() {
        for text in texts(&doc) {
            let (store, _) = import_save_load(&text, &ImportOptions::lenient());
            let (id, _) = store.iter().next().unwrap();
            let exported = store.export(id, &ExportOptions::json()).unwrap();
            assert_eq!(exported, doc.compact(), "{name}");
        }
    }
}

/// The store's entities written as SJSON (checked), read back by a new store under
/// `options` and saved and loaded: the JSON it exports, compact.
fn through_sjson(store: &Store, options: &ImportOptions) -> String {
    let sjson = store.export_all(&ExportOptions::sjson()).unwrap();
    let mut copy = Store::new();
    copy.import(&sjson, &options.format(TextFormat::Sjson)).unwrap();
    let copy = Store::from_bytes(&copy.to_bytes()).unwrap();
    for ((id, _), (copy_id, _)) in store.iter().zip(copy.iter()) {
        let one = store.export(id, &ExportOptions::sjson()).unwrap();
        let mut alone = Store::new();
        let again = alone.import(&one, &options.format(TextFormat::Sjson)).unwrap().ids[0];
        assert_eq!(
            alone.export(again, &ExportOptions::json()),
            copy.export(copy_id, &ExportOptions::json())
        );
    }
    copy.export_all(&ExportOptions::json()).unwrap()
}

/// SJSON export writes what JSON export writes (issue 16): the corpus, strictly, and the
/// documents with arrays of every kind, leniently, come back as the same JSON text through
/// an SJSON export and import; arrays are written as SJSON arrays, not as objects keyed by
/// index (which a new store would export as objects).
#[test]
fn the_corpus_and_arrays_round_trip_through_sjson() {
    for (name, doc) in corpus::documents() {
        let (store, _) = import_save_load(&doc.compact(), &ImportOptions::strict());
        let all = J::Arr(doc.entities());
        assert_same(&through_sjson(&store, &ImportOptions::strict()), &all.compact(), name);
    }
    for (name, doc) in corpus::array_documents() {
        let (store, _) = import_save_load(&doc.compact(), &ImportOptions::lenient());
        let all = J::Arr(vec![doc.clone()]);
        assert_same(&through_sjson(&store, &ImportOptions::lenient()), &all.compact(), name);
        let (id, _) = store.iter().next().unwrap();
        let sjson = store.export(id, &ExportOptions::sjson()).unwrap();
        assert!(!sjson.contains("\"0\" ="), "{name}: an array written as an object: {sjson}");
    }
}
