//! Prints the size and build time of the whole-response machine for the vendored templates
//! with no request, a tool, and JSON mode: `cargo run --release -p constrain --example sizes`.

mod common;

use constrain::template::{compile, Options, Request};

fn main() {
    let requests = [
        ("plain", Request::default()),
        ("tools", common::with_tools(vec![common::weather()])),
        ("json", common::json_mode()),
    ];
    for name in common::MAIN_TEMPLATES {
        let template = common::template(name);
        for (label, request) in &requests {
            let start = std::time::Instant::now();
            match compile(&template, request, &Options::default()) {
                Ok(c) => println!(
                    "{name:12} {label:6} {:>7} states {:>4} classes {:>9} bytes {:>10.1?}",
                    c.machine.table.len(),
                    c.machine.table.classes(),
                    c.machine.table.memory(),
                    start.elapsed()
                ),
                Err(e) => println!("{name:12} {label:6} error: {e}"),
            }
        }
    }
}
