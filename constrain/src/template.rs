//! A response template plus a request (tools, tool choice, response format) -> the byte
//! language of valid whole responses, as a [`Machine`].
//!
//! The grammar follows the template's own fields and delimiters (their languages come from
//! the template's patterns, with the tool name put in the `name` group where the open
//! delimiter carries it):
//!
//! * an optional **reasoning** region first (a field named `reasoning_content`, `thinking` or
//!   `reasoning` with an open and a close): any text without its close;
//! * the **content**: with an implicit field, free text that holds no delimiter the parser
//!   watches there (every explicit open and the implicit field's close); with a response
//!   format, one JSON value of the format instead (any object nested at most 5 levels in JSON
//!   mode; the schema's language in JSON Schema mode) with at most
//!   [`Options::around_body`] whitespace bytes around it. A template whose `content` field has
//!   its own open (gpt-oss) writes it as a region;
//! * **tool calls** (`tool_calls` field), each a region whose body is exactly one call of a
//!   declared tool (a list of at least one for the list families) with arguments in its
//!   parameters' language (strict tools: objects closed, required parameters present), in one
//!   of these families:
//!   - JSON call in delimiters (`content: json`, transform `{"type": "function", "function":
//!     "{content}"}`: SmolLM3, Qwen3, Hermes): `{"name": N, "arguments": {...}}`;
//!   - name in the open delimiter, JSON arguments (a `name` group in the open, transform
//!     `function: {"name": "{name}", "arguments": "{content}"}`: gpt-oss, Gemma 4);
//!   - XML parameters (`content: xml-inline` whose tag pattern reads back one of
//!     [`template_build::roles::XML_STYLES`]: Qwen3-Coder's `<parameter=K>\nV\n</parameter>\n`,
//!     MiniMax M2's `<parameter name="K">V</parameter>`, GLM 4.5's `<arg_key>`/`<arg_value>`),
//!     one tag per written parameter, V typed by its schema;
//!   - lists of JSON calls: `json-call-list` (Granite 3, Llama 3.1's
//!     `call; call`, Mistral before v11), or `json` with `transform_each` reading the name and
//!     the arguments from two keys of each call (Command A's `tool_name` / `parameters`,
//!     Phi-4-mini);
//!   - lists of Python calls: `python-call-list` (LFM2), `[name(k=v, ...), ...]`, keyword
//!     arguments in declared order, values as Python literals that parser (and transformers
//!     5.24's `_python_call_list`) reads back into the schema's JSON value
//!     ([`crate::json::Literals::Python`]; strict mode only, no untyped values); text before
//!     the block or after it (LFM2's layout), not both (the parser then keeps only the text
//!     after);
//!   - keyword arguments: LFM2.5's `xml-inline` tags `k=v` read again by a `json` value
//!     parser with `'` quotes ([`Family::PythonKeywords`]), in blocks
//!     `<|tool_call_start|>[f(k=v, ...), g(...)]<|tool_call_end|>`; values of one type each
//!     as `keyword_value` writes them (strings single-quoted and raw);
//!
//!   in every family, one call region per turn when the tool-call field does not repeat
//!   (Llama 3.1, Granite 3, Mistral before v11, Command A/R7B, Phi-4-mini, LFM2): the parser
//!   keeps the last region's calls, so a second region would drop the first one's;
//! * the **end of turn**: the implicit field's close; templates without an implicit field end
//!   after the content region or a tool call. The implicit field's close may also stand
//!   between the content and the calls, and twice after them (the parser reads it wherever no
//!   region is open: DeepSeek V3.1's `<｜tool▁calls▁begin｜>` ... `<｜tool▁calls▁end｜>`
//!   `<｜end▁of▁sentence｜>`).
//!
//! Delimiters ending in a look-ahead (`(?=...)`, one branch each) are written as their
//! consumed part, and the text after them must begin with a match of the look-ahead (a
//! segment's [`crate::graph::Segment::ahead`]): Mistral's call close `(?=\[TOOL_CALLS\])` is
//! empty before the next call. A `$` branch ends the response. Texts that must hold no match
//! avoid the consumed part followed by the look-ahead's text; negative look-aheads are refused.
//! A look-ahead reading any text up to `X` (Nemotron 3's reasoning open
//! `(?=[\s\S]*?</think>)`) is generated only as a reasoning open, with `X` kept out of every
//! text but the reasoning body.
//!
//! Delimiters are bounded: at most [`Options::delimiter_slack`] bytes longer than their
//! shortest form (a `\s*` or `[^<]*` inside cannot run on), and never start with whitespace
//! (the text before them writes it). Templates without an implicit field allow text between
//! regions that holds no open delimiter (the parser ignores it; gpt-oss writes
//! `<|start|>assistant<|channel|>commentary ` there), special tokens included.
//!
//! Word assertions (`\b`, `\B`, `\m`, `\M`, the Python `regex` module's word characters) are
//! generated exactly: inside a delimiter by its language, at its edges from the text written
//! around it ([`crate::word`]; docs/word-boundaries.md). Texts that must hold no delimiter
//! avoid it without its word assertions (content never writes `THINK:` for `\bTHINK:`), and
//! generation is taken to start the parser's text (the start of the text before the first
//! delimiter). ASCII word assertions (`(?a)\b`) are refused.
//!
//! `tool_choice`: `auto` (content, then any number of calls), `required` (at least one call),
//! `none` (no call), or one function by name (only that tool, at least once). With a response
//! format, a turn is either the JSON content or tool calls (a turn of tool calls has no content
//! to check).

use regex_syntax::hir::{Class, ClassBytes, ClassBytesRange, Hir, HirKind};
use serde_json::Value;

use parser_runtime_core::tables::{ContentSpec, Role};
use structured_outputs::types::{resolve_ref, value_types, JsonType};
use structured_outputs::{ResponseFormat, StrictTools};
use template_build::model::{DelimiterSpec, FieldModel, TemplateModel};

use crate::dfa::{Budget, BuildError, Limits, Table, DEAD, START};
use crate::graph::{Graph, Machine, SegmentKind};
use crate::json::{JsonOptions, Literals, SchemaHir, SchemaLanguage, SchemaMode, Slots};

/// Which tools the response may call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ToolChoice {
    /// Content and any number of calls (OpenAI `"auto"`).
    #[default]
    Auto,
    /// At least one call (`"required"`).
    Required,
    /// No call (`"none"`).
    None,
    /// At least one call, all of this function.
    Function(String),
}

impl ToolChoice {
    /// From the OpenAI request field: `"auto"`, `"required"`, `"none"`, or
    /// `{"type": "function", "function": {"name": N}}`; a bare name is also taken.
    pub fn from_request(value: &Value) -> Result<Self, ConstrainError> {
        match value {
            Value::String(s) => Ok(match s.as_str() {
                "auto" => Self::Auto,
                "required" => Self::Required,
                "none" => Self::None,
                name => Self::Function(name.to_string()),
            }),
            Value::Object(_) => value
                .pointer("/function/name")
                .and_then(Value::as_str)
                .map(|n| Self::Function(n.to_string()))
                .ok_or_else(|| cerr("tool_choice", "expected {\"function\": {\"name\": ...}}")),
            _ => Err(cerr(
                "tool_choice",
                "expected a string or a function object",
            )),
        }
    }
}

/// What the response must satisfy.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// OpenAI tool JSON (`[{"type": "function", "function": {"name", "parameters"}}]`).
    pub tools: Vec<Value>,
    /// Which tools may be called.
    pub tool_choice: ToolChoice,
    /// The OpenAI `response_format` object, if any.
    pub response_format: Option<Value>,
}

/// Knobs of the grammar.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// JSON writing (whitespace between tokens, recursion, untyped depth).
    pub json: JsonOptions,
    /// Table size bounds.
    pub limits: Limits,
    /// How many times more than its minimum an unbounded repetition inside a delimiter
    /// (`\s*`, `[^<]*`) may repeat (default 32).
    pub delimiter_slack: usize,
    /// Whitespace bytes allowed around a JSON body or JSON content (default 2).
    pub around_body: usize,
    /// The longest [`compile`] may take building tables ([`Budget::Time`]; default 10 s,
    /// `None`: no bound); past it, compiling fails naming the budget. The size budgets are in
    /// `limits` and `json` ([`Budget`]).
    pub time_budget: Option<std::time::Duration>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            json: JsonOptions::default(),
            limits: Limits::default(),
            delimiter_slack: 32,
            around_body: 2,
            time_budget: Some(std::time::Duration::from_secs(10)),
        }
    }
}

/// Why a template or request cannot be compiled into a constraint. Its `Display` is
/// `at: reason`, each [`crate::json::printable`]; the fields keep the exact text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {}", crate::json::printable(.at), crate::json::printable(.reason))]
pub struct ConstrainError {
    /// Where: a template path (`fields.tool_calls.open_pattern`), a pointer into the tools
    /// (`tools/0/function/parameters/properties/x`), `response_format...` or `tool_choice`.
    pub at: String,
    /// Why.
    pub reason: String,
    /// The budget that ended the compile, when one did (the reason names it too); each is
    /// raised through [`Options`].
    pub budget: Option<Budget>,
}

fn cerr(at: impl Into<String>, reason: impl Into<String>) -> ConstrainError {
    ConstrainError {
        at: at.into(),
        reason: reason.into(),
        budget: None,
    }
}

fn build(at: &str, e: BuildError) -> ConstrainError {
    let budget = match &e {
        BuildError::TooLarge { budget, .. } => Some(*budget),
        _ => None,
    };
    ConstrainError {
        budget,
        ..cerr(at, e.to_string())
    }
}

/// A schema's [`crate::json::CompileError`], its pointer under `at`.
fn schema_error(at: &str, e: crate::json::CompileError) -> ConstrainError {
    ConstrainError {
        budget: e.budget,
        ..cerr(format!("{at}{}", e.pointer), e.reason)
    }
}

/// The tool-call family of a template: decided by the compiler (`template_build::roles`) and
/// read from the `tool_calls` field's [`Role`].
pub use parser_runtime_core::tables::ToolFamily as Family;

/// A compiled constraint: the machine of valid whole responses.
#[derive(Debug)]
pub struct Constraint {
    /// The determinized grammar.
    pub machine: Machine,
    /// The tool-call family, when the request has tools.
    pub family: Option<Family>,
}

fn field_path(field: &FieldModel, key: &str) -> String {
    template_build::path::field(&field.name, key)
}

/// The template path of a field's delimiter `which` (`open` or `close`) as the template
/// writes it: `open_pattern` for a pattern.
fn delimiter_path(field: &FieldModel, which: &str, spec: &DelimiterSpec) -> String {
    match spec {
        DelimiterSpec::Pattern { .. } => field_path(field, &format!("{which}_pattern")),
        DelimiterSpec::Literals(_) => field_path(field, which),
    }
}

/// The HIR of a delimiter: literal alternatives, or the pattern's branches (regex-syntax
/// translation of the template's Python pattern) with the `name` group replaced by `name`,
/// without their word assertions ([`crate::word::relaxed`]: every match of the delimiter is
/// one of it, which is what texts that must hold no match of it need).
fn delimiter_hir(
    spec: &DelimiterSpec,
    name: Option<&str>,
    at: &str,
) -> Result<Hir, ConstrainError> {
    Ok(delimiter_parts(spec, name, at, Branches::Consumed)?.hir)
}

/// A branch's trailing look-ahead (`(negated, body)`, see [`template_build::pyregex::DfaBranch`]).
type Lookahead = (bool, String);

/// Whether a look-ahead is Python's `$` (the end of the text, or a final newline before it).
fn is_end(lookahead: &Lookahead) -> bool {
    !lookahead.0 && lookahead.1 == "\n?\\z"
}

/// Which branches of a delimiter a language is built from.
#[derive(Clone, Copy)]
enum Branches<'a> {
    /// Every branch, a look-ahead's text written after its main part (`$` left out): what a
    /// text must not hold to hold no match of the delimiter.
    Consumed,
    /// The branches ending in this look-ahead (`None`: in none), their main parts only.
    Ahead(Option<&'a Lookahead>),
}

/// What must follow a delimiter's words.
#[derive(Clone)]
enum Ahead {
    /// Anything.
    Any,
    /// A text beginning with a word of the table (a look-ahead).
    Text(Box<Table>),
    /// Nothing: the response ends (`$`).
    End,
}

/// A delimiter's language in parts.
struct Parts {
    /// [`delimiter_hir`]: the branches without a split name.
    hir: Hir,
    /// The branches cut after the tool name (the texts the delimiter must not contain for
    /// the parser to capture exactly `name`: the name followed by a character its greedy
    /// group also takes).
    splits: Vec<NameSplit>,
    /// When a branch has Unicode word assertions: every branch as the parser runs it
    /// (assertions kept, the name written), for the exact language ([`crate::word::exact`]).
    exact: Option<Hir>,
}

/// See [`Parts`].
fn delimiter_parts(
    spec: &DelimiterSpec,
    name: Option<&str>,
    at: &str,
    select: Branches,
) -> Result<Parts, ConstrainError> {
    let mut splits = Vec::new();
    match spec {
        DelimiterSpec::Literals(_) if matches!(select, Branches::Ahead(Some(_))) => Ok(Parts {
            hir: Hir::fail(),
            splits,
            exact: None,
        }),
        DelimiterSpec::Literals(list) => Ok(Parts {
            hir: Hir::alternation(list.iter().map(|l| Hir::literal(l.as_bytes())).collect()),
            splits,
            exact: None,
        }),
        DelimiterSpec::Pattern { translated, .. } => {
            // Translated once, when the template was loaded.
            let mut branches = Vec::new();
            let mut exact = Vec::new();
            let mut words = false;
            for branch in &translated.branches {
                if branch.lookahead.as_ref().is_some_and(|l| l.0) {
                    return Err(cerr(
                        at,
                        "a delimiter ending in a negative look-ahead `(?!...)` is not generated",
                    ));
                }
                let far = far_lookahead(branch, at)?;
                let main = match (select, &branch.lookahead) {
                    (Branches::Ahead(want), la) if la.as_ref() != want => continue,
                    // A look-ahead reading any text up to `X` ([`far_lookahead`]): a text holds
                    // a match where it holds `X`.
                    (Branches::Consumed, Some(_)) if far.is_some() => far.unwrap_or_default(),
                    (Branches::Consumed, Some(la)) if !is_end(la) => {
                        format!("(?:{})(?:{})", branch.main, la.1)
                    }
                    (Branches::Consumed, Some(_)) => {
                        // `$`: a match ends the output, so a text with a delimiter after it
                        // holds one only where the main part is written; an empty main part
                        // matches there only at the very end, where no such text stands.
                        let hir = regex_syntax::Parser::new()
                            .parse(&branch.main)
                            .map_err(|e| cerr(at, format!("pattern: {e}")))?;
                        if hir.properties().minimum_len() == Some(0) {
                            continue;
                        }
                        branch.main.clone()
                    }
                    _ => branch.main.clone(),
                };
                if branch.behind.is_some() {
                    // The parser runs it (the character before the match); generating it
                    // needs that character's class in the grammar, as for `\b`.
                    return Err(cerr(
                        at,
                        "a delimiter starting with a look-behind is not generated",
                    ));
                }
                let mut hir = regex_syntax::Parser::new()
                    .parse(&main)
                    .map_err(|e| cerr(at, format!("pattern: {e}")))?;
                if matches!(select, Branches::Consumed) {
                    // A match anchored at the start of the text (DeepSeek R1's `^\s*<think>`):
                    // texts that must hold none avoid it anywhere (at most they avoid more).
                    hir = without_start_anchor(&hir);
                }
                if crate::word::has_ascii_word_assertion(&hir) {
                    // regex-automata's tables read the start and the end of the delimiter as
                    // the edges of the text: exact inside, not at the edges.
                    return Err(cerr(
                        at,
                        "a delimiter with an ASCII word boundary (`(?a)\\b`, `(?a)\\B`) is not \
                         generated: the character before or after it is not known to the table",
                    ));
                }
                // Word assertions are decided exactly by the exact language (with the name
                // written); every other part reads the branch without them.
                words |= crate::word::has_word_assertion(&hir);
                let full = hir;
                let hir = crate::word::relaxed(&full);
                let Some(n) = name else {
                    exact.push(full);
                    branches.push(hir);
                    continue;
                };
                let mut group = None;
                exact.push(replace_group(&full, "name", n, &mut None));
                let h = replace_group(&hir, "name", n, &mut group);
                let Some(group) = group else {
                    return Err(cerr(at, "no `name` group to write the tool name into"));
                };
                // The name must be a match of the group, or the parser reads another name.
                let fits = Table::from_hir(&group, &Limits::default())
                    .map(|t| t.matches(n.as_bytes()))
                    .unwrap_or(false);
                if !fits {
                    return Err(cerr(
                        at,
                        format!("the tool name {n:?} does not match the template's name group"),
                    ));
                }
                // The parser's group is greedy: what follows the name may not start with a
                // character the group also takes (`[^\s<]+` in gpt-oss), or the captured name
                // would be longer than the tool's. Split the branch after the name.
                match (name_class(&group), split_after_group(&hir, "name", n)) {
                    (Some((class, greedy)), Some((pre, post))) => splits.push(NameSplit {
                        pre,
                        post,
                        class,
                        greedy,
                    }),
                    (Some(_), None) => {
                        return Err(cerr(
                            at,
                            "the `name` group is not at the top level of the delimiter pattern",
                        ))
                    }
                    (None, _) => branches.push(h),
                }
            }
            Ok(Parts {
                hir: Hir::alternation(branches),
                splits,
                exact: words.then(|| Hir::alternation(exact)),
            })
        }
    }
}

/// A delimiter ready for the graph: its table (with the class bytes of `marks` where a word
/// assertion at its edge reads a neighbouring character) and its texts.
#[derive(Clone)]
struct Delimiter {
    table: Table,
    marks: crate::graph::Marks,
    /// Its words without class bytes, for any neighbours.
    text: Table,
}

/// A delimiter's branches grouped by their look-ahead ([`Builder::add_delimiter`]).
#[derive(Clone)]
struct DelimiterSet {
    groups: Vec<(Delimiter, Ahead)>,
    /// Its words, each look-ahead's words written after its main part, without class bytes.
    text: Table,
}

