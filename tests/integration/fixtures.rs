//! Every fixture of every vendored template (`templates/fixtures/<name>/<stem>.txt` with
//! `<stem>.prefix`, optional `<stem>.tools.json` and `<stem>.expected.json`) parses to its
//! expected message one-shot, in 1-byte chunks and in token-like chunks; so do the published
//! originals in `templates/upstream/` on their pinned fixtures. A fixture whose
//! expected file is `{"expect_error": true}` documents a failure mode: every run must fail.
//! Lenient mode keeps every message the reference gives: a fixture that parses gives the same
//! message in lenient mode too (README, "Lenient mode": where the reference succeeds, the same
//! message), one-shot and in 1-byte chunks.

use parser_runtime::{ParserOptions, ResponseParser};
use serde_json::Value;
use workspace_tests::workspace_root;

/// The expectation of a fixture that must fail (`{"expect_error": true}`), as the result.
fn error_value() -> Value {
    serde_json::json!({"expect_error": true})
}

fn parse_chunked(
    template: &parser_runtime::CompiledTemplate,
    prefix: &str,
    tools: &[Value],
    text: &str,
    size: usize,
) -> Value {
    parse_with(
        template,
        prefix,
        tools,
        text,
        size,
        ParserOptions::default(),
    )
}

fn parse_with(
    template: &parser_runtime::CompiledTemplate,
    prefix: &str,
    tools: &[Value],
    text: &str,
    size: usize,
    options: ParserOptions,
) -> Value {
    let run = || -> Result<Value, parser_runtime::ParseError> {
        let mut parser = ResponseParser::with_options(template, prefix, tools, options)?;
        for piece in text.as_bytes().chunks(size.max(1)) {
            parser.feed_bytes(piece)?;
        }
        Ok(Value::Object(parser.finalize()?.0))
    };
    run().unwrap_or_else(|_| error_value())
}

/// Token-like chunks: runs of word characters, runs of punctuation, single whitespace.
fn parse_tokens(
    template: &parser_runtime::CompiledTemplate,
    prefix: &str,
    tools: &[Value],
    text: &str,
) -> Value {
    let run = || -> Result<Value, parser_runtime::ParseError> {
        let mut parser = ResponseParser::with_tools(template, prefix, tools)?;
        let mut start = 0;
        let chars: Vec<(usize, char)> = text.char_indices().collect();
        for i in 1..=chars.len() {
            let boundary = i == chars.len() || {
                let (a, b) = (chars[i - 1].1, chars[i].1);
                a.is_alphanumeric() != b.is_alphanumeric()
                    || a.is_whitespace()
                    || i - start_index(&chars, start) >= 4
            };
            if boundary {
                let end = if i == chars.len() {
                    text.len()
                } else {
                    chars[i].0
                };
                parser.feed(&text[start..end])?;
                start = end;
            }
        }
        Ok(Value::Object(parser.finalize()?.0))
    };
    run().unwrap_or_else(|_| error_value())
}

fn start_index(chars: &[(usize, char)], byte: usize) -> usize {
    chars.iter().position(|&(b, _)| b == byte).unwrap_or(0)
}

/// Fixtures whose lenient message differs from the reference's on purpose (README, "Lenient
/// mode"), with the reason; `lenient_cases` (tests/data/lenient.jsonl) pins what lenient
/// mode gives for each kind.
const LENIENT_DIFFERS: &[(&str, &str)] = &[
    (
        "qwen3-coder/truncated",
        "a call cut off by the end of the output is reported (region_truncated), not run",
    ),
    (
        "seed-oss/truncated",
        "a call cut off by the end of the output is reported (region_truncated), not run",
    ),
    (
        "upstream/glm-4.5/glm47-tool-call",
        "the original's name group swallows the close: the call never closes (region_truncated)",
    ),
    (
        "upstream/glm-4.5/glm47-zero-arg",
        "the original's name group swallows the close: the call never closes (region_truncated)",
    ),
    (
        "seed-oss/close-in-string",
        "a </parameter> followed by the value's own close stays in the XML value",
    ),
    (
        "seed-oss/python-literals",
        "Python literals in arguments are read as the tool's types (repairs)",
    ),
];

