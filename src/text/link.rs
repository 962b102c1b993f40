//! Prototypes in the text formats: the reserved members an entity's top level may hold
//! (`$id`, `$prototype`, `$abstract`, `$remove`, `$relative`, `$proportional`), and what a
//! document said with them, recorded as it is read (by the seeds in `entity.rs`) and resolved
//! once it has been read whole (`resolve.rs`), so that an instance may come before its base.

use std::ops::Range;

use crate::blob::BlobRef;
use crate::handle_map::Id;
use crate::key::Key;
use crate::names::{KeyNames, ROOT};
use crate::store::Store;
use crate::store::proto::ID_KEY;
use crate::value::Value;

use super::error::{ExportError, JsonErrorKind};

/// A member with a meaning of its own at an entity's top level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reserved {
    Id,
    Prototype,
    Abstract,
    Remove,
    Relative,
    Proportional,
}

impl Reserved {
    pub(crate) fn of(name: &str) -> Option<Reserved> {
        Some(match name {
            "$id" => Reserved::Id,
            "$prototype" => Reserved::Prototype,
            "$abstract" => Reserved::Abstract,
            "$remove" => Reserved::Remove,
            "$relative" => Reserved::Relative,
            "$proportional" => Reserved::Proportional,
            _ => return None,
        })
    }

    pub(crate) const fn name(self) -> &'static str {
        match self {
            Reserved::Id => "$id",
            Reserved::Prototype => "$prototype",
            Reserved::Abstract => "$abstract",
            Reserved::Remove => "$remove",
            Reserved::Relative => "$relative",
            Reserved::Proportional => "$proportional",
        }
    }

    /// What the member holds, as an error says it.
    pub(super) const fn expected(self) -> &'static str {
        match self {
            Reserved::Id => "a non-empty string, the entity's stable name",
            Reserved::Prototype => "a string, the $id of the entity's prototype",
            Reserved::Abstract => "true or false",
            Reserved::Remove => "an array of key paths (strings)",
            Reserved::Relative | Reserved::Proportional => "an object of numbers",
        }
    }

    /// Whether the member needs a store import (a blob has no prototype).
    pub(super) const fn needs_store(self) -> bool {
        !matches!(self, Reserved::Id | Reserved::Abstract)
    }
}

/// Where a link's error is placed when the document is read again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Point {
    /// The entity's `$id`.
    Id,
    /// The entity's `$prototype`.
    Prototype,
    /// The number given for this key in `$relative` or `$proportional`.
    Sugar(Key),
    /// The key path of `$remove` that names this key.
    Remove(Key),
}

/// A number given against the prototype's: added to it, or multiplied with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Relative,
    Proportional,
}

/// A number given in `$relative` or `$proportional`, set as given until it is resolved.
pub(crate) struct Sugar {
    pub(super) entity: u32,
    pub(super) key: Key,
    pub(super) op: Op,
    pub(super) operand: f32,
}

/// What a document's entities said of prototypes, recorded as they were read.
#[derive(Default)]
pub(crate) struct Links {
    /// A store import (in a blob import, `$prototype` and the number sugar are errors).
    pub(crate) store: bool,
    /// The entity being read: its position among the entities read.
    pub(crate) entity: u32,
    /// Reading the members of `$relative` or `$proportional`.
    pub(crate) sugar: Option<Op>,
    /// Stop at this member of this entity with this error: the second read of a document
    /// whose links failed, which places the error.
    pub(crate) fail_at: Option<(u32, Point, JsonErrorKind)>,
    /// The names given, back to back.
    pub(super) text: String,
    /// The entities with a `$id`, in document order, and their names in `text`.
    pub(super) ids: Vec<(u32, Range<usize>)>,
    /// The entities with a `$prototype`, in document order, and the names in `text`.
    pub(super) prototypes: Vec<(u32, Range<usize>)>,
    /// The keys each entity's `$remove` names, in document order.
    pub(super) removed: Vec<(u32, Key)>,
    /// The numbers of `$relative` and `$proportional`, in document order.
    pub(super) sugars: Vec<Sugar>,
}

impl Links {
    /// Whether the document used a prototype member that needs resolving.
    pub(crate) fn is_empty(&self) -> bool {
        self.ids.is_empty() && self.prototypes.is_empty()
    }

    pub(super) fn record(&mut self, name: &str) -> Range<usize> {
        let start = self.text.len();
        self.text.push_str(name);
        start..self.text.len()
    }

