//! The emitter: writes the [`Node`] tree as regex-syntax text (for the DFA engine) or
//! fancy-regex text, every construct spelled explicitly (`.` as `(?s:.)`, `^` as `\A`,
//! case-insensitive pieces in `(?i:..)`, meta characters escaped), so the result does not
//! depend on the flags it is compiled with. What a DFA refuses is decided by the lowering.

use std::collections::HashMap;
use std::fmt::Write as _;

use parser_runtime_core::groups;

use super::ast::{look_opener, AssertKind, Capture, Node, Perl, RepeatKind, SetItem, Span};
use super::lower::dfa_refusal;
use super::{Construct, RegexIssue, RegexIssueKind};

/// Which engine a translation is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Target {
    /// regex-automata DFAs (regex-syntax syntax); see [`dfa_refusal`] for what they refuse.
    Dfa,
    /// `fancy_regex` (look-around, backreferences, atomic groups).
    Fancy,
}

/// What a case-insensitive `c` matches in the `regex` module when that differs from simple
/// case folding: the Turkic pairs, which the module adds and does not chain (`(?i)i` matches
/// `i`, `I`, `İ`; `(?i)I` matches `i`, `I`, `ı`; `(?i)İ` matches `i`, `İ`; `(?i)ı` matches
/// `I`, `ı`), written as a class that is not folded again.
fn turkic_class(c: char) -> Option<&'static str> {
    match c {
        'i' => Some("(?-i:[iI\u{130}])"),
        'I' => Some("(?-i:[iI\u{131}])"),
        '\u{130}' => Some("(?-i:[i\u{130}])"),
        '\u{131}' => Some("(?-i:[I\u{131}])"),
        _ => None,
    }
}

