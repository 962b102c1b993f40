//! Prototypes: an entity may read through another entity of its store, its prototype.
//!
//! An instance stores only its overrides. A resolved read ([`Store::resolved`]) looks in the
//! entity's own blob, then in its prototype's, up the chain, and lends the value from
//! whichever blob holds it: no copy, no allocation. A tombstone
//! ([`Value::Tombstone`]) in a blob stops the lookup: the key is absent there and below.
//!
//! ```text
//!  orc (prototype)            goblin (instance of orc)       resolved goblin
//!  ┌───────────────────┐      ┌───────────────────────┐      name         "Goblin"  own
//!  │ name   "Orc"      │ ◀─── │ name   "Goblin"       │      stats.health 30        orc
//!  │ stats.health 30   │      │ title  (tombstone)    │      (no title: the tombstone)
//!  │ title  "Brute"    │      └───────────────────────┘
//!  └───────────────────┘
//! ```
//!
//! # What reads what
//!
//! - Resolved: [`Store::resolved`] and [`Resolved`]'s reads, [`Store::flatten`],
//!   [`Store::detach`], and the queries (`Store::find`, `Query`, `KeyCursor` over a store,
//!   columns): a query for `stats.health < 20` sees an inherited health.
//! - Stored (what the entity itself holds, tombstones included): [`Store::get`] and
//!   [`BlobMut`](crate::store::BlobMut), diffs, merges, deltas, history and migrations, saves
//!   and exports of an entity's blob. A delta carries the links as the target has them; a
//!   merge ([`merge3`](crate::store::merge3)) takes each entity's link three-way (a link one
//!   side changed is taken, one both changed differently is a conflict) and refuses merged
//!   links that read through a removed entity, cycle or pass [`MAX_CHAIN`]; a migration
//!   renames keys in each blob, prototypes and instances alike.
//!
//! # Rules
//!
//! - A chain holds at most [`MAX_CHAIN`] prototypes above an entity; a link that would make a
//!   longer chain, or a cycle, is refused where it would be made ([`Store::set_prototype`],
//!   [`Store::insert_instance`]) and is a load error in a file.
//! - A prototype with live instances is not removed: [`Store::remove`] returns `false` and
//!   [`Store::try_remove`] says why ([`HandleError::HasInstances`]); detach or relink the
//!   instances first.
//! - An entity's prototype is part of what it stores: `==`, saves, deltas and history keep it.
//! - Two keys belong to the entity that holds them and are never inherited: [`ID_KEY`]
//!   (`$id`, the stable name the text formats link by) and [`ABSTRACT_KEY`] (`$abstract`, the
//!   mark of a base left out of listings). Every resolved read ([`Resolved`]'s gets and
//!   `iter`, so `flatten`, `detach`, queries, columns and cursors) reads them from the
//!   entity's own blob only: an instance of `orc` is not named `orc`, nor abstract because
//!   its base is.
//! - A path is a value or an object in what an entity reads, never both: one blob refuses
//!   `stats` beside `stats.health` ([`KeyError::PathConflict`](crate::key::KeyError)), and
//!   across a chain **the nearer entity shadows the farther whole**. An own `stats` value
//!   hides every inherited key under `stats`; an own key under `stats` hides an inherited
//!   `stats` value; a tombstone at `stats` removes the inherited object too. Every resolved
//!   read (gets, `iter`, `flatten`, queries, columns, cursors, flattened exports) follows
//!   it, so none shows `stats` and `stats.health` both. Only names that nest cost anything:
//!   while no key's name lies under another's, a read checks one flag.

use std::sync::atomic::{AtomicU64, Ordering};

use fxhash::{FxHashMap, FxHashSet};
use zerocopy::little_endian::U32;

use super::{Span, Store};
use crate::blob::layout::{self, Shape};
use crate::blob::{Blob, BlobRef};
use crate::error::Error;
use crate::format::StoreError;
use crate::handle_map::{HandleError, HandleMap, Id};
use crate::key::{AsKey, Key};
use crate::value::{Value, ValueType};

/// The key an entity's stable name is stored at: `$id`, a string. The text formats name a
/// prototype by it (`"$prototype": "orc"`); it is the entity's own, never inherited.
pub const ID_KEY: Key = Key::new("$id");

/// The key that marks an abstract base: `$abstract`, `true`. Listings and flattened exports
/// leave such an entity out; it is the entity's own, never inherited.
pub const ABSTRACT_KEY: Key = Key::new("$abstract");

/// Whether an entity reads `key` through its prototypes: every key but [`ID_KEY`] and
/// [`ABSTRACT_KEY`], which belong to the entity that holds them.
#[inline]
pub(crate) fn inherits(key: Key) -> bool {
    key != ID_KEY && key != ABSTRACT_KEY
}

/// Whether `blob`, a blob a resolved read of `key` passes without finding it, hides what its
/// prototypes hold at `key` by a path conflict: it holds a value on `key`'s path (an own
/// `stats` over an inherited `stats.health`: the whole inherited object is shadowed) or a
/// value under `key` (an own `stats.health` over an inherited `stats`: the inherited value is
/// shadowed by the object). A tombstone on the way removes the whole path (`$remove:
/// ["stats"]` removes an inherited `stats.health`); one under `key` holds nothing, so it
/// shadows nothing. Keys without a name have no known place: they shadow nothing. O(depth + keys × depth)
/// lookups; called only when the store's names nest ([`KeyNames::nested`]).
///
/// [`KeyNames::nested`]: crate::names::KeyNames::nested
#[cold]
#[inline(never)]
pub(crate) fn shadows(store: &Store, blob: BlobRef<'_>, key: Key) -> bool {
    let names = store.names();
    let Some(node) = names.named(key) else { return false };
    // A value or a tombstone on the way: `stats` for `stats.health`.
    if names.ancestors(node).any(|at| names.is_named(at) && blob.contains_key(names.key(at))) {
        return true;
    }
    // A value under it: `stats.health` for `stats`.
    blob.iter().any(|(k, value)| {
        !value.is_tombstone() && names.named(k).is_some_and(|held| names.is_under(held, node))
    })
}

/// Whether a blob of `id`'s chain below `found` (`id`'s own up to `found`'s instance) shadows
/// `key` ([`shadows`]). `id` is live and `found` is on its chain.
#[cold]
#[inline(never)]
fn shadowed_below(store: &Store, id: Id, found: Id, key: Key) -> bool {
    let mut at = id;
    loop {
        let blob = store.blob(at).expect("INVARIANT: the entity and its prototypes are live");
        if shadows(store, blob, key) {
            return true;
        }
        match store.links.prototype(at) {
            Some(p) if p != found => at = p,
            _ => return false,
        }
    }
}

/// What the nearer blobs of a resolved `iter` shadow by path conflicts ([`shadows`]), for
/// many keys at once: the named keys they hold (values and tombstones), and every path above
/// their values.
struct Shadow {
    values: FxHashSet<Key>,
    prefixes: FxHashSet<Key>,
}

