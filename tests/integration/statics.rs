//! Templates compiled ahead of time behave exactly like the same templates compiled at run
//! time: the `response_template!` macro, the build-script front end (`template_build::Builder`,
//! through the `templates` crate and this crate's build script, which compiles every distinct
//! template of the conformance cases) and `template_build::compile` must give the same
//! messages, the same errors and the same events, chunk for chunk.

use std::collections::HashMap;

use parser_runtime::tables::{CompiledTemplate, Dfa};
use parser_runtime::{Event, ResponseParser};
use serde_json::{json, Value};
use workspace_tests::{
    compiled_word_boundary, fixture_paths, read_jsonl, shared_dir, workspace_root,
};

parser_runtime::response_template!(pub(crate) SmolLm3 = "../../templates/smollm3.json");
parser_runtime::response_template!(Qwen3 = "../../templates/qwen3.json");
parser_runtime::response_template!(Qwen3Coder = "../../templates/qwen3-coder.json");
parser_runtime::response_template!(GptOss = "../../templates/gpt-oss.json");
parser_runtime::response_template!(CommandA = "../../templates/command-a.json");
// A tokenizer_config.json holding the gpt-oss template under `response_template`.
parser_runtime::response_template!(GptOssConfig = "../data/gpt-oss.tokenizer_config.json");

// Named groups in close patterns, the implicit field's close included (transformers 5.24).
parser_runtime::response_template!(CloseCaptures = "../data/close-captures.json");

// Word boundaries in delimiters (a context slot, delayed matches).
parser_runtime::response_template!(WordBoundary = "../data/word-boundary.json");

// Field names that collide after conversion, or with the item's own constants.
parser_runtime::response_template!(OddFields = "../data/odd-fields.json");

/// The conformance templates compiled by this crate's build script (`t<N>` items).
mod conformance_tables {
    include!(concat!(env!("OUT_DIR"), "/conformance_templates.rs"));
}

/// Parses `text` in chunks of `size` bytes (0: one feed): the message or the error, and every
/// event unmerged.
fn run(
    template: &CompiledTemplate,
    prefix: &str,
    tools: &[Value],
    text: &str,
    size: usize,
) -> Value {
    let mut events: Vec<Event> = Vec::new();
    let result = (|| {
        let mut parser = ResponseParser::with_tools(template, prefix, tools)?;
        events.extend(parser.initial_events().iter().cloned());
        let size = if size == 0 { text.len().max(1) } else { size };
        for piece in text.as_bytes().chunks(size) {
            events.extend(parser.feed_bytes(piece)?);
        }
        let (message, tail) = parser.finalize()?;
        events.extend(tail);
        Ok::<_, parser_runtime::ParseError>(message)
    })();
    match result {
        Ok(message) => json!({"message": message, "events": events}),
        Err(e) => json!({"error": e.to_string(), "events": events}),
    }
}

/// Every fixture of a vendored template: `(name, prefix, tools, text)`.
fn fixtures(name: &str) -> Vec<(String, String, Vec<Value>, String)> {
    fixture_paths(name)
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("fixture text");
            let prefix = std::fs::read_to_string(path.with_extension("prefix")).unwrap_or_default();
            let tools = std::fs::read_to_string(path.with_extension("tools.json"))
                .ok()
                .and_then(|t| serde_json::from_str::<Vec<Value>>(&t).ok())
                .unwrap_or_default();
            (path.display().to_string(), prefix, tools, text)
        })
        .collect()
}

