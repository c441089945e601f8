//! Line and column of a JSON path in a template file, so that errors point into the file
//! (`templates/x.json:12:5: fields.tool_calls.open_pattern: ...`).
//!
//! `serde_json` values carry no positions, so this module scans the text once more along the
//! path: it only skips values and compares keys, it does not build anything.

/// One step of a JSON path as [`crate::TemplateError::path`] writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
}

/// Splits `fields.tool_calls.open_pattern`, `fields["a.b"].open`, `start_anchor[2]` into steps.
/// Returns the steps parsed before anything it does not understand.
fn steps(path: &str) -> Vec<Step> {
    let mut out = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            rest = r;
        } else if let Some(r) = rest.strip_prefix("[\"") {
            // A JSON string key: find the closing quote that is not escaped.
            let mut end = None;
            let mut escaped = false;
            for (i, c) in r.char_indices() {
                match c {
                    _ if escaped => escaped = false,
                    '\\' => escaped = true,
                    '"' => {
                        end = Some(i);
                        break;
                    }
                    _ => {}
                }
            }
            let Some(end) = end else { break };
            let Ok(key) = serde_json::from_str::<String>(&rest[1..end + 3]) else {
                break;
            };
            out.push(Step::Key(key));
            rest = r[end + 1..].strip_prefix(']').unwrap_or("");
        } else if let Some(r) = rest.strip_prefix('[') {
            let digits = r.find(']').unwrap_or(r.len());
            let Ok(index) = r[..digits].parse() else {
                break;
            };
            out.push(Step::Index(index));
            rest = r.get(digits + 1..).unwrap_or("");
        } else {
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            out.push(Step::Key(rest[..end].to_string()));
            rest = &rest[end..];
        }
    }
    out
}

/// A scanner over JSON text that skips values.
struct Scanner<'a> {
    text: &'a [u8],
    pos: usize,
}

impl Scanner<'_> {
    fn ws(&mut self) {
        while self
            .text
            .get(self.pos)
            .is_some_and(|b| b.is_ascii_whitespace())
        {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    /// Skips a string starting at `pos` (on its quote); returns its raw text with quotes.
    fn string(&mut self) -> Option<&[u8]> {
        let start = self.pos;
        self.pos += 1;
        loop {
            match self.text.get(self.pos)? {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    return Some(&self.text[start..self.pos]);
                }
                _ => self.pos += 1,
            }
        }
    }

    /// Skips one value (iteratively: no recursion on untrusted nesting).
    fn skip_value(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            self.ws();
            match self.peek()? {
                b'"' => {
                    self.string()?;
                }
                b'{' | b'[' => {
                    depth += 1;
                    self.pos += 1;
                    continue;
                }
                b'}' | b']' => {
                    depth = depth.checked_sub(1)?;
                    self.pos += 1;
                }
                b',' | b':' if depth > 0 => {
                    self.pos += 1;
                    continue;
                }
                _ => {
                    while self.peek().is_some_and(|b| {
                        !matches!(b, b',' | b'}' | b']' | b':') && !b.is_ascii_whitespace()
                    }) {
                        self.pos += 1;
                    }
                }
            }
            if depth == 0 {
                return Some(());
            }
        }
    }

    /// With `pos` on an object's `{`, moves to the value of `key` and returns the key's
    /// offset. With duplicate keys the last one counts, as in `serde_json` (and Python's
    /// `json`), which keep the last value.
    fn member(&mut self, key: &str) -> Option<usize> {
        if self.peek()? != b'{' {
            return None;
        }
        self.pos += 1;
        let mut found = None;
        loop {
            self.ws();
            match self.peek() {
                Some(b'"') => {}
                _ => break,
            }
            let at = self.pos;
            let raw = self.string()?;
            let name: String = serde_json::from_slice(raw).ok()?;
            self.ws();
            if self.peek()? != b':' {
                break;
            }
            self.pos += 1;
            self.ws();
            if name == key {
                found = Some((at, self.pos));
            }
            if self.skip_value().is_none() {
                break;
            }
            self.ws();
            if self.peek() != Some(b',') {
                break;
            }
            self.pos += 1;
        }
        let (at, value) = found?;
        self.pos = value;
        Some(at)
    }

    /// With `pos` on an array's `[`, moves to item `index` and returns its offset.
    fn item(&mut self, index: usize) -> Option<usize> {
        if self.peek()? != b'[' {
            return None;
        }
        self.pos += 1;
        for _ in 0..index {
            self.skip_value()?;
            self.ws();
            if self.peek()? != b',' {
                return None;
            }
            self.pos += 1;
        }
        self.ws();
        Some(self.pos)
    }
}

