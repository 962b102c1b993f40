//! [`KeyCursor`]: one key read from many blobs, remembering where it last found it.

use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::blob::BlobRef;
use crate::blob::layout::{self, Shape};
use crate::handle_map::Id;
use crate::key::Key;
use crate::store::proto::{self, FEW_KEYS, Link};
use crate::store::{Resolved, Span, Store};
use crate::value::{Value, ValueType};

/// A key that remembers its position in the last blob it was found in, and tries that position
/// first in the next: inline caching, as JavaScript engines do for object shapes.
///
/// Entities made from the same fixture share a key layout, so a system that reads the same key
/// from every entity each frame finds it at the same position almost every time. A read then
/// costs one load and one compare before the value is read; only a miss (another layout, or a
/// blob edited since) scans the key array, and moves the cursor to where the key is now.
///
/// The remembered position is a hint, never trusted: the key stored there is compared with the
/// cursor's, and keys in a blob are unique, so a stale position costs a scan and can never
/// give another key's value. Reads take `&self`, so a cursor serves inside iterator closures,
/// and a cursor is `Send + Sync`: the position is two relaxed atomic words (plain loads and
/// stores on x86-64 and `AArch64`), and threads sharing a cursor can only cost each other scans,
/// never a wrong value. A cursor per thread keeps each one's hits.
///
/// ```text
///  cursor { key: stats.health, at: 3 }
///                                    ▼ one compare: keys[3] == stats.health?
///  blob   │ n │pstart│ k0 │ k1 │ k2 │ k3 │ ... │ tags │ values │   yes: tags[3], values[3]
///                                                                 no: scan, then at = where found
/// ```
///
/// # Examples
///
/// ```
/// use datacomp::Blob;
/// use datacomp::query::KeyCursor;
///
/// let sheets: Vec<Blob> = (0..100)
///     .map(|i| [("stats.mana", 10.0), ("stats.health", i as f32)].into_iter().collect())
///     .collect();
/// let health = KeyCursor::new("stats.health");
/// let total: f32 = sheets.iter().filter_map(|s| health.get_float(s)).sum();
/// assert_eq!(total, 4950.0);
/// assert_eq!(health.position(), 1); // found at entry 1 of the first sheet, then hit every time
/// ```
pub struct KeyCursor {
    key: Key,
    /// The key count of the blob where `key` was last found, and its position there: a hint,
    /// checked on every read, so any pair, even one torn between two threads' writes, is safe.
    /// Two words, as the two fields a `Cell<Shape>` held: one word packing both cost two more
    /// instructions a read, to split it.
    keys: AtomicU32,
    at: AtomicU32,
}

impl Clone for KeyCursor {
    fn clone(&self) -> KeyCursor {
        let Shape { keys, at } = self.shape();
        KeyCursor { key: self.key, keys: AtomicU32::new(keys), at: AtomicU32::new(at) }
    }
}

impl KeyCursor {
    /// A cursor for `key` (a [`Key`], or a dotted path that is hashed once, here), with no
    /// position yet: its first read scans.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Key;
    /// use datacomp::query::KeyCursor;
    ///
    /// assert_eq!(KeyCursor::new("stats.health").key(), Key::parse("stats.health"));
    /// ```
    #[must_use]
    pub fn new(key: impl Into<Key>) -> KeyCursor {
        KeyCursor { key: key.into(), keys: AtomicU32::new(0), at: AtomicU32::new(0) }
    }

    /// The key this cursor reads.
    #[must_use]
    pub fn key(&self) -> Key {
        self.key
    }

    /// The remembered shape: a hint only (see the fields).
    #[inline]
    fn shape(&self) -> Shape {
        Shape { keys: self.keys.load(Ordering::Relaxed), at: self.at.load(Ordering::Relaxed) }
    }

    /// The entry position the next read tries first: where the key was last found.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    /// use datacomp::query::KeyCursor;
    ///
    /// let sheet: Blob = [("a", 1.0), ("b", 2.0), ("c", 3.0)].into_iter().collect();
    /// let c = KeyCursor::new("c");
    /// assert_eq!(c.position(), 0);
    /// assert_eq!(c.get_float(&sheet), Some(3.0));
    /// assert_eq!(c.position(), 2);
    /// ```
    #[must_use]
    pub fn position(&self) -> usize {
        self.shape().at as usize
    }

