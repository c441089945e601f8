//! Our translations of the Python `regex` dialect (`template_build::pyregex`) against the
//! module itself: `tests/data/pyregex-truth.jsonl` holds, for each pattern, whether
//! `regex.compile(pattern, regex.DOTALL)` (module default `VERSION0`) compiles and what
//! `.search(hay)` gives on each haystack, as `scripts/pyregex-truth.py` computed it with the real
//! module (see its docstring for the schema and how to run it). `ours` says what we claim:
//! `exact` (both translations reproduce every search), `dfa` (the compiled DFA tables do, with
//! Python's word characters, where the regex engines' older word table does not), `fancy`
//! (only `to_fancy` does) or `rejected` (both translations reject the pattern). Groups are
//! compared in Python's numbering: the copies of a name defined more than once, groups of their
//! own in our translations, are merged first as the runtime merges them
//! (`parser_runtime_core::groups`).

use fancy_regex::Regex as FancyRegex;
use parser_runtime_core::groups;
use parser_runtime_core::router::RouteDfa;
use parser_runtime_core::tables::{context_byte, OwnedDfa};
use regex_automata::meta::Regex as MetaRegex;
use serde::Deserialize;
use template_build::compile::{branch_dfa, dfa_table};
use template_build::pyregex::{group_names, to_dfa, to_fancy, DfaBranch, DfaPattern};

/// Byte spans of group 0, 1, ... (`None`: the group did not participate); `None`: no match.
type Spans = Option<Vec<Option<(usize, usize)>>>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Truth {
    pattern: String,
    ours: Ours,
    /// Python's error, when it rejects the pattern.
    python_error: Option<String>,
    searches: Vec<Search>,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "lowercase")]
enum Ours {
    Exact,
    /// Only the compiled DFA tables reproduce every match span (with Python's own word
    /// characters; the regex engines' word table is older).
    Dfa,
    Fancy,
    Rejected,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Search {
    hay: String,
    /// Where the search starts (a byte offset; Python's `pos`, in characters, is computed
    /// from it by the script): the text before it is context for look-behind and `\b`.
    #[serde(default)]
    pos: usize,
    /// What Python's `search` gives.
    groups: Spans,
}

/// Every truth case with its line number.
fn truth() -> Vec<(usize, Truth)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/pyregex-truth.jsonl"
    );
    let text = std::fs::read_to_string(path).expect("read pyregex-truth.jsonl");
    let cases: Vec<(usize, Truth)> = text
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            let case = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("pyregex-truth.jsonl line {}: {e}", i + 1));
            (i + 1, case)
        })
        .collect();
    assert!(cases.len() > 300, "only {} truth cases", cases.len());
    cases
}

/// The cases Python compiles that claim one of `ours`.
fn claimed(ours: &'static [Ours]) -> impl Iterator<Item = (usize, Truth)> {
    truth()
        .into_iter()
        .filter(|(_, case)| ours.contains(&case.ours) && case.python_error.is_none())
}

fn check(failures: Vec<String>) {
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn truth_file_is_consistent() {
    let mut failures = Vec::new();
    for (line, case) in truth() {
        if case.python_error.is_some() && case.ours != Ours::Rejected {
            failures.push(format!(
                "line {line}: Python rejects {:?} ({}), ours is {:?}",
                case.pattern,
                case.python_error.as_deref().unwrap_or(""),
                case.ours
            ));
        }
        if case.ours == Ours::Rejected && !case.searches.is_empty() {
            failures.push(format!("line {line}: a rejected pattern with searches"));
        }
    }
    check(failures);
}

/// Python's group number of each group of a translation, from the group names in index order
/// (`None`: unnamed): a name defined more than once is one Python group, whose further copies
/// the translation names with [`groups::copy_name`] (and whose nested copies it leaves out).
fn python_numbers<'n>(names: impl IntoIterator<Item = Option<&'n str>>) -> Vec<usize> {
    // The number of each name seen so far; any other group takes the next number.
    let mut numbered: Vec<(&str, usize)> = Vec::new();
    let mut next = 0;
    names
        .into_iter()
        .enumerate()
        .map(|(i, name)| {
            let name = name.map(groups::base_name);
            if i == 0 {
                return 0;
            }
            if let Some(&(_, number)) = numbered.iter().find(|(seen, _)| Some(*seen) == name) {
                return number;
            }
            next += 1;
            numbered.extend(name.map(|name| (name, next)));
            next
        })
        .collect()
}

