//! Python's `str.strip()`, `int(str)` and `float(str)` without a heap: the rules the `text`,
//! `int` and `float` content parsers follow (reference `content_parsers.py` `_text`, `_int`,
//! `_float`, which call Python's builtins; CPython 3.11 `Objects/longobject.c`
//! `PyLong_FromUnicodeObject`, `Objects/floatobject.c` `PyFloat_FromString`).
//!
//! The normalized literal is written into a caller's [`NumBuf`]: a `String` in the `alloc`
//! API (any length), a fixed `ArrayString` in the no-heap router (a longer literal is
//! [`NumError::TooLong`]).

use arrayvec::ArrayString;

pub use crate::pychar::{py_is_space, py_strip};

/// Whether `text.lower() in ("true", "1")` (reference `_bool`). No non-ASCII character
/// lowercases to an ASCII letter of `true`, so an ASCII case-insensitive comparison is exact.
pub fn py_true_word(t: &str) -> bool {
    t.eq_ignore_ascii_case("true") || t == "1"
}

/// The first code point of every run of ten Unicode decimal digits (`Nd`, Python 3.11 /
/// Unicode 14.0 `unicodedata.decimal`); digit `d` of a run is `zero + d`.
const DIGIT_ZEROS: [u32; 66] = [
    0x30, 0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66,
    0xDE6, 0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90,
    0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10,
    0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650,
    0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x16A60, 0x16AC0, 0x16B50,
    0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E950, 0x1FBF0,
];

/// The decimal value of a Unicode decimal digit (Python `unicodedata.decimal`).
fn decimal_value(c: char) -> Option<u8> {
    let cp = c as u32;
    let idx = DIGIT_ZEROS.partition_point(|&z| z <= cp).checked_sub(1)?;
    let d = cp - DIGIT_ZEROS[idx];
    if d < 10 {
        u8::try_from(d).ok()
    } else {
        None
    }
}

/// CPython `_PyUnicode_TransformDecimalAndSpaceToASCII`, the first step of `int(str)` and
/// `float(str)`, one char at a time: characters below U+007F are kept, other whitespace
/// becomes a space, other decimal digits become their ASCII digit, anything else makes the
/// literal invalid (`None`).
fn ascii_of(c: char) -> Option<u8> {
    if (c as u32) < 0x7f {
        Some(c as u8)
    } else if py_is_space(c) {
        Some(b' ')
    } else {
        decimal_value(c).map(|d| b'0' + d)
    }
}

/// The ASCII whitespace of CPython's `Py_ISSPACE` (not U+001C..=U+001F).
fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// CPython's limit on the digits of a decimal integer string (`sys.get_int_max_str_digits()`).
pub const INT_MAX_STR_DIGITS: usize = 4300;

/// Why a literal gives no number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumError {
    /// Not a literal: Python raises `ValueError`.
    Invalid,
    /// Longer than the caller's fixed buffer (the no-heap router's scalar limit).
    TooLong,
}

/// Where the normalized ASCII literal is written.
pub trait NumBuf {
    /// Empties the buffer.
    fn clear(&mut self);
    /// Appends an ASCII byte; `false` when full.
    fn push(&mut self, b: u8) -> bool;
    /// The contents.
    fn as_str(&self) -> &str;
}

#[cfg(feature = "alloc")]
impl NumBuf for alloc::string::String {
    fn clear(&mut self) {
        alloc::string::String::clear(self);
    }
    fn push(&mut self, b: u8) -> bool {
        alloc::string::String::push(self, char::from(b));
        true
    }
    fn as_str(&self) -> &str {
        self
    }
}

impl<const N: usize> NumBuf for ArrayString<N> {
    fn clear(&mut self) {
        ArrayString::clear(self);
    }
    fn push(&mut self, b: u8) -> bool {
        self.try_push(char::from(b)).is_ok()
    }
    fn as_str(&self) -> &str {
        self
    }
}

fn push<B: NumBuf>(buf: &mut B, b: u8) -> Result<(), NumError> {
    if buf.push(b) {
        Ok(())
    } else {
        Err(NumError::TooLong)
    }
}

