//! The plugin in a running `App`, frame by frame with `update()`: fixtures spawned, edited,
//! saved, loaded into a fresh app; hot reload; damaged saves; migrations; autosaves; despawns
//! and undo. File jobs run on the I/O pool: a test waits for them with `flush`, or updates
//! until the asset server is done (at most `MAX_FRAMES` frames, never a timed assertion).

use std::path::{Path, PathBuf};

use bevy_app::{App, TaskPoolPlugin};
use bevy_asset::{AssetPlugin, AssetServer, LoadState};
use bevy_ecs::entity::Entity;
use bevy_ecs::message::{Message, Messages};
use bevy_ecs::world::World;
use datacomp::format::{FileError, StoreError};
use datacomp::migrate::MigrateError;
use datacomp::store::PathConflict;
use datacomp::{
    ExportOptions, ImportOptions, Key, LoadError, MigrationStep, Migrations, OwnedValue, Store,
    StorePatch,
};
use datacomp_bevy::save::{MIRROR_SLOTS_PER_FRAME, link_path};
use datacomp_bevy::{
    Autosave, Damaged, DataStore, DatacompPlugin, Error, Every, Fixture, FixtureConflict,
    FixtureLinkFailed, FixtureReloaded, FixtureSettings, FromFixture, LoadGame, Loaded, SaveGame,
    SaveKind, Saved, Sheet, flush,
};

/// Frames a test waits for the asset server at most.
const MAX_FRAMES: usize = 20_000;

const ORCS: &str = r#"[
    {"name": "Grunt", "stats": {"health": 30, "mana": 0}, "tags": [1, 2]},
    {"name": "Shaman", "stats": {"health": 20, "mana": 50}},
    {"name": "Chief", "stats": {"health": 60, "mana": 10}, "boss": true}
]"#;

fn app(assets: &Path, plugin: DatacompPlugin) -> App {
    let mut app = App::new();
    app.add_plugins((
        TaskPoolPlugin::default(),
        AssetPlugin { file_path: assets.to_string_lossy().into_owned(), ..AssetPlugin::default() },
        plugin,
    ));
    app.finish();
    app.cleanup();
    app
}

/// Updates until `done`, at most `MAX_FRAMES` frames (the asset server loads on other threads).
fn update_until(app: &mut App, what: &str, mut done: impl FnMut(&mut World) -> bool) {
    for _ in 0..MAX_FRAMES {
        app.update();
        if done(app.world_mut()) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
    panic!("{what}: not done after {MAX_FRAMES} frames");
}

fn drain<M: Message>(app: &mut App) -> Vec<M> {
    app.world_mut().resource_mut::<Messages<M>>().drain().collect()
}

fn spawn_from(app: &mut App, file: &str, indices: impl IntoIterator<Item = usize>) -> Vec<Entity> {
    let fixture = app.world().resource::<AssetServer>().load::<Fixture>(file.to_owned());
    indices
        .into_iter()
        .map(|index| app.world_mut().spawn(FromFixture { fixture: fixture.clone(), index }).id())
        .collect()
}

fn sheet(app: &App, entity: Entity) -> Option<Sheet> {
    app.world().get::<Sheet>(entity).copied()
}

fn all_linked(app: &mut App, entities: &[Entity]) {
    let entities = entities.to_vec();
    update_until(app, "entities linked", |world| {
        entities.iter().all(|&e| world.get::<Sheet>(e).is_some())
    });
}

fn float(app: &App, entity: Entity, key: &str) -> Option<f32> {
    let sheet = sheet(app, entity)?;
    app.world().resource::<DataStore>().get(&sheet)?.get_float(key)
}

fn set(app: &mut App, entity: Entity, key: &str, value: f32) {
    let sheet = sheet(app, entity).unwrap();
    let mut data = app.world_mut().resource_mut::<DataStore>();
    data.get_mut(&sheet).unwrap().set(key, value).unwrap();
}

fn save(app: &mut App, path: &Path) -> Saved {
    app.world_mut().write_message(SaveGame { path: path.to_owned() });
    app.update();
    flush(app.world_mut());
    let mut saved = drain::<Saved>(app);
    assert_eq!(saved.len(), 1, "one save, one answer");
    saved.pop().unwrap()
}

fn load(app: &mut App, path: &Path) -> Loaded {
    app.world_mut().write_message(LoadGame { path: path.to_owned() });
    app.update();
    flush(app.world_mut());
    let mut loaded = drain::<Loaded>(app);
    assert_eq!(loaded.len(), 1, "one load, one answer");
    loaded.pop().unwrap()
}

/// Every entity with a `Sheet`, by the sheet's handle, and the store.
fn linked(app: &mut App) -> Vec<(Sheet, Entity)> {
    let world = app.world_mut();
    let mut all: Vec<(Sheet, Entity)> =
        world.query::<(Entity, &Sheet)>().iter(world).map(|(e, s)| (*s, e)).collect();
    all.sort_by_key(|(s, _)| s.0);
    all
}

fn store(app: &App) -> &Store {
    app.world().resource::<DataStore>().store()
}

fn write(dir: &Path, file: &str, text: &str) -> PathBuf {
    let path = dir.join(file);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn spawn_from_fixtures_edit_save_and_load_into_a_fresh_app() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "orcs.json", ORCS);
    let mut first = app(dir.path(), DatacompPlugin::default());
    let orcs = spawn_from(&mut first, "orcs.json", (0..60).map(|i| i % 3));
    all_linked(&mut first, &orcs);
    assert_eq!(store(&first).len(), 60);
    assert_eq!(float(&first, orcs[4], "stats.mana"), Some(50.0), "entity 1 of the file");

    // Edit: every orc takes its own health, one loses a key, one gains a string, ten go.
    for (i, &orc) in orcs.iter().enumerate() {
        set(&mut first, orc, "stats.health", i as f32);
    }
    let shaman = sheet(&first, orcs[1]).unwrap();
    let chief = sheet(&first, orcs[2]).unwrap();
    let mut data = first.world_mut().resource_mut::<DataStore>();
    assert!(data.get_mut(&shaman).unwrap().remove(datacomp::Key::parse("stats.mana")));
    data.get_mut(&chief).unwrap().set("title", "Warlord").unwrap();
    for &orc in &orcs[50..] {
        first.world_mut().despawn(orc);
    }
    assert_eq!(store(&first).len(), 50, "a despawn removes its sheet");

    let path = dir.path().join("slot1.dcmp");
    let saved = save(&mut first, &path);
    assert_eq!(saved.kind, SaveKind::Save);
    assert_eq!(saved.result.unwrap(), std::fs::metadata(&path).unwrap().len());

    let mut fresh = app(dir.path(), DatacompPlugin::default());
    let report = load(&mut fresh, &path).result.unwrap();
    assert_eq!((report.sheets, report.spawned, report.kept, report.despawned), (50, 50, 0, 0));
    assert_eq!((report.lost, report.links, report.migrated_from), (0, 0, None));
    assert_eq!(store(&fresh), store(&first), "every sheet, key and handle");

    // Each entity of the first app has a counterpart with its Sheet, and the same sheet.
    let (old, new) = (linked(&mut first), linked(&mut fresh));
    assert_eq!(
        old.iter().map(|(s, _)| *s).collect::<Vec<_>>(),
        new.iter().map(|(s, _)| *s).collect::<Vec<_>>()
    );
    for (sheet, _) in &new {
        let a = first.world().resource::<DataStore>().get(sheet).unwrap();
        let b = fresh.world().resource::<DataStore>().get(sheet).unwrap();
        assert_eq!(a.to_blob(), b.to_blob());
    }
    let new_entity = new.iter().find(|(s, _)| *s == shaman).unwrap().1;
    assert_eq!(float(&fresh, new_entity, "stats.health"), Some(1.0));
    assert_eq!(float(&fresh, new_entity, "stats.mana"), None);
}

