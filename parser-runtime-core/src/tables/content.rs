//! Content parsers in the tables: one enum variant per parser, with its arguments, generic
//! over the storage. Everything a content parser needs from the tables lives here: the
//! variant, how the no-heap router treats it (`body_kind`), its `Debug`/`Clone`, the
//! static-to-owned conversion and (feature `codegen`) its code generation. The parser itself is
//! in `crate::content`; its `content_args` are read by `template_build::model`.

use core::fmt;

#[cfg(feature = "alloc")]
use alloc::{borrow::ToOwned, boxed::Box, string::String, string::ToString};

use super::Storage;
#[cfg(feature = "alloc")]
use super::{Owned, Static};
use crate::router::{BodyKind, ValueKind};

/// A content parser with its arguments, validated and compiled by the compiler.
///
/// Reference: `transformers/utils/chat_parsing/content_parsers.py` (`CONTENT_PARSERS`). Every
/// use matches on it exhaustively, so a new parser does not compile until each place handles
/// it (see docs/internals.md, "How to add a content parser").
pub enum Content<S: Storage> {
    /// `text`: the body, stripped of surrounding whitespace unless `strip` is false.
    Text {
        /// `strip` (default true).
        strip: bool,
    },
    /// `int`: Python's `int()` of the (stripped) body.
    Int {
        /// `strip` (default true).
        strip: bool,
    },
    /// `float`: Python's `float()` of the (stripped) body.
    Float {
        /// `strip` (default true).
        strip: bool,
    },
    /// `bool`: true when the (stripped) body lowercased is `true` or `1`.
    Bool {
        /// `strip` (default true).
        strip: bool,
    },
    /// `json`, with the dialect knobs of the reference's `_json`.
    Json {
        /// `unquoted_keys`: quote bare-identifier keys after `{` or `,`.
        unquoted_keys: bool,
        /// `string_delims`: custom string quote pairs `(open, close)`.
        string_delims: S::List<(S::Str, S::Str)>,
        /// `allow_non_json`: fall back to the (stripped) text when parsing fails.
        allow_non_json: bool,
        /// `strip`, used by the `allow_non_json` fallback (default true).
        strip: bool,
    },
    /// `xml-inline`: every match of `tag_pattern` gives a `key` and a `value`.
    XmlInline {
        /// The compiled `tag_pattern`; `None` when the template gives none (the reference
        /// raises when such a region is parsed).
        tag_pattern: Option<S::Fancy>,
        /// The pattern as written, for messages.
        tag_pattern_source: Option<S::Str>,
        /// `value_parser`: the parser applied to each value.
        value_parser: Option<S::Nested>,
        /// `merge_duplicates`: collect repeated keys into a list.
        merge_duplicates: bool,
    },
    /// `kv-lines`: `key<kv_sep>value` lines.
    KvLines {
        /// `line_sep` (default `"\n"`).
        line_sep: S::Str,
        /// `kv_sep` (default `":"`), split at its first occurrence.
        kv_sep: S::Str,
        /// `strip` (default true).
        strip: bool,
        /// `value_parser`: the parser applied to each value.
        value_parser: Option<S::Nested>,
    },
    /// `python-call-list`: a list of keyword-argument calls, `[f(a=1), g()]`, read into
    /// `[{"name", "arguments"}]` (no arguments: the reference reads none).
    PythonCallList,
    /// `json-call-list` (this project's, not the reference's: transformers 5.24.0 refuses the
    /// name at load): JSON call objects, in a bracketed list (`[{"name": .., "arguments":
    /// {..}}, ..]`) or one after another with a separator (`{..}; {..}`), read into
    /// `[{"name", "arguments"}]` like `python-call-list` (see `content::json_call_list`).
    JsonCallList {
        /// `brackets` (default `"required"`): whether the calls sit in `[` `]`.
        brackets: CallBrackets,
        /// `separator` (default `","`): what stands between two calls, whitespace around it
        /// skipped.
        separator: S::Str,
        /// `name_key` (default `"name"`): the key of a call object that holds the tool name.
        name_key: S::Str,
        /// `arguments_keys` (default `["arguments"]`): the keys that may hold the arguments
        /// object, in preference order; the first one a call has is read.
        arguments_keys: S::List<S::Str>,
    },
}

/// Whether a `json-call-list` body is a bracketed list (content argument `brackets`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallBrackets {
    /// `"required"`: `[` call, call `]` (an empty list is zero calls).
    Required,
    /// `"optional"`: a bracketed list when the body starts with `[`, else at least one bare call.
    Optional,
    /// `"none"`: at least one bare call, no brackets.
    Absent,
}

impl CallBrackets {
    /// The value as written in `content_args` (`required`, `optional`, `none`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Required => "required",
            Self::Optional => "optional",
            Self::Absent => "none",
        }
    }

    /// Reads the `content_args` spelling; `None` for anything else.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "required" => Self::Required,
            "optional" => Self::Optional,
            "none" => Self::Absent,
            _ => return None,
        })
    }
}

