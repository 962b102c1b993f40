//! `datacomp import`: JSON and SJSON fixtures into a new save file, all or nothing.

use std::collections::{HashMap, HashSet, VecDeque};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use datacomp::store::ID_KEY;
use datacomp::text::Escaped;
use datacomp::text::ImportReport;
use datacomp::text::{JsonError, JsonErrorKind};
use datacomp::{ImportOptions, Store, TextFormat};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::args::FormatArg;
use crate::files::{lock, not_an_input, save};
use crate::output::{Bytes, Failure, json_line, plural, shown};
use serde_json::json;

/// An import shorter than this shows no progress bar.
const QUIET_FOR: Duration = Duration::from_millis(300);

/// The files named by `inputs`: files as given, directories searched recursively for `*.json`
/// and `*.sjson`, each directory's files in name order.
pub fn collect_files(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, Failure> {
    let mut files = Vec::new();
    // Directories searched so far, by canonical path: a symbolic link back up the tree is
    // searched once, not until the OS refuses the path (40 links deep, and 2^40 paths when a
    // directory holds two such links).
    let mut searched = HashSet::new();
    for input in inputs {
        let meta = std::fs::metadata(input)
            .map_err(|e| Failure::at(input.display(), format!("cannot read: {e}")))?;
        if meta.is_dir() {
            find_documents(input, &mut searched, &mut files)?;
        } else {
            files.push(input.clone());
        }
    }
    Ok(files)
}

/// Adds the documents under `top` to `files`, in name order (a subdirectory's in its place
/// among its siblings), with an explicit stack, not recursion, and each directory searched
/// once.
fn find_documents(
    top: &Path,
    searched: &mut HashSet<PathBuf>,
    files: &mut Vec<PathBuf>,
) -> Result<(), Failure> {
    let mut stack = Vec::new();
    let mut next = Some(top.to_path_buf());
    loop {
        if let Some(dir) = next.take() {
            let cannot =
                |e: std::io::Error| Failure::at(dir.display(), format!("cannot read: {e}"));
            if searched.insert(std::fs::canonicalize(&dir).map_err(cannot)?) {
                let mut entries = std::fs::read_dir(&dir)
                    .map_err(cannot)?
                    .map(|entry| entry.map(|e| e.path()))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(cannot)?;
                entries.sort();
                stack.push(entries.into_iter());
            }
        }
        let Some(entries) = stack.last_mut() else { return Ok(()) };
        match entries.next() {
            Some(path) if path.is_dir() => next = Some(path),
            Some(path) => {
                if path.extension().is_some_and(|ext| ext == "json" || ext == "sjson") {
                    files.push(path);
                }
            }
            None => {
                stack.pop();
            }
        }
    }
}

/// How `datacomp import` reads and reports: its options.
pub struct How {
    /// Lenient import (`--lenient`).
    pub lenient: bool,
    /// Every file read as this format (`--format`), else by its name.
    pub format: Option<FormatArg>,
    /// Refuse numbers that lose digits in f32 (`--exact-numbers`).
    pub exact_numbers: bool,
    /// Import what reads and report the rest (`--keep-going`), instead of stopping.
    pub keep_going: bool,
    /// The summary as JSON (`--json`).
    pub json: bool,
}

/// What strict import can add to an error that lenient import would not raise: the one place
/// that names the flag (the library's messages name no option of the command).
fn lenient_hint(e: &JsonError) -> &'static str {
    match e.kind() {
        JsonErrorKind::Null => " (--lenient keeps nulls)",
        JsonErrorKind::NotANumber => " (--lenient converts such arrays to objects keyed by index)",
        JsonErrorKind::NumberOutOfRange(_) => " (--lenient clamps such numbers to f32's range)",
        _ => "",
    }
}

