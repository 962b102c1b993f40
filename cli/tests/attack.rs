//! Regressions of the attack on every entry point of the `datacomp` command, run as a process:
//! each test is an input that once hung, misread or duplicated data, and now gets a specific
//! answer.

#[path = "common/outcome.rs"]
mod outcome;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use datacomp::{Key, Store};
use tempfile::TempDir;

/// A command that takes longer than this hangs: it is killed and the test fails. (The inputs
/// of the third hardening round, at the end, each took a minute or more, or ran out of memory,
/// before its fix; the debug build takes a few seconds at most on each now.)
const HANG: Duration = Duration::from_secs(30);

fn run(args: &[&str]) -> Output {
    outcome::run_within(args, HANG)
}

/// Runs a command that must succeed; returns its stdout.
fn ok(args: &[&str]) -> String {
    outcome::succeeded(args, run(args))
}

/// Runs a command that must fail with exit code 1 and one line on stderr; returns the line
/// without the `datacomp: ` prefix.
fn fails(args: &[&str]) -> String {
    outcome::failed(args, run(args))
}

fn path(dir: &Path, name: &str) -> String {
    dir.join(name).to_str().unwrap().to_owned()
}

/// The `name` of each entity of the save at `path`, in order.
fn names(path: &str) -> Vec<String> {
    let store = Store::load(path).unwrap();
    store.iter().map(|(_, blob)| blob.get_str("name").unwrap().to_owned()).collect()
}

