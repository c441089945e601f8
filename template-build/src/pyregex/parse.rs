//! The parser: reads a pattern into the [`Node`] tree following the parsing rules of the Python
//! `regex` module (`_regex_core.py`): a scanner mirroring its `Source` (verbose-mode skipping
//! included), inline flags, the places where it takes `{`, `[` or an escape literally, and the
//! same errors where it raises one, plus the constructs we reject at parse time.

use std::collections::HashMap;

use super::ast::{concat, AssertKind, Capture, Node, Perl, RefTarget, RepeatKind, SetItem, Span};
use super::{ascii, Construct, RegexIssue, RegexIssueKind};

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

use parser_runtime_core::pychar::py_is_space as py_isspace;

/// The character `\N{name}` denotes, as Python's `unicodedata.lookup` reads the name (which
/// the `regex` module uses): a character's name or one of its aliases, in any case, spelled
/// exactly (unicode_names2 alone also accepts loose spellings such as doubled spaces or a
/// missing hyphen, which Python refuses). Named sequences are not single characters: `None`.
fn named_char(name: &str) -> Option<char> {
    let c = unicode_names2::character(name)?;
    let squash = |s: &str| -> String {
        s.chars()
            .filter(|c| *c != ' ' && *c != '-')
            .map(|c| c.to_ascii_uppercase())
            .collect()
    };
    match unicode_names2::name(c).map(|n| n.to_string()) {
        Some(canonical) if canonical == name.to_ascii_uppercase() => Some(c),
        // The canonical name spelled loosely (`NOBREAK SPACE`, `DIGIT  ZERO`).
        Some(canonical) if squash(&canonical) == squash(name) => None,
        // An alias (`BYTE ORDER MARK`, `LF`): accepted when spelled plainly (single spaces,
        // none at either end).
        _ => (!name.starts_with(' ') && !name.ends_with(' ') && !name.contains("  ")).then_some(c),
    }
}

/// Whether regex-syntax knows the Unicode property `\p{name}`.
fn known_property(name: &str) -> bool {
    regex_syntax::Parser::new()
        .parse(&format!("\\p{{{name}}}"))
        .is_ok()
}

/// Python `str.isidentifier()`: `_` or `XID_Start`, then `XID_Continue` (the module's check
/// of a group name). So no name has a superscript digit, which marks the further copies of a
/// name defined more than once in our translations (`parser_runtime_core::groups`).
fn py_isidentifier(s: &str) -> bool {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if c == '_' || unicode_ident::is_xid_start(c) => {}
        _ => return false,
    }
    chars.all(unicode_ident::is_xid_continue)
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

/// A parsed pattern: its tree and its named groups in order of (first) definition, each once.
pub(super) struct Parsed {
    pub(super) root: Node,
    pub(super) names: Vec<String>,
}

/// A group name and its definitions. The Python module merges the groups of one name into
/// one group, with one number.
struct Named {
    name: String,
    /// The group's number.
    number: u32,
    /// How many times the name is defined.
    defined: usize,
    /// How many of those copies are written as capturing groups (see [`Capture::copy`]).
    copies: usize,
    /// Where the first copy written as a capturing group inside a look-around starts (byte
    /// offset).
    in_look: Option<usize>,
}

struct Parser<'p> {
    pattern: &'p str,
    src: Source,
    flags: u32,
    group_count: u32,
    open_groups: Vec<u32>,
    /// Named groups in order of first definition.
    names: Vec<Named>,
    /// How many look-arounds enclose the current position.
    looks: usize,
    depth: usize,
}