#[test]
fn a_load_relinks_the_entities_it_finds() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "orcs.json", ORCS);
    let mut app = app(dir.path(), DatacompPlugin::default());
    let orcs = spawn_from(&mut app, "orcs.json", [0, 1, 2]);
    all_linked(&mut app, &orcs);
    let path = dir.path().join("save.dcmp");
    save(&mut app, &path).result.unwrap();

    // After the save: one orc changes, one goes, a newcomer comes.
    set(&mut app, orcs[0], "stats.health", 1.0);
    let gone = sheet(&app, orcs[1]).unwrap();
    app.world_mut().despawn(orcs[1]);
    let newcomer = spawn_from(&mut app, "orcs.json", [2]);
    all_linked(&mut app, &newcomer);

    let report = load(&mut app, &path).result.unwrap();
    assert_eq!((report.kept, report.despawned, report.spawned), (2, 1, 1));
    assert_eq!(float(&app, orcs[0], "stats.health"), Some(30.0), "the saved value, same entity");
    assert!(app.world().get_entity(newcomer[0]).is_err(), "not in the save: despawned");
    let back = linked(&mut app).into_iter().find(|(s, _)| *s == gone).expect("respawned");
    assert_eq!(float(&app, back.1, "stats.mana"), Some(50.0));
    assert_eq!(store(&app).len(), 3);
}

#[test]
fn saves_run_in_order_and_the_last_one_wins() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path(), DatacompPlugin::default());
    let path = dir.path().join("save.dcmp");
    let (mut states, mut saved) = (Vec::new(), Vec::new());
    for frame in 0..5 {
        let sheet = app
            .world_mut()
            .resource_mut::<DataStore>()
            .insert(&[("frame", frame as f32)].into_iter().collect());
        app.world_mut().spawn(sheet);
        app.world_mut().write_message(SaveGame { path: path.clone() });
        app.update(); // no flush: the writes queue up behind each other
        states.push(store(&app).clone());
        // A message not read within two updates is dropped (Bevy's double buffer): a save
        // that ends quickly answers in a frame of this loop, so each frame reads its answers.
        saved.extend(drain::<Saved>(&mut app));
    }
    flush(app.world_mut());
    saved.extend(drain::<Saved>(&mut app));
    assert_eq!(saved.len(), 5);
    assert!(saved.iter().all(|s| s.result.is_ok()));
    assert_eq!(&Store::load(&path).unwrap(), states.last().unwrap());
}

#[test]
fn a_load_asked_after_a_save_reads_that_save() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path(), DatacompPlugin::default());
    let path = dir.path().join("save.dcmp");
    let sheet =
        app.world_mut().resource_mut::<DataStore>().insert(&[("gold", 7.0)].into_iter().collect());
    app.world_mut().spawn(sheet);
    app.world_mut().write_message(SaveGame { path: path.clone() });
    app.world_mut().write_message(LoadGame { path: path.clone() });
    app.update();
    flush(app.world_mut());
    let loaded = drain::<Loaded>(&mut app).pop().unwrap().result.unwrap();
    assert_eq!((loaded.sheets, loaded.kept), (1, 1));
}

