//! `datacomp`: import, inspect, edit, export and verify datacomp save files.
//!
//! With no subcommand it runs a demo on the fixtures bundled into the binary. Every failure is
//! one line on stderr, `datacomp: <where>: <what>`, and a non-zero exit code: 1 when the files
//! say no (a damaged save, an ID that names no entity, a key the entity lacks), 2 when the
//! command line is wrong (clap's own code, and an ID, KEY, VALUE or filter that does not read
//! as one: [`Failure::Usage`], found before any file is written).
//!
//! The modules form layers; each imports only from the layers below it, so there is no
//! circle (a test below reads the sources and checks it):
//!
//! ```text
//!  main.rs        the clap definitions, and `run`, which hands each subcommand to its file
//!    │
//!    ├─▶ delta.rs demo.rs edit.rs flatten.rs import.rs inspect.rs migrate.rs query.rs
//!    │   upgrade.rs
//!    │     one command (or a family) each; none imports another command file
//!    │
//!    ├─▶ files.rs   reading, locking, loading and saving files; export, verify, salvage
//!    ├─▶ args.rs    argument types and parsers: ids, keys, values, --format/--prefer/--type
//!    └─▶ output.rs  `Failure`, and how sizes, values, entries and buffers are printed
//! ```
//!
//! A command file imports `files`, `args` and `output`; `files` imports `args` and `output`;
//! `args` imports `output`; `output` imports no other module of the command.

#![forbid(unsafe_code)]

mod args;
mod delta;
mod demo;
mod edit;
mod files;
mod flatten;
mod import;
mod inspect;
mod migrate;
mod output;
#[cfg(feature = "pg")]
mod pg;
mod query;
mod upgrade;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use datacomp::Migrations;

use crate::args::{FormatArg, PreferArg, TypeArg};
use crate::output::Failure;

/// Per-entity game data, one pointerless buffer per entity, every entity in one arena.
///
/// An ID names an entity as `datacomp list` prints it: `<index>v<generation>t<type>`, e.g.
/// `0v0t1`, and is always the argument after the FILE. A KEY is a dotted path
/// (`stats.health`), a JSON Pointer for member names that contain dots (`/a.b/c`), or a raw
/// hash (`#1a2b3c4d`). Every command that prints results takes --json. Exit codes: 0 done,
/// 1 the files said no (a damaged save, an ID that names no entity, a key it lacks), 2 the
/// command line is wrong (an unknown command or option, an ID, KEY or VALUE that is not one).
#[derive(Parser, Debug)]
#[command(name = "datacomp", version, after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

const EXAMPLES: &str = "\
With no command, runs a demo on the bundled fixtures.

