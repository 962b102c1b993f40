//! The SJSON reader: a tokenizer over the text that is a serde `Deserializer`, so that the
//! JSON importer's seeds read SJSON unchanged, writing each value straight into the blob.
//!
//! Every loop here moves forward through the text, and each byte is looked at a bounded number
//! of times: reading is O(n). Objects and arrays are read by the importer's seeds calling back
//! into the reader, so the Rust stack grows with their nesting; like `serde_json`, the reader
//! refuses more than [`MAX_DEPTH`] levels, which bounds it. Positions are kept as byte offsets
//! and turned into a line and column only for an error.

use std::fmt;

use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor};

use crate::text::entity::Entity;
use crate::text::importer::ReadError;
use crate::text::shown::{Escaped, Shortened};

/// The deepest nesting of objects and arrays read, the top-level object or array included:
/// `serde_json`'s recursion limit (it starts at 128 and fails when it reaches 0), so that SJSON
/// and JSON accept the same entities.
pub(crate) const MAX_DEPTH: usize = 127;

/// Reads the SJSON document `text` into the importer's `entity`.
pub(crate) fn read_sjson(text: &str, entity: Entity<'_>) -> Result<(), ReadError> {
    let mut reader = Reader::new(text);
    let result = entity.deserialize(&mut reader).and_then(|()| reader.end());
    result.map_err(|e| {
        let (line, column) = line_column(text, e.at.unwrap_or(text.len()));
        ReadError { message: e.message, line, column }
    })
}

/// The line and column (from 1, in characters) of byte `offset` of `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = 1 + before.bytes().filter(|&b| b == b'\n').count();
    (line, 1 + before[line_start..].chars().count())
}

/// Why reading stopped: a description, and the byte offset it points at (the offending
/// character, or the opening of what is never closed). An error raised by the importer's
/// seeds has no offset yet: the reader gives it the last character read, as `serde_json` does.
#[derive(Debug)]
pub(crate) struct Error {
    message: String,
    at: Option<usize>,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl Error {
    fn at(at: usize, message: impl Into<String>) -> Error {
        Error { message: message.into(), at: Some(at) }
    }

    /// The object or array opened by `opening` at `open` is never closed.
    fn unclosed(open: usize, opening: char) -> Error {
        let (what, closing) = if opening == '{' { ("object", '}') } else { ("array", ']') };
        let message = format!("unclosed {what}: this `{opening}` has no matching `{closing}`");
        Error::at(open, message)
    }
}

impl de::Error for Error {
    fn custom<T: fmt::Display>(message: T) -> Error {
        Error { message: message.to_string(), at: None }
    }
}

/// What was read: a slice of the text, or the reader's scratch buffer (a string with escapes).
#[derive(Clone, Copy)]
enum Text {
    Span(usize, usize),
    Scratch,
}

/// The tokenizer and `Deserializer` over one SJSON document.
pub(crate) struct Reader<'t> {
    text: &'t str,
    /// INVARIANT: `pos <= text.len()`, and `pos` is on a character boundary between tokens.
    pos: usize,
    /// Nesting levels still allowed; the top level takes one.
    depth_left: usize,
    /// Whether the next value read is the document's top level, which may be an object
    /// without braces.
    at_top: bool,
    /// A string with escapes, decoded.
    scratch: String,
}

/// Where the whitespace and comments from `pos` end; `Err` with where a `/*` opens that no
/// `*/` closes.
fn space_end(text: &str, mut pos: usize) -> Result<usize, usize> {
    let bytes = text.as_bytes();
    loop {
        // Runs of blanks (indentation, line ends) in one tight loop.
        let rest = bytes.get(pos..).unwrap_or_default();
        pos += rest
            .iter()
            .position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            .unwrap_or(rest.len());
        match bytes.get(pos) {
            Some(b'/') if bytes.get(pos + 1) == Some(&b'/') => {
                let rest = &bytes[pos..];
                pos += rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
            }
            Some(b'/') if bytes.get(pos + 1) == Some(&b'*') => {
                let len = text[pos + 2..].find("*/").ok_or(pos)?;
                pos += 2 + len + 2;
            }
            _ => return Ok(pos),
        }
    }
}

