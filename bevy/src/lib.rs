//! [datacomp] in a Bevy app: fixtures as assets, sheets as components, and saves that never
//! hitch a frame.
//!
//! Add [`DatacompPlugin`] (after Bevy's `AssetPlugin`, for fixtures) and the world has a
//! [`DataStore`]: one datacomp `Store` whose sheets (one blob per entity) the
//! entities reach through their [`Sheet`] component.
//!
//! ```no_run
//! use bevy_app::{App, ScheduleRunnerPlugin, TaskPoolPlugin, Update};
//! use bevy_asset::{AssetPlugin, AssetServer};
//! use bevy_ecs::prelude::*;
//! use datacomp_bevy::{Autosave, DataStore, DatacompPlugin, Every, FromFixture, SaveGame, Sheet};
//!
//! App::new()
//!     .add_plugins((TaskPoolPlugin::default(), ScheduleRunnerPlugin::default(), AssetPlugin::default()))
//!     .add_plugins(DatacompPlugin::default().undo(64 << 20).autosave(Autosave { every: Every::Frames(600), ..Autosave::default() }))
//!     .add_systems(bevy_app::Startup, |mut commands: Commands, assets: Res<AssetServer>| {
//!         commands.spawn(FromFixture { fixture: assets.load("orcs.json"), index: 0 });
//!     })
//!     .add_systems(Update, |mut data: ResMut<DataStore>, orcs: Query<&Sheet>, mut save: MessageWriter<SaveGame>| {
//!         for orc in &orcs {
//!             data.get_mut(orc).unwrap().set("stats.health", 10.0).unwrap();
//!         }
//!         save.write(SaveGame { path: "saves/slot1.dcmp".into() });
//!     })
//!     .run();
//! ```
//!
//! # Fixtures
//!
//! A [`Fixture`] is the entities of a `.json`, `.sjson` or `.dcmp` file, read by the
//! [`FixtureLoader`] with the import options as its settings ([`FixtureSettings`]); a file
//! that does not import fails as an asset load, naming the file, the JSON path and
//! line:column ([`FixtureError`]). An entity with [`FromFixture`] gets its [`Sheet`], a copy of
//! the fixture's entity, once the fixture has loaded. With `bevy_asset`'s `file_watcher` feature
//! (this crate's `file_watcher`), a changed file reaches live entities by three-way merge: see
//! [`fixture`].
//!
//! # Saves, loads, autosaves
//!
//! [`SaveGame`] copies the store at memcpy speed in its frame and writes it atomically on a
//! task; [`LoadGame`] reads, checks and (by [`Damaged`]) salvages a save on a task, applies the
//! autosave links beside it and the [`Migrations`], then swaps it in and re-links the entities;
//! [`Autosave`] writes a chain of deltas with a full save every few links. Each reports in a
//! message ([`Saved`], [`Loaded`]). See [`save`].
//!
//! # Errors
//!
//! Fixture files fail as asset loads with a [`FixtureError`]; saves, loads and fixture links
//! report an [`Error`] in their message, and a failed load changes nothing. Nothing here panics
//! on a file's contents.
//!
//! [datacomp]: datacomp

#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(clippy::pedantic)]
#![allow(clippy::needless_pass_by_value, clippy::module_name_repetitions)]

mod error;
pub mod fixture;
mod lend;
pub mod save;
mod store;

use bevy_app::{App, AppExit, First, Last, MainScheduleOrder, Plugin, PreUpdate};
use bevy_asset::{AssetApp, AssetPlugin};
use bevy_ecs::schedule::common_conditions::on_message;
use bevy_ecs::schedule::{IntoScheduleConfigs, ScheduleLabel};
use bevy_ecs::world::World;
use datacomp::Store;

pub use error::{Error, FixtureError, FixtureErrorKind};
pub use fixture::{
    Fixture, FixtureConflict, FixtureLinkFailed, FixtureLoader, FixtureReloaded, FixtureSettings,
    FromFixture,
};
pub use save::{
    Autosave, Damaged, Every, LoadGame, LoadReport, Loaded, Migrations, SaveGame, SaveKind, Saved,
    flush,
};
pub use store::{DataStore, Sheet};

