//! Hashed keys: the 32-bit names of a blob's values.

mod error;

pub use error::KeyError;

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

/// The most segments a key's name may have (`a.b.c` has 3): deeper paths are refused where a
/// name enters a store (a JSON import, a write with a key given as text), naming the count and
/// this limit.
///
/// 125 is what keeps every export importable: a key of 125 segments holding a float array,
/// written inside the array of every entity, nests 127 levels of JSON, the most `serde_json`
/// (and so the import) reads before its recursion limit. A name deeper than this (only a save
/// written before the limit can hold one) is exported at the top level by its hash, `"#1a2b3c4d"`,
/// and nothing that walks a name recurses, so no depth can overflow the stack.
///
/// # Examples
///
/// ```
/// use datacomp::{Error, ImportOptions, KeyError, Store};
/// use datacomp::text::JsonErrorKind;
/// use datacomp::key::MAX_PATH_SEGMENTS;
///
/// let mut store = Store::new();
/// let id = store.insert_empty();
/// let deepest = vec!["a"; MAX_PATH_SEGMENTS].join(".");
/// store.get_mut(id).unwrap().set(deepest.as_str(), 1.0)?;
/// let deeper = format!("{deepest}.a");
/// let err = store.get_mut(id).unwrap().set(deeper.as_str(), 1.0).unwrap_err();
/// assert!(matches!(err, Error::Key(KeyError::PathTooDeep { .. })));
///
/// let json = format!("{}1{}", r#"{"a":"#.repeat(126), "}".repeat(126));
/// let err = store.import(&json, &ImportOptions::strict()).unwrap_err();
/// assert_eq!(err.kind(), &JsonErrorKind::TooDeep { segments: 126, limit: 125 });
/// # Ok::<(), Error>(())
/// ```
pub const MAX_PATH_SEGMENTS: usize = 125;

/// The Fx multiplier for 32-bit hashes (the low half of fxhash's 64-bit seed).
const SEED: u32 = 0x2722_0a95;
/// The Fx rotation.
const ROTATE: u32 = 5;

/// One Fx round: mixes `word` into `hash`.
///
/// This is `fxhash::FxHasher32::write_u32` (and `write_u8`, for a byte), written out so that
/// it is `const` and cannot change under us: keys are saved to disk.
const fn mix(hash: u32, word: u32) -> u32 {
    (hash.rotate_left(ROTATE) ^ word).wrapping_mul(SEED)
}

/// Hashes one path segment: one Fx round per UTF-8 byte, exactly `fxhash::FxHasher32` fed
/// each byte with `write_u8`.
///
/// Every round is a bijection of the hash for a fixed byte, and of the byte for a fixed hash,
/// so two segments of one length that differ in one byte never collide. (Fed four bytes a
/// word, as key hash 1 was, a difference in a word's top byte reached only the hash's top
/// bits, and the next word's low byte could cancel it: `item_1409` and `item_1482` collided.)
///
/// An empty segment hashes as the one byte `0xFF` would (no UTF-8 text holds it): key hash 3.
/// (Key hash 2 hashed it as nothing, 0, and 0 is a fixed point of combining with 0: `""`,
/// `"."` and `".."` were one key, and `.a` was `..a`.)
const fn hash_segment(segment: &str) -> u32 {
    let bytes = segment.as_bytes();
    if bytes.is_empty() {
        return EMPTY_SEGMENT;
    }
    let mut hash = 0;
    let mut i = 0;
    while i < bytes.len() {
        hash = mix(hash, bytes[i] as u32);
        i += 1;
    }
    hash
}

/// The hash of an empty segment (key hash 3): the Fx round of the byte `0xFF`, which no UTF-8
/// text holds.
const EMPTY_SEGMENT: u32 = mix(0, 0xFF);

/// Key hash 2, which saves written before key hash 3 use: as now, but an empty segment hashed
/// as 0. Kept only to read those saves: their keys differ from now only in paths with an
/// empty segment (see `format::upgrade`).
pub(crate) mod v2 {
    use super::{Key, mix};

