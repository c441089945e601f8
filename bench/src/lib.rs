//! Benchmark inputs: deterministic, realistic model outputs for three response templates.
//!
//! Every output is text-heavy (about 40% reasoning, 20% tool calls, 40% final content, by
//! bytes) and has the shape `reasoning, tool calls, final content, end token`. The final
//! content comes last on purpose: in the reference (transformers 5.23.0), text after an
//! implicit field's close reopens the field and overwrites its value, so content before the
//! calls would not survive in the message; with this shape every implementation must keep
//! all of it, and the comparison binary checks that they give the same message.
//!
//! Formats:
//!
//! * [`Format::Smollm3`] (`templates/smollm3.json`): `<think>...</think>`, JSON tool calls in
//!   `<tool_call>...</tool_call>`, content closed by `<|im_end|>`;
//! * [`Format::Qwen3Coder`] (`templates/qwen3-coder.json`): `<think>`, XML tool calls
//!   `<tool_call><function=NAME><parameter=K>V</parameter></function></tool_call>`;
//! * [`Format::RegexHeavy`] (`bench/templates/regex-heavy.json`): every delimiter is a regex
//!   that can start almost anywhere: `\s*</think>` at every whitespace of the reasoning,
//!   `\s*(?:<\|im_end\|>|<\|endoftext\|>)` at every whitespace of the content, and
//!   `(?:<\|message_model\|>)?[^<]*<\|content_text\|>` at every character outside a region
//!   (the "quadratic trap" of `shared/DESIGN.md`). Outside the regions the model writes a
//!   short preamble, which this template drops.
//!
//! The generator is a 64-bit LCG: the same format, size and seed give the same bytes on
//! every machine.

use parser_runtime::CompiledTemplate;
use serde_json::{json, Value};

parser_runtime::response_template!(pub RegexHeavy = "../templates/regex-heavy.json");

/// The prompt every input is parsed with: a ChatML conversation ending with the assistant
/// header (the start anchor of the three templates), so nothing of it is replayed.
pub const PREFIX: &str = "<|im_start|>system\nYou are a careful coding assistant. Think before you answer.<|im_end|>\n<|im_start|>user\nPlease refactor the parser module, run the tests and explain the change.<|im_end|>\n<|im_start|>assistant\n";

/// The benchmark sizes: label and target length in bytes (the generated text is within a
/// few hundred bytes of it).
pub const SIZES: [(&str, usize); 3] = [
    ("10KB", 10 * 1024),
    ("100KB", 100 * 1024),
    ("2MB", 2 * 1024 * 1024),
];

/// The chunkings measured: label and chunk length in bytes (`None`: the whole output in one
/// `feed`).
pub const MODES: [(&str, Option<usize>); 3] = [
    ("one-shot", None),
    ("16-byte", Some(16)),
    ("4-byte", Some(4)),
];

/// The seed of every generated input.
pub const SEED: u64 = 0x5eed_2026;

/// An output format (a response template and the text shapes its model writes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// SmolLM3: `templates/smollm3.json`.
    Smollm3,
    /// Qwen3-Coder: `templates/qwen3-coder.json`.
    Qwen3Coder,
    /// A template whose delimiters can start almost anywhere: `bench/templates/regex-heavy.json`.
    RegexHeavy,
}

impl Format {
    /// All formats, in table order.
    pub const ALL: [Format; 3] = [Format::Smollm3, Format::Qwen3Coder, Format::RegexHeavy];

    /// The template's name (the file stem).
    pub fn name(self) -> &'static str {
        match self {
            Format::Smollm3 => "smollm3",
            Format::Qwen3Coder => "qwen3-coder",
            Format::RegexHeavy => "regex-heavy",
        }
    }

    /// The template JSON text.
    pub fn template_json(self) -> &'static str {
        match self {
            Format::Smollm3 => include_str!("../../templates/smollm3.json"),
            Format::Qwen3Coder => include_str!("../../templates/qwen3-coder.json"),
            Format::RegexHeavy => include_str!("../templates/regex-heavy.json"),
        }
    }

    /// The template compiled at build time (the `templates` crate for the vendored ones, the
    /// `response_template!` item [`RegexHeavy`] for the regex-heavy one), built on first use.
    ///
    /// Panics if the embedded tables cannot be loaded (mismatched crate versions only).
    pub fn static_template(self) -> &'static CompiledTemplate {
        let template = match self {
            Format::Smollm3 => templates::Smollm3::template(),
            Format::Qwen3Coder => templates::Qwen3Coder::template(),
            Format::RegexHeavy => RegexHeavy::template(),
        };
        template.expect("embedded tables load")
    }

    /// The embedded tables for the no-heap router (`Item::routes()`).
    pub fn static_routes(self) -> parser_runtime::StaticRoutes<'static> {
        let routes = match self {
            Format::Smollm3 => templates::Smollm3::routes(),
            Format::Qwen3Coder => templates::Qwen3Coder::routes(),
            Format::RegexHeavy => RegexHeavy::routes(),
        };
        routes.expect("embedded tables load")
    }

    /// The template compiled at run time from its JSON (`template_build::compile_str`).
    ///
    /// Panics if the template does not compile (it is checked at build time too).
    pub fn runtime_template(self) -> CompiledTemplate {
        template_build::compile_str(self.template_json()).expect("template compiles")
    }
}

