//! [`Patch`]: the difference between two blobs, as keys to set and keys to remove; and the
//! merges built on it, [`Blob::merge`] and [`Blob::merge3`].
//!
//! Every change to an entity is "set a key" or "remove a key", and strings and float arrays
//! are replaced whole, so a difference is a set of keys and nothing finer: no text diffs, no
//! array splices.

use std::fmt;

use zerocopy::IntoBytes;

use super::bulk::{self, Finder};
use super::layout;
use super::write::BlobWrite;
use crate::blob::{Blob, BlobError, BlobRef, MAX_BYTES};
use crate::key::Key;
use crate::value::{OwnedValue, Value};

/// The changes that turn one blob into another: values to set and keys to remove.
///
/// Like a [`Blob`], a patch is one pointerless buffer, written out by
/// [`as_bytes`](Patch::as_bytes) and read back, checked, by [`from_bytes`](Patch::from_bytes),
/// so it goes to disk or over the network as it is. Its words, little-endian:
///
/// ```text
/// ┌───┬──────────────────────────┬───────────────────────────────────────────┐
/// │ r │ r keys to remove, sorted │ a blob of the values to set (Blob format) │
/// └───┴──────────────────────────┴───────────────────────────────────────────┘
/// ```
///
/// `apply(base, diff(base, target))` gives `target`, for every pair of blobs.
///
/// # Examples
///
/// ```
/// use datacomp::Blob;
/// use datacomp::blob::Patch;
///
/// let mut before = Blob::new();
/// before.set("name", "The One").unwrap();
/// before.set("stats.health", 100).unwrap();
/// before.set("status_effects.drunk", true).unwrap();
///
/// let mut after = before.clone();
/// after.set("stats.health", 95).unwrap();
/// after.remove("status_effects.drunk");
///
/// let patch = Blob::diff(&before, &after);
/// assert_eq!(patch.len(), 2);
/// assert_eq!(patch.sets().get_float("stats.health"), Some(95.0));
///
/// // Sent as bytes, and applied on the other side.
/// let received = Patch::from_bytes(patch.as_bytes())?;
/// let mut copy = before.clone();
/// received.apply(&mut copy);
/// assert_eq!(copy, after);
/// # Ok::<(), datacomp::BlobError>(())
/// ```
#[derive(Clone)]
pub struct Patch {
    // INVARIANT: `words[0]` is the number r of keys to remove, `words[1..=r]` those keys in
    // strictly ascending order, and `words[r + 1..]` a region that passes `layout::validate`
    // and holds none of them.
    words: Vec<u32>,
}

impl Patch {
    /// The patch that changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::blob::Patch;
    ///
    /// assert!(Patch::new().is_empty());
    /// ```
    #[must_use]
    pub fn new() -> Patch {
        let mut words = vec![0; 1 + layout::HEADER_WORDS];
        layout::init_empty(&mut words[1..]);
        Patch { words }
    }

    /// The changes that turn `base` into `target`: every key of `target` that `base` lacks or
    /// holds with another value (floats compared by bit pattern), and every key of `base` that
    /// `target` lacks. [`Blob::diff`] is the same for two `Blob`s.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    /// use datacomp::blob::Patch;
    ///
    /// let base: Blob = [("a", 1.0), ("b", 2.0)].into_iter().collect();
    /// let target: Blob = [("b", 3.0), ("c", 4.0)].into_iter().collect();
    /// let patch = Patch::between(base.as_blob_ref(), target.as_blob_ref());
    /// assert_eq!(patch.sets().len(), 2);
    /// assert_eq!(patch.removals().collect::<Vec<_>>(), ["a".into()]);
    /// ```
    #[must_use]
    #[allow(clippy::missing_panics_doc)] // The one `expect` states an invariant.
    pub fn between(base: BlobRef<'_>, target: BlobRef<'_>) -> Patch {
        let mut words = Vec::new();
        write_between(base, target, &mut words, &mut Vec::new());
        Patch { words }
    }

