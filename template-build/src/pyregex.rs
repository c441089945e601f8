//! Translation of the Python `regex`-module dialect into the dialects of our two Rust engines.
//!
//! Response templates carry regular expressions written for Python's third-party `regex`
//! module (the reference implementation, transformers 5.23.0 `chat_parsing/`, does
//! `import regex as re`), always compiled with `DOTALL` and without `MULTILINE`, in the
//! module's default `VERSION0` behaviour. We run them with
//!
//! * regex-automata DFAs (regex-syntax syntax, no look-around, no backreferences) for the
//!   delimiters ([`to_dfa`]), and
//! * `fancy_regex` (look-around, backreferences, atomic groups) for the `tag_pattern` of the
//!   `xml-inline` content parser and the start anchor ([`to_fancy`]).
//!
//! The module holds a small hand-written parser that follows the parsing rules of the Python
//! `regex` module (version 2026.11.19, `_regex_core.py`): where it takes a `{`, a `[`, an
//! escape or an inline flag literally, so do we; where it raises an error, so do we. The parsed
//! pattern is then written out again in the target dialect, every construct spelled explicitly
//! (`.` becomes `(?s:.)`, `^` becomes `\A`, case-insensitive pieces are wrapped in `(?i:..)`,
//! every literal meta character is escaped), so the result does not depend on the flags the
//! caller compiles it with, beyond Unicode mode being on.
//!
//! Dialect rules (Python `regex` semantics, checked against the module itself):
//!
//! * `{` that does not start a valid quantifier (`{n}`, `{n,}`, `{n,m}`, `{,m}`, `{,}`) is a
//!   literal, and so is a stray `}`; `{e<=1}`-style fuzzy constraints are rejected, as is a
//!   `{` that the module reads as the start of an unterminated fuzzy constraint (`a{system}`).
//! * In a character class a leading `]` is literal, `[` is literal (no nested sets in
//!   `VERSION0`), `&&`, `--`, `~~`, `||` are not set operators, `\b` is a backspace, `\1`..`\7`
//!   are octal escapes, `-` next to a class escape (`[\d-z]`) is a literal hyphen.
//!   POSIX classes (`[[:alpha:]]`) are rejected.
//! * `^` is `\A`; `$` matches at the very end or before a final `"\n"`; `\Z` and `\z` are `\z`.
//! * `\d`, `\w`, `\s`, `\b`, `\B` are Unicode; `\h` is `[\t\p{Zs}]`; `\m` / `\M` are the word
//!   start / end boundaries.
//! * Escapes of any non-alphanumeric character are that character (`\<` is `<`, not a word
//!   boundary); unknown ASCII-letter escapes are errors; `\xHH`, `\uHHHH`, `\UHHHHHHHH`,
//!   `\0`, `\0oo` and three-digit octal escapes become code points; `\N` and `\p` / `\P` not
//!   followed by a well-formed name are the literal letters.
//! * `\1`..`\99`, `(?P=name)` and `\g<name>` / `\g<1>` are backreferences.
//! * Inline flags `(?i)`, `(?m)`, `(?s)`, `(?x)`, `(?u)` apply from where they stand to the
//!   end of the enclosing group; `(?flags:...)` and `(?flags-flags:...)` are scoped. Verbose
//!   mode (`x`) is translated faithfully (whitespace and `#` comments outside classes are
//!   dropped). `(?b)`, `(?e)` and `(?V0)` are accepted (no effect here); `(?a)`, `(?L)`,
//!   `(?w)`, `(?f)`, `(?p)`, `(?r)` and `(?V1)` are rejected.
//! * A quantifier on a zero-width assertion is reduced (`\b*` matches like the empty pattern,
//!   `(?=a)+` like `(?=a)`), as the module's matching of such repeats is equivalent.
//!
//! Constructs Python accepts that are rejected everywhere: recursion (`(?R)`, `(?1)`,
//! `(?&name)`, `(?P>name)`), conditionals (`(?(1)..)`), branch reset (`(?|..)`), backtracking
//! verbs (`(*SKIP)`), fuzzy matching, named lists (`\L<name>`), named characters
//! (`\N{...}`), grapheme clusters (`\X`), lone surrogates, POSIX classes, duplicate group names
//! (the module merges them into one group), the flags listed above, Unicode property names
//! regex-syntax does not know (`\p{IsAlpha}`), a case-insensitive backreference
//! (fancy-regex compares backreferences case-sensitively) and a forward backreference (to a
//! group defined after it). fancy-regex itself refuses look-behind of unbounded length; the
//! DFA translation also refuses every look-behind, backreference, atomic group, possessive
//! quantifier, `\R`, `\K`, `\G` and any look-ahead but a trailing one (see [`to_dfa`]).
//!
//! Known differences that remain: in the DFA translation a `$` that does not end a branch
//! (a top-level alternative, or an alternative of a trailing group after a fixed-length prefix,
//! see [`to_dfa`]) is `\z` (it no longer matches before a final newline), and a trailing
//! look-ahead is checked at the preferred end of the branch's main part only (no backtracking
//! into it, so `x.*?$` does not match `"xa"`); a group repeated with an
//! empty last iteration (`(a*)*`) reports the last non-empty iteration in our engines and the
//! empty one in Python; Python's `[^\P{L}\p{L}]` matches every character (a quirk of the
//! module), ours none.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::fmt::Write as _;

/// Why a pattern cannot be used.
///
/// `message` names the offending construct, e.g. "look-behind `(?<=`", "backreference `\1`",
/// "atomic group `(?>`", "possessive quantifier `*+`", "look-ahead not at the end of a
/// branch", or the syntax error (the Python `regex` module rejects the same patterns, with its
/// own wording).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegexIssue {
    /// What is wrong, naming the construct.
    pub message: String,
    /// Byte offset in the (original, Python-dialect) pattern, when known.
    pub offset: Option<usize>,
}

impl fmt::Display for RegexIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            Some(offset) => write!(f, "{} (at byte {offset})", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for RegexIssue {}

/// One branch of a pattern translated for the DFA engine: a top-level alternative, or one
/// alternative of a distributed trailing group (see [`to_dfa`]). The driver runs `main`
/// anchored (leftmost-first: its preferred match) and then, from the end of that match, the
/// look-ahead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DfaBranch {
    /// The consuming part, a regex-syntax pattern (compile with Unicode on; every `.` is
    /// already spelled `(?s:.)`, so `dot_matches_new_line` does not matter). May be empty.
    pub main: String,
    /// The trailing look-ahead of the branch, if any: `(negated, body)`, the body a
    /// regex-syntax pattern that must (or, negated, must not) match at the end of `main`'s
    /// match. Python's `$` at the end of a branch is `(false, "\n?\\z")`.
    pub lookahead: Option<(bool, String)>,
}

/// A Python pattern translated for the DFA engine; see [`to_dfa`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DfaPattern {
    /// The branches, in priority order: a single one unless some alternative ends with a
    /// look-ahead or `$` (see [`to_dfa`] for the split).
    pub branches: Vec<DfaBranch>,
    /// The named groups of the `main` parts, in order, each once (a group copied into several
    /// branches by the split appears in each of their `main` parts).
    pub group_names: Vec<String>,
}

/// Full-semantics translation for `fancy_regex` 0.14.
///
/// Returns a pattern such that `fancy_regex::Regex::new(&s)` behaves like Python
/// `regex.compile(pattern, regex.DOTALL)` (module default `VERSION0`): same matches, same
/// capture groups (numbered and named) in the same order. Python's `$` becomes `(?=\n?\z)`,
/// numbered backreferences become `\k<N>`, possessive quantifiers become atomic groups.
/// Look-behind must still be of bounded length for fancy-regex, which reports it otherwise.
pub fn to_fancy(pattern: &str) -> Result<String, RegexIssue> {
    let parsed = parse(pattern)?;
    let mut emitter = Emitter::new(pattern, Target::Fancy);
    emitter.emit(&parsed.root)?;
    let out = emitter.out;
    if let Err(e) = fancy_regex::Regex::new(&out) {
        return Err(RegexIssue {
            message: format!("fancy-regex rejects the translated pattern `{out}`: {e}"),
            offset: None,
        });
    }
    Ok(out)
}

/// The most branches [`to_dfa`] splits a pattern into (each becomes DFAs of its own).
pub const MAX_DFA_BRANCHES: usize = 64;

/// Translation for DFAs (regex-syntax dialect, no look-around, no backreferences).
///
/// Returns one branch holding the whole pattern unless some alternative ends with a
/// look-ahead (`(?=..)`, `(?!..)`) or with Python's `$` (non-`MULTILINE`: matches at the very
/// end or before a final `"\n"`). Then the pattern is split into branches, tried in order, each
/// with a `main` part (a regex-syntax pattern) and its trailing `lookahead`,
/// `Some((negated, body))`; a `$` ending a branch becomes the look-ahead `(false, "\n?\\z")`.
///
/// **Where the split happens.** A top-level alternative whose last item is `$` or a look-ahead
/// is a branch of its own. So is each alternative of a trailing group: when the last item of
/// an alternative is a group that is not quantified (non-capturing, flag-scoped `(?i:..)` or
/// capturing) one of whose alternatives ends that way, the group is distributed: `P(?:A|B$)`
/// becomes the branches `PA` and `PB` + `$`, recursively (`x(?:a|b(?:c|$))` gives `xa`, `xbc`,
/// `xb` + `$`). Consecutive alternatives without a trailing `$` / look-ahead stay together
/// (`P(?:a|b|$)` gives `P(?:a|b)` and `P` + `$`). A capturing group is kept around each part
/// (`P(?P<n>A|B$)` gives `P(?P<n>A)` and `P(?P<n>B)` + `$`): the look-ahead is zero-width, so
/// every group, named or not, gets the span Python gives it, and each branch's capture engine
/// finds a group under its own name ([`DfaPattern::group_names`] lists each name once). Flags
/// are resolved when parsing, so a flag scoped to a distributed group keeps its scope. At
/// most [`MAX_DFA_BRANCHES`] branches are produced; a pattern that would give more is
/// rejected with a [`RegexIssue`] naming the limit.
///
/// **Priority.** Python tries, for each way of matching `P` (in priority order), `A` and then
/// `B`, while the branches `PA`, `PB` try every way of matching `P` with `A` first. The two
/// agree when every match of `P` has the same length (a literal, `\d{4}-`, `[ab]c`, a group
/// of such): `A` and `B` are then tried at one and the same position. So a group is
/// distributed only after such a *fixed-length* prefix `P` (at every level of the recursion).
/// After a prefix of variable length the group is left whole: a `$` in it keeps the `\z`
/// approximation below and a look-ahead in it is rejected. Distributing there would not be
/// closer: with a lazy prefix, `<think>[\s\S]*?(?:</think>|$)` would split into
/// `<think>[\s\S]*?</think>` and `<think>[\s\S]*?` + `$`, whose main part ends right after
/// `<think>` (the driver checks the look-ahead at the preferred end of the main part only), so
/// an unterminated `<think>` would no longer match at all; with a greedy one,
/// `x.*(?:</s>|$)` on `"x</s>y"` would match `"x</s>"` where Python matches `"x</s>y"`; the
/// `\z` approximation gets both right up to a final newline.
///
/// **Exactness.** The driver (see [`DfaBranch`]) runs the look-ahead from the preferred
/// (leftmost-first) end of the main part and does not backtrack into it; Python does. A
/// branch is therefore exact when its main part, from a given start, has one match end or its
/// preferred end is the one the look-ahead needs (literals, greedy runs such as `\s*` before a
/// look-ahead that cannot start with what they consume); a lazy main part such as `x.*?$` is
/// not (its look-ahead is tried right after `x` only). Within a look-ahead body, a `$` with
/// nothing after it in the body (at the end of a top-level alternative of the body, or of an
/// unquantified group ending one) is exact as `\n?\z`. A `$` anywhere else — in the middle of
/// a branch (`a$b`, `(?:$|x)y`), in a quantified group, or in a group after a variable-length
/// prefix — becomes `\z` (a documented approximation: it no longer matches before a final
/// newline); `\Z` becomes `\z`.
///
/// Rejected, with a [`RegexIssue`] naming the construct: look-behind, backreferences
/// (`\1`, `(?P=name)`, `\g<name>`), atomic groups, possessive quantifiers, `\R`, `\K`, `\G`,
/// a look-ahead anywhere but at the end of a branch as above, a named group inside such a
/// look-ahead, more than [`MAX_DFA_BRANCHES`] branches, everything [`to_fancy`] rejects, and
/// whatever regex-syntax rejects in the translation (its message is reported). A Unicode `\b`
/// is translated as is; building a DFA from it is left to the DFA builder, which reports it.
pub fn to_dfa(pattern: &str) -> Result<DfaPattern, RegexIssue> {
    let parsed = parse(pattern)?;
    let mut group_names = Vec::new();
    if !alternatives(&parsed.root)
        .iter()
        .any(|alt| splits(sequence(alt)))
    {
        let main = emit_dfa(pattern, &parsed.root, false)?;
        validate_dfa(&main)?;
        collect_names(&parsed.root, &mut group_names);
        return Ok(DfaPattern {
            branches: vec![DfaBranch {
                main,
                lookahead: None,
            }],
            group_names,
        });
    }
    let mut branches = Vec::new();
    for split in split_alternatives(&parsed.root)? {
        for item in &split.items {
            collect_names(item, &mut group_names);
        }
        let mut emitter = Emitter::new(pattern, Target::Dfa);
        emitter.emit_concat(&split.items)?;
        let main = emitter.out;
        validate_dfa(&main)?;
        let lookahead = match split.tail {
            None => None,
            Some(Tail::Dollar) => Some((false, "\n?\\z".to_string())),
            Some(Tail::Look {
                negated,
                body,
                span,
            }) => {
                let mut names = Vec::new();
                collect_names(body, &mut names);
                if let Some(name) = names.first() {
                    return Err(RegexIssue {
                        message: format!(
                            "named group `{name}` inside a look-ahead (its capture cannot be \
                             extracted by the DFA engine)"
                        ),
                        offset: Some(span.0),
                    });
                }
                let body = emit_dfa(pattern, body, true)?;
                validate_dfa(&body)?;
                Some((negated, body))
            }
        };
        branches.push(DfaBranch { main, lookahead });
    }
    // A name shows up in every branch a distributed group was copied into.
    let mut seen = HashSet::new();
    group_names.retain(|name| seen.insert(name.clone()));
    Ok(DfaPattern {
        branches,
        group_names,
    })
}

/// The named groups of a Python pattern, in order of definition (including those inside
/// look-arounds, as Python's `Pattern.groupindex` does). Errors as the parse of [`to_fancy`].
pub fn group_names(pattern: &str) -> Result<Vec<String>, RegexIssue> {
    Ok(parse(pattern)?.names)
}

/// Escape a literal string for regex-syntax (and fancy-regex): every meta character gets a
/// backslash (`regex_syntax::escape`).
pub fn escape(literal: &str) -> String {
    regex_syntax::escape(literal)
}

// ---------------------------------------------------------------------------------------------
// Syntax tree
// ---------------------------------------------------------------------------------------------

/// Byte span `(start, end)` in the original pattern.
type Span = (usize, usize);

#[derive(Debug, Clone, PartialEq)]
enum Node {
    Empty,
    Lit {
        c: char,
        ci: bool,
    },
    Dot {
        all: bool,
    },
    Set {
        negated: bool,
        items: Vec<SetItem>,
        ci: bool,
    },
    /// A class escape outside a set (`\d`, `\p{L}`, ...).
    Item {
        item: SetItem,
        ci: bool,
    },
    Assert {
        kind: AssertKind,
    },
    Group {
        capture: Option<Capture>,
        body: Box<Node>,
    },
    Look {
        behind: bool,
        negated: bool,
        body: Box<Node>,
        span: Span,
    },
    Atomic {
        body: Box<Node>,
        span: Span,
    },
    Repeat {
        child: Box<Node>,
        min: u32,
        max: Option<u32>,
        kind: RepeatKind,
        span: Span,
    },
    Backref {
        target: RefTarget,
        /// The group number, resolved after parsing.
        group: u32,
        /// How many groups were opened before the reference.
        opened_before: u32,
        ci: bool,
        span: Span,
    },
    /// `\R`: `(?>\r\n|[\n\x0b\x0c\r\x85\u2028\u2029])`.
    LineBreak {
        span: Span,
    },
    /// `\K`.
    Keep {
        span: Span,
    },
    /// `\G`.
    SearchAnchor {
        span: Span,
    },
    Concat(Vec<Node>),
    Alt(Vec<Node>),
}