#[test]
fn hot_reload_keeps_run_time_changes_and_reports_conflicts() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "orcs.json", ORCS);
    let mut app = app(dir.path(), DatacompPlugin::default());
    let orcs = spawn_from(&mut app, "orcs.json", [0, 0, 1]);
    all_linked(&mut app, &orcs);
    // The game: orc 0 is wounded, orc 1 spends mana; orc 2 untouched.
    set(&mut app, orcs[0], "stats.health", 5.0);
    set(&mut app, orcs[1], "stats.mana", 3.0);
    drain::<FixtureReloaded>(&mut app);

    // The designer: grunts get 40 health and armor, shamans 25 health.
    write(
        dir.path(),
        "orcs.json",
        &ORCS
            .replace(r#""health": 30, "mana": 0"#, r#""health": 40, "mana": 0, "armor": 3"#)
            .replace(r#""health": 20"#, r#""health": 25"#),
    );
    app.world().resource::<AssetServer>().reload("orcs.json");
    update_until(&mut app, "reloaded", |world| {
        !world.resource::<Messages<FixtureReloaded>>().is_empty()
    });

    let reloaded = drain::<FixtureReloaded>(&mut app);
    assert_eq!(reloaded.len(), 1);
    assert_eq!((reloaded[0].merged, reloaded[0].conflicted), (3, 1));
    // Orc 0: the game changed health, so did the designer: the game's value stays.
    assert_eq!(float(&app, orcs[0], "stats.health"), Some(5.0));
    assert_eq!(float(&app, orcs[0], "stats.armor"), Some(3.0));
    // Orc 1: only the designer changed health; only the game changed mana.
    assert_eq!(float(&app, orcs[1], "stats.health"), Some(40.0));
    assert_eq!(float(&app, orcs[1], "stats.mana"), Some(3.0));
    assert_eq!(float(&app, orcs[1], "stats.armor"), Some(3.0));
    assert_eq!(float(&app, orcs[2], "stats.health"), Some(25.0));

    let conflicts = drain::<FixtureConflict>(&mut app);
    assert_eq!(conflicts.len(), 1);
    assert_eq!(conflicts[0].entity, orcs[0]);
    let conflict = &conflicts[0].conflicts[..];
    assert_eq!(conflict.len(), 1);
    assert_eq!(conflict[0].key, datacomp::Key::parse("stats.health"));
    assert_eq!(
        (conflict[0].base.clone(), conflict[0].ours.clone(), conflict[0].theirs.clone()),
        (Some(OwnedValue::Float(30.0)), OwnedValue::Float(5.0), OwnedValue::Float(40.0))
    );

    // A second change merges against the first's result, not the original file.
    write(
        dir.path(),
        "orcs.json",
        &ORCS.replace(r#""health": 30, "mana": 0"#, r#""health": 40, "mana": 0, "armor": 4"#),
    );
    app.world().resource::<AssetServer>().reload("orcs.json");
    update_until(&mut app, "reloaded again", |world| {
        !world.resource::<Messages<FixtureReloaded>>().is_empty()
    });
    assert_eq!(drain::<FixtureReloaded>(&mut app)[0].conflicted, 0);
    assert_eq!(float(&app, orcs[0], "stats.armor"), Some(4.0));
    assert_eq!(float(&app, orcs[0], "stats.health"), Some(5.0));
    assert_eq!(float(&app, orcs[2], "stats.health"), Some(20.0), "the designer put it back");
}

/// The designer makes `stats` a value while the game put a key under it: a sheet holding
/// both would be one no import reads back, so the plugin merges by the store's names (as
/// `datacomp merge` does): every key of the clash keeps the game's state, and the clash is
/// reported in the `FixtureConflict`. An entity the game left alone takes the new shape.
#[test]
fn hot_reload_settles_a_value_made_an_object_by_the_games_side() {
    const TWO: &str = r#"[
    {"name": "Grunt", "stats": {"health": 30}},
    {"name": "Shaman", "stats": {"health": 20}}
]"#;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "two.json", TWO);
    let mut app = app(dir.path(), DatacompPlugin::default());
    let orcs = spawn_from(&mut app, "two.json", [0, 1]);
    all_linked(&mut app, &orcs);
    set(&mut app, orcs[0], "stats.mana", 3.0);
    drain::<FixtureReloaded>(&mut app);

    write(
        dir.path(),
        "two.json",
        &TWO.replace(r#"{"health": 30}"#, "5").replace(r#"{"health": 20}"#, "7"),
    );
    app.world().resource::<AssetServer>().reload("two.json");
    update_until(&mut app, "reloaded", |world| {
        !world.resource::<Messages<FixtureReloaded>>().is_empty()
    });
    let reloaded = drain::<FixtureReloaded>(&mut app);
    assert_eq!((reloaded.len(), reloaded[0].merged, reloaded[0].conflicted), (1, 2, 1));
    let conflicts = drain::<FixtureConflict>(&mut app);
    assert_eq!(conflicts.len(), 1);
    let (stats, mana) = (Key::parse("stats"), Key::parse("stats.mana"));
    let grunt = sheet(&app, orcs[0]).unwrap();
    let clash = PathConflict { id: grunt.0, value: stats, under: mana };
    assert_eq!((conflicts[0].entity, conflicts[0].sheet), (orcs[0], grunt));
    assert_eq!((conflicts[0].conflicts.len(), &conflicts[0].paths[..]), (0, &[clash][..]));
    // The game's shape of `stats` stands; the designer removed health.
    let keys = |entity| {
        let sheet = sheet(&app, entity).unwrap();
        let mut keys: Vec<Key> = store(&app).get(sheet.0).unwrap().keys().collect();
        keys.sort_unstable();
        keys
    };
    let mut want = vec![Key::parse("name"), mana];
    want.sort_unstable();
    assert_eq!((keys(orcs[0]), float(&app, orcs[0], "stats.mana")), (want, Some(3.0)));
    let mut want = vec![Key::parse("name"), stats];
    want.sort_unstable();
    assert_eq!((keys(orcs[1]), float(&app, orcs[1], "stats")), (want, Some(7.0)));
    // Both sheets read back through an import.
    for orc in orcs {
        let text = store(&app).export(sheet(&app, orc).unwrap().0, &ExportOptions::json()).unwrap();
        Store::new().import(&text, &ImportOptions::strict()).unwrap();
    }
}

#[test]
fn a_fixture_that_failed_then_was_fixed_loads() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "broken.json", "{\"name\": \"Orc\",\n \"stats\": {\"health\": nul}}");
    let mut app = app(dir.path(), DatacompPlugin::default());
    let orc = spawn_from(&mut app, "broken.json", [0]);
    let handle = app.world().get::<FromFixture>(orc[0]).unwrap().fixture.clone();
    update_until(&mut app, "failed", |world| {
        world.resource::<AssetServer>().load_state(&handle).is_failed()
    });
    let LoadState::Failed(error) = app.world().resource::<AssetServer>().load_state(&handle) else {
        unreachable!()
    };
    let message = error.to_string();
    assert!(message.contains("broken.json: /stats/health (line 2, column "), "{message}");
    assert!(sheet(&app, orc[0]).is_none());

    write(dir.path(), "broken.json", "{\"name\": \"Orc\",\n \"stats\": {\"health\": 12}}");
    app.world().resource::<AssetServer>().reload("broken.json");
    all_linked(&mut app, &orc);
    assert_eq!(float(&app, orc[0], "stats.health"), Some(12.0));
}

