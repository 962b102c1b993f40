//! [`Worlds`]: the one interface over both kinds of storage, and the merging commit built on it.

use datacomp::{Store, StorePatch};

use crate::error::{CommitError, Error};
use crate::ids::{Seq, WorldId};
use crate::merge::{ConflictPolicy, Conflicts, merge_stores};

/// Most tries of [`Worlds::commit_merging`] before it gives up with [`Error::Contended`].
pub const MAX_MERGE_TRIES: u32 = 1000;

/// Worlds kept somewhere (a database: [`PgWorlds`](crate::PgWorlds); a folder of save files:
/// [`FileWorlds`](crate::FileWorlds)), each a store at a [`Seq`], changed only by commits.
pub trait Worlds {
    /// Makes an empty world at seq 0.
    ///
    /// # Errors
    ///
    /// [`Error::WorldExists`], [`Error::BadName`], or the storage's.
    fn create_world(&mut self, name: &str) -> Result<WorldId, Error>;

    /// The world of this name, if there is one.
    ///
    /// # Errors
    ///
    /// The storage's.
    fn world(&mut self, name: &str) -> Result<Option<WorldId>, Error>;

    /// The world as it is now, and its seq: every byte checked as a file load checks it.
    ///
    /// # Errors
    ///
    /// [`Error::NoWorld`]; [`Error::Stored`] naming the entity (or delta, or frame) whose
    /// bytes do not check out; the storage's.
    fn load(&mut self, world: WorldId) -> Result<(Store, Seq), Error>;

    /// Commits `patch`, made from the world at `base` (a store equal to it), all or nothing,
    /// and returns the world's new seq.
    ///
    /// # Errors
    ///
    /// [`CommitError::Conflict`] if the world is past `base` (nothing is written);
    /// [`CommitError::Other`] for a patch that does not apply, or the storage's errors.
    fn commit(&mut self, world: WorldId, base: Seq, patch: &StorePatch)
    -> Result<Seq, CommitError>;

    /// Every accepted commit after `seq`, in order: each one's seq and patch (which applies to
    /// the world at the seq before it, with
    /// [`StorePatch::apply_to_equal`](datacomp::StorePatch::apply_to_equal)).
    ///
    /// # Errors
    ///
    /// [`Error::Stored`] naming a delta that does not read; the storage's.
    fn changes_since(&mut self, world: WorldId, seq: Seq) -> Result<Vec<(Seq, StorePatch)>, Error>;

    /// How [`commit_merging`](Worlds::commit_merging) settles a key both sides changed.
    fn conflict_policy(&self) -> ConflictPolicy {
        ConflictPolicy::default()
    }

    /// Commits `local`, an edit of `base_store` (the world at `base`): when the world has
    /// moved on, reads the changes since, merges them with the local edits entity by entity
    /// and key by key, and tries again. A removal beats a change; a key changed differently on
    /// both sides is a conflict, settled by [`conflict_policy`](Worlds::conflict_policy) and
    /// reported; an entity `local` inserted is inserted under a handle the world has free
    /// (reported when it differs from the local one). Every edit either side made to another
    /// key is kept: no update is lost.
    ///
    /// Returns the world's new seq and the conflicts settled on the way.
    ///
    /// # Errors
    ///
    /// [`Error::Merge`] when the world's data version or key names cannot merge with the local
    /// ones; [`Error::Contended`] after [`MAX_MERGE_TRIES`] lost races; the storage's.
    fn commit_merging(
        &mut self,
        world: WorldId,
        base_store: &Store,
        base: Seq,
        local: &Store,
    ) -> Result<(Seq, Conflicts), Error> {
        let policy = self.conflict_policy();
        let mut report = Conflicts::default();
        let mut patch = StorePatch::diff(base_store, local);
        let mut merged: Option<(Store, Store, Seq)> = None;
        for _ in 0..MAX_MERGE_TRIES {
            let at = merged.as_ref().map_or(base, |m| m.2);
            match self.commit(world, at, &patch) {
                Ok(seq) => return Ok((seq, report)),
                Err(CommitError::Other(e)) => return Err(e),
                Err(CommitError::Conflict { .. }) => {}
            }
            // The world now: the state the last try was made against, with the changes since.
            let (mut current, current_seq) = match merged.take() {
                Some((current, _, seq)) => (current, seq),
                None => (base_store.clone(), base),
            };
            let mut seq = current_seq;
            for (at, change) in self.changes_since(world, current_seq)? {
                change.apply_to_equal(&mut current).map_err(|error| Error::Stored {
                    world,
                    what: format!("delta {at}"),
                    error,
                })?;
                seq = at;
            }
            // Our edits are always local's against base_store, merged again onto the world as
            // it is now: the report is the last merge's, the one committed.
            let (result, found) = merge_stores(base_store, local, &current, policy)?;
            report = found;
            patch = StorePatch::diff(&current, &result);
            merged = Some((current, result, seq));
        }
        Err(Error::Contended { tries: MAX_MERGE_TRIES })
    }
}
