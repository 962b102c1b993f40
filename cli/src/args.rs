//! The command's argument types and how it reads them: entity ids, keys, values, and the
//! enumerations of `--format`, `--prefer` and `--type`.

use std::path::Path;

use clap::ValueEnum;
use datacomp::blob::Side;
use datacomp::text::JsonErrorKind;
use datacomp::text::JsonF32;
use datacomp::text::Shortened;
use datacomp::{Id, Key, KeyError, KeyPath, OwnedValue, Store};

use crate::output::Failure;

/// The text formats, as `import --format` and `export --format` name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Json,
    Sjson,
}

impl FormatArg {
    /// The format of `file`: `given`, else SJSON for a file named `*.sjson` and JSON for any
    /// other (as both `import` and `export -o` read a name).
    pub fn of(file: &Path, given: Option<FormatArg>) -> FormatArg {
        match given {
            Some(format) => format,
            None if file.extension().is_some_and(|ext| ext == "sjson") => FormatArg::Sjson,
            None => FormatArg::Json,
        }
    }
}

/// The sides of a merge, as `merge --prefer` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PreferArg {
    Ours,
    Theirs,
}

impl From<PreferArg> for Side {
    fn from(prefer: PreferArg) -> Side {
        match prefer {
            PreferArg::Ours => Side::Ours,
            PreferArg::Theirs => Side::Theirs,
        }
    }
}

/// The value types, as `set --type` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TypeArg {
    Bool,
    Float,
    Str,
    Floats,
    /// `null` (the value text must be `null`).
    Null,
}

/// An entity id as `Id`'s `Display` writes it (`0v0t1`); `example` is one from the file, for
/// the message of a usage failure.
pub fn parse_id(text: &str, example: Option<Id>) -> Result<Id, Failure> {
    text.parse::<Id>().map_err(|e| {
        let example = example.map_or("0v0t1".to_owned(), |id| id.to_string());
        Failure::usage(format!("bad entity id: {e} (ids look like {example}: see datacomp list)"))
    })
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
    pub fn check(&self, store: &Store, path: &Path) -> Result<Key, Failure> {
        match self {
            KeyArg::Path(key) => store.check_key(key).map_err(|e| Failure::at(path.display(), e)),
            KeyArg::Raw(key) => Ok(*key),
        }
    }
}

/// A dotted path (`stats.health`), a JSON Pointer (`/a.b/c`) or a raw hash (`#1a2b3c4d`).
pub fn parse_key(text: &str) -> Result<KeyArg<'_>, Failure> {
    // The library's reading of a key; the text is kept so that its name can be checked.
    let key: Key = text.parse().map_err(|e: KeyError| Failure::usage(e))?;
    if text.starts_with('#') {
        return Ok(KeyArg::Raw(key));
    }
    Ok(KeyArg::Path(KeyPath::pointer(text).unwrap_or_else(|| KeyPath::dotted(text))))
}

/// The value `text` means, as `set` reads it: with `ty`, that type; without, `true`/`false`
/// is a bool, `null` a null, a number a float, `[...]` an array of floats, and anything else a
/// string.
pub fn parse_value(text: &str, ty: Option<TypeArg>) -> Result<OwnedValue, Failure> {
    let bad = |what: &str| Failure::usage(format!("bad value \"{}\": {what}", Shortened(text)));
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
        Some(TypeArg::Null) => match text {
            "null" => OwnedValue::Null,
            _ => return Err(bad("a null is written null")),
        },
        None => match text {
            "true" => OwnedValue::Bool(true),
            "false" => OwnedValue::Bool(false),
            "null" => OwnedValue::Null,
            _ if text.trim_start().starts_with('[') => OwnedValue::Floats(floats(text)?),
            // A number is written as JSON writes one: "inf", "NaN" and "+1" are not numbers.
            _ if !matches!(text.trim().parse::<JsonF32>(), Err(JsonErrorKind::Syntax(_))) => {
                OwnedValue::Float(number(text)?)
            }
            _ => OwnedValue::Str(text.to_owned()),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(failure: Failure) -> String {
        match failure {
            Failure::Usage(m) => format!("usage: {m}"),
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
            "usage: bad key \"#12\": a raw key is # and 8 hex digits, as in #1a2b3c4d"
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
        assert_eq!(infer("null"), OwnedValue::Null);
        assert_eq!(infer("inf"), OwnedValue::Str("inf".into()));
        assert_eq!(infer("NaN"), OwnedValue::Str("NaN".into()));
        assert_eq!(infer("+1"), OwnedValue::Str("+1".into()));
        assert_eq!(infer("123456790"), OwnedValue::Float(123_456_792.0));
        assert_eq!(infer("-0"), OwnedValue::Float(-0.0));
        assert_eq!(
            message(parse_value("16777217", None).unwrap_err()),
            "usage: bad value \"16777217\": 16777217 would be stored as 16777216: f32 cannot hold it"
        );
        assert_eq!(
            message(parse_value("[1, 1e-50]", None).unwrap_err()),
            "usage: bad value \"[1, 1e-50]\": 1e-50 would be stored as 0: f32 cannot hold it"
        );
        assert_eq!(infer(""), OwnedValue::Str(String::new()));
        assert_eq!(
            message(parse_value("1e39", None).unwrap_err()),
            "usage: bad value \"1e39\": past the range of f32"
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
        assert_eq!(typed("null", TypeArg::Null).unwrap(), OwnedValue::Null);
        assert_eq!(typed("null", TypeArg::Str).unwrap(), OwnedValue::Str("null".into()));
        assert!(typed("0", TypeArg::Null).is_err());
        assert_eq!(
            message(typed("yes", TypeArg::Bool).unwrap_err()),
            "usage: bad value \"yes\": a bool is true or false"
        );
        assert!(typed("abc", TypeArg::Float).is_err());
        assert!(typed("inf", TypeArg::Float).is_err());
    }
}
