//! What the command prints: its one error type, the forms of sizes and values, and an
//! entity's entries and buffer as `inspect`, `get` and the demo show them.

use std::fmt::{self, Display};
use std::io::{self, Write};
use std::path::Path;

use datacomp::blob::RegionKind;
use datacomp::store::{ABSTRACT_KEY, ID_KEY};
use datacomp::text::JsonF32;
use datacomp::text::{Escaped, Shortened};
use datacomp::{BlobRef, Id, Key, Store, Value};
use serde::Serialize;
use serde::ser::Serializer;
use serde_json::json;

/// Why a command failed.
#[derive(Debug)]
pub enum Failure {
    /// One line for stderr: where, then what (`world.dcmp: file is 31 bytes, ...`); exit 1,
    /// the files said no.
    Message(String),
    /// One line for stderr, exit 2: the command line is wrong (an ID, KEY, VALUE or filter
    /// that does not read as one, options that do not go together), as clap's own errors.
    Usage(String),
    /// Stdout's reader went away; not worth a message.
    BrokenPipe,
}

impl Failure {
    /// A usage failure: exit code 2.
    pub fn usage(what: impl Display) -> Failure {
        Failure::Usage(what.to_string())
    }

    /// A failure at `place` (a path, an id): `place: what`, the place cut short if it is
    /// long.
    pub fn at(place: impl Display, what: impl Display) -> Failure {
        Failure::Message(format!("{}: {what}", Shortened(&place.to_string())))
    }
}

impl From<io::Error> for Failure {
    /// A failed write to stdout.
    fn from(e: io::Error) -> Failure {
        if e.kind() == io::ErrorKind::BrokenPipe {
            Failure::BrokenPipe
        } else {
            Failure::at("stdout", e)
        }
    }
}

/// `n` and the noun for it: `1 entity`, `2 entities`, `0 entities`.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The longest name [`did_you_mean`] compares: a longer one is no typo of a key name.
const SUGGEST_CHARS: usize = 64;

/// The candidate nearest `given` by edit distance (insertions, deletions, substitutions of
/// characters), if one is within a third of its length (at least 1), ties to the first. Each
/// candidate costs O(`SUGGEST_CHARS` x the distance allowed): a store of a million names is a
/// failure's fraction of a second.
pub fn did_you_mean(given: &str, candidates: impl IntoIterator<Item = String>) -> Option<String> {
    let given: Vec<char> = given.chars().collect();
    if given.is_empty() || given.len() > SUGGEST_CHARS {
        return None;
    }
    let mut best: Option<(usize, String)> = None;
    let mut row = Vec::with_capacity(SUGGEST_CHARS + 1);
    let mut prev = Vec::with_capacity(SUGGEST_CHARS + 1);
    let mut other = Vec::with_capacity(SUGGEST_CHARS + 1);
    for candidate in candidates {
        let allowed = best.as_ref().map_or((given.len() / 3).max(1), |(d, _)| d - 1);
        // A name has at most as many characters as bytes: one too short is passed over
        // before its characters are read.
        if candidate.len() + allowed < given.len() {
            continue;
        }
        other.clear();
        other.extend(candidate.chars().take(SUGGEST_CHARS + 1));
        if other.len() > SUGGEST_CHARS || other.len().abs_diff(given.len()) > allowed {
            continue;
        }
        // The two-row table; a row whose least entry passes `allowed` ends the comparison.
        prev.clear();
        prev.extend(0..=other.len());
        let mut within = true;
        for (i, &a) in given.iter().enumerate() {
            row.clear();
            row.push(i + 1);
            for (j, &b) in other.iter().enumerate() {
                let cost = usize::from(a != b);
                row.push((prev[j] + cost).min(prev[j + 1] + 1).min(row[j] + 1));
            }
            if row.iter().min().is_some_and(|&least| least > allowed) {
                within = false;
                break;
            }
            std::mem::swap(&mut row, &mut prev);
        }
        let distance = prev[other.len()];
        if within && distance <= allowed && distance > 0 {
            best = Some((distance, candidate));
            if distance == 1 {
                break;
            }
        }
    }
    best.map(|(_, name)| name)
}

/// ` (did you mean X?)` for the nearest of `candidates` to `given`, else nothing.
pub fn suggestion(given: &str, candidates: impl IntoIterator<Item = String>) -> String {
    did_you_mean(given, candidates)
        .map_or(String::new(), |name| format!(": did you mean {}?", Shortened(&name)))
}

/// Writes `value` as one line of JSON.
pub fn json_line(out: &mut dyn Write, value: &serde_json::Value) -> Result<(), Failure> {
    writeln!(out, "{value}")?;
    Ok(())
}

