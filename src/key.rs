//! Hashed keys: the 32-bit names of a blob's values.

use std::fmt;

/// The Fx multiplier for 32-bit hashes (the low half of fxhash's 64-bit seed).
const SEED: u32 = 0x2722_0a95;
/// The Fx rotation.
const ROTATE: u32 = 5;

/// One Fx round: mixes `word` into `hash`.
///
/// This is `fxhash::FxHasher32::write_u32`, written out so that it is `const` and cannot change
/// under us: keys are saved to disk.
const fn mix(hash: u32, word: u32) -> u32 {
    (hash.rotate_left(ROTATE) ^ word).wrapping_mul(SEED)
}

/// Hashes one path segment: fxhash's 32-bit algorithm over its UTF-8 bytes, read as
/// little-endian words, then the tail one byte at a time.
const fn hash_segment(segment: &str) -> u32 {
    let bytes = segment.as_bytes();
    let mut hash = 0;
    let mut i = 0;
    while i + 4 <= bytes.len() {
        let word = u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
        hash = mix(hash, word);
        i += 4;
    }
    while i < bytes.len() {
        hash = mix(hash, bytes[i] as u32);
        i += 1;
    }
    hash
}

/// The 32-bit hash of a path such as `stats.health`: the name of one value in a blob.
///
/// Each segment is hashed on its own with fxhash's 32-bit algorithm over its UTF-8 bytes, and
/// the segment hashes are combined in order, so `stats.health` differs from `health.stats`, and a
/// segment may itself contain a `.` when built with [`Key::path`] or [`Key::child`].
///
/// Keys are saved to disk, so the function is fixed: it gives the same value on every platform
/// and in every release of this crate (golden values are pinned in the tests). Blobs store only
/// the hash; names are kept elsewhere (for export and debugging) when they are kept at all.
///
/// ```text
/// Key::parse("stats.health") = child(new("stats"), "health")
///                            = fx_round(fx("stats"), fx("health"))
/// ```
///
/// # Examples
///
/// ```
/// use datacomp::Key;
///
/// const HEALTH: Key = Key::path(&["stats", "health"]);
/// assert_eq!(HEALTH, Key::new("stats").child("health"));
/// assert_eq!(HEALTH, Key::parse("stats.health"));
/// assert_eq!(HEALTH, "stats.health".into());
/// assert_ne!(HEALTH, Key::parse("health.stats"));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Key(u32);

impl Key {
    /// The key of a single segment, hashed as a whole (a `.` inside it is not a separator).
    ///
    /// Its raw value equals `fxhash::FxHasher32` fed the segment's bytes with `Hasher::write`.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Key;
    ///
    /// const NAME: Key = Key::new("name");
    /// assert_eq!(NAME, Key::parse("name"));
    /// // A dot inside one segment is part of the name, not a separator.
    /// assert_ne!(Key::new("stats.health"), Key::parse("stats.health"));
    /// ```
    #[must_use]
    pub const fn new(segment: &str) -> Key {
        Key(hash_segment(segment))
    }

    /// The key of a path given as segments, combined in order.
    ///
    /// An empty path is the key of the empty segment, `Key::new("")`.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Key;
    ///
    /// const MANA: Key = Key::path(&["stats", "mana"]);
    /// assert_eq!(MANA, Key::new("stats").child("mana"));
    /// assert_eq!(Key::path(&["name"]), Key::new("name"));
    /// ```
    #[must_use]
    pub const fn path(segments: &[&str]) -> Key {
        if segments.is_empty() {
            return Key::new("");
        }
        let mut key = Key::new(segments[0]);
        let mut i = 1;
        while i < segments.len() {
            key = key.child(segments[i]);
            i += 1;
        }
        key
    }

    /// The key of `segment` nested under this key: `self` followed by one more path segment.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Key;
    ///
    /// let stats = Key::new("stats");
    /// assert_eq!(stats.child("health"), Key::parse("stats.health"));
    /// // A segment may contain a dot when it is given on its own.
    /// assert_ne!(stats.child("a.b"), Key::parse("stats.a.b"));
    /// ```
    #[must_use]
    pub const fn child(self, segment: &str) -> Key {
        self.child_key(Key::new(segment))
    }

