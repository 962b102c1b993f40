//! Copies of the store made between frames: at the very end of a frame that asks for one (a
//! [`SaveGame`](crate::SaveGame)'s copy of the whole store; the autosave's copy of the sheets
//! changed since its last, in an autosave's frame, one of the mirror's building, or every
//! frame of a game whose frames follow each other at once) the plugin lends the store to a
//! thread of its own (`datacomp copies`), which makes them ([`Snapshot`], [`Since::add`])
//! while the game waits for its next frame; the store comes back at the next frame's start
//! (`First`), or at the first write before it.
//!
//! The frame pays for the loan (the store moved into an `Arc`, the thread woken: ~15 µs), not
//! for the copy. A frame that starts before the copy is done waits for the rest of it there;
//! a copy not begun yet is made by the thread that wants the store back, so that no one waits
//! for a thread the system has not run.
//!
//! A read of the store while it is lent reads the loaned store (both threads only read it);
//! every write takes it back first ([`DataStore::store_mut`](crate::DataStore::store_mut)).

use std::ops::Range;
use std::panic::AssertUnwindSafe;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};

use datacomp::history::{Excerpt, Since};
use datacomp::{Snapshot, Store};

/// What a loan copies: the autosave's changes (`autosave`), and the whole store once for
/// each save asked for in the frame (`saves`: into the buffers given, or new ones).
pub(crate) struct Lend {
    pub store: Arc<Store>,
    pub autosave: Option<Changes>,
    pub saves: Vec<Option<Snapshot>>,
}

/// The sheets `since` has not seen (and the slots `copy`), added to `excerpt` (which, added
/// to frame after frame, compacts itself: O(the store)).
pub(crate) struct Changes {
    pub since: Since,
    pub excerpt: Excerpt,
    pub copy: Range<u32>,
}

/// A loan's copies made.
pub(crate) struct Copied {
    pub autosave: Option<ChangesCopied>,
    /// A copy of the store for each save.
    pub saves: Vec<Snapshot>,
}

/// The autosave's copy made: [`Since::add`]'s outcome.
pub(crate) struct ChangesCopied {
    pub since: Since,
    pub excerpt: Excerpt,
    /// Whether the copy range reached the store's last slot.
    pub filled: bool,
}

enum Slot {
    /// Not begun: for whichever thread comes first.
    Asked(Lend),
    Running,
    /// Made (`None`: the copy panicked, and what it held is gone), not yet taken.
    Done(Option<Copied>),
    Taken,
}

/// One loan of the store: its copy, asked, running or made.
pub(crate) struct Loan {
    slot: Mutex<Slot>,
    done: Condvar,
}

impl Loan {
    /// A loan of `lend.store` for its copy, handed to the copying thread (or, if that thread
    /// cannot be started, to whichever thread first waits for it).
    pub fn start(lend: Lend) -> Arc<Loan> {
        let loan = Arc::new(Loan { slot: Mutex::new(Slot::Asked(lend)), done: Condvar::new() });
        if let Some(copier) = copier() {
            // A thread gone (it cannot be: it catches the copy's panics) leaves the loan to
            // the waiter.
            let _ = copier.send(Arc::clone(&loan));
        }
        loan
    }

    /// Makes the copy if no thread has begun it.
    fn run(&self) {
        let mut slot = self.lock();
        let lend = match std::mem::replace(&mut *slot, Slot::Running) {
            Slot::Asked(lend) => lend,
            // Begun (or made) by the other thread: put back what was there.
            other => {
                *slot = other;
                return;
            }
        };
        drop(slot);
        // The store's `Arc` is dropped inside, before the copy is said to be done: the thread
        // that waits for it then holds the only one.
        let copied = std::panic::catch_unwind(AssertUnwindSafe(|| copy(lend))).ok();
        *self.lock() = Slot::Done(copied);
        self.done.notify_all();
    }

