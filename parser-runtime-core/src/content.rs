//! Content parsers: turn the body of a closed region into a JSON value.
//!
//! Reference: `transformers/utils/chat_parsing/content_parsers.py` (transformers 5.24.0),
//! `parse_content` and the parsers of `CONTENT_PARSERS` (`text`, `int`, `float`, `bool`,
//! `json`, `xml-inline`, `kv-lines`, `python-call-list`, the last in [`python_call_list`]),
//! and this project's `json-call-list` ([`json_call_list`]), which the reference does not have.
//! 5.24.0 added `python-call-list` and changed `json`'s `unquoted_keys` and `xml-inline`'s
//! `merge_duplicates`. The Python built-ins they rely on are reimplemented here
//! with their exact rules: `str.strip()` ([`py_strip`]), `int(str)`, `float(str)`,
//! `json.loads` and the `regex` module's Unicode `\w`.
//!
//! # Where Python parity is impossible
//!
//! A [`serde_json::Value`] (without `arbitrary_precision`, which the workspace does not enable)
//! holds neither NaN/±infinity nor integers outside `i64`/`u64`, and a Rust `String` cannot
//! hold a lone UTF-16 surrogate. Such values are *unrepresentable*:
//!
//! - an integer outside `i64::MIN..=u64::MAX` becomes an `f64` when that `f64` is exactly the
//!   integer (e.g. `10**20`, printed `1e20`); otherwise it is unrepresentable;
//! - `int`: an unrepresentable integer is [`ContentError::InvalidInt`];
//! - `float`: NaN and ±infinity (`"nan"`, `"inf"`, `"1e400"`) are [`ContentError::InvalidFloat`]
//!   (the reference returns `float('nan')`, which its oracle prints as the non-JSON token `NaN`);
//! - `json`: `NaN`, `Infinity`, `-Infinity`, numbers that overflow to infinity, unrepresentable
//!   integers and lone `\uD800`-style surrogates make the body fail like a syntax error: with
//!   `allow_non_json` the region falls back to its text, otherwise
//!   [`ContentError::InvalidJson`].
//!
//! Other approximations: `json` nesting deeper than [`JSON_MAX_DEPTH`] containers is an error
//! that `allow_non_json` does not catch (Python raises `RecursionError` near depth 1000, the
//! exact point depending on the caller's stack); `xml-inline` iterates matches with Python's
//! `finditer` rules except that, right after an empty match, a non-empty match at the same
//! position reachable only through a lower-priority alternative is not found (the search
//! resumes one character later instead).
//!
//! Errors without a variant of their own are reported as [`ContentError::Regex`] with a
//! message: `kv-lines` with an empty `line_sep` or `kv_sep` (Python: `ValueError("empty
//! separator")`, raised only when a split runs), and an `xml-inline` `value` group that did not
//! take part in a match while a `value_parser` other than unstripped `text` is set (Python:
//! `AttributeError`/`TypeError`).

use alloc::borrow::ToOwned;
use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Map, Number, Value};

use crate::error::ContentError;
use crate::groups;
use crate::tables::ContentSpec;

pub mod json_call_list;
pub mod py_literal;
pub mod python_call_list;

/// Parses a region body with its content parser (reference `parse_content`).
///
/// `body` is the raw region text. The result is the value the region contributes to the
/// message. Errors are the reference's `ValueError`s, typed (see [`ContentError`]); the module
/// documentation lists where the result cannot match Python exactly.
pub fn parse_content(body: &str, spec: &ContentSpec) -> Result<Value, ContentError> {
    match spec {
        ContentSpec::Text { strip } => Ok(Value::String(text(body, *strip).to_owned())),
        ContentSpec::Int { strip } => {
            let t = text(body, *strip);
            match py_int(t) {
                PyInt::Exact(n) => Ok(Value::Number(n)),
                PyInt::Invalid | PyInt::Unrepresentable => {
                    Err(ContentError::InvalidInt { text: t.to_owned() })
                }
            }
        }
        ContentSpec::Float { strip } => {
            let t = text(body, *strip);
            match py_float(t).and_then(Number::from_f64) {
                Some(n) => Ok(Value::Number(n)),
                None => Err(ContentError::InvalidFloat { text: t.to_owned() }),
            }
        }
        ContentSpec::Bool { strip } => Ok(Value::Bool(py_true_word(text(body, *strip)))),
        ContentSpec::Json {
            unquoted_keys,
            string_delims,
            allow_non_json,
            strip,
        } => json_dialect(body, *unquoted_keys, string_delims, *allow_non_json, *strip),
        ContentSpec::XmlInline {
            tag_pattern,
            tag_pattern_source,
            value_parser,
            merge_duplicates,
        } => xml_inline(
            body,
            tag_pattern.as_ref(),
            tag_pattern_source.as_deref(),
            value_parser.as_deref(),
            *merge_duplicates,
        ),
        ContentSpec::KvLines {
            line_sep,
            kv_sep,
            strip,
            value_parser,
        } => kv_lines(body, line_sep, kv_sep, *strip, value_parser.as_deref()),
        // `call_list_shape` is `None` only for `python-call-list` here.
        ContentSpec::PythonCallList | ContentSpec::JsonCallList { .. } => {
            match call_list_shape(spec) {
                Some(shape) => json_call_list::json_call_list(body, &shape),
                None => python_call_list::python_call_list(body),
            }
        }
    }
}

/// The shape of a `json-call-list` setting (`None` for other parsers).
fn call_list_shape(spec: &ContentSpec) -> Option<json_call_list::CallListShape<'_>> {
    match spec {
        ContentSpec::JsonCallList {
            brackets,
            separator,
            name_key,
            arguments_keys,
        } => Some(json_call_list::CallListShape {
            brackets: *brackets,
            separator,
            name_key,
            arguments_keys,
        }),
        _ => None,
    }
}

/// Lenient mode: for a call-list parser (`python-call-list`, `json-call-list`), the complete
/// calls at the start of a body that does not parse whole, as a body of those calls alone
/// that the parser reads, and the byte offset in `body` where the last of them ends. `None`
/// for other parsers, or when not even the first call is complete.
pub(crate) fn complete_calls(body: &str, spec: &ContentSpec) -> Option<(String, usize)> {
    match spec {
        ContentSpec::PythonCallList => python_call_list::complete_calls(body),
        _ => json_call_list::complete_calls(body, &call_list_shape(spec)?),
    }
}

/// Reference `_text`: the body, stripped with [`py_strip`] when `strip` is set.
fn text(body: &str, strip: bool) -> &str {
    if strip {
        py_strip(body)
    } else {
        body
    }
}

use crate::pynum::{py_float_in, py_int_digits, py_true_word, NumError, INT_MAX_STR_DIGITS};
pub use crate::pynum::{py_is_space, py_strip};

// ---------------------------------------------------------------------------------------------
// Python `int(str)` and `float(str)` (the rules are in `crate::pynum`)
// ---------------------------------------------------------------------------------------------

/// The outcome of Python's `int(str)`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PyInt {
    /// A valid literal whose value a `serde_json::Number` holds exactly.
    Exact(Number),
    /// A valid literal whose value no `serde_json::Number` holds exactly.
    Unrepresentable,
    /// Not a Python integer literal (`int()` raises `ValueError`).
    Invalid,
}

/// Python's `int(s)` (base 10): surrounding whitespace, an optional sign, decimal digits of any
/// script, single underscores between digits, at most 4300 digits.
pub(crate) fn py_int(s: &str) -> PyInt {
    let mut buf = String::new();
    match py_int_digits(s, &mut buf) {
        Ok((negative, digits)) => match int_number(negative, digits) {
            Some(n) => PyInt::Exact(n),
            None => PyInt::Unrepresentable,
        },
        Err(NumError::Invalid | NumError::TooLong) => PyInt::Invalid,
    }
}

/// The integer `±digits` (ASCII digits) as a `Number`: an integer within `i64`/`u64`, else an
/// `f64` when it is exactly the integer, else `None`.
fn int_number(negative: bool, digits: &str) -> Option<Number> {
    let d = digits.trim_start_matches('0');
    if d.is_empty() {
        return Some(Number::from(0u64));
    }
    if let Ok(m) = d.parse::<u64>() {
        if !negative {
            return Some(Number::from(m));
        }
        if m <= 1u64 << 63 {
            // `m as i64` wraps 2^63 to i64::MIN, whose negation is itself: exactly -2^63.
            return Some(Number::from((m as i64).wrapping_neg()));
        }
    }
    let f: f64 = d.parse().ok()?;
    if !f.is_finite() || format!("{f:.0}") != d {
        return None;
    }
    Number::from_f64(if negative { -f } else { f })
}

