//! The JSON-Schema-Test-Suite (`../shared/jsts-full/tests/{draft2020-12,draft7,draft4}`, the
//! optional tests included) against general mode's languages: for every group whose schema
//! compiles ([`compile_schema`] in [`SchemaMode::General`]), every test's instance, written
//! compact by serde_json (members in the instance's own order), must be in the language (the
//! table walked byte by byte ends accepting) exactly when the suite says it is valid.
//!
//! Wrong verdicts fail the test unless [`RELAXATIONS`] lists them (the documented
//! relaxations, each with its reason). Prints, per draft, the groups compiled, the groups
//! with every verdict right, the refusals by keyword, and compile times.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use constrain::dfa::{Table, DEAD, START};
use constrain::json::{Draft, JsonOptions, SchemaMode};
use constrain::template::{compile_schema, Options};
use rand::{rngs::SmallRng, Rng, SeedableRng};
use serde_json::Value;

/// Where a wrong verdict is allowed, and why.
enum Relaxation {
    /// `uniqueItems` is not enforced: an invalid instance with repeated items is accepted.
    UniqueItems,
    /// Asserted formats are generated as subsets of their RFC grammars (module
    /// `constrain::formats`): valid instances outside the subset are refused.
    FormatSubset,
    /// General mode asserts the formats it knows; draft 2020-12's `format.json` tests
    /// format as an annotation (its default), with strings that break the format.
    FormatAssertion,
    /// A valid instance is refused, but the same instance with its object members in
    /// another order is accepted: the property order rules (llguidance's).
    PropertyOrder,
    /// A valid instance nested deeper than [`JsonOptions::any_depth`] levels is refused:
    /// untyped values are generated to that depth.
    UntypedDepth,
    /// `contentMediaType`/`contentEncoding`/`contentSchema` are annotations (draft 7's
    /// optional tests assert them).
    ContentAnnotation,
    /// A valid instance holding a number outside the written forms (more than 15
    /// significant digits, 17 where nothing compares them; an exponent outside -307..308) is
    /// refused.
    NumberForm,
    /// One test, by draft, file (relative to the draft's folder), group and test
    /// description.
    Test(&'static str, &'static str, &'static str, &'static str),
}

/// The documented relaxations, each with its reason.
const RELAXATIONS: &[(Relaxation, &str)] = &[
    (
        Relaxation::UniqueItems,
        "uniqueItems is not enforced (general mode's documented relaxation)",
    ),
    (
        Relaxation::FormatSubset,
        "formats are generated as subsets of their grammars (no leap seconds, no quoted \
         e-mail local parts, no IDNA labels, hostnames of at most 3 labels of 63 or 8 of 30 \
         characters, ...)",
    ),
    (
        Relaxation::FormatAssertion,
        "known formats are asserted (a generation choice); draft 2020-12 makes format an \
         annotation by default",
    ),
    (
        Relaxation::PropertyOrder,
        "object members follow llguidance's order: declared properties in order of first \
         appearance, then required ones not declared, then undeclared keys",
    ),
    (
        Relaxation::UntypedDepth,
        "untyped values are nested at most JsonOptions::any_depth (5) levels",
    ),
    (
        Relaxation::Test(
            "draft4",
            "optional/float-overflow.json",
            "all integers are multiples of 0.5, if overflow is handled",
            "valid if optional overflow handling is implemented",
        ),
        "draft 4: scientific forms of integer values are not written (draft 4 readers class \
         them differently)",
    ),
    (
        Relaxation::NumberForm,
        "numbers are written with at most 15 significant digits and exponents from -307 to \
         308 (what doubles read exactly; 17 digits and exponents from -324 where nothing or \
         only inclusive bounds compare them); serde_json writes integers past u64 that way",
    ),
    (
        Relaxation::ContentAnnotation,
        "content keywords are annotations (2019-09 on); draft 7's optional tests assert them",
    ),
];

