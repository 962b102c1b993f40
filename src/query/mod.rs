//! Reading keys across many entities: [`Query`], a small filter language over entities' keys,
//! run over a [`Store`] or a [`StoreView`] with one [`KeyCursor`] per test; columns
//! ([`Store::column`]), one key read from every entity as a [`ColumnValue`] type; and the
//! [`KeyCursor`] both are built on.
//!
//! Over a [`Store`] with prototypes, queries, columns and `find` read each entity through its
//! chain ([`Store::resolved`]): own value, then the nearest prototype's; a tombstone is no
//! value. A [`StoreView`]'s read what each entity stores.
//!
//! - `mod.rs`: [`Query`], its parser and [`QueryError`].
//! - `cursor.rs`: [`KeyCursor`], one key read from many blobs.
//! - `column.rs`: [`Store::column`] and [`StoreView::column`], typed by [`ColumnValue`].
//!
//! The query language:
//!
//! ```text
//! query   := or
//! or      := and ('or' and)*
//! and     := unary ('and' unary)*
//! unary   := 'not' unary | primary
//! primary := '(' query ')' | 'has' KEY | KEY | KEY op literal
//! op      := '<' | '<=' | '>' | '>=' | '==' | '!='
//! literal := number | "string" | 'true' | 'false' | 'null'
//! ```

mod column;
mod cursor;
pub(crate) mod error;

pub use column::ColumnValue;
pub use cursor::KeyCursor;

use std::str::FromStr;

pub use error::{QueryError, QueryErrorKind};

use crate::blob::BlobRef;
use crate::format::{LoadError, StoreView};
use crate::handle_map::Id;
use crate::key::Key;
use crate::store::{Resolved, Store};
use cursor::Source;

/// A filter over an entity's keys, parsed once and run over many entities.
///
/// | form | holds for an entity that |
/// |---|---|
/// | `status_effects.poisoned` | holds the boolean `true` at that key |
/// | `has name` | has the key, whatever its type |
/// | `stats.health < 20` (and `<=`, `>`, `>=`, `==`, `!=`) | holds a float there that compares so with 20 |
/// | `name == "Orc"`, `name != "Orc"` | holds a string there, equal (or not) to `Orc` |
/// | `flying == true`, `flying != false` | holds a boolean there, equal (or not) to the literal |
/// | `firmness == null`, `firmness != null` | holds `null` there (or holds a value that is not `null`) |
/// | `a and b`, `a or b`, `not a`, `( ... )` | as in logic; `not` binds tightest, then `and`, then `or` |
///
/// A comparison holds only if the key holds a value of the literal's type: `health != 0` is
/// false for an entity without `health`, while `not health == 0` is true for it. Floats compare
/// as IEEE 754 `f32`s (a NaN equals nothing). Numbers are read as Rust reads an `f32`
/// (`20`, `-1.5`, `2e3`).
///
/// A KEY is a dotted path (`stats.health`), a JSON Pointer (`/a.b/c`, for member names that
/// contain dots) or a raw hash (`#1a2b3c4d`); it runs to the next space or one of `( ) < > = !
/// "`, and the words `and`, `or`, `not`, `has`, `true`, `false` and `null` are not keys (write a key
/// named so as a pointer: `/not`). Strings are in double quotes, with `\"` and `\\` as the only
/// escapes.
///
/// Parsing takes time linear in the text and nests at most [`Query::MAX_DEPTH`] parentheses and
/// `not`s. Each test reads its key with its own [`KeyCursor`], so a query over entities that
/// share a layout costs about one compare per key per entity to find its keys. A query is
/// `Send + Sync`, so one parsed query can live in an engine's shared state and serve every
/// thread (its cursors' remembered positions are hints in atomic words; a clone per thread
/// keeps each thread's hits its own).
///
/// # Errors
///
/// [`Query::parse`] says where the text went wrong: [`QueryError`] has the 1-based column (in
/// characters) and what was expected there.
///
/// # Examples
///
/// ```
/// use datacomp::{Blob, Query, Store};
///
/// let mut world = Store::new();
/// let mut orc = Blob::new();
/// orc.set("name", "Orc").unwrap();
/// orc.set("stats.health", 12.0).unwrap();
/// orc.set("status_effects.poisoned", true).unwrap();
/// let orc = world.insert(&orc);
/// world.insert(&[("name", "Elf"), ("title", "Queen")].into_iter().collect::<Blob>());
///
/// let query = Query::parse("status_effects.poisoned and stats.health < 20")?;
/// let found: Vec<_> = world.query(&query).map(|(id, _)| id).collect();
/// assert_eq!(found, [orc]);
///
/// let err = Query::parse("stats.health < twenty").unwrap_err();
/// assert_eq!(err.to_string(), "column 16: expected a number, found 'twenty'");
/// # Ok::<(), datacomp::query::QueryError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Query {
    // INVARIANT: nests at most `MAX_DEPTH` `And`/`Or`/`Not` levels per parenthesis or `not`, so
    // evaluating and dropping it recurse a bounded depth.
    root: Expr,
    /// Every key the text names, as written, with its 1-based column: in text order.
    keys: Vec<(usize, Box<str>)>,
}

