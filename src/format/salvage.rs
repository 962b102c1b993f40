//! [`Store::salvage`]: what can be read of a damaged save.

use zerocopy::IntoBytes;
use zerocopy::little_endian::U32;

use super::check::{self, SaveParts, Spans, check_crc, finish, index_and_arena_tolerant};
use super::container::ArenaCrc;
use super::error::{LoadError, StoreError};
use super::upgrade::{self, LoadOptions};
use super::version::{KEY_HASH_FX32_BYTES, KEY_HASH_FX32_WORDS};
use crate::blob::layout;
use crate::handle_map::{HandleMap, Id, RawHandleMap};
use crate::names::KeyNames;
use crate::store::proto::{self, Links, MAX_CHAIN};
use crate::store::{Span, Store};

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
    /// ([`FileError::ChunkCrc`](crate::format::FileError::ChunkCrc), or
    /// [`FileError::Crc`](crate::format::FileError::Crc) for a format 1.0 save's whole arena), a
    /// malformed blob, or a span that overlaps another's. Held as runs of consecutive handles
    /// lost for the same reason (one a damaged chunk, typically), not one entry an entity.
    pub lost: Lost,
    /// Sections it did without, and why: the key names (the store then names no key) and the
    /// arena's chunk crcs (the arena's whole crc then stands in: a changed byte anywhere in it
    /// costs every entity).
    pub damaged: Vec<LoadError>,
}

/// The entities a [`Salvage`] left out: runs of consecutive handles ([`LostRun`]), each lost
/// for one reason, in the saved dense order. Its memory is one entry a run, whatever the
/// number of entities in it: [`len`](Lost::len) counts them, [`iter`](Lost::iter) names
/// them one by one without holding them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lost {
    runs: Vec<LostRun>,
    len: usize,
}

impl Lost {
    /// How many entities were lost.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no entity was lost.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The runs, in the saved dense order.
    #[must_use]
    pub fn runs(&self) -> &[LostRun] {
        &self.runs
    }

    /// Each lost entity with why, in the saved dense order.
    pub fn iter(&self) -> impl Iterator<Item = (Id, &LoadError)> + '_ {
        self.runs.iter().flat_map(|run| run.ids().map(move |id| (id, &run.why)))
    }

    /// Why `id` was lost, if it was.
    #[must_use]
    pub fn why(&self, id: Id) -> Option<&LoadError> {
        self.runs.iter().find(|run| run.contains(id)).map(LostRun::why)
    }
}

/// Entities of consecutive handles (slot indices one apart, the same generation and type),
/// lost for the same reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LostRun {
    first: Id,
    len: u32,
    why: LoadError,
}

impl LostRun {
    /// The run's first handle.
    #[must_use]
    pub fn first(&self) -> Id {
        self.first
    }

    /// The run's last handle.
    #[must_use]
    pub fn last(&self) -> Id {
        Id::from_bits(self.first.to_bits() + u64::from(self.len) - 1)
    }

    /// How many entities the run holds (at least 1).
    #[must_use]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Never: a run holds at least one entity.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Why its entities were lost.
    #[must_use]
    pub fn why(&self) -> &LoadError {
        &self.why
    }

    /// Its handles, first to last.
    pub fn ids(&self) -> impl Iterator<Item = Id> + use<> {
        let first = self.first.to_bits();
        (0..u64::from(self.len)).map(move |i| Id::from_bits(first + i))
    }

