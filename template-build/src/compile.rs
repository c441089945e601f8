//! Compilation of a validated [`TemplateModel`] into the tables the runtime walks
//! ([`CompiledTemplate`]): every delimiter becomes anchored, leftmost-first regex-automata DFAs
//! (one per top-level branch, plus a DFA for a trailing look-ahead), with the per-state edge
//! facts the engine needs to decide, at the end of a buffer, whether a delimiter is pending,
//! certainly complete, or resolved.

use std::collections::HashMap;
use std::path::Path;

use parser_runtime_core::router::{DelimiterKind, EDGE_DELAYED, EDGE_GROW, EDGE_REACH, EDGE_SURE};
use parser_runtime_core::tables::{
    Branch, ByteSet, Captures, CompiledTemplate, Content, Delimiter, Dfa, FieldTable, JumpPlan,
    Lookahead, Owned, OwnedDfa, Prefilter, Watch, Watched,
};
use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::nfa::thompson;
use regex_automata::util::primitives::StateID;
use regex_automata::util::syntax;
use regex_automata::MatchKind;
use serde_json::Value;

use crate::error::{Problem, TemplateError, TemplateErrorKind as Kind, TemplateErrors};
use crate::locate;
use crate::model::{self, DelimiterSpec, TemplateModel};
use crate::path::excerpt;
use crate::word;

/// Size limit, in bytes, of each NFA, DFA and determinization run: a hostile pattern (e.g.
/// `(a|b)*a(a|b){30}`) fails to compile quickly with an error instead of eating memory.
///
/// 2 MiB: the largest delimiter DFA of the vendored templates and conformance cases is about
/// 1 MiB (gemma-4's, with its Unicode word classes; `.{1000}X` is 1 MiB too). Determinizing
/// a pattern whose DFA explodes costs more per state the larger it grows, so the limit sets
/// how long a refusal takes: `(?:\w+\s*){30}x` took 3-4 s to be refused at 8 MiB, and a
/// fraction of a second at 2 MiB.
pub const DFA_SIZE_LIMIT: usize = 2 << 20;

/// Loads and compiles a template given as a JSON value (the `response_template` object).
///
/// Errors: every problem of the template (see [`model::load`]), and delimiters whose DFA
/// cannot be built (size limit, unsupported assertion), each with its JSON path.
pub fn compile(value: &Value) -> Result<CompiledTemplate, TemplateErrors> {
    match model::load_parts(value) {
        Ok(model) => compile_model(&model),
        Err((mut errors, patterns)) => {
            // The model is incomplete, so nothing was compiled to DFAs yet: build the DFAs of
            // every delimiter pattern that has no problem of its own, so that DFA problems
            // (size limits) are reported together with the others.
            let mut budget = Budget::default();
            for (path, spec) in patterns {
                match compile_delimiter(&spec).and_then(|d| budget.charge(&d)) {
                    Ok(()) => {}
                    Err(problem) if problem.kind == Kind::CompileBudget => {
                        errors.0.push(problem.at(path));
                        break;
                    }
                    Err(problem) => errors.0.push(problem.at(path)),
                }
            }
            Err(errors)
        }
    }
}

/// Like [`compile`], from JSON text.
pub fn compile_str(text: &str) -> Result<CompiledTemplate, TemplateErrors> {
    compile_model(&model::load_str(text)?)
}

/// Loads a template file: either a bare template or a `tokenizer_config.json` whose
/// `response_template` key holds it. Errors name the file and the line:column of the
/// offending key.
pub fn load_file(path: &Path) -> Result<CompiledTemplate, TemplateErrors> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        TemplateErrors(vec![TemplateError::new(
            "",
            Kind::Io,
            format!("cannot read: {e}"),
        )])
        .with_file(&file)
    })?;
    compile_text(&text).map_err(|e| e.with_file(&file))
}

/// Compiles the text of a template file (a bare template or a `tokenizer_config.json`); every
/// error carries the line:column of its JSON path in `text`.
pub fn compile_text(text: &str) -> Result<CompiledTemplate, TemplateErrors> {
    template_value_from_text(text)
        .and_then(|v| compile(&v))
        .map_err(|errors| locate_errors(errors, text))
}

/// Fills in [`TemplateError::line_col`] from each error's JSON path; in a
/// `tokenizer_config.json` the path then starts at the file's root
/// (`response_template.fields.content.close`), as the line:column does.
fn locate_errors(mut errors: TemplateErrors, text: &str) -> TemplateErrors {
    let member = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map))
            if map.contains_key("response_template") && !map.contains_key("fields") =>
        {
            Some("response_template")
        }
        _ => None,
    };
    for error in &mut errors.0 {
        if error.line_col.is_none() {
            let offset = locate::offset_of(text, &error.path, member);
            error.line_col = Some(locate::line_col(text, offset));
            if let Some(member) = member {
                error.path = if error.path.is_empty() {
                    member.to_string()
                } else {
                    format!("{member}.{}", error.path)
                };
            }
        }
    }
    errors
}

