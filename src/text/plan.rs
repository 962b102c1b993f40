//! Export plans: an entity's JSON with its values left out, made once for a key layout and
//! replayed for every entity of that layout.
//!
//! Entities imported from one fixture share a *layout*: the same keys in the same order, each
//! with the same type (the blob's key and tag arrays). Their JSON differs only in the values:
//! the nesting, the member names, the arrays and the punctuation all follow from the layout
//! and the store's names. So a store export builds the tree of the first entity of a layout
//! (`Store::export_tree`), writes it, and keeps what it wrote between the values as the
//! layout's plan; every later entity of that layout is written from the plan, the text between
//! values copied and each value written from the blob by its position, with no tree, no name
//! lookup and no escaping of member names.
//!
//! ```text
//!  layout  keys [name, stats.health, stats.mana]   tags [str, float, float]
//!  text    {"name":|,"stats":{"health":|,"mana":|}}      ('|': where a value goes)
//!  steps   (8, entry 0)  (27, entry 1)  (35, entry 2)   text[..8] value0 text[8..27] value1 ...
//! ```
//!
//! The plans of one export share three buffers (no allocation per plan) and are bounded: at
//! most [`MAX_PLANS`] plans and [`MAX_PLAN_BYTES`] bytes. Past either, entities of new layouts
//! are written from their trees as before, so a store whose every entity has its own layout
//! pays for a hash of each layout and a failed lookup, and memory stays bounded.

use std::hash::{BuildHasher, RandomState};
use std::ops::Range;
use std::sync::Mutex;

use fxhash::{FxHashMap, FxHashSet};

use crate::blob::BlobRef;
use crate::blob::layout;
use crate::value::{Value, ValueType};

use super::write::{NO_NODE, Tree, check_finite, write_f32, write_str_bytes, write_value};

/// Most plans an export keeps.
pub(crate) const MAX_PLANS: usize = 1024;
/// Most bytes the plans of an export hold (layouts, text and steps).
pub(crate) const MAX_PLAN_BYTES: usize = 4 << 20;
/// Lookups in a row that find no plan, once no more plans can be made, after which an export
/// stops looking: its layouts are not the ones it met first, and each lookup would cost a
/// hash for nothing.
const GIVE_UP_MISSES: usize = 4 * MAX_PLANS;

/// A value of a plan: where the text before it ends (in the plan's text), its blob entry and
/// the entry's type tag (fixed by the layout).
#[derive(Clone, Copy)]
struct Step {
    end: u32,
    entry: u32,
    tag: u8,
}

/// One layout's plan: ranges of [`Plans`]'s shared buffers.
struct Plan {
    layout: Range<usize>,
    text: Range<usize>,
    steps: Range<usize>,
}

/// The plans of one export, by layout.
pub(crate) struct Plans {
    /// The hash of the layouts starts from this random number, drawn for each export: keys
    /// come from untrusted documents, and the layouts of a store should not collide by design.
    /// Whatever collides, a lookup costs at most a probe of [`MAX_PLANS`] entries.
    seed: u64,
    /// Plan number by the hash of its layout. A layout whose hash another holds is not kept.
    by_layout: FxHashMap<u64, u32>,
    list: Vec<Plan>,
    /// Every plan's layout words, back to back.
    layouts: Vec<u32>,
    /// Every plan's text, back to back.
    text: Vec<u8>,
    // INVARIANT: for each plan, its steps' text ends are ascending offsets into its own text
    // (from the start of its range), at most its length; their entries and tags are of its
    // layout.
    /// Every plan's steps, back to back.
    steps: Vec<Step>,
    /// Lookups that found no plan since the plans filled up, or the last one did: past
    /// [`GIVE_UP_MISSES`] the export stops looking (a store of ever new layouts).
    misses: usize,
    /// Scratch of a recording: where each value went in the output, its entry and type tag.
    spans: Vec<(usize, usize, u32, u8)>,
    /// The layout hashes met once by [`met_before`](Plans::met_before) (one-entity exports,
    /// which make a plan for a layout met twice: a one-off export pays for no plan). At most
    /// [`MAX_PLANS`] times four.
    met: FxHashSet<u64>,
}