/// A delimiter branch cut after the tool name: `pre` ends with the name; a greedy group's
/// `post` may not start with a character of `class` (the name group's repeated class), a lazy
/// group's name may not hold a character `post` can start with.
struct NameSplit {
    pre: Hir,
    post: Hir,
    class: Hir,
    greedy: bool,
}

/// Splits a branch (a concatenation with the `group` capture at its top level, or inside
/// captures at its top level: Kimi's `(?P<id>(?:functions\.)?(?P<name>[^<]+?):\d+)`) into
/// the part up to and including the group (replaced by `text`) and the rest.
fn split_after_group(hir: &Hir, group: &str, text: &str) -> Option<(Hir, Hir)> {
    let items = top_level_items(hir, group);
    let k = items
        .iter()
        .position(|h| matches!(h.kind(), HirKind::Capture(c) if is_group(c, group)))?;
    let mut pre: Vec<Hir> = items[..k].to_vec();
    pre.push(Hir::literal(text.as_bytes()));
    let post: Vec<Hir> = items[k + 1..].to_vec();
    Some((Hir::concat(pre), Hir::concat(post)))
}

/// Whether capture `c` is group `group` or one of its copies (a name defined more than once,
/// `parser_runtime_core::groups`: Mistral's open names the tool in each of two branches).
fn is_group(c: &regex_syntax::hir::Capture, group: &str) -> bool {
    c.name
        .as_deref()
        .is_some_and(|n| parser_runtime_core::groups::base_name(n) == group)
}

/// The items of `hir` as a concatenation, the captures that hold the `group` capture opened
/// up (only languages matter here), so that the group stands at the top level.
fn top_level_items(hir: &Hir, group: &str) -> Vec<Hir> {
    fn holds(hir: &Hir, group: &str) -> bool {
        match hir.kind() {
            HirKind::Capture(c) => is_group(c, group) || holds(&c.sub, group),
            HirKind::Repetition(r) => holds(&r.sub, group),
            HirKind::Concat(hs) | HirKind::Alternation(hs) => hs.iter().any(|h| holds(h, group)),
            _ => false,
        }
    }
    let items: Vec<Hir> = match hir.kind() {
        HirKind::Concat(hs) => hs.clone(),
        _ => vec![hir.clone()],
    };
    items
        .into_iter()
        .flat_map(|h| match h.kind() {
            HirKind::Capture(c) if !is_group(c, group) && holds(&c.sub, group) => {
                top_level_items(&c.sub, group)
            }
            _ => vec![h],
        })
        .collect()
}

/// A branch with an empty main part whose look-ahead reads any text up to `X`
/// (`(?=[\s\S]*?X)`, Nemotron 3's reasoning open): `X` (a regex-syntax pattern). Such a
/// delimiter matches wherever `X` comes anywhere later, inside later regions too, so it is
/// generated only as the reasoning open, `X` kept out of every other text
/// ([`far_avoided`]). Another look-ahead that reads any text is an error.
fn far_lookahead(
    branch: &template_build::pyregex::DfaBranch,
    at: &str,
) -> Result<Option<String>, ConstrainError> {
    let Some((_, body)) = &branch.lookahead else {
        return Ok(None);
    };
    let parse = |p: &str| {
        regex_syntax::Parser::new()
            .parse(p)
            .map_err(|e| cerr(at, format!("look-ahead: {e}")))
    };
    let hir = parse(body)?;
    if !reads_anything(&hir) {
        return Ok(None);
    }
    let refused = || {
        cerr(
            at,
            "a look-ahead that reads any text (`[\\s\\S]*?`) is generated only as a reasoning \
             open with nothing before it (`(?=[\\s\\S]*?</think>)`): it matches wherever its \
             end comes anywhere later in the output, inside later regions too",
        )
    };
    let empty_main = parse(&branch.main)?.properties().maximum_len() == Some(0);
    match hir.kind() {
        HirKind::Concat(hs)
            if empty_main
                && hs.len() > 1
                && reads_anything(&hs[0])
                && !hs[1..].iter().any(reads_anything) =>
        {
            Ok(Some(Hir::concat(hs[1..].to_vec()).to_string()))
        }
        _ => Err(refused()),
    }
}

/// The text to keep out of every text but the reasoning body: the `X` of a reasoning open
/// `(?=[\s\S]*?X)` ([`far_lookahead`]). A far look-ahead in any other delimiter is an error.
fn far_avoided(
    template: &TemplateModel,
    reasoning: Option<&FieldModel>,
) -> Result<Option<Hir>, ConstrainError> {
    let mut found = None;
    for f in &template.fields {
        for (which, spec) in [("open", &f.open), ("close", &f.close)] {
            let Some(spec @ DelimiterSpec::Pattern { translated, .. }) = spec else {
                continue;
            };
            let at = delimiter_path(f, which, spec);
            for branch in &translated.branches {
                let Some(x) = far_lookahead(branch, &at)? else {
                    continue;
                };
                let is_open = which == "open" && reasoning.is_some_and(|r| r.name == f.name);
                if !is_open {
                    return Err(cerr(
                        at,
                        "a look-ahead that reads any text (`[\\s\\S]*?`) is generated only as \
                         a reasoning open",
                    ));
                }
                found = Some(
                    regex_syntax::Parser::new()
                        .parse(&x)
                        .map_err(|e| cerr(&at, e.to_string()))?,
                );
            }
        }
    }
    Ok(found)
}

/// Whether `hir` repeats without bound a class of every character (`[\s\S]*`, `(?s:.)*?`).
fn reads_anything(hir: &Hir) -> bool {
    match hir.kind() {
        HirKind::Repetition(r) if r.max.is_none() => {
            let all = match r.sub.kind() {
                HirKind::Class(Class::Unicode(c)) => {
                    c.ranges().first().is_some_and(|r| r.start() == '\0')
                        && c.ranges().last().is_some_and(|r| r.end() == char::MAX)
                        && c.ranges().len() <= 2
                }
                HirKind::Class(Class::Bytes(c)) => {
                    c.ranges().len() == 1 && c.ranges()[0].end() == 255
                }
                _ => false,
            };
            all || reads_anything(&r.sub)
        }
        HirKind::Repetition(r) => reads_anything(&r.sub),
        HirKind::Capture(c) => reads_anything(&c.sub),
        HirKind::Concat(hs) | HirKind::Alternation(hs) => hs.iter().any(reads_anything),
        _ => false,
    }
}

/// Whether some branch of `spec` starts with `^` (the start of the text).
fn anchored_at_start(spec: &DelimiterSpec) -> bool {
    let DelimiterSpec::Pattern { translated, .. } = spec else {
        return false;
    };
    translated.branches.iter().any(|b| {
        regex_syntax::Parser::new()
            .parse(&b.main)
            .is_ok_and(|hir| without_start_anchor(&hir) != hir)
    })
}

/// `hir` without a `^` (the start of the text) first in a branch.
fn without_start_anchor(hir: &Hir) -> Hir {
    let start = |h: &Hir| matches!(h.kind(), HirKind::Look(regex_syntax::hir::Look::Start));
    match hir.kind() {
        HirKind::Alternation(hs) => Hir::alternation(hs.iter().map(without_start_anchor).collect()),
        HirKind::Concat(hs) if hs.first().is_some_and(start) => Hir::concat(hs[1..].to_vec()),
        HirKind::Capture(c) => {
            let mut c = c.clone();
            c.sub = Box::new(without_start_anchor(&c.sub));
            Hir::capture(c)
        }
        _ if start(hir) => Hir::empty(),
        _ => hir.clone(),
    }
}

/// `hir` without a leading optional whitespace run (`\s*` at the start of a branch): a
/// partial match of only that run is harmless before a delimiter (it only moves whitespace
/// from the text into the delimiter).
fn without_leading_whitespace(hir: &Hir) -> Hir {
    fn is_space_run(h: &Hir) -> bool {
        match h.kind() {
            HirKind::Repetition(r) if r.min == 0 => match r.sub.kind() {
                HirKind::Class(Class::Unicode(c)) => c
                    .ranges()
                    .iter()
                    .all(|r| (r.start()..=r.end()).all(char::is_whitespace)),
                HirKind::Class(Class::Bytes(c)) => c
                    .ranges()
                    .iter()
                    .all(|r| (r.start()..=r.end()).all(|b| b.is_ascii_whitespace())),
                _ => false,
            },
            _ => false,
        }
    }
    match hir.kind() {
        HirKind::Alternation(hs) => {
            Hir::alternation(hs.iter().map(without_leading_whitespace).collect())
        }
        HirKind::Concat(hs) if hs.first().is_some_and(is_space_run) => {
            Hir::concat(hs[1..].to_vec())
        }
        _ => hir.clone(),
    }
}

/// The class a name group repeats (`[^\s<]` of `[^\s<]+`), if it is one, and whether the
/// repetition is greedy.
fn name_class(group: &Hir) -> Option<(Hir, bool)> {
    match group.kind() {
        HirKind::Repetition(r) => match r.sub.kind() {
            HirKind::Class(_) => Some(((*r.sub).clone(), r.greedy)),
            _ => None,
        },
        HirKind::Capture(c) => name_class(&c.sub),
        _ => None,
    }
}

/// `hir` with every capture group called `group` replaced by the literal `text`; `found`
/// receives the group's pattern.
fn replace_group(hir: &Hir, group: &str, text: &str, found: &mut Option<Hir>) -> Hir {
    match hir.kind() {
        HirKind::Capture(c) if is_group(c, group) => {
            *found = Some((*c.sub).clone());
            Hir::literal(text.as_bytes())
        }
        HirKind::Capture(c) => replace_group(&c.sub, group, text, found),
        HirKind::Repetition(r) => {
            let mut r = r.clone();
            r.sub = Box::new(replace_group(&r.sub, group, text, found));
            Hir::repetition(r)
        }
        HirKind::Concat(hs) => Hir::concat(
            hs.iter()
                .map(|h| replace_group(h, group, text, found))
                .collect(),
        ),
        HirKind::Alternation(hs) => Hir::alternation(
            hs.iter()
                .map(|h| replace_group(h, group, text, found))
                .collect(),
        ),
        _ => hir.clone(),
    }
}

/// `hir` with every unbounded repetition `{m,}` made `{m, m + slack}`.
fn bound_repetitions(hir: &Hir, slack: u32) -> Hir {
    match hir.kind() {
        HirKind::Repetition(r) => {
            let mut r = r.clone();
            if r.max.is_none() {
                r.max = Some(r.min.saturating_add(slack));
            }
            r.sub = Box::new(bound_repetitions(&r.sub, slack));
            Hir::repetition(r)
        }
        HirKind::Capture(c) => {
            let mut c = c.clone();
            c.sub = Box::new(bound_repetitions(&c.sub, slack));
            Hir::capture(c)
        }
        HirKind::Concat(hs) => {
            Hir::concat(hs.iter().map(|h| bound_repetitions(h, slack)).collect())
        }
        HirKind::Alternation(hs) => {
            Hir::alternation(hs.iter().map(|h| bound_repetitions(h, slack)).collect())
        }
        _ => hir.clone(),
    }
}

/// `hir` with each class that holds regex-syntax's `\w` (Unicode 16) widened by the `regex`
/// module's word characters (Unicode 17: the reference reads `\w` with them), so that a text
/// avoiding the result holds no match for either parser (LFM2.5's open `,\s*(?P<name>\w+)\(`
/// after `,` and a character only Unicode 17 calls a word character).
fn widen_word(hir: &Hir) -> Hir {
    use regex_syntax::hir::{ClassUnicode, ClassUnicodeRange};
    static WORDS: std::sync::OnceLock<(ClassUnicode, ClassUnicode)> = std::sync::OnceLock::new();
    let (syntax, python) = WORDS.get_or_init(|| {
        let syntax = match regex_syntax::parse(r"\w").map(|h| h.into_kind()) {
            Ok(HirKind::Class(Class::Unicode(class))) => class,
            _ => ClassUnicode::empty(),
        };
        let python = ClassUnicode::new(parser_runtime_core::pychar::word_ranges().filter_map(
            |(lo, hi)| {
                Some(ClassUnicodeRange::new(
                    char::from_u32(lo)?,
                    char::from_u32(hi)?,
                ))
            },
        ));
        (syntax, python)
    });
    match hir.kind() {
        HirKind::Class(Class::Unicode(c)) => {
            let mut missing = syntax.clone();
            missing.difference(c);
            if missing.ranges().is_empty() {
                let mut wide = c.clone();
                wide.union(python);
                Hir::class(Class::Unicode(wide))
            } else {
                hir.clone()
            }
        }
        HirKind::Repetition(r) => {
            let mut r = r.clone();
            r.sub = Box::new(widen_word(&r.sub));
            Hir::repetition(r)
        }
        HirKind::Capture(c) => {
            let mut c = c.clone();
            c.sub = Box::new(widen_word(&c.sub));
            Hir::capture(c)
        }
        HirKind::Concat(hs) => Hir::concat(hs.iter().map(widen_word).collect()),
        HirKind::Alternation(hs) => Hir::alternation(hs.iter().map(widen_word).collect()),
        _ => hir.clone(),
    }
}

/// The length of the shortest word of `table`, if any.
fn shortest(table: &Table) -> Option<usize> {
    let mut seen = vec![false; table.len()];
    let mut frontier = vec![START];
    seen[START as usize] = true;
    for len in 0..=table.len() {
        if frontier.iter().any(|&s| table.is_accepting(s)) {
            return Some(len);
        }
        let mut next = Vec::new();
        for &s in &frontier {
            for b in 0..=255u8 {
                let t = table.next(s, b);
                if t != DEAD && !seen[t as usize] {
                    seen[t as usize] = true;
                    next.push(t);
                }
            }
        }
        if next.is_empty() {
            return None;
        }
        frontier = next;
    }
    None
}

struct Builder {
    options: Options,
    graph: Graph,
}

impl Builder {
    /// The tool-call segments: for each call the template can write, its open and close
    /// segments, linked through the body (`(opens, closes)`).
    fn tool_calls(
        &mut self,
        tools: &Tools,
        field: &FieldModel,
        family: Family,
    ) -> Result<(Vec<usize>, Vec<usize>), ConstrainError> {
        let options = self.options;
        let b = self;
        let mut call_opens = Vec::new();
        let mut call_closes = Vec::new();
        let open = field
            .open
            .as_ref()
            .ok_or_else(|| cerr("fields.tool_calls", "no open"))?;
        let close_spec = field.close.as_ref().ok_or_else(|| {
            cerr(
                field_path(field, "close"),
                "a tool call needs a close delimiter",
            )
        })?;
        let close_at = delimiter_path(field, "close", close_spec);
        let close = b.delimiter(close_spec, None, &close_at)?;
        let mut guard = b.body_guard(close_spec, &close.text, &close_at)?;
        // The json content parser's dialect rewrites its body before reading it: custom string
        // quotes are extracted (`string_delims`), so the standard JSON written here may not
        // hold them. `unquoted_keys` needs nothing: it quotes bare keys only, skipping whole
        // strings (transformers 5.24), and standard JSON has no bare key.
        if let ContentSpec::Json { string_delims, .. } = &field.content {
            let mut risky = Vec::new();
            for (open, close) in string_delims {
                risky.push(Hir::literal(open.as_bytes()));
                risky.push(Hir::literal(close.as_bytes()));
            }
            if !risky.is_empty() {
                let at = field_path(field, "content_args");
                let dialect = Table::avoiding(&Hir::alternation(risky), &b.limits())
                    .map_err(|e| build(&at, e))?;
                guard = guard
                    .intersect(&dialect, &b.limits())
                    .map_err(|e| build(&at, e))?;
            }
        }
        let around = b.ws_around();
        match family {
            Family::JsonCall | Family::JsonCallList | Family::JsonList | Family::PythonCallList => {
                let shape = CallShape::of(field, family)?;
                let ws = ws_hir(options.json.whitespace);
                let mut calls = Vec::new();
                let mut slots = Slots::default();
                for (i, (name, parameters)) in tools.tools.iter().enumerate() {
                    let at = format!("tools/{i}/function/parameters");
                    if family == Family::PythonCallList {
                        calls.push(python_call(name, parameters, &options, &mut slots, i)?);
                        continue;
                    }
                    let args = language(parameters, &options)
                        .and_then(|l| slots.adopt(l))
                        .map_err(|e| schema_error(&at, e))?;
                    calls.push(shape.call(name, args, &ws));
                }
                let calls = shape.list(Hir::alternation(calls));
                let body = Hir::concat(vec![around.clone(), calls, around]);
                let at = "tools";
                let body = b
                    .language_table(&body, &slots, at)?
                    .intersect(&guard, &b.limits())
                    .map_err(|e| build(at, e))?;
                let o = b.delimiter(open, None, &delimiter_path(field, "open", open))?;
                let (o, o_exit) = b.add_delimiter("tool_calls.open", o);
                let body = b.graph.add("tool_calls.body", SegmentKind::Body, body);
                let (c_entry, c) = b.add_delimiter("tool_calls.close", close);
                b.graph.link(o_exit, body);
                b.graph.link(body, c_entry);
                call_opens.push(o);
                call_closes.push(c);
            }
            Family::PythonKeywords => {
                // LFM2.5 writes one block of calls, `<|tool_call_start|>[f(k=v), g()]
                // <|tool_call_end|>`: the open's forms that start with `,` open a call after
                // the first in the block, the others the block's first call; the close's form
                // `)` ends a call before the next, its forms with more than whitespace after the
                // `)` (`)]<|tool_call_end|>`) end the block.
                let ContentSpec::XmlInline {
                    tag_pattern: Some(re),
                    ..
                } = &field.content
                else {
                    return Err(cerr(field_path(field, "content"), "no tag_pattern"));
                };
                let open_at = delimiter_path(field, "open", open);
                let any_text = |prefix: &str| {
                    regex_syntax::Parser::new()
                        .parse(&format!("(?s){prefix}.*"))
                        .map_err(|e| cerr(&open_at, e.to_string()))
                        .and_then(|h| {
                            Table::from_hir(&h, &b.limits()).map_err(|e| build(&open_at, e))
                        })
                };
                let (after_comma, block_start) = (any_text(",")?, any_text("[^,]")?);
                let one_call = restrict(&close, &Table::literal(b")"), &b.limits(), &close_at)?;
                let block_end = restrict(&close, &any_text(r"\)\S")?, &b.limits(), &close_at)?;
                let (mid_entry, mid_exit) = b.add_delimiter("tool_calls.close(call)", one_call);
                let (end_entry, end_exit) = b.add_delimiter("tool_calls.close(block)", block_end);
                for (i, (name, parameters)) in tools.tools.iter().enumerate() {
                    let at = format!("tools/{i}/function/parameters");
                    let body = keyword_body(parameters, re, &options, &at)?
                        .intersect(&guard, &b.limits())
                        .map_err(|e| build(&at, e))?;
                    if body.is_empty() {
                        return Err(cerr(
                            &at,
                            "no call of this tool can be written inside the delimiters",
                        ));
                    }
                    let o = b.delimiter(open, Some(name), &open_at)?;
                    let first = restrict(&o, &block_start, &b.limits(), &open_at)?;
                    let next = restrict(&o, &after_comma, &b.limits(), &open_at)?;
                    let (first, first_exit) =
                        b.add_delimiter(format!("tool_calls.open({name}, block)"), first);
                    let (next, next_exit) =
                        b.add_delimiter(format!("tool_calls.open({name}, next)"), next);
                    let body =
                        b.graph
                            .add(format!("tool_calls.body({name})"), SegmentKind::Body, body);
                    b.graph.link(first_exit, body);
                    b.graph.link(next_exit, body);
                    b.graph.link(body, mid_entry);
                    b.graph.link(body, end_entry);
                    b.graph.link(mid_exit, next);
                    call_opens.push(first);
                }
                call_closes.push(end_exit);
            }
            Family::NamedJson | Family::XmlParameters => {
                for (i, (name, parameters)) in tools.tools.iter().enumerate() {
                    let at = format!("tools/{i}/function/parameters");
                    let body = if family == Family::NamedJson {
                        let args =
                            language(parameters, &options).map_err(|e| schema_error(&at, e))?;
                        b.language_table(
                            &Hir::concat(vec![around.clone(), args.hir, around.clone()]),
                            &args.slots,
                            &at,
                        )?
                    } else {
                        let ContentSpec::XmlInline {
                            tag_pattern: Some(re),
                            ..
                        } = &field.content
                        else {
                            return Err(cerr(field_path(field, "content"), "no tag_pattern"));
                        };
                        let style = template_build::roles::xml_style(re).ok_or_else(|| {
                            cerr(field_path(field, "content_args"), "no known parameter tags")
                        })?;
                        let tags = XmlTags { style, re };
                        xml_body(parameters, &tags, &options, &at)?
                    };
                    let body = body
                        .intersect(&guard, &b.limits())
                        .map_err(|e| build(&at, e))?;
                    if body.is_empty() {
                        return Err(cerr(
                            &at,
                            "no call of this tool can be written inside the delimiters",
                        ));
                    }
                    let o = b.delimiter(open, Some(name), &delimiter_path(field, "open", open))?;
                    let (o, o_exit) = b.add_delimiter(format!("tool_calls.open({name})"), o);
                    let body =
                        b.graph
                            .add(format!("tool_calls.body({name})"), SegmentKind::Body, body);
                    let (c_entry, c) =
                        b.add_delimiter(format!("tool_calls.close({name})"), close.clone());
                    b.graph.link(o_exit, body);
                    b.graph.link(body, c_entry);
                    call_opens.push(o);
                    call_closes.push(c);
                }
            }
        }
        Ok((call_opens, call_closes))
    }

