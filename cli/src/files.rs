//! Reading and writing save files, and the `export` and `verify` commands.

use std::io::Write;
use std::path::Path;

use datacomp::{BlobRef, Error, Id, SaveFile, Store, StorePatch, save};

use crate::edit::parse_id;
use crate::output::{Bytes, Failure};

/// Reads a save file's bytes.
pub fn read(path: &Path) -> Result<Vec<u8>, Failure> {
    std::fs::read(path).map_err(|e| Failure::at(path.display(), format!("cannot read: {e}")))
}

/// Loads a save file with full validation.
pub fn load(path: &Path) -> Result<Store, Failure> {
    Store::load(path).map_err(|e| match e {
        Error::Io(e) => Failure::at(path.display(), format!("cannot read: {e}")),
        e => Failure::at(path.display(), e),
    })
}

/// Takes the exclusive lock of the save at `path` (waiting for another writer to finish),
/// for a command that writes it: held from before it reads anything until it has written.
pub fn lock(path: &Path) -> Result<SaveFile, Failure> {
    SaveFile::lock(path).map_err(|e| Failure::at(path.display(), format!("cannot lock: {e}")))
}

/// Saves atomically under the lock: the file is either the old one or the new one, never
/// half of each. The store is compacted first, so no byte of a removed entity, key or value
/// reaches the file.
pub fn save(file: &SaveFile, store: &mut Store, path: &Path) -> Result<(), Failure> {
    store.compact();
    file.save(store).map_err(|e| Failure::at(path.display(), format!("cannot write: {e}")))
}

/// The live entity `id` of `store` and its blob, or why `id` names none.
pub fn entity<'s>(store: &'s Store, path: &Path, id: &str) -> Result<(Id, BlobRef<'s>), Failure> {
    let parsed = parse_id(id)?;
    let blob = store.try_get(parsed).map_err(|e| Failure::at(path.display(), e))?;
    Ok((parsed, blob))
}

/// `datacomp export`.
pub fn export(
    path: &Path,
    entity_id: Option<&str>,
    output: Option<&Path>,
    compact: bool,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let store = load(path)?;
    let mut text = match entity_id {
        Some(id) => {
            let (_, blob) = entity(&store, path, id)?;
            if compact { store.export_blob_json(blob) } else { store.export_blob_json_pretty(blob) }
        }
        None if compact => store.export_all_json(),
        None => store.export_all_json_pretty(),
    };
    text.push('\n');
    match output {
        Some(output) => {
            datacomp::file::write_atomically(output, |out| out.write_all(text.as_bytes()))
                .map_err(|e| Failure::at(output.display(), format!("cannot write: {e}")))
        }
        None => Ok(out.write_all(text.as_bytes())?),
    }
}

/// `datacomp verify`: every check a load makes (of a save or a delta), then a one-line
/// summary, and a line naming any temporary files of the file that a killed writer left.
pub fn verify(path: &Path, out: &mut dyn Write) -> Result<(), Failure> {
    check(path, out)?;
    // Best effort: a directory that cannot be listed has nothing to report.
    let stale = datacomp::file::stale_temps(path).unwrap_or_default();
    if !stale.is_empty() {
        let names: Vec<String> = stale.iter().map(|p| p.display().to_string()).collect();
        writeln!(
            out,
            "{}: {} temporary files left by an interrupted save (the next save removes them): {}",
            path.display(),
            stale.len(),
            names.join(", ")
        )?;
    }
    Ok(())
}

/// `datacomp verify --salvage -o OUTPUT`: writes every entity of `path` that checks out to
/// `output` (compacted, under the output's lock) and lists the others with why.
pub fn salvage(path: &Path, output: &Path, out: &mut dyn Write) -> Result<(), Failure> {
    let bytes = read(path)?;
    let datacomp::Salvage { mut store, lost, damaged, .. } =
        Store::salvage(&bytes).map_err(|e| Failure::at(path.display(), e))?;
    let file = lock(output)?;
    save(&file, &mut store, output)?;
    writeln!(
        out,
        "{}: salvaged {} entities into {}; lost {}",
        path.display(),
        store.len(),
        output.display(),
        lost.len()
    )?;
    for why in &damaged {
        writeln!(out, "  done without: {why}")?;
    }
    for (id, why) in &lost {
        writeln!(out, "  lost {id}: {why}")?;
    }
    Ok(())
}

/// The checks and the summary line of `verify`.
fn check(path: &Path, out: &mut dyn Write) -> Result<(), Failure> {
    let bytes = read(path)?;
    let info = save::describe(&bytes).map_err(|e| Failure::at(path.display(), e))?;
    if info.kind == "delta" {
        let delta = StorePatch::from_bytes(&bytes).map_err(|e| Failure::at(path.display(), e))?;
        writeln!(
            out,
            "{}: ok: delta, format {}.{}, {} ({} bytes), {} entities inserted, {} changed; \
             its base is checked when it is applied",
            path.display(),
            info.major,
            info.minor,
            Bytes(bytes.len()),
            bytes.len(),
            delta.inserted(),
            delta.changed(),
        )?;
        return Ok(());
    }
    let store = Store::from_bytes(&bytes).map_err(|e| Failure::at(path.display(), e))?;
    writeln!(
        out,
        "{}: ok: format {}.{}, {} ({} bytes), {} sections, {} entities, {} key names",
        path.display(),
        info.major,
        info.minor,
        Bytes(bytes.len()),
        bytes.len(),
        info.sections.len(),
        store.len(),
        store.key_names().len(),
    )?;
    Ok(())
}
