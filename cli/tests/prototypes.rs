//! Prototypes through the command: fixtures that name prototypes (`$id`, `$prototype`,
//! `$abstract`, `$remove`, `$relative`, `$proportional`) imported, listed, read resolved or
//! as stored, inspected, exported and flattened.

#[path = "common/outcome.rs"]
mod outcome;
#[path = "common/world.rs"]
mod world;

use datacomp::Store;
use serde_json::Value;
use tempfile::TempDir;
use world::{fails, fixtures, misused, ok};

/// A directory with `monsters.dcmp`, imported from `fixtures/prototypes/monsters.json`:
/// 0v0t1 the Orc Chieftain (instance of 1v0t1, orc), 2v0t1 the abstract goblin, 3v0t1 Snaga,
/// 4v0t1 Grishnak and 5v0t1 Gorbag (its instances).
struct Monsters {
    dir: TempDir,
    path: String,
}

impl Monsters {
    fn new() -> Monsters {
        let dir = TempDir::new().unwrap();
        let path = dir.path().join("monsters.dcmp").to_str().unwrap().to_owned();
        let fixture = fixtures().join("prototypes/monsters.json");
        ok(&["import", fixture.to_str().unwrap(), "-o", &path]);
        Monsters { dir, path }
    }

    fn file(&self, name: &str) -> String {
        self.dir.path().join(name).to_str().unwrap().to_owned()
    }
}

fn id(text: &str) -> datacomp::Id {
    text.parse().unwrap()
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

#[test]
fn list_leaves_abstract_entities_out_unless_all() {
    let world = Monsters::new();
    let listed = ok(&["list", &world.path]);
    assert_eq!(
        listed,
        "id            keys    bytes  name\n\
         0v0t1            5      116  Orc Chieftain (from orc)\n\
         1v0t1            7      100  Orc\n\
         3v0t1            1       32  Snaga (from goblin)\n\
         4v0t1            2       40  Grishnak (from goblin)\n\
         5v0t1            2       40  Gorbag (from goblin)\n\
         5 entities; 1 abstract entity left out (--all lists it)\n"
    );
    let all = json_lines(&ok(&["list", &world.path, "--all", "--json"]));
    assert_eq!(all.len(), 6);
    assert_eq!(
        all[2],
        serde_json::json!({"id": "2v0t1", "keys": 9, "bytes": 140, "name": "Goblin",
                           "prototype": null, "abstract": true})
    );
    assert_eq!(all[3]["prototype"], "2v0t1");
    assert_eq!(all[3]["name"], "Snaga");
}

#[test]
fn get_reads_through_the_chain_and_marks_what_is_inherited() {
    let world = Monsters::new();
    assert_eq!(
        ok(&["get", &world.path, "5v0t1"]),
        "  key           type    value\n\
         \x20 name          string  Gorbag\n\
         \x20 kind          string  monster  (from goblin)\n\
         \x20 stats.health  float   7  (from goblin)\n\
         \x20 stats.armor   float   1  (from goblin)\n\
         \x20 stats.speed   float   1.25  (from goblin)\n\
         \x20 loot_table    floats  [0.5, 0.25]  (from goblin)\n"
    );
    assert_eq!(
        ok(&["get", &world.path, "5v0t1", "--own"]),
        "  key                      type       value\n\
         \x20 name                     string     Gorbag\n\
         \x20 status_effects.poisoned  tombstone  (removed)\n"
    );
    // One key: the value alone, as a script reads it; its source in JSON.
    assert_eq!(ok(&["get", &world.path, "0v0t1", "stats.speed"]), "1\n");
    assert_eq!(ok(&["get", &world.path, "0v0t1", "stats.health"]), "60\n");
    let line: Value =
        serde_json::from_str(&ok(&["get", &world.path, "0v0t1", "stats.speed", "--json"])).unwrap();
    assert_eq!(line["from"], "1v0t1");
    assert_eq!(line["value"], 1);
    let line: Value =
        serde_json::from_str(&ok(&["get", &world.path, "0v0t1", "name", "--json"])).unwrap();
    assert_eq!(line.get("from"), None, "its own");
    // An object's path, as the entity reads it.
    assert_eq!(
        ok(&["get", &world.path, "3v0t1", "stats", "--json"]),
        "{\"id\":\"3v0t1\",\"key\":\"stats\",\"type\":\"object\",\"value\":{\"health\":7,\"armor\":1,\"speed\":1.25}}\n"
    );
    let all: Value = serde_json::from_str(&ok(&["get", &world.path, "3v0t1", "--json"])).unwrap();
    assert_eq!(all["prototype"], "2v0t1");
    assert_eq!(
        all["entries"][0],
        serde_json::json!({"key": "name", "hash": "#de9577cc", "type": "string", "value": "Snaga", "from": "3v0t1"})
    );
    assert_eq!(all["entries"].as_array().unwrap().len(), 7);
    // --own: what it stores; a key it inherits is said to be inherited.
    assert_eq!(
        fails(&["get", &world.path, "3v0t1", "stats.health", "--own"]),
        format!(
            "{}: entity 3v0t1 stores no stats.health: it reads it from goblin (without --own)",
            world.path
        )
    );
    assert_eq!(
        fails(&["get", &world.path, "5v0t1", "status_effects.poisoned"]),
        format!("{}: entity 5v0t1 has no key status_effects.poisoned", world.path)
    );
}

#[test]
fn inspect_shows_the_chain() {
    let world = Monsters::new();
    let shown = ok(&["inspect", &world.path, "0v0t1"]);
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines[0], "entity 0v0t1 \"Orc Chieftain\": 5 keys, 116 bytes");
    assert_eq!(lines[1], "prototype chain: 0v0t1 -> 1v0t1 (orc)");
    assert_eq!(lines[2], "reads 8 keys: 5 its own, 3 through orc, 0 removed");
    let base = ok(&["inspect", &world.path, "2v0t1"]);
    assert!(base.contains("\nprototype of 3 entities\nabstract: "), "{base}");
    let json: Value =
        serde_json::from_str(&ok(&["inspect", &world.path, "5v0t1", "--json"])).unwrap();
    assert_eq!(
        (&json["prototype"], &json["chain"], &json["instances"]),
        (&"2v0t1".into(), &serde_json::json!(["2v0t1"]), &0.into())
    );
}