    /// Whether `id` is one of its handles.
    #[must_use]
    pub fn contains(&self, id: Id) -> bool {
        (self.first.to_bits()..=self.last().to_bits()).contains(&id.to_bits())
    }
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
    /// use datacomp::{Blob, LoadError, Store};
    /// use datacomp::format::FileError;
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
    /// // As one run of two handles, lost to one damaged chunk.
    /// let run = &salvage.lost.runs()[0];
    /// assert_eq!((run.first(), run.last(), run.len()), (a, b, 2));
    /// assert!(matches!(run.why(), LoadError::File(FileError::ChunkCrc { chunk: 0, .. })));
    /// assert_eq!(salvage.lost.iter().map(|(id, _)| id).collect::<Vec<_>>(), [a, b]);
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
            lineage,
            prototypes,
            ..
        } = parts;
        // As `LoadOptions::load_bytes`: key hash 1 was written before the key tree, and its
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
        // Each entity is lost at most once, with the first problem found: `is_lost` marks it.
        // `lost` holds runs, in dense order but for the overlaps: an entity's own error is a
        // run of one, a damaged chunk's entities one run (memory a run's, not an entity's).
        let mut is_lost = vec![false; spans.len()];
        let mut lost: Vec<Entry> = decreasing
            .into_iter()
            .map(|(d, bad)| {
                is_lost[d] = true;
                Entry::own(d, id_at(d), check::decrease(id_at(d), bad))
            })
            .collect();
        let chunk_of = |span: &Span| {
            let (start, end) = (span.offset() * 4, (span.offset() + span.words()) * 4);
            let touched = start / unit..end.div_ceil(unit).min(verdicts.len());
            verdicts[touched].iter().find_map(|v| v.as_ref().err())
        };
        let mut scratch = layout::Scratch::default();
        for (d, span) in spans.iter().enumerate() {
            if is_lost[d] {
                continue;
            }
            let Some(blob) = words.get(span.range()) else {
                let (offset, count) = (span.offset() as u32, span.words() as u32);
                let arena_words = words.len() as u64;
                let e = LoadError::Store(StoreError::SpanOutOfArena {
                    id: id_at(d),
                    offset,
                    words: count,
                    arena_words,
                });
                is_lost[d] = true;
                lost.push(Entry::own(d, id_at(d), e));
                continue;
            };
            if let Some(e) = chunk_of(span) {
                is_lost[d] = true;
                let id = id_at(d);
                match lost.last_mut() {
                    Some(run) if run.extends_to(d, id, e) => run.len += 1,
                    _ => lost.push(Entry::own(d, id, e.clone())),
                }
                continue;
            }
            // A zero-length blob is the empty blob (format 1.3).
            if let Err(error) = layout::validate(blob, &mut scratch)
                && !blob.is_empty()
            {
                is_lost[d] = true;
                let e = LoadError::Store(StoreError::Blob { id: id_at(d), error });
                lost.push(Entry::own(d, id_at(d), e));
            }
        }
        lose_overlaps(spans, words.len(), &id_at, &mut is_lost, &mut lost);
        let links = lose_instances(prototypes, &id_at, &mut is_lost, &mut lost, &mut damaged);
        // By handle, before the lost are removed and the dense positions move.
        let links = Links::from_dense(&links, id_at);
        drop(is_lost);
        let lost = report(lost, spans, &mut words);
        for run in lost.runs() {
            for id in run.ids() {
                index.remove(id);
            }
        }
        check::fill_empties(index.values_mut(), &mut words)?;
        let names = match tree {
            Some(tree) => {
                if key_hash == KEY_HASH_FX32_BYTES {
                    upgrade::from_hash2(&index, &mut words, &tree)?;
                }
                tree
            }
            None => upgrade::rehash(&index, &mut words, &old_names, &LoadOptions::new())?,
        };
        let mut store = Store::from_parts(index, words, names, data_version, lineage);
        store.set_links(links);
        Ok(Salvage { store, lost, damaged })
    }
}

/// The prototype links the salvage keeps, by saved dense position: links that do not check
/// out are done without (noted in `damaged`: the instances then hold only their overrides),
/// and an instance whose prototype was lost is lost too (its chain does not check out), with
/// its own instances, after the others.
fn lose_instances(
    prototypes: &[U32],
    id_at: &impl Fn(usize) -> Id,
    is_lost: &mut [bool],
    lost: &mut Vec<Entry>,
    damaged: &mut Vec<LoadError>,
) -> Vec<U32> {
    if let Err(error) = proto::check_dense(prototypes, id_at) {
        damaged.push(LoadError::Store(error));
        return Vec::new();
    }
    let mut links = prototypes.to_vec();
    // A chain holds at most MAX_CHAIN links, so a loss reaches every instance below it in as
    // many rounds: O(MAX_CHAIN × n).
    for _ in 0..=MAX_CHAIN {
        let mut spread = false;
        for d in 0..links.len() {
            let Some(p) = (links[d].get() as usize).checked_sub(1) else { continue };
            if is_lost[p] && !is_lost[d] {
                is_lost[d] = true;
                spread = true;
                let prototype = u64::from(links[d].get());
                let e = LoadError::Store(StoreError::PrototypeMissing { id: id_at(d), prototype });
                lost.push(Entry::own(d, id_at(d), e));
            }
        }
        if !spread {
            break;
        }
    }
    for (d, link) in links.iter_mut().enumerate() {
        if is_lost[d] {
            *link = U32::ZERO;
        }
    }
    links
}