/// A deterministic 64-bit linear congruential generator (Knuth's MMIX constants).
#[derive(Debug, Clone)]
pub struct Lcg(u64);

impl Lcg {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Self {
        Lcg(seed ^ 0x9e37_79b9_7f4a_7c15)
    }

    /// The next 32 random bits (the high half of the state).
    pub fn next_u32(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 32) as u32
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        ((u64::from(self.next_u32()) * n as u64) >> 32) as usize
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `percent`%.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// One element of `items`.
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const WORDS: &[&str] = &[
    "the",
    "the",
    "the",
    "a",
    "a",
    "of",
    "of",
    "to",
    "to",
    "and",
    "and",
    "in",
    "is",
    "is",
    "that",
    "it",
    "for",
    "this",
    "with",
    "on",
    "we",
    "be",
    "as",
    "not",
    "but",
    "so",
    "if",
    "then",
    "when",
    "which",
    "parser",
    "buffer",
    "delimiter",
    "region",
    "field",
    "token",
    "chunk",
    "stream",
    "function",
    "module",
    "test",
    "value",
    "output",
    "input",
    "byte",
    "string",
    "error",
    "result",
    "state",
    "match",
    "pattern",
    "template",
    "message",
    "call",
    "argument",
    "schema",
    "reasoning",
    "content",
    "file",
    "path",
    "line",
    "column",
    "cache",
    "should",
    "could",
    "would",
    "must",
    "can",
    "will",
    "might",
    "need",
    "needs",
    "check",
    "checks",
    "return",
    "returns",
    "handle",
    "handles",
    "split",
    "keep",
    "keeps",
    "move",
    "moves",
    "read",
    "reads",
    "write",
    "writes",
    "update",
    "fix",
    "change",
    "changes",
    "first",
    "next",
    "last",
    "every",
    "each",
    "only",
    "also",
    "still",
    "already",
    "again",
    "here",
    "there",
    "now",
    "later",
    "probably",
    "clearly",
    "carefully",
    "quickly",
    "simply",
    "small",
    "large",
    "long",
    "short",
    "new",
    "old",
    "same",
    "other",
    "whole",
    "partial",
    "empty",
    "valid",
    "invalid",
    "safe",
    "slow",
    "fast",
    "linear",
    "user",
    "request",
    "answer",
    "step",
    "plan",
    "idea",
    "case",
    "edge",
    "loop",
    "index",
    "offset",
    "length",
    "naïve",
    "café",
    "façade",
    "résumé",
    "Zürich",
    "größer",
    "données",
    "→",
    "—",
    "…",
    "日本語",
    "テスト",
    "🚀",
    "✓",
];

const CODE_LINES: &[&str] = &[
    "let mut buf: Vec<u8> = Vec::with_capacity(len);",
    "if start < end && end <= text.len() {",
    "    return Err(ParseError::Content { offset, field });",
    "}",
    "for (i, chunk) in chunks.iter().enumerate() {",
    "    total += chunk.len() * 2;",
    "let map: HashMap<String, Value> = HashMap::new();",
    "match state { State::Open => step(), _ => skip() }",
    "assert_eq!(parse(\"a < b\"), Ok(Cmp::Less));",
    "let s: &str = &input[pos..];",
    "while let Some(ev) = events.pop() {",
    "    handle(ev)?;",
    "fn feed(&mut self, text: &str) -> Result<Vec<Event>, Error> {",
    "// keep the held tail: it may still become a delimiter",
    "let ratio = hits as f64 / total.max(1) as f64;",
    "println!(\"{} -> {}\", name, value);",
];

const TOOLS: &[&str] = &[
    "read_file",
    "write_file",
    "search",
    "run_command",
    "edit_file",
];

const PATHS: &[&str] = &[
    "src/lib.rs",
    "src/engine.rs",
    "src/parser/mod.rs",
    "tests/streaming.rs",
    "docs/internals.md",
    "README.md",
    "benches/parse.rs",
    "src/content.rs",
];

/// One sentence of prose (ends with punctuation, no trailing space).
fn sentence(rng: &mut Lcg, out: &mut String) {
    let n = rng.range(6, 22);
    for i in 0..n {
        let word = rng.pick(WORDS);
        if i == 0 {
            let mut chars = word.chars();
            if let Some(c) = chars.next() {
                out.extend(c.to_uppercase());
                out.push_str(chars.as_str());
            }
        } else {
            out.push(' ');
            if rng.chance(3) {
                out.push('`');
                out.push_str(rng.pick(PATHS));
                out.push('`');
                continue;
            }
            if rng.chance(2) {
                out.push_str(&rng.below(10_000).to_string());
                continue;
            }
            out.push_str(word);
            if rng.chance(6) && i + 1 < n {
                out.push(',');
            }
        }
    }
    out.push_str(rng.pick(&[".", ".", ".", ".", "?", "!", ":"]));
}

/// One paragraph: prose, a bullet list, a heading or a code block.
fn paragraph(rng: &mut Lcg, out: &mut String, allow_code: bool) {
    let kind = rng.below(100);
    if kind < 12 {
        for _ in 0..rng.range(2, 5) {
            out.push_str("- ");
            sentence(rng, out);
            out.push('\n');
        }
        out.pop();
    } else if kind < 17 {
        out.push_str("## ");
        let mut heading = String::new();
        sentence(rng, &mut heading);
        heading.pop();
        out.push_str(&heading);
    } else if kind < 27 && allow_code {
        out.push_str("```rust\n");
        for _ in 0..rng.range(3, 12) {
            out.push_str(rng.pick(CODE_LINES));
            out.push('\n');
        }
        out.push_str("```");
    } else {
        for i in 0..rng.range(2, 7) {
            if i > 0 {
                out.push(' ');
            }
            sentence(rng, out);
        }
    }
}

/// Prose of at least `target` bytes (paragraphs separated by blank lines; starts and ends
/// with a non-space ASCII character, so every implementation's strip agrees).
pub fn prose(rng: &mut Lcg, target: usize, allow_code: bool) -> String {
    let mut out = String::with_capacity(target + 1024);
    while out.len() < target {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        paragraph(rng, &mut out, allow_code);
    }
    // First and last characters ASCII and not whitespace (Python's `str.strip` and ours
    // agree on ASCII whitespace; keep the edges simple).
    if !out.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '#' || c == '-' || c == '`') {
        out.insert_str(0, "Ok. ");
    }
    if !out.ends_with(|c: char| c.is_ascii_graphic()) {
        out.push_str(" Done.");
    }
    out
}

