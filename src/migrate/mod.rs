//! Data versions and migrations: a store's [`data_version`](crate::Store::data_version), and
//! [`Migrations`] that take a store's entities from one version of the game's data to a later
//! one, all or nothing.
//!
//! - `mod.rs`: the data version, [`Migrations`] and [`MigrationStep`] (the builder), the checks
//!   that need no store, [`MigrationReport`] and [`MigrateError`].
//! - `json.rs`: [`Migrations::from_json`], strict.
//! - `plan.rs`: each step compiled against the store's key names into a table of keys.
//! - `fold.rs`: runs of consecutive steps that commute (apart in keys and paths) folded into
//!   one plan, so that an entity is rewritten once per run, not once per step.
//! - `chain.rs`: runs that only rename and remove (a chain `a -> b`, `b -> c`) composed, so
//!   that an entity holding one of their keys jumps them at once.
//! - `prefix.rs`: runs of steps that rename (two or more), with one-default steps between
//!   them, composed on a model of the key tree, a rename one node re-pointed (never its
//!   subtree), each entity's keys mapped to their final names once; where an entity could
//!   fail in the run, or a rename lands on keys an entity holds, the run's steps are compiled
//!   and run as any others.
//! - `repeat.rs`: runs of rename-only steps that repeat (a subtree renamed back and forth)
//!   and that `prefix.rs` did not take (one lands on held keys: `x -> y` with `y.b` held)
//!   compiled and run three periods deep, the steps after them copies.
//! - `work.rs`: the work counters that tests hold a migration's cost to.
//! - `run.rs`: [`Migrations::apply`]: the output estimated (refused past
//!   [`max_output`](Migrations::max_output)), the plans compiled and folded, then every entity
//!   rewritten into a new arena, swapped in at the end.
//!
//! A migration works on what each entity stores, prototypes and instances alike: a rename
//! renames an instance's overrides and tombstones too, and a default is set on every entity
//! whose own blob lacks the key, an instance included (an override: to keep an instance
//! inheriting, give the default to its prototype only).

mod chain;
mod fold;
#[cfg(feature = "json")]
mod json;
mod plan;
mod prefix;
mod repeat;
mod run;
mod work;

use std::borrow::Cow;
use std::fmt;

use crate::handle_map::Id;
use crate::key::{Key, KeyError, KeyPath, MAX_PATH_SEGMENTS};
use crate::text::shown::Shortened;
use crate::value::{AsValue, OwnedValue, exact_value};

/// The steps that take a store's entities from older versions of the game's data to
/// `version`: read from JSON ([`from_json`](Migrations::from_json)) or built in code, and run
/// by [`Migrations::apply`].
///
/// Each [`MigrationStep`] leads to a data version (`to`); steps are in ascending order of it.
/// A store runs the steps whose `to` is above its data version, in order, and ends at
/// `version`; so a store of any older version is brought up to date, and one already there is
/// left as it is.
///
/// Paths are dotted (`stats.health`) or JSON Pointers (`/a.b/c`, for a member name that holds
/// a dot), as the command takes a KEY. A path names a key, and also every key under it (a
/// subtree: `inventory` names `inventory.sword`) for `rename` and `remove`. Keys under a path
/// are found by their names in the store ([`Store::key_name`](crate::Store::key_name)): a key the
/// store has no name for (set through a [`Key`] value, never imported or written by
/// path) is renamed or removed only when a path names it exactly.
///
/// # Examples
///
/// ```
/// use datacomp::{MigrationStep, Migrations, Store};
///
/// let json = r#"{"version": 3,
///     "steps": [
///       {"to": 2, "rename": {"hp": "stats.health", "inventory": "items"}},
///       {"to": 3, "remove": ["legacy"], "default": {"stats.luck": 1, "flags.tutorial_done": true},
///        "set": {"schema": "v3"}}
///     ]}"#;
/// let migrations = Migrations::from_json(json)?;
///
/// // The same in code.
/// let built = Migrations::new(3)
///     .step(MigrationStep::to(2).rename("hp", "stats.health").rename("inventory", "items"))
///     .step(
///         MigrationStep::to(3)
///             .remove("legacy")
///             .default("stats.luck", 1)
///             .default("flags.tutorial_done", true)
///             .set("schema", "v3"),
///     );
/// assert_eq!(migrations, built);
///
/// let mut world = Store::new();
/// let id = world.insert_entries([("hp", 30.0), ("inventory.club", 1.0), ("legacy", 1.0)]).unwrap();
/// let report = migrations.apply(&mut world)?;
/// assert_eq!((report.from, report.to), (0, 3));
/// let orc = world.get(id).unwrap();
/// assert_eq!(orc.get_float("stats.health"), Some(30.0));
/// assert_eq!(orc.get_float("items.club"), Some(1.0));
/// assert!(!orc.contains_key("legacy"));
/// assert_eq!(orc.get_str("schema"), Some("v3"));
/// assert_eq!(world.data_version(), 3);
///
/// // Migrating again changes nothing.
/// let again = migrations.apply(&mut world)?;
/// assert!(again.steps.is_empty());
/// # Ok::<(), datacomp::migrate::MigrateError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Migrations {
    version: u32,
    steps: Vec<MigrationStep>,
    /// The most bytes the migrated entities may be estimated to take.
    max_output: u64,
}

