//! Content parsers: turn the body of a closed region into a JSON value.
//!
//! Reference: `transformers/utils/chat_parsing/content_parsers.py` (transformers 5.23.0),
//! `parse_content` and the parsers of `CONTENT_PARSERS` (`text`, `int`, `float`, `bool`,
//! `json`, `xml-inline`, `kv-lines`). The Python built-ins they rely on are reimplemented here
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
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Map, Number, Value};

use crate::error::ContentError;
use crate::tables::ContentSpec;

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
    let mut p = JsonParser {
        s,
        b: s.as_bytes(),
        i: 0,
        unrepresentable: None,
    };
    p.ws();
    let v = p.value()?;
    p.ws();
    if p.i != p.b.len() {
        return Err(p.err(JsonFailure::Syntax, "Extra data", p.i));
    }
    match p.unrepresentable {
        Some(e) => Err(e),
        None => Ok(v),
    }
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
    let mut working = body.to_owned();
    let mut captured: Vec<String> = Vec::new();
    for (open, close) in string_delims {
        working = extract_delimited(&working, open, close, &mut captured);
    }
    if unquoted_keys {
        working = quote_bare_keys(&working);
    }
    for (i, s) in captured.iter().enumerate() {
        let mut quoted = String::with_capacity(s.len() + 2);
        push_json_string(&mut quoted, s);
        working = working.replace(&sentinel(i), &quoted);
    }
    match json_loads(&working) {
        Ok(v) => Ok(v),
        Err(e) if e.kind != JsonFailure::Fatal && allow_non_json => {
            Ok(Value::String(text(body, strip).to_owned()))
        }
        Err(e) => Err(e.into_content_error()),
    }
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