/// Parses JSON text and, when it is a `tokenizer_config.json` (an object with a
/// `response_template` key), returns that key's value; otherwise the whole value.
///
/// Errors: invalid JSON (with the line:column where parsing stopped), or a
/// `tokenizer_config.json` without a template.
pub fn template_value_from_text(text: &str) -> Result<Value, TemplateErrors> {
    let problem =
        |kind: Kind, reason: String| TemplateErrors(vec![TemplateError::new("", kind, reason)]);
    let value: Value = serde_json::from_str(text).map_err(|e| {
        // serde_json's message ends with " at line L column C": the position goes to
        // `line_col` instead, so it is not printed twice.
        let cause = if text.starts_with('\u{feff}') {
            "the file starts with a UTF-8 byte order mark; remove it".to_owned()
        } else {
            json_cause(text, &e)
        };
        let mut errors = problem(Kind::InvalidJson, format!("invalid JSON: {cause}"));
        let column = locate::char_column(text, e.line(), e.column().max(1));
        errors.0[0].line_col = Some((e.line(), column));
        errors
    })?;
    match value {
        Value::Object(mut map)
            if map.contains_key("response_template") && !map.contains_key("fields") =>
        {
            Ok(map.remove("response_template").unwrap_or(Value::Null))
        }
        Value::Object(map)
            if !map.contains_key("fields")
                && TOKENIZER_CONFIG_KEYS.iter().any(|k| map.contains_key(*k)) =>
        {
            Err(problem(
                Kind::NoResponseTemplate,
                "a tokenizer_config.json without a 'response_template' key".into(),
            ))
        }
        other => Ok(other),
    }
}

/// The cause of a JSON parse error of `text`, without serde_json's " at line L column C"
/// suffix; a lone surrogate escape is named as such (see [`lone_surrogate`]).
pub(crate) fn json_cause(text: &str, e: &serde_json::Error) -> String {
    let message = e.to_string();
    let cause = message
        .rfind(" at line ")
        .map_or(message.as_str(), |i| &message[..i]);
    (cause.contains("escape") || cause.contains("surrogate"))
        .then(|| lone_surrogate(text, e.line(), e.column()))
        .flatten()
        .unwrap_or_else(|| cause.to_owned())
}

/// What a JSON parse error at `line`:`column` (1-based, the column in bytes, as serde_json
/// counts) means when it stops just after a surrogate escape (`\ud800`-`\udfff`) that is not
/// one half of a pair: serde_json calls it "unexpected end of hex escape" or "lone leading
/// surrogate in hex escape", which does not say what to fix. `None` for other errors.
fn lone_surrogate(text: &str, line: usize, column: usize) -> Option<String> {
    let line_text = text.split('\n').nth(line.checked_sub(1)?)?.as_bytes();
    let end = column.min(line_text.len());
    let before = &line_text[end.saturating_sub(14)..end];
    // The last surrogate escape `\uXXXX` just before the error position.
    let (hex, unit) = before.windows(6).rev().find_map(|w| {
        let hex = std::str::from_utf8(w.strip_prefix(b"\\u")?).ok()?;
        let unit = u16::from_str_radix(hex, 16).ok()?;
        (0xD800..=0xDFFF).contains(&unit).then_some((hex, unit))
    })?;
    let half = match unit {
        0xD800..=0xDBFF => "a high surrogate not followed by a low one (\\udc00-\\udfff)",
        0xDC00..=0xDFFF => "a low surrogate without a high one (\\ud800-\\udbff) before it",
        _ => return None,
    };
    Some(format!(
        "\\u{hex} is a lone surrogate escape ({half}): a JSON string may hold a surrogate \
         only as a pair (write the character itself, or both halves)"
    ))
}

/// Keys that mark a `tokenizer_config.json` (none of them is a template key).
const TOKENIZER_CONFIG_KEYS: &[&str] = &[
    "tokenizer_class",
    "chat_template",
    "added_tokens_decoder",
    "bos_token",
    "eos_token",
    "model_max_length",
];

/// The compile budget of one template: the heap bytes of all its delimiters' DFAs (with their
/// edge facts) and capture regexes together, 16 MiB. The largest vendored template needs about
/// 1 MiB; a template of hundreds of fields whose delimiters each read a Unicode class (`\w+`
/// in a named group is about 1 MiB of DFA and capture regex) used to take 17 s and 440 MB.
/// Past it compiling stops with [`Kind::CompileBudget`] at the delimiter that crossed it, so
/// both the time and the memory of a compile are bounded by it.
pub const TEMPLATE_DFA_BUDGET: usize = 16 << 20;