fn dynamic(name: &str) -> CompiledTemplate {
    let path = workspace_root()
        .join("templates")
        .join(format!("{name}.json"));
    template_build::load_file(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// Asserts that `stat` and `dynamic` give the same results on every fixture of `name`, one
/// shot and in 1-, 5- and 64-byte chunks; returns the number of runs compared.
fn same_on_fixtures(name: &str, stat: &CompiledTemplate, dynamic: &CompiledTemplate) -> usize {
    let mut runs = 0;
    for (file, prefix, tools, text) in fixtures(name) {
        for size in [0, 1, 5, 64] {
            let want = run(dynamic, &prefix, &tools, &text, size);
            let got = run(stat, &prefix, &tools, &text, size);
            assert_eq!(got, want, "{file} in {size}-byte chunks: static != dynamic");
            runs += 1;
        }
    }
    runs
}

#[test]
fn every_vendored_template_from_build_rs_equals_run_time_compile() {
    let names: Vec<&str> = templates::names().collect();
    assert!(names.len() >= 5, "vendored templates: {names:?}");
    let mut runs = 0;
    for name in names {
        let stat = templates::by_name(name)
            .expect("listed")
            .unwrap_or_else(|e| panic!("{e}"));
        runs += same_on_fixtures(name, stat, &dynamic(name));
    }
    assert!(runs >= 100, "only {runs} fixture runs compared");
}

#[test]
fn macro_items_equal_build_rs_items_and_run_time_compile() {
    type Lazy = parser_runtime::statics::LazyFn;
    let pairs: [(&str, Lazy, Lazy); 6] = [
        ("smollm3", SmolLm3::lazy, templates::Smollm3::lazy),
        ("qwen3", Qwen3::lazy, templates::Qwen3::lazy),
        ("qwen3-coder", Qwen3Coder::lazy, templates::Qwen3Coder::lazy),
        ("gpt-oss", GptOss::lazy, templates::GptOss::lazy),
        ("command-a", CommandA::lazy, templates::CommandA::lazy),
        ("gpt-oss", GptOssConfig::lazy, templates::GptOss::lazy),
    ];
    for (name, from_macro, from_build_rs) in pairs {
        let (m, b) = (from_macro(), from_build_rs());
        assert_eq!(
            m.tables().digest,
            b.tables().digest,
            "{name}: the macro and build.rs generated different tables"
        );
        let stat = m.get().unwrap_or_else(|e| panic!("{e}"));
        assert!(
            same_on_fixtures(name, stat, &dynamic(name)) > 0,
            "{name}: no fixtures"
        );
    }
    // Different templates have different digests.
    assert_ne!(
        SmolLm3::lazy().tables().digest,
        Qwen3::lazy().tables().digest
    );
}

/// The templates build.rs compiled, by their JSON text.
fn build_rs_tables() -> HashMap<String, &'static CompiledTemplate> {
    let dir = std::path::Path::new(env!("OUT_DIR")).join("conformance-templates");
    let mut by_text: HashMap<String, &'static CompiledTemplate> = HashMap::new();
    for (stem, lazy) in conformance_tables::TEMPLATES {
        let text = std::fs::read_to_string(dir.join(format!("{stem}.json"))).expect("template");
        by_text.insert(text, lazy().get().unwrap_or_else(|e| panic!("{stem}: {e}")));
    }
    by_text
}

#[test]
fn word_boundary_cases_with_build_rs_tables_equal_run_time_compile() {
    let by_text = build_rs_tables();
    let mut compared = 0;
    for (case, _, _) in compiled_word_boundary() {
        let key = serde_json::to_string(&case["template"]).expect("serialize");
        let stat = by_text
            .get(&key)
            .unwrap_or_else(|| panic!("{}: not compiled by build.rs", case["id"]));
        let want = rtpl::cases::run_case(case, false);
        let got = rtpl::cases::run_case_with(case, stat, false);
        assert_eq!(got, want, "{}: static != dynamic", case["id"]);
        compared += 1;
    }
    assert!(compared >= 35, "{compared} cases compared");
    // Context slots and delayed matches are in the embedded DFAs.
    let dfas: Vec<&Dfa> = by_text
        .values()
        .flat_map(|t| t.fields.iter())
        .flat_map(|f| f.open.iter().chain(f.close.iter()))
        .flat_map(|d| d.branches.iter())
        .map(|b| &b.dfa)
        .collect();
    let delayed = |d: &Dfa| {
        d.edges()
            .iter()
            .any(|&(_, flags)| flags & parser_runtime::router::EDGE_DELAYED != 0)
    };
    assert!(dfas
        .iter()
        .any(|d| d.context() && matches!(d, Dfa::Embedded(_))));
    assert!(dfas.iter().any(|d| delayed(d)));
}

#[test]
fn word_boundary_macro_item_equals_run_time_compile() {
    let dynamic = dynamic_file("tests/data/word-boundary.json");
    let lazy = WordBoundary::lazy();
    assert_eq!(
        lazy.tables().digest,
        template_build::codegen::digest(&dynamic),
        "the macro's tables differ from the run-time compile"
    );
    let stat = lazy.get().unwrap_or_else(|e| panic!("{e}"));
    let texts = [
        "THINK: plan éANSWER no ANSWER: yes <invoke id=\"1\" name=\"f\">\n\
         <parameter name=\"a\">1</parameter></invoke> rest",
        "éTHINK: no\n<invokex name=\"g\"></invoke> 東 THINK: x ANSWER",
    ];
    for text in texts {
        for size in [0, 1, 2, 5] {
            for prefix in ["", "<s>", "<s>a", "<s>é "] {
                let want = run(&dynamic, prefix, &[], text, size);
                let got = run(stat, prefix, &[], text, size);
                assert_eq!(got, want, "{text:?} after {prefix:?} in {size}-byte chunks");
            }
        }
    }
}

#[test]
fn conformance_cases_with_build_rs_tables_equal_run_time_compile() {
    // Template JSON text -> its compiled item.
    let by_text = build_rs_tables();
    let seen = std::fs::read_to_string(
        std::path::Path::new(env!("OUT_DIR")).join("conformance-cases.len"),
    )
    .unwrap_or_default();
    let mut compared = 0;
    let mut close_captures = 0;
    // The files of `tests/build.rs`'s `CASE_FILES`, in its order.
    let files = [
        shared_dir().join("cases").join("conformance.jsonl"),
        shared_dir().join("cases").join("conformance-5.24.jsonl"),
        workspace_root().join("tests/data/reference-5.24.jsonl"),
        workspace_root().join("tests/data/word-boundary.jsonl"),
    ];
    let seen: Vec<&str> = seen.lines().collect();
    assert_eq!(
        seen.len(),
        files.len(),
        "tests/build.rs compiled the templates of {} case files, expected {}: run `touch \
         tests/build.rs` and test again",
        seen.len(),
        files.len()
    );
    for (path, seen) in files.iter().zip(seen) {
        let now = std::fs::metadata(path)
            .map(|m| m.len().to_string())
            .unwrap_or_default();
        assert_eq!(
            seen.trim(),
            now,
            "{} changed (or appeared) after tests/build.rs compiled its templates: run \
             `touch tests/build.rs` and test again",
            path.display()
        );
        for case in &read_jsonl(path) {
            let key = serde_json::to_string(&case["template"]).expect("serialize");
            let Some(stat) = by_text.get(&key) else {
                // The template does not load: nothing to compile ahead of time. The run-time
                // path must agree that it does not load.
                assert!(
                    template_build::compile(&case["template"]).is_err(),
                    "{}: template loads at run time but was not compiled by build.rs",
                    case["id"]
                );
                continue;
            };
            let want = rtpl::cases::run_case(case, false);
            let got = rtpl::cases::run_case_with(case, stat, false);
            assert_eq!(got, want, "{}: static != dynamic", case["id"]);
            compared += 1;
            // Close patterns with named groups (transformers 5.24): the static tables must
            // carry their capture regexes.
            if stat.fields.iter().any(|f| {
                f.close
                    .as_ref()
                    .is_some_and(|d| d.branches.iter().any(|b| b.captures.is_some()))
            }) {
                close_captures += 1;
            }
        }
    }
    assert!(
        close_captures >= 20,
        "{close_captures} cases with close-pattern captures compared"
    );
    assert!(
        by_text.len() >= 30 && compared >= 400,
        "{} templates, {compared} cases compared",
        by_text.len()
    );
}

/// Close-pattern captures (transformers 5.24) with the macro's tables, fed one byte at a time
/// and in one piece, equal the run-time template's; the message is the 5.24.0 oracle's: the
/// close's `name` replaces the open's, a close group that did not take part leaves the open's,
/// and the implicit field's close brings `reason`.
#[test]
fn close_captures_with_macro_tables() {
    let stat = CloseCaptures::template().unwrap_or_else(|e| panic!("{e}"));
    let dynamic = dynamic_file("tests/data/close-captures.json");
    assert!(stat.fields.iter().all(|f| f
        .close
        .as_ref()
        .is_some_and(|d| d.branches.iter().all(|b| b.captures.is_some()))));
    let text = r#"<call name="météo">{"a": 1}</call name="naïve"><call name="kept">{}</call>bye<|end reason=stop|>"#;
    let want = json!({
        "tool_calls": [
            {"type": "function", "function": {"name": "naïve", "arguments": {"a": 1}}},
            {"type": "function", "function": {"name": "kept", "arguments": {}}}
        ],
        "content": {"text": "bye", "reason": "stop"}
    });
    for size in [0, 1, 2, 3] {
        let got = run(stat, "", &[], text, size);
        assert_eq!(got, run(&dynamic, "", &[], text, size), "size {size}");
        assert_eq!(got["message"], want, "size {size}");
    }
}

#[test]
fn generated_item_is_a_field_enum() {
    assert_eq!(SmolLm3::NAME, "SmolLm3");
    let names: Vec<&str> = SmolLm3::FIELDS.iter().map(|f| f.as_str()).collect();
    let template = SmolLm3::template().unwrap();
    let want: Vec<&str> = template.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, want);
    for field in SmolLm3::FIELDS {
        assert_eq!(SmolLm3::from_name(field.as_str()), Some(*field));
        assert_eq!(field.to_string(), field.as_str());
    }
    assert_eq!(SmolLm3::from_name("no such field"), None);
    assert_eq!(SmolLm3::ToolCalls.as_str(), "tool_calls");
    // Events can be matched exhaustively on the field.
    let prefix = "<|im_start|>assistant\n";
    let mut parser = SmolLm3::parser(prefix).unwrap();
    let mut seen = Vec::new();
    for event in parser
        .feed("<think>\nhm\n</think>\nHi <tool_call>")
        .unwrap()
    {
        match SmolLm3::from_name(event.field()) {
            Some(SmolLm3::Thinking) => seen.push("reasoning"),
            Some(SmolLm3::Content) => seen.push("content"),
            Some(SmolLm3::ToolCalls) => seen.push("tool"),
            None => panic!("unknown field {}", event.field()),
        }
    }
    assert!(
        seen.contains(&"reasoning") && seen.contains(&"content"),
        "{seen:?}"
    );
    // The DFAs are the embedded bytes, deserialized in place.
    let open = template
        .fields
        .iter()
        .find_map(|f| f.open.as_ref())
        .unwrap();
    assert!(matches!(open.branches[0].dfa, Dfa::Embedded(_)));
    let message = SmolLm3::parse_response("<think>\nhm\n</think>\nHi", prefix).unwrap();
    assert_eq!(message["content"], "Hi");
    assert_eq!(message["thinking"], "hm");
}