#[test]
fn loader_settings_and_link_errors() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "nulls.json", r#"[{"name": "Imp", "firmness": null}]"#);
    write(dir.path(), "imps.sjson", "name = \"Imp\"\nstats = { health = 3 }");
    let mut app = app(dir.path(), DatacompPlugin::default());
    let server = app.world().resource::<AssetServer>().clone();
    let lenient = server
        .load_builder()
        .with_settings(|s: &mut FixtureSettings| s.lenient = true)
        .load::<Fixture>("nulls.json");
    let imp = app.world_mut().spawn(FromFixture { fixture: lenient, index: 0 }).id();
    let sjson = spawn_from(&mut app, "imps.sjson", [0, 1]);
    all_linked(&mut app, &[imp, sjson[0]]);
    let data = app.world().resource::<DataStore>();
    assert_eq!(
        data.get(&sheet(&app, imp).unwrap()).unwrap().get("firmness"),
        Some(datacomp::Value::Null)
    );
    assert_eq!(float(&app, sjson[0], "stats.health"), Some(3.0));

    // Entity 1 of a one-entity file: reported once, no sheet.
    let failed = drain::<FixtureLinkFailed>(&mut app);
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].entity, sjson[1]);
    assert_eq!(failed[0].error.to_string(), "fixture imps.sjson has 1 entities, and no entity 1");
    app.update();
    assert!(drain::<FixtureLinkFailed>(&mut app).is_empty());
    assert!(sheet(&app, sjson[1]).is_none());
}

#[test]
fn a_damaged_save_loads_what_salvage_keeps_or_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path(), DatacompPlugin::default());
    // Two chunks' worth of sheets (64 KiB each), so that damage to one loses only part.
    let mut data = app.world_mut().resource_mut::<DataStore>();
    let sheets: Vec<Sheet> = (0..4000)
        .map(|i| {
            data.insert(
                &[("name", format!("orc number {i:05} of the horde"))].into_iter().collect(),
            )
        })
        .collect();
    app.world_mut().spawn_batch(sheets);
    let path = dir.path().join("save.dcmp");
    save(&mut app, &path).result.unwrap();
    let whole = store(&app).clone();

    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.windows(16).rposition(|w| w == b"orc number 03999").unwrap();
    bytes[at] ^= 0x20;
    std::fs::write(&path, &bytes).unwrap();

    let mut salvaging = self::app(dir.path(), DatacompPlugin::default());
    let report = load(&mut salvaging, &path).result.unwrap();
    assert!(report.lost > 0 && report.lost < 4000, "lost {}", report.lost);
    assert_eq!(report.sheets + report.lost, 4000);
    assert_eq!((report.spawned, linked(&mut salvaging).len()), (report.sheets, report.sheets));
    assert!(matches!(report.damage, Some(LoadError::File(FileError::ChunkCrc { .. }))));
    for (id, blob) in store(&salvaging).iter() {
        assert_eq!(whole.get(id).unwrap().to_blob(), blob.to_blob());
    }

    let mut refusing = self::app(dir.path(), DatacompPlugin::default().damaged(Damaged::Refuse));
    let kept = refusing
        .world_mut()
        .resource_mut::<DataStore>()
        .insert(&[("gold", 1.0)].into_iter().collect());
    let entity = refusing.world_mut().spawn(kept).id();
    let err = load(&mut refusing, &path).result.unwrap_err();
    assert!(
        matches!(err, Error::Damaged { error: LoadError::File(FileError::ChunkCrc { .. }), .. }),
        "{err}"
    );
    assert!(
        err.to_string().starts_with(&format!("{}: a damaged save, refused: ", path.display())),
        "{err}"
    );
    assert_eq!(store(&refusing).len(), 1, "nothing changed");
    assert_eq!(sheet(&refusing, entity), Some(kept));

    // Truncated, not a save at all, empty, missing: an error or a salvage, never a panic.
    for (name, content) in [
        ("truncated.dcmp", &bytes[..bytes.len() / 2]),
        ("text.dcmp", &b"not a save at all, but long enough for a header"[..]),
        ("empty.dcmp", &b""[..]),
    ] {
        let path = write_bytes(dir.path(), name, content);
        let loaded = load(&mut refusing, &path);
        assert!(loaded.result.is_err(), "{name}");
        assert_eq!(store(&refusing).len(), 1, "{name}: nothing changed");
        let loaded = load(&mut salvaging, &path);
        if let Ok(report) = loaded.result {
            assert_eq!(report.sheets, store(&salvaging).len(), "{name}");
        }
    }
    let missing = load(&mut refusing, &dir.path().join("missing.dcmp")).result.unwrap_err();
    assert!(matches!(missing, Error::File { error: datacomp::Error::Io(_), .. }), "{missing}");
    // A device that never ends, a folder: read no further than a header, refused.
    for app in [&mut refusing, &mut salvaging] {
        for path in [Path::new("/dev/zero"), dir.path()] {
            let err = load(app, path).result.unwrap_err();
            assert!(matches!(err, Error::File { .. } | Error::Damaged { .. }), "{err}");
        }
    }
    assert_eq!(store(&refusing).len(), 1);
}

fn write_bytes(dir: &Path, file: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(file);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn an_older_save_migrates_on_load_and_a_newer_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut old = Store::new();
    old.set_data_version(1);
    let id = old.insert_entries([("hp", 30.0)]).unwrap();
    let path = dir.path().join("v1.dcmp");
    old.save(&path).unwrap();

    let migrations = Migrations::new(2)
        .step(MigrationStep::to(2).rename("hp", "stats.health").default("stats.mana", 0.0));
    let mut app = app(dir.path(), DatacompPlugin::default().migrations(migrations));
    assert_eq!(store(&app).data_version(), 2, "a new game is at the game's version");
    let report = load(&mut app, &path).result.unwrap();
    assert_eq!(report.migrated_from, Some(1));
    assert_eq!(store(&app).data_version(), 2);
    let sheet = store(&app).get(id).unwrap();
    assert_eq!(
        (sheet.get_float("stats.health"), sheet.get_float("stats.mana"), sheet.get_float("hp")),
        (Some(30.0), Some(0.0), None)
    );

    let mut ahead = old.clone();
    ahead.set_data_version(3);
    let newer = dir.path().join("v3.dcmp");
    ahead.save(&newer).unwrap();
    let err = load(&mut app, &newer).result.unwrap_err();
    assert!(
        matches!(&err, Error::Migrate { error, .. } if **error == MigrateError::StoreAhead { data_version: 3, version: 2 }),
        "{err}"
    );
    assert_eq!(store(&app).get(id).unwrap().get_float("stats.health"), Some(30.0), "unchanged");
}