/// Whether a finite or infinite `f64` is integral (Python `float.is_integer()`).
pub(crate) fn f64_is_integer(f: f64) -> bool {
    if !f.is_finite() {
        return false;
    }
    // Every f64 of magnitude 2^52 or more is an integer; below that `as i64` is exact.
    f.abs() >= 4_503_599_627_370_496.0 || (f as i64) as f64 == f
}

/// Python `int(f)` for an integral finite `f64`, as a `Number` (an integer within
/// `i64`/`u64`, else the `f64` itself, which is exactly that integer).
pub(crate) fn integral_f64_number(f: f64) -> Option<Number> {
    if (0.0..18_446_744_073_709_551_616.0).contains(&f) {
        Some(Number::from(f as u64))
    } else if (-9_223_372_036_854_775_808.0..0.0).contains(&f) {
        Some(Number::from(f as i64))
    } else {
        Number::from_f64(f)
    }
}

/// Python's `float(s)`: surrounding whitespace, decimal digits of any script, single
/// underscores between digits, `inf`/`infinity`/`nan` in any case with an optional sign, no
/// hexadecimal. `None` when Python raises `ValueError`. Overflow gives ±infinity, like Python.
pub(crate) fn py_float(s: &str) -> Option<f64> {
    py_float_in(s, &mut String::new()).ok()
}

// ---------------------------------------------------------------------------------------------
// Python `json.loads`
// ---------------------------------------------------------------------------------------------

/// The deepest nesting of JSON arrays/objects accepted (Python's decoder raises
/// `RecursionError` near 1000, depending on the caller's stack depth).
pub const JSON_MAX_DEPTH: usize = 900;

/// How a JSON text failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JsonFailure {
    /// Python raises `json.JSONDecodeError`.
    Syntax,
    /// Python parses it, but the value cannot be a `serde_json::Value` (NaN, ±infinity, an
    /// integer out of range, a lone surrogate).
    Unrepresentable,
    /// Python raises an error that is not a `JSONDecodeError` (`RecursionError`, or the
    /// `ValueError` of an integer with more than 4300 digits).
    Fatal,
}

/// A JSON text that [`json_loads`] rejects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JsonError {
    /// The kind of failure.
    pub(crate) kind: JsonFailure,
    /// What went wrong (Python's wording where there is one).
    pub(crate) reason: &'static str,
    /// Byte offset in the text.
    pub(crate) offset: usize,
}

impl JsonError {
    fn into_content_error(self) -> ContentError {
        ContentError::InvalidJson {
            reason: self.reason.to_string(),
            offset: self.offset,
        }
    }
}

/// Python's `json.loads(s)` (the C scanner, `strict=True`) producing a `serde_json::Value`:
/// whitespace is `[ \t\n\r]`, `NaN`/`Infinity`/`-Infinity` are accepted (then
/// unrepresentable), a duplicated key keeps its first position and its last value, control
/// characters inside strings are rejected, trailing text is an error ("Extra data").
pub(crate) fn json_loads(s: &str) -> Result<Value, JsonError> {
    let start = s.len() - s.trim_start_matches(JSON_WS).len();
    let (v, end, unrepresentable) = json_value_raw(s, start)?;
    let rest = s.len() - s[end..].trim_start_matches(JSON_WS).len();
    if rest != s.len() {
        // A syntax error is reported before an unrepresentable value, as Python would.
        return Err(JsonError {
            kind: JsonFailure::Syntax,
            reason: "Extra data",
            offset: rest,
        });
    }
    match unrepresentable {
        Some(e) => Err(e),
        None => Ok(v),
    }
}

/// JSON whitespace (`[ \t\n\r]`).
const JSON_WS: [char; 4] = [' ', '\t', '\n', '\r'];

/// One JSON value (the rules of [`json_loads`]) starting at byte `start` of `s`, which must be
/// a char boundary: the value and the byte offset just after it. Error offsets are in `s`.
pub(crate) fn json_value_at(s: &str, start: usize) -> Result<(Value, usize), JsonError> {
    match json_value_raw(s, start)? {
        (_, _, Some(e)) => Err(e),
        (v, end, None) => Ok((v, end)),
    }
}

/// [`json_value_at`], with the first unrepresentable value kept apart from syntax errors.
fn json_value_raw(s: &str, start: usize) -> Result<(Value, usize, Option<JsonError>), JsonError> {
    let mut p = JsonParser {
        s,
        b: s.as_bytes(),
        i: start,
        unrepresentable: None,
    };
    let v = p.value()?;
    Ok((v, p.i, p.unrepresentable))
}

enum Frame {
    Array(Vec<Value>),
    Object(Map<String, Value>, String),
}

struct JsonParser<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
    /// The first unrepresentable value; reported only when the text is otherwise valid (Python
    /// would report a later syntax error instead).
    unrepresentable: Option<JsonError>,
}

