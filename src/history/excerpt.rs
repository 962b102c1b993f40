//! A [`Mark`] in two halves, for a delta chain whose work runs on another thread: [`Since`]
//! stays with the store and takes an [`Excerpt`] of what changed (in O(changed): the changed
//! entities' bytes), and the mark, elsewhere, makes the delta from it
//! ([`Mark::take_delta_from`]): the comparison, the crc32 of the mark's state and the patching
//! of it happen where the mark is, not where the store is.

use std::fmt;
use std::sync::OnceLock;

use zerocopy::FromBytes;
use zerocopy::little_endian::U64;

use crate::blob::BlobRef;
use crate::handle_map::{Id, RawHeader};
use crate::names::KeyNames;
use crate::store::delta::Target;
use crate::store::{Store, StorePatch};

use super::snapshot::Snapshot;
use super::track::Mark;

/// Where a [`Mark`] stands in its store's change tracking, without its copy of the state: the
/// half of a mark that stays with the store, made by [`Mark::since`]. [`take`](Since::take)
/// copies out what changed since, and moves on.
///
/// # Examples
///
/// An autosave whose frame pays only for what changed: the mark (and its copy of the world)
/// lives where the deltas are written.
///
/// ```
/// use datacomp::{Store, StorePatch};
///
/// let mut world = Store::new();
/// let id = world.insert_entries([("turn", 0.0)]).unwrap();
/// let base = world.clone(); // the full save
/// let mut mark = world.mark(); // sent to the writer's thread
/// let mut since = mark.since(); // kept with the world
///
/// world.get_mut(id).unwrap().set("turn", 1.0).unwrap();
/// let excerpt = since.take(&world); // O(changed), in the frame
/// let link = mark.take_delta_from(&excerpt).unwrap(); // on the writer's thread
///
/// let mut loaded = base;
/// link.apply(&mut loaded)?;
/// assert_eq!(loaded, world);
/// # Ok::<(), datacomp::LoadError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Since {
    /// The store's identity and the epoch the mark's state is at.
    at: (u64, u64),
    /// The store's key names then (tracked names only grow).
    names: usize,
}

/// What changed in a store since a [`Since`], copied out of it: taken by [`Since::take`],
/// made into a delta by [`Mark::take_delta_from`].
///
/// It holds the changed entities' bytes and handle map entries (O(changed)); or, when the
/// store could not tell what changed (another store, a restore, a delta applied, a `clear`,
/// more changes than the store has slots, twice over), a copy of the whole store.
#[derive(Clone)]
pub struct Excerpt {
    /// Where the mark must be, and where it is after.
    from: (u64, u64),
    to: (u64, u64),
    part: Part,
}

#[derive(Clone)]
enum Part {
    Changed(Box<Changed>),
    Whole(Box<Store>),
}

/// The changed part of a store.
#[derive(Clone)]
struct Changed {
    header: RawHeader,
    /// The changed slots, ascending, and each one's bits (`None` past the last slot).
    slots: Vec<u32>,
    bits: Vec<Option<U64>>,
    /// The entities live at changed slots, in ascending slot order.
    live: Vec<Live>,
    /// Their blobs, back to back.
    words: Vec<u32>,
    /// The key names, when more than at the `Since`.
    names: Option<KeyNames>,
    data_version: u32,
    has_links: bool,
}

#[derive(Clone, Copy)]
struct Live {
    slot: u32,
    id: Id,
    dense: usize,
    words: (usize, usize),
    prototype: Option<Id>,
}

impl Mark {
    /// A mark of `store` (as [`Store::mark`]) whose copy of it is made in `buffers`, a
    /// snapshot's, so that a copy kept from before costs a warm memcpy, not an allocation.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Mark, Snapshot, Store};
    ///
    /// let mut world = Store::new();
    /// let spare = Snapshot::new(&world);
    /// let id = world.insert_entries([("gold", 1.0)]).unwrap();
    /// let mark = Mark::reusing(&world, spare);
    /// assert_eq!(mark.state(), &world);
    /// world.get_mut(id).unwrap().set("gold", 2.0).unwrap();
    /// assert_eq!(mark.changes(&world).changed(), [id]);
    /// ```
    #[must_use]
    pub fn reusing(store: &Store, buffers: Snapshot) -> Mark {
        let mut state = buffers.into_store();
        state.copy_from(store);
        Mark {
            store: store.tracker().id(),
            epoch: store.tracker().next_epoch(),
            state,
            crc: OnceLock::new(),
        }
    }

