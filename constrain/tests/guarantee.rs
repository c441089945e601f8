//! The guarantee of constrained generation (issue: structured outputs enforced during
//! generation), tested end to end:
//!
//! * **Soundness.** Outputs sampled token by token from the masks (see `constrain::sample`:
//!   planned valid texts split into random tokens, mixed with tokens drawn uniformly among the
//!   allowed ones), decoded, parsed by the template's parser and checked with the strict
//!   contract (`structured-outputs`): no parse error, no violation, a tool call whenever the
//!   tool choice requires one. Over 10,000 samples across templates, tool sets, tool choices
//!   and response formats.
//! * **Completeness on a corpus.** Realistic valid outputs, tokenized by the real tokenizer
//!   (tiktoken's BPE, special tokens as single ids), are allowed token by token and end where
//!   EOS is allowed.

#[path = "../examples/common/mod.rs"]
mod common;

use std::sync::{Arc, OnceLock};

use common::{rich, weather, xml_tools};
use constrain::index::{Step, TokenIndex, VocabIndex};
use constrain::json::JsonOptions;
use constrain::sample::{SampleOptions, Sampler};
use constrain::template::{compile, Options, Request, ToolChoice};
use constrain::vocab::Vocabulary;
use parser_runtime::structured_outputs::{Contract, ResponseFormat, StrictTools};
use rand::SeedableRng;
use serde_json::{json, Value};

fn vocab(name: &str) -> Arc<VocabIndex> {
    static BASE: OnceLock<Arc<VocabIndex>> = OnceLock::new();
    static HARMONY: OnceLock<Arc<VocabIndex>> = OnceLock::new();
    let cell = if name == "o200k_harmony" {
        &HARMONY
    } else {
        &BASE
    };
    cell.get_or_init(|| {
        Arc::new(VocabIndex::new(
            Vocabulary::builtin(name).expect("built-in vocabulary"),
        ))
    })
    .clone()
}

fn answer_schema() -> Value {
    json!({"type": "json_schema", "json_schema": {"name": "answer", "schema": {
        "type": "object",
        "properties": {"answer": {"type": "string"}, "confidence": {"type": "number"},
                       "sources": {"type": "array", "items": {"type": "string", "format": "uuid"}},
                       "kind": {"enum": ["fact", "opinion"]}},
        "required": ["answer", "kind"], "additionalProperties": false}}})
}

struct Case {
    template: &'static str,
    label: &'static str,
    request: Request,
    samples: usize,
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let main = common::MAIN_TEMPLATES;
    // The first families' other templates, then those of the families added since.
    let more: Vec<&str> = ["ernie-4.5", "granite-4", "qwen3-thinking", "seed-oss"]
        .into_iter()
        .chain(FIXTURE_TEMPLATES.iter().copied())
        .collect();
    let inline: Vec<&'static str> = common::word_boundary_templates()
        .iter()
        .map(|t| t.name)
        .collect();
    for template in main.iter().chain(&more).chain(&inline).copied() {
        let samples = if main.contains(&template) {
            250
        } else if inline.contains(&template) {
            120
        } else {
            60
        };
        let xml = [
            "qwen3-coder",
            "seed-oss",
            "glm-4.5",
            "minimax-m2",
            "nemotron-3",
            "lfm2.5",
        ]
        .contains(&template);
        let mut tools = vec![weather()];
        if xml {
            tools = xml_tools();
        } else {
            tools.extend(rich());
        }
        let request = |tools: &[Value], tool_choice, response_format| Request {
            tools: tools.to_vec(),
            tool_choice,
            response_format,
        };
        let named = ToolChoice::Function("get_weather".into());
        let requests = [
            ("plain", Request::default()),
            ("auto", common::with_tools(tools.clone())),
            ("required", request(&tools, ToolChoice::Required, None)),
            ("named", request(&tools, named, None)),
            ("json_object", common::json_mode()),
            (
                "json_schema",
                request(&[], ToolChoice::Auto, Some(answer_schema())),
            ),
            (
                "schema+tools",
                request(&tools, ToolChoice::Auto, Some(answer_schema())),
            ),
        ];
        for (label, request) in requests {
            out.push(Case {
                template,
                label,
                request,
                samples,
            });
        }
    }
    out
}

