//! Why a handle did not resolve or parse ([`HandleError`]), or raw or serialized handle-map
//! state was refused ([`HandleMapError`]).

use std::fmt;

use super::id::Id;
use crate::text::shown::Shortened;

/// Why a [`HandleMap`](crate::HandleMap)'s raw sections (or serde data) could not be read back:
/// which section, slot or item breaks which invariant.
///
/// [`LoadError::HandleMap`](crate::LoadError::HandleMap) wraps it when the map is part of a
/// save file.
///
/// # Examples
///
/// ```
/// use datacomp::HandleMap;
/// use datacomp::handle_map::HandleMapError;
/// use datacomp::handle_map::RawHandleMap;
///
/// let mut map = HandleMap::new(0);
/// map.insert(1_u64);
/// let raw = map.as_raw();
/// let short = RawHandleMap { items: &raw.items[..4], ..raw };
/// let err = HandleMap::<u64>::from_raw(&short).unwrap_err();
/// assert_eq!(err, HandleMapError::SectionSize { section: "items", expected: 8, found: 4 });
/// assert_eq!(err.to_string(), "section 'items' is 4 bytes; its header says 8");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HandleMapError {
    /// A section's size disagrees with the counts that describe it.
    SectionSize {
        /// The section.
        section: &'static str,
        /// Bytes the counts call for.
        expected: u64,
        /// Bytes found.
        found: u64,
    },
    /// The header's item size is not the item type's: a map of another item type.
    ItemSize {
        /// The item type's size.
        expected: u64,
        /// The size the header gives.
        found: u64,
    },
    /// The map's type id is past 15 bits.
    TypeId {
        /// The type id found.
        type_id: u16,
    },
    /// The map has not one slot entry in `meta` for each item.
    Meta {
        /// Items.
        items: u64,
        /// Entries of `meta`.
        meta: u64,
    },
    /// The map's slots run past the 32-bit handle index space.
    IndexSpace {
        /// Index of the first slot.
        base: u32,
        /// Number of slots.
        slots: u64,
    },
    /// The index of the first slot is past what [`HandleMap::reset`](crate::HandleMap::reset)
    /// ever gives (half of the index space), which could leave no index for new handles: a
    /// map that loaded would then panic on insert.
    Base {
        /// Index of the first slot.
        base: u32,
        /// The highest index of a first slot.
        max: u32,
    },
    /// A slot carries another type id than its map.
    SlotType {
        /// The slot.
        slot: u32,
        /// The type id in the slot.
        found: u16,
        /// The map's type id.
        type_id: u16,
    },
    /// A live slot whose item does not point back at it, or that carries the retired
    /// generation.
    SlotLink {
        /// The slot.
        slot: u32,
        /// The dense index it names.
        dense: u32,
        /// The slot that `meta` gives for that dense index, if it has one.
        back: Option<u32>,
    },
    /// The number of live slots differs from the number of items.
    LiveCount {
        /// Live slots.
        live: u64,
        /// Items.
        len: u64,
    },
    /// A free-list link leads outside the free, unretired slots.
    FreeList {
        /// Steps taken from the head.
        step: u64,
        /// The slot the link names.
        slot: u32,
        /// Free, unretired slots.
        free: u64,
    },
    /// The free list does not end where it must: after every free slot, at its tail.
    FreeListEnd {
        /// Free, unretired slots.
        free: u64,
        /// The stored tail.
        tail: u32,
        /// The last slot walked.
        last: u32,
        /// The link after it (`u32::MAX` ends the list).
        next: u32,
    },
    /// The header's flags hold a bit this build does not know.
    Flags {
        /// The flags found.
        flags: u16,
    },
    /// A header flagged as an identity map (slot `i` holds item `i`, every generation the
    /// first, no free list: [`RawHeader::IDENTITY`](crate::handle_map::RawHeader::IDENTITY)) whose counts
    /// or free list say otherwise.
    Identity {
        /// Which field disagrees: `"slots"` (the slot count is not the item count) or
        /// `"free list"` (its head or tail is not `u32::MAX`).
        field: &'static str,
        /// The value found.
        found: u32,
        /// The value an identity map has.
        expected: u32,
    },
}

impl fmt::Display for HandleMapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            HandleMapError::SectionSize { section, expected, found } => {
                write!(f, "section '{section}' is {found} bytes; its header says {expected}")
            }
            HandleMapError::ItemSize { expected, found } => {
                write!(f, "handle map: the header's item size is {found}, not {expected}")
            }
            HandleMapError::TypeId { type_id } => {
                write!(f, "handle map: type id {type_id} is past the 15-bit limit of 32767")
            }
            HandleMapError::Meta { items, meta } => {
                write!(f, "handle map: {items} items but {meta} entries in section 'meta'")
            }
            HandleMapError::IndexSpace { base, slots } => write!(
                f,
                "handle map: slots {base}..{base}+{slots} run past the 32-bit handle index space"
            ),
            HandleMapError::Base { base, max } => write!(
                f,
                "handle map: the first slot's index {base} is past {max}, the highest a reset \
                 gives, and could leave no index for new handles"
            ),
            HandleMapError::SlotType { slot, found, type_id } => {
                write!(f, "handle map: slot {slot} has type id {found}, the map {type_id}")
            }
            HandleMapError::SlotLink { slot, dense, back: Some(back) } => {
                write!(f, "handle map: live slot {slot} names item {dense}, whose slot is {back}")
            }
            HandleMapError::SlotLink { slot, dense, back: None } => write!(
                f,
                "handle map: live slot {slot} names item {dense}, past the items or retired"
            ),
            HandleMapError::LiveCount { live, len } => {
                write!(f, "handle map: {live} live slots for {len} items")
            }
            HandleMapError::FreeList { step, slot, free } => write!(
                f,
                "handle map: free list step {step} names slot {slot}, which is not one of the \
                 {free} free slots"
            ),
            HandleMapError::Flags { flags } => {
                write!(
                    f,
                    "handle map: header flags {flags:#06x} hold a bit this build does not know"
                )
            }
            HandleMapError::Identity { field, found, expected } => write!(
                f,
                "handle map: flagged as an identity map, but its {field} is {found}, not {expected}"
            ),
            HandleMapError::FreeListEnd { free, tail, last, next } => write!(
                f,
                "handle map: free list of {free} slots should end at tail {tail}, but slot \
                 {last} links on to {next}"
            ),
        }
    }
}