impl Shadow {
    /// The shadows of `blobs` (O(keys × depth)).
    fn of(store: &Store, blobs: &[BlobRef<'_>]) -> Shadow {
        let names = store.names();
        let mut shadow = Shadow { values: FxHashSet::default(), prefixes: FxHashSet::default() };
        for (key, value) in blobs.iter().flat_map(|b| b.iter()) {
            let Some(node) = names.named(key) else { continue };
            shadow.values.insert(key);
            if value.is_tombstone() {
                continue;
            }
            // A path already inserted has its own ancestors inserted too.
            for at in names.ancestors(node) {
                if !shadow.prefixes.insert(names.key(at)) {
                    break;
                }
            }
        }
        shadow
    }

    /// Whether `key` is shadowed: a value under it, or one on its way.
    fn hides(&self, store: &Store, key: Key) -> bool {
        if self.prefixes.contains(&key) {
            return true;
        }
        let names = store.names();
        let Some(node) = names.named(key) else { return false };
        names.ancestors(node).any(|at| names.is_named(at) && self.values.contains(&names.key(at)))
    }
}

/// The most prototypes above an entity: a chain of an instance, its prototype, that one's
/// prototype and so on holds at most this many links.
pub const MAX_CHAIN: usize = 16;

/// The most keys of an entity's own blob that a resolved read scans with a plain loop in
/// place (an instance's few overrides; see [`layout::lookup_few`]).
pub(crate) const FEW_KEYS: usize = 4;

/// How many keys [`Hints`] remembers a position for (direct-mapped by the key's hash).
const HINTS: usize = 64;

/// Where each key was last found in a prototype's blob (its key count and position, as a
/// [`KeyCursor`](crate::query::KeyCursor) remembers them), by the key's hash: an inherited
/// read tries that place first (two compares, [`layout::lookup_at`]) and scans only when it
/// fails. A store's prototypes are few and share layouts, so a read of an inherited key
/// costs its own blob's lookup and a probe, not a scan of the prototype's keys.
///
/// A hint is only a guess, checked against the blob on every read (keys are unique, so a
/// stale one never gives another key's entry): no write keeps it, and any value is safe.
/// Relaxed atomics, one word a key, so that a store stays `Sync` and its readers share it.
pub(crate) struct Hints([AtomicU64; HINTS]);

impl Hints {
    fn new() -> Hints {
        Hints(std::array::from_fn(|_| AtomicU64::new(0)))
    }

    /// The tag and header value of `key` in the blob `words`: at the remembered place, else
    /// by a scan whose place is remembered.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn lookup(&self, words: &[u32], key: Key) -> Option<(u8, u32)> {
        let place = &self.0[key.raw() as usize % HINTS];
        let bits = place.load(Ordering::Relaxed);
        // The low half the key count, the high half the position: `Shape`'s two words.
        let shape = Shape { keys: bits as u32, at: (bits >> 32) as u32 };
        match layout::lookup_at(words, key, shape) {
            found @ Some(_) => found,
            None => Hints::scan(place, words, key),
        }
    }

    /// The tag and header value of `key` in the blob `words` at the remembered place, if it
    /// is there: [`lookup`](Hints::lookup) without the scan.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn probe(&self, words: &[u32], key: Key) -> Option<(u8, u32)> {
        let bits = self.0[key.raw() as usize % HINTS].load(Ordering::Relaxed);
        layout::lookup_at(words, key, Shape { keys: bits as u32, at: (bits >> 32) as u32 })
    }

    /// The scan after a missed hint, out of line: a read's hot path stays small.
    #[inline(never)]
    fn scan(hint: &AtomicU64, words: &[u32], key: Key) -> Option<(u8, u32)> {
        let (tag, raw, shape) = layout::lookup_shape(words, key)?;
        hint.store(u64::from(shape.keys) | u64::from(shape.at) << 32, Ordering::Relaxed);
        Some((tag, raw))
    }
}

impl Default for Hints {
    fn default() -> Hints {
        Hints::new()
    }
}

impl Clone for Hints {
    /// No hints: they are guesses, made again by the first reads.
    fn clone(&self) -> Hints {
        Hints::new()
    }
}

impl std::fmt::Debug for Hints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Hints")
    }
}

/// The store's prototype links: each instance's prototype, and each prototype's direct
/// instances (so that removing one is refused in O(1), and a relink measures the chains below
/// an entity in O(its descendants)).
#[derive(Default, Debug)]
pub(crate) struct Links {
    // INVARIANT: `up[i]` links the live entity `instance` whose handle's index is `first + i`
    // to its prototype if it has one, else holds `Id::NULL` twice; every prototype is a live
    // entity; following `up` from any entity reaches no entity twice and takes at most
    // `MAX_CHAIN` steps. By index, not in a hash map: a read through a link is a subtraction,
    // a bounds check and a compare of the handle (the probe of a hash map cost ~25
    // instructions a get). Empty while no entity has a prototype. From `first`, not from
    // index 0: a loaded map's indices may start anywhere up to 2^31 (its `base`), and the
    // live ones span fewer than its slots, so `up` spans at most about twice as many.
    up: Vec<Link>,
    first: u32,
    // INVARIANT: the number of entries of `up` that are not `Id::NULL`.
    count: usize,
    // INVARIANT: `down[p]` holds the entries of `up` whose value is `p` (none empty).
    down: FxHashMap<Id, Instances>,
    /// Where inherited reads last found each key (guesses, checked on use: no invariant).
    hints: Hints,
}

/// The [`OwnKeys`] filter that knows nothing: every read scans the own blob. A null link's,
/// a new link's, and every link's after its entity's blob changes.
const UNKNOWN: u64 = 0;

/// The mark of a known [`OwnKeys`] filter (no key's bit: a key takes one of bits 0 to 62).
const KNOWN: u64 = 1 << 63;

/// A key's bit in an [`OwnKeys`] filter: one of bits 0 to 62, by the hash's top 6 bits (an
/// Fx hash's best mixed; 63 folded onto 62).
#[inline]
pub(crate) const fn key_bit(key: Key) -> u64 {
    raw_bit(key.raw())
}

#[inline]
const fn raw_bit(raw: u32) -> u64 {
    let top = raw >> 26;
    1 << if top > 62 { 62 } else { top }
}

/// The known filter of the blob `words`: [`KNOWN`] and the bit of each key it holds.
fn own_keys_of(words: &[u32]) -> u64 {
    layout::keys(words).iter().fold(KNOWN, |filter, &raw| filter | raw_bit(raw))
}

/// The mask a read of `key` tests an [`OwnKeys`] filter with ([`Link::lacks`]).
#[inline]
pub(crate) const fn lack_mask(key: Key) -> u64 {
    key_bit(key) | KNOWN
}