/// What a template's compile has spent of [`TEMPLATE_DFA_BUDGET`].
#[derive(Default)]
struct Budget {
    used: usize,
    delimiters: usize,
}

impl Budget {
    /// Counts `d`'s DFAs and capture regexes; [`Kind::CompileBudget`] once the total passes
    /// [`TEMPLATE_DFA_BUDGET`].
    fn charge(&mut self, d: &Delimiter<Owned>) -> Result<(), Problem> {
        fn dfa_bytes(dfa: &Dfa) -> usize {
            match dfa {
                Dfa::Owned(t) => t.dfa().memory_usage() + std::mem::size_of_val(t.edges()),
                _ => 0,
            }
        }
        for b in d.branches.iter() {
            self.used += dfa_bytes(&b.dfa);
            self.used += b.lookahead.as_ref().map_or(0, |l| dfa_bytes(&l.dfa));
            self.used += b.captures.as_ref().map_or(0, |c| c.regex.memory_usage());
        }
        self.delimiters += 1;
        if self.used <= TEMPLATE_DFA_BUDGET {
            return Ok(());
        }
        Err(Problem::new(
            Kind::CompileBudget,
            format!(
                "the template's delimiters need more than the compile budget of \
                 {TEMPLATE_DFA_BUDGET} bytes of DFAs and capture regexes \
                 (compile::TEMPLATE_DFA_BUDGET): {} bytes after {} delimiters, the last {}",
                self.used,
                self.delimiters,
                excerpt(&d.source)
            ),
        ))
    }
}

/// Compiles a validated model.
///
/// Errors: each delimiter that cannot be compiled, with its JSON path; past
/// [`TEMPLATE_DFA_BUDGET`], [`Kind::CompileBudget`] at the delimiter that crossed it, and
/// nothing after it is compiled.
pub fn compile_model(model: &TemplateModel) -> Result<CompiledTemplate, TemplateErrors> {
    let mut errors = Vec::new();
    let mut fields = Vec::with_capacity(model.fields.len());
    let mut budget = Budget::default();
    for field in &model.fields {
        let mut over = false;
        let compiled = field.clone().map_delimiters(|spec, kind| {
            let which = match kind {
                DelimiterKind::Open => "open",
                DelimiterKind::Close => "close",
            };
            let path = || field_path(&field.name, &spec.key(which));
            let d = compile_delimiter(&spec).map_err(|problem| problem.at(path()))?;
            budget.charge(&d).map_err(|problem| {
                over = true;
                problem.at(path())
            })?;
            Ok(d)
        });
        match compiled {
            Ok(f) => fields.push(f),
            Err(e) => errors.push(e),
        }
        if over {
            break;
        }
    }
    if !errors.is_empty() {
        return Err(TemplateErrors(errors));
    }
    let mut order: Vec<usize> = (0..fields.len()).collect();
    order.sort_by(|&a, &b| fields[a].name.cmp(&fields[b].name));
    let mut name_rank = vec![0u32; fields.len()];
    for (rank, &i) in order.iter().enumerate() {
        name_rank[i] = rank as u32;
    }
    let watch = watch_lists(&fields, model.implicit);
    Ok(CompiledTemplate {
        defaults: model.defaults.clone(),
        start_anchor: model.start_anchor.clone(),
        fields,
        implicit: model.implicit,
        name_rank,
        watch,
    })
}

/// The watch lists of a template (reference `ResponseParser._watchlist`): index 0 outside any
/// explicit region (every explicit open, then the implicit field's close), index `1 + f` inside
/// field `f` (its own close; the implicit field watches the outside list), each with its
/// prefilter jump plan.
pub fn watch_lists(fields: &[FieldTable], implicit: Option<usize>) -> Vec<Watch<Owned>> {
    let mut outside: Vec<Watched> = (0..fields.len())
        .filter(|&f| fields[f].open.is_some())
        .map(|field| Watched {
            field,
            kind: DelimiterKind::Open,
        })
        .collect();
    if let Some(i) = implicit.filter(|&i| fields[i].close.is_some()) {
        outside.push(Watched {
            field: i,
            kind: DelimiterKind::Close,
        });
    }
    let outside = watch(fields, outside, false);
    let mut lists = vec![outside.clone()];
    for (f, field) in fields.iter().enumerate() {
        lists.push(if Some(f) == implicit {
            outside.clone()
        } else {
            let close = field.close.as_ref().map(|_| Watched {
                field: f,
                kind: DelimiterKind::Close,
            });
            watch(fields, close.into_iter().collect(), json_strings(field))
        });
    }
    lists
}

