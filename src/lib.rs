//! Per-entity game data in one pointerless buffer each, every entity in one arena, saved and
//! loaded as raw bytes.
//!
//! A game keeps small, dynamic data per entity: a character sheet with a name, stats, status
//! effects, a few float arrays. datacomp stores each entity's data in one [`Blob`] (one buffer,
//! no pointers inside) and every blob of a world in one [`Store`] arena behind generational
//! [`Id`] handles, so a world is copied with a memcpy and saved and loaded as its buffers,
//! validated on load, with no per-field serialization and no allocation per entity.
//!
//! This page is the guide: one section per concept, each linking the module that holds it. The
//! README has the quick start and the command; `ARCHITECTURE.md` the map for contributors.
//!
//! # Keys
//!
//! A [`Key`] is a 32-bit hash of a dotted path (`stats.health`), stable across platforms and
//! releases (a save names its key hash; an older one is rehashed on load). Anything that names
//! a key takes [`AsKey`]: a `&str` path, a [`KeyPath`], or a bare `Key`. A key given as text
//! carries its name into a store, which remembers it so that exports, diffs and the command
//! show names. Declare a key used in code once, as a `const` [`KeyPath`]: it is hashed at
//! compile time (reads with it cost what reads with a `const Key` do) and keeps its name; a
//! `const Key` is only the hash, and a store that never saw its name exports it as
//! `"#1a2b3c4d"`. Module: [`key`].
//!
//! ```
//! use datacomp::{Key, KeyPath};
//!
//! const HEALTH: KeyPath = KeyPath::dotted("stats.health");
//! const RANGE: KeyPath = KeyPath::pointer("/bow/range.max").unwrap(); // a `.` in a name
//! assert_eq!(HEALTH.key(), Key::path(&["stats", "health"]));
//! assert_eq!(RANGE.key(), Key::path(&["bow", "range.max"]));
//! assert_eq!("stats.health".parse::<Key>()?, HEALTH.key());
//! # Ok::<(), datacomp::KeyError>(())
//! ```
//!
//! # Blobs
//!
//! A [`Blob`] is one entity: a header of keys, type tags and 32-bit values growing up from the
//! start of one buffer, strings and float arrays growing down from its end. A [`Value`] is a
//! bool, an f32, a string, an f32 array, a null (a key present with no value, as real
//! fixtures write `"firmness": null`) or a tombstone (an instance's "absent here", see
//! Prototypes). Any integer type is stored as an f32, and refused when an f32 cannot hold it
//! exactly. [`BlobRef`] is the read API over a borrowed blob (from
//! a store or a view), [`BlobMut`] the write API over a stored one. Every write returns a
//! `Result`: data can refuse a write (an integer past 2^24, a name that collides), and a game
//! decides what to do, rather than panic. Bytes read back with [`Blob::from_bytes`] are
//! checked whole. Changes between blobs are a [`blob::Patch`], with two- and three-way merges
//! ([`Blob::merge3`]). Module: [`blob`].
//!
//! ```
//! use datacomp::{Blob, BlobError, Value};
//!
//! let mut sheet = Blob::new();
//! sheet.set("name", "The One")?;
//! sheet.set("stats.health", 100)?;
//! sheet.set("position", [1.0, 2.0, 0.5])?;
//! assert_eq!(sheet.get("position"), Some(Value::Floats(&[1.0, 2.0, 0.5])));
//! let gold: u32 = 16_777_217; // 2^24 + 1: no f32 holds it
//! assert!(matches!(sheet.set("gold", gold), Err(BlobError::InexactInteger { .. })));
//! assert_eq!(Blob::from_bytes(sheet.as_bytes())?, sheet);
//! # Ok::<(), datacomp::BlobError>(())
//! ```
//!
//! # The store
//!
//! A [`Store`] holds every entity's blob in one arena, reached through [`Id`] handles (index,
//! generation, type): [`insert`](Store::insert), [`get`](Store::get),
//! [`get_mut`](Store::get_mut), [`remove`](Store::remove), [`iter`](Store::iter), and
//! [`find`](Store::find) for the entities that hold a value ("the Orc", by name). A blob that
//! outgrows its place moves to the arena's end, and garbage is compacted in one pass. The
//! handles come from a [`HandleMap`], usable on its own for any `T`. A write
//! ([`BlobMut::set`], [`Store::insert_entries`]) that the store's names or the entity's keys
//! refuse (`stats` where the entity holds `stats.health`) returns the error and changes nothing.
//! `Debug` of an entity shows its keys by name. Modules: [`store`], [`handle_map`].
//!
//! ```
//! use datacomp::{KeyPath, Store};
//!
//! const HEALTH: KeyPath = KeyPath::dotted("stats.health");
//!
//! let mut world = Store::new();
//! let orc = world.insert_entries([("name", "Orc")])?;
//! world.get_mut(orc).unwrap().set(HEALTH, 25.0)?;
//! assert_eq!(world.get(orc).unwrap().get_float(HEALTH), Some(25.0));
//! assert!(world.get_mut(orc).unwrap().set("stats", 1.0).is_err()); // refused, not a panic
//! assert_eq!(format!("{:?}", world.get(orc).unwrap()), r#"{name: Str("Orc"), stats.health: Float(25.0)}"#);
//! assert_eq!(world.find("name", "Orc").collect::<Vec<_>>(), [orc]);
//! assert!(world.remove(orc));
//! assert!(world.get(orc).is_none()); // a stale handle never resolves
//! # Ok::<(), datacomp::Error>(())
//! ```
//!
//! # Prototypes
//!
//! An entity may have a prototype, another entity of its store
//! ([`insert_instance`](Store::insert_instance), [`set_prototype`](Store::set_prototype)): a
//! hundred goblins that differ in a few stats store only those, and read the rest through
//! their prototype. [`Store::resolved`] reads a key from the entity's own blob, then up its
//! chain (at most [`store::MAX_CHAIN`] prototypes), lending the value from whichever blob
//! holds it: no copy. [`clear_override`](Store::clear_override) returns to the inherited
//! value; [`remove_inherited`](Store::remove_inherited) stores a tombstone
//! ([`Value::Tombstone`]) that hides it; [`flatten`](Store::flatten) and
//! [`detach`](Store::detach) copy what an entity reads. A prototype with live instances is
//! not removed ([`Store::try_remove`] says why). Queries, columns, [`find`](Store::find) and
//! [`query::KeyCursor::get_resolved`] read resolved values; [`Store::get`], diffs, merges,
//! deltas, history, migrations and exports work on what each entity stores (a delta and a
//! save carry the links, a merge ([`store::merge3`]) takes them three-way; a migration's
//! default is an override on an instance). Fixtures name
//! prototypes with `$id` and `$prototype` ([text formats](text#prototypes)); `$id` and
//! `$abstract` ([`store::ID_KEY`], [`store::ABSTRACT_KEY`]) are the entity's own, never
//! inherited. A path is a value or an object, never both: across a chain the nearer entity
//! shadows the farther (an own `stats` hides an inherited `stats.health`, and the reverse).
//! Module: [`store`].
//!
//! ```
//! use datacomp::{Query, Store};
//!
//! let mut world = Store::new();
//! let orc = world.insert_entries([("name", "Orc"), ("title", "Brute")])?;
//! world.get_mut(orc).unwrap().set("stats.health", 12)?;
//! let grunt = world.insert_instance(orc)?;
//! world.get_mut(grunt).unwrap().set("name", "Grunt")?;
//! world.remove_inherited(grunt, "title")?;
//! let sheet = world.resolved(grunt).unwrap();
//! assert_eq!((sheet.get_str("name"), sheet.get_float("stats.health")), (Some("Grunt"), Some(12.0)));
//! assert_eq!(sheet.get_str("title"), None);
//! assert_eq!(world.get(grunt).unwrap().len(), 2, "it stores its name and a tombstone");
//! let weak = Query::parse("stats.health < 20")?;
//! assert_eq!(world.query(&weak).map(|(id, _)| id).collect::<Vec<_>>(), [orc, grunt]);
//! assert!(!world.remove(orc), "it has an instance");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Saves and views
//!
//! [`Store::save`] writes a header, a section table and the store's raw buffers, with a crc32
//! per section and per 64 KiB of arena, atomically (temp file, fsync, rename). [`Store::load`]
//! and [`Store::from_bytes`] check every byte, on every core. A [`StoreView`] validates a save
//! in place and reads it with no copy (over a memory map, say); a [`format::LazyStoreView`]
//! checks each blob on its first read; [`Store::salvage`] keeps what checks out of a damaged
//! file, and reports the rest as runs of handles ([`format::Lost`]). [`SaveFile`] holds a save under an OS lock for a load-change-save (its lock file
//! goes with the lock). Saves of every earlier format version load. Module:
//! [`format`](mod@format).
//!
//! ```
//! use datacomp::{Store, StoreView};
//!
//! let mut world = Store::new();
//! let hero = world.insert_entries([("stats.health", 100.0)])?;
//! let bytes = world.to_bytes();
//! let view = StoreView::new(&bytes)?; // checked once, then read in place
//! assert_eq!(view.get(hero).unwrap().get_float("stats.health"), Some(100.0));
//! assert_eq!(Store::from_bytes(&bytes)?, world);
//! # Ok::<(), datacomp::Error>(())
//! ```
//!
//! # Text formats
//!
//! Fixtures are JSON or SJSON (the brace-less form Bitsquid designers write). One import and one
//! export per target, options in a struct: [`Store::import`] and [`Blob::import`] with
//! [`ImportOptions`] (`strict()` for the restricted format, `lenient()` for real designers' JSON,
//! nulls and arrays of objects kept, with a report of every lossy change and its first path;
//! `.format(TextFormat::Sjson)`; `.exact_numbers(true)` refuses a number that `f32` would write
//! back as another decimal, which is otherwise reported), and [`Store::export`],
//! [`Store::export_all`], [`Store::export_at`] with [`ExportOptions`] (`json()`, `sjson()`,
//! `.pretty(true)`). An import happens whole or not at all; errors name the path and
//! line:column. Module: [`text`].
//!
//! ```
//! use datacomp::{ExportOptions, ImportOptions, Store, TextFormat};
//!
//! let mut world = Store::new();
//! let imported = world.import(
//!     "name = \"Orc\"\nstats = { health = 30 }",
//!     &ImportOptions::strict().format(TextFormat::Sjson),
//! )?;
//! let orc = imported.ids[0];
//! assert_eq!(world.export(orc, &ExportOptions::json())?, r#"{"name":"Orc","stats":{"health":30}}"#);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Deltas and merges
//!
//! A [`StorePatch`] is what changed between two stores (entities inserted, removed and changed,
//! each changed one as a blob patch, with the target's handles exactly): made by
//! [`StorePatch::diff`], applied to the very base it was made from, saved as a delta file a
//! fraction of a full save's size. Every store has a [lineage](Store::lineage), drawn by
//! [`Store::new`] and kept by clones, saves, deltas and merges: two saves of one lineage share
//! history, and `datacomp merge` refuses two that do not. Module: [`store`] (the delta file's
//! bytes: [`format`](mod@format)).
//!
//! ```
//! use datacomp::{Store, StorePatch};
//!
//! let mut base = Store::new();
//! let hero = base.insert_entries([("stats.health", 100.0)])?;
//! let mut now = base.clone();
//! now.get_mut(hero).unwrap().set("stats.health", 95.0)?;
//!
//! let delta = StorePatch::diff(&base, &now);
//! let mut loaded = Store::from_bytes(&base.to_bytes())?;
//! StorePatch::from_bytes(&delta.to_bytes())?.apply(&mut loaded)?;
//! assert_eq!(loaded, now);
//! # Ok::<(), datacomp::Error>(())
//! ```
//!
//! # History
//!
//! A [`Snapshot`] copies a whole store as buffers; a [`Mark`] remembers a moment so that what
//! changed since ([`history::Changes`], or a delta for an autosave chain) costs O(changed): every write
//! stamps its entity's slot. [`History`] is undo and redo over such steps. Module: [`history`].
//!
//! ```
//! use datacomp::{History, Store};
//!
//! let mut world = Store::new();
//! let hero = world.insert_entries([("stats.health", 100.0)])?;
//! let mut history = History::with_max_bytes(1 << 20); // keeps at most 1 MiB of steps
//! history.commit(&world);
//! world.get_mut(hero).unwrap().set("stats.health", 40.0)?;
//! history.commit(&world);
//! assert!(history.undo(&mut world));
//! assert_eq!(world.get(hero).unwrap().get_float("stats.health"), Some(100.0));
//! # Ok::<(), datacomp::Error>(())
//! ```
//!
//! # Queries
//!
//! One key read from many entities: [`query::KeyCursor`] remembers where it last found its key
//! (one compare when entities share a layout), columns read one key of every entity, and a
//! [`Query`] filters entities (`status_effects.poisoned and stats.health < 20`, `firmness ==
//! null`) over a `Store`
//! or a `StoreView`; a `Query` is `Send + Sync`, so a parsed one can live in an engine's
//! shared state. Module: [`query`].
//!
//! ```
//! use datacomp::{Query, Store};
//!
//! let mut world = Store::new();
//! world.insert_entries([("stats.health", 100.0)])?;
//! let orc = world.insert_entries([("stats.health", 12.0)])?;
//! world.get_mut(orc).unwrap().set("status_effects.poisoned", true)?;
//!
//! let total: f32 = world.column::<f32>("stats.health").map(|(_, health)| health).sum();
//! assert_eq!(total, 112.0);
//! let weak = Query::parse("status_effects.poisoned and stats.health < 20")?;
//! assert_eq!(world.query(&weak).map(|(id, _)| id).collect::<Vec<_>>(), [orc]);
//! # Ok::<(), datacomp::Error>(())
//! ```
//!
//! # Migrations
//!
//! A store carries the version of the game's data it follows
//! ([`data_version`](Store::data_version)). [`Migrations`] are steps to a later version (rename a
//! key or subtree, remove, default, set), read from JSON or built in code, run all or nothing
//! with a report per step; a raw key (`#0000002a`) is removed or renamed alone. Module:
//! [`migrate`].
//!
//! ```
//! use datacomp::{MigrationStep, Migrations, Store};
//!
//! let mut world = Store::new();
//! let orc = world.insert_entries([("hp", 30.0)])?;
//! let migrations = Migrations::new(2)
//!     .step(MigrationStep::to(1).rename("hp", "stats.health"))
//!     .step(MigrationStep::to(2).default("stats.mana", 0.0));
//! migrations.apply(&mut world)?;
//! assert_eq!(world.data_version(), 2);
//! assert_eq!(world.get(orc).unwrap().get_float("stats.health"), Some(30.0));
//! # Ok::<(), datacomp::Error>(())
//! ```
//!
//! # Errors
//!
//! Each layer has a small error type beside the code that raises it, and every one converts into
//! [`Error`]: see [`error`] for the whole design.
//!
//! # Guarantees and limits
//!
//! - Every reader of outside bytes or text ([`Blob::from_bytes`], every save and delta reader,
//!   JSON and SJSON import, [`Query::parse`], [`Migrations::from_json`]) answers bad input with
//!   an error that names the place, changes nothing, never panics, and is fuzzed. Work is at
//!   most O(n log n) in the input; nothing recurses on its depth.
//! - Every write whose outcome depends on the data (the store's names, the keys an entity
//!   holds, an integer's size, a blob's 4 GiB) returns a `Result` and changes nothing when it
//!   refuses: a mod's data cannot panic a game. Panics are left to resources (an arena past
//!   16 GiB), to arguments the caller chose (`Blob::with_capacity`), and to forms named for it
//!   (`Extend`, `Patch::apply` beside `try_apply`, `Blob::merge` beside `try_merge`).
//! - `#![forbid(unsafe_code)]`: zerocopy does the byte casts.
//! - A blob holds at most 4 GiB ([`blob::MAX_BYTES`]); a key name at most 125 segments
//!   ([`key::MAX_PATH_SEGMENTS`]), also in a migration. Keys are 32-bit hashes: two names can
//!   share one; wherever a name is known the collision is refused, naming both. An empty
//!   segment (`""`, `.a`) is a segment like any other (key hash 3).
//! - A file is read no further than its header says it holds ([`format::read_file`]; from an
//!   input of unknown size, at most [`format::MAX_STREAM_BYTES`]). Migrations and diffs walk
//!   the key-name tree by node: their memory follows the file, not the names' total length.
//! - Little-endian targets only: a blob is written to disk as it is in memory.
//! - Saves and deltas are written atomically; a crash leaves the old file or the new one, whole.

