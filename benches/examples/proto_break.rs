//! Issue 32's attacks on prototypes, timed once each (wall clock on whatever machine runs it;
//! take peak memory from `/usr/bin/time -v`):
//!
//! ```sh
//! cargo build --release --example proto_break
//! /usr/bin/time -v ../target/release/examples/proto_break OP
//! ```
//!
//! OP:
//! - `instances`: 1,000,000 instances of one prototype (each overriding one key): build,
//!   save, load (every link checked), view, salvage, a column through the prototype, the
//!   refused removal of the prototype, a relink of the prototype (its 1M-instance height
//!   walk), then detaching every instance.
//! - `chains`: 1,000,000 entities in chains at the limit (58,824 chains of 17: 16 links
//!   above each chain's last), linked in the order a load finds worst (each prototype after
//!   its instance), saved and loaded; then the same file with one more link in one chain.
//! - `cycle`: a cycle through `set_prototype` on the end of a 16-link chain, refused.
//! - `merge`: `store::merge3` over 1,000,000 instances: ours relinks half of them to a
//!   second prototype, theirs changes a value in the other half and relinks 1,000 of ours'
//!   half elsewhere (1,000 link conflicts); then a merge whose links make a cycle, refused.
//! - `names`: a 100 KB key name: an instance's own `x` over its prototype's `x.<100 KB>`
//!   (the path shadowing's walk), 100,000 reads of it, the flattened export; a key at
//!   `$relative.<100 KB>` refused by export.
//! - `imports`: 5,000 documents with a `$id` each and an instance of the one before,
//!   imported one by one into one store (the index of `$id`s kept between them).
//! - `ids`: 1,000,000 entities with a `$id` each exported whole (each name checked once
//!   against the others), then the last given the first's name: the export refused.
//! - `filters`: the filters of instances' own keys (in memory, beside each link): an
//!   instance grown to 100,000 own keys one `set` at a time (a write keeps the filter it
//!   knew with the key's bit: O(1), no pass over the blob); 1,000,000 instances of one prototype read
//!   by a column of an inherited key three times (the first pass learns each filter), each
//!   instance written, and read again (the writes kept them).
//! - `paths`: a store merge of one entity where ours adds `x` and theirs 100,000 keys under
//!   it (`x.k0` ...): one path conflict, settled each way.

use std::hint::black_box;
use std::time::Instant;

use datacomp::store::MAX_CHAIN;
use datacomp::{Id, Key, Store, StoreView};

const HEALTH: Key = Key::path(&["stats", "health"]);

fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    println!("{what}: {:.3} s", start.elapsed().as_secs_f64());
    out
}

/// 1,000,000 instances of `orc` inserted into `store`, each overriding one key (timed).
fn million_instances(store: &mut Store, orc: Id) -> Vec<Id> {
    timed("insert 1M instances, each with one override", || {
        (0..1_000_000)
            .map(|i| {
                let id = store.insert_instance(orc).unwrap();
                store.get_mut(id).unwrap().set("level", (i % 90) as f32).unwrap();
                id
            })
            .collect()
    })
}

fn instances() {
    let mut store = Store::new();
    let orc = store.insert_entries([("name", "Orc"), ("title", "Brute")]).unwrap();
    store.get_mut(orc).unwrap().set(HEALTH, 30).unwrap();
    let ids = million_instances(&mut store, orc);
    let bytes = timed("save", || store.to_bytes());
    println!("save: {} bytes", bytes.len());
    let loaded = timed("load (links checked)", || Store::from_bytes(&bytes).unwrap());
    assert!(loaded == store);
    // A Vec from the global allocator is aligned for a view.
    timed("view", || black_box(StoreView::new(&bytes).unwrap().len()));
    timed("salvage", || black_box(Store::salvage(&bytes).unwrap().store.len()));
    let total = timed("column through the prototype", || {
        loaded.column::<f32>(HEALTH).map(|(_, h)| h).sum::<f32>()
    });
    println!("  sum {total}");
    let mut store = loaded;
    timed("remove the prototype (refused)", || assert!(!store.remove(orc)));
    println!("  {}", store.try_remove(orc).unwrap_err());
    let top = store.insert_empty();
    timed("relink the prototype (height walk over 1M)", || {
        store.set_prototype(orc, Some(top)).unwrap();
    });
    timed("detach 1M instances", || {
        for &id in &ids {
            store.detach(id).unwrap();
        }
    });
    timed("remove the prototype", || assert!(store.remove(orc)));
}

