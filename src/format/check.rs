//! Checking a save's arena: its checksums, every entity's span and blob, on all cores.
//!
//! ```text
//!  arena bytes   ┌── part 0 ───────────────────┬── part 1 ───────────────────┐
//!  (crc)         │ chunk 0 │ chunk 1 │ …       │ … │ chunk c-1               │  each thread checks
//!                └─────────────────────────────┴─────────────────────────────┘  the crcs of its
//!  dense spans   ┌── part 0 ──────────┬── part 1 ──────────┐                    chunks, then the
//!  (blobs)       │ span 0 │ … │ n/2-1 │ n/2 │ … │ span n-1 │                    blobs of its spans
//!                └────────────────────┴────────────────────┘
//! ```
//!
//! A part is a range of the arena's bytes and a range of the dense spans. Its thread checks
//! the checksum of its bytes (a crc per chunk, or its share of the whole arena's crc, combined
//! afterwards), then each of its spans: inside the arena, holding a valid blob, and after the
//! one before it. Spans in dense order that each start at or after the end of the one before
//! prove that no two overlap, with no sort (a compacted store is in this order); else every
//! span is sorted by offset, as a general check must.
//!
//! Errors are the ones a single pass would give, whatever the threads: a checksum first (the
//! lowest chunk), then the span of the lowest dense index, then the first overlap by offset.

use std::ops::Range;
use std::sync::Mutex;

use zerocopy::little_endian::U32;
use zerocopy::{FromBytes, IntoBytes};

use super::container::{ArenaCrc, ENDS, PROTOTYPES, SAVE, parse_tolerant};
use super::error::{FileError, LoadError, StoreError};
use super::version::{KEY_HASH_FX32_BYTES, KEY_HASH_FX32_WORDS};
use crate::blob::BlobRef;
use crate::blob::layout;
use crate::handle_map::{HandleMapError, HandleMapView, Id, RawHandleMap, RawHeader};
use crate::names::KeyNames;
use crate::store::proto;
use crate::store::{STORE_TYPE_ID, Span};

/// An arena smaller than this is checked on the calling thread: a thread costs tens of
/// microseconds to start, what a single thread checks about 200 KiB in.
const PARALLEL_BYTES: usize = 1 << 20;

/// Each part gets at least this many bytes of the arena.
const PART_BYTES: usize = 512 << 10;

/// A save's parts as a view reads them in place: its index, spans and arena borrowed from the
/// bytes, its key names decoded and checked, and the arena's crcs not yet checked. The one
/// opening of [`StoreView`](crate::StoreView) and [`LazyStoreView`].
pub(crate) struct InPlace<'a> {
    pub(crate) names: KeyNames,
    pub(crate) index: HandleMapView<'a>,
    pub(crate) spans: Spans<'a>,
    pub(crate) arena_bytes: &'a [u8],
    pub(crate) arena: &'a [u32],
    pub(crate) arena_crc: ArenaCrc<'a>,
    /// The prototype links, checked: one per entity in dense order, or none.
    pub(crate) prototypes: &'a [U32],
}

/// The key names of a save to be read in place, decoded and checked: a view cannot rehash, so
/// a save of key hash 1 is refused ([`StoreError::KeyHashView`]).
pub(crate) fn view_names(parts: &SaveParts<'_>) -> Result<KeyNames, LoadError> {
    let refused = LoadError::Store(StoreError::KeyHashView { key_hash: parts.key_hash });
    if parts.key_hash == KEY_HASH_FX32_WORDS {
        return Err(refused);
    }
    let names = KeyNames::decode(parts.names, parts.names_kind, parts.key_hash)?;
    // Key hash 2 differs from 3 only in keys whose names hold an empty segment.
    if parts.key_hash == KEY_HASH_FX32_BYTES && !super::upgrade::hash2_changes(&names).is_empty() {
        return Err(refused);
    }
    Ok(names)
}

/// Opens `bytes` in place: see [`InPlace`].
pub(crate) fn in_place(bytes: &[u8]) -> Result<InPlace<'_>, LoadError> {
    let parts = index_and_arena(bytes)?;
    let names = view_names(&parts)?;
    let SaveParts {
        arena_crc, index: raw_index, arena: arena_bytes, items_kind, prototypes, ..
    } = parts;
    let ends = items_kind == ENDS.0;
    let item_size = if ends { size_of::<U32>() } else { size_of::<Span>() };
    let index = HandleMapView::new(&raw_index, item_size)?;
    proto::check_dense(prototypes, |d| index.id_at(d))?;
    // Span and U32 are unaligned, and the items section's size was checked against the count.
    let size_error = LoadError::Store(StoreError::SectionSize {
        section: if ends { ENDS.1 } else { "index items" },
        expected: (index.len() * item_size) as u64,
        found: raw_index.items.len() as u64,
    });
    let spans = if ends {
        Spans::Ends(<[U32]>::ref_from_bytes(raw_index.items).map_err(|_| size_error.clone())?)
    } else {
        Spans::Spans(<[Span]>::ref_from_bytes(raw_index.items).map_err(|_| size_error.clone())?)
    };
    let arena = <[u32]>::ref_from_bytes(arena_bytes).map_err(|_| {
        LoadError::Store(StoreError::Misaligned {
            section: "arena",
            address: arena_bytes.as_ptr() as usize,
        })
    })?;
    Ok(InPlace { names, index, spans, arena_bytes, arena, arena_crc, prototypes })
}

