//! The template model: a response template (JSON, version 1) validated into plain Rust data,
//! with every load-time check of the reference and a few more.
//!
//! Reference: transformers 5.24.0, `transformers/utils/chat_parsing/response_templates.py`
//! (`_validate_template_shape`, `_build_field`, `_compile_anchor`, `load_response_template`) and
//! `content_parsers.py` (`validate_transform_strings`, the content parsers' arguments); the
//! `python-call-list` parser is from transformers 5.24.0.
//!
//! [`load`] reports **all** problems of a template at once, each as a [`TemplateError`] with the
//! JSON path of the offending key and the kind of the check that failed
//! ([`crate::error::TemplateErrorKind`]); the reference raises on the first one. Every template the
//! reference rejects at load time is rejected here. We are stricter than the reference in these
//! places, always for template mistakes the reference would only notice (or silently misread)
//! while parsing some output:
//!
//! - **Booleans are booleans.** The reference reads `repeats`, `optional`, and the content
//!   arguments `strip`, `unquoted_keys`, `allow_non_json` and `merge_duplicates` with Python
//!   truthiness when parsing, so `"optional": "false"` makes a field *required* and
//!   `"strip": null` turns stripping *off*. Here any of them that is present must be `true` or
//!   `false` (`null` included: it is an error). `transform_each` must be a bool in the
//!   reference too.
//! - **Content arguments are type-checked at load time.** `content_args` (and a `value_parser`'s
//!   `args`) must be an object; `string_delims` a list of `[open, close]` pairs of non-empty
//!   strings; `line_sep` and `kv_sep` non-empty strings (the reference fails with "empty
//!   separator", or splits on whitespace for `null`, when a region is parsed); `value_parser` an
//!   object whose `name` (default `text`) is a known parser and whose `args` are checked the same
//!   way, recursively (at most [`MAX_VALUE_PARSER_DEPTH`] levels); `tag_pattern` a string that
//!   compiles (the reference compiles it on every parse) and declares a named group `key` (the
//!   reference raises on the first match without it).
//! - **Regexes must be supported by our engines.** `open_pattern` / `close_pattern` are compiled
//!   to DFAs ([`crate::pyregex::to_dfa`]), so constructs a DFA cannot run (backreferences,
//!   look-behind, atomic groups, possessive quantifiers, a look-ahead that is not trailing) are
//!   errors here although Python accepts them. `start_anchor_pattern` and `tag_pattern` run on
//!   `fancy-regex` ([`crate::pyregex::to_fancy`]), which accepts look-around and backreferences.
//!
//! We are as loose as the reference in these places:
//!
//! - unknown keys inside `content_args` (and inside a `value_parser` object, besides `name` and
//!   `args`) are ignored, as the reference ignores them; so is an argument meant for another
//!   parser (`tag_pattern` on a `text` field);
//! - an `xml-inline` field without `tag_pattern` (or with `"tag_pattern": null`) loads; the
//!   reference raises only when such a region is parsed, and so does our runtime
//!   ([`ContentSpec::XmlInline`] with `tag_pattern: None`);
//! - `null` means "absent" for `join`, `transform`, `tag_pattern` and `value_parser`, exactly
//!   where the reference tests `is None`;
//! - `version` may be any JSON value equal to Python's `1`: `1`, `1.0` and `true` (Python's
//!   `True == 1`).
//!
//! Transform placeholders are found with the runtime's own grammar
//! (`parser_runtime_core::transform::placeholder_at`, with the `regex` module's Unicode `\w`
//! table in `parser_runtime_core::pychar`), so the check here and the replacement at run time
//! agree on what a placeholder is.

use std::collections::HashSet;

use serde_json::{Map, Value};

use parser_runtime_core::tables::{CallBrackets, Field, Owned, Role, StartAnchor};
use parser_runtime_core::transform::{has_placeholder, placeholder};
use parser_runtime_core::ContentSpec;

use crate::path::{excerpt, index as index_path, key as key_path, quote};

use crate::error::{Problem, TemplateError, TemplateErrorKind as Kind, TemplateErrors};
use crate::pyregex::{self, RegexIssue, RegexIssueKind};

/// How deep `value_parser` objects may nest (a `value_parser` whose `args` have a
/// `value_parser`, ...). Real templates use one level. Deeper nesting is an error.
pub const MAX_VALUE_PARSER_DEPTH: usize = 16;

/// The keys a template may have (reference: `_validate_template_shape`).
const ROOT_KEYS: [&str; 5] = [
    "version",
    "defaults",
    "fields",
    "start_anchor",
    "start_anchor_pattern",
];

/// The keys a field may have (reference: `_build_field`, `_ALLOWED_FIELD_KEYS`).
const FIELD_KEYS: [&str; 11] = [
    "open",
    "open_pattern",
    "close",
    "close_pattern",
    "content",
    "content_args",
    "repeats",
    "join",
    "optional",
    "transform",
    "transform_each",
];

/// The content parsers (reference: `CONTENT_PARSERS`), sorted by name for messages.
const CONTENT_PARSERS: [&str; 9] = [
    "bool",
    "float",
    "int",
    "json",
    "json-call-list",
    "kv-lines",
    "python-call-list",
    "text",
    "xml-inline",
];

/// A delimiter as the template gives it, with its translation for the DFA engine (made once,
/// here; compilation and `constrain` read it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DelimiterSpec {
    /// `open` / `close`: one string or a list of strings, any of which matches. Non-empty
    /// strings, deduplicated, in first-seen order (reference: `_compile_anchor`,
    /// `dict.fromkeys`).
    Literals(Vec<String>),
    /// `open_pattern` / `close_pattern`: a regex in Python's `regex` dialect.
    Pattern {
        /// The pattern as written.
        source: String,
        /// Its translation ([`pyregex::to_dfa`]): regex-syntax branches and named groups.
        translated: pyregex::DfaPattern,
    },
}

impl DelimiterSpec {
    /// The delimiter in regex-syntax: the literals as one alternation, longest first (stable),
    /// like the reference's `_compile_anchor`; or the pattern's translation.
    pub fn dfa_pattern(&self) -> pyregex::DfaPattern {
        match self {
            Self::Literals(lits) => pyregex::DfaPattern {
                branches: vec![pyregex::DfaBranch {
                    main: literal_alternation(lits, pyregex::escape),
                    lookahead: None,
                    behind: None,
                }],
                group_names: Vec::new(),
            },
            Self::Pattern { translated, .. } => translated.clone(),
        }
    }

    /// The delimiter as written, for diagnostics: the literals joined with `" | "`, or the
    /// pattern.
    pub fn source(&self) -> String {
        match self {
            Self::Literals(lits) => lits.join(" | "),
            Self::Pattern { source, .. } => source.clone(),
        }
    }

    /// The names of the pattern's named groups (none for literals).
    pub fn group_names(&self) -> &[String] {
        match self {
            Self::Literals(_) => &[],
            Self::Pattern { translated, .. } => &translated.group_names,
        }
    }

    /// The template key it came from: `which` (`open`, `close`) or `{which}_pattern`.
    pub fn key(&self, which: &str) -> String {
        match self {
            Self::Literals(_) => which.to_owned(),
            Self::Pattern { .. } => format!("{which}_pattern"),
        }
    }
}

/// Literal alternatives as one pattern: longest first (stable), each escaped with `escape`.
fn literal_alternation(literals: &[String], escape: impl Fn(&str) -> String) -> String {
    let mut ordered: Vec<&String> = literals.iter().collect();
    ordered.sort_by_key(|s| std::cmp::Reverse(s.len()));
    ordered
        .iter()
        .map(|s| escape(s))
        .collect::<Vec<_>>()
        .join("|")
}

/// One field (region) of a template, validated: the table's [`Field`] with the delimiters as
/// the template spells them (compiled by [`crate::compile`]). `transform` strings are known not
/// to mix a placeholder with text; `transform_each` is only set together with `transform`.
pub type FieldModel = Field<Owned, DelimiterSpec>;

/// A validated response template.
#[derive(Debug, Clone)]
pub struct TemplateModel {
    /// `defaults`: keys always present in the message (default empty), in template order.
    pub defaults: Map<String, Value>,
    /// `start_anchor` / `start_anchor_pattern`, built: where the message starts in the prefix
    /// (literals as one alternation, longest first; a pattern translated for `fancy-regex`).
    pub start_anchor: StartAnchor<Owned>,
    /// The fields, in the order of the `fields` object.
    pub fields: Vec<FieldModel>,
    /// Index into `fields` of the implicit field (the one without `open` / `open_pattern`).
    pub implicit: Option<usize>,
}

