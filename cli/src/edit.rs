//! `get`, `set` and `rm`, and how the command reads IDs, keys and values.

use std::io::Write;
use std::path::Path;

use datacomp::text::{Escaped, Shortened};
use datacomp::{
    BlobRef, Error, ExportError, Id, JsonErrorKind, JsonF32, JsonStyle, Key, KeyPath, OwnedValue,
    ParseKeyError, Store,
};

use crate::TypeArg;
use crate::files::{entity, load, lock_and_load, save};
use crate::inspect::{entries_json, print_entries};
use crate::output::{Failure, Plain, value_json};

/// An entity id as `Id`'s `Display` writes it (`0v0t1`).
pub fn parse_id(text: &str) -> Result<Id, Failure> {
    text.parse::<Id>().map_err(|e| Failure::Message(format!("bad entity id: {e}")))
}

/// A key as the command line gives it: a path, whose name the store's names are checked
/// against (and a write records), or a raw hash.
#[derive(Debug, PartialEq, Eq)]
pub enum KeyArg<'a> {
    /// A dotted path (`stats.health`) or a JSON Pointer (`/a.b/c`).
    Path(KeyPath<'a>),
    /// A raw hash (`#1a2b3c4d`): the caller's choice of key, checked against no name.
    Raw(Key),
}

impl KeyArg<'_> {
    /// The key, unchecked: for reads that have no name table to check it against.
    pub fn key(&self) -> Key {
        match self {
            KeyArg::Path(path) => path.key(),
            KeyArg::Raw(key) => *key,
        }
    }

    /// The key, if `store` does not record its hash under another name.
    fn check(&self, store: &Store, path: &Path) -> Result<Key, Failure> {
        match self {
            KeyArg::Path(key) => store.check_key(key).map_err(|e| Failure::at(path.display(), e)),
            KeyArg::Raw(key) => Ok(*key),
        }
    }
}

/// A dotted path (`stats.health`), a JSON Pointer (`/a.b/c`) or a raw hash (`#1a2b3c4d`).
pub fn parse_key(text: &str) -> Result<KeyArg<'_>, Failure> {
    // The library's reading of a key; the text is kept so that its name can be checked.
    let key: Key = text.parse().map_err(|e: ParseKeyError| Failure::Message(e.to_string()))?;
    if text.starts_with('#') {
        return Ok(KeyArg::Raw(key));
    }
    Ok(KeyArg::Path(KeyPath::pointer(text).unwrap_or_else(|| KeyPath::dotted(text))))
}

/// Keys under an object's path that a "no such key" message lists before "and N more".
const LISTED_KEYS: usize = 10;

/// Why entity `id` (`blob`) has no key `given`: names the keys under it (the first few), if
/// it is an object's path. Long names are cut, so the message stays one short line.
fn no_such_key(store: &Store, blob: BlobRef<'_>, id: Id, given: &str) -> String {
    let prefix = format!("{given}.");
    let under: Vec<_> = blob
        .keys()
        .filter(|&key| store.key_name(key).is_some_and(|name| name.starts_with(&prefix)))
        .map(|key| store.key_label(key))
        .collect();
    let given = Shortened(given);
    if under.is_empty() {
        return format!("entity {id} has no key {given}");
    }
    let listed: Vec<String> =
        under.iter().take(LISTED_KEYS).map(|name| Shortened(name).to_string()).collect();
    let more = match under.len().saturating_sub(LISTED_KEYS) {
        0 => String::new(),
        more => format!(" and {more} more"),
    };
    format!("entity {id} has no key {given}; it has {}{more}", listed.join(", "))
}

