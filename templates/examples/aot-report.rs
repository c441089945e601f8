//! Measures the ahead-of-time path for every vendored template and prints a Markdown table:
//!
//! * **expand**: what `response_template!` does at build time (read and validate the JSON,
//!   compile every delimiter to DFAs, generate the code and print it to text), median of the
//!   runs, in milliseconds; built in release, like the proc macro under
//!   `[profile.*.build-override] opt-level = 3`;
//! * **run-time compile**: `template_build::load_file` alone, for comparison;
//! * **DFA bytes**: serialized DFAs embedded in the binary (one byte order);
//! * **code**: the size of the generated source;
//! * **first use**: building the runtime tables from the embedded ones
//!   (`StaticTemplate::build`: `dense::DFA::from_bytes` with validation, plus the capture,
//!   start-anchor and tag-pattern regexes), median, in microseconds.
//!
//! ```text
//! cargo run --release -p templates --example aot-report [-- RUNS]
//! ```

use std::path::PathBuf;
use std::time::{Duration, Instant};

use proc_macro2::{Ident, Span};
use quote::quote;
use template_build::codegen::{self, Form, Item};

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> Duration {
    median(
        (0..runs)
            .map(|_| {
                let start = Instant::now();
                std::hint::black_box(f());
                start.elapsed()
            })
            .collect(),
    )
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(21)
        .max(1);
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    println!("median of {runs} runs\n");
    println!("| template | expand (ms) | run-time compile (ms) | DFAs | DFA bytes | code (KiB) | first use (us) |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (name, lazy) in templates::TEMPLATES {
        let path = dir.join(format!("{name}.json"));
        let ident = Ident::new(&codegen::item_name(name), Span::call_site());
        let expand = || {
            let template = template_build::load_file(&path).expect("vendored template compiles");
            let item = Item {
                form: Form::Item {
                    vis: quote!(pub),
                    ident: ident.clone(),
                },
                source_file: &path,
                display_file: name,
                track: true,
                // As the macro expands it: both byte orders.
                endian: None,
            };
            codegen::generate(&item, &template).to_string()
        };
        let code_len = expand().len();
        let t_expand = time(runs, expand);
        let t_compile = time(runs, || template_build::load_file(&path).expect("compiles"));
        let tables = lazy().tables();
        let mut dfas = 0;
        let mut bytes = 0;
        for field in tables.template.fields {
            for d in [&field.open, &field.close].into_iter().flatten() {
                for b in d.branches {
                    dfas += 1;
                    bytes += b.dfa.bytes.len();
                    if let Some(la) = &b.lookahead {
                        dfas += 1;
                        bytes += la.dfa.bytes.len();
                    }
                }
            }
        }
        let t_first = time(runs, || tables.build().expect("embedded tables load"));
        println!(
            "| {name} | {:.2} | {:.2} | {dfas} | {bytes} | {:.0} | {:.0} |",
            t_expand.as_secs_f64() * 1e3,
            t_compile.as_secs_f64() * 1e3,
            code_len as f64 / 1024.0,
            t_first.as_secs_f64() * 1e6,
        );
    }
}