/// Validates a template given as a JSON value and builds its model.
///
/// Reports **all** problems, not only the first: the error list is never empty and is in the
/// order of the template (root keys, then each field, then the field-set checks, then the start
/// anchor). See the module documentation for the checks and how they compare to the
/// reference's `load_response_template`.
///
/// Cost: compiles every pattern once to check it (DFA translation for delimiters,
/// `fancy-regex` for the start anchor and `tag_pattern`s).
pub fn load(value: &Value) -> Result<TemplateModel, TemplateErrors> {
    load_parts(value).map_err(|(errors, _)| errors)
}

/// [`load`], and on failure also every delimiter pattern that loaded without a problem of its
/// own, with its JSON path: the compiler builds their DFAs so that DFA problems (size limits)
/// are reported together with the template's other problems.
pub(crate) fn load_parts(
    value: &Value,
) -> Result<TemplateModel, (TemplateErrors, Vec<(String, DelimiterSpec)>)> {
    let mut cx = Ctx::default();
    let model = load_root(&mut cx, value);
    match model {
        Some(model) if cx.errors.is_empty() => Ok(model),
        _ if cx.errors.is_empty() => Err((
            TemplateErrors(vec![TemplateError::new(
                "",
                Kind::Internal,
                "the template is invalid",
            )]),
            cx.patterns,
        )),
        _ => Err((TemplateErrors(cx.errors), cx.patterns)),
    }
}

/// Parses JSON text, then [`load`]s it.
///
/// Text that is not JSON is one [`TemplateError`] at path `""` giving the line and column
/// (1-based) where parsing failed.
pub fn load_str(text: &str) -> Result<TemplateModel, TemplateErrors> {
    match serde_json::from_str::<Value>(text) {
        Ok(value) => load(&value),
        Err(e) => {
            let message = crate::compile::json_cause(text, &e);
            Err(TemplateError::new(
                "",
                Kind::InvalidJson,
                format!("invalid JSON at {}:{}: {message}", e.line(), e.column()),
            )
            .into())
        }
    }
}

/// The errors found so far.
#[derive(Default)]
struct Ctx {
    errors: Vec<TemplateError>,
    /// Field delimiter patterns that loaded, with their paths (see [`load_parts`]).
    patterns: Vec<(String, DelimiterSpec)>,
}

impl Ctx {
    fn error(&mut self, path: impl Into<String>, kind: Kind, reason: impl Into<String>) {
        self.errors.push(TemplateError::new(path, kind, reason));
    }

    fn report(&mut self, path: impl Into<String>, problem: Problem) {
        self.errors.push(problem.at(path));
    }
}

fn load_root(cx: &mut Ctx, value: &Value) -> Option<TemplateModel> {
    let Some(root) = value.as_object() else {
        cx.error(
            "",
            Kind::NotAnObject,
            format!(
                "a response template must be a JSON object, got {}",
                type_name(value)
            ),
        );
        return None;
    };

    // `version`: the reference compares with Python's `!=`, where `1 == 1.0 == True`.
    if let Some(version) = root.get("version") {
        let is_one = match version {
            Value::Number(n) => n.as_f64() == Some(1.0),
            Value::Bool(b) => *b,
            _ => false,
        };
        if !is_one {
            cx.error(
                "version",
                Kind::UnsupportedVersion,
                format!("unsupported response_template version {version}: only 1 is supported"),
            );
        }
    }

    for key in root.keys() {
        if !ROOT_KEYS.contains(&key.as_str()) {
            cx.error(
                key_path("", key),
                Kind::UnknownKey,
                format!(
                    "unknown key {}; a template takes {}",
                    quote(key),
                    ROOT_KEYS.join(", ")
                ),
            );
        }
    }

    let defaults = match root.get("defaults") {
        None => Some(Map::new()),
        Some(Value::Object(map)) => Some(map.clone()),
        Some(other) => {
            cx.error(
                "defaults",
                Kind::WrongType,
                format!("'defaults' must be an object, got {}", type_name(other)),
            );
            None
        }
    };

    let fields = load_fields(cx, root.get("fields"));

    let start_anchor = load_delimiter(
        cx,
        root,
        "",
        "start_anchor",
        "start_anchor_pattern",
        start_anchor,
    );
    let start_anchor = match start_anchor {
        Anchor::Absent => {
            cx.error(
                "",
                Kind::MissingStartAnchor,
                "a template must define 'start_anchor' or 'start_anchor_pattern'",
            );
            None
        }
        Anchor::Invalid => None,
        Anchor::Valid(spec) => Some(spec),
    };

    let (fields, implicit) = fields?;
    Some(TemplateModel {
        defaults: defaults?,
        start_anchor: start_anchor?,
        fields,
        implicit,
    })
}

/// Checks `fields` and every field, then that at most one field is implicit.
fn load_fields(cx: &mut Ctx, raw: Option<&Value>) -> Option<(Vec<FieldModel>, Option<usize>)> {
    let map = match raw {
        None => {
            cx.error(
                "fields",
                Kind::MissingFields,
                "a template must have 'fields', a non-empty object of fields",
            );
            return None;
        }
        Some(Value::Object(map)) if map.is_empty() => {
            cx.error("fields", Kind::EmptyFields, "'fields' must not be empty");
            return None;
        }
        Some(Value::Object(map)) => map,
        Some(other) => {
            cx.error(
                "fields",
                Kind::WrongType,
                format!(
                    "'fields' must be a non-empty object, got {}",
                    type_name(other)
                ),
            );
            return None;
        }
    };

    let mut fields = Vec::with_capacity(map.len());
    let mut all_valid = true;
    let mut implicit_names: Vec<&str> = Vec::new();
    for (name, raw_field) in map {
        if let Some(obj) = raw_field.as_object() {
            if !obj.contains_key("open") && !obj.contains_key("open_pattern") {
                implicit_names.push(name);
            }
        }
        match load_field(cx, name, raw_field) {
            Some(field) => fields.push(field),
            None => all_valid = false,
        }
    }

    if implicit_names.len() > 1 {
        cx.error(
            "fields",
            Kind::MultipleImplicitFields,
            format!(
                "at most one field may omit 'open'/'open_pattern' (that field is the implicit \
                 field, which takes the text no other region claims); found {}: {}",
                implicit_names.len(),
                implicit_names.join(", ")
            ),
        );
        return None;
    }
    if !all_valid {
        return None;
    }
    let implicit = fields.iter().position(|field| field.open.is_none());
    crate::roles::assign(&mut fields);
    Some((fields, implicit))
}

/// Checks one field (reference: `_build_field`). Returns `None` when it has a problem (all of
/// which are reported).
fn load_field(cx: &mut Ctx, name: &str, raw: &Value) -> Option<FieldModel> {
    let path = key_path("fields", name);
    let Some(obj) = raw.as_object() else {
        cx.error(
            path,
            Kind::WrongType,
            format!("a field must be an object, got {}", type_name(raw)),
        );
        return None;
    };
    let errors_before = cx.errors.len();

    for key in obj.keys() {
        if !FIELD_KEYS.contains(&key.as_str()) {
            cx.error(
                key_path(&path, key),
                Kind::UnknownKey,
                format!(
                    "unknown field key {}; a field takes {}",
                    quote(key),
                    FIELD_KEYS.join(", ")
                ),
            );
        }
    }

    let content_path = key_path(&path, "content");
    let parser = match obj.get("content") {
        None => Some("text"),
        Some(value) => parser_name(cx, &content_path, value),
    };
    let content = parser.and_then(|parser| {
        content_spec(
            cx,
            &key_path(&path, "content_args"),
            parser,
            obj.get("content_args"),
            0,
        )
    });

    let open = load_delimiter(cx, obj, &path, "open", "open_pattern", delimiter);
    let close = load_delimiter(cx, obj, &path, "close", "close_pattern", delimiter);
    for (spec, which) in [(&open, "open"), (&close, "close")] {
        if let Anchor::Valid(spec @ DelimiterSpec::Pattern { .. }) = spec {
            cx.patterns
                .push((key_path(&path, &spec.key(which)), spec.clone()));
        }
    }

    let repeats = bool_key(cx, obj, &path, "repeats", false);
    let optional = bool_key(cx, obj, &path, "optional", true);

    let join_path = key_path(&path, "join");
    let join = match obj.get("join") {
        None | Some(Value::Null) => None,
        Some(Value::String(join)) => {
            if repeats == Some(false) {
                cx.error(
                    &join_path,
                    Kind::JoinWithoutRepeats,
                    "'join' requires 'repeats': true",
                );
            }
            Some(join.clone())
        }
        Some(other) => {
            cx.error(
                &join_path,
                Kind::WrongType,
                format!("'join' must be a string, got {}", type_name(other)),
            );
            None
        }
    };

    let transform = match obj.get("transform") {
        None | Some(Value::Null) => None,
        Some(transform) => Some(transform.clone()),
    };
    let transform_each_path = key_path(&path, "transform_each");
    let transform_each = match obj.get("transform_each") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            cx.error(
                &transform_each_path,
                Kind::WrongType,
                format!(
                    "'transform_each' must be a boolean (true or false), got {}",
                    type_name(other)
                ),
            );
            false
        }
    };
    if transform_each && transform.is_none() {
        cx.error(
            &transform_each_path,
            Kind::TransformEachWithoutTransform,
            "'transform_each' is set but the field has no 'transform'",
        );
    }

    match &transform {
        Some(transform) => check_transform(cx, &key_path(&path, "transform"), transform),
        None => {
            // Named groups reach the output only through a transform (reference: `_build_field`).
            for (spec, key) in [(&open, "open_pattern"), (&close, "close_pattern")] {
                let Anchor::Valid(spec) = spec else {
                    continue;
                };
                let mut names = spec.group_names().to_vec();
                names.sort();
                names.dedup();
                if !names.is_empty() {
                    cx.error(
                        key_path(&path, key),
                        Kind::NamedGroupsWithoutTransform,
                        format!(
                            "the pattern declares named group(s) {} but the field has no \
                             'transform'; named groups reach the output only through a \
                             transform (e.g. \"{{{}}}\"): add one that uses them, or remove \
                             the names",
                            names
                                .iter()
                                .map(|n| format!("'{n}'"))
                                .collect::<Vec<_>>()
                                .join(", "),
                            names[0]
                        ),
                    );
                }
            }
        }
    }

    if cx.errors.len() != errors_before {
        return None;
    }
    Some(FieldModel {
        name: name.to_owned(),
        // Set with every field in view, by `roles::assign`.
        role: Role::Other,
        open: open.into_option(),
        close: close.into_option(),
        content: content?,
        repeats: repeats?,
        join,
        optional: optional?,
        transform,
        transform_each,
    })
}

