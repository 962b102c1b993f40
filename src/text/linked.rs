//! Exports of entities with prototypes: an instance written as what it stores, with the
//! `$prototype` it reads the rest from and the keys it removes (`$remove`), from its tree (an
//! export plan writes an entity's own members only); or any entity whole, through its chain
//! ([`ExportOptions::flatten`]).

use zerocopy::IntoBytes;

use crate::blob::{Blob, BlobRef};
use crate::handle_map::Id;
use crate::key::Key;
use crate::store::proto::{ABSTRACT_KEY, ID_KEY};
use crate::store::{Resolved, Store};
use crate::text::TextFormat;
use crate::value::{Value, ValueType};

use super::error::ExportError;
use super::options::ExportOptions;
use super::plan;
use super::sjson;
use super::write::{self, ROOT, Tree, into_string};

/// Whether the entity (`blob`, of `id` if it is the store's) has a prototype or removes an
/// inherited key: then it is written with `$prototype` and `$remove`, from its tree (an
/// export plan writes an entity's own members only).
pub(super) fn is_linked(store: &Store, id: Option<Id>, blob: BlobRef<'_>) -> bool {
    // A store without links looks nothing up.
    if !store.links().is_empty() && id.is_some_and(|id| store.prototype(id).is_some()) {
        return true;
    }
    // The tags, after the keys in the layout words: a byte search.
    let n = blob.len();
    plan::layout_words(blob)[n..].as_bytes()[..n].contains(&(ValueType::Tombstone as u8))
}

/// Adds to the tree of an entity (`blob`, of `id` if it is the store's) the members an
/// export writes besides its keys: `$prototype` first, the `$id` of its prototype, and
/// `$remove` last, the keys it removes from what it inherits.
///
/// # Errors
///
/// [`ExportError::UnnamedPrototype`] if the prototype has no `$id` to name it by.
pub(super) fn add_links<'a>(
    tree: &mut Tree<'a>,
    store: &'a Store,
    id: Option<Id>,
    blob: BlobRef<'a>,
) -> Result<(), ExportError> {
    if let Some((id, prototype)) = id.and_then(|id| store.prototype(id).map(|p| (id, p))) {
        let name = store.get(prototype).and_then(|base| base.get_str(ID_KEY));
        let name = name.ok_or(ExportError::UnnamedPrototype { entity: Some(id), prototype })?;
        tree.push_first(ROOT, "$prototype", Value::Str(name));
    }
    let mut removed = blob.iter().filter(|(_, value)| write::is_tombstone(*value)).peekable();
    if removed.peek().is_some() {
        tree.push_strings(
            ROOT,
            "$remove",
            removed.map(|(key, _)| store.key_label(key).into_owned()),
        );
    }
    Ok(())
}

/// An entity with a prototype or removed keys (see [`is_linked`]), as `options` say.
pub(super) fn write_linked(
    store: &Store,
    id: Option<Id>,
    blob: BlobRef<'_>,
    options: ExportOptions,
) -> Result<String, ExportError> {
    let mut tree = Tree::for_names(store.names(), false);
    if let (false, Some((key, x))) = (options.lossy, tree.build(store.names(), blob)) {
        return Err(ExportError::not_finite(store, id, key, x));
    }
    add_links(&mut tree, store, id, blob)?;
    let mut out = Vec::with_capacity(blob.byte_len() * 2);
    write_tree(&tree, options, &mut out);
    Ok(into_string(out))
}

/// One entity's tree as `options` say: JSON, or an SJSON document.
pub(super) fn write_tree(tree: &Tree<'_>, options: ExportOptions, out: &mut Vec<u8>) {
    match options.format {
        TextFormat::Json => tree.write(options.pretty, 0, out),
        TextFormat::Sjson => sjson::write::write_entity(tree, out),
    }
}

/// What the entity `id` reads through its prototypes ([`Resolved::iter`]), as
/// [`ExportOptions::flatten`] writes it. Empty if `id` is not live.
fn flat_entries(store: &Store, id: Id) -> impl Iterator<Item = (Key, Value<'_>)> {
    store.resolved(id).into_iter().flat_map(Resolved::iter).map(|(key, value, _)| (key, value))
}

/// The entity `id` whole ([`flat_entries`]), as a blob of its own.
pub(super) fn flat_blob(store: &Store, id: Id) -> Result<Blob, ExportError> {
    store.try_get(id).map_err(ExportError::Handle)?;
    let entries: Vec<(Key, Value<'_>)> = flat_entries(store, id).collect();
    let mut blob = Blob::new();
    blob.try_set_all(&entries).expect("INVARIANT: values read from valid blobs fit a blob");
    Ok(blob)
}

/// The entity `id` whole ([`flat_entries`]) as `options` say.
pub(super) fn write_flat(
    store: &Store,
    id: Id,
    options: ExportOptions,
) -> Result<String, ExportError> {
    let own = store.try_get(id).map_err(ExportError::Handle)?;
    let mut tree = Tree::for_names(store.names(), false);
    let len = own.len();
    if let (false, Some((key, x))) =
        (options.lossy, tree.build_entries(store.names(), len, flat_entries(store, id)))
    {
        return Err(ExportError::not_finite(store, Some(id), key, x));
    }
    let mut out = Vec::with_capacity(own.byte_len() * 2);
    write_tree(&tree, options, &mut out);
    Ok(into_string(out))
}

/// Every entity but the abstract ones, whole (see [`ExportOptions::flatten`]), as one
/// document of `options`' format.
pub(super) fn write_all_flat(store: &Store, options: ExportOptions) -> Result<String, ExportError> {
    let json = options.format == TextFormat::Json;
    let [open, separator, close]: [&[u8]; 3] = match (json, options.pretty) {
        (true, true) => [b"[\n  ", b",\n  ", b"\n]"],
        (true, false) => [b"[", b",", b"]"],
        (false, _) => [b"[\n", b"", b"]"],
    };
    let mut out = Vec::with_capacity(store.arena().len() * 4 * 2);
    let mut tree = Tree::for_names(store.names(), true);
    out.extend_from_slice(open);
    let mut first = true;
    for (id, blob) in store.iter() {
        if blob.get_bool(ABSTRACT_KEY) == Some(true) {
            continue;
        }
        if !std::mem::take(&mut first) {
            out.extend_from_slice(separator);
        }
        let entries = flat_entries(store, id);
        if let (false, Some((key, x))) =
            (options.lossy, tree.build_entries(store.names(), blob.len(), entries))
        {
            return Err(ExportError::not_finite(store, Some(id), key, x));
        }
        if json {
            tree.write(options.pretty, usize::from(options.pretty), &mut out);
        } else {
            sjson::write::write_element(&tree, &mut out);
        }
    }
    if first {
        return Ok("[]".to_owned());
    }
    out.extend_from_slice(close);
    Ok(into_string(out))
}