/// Where each entity's blob lies in a save's arena, as its index holds them, in dense order.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Spans<'a> {
    /// Format 1.2 and before: each blob's first word and length.
    Spans(&'a [Span]),
    /// Format 1.3: each blob's end, in words; blob `d` starts where blob `d - 1` ends (the
    /// first at 0), so ends that never decrease prove no two blobs overlap. A zero-length
    /// blob is the empty blob.
    Ends(&'a [U32]),
}

impl Spans<'_> {
    /// Number of entities.
    pub(crate) fn len(self) -> usize {
        match self {
            Spans::Spans(spans) => spans.len(),
            Spans::Ends(ends) => ends.len(),
        }
    }

    /// The span of the blob at `dense` (below `len`), or `Err((start, end))` when its end
    /// comes before its start (the ends decrease there).
    #[inline]
    pub(crate) fn span(self, dense: usize) -> Result<Span, (u32, u32)> {
        match self {
            Spans::Spans(spans) => Ok(spans[dense]),
            Spans::Ends(ends) => {
                let start = dense.checked_sub(1).map_or(0, |before| ends[before].get());
                let end = ends[dense].get();
                match end.checked_sub(start) {
                    Some(words) => Ok(Span::new(start as usize, words as usize)),
                    None => Err((start, end)),
                }
            }
        }
    }

    /// The arena range of the blob at `dense`, whose span was checked ([`Spans::span`]).
    #[inline]
    pub(crate) fn range(self, dense: usize) -> Range<usize> {
        self.span(dense).map_or(0..0, Span::range)
    }
}

/// The error of a blob at `dense` whose end comes before its start.
pub(crate) fn decrease(id: Id, (start, end): (u32, u32)) -> LoadError {
    LoadError::Store(StoreError::EndsDecrease { id, start, end })
}

/// The blob at `range` of a checked arena: a zero-length one is the empty blob.
#[inline]
pub(crate) fn blob_at(arena: &[u32], range: Range<usize>) -> BlobRef<'_> {
    if range.is_empty() {
        BlobRef::from_valid(&layout::EMPTY)
    } else {
        BlobRef::from_valid(&arena[range])
    }
}

/// A save's index with its items as spans, for a [`HandleMap`](crate::HandleMap) of them: a
/// format 1.3 index's end offsets turned into spans, with each entity whose end comes before
/// its start given an empty span and listed (dense index, start, end).
pub(crate) struct OwnedSpans<'a> {
    /// The end offsets, as the file holds them: what a load checks, as a view does.
    pub(crate) ends: Spans<'a>,
    pub(crate) header: RawHeader,
    pub(crate) spans: Vec<Span>,
    pub(crate) decreasing: Decreasing,
}

/// Each entity of a format 1.3 index whose end comes before its start: its dense index, and
/// its start and end.
pub(crate) type Decreasing = Vec<(usize, (u32, u32))>;

impl OwnedSpans<'_> {
    /// The raw index with these spans as its items.
    pub(crate) fn raw<'a>(&'a self, raw: &RawHandleMap<'a>) -> RawHandleMap<'a> {
        RawHandleMap { header: self.header, items: self.spans.as_bytes(), ..*raw }
    }
}

/// The spans of a format 1.3 index, whose items section (of kind `items_kind`) holds end
/// offsets; `None` for an older index, whose items are spans already.
///
/// # Errors
///
/// [`HandleMapError::SectionSize`] (as [`LoadError::HandleMap`]) if the header's item size
/// is not 4 or the section does not hold one end per item, and the other checks of the
/// index header that a view makes first.
pub(crate) fn owned_spans<'a>(
    raw: &RawHandleMap<'a>,
    items_kind: u32,
) -> Result<Option<OwnedSpans<'a>>, LoadError> {
    if items_kind != ENDS.0 {
        return Ok(None);
    }
    // The checks a view makes first, in the same order: the same error for the same file.
    crate::handle_map::check_header(raw, size_of::<U32>())?;
    let mut header = raw.header;
    let len = u64::from(header.len.get());
    let ends = <[U32]>::ref_from_bytes(raw.items).ok().filter(|e| e.len() as u64 == len);
    let ends = ends.ok_or_else(|| HandleMapError::SectionSize {
        section: "items",
        expected: len * 4,
        found: raw.items.len() as u64,
    })?;
    let ends = Spans::Ends(ends);
    let mut decreasing = Vec::new();
    let spans = (0..ends.len())
        .map(|d| {
            ends.span(d).unwrap_or_else(|bad| {
                decreasing.push((d, bad));
                Span::new(bad.0 as usize, 0)
            })
        })
        .collect();
    header.item_size = U32::new(size_of::<Span>() as u32);
    Ok(Some(OwnedSpans { ends, header, spans, decreasing }))
}