    fn limits(&self) -> Limits {
        self.options.limits
    }

    /// A delimiter, bounded in length.
    fn delimiter(
        &self,
        spec: &DelimiterSpec,
        name: Option<&str>,
        at: &str,
    ) -> Result<DelimiterSet, ConstrainError> {
        let mut aheads: Vec<Option<Lookahead>> = Vec::new();
        match spec {
            DelimiterSpec::Literals(_) => aheads.push(None),
            DelimiterSpec::Pattern { translated, .. } => {
                for branch in &translated.branches {
                    if !aheads.contains(&branch.lookahead) {
                        aheads.push(branch.lookahead.clone());
                    }
                }
            }
        }
        let mut groups = Vec::new();
        let mut texts = Vec::new();
        for lookahead in &aheads {
            let select = Branches::Ahead(lookahead.as_ref());
            let group = self.delimiter_group(spec, name, at, select)?;
            let ahead = match lookahead {
                None => Ahead::Any,
                Some(l) if is_end(l) => Ahead::End,
                Some((_, body)) => {
                    let hir = regex_syntax::Parser::new()
                        .parse(body)
                        .map_err(|e| cerr(at, format!("look-ahead: {e}")))?;
                    let table = Table::from_hir(&hir, &self.limits()).map_err(|e| build(at, e))?;
                    Ahead::Text(Box::new(table))
                }
            };
            texts.push(match &ahead {
                Ahead::Text(t) => concat(vec![group.text.clone(), (**t).clone()], &self.limits())
                    .map_err(|e| build(at, e))?,
                _ => group.text.clone(),
            });
            groups.push((group, ahead));
        }
        let text = union(texts, &self.limits()).map_err(|e| build(at, e))?;
        Ok(DelimiterSet { groups, text })
    }

    /// The branches of a delimiter that `select` picks, bounded in length (a look-ahead's
    /// main part may be empty: the text after it writes what it looks at).
    fn delimiter_group(
        &self,
        spec: &DelimiterSpec,
        name: Option<&str>,
        at: &str,
        select: Branches,
    ) -> Result<Delimiter, ConstrainError> {
        let may_be_empty = matches!(select, Branches::Ahead(Some(_)));
        // Every unbounded repetition (`\s*`, `[^<]*`) at most `delimiter_slack` times more
        // than its minimum, so a delimiter cannot run on.
        let Parts { hir, splits, exact } = delimiter_parts(spec, name, at, select)?;
        let slack = self.options.delimiter_slack as u32;
        let mut tables = Vec::new();
        // Branches without a split name (an empty alternation is the empty language).
        let plain = Table::from_hir(&bound_repetitions(&hir, slack), &self.limits())
            .map_err(|e| build(at, e))?;
        if !plain.is_empty() {
            tables.push(plain);
        }
        for split in splits {
            let pre = Table::from_hir(&bound_repetitions(&split.pre, slack), &self.limits())
                .map_err(|e| build(at, e))?;
            let post = Table::from_hir(&bound_repetitions(&split.post, slack), &self.limits())
                .map_err(|e| build(at, e))?;
            if !split.greedy {
                // A lazy group ends where the rest first matches: the name may hold no byte
                // that the rest can start with (Kimi's `[^<]+?` before `:0`).
                let n = name.unwrap_or_default();
                if let Some(b) = n.bytes().find(|&b| post.next(START, b) != DEAD) {
                    return Err(cerr(
                        at,
                        format!(
                            "the tool name {n:?} holds {:?}, where the template's lazy name \
                             group would end",
                            b as char
                        ),
                    ));
                }
                tables.push(concat(vec![pre, post], &self.limits()).map_err(|e| build(at, e))?);
                continue;
            }
            // Empty, or starting with a character outside the name group's class.
            let mut outside = match split.class.kind() {
                HirKind::Class(Class::Unicode(c)) => c.clone(),
                _ => return Err(cerr(at, "the name group's class is not a Unicode class")),
            };
            outside.negate();
            let head = Hir::concat(vec![
                Hir::class(Class::Unicode(outside)),
                Hir::repetition(regex_syntax::hir::Repetition {
                    min: 0,
                    max: None,
                    greedy: true,
                    sub: Box::new(Hir::dot(regex_syntax::hir::Dot::AnyChar)),
                }),
            ]);
            let head = Hir::alternation(vec![Hir::empty(), head]);
            let head = Table::from_hir(&head, &self.limits()).map_err(|e| build(at, e))?;
            let post = post
                .intersect(&head, &self.limits())
                .map_err(|e| build(at, e))?;
            tables.push(concat(vec![pre, post], &self.limits()).map_err(|e| build(at, e))?);
        }
        let table = union(tables, &self.limits()).map_err(|e| build(at, e))?;
        // Never starting with whitespace: whitespace before a delimiter is written by the
        // text before it (whose parser strips it), so a delimiter cannot start at every
        // position of a whitespace run.
        let shape = regex_syntax::Parser::new()
            .parse(if may_be_empty {
                r"(?:\S(?s:.)*)?"
            } else {
                r"\S(?s:.)*"
            })
            .map_err(|e| cerr(at, e.to_string()))?;
        let shape = Table::from_hir(&shape, &self.limits()).map_err(|e| build(at, e))?;
        let mut out = table
            .intersect(&shape, &self.limits())
            .map_err(|e| build(at, e))?;
        if out.is_empty() {
            // Every form starts with whitespace (DeepSeek R1's call close "\n```\s*..."):
            // those with one whitespace character first. The parser still finds it where the
            // text before ends: that character is where a match can start.
            let led = regex_syntax::Parser::new()
                .parse(r"\s\S(?s:.)*")
                .map_err(|e| cerr(at, e.to_string()))?;
            let led = Table::from_hir(&led, &self.limits()).map_err(|e| build(at, e))?;
            out = table
                .intersect(&led, &self.limits())
                .map_err(|e| build(at, e))?;
        }
        if out.is_empty() {
            return Err(cerr(
                at,
                "the delimiter matches nothing that starts with at most one whitespace \
                 character",
            ));
        }
        let Some(exact) = exact else {
            return self.checked(at, out.clone(), Default::default(), out, may_be_empty);
        };
        // Word assertions: the exact language (class bytes where an edge reads a neighbour)
        // within the shape built above without them. The pattern itself, as the parser runs
        // it (the shape bounds its length): far smaller than its bounded form, whose counted
        // repetitions would each be crossed with the word classifier.
        let limits = self.limits();
        let (words, marks) = crate::word::exact(&exact, &limits).map_err(|e| build(at, e))?;
        let table = crate::word::wrap(&out, marks, &limits)
            .and_then(|shape| words.intersect(&shape, &limits))
            .map_err(|e| build(at, e))?;
        let text = crate::word::text(&table, marks, &limits).map_err(|e| build(at, e))?;
        if text.is_empty() {
            return Err(cerr(
                at,
                "the delimiter matches nothing that starts without whitespace where its word \
                 boundaries hold",
            ));
        }
        self.checked(at, table, marks, text, may_be_empty)
    }

    /// `table` as a delimiter, unless it matches the empty string (and may not).
    fn checked(
        &self,
        at: &str,
        table: Table,
        marks: crate::graph::Marks,
        text: Table,
        may_be_empty: bool,
    ) -> Result<Delimiter, ConstrainError> {
        if !may_be_empty && shortest(&text) == Some(0) {
            return Err(cerr(
                at,
                "a delimiter that matches the empty string is not generated",
            ));
        }
        Ok(Delimiter { table, marks, text })
    }

    /// Adds a delimiter's segments; returns the one to link to (entry) and the one to link
    /// from (exit). A delimiter with look-ahead branches is a segment per look-ahead between
    /// an empty entry and exit (a `$` branch ends the response instead of reaching the exit).
    fn add_delimiter(&mut self, name: impl Into<String>, d: DelimiterSet) -> (usize, usize) {
        let name = name.into();
        if let [(only, Ahead::Any)] = &d.groups[..] {
            let s =
                self.graph
                    .add_marked(name, SegmentKind::Delimiter, only.table.clone(), only.marks);
            return (s, s);
        }
        let empty = || Table::literal(b"");
        let entry = self
            .graph
            .add(format!("{name}.entry"), SegmentKind::Delimiter, empty());
        let exit = self
            .graph
            .add(format!("{name}.exit"), SegmentKind::Delimiter, empty());
        for (i, (group, ahead)) in d.groups.into_iter().enumerate() {
            let s = self.graph.add_marked(
                format!("{name}[{i}]"),
                SegmentKind::Delimiter,
                group.table,
                group.marks,
            );
            self.graph.link(entry, s);
            match ahead {
                Ahead::Any => self.graph.link(s, exit),
                Ahead::Text(t) => {
                    self.graph.set_ahead(s, *t);
                    self.graph.link(s, exit);
                }
                Ahead::End => self.graph.segments[s].last = true,
            }
        }
        (entry, exit)
    }

    /// Texts holding no match of any of `specs`, and ending with no partial match of one
    /// pending (leading whitespace aside): the parser takes the earliest match, so a partial
    /// match left at the end would be completed by the delimiter written next and open the
    /// region earlier (`<function=x` then `<tool_call>\n<function=f>` in Qwen3-Coder).
    fn avoiding(&self, specs: &[(&DelimiterSpec, String)]) -> Result<Table, ConstrainError> {
        let mut parts = Vec::new();
        let mut cores = Vec::new();
        for (spec, at) in specs {
            let hir = widen_word(&delimiter_hir(spec, None, at)?);
            cores.push(without_leading_whitespace(&hir));
            parts.push(hir);
        }
        let at = specs.first().map_or_else(String::new, |(_, at)| at.clone());
        let avoid =
            Table::avoiding(&Hir::alternation(parts), &self.limits()).map_err(|e| build(&at, e))?;
        let quiet =
            Table::quiet(&Hir::alternation(cores), &self.limits()).map_err(|e| build(&at, e))?;
        avoid
            .intersect(&quiet, &self.limits())
            .map_err(|e| build(&at, e))
    }

    /// The body of an explicit region (only its close is watched): no match of the close,
    /// and no ending that the close, written next, would complete into an earlier match
    /// (exact, so Llama 3.1's JSON body may end in `}` before its close `}<|eot_id|>`).
    fn body_guard(
        &self,
        close: &DelimiterSpec,
        close_table: &Table,
        at: &str,
    ) -> Result<Table, ConstrainError> {
        let hir = delimiter_hir(close, None, at)?;
        let avoid = Table::avoiding(&hir, &self.limits()).map_err(|e| build(at, e))?;
        let core = bound_repetitions(
            &without_leading_whitespace(&hir),
            self.options.delimiter_slack as u32,
        );
        let core = Table::from_hir(&core, &self.limits()).map_err(|e| build(at, e))?;
        let end =
            Table::no_bad_suffix(&core, close_table, &self.limits()).map_err(|e| build(at, e))?;
        avoid
            .intersect(&end, &self.limits())
            .map_err(|e| build(at, e))
    }

    /// Text between regions: it holds no prefix literal of any open delimiter (regex-syntax's
    /// literal extractor: every match of the open starts with one of them), so once a
    /// delimiter is being written the text before it has ended and the two never overlap.
    /// A delimiter without such literals falls back to avoiding its whole pattern.
    fn glue(&self, specs: &[(&DelimiterSpec, String)]) -> Result<Table, ConstrainError> {
        use regex_syntax::hir::literal::{ExtractKind, Extractor};
        let mut parts = Vec::new();
        for (spec, at) in specs {
            let hir = delimiter_hir(spec, None, at)?;
            let mut extractor = Extractor::new();
            extractor.kind(ExtractKind::Prefix);
            let seq = extractor.extract(&hir);
            match seq.literals() {
                Some(lits) if !lits.is_empty() && lits.iter().all(|l| !l.as_bytes().is_empty()) => {
                    parts.extend(lits.iter().map(|l| Hir::literal(l.as_bytes())));
                }
                _ => parts.push(hir),
            }
        }
        let at = specs.first().map_or_else(String::new, |(_, at)| at.clone());
        Table::avoiding(&Hir::alternation(parts), &self.limits()).map_err(|e| build(&at, e))
    }

    /// The table of `hir`, which may hold schema languages: their untyped values are spliced
    /// in ([`crate::json::schema_table`]).
    fn table(&self, hir: &Hir, at: &str) -> Result<Table, ConstrainError> {
        self.language_table(hir, &Slots::default(), at)
    }

    /// [`Self::table`] of a HIR whose slot placeholders refer to `slots`.
    fn language_table(&self, hir: &Hir, slots: &Slots, at: &str) -> Result<Table, ConstrainError> {
        crate::json::language_table(hir, slots, self.options.json, &self.limits())
            .map_err(|e| build(at, e))
    }

    fn ws_around(&self) -> Hir {
        Hir::repetition(regex_syntax::hir::Repetition {
            min: 0,
            max: Some(self.options.around_body as u32),
            greedy: true,
            sub: Box::new(Hir::class(Class::Bytes(ClassBytes::new([
                ClassBytesRange::new(b'\t', b'\n'),
                ClassBytesRange::new(b'\r', b'\r'),
                ClassBytesRange::new(b' ', b' '),
            ])))),
        })
    }
}

/// How the JSON call objects of one region are written.
struct CallShape {
    /// The key of the tool name.
    name_key: String,
    /// The keys the arguments object may stand under (json-call-list's `arguments_keys`).
    arguments_keys: Vec<String>,
    /// `None`: one call per region; else a list of calls: the separator between two, and
    /// whether the list stands in brackets.
    list: Option<(String, bool)>,
}

/// Whitespace bytes a list of calls may have around its brackets and separators (a newline
/// and indentation before each call, as Command A writes it).
const LIST_LAYOUT: u32 = 8;