/// One step of [`Migrations`]: what changes to reach data version `to`, applied to every
/// entity in this order: renames, then removals, then defaults, then sets.
///
/// - `rename(from, to)` moves the key `from`, and every key under it, to `to` (keeping values,
///   types and positions). The renames of one step move at once, so `{"a": "b", "b": "a"}`
///   swaps; no two of them may start at, or lead to, one path or a path under another's.
/// - `remove(path)` drops the key and every key under it.
/// - `default(path, value)` sets the key where an entity lacks it.
/// - `set(path, value)` sets the key in every entity.
///
/// A write (a renamed key's new place, a default, a set of a key the entity lacks) must not
/// turn a value into an object or the reverse: the entity must hold no key under its path (its
/// path would be an object's) and no key at a path above it (its path would run through a
/// value); that is an error naming the entity. No two defaults or sets of a step may name one
/// path or a path under another's.
///
/// # Examples
///
/// ```
/// use datacomp::MigrationStep;
///
/// let step = MigrationStep::to(2).rename("hp", "stats.health").default("stats.luck", 1);
/// assert_eq!(step.version(), 2);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct MigrationStep {
    to: u32,
    /// (from, to), as given.
    renames: Vec<(String, String)>,
    removes: Vec<String>,
    defaults: Vec<(String, OwnedValue)>,
    sets: Vec<(String, OwnedValue)>,
    /// The first default or set given an integer `f32` cannot hold exactly: (path, integer),
    /// refused when the migrations are checked, as a write refuses one.
    inexact: Option<(String, String)>,
}

impl Migrations {
    /// Migrations to `version` with no steps yet: add them with [`step`](Migrations::step).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Migrations, Store};
    ///
    /// let mut store = Store::new();
    /// Migrations::new(2).apply(&mut store)?;
    /// assert_eq!(store.data_version(), 2);
    /// # Ok::<(), datacomp::migrate::MigrateError>(())
    /// ```
    #[must_use]
    pub fn new(version: u32) -> Migrations {
        Migrations { version, steps: Vec::new(), max_output: Migrations::DEFAULT_MAX_OUTPUT }
    }

    /// The limit [`apply`](Migrations::apply) starts with on the bytes it estimates the
    /// migrated entities to take: 4 GiB.
    pub const DEFAULT_MAX_OUTPUT: u64 = 4 << 30;

    /// Sets the most bytes the migrated entities may be estimated to take
    /// ([`DEFAULT_MAX_OUTPUT`](Migrations::DEFAULT_MAX_OUTPUT) unless set). Before it runs a
    /// step, [`apply`](Migrations::apply) estimates them from above, in O(entities + steps):
    /// the bytes of the store's entities, and, for each entity, those of every default and
    /// set of the steps it runs, as to an entity that lacks them (a value's payload and 16 bytes
    /// of header); past `bytes` it refuses with
    /// [`OutputTooLarge`](MigrateError::OutputTooLarge) and allocates nothing. `u64::MAX`
    /// leaves only the arena's own 16 GiB.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{MigrationStep, Migrations, Store};
    /// use datacomp::migrate::MigrateError;
    ///
    /// let mut store = Store::new();
    /// for _ in 0..10 {
    ///     store.insert_entries([("hp", 30.0)]).unwrap();
    /// }
    /// let before = store.clone();
    /// let migrations = Migrations::new(2)
    ///     .step(MigrationStep::to(2).default("curve", vec![0.5f32; 1000]))
    ///     .max_output(10_000);
    /// let err = migrations.apply(&mut store).unwrap_err();
    /// // Each of the 10 entities may gain a 4,004-byte payload and 16 bytes of header.
    /// let held: usize = store.iter().map(|(_, blob)| blob.byte_len()).sum();
    /// let estimate = held as u64 + 10 * (16 + 4 + 4000);
    /// assert_eq!(err, MigrateError::OutputTooLarge { estimate, limit: 10_000 });
    /// assert_eq!(store, before, "nothing changed");
    /// ```
    #[must_use]
    pub fn max_output(mut self, bytes: u64) -> Migrations {
        self.max_output = bytes;
        self
    }