/// Whether `b` may be part of an unquoted member name.
fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl<'t> Reader<'t> {
    fn new(text: &'t str) -> Reader<'t> {
        // A byte order mark, as some editors write, is not part of the document.
        let pos = if text.starts_with('\u{feff}') { 3 } else { 0 };
        Reader { text, pos, depth_left: MAX_DEPTH, at_top: true, scratch: String::new() }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    /// Gives an error from a seed (which has no place) the last character read.
    fn place(&self, mut e: Error) -> Error {
        if e.at.is_none() {
            let last = self.text[..self.pos].char_indices().next_back().map_or(0, |(i, _)| i);
            e.at = Some(last);
        }
        e
    }

    /// What stands at the current position, for a message: `` `}` ``, `` `name` `` or "the end
    /// of the text".
    fn found(&self) -> String {
        let rest = &self.text[self.pos..];
        match rest.chars().next() {
            None => "the end of the text".to_owned(),
            Some(_) if is_name_byte(rest.as_bytes()[0]) => {
                format!("`{}`", Shortened(self.name_ahead()))
            }
            Some(c) => format!("`{}`", Escaped(c.encode_utf8(&mut [0; 4]))),
        }
    }

    /// Skips whitespace and comments (`// to the end of the line`, `/* to the next */`).
    fn skip_space(&mut self) -> Result<(), Error> {
        // Called again and again where there is nothing to skip: that costs one compare.
        if !matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r' | b'/')) {
            return Ok(());
        }
        match space_end(self.text, self.pos) {
            Ok(end) => {
                self.pos = end;
                Ok(())
            }
            Err(open) => Err(Error::at(open, "unterminated comment: no `*/` closes this `/*`")),
        }
    }

    /// After a braced object or an array at the top: nothing but whitespace and comments.
    fn end(&mut self) -> Result<(), Error> {
        self.skip_space()?;
        if self.pos == self.text.len() {
            return Ok(());
        }
        let message = format!("unexpected {} after the end of the document", self.found());
        Err(Error::at(self.pos, message))
    }

    /// Takes one nesting level for the object or array opening at `at`.
    fn descend(&mut self, at: usize) -> Result<(), Error> {
        if self.depth_left == 0 {
            let message = format!(
                "recursion limit exceeded: objects and arrays nest more than {MAX_DEPTH} deep"
            );
            return Err(Error::at(at, message));
        }
        self.depth_left -= 1;
        Ok(())
    }

    /// An unquoted member name at the current position (which holds a name byte).
    fn name(&mut self) -> Text {
        let start = self.pos;
        let rest = &self.text.as_bytes()[start..];
        self.pos += rest.iter().position(|&b| !is_name_byte(b)).unwrap_or(rest.len());
        Text::Span(start, self.pos)
    }

    /// Whether a member name that starts with a digit stands at the current position (`0 = 1`
    /// opens a top level without braces; `0` is a number).
    fn name_then_separator(&self) -> bool {
        let after = space_end(self.text, self.pos + self.name_ahead().len());
        matches!(after.map(|at| self.text.as_bytes().get(at)), Ok(Some(b'=' | b':')))
    }

    /// The run of name bytes at the current position (empty if there is none).
    fn name_ahead(&self) -> &'t str {
        let rest = &self.text[self.pos..];
        let len = rest.bytes().position(|b| !is_name_byte(b)).unwrap_or(rest.len());
        &rest[..len]
    }

    fn text_of(&self, text: Text) -> &str {
        match text {
            Text::Span(start, end) => &self.text[start..end],
            Text::Scratch => &self.scratch,
        }
    }

    /// A quoted string at the current position (which holds `"`): `"..."` with JSON's escapes,
    /// on one line; or `"""..."""`, taken as it is, over any number of lines.
    fn string(&mut self) -> Result<Text, Error> {
        let open = self.pos;
        let bytes = self.text.as_bytes();
        if bytes[open..].starts_with(b"\"\"\"") {
            let start = open + 3;
            let Some(len) = self.text[start..].find("\"\"\"") else {
                let message = "unterminated string: no `\"\"\"` closes this `\"\"\"`";
                return Err(Error::at(open, message));
            };
            self.pos = start + len + 3;
            return Ok(Text::Span(start, start + len));
        }
        let start = open + 1;
        let mut at = start;
        // Up to the first escape the string is a slice of the text; from there on it is
        // decoded into the scratch buffer.
        let mut decoded = false;
        loop {
            let run = bytes[at..]
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                .map_or(bytes.len(), |len| at + len);
            if decoded {
                self.scratch.push_str(&self.text[at..run]);
            }
            match bytes.get(run) {
                Some(b'"') => {
                    self.pos = run + 1;
                    return Ok(if decoded { Text::Scratch } else { Text::Span(start, run) });
                }
                Some(b'\\') => {
                    if !decoded {
                        self.scratch.clear();
                        self.scratch.push_str(&self.text[start..run]);
                        decoded = true;
                    }
                    at = self.escape(run)?;
                }
                Some(b'\n' | b'\r') => {
                    let message = "unterminated string: the line ends before its closing `\"`";
                    return Err(Error::at(open, message));
                }
                Some(&b) => {
                    let message = format!(
                        "control character U+{b:04X} in a string: write it as an escape \
                         (\\t, \\u{b:04x})"
                    );
                    return Err(Error::at(run, message));
                }
                None => {
                    let message = "unterminated string: the text ends before its closing `\"`";
                    return Err(Error::at(open, message));
                }
            }
        }
    }

    /// Decodes the escape at `at` (a backslash) onto the scratch buffer; returns where the
    /// string goes on.
    fn escape(&mut self, at: usize) -> Result<usize, Error> {
        let bytes = self.text.as_bytes();
        let c = match bytes.get(at + 1) {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => return self.unicode_escape(at),
            _ => {
                let shown = self.text[at + 1..]
                    .chars()
                    .next()
                    .map_or(String::new(), |c| c.escape_debug().to_string());
                let message = format!(
                    "invalid escape `\\{shown}` in a string (JSON's escapes: \\\" \\\\ \\/ \\b \
                     \\f \\n \\r \\t \\uXXXX)"
                );
                return Err(Error::at(at, message));
            }
        };
        self.scratch.push(c);
        Ok(at + 2)
    }

    /// Decodes `\uXXXX` at `at`, or a surrogate pair `\uXXXX\uXXXX`, as JSON does.
    fn unicode_escape(&mut self, at: usize) -> Result<usize, Error> {
        let hex = |from: usize| -> Option<u32> {
            let digits = self.text.as_bytes().get(from..from + 4)?;
            let digits = std::str::from_utf8(digits).ok()?;
            if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            u32::from_str_radix(digits, 16).ok()
        };
        let invalid = |message: &str| Err(Error::at(at, message));
        let Some(first) = hex(at + 2) else {
            return invalid("invalid `\\u` escape: four hexadecimal digits must follow");
        };
        let (c, end) = match first {
            0xD800..=0xDBFF => {
                let bytes = self.text.as_bytes();
                let second = if bytes.get(at + 6..at + 8) == Some(&b"\\u"[..]) {
                    hex(at + 8).filter(|low| (0xDC00..=0xDFFF).contains(low))
                } else {
                    None
                };
                let Some(second) = second else {
                    return invalid("lone leading surrogate in a `\\u` escape");
                };
                let c = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
                (char::from_u32(c), at + 12)
            }
            0xDC00..=0xDFFF => return invalid("lone trailing surrogate in a `\\u` escape"),
            c => (char::from_u32(c), at + 6),
        };
        match c {
            Some(c) => {
                self.scratch.push(c);
                Ok(end)
            }
            None => invalid("invalid `\\u` escape"),
        }
    }

    /// A number at the current position (which holds `-` or a digit), in JSON's form:
    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, not followed by a letter, digit, `_`
    /// or `.`.
    fn number(&mut self) -> Result<Number, Error> {
        let bytes = self.text.as_bytes();
        let start = self.pos;
        let digits = |from: usize| bytes[from..].iter().take_while(|b| b.is_ascii_digit()).count();
        let negative = bytes[start] == b'-';
        let mut at = start + usize::from(negative);
        let whole = digits(at);
        let leading_zero = whole > 1 && bytes[at] == b'0';
        let mut valid = whole > 0 && !leading_zero;
        at += whole;
        let integer_end = at;
        if bytes.get(at) == Some(&b'.') {
            let fraction = digits(at + 1);
            valid &= fraction > 0;
            at += 1 + fraction;
        }
        if matches!(bytes.get(at), Some(b'e' | b'E')) {
            at += 1;
            if matches!(bytes.get(at), Some(b'+' | b'-')) {
                at += 1;
            }
            let exponent = digits(at);
            valid &= exponent > 0;
            at += exponent;
        }
        // `1.5.3`, `12abc` and `1-2` are mistakes, not two tokens.
        let glued = |b: u8| is_name_byte(b) || matches!(b, b'.' | b'+' | b'-');
        if !valid || bytes.get(at).is_some_and(|&b| glued(b)) {
            let rest = &bytes[start..];
            let len = rest.iter().position(|&b| !glued(b)).unwrap_or(rest.len());
            let shown = Shortened(&self.text[start..start + len]);
            return Err(Error::at(start, format!("invalid number `{shown}`")));
        }
        self.pos = at;
        // An integer is given as `serde_json` gives one, exactly (as a `u64`, or an `i64` if
        // negative), so that the importer's rule for integers sees its every digit: an `f64`
        // would round `9007199254740993` before the rule could say so.
        if at == integer_end && whole <= 20 {
            let digits = &bytes[integer_end - whole..integer_end];
            let n = digits.iter().try_fold(0_u64, |n, &d| {
                n.checked_mul(10).and_then(|n| n.checked_add(u64::from(d - b'0')))
            });
            match (n, negative) {
                (Some(n), false) => return Ok(Number::Unsigned(n)),
                // (Minus zero stays an f64, as serde_json gives it.)
                (Some(n), true) if n != 0 => {
                    if let Ok(n) = i64::try_from(n) {
                        return Ok(Number::Signed(-n));
                    }
                }
                _ => {}
            }
        }
        let literal = &self.text[start..at];
        // Given to the importer as `serde_json` gives a JSON number, the nearest `f64`, so that
        // JSON and SJSON follow one rule for numbers (`crate::number`). Past `f64`'s range it is
        // an infinity, which the importer refuses or clamps as it does past `f32`'s; a nonzero
        // number that `f64` cannot hold is given as a stand-in that is still nonzero, so that
        // it is refused (or counted) as one that `f32` cannot hold, never stored as a silent 0.
        // The grammar above is Rust's too, so the parse cannot fail; `f64::NAN` is unreachable.
        let wide = literal.parse::<f64>().unwrap_or(f64::NAN);
        let mantissa = literal.trim_start_matches('-').split(['e', 'E']).next().unwrap_or_default();
        if wide == 0.0 && mantissa.bytes().any(|b| matches!(b, b'1'..=b'9')) {
            return Ok(Number::Float(if literal.starts_with('-') { -1e-99 } else { 1e-99 }));
        }
        Ok(Number::Float(wide))
    }

    /// `true`, `false` or `null` at the current position (which holds a name byte), else an
    /// error: a value that is not a keyword must be quoted.
    fn keyword<V: Visitor<'t>>(&mut self, visitor: V) -> Result<V::Value, Error> {
        let start = self.pos;
        let word = self.name_ahead();
        self.pos += word.len();
        match word {
            "true" => visitor.visit_bool(true),
            "false" => visitor.visit_bool(false),
            "null" => visitor.visit_unit(),
            word => {
                let message = format!(
                    "expected a value, found `{}`: strings are written in double quotes",
                    Shortened(word)
                );
                Err(Error::at(start, message))
            }
        }
    }

    /// The members of the object that opened at `open` (`None`: the top level without
    /// braces), read by `visitor`, then its end.
    fn object<V: Visitor<'t>>(
        &mut self,
        open: Option<usize>,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.descend(open.unwrap_or(self.pos))?;
        let members = Members { reader: &mut *self, open, first: true, separator: b'=' };
        let value = visitor.visit_map(members)?;
        self.skip_space()?;
        match (open, self.peek()) {
            (Some(_), Some(b'}')) => self.pos += 1,
            (None, None) => {}
            (Some(open), None) => return Err(Error::unclosed(open, '{')),
            _ => {
                let close = if open.is_some() { "`}`" } else { "the end of the text" };
                let message = format!("expected {close}, found {}", self.found());
                return Err(Error::at(self.pos, message));
            }
        }
        self.depth_left += 1;
        Ok(value)
    }

    /// The elements of the array that opened at `open`, read by `visitor`, then its `]`.
    fn array<V: Visitor<'t>>(&mut self, open: usize, visitor: V) -> Result<V::Value, Error> {
        self.descend(open)?;
        self.pos += 1;
        let value = visitor.visit_seq(Elements { reader: &mut *self, open, first: true })?;
        self.skip_space()?;
        match self.peek() {
            Some(b']') => self.pos += 1,
            None => return Err(Error::unclosed(open, '[')),
            Some(_) => {
                let message = format!("expected `]`, found {}", self.found());
                return Err(Error::at(self.pos, message));
            }
        }
        self.depth_left += 1;
        Ok(value)
    }

    /// Skips one comma between members or elements, if there is one (commas are optional).
    fn separator(&mut self, first: bool) -> Result<(), Error> {
        self.skip_space()?;
        if !first && self.peek() == Some(b',') {
            self.pos += 1;
            self.skip_space()?;
        }
        Ok(())
    }
}