/// A parser name (`content`, or `name` of a `value_parser`): a string naming a known parser.
fn parser_name<'a>(cx: &mut Ctx, path: &str, value: &'a Value) -> Option<&'a str> {
    match value {
        Value::String(name) if CONTENT_PARSERS.contains(&name.as_str()) => Some(name),
        Value::String(name) => {
            cx.error(
                path,
                Kind::UnknownContentParser,
                format!(
                    "unknown content parser {}; available: {}",
                    quote(name),
                    CONTENT_PARSERS.join(", ")
                ),
            );
            None
        }
        other => {
            cx.error(
                path,
                Kind::WrongType,
                format!(
                    "the content parser must be a string naming one of {}, got {}",
                    CONTENT_PARSERS.join(", "),
                    type_name(other)
                ),
            );
            None
        }
    }
}

/// Checks the arguments of content parser `parser` (`content_args`, or the `args` of a
/// `value_parser`, at `path`) and builds its [`ContentSpec`]. Reference: the parsers of
/// `content_parsers.py`, which read their arguments with `args.get(key, default)`.
fn content_spec(
    cx: &mut Ctx,
    path: &str,
    parser: &str,
    args: Option<&Value>,
    depth: usize,
) -> Option<ContentSpec> {
    let empty = Map::new();
    let args = match args {
        None => &empty,
        Some(Value::Object(args)) => args,
        Some(other) => {
            cx.error(
                path,
                Kind::WrongType,
                format!(
                    "content arguments must be an object, got {}",
                    type_name(other)
                ),
            );
            return None;
        }
    };
    match parser {
        "text" | "int" | "float" | "bool" => {
            let strip = bool_key(cx, args, path, "strip", true)?;
            Some(match parser {
                "int" => ContentSpec::Int { strip },
                "float" => ContentSpec::Float { strip },
                "bool" => ContentSpec::Bool { strip },
                _ => ContentSpec::Text { strip },
            })
        }
        "json" => {
            let unquoted_keys = bool_key(cx, args, path, "unquoted_keys", false);
            let string_delims = string_delims(cx, path, args.get("string_delims"));
            let allow_non_json = bool_key(cx, args, path, "allow_non_json", false);
            let strip = bool_key(cx, args, path, "strip", true);
            Some(ContentSpec::Json {
                unquoted_keys: unquoted_keys?,
                string_delims: string_delims?,
                allow_non_json: allow_non_json?,
                strip: strip?,
            })
        }
        "xml-inline" => {
            let tag_pattern = tag_pattern(cx, &key_path(path, "tag_pattern"), args);
            let value_parser = value_parser(cx, path, args, depth);
            let merge_duplicates = bool_key(cx, args, path, "merge_duplicates", false);
            let (tag_pattern, tag_pattern_source) = tag_pattern?;
            Some(ContentSpec::XmlInline {
                tag_pattern,
                tag_pattern_source,
                value_parser: value_parser?,
                merge_duplicates: merge_duplicates?,
            })
        }
        "kv-lines" => {
            let line_sep = separator(cx, path, args, "line_sep", "\n");
            let kv_sep = separator(cx, path, args, "kv_sep", ":");
            let strip = bool_key(cx, args, path, "strip", true);
            let value_parser = value_parser(cx, path, args, depth);
            Some(ContentSpec::KvLines {
                line_sep: line_sep?,
                kv_sep: kv_sep?,
                strip: strip?,
                value_parser: value_parser?,
            })
        }
        // Reads no arguments (the reference passes it `content_args` and ignores them).
        "python-call-list" => Some(ContentSpec::PythonCallList),
        "json-call-list" => json_call_list_spec(cx, path, args),
        other => {
            // Callers pass only names from CONTENT_PARSERS.
            cx.error(
                path,
                Kind::UnknownContentParser,
                format!("unknown content parser {}", quote(other)),
            );
            None
        }
    }
}

/// The content arguments of `json-call-list` (this project's parser; see
/// `parser_runtime_core::content::json_call_list`): `brackets` (`"required"`, `"optional"`,
/// `"none"`), `separator` (a non-empty string without whitespace at either end: whitespace
/// around it is skipped anyway), `name_key` (a non-empty string) and `arguments_keys` (a
/// non-empty list of non-empty strings). Unlike the reference's parsers, it takes no key it
/// does not read: an unknown one is an error.
fn json_call_list_spec(cx: &mut Ctx, path: &str, args: &Map<String, Value>) -> Option<ContentSpec> {
    const KEYS: [&str; 4] = ["brackets", "separator", "name_key", "arguments_keys"];
    let mut valid = true;
    for key in args.keys().filter(|k| !KEYS.contains(&k.as_str())) {
        valid = false;
        cx.error(
            key_path(path, key),
            Kind::UnknownKey,
            format!(
                "json-call-list takes no content argument {}; it takes {}",
                quote(key),
                KEYS.join(", ")
            ),
        );
    }
    let brackets = match args.get("brackets") {
        None => Some(CallBrackets::Required),
        Some(Value::String(s)) if CallBrackets::from_name(s).is_some() => {
            CallBrackets::from_name(s)
        }
        Some(other) => {
            cx.error(
                key_path(path, "brackets"),
                Kind::InvalidCallListArgument,
                format!(
                    "'brackets' must be \"required\", \"optional\" or \"none\", got {}",
                    other
                ),
            );
            None
        }
    };
    // An empty key is reported like an empty separator.
    let name_key = separator(cx, path, args, "name_key", "name");
    let separator = separator(cx, path, args, "separator", ",").and_then(|s| {
        if s.trim_matches([' ', '\t', '\n', '\r']) == s {
            return Some(s);
        }
        cx.error(
            key_path(path, "separator"),
            Kind::InvalidCallListArgument,
            format!(
                "'separator' {} must not start or end with whitespace (whitespace around it is \
                 skipped)",
                quote(&s)
            ),
        );
        None
    });
    let arguments_keys = match args.get("arguments_keys") {
        None => Some(vec!["arguments".to_owned()]),
        Some(Value::Array(items))
            if !items.is_empty()
                && items
                    .iter()
                    .all(|k| k.as_str().is_some_and(|k| !k.is_empty())) =>
        {
            Some(
                items
                    .iter()
                    .filter_map(|k| k.as_str().map(str::to_owned))
                    .collect(),
            )
        }
        Some(other) => {
            cx.error(
                key_path(path, "arguments_keys"),
                Kind::InvalidCallListArgument,
                format!(
                    "'arguments_keys' must be a non-empty list of non-empty strings, got {}",
                    other
                ),
            );
            None
        }
    };
    if !valid {
        return None;
    }
    Some(ContentSpec::JsonCallList {
        brackets: brackets?,
        separator: separator?,
        name_key: name_key?,
        arguments_keys: arguments_keys?,
    })
}