impl CallShape {
    /// The shape of `family` for the tool-call field `field` (its content arguments, or the
    /// keys its transform reads).
    fn of(field: &FieldModel, family: Family) -> Result<CallShape, ConstrainError> {
        let key = |path: &str| {
            field
                .transform
                .as_ref()
                .and_then(|t| t.pointer(path))
                .and_then(Value::as_str)
                .and_then(|p| p.strip_prefix('{')?.strip_suffix('}'))
                .map(str::to_string)
                .ok_or_else(|| cerr(field_path(field, "transform"), "no key placeholder"))
        };
        Ok(match (family, &field.content) {
            (
                Family::JsonCallList,
                ContentSpec::JsonCallList {
                    brackets,
                    separator,
                    name_key,
                    arguments_keys,
                },
            ) => CallShape {
                name_key: name_key.to_string(),
                arguments_keys: arguments_keys.iter().map(|k| k.to_string()).collect(),
                // `optional` reads a bracketed list too.
                list: Some((
                    separator.to_string(),
                    *brackets != parser_runtime_core::tables::CallBrackets::Absent,
                )),
            },
            (Family::JsonList, _) => CallShape {
                name_key: key("/function/name")?,
                arguments_keys: vec![key("/function/arguments")?],
                list: Some((",".to_string(), true)),
            },
            // The calls are written by [`python_call`]; only the list is shaped here.
            (Family::PythonCallList, _) => CallShape {
                name_key: String::new(),
                arguments_keys: Vec::new(),
                list: Some((",".to_string(), true)),
            },
            _ => CallShape {
                name_key: "name".into(),
                arguments_keys: vec!["arguments".into()],
                list: None,
            },
        })
    }

    /// One call object of tool `name` with arguments `args`, `ws` between its tokens. In a
    /// list, real outputs' members the parser leaves out may stand around them: Command A's
    /// `"tool_call_id": "0"` or Llama 3.1's `"type": "function"` first, Mistral's
    /// `"id": "k3Zq9TfA2"` last.
    fn call(&self, name: &str, args: Hir, ws: &Hir) -> Hir {
        let lit = |text: &str| Hir::literal(text.as_bytes());
        let key = |k: &str| Value::from(k).to_string();
        let member = |k: &str, value: Hir| {
            Hir::concat(vec![lit(&key(k)), ws.clone(), lit(":"), ws.clone(), value])
        };
        let comma = Hir::concat(vec![ws.clone(), lit(","), ws.clone()]);
        let mut items = vec![lit("{"), ws.clone()];
        let fixed = |p: &str| {
            regex_syntax::Parser::new()
                .parse(p)
                .expect("a fixed pattern")
        };
        let free = |k: &str| k != self.name_key && !self.arguments_keys.iter().any(|a| a == k);
        if self.list.is_some() {
            let mut first = Vec::new();
            if free("type") {
                first.push(member("type", lit("\"function\"")));
            }
            if free("tool_call_id") {
                first.push(member("tool_call_id", fixed(r#""[0-9]{1,4}""#)));
            }
            items.push(Hir::alternation(vec![
                Hir::empty(),
                Hir::concat(vec![Hir::alternation(first), comma.clone()]),
            ]));
        }
        items.extend([
            member(&self.name_key, lit(&Value::from(name).to_string())),
            comma.clone(),
            Hir::alternation(
                self.arguments_keys
                    .iter()
                    .map(|k| member(k, args.clone()))
                    .collect(),
            ),
        ]);
        if self.list.is_some() && free("id") {
            let id = member("id", fixed(r#""[A-Za-z0-9]{1,16}""#));
            items.push(Hir::alternation(vec![
                Hir::empty(),
                Hir::concat(vec![comma, id]),
            ]));
        }
        items.extend([ws.clone(), lit("}")]);
        Hir::concat(items)
    }

    /// The region's calls: one `call`, or a list of at least one.
    fn list(&self, call: Hir) -> Hir {
        let Some((separator, brackets)) = &self.list else {
            return call;
        };
        let layout = ws_hir(LIST_LAYOUT as usize);
        let more = Hir::repetition(regex_syntax::hir::Repetition {
            min: 0,
            max: None,
            greedy: true,
            sub: Box::new(Hir::concat(vec![
                layout.clone(),
                Hir::literal(separator.as_bytes()),
                layout.clone(),
                call.clone(),
            ])),
        });
        let calls = Hir::concat(vec![call, more]);
        if *brackets {
            Hir::concat(vec![
                Hir::literal(&b"["[..]),
                layout.clone(),
                calls,
                layout,
                Hir::literal(&b"]"[..]),
            ])
        } else {
            calls
        }
    }
}

/// Whether `name` is a whole name of the `python-call-list` grammar
/// (`[A-Za-z_][A-Za-z0-9_]*([-.][A-Za-z0-9_]+)*`), which the parser reads back as it is.
fn python_name(name: &str) -> bool {
    let mut parts = name.split(['-', '.']);
    let first = parts.next().unwrap_or_default();
    let word = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    first
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && word(first)
        && parts.all(word)
}

/// One Python call of tool `i`, `name(k=v, ...)`, as `python-call-list` reads it: the
/// parameters as keyword arguments in declared order (required ones always, optional ones
/// may be left out), each value a Python literal of its schema ([`Literals::Python`]), `,`
/// with up to `max(1, whitespace)` whitespace bytes on each side between them, `=` with up
/// to `whitespace` (the JSON whitespace option). Strict mode only: general mode writes
/// values (integers past 2^53, open objects that may repeat a key) the parser refuses.
fn python_call(
    name: &str,
    parameters: &Value,
    options: &Options,
    slots: &mut Slots,
    i: usize,
) -> Result<Hir, ConstrainError> {
    let at = format!("tools/{i}/function");
    if options.json.mode != SchemaMode::Strict {
        return Err(cerr(
            &at,
            "python-call-list calls are generated in strict mode only (general mode writes \
             values the parser refuses: integers past 2^53, objects that may repeat a key)",
        ));
    }
    if !python_name(name) {
        return Err(cerr(
            format!("{at}/name"),
            format!(
                "the tool name {name:?} is not a python-call-list name \
                 (`[A-Za-z_][A-Za-z0-9_]*([-.][A-Za-z0-9_]+)*`)"
            ),
        ));
    }
    let at = format!("{at}/parameters");
    let mut python = *options;
    python.json.literals = Literals::Python;
    let lit = |text: &str| Hir::literal(text.as_bytes());
    let ws = ws_hir(options.json.whitespace);
    let (required, properties) = declared_parameters(parameters, &at)?;
    let mut members = Vec::new();
    for (key, schema) in properties.into_iter().flatten() {
        let p_at = format!(
            "{at}/properties/{}",
            structured_outputs::schema::escape_token(key)
        );
        if !python_name(key) {
            return Err(cerr(
                p_at,
                "the parameter name is not a python-call-list keyword argument \
                 (`[A-Za-z_][A-Za-z0-9_]*([-.][A-Za-z0-9_]+)*`)",
            ));
        }
        let value = language(&wrap_with_defs(schema, parameters), &python)
            .and_then(|l| slots.adopt(l))
            .map_err(|e| schema_error(&p_at, e))?;
        let member = Hir::concat(vec![lit(key), ws.clone(), lit("="), ws.clone(), value]);
        members.push((member, required.contains(&key.as_str())));
    }
    let args = if members.is_empty() {
        Hir::empty()
    } else {
        let writer = crate::json::Writer {
            ws: ws_hir(options.json.whitespace.max(1)),
            max_nodes: options.json.max_nodes,
        };
        let (body, may_be_empty) = writer
            .members(members, "")
            .map_err(|e| schema_error(&at, e))?;
        if may_be_empty {
            Hir::alternation(vec![Hir::empty(), body])
        } else {
            body
        }
    };
    Ok(Hir::concat(vec![
        lit(name),
        lit("("),
        ws.clone(),
        args,
        ws,
        lit(")"),
    ]))
}

/// The parsed tool list: name -> parameters schema (closed, as strict tools read them).
struct Tools {
    tools: Vec<(String, Value)>,
}

/// The first of `errors` (from strict tools or a response format), its pointer under `at`.
fn first_error(at: &str, errors: structured_outputs::SchemaErrors) -> ConstrainError {
    errors.0.into_iter().next().map_or_else(
        || cerr(at, "invalid"),
        |e| {
            cerr(
                format!("{at}{}", e.pointer),
                format!("{}: {}", e.keyword, e.reason),
            )
        },
    )
}

fn read_tools(request: &Request, mode: SchemaMode) -> Result<Tools, ConstrainError> {
    let mut tools: Vec<(String, Value)> = if mode == SchemaMode::Strict {
        // The strict-tools rules: the same contract the parsed message is checked with, and
        // the same reading of the tool list.
        let strict = StrictTools::new(&request.tools).map_err(|e| first_error("tools", e))?;
        strict
            .tools()
            .iter()
            .map(|t| (t.name().to_string(), t.closed().clone()))
            .collect()
    } else {
        general_tools(&request.tools)?
    };
    if let ToolChoice::Function(name) = &request.tool_choice {
        if !tools.iter().any(|(n, _)| n == name) {
            return Err(cerr(
                "tool_choice",
                format!("{name:?} is not a declared tool"),
            ));
        }
        tools.retain(|(n, _)| n == name);
    }
    Ok(Tools { tools })
}

/// General mode's reading of the tool list: each tool's name and parameters as given (no
/// parameters: an object without properties); objects close only by the mode's `closed`.
fn general_tools(tools: &[Value]) -> Result<Vec<(String, Value)>, ConstrainError> {
    let mut out: Vec<(String, Value)> = Vec::new();
    for (i, tool) in tools.iter().enumerate() {
        let function = tool.get("function").unwrap_or(tool);
        let name = function
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| cerr(format!("tools/{i}/function/name"), "missing"))?;
        if out.iter().any(|(n, _)| n == name) {
            return Err(cerr(
                format!("tools/{i}/function/name"),
                format!("{name:?} is declared twice"),
            ));
        }
        let parameters = function
            .get("parameters")
            .cloned()
            .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}}));
        out.push((name.to_string(), parameters));
    }
    Ok(out)
}

/// The language of one XML parameter value (the raw text between the tags), typed by its
/// schema as strict-tools typing reads it.
fn xml_value(
    schema: &Value,
    document: &Value,
    options: &Options,
    at: &str,
) -> Result<SchemaHir, ConstrainError> {
    let mut schema = schema;
    for _ in 0..32 {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(r) => {
                schema = resolve_ref(document, r)
                    .ok_or_else(|| cerr(at, format!("$ref {r:?} points to nothing")))?;
            }
            None => break,
        }
    }
    // The parameter's type as strict-tools typing reads it (`type`, else the types of
    // `enum`/`const`), on the schema the `$ref`s lead to.
    let types = schema.as_object().map(value_types).unwrap_or_default();
    let (&[ty], None) = (types.as_slice(), schema.get("anyOf")) else {
        return Err(cerr(
            at,
            "an XML parameter is generated for exactly one type (no anyOf or type lists)",
        ));
    };
    let literal_values = schema
        .get("enum")
        .and_then(Value::as_array)
        .cloned()
        .or_else(|| schema.get("const").map(|c| vec![c.clone()]));
    if let Some(values) = literal_values {
        let parts: Vec<Hir> = values
            .iter()
            .filter(|v| JsonType::of(v) == ty || (ty == JsonType::Number && v.is_number()))
            .map(|v| match v {
                Value::String(s) => Hir::literal(s.as_bytes()),
                other => Hir::literal(other.to_string().as_bytes()),
            })
            .collect();
        if parts.is_empty() {
            return Err(cerr(at, "no value of the parameter's type"));
        }
        return Ok(plain(Hir::alternation(parts)));
    }
    let fixed = |p: &str| {
        regex_syntax::Parser::new()
            .parse(p)
            .map(plain)
            .map_err(|e| cerr(at, e.to_string()))
    };
    match ty {
        JsonType::String => {
            if schema.get("pattern").is_some() || schema.get("format").is_some() {
                // The JSON language of the string, without its quotes and escapes, is not
                // the raw text; generate formats and patterns only for JSON arguments.
                Err(cerr(
                    at,
                    "pattern and format are generated for JSON arguments, not XML parameters",
                ))
            } else {
                // Any text; the parameter's close tag is kept out by the caller.
                fixed(r"(?s:.)*")
            }
        }
        JsonType::Integer => fixed(r"-?(?:0|[1-9][0-9]{0,17})"),
        JsonType::Number => {
            fixed(r"-?(?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,15})?(?:[eE][+-]?[0-9]{1,2})?")
        }
        // Python's spelling too: the tools' typing reads it (Nemotron 3 writes `True`).
        JsonType::Boolean => fixed("true|false|True|False"),
        JsonType::Null => fixed("null"),
        JsonType::Object | JsonType::Array => {
            let doc = wrap_with_defs(schema, document);
            language(&doc, options).map_err(|e| schema_error(at, e))
        }
    }
}

/// A language without slots.
fn plain(hir: Hir) -> SchemaHir {
    SchemaHir {
        hir,
        slots: Slots::default(),
    }
}

/// A schema's language read as `options.json` says (strict subset or general JSON Schema),
/// its automata built within `options.limits`.
fn language(schema: &Value, options: &Options) -> Result<SchemaHir, crate::json::CompileError> {
    SchemaLanguage::new(schema, options.json)
        .with_limits(options.limits)
        .compile_language()
}

/// `schema` as a document of its own that still resolves the tool's `$defs`.
fn wrap_with_defs(schema: &Value, document: &Value) -> Value {
    let mut out = schema.clone();
    if let (Value::Object(map), Some(defs)) = (&mut out, document.get("$defs")) {
        map.entry("$defs").or_insert_with(|| defs.clone());
    }
    out
}

/// Compiles the constraint. See the module documentation for the grammar.
///
/// Errors ([`ConstrainError`], naming the template path, the tools pointer or the request
/// field): tools outside the strict-tools rules; a tool choice naming no tool; a response
/// format outside the subset; a template whose tool-call field is not one of the
/// [`Family`]s, whose content is not text, or whose delimiters end in a negative look-ahead
/// or have an ASCII word assertion (`fields.X.open_pattern`); a schema generation does not cover;
/// for `python-call-list`, a tool or parameter name outside its name grammar
/// (`tools/N/function/name`, `.../parameters/properties/K`), a value without a type, or general
/// schema mode (`tools/N/function`); tables past [`Options::limits`] (in general mode after a
/// second try with untyped values nested [`SHALLOW_ANY_DEPTH`] levels).
pub fn compile(
    template: &TemplateModel,
    request: &Request,
    options: &Options,
) -> Result<Constraint, ConstrainError> {
    with_shallow_retry(options, |o| compile_once(template, request, o))
}

/// Untyped values' nesting ([`JsonOptions::any_depth`]) of the second try of
/// [`with_shallow_retry`].
pub const SHALLOW_ANY_DEPTH: usize = 3;

/// The share of `Limits::max_states` the first try of [`with_shallow_retry`] may build in
/// general mode with untyped values nested deeper than [`SHALLOW_ANY_DEPTH`] (a quarter:
/// 50,000 states under the default limit): a schema past it is built again at that depth
/// rather than carried on (such first tries cost seconds before they failed at 200,000
/// states; at three levels the same schemas build in a fraction of it). Raising the limit
/// raises it too.
pub const FIRST_TRY_SHARE: usize = 4;

/// `attempt` under `options`' time budget (one deadline for every try); where a size budget
/// ends it (states, automaton bytes, work: not time, not the schema's own regex size) and
/// untyped values nest deeper than [`SHALLOW_ANY_DEPTH`] in general mode, once more with
/// that depth: each level about doubles the reader of an untyped value, and where values
/// cannot be read in place (alternatives that start on the same byte) the copies can pass
/// the budget at 5 levels and not at 3. That first try stops at a [`FIRST_TRY_SHARE`] of
/// the state limit. When the second try fails too, its error is returned if the first one
/// was that lower state budget, else the first error.
fn with_shallow_retry<T>(
    options: &Options,
    attempt: impl Fn(&Options) -> Result<T, ConstrainError>,
) -> Result<T, ConstrainError> {
    let mut options = *options;
    if let Some(t) = options.time_budget.take() {
        options.limits.deadline = std::time::Instant::now().checked_add(t);
    }
    let shallower = matches!(options.json.mode, SchemaMode::General { .. })
        && options.json.any_depth > SHALLOW_ANY_DEPTH;
    let mut first_try = options;
    if shallower {
        first_try.limits.max_states = (first_try.limits.max_states / FIRST_TRY_SHARE).max(1);
    }
    match attempt(&first_try) {
        Err(e)
            if shallower
                && matches!(
                    e.budget,
                    Some(Budget::States | Budget::AutomatonBytes | Budget::Work)
                ) =>
        {
            options.json.any_depth = SHALLOW_ANY_DEPTH;
            attempt(&options).map_err(|second| {
                // The first error, unless only the first try's lower state budget ended it.
                if first_try.limits.max_states < options.limits.max_states
                    && e.budget == Some(Budget::States)
                {
                    second
                } else {
                    e
                }
            })
        }
        other => other,
    }
}

