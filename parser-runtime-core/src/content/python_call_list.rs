//! `python-call-list`: a list of keyword-argument calls, `[get_weather(city="Paris"), f()]`,
//! read into `[{"name": "get_weather", "arguments": {"city": "Paris"}}, ...]`.
//!
//! Reference: `_python_call_list` in `content_parsers.py` (transformers 5.24.0), whose grammar
//! is strict on purpose so that other implementations can match it exactly:
//!
//! ```text
//! body      = ws "[" ws [ call ( ws "," ws call )* ] ws "]" ws          (nothing after "]")
//! call      = name ws "(" ws [ argument ( ws "," ws argument )* ] ws ")"
//! argument  = name ws "=" ws value                                      (keywords only)
//! value     = string | number | list | dict | True | true | False | false | None | null
//! list      = "[" ws [ value ( ws "," ws value )* ] ws "]"
//! dict      = "{" ws [ string ws ":" ws value ( ws "," ws ... )* ] ws "}"
//! name      = [A-Za-z_][A-Za-z0-9_]* ( [-.] [A-Za-z0-9_]+ )*
//! number    = -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
//! ws        = [ \t\n\r]*
//! ```
//!
//! - No trailing commas, no positional arguments, no repeated keyword argument in a call, no
//!   repeated key in a dict (each checked when its call or dict is complete).
//! - Strings are quoted with `'` or `"`, hold no raw line break (`\n`, `\r`), and know the
//!   escapes `\\ \' \" \/ \b \f \n \r \t` and `\uXXXX`; a high-surrogate escape directly
//!   followed by a low-surrogate escape is one character, any other surrogate escape is an
//!   error.
//! - A number without fraction or exponent is an integer: at most 17 characters (sign
//!   included) and within ±(2^53 - 1); anything else is a float, an error when it overflows
//!   to infinity.
//! - A constant is a whole name (`True.x` and `null_value` are not constants).
//! - Lists and dicts nest at most [`MAX_DEPTH`] deep.
//!
//! Errors are [`ContentError::InvalidCallList`] with the byte offset in the body where the
//! reference reports its (character) position: where the offending token starts, after the
//! whitespace before it; a string's opening quote for errors inside a string; just after the
//! closing `)` or `}` for a repeated name. Where the body has several faults the first one the
//! reference meets is reported (a string is delimited before its escapes are read).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Map, Number, Value};

use crate::error::ContentError;

/// How deeply lists and dicts may nest (the reference's `_CALL_LIST_MAX_DEPTH`): a list or
/// dict inside [`MAX_DEPTH`] enclosing ones is an error.
pub const MAX_DEPTH: usize = 100;

/// The largest integer magnitude, 2^53 - 1 (the reference's `_CALL_LIST_MAX_INTEGER`).
pub const MAX_INTEGER: i64 = (1 << 53) - 1;

/// The longest integer literal, sign included; longer ones are errors without being read.
const MAX_INTEGER_CHARS: usize = 17;

/// Reads `body` as a list of calls (reference `_python_call_list`).
pub(crate) fn python_call_list(body: &str) -> Result<Value, ContentError> {
    let mut r = Reader {
        s: body,
        b: body.as_bytes(),
        i: 0,
    };
    r.expect(b'[', "expected '[' to open the list of calls")?;
    let calls = r.items(b']', Reader::call)?;
    r.skip_ws();
    if r.i != r.b.len() {
        return Err(r.fail("unexpected text after the closing ']'"));
    }
    Ok(Value::Array(calls))
}