    /// The entry of `self.key()` in `blob` as (tag, header value), trying the remembered
    /// position first and remembering where it was found.
    #[inline]
    pub(crate) fn find(&self, blob: BlobRef<'_>) -> Option<(u8, u32)> {
        self.read(blob, |found| found)
    }

    /// `typed` of the entry of `self.key()` in `blob` (as [`find`](KeyCursor::find) gives
    /// it), applied on the hit path and the miss path apart, so a hit returns without joining
    /// the miss path's result.
    #[inline]
    fn read<R>(&self, blob: BlobRef<'_>, typed: impl Fn(Option<(u8, u32)>) -> R) -> R {
        let words = blob.as_words();
        match layout::lookup_at(words, self.key, self.shape()) {
            hit @ Some(_) => typed(hit),
            None => typed(self.miss(words)),
        }
    }

    /// The scan after a missed guess, out of line: it updates the position itself and
    /// returns 8 bytes (in a register), so the hit path keeps nothing live across the call
    /// and needs no stack frame.
    #[cold]
    #[inline(never)]
    fn miss(&self, words: &[u32]) -> Option<(u8, u32)> {
        let (tag, raw, shape) = layout::lookup_shape(words, self.key)?;
        self.keys.store(shape.keys, Ordering::Relaxed);
        self.at.store(shape.at, Ordering::Relaxed);
        Some((tag, raw))
    }