/// Gives each entity of a loaded store whose span is empty (a format 1.3 empty blob) the
/// empty blob's words, appended to the arena: a store's spans each hold a blob.
///
/// # Errors
///
/// [`StoreError::SectionSize`] for the arena if the empty blobs would take it past its limit
/// of 2^32 words (a file of 16 GiB).
pub(crate) fn fill_empties<'s>(
    spans: impl Iterator<Item = &'s mut Span>,
    words: &mut Vec<u32>,
) -> Result<(), LoadError> {
    for span in spans {
        if span.words() == 0 {
            let at = words.len();
            if crate::store::ArenaFull::check(at + layout::EMPTY.len()).is_err() {
                let (expected, found) = (u64::from(u32::MAX) * 4, (at as u64 + 2) * 4);
                return Err(LoadError::Store(StoreError::SectionSize {
                    section: "arena",
                    expected,
                    found,
                }));
            }
            words.extend_from_slice(&layout::EMPTY);
            *span = Span::new(at, layout::EMPTY.len());
        }
    }
    Ok(())
}

/// How many threads to check an arena of `bytes` with: one for a small one, else one per
/// core, each with at least [`PART_BYTES`]; never more than `max`.
fn parts_for(bytes: usize, max: Option<usize>) -> usize {
    // Asked once: on Linux the answer reads cgroup files, which costs allocations and
    // system calls.
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let max = max.unwrap_or(usize::MAX).min(bytes / PART_BYTES);
    if bytes < PARALLEL_BYTES || max <= 1 {
        return 1;
    }
    let cores = *CORES
        .get_or_init(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get));
    cores.min(max).max(1)
}

/// Runs `work(p, input)` for each input, each on its own thread but the first, which runs on
/// the calling thread; results in input order. A part whose thread cannot be started runs on
/// the calling thread instead.
fn on_threads<T: Send, R: Send>(inputs: Vec<T>, work: impl Fn(usize, T) -> R + Sync) -> Vec<R> {
    let cells: Vec<Mutex<Option<T>>> = inputs.into_iter().map(|i| Mutex::new(Some(i))).collect();
    // Each input is taken once: by its thread, or here if the thread did not start.
    let run = |p: usize| {
        let input = cells[p].lock().ok().and_then(|mut cell| cell.take());
        input.map(|input| work(p, input))
    };
    let run = &run;
    std::thread::scope(|scope| {
        let handles: Vec<_> = (1..cells.len())
            .map(|p| std::thread::Builder::new().spawn_scoped(scope, move || run(p)).ok())
            .collect();
        let mut out = Vec::with_capacity(cells.len());
        out.extend(run(0));
        for (p, handle) in (1..).zip(handles) {
            let result = match handle {
                Some(handle) => {
                    handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                }
                None => run(p),
            };
            out.extend(result);
        }
        assert_eq!(out.len(), cells.len(), "every part runs exactly once");
        out
    })
}

/// The unit parts of an arena are cut in: its chunk, so that no chunk is in two parts.
pub(super) fn unit(crc: ArenaCrc<'_>) -> usize {
    match crc {
        ArenaCrc::Chunks { chunk_bytes, .. } => chunk_bytes,
        ArenaCrc::Whole { .. } => 64 << 10,
    }
}

/// Part `p` of `parts` of `0..len`, in units of `unit` (the last part takes the rest).
fn part_range(len: usize, unit: usize, p: usize, parts: usize) -> Range<usize> {
    let units = len.div_ceil(unit);
    let at = |p: usize| (units * p / parts * unit).min(len);
    at(p)..at(p + 1)
}

/// What one part found.
pub(super) struct PartReport {
    /// Its share of the whole arena's crc, or the first chunk whose crc fails.
    crc: Result<crc32fast::Hasher, LoadError>,
    /// The first span that is outside the arena or holds an invalid blob, by dense index.
    spans: Result<Order, LoadError>,
}

/// Whether a part's spans, in dense order, each start at or after the end of the one before:
/// then the first's offset and the last's end (in words), or `None` for no spans.
#[derive(Clone, Copy)]
enum Order {
    Ascending(Option<(usize, usize)>),
    Unordered,
}

