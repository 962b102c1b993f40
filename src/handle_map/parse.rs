//! [`Id`]'s `FromStr`: its `Display` form read back.
//!
//! It lives apart from `id.rs` because it returns a [`HandleError`], which holds `Id`s: in
//! `id.rs` the two files would import each other.

use std::str::FromStr;

use super::error::HandleError;
use super::id::{FREE_BIT, Id};

impl FromStr for Id {
    type Err = HandleError;

    /// Parses the `Display` form: `12v3`, `12v3t7`, `12v3t7f`, or `null`.
    ///
    /// # Errors
    ///
    /// [`HandleError::Parse`] for any other text.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{HandleError, Id};
    ///
    /// assert_eq!("null".parse::<Id>(), Ok(Id::NULL));
    /// let err = "12v".parse::<Id>().unwrap_err();
    /// assert_eq!(err, HandleError::Parse { input: "12v".into() });
    /// assert_eq!(
    ///     err.to_string(),
    ///     "\"12v\" is not an id: expected INDEXvGENERATION, then tTYPE and f if set (as in \
    ///      12v3t7), or null"
    /// );
    /// ```
    fn from_str(s: &str) -> Result<Id, HandleError> {
        let error = || HandleError::Parse { input: s.to_owned() };
        if s == "null" {
            return Ok(Id::NULL);
        }
        let (rest, free) = match s.strip_suffix('f') {
            Some(rest) => (rest, FREE_BIT),
            None => (s, 0),
        };
        let (rest, type_id) = match rest.split_once('t') {
            Some((rest, ty)) => (rest, number::<u16>(ty).filter(|&t| t <= Id::MAX_TYPE_ID)),
            None => (rest, Some(0)),
        };
        let (index, generation) = rest.split_once('v').ok_or_else(error)?;
        let (Some(index), Some(generation), Some(type_id)) =
            (number::<u32>(index), number::<u16>(generation), type_id)
        else {
            return Err(error());
        };
        Ok(Id::from_bits(Id::new(index, generation, type_id).to_bits() | free))
    }
}

/// A decimal number with digits only: no sign, no spaces.
fn number<N: FromStr>(s: &str) -> Option<N> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}