/// Registers everything: the [`DataStore`] resource, the [`Sheet`] component's despawn hook,
/// the [`Fixture`] asset and its loader (when Bevy's `AssetPlugin` was added before), hot
/// reload, the save, load and autosave messages and their systems, and [`Migrations`].
///
/// Options, builder-style:
///
/// ```
/// use datacomp::{MigrationStep, Migrations};
/// use datacomp_bevy::{Autosave, Damaged, DatacompPlugin, Every};
///
/// let plugin = DatacompPlugin::default()
///     .undo(16 << 20) // a History of at most 16 MiB of steps
///     .autosave(Autosave { every: Every::Frames(600), path: "autosave.dcmp".into(), compact_every: 10 })
///     .migrations(Migrations::new(2).step(MigrationStep::to(2).rename("hp", "stats.health")))
///     .damaged(Damaged::Refuse) // a damaged save loads nothing (the default salvages it)
///     .keep_sheets_on_despawn(); // despawning an entity leaves its sheet
/// ```
#[derive(Clone, Debug, Default)]
pub struct DatacompPlugin {
    autosave: Option<Autosave>,
    undo: Option<usize>,
    keep_sheets: bool,
    migrations: Option<datacomp::Migrations>,
    damaged: Damaged,
}

impl DatacompPlugin {
    /// Autosaves as `autosave` says.
    #[must_use]
    pub fn autosave(mut self, autosave: Autosave) -> DatacompPlugin {
        self.autosave = Some(autosave);
        self
    }

    /// Keeps an undo [`History`](datacomp::History) of at most `max_bytes` of steps in the
    /// [`DataStore`] ([`DataStore::commit`], [`DataStore::undo`], [`DataStore::redo`]).
    #[must_use]
    pub fn undo(mut self, max_bytes: usize) -> DatacompPlugin {
        self.undo = Some(max_bytes);
        self
    }

    /// Despawning an entity leaves its sheet in the store (by default it removes it).
    #[must_use]
    pub fn keep_sheets_on_despawn(mut self) -> DatacompPlugin {
        self.keep_sheets = true;
        self
    }

    /// The game's data migrations: a new store takes their version, and an older save is
    /// migrated on load (see [`Migrations`]).
    #[must_use]
    pub fn migrations(mut self, migrations: datacomp::Migrations) -> DatacompPlugin {
        self.migrations = Some(migrations);
        self
    }

    /// What a load does with a damaged save (by default, [`Damaged::Salvage`]).
    #[must_use]
    pub fn damaged(mut self, damaged: Damaged) -> DatacompPlugin {
        self.damaged = damaged;
        self
    }
}

impl Plugin for DatacompPlugin {
    fn build(&self, app: &mut App) {
        let mut store = Store::new();
        if let Some(migrations) = &self.migrations {
            store.set_data_version(migrations.version());
            app.insert_resource(Migrations(migrations.clone()));
        }
        let mut data = DataStore::new(store).with_history(self.undo);
        data.remove_on_despawn = !self.keep_sheets;
        app.insert_resource(data)
            .insert_resource(save::LoadPolicy { damaged: self.damaged })
            .init_resource::<save::Jobs>()
            .init_resource::<save::AutosaveState>()
            .add_message::<SaveGame>()
            .add_message::<LoadGame>()
            .add_message::<Saved>()
            .add_message::<Loaded>()
            .add_message::<FixtureConflict>()
            .add_message::<FixtureReloaded>()
            .add_message::<FixtureLinkFailed>()
            .add_systems(First, save::finish_jobs)
            .add_systems(PreUpdate, relink_if_needed)
            .add_systems(
                Last,
                (save::request, save::autosave, save::flush_on_exit.run_if(on_message::<AppExit>))
                    .chain(),
            );
        // The frame's very end, after `Last`: the save thread's jobs start there, when the
        // frame's systems are done (see `save::frame_end`).
        app.init_schedule(FrameEnd).add_systems(FrameEnd, save::frame_end);
        match app.world_mut().get_resource_mut::<MainScheduleOrder>() {
            Some(mut order) => order.insert_after(Last, FrameEnd),
            // An app without the main schedule's order: the end of `Last`.
            None => {
                app.add_systems(Last, save::frame_end.after(save::flush_on_exit));
            }
        }
        if let Some(autosave) = &self.autosave {
            app.insert_resource(autosave.clone());
        }
        if app.is_plugin_added::<AssetPlugin>() {
            app.init_asset::<Fixture>()
                .register_asset_loader(FixtureLoader)
                .init_resource::<fixture::FixtureBases>()
                .add_systems(
                    PreUpdate,
                    (fixture::hot_reload, fixture::link).chain().after(relink_if_needed),
                );
        }
    }
}

/// The schedule the plugin runs after `Last`, the frame's very end (`save::frame_end`).
#[derive(ScheduleLabel, Clone, Debug, PartialEq, Eq, Hash)]
struct FrameEnd;

// The README's setup compiles, as the crate docs' examples do.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// Re-links the entities after an undo or redo changed which sheets exist.
fn relink_if_needed(world: &mut World) {
    if world.resource::<DataStore>().relink {
        store::relink(world);
    }
}
