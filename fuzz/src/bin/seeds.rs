//! Writes the seed corpora into `fuzz/seeds/<target>/`: valid blobs and saves built from the
//! fixtures, so that the fuzzers start from inputs deep inside the format rather than having to
//! find the magic and a matching crc32 by chance. `run.sh` runs it before each run.
//!
//! Usage: `seeds FIXTURES_DIR OUT_DIR`

use std::fs;
use std::path::{Path, PathBuf};

use datacomp::blob::Patch;
use datacomp::{Blob, ImportOptions, Store};

fn main() {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [fixtures, out] = &args[..] else {
        eprintln!("usage: seeds FIXTURES_DIR OUT_DIR");
        std::process::exit(2);
    };
    let documents = files(fixtures, "json");
    let mut store = Store::new();
    for (_, text) in &documents {
        // The invalid fixtures are seeds for the JSON target only.
        let _ = store.import(text, &ImportOptions::lenient());
    }

    // Blobs: each entity as stored, and compacted to its smallest form.
    let blobs = out.join("blob_from_bytes");
    for (i, (_, blob)) in store.iter().enumerate() {
        write(&blobs, &format!("entity{i}"), blob.as_bytes());
        let mut small = blob.to_blob();
        small.shrink_to_fit();
        write(&blobs, &format!("entity{i}_small"), small.as_bytes());
    }
    write(&blobs, "empty", Blob::new().as_bytes());
    // 1,000 keys, not 5,000: the target checks a model after every removal of every key.
    let wide_blob =
        Blob::import(&wide(1_000, 0), &ImportOptions::strict()).expect("the wide entity imports");
    write(&blobs, "wide", wide_blob.as_bytes());

    // Saves: the fixtures as imported; after edits (holes, a moved blob, a free slot); with
    // no names; empty; and the golden file the format tests pin.
    let mut saves = vec![("fixtures", store.to_bytes())];
    let mut edited = store.clone();
    let ids: Vec<_> = edited.iter().map(|(id, _)| id).collect();
    edited
        .get_mut(ids[0])
        .unwrap()
        .set("name", "a name long enough to move the blob".repeat(4).as_str())
        .unwrap();
    edited.get_mut(ids[1]).unwrap().remove("name");
    edited.remove(ids[2]);
    saves.push(("edited", edited.to_bytes()));
    let mut unnamed = Store::new();
    for (_, blob) in store.iter().take(2) {
        unnamed.insert(&blob.to_blob());
    }
    saves.push(("unnamed", unnamed.to_bytes()));
    saves.push(("empty", Store::new().to_bytes()));
    if let Ok(golden) = fs::read(fixtures.join("world_v1.dcmp")) {
        saves.push(("world_v1", golden));
    }
    // Format 1.2's index (spans) and 1.3's (end offsets, empty blobs of zero bytes, an
    // identity handle map's meta and slots left out), 1.4's and 1.5's (links, tombstones),
    // from the goldens and built here.
    for golden in ["world_v4", "world_v5", "world_v5_identity", "world_v6", "world_v7"] {
        if let Ok(bytes) = fs::read(fixtures.join(format!("{golden}.dcmp"))) {
            saves.push((golden, bytes));
        }
    }
    let mut empties = store.clone();
    empties.insert_empty();
    empties.insert_empty();
    saves.push(("identity_with_empties", empties.to_bytes()));
    let mut general = empties.clone();
    let first = general.iter().map(|(id, _)| id).next().expect("the fixtures hold entities");
    general.remove(first);
    general.insert_empty();
    saves.push(("general_with_empties", general.to_bytes()));
    // Issue 15's regressions: a name of 20,000 segments (export overflowed the stack), and an
    // entity of 5,000 keys (import, equality and patches were quadratic in its keys).
    if let Ok(deep) = fs::read(fixtures.join("deep_name.dcmp")) {
        saves.push(("deep_name", deep));
    }
    let wide_json = wide(5_000, 0);
    let mut wide_store = Store::new();
    wide_store.import(&wide_json, &ImportOptions::strict()).expect("the wide entity imports");
    saves.push(("wide", wide_store.to_bytes()));
    for target in ["store_from_bytes", "store_view", "store_lazy", "store_salvage"] {
        for (name, bytes) in &saves {
            write(&out.join(target), name, bytes);
        }
    }

    // Patches: between each pair of neighbouring entities, and from each to nothing.
    let blobs_in_order: Vec<_> = store.iter().map(|(_, blob)| blob).collect();
    for (i, pair) in blobs_in_order.windows(2).enumerate() {
        write(
            &out.join("patch_from_bytes"),
            &format!("between{i}"),
            Patch::between(pair[0], pair[1]).as_bytes(),
        );
        write(
            &out.join("patch_from_bytes"),
            &format!("clear{i}"),
            Patch::between(pair[0], Blob::new().as_blob_ref()).as_bytes(),
        );
    }

    let (base, changed) = (
        Blob::import(&wide(5_000, 0), &ImportOptions::strict()),
        Blob::import(&wide(5_000, 1), &ImportOptions::strict()),
    );
    let (base, changed) = (base.expect("imports"), changed.expect("imports"));
    let wide_patch = Patch::between(base.as_blob_ref(), changed.as_blob_ref());
    write(&out.join("patch_from_bytes"), "wide", wide_patch.as_bytes());

    // Prototype links: a count of entities, then the links (0 none, else 1 + a position): none,
    // a chain, a star, the longest chain, one past it, a cycle, a link past the entities, a
    // section of the wrong size.
    let links = |n: u8, up: &[u32]| {
        let mut bytes = vec![n];
        bytes.extend(up.iter().flat_map(|w| w.to_le_bytes()));
        bytes
    };
    let chain = |n: u32| -> Vec<u32> { (0..n).collect() };
    let prototype_links = [
        ("none", links(5, &[])),
        ("chain", links(5, &[0, 1, 2, 3, 4])),
        ("star", links(6, &[0, 1, 1, 1, 1, 1])),
        ("longest", links(17, &chain(17))),
        ("too_long", links(18, &chain(18))),
        ("cycle", links(4, &[2, 3, 4, 1])),
        ("missing", links(3, &[0, 9, 0])),
        ("short", links(3, &[0, 1])),
    ];
    for (name, bytes) in &prototype_links {
        write(&out.join("prototype_links"), name, bytes);
    }

    // Deltas from the base that the delta_apply target applies them to.
    for (name, bytes) in datacomp_fuzz::seed_deltas() {
        write(&out.join("delta_apply"), name, &bytes);
    }

    // JSON: every fixture, valid or not; and issue 15's regressions: an entity of 5,000 keys,
    // the same with a member repeated at its end, members nested to the deepest path a name
    // may have and one past it, and a lenient array of arrays nested as deep.
    for (name, text) in &documents {
        write(&out.join("json_import"), name, text.as_bytes());
    }
    // SJSON: every SJSON fixture, valid or not, and the JSON ones (JSON is SJSON).
    for (name, text) in files(fixtures, "sjson").iter().chain(&documents) {
        write(&out.join("sjson_import"), name, text.as_bytes());
    }
    let json = out.join("json_import");
    write(&json, "wide", wide_json.as_bytes());
    let repeated = format!("{},\"k7\":true}}", &wide_json[..wide_json.len() - 1]);
    write(&json, "wide_repeated", repeated.as_bytes());
    let nested = |depth: usize, leaf: &str| {
        format!("{}{leaf}{}", "{\"a\":".repeat(depth), "}".repeat(depth))
    };
    write(&json, "deepest", nested(datacomp::key::MAX_PATH_SEGMENTS, "[1,2]").as_bytes());
    write(&json, "too_deep", nested(datacomp::key::MAX_PATH_SEGMENTS + 1, "1").as_bytes());
    write(
        &json,
        "deep_arrays",
        nested(100, &format!("{}0{}", "[".repeat(27), "]".repeat(27))).as_bytes(),
    );
    // Queries: each form of the filter language, and a few broken ones.
    let queries = [
        "a",
        "has a",
        "a < 2 and b >= -1",
        "not (a == 1 or b != 2.5e0)",
        r#"a == "x" or d.e == false"#,
        r#"/d/e or #00000000 and c != "q\"""#,
        "((a) and (not b))",
        "a <",
        "(a",
        r#"a == "open"#,
    ];
    for (i, text) in queries.iter().enumerate() {
        write(&out.join("query_parse"), &format!("query{i}"), text.as_bytes());
    }
    // Migrations: the README's, each kind of step, and a few broken ones.
    let migrations = [
        fs::read_to_string(fixtures.join("migrations_v3.json")).expect("the fixture exists"),
        r#"{"version": 2, "steps": [{"to": 1, "rename": {"a": "b", "b": "a"}}, {"to": 2, "remove": ["b.c"]}]}"#.into(),
        r#"{"version": 1, "steps": [{"to": 1, "rename": {"/a.b": "x", "g": "i"}, "default": {"a": [1, 2]}, "set": {"f": true}}]}"#.into(),
        r#"{"version": 3, "steps": [{"to": 2, "default": {"b": 1}}, {"to": 3, "set": {"a.z": "q"}}]}"#.into(),
        r#"{"version": 1, "steps": [{"to": 1, "renmae": {}}]}"#.into(),
        r#"{"version": 1, "steps": [{"to": 2}]}"#.into(),
    ];
    for (i, text) in migrations.iter().enumerate() {
        write(&out.join("migrations_json"), &format!("migrations{i}"), text.as_bytes());
    }
    let count = |target: &str| fs::read_dir(out.join(target)).map_or(0, Iterator::count);
    let targets = [
        "blob_from_bytes",
        "store_from_bytes",
        "patch_from_bytes",
        "delta_apply",
        "json_import",
        "sjson_import",
        "query_parse",
        "migrations_json",
        "prototype_links",
    ];
    let counts: Vec<String> = targets.iter().map(|t| format!("{} {t}", count(t))).collect();
    println!("seeds in {}: {}", out.display(), counts.join(", "));
}

/// One entity of `n` top-level keys `k0`.. holding strings, floats, booleans and float arrays
/// in turn, each changed by `variant`.
fn wide(n: usize, variant: usize) -> String {
    let members: Vec<String> = (0..n)
        .map(|i| {
            let v = i + variant;
            match i % 4 {
                0 => format!("\"k{i}\":\"v{v}\""),
                1 => format!("\"k{i}\":{v}.5"),
                2 => format!("\"k{i}\":{}", v.is_multiple_of(2)),
                _ => format!("\"k{i}\":[{v}.0,0.25]"),
            }
        })
        .collect();
    format!("{{{}}}", members.join(","))
}

/// Every `*.<extension>` under `dir`, recursively, with a name for its seed file.
fn files(dir: &Path, extension: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).expect("the fixtures folder is readable") {
            let path = entry.expect("a readable entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == extension) {
                let name =
                    path.strip_prefix(&*dir).unwrap_or(&path).to_string_lossy().replace('/', "_");
                found.push((name, fs::read_to_string(&path).expect("a fixture is UTF-8")));
            }
        }
    }
    found.sort();
    found
}

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    fs::create_dir_all(dir).expect("the seeds folder can be made");
    fs::write(dir.join(name), bytes).expect("a seed can be written");
}