/// Checks the crc of `range` of the arena's bytes, one unit (chunk) at a time, calling
/// `visit` with each chunk's range first (a copy reads the chunk into cache for the crc).
pub(super) fn check_crc(
    arena: &[u8],
    range: Range<usize>,
    crc: ArenaCrc<'_>,
    mut visit: impl FnMut(Range<usize>),
) -> PartReport {
    let unit = unit(crc);
    let mut hasher = crc32fast::Hasher::new();
    let mut at = range.start;
    while at < range.end {
        let chunk = at..(at + unit).min(range.end);
        visit(chunk.clone());
        match crc {
            ArenaCrc::Whole { .. } => hasher.update(&arena[chunk.clone()]),
            ArenaCrc::Chunks { offset, crcs, .. } => {
                let found = crc32fast::hash(&arena[chunk.clone()]);
                // The part starts on a chunk boundary and `crcs` covers the arena.
                let index = at / unit;
                let expected = crcs.get(index).map_or(!found, |c| c.get());
                if found != expected {
                    let offset = offset + at as u64;
                    let chunk = index as u64;
                    let crc = Err(LoadError::File(FileError::ChunkCrc {
                        chunk,
                        offset,
                        expected,
                        found,
                    }));
                    return PartReport { crc, spans: Ok(Order::Ascending(None)) };
                }
            }
        }
        at = chunk.end;
    }
    PartReport { crc: Ok(hasher), spans: Ok(Order::Ascending(None)) }
}

/// Checks the spans `dense` of `spans`: each inside `arena` holding a valid blob, and whether
/// they are in ascending order.
fn check_part(
    spans: Spans<'_>,
    dense: Range<usize>,
    arena: &[u32],
    id_at: &(impl Fn(usize) -> Id + Sync),
) -> Result<Order, LoadError> {
    let mut scratch = layout::Scratch::default();
    let mut ascending = true;
    let mut bounds: Option<(usize, usize)> = None;
    for d in dense {
        let span = spans.span(d).map_err(|bad| decrease(id_at(d), bad))?;
        let Some(words) = arena.get(span.range()) else {
            let (offset, words) = (span.offset() as u32, span.words() as u32);
            let arena_words = arena.len() as u64;
            let id = id_at(d);
            return Err(LoadError::Store(StoreError::SpanOutOfArena {
                id,
                offset,
                words,
                arena_words,
            }));
        };
        // A zero-length blob is the empty blob (format 1.3).
        if !words.is_empty() {
            layout::validate(words, &mut scratch)
                .map_err(|error| LoadError::Store(StoreError::Blob { id: id_at(d), error }))?;
        }
        let (offset, end) = (span.offset(), span.offset() + span.words());
        bounds = match bounds {
            None => Some((offset, end)),
            Some((first, last_end)) => {
                ascending &= offset >= last_end;
                Some((first, end))
            }
        };
    }
    Ok(if ascending { Order::Ascending(bounds) } else { Order::Unordered })
}

/// Checks that no two spans overlap, by sorting them by offset: the general case, for spans
/// that are not in ascending dense order.
pub(super) fn check_overlap(
    spans: Spans<'_>,
    id_at: &impl Fn(usize) -> Id,
) -> Result<(), LoadError> {
    // Every span was checked (`check_part`): none decreases.
    let mut sorted: Vec<(usize, usize, usize)> = (0..spans.len())
        .filter_map(|d| spans.span(d).ok().map(|s| (s.offset(), s.words(), d)))
        .collect();
    // By offset; equal offsets in dense order, so that errors name the same pair each time.
    sorted.sort_unstable();
    for pair in sorted.windows(2) {
        let ((offset, words, first), (next, _, second)) = (pair[0], pair[1]);
        if offset + words > next {
            return Err(LoadError::Store(StoreError::SpansOverlap {
                first: id_at(first),
                second: id_at(second),
            }));
        }
    }
    Ok(())
}

/// Checks an arena read in place: its checksums, then that every span of `spans` (in dense
/// order; `id_at` names the entity of a dense index) lies inside it and holds a valid blob,
/// and that no two spans overlap. `bytes` are the arena's bytes, `arena` the same as words.
pub(crate) fn check_arena(
    bytes: &[u8],
    arena: &[u32],
    crc: ArenaCrc<'_>,
    spans: Spans<'_>,
    id_at: impl Fn(usize) -> Id + Sync,
    threads: Option<usize>,
) -> Result<(), LoadError> {
    check_arena_on(parts_for(bytes.len(), threads), bytes, arena, crc, spans, id_at)
}

/// [`check_arena`] on `parts` threads.
fn check_arena_on(
    parts: usize,
    bytes: &[u8],
    arena: &[u32],
    crc: ArenaCrc<'_>,
    spans: Spans<'_>,
    id_at: impl Fn(usize) -> Id + Sync,
) -> Result<(), LoadError> {
    let check = |p: usize| {
        let range = part_range(bytes.len(), unit(crc), p, parts);
        let mut report = check_crc(bytes, range, crc, |_| {});
        if report.crc.is_ok() {
            report.spans = check_part(spans, part_range(spans.len(), 1, p, parts), arena, &id_at);
        }
        report
    };
    if parts == 1 {
        // No thread, and no allocation.
        return finish([check(0)], crc, spans, &id_at);
    }
    let reports = on_threads(vec![(); parts], |p, ()| check(p));
    finish(reports, crc, spans, &id_at)
}