/// [`compile`], one try (the deadline already in `options.limits`).
fn compile_once(
    template: &TemplateModel,
    request: &Request,
    options: &Options,
) -> Result<Constraint, ConstrainError> {
    let asked = Asked::read(request, options.json.mode)?;
    let layout = Layout::of(template, asked.tools.is_some())?;
    let mut b = Builder {
        options: *options,
        graph: Graph::default(),
    };
    let reasoning = match layout.reasoning {
        Some(region) => Some(b.reasoning(region)?),
        None => None,
    };
    let (call_opens, call_closes) = match (&asked.tools, layout.tool_field, layout.family) {
        (Some(tools), Some(field), Some(family)) => b.tool_calls(tools, field, family)?,
        _ => (Vec::new(), Vec::new()),
    };
    let mut turn = Turn {
        reasoning,
        reasoning_at_start: layout
            .reasoning
            .is_some_and(|(_, open, _)| anchored_at_start(open)),
        reasoning_reads_ahead: far_avoided(template, layout.reasoning.map(|r| r.0))?.is_some(),
        call_opens,
        call_closes,
        calls_required: asked.calls_required,
        json_content: b.json_content(&asked.format)?,
        // Every explicit open (watched wherever no explicit region is open).
        opens: template
            .fields
            .iter()
            .filter_map(|f| f.open.as_ref().map(|o| (o, delimiter_path(f, "open", o))))
            .collect(),
        calls_first: None,
        one_region: layout.tool_field.is_some_and(|f| !f.repeats),
    };
    if let (Some(tools), Some(field), Some(Family::PythonCallList), Some(_), Format::Text) = (
        &asked.tools,
        layout.tool_field,
        layout.family,
        layout.implicit,
        &asked.format,
    ) {
        turn.calls_first = Some(b.tool_calls(tools, field, Family::PythonCallList)?);
    }
    b.graph.starts = match layout.implicit {
        Some(field) => b.implicit_turn(field, &turn)?,
        None => b.region_turn(layout.content_field, &turn)?,
    };
    if let Some(x) = far_avoided(template, layout.reasoning.map(|r| r.0))? {
        // Nothing but the reasoning body and its close may hold `X`: elsewhere it would
        // make the reasoning open match before it.
        let at = "fields.reasoning_content.open_pattern";
        let avoid = Table::avoiding(&x, &options.limits).map_err(|e| build(at, e))?;
        let reasoning_body = layout.reasoning.map(|r| format!("{}.body", r.0.name));
        // The reasoning open matches with nothing at the start, so a longer match there of a
        // delimiter watched outside regions wins: the reasoning may not start with a byte
        // one of them starts with.
        let mut watched = turn.opens.clone();
        if let Some(close) = layout.implicit.and_then(|f| f.close.as_ref()) {
            watched.push((close, "fields.content.close".to_string()));
        }
        let slack = options.delimiter_slack as u32;
        let mut first = Vec::new();
        for (spec, at) in &watched {
            if layout.reasoning.is_some_and(|r| std::ptr::eq(r.1, *spec)) {
                continue;
            }
            let hir = bound_repetitions(&delimiter_hir(spec, None, at)?, slack);
            let t = Table::from_hir(&hir, &options.limits).map_err(|e| build(at, e))?;
            first.extend((0..=255u8).filter(|&b| t.next(START, b) != DEAD));
        }
        let allowed: Vec<ClassBytesRange> = (0..=255u8)
            .filter(|b| !first.contains(b))
            .map(|b| ClassBytesRange::new(b, b))
            .collect();
        let any = Hir::repetition(regex_syntax::hir::Repetition {
            min: 0,
            max: None,
            greedy: true,
            sub: Box::new(Hir::class(Class::Bytes(ClassBytes::new([
                ClassBytesRange::new(0, 255),
            ])))),
        });
        let head = Hir::alternation(vec![
            Hir::empty(),
            Hir::concat(vec![
                Hir::class(Class::Bytes(ClassBytes::new(allowed))),
                any,
            ]),
        ]);
        let head = Table::from_hir(&head, &options.limits).map_err(|e| build(at, e))?;
        for seg in &mut b.graph.segments {
            let reasoning = Some(&seg.name) == reasoning_body.as_ref();
            if seg.kind != SegmentKind::Delimiter {
                let keep = if reasoning { &head } else { &avoid };
                let t = seg
                    .table
                    .intersect(keep, &options.limits)
                    .map_err(|e| build(at, e))?;
                seg.table = std::sync::Arc::new(t);
            }
        }
    }
    let machine = Machine::build(b.graph, &options.limits).map_err(|e| build("response", e))?;
    if machine.table.is_empty() {
        return Err(cerr(
            "response",
            "no response satisfies the template and the request",
        ));
    }
    Ok(Constraint {
        machine,
        family: layout.family,
    })
}

/// What the request asks for: the tools that may be called (none when the tool choice is
/// `none`), the content's format, and whether the turn must call.
struct Asked {
    tools: Option<Tools>,
    format: Format,
    calls_required: bool,
}

/// The content's format: no JSON, JSON mode, or a schema (with its path in the request).
enum Format {
    Text,
    JsonObject,
    Schema(Value, &'static str),
}

impl Format {
    /// Strict mode: the response format as the contract reads it (the subset gate checks
    /// the schema). General mode: the same shapes, the schema as it is.
    fn read(value: &Value, mode: SchemaMode) -> Result<Self, ConstrainError> {
        if mode == SchemaMode::Strict {
            return Ok(
                match ResponseFormat::from_request(value)
                    .map_err(|e| first_error("response_format", e))?
                {
                    ResponseFormat::Text => Self::Text,
                    ResponseFormat::JsonObject => Self::JsonObject,
                    ResponseFormat::JsonSchema(schema) => {
                        Self::Schema(schema.schema.clone(), "response_format/json_schema/schema")
                    }
                },
            );
        }
        match value.get("type").and_then(Value::as_str) {
            Some("text") => Ok(Self::Text),
            Some("json_object") => Ok(match value.get("schema") {
                None => Self::JsonObject,
                Some(schema) => Self::Schema(schema.clone(), "response_format/schema"),
            }),
            Some("json_schema") => value
                .pointer("/json_schema/schema")
                .map(|s| Self::Schema(s.clone(), "response_format/json_schema/schema"))
                .ok_or_else(|| cerr("response_format/json_schema/schema", "missing")),
            Some(other) => Err(cerr(
                "response_format/type",
                format!("unknown response format {other:?} (text, json_object, json_schema)"),
            )),
            None => Err(cerr("response_format/type", "missing")),
        }
    }
}

impl Asked {
    fn read(request: &Request, mode: SchemaMode) -> Result<Asked, ConstrainError> {
        let tools = if request.tools.is_empty() || request.tool_choice == ToolChoice::None {
            None
        } else {
            Some(read_tools(request, mode)?)
        };
        let format = match &request.response_format {
            None => Format::Text,
            Some(v) => Format::read(v, mode)?,
        };
        let calls_required = matches!(
            request.tool_choice,
            ToolChoice::Required | ToolChoice::Function(_)
        );
        if calls_required && tools.is_none() {
            return Err(cerr(
                "tool_choice",
                "a call is required but no tool is declared",
            ));
        }
        Ok(Asked {
            tools,
            format,
            calls_required,
        })
    }
}

/// The fields generation writes, by the roles the compiler gave them.
struct Layout<'t> {
    /// The reasoning field with its open and close, if it has both.
    reasoning: Option<(&'t FieldModel, &'t DelimiterSpec, &'t DelimiterSpec)>,
    /// The tool-call field, if it has an open delimiter.
    tool_field: Option<&'t FieldModel>,
    /// Its family, when the request has tools.
    family: Option<Family>,
    implicit: Option<&'t FieldModel>,
    content_field: Option<&'t FieldModel>,
}

impl<'t> Layout<'t> {
    fn of(template: &'t TemplateModel, with_tools: bool) -> Result<Layout<'t>, ConstrainError> {
        let fields = &template.fields;
        let reasoning = fields
            .iter()
            .find(|f| f.role == Role::Reasoning)
            .and_then(|f| Some((f, f.open.as_ref()?, f.close.as_ref()?)));
        let tool_field = fields
            .iter()
            .find(|f| matches!(f.role, Role::ToolCalls { .. }) && f.open.is_some());
        let content_field = fields.iter().find(|f| f.role == Role::Content);
        if let Some(c) = content_field {
            if !matches!(c.content, ContentSpec::Text { .. }) {
                return Err(cerr(
                    field_path(c, "content"),
                    "content is generated only as text",
                ));
            }
        }
        let family =
            match (with_tools, tool_field) {
                (true, Some(f)) => match f.role {
                    Role::ToolCalls {
                        family: Some(family),
                    } => Some(family),
                    // Named, so that a template of this project's call-list parser is not
                    // refused as an unknown shape.
                    _ if matches!(f.content, ContentSpec::JsonCallList { .. }) => {
                        return Err(cerr(
                            field_path(f, "transform"),
                            "a json-call-list field is generated with `transform_each` and the \
                             transform `function: {\"name\": \"{name}\", \"arguments\": \
                             \"{arguments}\"}` (what the parser's calls hold)",
                        ))
                    }
                    _ if matches!(&f.content, ContentSpec::XmlInline {
                        value_parser: Some(p),
                        ..
                    } if !matches!(**p, ContentSpec::Text { .. })) =>
                    {
                        return Err(cerr(
                            field_path(f, "content_args"),
                            "xml-inline parameters are generated with a `text` value parser, \
                             or over `k=v` tags with LFM2.5's `json` value parser (`'` string \
                             delimiters, `allow_non_json`) and the name in the open delimiter; \
                             another value parser is not a generated family",
                        ))
                    }
                    _ if matches!(f.content, ContentSpec::PythonCallList) => {
                        return Err(cerr(
                            field_path(f, "transform"),
                            "a python-call-list field is generated with `transform_each` and the \
                             transform `function: {\"name\": \"{name}\", \"arguments\": \
                             \"{arguments}\"}` (what the parser's calls hold)",
                        ))
                    }
                    _ => return Err(cerr(
                        field_path(f, "transform"),
                        "not a generated tool-call family (JSON call in delimiters, name in the \
                         open delimiter with JSON arguments, Qwen3-Coder's XML parameters \
                         (and MiniMax's, GLM's) tags, or a list of JSON calls: \
                         json-call-list, or json with `transform_each` reading two keys of each \
                         call)",
                    )),
                },
                (true, None) => {
                    return Err(cerr(
                        "fields",
                        "the template has no tool_calls field with an open delimiter",
                    ))
                }
                (false, _) => None,
            };
        Ok(Layout {
            reasoning,
            tool_field,
            family,
            implicit: template.implicit.map(|i| &fields[i]),
            content_field,
        })
    }
}

/// The segments a turn is assembled from.
struct Turn<'t> {
    /// The reasoning region's (open, close) segments.
    reasoning: Option<(usize, usize)>,
    /// Whether the reasoning open matches only at the start of the text (`^`): nothing may
    /// be written before it.
    reasoning_at_start: bool,
    /// Whether the reasoning open is a look-ahead reading any text ([`far_lookahead`]): it
    /// matches at the very start, nothing is written before it.
    reasoning_reads_ahead: bool,
    call_opens: Vec<usize>,
    call_closes: Vec<usize>,
    calls_required: bool,
    /// The content value's table when the response format asks for JSON.
    json_content: Option<Table>,
    /// Every explicit open delimiter with its template path.
    opens: Vec<(&'t DelimiterSpec, String)>,
    /// A second copy of the call segments (`(opens, closes)`) for turns that start with the
    /// calls and may end with text after them (an implicit field's text): LFM2 writes a
    /// sentence after its call block (`python-call-list`), and its parser keeps only the text
    /// after the block when text stands on both sides.
    calls_first: Option<(Vec<usize>, Vec<usize>)>,
    /// Whether the turn holds one call region at most: a tool-call field that does not
    /// repeat, in every family (the parser keeps the calls of its last region only, so a
    /// second block would drop the first one's calls: Llama 3.1, Granite 3, Mistral before
    /// v11, Command A, Phi-4-mini, LFM2).
    one_region: bool,
}

impl Builder {
    /// The reasoning region: open, body (anything but its close), close. Returns the open
    /// and close segments.
    fn reasoning(
        &mut self,
        (r, open, close): (&FieldModel, &DelimiterSpec, &DelimiterSpec),
    ) -> Result<(usize, usize), ConstrainError> {
        let o = self.delimiter(open, None, &delimiter_path(r, "open", open))?;
        let c = self.delimiter(close, None, &delimiter_path(r, "close", close))?;
        let body = self.body_guard(close, &c.text, &delimiter_path(r, "close", close))?;
        let (o, o_exit) = self.add_delimiter(format!("{}.open", r.name), o);
        let body = self
            .graph
            .add(format!("{}.body", r.name), SegmentKind::Body, body);
        let (c_entry, c) = self.add_delimiter(format!("{}.close", r.name), c);
        self.graph.link(o_exit, body);
        self.graph.link(body, c_entry);
        Ok((o, c))
    }

    /// The content value, when a response format asks for JSON: the value with a little
    /// whitespace around it.
    fn json_content(&self, format: &Format) -> Result<Option<Table>, ConstrainError> {
        let options = &self.options;
        let value = match format {
            Format::Text => return Ok(None),
            Format::JsonObject => crate::json::json_mode_table(
                structured_outputs::JSON_MODE_MAX_DEPTH,
                options.json.whitespace,
                &options.limits,
            )
            .map_err(|e| build("response_format", e))?,
            Format::Schema(schema, at) => {
                let language = language(schema, options).map_err(|e| schema_error(at, e))?;
                self.language_table(&language.hir, &language.slots, "response_format")?
            }
        };
        let ws = self.table(&self.ws_around(), "response_format")?;
        concat(vec![ws.clone(), value, ws], &options.limits)
            .map(Some)
            .map_err(|e| build("response_format", e))
    }

    /// A turn with an implicit field: free text (or JSON content), then calls, then the end
    /// of turn. Returns the start segments.
    fn implicit_turn(
        &mut self,
        field: &FieldModel,
        turn: &Turn,
    ) -> Result<Vec<usize>, ConstrainError> {
        let mut watched = turn.opens.clone();
        if let Some(close) = &field.close {
            watched.push((close, delimiter_path(field, "close", close)));
        }
        let free = self.avoiding(&watched)?;
        let close = match &field.close {
            Some(close) => {
                Some(self.delimiter(close, None, &delimiter_path(field, "close", close))?)
            }
            None => None,
        };
        let end = match &close {
            Some(t) => self.add_delimiter(format!("{}.close", field.name), t.clone()),
            None => {
                let end = self
                    .graph
                    .add("end", SegmentKind::Delimiter, Table::literal(b""));
                (end, end)
            }
        };
        self.graph.segments[end.1].last = true;
        // Text after the calls (LFM2's layout), the same free text.
        let after_calls = turn.calls_first.as_ref().map(|_| {
            self.graph.add(
                format!("{}.text(after calls)", field.name),
                SegmentKind::Body,
                free.clone(),
            )
        });
        let content = match &turn.json_content {
            None => self
                .graph
                .add(format!("{}.text", field.name), SegmentKind::Body, free),
            Some(json) => {
                let t = json
                    .intersect(&free, &self.limits())
                    .map_err(|e| build("response_format", e))?;
                self.graph
                    .add(format!("{}.json", field.name), SegmentKind::Body, t)
            }
        };
        // What may come first (or right after the reasoning region): the content; with JSON
        // content also a call directly (a turn of calls has no content); with calls required
        // and JSON content only calls.
        let text_content = turn.json_content.is_none();
        let mut entries = Vec::new();
        if text_content || !turn.calls_required {
            entries.push(content);
        }
        if !text_content {
            entries.extend(turn.call_opens.iter().copied());
        }
        if let Some((opens, _)) = &turn.calls_first {
            entries.extend(opens.iter().copied());
        }
        let mut starts = entries.clone();
        if let Some((o, c)) = turn.reasoning {
            starts.push(o);
            if !turn.reasoning_at_start && !turn.reasoning_reads_ahead {
                // Whitespace before it (GLM 4.5 writes a newline first): the parser opens the
                // content with it, which stays empty.
                let gap = self.table(&self.ws_around(), "fields")?;
                let gap = self.graph.add("reasoning.gap", SegmentKind::Body, gap);
                self.graph.link(gap, o);
                starts.push(gap);
            }
            for &e in &entries {
                self.graph.link(c, e);
            }
        }
        if !turn.calls_required {
            self.graph.link(content, end.0);
        }
        if text_content {
            for &o in &turn.call_opens {
                self.graph.link(content, o);
            }
        }
        // The implicit field's close may also stand between the content and the calls, and
        // twice after them: the parser reads it wherever no region is open (DeepSeek V3.1
        // writes `text<｜tool▁calls▁begin｜>calls<｜tool▁calls▁end｜><｜end▁of▁sentence｜>`,
        // all three alternatives of its content's close; Kimi K2 ends its calls with
        // `<|tool_calls_section_end|><|im_end|>`).
        let mut calls_end = end.0;
        if let (Some(close), true) = (&close, !turn.call_opens.is_empty()) {
            let name = &field.name;
            if text_content {
                let before =
                    self.add_delimiter(format!("{name}.close(before calls)"), close.clone());
                self.graph.link(content, before.0);
                // A little whitespace before the first call (DeepSeek R1 may write a newline).
                let gap = self.table(&self.ws_around(), "tool_calls")?;
                let gap = self
                    .graph
                    .add("tool_calls.gap(first)", SegmentKind::Body, gap);
                self.graph.link(before.1, gap);
                for &o in &turn.call_opens {
                    self.graph.link(gap, o);
                }
            }
            let first = self.add_delimiter(format!("{name}.close(after calls)"), close.clone());
            let second = self.add_delimiter(format!("{name}.close(end)"), close.clone());
            self.graph.link(first.1, second.0);
            self.graph.segments[first.1].last = true;
            self.graph.segments[second.1].last = true;
            calls_end = first.0;
        }
        // After a call: a little whitespace (models write a newline between calls), then
        // another call or the end of turn. A turn may also stop right after a call: the
        // model's EOS ends it (Llama 3.1's call close `}<|eot_id|>` already holds its
        // end-of-turn token).
        for &c in &turn.call_closes {
            self.graph.segments[c].last = true;
        }
        if !turn.call_closes.is_empty() {
            let gap = self.table(&self.ws_around(), "tool_calls")?;
            let gap = self.graph.add("tool_calls.gap", SegmentKind::Body, gap);
            for &c in &turn.call_closes {
                self.graph.link(c, gap);
            }
            if !turn.one_region {
                for &o in &turn.call_opens {
                    self.graph.link(gap, o);
                }
            }
            self.graph.link(gap, calls_end);
        }
        // Calls first, then text (the parser keeps only the text after the calls when there
        // is text on both sides, so text stands on one side only).
        if let (Some((opens, closes)), Some(after)) = (&turn.calls_first, after_calls) {
            let gap = self.table(&self.ws_around(), "tool_calls")?;
            let gap = self
                .graph
                .add("tool_calls.gap(text after)", SegmentKind::Body, gap);
            for &c in closes {
                self.graph.segments[c].last = true;
                self.graph.link(c, gap);
            }
            if !turn.one_region {
                for &o in opens {
                    self.graph.link(gap, o);
                }
            }
            self.graph.link(gap, calls_end);
            self.graph.link(gap, after);
            self.graph.link(after, calls_end);
        }
        Ok(starts)
    }