/// One watch list: the union of the first bytes, and the jump plan when every branch has a
/// prefilter and no first byte is a lead byte (a match could then start inside a lead run the
/// jump skips).
fn watch(fields: &[FieldTable], delimiters: Vec<Watched>, json_strings: bool) -> Watch<Owned> {
    let mut first = ByteSet::EMPTY;
    let mut lead = ByteSet::EMPTY;
    let mut jump_first = ByteSet::EMPTY;
    let mut jumpable = !delimiters.is_empty();
    for w in &delimiters {
        let field = &fields[w.field];
        let d = match w.kind {
            DelimiterKind::Open => field.open.as_ref(),
            DelimiterKind::Close => field.close.as_ref(),
        };
        let Some(d) = d else { continue };
        first.union(if d.can_be_empty {
            &ByteSet::FULL
        } else {
            &d.first_bytes
        });
        for b in &d.branches {
            match &b.prefilter {
                Some(p) => {
                    lead.union(&p.lead);
                    jump_first.union(&p.first);
                }
                None => jumpable = false,
            }
        }
    }
    let jump = (jumpable && !lead.intersects(&jump_first)).then(|| {
        let bytes: Vec<u8> = jump_first.iter().take(4).collect();
        let mut needles = [0u8; 3];
        let needle_count = if bytes.len() <= 3 {
            needles[..bytes.len()].copy_from_slice(&bytes);
            bytes.len() as u8
        } else {
            0
        };
        JumpPlan {
            lead,
            first: jump_first,
            needles,
            needle_count,
        }
    });
    Watch {
        delimiters,
        first,
        jump,
        json_strings,
    }
}

/// Whether an explicit region of `field` holds JSON whose strings are `"`-quoted, so that
/// lenient mode may keep a close delimiter inside a string from closing it: the `json`
/// parser without `string_delims` (other quotes; a `"` may then be plain text) and without
/// `allow_non_json` (the reference then accepts a body that ends inside a string, so the
/// lenient result would differ where the reference succeeds).
fn json_strings(field: &FieldTable) -> bool {
    matches!(
        &field.content,
        Content::Json {
            string_delims,
            allow_non_json: false,
            ..
        } if string_delims.is_empty()
    )
}

/// The JSON path of a field key (see [`crate::path::field`]).
pub use crate::path::field as field_path;

/// Compiles one delimiter to DFAs.
///
/// Errors: [`Kind::DfaTooLarge`], [`Kind::DfaUnsupported`] (see [`dfa_table`]), or
/// [`Kind::CaptureRegexBuild`] when the regex that resolves its named groups cannot be built.
pub fn compile_delimiter(spec: &DelimiterSpec) -> Result<Delimiter<Owned>, Problem> {
    let pattern = spec.dfa_pattern();
    let mut branches = Vec::with_capacity(pattern.branches.len());
    let mut first_bytes = ByteSet::EMPTY;
    let mut can_be_empty = false;
    for b in &pattern.branches {
        let dfa = branch_dfa(&b.main, b.behind.as_deref()).map_err(|e| {
            e.map_reason(|e| format!("cannot compile {} to a DFA: {e}", excerpt(&b.main)))
        })?;
        let (first, empty) = entry_facts(&dfa);
        first_bytes.union(&first);
        can_be_empty |= empty;
        let lookahead = match &b.lookahead {
            None => None,
            Some((negated, body)) => Some(Lookahead {
                negated: *negated,
                dfa: Dfa::Owned(dfa_table(body).map_err(|e| {
                    e.map_reason(|e| {
                        format!("cannot compile look-ahead {} to a DFA: {e}", excerpt(body))
                    })
                })?),
            }),
        };
        let captures = if pattern.group_names.is_empty() {
            None
        } else {
            Some(Captures::build(&b.main, DFA_SIZE_LIMIT).map_err(|e| {
                // A `String`: nothing to inspect. The DFA of the same pattern was built
                // with the same NFA size limit just before.
                Problem::new(
                    Kind::CaptureRegexBuild,
                    format!("cannot compile {} for captures: {e}", excerpt(&b.main)),
                )
            })?)
        };
        let prefilter = prefilter_of(&b.main, b.behind.is_none().then_some(&dfa));
        branches.push(Branch {
            dfa: Dfa::Owned(dfa),
            lookahead,
            captures,
            prefilter,
        });
    }
    if can_be_empty {
        first_bytes = ByteSet::FULL;
    }
    Ok(Delimiter {
        source: spec.source(),
        literal: matches!(spec, DelimiterSpec::Literals(_)),
        branches,
        group_names: pattern.group_names,
        first_bytes,
        can_be_empty,
    })
}