/// Python's `int(s)` (base 10): surrounding whitespace, an optional sign, decimal digits of any
/// script, single underscores between digits, at most 4300 digits. Gives the sign (`true`:
/// negative) and the ASCII digits, written into `buf`.
pub fn py_int_digits<'b, B: NumBuf>(s: &str, buf: &'b mut B) -> Result<(bool, &'b str), NumError> {
    buf.clear();
    let mut chars = s.chars().map(ascii_of).peekable();
    let mut next = || chars.next().map(|c| c.ok_or(NumError::Invalid)).transpose();
    let mut c = next()?;
    while c.is_some_and(is_c_space) {
        c = next()?;
    }
    let mut negative = false;
    if let Some(sign @ (b'+' | b'-')) = c {
        negative = sign == b'-';
        c = next()?;
    }
    if c == Some(b'_') {
        return Err(NumError::Invalid);
    }
    let mut prev = 0u8;
    let mut digits = 0usize;
    while let Some(b) = c.filter(|b| b.is_ascii_digit() || *b == b'_') {
        if b == b'_' {
            if prev == b'_' {
                return Err(NumError::Invalid);
            }
        } else {
            push(buf, b)?;
            digits += 1;
        }
        prev = b;
        c = next()?;
    }
    if prev == b'_' || digits == 0 {
        return Err(NumError::Invalid);
    }
    while c.is_some_and(is_c_space) {
        c = next()?;
    }
    if c.is_some() || digits > INT_MAX_STR_DIGITS {
        return Err(NumError::Invalid);
    }
    Ok((negative, buf.as_str()))
}

/// Python's `float(s)`: surrounding whitespace, decimal digits of any script, single
/// underscores between digits, `inf`/`infinity`/`nan` in any case with an optional sign, no
/// hexadecimal. Overflow gives ±infinity, like Python. `buf` holds the normalized literal.
pub fn py_float_in<B: NumBuf>(s: &str, buf: &mut B) -> Result<f64, NumError> {
    buf.clear();
    // CPython `_Py_string_to_number_with_underscores`: every underscore sits between two
    // ASCII digits (checked on the whole string, before stripping); underscores are dropped.
    let mut prev = 0u8;
    for c in s.chars() {
        let c = ascii_of(c).ok_or(NumError::Invalid)?;
        if c == b'_' {
            if !prev.is_ascii_digit() {
                return Err(NumError::Invalid);
            }
        } else {
            if prev == b'_' && !c.is_ascii_digit() {
                return Err(NumError::Invalid);
            }
            push(buf, c)?;
        }
        prev = c;
    }
    if prev == b'_' {
        return Err(NumError::Invalid);
    }
    let t = buf
        .as_str()
        .trim_matches(|c: char| c.is_ascii() && is_c_space(c as u8));
    let b = t.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i = 1;
    }
    let rest = &t[i..];
    if rest.eq_ignore_ascii_case("inf") || rest.eq_ignore_ascii_case("infinity") {
        return Ok(if b[0] == b'-' {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    if rest.eq_ignore_ascii_case("nan") {
        return Ok(f64::NAN);
    }
    // [digits] [. [digits]] with at least one digit, then an optional complete exponent.
    let mut mantissa_digits = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
        mantissa_digits += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
            mantissa_digits += 1;
        }
    }
    if mantissa_digits == 0 {
        return Err(NumError::Invalid);
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let exp_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == exp_start {
            return Err(NumError::Invalid);
        }
    }
    if i != b.len() {
        return Err(NumError::Invalid);
    }
    t.parse::<f64>().map_err(|_| NumError::Invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_int_and_float_rules_in_a_fixed_buffer() {
        let mut b = ArrayString::<64>::new();
        // Python: int(" -1_2 ") == -12, int("١٢") == 12, int("1__2") raises.
        assert_eq!(py_int_digits(" -1_2 ", &mut b), Ok((true, "12")));
        assert_eq!(py_int_digits("\u{661}\u{662}", &mut b), Ok((false, "12")));
        assert_eq!(py_int_digits("1__2", &mut b), Err(NumError::Invalid));
        assert_eq!(py_int_digits("_1", &mut b), Err(NumError::Invalid));
        assert_eq!(py_int_digits("1e5", &mut b), Err(NumError::Invalid));
        assert_eq!(py_int_digits("\u{3000}9\u{3000}", &mut b), Ok((false, "9")));
        // Python: float(" 1_0.2_5 ") == 10.25, float("1e") raises, float("-iNf") == -inf.
        assert_eq!(py_float_in(" 1_0.2_5 ", &mut b), Ok(10.25));
        assert_eq!(py_float_in("1e", &mut b), Err(NumError::Invalid));
        assert_eq!(py_float_in("-iNf", &mut b), Ok(f64::NEG_INFINITY));
        assert_eq!(py_float_in("1._5", &mut b), Err(NumError::Invalid));
        assert_eq!(py_float_in("0x10", &mut b), Err(NumError::Invalid));
        // A literal longer than the buffer is not a number of the fixed-buffer caller.
        let mut tiny = ArrayString::<3>::new();
        assert_eq!(py_float_in("1234", &mut tiny), Err(NumError::TooLong));
        assert_eq!(py_int_digits("1234", &mut tiny), Err(NumError::TooLong));
        assert_eq!(py_int_digits("12_3", &mut tiny), Ok((false, "123")));
    }
}