impl<'de> de::Deserializer<'de> for &mut Reader<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.skip_space()?;
        let start = self.pos;
        let at_top = std::mem::replace(&mut self.at_top, false);
        let result = match self.peek() {
            // The top level is an object without braces, unless it is braced, an array or a
            // number (which the importer refuses): a JSON document is an SJSON document.
            next if at_top
                && (!matches!(next, Some(b'{' | b'[' | b'-' | b'0'..=b'9'))
                    || self.name_then_separator()) =>
            {
                self.object(None, visitor)
            }
            Some(b'{') => {
                self.pos += 1;
                self.object(Some(start), visitor)
            }
            Some(b'[') => self.array(start, visitor),
            Some(b'"') => match self.string()? {
                Text::Span(start, end) => visitor.visit_borrowed_str(self.span(start, end)),
                Text::Scratch => visitor.visit_str(&self.scratch),
            },
            Some(b'-' | b'0'..=b'9') => match self.number()? {
                Number::Unsigned(n) => visitor.visit_u64(n),
                Number::Signed(n) => visitor.visit_i64(n),
                Number::Float(n) => visitor.visit_f64(n),
            },
            Some(b) if is_name_byte(b) => self.keyword(visitor),
            None | Some(_) => {
                let message = format!("expected a value, found {}", self.found());
                Err(Error::at(start, message))
            }
        };
        result.map_err(|e| self.place(e))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