#[derive(Clone, Debug)]
enum Expr {
    /// Every one holds (two or more).
    And(Vec<Expr>),
    /// One holds (two or more).
    Or(Vec<Expr>),
    Not(Box<Expr>),
    Test(KeyCursor, Test),
}

#[derive(Clone, Debug, PartialEq)]
enum Test {
    /// A bare key: it holds `true`.
    IsTrue,
    /// `has KEY`.
    Has,
    Float(Cmp, f32),
    Bool {
        value: bool,
        equal: bool,
    },
    Str {
        value: String,
        equal: bool,
    },
    /// `== null` (`equal`): the key holds null; `!= null`: it holds another value.
    Null {
        equal: bool,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl Cmp {
    // A filter compares exactly, as IEEE 754 does: `hp == 0.1` matches what was stored as 0.1.
    #[allow(clippy::float_cmp)]
    fn holds(self, a: f32, b: f32) -> bool {
        match self {
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
        }
    }

    fn is_equality(self) -> bool {
        matches!(self, Cmp::Eq | Cmp::Ne)
    }
}

impl Expr {
    /// Whether `entity` (a blob, or an entity read through its prototypes) passes.
    fn matches<'a>(&self, entity: impl Source<'a>) -> bool {
        match self {
            Expr::And(all) => all.iter().all(|e| e.matches(entity)),
            Expr::Or(any) => any.iter().any(|e| e.matches(entity)),
            Expr::Not(e) => !e.matches(entity),
            Expr::Test(cursor, test) => match test {
                Test::IsTrue => entity.get_bool(cursor) == Some(true),
                Test::Has => entity.contains_key(cursor),
                Test::Float(cmp, x) => entity.get_float(cursor).is_some_and(|v| cmp.holds(v, *x)),
                Test::Bool { value, equal } => {
                    entity.get_bool(cursor).is_some_and(|v| (v == *value) == *equal)
                }
                Test::Str { value, equal } => {
                    entity.get_str(cursor).is_some_and(|v| (v == value) == *equal)
                }
                Test::Null { equal } => entity.get(cursor).is_some_and(|v| v.is_null() == *equal),
            },
        }
    }
}

impl Query {
    /// The deepest nesting of parentheses and `not`s a query may have. Real filters use a
    /// handful; the limit keeps parsing and evaluation from recursing without bound.
    pub const MAX_DEPTH: usize = 64;

    /// Parses `text` as a filter (see [`Query`] for the language).
    ///
    /// # Errors
    ///
    /// A [`QueryError`] with the 1-based column of the first problem and what was expected
    /// there.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Query;
    /// use datacomp::query::QueryErrorKind;
    ///
    /// assert!(Query::parse(r#"name == "Orc" or not (has title)"#).is_ok());
    /// let err = Query::parse("(stats.health > 3").unwrap_err();
    /// assert_eq!(err.column(), 18);
    /// assert_eq!(err.to_string(), "column 18: expected 'and', 'or' or ')', found end of query");
    /// ```
    pub fn parse(text: &str) -> Result<Query, QueryError> {
        let mut parser = Parser {
            lexer: Lexer { text, pos: 0 },
            at: 0,
            tok: Tok::End,
            depth: 0,
            keys: Vec::new(),
        };
        parser.advance()?;
        let root = parser.or()?;
        if parser.tok != Tok::End {
            return Err(parser.expected("'and', 'or' or the end of the query"));
        }
        // Byte offsets to columns in one pass: the keys are in text order.
        let (mut byte, mut column) = (0, 1);
        let keys = parser
            .keys
            .into_iter()
            .map(|(at, word)| {
                column += text[byte..at].chars().count();
                byte = at;
                (column, word.into())
            })
            .collect();
        Ok(Query { root, keys })
    }

