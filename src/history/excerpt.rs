//! A [`Mark`] in two halves, for a delta chain whose work runs on another thread: [`Since`]
//! stays with the store and takes an [`Excerpt`] of what changed (in O(changed): the changed
//! entities' bytes), and the mark, elsewhere, makes the delta from it
//! ([`Mark::take_delta_from`]): the comparison, the crc32 of the mark's state and the patching
//! of it happen where the mark is, not where the store is.

use std::fmt;
use std::ops::Range;
use std::sync::OnceLock;

use zerocopy::little_endian::U64;
use zerocopy::{FromBytes, FromZeros};

use crate::blob::BlobRef;
use crate::handle_map::{HandleMap, Id, RawHeader};
use crate::names::KeyNames;
use crate::store::delta::{Placement, Target};
use crate::store::{STORE_TYPE_ID, Store, StorePatch};

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
///
/// One can also be kept and grown a frame at a time ([`Since::add`]: each frame's changes,
/// and a range of slots copied whatever changed, to fill a [`Mark::blank`]), then
/// [`settle`](Excerpt::settle)d where the mark is, and [`clear`](Excerpt::clear)ed for reuse:
/// its buffers stay allocated. [`Default`] is an empty one, that starts where its first
/// [`Since::add`] stands.
#[derive(Clone, Default)]
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

impl Default for Part {
    fn default() -> Part {
        Part::Changed(Box::default())
    }
}

/// Words an appended excerpt holds before the words of replaced states count towards its
/// compaction (1 MiB).
const MIN_WORDS: usize = 1 << 18;

/// The changed part of a store.
#[derive(Clone)]
struct Changed {
    header: RawHeader,
    /// The changed slots and each one's bits (`None` past the last slot): ascending, each once,
    /// when `settled`; else in the order they were added, a later one in place of an earlier.
    slots: Vec<u32>,
    bits: Vec<Option<U64>>,
    /// The entities live at changed slots, in the order of `slots`.
    live: Vec<Live>,
    settled: bool,
    /// The tracker's answer, kept for its allocation.
    scratch: Vec<u32>,
    /// Entries after the last [`compact`](Changed::compact): appending compacts again at
    /// twice as many (or twice the store's slots), so that an excerpt grown without end
    /// holds O(the store).
    kept: usize,
    /// Words of the blobs after the last compaction: appending (or adding to an excerpt that
    /// holds entries) compacts again at twice as many (or twice `store_words`, [`MIN_WORDS`]),
    /// so that a few big entities changed in every excerpt hold O(their size), not O(appends).
    kept_words: usize,
    /// The store's arena words at the last add: the words compact at twice that at least.
    store_words: usize,
    /// Their blobs, back to back.
    words: Vec<u32>,
    /// The key names, when more than at the `Since`.
    names: Option<KeyNames>,
    data_version: u32,
    has_links: bool,
}

impl Default for Changed {
    fn default() -> Changed {
        Changed {
            header: RawHeader::new_zeroed(),
            slots: Vec::new(),
            bits: Vec::new(),
            live: Vec::new(),
            settled: true,
            scratch: Vec::new(),
            kept: 0,
            kept_words: 0,
            store_words: 0,
            words: Vec::new(),
            names: None,
            data_version: 0,
            has_links: false,
        }
    }
}