/// Parse a pattern as `regex.compile(pattern, regex.DOTALL)` does, with the same errors; quantified
/// zero-width assertions are reduced and backreferences resolved to group numbers.
pub(super) fn parse(pattern: &str) -> Result<Parsed, RegexIssue> {
    let mut p = Parser {
        pattern,
        src: Source::new(pattern),
        // `regex.compile(pattern, regex.DOTALL)` on a str: VERSION0 | UNICODE | DOTALL.
        flags: F_DOTALL | F_VERSION0,
        group_count: 0,
        open_groups: Vec::new(),
        names: Vec::new(),
        looks: 0,
        depth: 0,
    };
    let mut root = p.parse_pattern()?;
    if !p.src.at_end() {
        return Err(p.syntax("unbalanced parenthesis", p.src.pos));
    }
    let numbers: HashMap<String, u32> = p
        .names
        .iter()
        .map(|named| (named.name.clone(), named.number))
        .collect();
    resolve_refs(&mut root, &numbers, p.group_count)?;
    check_merged_names(pattern, &root, &p.names)?;
    simplify(&mut root);
    Ok(Parsed {
        root,
        names: p.names.into_iter().map(|named| named.name).collect(),
    })
}

/// Refuses what the merge of a name defined more than once cannot follow (see
/// `parser_runtime_core::groups`): a copy inside a look-around (the module runs a look-around
/// out of order with the rest of the match, a look-behind even backwards, so the copy that
/// closed last no longer follows from the spans), and a backreference to such a name (its
/// value depends on the copies matched before it). A copy nested inside another copy of its
/// name is never its value and does not count.
fn check_merged_names(pattern: &str, root: &Node, names: &[Named]) -> Result<(), RegexIssue> {
    let look = names
        .iter()
        .filter(|named| named.copies > 1)
        .filter_map(|named| Some((named.in_look?, named)))
        .min_by_key(|(offset, _)| *offset);
    if let Some((offset, named)) = look {
        return Err(RegexIssue::new(
            RegexIssueKind::Unsupported(Construct::DuplicateName),
            format!(
                "group name `{}` is defined more than once with a copy inside a look-around \
                 (the Python regex module merges groups of the same name; a copy inside a \
                 look-around is not supported)",
                named.name
            ),
            Some(offset),
        ));
    }
    let merged = |group: u32| {
        names
            .iter()
            .find(|named| named.number == group && named.defined > 1)
    };
    match first_backref(root, &|group| merged(group).is_some()) {
        Some((span, group)) => Err(RegexIssue::new(
            RegexIssueKind::Unsupported(Construct::DuplicateName),
            format!(
                "backreference `{}` to the group name `{}`, which is defined more than once \
                 (the Python regex module merges groups of the same name; a backreference to \
                 one is not supported)",
                pattern.get(span.0..span.1).unwrap_or(""),
                merged(group).map_or("", |named| named.name.as_str())
            ),
            Some(span.0),
        )),
        None => Ok(()),
    }
}

