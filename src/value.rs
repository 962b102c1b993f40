//! The six value types a blob stores, borrowed ([`Value`]) and owned ([`OwnedValue`]).

use std::fmt;

/// A value read from a blob, borrowing the blob's bytes.
///
/// The restricted format of Bitsquid's `DataComponent`: booleans, floats, UTF-8 strings and arrays
/// of floats, and `null` (a field that exists with no value, as real fixtures write
/// `"firmness": null`). Objects are flattened into dotted keys, so there is no object value.
///
/// # Examples
///
/// ```
/// use datacomp::{Blob, Value};
///
/// let mut sheet = Blob::new();
/// sheet.set("name", "The One").unwrap();
/// sheet.set("stats.health", 100.0).unwrap();
/// assert_eq!(sheet.get("name"), Some(Value::Str("The One")));
/// assert_eq!(sheet.get("stats.health"), Some(Value::Float(100.0)));
/// ```
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Value<'a> {
    /// A boolean.
    Bool(bool),
    /// A 32-bit float (every JSON number is stored as one).
    Float(f32),
    /// A UTF-8 string.
    Str(&'a str),
    /// An array of 32-bit floats.
    Floats(&'a [f32]),
    /// `null`: the key is present and holds no value (JSON's `null`, which a lenient import
    /// keeps). It takes no bytes but its header entry.
    Null,
    /// A tombstone (format 1.5): the key is absent here, though the entity's prototype has
    /// it. What an instance stores to remove an inherited key
    /// ([`Store::remove_inherited`](crate::Store::remove_inherited)); a resolved read
    /// ([`Store::resolved`](crate::Store::resolved)) stops at it and finds nothing. Like
    /// `Null`, it takes no bytes but its header entry.
    Tombstone,
}

/// The type of a [`Value`], without its data.
///
/// Its discriminant is the type tag stored in a blob's header.
///
/// # Examples
///
/// ```
/// use datacomp::{Value, ValueType};
///
/// assert_eq!(Value::Str("x").value_type(), ValueType::Str);
/// assert_eq!(ValueType::Floats.to_string(), "floats");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[repr(u8)]
pub enum ValueType {
    /// [`Value::Bool`].
    Bool = 1,
    /// [`Value::Float`].
    Float = 2,
    /// [`Value::Str`].
    Str = 3,
    /// [`Value::Floats`].
    Floats = 4,
    /// [`Value::Null`] (format 1.4; tag 4 was taken by `Floats` since 1.0).
    Null = 5,
    /// [`Value::Tombstone`] (format 1.5).
    Tombstone = 6,
}

impl ValueType {
    /// The type with the given stored tag, if the tag is one.
    #[inline]
    pub(crate) const fn from_tag(tag: u8) -> Option<ValueType> {
        match tag {
            1 => Some(ValueType::Bool),
            2 => Some(ValueType::Float),
            3 => Some(ValueType::Str),
            4 => Some(ValueType::Floats),
            5 => Some(ValueType::Null),
            6 => Some(ValueType::Tombstone),
            _ => None,
        }
    }

    /// The lowercase name used in messages and on the command line.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::ValueType;
    ///
    /// assert_eq!(ValueType::Bool.name(), "bool");
    /// ```
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            ValueType::Bool => "bool",
            ValueType::Float => "float",
            ValueType::Str => "string",
            ValueType::Floats => "floats",
            ValueType::Null => "null",
            ValueType::Tombstone => "tombstone",
        }
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl<'a> Value<'a> {
    /// The type of this value.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Value, ValueType};
    ///
    /// assert_eq!(Value::Float(1.0).value_type(), ValueType::Float);
    /// ```
    #[must_use]
    pub const fn value_type(&self) -> ValueType {
        match self {
            Value::Bool(_) => ValueType::Bool,
            Value::Float(_) => ValueType::Float,
            Value::Str(_) => ValueType::Str,
            Value::Floats(_) => ValueType::Floats,
            Value::Null => ValueType::Null,
            Value::Tombstone => ValueType::Tombstone,
        }
    }

    /// How many bytes this value takes in a blob's payload region.
    ///
    /// Booleans, floats and `null` live in the header and take none. A string or float array takes a
    /// 4-byte length and its data, rounded up to a multiple of 4 bytes. Summing this over the
    /// values gives the `payload_bytes` for [`Blob::with_capacity`](crate::Blob::with_capacity).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Value;
    ///
    /// assert_eq!(Value::Float(1.0).payload_bytes(), 0);
    /// assert_eq!(Value::Null.payload_bytes(), 0);
    /// assert_eq!(Value::Str("The One").payload_bytes(), 4 + 8);
    /// assert_eq!(Value::Floats(&[1.0, 2.0]).payload_bytes(), 4 + 8);
    /// ```
    #[must_use]
    pub const fn payload_bytes(&self) -> usize {
        block_bytes(self.value_type(), payload_len(*self)) as usize
    }

    /// The boolean, if this is one.
    #[must_use]
    pub const fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// The float, if this is one.
    #[must_use]
    pub const fn as_float(&self) -> Option<f32> {
        match *self {
            Value::Float(f) => Some(f),
            _ => None,
        }
    }

    /// The string, if this is one.
    #[must_use]
    pub const fn as_str(&self) -> Option<&'a str> {
        match *self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The float array, if this is one.
    #[must_use]
    pub const fn as_floats(&self) -> Option<&'a [f32]> {
        match *self {
            Value::Floats(f) => Some(f),
            _ => None,
        }
    }

    /// Whether this is [`Value::Null`].
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Value;
    ///
    /// assert!(Value::Null.is_null());
    /// assert!(!Value::Float(0.0).is_null());
    /// ```
    #[must_use]
    pub const fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Whether this is [`Value::Tombstone`]: a key an instance removed from what it inherits.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Value;
    ///
    /// assert!(Value::Tombstone.is_tombstone());
    /// assert!(!Value::Null.is_tombstone());
    /// ```
    #[must_use]
    pub const fn is_tombstone(&self) -> bool {
        matches!(self, Value::Tombstone)
    }

    /// Copies the value into an [`OwnedValue`].
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{OwnedValue, Value};
    ///
    /// assert_eq!(Value::Str("hi").to_owned_value(), OwnedValue::Str("hi".to_owned()));
    /// ```
    #[must_use]
    pub fn to_owned_value(&self) -> OwnedValue {
        match *self {
            Value::Bool(b) => OwnedValue::Bool(b),
            Value::Float(f) => OwnedValue::Float(f),
            Value::Str(s) => OwnedValue::Str(s.to_owned()),
            Value::Floats(f) => OwnedValue::Floats(f.to_vec()),
            Value::Null => OwnedValue::Null,
            Value::Tombstone => OwnedValue::Tombstone,
        }
    }

    /// Whether two values are the same data: floats compare by bit pattern, so a NaN equals
    /// itself and `0.0` differs from `-0.0`. This is what a blob's equality uses.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Value;
    ///
    /// assert!(Value::Float(f32::NAN).is_identical(&Value::Float(f32::NAN)));
    /// assert!(!Value::Float(0.0).is_identical(&Value::Float(-0.0)));
    /// ```
    #[must_use]
    pub fn is_identical(&self, other: &Value<'_>) -> bool {
        match (*self, *other) {
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Float(a), Value::Float(b)) => a.to_bits() == b.to_bits(),
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::Floats(a), Value::Floats(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
            }
            (Value::Null, Value::Null) | (Value::Tombstone, Value::Tombstone) => true,
            _ => false,
        }
    }
}

