//! The official JSON-Schema-Test-Suite (draft 2020-12, the files in `../shared/jsts/`, see its
//! README): every test whose schema the subset admits must get the suite's verdict, and every
//! schema using an unsupported keyword must be rejected when compiled, with an error naming
//! that keyword. Prints the counts.

use std::path::{Path, PathBuf};

use serde_json::Value;
use structured_outputs::{compile, Strictness};

/// Files of keywords outside the subset: the file name is the keyword.
const UNSUPPORTED: &[&str] = &[
    "allOf",
    "oneOf",
    "not",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "uniqueItems",
    "prefixItems",
];

fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/jsts")
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
}

/// Whether `keyword` appears as a key anywhere in `v`.
fn uses(v: &Value, keyword: &str) -> bool {
    match v {
        Value::Object(map) => map.iter().any(|(k, x)| k == keyword || uses(x, keyword)),
        Value::Array(items) => items.iter().any(|x| uses(x, keyword)),
        _ => false,
    }
}

#[test]
fn json_schema_test_suite() {
    let mut paths = Vec::new();
    files(&suite_dir(), &mut paths);
    paths.sort();
    assert!(
        paths.len() >= 20,
        "the suite is missing: {} files under {}",
        paths.len(),
        suite_dir().display()
    );
    let (mut passed, mut failed, mut rejected_groups, mut rejected_tests) = (0, 0, 0, 0);
    let mut wrong = Vec::new();
    for path in &paths {
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let text = std::fs::read_to_string(path).expect("suite file");
        let groups: Vec<Value> = serde_json::from_str(&text).expect("suite JSON");
        for group in &groups {
            let description = group["description"].as_str().unwrap_or("");
            let tests = group["tests"].as_array().cloned().unwrap_or_default();
            match compile(&group["schema"], Strictness::Strict) {
                Ok(schema) => {
                    if UNSUPPORTED.contains(&stem) && uses(&group["schema"], stem) {
                        wrong.push(format!(
                            "{stem}: {description}: admitted a schema using {stem}"
                        ));
                    }
                    for test in &tests {
                        let want = test["valid"].as_bool().expect("valid");
                        if schema.is_valid(&test["data"]) == want {
                            passed += 1;
                        } else {
                            failed += 1;
                            wrong.push(format!(
                                "{stem}: {description}: {}: expected valid={want}",
                                test["description"].as_str().unwrap_or("")
                            ));
                        }
                    }
                }
                Err(errors) => {
                    if std::env::var("JSTS_VERBOSE").is_ok() && !UNSUPPORTED.contains(&stem) {
                        println!("rejected {stem}: {description}: {errors}");
                    }
                    rejected_groups += 1;
                    rejected_tests += tests.len();
                    if UNSUPPORTED.contains(&stem)
                        && uses(&group["schema"], stem)
                        && !errors.0.iter().any(|e| e.keyword == stem)
                    {
                        wrong.push(format!(
                            "{stem}: {description}: rejected without naming {stem}: {errors}"
                        ));
                    }
                }
            }
        }
    }
    println!(
        "JSON-Schema-Test-Suite: {passed} passed, {failed} failed, {rejected_tests} tests in \
         {rejected_groups} groups rejected as unsupported"
    );
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    assert!(passed >= 200, "{passed} tests inside the subset");
}