Examples:
  datacomp import fixtures/party.json fixtures/sheets -o world.dcmp
  datacomp import fixtures/ -o world.dcmp --keep-going
  datacomp list world.dcmp
  datacomp inspect world.dcmp 0v0t1
  datacomp set world.dcmp 0v0t1 stats.health 95
  datacomp export world.dcmp 0v0t1
  datacomp export world.dcmp 0v0t1 -o one.sjson
  datacomp get world.dcmp 4v0t1 --own
  datacomp flatten world.dcmp --all -o flat.dcmp
  datacomp query world.dcmp 'status_effects.poisoned and stats.health < 20' --keys name,kind
  datacomp diff base.dcmp now.dcmp -o changes.delta
  datacomp apply base.dcmp changes.delta -o now.dcmp
  datacomp diff base.dcmp now.dcmp --chain a1.delta a2.delta -o a3.delta
  datacomp apply base.dcmp a1.delta a2.delta a3.delta -o now.dcmp
  datacomp merge base.dcmp ours.dcmp theirs.dcmp -o merged.dcmp
  datacomp upgrade old.dcmp -o world.dcmp --known-keys keys.txt
  datacomp migrate world.dcmp --with migrations.json --dry-run
  datacomp completions bash > /etc/bash_completion.d/datacomp
  datacomp man > datacomp.1";

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the demo on the bundled fixtures (what running with no command does).
    Demo,
    /// Import JSON and SJSON fixtures (files, or directories of *.json and *.sjson, searched
    /// recursively) into a new save file. All or nothing: if one document fails, no file is
    /// written, unless --keep-going. A document may name prototypes ("$prototype") of any
    /// document: one that names a later document's is read again once that one is.
    Import {
        /// JSON or SJSON files, or directories to search for *.json and *.sjson files.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// The save file to write (replaced atomically if it exists).
        #[arg(short, long)]
        output: PathBuf,
        /// Keep nulls, convert arrays of non-numbers to objects keyed by index (exported back
        /// as arrays) and clamp numbers past f32's range, and report what changed, instead of
        /// refusing them.
        #[arg(long)]
        lenient: bool,
        /// Refuse a number that loses digits in f32 (3.141592653589793 would be written back
        /// as 3.1415927) instead of warning about it.
        #[arg(long)]
        exact_numbers: bool,
        /// Read every file as this format, whatever its name (by default *.sjson files are
        /// SJSON and any other file JSON).
        #[arg(long, value_name = "FORMAT")]
        format: Option<FormatArg>,
        /// Import every document that reads, report each that does not (on stderr), write the
        /// save of what read, and exit 1 if any failed.
        #[arg(long)]
        keep_going: bool,
        /// Print the summary as JSON, for scripts.
        #[arg(long)]
        json: bool,
    },
    /// List the entities of a save file in handle order: ID, key count, bytes and name (read
    /// through its prototypes), and the $id of an instance's prototype. Abstract entities
    /// ("$abstract": true: prototypes only) are left out unless --all.
    List {
        /// The save file.
        file: PathBuf,
        /// List abstract entities too.
        #[arg(long)]
        all: bool,
        /// Print one JSON object per entity and line: {"id", "keys", "bytes", "name",
        /// "prototype", "abstract"}.
        #[arg(long)]
        json: bool,
    },
    /// Show a save file's header, sections and arena use; or one entity's prototype chain,
    /// entries and a diagram of its buffer.
    Inspect {
        /// The save file.
        file: PathBuf,
        /// Show this entity.
        id: Option<String>,
        /// Print JSON, for scripts.
        #[arg(long)]
        json: bool,
    },
    /// Print one value of an entity, or all of them without a KEY: the values it reads, its
    /// own or through its prototypes (each of those marked with the entity it comes from).
    Get {
        /// The save file.
        file: PathBuf,
        /// The entity.
        id: String,
        /// The key.
        key: Option<String>,
        /// Only what the entity stores itself: its overrides, and the keys it removes from
        /// what it inherits.
        #[arg(long)]
        own: bool,
        /// Print JSON, for scripts.
        #[arg(long)]
        json: bool,
    },
    /// Set a value and save the file. The type follows from the value (true/false, a number,
    /// [numbers], else a string) unless --type says it.
    Set {
        /// The save file.
        file: PathBuf,
        /// The entity.
        id: String,
        /// The key.
        key: String,
        /// The value.
        #[arg(allow_hyphen_values = true)]
        value: String,
        /// The value's type.
        #[arg(long = "type", value_name = "TYPE")]
        ty: Option<TypeArg>,
        /// Print what changed as JSON, for scripts.
        #[arg(long)]
        json: bool,
    },
    /// Remove a key from an entity, or the entity itself without a KEY, and save the file.
    Rm {
        /// The save file.
        file: PathBuf,
        /// The entity.
        id: String,
        /// The key.
        key: Option<String>,
        /// Print what was removed as JSON, for scripts.
        #[arg(long)]
        json: bool,
    },
    /// Write entities as JSON or SJSON: all of them as an array, or one as an object (in SJSON,
    /// its members without braces, as designers write sheets).
    Export {
        /// The save file.
        file: PathBuf,
        /// Export only this entity.
        id: Option<String>,
        /// Write here instead of stdout (a *.sjson file is written as SJSON).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// One line, no indentation (JSON only).
        #[arg(long)]
        compact: bool,
        /// The format to write (by default SJSON for an -o named *.sjson, else JSON).
        #[arg(long, value_name = "FORMAT")]
        format: Option<FormatArg>,
        /// Write each entity whole, with the values it reads through its prototypes and no
        /// $prototype; abstract entities are left out of an export of all.
        #[arg(long)]
        flatten: bool,
    },
    /// Make an instance whole: it keeps every value it reads through its prototypes as its
    /// own and no longer has a prototype; or every instance, with --all. Writes the save to
    /// -o (which may be FILE itself) atomically. The prototypes stay.
    Flatten {
        /// The save file.
        file: PathBuf,
        /// The instance.
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        id: Option<String>,
        /// Every instance.
        #[arg(long)]
        all: bool,
        /// The save file to write (replaced atomically if it exists).
        #[arg(short, long)]
        output: PathBuf,
        /// Print the summary as JSON, for scripts.
        #[arg(long)]
        json: bool,
    },
    /// Print what changed from BASE to TARGET as JSON, keys by name: entities inserted
    /// (with their entries), removed, and changed (keys set, keys removed). Two files that name
    /// one hash differently are refused, as merge refuses them.
    Diff {
        /// The save file before.
        base: PathBuf,
        /// The save file after.
        target: PathBuf,
        /// Also write the changes as a delta file, which `apply` turns BASE into TARGET with.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Deltas to apply to BASE first, in order (an autosave chain): the changes, and the
        /// delta written, are then from the chain's end, the chain's next link.
        #[arg(long, value_name = "DELTA", num_args = 1..)]
        chain: Vec<PathBuf>,
        /// One line, no indentation.
        #[arg(long)]
        compact: bool,
        /// JSON is what diff prints; accepted, as every command that prints results takes it.
        #[arg(long)]
        json: bool,
    },
    /// Apply a delta file (from `diff -o`) to the save file it was made from; or a chain of
    /// them, each made from what the ones before it give (autosaves). A delta made from
    /// another base is refused, naming it, and nothing is written.
    Apply {
        /// The save file the (first) delta was made from.
        base: PathBuf,
        /// The delta files, in order (at most 1024).
        #[arg(required = true, value_name = "DELTA")]
        deltas: Vec<PathBuf>,
        /// The save file to write.
        #[arg(short, long)]
        output: PathBuf,
        /// Print the summary as JSON, for scripts.
        #[arg(long)]
        json: bool,
    },
    /// Merge the changes THEIRS made to BASE into OURS, entity by entity and key by key. A key
    /// changed on one side takes that change; removing beats changing; a key both sides changed
    /// differently is a conflict, which fails the merge (nothing is written) unless --prefer
    /// picks a side. Entities THEIRS inserted get new IDs, which are printed. Saves that do not
    /// descend from BASE (another import's) are refused.
    Merge {
        /// The common ancestor.
        base: PathBuf,
        /// Our version.
        ours: PathBuf,
        /// Their version.
        theirs: PathBuf,
        /// The save file to write.
        #[arg(short, long)]
        output: PathBuf,
        /// Resolve conflicts with this side's value.
        #[arg(long)]
        prefer: Option<PreferArg>,
        /// Print the report as JSON, for scripts.
        #[arg(long)]
        json: bool,
    },
    /// Print the entities that pass a filter, one per line: the ID, then the value of each of
    /// --keys (`-` where there is none). A filter tests keys: `stats.health < 20` (or `<=`,
    /// `>`, `>=`, `==`, `!=`), `name == "Orc"`, `flying` (holds true), `has title`,
    /// `firmness == null` (or `!= null`: holds another value), joined
    /// with and, or, not and parentheses. Every key named (in the filter or --keys) must be
    /// one of the save's key names, else it is an error naming it; `#xxxxxxxx` names a key
    /// by its hash, unchecked. The file is read in place, not loaded.
    Query {
        /// The save file.
        file: PathBuf,
        /// The filter, e.g. 'status_effects.poisoned and stats.health < 20'.
        filter: String,
        /// Keys whose values to print after each ID, comma-separated (spaces around them
        /// are dropped).
        #[arg(long, value_name = "KEY,...", value_delimiter = ',')]
        keys: Vec<String>,
        /// Test and print abstract entities too ("$abstract": true: prototypes only).
        #[arg(long)]
        all: bool,
        /// Print one JSON object per line, for scripts: {"id": ..., "keys": {KEY: value}}.
        #[arg(long)]
        json: bool,
    },
    /// Rewrite a save of an older key hash (1 or 2) with this build's (3). Each key is
    /// rehashed from its name in the save, else (key hash 1) from the path in --known-keys that had
    /// its old hash; a key neither explains fails the upgrade, naming its entity and hash
    /// (nothing is written). Key hash 2 differs only in names with an empty segment.
    Upgrade {
        /// The old save file.
        old: PathBuf,
        /// The save file to write (replaced atomically if it exists).
        #[arg(short, long)]
        output: PathBuf,
        /// A file of the paths the save's unnamed keys may have, one a line: dotted
        /// (stats.health), or a JSON Pointer (/a.b/c) for a member name that holds a dot.
        #[arg(long, value_name = "FILE")]
        known_keys: Option<PathBuf>,
        /// Print the summary as JSON, for scripts.
        #[arg(long)]
        json: bool,
    },
    /// Bring a save to the data version of a migrations file: the steps above the save's
    /// data version run on every entity (renames of keys and subtrees, removals, defaults,
    /// sets), and the report says what each changed. All or nothing: an error names the step,
    /// entity and key, and nothing is written.
    Migrate {
        /// The save file.
        file: PathBuf,
        /// The migrations: {"version": 3, "steps": [{"to": 2, "rename": {"hp":
        /// "stats.health"}}, {"to": 3, "remove": [...], "default": {...}, "set": {...}}]}.
        #[arg(long, value_name = "MIGRATIONS")]
        with: PathBuf,
        /// Write the migrated save here instead of replacing FILE.
        #[arg(short, long, conflicts_with = "dry_run")]
        output: Option<PathBuf>,
        /// Print the report only: write nothing.
        #[arg(long)]
        dry_run: bool,
        /// Refuse, before any step runs, if the migrated entities could take more than BYTES
        /// (estimated from above: every default and set added to each entity).
        #[arg(long, value_name = "BYTES", default_value_t = Migrations::DEFAULT_MAX_OUTPUT)]
        max_output: u64,
        /// Print the report as JSON, for scripts.
        #[arg(long)]
        json: bool,
    },
    /// Validate a save file fully: header, table, checksums, padding, handles, spans and every
    /// blob. Exits 1 with the reason if anything is wrong. With --salvage, writes every entity
    /// whose bytes check out (under its handle) to -o and lists the others with why, as runs of
    /// consecutive handles lost for one reason ("lost 0v0t1..0v0t40 (40): ...", in --json
    /// "lost": [{"first", "last", "count", "why"}] and "lost_count"); it exits
    /// 1 if it lost any entity or kept none, or if the header, table, index or key names
    /// cannot be read (then writing nothing).
    Verify {
        /// The save file.
        file: PathBuf,
        /// Keep what can be read of a damaged save (needs -o).
        #[arg(long, requires = "output")]
        salvage: bool,
        /// Where --salvage writes the repaired save (replaced atomically if it exists).
        #[arg(short, long, requires = "salvage")]
        output: Option<PathBuf>,
        /// Print the result as JSON, for scripts.
        #[arg(long)]
        json: bool,
    },
    /// Print a completion script for a shell: `datacomp completions bash >
    /// ~/.local/share/bash-completion/completions/datacomp`, or zsh, fish, elvish, powershell.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff): `datacomp man > datacomp.1; man ./datacomp.1`.
    Man,
    /// Move a world between a save file and PostgreSQL (a build with `--features pg`).
    #[cfg(feature = "pg")]
    Pg {
        #[command(subcommand)]
        command: PgCommand,
    },
}