    /// Adds a step after the others. Steps must come in ascending order of their `to`, none
    /// past `version`: [`Migrations::apply`] checks it.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{MigrationStep, Migrations};
    ///
    /// let migrations = Migrations::new(2).step(MigrationStep::to(2).remove("legacy"));
    /// assert_eq!(migrations.steps().len(), 1);
    /// ```
    #[must_use]
    pub fn step(mut self, step: MigrationStep) -> Migrations {
        self.steps.push(step);
        self
    }

    /// The data version a migrated store ends at.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Migrations;
    ///
    /// assert_eq!(Migrations::new(4).version(), 4);
    /// ```
    #[must_use]
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The steps, in order.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Migrations;
    ///
    /// let migrations = Migrations::from_json(r#"{"version": 2, "steps": [{"to": 2}]}"#)?;
    /// assert_eq!(migrations.steps()[0].version(), 2);
    /// # Ok::<(), datacomp::migrate::MigrateError>(())
    /// ```
    #[must_use]
    pub fn steps(&self) -> &[MigrationStep] {
        &self.steps
    }

    /// Checks what needs no store: the steps' order, and each step's paths.
    ///
    /// # Errors
    ///
    /// [`MigrateError::StepOrder`], [`MigrateError::StepPastVersion`],
    /// [`MigrateError::BadPath`] or [`MigrateError::Overlap`].
    pub(crate) fn check(&self) -> Result<Vec<CheckedStep<'_>>, MigrateError> {
        let mut previous = 0;
        let mut checked = Vec::with_capacity(self.steps.len());
        for (index, step) in self.steps.iter().enumerate() {
            let to = step.to;
            if to <= previous {
                return Err(MigrateError::StepOrder { step: index, to, previous });
            }
            if to > self.version {
                return Err(MigrateError::StepPastVersion {
                    step: index,
                    to,
                    version: self.version,
                });
            }
            previous = to;
            checked.push(step.check(index)?);
        }
        Ok(checked)
    }
}

impl MigrationStep {
    /// A step to data version `to` that changes nothing yet: add its changes with
    /// [`rename`](MigrationStep::rename), [`remove`](MigrationStep::remove),
    /// [`default`](MigrationStep::default) and [`set`](MigrationStep::set).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::MigrationStep;
    ///
    /// assert_eq!(MigrationStep::to(2).version(), 2);
    /// ```
    #[must_use]
    pub fn to(version: u32) -> MigrationStep {
        MigrationStep {
            to: version,
            renames: Vec::new(),
            removes: Vec::new(),
            defaults: Vec::new(),
            sets: Vec::new(),
            inexact: None,
        }
    }

    /// The data version the step leads to.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::MigrationStep;
    ///
    /// assert_eq!(MigrationStep::to(5).version(), 5);
    /// ```
    #[must_use]
    pub fn version(&self) -> u32 {
        self.to
    }

    /// Moves the key at path `from`, and every key under it, to `to`.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ExportOptions, MigrationStep, Migrations, Store};
    ///
    /// let mut store = Store::new();
    /// let id = store.insert_entries([("inventory.sword", 1), ("inventory.potion", 3)]).unwrap();
    /// let migrations = Migrations::new(1).step(MigrationStep::to(1).rename("inventory", "items"));
    /// migrations.apply(&mut store)?;
    /// let items = store.export(id, &ExportOptions::json()).unwrap();
    /// assert_eq!(items, r#"{"items":{"sword":1,"potion":3}}"#);
    /// # Ok::<(), datacomp::migrate::MigrateError>(())
    /// ```
    #[must_use]
    pub fn rename(mut self, from: &str, to: &str) -> MigrationStep {
        self.renames.push((from.to_owned(), to.to_owned()));
        self
    }