#[derive(Debug, Clone, PartialEq)]
struct Capture {
    name: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
enum RefTarget {
    Number(u32),
    Name(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RepeatKind {
    Greedy,
    Lazy,
    Possessive,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AssertKind {
    /// `^` (no MULTILINE), `\A`.
    Start,
    /// `^` with MULTILINE.
    LineStart,
    /// `$` without MULTILINE: end, or before a final `\n`.
    DollarEnd,
    /// `$` with MULTILINE.
    LineEnd,
    /// `\Z`, `\z`.
    End,
    WordBoundary,
    NotWordBoundary,
    WordStart,
    WordEnd,
}

#[derive(Debug, Clone, PartialEq)]
enum SetItem {
    Char(char),
    Range(char, char),
    Perl {
        kind: Perl,
        negated: bool,
    },
    /// `\h`: horizontal whitespace, `[\t\p{Zs}]`.
    Blank,
    Prop {
        negated: bool,
        name: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Perl {
    Digit,
    Word,
    Space,
}

impl Node {
    /// Python's `is_empty`: matches the empty string only, unconditionally.
    fn is_empty(&self) -> bool {
        match self {
            Node::Empty => true,
            Node::Concat(items) | Node::Alt(items) => items.iter().all(Node::is_empty),
            Node::Group { body, .. } | Node::Atomic { body, .. } => body.is_empty(),
            Node::Look {
                negated: false,
                body,
                ..
            } => body.is_empty(),
            _ => false,
        }
    }

    /// A zero-width assertion without captures, whose repetition is equivalent to a single
    /// occurrence (or to none).
    fn is_zero_width(&self) -> bool {
        match self {
            Node::Assert { .. } | Node::SearchAnchor { .. } => true,
            Node::Look { body, .. } => !has_capture(body),
            Node::Group {
                capture: None,
                body,
            } => body.is_zero_width(),
            Node::Concat(items) => !items.is_empty() && items.iter().all(Node::is_zero_width),
            _ => false,
        }
    }
}

fn has_capture(node: &Node) -> bool {
    match node {
        Node::Group { capture, body } => capture.is_some() || has_capture(body),
        Node::Look { body, .. } | Node::Atomic { body, .. } => has_capture(body),
        Node::Repeat { child, .. } => has_capture(child),
        Node::Concat(items) | Node::Alt(items) => items.iter().any(has_capture),
        _ => false,
    }
}

fn collect_names(node: &Node, out: &mut Vec<String>) {
    match node {
        Node::Group { capture, body } => {
            if let Some(Capture { name: Some(name) }) = capture {
                out.push(name.clone());
            }
            collect_names(body, out);
        }
        Node::Look { body, .. } | Node::Atomic { body, .. } => collect_names(body, out),
        Node::Repeat { child, .. } => collect_names(child, out),
        Node::Concat(items) | Node::Alt(items) => {
            for item in items {
                collect_names(item, out);
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------------
// Parser (follows the Python `regex` module's parsing rules)
// ---------------------------------------------------------------------------------------------

const F_IGNORECASE: u32 = 1 << 0;
const F_MULTILINE: u32 = 1 << 1;
const F_DOTALL: u32 = 1 << 2;
const F_VERBOSE: u32 = 1 << 3;
const F_UNICODE: u32 = 1 << 4;
const F_ASCII: u32 = 1 << 5;
const F_LOCALE: u32 = 1 << 6;
const F_WORD: u32 = 1 << 7;
const F_FULLCASE: u32 = 1 << 8;
const F_BESTMATCH: u32 = 1 << 9;
const F_ENHANCEMATCH: u32 = 1 << 10;
const F_POSIX: u32 = 1 << 11;
const F_REVERSE: u32 = 1 << 12;
const F_VERSION0: u32 = 1 << 13;
const F_VERSION1: u32 = 1 << 14;
const GLOBAL_FLAGS: u32 =
    F_BESTMATCH | F_ENHANCEMATCH | F_POSIX | F_REVERSE | F_VERSION0 | F_VERSION1;

/// Python's repeat-count ceiling (`UNLIMITED`, 2**32 - 1): counts must stay below it.
const UNLIMITED: u64 = u32::MAX as u64;

/// Deepest group nesting we accept (regex-syntax's own limit is 250, and our translation may
/// add a level per group).
const MAX_DEPTH: usize = 100;

/// Python `str.isspace()`.
fn py_isspace(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python `str.isidentifier()`, approximated with Unicode alphabetic / alphanumeric.
fn py_isidentifier(s: &str) -> bool {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if c == '_' || c.is_alphabetic() => {}
        _ => return false,
    }
    chars.all(|c| c == '_' || c.is_alphanumeric())
}

fn is_octal(c: char) -> bool {
    ('0'..='7').contains(&c)
}

/// Scanner over the pattern mirroring the Python module's `Source` (including its verbose-mode
/// skipping of whitespace and `#` comments in `get`, `match` and `get_while`).
struct Source {
    chars: Vec<char>,
    /// Byte offset of each char, plus the pattern length at the end.
    offsets: Vec<usize>,
    pos: usize,
    ignore_space: bool,
}

impl Source {
    fn new(pattern: &str) -> Self {
        let mut chars = Vec::new();
        let mut offsets = Vec::new();
        for (i, c) in pattern.char_indices() {
            chars.push(c);
            offsets.push(i);
        }
        offsets.push(pattern.len());
        Source {
            chars,
            offsets,
            pos: 0,
            ignore_space: false,
        }
    }

    fn byte(&self, pos: usize) -> usize {
        self.offsets
            .get(pos)
            .or(self.offsets.last())
            .copied()
            .unwrap_or(0)
    }

    fn skip_from(&self, mut p: usize) -> usize {
        if !self.ignore_space {
            return p;
        }
        loop {
            match self.chars.get(p) {
                Some(&c) if py_isspace(c) => p += 1,
                Some('#') => match self.chars[p..].iter().position(|&c| c == '\n') {
                    Some(k) => p += k,
                    None => return self.chars.len(),
                },
                _ => return p,
            }
        }
    }

    fn get(&mut self) -> Option<char> {
        let p = self.skip_from(self.pos);
        match self.chars.get(p) {
            Some(&c) => {
                self.pos = p + 1;
                Some(c)
            }
            None => {
                self.pos = p;
                None
            }
        }
    }

    fn get_raw(&mut self) -> Option<char> {
        let c = self.chars.get(self.pos).copied();
        if c.is_some() {
            self.pos += 1;
        }
        c
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.skip_from(self.pos)).copied()
    }

    fn matches(&mut self, s: &str) -> bool {
        let mut p = self.pos;
        for c in s.chars() {
            p = self.skip_from(p);
            if self.chars.get(p) != Some(&c) {
                return false;
            }
            p += 1;
        }
        self.pos = p;
        true
    }

    fn get_while(&mut self, pred: impl Fn(char) -> bool, keep_spaces: bool) -> String {
        let mut out = String::new();
        let mut p = self.pos;
        loop {
            if !keep_spaces {
                p = self.skip_from(p);
            }
            match self.chars.get(p) {
                Some(&c) if pred(c) => {
                    out.push(c);
                    p += 1;
                }
                _ => break,
            }
        }
        self.pos = p;
        out
    }

    fn at_end(&self) -> bool {
        self.skip_from(self.pos) >= self.chars.len()
    }
}

/// Result of parsing an escape sequence.
enum Esc {
    Char(char),
    Class(SetItem),
    Node(Node),
}

/// Result of parsing one item of a set.
enum SetAtom {
    Char(char),
    Other(SetItem),
}

struct Parsed {
    root: Node,
    names: Vec<String>,
}

struct Parser<'p> {
    pattern: &'p str,
    src: Source,
    flags: u32,
    group_count: u32,
    open_groups: Vec<u32>,
    /// Named groups in order of definition, with their numbers.
    names: Vec<(String, u32)>,
    depth: usize,
}

fn parse(pattern: &str) -> Result<Parsed, RegexIssue> {
    let mut p = Parser {
        pattern,
        src: Source::new(pattern),
        // `regex.compile(pattern, regex.DOTALL)` on a str: VERSION0 | UNICODE | DOTALL.
        flags: F_DOTALL | F_UNICODE | F_VERSION0,
        group_count: 0,
        open_groups: Vec::new(),
        names: Vec::new(),
        depth: 0,
    };
    let mut root = p.parse_pattern()?;
    if !p.src.at_end() {
        return Err(p.err("unbalanced parenthesis", p.src.pos));
    }
    let names: HashMap<String, u32> = p.names.iter().cloned().collect();
    resolve_refs(&mut root, &names, p.group_count)?;
    simplify(&mut root);
    Ok(Parsed {
        root,
        names: p.names.into_iter().map(|(n, _)| n).collect(),
    })
}

/// Reduce a quantified zero-width assertion: `\b*` matches like the empty pattern, `(?=a)+`
/// like `(?=a)` (the Python module's repeat of a zero-width item behaves the same way; our
/// engines refuse to repeat assertions).
fn simplify(node: &mut Node) {
    match node {
        Node::Repeat { child, min, .. } => {
            simplify(child);
            if child.is_zero_width() {
                let min = *min;
                let child = std::mem::replace(child.as_mut(), Node::Empty);
                *node = if min == 0 { Node::Empty } else { child };
            }
        }
        Node::Group { body, .. } | Node::Look { body, .. } | Node::Atomic { body, .. } => {
            simplify(body)
        }
        Node::Concat(items) | Node::Alt(items) => items.iter_mut().for_each(simplify),
        _ => {}
    }
}

/// Python's `fix_groups` check: every backreference names an existing group.
fn resolve_refs(
    node: &mut Node,
    names: &HashMap<String, u32>,
    count: u32,
) -> Result<(), RegexIssue> {
    match node {
        Node::Backref {
            target,
            group,
            span,
            ..
        } => {
            *group = match target {
                RefTarget::Number(n) if *n >= 1 && *n <= count => *n,
                RefTarget::Number(_) => {
                    return Err(RegexIssue {
                        message: "invalid group reference".to_string(),
                        offset: Some(span.0),
                    })
                }
                RefTarget::Name(name) => match names.get(name.as_str()) {
                    Some(n) => *n,
                    None => {
                        return Err(RegexIssue {
                            message: format!("unknown group `{name}`"),
                            offset: Some(span.0),
                        })
                    }
                },
            };
            Ok(())
        }
        Node::Group { body, .. } | Node::Look { body, .. } | Node::Atomic { body, .. } => {
            resolve_refs(body, names, count)
        }
        Node::Repeat { child, .. } => resolve_refs(child, names, count),
        Node::Concat(items) | Node::Alt(items) => {
            for item in items {
                resolve_refs(item, names, count)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

impl<'p> Parser<'p> {
    fn err(&self, message: impl Into<String>, pos: usize) -> RegexIssue {
        RegexIssue {
            message: message.into(),
            offset: Some(self.src.byte(pos)),
        }
    }

    /// The source text between two char positions.
    fn text(&self, from: usize, to: usize) -> &'p str {
        let a = self.src.byte(from);
        let b = self.src.byte(to);
        self.pattern.get(a..b).unwrap_or("")
    }

    fn span(&self, from: usize, to: usize) -> Span {
        (self.src.byte(from), self.src.byte(to))
    }

    fn ci(&self) -> bool {
        self.flags & F_IGNORECASE != 0
    }

    fn expect(&mut self, s: &str) -> Result<(), RegexIssue> {
        if self.src.matches(s) {
            Ok(())
        } else {
            Err(self.err(format!("missing {s}"), self.src.pos))
        }
    }

    /// `a|b|c`
    fn parse_pattern(&mut self) -> Result<Node, RegexIssue> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err("pattern nests too deeply", self.src.pos));
        }
        let mut branches = vec![self.parse_sequence()?];
        while self.src.matches("|") {
            branches.push(self.parse_sequence()?);
        }
        self.depth -= 1;
        Ok(if branches.len() == 1 {
            branches.pop().unwrap_or(Node::Empty)
        } else {
            Node::Alt(branches)
        })
    }

    /// `abc`: a sequence of items, quantifiers applied to the item before them.
    fn parse_sequence(&mut self) -> Result<Node, RegexIssue> {
        // `None` marks "no element to repeat" (start of sequence, or after a quantifier).
        let mut seq: Vec<Option<Node>> = vec![None];
        loop {
            let saved = self.src.pos;
            let Some(ch) = self.src.get() else {
                self.src.pos = saved;
                break;
            };
            let ch_pos = self.src.pos - 1;
            match ch {
                ')' | '|' => {
                    self.src.pos = saved;
                    break;
                }
                '\\' => match self.parse_escape(false, ch_pos)? {
                    Esc::Char(c) => seq.push(Some(Node::Lit { c, ci: self.ci() })),
                    Esc::Class(item) => seq.push(Some(Node::Item {
                        item,
                        ci: self.ci(),
                    })),
                    Esc::Node(node) => seq.push(Some(node)),
                },
                '(' => {
                    if let Some(node) = self.parse_paren(ch_pos)? {
                        seq.push(Some(node));
                    }
                }
                '.' => seq.push(Some(Node::Dot {
                    all: self.flags & F_DOTALL != 0,
                })),
                '[' => seq.push(Some(self.parse_set(ch_pos)?)),
                '^' => seq.push(Some(Node::Assert {
                    kind: if self.flags & F_MULTILINE != 0 {
                        AssertKind::LineStart
                    } else {
                        AssertKind::Start
                    },
                })),
                '$' => seq.push(Some(Node::Assert {
                    kind: if self.flags & F_MULTILINE != 0 {
                        AssertKind::LineEnd
                    } else {
                        AssertKind::DollarEnd
                    },
                })),
                '?' | '*' | '+' | '{' => {
                    let counts = match ch {
                        '?' => Some((0, Some(1))),
                        '*' => Some((0, None)),
                        '+' => Some((1, None)),
                        _ => self.parse_limited_quantifier()?,
                    };
                    match counts {
                        Some((min, max)) => {
                            self.apply_quantifier(&mut seq, min, max, ch_pos)?;
                            seq.push(None);
                        }
                        None => {
                            // `{` that is not a quantifier: a fuzzy constraint or a literal.
                            self.check_not_fuzzy(ch_pos)?;
                            seq.push(Some(Node::Lit {
                                c: '{',
                                ci: self.ci(),
                            }));
                        }
                    }
                }
                c => seq.push(Some(Node::Lit { c, ci: self.ci() })),
            }
        }
        let mut items: Vec<Node> = seq.into_iter().flatten().collect();
        Ok(match items.len() {
            0 => Node::Empty,
            1 => items.pop().unwrap_or(Node::Empty),
            _ => Node::Concat(items),
        })
    }

    fn apply_quantifier(
        &mut self,
        seq: &mut Vec<Option<Node>>,
        min: u32,
        max: Option<u32>,
        q_pos: usize,
    ) -> Result<(), RegexIssue> {
        let element = match seq.pop() {
            Some(Some(element)) => element,
            _ => {
                let message = if seq.is_empty() {
                    "nothing to repeat"
                } else {
                    "multiple repeat"
                };
                return Err(self.err(message, q_pos));
            }
        };
        if matches!(element, Node::Repeat { .. }) {
            return Err(self.err("multiple repeat", q_pos));
        }
        let saved = self.src.pos;
        let kind = match self.src.get() {
            Some('?') => RepeatKind::Lazy,
            Some('+') => RepeatKind::Possessive,
            _ => {
                self.src.pos = saved;
                RepeatKind::Greedy
            }
        };
        let span = self.span(q_pos, self.src.pos);
        let node = if element.is_empty() || (min == 1 && max == Some(1)) {
            // Python ignores such a quantifier.
            element
        } else {
            Node::Repeat {
                child: Box::new(element),
                min,
                max,
                kind,
                span,
            }
        };
        seq.push(Some(node));
        Ok(())
    }

    fn parse_count(&mut self) -> String {
        self.src.get_while(|c| c.is_ascii_digit(), false)
    }

    fn count_value(&self, digits: &str, pos: usize) -> Result<u32, RegexIssue> {
        let trimmed = digits.trim_start_matches('0');
        let value = if trimmed.len() > 10 {
            None
        } else if trimmed.is_empty() {
            Some(0)
        } else {
            trimmed.parse::<u64>().ok()
        };
        match value {
            Some(v) if v < UNLIMITED => {
                u32::try_from(v).map_err(|_| self.err("repeat count too big", pos))
            }
            _ => Err(self.err("repeat count too big", pos)),
        }
    }

    /// After `{`: `n}`, `n,}`, `n,m}`, `,m}`, `,}`. `None` (position restored) if not one.
    fn parse_limited_quantifier(&mut self) -> Result<Option<(u32, Option<u32>)>, RegexIssue> {
        let saved = self.src.pos;
        let min_digits = self.parse_count();
        let (min, max) = if self.src.matches(",") {
            let max_digits = self.parse_count();
            let min = self.count_value(&min_digits, saved)?;
            let max = if max_digits.is_empty() {
                None
            } else {
                Some(self.count_value(&max_digits, saved)?)
            };
            (min, max)
        } else {
            if min_digits.is_empty() {
                self.src.pos = saved;
                return Ok(None);
            }
            let n = self.count_value(&min_digits, saved)?;
            (n, Some(n))
        };
        if !self.src.matches("}") {
            self.src.pos = saved;
            return Ok(None);
        }
        if let Some(max) = max {
            if min > max {
                return Err(self.err("min repeat greater than max repeat", saved));
            }
        }
        Ok(Some((min, max)))
    }

    /// After a `{` that is not a quantifier: Python tries to read a fuzzy constraint
    /// (`{e<=1}`, `{1<=s<2,i}`, `{2i+2d+1s<=4}`). If one parses, the pattern is rejected (fuzzy
    /// matching is not supported); if the constraint is unterminated, Python raises an error.
    /// Otherwise the `{` is a literal. The position is left after the `{`.
    fn check_not_fuzzy(&mut self, brace_pos: usize) -> Result<(), RegexIssue> {
        let saved = self.src.pos;
        let parsed = self.fuzzy_items();
        let result = match parsed {
            Ok(()) => {
                let closed = self.src.matches(":") || self.src.matches("}");
                let end = self.src.pos;
                if closed {
                    Err(self.err(
                        format!(
                            "fuzzy matching constraint `{}` is not supported",
                            self.text(brace_pos, end)
                        ),
                        brace_pos,
                    ))
                } else {
                    Err(self.err(
                        "expected } (the Python regex module reads `{` followed by `d`, `e`, `i` \
                         or `s` as a fuzzy matching constraint; escape it as `\\{`)",
                        end,
                    ))
                }
            }
            Err(FuzzyError::NotFuzzy) => Ok(()),
            Err(FuzzyError::Issue(issue)) => Err(issue),
        };
        self.src.pos = saved;
        result
    }

    fn fuzzy_items(&mut self) -> Result<(), FuzzyError> {
        let mut seen = String::new();
        let mut cost_seen = false;
        self.fuzzy_item(&mut seen, &mut cost_seen)?;
        while self.src.matches(",") {
            self.fuzzy_item(&mut seen, &mut cost_seen)?;
        }
        Ok(())
    }

    fn fuzzy_item(&mut self, seen: &mut String, cost_seen: &mut bool) -> Result<(), FuzzyError> {
        let saved = self.src.pos;
        match self.fuzzy_cost_constraint(seen) {
            Err(FuzzyError::NotFuzzy) => {
                self.src.pos = saved;
                self.fuzzy_cost_equation(cost_seen)
            }
            other => other,
        }
    }

    fn fuzzy_compare(&mut self) -> bool {
        self.src.matches("<=") || self.src.matches("<")
    }

    fn fuzzy_cost_limit(&mut self) -> Result<(), FuzzyError> {
        let pos = self.src.pos;
        if self.parse_count().is_empty() {
            return Err(FuzzyError::Issue(self.err("bad fuzzy cost limit", pos)));
        }
        Ok(())
    }

    fn fuzzy_constraint(&mut self, c: Option<char>, seen: &mut String) -> Result<(), FuzzyError> {
        match c {
            Some(c) if "deis".contains(c) && !seen.contains(c) => {
                seen.push(c);
                Ok(())
            }
            _ => Err(FuzzyError::NotFuzzy),
        }
    }

    fn fuzzy_cost_constraint(&mut self, seen: &mut String) -> Result<(), FuzzyError> {
        let saved = self.src.pos;
        match self.src.get() {
            Some(c) if c.is_ascii_alphabetic() => {
                self.fuzzy_constraint(Some(c), seen)?;
                if self.fuzzy_compare() {
                    self.fuzzy_cost_limit()?;
                }
                Ok(())
            }
            Some(c) if c.is_ascii_digit() => {
                self.src.pos = saved;
                self.fuzzy_cost_limit()?;
                if !self.fuzzy_compare() {
                    return Err(FuzzyError::NotFuzzy);
                }
                let c = self.src.get();
                self.fuzzy_constraint(c, seen)?;
                if !self.fuzzy_compare() {
                    return Err(FuzzyError::NotFuzzy);
                }
                self.fuzzy_cost_limit()
            }
            _ => Err(FuzzyError::NotFuzzy),
        }
    }

    fn fuzzy_cost_equation(&mut self, cost_seen: &mut bool) -> Result<(), FuzzyError> {
        if *cost_seen {
            return Err(FuzzyError::Issue(
                self.err("more than one cost equation", self.src.pos),
            ));
        }
        let mut terms = String::new();
        loop {
            self.parse_count();
            match self.src.get() {
                Some(c) if "dis".contains(c) => {
                    if terms.contains(c) {
                        return Err(FuzzyError::Issue(
                            self.err("repeated fuzzy cost", self.src.pos),
                        ));
                    }
                    terms.push(c);
                }
                _ => return Err(FuzzyError::NotFuzzy),
            }
            if !self.src.matches("+") {
                break;
            }
        }
        if !self.fuzzy_compare() {
            return Err(FuzzyError::NotFuzzy);
        }
        self.fuzzy_cost_limit()?;
        *cost_seen = true;
        Ok(())
    }

    /// After `(`.
    fn parse_paren(&mut self, open: usize) -> Result<Option<Node>, RegexIssue> {
        let saved = self.src.pos;
        match self.src.get_raw() {
            Some('?') => {
                let saved2 = self.src.pos;
                match self.src.get_raw() {
                    Some('<') => {
                        let saved3 = self.src.pos;
                        match self.src.get() {
                            Some(c @ ('=' | '!')) => {
                                return self.parse_lookaround(open, true, c == '!').map(Some)
                            }
                            _ => {
                                self.src.pos = saved3;
                                let name = self.parse_name(false)?;
                                return self.parse_capture(Some(name), open).map(Some);
                            }
                        }
                    }
                    Some(c @ ('=' | '!')) => {
                        return self.parse_lookaround(open, false, c == '!').map(Some)
                    }
                    Some('P') => return self.parse_extension(open),
                    Some('#') => {
                        self.parse_comment()?;
                        return Ok(None);
                    }
                    Some('(') => {
                        return Err(self.err("conditional `(?(` is not supported", open));
                    }
                    Some('>') => return self.parse_atomic(open).map(Some),
                    Some('|') => {
                        return Err(self.err("branch reset group `(?|` is not supported", open));
                    }
                    Some(c) if c == 'R' || c.is_ascii_digit() || c == '&' => {
                        return Err(self.recursion_error(open));
                    }
                    Some('+' | '-') if self.src.peek().is_some_and(|c| c.is_ascii_digit()) => {
                        return Err(self.recursion_error(open));
                    }
                    _ => {
                        self.src.pos = saved2;
                        return self.parse_flags_subpattern(open);
                    }
                }
            }
            Some('*') => {
                let word = self.src.get_while(|c| c != ')' && c != '>', false);
                if word.chars().next().is_some_and(char::is_alphabetic) {
                    let end = (self.src.pos + 1).min(self.src.chars.len());
                    return Err(self.err(
                        format!(
                            "backtracking control verb `{}` is not supported",
                            self.text(open, end)
                        ),
                        open,
                    ));
                }
            }
            _ => {}
        }
        self.src.pos = saved;
        self.parse_capture(None, open).map(Some)
    }

    fn recursion_error(&mut self, open: usize) -> RegexIssue {
        let saved = self.src.pos;
        self.src.get_while(|c| c != ')', true);
        let end = (self.src.pos + 1).min(self.src.chars.len());
        let issue = self.err(
            format!(
                "recursive pattern call `{}` is not supported",
                self.text(open, end)
            ),
            open,
        );
        self.src.pos = saved;
        issue
    }

    /// The body of a group up to and including its `)`, with the flags restored afterwards.
    fn parse_group_body(&mut self) -> Result<Node, RegexIssue> {
        let saved_flags = self.flags;
        let result = self.parse_pattern().and_then(|node| {
            self.expect(")")?;
            Ok(node)
        });
        self.flags = saved_flags;
        self.src.ignore_space = self.flags & F_VERBOSE != 0;
        result
    }

    fn parse_capture(&mut self, name: Option<String>, open: usize) -> Result<Node, RegexIssue> {
        if let Some(name) = &name {
            if self.names.iter().any(|(n, _)| n == name) {
                return Err(self.err(
                    format!(
                        "duplicate group name `{name}` (the Python regex module merges groups of \
                         the same name; not supported)"
                    ),
                    open,
                ));
            }
        }
        self.group_count += 1;
        let index = self.group_count;
        if let Some(name) = &name {
            self.names.push((name.clone(), index));
        }
        self.open_groups.push(index);
        let body = if name.is_some() {
            self.expect(">").and_then(|()| self.parse_group_body())
        } else {
            self.parse_group_body()
        };
        self.open_groups.pop();
        Ok(Node::Group {
            capture: Some(Capture { name }),
            body: Box::new(body?),
        })
    }

    fn parse_lookaround(
        &mut self,
        open: usize,
        behind: bool,
        negated: bool,
    ) -> Result<Node, RegexIssue> {
        let head = self.src.pos;
        let body = self.parse_group_body()?;
        Ok(Node::Look {
            behind,
            negated,
            body: Box::new(body),
            span: self.span(open, head),
        })
    }

    fn parse_atomic(&mut self, open: usize) -> Result<Node, RegexIssue> {
        let head = self.src.pos;
        let body = self.parse_group_body()?;
        Ok(Node::Atomic {
            body: Box::new(body),
            span: self.span(open, head),
        })
    }

    /// `(?#...)`: skipped up to the first unescaped `)`.
    fn parse_comment(&mut self) -> Result<(), RegexIssue> {
        loop {
            let saved = self.src.pos;
            match self.src.get_raw() {
                None | Some(')') => {
                    self.src.pos = saved;
                    break;
                }
                Some('\\') => {
                    self.src.get_raw();
                }
                Some(_) => {}
            }
        }
        self.expect(")")
    }

    /// After `(?P`.
    fn parse_extension(&mut self, open: usize) -> Result<Option<Node>, RegexIssue> {
        let saved = self.src.pos;
        match self.src.get() {
            Some('<') => {
                let name = self.parse_name(false)?;
                self.parse_capture(Some(name), open).map(Some)
            }
            Some('=') => {
                let name = self.parse_name(true)?;
                self.expect(")")?;
                let target = ref_target(&name);
                if self.is_open_group(&target) {
                    return Err(self.err("cannot refer to an open group", saved));
                }
                Ok(Some(Node::Backref {
                    target,
                    group: 0,
                    opened_before: self.group_count,
                    ci: self.ci(),
                    span: self.span(open, self.src.pos),
                }))
            }
            Some('>' | '&') => Err(self.recursion_error(open)),
            _ => Err(self.err("unknown extension", saved)),
        }
    }

    /// A group name up to `>` or `)`: an identifier, or (if `allow_numeric`) a group number.
    fn parse_name(&mut self, allow_numeric: bool) -> Result<String, RegexIssue> {
        let name = self.src.get_while(|c| c != ')' && c != '>', false);
        if name.is_empty() {
            return Err(self.err("missing group name", self.src.pos));
        }
        if name.chars().all(|c| c.is_ascii_digit()) {
            let ok = allow_numeric && name.trim_start_matches('0').len() <= 10 && {
                let value: u64 = name.parse().unwrap_or(0);
                value >= 1
            };
            if !ok {
                return Err(self.err("bad character in group name", self.src.pos));
            }
        } else if !py_isidentifier(&name) {
            return Err(self.err("bad character in group name", self.src.pos));
        }
        Ok(name)
    }

    fn is_open_group(&self, target: &RefTarget) -> bool {
        let number = match target {
            RefTarget::Number(n) => Some(*n),
            RefTarget::Name(name) => self.names.iter().find(|(n, _)| n == name).map(|(_, i)| *i),
        };
        number.is_some_and(|n| self.open_groups.contains(&n))
    }

    fn parse_flag_set(&mut self) -> u32 {
        let mut flags = 0;
        loop {
            let saved = self.src.pos;
            let flag = match self.src.get() {
                Some('a') => F_ASCII,
                Some('b') => F_BESTMATCH,
                Some('e') => F_ENHANCEMATCH,
                Some('f') => F_FULLCASE,
                Some('i') => F_IGNORECASE,
                Some('L') => F_LOCALE,
                Some('m') => F_MULTILINE,
                Some('p') => F_POSIX,
                Some('r') => F_REVERSE,
                Some('s') => F_DOTALL,
                Some('u') => F_UNICODE,
                Some('w') => F_WORD,
                Some('x') => F_VERBOSE,
                Some('V') => match self.src.get() {
                    Some('0') => F_VERSION0,
                    Some('1') => F_VERSION1,
                    _ => 0,
                },
                _ => 0,
            };
            if flag == 0 {
                self.src.pos = saved;
                return flags;
            }
            flags |= flag;
        }
    }

    /// After `(?`: inline flags `(?imsx-imsx)` or a scoped-flags group `(?imsx-imsx:...)`.
    fn parse_flags_subpattern(&mut self, open: usize) -> Result<Option<Node>, RegexIssue> {
        let on = self.parse_flag_set();
        let off = if self.src.matches("-") {
            let off = self.parse_flag_set();
            if off == 0 {
                return Err(self.err("bad inline flags: no flags after '-'", self.src.pos));
            }
            off
        } else {
            0
        };
        if off & GLOBAL_FLAGS != 0 {
            return Err(self.err(
                "bad inline flags: cannot turn off global flag",
                self.src.pos,
            ));
        }
        if on & off != 0 {
            return Err(self.err("bad inline flags: flag turned on and off", self.src.pos));
        }
        let unsupported = [
            (F_ASCII, "ASCII-only matching `(?a)`"),
            (F_LOCALE, "locale-dependent matching `(?L)`"),
            (F_WORD, "Unicode word and line boundaries `(?w)`"),
            (F_FULLCASE, "full case-folding `(?f)`"),
            (F_POSIX, "POSIX leftmost-longest matching `(?p)`"),
            (F_REVERSE, "reverse searching `(?r)`"),
            (F_VERSION1, "VERSION1 behaviour `(?V1)`"),
        ];
        for (flag, what) in unsupported {
            if on & flag != 0 {
                return Err(self.err(format!("inline flag for {what} is not supported"), open));
            }
        }
        if self.src.matches(":") {
            let saved_flags = self.flags;
            self.flags = (self.flags | on) & !off;
            self.src.ignore_space = self.flags & F_VERBOSE != 0;
            let body = self.parse_group_body();
            self.flags = saved_flags;
            self.src.ignore_space = self.flags & F_VERBOSE != 0;
            return Ok(Some(Node::Group {
                capture: None,
                body: Box::new(body?),
            }));
        }
        if self.src.matches(")") {
            self.flags = (self.flags | on) & !off;
            self.src.ignore_space = self.flags & F_VERBOSE != 0;
            return Ok(None);
        }
        Err(self.err("unknown extension", self.src.pos))
    }

    /// After a backslash at char position `start`.
    fn parse_escape(&mut self, in_set: bool, start: usize) -> Result<Esc, RegexIssue> {
        let Some(ch) = self.src.get_raw() else {
            return Err(self.err("bad escape (end of pattern)", start));
        };
        match ch {
            'x' => self.parse_hex_escape(2, start),
            'u' => self.parse_hex_escape(4, start),
            'U' => self.parse_hex_escape(8, start),
            'g' if !in_set => {
                let saved = self.src.pos;
                match self.parse_group_ref() {
                    Some(target) => Ok(Esc::Node(Node::Backref {
                        target,
                        group: 0,
                        opened_before: self.group_count,
                        ci: self.ci(),
                        span: self.span(start, self.src.pos),
                    })),
                    None => {
                        self.src.pos = saved;
                        Ok(Esc::Char('g'))
                    }
                }
            }
            'G' if !in_set => Ok(Esc::Node(Node::SearchAnchor {
                span: self.span(start, self.src.pos),
            })),
            'L' if !in_set => Err(self.err("named list `\\L<...>` is not supported", start)),
            'N' => {
                let saved = self.src.pos;
                if self.src.matches("{") {
                    self.src
                        .get_while(|c| c.is_ascii_alphanumeric() || c == ' ' || c == '-', true);
                    if self.src.matches("}") {
                        return Err(self.err(
                            format!(
                                "named character `{}` is not supported (write the character \
                                 itself or `\\x{{...}}`)",
                                self.text(start, self.src.pos)
                            ),
                            start,
                        ));
                    }
                }
                self.src.pos = saved;
                Ok(Esc::Char('N'))
            }
            'p' | 'P' => self.parse_property(ch == 'p', start),
            'R' if !in_set => Ok(Esc::Node(Node::LineBreak {
                span: self.span(start, self.src.pos),
            })),
            'X' if !in_set => Err(self.err("grapheme cluster `\\X` is not supported", start)),
            c if c.is_ascii_alphabetic() => {
                if !in_set {
                    let kind = match c {
                        'A' => Some(AssertKind::Start),
                        'b' => Some(AssertKind::WordBoundary),
                        'B' => Some(AssertKind::NotWordBoundary),
                        'm' => Some(AssertKind::WordStart),
                        'M' => Some(AssertKind::WordEnd),
                        'Z' | 'z' => Some(AssertKind::End),
                        _ => None,
                    };
                    if let Some(kind) = kind {
                        return Ok(Esc::Node(Node::Assert { kind }));
                    }
                    if c == 'K' {
                        return Ok(Esc::Node(Node::Keep {
                            span: self.span(start, self.src.pos),
                        }));
                    }
                }
                let perl = |kind, negated| Ok(Esc::Class(SetItem::Perl { kind, negated }));
                match c {
                    'd' => perl(Perl::Digit, false),
                    'D' => perl(Perl::Digit, true),
                    's' => perl(Perl::Space, false),
                    'S' => perl(Perl::Space, true),
                    'w' => perl(Perl::Word, false),
                    'W' => perl(Perl::Word, true),
                    'h' => Ok(Esc::Class(SetItem::Blank)),
                    'a' => Ok(Esc::Char('\u{7}')),
                    'b' => Ok(Esc::Char('\u{8}')),
                    'f' => Ok(Esc::Char('\u{c}')),
                    'n' => Ok(Esc::Char('\n')),
                    'r' => Ok(Esc::Char('\r')),
                    't' => Ok(Esc::Char('\t')),
                    'v' => Ok(Esc::Char('\u{b}')),
                    _ => Err(self.err(format!("bad escape \\{c}"), start)),
                }
            }
            c if c.is_ascii_digit() => self.parse_numeric_escape(c, in_set, start),
            c => Ok(Esc::Char(c)),
        }
    }

    fn parse_hex_escape(&mut self, len: usize, start: usize) -> Result<Esc, RegexIssue> {
        let mut value: u32 = 0;
        for _ in 0..len {
            match self.src.get().and_then(|c| c.to_digit(16)) {
                Some(d) => value = value.saturating_mul(16).saturating_add(d),
                None => {
                    return Err(self.err(
                        format!("incomplete escape {}", self.text(start, self.src.pos)),
                        start,
                    ))
                }
            }
        }
        self.code_point(value, start)
    }

    fn code_point(&self, value: u32, start: usize) -> Result<Esc, RegexIssue> {
        if value >= 0x11_0000 {
            return Err(self.err(
                format!("bad hex escape {}", self.text(start, self.src.pos)),
                start,
            ));
        }
        match char::from_u32(value) {
            Some(c) => Ok(Esc::Char(c)),
            None => Err(self.err(
                format!(
                    "escape {} is a lone surrogate, which is not supported",
                    self.text(start, self.src.pos)
                ),
                start,
            )),
        }
    }

    /// `\0`, `\012`, `\141` (octal) or `\1`, `\12` (group references).
    fn parse_numeric_escape(
        &mut self,
        first: char,
        in_set: bool,
        start: usize,
    ) -> Result<Esc, RegexIssue> {
        if in_set || first == '0' {
            let mut digits = vec![first];
            loop {
                let saved = self.src.pos;
                match self.src.get() {
                    Some(c) if digits.len() < 3 && is_octal(c) => digits.push(c),
                    _ => {
                        self.src.pos = saved;
                        break;
                    }
                }
            }
            if !is_octal(first) {
                return Err(self.err(format!("bad escape \\{first}"), start));
            }
            let value = digits
                .iter()
                .fold(0u32, |acc, c| acc * 8 + c.to_digit(8).unwrap_or(0));
            return self.code_point(value, start);
        }
        let mut digits = String::from(first);
        let mut saved = self.src.pos;
        if let Some(second) = self.src.get().filter(char::is_ascii_digit) {
            digits.push(second);
            saved = self.src.pos;
            if let Some(third) = self.src.get() {
                if digits.chars().all(is_octal) && is_octal(third) {
                    digits.push(third);
                    let value = digits
                        .chars()
                        .fold(0u32, |acc, c| acc * 8 + c.to_digit(8).unwrap_or(0));
                    return self.code_point(value & 0x1FF, start);
                }
            }
        }
        self.src.pos = saved;
        let target = ref_target(&digits);
        if self.is_open_group(&target) {
            return Err(self.err("cannot refer to an open group", self.src.pos));
        }
        Ok(Esc::Node(Node::Backref {
            target,
            group: 0,
            opened_before: self.group_count,
            ci: self.ci(),
            span: self.span(start, self.src.pos),
        }))
    }

    /// After `\g`: `<name>` or `<number>`; `None` if not well formed (then `\g` is a literal).
    fn parse_group_ref(&mut self) -> Option<RefTarget> {
        if !self.src.matches("<") {
            return None;
        }
        let name = self.parse_name(true).ok()?;
        if !self.src.matches(">") {
            return None;
        }
        let target = ref_target(&name);
        if self.is_open_group(&target) {
            return None;
        }
        Some(target)
    }

    /// After `\p` / `\P` (the backslash at `start`). The property must be one regex-syntax
    /// knows (Python's `regex` knows more names, and rejects unknown ones too).
    fn parse_property(&mut self, positive: bool, start: usize) -> Result<Esc, RegexIssue> {
        let saved = self.src.pos;
        let prop = match self.src.get() {
            Some('{') => {
                let negate = self.src.matches("^");
                let (prop_name, name) = self.parse_property_name();
                if self.src.matches("}") {
                    let name = match prop_name {
                        Some(prop) => format!("{prop}={name}"),
                        None => name,
                    };
                    Some(SetItem::Prop {
                        negated: positive == negate,
                        name,
                    })
                } else {
                    None
                }
            }
            Some(c) if "CLMNPSZ".contains(c) => Some(SetItem::Prop {
                negated: !positive,
                name: c.to_string(),
            }),
            _ => None,
        };
        let Some(prop) = prop else {
            self.src.pos = saved;
            return Ok(Esc::Char(if positive { 'p' } else { 'P' }));
        };
        if let SetItem::Prop { name, .. } = &prop {
            if regex_syntax::Parser::new()
                .parse(&format!("\\p{{{name}}}"))
                .is_err()
            {
                return Err(self.err(
                    format!(
                        "unknown or unsupported Unicode property `{}`",
                        self.text(start, self.src.pos)
                    ),
                    start,
                ));
            }
        }
        Ok(Esc::Class(prop))
    }

    fn parse_property_name(&mut self) -> (Option<String>, String) {
        let name = self
            .src
            .get_while(|c| c.is_ascii_alphanumeric() || " &_-.".contains(c), false);
        let mut saved = self.src.pos;
        let result = match self.src.get() {
            Some(':' | '=') => {
                let value = self
                    .src
                    .get_while(|c| c.is_ascii_alphanumeric() || " &_-./".contains(c), false);
                let value = value.trim().to_string();
                if value.is_empty() {
                    (None, name)
                } else {
                    saved = self.src.pos;
                    (Some(name), value)
                }
            }
            _ => (None, name),
        };
        self.src.pos = saved;
        result
    }

    /// After `[`.
    fn parse_set(&mut self, open: usize) -> Result<Node, RegexIssue> {
        let saved_ignore = self.src.ignore_space;
        self.src.ignore_space = false;
        let result = self.parse_set_inner(open);
        self.src.ignore_space = saved_ignore;
        result
    }

    fn parse_set_inner(&mut self, open: usize) -> Result<Node, RegexIssue> {
        let negated = self.src.matches("^");
        let mut items = self.parse_set_member(open)?;
        loop {
            if self.src.peek() == Some(']') {
                break;
            }
            items.extend(self.parse_set_member(open)?);
        }
        self.expect("]")?;
        Ok(Node::Set {
            negated,
            items,
            ci: self.ci(),
        })
    }

    fn parse_set_member(&mut self, open: usize) -> Result<Vec<SetItem>, RegexIssue> {
        let lo = match self.parse_set_item(open)? {
            SetAtom::Char(c) => c,
            SetAtom::Other(item) => return Ok(vec![item]),
        };
        if !self.src.matches("-") {
            return Ok(vec![SetItem::Char(lo)]);
        }
        let after_hyphen = self.src.pos;
        if self.src.matches("]") {
            self.src.pos = after_hyphen;
            return Ok(vec![SetItem::Char(lo), SetItem::Char('-')]);
        }
        let hi = match self.parse_set_item(open)? {
            SetAtom::Char(c) => c,
            SetAtom::Other(item) => return Ok(vec![SetItem::Char(lo), SetItem::Char('-'), item]),
        };
        if lo > hi {
            return Err(self.err("bad character range", self.src.pos));
        }
        Ok(vec![if lo == hi {
            SetItem::Char(lo)
        } else {
            SetItem::Range(lo, hi)
        }])
    }

    fn parse_set_item(&mut self, open: usize) -> Result<SetAtom, RegexIssue> {
        let start = self.src.pos;
        if self.src.matches("\\") {
            return match self.parse_escape(true, start)? {
                Esc::Char(c) => Ok(SetAtom::Char(c)),
                Esc::Class(item) => Ok(SetAtom::Other(item)),
                Esc::Node(_) => Err(self.err("bad escape in character set", start)),
            };
        }
        if self.src.matches("[:") {
            let _negate = self.src.matches("^");
            self.parse_property_name();
            if self.src.matches(":]") {
                return Err(self.err(
                    format!(
                        "POSIX character class `{}` is not supported",
                        self.text(start, self.src.pos)
                    ),
                    start,
                ));
            }
            self.src.pos = start;
        }
        match self.src.get() {
            Some(c) => Ok(SetAtom::Char(c)),
            None => Err(self.err("unterminated character set", open)),
        }
    }
}

enum FuzzyError {
    /// Not a fuzzy constraint: the `{` is a literal.
    NotFuzzy,
    /// A malformed fuzzy constraint: Python raises this error.
    Issue(RegexIssue),
}

fn ref_target(name: &str) -> RefTarget {
    if name.chars().all(|c| c.is_ascii_digit()) {
        // Names of more than 10 digits were rejected or cannot denote a group: use 0 (invalid).
        RefTarget::Number(name.parse().unwrap_or(0))
    } else {
        RefTarget::Name(name.to_string())
    }
}

// ---------------------------------------------------------------------------------------------
// Emission
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Dfa,
    Fancy,
}

/// The trailing `$` or look-ahead of a branch.
enum Tail<'n> {
    Dollar,
    Look {
        negated: bool,
        body: &'n Node,
        span: Span,
    },
}

/// One branch of [`to_dfa`]'s split: the items of its main part and its trailing `$` or
/// look-ahead.
struct Split<'n> {
    items: Vec<Node>,
    tail: Option<Tail<'n>>,
}

/// The alternatives of a group body (or of the whole pattern).
fn alternatives(node: &Node) -> &[Node] {
    match node {
        Node::Alt(branches) => branches,
        other => std::slice::from_ref(other),
    }
}

/// The items of an alternative, without the `Node::Empty` items at its end (left there by a
/// reduced quantifier such as `(?=a)?`), which match the empty string unconditionally.
fn sequence(node: &Node) -> &[Node] {
    let items = match node {
        Node::Concat(items) => items.as_slice(),
        other => std::slice::from_ref(other),
    };
    let mut len = items.len();
    while len > 0 && matches!(items[len - 1], Node::Empty) {
        len -= 1;
    }
    &items[..len]
}

/// Items as one node.
fn concat(mut items: Vec<Node>) -> Node {
    match items.len() {
        0 => Node::Empty,
        1 => items.pop().unwrap_or(Node::Empty),
        _ => Node::Concat(items),
    }
}

/// The number of characters every match of `node` consumes, when it is the same for all of
/// its matches; `None` when it varies (or for a construct the DFA translation refuses).
fn fixed_width(node: &Node) -> Option<u64> {
    match node {
        Node::Empty | Node::Assert { .. } => Some(0),
        Node::Lit { .. } | Node::Dot { .. } | Node::Set { .. } | Node::Item { .. } => Some(1),
        Node::Group { body, .. } => fixed_width(body),
        Node::Concat(items) => items
            .iter()
            .try_fold(0u64, |sum, item| sum.checked_add(fixed_width(item)?)),
        Node::Alt(branches) => {
            let mut width = None;
            for branch in branches {
                let w = fixed_width(branch)?;
                if width.is_some_and(|width| width != w) {
                    return None;
                }
                width = Some(w);
            }
            Some(width.unwrap_or(0))
        }
        Node::Repeat {
            child, min, max, ..
        } if *max == Some(*min) => fixed_width(child)?.checked_mul(u64::from(*min)),
        _ => None,
    }
}

/// Whether an alternative (its items, see [`sequence`]) ends in what [`to_dfa`] splits off as
/// a trailing look-ahead: `$`, a look-ahead, or an unquantified group after a fixed-length
/// prefix, one of whose alternatives does.
fn splits(items: &[Node]) -> bool {
    let Some((last, prefix)) = items.split_last() else {
        return false;
    };
    match last {
        Node::Assert {
            kind: AssertKind::DollarEnd,
        }
        | Node::Look { behind: false, .. } => true,
        Node::Group { body, .. } => {
            prefix.iter().all(|item| fixed_width(item).is_some())
                && alternatives(body).iter().any(|alt| splits(sequence(alt)))
        }
        _ => false,
    }
}

/// Splits the alternatives of `node` into branches (see [`to_dfa`]): an alternative that
/// [`splits`] gives one branch per alternative of its trailing group (recursively) or, ending
/// in `$` or a look-ahead itself, one branch with that tail; consecutive branches without a
/// tail are joined again as one alternation.
fn split_alternatives(node: &Node) -> Result<Vec<Split<'_>>, RegexIssue> {
    let mut pieces: Vec<Split<'_>> = Vec::new();
    for alt in alternatives(node) {
        let items = sequence(alt);
        let Some((last, prefix)) = items.split_last().filter(|_| splits(items)) else {
            pieces.push(Split {
                items: items.to_vec(),
                tail: None,
            });
            continue;
        };
        match last {
            Node::Look {
                behind: false,
                negated,
                body,
                span,
            } => pieces.push(Split {
                items: prefix.to_vec(),
                tail: Some(Tail::Look {
                    negated: *negated,
                    body,
                    span: *span,
                }),
            }),
            Node::Group { capture, body } => {
                for inner in split_alternatives(body)? {
                    let mut items = prefix.to_vec();
                    match capture {
                        None => items.extend(inner.items),
                        Some(capture) => items.push(Node::Group {
                            capture: Some(capture.clone()),
                            body: Box::new(concat(inner.items)),
                        }),
                    }
                    pieces.push(Split {
                        items,
                        tail: inner.tail,
                    });
                }
            }
            // `$` (the only other ending that `splits`).
            _ => pieces.push(Split {
                items: prefix.to_vec(),
                tail: Some(Tail::Dollar),
            }),
        }
    }
    let mut out: Vec<Split<'_>> = Vec::new();
    let mut run: Vec<Node> = Vec::new();
    let flush = |run: &mut Vec<Node>, out: &mut Vec<Split<'_>>| {
        let items = match run.len() {
            0 => return,
            1 => match run.pop() {
                Some(Node::Concat(items)) => items,
                Some(Node::Empty) | None => Vec::new(),
                Some(other) => vec![other],
            },
            _ => vec![Node::Group {
                capture: None,
                body: Box::new(Node::Alt(std::mem::take(run))),
            }],
        };
        out.push(Split { items, tail: None });
    };
    for piece in pieces {
        if piece.tail.is_none() {
            run.push(concat(piece.items));
        } else {
            flush(&mut run, &mut out);
            out.push(piece);
        }
    }
    flush(&mut run, &mut out);
    if out.len() > MAX_DFA_BRANCHES {
        return Err(RegexIssue {
            message: format!(
                "the pattern splits into more than {MAX_DFA_BRANCHES} branches for the DFA \
                 engine (each alternative ending in `$` or a look-ahead, also inside a \
                 trailing group, is a branch of its own; at most {MAX_DFA_BRANCHES} are \
                 supported)"
            ),
            offset: None,
        });
    }
    Ok(out)
}

/// In a look-ahead body, replaces each `$` that nothing follows in the body (ending a
/// top-level alternative of the body, or an alternative of an unquantified group that ends
/// one) with `\n?\z`: the body is only tested for a match, so this is exact.
fn end_dollars(node: &mut Node) {
    match node {
        Node::Assert {
            kind: AssertKind::DollarEnd,
        } => {
            *node = Node::Concat(vec![
                Node::Repeat {
                    child: Box::new(Node::Lit { c: '\n', ci: false }),
                    min: 0,
                    max: Some(1),
                    kind: RepeatKind::Greedy,
                    span: (0, 0),
                },
                Node::Assert {
                    kind: AssertKind::End,
                },
            ]);
        }
        Node::Alt(branches) => branches.iter_mut().for_each(end_dollars),
        Node::Concat(items) => {
            if let Some(last) = items.iter_mut().rev().find(|n| !matches!(n, Node::Empty)) {
                end_dollars(last);
            }
        }
        Node::Group { body, .. } => end_dollars(body),
        _ => {}
    }
}

/// Emit `node` for the DFA engine; in a look-ahead body (`in_look`) a `$` that nothing follows
/// in the body is exact as `\n?\z` (see [`end_dollars`]).
fn emit_dfa(pattern: &str, node: &Node, in_look: bool) -> Result<String, RegexIssue> {
    let mut emitter = Emitter::new(pattern, Target::Dfa);
    if in_look {
        let mut body = node.clone();
        end_dollars(&mut body);
        emitter.emit(&body)?;
    } else {
        emitter.emit(node)?;
    }
    Ok(emitter.out)
}

fn validate_dfa(translated: &str) -> Result<(), RegexIssue> {
    let mut parser = regex_syntax::ParserBuilder::new()
        .unicode(true)
        .dot_matches_new_line(true)
        .build();
    match parser.parse(translated) {
        Ok(_) => Ok(()),
        Err(e) => {
            let kind = match &e {
                regex_syntax::Error::Parse(e) => e.kind().to_string(),
                regex_syntax::Error::Translate(e) => e.kind().to_string(),
                other => other.to_string(),
            };
            Err(RegexIssue {
                message: format!(
                    "regex-syntax rejects the translated pattern `{translated}`: {kind}"
                ),
                offset: None,
            })
        }
    }
}

fn has_case(c: char) -> bool {
    let mut lower = c.to_lowercase();
    let mut upper = c.to_uppercase();
    !(lower.next() == Some(c)
        && lower.next().is_none()
        && upper.next() == Some(c)
        && upper.next().is_none())
}

/// Append a literal character, escaped for regex-syntax / fancy-regex (inside or outside a
/// class).
fn push_literal(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        '\r' => out.push_str("\\r"),
        c if regex_syntax::is_meta_character(c) => {
            out.push('\\');
            out.push(c);
        }
        c if c.is_control() || (c.is_whitespace() && c != ' ') => {
            let _ = write!(out, "\\x{{{:X}}}", u32::from(c));
        }
        c => out.push(c),
    }
}

struct Emitter<'p> {
    pattern: &'p str,
    target: Target,
    out: String,
}

impl<'p> Emitter<'p> {
    fn new(pattern: &'p str, target: Target) -> Self {
        Emitter {
            pattern,
            target,
            out: String::new(),
        }
    }

