//! `get`, `set` and `rm`.

use std::io::Write;
use std::path::Path;

use datacomp::text::{Escaped, Shortened};
use datacomp::{BlobRef, Error, ExportError, ExportOptions, Id, KeyError, Store};

use crate::args::{KeyArg, TypeArg, parse_key, parse_value};
use crate::files::{entity, load, lock_and_load, save};
use crate::output::{
    Failure, Plain, entries_json, json_line, member, plural, print_entries, print_resolved,
    prototype_name, resolved_json, suggestion, value_json, write_object,
};

/// Keys under an object's path that a "no such key" message lists before "and N more".
const LISTED_KEYS: usize = 10;

/// Why entity `id` (`blob`) has no key `given`: names the keys under it (the first few), if
/// it is an object's path. Long names are cut, so the message stays one short line.
fn no_such_key(
    store: &Store,
    blob: BlobRef<'_>,
    id: Id,
    given: &str,
    inherited_from: Option<Id>,
) -> String {
    if let Some(from) = inherited_from {
        return format!(
            "entity {id} stores no {}: it reads it from {} (without --own)",
            Shortened(given),
            prototype_name(store, from)
        );
    }
    let prefix = format!("{given}.");
    let under: Vec<_> = blob
        .keys()
        .filter(|&key| store.key_name(key).is_some_and(|name| name.starts_with(&prefix)))
        .map(|key| store.key_label(key))
        .collect();
    if under.is_empty() {
        // A typo of one of its keys, most likely.
        let labels = blob.keys().map(|key| store.key_label(key).into_owned());
        return format!("entity {id} has no key {}{}", Shortened(given), suggestion(given, labels));
    }
    let given = Shortened(given);
    let listed: Vec<String> =
        under.iter().take(LISTED_KEYS).map(|name| Shortened(name).to_string()).collect();
    let more = match under.len().saturating_sub(LISTED_KEYS) {
        0 => String::new(),
        more => format!(" and {more} more"),
    };
    format!("entity {id} has no key {given}; it has {}{more}", listed.join(", "))
}

