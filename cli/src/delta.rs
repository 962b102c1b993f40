//! `diff`, `apply` and `merge`: what changed between saves, deltas, and three-way merges.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use datacomp::blob::Patch;
use datacomp::blob::Side;
use datacomp::format::StoreError;
use datacomp::{Error, Id, Key, LoadError, Store, StorePatch};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::json;

use crate::files::{load, lock_if_exists, lock_later, not_an_input, save, saved_len};
use crate::output::{
    Bytes, Failure, JsonArray, json_line, key_name as name, plural, shown, value_json,
};

/// Entries as a JSON object by key name (sorted).
fn entries_by_name(
    stores: &[&Store],
    entries: impl Iterator<Item = (Key, serde_json::Value)>,
) -> serde_json::Value {
    let named: BTreeMap<String, serde_json::Value> =
        entries.map(|(key, value)| (name(stores, key), value)).collect();
    json!(named)
}

/// An entity's changes as JSON: `{"id", "set": {name: value}, "removed": [names]}`.
fn patch_json(stores: &[&Store], id: Id, patch: &Patch) -> serde_json::Value {
    let set = entries_by_name(stores, patch.sets().iter().map(|(k, v)| (k, value_json(v))));
    let mut removed: Vec<String> = patch.removals().map(|key| name(stores, key)).collect();
    removed.sort();
    json!({ "id": id.to_string(), "set": set, "removed": removed })
}

/// Deltas a chain may hold: each link's base check is a pass over the store, so a chain costs
/// its length times the store's size. A longer chain is applied in parts (or rebased: saved
/// whole, with later deltas made from that save).
pub const MAX_CHAIN: usize = 1024;

/// The save at `base_path` with the deltas at `chain` applied in order: each must have been
/// made from the store the ones before it give. Nothing is kept of a chain that breaks.
fn load_chain(base_path: &Path, chain: &[PathBuf]) -> Result<(Store, usize, usize), Failure> {
    if chain.len() > MAX_CHAIN {
        return Err(Failure::at(
            chain[MAX_CHAIN].display(),
            format!(
                "a chain holds at most {MAX_CHAIN} deltas, and this one has {}: apply it in \
                 parts (the first {MAX_CHAIN} to a new save, then the rest to that)",
                chain.len()
            ),
        ));
    }
    let mut store = load(base_path)?;
    let (mut inserted, mut changed) = (0, 0);
    for (i, delta_path) in chain.iter().enumerate() {
        let link = || {
            if chain.len() == 1 {
                String::new()
            } else {
                format!("delta {} of {} in the chain: ", i + 1, chain.len())
            }
        };
        let delta = StorePatch::load(delta_path).map_err(|e| match e {
            Error::Io(e) => Failure::at(delta_path.display(), format!("cannot read: {e}")),
            e => Failure::at(delta_path.display(), format!("{}{e}", link())),
        })?;
        delta.apply(&mut store).map_err(|e| {
            let after = chain[i.saturating_sub(1)].display().to_string();
            let after = datacomp::text::Shortened(&after);
            let hint = match e {
                LoadError::Store(StoreError::DeltaBase { .. }) if chain.len() > 1 => format!(
                    "; it was not made from {} (a link is missing or out of order, or the base \
                     changed)",
                    if i == 0 { "the base".to_owned() } else { format!("what {after} gives") }
                ),
                _ => String::new(),
            };
            Failure::at(delta_path.display(), format!("{}{e}{hint}", link()))
        })?;
        inserted += delta.inserted();
        changed += delta.changed();
    }
    Ok((store, inserted, changed))
}

