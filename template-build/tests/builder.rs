//! The build-script front end: every bad file is reported (file, line:column, JSON path,
//! reason) and nothing is generated; good templates give deterministic code.

use std::path::PathBuf;

use template_build::builder::BuildError;
use template_build::{Builder, TemplateErrorKind};

/// A fresh directory under the target's temporary directory.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("template-build-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const GOOD: &str = r#"{
  "start_anchor": "<|im_start|>assistant\n",
  "fields": {
    "content": {"content": "text"}
  }
}"#;

#[test]
fn every_bad_file_is_listed_with_position_and_reason() {
    let dir = scratch("bad");
    std::fs::write(dir.join("a-good.json"), GOOD).unwrap();
    std::fs::write(
        dir.join("b-unknown-key.json"),
        "{\n  \"start_anchor\": \"x\",\n  \"fields\": {\n    \"content\": {\"content\": \"text\", \"colour\": 1}\n  }\n}",
    )
    .unwrap();
    std::fs::write(dir.join("c-not-json.json"), "{\n  \"fields\": [\n").unwrap();
    std::fs::write(dir.join("ignored.txt"), "not a template").unwrap();
    let err = Builder::new().dir(&dir).generate().unwrap_err();
    let BuildError::Templates(errors) = &err else {
        panic!("expected template errors, got {err}");
    };
    let text = err.to_string();
    assert_eq!(errors.len(), 2, "{text}");
    let unknown = &errors.0[0];
    assert!(
        unknown
            .file
            .as_deref()
            .unwrap()
            .ends_with("b-unknown-key.json"),
        "{text}"
    );
    assert_eq!(unknown.path, "fields.content.colour");
    assert_eq!(unknown.kind, TemplateErrorKind::UnknownKey, "{text}");
    assert_eq!(unknown.line_col, Some((4, 36)), "{text}");
    let broken = &errors.0[1];
    assert!(
        broken.file.as_deref().unwrap().ends_with("c-not-json.json"),
        "{text}"
    );
    assert_eq!(broken.kind, TemplateErrorKind::InvalidJson, "{text}");
    assert_eq!(broken.line_col.map(|(line, _)| line), Some(3), "{text}");
    // Display: one `file:line:col: path: reason` line per problem.
    assert!(
        text.lines()
            .next()
            .unwrap()
            .contains("b-unknown-key.json:4:36: fields.content.colour: "),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn generated_code_is_deterministic_and_indexed() {
    let dir = scratch("good");
    std::fs::write(dir.join("qwen3-coder.json"), GOOD).unwrap();
    std::fs::write(dir.join("glm-4.5.json"), GOOD).unwrap();
    let first = Builder::new().dir(&dir).generate().unwrap();
    let second = Builder::new().dir(&dir).generate().unwrap();
    assert_eq!(first, second);
    for needle in [
        "enum Qwen3Coder",
        "enum Glm4_5",
        "require_format",
        "(\"glm-4.5\" , Glm4_5 :: lazy)",
    ] {
        assert!(first.contains(needle), "missing {needle:?}");
    }
    // Two files that map to one item name are refused.
    std::fs::write(dir.join("qwen3_coder.json"), GOOD).unwrap();
    let err = Builder::new().dir(&dir).generate().unwrap_err();
    let BuildError::Templates(errors) = &err else {
        panic!("expected template errors, got {err}");
    };
    let found: Vec<_> = errors
        .iter()
        .map(|e| (e.kind, e.path.as_str(), e.file.as_deref()))
        .collect();
    let file = dir.join("qwen3_coder.json").display().to_string();
    assert_eq!(
        found,
        [(
            TemplateErrorKind::DuplicateItemName,
            "",
            Some(file.as_str())
        )],
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn missing_directory_is_an_io_error_naming_it() {
    let err = Builder::new()
        .dir("/nonexistent/templates")
        .generate()
        .unwrap_err();
    assert!(matches!(err, BuildError::Io { .. }));
    assert!(
        err.to_string().starts_with("/nonexistent/templates: "),
        "{err}"
    );
}