impl<'t> Reader<'t> {
    /// A span of the text, borrowed for as long as the text.
    fn span(&self, start: usize, end: usize) -> &'t str {
        &self.text[start..end]
    }
}

/// The members of an object: `name = value` (or `name: value`, or `"any name" = value`),
/// separated by whitespace or one comma.
struct Members<'r, 't> {
    reader: &'r mut Reader<'t>,
    /// Where the object's `{` is; `None` for the top level without braces.
    open: Option<usize>,
    first: bool,
    /// The `=` or `:` after the member name just read.
    separator: u8,
}

impl<'de> MapAccess<'de> for Members<'_, 'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let reader = &mut *self.reader;
        reader.separator(self.first)?;
        self.first = false;
        let name = match (reader.peek(), self.open) {
            (None | Some(b'}'), Some(_)) | (None, None) => return Ok(None),
            (Some(b'"'), _) => reader.string()?,
            (Some(b), _) if is_name_byte(b) => reader.name(),
            (Some(close @ (b'}' | b']')), None) => {
                let message = format!(
                    "unexpected `{}`: no {} is open",
                    char::from(close),
                    if close == b'}' { "object" } else { "array" }
                );
                return Err(Error::at(reader.pos, message));
            }
            (Some(_), _) => {
                let message = format!("expected a member name, found {}", reader.found());
                return Err(Error::at(reader.pos, message));
            }
        };
        reader.skip_space()?;
        if let Some(separator @ (b'=' | b':')) = reader.peek() {
            reader.pos += 1;
            self.separator = separator;
        } else {
            let message = format!(
                "expected `=` or `:` after the member name `{}`, found {}",
                Shortened(reader.text_of(name)),
                reader.found()
            );
            return Err(Error::at(reader.pos, message));
        }
        let key =
            seed.deserialize(IntoDeserializer::<Error>::into_deserializer(reader.text_of(name)));
        key.map(Some).map_err(|e| reader.place(e))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let reader = &mut *self.reader;
        reader.skip_space()?;
        let missing = match reader.peek() {
            None | Some(b'}' | b']' | b',' | b'=' | b':') => true,
            Some(b) if is_name_byte(b) && !b.is_ascii_digit() => {
                !matches!(reader.name_ahead(), "true" | "false" | "null")
            }
            Some(_) => false,
        };
        if missing {
            let word = reader.name_ahead();
            // A word before `=` is the next member's name: the value is missing, not unquoted.
            let after = &reader.text.as_bytes()[reader.pos + word.len()..];
            let next = after.iter().find(|&&b| b != b' ' && b != b'\t');
            let hint = !word.is_empty() && !matches!(next, Some(b'=' | b':'));
            let message = format!(
                "expected a value after `{}`, found {}{}",
                char::from(self.separator),
                reader.found(),
                if hint { " (strings are written in double quotes)" } else { "" }
            );
            return Err(Error::at(reader.pos, message));
        }
        seed.deserialize(&mut *reader)
    }
}

