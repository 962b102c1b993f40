//! The SJSON writer: an entity's tree (as the JSON export builds it) written the way designers
//! write character sheets, without recursion.

use crate::Value;
use crate::json::{ROOT, Tree};

/// Spaces a nesting level is indented by, as in the sheets of the Bitsquid tradition.
const INDENT: usize = 4;

/// Writes the members of `object`, one a line (each line ends with `\n`), indented `depth`
/// levels: `name = value`, an object as `name = {` ... `}`, an empty one as `name = {}`.
pub(crate) fn write_members(tree: &Tree<'_>, object: u32, depth: usize, out: &mut Vec<u8>) {
    // The objects open above the member being written; the walk is a loop, so a name of any
    // number of segments cannot exhaust the stack.
    let mut open: Vec<u32> = Vec::new();
    let mut next = tree.first_member(object);
    loop {
        let Some(node) = next else {
            let Some(parent) = open.pop() else { break };
            push_indent(out, depth + open.len());
            out.extend_from_slice(b"}\n");
            next = tree.next_member(parent);
            continue;
        };
        push_indent(out, depth + open.len());
        write_name(out, tree.name(node));
        out.extend_from_slice(b" = ");
        match tree.leaf(node) {
            Some(value) => {
                write_value(out, value);
                out.push(b'\n');
                next = tree.next_member(node);
            }
            None => match tree.first_member(node) {
                None => {
                    out.extend_from_slice(b"{}\n");
                    next = tree.next_member(node);
                }
                Some(first) => {
                    out.extend_from_slice(b"{\n");
                    open.push(node);
                    next = Some(first);
                }
            },
        }
    }
}

/// Writes one entity as the top level of a document: its members without braces.
pub(crate) fn write_entity(tree: &Tree<'_>, out: &mut Vec<u8>) {
    write_members(tree, ROOT, 0, out);
    // The last line's end is the caller's (a file ends with one, a string need not).
    if out.last() == Some(&b'\n') {
        out.pop();
    }
}

/// Writes one entity as an element of the top-level array: `{`, its members, `}`, indented
/// one level.
pub(crate) fn write_element(tree: &Tree<'_>, out: &mut Vec<u8>) {
    push_indent(out, 1);
    if tree.first_member(ROOT).is_none() {
        out.extend_from_slice(b"{}\n");
        return;
    }
    out.extend_from_slice(b"{\n");
    write_members(tree, ROOT, 2, out);
    push_indent(out, 1);
    out.extend_from_slice(b"}\n");
}

/// Whether `name` is written without quotes: a C identifier that is not a keyword.
pub(crate) fn is_bare_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !matches!(name, "true" | "false" | "null")
}

fn write_name(out: &mut Vec<u8>, name: &str) {
    if is_bare_name(name) {
        out.extend_from_slice(name.as_bytes());
    } else {
        write_json(out, name);
    }
}

fn write_value(out: &mut Vec<u8>, value: Value<'_>) {
    match value {
        Value::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
        Value::Float(f) => write_float(out, f),
        Value::Str(s) => write_json(out, s),
        Value::Floats(floats) => {
            out.push(b'[');
            for (i, &f) in floats.iter().enumerate() {
                if i > 0 {
                    out.push(b' ');
                }
                write_float(out, f);
            }
            out.push(b']');
        }
    }
}

/// A float in its shortest form that reads back as the same `f32`, a whole number without a
/// fraction (`100`, not `100.0`); a NaN or infinity, which the format has no literal for, as
/// `null`, as the JSON export writes it.
pub(crate) fn write_float(out: &mut Vec<u8>, f: f32) {
    if !f.is_finite() {
        out.extend_from_slice(b"null");
        return;
    }
    let start = out.len();
    write_json(out, &f);
    if out[start..].ends_with(b".0") {
        out.truncate(out.len() - 2);
    }
}

/// A string or float as `serde_json` writes it: the same escapes and float forms as the JSON
/// export. Writing to a Vec cannot fail.
fn write_json<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    let _ = serde_json::to_writer(out, value);
}

fn push_indent(out: &mut Vec<u8>, depth: usize) {
    out.resize(out.len() + depth * INDENT, b' ');
}

/// The bytes the writer wrote: `serde_json`'s output, the text of names and ASCII, so always
/// UTF-8.
pub(crate) fn into_string(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_names_are_identifiers_but_keywords() {
        for bare in ["name", "_x", "rune_00", "A9"] {
            assert!(is_bare_name(bare), "{bare}");
        }
        for quoted in ["", "0", "9lives", "a.b", "a b", "é", "true", "false", "null", "#0000002a"]
        {
            assert!(!is_bare_name(quoted), "{quoted}");
        }
    }

    #[test]
    fn floats_are_shortest_and_whole_numbers_have_no_fraction() {
        let cases: [(f32, &str); 9] = [
            (100.0, "100"),
            (0.5, "0.5"),
            (-0.0, "-0"),
            (0.1, "0.1"),
            (1e20, "1e+20"),
            (1.5e-7, "1.5e-7"),
            (f32::MAX, "3.4028235e+38"),
            (f32::NAN, "null"),
            (f32::NEG_INFINITY, "null"),
        ];
        for (f, text) in cases {
            let mut out = Vec::new();
            write_float(&mut out, f);
            assert_eq!(String::from_utf8(out).unwrap(), text, "{f}");
        }
    }
}