/// `datacomp import`.
pub fn run(
    inputs: &[PathBuf],
    output: &Path,
    how: How,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let files = collect_files(inputs)?;
    if files.is_empty() {
        return Err(Failure::Message("no JSON or SJSON files among the inputs".into()));
    }
    not_an_input(output, &files, "the save")?;
    let options = if how.lenient { ImportOptions::lenient() } else { ImportOptions::strict() };
    let options = options.exact_numbers(how.exact_numbers);
    let sizes: Vec<u64> =
        files.iter().map(|f| std::fs::metadata(f).map_or(0, |m| m.len())).collect();
    let total: u64 = sizes.iter().sum();

    let start = Instant::now();
    let mut progress: Option<ProgressBar> = None;
    let mut store = Store::new();
    let mut report = ImportReport::default();
    let mut json_bytes = 0;
    // The first place of each kind of change, with its file.
    let mut firsts = Firsts::default();
    let mut sjson_documents = 0;
    // The files that did not import, with why (only --keep-going gets past the first).
    let mut failed: Vec<(&PathBuf, String)> = Vec::new();
    // A file whose instances name a prototype no file read so far has (a `$id` of a file
    // after it) waits for that name, and is read again once a file brings it: each file is
    // read at most once more per prototype name it waits for, whatever the files' order.
    let mut waiting: HashMap<String, Vec<usize>> = HashMap::new();
    let mut waits: Vec<Option<String>> = vec![None; files.len()];
    let mut queue: VecDeque<usize> = (0..files.len()).collect();
    let mut tried = vec![false; files.len()];
    while let Some(i) = queue.pop_front() {
        let (file, size) = (&files[i], sizes[i]);
        let first_time = !std::mem::replace(&mut tried[i], true);
        let imported = std::fs::read_to_string(file)
            .map_err(|e| (format!("cannot read: {e}"), None))
            .and_then(|text| {
                if first_time {
                    json_bytes += text.len();
                }
                // One document is all or nothing in the store; and nothing is written unless
                // every document imports, or --keep-going says to write what did.
                let format = FormatArg::of(file, how.format);
                let read = if format == FormatArg::Sjson {
                    options.format(TextFormat::Sjson)
                } else {
                    options
                };
                let imported = store.import(&text, &read).map_err(|e| {
                    let hint = if how.lenient { "" } else { lenient_hint(&e) };
                    let name = match e.kind() {
                        JsonErrorKind::UnknownPrototype { name } => Some(name.clone()),
                        _ => None,
                    };
                    (format!("{e}{hint}"), name)
                })?;
                if format == FormatArg::Sjson {
                    sjson_documents += 1;
                }
                Ok(imported)
            });
        match imported {
            Ok(imported) => {
                firsts.add(file, &imported.report);
                add(&mut report, &imported.report);
                waits[i] = None;
                // The files waiting for a name this one brings are read again.
                for &id in &imported.ids {
                    let name = store.get(id).and_then(|blob| blob.get_str(ID_KEY));
                    if let Some(again) = name.and_then(|name| waiting.remove(name)) {
                        queue.extend(again);
                    }
                }
            }
            Err((why, Some(name))) => {
                waiting.entry(name).or_default().push(i);
                waits[i] = Some(why);
            }
            Err((why, None)) if how.keep_going => {
                report_failure(progress.as_ref(), file, &why);
                failed.push((file, why));
            }
            Err((why, None)) => {
                // Which file failed first is the message's place; the files after it are
                // not read.
                let rest = tried.iter().filter(|&&t| !t).count();
                return Err(Failure::at(file.display(), format!("{why}{}", not_read(rest))));
            }
        }
        if progress.is_none() && start.elapsed() > QUIET_FOR {
            progress = Some(progress_bar(total));
        }
        if let (Some(bar), true) = (&progress, first_time) {
            bar.inc(size);
        }
    }
    // What still waits names a prototype no file has: in the files' order.
    for (i, why) in waits.into_iter().enumerate() {
        let Some(why) = why else { continue };
        let file = &files[i];
        if !how.keep_going {
            return Err(Failure::at(file.display(), why));
        }
        report_failure(progress.as_ref(), file, &why);
        failed.push((file, why));
    }
    let read_time = start.elapsed();
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    let imported_files = files.len() - failed.len();
    if imported_files == 0 {
        return Err(Failure::Message(format!(
            "none of the {} imported: nothing written",
            plural(files.len(), "file", "files")
        )));
    }

    let start = Instant::now();
    // The save replaces the file whole, so the lock is needed only around the write.
    let file = lock(output)?;
    save(&file, &mut store, output)?;
    let save_time = start.elapsed();
    let file_len = std::fs::metadata(output).map_or(0, |m| m.len() as usize);
    drop(file);

    if how.json {
        let failures: Vec<_> = failed
            .iter()
            .map(|(file, why)| json!({"file": file.display().to_string(), "error": why}))
            .collect();
        json_line(
            out,
            &json!({
                "output": output.display().to_string(),
                "entities": store.len(),
                "documents": imported_files,
                "sjson_documents": sjson_documents,
                "text_bytes": json_bytes,
                "file_bytes": file_len,
                "key_names": store.key_names().len(),
                "converted_arrays": report.converted_arrays,
                "lost_digits": report.lost_digits,
                "rounded_numbers": report.rounded_numbers,
                "empty_objects": report.empty_objects,
                "failed": failures,
            }),
        )?;
    } else {
        let json_documents = imported_files - sjson_documents;
        let documents = match (json_documents, sjson_documents) {
            (_, 0) => plural(imported_files, "JSON document", "JSON documents"),
            (0, _) => plural(imported_files, "SJSON document", "SJSON documents"),
            (json, sjson) => format!(
                "{}, {json} JSON and {sjson} SJSON",
                plural(imported_files, "document", "documents")
            ),
        };
        writeln!(
            out,
            "imported {} from {documents} ({}) in {read_time:.1?}",
            plural(store.len(), "entity", "entities"),
            Bytes(json_bytes),
        )?;
        // Each change with the place of its first, so that a user can look at what changed.
        if how.lenient {
            writeln!(
                out,
                "lenient: {} converted to objects{}, {} rounded{}",
                plural(report.converted_arrays, "array", "arrays"),
                first_at(firsts.converted.as_ref()),
                plural(report.rounded_numbers, "number", "numbers"),
                first_at(firsts.rounded.as_ref()),
            )?;
        }
        if report.empty_objects > 0 {
            // Strict imports leave them out too: said whatever the policy.
            writeln!(
                out,
                "{} left out: they hold no keys{}",
                plural(report.empty_objects, "empty object", "empty objects"),
                first_at(firsts.empty_object.as_ref()),
            )?;
        }
        if report.lost_digits > 0 {
            // Said whatever the policy: strict imports read them too (--exact-numbers refuses).
            let example = firsts.lost_digits_example.clone().unwrap_or_default();
            writeln!(
                out,
                "warning: {} lose digits in f32{}: {} (--exact-numbers refuses them)",
                plural(report.lost_digits, "number", "numbers"),
                first_at(firsts.lost_digits.as_ref()),
                Escaped(&example),
            )?;
        }
        let per_entity = file_len.checked_div(store.len()).unwrap_or(0);
        writeln!(
            out,
            "wrote {} ({}, {per_entity} bytes an entity, {}) in {save_time:.1?}",
            shown(output),
            Bytes(file_len),
            plural(store.key_names().len(), "key name", "key names"),
        )?;
    }
    match failed.first() {
        None => Ok(()),
        Some((first, _)) => Err(Failure::Message(format!(
            "{} of {} did not import, the first {}; the save holds the others",
            failed.len(),
            plural(files.len(), "file", "files"),
            shown(first)
        ))),
    }
}

