//! Numbers as JSON holds them: the text an `f32` is written as, and the rule that keeps an
//! import from changing a number silently.
//!
//! Writing: a finite `f32` is written in the shortest form that reads back as the same `f32`
//! (the digits `serde_json` writes), without a fraction when it is whole: `17`, `0.1`,
//! `123456790`, `1e+20`. Minus zero keeps its sign as `-0.0`.
//!
//! Reading: a number is stored as the nearest `f32`. That nearest `f32` "holds" the number when
//! the difference is only `f32`'s rounding of a fraction (`0.1`, `3.14159265358979`), or when a
//! whole number is held exactly or is written as that `f32` is written (`123456790`: export
//! writes that `f32` so). Otherwise the number changes beyond its rounding, and strict import
//! refuses it: a whole number f32 does not hold (`16777217` would become `16777216`), a nonzero
//! number that would become zero (`1e-50`), a number past `f32`'s range (`1e39`).
//!
//! A fraction held within rounding may still *lose digits*: the nearest `f32`, written in its
//! shortest form, is another decimal than the one read (`3.141592653589793` is written back as
//! `3.1415927`; `0.1` and `19.99` come back as they were). Every import reports such a number,
//! and [`ImportOptions::exact_numbers`](super::ImportOptions::exact_numbers) refuses it.

use std::fmt;

/// An `f32` as JSON text, in the form every export and the `datacomp` command write: the
/// shortest form that reads back as the same `f32`, and no fraction on a whole number. A NaN
/// or infinity has no JSON form: it displays as `NaN`, `inf` or `-inf`, and serializes as
/// `null` (the JSON exports refuse such a value before writing, naming its entity and key).
///
/// # Examples
///
/// ```
/// use datacomp::text::JsonF32;
///
/// let shown: Vec<String> = [17.0, 0.1, -2.5, 123_456_792.0, 1e20, 1e-7, -0.0]
///     .into_iter()
///     .map(|x| JsonF32(x).to_string())
///     .collect();
/// assert_eq!(shown, ["17", "0.1", "-2.5", "123456790", "1e+20", "1e-7", "-0.0"]);
/// assert_eq!(serde_json::to_string(&[JsonF32(17.0), JsonF32(0.5)])?, "[17,0.5]");
/// assert_eq!(JsonF32(f32::NAN).to_string(), "NaN");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JsonF32(pub f32);

/// Room for the longest form: `-1.17549435e-38` and the like.
const TEXT_BYTES: usize = 32;

/// Whole numbers up to this magnitude are written as plain digits (by `serde_json`'s float
/// writer, with `.0` after them); larger ones with an exponent (`1e+13`).
const PLAIN_DIGITS_BELOW: f32 = 1e13;

/// The largest magnitude below which every whole `f32` is its own shortest form.
const EXACT_WHOLE: f32 = 16_777_216.0;

/// The shortest text of finite `x`, without a fraction when it is whole, written into `buf`.
fn shortest(x: f32, buf: &mut [u8; TEXT_BYTES]) -> &str {
    let mut rest = &mut buf[..];
    // serde_json writes a finite f32 in its shortest form that reads back (and writing into a
    // slice this long cannot fail).
    let _ = serde_json::to_writer(&mut rest, &x);
    let len = TEXT_BYTES - rest.len();
    let text = std::str::from_utf8(&buf[..len]).unwrap_or_default();
    // Minus zero keeps its fraction: "-0" would read back as -0.0 too, but no serializer can
    // write it, and compact and pretty exports must agree.
    if x == 0.0 && x.is_sign_negative() {
        return text;
    }
    text.strip_suffix(".0").unwrap_or(text)
}

impl JsonF32 {
    /// The whole number this `f32` is written as, when it is written as plain digits.
    fn as_digits(self) -> Option<i64> {
        let x = self.0;
        if x.fract() != 0.0 || x.abs() >= PLAIN_DIGITS_BELOW || (x == 0.0 && x.is_sign_negative()) {
            return None;
        }
        if x.abs() <= EXACT_WHOLE {
            return Some(x as i64);
        }
        // Past 2^24 the shortest form may be rounder than the value: 123456792 is `123456790`.
        let mut buf = [0; TEXT_BYTES];
        shortest(x, &mut buf).parse().ok()
    }
}

impl fmt::Display for JsonF32 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let x = self.0;
        if x.is_nan() {
            return f.write_str("NaN");
        }
        if x.is_infinite() {
            return f.write_str(if x > 0.0 { "inf" } else { "-inf" });
        }
        let mut buf = [0; TEXT_BYTES];
        f.write_str(shortest(x, &mut buf))
    }
}