    /// Reads a patch written by [`as_bytes`](Patch::as_bytes), checking it as
    /// [`Blob::from_bytes`] checks a blob, and that the keys to remove are in ascending order
    /// and are not also set. The bytes are copied into an aligned buffer.
    ///
    /// # Errors
    ///
    /// A [`BlobError`] naming the first problem. Any input gives `Ok` or `Err`; none panics
    /// or reads out of bounds.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, BlobError};
    /// use datacomp::blob::Patch;
    ///
    /// let base: Blob = [("a", 1.0)].into_iter().collect();
    /// let patch = Blob::diff(&base, &Blob::new());
    /// assert_eq!(Patch::from_bytes(patch.as_bytes()).unwrap(), patch);
    /// assert_eq!(
    ///     Patch::from_bytes(&patch.as_bytes()[..6]),
    ///     Err(BlobError::PatchUnalignedLength { byte_len: 6 })
    /// );
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Patch, BlobError> {
        let byte_len = bytes.len();
        if !byte_len.is_multiple_of(4) {
            return Err(BlobError::PatchUnalignedLength { byte_len });
        }
        if byte_len < 4 {
            return Err(BlobError::PatchTruncated { byte_len });
        }
        let mut words = vec![0_u32; byte_len / 4];
        words.as_mut_bytes().copy_from_slice(bytes);
        validate(&words, &mut layout::Scratch::default())?;
        Ok(Patch { words })
    }

    /// The patch's bytes: what [`from_bytes`](Patch::from_bytes) reads.
    #[must_use]
    pub fn as_bytes(&self) -> &[u8] {
        self.words.as_bytes()
    }

    fn removal_words(&self) -> &[u32] {
        split(&self.words).0
    }

    /// The values to set, as a blob.
    #[must_use]
    pub fn sets(&self) -> BlobRef<'_> {
        split(&self.words).1
    }

    /// The keys to remove, in ascending order of their raw value.
    #[must_use]
    pub fn removals(&self) -> impl ExactSizeIterator<Item = Key> + '_ {
        self.removal_words().iter().map(|&raw| Key::from_raw(raw))
    }

    /// Number of changes: keys set plus keys removed.
    #[must_use]
    pub fn len(&self) -> usize {
        self.sets().len() + self.removal_words().len()
    }

    /// Whether the patch changes nothing.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Applies the patch to a [`Blob`] or to a store's entity ([`BlobMut`](crate::BlobMut)):
    /// removes its removals, sets its values. The target grows at most once.
    ///
    /// # Panics
    ///
    /// If the target would pass [`MAX_BYTES`](crate::blob::MAX_BYTES); [`try_apply`](Patch::try_apply)
    /// returns an error instead.
    #[track_caller]
    pub fn apply(&self, target: &mut impl PatchTarget) {
        if let Err(e) = self.try_apply(target) {
            panic!("Patch::apply: {e}");
        }
    }

    /// Applies the patch, as [`apply`](Patch::apply) does, or changes nothing.
    ///
    /// # Errors
    ///
    /// [`BlobError::TooLarge`] if the target would pass [`MAX_BYTES`](crate::blob::MAX_BYTES); the
    /// target is unchanged.
    pub fn try_apply(&self, target: &mut impl PatchTarget) -> Result<(), BlobError> {
        apply(&self.words, target)
    }
}