/// What an instance's own blob may hold, beside its link: [`UNKNOWN`], or [`KNOWN`] and the
/// [`key_bit`] of each key the blob holds (tombstones too). A resolved read of a key whose bit
/// is clear goes to the prototype without reading the own blob at all (its miss is the
/// common case of an instance: a scan of its overrides, and a cache line of its own). Never
/// saved: learned by a read that scanned the blob ([`Link::learn`]), forgotten by every change
/// of the entity's blob (`Store::touch`) or of many (`Store::touch_all`), and by a new link,
/// except that an edit through `BlobMut` keeps what was known with the key it wrote; a clone
/// starts unknown. A relaxed atomic word, so that a store stays `Sync`: readers that
/// learn at once store the same word (no writer runs beside a reader: writes take `&mut`).
#[derive(Debug, Default)]
struct OwnKeys(AtomicU64);

/// One entry of [`Links::up`]: an instance, its prototype, and the filter of its own keys.
#[derive(Debug)]
pub(crate) struct Link {
    instance: Id,
    prototype: Id,
    own: OwnKeys,
}

impl Clone for Link {
    /// The same link, its filter unknown: a clone's blobs may be another store's.
    fn clone(&self) -> Link {
        Link { instance: self.instance, prototype: self.prototype, own: OwnKeys::default() }
    }
}

impl Link {
    /// A null entry: no link, filter unknown.
    fn null() -> Link {
        Link { instance: Id::NULL, prototype: Id::NULL, own: OwnKeys::default() }
    }

    /// The prototype (`Id::NULL` for a null entry).
    #[inline]
    pub(crate) fn prototype(&self) -> Id {
        self.prototype
    }

    /// Whether the entity's own blob surely holds no key of `mask` ([`lack_mask`]): the
    /// filter is known and the key's bit is clear. Never for a null entry (its filter is
    /// unknown), nor for the mask 0.
    #[inline]
    pub(crate) fn lacks(&self, mask: u64) -> bool {
        self.own.0.load(Ordering::Relaxed) & mask == KNOWN
    }

    /// Whether the filter is unknown: a read that scanned the own blob `learn`s it.
    #[inline]
    pub(crate) fn unknown(&self) -> bool {
        self.own.0.load(Ordering::Relaxed) == UNKNOWN
    }

    /// Learns the filter of this link's entity, whose own blob is `words`. Only for a link
    /// (not a null entry), with the entity's current blob.
    #[cold]
    #[inline(never)]
    pub(crate) fn learn(&self, words: &[u32]) {
        if !self.instance.is_null() {
            self.own.0.store(own_keys_of(words), Ordering::Relaxed);
        }
    }

    fn forget(&self) {
        self.own.0.store(UNKNOWN, Ordering::Relaxed);
    }
}

impl Clone for Links {
    fn clone(&self) -> Links {
        Links {
            up: self.up.clone(),
            first: self.first,
            count: self.count,
            down: self.down.clone(),
            hints: self.hints.clone(),
        }
    }
}

/// A prototype's direct instances: one inline (a chain's links allocate nothing), or a set.
#[derive(Clone, Debug)]
enum Instances {
    One(Id),
    Many(FxHashSet<Id>),
}

impl Instances {
    fn len(&self) -> usize {
        match self {
            Instances::One(_) => 1,
            Instances::Many(set) => set.len(),
        }
    }

    fn insert(&mut self, id: Id) {
        match self {
            Instances::One(one) if *one != id => {
                *self = Instances::Many([*one, id].into_iter().collect());
            }
            Instances::One(_) => {}
            Instances::Many(set) => {
                set.insert(id);
            }
        }
    }

    /// Removes `id`; returns whether none is left.
    fn remove(&mut self, id: Id) -> bool {
        match self {
            Instances::One(one) => *one == id,
            Instances::Many(set) => {
                set.remove(&id);
                set.is_empty()
            }
        }
    }

    fn iter(&self) -> impl Iterator<Item = Id> + '_ {
        let (one, many) = match self {
            Instances::One(one) => (Some(*one), None),
            Instances::Many(set) => (None, Some(set.iter().copied())),
        };
        one.into_iter().chain(many.into_iter().flatten())
    }
}

impl PartialEq for Links {
    fn eq(&self, other: &Links) -> bool {
        self.count == other.count && self.iter().all(|(i, p)| other.prototype(i) == Some(p))
    }
}

impl Links {
    /// No links.
    pub(crate) fn new() -> Links {
        Links::default()
    }

    /// Whether no entity has a prototype.
    pub(crate) fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The prototype of `id`, if it has one.
    #[inline]
    pub(crate) fn prototype(&self, id: Id) -> Option<Id> {
        // An index below `first` wraps past every entry.
        match self.up.get(id.index().wrapping_sub(self.first) as usize) {
            Some(link) if link.instance == id => Some(link.prototype),
            _ => None,
        }
    }

    /// The entry of `up` of the live entity whose handle's index is `index`, if `up` spans
    /// it: a link, or a null entry (no prototype, filter unknown). Without the compare of
    /// the instance's handle that [`prototype`](Links::prototype) makes, which a live
    /// entity's entry needs not (a removal clears its entry before its slot is reused), so
    /// that a column reads no more of a handle than its index.
    #[inline]
    pub(crate) fn link_of_live(&self, index: u32) -> Option<&Link> {
        // An index below `first` wraps past every entry.
        self.up.get(index.wrapping_sub(self.first) as usize)
    }

    /// The entries and the handle index of the first, for a loop that reads many entries by
    /// index (a column): entry `i` is the index `first + i`'s ([`link_of_live`]).
    ///
    /// [`link_of_live`]: Links::link_of_live
    pub(crate) fn entries(&self) -> (&[Link], u32) {
        (&self.up, self.first)
    }

    /// Forgets the own-keys filter of `id`, whose blob changes.
    #[inline]
    pub(crate) fn forget(&self, id: Id) {
        if let Some(link) = self.up.get(id.index().wrapping_sub(self.first) as usize) {
            link.forget();
        }
    }

    /// The own-keys filter word of live `id` ([`UNKNOWN`] where `up` does not span it).
    #[inline]
    fn own_keys(&self, id: Id) -> u64 {
        self.link_of_live(id.index()).map_or(UNKNOWN, |link| link.own.0.load(Ordering::Relaxed))
    }

    /// Stores `word` as the own-keys filter of live `id`, a link's (a known word is only
    /// ever read from a link's entry, and a null entry's filter stays unknown).
    #[inline]
    fn keep(&self, id: Id, word: u64) {
        if let Some(link) = self.link_of_live(id.index())
            && !link.prototype.is_null()
        {
            link.own.0.store(word, Ordering::Relaxed);
        }
    }

    /// Forgets every own-keys filter: many blobs change.
    pub(crate) fn forget_all(&self) {
        self.up.iter().for_each(Link::forget);
    }