#[test]
fn autosaves_chain_deltas_compact_and_load_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auto.dcmp");
    let autosave = Autosave { every: Every::Frames(1), path: path.clone(), compact_every: 3 };
    let mut app = app(dir.path(), DatacompPlugin::default().autosave(autosave));
    let mut data = app.world_mut().resource_mut::<DataStore>();
    let sheets: Vec<Sheet> =
        (0..10).map(|i| data.insert(&[("hp", i as f32)].into_iter().collect())).collect();
    let entities: Vec<Entity> = sheets.iter().map(|&s| app.world_mut().spawn(s).id()).collect();
    let mut kinds = Vec::new();
    for frame in 0..7 {
        set(&mut app, entities[frame % 10], "hp", 100.0 + frame as f32);
        if frame == 5 {
            app.world_mut().despawn(entities[9]);
        }
        app.update();
        flush(app.world_mut());
        for saved in drain::<Saved>(&mut app) {
            saved.result.as_ref().unwrap();
            kinds.push(saved.kind);
        }
    }
    use SaveKind::{AutosaveCompacted as C, AutosaveFull as F, AutosaveLink as L};
    assert_eq!(kinds, [F, L(1), L(2), L(3), C(3), L(1), L(2), L(3), C(3)]);
    // The compaction removed the chain it folded in, and the save holds it.
    assert!(!link_path(&path, 1).exists());
    assert_eq!(&Store::load(&path).unwrap(), store(&app));
    // Two more links, then quit and load in a fresh app.
    for (frame, &entity) in entities[..2].iter().enumerate() {
        set(&mut app, entity, "hp", -1.0 - frame as f32);
        app.update();
    }
    flush(app.world_mut());
    assert!(link_path(&path, 2).exists() && !link_path(&path, 3).exists());
    assert_eq!(StorePatch::load(link_path(&path, 2)).unwrap().changed(), 1);

    let mut fresh = self::app(dir.path(), DatacompPlugin::default());
    let report = load(&mut fresh, &path).result.unwrap();
    assert_eq!((report.links, report.sheets, report.spawned), (2, 9, 9));
    assert!(report.chain_end.is_none());
    assert_eq!(store(&fresh), store(&app));

    // A stale link (from an older chain) ends the chain, and says so.
    std::fs::copy(link_path(&path, 1), link_path(&path, 3)).unwrap();
    let report = load(&mut fresh, &path).result.unwrap();
    assert_eq!(report.links, 2);
    let (n, error) = report.chain_end.unwrap();
    assert_eq!(n, 3);
    assert!(matches!(error, datacomp::Error::Load(_)), "{error}");

    // A stale link in the middle: the chain ends there, the links before it applied.
    let mut once = self::app(dir.path(), DatacompPlugin::default());
    std::fs::copy(link_path(&path, 1), link_path(&path, 2)).unwrap();
    let report = load(&mut once, &path).result.unwrap();
    assert_eq!(report.links, 1);
    let (n, error) = report.chain_end.unwrap();
    assert_eq!(n, 2);
    assert!(
        matches!(error, datacomp::Error::Load(LoadError::Store(StoreError::DeltaBase { .. }))),
        "{error}"
    );
    let mut after_one = Store::load(&path).unwrap();
    StorePatch::load(link_path(&path, 1)).unwrap().apply(&mut after_one).unwrap();
    assert_eq!(store(&once), &after_one);
}

/// A full autosave that fails breaks its chain: a link asked for before the failure was known
/// is not written (`Error::ChainBroken`, no file; which of the two a frame gets depends on
/// when the pool finishes), and once the path works a new chain starts with a full save.
#[test]
fn a_failed_full_autosave_breaks_its_chain_and_the_next_starts_over() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("not-a-dir");
    std::fs::write(&blocker, b"a file").unwrap();
    let bad = blocker.join("auto.dcmp");
    let autosave = Autosave { every: Every::Frames(1), path: bad.clone(), compact_every: 10 };
    let mut app = app(dir.path(), DatacompPlugin::default().autosave(autosave));
    let sheet =
        app.world_mut().resource_mut::<DataStore>().insert(&[("hp", 1.0)].into_iter().collect());
    let entity = app.world_mut().spawn(sheet).id();
    for hp in [2.0, 3.0, 4.0] {
        set(&mut app, entity, "hp", hp);
        app.update();
    }
    flush(app.world_mut());
    let saved = drain::<Saved>(&mut app);
    assert_eq!(saved.len(), 3);
    assert_eq!(saved[0].kind, SaveKind::AutosaveFull);
    for saved in &saved {
        match (saved.kind, &saved.result) {
            (SaveKind::AutosaveFull, Err(Error::File { path, .. })) => assert_eq!(*path, bad),
            (SaveKind::AutosaveLink(n), Err(error @ Error::ChainBroken { path, link })) => {
                assert_eq!((path, *link), (&link_path(&bad, n), n));
                let message = format!(
                    "{}: autosave link {n} not written: its chain broke before it (a full save \
                     or an earlier link failed)",
                    path.display()
                );
                assert_eq!(error.to_string(), message);
            }
            other => panic!("{other:?}"),
        }
    }
    // A good path: a full save, then links again.
    let good = dir.path().join("auto.dcmp");
    app.insert_resource(Autosave {
        every: Every::Frames(1),
        path: good.clone(),
        compact_every: 10,
    });
    for hp in [3.0, 4.0] {
        set(&mut app, entity, "hp", hp);
        app.update();
        flush(app.world_mut());
    }
    let kinds: Vec<SaveKind> =
        drain::<Saved>(&mut app).into_iter().map(|s| s.result.map(|_| s.kind).unwrap()).collect();
    assert_eq!(kinds, [SaveKind::AutosaveFull, SaveKind::AutosaveLink(1)]);
    let mut fresh = self::app(dir.path(), DatacompPlugin::default());
    let report = load(&mut fresh, &good).result.unwrap();
    assert_eq!(report.links, 1);
    assert_eq!(store(&fresh), store(&app));
}