impl JsonParser<'_> {
    fn err(&self, kind: JsonFailure, reason: &'static str, offset: usize) -> JsonError {
        JsonError {
            kind,
            reason,
            offset,
        }
    }

    fn unrepresentable(&mut self, reason: &'static str, offset: usize) {
        if self.unrepresentable.is_none() {
            self.unrepresentable = Some(self.err(JsonFailure::Unrepresentable, reason, offset));
        }
    }

    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn starts_with(&self, lit: &str) -> bool {
        self.b[self.i..].starts_with(lit.as_bytes())
    }

    /// A value, iteratively (containers are kept on an explicit stack).
    fn value(&mut self) -> Result<Value, JsonError> {
        let mut stack: Vec<Frame> = Vec::new();
        'value: loop {
            let mut v = match self.peek() {
                Some(open @ (b'[' | b'{')) => {
                    if stack.len() >= JSON_MAX_DEPTH {
                        return Err(self.err(
                            JsonFailure::Fatal,
                            "maximum nesting depth exceeded",
                            self.i,
                        ));
                    }
                    self.i += 1;
                    self.ws();
                    if open == b'[' {
                        if self.peek() == Some(b']') {
                            self.i += 1;
                            Value::Array(Vec::new())
                        } else {
                            stack.push(Frame::Array(Vec::new()));
                            continue 'value;
                        }
                    } else if self.peek() == Some(b'}') {
                        self.i += 1;
                        Value::Object(Map::new())
                    } else {
                        let key = self.object_key()?;
                        stack.push(Frame::Object(Map::new(), key));
                        continue 'value;
                    }
                }
                Some(b'"') => Value::String(self.string()?),
                Some(b'n') if self.starts_with("null") => {
                    self.i += 4;
                    Value::Null
                }
                Some(b't') if self.starts_with("true") => {
                    self.i += 4;
                    Value::Bool(true)
                }
                Some(b'f') if self.starts_with("false") => {
                    self.i += 5;
                    Value::Bool(false)
                }
                Some(b'N') if self.starts_with("NaN") => {
                    self.unrepresentable("NaN cannot be represented", self.i);
                    self.i += 3;
                    Value::Null
                }
                Some(b'I') if self.starts_with("Infinity") => {
                    self.unrepresentable("Infinity cannot be represented", self.i);
                    self.i += 8;
                    Value::Null
                }
                Some(b'-') if self.starts_with("-Infinity") => {
                    self.unrepresentable("-Infinity cannot be represented", self.i);
                    self.i += 9;
                    Value::Null
                }
                Some(b'-' | b'0'..=b'9') => self.number()?,
                _ => return Err(self.err(JsonFailure::Syntax, "Expecting value", self.i)),
            };
            // Attach the finished value to its container, closing containers as they end.
            loop {
                let Some(frame) = stack.pop() else {
                    return Ok(v);
                };
                match frame {
                    Frame::Array(mut items) => {
                        items.push(v);
                        self.ws();
                        match self.peek() {
                            Some(b']') => {
                                self.i += 1;
                                v = Value::Array(items);
                            }
                            Some(b',') => {
                                self.i += 1;
                                self.ws();
                                stack.push(Frame::Array(items));
                                continue 'value;
                            }
                            _ => {
                                return Err(self.err(
                                    JsonFailure::Syntax,
                                    "Expecting ',' delimiter",
                                    self.i,
                                ))
                            }
                        }
                    }
                    Frame::Object(mut map, key) => {
                        // Python dict assignment: a repeated key keeps its first position.
                        map.insert(key, v);
                        self.ws();
                        match self.peek() {
                            Some(b'}') => {
                                self.i += 1;
                                v = Value::Object(map);
                            }
                            Some(b',') => {
                                self.i += 1;
                                self.ws();
                                let key = self.object_key()?;
                                stack.push(Frame::Object(map, key));
                                continue 'value;
                            }
                            _ => {
                                return Err(self.err(
                                    JsonFailure::Syntax,
                                    "Expecting ',' delimiter",
                                    self.i,
                                ))
                            }
                        }
                    }
                }
            }
        }
    }

    /// `"key"`, whitespace, `:`, whitespace.
    fn object_key(&mut self) -> Result<String, JsonError> {
        if self.peek() != Some(b'"') {
            return Err(self.err(
                JsonFailure::Syntax,
                "Expecting property name enclosed in double quotes",
                self.i,
            ));
        }
        let key = self.string()?;
        self.ws();
        if self.peek() != Some(b':') {
            return Err(self.err(JsonFailure::Syntax, "Expecting ':' delimiter", self.i));
        }
        self.i += 1;
        self.ws();
        Ok(key)
    }

    /// The C scanner's number rule: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?`, where a
    /// fraction or exponent that is not complete is left unconsumed.
    fn number(&mut self) -> Result<Value, JsonError> {
        let start = self.i;
        let b = self.b;
        let mut i = start;
        let negative = b[i] == b'-';
        if negative {
            i += 1;
        }
        match b.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            _ => return Err(self.err(JsonFailure::Syntax, "Expecting value", start)),
        }
        let int_end = i;
        let mut is_float = false;
        if i + 1 < b.len() && b[i] == b'.' && b[i + 1].is_ascii_digit() {
            i += 2;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            is_float = true;
        }
        if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
            let mut j = i + 1;
            if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
                j += 1;
            }
            let digits_start = j;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            if j > digits_start {
                i = j;
                is_float = true;
            }
        }
        self.i = i;
        let lit = &self.s[start..i];
        if is_float {
            match lit.parse::<f64>().ok().and_then(Number::from_f64) {
                Some(n) => Ok(Value::Number(n)),
                None => {
                    self.unrepresentable("number out of the range of f64", start);
                    Ok(Value::Null)
                }
            }
        } else {
            let digits = &self.s[if negative { start + 1 } else { start }..int_end];
            if digits.len() > INT_MAX_STR_DIGITS {
                return Err(self.err(
                    JsonFailure::Fatal,
                    "integer has more than 4300 digits",
                    start,
                ));
            }
            match int_number(negative, digits) {
                Some(n) => Ok(Value::Number(n)),
                None => {
                    self.unrepresentable("integer beyond 64 bits that no f64 holds exactly", start);
                    Ok(Value::Null)
                }
            }
        }
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        let h = self.b.get(at..at + 4)?;
        let mut v = 0u32;
        for &c in h {
            v = v * 16 + char::from(c).to_digit(16)?;
        }
        Some(v)
    }

    /// A string starting at the opening quote (C `scanstring_unicode`, strict).
    fn string(&mut self) -> Result<String, JsonError> {
        let start = self.i;
        self.i += 1;
        let mut out = String::new();
        loop {
            let chunk = self.i;
            while self.i < self.b.len() {
                let c = self.b[self.i];
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.i += 1;
            }
            // The stop bytes are ASCII, so both ends are character boundaries.
            out.push_str(&self.s[chunk..self.i]);
            match self.peek() {
                None => {
                    return Err(self.err(
                        JsonFailure::Syntax,
                        "Unterminated string starting at",
                        start,
                    ))
                }
                Some(b'"') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    let esc = self.i;
                    let c = match self.b.get(esc + 1) {
                        None => {
                            return Err(self.err(
                                JsonFailure::Syntax,
                                "Unterminated string starting at",
                                start,
                            ))
                        }
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            let Some(hi) = self.hex4(esc + 2) else {
                                return Err(self.err(
                                    JsonFailure::Syntax,
                                    "Invalid \\uXXXX escape",
                                    esc + 1,
                                ));
                            };
                            self.i = esc + 6;
                            let mut cp = hi;
                            if (0xD800..0xDC00).contains(&hi)
                                && self.b[self.i..].starts_with(b"\\u")
                            {
                                let Some(lo) = self.hex4(self.i + 2) else {
                                    return Err(self.err(
                                        JsonFailure::Syntax,
                                        "Invalid \\uXXXX escape",
                                        self.i + 1,
                                    ));
                                };
                                if (0xDC00..0xE000).contains(&lo) {
                                    cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                                    self.i += 6;
                                }
                            }
                            match char::from_u32(cp) {
                                Some(c) => out.push(c),
                                None => self.unrepresentable("lone surrogate in \\u escape", esc),
                            }
                            continue;
                        }
                        Some(_) => {
                            return Err(self.err(JsonFailure::Syntax, "Invalid \\escape", esc))
                        }
                    };
                    out.push(c);
                    self.i = esc + 2;
                }
                Some(_) => {
                    return Err(self.err(
                        JsonFailure::Syntax,
                        "Invalid control character at",
                        self.i,
                    ))
                }
            }
        }
    }
}

/// Appends `s` as a JSON string literal (what `json.dumps(s)` means to `json.loads`).
fn push_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

// ---------------------------------------------------------------------------------------------
// `json` with dialect knobs
// ---------------------------------------------------------------------------------------------

/// Sentinels of the `string_delims` pre-extraction (reference `_LAX_OPEN`, `_LAX_CLOSE`).
const LAX_OPEN: char = '\u{1}';
const LAX_CLOSE: char = '\u{2}';

fn sentinel(i: usize) -> String {
    format!("{LAX_OPEN}{i}{LAX_CLOSE}")
}

/// Reference `_json`.
fn json_dialect(
    body: &str,
    unquoted_keys: bool,
    string_delims: &[(String, String)],
    allow_non_json: bool,
    strip: bool,
) -> Result<Value, ContentError> {
    if !string_delims.is_empty() && (body.contains(LAX_OPEN) || body.contains(LAX_CLOSE)) {
        return Err(ContentError::ReservedSentinel);
    }
    let working = dialect_text(body, unquoted_keys, string_delims);
    match json_loads(&working) {
        Ok(v) => Ok(v),
        Err(e) if e.kind != JsonFailure::Fatal && allow_non_json => {
            Ok(Value::String(text(body, strip).to_owned()))
        }
        Err(e) => Err(e.into_content_error()),
    }
}

/// The text `_json` hands to `json.loads`: `string_delims` strings pulled out as sentinels,
/// bare keys quoted, the strings put back as JSON string literals. Each step is one pass over
/// the text, so the whole rewrite is linear in the body's length.
fn dialect_text(body: &str, unquoted_keys: bool, string_delims: &[(String, String)]) -> String {
    let mut working = body.to_owned();
    let mut captured: Vec<String> = Vec::new();
    for (open, close) in string_delims {
        working = extract_delimited(&working, open, close, &mut captured);
    }
    if unquoted_keys {
        working = quote_bare_keys(&working);
    }
    if !captured.is_empty() {
        working = restore_sentinels(&working, &captured);
    }
    working
}

/// `re.sub(escape(open) + "(.*?)" + escape(close), capture, working, flags=DOTALL)`: every
/// leftmost non-overlapping delimited string is replaced by a sentinel holding its index in
/// `captured`.
fn extract_delimited(working: &str, open: &str, close: &str, captured: &mut Vec<String>) -> String {
    let mut out = String::with_capacity(working.len());
    if open.is_empty() && close.is_empty() {
        // `(.*?)` alone: an empty match at every position, and (Python's rule against a second
        // empty match at the same position) a one-character match right after it.
        for c in working.chars() {
            out.push_str(&sentinel(captured.len()));
            captured.push(String::new());
            out.push_str(&sentinel(captured.len()));
            captured.push(c.to_string());
        }
        out.push_str(&sentinel(captured.len()));
        captured.push(String::new());
        return out;
    }
    let mut last = 0;
    // Each match is non-empty here, so the search simply resumes at its end. When the first
    // open after `last` has no close after it, no later open has one either.
    while let Some(p) = working[last..].find(open).map(|p| p + last) {
        let body_start = p + open.len();
        let Some(q) = working[body_start..].find(close).map(|q| q + body_start) else {
            break;
        };
        out.push_str(&working[last..p]);
        out.push_str(&sentinel(captured.len()));
        captured.push(working[body_start..q].to_owned());
        last = q + close.len();
    }
    out.push_str(&working[last..]);
    out
}

