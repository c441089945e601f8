//! Shared helpers of the workspace integration tests: where the shared conformance cases and
//! the vendored templates live, and how results are compared (the rules of
//! `shared/cases/check.py`).

use std::path::PathBuf;
use std::sync::OnceLock;

use parser_runtime::event::merge_chunks;
use parser_runtime::CompiledTemplate;
use parser_runtime::Event;
use serde_json::Value;

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The `shared/` folder beside the checkout (`../shared`).
pub fn shared_dir() -> PathBuf {
    workspace_root().join("..").join("shared")
}

/// The shared conformance case files (in `shared/cases/`): the cases derived from the
/// reference's own tests and docs, and the cases of what transformers 5.24.0 added or changed.
pub const CONFORMANCE_FILES: [&str; 2] = ["conformance.jsonl", "conformance-5.24.jsonl"];

/// Every case of [`CONFORMANCE_FILES`], in file order.
pub fn conformance_cases() -> Vec<Value> {
    CONFORMANCE_FILES
        .iter()
        .flat_map(|file| read_jsonl(&shared_dir().join("cases").join(file)))
        .collect()
}

/// Reads a JSON Lines file.
pub fn read_jsonl(path: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("{}: bad JSON line: {e}", path.display()))
        })
        .collect()
}

/// The conformance cases whose template compiles and that give a whole output `text`, with
/// the compiled template: compiled once per test binary (several tests walk them all).
pub fn compiled_conformance() -> &'static [(Value, CompiledTemplate, String)] {
    static CASES: OnceLock<Vec<(Value, CompiledTemplate, String)>> = OnceLock::new();
    CASES.get_or_init(|| {
        conformance_cases()
            .into_iter()
            .filter_map(|case| {
                let template = template_build::compile(&case["template"]).ok()?;
                let text = case["text"].as_str()?.to_owned();
                Some((case, template, text))
            })
            .collect()
    })
}

/// The word-boundary cases (`tests/data/word-boundary.jsonl`, expectations from the reference
/// oracle: templates with `\b`, `\B`, `\m`, `\M` in their delimiters) whose template
/// compiles, with the compiled template and the output text.
pub fn compiled_word_boundary() -> &'static [(Value, CompiledTemplate, String)] {
    static CASES: OnceLock<Vec<(Value, CompiledTemplate, String)>> = OnceLock::new();
    CASES.get_or_init(|| {
        read_jsonl(&workspace_root().join("tests/data/word-boundary.jsonl"))
            .into_iter()
            .map(|case| {
                let template = template_build::compile(&case["template"])
                    .unwrap_or_else(|e| panic!("{}: {e}", case["id"]));
                let text = case["text"].as_str().unwrap_or_default().to_owned();
                (case, template, text)
            })
            .collect()
    })
}

/// `text` cut into pieces of `size` bytes (0: one piece), each extended to a char boundary.
pub fn pieces(text: &str, size: usize) -> Vec<&str> {
    let size = if size == 0 { text.len().max(1) } else { size };
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut k = size.min(rest.len());
        while !rest.is_char_boundary(k) {
            k += 1;
        }
        out.push(&rest[..k]);
        rest = &rest[k..];
    }
    out
}

/// The fixture texts (`*.txt`) of a vendored template, sorted by path.
pub fn fixture_paths(name: &str) -> Vec<PathBuf> {
    let dir = workspace_root()
        .join("templates")
        .join("fixtures")
        .join(name);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    paths.retain(|p| p.extension().is_some_and(|x| x == "txt"));
    paths.sort();
    paths
}

/// Merges adjacent chunks of a JSON event list (as `check.py` does).
pub fn merge_json_events(events: &Value) -> Value {
    let list: Vec<Event> = serde_json::from_value(events.clone()).unwrap_or_default();
    serde_json::to_value(merge_chunks(&list)).unwrap_or(Value::Null)
}