/// Checks an arena's checksums only, as [`check_arena`] does first.
pub(crate) fn check_checksums(bytes: &[u8], crc: ArenaCrc<'_>) -> Result<(), LoadError> {
    let parts = parts_for(bytes.len(), None);
    let reports = on_threads(vec![(); parts], |p, ()| {
        check_crc(bytes, part_range(bytes.len(), unit(crc), p, parts), crc, |_| {})
    });
    finish(reports, crc, Spans::Spans(&[]), &|_| unreachable!("no spans, no entity to name"))
}

/// Copies an arena out of `bytes` into new words and checks it as [`check_arena`] does: each
/// thread copies and checksums its share of the bytes, a chunk at a time while it is in cache,
/// then checks its spans (on `bytes` if they are 4-byte aligned, else on the copy once every
/// thread has copied).
pub(crate) fn copy_arena(
    bytes: &[u8],
    crc: ArenaCrc<'_>,
    spans: Spans<'_>,
    id_at: impl Fn(usize) -> Id + Sync,
    threads: Option<usize>,
) -> Result<Vec<u32>, LoadError> {
    copy_arena_on(parts_for(bytes.len(), threads), bytes, crc, spans, id_at)
}

/// [`copy_arena`] on `parts` threads.
fn copy_arena_on(
    parts: usize,
    bytes: &[u8],
    crc: ArenaCrc<'_>,
    spans: Spans<'_>,
    id_at: impl Fn(usize) -> Id + Sync,
) -> Result<Vec<u32>, LoadError> {
    let in_place = <[u32]>::ref_from_bytes(bytes).ok();
    if parts == 1 {
        // No thread, and no allocation but the words, which are written a chunk at a time
        // while the chunk is in cache (not all zeroed first: a second pass over the arena's
        // memory). Unaligned bytes: the chunk's words zeroed, then the bytes copied in.
        let mut words = Vec::with_capacity(bytes.len() / 4);
        let copy = |chunk: Range<usize>| {
            if let Some(aligned) = in_place {
                words.extend_from_slice(&aligned[chunk.start / 4..chunk.end / 4]);
            } else {
                let start = words.len();
                words.resize(start + chunk.len() / 4, 0);
                words[start..].as_mut_bytes().copy_from_slice(&bytes[chunk]);
            }
        };
        let mut report = check_crc(bytes, 0..bytes.len(), crc, copy);
        if report.crc.is_ok() {
            let arena = in_place.unwrap_or(&words);
            report.spans = check_part(spans, 0..spans.len(), arena, &id_at);
        }
        finish([report], crc, spans, &id_at)?;
        return Ok(words);
    }
    // Each thread writes its share in place: the words must exist first (zeroed), as safe
    // code cannot hand out uninitialized memory.
    let mut words = vec![0_u32; bytes.len() / 4];
    let unit = unit(crc);
    let mut outs = Vec::with_capacity(parts);
    let mut rest = words.as_mut_slice();
    for p in 0..parts {
        let range = part_range(bytes.len(), unit, p, parts);
        let (out, tail) = rest.split_at_mut(range.len() / 4);
        outs.push((range, out));
        rest = tail;
    }
    let mut reports = on_threads(outs, |p, (range, out)| {
        // A chunk at a time: copied, then checksummed while it is in cache.
        let base = range.start;
        let out = out.as_mut_bytes();
        let copy = |chunk: Range<usize>| {
            out[chunk.start - base..chunk.end - base].copy_from_slice(&bytes[chunk]);
        };
        let mut report = check_crc(bytes, range, crc, copy);
        if let (Ok(_), Some(arena)) = (&report.crc, in_place) {
            report.spans = check_part(spans, part_range(spans.len(), 1, p, parts), arena, &id_at);
        }
        report
    });
    if in_place.is_none() && reports.iter().all(|r| r.crc.is_ok()) {
        let arena = words.as_slice();
        let checked = on_threads(vec![(); parts], |p, ()| {
            check_part(spans, part_range(spans.len(), 1, p, parts), arena, &id_at)
        });
        for (report, spans) in reports.iter_mut().zip(checked) {
            report.spans = spans;
        }
    }
    finish(reports, crc, spans, &id_at)?;
    Ok(words)
}

