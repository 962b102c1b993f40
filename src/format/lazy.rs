//! [`LazyStoreView`]: a save opened in O(entities), each blob checked on its first read.

use std::ops::Range;
use std::sync::atomic::{AtomicU8, Ordering};

use zerocopy::IntoBytes;

use super::check::{self, Spans, blob_at, check_crc, check_span_bounds, decrease, finish};
use super::container::ArenaCrc;
use super::error::{LoadError, StoreError};
use crate::blob::{BlobRef, layout};
use crate::handle_map::{HandleMapView, Id};
use crate::store::Span;

/// What is known of a chunk or a blob of a [`LazyStoreView`]: not checked yet, good, or bad.
const UNCHECKED: u8 = 0;
const GOOD: u8 = 1;
const BAD: u8 = 2;

/// A save file opened in place with every blob left unchecked until it is read: see
/// [`StoreView::lazy`](crate::StoreView::lazy).
///
/// Opening checks the header, the section table (and every section's crc but the arena's)
/// and the index. A save of format 1.3 whose handle map is in its identity state (a store
/// that never removed an entity) opens with no work per entity but the crc of its index
/// section, one pass over its end offsets (no two blobs that a read could hand out may share
/// arena words) and a byte of state: its handles are answered arithmetically, and each blob's
/// two end offsets are checked at its first read. An older save, or one whose handle map had
/// removals, has its handle map checked, and (1.2 and before) every span inside the arena with
/// no two overlapping: O(entities), with no walk of the arena.
///
/// A read of an entity checks the crcs of the arena chunks its blob lies in (a format 1.0
/// save, with one crc for the whole arena, checks it whole at the first read) and its blob,
/// once: what was found is remembered, so a second read costs a lookup. Bad bytes in one
/// entity do not keep the others from being read: an end offset past the arena, or before the
/// one ahead of it, costs the entities whose blobs it bounds. Ends that would put two readable
/// blobs on the same words are refused at the open, as
/// [`StoreView::new`](crate::StoreView::new) refuses them.
///
/// ```text
///  bytes:  header │ table │ index … │ arena: │ chunk 0 │ chunk 1 │ chunk 2 │ … │ arena crcs
///  open:   ✓        ✓       ✓        spans in bounds, disjoint (no blob read)
///  get(e): ──────────────────────────────────────▶ crc of e's chunks, e's blob: checked once
/// ```
///
/// # Examples
///
/// ```
/// use datacomp::{Blob, LoadError, Store, StoreView};
///
/// let mut store = Store::new();
/// let ids: Vec<_> = (0..3)
///     .map(|i| store.insert(&[("level", i as f32)].into_iter().collect::<Blob>()))
///     .collect();
/// let bytes = store.to_bytes();
/// let lazy = StoreView::lazy(&bytes)?;
/// assert_eq!(lazy.get(ids[2])?.unwrap().get_float("level"), Some(2.0));
/// let levels: Vec<f32> = lazy
///     .iter()
///     .map(|(_, blob)| blob.map(|b| b.get_float("level").unwrap()))
///     .collect::<Result<_, LoadError>>()?;
/// assert_eq!(levels, [0.0, 1.0, 2.0]);
/// # Ok::<(), LoadError>(())
/// ```
pub struct LazyStoreView<'a> {
    index: HandleMapView<'a>,
    // INVARIANT: one span per item of `index`; spans (format 1.2) each inside `arena`, no two
    // overlapping; end offsets (1.3): no two blobs inside `arena` whose ends do not decrease
    // overlap, and each blob's checked on its first read.
    spans: Spans<'a>,
    arena: &'a [u32],
    crc: ArenaCrc<'a>,
    /// Per chunk of the arena (one for a whole-arena crc): UNCHECKED, GOOD or BAD.
    chunks: Vec<AtomicU8>,
    /// Per entity, in dense order: UNCHECKED, GOOD (its chunks and blob checked) or BAD.
    blobs: Vec<AtomicU8>,
}

