//! [`IdIndex`]: a store's entities that have a `$id`, by it, kept between imports.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::handle_map::Id;

/// The entities of a store that have a `$id`, by it (the first in dense order for a name held
/// twice), made at one count of the store's writes (`Tracker::writes`) and valid while it is
/// the same: an import of many documents scans the store for names once, then adds each
/// document's own (`resolve.rs`). Behind a lock so that a store stays `Sync`.
pub(crate) struct IdIndex(pub(super) Mutex<Option<(u64, HashMap<String, Id>)>>);

impl IdIndex {
    /// No index yet. Does not allocate.
    pub(crate) const fn new() -> IdIndex {
        IdIndex(Mutex::new(None))
    }
}

impl Clone for IdIndex {
    /// No index: it is a cache, made again as needed.
    fn clone(&self) -> IdIndex {
        IdIndex::new()
    }
}
