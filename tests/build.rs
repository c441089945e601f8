//! Compiles, ahead of time, every distinct template of the shared conformance cases and of the
//! word-boundary cases (`data/word-boundary.jsonl`) that loads, with `template_build::Builder`
//! (the build-script front end), so that the tests can check the generated static tables
//! against the same templates compiled at run time.

use std::collections::BTreeMap;
use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let dir = out.join("conformance-templates");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create OUT_DIR/conformance-templates");
    let cases =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/cases/conformance.jsonl");
    println!("cargo:rerun-if-changed={}", cases.display());
    println!("cargo:rerun-if-changed=build.rs");
    // Distinct templates (by canonical JSON text), numbered in first-seen order.
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let text = match std::fs::read_to_string(&cases) {
        Ok(text) => text,
        Err(e) => {
            println!(
                "cargo:warning=cannot read {}: {e}; no conformance template is compiled ahead \
                 of time (the conformance tests need ../shared beside the checkout)",
                cases.display()
            );
            String::new()
        }
    };
    // What the tests compare against: if the cases file changes without this script rerunning
    // (a copy that keeps old dates), they can say so instead of failing obscurely.
    std::fs::write(out.join("conformance-cases.len"), text.len().to_string())
        .expect("write OUT_DIR/conformance-cases.len");
    let word_boundary = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/word-boundary.jsonl");
    println!("cargo:rerun-if-changed={}", word_boundary.display());
    let word_boundary = std::fs::read_to_string(&word_boundary).expect("data/word-boundary.jsonl");
    for line in text
        .lines()
        .chain(word_boundary.lines())
        .filter(|l| !l.trim().is_empty())
    {
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
    template_build::Builder::new()
        .dir(&dir)
        .out_name("conformance_templates.rs")
        .rerun_if_changed(false)
        .run();
}