    fn segment(segment: &str) -> u32 {
        segment.bytes().fold(0, |hash, byte| mix(hash, u32::from(byte)))
    }

    /// The key-hash-2 key of a path of one segment.
    pub(crate) fn first(first: &str) -> Key {
        Key(segment(first))
    }

    /// The key-hash-2 key of `segment` under the path whose key-hash-2 key is `parent`.
    pub(crate) fn child(parent: Key, segment: &str) -> Key {
        Key(mix(parent.0, self::segment(segment)))
    }

    /// The key-hash-2 key of a path given as segments (at least one).
    pub(crate) fn path<S: AsRef<str>>(mut segments: impl Iterator<Item = S>) -> Key {
        let first = segments.next().map_or(Key(0), |s| self::first(s.as_ref()));
        segments.fold(first, |key, s| child(key, s.as_ref()))
    }
}

/// Key hash 1, which saves written before key hash 2 use: each segment fed to the Fx round
/// four bytes (a little-endian word) at a time, then the tail one byte at a time; segments
/// combined as now. Kept only to read those saves (see [`crate::save`]'s upgrade).
pub(crate) mod v1 {
    use super::{Key, mix};

    /// One segment's key-hash-1 value.
    fn segment(segment: &str) -> u32 {
        let bytes = segment.as_bytes();
        let mut words = bytes.chunks_exact(4);
        let mut hash = 0;
        for word in &mut words {
            hash = mix(hash, u32::from_le_bytes([word[0], word[1], word[2], word[3]]));
        }
        for &byte in words.remainder() {
            hash = mix(hash, u32::from(byte));
        }
        hash
    }

    /// The key-hash-1 key of a path given as segments (at least one).
    pub(crate) fn path<S: AsRef<str>>(mut segments: impl Iterator<Item = S>) -> Key {
        let first = segments.next().map_or(0, |s| segment(s.as_ref()));
        Key(segments.fold(first, |hash, s| mix(hash, segment(s.as_ref()))))
    }
}