/// Runs every fixture under `fixtures/<name>/` against `templates/<name>.json`; returns how
/// many fixtures were checked and appends each mismatch (labelled `<label><name>/<stem> (how)`).
fn check_fixtures(
    templates: &std::path::Path,
    fixtures: &std::path::Path,
    label: &str,
    failures: &mut Vec<String>,
) -> usize {
    let mut checked = 0;
    let Ok(dirs) = std::fs::read_dir(fixtures) else {
        panic!("no {}", fixtures.display())
    };
    let mut dirs: Vec<_> = dirs
        .filter_map(Result::ok)
        .filter(|d| d.path().is_dir())
        .collect();
    dirs.sort_by_key(|d| d.path());
    for dir in dirs {
        let name = dir.file_name().to_string_lossy().to_string();
        let template_path = templates.join(format!("{name}.json"));
        let template = template_build::load_file(&template_path).unwrap_or_else(|e| panic!("{e}"));
        let mut stems: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(Result::ok)
            .filter_map(|e| {
                e.file_name()
                    .to_string_lossy()
                    .strip_suffix(".expected.json")
                    .map(String::from)
            })
            .collect();
        stems.sort();
        for stem in stems {
            let read = |ext: &str| std::fs::read_to_string(dir.path().join(format!("{stem}{ext}")));
            let prefix = read(".prefix").unwrap_or_default();
            let text = read(".txt").unwrap_or_else(|e| panic!("{label}{name}/{stem}.txt: {e}"));
            let tools: Vec<Value> = read(".tools.json")
                .ok()
                .map(|t| serde_json::from_str(&t).unwrap())
                .unwrap_or_default();
            let expected: Value = serde_json::from_str(&read(".expected.json").unwrap()).unwrap();
            let runs = [
                (
                    "one-shot",
                    parse_chunked(&template, &prefix, &tools, &text, usize::MAX),
                ),
                (
                    "1-byte",
                    parse_chunked(&template, &prefix, &tools, &text, 1),
                ),
                (
                    "3-byte",
                    parse_chunked(&template, &prefix, &tools, &text, 3),
                ),
                ("tokens", parse_tokens(&template, &prefix, &tools, &text)),
            ];
            let lenient = ParserOptions {
                lenient: true,
                ..ParserOptions::default()
            };
            let label_stem = format!("{label}{name}/{stem}");
            let differs = LENIENT_DIFFERS.iter().any(|(s, _)| *s == label_stem);
            let lenient_runs = (expected != error_value() && !differs).then(|| {
                [usize::MAX, 1].map(|size| {
                    (
                        if size == 1 {
                            "lenient, 1-byte"
                        } else {
                            "lenient"
                        },
                        parse_with(&template, &prefix, &tools, &text, size, lenient),
                    )
                })
            });
            if differs
                && parse_with(&template, &prefix, &tools, &text, usize::MAX, lenient) == expected
            {
                failures.push(format!(
                    "{label_stem}: listed in LENIENT_DIFFERS, but lenient mode gives the reference's message"
                ));
            }
            let runs = runs.into_iter().chain(lenient_runs.into_iter().flatten());
            for (how, got) in runs {
                if got != expected {
                    failures.push(format!(
                        "{label}{name}/{stem} ({how}):\n  want {expected}\n  got  {got}"
                    ));
                }
            }
            checked += 1;
        }
    }
    checked
}

#[test]
fn fixtures_parse_to_expected_messages() {
    let root = workspace_root().join("templates");
    let mut failures = Vec::new();
    let checked = check_fixtures(&root, &root.join("fixtures"), "", &mut failures);
    assert!(checked >= 150, "only {checked} fixtures found");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The published originals that a vendored template changes (`templates/upstream/<name>.json`)
/// parse their pinned fixtures (`templates/upstream/fixtures/<name>/`) as the reference does.
#[test]
fn upstream_fixtures_parse_to_expected_messages() {
    let root = workspace_root().join("templates").join("upstream");
    let mut failures = Vec::new();
    let checked = check_fixtures(&root, &root.join("fixtures"), "upstream/", &mut failures);
    assert!(checked >= 4, "only {checked} upstream fixtures found");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The vendored set: the 23 families the project promises, each listed in `rtpl list` with its
/// families, each with the fixture kinds every template must have.
#[test]
fn vendored_set_is_complete() {
    const REQUIRED: [&str; 23] = [
        "smollm3",
        "qwen3",
        "qwen3-thinking",
        "qwen3-coder",
        "hermes",
        "deepseek-r1",
        "deepseek-v3.1",
        "gpt-oss",
        "llama3.1",
        "mistral",
        "magistral",
        "glm-4.5",
        "kimi-k2",
        "minimax-m2",
        "command-a",
        "command-r7b",
        "granite-4",
        "gemma-4",
        "ernie-4.5",
        "nemotron-3",
        "seed-oss",
        "lfm2.5",
        "phi-4-mini",
    ];
    let names: Vec<&str> = templates::names().collect();
    for name in REQUIRED {
        assert!(names.contains(&name), "templates/{name}.json is missing");
    }
    for name in &names {
        assert!(
            templates::families(name).is_some(),
            "templates::FAMILIES has no entry for {name}"
        );
        let dir = workspace_root()
            .join("templates")
            .join("fixtures")
            .join(name);
        for stem in [
            "plain",
            "tool-call",
            "close-in-string",
            "parallel",
            "truncated",
        ] {
            assert!(
                dir.join(format!("{stem}.txt")).is_file(),
                "{name}: fixture {stem} is missing"
            );
        }
        // A template with a reasoning field has a fixture whose expected message fills it.
        let reasoning: Vec<String> = templates::by_name(name)
            .unwrap()
            .unwrap()
            .fields
            .iter()
            .filter(|f| f.name == "reasoning_content" || f.name == "thinking")
            .map(|f| f.name.clone())
            .collect();
        if let Some(field) = reasoning.first() {
            let filled = std::fs::read_dir(&dir).unwrap().any(|e| {
                let path = e.unwrap().path();
                path.to_string_lossy().ends_with(".expected.json")
                    && std::fs::read_to_string(&path)
                        .ok()
                        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
                        .and_then(|v| {
                            v.get(field.as_str())
                                .and_then(Value::as_str)
                                .map(|s| !s.is_empty())
                        })
                        .unwrap_or(false)
            });
            assert!(filled, "{name}: no fixture fills {field}");
        }
    }
    for (name, _) in templates::FAMILIES {
        assert!(
            names.contains(name),
            "FAMILIES lists {name}, which is not vendored"
        );
    }
}
