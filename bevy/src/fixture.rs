//! Fixtures as assets: [`Fixture`] (the entities of one JSON, SJSON or `.dcmp` file), its
//! [`FixtureLoader`] with [`FixtureSettings`], [`FromFixture`] (an entity whose sheet comes
//! from one), and hot reload by three-way merge.
//!
//! # Hot reload
//!
//! The plugin keeps, for each fixture that entities were spawned from, the version they were
//! spawned from (the *base*). When the file changes and loads again, every live entity spawned
//! from it takes the designer's changes key by key through the store's merge of an entity
//! ([`merge3_entity`]; base: the old fixture, theirs: the new one, ours: the live sheet): a
//! key only the designer changed takes the new value, a key only the game changed keeps the
//! game's, and a key both changed keeps the game's value and is reported in a
//! [`FixtureConflict`]; so is a path the designer made a value while the game put a key under
//! it (or the reverse), where every key of the clash keeps the game's state. The new version is then the
//! base. A fixture that failed to load (a designer's typo) keeps its last good version (and
//! base); once fixed, it loads, and entities waiting for it get their sheets.

use std::collections::HashMap;

use bevy_asset::io::Reader;
use bevy_asset::{Asset, AssetEvent, AssetId, AssetLoader, Assets, Handle, LoadContext};
use bevy_ecs::component::Component;
use bevy_ecs::entity::Entity;
use bevy_ecs::message::{Message, MessageReader, MessageWriter};
use bevy_ecs::query::Without;
use bevy_ecs::resource::Resource;
use bevy_ecs::system::{Commands, Query, Res, ResMut};
use bevy_reflect::TypePath;
use datacomp::blob::{Conflict, Side};
use datacomp::store::{MergeReport, PathConflict, merge3_entity};
use datacomp::text::ImportReport;
use datacomp::{Blob, BlobRef, Id, ImportOptions, Store, TextFormat};
use serde::{Deserialize, Serialize};

use crate::error::{Error, FixtureError, FixtureErrorKind};
use crate::store::{DataStore, Sheet};

/// The entities of one fixture file, in document order (a top-level object is one entity, an
/// array of objects one each; a `.dcmp` save's in its handles' order), with the key names the
/// file gave them. Loaded by [`FixtureLoader`]; an entity takes its sheet from one with
/// [`FromFixture`].
///
/// # Examples
///
/// ```
/// use datacomp_bevy::{Fixture, FixtureSettings};
///
/// let orcs = Fixture::from_bytes(
///     "orcs.json",
///     br#"[{"name": "Grunt", "stats": {"health": 30}}, {"name": "Chief"}]"#,
///     &FixtureSettings::default(),
/// )?;
/// assert_eq!(orcs.len(), 2);
/// assert_eq!(orcs.get(1).unwrap().get_str("name"), Some("Chief"));
/// # Ok::<(), datacomp_bevy::FixtureError>(())
/// ```
#[derive(Asset, TypePath, Clone, Debug)]
pub struct Fixture {
    /// The file's entities, with the file's key names.
    store: Store,
    // INVARIANT: every id is live in `store`, in document order.
    ids: Vec<Id>,
    /// What a lenient import changed (`None` for a `.dcmp` fixture).
    report: Option<ImportReport>,
    /// The file, as the asset server names it.
    file: String,
}

impl Fixture {
    /// Reads a fixture from a file's bytes, as [`FixtureLoader`] does: the format from
    /// `settings`, or else from `file`'s extension (`.json`, `.sjson`, `.dcmp`).
    ///
    /// # Errors
    ///
    /// A [`FixtureError`] naming `file` and the place: the JSON path and line:column of a text
    /// fixture's error, the section and byte of a save's, the first byte that is not UTF-8.
    pub fn from_bytes(
        file: &str,
        bytes: &[u8],
        settings: &FixtureSettings,
    ) -> Result<Fixture, FixtureError> {
        let fail = |kind| FixtureError { file: file.to_owned(), kind };
        let format = match settings.format {
            Some(format) => format,
            None => FixtureFormat::from_file(file).map_err(fail)?,
        };
        let text_format = match format {
            FixtureFormat::Dcmp => {
                let store =
                    Store::from_bytes(bytes).map_err(|e| fail(FixtureErrorKind::Save(e)))?;
                let ids = store.iter().map(|(id, _)| id).collect();
                return Ok(Fixture { store, ids, report: None, file: file.to_owned() });
            }
            FixtureFormat::Json => TextFormat::Json,
            FixtureFormat::Sjson => TextFormat::Sjson,
        };
        let text = std::str::from_utf8(bytes)
            .map_err(|e| fail(FixtureErrorKind::NotUtf8 { byte: e.valid_up_to() }))?;
        let mut store = Store::new();
        let imported = store
            .import(text, &settings.import_options(text_format))
            .map_err(|e| fail(FixtureErrorKind::Json(Box::new(e))))?;
        Ok(Fixture {
            store,
            ids: imported.ids,
            report: Some(imported.report),
            file: file.to_owned(),
        })
    }