    /// The value at this cursor's key in `blob`, if it has one. As
    /// [`BlobRef::get`], but trying the remembered position first.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::query::KeyCursor;
    /// use datacomp::{Blob, Value};
    ///
    /// let sheet: Blob = [("name", "Orc")].into_iter().collect();
    /// assert_eq!(KeyCursor::new("name").get(&sheet), Some(Value::Str("Orc")));
    /// assert_eq!(KeyCursor::new("title").get(&sheet), None);
    /// ```
    #[inline]
    #[must_use]
    pub fn get<'a>(&self, blob: impl Into<BlobRef<'a>>) -> Option<Value<'a>> {
        let blob = blob.into();
        blob.value_of(self.find(blob))
    }

    /// The boolean at this cursor's key in `blob`; `None` if it is missing or of another
    /// type.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    /// use datacomp::query::KeyCursor;
    ///
    /// let sheet: Blob = [("poisoned", true)].into_iter().collect();
    /// assert_eq!(KeyCursor::new("poisoned").get_bool(&sheet), Some(true));
    /// ```
    #[inline]
    #[must_use]
    pub fn get_bool<'a>(&self, blob: impl Into<BlobRef<'a>>) -> Option<bool> {
        self.read(blob.into(), BlobRef::bool_of)
    }

    /// The float at this cursor's key in `blob`; `None` if it is missing or of another type.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::query::KeyCursor;
    /// use datacomp::{Blob, Store};
    ///
    /// let mut world = Store::new();
    /// let orc = world.insert(&[("stats.health", 30.0)].into_iter().collect::<Blob>());
    /// let health = KeyCursor::new("stats.health");
    /// assert_eq!(health.get_float(world.get(orc).unwrap()), Some(30.0));
    /// ```
    #[inline]
    #[must_use]
    pub fn get_float<'a>(&self, blob: impl Into<BlobRef<'a>>) -> Option<f32> {
        self.read(blob.into(), BlobRef::float_of)
    }

    /// The string at this cursor's key in `blob`; `None` if it is missing or of another type.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    /// use datacomp::query::KeyCursor;
    ///
    /// let sheet: Blob = [("name", "Orc")].into_iter().collect();
    /// assert_eq!(KeyCursor::new("name").get_str(&sheet), Some("Orc"));
    /// ```
    #[inline]
    #[must_use]
    pub fn get_str<'a>(&self, blob: impl Into<BlobRef<'a>>) -> Option<&'a str> {
        let blob = blob.into();
        blob.str_of(self.find(blob))
    }

    /// The float array at this cursor's key in `blob`, borrowed from it; `None` if it is
    /// missing or of another type.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    /// use datacomp::query::KeyCursor;
    ///
    /// let mut sheet = Blob::new();
    /// sheet.set("position", [1.0, 2.0]).unwrap();
    /// assert_eq!(KeyCursor::new("position").get_floats(&sheet), Some(&[1.0, 2.0][..]));
    /// ```
    #[inline]
    #[must_use]
    pub fn get_floats<'a>(&self, blob: impl Into<BlobRef<'a>>) -> Option<&'a [f32]> {
        let blob = blob.into();
        blob.floats_of(self.find(blob))
    }

    /// The value at this cursor's key as `entity` reads it through its prototype chain
    /// ([`Store::resolved`](crate::Store::resolved)): its own blob first (with the remembered
    /// position), then each prototype's; a tombstone ends the lookup with `None`. The
    /// queries, columns and `find` of a store with prototypes read so.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Store;
    /// use datacomp::query::KeyCursor;
    ///
    /// let mut world = Store::new();
    /// let orc = world.insert_entries([("stats.health", 30)])?;
    /// let grunts: Vec<_> = (0..3).map(|_| world.insert_instance(orc)).collect::<Result<_, _>>()?;
    /// world.get_mut(grunts[1]).unwrap().set("stats.health", 5)?;
    /// let health = KeyCursor::new("stats.health");
    /// let all: Vec<_> = grunts.iter().map(|&g| health.get_resolved(world.resolved(g).unwrap())).collect();
    /// assert_eq!(all, [Some(30.0), Some(5.0), Some(30.0)]);
    /// # Ok::<(), datacomp::Error>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn get_resolved(&self, entity: Resolved<'_>) -> Option<f32> {
        let (_, tag, raw) = self.find_resolved(entity)?;
        BlobRef::float_of(Some((tag, raw)))
    }

    /// The entry of this cursor's key as `entity` reads it, and the blob that holds it: its
    /// own blob, then up its chain; `None` at a tombstone.
    #[inline]
    pub(crate) fn find_resolved<'a>(&self, entity: Resolved<'a>) -> Option<(BlobRef<'a>, u8, u32)> {
        let own = entity.own();
        let found = match self.find(own) {
            Some((tag, raw)) => Some((own, tag, raw)),
            None => self.find_inherited(entity),
        };
        found.filter(|&(_, tag, _)| tag != ValueType::Tombstone as u8)
    }

    /// [`find_resolved`](KeyCursor::find_resolved) past the entity's own blob.
    #[inline(never)]
    fn find_inherited<'a>(&self, entity: Resolved<'a>) -> Option<(BlobRef<'a>, u8, u32)> {
        let (blob, _, tag, raw) = entity.find_inherited_with(self.key, |blob| self.find(blob))?;
        Some((blob, tag, raw))
    }

    /// Whether `blob` has a value at this cursor's key.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    /// use datacomp::query::KeyCursor;
    ///
    /// let sheet: Blob = [("gold", 10.0)].into_iter().collect();
    /// assert!(KeyCursor::new("gold").contains_key(&sheet));
    /// ```
    #[inline]
    #[must_use]
    pub fn contains_key<'a>(&self, blob: impl Into<BlobRef<'a>>) -> bool {
        self.find(blob.into()).is_some()
    }
}

/// What the queries read with a cursor: one blob as it is, or an entity through its
/// prototype chain. The blob reads are the cursor's own (their hit paths unchanged).
pub trait Source<'a>: Copy {
    /// The entry, and the blob that holds it.
    fn entry(self, cursor: &KeyCursor) -> Option<(BlobRef<'a>, u8, u32)>;

    fn get(self, cursor: &KeyCursor) -> Option<Value<'a>> {
        let (blob, tag, raw) = self.entry(cursor)?;
        blob.value_of(Some((tag, raw)))
    }

    fn get_bool(self, cursor: &KeyCursor) -> Option<bool> {
        let (_, tag, raw) = self.entry(cursor)?;
        BlobRef::bool_of(Some((tag, raw)))
    }

    fn get_float(self, cursor: &KeyCursor) -> Option<f32> {
        let (_, tag, raw) = self.entry(cursor)?;
        BlobRef::float_of(Some((tag, raw)))
    }

    fn get_str(self, cursor: &KeyCursor) -> Option<&'a str> {
        let (blob, tag, raw) = self.entry(cursor)?;
        blob.str_of(Some((tag, raw)))
    }

    fn get_floats(self, cursor: &KeyCursor) -> Option<&'a [f32]> {
        let (blob, tag, raw) = self.entry(cursor)?;
        blob.floats_of(Some((tag, raw)))
    }

    fn contains_key(self, cursor: &KeyCursor) -> bool {
        self.entry(cursor).is_some()
    }
}