    /// Removes the key at `path` and every key under it.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{ExportOptions, MigrationStep, Migrations, Store};
    ///
    /// let mut store = Store::new();
    /// let id = store.insert_entries([("name", "Orc"), ("legacy.xp", "5"), ("legacy.kills", "2")]).unwrap();
    /// Migrations::new(1).step(MigrationStep::to(1).remove("legacy")).apply(&mut store)?;
    /// assert_eq!(store.export(id, &ExportOptions::json()).unwrap(), r#"{"name":"Orc"}"#);
    /// # Ok::<(), datacomp::migrate::MigrateError>(())
    /// ```
    #[must_use]
    pub fn remove(mut self, path: &str) -> MigrationStep {
        self.removes.push(path.to_owned());
        self
    }

    /// Sets the key at `path` to `value` in every entity that lacks it.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{MigrationStep, Migrations, Store};
    ///
    /// let mut store = Store::new();
    /// let lucky = store.insert_entries([("stats.luck", 7)]).unwrap();
    /// let plain = store.insert_empty();
    /// Migrations::new(1).step(MigrationStep::to(1).default("stats.luck", 1)).apply(&mut store)?;
    /// assert_eq!(store.get(lucky).unwrap().get_float("stats.luck"), Some(7.0));
    /// assert_eq!(store.get(plain).unwrap().get_float("stats.luck"), Some(1.0));
    /// # Ok::<(), datacomp::migrate::MigrateError>(())
    /// ```
    #[must_use]
    pub fn default(mut self, path: &str, value: impl AsValue) -> MigrationStep {
        if let Some(value) = self.exact(path, &value) {
            self.defaults.push((path.to_owned(), value));
        }
        self
    }

    /// Sets the key at `path` to `value` in every entity.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{MigrationStep, Migrations, Store};
    ///
    /// let mut store = Store::new();
    /// let old = store.insert_entries([("schema", "v2")]).unwrap();
    /// Migrations::new(3).step(MigrationStep::to(3).set("schema", "v3")).apply(&mut store)?;
    /// assert_eq!(store.get(old).unwrap().get_str("schema"), Some("v3"));
    /// # Ok::<(), datacomp::migrate::MigrateError>(())
    /// ```
    #[must_use]
    pub fn set(mut self, path: &str, value: impl AsValue) -> MigrationStep {
        if let Some(value) = self.exact(path, &value) {
            self.sets.push((path.to_owned(), value));
        }
        self
    }

    /// `value` as a step stores it, or `None` for an integer `f32` cannot hold exactly, kept
    /// (the first one) for [`check`](MigrationStep::check) to refuse: a builder returns no
    /// error, and a migration never stores a rounded integer.
    fn exact(&mut self, path: &str, value: &impl AsValue) -> Option<OwnedValue> {
        match exact_value(value) {
            Ok(value) => Some(value.to_owned_value()),
            Err(integer) => {
                self.inexact.get_or_insert_with(|| (path.to_owned(), integer.to_string()));
                None
            }
        }
    }

    /// The step with its paths read as JSON Pointers and checked.
    fn check<'s>(&'s self, index: usize) -> Result<CheckedStep<'s>, MigrateError> {
        let to = self.to;
        if let Some((path, integer)) = &self.inexact {
            let (path, integer) = (path.clone(), integer.clone());
            return Err(MigrateError::InexactInteger { step: index, to, path, integer });
        }
        let path = |given: &'s str| {
            PathText::read(given).ok_or_else(|| MigrateError::BadPath {
                step: index,
                to,
                path: given.to_owned(),
                problem: "a path is a dotted path or a JSON Pointer, and not empty",
            })
        };
        // A path a step writes becomes a name: not one that JSON reads as a raw key.
        let written = |given: &'s str| {
            let text = path(given)?;
            match KeyPath::pointer(&text.pointer).map(|p| p.check_not_raw()) {
                Some(Err(_)) => Err(MigrateError::BadPath {
                    step: index,
                    to,
                    path: given.to_owned(),
                    problem: "a name may not start with # and 8 hex digits: JSON reads that \
                              member as a raw key",
                }),
                _ if text.segments().count() > MAX_PATH_SEGMENTS => Err(MigrateError::BadPath {
                    step: index,
                    to,
                    path: given.to_owned(),
                    problem: "a name has at most 125 segments (MAX_PATH_SEGMENTS)",
                }),
                _ => Ok(text),
            }
        };
        let mut renames = Vec::with_capacity(self.renames.len());
        for (from, dst) in &self.renames {
            let (from, dst) = (path(from)?, written(dst)?);
            if from.pointer == dst.pointer {
                return Err(MigrateError::BadPath {
                    step: index,
                    to,
                    path: from.given.to_owned(),
                    problem: "a rename to the same path",
                });
            }
            renames.push((from, dst));
        }
        let removes = self.removes.iter().map(|p| path(p)).collect::<Result<Vec<_>, _>>()?;
        let mut writes = Vec::with_capacity(self.defaults.len() + self.sets.len());
        for (list, default) in [(&self.defaults, true), (&self.sets, false)] {
            for (p, value) in list {
                writes.push(CheckedWrite { path: written(p)?, value, default });
            }
        }
        let overlap = |what, paths: Vec<&PathText<'_>>| match overlapping(paths) {
            Some((first, second)) => Err(MigrateError::Overlap {
                step: index,
                to,
                what,
                first: first.given.to_owned(),
                second: second.given.to_owned(),
            }),
            None => Ok(()),
        };
        overlap("renames from", renames.iter().map(|(from, _)| from).collect())?;
        overlap("renames to", renames.iter().map(|(_, dst)| dst).collect())?;
        overlap("defaults and sets", writes.iter().map(|w| &w.path).collect())?;
        Ok(CheckedStep { index, to, renames, removes, writes })
    }
}