/// Lenient mode: the complete calls at the start of a body that does not parse whole (a
/// list cut off by the end of the output, or a bad call after good ones). Returns a body of
/// those calls alone that [`python_call_list`] reads (the text up to the end of the last
/// complete call, closed with `]`) and the byte offset in `body` where that call ends, or
/// just past the list's own `]` when it follows (an empty list included); `None` when the
/// body does not open with `[` or not even the first call is complete.
pub(crate) fn complete_calls(body: &str) -> Option<(String, usize)> {
    let mut r = Reader {
        s: body,
        b: body.as_bytes(),
        i: 0,
    };
    r.expect(b'[', "").ok()?;
    // An empty list is complete when its `]` follows.
    let mut last = r.at(b']').then_some(r.i);
    while r.call().is_ok() {
        last = Some(r.i);
        if !r.at(b',') {
            break;
        }
        r.i += 1;
    }
    let end = last?;
    r.i = end;
    if r.at(b']') {
        return Some((String::from(&body[..=r.i]), r.i + 1));
    }
    let mut calls = String::from(&body[..end]);
    calls.push(']');
    Some((calls, end))
}

/// A cursor over the body; `i` is a byte offset, always at a char boundary.
struct Reader<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
}

fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The value of the four hex digits at `at`, if there are four.
fn hex4(b: &[u8], at: usize) -> Option<u32> {
    let digits = b.get(at..at + 4)?;
    digits
        .iter()
        .try_fold(0, |v, &d| char::from(d).to_digit(16).map(|d| v * 16 + d))
}

