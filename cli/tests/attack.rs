//! Regressions of the attack on every entry point of the `datacomp` command, run as a process:
//! each test is an input that once hung, misread or duplicated data, and now gets a specific
//! answer.

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
    let out = run(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?} failed: {stderr}");
    assert_eq!(stderr, "", "{args:?}");
    String::from_utf8(out.stdout).expect("UTF-8 output")
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
