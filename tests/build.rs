//! Compiles, ahead of time, every distinct template of the case files that loads (the shared
//! conformance cases, those of transformers 5.24, this crate's 5.24 cases and its word-boundary
//! cases), with `template_build::Builder` (the build-script front end), so that the tests can
//! check the generated static tables against the same templates compiled at run time.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// The case files whose templates are compiled, relative to this crate. Also read by
/// `tests/integration/statics.rs`.
const CASE_FILES: [&str; 4] = [
    "../../shared/cases/conformance.jsonl",
    "../../shared/cases/conformance-5.24.jsonl",
    "data/reference-5.24.jsonl",
    "data/word-boundary.jsonl",
];

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let dir = out.join("conformance-templates");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create OUT_DIR/conformance-templates");
    println!("cargo:rerun-if-changed=build.rs");
    // Distinct templates (by canonical JSON text), numbered in first-seen order.
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    // What the tests compare against (one line per file: its length): if a cases file changes
    // without this script rerunning (a copy that keeps old dates), they can say so instead of
    // failing obscurely.
    let mut lengths = String::new();
    for file in CASE_FILES {
        let cases = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(file);
        println!("cargo:rerun-if-changed={}", cases.display());
        let text = match std::fs::read_to_string(&cases) {
            Ok(text) => text,
            Err(e) => {
                println!(
                    "cargo:warning=cannot read {}: {e}; its templates are not compiled ahead \
                     of time (the conformance tests need ../shared beside the checkout)",
                    cases.display()
                );
                String::new()
            }
        };
        lengths.push_str(&format!("{}\n", text.len()));
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let Ok(case) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            let Some(template) = case.get("template") else {
                continue;
            };
            if template_build::compile(template).is_err() {
                continue;
            }
            let key = serde_json::to_string(template).expect("serialize");
            let n = seen.len();
            if let std::collections::btree_map::Entry::Vacant(e) = seen.entry(key.clone()) {
                e.insert(n);
                std::fs::write(dir.join(format!("t{n}.json")), key).expect("write template");
            }
        }
    }
    std::fs::write(out.join("conformance-cases.len"), lengths)
        .expect("write OUT_DIR/conformance-cases.len");
    template_build::Builder::new()
        .dir(&dir)
        .out_name("conformance_templates.rs")
        .rerun_if_changed(false)
        .run();
}