    /// The key of the single-segment key `segment` nested under this key.
    ///
    /// `parent.child_key(Key::new(s)) == parent.child(s)`: useful when segment keys are
    /// precomputed.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Key;
    ///
    /// const HEALTH: Key = Key::new("health");
    /// assert_eq!(Key::new("stats").child_key(HEALTH), Key::parse("stats.health"));
    /// ```
    #[must_use]
    pub const fn child_key(self, segment: Key) -> Key {
        Key(mix(self.0, segment.0))
    }

    /// Parses a dotted path: `"stats.health"` is `Key::path(&["stats", "health"])`.
    ///
    /// Every string is a valid path; `""` is the single empty segment and `"a..b"` has an
    /// empty middle segment.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Key;
    ///
    /// assert_eq!(Key::parse("status_effects.drunk"), Key::path(&["status_effects", "drunk"]));
    /// ```
    #[must_use]
    pub fn parse(path: &str) -> Key {
        let mut segments = path.split('.');
        // `split` always yields at least one segment.
        let first = Key::new(segments.next().unwrap_or(""));
        segments.fold(first, Key::child)
    }

    /// Parses a JSON Pointer (RFC 6901): `"/stats/health"` is `Key::path(&["stats", "health"])`.
    /// Unlike a dotted path, a segment may hold any text: `~1` stands for `/` and `~0` for `~`.
    /// This is how a save file names keys, and how a member name containing `.` is reached.
    ///
    /// Returns `None` for a string that does not start with `/` (`""` points at a whole
    /// document, not at a key).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Key;
    ///
    /// assert_eq!(Key::from_pointer("/stats/health"), Some(Key::parse("stats.health")));
    /// assert_eq!(Key::from_pointer("/a.b/c~1d"), Some(Key::path(&["a.b", "c/d"])));
    /// assert_eq!(Key::from_pointer("stats"), None);
    /// ```
    #[must_use]
    pub fn from_pointer(pointer: &str) -> Option<Key> {
        let mut segments = pointer.strip_prefix('/')?.split('/').map(crate::json::unescape);
        // `split` always yields at least one segment.
        let first = Key::new(&segments.next().unwrap_or_default());
        Some(segments.fold(first, |key, segment| key.child(&segment)))
    }

    /// The 32-bit hash value, as stored in a blob.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Key;
    ///
    /// let key = Key::parse("stats.health");
    /// assert_eq!(Key::from_raw(key.raw()), key);
    /// ```
    #[must_use]
    pub const fn raw(self) -> u32 {
        self.0
    }

    /// The key with the given hash value.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Key;
    ///
    /// assert_eq!(format!("{:?}", Key::from_raw(0x1a2b_3c4d)), "#1a2b3c4d");
    /// ```
    #[must_use]
    pub const fn from_raw(raw: u32) -> Key {
        Key(raw)
    }
}

impl From<&str> for Key {
    /// Parses a dotted path, as [`Key::parse`] does.
    fn from(path: &str) -> Key {
        Key::parse(path)
    }
}

impl From<&String> for Key {
    /// Parses a dotted path, as [`Key::parse`] does.
    fn from(path: &String) -> Key {
        Key::parse(path)
    }
}

/// `#` and eight hex digits: the form export uses for a key whose name is unknown.
impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{:08x}", self.0)
    }
}

/// `#` and eight hex digits, as for `Debug`.
impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::Hasher;

    fn fxhash32(bytes: &[u8]) -> u32 {
        let mut hasher = fxhash::FxHasher32::default();
        hasher.write(bytes);
        hasher.finish() as u32
    }

    #[test]
    fn segment_hash_is_fxhasher32_write() {
        for s in ["", "a", "ab", "abc", "name", "stats", "health", "status_effects", "é✓ü"] {
            assert_eq!(Key::new(s).raw(), fxhash32(s.as_bytes()), "segment {s:?}");
        }
    }

    #[test]
    fn child_is_an_fx_round_over_the_segment_hash() {
        let mut hasher = fxhash::FxHasher32::default();
        hasher.write(b"stats");
        hasher.write_u32(Key::new("health").raw());
        assert_eq!(Key::parse("stats.health").raw(), hasher.finish() as u32);
    }
}