/// `string_delims` of `json`: a list of `[open, close]` pairs of non-empty strings.
fn string_delims(
    cx: &mut Ctx,
    args_path: &str,
    raw: Option<&Value>,
) -> Option<Vec<(String, String)>> {
    let path = key_path(args_path, "string_delims");
    let items = match raw {
        None => return Some(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(other) => {
            cx.error(
                path,
                Kind::WrongType,
                format!(
                    "'string_delims' must be a list of [open, close] string pairs, got {}",
                    type_name(other)
                ),
            );
            return None;
        }
    };
    let mut pairs = Vec::with_capacity(items.len());
    let mut valid = true;
    for (i, item) in items.iter().enumerate() {
        let item_path = index_path(&path, i);
        match item.as_array().map(Vec::as_slice) {
            Some([open, close]) => {
                let mut pair = [None, None];
                for (j, (slot, value)) in pair.iter_mut().zip([open, close]).enumerate() {
                    match value {
                        Value::String(s) if !s.is_empty() => *slot = Some(s.clone()),
                        Value::String(_) => {
                            cx.error(
                                index_path(&item_path, j),
                                Kind::EmptyStringDelimiter,
                                "a string delimiter must not be empty",
                            );
                        }
                        other => {
                            cx.error(
                                index_path(&item_path, j),
                                Kind::WrongType,
                                format!(
                                    "a string delimiter must be a string, got {}",
                                    type_name(other)
                                ),
                            );
                        }
                    }
                }
                match pair {
                    [Some(open), Some(close)] => pairs.push((open, close)),
                    _ => valid = false,
                }
            }
            _ => {
                valid = false;
                cx.error(
                    item_path,
                    Kind::StringDelimiterNotPair,
                    format!(
                        "each string delimiter must be a list of two strings [open, close], got {}",
                        describe_pair(item)
                    ),
                );
            }
        }
    }
    valid.then_some(pairs)
}

/// Describes a value that should have been a two-element list.
fn describe_pair(value: &Value) -> String {
    match value {
        Value::Array(items) => format!("a list of {} item(s)", items.len()),
        other => type_name(other).to_owned(),
    }
}

/// `tag_pattern` of `xml-inline`: absent or `null` (the runtime then fails when a region is
/// parsed, like the reference), or a regex that compiles with `fancy-regex` and declares a
/// named group `key`.
#[allow(clippy::type_complexity)]
fn tag_pattern(
    cx: &mut Ctx,
    path: &str,
    args: &Map<String, Value>,
) -> Option<(Option<fancy_regex::Regex>, Option<String>)> {
    match args.get("tag_pattern") {
        None | Some(Value::Null) => Some((None, None)),
        Some(Value::String(pattern)) => {
            match check_length(pattern).and_then(|()| compile_fancy(pattern)) {
                Ok(regex) => {
                    if regex.capture_names().flatten().any(|name| name == "key") {
                        Some((Some(regex), Some(pattern.clone())))
                    } else {
                        cx.error(
                            path,
                            Kind::TagPatternWithoutKey,
                            format!(
                                "'tag_pattern' {} has no named group 'key' (and should have one \
                             named 'value'), e.g. <(?P<key>\\w+)>(?P<value>.*?)</(?P=key)>",
                                excerpt(pattern)
                            ),
                        );
                        None
                    }
                }
                Err(problem) => {
                    cx.report(path, problem);
                    None
                }
            }
        }
        Some(other) => {
            cx.error(
                path,
                Kind::WrongType,
                format!(
                    "'tag_pattern' must be a string (a regex), got {}",
                    type_name(other)
                ),
            );
            None
        }
    }
}

/// `value_parser` of `xml-inline` / `kv-lines`: absent or `null` (values stay strings), or
/// `{"name": parser (default "text"), "args": {...}}`, checked recursively.
fn value_parser(
    cx: &mut Ctx,
    args_path: &str,
    args: &Map<String, Value>,
    depth: usize,
) -> Option<Option<Box<ContentSpec>>> {
    let path = key_path(args_path, "value_parser");
    let obj = match args.get("value_parser") {
        None | Some(Value::Null) => return Some(None),
        Some(Value::Object(obj)) => obj,
        Some(other) => {
            cx.error(
                path,
                Kind::WrongType,
                format!(
                    "'value_parser' must be an object {{\"name\": parser, \"args\": {{...}}}}, \
                     got {}",
                    type_name(other)
                ),
            );
            return None;
        }
    };
    if depth + 1 > MAX_VALUE_PARSER_DEPTH {
        cx.error(
            path,
            Kind::ValueParserTooDeep,
            format!("value parsers are nested more than {MAX_VALUE_PARSER_DEPTH} levels deep"),
        );
        return None;
    }
    let name = match obj.get("name") {
        None => Some("text"),
        Some(value) => parser_name(cx, &key_path(&path, "name"), value),
    }?;
    let spec = content_spec(
        cx,
        &key_path(&path, "args"),
        name,
        obj.get("args"),
        depth + 1,
    )?;
    Some(Some(Box::new(spec)))
}

/// `line_sep` / `kv_sep` of `kv-lines`: a non-empty string.
fn separator(
    cx: &mut Ctx,
    args_path: &str,
    args: &Map<String, Value>,
    key: &str,
    default: &str,
) -> Option<String> {
    let path = key_path(args_path, key);
    match args.get(key) {
        None => Some(default.to_owned()),
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::String(_)) => {
            cx.error(
                path,
                Kind::EmptySeparator,
                format!("'{key}' must not be empty"),
            );
            None
        }
        Some(other) => {
            cx.error(
                path,
                Kind::WrongType,
                format!(
                    "'{key}' must be a non-empty string, got {}",
                    type_name(other)
                ),
            );
            None
        }
    }
}

/// A boolean key of `obj`: absent gives `default`; anything but `true` / `false` is an error
/// (the reference would read it with Python truthiness).
fn bool_key(
    cx: &mut Ctx,
    obj: &Map<String, Value>,
    parent: &str,
    key: &str,
    default: bool,
) -> Option<bool> {
    match obj.get(key) {
        None => Some(default),
        Some(Value::Bool(b)) => Some(*b),
        Some(other) => {
            cx.error(
                key_path(parent, key),
                Kind::WrongType,
                format!(
                    "'{key}' must be a boolean (true or false), got {}",
                    type_name(other)
                ),
            );
            None
        }
    }
}

/// The outcome of reading a delimiter pair of keys.
enum Anchor<T> {
    /// Neither key is present.
    Absent,
    /// A key is present but has a problem (reported).
    Invalid,
    /// A valid delimiter.
    Valid(T),
}

impl<T> Anchor<T> {
    fn into_option(self) -> Option<T> {
        match self {
            Anchor::Valid(spec) => Some(spec),
            Anchor::Absent | Anchor::Invalid => None,
        }
    }
}

/// A delimiter as written: literals or a pattern (still in Python's dialect).
enum Written {
    Literals(Vec<String>),
    Pattern(String),
}

/// A field delimiter: a pattern is translated for the DFA engine, once.
fn delimiter(written: Written) -> Result<DelimiterSpec, Problem> {
    Ok(match written {
        Written::Literals(lits) => DelimiterSpec::Literals(lits),
        Written::Pattern(source) => {
            let translated =
                pyregex::to_dfa(&source).map_err(|issue| regex_problem(&source, &issue))?;
            DelimiterSpec::Pattern { source, translated }
        }
    })
}

/// The start anchor, built: literals as one escaped alternation (longest first), a pattern
/// translated for `fancy-regex` (look-around allowed).
fn start_anchor(written: Written) -> Result<StartAnchor<Owned>, Problem> {
    let (source, regex) = match written {
        Written::Literals(lits) => {
            let pattern = format!(
                "(?s){}",
                literal_alternation(&lits, |s| fancy_regex::escape(s).into_owned())
            );
            let regex = fancy_regex::Regex::new(&pattern).map_err(|e| {
                Problem::new(
                    Kind::Regex(RegexIssueKind::RejectedByFancyRegex),
                    e.to_string(),
                )
            })?;
            (lits.join(" | "), regex)
        }
        Written::Pattern(p) => {
            let regex = compile_fancy(&p)?;
            (p, regex)
        }
    };
    Ok(StartAnchor { source, regex })
}