/// `; N files after it not read (...)`, or nothing for none.
fn not_read(rest: usize) -> String {
    match rest {
        0 => String::new(),
        _ => format!(
            "; {} after it not read (--keep-going imports what reads)",
            plural(rest, "file", "files")
        ),
    }
}

/// Says on stderr (above the progress bar, if there is one) why `file` did not import.
fn report_failure(progress: Option<&ProgressBar>, file: &Path, why: &str) {
    let line = format!("datacomp: {}: {}", shown(file), Escaped(why));
    match progress {
        Some(bar) => bar.suspend(|| eprintln!("{line}")),
        None => eprintln!("{line}"),
    }
}

fn add(total: &mut ImportReport, more: &ImportReport) {
    total.converted_arrays += more.converted_arrays;
    total.rounded_numbers += more.rounded_numbers;
    total.empty_objects += more.empty_objects;
    total.lost_digits += more.lost_digits;
}

/// The first place of each kind of change over the files of an import: (file, JSON Pointer).
#[derive(Default)]
struct Firsts<'f> {
    converted: Option<(&'f Path, String)>,
    rounded: Option<(&'f Path, String)>,
    empty_object: Option<(&'f Path, String)>,
    lost_digits: Option<(&'f Path, String)>,
    lost_digits_example: Option<String>,
}

impl<'f> Firsts<'f> {
    /// Keeps the places of `report` (of `file`) that no earlier file had.
    fn add(&mut self, file: &'f Path, report: &ImportReport) {
        let keep = |first: &mut Option<(&'f Path, String)>, path: &Option<String>| {
            if first.is_none() {
                *first = path.clone().map(|path| (file, path));
            }
        };
        keep(&mut self.converted, &report.first_converted);
        keep(&mut self.rounded, &report.first_rounded);
        keep(&mut self.empty_object, &report.first_empty_object);
        if self.lost_digits.is_none() {
            self.lost_digits_example.clone_from(&report.lost_digits_example);
        }
        keep(&mut self.lost_digits, &report.first_lost_digits);
    }
}

/// ` (the first at PATH in FILE)`, or nothing.
fn first_at(first: Option<&(&Path, String)>) -> String {
    first.map_or(String::new(), |(file, path)| {
        format!(" (the first at {} in {})", Escaped(path), file.display())
    })
}

/// A bar on stderr, in bytes of JSON read; indicatif hides it when stderr is not a terminal.
fn progress_bar(total: u64) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("importing {bar:40} {bytes}/{total_bytes} ({eta} left)")
    {
        bar.set_style(style);
    }
    bar
}
