//! The SJSON writer: an entity's tree (as the JSON export builds it, arrays included) written
//! the way designers write character sheets, without recursion. Values are written by the
//! JSON export's own writer (`write::write_value`), so both forms hold the same numbers and
//! strings.

use crate::text::write::{self, ROOT, Tree};
#[cfg(test)]
use crate::value::Value;

/// Spaces a nesting level is indented by, as in the sheets of the Bitsquid tradition.
const INDENT: usize = 4;

/// Writes the members of `object`, one a line (each line ends with `\n`), indented `depth`
/// levels: `name = value`, an object as `name = {` ... `}`, an empty one as `name = {}`, an
/// array of values on one line (`tags = ["fire" "cold"]`), any other array one element a line
/// between `name = [` and `]`.
pub(crate) fn write_members(tree: &Tree<'_>, object: u32, depth: usize, out: &mut Vec<u8>) {
    // The objects and arrays open above the member being written; the walk is a loop, so a
    // name of any number of segments cannot exhaust the stack.
    let mut open: Vec<u32> = Vec::new();
    let mut next = tree.first_member(object);
    loop {
        let Some(node) = next else {
            let Some(parent) = open.pop() else { break };
            push_indent(out, depth + open.len());
            out.extend_from_slice(if tree.is_array(parent) { b"]\n" } else { b"}\n" });
            next = tree.next_member(parent);
            continue;
        };
        push_indent(out, depth + open.len());
        // An array's elements are written without their index names.
        if !open.last().is_some_and(|&parent| tree.is_array(parent)) {
            write_name(out, tree.name(node));
            out.extend_from_slice(b" = ");
        }
        match tree.leaf(node) {
            Some(value) => {
                write::write_member_value(out, tree.name(node), value, b" ");
                out.push(b'\n');
                next = tree.next_member(node);
            }
            None => match tree.first_member(node) {
                None => {
                    out.extend_from_slice(b"{}\n");
                    next = tree.next_member(node);
                }
                Some(_) if tree.is_array(node) && all_values(tree, node) => {
                    write_inline_array(tree, node, out);
                    out.push(b'\n');
                    next = tree.next_member(node);
                }
                Some(first) => {
                    out.extend_from_slice(if tree.is_array(node) { b"[\n" } else { b"{\n" });
                    open.push(node);
                    next = Some(first);
                }
            },
        }
    }
}

/// Whether every element of `array` is a value (no object, no array of objects).
fn all_values(tree: &Tree<'_>, array: u32) -> bool {
    let mut member = tree.first_member(array);
    while let Some(node) = member {
        if tree.leaf(node).is_none() {
            return false;
        }
        member = tree.next_member(node);
    }
    true
}

/// Writes an array of values on one line: `["fire" "cold"]`, `[true [1 2] "x"]`.
fn write_inline_array(tree: &Tree<'_>, array: u32, out: &mut Vec<u8>) {
    out.push(b'[');
    let mut member = tree.first_member(array);
    while let Some(node) = member {
        if let Some(value) = tree.leaf(node) {
            write::write_member_value(out, tree.name(node), value, b" ");
        }
        member = tree.next_member(node);
        if member.is_some() {
            out.push(b' ');
        }
    }
    out.push(b']');
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
        write::write_leaf(out, name);
    }
}

/// One value as the JSON export writes it, float arrays' elements separated by spaces.
#[cfg(test)]
fn write_value(out: &mut Vec<u8>, value: Value<'_>) {
    write::write_value(out, value, b" ");
}

fn push_indent(out: &mut Vec<u8>, depth: usize) {
    out.resize(out.len() + depth * INDENT, b' ');
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
        // The JSON export's forms: minus zero keeps its fraction there, and so here.
        let cases: [(f32, &str); 9] = [
            (100.0, "100"),
            (0.5, "0.5"),
            (-0.0, "-0.0"),
            (0.1, "0.1"),
            (1e20, "1e+20"),
            (1.5e-7, "1.5e-7"),
            (f32::MAX, "3.4028235e+38"),
            (f32::NAN, "null"),
            (f32::NEG_INFINITY, "null"),
        ];
        for (f, text) in cases {
            let mut out = Vec::new();
            write_value(&mut out, Value::Float(f));
            assert_eq!(String::from_utf8(out).unwrap(), text, "{f}");
        }
        let mut out = Vec::new();
        write_value(&mut out, Value::Floats(&[12.0, -0.5, 1e20]));
        assert_eq!(String::from_utf8(out).unwrap(), "[12 -0.5 1e+20]");
    }
}