impl<'a> Source<'a> for BlobRef<'a> {
    #[inline]
    fn entry(self, cursor: &KeyCursor) -> Option<(BlobRef<'a>, u8, u32)> {
        cursor.find(self).map(|(tag, raw)| (self, tag, raw))
    }

    #[inline]
    fn get(self, cursor: &KeyCursor) -> Option<Value<'a>> {
        cursor.get(self)
    }

    #[inline]
    fn get_bool(self, cursor: &KeyCursor) -> Option<bool> {
        cursor.get_bool(self)
    }

    #[inline]
    fn get_float(self, cursor: &KeyCursor) -> Option<f32> {
        cursor.get_float(self)
    }

    #[inline]
    fn get_str(self, cursor: &KeyCursor) -> Option<&'a str> {
        cursor.get_str(self)
    }

    #[inline]
    fn get_floats(self, cursor: &KeyCursor) -> Option<&'a [f32]> {
        cursor.get_floats(self)
    }

    #[inline]
    fn contains_key(self, cursor: &KeyCursor) -> bool {
        cursor.contains_key(self)
    }
}

impl<'a> Source<'a> for Resolved<'a> {
    #[inline]
    fn entry(self, cursor: &KeyCursor) -> Option<(BlobRef<'a>, u8, u32)> {
        cursor.find_resolved(self)
    }
}

/// An entry of a key as a resolved read finds it: the blob that holds it, its tag and header
/// value; `None` if absent or at a tombstone.
type Entry<'a> = Option<(BlobRef<'a>, u8, u32)>;

/// An entry already found: what a [`Through`] read gives the typed reads of a column.
#[derive(Clone, Copy)]
pub(crate) struct Found<'a>(pub Entry<'a>);

impl<'a> Source<'a> for Found<'a> {
    #[inline]
    fn entry(self, _: &KeyCursor) -> Option<(BlobRef<'a>, u8, u32)> {
        self.0
    }
}

/// How many prototypes a [`Through`] remembers (by slot, direct-mapped): a store's kinds of
/// entity, not its entities.
const REMEMBERED: usize = 64;

/// One key read through prototypes from many entities of a store, as a column or `find`
/// reads it: each entity's own blob with a cursor of its own (instances share a layout apart
/// from their prototypes'), then, on a miss, what the caller's typed read (`R`: a column's
/// `Option<T>`, `find`'s match) made of its prototype's resolved entry, found once per
/// prototype and remembered (in a table by the prototype's slot: a hit is a compare, and the
/// result is in registers, not an entry to copy and read again). Equal to the typed read of
/// [`KeyCursor::find_resolved`] of each entity: the store is borrowed for the whole pass, so
/// a prototype's entry cannot change while it is remembered.
pub(crate) struct Through<'a, R> {
    store: &'a Store,
    own: KeyCursor,
    // The mask an instance's filter of own keys is tested with (`Link::lacks`): the key's
    // bit where a miss in an entity's own blob reads the remembered read of its prototype
    // with no other test, that is where the key is read through prototypes (not `$id` or
    // `$abstract`) and the store's names do not nest, so that no own blob can shadow it
    // (`proto::shadows`); else 0, which no filter lacks.
    lacks: u64,
    // `remembered[p.index() % REMEMBERED]` is `(p, the read of p's resolved entry)`, or
    // `(Id::NULL, anything)`: no prototype is the null handle.
    remembered: Box<[(Id, R); REMEMBERED]>,
    // The links' entries, and what takes a slot of the store's map to its entry:
    // `links[slot + shift]` (wrapping) is the slot's entity's (`Links::entries`).
    links: &'a [Link],
    shift: u32,
}

