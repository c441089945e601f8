//! Prints the size and build time of the whole-response machine for the vendored templates
//! with no request, a tool, and JSON mode: `cargo run --release -p constrain --example sizes`.
//! Then the same for the word-boundary templates of the guarantee test, next to the same
//! templates with their word assertions taken out (what the boundaries cost).

mod common;

use constrain::template::{compile, Options, Request};

fn main() {
    let requests = requests();
    for name in common::MAIN_TEMPLATES {
        report(name, &common::template(name), &requests);
    }
    for t in common::word_boundary_templates() {
        let model = template_build::model::load(&t.template).expect("loads");
        report(t.name, &model, &requests);
        let text = t.template.to_string();
        let plain = ["\\\\b", "\\\\m", "\\\\M"]
            .iter()
            .fold(text, |t, look| t.replace(look, ""));
        let plain: serde_json::Value = serde_json::from_str(&plain).expect("JSON");
        let model = template_build::model::load(&plain).expect("loads");
        report(&format!("{} (no \\b)", t.name), &model, &requests);
    }
}

fn requests() -> [(&'static str, Request); 3] {
    [
        ("plain", Request::default()),
        ("tools", common::with_tools(vec![common::weather()])),
        ("json", common::json_mode()),
    ]
}

fn report(name: &str, template: &template_build::TemplateModel, requests: &[(&str, Request)]) {
    for (label, request) in requests {
        let start = std::time::Instant::now();
        match compile(template, request, &Options::default()) {
            Ok(c) => {
                println!(
                    "{name:20} {label:6} {:>7} states {:>4} classes {:>9} bytes {:>10.1?}",
                    c.machine.table.len(),
                    c.machine.table.classes(),
                    c.machine.table.memory(),
                    start.elapsed()
                );
                if std::env::var_os("SIZES_SEGMENTS").is_some() {
                    for s in &c.machine.graph.segments {
                        println!(
                            "    {:32} {:>7} states {:?}",
                            s.name,
                            s.table.len(),
                            s.marks
                        );
                    }
                }
            }
            Err(e) => println!("{name:20} {label:6} error: {e}"),
        }
    }
}