#[derive(Clone, Copy)]
struct Live {
    slot: u32,
    /// Its place in `slots` when added: of two at one slot, the later is the slot's.
    seq: u32,
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
            Part::Changed(changed) if changed.settled => {
                self.take_slots(changed.as_ref(), &changed.slots)
            }
            Part::Changed(changed) => {
                let mut changed = changed.clone();
                changed.settle();
                self.take_slots(changed.as_ref(), &changed.slots)
            }
            Part::Whole(store) => self.take_whole(store),
        };
        (self.store, self.epoch) = excerpt.to;
        Some(delta)
    }

    /// A mark at `store`'s position now whose state is empty (but for the store's
    /// [lineage](Store::lineage)), to be filled a part at a time: the excerpts
    /// [`Since::add`] takes from its [`since`](Mark::since), whose copy ranges cover every slot
    /// of the store between them, [`absorb`](Mark::absorb)ed in order, leave its state equal
    /// to the store's (the same save bytes) at the last one's moment. O(1): no copy of the
    /// store is made here.
    ///
    /// # Examples
    ///
    /// A copy of a world made over several frames, a slice of its slots each, while it changes:
    ///
    /// ```
    /// use datacomp::{Mark, Store};
    /// use datacomp::history::Excerpt;
    ///
    /// let mut world = Store::new();
    /// let ids: Vec<_> = (0..10).map(|i| world.insert_entries([("hp", i as f32)]).unwrap()).collect();
    /// let mut mirror = Mark::blank(&world); // sent to the writer's thread
    /// let mut since = mirror.since();
    /// let mut excerpt = Excerpt::default();
    /// for frame in 0..3_u32 {
    ///     world.get_mut(ids[9]).unwrap().set("hp", frame as f32).unwrap(); // copied, then changed
    ///     world.remove(ids[frame as usize]);
    ///     let done = since.add(&world, &mut excerpt, frame * 4..frame * 4 + 4);
    ///     excerpt.settle(); // where the mark is
    ///     assert!(mirror.absorb(&excerpt));
    ///     excerpt.clear();
    ///     assert_eq!(done, frame == 2);
    /// }
    /// assert_eq!(mirror.state().to_bytes(), world.to_bytes());
    /// ```
    #[must_use]
    pub fn blank(store: &Store) -> Mark {
        let index = HandleMap::new(STORE_TYPE_ID);
        let state = Store::from_parts(index, Vec::new(), KeyNames::new(), 0, store.lineage());
        Mark {
            store: store.tracker().id(),
            epoch: store.tracker().next_epoch(),
            state,
            crc: OnceLock::new(),
        }
    }

    /// Moves the mark's state to the state `excerpt` was taken at, as
    /// [`take_delta_from`](Mark::take_delta_from) does, without the delta: no crc32 of the
    /// state, no delta's bytes kept. O(the excerpt) for a [`settle`](Excerpt::settle)d one.
    /// `false` (and the mark unchanged) when the excerpt does not start where the mark
    /// stands.
    pub fn absorb(&mut self, excerpt: &Excerpt) -> bool {
        if excerpt.from != (self.store, self.epoch) {
            return false;
        }
        match &excerpt.part {
            Part::Changed(changed) if changed.settled => self.patch(changed),
            Part::Changed(changed) => {
                let mut changed = changed.clone();
                changed.settle();
                self.patch(&changed);
            }
            Part::Whole(store) => {
                self.state.copy_from(store);
                self.crc = OnceLock::new();
            }
        }
        (self.store, self.epoch) = excerpt.to;
        true
    }

    /// The mark's state patched to `changed`'s (settled) slots.
    fn patch(&mut self, changed: &Changed) {
        patch_state(&mut self.state, changed);
        self.crc = OnceLock::new();
    }
}