    /// How many entities the file holds.
    #[must_use]
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the file holds no entity.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The entity at `index` in document order.
    #[must_use]
    pub fn get(&self, index: usize) -> Option<BlobRef<'_>> {
        self.ids.get(index).and_then(|&id| self.store.get(id))
    }

    /// The file's entities as a store (with the key names the file gave them).
    #[must_use]
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// What a lenient import changed to fit the format (`None` for a `.dcmp` fixture).
    #[must_use]
    pub fn report(&self) -> Option<&ImportReport> {
        self.report.as_ref()
    }

    /// The file, as the asset server named it.
    #[must_use]
    pub fn file(&self) -> &str {
        &self.file
    }

    fn blob(&self, index: usize) -> Option<Blob> {
        self.get(index).map(BlobRef::to_blob)
    }
}

/// A fixture file's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FixtureFormat {
    /// JSON: a top-level object is one entity, an array of objects one each.
    Json,
    /// SJSON, the brace-less form (`name = "Orc"`).
    Sjson,
    /// A datacomp save: its entities, in handle order.
    Dcmp,
}

impl FixtureFormat {
    fn from_file(file: &str) -> Result<FixtureFormat, FixtureErrorKind> {
        let ext = file.rsplit_once('.').map_or("", |(_, ext)| ext);
        match ext.to_ascii_lowercase().as_str() {
            "json" => Ok(FixtureFormat::Json),
            "sjson" => Ok(FixtureFormat::Sjson),
            "dcmp" => Ok(FixtureFormat::Dcmp),
            _ => Err(FixtureErrorKind::Extension(ext.to_owned())),
        }
    }
}

/// The import options of a fixture, as the loader's settings (a `.meta` file beside the
/// fixture, or `load_builder().with_settings(..)`): strict by default, as
/// [`ImportOptions::strict`].
///
/// # Examples
///
/// ```
/// use datacomp_bevy::{Fixture, FixtureSettings};
///
/// let strict = Fixture::from_bytes("a.json", br#"{"firmness": null}"#, &FixtureSettings::default());
/// assert!(strict.is_err());
/// let lenient = FixtureSettings { lenient: true, ..FixtureSettings::default() };
/// assert_eq!(Fixture::from_bytes("a.json", br#"{"firmness": null}"#, &lenient)?.len(), 1);
/// # Ok::<(), datacomp_bevy::FixtureError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FixtureSettings {
    /// Read real designers' JSON ([`ImportOptions::lenient`]): nulls kept, arrays of objects
    /// as objects, out-of-range numbers clamped and reported.
    pub lenient: bool,
    /// Refuse a number that `f32` would write back as another decimal
    /// ([`ImportOptions::exact_numbers`]).
    pub exact_numbers: bool,
    /// The format, where the extension does not say it.
    pub format: Option<FixtureFormat>,
}

impl FixtureSettings {
    fn import_options(self, format: TextFormat) -> ImportOptions {
        let options = if self.lenient { ImportOptions::lenient() } else { ImportOptions::strict() };
        options.format(format).exact_numbers(self.exact_numbers)
    }
}

/// The [`AssetLoader`] of [`Fixture`]s: `.json`, `.sjson` and `.dcmp` files, with
/// [`FixtureSettings`]. A file that does not load fails as an asset load, with a
/// [`FixtureError`] naming the file, the JSON path and line:column.
#[derive(Clone, Copy, Debug, Default, TypePath)]
pub struct FixtureLoader;

