//! [`Store::salvage`]: what can be read of a damaged save.

use zerocopy::IntoBytes;

use super::{ArenaCrc, Spans, check_crc, finish};
use crate::blob::layout;
use crate::handle_map::RawHandleMap;
use crate::names::KeyNames;
use crate::save::{KEY_HASH_FX32_WORDS, SaveParts, index_and_arena_tolerant};
use crate::store::Span;
use crate::{HandleMap, Id, LoadError, LoadOptions, Store, StoreError};

/// What [`Store::salvage`] recovered from a damaged save: every entity whose bytes check out,
/// with its handle, and why each of the others was left out.
#[derive(Debug)]
#[non_exhaustive]
pub struct Salvage {
    /// The entities that check out, under their saved handles; the handles of lost entities
    /// are stale in it. Its key names are the save's.
    pub store: Store,
    /// Each entity left out, in the saved dense order, with the first problem found in its
    /// bytes: its span outside the arena, a damaged chunk
    /// ([`FileError::ChunkCrc`](crate::FileError::ChunkCrc), or
    /// [`FileError::Crc`](crate::FileError::Crc) for a format 1.0 save's whole arena), a
    /// malformed blob, or a span that overlaps another's.
    pub lost: Vec<(Id, LoadError)>,
    /// Sections it did without, and why: the key names (the store then names no key) and the
    /// arena's chunk crcs (the arena's whole crc then stands in: a changed byte anywhere in it
    /// costs every entity).
    pub damaged: Vec<LoadError>,
}