/// `datacomp diff`: the changes from `base` (with the deltas of `chain` applied) to `target`
/// as JSON, keys by name; with `output`, also the delta file: the next link of the chain.
pub fn diff(
    base_path: &Path,
    chain: &[PathBuf],
    target_path: &Path,
    output: Option<&Path>,
    compact: bool,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    if let Some(output) = output {
        // A link of the delta's own chain too: the chain would lose it.
        let inputs = chain.iter().map(PathBuf::as_path).chain([base_path, target_path]);
        not_an_input(output, &inputs.collect::<Vec<_>>(), "the delta")?;
    }
    let file = output.map(lock_if_exists).transpose()?.flatten();
    let (base, target) = (load_chain(base_path, chain)?.0, load(target_path)?);
    // One hash under two names: its changes could be shown under neither name alone, so the
    // two files are refused, as `merge` refuses them.
    // Checked node by node through the two name trees: spelling every name out in both took
    // time quadratic in the tree's depth.
    base.check_key_names(&target)
        .map_err(|collision| Failure::at(target_path.display(), collision))?;
    let file = output.map(|output| lock_later(file, output)).transpose()?;
    if let (Some(output), Some(file)) = (output, &file) {
        StorePatch::diff(&base, &target)
            .save(file.path())
            .map_err(|e| Failure::at(output.display(), format!("cannot write: {e}")))?;
    }
    // Written as it is made, one entity's JSON at a time: a document of every entity held at
    // once took 3.4 GB for a million changed entities.
    let doc = DiffJson { base: &base, target: &target };
    if compact {
        serde_json::to_writer(&mut *out, &doc).map_err(std::io::Error::from)?;
    } else {
        serde_json::to_writer_pretty(&mut *out, &doc).map_err(std::io::Error::from)?;
    }
    writeln!(out)?;
    Ok(())
}

/// What `diff` prints: `{"changed": [...], "inserted": [...], "removed": [...]}` (members in
/// name order, as a `serde_json` object has them), each entity's JSON made as it is written.
struct DiffJson<'a> {
    base: &'a Store,
    target: &'a Store,
}

impl Serialize for DiffJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (base, target) = (self.base, self.target);
        let stores = [target, base];
        let changed = JsonArray(|| {
            target.iter().filter_map(move |(id, blob)| {
                let patch = Patch::between(base.get(id)?, blob);
                (!patch.is_empty()).then(|| patch_json(&stores, id, &patch))
            })
        });
        let inserted = JsonArray(|| {
            target.iter().filter(|(id, _)| !base.contains(*id)).map(move |(id, blob)| {
                let entries = blob.iter().map(|(k, v)| (k, value_json(v)));
                json!({ "id": id.to_string(), "entries": entries_by_name(&stores, entries) })
            })
        });
        let removed = JsonArray(|| {
            base.iter().filter(|(id, _)| !target.contains(*id)).map(|(id, _)| id.to_string())
        });
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("changed", &changed)?;
        map.serialize_entry("inserted", &inserted)?;
        map.serialize_entry("removed", &removed)?;
        map.end()
    }
}

/// `datacomp apply`: a delta file, or a chain of them, applied to the save the first was made
/// from (each later one made from the result of those before it), written to `output`.
pub fn apply(
    base_path: &Path,
    chain: &[PathBuf],
    output: &Path,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    not_an_input(output, chain, "the save")?;
    let file = lock_if_exists(output)?;
    let (mut store, inserted, changed) = load_chain(base_path, chain)?;
    let file = lock_later(file, output)?;
    save(&file, &mut store, output)?;
    if json {
        let line = json!({
            "output": output.display().to_string(),
            "entities": store.len(),
            "inserted": inserted,
            "changed": changed,
            "deltas": chain.len(),
            "file_bytes": saved_len(&file),
        });
        return json_line(out, &line);
    }
    let by =
        if chain.len() == 1 { "the delta".to_owned() } else { format!("{} deltas", chain.len()) };
    writeln!(
        out,
        "{}: {} ({inserted} inserted, {changed} changed by {by}), {}",
        shown(output),
        plural(store.len(), "entity", "entities"),
        Bytes(saved_len(&file)),
    )?;
    Ok(())
}

