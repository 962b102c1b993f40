//! The importer's serde seeds: an entity, its members, raw-key members, array elements and
//! numbers. Each visitor writes what it is given straight into the blob being built, through
//! the importer's rules (`importer.rs`).

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::blob::bulk::Builder;
use crate::key::{Key, KeyPath, MAX_PATH_SEGMENTS};
use crate::names;
use crate::value::Value;

use super::error::JsonErrorKind;
use super::importer::{Importer, Staging};
use super::link::{Op, Point, Reserved};

impl Staging {
    /// Reads one entity's members and stages its blob.
    fn entity<'de, A: MapAccess<'de>>(
        &mut self,
        importer: &mut Importer,
        map: A,
    ) -> Result<(), A::Error> {
        self.blob.clear();
        importer.release_claims();
        importer.links.entity = self.spans.len() as u32;
        read_members(importer, &mut self.blob, map)?;
        // Laid out straight into the staged arena, with no free space.
        let used = self.blob.byte_len() / 4;
        let offset = self.arena.len();
        self.arena.resize(offset + used, 0);
        self.blob.write(&mut self.arena[offset..]);
        self.spans.push(used as u32);
        Ok(())
    }
}

/// One entity, which must be an object: the top level of `Blob::import`, or of a store
/// import (where it may also be an array of entities). The seed that a reader of JSON or SJSON
/// is given.
pub(crate) struct Entity<'i> {
    pub(crate) importer: &'i mut Importer,
    pub(crate) blob: &'i mut Builder,
    /// In a store import: stage the entity there instead of reading into `blob`.
    pub(crate) staging: Option<&'i mut Staging>,
}

impl<'de> DeserializeSeed<'de> for Entity<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Entity<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        match self.staging {
            Some(staging) => staging.entity(self.importer, map),
            None => read_members(self.importer, self.blob, map).map(drop),
        }
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Err(self.importer.fail(JsonErrorKind::NotAnObject))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Err(self.importer.fail(JsonErrorKind::NotAnObject))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Err(self.importer.fail(JsonErrorKind::NotAnObject))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Err(self.importer.fail(JsonErrorKind::NotAnObject))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Err(self.importer.fail(JsonErrorKind::NotAnObject))
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Err(self.importer.fail(JsonErrorKind::NotAnObject))
    }

    /// A store import's top level may be an array of entities; nothing else may be one.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Some(staging) = self.staging.filter(|_| self.importer.entity.is_none()) else {
            return Err(self.importer.fail(JsonErrorKind::NotAnObject));
        };
        loop {
            self.importer.entity = Some(staging.spans.len());
            let seed = Entity {
                importer: &mut *self.importer,
                blob: &mut *self.blob,
                staging: Some(&mut *staging),
            };
            if seq.next_element_seed(seed)?.is_none() {
                break;
            }
        }
        self.importer.entity = None;
        Ok(())
    }
}

/// Reads the members of an object into `blob`, under the importer's current path, and returns
/// how many it had.
pub(super) fn read_members<'de, A: MapAccess<'de>>(
    importer: &mut Importer,
    blob: &mut Builder,
    mut map: A,
) -> Result<usize, A::Error> {
    let mut members = 0;
    while map.next_key_seed(Segment { importer: &mut *importer })?.is_some() {
        if let Some(reserved) = importer.reserved_member() {
            read_reserved(importer, blob, reserved, &mut map)?;
        } else if let Some(key) = importer.raw_member() {
            importer.enter_raw();
            map.next_value_seed(RawMember { importer: &mut *importer, blob: &mut *blob, key })?;
        } else {
            let node = importer.enter()?;
            map.next_value_seed(Member { importer: &mut *importer, blob: &mut *blob, node })?;
        }
        importer.leave();
        members += 1;
    }
    Ok(members)
}

/// A member's name, copied into the importer's reusable buffer.
struct Segment<'i> {
    importer: &'i mut Importer,
}

impl<'de> DeserializeSeed<'de> for Segment<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Visitor<'_> for Segment<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<(), E> {
        self.importer.segment.clear();
        self.importer.segment.push_str(name);
        Ok(())
    }
}

/// A member's value, written into the blob at `key`.
struct Member<'i> {
    importer: &'i mut Importer,
    blob: &'i mut Builder,
    node: u32,
}

