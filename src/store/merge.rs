//! Three-way merges of whole stores: [`merge3`], the one merge `datacomp merge` and
//! `datacomp-pg`'s merging commit run.
//!
//! Entity by entity, by handle, from `ours` with the changes `theirs` made to `base`:
//!
//! - one theirs removed is removed (a removal beats a change); one ours removed stays removed;
//! - one both kept is merged key by key ([`Blob::merge3`]): what each entity stores, its
//!   overrides and tombstones, not what it reads through its prototypes;
//! - one theirs inserted is inserted under a new handle (ours may have given its handle to
//!   another entity), with its links to other inserted entities moved along;
//! - each entity's **prototype link** is merged three-way too: a link one side changed is
//!   taken, one both changed differently is a [`LinkConflict`] settled like a key conflict;
//! - a **path** one side made a value and the other an object (ours adds `stats`, theirs
//!   `stats.health`: each side's change merges, but no entity may hold both) is a
//!   [`PathConflict`], settled by `prefer`: every key of the clash takes the preferred side's
//!   state (its value, or its absence), so the preferred side's shape of the path stands and
//!   the other side's keys there are dropped. A merged entity is never one an import or a
//!   write would refuse.
//!
//! The links are checked whole before any is set: a merged link to an entity the merge
//! removes, a cycle or a chain past [`MAX_CHAIN`] is an error, and the merge returns nothing
//! (`ours`, `base` and `theirs` are only read).

use fxhash::{FxHashMap, FxHashSet};

use crate::blob::patch::{Conflict, Patch, Side};
use crate::blob::{Blob, BlobError, BlobRef};
use crate::error::Error;
use crate::format::StoreError;
use crate::handle_map::{HandleError, Id};
use crate::key::Key;
use crate::value::Value;
use zerocopy::little_endian::U32;

use super::Store;
#[cfg(doc)]
use super::proto::MAX_CHAIN;
use super::proto::{Links, check_dense};

/// A prototype link both sides of a [`merge3`] changed, differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkConflict {
    /// The entity (its handle in the merged store).
    pub id: Id,
    /// Its prototype in the base.
    pub base: Option<Id>,
    /// Its prototype in ours.
    pub ours: Option<Id>,
    /// Its prototype in theirs (as a handle of the merged store).
    pub theirs: Option<Id>,
}

/// A path both sides of a [`merge3`] gave different shapes: one made it a value (`stats`),
/// the other put a key under it (`stats.health`). The preferred side's keys stand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathConflict {
    /// The entity.
    pub id: Id,
    /// The key of the value (`stats`).
    pub value: Key,
    /// The key under it (`stats.health`); the first met, if there are more.
    pub under: Key,
}

/// What a [`merge3`] did, entity by entity, in the order it met them.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct MergeReport {
    /// Entities theirs removed, removed from the result.
    pub removed: Vec<Id>,
    /// Entities ours removed and theirs changed: they stay removed.
    pub stays_removed: Vec<Id>,
    /// Entities both kept whose blob theirs changed, merged key by key.
    pub merged: Vec<Id>,
    /// Entities theirs inserted: their handle in theirs, and in the result.
    pub inserted: Vec<(Id, Id)>,
    /// Keys both sides changed differently, with their entity; `prefer` settled each.
    pub conflicts: Vec<(Id, Conflict)>,
    /// Prototype links both sides changed differently; `prefer` settled each.
    pub link_conflicts: Vec<LinkConflict>,
    /// Paths one side made a value and the other an object; `prefer` settled each.
    pub path_conflicts: Vec<PathConflict>,
}

impl MergeReport {
    /// Number of conflicts: keys, links and paths.
    #[must_use]
    pub fn conflict_count(&self) -> usize {
        self.conflicts.len() + self.link_conflicts.len() + self.path_conflicts.len()
    }
}

