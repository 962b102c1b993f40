//! Prototypes in the text formats: the reserved members an entity's top level may hold
//! (`$id`, `$prototype`, `$abstract`, `$remove`, `$relative`, `$proportional`), read as the
//! document is, and the links between a document's entities, resolved once it has been read
//! whole (so an instance may come before its base), before anything reaches the store.
//!
//! An error found after the read (an unknown name, a second `$id`, a cycle, a chain past the
//! limit, a number the prototype does not hold) is placed by reading the document again with
//! the importer told to stop at that member ([`Links::fail_at`]): the reader then reports its
//! line and column as it reports any other error. Only a failing import reads twice.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fmt;
use std::ops::Range;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::blob::bulk::{self, Builder, Finder};
use crate::handle_map::Id;
use crate::key::{Key, KeyPath, MAX_PATH_SEGMENTS};
use crate::names;
use crate::store::{MAX_CHAIN, Store};
use crate::value::Value;

use super::error::JsonErrorKind;
use super::importer::{Importer, Staging};

/// The key an entity's stable name is stored at: `$id`, a string.
pub const ID_KEY: Key = Key::new("$id");
/// The key that marks an abstract base: `$abstract`, `true`.
pub const ABSTRACT_KEY: Key = Key::new("$abstract");

/// The store's limit on prototypes above an entity.
const CHAIN_LIMIT: usize = MAX_CHAIN;

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
    const fn expected(self) -> &'static str {
        match self {
            Reserved::Id => "a non-empty string, the entity's stable name",
            Reserved::Prototype => "a string, the $id of the entity's prototype",
            Reserved::Abstract => "true or false",
            Reserved::Remove => "an array of key paths (strings)",
            Reserved::Relative | Reserved::Proportional => "an object of numbers",
        }
    }

    /// Whether the member needs a store import (a blob has no prototype).
    const fn needs_store(self) -> bool {
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
struct Sugar {
    entity: u32,
    key: Key,
    op: Op,
    operand: f32,
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
    text: String,
    /// The entities with a `$id`, in document order, and their names in `text`.
    ids: Vec<(u32, Range<usize>)>,
    /// The entities with a `$prototype`, in document order, and the names in `text`.
    prototypes: Vec<(u32, Range<usize>)>,
    /// The keys each entity's `$remove` names, in document order.
    removed: Vec<(u32, Key)>,
    sugars: Vec<Sugar>,
}

impl Links {
    /// Whether the document used a prototype member that needs resolving.
    pub(crate) fn is_empty(&self) -> bool {
        self.ids.is_empty() && self.prototypes.is_empty()
    }

    fn record(&mut self, name: &str) -> Range<usize> {
        let start = self.text.len();
        self.text.push_str(name);
        start..self.text.len()
    }

    /// The error to stop at `point` with, on the second read.
    fn fails_at(&self, point: Point) -> Option<JsonErrorKind> {
        match &self.fail_at {
            Some((entity, at, kind)) if *entity == self.entity && *at == point => {
                Some(kind.clone())
            }
            _ => None,
        }
    }
}

impl Importer {
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
}

/// Reads the value of the reserved member `reserved` (the member just read) into `blob`.
pub(super) fn read_reserved<'de, A: MapAccess<'de>>(
    importer: &mut Importer,
    blob: &mut Builder,
    reserved: Reserved,
    map: &mut A,
) -> Result<(), A::Error> {
    if reserved.needs_store() && !importer.links.store {
        return Err(importer.fail(JsonErrorKind::NeedsStore { member: reserved.name() }));
    }
    // `$id` and `$abstract` are keys of the entity; the others are not.
    let node = match reserved {
        Reserved::Id | Reserved::Abstract => importer.enter()?,
        _ => {
            importer.enter_raw();
            names::ROOT
        }
    };
    // (The caller leaves the member.)
    map.next_value_seed(ReservedValue { importer, blob, reserved, node })
}

/// The value of a reserved member.
struct ReservedValue<'i> {
    importer: &'i mut Importer,
    blob: &'i mut Builder,
    reserved: Reserved,
    /// The name-tree node of `$id` or `$abstract`.
    node: u32,
}

impl ReservedValue<'_> {
    fn refuse<E: de::Error>(self) -> E {
        let (member, expected) = (self.reserved.name(), self.reserved.expected());
        self.importer.fail(JsonErrorKind::Reserved { member, expected })
    }
}

