//! The vendored response templates (`templates/*.json`; sources and licences in
//! `templates/SOURCES.md`), compiled to DFAs at build time by `template_build::Builder` in this
//! crate's build script: a broken template fails `cargo build`.
//!
//! Each template is an item named after its file ([`Smollm3`], [`Qwen3Coder`], ...) with the
//! API of `parser_runtime::response_template!`; [`by_name`] selects one at run time.
//!
//! ```
//! let template = templates::by_name("smollm3").unwrap()?;
//! let message = parser_runtime::parse_response(template, "Hi!", "", &[])?;
//! assert_eq!(message["content"], "Hi!");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

include!(concat!(env!("OUT_DIR"), "/templates.rs"));
include!(concat!(env!("OUT_DIR"), "/sources.rs"));

use parser_runtime::statics::TableError;
use parser_runtime::CompiledTemplate;

/// The model families each vendored template covers, by template name (file stem); the table
/// of `templates/README.md` gives the details and the limits.
pub const FAMILIES: &[(&str, &str)] = &[
    (
        "command-a",
        "Cohere Command A (+ Reasoning), Cohere2 / Aya templates",
    ),
    (
        "command-r7b",
        "Cohere Command R7B (c4ai-command-r7b-12-2024)",
    ),
    (
        "deepseek-r1",
        "DeepSeek-R1 (prefilled <think>), R1-Distill-Qwen / -Llama, R1-0528 (tool calls in fenced JSON)",
    ),
    (
        "deepseek-r1-0528",
        "DeepSeek-R1-0528, DeepSeek-V3 / V3-0324 (tool calls in fenced JSON)",
    ),
    (
        "deepseek-v3.1",
        "DeepSeek-V3.1, V3.1-Terminus (thinking and non-thinking)",
    ),
    (
        "ernie-4.5",
        "ERNIE-4.5-21B-A3B-Thinking, ERNIE-4.5 -PT chat models",
    ),
    ("gemma-4", "Google Gemma 4 (E2B, E4B, 26B A4B, 31B)"),
    (
        "glm-4.5",
        "GLM-4.5, GLM-4.5-Air, GLM-4.6, GLM-4.7, GLM-5 (thinking on or off, tool calls)",
    ),
    ("gpt-oss", "gpt-oss-20b / -120b (OpenAI harmony)"),
    (
        "granite-3",
        "IBM Granite 3.0-3.3 (JSON call lists after <|tool_call|>, json-call-list; 3.3 thinking)",
    ),
    (
        "granite-4",
        "IBM Granite 4.0 (H-Small, H-Tiny, H-Micro, Micro), Granite 3.3 thinking",
    ),
    ("hermes", "NousResearch Hermes 2 Pro, Hermes 3"),
    (
        "kimi-k2",
        "Kimi-K2-Instruct, -Instruct-0905, K2-Thinking, Kimi K2.5",
    ),
    (
        "lfm2",
        "LiquidAI LFM2, Liquid Nanos, LFM2.5 (Python call lists, python-call-list)",
    ),
    ("lfm2.5", "LiquidAI LFM2.5 (Instruct, Thinking, VL), LFM2"),
    (
        "llama3.1",
        "Llama 3.1, 3.2, 3.3 (JSON tool calls: bare, `;`-separated, after <|python_tag|>)",
    ),
    (
        "magistral",
        "Magistral Small/Medium 2507, 2509, Ministral-3 Reasoning",
    ),
    ("minimax-m2", "MiniMax-M2, M2.1, M2.5"),
    (
        "mistral",
        "Mistral Small 3.2, Devstral, Ministral 3 (v11+ tokenizers)",
    ),
    (
        "mistral-pre-v11",
        "Mistral 7B v0.3, Mixtral 8x22B, Nemo, Small 2409 / 3.0 / 3.1, Ministral 8B (JSON call lists, json-call-list)",
    ),
    (
        "nemotron-3",
        "NVIDIA Nemotron 3 Nano / Super / Ultra, Nemotron 3.5 Lightning",
    ),
    (
        "phi-4-mini",
        "Phi-4-mini-instruct, -reasoning, -flash-reasoning, Phi-4-reasoning",
    ),
    (
        "qwen3",
        "Qwen2 / Qwen2.5, QwQ, Qwen3 hybrid, Qwen3-2507, Qwen3-Next, Qwen3-VL",
    ),
    (
        "qwen3-coder",
        "Qwen3-Coder, Qwen3.5 / Qwen3.6 (XML parameters)",
    ),
    (
        "qwen3-thinking",
        "Qwen3-*-Thinking-2507, Qwen3-Next-Thinking, QwQ-32B (prefilled <think>)",
    ),
    ("seed-oss", "ByteDance Seed-OSS-36B-Instruct"),
    (
        "smollm3",
        "SmolLM3-3B (ChatML + <think> + <tool_call> JSON)",
    ),
];

/// The families the template `name` covers (see [`FAMILIES`]).
pub fn families(name: &str) -> Option<&'static str> {
    FAMILIES.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
}

/// The names of the vendored templates (file stems), sorted.
pub fn names() -> impl Iterator<Item = &'static str> {
    TEMPLATES.iter().map(|(name, _)| *name)
}

/// The vendored template named `name` (its file stem, e.g. `qwen3-coder`), built on first use;
/// `None` when there is no such template.
///
/// Errors (inside the `Some`): [`TableError`] when the embedded tables cannot be loaded.
pub fn by_name(name: &str) -> Option<Result<&'static CompiledTemplate, TableError>> {
    TEMPLATES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, lazy)| lazy().get())
}

/// The JSON text of the vendored template `name` (as in `templates/NAME.json`), for tools that
/// compile the template further (e.g. into token masks); `None` when there is no such
/// template.
pub fn source(name: &str) -> Option<&'static str> {
    SOURCES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}