/// `ours` with the changes `theirs` made to `base`, and what was done. Entity by entity, by
/// handle: one theirs removed is removed (a removal beats a change), one ours removed stays
/// removed; one both kept is merged key by key ([`Blob::merge3`]: what it stores, not what
/// it inherits); one theirs inserted is inserted under a new handle, its links to other
/// inserted entities moved along. Each entity's prototype link is merged three-way: one
/// side's change is taken. Where both sides changed a key or a link differently, `prefer`'s
/// side wins and the conflict is reported; where a merged entity would hold a value and a key
/// under it (each side added one), every key of that clash takes `prefer`'s side's state and
/// a [`PathConflict`] is reported. Names of keys are taken from `base` and `theirs`.
///
/// The three should be of one lineage and data version (the callers check: a merge across
/// either mixes unrelated entities or meanings). O(entities + keys changed); the links'
/// check is O(entities).
///
/// # Errors
///
/// [`Error::Key`] if a key name of `base` or `theirs` collides with another of ours.
/// [`Error::Handle`]: [`HandleError::PrototypeRemoved`] if a merged link reads through an
/// entity the merge removes (theirs removed a prototype ours still links to, or the
/// reverse), [`HandleError::PrototypeCycle`] or [`HandleError::PrototypeChain`] if the
/// merged links make a cycle or a chain past [`MAX_CHAIN`]; [`Error::Blob`] if a merged blob
/// would pass 4 GiB. Nothing is returned then.
///
/// # Examples
///
/// ```
/// use datacomp::Store;
/// use datacomp::blob::Side;
/// use datacomp::store::merge3;
///
/// let mut base = Store::new();
/// let orc = base.insert_entries([("$id", "orc"), ("name", "Orc")])?;
/// let elf = base.insert_entries([("$id", "elf"), ("name", "Elf")])?;
/// let grunt = base.insert_instance(orc)?;
/// let (mut ours, mut theirs) = (base.clone(), base.clone());
/// ours.get_mut(grunt).unwrap().set("name", "Grunt")?;
/// theirs.set_prototype(grunt, Some(elf))?;
/// let (merged, report) = merge3(&base, &ours, &theirs, Side::Ours)?;
/// assert_eq!(merged.prototype(grunt), Some(elf), "theirs relinked it");
/// assert_eq!(merged.get(grunt).unwrap().get_str("name"), Some("Grunt"), "ours renamed it");
/// assert_eq!(report.conflict_count(), 0);
/// # Ok::<(), datacomp::Error>(())
/// ```
pub fn merge3(
    base: &Store,
    ours: &Store,
    theirs: &Store,
    prefer: Side,
) -> Result<(Store, MergeReport), Error> {
    let mut merged = ours.clone();
    merged.merge_key_names(base)?;
    merged.merge_key_names(theirs)?;
    let mut report = MergeReport::default();
    // Removed after the links are merged: a prototype theirs removed may still have ours'
    // instances until their links are.
    let mut removals = Vec::new();
    for (id, old) in base.iter() {
        let Some(new) = theirs.get(id) else {
            if merged.contains(id) {
                removals.push(id);
            }
            continue;
        };
        if new == old {
            continue;
        }
        let Some(mine) = merged.get(id).map(BlobRef::to_blob) else {
            report.stays_removed.push(id);
            continue;
        };
        let result =
            merge3_entity(&merged, id, &old.to_blob(), &mine, &new.to_blob(), prefer, &mut report)
                .map_err(Error::Blob)?;
        // Ours has it: `mine` is its blob.
        let Some(mut entity) = merged.get_mut(id) else { continue };
        Patch::between(mine.as_blob_ref(), result.as_blob_ref())
            .try_apply(&mut entity)
            .map_err(Error::Blob)?;
        report.merged.push(id);
    }
    for (id, blob) in theirs.iter().filter(|(id, _)| !base.contains(*id)) {
        let new = merged.insert(&blob.to_blob());
        report.inserted.push((id, new));
    }
    let links = merged_links(base, theirs, &merged, &removals, &mut report, prefer)?;
    merged.set_links(links);
    // INVARIANT: no merged link reads through a removal, so each is removed.
    for &id in &removals {
        if merged.remove(id) {
            report.removed.push(id);
        }
    }
    Ok((merged, report))
}