/// Appends to `out` the words of the patch from `base` to `target` ([`Patch::between`]).
/// `removals` is scratch space, kept between calls so that a store's diff allocates once.
/// Each blob's keys are found through an index of the other's: O(n log n).
pub(crate) fn write_between(
    base: BlobRef<'_>,
    target: BlobRef<'_>,
    out: &mut Vec<u32>,
    removals: &mut Vec<u32>,
) {
    let (base_words, target_words) = (base.as_words(), target.as_words());
    if layout::keys(base_words) == layout::keys(target_words) {
        // Entities made from one fixture share their key layout: then entry i of one is entry
        // i of the other, compared in place as raw words, and nothing is removed. `removals`
        // holds the positions that differ.
        removals.clear();
        layout::differing_entries(base_words, target_words, removals);
        let keys = layout::keys(target_words);
        let changed = || {
            removals.iter().map(|&i| {
                (Key::from_raw(keys[i as usize]), layout::entry(target_words, i as usize))
            })
        };
        write_parts(out, &[], changed);
        return;
    }
    // Otherwise each blob's keys are found through an index of the other's.
    let (in_base, in_target) = (Finder::new(base_words), Finder::new(target_words));
    let changed = || {
        target
            .iter()
            .filter(|(key, value)| !in_base.get(*key).is_some_and(|b| b.is_identical(value)))
    };
    removals.clear();
    removals.extend(base.keys().filter(|&key| !in_target.contains(key)).map(Key::raw));
    removals.sort_unstable();
    write_parts(out, removals, changed);
}

/// Appends to `out` the words of a patch: the keys to remove (sorted), then the entries
/// `sets()` gives (unique keys) as a blob sized for them exactly.
fn write_parts<'a, I: Iterator<Item = (Key, Value<'a>)>>(
    out: &mut Vec<u32>,
    removals: &[u32],
    sets: impl Fn() -> I,
) {
    let (count, payload) =
        sets().fold((0, 0), |(n, bytes), (_, value)| (n + 1, bytes + value.payload_bytes()));
    // A part of a valid blob's entries: within the format's limit as that blob is.
    let sets_bytes = layout::header_bytes(count) + payload;
    out.reserve(1 + removals.len() + sets_bytes / 4);
    out.push(removals.len() as u32);
    out.extend_from_slice(removals);
    let start = out.len();
    out.resize(start + sets_bytes / 4, 0);
    bulk::write_entries(&mut out[start..], count, sets());
}

/// Appends to `out` the words of the patch that takes back the valid patch `forward` made from
/// `base` ([`write_between`]`(base, target)`): from `target` to `base`, in O(the patch's
/// changes) lookups in `base` rather than a comparison of the two blobs. The keys `forward`
/// sets go back to `base`'s values, or are removed where `base` lacks them; the keys it removes
/// are set back.
pub(crate) fn write_reverse(
    base: BlobRef<'_>,
    forward: &[u32],
    out: &mut Vec<u32>,
    removals: &mut Vec<u32>,
) {
    let (removed, sets) = split(forward);
    // Many changes are looked up through an index of `base`'s keys: O(n log n), not O(n²).
    let finder = (sets.len() + removed.len() > 16).then(|| Finder::new(base.as_words()));
    let finder = finder.as_ref();
    let find = move |key: Key| -> Option<Value<'_>> {
        match finder {
            Some(finder) => finder.get(key),
            None => base.get(key),
        }
    };
    let back = move || {
        let set_back = sets.keys().filter_map(move |key| find(key).map(|value| (key, value)));
        let restored = removed.iter().filter_map(move |&raw| {
            let key = Key::from_raw(raw);
            find(key).map(|value| (key, value))
        });
        set_back.chain(restored)
    };
    removals.clear();
    removals.extend(sets.keys().filter(|&key| find(key).is_none()).map(Key::raw));
    removals.sort_unstable();
    write_parts(out, removals, back);
}

/// Free bytes that applying the valid patch in `words` takes at most.
pub(crate) fn room_needed(words: &[u32]) -> usize {
    room_for(split(words).1)
}

