//! `list` and `inspect`: what a save file holds, and how one entity's buffer is laid out.

use std::io::Write;
use std::path::Path;

use datacomp::blob::RegionKind;
use datacomp::text::Escaped;
use datacomp::{BlobRef, Id, Store, format};
use serde_json::json;

use crate::files::{entity, read};
use crate::output::{
    Bytes, Failure, JsonArray, entries_json, json_line, member, percent, plural, print_buffer,
    print_entries, write_object,
};

/// `datacomp list`: the entities in handle order (by index), whatever order the store keeps
/// them in (removing one moves the last into its place).
pub fn list(path: &Path, json: bool, out: &mut dyn Write) -> Result<(), Failure> {
    let store = crate::files::load(path)?;
    let mut entities: Vec<(Id, BlobRef<'_>)> = store.iter().collect();
    entities.sort_unstable_by_key(|(id, _)| id.index());
    if !json {
        writeln!(out, "{:<12} {:>5} {:>8}  name", "id", "keys", "bytes")?;
    }
    for (id, blob) in entities {
        if json {
            let line = json!({
                "id": id.to_string(),
                "keys": blob.len(),
                "bytes": blob.byte_len(),
                "name": blob.get_str("name"),
            });
            json_line(out, &line)?;
            continue;
        }
        let name = Escaped(blob.get_str("name").unwrap_or(""));
        writeln!(out, "{:<12} {:>5} {:>8}  {name}", id.to_string(), blob.len(), blob.byte_len())?;
    }
    if !json {
        writeln!(out, "{}", plural(store.len(), "entity", "entities"))?;
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
    print_entries(store, blob, out)?;
    writeln!(out)?;
    print_buffer(store, blob, out)
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
    let id = id.to_string();
    // In name order, as the serde_json object this was written as had them.
    write_object(
        out,
        &[
            ("bytes", &member(&blob.byte_len())),
            ("entries", &member(&entries)),
            ("free_bytes", &member(&blob.free_bytes())),
            ("header_bytes", &member(&blob.header_bytes())),
            ("hole_bytes", &member(&blob.hole_bytes())),
            ("id", &member(&id)),
            ("payload_bytes", &member(&blob.payload_bytes())),
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
