//! `datacomp query`: the entities of a save file that pass a filter, read in place.

use std::io::Write;
use std::path::Path;

use datacomp::format::SavedKeyNames;
use datacomp::text::Shortened;
use datacomp::{BlobRef, Id, Key, LoadOptions, Query, Store};

use crate::args::{KeyArg, parse_key};
use crate::files::read;
use crate::output::{Failure, Plain, is_abstract, suggestion, value_json};

/// `datacomp query`: one row per entity that passes `filter`, its id and then the value of each
/// of `keys` (`-` in text, `null` in JSON, where it has none).
///
/// The file is validated and read in place (a `StoreView`): no store is built. Every key named
/// by path, in the filter or in `keys`, is checked against the save's key names, as `get`
/// checks its key: a name the save does not know is refused (a typo would match nothing, or
/// print `-` in every row), and so is a name whose key the save names otherwise (it would read
/// the other name's values). A `#1a2b3c4d` raw key is the caller's choice, checked against no
/// name.
pub fn run(
    path: &Path,
    filter: &str,
    keys: &[String],
    all: bool,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let query = Query::parse(filter).map_err(|e| Failure::usage(format!("query: {e}")))?;
    // `--keys 'name, kind'`: the spaces around a name are the list's, not the name's.
    let args: Vec<(KeyArg<'_>, &str)> = keys
        .iter()
        .map(|text| text.trim())
        .filter(|text| !text.is_empty())
        .map(|text| parse_key(text).map(|arg| (arg, text)))
        .collect::<Result<_, _>>()?;
    let bytes = read(path)?;
    let (view, names) = LoadOptions::new()
        .view_with_key_names(&bytes)
        .map_err(|e| Failure::at(path.display(), e))?;
    for (column, text) in query.keys() {
        // The filter's keys parsed as keys already: only the names are left to check.
        let arg = parse_key(text)?;
        check_name(&names, &arg, text, (path, &bytes), &format!("query column {column}"))?;
    }
    let mut keys: Vec<(Key, &str)> = Vec::with_capacity(args.len());
    for (arg, text) in &args {
        let key = check_name(&names, arg, text, (path, &bytes), "--keys")?;
        keys.push((key, text));
    }
    if !json {
        let header: Vec<&str> = std::iter::once("id").chain(keys.iter().map(|k| k.1)).collect();
        writeln!(out, "{}", header.join("\t"))?;
    }
    // Each row's values: what the entity stores, or (`store`) what it reads through its
    // prototypes.
    let print = |out: &mut dyn Write, store: Option<&Store>, id: Id, blob: BlobRef<'_>| {
        let value = |key: Key| match store.and_then(|s| s.resolved(id)) {
            Some(sheet) => sheet.get(key),
            None => blob.get(key),
        };
        if json {
            let values: serde_json::Map<String, serde_json::Value> = keys
                .iter()
                .map(|&(key, text)| {
                    (text.to_owned(), value(key).map_or(serde_json::Value::Null, value_json))
                })
                .collect();
            writeln!(out, "{}", serde_json::json!({ "id": id.to_string(), "keys": values }))?;
        } else {
            write!(out, "{id}")?;
            for &(key, _) in &keys {
                match value(key) {
                    Some(value) => write!(out, "\t{}", Plain(value))?,
                    None => write!(out, "\t-")?,
                }
            }
            writeln!(out)?;
        }
        Ok::<(), Failure>(())
    };
    // A view refuses a save with links (it reads what each entity stores): instances are
    // tested and printed as they read, through their prototypes, by a store's query.
    if let Ok(passed) = view.query(&query) {
        for (id, blob) in passed {
            if all || !is_abstract(blob) {
                print(out, None, id, blob)?;
            }
        }
        return Ok(());
    }
    let store = Store::from_bytes(&bytes).map_err(|e| Failure::at(path.display(), e))?;
    for (id, own) in store.query(&query) {
        if all || !is_abstract(own) {
            print(out, Some(&store), id, own)?;
        }
    }
    Ok(())
}

/// The save's key name nearest `given`, as a suggestion. Only a failing query pays for the
/// names: it loads the save (O(n)) to list them.
fn nearest_name(given: &str, bytes: &[u8]) -> String {
    let Ok(store) = Store::from_bytes(bytes) else { return String::new() };
    suggestion(given, store.key_names().map(|(key, _)| store.key_label(key).into_owned()))
}

/// The key of `arg`, if it is a raw key or a name the save knows as this key's; else a failure
/// at `path` (whose save is `bytes`) that names it, says `where` it was given, and suggests
/// the nearest name.
fn check_name(
    names: &SavedKeyNames,
    arg: &KeyArg<'_>,
    text: &str,
    (path, bytes): (&Path, &[u8]),
    place: &str,
) -> Result<Key, Failure> {
    let KeyArg::Path(key_path) = arg else {
        return Ok(arg.key());
    };
    let key = names
        .check_key(key_path)
        .map_err(|collision| Failure::at(path.display(), format!("{collision} ({place})")))?;
    if !names.contains_key(key) {
        let what =
            format!("no key named {} ({place}){}", Shortened(text), nearest_name(text, bytes));
        return Err(Failure::at(path.display(), what));
    }
    Ok(key)
}