    /// Number of live entities whose prototype is `id`.
    pub(crate) fn instances(&self, id: Id) -> usize {
        self.down.get(&id).map_or(0, Instances::len)
    }

    /// The longest chain of instances below `id` (0 for an entity no other reads through): a
    /// walk of `id`'s descendants, O(their number), at most [`MAX_CHAIN`] deep.
    fn height(&self, id: Id) -> usize {
        let mut height = 0;
        let mut stack = vec![(id, 0)];
        while let Some((at, depth)) = stack.pop() {
            let Some(instances) = self.down.get(&at) else { continue };
            height = height.max(depth + 1);
            stack.extend(instances.iter().map(|i| (i, depth + 1)));
        }
        height
    }

    /// Every link, as (instance, prototype), in no particular order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Id, Id)> + '_ {
        self.up.iter().filter(|l| !l.instance.is_null()).map(|l| (l.instance, l.prototype))
    }

    /// Links `instance` to `prototype` (or unlinks it for `None`), keeping the counts. The
    /// caller has checked the invariant.
    pub(crate) fn set(&mut self, instance: Id, prototype: Option<Id>) {
        let old = self.prototype(instance);
        match prototype {
            Some(p) => {
                let index = instance.index();
                if self.up.is_empty() {
                    self.first = index;
                } else if index < self.first {
                    // Grow down by at least the length: a run of links in falling index
                    // order moves the entries O(log n) times, not once a link.
                    let by = (self.first - index).max(self.up.len() as u32);
                    let first = self.first.saturating_sub(by);
                    let moved = (self.first - first) as usize;
                    self.up.splice(0..0, std::iter::repeat_with(Link::null).take(moved));
                    self.first = first;
                }
                let slot = (index - self.first) as usize;
                if slot >= self.up.len() {
                    self.up.resize_with(slot + 1, Link::null);
                }
                self.up[slot] = Link { instance, prototype: p, own: OwnKeys::default() };
                self.count += usize::from(old.is_none());
            }
            None if old.is_some() => {
                self.up[(instance.index() - self.first) as usize] = Link::null();
                self.count -= 1;
                if self.count == 0 {
                    self.up = Vec::new();
                }
            }
            None => {}
        }
        if let Some(old) = old
            && let Some(instances) = self.down.get_mut(&old)
            && instances.remove(instance)
        {
            self.down.remove(&old);
        }
        if let Some(p) = prototype {
            match self.down.get_mut(&p) {
                Some(instances) => instances.insert(instance),
                None => {
                    self.down.insert(p, Instances::One(instance));
                }
            }
        }
    }

    /// Drops every link.
    pub(crate) fn clear(&mut self) {
        self.up = Vec::new();
        self.count = 0;
        self.down.clear();
    }

    /// The links as a save writes them (section `prototypes`, format 1.5): one `u32` per
    /// entity of `index` in dense order, 0 for none, else 1 + its prototype's dense position.
    /// Empty when no entity has a prototype.
    pub(crate) fn to_dense(&self, index: &HandleMap<Span>) -> Vec<U32> {
        if self.is_empty() {
            return Vec::new();
        }
        index
            .ids()
            .map(|id| {
                let up = self.prototype(id).and_then(|p| index.dense_index(p));
                U32::new(up.map_or(0, |d| d as u32 + 1))
            })
            .collect()
    }

    /// The links of `dense` (as [`to_dense`](Links::to_dense) writes them), checked by
    /// [`check_dense`] first, with each dense position's handle from `id_at`.
    pub(crate) fn from_dense(dense: &[U32], id_at: impl Fn(usize) -> Id) -> Links {
        let mut links = Links::new();
        for (d, up) in dense.iter().enumerate() {
            if let Some(p) = (up.get() as usize).checked_sub(1) {
                links.set(id_at(d), Some(id_at(p)));
            }
        }
        links
    }
}

/// Checks prototype links by dense position (as a save holds them: `dense[d]` is 0 for none,
/// else 1 + the prototype's position) for `len` entities: every prototype one of them, no
/// cycle, no chain past [`MAX_CHAIN`]; errors name entities by `id_at`. O(n): each entity's
/// depth is found once (memoized), however the chains share, with a byte of state each.
pub(crate) fn check_dense(dense: &[U32], id_at: impl Fn(usize) -> Id) -> Result<(), StoreError> {
    // 0: not seen; ON_PATH: on the walk in progress; KNOWN + d: d prototypes above it.
    const ON_PATH: u8 = 1;
    const KNOWN: u8 = 2;
    let len = dense.len();
    let up = |d: usize| (dense[d].get() as usize).checked_sub(1);
    for (d, raw) in dense.iter().enumerate() {
        match up(d) {
            Some(p) if p >= len => {
                let prototype = u64::from(raw.get());
                return Err(StoreError::PrototypeMissing { id: id_at(d), prototype });
            }
            Some(p) if p == d => return Err(StoreError::PrototypeCycle { id: id_at(d) }),
            _ => {}
        }
    }
    let mut state = vec![0_u8; len];
    let mut path: Vec<usize> = Vec::new();
    for start in 0..len {
        if state[start] != 0 {
            continue;
        }
        // Up until an entity of known depth, or one without a prototype.
        let mut at = start;
        let mut depth = loop {
            match state[at] {
                0 => {}
                ON_PATH => return Err(StoreError::PrototypeCycle { id: id_at(at) }),
                known => break known - KNOWN,
            }
            let Some(p) = up(at) else {
                state[at] = KNOWN;
                break 0;
            };
            state[at] = ON_PATH;
            path.push(at);
            at = p;
        };
        // Down the path again: each one more than the entity above it.
        while let Some(d) = path.pop() {
            depth += 1;
            if usize::from(depth) > MAX_CHAIN {
                return Err(StoreError::PrototypeChain { id: id_at(d), limit: MAX_CHAIN });
            }
            state[d] = KNOWN + depth;
        }
    }
    Ok(())
}

impl Store {
    /// Adds an empty entity whose prototype is `prototype`, and returns its handle: an
    /// instance that reads everything `prototype` holds until it overrides it.
    ///
    /// # Errors
    ///
    /// [`Error::Handle`]: a `prototype` that is not live ([`HandleError`]'s resolving kinds),
    /// or [`HandleError::PrototypeChain`] if the chain above the new entity would hold more
    /// than [`MAX_CHAIN`] prototypes. Nothing changes.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Store;
    ///
    /// let mut world = Store::new();
    /// let orc = world.insert_entries([("name", "Orc"), ("stats.health", "30")])?;
    /// let grunt = world.insert_instance(orc)?;
    /// assert_eq!(world.prototype(grunt), Some(orc));
    /// assert!(world.get(grunt).unwrap().is_empty(), "it stores nothing of its own");
    /// assert_eq!(world.resolved(grunt).unwrap().get_str("name"), Some("Orc"));
    /// # Ok::<(), datacomp::Error>(())
    /// ```
    pub fn insert_instance(&mut self, prototype: Id) -> Result<Id, Error> {
        self.index.try_get(prototype)?;
        let length = self.depth(prototype) + 1;
        if length > MAX_CHAIN {
            return Err(HandleError::PrototypeChain {
                id: Id::NULL,
                prototype,
                length,
                limit: MAX_CHAIN,
            }
            .into());
        }
        let id = self.insert_empty();
        self.links.set(id, Some(prototype));
        Ok(id)
    }