    fn text(&self, span: Span) -> &'p str {
        self.pattern.get(span.0..span.1).unwrap_or("")
    }

    fn unsupported(&self, what: String, span: Span) -> RegexIssue {
        RegexIssue {
            message: format!("{what} is not supported by the DFA engine"),
            offset: Some(span.0),
        }
    }

    fn emit_concat(&mut self, items: &[Node]) -> Result<(), RegexIssue> {
        let mut i = 0;
        while i < items.len() {
            // Merge a run of case-insensitive literals into one `(?i:...)`.
            if let Node::Lit { c, ci: true } = items[i] {
                if has_case(c) {
                    self.out.push_str("(?i:");
                    while let Some(Node::Lit { c, ci: true }) = items.get(i) {
                        push_literal(&mut self.out, *c);
                        i += 1;
                    }
                    self.out.push(')');
                    continue;
                }
            }
            self.emit(&items[i])?;
            i += 1;
        }
        Ok(())
    }

    fn emit_set_item(&mut self, item: &SetItem) {
        match item {
            SetItem::Char(c) => push_literal(&mut self.out, *c),
            SetItem::Range(lo, hi) => {
                push_literal(&mut self.out, *lo);
                self.out.push('-');
                push_literal(&mut self.out, *hi);
            }
            SetItem::Perl { kind, negated } => {
                let letter = match kind {
                    Perl::Digit => 'd',
                    Perl::Word => 'w',
                    Perl::Space => 's',
                };
                self.out.push('\\');
                self.out.push(if *negated {
                    letter.to_ascii_uppercase()
                } else {
                    letter
                });
            }
            SetItem::Blank => self.out.push_str("\\t\\p{Zs}"),
            SetItem::Prop { negated, name } => {
                self.out.push_str(if *negated { "\\P{" } else { "\\p{" });
                self.out.push_str(name);
                self.out.push('}');
            }
        }
    }