/// The first error of the parts' reports, in the order a single pass finds them, then the
/// overlap check if the parts' order does not prove it.
pub(super) fn finish(
    reports: impl IntoIterator<Item = PartReport>,
    crc: ArenaCrc<'_>,
    spans: Spans<'_>,
    id_at: &impl Fn(usize) -> Id,
) -> Result<(), LoadError> {
    let mut whole = crc32fast::Hasher::new();
    let mut first_error = None;
    // Ascending parts whose ranges follow one another prove every span disjoint.
    let mut disjoint = true;
    let mut last_end = 0;
    for report in reports {
        whole.combine(&report.crc?);
        match report.spans {
            Ok(Order::Ascending(None)) => {}
            Ok(Order::Ascending(Some((first, end)))) if first >= last_end => last_end = end,
            Ok(Order::Ascending(Some(_)) | Order::Unordered) => disjoint = false,
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if let ArenaCrc::Whole { offset, expected } = crc {
        let found = whole.finalize();
        if found != expected {
            return Err(LoadError::File(FileError::Crc {
                section: "arena",
                offset,
                expected,
                found,
            }));
        }
    }
    match first_error {
        Some(e) => Err(e),
        None if disjoint => Ok(()),
        None => check_overlap(spans, id_at),
    }
}

/// Checks that every span lies inside an arena of `arena_words` and that no two overlap: in
/// one pass when they are in ascending order, else by a sort.
pub(super) fn check_span_bounds(
    spans: &[Span],
    arena_words: usize,
    id_at: &impl Fn(usize) -> Id,
) -> Result<(), LoadError> {
    let mut last_end = 0;
    let mut ascending = true;
    for (d, span) in spans.iter().enumerate() {
        let end = span.offset() + span.words();
        if end > arena_words {
            let (offset, words) = (span.offset() as u32, span.words() as u32);
            let arena_words = arena_words as u64;
            return Err(LoadError::Store(StoreError::SpanOutOfArena {
                id: id_at(d),
                offset,
                words,
                arena_words,
            }));
        }
        ascending &= span.offset() >= last_end;
        last_end = end;
    }
    if ascending { Ok(()) } else { check_overlap(Spans::Spans(spans), id_at) }
}

/// A save file's parts, as [`index_and_arena`] reads them.
pub(crate) struct SaveParts<'a> {
    pub(crate) key_hash: u16,
    pub(crate) data_version: u32,
    /// How the arena's bytes are checksummed: not checked yet.
    pub(crate) arena_crc: ArenaCrc<'a>,
    pub(crate) index: RawHandleMap<'a>,
    pub(crate) arena: &'a [u8],
    pub(crate) names: &'a [u8],
    /// The names section's kind: the key tree, or format 1.0's list.
    pub(crate) names_kind: u32,
    /// The index items section's kind: end offsets (format 1.3), or the spans of 1.2 and
    /// before.
    pub(crate) items_kind: u32,
    /// The store's lineage (format 1.4), if the save holds one.
    pub(crate) lineage: Option<u128>,
    /// The prototype links (format 1.5), one per entity in dense order, or none: sized, not
    /// checked yet ([`check_dense`](crate::store::proto::check_dense) does).
    pub(crate) prototypes: &'a [U32],
}

/// The key hash, the handle map's sections, the arena's bytes and the key names of a save
/// file, after [`parse`](crate::file::container::parse) and the checks of their sizes.
pub(crate) fn index_and_arena(bytes: &[u8]) -> Result<SaveParts<'_>, LoadError> {
    index_and_arena_tolerant(bytes, false).map(|(parts, _)| parts)
}