/// Reads the delimiter `literal_key` / `pattern_key` of `obj` (at `parent`) and builds it with
/// `build` (errors at the key's path). Reference: `_compile_anchor`.
fn load_delimiter<T>(
    cx: &mut Ctx,
    obj: &Map<String, Value>,
    parent: &str,
    literal_key: &str,
    pattern_key: &str,
    build: impl Fn(Written) -> Result<T, Problem>,
) -> Anchor<T> {
    let literal = obj.get(literal_key);
    let pattern = obj.get(pattern_key);
    let both = literal.is_some() && pattern.is_some();
    if both {
        cx.error(
            key_path(parent, pattern_key),
            Kind::BothLiteralAndPattern,
            format!("cannot give both '{literal_key}' and '{pattern_key}'"),
        );
    }
    let mut result = Anchor::Absent;
    if let Some(raw) = literal {
        let path = key_path(parent, literal_key);
        let checked = |l: Vec<String>| {
            check_length(&l.concat())?;
            build(Written::Literals(l))
        };
        result = match literals(cx, &path, raw).map(checked) {
            Some(Ok(spec)) => Anchor::Valid(spec),
            Some(Err(problem)) => {
                cx.report(&path, problem);
                Anchor::Invalid
            }
            None => Anchor::Invalid,
        };
    }
    if let Some(raw) = pattern {
        let path = key_path(parent, pattern_key);
        let checked = match raw {
            Value::String(p) => {
                match check_length(p).and_then(|()| build(Written::Pattern(p.clone()))) {
                    Ok(spec) => Some(spec),
                    Err(problem) => {
                        cx.report(&path, problem);
                        None
                    }
                }
            }
            other => {
                cx.error(
                    &path,
                    Kind::WrongType,
                    format!(
                        "'{pattern_key}' must be a string (a regex), got {}",
                        type_name(other)
                    ),
                );
                None
            }
        };
        if !both {
            result = match checked {
                Some(p) => Anchor::Valid(p),
                None => Anchor::Invalid,
            };
        }
    }
    if both {
        Anchor::Invalid
    } else {
        result
    }
}

/// A literal delimiter: a non-empty string, or a non-empty list of non-empty strings
/// (deduplicated, first-seen order).
fn literals(cx: &mut Ctx, path: &str, raw: &Value) -> Option<Vec<String>> {
    match raw {
        Value::String(s) if s.is_empty() => {
            cx.error(
                path,
                Kind::EmptyLiteral,
                "a literal delimiter must not be an empty string",
            );
            None
        }
        Value::String(s) => Some(vec![s.clone()]),
        Value::Array(items) if items.is_empty() => {
            cx.error(
                path,
                Kind::EmptyLiteralList,
                "a list of literals must contain at least one literal",
            );
            None
        }
        Value::Array(items) => {
            let mut out: Vec<String> = Vec::with_capacity(items.len());
            let mut seen: HashSet<&str> = HashSet::with_capacity(items.len());
            let mut valid = true;
            for (i, item) in items.iter().enumerate() {
                match item {
                    Value::String(s) if !seen.insert(s) => {}
                    Value::String(s) => {
                        if s.is_empty() {
                            valid = false;
                            cx.error(
                                index_path(path, i),
                                Kind::EmptyLiteral,
                                "a literal delimiter must not be an empty string",
                            );
                        }
                        out.push(s.clone());
                    }
                    other => {
                        valid = false;
                        cx.error(
                            index_path(path, i),
                            Kind::WrongType,
                            format!(
                                "a list of literals must contain only strings, got {}",
                                type_name(other)
                            ),
                        );
                    }
                }
            }
            valid.then_some(out)
        }
        other => {
            cx.error(
                path,
                Kind::WrongType,
                format!(
                    "a literal delimiter must be a string or a list of strings, got {}",
                    type_name(other)
                ),
            );
            None
        }
    }
}

/// Most bytes of one pattern (`open_pattern`, `close_pattern`, `start_anchor_pattern`,
/// `tag_pattern`) or of one literal delimiter key (a literal, or every literal of a list
/// together): 32 KiB, a hundred times the longest delimiter of a published template. A longer
/// one is [`Kind::PatternTooLong`], found before anything is compiled.
pub const MAX_PATTERN_BYTES: usize = 32 << 10;

/// [`Kind::PatternTooLong`] when `text` (a pattern, or the literals of one key) is longer than
/// [`MAX_PATTERN_BYTES`].
fn check_length(text: &str) -> Result<(), Problem> {
    if text.len() <= MAX_PATTERN_BYTES {
        return Ok(());
    }
    Err(Problem::new(
        Kind::PatternTooLong,
        format!(
            "{} is longer than the budget of {MAX_PATTERN_BYTES} bytes per pattern or literal \
             key (model::MAX_PATTERN_BYTES)",
            excerpt(text)
        ),
    ))
}

/// Compiles a pattern for `fancy-regex` (start anchor, `tag_pattern`).
fn compile_fancy(pattern: &str) -> Result<fancy_regex::Regex, Problem> {
    let translated = pyregex::to_fancy(pattern).map_err(|issue| regex_problem(pattern, &issue))?;
    fancy_regex::Regex::new(&translated).map_err(|e| {
        let issue = RegexIssue::new(RegexIssueKind::RejectedByFancyRegex, e.to_string(), None);
        regex_problem(pattern, &issue)
    })
}

/// A pattern's [`RegexIssue`] as a template problem ([`Kind::Regex`]), quoting the pattern.
fn regex_problem(pattern: &str, issue: &RegexIssue) -> Problem {
    Problem::new(
        Kind::Regex(issue.kind),
        format!("invalid or unsupported regex {}: {issue}", excerpt(pattern)),
    )
}

