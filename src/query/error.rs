//! Why a query's text does not parse: [`QueryError`].

use std::fmt;

/// Why a query's text does not parse: where (the 1-based column, in characters) and what.
///
/// # Examples
///
/// ```
/// use datacomp::Query;
/// use datacomp::query::QueryErrorKind;
///
/// let err = Query::parse("has").unwrap_err();
/// assert_eq!(err.column(), 4);
/// assert!(matches!(err.kind(), QueryErrorKind::Expected { expected: "a key", .. }));
/// assert_eq!(err.to_string(), "column 4: expected a key, found end of query");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryError {
    column: usize,
    kind: QueryErrorKind,
}

/// The kinds of [`QueryError`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum QueryErrorKind {
    /// A token that cannot stand where it is.
    Expected {
        /// What could have stood there.
        expected: &'static str,
        /// What did, as the message shows it (long text cut short).
        found: String,
    },
    /// Parentheses and `not`s nested deeper than [`Query::MAX_DEPTH`](super::Query::MAX_DEPTH).
    TooDeep {
        /// [`Query::MAX_DEPTH`](super::Query::MAX_DEPTH).
        limit: usize,
    },
    /// A string with no closing quote.
    UnterminatedString,
    /// A backslash in a string followed by something other than `"` or `\`.
    BadEscape {
        /// The character after the backslash.
        escape: char,
    },
    /// `#` followed by something other than 8 hex digits.
    BadHash {
        /// The key as written (long text cut short).
        key: String,
    },
}

impl QueryError {
    /// The error at 1-based character `column`.
    pub(super) fn new(column: usize, kind: QueryErrorKind) -> QueryError {
        QueryError { column, kind }
    }

    /// The 1-based column, in characters, where the problem starts.
    #[must_use]
    pub fn column(&self) -> usize {
        self.column
    }

    /// What the problem is.
    #[must_use]
    pub fn kind(&self) -> &QueryErrorKind {
        &self.kind
    }
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: ", self.column)?;
        match &self.kind {
            QueryErrorKind::Expected { expected, found } => {
                write!(f, "expected {expected}, found {found}")
            }
            QueryErrorKind::TooDeep { limit } => {
                write!(f, "parentheses and 'not's nest deeper than {limit} levels")
            }
            QueryErrorKind::UnterminatedString => f.write_str("the string has no closing quote"),
            QueryErrorKind::BadEscape { escape } => {
                let escape = escape.escape_debug();
                write!(f, "unknown escape '\\{escape}' (a string knows only \\\" and \\\\)")
            }
            QueryErrorKind::BadHash { key } => {
                write!(f, "bad key '{key}': a raw key is # and 8 hex digits, as in #1a2b3c4d")
            }
        }
    }
}

impl std::error::Error for QueryError {}
