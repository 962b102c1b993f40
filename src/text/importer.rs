//! The importer's state: where it is in the document, what it has seen, and why it stopped;
//! and the rules every value passes (paths claimed once, raw keys, numbers `f32` holds). The
//! serde seeds that drive it are in `entity.rs`.

use std::collections::HashSet;
use std::fmt::Write as _;

use serde::de;

use crate::blob::bulk::Builder;
use crate::key::{Key, MAX_PATH_SEGMENTS};
use crate::names::{self, KeyNames};
use crate::value::Value;

use super::error::{JsonError, JsonErrorKind};
use super::link::{Links, Op, Point, Reserved, Sugar};
use super::number::{self, Fit, JsonF32, JsonF64};
use super::options::ImportReport;

/// Why a reader of text (`serde_json`, or the SJSON reader) stopped, and where: its own
/// description, which the importer's reason replaces when it has one.
pub(crate) struct ReadError {
    pub(crate) message: String,
    /// The line and column (from 1) where reading stopped.
    pub(crate) line: usize,
    pub(crate) column: usize,
}

/// Entities read so far by a store import, repacked back to back: committed to the store only
/// when the whole document has been read.
#[derive(Default)]
pub(crate) struct Staging {
    /// The entity being read; cleared, not reallocated, between entities.
    pub(crate) blob: Builder,
    pub(crate) arena: Vec<u32>,
    /// The words of each entity in `arena`, back to back. A blob is at most 4 GiB: 2^30
    /// words.
    pub(crate) spans: Vec<u32>,
}

/// Where the importer is, what it has seen, and why it stopped.
#[derive(Default)]
pub(crate) struct Importer {
    /// The name-tree node of each open object (none at the top level: the root).
    pub(crate) levels: Vec<u32>,
    /// The member names on the current path, back to back, and where each one ends.
    pub(crate) path: String,
    pub(crate) path_ends: Vec<usize>,
    /// The index of the array element being read, if one is.
    pub(crate) element: Option<usize>,
    /// Every path met, as a tree of segments: the store's key names in a store import (its
    /// named nodes are the keys' names), a tree of its own in a blob import. A path is
    /// claimed once per entity, as a value or an object: twice is a path set twice, or a
    /// value and an object at one path (which JSON could not write back). Memory is one
    /// member name a path met, not one path.
    pub(crate) names: KeyNames,
    /// The nodes the entity being read claimed, released after it.
    pub(crate) claimed: Vec<u32>,
    /// The member name being read.
    pub(crate) segment: String,
    /// Numbers of the array being read.
    pub(crate) floats: Vec<f32>,
    /// Why the import stopped, when it is the format's rule and not JSON's.
    pub(crate) failure: Option<JsonErrorKind>,
    /// The lenient policy, and what it changed.
    pub(crate) lenient: bool,
    /// Refuse numbers that lose digits ([`JsonErrorKind::LosesDigits`]).
    pub(crate) exact: bool,
    pub(crate) report: ImportReport,
    /// Whether a number was read as an `f64` zero: written so, or nonzero but past `f64`'s
    /// precision.
    pub(crate) saw_zero: bool,
    /// The position of the entity being read in a top-level array, if it is in one.
    pub(crate) entity: Option<usize>,
    /// The raw keys (top-level members `#xxxxxxxx`) the entity being read set, cleared after
    /// it. Hashed with a random seed: the keys come from the document.
    pub(crate) raw: HashSet<Key>,
    /// What the document says of prototypes (`link.rs`).
    pub(crate) links: Links,
}

impl Importer {
    /// Records why the import stops, as an error `serde_json` places in the text.
    pub(super) fn fail<E: de::Error>(&mut self, kind: JsonErrorKind) -> E {
        self.failure = Some(kind);
        E::custom("datacomp format rule")
    }

    pub(crate) fn error(&mut self, e: &ReadError) -> JsonError {
        let kind = self.failure.take().unwrap_or_else(|| JsonErrorKind::Syntax(e.message.clone()));
        JsonError { kind, path: self.pointer(), line: e.line, column: e.column }
    }

