//! Compile time and size of the whole-response machine of every vendored template with the
//! guarantee test's tools (the weather tool and two JSON-argument tools; XML-parameter and
//! keyword-argument templates: the weather and alarm tools), tool choice auto:
//! `cargo run --release -p constrain --example families`. A template `constrain` refuses
//! prints its error.

mod common;

use constrain::template::{compile, Family, Options, Request};

fn main() {
    for name in templates::names() {
        let template = common::template(name);
        let json = Request {
            tools: std::iter::once(common::weather())
                .chain(common::rich())
                .collect(),
            ..Request::default()
        };
        let mut start = std::time::Instant::now();
        let mut result = compile(&template, &json, &Options::default());
        let mut tools = "3 JSON";
        if matches!(&result, Err(e) if e.reason.contains("XML parameters") || e.reason.contains("keyword arguments"))
        {
            tools = "2 XML";
            let request = common::with_tools(common::xml_tools());
            start = std::time::Instant::now();
            result = compile(&template, &request, &Options::default());
        }
        let elapsed = start.elapsed();
        match result {
            Ok(c) => println!(
                "{name:18} {:>14} {tools:6} tools {:>7} states {:>10.1?}",
                format!("{:?}", c.family.unwrap_or(Family::JsonCall)),
                c.machine.table.len(),
                elapsed
            ),
            Err(e) => println!("{name:18} error: {e}"),
        }
    }
}
