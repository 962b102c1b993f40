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

use std::hash::{Hash, Hasher};
use std::ops::Range;

use fxhash::{FxHashMap, FxHasher64};

use crate::blob::layout;
use crate::json::{NO_NODE, Tree, write_value};
use crate::{BlobRef, Value};

/// Most plans an export keeps.
pub(crate) const MAX_PLANS: usize = 4096;
/// Most bytes the plans of an export hold (layouts, text and steps).
pub(crate) const MAX_PLAN_BYTES: usize = 4 << 20;

/// One layout's plan: ranges of [`Plans`]'s shared buffers.
struct Plan {
    layout: Range<usize>,
    text: Range<usize>,
    steps: Range<usize>,
}

/// The plans of one export, by layout.
#[derive(Default)]
pub(crate) struct Plans {
    /// Plan number by the hash of its layout. A layout whose hash another holds is not kept.
    by_layout: FxHashMap<u64, u32>,
    list: Vec<Plan>,
    /// Every plan's layout words, back to back.
    layouts: Vec<u32>,
    /// Every plan's text, back to back.
    text: Vec<u8>,
    // INVARIANT: for each plan, its steps' text ends are ascending offsets into its own text
    // (from the start of its range), at most its length.
    /// Every plan's steps, back to back: where the text before a value ends (in the plan's
    /// text) and the value's blob entry.
    steps: Vec<(u32, u32)>,
    /// Scratch of a recording: where each value went in the output, and its entry.
    spans: Vec<(usize, usize, u32)>,
}

/// The words of `blob` that fix its layout: its key array and tag array (their length fixes
/// the key count).
pub(crate) fn layout_words(blob: BlobRef<'_>) -> &[u32] {
    layout::layout_words(blob.as_words())
}

/// The hash a layout is found by.
pub(crate) fn layout_hash(layout: &[u32]) -> u64 {
    let mut hasher = FxHasher64::default();
    layout.hash(&mut hasher);
    hasher.finish()
}

/// A value of a planned entity that JSON has no number for: the export stops there.
pub(crate) struct NotFinite;

impl Plans {
    /// Writes `blob` from the plan of `layout` (hashed `hash`), if there is one: `Some(Ok)`
    /// when written, `Some(Err)` when `checked` and a value is a NaN or infinity (the output
    /// is then partly written), `None` when there is no plan for the layout.
    pub(crate) fn write(
        &self,
        hash: u64,
        layout: &[u32],
        blob: BlobRef<'_>,
        checked: bool,
        separator: &[u8],
        out: &mut Vec<u8>,
    ) -> Option<Result<(), NotFinite>> {
        let plan = &self.list[*self.by_layout.get(&hash)? as usize];
        if self.layouts[plan.layout.clone()] != *layout {
            return None;
        }
        let words = blob.as_words();
        let text = &self.text[plan.text.clone()];
        let mut at = 0;
        for &(end, entry) in &self.steps[plan.steps.clone()] {
            out.extend_from_slice(&text[at..end as usize]);
            at = end as usize;
            // The same layout: entry `entry` exists and has the type the plan was made for.
            let value = layout::entry(words, entry as usize);
            if checked && !finite(value) {
                return Some(Err(NotFinite));
            }
            write_value(out, value, separator);
        }
        out.extend_from_slice(&text[at..]);
        Some(Ok(()))
    }

    /// Whether another plan may be made.
    fn room(&self) -> bool {
        self.list.len() < MAX_PLANS && self.bytes() < MAX_PLAN_BYTES
    }

    /// Bytes the plans hold.
    fn bytes(&self) -> usize {
        self.layouts.len() * 4 + self.text.len() + self.steps.len() * 8
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
        if !self.room() || self.by_layout.contains_key(&hash) {
            tree.write(pretty, depth, out);
            return;
        }
        let start = out.len();
        let mut spans = std::mem::take(&mut self.spans);
        spans.clear();
        tree.write_with(pretty, depth, out, |out, node, value| {
            let at = out.len();
            write_value(out, value, separator);
            spans.push((at, out.len(), node.entry));
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
        spans: &[(usize, usize, u32)],
    ) {
        let values: usize = spans.iter().map(|&(from, to, _)| to - from).sum();
        let text_len = out.len() - start - values;
        let bytes = layout.len() * 4 + text_len + spans.len() * 8;
        // Every leaf of a tree that `export_tree` built is an entry; steps hold u32 offsets.
        let usable = spans.iter().all(|&(.., entry)| entry != NO_NODE)
            && u32::try_from(text_len).is_ok()
            && self.bytes() + bytes <= MAX_PLAN_BYTES;
        if !usable {
            return;
        }
        let text_start = self.text.len();
        let steps_start = self.steps.len();
        let mut at = start;
        for &(from, to, entry) in spans {
            self.text.extend_from_slice(&out[at..from]);
            self.steps.push(((self.text.len() - text_start) as u32, entry));
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
    crate::json::check_finite(value).is_ok()
}
