//! Untrusted output and templates: bounded memory and time.

use parser_runtime::{ParseError, ResponseParser};
use serde_json::json;

/// An open delimiter that can run on over any text without `<`.
fn run_on_template() -> parser_runtime::CompiledTemplate {
    template_build::compile(&json!({
        "start_anchor": "S",
        "fields": {
            "content": {"open_pattern": "(?:<\\|m\\|>)?[^<]*<\\|text\\|>", "close": "<|end|>"},
            "rest": {}
        }
    }))
    .unwrap()
}

/// A delimiter that can run on (`[^<]*`) holds text; past the hold limit feeding fails with a
/// typed error instead of growing without bound.
#[test]
fn hold_limit_is_a_typed_error() {
    let t = run_on_template();
    let mut p = ResponseParser::new(&t, "").unwrap();
    p.set_hold_limit(1000);
    let chunk = "no delimiter here ".repeat(10);
    let mut error = None;
    for _ in 0..20 {
        if let Err(e) = p.feed(&chunk) {
            error = Some(e);
            break;
        }
    }
    match error {
        Some(ParseError::HoldOverflow {
            offset,
            held,
            limit,
        }) => {
            assert_eq!(offset, 0);
            assert!(held > 1000);
            assert_eq!(limit, 1000);
        }
        other => panic!("expected HoldOverflow, got {other:?}"),
    }
}

/// Under the limit the same text is held and then released to the implicit field.
#[test]
fn held_text_is_released_when_the_delimiter_fails() {
    let t = run_on_template();
    let mut p = ResponseParser::new(&t, "").unwrap();
    let first = p.feed("plain words").unwrap();
    assert!(
        first.is_empty(),
        "text that may still become the open delimiter is held: {first:?}"
    );
    p.feed(" <b>").unwrap();
    let (m, _) = p.finalize().unwrap();
    assert_eq!(m["rest"], "plain words <b>");
}

/// A hostile template whose DFA would explode fails to compile with an error, quickly.
#[test]
fn exploding_pattern_is_a_template_error() {
    let err = template_build::compile(&json!({
        "start_anchor": "S",
        "fields": {"x": {"open_pattern": "(a|b)*a(a|b){40}", "close": "</x>"}}
    }))
    .unwrap_err();
    assert_eq!(err.0[0].path, "fields.x.open_pattern");
    assert_eq!(
        err.0[0].kind,
        template_build::TemplateErrorKind::DfaTooLarge
    );
}