/// The arguments of one tool call, with about `budget` bytes of text.
fn arguments(rng: &mut Lcg, tool: &str, budget: usize) -> Vec<(String, Value)> {
    let path = rng.pick(PATHS).to_string();
    match tool {
        "read_file" => vec![
            ("path".into(), json!(path)),
            ("start_line".into(), json!(rng.range(1, 400))),
            ("end_line".into(), json!(rng.range(401, 900))),
        ],
        "search" => {
            let mut query = String::new();
            sentence(rng, &mut query);
            vec![
                ("query".into(), json!(query)),
                ("max_results".into(), json!(rng.range(5, 50))),
                ("regex".into(), json!(rng.chance(50))),
            ]
        }
        "run_command" => vec![
            (
                "command".into(),
                json!(format!("cargo test -p {} -- --nocapture", rng.pick(WORDS))),
            ),
            ("timeout".into(), json!(rng.range(10, 600))),
        ],
        _ => vec![
            ("path".into(), json!(path)),
            ("content".into(), json!(prose(rng, budget, true))),
        ],
    }
}

/// One tool call in `format`'s syntax (no surrounding whitespace).
fn tool_call(rng: &mut Lcg, format: Format, budget: usize) -> String {
    // Mostly writes (text-heavy arguments), some short calls.
    let tool = if rng.chance(60) {
        rng.pick(&["write_file", "edit_file"])
    } else {
        rng.pick(TOOLS)
    };
    let args = arguments(rng, tool, budget);
    match format {
        Format::Smollm3 | Format::RegexHeavy => {
            let arguments: serde_json::Map<String, Value> = args.into_iter().collect();
            let call = json!({"name": tool, "arguments": arguments});
            format!("<tool_call>\n{call}\n</tool_call>")
        }
        Format::Qwen3Coder => {
            let mut out = format!("<tool_call>\n<function={tool}>\n");
            for (key, value) in args {
                let text = match value {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                out.push_str(&format!("<parameter={key}>\n{text}\n</parameter>\n"));
            }
            out.push_str("</function>\n</tool_call>");
            out
        }
    }
}

/// A realistic output of about `size` bytes in `format` (reasoning, tool calls, final
/// content, end token), the same for the same arguments.
pub fn generate(format: Format, size: usize, seed: u64) -> String {
    let mut rng = Lcg::new(seed ^ (size as u64).rotate_left(17) ^ format as u64);
    let calls = (size / 2048).max(2);
    let reasoning_bytes = size * 2 / 5;
    let call_bytes = size / 5 / calls;
    let mut out = String::with_capacity(size + 4096);

    out.push_str("<think>\n");
    out.push_str(&prose(&mut rng, reasoning_bytes, true));
    out.push_str("\n</think>\n\n");
    if format == Format::RegexHeavy {
        // Text outside every region (dropped by this template): the open
        // `(?:<|message_model|>)?[^<]*<|content_text|>` is live over all of it.
        out.push_str("I will inspect the repository first, then make the change.\n");
    }
    for _ in 0..calls {
        out.push_str(&tool_call(&mut rng, format, call_bytes.saturating_sub(80)));
        out.push('\n');
    }
    out.push('\n');
    if format == Format::RegexHeavy {
        out.push_str("<|message_model|>Summary of the change, for the user<|content_text|>");
    }
    let rest = size.saturating_sub(out.len() + 16).max(64);
    out.push_str(&prose(&mut rng, rest, true));
    out.push_str("<|im_end|>");
    out
}

/// `text` cut into pieces of `n` bytes, each piece extended to the next char boundary (so
/// every piece is a `&str`; a piece is longer than `n` only when a char straddles the cut).
pub fn chunks(text: &str, n: usize) -> Vec<&str> {
    let mut out = Vec::with_capacity(text.len() / n + 1);
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + n).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[start..end]);
        start = end;
    }
    out
}