impl<'a> LazyStoreView<'a> {
    /// Opens `bytes`: see [`StoreView::lazy`](crate::StoreView::lazy).
    pub(crate) fn new(bytes: &'a [u8]) -> Result<LazyStoreView<'a>, LoadError> {
        let check::InPlace { index, spans, arena, arena_crc, .. } = check::in_place(bytes)?;
        match spans {
            Spans::Spans(spans) => check_span_bounds(spans, arena.len(), &|d| index.id_at(d))?,
            Spans::Ends(_) => check_readable_overlap(spans, arena.len(), &|d| index.id_at(d))?,
        }
        let chunks = match arena_crc {
            ArenaCrc::Whole { .. } => 1,
            ArenaCrc::Chunks { crcs, .. } => crcs.len(),
        };
        let unchecked = |n| std::iter::repeat_with(|| AtomicU8::new(UNCHECKED)).take(n).collect();
        Ok(LazyStoreView {
            index,
            spans,
            arena,
            crc: arena_crc,
            chunks: unchecked(chunks),
            blobs: unchecked(spans.len()),
        })
    }

    /// The blob of `id`, if it is live in the saved store, after checking it and the crcs of
    /// the arena chunks it lies in (once: later reads remember the answer).
    ///
    /// # Errors
    ///
    /// [`FileError::ChunkCrc`](crate::format::FileError::ChunkCrc) (or
    /// [`FileError::Crc`](crate::format::FileError::Crc) for a format 1.0 save) if a chunk the blob
    /// lies in does not match its crc, [`StoreError::Blob`] if the blob is malformed; for a
    /// format 1.3 save, [`StoreError::SpanOutOfArena`] if the blob's end offset is past the
    /// arena, [`StoreError::EndsDecrease`] if it comes before the end of the blob before.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, Store, StoreView};
    ///
    /// let mut store = Store::new();
    /// let id = store.insert(&[("hp", 7.0)].into_iter().collect::<Blob>());
    /// let bytes = store.to_bytes();
    /// let lazy = StoreView::lazy(&bytes)?;
    /// assert_eq!(lazy.get(id)?.unwrap().get_float("hp"), Some(7.0));
    /// store.remove(id);
    /// assert!(lazy.get(id)?.is_some(), "the view reads the bytes it was given");
    /// # Ok::<(), datacomp::LoadError>(())
    /// ```
    pub fn get(&self, id: Id) -> Result<Option<BlobRef<'a>>, LoadError> {
        match self.index.dense_index(id) {
            Some(dense) => self.blob_at(dense).map(Some),
            None => Ok(None),
        }
    }

    /// Whether `id` is live in the saved store (nothing is checked).
    #[must_use]
    pub fn contains(&self, id: Id) -> bool {
        self.index.dense_index(id).is_some()
    }

    /// Number of entities.
    #[must_use]
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether the saved store has no entities.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Iterates over `(Id, blob or why it cannot be read)` in the saved dense order, checking
    /// each blob as [`get`](LazyStoreView::get) does.
    #[must_use]
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (Id, Result<BlobRef<'a>, LoadError>)> + '_ {
        (0..self.len()).map(|d| (self.index.id_at(d), self.blob_at(d)))
    }

    /// The blob at dense index `dense`, checked.
    fn blob_at(&self, dense: usize) -> Result<BlobRef<'a>, LoadError> {
        if self.blobs[dense].load(Ordering::Relaxed) == GOOD {
            // Checked at its first read: inside the arena, its end not before its start.
            return Ok(blob_at(self.arena, self.spans.range(dense)));
        }
        let span = self.spans.span(dense).map_err(|bad| decrease(self.index.id_at(dense), bad))?;
        let Some(words) = self.arena.get(span.range()) else {
            let (offset, words) = (span.offset() as u32, span.words() as u32);
            let (id, arena_words) = (self.index.id_at(dense), self.arena.len() as u64);
            return Err(LoadError::Store(StoreError::SpanOutOfArena {
                id,
                offset,
                words,
                arena_words,
            }));
        };
        let bytes = self.arena.as_bytes();
        let (start, end) = (span.offset() * 4, (span.offset() + span.words()) * 4);
        match self.crc {
            ArenaCrc::Whole { .. } => self.check_chunk(0, 0..bytes.len())?,
            ArenaCrc::Chunks { chunk_bytes, .. } => {
                // An empty span lies in no chunk.
                for chunk in start / chunk_bytes..end.div_ceil(chunk_bytes) {
                    let range = chunk * chunk_bytes..((chunk + 1) * chunk_bytes).min(bytes.len());
                    self.check_chunk(chunk, range)?;
                }
            }
        }
        let mut scratch = layout::Scratch::default();
        // A zero-length blob is the empty blob (format 1.3).
        let valid = if words.is_empty() { Ok(()) } else { layout::validate(words, &mut scratch) };
        match valid {
            Ok(()) => {
                self.blobs[dense].store(GOOD, Ordering::Relaxed);
                Ok(blob_at(self.arena, span.range()))
            }
            Err(error) => {
                self.blobs[dense].store(BAD, Ordering::Relaxed);
                Err(LoadError::Store(StoreError::Blob { id: self.index.id_at(dense), error }))
            }
        }
    }

