//! The save format's home: the save file, the views that read it in place, salvage, the
//! key-hash upgrade and the delta file, and why each did not load.
//!
//! A save file is a header, a section table and a [`Store`](crate::Store)'s raw buffers,
//! little-endian.
//!
//! ```text
//!  offset 0   ┌──────────────────────────────────────────────────────────┐
//!             │ FileHeader (32 B): magic "DATACOMP", format 1.3, key hash 2,│
//!             │ section count, file length, crc32 of header + table,      │
//!             │ data version                                              │
//!  32         ├──────────────────────────────────────────────────────────┤
//!             │ SectionEntry × n (24 B each): kind, crc32, offset, length │
//!             ├──────── zero padding to 8 ───────────────────────────────┤
//!             │ index header │ index ends │ index meta │ index slots    │  each 8-aligned,
//!             │ arena (every blob, as stored)      │ key tree             │  zero-padded
//!             └──────────────────────────────────────────────────────────┘
//! ```
//!
//! Saving is a few large writes with no per-entity encoding; loading checks the header, the
//! table, every section's crc32 and that all padding is zero (so a change to any byte of the
//! file is caught), then the handle map's invariants, that every blob lies inside the arena and
//! no two overlap (format 1.3: that the end offsets never decrease), and every blob, as
//! `Blob::from_bytes` would.
//!
//! The header names the key hash its keys were made with. A save of key hash 1
//! ([`KEY_HASH_FX32_WORDS`]) loads into a [`Store`](crate::Store) by rehashing every key from
//! its name, or from a path the caller knows
//! ([`LoadOptions::known_keys`](crate::LoadOptions::known_keys)); a key neither explains is an
//! error, and nothing loads half-upgraded. A [`StoreView`] reads in place and cannot rehash, so
//! it reads key hash 2 only.
//!
//! A delta save ([`StorePatch`](crate::StorePatch)) is the same header and table over sections
//! of its own (`delta base`, `delta index header`, `delta slot changes`, `delta meta changes`,
//! `delta entities`, and `key tree` when they changed), with the same checks; reading either
//! kind of file as the other is a [`FileError::FileKind`].
//!
//! The key names are a tree of segments (section kind 13, `key tree`, from format 1.2): a
//! prefix that many keys share is saved once. A file of format 1.0 holds them as a flat list
//! of JSON Pointers instead (kind 6, `key names`), which still loads.
//!
//! The index (format 1.3) holds each blob's end in the arena (`index ends`), which is written
//! in dense order, blob after blob, with no hole and no bytes for an empty blob; a store that
//! never removed an entity leaves its handle map's `index meta` and `index slots` empty (an
//! identity map, rebuilt on load). A 1.2 save's index holds spans (`index items`: offset and
//! length), which still loads; this build writes 1.3.
//!
//! # Files
//!
//! - `version.rs`: the magic, the format's versions, the key hashes, the arena's chunk size.
//! - `container.rs`: the header and section table both kinds of file share, and the crcs of
//!   the arena's chunks.
//! - `check.rs`: the checks of a save's index and arena, on all cores; `names.rs`: the key
//!   names' sections; `upgrade.rs`: [`LoadOptions`] and rehashing a key hash 1 save.
//! - `save.rs`: `Store`'s save and load; `view.rs` ([`StoreView`]), `lazy.rs`
//!   ([`LazyStoreView`]), `salvage.rs` ([`Salvage`]) and `saved_names.rs` ([`SavedKeyNames`]):
//!   the other readers.
//! - `delta.rs`: the delta file of a [`StorePatch`](crate::StorePatch).
//! - `describe.rs`: [`describe`], what `datacomp inspect` prints.
//! - `error.rs`: [`LoadError`] and its layers.

mod check;
mod container;
pub(crate) mod delta;
mod describe;
mod error;
mod lazy;
mod names;
mod read;
mod salvage;
pub(crate) mod save;
mod saved_names;
mod upgrade;
mod version;
mod view;

pub use container::{FileInfo, FileKind, SectionInfo};
pub use describe::describe;
pub use error::{FileError, LoadError, StoreError};
pub use lazy::LazyStoreView;
pub use read::{MAX_STREAM_BYTES, read_file};
pub use salvage::{Lost, LostRun, Salvage};
pub use saved_names::SavedKeyNames;
pub use upgrade::LoadOptions;
pub use version::{
    ARENA_CHUNK_BYTES, FORMAT_MAJOR, FORMAT_MINOR, KEY_HASH_FX32_BYTES, KEY_HASH_FX32_EMPTY,
    KEY_HASH_FX32_WORDS, MAGIC,
};
pub use view::StoreView;
