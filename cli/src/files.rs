//! Reading and writing save files, and the `export` and `verify` commands.

use std::io::Write;
use std::path::Path;

use datacomp::format::StoreError;
use datacomp::{BlobRef, Error, ExportOptions, Id, LoadError, SaveFile, Store, StorePatch, format};

use crate::args::{FormatArg, parse_id};
use crate::output::{Bytes, Failure, json_line, plural, shown};
use serde_json::json;

/// Reads a save file's bytes.
pub fn read(path: &Path) -> Result<Vec<u8>, Failure> {
    // Capped by what the file's header says it holds: `verify /dev/zero` grew without end.
    datacomp::format::read_file(path).map_err(|e| match e {
        Error::Io(e) => Failure::at(path.display(), format!("cannot read: {e}")),
        Error::Load(e) => load_failure(path, &e),
        e => Failure::at(path.display(), e),
    })
}

/// Refuses an `output` that is one of the `inputs` (the same file, through any symbolic or
/// hard link) when the command writes another kind of file there (`what`: "the JSON
/// export"): the input would be replaced by it and lost, as `export world.dcmp -o world.dcmp`
/// replaced the save with its JSON (or by a salvaged save, which leaves out what the damaged
/// one still holds). A device or pipe (`/dev/stdout`) is never refused.
pub fn not_an_input<P: AsRef<Path>>(
    output: &Path,
    inputs: &[P],
    what: &str,
) -> Result<(), Failure> {
    let Ok(out_meta) = std::fs::metadata(output) else { return Ok(()) };
    if !out_meta.is_file() {
        return Ok(());
    }
    for input in inputs {
        let input = input.as_ref();
        if std::fs::metadata(input).is_ok_and(|meta| same_file(output, &out_meta, input, &meta)) {
            return Err(Failure::at(
                output.display(),
                format!(
                    "is an input of this command ({}): {what} would replace it (write to \
                     another file)",
                    input.display()
                ),
            ));
        }
    }
    Ok(())
}

/// Whether the files at `a` and `b`, of these metadata, are one file.
fn same_file(a: &Path, a_meta: &std::fs::Metadata, b: &Path, b_meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let _ = (a, b);
        a_meta.dev() == b_meta.dev() && a_meta.ino() == b_meta.ino()
    }
    #[cfg(not(unix))]
    {
        let _ = (a_meta, b_meta);
        matches!((std::fs::canonicalize(a), std::fs::canonicalize(b)), (Ok(a), Ok(b)) if a == b)
    }
}

/// Loads a save file with full validation.
pub fn load(path: &Path) -> Result<Store, Failure> {
    Store::load(path).map_err(|e| match e {
        Error::Io(e) => Failure::at(path.display(), format!("cannot read: {e}")),
        Error::Load(e) => load_failure(path, &e),
        e => Failure::at(path.display(), e),
    })
}

/// Why the save at `path` did not load. A key hash 1 save that needs known keys is pointed at
/// `upgrade`, the one command that takes them.
pub fn load_failure(path: &Path, e: &LoadError) -> Failure {
    match e {
        LoadError::Store(StoreError::UnexplainedKeys { .. }) => Failure::at(
            path.display(),
            format_args!("{e} (with datacomp upgrade OLD -o NEW --known-keys FILE)"),
        ),
        e => Failure::at(path.display(), e),
    }
}

/// Takes the exclusive lock of the save at `path` (waiting for another writer to finish),
/// for a command that writes it: held from before it reads anything until it has written.
pub fn lock(path: &Path) -> Result<SaveFile, Failure> {
    SaveFile::lock(path).map_err(|e| Failure::at(path.display(), format!("cannot lock: {e}")))
}

/// The save at `path` loaded under its lock, for a command that changes it in place. A missing
/// save fails before a lock file is made beside it.
pub fn lock_and_load(path: &Path) -> Result<(SaveFile, Store), Failure> {
    if std::fs::metadata(path).is_err() {
        // Fails; should the file have appeared meanwhile, it is loaded again under the lock.
        load(path)?;
    }
    let file = lock(path)?;
    let store = load(path)?;
    Ok((file, store))
}