#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(clippy::pedantic)]
#![allow(clippy::cast_possible_truncation, clippy::module_name_repetitions)]

// A blob is written to disk as its in-memory words, and float payloads are lent as `&[f32]`
// straight from those words: both need the words to be little-endian.
#[cfg(not(target_endian = "little"))]
compile_error!(
    "datacomp stores blobs as little-endian words and supports little-endian targets only"
);

pub mod blob;
pub mod error;
pub mod file;
pub mod format;
pub mod handle_map;
pub mod history;
pub mod key;
pub mod migrate;
mod names;
pub mod query;
pub mod store;
pub mod text;
mod value;

// The names ordinary code writes; everything else is reached through its module
// (`datacomp::blob::Patch`, `datacomp::format::Salvage`), as slotmap and bytes do.
pub use blob::{Blob, BlobError, BlobRef};
pub use error::Error;
pub use file::SaveFile;
pub use format::{LoadError, LoadOptions, StoreView};
pub use handle_map::{HandleError, HandleMap, Id};
pub use history::{History, Mark, Snapshot};
pub use key::{AsKey, Key, KeyError, KeyPath};
pub use migrate::{MigrationStep, Migrations};
pub use query::Query;
pub use store::{BlobMut, Store, StorePatch};
#[cfg(feature = "json")]
pub use text::{ExportError, ExportOptions, ImportOptions, Imported, JsonError, TextFormat};
pub use value::{AsValue, OwnedValue, Value, ValueType};

// The README's examples run as doctests, as the crate docs' do.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