impl serde::Serialize for JsonF32 {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.as_digits() {
            Some(whole) => serializer.serialize_i64(whole),
            // serde_json writes a finite f32 in the same shortest form, and a non-finite one as
            // null.
            None => serializer.serialize_f32(self.0),
        }
    }
}

/// An `f64` read from JSON, shown in messages as it was most likely written: to 15 significant
/// digits (`serde_json` reads `1e-50` as `9.999999999999999e-51`), in the shortest form, with no
/// `.0` on a whole number: `1e-50`, `16777217`, `1.2345678912e+29`.
pub(crate) struct JsonF64(pub(crate) f64);

impl fmt::Display for JsonF64 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits15: f64 = format!("{:.14e}", self.0).parse().unwrap_or(self.0);
        let text = serde_json::to_string(&digits15).unwrap_or_default();
        f.write_str(text.strip_suffix(".0").unwrap_or(&text))
    }
}

/// How a number read from JSON fits an `f32`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Fit {
    /// The nearest `f32` holds it, written back as the same decimal.
    Holds(f32),
    /// The nearest `f32` holds it within `f32`'s rounding of a fraction, but is written back
    /// as another decimal: digits are lost (`3.141592653589793` as `3.1415927`).
    LosesDigits(f32),
    /// The nearest `f32` changes it beyond rounding: a whole number not held exactly, or a
    /// nonzero number that becomes zero.
    Changes(f32),
    /// Past `f32`'s range.
    OutOfRange,
}

/// How `n`, read from JSON as an `f64` (a number with a fraction or an exponent, or an integer
/// past 64 bits), fits an `f32`.
#[allow(clippy::float_cmp, clippy::cast_possible_truncation, clippy::cast_precision_loss)]
// Exact compares: whether f32 holds n exactly.
pub(crate) fn fit_f64(n: f64) -> Fit {
    // Past f32's range means rounding to infinity: the shortest decimal form of f32::MAX,
    // 3.4028235e38, is a little above it as an f64 and must still read back.
    let x = n as f32;
    // (An infinite n, which a reader that parses past f64's range hands over, is too.)
    if !x.is_finite() {
        return Fit::OutOfRange;
    }
    // Held exactly (most numbers in game data: whole ones, halves, quarters). A whole one is
    // written back as itself (as `fit_integer` holds it); a fraction is checked below (an
    // exact f32 may still be written back shorter). Past 2^24 every f32 is whole.
    let wide = f64::from(x);
    if wide == n && (wide.abs() > f64::from(EXACT_WHOLE) || (n as i64) as f64 == n) {
        return Fit::Holds(x);
    }
    // Halves and quarters below 2^19, held exactly: their decimal (`8.5`, `-33.25`) is the
    // shortest in x's rounding interval, since the nearest decimal with a digit less is
    // 0.05 or 0.005 away and x's interval is at most 2^-5 wide there. (`n * 4` is exact.)
    let quarters = n * 4.0;
    if wide == n && n.abs() < 524_288.0 && (quarters as i64) as f64 == quarters {
        return Fit::Holds(x);
    }
    if x == 0.0 {
        // n is not zero, or x would hold it.
        return Fit::Changes(x);
    }
    // A fraction is rounded to f32's precision: held within rounding, digits kept or lost.
    // (Past 2^52 every f64 is whole; up to 2^24 a whole f64 is held exactly, so it was done
    // above.)
    if n.abs() <= f64::from(EXACT_WHOLE) || n.fract() != 0.0 {
        return if keeps_digits(n, x) { Fit::Holds(x) } else { Fit::LosesDigits(x) };
    }
    // A whole number f32 does not hold: fine if it is written as x is written. serde_json
    // reads long exponents to within an ulp or two of an f64, so "as written" is compared
    // within that.
    let mut buf = [0; TEXT_BYTES];
    let written: f64 = shortest(x, &mut buf).parse().unwrap_or(f64::NAN);
    if (written - n).abs() <= written.abs() * f64::EPSILON * 4.0 {
        Fit::Holds(x)
    } else {
        Fit::Changes(x)
    }
}