/// A path of a migration: as given, and as its JSON Pointer, with each segment escaped as a
/// store's key names are (`/a.b/c~1d`), so that the keys under it are the names that start
/// with it and a `/`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PathText<'a> {
    pub(crate) given: &'a str,
    pub(crate) pointer: String,
    /// The key that `given` names as a raw key (`#0000002a`), as everywhere else: a rename or
    /// removal of it acts on that key alone.
    pub(crate) raw: Option<Key>,
}

impl<'a> PathText<'a> {
    /// `given` read as a KEY argument is: a JSON Pointer if it starts with `/`, else dotted.
    /// `None` for the empty text, which is no path.
    fn read(given: &'a str) -> Option<PathText<'a>> {
        if given.is_empty() {
            return None;
        }
        let path = KeyPath::pointer(given).unwrap_or_else(|| KeyPath::dotted(given));
        let mut pointer = String::with_capacity(given.len() + 1);
        for segment in path.segments() {
            crate::key::push_pointer_segment(&mut pointer, &segment);
        }
        Some(PathText { given, pointer, raw: crate::key::raw_label(given) })
    }

    /// The path as messages show it: dotted where that reads back as the same path.
    pub(crate) fn label(&self) -> String {
        crate::names::label(self.segments())
    }

    /// The segments, unescaped.
    pub(crate) fn segments(&self) -> impl Iterator<Item = Cow<'_, str>> {
        self.pointer[1..].split('/').map(crate::key::unescape)
    }
}

/// Two of `paths` that are one path, or one under the other, if any: found by sorting by
/// segments, in which order a path's subtree follows it directly.
fn overlapping<'p, 'a>(
    mut paths: Vec<&'p PathText<'a>>,
) -> Option<(&'p PathText<'a>, &'p PathText<'a>)> {
    paths.sort_by(|a, b| a.segments().cmp(b.segments()));
    paths
        .windows(2)
        .map(|pair| (pair[0], pair[1]))
        .find(|(a, b)| under_or_at(&b.pointer, &a.pointer))
}

/// Whether the pointer `path` is `prefix` or a path under it.
fn under_or_at(path: &str, prefix: &str) -> bool {
    path.strip_prefix(prefix).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// A step after [`MigrationStep::check`]: its paths as pointers.
pub(crate) struct CheckedStep<'a> {
    pub(crate) index: usize,
    pub(crate) to: u32,
    pub(crate) renames: Vec<(PathText<'a>, PathText<'a>)>,
    pub(crate) removes: Vec<PathText<'a>>,
    /// The defaults, then the sets.
    pub(crate) writes: Vec<CheckedWrite<'a>>,
}

/// A default or a set of a [`CheckedStep`].
pub(crate) struct CheckedWrite<'a> {
    pub(crate) path: PathText<'a>,
    pub(crate) value: &'a OwnedValue,
    pub(crate) default: bool,
}