    /// Every key the query names, as written (a dotted path, a JSON Pointer or a `#` raw
    /// key), with the 1-based column where it starts, in text order: for checking the names
    /// against a store's ([`Store::check_key`], [`SavedKeyNames`](crate::format::SavedKeyNames)).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Query;
    ///
    /// let query = Query::parse("poisoned and (stats.hp < 3 or has #0000002a)")?;
    /// let keys: Vec<(usize, &str)> = query.keys().collect();
    /// assert_eq!(keys, [(1, "poisoned"), (15, "stats.hp"), (35, "#0000002a")]);
    /// # Ok::<(), datacomp::query::QueryError>(())
    /// ```
    pub fn keys(&self) -> impl ExactSizeIterator<Item = (usize, &str)> + '_ {
        self.keys.iter().map(|(column, word)| (*column, &**word))
    }

    /// Whether `blob` passes this filter.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, Query};
    ///
    /// let sheet: Blob = [("stats.health", 12.0)].into_iter().collect();
    /// assert!(Query::parse("stats.health <= 12")?.matches(&sheet));
    /// assert!(!Query::parse("stats.health != 12")?.matches(&sheet));
    /// # Ok::<(), datacomp::query::QueryError>(())
    /// ```
    #[must_use]
    pub fn matches<'a>(&self, blob: impl Into<BlobRef<'a>>) -> bool {
        self.root.matches(blob.into())
    }
}

impl FromStr for Query {
    type Err = QueryError;

    /// As [`Query::parse`].
    fn from_str(text: &str) -> Result<Query, QueryError> {
        Query::parse(text)
    }
}

/// Queries over a [`Store`].
impl Store {
    /// The entities that pass `query`, with their blobs, in dense order. The query reads
    /// each entity through its prototype chain ([`Store::resolved`]): `stats.health < 20`
    /// passes an instance that inherits a health of 12. The blob given with it is what the
    /// entity itself stores.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, Query, Store};
    ///
    /// let mut world = Store::new();
    /// let orc = world.insert(&[("name", "Orc")].into_iter().collect::<Blob>());
    /// world.insert(&[("name", "Elf")].into_iter().collect::<Blob>());
    /// let orcs = Query::parse(r#"name == "Orc""#)?;
    /// assert_eq!(world.query(&orcs).map(|(id, _)| id).collect::<Vec<_>>(), [orc]);
    /// # Ok::<(), datacomp::query::QueryError>(())
    /// ```
    pub fn query<'s>(&'s self, query: &'s Query) -> impl Iterator<Item = (Id, BlobRef<'s>)> + 's {
        if self.links().is_empty() {
            Either::Left(self.iter().filter(|&(_, blob)| query.root.matches(blob)))
        } else {
            Either::Right(
                self.iter()
                    .filter(move |&(id, blob)| query.root.matches(Resolved::new(self, id, blob))),
            )
        }
    }
}

/// One of two iterators of one item type, chosen once (a store's blob loop, or its loop
/// through prototypes), each run with its own `fold`.
pub(crate) enum Either<L, R> {
    Left(L),
    Right(R),
}

impl<L: Iterator, R: Iterator<Item = L::Item>> Iterator for Either<L, R> {
    type Item = L::Item;

    #[inline]
    fn next(&mut self) -> Option<L::Item> {
        match self {
            Either::Left(l) => l.next(),
            Either::Right(r) => r.next(),
        }
    }

    #[inline]
    fn fold<B, F: FnMut(B, L::Item) -> B>(self, init: B, f: F) -> B {
        match self {
            Either::Left(l) => l.fold(init, f),
            Either::Right(r) => r.fold(init, f),
        }
    }
}

/// Queries over a [`StoreView`].
impl<'a> StoreView<'a> {
    /// The entities of the saved store that pass `query`, with their blobs, in the saved
    /// dense order. As [`Store::query`], for a save without prototype links: a view reads
    /// what each entity stores.
    ///
    /// # Errors
    ///
    /// [`StoreError::LinkedView`](crate::format::StoreError::LinkedView) if an entity of the
    /// save has a prototype (its inherited values would be missed): load the save into a
    /// [`Store`] to query it. O(entities) to tell.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, Query, Store, StoreView};
    ///
    /// let mut world = Store::new();
    /// let orc = world.insert(&[("stats.health", 5.0)].into_iter().collect::<Blob>());
    /// let bytes = world.to_bytes();
    /// let view = StoreView::new(&bytes)?;
    /// let weak = Query::parse("stats.health < 10")?;
    /// assert_eq!(view.query(&weak)?.map(|(id, _)| id).collect::<Vec<_>>(), [orc]);
    ///
    /// world.insert_instance(orc)?;
    /// let bytes = world.to_bytes();
    /// let err = StoreView::new(&bytes)?.query(&weak).err().unwrap();
    /// assert!(err.to_string().starts_with("1 entity of the save reads through prototypes"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn query<'s>(
        &'s self,
        query: &'s Query,
    ) -> Result<impl Iterator<Item = (Id, BlobRef<'a>)> + 's, LoadError> {
        self.check_unlinked()?;
        Ok(self.iter().filter(|(_, blob)| query.matches(*blob)))
    }
}