/// `datacomp get`.
pub fn get(
    path: &Path,
    id: &str,
    key: Option<&str>,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let store = load(path)?;
    let (id, blob) = entity(&store, path, id)?;
    let Some(given) = key else {
        if json {
            let entries = entries_json(&store, blob);
            writeln!(out, "{}", serde_json::json!({ "id": id.to_string(), "entries": entries }))?;
        } else {
            print_entries(&store, blob, out)?;
        }
        return Ok(());
    };
    let arg = parse_key(given)?;
    let key = arg.check(&store, path)?;
    let Some(value) = blob.get(key) else {
        // An object's path: the keys under it, as JSON (as jq prints a member).
        let style = if json { JsonStyle::Compact } else { JsonStyle::Pretty };
        let subtree = match &arg {
            KeyArg::Path(at) => store.try_export_json_at(id, at, style),
            KeyArg::Raw(_) => Err(ExportError::NoPath { entity: Some(id), path: given.into() }),
        };
        return match subtree {
            // The export's own text: numbers as export writes them, members in their order.
            Ok(text) if json => Ok(writeln!(
                out,
                "{{\"id\":{},\"key\":{},\"type\":\"object\",\"value\":{text}}}",
                serde_json::Value::from(id.to_string()),
                serde_json::Value::from(given),
            )?),
            Ok(text) => Ok(writeln!(out, "{text}")?),
            Err(ExportError::NoPath { .. }) => {
                Err(Failure::at(path.display(), no_such_key(&store, blob, id, given)))
            }
            Err(e) => Err(Failure::at(path.display(), e)),
        };
    };
    if json {
        let line = serde_json::json!({
            "id": id.to_string(),
            "key": store.key_label(key),
            "hash": key.to_string(),
            "type": value.value_type().name(),
            "value": value_json(value),
        });
        writeln!(out, "{line}")?;
    } else {
        writeln!(out, "{}", Plain(value))?;
    }
    Ok(())
}

/// The value `text` means, as `set` reads it: with `ty`, that type; without, `true`/`false`
/// is a bool, a number a float, `[...]` an array of floats, and anything else a string.
pub fn parse_value(text: &str, ty: Option<TypeArg>) -> Result<OwnedValue, Failure> {
    let bad = |what: &str| Failure::Message(format!("bad value \"{}\": {what}", Shortened(text)));
    // A number as strict import reads one: JSON's form, refused if f32 would change it.
    let number = |text: &str| -> Result<f32, Failure> {
        match text.trim().parse::<JsonF32>() {
            Ok(JsonF32(x)) => Ok(x),
            Err(JsonErrorKind::Syntax(_)) => Err(bad("not a number")),
            Err(JsonErrorKind::NumberOutOfRange(_)) => Err(bad("past the range of f32")),
            Err(e) => Err(bad(&e.to_string())),
        }
    };
    let floats = |text: &str| -> Result<Vec<f32>, Failure> {
        let inner = text.trim().strip_prefix('[').and_then(|t| t.strip_suffix(']'));
        let inner = inner.unwrap_or(text).trim();
        if inner.is_empty() {
            return Ok(Vec::new());
        }
        inner.split(',').map(number).collect()
    };
    Ok(match ty {
        Some(TypeArg::Bool) => match text {
            "true" => OwnedValue::Bool(true),
            "false" => OwnedValue::Bool(false),
            _ => return Err(bad("a bool is true or false")),
        },
        Some(TypeArg::Float) => OwnedValue::Float(number(text)?),
        Some(TypeArg::Str) => OwnedValue::Str(text.to_owned()),
        Some(TypeArg::Floats) => OwnedValue::Floats(floats(text)?),
        None => match text {
            "true" => OwnedValue::Bool(true),
            "false" => OwnedValue::Bool(false),
            _ if text.trim_start().starts_with('[') => OwnedValue::Floats(floats(text)?),
            // A number is written as JSON writes one: "inf", "NaN" and "+1" are not numbers.
            _ if !matches!(text.trim().parse::<JsonF32>(), Err(JsonErrorKind::Syntax(_))) => {
                OwnedValue::Float(number(text)?)
            }
            _ => OwnedValue::Str(text.to_owned()),
        },
    })
}

/// `datacomp set`.
pub fn set(
    path: &Path,
    id: &str,
    key: &str,
    value: &str,
    ty: Option<TypeArg>,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let (file, mut store) = lock_and_load(path)?;
    let (id, blob) = entity(&store, path, id)?;
    let arg = parse_key(key)?;
    let parsed = arg.check(&store, path)?;
    let value = parse_value(value, ty)?;
    let old = blob.get(parsed).map(|v| Plain(v).to_string());
    let mut blob = store.try_get_mut(id).map_err(|e| Failure::at(path.display(), e))?;
    // A path's name is recorded with the value, or neither is.
    match arg {
        KeyArg::Path(key) => blob.try_set(key, &value),
        KeyArg::Raw(key) => blob.try_set(key, &value),
    }
    .map_err(|e| match e {
        Error::PathConflict(e) => Failure::at(path.display(), format!("entity {id}: {e}")),
        e => Failure::at(path.display(), e),
    })?;
    let label = Escaped(&store.key_label(parsed)).to_string();
    save(&file, &mut store, path)?;
    let new = Plain(value.as_value());
    match old {
        Some(old) => writeln!(out, "{id} {label}: {old} -> {new}")?,
        None => writeln!(out, "{id} {label}: {new} (new key)")?,
    }
    Ok(())
}