/// The lock of `path` if a file is there (it may be one of the command's inputs, to be read
/// and replaced under the lock), else `None`: a command then reads its inputs first and takes
/// the lock only to write (with [`lock_later`]), so that a missing or bad input leaves no lock
/// file behind. An output that did not exist cannot be an input, which must exist.
pub fn lock_if_exists(path: &Path) -> Result<Option<SaveFile>, Failure> {
    if std::fs::metadata(path).is_ok() { lock(path).map(Some) } else { Ok(None) }
}

/// The lock taken by [`lock_if_exists`], or, if it took none, the lock taken now.
pub fn lock_later(early: Option<SaveFile>, path: &Path) -> Result<SaveFile, Failure> {
    early.map_or_else(|| lock(path), Ok)
}

/// Saves atomically under the lock: the file is either the old one or the new one, never
/// half of each. The store is compacted first, so no byte of a removed entity, key or value
/// reaches the file.
pub fn save(file: &SaveFile, store: &mut Store, path: &Path) -> Result<(), Failure> {
    store.compact();
    file.save(store).map_err(|e| Failure::at(path.display(), format!("cannot write: {e}")))
}

/// The length of the file just saved under `file`'s lock, as the file system reports it:
/// serializing the store again to count its bytes would need memory for a second copy.
pub fn saved_len(file: &SaveFile) -> usize {
    std::fs::metadata(file.path()).map_or(0, |meta| meta.len() as usize)
}

/// The live entity `id` of `store` and its blob, or why `id` names none.
pub fn entity<'s>(store: &'s Store, path: &Path, id: &str) -> Result<(Id, BlobRef<'s>), Failure> {
    let parsed = parse_id(id, store.iter().next().map(|(id, _)| id))?;
    let blob = store.try_get(parsed).map_err(|e| Failure::at(path.display(), e))?;
    Ok((parsed, blob))
}

/// How `datacomp export` writes: its options.
pub struct ExportHow {
    /// JSON on one line (`--compact`).
    pub compact: bool,
    /// The format (`--format`), else by the output's name.
    pub format: Option<FormatArg>,
    /// Each entity whole, through its prototypes (`--flatten`).
    pub flatten: bool,
}

