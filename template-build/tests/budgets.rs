//! Compile-time budgets on hostile templates (issue 17): each ends quickly in a typed error
//! naming the budget, the field's JSON path and the pattern, or compiles. The reproducers
//! follow the hostile-input campaign's descriptions: 400 fields, a nested counted repetition,
//! a 1 MB literal, a 300 KB pattern, a lone surrogate escape.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use template_build::model::MAX_PATTERN_BYTES;
use template_build::{compile, compile_text, Construct, RegexIssueKind, TemplateErrorKind as Kind};

/// A template with one explicit field `a` holding `field`, and an implicit content field.
fn one_field(field: Value) -> Value {
    json!({"start_anchor": "<s>", "fields": {"a": field, "content": {"content": "text"}}})
}

/// Compiles `template`, which must fail; returns the errors as (path, kind, reason) and the
/// time it took.
fn failure(template: &Value) -> (Vec<(String, Kind, String)>, Duration) {
    let started = Instant::now();
    let errors = compile(template).expect_err("the template must be refused");
    let took = started.elapsed();
    let found = errors
        .into_iter()
        .map(|e| (e.path, e.kind, e.reason))
        .collect();
    (found, took)
}

#[test]
fn nested_counted_repetition_is_refused_naming_the_limit() {
    let template = one_field(json!({"open_pattern": r"(?:\w+\s*){30}x", "close": "</a>"}));
    let (errors, took) = failure(&template);
    assert_eq!(errors.len(), 1, "{errors:?}");
    let (path, kind, reason) = &errors[0];
    assert_eq!(path, "fields.a.open_pattern");
    assert_eq!(*kind, Kind::DfaTooLarge);
    assert!(reason.contains("compile::DFA_SIZE_LIMIT"), "{reason}");
    assert!(reason.contains(r#"(?:\\w+\\s*){30}x"#), "{reason}");
    // It took 3-4 s in a release build before the two-stage size limit.
    assert!(took < Duration::from_secs(3), "{took:?}");
}

#[test]
fn nfa_size_limit_names_the_limit() {
    let template = one_field(json!({"open_pattern": r"\w{5000}", "close": "</a>"}));
    let (errors, _) = failure(&template);
    let (path, kind, reason) = &errors[0];
    assert_eq!(
        (path.as_str(), *kind),
        ("fields.a.open_pattern", Kind::DfaTooLarge)
    );
    assert!(!reason.contains("error building NFA"), "{reason}");
    assert!(
        reason.contains("NFA is larger than the size limit"),
        "{reason}"
    );
    assert!(reason.contains("compile::DFA_SIZE_LIMIT"), "{reason}");
}

#[test]
fn megabyte_literal_is_refused_before_compiling() {
    let literal = "ab".repeat(500_000);
    for (key, value) in [
        ("open", json!(literal)),
        ("open", json!(["<a>", literal])),
        ("open_pattern", json!(literal)),
    ] {
        let template = one_field(json!({key: value, "close": "</a>"}));
        let (errors, took) = failure(&template);
        assert_eq!(errors.len(), 1, "{errors:?}");
        let (path, kind, reason) = &errors[0];
        assert_eq!(path, &format!("fields.a.{key}"));
        assert_eq!(*kind, Kind::PatternTooLong);
        assert!(reason.contains("model::MAX_PATTERN_BYTES"), "{reason}");
        assert!(reason.contains("…\" ("), "{reason}");
        assert!(reason.len() < 600, "{} bytes", reason.len());
        // 2-4 s and 290 MB before (a DFA built until its size limit).
        assert!(took < Duration::from_secs(1), "{took:?}");
    }
    // The start anchor and tag_pattern have the same budget.
    let long = "x".repeat(MAX_PATTERN_BYTES + 1);
    let template = json!({"start_anchor_pattern": long, "fields": {"content": {
        "content": "xml-inline", "content_args": {"tag_pattern": long}}}});
    let (errors, _) = failure(&template);
    let found: Vec<(&str, Kind)> = errors.iter().map(|e| (e.0.as_str(), e.1)).collect();
    assert!(
        found.contains(&("start_anchor_pattern", Kind::PatternTooLong)),
        "{found:?}"
    );
    assert!(
        found.contains(&(
            "fields.content.content_args.tag_pattern",
            Kind::PatternTooLong
        )),
        "{found:?}"
    );
    // At the budget, a literal still compiles.
    let fits = "x".repeat(MAX_PATTERN_BYTES);
    compile(&one_field(json!({"open": fits, "close": "</a>"}))).unwrap();
}

#[test]
fn long_patterns_are_not_quoted_whole() {
    // Under the length budget but refused for another reason: the quote is cut.
    let pattern = format!("(?<=x){}", "a".repeat(MAX_PATTERN_BYTES - 10));
    let (errors, _) = failure(&one_field(
        json!({"open_pattern": pattern, "close": "</a>"}),
    ));
    let reason = &errors[0].2;
    assert!(
        reason.len() < 600,
        "{} bytes: {}",
        reason.len(),
        &reason[..600]
    );
    assert!(reason.contains("…\" ("), "{reason}");
    assert!(reason.contains("compile::DFA_SIZE_LIMIT"), "{reason}");
    // A 300 KB pattern: the length budget, quoted short.
    let pattern = "a".repeat(300_000);
    let (errors, _) = failure(&one_field(
        json!({"open_pattern": pattern, "close": "</a>"}),
    ));
    let reason = &errors[0].2;
    assert!(reason.len() < 600, "{} bytes", reason.len());
    assert!(reason.contains("(300000 bytes)"), "{reason}");
}

#[test]
fn lone_surrogate_escapes_read_as_such() {
    for (escape, half) in [
        (r"\ud800", "high surrogate"),
        (r"\uDBFF x", "high surrogate"),
        (r"\udc00", "low surrogate"),
        (r"\ud800\u0041", "high surrogate"),
    ] {
        let text = format!(
            "{{\"start_anchor\": \"<s>\", \"fields\": {{\"a\": {{\"open\": \"{escape}\", \
             \"close\": \"</a>\"}}, \"content\": {{\"content\": \"text\"}}}}}}"
        );
        let errors = compile_text(&text).unwrap_err();
        let error = &errors.0[0];
        assert_eq!(error.kind, Kind::InvalidJson, "{errors}");
        assert!(
            error.reason.contains("lone surrogate escape"),
            "{escape}: {errors}"
        );
        assert!(error.reason.contains(half), "{escape}: {errors}");
        assert!(!error.reason.contains("hex escape"), "{escape}: {errors}");
        let model = template_build::model::load_str(&text).unwrap_err();
        assert!(
            model.0[0].reason.contains("lone surrogate escape"),
            "{model}"
        );
    }
    // A truncated escape that is no surrogate keeps the JSON parser's words.
    let errors = compile_text(r#"{"start_anchor": "\u12"}"#).unwrap_err();
    assert!(!errors.0[0].reason.contains("surrogate"), "{errors}");
    // In a pattern (valid JSON: the backslash is escaped), the regex translation names it.
    let (errors, _) = failure(&one_field(
        json!({"open_pattern": r"\ud800", "close": "</a>"}),
    ));
    assert_eq!(
        errors[0].1,
        Kind::Regex(RegexIssueKind::Unsupported(Construct::LoneSurrogate)),
        "{errors:?}"
    );
    assert!(errors[0].2.contains("lone surrogate"), "{errors:?}");
}

/// `n` fields whose opens each read a Unicode class in a named group (about 1 MiB of DFA and
/// capture regex each).
fn many_fields(n: usize) -> Value {
    let mut fields = serde_json::Map::new();
    for i in 0..n {
        fields.insert(
            format!("f{i}"),
            json!({"open_pattern": format!(r#"<f{i} name="(?P<name>\w+)">"#),
                   "close": format!("</f{i}>"), "content": "json",
                   "transform": {"name": "{name}"}}),
        );
    }
    fields.insert("content".into(), json!({"content": "text"}));
    json!({"start_anchor": "<s>", "fields": fields})
}

#[test]
fn many_fields_stop_at_the_compile_budget() {
    // 17 s and 440 MB in a release build before.
    let (errors, took) = failure(&many_fields(400));
    assert_eq!(errors.len(), 1, "{errors:?}");
    let (path, kind, reason) = &errors[0];
    assert_eq!(*kind, Kind::CompileBudget);
    assert!(
        path.starts_with("fields.f") && path.ends_with(".open_pattern"),
        "{path}"
    );
    assert!(reason.contains("compile::TEMPLATE_DFA_BUDGET"), "{reason}");
    assert!(reason.contains("name=\\\""), "{reason}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    // The budget stops compiling: 4,000 fields take no longer than 400.
    let started = Instant::now();
    let (errors, _) = failure(&many_fields(4000));
    assert_eq!(errors[0].1, Kind::CompileBudget);
    assert!(started.elapsed() < took * 3 + Duration::from_secs(1));
    // A template with other problems too: the budget applies while its patterns are checked.
    let mut template = many_fields(400);
    template["fields"]["content"]["join"] = json!(5);
    let (errors, _) = failure(&template);
    assert!(
        errors.iter().any(|e| e.1 == Kind::CompileBudget),
        "{errors:?}"
    );
    // Ten such fields fit.
    compile(&many_fields(10)).unwrap();
}