/// The reference's `for i, s in enumerate(captured): working = working.replace(sentinel(i),
/// json.dumps(s))`, in one pass.
///
/// The passes are independent: a sentinel is `\x01`, the decimal index without leading zeros,
/// `\x02`, so two occurrences never overlap, and a replacement (a JSON string literal, whose
/// control characters are escaped) holds neither `\x01` nor `\x02` and so neither creates an
/// occurrence nor breaks one. Replacing every occurrence of every sentinel left to right is
/// therefore the same text, whatever other `\x01` and `\x02` bytes are around (pieces of
/// sentinels that a later `string_delims` pair cut up stay as they are).
fn restore_sentinels(working: &str, captured: &[String]) -> String {
    let b = working.as_bytes();
    let mut out = String::with_capacity(working.len() + captured.len() * 2);
    let mut last = 0;
    let mut from = 0;
    while let Some(n) = memchr::memchr(LAX_OPEN as u8, &b[from..]) {
        let at = from + n;
        from = at + 1;
        let digits = b[at + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        let end = at + 1 + digits;
        let canonical = digits > 0 && (digits == 1 || b[at + 1] != b'0');
        if !canonical || b.get(end) != Some(&(LAX_CLOSE as u8)) {
            continue;
        }
        let index = working[at + 1..end]
            .parse::<usize>()
            .ok()
            .filter(|&i| i < captured.len());
        let Some(index) = index else { continue };
        out.push_str(&working[last..at]);
        push_json_string(&mut out, &captured[index]);
        last = end + 1;
        from = last;
    }
    out.push_str(&working[last..]);
    out
}

/// Reference 5.24 `unquoted_keys`: `re.sub(r'"(?:\\.|[^"\\])*"|(?<=[{,])(\s*)(\w+)(\s*):', ...)`
/// with the `regex` module's Unicode `\s` and `\w`. A complete double-quoted string (escapes
/// included) is skipped as it is, so key-like text inside a string value stays untouched; a
/// run of word characters right after `{` or `,`, with only whitespace around it before a
/// `:`, is quoted, the whitespace kept where it was.
///
/// The search is the reference's, without backtracking: `\s` and `\w` share no character and
/// neither contains `"` or `:`, so each part of a bare key is a maximal run; a string starts at
/// a `"` and ends at the next unescaped `"` (a `"` with no such end is an ordinary character,
/// and the search goes on right after it).
fn quote_bare_keys(working: &str) -> String {
    quote_bare_keys_from(working, true)
}

/// [`quote_bare_keys`]; without `skip_given_up` every `"` is tried again, as the reference's
/// search does (the tests compare the two).
fn quote_bare_keys_from(working: &str, skip_given_up: bool) -> String {
    let b = working.as_bytes();
    let mut out = String::with_capacity(working.len() + 8);
    // `working[..last]` is in `out`. Every position tested is after an ASCII byte or a `"`,
    // so it is a char boundary.
    let mut last = 0;
    let mut p = 0;
    // Where the last string that never closed gave up (see below).
    let mut open_until = 0;
    while p < b.len() {
        if b[p] == b'"' {
            // A `"` before the point where an earlier attempt gave up is inside that attempt,
            // as an escaped quote (an unescaped one would have closed it), so its own attempt
            // reads the same characters from the next one on and gives up at the same point:
            // skip it (this keeps the search linear on `"\"\"\"...` without a close).
            if skip_given_up && p < open_until {
                p += 1;
                continue;
            }
            match quoted_string_end(working, p) {
                Ok(end) => p = end,
                Err(gave_up) => {
                    open_until = gave_up;
                    p += 1;
                }
            }
            continue;
        }
        if p > 0 && matches!(b[p - 1], b'{' | b',') {
            if let Some((word, word_end, colon)) = bare_key(working, p) {
                out.push_str(&working[last..word]);
                out.push('"');
                out.push_str(&working[word..word_end]);
                out.push('"');
                out.push_str(&working[word_end..=colon]);
                last = colon + 1;
                p = last;
                continue;
            }
        }
        p += 1;
    }
    out.push_str(&working[last..]);
    out
}

/// The end (after the closing quote) of `"(?:\\.|[^"\\])*"` matched at `start` (a `"`), or,
/// when the string never closes, `Err` with the position where the attempt gave up (the
/// backslash before a newline, or the end of the text). `.` is the `regex` module's without
/// flags: any character but `\n`, so a backslash before a newline (or at the end) ends the
/// attempt.
fn quoted_string_end(working: &str, start: usize) -> Result<usize, usize> {
    let mut chars = working[start + 1..].char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok(start + 1 + i + 1),
            '\\' => match chars.next() {
                Some((_, '\n')) | None => return Err(start + 1 + i),
                Some(_) => {}
            },
            _ => {}
        }
    }
    Err(working.len())
}

/// `(\s*)(\w+)(\s*):` matched at `start`: the start and end of the word and the position of
/// the `:`.
fn bare_key(working: &str, start: usize) -> Option<(usize, usize, usize)> {
    let run_end = |from: usize, class: fn(char) -> bool| {
        working[from..]
            .find(|c: char| !class(c))
            .map_or(working.len(), |n| from + n)
    };
    let word = run_end(start, crate::pychar::is_regex_space);
    let word_end = run_end(word, crate::pychar::is_word_char);
    if word_end == word {
        return None;
    }
    let colon = run_end(word_end, crate::pychar::is_regex_space);
    (working.as_bytes().get(colon) == Some(&b':')).then_some((word, word_end, colon))
}

// ---------------------------------------------------------------------------------------------
// `xml-inline` and `kv-lines`
// ---------------------------------------------------------------------------------------------

/// Reference `_sub_parse`; `raw` is `None` for a `value` group that did not participate.
fn sub_parse(raw: Option<&str>, value_parser: Option<&ContentSpec>) -> Result<Value, ContentError> {
    match (raw, value_parser) {
        (Some(r), None) => Ok(Value::String(r.to_owned())),
        (None, None) => Ok(Value::Null),
        (Some(r), Some(spec)) => parse_content(r, spec),
        // Python passes `None` on: `_text(None)` without strip returns it, `_xml_inline`
        // checks `tag_pattern` first, every other parser raises a `TypeError`/`AttributeError`.
        (None, Some(ContentSpec::Text { strip: false })) => Ok(Value::Null),
        (None, Some(ContentSpec::XmlInline { tag_pattern: None, .. })) => Err(ContentError::MissingTagPattern),
        (None, Some(_)) => Err(ContentError::Regex(
            "xml-inline: the 'value' group did not participate in a match, so value_parser has no text to parse"
                .to_owned(),
        )),
    }
}