    /// Makes `prototype` the prototype of `id`, or for `None` makes `id` stand alone. What
    /// `id` stores does not change: its overrides now sit over the new chain. To keep what it
    /// reads instead, [`detach`](Store::detach) it first.
    ///
    /// O(1) up the chain (at most [`MAX_CHAIN`] links); for an entity that is a prototype
    /// itself, O(its descendants) to measure the chains below it.
    ///
    /// # Errors
    ///
    /// [`Error::Handle`]: `id` or `prototype` not live, [`HandleError::PrototypeCycle`] if
    /// `prototype` is `id` or reads through it, [`HandleError::PrototypeChain`] if a chain
    /// would pass [`MAX_CHAIN`]. Nothing changes.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Error, HandleError, Store};
    ///
    /// let mut world = Store::new();
    /// let orc = world.insert_entries([("stats.health", 30)])?;
    /// let chief = world.insert_entries([("stats.health", 90)])?;
    /// world.set_prototype(chief, Some(orc))?;
    /// assert_eq!(world.prototype(chief), Some(orc));
    /// let err = world.set_prototype(orc, Some(chief)).unwrap_err();
    /// assert!(matches!(err, Error::Handle(HandleError::PrototypeCycle { .. })));
    /// world.set_prototype(chief, None)?;
    /// assert_eq!(world.prototype(chief), None);
    /// # Ok::<(), datacomp::Error>(())
    /// ```
    pub fn set_prototype(&mut self, id: Id, prototype: Option<Id>) -> Result<(), Error> {
        self.index.try_get(id)?;
        if let Some(p) = prototype {
            self.index.try_get(p)?;
            let mut at = Some(p);
            while let Some(a) = at {
                if a == id {
                    return Err(HandleError::PrototypeCycle { id, prototype: p }.into());
                }
                at = self.links.prototype(a);
            }
            let length = self.depth(p) + 1 + self.links.height(id);
            if length > MAX_CHAIN {
                return Err(HandleError::PrototypeChain {
                    id,
                    prototype: p,
                    length,
                    limit: MAX_CHAIN,
                }
                .into());
            }
        }
        if self.links.prototype(id) != prototype {
            self.links.set(id, prototype);
            self.touch(id);
        }
        Ok(())
    }