impl<'de> DeserializeSeed<'de> for Member<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Member<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a boolean, number, string, object or array of numbers")
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<(), E> {
        self.importer.set(self.blob, self.node, Value::Bool(b))
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<(), E> {
        let n = self.importer.float(n)?;
        self.importer.set(self.blob, self.node, Value::Float(n))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<(), E> {
        let n = self.importer.integer(n.into())?;
        self.importer.set(self.blob, self.node, Value::Float(n))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<(), E> {
        let n = self.importer.integer(n.into())?;
        self.importer.set(self.blob, self.node, Value::Float(n))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        self.importer.set(self.blob, self.node, Value::Str(s))
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        if !self.importer.lenient {
            return Err(self.importer.fail(JsonErrorKind::Null));
        }
        self.importer.set(self.blob, self.node, Value::Null)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        self.importer.open_object(self.node)?;
        self.importer.levels.push(self.node);
        let members = read_members(self.importer, self.blob, map)?;
        self.importer.levels.pop();
        if members == 0 {
            self.importer.empty_object();
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Member { importer, blob, node } = self;
        let mut floats = std::mem::take(&mut importer.floats);
        floats.clear();
        let mut converted = false;
        loop {
            let index = floats.len();
            importer.element = Some(index);
            let element = if importer.lenient {
                let seed = LenientElement {
                    importer: &mut *importer,
                    blob: &mut *blob,
                    node,
                    floats: &floats,
                };
                seq.next_element_seed(seed)?
            } else {
                seq.next_element_seed(Number { importer: &mut *importer })?.map(Element::Number)
            };
            importer.element = None;
            match element {
                Some(Element::Number(n)) => floats.push(n),
                Some(Element::Converted) => {
                    converted = true;
                    break;
                }
                None => break,
            }
        }
        let result = if converted {
            // The rest of the array, member by member at its index.
            importer.converted_array();
            let mut index = floats.len() + 1;
            loop {
                let member = importer.enter_index(node, index)?;
                let seed = Member { importer: &mut *importer, blob: &mut *blob, node: member };
                // On an error the element's path stays entered: the error names it.
                let read = seq.next_element_seed(seed)?;
                importer.leave_index();
                if read.is_none() {
                    break Ok(());
                }
                index += 1;
            }
        } else {
            importer.set(blob, node, Value::Floats(&floats))
        };
        importer.floats = floats;
        result
    }
}

/// The value of an entity's top-level member named as a raw key (`#0000002a`): one value, the
/// key's, unnamed.
struct RawMember<'i> {
    importer: &'i mut Importer,
    blob: &'i mut Builder,
    key: Key,
}

impl<'de> DeserializeSeed<'de> for RawMember<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for RawMember<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a boolean, number, string or array of numbers")
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<(), E> {
        self.importer.set_raw(self.blob, self.key, Value::Bool(b))
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<(), E> {
        let n = self.importer.float(n)?;
        self.importer.set_raw(self.blob, self.key, Value::Float(n))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<(), E> {
        let n = self.importer.integer(n.into())?;
        self.importer.set_raw(self.blob, self.key, Value::Float(n))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<(), E> {
        let n = self.importer.integer(n.into())?;
        self.importer.set_raw(self.blob, self.key, Value::Float(n))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        self.importer.set_raw(self.blob, self.key, Value::Str(s))
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        if !self.importer.lenient {
            return Err(self.importer.fail(JsonErrorKind::Null));
        }
        self.importer.set_raw(self.blob, self.key, Value::Null)
    }

    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        Err(self.importer.refuse_raw(true))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut floats = std::mem::take(&mut self.importer.floats);
        floats.clear();
        let result = loop {
            self.importer.element = Some(floats.len());
            match seq.next_element_seed(Number { importer: &mut *self.importer }) {
                Ok(Some(n)) => floats.push(n),
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        self.importer.element = None;
        let result = match result {
            Err(e)
                if matches!(
                    self.importer.failure,
                    Some(JsonErrorKind::NotANumber | JsonErrorKind::Null)
                ) =>
            {
                drop(e);
                Err(self.importer.refuse_raw(false))
            }
            Err(e) => Err(e),
            Ok(()) => self.importer.set_raw(self.blob, self.key, Value::Floats(&floats)),
        };
        self.importer.floats = floats;
        result
    }
}

/// What reading one element of a lenient array gave.
enum Element {
    /// A number, while every element so far was one.
    Number(f32),
    /// The first element that is not a number: the array is now an object keyed by index, and
    /// the numbers before it and this element are written as its members.
    Converted,
}

/// An element of an array read leniently.
struct LenientElement<'i> {
    importer: &'i mut Importer,
    blob: &'i mut Builder,
    /// The array's name-tree node.
    node: u32,
    /// The numbers read so far.
    floats: &'i [f32],
}

impl LenientElement<'_> {
    /// Writes the numbers read so far as members `0..`, then returns the member for this
    /// element.
    fn convert<E: de::Error>(&mut self) -> Result<Member<'_>, E> {
        // From here on the path names members by index, not elements.
        self.importer.element = None;
        self.importer.open_object(self.node)?;
        // Marked, so that export writes it back as an array.
        self.importer.names.set_array(self.node);
        for (index, &n) in self.floats.iter().enumerate() {
            let member = self.importer.enter_index(self.node, index)?;
            self.importer.set(self.blob, member, Value::Float(n))?;
            self.importer.leave_index();
        }
        let index = self.floats.len();
        let node = self.importer.enter_index(self.node, index)?;
        Ok(Member { importer: &mut *self.importer, blob: &mut *self.blob, node })
    }

    /// Reads this element as a member of the converted array.
    fn read_as_member<E: de::Error>(
        mut self,
        read: impl FnOnce(Member<'_>) -> Result<(), E>,
    ) -> Result<Element, E> {
        let member = self.convert()?;
        // On an error the element's path stays entered: the error names it.
        read(member)?;
        self.importer.leave_index();
        Ok(Element::Converted)
    }
}

impl<'de> DeserializeSeed<'de> for LenientElement<'_> {
    type Value = Element;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Element, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for LenientElement<'_> {
    type Value = Element;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array element")
    }

    // Numbers follow the one rule for array numbers, in `Number`.
    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Element, E> {
        Number { importer: self.importer }.visit_f64(n).map(Element::Number)
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Element, E> {
        Number { importer: self.importer }.visit_i64(n).map(Element::Number)
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Element, E> {
        Number { importer: self.importer }.visit_u64(n).map(Element::Number)
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Element, E> {
        self.read_as_member(|m| m.visit_bool(b))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Element, E> {
        self.read_as_member(|m| m.visit_str(s))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Element, E> {
        self.read_as_member(|m| m.visit_unit())
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Element, A::Error> {
        self.read_as_member(|m| m.visit_map(map))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Element, A::Error> {
        self.read_as_member(|m| m.visit_seq(seq))
    }
}

/// An array element, which must be a number.
struct Number<'i> {
    importer: &'i mut Importer,
}

impl<'de> DeserializeSeed<'de> for Number<'_> {
    type Value = f32;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<f32, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Number<'_> {
    type Value = f32;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number")
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<f32, E> {
        self.importer.float(n)
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<f32, E> {
        self.importer.integer(n.into())
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<f32, E> {
        self.importer.integer(n.into())
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<f32, E> {
        Err(self.importer.fail(JsonErrorKind::NotANumber))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<f32, E> {
        Err(self.importer.fail(JsonErrorKind::NotANumber))
    }

    fn visit_unit<E: de::Error>(self) -> Result<f32, E> {
        // The strict import's one word for null; elsewhere (a raw key's array, read
        // leniently too) an array of numbers holds no null.
        let kind =
            if self.importer.lenient { JsonErrorKind::NotANumber } else { JsonErrorKind::Null };
        Err(self.importer.fail(kind))
    }

    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<f32, A::Error> {
        Err(self.importer.fail(JsonErrorKind::NotANumber))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<f32, A::Error> {
        Err(self.importer.fail(JsonErrorKind::NotANumber))
    }
}

/// The visitor methods of numbers and `null`, refusing them (`self.refuse()`): what no
/// reserved member holds.
macro_rules! refuse_numbers_and_null {
    () => {
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
    };
}

/// Reads the value of the reserved member `reserved` (the member just read) into `blob`.
fn read_reserved<'de, A: MapAccess<'de>>(
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

    refuse_numbers_and_null!();

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
        let read = read_members(self.importer, self.blob, map);
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

    refuse_numbers_and_null!();

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
