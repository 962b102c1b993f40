//! The `datacomp` command, run as a process: every subcommand with good input, and with bad
//! files, bad IDs, bad keys and bad values. A failure is one line on stderr and exit code 1
//! (2 for usage), never a panic, and a failed command leaves its files as they were.

#[path = "common/outcome.rs"]
mod outcome;
#[path = "common/world.rs"]
mod world;

use std::path::Path;
use std::process::{Command, Stdio};

use datacomp::{Blob, ExportOptions, ImportOptions, Store, TextFormat};
use tempfile::TempDir;
use world::{World, fails, fixtures, misused, ok, run};

// ---------------------------------------------------------------------------------------------
// import, list, verify

#[test]
fn import_writes_a_save_of_every_document_in_order() {
    let world = World::new();
    let store = world.store();
    let names: Vec<&str> = store.iter().map(|(_, b)| b.get_str("name").unwrap()).collect();
    assert_eq!(
        names,
        [
            "The One",
            "Orc Raider",
            "Cave Troll",
            "Mirabel",
            "The One",
            "Granite Warden",
            "Aldric the Grey"
        ],
        "files as given, a directory's files in name order"
    );
    let listed = ok(&["list", &world.path]);
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), 9, "{listed}");
    assert_eq!(lines[0], "id            keys    bytes  name");
    assert_eq!(lines[3], "2v0t1           10      160  Cave Troll");
    assert_eq!(lines[8], "7 entities");
    let verified = ok(&["verify", &world.path]);
    let len = world.bytes().len();
    let format = format!("format 1.{}, data version 0", datacomp::format::FORMAT_MINOR);
    assert!(verified.starts_with(&format!("{}: ok: {format}, ", world.path)), "{verified}");
    assert!(verified.ends_with(&format!("({len} bytes), 9 sections, 7 entities, 91 key names\n")));
}

