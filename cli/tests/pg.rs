//! `datacomp pg push` and `pull`, run as a process against the server in `DATACOMP_PG` (a
//! build with `--features pg`: `cargo test -p datacomp-cli --features pg --test pg`).
#![cfg(feature = "pg")]

#[path = "common/outcome.rs"]
mod outcome;
#[path = "common/world.rs"]
mod world;

use std::process::Command;

use world::{World, fails, ok};

fn db() -> String {
    std::env::var("DATACOMP_PG").unwrap_or_else(|_| {
        panic!(
            "DATACOMP_PG is not set: start a server with `eval \"$(pg/ci/start-postgres)\"` (stop it \
             with `pg/ci/stop-postgres \"$DATACOMP_PG_DIR\"`), or point DATACOMP_PG at one"
        )
    })
}

fn unique(name: &str) -> String {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    format!("{name}-{}-{nanos}", std::process::id())
}

#[test]
fn push_then_pull_gives_the_save_back() {
    let world = World::new();
    let name = unique("cli");
    let db = db();
    let pushed = ok(&["pg", "push", &world.path, "--world", &name, "--db", &db]);
    assert_eq!(
        pushed,
        format!("{} -> world {name}: seq 1, 7 entities (7 inserted, 0 changed)\n", world.path)
    );
    let pulled = world.file("pulled.dcmp");
    let out = ok(&["pg", "pull", &pulled, "--world", &name, "--db", &db]);
    assert_eq!(out, format!("world {name} at seq 1 -> {pulled}: 7 entities\n"));
    assert_eq!(datacomp::Store::load(&pulled).unwrap(), world.store());

    // An edit, pushed again: one commit of the difference.
    ok(&["set", &world.path, "0v0t1", "stats.health", "5"]);
    let line = ok(&["pg", "push", &world.path, "--world", &name, "--db", &db, "--json"]);
    let json: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        (json["seq"].as_u64(), json["changed"].as_u64(), json["inserted"].as_u64()),
        (Some(2), Some(1), Some(0))
    );
    ok(&["pg", "pull", &pulled, "--world", &name, "--db", &db]);
    assert_eq!(datacomp::Store::load(&pulled).unwrap(), world.store());
}

#[test]
fn pull_of_no_world_and_no_database_fail_plainly() {
    let world = World::new();
    let name = unique("none");
    let err = fails(&["pg", "pull", &world.file("x.dcmp"), "--world", &name, "--db", &db()]);
    assert_eq!(err, format!("world {name}: no world of this name"));
    assert!(!std::path::Path::new(&world.file("x.dcmp")).exists());
    let out = Command::new(env!("CARGO_BIN_EXE_datacomp"))
        .args(["pg", "pull", &world.file("x.dcmp"), "--world", "w"])
        .env_remove("DATACOMP_PG")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "datacomp: no database: give --db 'host=... user=... dbname=...' or set DATACOMP_PG\n"
    );
    let err = fails(&["pg", "push", &world.path, "--world", "bad/name", "--db", &db()]);
    assert!(err.contains("bad world name"), "{err}");
}