    /// The member names on the current path.
    fn segments(&self) -> impl Iterator<Item = &str> {
        let starts = std::iter::once(0).chain(self.path_ends.iter().copied());
        starts.zip(self.path_ends.iter().copied()).map(|(start, end)| &self.path[start..end])
    }

    /// The current path as a JSON Pointer into the document: `/stats/health`, `/position/2`,
    /// `/1/name` for the second entity of an array.
    fn pointer(&self) -> String {
        let mut pointer = String::new();
        if let Some(entity) = self.entity {
            let _ = write!(pointer, "/{entity}");
        }
        pointer.push_str(&self.member_pointer());
        if let Some(index) = self.element {
            let _ = write!(pointer, "/{index}");
        }
        pointer
    }

    /// The member path within the entity as a JSON Pointer: the key's exact segments.
    fn member_pointer(&self) -> String {
        let mut pointer = String::new();
        for segment in self.segments() {
            crate::key::push_pointer_segment(&mut pointer, segment);
        }
        pointer
    }

    /// Enters the member named `self.segment`, returning its name-tree node; refuses a member
    /// deeper than a name may be ([`MAX_PATH_SEGMENTS`]).
    pub(super) fn enter<E: de::Error>(&mut self) -> Result<u32, E> {
        self.path.push_str(&self.segment);
        self.path_ends.push(self.path.len());
        let segments = self.path_ends.len();
        if segments > MAX_PATH_SEGMENTS {
            return Err(self.fail(JsonErrorKind::TooDeep { segments, limit: MAX_PATH_SEGMENTS }));
        }
        let parent = self.levels.last().copied().unwrap_or(names::ROOT);
        Ok(self.names.intern(parent, &self.segment))
    }

    pub(super) fn leave(&mut self) {
        self.path_ends.pop();
        self.path.truncate(self.path_ends.last().copied().unwrap_or(0));
    }

    /// Releases the paths the last entity claimed, and forgets its raw keys.
    pub(crate) fn release_claims(&mut self) {
        for node in self.claimed.drain(..) {
            self.names.unclaim(node);
        }
        self.raw.clear();
    }

    /// The raw key the member just read names: an entity's top-level member `#` and 8 hex
    /// digits, as [`Key`]'s `FromStr` reads one. Deeper, such a member is a name.
    pub(super) fn raw_member(&self) -> Option<Key> {
        if self.levels.is_empty() && self.links.sugar.is_none() {
            crate::key::raw_label(&self.segment)
        } else {
            None
        }
    }

    /// A path (at `node`, named, claimed by this entity) whose key this entity set as a raw
    /// key: the collision of two members holding one key.
    fn raw_collision<E: de::Error>(&mut self, node: u32) -> Result<(), E> {
        if self.raw.is_empty() || !self.names.is_named(node) {
            return Ok(());
        }
        let key = self.names.key(node);
        if !self.raw.contains(&key) {
            return Ok(());
        }
        let (first, second) = (key.to_string(), self.names.dotted(node));
        Err(self.fail(JsonErrorKind::KeyCollision { first, second, key }))
    }

    /// Enters the top-level member `self.segment`, a raw key: on the path for errors, not in
    /// the names.
    pub(super) fn enter_raw(&mut self) {
        self.path.push_str(&self.segment);
        self.path_ends.push(self.path.len());
    }

    /// Refuses what the current member, a raw key, holds: an object, or an array of other
    /// things than numbers (in strict and lenient imports alike: a lenient import would make
    /// members of them, which a raw key has none of).
    pub(super) fn refuse_raw<E: de::Error>(&mut self, object: bool) -> E {
        let member = self.path.clone();
        self.fail(JsonErrorKind::RawKeyNotAValue { member, object })
    }