/// At most this many characters of the query are quoted in an error.
const QUOTE_CHARS: usize = 24;

/// `text` for an error message: control characters escaped (`\n`, `\u{0}`), so the message
/// stays one line, and cut to [`QUOTE_CHARS`] characters with `...` if it is longer.
fn quote(text: &str) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == QUOTE_CHARS {
            out.push_str("...");
            break;
        }
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Tok<'q> {
    LParen,
    RParen,
    Op(Cmp),
    /// A string literal's text between its quotes, escapes not yet undone.
    Str(&'q str),
    /// A key, a keyword or a number.
    Word(&'q str),
    End,
}

impl Tok<'_> {
    /// The token as an error message names it.
    fn describe(self) -> String {
        let op = |cmp| match cmp {
            Cmp::Lt => "<",
            Cmp::Le => "<=",
            Cmp::Gt => ">",
            Cmp::Ge => ">=",
            Cmp::Eq => "==",
            Cmp::Ne => "!=",
        };
        match self {
            Tok::LParen => "'('".to_owned(),
            Tok::RParen => "')'".to_owned(),
            Tok::Op(cmp) => format!("'{}'", op(cmp)),
            Tok::Str(s) => format!("\"{}\"", quote(s)),
            Tok::Word(w) => format!("'{}'", quote(w)),
            Tok::End => "end of query".to_owned(),
        }
    }
}

/// Characters that end a word.
fn is_delimiter(c: char) -> bool {
    c.is_whitespace() || matches!(c, '(' | ')' | '<' | '>' | '=' | '!' | '"')
}

const KEYWORDS: [&str; 7] = ["and", "or", "not", "has", "true", "false", "null"];

struct Lexer<'q> {
    text: &'q str,
    /// Byte offset of the next character.
    pos: usize,
}

impl<'q> Lexer<'q> {
    /// The 1-based character column of byte offset `at`.
    fn column(&self, at: usize) -> usize {
        self.text[..at].chars().count() + 1
    }

    fn error(&self, at: usize, kind: QueryErrorKind) -> QueryError {
        QueryError::new(self.column(at), kind)
    }

    /// The next token and the byte offset where it starts.
    fn next(&mut self) -> Result<(usize, Tok<'q>), QueryError> {
        let rest = &self.text[self.pos..];
        let trimmed = rest.trim_start();
        let start = self.pos + (rest.len() - trimmed.len());
        let mut chars = trimmed.chars();
        let Some(first) = chars.next() else {
            self.pos = start;
            return Ok((start, Tok::End));
        };
        let second = chars.next();
        let (tok, len) = match (first, second) {
            ('(', _) => (Tok::LParen, 1),
            (')', _) => (Tok::RParen, 1),
            ('<', Some('=')) => (Tok::Op(Cmp::Le), 2),
            ('<', _) => (Tok::Op(Cmp::Lt), 1),
            ('>', Some('=')) => (Tok::Op(Cmp::Ge), 2),
            ('>', _) => (Tok::Op(Cmp::Gt), 1),
            ('=', Some('=')) => (Tok::Op(Cmp::Eq), 2),
            ('!', Some('=')) => (Tok::Op(Cmp::Ne), 2),
            ('=' | '!', _) => {
                let found = format!("'{first}'");
                let expected = if first == '=' { "'==' (equality is ==)" } else { "'!='" };
                return Err(self.error(start, QueryErrorKind::Expected { expected, found }));
            }
            ('"', _) => {
                let len = self.string_len(start)?;
                (Tok::Str(&self.text[start + 1..start + len - 1]), len)
            }
            _ => {
                let len = trimmed.find(is_delimiter).unwrap_or(trimmed.len());
                (Tok::Word(&trimmed[..len]), len)
            }
        };
        self.pos = start + len;
        Ok((start, tok))
    }