    /// The prototype of `id`, if `id` is live and has one.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Store;
    ///
    /// let mut world = Store::new();
    /// let orc = world.insert_empty();
    /// let grunt = world.insert_instance(orc)?;
    /// assert_eq!((world.prototype(grunt), world.prototype(orc)), (Some(orc), None));
    /// # Ok::<(), datacomp::Error>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn prototype(&self, id: Id) -> Option<Id> {
        self.links.prototype(id)
    }

    /// `id`'s values as it reads them through its prototype chain, if `id` is live: each key
    /// from the nearest blob that holds it, borrowed (no copy), a tombstone ending the
    /// lookup.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Store;
    ///
    /// let mut world = Store::new();
    /// let orc = world.insert_entries([("name", "Orc"), ("title", "Brute")])?;
    /// let grunt = world.insert_instance(orc)?;
    /// world.get_mut(grunt).unwrap().set("name", "Grunt")?;
    /// world.remove_inherited(grunt, "title")?;
    /// let sheet = world.resolved(grunt).unwrap();
    /// assert_eq!(sheet.get_str("name"), Some("Grunt"));
    /// assert_eq!(sheet.get_str("title"), None);
    /// assert_eq!(world.resolved(orc).unwrap().get_str("title"), Some("Brute"));
    /// # Ok::<(), datacomp::Error>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn resolved(&self, id: Id) -> Option<Resolved<'_>> {
        let own = self.get(id)?;
        Some(Resolved { store: self, id, own })
    }

    /// Removes `id`'s own value of `key` (an override or a tombstone), so that it reads the
    /// inherited one again; returns whether it had one.
    ///
    /// # Errors
    ///
    /// [`Error::Handle`] if `id` is not live.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Store;
    ///
    /// let mut world = Store::new();
    /// let orc = world.insert_entries([("stats.health", 30)])?;
    /// let grunt = world.insert_instance(orc)?;
    /// world.get_mut(grunt).unwrap().set("stats.health", 5)?;
    /// assert!(world.clear_override(grunt, "stats.health")?);
    /// assert_eq!(world.resolved(grunt).unwrap().get_float("stats.health"), Some(30.0));
    /// assert!(!world.clear_override(grunt, "stats.health")?);
    /// # Ok::<(), datacomp::Error>(())
    /// ```
    pub fn clear_override(&mut self, id: Id, key: impl AsKey) -> Result<bool, Error> {
        Ok(self.try_get_mut(id)?.remove(key.as_key()))
    }

    /// Makes `key` absent from what `id` reads: removes its own value, and, if `id` has a
    /// prototype, stores a tombstone ([`Value::Tombstone`]) that hides the inherited one. A
    /// flag set's "delete" is this; its "extend" is a `set`.
    ///
    /// # Errors
    ///
    /// [`Error::Handle`] if `id` is not live; [`Error::Key`] as [`BlobMut::set`] for a key
    /// given as text that the store's names refuse. Nothing changes.
    ///
    /// [`BlobMut::set`]: crate::store::BlobMut::set
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Store, Value};
    ///
    /// let mut world = Store::new();
    /// let orc = world.insert_entries([("flags.fearless", true)])?;
    /// let coward = world.insert_instance(orc)?;
    /// world.remove_inherited(coward, "flags.fearless")?;
    /// assert_eq!(world.resolved(coward).unwrap().get("flags.fearless"), None);
    /// assert_eq!(world.get(coward).unwrap().get("flags.fearless"), Some(Value::Tombstone));
    /// # Ok::<(), datacomp::Error>(())
    /// ```
    pub fn remove_inherited(&mut self, id: Id, key: impl AsKey) -> Result<(), Error> {
        let has_prototype = self.links.prototype(id).is_some();
        let mut entity = self.try_get_mut(id)?;
        if has_prototype {
            entity.set(key, Value::Tombstone)
        } else {
            entity.remove(key.as_key());
            Ok(())
        }
    }

    /// A blob of everything `id` reads through its chain (its own values over inherited ones,
    /// tombstones dropped), if `id` is live: what a standalone copy of it holds.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Store;
    ///
    /// let mut world = Store::new();
    /// let orc = world.insert_entries([("name", "Orc"), ("stats.health", "30")])?;
    /// let grunt = world.insert_instance(orc)?;
    /// world.get_mut(grunt).unwrap().set("name", "Grunt")?;
    /// let flat = world.flatten(grunt).unwrap();
    /// assert_eq!((flat.get_str("name"), flat.get_str("stats.health")), (Some("Grunt"), Some("30")));
    /// # Ok::<(), datacomp::Error>(())
    /// ```
    #[must_use]
    pub fn flatten(&self, id: Id) -> Option<Blob> {
        Some(self.resolved(id)?.to_blob())
    }

    /// Copies what `id` reads through its chain into its own blob and unlinks it from its
    /// prototype: it reads the same, and no longer follows the prototype. Nothing happens to
    /// an entity without a prototype but its tombstones being dropped.
    ///
    /// # Errors
    ///
    /// [`Error::Handle`] if `id` is not live.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Store;
    ///
    /// let mut world = Store::new();
    /// let orc = world.insert_entries([("stats.health", 30)])?;
    /// let grunt = world.insert_instance(orc)?;
    /// world.detach(grunt)?;
    /// assert_eq!(world.prototype(grunt), None);
    /// assert_eq!(world.get(grunt).unwrap().get_float("stats.health"), Some(30.0));
    /// assert!(world.remove(orc), "no instance holds it now");
    /// # Ok::<(), datacomp::Error>(())
    /// ```
    pub fn detach(&mut self, id: Id) -> Result<(), Error> {
        let Some(flat) = self.flatten(id) else {
            return Err(self.index.try_get(id).map(|_| ()).unwrap_err().into());
        };
        self.replace_blob(id, &flat);
        self.links.set(id, None);
        Ok(())
    }

    /// Removes the entity of `id`, or says why not: as [`remove`](Store::remove), with an
    /// error where it returns `false`.
    ///
    /// # Errors
    ///
    /// [`Error::Handle`]: `id` not live ([`HandleError`]'s resolving kinds), or
    /// [`HandleError::HasInstances`] if `id` is the prototype of live entities (detach or
    /// relink them first). Nothing changes.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Error, HandleError, Store};
    ///
    /// let mut world = Store::new();
    /// let orc = world.insert_empty();
    /// let grunt = world.insert_instance(orc)?;
    /// let err = world.try_remove(orc).unwrap_err();
    /// assert!(matches!(err, Error::Handle(HandleError::HasInstances { instances: 1, .. })));
    /// assert_eq!(err.to_string(), "entity 0v0t1 is the prototype of 1 live entity: detach or relink it first");
    /// world.detach(grunt)?;
    /// world.try_remove(orc)?;
    /// # Ok::<(), datacomp::Error>(())
    /// ```
    pub fn try_remove(&mut self, id: Id) -> Result<(), Error> {
        self.index.try_get(id)?;
        let instances = self.links.instances(id);
        if instances > 0 {
            return Err(HandleError::HasInstances { id, instances: instances as u64 }.into());
        }
        let removed = self.remove(id);
        debug_assert!(removed, "a live entity with no instances is removed");
        Ok(())
    }

    /// Links above `id`: 0 for an entity without a prototype. At most [`MAX_CHAIN`] steps.
    fn depth(&self, id: Id) -> usize {
        let mut depth = 0;
        let mut at = id;
        while let Some(p) = self.links.prototype(at) {
            depth += 1;
            at = p;
        }
        depth
    }

    /// Puts `blob`'s entries in place of `id`'s blob (repacked, at the arena's end). `id` is
    /// live.
    fn replace_blob(&mut self, id: Id, blob: &Blob) {
        let source = blob.as_blob_ref();
        let span = self.allocate(source.used_bytes() / 4);
        layout::repack(source.as_words(), &mut self.arena[span.range()]);
        let old = std::mem::replace(
            self.index.get_mut(id).expect("INVARIANT: the caller's id is live"),
            span,
        );
        self.garbage_words += old.words();
        self.touch(id);
        self.compact_if_wasteful();
    }

    /// The filter of `id`'s own keys before a write through [`BlobMut`], to keep with
    /// [`own_keys_after`](Store::own_keys_after): 0 (unknown) while no entity has a
    /// prototype, for an entity without one, or where it is not known. `id` is live.
    ///
    /// [`BlobMut`]: crate::store::BlobMut
    #[inline]
    pub(crate) fn own_keys_before(&self, id: Id) -> u64 {
        if self.links.is_empty() { UNKNOWN } else { self.links.own_keys(id) }
    }

    /// Keeps `own_keys` as `id`'s filter after a write that forgot it: what was known
    /// before, with the bit of `added`, a key the write may have added (a superset of the
    /// keys the blob holds now). Nothing if it was not known.
    #[inline]
    pub(crate) fn own_keys_after(&self, id: Id, own_keys: u64, added: Option<Key>) {
        if own_keys & KNOWN != 0 {
            self.links.keep(id, own_keys | added.map_or(0, key_bit));
        }
    }

    /// The store's prototype links, for reading (saves, deltas, queries).
    pub(crate) fn links(&self) -> &Links {
        &self.links
    }

    /// Puts `links` in place of the store's links: for a reader or a patch that checked them
    /// against this store's entities ([`check_dense`]).
    pub(crate) fn set_links(&mut self, links: Links) {
        if self.links != links {
            self.tracker.touch_all();
        }
        links.forget_all();
        self.links = links;
    }
}

/// An entity's values as it reads them through its prototype chain: what
/// [`Store::resolved`] returns. Each read looks in the entity's own blob, then up the chain,
/// and lends the value from the blob that holds it; a tombstone ends the lookup with `None`.
///
/// ```text
///  get(key):  own blob ──miss──▶ prototype ──miss──▶ its prototype ──▶ … (at most 16)
///                │ hit               │ hit                 │ hit
///                ▼                   ▼                     ▼
///          the value, borrowed from that blob (a tombstone: None)
/// ```
#[derive(Clone, Copy)]
pub struct Resolved<'a> {
    store: &'a Store,
    id: Id,
    own: BlobRef<'a>,
}

