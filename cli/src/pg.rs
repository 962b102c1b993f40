//! `datacomp pg push` and `pull`: move a world between a save file and PostgreSQL
//! (`datacomp-pg`), behind the `pg` feature so that the command's default build has no
//! database client.

use std::io::Write;
use std::path::Path;

use datacomp::StorePatch;
use datacomp_pg::{CommitError, PgWorlds, Worlds};
use serde_json::json;

use crate::files::{load, lock, save};
use crate::output::{Failure, json_line, plural, shown};

/// The server's connection string: `--db`, else `DATACOMP_PG`.
fn connect(db: Option<&str>) -> Result<PgWorlds, Failure> {
    let params = match db {
        Some(db) => db.to_string(),
        None => std::env::var("DATACOMP_PG").map_err(|_| {
            Failure::usage(
                "no database: give --db 'host=... user=... dbname=...' or set DATACOMP_PG",
            )
        })?,
    };
    let mut worlds = PgWorlds::connect(&params).map_err(|e| Failure::at("--db", e))?;
    worlds.migrate_schema().map_err(|e| Failure::at("--db", e))?;
    Ok(worlds)
}

/// `datacomp pg push FILE --world NAME`: the world becomes the save's store (made if missing),
/// in one commit of the difference.
pub fn push(
    file: &Path,
    world: &str,
    db: Option<&str>,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let store = load(file)?;
    let mut worlds = connect(db)?;
    let at_world = |e: datacomp_pg::Error| Failure::at(format!("world {world}"), e);
    let id = match worlds.world(world).map_err(at_world)? {
        Some(id) => id,
        None => worlds.create_world(world).map_err(at_world)?,
    };
    let (current, seq) = worlds.load(id).map_err(at_world)?;
    let patch = StorePatch::diff(&current, &store);
    let (inserted, changed) = (patch.inserted(), patch.changed());
    let seq = match worlds.commit(id, seq, &patch) {
        Ok(seq) => seq,
        Err(CommitError::Conflict { current }) => {
            return Err(Failure::at(
                format!("world {world}"),
                format!(
                    "moved on to seq {current} during the push: nothing was written; push again"
                ),
            ));
        }
        Err(CommitError::Other(e)) => return Err(at_world(e)),
        Err(e) => return Err(Failure::at(format!("world {world}"), e)),
    };
    if json {
        let line = json!({
            "world": world, "seq": seq.0, "entities": store.len(),
            "inserted": inserted, "changed": changed,
        });
        return json_line(out, &line);
    }
    writeln!(
        out,
        "{} -> world {world}: seq {seq}, {} ({inserted} inserted, {changed} changed)",
        shown(file),
        plural(store.len(), "entity", "entities"),
    )?;
    Ok(())
}

/// `datacomp pg pull FILE --world NAME`: the world as it is now, saved to FILE.
pub fn pull(
    file: &Path,
    world: &str,
    db: Option<&str>,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let mut worlds = connect(db)?;
    let at_world = |e: datacomp_pg::Error| Failure::at(format!("world {world}"), e);
    let id = worlds
        .world(world)
        .map_err(at_world)?
        .ok_or_else(|| Failure::at(format!("world {world}"), "no world of this name"))?;
    let (mut store, seq) = worlds.load(id).map_err(at_world)?;
    let saved = lock(file)?;
    save(&saved, &mut store, file)?;
    if json {
        return json_line(out, &json!({ "world": world, "seq": seq.0, "entities": store.len() }));
    }
    writeln!(
        out,
        "world {world} at seq {seq} -> {}: {}",
        shown(file),
        plural(store.len(), "entity", "entities")
    )?;
    Ok(())
}