/// The runs as the report, in dense order (each entity is in them at most once), neighbouring
/// runs joined; the arena words of their entities zeroed.
fn report(mut lost: Vec<Entry>, spans: &[Span], words: &mut [u32]) -> Lost {
    lost.sort_unstable_by_key(|e| e.dense);
    lost.dedup_by(|next, run| {
        let joins = run.extends_to(next.dense as usize, next.first, &next.why);
        if joins {
            run.len += next.len;
        }
        joins
    });
    for run in &lost {
        let dense = run.dense as usize..(run.dense + run.len) as usize;
        for span in &spans[dense] {
            if let Some(blob) = words.get_mut(span.range()) {
                blob.fill(0);
            }
        }
    }
    // The same memory, as the report: a run's dense place was in its padding.
    let len = lost.iter().map(|e| e.len as usize).sum();
    let runs = lost.into_iter().map(|e| LostRun { first: e.first, len: e.len, why: e.why });
    Lost { runs: runs.collect(), len }
}

/// A run of lost entities while salvage checks them: a [`LostRun`] and its first entity's
/// dense place (in what would be the run's padding: the report reuses the memory).
struct Entry {
    first: Id,
    len: u32,
    dense: u32,
    why: LoadError,
}

impl Entry {
    /// One entity (at dense place `d`, a `u32` in the file) lost for `why`.
    fn own(d: usize, first: Id, why: LoadError) -> Entry {
        Entry { first, len: 1, dense: d as u32, why }
    }

    /// Whether the entity at dense place `d`, handle `id`, lost for `why`, extends the run:
    /// the next place and handle, the same reason.
    fn extends_to(&self, d: usize, id: Id, why: &LoadError) -> bool {
        let last = Id::from_bits(self.first.to_bits() + u64::from(self.len) - 1);
        self.dense as usize + self.len as usize == d && extends(last, id) && self.why == *why
    }
}

/// Whether `next` is the handle after `last`: the next slot, the same generation and type.
fn extends(last: Id, next: Id) -> bool {
    last.index() < u32::MAX && next.to_bits() == last.to_bits() + 1
}

/// Marks each entity whose span (inside an arena of `arena_words`) overlaps another's as lost,
/// with the overlap, unless it is lost already: a sweep in offset order. A span's offset and
/// length, and a dense index, fit in 32 bits (the file holds them as `u32`s): 12 bytes an
/// entity.
fn lose_overlaps(
    spans: &[Span],
    arena_words: usize,
    id_at: &impl Fn(usize) -> Id,
    is_lost: &mut [bool],
    lost: &mut Vec<Entry>,
) {
    let mut sorted: Vec<(u32, u32, u32)> = spans
        .iter()
        .enumerate()
        .filter(|(_, s)| s.offset() + s.words() <= arena_words)
        .map(|(d, s)| (s.offset() as u32, s.words() as u32, d as u32))
        .collect();
    sorted.sort_unstable();
    let mut reach: Option<(u64, usize)> = None; // (end, dense) of the furthest span so far
    for &(start, words, d) in &sorted {
        let (start, end, d) = (u64::from(start), u64::from(start) + u64::from(words), d as usize);
        if let Some((far, first)) = reach
            && start < far
        {
            let e = LoadError::Store(StoreError::SpansOverlap {
                first: id_at(first),
                second: id_at(d),
            });
            for at in [first, d] {
                if !std::mem::replace(&mut is_lost[at], true) {
                    lost.push(Entry::own(at, id_at(at), e.clone()));
                }
            }
        }
        if reach.is_none_or(|(far, _)| end > far) {
            reach = Some((end, d));
        }
    }
}

/// The index as a map of spans, and (format 1.3) each entity whose end offset comes before
/// its start, given an empty span: it is lost.
fn index_of(
    raw: &RawHandleMap<'_>,
    items_kind: u32,
) -> Result<(HandleMap<Span>, check::Decreasing), LoadError> {
    let owned = check::owned_spans(raw, items_kind)?;
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