impl Store {
    /// Reads what can be read of a damaged save: every entity whose span lies inside the
    /// arena, whose chunks match their crcs and whose blob is valid is kept under its saved
    /// handle; the others are reported in [`Salvage::lost`], and their arena words are zeroed.
    /// With format 1.1's chunk crcs, one changed byte of the arena costs at most the entities
    /// of one 64 KiB chunk; a format 1.0 save has one crc for the whole arena, so a changed
    /// byte there costs every entity.
    ///
    /// Without its key names or its chunk crcs (damaged), a save still salvages: see
    /// [`Salvage::damaged`].
    ///
    /// # Errors
    ///
    /// A [`LoadError`] when what every entity depends on cannot be read: the header, the
    /// section table, the index, or, for a key hash 1 save, the rehash of its keys (as
    /// [`Store::from_bytes`], which needs its names).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, FileError, LoadError, Store};
    ///
    /// let mut store = Store::new();
    /// let sheet: Blob = [("name", "Orc")].into_iter().collect();
    /// let (a, b) = (store.insert(&sheet), store.insert(&sheet));
    /// let mut bytes = store.to_bytes();
    /// // Change one byte of the first entity's name.
    /// let at = bytes.windows(3).position(|w| w == b"Orc").unwrap();
    /// bytes[at] = b'X';
    /// assert!(Store::from_bytes(&bytes).is_err());
    ///
    /// let salvage = Store::salvage(&bytes)?;
    /// // Both entities lie in the one damaged chunk.
    /// assert_eq!(salvage.lost.len(), 2);
    /// let (id, error) = &salvage.lost[0];
    /// assert!(matches!(error, LoadError::File(FileError::ChunkCrc { chunk: 0, .. })) && *id == a);
    /// assert!(salvage.store.is_empty() && salvage.store.get(b).is_none());
    /// # Ok::<(), LoadError>(())
    /// ```
    pub fn salvage(bytes: &[u8]) -> Result<Salvage, LoadError> {
        let (parts, mut damaged) = index_and_arena_tolerant(bytes, true)?;
        let SaveParts {
            key_hash,
            arena_crc,
            index: raw_index,
            arena,
            names,
            names_kind,
            data_version,
            items_kind,
            ..
        } = parts;
        // As `Store::from_bytes_with`: key hash 1 was written before the key tree, and its
        // names are a list (or none) to rehash the keys from. Names that do not read are
        // done without (a key hash 1 save then fails its rehash below).
        let (tree, old_names) =
            KeyNames::saved(names, names_kind, key_hash).unwrap_or_else(|error| {
                damaged.push(error);
                let tree = (key_hash != KEY_HASH_FX32_WORDS).then(KeyNames::default);
                (tree, Vec::new())
            });
        let (mut index, decreasing) = index_of(&raw_index, items_kind)?;
        let mut words = vec![0_u32; arena.len() / 4];
        words.as_mut_bytes().copy_from_slice(arena);

        let (unit, verdicts) = chunk_verdicts(arena, arena_crc);

        let spans = index.as_slice();
        let id_at = |d: usize| index.id_at(d).unwrap_or_default();
        let mut lost: Vec<(usize, LoadError)> =
            decreasing.into_iter().map(|(d, bad)| (d, super::decrease(id_at(d), bad))).collect();
        let mut scratch = layout::Scratch::default();
        for (d, span) in spans.iter().enumerate() {
            let Some(blob) = words.get(span.range()) else {
                let (offset, count) = (span.offset() as u32, span.words() as u32);
                let arena_words = words.len() as u64;
                let e = LoadError::Store(StoreError::SpanOutOfArena {
                    id: id_at(d),
                    offset,
                    words: count,
                    arena_words,
                });
                lost.push((d, e));
                continue;
            };
            let (start, end) = (span.offset() * 4, (span.offset() + span.words()) * 4);
            let touched = start / unit..end.div_ceil(unit).min(verdicts.len());
            if let Some(Err(e)) = verdicts[touched].iter().find(|v| v.is_err()) {
                lost.push((d, e.clone()));
                continue;
            }
            // A zero-length blob is the empty blob (format 1.3).
            if let Err(error) = layout::validate(blob, &mut scratch)
                && !blob.is_empty()
            {
                lost.push((d, LoadError::Store(StoreError::Blob { id: id_at(d), error })));
            }
        }
        // Spans that overlap another are lost with it: a sweep in offset order.
        let mut sorted: Vec<(usize, usize, usize)> = spans
            .iter()
            .enumerate()
            .filter(|(_, s)| s.offset() + s.words() <= words.len())
            .map(|(d, s)| (s.offset(), s.offset() + s.words(), d))
            .collect();
        sorted.sort_unstable();
        let mut overlapping: Vec<(usize, LoadError)> = Vec::new();
        let mut reach: Option<(usize, usize)> = None; // (end, dense) of the furthest span so far
        for &(start, end, d) in &sorted {
            if let Some((far, first)) = reach
                && start < far
            {
                let e = LoadError::Store(StoreError::SpansOverlap {
                    first: id_at(first),
                    second: id_at(d),
                });
                overlapping.push((first, e.clone()));
                overlapping.push((d, e));
            }
            if reach.is_none_or(|(far, _)| end > far) {
                reach = Some((end, d));
            }
        }
        // In dense order, each entity once, with the first problem found (a stable sort keeps
        // the per-entity problems before the overlaps).
        lost.extend(overlapping);
        lost.sort_by_key(|&(d, _)| d);
        lost.dedup_by_key(|&mut (d, _)| d);

        let lost: Vec<(Id, LoadError)> = lost
            .into_iter()
            .map(|(d, e)| {
                let span = spans[d];
                if let Some(blob) = words.get_mut(span.range()) {
                    blob.fill(0);
                }
                (id_at(d), e)
            })
            .collect();
        for (id, _) in &lost {
            index.remove(*id);
        }
        super::fill_empties(index.values_mut(), &mut words)?;
        let names = match tree {
            Some(tree) => tree,
            None => crate::upgrade::rehash(&index, &mut words, &old_names, &LoadOptions::new())?,
        };
        let store = Store::from_parts(index, words, names, data_version);
        Ok(Salvage { store, lost, damaged })
    }
}

/// The index as a map of spans, and (format 1.3) each entity whose end offset comes before
/// its start, given an empty span: it is lost.
fn index_of(
    raw: &RawHandleMap<'_>,
    items_kind: u32,
) -> Result<(HandleMap<Span>, super::Decreasing), LoadError> {
    let owned = super::owned_spans(raw, items_kind)?;
    let raw = owned.as_ref().map_or(*raw, |owned| owned.raw(raw));
    let index = HandleMap::from_raw(&raw)?;
    Ok((index, owned.map(|owned| owned.decreasing).unwrap_or_default()))
}

/// Each chunk's verdict, once (one chunk: the whole arena of a format 1.0 save), and the
/// chunks' size in bytes.
fn chunk_verdicts(arena: &[u8], arena_crc: ArenaCrc<'_>) -> (usize, Vec<Result<(), LoadError>>) {
    let (unit, chunks) = match arena_crc {
        ArenaCrc::Whole { .. } => (arena.len().max(1), 1),
        ArenaCrc::Chunks { chunk_bytes, crcs, .. } => (chunk_bytes, crcs.len()),
    };
    let verdicts = (0..chunks)
        .map(|c| {
            let range = c * unit..((c + 1) * unit).min(arena.len());
            let report = check_crc(arena, range, arena_crc, |_| {});
            finish([report], arena_crc, Spans::Spans(&[]), &|_| unreachable!("no spans"))
        })
        .collect();
    (unit, verdicts)
}
