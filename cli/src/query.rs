//! `datacomp query`: the entities of a save file that pass a filter, read in place.

use std::io::Write;
use std::path::Path;

use datacomp::{Key, Query, StoreView};

use crate::args::parse_key;
use crate::files::read;
use crate::output::{Failure, Plain, value_json};

/// `datacomp query`: one row per entity that passes `filter`, its id and then the value of each
/// of `keys` (`-` in text, `null` in JSON, where it has none).
///
/// The file is validated and read in place (a `StoreView`): no store is built.
pub fn run(
    path: &Path,
    filter: &str,
    keys: &[String],
    json: bool,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let query = Query::parse(filter).map_err(|e| Failure::at("query", e))?;
    let keys: Vec<(Key, &str)> = keys
        .iter()
        .map(|text| parse_key(text).map(|arg| (arg.key(), text.as_str())))
        .collect::<Result<_, _>>()?;
    let bytes = read(path)?;
    let view = StoreView::new(&bytes).map_err(|e| Failure::at(path.display(), e))?;
    if !json {
        let header: Vec<&str> = std::iter::once("id").chain(keys.iter().map(|k| k.1)).collect();
        writeln!(out, "{}", header.join("\t"))?;
    }
    for (id, blob) in view.query(&query) {
        if json {
            let values: serde_json::Map<String, serde_json::Value> = keys
                .iter()
                .map(|&(key, text)| {
                    (text.to_owned(), blob.get(key).map_or(serde_json::Value::Null, value_json))
                })
                .collect();
            writeln!(out, "{}", serde_json::json!({ "id": id.to_string(), "keys": values }))?;
        } else {
            write!(out, "{id}")?;
            for &(key, _) in &keys {
                match blob.get(key) {
                    Some(value) => write!(out, "\t{}", Plain(value))?,
                    None => write!(out, "\t-")?,
                }
            }
            writeln!(out)?;
        }
    }
    Ok(())
}
