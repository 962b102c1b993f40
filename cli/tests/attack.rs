//! Regressions of the attack on every entry point of the `datacomp` command, run as a process:
//! each test is an input that once hung, misread or duplicated data, and now gets a specific
//! answer.

#[path = "common/outcome.rs"]
mod outcome;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use datacomp::Store;
use tempfile::TempDir;

/// A command that takes longer than this hangs: it is killed and the test fails.
const HANG: Duration = Duration::from_secs(20);

/// Runs the command, killing it (and failing) if it runs past [`HANG`].
fn run(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_datacomp"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > HANG {
            child.kill().unwrap();
            panic!("{args:?} still running after {HANG:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
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
