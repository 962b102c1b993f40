//! `get`, `set` and `rm`.

use std::io::Write;
use std::path::Path;

use datacomp::text::{Escaped, Shortened};
use datacomp::{BlobRef, Error, ExportError, ExportOptions, Id, KeyError, Store};

use crate::args::{KeyArg, TypeArg, parse_key, parse_value};
use crate::files::{entity, load, lock_and_load, save};
use crate::output::{
    Failure, Plain, entries_json, member, print_entries, value_json, write_object,
};

/// Keys under an object's path that a "no such key" message lists before "and N more".
const LISTED_KEYS: usize = 10;

/// Why entity `id` (`blob`) has no key `given`: names the keys under it (the first few), if
/// it is an object's path. Long names are cut, so the message stays one short line.
fn no_such_key(store: &Store, blob: BlobRef<'_>, id: Id, given: &str) -> String {
    let prefix = format!("{given}.");
    let under: Vec<_> = blob
        .keys()
        .filter(|&key| store.key_name(key).is_some_and(|name| name.starts_with(&prefix)))
        .map(|key| store.key_label(key))
        .collect();
    let given = Shortened(given);
    if under.is_empty() {
        return format!("entity {id} has no key {given}");
    }
    let listed: Vec<String> =
        under.iter().take(LISTED_KEYS).map(|name| Shortened(name).to_string()).collect();
    let more = match under.len().saturating_sub(LISTED_KEYS) {
        0 => String::new(),
        more => format!(" and {more} more"),
    };
    format!("entity {id} has no key {given}; it has {}{more}", listed.join(", "))
}

/// `datacomp get`.
pub fn get(
    path: &Path,
    id: &str,
    key: Option<&str>,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let store = load(path)?;
    let (id, blob) = entity(&store, path, id)?;
    let Some(given) = key else {
        if json {
            let (entries, id) = (entries_json(&store, blob), id.to_string());
            write_object(out, &[("entries", &member(&entries)), ("id", &member(&id))])?;
            writeln!(out)?;
        } else {
            print_entries(&store, blob, out)?;
        }
        return Ok(());
    };
    let arg = parse_key(given)?;
    let key = arg.check(&store, path)?;
    let Some(value) = blob.get(key) else {
        // An object's path: the keys under it, as JSON (as jq prints a member).
        let options = ExportOptions::json().pretty(!json);
        let subtree = match &arg {
            KeyArg::Path(at) => store.export_at(id, at.as_str(), &options),
            KeyArg::Raw(_) => Err(ExportError::NoPath { entity: Some(id), path: given.into() }),
        };
        return match subtree {
            // The export's own text: numbers as export writes them, members in their order; a
            // former array is written back as one.
            Ok(text) if json => Ok(writeln!(
                out,
                "{{\"id\":{},\"key\":{},\"type\":\"{}\",\"value\":{text}}}",
                serde_json::Value::from(id.to_string()),
                serde_json::Value::from(given),
                if text.starts_with('[') { "array" } else { "object" },
            )?),
            Ok(text) => Ok(writeln!(out, "{text}")?),
            Err(ExportError::NoPath { .. }) => {
                Err(Failure::at(path.display(), no_such_key(&store, blob, id, given)))
            }
            Err(e) => Err(Failure::at(path.display(), e)),
        };
    };
    if json {
        let line = serde_json::json!({
            "id": id.to_string(),
            "key": store.key_label(key),
            "hash": key.to_string(),
            "type": value.value_type().name(),
            "value": value_json(value),
        });
        writeln!(out, "{line}")?;
    } else {
        writeln!(out, "{}", Plain(value))?;
    }
    Ok(())
}

/// `datacomp set`.
pub fn set(
    path: &Path,
    id: &str,
    key: &str,
    value: &str,
    ty: Option<TypeArg>,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let (file, mut store) = lock_and_load(path)?;
    let (id, blob) = entity(&store, path, id)?;
    let arg = parse_key(key)?;
    let parsed = arg.check(&store, path)?;
    let value = parse_value(value, ty)?;
    let old = blob.get(parsed).map(|v| Plain(v).to_string());
    let mut blob = store.try_get_mut(id).map_err(|e| Failure::at(path.display(), e))?;
    // A path's name is recorded with the value, or neither is.
    match arg {
        KeyArg::Path(key) => blob.try_set(key, &value),
        KeyArg::Raw(key) => blob.try_set(key, &value),
    }
    .map_err(|e| match e {
        Error::Key(e @ KeyError::PathConflict { .. }) => {
            Failure::at(path.display(), format!("entity {id}: {e}"))
        }
        e => Failure::at(path.display(), e),
    })?;
    let label = Escaped(&store.key_label(parsed)).to_string();
    save(&file, &mut store, path)?;
    let new = Plain(value.as_value());
    match old {
        Some(old) => writeln!(out, "{id} {label}: {old} -> {new}")?,
        None => writeln!(out, "{id} {label}: {new} (new key)")?,
    }
    Ok(())
}

/// `datacomp rm`.
pub fn rm(path: &Path, id: &str, key: Option<&str>, out: &mut dyn Write) -> Result<(), Failure> {
    let (file, mut store) = lock_and_load(path)?;
    let (id, blob) = entity(&store, path, id)?;
    match key {
        Some(given) => {
            let key = parse_key(given)?.check(&store, path)?;
            if !blob.contains_key(key) {
                return Err(Failure::at(path.display(), no_such_key(&store, blob, id, given)));
            }
            let label = Escaped(&store.key_label(key)).to_string();
            store.try_get_mut(id).map_err(|e| Failure::at(path.display(), e))?.remove(key);
            save(&file, &mut store, path)?;
            writeln!(out, "{id}: removed {label}")?;
        }
        None => {
            store.remove(id);
            save(&file, &mut store, path)?;
            writeln!(out, "removed entity {id}; {} left", store.len())?;
        }
    }
    Ok(())
}