fn contract(request: &Request) -> Arc<Contract> {
    Arc::new(Contract {
        response_format: request
            .response_format
            .as_ref()
            .map(|f| ResponseFormat::from_request(f).expect("format")),
        strict_tools: (!request.tools.is_empty())
            .then(|| StrictTools::new(&request.tools).expect("tools")),
    })
}

#[test]
fn sampled_outputs_parse_and_keep_the_contract() {
    let mut total = 0;
    let mut failures = Vec::new();
    let mut with_calls = 0;
    let mut with_reasoning = 0;
    let inline = common::word_boundary_templates();
    let mut inline_compiled = std::collections::HashMap::new();
    for t in &inline {
        let compiled = template_build::compile(&t.template).expect("an inline template compiles");
        inline_compiled.insert(t.name, compiled);
    }
    let mut word_boundary_samples = 0;
    let mut non_ascii_edges = 0;
    let mut several_calls = 0;
    for case in cases() {
        let vocab_name = if case.template == "gpt-oss" {
            "o200k_harmony"
        } else {
            "o200k_base"
        };
        let written = inline.iter().find(|t| t.name == case.template);
        let model = match written {
            Some(t) => template_build::model::load(&t.template).expect("loads"),
            None => common::template(case.template),
        };
        let constraint = compile(&model, &case.request, &Options::default())
            .unwrap_or_else(|e| panic!("{} {}: {e}", case.template, case.label));
        let index = TokenIndex::new(Arc::new(constraint), vocab(vocab_name));
        let sampler = Sampler::new(&index, SampleOptions::default());
        let template = match inline_compiled.get(case.template) {
            Some(compiled) => compiled,
            None => templates::by_name(case.template).unwrap().unwrap(),
        };
        let misread: &[(&str, &str)] = written.map_or(&[], |t| &t.misread);
        let every_region = every_call_region(case.template, written.map(|t| &t.template));
        let contract = contract(&case.request);
        let mut rng = rand::rngs::SmallRng::seed_from_u64(total as u64 + 1);
        for i in 0..case.samples {
            total += 1;
            let sample = sampler.sample(&mut rng);
            let tag = format!("{} {} #{i}", case.template, case.label);
            if !sample.complete || sample.refused != 0 {
                failures.push(format!(
                    "{tag}: complete={} refused={} {:?}",
                    sample.complete,
                    sample.refused,
                    String::from_utf8_lossy(&sample.text)
                ));
                continue;
            }
            let Ok(text) = String::from_utf8(sample.text.clone()) else {
                failures.push(format!("{tag}: not UTF-8"));
                continue;
            };
            match parser_runtime::parse_response_checked(
                template,
                &text,
                "",
                &case.request.tools,
                contract.clone(),
            ) {
                Err(e) => failures.push(format!("{tag}: parse error {e}: {text:?}")),
                Ok((message, violations)) => {
                    if !violations.is_empty() {
                        failures.push(format!("{tag}: {violations:?}: {text:?}"));
                    }
                    if written.is_some() {
                        word_boundary_samples += 1;
                        if non_ascii_next_to_a_keyword(&text) {
                            non_ascii_edges += 1;
                        }
                    }
                    for &(field, delimiter) in misread {
                        let value = message.get(field).and_then(Value::as_str).unwrap_or("");
                        if value.contains(delimiter) {
                            failures.push(format!(
                                "{tag}: {field} holds {delimiter:?} (a delimiter not read): {text:?}"
                            ));
                        }
                    }
                    let calls = message
                        .get("tool_calls")
                        .and_then(Value::as_array)
                        .map_or(0, Vec::len);
                    // Nothing lost: the calls written, read with a tool-call field that keeps
                    // every region, are the calls the template's parser keeps.
                    if let Some(every) = &every_region {
                        match parser_runtime::parse_response(every, &text, "", &case.request.tools)
                        {
                            Ok(all) => {
                                let written = calls_written(&all);
                                if written > 1 {
                                    several_calls += 1;
                                }
                                if written != calls {
                                    failures.push(format!(
                                        "{tag}: {written} calls written, {calls} parsed: {text:?}"
                                    ));
                                }
                            }
                            Err(e) => failures.push(format!(
                                "{tag}: parse error with every call region kept {e}: {text:?}"
                            )),
                        }
                    }
                    if calls > 0 {
                        with_calls += 1;
                    }
                    if ["reasoning_content", "thinking"]
                        .iter()
                        .any(|k| message.contains_key(*k))
                    {
                        with_reasoning += 1;
                    }
                    let required = matches!(
                        case.request.tool_choice,
                        ToolChoice::Required | ToolChoice::Function(_)
                    );
                    if required && calls == 0 {
                        failures.push(format!("{tag}: a call was required: {text:?}"));
                    }
                    if let ToolChoice::Function(name) = &case.request.tool_choice {
                        let names: Vec<&str> = message["tool_calls"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|c| c.pointer("/function/name").and_then(Value::as_str))
                            .collect();
                        if names.iter().any(|n| n != name) {
                            failures.push(format!("{tag}: called {names:?}: {text:?}"));
                        }
                    }
                }
            }
        }
    }
    println!("{total} samples ({word_boundary_samples} of word-boundary templates, {non_ascii_edges} with a non-ASCII character next to a delimiter's word), {with_calls} with tool calls ({several_calls} of templates whose tool-call field does not repeat with two calls or more), {with_reasoning} with reasoning, {} failures", failures.len());
    let mut kinds = std::collections::BTreeMap::new();
    for f in &failures {
        let key: String = f.split(" #").next().unwrap_or("").to_string();
        *kinds.entry(key).or_insert(0) += 1;
    }
    println!("failures by case: {kinds:?}");
    assert!(total >= 10_000, "{total} samples");
    assert!(word_boundary_samples >= 1_500, "{word_boundary_samples}");
    assert!(non_ascii_edges >= 100, "{non_ascii_edges}");
    assert!(several_calls >= 200, "{several_calls}");
    assert!(
        with_calls >= 2_000 && with_reasoning >= 1_000,
        "coverage: {with_calls} calls, {with_reasoning} reasoning"
    );
    assert!(
        failures.is_empty(),
        "{} failures, first ones:\n{}",
        failures.len(),
        failures
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The template with its tool-call field made to repeat, when it does not: its parse of a
/// text keeps the calls of every region (each region's value appended), so it counts the
/// calls written, which the template's own parse must all keep (it keeps the last region's).
fn every_call_region(
    name: &str,
    inline: Option<&Value>,
) -> Option<parser_runtime::tables::CompiledTemplate> {
    let mut value: Value = match inline {
        Some(v) => v.clone(),
        None => serde_json::from_str(templates::source(name)?).ok()?,
    };
    if let Some(inner) = value.get("response_template").cloned() {
        value = inner;
    }
    let field = value.pointer_mut("/fields/tool_calls")?.as_object_mut()?;
    if field.get("repeats").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    field.insert("repeats".into(), Value::Bool(true));
    Some(template_build::compile(&value).expect("the repeating variant compiles"))
}

/// The calls of a message read with [`every_call_region`]: one per region of a one-call
/// family, a list's length per region of a list family.
fn calls_written(message: &serde_json::Map<String, Value>) -> usize {
    let Some(Value::Array(regions)) = message.get("tool_calls") else {
        return 0;
    };
    regions
        .iter()
        .map(|r| r.as_array().map_or(1, Vec::len))
        .sum()
}

/// Whether a non-ASCII character stands right before or after a word of the word-boundary
/// templates' delimiters (where the boundary reads it).
fn non_ascii_next_to_a_keyword(text: &str) -> bool {
    ["THINK", "ANSWER", "CALL", "END", "STOP", "invoke", "name"]
        .iter()
        .any(|word| {
            text.match_indices(word).any(|(i, w)| {
                let before = text[..i].chars().next_back();
                let after = text[i + w.len()..].chars().next();
                [before, after].iter().flatten().any(|c| !c.is_ascii())
            })
        })
}

/// Realistic outputs of each template (spaces after `:` and `,`, as models write JSON),
/// tokenized by the real tokenizer.
#[test]
fn valid_outputs_are_accepted_token_by_token() {
    let qwen_call = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3}}\n</tool_call>";
    let corpus: Vec<(&str, &str, Request, String)> = vec![
        ("smollm3", "o200k_base", Request { tools: vec![weather()], ..Request::default() },
         format!("<think>\nThe user wants the weather.\n</think>\n{qwen_call}<|im_end|>")),
        ("smollm3", "o200k_base", Request::default(), "Hello! How can I help you today?<|im_end|>".into()),
        ("qwen3", "o200k_base", Request { tools: vec![weather()], ..Request::default() },
         format!("<think>\nLet me check.\n</think>\n\nI'll look that up.\n{qwen_call}\n{qwen_call}<|im_end|>")),
        ("hermes", "o200k_base", Request { tools: vec![weather()], tool_choice: ToolChoice::Required, ..Request::default() },
         format!("{qwen_call}<|im_end|>")),
        ("qwen3", "o200k_base", Request { response_format: Some(json!({"type": "json_object"})), ..Request::default() },
         "{\"answer\": \"Paris\", \"facts\": [1, 2, {\"x\": null}]}<|im_end|>".into()),
        ("qwen3", "o200k_base", Request { response_format: Some(answer_schema()), ..Request::default() },
         "<think>\nok\n</think>\n\n{\"answer\": \"42\", \"confidence\": 0.9, \"kind\": \"fact\"}<|im_end|>".into()),
        ("qwen3-coder", "o200k_base", Request { tools: xml_tools(), ..Request::default() },
         "I'll set it.\n<tool_call>\n<function=set_alarm>\n<parameter=hour>\n7\n</parameter>\n<parameter=minute>\n30\n</parameter>\n<parameter=label>\nWake up\n</parameter>\n</function>\n</tool_call><|im_end|>".into()),
        ("lfm2.5", "o200k_base", Request { tools: xml_tools(), ..Request::default() },
         "Ich schaue nach.<|tool_call_start|>[get_weather(city='Zürich, CH', days=3), set_alarm(hour=7, minute=30, label='Wake up', loud=True, days=[\"mon\", \"tue\"], snooze={\"minutes\": 5})]<|tool_call_end|><|im_end|>".into()),
        ("gpt-oss", "o200k_harmony", Request { tools: vec![weather()], ..Request::default() },
         "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\"}<|call|>".into()),
        ("gpt-oss", "o200k_harmony", Request::default(),
         "<|channel|>analysis<|message|>Simple.<|end|><|start|>assistant<|channel|>final<|message|>Hi there!<|return|>".into()),
        ("gemma-4", "o200k_base", Request { tools: vec![weather()], ..Request::default() },
         "<|tool_call>call:get_weather{\"city\": \"Paris\"}<tool_call|><turn|>".into()),
        // Word boundaries next to non-ASCII word characters.
        ("wb-edges", "o200k_base", Request { tools: vec![weather()], ..Request::default() },
         "THINK: Le café? Il pleut à 東京. ANSWER: Je regarde, 東京 d'abord.\nCALL {\"name\": \"get_weather\", \"arguments\": {\"city\": \"東京\"}} END\nCALL {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Orléans\"}} END STOP".into()),
        ("wb-edges", "o200k_base", Request::default(), "Voilà: 東京 é_1 STOP".into()),
        ("wb-invoke", "o200k_base", Request { tools: vec![weather()], ..Request::default() },
         "THINK: où? 東京.</think>\n<invoke name=\"get_weather\">{\"city\": \"Zürich\"}</invoke>\n<invoke id=\"2\" name=\"get_weather\">{\"city\": \"東京\"}</invoke>[e~[".into()),
    ];
    let options = Options {
        json: JsonOptions {
            whitespace: 1,
            ..JsonOptions::default()
        },
        ..Options::default()
    };
    let inline = common::word_boundary_templates();
    for (template, vocab_name, request, text) in corpus {
        let model = match inline.iter().find(|t| t.name == template) {
            Some(t) => template_build::model::load(&t.template).expect("loads"),
            None => common::template(template),
        };
        let constraint =
            compile(&model, &request, &options).unwrap_or_else(|e| panic!("{template}: {e}"));
        assert!(
            constraint.machine.table.matches(text.as_bytes()),
            "{template}: the text is not in the language: {text:?}"
        );
        let prepared = vocab(vocab_name);
        let bpe = match vocab_name {
            "o200k_harmony" => tiktoken_rs::o200k_harmony(),
            _ => tiktoken_rs::o200k_base(),
        }
        .unwrap();
        let ids = bpe.encode_with_special_tokens(&text);
        let index = TokenIndex::new(Arc::new(constraint), prepared.clone());
        if let Err(e) = walk_tokens(&index, &ids) {
            panic!("{template}: {e} in {text:?}");
        }
    }
}