/// The 32-bit hash of a path such as `stats.health`: the name of one value in a blob.
///
/// Each segment is hashed on its own with fxhash's 32-bit round fed its UTF-8 bytes one at a
/// time, and the segment hashes are combined in order, so `stats.health` differs from
/// `health.stats`, and a segment may itself contain a `.` when built with [`Key::path`] or
/// [`Key::child`].
///
/// Keys are saved to disk, so the function is fixed: it gives the same value on every platform
/// and in every release of this crate (golden values are pinned in the tests; a save names its
/// key hash, and one of the older key hash 1 is rehashed when it loads). Blobs store only the
/// hash; a [`Store`](crate::Store) keeps the name of every key it was given as text, for
/// export, display and upgrades.
///
/// Two different paths can still hash to one key (32 bits: about 4.7 colliding pairs among
/// 200,000 random names, and none among numbered names such as `item_0` .. `item_199999`, which
/// differ in few bytes). A store refuses a name whose key it records under another name.
///
/// One family always collides: a segment of NUL bytes only (`"\0"`, `"\0\0"`) hashes to 0,
/// as does any path of such segments (`"\0.\0"`), which is also `Key::default()`: each Fx
/// round of a zero byte on a zero hash is zero. The hash is fixed by the save format, so the
/// second such name a store is given is refused as a collision like any other
/// ([`KeyError::Collision`], or [`JsonErrorKind::KeyCollision`] on import), never merged with
/// the first; a `Key::default()` set without a name is named by the first.
///
/// [`JsonErrorKind::KeyCollision`]: crate::text::JsonErrorKind::KeyCollision
///
/// ```text
/// Key::parse("stats.health") = child(new("stats"), "health")
///                            = fx_round(fx("stats"), fx("health"))
/// fx("name") = fx_round(fx_round(fx_round(fx_round(0, 'n'), 'a'), 'm'), 'e')
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
    /// Its raw value equals `fxhash::FxHasher32` fed the segment's bytes one at a time with
    /// `Hasher::write_u8`.
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
    /// An empty path is the key of the empty segment, `Key::new("")`. A `Key` is only the
    /// hash: a store given it records no name, and exports it as `"#1a2b3c4d"` unless the name
    /// reaches it another way. For a `const` that keeps its name at the same cost on reads,
    /// declare a [`KeyPath`]: `const MANA: KeyPath = KeyPath::dotted("stats.mana");`
    /// ([`KeyPath::pointer`] for a segment that holds a `.`).
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
    pub const fn parse(path: &str) -> Key {
        // One pass over the bytes: each segment's hash is built as its bytes go by, and
        // combined with the path so far at each '.' (as `Key::path` over the split would).
        let bytes = path.as_bytes();
        let (mut key, mut segment, mut first, mut empty) = (0, 0, true, true);
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'.' {
                if empty {
                    segment = EMPTY_SEGMENT;
                }
                key = if first { segment } else { mix(key, segment) };
                (segment, first, empty) = (0, false, true);
            } else {
                segment = mix(segment, bytes[i] as u32);
                empty = false;
            }
            i += 1;
        }
        if empty {
            segment = EMPTY_SEGMENT;
        }
        Key(if first { segment } else { mix(key, segment) })
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
    pub const fn from_pointer(pointer: &str) -> Option<Key> {
        // One pass over the bytes, as `parse` makes: a segment's hash is built from its
        // unescaped bytes as they go by (`~1` feeds `/`, `~0` feeds `~`, any other `~` itself,
        // as `unescape` reads them), and combined with the path so far at each `/`.
        let bytes = pointer.as_bytes();
        if bytes.is_empty() || bytes[0] != b'/' {
            return None;
        }
        let (mut key, mut segment, mut first, mut empty) = (0, 0, true, true);
        let mut i = 1;
        while i < bytes.len() {
            let byte = bytes[i];
            i += 1;
            if byte == b'/' {
                if empty {
                    segment = EMPTY_SEGMENT;
                }
                key = if first { segment } else { mix(key, segment) };
                (segment, first, empty) = (0, false, true);
                continue;
            }
            empty = false;
            let fed = if byte == b'~' && i < bytes.len() && bytes[i] == b'1' {
                i += 1;
                b'/'
            } else if byte == b'~' && i < bytes.len() && bytes[i] == b'0' {
                i += 1;
                b'~'
            } else {
                byte
            };
            segment = mix(segment, fed as u32);
        }
        if empty {
            segment = EMPTY_SEGMENT;
        }
        Some(Key(if first { segment } else { mix(key, segment) }))
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

impl From<KeyPath<'_>> for Key {
    /// The path's key, hashed when the path was made: a `const` [`KeyPath`] reads as fast as
    /// a `const` [`Key`].
    #[inline]
    fn from(path: KeyPath<'_>) -> Key {
        path.key
    }
}

impl From<&KeyPath<'_>> for Key {
    /// The path's key, as for a [`KeyPath`] by value.
    #[inline]
    fn from(path: &KeyPath<'_>) -> Key {
        path.key
    }
}

/// Reads a key as people write one: `#` and eight hex digits is the key with that hash (the
/// form `Display` writes), text starting with `/` a JSON Pointer (as [`Key::from_pointer`]
/// reads it), and any other text a dotted path (as [`Key::parse`] reads it).
///
/// Unlike [`Key::parse`], which takes every string, this refuses the empty string (a key
/// left out, more likely than the empty segment) and a `#` not followed by exactly eight hex
/// digits. O(length of the text), no allocation but the error's copy of the text.
///
/// # Errors
///
/// [`KeyError::Empty`] or [`KeyError::BadHash`], for the rule the text broke.
///
/// # Examples
///
/// ```
/// use datacomp::{Key, KeyError};
///
/// assert_eq!("stats.health".parse::<Key>()?, Key::parse("stats.health"));
/// assert_eq!("/a.b/c~1d".parse::<Key>()?, Key::path(&["a.b", "c/d"]));
/// assert_eq!("#1a2b3c4d".parse::<Key>()?, Key::from_raw(0x1a2b_3c4d));
/// let key = Key::parse("stats.health");
/// assert_eq!(key.to_string().parse::<Key>()?, key);
///
/// let err = "#12".parse::<Key>().unwrap_err();
/// assert_eq!(err, KeyError::BadHash { input: "#12".into() });
/// assert_eq!(
///     err.to_string(),
///     "bad key \"#12\": a raw key is # and 8 hex digits, as in #1a2b3c4d"
/// );
/// assert_eq!("".parse::<Key>().unwrap_err(), KeyError::Empty);
/// # Ok::<(), KeyError>(())
/// ```
impl FromStr for Key {
    type Err = KeyError;

