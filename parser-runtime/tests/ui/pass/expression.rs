// The expression form `response_template!("path.json")`: a `&'static EmbeddedTemplate`, in a
// `static`, in a `let` and inline, on a vendored SmolLM3 fixture whose expected message was
// checked against the reference (templates/fixtures/check_with_reference.py). The
// tokenizer_config.json beside this test holds the same template under `response_template`
// (built from templates/smollm3.json).
use parser_runtime::{EmbeddedTemplate, RegionEvent};

static SMOLLM3: &EmbeddedTemplate =
    parser_runtime::response_template!("../../../../templates/smollm3.json");

const PREFIX: &str = include_str!("../../../../templates/fixtures/smollm3/tool-call.prefix");
const OUTPUT: &str = include_str!("../../../../templates/fixtures/smollm3/tool-call.txt");
const TOOLS: &str = include_str!("../../../../templates/fixtures/smollm3/tool-call.tools.json");
const EXPECTED: &str =
    include_str!("../../../../templates/fixtures/smollm3/tool-call.expected.json");

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tools: Vec<serde_json::Value> = serde_json::from_str(TOOLS)?;
    let expected: serde_json::Value = serde_json::from_str(EXPECTED)?;

    // Inline.
    let message = parser_runtime::response_template!("../../../../templates/smollm3.json")
        .parse_response_with_tools(OUTPUT, PREFIX, &tools)?;
    assert_eq!(serde_json::Value::Object(message), expected);

    // In a static, streamed.
    let mut parser = SMOLLM3.parser_with_tools(PREFIX, &tools)?;
    for chunk in OUTPUT.as_bytes().chunks(5) {
        parser.feed_bytes(chunk)?;
    }
    let (streamed, _events) = parser.finalize()?;
    assert_eq!(serde_json::Value::Object(streamed), expected);
    assert_eq!(SMOLLM3.name(), "smollm3");

    // In a let, from a tokenizer_config.json: the same tables as the bare template.
    let config = parser_runtime::response_template!("../templates/SmolLM3-3B/tokenizer_config.json");
    assert_eq!(config.name(), "SmolLM3-3B");
    assert_eq!(config.tables().digest, SMOLLM3.tables().digest);
    let without_tools = config.parse_response("<think>\nhm\n</think>\nHello!", "")?;
    assert_eq!(without_tools["content"], "Hello!");
    assert_eq!(without_tools["thinking"], "hm");

    // The no-heap router: events carry the field index in template order.
    let content = SMOLLM3.field_index("content").ok_or("no content field")?;
    assert_eq!(SMOLLM3.field_name(content), Some("content"));
    let mut router = SMOLLM3.router::<64>()?;
    let mut text = String::new();
    router.feed("<think>\nhm\n</think>\nHello!", |event| {
        if let RegionEvent::Chunk { field, text: chunk } = event {
            if field == content {
                text.push_str(chunk);
            }
        }
    })?;
    router.finish(|_| {})?;
    assert_eq!(text, "\nHello!");
    Ok(())
}
