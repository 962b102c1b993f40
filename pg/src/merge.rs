//! The three-way merge of whole stores that [`Worlds::commit_merging`](crate::Worlds::commit_merging)
//! runs when the world moved on: the library's [`merge3`] (entity by entity, key by key,
//! prototype links three-way).

use datacomp::Store;
use datacomp::blob::{Conflict, Side};
use datacomp::handle_map::Id;
use datacomp::store::{LinkConflict, PathConflict, merge3};

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

/// What a merging commit settled: each key and prototype link changed differently on both
/// sides, each path one side made a value and the other an object, and each entity the local store inserted that the world holds under another handle.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Conflicts {
    /// Each conflicting key, with its entity: `ours` is the local value, `theirs` the
    /// committed one; the policy chose between them.
    pub keys: Vec<(Id, Conflict)>,
    /// Each conflicting prototype link: `ours` is the local link, `theirs` the committed one;
    /// the policy chose between them.
    pub links: Vec<LinkConflict>,
    /// Each path one side made a value (`stats`) and the other an object (`stats.health`
    /// added): the policy chose one side's state for every key of the clash, since keeping
    /// both would make an entity no import could read back.
    pub paths: Vec<PathConflict>,
    /// Entities inserted locally, by their local handle and the handle the world gave them.
    pub moved: Vec<(Id, Id)>,
}

impl Conflicts {
    /// Whether no key, link or path conflicted and no inserted entity moved.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
            && self.links.is_empty()
            && self.paths.is_empty()
            && self.moved.is_empty()
    }
}

/// `current` with the changes `local` made to `base`: see [`Worlds::commit_merging`](crate::Worlds::commit_merging).
/// The library's [`merge3`] with the world's store as ours and the local one as theirs.
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
    let prefer = match policy {
        ConflictPolicy::Committed => Side::Ours,
        ConflictPolicy::Local => Side::Theirs,
    };
    let (merged, done) =
        merge3(base, current, local, prefer).map_err(|e| Error::Merge(e.to_string()))?;
    // The library's ours is the world's: turned round, so that ours is the local side.
    let keys = done.conflicts.into_iter().map(|(id, c)| {
        let Conflict { key, base, ours, theirs } = c;
        (id, Conflict { key, base, ours: theirs, theirs: ours })
    });
    let links = done.link_conflicts.into_iter().map(|c| LinkConflict {
        ours: c.theirs,
        theirs: c.ours,
        ..c
    });
    let moved = done.inserted.into_iter().filter(|(id, new)| id != new);
    // A path conflict names no side's value: nothing to turn round.
    let report = Conflicts {
        keys: keys.collect(),
        links: links.collect(),
        paths: done.path_conflicts,
        moved: moved.collect(),
    };
    Ok((merged, report))
}

#[cfg(test)]
mod tests {
    use datacomp::Store;
    use datacomp::store::LinkConflict;

    use super::{ConflictPolicy, merge_stores};

    /// A merging commit keeps both sides' prototype links, and a link both changed is a
    /// conflict turned round to the local side, settled by the policy.
    #[test]
    fn a_merging_commit_keeps_links_and_reports_a_link_conflict() {
        let mut base = Store::new();
        let orc = base.insert_entries([("name", "Orc")]).unwrap();
        let elf = base.insert_entries([("name", "Elf")]).unwrap();
        let (a, b) = (base.insert_instance(orc).unwrap(), base.insert_instance(orc).unwrap());
        let (mut local, mut current) = (base.clone(), base.clone());
        local.set_prototype(a, Some(elf)).unwrap();
        current.set_prototype(b, None).unwrap();
        local.set_prototype(b, Some(elf)).unwrap();
        let (merged, found) =
            merge_stores(&base, &local, &current, ConflictPolicy::Committed).unwrap();
        assert_eq!((merged.prototype(a), merged.prototype(b)), (Some(elf), None));
        let conflict = LinkConflict { id: b, base: Some(orc), ours: Some(elf), theirs: None };
        assert_eq!(found.links, [conflict]);
        let (merged, _) = merge_stores(&base, &local, &current, ConflictPolicy::Local).unwrap();
        assert_eq!(merged.prototype(b), Some(elf));
    }
}