/// The spans of a translation's groups (by index, named `names`) in Python's numbering, the
/// copies of a name merged as the runtime merges them ([`groups::merged_span`]).
fn python_spans<'n>(
    names: impl IntoIterator<Item = Option<&'n str>>,
    spans: &[Option<(usize, usize)>],
) -> Vec<Option<(usize, usize)>> {
    let numbers = python_numbers(names);
    let count = numbers.iter().max().map_or(0, |n| n + 1);
    (0..count)
        .map(|number| {
            groups::merged_span(
                numbers
                    .iter()
                    .zip(spans)
                    .filter(|(n, _)| **n == number)
                    .map(|(_, span)| *span),
            )
        })
        .collect()
}

fn fancy_spans(re: &FancyRegex, search: &Search) -> Spans {
    let caps = re
        .captures_from_pos(&search.hay, search.pos)
        .expect("fancy-regex runtime error")?;
    let spans: Vec<_> = (0..caps.len())
        .map(|i| caps.get(i).map(|m| (m.start(), m.end())))
        .collect();
    Some(python_spans(re.capture_names(), &spans))
}

fn meta_spans(re: &MetaRegex, search: &Search) -> Spans {
    let mut caps = re.create_captures();
    re.search_captures(
        &regex_automata::Input::new(&search.hay).range(search.pos..),
        &mut caps,
    );
    if !caps.is_match() {
        return None;
    }
    let spans: Vec<_> = (0..caps.group_len())
        .map(|i| caps.get_group(i).map(|s| (s.start, s.end)))
        .collect();
    let names = caps
        .group_info()
        .pattern_names(regex_automata::PatternID::ZERO);
    Some(python_spans(names, &spans))
}

/// Recombine the DFA branches into one backtracking regex, `(?:main)(?=body)|...`, which
/// has the semantics the DFA driver implements (a branch matches if its main part matches
/// and its look-ahead then holds). regex-syntax's word start and end assertions are spelled
/// out for fancy-regex.
fn recombine(dp: &DfaPattern) -> String {
    dp.branches
        .iter()
        .map(|b| match &b.lookahead {
            None => format!("(?:{})", b.main),
            Some((false, body)) => format!("(?:{})(?={})", b.main, body),
            Some((true, body)) => format!("(?:{})(?!{})", b.main, body),
        })
        .collect::<Vec<_>>()
        .join("|")
        .replace(r"\b{start}", r"(?:\b(?=\w))")
        .replace(r"\b{end}", r"(?:\b(?<=\w))")
}

#[test]
fn fancy_translation_matches_python() {
    let mut failures = Vec::new();
    for (line, case) in claimed(&[Ours::Exact, Ours::Fancy]) {
        let translated = match to_fancy(&case.pattern) {
            Ok(translated) => translated,
            Err(e) => {
                failures.push(format!("line {line}: to_fancy({:?}): {e}", case.pattern));
                continue;
            }
        };
        let re = FancyRegex::new(&translated).unwrap();
        for search in &case.searches {
            let got = fancy_spans(&re, search);
            if got != search.groups {
                failures.push(format!(
                    "line {line}: pattern {:?} translated {translated:?} on {:?}: {got:?}, \
                     Python {:?}",
                    case.pattern, search.hay, search.groups
                ));
            }
        }
    }
    check(failures);
}

/// A match as the DFA driver finds it: group 0 and the named groups that participate.
type DriverMatch = ((usize, usize), Vec<(String, (usize, usize))>);

/// What the DFA driver (see [`DfaBranch`]) finds: at the first start where some branch
/// matches, the first such branch in order; a branch matches with its main part's
/// preferred (leftmost-first) anchored match when its look-ahead then holds from the end
/// of that match (no backtracking into the main part). Captures are resolved by the
/// branch's own regex, by name, as the engine does.
fn driver_match(dp: &DfaPattern, hay: &str, pos: usize) -> Option<DriverMatch> {
    use regex_automata::{Anchored, Input};
    let branches: Vec<(MetaRegex, Option<(bool, MetaRegex)>)> = dp
        .branches
        .iter()
        .map(|b| {
            let look = b
                .lookahead
                .as_ref()
                .map(|(negated, body)| (*negated, MetaRegex::new(body).unwrap()));
            (MetaRegex::new(&b.main).unwrap(), look)
        })
        .collect();
    for start in (pos..=hay.len()).filter(|&i| hay.is_char_boundary(i)) {
        for (main, look) in &branches {
            let mut caps = main.create_captures();
            main.search_captures(
                &Input::new(hay).range(start..).anchored(Anchored::Yes),
                &mut caps,
            );
            let Some(m) = caps.get_match() else {
                continue;
            };
            if let Some((negated, look)) = look {
                let held = look.is_match(Input::new(hay).range(m.end()..).anchored(Anchored::Yes));
                if held == *negated {
                    continue;
                }
            }
            let named = caps
                .group_info()
                .pattern_names(regex_automata::PatternID::ZERO)
                .enumerate()
                .filter_map(|(i, name)| Some((name?, caps.get_group(i).map(|s| (s.start, s.end)))));
            let names = groups::merge(named)
                .into_iter()
                .filter_map(|(name, span)| Some((name.to_string(), span?)))
                .collect();
            return Some(((m.start(), m.end()), names));
        }
    }
    None
}