fn chains() {
    let n = 1_000_000;
    let per = MAX_CHAIN + 1;
    let mut store = Store::new();
    let ids: Vec<Id> = (0..n).map(|_| store.insert_empty()).collect();
    timed("link 1M entities into chains of 16 links", || {
        // Entity d reads through d + 1 (in its chain): each prototype after its instance.
        for (d, &id) in ids.iter().enumerate() {
            if d % per != per - 1 && d + 1 < n {
                store.set_prototype(id, Some(ids[d + 1])).unwrap();
            }
        }
    });
    let bytes = timed("save", || store.to_bytes());
    let loaded = timed("load (links checked)", || Store::from_bytes(&bytes).unwrap());
    assert_eq!(loaded.resolved(ids[0]).unwrap().chain().count(), MAX_CHAIN);
    // One chain joined to the next: 33 links above its first entity.
    store.set_prototype(ids[per - 1], None).unwrap();
    let mut joined = store.clone();
    let err = joined.set_prototype(ids[per - 1], Some(ids[per])).unwrap_err();
    println!("  set_prototype: {err}");
    // Forced into the file instead: the load refuses it.
    let err = timed("load of a chain past the limit", || {
        let section = datacomp::format::describe(&bytes).unwrap();
        let links = section.sections.iter().find(|s| s.kind == 16).unwrap();
        let mut crafted = bytes.clone();
        let at = links.offset as usize + 4 * (per - 1);
        crafted[at..at + 4].copy_from_slice(&(per as u32 + 1).to_le_bytes());
        reseal(&mut crafted);
        Store::from_bytes(&crafted).unwrap_err()
    });
    println!("  {err}");
}

/// The crcs of a save whose sections were changed in place.
fn reseal(bytes: &mut [u8]) {
    let sections = usize::from(u16::from_le_bytes([bytes[14], bytes[15]]));
    for entry in (32..32 + 24 * sections).step_by(24) {
        let offset = u64::from_le_bytes(bytes[entry + 8..entry + 16].try_into().unwrap()) as usize;
        let len = u64::from_le_bytes(bytes[entry + 16..entry + 24].try_into().unwrap()) as usize;
        if u32::from_le_bytes(bytes[entry..entry + 4].try_into().unwrap()) == 16 {
            let crc = crc32fast::hash(&bytes[offset..offset + len]);
            bytes[entry + 4..entry + 8].copy_from_slice(&crc.to_le_bytes());
        }
    }
    bytes[24..28].fill(0);
    let crc = crc32fast::hash(&bytes[..32 + 24 * sections]);
    bytes[24..28].copy_from_slice(&crc.to_le_bytes());
}

fn cycle() {
    let mut store = Store::new();
    let root = store.insert_empty();
    let mut last = root;
    for _ in 0..MAX_CHAIN {
        last = store.insert_instance(last).unwrap();
    }
    let err = timed("a cycle through set_prototype", || store.set_prototype(root, Some(last)));
    println!("  {}", err.unwrap_err());
}

fn merge() {
    use datacomp::blob::Side;
    use datacomp::store::merge3;
    let mut base = Store::new();
    let orc = base.insert_entries([("name", "Orc")]).unwrap();
    let elf = base.insert_entries([("name", "Elf")]).unwrap();
    let troll = base.insert_entries([("name", "Troll")]).unwrap();
    let ids: Vec<Id> = (0..1_000_000).map(|_| base.insert_instance(orc).unwrap()).collect();
    let (mut ours, mut theirs) = (base.clone(), base.clone());
    timed("ours relinks 500,000, theirs sets 500,000 and relinks 1,000 of ours'", || {
        for &id in &ids[..500_000] {
            ours.set_prototype(id, Some(elf)).unwrap();
        }
        for &id in &ids[500_000..] {
            theirs.get_mut(id).unwrap().set("level", 3).unwrap();
        }
        for &id in &ids[..1_000] {
            theirs.set_prototype(id, Some(troll)).unwrap();
        }
    });
    let (merged, report) = timed("merge3", || merge3(&base, &ours, &theirs, Side::Ours).unwrap());
    println!(
        "  {} merged, {} link conflicts; {} read through the elf",
        report.merged.len(),
        report.link_conflicts.len(),
        ids.iter().filter(|&&id| merged.prototype(id) == Some(elf)).count()
    );
    let (mut ours, mut theirs) = (base.clone(), base.clone());
    ours.set_prototype(elf, Some(troll)).unwrap();
    theirs.set_prototype(troll, Some(elf)).unwrap();
    let err = timed("merge3 whose links cycle", || {
        merge3(&base, &ours, &theirs, Side::Ours).map(|_| ()).unwrap_err()
    });
    println!("  {err}");
}