    /// A turn without an implicit field: regions separated by ignored glue; the turn ends
    /// after the content region or a call. Returns the start segments.
    fn region_turn(
        &mut self,
        content_field: Option<&FieldModel>,
        turn: &Turn,
    ) -> Result<Vec<usize>, ConstrainError> {
        let glue = self.glue(&turn.opens)?;
        let content_region = match content_field {
            Some(field) if !turn.calls_required => {
                Some(self.content_region(field, turn.json_content.as_ref())?)
            }
            _ => None,
        };
        let g0 = self.graph.add("glue", SegmentKind::Glue, glue.clone());
        let mut after_glue: Vec<usize> = Vec::new();
        after_glue.extend(content_region);
        after_glue.extend(turn.call_opens.iter().copied());
        if after_glue.is_empty() {
            return Err(cerr(
                "fields",
                "the template has no content region to write",
            ));
        }
        let mut starts = vec![g0];
        if let Some((o, c)) = turn.reasoning {
            if turn.reasoning_at_start {
                starts.push(o);
            } else {
                self.graph.link(g0, o);
            }
            let g1 = self.graph.add("glue", SegmentKind::Glue, glue.clone());
            self.graph.link(c, g1);
            for &n in &after_glue {
                self.graph.link(g1, n);
            }
        }
        for &n in &after_glue {
            self.graph.link(g0, n);
        }
        // After a call: ignored text, then another call or the end (Command A ends its turn
        // with `<|END_OF_TURN_TOKEN|>` after the action's close).
        for &c in &turn.call_closes {
            self.graph.segments[c].last = true;
            let g = self.graph.add("glue", SegmentKind::Glue, glue.clone());
            self.graph.segments[g].last = true;
            self.graph.link(c, g);
            if !turn.one_region {
                for &o in &turn.call_opens {
                    self.graph.link(g, o);
                }
            }
        }
        Ok(starts)
    }

    /// An explicit content region (open, body, close; the turn may end after it), its body
    /// held to the JSON content when there is one. Returns the open segment.
    fn content_region(
        &mut self,
        field: &FieldModel,
        json_content: Option<&Table>,
    ) -> Result<usize, ConstrainError> {
        let (Some(open), Some(close)) = (&field.open, &field.close) else {
            return Err(cerr(
                field_path(field, "close"),
                "the content region needs an open and a close",
            ));
        };
        let o = self.delimiter(open, None, &delimiter_path(field, "open", open))?;
        let close_at = delimiter_path(field, "close", close);
        let c = self.delimiter(close, None, &close_at)?;
        let guard = self.body_guard(close, &c.text, &close_at)?;
        let body = match json_content {
            None => guard,
            Some(json) => json
                .intersect(&guard, &self.limits())
                .map_err(|e| build("response_format", e))?,
        };
        let (o, o_exit) = self.add_delimiter("content.open", o);
        let body = self.graph.add("content.body", SegmentKind::Body, body);
        let (c_entry, c) = self.add_delimiter("content.close", c);
        self.graph.link(o_exit, body);
        self.graph.link(body, c_entry);
        self.graph.segments[c].last = true;
        Ok(o)
    }
}

/// The union of `tables` (an empty list: the empty language).
fn union(tables: Vec<Table>, limits: &Limits) -> Result<Table, BuildError> {
    let mut g = Graph::default();
    for (i, t) in tables.into_iter().enumerate() {
        let s = g.add(format!("part{i}"), SegmentKind::Body, t);
        g.segments[s].last = true;
        g.starts.push(s);
    }
    if g.starts.is_empty() {
        return Table::literal(b"").intersect(&Table::literal(b"x"), limits);
    }
    Ok(std::sync::Arc::unwrap_or_clone(
        Machine::build(g, limits)?.table,
    ))
}

/// The concatenation of `tables`.
fn concat(tables: Vec<Table>, limits: &Limits) -> Result<Table, BuildError> {
    let mut g = Graph::default();
    let mut prev: Option<usize> = None;
    for (i, t) in tables.into_iter().enumerate() {
        let s = g.add(format!("part{i}"), SegmentKind::Body, t);
        match prev {
            Some(p) => g.link(p, s),
            None => g.starts.push(s),
        }
        prev = Some(s);
    }
    if let Some(p) = prev {
        g.segments[p].last = true;
    }
    Ok(std::sync::Arc::unwrap_or_clone(
        Machine::build(g, limits)?.table,
    ))
}

fn ws_hir(n: usize) -> Hir {
    if n == 0 {
        Hir::empty()
    } else {
        Hir::repetition(regex_syntax::hir::Repetition {
            min: 0,
            max: Some(n as u32),
            greedy: true,
            sub: Box::new(Hir::class(Class::Bytes(ClassBytes::new([
                ClassBytesRange::new(b'\t', b'\n'),
                ClassBytesRange::new(b'\r', b'\r'),
                ClassBytesRange::new(b' ', b' '),
            ])))),
        })
    }
}

/// The parameter tags of an XML-parameters template: the style written and the template's
/// tag pattern (which must read each key back).
struct XmlTags<'a> {
    style: &'static template_build::roles::XmlStyle,
    re: &'a <parser_runtime_core::tables::Owned as parser_runtime_core::tables::Storage>::Fancy,
}

/// The body of an XML-parameters call in the template's tag style
/// ([`template_build::roles::XML_STYLES`]; Qwen3-Coder's: `\n` then
/// `<parameter=K>\nV\n</parameter>\n` per written parameter), declared order, required ones
/// always, each V free of the end tag (the tag pattern ends the value at the first one).
fn xml_body(
    parameters: &Value,
    tags: &XmlTags,
    options: &Options,
    at: &str,
) -> Result<Table, ConstrainError> {
    let (json, limits) = (options.json, &options.limits);
    let style = tags.style;
    let required: Vec<&str> = parameters
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let no_close = Table::avoiding(&Hir::literal(style.end_tag.as_bytes()), limits)
        .map_err(|e| build(at, e))?;
    let mut parts = vec![(Table::literal(style.start.as_bytes()), false)];
    if let Some(Value::Object(properties)) = parameters.get("properties") {
        for (key, schema) in properties {
            let p_at = format!(
                "{at}/properties/{}",
                structured_outputs::schema::escape_token(key)
            );
            if !style.reads_back(tags.re, key, "v") {
                return Err(cerr(
                    p_at,
                    "the template's tag pattern does not read this parameter name back",
                ));
            }
            let value = xml_value(schema, parameters, options, &p_at)?;
            let value = value
                .table(json, limits)
                .and_then(|t| t.intersect(&no_close, limits))
                .map_err(|e| build(&p_at, e))?;
            let tag = concat(
                vec![
                    Table::literal(
                        format!("{}{key}{}", style.before_key, style.after_key).as_bytes(),
                    ),
                    value,
                    Table::literal(
                        format!("{}{}{}", style.before_end, style.end_tag, style.between)
                            .as_bytes(),
                    ),
                ],
                limits,
            )
            .map_err(|e| build(&p_at, e))?;
            parts.push((tag, !required.contains(&key.as_str())));
        }
    }
    if !style.end.is_empty() {
        parts.push((Table::literal(style.end.as_bytes()), true));
    }
    sequence(parts, limits).map_err(|e| build(at, e))
}

/// The forms of `d` in `only` (a delimiter without look-aheads or word assertions), or an
/// error naming `at` when none is.
fn restrict(
    d: &DelimiterSet,
    only: &Table,
    limits: &Limits,
    at: &str,
) -> Result<DelimiterSet, ConstrainError> {
    let mut groups = Vec::new();
    for (g, ahead) in &d.groups {
        if !matches!(ahead, Ahead::Any) || g.marks != crate::graph::Marks::default() {
            return Err(cerr(
                at,
                "a keyword-argument call's delimiters are generated without look-aheads or \
                 word assertions",
            ));
        }
        let table = g.table.intersect(only, limits).map_err(|e| build(at, e))?;
        let text = g.text.intersect(only, limits).map_err(|e| build(at, e))?;
        if !table.is_empty() {
            groups.push((
                Delimiter {
                    table,
                    marks: g.marks,
                    text,
                },
                Ahead::Any,
            ));
        }
    }
    if groups.is_empty() {
        return Err(cerr(
            at,
            "a keyword-argument call needs a form of this delimiter for each place: the \
             block's first call and the next ones (`,`), a call's end (`)`) and the block's",
        ));
    }
    let text = d.text.intersect(only, limits).map_err(|e| build(at, e))?;
    Ok(DelimiterSet { groups, text })
}

/// A tool's `properties` object.
type Properties = serde_json::Map<String, Value>;

/// A tool's `required` names and its `properties`, each required name declared there.
///
/// Errors: a required name missing from `properties` (at `{at}/required`).
fn declared_parameters<'a>(
    parameters: &'a Value,
    at: &str,
) -> Result<(Vec<&'a str>, Option<&'a Properties>), ConstrainError> {
    let required: Vec<&str> = parameters
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let properties = parameters.get("properties").and_then(Value::as_object);
    if let Some(missing) = required
        .iter()
        .find(|r| !properties.is_some_and(|p| p.contains_key(**r)))
    {
        return Err(cerr(
            format!("{at}/required"),
            format!("required parameter {missing:?} is not declared in properties"),
        ));
    }
    Ok((required, properties))
}

/// One call's keyword arguments as LFM2.5 writes them and its `xml-inline` tags read them
/// ([`Family::PythonKeywords`]): `k=v` in declared order (required ones always, optional
/// ones may be left out), `,` and at most one space between them, no space around `=`
/// (a value is read from right after it). Each value is one [`keyword_value`].
fn keyword_body(
    parameters: &Value,
    tag_pattern: &<parser_runtime_core::tables::Owned as parser_runtime_core::tables::Storage>::Fancy,
    options: &Options,
    at: &str,
) -> Result<Table, ConstrainError> {
    let limits = &options.limits;
    let (required, properties) = declared_parameters(parameters, at)?;
    let separator = Table::from_hir(
        &Hir::concat(vec![
            Hir::literal(*b","),
            Hir::repetition(regex_syntax::hir::Repetition {
                min: 0,
                max: Some(1),
                greedy: true,
                sub: Box::new(Hir::literal(*b" ")),
            }),
        ]),
        limits,
    )
    .map_err(|e| build(at, e))?;
    // Two junctions per position: nothing written yet (the next tag has no separator), or
    // some tag written.
    let mut g = Graph::default();
    let empty = || Table::literal(b"");
    let mut before = g.add("before0", SegmentKind::Body, empty());
    g.starts.push(before);
    let mut after: Option<usize> = None;
    for (i, (key, schema)) in properties.into_iter().flatten().enumerate() {
        let p_at = format!(
            "{at}/properties/{}",
            structured_outputs::schema::escape_token(key)
        );
        let ascii_word = key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !ascii_word || !template_build::roles::keyword_reads_back(tag_pattern, key, "1") {
            return Err(cerr(
                p_at,
                "the template's tag pattern does not read this parameter name back as a \
                 keyword argument (`k=v`, ASCII word characters)",
            ));
        }
        let value = keyword_value(schema, parameters, options, &p_at)?;
        let tag = concat(
            vec![Table::literal(format!("{key}=").as_bytes()), value],
            limits,
        )
        .map_err(|e| build(&p_at, e))?;
        let optional = !required.contains(&key.as_str());
        let next_before = g.add(format!("before{}", i + 1), SegmentKind::Body, empty());
        let next_after = g.add(format!("after{}", i + 1), SegmentKind::Body, empty());
        let first = g.add(format!("tag{i}"), SegmentKind::Body, tag.clone());
        g.link(before, first);
        g.link(first, next_after);
        if optional {
            g.link(before, next_before);
        }
        if let Some(a) = after {
            let tag = concat(vec![separator.clone(), tag], limits).map_err(|e| build(&p_at, e))?;
            let more = g.add(format!("tag{i}(after)"), SegmentKind::Body, tag);
            g.link(a, more);
            g.link(more, next_after);
            if optional {
                g.link(a, next_after);
            }
        }
        before = next_before;
        after = Some(next_after);
    }
    if required.is_empty() {
        g.segments[before].last = true;
    }
    if let Some(a) = after {
        g.segments[a].last = true;
    }
    Ok(std::sync::Arc::unwrap_or_clone(
        Machine::build(g, limits).map_err(|e| build(at, e))?.table,
    ))
}

/// One keyword argument's value as LFM2.5's tags and value parser read it back into the
/// parameter's JSON value ([`Family::PythonKeywords`]), for exactly one type (no `anyOf`, no
/// type lists: the tools' typing would cast a string that reads as another of the types):
///
/// * a string: `'raw text'`, the characters as they are (the `json` value parser takes the
///   text between `'`s and writes it as a JSON string): no `'`, no `\x01`/`\x02` (the value
///   parser refuses them), and, by the caller's guard, no `)` (it ends the call); `enum`
///   values likewise; no `pattern` or `format` (their languages are over JSON string text);
/// * an integer, a number, `true`/`false`/`True`/`False` (the last two read as text and cast
///   by the tools' typing), `null`: as [`xml_value`] writes them, read bare up to the next
///   `,` or `)`;
/// * an object or an array: its JSON, nested at most 4 brackets deep (the tag pattern's
///   value reads 4 levels), with no `'` (the value parser would take it as a string quote)
///   and no `\"` (the tag pattern's strings end at the first `"`).
fn keyword_value(
    schema: &Value,
    document: &Value,
    options: &Options,
    at: &str,
) -> Result<Table, ConstrainError> {
    let limits = &options.limits;
    // Typed as XML parameters are (one type; booleans also as Python writes them).
    let value = xml_value(schema, document, options, at)
        .map_err(|e| ConstrainError {
            reason: e
                .reason
                .replace("XML parameters", "keyword arguments")
                .replace("an XML parameter", "a keyword argument"),
            ..e
        })?
        .table(options.json, limits)
        .map_err(|e| build(at, e))?;
    let mut resolved = schema;
    for _ in 0..32 {
        match resolved
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| resolve_ref(document, r))
        {
            Some(s) => resolved = s,
            None => break,
        }
    }
    let types = resolved.as_object().map(value_types).unwrap_or_default();
    let lit = |s: &str| Hir::literal(s.as_bytes());
    let avoiding = |texts: &[&str]| {
        Table::avoiding(
            &Hir::alternation(texts.iter().map(|t| lit(t)).collect()),
            limits,
        )
        .map_err(|e| build(at, e))
    };
    let out = match types.as_slice() {
        [JsonType::String] => {
            let raw = value
                .intersect(&avoiding(&["'", "\x01", "\x02"])?, limits)
                .map_err(|e| build(at, e))?;
            concat(
                vec![Table::literal(b"'"), raw, Table::literal(b"'")],
                limits,
            )
            .map_err(|e| build(at, e))?
        }
        [JsonType::Object | JsonType::Array] => {
            let mut brackets = String::from(r#"(?:[^\[\]{}'"]|"[^"]*")"#);
            for _ in 0..3 {
                brackets = format!(r#"(?:[^\[\]{{}}'"]|"[^"]*"|[\[{{]{brackets}*[\]}}])"#);
            }
            let brackets = format!(r"[\[{{]{brackets}*[\]}}]");
            let hir = regex_syntax::Parser::new()
                .parse(&brackets)
                .map_err(|e| cerr(at, e.to_string()))?;
            let depth = Table::from_hir(&hir, limits).map_err(|e| build(at, e))?;
            let quotes = avoiding(&["'", "\\\""])?;
            value
                .intersect(&depth, limits)
                .and_then(|t| t.intersect(&quotes, limits))
                .map_err(|e| build(at, e))?
        }
        _ => value,
    };
    if out.is_empty() {
        return Err(cerr(
            at,
            "no value of this parameter can be written as a keyword argument the template \
             reads back (strings without `'` or `)`, at most 4 levels of brackets)",
        ));
    }
    Ok(out)
}

/// The concatenation of `parts`, each `(table, optional)`.
fn sequence(parts: Vec<(Table, bool)>, limits: &Limits) -> Result<Table, BuildError> {
    let mut g = Graph::default();
    let mut junction = g.add("j0", SegmentKind::Body, Table::literal(b""));
    g.starts.push(junction);
    for (i, (table, optional)) in parts.into_iter().enumerate() {
        let part = g.add(format!("part{i}"), SegmentKind::Body, table);
        let next = g.add(
            format!("j{}", i + 1),
            SegmentKind::Body,
            Table::literal(b""),
        );
        g.link(junction, part);
        g.link(part, next);
        if optional {
            g.link(junction, next);
        }
        junction = next;
    }
    g.segments[junction].last = true;
    Ok(std::sync::Arc::unwrap_or_clone(
        Machine::build(g, limits)?.table,
    ))
}

/// A constraint for one JSON value of `schema` alone (no template): what JSON-Schema engines
/// constrain, for comparisons. `schema` is `None` for JSON mode (any object nested at most 5
/// levels). The language is the value with no whitespace around it.
///
/// Errors: the schema's ([`SchemaLanguage::compile`]), or tables past `options.limits`
/// (in general mode after a second try with untyped values nested [`SHALLOW_ANY_DEPTH`]
/// levels, which is what compiles then).
pub fn compile_schema(
    schema: Option<&Value>,
    options: &Options,
) -> Result<Constraint, ConstrainError> {
    with_shallow_retry(options, |o| compile_schema_once(schema, o))
}

/// Builds the process-wide tables that most general-mode schemas share, so that the first
/// schema compiled in a process does not pay for them: what an open object of a string,
/// a boolean, an integer, a number, an object and an array builds, i.e. the any-value
/// reader of open objects' other members and untyped values (at `options.json.any_depth`
/// and `options.json.whitespace`), the readers of any object and any array, and the
/// automata of unbounded integers and numbers (in `options`' draft). Without it the first
/// schema that needs each builds it (20-50 ms in all on this project's 2-core machine;
/// every later compile finds them in the caches). Serving stacks call it once at start-up,
/// next to building their `index::VocabIndex`; calling it again costs a few cache lookups.
///
/// Does nothing unless `options.json.mode` is general mode (the strict subset shares
/// little). Errors: `options.limits` too tight for these tables (the budget their first
/// schema would meet), at `prepare`.
pub fn prepare(options: &Options) -> Result<(), ConstrainError> {
    if !matches!(options.json.mode, crate::json::SchemaMode::General { .. }) {
        return Ok(());
    }
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "s": {"type": "string"},
            "b": {"type": "boolean"},
            "i": {"type": "integer"},
            "n": {"type": "number"},
            "o": {"type": "object"},
            "a": {"type": "array"},
        },
    });
    // Its schema is its own, not the caller's: the place is `prepare` (the budget and
    // reason stay).
    compile_schema(Some(&schema), options)
        .map(|_| ())
        .map_err(|e| ConstrainError {
            at: "prepare".to_string(),
            reason: format!("building the shared tables: {}", e.reason),
            budget: e.budget,
        })
}