/// What [`Migrations::apply`] did: the data versions before and after, and for each step it
/// ran, how many entities and keys it changed.
///
/// # Examples
///
/// ```
/// use datacomp::{MigrationStep, Migrations, Store};
///
/// let mut store = Store::new();
/// store.insert_entries([("hp", 30)]).unwrap();
/// store.insert_entries([("name", "Orc")]).unwrap();
/// let migrations = Migrations::new(2).step(MigrationStep::to(2).rename("hp", "stats.health"));
/// let report = migrations.apply(&mut store)?;
/// assert_eq!(report.steps[0].entities, 1);
/// assert_eq!(report.steps[0].renamed, 1);
/// assert_eq!(report.to_string(), "data version 0 -> 2\n  steps[0] (to 2): 1 entity changed: 1 key renamed\n");
/// # Ok::<(), datacomp::migrate::MigrateError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct MigrationReport {
    /// The store's data version before.
    pub from: u32,
    /// The store's data version after: the migrations' version.
    pub to: u32,
    /// One report for each step that ran (those above `from`), in order.
    pub steps: Vec<StepReport>,
}

/// What one step of a migration changed: see [`MigrationReport`].
///
/// # Examples
///
/// ```
/// use datacomp::{MigrationStep, Migrations, Store};
///
/// let mut store = Store::new();
/// store.insert_entries([("legacy.a", 1), ("legacy.b", 2)]).unwrap();
/// store.insert_entries([("name", "Orc")]).unwrap();
/// let report = Migrations::new(1).step(MigrationStep::to(1).remove("legacy")).apply(&mut store)?;
/// let step = report.steps[0];
/// assert_eq!((step.index, step.to, step.entities, step.removed, step.keys()), (0, 1, 1, 2, 2));
/// # Ok::<(), datacomp::migrate::MigrateError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct StepReport {
    /// The step's position in [`Migrations::steps`].
    pub index: usize,
    /// The data version it leads to.
    pub to: u32,
    /// Entities it changed.
    pub entities: usize,
    /// Keys renamed (moved to a new path).
    pub renamed: usize,
    /// Keys removed (a key renamed, then removed, counts in both).
    pub removed: usize,
    /// Keys set by a default.
    pub defaulted: usize,
    /// Keys set by a set to a value they did not hold.
    pub set: usize,
}

impl StepReport {
    /// Keys changed: renamed, removed, defaulted and set.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::migrate::StepReport;
    ///
    /// assert_eq!(StepReport::default().keys(), 0);
    /// ```
    #[must_use]
    pub fn keys(&self) -> usize {
        self.renamed + self.removed + self.defaulted + self.set
    }
}

