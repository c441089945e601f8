//! Template errors: every problem of a response template, each with the JSON path of the key
//! that causes it.
//!
//! The loader ([`crate::model::load`]) collects **all** problems of a template instead of
//! stopping at the first one (the reference, transformers' `load_response_template`, raises on
//! the first), so a template author sees everything to fix in one run. Each problem has a
//! [`TemplateErrorKind`] saying which check failed: programs (and tests) match on the kind,
//! people read the reason.

use std::fmt;

use crate::pyregex::RegexIssueKind;

/// One problem of a template.
///
/// `path` is the JSON path of the offending key: object keys joined with dots, list items as
/// `[index]`, keys that are not plain words (alphanumerics, `_`, `-`) quoted as JSON strings in
/// brackets. Examples:
/// `fields.tool_calls.open_pattern`, `fields.content.content_args.tag_pattern`,
/// `start_anchor[2]`, `fields["a.b"].open`, or `""` for the template itself (the root).
///
/// `kind` says which check failed, for programs; `reason` is a sentence in English saying what
/// is wrong, for people (its words are ours, not the reference's, and may change; match on the
/// kind instead). `file` is `None` unless a file loader set it ([`TemplateErrors::with_file`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    /// The JSON path of the offending key (`""` for the root).
    pub path: String,
    /// Which check failed.
    pub kind: TemplateErrorKind,
    /// What is wrong.
    pub reason: String,
    /// The file the template came from, set by file loaders.
    pub file: Option<String>,
    /// 1-based line and column (in chars) of the offending key in the file, set by file
    /// loaders ([`crate::load_file`]); for invalid JSON, where the JSON parser stopped.
    pub line_col: Option<(usize, usize)>,
}

impl TemplateError {
    /// A problem of `kind` at `path` (no file).
    pub fn new(
        path: impl Into<String>,
        kind: TemplateErrorKind,
        reason: impl Into<String>,
    ) -> Self {
        Self {
            path: path.into(),
            kind,
            reason: reason.into(),
            file: None,
            line_col: None,
        }
    }
}