/// Compares a result with a case's expectations, like `check.py --events`; `None` when it
/// passes, else the reason.
pub fn check_case(case: &Value, res: &Value) -> Option<String> {
    if let Some(Value::Array(script)) = case.get("script") {
        let log = res
            .get("script_log")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if log.len() != script.len() {
            return Some(format!(
                "script_log has {} steps, expected {}",
                log.len(),
                script.len()
            ));
        }
        for (want, got) in script.iter().zip(&log) {
            let want_err = want
                .get("expect_error")
                .is_some_and(|v| !v.is_null() && v != &Value::Bool(false));
            let got_err = got.get("error").is_some_and(|v| !v.is_null());
            if want_err != got_err {
                return Some(format!(
                    "script step {want}: expected error={want_err}, got {got}"
                ));
            }
        }
        return None;
    }
    let ok = res.get("ok") == Some(&Value::Bool(true));
    if case.get("expect_error") == Some(&Value::Bool(true)) {
        return if ok {
            Some(format!("expected an error, got {}", res["message"]))
        } else {
            None
        };
    }
    if !ok {
        return Some(format!("unexpected error: {}", res["error"]));
    }
    if res.get("message") != case.get("expect") {
        return Some(format!(
            "message differs:\n  want {}\n  got  {}",
            case["expect"], res["message"]
        ));
    }
    if let Some(want) = case.get("expect_events").filter(|v| !v.is_null()) {
        if merge_json_events(&res["initial_events"]) != merge_json_events(&want["initial"]) {
            return Some(format!(
                "initial events differ:\n  want {}\n  got  {}",
                want["initial"], res["initial_events"]
            ));
        }
        if merge_json_events(&res["events"]) != merge_json_events(&want["events"]) {
            return Some(format!(
                "events differ:\n  want {}\n  got  {}",
                merge_json_events(&want["events"]),
                merge_json_events(&res["events"])
            ));
        }
    }
    None
}

/// A string the pattern matches, roughly: the first alternative of each group, one of each
/// repetition, a character of each class; look-around bodies are returned as further pieces
/// (a whole-text look-ahead's `</think>` belongs in hostile text).
pub fn sample(pattern: &str, extra: &mut Vec<String>) -> String {
    fn class_char(body: &str) -> char {
        let negated = body.starts_with('^');
        if negated {
            return if body.contains('a') { 'q' } else { 'a' };
        }
        let first = body.chars().next().unwrap_or('a');
        if first == '\\' {
            match body[1..].chars().next() {
                Some('s') => ' ',
                Some('d') => '1',
                Some('w') | Some('S') => 'w',
                Some('n') => '\n',
                Some(c) => c,
                None => 'a',
            }
        } else {
            first
        }
    }
    fn seq(chars: &[char], i: &mut usize, extra: &mut Vec<String>) -> String {
        let mut out = String::new();
        let mut in_first_branch = true;
        while *i < chars.len() {
            let c = chars[*i];
            *i += 1;
            let piece: String = match c {
                ')' => break,
                '|' => {
                    in_first_branch = false;
                    continue;
                }
                '(' => {
                    let mut look = false;
                    if chars.get(*i) == Some(&'?') {
                        match chars.get(*i + 1) {
                            Some(':') => *i += 2,
                            Some('=') | Some('!') => {
                                *i += 2;
                                look = true;
                            }
                            Some('P') => {
                                while chars[*i] != '>' {
                                    *i += 1;
                                }
                                *i += 1;
                            }
                            _ => *i += 1,
                        }
                    }
                    let inner = seq(chars, i, extra);
                    if look {
                        extra.push(inner);
                        String::new()
                    } else {
                        inner
                    }
                }
                '[' => {
                    let start = *i;
                    while chars[*i] != ']' || *i == start {
                        if chars[*i] == '\\' {
                            *i += 1;
                        }
                        *i += 1;
                    }
                    let body: String = chars[start..*i].iter().collect();
                    *i += 1;
                    class_char(&body).to_string()
                }
                '\\' => {
                    let e = chars[*i];
                    *i += 1;
                    match e {
                        's' => " ".into(),
                        'S' | 'w' => "w".into(),
                        'd' => "1".into(),
                        'n' => "\n".into(),
                        other => other.to_string(),
                    }
                }
                '.' => "a".into(),
                '^' | '$' => String::new(),
                '*' | '+' | '?' => continue,
                '{' => {
                    while chars[*i] != '}' {
                        *i += 1;
                    }
                    *i += 1;
                    continue;
                }
                other => other.to_string(),
            };
            if in_first_branch {
                out.push_str(&piece);
            }
        }
        out
    }
    let chars: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    let mut out = String::new();
    while i < chars.len() {
        out.push_str(&seq(&chars, &mut i, extra));
    }
    out
}

/// The delimiters of a template (its JSON) as text, for hostile outputs built from them: literals as written, patterns as a sample match.
pub fn delimiter_pieces(spec: &Value) -> Vec<String> {
    delimiters_of(spec, &["open", "close"])
}