    fn from_str(text: &str) -> Result<Key, KeyError> {
        if text.is_empty() {
            return Err(KeyError::Empty);
        }
        if text.starts_with('#') {
            return raw_label(text).ok_or_else(|| KeyError::BadHash { input: text.to_owned() });
        }
        Ok(Key::from_pointer(text).unwrap_or_else(|| Key::parse(text)))
    }
}

/// The key that `text` names as a raw key: `#` and exactly 8 hex digits of either case, as
/// [`Key`]'s [`FromStr`] reads it (and JSON import reads an entity's top-level member).
pub(crate) fn raw_label(text: &str) -> Option<Key> {
    let hex = text.strip_prefix('#')?;
    // `from_str_radix` alone would take a sign.
    (hex.len() == 8 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| u32::from_str_radix(hex, 16).ok())
        .flatten()
        .map(Key::from_raw)
}

/// A key as a write takes it: a [`Key`], or text that names it (a dotted path `&str`, a
/// [`KeyPath`]).
///
/// A [`Store`](crate::Store) records the name of a key given as text
/// ([`BlobMut::set`](crate::BlobMut::set)), so that it exports, shows and upgrades the key by
/// name; a key given as a `Key` value has no name to record.
///
/// # Examples
///
/// ```
/// use datacomp::{AsKey, Key, KeyPath};
///
/// assert_eq!("stats.health".as_key(), Key::parse("stats.health"));
/// assert_eq!("stats.health".as_path(), Some(KeyPath::dotted("stats.health")));
/// assert_eq!(Key::parse("stats.health").as_path(), None);
/// // Text not hashed yet: a store that knows the name reads its key without hashing.
/// assert_eq!("stats.health".as_dotted_text(), Some("stats.health"));
/// assert_eq!(KeyPath::dotted("stats.health").as_dotted_text(), None);
/// ```
pub trait AsKey {
    /// The key.
    fn as_key(&self) -> Key;

    /// The text that names the key, if it was given as text.
    fn as_path(&self) -> Option<KeyPath<'_>> {
        None
    }

    /// The dotted path that names the key, if it was given as such text and is not hashed
    /// yet: a store that found the text before reads its key without hashing it again.
    fn as_dotted_text(&self) -> Option<&str> {
        None
    }
}

impl AsKey for Key {
    fn as_key(&self) -> Key {
        *self
    }
}

impl AsKey for str {
    /// Parses a dotted path, as [`Key::parse`] does.
    fn as_key(&self) -> Key {
        Key::parse(self)
    }

    fn as_path(&self) -> Option<KeyPath<'_>> {
        Some(KeyPath::dotted(self))
    }

    fn as_dotted_text(&self) -> Option<&str> {
        Some(self)
    }
}

impl AsKey for String {
    /// Parses a dotted path, as [`Key::parse`] does.
    fn as_key(&self) -> Key {
        Key::parse(self)
    }

    fn as_path(&self) -> Option<KeyPath<'_>> {
        Some(KeyPath::dotted(self))
    }

    fn as_dotted_text(&self) -> Option<&str> {
        Some(self)
    }
}

impl AsKey for KeyPath<'_> {
    fn as_key(&self) -> Key {
        self.key
    }

    fn as_path(&self) -> Option<KeyPath<'_>> {
        Some(*self)
    }
}

