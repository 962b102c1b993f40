//! Change tracking: a stamp per slot and a log of first changes, so that what changed since a
//! [`Mark`](crate::Mark) is found in time proportional to the changes. It lives inside the
//! store because every write stamps it (O(1), nothing on reads); the marks and the answers built
//! on it are `crate::history`'s.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};

/// The source of store identities for marks: 0 is "none yet".
static NEXT_STORE_ID: AtomicU64 = AtomicU64::new(1);

/// Log entries kept at least, whatever the store's size.
const MIN_LOG: usize = 1024;

/// One slot's first change in an epoch.
#[derive(Clone, Copy, Debug)]
struct Logged {
    epoch: u64,
    slot: u32,
}

/// What a store records for change tracking: which slots changed in which epoch.
///
/// Each [`Store::mark`] starts an epoch. A write stamps its slot with the current epoch, and the
/// first write of a slot in an epoch also appends the slot to the log, so the slots changed
/// since a mark are the log's tail: O(1) per write, nothing on reads, and nothing at all until
/// the store is first marked.
///
/// ```text
///  epoch 3 (current)    stamps (per slot)   ┌───┬───┬───┬───┬───┐
///  horizon 2                                │ 1 │ 3 │ 0 │ 2 │ 3 │
///                                           └───┴───┴───┴───┴───┘
///  log (epoch, slot), in epoch order: (2,1) (2,3) (3,4) (3,1)
///  changed since the mark of epoch 2: slots 3, 4, 1 (an entry counts where it is its slot's
///  stamp, so each slot once)
/// ```
#[derive(Debug, Default)]
pub(crate) struct Tracker {
    /// This store's identity in its marks; 0 until the first mark.
    id: AtomicU64,
    /// The current epoch: 0 until the first mark (no tracking), then bumped by every mark.
    /// Atomic so that [`Store::mark`] and [`History::commit`](crate::History::commit) take
    /// `&Store`.
    epoch: AtomicU64,
    // INVARIANT: `stamps[s]` is at least the epoch of slot `s`'s last change since `horizon`
    // (0 for a slot past the end).
    stamps: Vec<u64>,
    // INVARIANT: in epoch order; holds `(e, s)` for every slot `s` changed in each epoch
    // `e >= horizon`.
    log: VecDeque<Logged>,
    /// Marks before this epoch cannot be answered from the log: it was trimmed, or everything
    /// changed at once (a restore, a delta applied, a clear).
    horizon: u64,
    // INVARIANT: grows with every change of the store, tracked or not (`Store::touch`,
    // `touch`, `touch_all`, `count_write`): what is made from the store's contents (the
    // import's index of `$id`s) stays valid while it is the same. 0 for a new store.
    writes: u64,
}

impl Clone for Tracker {
    /// A clone is another store, which no mark has seen: it starts untracked.
    fn clone(&self) -> Tracker {
        Tracker::new()
    }
}

impl Tracker {
    pub(crate) const fn new() -> Tracker {
        Tracker {
            id: AtomicU64::new(0),
            epoch: AtomicU64::new(0),
            stamps: Vec::new(),
            log: VecDeque::new(),
            horizon: 0,
            writes: 0,
        }
    }

    /// A number that grows with every change of the store (see the field).
    pub(crate) fn writes(&self) -> u64 {
        self.writes
    }

    /// Counts a change that no stamp records (an untracked store's write).
    #[inline]
    pub(crate) fn count_write(&mut self) {
        self.writes += 1;
    }

    /// Whether a mark was ever taken, so that writes must be stamped.
    #[inline]
    pub(crate) fn is_tracking(&mut self) -> bool {
        *self.epoch.get_mut() != 0
    }