    /// The error to stop at `point` with, on the second read.
    pub(super) fn fails_at(&self, point: Point) -> Option<JsonErrorKind> {
        match &self.fail_at {
            Some((entity, at, kind)) if *entity == self.entity && *at == point => {
                Some(kind.clone())
            }
            _ => None,
        }
    }
}

/// The member of a number of sugar.
pub(super) const fn op_member(op: Op) -> &'static str {
    match op {
        Op::Relative => Reserved::Relative.name(),
        Op::Proportional => Reserved::Proportional.name(),
    }
}

/// Every reserved member, in the order of [`reserved_in`]'s bits.
const ALL: [Reserved; 6] = [
    Reserved::Id,
    Reserved::Prototype,
    Reserved::Abstract,
    Reserved::Remove,
    Reserved::Relative,
    Reserved::Proportional,
];

/// Which reserved names `names` holds at the top level: bit `i` if [`ALL`]`[i]` names a key,
/// bit `8 + i` if a named key lies under it. Memoized by the names' version.
fn reserved_in(names: &KeyNames) -> u16 {
    names.memo(|names| {
        let mut bits = 0;
        for (i, reserved) in ALL.iter().enumerate() {
            let Some(top) = names.child(ROOT, reserved.name()) else { continue };
            if names.is_named(top) {
                bits |= 1 << i;
            }
            if names.iter().any(|(_, node)| names.is_under(node, top)) {
                bits |= 1 << (8 + i);
            }
        }
        bits
    })
}

/// Whether the store names a key at a reserved top-level name: only then can
/// [`check_reserved`] refuse an entity.
pub(crate) fn any_reserved(store: &Store) -> bool {
    reserved_in(store.names()) != 0
}

/// Refuses a document of `entities` in which two hold one `$id`
/// ([`ExportError::DuplicateId`], naming the first two, in the order of `entities`, of the
/// name met twice first): an import of it would refuse the second
/// ([`JsonErrorKind::DuplicateId`]). An empty `$id` is no name (and [`check_reserved`]'s to
/// refuse). O(n log n) compares of the names, sorted (no hash a crafted set of names could
/// flood), and O(n) memory.
pub(crate) fn check_ids<'b>(
    entities: impl IntoIterator<Item = (Id, BlobRef<'b>)>,
) -> Result<(), ExportError> {
    let mut named: Vec<(&'b str, usize, Id)> = entities
        .into_iter()
        .enumerate()
        .filter_map(|(at, (id, blob))| {
            Some((blob.get_str(ID_KEY).filter(|name| !name.is_empty())?, at, id))
        })
        .collect();
    named.sort_unstable();
    // Each name's holders in order: the clash met first is the one whose second holder
    // comes first (and its first holder is the one before it).
    let first_clash = named.windows(2).filter(|w| w[0].0 == w[1].0).min_by_key(|w| w[1].1);
    match first_clash {
        Some([(name, _, first), (_, _, second)]) => {
            Err(ExportError::DuplicateId { id: (*name).to_owned(), first: *first, second: *second })
        }
        _ => Ok(()),
    }
}

/// Refuses an entity (`id`, if it is the store's) whose `entries` an import would misread: a
/// key at a reserved top-level name set through the API ([`ExportError::ReservedKey`]). `$id`
/// holding a non-empty string and `$abstract` a boolean are what they mean, and tombstones
/// are written as `$remove`. Free while the store names none of them (one compare, memoized
/// by the names' version); else O(keys) for the entity.
pub(crate) fn check_reserved<'v>(
    store: &Store,
    id: Option<Id>,
    entries: impl IntoIterator<Item = (Key, Value<'v>)>,
) -> Result<(), ExportError> {
    let names = store.names();
    let bits = reserved_in(names);
    if bits == 0 {
        return Ok(());
    }
    let refuse =
        |key: Key| ExportError::ReservedKey { entity: id, key: store.key_label(key).into_owned() };
    for (key, value) in entries {
        if value.is_tombstone() {
            continue;
        }
        let Some(node) = names.named(key) else { continue };
        let mut top = node;
        while names.parent(top) != ROOT {
            top = names.parent(top);
        }
        let Some(i) = ALL.iter().position(|r| r.name() == names.segment(top)) else { continue };
        if top != node {
            return Err(refuse(key));
        }
        let meant = match ALL[i] {
            Reserved::Id => matches!(value, Value::Str(s) if !s.is_empty()),
            Reserved::Abstract => matches!(value, Value::Bool(_)),
            _ => false,
        };
        if !meant {
            return Err(refuse(key));
        }
    }
    Ok(())
}