impl<T: AsKey + ?Sized> AsKey for &T {
    fn as_key(&self) -> Key {
        (**self).as_key()
    }

    fn as_path(&self) -> Option<KeyPath<'_>> {
        (**self).as_path()
    }

    fn as_dotted_text(&self) -> Option<&str> {
        (**self).as_dotted_text()
    }
}

/// A path and its key: a dotted path (`stats.health`) or a JSON Pointer (`/a.b/c`, for member
/// names that hold a dot), hashed once.
///
/// # Examples
///
/// ```
/// use datacomp::{Key, KeyPath};
///
/// let dotted = KeyPath::dotted("stats.health");
/// assert_eq!(dotted.key(), Key::parse("stats.health"));
/// let pointer = KeyPath::pointer("/a.b/c").unwrap();
/// assert_eq!(pointer.key(), Key::path(&["a.b", "c"]));
/// assert_eq!(pointer.segments().collect::<Vec<_>>(), ["a.b", "c"]);
/// assert_eq!(KeyPath::pointer("a.b"), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyPath<'a> {
    // INVARIANT: `key` is the key of `text`, read as a JSON Pointer when `pointer` (and then
    // `text` starts with '/'), else as a dotted path.
    key: Key,
    text: &'a str,
    pointer: bool,
}

impl<'a> KeyPath<'a> {
    /// A dotted path: `"stats.health"` is the segments `stats` and `health`.
    ///
    /// `const`: a key declared once as a `const KeyPath` keeps its name, so a store it is
    /// written to exports, diffs and shows it by name (a `const` [`Key`] is only a hash), and
    /// reads with it cost what reads with a `const Key` do (the key is hashed at compile time).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ExportOptions, KeyPath, Store};
    ///
    /// const LUCK: KeyPath = KeyPath::dotted("stats.luck");
    ///
    /// let mut world = Store::new();
    /// let orc = world.insert_empty();
    /// world.get_mut(orc).unwrap().set(LUCK, 3.0)?;
    /// assert_eq!(world.get(orc).unwrap().get_float(LUCK), Some(3.0));
    /// assert_eq!(world.export(orc, &ExportOptions::json())?, r#"{"stats":{"luck":3}}"#);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub const fn dotted(path: &'a str) -> KeyPath<'a> {
        KeyPath { key: Key::parse(path), text: path, pointer: false }
    }

    /// A JSON Pointer (RFC 6901), as [`Key::from_pointer`] reads it; `None` for text that does
    /// not start with `/`. `const`, as [`dotted`](KeyPath::dotted) is: the form for a `const`
    /// whose segments hold a `.`.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Key, KeyPath};
    ///
    /// const RANGE: KeyPath = KeyPath::pointer("/weapon/range.max").unwrap();
    /// assert_eq!(RANGE.key(), Key::path(&["weapon", "range.max"]));
    /// ```
    #[must_use]
    pub const fn pointer(pointer: &'a str) -> Option<KeyPath<'a>> {
        match Key::from_pointer(pointer) {
            Some(key) => Some(KeyPath { key, text: pointer, pointer: true }),
            None => None,
        }
    }

    /// The path's key.
    #[must_use]
    pub const fn key(&self) -> Key {
        self.key
    }

    /// The text as given.
    #[must_use]
    pub const fn as_str(&self) -> &'a str {
        self.text
    }

    /// Whether the text is a JSON Pointer (else a dotted path).
    pub(crate) fn is_pointer(&self) -> bool {
        self.pointer
    }

    /// The path, unless it has more segments than a name may have ([`MAX_PATH_SEGMENTS`]).
    pub(crate) fn check_depth(&self) -> Result<(), KeyError> {
        let segments = if self.pointer {
            self.text.matches('/').count()
        } else {
            self.text.matches('.').count() + 1
        };
        if segments <= MAX_PATH_SEGMENTS {
            return Ok(());
        }
        let path = self.text.to_owned();
        Err(KeyError::PathTooDeep { path, segments, limit: MAX_PATH_SEGMENTS })
    }

    /// The path, unless its first segment is a raw key's label (`#` and 8 hex digits): JSON
    /// import reads an entity's top-level member so named as that raw key, so a name starting
    /// so would not read back as itself.
    pub(crate) fn check_not_raw(&self) -> Result<(), KeyError> {
        match self.segments().next().and_then(|first| raw_label(&first)) {
            Some(raw) => Err(KeyError::RawKeyName { path: self.text.to_owned(), raw }),
            None => Ok(()),
        }
    }

    /// The path's segments, unescaped: a JSON Pointer's `~1` is `/`, `~0` is `~`.
    pub fn segments(&self) -> impl Iterator<Item = Cow<'a, str>> + 'a {
        let (text, pointer) = (self.text, self.pointer);
        let (rest, separator) = if pointer { (&text[1..], '/') } else { (text, '.') };
        rest.split(separator).map(move |s| if pointer { unescape(s) } else { Cow::Borrowed(s) })
    }
}