    /// Stamps slot `slot` of a store of `slots` slots as changed in the current epoch.
    // Inlined always, its rare paths out of line: a call cost ~25 instructions of its ~50 a
    // write (callgrind, an autosaving game's 1,000 writes a frame).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn touch(&mut self, slot: usize, slots: usize) {
        self.writes += 1;
        let epoch = *self.epoch.get_mut();
        if epoch == 0 {
            return;
        }
        let Some(stamp) = self.stamps.get_mut(slot) else {
            return self.touch_past_stamps(slot, slots, epoch);
        };
        if *stamp == epoch {
            return;
        }
        *stamp = epoch;
        let trim_at = MIN_LOG.max(2 * self.stamps.len());
        if self.log.len() == self.log.capacity() || self.log.len() >= trim_at {
            return self.log_rarely(slot, slots, epoch);
        }
        self.log.push_back(Logged { epoch, slot: slot as u32 });
    }

    /// [`touch`](Tracker::touch) of a slot past the stamps.
    #[cold]
    #[inline(never)]
    fn touch_past_stamps(&mut self, slot: usize, slots: usize, epoch: u64) {
        self.stamps.resize(slot + 1, 0);
        self.stamps[slot] = epoch;
        self.log_rarely(slot, slots, epoch);
    }

    /// The log's entry for a slot just stamped, the log grown or trimmed first if it must.
    #[cold]
    #[inline(never)]
    fn log_rarely(&mut self, slot: usize, slots: usize, epoch: u64) {
        if self.log.len() == self.log.capacity() {
            self.grow_log(MIN_LOG.max(2 * slots));
        }
        self.log.push_back(Logged { epoch, slot: slot as u32 });
        if self.log.len() > MIN_LOG.max(2 * self.stamps.len()) {
            self.trim();
        }
    }

    /// Gives the full log room for all it may hold before a trim (`most` + 1 entries, from the
    /// store's slots), its pages touched now: one allocation and one fill when tracking
    /// starts (16 bytes a slot twice over: 3.2 MB, about 2 ms, for 100,000 slots), rather
    /// than a doubling now and then (a copy of the whole log, in the frame of whichever
    /// write crossed a power of two) and page faults in every frame that writes while the
    /// log fills (measured in an autosaving game, 100,000 sheets, 1,000 changed a frame: 4
    /// faults a frame, and now and then 517 in one frame, 3 ms; with this, none).
    #[cold]
    fn grow_log(&mut self, most: usize) {
        let len = self.log.len();
        let room = (most + 1).max(2 * len);
        self.log.reserve_exact(room - len);
        self.log.resize(self.log.capacity(), Logged { epoch: 0, slot: 0 });
        self.log.truncate(len);
    }

    /// Drops the older half of the log (at least one whole epoch), moving the horizon past
    /// it: O(1) amortized per entry, and the log stays O(slots). A ring, so that the drop
    /// moves no entry: the write that trims pays no copy of the kept half (a frame's hitch).
    #[cold]
    fn trim(&mut self) {
        let dropped = self.log[self.log.len() / 2].epoch;
        let keep = self.log.partition_point(|e| e.epoch <= dropped);
        self.log.drain(..keep);
        self.horizon = self.horizon.max(dropped + 1);
    }

    /// Everything changed at once: marks taken so far see every slot as changed.
    pub(crate) fn touch_all(&mut self) {
        self.writes += 1;
        let epoch = *self.epoch.get_mut();
        if epoch != 0 {
            self.log.clear();
            self.horizon = epoch + 1;
        }
    }

    /// This store's identity, given on first use.
    pub(crate) fn id(&self) -> u64 {
        let id = self.id.load(Ordering::Relaxed);
        if id != 0 {
            return id;
        }
        let new = NEXT_STORE_ID.fetch_add(1, Ordering::Relaxed);
        match self.id.compare_exchange(0, new, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => new,
            Err(existing) => existing,
        }
    }

    /// Starts a new epoch and returns it: writes from now on are stamped with it (or later).
    pub(crate) fn next_epoch(&self) -> u64 {
        self.epoch.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// The slots changed since `epoch` of store `id`, each once, in no particular order; `None`
    /// when the log cannot tell (another store's mark, or one past the horizon).
    pub(crate) fn changed_since(&self, id: u64, epoch: u64) -> Option<Vec<u32>> {
        let mut changed = Vec::new();
        self.changed_since_into(id, epoch, &mut changed).then_some(changed)
    }

    /// [`changed_since`](Tracker::changed_since) into `out` (cleared first), reusing its
    /// allocation: `false` (and `out` empty) when the log cannot tell.
    pub(crate) fn changed_since_into(&self, id: u64, epoch: u64, out: &mut Vec<u32>) -> bool {
        out.clear();
        if id == 0 || self.id.load(Ordering::Relaxed) != id || epoch < self.horizon.max(1) {
            return false;
        }
        let start = self.log.partition_point(|e| e.epoch < epoch);
        out.extend(
            self.log
                .range(start..)
                .filter(|e| self.stamps[e.slot as usize] == e.epoch)
                .map(|e| e.slot),
        );
        true
    }
}

#[cfg(test)]
mod tests {
    use crate::Store;

    /// The log is allocated once, when the first tracked write comes, with room for all it
    /// holds before a trim: it never grows again (a growth copied it whole into new pages,
    /// in the frame of whichever write crossed a power of two), however many writes follow,
    /// and what changed since a mark is still found.
    #[test]
    fn the_log_is_allocated_once_with_room_for_all_it_holds() {
        let mut store = Store::new();
        let ids: Vec<_> =
            (0..5000_u16).map(|i| store.insert_entries([("hp", f32::from(i))]).unwrap()).collect();
        let mut mark = store.mark();
        assert_eq!(store.tracker().log.capacity(), 0, "nothing before the first tracked write");
        store.get_mut(ids[0]).unwrap().set("hp", -1.0).unwrap();
        let room = store.tracker().log.capacity();
        assert!(room > 2 * 5000, "{room}");
        for round in 0..8_u8 {
            for (i, &id) in (0_u16..).zip(&ids).skip(usize::from(round) * 300).take(3000) {
                let hp = 10_000.0 * f32::from(round + 1) + f32::from(i);
                store.get_mut(id).unwrap().set("hp", hp).unwrap();
            }
            assert_eq!(store.tracker().log.capacity(), room, "round {round}");
            let changes = mark.changes(&store);
            let written = 3000.min(5000 - usize::from(round) * 300);
            assert_eq!(changes.changed().len(), written, "round {round}");
            mark = store.mark();
        }
    }
}
