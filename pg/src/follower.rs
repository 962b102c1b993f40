//! [`Follower`]: a replica of one world, kept current from its change feed.

use std::time::{Duration, Instant};

use datacomp::Store;
use postgres::fallible_iterator::FallibleIterator;

use crate::error::Error;
use crate::ids::{Seq, WorldId};
use crate::pg::{CHANNEL, PgWorlds};
use crate::worlds::Worlds;

/// A replica [`Store`] of one world, kept current by applying the world's change feed: woken
/// by `NOTIFY` (the payload names only the world and the seq: notifications are small and not
/// replayed, so the feed is what is read), or, on a server without `LISTEN` (CockroachDB), by
/// polling [`changes_since`](Worlds::changes_since) every `poll` interval.
///
/// It listens before it loads, so no commit falls between the load and the first wake-up.
pub struct Follower {
    worlds: PgWorlds,
    world: WorldId,
    store: Store,
    seq: Seq,
    poll: Duration,
    // Whether it listens for notifications (else it polls).
    listen: bool,
}

impl Follower {
    /// Connects (a connection of its own, which it listens on), and loads the world.
    ///
    /// # Errors
    ///
    /// Those of [`PgWorlds::connect`] and [`Worlds::load`].
    pub fn new(params: &str, world: WorldId) -> Result<Follower, Error> {
        Follower::start(params, world, true)
    }

    /// A follower that never listens and reads the feed every `poll` interval: what
    /// [`new`](Follower::new) makes on a server without `LISTEN` (CockroachDB), and on any
    /// server where notifications are not wanted.
    ///
    /// # Errors
    ///
    /// Those of [`PgWorlds::connect`] and [`Worlds::load`].
    pub fn polling(params: &str, world: WorldId, poll: Duration) -> Result<Follower, Error> {
        let mut follower = Follower::start(params, world, false)?;
        follower.poll = poll;
        Ok(follower)
    }

    fn start(params: &str, world: WorldId, listen: bool) -> Result<Follower, Error> {
        let mut worlds = PgWorlds::connect(params)?;
        let listen = listen && worlds.notifies();
        if listen {
            worlds.client().batch_execute(&format!("LISTEN {CHANNEL}"))?;
        }
        let (store, seq) = worlds.load(world)?;
        Ok(Follower { worlds, world, store, seq, poll: Duration::from_millis(100), listen })
    }

    /// Sets how often [`wait`](Follower::wait) reads the feed when there are no notifications
    /// (100 ms at first), and how long it waits for one before reading the feed anyway.
    pub fn set_poll(&mut self, poll: Duration) {
        self.poll = poll;
    }

    /// The replica.
    #[must_use]
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The seq the replica is at.
    #[must_use]
    pub fn seq(&self) -> Seq {
        self.seq
    }

    /// Applies every change after the replica's seq; returns how many.
    ///
    /// # Errors
    ///
    /// [`Error::Stored`] naming a delta that does not read or apply (the replica keeps the
    /// changes before it), and the database's.
    pub fn catch_up(&mut self) -> Result<usize, Error> {
        let changes = self.worlds.changes_since(self.world, self.seq)?;
        let n = changes.len();
        for (seq, patch) in changes {
            patch.apply_to_equal(&mut self.store).map_err(|error| Error::Stored {
                world: self.world,
                what: format!("delta {seq}"),
                error,
            })?;
            self.seq = seq;
        }
        Ok(n)
    }

    /// Waits until the world is past the replica's seq or `timeout` has passed, then catches
    /// up; returns how many changes it applied (0 on a timeout with none).
    ///
    /// # Errors
    ///
    /// Those of [`catch_up`](Follower::catch_up).
    pub fn wait(&mut self, timeout: Duration) -> Result<usize, Error> {
        let end = Instant::now() + timeout;
        loop {
            let n = self.catch_up()?;
            let left = end.saturating_duration_since(Instant::now());
            if n > 0 || left.is_zero() {
                return Ok(n);
            }
            let nap = left.min(self.poll);
            if self.listen {
                let nap_end = Instant::now() + nap;
                let mut wakes = self.worlds.client().notifications();
                let mut wakes = wakes.timeout_iter(nap);
                // Any notification for this world past our seq, or the nap's end (each wait
                // is up to `nap`: other worlds' notifications must not keep it waiting).
                while let Some(note) = wakes.next()? {
                    if is_past(note.payload(), self.world, self.seq) || Instant::now() >= nap_end {
                        break;
                    }
                }
            } else {
                std::thread::sleep(nap);
            }
        }
    }
}

/// Whether a payload `"<world> <seq>"` says `world` is past `seq`; a payload of another form
/// (from another program on the channel) says nothing.
fn is_past(payload: &str, world: WorldId, seq: Seq) -> bool {
    let mut parts = payload.split(' ');
    let (Some(w), Some(s), None) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    w.parse() == Ok(world.0) && s.parse::<u64>().is_ok_and(|s| s > seq.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads() {
        assert!(is_past("7 12", WorldId(7), Seq(11)));
        assert!(!is_past("7 11", WorldId(7), Seq(11)));
        assert!(!is_past("8 12", WorldId(7), Seq(11)));
        assert!(!is_past("7 12 x", WorldId(7), Seq(11)));
        assert!(!is_past("7", WorldId(7), Seq(11)));
        assert!(!is_past("7 -1", WorldId(7), Seq(0)));
    }
}