impl fmt::Display for MigrationReport {
    /// `data version 0 -> 3`, then a line per step:
    /// `  steps[1] (to 3): 120 entities changed: 40 keys removed, 240 defaulted, 120 set`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "data version {} -> {}", self.from, self.to)?;
        for step in &self.steps {
            let entities = if step.entities == 1 { "entity" } else { "entities" };
            write!(
                f,
                "  steps[{}] (to {}): {} {entities} changed",
                step.index, step.to, step.entities
            )?;
            let counts = [
                (step.renamed, "renamed"),
                (step.removed, "removed"),
                (step.defaulted, "defaulted"),
                (step.set, "set"),
            ];
            let mut first = true;
            for (count, what) in counts.into_iter().filter(|&(count, _)| count > 0) {
                let lead = if first { ": " } else { ", " };
                let keys = match (first, count) {
                    (false, _) => "",
                    (true, 1) => " key",
                    (true, _) => " keys",
                };
                write!(f, "{lead}{count}{keys} {what}")?;
                first = false;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

/// Why migrations could not be read, or could not run on a store (which is then unchanged).
///
/// A step is named by its position in the `steps` array and the version it leads to:
/// `steps[1] (to 3)`.
///
/// # Examples
///
/// ```
/// use datacomp::Migrations;
/// use datacomp::migrate::MigrateError;
///
/// let err = Migrations::from_json(r#"{"version": 2, "steps": [{"to": 2, "renmae": {}}]}"#)
///     .unwrap_err();
/// assert!(matches!(err, MigrateError::UnknownField { step: Some(0), .. }));
/// assert_eq!(
///     err.to_string(),
///     "migrations, line 1 column 43, steps[0]: unknown field \"renmae\"; a step has to, \
///      rename, remove, default and set"
/// );
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum MigrateError {
    /// The text is not JSON, or not of the migrations format: a missing field, a field of the
    /// wrong type, text after the document.
    Json {
        /// Where, 1-based.
        line: usize,
        /// Where, 1-based.
        column: usize,
        /// The step it is in, by position in `steps`, if it is in one.
        step: Option<usize>,
        /// What is wrong, as the JSON reader says it.
        message: String,
    },
    /// A field the format does not have (a misspelt `rename`, say).
    UnknownField {
        /// Where, 1-based.
        line: usize,
        /// Where, 1-based.
        column: usize,
        /// The step it is in, if it is in one; `None` at the top level.
        step: Option<usize>,
        /// The field.
        field: String,
    },
    /// A value of a default or set that a key cannot hold.
    Value {
        /// Where, 1-based.
        line: usize,
        /// Where, 1-based.
        column: usize,
        /// The step.
        step: usize,
        /// The path it was given for.
        path: String,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// A path that is no path: the empty text, or a rename to itself.
    BadPath {
        /// The step.
        step: usize,
        /// The version it leads to.
        to: u32,
        /// The path, as given.
        path: String,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// A step whose `to` is not above the step's before it (or is 0).
    StepOrder {
        /// The step.
        step: usize,
        /// The version it leads to.
        to: u32,
        /// The version the step before leads to (0 for the first).
        previous: u32,
    },
    /// A step whose `to` is past the migrations' `version`.
    StepPastVersion {
        /// The step.
        step: usize,
        /// The version it leads to.
        to: u32,
        /// The migrations' version.
        version: u32,
    },
    /// Two paths of one step that are one path, or one under the other, where that would be
    /// ambiguous: two renames from or to them, or two defaults or sets of them.
    Overlap {
        /// The step.
        step: usize,
        /// The version it leads to.
        to: u32,
        /// Which of the step's lists: `"renames from"`, `"renames to"`, `"defaults and sets"`.
        what: &'static str,
        /// One path, as given.
        first: String,
        /// The other.
        second: String,
    },
    /// The store's data version is past the migrations' version: it was written by a newer
    /// version of the game.
    StoreAhead {
        /// The store's data version.
        data_version: u32,
        /// The migrations' version.
        version: u32,
    },
    /// A path of a step whose key the store (or an earlier step) names differently: two paths
    /// with one 32-bit hash.
    KeyCollision {
        /// The step.
        step: usize,
        /// The version it leads to.
        to: u32,
        /// The two names: a [`KeyError::Collision`].
        collision: KeyError,
    },
    /// A rename onto a key the entity holds (and does not move away in the same step).
    RenameOntoKey {
        /// The step.
        step: usize,
        /// The version it leads to.
        to: u32,
        /// The entity.
        id: Id,
        /// The key renamed.
        from: String,
        /// The key it would take the place of.
        onto: String,
    },
    /// A write (a rename's new place, a default, a set) at a path the entity holds keys under:
    /// an object's path.
    PathIsObject {
        /// The step.
        step: usize,
        /// The version it leads to.
        to: u32,
        /// The entity.
        id: Id,
        /// `"rename"`, `"default"` or `"set"`.
        op: &'static str,
        /// The path written.
        path: String,
        /// A key the entity holds under it.
        under: String,
    },
    /// A write at a path under a key the entity holds: its path runs through a value.
    PathThroughValue {
        /// The step.
        step: usize,
        /// The version it leads to.
        to: u32,
        /// The entity.
        id: Id,
        /// `"rename"`, `"default"` or `"set"`.
        op: &'static str,
        /// The path written.
        path: String,
        /// The key the entity holds above it.
        value: String,
    },
    /// A default or set given in code an integer that `f32`, the type numbers are stored as,
    /// cannot hold exactly (`set("gold", 16_777_217)`): refused, as a write refuses it.
    InexactInteger {
        /// The step.
        step: usize,
        /// The version it leads to.
        to: u32,
        /// The path it was given for.
        path: String,
        /// The integer, in decimal.
        integer: String,
    },
    /// An entity would pass the 4 GiB of a blob.
    BlobTooLarge {
        /// The step.
        step: usize,
        /// The version it leads to.
        to: u32,
        /// The entity.
        id: Id,
        /// The bytes it would need.
        required: u64,
    },
    /// The migrated arena would pass 16 GiB (2^32 words).
    ArenaTooLarge {
        /// The entity at which it would.
        id: Id,
    },
    /// The migrated arena could not be allocated: it would take `bytes` (the store is
    /// unchanged).
    OutOfMemory {
        /// Bytes of the arena the allocation was for.
        bytes: u64,
    },
    /// The migrated entities are estimated to take more bytes than the limit
    /// ([`Migrations::max_output`]): refused before any step runs.
    OutputTooLarge {
        /// The estimate, in bytes: the entities' bytes and every default and set of the
        /// steps that run added to each entity.
        estimate: u64,
        /// The limit, in bytes.
        limit: u64,
    },
}

/// `steps[1] (to 3)`.
struct StepName(usize, u32);

impl fmt::Display for StepName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "steps[{}] (to {})", self.0, self.1)
    }
}

/// `migrations, line 3 column 14` and `, steps[1]` when in a step.
struct Place(usize, usize, Option<usize>);

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "migrations, line {} column {}", self.0, self.1)?;
        match self.2 {
            Some(step) => write!(f, ", steps[{step}]"),
            None => Ok(()),
        }
    }
}