/// `datacomp merge`: `ours` with the changes `theirs` made to `base`.
///
/// The library's `store::merge3`: entity by entity, by handle: one they removed is removed
/// (remove beats change); one both kept is merged key by key; one they inserted is inserted
/// under a new handle, since ours may have given its handle to another entity (the new
/// handles are printed); prototype links three-way. Conflicting keys and links fail the
/// merge, listed, unless `prefer` picks a side; merged links that would read through a
/// removed entity, make a cycle or a chain past the limit fail it whatever `prefer` says.
pub fn merge(
    paths: [&Path; 3],
    output: &Path,
    prefer: Option<Side>,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let file = lock_if_exists(output)?;
    let [base, ours, theirs] = paths.map(load);
    let (base, ours, theirs) = (base?, ours?, theirs?);
    // A save made apart from BASE (another import) shares none of its history: its entities
    // under BASE's handles are other entities, and a merge would take them for edits. A save
    // of format 1.3 or before has no lineage, and passes unchecked.
    for (side, store) in [(paths[1], &ours), (paths[2], &theirs)] {
        if let (Some(from), Some(found)) = (base.lineage(), store.lineage())
            && from != found
        {
            return Err(Failure::at(
                shown(side),
                format!(
                    "does not descend from {}: they were made apart (lineage {found:032x},                      not {from:032x}), so there is no common ancestor to merge from",
                    shown(paths[0])
                ),
            ));
        }
    }
    // Keys of one data version mean other things in another: merging across a migration
    // would mix them.
    let versions = [&base, &ours, &theirs].map(Store::data_version);
    if versions.iter().any(|&v| v != versions[0]) {
        let [b, o, t] = versions;
        let message = format!(
            "data versions differ: base {b}, ours {o}, theirs {t}: migrate all three to one \
             version first"
        );
        return Err(Failure::at(paths[1].display(), message));
    }
    let file = lock_later(file, output)?;
    let (mut merged, done) =
        datacomp::store::merge3(&base, &ours, &theirs, prefer.unwrap_or(Side::Ours)).map_err(
            |e| match e {
                Error::Key(_) => Failure::at(paths[2].display(), e),
                _ => Failure::at(paths[1].display(), format!("the merged links: {e}")),
            },
        )?;
    let mut report = Vec::new();
    report.extend(done.merged.iter().map(|id| format!("{id}: merged")));
    report.extend(done.removed.iter().map(|id| format!("{id}: removed by theirs")));
    report.extend(
        done.stays_removed
            .iter()
            .map(|id| format!("{id}: removed by ours, changed by theirs: stays removed")),
    );
    report.extend(
        done.inserted.iter().map(|(id, new)| format!("{id}: inserted by theirs, as {new}")),
    );
    let mut conflicts: Vec<String> = done
        .conflicts
        .iter()
        .map(|(id, c)| {
            let key = name(&[&merged, &theirs, &base], c.key);
            let key = datacomp::text::Shortened(&key);
            format!(
                "{id}: {key}: ours {}, theirs {}",
                value_json(c.ours.as_value()),
                value_json(c.theirs.as_value())
            )
        })
        .collect();
    let link = |p: Option<Id>| p.map_or_else(|| "none".to_owned(), |p| p.to_string());
    conflicts.extend(
        done.link_conflicts.iter().map(|c| {
            format!("{}: prototype: ours {}, theirs {}", c.id, link(c.ours), link(c.theirs))
        }),
    );

    conflicts.extend(done.path_conflicts.iter().map(|c| {
        let [value, under] = [c.value, c.under].map(|key| name(&[&merged, &theirs, &base], key));
        let (value, under) = (datacomp::text::Shortened(&value), datacomp::text::Shortened(&under));
        format!("{}: {value}: a value on one side, holds {under} on the other", c.id)
    }));

    if !conflicts.is_empty() && prefer.is_none() {
        return Err(Failure::at(
            paths[1].display(),
            format!(
                "{} (changed differently on both sides; --prefer ours|theirs picks a side): {}",
                plural(conflicts.len(), "conflicting key", "conflicting keys"),
                conflicts.join("; ")
            ),
        ));
    }
    save(&file, &mut merged, output)?;
    if json {
        let line = json!({
            "output": output.display().to_string(),
            "entities": merged.len(),
            "report": report,
            "conflicts": conflicts,
            "prefer": match prefer {
                Some(Side::Ours) => "ours",
                Some(Side::Theirs) => "theirs",
                _ => "none",
            },
        });
        return json_line(out, &line);
    }
    for line in report.iter().chain(&conflicts) {
        writeln!(out, "{line}")?;
    }
    writeln!(
        out,
        "{}: {}, {}{}",
        shown(output),
        plural(merged.len(), "entity", "entities"),
        plural(conflicts.len(), "conflicting key", "conflicting keys"),
        match prefer {
            Some(Side::Ours) if !conflicts.is_empty() => " (ours kept)",
            Some(Side::Theirs) if !conflicts.is_empty() => " (theirs taken)",
            _ => "",
        }
    )?;
    Ok(())
}