/// A path as a summary line shows it: control characters escaped, as in errors, since a file
/// may be named by someone else (`datacomp verify mods/*`).
pub fn shown(path: &Path) -> String {
    Escaped(&path.display().to_string()).to_string()
}

/// A byte count for people: `812 B`, `8.3 KiB`, `40.1 MiB`.
pub struct Bytes(pub usize);

impl Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
        if self.0 < 1024 {
            return write!(f, "{} B", self.0);
        }
        let mut size = self.0 as f64 / 1024.0;
        let mut unit = 0;
        while size >= 1024.0 && unit + 1 < UNITS.len() {
            size /= 1024.0;
            unit += 1;
        }
        write!(f, "{size:.1} {}", UNITS[unit])
    }
}

/// A value as the command prints it: a float as JSON export writes it ([`JsonF32`]: `95`, `0.1`,
/// `1e+20`; a NaN or infinity as `NaN`, `inf`, `-inf`), a string as it is but for control
/// characters, which are escaped ([`Escaped`]), an array as `[1, 2.5]`, a null as `null`.
pub struct Plain<'a>(pub Value<'a>);

impl Display for Plain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Float(x) => JsonF32(x).fmt(f),
            Value::Str(s) => Escaped(s).fmt(f),
            Value::Null => f.write_str("null"),
            // A key removed from what an instance inherits (`get --own`, `inspect`).
            Value::Tombstone => f.write_str("(removed)"),
            Value::Floats(xs) => {
                f.write_str("[")?;
                for (i, x) in xs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    JsonF32(*x).fmt(f)?;
                }
                f.write_str("]")
            }
        }
    }
}

/// A value as JSON, floats in their shortest `f32` form (`0.1`, not `0.10000000149011612`) and
/// whole ones as integers (`95`, not `95.0`). JSON has no NaN or infinity: those are `null`.
pub fn value_json(value: Value<'_>) -> serde_json::Value {
    match value {
        Value::Bool(b) => b.into(),
        Value::Float(x) => float_json(x),
        Value::Str(s) => s.into(),
        // Its type, `tombstone`, says what it is.
        Value::Null | Value::Tombstone => serde_json::Value::Null,
        Value::Floats(xs) => xs.iter().map(|&x| float_json(x)).collect(),
    }
}

fn float_json(x: f32) -> serde_json::Value {
    // `x`'s shortest decimal, read as an f64, is the f64 nearest it: printed back, that is the
    // same short decimal. A whole one goes in as an integer, since serde_json prints some
    // whole f64s with a fraction (`10000000000000.0`).
    let Ok(wide) = JsonF32(x).to_string().parse::<f64>() else {
        return serde_json::Value::Null;
    };
    if wide.fract() == 0.0 && wide.abs() < 9e18 && !(wide == 0.0 && wide.is_sign_negative()) {
        return serde_json::Value::from(wide as i64);
    }
    serde_json::Number::from_f64(wide).map_or(serde_json::Value::Null, serde_json::Value::Number)
}

/// A key as the first store that names it shows it ([`Store::key_label`]: dotted where that
/// reads back as the key, else its JSON Pointer), else its hash (`#1a2b3c4d`).
pub fn key_name(stores: &[&Store], key: Key) -> String {
    stores
        .iter()
        .find(|s| s.key_name(key).is_some())
        .map_or_else(|| key.to_string(), |s| s.key_label(key).into_owned())
}

/// A ratio as a percentage with one decimal; 0 of 0 is 0.
pub fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 { 0.0 } else { 100.0 * part as f64 / whole as f64 }
}

/// The widest the key column of [`print_entries`] grows: a longer name runs past it (and a
/// width from the input could pass what `format!` allows).
const KEY_COLUMN: usize = 40;

/// One line per entry: name, type, value.
pub fn print_entries(store: &Store, blob: BlobRef<'_>, out: &mut dyn Write) -> Result<(), Failure> {
    // Cut like error messages: a name may be a long path, and M keys under one long prefix
    // would print it M times (a 160 KB save printed 325 MB and took as much memory).
    let names: Vec<String> =
        blob.keys().map(|key| Shortened(&key_name(&[store], key)).to_string()).collect();
    let width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0).clamp(3, KEY_COLUMN);
    // "tombstone" is the one type name longer than six.
    let types = blob.iter().map(|(_, v)| v.value_type().name().len()).max().unwrap_or(0).max(6);
    writeln!(out, "  {:<width$}  {:<types$}  value", "key", "type")?;
    for (name, (_, value)) in names.iter().zip(blob.iter()) {
        let ty = value.value_type().name();
        writeln!(out, "  {name:<width$}  {ty:<types$}  {}", Plain(value))?;
    }
    Ok(())
}

