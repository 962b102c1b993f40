//! The errors of the text formats: [`JsonError`] (why a document does not import, and where)
//! and [`ExportError`] (why an entity cannot be written).

use std::fmt;

use crate::blob::BlobError;
use crate::handle_map::HandleError;
use crate::handle_map::Id;
use crate::key::Key;
#[cfg(doc)]
use crate::key::MAX_PATH_SEGMENTS;
use crate::store::Store;
use crate::value::ValueType;

use super::number::JsonF32;
use super::shown::Shortened;

/// What is wrong with a JSON document, and where: the JSON path (a JSON Pointer such as
/// `/stats/health`) and the line and column where reading stopped.
///
/// # Examples
///
/// ```
/// use datacomp::{Blob, ImportOptions};
/// use datacomp::text::JsonErrorKind;
///
/// let text = "{\"stats\": {\"health\": null}}";
/// let err = Blob::import(text, &ImportOptions::strict()).unwrap_err();
/// assert_eq!(err.kind(), &JsonErrorKind::Null);
/// assert_eq!(err.path(), "/stats/health");
/// assert_eq!((err.line(), err.column()), (1, 25));
/// assert_eq!(
///     err.to_string(),
///     "/stats/health (line 1, column 25): null is read by the lenient import only, not the \
///      strict one"
/// );
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct JsonError {
    pub(crate) kind: JsonErrorKind,
    pub(crate) path: String,
    pub(crate) line: usize,
    pub(crate) column: usize,
}

/// The kinds of [`JsonError`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum JsonErrorKind {
    /// Not JSON: `serde_json`'s description.
    Syntax(String),
    /// The document is not an object.
    NotAnObject,
    /// `null` in a strict import: the restricted format has no null ([`ImportOptions::lenient`]
    /// keeps it as [`Value::Null`](crate::Value::Null)).
    ///
    /// [`ImportOptions::lenient`]: crate::text::ImportOptions::lenient
    Null,
    /// An array element that is not a number: arrays hold numbers only.
    NotANumber,
    /// A number past the range of `f32`.
    NumberOutOfRange(f64),
    /// A number that the nearest `f32` changes beyond its rounding: a whole number it does not
    /// hold (and that is not written as that `f32` is written), or a nonzero number it holds
    /// only as zero. A fraction rounded to `f32`'s precision (`0.1`) is not refused.
    NotHeld {
        /// The number as written (`16777217`, `1e-50`).
        number: String,
        /// What it would be stored as (`16777216`, `0`).
        becomes: f32,
    },
    /// A fraction whose nearest `f32` is written back as another decimal
    /// (`3.141592653589793` as `3.1415927`), refused by
    /// [`ImportOptions::exact_numbers`](crate::text::ImportOptions::exact_numbers).
    LosesDigits {
        /// The number as read (`3.141592653589793`).
        number: String,
        /// What it would be stored and written back as (`3.1415927`).
        becomes: f32,
    },
    /// The same path twice in one entity: as two values, as two objects, or as a value and
    /// an object (which JSON could not write back).
    DuplicatePath(String),
    /// Two different paths whose keys hash to the same [`Key`].
    KeyCollision {
        /// The path seen first.
        first: String,
        /// The path seen second.
        second: String,
        /// Their key.
        key: Key,
    },
    /// An entity's top-level member named as a raw key (`#` and 8 hex digits, as in
    /// `#0000002a`: the key with that hash, unnamed) that holds an object, or an array of
    /// other things than numbers: a raw key holds one value.
    RawKeyNotAValue {
        /// The member's name as written.
        member: String,
        /// Whether it holds an object (else an array).
        object: bool,
    },
    /// The blob would pass its 4 GiB limit.
    Blob(BlobError),
    /// A reserved member of an entity's top level (`$id`, `$prototype`, `$abstract`,
    /// `$remove`, `$relative`, `$proportional`: see [the module docs](crate::text#prototypes))
    /// holding what it cannot.
    Reserved {
        /// The member.
        member: &'static str,
        /// What it holds.
        expected: &'static str,
    },
    /// `$prototype`, `$relative` or `$proportional` where there is no prototype to read: in a
    /// blob import, or (the number sugar) in an entity without a `$prototype`.
    NeedsStore {
        /// The member.
        member: &'static str,
    },
    /// `$prototype` names no `$id` of the document or of the store.
    UnknownPrototype {
        /// The name.
        name: String,
    },
    /// A second entity with the same `$id`.
    DuplicateId {
        /// The name.
        id: String,
        /// Where the first is: a JSON Pointer of the document (`/3`), or a store's entity
        /// (`entity 2v0t1`).
        first: String,
    },
    /// Prototype links that come back to where they started.
    PrototypeCycle {
        /// The `$id` of the entity where the cycle closes (or its position, `/3`).
        id: String,
        /// The entities on the cycle.
        len: usize,
    },
    /// A chain of prototypes longer than the store takes.
    ChainTooLong {
        /// The prototypes above the entity.
        len: usize,
        /// The most an entity may have.
        limit: usize,
    },
    /// `$relative` or `$proportional` for a key the prototype holds no number at.
    NoBaseNumber {
        /// The member (`$relative` or `$proportional`).
        member: &'static str,
        /// What the prototype holds there, if anything.
        found: Option<ValueType>,
    },
    /// A member nested deeper than a key's name may be: its path has `segments` member names,
    /// past `limit` ([`MAX_PATH_SEGMENTS`]).
    TooDeep {
        /// Member names on the path.
        segments: usize,
        /// The most a name may have.
        limit: usize,
    },
}