impl AssetLoader for FixtureLoader {
    type Asset = Fixture;
    type Settings = FixtureSettings;
    type Error = FixtureError;

    async fn load(
        &self,
        reader: &mut dyn Reader,
        settings: &FixtureSettings,
        load_context: &mut LoadContext<'_>,
    ) -> Result<Fixture, FixtureError> {
        let file = load_context.path().to_string();
        let mut bytes = Vec::new();
        reader
            .read_to_end(&mut bytes)
            .await
            .map_err(|e| FixtureError { file: file.clone(), kind: FixtureErrorKind::Io(e) })?;
        Fixture::from_bytes(&file, &bytes, settings)
    }

    fn extensions(&self) -> &[&str] {
        &["json", "sjson", "dcmp"]
    }
}

/// An entity whose sheet comes from entity `index` (in document order) of a fixture: once the
/// fixture has loaded, the plugin copies that entity into the [`DataStore`] and gives this
/// entity its [`Sheet`]; later changes of the file reach it by three-way merge.
///
/// ```no_run
/// # use bevy_ecs::prelude::*;
/// # use bevy_asset::AssetServer;
/// use datacomp_bevy::FromFixture;
///
/// fn spawn_orcs(mut commands: Commands, assets: Res<AssetServer>) {
///     let orcs = assets.load("orcs.json");
///     for _ in 0..100 {
///         commands.spawn(FromFixture { fixture: orcs.clone(), index: 0 });
///     }
/// }
/// ```
#[derive(Component, Clone, Debug)]
pub struct FromFixture {
    /// The fixture.
    pub fixture: Handle<Fixture>,
    /// The entity's index in it.
    pub index: usize,
}

/// A fixture changed under a live entity, and a key the designer changed had also been changed
/// by the game, or a path took a different shape on each side: the game's values were kept,
/// the designer's are here.
#[derive(Message, Clone, Debug)]
pub struct FixtureConflict {
    /// The entity.
    pub entity: Entity,
    /// Its sheet.
    pub sheet: Sheet,
    /// The fixture.
    pub fixture: AssetId<Fixture>,
    /// Each key both changed: its base (old fixture), ours (the game's, kept) and theirs (the
    /// new fixture's) values.
    pub conflicts: Vec<Conflict>,
    /// Each path the designer made a value (`stats`) while the game put a key under it
    /// (`stats.health`), or the reverse: every key of the clash kept the game's state, since
    /// a sheet that held both would be one no import reads back.
    pub paths: Vec<PathConflict>,
}

/// A fixture reloaded: how many live entities took its changes, and how many of them had
/// conflicts ([`FixtureConflict`]).
#[derive(Message, Clone, Debug, PartialEq, Eq)]
pub struct FixtureReloaded {
    /// The fixture.
    pub fixture: AssetId<Fixture>,
    /// Live entities merged.
    pub merged: usize,
    /// Of those, entities with a conflict.
    pub conflicted: usize,
}

/// An entity's sheet could not be taken from its fixture (an index past the file's end, key
/// names that collide with the store's): it gets no [`Sheet`] until the fixture changes.
#[derive(Message, Debug)]
pub struct FixtureLinkFailed {
    /// The entity.
    pub entity: Entity,
    /// Why.
    pub error: Error,
}

/// The version of each fixture that live entities were spawned from or last merged with, and
/// the entities that could not be linked (retried when their fixture changes).
#[derive(Resource, Default)]
pub(crate) struct FixtureBases {
    bases: HashMap<AssetId<Fixture>, Fixture>,
    failed: HashMap<Entity, AssetId<Fixture>>,
}