impl<'de> DeserializeSeed<'de> for ReservedValue<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ReservedValue<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.reserved.expected())
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        let links = &mut self.importer.links;
        match self.reserved {
            Reserved::Id if !s.is_empty() => {
                if let Some(kind) = links.fails_at(Point::Id) {
                    return Err(self.importer.fail(kind));
                }
                let name = links.record(s);
                links.ids.push((links.entity, name));
                self.importer.set(self.blob, self.node, Value::Str(s))
            }
            Reserved::Prototype => {
                if let Some(kind) = links.fails_at(Point::Prototype) {
                    return Err(self.importer.fail(kind));
                }
                let name = links.record(s);
                links.prototypes.push((links.entity, name));
                Ok(())
            }
            _ => Err(self.refuse()),
        }
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<(), E> {
        match self.reserved {
            Reserved::Abstract => self.importer.set(self.blob, self.node, Value::Bool(b)),
            _ => Err(self.refuse()),
        }
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Err(self.refuse())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Err(self.refuse())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Err(self.refuse())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Err(self.refuse())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        if self.reserved != Reserved::Remove {
            return Err(self.refuse());
        }
        let mut index = 0;
        loop {
            self.importer.element = Some(index);
            let seed = Removed { importer: &mut *self.importer, blob: &mut *self.blob };
            if seq.next_element_seed(seed)?.is_none() {
                break;
            }
            index += 1;
        }
        self.importer.element = None;
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        let op = match self.reserved {
            Reserved::Relative => Op::Relative,
            Reserved::Proportional => Op::Proportional,
            _ => return Err(self.refuse()),
        };
        // Its members are the entity's keys (`stats.health`, not `$relative.stats.health`):
        // read at the top level, with the sugar recorded as each number is set.
        self.importer.links.sugar = Some(op);
        let read = super::entity::read_members(self.importer, self.blob, map);
        self.importer.links.sugar = None;
        read.map(drop)
    }
}

/// A key path named by `$remove`: the key is removed from what the entity inherits (a
/// tombstone).
struct Removed<'i> {
    importer: &'i mut Importer,
    blob: &'i mut Builder,
}

impl<'de> DeserializeSeed<'de> for Removed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Removed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key path")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        let importer = self.importer;
        let key = if let Some(key) = crate::key::raw_label(s) {
            // A key without a name, as export writes one.
            if !importer.raw.insert(key) {
                return Err(importer.fail(JsonErrorKind::DuplicatePath(s.to_owned())));
            }
            key
        } else {
            let path = KeyPath::pointer(s).unwrap_or_else(|| KeyPath::dotted(s));
            let mut node = names::ROOT;
            for (depth, segment) in path.segments().enumerate() {
                if depth == MAX_PATH_SEGMENTS {
                    let segments = path.segments().count();
                    let kind = JsonErrorKind::TooDeep { segments, limit: MAX_PATH_SEGMENTS };
                    return Err(importer.fail(kind));
                }
                node = importer.names.intern(node, &segment);
            }
            importer.name_claimed(node)?
        };
        let links = &mut importer.links;
        if let Some(kind) = links.fails_at(Point::Remove(key)) {
            return Err(importer.fail(kind));
        }
        links.removed.push((links.entity, key));
        push_tombstone(self.blob, key).map_err(|e| importer.fail(JsonErrorKind::Blob(e)))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Err(self.refuse())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Err(self.refuse())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Err(self.refuse())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Err(self.refuse())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Err(self.refuse())
    }

    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        Err(self.refuse())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        Err(self.refuse())
    }
}

impl Removed<'_> {
    fn refuse<E: de::Error>(self) -> E {
        let (member, expected) = (Reserved::Remove.name(), Reserved::Remove.expected());
        self.importer.fail(JsonErrorKind::Reserved { member, expected })
    }
}

/// Pushes a tombstone for `key`: the key is absent here, whatever the prototype holds.
fn push_tombstone(blob: &mut Builder, key: Key) -> Result<(), crate::blob::BlobError> {
    blob.push(key, Value::Tombstone)
}

/// Where an entity's prototype is: an entity of the document (by position), or of the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    Document(u32),
    Store(Id),
}

/// The links of a document, resolved: each instance (by position) and its prototype, bases
/// before their instances.
#[derive(Default)]
pub(crate) struct Resolved {
    pub(crate) links: Vec<(u32, Target)>,
}

/// Why a document's links do not hold: the entity, the member to place the error at, and the
/// error.
pub(crate) type Unresolved = (u32, Point, JsonErrorKind);

