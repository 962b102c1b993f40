//! Showing untrusted text (key names, paths, strings from a save) to people: control
//! characters escaped so that text cannot drive a terminal or break a one-line message, and
//! long text cut in the middle. Error messages of this crate and the `datacomp` command show
//! names through these.

use std::fmt::{self, Display, Write};

/// Text longer than this many bytes is cut by [`Shortened`].
pub const SHORTENED_BYTES: usize = 200;
/// Bytes [`Shortened`] keeps at each end of text it cuts (fewer when that would split a
/// character).
const KEPT_BYTES: usize = 96;

/// Whether `c` is shown escaped: a control character (C0, DEL, C1: newlines and escape
/// sequences), a bidirectional-text control, which reorders what follows it on screen (the
/// marks ALM, LRM and RLM, the embeddings, overrides and isolates), or a Unicode line or
/// paragraph separator, which some terminals and log viewers break a line at.
fn escaped(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{61c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
        )
}

/// Text as it is, except that control characters are escaped as Rust writes them (`\n`,
/// `\t`, `\u{1b}`), and so are bidirectional-text controls (`\u{202e}`) and the Unicode line
/// and paragraph separators (`\u{2028}`). Everything else, backslashes included, is shown as
/// it is: this is for people; exact text is in JSON output.
///
/// # Examples
///
/// ```
/// use datacomp::text::Escaped;
///
/// let name = "\u{1b}]0;pwned\u{7}\u{1b}[2J";
/// assert_eq!(Escaped(name).to_string(), r"\u{1b}]0;pwned\u{7}\u{1b}[2J");
/// assert_eq!(Escaped("two\nlines").to_string(), r"two\nlines");
/// assert_eq!(Escaped("The One").to_string(), "The One");
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Escaped<'a>(pub &'a str);

impl Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        while let Some(at) = rest.find(escaped) {
            f.write_str(&rest[..at])?;
            let c = rest[at..].chars().next().unwrap_or_default();
            for e in c.escape_default() {
                f.write_char(e)?;
            }
            rest = &rest[at + c.len_utf8()..];
        }
        f.write_str(rest)
    }
}

/// Text as [`Escaped`] shows it, and, when it is longer than [`SHORTENED_BYTES`], cut in the
/// middle: its start and its end, and how many bytes were left out between them. What error
/// messages show a name or a path as, so that a 20 KB name gives a one-line error.
///
/// # Examples
///
/// ```
/// use datacomp::text::Shortened;
///
/// assert_eq!(Shortened("stats.health").to_string(), "stats.health");
/// let long = format!("{}{}", "a".repeat(10_000), "z");
/// let shown = Shortened(&long).to_string();
/// assert_eq!(shown, format!("{}[...9809 bytes cut...]{}z", "a".repeat(96), "a".repeat(95)));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Shortened<'a>(pub &'a str);

impl Display for Shortened<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.0;
        if text.len() <= SHORTENED_BYTES {
            return Escaped(text).fmt(f);
        }
        let head = text.floor_char_boundary(KEPT_BYTES);
        let tail = text.ceil_char_boundary(text.len() - KEPT_BYTES);
        let cut = tail - head;
        write!(f, "{}[...{cut} bytes cut...]{}", Escaped(&text[..head]), Escaped(&text[tail..]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bidi_marks_and_unicode_line_breaks_are_escaped() {
        // ALM is a bidirectional mark like LRM and RLM; LS and PS are line breaks that some
        // terminals and log viewers honour, which would split a one-line message.
        for (text, shown) in [
            ("a\u{61c}b", r"a\u{61c}b"),
            ("a\u{2028}b", r"a\u{2028}b"),
            ("a\u{2029}b", r"a\u{2029}b"),
        ] {
            assert_eq!(Escaped(text).to_string(), shown);
        }
    }

    #[test]
    fn every_control_character_is_escaped() {
        for c in (0..=0x1f_u32).chain(0x7f..=0x9f).filter_map(char::from_u32) {
            let shown = Escaped(&format!("a{c}b")).to_string();
            assert!(shown.starts_with("a\\") && shown.ends_with('b'), "{c:?}: {shown}");
            assert!(!shown.chars().any(char::is_control), "{c:?}: {shown}");
        }
        assert_eq!(Escaped("a\u{202e}b").to_string(), r"a\u{202e}b");
        assert_eq!(Escaped("é ü 日本 \\ \" '").to_string(), "é ü 日本 \\ \" '");
    }

    #[test]
    fn long_text_keeps_its_ends_on_character_boundaries() {
        assert_eq!(Shortened(&"x".repeat(200)).to_string(), "x".repeat(200));
        // Two-byte characters: the cut moves to a boundary, and says how much it left out.
        let text = "é".repeat(1000);
        let shown = Shortened(&text).to_string();
        assert_eq!(shown, format!("{}[...1808 bytes cut...]{}", "é".repeat(48), "é".repeat(48)));
        let escaped = Shortened(&"\u{1b}".repeat(300)).to_string();
        assert_eq!(escaped, format!("{0}[...108 bytes cut...]{0}", r"\u{1b}".repeat(96)));
    }
}