/// Powers of ten an `f64` holds exactly.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Whether `x`, the `f32` nearest to the nonzero `n` (read from JSON as an `f64`), is written
/// back (in its shortest form) as the decimal `n` is: as the same `f64`. Below 10^-13 and past 10^22
/// `serde_json` may read a decimal one `f64` step away from the nearest (it scales by powers
/// of ten that an `f64` does not hold), so there the one next to it counts as the same too.
#[allow(clippy::float_cmp, clippy::cast_possible_truncation, clippy::cast_precision_loss)]
fn keeps_digits(n: f64, x: f32) -> bool {
    let bits = n.to_bits();
    let slack = u64::from(!(1e-13..1e22).contains(&n.abs()));
    let close = |a: f64| a.to_bits().abs_diff(bits) <= slack;
    // Most fractions in game data have few digits (`0.5`, `19.99`, `-33.25`). A decimal of
    // at most 6 significant digits in f32's normal range is written back as itself (FLT_DIG:
    // two such decimals never round to one f32): so if `n` reads as `m / 10^k` with |m| at
    // most 10^6, nothing is lost. `m / 10^k` with both exact is one correctly rounded
    // division: the f64 nearest to the decimal. (`n` is not whole, or it was held above: k
    // starts at 1. Rounded by a cast, not `f64::round`, a library call on baseline x86-64.)
    if (1e-6..1e6).contains(&n.abs()) {
        let half = 0.5_f64.copysign(n);
        for &pow in &POW10[1..] {
            let t = n * pow;
            if t.abs() >= 1e6 {
                break;
            }
            if close(((t + half) as i64) as f64 / pow) {
                return true;
            }
        }
    }
    // Otherwise, compare with the shortest form itself.
    let mut buf = [0; TEXT_BYTES];
    shortest(x, &mut buf).parse::<f64>().is_ok_and(close)
}

/// How the integer `n` (read exactly from JSON digits) fits an `f32`.
#[allow(clippy::cast_precision_loss)] // The cast rounds to nearest: that is the point.
pub(crate) fn fit_integer(n: i128) -> Fit {
    // Up to 2^24 every integer is held: one cheap cast (an i128 one is a library call).
    if let Ok(small) = i32::try_from(n)
        && small.unsigned_abs() <= 1 << 24
    {
        return Fit::Holds(small as f32);
    }
    let x = n as f32;
    // |n| < 2^64, far inside f32's range, and x is whole: the casts back are exact.
    if x as i128 == n {
        return Fit::Holds(x);
    }
    let mut buf = [0; TEXT_BYTES];
    if whole_text(shortest(x, &mut buf)) == Some(n) { Fit::Holds(x) } else { Fit::Changes(x) }
}

/// The whole number a decimal text (`123456790`, `1.2345679e+19`) means, if it is one that
/// fits an `i128`.
fn whole_text(text: &str) -> Option<i128> {
    let (mantissa, exponent) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().ok()?),
        None => (text, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: i128 = format!("{int}{frac}").parse().ok()?;
    let shift = exponent.checked_sub(i32::try_from(frac.len()).ok()?)?;
    if shift < 0 {
        let divisor = 10i128.checked_pow(shift.unsigned_abs())?;
        return (digits % divisor == 0).then(|| digits / divisor);
    }
    digits.checked_mul(10i128.checked_pow(shift.unsigned_abs())?)
}

/// Where a number literal of `text` starts and ends, and what it is: the literals `serde_json`
/// cannot hand to an importer as they are (past `f64`'s range: an error; nonzero but read as
/// zero: unseen), to be read again from a copy of the text where each is replaced.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Extreme {
    /// Byte range of the literal in the text.
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// Past `f64`'s range (else: nonzero, and zero as an `f32`).
    pub(crate) huge: bool,
}

/// The number literals of `text` that are past `f64`'s range, and (with `tiny`) those that are
/// nonzero but zero as an `f32`, in text order. One pass over the bytes: strings are skipped,
/// and only literals with an exponent or a leading `0.`, or long ones, are parsed.
pub(crate) fn extremes(text: &str, tiny: bool) -> Vec<Extreme> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < bytes.len()
                    && matches!(bytes[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
                let literal = &text[start..i];
                if !is_json_number(literal) {
                    // Not JSON: the parse reports it, and no stand-in may hide it.
                    continue;
                }
                let digits = literal.trim_start_matches('-');
                let suspect = literal.len() > 24
                    || literal.contains(['e', 'E'])
                    || (tiny && digits.starts_with("0."));
                if !suspect {
                    continue;
                }
                let Ok(wide) = literal.parse::<f64>() else { continue };
                let mantissa = digits.split(['e', 'E']).next().unwrap_or_default();
                let nonzero = mantissa.bytes().any(|b| matches!(b, b'1'..=b'9'));
                if wide.is_infinite() {
                    found.push(Extreme { start, end: i, huge: true });
                } else if tiny && nonzero && (wide as f32) == 0.0 {
                    found.push(Extreme { start, end: i, huge: false });
                }
            }
            _ => i += 1,
        }
    }
    found
}

