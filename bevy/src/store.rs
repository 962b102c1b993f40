//! The world's data: [`DataStore`] (a resource holding the `Store`, and its `History` when undo
//! is on) and [`Sheet`] (a component linking an entity to its sheet in it).

use std::collections::HashSet;
use std::sync::Arc;

use bevy_ecs::component::Component;
use bevy_ecs::entity::Entity;
use bevy_ecs::lifecycle::HookContext;
use bevy_ecs::resource::Resource;
use bevy_ecs::world::{DeferredWorld, World};
use datacomp::{Blob, BlobMut, BlobRef, History, Id, Store};

use crate::lend::{Lend, Loan};

/// The world's datacomp [`Store`], one sheet (blob) per entity, as a resource; with a
/// [`History`] when the plugin was built with [`undo`](crate::DatacompPlugin::undo).
///
/// Read and write an entity's sheet through its [`Sheet`] component:
///
/// ```
/// use bevy_ecs::prelude::*;
/// use datacomp_bevy::{DataStore, Sheet};
///
/// fn poison(mut data: ResMut<DataStore>, sheets: Query<&Sheet>) {
///     for sheet in &sheets {
///         let health = data.get(sheet).and_then(|s| s.get_float("stats.health")).unwrap_or(0.0);
///         if let Some(mut s) = data.get_mut(sheet) {
///             s.set("stats.health", (health - 1.0).max(0.0)).ok();
///         }
///     }
/// }
/// # let mut world = World::new();
/// # world.insert_resource(DataStore::default());
/// # let id = world.resource_mut::<DataStore>().insert(&[("stats.health", 3.0)].into_iter().collect());
/// # world.spawn(id);
/// # world.run_system_once(poison).unwrap();
/// # let sheet = *world.query::<&Sheet>().single(&world).unwrap();
/// # assert_eq!(world.resource::<DataStore>().get(&sheet).unwrap().get_float("stats.health"), Some(2.0));
/// # use bevy_ecs::system::RunSystemOnce;
/// ```
///
/// A [`SaveGame`](crate::SaveGame) saves this store; a [`LoadGame`](crate::LoadGame) replaces it
/// and re-links the entities. Changing which sheets exist through
/// [`store_mut`](DataStore::store_mut) (a remove, say) leaves their entities' `Sheet`s dangling
/// until the next load or undo re-links them; [`DataStore::insert`] and despawning an entity
/// are the ordinary ways.
#[derive(Resource)]
pub struct DataStore {
    /// The store, or an empty one while it is lent (see `lend`).
    store: Store,
    /// The store lent between frames for the copies the frame asked for (a save's, the
    /// autosave's), and the loan: taken back before any write
    /// ([`store_mut`](DataStore::store_mut)).
    lent: Option<(Arc<Store>, Arc<Loan>)>,
    /// An empty store, put in the store's place while it is lent.
    empty: Option<Store>,
    history: Option<History>,
    /// Whether despawning an entity removes its sheet.
    pub(crate) remove_on_despawn: bool,
    /// Set when the sheets that exist changed under the entities (an undo, a redo): the plugin
    /// re-links them on the next frame.
    pub(crate) relink: bool,
}

impl Default for DataStore {
    /// An empty store, no history, and despawns that remove sheets.
    fn default() -> DataStore {
        DataStore::new(Store::new())
    }
}

impl DataStore {
    /// A resource holding `store`, without a history; despawning an entity removes its sheet.
    #[must_use]
    pub fn new(store: Store) -> DataStore {
        let (lent, empty, history) = (None, None, None);
        DataStore { store, lent, empty, history, remove_on_despawn: true, relink: false }
    }