    /// Checks chunk `chunk`, the arena's bytes `range` (the whole arena for a whole crc),
    /// unless it was checked before.
    fn check_chunk(&self, chunk: usize, range: Range<usize>) -> Result<(), LoadError> {
        if self.chunks[chunk].load(Ordering::Relaxed) == GOOD {
            return Ok(());
        }
        let bytes = self.arena.as_bytes();
        let report = check_crc(bytes, range, self.crc, |_| {});
        let result = finish([report], self.crc, Spans::Spans(&[]), &|_| unreachable!("no spans"));
        let state = if result.is_ok() { GOOD } else { BAD };
        self.chunks[chunk].store(state, Ordering::Relaxed);
        result
    }
}

/// Format 1.3: refuses ends that would put two blobs a read could hand out (each inside the
/// arena, its end not before its start; an empty one inside another's words counts, as
/// salvage counts it) on the same words, as the full readers refuse the file: each end is otherwise checked only against the one before, on its blob's first read.
/// One pass over the ends; a sort only where they are out of order (a damaged file).
fn check_readable_overlap(
    spans: Spans<'_>,
    arena_words: usize,
    id_at: &impl Fn(usize) -> Id,
) -> Result<(), LoadError> {
    let readable = |d: usize| {
        // A blob whose end comes before its start is not read; it stands as an empty span at
        // its start, as salvage places it.
        let span = spans.span(d).unwrap_or_else(|(start, _)| Span::new(start as usize, 0));
        (span.offset() + span.words() <= arena_words).then_some(span)
    };
    let mut far = 0;
    let in_order = (0..spans.len()).filter_map(readable).all(|span| {
        let fits = span.offset() >= far;
        far = span.offset() + span.words();
        fits
    });
    if in_order {
        return Ok(());
    }
    let mut sorted: Vec<(usize, usize, usize)> = (0..spans.len())
        .filter_map(|d| readable(d).map(|s| (s.offset(), s.offset() + s.words(), d)))
        .collect();
    // By offset; equal offsets in dense order, so that errors name the same pair each time.
    sorted.sort_unstable();
    let mut reach: Option<(usize, usize)> = None; // (end, dense) of the furthest so far
    for (start, end, d) in sorted {
        if let Some((far, first)) = reach
            && start < far
        {
            let (first, second) = (id_at(first.min(d)), id_at(first.max(d)));
            return Err(LoadError::Store(StoreError::SpansOverlap { first, second }));
        }
        if reach.is_none_or(|(far, _)| end > far) {
            reach = Some((end, d));
        }
    }
    Ok(())
}

impl std::fmt::Debug for LazyStoreView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyStoreView")
            .field("entities", &self.len())
            .field("arena_bytes", &(self.arena.len() * 4))
            .finish_non_exhaustive()
    }
}