/// Resolves the links of the entities staged in `staging` (recorded in `links`) against each
/// other and against the entities of `store` that have a `$id`, and sets each number of
/// `$relative` and `$proportional` in the staged entities to what it resolves to. Nothing of
/// the store changes. O(n) in the document's entities and the store's (hash maps), plus
/// [`CHAIN_LIMIT`] steps a number of sugar.
pub(crate) fn resolve(
    store: &Store,
    staging: &mut Staging,
    links: &Links,
) -> Result<Resolved, Unresolved> {
    if links.is_empty() && links.sugars.is_empty() && links.removed.is_empty() {
        return Ok(Resolved::default());
    }
    let count = staging.spans.len();
    // Every name: the store's first (a document's $id may not take one of them), then the
    // document's.
    let mut named: HashMap<&str, Target> = HashMap::new();
    for (id, blob) in store.iter() {
        if let Some(name) = blob.get_str(ID_KEY) {
            named.entry(name).or_insert(Target::Store(id));
        }
    }
    for (entity, range) in &links.ids {
        let name = &links.text[range.clone()];
        match named.entry(name) {
            Entry::Vacant(slot) => {
                slot.insert(Target::Document(*entity));
            }
            Entry::Occupied(first) => {
                let first = match *first.get() {
                    Target::Document(e) => format!("/{e}"),
                    Target::Store(id) => format!("entity {id}"),
                };
                let kind = JsonErrorKind::DuplicateId { id: name.to_owned(), first };
                return Err((*entity, Point::Id, kind));
            }
        }
    }
    let mut parent: Vec<Option<Target>> = vec![None; count];
    for (entity, range) in &links.prototypes {
        let name = &links.text[range.clone()];
        let Some(&target) = named.get(name) else {
            let kind = JsonErrorKind::UnknownPrototype { name: name.to_owned() };
            return Err((*entity, Point::Prototype, kind));
        };
        parent[*entity as usize] = Some(target);
    }
    let depth = depths(store, &parent, links)?;
    // The sugar and `$remove` read or hide what a prototype holds: an entity needs one.
    let orphan = |e: u32| parent[e as usize].is_none();
    if let Some(sugar) = links.sugars.iter().find(|s| orphan(s.entity)) {
        let kind = JsonErrorKind::NeedsStore { member: op_member(sugar.op) };
        return Err((sugar.entity, Point::Sugar(sugar.key), kind));
    }
    if let Some(&(entity, key)) = links.removed.iter().find(|(e, _)| orphan(*e)) {
        let kind = JsonErrorKind::NeedsStore { member: Reserved::Remove.name() };
        return Err((entity, Point::Remove(key), kind));
    }
    // Bases before their instances: depth order (a counting sort: depths are at most the
    // limit).
    let mut order: Vec<u32> = Vec::with_capacity(links.prototypes.len());
    for level in 1..=CHAIN_LIMIT as u32 {
        order.extend(
            links.prototypes.iter().map(|(e, _)| *e).filter(|&e| depth[e as usize] == level),
        );
    }
    resolve_sugar(store, staging, links, &parent, &depth)?;
    let links = order.into_iter().filter_map(|e| parent[e as usize].map(|t| (e, t))).collect();
    Ok(Resolved { links })
}

fn op_member(op: Op) -> &'static str {
    match op {
        Op::Relative => Reserved::Relative.name(),
        Op::Proportional => Reserved::Proportional.name(),
    }
}

/// How many prototypes each entity of the document has above it (0 without one), or the
/// first cycle or chain past [`CHAIN_LIMIT`]. Each entity is walked once (an explicit stack,
/// no recursion): O(n), plus the chain above each store entity met.
fn depths(store: &Store, parent: &[Option<Target>], links: &Links) -> Result<Vec<u32>, Unresolved> {
    const UNSEEN: u32 = u32::MAX;
    const ON_STACK: u32 = u32::MAX - 1;
    let mut depth = vec![UNSEEN; parent.len()];
    let mut stack: Vec<u32> = Vec::new();
    for start in 0..parent.len() as u32 {
        if depth[start as usize] != UNSEEN {
            continue;
        }
        let mut at = start;
        // Up to an entity whose depth is known, a store entity, or one without a prototype.
        let mut above = loop {
            depth[at as usize] = ON_STACK;
            stack.push(at);
            match parent[at as usize] {
                None => break None,
                Some(Target::Store(id)) => break Some(store_depth(store, id) + 1),
                Some(Target::Document(p)) => match depth[p as usize] {
                    UNSEEN => at = p,
                    ON_STACK => {
                        // The chain comes back to `p`: a cycle, placed at `p`'s $prototype.
                        let len = stack.iter().rev().position(|&e| e == p).map_or(0, |i| i + 1);
                        let name = name_of(links, p);
                        let kind = JsonErrorKind::PrototypeCycle { id: name, len };
                        return Err((p, Point::Prototype, kind));
                    }
                    d => break Some(d + 1),
                },
            }
        };
        while let Some(e) = stack.pop() {
            let d = above.unwrap_or(0);
            if d as usize > CHAIN_LIMIT {
                let kind = JsonErrorKind::ChainTooLong { len: d as usize, limit: CHAIN_LIMIT };
                return Err((e, Point::Prototype, kind));
            }
            depth[e as usize] = d;
            above = Some(d + 1);
        }
    }
    Ok(depth)
}