/// The words of `blob` that fix its layout: its key array and tag array (their length fixes
/// the key count).
pub(crate) fn layout_words(blob: BlobRef<'_>) -> &[u32] {
    layout::layout_words(blob.as_words())
}

/// A store's plans for exporting one entity at a time ([`Store::export`](crate::Store::export)),
/// kept between calls: an editor or a server exports entity after entity, and each one of a
/// layout already met is written from its plan. The plans are made from the store's names,
/// so they are dropped when the names' version changes (a name added, taken back or
/// dropped), not on every write. Behind a lock so that a store stays `Sync`: an export that
/// finds it taken (another thread exporting) writes from the tree instead.
pub(crate) struct PlanCache(Mutex<Option<Box<CachedPlans>>>);

/// The plans, and what they were made for.
struct CachedPlans {
    names_version: u64,
    pretty: bool,
    plans: Plans,
}

impl PlanCache {
    /// No plans yet. Does not allocate.
    pub(crate) const fn new() -> PlanCache {
        PlanCache(Mutex::new(None))
    }

    /// Runs `write` with the plans made for names of version `names_version` and `pretty`
    /// output (new ones if the kept plans were made for others); `None` if the plans are in
    /// use by another thread.
    pub(crate) fn with<R>(
        &self,
        names_version: u64,
        pretty: bool,
        write: impl FnOnce(&mut Plans) -> R,
    ) -> Option<R> {
        let mut cached = self.0.try_lock().ok()?;
        let current =
            cached.as_ref().is_some_and(|c| c.names_version == names_version && c.pretty == pretty);
        if !current {
            *cached = Some(Box::new(CachedPlans { names_version, pretty, plans: Plans::new() }));
        }
        cached.as_mut().map(|c| write(&mut c.plans))
    }
}

impl Default for PlanCache {
    fn default() -> PlanCache {
        PlanCache::new()
    }
}

impl Clone for PlanCache {
    /// No plans: they are a cache, made again as needed.
    fn clone(&self) -> PlanCache {
        PlanCache::new()
    }
}

/// A value of a planned entity that JSON has no number for: the export stops there.
pub(crate) struct NotFinite;

impl Plans {
    /// No plans, with a fresh random seed.
    pub(crate) fn new() -> Plans {
        Plans {
            seed: RandomState::new().hash_one(0_u8),
            by_layout: FxHashMap::default(),
            list: Vec::new(),
            layouts: Vec::new(),
            text: Vec::new(),
            steps: Vec::new(),
            misses: 0,
            spans: Vec::new(),
            met: FxHashSet::default(),
        }
    }

    /// Whether looking up plans still pays: false after [`GIVE_UP_MISSES`] lookups in a row
    /// found none while no more plans could be made.
    pub(crate) fn looking(&self) -> bool {
        self.misses < GIVE_UP_MISSES
    }

    /// The hash `layout` is found by: two words at a time as `FxHash` mixes them (a few
    /// instructions a key, where `SipHash` takes tens), from the random seed, then murmur3's
    /// finalizer, which spreads every bit of the state over the low bits the table indexes
    /// by (`FxHash`'s own low bits ignore most of a layout).
    pub(crate) fn hash(&self, layout: &[u32]) -> u64 {
        const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        let mut h = self.seed ^ layout.len() as u64;
        let mut pairs = layout.chunks_exact(2);
        for pair in &mut pairs {
            let word = u64::from(pair[0]) | u64::from(pair[1]) << 32;
            h = (h.rotate_left(5) ^ word).wrapping_mul(K);
        }
        if let [last] = pairs.remainder() {
            h = (h.rotate_left(5) ^ u64::from(*last)).wrapping_mul(K);
        }
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ h >> 33
    }