    /// Bytes of the string literal starting with the quote at `start`, both quotes included.
    fn string_len(&self, start: usize) -> Result<usize, QueryError> {
        let body = &self.text[start + 1..];
        let mut chars = body.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => return Ok(i + 2),
                '\\' => match chars.next() {
                    Some((_, '"' | '\\')) => {}
                    Some((_, escape)) => {
                        let at = start + 1 + i;
                        return Err(self.error(at, QueryErrorKind::BadEscape { escape }));
                    }
                    None => break,
                },
                _ => {}
            }
        }
        Err(self.error(start, QueryErrorKind::UnterminatedString))
    }
}

/// A recursive-descent parser whose recursion is bounded by [`Query::MAX_DEPTH`]: only `(` and
/// `not` recurse, and each counts one level.
struct Parser<'q> {
    lexer: Lexer<'q>,
    /// The current token, and the byte offset where it starts.
    tok: Tok<'q>,
    at: usize,
    depth: usize,
    /// Each key word passed, and the byte offset where it starts.
    keys: Vec<(usize, &'q str)>,
}

impl Parser<'_> {
    fn advance(&mut self) -> Result<(), QueryError> {
        (self.at, self.tok) = self.lexer.next()?;
        Ok(())
    }

    fn expected(&self, expected: &'static str) -> QueryError {
        let found = self.tok.describe();
        self.lexer.error(self.at, QueryErrorKind::Expected { expected, found })
    }

    /// One more level of nesting, refused past [`Query::MAX_DEPTH`].
    fn enter(&mut self) -> Result<(), QueryError> {
        self.depth += 1;
        if self.depth > Query::MAX_DEPTH {
            let limit = Query::MAX_DEPTH;
            return Err(self.lexer.error(self.at, QueryErrorKind::TooDeep { limit }));
        }
        Ok(())
    }

    fn or(&mut self) -> Result<Expr, QueryError> {
        let mut terms = vec![self.and()?];
        while self.tok == Tok::Word("or") {
            self.advance()?;
            terms.push(self.and()?);
        }
        Ok(if terms.len() == 1 { terms.swap_remove(0) } else { Expr::Or(terms) })
    }

    fn and(&mut self) -> Result<Expr, QueryError> {
        let mut terms = vec![self.unary()?];
        while self.tok == Tok::Word("and") {
            self.advance()?;
            terms.push(self.unary()?);
        }
        Ok(if terms.len() == 1 { terms.swap_remove(0) } else { Expr::And(terms) })
    }

    fn unary(&mut self) -> Result<Expr, QueryError> {
        match self.tok {
            Tok::Word("not") => {
                self.enter()?;
                self.advance()?;
                let inner = self.unary()?;
                self.depth -= 1;
                Ok(Expr::Not(Box::new(inner)))
            }
            Tok::LParen => {
                self.enter()?;
                self.advance()?;
                let inner = self.or()?;
                if self.tok != Tok::RParen {
                    return Err(self.expected("'and', 'or' or ')'"));
                }
                self.advance()?;
                self.depth -= 1;
                Ok(inner)
            }
            Tok::Word("has") => {
                self.advance()?;
                let key = self.key("a key")?;
                Ok(Expr::Test(KeyCursor::new(key), Test::Has))
            }
            _ => self.test(),
        }
    }

    /// The key at the current token, which is then passed.
    fn key(&mut self, expected: &'static str) -> Result<Key, QueryError> {
        let Tok::Word(word) = self.tok else {
            return Err(self.expected(expected));
        };
        if KEYWORDS.contains(&word) {
            return Err(self.expected(expected));
        }
        // A word is never empty, so the one way it can fail to be a key is a bad `#` form.
        let key = word
            .parse::<Key>()
            .map_err(|_| self.lexer.error(self.at, QueryErrorKind::BadHash { key: quote(word) }))?;
        self.keys.push((self.at, word));
        self.advance()?;
        Ok(key)
    }

    /// `KEY` or `KEY op literal`.
    fn test(&mut self) -> Result<Expr, QueryError> {
        let cursor = KeyCursor::new(self.key("a key, 'not', 'has' or '('")?);
        let Tok::Op(cmp) = self.tok else {
            return Ok(Expr::Test(cursor, Test::IsTrue));
        };
        self.advance()?;
        let equal = cmp == Cmp::Eq;
        let test = match self.tok {
            Tok::Word(word @ ("true" | "false")) if cmp.is_equality() => {
                Test::Bool { value: word == "true", equal }
            }
            Tok::Str(text) if cmp.is_equality() => Test::Str { value: unescape(text), equal },
            Tok::Word("null") if cmp.is_equality() => Test::Null { equal },
            Tok::Word(word) if !KEYWORDS.contains(&word) => match word.parse::<f32>() {
                Ok(x) => Test::Float(cmp, x),
                Err(_) => return Err(self.expected(literal_expected(cmp))),
            },
            _ => return Err(self.expected(literal_expected(cmp))),
        };
        self.advance()?;
        Ok(Expr::Test(cursor, test))
    }
}