    /// Emit `node` as one atom (something a quantifier can follow).
    fn emit_atom(&mut self, node: &Node) -> Result<(), RegexIssue> {
        match node {
            Node::Concat(_) | Node::Alt(_) | Node::Empty => {
                self.out.push_str("(?:");
                self.emit(node)?;
                self.out.push(')');
                Ok(())
            }
            _ => self.emit(node),
        }
    }

    fn emit(&mut self, node: &Node) -> Result<(), RegexIssue> {
        match node {
            Node::Empty => {}
            Node::Lit { c, ci } => {
                if *ci && has_case(*c) {
                    self.out.push_str("(?i:");
                    push_literal(&mut self.out, *c);
                    self.out.push(')');
                } else {
                    push_literal(&mut self.out, *c);
                }
            }
            Node::Dot { all } => self.out.push_str(if *all { "(?s:.)" } else { "[^\\n]" }),
            Node::Set { negated, items, ci } => {
                if *ci {
                    self.out.push_str("(?i:");
                }
                self.out.push('[');
                if *negated {
                    self.out.push('^');
                }
                for item in items {
                    self.emit_set_item(item);
                }
                self.out.push(']');
                if *ci {
                    self.out.push(')');
                }
            }
            Node::Item { item, ci } => match item {
                SetItem::Blank => self.out.push_str("[\\t\\p{Zs}]"),
                SetItem::Prop { .. } if *ci => {
                    self.out.push_str("(?i:");
                    self.emit_set_item(item);
                    self.out.push(')');
                }
                other => self.emit_set_item(other),
            },
            Node::Assert { kind } => {
                let s = match (kind, self.target) {
                    (AssertKind::Start, _) => "\\A",
                    (AssertKind::LineStart, _) => "(?m:^)",
                    (AssertKind::LineEnd, _) => "(?m:$)",
                    (AssertKind::End, _) => "\\z",
                    (AssertKind::DollarEnd, Target::Dfa) => "\\z",
                    (AssertKind::DollarEnd, Target::Fancy) => "(?=\\n?\\z)",
                    (AssertKind::WordBoundary, _) => "\\b",
                    (AssertKind::NotWordBoundary, _) => "\\B",
                    (AssertKind::WordStart, Target::Dfa) => "\\b{start}",
                    (AssertKind::WordEnd, Target::Dfa) => "\\b{end}",
                    (AssertKind::WordStart, Target::Fancy) => "(?:\\b(?=\\w))",
                    (AssertKind::WordEnd, Target::Fancy) => "(?:\\b(?<=\\w))",
                };
                self.out.push_str(s);
            }
            Node::Group { capture, body } => {
                match capture {
                    None => self.out.push_str("(?:"),
                    Some(Capture { name: None }) => self.out.push('('),
                    Some(Capture { name: Some(name) }) => {
                        self.out.push_str("(?P<");
                        self.out.push_str(name);
                        self.out.push('>');
                    }
                }
                self.emit(body)?;
                self.out.push(')');
            }
            Node::Look {
                behind,
                negated,
                body,
                span,
            } => {
                let head = match (behind, negated) {
                    (false, false) => "(?=",
                    (false, true) => "(?!",
                    (true, false) => "(?<=",
                    (true, true) => "(?<!",
                };
                if self.target == Target::Dfa {
                    let what = if *behind {
                        format!("look-behind `{head}`")
                    } else {
                        format!(
                            "look-ahead `{head}` not at the end of a branch (only a look-ahead \
                             ending a top-level alternative is supported, or one ending an \
                             alternative of an unquantified group that ends a branch after a \
                             fixed-length prefix)"
                        )
                    };
                    return Err(RegexIssue {
                        message: if *behind {
                            format!("{what} is not supported by the DFA engine")
                        } else {
                            what
                        },
                        offset: Some(span.0),
                    });
                }
                self.out.push_str(head);
                self.emit(body)?;
                self.out.push(')');
            }
            Node::Atomic { body, span } => {
                if self.target == Target::Dfa {
                    return Err(self.unsupported("atomic group `(?>`".to_string(), *span));
                }
                self.out.push_str("(?>");
                self.emit(body)?;
                self.out.push(')');
            }
            Node::Repeat {
                child,
                min,
                max,
                kind,
                span,
            } => {
                let possessive = *kind == RepeatKind::Possessive;
                if possessive && self.target == Target::Dfa {
                    return Err(self.unsupported(
                        format!("possessive quantifier `{}`", self.text(*span)),
                        *span,
                    ));
                }
                if possessive {
                    self.out.push_str("(?>");
                }
                self.emit_atom(child)?;
                match (*min, *max) {
                    (0, None) => self.out.push('*'),
                    (1, None) => self.out.push('+'),
                    (0, Some(1)) => self.out.push('?'),
                    (n, None) => {
                        let _ = write!(self.out, "{{{n},}}");
                    }
                    (n, Some(m)) if n == m => {
                        let _ = write!(self.out, "{{{n}}}");
                    }
                    (n, Some(m)) => {
                        let _ = write!(self.out, "{{{n},{m}}}");
                    }
                }
                if *kind == RepeatKind::Lazy {
                    self.out.push('?');
                }
                if possessive {
                    self.out.push(')');
                }
            }
            Node::Backref {
                group,
                opened_before,
                ci,
                span,
                ..
            } => {
                if self.target == Target::Dfa {
                    return Err(
                        self.unsupported(format!("backreference `{}`", self.text(*span)), *span)
                    );
                }
                if *ci {
                    return Err(RegexIssue {
                        message: format!(
                            "case-insensitive backreference `{}` is not supported",
                            self.text(*span)
                        ),
                        offset: Some(span.0),
                    });
                }
                if group > opened_before {
                    return Err(RegexIssue {
                        message: format!(
                            "forward backreference `{}` (to a group defined after it) is not \
                             supported",
                            self.text(*span)
                        ),
                        offset: Some(span.0),
                    });
                }
                let _ = write!(self.out, "\\k<{group}>");
            }
            Node::LineBreak { span } => {
                if self.target == Target::Dfa {
                    return Err(self.unsupported(
                        "line-break escape `\\R` (an atomic group)".to_string(),
                        *span,
                    ));
                }
                self.out
                    .push_str("(?>\\r\\n|[\\n\\x{B}\\x{C}\\r\\x{85}\\x{2028}\\x{2029}])");
            }
            Node::Keep { span } => {
                if self.target == Target::Dfa {
                    return Err(self.unsupported("match-start reset `\\K`".to_string(), *span));
                }
                self.out.push_str("\\K");
            }
            Node::SearchAnchor { span } => {
                if self.target == Target::Dfa {
                    return Err(self.unsupported("search anchor `\\G`".to_string(), *span));
                }
                self.out.push_str("\\G");
            }
            Node::Concat(items) => self.emit_concat(items)?,
            Node::Alt(branches) => {
                for (i, branch) in branches.iter().enumerate() {
                    if i > 0 {
                        self.out.push('|');
                    }
                    self.emit(branch)?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One pattern with haystacks and what Python's `regex` module gives for
    /// `regex.compile(pattern, regex.DOTALL).search(hay)`: `None` (no match) or the byte spans
    /// of group 0, 1, ... (`None` for a group that did not participate).
    struct Case {
        pattern: &'static str,
        /// Whether `to_dfa` is expected to succeed and be exact (no backreferences etc., no
        /// `$` approximated as `\z`).
        dfa_exact: bool,
        hays: &'static [(&'static str, Option<Groups>)],
    }

    /// Byte spans of group 0, 1, ... (`None`: the group did not participate).
    type Groups = &'static [Option<(usize, usize)>];

    type Spans = Option<Vec<Option<(usize, usize)>>>;

    fn fancy_spans(re: &fancy_regex::Regex, hay: &str) -> Spans {
        let caps = re.captures(hay).expect("fancy-regex runtime error")?;
        Some(
            (0..caps.len())
                .map(|i| caps.get(i).map(|m| (m.start(), m.end())))
                .collect(),
        )
    }

    fn meta_spans(re: &regex_automata::meta::Regex, hay: &str) -> Spans {
        let mut caps = re.create_captures();
        re.captures(hay, &mut caps);
        if !caps.is_match() {
            return None;
        }
        Some(
            (0..caps.group_len())
                .map(|i| caps.get_group(i).map(|s| (s.start, s.end)))
                .collect(),
        )
    }

    /// Recombine the DFA branches into one backtracking regex, `(?:main)(?=body)|...`, which
    /// has the semantics the DFA driver implements (a branch matches if its main part matches
    /// and its look-ahead then holds).
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
    }

    #[test]
    fn fancy_translation_matches_python() {
        for case in CASES {
            let translated = to_fancy(case.pattern)
                .unwrap_or_else(|e| panic!("to_fancy({:?}) failed: {e}", case.pattern));
            let re = fancy_regex::Regex::new(&translated).unwrap();
            for (hay, expected) in case.hays {
                let expected = expected.map(|e| e.to_vec());
                assert_eq!(
                    fancy_spans(&re, hay),
                    expected,
                    "pattern {:?} translated {:?} on {:?}",
                    case.pattern,
                    translated,
                    hay
                );
            }
        }
    }

    /// A match as the DFA driver finds it: group 0 and the named groups that participate.
    type DriverMatch = ((usize, usize), Vec<(String, (usize, usize))>);

    /// What the DFA driver (see [`DfaBranch`]) finds: at the first start where some branch
    /// matches, the first such branch in order; a branch matches with its main part's
    /// preferred (leftmost-first) anchored match when its look-ahead then holds from the end
    /// of that match (no backtracking into the main part). Captures are resolved by the
    /// branch's own regex, by name, as the engine does.
    fn driver_match(dp: &DfaPattern, hay: &str) -> Option<DriverMatch> {
        use regex_automata::{meta::Regex, Anchored, Input};
        let branches: Vec<(Regex, Option<(bool, Regex)>)> = dp
            .branches
            .iter()
            .map(|b| {
                let look = b
                    .lookahead
                    .as_ref()
                    .map(|(negated, body)| (*negated, Regex::new(body).unwrap()));
                (Regex::new(&b.main).unwrap(), look)
            })
            .collect();
        for start in (0..=hay.len()).filter(|&i| hay.is_char_boundary(i)) {
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
                    let held =
                        look.is_match(Input::new(hay).range(m.end()..).anchored(Anchored::Yes));
                    if held == *negated {
                        continue;
                    }
                }
                let names = caps
                    .group_info()
                    .pattern_names(regex_automata::PatternID::ZERO)
                    .enumerate()
                    .filter_map(|(i, name)| {
                        let span = caps.get_group(i)?;
                        Some((name?.to_string(), (span.start, span.end)))
                    })
                    .collect();
                return Some(((m.start(), m.end()), names));
            }
        }
        None
    }

    /// Python's result for a case, in the form of [`driver_match`] (group names from the
    /// full translation, which keeps Python's group numbering).
    fn python_match(pattern: &str, expected: Option<Groups>) -> Option<DriverMatch> {
        let groups = expected?;
        let fancy = fancy_regex::Regex::new(&to_fancy(pattern).unwrap()).unwrap();
        let mut names: Vec<(String, (usize, usize))> = fancy
            .capture_names()
            .enumerate()
            .filter_map(|(i, name)| Some((name?.to_string(), groups.get(i).copied()??)))
            .collect();
        names.sort();
        Some((groups[0]?, names))
    }

    #[test]
    fn dfa_driver_matches_python() {
        for case in CASES.iter().filter(|c| c.dfa_exact) {
            let dp = to_dfa(case.pattern).unwrap();
            for (hay, expected) in case.hays {
                let got = driver_match(&dp, hay).map(|(span, mut names)| {
                    names.sort();
                    (span, names)
                });
                assert_eq!(
                    got,
                    python_match(case.pattern, *expected),
                    "pattern {:?} -> {:?} on {:?}",
                    case.pattern,
                    dp,
                    hay
                );
            }
        }
    }

    #[test]
    fn dfa_translation_matches_python() {
        for case in CASES.iter().filter(|c| c.dfa_exact) {
            let dp = to_dfa(case.pattern)
                .unwrap_or_else(|e| panic!("to_dfa({:?}) failed: {e}", case.pattern));
            let combined = recombine(&dp);
            let re = fancy_regex::Regex::new(&combined).unwrap();
            for (hay, expected) in case.hays {
                let expected = expected.map(|e| e[0]);
                let got = fancy_spans(&re, hay).map(|s| s[0]);
                assert_eq!(
                    got, expected,
                    "pattern {:?} -> {:?} on {:?}",
                    case.pattern, dp, hay
                );
            }
            // A single branch without look-ahead runs on regex-automata as is: compare every
            // group too.
            if let [DfaBranch {
                main,
                lookahead: None,
            }] = dp.branches.as_slice()
            {
                let re = regex_automata::meta::Regex::new(main)
                    .unwrap_or_else(|e| panic!("meta regex for {main:?}: {e}"));
                for (hay, expected) in case.hays {
                    let expected = expected.map(|e| e.to_vec());
                    assert_eq!(
                        meta_spans(&re, hay),
                        expected,
                        "pattern {:?} -> {:?} on {:?}",
                        case.pattern,
                        main,
                        hay
                    );
                }
            }
        }
    }

    #[test]
    fn python_errors_are_errors() {
        for pattern in PY_ERRORS {
            assert!(to_fancy(pattern).is_err(), "to_fancy({pattern:?}) accepted");
            assert!(to_dfa(pattern).is_err(), "to_dfa({pattern:?}) accepted");
            assert!(
                group_names(pattern).is_err(),
                "group_names({pattern:?}) accepted"
            );
        }
    }

    #[test]
    fn unsupported_python_constructs_are_rejected() {
        for pattern in WE_REJECT {
            assert!(to_fancy(pattern).is_err(), "to_fancy({pattern:?}) accepted");
            assert!(to_dfa(pattern).is_err(), "to_dfa({pattern:?}) accepted");
        }
    }

    fn branch(main: &str, lookahead: Option<(bool, &str)>) -> DfaBranch {
        DfaBranch {
            main: main.to_string(),
            lookahead: lookahead.map(|(n, b)| (n, b.to_string())),
        }
    }

    #[test]
    fn real_template_delimiters() {
        let one = |p: &str| {
            let dp = to_dfa(p).unwrap();
            assert_eq!(dp.branches.len(), 1, "{p:?}");
            assert_eq!(dp.branches[0].lookahead, None, "{p:?}");
            (dp.branches[0].main.clone(), dp.group_names)
        };
        assert_eq!(
            one(r"<\|channel\|>commentary to=functions\.(?P<name>\w+).*?<\|message\|>"),
            (
                r"<\|channel\|>commentary to=functions\.(?P<name>\w+)(?s:.)*?<\|message\|>"
                    .to_string(),
                vec!["name".to_string()]
            )
        );
        assert_eq!(
            one(r"<tool_call>\s*<function=(?P<name>\w+)>").0,
            r"<tool_call>\s*<function=(?P<name>\w+)>"
        );
        assert_eq!(one(r"(?:^|<think>\s*)").0, r"(?:\A|<think>\s*)");
        assert_eq!(one(r"\n?</response>").0, r"\n?</response>");
        assert_eq!(
            one(r"(?:<\|message_model\|>)?[^<]*<\|content_text\|>").0,
            r"(?:<\|message_model\|>)?[^<]*<\|content_text\|>"
        );
        assert_eq!(one(r#"{"name""#).0, r#"\{"name""#);
        assert_eq!(to_fancy(r#"{"name""#).unwrap(), r#"\{"name""#);
    }

    #[test]
    fn trailing_lookahead_splits() {
        let dp = to_dfa(r#"\{\s*(?=\"tool\"\s*:)"#).unwrap();
        assert_eq!(
            dp.branches,
            vec![branch(r"\{\s*", Some((false, r#""tool"\s*:"#)))]
        );
        let dp = to_dfa(r"(?=[\s\S]*?</think>)").unwrap();
        assert_eq!(
            dp.branches,
            vec![branch("", Some((false, r"[\s\S]*?</think>")))]
        );
        let dp = to_dfa(r"</s>|$").unwrap();
        assert_eq!(
            dp.branches,
            vec![branch("</s>", None), branch("", Some((false, "\n?\\z")))]
        );
        let dp = to_dfa(r"(?P<a>x)$|(?P<b>y)(?!z)|w").unwrap();
        assert_eq!(
            dp.branches,
            vec![
                branch("(?P<a>x)", Some((false, "\n?\\z"))),
                branch("(?P<b>y)", Some((true, "z"))),
                branch("w", None)
            ]
        );
        assert_eq!(dp.group_names, vec!["a", "b"]);
        // `$` at the end of a top-level branch of a look-ahead body is exact as `\n?\z`.
        let dp = to_dfa(r"x(?=a$|b)").unwrap();
        assert_eq!(dp.branches, vec![branch("x", Some((false, "a\\n?\\z|b")))]);
        // No trailing look-ahead anywhere: one branch, whole pattern.
        let dp = to_dfa(r"a|b(?:c|\n)").unwrap();
        assert_eq!(dp.branches, vec![branch(r"a|b(?:c|\n)", None)]);
        // A quantified look-ahead reduces to the look-ahead (or to nothing).
        let dp = to_dfa(r"a(?=b)+").unwrap();
        assert_eq!(dp.branches, vec![branch("a", Some((false, "b")))]);
        let dp = to_dfa(r"a(?=b)?").unwrap();
        assert_eq!(dp.branches, vec![branch("a", None)]);
    }

    #[test]
    fn trailing_group_is_distributed() {
        let dollar = Some((false, "\n?\\z"));
        let dp = to_dfa(r"(?:<\|END_RESPONSE\|>|$)").unwrap();
        assert_eq!(
            dp.branches,
            vec![branch(r"<\|END_RESPONSE\|>", None), branch("", dollar)]
        );
        let dp = to_dfa(r"</answer>(?:<\|end\|>|$)").unwrap();
        assert_eq!(
            dp.branches,
            vec![
                branch(r"</answer><\|end\|>", None),
                branch("</answer>", dollar)
            ]
        );
        let dp = to_dfa(r"x(?:a|b(?=c))").unwrap();
        assert_eq!(
            dp.branches,
            vec![branch("xa", None), branch("xb", Some((false, "c")))]
        );
        // Nested trailing groups; tail-less alternatives stay together, at every level.
        let dp = to_dfa(r"x(?:a|b(?:c|d|$))|y").unwrap();
        assert_eq!(
            dp.branches,
            vec![
                branch("x(?:a|b(?:c|d))", None),
                branch("xb", dollar),
                branch("y", None)
            ]
        );
        let dp = to_dfa(r"x(?:a|b|$)").unwrap();
        assert_eq!(
            dp.branches,
            vec![branch("x(?:a|b)", None), branch("x", dollar)]
        );
        // A capturing group is kept around each part; its name is listed once.
        let dp = to_dfa(r"((?:</s>|$))").unwrap();
        assert_eq!(
            dp.branches,
            vec![branch("(</s>)", None), branch("()", dollar)]
        );
        let dp = to_dfa(r"(?P<k>\w)(?P<end></s>|(?P<nl>\n)$)").unwrap();
        assert_eq!(
            dp.branches,
            vec![
                branch(r"(?P<k>\w)(?P<end></s>)", None),
                branch(r"(?P<k>\w)(?P<end>(?P<nl>\n))", dollar)
            ]
        );
        assert_eq!(dp.group_names, vec!["k", "end", "nl"]);
        // Scoped flags stay with the group's parts.
        let dp = to_dfa(r"x(?i:a|b$)").unwrap();
        assert_eq!(
            dp.branches,
            vec![branch("x(?i:a)", None), branch("x(?i:b)", dollar)]
        );
        let dp = to_dfa("x(?x: a | b $ )").unwrap();
        assert_eq!(dp.branches, vec![branch("xa", None), branch("xb", dollar)]);
        // Fixed-length prefixes: classes, counted repeats, alternatives of one length.
        let dp = to_dfa(r"\d{2}-(?:[ab]c|$)").unwrap();
        assert_eq!(
            dp.branches,
            vec![branch(r"\d{2}\-[ab]c", None), branch(r"\d{2}\-", dollar)]
        );
        let dp = to_dfa(r"(?:ab|cd)(?:!|$)").unwrap();
        assert_eq!(
            dp.branches,
            vec![branch("(?:ab|cd)!", None), branch("(?:ab|cd)", dollar)]
        );
        // `(?:$)+` reduces to `(?:$)`; a reduced `(?=b)?` at the end is ignored.
        let dp = to_dfa(r"x(?:$)+").unwrap();
        assert_eq!(dp.branches, vec![branch("x", dollar)]);
        let dp = to_dfa(r"a$(?=b)?").unwrap();
        assert_eq!(dp.branches, vec![branch("a", dollar)]);
        // In a look-ahead body, a `$` that nothing follows is exact, also in a trailing group.
        let dp = to_dfa(r"x(?=a(?:b|$))").unwrap();
        assert_eq!(
            dp.branches,
            vec![branch("x", Some((false, r"a(?:b|\n?\z)")))]
        );
        // The number of branches is capped.
        let many = format!("x(?:{}|$)", vec!["a$"; MAX_DFA_BRANCHES].join("|"));
        let e = issue(to_dfa(&many));
        assert!(e.message.contains("more than 64 branches"), "{e}");
        let nested = format!(
            "(?:{}|$)",
            vec!["a(?:b$|c$)"; MAX_DFA_BRANCHES / 2].join("|")
        );
        let e = issue(to_dfa(&nested));
        assert!(e.message.contains("more than 64 branches"), "{e}");
        let at_limit = format!("(?:{})", vec!["a$"; MAX_DFA_BRANCHES].join("|"));
        assert_eq!(to_dfa(&at_limit).unwrap().branches.len(), MAX_DFA_BRANCHES);
        // Many tail-less alternatives cost one branch.
        let wide = format!("x(?:{}|$)", vec!["a"; 1000].join("|"));
        assert_eq!(to_dfa(&wide).unwrap().branches.len(), 2);
    }

    #[test]
    fn trailing_group_after_variable_prefix_is_not_distributed() {
        // Distributing would change the priority of the prefix's matches: the `$` keeps the
        // `\z` approximation and a look-ahead is rejected.
        let dp = to_dfa(r"x+(?:</s>|$)").unwrap();
        assert_eq!(dp.branches, vec![branch(r"x+(?:</s>|\z)", None)]);
        let dp = to_dfa(r"<think>[\s\S]*?(?:</think>|$)").unwrap();
        assert_eq!(
            dp.branches,
            vec![branch(r"<think>[\s\S]*?(?:</think>|\z)", None)]
        );
        let e = issue(to_dfa(r"x+(?:a|b(?=c))"));
        assert!(e.message.contains("not at the end of a branch"), "{e}");
        assert!(e.message.contains("fixed-length prefix"), "{e}");
        // A quantified group is not distributed either.
        let dp = to_dfa(r"x(?:a|$)?").unwrap();
        assert_eq!(dp.branches, vec![branch(r"x(?:a|\z)?", None)]);
        // ... but an inner trailing group after a fixed prefix, in another branch, is.
        let dp = to_dfa(r"x+(?:a|$)|y(?:b|$)").unwrap();
        assert_eq!(
            dp.branches,
            vec![
                branch(r"(?:x+(?:a|\z)|yb)", None),
                branch("y", Some((false, "\n?\\z")))
            ]
        );
    }

    #[test]
    fn lookahead_is_checked_at_the_preferred_end_only() {
        // Documented limitation of the driver: no backtracking into the main part. Python's
        // `regex` finds (0, 2) for `x.*?$` on "xa" and (0, 3) for `x(?:a|.*?$)` on "xbc".
        let dp = to_dfa(r"x.*?$").unwrap();
        assert_eq!(driver_match(&dp, "xa"), None);
        let dp = to_dfa(r"x(?:a|.*?$)").unwrap();
        assert_eq!(driver_match(&dp, "xbc"), None);
        // The `\z` approximation after a variable-length prefix keeps such a match, only the
        // final newline differs (Python: (0, 10) on "<think>a\nb", (0, 9) on "<think>ab\n").
        let dp = to_dfa(r"<think>[\s\S]*?(?:</think>|$)").unwrap();
        assert_eq!(driver_match(&dp, "<think>a\nb"), Some(((0, 10), vec![])));
        assert_eq!(driver_match(&dp, "<think>ab\n"), Some(((0, 10), vec![])));
    }

    #[test]
    fn dollar_elsewhere_is_approximated_by_end_of_text() {
        // Documented approximation: Python's `$` also matches before a final "\n".
        let dp = to_dfa(r"(?:$|x)y").unwrap();
        assert_eq!(dp.branches, vec![branch(r"(?:\z|x)y", None)]);
        let dp = to_dfa(r"a$b").unwrap();
        assert_eq!(dp.branches, vec![branch(r"a\zb", None)]);
        let dp = to_dfa("x$\\n").unwrap();
        assert_eq!(dp.branches, vec![branch(r"x\z\n", None)]);
        // ... while the fancy translation is exact.
        assert_eq!(to_fancy(r"a$").unwrap(), r"a(?=\n?\z)");
        assert_eq!(to_dfa(r"a\Z").unwrap().branches, vec![branch(r"a\z", None)]);
    }

    fn issue(r: Result<impl std::fmt::Debug, RegexIssue>) -> RegexIssue {
        r.expect_err("expected a RegexIssue")
    }

    #[test]
    fn rejected_constructs_are_named() {
        let e = issue(to_dfa(r"(?<=a)b"));
        assert!(e.message.contains("look-behind `(?<=`"), "{e}");
        assert_eq!(e.offset, Some(0));
        let e = issue(to_dfa(r"x(?<!a)b"));
        assert!(e.message.contains("look-behind `(?<!`"), "{e}");
        assert_eq!(e.offset, Some(1));
        let e = issue(to_dfa(r"(a)\1"));
        assert!(e.message.contains("backreference `\\1`"), "{e}");
        assert_eq!(e.offset, Some(3));
        let e = issue(to_dfa(r"(?P<n>a)(?P=n)"));
        assert!(e.message.contains("backreference `(?P=n)`"), "{e}");
        let e = issue(to_dfa(r"(?>a)"));
        assert!(e.message.contains("atomic group `(?>`"), "{e}");
        let e = issue(to_dfa(r"a*+"));
        assert!(e.message.contains("possessive quantifier `*+`"), "{e}");
        assert_eq!(e.offset, Some(1));
        let e = issue(to_dfa(r"a{1,2}+"));
        assert!(e.message.contains("possessive quantifier `{1,2}+`"), "{e}");
        let e = issue(to_dfa(r"a(?=b)c"));
        assert!(e.message.contains("look-ahead"), "{e}");
        assert!(e.message.contains("not at the end of a branch"), "{e}");
        assert_eq!(e.offset, Some(1));
        let e = issue(to_dfa(r"(?:a(?=b))+"));
        assert!(e.message.contains("not at the end of a branch"), "{e}");
        let e = issue(to_dfa(r"(?:a(?=b))c"));
        assert!(e.message.contains("not at the end of a branch"), "{e}");
        let e = issue(to_dfa(r"a(?=b(?=c))"));
        assert!(e.message.contains("not at the end of a branch"), "{e}");
        let e = issue(to_dfa(r"a(?=(?P<n>b))"));
        assert!(
            e.message.contains("named group `n` inside a look-ahead"),
            "{e}"
        );
        let e = issue(to_dfa(r"(?R)"));
        assert!(e.message.contains("recursive pattern call `(?R)`"), "{e}");
        let e = issue(to_dfa(r"(a)(?(1)b|c)"));
        assert!(e.message.contains("conditional `(?(`"), "{e}");
        let e = issue(to_fancy(r"(?i)(a)\1"));
        assert!(e.message.contains("case-insensitive backreference"), "{e}");
        let e = issue(to_fancy(r"\N{LATIN SMALL LETTER A}"));
        assert!(
            e.message
                .contains("named character `\\N{LATIN SMALL LETTER A}`"),
            "{e}"
        );
        let e = issue(to_fancy(r"a{e<=1}"));
        assert!(
            e.message.contains("fuzzy matching constraint `{e<=1}`"),
            "{e}"
        );
        let e = issue(to_fancy(r"[[:alpha:]]"));
        assert!(
            e.message.contains("POSIX character class `[:alpha:]`"),
            "{e}"
        );
        let e = issue(to_fancy(r"(?a)\w"));
        assert!(e.message.contains("`(?a)`"), "{e}");
        let e = issue(to_dfa(r"a\Kb"));
        assert!(e.message.contains("`\\K`"), "{e}");
        let e = issue(to_dfa(r"\Rb"));
        assert!(e.message.contains("`\\R`"), "{e}");
        let e = issue(to_dfa(r"\Gb"));
        assert!(e.message.contains("`\\G`"), "{e}");
        let e = issue(to_fancy(r"(?P<a>x)|(?P<a>y)"));
        assert!(e.message.contains("duplicate group name `a`"), "{e}");
        // Python syntax errors carry the byte offset.
        let e = issue(to_dfa("é\\q"));
        assert_eq!(e.offset, Some(2));
        assert!(e.message.contains("bad escape \\q"), "{e}");
        let e = issue(to_dfa(r"\p{NotAProperty}"));
        assert!(
            e.message
                .contains("unknown or unsupported Unicode property `\\p{NotAProperty}`"),
            "{e}"
        );
        // regex-syntax's own verdict is reported.
        let e = issue(validate_dfa("a{2,1}"));
        assert!(e.message.contains("regex-syntax"), "{e}");
        let e = issue(to_fancy(r"(?<=a+)b"));
        assert!(e.message.contains("fancy-regex"), "{e}");
        assert!(!e.to_string().is_empty());
    }

    #[test]
    fn group_names_in_order() {
        assert_eq!(
            group_names(r"(?P<key>\w+)(x)(?<value>.*)(?=(?P<look>a))").unwrap(),
            vec!["key", "value", "look"]
        );
        assert_eq!(group_names(r"a(b)c").unwrap(), Vec::<String>::new());
        assert!(group_names(r"(?P<k").is_err());
        // `(?x)` verbose mode allows spaces around the name.
        assert_eq!(group_names("(?x)(?P< k >a)").unwrap(), vec!["k"]);
    }

    #[test]
    fn escape_is_regex_syntax_escape() {
        assert_eq!(escape("<|im_end|>"), r"<\|im_end\|>");
        assert_eq!(escape("{a}.*"), r"\{a\}\.\*");
        let re = regex_automata::meta::Regex::new(&escape("a+b[c]-{d}#&~^$")).unwrap();
        assert!(re.is_match("a+b[c]-{d}#&~^$"));
    }

    #[test]
    fn translations_build_dfas() {
        use regex_automata::dfa::dense;
        for p in [
            r"<\|channel\|>commentary to=functions\.(?P<name>\w+).*?<\|message\|>",
            r"(?:^|<think>\s*)",
            r"(?i)<tool_call>\s*\{",
            r"[^<]*<\|content_text\|>",
            r"(?m)^\[TOOL\]$",
        ] {
            let dp = to_dfa(p).unwrap();
            for b in &dp.branches {
                dense::DFA::new(&b.main).unwrap_or_else(|e| panic!("{p:?}: {e}"));
            }
        }
        // A Unicode `\b` is translated as is; the DFA builder is the one to refuse it.
        let dp = to_dfa(r"\bfoo\b").unwrap();
        assert_eq!(dp.branches, vec![branch(r"\bfoo\b", None)]);
        assert!(dense::DFA::new(&dp.branches[0].main).is_err());
    }

    #[test]
    fn flags_and_verbose_mode() {
        assert_eq!(to_fancy("(?i)ab1").unwrap(), "(?i:ab1)");
        assert_eq!(to_fancy("a(?i)b[c]").unwrap(), "a(?i:b)(?i:[c])");
        assert_eq!(to_fancy("(?x) a b # comment\n c").unwrap(), "abc");
        assert_eq!(to_fancy("(?x)[ a]\\ ").unwrap(), "[ a] ");
        assert_eq!(to_fancy("(?-s:.).").unwrap(), r"(?:[^\n])(?s:.)");
        assert_eq!(to_fancy("(?m)^a$").unwrap(), "(?m:^)a(?m:$)");
    }

    #[test]
    fn no_panic_on_arbitrary_patterns() {
        const ALPHABET: &[char] = &[
            '(', ')', '[', ']', '{', '}', '?', '*', '+', '|', '\\', '^', '$', '.', '-', ',', ':',
            '=', '!', '<', '>', '#', 'P', 'a', 'b', 'd', 'e', 'i', 's', 'x', 'g', 'N', 'p', 'R',
            'u', '0', '1', '7', '9', ' ', '\n', 'é', '&', '~', '\'',
        ];
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..10_000 {
            let len = (next() % 14) as usize;
            let pattern: String = (0..len)
                .map(|_| ALPHABET[(next() % ALPHABET.len() as u64) as usize])
                .collect();
            let _ = group_names(&pattern);
            if let Ok(s) = to_fancy(&pattern) {
                assert!(fancy_regex::Regex::new(&s).is_ok());
            }
            if let Ok(dp) = to_dfa(&pattern) {
                for b in &dp.branches {
                    assert!(regex_syntax::parse(&b.main).is_ok());
                }
            }
        }
        let deep = format!("{}a{}", "(".repeat(5000), ")".repeat(5000));
        assert!(to_fancy(&deep).is_err());
        assert!(to_dfa(&deep).is_err());
        let wide = "[".repeat(5000);
        assert!(to_fancy(&wide).is_err());
    }

    // Generated by running Python's `regex` module (regex.compile(p, regex.DOTALL).search(h)).
    #[rustfmt::skip]
    const CASES: &[Case] = &[
        Case { pattern: "<\\|channel\\|>commentary to=functions\\.(?P<name>\\w+).*?<\\|message\\|>", dfa_exact: true, hays: &[("<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{}", Some(&[Some((0, 75)), Some((35, 46))])), ("<|channel|>commentary to=functions. <|message|>", None)] },
        Case { pattern: "<tool_call>\\s*<function=(?P<name>\\w+)>", dfa_exact: true, hays: &[("x<tool_call>\u{a}<function=get_time>", Some(&[Some((1, 32)), Some((23, 31))])), ("<tool_call><function=>", None)] },
        Case { pattern: "(?:^|<think>\\s*)", dfa_exact: true, hays: &[("abc", Some(&[Some((0, 0))])), ("x<think>\u{a} y", Some(&[Some((0, 0))]))] },
        Case { pattern: "\\n?</response>", dfa_exact: true, hays: &[("a\u{a}</response>", Some(&[Some((1, 13))])), ("a</response>", Some(&[Some((1, 12))])), ("</respons", None)] },
        Case { pattern: "(?:<\\|message_model\\|>)?[^<]*<\\|content_text\\|>", dfa_exact: true, hays: &[("<|message_model|>hi<|content_text|>", Some(&[Some((0, 35))])), ("zz<|content_text|>", Some(&[Some((0, 18))])), ("<x<|content_text|>", Some(&[Some((1, 18))]))] },
        Case { pattern: "\\{\\s*(?=\\\"tool\\\"\\s*:)", dfa_exact: true, hays: &[("{ \"tool\": 1}", Some(&[Some((0, 2))])), ("{\"tools\": 1}", None), ("{ \"other\" } { \"tool\" :", Some(&[Some((12, 14))]))] },
        Case { pattern: "(?=[\\s\\S]*?</think>)", dfa_exact: true, hays: &[("abc</think>", Some(&[Some((0, 0))])), ("abc", None)] },
        Case { pattern: "</s>|$", dfa_exact: true, hays: &[("a</s>b", Some(&[Some((1, 5))])), ("ab\u{a}", Some(&[Some((2, 2))])), ("ab", Some(&[Some((2, 2))])), ("ab\u{a}\u{a}", Some(&[Some((3, 3))]))] },
        Case { pattern: "<parameter=(?P<key>\\w+)>\\s*(?P<value>.*?)\\s*</parameter>", dfa_exact: true, hays: &[("<parameter=city>\u{a} Paris \u{a}</parameter>", Some(&[Some((0, 37)), Some((11, 15)), Some((18, 23))])), ("<parameter=a></parameter>", Some(&[Some((0, 25)), Some((11, 12)), Some((13, 13))]))] },
        Case { pattern: "<(?P<key>\\w+)>\\s*(?P<value>.*?)\\s*</\\1>", dfa_exact: false, hays: &[("<city> Paris </city>", Some(&[Some((0, 20)), Some((1, 5)), Some((7, 12))])), ("<a>x</b><a>y</a>", Some(&[Some((0, 16)), Some((1, 2)), Some((3, 12))]))] },
        Case { pattern: "<(?P<key>\\w+)=(?P<value>[^>]+)>", dfa_exact: true, hays: &[("<k=v>", Some(&[Some((0, 5)), Some((1, 2)), Some((3, 4))])), ("<k=>", None)] },
        Case { pattern: "{\"name\"", dfa_exact: true, hays: &[("x{\"name\": 1}", Some(&[Some((1, 8))]))] },
        Case { pattern: "a{", dfa_exact: true, hays: &[("a{", Some(&[Some((0, 2))]))] },
        Case { pattern: "a{1", dfa_exact: true, hays: &[("a{1", Some(&[Some((0, 3))]))] },
        Case { pattern: "a{1,", dfa_exact: true, hays: &[("a{1,", Some(&[Some((0, 4))]))] },
        Case { pattern: "a{,2}", dfa_exact: true, hays: &[("aaa", Some(&[Some((0, 2))]))] },
        Case { pattern: "a{,}", dfa_exact: true, hays: &[("aaa", Some(&[Some((0, 3))])), ("b", Some(&[Some((0, 0))]))] },
        Case { pattern: "x{2}y", dfa_exact: true, hays: &[("xxxy", Some(&[Some((1, 4))])), ("xy", None)] },
        Case { pattern: "a{1,2}b", dfa_exact: true, hays: &[("aaab", Some(&[Some((1, 4))]))] },
        Case { pattern: "a{2,}", dfa_exact: true, hays: &[("a aaaa", Some(&[Some((2, 6))]))] },
        Case { pattern: "}", dfa_exact: true, hays: &[("}", Some(&[Some((0, 1))]))] },
        Case { pattern: "{}", dfa_exact: true, hays: &[("{}", Some(&[Some((0, 2))]))] },
        Case { pattern: "a{}", dfa_exact: true, hays: &[("a{}", Some(&[Some((0, 3))]))] },
        Case { pattern: "a{ 1}", dfa_exact: true, hays: &[("a{ 1}", Some(&[Some((0, 5))]))] },
        Case { pattern: "a{1, 2}", dfa_exact: true, hays: &[("aa", None), ("a{1, 2}", Some(&[Some((0, 7))]))] },
        Case { pattern: "a{1 }", dfa_exact: true, hays: &[("a{1 }", Some(&[Some((0, 5))]))] },
        Case { pattern: "a{x}", dfa_exact: true, hays: &[("a{x}", Some(&[Some((0, 4))]))] },
        Case { pattern: "a{-1}", dfa_exact: true, hays: &[("a{-1}", Some(&[Some((0, 5))]))] },
        Case { pattern: "{", dfa_exact: true, hays: &[("{", Some(&[Some((0, 1))]))] },
        Case { pattern: "a{,", dfa_exact: true, hays: &[("a{,", Some(&[Some((0, 3))]))] },
        Case { pattern: "a{1,2", dfa_exact: true, hays: &[("a{1,2", Some(&[Some((0, 5))]))] },
        Case { pattern: "{\"arguments\": ", dfa_exact: true, hays: &[("{\"arguments\": {}}", Some(&[Some((0, 14))]))] },
        Case { pattern: "\\{\\s*\"name\"", dfa_exact: true, hays: &[("{ \"name\"", Some(&[Some((0, 8))]))] },
        Case { pattern: "a{0}b", dfa_exact: true, hays: &[("ab", Some(&[Some((1, 2))])), ("b", Some(&[Some((0, 1))]))] },
        Case { pattern: "a{1}b", dfa_exact: true, hays: &[("ab", Some(&[Some((0, 2))]))] },
        Case { pattern: "a{1}?b", dfa_exact: true, hays: &[("ab", Some(&[Some((0, 2))]))] },
        Case { pattern: "a{0001}", dfa_exact: true, hays: &[("a", Some(&[Some((0, 1))]))] },
        Case { pattern: "a{3,3}", dfa_exact: true, hays: &[("aaaa", Some(&[Some((0, 3))]))] },
        Case { pattern: "a{0,1}?b", dfa_exact: true, hays: &[("ab", Some(&[Some((0, 2))]))] },
        Case { pattern: "(?:ab){2}", dfa_exact: true, hays: &[("ababab", Some(&[Some((0, 4))]))] },
        Case { pattern: "[]a]", dfa_exact: true, hays: &[("]", Some(&[Some((0, 1))])), ("a", Some(&[Some((0, 1))])), ("b", None)] },
        Case { pattern: "[^]]", dfa_exact: true, hays: &[("]a", Some(&[Some((1, 2))]))] },
        Case { pattern: "[a[b]", dfa_exact: true, hays: &[("[", Some(&[Some((0, 1))])), ("b", Some(&[Some((0, 1))])), ("c", None)] },
        Case { pattern: "[[a]]", dfa_exact: true, hays: &[("a]", Some(&[Some((0, 2))])), ("[]", Some(&[Some((0, 2))]))] },
        Case { pattern: "[a&&b]", dfa_exact: true, hays: &[("&", Some(&[Some((0, 1))]))] },
        Case { pattern: "[a~~b]", dfa_exact: true, hays: &[("~", Some(&[Some((0, 1))]))] },
        Case { pattern: "[a||b]", dfa_exact: true, hays: &[("|", Some(&[Some((0, 1))]))] },
        Case { pattern: "[+--]", dfa_exact: true, hays: &[(",", Some(&[Some((0, 1))])), ("-", Some(&[Some((0, 1))])), (".", None)] },
        Case { pattern: "[--a]", dfa_exact: true, hays: &[(".", Some(&[Some((0, 1))])), ("-", Some(&[Some((0, 1))])), ("b", None)] },
        Case { pattern: "[a-]", dfa_exact: true, hays: &[("-", Some(&[Some((0, 1))]))] },
        Case { pattern: "[-a]", dfa_exact: true, hays: &[("-", Some(&[Some((0, 1))]))] },
        Case { pattern: "[\\d-z]", dfa_exact: true, hays: &[("-", Some(&[Some((0, 1))])), ("y", None), ("5", Some(&[Some((0, 1))]))] },
        Case { pattern: "[a-\\d]", dfa_exact: true, hays: &[("-", Some(&[Some((0, 1))])), ("b", None), ("5", Some(&[Some((0, 1))]))] },
        Case { pattern: "[\\b]", dfa_exact: true, hays: &[("\u{8}", Some(&[Some((0, 1))])), ("b", None)] },
        Case { pattern: "[\\1]", dfa_exact: true, hays: &[("\u{1}", Some(&[Some((0, 1))])), ("1", None)] },
        Case { pattern: "[\\x41-\\x43]", dfa_exact: true, hays: &[("B", Some(&[Some((0, 1))])), ("D", None)] },
        Case { pattern: "[\\s\\S]+", dfa_exact: true, hays: &[("a\u{a}b", Some(&[Some((0, 3))]))] },
        Case { pattern: "[^\\W\\d]+", dfa_exact: true, hays: &[("1ab_2", Some(&[Some((1, 4))]))] },
        Case { pattern: "[\\-\\]\\[\\^]+", dfa_exact: true, hays: &[("x-][^", Some(&[Some((1, 5))]))] },
        Case { pattern: "[^^]", dfa_exact: true, hays: &[("^a", Some(&[Some((1, 2))]))] },
        Case { pattern: "[.$|()*+?{}]+", dfa_exact: true, hays: &[("a.$|()*+?{}", Some(&[Some((1, 11))]))] },
        Case { pattern: "[\\\\]", dfa_exact: true, hays: &[("\\", Some(&[Some((0, 1))]))] },
        Case { pattern: "[\u{e9}-\u{eb}]", dfa_exact: true, hays: &[("\u{ea}", Some(&[Some((0, 2))])), ("e", None)] },
        Case { pattern: "[\\h]+", dfa_exact: true, hays: &[("a \u{9}\u{3000}b", Some(&[Some((1, 6))]))] },
        Case { pattern: "[#&~]+", dfa_exact: true, hays: &[("#&~", Some(&[Some((0, 3))]))] },
        Case { pattern: "[\\n\\t]", dfa_exact: true, hays: &[("\u{9}", Some(&[Some((0, 1))]))] },
        Case { pattern: "[\\0-\\x09]", dfa_exact: true, hays: &[("\u{5}", Some(&[Some((0, 1))]))] },
        Case { pattern: "[\\u00e9]", dfa_exact: true, hays: &[("\u{e9}", Some(&[Some((0, 2))]))] },
        Case { pattern: "[a\\-z]", dfa_exact: true, hays: &[("-", Some(&[Some((0, 1))])), ("b", None)] },
        Case { pattern: "[a-a]", dfa_exact: true, hays: &[("a", Some(&[Some((0, 1))]))] },
        Case { pattern: "[\\w-]+", dfa_exact: true, hays: &[("ab-c d", Some(&[Some((0, 4))]))] },
        Case { pattern: "[[:x]", dfa_exact: true, hays: &[("x", Some(&[Some((0, 1))])), (":", Some(&[Some((0, 1))]))] },
        Case { pattern: "[^\\n]+", dfa_exact: true, hays: &[("ab\u{a}cd", Some(&[Some((0, 2))]))] },
        Case { pattern: "[ -~]+", dfa_exact: true, hays: &[("h\u{e9}llo", Some(&[Some((0, 1))]))] },
        Case { pattern: "^a", dfa_exact: true, hays: &[("a", Some(&[Some((0, 1))])), ("ba", None)] },
        Case { pattern: "a$", dfa_exact: true, hays: &[("a", Some(&[Some((0, 1))])), ("a\u{a}", Some(&[Some((0, 1))])), ("a\u{a}\u{a}", None), ("ab", None)] },
        Case { pattern: "^$", dfa_exact: true, hays: &[("", Some(&[Some((0, 0))])), ("\u{a}", Some(&[Some((0, 0))])), ("a", None)] },
        Case { pattern: "a\\Z", dfa_exact: true, hays: &[("a", Some(&[Some((0, 1))])), ("a\u{a}", None)] },
        Case { pattern: "a\\z", dfa_exact: true, hays: &[("a", Some(&[Some((0, 1))])), ("a\u{a}", None)] },
        Case { pattern: "\\Aa", dfa_exact: true, hays: &[("a", Some(&[Some((0, 1))])), ("ba", None)] },
        Case { pattern: "(?m)^a$", dfa_exact: true, hays: &[("b\u{a}a\u{a}", Some(&[Some((2, 3))])), ("ab", None)] },
        Case { pattern: "a$|b", dfa_exact: true, hays: &[("a\u{a}", Some(&[Some((0, 1))])), ("b", Some(&[Some((0, 1))]))] },
        Case { pattern: "x$\\n", dfa_exact: false, hays: &[("x\u{a}", Some(&[Some((0, 2))]))] },
        Case { pattern: "\\n?$", dfa_exact: true, hays: &[("ab\u{a}", Some(&[Some((2, 3))])), ("ab", Some(&[Some((2, 2))]))] },
        Case { pattern: "(?:</s>|$)", dfa_exact: true, hays: &[("ab\u{a}", Some(&[Some((2, 2))])), ("</s>", Some(&[Some((0, 4))])), ("x</s>\u{a}", Some(&[Some((1, 5))])), ("x\u{a}", Some(&[Some((1, 1))])), ("x", Some(&[Some((1, 1))])), ("", Some(&[Some((0, 0))])), ("\u{a}", Some(&[Some((0, 0))])), ("x\u{a}\u{a}", Some(&[Some((2, 2))]))] },
        Case { pattern: "(?:<\\|END_RESPONSE\\|>|$)", dfa_exact: true, hays: &[("x<|END_RESPONSE|>\u{a}", Some(&[Some((1, 17))])), ("x\u{a}", Some(&[Some((1, 1))])), ("x", Some(&[Some((1, 1))])), ("a<|END_RESPONSE|>b\u{a}", Some(&[Some((1, 17))]))] },
        Case { pattern: "</answer>(?:<\\|end\\|>|$)", dfa_exact: true, hays: &[("a</answer><|end|>", Some(&[Some((1, 17))])), ("a</answer>\u{a}", Some(&[Some((1, 10))])), ("a</answer>", Some(&[Some((1, 10))])), ("a</answer>\u{a}b", None), ("</answer>x</answer>", Some(&[Some((10, 19))]))] },
        Case { pattern: "x(?:a|b(?=c))", dfa_exact: true, hays: &[("xbc", Some(&[Some((0, 2))])), ("xbd", None), ("xa", Some(&[Some((0, 2))])), ("xb xbc", Some(&[Some((3, 5))]))] },
        Case { pattern: "((?:</s>|$))", dfa_exact: true, hays: &[("x</s>\u{a}", Some(&[Some((1, 5)), Some((1, 5))])), ("x\u{a}", Some(&[Some((1, 1)), Some((1, 1))])), ("x", Some(&[Some((1, 1)), Some((1, 1))]))] },
        Case { pattern: "(?P<end></s>|$)", dfa_exact: true, hays: &[("x</s>\u{a}", Some(&[Some((1, 5)), Some((1, 5))])), ("x\u{a}", Some(&[Some((1, 1)), Some((1, 1))])), ("x", Some(&[Some((1, 1)), Some((1, 1))]))] },
        Case { pattern: "<b>(?:</b>|$)", dfa_exact: true, hays: &[("<b>x</b>", None), ("x<b>\u{a}", Some(&[Some((1, 4))])), ("x<b>", Some(&[Some((1, 4))])), ("x<b>y", None)] },
        Case { pattern: "(?:</x>|$)", dfa_exact: true, hays: &[("a</x>b", Some(&[Some((1, 5))])), ("a\u{a}", Some(&[Some((1, 1))])), ("a", Some(&[Some((1, 1))]))] },
        Case { pattern: "x(?:a|b(?:c|$))", dfa_exact: true, hays: &[("xbc", Some(&[Some((0, 3))])), ("xb\u{a}", Some(&[Some((0, 2))])), ("xb", Some(&[Some((0, 2))])), ("xa", Some(&[Some((0, 2))])), ("xbd", None)] },
        Case { pattern: "x(?i:A|B$)", dfa_exact: true, hays: &[("xa", Some(&[Some((0, 2))])), ("Xb\u{a}", None), ("xB", Some(&[Some((0, 2))])), ("xb\u{a}", Some(&[Some((0, 2))])), ("xb\u{a}z", None)] },
        Case { pattern: "x(?:a|b|$)", dfa_exact: true, hays: &[("xb", Some(&[Some((0, 2))])), ("x\u{a}", Some(&[Some((0, 1))])), ("xc", None)] },
        Case { pattern: "(?P<k>\\w)(?:=|(?P<v>:)$)", dfa_exact: true, hays: &[("a:\u{a}", Some(&[Some((0, 2)), Some((0, 1)), Some((1, 2))])), ("a=", Some(&[Some((0, 2)), Some((0, 1)), None])), ("a:b", None), ("ab:", Some(&[Some((1, 3)), Some((1, 2)), Some((2, 3))]))] },
        Case { pattern: "\\d{2}-(?:x|$)", dfa_exact: true, hays: &[("12-x", Some(&[Some((0, 4))])), ("12-\u{a}", Some(&[Some((0, 3))])), ("123-", Some(&[Some((1, 4))]))] },
        Case { pattern: "(?:ab|cd)(?:!|$)", dfa_exact: true, hays: &[("cd\u{a}", Some(&[Some((0, 2))])), ("ab!", Some(&[Some((0, 3))])), ("abcd", Some(&[Some((2, 4))]))] },
        Case { pattern: "x(?:a(?=b)|$)", dfa_exact: true, hays: &[("xab", Some(&[Some((0, 2))])), ("xa", None), ("x\u{a}", Some(&[Some((0, 1))]))] },
        Case { pattern: "x(?:(?=a)|$)", dfa_exact: true, hays: &[("xa", Some(&[Some((0, 1))])), ("x\u{a}", Some(&[Some((0, 1))])), ("xb", None)] },
        Case { pattern: "(?:a|(?:b|(?:c|$)))", dfa_exact: true, hays: &[("zc", Some(&[Some((1, 2))])), ("z\u{a}", Some(&[Some((1, 1))])), ("zb", Some(&[Some((1, 2))]))] },
        Case { pattern: "x(?:$)+", dfa_exact: true, hays: &[("x\u{a}", Some(&[Some((0, 1))])), ("xy", None)] },
        Case { pattern: "a$(?=b)?", dfa_exact: true, hays: &[("a\u{a}", Some(&[Some((0, 1))])), ("ab", None)] },
        Case { pattern: "x(?=a(?:b|$))", dfa_exact: true, hays: &[("xa\u{a}", Some(&[Some((0, 1))])), ("xab", Some(&[Some((0, 1))])), ("xac", None)] },
        Case { pattern: "x(?!a(?:b|$))", dfa_exact: true, hays: &[("xa\u{a}", None), ("xab", None), ("xac", Some(&[Some((0, 1))]))] },
        Case { pattern: "x+(?:</s>|$)", dfa_exact: false, hays: &[("xx</s>", Some(&[Some((0, 6))])), ("xx\u{a}", Some(&[Some((0, 2))])), ("xx", Some(&[Some((0, 2))]))] },
        Case { pattern: "(?:$|x)y", dfa_exact: false, hays: &[("xy", Some(&[Some((0, 2))])), ("y", None)] },
        Case { pattern: "a$b", dfa_exact: false, hays: &[("a\u{a}b", None), ("ab", None)] },
        Case { pattern: "(?:a|$)*b", dfa_exact: false, hays: &[("ab", Some(&[Some((0, 2))])), ("b", Some(&[Some((0, 1))]))] },
        Case { pattern: "x(?:a|$)?", dfa_exact: false, hays: &[("xa", Some(&[Some((0, 2))])), ("x\u{a}", Some(&[Some((0, 1))]))] },
        Case { pattern: "\\<\\>", dfa_exact: true, hays: &[("<>", Some(&[Some((0, 2))]))] },
        Case { pattern: "\\'\\\"\\/", dfa_exact: true, hays: &[("'\"/", Some(&[Some((0, 3))]))] },
        Case { pattern: "\\-\\ \\#\\&\\~", dfa_exact: true, hays: &[("- #&~", Some(&[Some((0, 5))]))] },
        Case { pattern: "\\x41\\u00e9\\U0001F600", dfa_exact: true, hays: &[("A\u{e9}\u{1f600}", Some(&[Some((0, 7))]))] },
        Case { pattern: "\\0", dfa_exact: true, hays: &[("\u{0}", Some(&[Some((0, 1))]))] },
        Case { pattern: "\\012", dfa_exact: true, hays: &[("\u{a}", Some(&[Some((0, 1))]))] },
        Case { pattern: "\\0123", dfa_exact: true, hays: &[("\u{a}3", Some(&[Some((0, 2))]))] },
        Case { pattern: "\\141", dfa_exact: true, hays: &[("a", Some(&[Some((0, 1))]))] },
        Case { pattern: "\\400", dfa_exact: true, hays: &[("\u{100}", Some(&[Some((0, 2))]))] },
        Case { pattern: "\\n\\t\\a\\f\\v\\r", dfa_exact: true, hays: &[("\u{a}\u{9}\u{7}\u{c}\u{b}\u{d}", Some(&[Some((0, 6))]))] },
        Case { pattern: "\\N", dfa_exact: true, hays: &[("N", Some(&[Some((0, 1))]))] },
        Case { pattern: "\\N{", dfa_exact: true, hays: &[("N{", Some(&[Some((0, 2))]))] },
        Case { pattern: "\\p", dfa_exact: true, hays: &[("p", Some(&[Some((0, 1))]))] },
        Case { pattern: "\\P", dfa_exact: true, hays: &[("P", Some(&[Some((0, 1))]))] },
        Case { pattern: "\\pL+", dfa_exact: true, hays: &[("1\u{e9}a2", Some(&[Some((1, 4))]))] },
        Case { pattern: "\\p{L}+", dfa_exact: true, hays: &[("1\u{e9}a2", Some(&[Some((1, 4))]))] },
        Case { pattern: "\\P{L}+", dfa_exact: true, hays: &[("\u{e9}12a", Some(&[Some((2, 4))]))] },
        Case { pattern: "\\p{^L}+", dfa_exact: true, hays: &[("\u{e9}12a", Some(&[Some((2, 4))]))] },
        Case { pattern: "\\p{Greek}", dfa_exact: true, hays: &[("a\u{3b2}", Some(&[Some((1, 3))]))] },
        Case { pattern: "\\p{Script=Greek}", dfa_exact: true, hays: &[("a\u{3b2}", Some(&[Some((1, 3))]))] },
        Case { pattern: "\\g", dfa_exact: true, hays: &[("g", Some(&[Some((0, 1))]))] },
        Case { pattern: "\\g<", dfa_exact: true, hays: &[("g<", Some(&[Some((0, 2))]))] },
        Case { pattern: "\\h+", dfa_exact: true, hays: &[("a \u{9}\u{a0}b", Some(&[Some((1, 5))]))] },
        Case { pattern: "\\\u{e9}", dfa_exact: true, hays: &[("\u{e9}", Some(&[Some((0, 2))]))] },
        Case { pattern: "\\_\\%\\!\\,\\:\\=\\@\\`", dfa_exact: true, hays: &[("_%!,:=@`", Some(&[Some((0, 8))]))] },
        Case { pattern: "\\p{", dfa_exact: true, hays: &[("p{", Some(&[Some((0, 2))]))] },
        Case { pattern: "\\p{L", dfa_exact: true, hays: &[("p{L", Some(&[Some((0, 3))]))] },
        Case { pattern: "(?i)abc", dfa_exact: true, hays: &[("xAbC", Some(&[Some((1, 4))]))] },
        Case { pattern: "a(?i)b", dfa_exact: true, hays: &[("aB", Some(&[Some((0, 2))])), ("AB", None)] },
        Case { pattern: "a(?i)b|c", dfa_exact: true, hays: &[("C", Some(&[Some((0, 1))]))] },
        Case { pattern: "(?:a(?i)b)c", dfa_exact: true, hays: &[("aBC", None), ("aBc", Some(&[Some((0, 3))]))] },
        Case { pattern: "(?i:a)b", dfa_exact: true, hays: &[("Ab", Some(&[Some((0, 2))])), ("AB", None)] },
        Case { pattern: "(?i)(?-i:a)b", dfa_exact: true, hays: &[("AB", None), ("aB", Some(&[Some((0, 2))]))] },
        Case { pattern: "(?x)a b # c\\n c", dfa_exact: true, hays: &[("abc", Some(&[Some((0, 2))]))] },
        Case { pattern: "(?x)a[ b]", dfa_exact: true, hays: &[("a ", Some(&[Some((0, 2))])), ("ab", Some(&[Some((0, 2))]))] },
        Case { pattern: "(?x)a\\ b", dfa_exact: true, hays: &[("a b", Some(&[Some((0, 3))]))] },
        Case { pattern: "(?x)a{1, 2}", dfa_exact: true, hays: &[("aa", Some(&[Some((0, 2))]))] },
        Case { pattern: "(?x)a {2}", dfa_exact: true, hays: &[("aa", Some(&[Some((0, 2))]))] },
        Case { pattern: "a(?x: b c)d", dfa_exact: true, hays: &[("abcd", Some(&[Some((0, 4))]))] },
        Case { pattern: "(?-s:.)", dfa_exact: true, hays: &[("\u{a}a", Some(&[Some((1, 2))]))] },
        Case { pattern: "(?u)\\w", dfa_exact: true, hays: &[("\u{e9}", Some(&[Some((0, 2))]))] },
        Case { pattern: "(?V0)a", dfa_exact: true, hays: &[("a", Some(&[Some((0, 1))]))] },
        Case { pattern: "(?i)[a-z]+", dfa_exact: true, hays: &[("K\u{212a}\u{17f}s", Some(&[Some((0, 7))]))] },
        Case { pattern: "(?i)\\p{Lu}", dfa_exact: true, hays: &[("a", Some(&[Some((0, 1))]))] },
        Case { pattern: "(?i)k", dfa_exact: true, hays: &[("\u{212a}", Some(&[Some((0, 3))]))] },
        Case { pattern: "(?x)a#b", dfa_exact: true, hays: &[("ab", Some(&[Some((0, 1))])), ("a", Some(&[Some((0, 1))]))] },
        Case { pattern: "(?x)[#]", dfa_exact: true, hays: &[("#", Some(&[Some((0, 1))]))] },
        Case { pattern: "(?x)\\#", dfa_exact: true, hays: &[("#", Some(&[Some((0, 1))]))] },
        Case { pattern: "(?x)a{#\\n1}", dfa_exact: true, hays: &[("a", None)] },
        Case { pattern: "(?x)(?#a b)c", dfa_exact: true, hays: &[("c", Some(&[Some((0, 1))]))] },
        Case { pattern: "a b(?x) c d", dfa_exact: true, hays: &[("a bcd", Some(&[Some((0, 5))]))] },
        Case { pattern: "(?s).", dfa_exact: true, hays: &[("\u{a}", Some(&[Some((0, 1))]))] },
        Case { pattern: "(?m:^)b", dfa_exact: true, hays: &[("a\u{a}b", Some(&[Some((2, 3))]))] },
        Case { pattern: "(?i)stra\u{df}e", dfa_exact: true, hays: &[("STRASSE", None), ("strasse", None), ("STRA\u{df}E", Some(&[Some((0, 7))]))] },
        Case { pattern: "(?b)a", dfa_exact: true, hays: &[("a", Some(&[Some((0, 1))]))] },
        Case { pattern: "(?i)[^a]", dfa_exact: true, hays: &[("Ab", Some(&[Some((1, 2))]))] },
        Case { pattern: "(?x:a\\nb)", dfa_exact: true, hays: &[("ab", None)] },
        Case { pattern: "(?ix)A B", dfa_exact: true, hays: &[("ab", Some(&[Some((0, 2))]))] },
        Case { pattern: "(?i)\u{e9}", dfa_exact: true, hays: &[("\u{c9}", Some(&[Some((0, 2))]))] },
        Case { pattern: "(a)(b)?", dfa_exact: true, hays: &[("a", Some(&[Some((0, 1)), Some((0, 1)), None])), ("ab", Some(&[Some((0, 2)), Some((0, 1)), Some((1, 2))]))] },
        Case { pattern: "(?P<x>a)|(?P<y>b)", dfa_exact: true, hays: &[("b", Some(&[Some((0, 1)), None, Some((0, 1))]))] },
        Case { pattern: "(?:)", dfa_exact: true, hays: &[("a", Some(&[Some((0, 0))]))] },
        Case { pattern: "()", dfa_exact: true, hays: &[("a", Some(&[Some((0, 0)), Some((0, 0))]))] },
        Case { pattern: "a||b", dfa_exact: true, hays: &[("b", Some(&[Some((0, 0))]))] },
        Case { pattern: "|", dfa_exact: true, hays: &[("a", Some(&[Some((0, 0))]))] },
        Case { pattern: "(?#comment)a", dfa_exact: true, hays: &[("a", Some(&[Some((0, 1))]))] },
        Case { pattern: "a(?#c)*", dfa_exact: true, hays: &[("aa", Some(&[Some((0, 2))]))] },
        Case { pattern: "(?#c\\)x)y", dfa_exact: true, hays: &[("y", Some(&[Some((0, 1))]))] },
        Case { pattern: "a(?i)*", dfa_exact: true, hays: &[("aa", Some(&[Some((0, 2))]))] },
        Case { pattern: "(?<n>x)", dfa_exact: true, hays: &[("x", Some(&[Some((0, 1)), Some((0, 1))]))] },
        Case { pattern: "(?P<\u{e9}>x)", dfa_exact: true, hays: &[("x", Some(&[Some((0, 1)), Some((0, 1))]))] },
        Case { pattern: "(a|b)*c", dfa_exact: true, hays: &[("abc", Some(&[Some((0, 3)), Some((1, 2))]))] },
        Case { pattern: "(?:a|ab)(?:c|bcd)", dfa_exact: true, hays: &[("abcd", Some(&[Some((0, 4))]))] },
        Case { pattern: "a{2,3}?", dfa_exact: true, hays: &[("aaaa", Some(&[Some((0, 2))]))] },
        Case { pattern: "a??b", dfa_exact: true, hays: &[("ab", Some(&[Some((0, 2))]))] },
        Case { pattern: "a+?", dfa_exact: true, hays: &[("aaa", Some(&[Some((0, 1))]))] },
        Case { pattern: "\\b*a", dfa_exact: true, hays: &[("a", Some(&[Some((0, 1))]))] },
        Case { pattern: "(?=a)*a", dfa_exact: true, hays: &[("a", Some(&[Some((0, 1))]))] },
        Case { pattern: "(?=a)+a", dfa_exact: false, hays: &[("a", Some(&[Some((0, 1))])), ("b", None)] },
        Case { pattern: "^*a", dfa_exact: true, hays: &[("a", Some(&[Some((0, 1))]))] },
        Case { pattern: "(?:)*a", dfa_exact: true, hays: &[("a", Some(&[Some((0, 1))]))] },
        Case { pattern: "()*a", dfa_exact: true, hays: &[("a", Some(&[Some((0, 1)), Some((0, 0))]))] },
        Case { pattern: "(?:a?)+b", dfa_exact: true, hays: &[("aab", Some(&[Some((0, 3))]))] },
        Case { pattern: "(a)\\1", dfa_exact: false, hays: &[("aa", Some(&[Some((0, 2)), Some((0, 1))])), ("ab", None)] },
        Case { pattern: "(?P<n>a)(?P=n)", dfa_exact: false, hays: &[("aa", Some(&[Some((0, 2)), Some((0, 1))]))] },
        Case { pattern: "(?P<n>a)\\g<n>", dfa_exact: false, hays: &[("aa", Some(&[Some((0, 2)), Some((0, 1))]))] },
        Case { pattern: "(a)\\g<1>", dfa_exact: false, hays: &[("aa", Some(&[Some((0, 2)), Some((0, 1))]))] },
        Case { pattern: "(a)(b)\\2\\1", dfa_exact: false, hays: &[("abba", Some(&[Some((0, 4)), Some((0, 1)), Some((1, 2))]))] },
        Case { pattern: "(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)\\10", dfa_exact: false, hays: &[("abcdefghijj", Some(&[Some((0, 11)), Some((0, 1)), Some((1, 2)), Some((2, 3)), Some((3, 4)), Some((4, 5)), Some((5, 6)), Some((6, 7)), Some((7, 8)), Some((8, 9)), Some((9, 10))]))] },
        Case { pattern: "(a)(?P=1)", dfa_exact: false, hays: &[("aa", Some(&[Some((0, 2)), Some((0, 1))]))] },
        Case { pattern: "(a)\\1 0", dfa_exact: false, hays: &[("aa 0", Some(&[Some((0, 4)), Some((0, 1))]))] },
        Case { pattern: "(?:(a)|b)\\1", dfa_exact: false, hays: &[("aa", Some(&[Some((0, 2)), Some((0, 1))])), ("b", None)] },
        Case { pattern: "(a\\g<1>)", dfa_exact: true, hays: &[("ag<1>", Some(&[Some((0, 5)), Some((0, 5))]))] },
        Case { pattern: "(?<=a)b", dfa_exact: false, hays: &[("ab", Some(&[Some((1, 2))])), ("b", None)] },
        Case { pattern: "(?<!a)b", dfa_exact: false, hays: &[("ab", None), ("cb", Some(&[Some((1, 2))]))] },
        Case { pattern: "a(?=b)", dfa_exact: true, hays: &[("ab", Some(&[Some((0, 1))])), ("ac", None)] },
        Case { pattern: "a(?!b)", dfa_exact: true, hays: &[("ab", None), ("ac", Some(&[Some((0, 1))]))] },
        Case { pattern: "(?>a+)b", dfa_exact: false, hays: &[("aab", Some(&[Some((0, 3))]))] },
        Case { pattern: "a++b", dfa_exact: false, hays: &[("aab", Some(&[Some((0, 3))]))] },
        Case { pattern: "a?+a", dfa_exact: false, hays: &[("a", None), ("aa", Some(&[Some((0, 2))]))] },
        Case { pattern: "(?>a|ab)c", dfa_exact: false, hays: &[("abc", None), ("ac", Some(&[Some((0, 2))]))] },
        Case { pattern: "a$|b(?=c)|d", dfa_exact: true, hays: &[("bc", Some(&[Some((0, 1))])), ("bd", Some(&[Some((1, 2))])), ("d", Some(&[Some((0, 1))])), ("a\u{a}", Some(&[Some((0, 1))]))] },
        Case { pattern: "(?!x)", dfa_exact: true, hays: &[("x", Some(&[Some((1, 1))])), ("xa", Some(&[Some((1, 1))]))] },
        Case { pattern: "\\w+(?=\\s*$)", dfa_exact: true, hays: &[("ab cd  \u{a}", Some(&[Some((3, 5))]))] },
        Case { pattern: "(?=(a))", dfa_exact: false, hays: &[("a", Some(&[Some((0, 0)), Some((0, 1))]))] },
        Case { pattern: "x(?=a|$)", dfa_exact: true, hays: &[("xb x", Some(&[Some((3, 4))]))] },
        Case { pattern: "x(?=a$)", dfa_exact: true, hays: &[("xa\u{a}", Some(&[Some((0, 1))]))] },
        Case { pattern: "x(?!a$)", dfa_exact: true, hays: &[("xa\u{a}", None), ("xa\u{a}b", Some(&[Some((0, 1))]))] },
        Case { pattern: "a\\Rb", dfa_exact: false, hays: &[("a\u{d}\u{a}b", Some(&[Some((0, 4))])), ("a\u{a}b", Some(&[Some((0, 3))])), ("a\u{2028}b", Some(&[Some((0, 5))]))] },
        Case { pattern: "\\R\\n", dfa_exact: false, hays: &[("\u{d}\u{a}", None), ("\u{a}\u{a}", Some(&[Some((0, 2))]))] },
        Case { pattern: "a\\Kb", dfa_exact: false, hays: &[("ab", Some(&[Some((1, 2))]))] },
        Case { pattern: "\\m\\w+\\M", dfa_exact: false, hays: &[("h\u{e9}llo w\u{f6}rld", Some(&[Some((0, 6))]))] },
        Case { pattern: "\\bfoo\\b", dfa_exact: true, hays: &[("a foo.", Some(&[Some((2, 5))])), ("afoo", None)] },
        Case { pattern: "\\Bo\\B", dfa_exact: true, hays: &[("foo", Some(&[Some((1, 2))]))] },
        Case { pattern: "\\w+", dfa_exact: true, hays: &[("h\u{e9}llo w\u{f6}rld", Some(&[Some((0, 6))])), ("\u{301}\u{200d}_\u{663}\u{aa}\u{b2}", Some(&[Some((0, 10))]))] },
        Case { pattern: "\\d+", dfa_exact: true, hays: &[("x\u{663}1\u{b2}", Some(&[Some((1, 4))]))] },
        Case { pattern: "\\s+", dfa_exact: true, hays: &[("a\u{a0}\u{2028}\u{1c}b", Some(&[Some((1, 6))])), ("\u{85}", Some(&[Some((0, 2))]))] },
        Case { pattern: ".", dfa_exact: true, hays: &[("\u{1f600}", Some(&[Some((0, 4))]))] },
        Case { pattern: "\\W+", dfa_exact: true, hays: &[("h\u{e9}llo, w\u{f6}rld", Some(&[Some((6, 8))]))] },
        Case { pattern: "\\S+", dfa_exact: true, hays: &[("\u{a0}ab", Some(&[Some((2, 4))]))] },
    ];
    /// Patterns the Python `regex` module rejects at compile time.
    #[rustfmt::skip]
    const PY_ERRORS: &[&str] = &[
        "{1}",
        "a**",
        "x{1}{2}",
        "a{2,1}",
        "*a",
        "\\q",
        "[z-a]",
        "[]",
        "(",
        ")",
        "a)",
        "a{system}",
        "a{d",
        "(?P<1a>x)",
        "\\1",
        "(?P=n)",
        "(?i-i)",
        "(?-)",
        "(?'a'x)",
        "\\x4",
        "\\U00110000",
        "[\\8]",
        "[\\A]",
        "[\\q]",
        "\\",
        "(?P<n>(?P=n))",
        "(a)\\10",
        "(a\\1)",
        "(?",
        "[a",
        "(?P<n",
        "(?P<>a)",
        "(?Z)",
        "a{99999999999}",
        "a*?+",
        "a{2}*",
        "(?#x",
        "\\e",
        "\\c",
        "\\z{2}{3}",
        "(?i",
        "[\\g]",
        "a{1}{2}",
        "\\L<x>",
        "(?P<a-b>x)",
        "(?P<0>x)",
        "(?P=0)",
        "(?-V0)",
        "(?V0V1)",
        "\\x{41}",
        "(?(1)a|b)",
    ];
    /// Patterns the Python `regex` module accepts that we reject in both translations.
    #[rustfmt::skip]
    const WE_REJECT: &[&str] = &[
        "a{e}",
        "a{e<=1}",
        "(?:ab){1<=s<2,i}",
        "(?R)",
        "(?1)(a)",
        "(?&n)(?P<n>a)",
        "(?P>n)(?P<n>a)",
        "(?+1)(a)",
        "(a)?(?(1)a|b)",
        "(*FAIL)",
        "(*SKIP)",
        "(?|(a)|(b))",
        "\\N{LATIN SMALL LETTER A}",
        "\\X",
        "[[:alpha:]]",
        "[[:^digit:]]",
        "(?a)\\w",
        "(?L)a",
        "(?V1)a",
        "(?f)a",
        "(?w)a",
        "(?p)a",
        "(?r)a",
        "(?P<a>x)|(?P<a>y)",
        "(?P<a>x)(?P<a>y)",
        "\\ud800",
    ];
}