/// As [`index_and_arena`], with [`parse_tolerant`]: the sections it left out, and why.
pub(crate) fn index_and_arena_tolerant(
    bytes: &[u8],
    tolerant: bool,
) -> Result<(SaveParts<'_>, Vec<LoadError>), LoadError> {
    let (parsed, mut damaged) = parse_tolerant(bytes, &SAVE, tolerant)?;
    let [header, items, meta, slots, arena, names] = parsed.sections;
    let header = RawHeader::read_from_bytes(header).map_err(|_| {
        LoadError::Store(StoreError::SectionSize {
            section: "index header",
            expected: size_of::<RawHeader>() as u64,
            found: header.len() as u64,
        })
    })?;
    if arena.len() % 4 != 0 {
        let found = arena.len() as u64;
        return Err(LoadError::Store(StoreError::SectionSize {
            section: "arena",
            expected: found & !3,
            found,
        }));
    }
    // A store's handles always carry its type id.
    if header.type_id.get() != STORE_TYPE_ID {
        let found = header.type_id.get();
        return Err(LoadError::Store(StoreError::TypeId { expected: STORE_TYPE_ID, found }));
    }
    let index = RawHandleMap { header, items, meta, slots };
    // Empty: a store without a lineage (or, in a salvage, a damaged section left out).
    let section = parsed.lineage.filter(|section| !section.is_empty());
    let lineage = section.map(<[u8; 16]>::try_from).transpose().map(|l| l.map(u128::from_le_bytes));
    let lineage = lineage.or_else(|_| {
        let error = LoadError::Store(StoreError::SectionSize {
            section: "lineage",
            expected: size_of::<u128>() as u64,
            found: section.map_or(0, <[u8]>::len) as u64,
        });
        // A salvage does without it, as without any section it can spare.
        if !tolerant {
            return Err(error);
        }
        damaged.push(error);
        Ok(None)
    })?;
    // Empty (no links), or one per entity.
    let links = parsed.prototypes.unwrap_or_default();
    let entities = header.len.get() as usize;
    let prototypes = match <[U32]>::ref_from_bytes(links) {
        Ok(dense) if dense.is_empty() || dense.len() == entities => dense,
        _ => {
            let error = LoadError::Store(StoreError::SectionSize {
                section: PROTOTYPES.1,
                expected: 4 * entities as u64,
                found: links.len() as u64,
            });
            // A salvage does without links it cannot read (see `Salvage`).
            if !tolerant {
                return Err(error);
            }
            damaged.push(error);
            &[]
        }
    };
    let arena_crc =
        parsed.deferred.ok_or(LoadError::File(FileError::MissingSection { section: "arena" }))?;
    let parts = SaveParts {
        key_hash: parsed.key_hash(),
        data_version: parsed.data_version(),
        arena_crc,
        index,
        arena,
        names,
        names_kind: parsed.kinds[5],
        items_kind: parsed.kinds[1],
        lineage,
        prototypes,
    };
    Ok((parts, damaged))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::blob::Blob;
    use crate::format::container::{chunk_crcs, chunked};
    use crate::store::Store;

    /// A store whose spans are out of dense order after `churn` rounds of growth and removal.
    fn churned(entities: usize, churn: usize) -> Store {
        let mut store = Store::new();
        let mut ids = Vec::new();
        for i in 0..entities {
            let blob: Blob = [("hp", f32::from(i as u16) / 2.0)].into_iter().collect();
            ids.push(store.insert(&blob));
        }
        for round in 0..churn {
            for (i, id) in ids.iter().enumerate().skip(round % 3).step_by(3) {
                let text = "x".repeat(8 + (i + round) % 40);
                if let Some(mut blob) = store.get_mut(*id) {
                    blob.set("bio", text.as_str()).unwrap();
                }
            }
        }
        store
    }

    /// Every check on 1, 2 and 3 threads, whole-arena crc and chunks of 1 KiB, reading in
    /// place and copying: the same answer.
    fn same_on_every_thread_count(store: &Store, arena: &[u32]) -> Result<(), LoadError> {
        let bytes = arena.as_bytes();
        let spans = Spans::Spans(store.index().as_slice());
        let id_at = |d| store.index().id_at(d).unwrap_or_default();
        let chunk_crcs: Vec<U32> =
            bytes.chunks(1024).map(|c| U32::new(crc32fast::hash(c))).collect();
        let crcs = [
            ArenaCrc::Whole { offset: 64, expected: crc32fast::hash(bytes) },
            ArenaCrc::Chunks { offset: 64, chunk_bytes: 1024, crcs: &chunk_crcs },
        ];
        let first = check_arena_on(1, bytes, arena, crcs[0], spans, id_at);
        for crc in crcs {
            for parts in 1..=3 {
                assert_eq!(check_arena_on(parts, bytes, arena, crc, spans, id_at), first);
                let copied = copy_arena_on(parts, bytes, crc, spans, id_at);
                assert_eq!(copied.as_ref().err(), first.as_ref().err());
                if let Ok(words) = copied {
                    assert_eq!(words, arena);
                }
            }
        }
        // A misaligned copy source takes the second pass over the copy.
        let mut shifted = vec![0_u8; bytes.len() + 1];
        shifted[1..].copy_from_slice(bytes);
        let copied = copy_arena_on(2, &shifted[1..], crcs[0], spans, id_at);
        assert_eq!(copied.map(|_| ()), first);
        first
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// A corrupted word anywhere in a churned arena (its crc resealed, so the blob and span
        /// checks see it) gives the same error, or none, on any number of threads.
        #[test]
        fn threads_find_what_one_thread_finds(
            entities in 1_usize..300,
            churn in 0_usize..4,
            at in any::<prop::sample::Index>(),
            word in prop_oneof![Just(0_u32), Just(1), Just(0xffff_ffff), any::<u32>()],
        ) {
            let store = churned(entities, churn);
            let mut arena = store.arena().to_vec();
            let at = at.index(arena.len());
            arena[at] = word;
            let _ = same_on_every_thread_count(&store, &arena);
        }

        /// Spans moved so that two overlap are found whatever the order of the rest.
        #[test]
        fn overlaps_are_found_on_any_number_of_threads(
            entities in 2_usize..200,
            churn in 0_usize..3,
            pick in any::<(prop::sample::Index, prop::sample::Index)>(),
        ) {
            let mut store = churned(entities, churn);
            let (a, b) = (pick.0.index(entities), pick.1.index(entities));
            prop_assume!(a != b);
            let target = store.index().as_slice()[b];
            let id = store.index().id_at(a).unwrap();
            *store.index_mut().get_mut(id).unwrap() = target;
            let arena = store.arena().to_vec();
            let result = same_on_every_thread_count(&store, &arena);
            let overlap = matches!(result, Err(LoadError::Store(StoreError::SpansOverlap { .. })));
            prop_assert!(overlap, "{result:?}");
        }
    }

    #[test]
    fn a_bad_chunk_is_named_before_any_blob() {
        let store = churned(2000, 2);
        let mut arena = store.arena().to_vec();
        let bytes = arena.as_bytes().to_vec();
        let crcs: Vec<U32> = bytes.chunks(1024).map(|c| U32::new(crc32fast::hash(c))).collect();
        // Chunk 5 gets a bad blob count; chunk 9 too: chunk 5 is named.
        arena[5 * 256 + 3] ^= 0x8000_0000;
        arena[9 * 256] ^= 1;
        let chunks = ArenaCrc::Chunks { offset: 100, chunk_bytes: 1024, crcs: &crcs };
        let id_at = |d| store.index().id_at(d).unwrap_or_default();
        for parts in 1..=3 {
            let err = check_arena_on(
                parts,
                arena.as_bytes(),
                &arena,
                chunks,
                Spans::Spans(store.index().as_slice()),
                id_at,
            )
            .unwrap_err();
            let LoadError::File(FileError::ChunkCrc { chunk, offset, expected, .. }) = err else {
                panic!("{err:?}");
            };
            assert_eq!((chunk, offset, expected), (5, 100 + 5 * 1024, crcs[5].get()));
        }
    }

    #[test]
    fn the_whole_crc_combined_from_chunks_is_the_crc_of_the_whole() {
        let arena: Vec<u8> = (0..5000_u32).map(|i| (i * 7 % 251) as u8).collect();
        for len in [0, 1, 1023, 1024, 1025, 4096, 5000] {
            let (section, whole) = chunk_crcs(&[&arena[..len]], 1024);
            // The same arena given in parts that cross the chunks' ends anywhere: the same
            // section (a save writes a store's live blobs as such parts).
            for cuts in [vec![], vec![0, 0], vec![1], vec![1023, 1024], vec![7, 1500, 3000]] {
                let mut parts = Vec::new();
                let mut from = 0;
                for cut in cuts.into_iter().map(|cut| cut.min(len)).chain([len]) {
                    parts.push(&arena[from.min(cut)..cut]);
                    from = cut;
                }
                assert_eq!(chunk_crcs(&parts, 1024), (section.clone(), whole), "{len}: {parts:?}");
            }
            assert_eq!(whole, crc32fast::hash(&arena[..len]), "{len} bytes");
            assert_eq!(section.len(), 4 + 4 * len.div_ceil(1024));
            assert_eq!(section[..4], 1024_u32.to_le_bytes());
            let Ok(ArenaCrc::Chunks { chunk_bytes, crcs, .. }) = chunked(0, &section, len) else {
                panic!("the section reads back");
            };
            assert_eq!(chunk_bytes, 1024);
            for (chunk, crc) in arena[..len].chunks(1024).zip(crcs) {
                assert_eq!(crc.get(), crc32fast::hash(chunk));
            }
        }
    }

    #[test]
    fn a_malformed_chunk_crc_section_is_an_error() {
        let (section, _) = chunk_crcs(&[&[7; 3000]], 1024);
        let size = |expected, found| {
            LoadError::File(FileError::SectionSize { section: "arena crcs", expected, found })
        };
        assert_eq!(chunked(0, &section[..3], 3000).unwrap_err(), size(4, 3));
        assert_eq!(chunked(0, &section[..15], 3000).unwrap_err(), size(16, 15));
        assert_eq!(chunked(0, &section, 4000).unwrap_err(), size(20, 16));
        assert_eq!(chunked(0, &section, 2000).unwrap_err(), size(12, 16));
        for chunk_bytes in [0_u32, 512, 1000, 3 << 10, 2 << 30] {
            let mut bad = section.clone();
            bad[..4].copy_from_slice(&chunk_bytes.to_le_bytes());
            assert_eq!(
                chunked(0, &bad, 3000).unwrap_err(),
                LoadError::File(FileError::ChunkSize { chunk_bytes })
            );
        }
    }

    #[test]
    fn parts_cover_every_unit_once() {
        for (len, unit, parts) in [(0, 4, 2), (10, 4, 3), (1 << 20, 1 << 16, 2), (100, 1, 7)] {
            let ranges: Vec<_> = (0..parts).map(|p| part_range(len, unit, p, parts)).collect();
            assert_eq!(ranges.first().unwrap().start, 0);
            assert_eq!(ranges.last().unwrap().end, len);
            for pair in ranges.windows(2) {
                assert_eq!(pair[0].end, pair[1].start);
                assert!(pair[0].end % unit == 0 || pair[0].end == len);
            }
        }
    }
}