/// Rejects every string of a transform that mixes a `{placeholder}` with other text
/// (reference: `validate_transform_strings`: a string in which `\{(\w+(?:\.\w+)*)\}` is found
/// but does not match the whole string). Keys are not checked (the reference does not either).
fn check_transform(cx: &mut Ctx, path: &str, transform: &Value) {
    // Iterative walk: a transform may be deeply nested.
    let mut stack: Vec<(String, &Value)> = vec![(path.to_owned(), transform)];
    while let Some((path, value)) = stack.pop() {
        match value {
            Value::Object(map) => {
                for (key, child) in map.iter().rev() {
                    stack.push((key_path(&path, key), child));
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate().rev() {
                    stack.push((index_path(&path, i), child));
                }
            }
            Value::String(s) if has_placeholder(s) && placeholder(s).is_none() => {
                cx.error(
                    path,
                    Kind::TransformMixesPlaceholder,
                    format!(
                        "transform string {} mixes a {{placeholder}} with other text; use a \
                         whole-string placeholder (e.g. \"{{content}}\") or a plain literal: \
                         string interpolation is not supported",
                        excerpt(s)
                    ),
                );
            }
            _ => {}
        }
    }
}

/// A short name of a JSON value's type, for messages.
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pyregex::Construct;
    use serde_json::json;

    /// A valid template with one field `x`, extended by `extra` (field keys).
    fn one_field(extra: Value) -> Value {
        let mut field = json!({"open": "<x>", "close": "</x>"});
        if let (Some(field), Some(extra)) = (field.as_object_mut(), extra.as_object()) {
            for (k, v) in extra {
                field.insert(k.clone(), v.clone());
            }
        }
        json!({"start_anchor": "<start>", "fields": {"x": field}})
    }

    /// Loads `template`, expecting exactly one error; returns it.
    fn one_error(template: Value) -> TemplateError {
        match load(&template) {
            Ok(model) => panic!("expected an error, loaded {model:?}"),
            Err(errors) => {
                assert_eq!(errors.len(), 1, "expected one error, got:\n{errors}");
                errors.0[0].clone()
            }
        }
    }

    /// Loads `template`, expecting exactly one error, of `kind` at `path`.
    fn assert_error(template: Value, path: &str, kind: Kind) {
        let error = one_error(template);
        assert_eq!((error.path.as_str(), error.kind), (path, kind), "{error}");
    }

    fn content(extra: Value) -> ContentSpec {
        match load(&one_field(extra)) {
            Ok(model) => model.fields[0].content.clone(),
            Err(errors) => panic!("{errors}"),
        }
    }

    #[test]
    fn minimal_template_loads() {
        let model = load(&json!({
            "defaults": {"role": "assistant"},
            "start_anchor": ["<a>", "<b>", "<a>"],
            "fields": {
                "content": {},
                "tool_calls": {"open": ["<t>", "<t>"], "close_pattern": "</t>\\s*", "repeats": true,
                               "content": "json", "optional": false}
            }
        }))
        .unwrap();
        // Literal anchors: one escaped alternation, longest first.
        assert_eq!(model.start_anchor.source, "<a> | <b>");
        assert_eq!(model.start_anchor.regex.as_str(), "(?s)<a>|<b>");
        assert_eq!(model.implicit, Some(0));
        assert_eq!(model.fields[0].name, "content");
        assert!(matches!(
            model.fields[0].content,
            ContentSpec::Text { strip: true }
        ));
        assert!(model.fields[0].optional);
        let tools = &model.fields[1];
        assert_eq!(
            tools.open,
            Some(DelimiterSpec::Literals(vec!["<t>".into()]))
        );
        let Some(DelimiterSpec::Pattern { source, translated }) = &tools.close else {
            panic!("close_pattern is a pattern: {:?}", tools.close);
        };
        assert_eq!(source, "</t>\\s*");
        // Translated once, at load: the compiler and constrain read this.
        assert_eq!(translated.branches.len(), 1);
        assert!(translated.branches[0].main.starts_with("</t>"));
        assert!(tools.repeats && !tools.optional);
        assert_eq!(model.defaults["role"], "assistant");
    }

    #[test]
    fn root_not_object() {
        assert_error(json!([1]), "", Kind::NotAnObject);
    }

    #[test]
    fn version_must_be_one() {
        assert_error(
            json!({"version": 2, "start_anchor": "a", "fields": {"x": {}}}),
            "version",
            Kind::UnsupportedVersion,
        );
        assert_error(
            json!({"version": "1", "start_anchor": "a", "fields": {"x": {}}}),
            "version",
            Kind::UnsupportedVersion,
        );
        assert_error(
            json!({"version": null, "start_anchor": "a", "fields": {"x": {}}}),
            "version",
            Kind::UnsupportedVersion,
        );
        // Python: 1 == 1.0 == True.
        for version in [json!(1), json!(1.0), json!(true)] {
            load(&json!({"version": version, "start_anchor": "a", "fields": {"x": {}}})).unwrap();
        }
    }

    #[test]
    fn unknown_root_key() {
        assert_error(
            json!({"start_anchor": "a", "fields": {"x": {}}, "feilds": {}}),
            "feilds",
            Kind::UnknownKey,
        );
    }

    #[test]
    fn defaults_not_object() {
        assert_error(
            json!({"defaults": ["role"], "start_anchor": "a", "fields": {"x": {}}}),
            "defaults",
            Kind::WrongType,
        );
    }

    #[test]
    fn fields_missing_not_object_or_empty() {
        assert_error(json!({"start_anchor": "a"}), "fields", Kind::MissingFields);
        assert_error(
            json!({"start_anchor": "a", "fields": []}),
            "fields",
            Kind::WrongType,
        );
        assert_error(
            json!({"start_anchor": "a", "fields": {}}),
            "fields",
            Kind::EmptyFields,
        );
    }

    #[test]
    fn field_not_object() {
        assert_error(
            json!({"start_anchor": "a", "fields": {"x": "text"}}),
            "fields.x",
            Kind::WrongType,
        );
    }

    #[test]
    fn unknown_field_key() {
        assert_error(
            one_field(json!({"opne": "<y>"})),
            "fields.x.opne",
            Kind::UnknownKey,
        );
    }

    #[test]
    fn unknown_content_parser() {
        assert_error(
            one_field(json!({"content": "yaml"})),
            "fields.x.content",
            Kind::UnknownContentParser,
        );
        assert_error(
            one_field(json!({"content": null})),
            "fields.x.content",
            Kind::WrongType,
        );
    }

    #[test]
    fn both_literal_and_pattern() {
        assert_error(
            one_field(json!({"open_pattern": "<x>"})),
            "fields.x.open_pattern",
            Kind::BothLiteralAndPattern,
        );
        assert_error(
            one_field(json!({"close_pattern": "</x>"})),
            "fields.x.close_pattern",
            Kind::BothLiteralAndPattern,
        );
        assert_error(
            json!({"start_anchor": "a", "start_anchor_pattern": "a", "fields": {"x": {}}}),
            "start_anchor_pattern",
            Kind::BothLiteralAndPattern,
        );
    }

    #[test]
    fn literal_not_string_or_list() {
        assert_error(
            one_field(json!({"open": {"a": 1}})),
            "fields.x.open",
            Kind::WrongType,
        );
        assert_error(
            one_field(json!({"open": null})),
            "fields.x.open",
            Kind::WrongType,
        );
    }

    #[test]
    fn empty_literal_list() {
        assert_error(
            one_field(json!({"close": []})),
            "fields.x.close",
            Kind::EmptyLiteralList,
        );
    }

    #[test]
    fn non_string_literal_item() {
        assert_error(
            json!({"start_anchor": ["a", "b", 3], "fields": {"x": {}}}),
            "start_anchor[2]",
            Kind::WrongType,
        );
    }

    #[test]
    fn empty_string_literal() {
        assert_error(
            one_field(json!({"open": ""})),
            "fields.x.open",
            Kind::EmptyLiteral,
        );
        // Reported once even when repeated.
        assert_error(
            one_field(json!({"open": ["<x>", "", ""]})),
            "fields.x.open[1]",
            Kind::EmptyLiteral,
        );
    }

    #[test]
    fn invalid_regex() {
        assert_error(
            json!({"start_anchor": "a", "fields": {"x": {"open_pattern": "<(x"}}}),
            "fields.x.open_pattern",
            Kind::Regex(RegexIssueKind::Syntax),
        );
        assert_error(
            json!({"start_anchor_pattern": "a[", "fields": {"x": {}}}),
            "start_anchor_pattern",
            Kind::Regex(RegexIssueKind::Syntax),
        );
        // Python accepts any look-behind; the DFA translation one of one character at the
        // start of a branch only (the start anchor runs on fancy-regex, which takes more).
        load(&json!({"start_anchor": "a", "fields": {"x": {"open_pattern": "(?<=a)b"}}})).unwrap();
        assert_error(
            json!({"start_anchor": "a", "fields": {"x": {"open_pattern": "(?<=ab)c"}}}),
            "fields.x.open_pattern",
            Kind::Regex(RegexIssueKind::Unsupported(Construct::LookBehind)),
        );
        load(&json!({"start_anchor_pattern": "(?<=a)b", "fields": {"x": {}}})).unwrap();
        assert_error(
            json!({"start_anchor": "a", "fields": {"x": {"close_pattern": 5}}}),
            "fields.x.close_pattern",
            Kind::WrongType,
        );
    }

    #[test]
    fn join_not_string() {
        assert_error(
            one_field(json!({"repeats": true, "join": 1})),
            "fields.x.join",
            Kind::WrongType,
        );
    }

    #[test]
    fn join_without_repeats() {
        assert_error(
            one_field(json!({"join": ","})),
            "fields.x.join",
            Kind::JoinWithoutRepeats,
        );
        assert_error(
            one_field(json!({"join": ",", "repeats": false})),
            "fields.x.join",
            Kind::JoinWithoutRepeats,
        );
        // `"join": null` is no join (reference: `field.get("join")` is None).
        let model = load(&one_field(json!({"join": null}))).unwrap();
        assert_eq!(model.fields[0].join, None);
        let model = load(&one_field(json!({"join": "\n", "repeats": true}))).unwrap();
        assert_eq!(model.fields[0].join.as_deref(), Some("\n"));
    }

    #[test]
    fn transform_each_not_bool() {
        assert_error(
            one_field(json!({"transform": "{content}", "transform_each": 1})),
            "fields.x.transform_each",
            Kind::WrongType,
        );
    }

    #[test]
    fn transform_each_without_transform() {
        assert_error(
            one_field(json!({"transform_each": true})),
            "fields.x.transform_each",
            Kind::TransformEachWithoutTransform,
        );
        assert_error(
            one_field(json!({"transform_each": true, "transform": null})),
            "fields.x.transform_each",
            Kind::TransformEachWithoutTransform,
        );
    }

    #[test]
    fn transform_mixing_placeholder_and_text() {
        assert_error(
            one_field(
                json!({"transform": {"function": {"name": "call {name}", "arguments": "{content.args}"}}}),
            ),
            "fields.x.transform.function.name",
            Kind::TransformMixesPlaceholder,
        );
        assert_error(
            one_field(json!({"transform": ["{content}", ["{a}{b}"]]})),
            "fields.x.transform[1][0]",
            Kind::TransformMixesPlaceholder,
        );
        assert_error(
            one_field(json!({"transform": "{{content}}"})),
            "fields.x.transform",
            Kind::TransformMixesPlaceholder,
        );
        // Unicode `\w`, dotted paths, and strings without a placeholder are fine.
        let ok = json!({"transform": {"a": "{contént}", "b": "{content.x.y_1}", "c": "{not one}",
                                      "d": "{}", "e": "{a.}", "{content} key": 1, "f": 5}});
        load(&one_field(ok)).unwrap();
        // A non-ASCII word character inside a mixed string is still a placeholder.
        assert_error(
            one_field(json!({"transform": "{contént} "})),
            "fields.x.transform",
            Kind::TransformMixesPlaceholder,
        );
    }

    #[test]
    fn named_groups_without_transform() {
        assert_error(
            json!({"start_anchor": "a", "fields": {"x": {"open_pattern": "<f=(?P<name>\\w+)>"}}}),
            "fields.x.open_pattern",
            Kind::NamedGroupsWithoutTransform,
        );
        let with_transform = json!({"start_anchor": "a", "fields": {"x": {
            "open_pattern": "<f=(?P<name>\\w+)>", "transform": {"name": "{name}"}}}});
        load(&with_transform).unwrap();
        // Unnamed groups are fine.
        load(&json!({"start_anchor": "a", "fields": {"x": {"open_pattern": "<(f)>"}}})).unwrap();
    }

    #[test]
    fn more_than_one_implicit_field() {
        let error = one_error(json!({"start_anchor": "a", "fields": {
            "a": {}, "b": {"close": "x"}, "c": {"open": "<c>"}, "d": {"content": "text"}}}));
        assert_eq!(
            (error.path.as_str(), error.kind),
            ("fields", Kind::MultipleImplicitFields)
        );
        // The reason names the implicit fields, in template order.
        assert!(error.reason.contains("a, b, d"), "{error}");
    }

    #[test]
    fn no_start_anchor() {
        assert_error(json!({"fields": {"x": {}}}), "", Kind::MissingStartAnchor);
    }

    #[test]
    fn repeats_and_optional_must_be_bools() {
        assert_error(
            one_field(json!({"repeats": "yes"})),
            "fields.x.repeats",
            Kind::WrongType,
        );
        assert_error(
            one_field(json!({"optional": "false"})),
            "fields.x.optional",
            Kind::WrongType,
        );
        assert_error(
            one_field(json!({"optional": null})),
            "fields.x.optional",
            Kind::WrongType,
        );
        // A bad `repeats` does not also report `join`.
        assert_error(
            one_field(json!({"repeats": 1, "join": ","})),
            "fields.x.repeats",
            Kind::WrongType,
        );
    }

    #[test]
    fn content_args_must_be_object() {
        assert_error(
            one_field(json!({"content_args": ["strip"]})),
            "fields.x.content_args",
            Kind::WrongType,
        );
        assert_error(
            one_field(json!({"content_args": null})),
            "fields.x.content_args",
            Kind::WrongType,
        );
    }

    #[test]
    fn scalar_parser_args() {
        for parser in ["text", "int", "float", "bool"] {
            assert_error(
                one_field(json!({"content": parser, "content_args": {"strip": 0}})),
                "fields.x.content_args.strip",
                Kind::WrongType,
            );
        }
        assert!(matches!(
            content(json!({"content": "int", "content_args": {"strip": false}})),
            ContentSpec::Int { strip: false }
        ));
        assert!(matches!(
            content(json!({"content": "float"})),
            ContentSpec::Float { strip: true }
        ));
        assert!(matches!(
            content(json!({"content": "bool"})),
            ContentSpec::Bool { strip: true }
        ));
    }

    #[test]
    fn json_args() {
        for key in ["unquoted_keys", "allow_non_json", "strip"] {
            assert_error(
                one_field(json!({"content": "json", "content_args": {key: "true"}})),
                &format!("fields.x.content_args.{key}"),
                Kind::WrongType,
            );
        }
        assert_error(
            one_field(json!({"content": "json", "content_args": {"string_delims": "<>"}})),
            "fields.x.content_args.string_delims",
            Kind::WrongType,
        );
        assert_error(
            one_field(
                json!({"content": "json", "content_args": {"string_delims": [["<", ">"], ["<"]]}}),
            ),
            "fields.x.content_args.string_delims[1]",
            Kind::StringDelimiterNotPair,
        );
        assert_error(
            one_field(json!({"content": "json", "content_args": {"string_delims": [["<", ""]]}})),
            "fields.x.content_args.string_delims[0][1]",
            Kind::EmptyStringDelimiter,
        );
        assert_error(
            one_field(json!({"content": "json", "content_args": {"string_delims": [[1, ">"]]}})),
            "fields.x.content_args.string_delims[0][0]",
            Kind::WrongType,
        );
        let spec = content(json!({"content": "json", "content_args": {
            "unquoted_keys": true, "string_delims": [["<|\"|>", "<|\"|>"]], "allow_non_json": true}}));
        match spec {
            ContentSpec::Json {
                unquoted_keys,
                string_delims,
                allow_non_json,
                strip,
            } => {
                assert!(unquoted_keys && allow_non_json && strip);
                assert_eq!(
                    string_delims,
                    vec![("<|\"|>".to_owned(), "<|\"|>".to_owned())]
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn xml_inline_args() {
        let xml = |args: Value| one_field(json!({"content": "xml-inline", "content_args": args}));
        assert_error(
            xml(json!({"tag_pattern": 1})),
            "fields.x.content_args.tag_pattern",
            Kind::WrongType,
        );
        assert_error(
            xml(json!({"tag_pattern": "<(?P<key>\\w+"})),
            "fields.x.content_args.tag_pattern",
            Kind::Regex(RegexIssueKind::Syntax),
        );
        assert_error(
            xml(json!({"tag_pattern": "<(?P<name>\\w+)>(?P<value>.*?)</(?P=name)>"})),
            "fields.x.content_args.tag_pattern",
            Kind::TagPatternWithoutKey,
        );
        assert_error(
            xml(json!({"tag_pattern": "<(?P<key>\\w+)>", "merge_duplicates": "yes"})),
            "fields.x.content_args.merge_duplicates",
            Kind::WrongType,
        );
        assert_error(
            xml(json!({"tag_pattern": "<(?P<key>\\w+)>", "value_parser": "json"})),
            "fields.x.content_args.value_parser",
            Kind::WrongType,
        );
        assert_error(
            xml(json!({"tag_pattern": "<(?P<key>\\w+)>", "value_parser": {"name": "yaml"}})),
            "fields.x.content_args.value_parser.name",
            Kind::UnknownContentParser,
        );
        assert_error(
            xml(
                json!({"tag_pattern": "<(?P<key>\\w+)>", "value_parser": {"name": "json",
                        "args": {"allow_non_json": 1}}}),
            ),
            "fields.x.content_args.value_parser.args.allow_non_json",
            Kind::WrongType,
        );
        assert_error(
            xml(json!({"tag_pattern": "<(?P<key>\\w+)>", "value_parser": {"args": null}})),
            "fields.x.content_args.value_parser.args",
            Kind::WrongType,
        );
        // The backreference of a real template compiles (tag_pattern runs on fancy-regex).
        let spec = content(json!({"content": "xml-inline", "content_args": {
            "tag_pattern": "<(?P<key>\\w+)>\\s*(?P<value>.*?)\\s*</\\1>",
            "value_parser": {"name": "json", "args": {"allow_non_json": true}},
            "merge_duplicates": true}}));
        match spec {
            ContentSpec::XmlInline {
                tag_pattern,
                tag_pattern_source,
                value_parser,
                merge_duplicates,
            } => {
                assert!(tag_pattern.is_some() && merge_duplicates);
                assert_eq!(
                    tag_pattern_source.as_deref(),
                    Some("<(?P<key>\\w+)>\\s*(?P<value>.*?)\\s*</\\1>")
                );
                assert!(matches!(
                    value_parser.as_deref(),
                    Some(ContentSpec::Json {
                        allow_non_json: true,
                        ..
                    })
                ));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn xml_inline_without_tag_pattern_loads() {
        // The reference fails only when such a region is parsed.
        for args in [json!({}), json!({"tag_pattern": null})] {
            let spec = content(json!({"content": "xml-inline", "content_args": args}));
            assert!(matches!(
                spec,
                ContentSpec::XmlInline {
                    tag_pattern: None,
                    tag_pattern_source: None,
                    value_parser: None,
                    merge_duplicates: false,
                }
            ));
        }
    }

    #[test]
    fn kv_lines_args() {
        let kv = |args: Value| one_field(json!({"content": "kv-lines", "content_args": args}));
        assert_error(
            kv(json!({"line_sep": ""})),
            "fields.x.content_args.line_sep",
            Kind::EmptySeparator,
        );
        assert_error(
            kv(json!({"line_sep": null})),
            "fields.x.content_args.line_sep",
            Kind::WrongType,
        );
        assert_error(
            kv(json!({"kv_sep": ""})),
            "fields.x.content_args.kv_sep",
            Kind::EmptySeparator,
        );
        assert_error(
            kv(json!({"strip": "no"})),
            "fields.x.content_args.strip",
            Kind::WrongType,
        );
        assert_error(
            kv(json!({"value_parser": {"name": "kv-lines", "args": {"kv_sep": ""}}})),
            "fields.x.content_args.value_parser.args.kv_sep",
            Kind::EmptySeparator,
        );
        match content(json!({"content": "kv-lines", "content_args": {
            "kv_sep": "=", "value_parser": {"name": "int"}}}))
        {
            ContentSpec::KvLines {
                line_sep,
                kv_sep,
                strip,
                value_parser,
            } => {
                assert_eq!(
                    (line_sep.as_str(), kv_sep.as_str(), strip),
                    ("\n", "=", true)
                );
                assert!(matches!(
                    value_parser.as_deref(),
                    Some(ContentSpec::Int { strip: true })
                ));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn json_call_list_arguments() {
        let calls = |args: Value| json!({"content": "json-call-list", "content_args": args});
        match content(calls(json!({}))) {
            ContentSpec::JsonCallList {
                brackets,
                separator,
                name_key,
                arguments_keys,
            } => {
                assert_eq!(brackets, CallBrackets::Required);
                assert_eq!((separator.as_str(), name_key.as_str()), (",", "name"));
                assert_eq!(arguments_keys, ["arguments"]);
            }
            other => panic!("{other:?}"),
        }
        match content(calls(json!({"brackets": "none", "separator": ";",
                                    "arguments_keys": ["parameters", "arguments"]})))
        {
            ContentSpec::JsonCallList {
                brackets,
                separator,
                arguments_keys,
                ..
            } => {
                assert_eq!(brackets, CallBrackets::Absent);
                assert_eq!(separator, ";");
                assert_eq!(arguments_keys, ["parameters", "arguments"]);
            }
            other => panic!("{other:?}"),
        }
        let at = "fields.x.content_args.";
        for (args, key, kind) in [
            (
                json!({"brackets": "maybe"}),
                "brackets",
                Kind::InvalidCallListArgument,
            ),
            (
                json!({"brackets": true}),
                "brackets",
                Kind::InvalidCallListArgument,
            ),
            (
                json!({"separator": " ;"}),
                "separator",
                Kind::InvalidCallListArgument,
            ),
            (json!({"separator": ""}), "separator", Kind::EmptySeparator),
            (json!({"separator": 1}), "separator", Kind::WrongType),
            (json!({"name_key": ""}), "name_key", Kind::EmptySeparator),
            (
                json!({"arguments_keys": []}),
                "arguments_keys",
                Kind::InvalidCallListArgument,
            ),
            (
                json!({"arguments_keys": ["a", ""]}),
                "arguments_keys",
                Kind::InvalidCallListArgument,
            ),
            (
                json!({"arguments_keys": "a"}),
                "arguments_keys",
                Kind::InvalidCallListArgument,
            ),
            // Unlike the reference's parsers, an unknown argument is an error.
            (json!({"strip": false}), "strip", Kind::UnknownKey),
        ] {
            assert_error(one_field(calls(args)), &format!("{at}{key}"), kind);
        }
    }

    #[test]
    fn value_parser_depth_is_bounded() {
        let mut parser = json!({"name": "text"});
        for _ in 0..MAX_VALUE_PARSER_DEPTH + 2 {
            parser = json!({"name": "kv-lines", "args": {"value_parser": parser}});
        }
        let error = one_error(one_field(json!({"content": "kv-lines",
            "content_args": {"value_parser": parser}})));
        assert_eq!(error.kind, Kind::ValueParserTooDeep, "{error}");
        assert!(error
            .path
            .starts_with("fields.x.content_args.value_parser.args.value_parser"));
    }

    #[test]
    fn unknown_content_args_are_ignored() {
        // The reference ignores them (it only `.get`s the keys it knows).
        assert!(matches!(
            content(json!({"content_args": {"strip": false, "tag_pattern": 5, "whatever": []}})),
            ContentSpec::Text { strip: false }
        ));
        let spec = content(json!({"content": "kv-lines", "content_args": {
            "value_parser": {"name": "int", "comment": "ignored"}}}));
        assert!(matches!(spec, ContentSpec::KvLines { .. }));
    }

    #[test]
    fn python_call_list_reads_no_arguments() {
        // The reference passes `content_args` to the parser, which reads none of them: any
        // object loads (values of other parsers' keys are not checked), as a field's parser
        // and as a `value_parser`.
        assert!(matches!(
            content(json!({"content": "python-call-list"})),
            ContentSpec::PythonCallList
        ));
        assert!(matches!(
            content(json!({"content": "python-call-list",
                           "content_args": {"strip": "no", "tag_pattern": 5, "line_sep": ""}})),
            ContentSpec::PythonCallList
        ));
        match content(json!({"content": "kv-lines", "content_args": {
            "value_parser": {"name": "python-call-list", "args": {"strip": 1}}}}))
        {
            ContentSpec::KvLines {
                value_parser: Some(vp),
                ..
            } => assert!(matches!(*vp, ContentSpec::PythonCallList)),
            other => panic!("{other:?}"),
        }
        // `content_args` must still be an object (stricter than the reference, as for every
        // parser).
        assert_error(
            one_field(json!({"content": "python-call-list", "content_args": []})),
            "fields.x.content_args",
            Kind::WrongType,
        );
    }

    #[test]
    fn three_problems_three_errors() {
        let errors = load(&json!({
            "version": 2,
            "start_anchor": "a",
            "fields": {"x": {"open": "", "join": 5, "repeats": true}}
        }))
        .unwrap_err();
        let found: Vec<(&str, Kind)> = errors.iter().map(|e| (e.path.as_str(), e.kind)).collect();
        assert_eq!(
            found,
            [
                ("version", Kind::UnsupportedVersion),
                ("fields.x.open", Kind::EmptyLiteral),
                ("fields.x.join", Kind::WrongType)
            ],
            "{errors}"
        );
    }

    #[test]
    fn many_problems_all_reported() {
        let errors = load(&json!({
            "bogus": 1,
            "defaults": 3,
            "fields": {
                "a": {"content": "yaml", "open_pattern": "(", "transform_each": true},
                "b": 7,
                "c": {"close": [], "optional": 1},
                "d": {}
            }
        }))
        .unwrap_err();
        let found: Vec<(&str, Kind)> = errors.iter().map(|e| (e.path.as_str(), e.kind)).collect();
        assert_eq!(
            found,
            [
                ("bogus", Kind::UnknownKey),
                ("defaults", Kind::WrongType),
                ("fields.a.content", Kind::UnknownContentParser),
                ("fields.a.open_pattern", Kind::Regex(RegexIssueKind::Syntax)),
                (
                    "fields.a.transform_each",
                    Kind::TransformEachWithoutTransform
                ),
                ("fields.b", Kind::WrongType),
                ("fields.c.close", Kind::EmptyLiteralList),
                ("fields.c.optional", Kind::WrongType),
                ("fields", Kind::MultipleImplicitFields),
                ("", Kind::MissingStartAnchor)
            ],
            "{errors}"
        );
    }

    #[test]
    fn odd_field_names_are_quoted() {
        assert_error(
            json!({"start_anchor": "a", "fields": {"a.b": {"open": ""}}}),
            "fields[\"a.b\"].open",
            Kind::EmptyLiteral,
        );
        assert_error(
            json!({"start_anchor": "a", "fields": {"名前": {"open": ""}}}),
            "fields.名前.open",
            Kind::EmptyLiteral,
        );
        assert_error(
            json!({"start_anchor": "a", "fields": {"": 1}}),
            "fields[\"\"]",
            Kind::WrongType,
        );
        assert_error(
            json!({"start_anchor": "a", "fields": {"x": {}}, "a b": 1}),
            "[\"a b\"]",
            Kind::UnknownKey,
        );
    }

    #[test]
    fn load_str_reports_json_position() {
        let errors = load_str("{\n  \"fields\": {,}\n}").unwrap_err();
        assert_eq!(errors.len(), 1);
        assert_eq!(
            (errors.0[0].path.as_str(), errors.0[0].kind),
            ("", Kind::InvalidJson)
        );
        // The position is in the reason (`load_str` knows no file), once.
        assert!(
            errors.0[0].reason.starts_with("invalid JSON at 2:"),
            "{errors}"
        );
        let model = load_str(r#"{"start_anchor": "a", "fields": {"x": {"open": "<x>"}}}"#).unwrap();
        assert_eq!(model.implicit, None);
    }

    #[test]
    fn defaults_and_field_order_are_kept() {
        let model = load_str(
            r#"{"defaults": {"z": 1, "a": 2}, "start_anchor_pattern": "<s>\\n?",
                "fields": {"zeta": {"open": "<z>"}, "alpha": {}, "mid": {"open": "<m>"}}}"#,
        )
        .unwrap();
        let names: Vec<&str> = model.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["zeta", "alpha", "mid"]);
        assert_eq!(model.implicit, Some(1));
        assert_eq!(model.defaults.keys().collect::<Vec<_>>(), ["z", "a"]);
        assert_eq!(model.start_anchor.source, "<s>\\n?");
        assert!(model.start_anchor.regex.is_match("<s>\n").unwrap());
    }
}