/// Walks `ids` through the masks: every token allowed, then EOS (unless a token already ended
/// the response: an EOS token that is also the closing delimiter, gpt-oss `<|call|>`).
fn walk_tokens(index: &TokenIndex, ids: &[u32]) -> Result<(), String> {
    let vocab = index.vocab();
    let mut state = index.start();
    let mut ended = false;
    for (i, &id) in ids.iter().enumerate() {
        let token = String::from_utf8_lossy(vocab.token(id)).into_owned();
        if ended {
            return Err(format!("token {i} {token:?} after the end"));
        }
        if !index.allowed(state).contains(id) {
            return Err(format!("token {i} {token:?} refused"));
        }
        match index.advance(state, id) {
            Some(Step::Next(next)) => state = next,
            Some(Step::End) => ended = true,
            None => return Err(format!("token {i} {token:?} has no next state")),
        }
    }
    if !ended {
        let eos = *vocab.eos().last().unwrap();
        if !index.allowed(state).contains(eos) || index.advance(state, eos) != Some(Step::End) {
            return Err("EOS refused at the end".into());
        }
    }
    Ok(())
}

/// The templates whose fixtures' real outputs must be accepted (every vendored template
/// `constrain` supports through a family added after the first three).
const FIXTURE_TEMPLATES: &[&str] = &[
    // Delimiters ending in a look-ahead.
    "deepseek-v3.1",
    "kimi-k2",
    "magistral",
    "mistral",
    // Lists of JSON calls.
    "granite-3",
    "llama3.1",
    "mistral-pre-v11",
    "command-a",
    "command-r7b",
    "phi-4-mini",
    // A close whose every form starts with whitespace.
    "deepseek-r1",
    "deepseek-r1-0528",
    // XML parameters in other tag styles.
    "glm-4.5",
    "minimax-m2",
    "nemotron-3",
    // Python calls (`python-call-list`).
    "lfm2",
    // Python keyword arguments read by `xml-inline` tags and a `json` value parser.
    "lfm2.5",
];

