//! Parses one SmolLM3 output with the template compiled at build time, in the design card's
//! form, and prints the message as JSON.
//!
//! ```text
//! cargo run --manifest-path examples/card/Cargo.toml -- OUTPUT_FILE   # or the output on stdin
//! ```

use std::io::Read;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let output = match std::env::args_os().nth(1) {
        Some(path) => std::fs::read_to_string(&path)
            .map_err(|e| format!("{}: {e}", path.to_string_lossy()))?,
        None => {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text)?;
            text
        }
    };
    let message = parser_runtime::response_template!("smollm3.json").parse_response(&output, "")?;
    println!("{}", serde_json::to_string_pretty(&message)?);
    Ok(())
}