/// Checks that `words` hold a patch: the count of removals, the removals in strictly
/// ascending order, then a valid blob of values, none of whose keys is also removed.
pub(crate) fn validate(words: &[u32], scratch: &mut layout::Scratch) -> Result<(), BlobError> {
    let byte_len = words.len() * 4;
    let Some(&removals) = words.first() else {
        return Err(BlobError::PatchTruncated { byte_len });
    };
    let sets_start = (removals as usize).checked_add(1).filter(|&end| end <= words.len());
    let Some(sets_start) = sets_start else {
        return Err(BlobError::RemovalsOutOfBounds { removals, byte_len });
    };
    let (head, sets) = words.split_at(sets_start);
    let removed = &head[1..];
    if let Some(index) = removed.windows(2).position(|pair| pair[0] >= pair[1]) {
        return Err(BlobError::RemovalsNotAscending { index: index + 1 });
    }
    layout::validate(sets, scratch).map_err(|e| BlobError::PatchSets(Box::new(e)))?;
    if let Some(key) = layout::keys(sets).iter().find(|k| removed.binary_search(k).is_ok()) {
        return Err(BlobError::SetAndRemoved { key: Key::from_raw(*key) });
    }
    Ok(())
}

/// A valid patch's removals and values.
fn split(words: &[u32]) -> (&[u32], BlobRef<'_>) {
    let (head, sets) = words.split_at(1 + words[0] as usize);
    (&head[1..], BlobRef::from_valid(sets))
}

/// Applies the valid patch in `words` to `target`, growing it at most once, or changes
/// nothing.
pub(crate) fn apply(words: &[u32], target: &mut impl PatchTarget) -> Result<(), BlobError> {
    let (removals, sets) = split(words);
    target.remove_and_set_all(removals, room_for(sets), sets)
}

/// Applies the valid patch in `words` to the blob region `target` where it is; returns `false`
/// when a value does not fit its free space. Then `target` is still a valid blob, with part of
/// the patch applied: applying the whole patch again (to a copy with room) completes it, since
/// a patch sets and removes keys, which is idempotent.
pub(crate) fn apply_in_place(words: &[u32], target: &mut [u32]) -> bool {
    let (removals, sets) = split(words);
    for &key in removals {
        layout::remove(target, Key::from_raw(key));
    }
    sets.iter().all(|(key, value)| layout::set(target, key, value).is_ok())
}

impl Default for Patch {
    fn default() -> Patch {
        Patch::new()
    }
}

impl PartialEq for Patch {
    /// Equal when both set the same keys to identical values and remove the same keys,
    /// whatever the layout of their bytes.
    fn eq(&self, other: &Patch) -> bool {
        self.removal_words() == other.removal_words() && self.sets().same_entries(other.sets())
    }
}

impl Eq for Patch {}

impl fmt::Debug for Patch {
    /// `Patch { set: {#1a2b3c4d: Float(95.0)}, remove: [#5e6f7a8b] }`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Patch")
            .field("set", &self.sets())
            .field("remove", &self.removals().collect::<Vec<_>>())
            .finish()
    }
}

/// Free bytes that setting every entry of `values` takes at most, in any blob: its header
/// entries (with tag padding) and payloads, which `values`' own used bytes bound (its 8-byte
/// header is to spare for the padding).
fn room_for(values: BlobRef<'_>) -> usize {
    if values.is_empty() { 0 } else { values.used_bytes() }
}

/// What a [`Patch`] applies to: a [`Blob`], or a store's entity through
/// [`BlobMut`](crate::BlobMut). Sealed: its supertrait, the blob's one write path, is private
/// to the crate, which implements it for those two only.
pub trait PatchTarget: BlobWrite {}

impl PatchTarget for Blob {}

impl Blob {
    /// The changes that turn `base` into `target`: see [`Patch`].
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    ///
    /// let base: Blob = [("health", 100.0)].into_iter().collect();
    /// let mut target = base.clone();
    /// target.set("health", 95.0).unwrap();
    /// let patch = Blob::diff(&base, &target);
    /// let mut copy = base.clone();
    /// patch.apply(&mut copy);
    /// assert_eq!(copy, target);
    /// ```
    #[must_use]
    pub fn diff(base: &Blob, target: &Blob) -> Patch {
        Patch::between(base.as_blob_ref(), target.as_blob_ref())
    }