/// Whether a number in `v` has a text outside general mode's written forms.
fn unwritten_number(v: &Value) -> bool {
    match v {
        Value::Number(n) => {
            let text = n.to_string();
            let text = text.trim_start_matches('-');
            if !text.contains(['.', 'e', 'E']) {
                return false;
            }
            let (mantissa, exp) = text.split_once(['e', 'E']).unwrap_or((text, "0"));
            let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
            let significant = digits.trim_start_matches('0').len();
            let exp: i64 = exp.parse().unwrap_or(0);
            significant > 15 || !(-307..=308).contains(&exp)
        }
        Value::Array(items) => items.iter().any(unwritten_number),
        Value::Object(m) => m.values().any(unwritten_number),
        _ => false,
    }
}

/// Levels of containers in a value.
fn depth(v: &Value) -> usize {
    match v {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(m) => 1 + m.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// The value with its object members in every order (each object's permutations combined),
/// at most `cap` of them.
fn reorderings(v: &Value, cap: usize) -> Vec<Value> {
    match v {
        Value::Array(items) => {
            let mut out = vec![Vec::new()];
            for item in items {
                let options = reorderings(item, cap);
                let mut next = Vec::new();
                for prefix in &out {
                    for o in &options {
                        if next.len() < cap {
                            let mut p: Vec<Value> = prefix.clone();
                            p.push(o.clone());
                            next.push(p);
                        }
                    }
                }
                out = next;
            }
            out.into_iter().map(Value::Array).collect()
        }
        Value::Object(m) => {
            let entries: Vec<(&String, &Value)> = m.iter().collect();
            let mut orders: Vec<Vec<usize>> = vec![Vec::new()];
            for _ in 0..entries.len() {
                let mut next = Vec::new();
                for o in &orders {
                    for i in 0..entries.len() {
                        if !o.contains(&i) && next.len() < cap {
                            let mut o = o.clone();
                            o.push(i);
                            next.push(o);
                        }
                    }
                }
                orders = next;
            }
            let mut out = Vec::new();
            for order in orders {
                let mut partial: Vec<serde_json::Map<String, Value>> = vec![serde_json::Map::new()];
                for &i in &order {
                    let (k, item) = entries[i];
                    let options = reorderings(item, cap);
                    let mut next = Vec::new();
                    for p in &partial {
                        for o in &options {
                            if next.len() < cap {
                                let mut p = p.clone();
                                p.insert(k.clone(), o.clone());
                                next.push(p);
                            }
                        }
                    }
                    partial = next;
                }
                out.extend(partial.into_iter().map(Value::Object));
                if out.len() >= cap {
                    break;
                }
            }
            out
        }
        other => vec![other.clone()],
    }
}

/// `../shared` beside the checkout (`JSTS_DIR` overrides; a git worktree one level deeper
/// finds it one level up).
fn suite() -> PathBuf {
    if let Ok(dir) = std::env::var("JSTS_DIR") {
        return PathBuf::from(dir);
    }
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    ["../../shared", "../../../shared"]
        .iter()
        .map(|up| here.join(up).join("jsts-full/tests"))
        .find(|p| p.is_dir())
        .unwrap_or_else(|| here.join("../../shared/jsts-full/tests"))
}

/// The drafts checked: the suite's folder and the draft general mode reads it with.
const DRAFTS: [(&str, Draft); 3] = [
    ("draft2020-12", Draft::Draft2020),
    ("draft7", Draft::Draft7),
    ("draft4", Draft::Draft4),
];

/// Every group of one draft's folder (optional tests included), with its file's path
/// relative to the folder, in path order.
fn draft_groups(dir: &str) -> Vec<(String, Value)> {
    let root = suite().join(dir);
    let mut pending = vec![root.clone()];
    let mut paths = Vec::new();
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                pending.push(p);
            } else if p.extension().is_some_and(|x| x == "json") {
                paths.push(p);
            }
        }
    }
    paths.sort();
    assert!(
        paths.len() >= 30,
        "the suite is missing under {}",
        root.display()
    );
    let mut out = Vec::new();
    for path in paths {
        let file = path
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let groups: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        out.extend(groups.into_iter().map(|g| (file.clone(), g)));
    }
    out
}

