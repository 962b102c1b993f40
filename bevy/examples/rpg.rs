//! A headless RPG: 300 characters spawned from fixtures (`assets/characters.json`,
//! `assets/monsters.sjson`) in a `MinimalPlugins` app, their stats changing every frame, an
//! autosave every 10 frames and on quitting (a delta, and a full save every 3 links); then the game quits, a
//! fresh app loads the autosave, and every sheet is checked against the one the game quit with.
//!
//! `cargo run -p datacomp-bevy --example rpg`

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use bevy_app::{App, AppExit, ScheduleRunnerPlugin, Startup, TaskPoolPlugin, Update};
use bevy_asset::{AssetPlugin, AssetServer};
use bevy_diagnostic::FrameCountPlugin;
use bevy_ecs::prelude::*;
use bevy_time::TimePlugin;
use datacomp::{KeyPath, Store};
use datacomp_bevy::{
    Autosave, DataStore, DatacompPlugin, Every, FromFixture, LoadGame, Loaded, SaveKind, Saved,
    Sheet,
};

const CHARACTERS: usize = 300;
const FRAMES: u32 = 60;

const HEALTH: KeyPath = KeyPath::dotted("stats.health");
const XP: KeyPath = KeyPath::dotted("stats.xp");
const LEVEL: KeyPath = KeyPath::dotted("stats.level");
const NAME: KeyPath = KeyPath::dotted("name");

/// The `MinimalPlugins` of the `bevy` crate, from the crates this one uses, and assets.
fn minimal_app() -> App {
    let mut app = App::new();
    app.add_plugins((
        TaskPoolPlugin::default(),
        FrameCountPlugin,
        TimePlugin,
        ScheduleRunnerPlugin::run_loop(Duration::ZERO),
        AssetPlugin {
            file_path: concat!(env!("CARGO_MANIFEST_DIR"), "/assets").to_owned(),
            ..AssetPlugin::default()
        },
    ));
    app
}

#[derive(Resource)]
struct Frames(u32);

fn spawn_party(mut commands: Commands, assets: Res<AssetServer>) {
    let characters = assets.load("characters.json");
    let monsters = assets.load("monsters.sjson");
    for i in 0..CHARACTERS {
        let from = if i % 5 == 4 {
            FromFixture { fixture: monsters.clone(), index: 0 }
        } else {
            FromFixture { fixture: characters.clone(), index: i % 5 }
        };
        commands.spawn(from);
    }
}

/// Each character that just got its sheet gets a name of its own.
fn name_newcomers(mut data: ResMut<DataStore>, newcomers: Query<(Entity, &Sheet), Added<Sheet>>) {
    for (entity, sheet) in &newcomers {
        let class = data.get(sheet).and_then(|s| s.get_str("class")).unwrap_or("?").to_owned();
        if let Some(mut sheet) = data.get_mut(sheet) {
            sheet.set(NAME, format!("{class} {}", entity.index())).expect("a name fits");
        }
    }
}

/// A frame of play: everyone takes a hit, gains experience, levels up now and then.
fn play(
    mut data: ResMut<DataStore>,
    sheets: Query<&Sheet>,
    mut frames: ResMut<Frames>,
    mut exit: MessageWriter<AppExit>,
) {
    if sheets.iter().len() < CHARACTERS {
        return; // the fixtures are still loading
    }
    frames.0 += 1;
    for (i, sheet) in sheets.iter().enumerate() {
        let Some(mut sheet) = data.get_mut(sheet) else { continue };
        let read = sheet.as_blob_ref();
        let (health, xp, level) = (
            read.get_float(HEALTH).unwrap_or(0.0),
            read.get_float(XP).unwrap_or(0.0),
            read.get_float(LEVEL).unwrap_or(1.0),
        );
        let hit = ((i as u32 * 7 + frames.0) % 5) as f32;
        sheet.set(HEALTH, (health - hit).max(0.0)).expect("a float fits");
        if xp + 9.0 >= 100.0 {
            sheet.set(XP, 0.0).expect("a float fits");
            sheet.set(LEVEL, level + 1.0).expect("a float fits");
        } else {
            sheet.set(XP, xp + 9.0).expect("a float fits");
        }
    }
    if frames.0 == FRAMES {
        exit.write(AppExit::Success);
    }
}

