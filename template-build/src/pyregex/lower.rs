//! Lowering for the DFA engine: what a DFA can and cannot run. Splits a pattern into branches
//! with a trailing look-ahead (or `$`), distributing a trailing group only after a fixed-width
//! prefix; names the constructs a DFA refuses; has regex-syntax validate each translated part.
//! The orchestration is [`super::to_dfa`]; the text is written by the emitter.

use super::ast::{alternatives, concat, look_opener, sequence, AssertKind, Node, RepeatKind, Span};
use super::behind;
use super::{Construct, RegexIssue, RegexIssueKind, MAX_DFA_BRANCHES};

/// The trailing `$` or look-ahead of a branch.
pub(super) enum Tail<'n> {
    Dollar,
    Look {
        negated: bool,
        body: &'n Node,
        span: Span,
    },
}

/// One branch of the split of [`to_dfa`](super::to_dfa): the items of its main part, its
/// trailing `$` or look-ahead, and the slot bytes its leading look-behinds admit (see
/// [`behind`]).
pub(super) struct Split<'n> {
    pub(super) items: Vec<Node>,
    pub(super) tail: Option<Tail<'n>>,
    pub(super) behind: Option<Vec<u8>>,
}

/// Whether an alternative (its items) starts with a look-behind, which makes it a branch of
/// its own (see [`behind`]).
pub(super) fn starts_behind(items: &[Node]) -> bool {
    behind::leading(items) > 0
}

