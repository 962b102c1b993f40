//! [`Id`]: the 64-bit generational handle of a [`HandleMap`](super::HandleMap) item.

use std::fmt;

const GENERATION_SHIFT: u32 = 32;
const TYPE_SHIFT: u32 = 48;
/// The free bit: set in no handle a map issues (see [`Id::is_free`]).
pub(super) const FREE_BIT: u64 = 1 << 63;

/// A 64-bit generational handle to an item of a [`HandleMap`](crate::HandleMap).
///
/// ```text
///  63   62 ........ 48 47 ........ 32 31 ..................... 0
/// ┌────┬──────────────┬──────────────┬──────────────────────────┐
/// │free│ type id (15) │ generation   │ index (32)               │
/// └────┴──────────────┴──────────────┴──────────────────────────┘
/// ```
///
/// The index names a slot of the map, the generation tells this slot's item from earlier and
/// later ones, and the type id tells maps apart. A handle resolves only in the map that issued
/// it, and only while its item lives: a removed item's handle stays stale forever. Handles
/// issued by a map never have the free bit set, and [`Id::NULL`] never resolves.
///
/// `Display` prints `12v3` (index 12, generation 3), with `t7` after it for type id 7 and `f`
/// for the free bit; `FromStr` parses that form back, and `"null"` is [`Id::NULL`].
///
/// # Examples
///
/// ```
/// use datacomp::{HandleMap, Id};
///
/// let mut map = HandleMap::new(7);
/// let id = map.insert("sword");
/// assert_eq!((id.index(), id.generation(), id.type_id()), (0, 0, 7));
/// assert_eq!(id.to_string(), "0v0t7");
/// assert_eq!("0v0t7".parse::<Id>(), Ok(id));
/// assert_eq!(Id::from_bits(id.to_bits()), id);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct Id(u64);

impl Id {
    /// The handle that never resolves: every bit set, the free bit included.
    pub const NULL: Id = Id(u64::MAX);

    /// The largest type id: type ids have 15 bits.
    pub const MAX_TYPE_ID: u16 = 0x7fff;

    /// A live handle (free bit clear). `type_id` must be at most [`Id::MAX_TYPE_ID`].
    pub(crate) const fn new(index: u32, generation: u16, type_id: u16) -> Id {
        Id(index as u64 | (generation as u64) << GENERATION_SHIFT | (type_id as u64) << TYPE_SHIFT)
    }

    /// The handle with these 64 bits, as [`to_bits`](Id::to_bits) gave them.
    ///
    /// Any value is accepted: a map answers a forged handle with `None` or a
    /// [`HandleError`](super::HandleError).
    #[must_use]
    pub const fn from_bits(bits: u64) -> Id {
        Id(bits)
    }

    /// The handle's 64 bits, for saving or sending.
    #[must_use]
    pub const fn to_bits(self) -> u64 {
        self.0
    }

    /// The slot index.
    #[must_use]
    pub const fn index(self) -> u32 {
        self.0 as u32
    }

    /// The slot's generation when the item was inserted.
    #[must_use]
    pub const fn generation(self) -> u16 {
        (self.0 >> GENERATION_SHIFT) as u16
    }

    /// The type id of the map that issued the handle.
    #[must_use]
    pub const fn type_id(self) -> u16 {
        (self.0 >> TYPE_SHIFT) as u16 & Id::MAX_TYPE_ID
    }

    /// Whether the free bit is set: no map issues such a handle.
    #[must_use]
    pub const fn is_free(self) -> bool {
        self.0 & FREE_BIT != 0
    }

    /// Whether this is [`Id::NULL`].
    #[must_use]
    pub const fn is_null(self) -> bool {
        self.0 == Id::NULL.0
    }
}

impl Default for Id {
    /// [`Id::NULL`].
    fn default() -> Id {
        Id::NULL
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_null() {
            return f.write_str("null");
        }
        write!(f, "{}v{}", self.index(), self.generation())?;
        if self.type_id() != 0 {
            write!(f, "t{}", self.type_id())?;
        }
        if self.is_free() {
            f.write_str("f")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Id({self})")
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Id {
    /// As its 64 bits.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(self.0)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Id {
    /// From its 64 bits. Every value is an `Id`; a map checks it when it is used.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Id, D::Error> {
        u64::deserialize(deserializer).map(Id)
    }
}