/// Prototypes above the store's entity `id`.
fn store_depth(store: &Store, id: Id) -> u32 {
    let mut depth = 0;
    let mut at = id;
    // The store keeps its chains within the limit; the bound guards the loop all the same.
    while let Some(next) = store.prototype(at) {
        depth += 1;
        at = next;
        if depth as usize > CHAIN_LIMIT {
            break;
        }
    }
    depth
}

/// The `$id` of the document's entity `e`, or its position.
fn name_of(links: &Links, e: u32) -> String {
    links
        .ids
        .binary_search_by_key(&e, |(entity, _)| *entity)
        .map_or_else(|_| format!("/{e}"), |i| links.text[links.ids[i].1.clone()].to_owned())
}

/// Sets each number of `$relative` and `$proportional` in the staged entities to the
/// prototype's value plus it, or times it: bases first, so a base's own sugar is resolved
/// before its instances read it.
fn resolve_sugar(
    store: &Store,
    staging: &mut Staging,
    links: &Links,
    parent: &[Option<Target>],
    depth: &[u32],
) -> Result<(), Unresolved> {
    if links.sugars.is_empty() {
        return Ok(());
    }
    let mut starts = Vec::with_capacity(staging.spans.len() + 1);
    let mut at = 0usize;
    for &len in &staging.spans {
        starts.push(at);
        at += len as usize;
    }
    starts.push(at);
    let mut order: Vec<&Sugar> = links.sugars.iter().collect();
    order.sort_by_key(|s| depth[s.entity as usize]);
    let mut resolved: HashMap<(u32, Key), f32> = HashMap::with_capacity(order.len());
    for sugar in order {
        let base = inherited(store, staging, &starts, parent, &resolved, sugar);
        let value = match (base, sugar.op) {
            (Some(Value::Float(x)), Op::Relative) => x + sugar.operand,
            (Some(Value::Float(x)), Op::Proportional) => x * sugar.operand,
            (found, op) => {
                let kind = JsonErrorKind::NoBaseNumber {
                    member: op_member(op),
                    found: found.map(|v| v.value_type()),
                };
                return Err((sugar.entity, Point::Sugar(sugar.key), kind));
            }
        };
        if !value.is_finite() {
            let kind = JsonErrorKind::NumberOutOfRange(f64::from(value));
            return Err((sugar.entity, Point::Sugar(sugar.key), kind));
        }
        resolved.insert((sugar.entity, sugar.key), value);
    }
    for (&(entity, key), &value) in &resolved {
        let e = entity as usize;
        let words = &mut staging.arena[starts[e]..starts[e + 1]];
        // The key holds a float (the number as given): overwritten in place.
        bulk::set_all(words, [(key, Value::Float(value))]);
    }
    Ok(())
}

/// What the prototype of `sugar`'s entity holds at its key, read up the chain: the document's
/// entities as staged (with their sugar as resolved so far), the store's as resolved.
fn inherited<'a>(
    store: &'a Store,
    staging: &'a Staging,
    starts: &[usize],
    parent: &[Option<Target>],
    resolved: &HashMap<(u32, Key), f32>,
    sugar: &Sugar,
) -> Option<Value<'a>> {
    let mut at = parent[sugar.entity as usize];
    for _ in 0..=CHAIN_LIMIT {
        match at? {
            Target::Store(id) => return store_resolved(store, id, sugar.key),
            Target::Document(e) => {
                if let Some(&x) = resolved.get(&(e, sugar.key)) {
                    return Some(Value::Float(x));
                }
                let words = &staging.arena[starts[e as usize]..starts[e as usize + 1]];
                match Finder::new(words).get(sugar.key) {
                    Some(value) if value.is_tombstone() => return None,
                    Some(value) => return Some(value),
                    None => at = parent[e as usize],
                }
            }
        }
    }
    None
}

/// What the store's entity `id` holds at `key`, through its prototypes.
fn store_resolved(store: &Store, id: Id, key: Key) -> Option<Value<'_>> {
    store.resolved(id)?.get(key)
}