    /// Where this mark stands in its store's change tracking: the [`Since`] whose
    /// [`take`](Since::take) gives the excerpts this mark's
    /// [`take_delta_from`](Mark::take_delta_from) takes, in order.
    #[must_use]
    pub fn since(&self) -> Since {
        Since { at: (self.store, self.epoch), names: self.state.names().len() }
    }

    /// The delta from this mark's state to the state `excerpt` was taken at, moving the mark
    /// there: [`take_delta`](Mark::take_delta) of the store the excerpt was taken from, at that
    /// moment, byte for byte, in O(the excerpt) plus the crc32 of the mark's state.
    ///
    /// `None` (and the mark unchanged) when the excerpt does not start where the mark stands:
    /// one taken from a [`Since`] of another mark or position.
    #[must_use]
    pub fn take_delta_from(&mut self, excerpt: &Excerpt) -> Option<StorePatch> {
        if excerpt.from != (self.store, self.epoch) {
            return None;
        }
        let delta = match &excerpt.part {
            Part::Changed(changed) => self.take_slots(changed.as_ref(), &changed.slots),
            Part::Whole(store) => self.take_whole(store),
        };
        (self.store, self.epoch) = excerpt.to;
        Some(delta)
    }
}

impl Since {
    /// What changed in `store` since this position (the entities at the slots its change
    /// tracking stamped, copied), moving this position to now: O(changed), or one copy of the
    /// store when it cannot tell (see [`Excerpt`]).
    pub fn take(&mut self, store: &Store) -> Excerpt {
        let (id, epoch) = self.at;
        let part = match store.tracker().changed_since(id, epoch) {
            Some(mut slots) => {
                slots.sort_unstable();
                Part::Changed(Box::new(Changed::of(store, slots, self.names)))
            }
            None => Part::Whole(Box::new(store.copy_state())),
        };
        let to = (store.tracker().id(), store.tracker().next_epoch());
        let from = std::mem::replace(&mut self.at, to);
        self.names = store.names().len();
        Excerpt { from, to, part }
    }
}

impl Excerpt {
    /// Entities copied whole, or `None` for a copy of the whole store.
    #[must_use]
    pub fn entities(&self) -> Option<usize> {
        match &self.part {
            Part::Changed(changed) => Some(changed.live.len()),
            Part::Whole(_) => None,
        }
    }
}

impl fmt::Debug for Excerpt {
    /// `Excerpt { entities: Some(1000), .. }` (`None`: the whole store).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Excerpt").field("entities", &self.entities()).finish_non_exhaustive()
    }
}

impl Changed {
    /// The `slots` (sorted) of `store`, whose key names were `names` long at the `Since`.
    fn of(store: &Store, slots: Vec<u32>, names: usize) -> Changed {
        let raw = store.index().as_raw();
        let all = <[U64]>::ref_from_bytes(raw.slots).expect("INVARIANT: own sections");
        let bits = slots.iter().map(|&slot| all.get(slot as usize).copied()).collect();
        let mut words = Vec::new();
        let live = slots
            .iter()
            .filter_map(|&slot| {
                let (id, dense) = store.index().live_at_slot(slot as usize)?;
                let blob = store.get(id).expect("INVARIANT: live in the index");
                let start = words.len();
                words.extend_from_slice(blob.as_words());
                let prototype = store.links().prototype(id);
                Some(Live { slot, id, dense, words: (start, words.len()), prototype })
            })
            .collect();
        Changed {
            header: raw.header,
            slots,
            bits,
            live,
            words,
            names: (store.names().len() != names).then(|| store.names().clone()),
            data_version: store.data_version(),
            has_links: !store.links().is_empty(),
        }
    }

