//! A crash while saving never leaves a broken save: a child process saves one state after
//! another and is killed at random moments; the file on disk always loads, and is exactly one
//! of the states saved; the temporary files the kills leave are removed by the next save.

use std::process::{Command, Stdio};
use std::time::Duration;

use datacomp::{Blob, Store};

/// Set in the child's environment: the path it saves to.
const CHILD_PATH: &str = "DATACOMP_CRASH_CHILD_PATH";

/// The state of generation `g`: big enough (about 300 KB) that a save takes a while.
fn state(g: u32) -> Store {
    let mut store = Store::with_capacity(3000, 3000 * 100);
    for i in 0..3000_u16 {
        let mut sheet = Blob::new();
        sheet.set("generation", g as f32).unwrap();
        sheet.set("index", f32::from(i)).unwrap();
        sheet.set("name", format!("entity {i} of generation {g}").as_str()).unwrap();
        store.insert(&sheet);
    }
    store
}

#[test]
#[ignore = "the child side of saves_survive_being_killed"]
fn crash_child() {
    let Ok(path) = std::env::var(CHILD_PATH) else {
        return;
    };
    for g in 1.. {
        state(g).save(&path).unwrap();
    }
}

#[test]
fn saves_survive_being_killed() {
    let dir = std::env::temp_dir().join(format!("datacomp-crash-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("world.dcmp");
    state(0).save(&path).unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut generations = Vec::new();
    for _ in 0..12 {
        let mut child = Command::new(&exe)
            .args(["crash_child", "--exact", "--ignored", "--test-threads=1"])
            .env(CHILD_PATH, &path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(Duration::from_millis(20 + seed % 180));
        child.kill().unwrap();
        child.wait().unwrap();

        let loaded = Store::load(&path).expect("the save on disk loads after a kill");
        let (_, first) = loaded.iter().next().expect("a saved state has entities");
        let g = first.get_float("generation").unwrap() as u32;
        // The state of generation g exactly (each process draws its own store's lineage, so
        // the bytes differ from a state built here by that section alone), written whole.
        assert!(loaded == state(g), "exactly the state of generation {g}");
        assert!(std::fs::read(&path).unwrap() == loaded.to_bytes(), "the file is one whole save");
        generations.push(g);
    }
    assert!(generations.iter().any(|&g| g > 0), "the child saved: {generations:?}");
    // A kill mid-save leaves the child's temporary file; the next save removes every one.
    let stale = datacomp::file::stale_temps(&path).unwrap();
    let on_disk = std::fs::read_dir(&dir).unwrap().count();
    assert_eq!(on_disk, 1 + stale.len(), "the save and the stale temporary files: {stale:?}");
    state(0).save(&path).unwrap();
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, ["world.dcmp"]);
    std::fs::remove_dir_all(&dir).unwrap();
}