#[test]
fn despawning_removes_the_sheet_or_keeps_it_by_option() {
    for keep in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let plugin = if keep {
            DatacompPlugin::default().keep_sheets_on_despawn()
        } else {
            DatacompPlugin::default()
        };
        let mut app = app(dir.path(), plugin);
        let sheet = app
            .world_mut()
            .resource_mut::<DataStore>()
            .insert(&[("gold", 1.0)].into_iter().collect());
        let entity = app.world_mut().spawn(sheet).id();
        let other = app.world_mut().spawn(sheet).id();
        app.world_mut().entity_mut(other).remove::<Sheet>();
        assert!(store(&app).contains(sheet.0), "removing the component leaves the sheet");
        app.world_mut().despawn(entity);
        assert_eq!(store(&app).contains(sheet.0), keep);
    }
}

#[test]
fn undo_brings_back_a_despawned_sheet_with_an_entity() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path(), DatacompPlugin::default().undo(1 << 20));
    let sheet =
        app.world_mut().resource_mut::<DataStore>().insert(&[("gold", 1.0)].into_iter().collect());
    let entity = app.world_mut().spawn(sheet).id();
    assert!(app.world_mut().resource_mut::<DataStore>().commit());
    app.world_mut().despawn(entity);
    assert!(app.world_mut().resource_mut::<DataStore>().commit());
    assert!(app.world_mut().resource_mut::<DataStore>().undo());
    app.update();
    let back = linked(&mut app);
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].0, sheet);
    assert!(app.world_mut().resource_mut::<DataStore>().undo());
    app.update();
    assert!(linked(&mut app).is_empty(), "before the insert: its entity despawned");
    assert!(!app.world_mut().resource_mut::<DataStore>().undo());
}

/// Sheets enough for the mirror to take three frames ([`MIRROR_SLOTS_PER_FRAME`] slots each).
fn many(app: &mut App, count: usize) -> Vec<Entity> {
    let mut data = app.world_mut().resource_mut::<DataStore>();
    let sheets: Vec<Sheet> =
        (0..count).map(|i| data.insert(&[("hp", i as f32)].into_iter().collect())).collect();
    sheets.iter().map(|&s| app.world_mut().spawn(s).id()).collect()
}

/// Each frame's autosave answers, after waiting for the pool.
fn frame_saves(app: &mut App) -> Vec<SaveKind> {
    app.update();
    flush(app.world_mut());
    drain::<Saved>(app).into_iter().map(|s| s.result.map(|_| s.kind).unwrap()).collect()
}

/// The chain's first full save waits for the mirror, built a slice of slots a frame while
/// sheets change, despawn (copied ones and not yet copied ones) and spawn; its full save, its
/// links and its compaction (from the mirror, on the pool) each load back into a fresh app
/// equal to the store they were taken at, sheet for sheet.
#[test]
fn a_chain_starts_from_a_mirror_built_over_frames_with_despawns_mid_build() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auto.dcmp");
    let autosave = Autosave { every: Every::Frames(1), path: path.clone(), compact_every: 2 };
    let mut app = app(dir.path(), DatacompPlugin::default().autosave(autosave));
    let count = 2 * MIRROR_SLOTS_PER_FRAME as usize + 500;
    let mut entities = many(&mut app, count);
    let check = |app: &mut App, path: &Path| {
        let mut fresh = self::app(dir.path(), DatacompPlugin::default());
        load(&mut fresh, path).result.unwrap();
        assert_eq!(store(&fresh), store(app));
        assert_eq!(linked(&mut fresh).len(), store(app).len());
    };
    let mut kinds = Vec::new();
    for frame in 0..3 {
        // One sheet copied in an earlier frame and one not yet copied: changed, despawned.
        let (early, late) = (frame * 7, count - 1 - frame * 11);
        set(&mut app, entities[early], "hp", -1.0);
        set(&mut app, entities[late], "hp", -2.0);
        app.world_mut().despawn(entities[early + 1]);
        app.world_mut().despawn(entities[late - 1]);
        entities.extend(many(&mut app, 3));
        kinds.push(frame_saves(&mut app));
    }
    use SaveKind::{AutosaveCompacted as C, AutosaveFull as F, AutosaveLink as L};
    assert_eq!(kinds, [vec![], vec![], vec![F]], "the full save waits for the mirror");
    assert_eq!(Store::load(&path).unwrap().to_bytes(), store(&app).to_bytes());
    check(&mut app, &path);
    set(&mut app, entities[5], "hp", 5.0);
    assert_eq!(frame_saves(&mut app), [L(1)]);
    check(&mut app, &path);
    app.world_mut().despawn(entities[6]);
    assert_eq!(frame_saves(&mut app), [L(2), C(2)]);
    assert!(!link_path(&path, 1).exists());
    check(&mut app, &path);
}

/// A load builds the autosave's mirror on the pool: the next autosave is a full save at once
/// (no frames of building); an autosave asked for before the load is done says it was
/// replaced; a failed autosave makes the next a full save from the mirror.
#[test]
fn a_load_seeds_the_mirror_and_a_failed_autosave_restarts_the_chain() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("world.dcmp");
    let mut source = app(dir.path(), DatacompPlugin::default());
    many(&mut source, 3 * MIRROR_SLOTS_PER_FRAME as usize);
    save(&mut source, &saved);

    let path = dir.path().join("auto.dcmp");
    let autosave = Autosave { every: Every::Frames(1), path: path.clone(), compact_every: 10 };
    let mut app = app(dir.path(), DatacompPlugin::default().autosave(autosave));
    app.world_mut().write_message(LoadGame { path: saved.clone() });
    // The load's frame: its autosave, of the empty store the app had, is not written (the load
    // asked before it replaced that store) and says so; then the loaded store's.
    app.update();
    flush(app.world_mut());
    let replaced = drain::<Saved>(&mut app);
    assert!(
        matches!(&replaced[..], [Saved { kind: SaveKind::AutosaveFull, result: Err(Error::Replaced { path: p }), .. }] if *p == path),
        "{replaced:?}"
    );
    assert!(!path.exists());
    assert_eq!(drain::<Loaded>(&mut app).len(), 1);
    assert_eq!(frame_saves(&mut app), [SaveKind::AutosaveFull]);
    assert_eq!(store(&app), store(&source));
    let entities = linked(&mut app);
    let sheet_set = |app: &mut App, i: usize, hp: f32| {
        let mut data = app.world_mut().resource_mut::<DataStore>();
        data.get_mut(&entities[i].0).unwrap().set("hp", hp).unwrap();
    };
    sheet_set(&mut app, 3, 30.0);
    assert_eq!(frame_saves(&mut app), [SaveKind::AutosaveLink(1)]);

    // A path that cannot be written: the link fails; the next autosave (a good path again)
    // is a full save from the mirror, then links.
    let blocker = dir.path().join("not-a-dir");
    std::fs::write(&blocker, b"a file").unwrap();
    let bad = blocker.join("auto.dcmp");
    app.insert_resource(Autosave { every: Every::Frames(1), path: bad, compact_every: 10 });
    sheet_set(&mut app, 4, 40.0);
    app.update();
    flush(app.world_mut());
    let failed = drain::<Saved>(&mut app);
    assert!(matches!(
        failed[..],
        [Saved { kind: SaveKind::AutosaveFull, result: Err(Error::File { .. }), .. }]
    ));
    app.insert_resource(Autosave {
        every: Every::Frames(1),
        path: path.clone(),
        compact_every: 10,
    });
    sheet_set(&mut app, 5, 50.0);
    assert_eq!(frame_saves(&mut app), [SaveKind::AutosaveFull]);
    sheet_set(&mut app, 6, 60.0);
    assert_eq!(frame_saves(&mut app), [SaveKind::AutosaveLink(1)]);
    let mut fresh = self::app(dir.path(), DatacompPlugin::default());
    let report = load(&mut fresh, &path).result.unwrap();
    assert_eq!(report.links, 1);
    assert_eq!(store(&fresh), store(&app));
}

