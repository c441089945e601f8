//! Errors of the runtime: [`ContentError`] (a region body that its content parser or transform
//! rejects) and [`ParseError`] (what `feed`, `finalize` and `parse_response` return).

use alloc::string::String;
use alloc::vec::Vec;

/// Why a region body could not be turned into a value.
///
/// Reference: the `ValueError`/`KeyError` raised by `content_parsers.py` (`_int`, `_float`,
/// `_json`, `_xml_inline`, `_python_call_list`, `_apply_transform`, `process_field`) and by
/// `ResponseParser._close_current` (`join`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ContentError {
    /// `int` parser: the text is not a Python integer literal (`int()` rules).
    #[error("int: invalid integer literal {text:?}")]
    InvalidInt {
        /// The text after stripping.
        text: String,
    },
    /// `float` parser: the text is not a Python float literal (`float()` rules).
    #[error("float: invalid float literal {text:?}")]
    InvalidFloat {
        /// The text after stripping.
        text: String,
    },
    /// `json` parser: the text (after the dialect transforms) is not JSON.
    #[error("json: cannot parse region as JSON at byte {offset}: {reason}")]
    InvalidJson {
        /// The reason given by the JSON parser.
        reason: String,
        /// Byte offset in the (transformed) text where parsing failed.
        offset: usize,
    },
    /// `python-call-list` parser: the body is not a list of keyword-argument calls in the
    /// parser's grammar (see `content::python_call_list`).
    #[error("python-call-list: {reason} at byte {offset}")]
    InvalidCallList {
        /// What is wrong.
        reason: String,
        /// Byte offset in the region body: where the offending token starts (a string's
        /// opening quote for errors inside a string; just after the closing bracket for a
        /// repeated keyword argument or dict key).
        offset: usize,
    },
    /// `json-call-list` parser (this project's): the body is not a list or sequence of JSON
    /// call objects in the shape its `content_args` give (see `content::json_call_list`).
    #[error("json-call-list: {reason} at byte {offset}")]
    InvalidJsonCalls {
        /// What is wrong.
        reason: String,
        /// Byte offset in the region body: where the offending token starts (the call's `{`
        /// for a call without a usable name or arguments; where JSON parsing failed inside a
        /// call).
        offset: usize,
    },
    /// `json` with `string_delims`: the body contains the reserved sentinels `\x01`/`\x02`.
    #[error("json: input contains reserved sentinel characters (\\x01/\\x02)")]
    ReservedSentinel,
    /// `xml-inline` without `tag_pattern`.
    #[error("xml-inline: 'tag_pattern' content_arg is required")]
    MissingTagPattern,
    /// `xml-inline`: `tag_pattern` has no named group `key`.
    #[error("xml-inline: tag_pattern {pattern:?} has no named group 'key'")]
    MissingKeyGroup {
        /// The pattern.
        pattern: String,
    },
    /// A regex failed while running (e.g. backtrack limit of a `tag_pattern`).
    #[error("regex error: {0}")]
    Regex(String),
    /// A transform placeholder names a root that is not defined.
    #[error("transform placeholder '{{{path}}}' is not defined; available: {available:?}")]
    UndefinedPlaceholder {
        /// The placeholder path, e.g. `content.args`.
        path: String,
        /// The names that were defined.
        available: Vec<String>,
    },
    /// A dotted placeholder indexes into a value that is not an object.
    #[error("transform placeholder '{{{path}}}' cannot index into {found} at '{key}'")]
    NotAnObject {
        /// The placeholder path.
        path: String,
        /// The key that could not be looked up.
        key: String,
        /// The JSON type found instead (Python type name, e.g. `list`).
        found: String,
    },
    /// A dotted placeholder names a key the object lacks.
    #[error("transform placeholder '{{{path}}}' is missing key '{key}'; available: {available:?}")]
    MissingKey {
        /// The placeholder path.
        path: String,
        /// The missing key.
        key: String,
        /// The keys present.
        available: Vec<String>,
    },
    /// A `transform` would produce more than its cap allows (see
    /// `transform::TransformLimit`; `ResponseParser::set_transform_limit`).
    #[error("transform: its placeholders would produce more than the cap of {limit} bytes (TransformLimit: a multiple of the region's body and named groups; raise it with set_transform_limit or --transform-limit)")]
    TransformTooLarge {
        /// The cap, in bytes, for this region.
        limit: usize,
    },
    /// `transform_each` on a body that did not parse to a list.
    #[error("transform_each requires the parsed content to be a list, got {found}")]
    TransformEachNotList {
        /// The JSON type found (Python type name).
        found: String,
    },
    /// `transform_each` on a list with an element that is not an object.
    #[error("transform_each requires each list element to be a dict, got {found}")]
    TransformEachItemNotObject {
        /// The JSON type found (Python type name).
        found: String,
    },
    /// `join` on a match that did not parse to a string.
    #[error("'join' requires each match to parse to a string, got {found}")]
    JoinNotString {
        /// The JSON type found (Python type name).
        found: String,
    },
    /// `join`: the message already holds a non-string value under the field's key (from
    /// `defaults`); the reference's `previous + join + value` raises `TypeError`.
    #[error("'join' cannot append to the existing {found} value of the field (from defaults)")]
    JoinTargetNotString {
        /// The JSON type found (Python type name).
        found: String,
    },
    /// `repeats`: the message already holds a non-list value under the field's key (from
    /// `defaults`); the reference's `setdefault(name, []).append(value)` raises.
    #[error("'repeats' cannot append to the existing {found} value of the field (from defaults)")]
    RepeatsTargetNotList {
        /// The JSON type found (Python type name).
        found: String,
    },
}