/// Entity `id`'s blob `ours` with the changes `theirs` made to `base`, merged as [`merge3`]
/// merges an entity both sides kept, with `store`'s key names (which must know every name
/// of the three): key by key ([`Blob::merge3`]), each key both changed differently a
/// conflict, and each path one side made a value and the other an object a [`PathConflict`],
/// both settled by `prefer` and pushed onto `report` with `id`. Unlike [`Blob::merge3`], the
/// result is never a blob an import or a write would refuse. For a merge of one entity
/// outside a whole-store merge: a live sheet and a reloaded file (the Bevy plugin's hot
/// reload). O(keys changed) while no name nests, else O(keys × depth + keys log keys).
///
/// # Errors
///
/// [`BlobError`] if the merged blob would pass 4 GiB; `report` may then hold this entity's
/// conflicts.
///
/// # Examples
///
/// ```
/// use datacomp::blob::Side;
/// use datacomp::store::{MergeReport, PathConflict, merge3_entity};
/// use datacomp::{Key, Store};
///
/// let mut store = Store::new();
/// let orc = store.insert_entries([("name", "Orc")])?;
/// let base = store.get(orc).unwrap().to_blob();
/// store.get_mut(orc).unwrap().set("stats.health", "30")?; // the game's edit
/// let mut file = Store::new(); // the designer's: stats is a value
/// let edited = file.insert_entries([("name", "Orc"), ("stats", "5")])?;
/// store.merge_key_names(&file)?;
/// let (ours, theirs) = (store.get(orc).unwrap().to_blob(), file.get(edited).unwrap().to_blob());
/// let mut report = MergeReport::default();
/// let merged = merge3_entity(&store, orc, &base, &ours, &theirs, Side::Ours, &mut report)?;
/// let clash = PathConflict { id: orc, value: Key::parse("stats"), under: Key::parse("stats.health") };
/// assert_eq!(report.path_conflicts, [clash]);
/// assert_eq!(merged, ours, "every key of the clash takes ours' state");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn merge3_entity(
    store: &Store,
    id: Id,
    base: &Blob,
    ours: &Blob,
    theirs: &Blob,
    prefer: Side,
    report: &mut MergeReport,
) -> Result<Blob, BlobError> {
    let mut result = match Blob::merge3(base, ours, theirs) {
        Ok(blob) => blob,
        Err(found) => {
            report.conflicts.extend(found.conflicts().iter().map(|c| (id, c.clone())));
            match prefer {
                Side::Ours => found.into_ours(),
                Side::Theirs => found.resolve(|_| Side::Theirs),
            }
        }
    };
    let preferred = match prefer {
        Side::Ours => ours,
        Side::Theirs => theirs,
    };
    settle_paths(store, id, &mut result, preferred, report)?;
    Ok(result)
}