#[test]
fn export_writes_links_or_flattens_and_imports_back() {
    let world = Monsters::new();
    let one = ok(&["export", &world.path, "3v0t1", "--compact"]);
    assert_eq!(one, "{\"$prototype\":\"goblin\",\"name\":\"Snaga\"}\n");
    let flat = ok(&["export", &world.path, "3v0t1", "--compact", "--flatten"]);
    assert_eq!(
        flat,
        "{\"name\":\"Snaga\",\"kind\":\"monster\",\"stats\":{\"health\":7,\"armor\":1,\"speed\":1.25},\
         \"status_effects\":{\"poisoned\":true},\"loot_table\":[0.5,0.25]}\n"
    );
    // Every entity, and back: the same store.
    let exported = world.file("all.json");
    ok(&["export", &world.path, "-o", &exported]);
    let again = world.file("again.dcmp");
    ok(&["import", &exported, "-o", &again]);
    assert_eq!(Store::load(&again).unwrap(), Store::load(&world.path).unwrap());
    let sjson = world.file("all.sjson");
    ok(&["export", &world.path, "-o", &sjson]);
    let from_sjson = world.file("sjson.dcmp");
    ok(&["import", &sjson, "-o", &from_sjson]);
    assert_eq!(Store::load(&from_sjson).unwrap(), Store::load(&world.path).unwrap());
    // Flattened: no link, no abstract entity.
    let flat_all = ok(&["export", &world.path, "--flatten", "--compact"]);
    assert!(!flat_all.contains("$prototype") && !flat_all.contains("Goblin"), "{flat_all}");
    let entities: Value = serde_json::from_str(&flat_all).unwrap();
    assert_eq!(entities.as_array().unwrap().len(), 5);
}