#[test]
fn import_prints_a_summary() {
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("w.dcmp");
    let classic = fixtures().join("sheets/classic.json");
    let summary = ok(&["import", classic.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    let lines: Vec<&str> = summary.lines().collect();
    assert_eq!(lines.len(), 2, "{summary}");
    assert!(lines[0].starts_with("imported 1 entity from 1 JSON document ("), "{summary}");
    let file_len = std::fs::metadata(&out).unwrap().len();
    assert!(
        lines[1].starts_with(&format!("wrote {} (", out.display()))
            && lines[1].contains(&format!("{file_len} bytes an entity, 5 key names)")),
        "{summary}"
    );
}

#[test]
fn a_failed_import_writes_nothing() {
    let world = World::new();
    let before = world.bytes();
    let invalid = fixtures().join("invalid");
    let classic = fixtures().join("sheets/classic.json");
    let message =
        fails(&["import", classic.to_str().unwrap(), invalid.to_str().unwrap(), "-o", &world.path]);
    let first = invalid.join("array_of_objects.json");
    assert_eq!(
        message,
        format!(
            "{}: /armor_class/0 (line 3, column 22): arrays may hold numbers only (--lenient \
             converts such arrays to objects keyed by index); 7 files after it not read \
             (--keep-going imports what reads)",
            first.display()
        )
    );
    assert_eq!(world.bytes(), before, "the old save is untouched");
}

#[test]
fn a_lenient_import_reports_what_it_changed() {
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("lenient.dcmp");
    let lenient_ok = fixtures().join("invalid/array_of_objects.json");
    let summary =
        ok(&["import", "--lenient", lenient_ok.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(
        summary.contains(&format!(
            "\nlenient: 1 array converted to objects (the first at /armor_class in {}), 0 \
             numbers rounded\n",
            lenient_ok.display()
        )),
        "{summary}"
    );
    assert_eq!(Store::load(&out).unwrap().len(), 1);

    let numbers = dir.path().join("numbers.json");
    std::fs::write(&numbers, r#"{"hp": 135, "xp": [1, 16777217], "gold": 1e400}"#).unwrap();
    let summary =
        ok(&["import", "--lenient", numbers.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(
        summary.contains(&format!(
            "\nlenient: 0 arrays converted to objects, 2 numbers rounded (the first at /xp/1 \
             in {})\n",
            numbers.display()
        )),
        "{summary}"
    );
    // Empty objects store nothing: both policies say how many were left out.
    let empty = dir.path().join("empty.json");
    std::fs::write(&empty, r#"[{"buffs": {}, "hp": 1}, {"a": {"b": {}}}, {}]"#).unwrap();
    for policy in [&["--lenient"][..], &[]] {
        let args = [&["import"], policy, &[empty.to_str().unwrap(), "-o", out.to_str().unwrap()]];
        let summary = ok(&args.concat());
        let first = format!(" (the first at /0/buffs in {})", empty.display());
        assert!(
            summary.contains(&format!("\n2 empty objects left out: they hold no keys{first}\n")),
            "{summary}"
        );
        assert_eq!(Store::load(&out).unwrap().len(), 3);
    }
    let plain =
        ok(&["import", lenient_ok.to_str().unwrap(), "--lenient", "-o", out.to_str().unwrap()]);
    assert!(!plain.contains("empty objects"), "{plain}");

    let strict = fails(&["import", numbers.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(
        strict,
        format!(
            "{}: /xp/1 (line 1, column 30): 16777217 would be stored as 16777216: f32 cannot \
             hold it",
            numbers.display()
        )
    );
}

#[test]
fn import_refuses_bad_inputs_by_name() {
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("w.dcmp");
    let out = out.to_str().unwrap();
    let missing = dir.path().join("missing.json");
    let message = fails(&["import", missing.to_str().unwrap(), "-o", out]);
    assert!(message.starts_with(&format!("{}: cannot read: ", missing.display())), "{message}");
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    assert_eq!(
        fails(&["import", empty.to_str().unwrap(), "-o", out]),
        "no JSON or SJSON files among the inputs"
    );
    let not_json = dir.path().join("x.json");
    std::fs::write(&not_json, "{\"a\": ").unwrap();
    assert_eq!(
        fails(&["import", not_json.to_str().unwrap(), "-o", out]),
        format!("{}: /a (line 1, column 6): EOF while parsing a value", not_json.display())
    );
    let unwritable = dir.path().join("no/such/dir/w.dcmp");
    let classic = fixtures().join("sheets/classic.json");
    let message = fails(&["import", classic.to_str().unwrap(), "-o", unwritable.to_str().unwrap()]);
    assert_eq!(
        message,
        format!(
            "{0}: cannot lock: the lock file {0}.lock cannot be created or opened: No such file \
             or directory (os error 2)",
            unwritable.display()
        )
    );
    assert!(!Path::new(out).exists());
}

// ---------------------------------------------------------------------------------------------
// get, set, rm

#[test]
fn get_prints_one_value_or_all_of_them() {
    let world = World::new();
    let w = world.path.as_str();
    assert_eq!(ok(&["get", w, "2v0t1", "stats.health"]), "140\n");
    assert_eq!(ok(&["get", w, "2v0t1", "stats.regeneration"]), "2.5\n");
    assert_eq!(ok(&["get", w, "2v0t1", "name"]), "Cave Troll\n");
    assert_eq!(ok(&["get", w, "2v0t1", "status_effects.enraged"]), "true\n");
    assert_eq!(ok(&["get", w, "2v0t1", "transform.scale"]), "[2.2, 2.2, 2.2]\n");
    assert_eq!(ok(&["get", w, "2v0t1", "/transform/scale"]), "[2.2, 2.2, 2.2]\n", "a pointer");
    assert_eq!(ok(&["get", w, "2v0t1", "#1a0f4bcd"]), "[2.2, 2.2, 2.2]\n", "a hash");
    assert_eq!(
        ok(&["get", w, "2v0t1", "transform.scale", "--json"]),
        r##"{"hash":"#1a0f4bcd","id":"2v0t1","key":"transform.scale","type":"floats","value":[2.2,2.2,2.2]}"##
            .to_owned()
            + "\n"
    );
    assert_eq!(
        ok(&["get", w, "0v0t1"]),
        "  key                       type    value
  name                      string  The One
  stats.health              float   100
  stats.mana                float   200
  status_effects.drunk      bool    true
  status_effects.delirious  bool    true
"
    );
    let all: serde_json::Value = serde_json::from_str(&ok(&["get", w, "0v0t1", "--json"])).unwrap();
    assert_eq!(all["id"], "0v0t1");
    assert_eq!(all["entries"][1]["key"], "stats.health");
    assert_eq!(all["entries"][1]["value"], 100.0);
    assert_eq!(all["entries"].as_array().unwrap().len(), 5);
}

#[test]
fn set_infers_the_type_and_saves() {
    let world = World::new();
    let w = world.path.as_str();
    assert_eq!(ok(&["set", w, "2v0t1", "stats.health", "95"]), "2v0t1 stats.health: 140 -> 95\n");
    assert_eq!(ok(&["set", w, "2v0t1", "stats.luck", "-3"]), "2v0t1 stats.luck: -3 (new key)\n");
    ok(&["set", w, "2v0t1", "title", "Bane of Bridges"]);
    ok(&["set", w, "2v0t1", "code", "42", "--type", "str"]);
    ok(&["set", w, "2v0t1", "transform.position", "[1, 2.5, -3]"]);
    ok(&["set", w, "2v0t1", "status_effects.stunned", "true"]);
    let store = world.store();
    let troll = store.get("2v0t1".parse().unwrap()).unwrap();
    assert_eq!(troll.get_float("stats.health"), Some(95.0));
    assert_eq!(troll.get_float("stats.luck"), Some(-3.0));
    assert_eq!(troll.get_str("title"), Some("Bane of Bridges"));
    assert_eq!(troll.get_str("code"), Some("42"));
    assert_eq!(troll.get_floats("transform.position"), Some(&[1.0, 2.5, -3.0][..]));
    assert_eq!(troll.get_bool("status_effects.stunned"), Some(true));
    // New keys are named, so that export nests them.
    assert_eq!(store.key_name(datacomp::Key::parse("stats.luck")).as_deref(), Some("stats.luck"));
    let exported: serde_json::Value = serde_json::from_str(&ok(&["export", w, "2v0t1"])).unwrap();
    assert_eq!(exported["stats"]["luck"], -3.0);
    ok(&["verify", w]);
}

#[test]
fn get_prints_an_objects_keys_as_json_as_jq_would() {
    let world = World::new();
    let w = world.path.as_str();
    assert_eq!(
        ok(&["get", w, "2v0t1", "stats"]),
        "{\n  \"health\": 140,\n  \"mana\": 0,\n  \"armor\": 9,\n  \"regeneration\": 2.5\n}\n"
    );
    assert_eq!(
        ok(&["get", w, "2v0t1", "transform", "--json"]),
        "{\"id\":\"2v0t1\",\"key\":\"transform\",\"type\":\"object\",\
         \"value\":{\"position\":[12,0,-40.5],\"scale\":[2.2,2.2,2.2]}}\n"
    );
    // The same text as the export's member.
    let exported: serde_json::Value = serde_json::from_str(&ok(&["export", w, "2v0t1"])).unwrap();
    let got: serde_json::Value = serde_json::from_str(&ok(&["get", w, "2v0t1", "stats"])).unwrap();
    assert_eq!(got, exported["stats"]);
    // A value is printed as before; a prefix that is no member's is no object.
    assert_eq!(ok(&["get", w, "2v0t1", "stats.health"]), "140\n");
    assert_eq!(fails(&["get", w, "2v0t1", "stat"]), format!("{w}: entity 2v0t1 has no key stat"));
}

#[test]
fn export_refuses_a_float_json_has_no_number_for() {
    let world = World::new();
    let w = world.path.as_str();
    let mut store = world.store();
    let troll = "2v0t1".parse().unwrap();
    store.get_mut(troll).unwrap().set("stats.mana", f32::NAN).unwrap();
    store.get_mut(troll).unwrap().set("transform.scale", [1.0, f32::NEG_INFINITY]).unwrap();
    store.save(w).unwrap();
    let out = world.file("out.json");
    for args in [
        vec!["export", w, "-o", &out],
        vec!["export", w, "2v0t1", "--compact"],
        vec!["get", w, "2v0t1", "stats"],
        // SJSON has no such number either: the same refusal.
        vec!["export", w, "--format", "sjson", "-o", &out],
        vec!["export", w, "2v0t1", "--format", "sjson"],
    ] {
        assert_eq!(
            fails(&args),
            format!("{w}: entity 2v0t1: stats.mana is NaN, which JSON has no number for"),
            "{args:?}"
        );
    }
    assert!(!Path::new(&out).exists(), "nothing written");
    assert_eq!(
        fails(&["get", w, "2v0t1", "transform"]),
        format!("{w}: entity 2v0t1: transform.scale is -inf, which JSON has no number for")
    );
    // The value itself can be read, and the other entities exported.
    assert_eq!(ok(&["get", w, "2v0t1", "transform.scale"]), "[1, -inf]\n");
    ok(&["export", w, "1v0t1"]);
}

#[test]
fn rm_removes_a_key_or_an_entity() {
    let world = World::new();
    let w = world.path.as_str();
    assert_eq!(ok(&["rm", w, "2v0t1", "stats.armor"]), "2v0t1: removed stats.armor\n");
    assert_eq!(world.store().get("2v0t1".parse().unwrap()).unwrap().get("stats.armor"), None);
    assert_eq!(ok(&["rm", w, "1v0t1"]), "removed entity 1v0t1; 6 entities left\n");
    assert_eq!(world.store().len(), 6);
    assert_eq!(
        fails(&["get", w, "1v0t1"]),
        format!("{w}: handle 1v0t1 is stale: its slot is at generation 1 now")
    );
}

#[test]
fn bad_ids_keys_and_values_change_nothing() {
    let world = World::new();
    let w = world.path.as_str();
    let before = world.bytes();
    let id_form = "expected INDEXvGENERATION, then tTYPE and f if set (as in 12v3t7), or null";
    // The example is the file's first id.
    let example = "(ids look like 0v0t1: see datacomp list)";
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["get", w, "troll", "name"],
            format!("bad entity id: \"troll\" is not an id: {id_form} {example}"),
        ),
        (
            vec!["set", w, "", "a", "1"],
            format!("bad entity id: \"\" is not an id: {id_form} {example}"),
        ),
        (
            vec!["get", w, "2", "name"],
            format!("bad entity id: \"2\" is not an id: {id_form} {example}"),
        ),
        (
            vec!["get", w, "99v0t1", "name"],
            format!("{w}: handle 99v0t1 is out of range: the map has slot indices below 7"),
        ),
        (
            vec!["get", w, "0v0t2", "name"],
            format!("{w}: handle 0v0t2 has type id 2, but this map's type id is 1"),
        ),
        (vec!["get", w, "null", "name"], format!("{w}: the null handle never resolves")),
        (
            vec!["rm", w, "0v5t1"],
            format!("{w}: handle 0v5t1 is stale: its slot is at generation 0 now"),
        ),
        (vec!["get", w, "2v0t1", "stats.luck"], format!("{w}: entity 2v0t1 has no key stats.luck")),
        (
            vec!["rm", w, "2v0t1", "stats"],
            format!(
                "{w}: entity 2v0t1 has no key stats; it has stats.health, stats.mana, stats.armor, stats.regeneration"
            ),
        ),
        (vec!["get", w, "2v0t1", "stat"], format!("{w}: entity 2v0t1 has no key stat")),
        (
            vec!["get", w, "2v0t1", "stats.helth"],
            format!("{w}: entity 2v0t1 has no key stats.helth: did you mean stats.health?"),
        ),
        (vec!["rm", w, "2v0t1", "nmae"], format!("{w}: entity 2v0t1 has no key nmae")),
        (
            vec!["rm", w, "2v0t1", "nane"],
            format!("{w}: entity 2v0t1 has no key nane: did you mean name?"),
        ),
        (
            vec!["set", w, "2v0t1", "stats", "5"],
            format!(
                "{w}: entity 2v0t1: stats is an object (it holds stats.health), so it cannot hold a value"
            ),
        ),
        (
            vec!["set", w, "2v0t1", "stats.health.max", "5"],
            format!(
                "{w}: entity 2v0t1: stats.health holds a value, so stats.health.max cannot be set under it"
            ),
        ),
        (
            vec!["set", w, "2v0t1", "stats.health", "16777217"],
            "bad value \"16777217\": 16777217 would be stored as 16777216: f32 cannot hold it"
                .into(),
        ),
        (vec!["rm", w, "2v0t1", "stats.luck"], format!("{w}: entity 2v0t1 has no key stats.luck")),
        (
            vec!["get", w, "2v0t1", ""],
            "bad key \"\": a key is a dotted path, a JSON Pointer or # and 8 hex digits".into(),
        ),
        (
            vec!["get", w, "2v0t1", "#12"],
            "bad key \"#12\": a raw key is # and 8 hex digits, as in #1a2b3c4d".into(),
        ),
        (vec!["set", w, "2v0t1", "a", "1e39"], "bad value \"1e39\": past the range of f32".into()),
        (vec!["set", w, "2v0t1", "a", "[1, x]"], "bad value \"[1, x]\": not a number".into()),
        (
            vec!["set", w, "2v0t1", "a", "yes", "--type", "bool"],
            "bad value \"yes\": a bool is true or false".into(),
        ),
    ];
    for (args, expected) in cases {
        // A command line that does not read (an id, key or value not of its form) is a usage
        // error, exit 2; a well-formed one the file says no to is exit 1.
        let usage =
            ["bad entity id", "bad key", "bad value"].iter().any(|m| expected.starts_with(m));
        let message = if usage { misused(&args) } else { fails(&args) };
        assert_eq!(message, expected, "{args:?}");
    }
    assert_eq!(world.bytes(), before, "no failed command wrote the file");
}

#[test]
fn a_name_that_collides_with_a_known_one_is_refused() {
    let world = World::new();
    let w = world.path.as_str();
    ok(&["set", w, "0v0t1", "sleep_haste_8", "1"]);
    let before = world.bytes();
    assert_eq!(
        fails(&["set", w, "0v0t1", "fury_sleep_272", "2"]),
        format!("{w}: fury_sleep_272 and sleep_haste_8 hash to the same key #316ec2d7")
    );
    assert_eq!(world.bytes(), before);
}

// ---------------------------------------------------------------------------------------------
// export, inspect

#[test]
fn export_writes_json_that_imports_back() {
    let world = World::new();
    let w = world.path.as_str();
    let all = ok(&["export", w]);
    let mut again = Store::new();
    again.import(&all, &ImportOptions::strict()).unwrap();
    let store = world.store();
    assert_eq!(again.len(), store.len());
    for ((_, a), (_, b)) in store.iter().zip(again.iter()) {
        assert_eq!(a, b);
    }
    let compact = ok(&["export", w, "--compact"]);
    assert_eq!(compact, store.export_all(&ExportOptions::json()).unwrap() + "\n");
    assert_eq!(all, store.export_all(&ExportOptions::json().pretty(true)).unwrap() + "\n");
    let out = world.file("troll.json");
    assert_eq!(ok(&["export", w, "2v0t1", "-o", &out]), "");
    let troll = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        troll,
        store.export("2v0t1".parse().unwrap(), &ExportOptions::json().pretty(true)).unwrap() + "\n"
    );
    let message = fails(&["export", w, "-o", &world.file("no/dir/x.json")]);
    assert!(message.contains(": cannot write: "), "{message}");
}

#[test]
fn inspect_shows_the_file_and_its_arena() {
    let world = World::new();
    let w = world.path.as_str();
    let text = ok(&["inspect", w]);
    let minor = datacomp::format::FORMAT_MINOR;
    let head = format!("{w}: datacomp save, format 1.{minor}, key hash 3, data version 0, ");
    assert!(text.starts_with(&head), "{text}");
    for line in [
        "     5  arena ",
        "    12  arena crcs ",
        "    13  key tree ",
        "    15  lineage ",
        "
entities: 7
",
        "
key names: 91
",
    ] {
        assert!(text.contains(line), "{line:?} in {text}");
    }
    let json: serde_json::Value = serde_json::from_str(&ok(&["inspect", w, "--json"])).unwrap();
    assert_eq!(json["format"], format!("1.{minor}"));
    assert_eq!(json["data_version"], 0);
    assert_eq!(json["entities"], 7);
    assert_eq!(json["file_bytes"], world.bytes().len());
    assert_eq!(json["sections"].as_array().unwrap().len(), 9);
    let arena = &json["arena"];
    let sum = ["live", "slack", "garbage"].iter().map(|k| arena[k].as_u64().unwrap()).sum::<u64>();
    assert_eq!(Some(sum), arena["bytes"].as_u64());
    assert_eq!(arena["bytes"].as_u64(), Some(world.store().stats().arena_bytes as u64));
}

#[test]
fn inspect_draws_an_entity_s_buffer() {
    let world = World::new();
    let w = world.path.as_str();
    // A longer name moves the blob to the arena's end, with free space to grow into.
    ok(&["set", w, "0v0t1", "name", "The One and Only, Keeper of Offsets"]);
    let text = ok(&["inspect", w, "0v0t1"]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "entity 0v0t1 \"The One and Only, Keeper of Offsets\": 5 keys, 136 bytes");
    let bar = lines.iter().find(|l| l.starts_with("  |")).expect("a diagram");
    assert!(bar.starts_with("  |HHH") && bar.contains("...") && bar.ends_with("aaa|"), "{text}");
    assert!(text.contains("  H header 56 B, . free 40 B, payload 40 B (_ holes 0 B)\n"), "{text}");
    assert!(text.contains("  a name (40 B)\n"), "{text}");

    let json: serde_json::Value =
        serde_json::from_str(&ok(&["inspect", w, "0v0t1", "--json"])).unwrap();
    let regions = json["regions"].as_array().unwrap();
    let kinds: Vec<&str> = regions.iter().map(|r| r["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["header", "free", "payload"]);
    assert_eq!(regions[2]["key"], "name");
    let total: u64 = regions.iter().map(|r| r["bytes"].as_u64().unwrap()).sum();
    assert_eq!(json["bytes"], total);
}

// ---------------------------------------------------------------------------------------------
// Bad files

#[test]
fn bad_files_get_one_line_and_exit_code_1() {
    let world = World::new();
    let bytes = world.bytes();
    let write = |name: &str, contents: &[u8]| {
        let path = world.file(name);
        std::fs::write(&path, contents).unwrap();
        path
    };
    let empty = write("empty.dcmp", b"");
    let json = write("party.json", &std::fs::read(fixtures().join("party.json")).unwrap());
    let mut flipped = bytes.clone();
    let last = flipped.len() - 1;
    flipped[last - 10] ^= 0x40;
    let flipped = write("flipped.dcmp", &flipped);
    let cut = write("cut.dcmp", &bytes[..bytes.len() / 2]);
    let missing = world.file("missing.dcmp");
    let expected = [
        (
            empty.clone(),
            format!("{empty}: file of 0 bytes ends inside the file header, which needs 32"),
        ),
        (
            json.clone(),
            format!(
                "{json}: not a datacomp save: starts with [5b, 0a, 20, 20, 20, 20, 7b, 0a], \
                 not \"DATACOMP\""
            ),
        ),
        (
            cut.clone(),
            format!("{cut}: file is {} bytes; its header says {}", bytes.len() / 2, bytes.len()),
        ),
    ];
    for (path, message) in &expected {
        for command in ["verify", "inspect", "list", "export"] {
            assert_eq!(&fails(&[command, path]), message, "{command}");
        }
        assert_eq!(&fails(&["get", path, "0v0t1", "name"]), message);
        assert_eq!(&fails(&["set", path, "0v0t1", "name", "x"]), message);
    }
    let message = fails(&["verify", &flipped]);
    // The last section is the lineage (format 1.4).
    assert!(message.starts_with(&format!("{flipped}: section 'lineage'")), "{message}");
    assert!(message.contains("crc32"), "{message}");
    let message = fails(&["verify", &missing]);
    assert!(message.starts_with(&format!("{missing}: cannot read: ")), "{message}");
    assert_eq!(std::fs::read(&cut).unwrap(), &bytes[..bytes.len() / 2], "set wrote nothing");
}

#[test]
fn every_truncation_and_sampled_corruption_fails_cleanly() {
    // A small save, so that the sweep stays quick as processes.
    let dir = TempDir::new().unwrap();
    let mut store = Store::new();
    store.insert(&[("name", "Orc")].into_iter().collect::<Blob>());
    let bytes = store.to_bytes();
    let path = dir.path().join("bad.dcmp");
    let path = path.to_str().unwrap();
    for len in (0..bytes.len()).step_by(5) {
        std::fs::write(path, &bytes[..len]).unwrap();
        fails(&["verify", path]);
        fails(&["inspect", path, "0v0t1"]);
    }
    for at in (0..bytes.len()).step_by(7) {
        let mut bad = bytes.clone();
        bad[at] ^= 0x11;
        std::fs::write(path, &bad).unwrap();
        fails(&["verify", path]);
        fails(&["get", path, "0v0t1", "name"]);
    }
}

// ---------------------------------------------------------------------------------------------
// The process

#[test]
fn usage_errors_exit_with_2() {
    for args in
        [&["frobnicate"][..], &["get"], &["set", "w.dcmp", "0v0t1", "k"], &["import", "a.json"]]
    {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("Usage: datacomp"), "{args:?}");
    }
    let help = ok(&["--help"]);
    assert!(help.contains("<index>v<generation>t<type>"), "{help}");
    for command in
        ["import", "list", "inspect", "get", "set", "rm", "export", "query", "verify", "demo"]
    {
        assert!(help.contains(&format!("\n  {command} ")), "{command} in {help}");
    }
}

#[test]
fn a_reader_that_stops_early_is_not_an_error() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("big.dcmp");
    let mut store = Store::new();
    let sheet: Blob = [("name", "A name long enough to fill a pipe quickly")].into_iter().collect();
    for _ in 0..20_000 {
        store.insert(&sheet);
    }
    store.save(&path).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_datacomp"))
        .args(["export", path.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader goes away at once, as `| head -0` would
    let out = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    assert!(out.status.success());
}

// ---------------------------------------------------------------------------------------------
// diff, apply, merge

/// The world, and two edited copies of it: `ours.dcmp` and `theirs.dcmp`.
fn three_worlds() -> (World, String, String) {
    let world = World::new();
    let (ours, theirs) = (world.file("ours.dcmp"), world.file("theirs.dcmp"));
    std::fs::copy(&world.path, &ours).unwrap();
    std::fs::copy(&world.path, &theirs).unwrap();
    ok(&["set", &ours, "0v0t1", "stats.health", "90"]);
    ok(&["set", &ours, "1v0t1", "name", "Ours"]);
    ok(&["set", &theirs, "0v0t1", "stats.mana", "7"]);
    ok(&["rm", &theirs, "0v0t1", "status_effects.drunk"]);
    ok(&["set", &theirs, "1v0t1", "name", "Theirs"]);
    ok(&["rm", &theirs, "2v0t1"]);
    (world, ours, theirs)
}

#[test]
fn diff_prints_the_changes_by_key_name_and_writes_a_delta() {
    let (world, _, theirs) = three_worlds();
    let delta = world.file("changes.delta");
    let printed = ok(&["diff", &world.path, &theirs, "-o", &delta, "--compact"]);
    assert_eq!(
        printed,
        "{\"changed\":[\
         {\"id\":\"0v0t1\",\"removed\":[\"status_effects.drunk\"],\"set\":{\"stats.mana\":7}},\
         {\"id\":\"1v0t1\",\"removed\":[],\"set\":{\"name\":\"Theirs\"}}],\
         \"inserted\":[],\"removed\":[\"2v0t1\"]}\n"
    );
    // The same as a library diff, and it turns the base into theirs.
    let verified = ok(&["verify", &delta]);
    let format = format!("format 1.{}, data version 0 -> 0", datacomp::format::FORMAT_MINOR);
    assert!(verified.contains(&format!(": ok: delta, {format}, ")), "{verified}");
    assert!(verified.contains("0 entities inserted, 2 changed"), "{verified}");
    let applied = world.file("applied.dcmp");
    let printed = ok(&["apply", &world.path, &delta, "-o", &applied]);
    assert!(
        printed.starts_with(&format!("{applied}: 6 entities (0 inserted, 2 changed")),
        "{printed}"
    );
    assert_eq!(Store::load(&applied).unwrap(), Store::load(&theirs).unwrap());
    assert_eq!(
        ok(&["diff", &applied, &theirs, "--compact"]),
        "{\"changed\":[],\"inserted\":[],\"removed\":[]}\n"
    );

    // A new entity is listed with its entries.
    let grown = world.file("grown.dcmp");
    std::fs::copy(&theirs, &grown).unwrap();
    let mut store = Store::load(&grown).unwrap();
    let id = store.insert(&[("name", "Newcomer")].into_iter().collect::<Blob>());
    store.save(&grown).unwrap();
    let printed = ok(&["diff", &theirs, &grown, "--compact"]);
    assert!(
        printed.contains(&format!(
            "\"inserted\":[{{\"entries\":{{\"name\":\"Newcomer\"}},\"id\":\"{id}\"}}]"
        )),
        "{printed}"
    );
}

#[test]
fn apply_refuses_another_base_and_the_wrong_kind_of_file() {
    let (world, ours, theirs) = three_worlds();
    let delta = world.file("changes.delta");
    ok(&["diff", &world.path, &theirs, "-o", &delta]);
    let out = world.file("out.dcmp");
    let line = fails(&["apply", &ours, &delta, "-o", &out]);
    assert!(
        line.starts_with(&format!("{delta}: the delta was made from a base with crc32 ")),
        "{line}"
    );
    assert_eq!(
        fails(&["apply", &world.path, &world.path, "-o", &out]),
        format!("{}: this is a save file, not a delta file", world.path)
    );
    assert_eq!(fails(&["list", &delta]), format!("{delta}: this is a delta file, not a save file"));
    // Cut or corrupted deltas: one line each, and nothing written.
    let bytes = std::fs::read(&delta).unwrap();
    let bad = world.file("bad.delta");
    for len in (0..bytes.len()).step_by(97) {
        std::fs::write(&bad, &bytes[..len]).unwrap();
        fails(&["apply", &world.path, &bad, "-o", &out]);
    }
    for at in (0..bytes.len()).step_by(89) {
        let mut corrupt = bytes.clone();
        corrupt[at] ^= 0x10;
        std::fs::write(&bad, &corrupt).unwrap();
        fails(&["apply", &world.path, &bad, "-o", &out]);
        fails(&["verify", &bad]);
    }
    assert!(
        fails(&["apply", &world.path, &world.file("missing"), "-o", &out]).contains("cannot read")
    );
    assert!(!Path::new(&out).exists(), "a failed apply writes nothing");
}

#[test]
fn merge_takes_both_sides_and_stops_at_conflicts() {
    let (world, ours, theirs) = three_worlds();
    let merged = world.file("merged.dcmp");
    // Both renamed 1v0t1: a conflict, and nothing is written.
    let line = fails(&["merge", &world.path, &ours, &theirs, "-o", &merged]);
    assert_eq!(
        line,
        format!(
            "{ours}: 1 conflicting key (changed differently on both sides; --prefer ours|theirs \
             picks a side): 1v0t1: name: ours \"Ours\", theirs \"Theirs\""
        )
    );
    assert!(!Path::new(&merged).exists());

    let printed = ok(&["merge", &world.path, &ours, &theirs, "-o", &merged, "--prefer", "theirs"]);
    assert_eq!(
        printed,
        format!(
            "0v0t1: merged\n1v0t1: merged\n2v0t1: removed by theirs\n\
             1v0t1: name: ours \"Ours\", theirs \"Theirs\"\n\
             {merged}: 6 entities, 1 conflicting key (theirs taken)\n"
        )
    );
    let store = Store::load(&merged).unwrap();
    let one = store.get("0v0t1".parse().unwrap()).unwrap();
    assert_eq!(one.get_float("stats.health"), Some(90.0), "ours");
    assert_eq!(one.get_float("stats.mana"), Some(7.0), "theirs");
    assert!(!one.contains_key("status_effects.drunk"), "theirs removed it");
    assert_eq!(store.get("1v0t1".parse().unwrap()).unwrap().get_str("name"), Some("Theirs"));
    assert!(!store.contains("2v0t1".parse().unwrap()));

    ok(&["merge", &world.path, &ours, &theirs, "-o", &merged, "--prefer", "ours"]);
    let store = Store::load(&merged).unwrap();
    assert_eq!(store.get("1v0t1".parse().unwrap()).unwrap().get_str("name"), Some("Ours"));
}

#[test]
fn merge_settles_a_value_one_side_added_under_a_key_the_other_did() {
    let world = World::new();
    let (ours, theirs) = (world.file("ours.dcmp"), world.file("theirs.dcmp"));
    std::fs::copy(&world.path, &ours).unwrap();
    std::fs::copy(&world.path, &theirs).unwrap();
    ok(&["set", &ours, "1v0t1", "bounty", "5"]);
    ok(&["set", &theirs, "1v0t1", "bounty.gold", "3"]);
    let merged = world.file("merged.dcmp");
    assert_eq!(
        fails(&["merge", &world.path, &ours, &theirs, "-o", &merged]),
        format!(
            "{ours}: 1 conflicting key (changed differently on both sides; --prefer ours|theirs \
             picks a side): 1v0t1: bounty: a value on one side, holds bounty.gold on the other"
        )
    );
    assert!(!Path::new(&merged).exists());
    for (side, kept, dropped) in
        [("ours", "bounty", "bounty.gold"), ("theirs", "bounty.gold", "bounty")]
    {
        let printed = ok(&["merge", &world.path, &ours, &theirs, "-o", &merged, "--prefer", side]);
        assert!(
            printed.ends_with(" 1 conflicting key (ours kept)\n") == (side == "ours"),
            "{printed}"
        );
        let store = Store::load(&merged).unwrap();
        let orc = store.get("1v0t1".parse().unwrap()).unwrap();
        assert!(orc.contains_key(kept) && !orc.contains_key(dropped), "{side}");
        // What it exports imports back.
        let exported = world.file("orc.json");
        ok(&["export", &merged, "1v0t1", "-o", &exported]);
        ok(&["import", &exported, "-o", &world.file("again.dcmp")]);
    }
}

#[test]
fn the_demo_runs_on_the_bundled_fixtures() {
    let out = ok(&[]);
    assert!(out.contains("1. Imported the bundled fixtures"), "{out}");
    assert!(out.contains("7 entities and 91 key names"), "{out}");
    assert!(out.contains("  transform.position        floats  [12.5, 0, -3.25]\n"), "{out}");
    assert!(out.contains("4. A world of 100000 entities"), "{out}");
    assert!(out.contains("the loaded world equals the saved one"), "{out}");
    // The sheet of issue 21, imported from SJSON as it is.
    assert!(out.contains("\n5. The sheet as the designers of Bitsquid and Stingray write it"));
    assert!(out.contains("\n   | color = [0 0.5 0.5 0.7]\n"), "{out}");
    assert!(out.contains("\n  color                     floats  [0, 0.5, 0.5, 0.7]\n"), "{out}");
    assert!(out.contains("writes it back: the same text."), "{out}");
    assert_eq!(ok(&["demo"]).lines().next(), out.lines().next());
}

// ---------------------------------------------------------------------------------------------
// query

#[test]
fn query_prints_the_entities_that_pass_with_the_chosen_keys() {
    let world = World::new();
    let w = world.path.as_str();
    assert_eq!(
        ok(&[
            "query",
            w,
            "stats.health <= 30 or status_effects.enraged",
            "--keys",
            "name,stats.health"
        ]),
        "id\tname\tstats.health\n1v0t1\tOrc Raider\t30\n2v0t1\tCave Troll\t140\n3v0t1\tMirabel\t20\n"
    );
    assert_eq!(ok(&["query", w, r#"name == "Cave Troll""#]), "id\n2v0t1\n");
    assert_eq!(ok(&["query", w, "has greeting and not has shop.markup"]), "id\n");
    // A missing value is `-` in text and null in JSON; keys may be pointers or hashes.
    assert_eq!(
        ok(&["query", w, "status_effects.enraged", "--keys", "/transform/scale,kind,greeting"]),
        "id\t/transform/scale\tkind\tgreeting\n2v0t1\t[2.2, 2.2, 2.2]\tmonster\t-\n"
    );
    let hash = datacomp::Key::parse("transform.scale").to_string(); // `#` and 8 hex digits
    let line =
        ok(&["query", w, "not stats.health > 20", "--keys", &format!("name,{hash}"), "--json"]);
    assert_eq!(
        line,
        format!(r#"{{"id":"3v0t1","keys":{{"{hash}":null,"name":"Mirabel"}}}}"#) + "\n"
    );
    let scale = ok(&["query", w, &format!("has {hash}"), "--keys", &hash]);
    assert_eq!(scale, format!("id\t{hash}\n2v0t1\t[2.2, 2.2, 2.2]\n6v0t1\t[1, 1, 1]\n"));
}

#[test]
fn query_refuses_a_bad_filter_key_or_file_by_name() {
    let world = World::new();
    let w = world.path.as_str();
    assert_eq!(
        misused(&["query", w, "stats.health < twenty"]),
        "query: column 16: expected a number, found 'twenty'"
    );
    let deep = "(".repeat(100_000);
    assert_eq!(
        misused(&["query", w, &deep]),
        "query: column 65: parentheses and 'not's nest deeper than 64 levels"
    );
    assert_eq!(
        misused(&["query", w, "has name", "--keys", "name,#xyz"]),
        "bad key \"#xyz\": a raw key is # and 8 hex digits, as in #1a2b3c4d"
    );
    let missing = world.file("missing.dcmp");
    assert!(
        fails(&["query", &missing, "has name"]).starts_with(&format!("{missing}: cannot read"))
    );
    let mut damaged = world.bytes();
    damaged[400] ^= 1;
    let path = world.file("damaged.dcmp");
    std::fs::write(&path, damaged).unwrap();
    assert!(fails(&["query", &path, "has name"]).contains("crc32"), "a view checks as a load does");
}

#[test]
fn query_refuses_a_key_name_the_save_does_not_know_as_that_key() {
    let world = World::new();
    let w = world.path.as_str();
    // A typo in the filter or in --keys: refused by name and place, not a silent empty result.
    assert_eq!(
        fails(&["query", w, "stats.health < 3 or has nothing.here"]),
        format!("{w}: no key named nothing.here (query column 25)")
    );
    assert_eq!(
        fails(&["query", w, "has name", "--keys", "name,stats.helth"]),
        format!("{w}: no key named stats.helth (--keys): did you mean stats.health?")
    );
    assert_eq!(
        fails(&["query", w, "has /transform/scal"]),
        format!(
            "{w}: no key named /transform/scal (query column 5): did you mean transform.scale?"
        )
    );
    // An object's path is not a key either: its members are.
    assert_eq!(
        fails(&["query", w, "has name", "--keys", "stats"]),
        format!("{w}: no key named stats (--keys)")
    );
    // A raw key is the caller's choice, known or not.
    assert_eq!(ok(&["query", w, "has #00000001", "--keys", "#00000002"]), "id\t#00000002\n");
    // A 100 KB name is cut short in the message.
    let long = "k".repeat(100_000);
    assert_eq!(
        fails(&["query", w, &long]),
        format!(
            "{w}: no key named {}[...99808 bytes cut...]{} (query column 1)",
            "k".repeat(96),
            "k".repeat(96)
        )
    );

    // Two names with one hash: the save knows `sleep_haste_8`, so `fury_sleep_272` (its key's
    // other name) would read its values, and is refused in the filter and in --keys.
    let mut store = Store::new();
    let key = store.insert_key_name("sleep_haste_8").unwrap();
    let mut sheet = Blob::new();
    sheet.set(key, 1.0).unwrap();
    let id = store.insert(&sheet);
    let path = world.file("collide.dcmp");
    store.save(&path).unwrap();
    assert_eq!(ok(&["query", &path, "sleep_haste_8 == 1"]), format!("id\n{id}\n"));
    let collision = "fury_sleep_272 and sleep_haste_8 hash to the same key #316ec2d7";
    assert_eq!(
        fails(&["query", &path, "has sleep_haste_8 or fury_sleep_272 == 1"]),
        format!("{path}: {collision} (query column 22)")
    );
    assert_eq!(
        fails(&["query", &path, "has sleep_haste_8", "--keys", "fury_sleep_272"]),
        format!("{path}: {collision} (--keys)")
    );
}

// ---------------------------------------------------------------------------------------------
// hardening: concurrent writers, privacy, the file system, hostile names

/// Two processes, 100 `set`s each of keys of their own: the lock makes each load-change-save
/// whole, so all 200 keys are there (without it, 62 of 80 survived).
#[test]
fn two_writers_lose_no_change() {
    let world = World::new();
    let writers: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|writer| {
            let path = world.path.clone();
            std::thread::spawn(move || {
                for i in 0..100 {
                    ok(&["set", &path, "0v0t1", &format!("{writer}.k{i}"), &i.to_string()]);
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    let store = world.store();
    let blob = store.get("0v0t1".parse().unwrap()).unwrap();
    for writer in ["a", "b"] {
        for i in 0..100_u8 {
            let key = format!("{writer}.k{i}");
            assert_eq!(blob.get_float(key.as_str()), Some(f32::from(i)), "{key}");
        }
    }
    let mut files: Vec<_> = std::fs::read_dir(world.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    // Every write removed its lock file as it let go: nothing but the save is left.
    assert_eq!(files, ["world.dcmp"]);
}

/// `rm` and a `set` that shrinks a value leave none of the old bytes in the file.
#[test]
fn removed_and_overwritten_bytes_do_not_reach_the_file() {
    let world = World::new();
    let has = |text: &str| world.bytes().windows(text.len()).any(|w| w == text.as_bytes());
    assert!(has("Mirabel"));
    ok(&["rm", &world.path, "3v0t1"]);
    assert!(!has("Mirabel"), "a removed entity's name");

    ok(&["set", &world.path, "1v0t1", "secret", "Hidden Treasure Map"]);
    assert!(has("Hidden Treasure Map"));
    ok(&["rm", &world.path, "1v0t1", "secret"]);
    assert!(!has("Hidden Treasure"), "a removed key's value");

    // Overwritten in place: the old tail would be left as a hole.
    ok(&["set", &world.path, "2v0t1", "name", "Cave"]);
    assert!(!has("Tro"), "an entity's old name");
    // Moved to a new block: the old one would be left whole.
    ok(&["set", &world.path, "2v0t1", "name", "A Name Longer Than The Old One"]);
    ok(&["set", &world.path, "2v0t1", "stats.health", "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"]);
    ok(&["set", &world.path, "2v0t1", "name", "X"]);
    assert!(!has("Longer"), "a renamed entity's old name");
    ok(&["verify", &world.path]);
}

/// Arrays of objects, strings, booleans, mixed values, nested and empty arrays come back as
/// arrays through `import --lenient`, `set`, `rm` and `export` (issue 16).
#[test]
fn lenient_imports_export_their_arrays_as_arrays() {
    let world = World::new();
    let sheet = world.file("owlbear.json");
    let text = r#"{"name":"Owlbear","armor_class":[{"type":"natural","value":17.5}],"senses":["darkvision","keen smell"],"mixed":[true,"two",[3.5],{"five":5.5}],"empty":[]}"#;
    std::fs::write(&sheet, text).unwrap();
    let save = world.file("owlbear.dcmp");
    ok(&["import", "--lenient", &sheet, "-o", &save]);
    assert_eq!(ok(&["export", &save, "0v0t1", "--compact"]), format!("{text}\n"));
    ok(&["set", &save, "0v0t1", "senses.2", "blindsight"]);
    ok(&["rm", &save, "0v0t1", "mixed.1"]);
    let exported = ok(&["export", &save, "0v0t1", "--compact"]);
    assert!(
        exported.contains(r#""senses":["darkvision","keen smell","blindsight"]"#),
        "{exported}"
    );
    // The removed element leaves a hole: an object keyed by index, which reads back the same.
    assert!(exported.contains(r#""mixed":{"0":true,"2":[3.5],"3":{"five":5.5}}"#), "{exported}");
    let pretty = ok(&["export", &save, "0v0t1"]);
    assert!(pretty.contains("\"armor_class\": [\n    {\n"), "{pretty}");
}

/// The names of keys that no entity holds any more leave the file too (issue 15 item 10): a
/// key's name may say as much as its value.
#[test]
fn removed_key_names_do_not_reach_the_file() {
    let world = World::new();
    let has = |text: &str| world.bytes().windows(text.len()).any(|w| w == text.as_bytes());
    ok(&["set", &world.path, "1v0t1", "plans.betray_the_king", "true"]);
    ok(&["set", &world.path, "2v0t1", "plans.betray_the_king", "false"]);
    assert!(has("betray_the_king"));
    ok(&["rm", &world.path, "1v0t1", "plans.betray_the_king"]);
    assert!(has("betray_the_king"), "entity 2v0t1 still holds it");
    ok(&["rm", &world.path, "2v0t1"]);
    assert!(!has("betray_the_king"), "no entity holds it: its name is gone");
    assert!(!has("plans"), "nor the prefix that led only to it");
    let store = world.store();
    assert_eq!(store.key_name(datacomp::Key::parse("plans.betray_the_king")), None);
    assert_eq!(store.key_name(datacomp::Key::parse("name")).as_deref(), Some("name"));
    ok(&["verify", &world.path]);
}

/// `export -o` writes through the same atomic write as saves: a symlink is kept, the file's
/// permissions are kept, and a failed export leaves the old file.
#[cfg(unix)]
#[test]
fn export_to_a_file_is_atomic() {
    use std::os::unix::fs::PermissionsExt;
    let world = World::new();
    let target = world.file("real.json");
    std::fs::write(&target, "old").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = world.file("export.json");
    std::os::unix::fs::symlink("real.json", &link).unwrap();
    ok(&["export", &world.path, "0v0t1", "-o", &link]);
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    let json = std::fs::read_to_string(&target).unwrap();
    assert!(json.contains("\"The One\""), "{json}");
    assert_eq!(std::fs::metadata(&target).unwrap().permissions().mode() & 0o777, 0o600);
    fails(&["export", &world.path, "9v0t1", "-o", &link]);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), json);
}

/// `verify` lists the temporary files a killed writer left; the next save removes them.
#[test]
fn verify_lists_stale_temporary_files() {
    let world = World::new();
    let stale = world.file("world.dcmp.tmp-4000000-3");
    std::fs::write(&stale, "half a save").unwrap();
    let verified = ok(&["verify", &world.path]);
    let lines: Vec<&str> = verified.lines().collect();
    assert_eq!(lines.len(), 2, "{verified}");
    assert_eq!(
        lines[1],
        format!(
            "{}: 1 temporary files left by an interrupted save (the next save removes them): {stale}",
            world.path
        )
    );
    ok(&["set", &world.path, "0v0t1", "stats.health", "1"]);
    assert!(!Path::new(&stale).exists());
    assert_eq!(ok(&["verify", &world.path]).lines().count(), 1);
}

/// A save named without a directory is saved in the current one (its directory is flushed
/// too: `file`'s unit tests check that `.` is the directory synced).
#[test]
fn a_bare_file_name_saves_in_the_current_directory() {
    let world = World::new();
    let out = Command::new(env!("CARGO_BIN_EXE_datacomp"))
        .args(["set", "world.dcmp", "0v0t1", "stats.health", "7"])
        .current_dir(world.dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let store = world.store();
    assert_eq!(store.get("0v0t1".parse().unwrap()).unwrap().get_float("stats.health"), Some(7.0));
}

/// Imports one JSON document into `world.dcmp` in a new directory.
fn import_one(json: &str) -> (TempDir, String) {
    let dir = TempDir::new().unwrap();
    let input = dir.path().join("in.json");
    std::fs::write(&input, json).unwrap();
    let path = dir.path().join("world.dcmp").to_str().unwrap().to_owned();
    ok(&["import", input.to_str().unwrap(), "-o", &path]);
    (dir, path)
}

/// A key name over 64 KiB used to make `get` and `inspect --entity` exit 101 ("Formatting
/// argument out of range": the key column's width came from the name).
#[test]
fn a_huge_key_name_prints() {
    let long = "x".repeat(70_000);
    let (_dir, path) = import_one(&format!("{{\"{long}\":1,\"name\":\"n\"}}"));
    let got = ok(&["get", &path, "0v0t1"]);
    // Cut as in error messages: M keys under one long prefix would print it M times.
    let shown = datacomp::text::Shortened(&long).to_string();
    assert!(got.contains(&format!("  {shown}  float   1\n")), "the name, cut: {shown}");
    let json = ok(&["get", &path, "0v0t1", "--json"]);
    assert!(json.contains(&long), "the name, whole");
    assert!(got.starts_with(&format!("  {:<40}  type    value\n", "key")), "the column capped");
    let inspected = ok(&["inspect", &path, "0v0t1"]);
    assert!(inspected.contains(&shown));
    assert_eq!(ok(&["get", &path, "0v0t1", "name"]), "n\n");
}

/// A save holding a key named by 20,000 segments (`fixtures/deep_name.dcmp`, written before
/// names had a depth limit) made `export` overflow the stack (issue 15, item 2). Past
/// `MAX_PATH_SEGMENTS` a name is exported by its hash, so that the export imports back.
#[test]
fn a_name_of_20_000_segments_exports_by_hash() {
    let deep = fixtures().join("deep_name.dcmp");
    let deep = deep.to_str().unwrap();
    ok(&["verify", deep]);
    assert_eq!(
        ok(&["export", deep, "--compact"]),
        "[{\"#de9577cc\":\"Deep\",\"#76077a0b\":1,\"stats\":{\"health\":7}}]\n"
    );
    assert_eq!(
        ok(&["export", deep, "0v0t1"]),
        "{\n  \"#de9577cc\": \"Deep\",\n  \"#76077a0b\": 1,\n  \"stats\": {\n    \"health\": \
         7\n  }\n}\n"
    );
    let path = vec!["a"; 20_000].join(".");
    assert_eq!(ok(&["get", deep, "0v0t1", &path]), "1\n");
}

/// The issue's reproduction: `set` of a path of 60,001 segments passed `verify`, then `export`
/// overflowed the stack. Now `set` refuses it, naming the count and the limit, and writes
/// nothing.
#[test]
fn set_refuses_a_path_of_60_001_segments() {
    let world = World::new();
    let before = world.bytes();
    let path = format!("{}a", "a.".repeat(60_000));
    let err = fails(&["set", &world.path, "0v0t1", &path, "1"]);
    assert!(err.starts_with(&format!("{}: key path a.a.a.", world.path)), "{err}");
    assert!(err.ends_with(" has 60001 segments, past the limit of 125"), "{err}");
    assert!(err.len() < 500, "the path is cut: {} bytes", err.len());
    assert_eq!(world.bytes(), before, "unchanged");
    ok(&["export", &world.path, "--compact"]);
}

/// Names and strings that hold terminal escape sequences are printed escaped in text output
/// (JSON output escapes them as JSON does).
#[test]
fn control_characters_are_escaped_in_text_output() {
    let evil = r"\u001b]0;pwned\u0007\u001b[2J";
    let (_dir, path) =
        import_one(&format!("{{\"name\":\"{evil}\",\"k{evil}\":\"v{evil}\",\"line\":\"a\\nb\"}}"));
    let shown = r"\u{1b}]0;pwned\u{7}\u{1b}[2J";
    let outputs = [
        ok(&["list", &path]),
        ok(&["get", &path, "0v0t1"]),
        ok(&["get", &path, "0v0t1", "name"]),
        ok(&["inspect", &path, "0v0t1"]),
        ok(&["set", &path, "0v0t1", "name", "\u{1b}[31mred"]),
        ok(&["rm", &path, "0v0t1", "k\u{1b}]0;pwned\u{7}\u{1b}[2J"]),
    ];
    for output in &outputs {
        assert!(!output.contains(['\u{1b}', '\u{7}']), "{output:?}");
    }
    assert!(outputs[0].contains(&format!("  {shown}\n")), "{}", outputs[0]);
    assert!(outputs[1].contains(&format!("k{shown}  string  v{shown}\n")), "{}", outputs[1]);
    assert!(
        outputs[1].contains("line                           string  a\\nb\n"),
        "{}",
        outputs[1]
    );
    assert_eq!(outputs[2], format!("{shown}\n"));
    assert_eq!(outputs[4], format!("0v0t1 name: {shown} -> \\u{{1b}}[31mred\n"));
    assert_eq!(outputs[5], format!("0v0t1: removed k{shown}\n"));
    // Errors too.
    let message = fails(&["get", &path, "0v0t1", "no\u{1b}[2Jsuch"]);
    assert_eq!(message, format!("{path}: entity 0v0t1 has no key no\\u{{1b}}[2Jsuch"));
    // JSON keeps the exact text.
    let json = ok(&["get", &path, "0v0t1", "name", "--json"]);
    assert!(json.contains(r#""value":"\u001b[31mred""#), "{json}");
}

/// A 20,000-byte name in an error is cut to its ends and a count: the error stays one short
/// line.
#[test]
fn long_names_are_cut_in_errors() {
    let dir = TempDir::new().unwrap();
    let long = "a".repeat(20_000);
    let input = dir.path().join("in.json");
    std::fs::write(&input, format!("{{\"{long}\": null}}")).unwrap();
    let out = dir.path().join("w.dcmp");
    let message = fails(&["import", input.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    let cut = format!("/{}[...19809 bytes cut...]{}", "a".repeat(95), "a".repeat(96));
    assert_eq!(
        message,
        format!(
            "{}: {cut} (line 1, column 20009): null is read by the lenient import only, not the strict one (--lenient keeps nulls)",
            input.display()
        )
    );

    let world = World::new();
    for (args, usage) in [
        (vec!["get", &world.path, "0v0t1", &long], false),
        (vec!["rm", &world.path, "0v0t1", &long], false),
        (vec!["set", &world.path, "0v0t1", &long, &long, "--type", "float"], true),
        (vec!["get", &world.path, &long], true),
    ] {
        let message = if usage { misused(&args) } else { fails(&args) };
        assert!(message.len() < 600, "{} bytes: {message}", message.len());
        assert!(message.contains("bytes cut...]"), "{message}");
    }
    let long_path = format!("{}/{}", world.dir.path().display(), "p".repeat(5000));
    let message = fails(&["list", &long_path]);
    assert!(message.len() < 400 && message.contains("bytes cut...]"), "{message}");
}

// ---------------------------------------------------------------------------------------------
// Key names: collisions, ambiguous names and upgrades

/// Two names with one key hash 2 value, `#316ec2d7`.
const FIRST: &str = "sleep_haste_8";
const SECOND: &str = "fury_sleep_272";

#[test]
fn get_rm_and_set_refuse_a_path_whose_hash_has_another_name() {
    let world = World::new();
    let w = world.path.as_str();
    ok(&["set", w, "0v0t1", FIRST, "1"]);
    let before = world.bytes();
    let refused = format!("{w}: {SECOND} and {FIRST} hash to the same key #316ec2d7");
    let pointer = format!("/{SECOND}");
    for args in [
        vec!["get", w, "0v0t1", SECOND],
        vec!["get", w, "0v0t1", &pointer],
        vec!["get", w, "0v0t1", SECOND, "--json"],
        vec!["rm", w, "0v0t1", SECOND],
        vec!["rm", w, "0v0t1", &pointer],
        vec!["set", w, "0v0t1", SECOND, "2"],
        vec!["set", w, "0v0t1", &pointer, "2"],
    ] {
        assert_eq!(fails(&args), refused, "{args:?}");
    }
    assert_eq!(world.bytes(), before, "nothing written");
    // The raw hash is the key itself, and the name it is shown by is the recorded one.
    assert_eq!(ok(&["get", w, "0v0t1", "#316ec2d7"]), "1\n");
    assert_eq!(ok(&["get", w, "0v0t1", &format!("/{FIRST}")]), "1\n");
    assert_eq!(ok(&["set", w, "0v0t1", "#316ec2d7", "3"]), format!("0v0t1 {FIRST}: 1 -> 3\n"));
    assert_eq!(ok(&["rm", w, "0v0t1", "#316ec2d7"]), format!("0v0t1: removed {FIRST}\n"));
}

#[test]
fn a_key_given_as_a_pointer_is_named_and_shown_apart_from_its_dotted_twin() {
    let world = World::new();
    let w = world.path.as_str();
    assert_eq!(ok(&["set", w, "4v0t1", "/a.b/c", "5"]), "4v0t1 /a.b/c: 5 (new key)\n");
    assert_eq!(ok(&["set", w, "4v0t1", "a.b.c", "6"]), "4v0t1 a.b.c: 6 (new key)\n");
    let listed = ok(&["get", w, "4v0t1"]);
    assert!(listed.contains("\n  /a.b/c  ") && listed.contains("\n  a.b.c  "), "{listed}");
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["get", w, "4v0t1", "--json"])).unwrap();
    let keys: Vec<&str> =
        json["entries"].as_array().unwrap().iter().map(|e| e["key"].as_str().unwrap()).collect();
    assert_eq!(&keys[keys.len() - 2..], ["/a.b/c", "a.b.c"]);
    let exported: serde_json::Value = serde_json::from_str(&ok(&["export", w, "4v0t1"])).unwrap();
    assert_eq!((&exported["a.b"]["c"], &exported["a"]["b"]["c"]), (&5.into(), &6.into()));
    assert_eq!(
        ok(&["get", w, "4v0t1", "/a.b/c", "--json"]),
        format!(
            "{{\"hash\":\"{}\",\"id\":\"4v0t1\",\"key\":\"/a.b/c\",\"type\":\"float\",\"value\":5}}\n",
            datacomp::Key::path(&["a.b", "c"])
        )
    );
}

/// A save of one entity imported from `json`.
fn save_json(path: &str, json: &str) {
    let mut store = Store::new();
    store.import(json, &ImportOptions::strict()).unwrap();
    store.save(path).unwrap();
}

#[test]
fn diff_and_get_show_names_that_differ_only_in_their_dots_apart() {
    let world = World::new();
    let (base, target) = (world.file("base.dcmp"), world.file("target.dcmp"));
    save_json(&base, r#"{"a.b": 1, "a": {"b": 2}}"#);
    save_json(&target, r#"{"a.b": 1, "a": {"b": 2}}"#);
    ok(&["set", &target, "0v0t1", "/a.b", "10"]);
    ok(&["set", &target, "0v0t1", "a.b", "20"]);
    assert_eq!(
        ok(&["diff", &base, &target, "--compact"]),
        "{\"changed\":[{\"id\":\"0v0t1\",\"removed\":[],\"set\":{\"/a.b\":10,\"a.b\":20}}],\
         \"inserted\":[],\"removed\":[]}\n",
        "both changes, each by its own name"
    );
    let rows: Vec<Vec<String>> = ok(&["get", &target, "0v0t1"])
        .lines()
        .map(|line| line.split_whitespace().map(str::to_owned).collect())
        .collect();
    assert_eq!(rows, [["key", "type", "value"], ["/a.b", "float", "10"], ["a.b", "float", "20"]]);
    assert_eq!(ok(&["rm", &target, "0v0t1", "/a.b"]), "0v0t1: removed /a.b\n");
}

#[test]
fn merge_keeps_names_with_dots_and_refuses_one_hash_under_two_names() {
    let world = World::new();
    let [base, ours, theirs, merged] =
        ["base.dcmp", "ours.dcmp", "theirs.dcmp", "merged.dcmp"].map(|f| world.file(f));
    save_json(&base, r#"{"x": 1}"#);
    std::fs::copy(&base, &ours).unwrap();
    let mut store = Store::load(&base).unwrap();
    store.import(r#"{"x": 1, "a.b": 5}"#, &ImportOptions::strict()).unwrap();
    store.save(&theirs).unwrap();
    let printed = ok(&["merge", &base, &ours, &theirs, "-o", &merged]);
    assert!(printed.contains("1v0t1: inserted by theirs, as 1v0t1"), "{printed}");
    assert_eq!(ok(&["export", &merged, "1v0t1", "--compact"]), "{\"x\":1,\"a.b\":5}\n");

    // Theirs named the hash of ours' key otherwise: a conflict, nothing written.
    std::fs::remove_file(&merged).unwrap();
    ok(&["set", &ours, "0v0t1", FIRST, "1"]);
    let mut store = Store::load(&base).unwrap();
    store.get_mut("0v0t1".parse().unwrap()).unwrap().set(SECOND, 2).unwrap();
    store.save(&theirs).unwrap();
    assert_eq!(
        fails(&["merge", &base, &ours, &theirs, "-o", &merged]),
        format!("{theirs}: {SECOND} and {FIRST} hash to the same key #316ec2d7")
    );
    assert!(!Path::new(&merged).exists());
}

#[test]
fn upgrade_rehashes_a_key_hash_1_save_with_the_keys_it_is_given() {
    let world = World::new();
    let (old, new, keys) = (world.file("old.dcmp"), world.file("new.dcmp"), world.file("keys"));
    std::fs::copy(fixtures().join("world_v1.dcmp"), &old).unwrap();
    let refused = fails(&["upgrade", &old, "-o", &new]);
    assert!(
        refused.starts_with(&format!(
            "{old}: save uses key hash 1, and 8 keys have no name in it to rehash them from: \
             #01140106 (entity 0v0t1), "
        )) && refused
            .ends_with("give their paths as known keys (with --known-keys FILE, one path a line)"),
        "{refused}"
    );
    std::fs::write(&keys, "name\nstats.health\r\nstats.mana\n\nstatus_effects.drunk\n").unwrap();
    let refused = fails(&["upgrade", &old, "-o", &new, "--known-keys", &keys]);
    assert!(refused.contains("and 4 keys have no name") && refused.contains("(entity 1v0t1)"));
    assert!(!Path::new(&new).exists(), "nothing written");

    std::fs::write(
        &keys,
        "name\nstats.health\r\nstats.mana\n\nstatus_effects.drunk\nstatus_effects.delirious\n\
         position\ncolor\nbio\nnot.in.the.save\n",
    )
    .unwrap();
    let printed = ok(&["upgrade", &old, "-o", &new, "--known-keys", &keys]);
    assert!(
        printed.starts_with(&format!("{new}: key hash 1 -> 3, 2 entities, 8 key names, ")),
        "{printed}"
    );
    assert_eq!(ok(&["get", &new, "0v0t1", "stats.health"]), "100\n");
    assert_eq!(ok(&["get", &new, "1v0t1", "bio"]), "Keeper of offsets, breaker of pointers.\n");
    assert!(ok(&["inspect", &new]).contains("key hash 3"));
    ok(&["verify", &new]);
    // Upgraded once, it needs no keys again, and a save of key hash 3 passes unchanged.
    let again = world.file("again.dcmp");
    ok(&["upgrade", &new, "-o", &again]);
    assert_eq!(std::fs::read(&again).unwrap(), std::fs::read(&new).unwrap());
    assert!(
        fails(&["upgrade", &old, "-o", &new, "--known-keys", &world.file("missing")])
            .contains("cannot read")
    );
}

// ---------------------------------------------------------------------------------------------
// SJSON

#[test]
fn import_reads_sjson_files_and_directories() {
    let world = World::new();
    let out = world.file("one.dcmp");
    let sheet = fixtures().join("sjson/the_one.sjson");
    let summary = ok(&["import", sheet.to_str().unwrap(), "-o", &out]);
    assert!(summary.starts_with("imported 1 entity from 1 SJSON document ("), "{summary}");
    assert_eq!(ok(&["get", &out, "0v0t1", "color"]), "[0, 0.5, 0.5, 0.7]\n");
    assert_eq!(ok(&["get", &out, "0v0t1", "stats.mana"]), "200\n");
    assert_eq!(ok(&["get", &out, "0v0t1", "status_effects.delirious"]), "true\n");

    // A directory: *.json as JSON, *.sjson as SJSON, anything else left alone.
    let dir = world.file("sheets");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(world.file("sheets/a.json"), r#"{"name": "Orc"}"#).unwrap();
    std::fs::write(world.file("sheets/b.sjson"), "name = \"Troll\" // big\n").unwrap();
    std::fs::write(world.file("sheets/c.txt"), "not a sheet").unwrap();
    let summary = ok(&["import", &dir, "-o", &out]);
    assert!(
        summary.starts_with("imported 2 entities from 2 documents, 1 JSON and 1 SJSON ("),
        "{summary}"
    );
    assert_eq!(ok(&["get", &out, "1v0t1", "name"]), "Troll\n");

    // --format overrides the names: SJSON in a .txt file, and a .sjson file read as JSON.
    std::fs::write(world.file("sheets/c.txt"), "a = [1 2]").unwrap();
    ok(&["import", "--format", "sjson", &world.file("sheets/c.txt"), "-o", &out]);
    assert_eq!(ok(&["get", &out, "0v0t1", "a"]), "[1, 2]\n");
    let b = world.file("sheets/b.sjson");
    assert_eq!(
        fails(&["import", "--format", "json", &b, "-o", &out]),
        format!("{b}: / (line 1, column 2): expected ident")
    );

    // Bad SJSON names the file, the path and the line and column; nothing is written.
    let invalid = fixtures().join("sjson");
    let before = std::fs::read(&out).unwrap();
    let first = invalid.join("invalid/duplicate_path.sjson");
    assert_eq!(
        fails(&["import", invalid.to_str().unwrap(), "-o", &out]),
        format!(
            "{}: /stats (line 2, column 9): stats is set twice; 10 files after it not read (--keep-going \
             imports what reads)",
            first.display()
        )
    );
    let unclosed = invalid.join("invalid/unclosed_object.sjson");
    assert_eq!(
        fails(&["import", unclosed.to_str().unwrap(), "-o", &out]),
        format!(
            "{}: /stats (line 2, column 9): unclosed object: this `{{` has no matching `}}`",
            unclosed.display()
        )
    );
    assert_eq!(std::fs::read(&out).unwrap(), before);
}

#[test]
fn export_writes_sjson_that_imports_back() {
    let world = World::new();
    let w = world.path.as_str();
    let store = world.store();
    let all = ok(&["export", w, "--format", "sjson"]);
    assert_eq!(all, store.export_all(&ExportOptions::sjson()).unwrap() + "\n");
    let mut again = Store::new();
    again.import(&all, &ImportOptions::strict().format(TextFormat::Sjson)).unwrap();
    assert_eq!(again.len(), store.len());
    for ((_, a), (_, b)) in store.iter().zip(again.iter()) {
        assert_eq!(a, b);
    }

    let out = world.file("troll.sjson");
    assert_eq!(ok(&["export", w, "2v0t1", "--format", "sjson", "-o", &out]), "");
    let troll = std::fs::read_to_string(&out).unwrap();
    // The format follows the output's name, as import's does its input's; --format overrides.
    std::fs::remove_file(&out).unwrap();
    assert_eq!(ok(&["export", w, "2v0t1", "-o", &out]), "");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), troll);
    let as_json = world.file("troll_json.sjson");
    ok(&["export", w, "2v0t1", "-o", &as_json, "--format", "json"]);
    assert!(
        std::fs::read_to_string(&as_json).unwrap().starts_with("{\n  \"name\": \"Cave Troll\"")
    );
    assert_eq!(
        troll,
        store.export("2v0t1".parse().unwrap(), &ExportOptions::sjson()).unwrap() + "\n"
    );
    assert!(troll.starts_with("name = \"Cave Troll\"\nkind = \"monster\"\nstats = {\n"), "{troll}");
    assert!(troll.contains("\n    scale = [2.2 2.2 2.2]\n"), "{troll}");
    // The exported file imports by its name.
    let copy = world.file("troll.dcmp");
    ok(&["import", &out, "-o", &copy]);
    assert_eq!(ok(&["get", &copy, "0v0t1", "transform.position"]), "[12, 0, -40.5]\n");

    assert_eq!(
        misused(&["export", w, "--compact", "--format", "sjson"]),
        "--compact is for JSON: SJSON is written one member a line"
    );
    assert_eq!(
        ok(&["export", w, "--format", "json", "--compact"]),
        store.export_all(&ExportOptions::json()).unwrap() + "\n"
    );
}

/// The names of the files in `dir`, sorted.
fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

/// Attack: a command that fails on a missing or bad input leaves no file behind, not even a
/// lock file: a typo (`datacomp set wrld.dcmp ...`) left `wrld.dcmp.lock`, and so did every
/// merge, apply, upgrade and diff -o whose input was missing or damaged.
#[test]
fn a_failed_command_leaves_no_lock_file_behind() {
    let world = World::new();
    let (missing, out, bad) = (world.file("wrld.dcmp"), world.file("out.dcmp"), world.file("bad"));
    std::fs::write(&bad, b"DATACOMP but not a save").unwrap();
    let path = world.path.as_str();
    for args in [
        &["set", &missing, "0v0t1", "x", "1"][..],
        &["rm", &missing, "0v0t1"],
        &["merge", path, path, &missing, "-o", &out],
        &["merge", path, &bad, path, "-o", &out],
        &["apply", path, &missing, "-o", &out],
        &["apply", path, &bad, "-o", &out],
        &["upgrade", &missing, "-o", &out],
        &["upgrade", &bad, "-o", &out],
        &["upgrade", path, "-o", &out, "--known-keys", &missing],
        &["diff", path, &missing, "-o", &out],
        &["diff", &bad, path, "-o", &out],
    ] {
        fails(args);
        assert_eq!(file_names(world.dir.path()), ["bad", "world.dcmp"], "{args:?}");
    }
    // Upgrading in place still locks from the read to the write.
    ok(&["upgrade", path, "-o", path]);
    ok(&["merge", path, path, path, "-o", &out]);
    assert_eq!(file_names(world.dir.path()), ["bad", "out.dcmp", "world.dcmp"]);
}

/// Attack: a --keys file with one byte that is not UTF-8 among a million good lines was
/// refused as "stream did not contain valid UTF-8", with no line to look at.
#[test]
fn upgrade_names_the_line_of_a_keys_file_that_is_not_utf8() {
    let world = World::new();
    let (old, new, keys) = (world.file("old.dcmp"), world.file("new.dcmp"), world.file("keys"));
    std::fs::copy(fixtures().join("world_v1.dcmp"), &old).unwrap();
    std::fs::write(&keys, b"name\nstats.health\nstats.mana\ncaf\xe9\nbio\n").unwrap();
    assert_eq!(
        fails(&["upgrade", &old, "-o", &new, "--known-keys", &keys]),
        format!("{keys}: line 4 is not UTF-8 (byte offset 32)")
    );
    assert!(!Path::new(&new).exists());
}

/// Attack: two saves that name one hash differently (`sleep_haste_8` in one,
/// `fury_sleep_272` in the other, with one value) diffed as "no change", and with two values
/// as a change of the second name only: the first name vanished from the report. Like
/// `merge`, `diff` refuses one hash under two names.
#[test]
fn diff_refuses_one_hash_under_two_names() {
    let world = World::new();
    let (base, target) = (world.file("base.dcmp"), world.file("target.dcmp"));
    save_json(&base, &format!(r#"{{"{FIRST}": 1}}"#));
    save_json(&target, &format!(r#"{{"{SECOND}": 1}}"#));
    let refused = format!("{target}: {SECOND} and {FIRST} hash to the same key #316ec2d7");
    assert_eq!(fails(&["diff", &base, &target]), refused);
    save_json(&target, &format!(r#"{{"{SECOND}": 2}}"#));
    assert_eq!(fails(&["diff", &base, &target, "-o", &world.file("d.delta")]), refused);
    assert!(!Path::new(&world.file("d.delta")).exists());
    // One name on one side only is no conflict.
    save_json(&target, r#"{"x": 2}"#);
    let mut store = Store::load(&target).unwrap();
    store.get_mut("0v0t1".parse().unwrap()).unwrap().set(datacomp::Key::parse(FIRST), 2).unwrap();
    store.save(&target).unwrap();
    assert!(ok(&["diff", &base, &target, "--compact"]).contains(&format!("\"{FIRST}\":2")));
}

/// Attack: a key hash 1 save whose keys have no names made every command but `upgrade` fail
/// with "give their paths as known keys", which none of them can take.
#[test]
fn commands_that_cannot_rehash_an_old_save_point_at_upgrade() {
    let old = fixtures().join("world_v1.dcmp");
    let old = old.to_str().unwrap();
    let hint =
        "; give their paths as known keys (with datacomp upgrade OLD -o NEW --known-keys FILE)";
    for args in [
        &["verify", old][..],
        &["list", old],
        &["inspect", old],
        &["get", old, "0v0t1"],
        &["export", old],
    ] {
        let message = fails(args);
        assert!(message.starts_with(&format!("{old}: save uses key hash 1")), "{message}");
        assert!(message.ends_with(hint), "{args:?}: {message}");
    }
}

/// Attack: a save named by someone else (`mods/<ESC>]0;pwned<BEL>.dcmp`) drove the terminal
/// of whoever ran `datacomp verify mods/*`: summaries printed file names raw, though errors
/// escaped them.
#[test]
fn file_names_are_escaped_in_summaries() {
    let world = World::new();
    let hostile = world.file("w\u{1b}]0;pwned\u{7}.dcmp");
    let other = world.file("o\u{1b}[2J.dcmp");
    let delta = world.file("d\u{1b}[2J.delta");
    let shown = |path: &str| path.replace('\u{1b}', r"\u{1b}").replace('\u{7}', r"\u{7}");
    let classic = fixtures().join("sheets/classic.json");
    for (args, path) in [
        (vec!["import", classic.to_str().unwrap(), "-o", &hostile], &hostile),
        (vec!["verify", &hostile], &hostile),
        (vec!["inspect", &hostile], &hostile),
        (vec!["upgrade", &hostile, "-o", &other], &other),
        (vec!["diff", &world.path, &hostile, "-o", &delta], &delta),
        (vec!["verify", &delta], &delta),
        (vec!["apply", &world.path, &delta, "-o", &other], &other),
        (vec!["merge", &hostile, &hostile, &hostile, "-o", &other], &other),
    ] {
        let printed = ok(&args);
        assert!(!printed.contains(['\u{1b}', '\u{7}']), "{args:?}: {printed:?}");
        assert!(printed.contains(&shown(path)) || args[0] == "diff", "{args:?}: {printed:?}");
    }
    std::fs::write(format!("{hostile}.tmp-1-2"), b"left by a killed writer").unwrap();
    let printed = ok(&["verify", &hostile]);
    assert!(!printed.contains(['\u{1b}', '\u{7}']), "{printed:?}");
    assert!(printed.contains(&shown(&format!("{hostile}.tmp-1-2"))), "{printed:?}");
}

// ---------------------------------------------------------------------------------------------
// The round-trip corpus (issue 16), through the command

#[path = "../../tests/common/corpus.rs"]
mod corpus;

use corpus::J;

/// Writes each document to its own file, pretty, and returns the files in order with every
/// entity they hold.
fn corpus_files(dir: &Path, documents: &[(&str, J)]) -> (Vec<String>, Vec<J>) {
    let mut files = Vec::new();
    let mut entities = Vec::new();
    for (name, doc) in documents {
        let path = dir.join(format!("{name}.json"));
        let text = match doc {
            J::Arr(items) => J::pretty_all(items),
            other => other.pretty(0),
        };
        std::fs::write(&path, text).unwrap();
        files.push(path.to_str().unwrap().to_owned());
        entities.extend(doc.entities());
    }
    (files, entities)
}

#[test]
fn the_corpus_round_trips_through_the_command() {
    let dir = TempDir::new().unwrap();
    let (files, entities) = corpus_files(dir.path(), &corpus::documents());
    let w = dir.path().join("w.dcmp");
    let w = w.to_str().unwrap();
    for lenient in [false, true] {
        let mut args = vec!["import"];
        if lenient {
            args.push("--lenient");
        }
        args.extend(files.iter().map(String::as_str));
        args.extend(["-o", w]);
        let summary = ok(&args);
        if lenient {
            assert!(summary.contains(" 0 numbers rounded\n"), "{summary}");
        }
        let exported = ok(&["export", w]);
        assert!(exported == J::pretty_all(&entities) + "\n", "pretty export differs");
        let compact = ok(&["export", w, "--compact"]);
        assert!(compact == J::Arr(entities.clone()).compact() + "\n", "compact export differs");
    }
    // One entity, a value changed and changed back, an object's keys: as written.
    let last = format!("{}v0t1", entities.len() - 1);
    assert_eq!(ok(&["export", w, &last]), entities[entities.len() - 1].pretty(0) + "\n");
    let monster = "7v0t1";
    let J::Obj(members) = &entities[7] else { panic!("an object") };
    let abilities = &members.iter().find(|(m, _)| m == "abilities").unwrap().1;
    assert_eq!(ok(&["get", w, monster, "abilities"]), abilities.pretty(0) + "\n");
    let hp = ok(&["get", w, monster, "hit_points"]);
    ok(&["set", w, monster, "hit_points", "0.5"]);
    ok(&["set", w, monster, "hit_points", hp.trim()]);
    assert_eq!(ok(&["export", w, monster]), entities[7].pretty(0) + "\n");
}

#[test]
fn documents_with_arrays_of_every_kind_round_trip_through_the_command() {
    let dir = TempDir::new().unwrap();
    let (files, entities) = corpus_files(dir.path(), &corpus::array_documents());
    let w = dir.path().join("w.dcmp");
    let w = w.to_str().unwrap();
    let mut args = vec!["import", "--lenient"];
    args.extend(files.iter().map(String::as_str));
    args.extend(["-o", w]);
    ok(&args);
    assert_eq!(ok(&["export", w, "--compact"]), J::Arr(entities).compact() + "\n");
}

#[test]
fn apply_of_an_autosave_chain_and_of_a_broken_one() {
    let world = World::new();
    let now = world.file("now.dcmp");
    std::fs::copy(&world.path, &now).unwrap();
    // Three autosaves, each the next link: a delta from what the base and the links before
    // it give.
    let mut chain: Vec<String> = Vec::new();
    for (i, id) in ["0v0t1", "1v0t1", "2v0t1"].into_iter().enumerate() {
        ok(&["set", &now, id, "stats.health", &format!("{}", 90 - i)]);
        let link = world.file(&format!("autosave{i}.delta"));
        let mut args = vec!["diff", &world.path, &now, "-o", &link, "--compact"];
        if !chain.is_empty() {
            args.push("--chain");
            args.extend(chain.iter().map(String::as_str));
        }
        let printed = ok(&args);
        // Each link holds only the change since the one before.
        assert!(printed.starts_with(&format!("{{\"changed\":[{{\"id\":\"{id}\"")), "{printed}");
        assert!(!printed.contains("},{"), "one entity changed: {printed}");
        chain.push(link);
    }
    let out = world.file("out.dcmp");
    let links: Vec<&str> = chain.iter().map(String::as_str).collect();
    let mut args = vec!["apply", &world.path];
    args.extend(&links);
    args.extend(["-o", &out]);
    let printed = ok(&args);
    assert!(
        printed.starts_with(&format!("{out}: 7 entities (0 inserted, 3 changed by 3 deltas), ")),
        "{printed}"
    );
    assert_eq!(Store::load(&out).unwrap(), Store::load(&now).unwrap());
    std::fs::remove_file(&out).unwrap();

    // A link left out, or two swapped: refused, naming the link, and nothing is written.
    let line = fails(&["apply", &world.path, links[0], links[2], "-o", &out]);
    assert!(
        line.starts_with(&format!(
            "{}: delta 2 of 2 in the chain: the delta was made from a base with crc32 ",
            links[2]
        )),
        "{line}"
    );
    assert!(line.ends_with(&format!("; it was not made from what {} gives (a link is missing or out of order, or the base changed)", links[0])), "{line}");
    let line = fails(&["apply", &world.path, links[1], links[0], "-o", &out]);
    assert!(line.starts_with(&format!("{}: delta 1 of 2 in the chain: ", links[1])), "{line}");
    assert!(line.contains("; it was not made from the base ("), "{line}");
    // The base changed under the chain.
    ok(&["set", &world.path, "5v0t1", "stats.health", "1"]);
    let mut args = vec!["apply", &world.path];
    args.extend(&links);
    args.extend(["-o", &out]);
    assert!(fails(&args).starts_with(&format!("{}: delta 1 of 3 in the chain: ", links[0])));
    // A chain past the limit is refused before anything is read.
    let mut args = vec!["apply", &world.path];
    args.extend(std::iter::repeat_n(links[0], 1025));
    args.extend(["-o", &out]);
    assert_eq!(
        fails(&args),
        format!(
            "{}: a chain holds at most 1024 deltas, and this one has 1025: apply it in parts \
             (the first 1024 to a new save, then the rest to that)",
            links[0]
        )
    );
    assert!(!Path::new(&out).exists(), "a failed apply writes nothing");
}

#[test]
fn apply_takes_a_chain_the_library_wrote_with_take_delta() {
    let world = World::new();
    let mut store = world.store();
    let mut mark = store.mark();
    let ids: Vec<_> = store.iter().map(|(id, _)| id).collect();
    let mut links = Vec::new();
    for (turn, &id) in ids.iter().enumerate() {
        store.get_mut(id).unwrap().set("stats.health", turn as f32).unwrap();
        if turn == 2 {
            store.remove(ids[0]);
        }
        let link = world.file(&format!("turn{turn}.delta"));
        mark.take_delta(&store).save(&link).unwrap();
        links.push(link);
    }
    let out = world.file("out.dcmp");
    let mut args = vec!["apply", &world.path];
    args.extend(links.iter().map(String::as_str));
    args.extend(["-o", &out]);
    ok(&args);
    assert_eq!(Store::load(&out).unwrap(), store);
}

// ---------------------------------------------------------------------------------------------
// migrate

#[test]
fn migrate_reports_writes_in_place_or_elsewhere_and_a_dry_run_writes_nothing() {
    let world = World::new();
    let (file, other) = (world.file("old.dcmp"), world.file("new.dcmp"));
    std::fs::copy(fixtures().join("world_data0.dcmp"), &file).unwrap();
    let with = fixtures().join("migrations_v3.json");
    let with = with.to_str().unwrap();
    let report = "data version 0 -> 3\n  steps[0] (to 2): 2 entities changed: 5 keys renamed\n  \
                  steps[1] (to 3): 4 entities changed: 3 keys removed, 6 defaulted, 4 set\n";

    let before = std::fs::read(&file).unwrap();
    let dry = ok(&["migrate", &file, "--with", with, "--dry-run"]);
    assert_eq!(dry, format!("{file}: {report}dry run: nothing written\n"));
    assert_eq!(std::fs::read(&file).unwrap(), before);

    let printed = ok(&["migrate", &file, "--with", with, "-o", &other]);
    assert!(
        printed.starts_with(&format!(
            "{file}: {report}{other}: written: data version 3, 4 entities, "
        )),
        "{printed}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), before, "-o leaves FILE as it was");
    assert_eq!(ok(&["get", &other, "0v0t1", "stats.health"]), "100\n");
    assert_eq!(ok(&["get", &other, "1v0t1", "items.club"]), "1\n");
    assert!(ok(&["inspect", &other]).contains(", data version 3, "));
    ok(&["verify", &other]);

    let printed = ok(&["migrate", &file, "--with", with]);
    assert!(printed.contains(&format!("{file}: written: data version 3, ")), "{printed}");
    assert_eq!(Store::load(&file).unwrap(), Store::load(&other).unwrap());
    // Migrating again: already there, nothing written.
    let written = std::fs::read(&file).unwrap();
    let again = ok(&["migrate", &file, "--with", with]);
    assert_eq!(
        again,
        format!(
            "{file}: data version 3 -> 3\n{file}: already at data version 3: nothing written\n"
        )
    );
    assert_eq!(std::fs::read(&file).unwrap(), written);

    assert!(
        run(&["migrate", &file, "--with", with, "--dry-run", "-o", &other]).status.code()
            == Some(2)
    );
}

#[test]
fn migrate_fails_naming_the_file_step_entity_and_key_and_writes_nothing() {
    let world = World::new();
    let w = world.path.as_str();
    let before = world.bytes();
    let with = world.file("m.json");

    std::fs::write(&with, r#"{"version": 2, "steps": [{"to": 2, "renmae": {}}]}"#).unwrap();
    assert_eq!(
        fails(&["migrate", w, "--with", &with]),
        format!(
            "{with}: migrations, line 1 column 43, steps[0]: unknown field \"renmae\"; a step \
             has to, rename, remove, default and set"
        )
    );
    // The party's The One (0v0t1) holds stats.health: a default of stats is an object's path.
    std::fs::write(&with, r#"{"version": 2, "steps": [{"to": 2, "default": {"stats": 1}}]}"#)
        .unwrap();
    assert_eq!(
        fails(&["migrate", w, "--with", &with]),
        format!(
            "{w}: steps[0] (to 2), entity 0v0t1: default stats would make a value of an object: \
             the entity holds stats.health"
        )
    );
    std::fs::write(
        &with,
        r#"{"version": 2, "steps": [{"to": 2, "rename": {"name": "stats.health"}}]}"#,
    )
    .unwrap();
    assert_eq!(
        fails(&["migrate", w, "--with", &with]),
        format!(
            "{w}: steps[0] (to 2), entity 0v0t1: renaming name onto stats.health, which the entity holds"
        )
    );
    let missing = world.file("missing.json");
    assert!(
        fails(&["migrate", w, "--with", &missing])
            .starts_with(&format!("{missing}: cannot read: "))
    );
    assert_eq!(world.bytes(), before, "nothing written");

    // A store past the migrations' version.
    std::fs::write(&with, r#"{"version": 1, "steps": []}"#).unwrap();
    ok(&["migrate", w, "--with", &with]);
    std::fs::write(&with, r#"{"version": 0, "steps": []}"#).unwrap();
    assert_eq!(
        fails(&["migrate", w, "--with", &with]),
        format!(
            "{w}: the store is at data version 1, past the migrations' version 0: it was written \
             by a newer version of the game"
        )
    );
}

#[test]
fn a_delta_applies_only_to_a_base_of_its_data_version() {
    let world = World::new();
    let w = world.path.as_str();
    let (base, delta) = (world.file("base.dcmp"), world.file("d.delta"));
    std::fs::copy(w, &base).unwrap();
    ok(&["set", w, "0v0t1", "stats.health", "5"]);
    ok(&["diff", &base, w, "-o", &delta]);
    assert!(ok(&["verify", &delta]).contains("data version 0 -> 0"));
    let with = world.file("m.json");
    std::fs::write(&with, r#"{"version": 1, "steps": []}"#).unwrap();
    ok(&["migrate", &base, "--with", &with]);
    let out = world.file("out.dcmp");
    assert_eq!(
        fails(&["apply", &base, &delta, "-o", &out]),
        format!(
            "{delta}: the delta was made from a base of data version 0, not this store's 1: \
             apply it before migrating, or make it from the migrated base"
        )
    );
    assert!(!Path::new(&out).exists());
}

#[test]
fn merge_refuses_files_of_different_data_versions() {
    let world = World::new();
    let w = world.path.as_str();
    let (ours, theirs, out) =
        (world.file("ours.dcmp"), world.file("theirs.dcmp"), world.file("m.dcmp"));
    std::fs::copy(w, &ours).unwrap();
    std::fs::copy(w, &theirs).unwrap();
    let with = world.file("m.json");
    std::fs::write(&with, r#"{"version": 2, "steps": []}"#).unwrap();
    ok(&["migrate", &ours, "--with", &with]);
    assert_eq!(
        fails(&["merge", w, &ours, &theirs, "-o", &out]),
        format!(
            "{ours}: data versions differ: base 0, ours 2, theirs 0: migrate all three to one \
             version first"
        )
    );
    assert!(!Path::new(&out).exists());
    ok(&["migrate", w, "--with", &with]);
    ok(&["migrate", &theirs, "--with", &with]);
    ok(&["merge", w, &ours, &theirs, "-o", &out]);
    assert!(ok(&["inspect", &out]).contains(", data version 2, "));
}

#[test]
fn verify_salvage_writes_what_checks_out_and_lists_the_rest() {
    let world = World::new();
    let w = world.path.as_str();
    let store = world.store();
    let mut bytes = world.bytes();
    // The arena's first byte: the first entity's key count, in chunk 0 with every entity.
    let table: Vec<(u32, usize)> = (0..usize::from(bytes[14]))
        .map(|i| {
            let at = 32 + 24 * i;
            let kind = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
            (
                kind,
                usize::try_from(u64::from_le_bytes(bytes[at + 8..at + 16].try_into().unwrap()))
                    .unwrap(),
            )
        })
        .collect();
    let arena = table.iter().find(|(kind, _)| *kind == 5).unwrap().1;
    bytes[arena] ^= 1;
    std::fs::write(w, &bytes).unwrap();
    let err = fails(&["verify", w]);
    assert!(err.contains("arena chunk 0 at byte"), "{err}");

    let repaired = world.file("repaired.dcmp");
    // A salvage that lost entities (here all of them) writes what it kept, reports, and fails.
    let salvaged = run(&["verify", w, "--salvage", "-o", &repaired]);
    assert_eq!(salvaged.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(salvaged.stderr).unwrap(),
        format!("datacomp: {w}: salvage kept no entity: {repaired} holds only what checked out\n")
    );
    let text = String::from_utf8(salvaged.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], format!("{w}: salvaged 0 entities into {repaired}; lost {}", store.len()));
    // The entities of the one damaged chunk, as one run of consecutive handles.
    let n = store.len();
    assert_eq!(lines.len(), 2, "{text}");
    let expected = format!("  lost 0v0t1..{}v0t1 ({n}): arena chunk 0 at byte ", n - 1);
    assert!(lines[1].starts_with(&expected), "{text}");
    let json = run(&["verify", w, "--salvage", "-o", &repaired, "--json"]);
    assert_eq!(json.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!((json["kept"].clone(), json["lost_count"].clone()), (0.into(), n.into()));
    let lost = &json["lost"];
    assert_eq!(lost.as_array().map(Vec::len), Some(1), "{json}");
    assert_eq!(lost[0]["first"], "0v0t1");
    assert_eq!(lost[0]["last"], format!("{}v0t1", n - 1));
    assert_eq!(lost[0]["count"], n);
    assert!(lost[0]["why"].as_str().unwrap().starts_with("arena chunk 0 at byte "), "{json}");
    let verified = ok(&["verify", &repaired]);
    // (Every CLI write compacts, which drops the names no entity holds any more.)
    assert!(verified.contains(", 0 entities, 0 key names"), "{verified}");

    // An undamaged save salvages whole.
    std::fs::write(w, store.to_bytes()).unwrap();
    let text = ok(&["verify", w, "--salvage", "-o", &repaired]);
    assert_eq!(text, format!("{w}: salvaged {} entities into {repaired}; lost 0\n", store.len()));
    assert!(std::fs::read(&repaired).is_ok_and(|b| Store::from_bytes(&b).unwrap() == store));
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["verify", w, "--salvage", "-o", &repaired, "--json"])).unwrap();
    assert_eq!(json["kept"], 7);
    assert_eq!(json["lost"], serde_json::json!([]));
    assert_eq!(json["lost_count"], 0);

    // One entity lost of two: exit 1 as well. The small one fills the arena's first 64 KiB
    // chunk, the large one runs on into the second, whose checksum a flipped byte breaks.
    let mut two = Store::new();
    two.insert_entries([("name", "small")]).unwrap();
    two.insert_entries([("name", "x".repeat(100_000).as_str())]).unwrap();
    let mut bytes = two.to_bytes();
    let arena = (0..usize::from(bytes[14]))
        .map(|i| 32 + 24 * i)
        .find(|&at| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) == 5)
        .map(|at| u64::from_le_bytes(bytes[at + 8..at + 16].try_into().unwrap()))
        .unwrap();
    bytes[usize::try_from(arena).unwrap() + 70_000] ^= 1;
    let salvage = Store::salvage(&bytes).unwrap();
    assert_eq!((salvage.store.len(), salvage.lost.len()), (1, 1));
    std::fs::write(w, &bytes).unwrap();
    let salvaged = run(&["verify", w, "--salvage", "-o", &repaired]);
    assert_eq!(salvaged.status.code(), Some(1));
    assert!(String::from_utf8(salvaged.stderr).unwrap().contains(": salvage lost 1 entity: "));
    assert_eq!(Store::load(&repaired).unwrap().len(), 1, "what was kept is written");

    let usage = run(&["verify", w, "--salvage"]);
    assert_eq!(usage.status.code(), Some(2), "--salvage needs -o");
}

/// Attack: `rm` of a key left its name in the file's key-name table
/// (`datacomp set F ID password_is_hunter2 1; datacomp rm F ID password_is_hunter2`), and so
/// did removing the last entity that held a key. A name no entity holds leaves with it.
#[test]
fn a_removed_key_s_name_does_not_reach_the_file() {
    let world = World::new();
    let has = |text: &str| world.bytes().windows(text.len()).any(|w| w == text.as_bytes());
    ok(&["set", &world.path, "1v0t1", "password_is_hunter2", "1"]);
    assert!(has("hunter2"));
    ok(&["rm", &world.path, "1v0t1", "password_is_hunter2"]);
    assert!(!has("hunter2"), "a removed key's name");

    ok(&["set", &world.path, "3v0t1", "/secret.plan", "1"]);
    assert!(has("secret.plan"));
    ok(&["rm", &world.path, "3v0t1"]);
    assert!(!has("secret.plan"), "the name of a key only a removed entity held");
    assert!(has("stats"), "names still held stay");
    ok(&["verify", &world.path]);
}

/// Attack: a --keys file saved by a Windows editor starts with a byte order mark, which made
/// its first path `\u{feff}name`, unknown, and the upgrade failed on a key the file named.
#[test]
fn upgrade_skips_the_byte_order_mark_of_a_keys_file() {
    let world = World::new();
    let (old, new, keys) = (world.file("old.dcmp"), world.file("new.dcmp"), world.file("keys"));
    std::fs::copy(fixtures().join("world_v1.dcmp"), &old).unwrap();
    let paths = "name\r\nstats.health\r\nstats.mana\r\nstatus_effects.drunk\r\n\
                 status_effects.delirious\r\nposition\r\ncolor\r\nbio\r\n";
    std::fs::write(&keys, format!("\u{feff}{paths}")).unwrap();
    ok(&["upgrade", &old, "-o", &new, "--known-keys", &keys]);
    assert_eq!(ok(&["get", &new, "0v0t1", "name"]), "The One\n");
}

// ---------------------------------------------------------------------------------------------
// raw keys: a key without a name exports by hash and imports back as itself

#[test]
fn a_key_exported_by_hash_imports_back_as_the_same_key() {
    let dir = TempDir::new().unwrap();
    let file = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    std::fs::write(file("raw.json"), r##"{"#0000002a": 7, "a": {"#0000002a": true}}"##).unwrap();
    let (first, second) = (file("first.dcmp"), file("second.dcmp"));
    ok(&["import", &file("raw.json"), "-o", &first]);
    assert_eq!(ok(&["get", &first, "0v0t1", "#0000002a"]), "7\n");
    assert_eq!(ok(&["get", &first, "0v0t1", "a.#0000002a"]), "true\n");
    ok(&["export", &first, "--compact", "-o", &file("back.json")]);
    let back = std::fs::read_to_string(file("back.json")).unwrap();
    assert_eq!(back, "[{\"#0000002a\":7,\"a\":{\"#0000002a\":true}}]\n");
    ok(&["import", &file("back.json"), "-o", &second]);
    assert_eq!(ok(&["get", &second, "0v0t1", "#0000002a"]), "7\n");
    let (a, b) = (Store::load(&first).unwrap(), Store::load(&second).unwrap());
    assert_eq!(a.get("0v0t1".parse().unwrap()), b.get("0v0t1".parse().unwrap()));

    // A raw key holds one value: an object under it is refused, and no file is written.
    std::fs::write(file("bad.json"), r##"{"#0000002a": {"b": 1}}"##).unwrap();
    let message = fails(&["import", &file("bad.json"), "-o", &file("bad.dcmp")]);
    assert!(
        message.ends_with(
            "/#0000002a (line 1, column 15): member #0000002a is a raw key and holds one value, not an object"
        ),
        "{message}"
    );
    assert!(!Path::new(&file("bad.dcmp")).exists());
}

/// Issue 29: nulls are kept by a lenient import and shown, `get` of a former array prints an
/// array, a strict import names `--lenient`, and numbers that lose digits are said in one
/// warning line (refused with `--exact-numbers`).
#[test]
fn nulls_arrays_and_numbers_that_lose_digits() {
    let dir = TempDir::new().unwrap();
    let file = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let (input, save) = (file("berry.json"), file("berry.dcmp"));
    let text = r#"{"name": "Pecha", "firmness": null, "sprites": {"default": null},
        "types": [{"slot": 1, "type": "grass"}, {"slot": 2, "type": null}], "pi": 3.141592653589793,
        "price": 19.99, "third": 0.3333333333333333}"#;
    std::fs::write(&input, text).unwrap();

    let strict = fails(&["import", &input, "-o", &save]);
    assert_eq!(
        strict,
        format!(
            "{input}: /firmness (line 1, column 34): null is read by the lenient import only, \
             not the strict one (--lenient keeps nulls)"
        )
    );
    let summary = ok(&["import", "--lenient", &input, "-o", &save]);
    let warnings: Vec<&str> = summary.lines().filter(|l| l.starts_with("warning:")).collect();
    assert_eq!(
        warnings,
        [format!(
            "warning: 2 numbers lose digits in f32 (the first at /pi in {input}): \
             3.141592653589793 -> 3.1415927 (--exact-numbers refuses them)"
        )]
    );
    assert!(summary.contains(&format!("(the first at /types in {input})")), "{summary}");

    // Shown as null, typed null, found by the query language.
    assert_eq!(ok(&["get", &save, "0v0t1", "firmness"]), "null\n");
    assert_eq!(
        ok(&["get", &save, "0v0t1", "firmness", "--json"]),
        "{\"hash\":\"#a04d46c9\",\"id\":\"0v0t1\",\"key\":\"firmness\",\"type\":\"null\",\"value\":null}\n"
    );
    assert_eq!(ok(&["query", &save, "firmness == null and has sprites.default"]), "id\n0v0t1\n");
    assert_eq!(ok(&["query", &save, "firmness != null"]), "id\n");
    // A former array is printed as an array, as export writes it.
    assert_eq!(
        ok(&["get", &save, "0v0t1", "types", "--json"]),
        "{\"id\":\"0v0t1\",\"key\":\"types\",\"type\":\"array\",\"value\":\
         [{\"slot\":1,\"type\":\"grass\"},{\"slot\":2,\"type\":null}]}\n"
    );
    assert!(ok(&["get", &save, "0v0t1", "types"]).starts_with("[\n  {\n    \"slot\": 1,"));
    assert_eq!(
        ok(&["get", &save, "0v0t1", "sprites", "--json"]),
        "{\"id\":\"0v0t1\",\"key\":\"sprites\",\"type\":\"object\",\"value\":{\"default\":null}}\n"
    );
    let exported = ok(&["export", &save, "--compact"]);
    assert!(exported.contains(r#""firmness":null,"sprites":{"default":null}"#), "{exported}");

    // `set` writes a null; `--type str` keeps the word as a string.
    ok(&["set", &save, "0v0t1", "price", "null"]);
    ok(&["set", &save, "0v0t1", "name", "null", "--type", "str"]);
    let store = Store::load(&save).unwrap();
    let (_, sheet) = store.iter().next().unwrap();
    assert_eq!(sheet.get("price"), Some(datacomp::Value::Null));
    assert_eq!(sheet.get_str("name"), Some("null"));

    // Refused when asked, at the first such number.
    let exact = fails(&["import", "--lenient", "--exact-numbers", &input, "-o", &save]);
    assert_eq!(
        exact,
        format!(
            "{input}: /pi (line 2, column 99): 3.141592653589793 would be stored as 3.1415927, \
             losing digits (exact numbers were asked for)"
        )
    );
}
