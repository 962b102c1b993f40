//! `flatten`: instances made whole, into a save file.

use std::io::Write;
use std::path::Path;

use datacomp::Id;
use serde_json::json;

use crate::files::{entity, load, lock_if_exists, lock_later, save, saved_len};
use crate::output::{Bytes, Failure, json_line, plural, shown};

/// What `flatten` flattens: one entity, or every instance.
pub enum Which<'a> {
    One(&'a str),
    All,
}

/// `datacomp flatten`: each instance named (one, or every one with `--all`) keeps every value
/// it reads through its prototypes as its own and loses its prototype (the store's
/// `detach`), and the save is written to `output` (which may be `path` itself), atomically
/// and under `output`'s lock. Its prototypes stay, as entities of their own.
pub fn run(
    path: &Path,
    which: Which<'_>,
    output: &Path,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    // The output's lock, if it exists (it may be `path`): held from the load to the save.
    let early = lock_if_exists(output)?;
    let mut store = load(path)?;
    let ids: Vec<Id> = match which {
        Which::One(given) => {
            let (id, _) = entity(&store, path, given)?;
            if store.prototype(id).is_none() {
                return Err(Failure::at(
                    shown(path),
                    format!("entity {id} has no prototype: it holds all its values already"),
                ));
            }
            vec![id]
        }
        // Every instance: the order does not matter, each keeps what it reads now.
        Which::All => {
            store.iter().map(|(id, _)| id).filter(|&id| store.prototype(id).is_some()).collect()
        }
    };
    for &id in &ids {
        store.detach(id).map_err(|e| Failure::at(shown(path), format!("entity {id}: {e}")))?;
    }
    let file = lock_later(early, output)?;
    save(&file, &mut store, output)?;
    let flattened: Vec<String> = ids.iter().map(ToString::to_string).collect();
    if json {
        let line = json!({
            "file": path.display().to_string(),
            "output": output.display().to_string(),
            "flattened": flattened,
            "entities": store.len(),
            "file_bytes": saved_len(&file),
        });
        return json_line(out, &line);
    }
    let what = match flattened.as_slice() {
        [one] => format!("flattened {one}"),
        _ => format!("flattened {}", plural(ids.len(), "instance", "instances")),
    };
    writeln!(
        out,
        "{}: {what}; wrote {} ({}, {})",
        shown(path),
        shown(output),
        plural(store.len(), "entity", "entities"),
        Bytes(saved_len(&file)),
    )?;
    Ok(())
}
