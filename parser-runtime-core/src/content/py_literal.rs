//! Lenient mode's literal reader (README, "Lenient mode", repairs): one Python-style literal
//! as models write it where JSON is due. A superset of JSON: `True`, `False`, `None` beside
//! `true`, `false`, `null`; strings in `'` or `"` (Python escapes `\n`, `\t`, `\r`, `\\`,
//! `\'`, `\"`, `\uXXXX`; another escape keeps its backslash); tuples `( )` read as lists; a
//! trailing comma in a list or dict. An apostrophe inside a word (`'it's'`: a `'` between two
//! letters or digits) stays in a single-quoted string instead of ending it: a model writing
//! `'it's'` means the word, and Python itself could not read it otherwise.
//!
//! Only used in lenient mode, after the reference's own reading failed, so it never changes a
//! value the default mode returns.

use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Map, Number, Value};

/// How deep lists and dicts may nest.
const MAX_DEPTH: usize = 128;

/// Reads `text` (surrounding whitespace allowed) as one literal; `None` if it is not one.
pub fn read(text: &str) -> Option<Value> {
    let mut r = Reader {
        s: text.as_bytes(),
        text,
        i: 0,
    };
    let v = r.value(0)?;
    r.ws();
    (r.i == r.s.len()).then_some(v)
}

/// If `text` (stripped) is one single-quoted string, its contents: read as a Python string
/// literal when it is one, else the text between the quotes as it stands (`'it's'` ->
/// `it's`).
pub fn unquote_single(text: &str) -> Option<String> {
    let t = crate::content::py_strip(text);
    if t.len() < 2 || !t.starts_with('\'') || !t.ends_with('\'') {
        return None;
    }
    match read(t) {
        Some(Value::String(s)) => Some(s),
        _ => Some(String::from(&t[1..t.len() - 1])),
    }
}

struct Reader<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
}

impl Reader<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn word(&mut self, w: &str) -> bool {
        let end = self.i + w.len();
        let next_is_word = self
            .s
            .get(end)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_');
        if self.s.get(self.i..end) == Some(w.as_bytes()) && !next_is_word {
            self.i = end;
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.ws();
        let b = *self.s.get(self.i)?;
        match b {
            b'{' => self.dict(depth),
            b'[' => self.list(b']', depth),
            b'(' => self.list(b')', depth),
            b'"' | b'\'' => self.string(b).map(Value::String),
            b'-' | b'+' | b'.' | b'0'..=b'9' => self.number(),
            _ => {
                for (w, v) in [
                    ("True", Value::Bool(true)),
                    ("true", Value::Bool(true)),
                    ("False", Value::Bool(false)),
                    ("false", Value::Bool(false)),
                    ("None", Value::Null),
                    ("null", Value::Null),
                ] {
                    if self.word(w) {
                        return Some(v);
                    }
                }
                None
            }
        }
    }

    /// Items up to `close`, separated by commas, a trailing comma allowed.
    fn items(&mut self, close: u8, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.i += 1;
        loop {
            self.ws();
            if self.s.get(self.i) == Some(&close) {
                self.i += 1;
                return Some(());
            }
            item(self)?;
            self.ws();
            match self.s.get(self.i)? {
                b',' => self.i += 1,
                b if *b == close => {}
                _ => return None,
            }
        }
    }

    fn list(&mut self, close: u8, depth: usize) -> Option<Value> {
        let mut out = Vec::new();
        self.items(close, |r| {
            out.push(r.value(depth + 1)?);
            Some(())
        })?;
        Some(Value::Array(out))
    }

    fn dict(&mut self, depth: usize) -> Option<Value> {
        let mut out = Map::new();
        self.items(b'}', |r| {
            r.ws();
            let q = *r.s.get(r.i)?;
            if q != b'"' && q != b'\'' {
                return None;
            }
            let key = r.string(q)?;
            r.ws();
            if r.s.get(r.i) != Some(&b':') {
                return None;
            }
            r.i += 1;
            let v = r.value(depth + 1)?;
            out.insert(key, v);
            Some(())
        })?;
        Some(Value::Object(out))
    }

    fn string(&mut self, quote: u8) -> Option<String> {
        let mut out = String::new();
        self.i += 1;
        loop {
            let rest = self.text.get(self.i..)?;
            let c = rest.chars().next()?;
            let at = self.i;
            self.i += c.len_utf8();
            match c {
                '\\' => {
                    let e = self.text.get(self.i..)?.chars().next()?;
                    self.i += e.len_utf8();
                    match e {
                        'n' => out.push('\n'),
                        't' => out.push('\t'),
                        'r' => out.push('\r'),
                        '\\' | '\'' | '"' | '/' => out.push(e),
                        'u' => {
                            let hex = self.text.get(self.i..self.i + 4)?;
                            let code = u32::from_str_radix(hex, 16).ok()?;
                            self.i += 4;
                            out.push(char::from_u32(code)?);
                        }
                        other => {
                            out.push('\\');
                            out.push(other);
                        }
                    }
                }
                c if c as u32 == u32::from(quote) => {
                    let inside_word = quote == b'\''
                        && self.text[..at]
                            .chars()
                            .next_back()
                            .is_some_and(char::is_alphanumeric)
                        && self.text[self.i..]
                            .chars()
                            .next()
                            .is_some_and(char::is_alphanumeric);
                    if !inside_word {
                        return Some(out);
                    }
                    out.push(c);
                }
                c => out.push(c),
            }
        }
    }

    fn number(&mut self) -> Option<Value> {
        let start = self.i;
        while self.i < self.s.len()
            && matches!(
                self.s[self.i],
                b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'
            )
        {
            self.i += 1;
        }
        let token = self.text[start..self.i].trim_start_matches('+');
        if let Ok(n) = token.parse::<i64>() {
            return Some(Value::Number(n.into()));
        }
        let f: f64 = token.parse().ok()?;
        Number::from_f64(f).map(Value::Number)
    }
}

#[cfg(test)]
mod tests {
    //! Expected values are what the literals mean in Python (`ast.literal_eval`), with the
    //! lenient additions named in the module docs.

    use super::*;
    use serde_json::json;

    #[test]
    fn reads_python_literals() {
        for (text, want) in [
            ("['python', 'tutorial']", json!(["python", "tutorial"])),
            (
                "{'a': True, 'b': None, 'c': False}",
                json!({"a": true, "b": null, "c": false}),
            ),
            (
                r#"{"n": 1, "x": -2.5, "t": (1, 2),}"#,
                json!({"n": 1, "x": -2.5, "t": [1, 2]}),
            ),
            (r"'line\nnext \'q\''", json!("line\nnext 'q'")),
            ("'it's fine'", json!("it's fine")),
            ("['it's', 'ok']", json!(["it's", "ok"])),
            (r#""say \"hi\"""#, json!("say \"hi\"")),
            ("  [ ]  ", json!([])),
        ] {
            assert_eq!(read(text), Some(want), "{text}");
        }
        for text in ["[1, 2", "{'a' 1}", "Truex", "[1] 2", "{1: 2}", "'open"] {
            assert_eq!(read(text), None, "{text}");
        }
        assert_eq!(read(&"[".repeat(1000)), None);
    }

    #[test]
    fn unquotes_single_quoted_strings() {
        assert_eq!(unquote_single(" 'single' ").as_deref(), Some("single"));
        assert_eq!(unquote_single("'it's'").as_deref(), Some("it's"));
        assert_eq!(unquote_single("it's").as_deref(), None);
        assert_eq!(unquote_single("'").as_deref(), None);
    }
}