/// An owned copy of a [`Value`]: what a `HashMap<Key, _>` model or an edit buffer holds.
///
/// # Examples
///
/// ```
/// use datacomp::{Blob, OwnedValue};
///
/// let mut sheet = Blob::new();
/// sheet.set("name", &OwnedValue::Str("The One".into())).unwrap();
/// assert_eq!(sheet.get("name").map(|v| v.to_owned_value()), Some(OwnedValue::Str("The One".into())));
/// ```
#[derive(Clone, PartialEq, Debug)]
pub enum OwnedValue {
    /// A boolean.
    Bool(bool),
    /// A 32-bit float.
    Float(f32),
    /// A UTF-8 string.
    Str(String),
    /// An array of 32-bit floats.
    Floats(Vec<f32>),
    /// `null`: present, with no value.
    Null,
    /// A tombstone: absent here, though a prototype has it ([`Value::Tombstone`]).
    Tombstone,
}

impl OwnedValue {
    /// Borrows the value as a [`Value`].
    #[must_use]
    pub fn as_value(&self) -> Value<'_> {
        match self {
            OwnedValue::Bool(b) => Value::Bool(*b),
            OwnedValue::Float(f) => Value::Float(*f),
            OwnedValue::Str(s) => Value::Str(s),
            OwnedValue::Floats(f) => Value::Floats(f),
            OwnedValue::Null => Value::Null,
            OwnedValue::Tombstone => Value::Tombstone,
        }
    }
}

impl From<Value<'_>> for OwnedValue {
    fn from(value: Value<'_>) -> OwnedValue {
        value.to_owned_value()
    }
}

/// Anything [`Blob::set`](crate::Blob::set) accepts: it lends itself as a [`Value`].
///
/// Implemented for `bool`, `f32`, `f64` (rounded to the nearest `f32`), every integer type
/// (`i8` .. `i64`, `u8` .. `u64`, `isize`, `usize`: stored as `f32`, and refused by a write when
/// `f32` cannot hold the number exactly), `str`, `String`, `[f32]`, `Vec<f32>`, `[f32; N]`,
/// [`Value`] and [`OwnedValue`], and for references to any of them.
///
/// # Examples
///
/// ```
/// use datacomp::{AsValue, Blob, BlobError, Value};
///
/// assert_eq!(3_i32.as_value(), Value::Float(3.0));
/// assert_eq!([1.0_f32, 2.0].as_value(), Value::Floats(&[1.0, 2.0]));
/// assert_eq!(String::from("hi").as_value(), Value::Str("hi"));
///
/// let mut sheet = Blob::new();
/// let gold: u32 = 16_777_216; // 2^24: every whole number up to it is an exact f32
/// sheet.set("gold", gold)?;
/// let err = sheet.set("gold", gold + 1).unwrap_err();
/// assert_eq!(err, BlobError::InexactInteger { integer: "16777217".into() });
/// assert_eq!(sheet.get_float("gold"), Some(16_777_216.0), "unchanged");
/// # Ok::<(), BlobError>(())
/// ```
pub trait AsValue {
    /// This value as a [`Value`] (an integer as its nearest `f32`).
    fn as_value(&self) -> Value<'_>;

