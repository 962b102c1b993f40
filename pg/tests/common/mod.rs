//! What the tests share: the server's connection string, unique world names, a small random
//! number generator, and worlds of character sheets.

#![allow(dead_code)]

use std::sync::atomic::{AtomicU64, Ordering};

use datacomp::Store;
use datacomp_pg::PgWorlds;

/// The server's connection string, from `DATACOMP_PG`; without it the test fails, saying how
/// to start one (these tests never skip).
pub fn params() -> String {
    match std::env::var("DATACOMP_PG") {
        Ok(params) if !params.is_empty() => params,
        _ => panic!(
            "DATACOMP_PG is not set: datacomp-pg's tests need a PostgreSQL 15 server. Start a \
             throwaway one with `eval \"$(pg/ci/start-postgres)\"` (as root; it installs \
             postgresql-15 if missing and exports DATACOMP_PG), run the tests, then \
             `pg/ci/stop-postgres \"$DATACOMP_PG_DIR\"`; or set DATACOMP_PG to a server's \
             connection string (`host=/socket/dir user=NAME dbname=NAME`)"
        ),
    }
}

/// A connection with the schema in place.
pub fn connect() -> PgWorlds {
    let mut worlds = PgWorlds::connect(&params()).expect("connect to DATACOMP_PG");
    worlds.migrate_schema().expect("migrate_schema");
    worlds
}

/// A world name no other test (or earlier run) has used.
pub fn unique(name: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{name}-{}-{nanos}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

/// xorshift64*: reproducible random numbers without a dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Adds `n` character sheets to `store`: a name, stats, a status flag, a float array, a
/// null; every value kind a blob holds.
pub fn add_sheets(store: &mut Store, n: usize, rng: &mut Rng) {
    for i in 0..n {
        let id = store.insert_entries([("name", format!("sheet {i}").as_str())]).expect("insert");
        let mut sheet = store.get_mut(id).expect("just inserted");
        sheet.set("stats.health", (rng.below(100)) as f32).expect("set");
        sheet.set("stats.mana", (rng.below(50)) as f32).expect("set");
        sheet.set("status.poisoned", rng.below(2) == 0).expect("set");
        sheet.set("position", [i as f32, 2.0, 0.5]).expect("set");
        sheet.set("firmness", datacomp::Value::Null).expect("set");
    }
}
