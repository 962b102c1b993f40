//! `upgrade`: a save of an older key hash rewritten with this build's.

use std::io::Write;
use std::path::Path;

use datacomp::format::StoreError;
use datacomp::{LoadError, LoadOptions, format};

use crate::files::{lock_if_exists, lock_later, read, save, saved_len};
use crate::output::{Bytes, Failure, shown};

/// `datacomp upgrade`: loads `old` (rehashing a key hash 1 save's keys from its key names and
/// the paths in `keys`, one a line, from --known-keys) and saves it to `output` with this build's key hash.
pub fn run(
    old: &Path,
    output: &Path,
    keys: Option<&Path>,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    // Held from the read to the save, so that upgrading a file in place races no other writer
    // (a new output is locked only once the old save has loaded).
    let file = lock_if_exists(output)?;
    // The file's bytes and the path list are dropped once the store is built: a save of 1 GB
    // needs room for the bytes and the store, not for a third copy.
    let (from, mut store) = {
        let bytes = read(old)?;
        let from = format::describe(&bytes).map_err(|e| Failure::at(old.display(), e))?.key_hash;
        let text = match keys {
            Some(keys) => read_keys(keys)?,
            None => String::new(),
        };
        // One path a line, as a KEY is given: dotted, or a JSON Pointer; blank lines skipped.
        let paths = text.lines().map(|line| line.strip_suffix('\r').unwrap_or(line));
        let options = LoadOptions::new().known_keys(paths.filter(|line| !line.trim().is_empty()));
        let store = options
            .load_bytes(&bytes)
            .map_err(|e| Failure::at(old.display(), format!("{e}{}", hint(&e, keys.is_some()))))?;
        (from, store)
    };
    let file = lock_later(file, output)?;
    save(&file, &mut store, output)?;
    if json {
        let line = serde_json::json!({
            "output": output.display().to_string(),
            "key_hash_from": from,
            "key_hash_to": format::KEY_HASH_FX32_EMPTY,
            "entities": store.len(),
            "key_names": store.key_names().len(),
            "file_bytes": saved_len(&file),
        });
        return crate::output::json_line(out, &line);
    }
    writeln!(
        out,
        "{}: key hash {from} -> {}, {} entities, {} key names, {}",
        shown(output),
        format::KEY_HASH_FX32_EMPTY,
        store.len(),
        store.key_names().len(),
        Bytes(saved_len(&file)),
    )?;
    Ok(())
}

/// What to add to a failed upgrade's message: how to give known keys, when they would help
/// and none were given.
fn hint(e: &LoadError, keys_given: bool) -> &'static str {
    match e {
        LoadError::Store(StoreError::UnexplainedKeys { .. }) if !keys_given => {
            " (with --known-keys FILE, one path a line)"
        }
        _ => "",
    }
}

/// The text of a --known-keys file, without a byte order mark; one that is not UTF-8 is refused
/// naming the line.
fn read_keys(keys: &Path) -> Result<String, Failure> {
    let bytes = std::fs::read(keys)
        .map_err(|e| Failure::at(keys.display(), format!("cannot read: {e}")))?;
    let mut text = String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = 1 + e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count();
        Failure::at(keys.display(), format!("line {line} is not UTF-8 (byte offset {at})"))
    })?;
    // A byte order mark (Windows editors write one) is not part of the first path.
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use datacomp::Key;

    use super::*;

    #[test]
    fn only_unexplained_keys_without_a_keys_file_get_the_keys_hint() {
        let unexplained = LoadError::Store(StoreError::UnexplainedKeys { keys: vec![] });
        assert_eq!(hint(&unexplained, false), " (with --known-keys FILE, one path a line)");
        assert_eq!(hint(&unexplained, true), "");
        // Attack: two saved names that rehash to one key were told to add a --keys file,
        // which cannot help.
        let collision = LoadError::Store(StoreError::UpgradeCollision {
            key: Key::parse("r24925.q"),
            first: "/p40764.q".into(),
            second: "r24925.q".into(),
        });
        assert_eq!(hint(&collision, false), "");
    }
}