impl<'a, R: Copy> Through<'a, R> {
    /// Reads of `key` through the links of `store`; `blank` fills the empty table.
    pub(crate) fn new(store: &'a Store, key: Key, blank: R) -> Through<'a, R> {
        let remembered = Box::new([(Id::NULL, blank); REMEMBERED]);
        let plain = proto::inherits(key) && !store.names().nested();
        let lacks = if plain { proto::lack_mask(key) } else { 0 };
        let (links, first) = store.links().entries();
        // A live slot `s` holds the handle index `base + s`, whose entry is at `index - first`.
        let shift = store.index().base().wrapping_sub(first);
        Through { store, own: KeyCursor::new(key), lacks, remembered, links, shift }
    }

    /// `read` of [`KeyCursor::find_resolved`] of entity `id`, whose blob is `own`, with
    /// `cursor` (of the same key) for its prototypes. Inlined always: a column's loop is the
    /// caller, and a call a read (where the compiler chose one) cost a third of it.
    ///
    /// An instance whose own blob surely lacks the key (the filter beside its link) reads
    /// the remembered read of its prototype without reading its own blob; another entity
    /// reads its own blob first.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn read(
        &mut self,
        cursor: &KeyCursor,
        id: Id,
        own: BlobRef<'a>,
        read: impl Fn(Found<'a>) -> R,
    ) -> R {
        // INVARIANT: the column's entities are live.
        let link = self.store.links().link_of_live(id.index());
        if let Some(known) = self.known(link) {
            return known;
        }
        self.own_first(cursor, id, own, link, read)
    }

    /// [`read`](Through::read) of the live entity in slot `slot` of the store's map, whose
    /// blob is at `span` of the arena: the instances' common case (the filter beside the
    /// link, the prototype's remembered read) reads no byte of the entity's blob, slices no
    /// arena and makes no handle.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn read_slot(
        &mut self,
        cursor: &KeyCursor,
        slot: u32,
        span: Span,
        read: impl Fn(Found<'a>) -> R,
    ) -> R {
        // INVARIANT: the column's entities are live (their entries are theirs).
        if let Some(known) = self.known(self.links.get(slot.wrapping_add(self.shift) as usize)) {
            return known;
        }
        self.own_first_at(cursor, slot, span, read)
    }

    /// The remembered read of the prototype of the entity whose entry is `link`, if its
    /// filter says its own blob lacks the key and the read is remembered: the instances'
    /// common case, which reads no byte of the entity's blob.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn known(&self, link: Option<&Link>) -> Option<R> {
        let link = link.filter(|link| link.lacks(self.lacks))?;
        // A known filter is a link's: its prototype is not null.
        let p = link.prototype();
        match self.remembered[p.index() as usize % REMEMBERED] {
            (at, known) if at == p => Some(known),
            _ => None,
        }
    }