/// `re.sub(r"(?<=[{,])(\w+):", r'"\1":', working)` with the `regex` module's Unicode `\w`: a
/// run of word characters right after `{` or `,` and right before `:` is quoted.
fn quote_bare_keys(working: &str) -> String {
    let b = working.as_bytes();
    let mut out = String::with_capacity(working.len() + 8);
    let mut last = 0;
    for p in 0..b.len() {
        if b[p] != b'{' && b[p] != b',' {
            continue;
        }
        let start = p + 1;
        let run = working[start..]
            .find(|c: char| !is_word_char(c))
            .unwrap_or(working.len() - start);
        let end = start + run;
        if run > 0 && b.get(end) == Some(&b':') {
            out.push_str(&working[last..start]);
            out.push('"');
            out.push_str(&working[start..end]);
            out.push_str("\":");
            last = end + 1;
        }
    }
    out.push_str(&working[last..]);
    out
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
    let has_value_group = re.capture_names().any(|n| n == Some("value"));
    let mut out = Map::new();
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
        let Some(key) = caps.name("key") else {
            return Err(ContentError::MissingKeyGroup {
                pattern: source.map_or_else(|| re.as_str().to_owned(), ToOwned::to_owned),
            });
        };
        let raw = if has_value_group {
            caps.name("value").map(|v| v.as_str())
        } else {
            Some("")
        };
        let value = sub_parse(raw, value_parser)?;
        let key = key.as_str();
        match out.get_mut(key) {
            Some(existing) if merge => {
                if let Value::Array(items) = existing {
                    items.push(value);
                } else {
                    let first = existing.take();
                    *existing = Value::Array(alloc::vec![first, value]);
                }
            }
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

// ---------------------------------------------------------------------------------------------
// The `regex` module's `\w`
// ---------------------------------------------------------------------------------------------

/// Whether the Python `regex` module (2026.11.19, the reference's) matches `c` with a Unicode
/// `\w`. Used by `unquoted_keys` and by transform placeholders (`\{(\w+(?:\.\w+)*)\}`).
pub(crate) fn is_word_char(c: char) -> bool {
    let cp = c as u32;
    if cp < 0x80 {
        return c.is_ascii_alphanumeric() || c == '_';
    }
    // Ranges are inclusive pairs sorted by start; find the last start <= cp.
    let pairs = WORD_RANGES.len() / 2;
    let mut lo = 0;
    let mut hi = pairs;
    while lo < hi {
        let mid = (lo + hi) / 2;
        if WORD_RANGES[2 * mid] <= cp {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo > 0 && cp <= WORD_RANGES[2 * (lo - 1) + 1]
}

/// Inclusive code point ranges `start, end, start, end, ...` of the `regex` module's `\w`
/// (generated from the reference's `regex` 2026.11.19).
const WORD_RANGES: [u32; 1634] = [
    0x30, 0x39, 0x41, 0x5A, 0x5F, 0x5F, 0x61, 0x7A, 0xAA, 0xAA, 0xB5, 0xB5, 0xBA, 0xBA, 0xC0, 0xD6,
    0xD8, 0xF6, 0xF8, 0x2C1, 0x2C6, 0x2D1, 0x2E0, 0x2E4, 0x2EC, 0x2EC, 0x2EE, 0x2EE, 0x300, 0x374,
    0x376, 0x377, 0x37A, 0x37D, 0x37F, 0x37F, 0x386, 0x386, 0x388, 0x38A, 0x38C, 0x38C, 0x38E,
    0x3A1, 0x3A3, 0x3F5, 0x3F7, 0x481, 0x483, 0x52F, 0x531, 0x556, 0x558, 0x559, 0x560, 0x588,
    0x58B, 0x58C, 0x591, 0x5BD, 0x5BF, 0x5BF, 0x5C1, 0x5C2, 0x5C4, 0x5C5, 0x5C7, 0x5C9, 0x5D0,
    0x5EA, 0x5EF, 0x5F2, 0x610, 0x61A, 0x620, 0x669, 0x66E, 0x6D3, 0x6D5, 0x6DC, 0x6DF, 0x6E8,
    0x6EA, 0x6FC, 0x6FF, 0x6FF, 0x710, 0x74A, 0x74D, 0x7B1, 0x7C0, 0x7F5, 0x7FA, 0x7FA, 0x7FD,
    0x7FD, 0x800, 0x82D, 0x840, 0x85B, 0x860, 0x86A, 0x870, 0x887, 0x889, 0x88F, 0x897, 0x8E1,
    0x8E3, 0x963, 0x966, 0x96F, 0x971, 0x983, 0x985, 0x98C, 0x98F, 0x990, 0x993, 0x9A8, 0x9AA,
    0x9B0, 0x9B2, 0x9B2, 0x9B6, 0x9B9, 0x9BC, 0x9C4, 0x9C7, 0x9C8, 0x9CB, 0x9CE, 0x9D7, 0x9D7,
    0x9DC, 0x9DD, 0x9DF, 0x9E3, 0x9E6, 0x9F1, 0x9FC, 0x9FC, 0x9FE, 0x9FE, 0xA01, 0xA03, 0xA05,
    0xA0A, 0xA0F, 0xA10, 0xA13, 0xA28, 0xA2A, 0xA30, 0xA32, 0xA33, 0xA35, 0xA36, 0xA38, 0xA39,
    0xA3C, 0xA3C, 0xA3E, 0xA42, 0xA47, 0xA48, 0xA4B, 0xA4D, 0xA51, 0xA51, 0xA59, 0xA5C, 0xA5E,
    0xA5E, 0xA66, 0xA75, 0xA81, 0xA83, 0xA85, 0xA8D, 0xA8F, 0xA91, 0xA93, 0xAA8, 0xAAA, 0xAB0,
    0xAB2, 0xAB3, 0xAB5, 0xAB9, 0xABC, 0xAC5, 0xAC7, 0xAC9, 0xACB, 0xACD, 0xAD0, 0xAD0, 0xAE0,
    0xAE3, 0xAE6, 0xAEF, 0xAF9, 0xAFF, 0xB01, 0xB03, 0xB05, 0xB0C, 0xB0F, 0xB10, 0xB13, 0xB28,
    0xB2A, 0xB30, 0xB32, 0xB33, 0xB35, 0xB39, 0xB3C, 0xB44, 0xB47, 0xB48, 0xB4B, 0xB4D, 0xB53,
    0xB57, 0xB5C, 0xB5D, 0xB5F, 0xB63, 0xB66, 0xB6F, 0xB71, 0xB71, 0xB82, 0xB83, 0xB85, 0xB8A,
    0xB8E, 0xB90, 0xB92, 0xB95, 0xB99, 0xB9A, 0xB9C, 0xB9C, 0xB9E, 0xB9F, 0xBA3, 0xBA4, 0xBA8,
    0xBAA, 0xBAE, 0xBB9, 0xBBE, 0xBC2, 0xBC6, 0xBC8, 0xBCA, 0xBCD, 0xBD0, 0xBD0, 0xBD7, 0xBD7,
    0xBE6, 0xBEF, 0xC00, 0xC0C, 0xC0E, 0xC10, 0xC12, 0xC28, 0xC2A, 0xC39, 0xC3C, 0xC44, 0xC46,
    0xC48, 0xC4A, 0xC4D, 0xC55, 0xC56, 0xC58, 0xC5A, 0xC5C, 0xC5D, 0xC60, 0xC63, 0xC66, 0xC6F,
    0xC80, 0xC83, 0xC85, 0xC8C, 0xC8E, 0xC90, 0xC92, 0xCA8, 0xCAA, 0xCB3, 0xCB5, 0xCB9, 0xCBC,
    0xCC4, 0xCC6, 0xCC8, 0xCCA, 0xCCD, 0xCD5, 0xCD6, 0xCDC, 0xCDE, 0xCE0, 0xCE3, 0xCE6, 0xCEF,
    0xCF1, 0xCF3, 0xD00, 0xD0C, 0xD0E, 0xD10, 0xD12, 0xD44, 0xD46, 0xD48, 0xD4A, 0xD4E, 0xD54,
    0xD57, 0xD5F, 0xD63, 0xD66, 0xD6F, 0xD7A, 0xD7F, 0xD81, 0xD83, 0xD85, 0xD96, 0xD9A, 0xDB1,
    0xDB3, 0xDBB, 0xDBD, 0xDBD, 0xDC0, 0xDC6, 0xDCA, 0xDCA, 0xDCF, 0xDD4, 0xDD6, 0xDD6, 0xDD8,
    0xDDF, 0xDE6, 0xDEF, 0xDF2, 0xDF3, 0xE01, 0xE3A, 0xE40, 0xE4E, 0xE50, 0xE59, 0xE81, 0xE82,
    0xE84, 0xE84, 0xE86, 0xE8A, 0xE8C, 0xEA3, 0xEA5, 0xEA5, 0xEA7, 0xEBD, 0xEC0, 0xEC4, 0xEC6,
    0xEC6, 0xEC8, 0xECE, 0xED0, 0xED9, 0xEDC, 0xEDF, 0xF00, 0xF00, 0xF18, 0xF19, 0xF20, 0xF29,
    0xF35, 0xF35, 0xF37, 0xF37, 0xF39, 0xF39, 0xF3E, 0xF47, 0xF49, 0xF6C, 0xF71, 0xF84, 0xF86,
    0xF97, 0xF99, 0xFBC, 0xFC6, 0xFC6, 0x1000, 0x1049, 0x1050, 0x109D, 0x10A0, 0x10C5, 0x10C7,
    0x10C7, 0x10CD, 0x10CD, 0x10D0, 0x10FA, 0x10FC, 0x1248, 0x124A, 0x124D, 0x1250, 0x1256, 0x1258,
    0x1258, 0x125A, 0x125D, 0x1260, 0x1288, 0x128A, 0x128D, 0x1290, 0x12B0, 0x12B2, 0x12B5, 0x12B8,
    0x12BE, 0x12C0, 0x12C0, 0x12C2, 0x12C5, 0x12C8, 0x12D6, 0x12D8, 0x1310, 0x1312, 0x1315, 0x1318,
    0x135A, 0x135D, 0x135F, 0x1380, 0x138F, 0x13A0, 0x13F5, 0x13F8, 0x13FD, 0x1401, 0x166C, 0x166F,
    0x167F, 0x1681, 0x169A, 0x16A0, 0x16EA, 0x16EE, 0x16F8, 0x1700, 0x1715, 0x171F, 0x1734, 0x1740,
    0x1753, 0x1760, 0x176C, 0x176E, 0x1770, 0x1772, 0x1773, 0x1780, 0x17D3, 0x17D7, 0x17D7, 0x17DC,
    0x17DD, 0x17E0, 0x17E9, 0x180B, 0x180D, 0x180F, 0x1819, 0x1820, 0x1878, 0x1880, 0x18AA, 0x18B0,
    0x18F5, 0x1900, 0x191E, 0x1920, 0x192B, 0x1930, 0x193B, 0x1946, 0x196D, 0x1970, 0x1974, 0x1980,
    0x19AB, 0x19B0, 0x19C9, 0x19D0, 0x19D9, 0x1A00, 0x1A1B, 0x1A20, 0x1A5E, 0x1A60, 0x1A7C, 0x1A7F,
    0x1A89, 0x1A90, 0x1A99, 0x1AA7, 0x1AA7, 0x1AB0, 0x1AF0, 0x1B00, 0x1B4C, 0x1B50, 0x1B59, 0x1B6B,
    0x1B73, 0x1B80, 0x1BF3, 0x1C00, 0x1C37, 0x1C40, 0x1C49, 0x1C4D, 0x1C7D, 0x1C80, 0x1C8A, 0x1C90,
    0x1CBA, 0x1CBD, 0x1CBF, 0x1CD0, 0x1CD2, 0x1CD4, 0x1CFA, 0x1D00, 0x1F15, 0x1F18, 0x1F1D, 0x1F20,
    0x1F45, 0x1F48, 0x1F4D, 0x1F50, 0x1F57, 0x1F59, 0x1F59, 0x1F5B, 0x1F5B, 0x1F5D, 0x1F5D, 0x1F5F,
    0x1F7D, 0x1F80, 0x1FB4, 0x1FB6, 0x1FBC, 0x1FBE, 0x1FBE, 0x1FC2, 0x1FC4, 0x1FC6, 0x1FCC, 0x1FD0,
    0x1FD3, 0x1FD6, 0x1FDB, 0x1FE0, 0x1FEC, 0x1FF2, 0x1FF4, 0x1FF6, 0x1FFC, 0x200C, 0x200D, 0x203F,
    0x2040, 0x2054, 0x2054, 0x2071, 0x2071, 0x207F, 0x207F, 0x208F, 0x209F, 0x20D0, 0x20F0, 0x2102,
    0x2102, 0x2107, 0x2107, 0x210A, 0x2113, 0x2115, 0x2115, 0x2119, 0x211D, 0x2124, 0x2124, 0x2126,
    0x2126, 0x2128, 0x2128, 0x212A, 0x212D, 0x212F, 0x2139, 0x213C, 0x213F, 0x2145, 0x2149, 0x214E,
    0x214E, 0x2160, 0x2188, 0x24B6, 0x24E9, 0x2C00, 0x2CE4, 0x2CEB, 0x2CF3, 0x2D00, 0x2D25, 0x2D27,
    0x2D27, 0x2D2D, 0x2D2D, 0x2D30, 0x2D67, 0x2D6F, 0x2D6F, 0x2D7F, 0x2D96, 0x2DA0, 0x2DA6, 0x2DA8,
    0x2DAE, 0x2DB0, 0x2DB6, 0x2DB8, 0x2DBE, 0x2DC0, 0x2DC6, 0x2DC8, 0x2DCE, 0x2DD0, 0x2DD6, 0x2DD8,
    0x2DDE, 0x2DE0, 0x2DFF, 0x2E2F, 0x2E2F, 0x3005, 0x3007, 0x3021, 0x302F, 0x3031, 0x3035, 0x3038,
    0x303C, 0x3041, 0x3096, 0x3099, 0x309A, 0x309D, 0x309F, 0x30A1, 0x30FA, 0x30FC, 0x30FF, 0x3105,
    0x312F, 0x3131, 0x318E, 0x31A0, 0x31BF, 0x31F0, 0x31FF, 0x3400, 0x4DBF, 0x4E00, 0xA48C, 0xA4D0,
    0xA4FD, 0xA500, 0xA60C, 0xA610, 0xA62B, 0xA640, 0xA672, 0xA674, 0xA67D, 0xA67F, 0xA6F1, 0xA717,
    0xA71F, 0xA722, 0xA788, 0xA78B, 0xA7DD, 0xA7E2, 0xA7E2, 0xA7F1, 0xA827, 0xA82C, 0xA82C, 0xA840,
    0xA873, 0xA880, 0xA8C5, 0xA8D0, 0xA8D9, 0xA8E0, 0xA8F7, 0xA8FB, 0xA8FB, 0xA8FD, 0xA92D, 0xA930,
    0xA953, 0xA960, 0xA97C, 0xA980, 0xA9C0, 0xA9CF, 0xA9D9, 0xA9E0, 0xA9FE, 0xAA00, 0xAA36, 0xAA40,
    0xAA4D, 0xAA50, 0xAA59, 0xAA60, 0xAA76, 0xAA7A, 0xAAC2, 0xAADB, 0xAADD, 0xAAE0, 0xAAEF, 0xAAF2,
    0xAAF6, 0xAB01, 0xAB06, 0xAB09, 0xAB0E, 0xAB11, 0xAB16, 0xAB20, 0xAB26, 0xAB28, 0xAB2E, 0xAB30,
    0xAB5A, 0xAB5C, 0xAB69, 0xAB6C, 0xAB6D, 0xAB70, 0xABEA, 0xABEC, 0xABED, 0xABF0, 0xABF9, 0xAC00,
    0xD7A3, 0xD7B0, 0xD7C6, 0xD7CB, 0xD7FB, 0xF900, 0xFA6D, 0xFA70, 0xFAD9, 0xFB00, 0xFB06, 0xFB13,
    0xFB17, 0xFB1D, 0xFB28, 0xFB2A, 0xFB36, 0xFB38, 0xFB3C, 0xFB3E, 0xFB3E, 0xFB40, 0xFB41, 0xFB43,
    0xFB44, 0xFB46, 0xFBB1, 0xFBD3, 0xFD3D, 0xFD50, 0xFD8F, 0xFD92, 0xFDC7, 0xFDF0, 0xFDFB, 0xFE00,
    0xFE0F, 0xFE20, 0xFE2F, 0xFE33, 0xFE34, 0xFE4D, 0xFE4F, 0xFE70, 0xFE74, 0xFE76, 0xFEFC, 0xFF10,
    0xFF19, 0xFF21, 0xFF3A, 0xFF3F, 0xFF3F, 0xFF41, 0xFF5A, 0xFF66, 0xFFBE, 0xFFC2, 0xFFC7, 0xFFCA,
    0xFFCF, 0xFFD2, 0xFFD7, 0xFFDA, 0xFFDC, 0x10000, 0x1000B, 0x1000D, 0x10026, 0x10028, 0x1003A,
    0x1003C, 0x1003D, 0x1003F, 0x1004D, 0x10050, 0x1005D, 0x10080, 0x100FA, 0x10140, 0x10174,
    0x101FD, 0x101FD, 0x10280, 0x1029C, 0x102A0, 0x102D0, 0x102E0, 0x102E0, 0x10300, 0x1031F,
    0x1032D, 0x1034A, 0x10350, 0x1037A, 0x10380, 0x1039D, 0x103A0, 0x103C3, 0x103C8, 0x103CF,
    0x103D1, 0x103D5, 0x10400, 0x1049D, 0x104A0, 0x104A9, 0x104B0, 0x104D3, 0x104D8, 0x104FB,
    0x10500, 0x10527, 0x10530, 0x10563, 0x10570, 0x1057A, 0x1057C, 0x1058A, 0x1058C, 0x10592,
    0x10594, 0x10595, 0x10597, 0x105A1, 0x105A3, 0x105B1, 0x105B3, 0x105B9, 0x105BB, 0x105BC,
    0x105C0, 0x105F3, 0x10600, 0x10736, 0x10740, 0x10755, 0x10760, 0x10767, 0x10780, 0x10785,
    0x10787, 0x107B0, 0x107B2, 0x107BF, 0x10800, 0x10805, 0x10808, 0x10808, 0x1080A, 0x10835,
    0x10837, 0x10838, 0x1083C, 0x1083C, 0x1083F, 0x10855, 0x10860, 0x10876, 0x10880, 0x1089E,
    0x108E0, 0x108F2, 0x108F4, 0x108F5, 0x10900, 0x10915, 0x10920, 0x10939, 0x10940, 0x10959,
    0x10980, 0x109B7, 0x109BE, 0x109BF, 0x10A00, 0x10A03, 0x10A05, 0x10A06, 0x10A0C, 0x10A13,
    0x10A15, 0x10A17, 0x10A19, 0x10A35, 0x10A38, 0x10A3A, 0x10A3F, 0x10A3F, 0x10A60, 0x10A7C,
    0x10A80, 0x10A9C, 0x10AC0, 0x10AC7, 0x10AC9, 0x10AE6, 0x10B00, 0x10B35, 0x10B40, 0x10B55,
    0x10B60, 0x10B72, 0x10B80, 0x10B91, 0x10C00, 0x10C48, 0x10C80, 0x10CB2, 0x10CC0, 0x10CF2,
    0x10D00, 0x10D27, 0x10D30, 0x10D39, 0x10D40, 0x10D65, 0x10D69, 0x10D6D, 0x10D6F, 0x10D85,
    0x10E80, 0x10EA9, 0x10EAB, 0x10EAC, 0x10EB0, 0x10EB1, 0x10EC2, 0x10EC7, 0x10ECB, 0x10ECF,
    0x10ED9, 0x10EEE, 0x10EF0, 0x10F1C, 0x10F27, 0x10F27, 0x10F30, 0x10F50, 0x10F70, 0x10F85,
    0x10FB0, 0x10FC4, 0x10FE0, 0x10FF6, 0x11000, 0x11046, 0x11066, 0x11075, 0x1107F, 0x110BA,
    0x110C2, 0x110C2, 0x110D0, 0x110E8, 0x110F0, 0x110F9, 0x11100, 0x11134, 0x11136, 0x1113F,
    0x11144, 0x11147, 0x11150, 0x11173, 0x11176, 0x11176, 0x11180, 0x111C4, 0x111C9, 0x111CC,
    0x111CE, 0x111DA, 0x111DC, 0x111DC, 0x11200, 0x11211, 0x11213, 0x11237, 0x1123E, 0x11241,
    0x11280, 0x11286, 0x11288, 0x11288, 0x1128A, 0x1128D, 0x1128F, 0x1129D, 0x1129F, 0x112A8,
    0x112B0, 0x112EA, 0x112F0, 0x112F9, 0x11300, 0x11303, 0x11305, 0x1130C, 0x1130F, 0x11310,
    0x11313, 0x11328, 0x1132A, 0x11330, 0x11332, 0x11333, 0x11335, 0x11339, 0x1133B, 0x11344,
    0x11347, 0x11348, 0x1134B, 0x1134D, 0x11350, 0x11350, 0x11357, 0x11357, 0x1135D, 0x11363,
    0x11366, 0x1136C, 0x11370, 0x11374, 0x11380, 0x11389, 0x1138B, 0x1138B, 0x1138E, 0x1138E,
    0x11390, 0x113B5, 0x113B7, 0x113C0, 0x113C2, 0x113C2, 0x113C5, 0x113C5, 0x113C7, 0x113CA,
    0x113CC, 0x113D3, 0x113E1, 0x113E2, 0x11400, 0x1144A, 0x11450, 0x11459, 0x1145E, 0x11461,
    0x11480, 0x114C5, 0x114C7, 0x114C7, 0x114D0, 0x114D9, 0x11580, 0x115B5, 0x115B8, 0x115C0,
    0x115D8, 0x115DD, 0x11600, 0x11640, 0x11644, 0x11644, 0x11650, 0x11659, 0x11680, 0x116B8,
    0x116C0, 0x116C9, 0x116D0, 0x116E3, 0x11700, 0x1171A, 0x1171D, 0x1172B, 0x11730, 0x11739,
    0x11740, 0x11746, 0x11800, 0x1183A, 0x118A0, 0x118E9, 0x118FF, 0x11906, 0x11909, 0x11909,
    0x1190C, 0x11913, 0x11915, 0x11916, 0x11918, 0x11935, 0x11937, 0x11938, 0x1193B, 0x11943,
    0x11950, 0x11959, 0x119A0, 0x119A7, 0x119AA, 0x119D7, 0x119DA, 0x119E1, 0x119E3, 0x119E4,
    0x11A00, 0x11A3E, 0x11A47, 0x11A47, 0x11A50, 0x11A99, 0x11A9D, 0x11A9D, 0x11AB0, 0x11AF8,
    0x11B0A, 0x11B0A, 0x11B60, 0x11B67, 0x11BC0, 0x11BE0, 0x11BF0, 0x11BF9, 0x11C00, 0x11C08,
    0x11C0A, 0x11C36, 0x11C38, 0x11C40, 0x11C50, 0x11C59, 0x11C72, 0x11C8F, 0x11C92, 0x11CA7,
    0x11CA9, 0x11CB6, 0x11D00, 0x11D06, 0x11D08, 0x11D09, 0x11D0B, 0x11D36, 0x11D3A, 0x11D3A,
    0x11D3C, 0x11D3D, 0x11D3F, 0x11D47, 0x11D50, 0x11D59, 0x11D60, 0x11D65, 0x11D67, 0x11D68,
    0x11D6A, 0x11D8E, 0x11D90, 0x11D91, 0x11D93, 0x11D98, 0x11DA0, 0x11DA9, 0x11DB0, 0x11DDB,
    0x11DE0, 0x11DE9, 0x11DF0, 0x11DF1, 0x11EE0, 0x11EF6, 0x11F00, 0x11F10, 0x11F12, 0x11F3A,
    0x11F3E, 0x11F42, 0x11F50, 0x11F5A, 0x11FB0, 0x11FB0, 0x12000, 0x12399, 0x12400, 0x1246F,
    0x12475, 0x12543, 0x12550, 0x12686, 0x12F90, 0x12FF0, 0x13000, 0x1342F, 0x13440, 0x13455,
    0x13460, 0x143FA, 0x14400, 0x14646, 0x16100, 0x16139, 0x16800, 0x16A38, 0x16A40, 0x16A5E,
    0x16A60, 0x16A69, 0x16A70, 0x16ABE, 0x16AC0, 0x16AC9, 0x16AD0, 0x16AED, 0x16AF0, 0x16AF4,
    0x16B00, 0x16B36, 0x16B40, 0x16B43, 0x16B50, 0x16B59, 0x16B63, 0x16B77, 0x16B7D, 0x16B8F,
    0x16D40, 0x16D6C, 0x16D70, 0x16D79, 0x16E40, 0x16E7F, 0x16EA0, 0x16EB8, 0x16EBB, 0x16ED3,
    0x16F00, 0x16F4A, 0x16F4F, 0x16F87, 0x16F8F, 0x16F9F, 0x16FE0, 0x16FE1, 0x16FE3, 0x16FE4,
    0x16FF0, 0x16FF6, 0x17000, 0x18CDA, 0x18CFF, 0x18D20, 0x18D80, 0x18DF2, 0x18E00, 0x19191,
    0x191A0, 0x191D2, 0x1AFF0, 0x1AFF3, 0x1AFF5, 0x1AFFB, 0x1AFFD, 0x1AFFE, 0x1B000, 0x1B128,
    0x1B132, 0x1B132, 0x1B150, 0x1B152, 0x1B155, 0x1B155, 0x1B164, 0x1B168, 0x1B170, 0x1B2FB,
    0x1BC00, 0x1BC6A, 0x1BC70, 0x1BC7C, 0x1BC80, 0x1BC88, 0x1BC90, 0x1BC99, 0x1BC9D, 0x1BC9E,
    0x1CCF0, 0x1CCF9, 0x1CF00, 0x1CF2D, 0x1CF30, 0x1CF46, 0x1D127, 0x1D128, 0x1D165, 0x1D169,
    0x1D16D, 0x1D172, 0x1D17B, 0x1D182, 0x1D185, 0x1D18B, 0x1D1AA, 0x1D1AD, 0x1D242, 0x1D244,
    0x1D250, 0x1D252, 0x1D25B, 0x1D25C, 0x1D25F, 0x1D25F, 0x1D280, 0x1D281, 0x1D400, 0x1D454,
    0x1D456, 0x1D49C, 0x1D49E, 0x1D49F, 0x1D4A2, 0x1D4A2, 0x1D4A5, 0x1D4A6, 0x1D4A9, 0x1D4AC,
    0x1D4AE, 0x1D4B9, 0x1D4BB, 0x1D4BB, 0x1D4BD, 0x1D4C3, 0x1D4C5, 0x1D505, 0x1D507, 0x1D50A,
    0x1D50D, 0x1D514, 0x1D516, 0x1D51C, 0x1D51E, 0x1D539, 0x1D53B, 0x1D53E, 0x1D540, 0x1D544,
    0x1D546, 0x1D546, 0x1D54A, 0x1D550, 0x1D552, 0x1D6A6, 0x1D6A8, 0x1D6C0, 0x1D6C2, 0x1D6DA,
    0x1D6DC, 0x1D6FA, 0x1D6FC, 0x1D714, 0x1D716, 0x1D734, 0x1D736, 0x1D74E, 0x1D750, 0x1D76E,
    0x1D770, 0x1D788, 0x1D78A, 0x1D7A8, 0x1D7AA, 0x1D7C2, 0x1D7C4, 0x1D7CB, 0x1D7CE, 0x1D7FF,
    0x1DA00, 0x1DA36, 0x1DA3B, 0x1DA6C, 0x1DA75, 0x1DA75, 0x1DA84, 0x1DA84, 0x1DA9B, 0x1DA9F,
    0x1DAA1, 0x1DAAF, 0x1DF00, 0x1DF81, 0x1DF90, 0x1DF96, 0x1DFCD, 0x1E006, 0x1E008, 0x1E018,
    0x1E01B, 0x1E021, 0x1E023, 0x1E024, 0x1E026, 0x1E02A, 0x1E030, 0x1E06D, 0x1E08F, 0x1E08F,
    0x1E100, 0x1E12C, 0x1E130, 0x1E13D, 0x1E140, 0x1E149, 0x1E14E, 0x1E14E, 0x1E290, 0x1E2AE,
    0x1E2C0, 0x1E2F9, 0x1E4D0, 0x1E4F9, 0x1E5D0, 0x1E5FA, 0x1E6C0, 0x1E6DE, 0x1E6E0, 0x1E6F5,
    0x1E6FE, 0x1E6FF, 0x1E7E0, 0x1E7E6, 0x1E7E8, 0x1E7EB, 0x1E7ED, 0x1E7EE, 0x1E7F0, 0x1E7FE,
    0x1E800, 0x1E8C4, 0x1E8D0, 0x1E8D6, 0x1E900, 0x1E94B, 0x1E950, 0x1E959, 0x1EE00, 0x1EE03,
    0x1EE05, 0x1EE1F, 0x1EE21, 0x1EE22, 0x1EE24, 0x1EE24, 0x1EE27, 0x1EE27, 0x1EE29, 0x1EE32,
    0x1EE34, 0x1EE37, 0x1EE39, 0x1EE39, 0x1EE3B, 0x1EE3B, 0x1EE42, 0x1EE42, 0x1EE47, 0x1EE47,
    0x1EE49, 0x1EE49, 0x1EE4B, 0x1EE4B, 0x1EE4D, 0x1EE4F, 0x1EE51, 0x1EE52, 0x1EE54, 0x1EE54,
    0x1EE57, 0x1EE57, 0x1EE59, 0x1EE59, 0x1EE5B, 0x1EE5B, 0x1EE5D, 0x1EE5D, 0x1EE5F, 0x1EE5F,
    0x1EE61, 0x1EE62, 0x1EE64, 0x1EE64, 0x1EE67, 0x1EE6A, 0x1EE6C, 0x1EE72, 0x1EE74, 0x1EE77,
    0x1EE79, 0x1EE7C, 0x1EE7E, 0x1EE7E, 0x1EE80, 0x1EE89, 0x1EE8B, 0x1EE9B, 0x1EEA1, 0x1EEA3,
    0x1EEA5, 0x1EEA9, 0x1EEAB, 0x1EEBB, 0x1F130, 0x1F149, 0x1F150, 0x1F169, 0x1F170, 0x1F189,
    0x1FBF0, 0x1FBF9, 0x20000, 0x2A6DF, 0x2A700, 0x2B81E, 0x2B820, 0x2CEAD, 0x2CEB0, 0x2EBE0,
    0x2EBF0, 0x2EE5D, 0x2F800, 0x2FA1D, 0x30000, 0x3134A, 0x31350, 0x33479, 0x3D000, 0x3FC3F,
    0xE0100, 0xE01EF,
];

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
        let u = json_spec(true, &[], false, true);
        ok(
            r#"{a: 1,b_2:"x","c": {d: [1]},é:2}"#,
            &u,
            r#"{"a": 1, "b_2": "x", "c": {"d": [1]}, "é": 2}"#,
        );
        ok("{a: {b:1},c:2}", &u, r#"{"a": {"b": 1}, "c": 2}"#);
        ok("[{a:1},{b:2}]", &u, r#"[{"a": 1}, {"b": 2}]"#);
        // Not after `{`/`,` directly, or not directly before `:`: left alone, so invalid.
        assert!(matches!(
            err(r#"{a: 1, b_2:"x"}"#, &u),
            ContentError::InvalidJson { .. }
        ));
        assert!(matches!(
            err("{a : 1}", &u),
            ContentError::InvalidJson { .. }
        ));
        // U+00B2 is `\w` for Python's `re` but not for the `regex` module the reference uses.
        assert!(matches!(
            err("{a: 1,\u{b2}:3}", &u),
            ContentError::InvalidJson { .. }
        ));
        assert_eq!(quote_bare_keys("{\u{b2}:3}"), "{\u{b2}:3}");
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
        // A first value that is already a list is extended (Python appends to it).
        ok(
            "<a>[1]</a><a>2</a><a>3</a>",
            &xml(Some(backref), Some(json_plain()), true),
            r#"{"a": [1, 2, 3]}"#,
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
            assert!(is_word_char(c), "{c:?}");
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
            assert!(!is_word_char(c), "{c:?}");
        }
    }
}
