//! The position construction behind `Table::from_hir` gives the same languages as
//! regex-automata's Thompson NFA and dense determinizer: on the benchmark's 220 tool schemas,
//! on fixed patterns with every HIR shape, and on random patterns.

use constrain::dfa::{Limits, Table};
use constrain::json::{JsonOptions, SchemaLanguage};
use proptest::prelude::*;
use regex_syntax::hir::Hir;
use serde_json::Value;

fn both(hir: &Hir) -> (Table, Table) {
    let limits = Limits::default();
    (
        Table::from_hir(hir, &limits).unwrap(),
        Table::from_hir_by_regex_automata(hir, &limits).unwrap(),
    )
}

fn parse(pattern: &str) -> Hir {
    // Byte classes beyond ASCII too (`(?-u:...)`).
    regex_syntax::ParserBuilder::new()
        .utf8(false)
        .build()
        .parse(pattern)
        .unwrap()
}

#[test]
fn tool_schemas_have_the_same_language() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../bench-constrain/schemas/tools.json"
    );
    let tools: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(tools.len() >= 200);
    let mut compiled = 0;
    for tool in &tools {
        let name = tool["name"].as_str().unwrap_or("?");
        for options in [
            JsonOptions::default(),
            JsonOptions {
                whitespace: 1,
                ..JsonOptions::default()
            },
        ] {
            let Ok(hir) = SchemaLanguage::new(&tool["parameters"], options).compile() else {
                continue;
            };
            let (ours, theirs) = both(&hir);
            assert!(ours.same_language(&theirs), "{name} {options:?}");
            compiled += 1;
        }
    }
    assert!(compiled >= 400, "{compiled}");
}

#[test]
fn fixed_patterns_have_the_same_language() {
    for pattern in [
        "",
        "a",
        "abc|abd|ab",
        "(?:ab)*c",
        "a{3}",
        "a{2,5}b",
        "(?:a|bc){1,}d?",
        "(?:x*)*y",
        "(?:a?){0,4}",
        "[a-z]+ [0-9]",
        r#""(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*""#,
        r"\p{Greek}+|é€😀",
        r"(?s:.)*",
        r"[^a]",
        r"-?(?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,15})?(?:[eE][+-]?[0-9]{1,2})?",
        r"[\x00-\x{10FFFF}]{2}",
        r"(?-u:[\x80-\xff])+",
        r"[a&&b]x|y",
    ] {
        let (ours, theirs) = both(&parse(pattern));
        assert!(ours.same_language(&theirs), "{pattern:?}");
    }
    // Look-around takes regex-automata's route and still works.
    let t = Table::from_hir(&parse(r"^a(?-u:\b)$"), &Limits::default()).unwrap();
    assert!(t.matches(b"a") && !t.matches(b"ab"));
}

#[test]
fn limits_are_errors() {
    let small = Limits {
        max_states: 50,
        ..Limits::default()
    };
    assert!(Table::from_hir(&parse("[a-z]{100}"), &small).is_err());
    let tiny = Limits {
        max_automaton_bytes: 400,
        ..Limits::default()
    };
    assert!(Table::from_hir(&parse("(?:abcdefgh){100}"), &tiny).is_err());
}

/// Patterns past the position construction's budgets go to regex-automata instead of
/// failing, taking minutes or gigabytes (cold review findings).
#[test]
fn patterns_past_the_budgets_still_build() {
    use constrain::template::{compile_schema, Options};
    use serde_json::json;
    let started = std::time::Instant::now();
    // A repeated Unicode class links each of its UTF-8 sequences to every other.
    let words = json!({"type": "object", "properties": {"name": {"type": "string",
        "pattern": "(?:\\p{L}+ ?){1,40}"}}, "required": ["name"]});
    let c = compile_schema(Some(&words), &Options::default()).unwrap();
    assert!(c
        .machine
        .table
        .matches("{\"name\":\"Ünïcode words\"}".as_bytes()));
    // A repeated part that matches the empty text: quadratic follow entries, cubic work.
    let (ours, theirs) = both(&parse("x(?:[ab]?){3000}"));
    assert!(ours.same_language(&theirs));
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    // Nested counts past every budget: an error, within regex-automata's memory limit.
    assert!(Table::from_hir(&parse("(?:(?:a{1000}){1000}){15}"), &Limits::default()).is_err());
    // A counted Unicode class past the budgets: an error within a second or so, not minutes
    // of determinization (second cold review).
    let t = std::time::Instant::now();
    assert!(Table::from_hir(&parse(r"\p{L}{1,300}"), &Limits::default()).is_err());
    assert!(t.elapsed() < std::time::Duration::from_secs(20));
    assert!(started.elapsed() < std::time::Duration::from_secs(90));
}

/// Random patterns over a few ASCII and multi-byte characters.
fn pattern() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("a".to_string()),
        Just("b".to_string()),
        Just("é".to_string()),
        Just("😀".to_string()),
        Just("[a-c]".to_string()),
        Just("[^b]".to_string()),
        Just("[é-ë]".to_string()),
        Just("".to_string()),
    ];
    leaf.prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 2..4).prop_map(|v| v.concat()),
            prop::collection::vec(inner.clone(), 2..4).prop_map(|v| format!("(?:{})", v.join("|"))),
            inner.clone().prop_map(|p| format!("(?:{p})*")),
            inner.clone().prop_map(|p| format!("(?:{p})+")),
            inner.clone().prop_map(|p| format!("(?:{p})?")),
            (inner, 0u32..3, 0u32..3).prop_map(|(p, a, b)| format!("(?:{p}){{{a},{}}}", a + b)),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn random_patterns_have_the_same_language(p in pattern()) {
        let (ours, theirs) = both(&parse(&p));
        prop_assert!(ours.same_language(&theirs), "{:?}", p);
    }
}