/// Both look-behind conditions (the slot bytes either admits, intersected).
fn both(a: Option<Vec<u8>>, b: Option<Vec<u8>>) -> Option<Vec<u8>> {
    match (a, b) {
        (Some(mut a), Some(b)) => {
            a.retain(|x| b.contains(x));
            Some(a)
        }
        (a, b) => a.or(b),
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

/// Whether an alternative (its items, see [`sequence`]) ends in what
/// [`to_dfa`](super::to_dfa) splits off as a trailing look-ahead: `$`, a look-ahead, or an
/// unquantified group after a fixed-length prefix, one of whose alternatives does.
pub(super) fn splits(items: &[Node]) -> bool {
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

/// Splits the alternatives of `node` into branches (see [`to_dfa`](super::to_dfa)): an
/// alternative that [`splits`] gives one branch per alternative of its trailing group
/// (recursively) or, ending in `$` or a look-ahead itself, one branch with that tail; an
/// alternative starting with a look-behind (`at_start`: at the start of the pattern) is a
/// branch of its own, its look-behinds taken off as the branch's `behind`; consecutive
/// branches without either are joined again as one alternation.
pub(super) fn split_alternatives<'n>(
    pattern: &str,
    node: &'n Node,
    at_start: bool,
) -> Result<Vec<Split<'n>>, RegexIssue> {
    let mut pieces: Vec<Split<'_>> = Vec::new();
    for alt in alternatives(node) {
        let items = sequence(alt);
        let looks = if at_start { behind::leading(items) } else { 0 };
        let behind = match looks {
            0 => None,
            _ => Some(behind::slot_bytes(pattern, &items[..looks])?),
        };
        let items = &items[looks..];
        let Some((last, prefix)) = items.split_last().filter(|_| splits(items)) else {
            pieces.push(Split {
                items: items.to_vec(),
                tail: None,
                behind,
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
                behind,
            }),
            Node::Group { capture, body } => {
                // A look-behind opening the group is at the start of the branch only after an
                // empty prefix; elsewhere it stays in the items and the emitter refuses it.
                for inner in split_alternatives(pattern, body, at_start && prefix.is_empty())? {
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
                        behind: both(behind.clone(), inner.behind),
                    });
                }
            }
            // `$` (the only other ending that `splits`).
            _ => pieces.push(Split {
                items: prefix.to_vec(),
                tail: Some(Tail::Dollar),
                behind,
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
        out.push(Split {
            items,
            tail: None,
            behind: None,
        });
    };
    for piece in pieces {
        if piece.tail.is_none() && piece.behind.is_none() {
            run.push(concat(piece.items));
        } else {
            flush(&mut run, &mut out);
            out.push(piece);
        }
    }
    flush(&mut run, &mut out);
    if out.len() > MAX_DFA_BRANCHES {
        return Err(RegexIssue::new(
            RegexIssueKind::TooManyBranches,
            format!(
                "the pattern splits into more than {MAX_DFA_BRANCHES} branches for the DFA \
                 engine (each alternative ending in `$` or a look-ahead, also inside a \
                 trailing group, is a branch of its own; at most {MAX_DFA_BRANCHES} are \
                 supported)"
            ),
            None,
        ));
    }
    Ok(out)
}

/// In a look-ahead body, replaces each `$` that nothing follows in the body (ending a
/// top-level alternative of the body, or an alternative of an unquantified group that ends
/// one) with `\n?\z`: the body is only tested for a match, so this is exact.
pub(super) fn end_dollars(node: &mut Node) {
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

/// Why the DFA engine cannot run `node` (the node itself, not its children), if it cannot:
/// a look-behind that [`split_alternatives`] did not take off as a branch's start, a look-ahead that [`split_alternatives`] did not take off as a branch's tail,
/// atomic groups, possessive quantifiers, backreferences, `\R`, `\K` and `\G`. The emitter
/// asks this of every node it writes for the DFA engine, before writing it.
pub(super) fn dfa_refusal(pattern: &str, node: &Node) -> Option<RegexIssue> {
    let text = |span: &Span| pattern.get(span.0..span.1).unwrap_or("");
    let (construct, what, span) = match node {
        Node::Look {
            behind: false,
            negated,
            span,
            ..
        } => {
            return Some(RegexIssue::new(
                RegexIssueKind::LookAheadNotAtEnd,
                format!(
                    "look-ahead `{}` not at the end of a branch (only a look-ahead ending a \
                     top-level alternative is supported, or one ending an alternative of an \
                     unquantified group that ends a branch after a fixed-length prefix)",
                    look_opener(false, *negated)
                ),
                Some(span.0),
            ))
        }
        Node::Look {
            behind: true,
            negated,
            span,
            ..
        } => {
            return Some(RegexIssue::new(
                RegexIssueKind::Unsupported(Construct::LookBehind),
                format!(
                    "look-behind `{}` is supported by the DFA engine only at the start of a \
                     top-level alternative, where it reads the character before the match",
                    look_opener(true, *negated)
                ),
                Some(span.0),
            ))
        }
        Node::Atomic { span, .. } => (
            Construct::AtomicGroup,
            "atomic group `(?>`".to_string(),
            span,
        ),
        Node::Repeat {
            kind: RepeatKind::Possessive,
            span,
            ..
        } => (
            Construct::Possessive,
            format!("possessive quantifier `{}`", text(span)),
            span,
        ),
        Node::Backref { span, .. } => (
            Construct::Backreference,
            format!("backreference `{}`", text(span)),
            span,
        ),
        Node::LineBreak { span } => (
            Construct::LineBreak,
            "line-break escape `\\R` (an atomic group)".to_string(),
            span,
        ),
        Node::Keep { span } => (Construct::Keep, "match-start reset `\\K`".to_string(), span),
        Node::SearchAnchor { span } => (
            Construct::SearchAnchor,
            "search anchor `\\G`".to_string(),
            span,
        ),
        _ => return None,
    };
    Some(RegexIssue::new(
        RegexIssueKind::Unsupported(construct),
        format!("{what} is not supported by the DFA engine"),
        Some(span.0),
    ))
}

/// Whether regex-syntax (Unicode on, as the DFA builder runs it) accepts a translated pattern;
/// if not, its verdict.
pub(super) fn validate_dfa(translated: &str) -> Result<(), RegexIssue> {
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
            Err(RegexIssue::new(
                RegexIssueKind::RejectedByRegexSyntax,
                format!("regex-syntax rejects the translated pattern `{translated}`: {kind}"),
                None,
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::pyregex::{
        to_dfa, to_fancy, DfaBranch, RegexIssue, RegexIssueKind, MAX_DFA_BRANCHES,
    };

    fn branch(main: &str, lookahead: Option<(bool, &str)>) -> DfaBranch {
        DfaBranch {
            main: main.to_string(),
            lookahead: lookahead.map(|(n, b)| (n, b.to_string())),
            behind: None,
        }
    }

    fn issue(r: Result<impl std::fmt::Debug, RegexIssue>) -> RegexIssue {
        r.expect_err("expected a RegexIssue")
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
        assert_eq!(issue(to_dfa(&many)).kind, RegexIssueKind::TooManyBranches);
        let nested = format!(
            "(?:{}|$)",
            vec!["a(?:b$|c$)"; MAX_DFA_BRANCHES / 2].join("|")
        );
        assert_eq!(issue(to_dfa(&nested)).kind, RegexIssueKind::TooManyBranches);
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
        assert_eq!(
            (e.kind, e.offset),
            (RegexIssueKind::LookAheadNotAtEnd, Some(8))
        );
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
        // A Unicode `\b` is translated as is (regex-automata's own DFA refuses it; the
        // compiler's word-boundary DFAs take it, see `crate::word`).
        let dp = to_dfa(r"\bfoo\b").unwrap();
        assert_eq!(dp.branches, vec![branch(r"\bfoo\b", None)]);
        assert!(dense::DFA::new(&dp.branches[0].main).is_err());
        assert!(crate::compile::dfa_table(&dp.branches[0].main).is_ok());
    }
}
