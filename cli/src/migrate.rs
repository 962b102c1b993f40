//! `migrate`: a save brought to the data version of a migrations file.

use std::io::Write;
use std::path::Path;

use datacomp::migrate::MigrationReport;
use datacomp::{Migrations, SaveFile, Store};
use serde_json::json;

use crate::files::{load, lock, save};
use crate::output::{Bytes, Failure, json_line, plural};

/// `datacomp migrate`: runs the migrations in `with` on `file` and writes the result to
/// `output` (default: `file` itself, unless it is at the version already), atomically and
/// under the written file's lock, or, for a dry run, writes nothing. Prints the report either
/// way. Refused before any step runs if the migrated entities could take more than
/// `max_output` bytes.
pub fn run(
    file: &Path,
    with: &Path,
    output: Option<&Path>,
    dry_run: bool,
    max_output: u64,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let text = std::fs::read_to_string(with)
        .map_err(|e| Failure::at(with.display(), format!("cannot read: {e}")))?;
    let migrations = Migrations::from_json(&text)
        .map_err(|e| Failure::at(with.display(), e))?
        .max_output(max_output);
    let target = output.unwrap_or(file);
    // Held from the load to the save, so that no other writer's change is lost.
    let held = if dry_run { None } else { Some(lock(target)?) };
    let mut store = load(file)?;
    let report = migrations.apply(&mut store).map_err(|e| Failure::at(file.display(), e))?;
    if json {
        return report_json(file, target, &report, held, &mut store, out);
    }
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
                "{}: written: data version {}, {}, {}",
                target.display(),
                store.data_version(),
                plural(store.len(), "entity", "entities"),
                Bytes(store.to_bytes().len()),
            )?;
        }
        None => writeln!(out, "dry run: nothing written")?,
    }
    Ok(())
}

/// `migrate --json`: the report as one JSON object, and the save written as without --json.
fn report_json(
    file: &Path,
    target: &Path,
    report: &MigrationReport,
    held: Option<SaveFile>,
    store: &mut Store,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let written = match held {
        Some(held) if target != file || report.from != report.to => {
            save(&held, store, target)?;
            Some(target.display().to_string())
        }
        _ => None,
    };
    let steps: Vec<_> = report
        .steps
        .iter()
        .map(|step| {
            json!({
                "index": step.index,
                "to": step.to,
                "entities": step.entities,
                "renamed": step.renamed,
                "removed": step.removed,
                "defaulted": step.defaulted,
                "set": step.set,
            })
        })
        .collect();
    let line = json!({
        "file": file.display().to_string(),
        "from": report.from,
        "to": report.to,
        "steps": steps,
        "written": written,
        "entities": store.len(),
    });
    json_line(out, &line)
}