/// The prefilter facts of a branch's main pattern (see [`Prefilter`]): the bytes of its leading
/// repetitions (`\s*`, `[ \t]+`, `\n?`; every byte a repeated class or literal can contain,
/// all non-ASCII bytes for a class with non-ASCII members) and the bytes that can start the
/// rest. `None` when the rest can match the empty string, or cannot be compiled.
pub fn prefilter(pattern: &str) -> Option<Prefilter> {
    prefilter_of(pattern, None)
}

/// [`prefilter`], given the DFA of the whole pattern when it is at hand (built without a
/// look-behind): a pattern without leading repetitions then needs no second DFA.
fn prefilter_of(pattern: &str, whole: Option<&OwnedDfa>) -> Option<Prefilter> {
    use regex_syntax::hir::{Class, Hir, HirKind};
    let hir = parse_hir(pattern)?;
    let items: Vec<&Hir> = match hir.kind() {
        HirKind::Concat(items) => items.iter().collect(),
        _ => vec![&hir],
    };
    // Every byte a string of `h` can contain, for classes and literals (else `false`).
    fn bytes_of(h: &Hir, bits: &mut ByteSet) -> bool {
        match h.kind() {
            HirKind::Literal(lit) => {
                lit.0.iter().for_each(|&b| bits.insert(b));
                true
            }
            HirKind::Class(Class::Bytes(c)) => {
                for r in c.ranges() {
                    (r.start()..=r.end()).for_each(|b| bits.insert(b));
                }
                true
            }
            HirKind::Class(Class::Unicode(c)) => {
                for r in c.ranges() {
                    let (lo, hi) = (u32::from(r.start()), u32::from(r.end()));
                    for b in lo..=hi.min(0x7F) {
                        bits.insert(b as u8);
                    }
                    if hi > 0x7F {
                        (0x80..=0xFFu8).for_each(|b| bits.insert(b));
                    }
                }
                true
            }
            HirKind::Capture(c) => bytes_of(&c.sub, bits),
            _ => false,
        }
    }
    let mut lead = ByteSet::EMPTY;
    let mut i = 0;
    while i < items.len() {
        match items[i].kind() {
            HirKind::Look(_) | HirKind::Empty => {}
            HirKind::Repetition(rep) => {
                let mut bits = lead;
                if !bytes_of(&rep.sub, &mut bits) {
                    break;
                }
                lead = bits;
            }
            _ => break,
        }
        i += 1;
    }
    let (first, empty) = match whole {
        Some(whole) if i == 0 => entry_facts(whole),
        _ => {
            let rest = Hir::concat(items[i..].iter().map(|h| (*h).clone()).collect());
            entry_facts(&dfa_table(&rest.to_string()).ok()?)
        }
    };
    if empty {
        return None;
    }
    Some(Prefilter { lead, first })
}

/// A regex-syntax pattern's syntax tree, parsed with the syntax options of [`dfa_table`]
/// (`None` when regex-syntax rejects it).
fn parse_hir(pattern: &str) -> Option<regex_syntax::hir::Hir> {
    regex_syntax::ParserBuilder::new()
        .unicode(true)
        .utf8(true)
        .dot_matches_new_line(true)
        .build()
        .parse(pattern)
        .ok()
}

/// Builds an anchored leftmost-first DFA for a regex-syntax pattern and computes its edge facts.
///
/// A pattern with a Unicode word assertion (`\b`, `\B`, `\b{start}`, ...) is compiled by
/// [`word::build`] with the Python `regex` module's word characters (docs/word-boundaries.md):
/// its DFA may have a context slot and delayed matches.
///
/// Errors: [`Kind::DfaTooLarge`] when the NFA, the DFA or determinization exceeds
/// [`DFA_SIZE_LIMIT`] (or a hard limit of the builder); [`Kind::DfaUnsupported`] when the
/// builder refuses the pattern for another reason (not expected: every translation is checked
/// by regex-syntax first), or for what [`word::build`] refuses.
pub fn dfa_table(pattern: &str) -> Result<OwnedDfa, Problem> {
    branch_dfa(pattern, None)
}