/// `state` patched to `changed`'s (settled) slots: the store `changed` was taken from, at that
/// moment, when `state` is the store where `changed` starts.
fn patch_state(state: &mut Store, changed: &Changed) {
    // The patch is only applied here, never written: its base's crc32 is not needed; the
    // blobs are copied as they are, so that the state's save is the store's, byte for byte.
    let patch = StorePatch::diff_slots(state, changed, (&changed.slots, true), 0, None);
    patch.apply_trusted(state, Placement::Verbatim(changed));
    // Entities whose contents did not change may have had their bytes moved (an undo's
    // repack): the same bytes as the store's, whatever the patch held.
    for live in &changed.live {
        let words = &changed.words[live.words.0..live.words.1];
        state.set_words_verbatim(live.id, words);
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
                let mut changed = Box::<Changed>::default();
                changed.add(store, &slots, 0..0, self.names);
                // Sorted, and the tracker gives each slot once.
                changed.settled = true;
                Part::Changed(changed)
            }
            None => Part::Whole(Box::new(store.copy_state())),
        };
        let to = (store.tracker().id(), store.tracker().next_epoch());
        let from = std::mem::replace(&mut self.at, to);
        self.names = store.names().len();
        Excerpt { from, to, part }
    }

    /// Adds to `excerpt` what changed in `store` since this position, and the entities at
    /// the slots `copy` (clipped to the store's, changed or not: a part of a copy that fills
    /// a [`Mark::blank`]), moving this position to now: O(changed + the copy range), into the
    /// excerpt's buffers (no allocation once they are large enough). When the store cannot
    /// tell what changed, the excerpt becomes a copy of the whole store (see [`Excerpt`]).
    ///
    /// `excerpt` then runs from where it started (or from this position, if it was empty or
    /// did not end here, in which case it starts over) to now; added to again and again, it
    /// drops the states later ones replaced now and then, as [`Excerpt::append`] does, and
    /// holds O(the store). Returns whether `copy` reached the store's last slot.
    pub fn add(&mut self, store: &Store, excerpt: &mut Excerpt, copy: Range<u32>) -> bool {
        if excerpt.from == (0, 0) || excerpt.to != self.at {
            excerpt.clear();
            excerpt.from = self.at;
        }
        let (id, epoch) = self.at;
        let slot_count = u32::try_from(store.index().slot_count()).unwrap_or(u32::MAX);
        let copy = copy.start.min(slot_count)..copy.end.min(slot_count);
        let tracked = match &mut excerpt.part {
            Part::Changed(changed) => {
                let mut scratch = std::mem::take(&mut changed.scratch);
                let tracked = store.tracker().changed_since_into(id, epoch, &mut scratch);
                if tracked {
                    changed.add(store, &scratch, copy.clone(), self.names);
                }
                changed.scratch = scratch;
                tracked
            }
            Part::Whole(whole) => {
                whole.copy_from(store);
                true
            }
        };
        if !tracked {
            excerpt.part = Part::Whole(Box::new(store.copy_state()));
        }
        let to = (store.tracker().id(), store.tracker().next_epoch());
        (excerpt.to, self.at) = (to, to);
        self.names = store.names().len();
        copy.end >= slot_count
    }
}

impl Excerpt {
    /// Entities copied whole (an entity added twice by [`Since::add`] counts twice until the
    /// excerpt is [`settle`](Excerpt::settle)d), or `None` for a copy of the whole store.
    #[must_use]
    pub fn entities(&self) -> Option<usize> {
        match &self.part {
            Part::Changed(changed) => Some(changed.live.len()),
            Part::Whole(_) => None,
        }
    }

    /// Sorts what [`Since::add`] added by slot and keeps each slot's last state: O(n log n)
    /// in what was added, for the thread that makes the delta rather than the one that adds.
    /// [`Mark::take_delta_from`] and [`Mark::absorb`] settle a copy of an excerpt that is not.
    pub fn settle(&mut self) {
        if let Part::Changed(changed) = &mut self.part {
            changed.settle();
        }
    }

    /// Moves what `later` holds to the end of this excerpt, leaving `later` empty (its
    /// buffers kept, as [`clear`](Excerpt::clear) leaves them): this one then runs from where
    /// it started to where `later` ends, as one [`Since::add`] of both would. O(later) (into
    /// this excerpt's own buffers; a whole copy is taken over), and now and then a
    /// [`settle`](Excerpt::settle) that drops the states later ones replaced, so that an
    /// excerpt appended to without end holds O(the store) (entries for at most about twice
    /// its slots, or 8,192; words for at most about twice those of the entities kept, or
    /// of the store's blobs, or 2 MiB). `false` (and both unchanged) when `later` does not
    /// start where this one ends.
    ///
    /// So a thread that makes deltas can gather a frame's excerpts as they come, and the
    /// thread that takes them keeps buffers of one frame's size:
    ///
    /// ```
    /// use datacomp::Store;
    /// use datacomp::history::Excerpt;
    ///
    /// let mut world = Store::new();
    /// let id = world.insert_entries([("hp", 0.0)]).unwrap();
    /// let mut mark = world.mark(); // the writer's
    /// let (mut twin, mut since) = (mark.clone(), mark.since());
    /// let (mut frame, mut gathered) = (Excerpt::default(), Excerpt::default());
    /// for hp in 1..=3 {
    ///     world.get_mut(id).unwrap().set("hp", hp as f32).unwrap();
    ///     since.add(&world, &mut frame, 0..0); // in the frame
    ///     assert!(gathered.append(&mut frame)); // on the writer's thread
    ///     assert_eq!(frame.entities(), Some(0));
    /// }
    /// gathered.settle();
    /// assert_eq!(gathered.entities(), Some(1));
    /// let link = mark.take_delta_from(&gathered).unwrap();
    /// assert_eq!(link.to_bytes(), twin.take_delta(&world).to_bytes());
    /// ```
    pub fn append(&mut self, later: &mut Excerpt) -> bool {
        if later.from == (0, 0) {
            return true;
        }
        if self.from == (0, 0) {
            // Copied, not swapped: each excerpt's buffers stay where they were grown (taking
            // them over moved the adding thread's allocations to the appending one, whose
            // reallocation of them copies under the adder's allocator lock: a frame waited
            // 11 ms for it in save_cost's run).
            self.clear();
            (self.from, self.to) = (later.from, later.from);
        } else if later.from != self.to {
            return false;
        }
        match (&mut self.part, &mut later.part) {
            (_, Part::Whole(_)) => std::mem::swap(&mut self.part, &mut later.part),
            (Part::Whole(store), Part::Changed(changed)) => {
                changed.settle();
                patch_state(store, changed);
            }
            (Part::Changed(mine), Part::Changed(theirs)) => mine.append(theirs),
        }
        self.to = later.to;
        later.clear();
        true
    }