    /// Sets every key of `other` to its value there, overwriting this blob's: a two-way merge
    /// where `other` wins. Keys only this blob has stay. The blob grows at most once.
    ///
    /// # Panics
    ///
    /// If the blob would pass [`MAX_BYTES`]; [`try_merge`](Blob::try_merge) returns the error
    /// instead, the form for an `other` that comes from data (a mod's buff, say).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    ///
    /// let mut sheet: Blob = [("health", 100.0), ("mana", 50.0)].into_iter().collect();
    /// let buff: Blob = [("mana", 80.0), ("haste", 1.5)].into_iter().collect();
    /// sheet.merge(&buff);
    /// let expected: Blob = [("health", 100.0), ("mana", 80.0), ("haste", 1.5)].into_iter().collect();
    /// assert_eq!(sheet, expected);
    /// ```
    #[track_caller]
    pub fn merge<'a>(&mut self, other: impl Into<BlobRef<'a>>) {
        if let Err(e) = self.try_merge(other) {
            panic!("Blob::merge: {e}");
        }
    }

    /// Merges `other` into this blob as [`merge`](Blob::merge) does, or changes nothing.
    ///
    /// # Errors
    ///
    /// [`BlobError::TooLarge`] if the blob would pass [`MAX_BYTES`]; the blob is unchanged.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Blob;
    ///
    /// let mut sheet: Blob = [("mana", 50.0)].into_iter().collect();
    /// sheet.try_merge(&[("mana", 80.0)].into_iter().collect::<Blob>())?;
    /// assert_eq!(sheet.get_float("mana"), Some(80.0));
    /// # Ok::<(), datacomp::BlobError>(())
    /// ```
    pub fn try_merge<'a>(&mut self, other: impl Into<BlobRef<'a>>) -> Result<(), BlobError> {
        let other = other.into();
        self.set_all(room_for(other), other)
    }

    /// A three-way merge: the changes `ours` and `theirs` each made to `base`, combined.
    ///
    /// Key by key: a change made on one side only is taken; the same change made on both
    /// sides is taken once. **Remove beats change**: a key one side removed and the other
    /// changed is removed. A key both sides set to different values (changed, or added where
    /// `base` lacks it) is a [`Conflict`]; floats are compared by bit pattern. A blob knows
    /// keys, not their names: a merge that holds a value and a key under it (`stats` added by
    /// one side, `stats.health` by the other) is not seen here; a store's merge
    /// ([`store::merge3`](crate::store::merge3), or of one entity:
    /// [`store::merge3_entity`](crate::store::merge3_entity)), which has the names, settles
    /// it as a [`PathConflict`](crate::store::PathConflict).
    ///
    /// # Errors
    ///
    /// [`Conflicts`]: every conflicting key with its three values, and the merge of every
    /// other key, to finish with [`Conflicts::into_ours`], [`Conflicts::into_theirs`] or
    /// [`Conflicts::resolve`].
    ///
    /// # Panics
    ///
    /// If the merge would pass [`MAX_BYTES`] (possible only when both sides are near it).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, OwnedValue};
    ///
    /// let base: Blob = [("health", 100.0), ("mana", 50.0), ("gold", 10.0)].into_iter().collect();
    /// let mut ours = base.clone();
    /// ours.set("health", 90.0).unwrap(); // only we changed it
    /// ours.remove("gold"); // we removed it...
    /// let mut theirs = base.clone();
    /// theirs.set("mana", 70.0).unwrap(); // only they changed it
    /// theirs.set("gold", 20.0).unwrap(); // ...they changed it: remove beats change
    ///
    /// let merged = Blob::merge3(&base, &ours, &theirs)?;
    /// assert_eq!(merged, [("health", 90.0), ("mana", 70.0)].into_iter().collect::<Blob>());
    ///
    /// theirs.set("health", 80.0).unwrap(); // now both changed it, differently
    /// let conflicts = Blob::merge3(&base, &ours, &theirs).unwrap_err();
    /// assert_eq!(conflicts.conflicts()[0].ours, OwnedValue::Float(90.0));
    /// assert_eq!(conflicts.into_theirs().get_float("health"), Some(80.0));
    /// # Ok::<(), datacomp::blob::Conflicts>(())
    /// ```
    pub fn merge3(base: &Blob, ours: &Blob, theirs: &Blob) -> Result<Blob, Conflicts> {
        let (base, ours, theirs) = (base.as_blob_ref(), ours.as_blob_ref(), theirs.as_blob_ref());
        // Each side's keys found through an index: O(n log n) in all.
        let (in_base, in_ours, in_theirs) = (
            Finder::new(base.as_words()),
            Finder::new(ours.as_words()),
            Finder::new(theirs.as_words()),
        );
        let same = |a: Option<Value<'_>>, b: Option<Value<'_>>| match (a, b) {
            (Some(a), Some(b)) => a.is_identical(&b),
            (a, b) => a.is_none() && b.is_none(),
        };
        // Every key of the three once: base's, then ours' new ones, then theirs' new ones.
        let keys = base
            .keys()
            .chain(ours.keys().filter(|&k| !in_base.contains(k)))
            .chain(theirs.keys().filter(|&k| !in_base.contains(k) && !in_ours.contains(k)));

        // What becomes of each of our entries (by position), and theirs' new keys.
        let mut fates = vec![Fate::Keep; ours.len()];
        let mut added = Vec::new();
        let mut conflicts = Vec::new();
        for key in keys {
            let at = in_ours.find(key);
            let (b, o, t) = (
                in_base.get(key),
                at.map(|i| layout::entry(ours.as_words(), i)),
                in_theirs.get(key),
            );
            if same(o, t) || same(t, b) {
                // Both agree, or only ours changed it: ours stands.
                continue;
            }
            match (at, o, t) {
                // Theirs removed it: only theirs changed it, or remove beats our change.
                (Some(i), _, None) => fates[i] = Fate::Remove,
                // Only theirs changed (or added) it.
                (Some(i), _, Some(t)) if same(o, b) => fates[i] = Fate::Theirs(t),
                (None, _, Some(t)) if same(o, b) => added.push((key, t)),
                (Some(_), Some(o), Some(t)) => conflicts.push(Conflict {
                    key,
                    base: b.map(|v| v.to_owned_value()),
                    ours: o.to_owned_value(),
                    theirs: t.to_owned_value(),
                }),
                // We removed what they changed: remove beats change.
                _ => {}
            }
        }

        // Ours, in its order, with theirs' changes; then theirs' new keys, in their order.
        let entries = || {
            ours.iter()
                .zip(&fates)
                .filter_map(|((key, o), fate)| match *fate {
                    Fate::Keep => Some((key, o)),
                    Fate::Theirs(t) => Some((key, t)),
                    Fate::Remove => None,
                })
                .chain(added.iter().copied())
        };
        let (count, payload) =
            entries().fold((0, 0), |(n, bytes), (_, value)| (n + 1, bytes + value.payload_bytes()));
        // Each blob is within 4 GiB; the merge of two, in theory, may not be.
        let bytes = layout::header_bytes(count) + payload;
        assert!(bytes <= MAX_BYTES, "Blob::merge3: the merge would take {bytes} bytes, past 4 GiB");
        let mut words = vec![0; bytes / 4];
        bulk::write_entries(&mut words, count, entries());
        let merged = Blob::from_valid_words(words);
        if conflicts.is_empty() { Ok(merged) } else { Err(Conflicts { merged, conflicts }) }
    }
}

