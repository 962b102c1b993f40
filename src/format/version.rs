//! The save format's versions: its magic, major and minor version, key hashes and chunk size.

/// The first 8 bytes of every save file.
pub const MAGIC: [u8; 8] = *b"DATACOMP";

/// The format's major version: a reader refuses a newer one.
pub const FORMAT_MAJOR: u16 = 1;

/// The format's minor version: additions an older reader may ignore, and changes a newer
/// reader reads both sides of.
///
/// - 0: the first format.
/// - 1: the header's last word, zero before, holds the data version
///   ([`Store::data_version`](crate::Store::data_version)); a delta's `delta base` section adds
///   the base's data version.
///   A save adds a crc32 of each 64 KiB chunk of its arena ([`ARENA_CHUNK_BYTES`]), in a
///   section of its own (`arena crcs`, kind 12), so that the arena is checked on all cores, a
///   lazy view checks only the chunks it reads, and damage is confined to its chunk. The arena
///   keeps its whole crc in the table, so a 1.0 reader still reads a 1.1 save, and the chunk
///   crcs are optional: a save without them is checked whole.
/// - 2: the key names are a tree of segments (section `key tree`, kind 13) in place of the
///   flat list of JSON Pointers (`key names`, kind 6), which still loads.
/// - 3: the index holds each blob's end offset (section `index ends`, kind 14: one `u32` per
///   entity) in place of its span (`index items`, kind 2: offset and length), the arena
///   written in dense order with no hole; an empty entity's blob has no bytes (its end is
///   the one before's); and a handle map in its identity state (a store that never removed
///   an entity) leaves its `index meta` and `index slots` sections empty, flagged in the index
///   header ([`RawHeader::IDENTITY`](crate::handle_map::RawHeader::IDENTITY)). A save of `[{},{},...]`
///   takes 4 bytes an entity, down from 28. Saves of 1.2 and before still load.
/// - 4: three additions, one bump; saves and deltas of 1.3 and before load unchanged.
///   - A blob's entry may be a null ([`ValueType::Null`](crate::ValueType::Null), type tag 5,
///     header value 0, no payload), in saves and deltas alike: a 1.3 reader refuses a blob
///     holding one (unknown tag 5).
///   - A save holds its store's lineage ([`Store::lineage`](crate::Store::lineage)) in a
///     section of its own (`lineage`, kind 15: 16 bytes, or none for a store without one), so
///     that saves that share no history are told apart (`datacomp merge` refuses them). A 1.3
///     reader skips it; an older save loads as a store without a lineage.
///   - Key hash 3 ([`KEY_HASH_FX32_EMPTY`]): an empty path segment hashes as the byte `0xFF`,
///     not as nothing, so `""`, `"."`, `".."` and `.a`, `..a` are distinct keys. A save of key
///     hash 2 loads into a store by rehashing the keys whose names hold an empty segment (the
///     only ones that differ); a view reads one in place unless it names such a key.
/// - 5: prototypes ([`Store::prototype`](crate::Store::prototype)); saves and deltas of 1.4
///   and before load unchanged (as stores without links).
///   - A blob's entry may be a tombstone ([`ValueType::Tombstone`](crate::ValueType::Tombstone),
///     type tag 6, header value 0, no payload: "absent here", what an instance stores to
///     remove an inherited key), in saves and deltas alike: a 1.4 reader refuses a blob
///     holding one (unknown tag 6).
///   - The prototype links, in a section of their own (`prototypes`, kind 16; empty when no
///     entity has a prototype): in a save one `u32` per entity in dense order (0 for none,
///     else 1 + the prototype's dense position); in a delta the links that differ from the
///     base's, as (instance, prototype) handle pairs (`u64` each, the null handle for
///     "none") in ascending order of the instance, one per entity live in the target whose
///     link changed, and the base's crc covers its links. Every reader checks them: a link to
///     no live entity, a cycle, a chain of more than [`MAX_CHAIN`](crate::store::MAX_CHAIN)
///     prototypes is a load error. A 1.4 reader skips the section, and so reads an instance
///     as an entity of its overrides only.
pub const FORMAT_MINOR: u16 = 5;

/// The bytes of the arena each crc of a save's `arena crcs` section covers (the last chunk may
/// be shorter).
pub const ARENA_CHUNK_BYTES: usize = 64 << 10;

/// Key hash 1: fxhash's 32-bit round fed each segment four bytes (a word) at a time, segments
/// combined in order. Retired: numbered names such as `item_1409` and `item_1482` collided. A
/// save of it loads by rehashing its keys (see [`LoadOptions`](super::LoadOptions)).
pub const KEY_HASH_FX32_WORDS: u16 = 1;

/// Key hash 2: fxhash's 32-bit round fed each segment's bytes one at a time, segments
/// combined in order; an empty segment hashed as 0, so that `""`, `"."` and `".."` were one
/// key. A save of it loads by rehashing the keys whose names hold an empty segment.
pub const KEY_HASH_FX32_BYTES: u16 = 2;

/// Key hash 3, the one [`Key`](crate::Key) computes and every save of this build names: key
/// hash 2 with an empty segment hashed as the byte `0xFF` (which no UTF-8 text holds).
pub const KEY_HASH_FX32_EMPTY: u16 = 3;