/// The span and group of the first backreference (in pattern order) to a group for which
/// `wanted` holds.
fn first_backref(node: &Node, wanted: &dyn Fn(u32) -> bool) -> Option<(Span, u32)> {
    match node {
        Node::Backref { group, span, .. } => wanted(*group).then_some((*span, *group)),
        Node::Group { body, .. } | Node::Look { body, .. } | Node::Atomic { body, .. } => {
            first_backref(body, wanted)
        }
        Node::Repeat { child, .. } => first_backref(child, wanted),
        Node::Concat(items) | Node::Alt(items) => {
            items.iter().find_map(|item| first_backref(item, wanted))
        }
        _ => None,
    }
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
                    return Err(RegexIssue::new(
                        RegexIssueKind::Syntax,
                        "invalid group reference",
                        Some(span.0),
                    ))
                }
                RefTarget::Name(name) => match names.get(name.as_str()) {
                    Some(n) => *n,
                    None => {
                        return Err(RegexIssue::new(
                            RegexIssueKind::Syntax,
                            format!("unknown group `{name}`"),
                            Some(span.0),
                        ))
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
    /// An issue of `kind` at char position `pos`.
    fn issue(&self, kind: RegexIssueKind, message: impl Into<String>, pos: usize) -> RegexIssue {
        RegexIssue::new(kind, message, Some(self.src.byte(pos)))
    }

    /// A syntax error (the Python module raises one too) at char position `pos`.
    fn syntax(&self, message: impl Into<String>, pos: usize) -> RegexIssue {
        self.issue(RegexIssueKind::Syntax, message, pos)
    }

    /// A construct the Python module accepts and we do not, at char position `pos`.
    fn unsupported(
        &self,
        construct: Construct,
        message: impl Into<String>,
        pos: usize,
    ) -> RegexIssue {
        self.issue(RegexIssueKind::Unsupported(construct), message, pos)
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

    /// ASCII mode (`(?a)`) is on here.
    fn ascii(&self) -> bool {
        self.flags & F_ASCII != 0
    }

    /// A literal character under the flags in force.
    fn lit(&self, c: char) -> Node {
        if self.ascii() {
            return ascii::lit(c, self.ci());
        }
        Node::Lit { c, ci: self.ci() }
    }

    /// A class escape outside a set (`\d`, `\p{L}`) under the flags in force.
    fn class_item(&self, item: SetItem) -> Node {
        if self.ascii() {
            return ascii::item(item, self.ci());
        }
        Node::Item {
            item,
            ci: self.ci(),
        }
    }

    fn expect(&mut self, s: &str) -> Result<(), RegexIssue> {
        if self.src.matches(s) {
            Ok(())
        } else {
            Err(self.syntax(format!("missing {s}"), self.src.pos))
        }
    }

    /// `a|b|c`
    fn parse_pattern(&mut self) -> Result<Node, RegexIssue> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.issue(
                RegexIssueKind::TooDeep,
                "pattern nests too deeply",
                self.src.pos,
            ));
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
                    Esc::Char(c) => seq.push(Some(self.lit(c))),
                    Esc::Class(item) => seq.push(Some(self.class_item(item))),
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
                            seq.push(Some(self.lit('{')));
                        }
                    }
                }
                c => seq.push(Some(self.lit(c))),
            }
        }
        Ok(concat(seq.into_iter().flatten().collect()))
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
                return Err(self.syntax(message, q_pos));
            }
        };
        if matches!(element, Node::Repeat { .. }) {
            return Err(self.syntax("multiple repeat", q_pos));
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
                u32::try_from(v).map_err(|_| self.syntax("repeat count too big", pos))
            }
            _ => Err(self.syntax("repeat count too big", pos)),
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
                return Err(self.syntax("min repeat greater than max repeat", saved));
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
                    Err(self.unsupported(
                        Construct::Fuzzy,
                        format!(
                            "fuzzy matching constraint `{}` is not supported",
                            self.text(brace_pos, end)
                        ),
                        brace_pos,
                    ))
                } else {
                    Err(self.syntax(
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
            return Err(FuzzyError::Issue(self.syntax("bad fuzzy cost limit", pos)));
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
                self.syntax("more than one cost equation", self.src.pos),
            ));
        }
        let mut terms = String::new();
        loop {
            self.parse_count();
            match self.src.get() {
                Some(c) if "dis".contains(c) => {
                    if terms.contains(c) {
                        return Err(FuzzyError::Issue(
                            self.syntax("repeated fuzzy cost", self.src.pos),
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
                        return Err(self.unsupported(
                            Construct::Conditional,
                            "conditional `(?(` is not supported",
                            open,
                        ));
                    }
                    Some('>') => return self.parse_atomic(open).map(Some),
                    Some('|') => {
                        return Err(self.unsupported(
                            Construct::BranchReset,
                            "branch reset group `(?|` is not supported",
                            open,
                        ));
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
                    return Err(self.unsupported(
                        Construct::Verb,
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
        let issue = self.unsupported(
            Construct::Recursion,
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

    /// A capturing group. A name defined again is the same group (same number) in the Python
    /// module, which merges the copies ([`Capture::copy`]).
    fn parse_capture(&mut self, name: Option<String>, open: usize) -> Result<Node, RegexIssue> {
        let existing = name
            .as_ref()
            .and_then(|name| self.names.iter().position(|named| named.name == *name));
        let (number, copy) = match existing {
            Some(i) => {
                let in_look = (self.looks > 0).then(|| self.src.byte(open));
                let named = &mut self.names[i];
                named.defined += 1;
                // Nested inside a copy of its own name: never the name's value.
                let copy = if self.open_groups.contains(&named.number) {
                    None
                } else {
                    named.copies += 1;
                    named.in_look = named.in_look.or(in_look);
                    Some(named.copies - 1)
                };
                (named.number, copy)
            }
            None => {
                self.group_count += 1;
                if let Some(name) = &name {
                    self.names.push(Named {
                        name: name.clone(),
                        number: self.group_count,
                        defined: 1,
                        copies: 1,
                        in_look: (self.looks > 0).then(|| self.src.byte(open)),
                    });
                }
                (self.group_count, Some(0))
            }
        };
        self.open_groups.push(number);
        let body = if name.is_some() {
            self.expect(">").and_then(|()| self.parse_group_body())
        } else {
            self.parse_group_body()
        };
        self.open_groups.pop();
        Ok(Node::Group {
            capture: Some(Capture { name, number, copy }),
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
        self.looks += 1;
        let body = self.parse_group_body();
        self.looks -= 1;
        let body = body?;
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
                    return Err(self.syntax("cannot refer to an open group", saved));
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
            _ => Err(self.syntax("unknown extension", saved)),
        }
    }

    /// A group name up to `>` or `)`: an identifier, or (if `allow_numeric`) a group number.
    fn parse_name(&mut self, allow_numeric: bool) -> Result<String, RegexIssue> {
        let name = self.src.get_while(|c| c != ')' && c != '>', false);
        if name.is_empty() {
            return Err(self.syntax("missing group name", self.src.pos));
        }
        if name.chars().all(|c| c.is_ascii_digit()) {
            let ok = allow_numeric && name.trim_start_matches('0').len() <= 10 && {
                let value: u64 = name.parse().unwrap_or(0);
                value >= 1
            };
            if !ok {
                return Err(self.syntax("bad character in group name", self.src.pos));
            }
        } else if !py_isidentifier(&name) {
            return Err(self.syntax("bad character in group name", self.src.pos));
        }
        Ok(name)
    }

    fn is_open_group(&self, target: &RefTarget) -> bool {
        let number = match target {
            RefTarget::Number(n) => Some(*n),
            RefTarget::Name(name) => self
                .names
                .iter()
                .find(|named| named.name == *name)
                .map(|named| named.number),
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
                return Err(self.syntax("bad inline flags: no flags after '-'", self.src.pos));
            }
            off
        } else {
            0
        };
        if off & GLOBAL_FLAGS != 0 {
            return Err(self.syntax(
                "bad inline flags: cannot turn off global flag",
                self.src.pos,
            ));
        }
        if on & off != 0 {
            return Err(self.syntax("bad inline flags: flag turned on and off", self.src.pos));
        }
        if ((self.flags | on) & !off & (F_ASCII | F_UNICODE | F_LOCALE)).count_ones() > 1 {
            return Err(self.syntax(
                "ASCII, LOCALE and UNICODE flags are mutually incompatible",
                self.src.pos,
            ));
        }
        let unsupported = [
            (F_LOCALE, "L", "locale-dependent matching `(?L)`"),
            (F_WORD, "w", "Unicode word and line boundaries `(?w)`"),
            (F_FULLCASE, "f", "full case-folding `(?f)`"),
            (F_POSIX, "p", "POSIX leftmost-longest matching `(?p)`"),
            (F_REVERSE, "r", "reverse searching `(?r)`"),
            (F_VERSION1, "V1", "VERSION1 behaviour `(?V1)`"),
        ];
        for (flag, flag_text, what) in unsupported {
            if on & flag != 0 {
                return Err(self.unsupported(
                    Construct::Flag(flag_text),
                    format!("inline flag for {what} is not supported"),
                    open,
                ));
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
        Err(self.syntax("unknown extension", self.src.pos))
    }

    /// After a backslash at char position `start`.
    fn parse_escape(&mut self, in_set: bool, start: usize) -> Result<Esc, RegexIssue> {
        let Some(ch) = self.src.get_raw() else {
            return Err(self.syntax("bad escape (end of pattern)", start));
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
            'L' if !in_set => Err(self.unsupported(
                Construct::NamedList,
                "named list `\\L<...>` is not supported",
                start,
            )),
            'N' => {
                let saved = self.src.pos;
                if self.src.matches("{") {
                    let name = self
                        .src
                        .get_while(|c| c.is_ascii_alphanumeric() || c == ' ' || c == '-', true);
                    if self.src.matches("}") {
                        return match named_char(&name) {
                            Some(c) => Ok(Esc::Char(c)),
                            None => {
                                Err(self
                                    .syntax(format!("undefined character name `{name}`"), start))
                            }
                        };
                    }
                }
                self.src.pos = saved;
                Ok(Esc::Char('N'))
            }
            'p' | 'P' => self.parse_property(ch == 'p', start),
            'R' if !in_set => Ok(Esc::Node(Node::LineBreak {
                span: self.span(start, self.src.pos),
            })),
            'X' if !in_set => Err(self.unsupported(
                Construct::Grapheme,
                "grapheme cluster `\\X` is not supported",
                start,
            )),
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
                        let kind = if self.ascii() { kind.ascii() } else { kind };
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
                    _ => Err(self.syntax(format!("bad escape \\{c}"), start)),
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
                    return Err(self.syntax(
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
            return Err(self.syntax(
                format!("bad hex escape {}", self.text(start, self.src.pos)),
                start,
            ));
        }
        match char::from_u32(value) {
            Some(c) => Ok(Esc::Char(c)),
            None => Err(self.unsupported(
                Construct::LoneSurrogate,
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
                return Err(self.syntax(format!("bad escape \\{first}"), start));
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
            return Err(self.syntax("cannot refer to an open group", self.src.pos));
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
            if !known_property(name) {
                return Err(self.unsupported(
                    Construct::UnicodeProperty,
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
        if self.ascii() {
            return Ok(ascii::set(negated, &items, self.ci()));
        }
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
            return Err(self.syntax("bad character range", self.src.pos));
        }
        Ok(vec![if lo == hi {
            SetItem::Char(lo)
        } else {
            SetItem::Range(lo, hi)
        }])
    }

    /// A POSIX class `[:name:]` (`[:^name:]` when `negated`) that starts at byte `start`. The
    /// module reads the name like a property name (case, spaces, `_` and `-` ignored): its
    /// fourteen POSIX names (alnum, alpha, ascii, blank, cntrl, digit, graph, lower, print,
    /// punct, space, upper, word, xdigit) are the module's own tables (`posix.rs`), any other
    /// name is the Unicode property `\p{name}`. Errors: an unknown name (the module raises
    /// "unknown property").
    fn posix_class(
        &mut self,
        negated: bool,
        name: &str,
        start: usize,
    ) -> Result<SetItem, RegexIssue> {
        let key: String = name
            .chars()
            .filter(|c| !" _-".contains(*c))
            .map(|c| c.to_ascii_lowercase())
            .collect();
        if let Some(ranges) = super::posix::class(&key) {
            return Ok(SetItem::Ranges {
                negated,
                ranges: std::borrow::Cow::Borrowed(ranges),
            });
        }
        let name = name.trim().to_string();
        if name.is_empty() || !known_property(&name) {
            return Err(self.unsupported(
                Construct::Posix,
                format!(
                    "unknown or unsupported POSIX class `{}`",
                    self.text(start, self.src.pos)
                ),
                start,
            ));
        }
        Ok(SetItem::Prop { negated, name })
    }

    fn parse_set_item(&mut self, open: usize) -> Result<SetAtom, RegexIssue> {
        let start = self.src.pos;
        if self.src.matches("\\") {
            return match self.parse_escape(true, start)? {
                Esc::Char(c) => Ok(SetAtom::Char(c)),
                Esc::Class(item) => Ok(SetAtom::Other(item)),
                Esc::Node(_) => Err(self.syntax("bad escape in character set", start)),
            };
        }
        if self.src.matches("[:") {
            let negated = self.src.matches("^");
            let (_, name) = self.parse_property_name();
            if self.src.matches(":]") {
                return self.posix_class(negated, &name, start).map(SetAtom::Other);
            }
            self.src.pos = start;
        }
        match self.src.get() {
            Some(c) => Ok(SetAtom::Char(c)),
            None => Err(self.syntax("unterminated character set", open)),
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