/// Whether `literal` is a number as JSON writes one: `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`.
pub(crate) fn is_json_number(literal: &str) -> bool {
    let rest = literal.strip_prefix('-').unwrap_or(literal).as_bytes();
    let digits = |s: &[u8]| s.iter().take_while(|b| b.is_ascii_digit()).count();
    let int = digits(rest);
    if int == 0 || (int > 1 && rest[0] == b'0') {
        return false;
    }
    let mut rest = &rest[int..];
    if let Some(frac) = rest.strip_prefix(b".") {
        let n = digits(frac);
        if n == 0 {
            return false;
        }
        rest = &frac[n..];
    }
    if let Some(exp) = rest.strip_prefix(b"e").or_else(|| rest.strip_prefix(b"E")) {
        let exp = exp.strip_prefix(b"+").or_else(|| exp.strip_prefix(b"-")).unwrap_or(exp);
        let n = digits(exp);
        if n == 0 {
            return false;
        }
        rest = &exp[n..];
    }
    rest.is_empty()
}

/// `text` with each extreme literal replaced by one of the same length (padded with spaces)
/// that `serde_json` reads with its sign and the same fit: `1e39` past `f32`'s range, `1e-99`
/// nonzero and zero as an `f32`. Lines and columns stay where they were.
pub(crate) fn replace_extremes(text: &str, extremes: &[Extreme]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for e in extremes {
        out.push_str(&text[at..e.start]);
        let negative = text[e.start..].starts_with('-');
        let stand_in = match (e.huge, negative) {
            (true, false) => "1e39",
            (true, true) => "-1e39",
            (false, false) => "1e-99",
            (false, true) => "-1e-99",
        };
        // Literals past f64 are at least 5 bytes ("2e308"), and so are nonzero ones that are
        // zero as an f32 ("1e-46"), each with its sign: the stand-in fits.
        out.push_str(stand_in);
        for _ in stand_in.len()..e.end - e.start {
            out.push(' ');
        }
        at = e.end;
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(x: f32) -> String {
        JsonF32(x).to_string()
    }

    fn serialized(x: f32) -> String {
        serde_json::to_string(&JsonF32(x)).unwrap()
    }

    #[test]
    fn whole_numbers_have_no_fraction_and_others_are_shortest() {
        let cases: [(f32, &str); 14] = [
            (17.0, "17"),
            (0.0, "0"),
            (-0.0, "-0.0"),
            (-135.0, "-135"),
            (0.1, "0.1"),
            (16_777_216.0, "16777216"),
            (123_456_792.0, "123456790"),
            (9_999_999_000_000.0, "9999999000000"),
            (1e13, "1e+13"),
            (f32::MAX, "3.4028235e+38"),
            (1e-45, "1e-45"),
            (f32::MIN_POSITIVE, "1.1754944e-38"),
            (0.000_01, "0.00001"),
            (1e-7, "1e-7"),
        ];
        for (x, expected) in cases {
            assert_eq!(text(x), expected, "{x:e}");
            assert_eq!(serialized(x), expected, "{x:e}");
        }
        assert_eq!(serialized(f32::NAN), "null");
        assert_eq!((text(f32::INFINITY), text(f32::NEG_INFINITY)), ("inf".into(), "-inf".into()));
    }

    #[test]
    fn every_form_reads_back_as_the_same_f32() {
        // A sample of every exponent, both signs, subnormals included.
        let mut bits = 0u32;
        while bits < 0x7f80_0000 {
            for x in [f32::from_bits(bits), -f32::from_bits(bits)] {
                let back: f64 = serde_json::from_str(&text(x)).unwrap();
                assert_eq!((back as f32).to_bits(), x.to_bits(), "{x:e} as {}", text(x));
                // And strict import keeps what export writes.
                assert_eq!(fit_f64(back), Fit::Holds(x), "{x:e} as {}", text(x));
                if let Ok(digits) = text(x).parse::<i128>() {
                    assert_eq!(fit_integer(digits), Fit::Holds(x), "{x:e} as {digits}");
                }
                assert_eq!(serialized(x), text(x));
            }
            bits += 65_521;
        }
    }

    #[test]
    fn integers_fit_when_held_or_written_as_their_f32() {
        assert_eq!(fit_integer(16_777_216), Fit::Holds(16_777_216.0));
        assert_eq!(fit_integer(16_777_217), Fit::Changes(16_777_216.0));
        assert_eq!(fit_integer(-16_777_217), Fit::Changes(-16_777_216.0));
        assert_eq!(fit_integer(123_456_789), Fit::Changes(123_456_792.0));
        assert_eq!(fit_integer(123_456_790), Fit::Holds(123_456_792.0));
        assert_eq!(fit_integer(123_456_792), Fit::Holds(123_456_792.0));
        assert_eq!(fit_integer(i128::from(u64::MAX)), Fit::Changes(1.844_674_4e19));
        assert_eq!(fit_integer(18_446_744_000_000_000_000), Fit::Holds(1.844_674_4e19));
    }

    #[test]
    fn floats_fit_within_rounding_and_whole_ones_as_integers() {
        assert_eq!(fit_f64(0.1), Fit::Holds(0.1));
        assert_eq!(fit_f64(1.234_567_890_123), Fit::LosesDigits(1.234_567_9));
        assert_eq!(fit_f64(1.234_567_9), Fit::Holds(1.234_567_9));
        assert_eq!(fit_f64(std::f64::consts::PI), Fit::LosesDigits(std::f32::consts::PI));
        assert_eq!(fit_f64(1.0 / 3.0), Fit::LosesDigits(1.0 / 3.0));
        assert_eq!(fit_f64(1_234_567.89), Fit::LosesDigits(1_234_567.9));
        for exact in [19.99, 0.7, -33.25, 48_250.5, 0.866_025_4, 1e-7, 1.5e-40, 1.175_494_4e-38] {
            assert_eq!(fit_f64(exact), Fit::Holds(exact as f32), "{exact}");
        }
        // Exactly an f32, but written back shorter: the decimal read is not the one written.
        assert_eq!(fit_f64(f64::from(0.1_f32)), Fit::LosesDigits(0.1));
        assert_eq!(fit_f64(1.5e-45), Fit::LosesDigits(1e-45));
        assert_eq!(fit_f64(1e-50), Fit::Changes(0.0));
        assert_eq!(fit_f64(-1e-50), Fit::Changes(-0.0));
        assert_eq!(fit_f64(1e-45), Fit::Holds(1e-45));
        assert_eq!(fit_f64(0.0), Fit::Holds(0.0));
        assert_eq!(fit_f64(1e20), Fit::Holds(1e20));
        assert_eq!(fit_f64(1.234_567_89e29), Fit::Changes(1.234_567_9e29));
        assert_eq!(fit_f64(3.402_823_5e38), Fit::Holds(f32::MAX));
        assert_eq!(fit_f64(1e39), Fit::OutOfRange);
        assert_eq!(fit_f64(-1e39), Fit::OutOfRange);
        assert_eq!(fit_f64(f64::INFINITY), Fit::OutOfRange);
        assert_eq!(fit_f64(f64::NEG_INFINITY), Fit::OutOfRange);
        assert_eq!(fit_f64(16_777_217.0), Fit::Changes(16_777_216.0));
    }

    #[test]
    fn whole_texts_are_exact() {
        assert_eq!(whole_text("123456790"), Some(123_456_790));
        assert_eq!(whole_text("1.2345679e+19"), Some(12_345_679_000_000_000_000));
        assert_eq!(whole_text("-1.5e+13"), Some(-15_000_000_000_000));
        assert_eq!(whole_text("1.5e-3"), None);
        assert_eq!(whole_text("1e+99"), None);
    }

    #[test]
    fn extremes_are_found_outside_strings_and_replaced_in_place() {
        let text =
            r#"{"a": 1e400, "b\"1e400": "1e-400", "c": [-1e999, 0.0, 1e-400, 2e-46, 1.5e3]}"#;
        let found = extremes(text, false);
        let literals: Vec<&str> = found.iter().map(|e| &text[e.start..e.end]).collect();
        assert_eq!(literals, ["1e400", "-1e999"]);
        let found = extremes(text, true);
        let literals: Vec<&str> = found.iter().map(|e| &text[e.start..e.end]).collect();
        assert_eq!(literals, ["1e400", "-1e999", "1e-400", "2e-46"]);
        let replaced = replace_extremes(text, &found);
        assert_eq!(
            replaced,
            r#"{"a": 1e39 , "b\"1e400": "1e-400", "c": [-1e39 , 0.0, 1e-99 , 1e-99, 1.5e3]}"#
        );
        let long_zero = format!("[0.{}1]", "0".repeat(400));
        assert_eq!(extremes(&long_zero, true).len(), 1);
        assert_eq!(extremes(&format!("[1{}]", "0".repeat(400)), false).len(), 1);
        // Not JSON numbers: left for the parser to refuse.
        assert!(extremes("[1.e400, 01e400, 1e+, -e400, 1e4e400]", true).is_empty());
        for good in ["0", "-0", "1.5", "1e5", "1E+5", "-0.0e-0", "10"] {
            assert!(is_json_number(good), "{good}");
        }
    }
}