    /// [`own_first`](Through::own_first) of the entity in `slot`, whose blob is at `span`.
    #[inline(never)]
    fn own_first_at(
        &mut self,
        cursor: &KeyCursor,
        slot: u32,
        span: Span,
        read: impl Fn(Found<'a>) -> R,
    ) -> R {
        let store = self.store;
        let id = store.index().id_of_live_slot(slot);
        let own = BlobRef::from_valid(&store.arena()[span.range()]).with_names(store.names());
        let link = store.links().link_of_live(id.index());
        self.own_first(cursor, id, own, link, read)
    }

    /// [`read`](Through::read) of an entity that its filter did not send to its prototype's
    /// remembered read: its own blob first, then through `link` (its entry of the links, if
    /// they span it), learning its filter where unknown. Out of line, so that the column's
    /// loop keeps the instances' common case in registers.
    #[inline]
    fn own_first(
        &mut self,
        cursor: &KeyCursor,
        id: Id,
        own: BlobRef<'a>,
        link: Option<&Link>,
        read: impl Fn(Found<'a>) -> R,
    ) -> R {
        let words = own.as_words();
        let hit = if layout::len(words) <= FEW_KEYS {
            layout::lookup_few(words, self.own.key)
        } else {
            self.own.read(own, |found| found)
        };
        if let Some((tag, raw)) = hit {
            return read(Found((tag != ValueType::Tombstone as u8).then_some((own, tag, raw))));
        }
        match link {
            Some(link) if !link.prototype().is_null() => {
                if link.unknown() {
                    link.learn(words);
                }
                let p = link.prototype();
                match self.remembered[p.index() as usize % REMEMBERED] {
                    (at, known) if self.lacks != 0 && at == p => known,
                    _ => self.inherited(cursor, id, p, read),
                }
            }
            _ => read(Found(None)),
        }
    }

    /// [`read`](Through::read) of live entity `id` past its own blob, which missed, through
    /// its prototype `p`, where the remembered read did not answer: the key is not inherited,
    /// the own blob shadows it, or `p`'s read is not remembered yet.
    #[cold]
    #[inline(never)]
    fn inherited(&mut self, cursor: &KeyCursor, id: Id, p: Id, read: impl Fn(Found<'a>) -> R) -> R {
        let key = self.own.key;
        if !proto::inherits(key) {
            return read(Found(None));
        }
        // INVARIANT: `id` is live (the caller's).
        let own = self.store.get(id).expect("INVARIANT: a column's entity is live");
        if self.store.names().nested() && proto::shadows(self.store, own, key) {
            return read(Found(None));
        }
        match self.remembered[p.index() as usize % REMEMBERED] {
            (at, known) if at == p => known,
            _ => {
                // INVARIANT: a prototype is live (`Links`).
                let found = self.store.resolved(p).and_then(|entity| cursor.find_resolved(entity));
                let known = read(Found(found));
                self.remembered[p.index() as usize % REMEMBERED] = (p, known);
                known
            }
        }
    }
}

// The two atomic words are shown as the numbers they hold.
#[allow(clippy::missing_fields_in_debug)]
impl fmt::Debug for KeyCursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Shape { keys, at } = self.shape();
        f.debug_struct("KeyCursor")
            .field("key", &self.key)
            .field("at", &at)
            .field("of", &keys)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blob::Blob;

    #[test]
    fn a_stale_position_costs_a_scan_never_a_wrong_value() {
        let mut sheet: Blob = [("a", 1.0), ("b", 2.0), ("c", 3.0)].into_iter().collect();
        let c = KeyCursor::new("c");
        assert_eq!(c.get_float(&sheet), Some(3.0));
        assert_eq!(c.position(), 2);
        // "a" removed: "c" moves to position 1, and position 2 is past the key array.
        sheet.remove("a");
        assert_eq!(c.get_float(&sheet), Some(3.0));
        assert_eq!(c.position(), 1);
        // "c" removed: position 1 now holds "b", which must not be returned.
        sheet.remove("c");
        assert_eq!(c.get_float(&sheet), None);
        assert_eq!(c.get(&sheet), None);
        assert_eq!(c.position(), 1, "a miss keeps the last position");
        sheet.set("c", "now a string").unwrap();
        assert_eq!(c.get_float(&sheet), None, "wrong type");
        assert_eq!(c.get_str(&sheet), Some("now a string"));
    }

    #[test]
    fn a_hit_reads_the_tag_of_its_own_entry_at_every_byte_of_a_tag_word() {
        // Nine keys of alternating types: the tags fill two words and a third, so hits at
        // positions 0 to 8 read each byte lane of a tag word.
        let mut sheet = Blob::new();
        for i in 0..9_u8 {
            let key = format!("k{i}");
            if i % 2 == 0 {
                sheet.set(key.as_str(), f32::from(i)).unwrap();
            } else {
                sheet.set(key.as_str(), i % 4 == 1).unwrap();
            }
        }
        for i in 0..9_u8 {
            let cursor = KeyCursor::new(format!("k{i}").as_str());
            for _ in 0..2 {
                // The first read scans, the second hits.
                if i % 2 == 0 {
                    assert_eq!(cursor.get_float(&sheet), Some(f32::from(i)));
                    assert_eq!(cursor.get_bool(&sheet), None);
                } else {
                    assert_eq!(cursor.get_bool(&sheet), Some(i % 4 == 1));
                    assert_eq!(cursor.get_float(&sheet), None);
                }
            }
            assert_eq!(cursor.position(), usize::from(i));
        }
    }

    #[test]
    fn the_empty_blob_has_no_position_to_try() {
        let c = KeyCursor::new("x");
        assert_eq!(c.get(&Blob::new()), None);
        assert!(!c.contains_key(&Blob::new()));
    }
}