/// `datacomp rm`.
pub fn rm(path: &Path, id: &str, key: Option<&str>, out: &mut dyn Write) -> Result<(), Failure> {
    let (file, mut store) = lock_and_load(path)?;
    let (id, blob) = entity(&store, path, id)?;
    match key {
        Some(given) => {
            let key = parse_key(given)?.check(&store, path)?;
            if !blob.contains_key(key) {
                return Err(Failure::at(path.display(), no_such_key(&store, blob, id, given)));
            }
            let label = Escaped(&store.key_label(key)).to_string();
            store.try_get_mut(id).map_err(|e| Failure::at(path.display(), e))?.remove(key);
            save(&file, &mut store, path)?;
            writeln!(out, "{id}: removed {label}")?;
        }
        None => {
            store.remove(id);
            save(&file, &mut store, path)?;
            writeln!(out, "removed entity {id}; {} left", store.len())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(failure: Failure) -> String {
        match failure {
            Failure::Message(m) => m,
            Failure::BrokenPipe => "broken pipe".into(),
        }
    }

    #[test]
    fn keys_are_paths_pointers_or_hashes() {
        assert_eq!(
            parse_key("stats.health").unwrap(),
            KeyArg::Path(KeyPath::dotted("stats.health"))
        );
        let KeyArg::Path(pointer) = parse_key("/a.b/c~1d").unwrap() else { panic!("a path") };
        assert_eq!(pointer.key(), Key::path(&["a.b", "c/d"]));
        assert_eq!(parse_key("#674cf0ce").unwrap(), KeyArg::Raw(Key::from_raw(0x674c_f0ce)));
        for bad in ["", "#674cf0c", "#674cf0cez", "#xyzxyzxy", "#+74cf0ce"] {
            assert!(parse_key(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            message(parse_key("#12").unwrap_err()),
            "bad key \"#12\": a raw key is # and 8 hex digits, as in #1a2b3c4d"
        );
    }

    #[test]
    fn values_take_their_type_from_their_text() {
        let infer = |text| parse_value(text, None).unwrap();
        assert_eq!(infer("true"), OwnedValue::Bool(true));
        assert_eq!(infer("95"), OwnedValue::Float(95.0));
        assert_eq!(infer("-0.5e1"), OwnedValue::Float(-5.0));
        assert_eq!(infer("[1, 2.5]"), OwnedValue::Floats(vec![1.0, 2.5]));
        assert_eq!(infer("[]"), OwnedValue::Floats(vec![]));
        assert_eq!(infer("The One"), OwnedValue::Str("The One".into()));
        assert_eq!(infer("inf"), OwnedValue::Str("inf".into()));
        assert_eq!(infer("NaN"), OwnedValue::Str("NaN".into()));
        assert_eq!(infer("+1"), OwnedValue::Str("+1".into()));
        assert_eq!(infer("123456790"), OwnedValue::Float(123_456_792.0));
        assert_eq!(infer("-0"), OwnedValue::Float(-0.0));
        assert_eq!(
            message(parse_value("16777217", None).unwrap_err()),
            "bad value \"16777217\": 16777217 would be stored as 16777216: f32 cannot hold it"
        );
        assert_eq!(
            message(parse_value("[1, 1e-50]", None).unwrap_err()),
            "bad value \"[1, 1e-50]\": 1e-50 would be stored as 0: f32 cannot hold it"
        );
        assert_eq!(infer(""), OwnedValue::Str(String::new()));
        assert_eq!(
            message(parse_value("1e39", None).unwrap_err()),
            "bad value \"1e39\": past the range of f32"
        );
        assert!(parse_value("[1, x]", None).is_err());
    }

    #[test]
    fn a_type_given_is_the_type_stored() {
        let typed = |text, ty| parse_value(text, Some(ty));
        assert_eq!(typed("95", TypeArg::Str).unwrap(), OwnedValue::Str("95".into()));
        assert_eq!(typed("1,2", TypeArg::Floats).unwrap(), OwnedValue::Floats(vec![1.0, 2.0]));
        assert_eq!(typed("", TypeArg::Floats).unwrap(), OwnedValue::Floats(vec![]));
        assert_eq!(typed("3", TypeArg::Float).unwrap(), OwnedValue::Float(3.0));
        assert_eq!(
            message(typed("yes", TypeArg::Bool).unwrap_err()),
            "bad value \"yes\": a bool is true or false"
        );
        assert!(typed("abc", TypeArg::Float).is_err());
        assert!(typed("inf", TypeArg::Float).is_err());
    }
}