/// What may follow `cmp`.
fn literal_expected(cmp: Cmp) -> &'static str {
    if cmp.is_equality() { "a number, a string, true, false or null" } else { "a number" }
}

/// A string literal's text with `\"` and `\\` undone (the lexer checked there are no others).
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        out.push(if c == '\\' { chars.next().unwrap_or('\\') } else { c });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        Query::parse(text).unwrap_err().to_string()
    }

    #[test]
    fn errors_name_the_column_and_what_was_expected() {
        assert_eq!(err(""), "column 1: expected a key, 'not', 'has' or '(', found end of query");
        assert_eq!(err("a <"), "column 4: expected a number, found end of query");
        assert_eq!(
            err("a == and"),
            "column 6: expected a number, a string, true, false or null, found 'and'"
        );
        assert_eq!(err("a < \"x\""), "column 5: expected a number, found \"x\"");
        assert_eq!(err("a b"), "column 3: expected 'and', 'or' or the end of the query, found 'b'");
        assert_eq!(err("a = 1"), "column 3: expected '==' (equality is ==), found '='");
        assert_eq!(err("a ! b"), "column 3: expected '!=', found '!'");
        assert_eq!(err("(a"), "column 3: expected 'and', 'or' or ')', found end of query");
        assert_eq!(err("a)"), "column 2: expected 'and', 'or' or the end of the query, found ')'");
        assert_eq!(err("not"), "column 4: expected a key, 'not', 'has' or '(', found end of query");
        assert_eq!(err("a == \"open"), "column 6: the string has no closing quote");
        assert_eq!(
            err(r#"a == "x\n""#),
            "column 8: unknown escape '\\n' (a string knows only \\\" and \\\\)"
        );
        assert_eq!(
            err("#12 and b"),
            "column 1: bad key '#12': a raw key is # and 8 hex digits, as in #1a2b3c4d"
        );
        // Columns count characters, not bytes.
        assert_eq!(err("é < x"), "column 5: expected a number, found 'x'");
        // Control characters are escaped: a message is one line.
        assert_eq!(
            err("a\u{1} b == \"x\ny\u{0}\""),
            "column 4: expected 'and', 'or' or the end of the query, found 'b'"
        );
        assert_eq!(
            err("a \"x\ny\u{0}\""),
            "column 3: expected 'and', 'or' or the end of the query, found \"x\\ny\\0\""
        );
        // Long text is cut short.
        let long = format!("a < {}", "x".repeat(1000));
        assert_eq!(
            err(&long),
            format!("column 5: expected a number, found '{}...'", "x".repeat(24))
        );
    }

    #[test]
    fn nesting_stops_at_the_limit_with_a_clear_error() {
        let ok = format!("{}a{}", "(".repeat(Query::MAX_DEPTH), ")".repeat(Query::MAX_DEPTH));
        assert!(Query::parse(&ok).is_ok());
        let deep =
            format!("{}a{}", "(".repeat(Query::MAX_DEPTH + 1), ")".repeat(Query::MAX_DEPTH + 1));
        let e = Query::parse(&deep).unwrap_err();
        assert_eq!(e.column(), Query::MAX_DEPTH + 1);
        assert_eq!(*e.kind(), QueryErrorKind::TooDeep { limit: Query::MAX_DEPTH });
        let nots = format!("{}a", "not ".repeat(Query::MAX_DEPTH + 1));
        assert_eq!(Query::parse(&nots).unwrap_err().column(), 4 * Query::MAX_DEPTH + 1);
        // Sequences do not nest: a long chain of `and`s is one level.
        let chain = vec!["a"; 10_000].join(" and ");
        assert!(Query::parse(&chain).is_ok());
    }

    #[test]
    fn strings_undo_their_escapes() {
        let q = Query::parse(r#"name == "say \"hi\" \\ bye""#).unwrap();
        let Expr::Test(_, Test::Str { value, equal: true }) = q.root else { panic!("{q:?}") };
        assert_eq!(value, r#"say "hi" \ bye"#);
    }
}