    /// Writes `blob` from the plan of `layout` (hashed `hash`), if there is one: `Some(Ok)`
    /// when written, `Some(Err)` when `checked` and a value is a NaN or infinity (the output
    /// is then partly written), `None` when there is no plan for the layout.
    pub(crate) fn write(
        &mut self,
        hash: u64,
        layout: &[u32],
        blob: BlobRef<'_>,
        checked: bool,
        separator: &[u8],
        out: &mut Vec<u8>,
    ) -> Option<Result<(), NotFinite>> {
        let Some(plan) = self
            .by_layout
            .get(&hash)
            .map(|&n| &self.list[n as usize])
            .filter(|plan| self.layouts[plan.layout.clone()] == *layout)
        else {
            if !self.room() {
                self.misses += 1;
            }
            return None;
        };
        self.misses = 0;
        let words = blob.as_words();
        let raw = layout::raw_values(words);
        let text = &self.text[plan.text.clone()];
        let mut at = 0;
        for &Step { end, entry, tag } in &self.steps[plan.steps.clone()] {
            out.extend_from_slice(&text[at..end as usize]);
            at = end as usize;
            // The same layout: entry `entry` exists and has type `tag`.
            let raw = raw[entry as usize];
            if tag == ValueType::Float as u8 {
                let x = f32::from_bits(raw);
                if checked && !x.is_finite() {
                    return Some(Err(NotFinite));
                }
                write_f32(out, x);
            } else if tag == ValueType::Str as u8 {
                write_str_bytes(out, layout::str_bytes(words, raw));
            } else {
                let value = layout::decode(words, tag, raw);
                if checked && !finite(value) {
                    return Some(Err(NotFinite));
                }
                write_value(out, value, separator);
            }
        }
        out.extend_from_slice(&text[at..]);
        Some(Ok(()))
    }

    /// Whether the layout of `hash` was met before; notes it if not (while there is room).
    pub(crate) fn met_before(&mut self, hash: u64) -> bool {
        if self.met.contains(&hash) {
            return true;
        }
        if self.met.len() < 4 * MAX_PLANS {
            self.met.insert(hash);
        }
        false
    }

    /// Whether another plan may be made.
    fn room(&self) -> bool {
        self.list.len() < MAX_PLANS && self.bytes() < MAX_PLAN_BYTES
    }

    /// Bytes the plans hold.
    fn bytes(&self) -> usize {
        self.layouts.len() * 4 + self.text.len() + self.steps.len() * size_of::<Step>()
    }

    /// Writes `tree` (an entity of `layout`, built by `Store::export_tree`) as
    /// [`Tree::write`] does, and keeps what it wrote as the plan of `layout` if there is room.
    pub(crate) fn write_and_record(
        &mut self,
        tree: &Tree<'_>,
        (hash, layout): (u64, &[u32]),
        (pretty, depth): (bool, usize),
        separator: &[u8],
        out: &mut Vec<u8>,
    ) {
        // A layout past what is left of the budget makes no plan: not worth recording.
        let too_big =
            layout.len().saturating_mul(4) > MAX_PLAN_BYTES - self.bytes().min(MAX_PLAN_BYTES);
        if !self.room() || too_big || self.by_layout.contains_key(&hash) {
            tree.write(pretty, depth, out);
            return;
        }
        let start = out.len();
        let mut spans = std::mem::take(&mut self.spans);
        spans.clear();
        tree.write_with(pretty, depth, out, |out, node, value| {
            let at = out.len();
            write_value(out, value, separator);
            spans.push((at, out.len(), node.entry, value.value_type() as u8));
        });
        self.record(hash, layout, start, out, &spans);
        self.spans = spans;
    }

    /// Keeps the entity written in `out[start..]`, its values at `spans`, as the plan of
    /// `layout`, if it fits in what is left of [`MAX_PLAN_BYTES`].
    fn record(
        &mut self,
        hash: u64,
        layout: &[u32],
        start: usize,
        out: &[u8],
        spans: &[(usize, usize, u32, u8)],
    ) {
        let values: usize = spans.iter().map(|&(from, to, ..)| to - from).sum();
        let text_len = out.len() - start - values;
        let bytes = layout.len() * 4 + text_len + spans.len() * size_of::<Step>();
        // Every leaf of a tree that `export_tree` built is an entry; steps hold u32 offsets.
        let usable = spans.iter().all(|&(_, _, entry, _)| entry != NO_NODE)
            && u32::try_from(text_len).is_ok()
            && self.bytes() + bytes <= MAX_PLAN_BYTES;
        if !usable {
            return;
        }
        let text_start = self.text.len();
        let steps_start = self.steps.len();
        let mut at = start;
        for &(from, to, entry, tag) in spans {
            self.text.extend_from_slice(&out[at..from]);
            self.steps.push(Step { end: (self.text.len() - text_start) as u32, entry, tag });
            at = to;
        }
        self.text.extend_from_slice(&out[at..]);
        let layout_start = self.layouts.len();
        self.layouts.extend_from_slice(layout);
        self.by_layout.insert(hash, self.list.len() as u32);
        self.list.push(Plan {
            layout: layout_start..self.layouts.len(),
            text: text_start..self.text.len(),
            steps: steps_start..self.steps.len(),
        });
    }
}