/// The elements of an array, separated by whitespace or one comma: `[0 0.5 0.5 0.7]`.
struct Elements<'r, 't> {
    reader: &'r mut Reader<'t>,
    /// Where the array's `[` is.
    open: usize,
    first: bool,
}

impl<'de> SeqAccess<'de> for Elements<'_, 'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        let reader = &mut *self.reader;
        reader.separator(self.first)?;
        self.first = false;
        match reader.peek() {
            None => Err(Error::unclosed(self.open, '[')),
            Some(b']') => Ok(None),
            Some(b',' | b'}' | b'=' | b':') => {
                let message = format!("expected a value or `]`, found {}", reader.found());
                Err(Error::at(reader.pos, message))
            }
            Some(_) => seed.deserialize(&mut *reader).map(Some),
        }
    }
}

/// A number literal as the reader hands it to a visitor, as `serde_json` does: an integer
/// exactly, anything else as the nearest `f64`.
enum Number {
    Unsigned(u64),
    Signed(i64),
    Float(f64),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_column_counts_characters() {
        let text = "a = 1\nbé = \"x";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 5), (1, 6));
        assert_eq!(line_column(text, 6), (2, 1));
        // After `bé = ` (é is two bytes): the quote is the sixth character of line 2.
        assert_eq!(line_column(text, 12), (2, 6));
        assert_eq!(line_column(text, text.len()), (2, 8));
        assert_eq!(line_column(text, 8), (2, 2), "inside é: its start");
    }
}