/// How the entity `id` is shown where it lends values: its `$id` (cut, as error messages cut
/// names, so that a line stays short), else its handle.
pub fn prototype_name(store: &Store, id: Id) -> String {
    store
        .get(id)
        .and_then(|blob| blob.get_str(ID_KEY))
        .map_or_else(|| id.to_string(), |name| Shortened(name).to_string())
}

/// Whether `blob` marks an abstract entity (`"$abstract": true`, its own): a prototype that
/// listings leave out.
pub fn is_abstract(blob: BlobRef<'_>) -> bool {
    blob.get_bool(ABSTRACT_KEY) == Some(true)
}

/// One line per key the entity `id` reads through its prototypes: name, type, value, and,
/// for an inherited one, where it comes from (`(from orc)`).
pub fn print_resolved(store: &Store, id: Id, out: &mut dyn Write) -> Result<(), Failure> {
    let Some(resolved) = store.resolved(id) else { return Ok(()) };
    let entries: Vec<(Key, Value<'_>, Id)> = resolved.iter().collect();
    let names: Vec<String> = entries
        .iter()
        .map(|&(key, _, _)| Shortened(&key_name(&[store], key)).to_string())
        .collect();
    let width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0).clamp(3, KEY_COLUMN);
    writeln!(out, "  {:<width$}  {:<6}  value", "key", "type")?;
    // A prototype's name, looked up once a prototype (a chain has at most 16).
    let mut labels: Vec<(Id, String)> = Vec::new();
    for (name, &(_, value, from)) in names.iter().zip(&entries) {
        write!(out, "  {name:<width$}  {:<6}  {}", value.value_type().name(), Plain(value))?;
        if from != id {
            if !labels.iter().any(|(at, _)| *at == from) {
                labels.push((from, prototype_name(store, from)));
            }
            let label = labels.iter().find(|(at, _)| *at == from).map_or("", |(_, l)| l);
            write!(out, "  (from {label})")?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// The keys the entity `id` reads through its prototypes, as a JSON array of `{key, hash,
/// type, value, from}` (`from`: the entity whose blob holds it), made as it is written.
pub fn resolved_json(store: &Store, id: Id) -> impl Serialize + '_ {
    JsonArray(move || {
        let read = store.resolved(id).into_iter().flat_map(|r| r.iter());
        read.map(move |(key, value, from)| {
            json!({
                "key": key_name(&[store], key),
                "hash": key.to_string(),
                "type": value.value_type().name(),
                "value": value_json(value),
                "from": from.to_string(),
            })
        })
    })
}

/// The entries as a JSON array of `{key, hash, type, value}`, made as it is written: one
/// entry's JSON at a time (the whole array as a `serde_json::Value` took 1.8 GB and 9 s for
/// an entity of a million keys).
pub fn entries_json<'a>(store: &'a Store, blob: BlobRef<'a>) -> impl Serialize + 'a {
    JsonArray(move || {
        blob.iter().map(move |(key, value)| {
            json!({
                "key": key_name(&[store], key),
                "hash": key.to_string(),
                "type": value.value_type().name(),
                "value": value_json(value),
            })
        })
    })
}

/// A JSON array of what a fresh iterator from the closure gives, serialized as it goes.
pub struct JsonArray<F>(pub F);

impl<F, I> Serialize for JsonArray<F>
where
    F: Fn() -> I,
    I: Iterator,
    I::Item: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq((self.0)())
    }
}

/// Writes one member's value of [`write_object`] as JSON.
pub type WriteMember<'a> = &'a dyn Fn(&mut dyn Write) -> serde_json::Result<()>;

/// Writes a compact JSON object of these members, in this order (give them in name order to
/// match a `serde_json` object), each value serialized as it is written.
pub fn write_object(
    out: &mut dyn Write,
    members: &[(&str, WriteMember<'_>)],
) -> Result<(), Failure> {
    out.write_all(b"{")?;
    for (i, (name, write)) in members.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        serde_json::to_writer(&mut *out, name).map_err(io::Error::from)?;
        out.write_all(b":")?;
        write(&mut *out).map_err(io::Error::from)?;
    }
    out.write_all(b"}")?;
    Ok(())
}

/// A member value for [`write_object`]: `value` serialized.
pub fn member<T: Serialize>(value: &T) -> impl Fn(&mut dyn Write) -> serde_json::Result<()> + '_ {
    move |out| serde_json::to_writer(out, value)
}

/// Cells of the buffer diagram.
const WIDTH: usize = 64;
/// Labels of payload blocks in the diagram, in address order (then they repeat).
const LABELS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";

