//! What the benchmark (`benches/save_load.rs`) and its instruction-count harness
//! (`examples/save_cost.rs`) share: 100,000 character sheets, as datacomp sheets in an app with
//! the plugin and as reflected components in an app without it, and each side's save and load.

#![allow(dead_code)] // each includer uses its part

use std::path::Path;

use bevy_app::{App, TaskPoolPlugin};
use bevy_asset::{AssetPlugin, AssetServer};
use bevy_ecs::entity::EntityHashMap;
use bevy_ecs::prelude::*;
use bevy_ecs::reflect::{AppTypeRegistry, ReflectComponent};
use bevy_reflect::Reflect;
use bevy_world_serialization::DynamicWorldBuilder;
use bevy_world_serialization::serde::WorldDeserializer;
use datacomp::{Blob, KeyPath};
use datacomp_bevy::{DataStore, DatacompPlugin, LoadGame, Loaded, SaveGame, Saved, flush};
use serde::de::DeserializeSeed;

pub const SHEETS: usize = 100_000;

pub const NAME: KeyPath = KeyPath::dotted("name");
pub const HEALTH: KeyPath = KeyPath::dotted("stats.health");
pub const MANA: KeyPath = KeyPath::dotted("stats.mana");
pub const STRENGTH: KeyPath = KeyPath::dotted("stats.strength");
pub const LEVEL: KeyPath = KeyPath::dotted("stats.level");
pub const XP: KeyPath = KeyPath::dotted("stats.xp");
pub const WEAPON: KeyPath = KeyPath::dotted("gear.weapon");
pub const POSITION: KeyPath = KeyPath::dotted("position");

/// The reflected peer's components: the same values as a sheet.
#[derive(Component, Reflect, Default)]
#[reflect(Component)]
pub struct CharacterName(pub String);

#[derive(Component, Reflect, Default)]
#[reflect(Component)]
pub struct Stats {
    pub health: f32,
    pub mana: f32,
    pub strength: f32,
    pub level: f32,
    pub xp: f32,
}

#[derive(Component, Reflect, Default)]
#[reflect(Component)]
pub struct Gear {
    pub weapon: String,
}

#[derive(Component, Reflect, Default)]
#[reflect(Component)]
pub struct Position(pub [f32; 3]);

pub const WEAPONS: [&str; 4] = ["sword", "staff", "daggers", "mace"];

pub fn values(i: usize) -> (String, [f32; 5], &'static str, [f32; 3]) {
    let f = i as f32;
    (
        format!("character {i:06}"),
        [
            100.0 - (i % 50) as f32,
            (i % 200) as f32,
            10.0 + (i % 7) as f32,
            1.0 + (i % 20) as f32,
            f,
        ],
        WEAPONS[i % 4],
        [f * 0.5, -f, 2.0],
    )
}

pub fn sheet(i: usize) -> Blob {
    let (name, stats, weapon, position) = values(i);
    let mut blob = Blob::new();
    blob.set(NAME, name.as_str()).unwrap();
    for (key, value) in [HEALTH, MANA, STRENGTH, LEVEL, XP].into_iter().zip(stats) {
        blob.set(key, value).unwrap();
    }
    blob.set(WEAPON, weapon).unwrap();
    blob.set(POSITION, position).unwrap();
    blob
}

pub fn base_app() -> App {
    let mut app = App::new();
    app.add_plugins((TaskPoolPlugin::default(), AssetPlugin::default()));
    app
}

/// An app with the plugin and, when `sheets`, the 100,000 sheets and their entities.
pub fn datacomp_app(sheets: bool) -> App {
    let mut app = base_app();
    app.add_plugins(DatacompPlugin::default());
    app.finish();
    app.cleanup();
    if sheets {
        let mut data = app.world_mut().resource_mut::<DataStore>();
        let sheets: Vec<_> = (0..SHEETS).map(|i| data.insert(&sheet(i))).collect();
        app.world_mut().spawn_batch(sheets);
    }
    app.update();
    app
}

/// An app with the reflected components registered and, when `entities`, 100,000 entities.
pub fn reflected_app(entities: bool) -> App {
    let mut app = base_app();
    app.register_type::<CharacterName>()
        .register_type::<Stats>()
        .register_type::<Gear>()
        .register_type::<Position>();
    app.finish();
    app.cleanup();
    if entities {
        app.world_mut().spawn_batch((0..SHEETS).map(|i| {
            let (name, [health, mana, strength, level, xp], weapon, position) = values(i);
            (
                CharacterName(name),
                Stats { health, mana, strength, level, xp },
                Gear { weapon: weapon.to_owned() },
                Position(position),
            )
        }));
    }
    app.update();
    app
}

pub fn datacomp_save(app: &mut App, path: &Path) {
    app.world_mut().write_message(SaveGame { path: path.to_owned() });
    app.update();
    flush(app.world_mut());
    let saved: Vec<Saved> = app.world_mut().resource_mut::<Messages<Saved>>().drain().collect();
    assert!(saved.len() == 1 && saved[0].result.is_ok());
}

pub fn ron_save(app: &mut App, path: &Path) {
    let world = app.world_mut();
    let characters: Vec<Entity> =
        world.query_filtered::<Entity, With<Stats>>().iter(world).collect();
    let registry = world.resource::<AppTypeRegistry>().clone();
    let registry = registry.read();
    let scene = DynamicWorldBuilder::from_world(world, &registry)
        .extract_entities(characters.into_iter())
        .build();
    let ron = scene.serialize(&registry).unwrap();
    datacomp::file::write_atomically(path, |out| out.write_all(ron.as_bytes())).unwrap();
}

pub fn datacomp_load(app: &mut App, path: &Path) {
    app.world_mut().write_message(LoadGame { path: path.to_owned() });
    app.update();
    flush(app.world_mut());
    let loaded: Vec<Loaded> = app.world_mut().resource_mut::<Messages<Loaded>>().drain().collect();
    assert_eq!(loaded[0].result.as_ref().unwrap().spawned, SHEETS);
}

pub fn ron_load(app: &mut App, path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let world = app.world_mut();
    let registry = world.resource::<AppTypeRegistry>().clone();
    let mut server = world.resource::<AssetServer>().clone();
    let scene = WorldDeserializer { type_registry: &registry.read(), load_from_path: &mut server }
        .deserialize(&mut ron::de::Deserializer::from_str(&text).unwrap())
        .unwrap();
    scene.write_to_world(world, &mut EntityHashMap::default()).unwrap();
    assert_eq!(world.query::<&Stats>().iter(world).len(), SHEETS);
}