/// Fixtures with calls valid for their tools whose text the grammar does not take, and why.
const FIXTURE_EXCEPTIONS: &[(&str, &str, &str)] = &[
    // The model's EOS token is the call's close; o200k_base has no such token, so the text
    // without it does not end where the template's close is required. With the model's own
    // vocabulary that EOS writes the close (`TokenIndex::advance` takes an EOS whose text
    // completes the response).
    (
        "llama3.1",
        "tool-call-no-eot",
        "the close `<|eot_id|>` is the model's EOS",
    ),
    (
        "mistral-pre-v11",
        "no-eos",
        "the close `</s>` is the model's EOS",
    ),
    // GLM 4.7 writes its tags without newlines; the generated form is GLM 4.5's, a newline
    // after the name and after each tag.
    // A small model's quoted integer (`days="5"`): the tools' typing casts it, generation
    // writes integers as integers.
    ("lfm2", "quoted-number", "an integer written as a string"),
    // LFM2.5 writes lists as Python's repr (`['LX', 'NH']`); generated arrays are JSON, their
    // strings double-quoted (a `'` inside a container is the value parser's string quote).
    ("lfm2.5", "tool-call", "a list of single-quoted strings"),
    (
        "glm-4.5",
        "glm47-tool-call",
        "GLM 4.7's tags without newlines",
    ),
    (
        "glm-4.5",
        "glm47-missing-arg-value-opener",
        "GLM 4.7's tags without newlines (and no `<arg_value>` opener)",
    ),
];