impl fmt::Display for MigrateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use MigrateError as E;
        match self {
            E::Json { line, column, step, message } => {
                write!(f, "{}: {}", Place(*line, *column, *step), Shortened(message))
            }
            E::UnknownField { line, column, step, field } => {
                let has = match step {
                    Some(_) => "a step has to, rename, remove, default and set",
                    None => "migrations have version and steps",
                };
                write!(
                    f,
                    "{}: unknown field \"{}\"; {has}",
                    Place(*line, *column, *step),
                    Shortened(field)
                )
            }
            E::Value { line, column, step, path, problem } => write!(
                f,
                "{}: the value for {}: {problem}",
                Place(*line, *column, Some(*step)),
                Shortened(path)
            ),
            E::BadPath { step, to, path, problem } => {
                write!(f, "{}: bad path \"{}\": {problem}", StepName(*step, *to), Shortened(path))
            }
            E::StepOrder { step, to, previous: 0 } => {
                write!(f, "{}: a step leads to a data version above 0", StepName(*step, *to))
            }
            E::StepOrder { step, to, previous } => write!(
                f,
                "{}: steps are in ascending order of to, and the step before leads to {previous}",
                StepName(*step, *to)
            ),
            E::StepPastVersion { step, to, version } => {
                write!(f, "{}: past the migrations' version {version}", StepName(*step, *to))
            }
            E::Overlap { step, to, what, first, second } => write!(
                f,
                "{}: {what} {} and {} overlap (one is the other, or under it)",
                StepName(*step, *to),
                Shortened(first),
                Shortened(second)
            ),
            E::StoreAhead { data_version, version } => write!(
                f,
                "the store is at data version {data_version}, past the migrations' version \
                 {version}: it was written by a newer version of the game"
            ),
            E::KeyCollision { step, to, collision } => {
                write!(f, "{}: {collision}", StepName(*step, *to))
            }
            E::RenameOntoKey { step, to, id, from, onto } => write!(
                f,
                "{}, entity {id}: renaming {} onto {}, which the entity holds",
                StepName(*step, *to),
                Shortened(from),
                Shortened(onto)
            ),
            E::PathIsObject { step, to, id, op, path, under } => write!(
                f,
                "{}, entity {id}: {op} {} would make a value of an object: the entity holds {}",
                StepName(*step, *to),
                Shortened(path),
                Shortened(under)
            ),
            E::PathThroughValue { step, to, id, op, path, value } => write!(
                f,
                "{}, entity {id}: {op} {} would run through the value {} the entity holds",
                StepName(*step, *to),
                Shortened(path),
                Shortened(value)
            ),
            E::InexactInteger { step, to, path, integer } => write!(
                f,
                "{}: the value of \"{}\" is {integer}, which an f32 (the type numbers are \
                 stored as) does not hold exactly",
                StepName(*step, *to),
                Shortened(path)
            ),
            E::BlobTooLarge { step, to, id, required } => write!(
                f,
                "{}, entity {id}: the entity would need {required} bytes, past the 4 GiB of a blob",
                StepName(*step, *to)
            ),
            E::ArenaTooLarge { id } => {
                write!(f, "entity {id}: the migrated arena would pass 16 GiB")
            }
            E::OutOfMemory { bytes } => write!(
                f,
                "the migrated arena would take {bytes} bytes, more memory than could be had"
            ),
            E::OutputTooLarge { estimate, limit } => write!(
                f,
                "the migrated entities could take up to {estimate} bytes (every default and set \
                 added to each), past the limit of {limit} bytes"
            ),
        }
    }
}

impl std::error::Error for MigrateError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            MigrateError::KeyCollision { collision, .. } => Some(collision),
            _ => None,
        }
    }
}