/// A directory holding symbolic links back up the tree was searched until the OS refused the
/// path: 40 levels, each document imported 41 times with one such link, and 2^40 paths (a
/// hang) with two. Each directory is now searched once.
#[cfg(unix)]
#[test]
fn import_searches_a_directory_reached_through_symlink_loops_once() {
    let dir = TempDir::new().unwrap();
    let docs = dir.path().join("docs");
    std::fs::create_dir_all(docs.join("sub")).unwrap();
    std::fs::write(docs.join("a.json"), r#"{"name": "a"}"#).unwrap();
    std::fs::write(docs.join("sub/b.json"), r#"{"name": "b"}"#).unwrap();
    std::fs::write(docs.join("z.json"), r#"{"name": "z"}"#).unwrap();
    for link in ["up1", "up2", "up3"] {
        std::os::unix::fs::symlink("..", docs.join("sub").join(link)).unwrap();
    }
    // A link to a directory outside the tree is searched, in its place.
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("o.json"), r#"{"name": "o"}"#).unwrap();
    std::os::unix::fs::symlink(&other, docs.join("m")).unwrap();

    let out = path(dir.path(), "out.dcmp");
    ok(&["import", docs.to_str().unwrap(), "-o", &out]);
    assert_eq!(names(&out), ["a", "o", "b", "z"]);
}

/// `export world.dcmp -o world.dcmp` replaced the save with its JSON, `diff base.dcmp now.dcmp
/// -o base.dcmp` replaced the base with a delta that then had no base to apply to, and
/// `import a.json -o a.json` replaced the document with a save: a command that writes another
/// kind of file over one of its inputs (by any name: a symbolic or hard link) is now refused,
/// and the input is left as it was; so is `verify --salvage` over the file it salvages, which
/// holds what salvage could not read. Writing a save over the save it read (`apply base delta
/// -o base`, `merge`) is still allowed.
#[test]
fn a_command_refuses_to_write_another_kind_of_file_over_its_input() {
    let dir = TempDir::new().unwrap();
    let json = path(dir.path(), "a.json");
    std::fs::write(&json, r#"{"name": "a"}"#).unwrap();
    let save = path(dir.path(), "a.dcmp");
    ok(&["import", &json, "-o", &save]);
    let now = path(dir.path(), "now.dcmp");
    std::fs::copy(&save, &now).unwrap();
    ok(&["set", &now, "0v0t1", "name", "b"]);
    let delta = path(dir.path(), "a.delta");
    ok(&["diff", &save, &now, "-o", &delta]);
    let link = path(dir.path(), "link.json");
    #[cfg(unix)]
    std::os::unix::fs::symlink(&save, &link).unwrap();
    #[cfg(not(unix))]
    std::fs::hard_link(&save, &link).unwrap();
    let hard = path(dir.path(), "hard.json");
    std::fs::hard_link(&save, &hard).unwrap();

    let before: Vec<Vec<u8>> =
        [&json, &save, &now, &delta].iter().map(|p| std::fs::read(p).unwrap()).collect();
    let cases: [(&[&str], &str, &str, &str); 9] = [
        (&["export", &save, "-o", &save], &save, &save, "the export"),
        (&["export", &save, "-o", &link], &link, &save, "the export"),
        (&["export", &save, "-o", &hard], &hard, &save, "the export"),
        (&["import", &json, "-o", &json], &json, &json, "the save"),
        (&["diff", &save, &now, "-o", &save], &save, &save, "the delta"),
        (&["diff", &save, &now, "-o", &now], &now, &now, "the delta"),
        (&["diff", &save, &now, "--chain", &delta, "-o", &delta], &delta, &delta, "the delta"),
        (&["apply", &save, &delta, "-o", &delta], &delta, &delta, "the save"),
        (&["verify", "--salvage", &save, "-o", &save], &save, &save, "the salvaged save"),
    ];
    for (args, output, input, what) in cases {
        assert_eq!(
            fails(args),
            format!(
                "{output}: is an input of this command ({input}): {what} would replace it \
                 (write to another file)"
            ),
            "{args:?}"
        );
    }
    let after: Vec<Vec<u8>> =
        [&json, &save, &now, &delta].iter().map(|p| std::fs::read(p).unwrap()).collect();
    assert!(before == after, "a refused command changed a file");

    // A save written over the save it read is the usual in-place edit.
    ok(&["apply", &save, &delta, "-o", &save]);
    assert_eq!(names(&save), ["b"]);
}

/// `import -o DIR` and `import -o missing/` failed to write, as they should, but left
/// `DIR.lock` and `missing.lock` behind: the lock was taken before the path was found to name
/// a directory. Now the path is refused first, and no lock file is made.
#[test]
fn an_output_naming_a_directory_is_refused_before_a_lock_file_is_made() {
    let dir = TempDir::new().unwrap();
    let json = path(dir.path(), "a.json");
    std::fs::write(&json, r#"{"name": "a"}"#).unwrap();
    let existing = path(dir.path(), "saves");
    std::fs::create_dir(&existing).unwrap();
    let missing = format!("{}/", path(dir.path(), "missing"));
    for output in [existing.clone(), format!("{existing}/"), missing.clone()] {
        assert_eq!(
            fails(&["import", &json, "-o", &output]),
            format!("{output}: cannot lock: the path names a directory, not a file")
        );
    }
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(left, ["a.json", "saves"]);
    assert_eq!(std::fs::read_dir(&existing).unwrap().count(), 0);
}

// The third hardening round (issue 30).

/// CRC-32 (IEEE), as the save format seals its sections.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0_u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// The save `bytes` with its key tree (section kind 13) replaced by `tree`, laid out again and
/// resealed.
fn with_key_tree(bytes: &[u8], tree: &[u8]) -> Vec<u8> {
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
    let count = usize::from(u16::from_le_bytes([bytes[14], bytes[15]]));
    let sections: Vec<(u32, Vec<u8>)> = (0..count)
        .map(|i| {
            let at = 32 + 24 * i;
            let kind = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
            let (offset, len) = (u64_at(at + 8) as usize, u64_at(at + 16) as usize);
            let data =
                if kind == 13 { tree.to_vec() } else { bytes[offset..offset + len].to_vec() };
            (kind, data)
        })
        .collect();
    let table_end = 32 + 24 * count;
    let mut out = bytes[..32].to_vec();
    out.resize(table_end.next_multiple_of(8), 0);
    for (i, (kind, data)) in sections.iter().enumerate() {
        let offset = out.len();
        out.extend_from_slice(data);
        out.resize(out.len().next_multiple_of(8), 0);
        let e = 32 + 24 * i;
        out[e..e + 4].copy_from_slice(&kind.to_le_bytes());
        out[e + 4..e + 8].copy_from_slice(&crc32(data).to_le_bytes());
        out[e + 8..e + 16].copy_from_slice(&(offset as u64).to_le_bytes());
        out[e + 16..e + 24].copy_from_slice(&(data.len() as u64).to_le_bytes());
    }
    let len = out.len() as u64;
    out[16..24].copy_from_slice(&len.to_le_bytes());
    out[24..28].fill(0);
    let crc = crc32(&out[..table_end]);
    out[24..28].copy_from_slice(&crc.to_le_bytes());
    out
}

/// A save of one entity `{"a": 1}` whose key tree is a chain of `depth` nested names
/// `a`, `a.a`, `a.a.a`, ... each named: 3 bytes a level, and it passes `verify`.
fn chain_save(dir: &Path, depth: u64) -> String {
    let json = path(dir, "a.json");
    std::fs::write(&json, r#"{"a": 1}"#).unwrap();
    let base = path(dir, "base.dcmp");
    ok(&["import", &json, "-o", &base]);
    let mut tree = Vec::new();
    varint(&mut tree, depth);
    for _ in 0..depth {
        tree.extend_from_slice(&[1, 1 << 2 | 1, b'a']);
    }
    let chain = path(dir, "chain.dcmp");
    std::fs::write(&chain, with_key_tree(&std::fs::read(&base).unwrap(), &tree)).unwrap();
    let verified = ok(&["verify", &chain]);
    assert!(verified.contains(&format!("{depth} key names")), "{verified}");
    chain
}

/// `migrate` spelled every key name out before running a step, and `diff` compared every
/// name's full label in both files: on a 120 KB save holding a chain of 40,000 nested names,
/// 74 s and 4.7 GB, and 60.8 s. Both walk the name tree by node now.
#[test]
fn migrate_and_diff_of_a_deep_name_chain_take_time_in_proportion_to_the_file() {
    let dir = TempDir::new().unwrap();
    let chain = chain_save(dir.path(), 40_000);
    let migrations = path(dir.path(), "m.json");
    std::fs::write(&migrations, r#"{"version": 1, "steps": [{"to": 1, "default": {"b": 2}}]}"#)
        .unwrap();
    let report = ok(&["migrate", &chain, "--with", &migrations, "--dry-run"]);
    assert!(report.contains("1 entity changed: 1 key defaulted"), "{report}");
    assert_eq!(
        ok(&["diff", &chain, &chain, "--compact"]),
        "{\"changed\":[],\"inserted\":[],\"removed\":[]}\n"
    );
    // And they still do their work: the migrated save, then its diff from the chain.
    let out = path(dir.path(), "out.dcmp");
    ok(&["migrate", &chain, "--with", &migrations, "-o", &out]);
    let diff = ok(&["diff", &chain, &out, "--compact"]);
    assert!(diff.contains(r#""set":{"b":2}"#), "{diff}");
    // (A save keeps the names of the keys its entities hold.)
    let names: Vec<String> = Store::load(&out).unwrap().key_names().map(|(_, n)| n).collect();
    assert_eq!(names.len(), 2, "a and b");
}

/// One 400,000-byte member name with 26,000 members under it (a 727 KB document): `migrate`
/// built each member's full name (10 GB) and was killed at an 8 GB cap after 75 s. A rename of
/// the whole subtree moves every member, its name made node by node.
#[test]
fn migrating_members_under_a_long_shared_name_takes_memory_in_proportion_to_the_file() {
    let dir = TempDir::new().unwrap();
    let long = "x".repeat(400_000);
    let members: Vec<String> = (0..26_000).map(|i| format!("\"m{i}\": {i}")).collect();
    let json = path(dir.path(), "long.json");
    std::fs::write(&json, format!("{{\"{long}\": {{{}}}}}", members.join(", "))).unwrap();
    let save = path(dir.path(), "long.dcmp");
    ok(&["import", &json, "-o", &save]);
    let migrations = path(dir.path(), "m.json");
    let steps = format!(
        r#"{{"version": 2, "steps": [{{"to": 1, "default": {{"b": 2}}}},
            {{"to": 2, "rename": {{"/{long}": "short"}}}}]}}"#
    );
    std::fs::write(&migrations, steps).unwrap();
    let report = ok(&["migrate", &save, "--with", &migrations]);
    assert!(report.contains("1 entity changed: 26000 keys renamed"), "{report}");
    let store = Store::load(&save).unwrap();
    let (_, blob) = store.iter().next().unwrap();
    assert_eq!(blob.get_float(Key::parse("short.m25999")), Some(25_999.0));
    assert_eq!(blob.get_float(Key::path(&[&long, "m0"])), None);
    assert_eq!(blob.len(), 26_001);
}

/// A migration's `remove` or `rename` of a raw key (`#0000002a`) did nothing, silently (the
/// report said 0 entities changed and the file was rewritten), while `get`, `rm` and `query`
/// name that key so. It acts on that key now, as everywhere else.
#[test]
fn a_migration_removes_and_renames_a_raw_key() {
    let dir = TempDir::new().unwrap();
    let json = path(dir.path(), "a.json");
    std::fs::write(&json, r##"[{"#0000002a": 1, "#0000002b": 2, "name": "a"}]"##).unwrap();
    let save = path(dir.path(), "a.dcmp");
    ok(&["import", &json, "-o", &save]);
    let migrations = path(dir.path(), "m.json");
    std::fs::write(
        &migrations,
        r##"{"version": 1, "steps": [{"to": 1, "remove": ["#0000002a"], "rename": {"#0000002b": "b"}}]}"##,
    )
    .unwrap();
    let report = ok(&["migrate", &save, "--with", &migrations]);
    assert!(report.contains("1 entity changed: 1 key renamed, 1 removed"), "{report}");
    assert_eq!(
        fails(&["get", &save, "0v0t1", "#0000002a"]),
        format!("{save}: entity 0v0t1 has no key #0000002a")
    );
    assert_eq!(ok(&["get", &save, "0v0t1", "b"]), "2\n");
    // A raw key is not a name: a default or set of one is refused, as before.
    std::fs::write(
        &migrations,
        r##"{"version": 2, "steps": [{"to": 2, "set": {"#0000002c": 1}}]}"##,
    )
    .unwrap();
    let err = fails(&["migrate", &save, "--with", &migrations]);
    assert!(err.contains("bad path \"#0000002c\""), "{err}");
}

/// Each default was added to each entity one at a time, each scanning the entity's keys: 1,000
/// entities x 10,000 defaults took 27.9 s. A step's writes are now set in one pass (its work
/// bound, which fails without it: `migrate::run::tests::a_step_of_many_defaults_costs_its_writes_once`);
/// here, through the command, what it writes.
#[test]
fn a_step_of_many_defaults_adds_them_in_one_pass() {
    let dir = TempDir::new().unwrap();
    let entities: Vec<String> = (0..20).map(|i| format!(r#"{{"name": "e{i}"}}"#)).collect();
    let json = path(dir.path(), "a.json");
    std::fs::write(&json, format!("[{}]", entities.join(","))).unwrap();
    let save = path(dir.path(), "a.dcmp");
    ok(&["import", &json, "-o", &save]);
    let defaults: Vec<String> = (0..2_000).map(|i| format!("\"d{i}\": {i}")).collect();
    let migrations = path(dir.path(), "m.json");
    std::fs::write(
        &migrations,
        format!(
            r#"{{"version": 1, "steps": [{{"to": 1, "default": {{{}}}}}]}}"#,
            defaults.join(",")
        ),
    )
    .unwrap();
    let report = ok(&["migrate", &save, "--with", &migrations]);
    assert!(report.contains("20 entities changed: 40000 keys defaulted"), "{report}");
    let store = Store::load(&save).unwrap();
    for (i, (_, blob)) in store.iter().enumerate() {
        assert_eq!(blob.len(), 2_001);
        assert_eq!(blob.get_str("name"), Some(format!("e{i}").as_str()));
        assert_eq!((blob.get_float("d0"), blob.get_float("d1999")), (Some(0.0), Some(1_999.0)));
    }
}

/// A migration of many one-key steps rewrote each entity once per step, each step moving the
/// entity's keys: 1,000 entities x 10,000 one-key steps took 143 s, still 12.1 s once a step's
/// defaults went in one pass. Steps that commute (apart in paths and keys) now fold into one
/// pass over each entity, whatever their number (the work is counted in
/// `migrate::plan::tests::folded_steps_cost_the_keys_not_the_steps`); steps that do not (a
/// chain of renames, then a set of where it ends, a removal then a default) keep their order.
#[test]
fn many_one_key_steps_fold_into_one_pass_and_keep_their_order() {
    let dir = TempDir::new().unwrap();
    let entities: Vec<String> =
        (0..40).map(|i| format!(r#"{{"name": "e{i}", "k": {i}, "old": 1}}"#)).collect();
    let json = path(dir.path(), "a.json");
    std::fs::write(&json, format!("[{}]", entities.join(","))).unwrap();
    let save = path(dir.path(), "a.dcmp");
    ok(&["import", &json, "-o", &save]);
    let mut steps: Vec<String> = (0..10_000)
        .map(|i| match i % 2 {
            0 => format!(r#"{{"to": {}, "set": {{"s{i}": {i}}}}}"#, i + 1),
            _ => format!(r#"{{"to": {}, "default": {{"d{i}": {i}}}}}"#, i + 1),
        })
        .collect();
    let tail = [
        r#""rename": {"k": "c1"}"#,
        r#""rename": {"c1": "c2"}"#,
        r#""set": {"c2": -1}"#,
        r#""remove": ["old"]"#,
        r#""default": {"old": 2}"#,
    ];
    for (i, change) in tail.iter().enumerate() {
        steps.push(format!(r#"{{"to": {}, {change}}}"#, 10_001 + i));
    }
    let migrations = path(dir.path(), "m.json");
    let text = format!(r#"{{"version": 10005, "steps": [{}]}}"#, steps.join(","));
    std::fs::write(&migrations, text).unwrap();
    let report = ok(&["migrate", &save, "--with", &migrations]);
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(lines[0], format!("{save}: data version 0 -> 10005"));
    assert_eq!(lines[1], "  steps[0] (to 1): 40 entities changed: 40 keys set");
    assert_eq!(lines[10_000], "  steps[9999] (to 10000): 40 entities changed: 40 keys defaulted");
    assert_eq!(
        lines[10_001..10_006],
        [
            "  steps[10000] (to 10001): 40 entities changed: 40 keys renamed",
            "  steps[10001] (to 10002): 40 entities changed: 40 keys renamed",
            "  steps[10002] (to 10003): 40 entities changed: 40 keys set",
            "  steps[10003] (to 10004): 40 entities changed: 40 keys removed",
            "  steps[10004] (to 10005): 40 entities changed: 40 keys defaulted",
        ]
    );
    let store = Store::load(&save).unwrap();
    assert_eq!(store.data_version(), 10_005);
    for (i, (_, blob)) in store.iter().enumerate() {
        assert_eq!(blob.len(), 10_003, "name, c2, old and the 10,000 written");
        assert_eq!(blob.get_str("name"), Some(format!("e{i}").as_str()));
        assert_eq!(blob.get_float("c2"), Some(-1.0));
        assert_eq!(blob.get_float("old"), Some(2.0));
        assert_eq!(
            (blob.get_float("s9998"), blob.get_float("d9999")),
            (Some(9_998.0), Some(9_999.0))
        );
        assert!(!blob.contains_key("k") && !blob.contains_key("c1"));
    }
}

/// A chain of renames (`k -> c1 -> c2 ...`) visited each entity holding its key at every link:
/// 1,000 entities x 100,000 links took 84 s (release). Runs that only rename and remove are
/// composed now (`src/migrate/chain.rs`): an entity jumps the chain at once (1.7 s; the work
/// bound, which fails without it: `migrate::run::tests::folded_steps_cost_the_keys_not_the_steps`),
/// and the report still counts every link; a removal at its end is composed too.
#[test]
fn a_long_rename_chain_is_composed_and_reported_link_by_link() {
    let dir = TempDir::new().unwrap();
    let entities: Vec<String> =
        (0..20).map(|i| format!(r#"{{"name": "e{i}", "k": {i}, "old": 1}}"#)).collect();
    let json = path(dir.path(), "a.json");
    std::fs::write(&json, format!("[{}]", entities.join(","))).unwrap();
    let save = path(dir.path(), "a.dcmp");
    ok(&["import", &json, "-o", &save]);
    let links = 500;
    let mut steps: Vec<String> = (0..links)
        .map(|i| {
            let from = if i == 0 { "k".to_owned() } else { format!("c{i}") };
            format!(r#"{{"to": {}, "rename": {{"{from}": "c{}"}}}}"#, i + 1, i + 1)
        })
        .collect();
    steps.push(format!(r#"{{"to": {}, "remove": ["old"]}}"#, links + 1));
    let migrations = path(dir.path(), "m.json");
    let text = format!(r#"{{"version": {}, "steps": [{}]}}"#, links + 1, steps.join(","));
    std::fs::write(&migrations, text).unwrap();
    let report = ok(&["migrate", &save, "--with", &migrations]);
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(lines[0], format!("{save}: data version 0 -> {}", links + 1));
    for (i, line) in lines[1..=links].iter().enumerate() {
        let to = i + 1;
        assert_eq!(*line, format!("  steps[{i}] (to {to}): 20 entities changed: 20 keys renamed"));
    }
    assert_eq!(
        lines[links + 1],
        format!("  steps[{links}] (to {}): 20 entities changed: 20 keys removed", links + 1)
    );
    let store = Store::load(&save).unwrap();
    for (i, (_, blob)) in store.iter().enumerate() {
        assert_eq!(blob.len(), 2, "name and c{links}");
        assert_eq!(blob.get_float(format!("c{links}").as_str()), Some(i as f32));
        assert_eq!(blob.get_str("name"), Some(format!("e{i}").as_str()));
    }
}

/// A subtree renamed back and forth (`x -> y`, `y -> x`) 10,000 times over 10,000 names took
/// 345 s (release): a compile of the subtree and a visit of its keys a step. Steps that repeat
/// run three periods deep, the rest copies (`src/migrate/repeat.rs`: 0.18 s, 24.6 MB; the work
/// bound, which fails without it: `migrate::run::tests::renames_back_and_forth_cost_the_keys_not_the_steps`),
/// reported step by step; an entity that also holds `y.b` takes it along from the second step.
#[test]
fn a_subtree_renamed_back_and_forth_runs_three_periods_and_copies_the_rest() {
    let dir = TempDir::new().unwrap();
    let names: Vec<String> = (0..300).map(|k| format!(r#""k{k}": {k}"#)).collect();
    let x = format!("{{{}}}", names.join(","));
    let json = path(dir.path(), "a.json");
    std::fs::write(&json, format!(r#"[{{"x": {x}}}, {{"x": {x}, "y": {{"b": -1}}}}]"#)).unwrap();
    let save = path(dir.path(), "a.dcmp");
    ok(&["import", &json, "-o", &save]);
    let steps = 2_001;
    let step = |i: usize| {
        let (from, to) = if i.is_multiple_of(2) { ("x", "y") } else { ("y", "x") };
        format!(r#"{{"to": {}, "rename": {{"{from}": "{to}"}}}}"#, i + 1)
    };
    let migrations = path(dir.path(), "m.json");
    let steps_json: Vec<String> = (0..steps).map(step).collect();
    let text = format!(r#"{{"version": {steps}, "steps": [{}]}}"#, steps_json.join(","));
    std::fs::write(&migrations, text).unwrap();
    let report = ok(&["migrate", &save, "--with", &migrations]);
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(lines[0], format!("{save}: data version 0 -> {steps}"));
    assert_eq!(lines[1], "  steps[0] (to 1): 2 entities changed: 600 keys renamed");
    for (i, line) in lines[2..=steps].iter().enumerate() {
        let (i, to) = (i + 1, i + 2);
        assert_eq!(*line, format!("  steps[{i}] (to {to}): 2 entities changed: 601 keys renamed"));
    }
    let store = Store::load(&save).unwrap();
    let blobs: Vec<_> = store.iter().map(|(_, blob)| blob).collect();
    assert_eq!((blobs[0].len(), blobs[1].len()), (300, 301));
    assert_eq!(blobs[1].get_float("y.k299"), Some(299.0));
    assert_eq!(blobs[1].get_float("y.b"), Some(-1.0));
    assert!(!blobs[0].contains_key("x.k0") && !blobs[1].contains_key("x.b"));
}

/// `verify /dev/zero` (or any endless input) read until memory ran out. A command reads no
/// further than the header's 32 bytes from input that is not a save, and no further than the
/// length the header claims from one that is (one byte more, to see that it ends there).
#[cfg(target_os = "linux")]
#[test]
fn an_endless_input_is_read_only_as_far_as_its_header_says() {
    use std::io::Write;

    for command in ["verify", "list", "export", "diff"] {
        let mut args = vec![command, "/dev/zero"];
        if command == "diff" {
            args.push("/dev/zero");
        }
        assert_eq!(
            fails(&args),
            "/dev/zero: not a datacomp save: starts with [00, 00, 00, 00, 00, 00, 00, 00], not \
             \"DATACOMP\""
        );
    }
    // A save followed by endless zeros, through a pipe.
    let dir = TempDir::new().unwrap();
    let json = path(dir.path(), "a.json");
    std::fs::write(&json, r#"{"a": 1}"#).unwrap();
    let save = path(dir.path(), "a.dcmp");
    ok(&["import", &json, "-o", &save]);
    let bytes = std::fs::read(&save).unwrap();
    for claimed in [None, Some(u64::MAX)] {
        let mut head = bytes.clone();
        if let Some(claimed) = claimed {
            head[16..24].copy_from_slice(&claimed.to_le_bytes());
        }
        let mut child = Command::new(env!("CARGO_BIN_EXE_datacomp"))
            .args(["verify", "/dev/stdin"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || {
            let zeros = vec![0_u8; 1 << 16];
            let _ = stdin.write_all(&head);
            // Until the command stops reading (or 1 GiB, should it never).
            for _ in 0..(1 << 14) {
                if stdin.write_all(&zeros).is_err() {
                    break;
                }
            }
        });
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap();
        let err = outcome::failed(&["verify", "/dev/stdin"], out);
        let expected = match claimed {
            None => format!(
                "/dev/stdin: file is {} bytes; its header says {}",
                bytes.len() + 1,
                bytes.len()
            ),
            Some(claimed) => format!(
                "/dev/stdin: cannot read: the file header says the file holds {claimed} bytes, \
                 past the 4294967296 read from an input of unknown size"
            ),
        };
        assert_eq!(err, expected);
    }
}

/// A save of `entities` entities `{"n": 1}` in `dir`, and migrations that give each a default
/// of 4,096 floats: their paths.
fn curve_migration(dir: &Path, entities: usize) -> (String, String) {
    let json = path(dir, "a.json");
    std::fs::write(&json, format!("[{}]", vec![r#"{"n": 1}"#; entities].join(","))).unwrap();
    let save = path(dir, "a.dcmp");
    ok(&["import", &json, "-o", &save]);
    let floats = vec!["0.5"; 4096].join(",");
    let migrations = path(dir, "m.json");
    std::fs::write(
        &migrations,
        format!(r#"{{"version": 1, "steps": [{{"to": 1, "default": {{"f": [{floats}]}}}}]}}"#),
    )
    .unwrap();
    (save, migrations)
}

/// A 4,096-float default on 1M entities aborted the command (`memory allocation of 9216000000
/// bytes failed`, SIGABRT). Every allocation of the migrated arena is fallible now: one that
/// fails is an error that names the size, and nothing is written.
#[cfg(target_os = "linux")]
#[test]
fn a_migration_past_the_memory_it_can_have_is_refused_with_its_size() {
    let dir = TempDir::new().unwrap();
    let (save, migrations) = curve_migration(dir.path(), 30_000);
    let before = std::fs::read(&save).unwrap();
    // 30,000 x 16 KiB: about 490 MB of arena, under a 300 MB address-space limit.
    let script = format!(
        "ulimit -v 300000; exec {} migrate {save} --with {migrations}",
        env!("CARGO_BIN_EXE_datacomp")
    );
    let out = Command::new("sh").args(["-c", &script]).output().unwrap();
    let err = outcome::failed(&["migrate"], out);
    let prefix = format!("{save}: the migrated arena would take ");
    let bytes = err.strip_prefix(&prefix).and_then(|rest| {
        rest.strip_suffix(" bytes, more memory than could be had")?.parse::<u64>().ok()
    });
    assert!(bytes.is_some_and(|b| b > 1 << 20), "{err}");
    assert_eq!(std::fs::read(&save).unwrap(), before, "nothing written");
}

/// The same default on 1M entities took 33.9 s and 7.77 GB under an 8 GB cap before the
/// allocation failed. The output is estimated first (every default and set added to every
/// entity): past `--max-output` (4 GiB unless given), refused at once with the figure.
#[test]
fn a_migration_whose_output_could_pass_max_output_is_refused_before_it_runs() {
    let dir = TempDir::new().unwrap();
    let (save, migrations) = curve_migration(dir.path(), 100);
    let before = std::fs::read(&save).unwrap();
    let held: u64 = Store::load(&save).unwrap().iter().map(|(_, b)| b.byte_len() as u64).sum();
    // Each entity may gain 16,384 bytes of floats, 4 of length and 16 of header.
    let estimate = held + 100 * (16_384 + 4 + 16);
    let limit = (estimate - 1).to_string();
    let refused = format!(
        "{save}: the migrated entities could take up to {estimate} bytes (every default and set \
         added to each), past the limit of {limit} bytes"
    );
    for dry_run in [&[][..], &["--dry-run"]] {
        let args = [&["migrate", &save, "--with", &migrations, "--max-output", &limit], dry_run];
        assert_eq!(fails(&args.concat()), refused);
        assert_eq!(std::fs::read(&save).unwrap(), before, "nothing written");
    }
    let usage = run(&["migrate", &save, "--with", &migrations, "--max-output", "4GiB"]);
    let err = String::from_utf8_lossy(&usage.stderr);
    assert_eq!(usage.status.code(), Some(2), "{err}");
    assert!(err.contains("invalid value '4GiB' for '--max-output <BYTES>'"), "{err}");
    let at = estimate.to_string();
    let report = ok(&["migrate", &save, "--with", &migrations, "--max-output", &at]);
    assert!(report.contains("100 entities changed: 100 keys defaulted"), "{report}");
    let store = Store::load(&save).unwrap();
    assert!(
        store.iter().all(|(_, blob)| blob.get("f").is_some_and(|f| f.payload_bytes() == 16_388))
    );
}

/// A subtree moved round a cycle of five paths (`x -> y -> z -> w -> v -> x`), which no repeat
/// of period four or less finds: every step was compiled over the subtree and run by every
/// entity (1,000 entities x 10 keys x 10,000 steps: 17.1 s). Runs of renames are composed as
/// prefix moves now; a default between two runs lands under the subtree where it is at its
/// step, and moves on with it.
#[test]
fn renames_round_a_cycle_of_five_paths_compose_with_a_default_between() {
    let dir = TempDir::new().unwrap();
    let sheet: Vec<String> = (0..10).map(|k| format!("\"k{k}\": {k}")).collect();
    let entities = vec![format!("{{\"x\": {{{}}}, \"name\": \"n\"}}", sheet.join(", ")); 200];
    let json = path(dir.path(), "a.json");
    std::fs::write(&json, format!("[{}]", entities.join(", "))).unwrap();
    let save = path(dir.path(), "a.dcmp");
    ok(&["import", &json, "-o", &save]);
    let cycle = ["x", "y", "z", "w", "v"];
    let rename = |i: usize, to: usize| {
        format!(r#"{{"to": {to}, "rename": {{"{}": "{}"}}}}"#, cycle[i % 5], cycle[(i + 1) % 5])
    };
    // 500 renames (the subtree back at x), a default of x.d, 501 renames (it ends at y).
    let mut steps: Vec<String> = (0..500).map(|i| rename(i, i + 1)).collect();
    steps.push(r#"{"to": 501, "default": {"x.d": 7}}"#.to_owned());
    steps.extend((500..1_001).map(|i| rename(i, i + 2)));
    let migrations = path(dir.path(), "m.json");
    std::fs::write(&migrations, format!(r#"{{"version": 1002, "steps": [{}]}}"#, steps.join(",")))
        .unwrap();
    let report = ok(&["migrate", &save, "--with", &migrations]);
    assert!(
        report.contains("steps[0] (to 1): 200 entities changed: 2000 keys renamed"),
        "{report}"
    );
    assert!(report.contains("steps[500] (to 501): 200 entities changed: 200 keys defaulted"));
    assert!(report.contains("steps[1001] (to 1002): 200 entities changed: 2200 keys renamed"));
    let store = Store::load(&save).unwrap();
    assert_eq!(store.data_version(), 1002);
    for (_, blob) in store.iter() {
        assert_eq!(blob.len(), 12);
        assert_eq!(blob.get_float(Key::parse("y.d")), Some(7.0));
        assert_eq!(blob.get_float(Key::parse("y.k9")), Some(9.0));
        assert_eq!(blob.get_float(Key::parse("x.k9")), None);
        assert_eq!(blob.get_str(Key::parse("name")), Some("n"));
    }
    let mut names: Vec<String> = store.key_names().map(|(_, name)| name).collect();
    names.sort();
    assert_eq!(names.len(), 12, "{names:?}");
    assert_eq!(names[0], "name");
    assert_eq!(names[1], "y.d");
}