/// An error of the streaming parser or of `parse_response`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParseError {
    /// A region's body could not be parsed (content parser, transform or join).
    #[error("field {field:?} (region body starting at byte {offset} of the {}): {source}", if *in_prefix { "prefix after its last start anchor" } else { "output" })]
    Content {
        /// The field name.
        field: String,
        /// Byte offset where the region's body starts: in the output, or, when `in_prefix`,
        /// in the prefix after its last start anchor.
        offset: usize,
        /// Whether the region's body started in the prefix (a prefilled region).
        in_prefix: bool,
        /// The cause.
        source: ContentError,
    },
    /// `optional: false` fields absent at finalize.
    #[error("required response_template fields missing from parsed output: {0:?}")]
    MissingRequired(Vec<String>),
    /// `feed`/`finalize` after `finalize`.
    #[error("ResponseParser already finalized")]
    Finalized,
    /// A parser was constructed without a prefix (`None`). Pass `Some("")` to opt out.
    #[error("a prefix is required (the chat prompt before the generation); pass an empty prefix to opt out explicitly")]
    MissingPrefix,
    /// Batch parsing with a number of prefixes different from the number of outputs.
    #[error("{outputs} outputs but {prefixes} prefixes")]
    BatchLengthMismatch {
        /// Number of outputs.
        outputs: usize,
        /// Number of prefixes.
        prefixes: usize,
    },
    /// A field's open and close both match the empty string at one position, so the
    /// parser could not make progress (the reference loops forever here).
    #[error("field {field:?}: open and close delimiters both match the empty string at byte {offset} of the {}; the template cannot make progress", if *in_prefix { "prefix after its last start anchor" } else { "output" })]
    NoProgress {
        /// The field name.
        field: String,
        /// Byte offset in the output, or, when `in_prefix`, in the prefix after its last start
        /// anchor.
        offset: usize,
        /// Whether the position is in the prefix.
        in_prefix: bool,
    },
    /// Bytes given to `feed_bytes` are not UTF-8 (or the output ended inside a character).
    #[error("invalid UTF-8 in the output at byte {offset}")]
    InvalidUtf8 {
        /// Byte offset in the output (all bytes fed so far).
        offset: usize,
    },
    /// More text is held back (a delimiter that may still match) than the parser's hold
    /// limit allows (`ResponseParser::set_hold_limit`).
    #[error("{held} bytes held back from byte {offset} while a delimiter may still match, over the limit of {limit}")]
    HoldOverflow {
        /// Byte offset in the output where the held text starts.
        offset: usize,
        /// Bytes held.
        held: usize,
        /// The limit.
        limit: usize,
    },
    /// The last start anchor in the prefix could not be found (see
    /// [`crate::tables::AnchorError`]: a time budget, or the regex engine's own limit).
    #[error("{0}")]
    StartAnchor(crate::tables::AnchorError),
    /// A routing limit of the region router (see [`crate::router::RouteError`]).
    #[error(transparent)]
    Route(crate::router::RouteError),
    /// Tables embedded by `response_template!` or build.rs could not be loaded (see
    /// [`crate::statics::TableError`]).
    #[error(transparent)]
    Tables(#[from] crate::statics::TableError),
}