/// `datacomp get`: what the entity reads, its own values and, through its prototypes, the
/// ones it inherits (each marked with where it comes from); with `own`, only what it stores.
pub fn get(
    path: &Path,
    id: &str,
    key: Option<&str>,
    own: bool,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let arg = key.map(parse_key).transpose()?;
    let store = load(path)?;
    let (id, blob) = entity(&store, path, id)?;
    // An entity without a prototype reads what it stores.
    let resolve = !own && store.prototype(id).is_some();
    let (Some(given), Some(arg)) = (key, arg) else {
        match (json, resolve) {
            (true, false) => {
                let (entries, id) = (entries_json(&store, blob), id.to_string());
                write_object(out, &[("entries", &member(&entries)), ("id", &member(&id))])?;
                writeln!(out)?;
            }
            (true, true) => {
                let entries = resolved_json(&store, id);
                let prototype = store.prototype(id).map(|p| p.to_string());
                let id = id.to_string();
                write_object(
                    out,
                    &[
                        ("entries", &member(&entries)),
                        ("id", &member(&id)),
                        ("prototype", &member(&prototype)),
                    ],
                )?;
                writeln!(out)?;
            }
            (false, false) => print_entries(&store, blob, out)?,
            (false, true) => print_resolved(&store, id, out)?,
        }
        return Ok(());
    };
    let key = arg.check(&store, path)?;
    let found = if resolve {
        store.resolved(id).and_then(|sheet| sheet.get_with_source(key))
    } else {
        blob.get(key).map(|value| (value, id))
    };
    let Some((value, from)) = found else {
        // An object's path: the keys under it, as JSON (as jq prints a member), as the
        // entity reads them.
        let options = ExportOptions::json().pretty(!json).flatten(resolve);
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
                // With --own, a key it inherits: said so.
                let from = store
                    .resolved(id)
                    .and_then(|sheet| sheet.get_with_source(key))
                    .map(|(_, from)| from)
                    .filter(|&from| own && from != id);
                Err(Failure::at(path.display(), no_such_key(&store, blob, id, given, from)))
            }
            Err(e) => Err(Failure::at(path.display(), e)),
        };
    };
    if json {
        let mut line = serde_json::json!({
            "id": id.to_string(),
            "key": store.key_label(key),
            "hash": key.to_string(),
            "type": value.value_type().name(),
            "value": value_json(value),
        });
        if from != id {
            line["from"] = from.to_string().into();
        }
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
    json: bool,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    // The command line is read before the file is: a usage error locks and loads nothing.
    let arg = parse_key(key)?;
    let value = parse_value(value, ty)?;
    let (file, mut store) = lock_and_load(path)?;
    let (id, blob) = entity(&store, path, id)?;
    let parsed = arg.check(&store, path)?;
    let old = blob.get(parsed).map(|v| Plain(v).to_string());
    let old_json = blob.get(parsed).map(value_json);
    let mut blob = store.try_get_mut(id).map_err(|e| Failure::at(path.display(), e))?;
    // A path's name is recorded with the value, or neither is.
    match arg {
        KeyArg::Path(key) => blob.set(key, &value),
        KeyArg::Raw(key) => blob.set(key, &value),
    }
    .map_err(|e| match e {
        Error::Key(e @ KeyError::PathConflict { .. }) => {
            Failure::at(path.display(), format!("entity {id}: {e}"))
        }
        e => Failure::at(path.display(), e),
    })?;
    let label = Escaped(&store.key_label(parsed)).to_string();
    save(&file, &mut store, path)?;
    if json {
        let old = old_json.unwrap_or(serde_json::Value::Null);
        let line = serde_json::json!({
            "id": id.to_string(),
            "key": store.key_label(parsed),
            "old": old,
            "value": value_json(value.as_value()),
        });
        return json_line(out, &line);
    }
    let new = Plain(value.as_value());
    match old {
        Some(old) => writeln!(out, "{id} {label}: {old} -> {new}")?,
        None => {
            // A new key may be a typo of one the entity has: said, not refused.
            let others = store
                .try_get(id)
                .map(|blob| blob.keys().filter(|&k| k != parsed).collect::<Vec<_>>())
                .unwrap_or_default();
            let near = suggestion(key, others.into_iter().map(|k| store.key_label(k).into_owned()));
            writeln!(out, "{id} {label}: {new} (new key{near})")?;
        }
    }
    Ok(())
}

/// `datacomp rm`.
pub fn rm(
    path: &Path,
    id: &str,
    key: Option<&str>,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let arg = key.map(|given| parse_key(given).map(|arg| (arg, given))).transpose()?;
    let (file, mut store) = lock_and_load(path)?;
    let (id, blob) = entity(&store, path, id)?;
    match arg {
        Some((arg, given)) => {
            let key = arg.check(&store, path)?;
            if !blob.contains_key(key) {
                return Err(Failure::at(
                    path.display(),
                    no_such_key(&store, blob, id, given, None),
                ));
            }
            // Taken before the save, whose compaction drops a name no entity holds any more.
            let name = store.key_label(key).into_owned();
            store.try_get_mut(id).map_err(|e| Failure::at(path.display(), e))?.remove(key);
            save(&file, &mut store, path)?;
            if json {
                let line = serde_json::json!({"id": id.to_string(), "removed_key": name});
                return json_line(out, &line);
            }
            writeln!(out, "{id}: removed {}", Escaped(&name))?;
        }
        None => {
            // A prototype with instances stays (they read through it): said, nothing written.
            store.try_remove(id).map_err(|e| {
                Failure::at(path.display(), format_args!("{e} (datacomp flatten detaches them)"))
            })?;
            save(&file, &mut store, path)?;
            if json {
                let line = serde_json::json!({"removed": id.to_string(), "entities": store.len()});
                return json_line(out, &line);
            }
            let left = plural(store.len(), "entity", "entities");
            writeln!(out, "removed entity {id}; {left} left")?;
        }
    }
    Ok(())
}