/// [`dfa_table`] for a branch's main part with its look-behind (the context-slot bytes it
/// admits, [`crate::pyregex::DfaBranch::behind`]): such a DFA has a context slot and is built
/// by [`word::build`].
pub fn branch_dfa(pattern: &str, behind: Option<&[u8]>) -> Result<OwnedDfa, Problem> {
    let hir = match behind {
        Some(_) => Some(parse_hir(pattern).ok_or_else(|| {
            Problem::new(
                Kind::DfaUnsupported,
                format!("regex-syntax rejects {}", excerpt(pattern)),
            )
        })?),
        None => parse_hir(pattern).filter(word::needs_product),
    };
    if let Some(hir) = hir {
        let built = word::build(&hir, DFA_SIZE_LIMIT, behind)?;
        let entries = word::entry_states(&built.dfa, built.context);
        let edge = edge_facts(&built.dfa, &entries);
        return Ok(OwnedDfa::new(built.dfa, edge, built.context));
    }
    let dfa = dense::Builder::new()
        .configure(dfa_config())
        .syntax(
            syntax::Config::new()
                .unicode(true)
                .utf8(true)
                .dot_matches_new_line(true),
        )
        .thompson(thompson::Config::new().nfa_size_limit(Some(DFA_SIZE_LIMIT)))
        .build(pattern)
        .map_err(|e| build_problem(&e))?;
    let edge = edge_facts(&dfa, &word::entry_states(&dfa, false));
    Ok(OwnedDfa::new(dfa, edge, false))
}

/// The configuration of every delimiter DFA: leftmost-first (Python's priority), anchored
/// starts only, size-limited.
pub(crate) fn dfa_config() -> dense::Config {
    dense::Config::new()
        .match_kind(MatchKind::LeftmostFirst)
        .start_kind(StartKind::Anchored)
        .dfa_size_limit(Some(DFA_SIZE_LIMIT))
        .determinize_size_limit(Some(DFA_SIZE_LIMIT))
}

/// The problem of a failed DFA build: [`Kind::DfaTooLarge`] naming the limit when it passed a
/// size limit, of the DFA or its determinization
/// ([`dense::BuildError::is_size_limit_exceeded`]), or of the NFA built first (the NFA's error,
/// the DFA error's source, has a [`thompson::BuildError::size_limit`]; its own message is only
/// "error building NFA"); else [`Kind::DfaUnsupported`] with the builder's message.
pub(crate) fn build_problem(e: &dense::BuildError) -> Problem {
    let nfa_limit = std::error::Error::source(e)
        .and_then(|source| source.downcast_ref::<thompson::BuildError>())
        .and_then(thompson::BuildError::size_limit);
    if let Some(limit) = nfa_limit {
        Problem::new(
            Kind::DfaTooLarge,
            format!(
                "its NFA is larger than the size limit of {limit} bytes per delimiter \
                 (compile::DFA_SIZE_LIMIT)"
            ),
        )
    } else if e.is_size_limit_exceeded() {
        Problem::new(
            Kind::DfaTooLarge,
            format!(
                "{e}: a delimiter's DFA may use at most {DFA_SIZE_LIMIT} bytes \
                 (compile::DFA_SIZE_LIMIT)"
            ),
        )
    } else {
        Problem::new(Kind::DfaUnsupported, e.to_string())
    }
}

/// [`first_facts`] from the states where a walk of `t` reads its first character.
fn entry_facts(t: &OwnedDfa) -> (ByteSet, bool) {
    first_facts(t.dfa(), &word::entry_states(t.dfa(), t.context()))
}

/// Which bytes can begin a match from the `entries` states, and whether the empty string can
/// match (also when that match is delayed: reported after one more character).
fn first_facts<A: Automaton>(dfa: &A, entries: &[StateID]) -> (ByteSet, bool) {
    let mut first = ByteSet::EMPTY;
    let mut empty = false;
    for &s in entries {
        if dfa.is_match_state(dfa.next_eoi_state(s)) {
            empty = true;
        }
        for b in 0..=255u8 {
            let t = dfa.next_state(s, b);
            if dfa.is_match_state(t) {
                empty = true;
            }
            if !dfa.is_dead_state(t) {
                first.insert(b);
            }
        }
    }
    if !empty && dfa.pattern_len() > 1 {
        let delayed = |t: StateID| dfa.is_match_state(t) && word::is_delayed(dfa, t);
        empty = word::after_char(dfa, entries).into_iter().any(|s| {
            delayed(dfa.next_eoi_state(s)) || (0..=255u8).any(|b| delayed(dfa.next_state(s, b)))
        });
    }
    (first, empty)
}

