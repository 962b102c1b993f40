//! `diff`, `apply` and `merge`: what changed between saves, deltas, and three-way merges.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use datacomp::{Blob, BlobRef, Error, Id, Key, KeyCollision, Patch, Side, Store, StorePatch};
use serde_json::json;

use crate::files::{load, lock_if_exists, lock_later, save, saved_len};
use crate::output::{Bytes, Failure, key_name as name, shown, value_json};

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

/// `datacomp diff`: the changes from `base` to `target` as JSON, keys by name; with `output`,
/// also the delta file.
pub fn diff(
    base_path: &Path,
    target_path: &Path,
    output: Option<&Path>,
    compact: bool,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let file = output.map(lock_if_exists).transpose()?.flatten();
    let (base, target) = (load(base_path)?, load(target_path)?);
    // One hash under two names: its changes could be shown under neither name alone, so the
    // two files are refused, as `merge` refuses them.
    for (key, _) in base.key_names() {
        let (before, after) = (base.key_label(key), target.key_label(key));
        if target.key_name(key).is_some() && before != after {
            let collision =
                KeyCollision { key, name: after.into_owned(), known: before.into_owned() };
            return Err(Failure::at(target_path.display(), collision));
        }
    }
    let file = output.map(|output| lock_later(file, output)).transpose()?;
    let stores = [&target, &base];
    let mut inserted = Vec::new();
    let mut changed = Vec::new();
    for (id, blob) in target.iter() {
        match base.get(id) {
            None => {
                let entries = blob.iter().map(|(k, v)| (k, value_json(v)));
                inserted.push(
                    json!({ "id": id.to_string(), "entries": entries_by_name(&stores, entries) }),
                );
            }
            Some(old) => {
                let patch = Patch::between(old, blob);
                if !patch.is_empty() {
                    changed.push(patch_json(&stores, id, &patch));
                }
            }
        }
    }
    let removed: Vec<String> =
        base.iter().filter(|(id, _)| !target.contains(*id)).map(|(id, _)| id.to_string()).collect();
    if let (Some(output), Some(file)) = (output, &file) {
        Store::diff(&base, &target)
            .save(file.path())
            .map_err(|e| Failure::at(output.display(), format!("cannot write: {e}")))?;
    }
    let doc = json!({ "inserted": inserted, "removed": removed, "changed": changed });
    let text = if compact {
        doc.to_string()
    } else {
        serde_json::to_string_pretty(&doc).unwrap_or_default()
    };
    writeln!(out, "{text}")?;
    Ok(())
}

/// `datacomp apply`: a delta file applied to the save it was made from, written to `output`.
pub fn apply(
    base_path: &Path,
    delta_path: &Path,
    output: &Path,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let file = lock_if_exists(output)?;
    let mut store = load(base_path)?;
    let delta = StorePatch::load(delta_path).map_err(|e| match e {
        Error::Io(e) => Failure::at(delta_path.display(), format!("cannot read: {e}")),
        e => Failure::at(delta_path.display(), e),
    })?;
    let file = lock_later(file, output)?;
    delta.apply(&mut store).map_err(|e| Failure::at(delta_path.display(), e))?;
    save(&file, &mut store, output)?;
    writeln!(
        out,
        "{}: {} entities ({} inserted, {} changed by the delta), {}",
        shown(output),
        store.len(),
        delta.inserted(),
        delta.changed(),
        Bytes(saved_len(&file)),
    )?;
    Ok(())
}

/// `datacomp merge`: `ours` with the changes `theirs` made to `base`.
///
/// Entity by entity, by handle: one they removed is removed (remove beats change); one both
/// kept is merged key by key with `Blob::merge3`; one they inserted is inserted under a new
/// handle, since ours may have given its handle to another entity (the new handles are
/// printed). Conflicting keys fail the merge, listed, unless `prefer` picks a side.
pub fn merge(
    paths: [&Path; 3],
    output: &Path,
    prefer: Option<Side>,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let file = lock_if_exists(output)?;
    let [base, ours, theirs] = paths.map(load);
    let (base, mut merged, theirs) = (base?, ours?, theirs?);
    let file = lock_later(file, output)?;
    let mut conflicts = Vec::new();
    let mut report = Vec::new();

    // The same hash under two names is two keys that one blob cannot tell apart: refused
    // before any entity is merged. Names are taken whole (a name may hold a dot).
    merged.merge_key_names(&base).map_err(|e| Failure::at(paths[0].display(), e))?;
    merged.merge_key_names(&theirs).map_err(|e| Failure::at(paths[2].display(), e))?;
    for (id, old) in base.iter() {
        let Some(new) = theirs.get(id) else {
            if merged.remove(id) {
                report.push(format!("{id}: removed by theirs"));
            }
            continue;
        };
        if new == old {
            continue;
        }
        let Some(mine) = merged.get(id).map(BlobRef::to_blob) else {
            report.push(format!("{id}: removed by ours, changed by theirs: stays removed"));
            continue;
        };
        let result = match Blob::merge3(&old.to_blob(), &mine, &new.to_blob()) {
            Ok(blob) => blob,
            Err(found) => {
                for c in found.conflicts() {
                    let key = name(&[&merged, &theirs, &base], c.key);
                    let key = datacomp::text::Shortened(&key);
                    conflicts.push(format!(
                        "{id}: {key}: ours {}, theirs {}",
                        value_json(c.ours.as_value()),
                        value_json(c.theirs.as_value())
                    ));
                }
                match prefer {
                    Some(side) => found.resolve(|_| side),
                    None => continue,
                }
            }
        };
        let mut entity = merged.get_mut(id).expect("ours has it: checked above");
        Patch::between(mine.as_blob_ref(), result.as_blob_ref()).apply(&mut entity);
        report.push(format!("{id}: merged"));
    }
    for (id, blob) in theirs.iter().filter(|(id, _)| !base.contains(*id)) {
        let new = merged.insert(&blob.to_blob());
        report.push(format!("{id}: inserted by theirs, as {new}"));
    }

    if !conflicts.is_empty() && prefer.is_none() {
        return Err(Failure::at(
            paths[1].display(),
            format!(
                "{} conflicting keys (changed differently on both sides; --prefer ours|theirs \
                 picks a side): {}",
                conflicts.len(),
                conflicts.join("; ")
            ),
        ));
    }
    save(&file, &mut merged, output)?;
    for line in report.iter().chain(&conflicts) {
        writeln!(out, "{line}")?;
    }
    writeln!(
        out,
        "{}: {} entities, {} conflicting keys{}",
        shown(output),
        merged.len(),
        conflicts.len(),
        match prefer {
            Some(Side::Ours) if !conflicts.is_empty() => " (ours kept)",
            Some(Side::Theirs) if !conflicts.is_empty() => " (theirs taken)",
            _ => "",
        }
    )?;
    Ok(())
}