impl std::error::Error for HandleMapError {}

/// Why a handle did not resolve in a [`HandleMap`](crate::HandleMap), or text is not a handle
/// ([`Id`]'s [`FromStr`](std::str::FromStr)).
///
/// # Examples
///
/// ```
/// use datacomp::{HandleError, HandleMap};
///
/// let mut map = HandleMap::new(1);
/// let id = map.insert("x");
/// map.remove(id);
/// let err = map.try_get(id).unwrap_err();
/// assert_eq!(err, HandleError::Stale { id, current: Some(1) });
/// assert_eq!(err.to_string(), "handle 0v0t1 is stale: its slot is at generation 1 now");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HandleError {
    /// [`Id::NULL`](crate::Id::NULL).
    Null,
    /// The handle's slot holds no item, or the handle has its free bit set: no map issued it.
    Free {
        /// The handle.
        id: Id,
    },
    /// The handle belongs to a map of another type id.
    WrongType {
        /// The handle.
        id: Id,
        /// The type id of the map it was used with.
        expected: u16,
    },
    /// The handle's index is past every slot the map has.
    OutOfRange {
        /// The handle.
        id: Id,
        /// One past the map's highest slot index.
        slots: u64,
    },
    /// The handle's item was removed (or the map cleared or reset) since it was issued.
    Stale {
        /// The handle.
        id: Id,
        /// The slot's generation now: `None` when the slot was reset away or retired.
        current: Option<u16>,
    },
    /// Text that is not a handle's `Display` form (`12v3`, `12v3t7`, `12v3t7f`, `null`).
    Parse {
        /// The text as given (cut in the middle when shown).
        input: String,
    },
    /// A prototype link refused: `prototype` is `id` or reads through it
    /// ([`Store::set_prototype`](crate::Store::set_prototype)).
    PrototypeCycle {
        /// The entity given a prototype.
        id: Id,
        /// The prototype refused.
        prototype: Id,
    },
    /// A prototype link refused: a chain would hold more than `limit`
    /// ([`MAX_CHAIN`](crate::store::MAX_CHAIN)) prototypes above an entity.
    PrototypeChain {
        /// The entity given a prototype ([`Id::NULL`](crate::Id::NULL) for a new instance).
        id: Id,
        /// The prototype refused.
        prototype: Id,
        /// The prototypes the longest chain through the link would hold.
        length: usize,
        /// The most a chain may hold.
        limit: usize,
    },
    /// A merged prototype link reads through an entity the merge removes
    /// ([`store::merge3`](crate::store::merge3)): one side removed a prototype the other
    /// still links an entity to.
    PrototypeRemoved {
        /// The entity whose link it is.
        id: Id,
        /// The prototype the merge removes.
        prototype: Id,
    },
    /// An entity that is the prototype of live entities cannot be removed
    /// ([`Store::try_remove`](crate::Store::try_remove)).
    HasInstances {
        /// The entity.
        id: Id,
        /// Its live instances (direct ones).
        instances: u64,
    },
}

impl fmt::Display for HandleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            HandleError::Null => f.write_str("the null handle never resolves"),
            HandleError::Free { id } => write!(f, "handle {id} names a free slot"),
            HandleError::WrongType { id, expected } => write!(
                f,
                "handle {id} has type id {}, but this map's type id is {expected}",
                id.type_id()
            ),
            HandleError::OutOfRange { id, slots } => {
                write!(f, "handle {id} is out of range: the map has slot indices below {slots}")
            }
            HandleError::Stale { id, current: Some(generation) } => {
                write!(f, "handle {id} is stale: its slot is at generation {generation} now")
            }
            HandleError::Stale { id, current: None } => {
                write!(f, "handle {id} is stale: its slot was reset or retired")
            }
            HandleError::Parse { ref input } => write!(
                f,
                "\"{}\" is not an id: expected INDEXvGENERATION, then tTYPE and f if set (as in \
                 12v3t7), or null",
                Shortened(input)
            ),
            HandleError::PrototypeCycle { id, prototype } if id == prototype => {
                write!(f, "entity {id} cannot be its own prototype")
            }
            HandleError::PrototypeCycle { id, prototype } => write!(
                f,
                "entity {prototype} reads through {id}: as {id}'s prototype it would make a cycle"
            ),
            HandleError::PrototypeChain { id, prototype, length, limit } => {
                let new = if id == Id::NULL { "a new instance".to_owned() } else { id.to_string() };
                write!(
                    f,
                    "entity {prototype} as the prototype of {new} would make a chain of {length} \
                     prototypes, past the limit of {limit}"
                )
            }
            HandleError::PrototypeRemoved { id, prototype } => write!(
                f,
                "entity {id} would read through {prototype}, which the merge removes: one side \
                 removed a prototype the other links it to"
            ),
            HandleError::HasInstances { id, instances } => {
                let (s, them) = if instances == 1 { ("y", "it") } else { ("ies", "them") };
                write!(
                    f,
                    "entity {id} is the prototype of {instances} live entit{s}: detach or relink \
                     {them} first"
                )
            }
        }
    }
}

impl std::error::Error for HandleError {}