// `Debug` and `Clone` by hand: derived impls would bound `S::Nested`, which is `Content<S>`
// again (an endless requirement).
impl<S: Storage> fmt::Debug for Content<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Text { strip } => f.debug_struct("Text").field("strip", strip).finish(),
            Self::Int { strip } => f.debug_struct("Int").field("strip", strip).finish(),
            Self::Float { strip } => f.debug_struct("Float").field("strip", strip).finish(),
            Self::Bool { strip } => f.debug_struct("Bool").field("strip", strip).finish(),
            Self::Json {
                unquoted_keys,
                string_delims,
                allow_non_json,
                strip,
            } => f
                .debug_struct("Json")
                .field("unquoted_keys", unquoted_keys)
                .field("string_delims", string_delims)
                .field("allow_non_json", allow_non_json)
                .field("strip", strip)
                .finish(),
            Self::XmlInline {
                tag_pattern,
                tag_pattern_source,
                value_parser,
                merge_duplicates,
            } => f
                .debug_struct("XmlInline")
                .field("tag_pattern", tag_pattern)
                .field("tag_pattern_source", tag_pattern_source)
                .field("value_parser", value_parser)
                .field("merge_duplicates", merge_duplicates)
                .finish(),
            Self::KvLines {
                line_sep,
                kv_sep,
                strip,
                value_parser,
            } => f
                .debug_struct("KvLines")
                .field("line_sep", line_sep)
                .field("kv_sep", kv_sep)
                .field("strip", strip)
                .field("value_parser", value_parser)
                .finish(),
            Self::PythonCallList => f.write_str("PythonCallList"),
            Self::JsonCallList {
                brackets,
                separator,
                name_key,
                arguments_keys,
            } => f
                .debug_struct("JsonCallList")
                .field("brackets", brackets)
                .field("separator", separator)
                .field("name_key", name_key)
                .field("arguments_keys", arguments_keys)
                .finish(),
        }
    }
}

impl<S: Storage> Clone for Content<S> {
    fn clone(&self) -> Self {
        match self {
            Self::Text { strip } => Self::Text { strip: *strip },
            Self::Int { strip } => Self::Int { strip: *strip },
            Self::Float { strip } => Self::Float { strip: *strip },
            Self::Bool { strip } => Self::Bool { strip: *strip },
            Self::Json {
                unquoted_keys,
                string_delims,
                allow_non_json,
                strip,
            } => Self::Json {
                unquoted_keys: *unquoted_keys,
                string_delims: string_delims.clone(),
                allow_non_json: *allow_non_json,
                strip: *strip,
            },
            Self::XmlInline {
                tag_pattern,
                tag_pattern_source,
                value_parser,
                merge_duplicates,
            } => Self::XmlInline {
                tag_pattern: tag_pattern.clone(),
                tag_pattern_source: tag_pattern_source.clone(),
                value_parser: value_parser.clone(),
                merge_duplicates: *merge_duplicates,
            },
            Self::KvLines {
                line_sep,
                kv_sep,
                strip,
                value_parser,
            } => Self::KvLines {
                line_sep: line_sep.clone(),
                kv_sep: kv_sep.clone(),
                strip: *strip,
                value_parser: value_parser.clone(),
            },
            Self::PythonCallList => Self::PythonCallList,
            Self::JsonCallList {
                brackets,
                separator,
                name_key,
                arguments_keys,
            } => Self::JsonCallList {
                brackets: *brackets,
                separator: separator.clone(),
                name_key: name_key.clone(),
                arguments_keys: arguments_keys.clone(),
            },
        }
    }
}

impl<S: Storage> Content<S> {
    /// Whether the parser is structured (json, xml-inline, kv-lines, python-call-list,
    /// json-call-list): its
    /// chunks stream with `dirty: true`.
    pub fn is_structured(&self) -> bool {
        self.body_kind().value == ValueKind::Raw
    }

    /// How the no-heap router computes the region's value.
    pub fn body_kind(&self) -> BodyKind {
        let (value, strip) = match *self {
            Self::Text { strip } => (ValueKind::Text, strip),
            Self::Int { strip } => (ValueKind::Int, strip),
            Self::Float { strip } => (ValueKind::Float, strip),
            Self::Bool { strip } => (ValueKind::Bool, strip),
            Self::Json { .. }
            | Self::XmlInline { .. }
            | Self::KvLines { .. }
            | Self::PythonCallList
            | Self::JsonCallList { .. } => return BodyKind::RAW,
        };
        BodyKind { value, strip }
    }
}