/// What [`Blob::merge3`] does with one of our entries.
#[derive(Clone, Copy)]
enum Fate<'a> {
    Keep,
    Theirs(Value<'a>),
    Remove,
}

/// A key both sides of a [`Blob::merge3`] set to different values.
#[derive(Clone, Debug, PartialEq)]
pub struct Conflict {
    /// The key.
    pub key: Key,
    /// Its value in the base, if the base had it.
    pub base: Option<OwnedValue>,
    /// Our value.
    pub ours: OwnedValue,
    /// Their value.
    pub theirs: OwnedValue,
}

/// Why a [`Blob::merge3`] stopped: the conflicting keys, and the merge of every other key.
#[derive(Clone, Debug)]
pub struct Conflicts {
    // INVARIANT: every key merged; each conflicting key holds ours.
    merged: Blob,
    conflicts: Vec<Conflict>,
}

/// Which side wins a [`Conflict`], for [`Conflicts::resolve`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Our value.
    Ours,
    /// Their value.
    Theirs,
}

impl Conflicts {
    /// The conflicting keys, in the order the merge met them.
    #[must_use]
    pub fn conflicts(&self) -> &[Conflict] {
        &self.conflicts
    }

    /// The merge, with our value for every conflicting key.
    #[must_use]
    pub fn into_ours(self) -> Blob {
        self.merged
    }

