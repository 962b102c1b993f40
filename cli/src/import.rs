//! `datacomp import`: JSON and SJSON fixtures into a new save file, all or nothing.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use datacomp::text::Escaped;
use datacomp::text::ImportReport;
use datacomp::{ImportOptions, Store, TextFormat};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::args::FormatArg;
use crate::files::{lock, not_an_input, save};
use crate::output::{Bytes, Failure};

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

/// Whether `file` is read as SJSON: as `format` says, else when it is named `*.sjson`.
fn is_sjson(file: &Path, format: Option<FormatArg>) -> bool {
    match format {
        Some(format) => format == FormatArg::Sjson,
        None => file.extension().is_some_and(|ext| ext == "sjson"),
    }
}

/// `datacomp import`.
pub fn run(
    inputs: &[PathBuf],
    output: &Path,
    lenient: bool,
    exact_numbers: bool,
    format: Option<FormatArg>,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let files = collect_files(inputs)?;
    if files.is_empty() {
        return Err(Failure::Message("no JSON or SJSON files among the inputs".into()));
    }
    not_an_input(output, &files, "the save")?;
    let options = if lenient { ImportOptions::lenient() } else { ImportOptions::strict() };
    let options = options.exact_numbers(exact_numbers);
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
    for (file, size) in files.iter().zip(&sizes) {
        let text = std::fs::read_to_string(file)
            .map_err(|e| Failure::at(file.display(), format!("cannot read: {e}")))?;
        json_bytes += text.len();
        // One document is all or nothing in the store; and nothing is written unless every
        // document imports.
        let read = if is_sjson(file, format) {
            sjson_documents += 1;
            options.format(TextFormat::Sjson)
        } else {
            options
        };
        let file_report =
            store.import(&text, &read).map_err(|e| Failure::at(file.display(), e))?.report;
        firsts.add(file, &file_report);
        add(&mut report, &file_report);
        if progress.is_none() && start.elapsed() > QUIET_FOR {
            progress = Some(progress_bar(total));
        }
        if let Some(bar) = &progress {
            bar.inc(*size);
        }
    }
    let read_time = start.elapsed();
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }

    let start = Instant::now();
    // The save replaces the file whole, so the lock is needed only around the write.
    let file = lock(output)?;
    save(&file, &mut store, output)?;
    let save_time = start.elapsed();
    let file_len = std::fs::metadata(output).map_or(0, |m| m.len() as usize);

    let documents = if files.len() == 1 { "document" } else { "documents" };
    let json_documents = files.len() - sjson_documents;
    let documents = match (json_documents, sjson_documents) {
        (_, 0) => format!("{} JSON {documents}", files.len()),
        (0, _) => format!("{} SJSON {documents}", files.len()),
        (json, sjson) => format!("{} {documents}, {json} JSON and {sjson} SJSON", files.len()),
    };
    writeln!(
        out,
        "imported {} entities from {documents} ({}) in {read_time:.1?}",
        store.len(),
        Bytes(json_bytes),
    )?;
    // Each change with the place of its first, so that a user can look at what changed.
    if lenient {
        writeln!(
            out,
            "lenient: {} arrays converted to objects{}, {} numbers rounded{}",
            report.converted_arrays,
            first_at(firsts.converted.as_ref()),
            report.rounded_numbers,
            first_at(firsts.rounded.as_ref()),
        )?;
    }
    if report.empty_objects > 0 {
        // Strict imports leave them out too: said whatever the policy.
        writeln!(
            out,
            "{} empty objects left out: they hold no keys{}",
            report.empty_objects,
            first_at(firsts.empty_object.as_ref()),
        )?;
    }
    if report.lost_digits > 0 {
        // Said whatever the policy: strict imports read them too (--exact-numbers refuses).
        let example = firsts.lost_digits_example.unwrap_or_default();
        writeln!(
            out,
            "warning: {} numbers lose digits in f32{}: {} (--exact-numbers refuses them)",
            report.lost_digits,
            first_at(firsts.lost_digits.as_ref()),
            Escaped(&example),
        )?;
    }
    let per_entity = file_len.checked_div(store.len()).unwrap_or(0);
    writeln!(
        out,
        "wrote {} ({}, {per_entity} bytes an entity, {} key names) in {save_time:.1?}",
        crate::output::shown(output),
        Bytes(file_len),
        store.key_names().len(),
    )?;
    Ok(())
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