/// Which check a [`TemplateError`] comes from: one variant per distinct problem the loader
/// ([`crate::model::load`]), the compiler ([`crate::compile()`]) and the file front ends
/// ([`crate::load_file`], [`crate::Builder`]) report. The JSON path of the error says which
/// key; each variant's documentation says which keys it can concern.
///
/// Where the code names the reference check (transformers 5.24.0,
/// `chat_parsing/response_templates.py` and `content_parsers.py`), the variant does too; the
/// others are checks the reference does not make at load time (see [`crate::model`] for where
/// we are stricter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TemplateErrorKind {
    // --- Reading a template file ---
    /// The template file cannot be read ([`crate::load_file`]); path `""`.
    Io,
    /// The text is not JSON; path `""`, with the line and column where parsing stopped (in
    /// [`TemplateError::line_col`] from the file loaders, in the reason from
    /// [`crate::model::load_str`]).
    InvalidJson,
    /// A `tokenizer_config.json` without a `response_template` key; path `""`.
    NoResponseTemplate,

    // --- The template's shape (reference: `_validate_template_shape`) ---
    /// The template is not a JSON object; path `""`.
    NotAnObject,
    /// `version` is not 1 (the reference compares with Python's `!=`, so `1.0` and `true`
    /// are 1).
    UnsupportedVersion,
    /// A key the template does not take (reference: `_validate_template_shape`), or a key a
    /// field does not take (reference: `_build_field`, `_ALLOWED_FIELD_KEYS`); the path is the
    /// key.
    UnknownKey,
    /// A value of the wrong JSON type: `defaults`, `fields` or a field that is not an object;
    /// `open` / `close` / `start_anchor` that is not a string or a list of strings, or a list
    /// item that is not a string; `*_pattern` or `tag_pattern` that is not a string; `join` not
    /// a string; `content` (or a `value_parser`'s `name`) not a string; `content_args`, a
    /// `value_parser` or its `args` not an object; `string_delims` not a list, or a delimiter
    /// in it not a string; `line_sep` / `kv_sep` not a string; a boolean key (`repeats`,
    /// `optional`, `transform_each`, `strip`, `unquoted_keys`, `allow_non_json`,
    /// `merge_duplicates`) that is not `true` or `false`. Where the reference reads a value
    /// with Python truthiness or at parse time only, this is stricter (see [`crate::model`]).
    WrongType,
    /// The template has no `fields`; path `fields`.
    MissingFields,
    /// `fields` is an empty object.
    EmptyFields,
    /// More than one field omits `open` / `open_pattern` (at most one field is implicit);
    /// path `fields`.
    MultipleImplicitFields,
    /// The template has neither `start_anchor` nor `start_anchor_pattern`; path `""`.
    MissingStartAnchor,

    // --- Delimiters: `open`, `close`, `start_anchor` and their `*_pattern` (reference:
    // `_compile_anchor`) ---
    /// Both the literal key and the pattern key of one delimiter (`open` and `open_pattern`,
    /// ...); the path is the pattern key.
    BothLiteralAndPattern,
    /// A literal delimiter (or an item of a list of literals) is the empty string.
    EmptyLiteral,
    /// A list of literal delimiters is empty.
    EmptyLiteralList,
    /// A pattern (`open_pattern`, `close_pattern`, `start_anchor_pattern`, `tag_pattern`) is
    /// invalid or unsupported: the kind of the [`crate::pyregex::RegexIssue`]; also a literal
    /// `start_anchor` that fancy-regex refuses to compile
    /// ([`RegexIssueKind::RejectedByFancyRegex`]).
    Regex(RegexIssueKind),
    /// A delimiter's DFA (`open`, `close`, `open_pattern`, `close_pattern`) exceeds a size
    /// limit ([`crate::compile::DFA_SIZE_LIMIT`]) or a hard limit of the DFA builder.
    DfaTooLarge,
    /// A delimiter key (a pattern, a literal, or the literals of a list together),
    /// `start_anchor_pattern` or `tag_pattern` is longer than
    /// [`crate::model::MAX_PATTERN_BYTES`]; refused before anything is compiled (a 1 MB literal
    /// used to take seconds and hundreds of MB to fail on the DFA size limit).
    PatternTooLong,
    /// The template's delimiters together pass the compile budget
    /// ([`crate::compile::TEMPLATE_DFA_BUDGET`], the memory of all their DFAs and capture
    /// regexes); the path is the delimiter that crossed it. Compiling stops there, so a
    /// template of thousands of fields fails in bounded time and memory.
    CompileBudget,
    /// The DFA builder cannot compile a delimiter pattern for another reason than a size limit
    /// (not expected: every translation is checked by regex-syntax first, and the Python
    /// translation never writes what the word-boundary compiler refuses, see
    /// [`crate::word::build`]).
    DfaUnsupported,
    /// The regex that resolves the named groups of a delimiter pattern (a regex-automata meta
    /// regex, built with the same size limit as the DFA) cannot be built.
    CaptureRegexBuild,

    // --- Fields (reference: `_build_field`) ---
    /// `join` on a field without `"repeats": true`.
    JoinWithoutRepeats,
    /// `transform_each` on a field without `transform`.
    TransformEachWithoutTransform,
    /// A string of `transform` mixes a `{placeholder}` with other text (reference:
    /// `validate_transform_strings`); the path is the string's.
    TransformMixesPlaceholder,
    /// `open_pattern` / `close_pattern` declares named groups but the field has no
    /// `transform` (reference: `_build_field`).
    NamedGroupsWithoutTransform,

    // --- Content parsers: `content`, `content_args` (reference: `content_parsers.py`) ---
    /// `content` (or a `value_parser`'s `name`) names no content parser (reference:
    /// `CONTENT_PARSERS`).
    UnknownContentParser,
    /// An item of `string_delims` (`json`) is not a list of two strings `[open, close]`.
    StringDelimiterNotPair,
    /// A string delimiter of `string_delims` (`json`) is empty.
    EmptyStringDelimiter,
    /// `line_sep` or `kv_sep` (`kv-lines`) is empty.
    EmptySeparator,
    /// `tag_pattern` (`xml-inline`) has no named group `key`.
    TagPatternWithoutKey,
    /// A content argument of `json-call-list` (this project's parser) has a value it does not
    /// take: `brackets` other than `required`/`optional`/`none`, a `separator` with whitespace
    /// at an end, `arguments_keys` that is not a non-empty list of non-empty strings.
    InvalidCallListArgument,
    /// `value_parser` objects nest more than [`crate::model::MAX_VALUE_PARSER_DEPTH`] deep.
    ValueParserTooDeep,

    // --- Build scripts ---
    /// Two template files give one item name ([`crate::Builder`]); path `""`.
    DuplicateItemName,

    /// A check failed without reporting why: a bug of this crate, never expected; path `""`.
    Internal,
}