#[test]
fn export_refuses_two_entities_given_one_id_and_writes_nothing() {
    let world = Monsters::new();
    // Snaga (3v0t1) given the orc's name (1v0t1's) through the API.
    let mut store = Store::load(&world.path).unwrap();
    store.get_mut(id("3v0t1")).unwrap().set("$id", "orc").unwrap();
    store.save(&world.path).unwrap();
    let out = world.file("all.json");
    let said = format!(
        "{}: entities 1v0t1 and 3v0t1 both have the $id \"orc\": an import would refuse the \
         second (give each a name of its own)",
        world.path
    );
    for args in [
        vec!["export", &world.path, "-o", &out],
        vec!["export", &world.path, "--format", "sjson", "-o", &out],
        vec!["export", &world.path, "--flatten", "-o", &out],
    ] {
        assert_eq!(fails(&args), said, "{args:?}");
    }
    assert!(!std::path::Path::new(&out).exists(), "nothing written");
    // One entity is one name: its export is no document of two.
    assert_eq!(ok(&["export", &world.path, "3v0t1", "--compact"]).lines().count(), 1);
}

#[test]
fn flatten_makes_instances_whole_atomically() {
    let world = Monsters::new();
    let out = world.file("flat.dcmp");
    let said = ok(&["flatten", &world.path, "4v0t1", "-o", &out]);
    assert!(
        said.starts_with(&format!("{}: flattened 4v0t1; wrote {out} (6 entities, ", world.path)),
        "{said}"
    );
    let store = Store::load(&out).unwrap();
    let grishnak = store.get(id("4v0t1")).unwrap();
    assert_eq!(store.prototype(id("4v0t1")), None);
    assert_eq!(grishnak.get_float("stats.health"), Some(9.0));
    assert_eq!(grishnak.get_float("stats.speed"), Some(1.25));
    assert_eq!(grishnak.get("$id"), None, "the prototype's name stays the prototype's");
    assert_eq!(grishnak.get("$abstract"), None);
    // The others keep their links; the input is unchanged.
    assert_eq!(store.prototype(id("3v0t1")), Some(id("2v0t1")));
    assert!(ok(&["get", &world.path, "4v0t1", "--own"]).lines().count() == 3);
    // Every instance, in place.
    let json: Value =
        serde_json::from_str(&ok(&["flatten", &world.path, "--all", "-o", &world.path, "--json"]))
            .unwrap();
    assert_eq!(json["flattened"], serde_json::json!(["0v0t1", "3v0t1", "4v0t1", "5v0t1"]));
    let store = Store::load(&world.path).unwrap();
    assert!(store.iter().all(|(id, _)| store.prototype(id).is_none()));
    let gorbag = store.get(id("5v0t1")).unwrap();
    assert_eq!(gorbag.get("status_effects.poisoned"), None, "the removal is kept, as an absence");
    // Refused: an entity with no prototype; the command line.
    assert_eq!(
        fails(&["flatten", &world.path, "1v0t1", "-o", &out]),
        format!("{}: entity 1v0t1 has no prototype: it holds all its values already", world.path)
    );
    for (args, says) in [
        (
            &["flatten", &world.path, "-o", &out][..],
            "the following required arguments were not provided",
        ),
        (&["flatten", &world.path, "1v0t1", "--all", "-o", &out], "cannot be used with"),
        (&["flatten", &world.path, "1v0t1"], "--output <OUTPUT>"),
    ] {
        let run = world::run(args);
        let stderr = String::from_utf8(run.stderr).unwrap();
        assert_eq!(run.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    assert!(
        misused(&["flatten", &world.path, "goblin", "-o", &out])
            .contains("\"goblin\" is not an id")
    );
}

#[test]
fn query_leaves_abstract_entities_out_unless_all() {
    let world = Monsters::new();
    let found = ok(&["query", &world.path, "kind == \"monster\"", "--keys", "name"]);
    assert_eq!(
        found,
        "id\tname\n0v0t1\tOrc Chieftain\n1v0t1\tOrc\n3v0t1\tSnaga\n4v0t1\tGrishnak\n5v0t1\tGorbag\n"
    );
    let all =
        ok(&["query", &world.path, "stats.health < 10", "--all", "--keys", "name,stats.health"]);
    assert_eq!(
        all,
        "id\tname\tstats.health\n2v0t1\tGoblin\t7\n3v0t1\tSnaga\t7\n4v0t1\tGrishnak\t9\n5v0t1\tGorbag\t7\n"
    );
}

#[test]
fn import_errors_name_the_file_and_place_and_write_nothing() {
    let dir = TempDir::new().unwrap();
    let text = "[\n  {\"$id\": \"orc\", \"hp\": 3},\n  {\"$prototype\": \"ork\"}\n]";
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, text).unwrap();
    let out = dir.path().join("w.dcmp");
    let (bad, out) = (bad.to_str().unwrap(), out.to_str().unwrap());
    assert_eq!(
        fails(&["import", bad, "-o", out]),
        format!("{bad}: /1/$prototype (line 3, column 22): no entity has the $id \"ork\"")
    );
    assert!(!std::path::Path::new(out).exists());
}

#[test]
fn a_file_may_name_prototypes_of_a_later_file() {
    let dir = TempDir::new().unwrap();
    std::fs::write(
        dir.path().join("a_goblins.json"),
        r#"[{"$prototype": "goblin", "name": "Snaga"}]"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("b_chief.json"),
        r#"{"$id": "chief", "$prototype": "orc", "hp": 60}"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("c_bases.sjson"),
        "[{\"$id\" = \"goblin\", \"$prototype\" = \"orc\", hp = 7} {\"$id\" = \"orc\", hp = 30}]",
    )
    .unwrap();
    let out = dir.path().join("w.dcmp");
    let (input, out) = (dir.path().to_str().unwrap(), out.to_str().unwrap());
    ok(&["import", input, "-o", out]);
    let listed = ok(&["list", out]);
    assert!(listed.contains("\n2v0t1            1       32  Snaga (from goblin)\n"), "{listed}");
    assert!(listed.ends_with("\n4 entities\n"), "{listed}");
    assert_eq!(ok(&["get", out, "0v0t1", "hp"]), "7\n");
    // A name no file has: the files that wait for it fail, after the others are read.
    std::fs::write(dir.path().join("d_more.json"), r#"{"$prototype": "troll"}"#).unwrap();
    assert_eq!(
        fails(&["import", input, "-o", out]),
        format!(
            "{input}/d_more.json: /$prototype (line 1, column 22): no entity has the $id \"troll\""
        )
    );
    let kept = world::run(&["import", input, "-o", out, "--keep-going"]);
    assert_eq!(kept.status.code(), Some(1));
    let stderr = String::from_utf8(kept.stderr).unwrap();
    assert_eq!(
        stderr,
        format!(
            "datacomp: {input}/d_more.json: /$prototype (line 1, column 22): no entity has the $id \"troll\"\n\
             datacomp: 1 of 4 files did not import, the first {input}/d_more.json; the save holds the others\n"
        )
    );
    assert!(ok(&["list", out]).ends_with("\n4 entities\n"));
}

#[test]
fn rm_keeps_a_prototype_that_has_instances() {
    let world = Monsters::new();
    let before = std::fs::read(&world.path).unwrap();
    assert_eq!(
        fails(&["rm", &world.path, "2v0t1"]),
        format!(
            "{}: entity 2v0t1 is the prototype of 3 live entities: detach or relink them first \
             (datacomp flatten detaches them)",
            world.path
        )
    );
    assert_eq!(std::fs::read(&world.path).unwrap(), before, "nothing written");
    ok(&["flatten", &world.path, "--all", "-o", &world.path]);
    assert_eq!(ok(&["rm", &world.path, "2v0t1"]), "removed entity 2v0t1; 5 entities left\n");
}

#[test]
fn hostile_links_fail_at_their_place_without_hanging() {
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("w.dcmp");
    let out = out.to_str().unwrap();
    let write = |name: &str, text: String| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let hang = std::time::Duration::from_secs(120);
    // A cycle through 10,000 entities, and a chain of 20,000.
    let ring: Vec<String> = (0..10_000)
        .map(|i| format!(r#"{{"$id":"e{i}","$prototype":"e{}"}}"#, (i + 1) % 10_000))
        .collect();
    let ring = write("ring.json", format!("[{}]", ring.join(",")));
    let args = ["import", &ring, "-o", out];
    assert_eq!(
        outcome::failed(&args, outcome::run_within(&args, hang)),
        format!(
            "{ring}: /0/$prototype (line 1, column 30): the prototype chain of \"e0\" comes back to it, through 10000 entities"
        )
    );
    let chain: Vec<String> = (0..20_000)
        .map(|i| match i + 1 {
            20_000 => format!(r#"{{"$id":"e{i}"}}"#),
            next => format!(r#"{{"$id":"e{i}","$prototype":"e{next}"}}"#),
        })
        .collect();
    let chain = write("chain.json", format!("[\n{}\n]", chain.join(",\n")));
    let args = ["import", &chain, "-o", out];
    let said = outcome::failed(&args, outcome::run_within(&args, hang));
    assert_eq!(
        said,
        format!(
            "{chain}: /19982/$prototype (line 19984, column 37): the entity would have 17 prototypes above it, past the limit of 16"
        )
    );
    // A 100 KB name, twice: the message cuts it.
    let long = "x".repeat(100_000);
    let twice = write("twice.json", format!(r#"[{{"$id":"{long}"}},{{"$id":"{long}"}}]"#));
    let args = ["import", &twice, "-o", out];
    let said = outcome::failed(&args, outcome::run_within(&args, hang));
    assert!(
        said.starts_with(&format!("{twice}: /1/$id (line 1, column 200021): the $id \"")),
        "{}",
        &said[..300]
    );
    assert!(said.len() < 1000 && said.ends_with("\" is taken, by /0"), "{said}");
    assert!(!std::path::Path::new(out).exists(), "nothing written");
}

#[test]
fn large_entities_read_through_large_prototypes_in_linear_time() {
    let dir = TempDir::new().unwrap();
    let (doc, save) = (dir.path().join("big.json"), dir.path().join("big.dcmp"));
    let n = 20_000;
    let base: Vec<String> = (0..n).map(|i| format!(r#""a{i}":{i}"#)).collect();
    let relative: Vec<String> = (0..n).step_by(2).map(|i| format!(r#""a{i}":1"#)).collect();
    let removed: Vec<String> = (1..n).step_by(2).map(|i| format!(r#""k.a{i}""#)).collect();
    let text = format!(
        r#"[{{"$prototype":"b","$relative":{{"k":{{{}}}}},"$remove":[{}]}},{{"$id":"b","k":{{{}}}}}]"#,
        relative.join(","),
        removed.join(","),
        base.join(",")
    );
    std::fs::write(&doc, text).unwrap();
    let (doc, save) = (doc.to_str().unwrap(), save.to_str().unwrap());
    // Each of these read every key of a blob for every key of the other, before. (Their
    // output goes to files: `run_within` reads a pipe only once the command has ended.)
    let hang = std::time::Duration::from_secs(120);
    let run = |args: &[&str]| outcome::succeeded(args, outcome::run_within(args, hang));
    run(&["import", doc, "-o", save]);
    let flat_json = dir.path().join("flat.json");
    let flat_json = flat_json.to_str().unwrap();
    run(&["export", save, "0v0t1", "--flatten", "--compact", "-o", flat_json]);
    let flat: Value = serde_json::from_str(&std::fs::read_to_string(flat_json).unwrap()).unwrap();
    assert_eq!(flat["k"].as_object().unwrap().len(), n / 2, "the removed half is not read");
    assert_eq!((&flat["k"]["a2"], &flat["k"]["a19998"]), (&3.into(), &19_999.into()));
    let flat_save = dir.path().join("flat.dcmp");
    run(&["flatten", save, "--all", "-o", flat_save.to_str().unwrap()]);
    let store = Store::load(&flat_save).unwrap();
    assert_eq!(store.get(id("0v0t1")).unwrap().len(), n / 2);
    let read: Value = serde_json::from_str(&ok(&["get", save, "0v0t1", "--json"])).unwrap();
    let entries = read["entries"].as_array().unwrap();
    assert_eq!(entries.len(), n / 2);
    assert_eq!((&entries[1]["key"], &entries[1]["value"]), (&"k.a2".into(), &3.into()));
}

/// `merge` takes the prototype links three-way: a link one side changed is taken, one both
/// changed differently is a conflict (listed; `--prefer` picks), and merged links that make a
/// cycle fail the merge and write nothing.
#[test]
fn merge_takes_links_three_way_and_refuses_a_cycle() {
    let world = Monsters::new();
    let (ours, theirs, out) =
        (world.file("ours.dcmp"), world.file("theirs.dcmp"), world.file("m.dcmp"));
    let edit = |path: &str, change: &dyn Fn(&mut Store)| {
        let mut store = Store::load(&world.path).unwrap();
        change(&mut store);
        store.save(path).unwrap();
    };
    // Theirs moves Snaga under the orc; ours renames it and moves Grishnak under the orc,
    // which theirs detaches: one link each, and one conflict.
    edit(&ours, &|s| {
        s.get_mut(id("3v0t1")).unwrap().set("name", "Snaga the Bold").unwrap();
        s.set_prototype(id("4v0t1"), Some(id("1v0t1"))).unwrap();
    });
    edit(&theirs, &|s| {
        s.set_prototype(id("3v0t1"), Some(id("1v0t1"))).unwrap();
        s.detach(id("4v0t1")).unwrap();
    });
    assert_eq!(
        fails(&["merge", &world.path, &ours, &theirs, "-o", &out]),
        format!(
            "{ours}: 1 conflicting key (changed differently on both sides; --prefer ours|theirs \
             picks a side): 4v0t1: prototype: ours 1v0t1, theirs none"
        )
    );
    assert!(!std::path::Path::new(&out).exists());
    assert_eq!(
        ok(&["merge", &world.path, &ours, &theirs, "-o", &out, "--prefer", "ours"]),
        format!(
            "4v0t1: merged\n4v0t1: prototype: ours 1v0t1, theirs none\n\
             {out}: 6 entities, 1 conflicting key (ours kept)\n"
        )
    );
    let merged = Store::load(&out).unwrap();
    assert_eq!(merged.prototype(id("3v0t1")), Some(id("1v0t1")), "theirs' link");
    assert_eq!(merged.prototype(id("4v0t1")), Some(id("1v0t1")), "ours kept");
    let snaga = merged.resolved(id("3v0t1")).unwrap();
    assert_eq!(snaga.get_str("name"), Some("Snaga the Bold"));
    assert_eq!(snaga.get_with_source("stats.health").map(|(_, from)| from), Some(id("1v0t1")));
    ok(&["merge", &world.path, &ours, &theirs, "-o", &out, "--prefer", "theirs"]);
    assert_eq!(Store::load(&out).unwrap().prototype(id("4v0t1")), None, "theirs taken");

    // Ours puts Snaga under Grishnak, theirs Grishnak under Snaga: a cycle neither made.
    std::fs::remove_file(&out).unwrap();
    edit(&ours, &|s| s.set_prototype(id("3v0t1"), Some(id("4v0t1"))).unwrap());
    edit(&theirs, &|s| s.set_prototype(id("4v0t1"), Some(id("3v0t1"))).unwrap());
    assert_eq!(
        fails(&["merge", &world.path, &ours, &theirs, "-o", &out, "--prefer", "ours"]),
        format!(
            "{ours}: the merged links: entity 4v0t1 reads through 3v0t1: as 3v0t1's prototype \
             it would make a cycle"
        )
    );
    assert!(!std::path::Path::new(&out).exists(), "a refused merge writes nothing");
}