/// `datacomp pg`'s subcommands.
#[cfg(feature = "pg")]
#[derive(Subcommand, Debug)]
enum PgCommand {
    /// Make a world the save file's store, in one commit of the difference (the world is
    /// made if missing; the schema too). Exits 1, writing nothing, if the world moved on
    /// meanwhile.
    Push(PgArgs),
    /// Save a world as it is now to a save file (replaced atomically if it exists).
    Pull(PgArgs),
}

/// The arguments of `datacomp pg push` and `pull`.
#[cfg(feature = "pg")]
#[derive(clap::Args, Debug)]
struct PgArgs {
    /// The save file.
    file: PathBuf,
    /// The world's name.
    #[arg(long, value_name = "NAME")]
    world: String,
    /// The server's connection string (`host=/run/postgresql user=game dbname=game`);
    /// DATACOMP_PG when not given.
    #[arg(long, value_name = "PARAMS")]
    db: Option<String>,
    /// Print the result as JSON, for scripts.
    #[arg(long)]
    json: bool,
}

fn run(cli: Cli, out: &mut dyn Write) -> Result<(), Failure> {
    match cli.command.unwrap_or(Command::Demo) {
        Command::Demo => demo::run(out),
        Command::Import { inputs, output, lenient, exact_numbers, format, keep_going, json } => {
            let how = import::How { lenient, exact_numbers, format, keep_going, json };
            import::run(&inputs, &output, how, out)
        }
        Command::List { file, all, json } => inspect::list(&file, all, json, out),
        Command::Inspect { file, id, json } => inspect::run(&file, id.as_deref(), json, out),
        Command::Get { file, id, key, own, json } => {
            edit::get(&file, &id, key.as_deref(), own, json, out)
        }
        Command::Set { file, id, key, value, ty, json } => {
            edit::set(&file, &id, &key, &value, ty, json, out)
        }
        Command::Rm { file, id, key, json } => edit::rm(&file, &id, key.as_deref(), json, out),
        Command::Export { file, id, output, compact, format, flatten } => {
            let how = files::ExportHow { compact, format, flatten };
            files::export(&file, id.as_deref(), output.as_deref(), how, out)
        }
        Command::Flatten { file, id, all: _, output, json } => {
            let which = id.as_deref().map_or(flatten::Which::All, flatten::Which::One);
            flatten::run(&file, which, &output, json, out)
        }
        Command::Diff { base, target, output, chain, compact, json: _ } => {
            delta::diff(&base, &chain, &target, output.as_deref(), compact, out)
        }
        Command::Apply { base, deltas, output, json } => {
            delta::apply(&base, &deltas, &output, json, out)
        }
        Command::Merge { base, ours, theirs, output, prefer, json } => {
            delta::merge([&base, &ours, &theirs], &output, prefer.map(Into::into), json, out)
        }
        Command::Query { file, filter, keys, all, json } => {
            query::run(&file, &filter, &keys, all, json, out)
        }
        Command::Verify { file, salvage: false, json, .. } => files::verify(&file, json, out),
        Command::Verify { file, salvage: true, output, json } => {
            let output = output.ok_or_else(|| Failure::usage("verify --salvage needs -o"))?;
            files::salvage(&file, &output, json, out)
        }
        Command::Upgrade { old, output, known_keys, json } => {
            upgrade::run(&old, &output, known_keys.as_deref(), json, out)
        }
        Command::Migrate { file, with, output, dry_run, max_output, json } => {
            migrate::run(&file, &with, output.as_deref(), dry_run, max_output, json, out)
        }
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "datacomp", out);
            Ok(())
        }
        Command::Man => Ok(clap_mangen::Man::new(Cli::command()).render(out)?),
        #[cfg(feature = "pg")]
        Command::Pg { command: PgCommand::Push(a) } => {
            pg::push(&a.file, &a.world, a.db.as_deref(), a.json, out)
        }
        #[cfg(feature = "pg")]
        Command::Pg { command: PgCommand::Pull(a) } => {
            pg::pull(&a.file, &a.world, a.db.as_deref(), a.json, out)
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let result = run(cli, &mut out).and_then(|()| out.flush().map_err(Failure::from));
    let (message, code) = match result {
        // A reader that stopped early (`datacomp export world.dcmp | head`) is not an error.
        Ok(()) | Err(Failure::BrokenPipe) => return ExitCode::SUCCESS,
        Err(Failure::Message(message)) => (message, 1),
        Err(Failure::Usage(message)) => (message, 2),
    };
    // What was printed before the failure goes out first, then the reason.
    drop(out);
    // Whatever a message quotes, it cannot drive the terminal or break the line.
    eprintln!("datacomp: {}", datacomp::text::Escaped(&message));
    ExitCode::from(code)
}