/// `datacomp export`.
pub fn export(
    path: &Path,
    entity_id: Option<&str>,
    output: Option<&Path>,
    ExportHow { compact, format, flatten }: ExportHow,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    // Named by the output, as import reads an input's name: `-o sheet.sjson` is SJSON.
    let format = match output {
        Some(output) => FormatArg::of(output, format),
        None => format.unwrap_or(FormatArg::Json),
    };
    if compact && format == FormatArg::Sjson {
        return Err(Failure::usage("--compact is for JSON: SJSON is written one member a line"));
    }
    if let Some(output) = output {
        not_an_input(output, &[path], "the export")?;
    }
    let store = load(path)?;
    let options = match format {
        FormatArg::Json => ExportOptions::json().pretty(!compact),
        FormatArg::Sjson => ExportOptions::sjson(),
    }
    .flatten(flatten);
    // A NaN or infinity has no JSON form: the export fails naming it, and writes nothing.
    let mut text = match entity_id {
        Some(id) => {
            let (id, _) = entity(&store, path, id)?;
            store.export(id, &options)
        }
        None => store.export_all(&options),
    }
    .map_err(|e| Failure::at(shown(path), e))?;
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
pub fn verify(path: &Path, json: bool, out: &mut dyn Write) -> Result<(), Failure> {
    let mut summary = check(path, json, out)?;
    // Best effort: a directory that cannot be listed has nothing to report.
    let stale = datacomp::file::stale_temps(path).unwrap_or_default();
    if json {
        let names: Vec<String> = stale.iter().map(|p| p.display().to_string()).collect();
        summary["stale_temps"] = names.into();
        return json_line(out, &summary);
    }
    if !stale.is_empty() {
        let names: Vec<String> = stale.iter().map(|p| shown(p)).collect();
        writeln!(
            out,
            "{}: {} temporary files left by an interrupted save (the next save removes them): {}",
            shown(path),
            stale.len(),
            names.join(", ")
        )?;
    }
    Ok(())
}

/// `datacomp verify --salvage -o OUTPUT`: writes every entity of `path` that checks out to
/// `output` (compacted, under the output's lock) and lists the others with why.
///
/// It fails (exit 1), after writing what it kept, if it lost any entity or kept none: a
/// script that goes on after a salvage must not take a partial world for the whole one.
pub fn salvage(path: &Path, output: &Path, json: bool, out: &mut dyn Write) -> Result<(), Failure> {
    // The damaged file holds what salvage cannot read, which other tools may still recover:
    // it is not replaced by what salvage could.
    not_an_input(output, &[path], "the salvaged save")?;
    let bytes = read(path)?;
    let datacomp::format::Salvage { mut store, lost, damaged, .. } =
        Store::salvage(&bytes).map_err(|e| Failure::at(path.display(), e))?;
    let file = lock(output)?;
    save(&file, &mut store, output)?;
    if json {
        // One entry a run of consecutive handles lost for one reason (a damaged chunk's
        // entities share one), not one an entity.
        let lost_json: Vec<_> = lost
            .runs()
            .iter()
            .map(|run| {
                json!({
                    "first": run.first().to_string(),
                    "last": run.last().to_string(),
                    "count": run.len(),
                    "why": run.why().to_string(),
                })
            })
            .collect();
        let damaged: Vec<String> = damaged.iter().map(ToString::to_string).collect();
        json_line(
            out,
            &json!({
                "file": path.display().to_string(),
                "output": output.display().to_string(),
                "kept": store.len(),
                "lost_count": lost.len(),
                "lost": lost_json,
                "done_without": damaged,
            }),
        )?;
    } else {
        writeln!(
            out,
            "{}: salvaged {} into {}; lost {}",
            shown(path),
            plural(store.len(), "entity", "entities"),
            shown(output),
            lost.len()
        )?;
        for why in &damaged {
            writeln!(out, "  done without: {why}")?;
        }
        for run in lost.runs() {
            match run.len() {
                1 => writeln!(out, "  lost {}: {}", run.first(), run.why())?,
                n => writeln!(out, "  lost {}..{} ({n}): {}", run.first(), run.last(), run.why())?,
            }
        }
    }
    if !lost.is_empty() || store.is_empty() {
        let what = if store.is_empty() {
            "kept no entity".to_owned()
        } else {
            format!("lost {}", plural(lost.len(), "entity", "entities"))
        };
        return Err(Failure::at(
            shown(path),
            format!("salvage {what}: {} holds only what checked out", shown(output)),
        ));
    }
    Ok(())
}

/// The checks and the summary line of `verify` (written unless `json`); the summary as JSON.
fn check(path: &Path, json: bool, out: &mut dyn Write) -> Result<serde_json::Value, Failure> {
    let bytes = read(path)?;
    let info = format::describe(&bytes).map_err(|e| Failure::at(path.display(), e))?;
    if info.kind == format::FileKind::Delta {
        let delta = StorePatch::from_bytes(&bytes).map_err(|e| Failure::at(path.display(), e))?;
        let summary = json!({
            "file": path.display().to_string(),
            "ok": true,
            "kind": "delta",
            "format": format!("{}.{}", info.major, info.minor),
            "base_data_version": delta.base_data_version(),
            "data_version": delta.data_version(),
            "bytes": bytes.len(),
            "inserted": delta.inserted(),
            "changed": delta.changed(),
        });
        if json {
            return Ok(summary);
        }
        writeln!(
            out,
            "{}: ok: delta, format {}.{}, data version {} -> {}, {} ({} bytes), {} inserted, {} \
             changed; its base is checked when it is applied",
            shown(path),
            info.major,
            info.minor,
            delta.base_data_version(),
            delta.data_version(),
            Bytes(bytes.len()),
            bytes.len(),
            plural(delta.inserted(), "entity", "entities"),
            delta.changed(),
        )?;
        return Ok(summary);
    }
    let store = Store::from_bytes(&bytes).map_err(|e| load_failure(path, &e))?;
    let summary = json!({
        "file": path.display().to_string(),
        "ok": true,
        "kind": "save",
        "format": format!("{}.{}", info.major, info.minor),
        "data_version": store.data_version(),
        "bytes": bytes.len(),
        "sections": info.sections.len(),
        "entities": store.len(),
        "key_names": store.key_names().len(),
    });
    if json {
        return Ok(summary);
    }
    writeln!(
        out,
        "{}: ok: format {}.{}, data version {}, {} ({} bytes), {} sections, {}, {}",
        shown(path),
        info.major,
        info.minor,
        store.data_version(),
        Bytes(bytes.len()),
        bytes.len(),
        info.sections.len(),
        plural(store.len(), "entity", "entities"),
        plural(store.key_names().len(), "key name", "key names"),
    )?;
    Ok(summary)
}