impl JsonError {
    /// What is wrong.
    #[must_use]
    pub fn kind(&self) -> &JsonErrorKind {
        &self.kind
    }

    /// Where in the document: a JSON Pointer (`/stats/health`, `/position/2`; `""` is the top).
    #[must_use]
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The line (from 1) where reading stopped.
    #[must_use]
    pub fn line(&self) -> usize {
        self.line
    }

    /// The column (from 1) where reading stopped.
    #[must_use]
    pub fn column(&self) -> usize {
        self.column
    }
}

impl fmt::Display for JsonErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonErrorKind::Syntax(message) => f.write_str(message),
            JsonErrorKind::NotAnObject => f.write_str("an entity must be a JSON object"),
            // (No option named: the command adds its flag, a program knows its options.)
            JsonErrorKind::Null => {
                f.write_str("null is read by the lenient import only, not the strict one")
            }
            JsonErrorKind::NotANumber => f.write_str("arrays may hold numbers only"),
            JsonErrorKind::NumberOutOfRange(n) => write!(f, "{n:e} is past the range of f32"),
            JsonErrorKind::NotHeld { number, becomes } => {
                let number = Shortened(number);
                write!(f, "{number} would be stored as {}: f32 cannot hold it", JsonF32(*becomes))
            }
            JsonErrorKind::LosesDigits { number, becomes } => {
                let number = Shortened(number);
                write!(
                    f,
                    "{number} would be stored as {}, losing digits (exact numbers were asked for)",
                    JsonF32(*becomes)
                )
            }
            JsonErrorKind::DuplicatePath(path) => write!(f, "{} is set twice", Shortened(path)),
            JsonErrorKind::KeyCollision { first, second, key } => {
                let (first, second) = (Shortened(first), Shortened(second));
                write!(f, "{second} and {first} hash to the same key {key}")
            }
            JsonErrorKind::RawKeyNotAValue { member, object } => {
                let not =
                    if *object { "an object" } else { "an array of other things than numbers" };
                write!(
                    f,
                    "member {} is a raw key and holds one value, not {not}",
                    Shortened(member)
                )
            }
            JsonErrorKind::Blob(e) => e.fmt(f),
            JsonErrorKind::Reserved { member, expected } => {
                write!(f, "{member} must be {expected}")
            }
            JsonErrorKind::NeedsStore { member } => write!(
                f,
                "{member} needs a prototype: it is read by a store import, in an entity with \
                 a $prototype"
            ),
            JsonErrorKind::UnknownPrototype { name } => {
                write!(f, "no entity has the $id {:?}", Shortened(name).to_string())
            }
            JsonErrorKind::DuplicateId { id, first } => {
                write!(f, "the $id {:?} is taken, by {first}", Shortened(id).to_string())
            }
            JsonErrorKind::PrototypeCycle { id, len } => write!(
                f,
                "the prototype chain of {:?} comes back to it, through {len} {}",
                Shortened(id).to_string(),
                if *len == 1 { "entity" } else { "entities" }
            ),
            JsonErrorKind::ChainTooLong { len, limit } => write!(
                f,
                "the entity would have {len} prototypes above it, past the limit of {limit}"
            ),
            JsonErrorKind::NoBaseNumber { member, found } => {
                let found = found.map_or("nothing".to_owned(), |ty| format!("a {ty}"));
                write!(f, "{member} needs a number in the prototype, which holds {found} here")
            }
            JsonErrorKind::TooDeep { segments, limit } => {
                write!(f, "the path has {segments} segments, past the limit of {limit}")
            }
        }
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Names are cut and escaped, so that a message is one short line.
        let path = Shortened(if self.path.is_empty() { "/" } else { &self.path });
        write!(f, "{path} (line {}, column {}): {}", self.line, self.column, self.kind)
    }
}

