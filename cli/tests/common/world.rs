//! The command run as a process from a test, and the world most tests start from: shared by
//! the command's test files that run the binary plainly (`attack.rs` runs it with a timeout).
//! Each file uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use datacomp::Store;
use tempfile::TempDir;

use super::outcome;

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
}

pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_datacomp")).args(args).output().expect("the binary runs")
}

/// Runs a command that must succeed; returns its stdout.
pub fn ok(args: &[&str]) -> String {
    outcome::succeeded(args, run(args))
}

/// Runs a command that must fail with exit code 1 and one line on stderr; returns the line
/// without the `datacomp: ` prefix.
pub fn fails(args: &[&str]) -> String {
    outcome::failed(args, run(args))
}

/// Runs a command whose command line is wrong: exit code 2 and one line on stderr, returned
/// without the `datacomp: ` prefix.
pub fn misused(args: &[&str]) -> String {
    outcome::failed_with(2, args, run(args))
}

/// A temporary directory with `world.dcmp`, imported from the party and the three sheets:
/// ids 0v0t1..3v0t1 are the party (The One, Orc Raider, Cave Troll, Mirabel), then the
/// classic sheet, the golem and the wizard.
pub struct World {
    pub dir: TempDir,
    pub path: String,
}

impl World {
    pub fn new() -> World {
        let dir = TempDir::new().unwrap();
        let path = dir.path().join("world.dcmp").to_str().unwrap().to_owned();
        let party = fixtures().join("party.json");
        let sheets = fixtures().join("sheets");
        ok(&["import", party.to_str().unwrap(), sheets.to_str().unwrap(), "-o", &path]);
        World { dir, path }
    }

    pub fn bytes(&self) -> Vec<u8> {
        std::fs::read(&self.path).unwrap()
    }

    pub fn store(&self) -> Store {
        Store::load(&self.path).unwrap()
    }

    pub fn file(&self, name: &str) -> String {
        self.dir.path().join(name).to_str().unwrap().to_owned()
    }

    /// The files in the world's directory, by name.
    pub fn listing(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }
}