#[cfg(feature = "alloc")]
impl Content<Static> {
    /// The run-time form of embedded content-parser tables: strings copied, the `tag_pattern`
    /// regex built. Errors: the regex builder's message.
    pub fn to_owned_content(&self) -> Result<Content<Owned>, String> {
        let value_parser = |v: Option<&&'static Content<Static>>| {
            v.map(|v| v.to_owned_content().map(Box::new)).transpose()
        };
        Ok(match *self {
            Content::Text { strip } => Content::Text { strip },
            Content::Int { strip } => Content::Int { strip },
            Content::Float { strip } => Content::Float { strip },
            Content::Bool { strip } => Content::Bool { strip },
            Content::Json {
                unquoted_keys,
                string_delims,
                allow_non_json,
                strip,
            } => Content::Json {
                unquoted_keys,
                string_delims: string_delims
                    .iter()
                    .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
                    .collect(),
                allow_non_json,
                strip,
            },
            Content::XmlInline {
                tag_pattern,
                tag_pattern_source,
                value_parser: ref vp,
                merge_duplicates,
            } => Content::XmlInline {
                tag_pattern: tag_pattern
                    .map(fancy_regex::Regex::new)
                    .transpose()
                    .map_err(|e| e.to_string())?,
                tag_pattern_source: tag_pattern_source.map(str::to_owned),
                value_parser: value_parser(vp.as_ref())?,
                merge_duplicates,
            },
            Content::KvLines {
                line_sep,
                kv_sep,
                strip,
                value_parser: ref vp,
            } => Content::KvLines {
                line_sep: line_sep.to_owned(),
                kv_sep: kv_sep.to_owned(),
                strip,
                value_parser: value_parser(vp.as_ref())?,
            },
            Content::PythonCallList => Content::PythonCallList,
            Content::JsonCallList {
                brackets,
                separator,
                name_key,
                arguments_keys,
            } => Content::JsonCallList {
                brackets,
                separator: separator.to_owned(),
                name_key: name_key.to_owned(),
                arguments_keys: arguments_keys.iter().map(|k| (*k).to_owned()).collect(),
            },
        })
    }
}

/// Code generation (feature `codegen`, used by `template-build`): the `Content<Static>`
/// expression of a run-time content parser, naming items through
/// `::parser_runtime::__private`.
#[cfg(feature = "codegen")]
impl Content<Owned> {
    /// The const expression of this content parser as [`Static`] data.
    pub fn to_tokens(&self) -> proc_macro2::TokenStream {
        use quote::quote;
        let nested = |v: &Option<Box<Content<Owned>>>| match v {
            Some(v) => {
                let inner = v.to_tokens();
                quote!(::core::option::Option::Some(&#inner))
            }
            None => quote!(::core::option::Option::None),
        };
        let text = |v: Option<&str>| match v {
            Some(v) => quote!(::core::option::Option::Some(#v)),
            None => quote!(::core::option::Option::None),
        };
        let path = quote!(::parser_runtime::__private::Content);
        match self {
            Self::Text { strip } => quote!(#path::Text { strip: #strip }),
            Self::Int { strip } => quote!(#path::Int { strip: #strip }),
            Self::Float { strip } => quote!(#path::Float { strip: #strip }),
            Self::Bool { strip } => quote!(#path::Bool { strip: #strip }),
            Self::Json {
                unquoted_keys,
                string_delims,
                allow_non_json,
                strip,
            } => {
                let delims = string_delims.iter().map(|(a, b)| quote!((#a, #b)));
                quote! {
                    #path::Json {
                        unquoted_keys: #unquoted_keys,
                        string_delims: &[ #( #delims ),* ],
                        allow_non_json: #allow_non_json,
                        strip: #strip,
                    }
                }
            }
            Self::XmlInline {
                tag_pattern,
                tag_pattern_source,
                value_parser,
                merge_duplicates,
            } => {
                let pattern = text(tag_pattern.as_ref().map(fancy_regex::Regex::as_str));
                let source = text(tag_pattern_source.as_deref());
                let vp = nested(value_parser);
                quote! {
                    #path::XmlInline {
                        tag_pattern: #pattern,
                        tag_pattern_source: #source,
                        value_parser: #vp,
                        merge_duplicates: #merge_duplicates,
                    }
                }
            }
            Self::KvLines {
                line_sep,
                kv_sep,
                strip,
                value_parser,
            } => {
                let vp = nested(value_parser);
                quote! {
                    #path::KvLines {
                        line_sep: #line_sep,
                        kv_sep: #kv_sep,
                        strip: #strip,
                        value_parser: #vp,
                    }
                }
            }
            Self::PythonCallList => quote!(#path::PythonCallList),
            Self::JsonCallList {
                brackets,
                separator,
                name_key,
                arguments_keys,
            } => {
                let brackets = match brackets {
                    CallBrackets::Required => quote!(Required),
                    CallBrackets::Optional => quote!(Optional),
                    CallBrackets::Absent => quote!(Absent),
                };
                let keys = arguments_keys.iter();
                quote! {
                    #path::JsonCallList {
                        brackets: ::parser_runtime::__private::CallBrackets::#brackets,
                        separator: #separator,
                        name_key: #name_key,
                        arguments_keys: &[ #( #keys ),* ],
                    }
                }
            }
        }
    }
}