impl<'a> Resolved<'a> {
    /// `id` of `store`, whose blob is `own`, read through its chain.
    #[inline]
    pub(crate) fn new(store: &'a Store, id: Id, own: BlobRef<'a>) -> Resolved<'a> {
        Resolved { store, id, own }
    }

    /// The entry of `key` past the entity's own blob (which `find` missed): `find` in each
    /// prototype's blob, nearest first, as long as no blob passed shadows the key
    /// ([`shadows`]); `None` for a key that is not inherited ([`ID_KEY`], [`ABSTRACT_KEY`]).
    /// The rule every resolved read follows; a tombstone is returned as found.
    #[inline]
    pub(crate) fn find_inherited_with(
        self,
        key: Key,
        find: impl FnMut(BlobRef<'a>) -> Option<(u8, u32)>,
    ) -> Option<(BlobRef<'a>, Id, u8, u32)> {
        Resolved::walk(self.store, self.id, key, find)
    }

    /// [`find_inherited_with`](Resolved::find_inherited_with) of entity `id` of `store`, given
    /// in registers (a `Resolved` passed through memory has its fields read back on the way
    /// up).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn walk(
        store: &'a Store,
        id: Id,
        key: Key,
        find: impl FnMut(BlobRef<'a>) -> Option<(u8, u32)>,
    ) -> Option<(BlobRef<'a>, Id, u8, u32)> {
        Resolved::walk_from(store, id, store.links.prototype(id)?, key, find)
    }

    /// [`walk`](Resolved::walk) from `first`, `id`'s prototype.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn walk_from(
        store: &'a Store,
        id: Id,
        first: Id,
        key: Key,
        mut find: impl FnMut(BlobRef<'a>) -> Option<(u8, u32)>,
    ) -> Option<(BlobRef<'a>, Id, u8, u32)> {
        let mut p = first;
        loop {
            // INVARIANT: a prototype is live (`Links`), so its generation need not be tested.
            let blob = store.prototype_blob(p)?;
            if let Some((tag, raw)) = find(blob) {
                // Checked on a hit only: a miss is `None` either way.
                if !inherits(key) || store.names().nested() && shadowed_below(store, id, p, key) {
                    return None;
                }
                return Some((blob, p, tag, raw));
            }
            p = store.links.prototype(p)?;
        }
    }

    /// The entity's handle.
    #[must_use]
    pub fn id(self) -> Id {
        self.id
    }

    /// What the entity itself stores: its overrides and tombstones.
    #[must_use]
    pub fn own(self) -> BlobRef<'a> {
        self.own
    }

    /// The entity's prototypes, nearest first (empty for an entity without one).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Store;
    ///
    /// let mut world = Store::new();
    /// let orc = world.insert_empty();
    /// let chief = world.insert_instance(orc)?;
    /// let heir = world.insert_instance(chief)?;
    /// assert_eq!(world.resolved(heir).unwrap().chain().collect::<Vec<_>>(), [chief, orc]);
    /// # Ok::<(), datacomp::Error>(())
    /// ```
    pub fn chain(self) -> impl Iterator<Item = Id> + 'a {
        let links = &self.store.links;
        std::iter::successors(links.prototype(self.id), move |&at| links.prototype(at))
    }

    /// The entry of `key` as `(tag, header value)` and the blob and entity that hold it; a
    /// tombstone is returned as found (the callers stop at it).
    #[inline]
    fn find(self, key: Key) -> Option<(BlobRef<'a>, Id, u8, u32)> {
        self.find_with(key, |blob, id, tag, raw| Some((blob, id, tag, raw)))
    }

    /// `read` of the entry of `key` (as [`find`](Resolved::find) gives it), applied where
    /// it is found: a typed read returns its value in registers, with no entry passed
    /// through memory from the walk up the chain. Inlined always: its call and frame cost
    /// a twentieth of an inherited read (measured: `proto_cost get_inherited`).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn find_with<R>(
        self,
        key: Key,
        read: impl Fn(BlobRef<'a>, Id, u8, u32) -> Option<R>,
    ) -> Option<R> {
        let store = self.store;
        // INVARIANT: `self.id` is live (`Store::resolved`).
        let link = store.links.link_of_live(self.id.index());
        // An instance whose own blob surely lacks the key (its filter: the common miss of an
        // instance) goes to its prototype without reading that blob.
        if let Some(link) = link
            && link.lacks(lack_mask(key))
        {
            return Resolved::find_inherited(store, self.id, link.prototype(), key, read);
        }
        let words = self.own.as_words();
        // An instance's few overrides are scanned in place: the grouped scan's setup and
        // call cost more than a few keys. Each hit returns on its own (joined, the two
        // lookups' results went through memory).
        if layout::len(words) <= FEW_KEYS {
            if let Some((tag, raw)) = layout::lookup_few(words, key) {
                return read(self.own, self.id, tag, raw);
            }
        } else if let Some((tag, raw)) = layout::lookup(words, key) {
            return read(self.own, self.id, tag, raw);
        }
        Resolved::own_missed(store, self.id, link?, words, key, read)
    }

    /// [`find_with`](Resolved::find_with) past an own blob (`words`) that missed, through
    /// `link` (the entity's entry of the links: a null one has no prototype): learns the
    /// filter of its own keys where it is unknown. Out of line: an own read costs its lookup.
    #[inline(never)]
    fn own_missed<R>(
        store: &'a Store,
        id: Id,
        link: &Link,
        words: &[u32],
        key: Key,
        read: impl Fn(BlobRef<'a>, Id, u8, u32) -> Option<R>,
    ) -> Option<R> {
        let p = link.prototype();
        if p.is_null() {
            return None;
        }
        if link.unknown() {
            link.learn(words);
        }
        Resolved::find_inherited(store, id, p, key, read)
    }

    /// [`find_with`](Resolved::find_with) past the entity's own blob, from its prototype
    /// `p`: out of line, so that an own read costs a lookup and a branch. Given the store and
    /// handles alone, in registers: `self` was passed through memory, and its fields read
    /// back on the way up. The common case first, lean: the key at its hinted place in `p`,
    /// read through no shadow; else the walk up the chain.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn find_inherited<R>(
        store: &'a Store,
        id: Id,
        p: Id,
        key: Key,
        read: impl Fn(BlobRef<'a>, Id, u8, u32) -> Option<R>,
    ) -> Option<R> {
        // INVARIANT: a prototype is live (`Links`).
        if let Some(blob) = store.prototype_blob(p)
            && let Some((tag, raw)) = store.links.hints.probe(blob.as_words(), key)
            && inherits(key)
            && !store.names().nested()
        {
            return read(blob, p, tag, raw);
        }
        Resolved::walk_up(store, id, p, key, read)
    }

    /// [`find_inherited`](Resolved::find_inherited) where the hint did not answer: the walk.
    #[cold]
    #[inline(never)]
    fn walk_up<R>(
        store: &'a Store,
        id: Id,
        p: Id,
        key: Key,
        read: impl Fn(BlobRef<'a>, Id, u8, u32) -> Option<R>,
    ) -> Option<R> {
        let hints = &store.links.hints;
        let (blob, p, tag, raw) =
            Resolved::walk_from(store, id, p, key, |blob| hints.lookup(blob.as_words(), key))?;
        read(blob, p, tag, raw)
    }

    /// The entry of `key` as the typed getters read it: `None` for a tombstone.
    #[inline]
    fn entry(self, key: Key) -> Option<(BlobRef<'a>, u8, u32)> {
        match self.find(key)? {
            (_, _, tag, _) if tag == ValueType::Tombstone as u8 => None,
            (blob, _, tag, raw) => Some((blob, tag, raw)),
        }
    }

    /// The value of `key` as the entity reads it: its own, or the nearest prototype's;
    /// `None` if no blob of the chain holds it or a tombstone comes first.
    #[inline]
    #[must_use]
    pub fn get(self, key: impl Into<Key>) -> Option<Value<'a>> {
        let (blob, tag, raw) = self.entry(key.into())?;
        blob.value_of(Some((tag, raw)))
    }

    /// The value of `key` and the entity whose blob holds it (the entity itself for an
    /// override).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Store, Value};
    ///
    /// let mut world = Store::new();
    /// let orc = world.insert_entries([("name", "Orc"), ("stats.health", "30")])?;
    /// let grunt = world.insert_instance(orc)?;
    /// world.get_mut(grunt).unwrap().set("name", "Grunt")?;
    /// let sheet = world.resolved(grunt).unwrap();
    /// assert_eq!(sheet.get_with_source("name"), Some((Value::Str("Grunt"), grunt)));
    /// assert_eq!(sheet.get_with_source("stats.health"), Some((Value::Str("30"), orc)));
    /// # Ok::<(), datacomp::Error>(())
    /// ```
    #[must_use]
    pub fn get_with_source(self, key: impl Into<Key>) -> Option<(Value<'a>, Id)> {
        match self.find(key.into())? {
            (_, _, tag, _) if tag == ValueType::Tombstone as u8 => None,
            (blob, source, tag, raw) => Some((blob.value_of(Some((tag, raw)))?, source)),
        }
    }

    /// The boolean at `key` as the entity reads it; `None` if absent or of another type.
    #[must_use]
    pub fn get_bool(self, key: impl Into<Key>) -> Option<bool> {
        // A tombstone is no boolean: `bool_of` answers `None` for it.
        self.find_with(key.into(), |_, _, tag, raw| BlobRef::bool_of(Some((tag, raw))))
    }

    /// The float at `key` as the entity reads it; `None` if absent or of another type.
    #[inline]
    #[must_use]
    pub fn get_float(self, key: impl Into<Key>) -> Option<f32> {
        // A tombstone is no float: `float_of` answers `None` for it.
        self.find_with(key.into(), |_, _, tag, raw| BlobRef::float_of(Some((tag, raw))))
    }

    /// The string at `key` as the entity reads it, borrowed from the blob that holds it.
    #[must_use]
    pub fn get_str(self, key: impl Into<Key>) -> Option<&'a str> {
        let (blob, tag, raw) = self.entry(key.into())?;
        blob.str_of(Some((tag, raw)))
    }

    /// The float array at `key` as the entity reads it, borrowed from the blob that holds it.
    #[must_use]
    pub fn get_floats(self, key: impl Into<Key>) -> Option<&'a [f32]> {
        let (blob, tag, raw) = self.entry(key.into())?;
        blob.floats_of(Some((tag, raw)))
    }

    /// Whether the entity reads a value at `key`.
    #[must_use]
    pub fn contains_key(self, key: impl Into<Key>) -> bool {
        self.entry(key.into()).is_some()
    }

    /// Every key the entity reads, with its value and the entity whose blob holds it: its own
    /// entries first (in its blob's order), then each prototype's that no nearer blob holds,
    /// tombstones and the prototypes' [`ID_KEY`] and [`ABSTRACT_KEY`] left out. O(k × d)
    /// lookups for k keys over a chain of d.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Store, Value};
    ///
    /// let mut world = Store::new();
    /// let orc = world.insert_entries([("name", "Orc"), ("title", "Brute")])?;
    /// let grunt = world.insert_instance(orc)?;
    /// world.get_mut(grunt).unwrap().set("name", "Grunt")?;
    /// world.remove_inherited(grunt, "title")?;
    /// let all: Vec<_> = world.resolved(grunt).unwrap().iter().map(|(k, v, from)| (v, from)).collect();
    /// assert_eq!(all, [(Value::Str("Grunt"), grunt)]);
    /// # Ok::<(), datacomp::Error>(())
    /// ```
    pub fn iter(self) -> impl Iterator<Item = (Key, Value<'a>, Id)> + 'a {
        let store = self.store;
        let levels = std::iter::once(self.id).chain(self.chain());
        let mut nearer: Vec<BlobRef<'a>> = Vec::new();
        levels.flat_map(move |level| {
            // INVARIANT: a chain's entities are live (`Links`), so this is never `None`.
            let blob = store.get(level).unwrap_or_else(|| BlobRef::from_valid(&layout::EMPTY));
            let above: Vec<BlobRef<'a>> = nearer.clone();
            nearer.push(blob);
            // Past a few dozen keys above, their keys sorted once: a key is then found in
            // O(log n), not by a scan of each blob above (a 100,000-key instance of a
            // 100,000-key prototype took minutes).
            let sorted = (above.iter().map(|b| b.len()).sum::<usize>() > 64).then(|| {
                let mut keys: Vec<u32> =
                    above.iter().flat_map(|b| b.keys().map(Key::raw)).collect();
                keys.sort_unstable();
                keys
            });
            let own = level == self.id;
            // Where the names nest, the paths the nearer blobs shadow (see `shadows`).
            let shadow = (!own && store.names().nested()).then(|| Shadow::of(store, &above));
            blob.iter()
                .filter(move |&(key, value)| {
                    !value.is_tombstone()
                        && (own || inherits(key))
                        && shadow.as_ref().is_none_or(|s| !s.hides(store, key))
                        && match &sorted {
                            Some(keys) => keys.binary_search(&key.raw()).is_err(),
                            None => above.iter().all(|b| !b.contains_key(key)),
                        }
                })
                .map(move |(key, value)| (key, value, level))
        })
    }

    /// Number of keys the entity reads (as [`iter`](Resolved::iter) counts them).
    #[must_use]
    pub fn len(self) -> usize {
        self.iter().count()
    }

    /// Whether the entity reads no key at all.
    #[must_use]
    pub fn is_empty(self) -> bool {
        self.iter().next().is_none()
    }

    /// A blob of everything the entity reads ([`Store::flatten`]).
    ///
    /// # Panics
    ///
    /// If the blob would pass 4 GiB ([`MAX_BYTES`](crate::blob::MAX_BYTES)): a chain of
    /// blobs of gigabytes each.
    #[must_use]
    pub fn to_blob(self) -> Blob {
        let entries: Vec<(Key, Value<'a>)> = self.iter().map(|(k, v, _)| (k, v)).collect();
        let mut blob = Blob::new();
        blob.try_set_all(&entries).expect("INVARIANT: values read from valid blobs fit a blob");
        blob
    }
}

impl std::fmt::Debug for Resolved<'_> {
    /// The entries it reads, keys by name, each with the entity that holds it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let entries = self
            .iter()
            .map(|(key, value, from)| (self.store.key_label(key).into_owned(), (value, from)));
        f.debug_map().entries(entries).finish()
    }
}