/// General mode reading `draft`, open objects.
fn general(draft: Draft) -> Options {
    Options {
        json: JsonOptions {
            mode: SchemaMode::General {
                closed: false,
                draft,
            },
            ..JsonOptions::default()
        },
        ..Options::default()
    }
}

/// Whether `keyword` is a key anywhere in `v` with the value `value`.
fn uses(v: &Value, keyword: &str, value: &Value) -> bool {
    match v {
        Value::Object(map) => map
            .iter()
            .any(|(k, x)| (k == keyword && x == value) || uses(x, keyword, value)),
        Value::Array(items) => items.iter().any(|x| uses(x, keyword, value)),
        _ => false,
    }
}

/// The keyword a compile error names: the last token of its pointer, or the budget.
fn refusal_keyword(e: &constrain::template::ConstrainError) -> String {
    if let Some(b) = e.budget {
        return format!("budget {b}");
    }
    let pointer = e.at.strip_prefix("schema").unwrap_or(&e.at);
    match pointer.rsplit('/').next() {
        Some(k) if !pointer.is_empty() => k.replace("~1", "/").replace("~0", "~"),
        _ => format!("(root) {}", e.reason.chars().take(60).collect::<String>()),
    }
}

/// Formats general mode asserts (the others are annotations: their format tests are not
/// judged).
fn asserted_format(name: &str) -> bool {
    constrain::formats::string_format(name).is_some()
        || constrain::formats::integer_format(name).is_some()
}

#[derive(Default)]
struct Counts {
    groups: usize,
    compiled: usize,
    all_right: usize,
    tests: usize,
    right: usize,
    relaxed: usize,
    not_judged: usize,
    refused: BTreeMap<String, usize>,
    times: Vec<Duration>,
}

