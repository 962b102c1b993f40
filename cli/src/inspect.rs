//! `list` and `inspect`: what a save file holds, and how one entity's buffer is laid out.

use std::io::Write;
use std::path::Path;

use datacomp::blob::RegionKind;
use datacomp::text::Escaped;
use datacomp::{BlobRef, Id, Store, format};
use serde_json::json;

use crate::files::{entity, read};
use crate::output::{
    Bytes, Failure, JsonArray, entries_json, is_abstract, json_line, member, percent, plural,
    print_buffer, print_entries, prototype_name, write_object,
};

/// `datacomp list`: the entities in handle order (by index), whatever order the store keeps
/// them in (removing one moves the last into its place). An entity's name is what it reads
/// (its own, or its prototype's); abstract entities (`"$abstract": true`) are left out
/// unless `all`.
pub fn list(path: &Path, all: bool, json: bool, out: &mut dyn Write) -> Result<(), Failure> {
    let store = crate::files::load(path)?;
    let mut entities: Vec<(Id, BlobRef<'_>)> = store.iter().collect();
    entities.sort_unstable_by_key(|(id, _)| id.index());
    if !json {
        writeln!(out, "{:<12} {:>5} {:>8}  name", "id", "keys", "bytes")?;
    }
    let mut left_out = 0;
    for (id, blob) in entities {
        let abstract_ = is_abstract(blob);
        if abstract_ && !all {
            left_out += 1;
            continue;
        }
        let name = store.resolved(id).and_then(|sheet| sheet.get_str("name"));
        let prototype = store.prototype(id);
        if json {
            let line = json!({
                "id": id.to_string(),
                "keys": blob.len(),
                "bytes": blob.byte_len(),
                "name": name,
                "prototype": prototype.map(|p| p.to_string()),
                "abstract": abstract_,
            });
            json_line(out, &line)?;
            continue;
        }
        let name = Escaped(name.unwrap_or(""));
        write!(out, "{:<12} {:>5} {:>8}  {name}", id.to_string(), blob.len(), blob.byte_len())?;
        if let Some(prototype) = prototype {
            write!(out, " (from {})", prototype_name(&store, prototype))?;
        }
        if abstract_ {
            write!(out, " (abstract)")?;
        }
        writeln!(out)?;
    }
    if !json {
        let listed = plural(store.len() - left_out, "entity", "entities");
        match left_out {
            0 => writeln!(out, "{listed}")?,
            n => writeln!(
                out,
                "{listed}; {} left out (--all lists {})",
                plural(n, "abstract entity", "abstract entities"),
                if n == 1 { "it" } else { "them" }
            )?,
        }
    }
    Ok(())
}

/// `datacomp inspect`.
pub fn run(
    path: &Path,
    entity_id: Option<&str>,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let bytes = read(path)?;
    let info = format::describe(&bytes).map_err(|e| Failure::at(path.display(), e))?;
    let store = Store::from_bytes(&bytes).map_err(|e| crate::files::load_failure(path, &e))?;
    match entity_id {
        Some(id) => {
            let (id, blob) = entity(&store, path, id)?;
            if json {
                entity_json(&store, id, blob, out)?;
                writeln!(out)?;
            } else {
                print_entity(&store, id, blob, out)?;
            }
        }
        None if json => writeln!(out, "{}", file_json(path, &info, &store))?,
        None => print_file(path, &info, &store, out)?,
    }
    Ok(())
}

fn print_file(
    path: &Path,
    info: &format::FileInfo,
    store: &Store,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    writeln!(
        out,
        "{}: datacomp save, format {}.{}, key hash {}, data version {}, {} ({} bytes)",
        crate::output::shown(path),
        info.major,
        info.minor,
        info.key_hash,
        info.data_version,
        Bytes(info.file_len as usize),
        info.file_len
    )?;
    writeln!(out, "\nsections:")?;
    writeln!(out, "  {:>4}  {:<13} {:>10} {:>10}  crc32", "kind", "name", "offset", "bytes")?;
    for s in &info.sections {
        writeln!(
            out,
            "  {:>4}  {:<13} {:>10} {:>10}  {:08x}",
            s.kind, s.name, s.offset, s.len, s.crc
        )?;
    }
    let stats = store.stats();
    let arena = stats.arena_bytes;
    writeln!(out, "\nentities: {}", stats.entities)?;
    if let Some(bytes) = arena.checked_div(stats.entities) {
        // The file's figure counts the index and names too; the arena's is the loaded store's
        // (an empty entity has no bytes in a file of format 1.3, 8 in memory).
        let file = info.file_len as f64 / stats.entities as f64;
        writeln!(out, "bytes per entity: {file:.1} in the file, {bytes} in the loaded arena")?;
    }
    writeln!(out, "arena, loaded: {} ({arena} bytes)", Bytes(arena))?;
    let rows = [
        ("live", stats.live_bytes, "headers and values in use"),
        ("slack", stats.slack_bytes, "free space and holes inside blobs: room to grow in place"),
        (
            "garbage",
            stats.garbage_bytes,
            "left by moved and removed blobs: reclaimed by compaction",
        ),
    ];
    for (name, bytes, what) in rows {
        writeln!(out, "  {name:<8} {bytes:>10} bytes {:>5.1}%  {what}", percent(bytes, arena))?;
    }
    writeln!(out, "key names: {}", store.key_names().len())?;
    writeln!(out, "lineage: {}", lineage(store))?;
    Ok(())
}

fn file_json(path: &Path, info: &format::FileInfo, store: &Store) -> serde_json::Value {
    let stats = store.stats();
    let sections: Vec<_> = info
        .sections
        .iter()
        .map(|s| {
            json!({ "kind": s.kind, "name": s.name, "offset": s.offset, "bytes": s.len,
                    "crc32": format!("{:08x}", s.crc) })
        })
        .collect();
    json!({
        "file": path.display().to_string(),
        "format": format!("{}.{}", info.major, info.minor),
        "key_hash": info.key_hash,
        "data_version": info.data_version,
        "file_bytes": info.file_len,
        "sections": sections,
        "entities": stats.entities,
        "arena": {
            "bytes": stats.arena_bytes,
            "live": stats.live_bytes,
            "slack": stats.slack_bytes,
            "garbage": stats.garbage_bytes,
        },
        "key_names": store.key_names().len(),
        "lineage": store.lineage().map(|l| format!("{l:032x}")),
    })
}

/// A store's lineage as 32 hex digits, or `none` (a save of format 1.3 or before).
fn lineage(store: &Store) -> String {
    store.lineage().map_or_else(|| "none".to_owned(), |l| format!("{l:032x}"))
}

/// A key's name in `store`, else its hash (`#1a2b3c4d`).
fn key_name(store: &Store, key: datacomp::Key) -> String {
    crate::output::key_name(&[store], key)
}

fn print_entity(
    store: &Store,
    id: Id,
    blob: BlobRef<'_>,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let name = blob.get_str("name").map(|n| format!(" {n:?}")).unwrap_or_default();
    writeln!(out, "entity {id}{name}: {} keys, {} bytes", blob.len(), blob.byte_len())?;
    print_chain(store, id, blob, out)?;
    print_entries(store, blob, out)?;
    writeln!(out)?;
    print_buffer(store, blob, out)
}

/// The entity's prototype chain and what it reads through it, if it has a prototype; how
/// many entities it is the prototype of, if any.
fn print_chain(
    store: &Store,
    id: Id,
    blob: BlobRef<'_>,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let Some(resolved) = store.resolved(id) else { return Ok(()) };
    let chain: Vec<Id> = resolved.chain().collect();
    if let Some(&prototype) = chain.first() {
        let links: Vec<String> = std::iter::once(id.to_string())
            .chain(chain.iter().map(|&p| format!("{p} ({})", prototype_name(store, p))))
            .collect();
        writeln!(out, "prototype chain: {}", links.join(" -> "))?;
        let reads = resolved.iter().count();
        let own = blob.iter().filter(|(_, value)| !value.is_tombstone()).count();
        let removed = blob.len() - own;
        writeln!(
            out,
            "reads {}: {own} its own, {} through {}, {removed} removed",
            plural(reads, "key", "keys"),
            reads - own,
            prototype_name(store, prototype),
        )?;
    }
    let instances = instances(store, id);
    if instances > 0 {
        writeln!(out, "prototype of {}", plural(instances, "entity", "entities"))?;
    }
    if is_abstract(blob) {
        writeln!(out, "abstract: a prototype only, left out of list and query without --all")?;
    }
    Ok(())
}

/// How many entities have `id` as their prototype.
fn instances(store: &Store, id: Id) -> usize {
    store.iter().filter(|&(e, _)| store.prototype(e) == Some(id)).count()
}

/// An entity as JSON, written as it is made (an entity's entries and regions can be a million
/// each).
fn entity_json(
    store: &Store,
    id: Id,
    blob: BlobRef<'_>,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let regions = JsonArray(|| {
        blob.regions().into_iter().map(|(kind, offset, bytes)| match kind {
            RegionKind::Payload(key) => json!({
                "kind": "payload", "key": key_name(store, key), "offset": offset, "bytes": bytes
            }),
            kind => json!({ "kind": region_name(kind), "offset": offset, "bytes": bytes }),
        })
    });
    let entries = entries_json(store, blob);
    let chain: Vec<String> =
        store.resolved(id).map(|r| r.chain().map(|p| p.to_string()).collect()).unwrap_or_default();
    let prototype = chain.first().cloned();
    let instances = instances(store, id);
    let abstract_ = is_abstract(blob);
    let id = id.to_string();
    // In name order, as the serde_json object this was written as had them.
    write_object(
        out,
        &[
            ("abstract", &member(&abstract_)),
            ("bytes", &member(&blob.byte_len())),
            ("chain", &member(&chain)),
            ("entries", &member(&entries)),
            ("free_bytes", &member(&blob.free_bytes())),
            ("header_bytes", &member(&blob.header_bytes())),
            ("hole_bytes", &member(&blob.hole_bytes())),
            ("id", &member(&id)),
            ("instances", &member(&instances)),
            ("payload_bytes", &member(&blob.payload_bytes())),
            ("prototype", &member(&prototype)),
            ("regions", &member(&regions)),
        ],
    )
}

fn region_name(kind: RegionKind) -> &'static str {
    match kind {
        RegionKind::Header => "header",
        RegionKind::Free => "free",
        RegionKind::Payload(_) => "payload",
        RegionKind::Hole => "hole",
    }
}