impl std::error::Error for JsonError {}

/// Why an entity cannot be written as JSON.
///
/// # Examples
///
/// ```
/// use datacomp::{ExportError, ExportOptions, Store};
///
/// let mut store = Store::new();
/// let id = store.insert_entries([("stats.luck", f32::NAN)]).unwrap();
/// let err = store.export(id, &ExportOptions::json()).unwrap_err();
/// assert!(matches!(&err, ExportError::NotFinite { key, .. } if key == "stats.luck"));
/// store.remove(id);
/// assert!(matches!(store.export(id, &ExportOptions::json()), Err(ExportError::Handle(_))));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ExportError {
    /// The handle names no live entity.
    Handle(HandleError),
    /// A float that JSON has no number for (NaN, infinity): any text written for it would not
    /// read back as it.
    NotFinite {
        /// The entity, when the export is of a store's entity.
        entity: Option<Id>,
        /// The key, as [`Store::key_label`](crate::Store::key_label) shows it.
        key: String,
        /// The float.
        value: f32,
    },
    /// An instance whose prototype has no `$id`: the export has no name to write in its
    /// `$prototype` (give the prototype a `$id`, or export flattened).
    UnnamedPrototype {
        /// The instance.
        entity: Option<Id>,
        /// Its prototype.
        prototype: Id,
    },
    /// A key set through the API at (or under) a name a fixture's top level reserves
    /// (`$prototype`, `$remove`, `$relative`, `$proportional`; `$id` other than a non-empty
    /// string, `$abstract` other than a boolean): an import would read the member as what
    /// the name means, not as this value, so the export refuses to write it.
    ReservedKey {
        /// The entity.
        entity: Option<Id>,
        /// The key, as [`Store::key_label`](crate::Store::key_label) shows it.
        key: String,
    },
    /// Two entities of a whole-store export hold one `$id` (set through the API: an import
    /// never makes two): an import of the document would refuse the second
    /// ([`JsonErrorKind::DuplicateId`]), so the export refuses to write it.
    DuplicateId {
        /// The name.
        id: String,
        /// The first entity that holds it, in iteration order.
        first: Id,
        /// The second.
        second: Id,
    },
    /// The entity holds nothing at or under the path.
    NoPath {
        /// The entity.
        entity: Option<Id>,
        /// The path, as [`Store::key_label`](crate::Store::key_label) would show its key.
        path: String,
    },
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let entity = |id: &Option<Id>| id.map(|id| format!("entity {id}: ")).unwrap_or_default();
        match self {
            ExportError::Handle(e) => e.fmt(f),
            ExportError::NotFinite { entity: id, key, value } => {
                let (id, key) = (entity(id), Shortened(key));
                write!(f, "{id}{key} is {}, which JSON has no number for", JsonF32(*value))
            }
            ExportError::UnnamedPrototype { entity, prototype } => {
                let entity = entity.map(|id| format!("entity {id}: ")).unwrap_or_default();
                write!(
                    f,
                    "{entity}its prototype {prototype} has no $id to name it by (set one, or \
                     export flattened)"
                )
            }
            ExportError::ReservedKey { entity: id, key } => {
                let (id, key) = (entity(id), Shortened(key));
                write!(
                    f,
                    "{id}{key} is at a name a fixture reserves: an import would read it as that \
                     member, not as this value (rename the key)"
                )
            }
            ExportError::DuplicateId { id, first, second } => write!(
                f,
                "entities {first} and {second} both have the $id {:?}: an import would refuse \
                 the second (give each a name of its own)",
                Shortened(id).to_string()
            ),
            ExportError::NoPath { entity: Some(id), path } => {
                write!(f, "entity {id} holds nothing at {}", Shortened(path))
            }
            ExportError::NoPath { entity: None, path } => {
                write!(f, "nothing at {}", Shortened(path))
            }
        }
    }
}

impl ExportError {
    /// The error for a float that JSON and SJSON have no number for, naming its key.
    pub(crate) fn not_finite(
        store: &Store,
        entity: Option<Id>,
        key: Key,
        value: f32,
    ) -> ExportError {
        ExportError::NotFinite { entity, key: store.key_label(key).into_owned(), value }
    }
}

impl std::error::Error for ExportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ExportError::Handle(e) => Some(e),
            _ => None,
        }
    }
}

impl From<HandleError> for ExportError {
    fn from(e: HandleError) -> ExportError {
        ExportError::Handle(e)
    }
}
