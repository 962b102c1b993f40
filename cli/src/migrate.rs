//! `migrate`: a save brought to the data version of a migrations file.

use std::io::Write;
use std::path::Path;

use datacomp::Migrations;

use crate::files::{load, lock, save};
use crate::output::{Bytes, Failure};

/// `datacomp migrate`: runs the migrations in `with` on `file` and writes the result to
/// `output` (default: `file` itself, unless it is at the version already), atomically and
/// under the written file's lock, or, for a dry run, writes nothing. Prints the report either
/// way.
pub fn run(
    file: &Path,
    with: &Path,
    output: Option<&Path>,
    dry_run: bool,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let text = std::fs::read_to_string(with)
        .map_err(|e| Failure::at(with.display(), format!("cannot read: {e}")))?;
    let migrations = Migrations::from_json(&text).map_err(|e| Failure::at(with.display(), e))?;
    let target = output.unwrap_or(file);
    // Held from the load to the save, so that no other writer's change is lost.
    let held = if dry_run { None } else { Some(lock(target)?) };
    let mut store = load(file)?;
    let report = migrations.apply(&mut store).map_err(|e| Failure::at(file.display(), e))?;
    write!(out, "{}: {report}", file.display())?;
    match held {
        // Already at the version: the file is left as it is.
        Some(_) if output.is_none() && report.from == report.to => {
            writeln!(
                out,
                "{}: already at data version {}: nothing written",
                file.display(),
                report.to
            )?;
        }
        Some(held) => {
            save(&held, &mut store, target)?;
            writeln!(
                out,
                "{}: written: data version {}, {} entities, {}",
                target.display(),
                store.data_version(),
                store.len(),
                Bytes(store.to_bytes().len()),
            )?;
        }
        None => writeln!(out, "dry run: nothing written")?,
    }
    Ok(())
}