    /// Sets the raw `key` (the current member, `#xxxxxxxx`) in `blob`, unnamed. The same raw
    /// key twice is a member set twice; a path of this entity with that key is a collision.
    /// A key the store names is that named key.
    pub(super) fn set_raw<E: de::Error>(
        &mut self,
        blob: &mut Builder,
        key: Key,
        value: Value<'_>,
    ) -> Result<(), E> {
        if let Some(node) = self.names.named(key)
            && self.names.is_claimed(node)
        {
            let (first, second) = (self.names.dotted(node), self.path.clone());
            return Err(self.fail(JsonErrorKind::KeyCollision { first, second, key }));
        }
        if !self.raw.insert(key) {
            return Err(self.fail(JsonErrorKind::DuplicatePath(self.path.clone())));
        }
        // No path of the entity holds the key (checked above, and `set` checks the paths
        // after), and no raw member before: the blob does not hold it yet.
        blob.push(key, value).map_err(|e| self.fail(JsonErrorKind::Blob(e)))
    }

    /// Claims `node` (the current path) for a value or an object of this entity: a path
    /// claimed before in this entity is set twice.
    fn claim<E: de::Error>(&mut self, node: u32) -> Result<(), E> {
        if self.names.claim(node) {
            self.claimed.push(node);
            return Ok(());
        }
        let path = self.names.dotted(node);
        Err(self.fail(JsonErrorKind::DuplicatePath(path)))
    }

    /// Claims `node` (the current path) for a value of this entity, names its key, and
    /// returns the key: a key named by another path (in this entity, or in the store) is a
    /// collision, as is a raw key of this entity.
    pub(super) fn name_claimed<E: de::Error>(&mut self, node: u32) -> Result<Key, E> {
        self.claim(node)?;
        let key = match self.names.name(node) {
            Ok(key) => key,
            Err(other) => {
                let key = self.names.key(node);
                let (first, second) = self.names.collision_paths(other, node);
                return Err(self.fail(JsonErrorKind::KeyCollision { first, second, key }));
            }
        };
        self.raw_collision(node)?;
        Ok(key)
    }

    /// Opens the object at `node` (the current path): later members are its children.
    pub(super) fn open_object<E: de::Error>(&mut self, node: u32) -> Result<(), E> {
        // The objects of `$relative` and `$proportional` are the entity's own (`stats` of
        // `stats.health`), opened again: only their numbers claim a path.
        if self.links.sugar.is_none() {
            self.claim(node)?;
        }
        // A raw key the store names by this path: a value and an object at one path.
        self.raw_collision(node)
    }

    /// Sets `node` (the current path) in `blob`, as the name of its key. A key named by
    /// another path (in this entity, or in the store) is a collision: the blob holds one
    /// value a key.
    pub(super) fn set<E: de::Error>(
        &mut self,
        blob: &mut Builder,
        node: u32,
        value: Value<'_>,
    ) -> Result<(), E> {
        let key = self.name_claimed(node)?;
        self.sugar(key, value)?;
        // A key no other path of the entity holds, and this path is claimed once: the blob
        // does not hold it yet.
        blob.push(key, value).map_err(|e| self.fail(JsonErrorKind::Blob(e)))
    }

    /// The `f32` a number read as an `f64` is stored as (see [`crate::number`]).
    pub(super) fn float<E: de::Error>(&mut self, n: f64) -> Result<f32, E> {
        // serde_json reads a nonzero number past f64's precision as zero: such a zero sends
        // the import to look for one in the text (see `read_with_extremes`).
        self.saw_zero |= n == 0.0;
        match number::fit_f64(n) {
            Fit::Holds(x) => Ok(x),
            Fit::LosesDigits(x) => self.lost_digits(n, x),
            Fit::Changes(x) => self.changed(x, || JsonF64(n).to_string()),
            Fit::OutOfRange if self.lenient => {
                self.changed(f32::MAX.copysign(n as f32), String::new)
            }
            Fit::OutOfRange => Err(self.fail(JsonErrorKind::NumberOutOfRange(n))),
        }
    }