/// Settles the paths of `result`, entity `id`'s merge, that hold a value and a key under it
/// (by `store`'s names): each such pair is a [`PathConflict`], and every key of one takes its
/// state in `preferred` (a side's blob, which holds no such pair). A pair never survives:
/// `preferred` lacks one of its keys, which is then removed. Keys only leave or keep their
/// place, so no new pair appears. Free while no name nests ([`KeyNames::nested`]); else
/// O(keys × depth) lookups and one rebuild of the blob (O(keys log keys)).
///
/// [`KeyNames::nested`]: crate::names::KeyNames::nested
fn settle_paths(
    store: &Store,
    id: Id,
    result: &mut Blob,
    preferred: &Blob,
    report: &mut MergeReport,
) -> Result<(), BlobError> {
    let names = store.names();
    if !names.nested() {
        return Ok(());
    }
    // The keys held, as a set: a scan of the blob a lookup is quadratic in a large entity.
    let held: FxHashSet<Key> = result.keys().collect();
    let mut reported: FxHashSet<Key> = FxHashSet::default();
    let mut clashing: Vec<Key> = Vec::new();
    for key in result.keys() {
        let Some(node) = names.named(key) else { continue };
        let above =
            names.ancestors(node).find(|&at| names.is_named(at) && held.contains(&names.key(at)));
        if let Some(at) = above {
            let value = names.key(at);
            if reported.insert(value) {
                report.path_conflicts.push(PathConflict { id, value, under: key });
            }
            clashing.extend([value, key]);
        }
    }
    if clashing.is_empty() {
        return Ok(());
    }
    // One pass, not a write a key: a clash may hold every key of a large entity, and each
    // write or removal in place moves the arrays behind it.
    let clashing: FxHashSet<Key> = clashing.into_iter().collect();
    let kept: FxHashMap<Key, Value<'_>> =
        preferred.iter().filter(|(key, _)| clashing.contains(key)).collect();
    let entries: Vec<(Key, Value<'_>)> = result
        .iter()
        .filter_map(|(key, value)| {
            if clashing.contains(&key) { Some((key, *kept.get(&key)?)) } else { Some((key, value)) }
        })
        .collect();
    let mut settled = Blob::new();
    settled.try_set_all(&entries)?;
    *result = settled;
    Ok(())
}

/// The merged store's links: for each entity `merged` holds (which has ours' links), ours',
/// theirs' or a conflict's pick, checked whole (no link to a removal, no cycle, no chain past
/// [`MAX_CHAIN`]).
fn merged_links(
    base: &Store,
    theirs: &Store,
    merged: &Store,
    removals: &[Id],
    report: &mut MergeReport,
    prefer: Side,
) -> Result<Links, Error> {
    if base.links.is_empty() && theirs.links.is_empty() && merged.links.is_empty() {
        return Ok(Links::new());
    }
    // Theirs' handles of the entities it inserted, to ours'.
    let moved: FxHashMap<Id, Id> = report.inserted.iter().copied().collect();
    let inserted: FxHashMap<Id, Id> = report.inserted.iter().map(|&(t, n)| (n, t)).collect();
    let theirs_link = |at: Id| theirs.prototype(at).map(|p| moved.get(&p).copied().unwrap_or(p));
    let removals: FxHashSet<Id> = removals.iter().copied().collect();
    let mut target: Vec<(Id, Option<Id>)> = Vec::with_capacity(merged.len());
    for id in merged.index.ids() {
        let ours = merged.prototype(id);
        let link = if removals.contains(&id) {
            // Removed once the links are set: it reads through nothing meanwhile.
            None
        } else if let Some(&at) = inserted.get(&id) {
            theirs_link(at)
        } else if base.contains(id) && theirs.contains(id) {
            let (was, theirs) = (base.prototype(id), theirs_link(id));
            if theirs == was || theirs == ours {
                ours
            } else if ours == was {
                theirs
            } else {
                report.link_conflicts.push(LinkConflict { id, base: was, ours, theirs });
                match prefer {
                    Side::Ours => ours,
                    Side::Theirs => theirs,
                }
            }
        } else {
            ours
        };
        if let Some(p) = link
            && (!merged.contains(p) || removals.contains(&p))
        {
            return Err(HandleError::PrototypeRemoved { id, prototype: p }.into());
        }
        target.push((id, link));
    }
    // Checked whole by dense position, as a save's links are: O(entities).
    let dense: Vec<U32> = target
        .iter()
        .map(|&(_, link)| {
            let up = link.and_then(|p| merged.index.dense_index(p));
            U32::new(up.map_or(0, |d| d as u32 + 1))
        })
        .collect();
    let prototype_of = |id: Id| target.iter().find(|&&(at, _)| at == id).and_then(|&(_, p)| p);
    if let Err(error) = check_dense(&dense, |d| target[d].0) {
        let error = match error {
            StoreError::PrototypeCycle { id } => {
                let prototype = prototype_of(id).unwrap_or(Id::NULL);
                HandleError::PrototypeCycle { id, prototype }
            }
            StoreError::PrototypeChain { id, limit } => {
                let prototype = prototype_of(id).unwrap_or(Id::NULL);
                HandleError::PrototypeChain { id, prototype, length: limit + 1, limit }
            }
            other => return Err(other.into()),
        };
        return Err(error.into());
    }
    let mut links = Links::new();
    for (id, link) in target {
        if link.is_some() {
            links.set(id, link);
        }
    }
    Ok(links)
}