/// Whether every float of `value` is one JSON has a number for.
fn finite(value: Value<'_>) -> bool {
    check_finite(value).is_ok()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use crate::blob::Blob;
    use crate::key::{Key, KeyPath};
    use crate::store::Store;
    use crate::text::error::ExportError;
    use crate::text::options::{ExportOptions, ImportOptions};
    use crate::text::write::Tree;
    use crate::value::Value;

    /// Paths entities are given: in the arrays of objects and of strings the base document
    /// marks, an empty array, names that need escapes, a path that is a value of another
    /// (`stats`), a dot inside a member name, new deep paths, and a key with no name.
    const PATHS: [&str; 16] = [
        "/arr/0/x",
        "/arr/0/y",
        "/arr/1/x",
        "/list/0",
        "/list/1",
        "/empty",
        "/pos",
        "/q\"uo\\te/k\n",
        "stats.hp",
        "stats.mp",
        "stats",
        "/a.b",
        "new.deep.key",
        "/list/2",
        "/arr/0",
        "#raw",
    ];

    const STRINGS: [&str; 4] =
        ["", "plain", "q\"\\\n\u{1}\u{1f}é—", "a long enough string to pass eight bytes"];
    const FLOATS: [f32; 8] = [0.0, 17.0, -2.5, 0.1, 16_777_218.0, -0.0, 1e20, f32::NAN];
    const ARRAYS: [&[f32]; 4] = [&[], &[1.0, 2.5], &[f32::INFINITY], &[-0.0, 123_456_792.0]];

    fn value(choice: (u8, usize)) -> Value<'static> {
        match choice.0 % 5 {
            0 => Value::Bool(choice.1.is_multiple_of(2)),
            1 => Value::Float(FLOATS[choice.1 % FLOATS.len()]),
            2 => Value::Str(STRINGS[choice.1 % STRINGS.len()]),
            3 => Value::Null,
            _ => Value::Floats(ARRAYS[choice.1 % ARRAYS.len()]),
        }
    }

    /// A store with the base document's names, then one entity per `(template, values)`: the
    /// template's paths in order, each given the next value (writes the store refuses, such
    /// as a path through another's value, are skipped).
    fn store(templates: &[Vec<usize>], entities: &[(usize, Vec<(u8, usize)>)]) -> Store {
        let mut store = Store::new();
        let base = r#"{"arr": [{"x": 1, "y": "s"}, {"x": 2}], "list": ["a", "b", "c"],
            "empty": [], "pos": [1, 2], "q\"uo\\te": {"k\n": true}, "stats": {"hp": 1}}"#;
        store.import(base, &ImportOptions::lenient()).unwrap();
        for (template, values) in entities {
            let id = store.insert(&Blob::new());
            let paths = &templates[template % templates.len()];
            let mut entity = store.get_mut(id).unwrap();
            for (&path, &choice) in paths.iter().zip(values.iter().cycle()) {
                let value = value(choice);
                let _ = match PATHS[path] {
                    "#raw" => entity.set(Key::from_raw(7), value),
                    path if path.starts_with('/') => {
                        entity.set(KeyPath::pointer(path).unwrap(), value)
                    }
                    path => entity.set(path, value),
                };
            }
        }
        store
    }

    fn all_options() -> [ExportOptions; 4] {
        let lossy = ExportOptions::json().non_finite_as_null();
        [ExportOptions::json(), ExportOptions::json().pretty(true), lossy, lossy.pretty(true)]
    }

    /// Every entity as the store's JSON export writes them, each from its own tree, with no
    /// plan: the reference the plans are tested against.
    fn export_all_by_trees(store: &Store, options: ExportOptions) -> Result<String, ExportError> {
        if store.is_empty() {
            return Ok("[]".to_owned());
        }
        let pretty = options.is_pretty();
        let [open, separator, close]: [&str; 3] =
            if pretty { ["[\n  ", ",\n  ", "\n]"] } else { ["[", ",", "]"] };
        let mut out = open.as_bytes().to_vec();
        let mut tree = Tree::for_names(store.names(), true);
        for (i, (id, blob)) in store.iter().enumerate() {
            if i > 0 {
                out.extend_from_slice(separator.as_bytes());
            }
            if let (false, Some((key, value))) =
                (options.is_lossy(), tree.build(store.names(), blob))
            {
                let key = store.key_label(key).into_owned();
                return Err(ExportError::NotFinite { entity: Some(id), key, value });
            }
            tree.write(pretty, usize::from(pretty), &mut out);
        }
        out.extend_from_slice(close.as_bytes());
        Ok(String::from_utf8(out).unwrap())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        /// The planned export writes every store byte for byte as the tree of each entity
        /// does, and refuses the same NaN or infinity (the first in key order).
        #[test]
        fn plans_write_what_the_trees_write(
            templates in prop::collection::vec(prop::collection::vec(0..PATHS.len(), 0..10), 1..5),
            entities in prop::collection::vec(
                (0_usize..5, prop::collection::vec((0_u8..4, 0_usize..8), 1..6)),
                0..30,
            ),
        ) {
            let store = store(&templates, &entities);
            for options in all_options() {
                let planned = store.export_all(&options).map_err(|e| e.to_string());
                let trees = export_all_by_trees(&store, options).map_err(|e| e.to_string());
                prop_assert_eq!(&planned, &trees);
                // One entity at a time, three times (a layout's plan is made the second time
                // it is met, and used from then on): each as its tree alone writes it.
                for round in 0..3 {
                    for (id, blob) in store.iter() {
                        let mut tree = Tree::for_names(store.names(), false);
                        let refused = tree.build(store.names(), blob).is_some() && !options.is_lossy();
                        let mut out = Vec::new();
                        tree.write(options.is_pretty(), 0, &mut out);
                        let expected = (!refused).then(|| String::from_utf8(out).unwrap());
                        let exported = store.export(id, &options).ok();
                        prop_assert_eq!(exported, expected, "round {}", round);
                    }
                }
                if let Ok(text) = planned {
                    // JSON, and (when checked) JSON that import reads back.
                    let parsed = serde_json::from_str::<serde_json::Value>(&text);
                    prop_assert!(parsed.is_ok(), "{}", text);
                    if !options.is_lossy() {
                        let mut copy = Store::new();
                        copy.import(&text, &ImportOptions::lenient()).unwrap();
                        prop_assert_eq!(copy.len(), store.len());
                    }
                }
            }
        }
    }

    #[test]
    fn one_entity_exports_drop_their_plans_when_the_names_change() {
        let mut store = Store::new();
        let key = Key::parse("stats.luck");
        let ids: Vec<_> = (0..2).map(|i| store.insert_entries([(key, i)]).unwrap()).collect();
        let json = ExportOptions::json();
        for &id in &ids {
            assert!(store.export(id, &json).unwrap().starts_with(r##"{"#"##));
        }
        store.insert_key_name("stats.luck").unwrap();
        assert_eq!(store.export(ids[1], &json).unwrap(), r#"{"stats":{"luck":1}}"#);
        assert_eq!(
            store.export(ids[0], &json.pretty(true)).unwrap(),
            "{\n  \"stats\": {\n    \"luck\": 0\n  }\n}"
        );
        // A write changes values, not names: the plan stays, and writes the new value.
        store.get_mut(ids[0]).unwrap().set("stats.luck", 5).unwrap();
        assert_eq!(store.export(ids[0], &json).unwrap(), r#"{"stats":{"luck":5}}"#);
        // A clone starts without plans and writes the same.
        assert_eq!(store.clone().export(ids[0], &json).unwrap(), r#"{"stats":{"luck":5}}"#);
    }

    #[test]
    fn entities_of_one_layout_share_a_plan_and_others_get_their_own() {
        let mut store = Store::new();
        let text = r#"[{"n": "a\"b", "v": [{"x": 1}, {"x": 2.5}]}, {"n": "c", "v": [{"x": 3}, {"x": 4}]},
            {"n": true, "v": [{"x": 5}, {"x": 6}]}, {"n": "d", "v": [{"x": 7}, {"x": 8}]}]"#;
        store.import(text, &ImportOptions::lenient()).unwrap();
        let expected = r#"[{"n":"a\"b","v":[{"x":1},{"x":2.5}]},{"n":"c","v":[{"x":3},{"x":4}]},{"n":true,"v":[{"x":5},{"x":6}]},{"n":"d","v":[{"x":7},{"x":8}]}]"#;
        assert_eq!(store.export_all(&ExportOptions::json()).unwrap(), expected);

        let mut plans = super::Plans::new();
        let mut tree = Tree::for_names(store.names(), true);
        let mut out = Vec::new();
        let mut planned = Vec::new();
        for (_, blob) in store.iter() {
            let layout = super::layout_words(blob);
            let hash = plans.hash(layout);
            let found = plans.write(hash, layout, blob, true, b",", &mut out);
            planned.push(found.is_some());
            if found.is_none() {
                tree.build(store.names(), blob);
                plans.write_and_record(&tree, (hash, layout), (false, 0), b",", &mut out);
            }
        }
        // The third entity's `n` is a bool: another layout.
        assert_eq!(planned, [false, true, false, true]);
        assert_eq!(plans.list.len(), 2);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            expected[1..expected.len() - 1].replace("},{\"n\"", "}{\"n\"")
        );
    }

    #[test]
    fn plans_stop_at_their_bounds_and_the_export_stays_the_same() {
        // More layouts than plans, then more misses than an export looks through, then
        // entities of one layout again.
        let different = super::MAX_PLANS + super::GIVE_UP_MISSES + 10;
        let mut entities: Vec<String> =
            (0..different).map(|i| format!(r#"{{"a": {i}, "k{i}": {{"x": "\"{i}"}}}}"#)).collect();
        entities.extend((0..10).map(|i| format!(r#"{{"a": {i}, "k0": {{"x": "{i}"}}}}"#)));
        let mut store = Store::new();
        store.import(&format!("[{}]", entities.join(",")), &ImportOptions::strict()).unwrap();
        for options in all_options() {
            let planned = store.export_all(&options).unwrap();
            assert_eq!(planned, export_all_by_trees(&store, options).unwrap());
            assert!(planned.ends_with(if options.is_pretty() {
                "{\n    \"a\": 9,\n    \"k0\": {\n      \"x\": \"9\"\n    }\n  }\n]"
            } else {
                r#"{"a":9,"k0":{"x":"9"}}]"#
            }));
        }

        let mut plans = super::Plans::new();
        let mut tree = Tree::for_names(store.names(), true);
        let mut out = Vec::new();
        for (i, (_, blob)) in store.iter().enumerate() {
            assert_eq!(plans.looking(), i < super::MAX_PLANS + super::GIVE_UP_MISSES, "{i}");
            if !plans.looking() {
                continue;
            }
            let layout = super::layout_words(blob);
            let hash = plans.hash(layout);
            if plans.write(hash, layout, blob, true, b",", &mut out).is_none() {
                tree.build(store.names(), blob);
                plans.write_and_record(&tree, (hash, layout), (false, 0), b",", &mut out);
            }
        }
        assert_eq!(plans.list.len(), super::MAX_PLANS);
        assert!(plans.bytes() <= super::MAX_PLAN_BYTES);
    }

    #[test]
    fn a_nan_in_a_planned_entity_is_refused_naming_the_first_in_key_order() {
        let mut store = Store::new();
        let ids = store
            .import(
                r#"[{"a": 1, "b": [1], "c": 2}, {"a": 1, "b": [1], "c": 2}]"#,
                &ImportOptions::strict(),
            )
            .unwrap()
            .ids;
        let mut second = store.get_mut(ids[1]).unwrap();
        second.set("c", f32::NAN).unwrap();
        second.set("b", [f32::INFINITY]).unwrap();
        let err = store.export_all(&ExportOptions::json()).unwrap_err();
        assert_eq!(err.to_string(), "entity 1v0t1: b is inf, which JSON has no number for");
        assert_eq!(
            store.export_all(&ExportOptions::json().non_finite_as_null()).unwrap(),
            r#"[{"a":1,"b":[1],"c":2},{"a":1,"b":[null],"c":null}]"#
        );
    }
}