#[test]
fn json_schema_test_suite_general_mode() {
    let mut failures = Vec::new();
    let mut relaxed_by: BTreeMap<usize, usize> = BTreeMap::new();
    let mut all_times = Vec::new();
    for (dir, draft) in DRAFTS {
        let options = general(draft);
        let mut c = Counts::default();
        for (file, group) in &draft_groups(dir) {
            let file = file.as_str();
            let format_file = file.starts_with("optional/format/");
            let format_name = file
                .rsplit('/')
                .next()
                .and_then(|f| f.strip_suffix(".json"))
                .unwrap_or("");
            c.groups += 1;
            let gdesc = group["description"].as_str().unwrap_or("");
            let tests = group["tests"].as_array().cloned().unwrap_or_default();
            let started = Instant::now();
            let compiled = compile_schema(Some(&group["schema"]), &options);
            let took = started.elapsed();
            // A schema that admits no value compiles to the empty language, which the
            // engine reports as an error.
            let empty = matches!(&compiled, Err(e) if e.at == "schema" && e.reason == "the schema admits no value");
            let constraint = match compiled {
                Ok(k) => Some(k),
                Err(_) if empty => None,
                Err(e) => {
                    if std::env::var("JSTS_VERBOSE").is_ok() {
                        println!("REFUSED {dir}/{file}: {gdesc}: {e}");
                    }
                    *c.refused.entry(refusal_keyword(&e)).or_default() += 1;
                    continue;
                }
            };
            c.compiled += 1;
            if std::env::var("JSTS_VERBOSE").is_ok() && took > Duration::from_millis(100) {
                println!("SLOW {took:.2?} {dir}/{file}: {gdesc}");
            }
            c.times.push(took);
            all_times.push(took);
            if format_file && !asserted_format(format_name) {
                c.not_judged += tests.len();
                c.all_right += 1;
                continue;
            }
            let unique = uses(&group["schema"], "uniqueItems", &Value::Bool(true));
            let content = ["contentMediaType", "contentEncoding", "contentSchema"]
                .iter()
                .any(|k| group["schema"].get(k).is_some());
            let mut group_right = true;
            for test in &tests {
                c.tests += 1;
                let tdesc = test["description"].as_str().unwrap_or("");
                let valid = test["valid"].as_bool().unwrap();
                let text = serde_json::to_string(&test["data"]).unwrap();
                let accepted = constraint
                    .as_ref()
                    .is_some_and(|k| k.machine.table.matches(text.as_bytes()));
                if accepted == valid {
                    c.right += 1;
                    continue;
                }
                group_right = false;
                let allowed = RELAXATIONS.iter().position(|(r, _)| match r {
                    Relaxation::UniqueItems => unique && accepted,
                    Relaxation::FormatSubset => format_file && !accepted,
                    Relaxation::FormatAssertion => {
                        dir == "draft2020-12" && file == "format.json" && !accepted
                    }
                    Relaxation::PropertyOrder => {
                        !accepted
                            && constraint.as_ref().is_some_and(|k| {
                                reorderings(&test["data"], 5000).iter().any(|r| {
                                    let t = serde_json::to_string(r).unwrap();
                                    k.machine.table.matches(t.as_bytes())
                                })
                            })
                    }
                    Relaxation::UntypedDepth => {
                        !accepted && depth(&test["data"]) > JsonOptions::default().any_depth
                    }
                    Relaxation::ContentAnnotation => content && accepted,
                    Relaxation::NumberForm => !accepted && unwritten_number(&test["data"]),
                    Relaxation::Test(d, f, g, t) => {
                        *d == dir && *f == file && *g == gdesc && *t == tdesc
                    }
                });
                match allowed {
                    Some(i) => {
                        if std::env::var("JSTS_VERBOSE").is_ok() {
                            println!("RELAXED {i} {dir}/{file}: {gdesc}: {tdesc}: {text}");
                        }
                        c.relaxed += 1;
                        *relaxed_by.entry(i).or_default() += 1;
                    }
                    None => failures.push(format!(
                        "{dir}/{file}: {gdesc}: {tdesc}: {} {text} ({})",
                        if valid {
                            "refused valid"
                        } else {
                            "accepted invalid"
                        },
                        group["schema"]
                    )),
                }
            }
            if group_right {
                c.all_right += 1;
            }
        }
        c.times.sort();
        let pct = |q: f64| {
            c.times
                .get(((c.times.len() as f64 - 1.0) * q).round() as usize)
                .copied()
                .unwrap_or_default()
        };
        println!(
            "{dir}: {} groups, {} compiled, {} with every verdict right; {} tests judged, {} \
             right, {} relaxed, {} not judged (annotation formats); compile p50 {:.2?} p99 \
             {:.2?} max {:.2?}",
            c.groups,
            c.compiled,
            c.all_right,
            c.tests,
            c.right,
            c.relaxed,
            c.not_judged,
            pct(0.5),
            pct(0.99),
            c.times.last().copied().unwrap_or_default()
        );
        let mut refused: Vec<_> = c.refused.iter().collect();
        refused.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        println!(
            "  refused {}: {}",
            c.groups - c.compiled,
            refused
                .iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    for (i, n) in &relaxed_by {
        println!("relaxed {n}: {}", RELAXATIONS[*i].1);
    }
    for f in &failures {
        println!("WRONG {f}");
    }
    assert!(failures.is_empty(), "{} wrong verdicts", failures.len());
}

/// A random word of `table` (bytes chosen among the live transitions, heading for the
/// nearest end after `soft` bytes); `None` if the walk could not finish.
fn random_word(
    table: &Table,
    distances: &[u32],
    rng: &mut SmallRng,
    soft: usize,
) -> Option<Vec<u8>> {
    let columns = table.columns_in(0, 255);
    let mut state = START;
    let mut out = Vec::new();
    for step in 0..soft * 8 {
        if table.is_accepting(state) && (rng.random_bool(0.15) || step > soft) {
            return Some(out);
        }
        let here = distances[state as usize];
        let moves: Vec<u8> = columns
            .iter()
            .copied()
            .filter(|&b| {
                let t = table.next(state, b);
                t != DEAD && (step < soft || distances[t as usize] < here)
            })
            .collect();
        if moves.is_empty() {
            return table.is_accepting(state).then_some(out);
        }
        let b = moves[rng.random_range(0..moves.len())];
        // Any byte of the column: the table treats them alike.
        out.push(b);
        state = table.next(state, b);
    }
    None
}

/// Words of every compiled language, checked by the `jsonschema` crate (the suite's draft,
/// formats asserted): every one must be valid. Schemas with `uniqueItems` are left out (not
/// enforced), and so are those with a `oneOf` general mode writes as `anyOf` (listed in
/// [`ONE_OF_AS_ANY_OF`]).
#[test]
fn random_words_are_valid_instances() {
    let mut rng = SmallRng::seed_from_u64(19);
    let mut checked = 0;
    let mut failures = Vec::new();
    for (dir, draft) in DRAFTS {
        let options = general(draft);
        for (file, group) in &draft_groups(dir) {
            let schema = &group["schema"];
            let gdesc = group["description"].as_str().unwrap_or("");
            let content = ["contentMediaType", "contentEncoding", "contentSchema"]
                .iter()
                .any(|k| schema.get(k).is_some());
            if uses(schema, "uniqueItems", &Value::Bool(true))
                || content
                || ONE_OF_AS_ANY_OF.contains(&gdesc)
            {
                continue;
            }
            // Formats general mode treats as annotations are not checked either.
            let mut formats = Vec::new();
            collect_formats(schema, &mut formats);
            let assert_formats = formats.iter().all(|f| asserted_format(f));
            let Ok(constraint) = compile_schema(Some(schema), &options) else {
                continue;
            };
            let validator = match draft {
                Draft::Draft4 => jsonschema::draft4::options(),
                Draft::Draft7 => jsonschema::draft7::options(),
                _ => jsonschema::draft202012::options(),
            }
            .should_validate_formats(assert_formats)
            .build(schema);
            let Ok(validator) = validator else {
                continue;
            };
            let table = &constraint.machine.table;
            let distances = table.distances();
            for _ in 0..40 {
                let Some(word) = random_word(table, &distances, &mut rng, 40) else {
                    continue;
                };
                checked += 1;
                let text = String::from_utf8(word.clone());
                let value = text
                    .as_ref()
                    .ok()
                    .and_then(|t| serde_json::from_str::<Value>(t).ok());
                match value {
                    Some(v) if validator.is_valid(&v) => {}
                    _ => failures.push(format!(
                        "{dir}/{file}: {gdesc}: {} ({schema})",
                        String::from_utf8_lossy(&word)
                    )),
                }
            }
        }
    }
    println!("{checked} random words checked");
    for f in failures.iter().take(60) {
        println!("INVALID {f}");
    }
    assert!(failures.is_empty(), "{} invalid words", failures.len());
}

/// The values of every `format` keyword in `v`.
fn collect_formats(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if let (true, Some(f)) = (k == "format", x.as_str()) {
                    out.push(f.to_string());
                }
                collect_formats(x, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|x| collect_formats(x, out)),
        _ => {}
    }
}

/// Groups whose `oneOf` general mode writes as `anyOf` (a branch that cannot be negated
/// overlaps another): their words may be valid for two branches.
const ONE_OF_AS_ANY_OF: &[&str] = &[];