/// Reference `_xml_inline`.
fn xml_inline(
    body: &str,
    tag_pattern: Option<&fancy_regex::Regex>,
    source: Option<&str>,
    value_parser: Option<&ContentSpec>,
    merge: bool,
) -> Result<Value, ContentError> {
    let Some(re) = tag_pattern else {
        return Err(ContentError::MissingTagPattern);
    };
    // The groups of `key` and `value`: a name defined more than once has several copies,
    // merged as the Python module merges them (`groups`).
    let key_groups = groups::copies_of(re.capture_names(), "key");
    let value_groups = groups::copies_of(re.capture_names(), "value");
    let span = |caps: &fancy_regex::Captures<'_>, copies: &[usize]| {
        groups::merged_span(
            copies
                .iter()
                .map(|&i| caps.get(i).map(|m| (m.start(), m.end()))),
        )
    };
    let mut out = Map::new();
    // The keys whose value `merge_duplicates` made a list.
    let mut merged: BTreeSet<String> = BTreeSet::new();
    // Python `finditer`: after an empty match, the next match may not be empty at the same
    // position; an empty match right after a non-empty one is allowed.
    let mut pos = 0;
    let mut after_empty = false;
    while pos <= body.len() {
        let caps = match re.captures_from_pos(body, pos) {
            Ok(Some(caps)) => caps,
            Ok(None) => break,
            Err(e) => return Err(ContentError::Regex(e.to_string())),
        };
        let Some(m) = caps.get(0) else { break };
        if after_empty && m.start() == pos && m.end() == pos {
            match body[pos..].chars().next() {
                Some(c) => {
                    pos += c.len_utf8();
                    after_empty = false;
                    continue;
                }
                None => break,
            }
        }
        let Some((key_start, key_end)) = span(&caps, &key_groups) else {
            return Err(ContentError::MissingKeyGroup {
                pattern: source.map_or_else(|| re.as_str().to_owned(), ToOwned::to_owned),
            });
        };
        let raw = if value_groups.is_empty() {
            Some("")
        } else {
            span(&caps, &value_groups).map(|(start, end)| &body[start..end])
        };
        let value = sub_parse(raw, value_parser)?;
        let key = &body[key_start..key_end];
        match out.get_mut(key) {
            // Reference 5.24: the first duplicate wraps the first value in a list, whatever
            // that value is (a list too); later ones append to that list.
            Some(existing) if merge => match existing {
                Value::Array(items) if merged.contains(key) => items.push(value),
                _ => {
                    let first = existing.take();
                    *existing = Value::Array(alloc::vec![first, value]);
                    merged.insert(key.to_owned());
                }
            },
            _ => {
                out.insert(key.to_owned(), value);
            }
        }
        pos = m.end();
        after_empty = m.start() == m.end();
    }
    Ok(Value::Object(out))
}

