//! Loads a world of N character sheets from `DATACOMP_PG` (made on first use), for peak memory
//! (`/usr/bin/time -v`) and instruction counts (callgrind) of a load:
//! `cargo run -p datacomp-pg --release --example load_world -- 100000`.

use datacomp::{Store, StorePatch};
use datacomp_pg::{PgWorlds, Worlds};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args().nth(1).map_or(Ok(100_000), |a| a.parse())?;
    let params = std::env::var("DATACOMP_PG").map_err(
        |_| "DATACOMP_PG is not set: `eval \"$(pg/ci/start-postgres)\"` starts a server",
    )?;
    let mut worlds = PgWorlds::connect(&params)?;
    worlds.migrate_schema()?;
    let name = format!("load-world-{n}");
    let world = if let Some(world) = worlds.world(&name)? {
        world
    } else {
        let world = worlds.create_world(&name)?;
        let (empty, seq) = worlds.load(world)?;
        let mut local = empty.clone();
        for i in 0..n {
            let id = local.insert_entries([("name", format!("sheet {i}").as_str())])?;
            let mut sheet = local.get_mut(id).ok_or("just inserted")?;
            for (key, value) in
                [("stats.health", 100.0), ("stats.mana", 50.0), ("stats.xp", 1200.0)]
            {
                sheet.set(key, value)?;
            }
            sheet.set("position", [i as f32, 2.0, 0.5])?;
        }
        worlds.commit(world, seq, &StorePatch::diff(&empty, &local))?;
        println!("made world {name}: rerun to measure the load alone");
        return Ok(());
    };
    let (store, seq): (Store, _) = worlds.load(world)?;
    println!(
        "{name}: {} entities at seq {seq}, {} arena bytes",
        store.len(),
        store.stats().arena_bytes
    );
    Ok(())
}