    /// The whole number this value was given as, if it is of an integer type. A write
    /// refuses, changing nothing, an integer that `f32` cannot hold exactly (one past 2^24 in
    /// magnitude that is not a multiple of the `f32` spacing there), rather than store
    /// [`as_value`](AsValue::as_value)'s nearest `f32`, as strict JSON import refuses the
    /// number `16777217`. `None` by default.
    fn as_integer(&self) -> Option<i128> {
        None
    }
}

impl AsValue for bool {
    fn as_value(&self) -> Value<'_> {
        Value::Bool(*self)
    }
}

impl AsValue for f32 {
    fn as_value(&self) -> Value<'_> {
        Value::Float(*self)
    }
}

#[allow(clippy::cast_precision_loss)]
impl AsValue for f64 {
    /// Rounds to the nearest `f32`.
    fn as_value(&self) -> Value<'_> {
        Value::Float(*self as f32)
    }
}

impl AsValue for str {
    fn as_value(&self) -> Value<'_> {
        Value::Str(self)
    }
}

impl AsValue for String {
    fn as_value(&self) -> Value<'_> {
        Value::Str(self)
    }
}

impl AsValue for [f32] {
    fn as_value(&self) -> Value<'_> {
        Value::Floats(self)
    }
}

impl AsValue for Vec<f32> {
    fn as_value(&self) -> Value<'_> {
        Value::Floats(self)
    }
}

impl<const N: usize> AsValue for [f32; N] {
    fn as_value(&self) -> Value<'_> {
        Value::Floats(self)
    }
}

impl AsValue for Value<'_> {
    fn as_value(&self) -> Value<'_> {
        *self
    }
}

impl AsValue for OwnedValue {
    fn as_value(&self) -> Value<'_> {
        OwnedValue::as_value(self)
    }
}

impl<T: AsValue + ?Sized> AsValue for &T {
    fn as_value(&self) -> Value<'_> {
        (**self).as_value()
    }

    fn as_integer(&self) -> Option<i128> {
        (**self).as_integer()
    }
}

// Integers (`set("gold", some_u32)`): stored as their nearest `f32`, and refused by a write
// when that is not the integer itself (see `AsValue::as_integer`).

/// `AsValue` for integer types: the nearest `f32`, and the integer for the write's check.
macro_rules! integer_as_value {
    ($($int:ty),*) => {$(
        #[allow(clippy::cast_precision_loss, clippy::cast_lossless)]
        impl AsValue for $int {
            /// The nearest `f32` (exact up to 2^24 in magnitude; a write refuses an integer
            /// it is not exact for).
            fn as_value(&self) -> Value<'_> {
                Value::Float(*self as f32)
            }

            fn as_integer(&self) -> Option<i128> {
                Some(*self as i128)
            }
        }
    )*};
}

integer_as_value!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

/// The value a write stores for `value`, or the integer it refuses because `f32` cannot hold
/// it exactly (see `blob::write::stored_value`, which every write calls).
#[inline]
pub(crate) fn exact_value<V: AsValue + ?Sized>(value: &V) -> Result<Value<'_>, i128> {
    let stored = value.as_value();
    match (value.as_integer(), stored) {
        // `f32 as i128` is exact for a whole f32 (every f32 past 2^23 is one, and |n| < 2^64
        // keeps it far from i128's range): the integer is held when it comes back unchanged.
        #[allow(clippy::cast_possible_truncation)]
        (Some(integer), Value::Float(float)) if float as i128 != integer => Err(integer),
        _ => Ok(stored),
    }
}

/// Bytes taken in the payload region by a payload of `len` (string bytes or float elements).
pub(crate) const fn block_bytes(ty: ValueType, len: u64) -> u64 {
    match ty {
        ValueType::Str => 4 + len.next_multiple_of(4),
        ValueType::Floats => 4 + 4 * len,
        ValueType::Bool | ValueType::Float | ValueType::Null | ValueType::Tombstone => 0,
    }
}

/// Length stored in a payload block: bytes of a string, elements of a float array.
pub(crate) const fn payload_len(value: Value<'_>) -> u64 {
    match value {
        Value::Bool(_) | Value::Float(_) | Value::Null | Value::Tombstone => 0,
        Value::Str(s) => s.len() as u64,
        Value::Floats(f) => f.len() as u64,
    }
}