impl Reader<'_> {
    fn fail(&self, reason: impl Into<String>) -> ContentError {
        self.fail_at(self.i, reason)
    }

    fn fail_at(&self, offset: usize, reason: impl Into<String>) -> ContentError {
        ContentError::InvalidCallList {
            reason: reason.into(),
            offset,
        }
    }

    fn skip_ws(&mut self) {
        while matches!(self.b.get(self.i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    /// Skips whitespace; whether `c` comes next.
    fn at(&mut self, c: u8) -> bool {
        self.skip_ws();
        self.b.get(self.i) == Some(&c)
    }

    fn expect(&mut self, c: u8, reason: &str) -> Result<(), ContentError> {
        if !self.at(c) {
            return Err(self.fail(reason));
        }
        self.i += 1;
        Ok(())
    }

    /// Items separated by `,` up to `close` (the opening bracket already read); no trailing
    /// comma.
    fn items<T>(
        &mut self,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Result<T, ContentError>,
    ) -> Result<Vec<T>, ContentError> {
        let mut out = Vec::new();
        if self.at(close) {
            self.i += 1;
            return Ok(out);
        }
        loop {
            out.push(item(self)?);
            if self.at(close) {
                self.i += 1;
                return Ok(out);
            }
            if !self.at(b',') {
                return Err(self.fail(format!("expected ',' or '{}'", char::from(close))));
            }
            self.i += 1;
        }
    }

    /// The pairs as an object; a repeated name is an error at the current position (just
    /// after the closing bracket).
    fn unique(
        &self,
        pairs: Vec<(String, Value)>,
        what: &str,
    ) -> Result<Map<String, Value>, ContentError> {
        let mut out = Map::new();
        for (key, value) in pairs {
            if out.contains_key(&key) {
                return Err(self.fail(format!("{what} {key:?} given twice")));
            }
            out.insert(key, value);
        }
        Ok(out)
    }

    /// The end of the name starting at `start` (a name start byte).
    fn name_end(&self, start: usize) -> usize {
        let b = self.b;
        let word = |mut j: usize| {
            while b.get(j).is_some_and(|&c| is_name_byte(c)) {
                j += 1;
            }
            j
        };
        let mut end = word(start + 1);
        // `[-.]` joins a part only when a name byte follows it.
        while matches!(b.get(end), Some(b'-' | b'.'))
            && b.get(end + 1).is_some_and(|&c| is_name_byte(c))
        {
            end = word(end + 2);
        }
        end
    }

    /// A function or keyword-argument name; `what` names it in the error.
    fn name(&mut self, what: &str) -> Result<&str, ContentError> {
        self.skip_ws();
        let start = self.i;
        if !self.b.get(start).is_some_and(|&c| is_name_start(c)) {
            return Err(self.fail(format!("expected {what}")));
        }
        self.i = self.name_end(start);
        Ok(&self.s[start..self.i])
    }

    /// `name(argument, ...)` as `{"name", "arguments"}`.
    fn call(&mut self) -> Result<Value, ContentError> {
        let name = String::from(self.name("a function name")?);
        self.expect(b'(', "expected '(' after the function name")?;
        let arguments = self.items(b')', Reader::argument)?;
        let arguments = self.unique(arguments, "keyword argument")?;
        let mut call = Map::new();
        call.insert(String::from("name"), Value::String(name));
        call.insert(String::from("arguments"), Value::Object(arguments));
        Ok(Value::Object(call))
    }

    /// `name = value`.
    fn argument(&mut self) -> Result<(String, Value), ContentError> {
        let key = String::from(self.name(
            "a keyword argument (positional arguments and trailing commas are not allowed)",
        )?);
        if !self.at(b'=') {
            return Err(self.fail(
                "expected '=' after the argument name (positional arguments are not allowed)",
            ));
        }
        self.i += 1;
        Ok((key, self.value(0)?))
    }

    /// `"key": value` in a dict.
    fn pair(&mut self, depth: usize) -> Result<(String, Value), ContentError> {
        self.skip_ws();
        if !matches!(self.b.get(self.i), Some(b'\'' | b'"')) {
            return Err(self.fail("dict keys must be strings"));
        }
        let key = self.string()?;
        self.expect(b':', "expected ':' after the dict key")?;
        Ok((key, self.value(depth)?))
    }

    /// A value inside `depth` enclosing lists and dicts.
    fn value(&mut self, depth: usize) -> Result<Value, ContentError> {
        self.skip_ws();
        match self.b.get(self.i) {
            Some(b'\'' | b'"') => Ok(Value::String(self.string()?)),
            Some(&open @ (b'[' | b'{')) => {
                if depth >= MAX_DEPTH {
                    return Err(
                        self.fail(format!("lists and dicts nested more than {MAX_DEPTH} deep"))
                    );
                }
                self.i += 1;
                if open == b'[' {
                    Ok(Value::Array(self.items(b']', |r| r.value(depth + 1))?))
                } else {
                    let pairs = self.items(b'}', |r| r.pair(depth + 1))?;
                    Ok(Value::Object(self.unique(pairs, "dict key")?))
                }
            }
            _ => {
                if let Some(number) = self.number()? {
                    return Ok(number);
                }
                if let Some(constant) = self.constant() {
                    return Ok(constant);
                }
                Err(self
                    .fail("expected a value (a string, number, list, dict, True, False or None)"))
            }
        }
    }

    /// A number at the cursor, `None` when none starts here.
    fn number(&mut self) -> Result<Option<Value>, ContentError> {
        let (b, start) = (self.b, self.i);
        let digits = |mut j: usize| {
            while b.get(j).is_some_and(u8::is_ascii_digit) {
                j += 1;
            }
            j
        };
        let mut end = start + usize::from(b.get(start) == Some(&b'-'));
        match b.get(end) {
            Some(b'0') => end += 1,
            Some(b'1'..=b'9') => end = digits(end + 1),
            _ => return Ok(None),
        }
        let mut integer = true;
        // A fraction or exponent counts only when complete (`1.` and `1e` are the integer 1).
        if b.get(end) == Some(&b'.') && b.get(end + 1).is_some_and(u8::is_ascii_digit) {
            end = digits(end + 1);
            integer = false;
        }
        if matches!(b.get(end), Some(b'e' | b'E')) {
            let sign = usize::from(matches!(b.get(end + 1), Some(b'+' | b'-')));
            let exponent_end = digits(end + 1 + sign);
            if exponent_end > end + 1 + sign {
                end = exponent_end;
                integer = false;
            }
        }
        let literal = &self.s[start..end];
        let value = if integer {
            // The length check comes first, so that a huge literal is never read.
            let n = (literal.len() <= MAX_INTEGER_CHARS)
                .then(|| literal.parse::<i64>().ok())
                .flatten()
                .filter(|n| n.abs() <= MAX_INTEGER);
            match n {
                Some(n) => Value::from(n),
                None => return Err(self.fail("integer outside the range -(2^53 - 1) to 2^53 - 1")),
            }
        } else {
            // Rust's and Python's float parsing both round correctly; only overflow fails.
            match literal.parse::<f64>().ok().and_then(Number::from_f64) {
                Some(n) => Value::Number(n),
                None => return Err(self.fail("number too large (it overflows to infinity)")),
            }
        };
        self.i = end;
        Ok(Some(value))
    }

    /// `True`, `true`, `False`, `false`, `None` or `null` as a whole name at the cursor.
    fn constant(&mut self) -> Option<Value> {
        let start = self.i;
        if !self.b.get(start).is_some_and(|&c| is_name_start(c)) {
            return None;
        }
        let end = self.name_end(start);
        let value = match &self.s[start..end] {
            "True" | "true" => Value::Bool(true),
            "False" | "false" => Value::Bool(false),
            "None" | "null" => Value::Null,
            _ => return None,
        };
        self.i = end;
        Some(value)
    }

    /// A quoted string at the cursor (on its quote). The string is delimited first (its end
    /// is the first unescaped quote of its kind; a raw line break or the end of the body
    /// before it is an error), then its escapes are decoded; errors point at the opening
    /// quote.
    fn string(&mut self) -> Result<String, ContentError> {
        let (b, start) = (self.b, self.i);
        let quote = b[start];
        let mut end = start + 1;
        loop {
            match b.get(end) {
                Some(&c) if c == quote => break,
                // An escape takes the next char, whatever it is (a line break too); the bytes
                // of a multi-byte char are never ASCII, so stepping over them one by one is
                // the same.
                Some(b'\\') if end + 1 < b.len() => end += 2,
                None | Some(b'\\' | b'\n' | b'\r') => {
                    return Err(self.fail_at(
                        start,
                        "invalid string (unterminated, or with a raw line break) starting",
                    ))
                }
                Some(_) => end += 1,
            }
        }
        let raw = &self.s[start + 1..end];
        let decoded = self.unescape(raw, start)?;
        self.i = end + 1;
        Ok(decoded)
    }

    /// Decodes the escapes of the string body `raw` (every `\` in it is followed by a char);
    /// `start` is the opening quote, for errors.
    fn unescape(&self, raw: &str, start: usize) -> Result<String, ContentError> {
        let b = raw.as_bytes();
        let mut out = String::with_capacity(raw.len());
        let mut done = 0;
        while let Some(found) = memchr::memchr(b'\\', &b[done..]) {
            let backslash = done + found;
            out.push_str(&raw[done..backslash]);
            let simple = match b[backslash + 1] {
                b'\\' => Some('\\'),
                b'\'' => Some('\''),
                b'"' => Some('"'),
                b'/' => Some('/'),
                b'b' => Some('\u{8}'),
                b'f' => Some('\u{c}'),
                b'n' => Some('\n'),
                b'r' => Some('\r'),
                b't' => Some('\t'),
                _ => None,
            };
            if let Some(c) = simple {
                out.push(c);
                done = backslash + 2;
                continue;
            }
            let code = (b[backslash + 1] == b'u')
                .then(|| hex4(b, backslash + 2))
                .flatten();
            let Some(mut code) = code else {
                let escaped = raw[backslash + 1..].chars().next().unwrap_or_default();
                return Err(self.fail_at(
                    start,
                    format!(
                        "unsupported escape {:?} in the string starting",
                        format!("\\{escaped}")
                    ),
                ));
            };
            done = backslash + 6;
            if (0xD800..0xDC00).contains(&code) && b[done..].starts_with(b"\\u") {
                if let Some(low @ 0xDC00..=0xDFFF) = hex4(b, done + 2) {
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                    done += 6;
                }
            }
            match char::from_u32(code) {
                Some(c) => out.push(c),
                None => {
                    return Err(self.fail_at(start, "lone surrogate escape in the string starting"))
                }
            }
        }
        out.push_str(&raw[done..]);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    //! `call_list_truth` runs every case of `tests/data/python-call-list.jsonl`, whose
    //! expectations come from the reference (`scripts/python-call-list-truth.py`).

    use super::*;
    use crate::content::parse_content;
    use crate::tables::ContentSpec;

    fn parse(text: &str) -> Result<Value, ContentError> {
        parse_content(text, &ContentSpec::PythonCallList)
    }

    #[test]
    fn call_list_truth() {
        let data = include_str!("../../tests/data/python-call-list.jsonl");
        let mut failures = Vec::new();
        let mut count = 0;
        for line in data.lines().filter(|l| !l.trim().is_empty()) {
            let case: Value = serde_json::from_str(line).unwrap();
            let (name, text) = (
                case["name"].as_str().unwrap(),
                case["text"].as_str().unwrap(),
            );
            count += 1;
            match (parse(text), case.get("expect"), case.get("error")) {
                // Compared serialized: an integer is not a float, key order counts.
                (Ok(got), Some(want), None) => {
                    let (got, want) = (got.to_string(), want.to_string());
                    if got != want {
                        failures.push(format!("{name}: want {want}\n    got  {got}"));
                    }
                }
                (Err(ContentError::InvalidCallList { reason, offset }), None, Some(want)) => {
                    if Some(offset as u64) != want["offset"].as_u64() {
                        failures.push(format!(
                            "{name}: error at byte {offset} ({reason}), the reference's at byte {} ({})",
                            want["offset"], want["reference"]
                        ));
                    }
                }
                (got, _, _) => failures.push(format!("{name}: got {got:?}, want {case}")),
            }
        }
        assert!(count >= 150, "only {count} cases");
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn complete_calls_before_a_cut_or_a_bad_call() {
        let body = r#"[f(a=1), g(b="x"), h(c="#;
        let (calls, end) = complete_calls(body).unwrap();
        assert_eq!(calls, r#"[f(a=1), g(b="x")]"#);
        assert_eq!(&body[end..], r#", h(c="#);
        assert_eq!(
            parse(&calls).unwrap(),
            serde_json::json!([{"name": "f", "arguments": {"a": 1}}, {"name": "g", "arguments": {"b": "x"}}])
        );
        // A positional argument in the second call; junk after the first.
        assert_eq!(complete_calls("[f(a=1), g(2)]").unwrap().1, 7);
        assert_eq!(complete_calls("[f(a=1) g()]").unwrap().1, 7);
        // The list's own `]` stays with the calls; an empty list is complete.
        assert_eq!(complete_calls("[f(a=1) ]<"), Some(("[f(a=1) ]".into(), 9)));
        assert_eq!(complete_calls("[ ] x"), Some(("[ ]".into(), 3)));
        // Nothing complete.
        assert_eq!(complete_calls("[f(a=1"), None);
        assert_eq!(complete_calls("f(a=1)"), None);
        assert_eq!(complete_calls("[f(a=1, a=2)]"), None);
    }

    #[test]
    fn errors_name_the_byte_offset() {
        let err = parse("[f(city=\"東京\", x=bad)]").unwrap_err();
        assert_eq!(
            err.to_string(),
            "python-call-list: expected a value (a string, number, list, dict, True, False or \
             None) at byte 20"
        );
        let err = parse("[f(s=\"\\x41\")]").unwrap_err();
        assert_eq!(
            err.to_string(),
            "python-call-list: unsupported escape \"\\\\x\" in the string starting at byte 5"
        );
        let err = parse("[f(a={\"k\": 1, \"k\": 2})]").unwrap_err();
        assert_eq!(
            err.to_string(),
            "python-call-list: dict key \"k\" given twice at byte 21"
        );
    }

    #[test]
    fn limits() {
        assert_eq!(MAX_INTEGER, 9_007_199_254_740_991);
        let deep = |n: usize| format!("[f(a={}{})]", "[".repeat(n), "]".repeat(n));
        assert!(parse(&deep(MAX_DEPTH)).is_ok());
        assert!(matches!(
            parse(&deep(MAX_DEPTH + 1)),
            Err(ContentError::InvalidCallList { offset, .. }) if offset == 5 + MAX_DEPTH
        ));
    }
}