    fn live(&self, slot: u32) -> Option<&Live> {
        let i = self.live.binary_search_by_key(&slot, |live| live.slot).ok()?;
        Some(&self.live[i])
    }

    /// The entity `id`, live at a changed slot.
    fn live_of(&self, id: Id) -> &Live {
        let slot = id.index().wrapping_sub(self.header.base.get());
        self.live(slot).filter(|live| live.id == id).expect("INVARIANT: asked for live entities")
    }
}

impl Target for Changed {
    fn header(&self) -> RawHeader {
        self.header
    }

    fn slot_bits(&self, slot: u32) -> Option<U64> {
        let i = self.slots.binary_search(&slot).ok()?;
        self.bits[i]
    }

    fn live_at_slot(&self, slot: u32) -> Option<(Id, usize)> {
        self.live(slot).map(|live| (live.id, live.dense))
    }

    fn blob(&self, id: Id) -> BlobRef<'_> {
        let (start, end) = self.live_of(id).words;
        BlobRef::from_valid(&self.words[start..end])
    }

    fn has_links(&self) -> bool {
        self.has_links
    }

    fn prototype(&self, id: Id) -> Option<Id> {
        self.live_of(id).prototype
    }

    fn names_unless_base(&self, base: &Store, _grown: bool) -> Option<KeyNames> {
        self.names.as_ref().filter(|names| names.len() != base.names().len()).cloned()
    }

    fn data_version(&self) -> u32 {
        self.data_version
    }
}

#[cfg(test)]
mod tests {
    use crate::store::{Store, StorePatch};

    /// Excerpts give the deltas `take_delta` gives, byte for byte, through inserts, removals,
    /// slot reuse, new key names, prototype links and data versions; and one of another
    /// position is refused.
    #[test]
    fn excerpts_give_take_deltas_bytes() {
        let mut world = Store::new();
        let ids: Vec<_> =
            (0..50_u16).map(|i| world.insert_entries([("gold", f32::from(i))]).unwrap()).collect();
        let mut mark = world.mark();
        let mut twin = mark.clone();
        let mut since = mark.since();
        let base = world.clone();
        let mut chain = Vec::new();
        for round in 0..6_u16 {
            let r = f32::from(round);
            world.get_mut(ids[usize::from(round)]).unwrap().set("gold", -r).unwrap();
            world.remove(ids[10 + usize::from(round)]);
            let new = world.insert_entries([("gold", r)]).unwrap();
            if round == 2 {
                world.get_mut(new).unwrap().set(format!("key{round}").as_str(), r).unwrap();
            }
            if round == 3 {
                world.set_prototype(new, Some(ids[40])).unwrap();
            }
            if round == 4 {
                world.set_data_version(3);
            }
            let excerpt = since.take(&world);
            assert!(excerpt.entities().unwrap() >= 2);
            let delta = mark.take_delta_from(&excerpt).unwrap();
            assert_eq!(delta.to_bytes(), twin.take_delta(&world).to_bytes(), "round {round}");
            assert!(mark.take_delta_from(&excerpt).is_none(), "the mark moved on");
            chain.push(delta);
        }
        let mut loaded = base;
        StorePatch::apply_chain(&chain, &mut loaded).unwrap();
        assert_eq!(loaded, world);
    }

    /// A store the tracker cannot answer for (a restore) gives a whole copy, and the same
    /// delta.
    #[test]
    fn an_untracked_change_takes_the_whole_store() {
        let mut world = Store::new();
        let id = world.insert_entries([("gold", 1.0)]).unwrap();
        let snapshot = crate::history::Snapshot::new(&world);
        let mut mark = world.mark();
        let mut twin = mark.clone();
        let mut since = mark.since();
        world.get_mut(id).unwrap().set("gold", 2.0).unwrap();
        snapshot.restore(&mut world);
        world.insert_entries([("gold", 3.0)]).unwrap();
        let excerpt = since.take(&world);
        assert_eq!(excerpt.entities(), None);
        let delta = mark.take_delta_from(&excerpt).unwrap();
        assert_eq!(delta.to_bytes(), twin.take_delta(&world).to_bytes());
        assert_eq!(mark.state(), &world);
    }
}