    /// Empties the excerpt, keeping its buffers for the next [`Since::add`].
    pub fn clear(&mut self) {
        (self.from, self.to) = ((0, 0), (0, 0));
        match &mut self.part {
            Part::Changed(changed) => changed.clear(),
            part @ Part::Whole(_) => *part = Part::default(),
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
    /// Adds the entries at the slots `tracked`, then at the slots `copy`, of `store` (whose key
    /// names were `names` long at the `Since`), after those added before.
    fn add(&mut self, store: &Store, tracked: &[u32], copy: Range<u32>, names: usize) {
        let raw = store.index().as_raw();
        let all = <[U64]>::ref_from_bytes(raw.slots).expect("INVARIANT: own sections");
        let links = store.links();
        let has_links = !links.is_empty();
        let (spans, arena) = (store.index().as_slice(), store.arena());
        // The slots and their bits first, each a loop of known length (a frame's copy is this
        // function: no capacity check an entry), then the live entities' blobs.
        let first = self.slots.len();
        self.slots.extend_from_slice(tracked);
        self.slots.extend(copy);
        let added = &self.slots[first..];
        self.bits.extend(added.iter().map(|&slot| all.get(slot as usize).copied()));
        self.live.reserve(added.len());
        let seqs = (first..).map(|seq| u32::try_from(seq).unwrap_or(u32::MAX));
        for (seq, &slot) in seqs.zip(added) {
            let Some((id, dense)) = store.index().live_at_slot(slot as usize) else { continue };
            // Live at the slot: its span is its dense place's (no handle to check).
            let start = self.words.len();
            self.words.extend_from_slice(&arena[spans[dense].range()]);
            let prototype = if has_links { links.prototype(id) } else { None };
            let words = (start, self.words.len());
            self.live.push(Live { slot, seq, id, dense, words, prototype });
        }
        self.settled = self.slots.is_empty();
        self.header = raw.header;
        if store.names().len() != names {
            // Names only grow: the latest grown ones are the store's.
            self.names = Some(store.names().clone());
        }
        self.data_version = store.data_version();
        self.has_links = has_links;
        self.store_words = arena.len();
        // Added to earlier ones (an excerpt grown frame by frame): the states later ones
        // replaced dropped now and then, as `append` does.
        if first > 0 && self.grown() {
            self.compact();
        }
    }

    /// See [`Excerpt::settle`].
    fn settle(&mut self) {
        if self.settled {
            return;
        }
        // Each slot's last entry: (slot, seq), ascending.
        let mut last: Vec<(u32, u32)> = (0_u32..).zip(&self.slots).map(|(i, &s)| (s, i)).collect();
        last.sort_unstable();
        last.dedup_by(|later, earlier| {
            let same = later.0 == earlier.0;
            if same {
                *earlier = *later;
            }
            same
        });
        self.bits = last.iter().map(|&(_, seq)| self.bits[seq as usize]).collect();
        self.slots = last.iter().map(|&(slot, _)| slot).collect();
        // The entities of those entries: the last state of a slot may be free.
        self.live.sort_unstable_by_key(|live| (live.slot, live.seq));
        self.live.retain_mut(|live| {
            let i = self.slots.binary_search(&live.slot).expect("INVARIANT: added with its slot");
            let kept = last[i].1 == live.seq;
            // INVARIANT: a live entry's `seq` is its slot's place in `slots`.
            live.seq = u32::try_from(i).unwrap_or(u32::MAX);
            kept
        });
        self.settled = true;
    }

    /// `later`'s entries after these (`later` unchanged), compacted now and then (see
    /// [`Excerpt::append`]).
    fn append(&mut self, later: &Changed) {
        let seq = u32::try_from(self.slots.len()).unwrap_or(u32::MAX);
        let words = self.words.len();
        self.slots.extend_from_slice(&later.slots);
        self.bits.extend_from_slice(&later.bits);
        self.words.extend_from_slice(&later.words);
        self.live.extend(later.live.iter().map(|live| Live {
            seq: live.seq.saturating_add(seq),
            words: (live.words.0 + words, live.words.1 + words),
            ..*live
        }));
        self.settled = self.slots.is_empty();
        self.header = later.header;
        if let Some(names) = &later.names {
            // Names only grow: the later ones are the store's.
            self.names = Some(names.clone());
        }
        self.data_version = later.data_version;
        self.has_links = later.has_links;
        self.store_words = later.store_words;
        if self.grown() {
            self.compact();
        }
    }

    /// Whether the entries or words grew past twice those kept at the last compaction (or
    /// twice the store's slots and arena words, 4,096 entries, [`MIN_WORDS`]): then
    /// compacting is O(1) an entry added since, amortized, and an excerpt of fewer changes
    /// than the store holds is never sorted before it is settled.
    fn grown(&self) -> bool {
        let slots = self.header.slots.get() as usize;
        self.slots.len() > 2 * self.kept.max(slots).max(4096)
            || self.words.len() > 2 * self.kept_words.max(self.store_words).max(MIN_WORDS)
    }

    /// Settles, and keeps only the words of the entities kept.
    fn compact(&mut self) {
        self.settle();
        let mut words = Vec::with_capacity(self.live.iter().map(|l| l.words.1 - l.words.0).sum());
        for live in &mut self.live {
            let start = words.len();
            words.extend_from_slice(&self.words[live.words.0..live.words.1]);
            live.words = (start, words.len());
        }
        self.words = words;
        self.kept = self.slots.len();
        self.kept_words = self.words.len();
    }

    fn clear(&mut self) {
        self.kept = 0;
        self.kept_words = 0;
        self.slots.clear();
        self.bits.clear();
        self.live.clear();
        self.words.clear();
        self.names = None;
        self.settled = true;
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

    use super::{Excerpt, Part};

    /// Excerpts appended without end (the same entities changed in every one) stay O(the
    /// store): the states later ones replaced are dropped now and then; the delta from them
    /// is `take_delta`'s; an excerpt of another position is refused and changes nothing; a
    /// whole copy (a restore between) takes the later changes on itself.
    #[test]
    fn appended_excerpts_stay_the_size_of_what_changed() {
        let mut world = Store::new();
        let ids: Vec<_> =
            (0..300_u16).map(|i| world.insert_entries([("gold", f32::from(i))]).unwrap()).collect();
        let mut mark = world.mark();
        let mut twin = mark.clone();
        let mut since = mark.since();
        let (mut frame, mut gathered) = (Excerpt::default(), Excerpt::default());
        let mut most = 0;
        for round in 0..100_u16 {
            for &id in &ids[..100] {
                world.get_mut(id).unwrap().set("gold", f32::from(round)).unwrap();
            }
            since.add(&world, &mut frame, 0..0);
            assert!(gathered.append(&mut frame));
            assert_eq!(frame.entities(), Some(0));
            let Part::Changed(changed) = &gathered.part else { panic!("a whole copy") };
            // At most twice 4,096 entries and one excerpt's more, and the words of those.
            assert!(changed.slots.len() <= 2 * 4096 + 100, "round {round}");
            assert!(changed.words.len() <= changed.live.len() * 8, "round {round}");
            most = most.max(changed.slots.len());
        }
        assert!(most > 8000, "compacted at twice 4,096: {most}");
        let mut stranger = Store::new().mark().since();
        let mut other = Excerpt::default();
        stranger.add(&Store::new(), &mut other, 0..0);
        let before = gathered.entities();
        assert!(!gathered.append(&mut other));
        assert_eq!(gathered.entities(), before);

        // A restore between: the store cannot tell what changed, a whole copy follows.
        let snapshot = crate::history::Snapshot::new(&world);
        world.get_mut(ids[0]).unwrap().set("gold", -1.0).unwrap();
        snapshot.restore(&mut world);
        since.add(&world, &mut frame, 0..0);
        assert!(gathered.append(&mut frame));
        assert_eq!(gathered.entities(), None);
        world.get_mut(ids[1]).unwrap().set("gold", -2.0).unwrap();
        world.remove(ids[2]);
        since.add(&world, &mut frame, 0..0);
        assert!(gathered.append(&mut frame));
        assert_eq!(gathered.entities(), None);
        let delta = mark.take_delta_from(&gathered).unwrap();
        assert_eq!(delta.to_bytes(), twin.take_delta(&world).to_bytes());
        assert_eq!(mark.state(), &world);
    }

    /// One big entity changed in every excerpt appended, or in every `Since::add` to one
    /// excerpt: the words of the states later ones replaced are dropped at twice the words
    /// kept (or 2 MiB), not only at twice the entries.
    #[test]
    fn appended_excerpts_of_a_big_entity_stay_its_size() {
        let mut world = Store::new();
        let big: Vec<f32> = vec![1.0; 100_000]; // 400 KB
        let id = world.insert_entries([("map", big.as_slice())]).unwrap();
        let mut mark = world.mark();
        let mut twin = mark.clone();
        let mut since = mark.since();
        let (mut frame, mut gathered) = (Excerpt::default(), Excerpt::default());
        let (mut most, mut one) = (0, 0);
        for round in 0..200_u16 {
            world.get_mut(id).unwrap().set("map[0]", f32::from(round)).unwrap();
            since.add(&world, &mut frame, 0..0);
            assert!(gathered.append(&mut frame));
            let Part::Changed(changed) = &gathered.part else { panic!("a whole copy") };
            if round == 0 {
                one = changed.words.len(); // the entity's blob
            }
            most = most.max(changed.words.len());
        }
        // Compacted past 2 x 2^18 words (200 appends would be 200 blobs): at most that and
        // one more blob, and not before two blobs.
        assert!(one > 100_000);
        assert!((2 * one..=(2 << 18) + one).contains(&most), "{most} words, {one} a blob");
        let delta = mark.take_delta_from(&gathered).unwrap();
        assert_eq!(delta.to_bytes(), twin.take_delta(&world).to_bytes());

        // The same, each change added to one excerpt by `Since::add`.
        let mut since = mark.since();
        let mut added = Excerpt::default();
        most = 0;
        for round in 0..200_u16 {
            world.get_mut(id).unwrap().set("map[1]", f32::from(round)).unwrap();
            since.add(&world, &mut added, 0..0);
            let Part::Changed(changed) = &added.part else { panic!("a whole copy") };
            most = most.max(changed.words.len());
        }
        assert!((2 * one..=(2 << 18) + one).contains(&most), "{most} words added");
        let delta = mark.take_delta_from(&added).unwrap();
        assert_eq!(delta.to_bytes(), twin.take_delta(&world).to_bytes());
    }

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

    /// A blank mark filled a few slots a frame while the store changes under it (inserts
    /// into freed and new slots, removals of copied and uncopied entities, new key names,
    /// prototype links, a data version) ends equal to the store, save bytes and all; and
    /// excerpts grown a frame at a time and settled give `take_delta`'s bytes.
    #[test]
    fn a_blank_mark_fills_a_part_at_a_time_and_added_frames_give_take_deltas_bytes() {
        let mut world = Store::new();
        let mut ids: Vec<_> =
            (0..40_u16).map(|i| world.insert_entries([("gold", f32::from(i))]).unwrap()).collect();
        let mut mirror = crate::Mark::blank(&world);
        let mut since = mirror.since();
        let mut excerpt = super::Excerpt::default();
        let mut frame = 0_u32;
        loop {
            let f = frame as usize;
            // Change one copied and one not yet copied, remove one of each, insert two.
            for i in [f * 3 % ids.len(), (f * 7 + 20) % ids.len()] {
                world.get_mut(ids[i]).unwrap().set("gold", -f32::from(frame as u16)).unwrap();
            }
            for i in [f % ids.len(), (f * 5 + 30) % ids.len()] {
                let id = ids.swap_remove(i);
                world.remove(id);
            }
            ids.push(world.insert_entries([("gold", f32::from(frame as u16))]).unwrap());
            let new = world.insert_entries([("silver", 1.0)]).unwrap();
            ids.push(new);
            if frame == 2 {
                world.get_mut(new).unwrap().set(format!("key{frame}").as_str(), 1.0).unwrap();
            }
            if frame == 3 {
                world.set_prototype(new, Some(ids[0])).unwrap();
            }
            if frame == 4 {
                world.set_data_version(5);
            }
            let done = since.add(&world, &mut excerpt, frame * 4..frame * 4 + 4);
            excerpt.settle();
            assert!(mirror.absorb(&excerpt));
            assert!(!mirror.absorb(&excerpt), "the mark moved on");
            excerpt.clear();
            frame += 1;
            if done {
                break;
            }
        }
        assert!(frame > 5, "{frame} frames");
        assert_eq!(mirror.state(), &world);
        assert_eq!(mirror.state().to_bytes(), world.to_bytes());

        // Links grown a frame at a time, settled, give take_delta's bytes.
        let mut twin = mirror.clone();
        let base = world.clone();
        let mut chain = Vec::new();
        for link in 0..3_u16 {
            for f in 0..4_u16 {
                let i = usize::from(link * 4 + f) % ids.len();
                world.get_mut(ids[i]).unwrap().set("gold", f32::from(f)).unwrap();
                world.get_mut(ids[0]).unwrap().set("gold", f32::from(link + f)).unwrap();
                if f == 2 {
                    let id = ids.swap_remove(i);
                    world.remove(id);
                    ids.push(world.insert_entries([("gold", 9.0)]).unwrap());
                }
                since.add(&world, &mut excerpt, 0..0);
            }
            excerpt.settle();
            let delta = mirror.take_delta_from(&excerpt).unwrap();
            assert_eq!(delta.to_bytes(), twin.take_delta(&world).to_bytes(), "link {link}");
            excerpt.clear();
            chain.push(delta);
        }
        let mut loaded = base;
        StorePatch::apply_chain(&chain, &mut loaded).unwrap();
        assert_eq!(loaded, world);
        // The mark holds what a loader of the chain holds (the deltas' bytes, packed).
        assert_eq!(mirror.state().to_bytes(), loaded.to_bytes());
    }

    /// A mark's state read through prototypes (which learns what each instance holds of its
    /// own) reads the instance's new keys once an excerpt or a delta moved it: a patch forgets
    /// what reads learned.
    #[test]
    fn a_marks_reads_through_prototypes_follow_what_it_absorbs() {
        let mut world = Store::new();
        let base = world.insert_entries([("gold", 1.0), ("silver", 2.0)]).unwrap();
        let instance = world.insert_instance(base).unwrap();
        let mut mirror = crate::Mark::blank(&world);
        let mut since = mirror.since();
        let mut excerpt = Excerpt::default();
        since.add(&world, &mut excerpt, 0..u32::MAX);
        excerpt.settle();
        assert!(mirror.absorb(&excerpt));
        excerpt.clear();
        let read = |store: &Store| {
            let resolved = store.resolved(instance).unwrap();
            let column: Vec<f32> = store.column::<f32>("gold").map(|(_, x)| x).collect();
            (resolved.get_float("gold"), resolved.get_float("silver"), column)
        };
        assert_eq!(read(mirror.state()), (Some(1.0), Some(2.0), vec![1.0, 1.0]));
        world.get_mut(instance).unwrap().set("gold", 5.0).unwrap();
        world.remove_inherited(instance, "silver").unwrap();
        since.add(&world, &mut excerpt, 0..0);
        excerpt.settle();
        assert!(mirror.absorb(&excerpt));
        excerpt.clear();
        assert_eq!(read(mirror.state()), (Some(5.0), None, vec![1.0, 5.0]));
        assert_eq!(read(mirror.state()), read(&world));
        // And by a delta: the override cleared, the inherited key back.
        world.clear_override(instance, "gold").unwrap();
        world.clear_override(instance, "silver").unwrap();
        since.add(&world, &mut excerpt, 0..0);
        excerpt.settle();
        mirror.take_delta_from(&excerpt).unwrap();
        assert_eq!(read(mirror.state()), (Some(1.0), Some(2.0), vec![1.0, 1.0]));
    }
}
