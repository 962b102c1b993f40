//! The command's conventions, run as a process: one way to name an entity, `--json` on every
//! command that prints results, exit 2 for a command line that does not read and 1 for files
//! that say no, suggestions for typos, `import --keep-going`, completions and the man page, and
//! the packaging facts the published crates rely on.

#[path = "common/outcome.rs"]
mod outcome;
#[path = "common/world.rs"]
mod world;

use std::path::Path;

use datacomp::Store;
use serde_json::Value;
use tempfile::TempDir;
use world::{World, fails, fixtures, misused, ok, run};

/// The one JSON document a `--json` run printed.
fn json(args: &[&str]) -> Value {
    let text = ok(args);
    assert_eq!(text.lines().count(), 1, "{args:?}: one line: {text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{args:?}: {e}: {text}"))
}

/// Each line a JSON document.
fn json_lines(args: &[&str]) -> Vec<Value> {
    ok(args).lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

#[test]
fn every_command_that_prints_results_prints_json_with_json() {
    let world = World::new();
    let w = world.path.as_str();
    let classic = fixtures().join("sheets/classic.json");
    let imported =
        json(&["import", classic.to_str().unwrap(), "-o", &world.file("c.dcmp"), "--json"]);
    assert_eq!((imported["entities"].as_u64(), imported["documents"].as_u64()), (Some(1), Some(1)));
    assert_eq!(imported["key_names"], 5);
    assert_eq!(imported["failed"], serde_json::json!([]));

    let listed = json_lines(&["list", w, "--json"]);
    assert_eq!(listed.len(), 7);
    assert_eq!(listed[2]["id"], "2v0t1");
    assert_eq!(listed[2]["name"], "Cave Troll");
    assert_eq!((listed[2]["keys"].as_u64(), listed[2]["bytes"].as_u64()), (Some(10), Some(160)));

    let verified = json(&["verify", w, "--json"]);
    assert_eq!(verified["ok"], true);
    assert_eq!(verified["kind"], "save");
    assert_eq!(verified["entities"], 7);
    assert_eq!(verified["key_names"], 91);
    assert_eq!(verified["stale_temps"], serde_json::json!([]));

    let before = world.file("before.dcmp");
    std::fs::copy(w, &before).unwrap();
    let set = json(&["set", w, "2v0t1", "stats.health", "95", "--json"]);
    assert_eq!(
        set,
        serde_json::json!({"id": "2v0t1", "key": "stats.health", "old": 140, "value": 95})
    );
    let new_key = json(&["set", w, "2v0t1", "stats.luck", "3", "--json"]);
    assert_eq!(new_key["old"], Value::Null);
    let removed = json(&["rm", w, "2v0t1", "stats.luck", "--json"]);
    assert_eq!(removed, serde_json::json!({"id": "2v0t1", "removed_key": "stats.luck"}));

    let delta = world.file("d.delta");
    let diff = json(&["diff", &before, w, "-o", &delta, "--compact", "--json"]);
    assert_eq!(diff["changed"][0]["set"]["stats.health"], 95);
    let applied = json(&["apply", &before, &delta, "-o", &world.file("a.dcmp"), "--json"]);
    assert_eq!((applied["entities"].as_u64(), applied["changed"].as_u64()), (Some(7), Some(1)));
    let verified = json(&["verify", &delta, "--json"]);
    assert_eq!((verified["kind"].as_str(), verified["changed"].as_u64()), (Some("delta"), Some(1)));

    let merged = json(&["merge", &before, &before, w, "-o", &world.file("m.dcmp"), "--json"]);
    assert_eq!(merged["report"], serde_json::json!(["2v0t1: merged"]));
    assert_eq!(merged["conflicts"], serde_json::json!([]));

    let migrations = world.file("m.json");
    std::fs::write(
        &migrations,
        r#"{"version": 1, "steps": [{"to": 1, "rename": {"kind": "class"}}]}"#,
    )
    .unwrap();
    let migrated = json(&["migrate", w, "--with", &migrations, "--dry-run", "--json"]);
    assert_eq!((migrated["from"].as_u64(), migrated["to"].as_u64()), (Some(0), Some(1)));
    assert_eq!(migrated["steps"][0]["renamed"], 4);
    assert_eq!(migrated["written"], Value::Null);
    let migrated = json(&["migrate", w, "--with", &migrations, "--json"]);
    assert_eq!(migrated["written"], w);
    assert_eq!(Store::load(w).unwrap().data_version(), 1);

    let upgraded = json(&["upgrade", w, "-o", &world.file("u.dcmp"), "--json"]);
    assert_eq!(
        (upgraded["key_hash_from"].as_u64(), upgraded["key_hash_to"].as_u64()),
        (Some(3), Some(3))
    );
    assert_eq!(upgraded["entities"], 7);

    // get, inspect and query had --json already.
    assert_eq!(json(&["get", w, "2v0t1", "stats.health", "--json"])["value"], 95);
    assert_eq!(json(&["inspect", w, "--json"])["entities"], 7);
    assert_eq!(json_lines(&["query", w, "has name", "--json"]).len(), 7);
}

/// One way to name an entity: the argument after FILE, in every command.
#[test]
fn an_entity_is_the_argument_after_the_file_everywhere() {
    let world = World::new();
    let w = world.path.as_str();
    assert!(ok(&["inspect", w, "2v0t1"]).starts_with("entity 2v0t1 \"Cave Troll\": 10 keys"));
    assert!(ok(&["export", w, "2v0t1"]).starts_with("{\n  \"name\": \"Cave Troll\""));
    assert_eq!(ok(&["get", w, "2v0t1", "name"]), "Cave Troll\n");
    // --entity is gone: a usage error, as clap words it.
    let refused = run(&["export", w, "--entity", "2v0t1"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("unexpected argument '--entity'"));
    // --keys is query's comma list only; upgrade's file of paths is --known-keys.
    let refused = run(&["upgrade", w, "-o", &world.file("u.dcmp"), "--keys", "k.txt"]);
    assert_eq!(refused.status.code(), Some(2));
}

/// Exit 2 for a command line that does not read, found before any file is touched; exit 1 for
/// a well-formed one the files say no to.
#[test]
fn usage_errors_exit_2_and_data_errors_exit_1() {
    let world = World::new();
    let w = world.path.as_str();
    let missing = world.file("missing.dcmp");
    // Malformed: exit 2, even where the file is missing (the command line is read first).
    assert_eq!(
        misused(&["get", w, "2", "name"]),
        "bad entity id: \"2\" is not an id: expected INDEXvGENERATION, then tTYPE and f if set \
         (as in 12v3t7), or null (ids look like 0v0t1: see datacomp list)"
    );
    assert_eq!(
        misused(&["set", &missing, "0v0t1", "stats.health", "16777217"]),
        "bad value \"16777217\": 16777217 would be stored as 16777216: f32 cannot hold it"
    );
    assert!(misused(&["rm", &missing, "0v0t1", "#12"]).starts_with("bad key \"#12\""));
    assert!(misused(&["query", w, "stats.health <"]).starts_with("query: "));
    assert_eq!(
        misused(&["export", w, "-o", &world.file("x.sjson"), "--compact"]),
        "--compact is for JSON: SJSON is written one member a line"
    );
    assert_eq!(world.listing(), ["world.dcmp"], "no usage error wrote or locked anything");
    // Well-formed, but the files say no: exit 1.
    assert!(fails(&["get", w, "99v0t1", "name"]).contains("out of range"));
    assert!(fails(&["get", &missing, "0v0t1", "name"]).contains("cannot read"));
    assert!(fails(&["get", w, "0v0t1", "stats.luck"]).contains("has no key stats.luck"));
}

#[test]
fn typos_get_a_suggestion() {
    let world = World::new();
    let w = world.path.as_str();
    assert_eq!(
        fails(&["get", w, "2v0t1", "stats.helth"]),
        format!("{w}: entity 2v0t1 has no key stats.helth: did you mean stats.health?")
    );
    assert_eq!(
        fails(&["query", w, "stats.helth < 3"]),
        format!("{w}: no key named stats.helth (query column 1): did you mean stats.health?")
    );
    // A subcommand: clap's own suggestion, exit 2.
    let typo = run(&["lst", w]);
    assert_eq!(typo.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&typo.stderr).contains("similar subcommand exists: 'list'"));
    // A new key is no error, but one a letter from a key the entity has is worth a word.
    assert_eq!(
        ok(&["set", w, "2v0t1", "stats.helth", "5"]),
        "2v0t1 stats.helth: 5 (new key: did you mean stats.health?)\n"
    );
    // --keys 'name, kind': the spaces are the list's.
    assert_eq!(
        ok(&["query", w, "kind == \"monster\"", "--keys", "name, kind"]),
        "id\tname\tkind\n1v0t1\tOrc Raider\tmonster\n2v0t1\tCave Troll\tmonster\n"
    );
}

#[test]
fn summaries_agree_in_number() {
    let world = World::new();
    let w = world.path.as_str();
    let classic = fixtures().join("sheets/classic.json");
    let one = world.file("one.dcmp");
    let summary = ok(&["import", classic.to_str().unwrap(), "-o", &one]);
    assert!(summary.starts_with("imported 1 entity from 1 JSON document ("), "{summary}");
    assert!(summary.contains(", 5 key names) in "), "{summary}");
    assert!(ok(&["list", &one]).ends_with("\n1 entity\n"));
    assert!(ok(&["verify", &one]).ends_with(", 1 entity, 5 key names\n"));
    let (ours, theirs) = (world.file("ours.dcmp"), world.file("theirs.dcmp"));
    std::fs::copy(w, &ours).unwrap();
    std::fs::copy(w, &theirs).unwrap();
    ok(&["set", &ours, "1v0t1", "name", "Ours"]);
    ok(&["set", &theirs, "1v0t1", "name", "Theirs"]);
    let conflict = fails(&["merge", w, &ours, &theirs, "-o", &world.file("m.dcmp")]);
    assert!(conflict.starts_with(&format!("{ours}: 1 conflicting key (")), "{conflict}");
}

/// `import DIR` stops at the first bad file and says how many it did not read; with
/// --keep-going it imports every file that reads, reports each that does not, writes the
/// save of the rest, and exits 1.
#[test]
fn import_keep_going_imports_what_reads_and_reports_the_rest() {
    let dir = TempDir::new().unwrap();
    let docs = dir.path().join("docs");
    std::fs::create_dir_all(docs.join("invalid")).unwrap();
    std::fs::write(docs.join("a.json"), r#"{"name": "a"}"#).unwrap();
    std::fs::write(docs.join("invalid/b.json"), r#"{"name": "b", "xs": ["x"]}"#).unwrap();
    std::fs::write(docs.join("invalid/c.json"), "{").unwrap();
    std::fs::write(docs.join("z.sjson"), "name = \"z\"\n").unwrap();
    let (d, out) = (docs.to_str().unwrap(), dir.path().join("w.dcmp"));
    let out = out.to_str().unwrap();
    let b = docs.join("invalid/b.json");
    let b = b.to_str().unwrap();
    assert_eq!(
        fails(&["import", d, "-o", out]),
        format!(
            "{b}: /xs/0 (line 1, column 24): arrays may hold numbers only (--lenient converts \
             such arrays to objects keyed by index); 2 files after it not read (--keep-going \
             imports what reads)"
        )
    );
    assert!(!Path::new(out).exists());

    let run = run(&["import", d, "-o", out, "--keep-going"]);
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8(run.stderr).unwrap();
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{stderr}");
    assert!(lines[0].starts_with(&format!("datacomp: {b}: /xs/0 ")), "{stderr}");
    assert!(lines[1].starts_with(&format!("datacomp: {d}/invalid/c.json: ")), "{stderr}");
    assert_eq!(
        lines[2],
        format!("datacomp: 2 of 4 files did not import, the first {b}; the save holds the others")
    );
    let stdout = String::from_utf8(run.stdout).unwrap();
    assert!(
        stdout.starts_with("imported 2 entities from 2 documents, 1 JSON and 1 SJSON ("),
        "{stdout}"
    );
    let names: Vec<String> = Store::load(out)
        .unwrap()
        .iter()
        .map(|(_, blob)| blob.get_str("name").unwrap().to_owned())
        .collect();
    assert_eq!(names, ["a", "z"]);

    // Nothing reads: nothing written.
    let none = dir.path().join("none.dcmp");
    let c = format!("{d}/invalid/c.json");
    let refused = run_keep_going(&c, none.to_str().unwrap());
    assert_eq!(refused, "none of the 1 file imported: nothing written");
    assert!(!none.exists());
}

fn run_keep_going(input: &str, out: &str) -> String {
    let output = run(&["import", input, "-o", out, "--keep-going"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    stderr.lines().last().unwrap().strip_prefix("datacomp: ").unwrap().to_owned()
}

/// `list` prints handle order, whatever order the store keeps its entities in after a
/// removal (which moves the last entity into the removed one's place).
#[test]
fn list_keeps_handle_order_after_rm() {
    let world = World::new();
    let w = world.path.as_str();
    ok(&["rm", w, "1v0t1"]);
    let ids: Vec<String> = ok(&["list", w])
        .lines()
        .skip(1)
        .filter_map(|line| line.split_whitespace().next().map(str::to_owned))
        .filter(|id| id.contains('v'))
        .collect();
    assert_eq!(ids, ["0v0t1", "2v0t1", "3v0t1", "4v0t1", "5v0t1", "6v0t1"]);
}

#[test]
fn completions_and_the_man_page_are_generated() {
    let bash = ok(&["completions", "bash"]);
    assert!(bash.contains("_datacomp()"), "a bash function");
    assert!(bash.contains("--keep-going") && bash.contains("--known-keys"), "every option");
    for (shell, marker) in [("zsh", "#compdef datacomp"), ("fish", "complete -c datacomp")] {
        assert!(ok(&["completions", shell]).contains(marker), "{shell}");
    }
    assert_eq!(run(&["completions", "tcsh"]).status.code(), Some(2));
    let man = ok(&["man"]);
    assert!(man.starts_with(".ie \\n(.g .ds Aq"), "roff: {}", &man[..80.min(man.len())]);
    assert!(man.contains(".TH datacomp 1"), "a section 1 page");
    for command in ["import", "merge", "completions", "verify"] {
        assert!(man.contains(&format!("datacomp\\-{command}")), "{command}");
    }
}

/// The demo's fixtures are copies inside the CLI's package (a published crate holds only its
/// own files): they must stay the fixtures the rest of the project tests.
#[test]
fn the_demo_s_fixtures_are_the_project_s() {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("demo");
    for name in [
        "party.json",
        "sheets/classic.json",
        "sheets/wizard.json",
        "sheets/golem.json",
        "sjson/the_one.sjson",
    ] {
        assert_eq!(
            std::fs::read(demo.join(name)).unwrap(),
            std::fs::read(fixtures().join(name)).unwrap(),
            "cli/demo/{name} differs from fixtures/{name}"
        );
    }
}

/// A merge of saves that share no history (THEIRS imported apart from BASE) is refused: every
/// save holds its store's lineage, kept through edits, deltas, migrations, upgrades and merges,
/// and a new import draws a new one. (It once replaced an entity and removed six, silently.)
#[test]
fn merge_refuses_saves_that_do_not_share_history() {
    let world = World::new();
    let w = world.path.as_str();
    let lineage = |path: &str| Store::load(path).unwrap().lineage().expect("a lineage");
    let born = lineage(w);
    let inspected = json(&["inspect", w, "--json"]);
    assert_eq!(inspected["lineage"], format!("{born:032x}"));

    // Every way a command derives a save keeps its lineage.
    let (ours, theirs) = (world.file("ours.dcmp"), world.file("theirs.dcmp"));
    std::fs::copy(w, &ours).unwrap();
    std::fs::copy(w, &theirs).unwrap();
    ok(&["set", &ours, "0v0t1", "stats.health", "90"]);
    ok(&["rm", &theirs, "2v0t1"]);
    let delta = world.file("d.delta");
    ok(&["diff", w, &theirs, "-o", &delta]);
    let applied = world.file("applied.dcmp");
    ok(&["apply", w, &delta, "-o", &applied]);
    let migrations = world.file("m.json");
    std::fs::write(&migrations, r#"{"version": 1, "steps": [{"to": 1, "set": {"x": 1}}]}"#)
        .unwrap();
    let migrated = world.file("migrated.dcmp");
    ok(&["migrate", w, "--with", &migrations, "-o", &migrated]);
    let upgraded = world.file("upgraded.dcmp");
    ok(&["upgrade", w, "-o", &upgraded]);
    let merged = world.file("merged.dcmp");
    ok(&["merge", w, &ours, &applied, "-o", &merged]);
    for path in [&ours, &theirs, &applied, &migrated, &upgraded, &merged] {
        assert_eq!(lineage(path), born, "{path}");
    }

    // Another import of the same fixtures is another world.
    let party = fixtures().join("party.json");
    let other = world.file("other.dcmp");
    ok(&["import", party.to_str().unwrap(), "-o", &other]);
    assert_ne!(lineage(&other), born);
    let out = world.file("out.dcmp");
    for (args, refused) in [
        (["merge", w, &ours, &other, "-o", &out], &other),
        (["merge", w, &other, &theirs, "-o", &out], &other),
        (["merge", &other, &ours, &theirs, "-o", &out], &ours),
    ] {
        let message = fails(&args);
        let expected =
            format!("{refused}: does not descend from {}: they were made apart", args[1]);
        assert!(message.starts_with(&expected), "{message}");
        assert!(message.ends_with("so there is no common ancestor to merge from"), "{message}");
        assert!(!Path::new(&out).exists(), "nothing written");
    }

    // A save of format 1.3 (no lineage) is not checked: it merges as before.
    let old = fixtures().join("world_v5.dcmp");
    let old = old.to_str().unwrap();
    assert_eq!(Store::load(old).unwrap().lineage(), None);
    ok(&["merge", old, old, &other, "-o", &out]);
}