/// Merges each changed fixture into the live entities spawned from it.
#[expect(clippy::too_many_arguments, reason = "a system names each resource and message it uses")]
pub(crate) fn hot_reload(
    mut events: MessageReader<AssetEvent<Fixture>>,
    fixtures: Res<Assets<Fixture>>,
    mut bases: ResMut<FixtureBases>,
    mut data: ResMut<DataStore>,
    entities: Query<(Entity, &FromFixture, &Sheet)>,
    mut conflicts: MessageWriter<FixtureConflict>,
    mut reloaded: MessageWriter<FixtureReloaded>,
    mut failures: MessageWriter<FixtureLinkFailed>,
) {
    for event in events.read() {
        let id = match *event {
            AssetEvent::Modified { id } => id,
            AssetEvent::Removed { id } => {
                bases.bases.remove(&id);
                continue;
            }
            _ => continue,
        };
        bases.failed.retain(|_, fixture| *fixture != id);
        let (Some(new), Some(old)) = (fixtures.get(id), bases.bases.get(&id)) else { continue };
        if let Err(error) = data.store_mut().merge_key_names(&new.store) {
            let fixture = new.file.clone();
            for (entity, _, _) in entities.iter().filter(|(_, from, _)| from.fixture.id() == id) {
                let error = Error::KeyNames { fixture: fixture.clone(), error: error.clone() };
                failures.write(FixtureLinkFailed { entity, error });
            }
            continue;
        }
        let mut done = FixtureReloaded { fixture: id, merged: 0, conflicted: 0 };
        for (entity, from, &sheet) in &entities {
            if from.fixture.id() != id {
                continue;
            }
            // An entity the new file no longer has keeps its sheet as it is.
            let (Some(theirs), Some(ours)) = (new.blob(from.index), data.get(&sheet)) else {
                continue;
            };
            let ours = ours.to_blob();
            let base = old.blob(from.index).unwrap_or_default();
            // The store's merge of one entity, with its names: a path the designer made a value
            // while the game put a key under it (or the reverse) keeps the game's shape.
            let mut found = MergeReport::default();
            let merged =
                merge3_entity(data.store(), sheet.0, &base, &ours, &theirs, Side::Ours, &mut found);
            let merged = match merged {
                Ok(merged) => merged,
                Err(e) => {
                    let error = Error::Write {
                        fixture: new.file.clone(),
                        index: from.index,
                        error: e.into(),
                    };
                    failures.write(FixtureLinkFailed { entity, error });
                    continue;
                }
            };
            if found.conflict_count() > 0 {
                done.conflicted += 1;
                conflicts.write(FixtureConflict {
                    entity,
                    sheet,
                    fixture: id,
                    conflicts: found.conflicts.into_iter().map(|(_, c)| c).collect(),
                    paths: found.path_conflicts,
                });
            }
            let write = data
                .get_mut(&sheet)
                .map(|mut live| Blob::diff(&ours, &merged).try_apply(&mut live));
            match write {
                Some(Ok(())) => done.merged += 1,
                Some(Err(e)) => {
                    let error = Error::Write {
                        fixture: new.file.clone(),
                        index: from.index,
                        error: e.into(),
                    };
                    failures.write(FixtureLinkFailed { entity, error });
                }
                None => {}
            }
        }
        bases.bases.insert(id, new.clone());
        reloaded.write(done);
    }
}

/// Gives each entity waiting for a loaded fixture its sheet.
pub(crate) fn link(
    mut commands: Commands,
    fixtures: Res<Assets<Fixture>>,
    mut bases: ResMut<FixtureBases>,
    mut data: ResMut<DataStore>,
    waiting: Query<(Entity, &FromFixture), Without<Sheet>>,
    mut failures: MessageWriter<FixtureLinkFailed>,
) {
    // Each fixture's names are merged into the store once a frame, before its first entity.
    let mut named: Vec<AssetId<Fixture>> = Vec::new();
    for (entity, from) in &waiting {
        let id = from.fixture.id();
        if bases.failed.contains_key(&entity) {
            continue;
        }
        let Some(fixture) = fixtures.get(id) else { continue };
        let fail = |error| FixtureLinkFailed { entity, error };
        if !named.contains(&id) {
            if let Err(error) = data.store_mut().merge_key_names(&fixture.store) {
                bases.failed.insert(entity, id);
                failures.write(fail(Error::KeyNames { fixture: fixture.file.clone(), error }));
                continue;
            }
            named.push(id);
        }
        let Some(blob) = fixture.get(from.index) else {
            bases.failed.insert(entity, id);
            let (fixture, index, len) = (fixture.file.clone(), from.index, fixture.len());
            failures.write(fail(Error::NoSuchEntity { fixture, index, len }));
            continue;
        };
        let sheet = Sheet(data.store_mut().insert(&blob.to_blob()));
        bases.bases.entry(id).or_insert_with(|| fixture.clone());
        commands.entity(entity).insert(sheet);
    }
}