/// Python's result for a search, in the form of [`driver_match`] (group names from the
/// full translation, numbered as Python numbers them).
fn python_match(pattern: &str, expected: &Spans) -> Option<DriverMatch> {
    let spans = expected.as_ref()?;
    let fancy = FancyRegex::new(&to_fancy(pattern).unwrap()).unwrap();
    let numbers = python_numbers(fancy.capture_names());
    let mut names: Vec<(String, (usize, usize))> = fancy
        .capture_names()
        .zip(numbers)
        .filter_map(|(name, number)| {
            let name = groups::base_name(name?).to_string();
            Some((name, spans.get(number).copied()??))
        })
        .collect();
    names.sort();
    names.dedup();
    Some((spans[0]?, names))
}

/// The cases claimed `exact` with their DFA translation; a failure for each that has none.
fn exact_cases(failures: &mut Vec<String>) -> Vec<(usize, Truth, DfaPattern)> {
    translated(&[Ours::Exact], failures)
}

/// The cases claiming one of `ours` with their DFA translation; a failure for each that has
/// none.
fn translated(
    ours: &'static [Ours],
    failures: &mut Vec<String>,
) -> Vec<(usize, Truth, DfaPattern)> {
    claimed(ours)
        .filter_map(|(line, case)| match to_dfa(&case.pattern) {
            Ok(dp) => Some((line, case, dp)),
            Err(e) => {
                failures.push(format!("line {line}: to_dfa({:?}): {e}", case.pattern));
                None
            }
        })
        .collect()
}

#[test]
fn dfa_driver_matches_python() {
    let mut failures = Vec::new();
    for (line, case, dp) in exact_cases(&mut failures) {
        for search in &case.searches {
            let got = driver_match(&dp, &search.hay, search.pos).map(|(span, mut names)| {
                names.sort();
                (span, names)
            });
            let expected = python_match(&case.pattern, &search.groups);
            if got != expected {
                failures.push(format!(
                    "line {line}: pattern {:?} -> {dp:?} on {:?}: {got:?}, Python {expected:?}",
                    case.pattern, search.hay
                ));
            }
        }
    }
    check(failures);
}

#[test]
fn dfa_translation_matches_python() {
    let mut failures = Vec::new();
    for (line, case, dp) in exact_cases(&mut failures) {
        let re = FancyRegex::new(&recombine(&dp)).unwrap();
        for search in &case.searches {
            let got = fancy_spans(&re, search).map(|s| s[0]);
            let expected = search.groups.as_ref().map(|g| g[0]);
            if got != expected {
                failures.push(format!(
                    "line {line}: pattern {:?} -> {dp:?} on {:?}: {got:?}, Python {expected:?}",
                    case.pattern, search.hay
                ));
            }
        }
        // A single branch without look-ahead runs on regex-automata as is: compare every
        // group too.
        if let [DfaBranch {
            main,
            lookahead: None,
            behind: None,
        }] = dp.branches.as_slice()
        {
            let re = MetaRegex::new(main)
                .unwrap_or_else(|e| panic!("line {line}: meta regex for {main:?}: {e}"));
            for search in &case.searches {
                let got = meta_spans(&re, search);
                if got != search.groups {
                    failures.push(format!(
                        "line {line}: pattern {:?} -> {main:?} on {:?}: {got:?}, Python {:?}",
                        case.pattern, search.hay, search.groups
                    ));
                }
            }
        }
    }
    check(failures);
}

/// Where the preferred (leftmost-first) match of the DFA `t` from `start` ends, walking it as
/// the router does: a context slot reads [`context_byte`] of the character before `start`, a
/// delayed match ends at the start of the last character read.
fn dfa_walk(t: &OwnedDfa, hay: &str, start: usize) -> Option<usize> {
    let bytes = hay.as_bytes();
    let mut s = if t.context() {
        t.next_state(
            t.start(None)?,
            context_byte(hay[..start].chars().next_back()),
        )
    } else {
        t.start(start.checked_sub(1).map(|i| bytes[i]))?
    };
    if t.is_dead_state(s) {
        return None;
    }
    let char_start = |p: usize| (0..p).rev().find(|&q| hay.is_char_boundary(q)).unwrap_or(0);
    let end = |id, p: usize| if t.delayed(id) { char_start(p) } else { p };
    let mut last = None;
    for (p, &b) in bytes.iter().enumerate().skip(start) {
        s = t.next_state(s, b);
        if t.is_match_state(s) {
            last = Some(end(s, p));
        }
        if t.is_dead_state(s) {
            return last;
        }
    }
    let eoi = t.next_eoi_state(s);
    if t.is_match_state(eoi) {
        last = Some(end(eoi, bytes.len()));
    }
    last
}

