//! `constrain`: a vendored template, tools built from the fuzz input (names with hyphens and
//! dots, parameters of every supported type, required or not), a `tool_choice` and maybe a
//! response format, compiled into token masks over a small vocabulary (the 256 bytes, the
//! template's delimiters, one EOS), then random walks through the masks. The compile either
//! succeeds or gives a typed `ConstrainError`; no mask refuses a token of a valid text, every
//! allowed token advances and a refused one does not; every complete output parses with the
//! template and keeps the contract (strict tools, response format), as `rtpl constrain`
//! checks in CI.
//!
//! Input: `arbitrary` bytes (see `Input`).
#![no_main]

use std::sync::{Arc, OnceLock};

use arbitrary::Arbitrary;
use constrain::index::{TokenIndex, VocabIndex};
use constrain::template::{compile, Request, ToolChoice};
use libfuzzer_sys::fuzz_target;
use response_templates_fuzz::{fuzz_options, sample_outputs, small_vocabulary, vendored};
use serde_json::{json, Map, Value};
use structured_outputs::{Contract, ResponseFormat, StrictTools};
use template_build::TemplateModel;

const TOOL_NAMES: [&str; 6] = [
    "get_weather",
    "search",
    "get-weather",
    "f",
    "a.b",
    "manim-video",
];
const PARAM_NAMES: [&str; 6] = ["city", "days", "unit", "q", "with space", "é"];

#[derive(Debug, Arbitrary)]
enum Kind {
    String,
    Integer,
    Number,
    Boolean,
    Enum(u8),
    Array,
    Object,
    Pattern,
    Date,
    Nullable,
}

impl Kind {
    fn schema(&self) -> Value {
        match self {
            Kind::String => json!({"type": "string"}),
            Kind::Integer => json!({"type": "integer"}),
            Kind::Number => json!({"type": "number"}),
            Kind::Boolean => json!({"type": "boolean"}),
            Kind::Enum(n) => {
                json!({"enum": (0..=n % 4).map(|i| format!("v{i}")).collect::<Vec<_>>()})
            }
            Kind::Array => json!({"type": "array", "items": {"type": "string"}}),
            Kind::Object => json!({"type": "object", "properties": {"x": {"type": "integer"}},
                                   "required": ["x"], "additionalProperties": false}),
            Kind::Pattern => json!({"type": "string", "pattern": "[a-z]{1,3}"}),
            Kind::Date => json!({"type": "string", "format": "date"}),
            Kind::Nullable => json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
        }
    }
}

#[derive(Debug, Arbitrary)]
struct Tool {
    name: u8,
    params: Vec<(u8, Kind, bool)>,
}

#[derive(Debug, Arbitrary)]
enum Choice {
    Auto,
    Required,
    None,
    Named(u8),
}

#[derive(Debug, Arbitrary)]
struct Input {
    template: u8,
    tools: Vec<Tool>,
    choice: Choice,
    /// A JSON-schema response format with these properties (`None`: no response format).
    format: Option<Vec<(u8, Kind)>>,
    seed: u64,
}

fn object(params: &[(u8, &Kind, bool)]) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (i, (name, kind, req)) in params.iter().take(4).enumerate() {
        let name = PARAM_NAMES[usize::from(*name) % PARAM_NAMES.len()];
        properties.insert(name.to_owned(), kind.schema());
        if *req || i == 0 {
            required.push(name);
        }
    }
    required.dedup();
    json!({"type": "object", "properties": properties, "required": required,
           "additionalProperties": false})
}

/// The template models (`None` for a template `model::load` refuses, which it must not).
fn models() -> &'static [TemplateModel] {
    static MODELS: OnceLock<Vec<TemplateModel>> = OnceLock::new();
    MODELS.get_or_init(|| {
        vendored()
            .iter()
            .map(|v| {
                let value = template_build::compile::template_value_from_text(
                    templates::source(v.name).unwrap(),
                )
                .unwrap();
                template_build::model::load(&value).unwrap()
            })
            .collect()
    })
}

fuzz_target!(|input: Input| {
    let all = vendored();
    let k = usize::from(input.template) % all.len();
    let (vendored, model) = (&all[k], &models()[k]);
    let tools: Vec<Value> = input
        .tools
        .iter()
        .take(3)
        .map(|t| {
            let params: Vec<(u8, &Kind, bool)> =
                t.params.iter().map(|(n, k, r)| (*n, k, *r)).collect();
            json!({"type": "function", "function": {
                "name": TOOL_NAMES[usize::from(t.name) % TOOL_NAMES.len()],
                "parameters": object(&params), "strict": true}})
        })
        .collect();
    let none = matches!(input.choice, Choice::None);
    let tool_choice = match input.choice {
        Choice::Auto => ToolChoice::Auto,
        Choice::Required => ToolChoice::Required,
        Choice::None => ToolChoice::None,
        Choice::Named(n) => match ToolChoice::from_request(&json!({"type": "function",
            "function": {"name": TOOL_NAMES[usize::from(n) % TOOL_NAMES.len()]}}))
        {
            Ok(c) => c,
            Err(e) => panic!("a named tool choice is readable: {e}"),
        },
    };
    let response_format = input.format.as_ref().map(|props| {
        let params: Vec<(u8, &Kind, bool)> = props.iter().map(|(n, k)| (*n, k, true)).collect();
        json!({"type": "json_schema", "json_schema": {"name": "r", "schema": object(&params)}})
    });
    let request = Request {
        tools: tools.clone(),
        tool_choice,
        response_format: response_format.clone(),
    };
    let constraint = match compile(model, &request, &fuzz_options()) {
        Ok(c) => c,
        Err(e) => {
            assert!(!e.at.is_empty() && !e.reason.is_empty(), "{e:?}");
            return;
        }
    };
    // The contract `rtpl constrain` checks samples against.
    let contract = Arc::new(Contract {
        response_format: response_format
            .as_ref()
            .map(|f| ResponseFormat::from_request(f).expect("the generator took it")),
        // With `tool_choice: none` the generator ignores the tools (no call may be
        // written); otherwise it took them, so the strict-tools rules must too.
        strict_tools: match StrictTools::new(&tools) {
            _ if tools.is_empty() => None,
            Ok(strict) => Some(strict),
            Err(e) => {
                assert!(none, "the generator took tools the checker refuses: {e}");
                None
            }
        },
    });
    let vocab = Arc::new(VocabIndex::new(small_vocabulary(&vendored.pieces)));
    let index = TokenIndex::new(Arc::new(constraint), vocab);
    sample_outputs(
        &index,
        input.seed,
        2,
        |text| match parser_runtime::parse_response_checked(
            vendored.template,
            text,
            "",
            &tools,
            contract.clone(),
        ) {
            Ok((_, violations)) => assert!(
                violations.is_empty(),
                "{}: generated {text:?} breaks the contract: {violations:?}",
                vendored.name
            ),
            Err(e) => panic!("{}: generated {text:?} does not parse: {e}", vendored.name),
        },
    );
});