/// The real model outputs of the fixtures (`templates/fixtures/NAME/*.txt`) whose expected
/// message has tool calls that keep the contract for the tools they call: each is parsed by
/// the template (with an empty prefix: constrained generation starts outside every region;
/// where the prefix opened the reasoning region with a literal open, the text is taken with
/// that open written first), and when the parse is the expected message without violations,
/// it must be accepted token by token (tiktoken's o200k_base BPE), unless listed in
/// [`FIXTURE_EXCEPTIONS`].
#[test]
fn fixture_outputs_are_accepted_token_by_token() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../templates/fixtures");
    let bpe = tiktoken_rs::o200k_base().unwrap();
    let options = Options {
        json: JsonOptions {
            whitespace: 1,
            ..JsonOptions::default()
        },
        ..Options::default()
    };
    let mut failures = Vec::new();
    for &template in FIXTURE_TEMPLATES {
        let compiled = templates::by_name(template).unwrap().unwrap();
        let model = common::template(template);
        // A prefix that opens the reasoning region: the text with the open written first.
        let reasoning_open = model.fields.iter().find_map(|f| match (&f.role, &f.open) {
            (
                parser_runtime_core::tables::Role::Reasoning,
                Some(template_build::model::DelimiterSpec::Literals(open)),
            ) => open.first().cloned(),
            _ => None,
        });
        let mut names: Vec<_> = std::fs::read_dir(dir.join(template))
            .unwrap()
            .filter_map(|e| {
                let path = e.unwrap().path();
                let name = path
                    .file_name()?
                    .to_str()?
                    .strip_suffix(".txt")?
                    .to_string();
                Some(name)
            })
            .collect();
        names.sort();
        let (mut accepted, mut skipped) = (Vec::new(), Vec::new());
        for name in names {
            let read = |ext: &str| {
                std::fs::read_to_string(dir.join(template).join(format!("{name}.{ext}")))
            };
            let expected: Value = serde_json::from_str(&read("expected.json").unwrap()).unwrap();
            let Some(calls) = expected.get("tool_calls").and_then(Value::as_array) else {
                continue;
            };
            let Ok(tools) = read("tools.json") else {
                skipped.push(format!("{name} (no tools)"));
                continue;
            };
            let tools: Vec<Value> = serde_json::from_str(&tools).unwrap();
            let called: Vec<&str> = calls
                .iter()
                .filter_map(|c| c.pointer("/function/name").and_then(Value::as_str))
                .collect();
            let tools: Vec<Value> = tools
                .into_iter()
                .filter(|t| {
                    t.pointer("/function/name")
                        .and_then(Value::as_str)
                        .is_some_and(|n| called.contains(&n))
                })
                .collect();
            let Ok(strict) = StrictTools::new(&tools) else {
                skipped.push(format!("{name} (tools outside strict tools)"));
                continue;
            };
            let contract = Arc::new(Contract {
                response_format: None,
                strict_tools: Some(strict),
            });
            let raw = read("txt").unwrap();
            let candidates = [
                Some(raw.clone()),
                reasoning_open.as_ref().map(|o| format!("{o}{raw}")),
            ];
            let parsed = candidates.into_iter().flatten().find_map(|text| {
                let parsed = parser_runtime::parse_response_checked(
                    compiled,
                    &text,
                    "",
                    &tools,
                    contract.clone(),
                );
                let (message, violations) = parsed.ok()?;
                (Value::Object(message) == expected).then_some((text, violations))
            });
            let text = match parsed {
                Some((text, violations)) if violations.is_empty() => text,
                Some(_) => {
                    skipped.push(format!("{name} (calls break the contract)"));
                    continue;
                }
                None => {
                    skipped.push(format!("{name} (another message without its prefix)"));
                    continue;
                }
            };
            let request = Request {
                tools: tools.clone(),
                ..Request::default()
            };
            let constraint = match compile(&model, &request, &options) {
                Ok(c) => c,
                Err(e) => {
                    skipped.push(format!("{name} (not generated: {e})"));
                    continue;
                }
            };
            let index = TokenIndex::new(Arc::new(constraint), vocab("o200k_base"));
            let walked = walk_tokens(&index, &bpe.encode_with_special_tokens(&text));
            let excepted = FIXTURE_EXCEPTIONS
                .iter()
                .any(|&(t, n, _)| t == template && n == name);
            match (walked, excepted) {
                (Ok(()), false) => accepted.push(name),
                (Err(e), true) => skipped.push(format!("{name} (documented: {e})")),
                (Err(e), false) => failures.push(format!("{template}/{name}: {e}: {text:?}")),
                (Ok(()), true) => failures.push(format!(
                    "{template}/{name}: accepted, but listed as an exception"
                )),
            }
        }
        println!("{template}: accepted {accepted:?}; not checked {skipped:?}");
        if accepted.is_empty() {
            failures.push(format!("{template}: no fixture accepted"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