/// A case-insensitive literal (outside a set), written inside a `(?i:..)`.
fn push_folded(out: &mut String, c: char) {
    match turkic_class(c) {
        Some(class) => out.push_str(class),
        None => push_literal(out, c),
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

/// `node` written for `target`: regex-syntax / fancy-regex text, or the first construct (in
/// pattern order) that `target` cannot run.
pub(super) fn emit(pattern: &str, node: &Node, target: Target) -> Result<String, RegexIssue> {
    let mut emitter = Emitter::new(pattern, target);
    emitter.emit(node)?;
    Ok(emitter.out)
}

/// A sequence of items written for `target`, as their concatenation would be.
pub(super) fn emit_concat(
    pattern: &str,
    items: &[Node],
    target: Target,
) -> Result<String, RegexIssue> {
    let mut emitter = Emitter::new(pattern, target);
    emitter.emit_concat(items)?;
    Ok(emitter.out)
}

/// Writes a tree as text for one target; `pattern` is the original, quoted in errors.
struct Emitter<'p> {
    pattern: &'p str,
    target: Target,
    out: String,
    /// Capturing groups written so far.
    groups: usize,
    /// Our number of each Python group number written so far (its first copy).
    numbers: HashMap<u32, usize>,
}

impl<'p> Emitter<'p> {
    fn new(pattern: &'p str, target: Target) -> Self {
        Emitter {
            pattern,
            target,
            out: String::new(),
            groups: 0,
            numbers: HashMap::new(),
        }
    }

    fn text(&self, span: Span) -> &'p str {
        self.pattern.get(span.0..span.1).unwrap_or("")
    }

    fn emit_concat(&mut self, items: &[Node]) -> Result<(), RegexIssue> {
        let mut i = 0;
        while i < items.len() {
            // Merge a run of case-insensitive literals into one `(?i:...)`.
            if let Node::Lit { c, ci: true } = items[i] {
                if has_case(c) {
                    self.out.push_str("(?i:");
                    while let Some(Node::Lit { c, ci: true }) = items.get(i) {
                        push_folded(&mut self.out, *c);
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
            SetItem::Ranges { negated, ranges } => {
                // A nested class (a union inside the enclosing one), in both dialects.
                self.out.push_str(if *negated { "[^" } else { "[" });
                for &(lo, hi) in ranges.iter() {
                    push_code_point(&mut self.out, lo);
                    if hi != lo {
                        self.out.push('-');
                        push_code_point(&mut self.out, hi);
                    }
                }
                self.out.push(']');
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
        if self.target == Target::Dfa {
            if let Some(issue) = dfa_refusal(self.pattern, node) {
                return Err(issue);
            }
        }
        match node {
            Node::Empty => {}
            Node::Lit { c, ci } => {
                if *ci && has_case(*c) {
                    self.out.push_str("(?i:");
                    push_folded(&mut self.out, *c);
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
                    // fancy-regex has no `(?-u:..)`: spelled with look-around over ASCII \w.
                    (AssertKind::AsciiWordBoundary, Target::Dfa) => "(?-u:\\b)",
                    (AssertKind::AsciiNotWordBoundary, Target::Dfa) => "(?-u:\\B)",
                    (AssertKind::AsciiWordStart, Target::Dfa) => "(?-u:\\b{start})",
                    (AssertKind::AsciiWordEnd, Target::Dfa) => "(?-u:\\b{end})",
                    (AssertKind::AsciiWordBoundary, Target::Fancy) => {
                        "(?:(?<=[0-9A-Za-z_])(?![0-9A-Za-z_])|(?<![0-9A-Za-z_])(?=[0-9A-Za-z_]))"
                    }
                    (AssertKind::AsciiNotWordBoundary, Target::Fancy) => {
                        "(?:(?<=[0-9A-Za-z_])(?=[0-9A-Za-z_])|(?<![0-9A-Za-z_])(?![0-9A-Za-z_]))"
                    }
                    (AssertKind::AsciiWordStart, Target::Fancy) => {
                        "(?:(?<![0-9A-Za-z_])(?=[0-9A-Za-z_]))"
                    }
                    (AssertKind::AsciiWordEnd, Target::Fancy) => {
                        "(?:(?<=[0-9A-Za-z_])(?![0-9A-Za-z_]))"
                    }
                };
                self.out.push_str(s);
            }
            Node::Group { capture, body } => {
                match capture {
                    None | Some(Capture { copy: None, .. }) => self.out.push_str("(?:"),
                    Some(Capture {
                        name,
                        number,
                        copy: Some(copy),
                    }) => {
                        self.groups += 1;
                        if *copy == 0 {
                            self.numbers.insert(*number, self.groups);
                        }
                        match name {
                            None => self.out.push('('),
                            Some(name) => {
                                self.out.push_str("(?P<");
                                self.out.push_str(&groups::copy_name(name, *copy));
                                self.out.push('>');
                            }
                        }
                    }
                }
                self.emit(body)?;
                self.out.push(')');
            }
            Node::Look {
                behind,
                negated,
                body,
                ..
            } => {
                self.out.push_str(look_opener(*behind, *negated));
                self.emit(body)?;
                self.out.push(')');
            }
            Node::Atomic { body, .. } => {
                self.out.push_str("(?>");
                self.emit(body)?;
                self.out.push(')');
            }
            Node::Repeat {
                child,
                min,
                max,
                kind,
                ..
            } => {
                if writes_nothing(child) {
                    // A repeat of nothing (a nested copy of a name around nothing, written as
                    // a plain group) matches the empty string: fancy-regex refuses it.
                    return self.emit(child);
                }
                let possessive = *kind == RepeatKind::Possessive;
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
                if *ci {
                    return Err(RegexIssue::new(
                        RegexIssueKind::Unsupported(Construct::CaseInsensitiveBackreference),
                        format!(
                            "case-insensitive backreference `{}` is not supported",
                            self.text(*span)
                        ),
                        Some(span.0),
                    ));
                }
                if group > opened_before {
                    return Err(RegexIssue::new(
                        RegexIssueKind::Unsupported(Construct::ForwardBackreference),
                        format!(
                            "forward backreference `{}` (to a group defined after it) is not \
                             supported",
                            self.text(*span)
                        ),
                        Some(span.0),
                    ));
                }
                // Our number of the group: copies of names defined more than once, and the
                // nested ones left out, shift the numbers of the groups after them.
                let number = self.numbers.get(group).copied().unwrap_or(*group as usize);
                let _ = write!(self.out, "\\k<{number}>");
            }
            Node::LineBreak { .. } => {
                self.out
                    .push_str("(?>\\r\\n|[\\n\\x{B}\\x{C}\\r\\x{85}\\x{2028}\\x{2029}])");
            }
            Node::Keep { .. } => self.out.push_str("\\K"),
            Node::SearchAnchor { .. } => self.out.push_str("\\G"),
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

/// Whether `node` is written as nothing but empty groups: it matches the empty string only,
/// and captures nothing (a copy nested inside a copy of its name is written as a plain group).
fn writes_nothing(node: &Node) -> bool {
    match node {
        Node::Group {
            capture: None | Some(Capture { copy: None, .. }),
            body,
        } => writes_nothing(body),
        Node::Concat(items) | Node::Alt(items) => items.iter().all(writes_nothing),
        other => other.is_empty(),
    }
}

/// `c` as `\x{HEX}`, which both dialects read in and out of classes.
fn push_code_point(out: &mut String, c: char) {
    use std::fmt::Write;
    let _ = write!(out, "\\x{{{:X}}}", u32::from(c));
}

#[cfg(test)]
mod tests {
    use crate::pyregex::to_fancy;

    #[test]
    fn flags_and_verbose_mode() {
        assert_eq!(to_fancy("(?i)ab1").unwrap(), "(?i:ab1)");
        assert_eq!(to_fancy("a(?i)b[c]").unwrap(), "a(?i:b)(?i:[c])");
        assert_eq!(to_fancy("(?x) a b # comment\n c").unwrap(), "abc");
        assert_eq!(to_fancy("(?x)[ a]\\ ").unwrap(), "[ a] ");
        assert_eq!(to_fancy("(?-s:.).").unwrap(), r"(?:[^\n])(?s:.)");
        assert_eq!(to_fancy("(?m)^a$").unwrap(), "(?m:^)a(?m:$)");
    }
}