/// Autosaves every third frame, the frames between leaving their changes in the store's
/// change log for the autosave's copy (made between frames; no frame waits for the pool
/// here, so jobs queue), the writes between frames taking the store back from that copy:
/// sheets change, despawn, spawn, and some frames change nothing; each link and compaction
/// loads back into a fresh app equal to the store at its frame.
#[test]
fn frames_between_autosaves_wait_in_the_change_log() {
    autosave_every_third_frame(false);
}

/// The same, the frames 2 ms apart: then only the autosave's frame lends the store (the
/// frames between copy nothing: their changes wait in the change log), and its copy holds
/// every change since the last.
#[test]
fn paced_frames_between_autosaves_copy_nothing() {
    autosave_every_third_frame(true);
}

fn autosave_every_third_frame(paced: bool) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auto.dcmp");
    let autosave = Autosave { every: Every::Frames(3), path: path.clone(), compact_every: 4 };
    let mut app = app(dir.path(), DatacompPlugin::default().autosave(autosave));
    let mut entities = many(&mut app, 200);
    // The store at each autosave frame (every third, from the third).
    let (mut states, mut kinds) = (Vec::new(), Vec::new());
    for frame in 0..30_usize {
        match frame % 5 {
            0 => {
                for i in 0..20 {
                    set(&mut app, entities[(frame * 13 + i * 7) % entities.len()], "hp", -1.0);
                }
            }
            1 => {
                let gone = entities.swap_remove(frame * 3 % entities.len());
                app.world_mut().despawn(gone);
            }
            2 => entities.extend(many(&mut app, 2)),
            3 => {} // nothing changes
            _ => set(&mut app, entities[frame], "hp", frame as f32),
        }
        if paced {
            std::thread::sleep(2 * datacomp_bevy::save::PACED);
        }
        app.update();
        if frame % 3 == 2 {
            states.push(store(&app).clone());
        }
        kinds.extend(drain::<Saved>(&mut app).into_iter().map(|s| s.result.map(|_| s.kind)));
    }
    flush(app.world_mut());
    kinds.extend(drain::<Saved>(&mut app).into_iter().map(|s| s.result.map(|_| s.kind)));
    let kinds: Vec<SaveKind> = kinds.into_iter().map(Result::unwrap).collect();
    use SaveKind::{AutosaveCompacted as C, AutosaveFull as F, AutosaveLink as L};
    assert_eq!(kinds, [F, L(1), L(2), L(3), L(4), C(4), L(1), L(2), L(3), L(4), C(4), L(1)]);
    assert_eq!(states.len(), 10);
    let mut fresh = self::app(dir.path(), DatacompPlugin::default());
    let report = load(&mut fresh, &path).result.unwrap();
    assert_eq!((report.links, report.chain_end.is_none()), (1, true));
    assert_eq!(store(&fresh), &states[9]);
    assert_eq!(store(&fresh), store(&app), "nothing changed after the last autosave");
    // The compacted save is the state of the 9th autosave; its link 1 the 10th.
    let mut compacted = Store::load(&path).unwrap();
    assert_eq!(&compacted, &states[8]);
    StorePatch::load(link_path(&path, 1)).unwrap().apply(&mut compacted).unwrap();
    assert_eq!(&compacted, &states[9]);
}

/// Saves run on the plugin's own thread at the lowest priority (the `SCHED_IDLE` policy), so
/// that waking it never takes the frame's core; the autosave's copies on another, under
/// `SCHED_BATCH` (a fair share, and no preemption of the thread that wakes it).
#[cfg(target_os = "linux")]
#[test]
fn saves_and_copies_run_on_threads_of_their_own_that_never_take_the_frames_core() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path(), DatacompPlugin::default());
    many(&mut app, 3);
    save(&mut app, &dir.path().join("world.dcmp")).result.unwrap();
    let path = dir.path().join("auto.dcmp");
    app.insert_resource(Autosave { every: Every::Frames(1), path, compact_every: 2 });
    app.update(); // the mirror's first slice: copied between frames
    app.update();
    let policy = |thread: &str| -> Vec<i64> {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(|task| {
                let task = task.unwrap().path();
                let name = std::fs::read_to_string(task.join("comm")).unwrap();
                name.starts_with(thread).then(|| {
                    // The fields after the name's closing parenthesis: the 39th is the policy.
                    let stat = std::fs::read_to_string(task.join("stat")).unwrap();
                    let fields: Vec<&str> =
                        stat[stat.rfind(')').unwrap() + 1..].split_whitespace().collect();
                    fields[38].parse().unwrap()
                })
            })
            .collect()
    };
    const SCHED_BATCH: i64 = 3;
    const SCHED_IDLE: i64 = 5;
    assert_eq!(policy("datacomp saves"), [SCHED_IDLE]);
    assert_eq!(policy("datacomp copies"), [SCHED_BATCH]);
}