    /// The `f32` an integer is stored as.
    pub(super) fn integer<E: de::Error>(&mut self, n: i128) -> Result<f32, E> {
        match number::fit_integer(n) {
            // (An integer is whole: it never loses digits without changing.)
            Fit::Holds(x) | Fit::LosesDigits(x) => Ok(x),
            Fit::Changes(x) => self.changed(x, || n.to_string()),
            // No 64-bit integer is past f32's range; the float rule would say so if one were.
            #[allow(clippy::cast_precision_loss)]
            Fit::OutOfRange => self.float(n as f64),
        }
    }

    /// A number stored as `x`, which is not what was written (`written`): refused, or counted
    /// by a lenient import.
    fn changed<E: de::Error>(
        &mut self,
        x: f32,
        written: impl FnOnce() -> String,
    ) -> Result<f32, E> {
        if !self.lenient {
            return Err(self.fail(JsonErrorKind::NotHeld { number: written(), becomes: x }));
        }
        self.report.rounded_numbers += 1;
        if self.report.first_rounded.is_none() {
            self.report.first_rounded = Some(self.pointer());
        }
        Ok(x)
    }

    /// A fraction stored as `x`, which is written back as another decimal than `n`: refused
    /// with exact numbers, else counted, with the first one's path and an example.
    #[cold]
    fn lost_digits<E: de::Error>(&mut self, n: f64, x: f32) -> Result<f32, E> {
        // The shortest form of the f64 read: the text as written, for up to 17 digits.
        let number = || serde_json::to_string(&n).unwrap_or_default();
        if self.exact {
            return Err(self.fail(JsonErrorKind::LosesDigits { number: number(), becomes: x }));
        }
        self.report.lost_digits += 1;
        if self.report.first_lost_digits.is_none() {
            self.report.lost_digits_example = Some(format!("{} -> {}", number(), JsonF32(x)));
            self.report.first_lost_digits = Some(self.pointer());
        }
        Ok(x)
    }

    /// Counts an array of other things than numbers, turned into an object keyed by index at
    /// the current path.
    pub(super) fn converted_array(&mut self) {
        self.report.converted_arrays += 1;
        if self.report.first_converted.is_none() {
            self.report.first_converted = Some(self.pointer());
        }
    }

    /// Counts an empty object at the current path, left out.
    pub(super) fn empty_object(&mut self) {
        self.report.empty_objects += 1;
        if self.report.first_empty_object.is_none() {
            self.report.first_empty_object = Some(self.pointer());
        }
    }

    /// The reserved member the member just read is, if it is one: at an entity's top level
    /// only (deeper, `$id` is a name like any other).
    pub(super) fn reserved_member(&self) -> Option<Reserved> {
        if self.levels.is_empty() && self.links.sugar.is_none() {
            Reserved::of(&self.segment)
        } else {
            None
        }
    }

    /// Records a number of `$relative` or `$proportional` for `key`, set as given: the
    /// number the sugar resolves to replaces it once the prototype is known. Anything but a
    /// number is refused.
    pub(super) fn sugar<E: de::Error>(&mut self, key: Key, value: Value<'_>) -> Result<(), E> {
        let Some(op) = self.links.sugar else { return Ok(()) };
        let Value::Float(operand) = value else {
            let member =
                if op == Op::Relative { Reserved::Relative } else { Reserved::Proportional };
            return Err(self.fail(JsonErrorKind::Reserved {
                member: member.name(),
                expected: member.expected(),
            }));
        };
        if let Some(kind) = self.links.fails_at(Point::Sugar(key)) {
            return Err(self.fail(kind));
        }
        let entity = self.links.entity;
        self.links.sugars.push(Sugar { entity, key, op, operand });
        Ok(())
    }

    /// Enters the member named by decimal `index` of the array at `node`: a lenient array of
    /// other things than numbers holds its elements as members keyed by index.
    pub(super) fn enter_index<E: de::Error>(&mut self, node: u32, index: usize) -> Result<u32, E> {
        self.segment.clear();
        let _ = write!(self.segment, "{index}");
        self.levels.push(node);
        self.enter()
    }

    pub(super) fn leave_index(&mut self) {
        self.leave();
        self.levels.pop();
    }
}
