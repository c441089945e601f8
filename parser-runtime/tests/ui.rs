//! UI tests (trybuild) for `response_template!` and the generated-code version guard.
//!
//! `tests/ui/*.rs` must fail to compile, with exactly the diagnostics checked in next to
//! them (`*.stderr`). Each case uses its own template in `tests/ui/templates/`:
//!
//! * `missing_file`: the template file does not exist (`cannot read`);
//! * `invalid_json`: a trailing comma (a JSON syntax error with its line:column);
//! * `unclosed_brace`: the file ends inside an object (the position is the end of the file);
//! * `unknown_key`: an unknown key in a field;
//! * `open_and_open_pattern`: a field with both `open` and `open_pattern`;
//! * `invalid_regex`: an unbalanced parenthesis in `close_pattern`;
//! * `named_group_without_transform`: a named group in `open_pattern` of a field with no
//!   `transform`;
//! * `several_errors`: several problems in one template, all reported (not only the first);
//! * `version_guard`: `__private::require_format` with a version other than
//!   `FORMAT_VERSION` fails const evaluation (this expected output is rustc's const-eval
//!   diagnostic, so it is the one most likely to change with the toolchain);
//! * `missing_eq`: a malformed invocation (`pub Name "path"`, no `=`);
//! * `expression_*`: the expression form `response_template!("path")` in a `let`, a `static`
//!   and a method chain, with an invalid regex, several errors (all reported, and no type
//!   error after them), a missing file (its path shown with `..` resolved), and a path that is
//!   not a plain non-empty string literal (a number, a byte string, a suffix, `concat!`, `""`).
//!
//! Template errors are reported at the string literal, each as
//! `response template: <path as written>:<line>:<col>: <json path>: <reason>`, so the
//! expected output holds no machine-specific path.
//!
//! `tests/ui/pass/*.rs` must compile and run: a real template (`templates/smollm3.json` of
//! the workspace) parsed through the generated item, and through the expression form (inline,
//! in a `static`, from a `tokenizer_config.json`, and the no-heap router) on a vendored fixture
//! whose expected message is checked against the reference.
//!
//! After a deliberate change of a message, regenerate the expected output with
//! `TRYBUILD=overwrite cargo test -p parser-runtime --test ui`, then read the diff of the
//! `.stderr` files before committing it.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