    /// The merge, with their value for every conflicting key.
    #[must_use]
    pub fn into_theirs(self) -> Blob {
        self.resolve(|_| Side::Theirs)
    }

    /// The merge, with the value of the side `choose` picks for each conflicting key.
    ///
    /// # Panics
    ///
    /// If the merge would pass [`MAX_BYTES`](crate::blob::MAX_BYTES) with their values.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, OwnedValue};
    /// use datacomp::blob::Side;
    ///
    /// let base: Blob = [("health", 100.0), ("mana", 50.0)].into_iter().collect();
    /// let ours: Blob = [("health", 90.0), ("mana", 40.0)].into_iter().collect();
    /// let theirs: Blob = [("health", 80.0), ("mana", 60.0)].into_iter().collect();
    /// let conflicts = Blob::merge3(&base, &ours, &theirs).unwrap_err();
    /// assert_eq!(conflicts.conflicts().len(), 2);
    ///
    /// // The higher value wins.
    /// let merged = conflicts.resolve(|c| match (&c.ours, &c.theirs) {
    ///     (OwnedValue::Float(o), OwnedValue::Float(t)) if t > o => Side::Theirs,
    ///     _ => Side::Ours,
    /// });
    /// assert_eq!(merged, [("health", 90.0), ("mana", 60.0)].into_iter().collect::<Blob>());
    /// ```
    #[must_use]
    pub fn resolve(self, mut choose: impl FnMut(&Conflict) -> Side) -> Blob {
        let Conflicts { mut merged, conflicts } = self;
        let theirs: Vec<&Conflict> =
            conflicts.iter().filter(|c| choose(c) == Side::Theirs).collect();
        // Every conflicting key is in `merged`: only their payloads need room.
        let room = theirs.iter().map(|c| c.theirs.as_value().payload_bytes()).sum();
        if let Err(e) = merged.set_all(room, theirs.iter().map(|c| (c.key, c.theirs.as_value()))) {
            panic!("Conflicts::resolve: {e}");
        }
        merged
    }
}

impl fmt::Display for Conflicts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.conflicts.len();
        write!(f, "{n} key{} changed differently on both sides:", if n == 1 { "" } else { "s" })?;
        for c in self.conflicts.iter().take(5) {
            write!(f, " {} (ours {:?}, theirs {:?})", c.key, c.ours, c.theirs)?;
        }
        if n > 5 {
            write!(f, " and {} more", n - 5)?;
        }
        Ok(())
    }
}

impl std::error::Error for Conflicts {}