/// The delimiters of the kinds `keys` (`"open"`, `"close"`) of every field, field by field:
/// the literals, and a string each pattern matches ([`sample`], with the bodies of its
/// look-arounds); no empty ones.
pub fn delimiters_of(spec: &Value, keys: &[&str]) -> Vec<String> {
    let mut pieces = Vec::new();
    for field in spec["fields"].as_object().unwrap().values() {
        for key in keys {
            match &field[key] {
                Value::String(s) => pieces.push(s.clone()),
                Value::Array(list) => {
                    pieces.extend(list.iter().filter_map(|s| s.as_str().map(str::to_owned)))
                }
                _ => {}
            }
            if let Some(p) = field[format!("{key}_pattern")].as_str() {
                let mut extra = Vec::new();
                pieces.push(sample(p, &mut extra));
                pieces.extend(extra);
            }
        }
    }
    pieces.retain(|p| !p.is_empty());
    pieces
}

/// One region step of a parse or a routing; consecutive chunks of a region are merged into
/// one `Text` (chunk boundaries are free).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A region opened (field name).
    Open(String),
    /// Text routed to a region (field name, text).
    Text(String, String),
    /// A region closed (field name).
    Close(String),
}

/// Appends `text` routed to `field`, merged into the last step when it is text of `field`.
pub fn push_text(steps: &mut Vec<Step>, field: &str, text: &str) {
    if let Some(Step::Text(f, t)) = steps.last_mut() {
        if f == field {
            t.push_str(text);
            return;
        }
    }
    steps.push(Step::Text(field.to_string(), text.to_string()));
}

/// The `ResponseParser`'s steps (no prefix, hold buffer unbounded) on `pieces` fed in turn, or
/// `None` when it fails (e.g. a body that does not parse: the router does not parse bodies).
pub fn parser_steps(template: &CompiledTemplate, pieces: &[&str]) -> Option<Vec<Step>> {
    let mut parser = parser_runtime::ResponseParser::new(template, "").ok()?;
    parser.set_hold_limit(usize::MAX);
    let mut events = Vec::new();
    for piece in pieces {
        events.extend(parser.feed(piece).ok()?);
    }
    events.extend(parser.finalize().ok()?.1);
    let mut steps = Vec::new();
    for e in events {
        match e {
            Event::RegionOpen { field } => steps.push(Step::Open(field.to_string())),
            Event::RegionChunk { field, text, .. } => push_text(&mut steps, &field, &text),
            Event::RegionClose { field, .. } => steps.push(Step::Close(field.to_string())),
            // Lenient mode only; this parser is in the default mode.
            Event::RegionMalformed { .. } | Event::RegionTruncated { .. } => return None,
        }
    }
    Some(steps)
}

/// What a parse gives: the message, the merged initial events and the merged events; or the
/// error's text.
pub type Outcome = Result<(Value, Vec<Event>, Vec<Event>), String>;

/// Parses `text` fed with `feed_bytes` in chunks of `sizes` bytes (cycled, each at least 1;
/// `[usize::MAX]`: one piece; cut anywhere, also inside a character), the hold buffer
/// unbounded (as `parse_response`), then finalizes.
pub fn parse_in_chunks(
    template: &CompiledTemplate,
    prefix: &str,
    tools: &[Value],
    text: &str,
    sizes: &[usize],
) -> Outcome {
    parse_in_chunks_with(
        template,
        prefix,
        tools,
        text,
        sizes,
        parser_runtime::ParserOptions::default(),
    )
}

/// [`parse_in_chunks`] with the parser's `options` (lenient mode).
pub fn parse_in_chunks_with(
    template: &CompiledTemplate,
    prefix: &str,
    tools: &[Value],
    text: &str,
    sizes: &[usize],
    options: parser_runtime::ParserOptions,
) -> Outcome {
    let mut parser = parser_runtime::ResponseParser::with_options(template, prefix, tools, options)
        .map_err(|e| e.to_string())?;
    parser.set_hold_limit(usize::MAX);
    let initial = merge_chunks(parser.initial_events());
    let bytes = text.as_bytes();
    let mut events = Vec::new();
    let (mut at, mut i) = (0, 0);
    while at < bytes.len() {
        let n = sizes[i % sizes.len()].max(1).min(bytes.len() - at);
        events.extend(
            parser
                .feed_bytes(&bytes[at..at + n])
                .map_err(|e| e.to_string())?,
        );
        at += n;
        i += 1;
    }
    let (message, fin) = parser.finalize().map_err(|e| e.to_string())?;
    events.extend(fin);
    Ok((Value::Object(message), initial, merge_chunks(&events)))
}