/// What the router finds with the compiled tables ([`dfa_table`] of every main part and
/// look-ahead body): at the first start where a branch matches, the first such branch's
/// span.
fn tables_match(tables: &[(OwnedDfa, Option<(bool, OwnedDfa)>)], hay: &str, pos: usize) -> Spans {
    for start in (pos..=hay.len()).filter(|&i| hay.is_char_boundary(i)) {
        for (main, look) in tables {
            let Some(end) = dfa_walk(main, hay, start) else {
                continue;
            };
            if let Some((negated, look)) = look {
                if dfa_walk(look, hay, end).is_some() == *negated {
                    continue;
                }
            }
            return Some(vec![Some((start, end))]);
        }
    }
    None
}

#[test]
fn dfa_tables_match_python() {
    let mut failures = Vec::new();
    for (line, case, dp) in translated(&[Ours::Exact, Ours::Dfa], &mut failures) {
        let tables: Result<Vec<_>, _> = dp
            .branches
            .iter()
            .map(|b| {
                let look = match &b.lookahead {
                    Some((negated, body)) => Some((*negated, dfa_table(body)?)),
                    None => None,
                };
                let main = branch_dfa(&b.main, b.behind.as_deref())?;
                Ok::<_, template_build::Problem>((main, look))
            })
            .collect();
        let tables = match tables {
            Ok(tables) => tables,
            Err(e) => {
                failures.push(format!("line {line}: {:?}: {}", case.pattern, e.reason));
                continue;
            }
        };
        for search in &case.searches {
            let got = tables_match(&tables, &search.hay, search.pos);
            let expected = search.groups.as_ref().map(|g| vec![g[0]]);
            if got != expected {
                failures.push(format!(
                    "line {line}: pattern {:?} -> {dp:?} on {:?} from {}: {got:?}, Python \
                     {expected:?}",
                    case.pattern, search.hay, search.pos
                ));
            }
        }
    }
    check(failures);
}

/// The functions that accept `pattern`, of `to_fancy`, `to_dfa` and (if `names`) `group_names`.
fn accepted_by(pattern: &str, names: bool) -> Vec<&'static str> {
    let mut accepted = Vec::new();
    if to_fancy(pattern).is_ok() {
        accepted.push("to_fancy");
    }
    if to_dfa(pattern).is_ok() {
        accepted.push("to_dfa");
    }
    if names && group_names(pattern).is_ok() {
        accepted.push("group_names");
    }
    accepted
}

#[test]
fn python_errors_are_errors() {
    let mut failures = Vec::new();
    for (line, case) in truth() {
        if case.python_error.is_some() {
            for f in accepted_by(&case.pattern, true) {
                failures.push(format!("line {line}: {f}({:?}) accepted", case.pattern));
            }
        }
    }
    check(failures);
}

#[test]
fn unsupported_python_constructs_are_rejected() {
    let mut failures = Vec::new();
    for (line, case) in claimed(&[Ours::Rejected]) {
        for f in accepted_by(&case.pattern, false) {
            failures.push(format!("line {line}: {f}({:?}) accepted", case.pattern));
        }
    }
    check(failures);
}

#[test]
fn lookahead_is_checked_at_the_preferred_end_only() {
    // Documented limitation of the driver: no backtracking into the main part. Python's
    // `regex` finds (0, 2) for `x.*?$` on "xa" and (0, 3) for `x(?:a|.*?$)` on "xbc".
    let dp = to_dfa(r"x.*?$").unwrap();
    assert_eq!(driver_match(&dp, "xa", 0), None);
    let dp = to_dfa(r"x(?:a|.*?$)").unwrap();
    assert_eq!(driver_match(&dp, "xbc", 0), None);
    // The `\z` approximation after a variable-length prefix keeps such a match, only the
    // final newline differs (Python: (0, 10) on "<think>a\nb", (0, 9) on "<think>ab\n").
    let dp = to_dfa(r"<think>[\s\S]*?(?:</think>|$)").unwrap();
    assert_eq!(driver_match(&dp, "<think>a\nb", 0), Some(((0, 10), vec![])));
    assert_eq!(driver_match(&dp, "<think>ab\n", 0), Some(((0, 10), vec![])));
}