    /// Returns once the copy is made, making it here if it has not begun.
    pub fn wait(&self) {
        self.run();
        let slot = self.lock();
        let waited = self.done.wait_while(slot, |slot| matches!(slot, Slot::Running));
        drop(waited.unwrap_or_else(PoisonError::into_inner));
    }

    /// The copy, once made (waiting for it, or making it here): `None` if it panicked, or
    /// was taken before.
    pub fn take(&self) -> Option<Copied> {
        self.wait();
        match std::mem::replace(&mut *self.lock(), Slot::Taken) {
            Slot::Done(copied) => copied,
            _ => None,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Slot> {
        self.slot.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn copy(lend: Lend) -> Copied {
    let Lend { store, autosave, saves } = lend;
    let autosave = autosave.map(|Changes { mut since, mut excerpt, copy }| {
        let filled = since.add(&store, &mut excerpt, copy);
        ChangesCopied { since, excerpt, filled }
    });
    let saves = saves.into_iter().map(|buffers| copy_into(buffers, &store)).collect();
    drop(store);
    Copied { autosave, saves }
}

/// A copy of `store`, into `buffers` (a copy made before, whose allocations are reused: a
/// warm memcpy) or new ones.
pub(crate) fn copy_into(buffers: Option<Snapshot>, store: &Store) -> Snapshot {
    match buffers {
        Some(mut snapshot) => {
            snapshot.copy_from(store);
            snapshot
        }
        None => Snapshot::new(store),
    }
}

/// The copying thread's queue, the thread started on first use (`None` where it cannot be).
/// One thread for every app of the process: a copy is short, and the apps' loans are made in
/// turn (a waiting app makes its own if the thread has not begun it).
fn copier() -> Option<&'static Sender<Arc<Loan>>> {
    static COPIER: OnceLock<Option<Sender<Arc<Loan>>>> = OnceLock::new();
    COPIER
        .get_or_init(|| {
            let (send, loans) = std::sync::mpsc::channel::<Arc<Loan>>();
            let thread = std::thread::Builder::new().name("datacomp copies".to_owned());
            let copies = move || {
                no_wakeup_preemption();
                for loan in loans {
                    loan.run();
                }
            };
            thread.spawn(copies).ok()?;
            Some(send)
        })
        .as_ref()
}

/// Puts the calling thread (the copier) under Linux's `SCHED_BATCH` policy, at nice 0: a
/// fair share of the CPU like any thread of the game's, but waking it never preempts the
/// thread that wakes it. Under the normal policy the frame that lent the store lost its core
/// to the copy it had just asked for (`lend` took 43 µs in `frame_times`, 15 µs with a
/// thread that does not preempt); under `SCHED_IDLE` (the save thread's) a copy begun and
/// then put aside for other work would keep a game that wants its store back waiting for
/// an idle core. Elsewhere, nothing.
fn no_wakeup_preemption() {
    #[cfg(target_os = "linux")]
    {
        use thread_priority::{
            NormalThreadSchedulePolicy, ThreadPriority, ThreadPriorityOsValue, ThreadSchedulePolicy,
        };
        let batch = ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Batch);
        let nice_0 = ThreadPriority::Os(ThreadPriorityOsValue::default());
        // Refused (a sandbox without the call): the normal policy, which works, slower.
        let _ = thread_priority::set_thread_priority_and_policy(
            thread_priority::thread_native_id(),
            nice_0,
            batch,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store of 100 sheets as it was at a mark, and after every 7th sheet changed: (the
    /// store, the mark's half that stays with it, the mark, the store at the mark).
    fn world() -> (Store, Since, datacomp::Mark, Store) {
        let mut store = Store::new();
        let ids: Vec<_> =
            (0..100_u16).map(|i| store.insert_entries([("hp", f32::from(i))]).unwrap()).collect();
        let (base, mark) = (store.clone(), store.mark());
        let since = mark.since();
        for &id in ids.iter().step_by(7) {
            store.get_mut(id).unwrap().set("hp", -1.0).unwrap();
        }
        (store, since, mark, base)
    }

    /// A loan of `store` for the changes since `since` and `copy`, and `saves` copies.
    fn lend(store: Arc<Store>, since: &Since, copy: Range<u32>, saves: usize) -> Lend {
        let excerpt = Excerpt::default();
        let autosave = Some(Changes { since: since.clone(), excerpt, copy });
        let saves = (0..saves).map(|_| None).collect();
        Lend { store, autosave, saves }
    }

    /// A loan's copy holds what changed (its delta makes the store from the mark's state) and
    /// each save's copy of the store, whether the thread or the waiter made it; its `Since`
    /// stands at the loan; the waiter then holds the store's only `Arc`.
    #[test]
    fn a_loan_copies_the_changes_and_gives_the_store_back() {
        for via_thread in [true, false] {
            let (store, since, mut mark, mut base) = world();
            let store = Arc::new(store);
            let mut lend = lend(Arc::clone(&store), &since, 0..10, 2);
            // One save into buffers of a copy made before (of another store).
            lend.saves[1] = Some(Snapshot::new(&Store::new()));
            let loan = if via_thread {
                Loan::start(lend)
            } else {
                // Never handed to the thread: the waiter makes it.
                Arc::new(Loan { slot: Mutex::new(Slot::Asked(lend)), done: Condvar::new() })
            };
            let Copied { autosave, saves } = loan.take().expect("made");
            let mut copied = autosave.unwrap();
            assert!(loan.take().is_none(), "taken once");
            assert_eq!(Arc::strong_count(&store), 1, "the loan's Arc dropped");
            assert_eq!(saves.len(), 2);
            assert!(saves.iter().all(|save| save.as_store() == &*store));
            assert!(!copied.filled, "10 of 100 slots");
            // 15 changed, 10 copied (two of them both: counted twice until settled).
            assert_eq!(copied.excerpt.entities(), Some(15 + 10));
            mark.take_delta_from(&copied.excerpt).unwrap().apply(&mut base).unwrap();
            assert!(base == *store, "the copy's delta makes the store");
            let mut after = Excerpt::default();
            copied.since.add(&store, &mut after, 0..0);
            assert_eq!(after.entities(), Some(0), "nothing changed since the loan");
        }
    }

    /// A lent store reads as it was; a write takes it back (waiting for the copy, or
    /// making it), and the copy waits for its taker.
    #[test]
    fn a_write_takes_a_lent_store_back() {
        let (store, since, _, _) = world();
        let id = store.iter().next().unwrap().0;
        let mut data = crate::DataStore::new(store);
        let sheet = crate::Sheet(id);
        for _ in 0..2 {
            let loan = data.lend(|store| lend(store, &since, 0..0, 0));
            assert_eq!(data.get(&sheet).unwrap().get_float("hp"), Some(-1.0));
            data.get_mut(&sheet).unwrap().set("hp", 7.0).unwrap();
            assert_eq!(data.get(&sheet).unwrap().get_float("hp"), Some(7.0));
            assert_eq!(loan.take().unwrap().autosave.unwrap().excerpt.entities(), Some(15));
            data.get_mut(&sheet).unwrap().set("hp", -1.0).unwrap();
        }
        assert_eq!(data.store().len(), 100);
    }

    /// Many loans waited for from many threads at once: each is made once.
    #[test]
    fn loans_waited_for_from_many_threads_are_each_made_once() {
        let (store, since, _, _) = world();
        let store = Arc::new(store);
        let loans: Vec<Arc<Loan>> =
            (0..64).map(|_| Loan::start(lend(Arc::clone(&store), &since, 0..0, 0))).collect();
        let takers: Vec<_> = loans
            .iter()
            .map(|loan| {
                let loan = Arc::clone(loan);
                std::thread::spawn(move || {
                    loan.take().and_then(|copied| copied.autosave).map(|c| c.excerpt.entities())
                })
            })
            .collect();
        for taker in takers {
            assert_eq!(taker.join().unwrap(), Some(Some(15)));
        }
        assert_eq!(Arc::strong_count(&store), 1);
    }
}