#[test]
fn variant_names_are_unique_and_do_not_shadow_the_item() {
    let names: Vec<String> = OddFields::FIELDS.iter().map(|f| format!("{f:?}")).collect();
    assert_eq!(
        names,
        [
            "AB",
            "AB2",
            "AB3",
            "FieldNAME",
            "FieldFIELDS",
            "FieldSelf",
            "Field1st",
            "ToolCalls",
            "Field",
            "Content"
        ]
    );
    assert_eq!(OddFields::NAME, "OddFields");
    assert_eq!(OddFields::FieldNAME.as_str(), "NAME");
    assert_eq!(OddFields::from_name("a-b"), Some(OddFields::AB3));
    assert_eq!(OddFields::from_name("思考"), Some(OddFields::Field));
    let text = "<1>one</1><3>three</3><4>four</4><8>{\"a\": 1}</8><9>深い</9>rest";
    let want = parser_runtime::parse_response(
        &dynamic_file("tests/data/odd-fields.json"),
        text,
        "<s>",
        &[],
    );
    assert_eq!(OddFields::parse_response(text, "<s>"), want);
    let message = want.unwrap();
    assert_eq!(message["a-b"], "three");
    assert_eq!(message["思考"], "深い");
}

fn dynamic_file(relative: &str) -> CompiledTemplate {
    template_build::load_file(&workspace_root().join(relative)).unwrap_or_else(|e| panic!("{e}"))
}
