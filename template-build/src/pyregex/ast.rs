//! The syntax tree of a parsed Python `regex` pattern ([`Node`] and its parts). Flags are
//! already resolved into the nodes (`ci`, `Dot { all }`, the kind of `^` and `$`), so the tree
//! reads the same wherever it is cut. Also the small queries on it that the parser and the DFA
//! lowering share.

/// Byte span `(start, end)` in the original pattern.
pub(super) type Span = (usize, usize);

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Node {
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
pub(super) struct Capture {
    pub(super) name: Option<String>,
    /// Python's group number (one for all copies of a name).
    pub(super) number: u32,
    /// How the group is written: `Some(k)`, a capturing group, a named one under the name of
    /// its copy `k` (`parser_runtime_core::groups::copy_name`: the name itself for 0, the first
    /// definition; copies of a name defined more than once follow, the Python module merging
    /// them into one group); `None`, a copy nested inside a copy of its own name, which closes
    /// before the copy around it and so is never the name's value: a non-capturing group.
    pub(super) copy: Option<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum RefTarget {
    Number(u32),
    Name(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RepeatKind {
    Greedy,
    Lazy,
    Possessive,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AssertKind {
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
    /// `\b` in ASCII mode (`(?a)`): ASCII word characters only.
    AsciiWordBoundary,
    /// `\B` in ASCII mode.
    AsciiNotWordBoundary,
    /// `\m` in ASCII mode.
    AsciiWordStart,
    /// `\M` in ASCII mode.
    AsciiWordEnd,
}

impl AssertKind {
    /// The kind in ASCII mode (`(?a)`): word boundaries over ASCII word characters.
    pub(super) fn ascii(self) -> Self {
        match self {
            Self::WordBoundary => Self::AsciiWordBoundary,
            Self::NotWordBoundary => Self::AsciiNotWordBoundary,
            Self::WordStart => Self::AsciiWordStart,
            Self::WordEnd => Self::AsciiWordEnd,
            other => other,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum SetItem {
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
    /// A POSIX class (`[:alpha:]` in a set) as the module's own code-point ranges (sorted,
    /// inclusive), or their complement when `negated` (`[:^alpha:]`).
    Ranges {
        negated: bool,
        ranges: std::borrow::Cow<'static, [(char, char)]>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Perl {
    Digit,
    Word,
    Space,
}

impl Node {
    /// Python's `is_empty`: matches the empty string only, unconditionally, and captures
    /// nothing (a capturing group is never empty: `(?P<a>)*?` leaves `a` out).
    pub(super) fn is_empty(&self) -> bool {
        match self {
            Node::Empty => true,
            Node::Concat(items) | Node::Alt(items) => items.iter().all(Node::is_empty),
            Node::Group {
                capture: None,
                body,
            }
            | Node::Atomic { body, .. } => body.is_empty(),
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
    pub(super) fn is_zero_width(&self) -> bool {
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

/// Appends the names of the named groups in `node` that `out` does not hold yet, in order.
pub(super) fn collect_names(node: &Node, out: &mut Vec<String>) {
    match node {
        Node::Group { capture, body } => {
            if let Some(Capture {
                name: Some(name), ..
            }) = capture
            {
                if !out.contains(name) {
                    out.push(name.clone());
                }
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

/// The alternatives of a group body (or of the whole pattern).
pub(super) fn alternatives(node: &Node) -> &[Node] {
    match node {
        Node::Alt(branches) => branches,
        other => std::slice::from_ref(other),
    }
}

/// The items of an alternative, without the `Node::Empty` items at its end (left there by a
/// reduced quantifier such as `(?=a)?`), which match the empty string unconditionally.
pub(super) fn sequence(node: &Node) -> &[Node] {
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
pub(super) fn concat(mut items: Vec<Node>) -> Node {
    match items.len() {
        0 => Node::Empty,
        1 => items.pop().unwrap_or(Node::Empty),
        _ => Node::Concat(items),
    }
}

/// How a look-around opens: `(?=`, `(?!`, `(?<=` or `(?<!` (Python and fancy-regex spell them
/// alike).
pub(super) fn look_opener(behind: bool, negated: bool) -> &'static str {
    match (behind, negated) {
        (false, false) => "(?=",
        (false, true) => "(?!",
        (true, false) => "(?<=",
        (true, true) => "(?<!",
    }
}