/// Appends `/segment` to a JSON Pointer, escaping `~` as `~0` and `/` as `~1`.
pub(crate) fn push_pointer_segment(pointer: &mut String, segment: &str) {
    pointer.push('/');
    for c in segment.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// A JSON Pointer segment's text: `~1` is `/`, `~0` is `~` (the inverse of
/// [`push_pointer_segment`]).
pub(crate) fn unescape(segment: &str) -> Cow<'_, str> {
    if !segment.contains('~') {
        return segment.into();
    }
    // One pass (RFC 6901 decodes `~1` before `~0`, which comes to the same: neither escape
    // can overlap the other); a `~` followed by neither digit stays as it is.
    let mut out = String::with_capacity(segment.len());
    let mut rest = segment;
    while let Some(at) = rest.find('~') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        match after.as_bytes().first() {
            Some(b'1') => out.push('/'),
            Some(b'0') => out.push('~'),
            _ => {
                out.push('~');
                rest = after;
                continue;
            }
        }
        rest = &after[1..];
    }
    out.push_str(rest);
    out.into()
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

    /// `FxHasher32` fed each byte with `write_u8`: what key hash 2 promises a segment is.
    fn fx_bytes(bytes: &[u8]) -> u32 {
        let mut hasher = fxhash::FxHasher32::default();
        for &byte in bytes {
            hasher.write_u8(byte);
        }
        hasher.finish() as u32
    }

    const SEGMENTS: [&str; 12] = [
        "",
        "a",
        "ab",
        "abc",
        "abcd",
        "abcde",
        "name",
        "stats",
        "health",
        "status_effects",
        "item_1409",
        "é✓ü",
    ];

    #[test]
    fn segment_hash_is_fxhasher32_write_u8_per_byte() {
        for s in SEGMENTS.iter().filter(|s| !s.is_empty()) {
            assert_eq!(Key::new(s).raw(), fx_bytes(s.as_bytes()), "segment {s:?}");
        }
        // Key hash 3: the empty segment is the hash of the byte 0xFF, no UTF-8 text's.
        assert_eq!(Key::new("").raw(), fx_bytes(&[0xFF]));
        // 64 KiB of every byte value, so every round's input is covered.
        let long: Vec<u8> = (0..65_536_u32).map(|i| (i * 7 + i / 256) as u8).collect();
        let text = String::from_utf8_lossy(&long).into_owned();
        assert_eq!(Key::new(&text).raw(), fx_bytes(text.as_bytes()));
    }

    #[test]
    fn child_is_an_fx_round_over_the_segment_hash() {
        let mut hasher = fxhash::FxHasher32::default();
        for &byte in b"stats" {
            hasher.write_u8(byte);
        }
        hasher.write_u32(Key::new("health").raw());
        assert_eq!(Key::parse("stats.health").raw(), hasher.finish() as u32);
    }

    #[test]
    fn key_hash_1_is_fxhasher32_write_per_segment() {
        let fx_words = |bytes: &[u8]| {
            let mut hasher = fxhash::FxHasher32::default();
            hasher.write(bytes);
            hasher.finish() as u32
        };
        for s in SEGMENTS {
            assert_eq!(v1::path([s].into_iter()).raw(), fx_words(s.as_bytes()), "segment {s:?}");
        }
        let mut hasher = fxhash::FxHasher32::default();
        hasher.write(b"stats");
        hasher.write_u32(fx_words(b"health"));
        assert_eq!(v1::path("stats.health".split('.')).raw(), hasher.finish() as u32);
        // The golden values key hash 1 pinned, and the collision that retired it.
        assert_eq!(v1::path(["stats", "health"].into_iter()).raw(), 0x2dd3_91b7);
        assert_eq!(v1::path(["item_1409"].into_iter()), v1::path(["item_1482"].into_iter()));
        assert_ne!(Key::new("item_1409"), Key::new("item_1482"));
    }

    proptest::proptest! {
        /// The one-pass unescape against RFC 6901's two replacements, in order.
        #[test]
        fn unescape_is_rfc_6901s_two_replacements(segment in "[~01/a]{0,12}") {
            let model = segment.replace("~1", "/").replace("~0", "~");
            proptest::prop_assert_eq!(unescape(&segment), model);
        }
    }

    proptest::proptest! {
        /// The one-pass `const` pointer hash against the segments unescaped and combined.
        #[test]
        fn from_pointer_is_the_unescaped_segments_combined(pointer in "/[~01/a.]{0,16}") {
            let mut segments = pointer[1..].split('/').map(unescape);
            let first = Key::new(&segments.next().unwrap());
            let model = segments.fold(first, |key, segment| key.child(&segment));
            proptest::prop_assert_eq!(Key::from_pointer(&pointer), Some(model));
        }
    }

    #[test]
    fn a_const_key_path_keeps_its_text_and_key() {
        const LUCK: KeyPath<'static> = KeyPath::dotted("stats.luck");
        const ODD: KeyPath<'static> = KeyPath::pointer("/a~1b/c.d~0~").unwrap();
        const NOT: Option<KeyPath<'static>> = KeyPath::pointer("stats");
        assert_eq!((LUCK.as_str(), LUCK.key()), ("stats.luck", Key::parse("stats.luck")));
        assert_eq!(ODD.key(), Key::path(&["a/b", "c.d~~"]));
        assert_eq!(ODD.segments().collect::<Vec<_>>(), ["a/b", "c.d~~"]);
        assert_eq!(NOT, None);
        assert_eq!(Key::from(LUCK), LUCK.key());
        assert_eq!(Key::from(&ODD), ODD.key());
    }

    #[test]
    fn unescape_decodes_each_escape_once() {
        assert_eq!(unescape("a~1b~0c"), "a/b~c");
        assert_eq!(unescape("~01"), "~1");
        assert_eq!(unescape("~~1~2~"), "~/~2~");
        assert!(matches!(unescape("plain"), Cow::Borrowed("plain")));
    }

    #[test]
    fn a_key_path_hashes_once_and_keeps_its_segments() {
        let path = KeyPath::pointer("/a~1b/c~0d/e.f").unwrap();
        assert_eq!(path.key(), Key::path(&["a/b", "c~d", "e.f"]));
        assert_eq!(path.segments().collect::<Vec<_>>(), ["a/b", "c~d", "e.f"]);
        assert_eq!(path.as_str(), "/a~1b/c~0d/e.f");
        let dotted = KeyPath::dotted("a/b.c~d");
        assert_eq!(dotted.segments().collect::<Vec<_>>(), ["a/b", "c~d"]);
        assert_eq!(dotted.key(), Key::path(&["a/b", "c~d"]));
        assert_eq!(KeyPath::dotted("").segments().collect::<Vec<_>>(), [""]);
        assert_eq!(KeyPath::pointer("/").unwrap().key(), Key::new(""));
    }
}
