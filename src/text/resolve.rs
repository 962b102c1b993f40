//! A document's prototype links, resolved once it has been read whole, before anything
//! reaches the store: names to entities (of the document or the store), cycles and chains past
//! the limit refused, and the numbers of `$relative` and `$proportional` set to what they give.
//!
//! An error found here (an unknown name, a second `$id`, a cycle, a chain past the limit, a
//! number the prototype does not hold) names an entity and a member: the store import reads
//! the document again with the importer told to stop there ([`Links::fail_at`]), so that the
//! reader places it, line and column, as it places any other error. Only a failing import
//! reads twice.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::PoisonError;

use crate::blob::bulk::{self, Finder};
use crate::handle_map::Id;
use crate::key::Key;
use crate::store::{MAX_CHAIN, Store};
use crate::value::Value;

use super::error::JsonErrorKind;

use super::importer::Staging;
use super::link::{Links, Op, Point, Reserved, Sugar, op_member};
use crate::store::proto::ID_KEY;

/// Runs `read` with the index of `store`'s `$id`s ([`IdIndex`](super::id_index::IdIndex)), made anew (O(entities))
/// unless the kept one was made at the store's current count of writes.
fn with_id_index<R>(store: &Store, read: impl FnOnce(&HashMap<String, Id>) -> R) -> R {
    let writes = store.tracker().writes();
    let mut kept = store.id_index().0.lock().unwrap_or_else(PoisonError::into_inner);
    let index = match &mut *kept {
        Some((at, index)) if *at == writes => index,
        stale => {
            let mut index = HashMap::new();
            for (id, blob) in store.iter() {
                if let Some(name) = blob.get_str(ID_KEY) {
                    index.entry(name.to_owned()).or_insert(id);
                }
            }
            &mut stale.insert((writes, index)).1
        }
    };
    read(index)
}

/// After an import that took `store` from `before` writes to its count now and added `ids`:
/// the kept [`IdIndex`](super::id_index::IdIndex), if it was made at `before`, gains their `$id`s (O(their number)) and
/// stays valid; else it is dropped.
pub(crate) fn imported(store: &Store, before: u64, ids: &[Id]) {
    let mut kept = store.id_index().0.lock().unwrap_or_else(PoisonError::into_inner);
    let Some((at, index)) = &mut *kept else { return };
    if *at != before {
        *kept = None;
        return;
    }
    for &id in ids {
        if let Some(name) = store.get(id).and_then(|blob| blob.get_str(ID_KEY)) {
            index.entry(name.to_owned()).or_insert(id);
        }
    }
    *at = store.tracker().writes();
}

/// The store's limit on prototypes above an entity.
const CHAIN_LIMIT: usize = MAX_CHAIN;

/// Where an entity's prototype is: an entity of the document (by position), or of the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    Document(u32),
    Store(Id),
}

/// The links of a document, resolved: each instance (by position) and its prototype, bases
/// before their instances.
#[derive(Default)]
pub(crate) struct LinkPlan {
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
) -> Result<LinkPlan, Unresolved> {
    if links.is_empty() && links.sugars.is_empty() && links.removed.is_empty() {
        return Ok(LinkPlan::default());
    }
    let count = staging.spans.len();
    // Every name: the store's (kept across imports: `IdIndex`; a document's $id may not take
    // one of them), then the document's.
    let parent = with_id_index(store, |in_store| {
        let mut named: HashMap<&str, u32> = HashMap::new();
        for (entity, range) in &links.ids {
            let name = &links.text[range.clone()];
            let first = match (in_store.get(name), named.entry(name)) {
                (Some(id), _) => format!("entity {id}"),
                (None, Entry::Occupied(first)) => format!("/{}", first.get()),
                (None, Entry::Vacant(slot)) => {
                    slot.insert(*entity);
                    continue;
                }
            };
            let kind = JsonErrorKind::DuplicateId { id: name.to_owned(), first };
            return Err((*entity, Point::Id, kind));
        }
        let mut parent: Vec<Option<Target>> = vec![None; count];
        for (entity, range) in &links.prototypes {
            let name = &links.text[range.clone()];
            let target = match (named.get(name), in_store.get(name)) {
                (Some(&e), _) => Target::Document(e),
                (None, Some(&id)) => Target::Store(id),
                (None, None) => {
                    let kind = JsonErrorKind::UnknownPrototype { name: name.to_owned() };
                    return Err((*entity, Point::Prototype, kind));
                }
            };
            parent[*entity as usize] = Some(target);
        }
        Ok(parent)
    })?;
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
    Ok(LinkPlan { links })
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
    let mut finders = Finders::default();
    let arena = &staging.arena;
    for sugar in order {
        let base = inherited(store, (arena, &starts), parent, &resolved, &mut finders, sugar);
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
    drop(finders);
    // Each entity's numbers set in one pass (one index of its keys), in place: each key holds
    // a float already (the number as given).
    let mut sets: Vec<(u32, Key, f32)> =
        resolved.into_iter().map(|((e, k), x)| (e, k, x)).collect();
    sets.sort_unstable_by_key(|&(e, k, _)| (e, k.raw()));
    for same in sets.chunk_by(|a, b| a.0 == b.0) {
        let e = same[0].0 as usize;
        let words = &mut staging.arena[starts[e]..starts[e + 1]];
        bulk::set_all(words, same.iter().map(|&(_, key, x)| (key, Value::Float(x))));
    }
    Ok(())
}

/// The blobs the sugar reads, each with an index of its keys made when it is first read: a
/// number finds its key in O(log n), however many numbers read one large blob.
#[derive(Default)]
struct Finders<'a> {
    staged: HashMap<u32, Finder<'a>>,
    stored: HashMap<Id, Finder<'a>>,
}

/// What the prototype of `sugar`'s entity holds at its key, read up the chain: the document's
/// entities as staged (`arena` from each one's start; with their sugar as resolved so far),
/// then the store's, a tombstone ending the lookup.
fn inherited<'a>(
    store: &'a Store,
    (arena, starts): (&'a [u32], &[usize]),
    parent: &[Option<Target>],
    resolved: &HashMap<(u32, Key), f32>,
    finders: &mut Finders<'a>,
    sugar: &Sugar,
) -> Option<Value<'a>> {
    let key = sugar.key;
    let mut at = parent[sugar.entity as usize]?;
    // The document's entities, then the store's: at most the limit's prototypes in all.
    for _ in 0..=CHAIN_LIMIT {
        let found = match at {
            Target::Document(e) => {
                if let Some(&x) = resolved.get(&(e, key)) {
                    return Some(Value::Float(x));
                }
                let (from, to) = (starts[e as usize], starts[e as usize + 1]);
                let finder =
                    finders.staged.entry(e).or_insert_with(|| Finder::new(&arena[from..to]));
                finder.get(key)
            }
            Target::Store(id) => {
                let finder = match finders.stored.entry(id) {
                    Entry::Occupied(found) => found.into_mut(),
                    Entry::Vacant(slot) => slot.insert(Finder::new(store.get(id)?.as_words())),
                };
                finder.get(key)
            }
        };
        match found {
            Some(value) if value.is_tombstone() => return None,
            Some(value) => return Some(value),
            None => {}
        }
        at = match at {
            Target::Document(e) => parent[e as usize]?,
            Target::Store(id) => Target::Store(store.prototype(id)?),
        };
    }
    None
}