/// Computes `EDGE_GROW`, `EDGE_SURE`, `EDGE_REACH` and `EDGE_DELAYED` for every state
/// reachable from the `entries` states (see `parser_runtime_core::tables`).
///
/// In a DFA with delayed matches (two patterns), `EDGE_SURE` also needs the end of input to
/// report a match, and every next byte and the end to report the same pattern (the match end
/// depends on it); `EDGE_DELAYED` says it is the delayed one.
fn edge_facts(dfa: &dense::DFA<Vec<u32>>, entries: &[StateID]) -> Vec<(u32, u8)> {
    // One representative byte per equivalence class.
    let mut reps: Vec<u8> = Vec::new();
    let mut seen_class = [false; 256];
    for b in 0..=255u8 {
        let class = dfa.byte_classes().get(b) as usize;
        if !seen_class[class] {
            seen_class[class] = true;
            reps.push(b);
        }
    }
    let mut index: HashMap<StateID, usize> = HashMap::new();
    let mut states: Vec<StateID> = Vec::new();
    for &s in entries {
        index.insert(s, states.len());
        states.push(s);
    }
    let mut next: Vec<Vec<StateID>> = Vec::new();
    // Breadth-first over states, in discovery order.
    let mut i = 0;
    while i < states.len() {
        let s = states[i];
        let row: Vec<StateID> = reps.iter().map(|&b| dfa.next_state(s, b)).collect();
        for &t in &row {
            if !dfa.is_dead_state(t) && !index.contains_key(&t) {
                index.insert(t, states.len());
                states.push(t);
            }
        }
        next.push(row);
        i += 1;
    }
    let n = states.len();
    let is_match = |t: StateID| dfa.is_match_state(t);
    let eoi_match: Vec<bool> = states
        .iter()
        .map(|&s| dfa.is_match_state(dfa.next_eoi_state(s)))
        .collect();
    // reach[i]: from state i, some continuation reports a match (byte or end of input).
    let mut reach: Vec<bool> = (0..n)
        .map(|i| eoi_match[i] || next[i].iter().any(|&t| is_match(t)))
        .collect();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, row) in next.iter().enumerate() {
        for &t in row {
            if let Some(&j) = index.get(&t) {
                preds[j].push(i);
            }
        }
    }
    let mut work: Vec<usize> = (0..n).filter(|&i| reach[i]).collect();
    while let Some(j) = work.pop() {
        for &i in &preds[j] {
            if !reach[i] {
                reach[i] = true;
                work.push(i);
            }
        }
    }
    let mut out = Vec::new();
    for i in 0..n {
        let row = &next[i];
        let grow = row
            .iter()
            .any(|&t| !dfa.is_dead_state(t) && index.get(&t).is_some_and(|&j| reach[j]));
        let mut sure = row.iter().all(|&t| is_match(t));
        let mut delayed = false;
        if sure && dfa.pattern_len() > 1 {
            let eoi = dfa.next_eoi_state(states[i]);
            let pattern = |t: StateID| dfa.match_pattern(t, 0);
            sure = is_match(eoi) && row.iter().all(|&t| pattern(t) == pattern(eoi));
            delayed = sure && word::is_delayed(dfa, eoi);
        }
        let mut flags = 0u8;
        if delayed {
            flags |= EDGE_DELAYED;
        }
        if grow {
            flags |= EDGE_GROW;
        }
        if sure {
            flags |= EDGE_SURE;
        }
        if reach[i] {
            flags |= EDGE_REACH;
        }
        if flags != 0 {
            out.push((states[i].as_u32(), flags));
        }
    }
    out.sort_by_key(|&(s, _)| s);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use parser_runtime_core::router::RouteDfa;
    use regex_automata::util::start;
    use regex_automata::Anchored;

    fn walk(t: &OwnedDfa, text: &str) -> StateID {
        let dfa = t.dfa();
        let mut s = dfa
            .start_state(&start::Config::new().anchored(Anchored::Yes))
            .unwrap();
        for &b in text.as_bytes() {
            s = dfa.next_state(s, b);
        }
        s
    }

    #[test]
    fn literal_complete_at_edge_is_sure_and_cannot_grow() {
        let t = dfa_table("</think>").unwrap();
        let facts = t.edge(walk(&t, "</think>"));
        assert_eq!(facts & EDGE_GROW, 0);
        assert_ne!(facts & EDGE_SURE, 0);
        let facts = t.edge(walk(&t, "</thi"));
        assert_ne!(facts & EDGE_GROW, 0);
        assert_eq!(facts & EDGE_SURE, 0);
    }

    #[test]
    fn literal_prefix_of_another_can_grow() {
        let t = dfa_table("<a>b|<a>").unwrap();
        let facts = t.edge(walk(&t, "<a>"));
        assert_ne!(facts & EDGE_GROW, 0);
    }

    #[test]
    fn greedy_can_grow_lazy_cannot() {
        let t = dfa_table(r"<x>\s*").unwrap();
        assert_ne!(t.edge(walk(&t, "<x> ")) & EDGE_GROW, 0);
        let t = dfa_table(r"<x>\s*?").unwrap();
        assert_eq!(t.edge(walk(&t, "<x>")) & EDGE_GROW, 0);
    }

    #[test]
    fn end_assertion_is_reach_only() {
        let t = dfa_table(r"\z").unwrap();
        let facts = t.edge(walk(&t, ""));
        assert_eq!(facts & (EDGE_SURE | EDGE_GROW), 0);
        assert_ne!(facts & EDGE_REACH, 0);
    }

    #[test]
    fn dfa_problems_are_reported_with_model_problems() {
        let template = serde_json::json!({
            "start_anchor": "<s>",
            "fields": {
                "x": {"open": "<x>", "close_pattern": "\\w{5000}"},
                "y": {"open": "<y>", "close": "</y>", "join": 5}
            }
        });
        let errors = compile(&template).unwrap_err();
        let found: Vec<(&str, Kind)> = errors.iter().map(|e| (e.path.as_str(), e.kind)).collect();
        assert_eq!(
            found,
            [
                ("fields.y.join", Kind::WrongType),
                ("fields.x.close_pattern", Kind::DfaTooLarge)
            ],
            "{errors}"
        );
    }

    #[test]
    fn invalid_json_positions_count_chars_and_name_a_bom() {
        let errors = compile_text("{\n  \"思考\": [1,]\n}").unwrap_err();
        assert_eq!(errors.0[0].kind, Kind::InvalidJson, "{errors}");
        assert_eq!(errors.0[0].line_col, Some((2, 12)), "{errors}");
        let errors = compile_text("\u{feff}{}").unwrap_err();
        assert_eq!(errors.0[0].kind, Kind::InvalidJson, "{errors}");
        assert!(errors.0[0].reason.contains("byte order mark"), "{errors}");
    }

    #[test]
    fn dfa_build_errors_are_typed() {
        // A size limit of the NFA (the DFA error's source), of determinization.
        assert_eq!(dfa_table(r"\w{5000}").unwrap_err().kind, Kind::DfaTooLarge);
        // Unicode word assertions compile (docs/word-boundaries.md), and so do ASCII ones; an
        // ASCII one next to a Unicode one is refused (the Python translation writes neither).
        for p in [
            r"\bx",
            r"x\B",
            r"\b{start}x",
            r"x\b{end}",
            r"(?:a|\b{start-half})",
            r"(?-u:\b)x(?-u:\B)",
        ] {
            dfa_table(p).unwrap_or_else(|e| panic!("{p}: {}", e.reason));
        }
        assert_eq!(
            dfa_table(r"(?-u:\b)x\b").unwrap_err().kind,
            Kind::DfaUnsupported
        );
    }

    #[test]
    fn tokenizer_config_errors_name_the_path_from_the_file_root() {
        let text = "{\n  \"eos_token\": \"</s>\",\n  \"response_template\": {\n    \"start_anchor\": \"<s>\",\n    \"fields\": {\"content\": {\"colour\": 1}}\n  }\n}\n";
        let errors = compile_text(text).unwrap_err();
        let error = &errors.0[0];
        assert_eq!(error.path, "response_template.fields.content.colour");
        assert_eq!(error.line_col, Some((5, 28)));
        // A bare template keeps its own root.
        let bare =
            compile_text("{\"start_anchor\": \"<s>\", \"fields\": {\"content\": {\"colour\": 1}}}")
                .unwrap_err();
        assert_eq!(bare.0[0].path, "fields.content.colour");
    }

    #[test]
    fn file_level_errors_are_typed() {
        let errors = template_value_from_text(r#"{"chat_template": "x"}"#).unwrap_err();
        assert_eq!(errors.0[0].kind, Kind::NoResponseTemplate, "{errors}");
        let errors = load_file(Path::new("/nonexistent/template.json")).unwrap_err();
        assert_eq!(errors.0[0].kind, Kind::Io, "{errors}");
    }

    #[test]
    fn prefilters_from_the_branch_dfa_equal_those_built_apart() {
        // `compile_delimiter` takes a prefilter's first bytes from the branch DFA when the
        // pattern has no leading repetition; `prefilter` builds a DFA of its own.
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../templates");
        let mut compared = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|x| x != "json") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let model = model::load_str(&text).unwrap();
            for field in &model.fields {
                for spec in [&field.open, &field.close].into_iter().flatten() {
                    let compiled = compile_delimiter(spec).unwrap();
                    let pattern = spec.dfa_pattern();
                    for (b, branch) in pattern.branches.iter().zip(compiled.branches.iter()) {
                        let apart = prefilter(&b.main);
                        assert_eq!(branch.prefilter, apart, "{}: {}", path.display(), b.main);
                        compared += 1;
                    }
                }
            }
        }
        assert!(compared > 50, "{compared}");
    }

    #[test]
    fn hostile_pattern_fails_fast() {
        let started = std::time::Instant::now();
        let err = dfa_table("(a|b)*a(a|b){40}").unwrap_err();
        assert_eq!(err.kind, Kind::DfaTooLarge, "{err}");
        assert!(started.elapsed().as_secs() < 20);
    }
}