/// An app autosaving to `dir/auto.dcmp` every `every` frames, with `sheets` entities: (the
/// app, the autosave's path, the entities).
fn autosaving(
    dir: &Path,
    every: u32,
    compact_every: u32,
    sheets: usize,
) -> (App, PathBuf, Vec<Entity>) {
    let path = dir.join("auto.dcmp");
    let autosave = Autosave { every: Every::Frames(every), path: path.clone(), compact_every };
    let mut app = app(dir, DatacompPlugin::default().autosave(autosave));
    let entities = many(&mut app, sheets);
    (app, path, entities)
}

/// The changes of an autosave kept while the save thread is far behind (here 20 saves wait)
/// are written on `AppExit`, as every autosave is.
#[test]
fn an_exit_writes_the_autosave_kept_while_the_save_thread_was_behind() {
    let dir = tempfile::tempdir().unwrap();
    let (mut app, path, entities) = autosaving(dir.path(), 100, 10, 200);
    update_until(&mut app, "the chain's full save", |world| {
        flush(world);
        std::fs::exists(&path).unwrap()
    });
    for i in 0..20 {
        app.world_mut().write_message(SaveGame { path: dir.path().join(format!("s{i}.dcmp")) });
    }
    app.update();
    set(&mut app, entities[5], "hp", -5.0);
    app.world_mut().write_message(bevy_app::AppExit::Success);
    app.update();
    let mut fresh = self::app(dir.path(), DatacompPlugin::default());
    load(&mut fresh, &path).result.unwrap();
    assert_eq!(store(&fresh), store(&app), "the exit's autosave holds the last change");
}

/// A `SaveGame` over the autosave's own file removes its links: the chain starts again from a
/// full save, and loads back whole.
#[test]
fn a_save_over_the_autosaves_file_starts_its_chain_again() {
    let dir = tempfile::tempdir().unwrap();
    let (mut app, path, entities) = autosaving(dir.path(), 1, 10, 50);
    let mut kinds = Vec::new();
    for (frame, &entity) in entities.iter().enumerate().take(8) {
        if frame == 4 {
            app.world_mut().write_message(SaveGame { path: path.clone() });
        }
        set(&mut app, entity, "hp", -1.0);
        kinds.extend(frame_saves(&mut app));
    }
    use SaveKind::{AutosaveFull as F, AutosaveLink as L, Save as S};
    assert_eq!(kinds, [F, L(1), L(2), L(3), S, F, L(1), L(2), L(3)]);
    let mut fresh = self::app(dir.path(), DatacompPlugin::default());
    assert_eq!(load(&mut fresh, &path).result.unwrap().links, 3);
    assert_eq!(store(&fresh), store(&app));
}

/// A load asked while the autosave is off, which comes back before the load lands: the
/// autosaves of the store the load replaces answer `Replaced` (not `MirrorLost`), and the
/// chain after the load loads back whole.
#[test]
fn autosaves_of_a_store_a_load_replaced_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let (mut app, path, entities) = autosaving(dir.path(), 1, 10, 50);
    let autosave = app.world().resource::<Autosave>().clone();
    update_until(&mut app, "the chain's full save", |world| {
        flush(world);
        std::fs::exists(&path).unwrap()
    });
    let saved = dir.path().join("world.dcmp");
    for _ in 0..3 {
        app.world_mut().write_message(SaveGame { path: saved.clone() });
    }
    app.update();
    app.world_mut().remove_resource::<Autosave>();
    app.world_mut().write_message(LoadGame { path: saved.clone() });
    app.update();
    app.insert_resource(autosave);
    for &entity in &entities[..4] {
        set(&mut app, entity, "hp", -1.0);
        app.update();
    }
    flush(app.world_mut());
    let answers = drain::<Saved>(&mut app);
    assert!(
        !answers.iter().any(|s| matches!(s.result, Err(Error::MirrorLost { .. }))),
        "{answers:?}"
    );
    assert_eq!(drain::<Loaded>(&mut app).len(), 1);
    // The loaded store's mirror built, its full save, then links.
    let mut kinds = Vec::new();
    for &entity in &entities[4..8] {
        set(&mut app, entity, "hp", -1.0);
        kinds.extend(frame_saves(&mut app));
    }
    assert!(kinds.contains(&SaveKind::AutosaveFull), "{kinds:?}");
    let mut fresh = self::app(dir.path(), DatacompPlugin::default());
    load(&mut fresh, &path).result.unwrap();
    assert_eq!(store(&fresh), store(&app));
}

/// An app dropped while its store is lent for an autosave's copy (right after the frame that
/// asked for it) goes without waiting for it, and the copy's thread serves the next app.
#[test]
fn an_app_dropped_while_its_store_is_lent_goes() {
    let dir = tempfile::tempdir().unwrap();
    for round in 0..3 {
        let path = dir.path().join(format!("auto{round}.dcmp"));
        let autosave = Autosave { every: Every::Frames(1), path: path.clone(), compact_every: 2 };
        let mut app = app(dir.path(), DatacompPlugin::default().autosave(autosave));
        let entities = many(&mut app, 2000);
        update_until(&mut app, "the chain's full save", |_| std::fs::exists(&path).unwrap());
        set(&mut app, entities[7], "hp", -7.0);
        app.update();
        drop(app);
    }
}

/// A save asked for while the game's frames go on (no `flush`) is written between them: its
/// writes wait while a frame runs and go on when it ends, and it lands whole.
#[test]
fn a_save_is_written_between_frames() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path(), DatacompPlugin::default());
    let entities = many(&mut app, 20_000);
    let path = dir.path().join("world.dcmp");
    app.world_mut().write_message(SaveGame { path: path.clone() });
    let mut saved = Vec::new();
    update_until(&mut app, "the save", |world| {
        saved.extend(world.resource_mut::<Messages<Saved>>().drain());
        !saved.is_empty()
    });
    assert_eq!(saved.len(), 1);
    let bytes = saved[0].result.as_ref().unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), *bytes);
    let loaded = Store::load(&path).unwrap();
    assert_eq!(&loaded, store(&app));
    assert_eq!(loaded.len(), entities.len());
}