/// The byte offset of the value (or of the key, for object members) at `path` in `text`.
///
/// When the path does not exist all the way (a missing key), the offset of the deepest part
/// that exists. `in_member` descends first into that top-level key (the `response_template` of
/// a `tokenizer_config.json`).
pub fn offset_of(text: &str, path: &str, in_member: Option<&str>) -> usize {
    let mut scanner = Scanner {
        text: text.as_bytes(),
        pos: 0,
    };
    scanner.ws();
    let mut found = scanner.pos;
    let all = in_member
        .map(|m| Step::Key(m.to_string()))
        .into_iter()
        .chain(steps(path));
    for step in all {
        let at = match &step {
            Step::Key(k) => scanner.member(k),
            Step::Index(i) => scanner.item(*i),
        };
        match at {
            Some(at) => found = at,
            None => return found,
        }
    }
    found
}

/// The 1-based column in chars of the 1-based `byte_column` on 1-based `line` of `text` (JSON
/// parsers count bytes).
pub fn char_column(text: &str, line: usize, byte_column: usize) -> usize {
    let Some(line_text) = text.split('\n').nth(line.saturating_sub(1)) else {
        return byte_column;
    };
    let mut end = byte_column.saturating_sub(1).min(line_text.len());
    while !line_text.is_char_boundary(end) {
        end -= 1;
    }
    line_text[..end].chars().count() + 1
}

/// 1-based line and column (in chars) of byte `offset` in `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "{\n  \"fields\": {\n    \"a.b\": {\"open\": \"x\"},\n    \"tool_calls\": {\n      \"open_pattern\": \"(\"\n    }\n  },\n  \"start_anchor\": [\"a\", \"b\", \"c\"]\n}";

    fn at(path: &str) -> (usize, usize) {
        line_col(TEXT, offset_of(TEXT, path, None))
    }

    #[test]
    fn paths_resolve_to_their_keys() {
        assert_eq!(at("fields.tool_calls.open_pattern"), (5, 7));
        assert_eq!(at("fields[\"a.b\"].open"), (3, 13));
        assert_eq!(at("start_anchor[2]"), (8, 30));
        assert_eq!(at(""), (1, 1));
    }

    #[test]
    fn missing_keys_point_at_the_deepest_existing_part() {
        assert_eq!(at("fields.tool_calls.close"), (4, 5));
        assert_eq!(at("nope"), (1, 1));
    }

    #[test]
    fn duplicate_keys_resolve_to_the_last() {
        let text = "{\"fields\": {\n\"x\": {\"open\": 1},\n\"x\": {\"join\": 5}}}";
        assert_eq!(
            line_col(text, offset_of(text, "fields.x.join", None)),
            (3, 7)
        );
    }

    #[test]
    fn nested_member_first() {
        let text = "{\"response_template\": {\"fields\": {}}}";
        assert_eq!(offset_of(text, "fields", Some("response_template")), 23);
    }

    #[test]
    fn garbage_never_panics() {
        for text in [
            "",
            "{",
            "{\"fields\"",
            "[1,",
            "\"",
            "{\"a\":[[[[",
            "{\"fields\": {\"x\": }",
        ] {
            let _ = offset_of(text, "fields.x.open[3]", Some("response_template"));
        }
    }
}