fn names() {
    let long = "n".repeat(100_000);
    let mut store = Store::new();
    let base = store.insert_entries([("$id", "base")]).unwrap();
    store.get_mut(base).unwrap().set(format!("x.{long}").as_str(), 1).unwrap();
    let instance = store.insert_instance(base).unwrap();
    store.get_mut(instance).unwrap().set("x", 2).unwrap();
    let key = Key::path(&["x", &long]);
    let hidden = timed("100,000 shadowed reads of x.<100 KB>", || {
        (0..100_000).filter(|_| store.resolved(instance).unwrap().get(key).is_none()).count()
    });
    println!("  {hidden} hidden");
    let flat = datacomp::ExportOptions::json().flatten(true);
    let text = timed("flattened export", || store.export(instance, &flat).unwrap());
    println!("  {text}");
    store.get_mut(base).unwrap().set(format!("$relative.{long}").as_str(), 1).unwrap();
    let err = timed("export of a key at $relative.<100 KB>", || {
        store.export(base, &datacomp::ExportOptions::json()).unwrap_err()
    });
    println!("  {} bytes of message: {}", err.to_string().len(), err);
}

fn imports() {
    let strict = datacomp::ImportOptions::strict();
    let mut store = Store::new();
    for i in 0..45_000 {
        store.insert_entries([("$id", format!("filler {i}").as_str())]).unwrap();
    }
    timed("5,000 documents, each a $id and an instance of the one before", || {
        store.import(r#"{"$id": "doc 0"}"#, &strict).unwrap();
        for i in 1..5_000 {
            let text = format!(r#"[{{"$id": "doc {i}"}}, {{"$prototype": "doc {}"}}]"#, i - 1);
            store.import(&text, &strict).unwrap();
        }
    });
    println!("  {} entities", store.len());
}

fn ids() {
    let mut store = Store::new();
    let ids: Vec<Id> = (0..1_000_000)
        .map(|i| store.insert_entries([("$id", format!("e{i}").as_str()), ("hp", "1")]).unwrap())
        .collect();
    let json = datacomp::ExportOptions::json();
    let text = timed("export of 1,000,000 entities with a $id each", || store.export_all(&json));
    println!("  {} bytes", text.unwrap().len());
    store.get_mut(ids[999_999]).unwrap().set("$id", "e0").unwrap();
    let err = timed("the same with the last named as the first", || store.export_all(&json));
    println!("  {}", err.unwrap_err());
}

fn paths() {
    use datacomp::blob::Side;
    let mut base = Store::new();
    let id = base.insert_entries([("name", "x")]).unwrap();
    let (mut ours, mut theirs) = (base.clone(), base.clone());
    ours.get_mut(id).unwrap().set("x", 1).unwrap();
    let mut entity = theirs.get_mut(id).unwrap();
    for i in 0..100_000 {
        entity.set(format!("x.k{i}").as_str(), 2).unwrap();
    }
    for prefer in [Side::Ours, Side::Theirs] {
        let (merged, report) = timed(&format!("merge preferring {prefer:?}"), || {
            datacomp::store::merge3(&base, &ours, &theirs, prefer).unwrap()
        });
        let keys = merged.get(id).unwrap().len();
        println!("  {} path conflict, {keys} keys kept", report.path_conflicts.len());
    }
}

fn filters() {
    let mut store = Store::new();
    let orc = store.insert_entries([("name", "Orc")]).unwrap();
    store.get_mut(orc).unwrap().set(HEALTH, 30).unwrap();
    let big = store.insert_instance(orc).unwrap();
    timed("an instance grown to 100,000 own keys, one set each", || {
        for k in 0..100_000 {
            store.get_mut(big).unwrap().set(Key::path(&["k", &k.to_string()]), 1.0).unwrap();
        }
    });
    let read = timed("100,000 inherited gets of it", || {
        (0..100_000).filter_map(|_| store.resolved(black_box(big))?.get_float(HEALTH)).sum::<f32>()
    });
    assert_eq!(read, 3_000_000.0);
    let ids = million_instances(&mut store, orc);
    let store = Store::from_bytes(&store.to_bytes()).unwrap();
    let mut store = store;
    for pass in ["first (filters learned)", "second", "third"] {
        let sum = timed(&format!("column of an inherited key over 1M, {pass}"), || {
            store.column::<f32>(HEALTH).map(|(_, h)| h).sum::<f32>()
        });
        assert_eq!(sum, 30.0 * 1_000_002.0, "the orc, the big one, the 1M");
    }
    timed("a write to each of the 1M", || {
        for &id in &ids {
            store.get_mut(id).unwrap().set("level", 1.0).unwrap();
        }
    });
    timed("column again", || store.column::<f32>(HEALTH).map(|(_, h)| h).sum::<f32>());
}

fn main() {
    match std::env::args().nth(1).as_deref() {
        Some("instances") => instances(),
        Some("chains") => chains(),
        Some("cycle") => cycle(),
        Some("merge") => merge(),
        Some("names") => names(),
        Some("imports") => imports(),
        Some("ids") => ids(),
        Some("paths") => paths(),
        Some("filters") => filters(),
        _ => {
            eprintln!(
                "usage: proto_break instances|chains|cycle|merge|names|imports|ids|paths|filters"
            );
            std::process::exit(2);
        }
    }
}