fn compile_schema_once(
    schema: Option<&Value>,
    options: &Options,
) -> Result<Constraint, ConstrainError> {
    let table = match schema {
        None => crate::json::json_mode_table(
            structured_outputs::JSON_MODE_MAX_DEPTH,
            options.json.whitespace,
            &options.limits,
        )
        .map_err(|e| build("schema", e))?,
        Some(schema) => {
            let language = language(schema, options).map_err(|e| schema_error("schema", e))?;
            language
                .shared_table(options.json, &options.limits)
                .map_err(|e| build("schema", e))?
        }
    };
    let mut graph = Graph::default();
    let value = graph.add("value", SegmentKind::Body, table);
    graph.segments[value].last = true;
    graph.starts.push(value);
    let machine = Machine::build(graph, &options.limits).map_err(|e| build("schema", e))?;
    if machine.table.is_empty() {
        return Err(cerr("schema", "the schema admits no value"));
    }
    Ok(Constraint {
        machine,
        family: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `prepare` builds within the caller's budgets (too tight a state budget is the
    /// error its first schema would get, and names the budget) and does nothing in the
    /// strict subset.
    #[test]
    fn prepare_builds_within_the_budgets() {
        let general = general();
        prepare(&general).unwrap();
        let mut tight = general;
        tight.limits.max_states = 50;
        let e = prepare(&tight).unwrap_err();
        assert_eq!(e.budget, Some(Budget::States), "{e}");
        assert_eq!(e.at, "prepare", "{e}");
        let mut strict = tight;
        strict.json.mode = Options::default().json.mode;
        prepare(&strict).unwrap();
    }

    /// Errors show a name's control, separator and bidirectional characters escaped
    /// (`\u{0001}`), and keep them exact in their fields; strict mode's errors too.
    #[test]
    fn errors_show_hidden_characters_escaped() {
        let name = "x\u{1}y\u{202e}z\u{85}\n";
        let schema = serde_json::json!({"type": "object", "properties": {name: {"not": {}}},
            "required": [name], "additionalProperties": false});
        for options in [general(), Options::default()] {
            let e = compile_schema(Some(&schema), &options).unwrap_err();
            assert!(e.at.contains(name), "{:?}", e.at);
            let shown = e.to_string();
            assert!(
                shown.contains("x\\u{0001}y\\u{202E}z\\u{0085}\\u{000A}"),
                "{shown}"
            );
            assert!(!shown.chars().any(|c| c.is_control()), "{shown:?}");
        }
        let e = crate::json::CompileError {
            pointer: "/properties/\u{7f}".into(),
            reason: "bad\u{2028}".into(),
            budget: None,
        };
        assert_eq!(e.to_string(), "/properties/\\u{007F}: bad\\u{2028}");
        assert!(matches!(
            crate::json::printable("plain /a~1b é 日"),
            std::borrow::Cow::Borrowed("plain /a~1b é 日")
        ));
    }

    /// The default options in general schema mode.
    fn general() -> Options {
        let mut options = Options::default();
        options.json.mode = SchemaMode::general();
        options
    }

    fn template(name: &str) -> TemplateModel {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../templates")
            .join(format!("{name}.json"));
        let value: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let value = value.get("response_template").cloned().unwrap_or(value);
        template_build::model::load(&value).unwrap()
    }

    /// Where untyped values at 5 levels pass a size budget and 3 levels do not, general mode
    /// compiles with 3; strict mode, other budgets and a failing second try keep the first
    /// error.
    #[test]
    fn untyped_depth_falls_back_to_three_levels_at_a_size_budget() {
        let mut options = general();
        options.json.any_depth = 5;
        // Between the two readers' sizes (4,843 and 1,147 states).
        options.limits.max_states = 3_000;
        let schema = serde_json::json!({"type": "object", "properties": {"a": {}}});
        let c = compile_schema(Some(&schema), &options).unwrap();
        let nested =
            |levels: usize| format!(r#"{{"a":{}1{}}}"#, "[".repeat(levels), "]".repeat(levels));
        let table = &c.machine.table;
        assert!(table.matches(nested(SHALLOW_ANY_DEPTH).as_bytes()));
        assert!(!table.matches(nested(SHALLOW_ANY_DEPTH + 1).as_bytes()));
        // With room for 5 levels, 5 it is.
        options.limits.max_states = 200_000;
        let c = compile_schema(Some(&schema), &options).unwrap();
        assert!(c.machine.table.matches(nested(5).as_bytes()));
        // Too small for either: the first try's error.
        options.limits.max_states = 500;
        let e = compile_schema(Some(&schema), &options).unwrap_err();
        assert_eq!(e.budget, Some(Budget::States), "{e:?}");
        // Strict mode is not retried.
        let mut strict = Options::default();
        strict.json.any_depth = 5;
        strict.limits.max_states = 3_000;
        let e = compile_schema(Some(&serde_json::json!({})), &strict).unwrap_err();
        assert_eq!(e.budget, Some(Budget::States), "{e:?}");
    }

    /// Values read in place (every member's value one shared reader, called from each
    /// member's place) count a [`crate::dfa::IN_PLACE_PER_STATE`]th of a stored state: the
    /// first try, at 5 levels of untyped values, fits a state limit its calls' states pass
    /// in full.
    #[test]
    fn values_read_in_place_count_a_part_of_a_state() {
        let mut options = general();
        options.json.any_depth = 5;
        options.limits.max_states = 30_000;
        let members: serde_json::Map<String, Value> = (0..12)
            .map(|i| (format!("p{i}"), serde_json::json!({})))
            .collect();
        let schema = serde_json::json!({"type": "object", "properties": members,
            "additionalProperties": false});
        let c = compile_schema(Some(&schema), &options).unwrap();
        let table = &c.machine.table;
        // Its calls' states, counted in full, pass even the whole limit.
        assert!(table.len() > options.limits.max_states, "{}", table.len());
        assert!(table.budget_states() <= options.limits.max_states / FIRST_TRY_SHARE);
        let nested = |levels: usize| {
            format!(
                r#"{{"p3":{}1{},"p7":2}}"#,
                "[".repeat(levels),
                "]".repeat(levels)
            )
        };
        assert!(table.matches(nested(5).as_bytes()));
        assert!(!table.matches(nested(6).as_bytes()));
    }

    /// `Table::distances` on a table read in place meets its definition at every state: 0
    /// where it accepts, else one more than the least over its steps (`u32::MAX` where no
    /// accepting state is reached).
    #[test]
    fn distances_of_a_table_read_in_place_are_shortest() {
        let options = general();
        let schema = serde_json::json!({"type": "object", "properties": {
            "a": {}, "b": {"type": "array", "maxItems": 3}, "c": {"type": "string", "maxLength": 200}},
            "required": ["a"]});
        let c = compile_schema(Some(&schema), &options).unwrap();
        let table = &c.machine.table;
        assert!(table.is_shared());
        let d = table.distances();
        assert_eq!(d.len(), table.len());
        assert!(d[START as usize] > 0 && d[START as usize] < u32::MAX);
        for s in 1..table.len() as u32 {
            let want = if table.is_accepting(s) {
                0
            } else {
                (0..=255u8)
                    .map(|b| table.next(s, b))
                    .filter(|&t| t != crate::dfa::DEAD)
                    .map(|t| d[t as usize].saturating_add(1))
                    .min()
                    .unwrap_or(u32::MAX)
            };
            assert_eq!(d[s as usize], want, "state {s}");
        }
    }

    fn weather() -> Vec<Value> {
        vec![
            serde_json::json!({"type": "function", "function": {"name": "get_weather",
            "parameters": {"type": "object", "properties": {
                "city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"]}}}),
        ]
    }

    /// `t` accepts every text of `ok` and none of `bad`.
    fn language(t: &Table, ok: &[impl AsRef<str>], bad: &[impl AsRef<str>]) {
        for text in ok.iter().map(AsRef::as_ref) {
            assert!(t.matches(text.as_bytes()), "{text}");
        }
        for text in bad.iter().map(AsRef::as_ref) {
            assert!(!t.matches(text.as_bytes()), "{text}");
        }
    }

    fn compiled(value: Value, request: &Request) -> Result<Constraint, ConstrainError> {
        let model = template_build::model::load(&value).unwrap();
        compile(&model, request, &Options::default())
    }

    #[test]
    fn general_mode_reads_tools_and_response_formats_outside_the_subset() {
        let options = Options {
            json: JsonOptions {
                mode: SchemaMode::general(),
                ..JsonOptions::default()
            },
            ..Options::default()
        };
        let model = template("qwen3");
        // Two tools whose languages both hold automata (bounds, lengths), in one body.
        let tools = vec![
            serde_json::json!({"type": "function", "function": {"name": "add", "parameters": {
                "type": "object", "properties": {"n": {"type": "integer", "minimum": 10}},
                "required": ["n"], "additionalProperties": false}}}),
            serde_json::json!({"type": "function", "function": {"name": "say", "parameters": {
                "type": "object", "properties": {"s": {"type": "string", "maxLength": 2}},
                "required": ["s"]}}}),
        ];
        let request = Request {
            tools: tools.clone(),
            tool_choice: ToolChoice::Required,
            ..Request::default()
        };
        let c = compile(&model, &request, &options).unwrap();
        let call = |body: &str| format!("<tool_call>\n{body}\n</tool_call><|im_end|>");
        language(
            &c.machine.table,
            &[
                call(r#"{"name":"add","arguments":{"n":10}}"#),
                call(r#"{"name":"say","arguments":{"s":"ab","extra":[1]}}"#),
            ],
            &[
                call(r#"{"name":"add","arguments":{"n":9}}"#),
                call(r#"{"name":"add","arguments":{"n":10,"x":1}}"#),
                call(r#"{"name":"say","arguments":{"s":"abc"}}"#),
            ],
        );
        // The strict gate refuses the same tools.
        assert!(compile(&model, &request, &Options::default()).is_err());
        // A response format with draft-4 definitions and a pattern.
        let request = Request {
            response_format: Some(serde_json::json!({"type": "json_schema", "json_schema": {
                "name": "x", "schema": {"definitions": {"id": {"type": "string",
                    "pattern": "^[a-z]+$"}}, "type": "object",
                    "properties": {"id": {"$ref": "#/definitions/id"}}, "required": ["id"]}}})),
            ..Request::default()
        };
        let c = compile(&model, &request, &options).unwrap();
        language(
            &c.machine.table,
            &[
                r#"{"id":"abc"}<|im_end|>"#,
                r#"{"id":"a","more":true}<|im_end|>"#,
            ],
            &[r#"{"id":"aBc"}<|im_end|>"#, r#"{"id":""}<|im_end|>"#],
        );
    }

    #[test]
    fn word_boundaries_at_a_delimiter_edge_read_the_text_around_it() {
        // `\b` before the reasoning open sees the start of the text; before its close, the
        // last character of the reasoning.
        let c = compiled(
            serde_json::json!({"start_anchor": "<s>", "fields": {
                "reasoning_content": {"open_pattern": "\\bTHINK:", "close_pattern": "\\bANSWER:"},
                "content": {}}}),
            &Request::default(),
        )
        .unwrap();
        let t = &c.machine.table;
        language(
            t,
            &[
                "THINK: plan ANSWER: hi",
                "THINK: plan é ANSWER: hi",
                "THINK: 東.ANSWER: hi",
                "THINK:ANSWER: hi",
                "hello é",
                "",
            ],
            &[
                // After a word character there is no boundary before `A`.
                "THINK: planANSWER: hi",
                "THINK: éANSWER: hi",
                "THINK: 東ANSWER: hi",
                "THINK: 1ANSWER: hi",
                // Content holds no `THINK:` (where a boundary would keep the parser from reading
                // it too: the avoided texts ignore word assertions).
                "hello THINK: x",
                "helloTHINK: x",
            ],
        );
    }

    #[test]
    fn a_condition_on_the_next_character_reads_what_follows() {
        // The implicit field's close `\bSTOP\b` ends the turn: the end of the text follows.
        // A tool call's close `END\b` is followed by the next call or the end.
        let c = compiled(
            serde_json::json!({"start_anchor": "<s>", "fields": {
                "content": {"close_pattern": "\\bSTOP\\b"},
                "tool_calls": {"open": "<call>", "close_pattern": "\\bEND\\b",
                    "content": "json", "repeats": true,
                    "transform": {"type": "function", "function": "{content}"}}}}),
            &Request {
                tools: weather(),
                ..Request::default()
            },
        )
        .unwrap();
        let t = &c.machine.table;
        let call = "<call>{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}} END";
        language(
            t,
            &[
                "hi STOP".to_string(),
                "STOP".to_string(),
                call.to_string(),
                format!("ok {call}\n{call} STOP"),
                format!(
                    "{call}<call>{{\"name\":\"get_weather\",\"arguments\":{{\"city\":\"é\"}}}} END"
                ),
            ],
            &[
                "hiSTOP".to_string(),
                // `END` then `S`: no boundary after `END`... and none before `STOP`.
                format!("{call}STOP"),
                format!("{call} STOPx"),
            ],
        );
    }

    /// A `tool_calls` field with the name in the open and JSON arguments.
    fn named_calls(open: &str, close: &str) -> Value {
        serde_json::json!({"open_pattern": open, "close_pattern": close, "content": "json",
            "repeats": true, "transform": {"type": "function",
                "function": {"name": "{name}", "arguments": "{content}"}}})
    }

    /// `template` compiled for the weather tool.
    fn with_weather(template: Value) -> Constraint {
        compiled(
            template,
            &Request {
                tools: weather(),
                ..Request::default()
            },
        )
        .unwrap()
    }

    #[test]
    fn look_aheads_are_written_by_what_follows() {
        // The open's look-ahead `{` is the body's first byte; the close is empty before the
        // next call's `[C]`, or `$`: the response ends right after the call.
        let c = with_weather(serde_json::json!({"start_anchor": "<s>", "fields": {
            "content": {"close": "</s>"},
            "tool_calls": named_calls("\\[C\\](?P<name>\\w+)(?=\\{)", "(?=\\[C\\])|$")}}));
        let call = |city: &str| format!("[C]get_weather{{\"city\":\"{city}\"}}");
        language(
            &c.machine.table,
            &[
                call("P"),
                format!("hi{}{}", call("P"), call("Q")),
                "hi</s>".to_string(),
            ],
            &[
                // No `{` right after the open: no call, and content must end with `</s>`.
                "[C]get_weather {\"city\":\"P\"}".to_string(),
                // `$`: nothing after the call but another call (or whitespace, which the
                // body ends with).
                format!("{}</s>", call("P")),
                format!("{}x", call("P")),
                format!("{} x", call("P")),
            ],
        );
    }

    #[test]
    fn a_close_led_by_whitespace_and_an_open_at_the_start() {
        // DeepSeek R1's shapes: every form of the call close starts with `\n`, and the
        // reasoning open is anchored at the start of the text (content may still start with
        // any text that is not the open).
        let c = with_weather(serde_json::json!({"start_anchor": "<s>", "fields": {
        "reasoning_content": {"open_pattern": "^\\s*<think>", "close_pattern": "</think>\\s*"},
        "content": {"close_pattern": "\\s*(?:<B>|<E>)"},
        "tool_calls": named_calls(
            "\\s*<C>(?P<name>[^\\n<]+)\\n```(?:json)?\\n",
            "\\n```\\s*<D>",
        )}}));
        let call = "<C>get_weather\n```json\n{\"city\":\"P\"}\n```<D>";
        language(
            &c.machine.table,
            &[
                "Let me check.<E>".to_string(),
                format!("<think>\nhm\n</think>\n\nOk.<B>\n{call}\n{call}<E><E>"),
                format!("{call}<E>"),
            ],
            &[
                // The close's newline is its own: `\n```` may not be left out.
                "<C>get_weather\n```json\n{\"city\":\"P\"}```<D><E>".to_string(),
                // Content avoids the open anywhere (the parser reads it only at the start).
                "Hi <think>x</think><E>".to_string(),
            ],
        );
    }

    #[test]
    fn a_look_ahead_reading_any_text_opens_the_reasoning_only() {
        // Nemotron 3: `(?=[\s\S]*?</think>)` opens the reasoning wherever `</think>` comes
        // later, so nothing but the reasoning's close writes it.
        let xml = serde_json::json!({"tool_calls": {
            "open_pattern": "<tool_call>\\s*<function=(?P<name>[^\\n>]+)>",
            "close_pattern": "</tool_call>\\s*", "repeats": true, "content": "xml-inline",
            "content_args": {"tag_pattern":
                "<parameter=(?P<key>[^>\\n]+)>\\s*(?P<value>.*?)\\s*</parameter>"},
            "transform": {"type": "function",
                "function": {"name": "{name}", "arguments": "{content}"}}}});
        let template = |open: &str, close: &str| {
            let mut fields = xml.clone();
            fields["reasoning_content"] =
                serde_json::json!({"open_pattern": open, "close_pattern": "</think>\\s*"});
            fields["content"] = serde_json::json!({"close_pattern": close});
            serde_json::json!({"start_anchor": "<s>", "fields": fields})
        };
        let c = with_weather(template("(?=[\\s\\S]*?</think>)", "<E>"));
        let call = |city: &str| {
            format!("<tool_call>\n<function=get_weather>\n<parameter=city>\n{city}\n</parameter>\n</tool_call>")
        };
        language(
            &c.machine.table,
            &[
                "Hi<E>".to_string(),
                "plan</think>Hi<E>".to_string(),
                format!("plan</think>{}<E>", call("Bern")),
            ],
            &[
                // After the reasoning, `</think>` again.
                "plan</think>Hi </think><E>".to_string(),
                // A call open at the start is a longer match than the reasoning's empty open.
                "<tool_call>\n<function=get_weather>\nx</think>Hi<E>".to_string(),
                format!("plan</think>{}<E>", call("a</think>")),
            ],
        );
        // Anywhere else it is an error naming the delimiter.
        let e = compiled(
            template("<think>", "(?=[\\s\\S]*?<E>)"),
            &Request::default(),
        )
        .unwrap_err();
        assert_eq!(e.at, "fields.content.close_pattern");
        assert!(e.reason.contains("reads any text"), "{e}");
    }

    #[test]
    fn lists_of_json_calls_are_written_in_one_region() {
        // `json-call-list` with `transform_each`: a bracketed list of at least one call, the
        // tool's arguments in each; without `transform_each` the calls are not read as such.
        let template = |each: bool| {
            serde_json::json!({"start_anchor": "<s>", "fields": {
                "tool_calls": {"open": "[TOOL_CALLS]", "close": "</s>",
                    "content": "json-call-list", "transform_each": each,
                    "transform": {"type": "function",
                        "function": {"name": "{name}", "arguments": "{arguments}"}}},
                "content": {"close": "</s>"}}})
        };
        let with_tools = Request {
            tools: weather(),
            ..Request::default()
        };
        let c = compiled(template(true), &with_tools).unwrap();
        assert_eq!(c.family, Some(Family::JsonCallList));
        let call = |city: &str| {
            format!("{{\"name\":\"get_weather\",\"arguments\":{{\"city\":\"{city}\"}}}}")
        };
        language(
            &c.machine.table,
            &[
                format!("[TOOL_CALLS][{}]</s>", call("P")),
                format!(
                    "Hi [TOOL_CALLS] [\n  {},\n  {}\n]</s>",
                    call("P"),
                    call("Q")
                ),
                format!(
                    "[TOOL_CALLS][{{\"type\":\"function\",{}]</s>",
                    &call("P")[1..]
                ),
            ],
            &[
                "[TOOL_CALLS][]</s>".to_string(),
                format!("[TOOL_CALLS]{}</s>", call("P")),
                format!("[TOOL_CALLS][{}] text</s>", call("P")),
                format!("[TOOL_CALLS][{},]</s>", call("P")),
            ],
        );
        let e = compiled(template(false), &with_tools).err().unwrap();
        assert_eq!(e.at, "fields.tool_calls.transform");
        assert!(e.reason.contains("json-call-list"), "{}", e.reason);
        assert!(compiled(template(false), &Request::default()).is_ok());
    }

    #[test]
    fn a_tool_call_field_that_does_not_repeat_holds_one_region() {
        // The parser keeps the last region's calls when the field does not repeat, so a
        // second call block would drop the first one's calls: one block per turn, as many
        // calls in it as the family writes.
        let request = Request {
            tools: weather(),
            ..Request::default()
        };
        let name = r#""name":"get_weather""#;
        let args = r#"{"city":"P"}"#;
        let other = r#"{"city":"Q"}"#;
        let cases = [
            (
                "llama3.1",
                format!("{{{name},\"parameters\":{args}}}<|eom_id|>"),
                format!("{{{name},\"parameters\":{other}}}<|eot_id|>"),
            ),
            (
                "granite-3",
                format!("<|tool_call|>[{{{name},\"arguments\":{args}}}]<|end_of_text|>"),
                format!("<|tool_call|>[{{{name},\"arguments\":{other}}}]<|end_of_text|>"),
            ),
            (
                "mistral-pre-v11",
                format!("[TOOL_CALLS][{{{name},\"arguments\":{args}}}]</s>"),
                format!("[TOOL_CALLS][{{{name},\"arguments\":{other}}}]</s>"),
            ),
            (
                "command-a",
                format!(
                    "<|START_ACTION|>[{{\"tool_name\":\"get_weather\",\"parameters\":{args}}}]<|END_ACTION|>"
                ),
                format!(
                    "<|START_ACTION|>[{{\"tool_name\":\"get_weather\",\"parameters\":{other}}}]<|END_ACTION|>"
                ),
            ),
            (
                "phi-4-mini",
                format!("<|tool_call|>[{{{name},\"arguments\":{args}}}]<|/tool_call|>"),
                format!("<|tool_call|>[{{{name},\"arguments\":{other}}}]<|/tool_call|>"),
            ),
        ];
        for (template_name, first, second) in &cases {
            let c = compile(&template(template_name), &request, &Options::default())
                .unwrap_or_else(|e| panic!("{template_name}: {e}"));
            let parser = templates::by_name(template_name).unwrap().unwrap();
            let cities = |text: &str| -> Vec<Value> {
                let message =
                    parser_runtime::__private::parse_response(parser, text, "", &request.tools)
                        .unwrap_or_else(|e| panic!("{template_name} {text}: {e}"));
                message["tool_calls"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c.pointer("/function/arguments/city").unwrap().clone())
                    .collect()
            };
            let both = format!("{first}{second}");
            // The parser keeps the second block's call only.
            assert_eq!(cities(&both), ["Q"], "{template_name}: {both}");
            assert_eq!(cities(first), ["P"], "{template_name}: {first}");
            language(
                &c.machine.table,
                &[first.clone(), second.clone()],
                &[both.clone(), format!("{first}\n{second}")],
            );
        }
    }

    #[test]
    fn keyword_calls_are_written_as_lfm25_reads_them() {
        let mut tools = weather();
        tools.push(
            serde_json::json!({"type": "function", "function": {"name": "book",
            "parameters": {"type": "object", "properties": {
                "flexible": {"type": "boolean"}, "note": {"type": "null"},
                "seats": {"type": "array", "items": {"type": "integer"}},
                "who": {"type": "object", "properties": {"name": {"type": "string"}},
                        "required": ["name"]},
                "price": {"type": "number"}},
                "required": ["flexible"]}}}),
        );
        let request = Request {
            tools,
            ..Request::default()
        };
        let c = compile(&template("lfm2.5"), &request, &Options::default()).unwrap();
        assert_eq!(c.family, Some(Family::PythonKeywords));
        // Each text with the message transformers 5.24's `parse_response` gives (prefix "",
        // the same tools; run in the oracle venv): the real parser must give the same.
        let read = [
            (
                "<|tool_call_start|>[get_weather(city='Paris', days=3)]<|tool_call_end|><|im_end|>",
                serde_json::json!({"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}}]}),
            ),
            (
                r#"Checking.<|tool_call_start|>[get_weather(city='Zürich, CH "x" \\n'),book(flexible=True, note=null, seats=[1,-0], who={"name":"Ann [B]"}, price=2.5e3)]<|tool_call_end|><|im_end|>"#,
                serde_json::json!({"role": "assistant", "content": "Checking.", "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Zürich, CH \"x\" \\\\n"}}}, {"type": "function", "function": {"name": "book", "arguments": {"flexible": true, "note": null, "seats": [1, 0], "who": {"name": "Ann [B]"}, "price": 2500.0}}}]}),
            ),
            (
                "<|tool_call_start|>[book(flexible=false)]<|tool_call_end|>\n<|tool_call_start|>[get_weather(city='')]<|tool_call_end|><|im_end|>",
                serde_json::json!({"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "book", "arguments": {"flexible": false}}}, {"type": "function", "function": {"name": "get_weather", "arguments": {"city": ""}}}]}),
            ),
        ];
        let parser = templates::by_name("lfm2.5").unwrap().unwrap();
        for (text, want) in &read {
            assert!(c.machine.table.matches(text.as_bytes()), "{text}");
            let message =
                parser_runtime::__private::parse_response(parser, text, "", &request.tools)
                    .unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(Value::Object(message), *want, "{text}");
        }
        let call = |args: &str| {
            format!("<|tool_call_start|>[get_weather({args})]<|tool_call_end|><|im_end|>")
        };
        language(
            &c.machine.table,
            &[call("city='P',days=-2")],
            &[
                // The reference reads `{"city": "It"}` and `{"city": "'a (b"}` (the call ends at
                // the first `)`, the rest is content).
                call("city='It's'"),
                call("city='a (b)'"),
                // Read alike, not generated: double-quoted strings, space around `=`, an
                // argument out of declared order, the list's forms mixed.
                call(r#"city="P""#),
                call("city = 'P'"),
                call("days=2, city='P'"),
                "<|tool_call_start|>[get_weather(city='P') <|im_end|>".to_string(),
                ", get_weather(city='P')]<|tool_call_end|><|im_end|>".to_string(),
            ],
        );
    }

    #[test]
    fn python_calls_are_written_as_lfm2_reads_them() {
        let tools = vec![
            serde_json::json!({"type": "function", "function": {"name": "get_weather",
            "parameters": {"type": "object", "properties": {
                "city": {"type": "string"}, "days": {"type": "integer"},
                "unit": {"enum": ["C", "F"]}},
                "required": ["city"]}}}),
            serde_json::json!({"type": "function", "function": {"name": "book",
            "parameters": {"type": "object", "properties": {
                "flexible": {"type": "boolean"},
                "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "seats": {"type": "array", "items": {"type": "integer"}},
                "who": {"type": "object", "properties": {"name": {"type": "string"}},
                        "required": ["name"]},
                "price": {"type": "number"}},
                "required": ["flexible", "note"]}}}),
        ];
        let request = Request {
            tools,
            ..Request::default()
        };
        let model = template("lfm2");
        let c = compile(&model, &request, &Options::default()).unwrap();
        assert_eq!(c.family, Some(Family::PythonCallList));
        let region = |body: &str| format!("<|tool_call_start|>{body}<|tool_call_end|><|im_end|>");
        // Each body with its reading by transformers 5.24's `_python_call_list` (run in the
        // oracle venv): the real parser must read the same calls.
        let read = [
            (
                r#"[get_weather(city="Paris", days=3)]"#,
                serde_json::json!([{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}]),
            ),
            (
                r#"[get_weather(city="P", unit='C')]"#,
                serde_json::json!([{"name": "get_weather", "arguments": {"city": "P", "unit": "C"}}]),
            ),
            (
                r#"[get_weather(city='It\'s "here"', days=-12, unit="F"),get_weather(city="Z\u00fcrich\n")]"#,
                serde_json::json!([
                    {"name": "get_weather", "arguments": {"city": "It's \"here\"", "days": -12, "unit": "F"}},
                    {"name": "get_weather", "arguments": {"city": "Zürich\n"}}]),
            ),
            (
                r#"[book(flexible=True, note=None, seats=[1,-0], who={"name":'Ann'}, price=2.5e3), book(flexible=false, note='x')]"#,
                serde_json::json!([
                    {"name": "book", "arguments": {"flexible": true, "note": null, "seats": [1, 0],
                                                   "who": {"name": "Ann"}, "price": 2500.0}},
                    {"name": "book", "arguments": {"flexible": false, "note": "x"}}]),
            ),
        ];
        let parser = templates::by_name("lfm2").unwrap().unwrap();
        for (body, want) in &read {
            let text = region(body);
            assert!(c.machine.table.matches(text.as_bytes()), "{text}");
            let message =
                parser_runtime::__private::parse_response(parser, &text, "", &request.tools)
                    .unwrap_or_else(|e| panic!("{text}: {e}"));
            let got: Vec<Value> = message["tool_calls"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["function"].clone())
                .collect();
            assert_eq!(Value::Array(got), *want, "{text}");
        }
        // LFM2 writes a sentence after its call block: content, on one side of the calls only
        // (with text on both sides the parser keeps the text after).
        let call = r#"<|tool_call_start|>[get_weather(city="P")]<|tool_call_end|>"#;
        language(
            &c.machine.table,
            &[
                format!("{call}Checking.<|im_end|>"),
                format!("Hi.{call}<|im_end|>"),
                format!("<think>x</think>{call} Checking.<|im_end|>"),
            ],
            &[
                format!("Hi.{call}Checking.<|im_end|>"),
                // One block: the field does not repeat, a second block replaces the first.
                format!("{call}{call}<|im_end|>"),
                format!("Hi.{call}\n{call}<|im_end|>"),
                // The reference reads these, but they break the contract or are not written:
                // a required argument missing, arguments out of declared order, an integer
                // as a float, an enum value not declared, `TRUE`.
                region("[get_weather(days=3)]"),
                region(r#"[get_weather(days=3, city="P")]"#),
                region(r#"[get_weather(city="P", days=3.0)]"#),
                region(r#"[get_weather(city="P", unit='K')]"#),
                region("[book(flexible=TRUE, note=None)]"),
                // The reference refuses these: a positional argument, a trailing comma, an
                // integer past 2^53 - 1, a repeated keyword, an empty list (no call).
                region(r#"[get_weather("Paris")]"#),
                region(r#"[get_weather(city="P",)]"#),
                region(r#"[get_weather(city="P", days=12345678901234567)]"#),
                region(r#"[get_weather(city="P", city="Q")]"#),
                region("[]"),
                // A raw line break in a string; an undeclared tool.
                region("[get_weather(city=\"P\nQ\")]"),
                region(r#"[set_alarm(hour=7)]"#),
            ],
        );
        // What stays refused names the tools pointer.
        let refused = |tool: Value| {
            compile(
                &model,
                &Request {
                    tools: vec![tool],
                    ..Request::default()
                },
                &Options::default(),
            )
            .err()
            .unwrap()
        };
        let e = refused(
            serde_json::json!({"type": "function", "function": {"name": "f",
            "parameters": {"type": "object", "properties": {"my key": {"type": "string"}},
                           "required": ["my key"]}}}),
        );
        assert_eq!(e.at, "tools/0/function/parameters/properties/my key");
        let e = refused(
            serde_json::json!({"type": "function", "function": {"name": "9lives",
            "parameters": {"type": "object", "properties": {"x": {"type": "string"}},
                           "required": ["x"]}}}),
        );
        assert_eq!(e.at, "tools/0/function/name");
        let general = Options {
            json: JsonOptions {
                mode: SchemaMode::general(),
                ..JsonOptions::default()
            },
            ..Options::default()
        };
        let e = compile(&model, &request, &general).err().unwrap();
        assert_eq!(e.at, "tools/0/function");
        // `xml-inline` tags with a value parser other than `text` and LFM2.5's `json`.
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../templates/lfm2.5.json");
        let mut value: Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        value["fields"]["tool_calls"]["content_args"]["value_parser"] =
            serde_json::json!({"name": "int"});
        let e = compiled(value, &request).err().unwrap();
        assert_eq!(e.at, "fields.tool_calls.content_args");
    }

    /// A MiniMax-style open (`\b` inside only) with JSON arguments.
    pub(crate) fn invoke_template() -> Value {
        serde_json::json!({"start_anchor": "]~b]ai\n", "fields": {
            "content": {"close_pattern": "\\s*(?:</minimax:tool_call>|\\[e~\\[)"},
            "tool_calls": {
                "open_pattern": "\\s*<invoke\\b[^>]*?\\bname=\"(?P<name>[^\"]+)\">",
                "close": "</invoke>", "repeats": true, "content": "json",
                "transform": {"type": "function",
                    "function": {"name": "{name}", "arguments": "{content}"}}}}})
    }

    #[test]
    fn a_minimax_open_is_exact_inside() {
        let request = Request {
            tools: weather(),
            ..Request::default()
        };
        let c = compiled(invoke_template(), &request).unwrap();
        assert_eq!(c.family, Some(Family::NamedJson));
        // Its boundaries are inside it: no class bytes, nothing tracked.
        let open = c
            .machine
            .graph
            .segments
            .iter()
            .find(|s| s.name.starts_with("tool_calls.open"))
            .unwrap();
        assert!(!open.marks.any());
        let t = &c.machine.table;
        let args = "{\"city\":\"Paris\"}</invoke>[e~[";
        let ok = ["", " id=\"1\"", " é", " 東·", " x=\"é\" "]
            .map(|attrs| format!("Hi.<invoke{attrs} name=\"get_weather\">{args}"));
        // A word character right after `<invoke` or right before `name`.
        let bad = ["_x ", "é ", "x ", " x", " é", " 1", " 東", ""]
            .map(|attrs| format!("<invoke{attrs}name=\"get_weather\">{args}"));
        language(t, &ok, &bad);
    }

    #[test]
    fn a_delimiter_it_cannot_generate_is_refused_naming_the_field() {
        for (open, why) in [
            ("(?a)\\bTHINK:", "ASCII word boundary"),
            ("(?<![\\w])THINK:", "look-behind"),
        ] {
            let e = compiled(
                serde_json::json!({"start_anchor": "<s>", "fields": {
                    "reasoning_content": {"open_pattern": open, "close": "</t>"},
                    "content": {}}}),
                &Request::default(),
            )
            .unwrap_err();
            assert_eq!(e.at, "fields.reasoning_content.open_pattern", "{e}");
            assert!(e.reason.contains(why), "{e}");
        }
    }

    #[test]
    fn smollm3_with_a_tool() {
        let request = Request {
            tools: weather(),
            ..Request::default()
        };
        let c = compile(&template("smollm3"), &request, &Options::default()).unwrap();
        let t = &c.machine.table;
        assert_eq!(c.family, Some(Family::JsonCall));
        language(
            t,
            &[
            "Hi there<|im_end|>",
            "<think>\nhmm</think>\nSure.<|im_end|>",
            "<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}\n</tool_call><|im_end|>",
            "Checking.\n<tool_call>{\"name\":\"get_weather\",\"arguments\":{\"city\":\"A\",\"days\":2}}</tool_call>\n<tool_call>{\"name\":\"get_weather\",\"arguments\":{\"city\":\"B\"}}</tool_call>\n<|im_end|>",
            ],
            &[
            "Hi there",
            "<tool_call>{\"name\":\"get_wether\",\"arguments\":{\"city\":\"Paris\"}}</tool_call><|im_end|>",
            "<tool_call>{\"name\":\"get_weather\",\"arguments\":{\"town\":\"Paris\"}}</tool_call><|im_end|>",
            "<tool_call>{\"name\":\"get_weather\",\"arguments\":{\"days\":1}}</tool_call><|im_end|>",
            "<tool_call>{\"name\":\"get_weather\",\"arguments\":{\"city\":\"</tool_call>\"}}</tool_call><|im_end|>",
            "text <think> more<|im_end|>",
            ],
        );
    }
}