impl TemplateErrorKind {
    /// Whether a pattern is invalid or unsupported ([`TemplateErrorKind::Regex`]).
    pub fn is_regex(self) -> bool {
        matches!(self, Self::Regex(_))
    }

    /// The kind of the pattern's problem, for [`TemplateErrorKind::Regex`].
    pub fn regex_issue(self) -> Option<RegexIssueKind> {
        match self {
            Self::Regex(kind) => Some(kind),
            _ => None,
        }
    }

    /// Whether a valid delimiter cannot be compiled ([`TemplateErrorKind::DfaTooLarge`],
    /// [`TemplateErrorKind::DfaUnsupported`], [`TemplateErrorKind::CaptureRegexBuild`]).
    pub fn is_dfa(self) -> bool {
        matches!(
            self,
            Self::DfaTooLarge | Self::DfaUnsupported | Self::CaptureRegexBuild
        )
    }
}

/// A problem not yet placed at a JSON path: the kind and the reason a [`TemplateError`] will
/// carry ([`Problem::at`]). Returned by the parts of the compiler that do not know where in the
/// template their input came from ([`crate::compile::dfa_table`],
/// [`crate::compile::compile_delimiter`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Which check failed.
    pub kind: TemplateErrorKind,
    /// What is wrong.
    pub reason: String,
}

impl Problem {
    /// A problem of `kind`.
    pub fn new(kind: TemplateErrorKind, reason: impl Into<String>) -> Self {
        Self {
            kind,
            reason: reason.into(),
        }
    }

    /// The same problem with its reason rewritten by `f`.
    #[must_use]
    pub fn map_reason(self, f: impl FnOnce(String) -> String) -> Self {
        Self {
            kind: self.kind,
            reason: f(self.reason),
        }
    }

    /// The problem as an error at `path`.
    pub fn at(self, path: impl Into<String>) -> TemplateError {
        TemplateError::new(path, self.kind, self.reason)
    }
}

impl fmt::Display for Problem {
    /// The reason.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for Problem {}

impl fmt::Display for TemplateError {
    /// `{file}:{line}:{column}: {path}: {reason}`, leaving out the file, the position and the
    /// path when they are not known. The kind is not printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = self.file.as_deref().filter(|file| !file.is_empty()) {
            match self.line_col {
                Some((line, col)) => write!(f, "{file}:{line}:{col}: ")?,
                None => write!(f, "{file}: ")?,
            }
        }
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        f.write_str(&self.reason)
    }
}

impl std::error::Error for TemplateError {}

/// All problems of a template, in the order they were found (never empty when returned by this
/// crate).
///
/// `Display` prints one problem per line (see [`TemplateError`]'s `Display`), without a trailing
/// newline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateErrors(pub Vec<TemplateError>);

impl TemplateErrors {
    /// Sets `file` on every error (replacing any file set before).
    #[must_use]
    pub fn with_file(mut self, file: &str) -> Self {
        for error in &mut self.0 {
            error.file = Some(file.to_owned());
        }
        self
    }

    /// The errors, in the order they were found.
    pub fn iter(&self) -> std::slice::Iter<'_, TemplateError> {
        self.0.iter()
    }

    /// The number of errors.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there is no error (never true for a value this crate returns).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<TemplateError> for TemplateErrors {
    fn from(error: TemplateError) -> Self {
        Self(vec![error])
    }
}

impl IntoIterator for TemplateErrors {
    type Item = TemplateError;
    type IntoIter = std::vec::IntoIter<TemplateError>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a TemplateErrors {
    type Item = &'a TemplateError;
    type IntoIter = std::slice::Iter<'a, TemplateError>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl fmt::Display for TemplateErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

impl std::error::Error for TemplateErrors {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_omits_empty_parts() {
        let root = TemplateError::new("", TemplateErrorKind::NotAnObject, "must be a JSON object");
        assert_eq!(root.to_string(), "must be a JSON object");
        let at = TemplateError::new(
            "fields.x.open",
            TemplateErrorKind::EmptyLiteral,
            "must not be empty",
        );
        assert_eq!(at.to_string(), "fields.x.open: must not be empty");
        let errors = TemplateErrors(vec![root, at]).with_file("t.json");
        assert_eq!(
            errors.to_string(),
            "t.json: must be a JSON object\nt.json: fields.x.open: must not be empty"
        );
        assert_eq!(errors.len(), 2);
    }
}