    /// The sheet of `sheet`, to read; `None` if it names no sheet of this store (removed, or
    /// from before a load).
    #[must_use]
    pub fn get(&self, sheet: &Sheet) -> Option<BlobRef<'_>> {
        self.store().get(sheet.0)
    }

    /// The sheet of `sheet`, to write; `None` if it names no sheet of this store.
    pub fn get_mut(&mut self, sheet: &Sheet) -> Option<BlobMut<'_>> {
        self.store_mut().get_mut(sheet.0)
    }

    /// Inserts a sheet, and returns the [`Sheet`] component that links an entity to it.
    pub fn insert(&mut self, blob: &Blob) -> Sheet {
        Sheet(self.store_mut().insert(blob))
    }

    /// The store, to read (queries, columns, exports, saves).
    #[must_use]
    pub fn store(&self) -> &Store {
        match &self.lent {
            Some((store, _)) => store,
            None => &self.store,
        }
    }

    /// The store, to write. Between frames the plugin may lend the store to its copying
    /// thread (after a frame that asked for a save, or whose autosave was due): a write then
    /// waits for that copy, or makes it here if it has not begun.
    pub fn store_mut(&mut self) -> &mut Store {
        if self.lent.is_some() {
            self.take_back();
        }
        &mut self.store
    }

    #[cold]
    fn take_back(&mut self) {
        if let Some((store, loan)) = self.lent.take() {
            loan.wait();
            // The loan's own `Arc` is gone once its copy is made: no copy of the store here.
            let empty = std::mem::replace(&mut self.store, Arc::unwrap_or_clone(store));
            self.empty = Some(empty);
        }
    }

    /// Lends the store for `lend`'s copy (its `store` is set here), until the next write.
    pub(crate) fn lend(&mut self, lend: impl FnOnce(Arc<Store>) -> Lend) -> Arc<Loan> {
        self.store_mut();
        let empty = self.empty.take().unwrap_or_default();
        let store = Arc::new(std::mem::replace(&mut self.store, empty));
        let loan = Loan::start(lend(Arc::clone(&store)));
        self.lent = Some((store, Arc::clone(&loan)));
        loan
    }

    /// The undo history, when the plugin keeps one.
    #[must_use]
    pub fn history(&self) -> Option<&History> {
        self.history.as_ref()
    }

    /// Records the store's state as an undo step ([`History::commit`]); `false` when there is
    /// no history or nothing changed.
    pub fn commit(&mut self) -> bool {
        self.store_mut();
        self.history.as_mut().is_some_and(|h| h.commit(&self.store))
    }

    /// Puts the store back one committed step ([`History::undo`]); the plugin then re-links the
    /// entities (spawns one for a sheet brought back, despawns those whose sheet went).
    /// `false` when there is no history or no step.
    pub fn undo(&mut self) -> bool {
        self.store_mut();
        let moved = self.history.as_mut().is_some_and(|h| h.undo(&mut self.store));
        self.relink |= moved;
        moved
    }

    /// Replays the step the last [`undo`](DataStore::undo) took back, as
    /// [`History::redo`]; re-links as `undo` does.
    pub fn redo(&mut self) -> bool {
        self.store_mut();
        let moved = self.history.as_mut().is_some_and(|h| h.redo(&mut self.store));
        self.relink |= moved;
        moved
    }

    pub(crate) fn with_history(mut self, max_bytes: Option<usize>) -> DataStore {
        self.history = max_bytes.map(|max| {
            let mut history = History::with_max_bytes(max);
            history.commit(&self.store);
            history
        });
        self
    }

    /// Puts `store` in place of the store (a load), starting the history over from it.
    pub(crate) fn replace(&mut self, store: Store) {
        *self.store_mut() = store;
        if let Some(history) = &mut self.history {
            history.clear();
            history.commit(&self.store);
        }
        self.relink = false;
    }
}

/// Links an ECS entity to its sheet in the [`DataStore`].
///
/// Despawning the entity removes its sheet (unless the plugin was built with
/// [`keep_sheets_on_despawn`](crate::DatacompPlugin::keep_sheets_on_despawn)); removing only the
/// component leaves the sheet. A [`LoadGame`](crate::LoadGame) keeps every entity whose `Sheet`
/// the save holds, despawns those whose it does not, and spawns an entity with its `Sheet` for
/// each other sheet of the save. Two entities with one `Sheet` share the sheet, and the first
/// despawned removes it.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[component(on_despawn = Sheet::despawned)]
pub struct Sheet(pub Id);

impl Sheet {
    fn despawned(mut world: DeferredWorld, context: HookContext) {
        let Some(&Sheet(id)) = world.get::<Sheet>(context.entity) else { return };
        if let Some(mut data) = world.get_resource_mut::<DataStore>()
            && data.remove_on_despawn
        {
            data.store_mut().remove(id);
        }
    }
}

/// What [`relink`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Relinked {
    pub kept: usize,
    pub spawned: usize,
    pub despawned: usize,
}

/// Makes the entities match the store's sheets: keeps each entity whose `Sheet` resolves,
/// despawns those whose does not, and spawns one entity per sheet no entity holds. O(entities
/// with a `Sheet` + sheets).
pub(crate) fn relink(world: &mut World) -> Relinked {
    let mut linked = HashSet::new();
    let mut stale = Vec::new();
    let mut sheets = world.query::<(Entity, &Sheet)>();
    {
        let data = world.resource::<DataStore>();
        for (entity, sheet) in sheets.iter(world) {
            if data.store().contains(sheet.0) {
                linked.insert(sheet.0);
            } else {
                stale.push(entity);
            }
        }
    }
    let mut done = Relinked { kept: linked.len(), ..Relinked::default() };
    for entity in stale {
        // The despawn hook removes nothing: the handle does not resolve in this store.
        if world.despawn(entity) {
            done.despawned += 1;
        }
    }
    let unlinked: Vec<Sheet> = world
        .resource::<DataStore>()
        .store()
        .iter()
        .filter(|(id, _)| !linked.contains(id))
        .map(|(id, _)| Sheet(id))
        .collect();
    done.spawned = unlinked.len();
    world.spawn_batch(unlinked);
    world.resource_mut::<DataStore>().relink = false;
    done
}
