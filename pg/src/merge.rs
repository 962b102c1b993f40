//! The three-way merge of whole stores that [`Worlds::commit_merging`](crate::Worlds::commit_merging)
//! runs when the world moved on: entity by entity, and key by key with
//! [`Blob::merge3`](datacomp::Blob::merge3).

use datacomp::blob::{Conflict, Patch, Side};
use datacomp::handle_map::Id;
use datacomp::{Blob, Store};

use crate::error::Error;

/// Which value a key gets when the local edit and an accepted commit changed it differently.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConflictPolicy {
    /// The value already committed stands (first writer wins): an accepted commit is never
    /// rewritten by a merge, and the local value is reported.
    #[default]
    Committed,
    /// The local value replaces the committed one (last writer wins), reported.
    Local,
}

/// What a merging commit settled: each key changed differently on both sides, and each entity
/// the local store inserted that the world holds under another handle.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Conflicts {
    /// Each conflicting key, with its entity: `ours` is the local value, `theirs` the
    /// committed one; the policy chose between them.
    pub keys: Vec<(Id, Conflict)>,
    /// Entities inserted locally, by their local handle and the handle the world gave them.
    pub moved: Vec<(Id, Id)>,
}

impl Conflicts {
    /// Whether no key conflicted and no inserted entity moved.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty() && self.moved.is_empty()
    }
}

/// `current` with the changes `local` made to `base`: see [`Worlds::commit_merging`](crate::Worlds::commit_merging).
pub(crate) fn merge_stores(
    base: &Store,
    local: &Store,
    current: &Store,
    policy: ConflictPolicy,
) -> Result<(Store, Conflicts), Error> {
    let versions = [base, local, current].map(Store::data_version);
    if versions[1] != versions[0] || versions[2] != versions[0] {
        let [b, l, c] = versions;
        return Err(Error::Merge(format!(
            "data versions differ: base {b}, local {l}, world {c}: migrate them to one first"
        )));
    }
    let mut merged = current.clone();
    merged.merge_key_names(local).map_err(|e| Error::Merge(e.to_string()))?;
    let mut report = Conflicts::default();
    for (id, old) in base.iter() {
        let Some(mine) = local.get(id) else {
            // Removed locally: remove beats change.
            merged.remove(id);
            continue;
        };
        if mine == old {
            continue;
        }
        let Some(theirs) = current.get(id) else {
            // Removed by a commit: stays removed, whatever we changed.
            continue;
        };
        let (old, mine, theirs) = (old.to_blob(), mine.to_blob(), theirs.to_blob());
        let result = match Blob::merge3(&old, &mine, &theirs) {
            Ok(blob) => blob,
            Err(found) => {
                report.keys.extend(found.conflicts().iter().map(|c| (id, c.clone())));
                match policy {
                    ConflictPolicy::Committed => found.resolve(|_| Side::Theirs),
                    ConflictPolicy::Local => found.into_ours(),
                }
            }
        };
        let mut entity = merged.get_mut(id).expect("the world holds it: checked above");
        Patch::between(theirs.as_blob_ref(), result.as_blob_ref())
            .try_apply(&mut entity)
            .map_err(|e| Error::Merge(format!("entity {id}: {e}")))?;
    }
    for (id, blob) in local.iter().filter(|(id, _)| !base.contains(*id)) {
        let new = merged.insert(&blob.to_blob());
        if new != id {
            report.moved.push((id, new));
        }
    }
    Ok((merged, report))
}