/// Reference `_kv_lines`.
fn kv_lines(
    body: &str,
    line_sep: &str,
    kv_sep: &str,
    strip: bool,
    value_parser: Option<&ContentSpec>,
) -> Result<Value, ContentError> {
    if line_sep.is_empty() {
        return Err(ContentError::Regex(
            "kv-lines: empty separator (line_sep)".to_owned(),
        ));
    }
    let mut out = Map::new();
    for line in body.split(line_sep) {
        let line = text(line, strip);
        if line.is_empty() {
            continue;
        }
        if kv_sep.is_empty() {
            return Err(ContentError::Regex(
                "kv-lines: empty separator (kv_sep)".to_owned(),
            ));
        }
        let Some((k, v)) = line.split_once(kv_sep) else {
            continue;
        };
        let value = sub_parse(Some(text(v, strip)), value_parser)?;
        out.insert(text(k, strip).to_owned(), value);
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    //! Expected values come from running the reference (transformers 5.23.0,
    //! `content_parsers.parse_content(text, name, args)`, printed with `json.dumps`) on the same
    //! inputs, except where a comment says the value is unrepresentable here.

    use super::*;
    use alloc::boxed::Box;

    fn text_spec(strip: bool) -> ContentSpec {
        ContentSpec::Text { strip }
    }

    fn json_spec(
        unquoted_keys: bool,
        delims: &[(&str, &str)],
        allow_non_json: bool,
        strip: bool,
    ) -> ContentSpec {
        ContentSpec::Json {
            unquoted_keys,
            string_delims: delims
                .iter()
                .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
                .collect(),
            allow_non_json,
            strip,
        }
    }

    fn json_plain() -> ContentSpec {
        json_spec(false, &[], false, true)
    }

    /// `tag_pattern` compiled as the reference runs it (`flags=re.DOTALL`).
    fn xml(
        pattern: Option<&str>,
        value_parser: Option<ContentSpec>,
        merge_duplicates: bool,
    ) -> ContentSpec {
        ContentSpec::XmlInline {
            tag_pattern: pattern.map(|p| fancy_regex::Regex::new(&format!("(?s){p}")).unwrap()),
            tag_pattern_source: pattern.map(ToOwned::to_owned),
            value_parser: value_parser.map(Box::new),
            merge_duplicates,
        }
    }

    fn kv(
        line_sep: &str,
        kv_sep: &str,
        strip: bool,
        value_parser: Option<ContentSpec>,
    ) -> ContentSpec {
        ContentSpec::KvLines {
            line_sep: line_sep.to_owned(),
            kv_sep: kv_sep.to_owned(),
            strip,
            value_parser: value_parser.map(Box::new),
        }
    }

    /// Asserts the value, including its number types and key order (compared serialized).
    #[track_caller]
    fn ok(body: &str, spec: &ContentSpec, expected: &str) {
        let want: Value = serde_json::from_str(expected).unwrap();
        let got = match parse_content(body, spec) {
            Ok(v) => v,
            Err(e) => panic!("{body:?}: unexpected error {e}"),
        };
        assert_eq!(
            serde_json::to_string(&got).unwrap(),
            serde_json::to_string(&want).unwrap(),
            "{body:?}"
        );
        assert_eq!(got, want, "{body:?}");
    }

    #[track_caller]
    fn err(body: &str, spec: &ContentSpec) -> ContentError {
        match parse_content(body, spec) {
            Ok(v) => panic!("{body:?}: expected an error, got {v}"),
            Err(e) => e,
        }
    }

    #[test]
    fn strip_is_python_str_strip() {
        ok(" \x1c a b \x1f\u{3000}", &text_spec(true), r#""a b""#);
        ok(" a ", &text_spec(false), r#"" a ""#);
        // U+200B is not whitespace for Python.
        ok(
            "\u{200b} x \u{200b}",
            &text_spec(true),
            "\"\u{200b} x \u{200b}\"",
        );
        assert_eq!(
            py_strip("\u{85}\u{a0}x\u{2028}\u{202f}\u{205f}\u{1680}"),
            "x"
        );
        assert!(!py_is_space('\u{180e}') && !py_is_space('\u{feff}'));
    }

    #[test]
    fn int_follows_python_int() {
        let int = ContentSpec::Int { strip: true };
        for (body, want) in [
            (" 42 ", "42"),
            ("1_000", "1000"),
            ("+7", "7"),
            ("-0", "0"),
            ("\u{663}", "3"),
            ("\u{661}_\u{660}", "10"),
            ("\u{ff11}\u{ff12}", "12"),
            ("007", "7"),
            ("\x1c5", "5"),
            ("9223372036854775807", "9223372036854775807"),
            ("-9223372036854775808", "-9223372036854775808"),
            ("18446744073709551615", "18446744073709551615"),
        ] {
            ok(body, &int, want);
        }
        for body in [
            "1e3", "1__0", "_1", "1_", "0x10", "", "- 1", "1.0", "\u{663}x",
        ] {
            assert_eq!(
                err(body, &int),
                ContentError::InvalidInt {
                    text: py_strip(body).to_owned()
                }
            );
        }
        let unstripped = ContentSpec::Int { strip: false };
        // int() itself strips only ASCII whitespace and non-ASCII Unicode whitespace.
        ok("\u{a0}5\u{2003}", &unstripped, "5");
        assert!(matches!(
            err("\x1c5", &unstripped),
            ContentError::InvalidInt { .. }
        ));
    }

    #[test]
    fn int_beyond_64_bits() {
        let int = ContentSpec::Int { strip: true };
        // Reference: 100000000000000000000 (a Python int). Here: the f64 1e20, which is exactly it.
        let v = parse_content("100000000000000000000", &int).unwrap();
        assert_eq!(v.as_f64(), Some(1e20));
        assert!(v.is_f64());
        // Reference: 123456789012345678901234567890. Not representable exactly: an error.
        assert!(matches!(
            err("123456789012345678901234567890", &int),
            ContentError::InvalidInt { .. }
        ));
        assert!(matches!(
            err("-18446744073709551617", &int),
            ContentError::InvalidInt { .. }
        ));
        // CPython refuses more than 4300 digits.
        assert_eq!(py_int(&"0".repeat(4301)), PyInt::Invalid);
        assert_eq!(py_int(&"0".repeat(4300)), PyInt::Exact(Number::from(0u64)));
    }

    #[test]
    fn float_follows_python_float() {
        let float = ContentSpec::Float { strip: true };
        for (body, want) in [
            ("3.5", "3.5"),
            (" 1e3 ", "1000.0"),
            ("1_000.5", "1000.5"),
            ("1e1_0", "10000000000.0"),
            (".5", "0.5"),
            ("1.", "1.0"),
            ("-0.0", "-0.0"),
            ("\u{661}.\u{665}", "1.5"),
            ("1e-400", "0.0"),
            ("+1.5E+2", "150.0"),
        ] {
            ok(body, &float, want);
        }
        for body in [
            "1_.5", ".", "1e", "0x1p3", "in_f", "1 .5", "++1", "infinit", "nan(1)",
        ] {
            assert_eq!(
                err(body, &float),
                ContentError::InvalidFloat {
                    text: body.to_owned()
                }
            );
        }
        // Reference: Infinity, -Infinity, NaN, Infinity (non-JSON tokens). Unrepresentable here.
        for body in ["inf", "-Infinity", "nan", "1e400"] {
            assert!(py_float(body).is_some());
            assert_eq!(
                err(body, &float),
                ContentError::InvalidFloat {
                    text: body.to_owned()
                }
            );
        }
        assert_eq!(py_float("-iNfInItY"), Some(f64::NEG_INFINITY));
    }

    #[test]
    fn bool_is_true_or_one() {
        let b = ContentSpec::Bool { strip: true };
        for (body, want) in [
            ("true", true),
            (" TRUE ", true),
            ("1", true),
            ("yes", false),
            ("True\n", true),
            ("0", false),
        ] {
            assert_eq!(
                parse_content(body, &b).unwrap(),
                Value::Bool(want),
                "{body:?}"
            );
        }
        assert_eq!(
            parse_content(" true", &ContentSpec::Bool { strip: false }).unwrap(),
            Value::Bool(false)
        );
    }

    #[test]
    fn json_follows_json_loads() {
        let j = json_plain();
        ok(
            r#" {"a": 1, "b": [true, null, 2.5]} "#,
            &j,
            r#"{"a": 1, "b": [true, null, 2.5]}"#,
        );
        // Duplicate keys: last value, first position.
        ok(r#"{"a":1,"b":2,"a":3}"#, &j, r#"{"a": 3, "b": 2}"#);
        ok("-0", &j, "0");
        ok(r#""\ud83d\ude00\u00e9""#, &j, "\"\u{1f600}\u{e9}\"");
        // Deep nesting (reference: fine below ~990 levels).
        let mut v = parse_content(&("[".repeat(850) + &"]".repeat(850)), &j).unwrap();
        let mut depth = 0;
        while let Value::Array(mut items) = v {
            depth += 1;
            v = items.pop().unwrap_or(Value::Null);
        }
        assert_eq!(depth, 850);
        for body in [
            r#"{"a": 1} x"#,
            "\"a\tb\"",
            "[1,]",
            r#"{"a":1,}"#,
            "01",
            "1.",
            "\u{feff}1",
            "\x0c1",
            "",
            r#""\x""#,
            r#"{"a": "\u{1}"}"#,
        ] {
            assert!(
                matches!(err(body, &j), ContentError::InvalidJson { .. }),
                "{body:?}"
            );
        }
        let e = err(r#"{"a": 1} x"#, &j);
        assert_eq!(
            e,
            ContentError::InvalidJson {
                reason: "Extra data".to_owned(),
                offset: 9
            }
        );
    }

    #[test]
    fn json_unrepresentable_values() {
        let j = json_plain();
        // Reference: [NaN], Infinity, 123456789012345678901234567890, Infinity, "\ud800".
        for body in [
            "[NaN]",
            "Infinity",
            "[-Infinity]",
            "123456789012345678901234567890",
            "1e400",
            r#""\ud800""#,
        ] {
            assert!(
                matches!(err(body, &j), ContentError::InvalidJson { .. }),
                "{body:?}"
            );
        }
        // Reference: 100000000000000000000 (an int); exactly the f64 1e20 here.
        assert_eq!(
            parse_content("100000000000000000000", &j).unwrap().as_f64(),
            Some(1e20)
        );
        // With allow_non_json the text is kept (reference: [NaN]).
        ok("[NaN]", &json_spec(false, &[], true, true), r#""[NaN]""#);
        // A syntax error after an unrepresentable value is still a syntax error.
        let e = err("[NaN,]", &j);
        assert_eq!(
            e,
            ContentError::InvalidJson {
                reason: "Expecting value".to_owned(),
                offset: 5
            }
        );
    }

    #[test]
    fn json_nesting_limit_is_not_caught_by_allow_non_json() {
        // Reference: RecursionError, which `allow_non_json` does not catch.
        let deep = "[".repeat(3000) + &"]".repeat(3000);
        assert!(matches!(
            err(&deep, &json_spec(false, &[], true, true)),
            ContentError::InvalidJson { .. }
        ));
    }

    #[test]
    fn json_allow_non_json() {
        ok(
            r#"{"a": 1} x"#,
            &json_spec(false, &[], true, true),
            r#""{\"a\": 1} x""#,
        );
        ok(
            " not json ",
            &json_spec(false, &[], true, true),
            r#""not json""#,
        );
        ok(
            " not json ",
            &json_spec(false, &[], true, false),
            r#"" not json ""#,
        );
    }

    #[test]
    fn json_unquoted_keys() {
        // Values from the reference (5.24.0 oracle, `parse_content(text, "json", {...})`).
        let u = json_spec(true, &[], false, true);
        ok(
            r#"{a: 1,b_2:"x","c": {d: [1]},é:2}"#,
            &u,
            r#"{"a": 1, "b_2": "x", "c": {"d": [1]}, "é": 2}"#,
        );
        ok("{a: {b:1},c:2}", &u, r#"{"a": {"b": 1}, "c": 2}"#);
        ok("[{a:1},{b:2}]", &u, r#"[{"a": 1}, {"b": 2}]"#);
        // 5.24: whitespace around a key is allowed and kept (5.23 left these alone: invalid).
        ok(r#"{a: 1, b_2:"x"}"#, &u, r#"{"a": 1, "b_2": "x"}"#);
        ok("{a : 1}", &u, r#"{"a": 1}"#);
        ok(r#"{ "k" : 1, v : 2}"#, &u, r#"{"k": 1, "v": 2}"#);
        // 5.24: key-like text inside a string value stays untouched, escapes included.
        ok(
            r#"{a: "say \"b:1\", c:2", d: 3}"#,
            &u,
            r#"{"a": "say \"b:1\", c:2", "d": 3}"#,
        );
        ok(r#"{s: "back\\", t: 1}"#, &u, r#"{"s": "back\\", "t": 1}"#);
        ok(r#"{s: "{a:", b: 2}"#, &u, r#"{"s": "{a:", "b": 2}"#);
        ok(
            r#"{s: "{a:", "b": "x,c:3"}"#,
            &u,
            r#"{"s": "{a:", "b": "x,c:3"}"#,
        );
        ok(r#"["{a:1}", {b:2}]"#, &u, r#"["{a:1}", {"b": 2}]"#);
        // Unicode keys (a combining mark is `\w`).
        ok(
            "{é:1, 名前: \"x\", ключ :2, a\u{301}b: 4}",
            &u,
            r#"{"é": 1, "名前": "x", "ключ": 2, "a\u0301b": 4}"#,
        );
        // U+00B2 is `\w` for Python's `re` but not for the `regex` module the reference uses.
        assert!(matches!(
            err("{a: 1,\u{b2}:3}", &u),
            ContentError::InvalidJson { .. }
        ));
    }

    /// The text `unquoted_keys` hands to `json.loads`, as the reference makes it (5.24.0 oracle,
    /// `json.loads` patched to record its argument), including inputs that then fail to parse.
    #[test]
    fn quote_bare_keys_is_the_reference_substitution() {
        for (input, want) in [
            (
                r#"{a: "say \"b:1\", c:2", d: 3}"#,
                r#"{"a": "say \"b:1\", c:2", "d": 3}"#,
            ),
            // Whitespace around keys, Unicode `\s` included, is kept where it was.
            (
                "{ a : 1 ,\tb\n:2,\u{3000}c\u{3000}:3}",
                "{ \"a\" : 1 ,\t\"b\"\n:2,\u{3000}\"c\"\u{3000}:3}",
            ),
            ("{a\u{a0}:\u{a0}1}", "{\"a\"\u{a0}:\u{a0}1}"),
            // U+001C is whitespace for `str.isspace()` but not for the `regex` module's `\s`.
            ("{\u{1c}a:1}", "{\u{1c}a:1}"),
            ("{\u{b2}:3}", "{\u{b2}:3}"),
            (r#"{s: "{a:", b: 2}"#, r#"{"s": "{a:", "b": 2}"#),
            // A quote that never closes is an ordinary character: the search goes on after it.
            (r#"{"a, b: 1}"#, r#"{"a, "b": 1}"#),
            // `.` does not match a newline, so a backslash before one ends no string.
            ("{s: \"x\\\ny\", z: 1}", "{\"s\": \"x\\\ny\", \"z\": 1}"),
            ("{a:b:1}", "{\"a\":b:1}"),
            ("{a:1,,b:2}", "{\"a\":1,,\"b\":2}"),
            ("{,a:1}", "{,\"a\":1}"),
        ] {
            assert_eq!(quote_bare_keys(input), want, "{input:?}");
        }
    }

    /// The rewrite as it was before it was made linear (the reference's steps one by one: a
    /// `str.replace` per captured string, and a new attempt at every `"` after a string that
    /// never closes), kept to show the one-pass version gives the same text.
    mod quadratic {
        use super::super::{extract_delimited, push_json_string, quote_bare_keys_from, sentinel};
        use alloc::string::String;
        use alloc::vec::Vec;

        pub(super) fn dialect_text(
            body: &str,
            unquoted_keys: bool,
            string_delims: &[(String, String)],
        ) -> String {
            let mut working: String = body.into();
            let mut captured: Vec<String> = Vec::new();
            for (open, close) in string_delims {
                working = extract_delimited(&working, open, close, &mut captured);
            }
            if unquoted_keys {
                working = quote_bare_keys_from(&working, false);
            }
            for (i, s) in captured.iter().enumerate() {
                let mut quoted = String::new();
                push_json_string(&mut quoted, s);
                working = working.replace(&sentinel(i), &quoted);
            }
            working
        }
    }

    /// `string_delims` as the content parser holds them.
    fn delims(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        match json_spec(false, pairs, false, false) {
            ContentSpec::Json { string_delims, .. } => string_delims,
            _ => unreachable!(),
        }
    }

    /// The one-pass rewrite gives the text the step-by-step one gives, on hand-picked inputs:
    /// sentinels cut up by a later pair, stray `\x01`/`\x02`, unclosed strings with escaped
    /// quotes, indices past 9 (`\x011\x02` inside `\x0112\x02` is no sentinel).
    #[test]
    fn dialect_rewrite_is_the_step_by_step_one() {
        let many: String = (0..30).map(|i| format!("k{i}:<<v{i}>>,")).collect();
        type Case<'a> = (&'a str, bool, &'a [(&'a str, &'a str)]);
        let cases: &[Case<'_>] = &[
            (
                r#"{a:<|"|>x<|"|>,b:<|"|>say "hi", c:1<|"|>}"#,
                true,
                &[("<|\"|>", "<|\"|>")],
            ),
            (
                r#"[<<a>>, [[b<<c]], <<d>>]"#,
                false,
                &[("<<", ">>"), ("[[", "]]")],
            ),
            (r#"[<<0>>, <<1>>, "x"]"#, false, &[("<<", ">>"), ("1", ">")]),
            ("[<<0>>, <<1>>]", false, &[("<<", ">>"), ("\u{1}", "\u{2}")]),
            ("[<<0>>, <<1>>]", false, &[("<<", ">>"), ("0\u{2}", "1")]),
            ("ab", false, &[("", "")]),
            (r#"{"\"\"\"\"\", a:1, <<x>>"#, true, &[("<<", ">>")]),
            ("{\"a\\\n\"b:1,\"\\\"\\\"c:2}", true, &[]),
            ("{\"a\\", true, &[]),
            (&many, true, &[("<<", ">>")]),
        ];
        for (body, unquoted, pairs) in cases {
            let pairs = delims(pairs);
            assert_eq!(
                dialect_text(body, *unquoted, &pairs),
                quadratic::dialect_text(body, *unquoted, &pairs),
                "{body:?}"
            );
        }
    }

    proptest::proptest! {
        /// The same on random text over the characters that matter.
        #[test]
        fn dialect_rewrite_matches_on_random_text(
            body in proptest::collection::vec(
                proptest::sample::select(vec![
                    "{", "}", ",", ":", "\"", "\\", "\n", " ", "a", "é", "0", "1", "2",
                    "\u{1}", "\u{2}", "<<", ">>", "<", ">",
                ]),
                0..40,
            ),
            unquoted in proptest::bool::ANY,
            which in 0usize..4,
        ) {
            let body: String = body.concat();
            let pairs = delims(match which {
                0 => &[],
                1 => &[("<<", ">>")],
                2 => &[("<<", ">>"), ("1", ">")],
                _ => &[("<", ">"), ("\u{2}", "0")],
            });
            proptest::prop_assert_eq!(
                dialect_text(&body, unquoted, &pairs),
                quadratic::dialect_text(&body, unquoted, &pairs)
            );
        }
    }

    /// Values from the reference (5.24.0 oracle, `parse_content(body, "json", args)`) for
    /// Gemma 4's `<|"|>` strings with bare keys.
    #[test]
    fn json_string_delims_reference_values() {
        let gemma = json_spec(true, &[("<|\"|>", "<|\"|>")], false, true);
        ok(
            r#"{a:<|"|>x<|"|>,b:<|"|>say "hi", c:1<|"|>}"#,
            &gemma,
            r#"{"a": "x", "b": "say \"hi\", c:1"}"#,
        );
        ok(
            r#"{a:<|"|>\"<|"|>, "b\"c": 1, d : <|"|><|"|>}"#,
            &gemma,
            r#"{"a": "\\\"", "b\"c": 1, "d": ""}"#,
        );
        ok(
            r#"{"s": "\"\"\"", t: <|"|>1<|"|>}"#,
            &gemma,
            r#"{"s": "\"\"\"", "t": "1"}"#,
        );
        ok(
            r#"[<<0>>, <<1>>, "x"]"#,
            &json_spec(false, &[("<<", ">>"), ("1", ">")], false, true),
            r#"["0", "1", "x"]"#,
        );
    }

    #[test]
    fn json_string_delims() {
        ok(
            "{\"k\": <<he said \"hi\"\n>>}",
            &json_spec(false, &[("<<", ">>")], false, true),
            r#"{"k": "he said \"hi\"\n"}"#,
        );
        ok(
            r#"{"a": <<x>>, "b": [[y]]}"#,
            &json_spec(false, &[("<<", ">>"), ("[[", "]]")], false, true),
            r#"{"a": "x", "b": "y"}"#,
        );
        ok(
            "{<<key>>: 1}",
            &json_spec(true, &[("<<", ">>")], false, true),
            r#"{"key": 1}"#,
        );
        assert!(matches!(
            err(
                r#"{"a": <<x}"#,
                &json_spec(false, &[("<<", ">>")], false, true)
            ),
            ContentError::InvalidJson { .. }
        ));
        // The sentinel check comes first and is not caught by allow_non_json.
        assert_eq!(
            err(
                "{\"a\": <<\x01>>}",
                &json_spec(false, &[("<<", ">>")], true, true)
            ),
            ContentError::ReservedSentinel
        );
        // Without string_delims a \x01 is only a JSON error (a control character in a string).
        assert!(matches!(
            err("{\"a\": \"\x01\"}", &json_plain()),
            ContentError::InvalidJson { .. }
        ));
        // Empty delimiters: Python's `(.*?)` sub gives `""` `"a"` `""` `"b"` `""`, not JSON.
        let mut captured = Vec::new();
        let out = extract_delimited("ab", "", "", &mut captured);
        assert_eq!(captured, ["", "a", "", "b", ""]);
        assert_eq!(
            out,
            "\u{1}0\u{2}\u{1}1\u{2}\u{1}2\u{2}\u{1}3\u{2}\u{1}4\u{2}"
        );
        assert!(matches!(
            err("ab", &json_spec(false, &[("", "")], false, true)),
            ContentError::InvalidJson { .. }
        ));
        // Control characters in extracted strings survive the round trip.
        ok(
            "[<<a\u{1f}\\b>>]",
            &json_spec(false, &[("<<", ">>")], false, true),
            "[\"a\\u001f\\\\b\"]",
        );
    }

    #[test]
    fn xml_inline() {
        let backref = r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>";
        // The reference's `<(?P<key>\w+)>\s*(?P<value>.*?)\s*</\1>`; fancy-regex refuses a numbered
        // backreference next to named groups, so the compiler writes `\1` as `\k<key>`.
        ok(
            "<a>1</a><b> x </b>",
            &xml(
                Some(r"<(?P<key>\w+)>\s*(?P<value>.*?)\s*</\k<key>>"),
                None,
                false,
            ),
            r#"{"a": "1", "b": "x"}"#,
        );
        ok(
            "<a>1</a>\n<b>2</b>\n<a>3</a>",
            &xml(Some(backref), None, true),
            r#"{"a": ["1", "3"], "b": "2"}"#,
        );
        ok(
            "<a>1</a>\n<b>2</b>\n<a>3</a>",
            &xml(Some(backref), None, false),
            r#"{"a": "3", "b": "2"}"#,
        );
        // Reference 5.24 (values from the 5.24.0 oracle): a first value that is a list is
        // wrapped like any other on the first duplicate (5.23 appended to it: [1, 2, 3]).
        let merge_json = xml(Some(backref), Some(json_plain()), true);
        ok(
            "<a>[1]</a><a>2</a><a>3</a>",
            &merge_json,
            r#"{"a": [[1], 2, 3]}"#,
        );
        ok("<a>[1]</a><a>[2]</a>", &merge_json, r#"{"a": [[1], [2]]}"#);
        ok(
            "<a>[]</a><b>1</b><a>[[0]]</a><b>[2]</b><a>\"x\"</a>",
            &merge_json,
            r#"{"a": [[], [[0]], "x"], "b": [1, [2]]}"#,
        );
        // A single value stays as it is; without merging the last one wins.
        ok("<a>[1]</a>", &merge_json, r#"{"a": [1]}"#);
        ok(
            "<a>[1]</a><a>2</a>",
            &xml(Some(backref), Some(json_plain()), false),
            r#"{"a": 2}"#,
        );
        ok(
            "<parameter=x>\n{\"k\": [1, 2]}\n</parameter><parameter=y>7</parameter>",
            &xml(
                Some(r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>"),
                Some(json_plain()),
                false,
            ),
            r#"{"x": {"k": [1, 2]}, "y": 7}"#,
        );
        ok(
            "<a>1</a>",
            &xml(Some(backref), Some(ContentSpec::Int { strip: true }), false),
            r#"{"a": 1}"#,
        );
        assert!(matches!(
            err(
                "<a>x</a>",
                &xml(Some(backref), Some(ContentSpec::Int { strip: true }), false)
            ),
            ContentError::InvalidInt { .. }
        ));
        // No `value` group: every value is "".
        ok(
            "k=1;v=2",
            &xml(Some(r"(?P<key>\w+)=\d"), None, false),
            r#"{"k": "", "v": ""}"#,
        );
        // Look-behind sees the text before the search position.
        ok(
            "<x>a</x><y>b</y>",
            &xml(Some(r"(?<=</x>)<(?P<key>\w)>(?P<value>\w)"), None, false),
            r#"{"y": "b"}"#,
        );
    }

    #[test]
    fn xml_inline_names_defined_twice() {
        // The reference 5.24.0 on `<(?P<key>\w+)>(?P<value>[^<]*)</\w+>|\[(?P<key>\w+)=
        // (?P<value>[^\]]*)\]`, written as the compiler writes it (`pyregex::to_fancy`: the
        // second copies as `key¹`, `value¹`).
        ok(
            "<a>1</a>[b=2]<c></c>",
            &xml(
                Some(r"<(?P<key>\w+)>(?P<value>[^<]*)</\w+>|\[(?P<key¹>\w+)=(?P<value¹>[^\]]*)\]"),
                None,
                false,
            ),
            r#"{"a": "1", "b": "2", "c": ""}"#,
        );
        // `(?P<key>\w+)(?:=(?P<value>\w+)|(?P<value>))(?P<key>!)?`: the copy that closed last
        // wins: the empty `value` of `b`, the key `!` of `c=2!` (then of `d!`).
        ok(
            "a=1 b c=2! d!",
            &xml(
                Some(r"(?P<key>\w+)(?:=(?P<value>\w+)|(?P<value¹>))(?P<key¹>!)?"),
                None,
                false,
            ),
            r#"{"a": "1", "b": "", "!": ""}"#,
        );
    }

    #[test]
    fn xml_inline_errors_and_missing_groups() {
        assert_eq!(
            err("<a>1</a>", &xml(None, None, false)),
            ContentError::MissingTagPattern
        );
        assert_eq!(
            err("<a>1</a>", &xml(Some(r"<(?P<k>\w+)>"), None, false)),
            ContentError::MissingKeyGroup {
                pattern: r"<(?P<k>\w+)>".to_owned()
            }
        );
        // The key group is only required once something matches.
        ok("zzz", &xml(Some(r"<(?P<k>\w+)>"), None, false), "{}");
        // A `value` group that did not take part gives None (null) ...
        let optional_value = r"<(?P<key>\w+)>(?:(?P<value>\d)|x)</(?P=key)>";
        ok(
            "<a>x</a>",
            &xml(Some(optional_value), None, false),
            r#"{"a": null}"#,
        );
        ok(
            "<a>x</a>",
            &xml(Some(optional_value), Some(text_spec(false)), false),
            r#"{"a": null}"#,
        );
        // ... which other value parsers reject (Python: AttributeError).
        assert!(matches!(
            err(
                "<a>x</a>",
                &xml(
                    Some(optional_value),
                    Some(ContentSpec::Int { strip: true }),
                    false
                )
            ),
            ContentError::Regex(_)
        ));
        assert!(matches!(
            err(
                "<a>x</a>",
                &xml(Some(optional_value), Some(text_spec(true)), false)
            ),
            ContentError::Regex(_)
        ));
    }

    #[test]
    fn xml_inline_empty_matches_follow_finditer() {
        // Python finditer of `a?` over "baa": "", "a", "a", "" (an empty match right after a
        // non-empty one counts; fancy-regex's own iterator drops it).
        ok(
            "baa",
            &xml(Some(r"(?P<key>a?)"), None, true),
            r#"{"": ["", ""], "a": ["", ""]}"#,
        );
    }

    #[test]
    fn kv_lines() {
        ok(
            "a: 1\nb:2:3\n\nnoline\n a : x \na: 9",
            &kv("\n", ":", true, None),
            r#"{"a": "9", "b": "2:3"}"#,
        );
        ok(
            "a=1; b = 2 ;c",
            &kv(";", "=", true, None),
            r#"{"a": "1", "b": "2"}"#,
        );
        ok(
            " a : 1 \n",
            &kv("\n", ":", false, None),
            r#"{" a ": " 1 "}"#,
        );
        ok(
            "n: 5\nm: 6",
            &kv("\n", ":", true, Some(ContentSpec::Int { strip: true })),
            r#"{"n": 5, "m": 6}"#,
        );
        assert!(matches!(
            err(
                "n: 5\nm: x",
                &kv("\n", ":", true, Some(ContentSpec::Int { strip: true }))
            ),
            ContentError::InvalidInt { .. }
        ));
        ok("\x1ca:1\x1c", &kv("|", ":", true, None), r#"{"a": "1"}"#);
        // Python: ValueError("empty separator"), but only when `split` runs.
        assert!(matches!(
            err("a:1", &kv("", ":", true, None)),
            ContentError::Regex(_)
        ));
        assert!(matches!(
            err("", &kv("", ":", true, None)),
            ContentError::Regex(_)
        ));
        assert!(matches!(
            err("a:1", &kv("\n", "", true, None)),
            ContentError::Regex(_)
        ));
        ok("\n \n", &kv("\n", "", true, None), "{}");
    }

    #[test]
    fn word_table() {
        for c in [
            'a', 'Z', '0', '_', '\u{e9}', '\u{300}', '\u{663}', '\u{4e00}', '\u{558}',
        ] {
            assert!(crate::pychar::is_word_char(c), "{c:?}");
        }
        for c in [
            '-',
            ' ',
            '{',
            ':',
            '\u{b2}',
            '\u{bd}',
            '\u{2028}',
            '\u{1f600}',
        ] {
            assert!(!crate::pychar::is_word_char(c), "{c:?}");
        }
    }
}
