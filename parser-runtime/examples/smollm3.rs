//! A parser compiled at build time with `response_template!` from the vendored SmolLM3
//! template, run on a vendored fixture (a tool call with nested, non-ASCII arguments),
//! streamed in 7-byte chunks; prints the events whose field is matched exhaustively, then the
//! message, and checks it against the fixture's expected message.
//!
//! ```text
//! cargo run -p parser-runtime --example smollm3
//! ```

use parser_runtime::Event;

parser_runtime::response_template!(SmolLm3 = "../../templates/smollm3.json");

const PREFIX: &str = include_str!("../../templates/fixtures/smollm3/tool-call.prefix");
const OUTPUT: &str = include_str!("../../templates/fixtures/smollm3/tool-call.txt");
const TOOLS: &str = include_str!("../../templates/fixtures/smollm3/tool-call.tools.json");
const EXPECTED: &str = include_str!("../../templates/fixtures/smollm3/tool-call.expected.json");

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tools: Vec<serde_json::Value> = serde_json::from_str(TOOLS)?;
    let mut parser = SmolLm3::parser_with_tools(PREFIX, &tools)?;
    let mut events = Vec::new();
    for chunk in OUTPUT.as_bytes().chunks(7) {
        events.extend(parser.feed_bytes(chunk)?);
    }
    let (message, tail) = parser.finalize()?;
    events.extend(tail);
    for event in parser_runtime::event::merge_chunks(&events) {
        let field = SmolLm3::from_name(event.field()).ok_or("event of an unknown field")?;
        let what = match field {
            SmolLm3::Thinking => "reasoning",
            SmolLm3::Content => "answer",
            SmolLm3::ToolCalls => "tool call",
        };
        match event {
            Event::RegionOpen { .. } => println!("[{what}] open"),
            Event::RegionChunk { text, .. } => println!("[{what}] {text:?}"),
            Event::RegionClose { value, .. } => println!("[{what}] close: {value}"),
            // Lenient mode only (`ParserOptions::lenient`).
            Event::RegionMalformed { error, .. } => println!("[{what}] malformed: {error}"),
            Event::RegionTruncated { .. } => println!("[{what}] truncated"),
        }
    }
    let message = serde_json::Value::Object(message);
    println!("{}", serde_json::to_string_pretty(&message)?);
    let expected: serde_json::Value = serde_json::from_str(EXPECTED)?;
    if message != expected {
        return Err("the message differs from the fixture's expected message".into());
    }
    println!("matches templates/fixtures/smollm3/tool-call.expected.json");
    Ok(())
}