/// The blob's buffer drawn to scale: `H` header, `.` free, a letter for each payload block,
/// `_` holes; then a legend.
pub fn print_buffer(store: &Store, blob: BlobRef<'_>, out: &mut dyn Write) -> Result<(), Failure> {
    let len = blob.byte_len();
    let cell = |byte: usize| (byte * WIDTH + len / 2) / len;
    let mut bar = String::with_capacity(WIDTH + 8);
    let mut legend = Vec::new();
    let mut next_label = 0;
    for (kind, offset, bytes) in blob.regions() {
        // Every region shows, however small.
        let cells = (cell(offset + bytes) - cell(offset)).max(1);
        let label = match kind {
            RegionKind::Header => 'H',
            RegionKind::Free => '.',
            RegionKind::Hole => '_',
            RegionKind::Payload(key) => {
                let label = char::from(LABELS[next_label % LABELS.len()]);
                next_label += 1;
                legend.push(format!("{label} {} ({bytes} B)", Escaped(&key_name(&[store], key))));
                label
            }
        };
        bar.extend(std::iter::repeat_n(label, cells));
    }
    writeln!(out, "buffer, {len} bytes, to scale:")?;
    writeln!(out, "  |{bar}|")?;
    writeln!(
        out,
        "  H header {} B, . free {} B, payload {} B (_ holes {} B)",
        blob.header_bytes(),
        blob.free_bytes(),
        blob.payload_bytes(),
        blob.hole_bytes()
    )?;
    for chunk in legend.chunks(4) {
        writeln!(out, "  {}", chunk.join("   "))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        let shown: Vec<String> =
            [0, 1023, 1024, 8_500, 42_000_000].iter().map(|&n| Bytes(n).to_string()).collect();
        assert_eq!(shown, ["0 B", "1023 B", "1.0 KiB", "8.3 KiB", "40.1 MiB"]);
    }

    #[test]
    fn plurals_agree_with_their_numbers() {
        assert_eq!(plural(1, "entity", "entities"), "1 entity");
        assert_eq!(plural(0, "entity", "entities"), "0 entities");
        assert_eq!(plural(2, "key", "keys"), "2 keys");
    }

    #[test]
    fn the_nearest_name_within_a_third_is_suggested() {
        let names = || ["stats.health", "stats.mana", "name"].map(String::from);
        assert_eq!(did_you_mean("stats.helth", names()).as_deref(), Some("stats.health"));
        assert_eq!(did_you_mean("stats.mama", names()).as_deref(), Some("stats.mana"));
        assert_eq!(did_you_mean("nane", names()).as_deref(), Some("name"));
        // Too far, the same name, nothing given, or past the length compared: no suggestion.
        assert_eq!(did_you_mean("armor", names()), None);
        assert_eq!(did_you_mean("name", names()), None);
        assert_eq!(did_you_mean("", names()), None);
        assert_eq!(did_you_mean(&"a".repeat(65), ["a".repeat(64)]), None);
        assert_eq!(suggestion("stats.helth", names()), ": did you mean stats.health?");
        assert_eq!(suggestion("xyz", names()), "");
    }

    #[test]
    fn floats_print_short_in_text_and_json() {
        assert_eq!(Plain(Value::Float(0.1)).to_string(), "0.1");
        assert_eq!(Plain(Value::Float(95.0)).to_string(), "95");
        assert_eq!(Plain(Value::Floats(&[1.0, -2.5])).to_string(), "[1, -2.5]");
        assert_eq!(Plain(Value::Str("a b")).to_string(), "a b");
        assert_eq!(Plain(Value::Null).to_string(), "null");
        assert_eq!(value_json(Value::Null).to_string(), "null");
        assert_eq!(Plain(Value::Str("\u{1b}[2J\n")).to_string(), "\\u{1b}[2J\\n");
        assert_eq!(value_json(Value::Float(0.1)).to_string(), "0.1");
        assert_eq!(value_json(Value::Floats(&[0.1, f32::NAN])).to_string(), "[0.1,null]");
        assert_eq!(value_json(Value::Float(f32::MAX)).to_string(), "3.4028235e+38");
        let whole = [95.0, -3.0, 123_456_792.0, 1e13, 1e20, -0.0];
        let json: Vec<String> =
            whole.iter().map(|&x| value_json(Value::Float(x)).to_string()).collect();
        assert_eq!(json, ["95", "-3", "123456790", "10000000000000", "1e+20", "-0.0"]);
        let plain: Vec<String> =
            whole.iter().map(|&x| Plain(Value::Float(x)).to_string()).collect();
        assert_eq!(plain, ["95", "-3", "123456790", "1e+13", "1e+20", "-0.0"]);
        assert_eq!(Plain(Value::Floats(&[f32::NAN, f32::INFINITY])).to_string(), "[NaN, inf]");
    }
}