/// The generated input of one format and size.
#[derive(Debug, Clone)]
pub struct Input {
    /// `FORMAT-SIZE`, e.g. `smollm3-100KB`.
    pub id: String,
    /// The format.
    pub format: Format,
    /// The size label (`10KB`, `100KB`, `2MB`).
    pub size_label: &'static str,
    /// The output text.
    pub text: String,
}

/// Every benchmark input: each format at each size.
pub fn inputs() -> Vec<Input> {
    let mut out = Vec::new();
    for format in Format::ALL {
        for (label, size) in SIZES {
            out.push(Input {
                id: format!("{}-{label}", format.name()),
                format,
                size_label: label,
                text: generate(format, size, SEED),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_is_deterministic_and_sized() {
        for format in Format::ALL {
            for (_, size) in SIZES {
                let a = generate(format, size, SEED);
                assert_eq!(a, generate(format, size, SEED));
                assert!(
                    a.len() >= size && a.len() < size + size / 10 + 2048,
                    "{}",
                    a.len()
                );
            }
        }
    }

    #[test]
    fn chunks_cover_the_text_on_char_boundaries() {
        let text = generate(Format::Smollm3, 10 * 1024, SEED);
        for n in [1, 4, 16] {
            let pieces = chunks(&text, n);
            assert_eq!(pieces.concat(), text);
            assert!(pieces.iter().all(|p| !p.is_empty() && p.len() < n + 4));
        }
    }

    #[test]
    fn every_format_keeps_content_reasoning_and_calls() {
        for format in Format::ALL {
            let text = generate(format, 10 * 1024, SEED);
            let message =
                parser_runtime::parse_response(format.static_template(), &text, PREFIX, &[])
                    .unwrap();
            let reasoning = if format == Format::Qwen3Coder {
                "reasoning_content"
            } else {
                "thinking"
            };
            assert!(message[reasoning].as_str().unwrap().len() > 3000);
            assert!(message["content"].as_str().unwrap().len() > 2000);
            assert_eq!(message["tool_calls"].as_array().unwrap().len(), 5);
        }
    }
}