fn report_saves(mut saved: MessageReader<Saved>) {
    for saved in saved.read() {
        match (&saved.kind, &saved.result) {
            (SaveKind::AutosaveFull, Ok(bytes)) => println!("autosave: full save, {bytes} bytes"),
            (SaveKind::AutosaveLink(n), Ok(bytes)) => println!("autosave: link {n}, {bytes} bytes"),
            (kind, Ok(bytes)) => println!("{kind:?}: {bytes} bytes"),
            (_, Err(e)) => eprintln!("save failed: {e}"),
        }
    }
}

fn main() {
    let dir = std::env::temp_dir().join(format!("datacomp-rpg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let autosave = dir.join("autosave.dcmp");

    // The game: 60 frames of play, autosaving every 10, then quit.
    let mut game = minimal_app();
    game.add_plugins(DatacompPlugin::default().autosave(Autosave {
        every: Every::Frames(10),
        path: autosave.clone(),
        compact_every: 3,
    }))
    .insert_resource(Frames(0))
    .add_systems(Startup, spawn_party)
    .add_systems(Update, (name_newcomers, play).chain())
    .add_systems(bevy_app::Last, (report_saves, keep_on_exit));
    let exit = game.run(); // the runner owns the app until it exits
    assert_eq!(exit, AppExit::Success);
    let quit_with = QUIT_WITH.lock().unwrap().take().expect("kept on exit");
    println!(
        "quit after {FRAMES} frames of play with {} sheets; the autosave files:",
        quit_with.len()
    );
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    files.sort_by_key(std::fs::DirEntry::file_name);
    for file in files {
        println!("  {} ({} bytes)", file.file_name().display(), file.metadata().unwrap().len());
    }

    // A fresh app: load the autosave (the full save and its links), and compare.
    let mut fresh = minimal_app();
    fresh
        .add_plugins(DatacompPlugin::default())
        .insert_resource(Loading(autosave.clone()))
        .add_systems(Startup, |loading: Res<Loading>, mut load: MessageWriter<LoadGame>| {
            load.write(LoadGame { path: loading.0.clone() });
        })
        .add_systems(Update, check_loaded);
    fresh.run();
    let (restored, linked) = RESTORED.lock().unwrap().take().expect("loaded");
    let same = quit_with.iter().filter(|(id, sheet)| restored.get(*id) == Some(*sheet)).count();
    println!(
        "restored {same} of {} sheets exactly; {linked} entities have their Sheet back",
        quit_with.len()
    );
    std::fs::remove_dir_all(&dir).ok();
    assert!(same == quit_with.len() && restored == quit_with && linked == CHARACTERS);
}

#[derive(Resource)]
struct Loading(PathBuf);

/// The store the game quit with, kept for the check (`App::run` gives the app to its runner).
static QUIT_WITH: Mutex<Option<Store>> = Mutex::new(None);

/// The store the fresh app loaded, and its entities with a `Sheet`.
static RESTORED: Mutex<Option<(Store, usize)>> = Mutex::new(None);

fn check_loaded(
    mut loaded: MessageReader<Loaded>,
    data: Res<DataStore>,
    sheets: Query<&Sheet>,
    mut exit: MessageWriter<AppExit>,
) {
    for loaded in loaded.read() {
        match &loaded.result {
            Ok(report) => println!(
                "loaded {}: {} sheets, {} links applied, {} entities spawned",
                loaded.path.file_name().unwrap().display(),
                report.sheets,
                report.links,
                report.spawned
            ),
            Err(e) => eprintln!("load failed: {e}"),
        }
        *RESTORED.lock().unwrap() = Some((data.store().clone(), sheets.iter().len()));
        exit.write(AppExit::Success);
    }
}

fn keep_on_exit(mut exits: MessageReader<AppExit>, data: Res<DataStore>) {
    if exits.read().count() > 0 {
        *QUIT_WITH.lock().unwrap() = Some(data.store().clone());
    }
}