#[cfg(test)]
mod tests {
    /// Each module's source, and the modules it may import (see the module graph above).
    const MODULES: [(&str, &str, &[&str]); 13] = [
        ("output", include_str!("output.rs"), &[]),
        ("args", include_str!("args.rs"), &["output"]),
        ("files", include_str!("files.rs"), &["args", "output"]),
        ("delta", include_str!("delta.rs"), &["files", "args", "output"]),
        ("demo", include_str!("demo.rs"), &["files", "args", "output"]),
        ("edit", include_str!("edit.rs"), &["files", "args", "output"]),
        ("flatten", include_str!("flatten.rs"), &["files", "args", "output"]),
        ("import", include_str!("import.rs"), &["files", "args", "output"]),
        ("inspect", include_str!("inspect.rs"), &["files", "args", "output"]),
        ("migrate", include_str!("migrate.rs"), &["files", "args", "output"]),
        ("query", include_str!("query.rs"), &["files", "args", "output"]),
        ("upgrade", include_str!("upgrade.rs"), &["files", "args", "output"]),
        ("pg", include_str!("pg.rs"), &["files", "output"]),
    ];

    #[test]
    fn modules_import_only_the_layers_below_them() {
        let mut found = Vec::new();
        for (module, source, allowed) in MODULES {
            for (at, _) in source.match_indices("crate::") {
                let rest = &source[at + "crate::".len()..];
                let end = rest.find(|c: char| !c.is_ascii_alphanumeric() && c != '_');
                let used = &rest[..end.unwrap_or(rest.len())];
                if !allowed.contains(&used) {
                    found.push(format!("{module} imports {used}"));
                }
            }
        }
        assert_eq!(found, Vec::<String>::new());
        // The test sees every module of the command.
        let declared = include_str!("main.rs")
            .lines()
            .filter(|line| line.starts_with("mod ") && line.ends_with(';'))
            .count();
        assert_eq!(declared, MODULES.len());
    }
}
