//! Field roles: which field holds tool calls (and how a call is written), which one the
//! reasoning and which one the content. Decided here, once, and stored in the tables
//! ([`Role`]); the engine and `constrain` read the role instead of comparing field names.

use parser_runtime_core::tables::{Content, Role, ToolFamily};
use serde_json::Value;

use crate::model::FieldModel;

/// Reasoning field names, in preference order: the first one with an open and a close
/// delimiter and `text` content is the reasoning region.
pub const REASONING: &[&str] = &["reasoning_content", "thinking", "reasoning"];

/// Sets the role of every field.
pub fn assign(fields: &mut [FieldModel]) {
    let reasoning = REASONING.iter().find_map(|name| {
        fields.iter().position(|f| {
            f.name == *name
                && f.open.is_some()
                && f.close.is_some()
                && matches!(f.content, Content::Text { .. })
        })
    });
    for (i, f) in fields.iter_mut().enumerate() {
        f.role = if f.name == "tool_calls" {
            Role::ToolCalls { family: family(f) }
        } else if Some(i) == reasoning {
            Role::Reasoning
        } else if f.name == "content" {
            Role::Content
        } else {
            Role::Other
        };
    }
}

/// How an XML-parameters body writes one parameter `K` = `V`: `before_key` K `after_key` V
/// `end_tag` `between`, after `start` (the body's first text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XmlStyle {
    /// What the body starts with.
    pub start: &'static str,
    /// The text before the key.
    pub before_key: &'static str,
    /// The text between the key and the value.
    pub after_key: &'static str,
    /// The text after the value: the tag pattern's value ends at the first `end_tag`.
    pub end_tag: &'static str,
    /// What the value's text ends with before `end_tag` (layout).
    pub before_end: &'static str,
    /// The text after each parameter.
    pub between: &'static str,
    /// Text the tag pattern ignores that may end the body (Qwen3-Coder and Nemotron 3 write
    /// `</function>` after the last parameter), or `""`.
    pub end: &'static str,
}

impl XmlStyle {
    /// One parameter as written.
    pub fn tag(&self, key: &str, value: &str) -> String {
        format!(
            "{}{key}{}{value}{}{}{}",
            self.before_key, self.after_key, self.before_end, self.end_tag, self.between
        )
    }

    /// Whether `tag_pattern` reads `key` and `value` back from [`Self::tag`].
    pub fn reads_back(&self, tag_pattern: &fancy_regex::Regex, key: &str, value: &str) -> bool {
        matches!(tag_pattern.captures(&self.tag(key, value)), Ok(Some(c))
            if c.name("key").map(|m| m.as_str()) == Some(key)
                && c.name("value").map(|m| m.as_str()) == Some(value))
    }
}

/// The parameter tags constrained generation writes, in preference order: Qwen3-Coder's
/// (and Nemotron 3's) `<parameter=K>\nV\n</parameter>`, MiniMax M2's
/// `<parameter name="K">V</parameter>`, GLM 4.5's `<arg_key>K</arg_key>\n<arg_value>V</arg_value>`.
pub const XML_STYLES: [XmlStyle; 3] = [
    XmlStyle {
        start: "\n",
        before_key: "<parameter=",
        after_key: ">\n",
        end_tag: "</parameter>",
        before_end: "\n",
        between: "\n",
        end: "</function>\n",
    },
    XmlStyle {
        start: "\n",
        before_key: "<parameter name=\"",
        after_key: "\">",
        end_tag: "</parameter>",
        before_end: "",
        between: "\n",
        end: "",
    },
    XmlStyle {
        start: "\n",
        before_key: "<arg_key>",
        after_key: "</arg_key>\n<arg_value>",
        end_tag: "</arg_value>",
        before_end: "",
        between: "\n",
        end: "",
    },
];

/// The first of [`XML_STYLES`] whose tags `tag_pattern` reads back.
pub fn xml_style(tag_pattern: &fancy_regex::Regex) -> Option<&'static XmlStyle> {
    XML_STYLES
        .iter()
        .find(|s| s.reads_back(tag_pattern, "k_1", "v a"))
}

/// Whether `tag_pattern` reads keyword arguments `k=v` back whole, for each kind of value
/// [`ToolFamily::PythonKeywords`] writes: a single-quoted string (commas inside), a bare
/// literal, a JSON object with nested brackets.
pub fn keyword_tags(tag_pattern: &fancy_regex::Regex) -> bool {
    [
        "'v a, b'",
        "12",
        "-1.5e3",
        "true",
        r#"{"a": [1, {"b": "c, d"}]}"#,
        "[]",
    ]
    .iter()
    .all(|v| keyword_reads_back(tag_pattern, "k_1", v))
}

/// Whether `tag_pattern` reads `key=value` back as that key and value.
pub fn keyword_reads_back(tag_pattern: &fancy_regex::Regex, key: &str, value: &str) -> bool {
    matches!(tag_pattern.captures(&format!("{key}={value}")), Ok(Some(c))
        if c.name("key").map(|m| m.as_str()) == Some(key)
            && c.name("value").map(|m| m.as_str()) == Some(value))
}

/// The key a whole-string placeholder `"{key}"` reads, when it is one top-level key of the
/// parsed value (not `{content}`, the value itself, nor a dotted path).
fn placeholder_key(value: Option<&Value>) -> Option<&str> {
    let key = value?.as_str()?.strip_prefix('{')?.strip_suffix('}')?;
    (!key.is_empty() && key != "content" && !key.contains(['.', '{', '}'])).then_some(key)
}

/// The tool-call family of a `tool_calls` field, when it is one of the shapes constrained
/// generation writes (see [`ToolFamily`]).
fn family(field: &FieldModel) -> Option<ToolFamily> {
    let has_name = |d: Option<&crate::model::DelimiterSpec>| {
        d.is_some_and(|d| d.group_names().iter().any(|n| n == "name"))
    };
    // A `name` group in the close would replace the open's (transformers 5.24): the name
    // written in the open would not be the one read.
    let open_has_name = has_name(field.open.as_ref()) && !has_name(field.close.as_ref());
    let transform = field.transform.as_ref()?;
    let whole = serde_json::json!({"type": "function", "function": "{content}"});
    let named = transform.pointer("/function/name") == Some(&Value::from("{name}"))
        && transform.pointer("/function/arguments") == Some(&Value::from("{content}"));
    // Each call of a list: the name and the arguments from keys of the call.
    let keyed = |name: &str, arguments: &str| {
        placeholder_key(transform.pointer("/function/name")) == Some(name)
            && placeholder_key(transform.pointer("/function/arguments")) == Some(arguments)
    };
    let listed = |name: Option<&str>, arguments: Option<&str>| {
        field.transform_each
            && !open_has_name
            && name.zip(arguments).is_some_and(|(n, a)| keyed(n, a))
    };
    match &field.content {
        Content::JsonCallList { .. } if listed(Some("name"), Some("arguments")) => {
            Some(ToolFamily::JsonCallList)
        }
        Content::PythonCallList if listed(Some("name"), Some("arguments")) => {
            Some(ToolFamily::PythonCallList)
        }
        Content::Json {
            allow_non_json: false,
            string_delims,
            ..
        } if string_delims.is_empty()
            && listed(
                placeholder_key(transform.pointer("/function/name")),
                placeholder_key(transform.pointer("/function/arguments")),
            ) =>
        {
            Some(ToolFamily::JsonList)
        }
        Content::Json {
            allow_non_json: false,
            ..
        } if *transform == whole && !open_has_name => Some(ToolFamily::JsonCall),
        Content::Json {
            allow_non_json: false,
            ..
        } if named && open_has_name => Some(ToolFamily::NamedJson),
        Content::XmlInline {
            tag_pattern: Some(re),
            value_parser: Some(p),
            merge_duplicates: false,
            ..
        } if named
            && open_has_name
            && matches!(&**p, Content::Json {
                unquoted_keys: false,
                string_delims,
                allow_non_json: true,
                ..
            } if string_delims.len() == 1 && string_delims[0].0 == "'" && string_delims[0].1 == "'")
            && keyword_tags(re) =>
        {
            Some(ToolFamily::PythonKeywords)
        }
        Content::XmlInline {
            tag_pattern: Some(re),
            value_parser,
            ..
        } if named
            && open_has_name
            && value_parser
                .as_deref()
                .is_none_or(|p| matches!(p, Content::Text { .. })) =>
        {
            // The parameter tags this family writes must read back as (key, value).
            xml_style(re).map(|_| ToolFamily::XmlParameters)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parser_runtime_core::tables::Role;

    fn roles(template: Value) -> Vec<(String, Role)> {
        let model = crate::model::load(&template).expect("template loads");
        model.fields.into_iter().map(|f| (f.name, f.role)).collect()
    }

    #[test]
    fn lfm25_calls_are_keyword_arguments() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../templates/lfm2.5.json");
        let mut value: Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let family = |value: &Value| {
            roles(value.clone())
                .into_iter()
                .find(|(name, _)| name == "tool_calls")
                .map(|(_, role)| role)
        };
        assert_eq!(
            family(&value),
            Some(Role::ToolCalls {
                family: Some(ToolFamily::PythonKeywords)
            })
        );
        // Another value parser, or a tag pattern that cuts a string at its comma: no family.
        let args = "/fields/tool_calls/content_args";
        let mut other = value.clone();
        *other.pointer_mut(&format!("{args}/value_parser")).unwrap() =
            serde_json::json!({"name": "int"});
        assert_eq!(family(&other), Some(Role::ToolCalls { family: None }));
        *value.pointer_mut(&format!("{args}/tag_pattern")).unwrap() =
            Value::from("(?P<key>\\w+)=(?P<value>[^,)]*)");
        assert_eq!(family(&value), Some(Role::ToolCalls { family: None }));
    }

    #[test]
    fn roles_follow_names_and_shapes() {
        let got = roles(serde_json::json!({
            "start_anchor": "<|im_start|>assistant",
            "fields": {
                "thinking": {"open": "<think>", "close": "</think>"},
                "reasoning": {"open": "<r>", "close": "</r>"},
                "tool_calls": {
                    "open": "<tool_call>", "close": "</tool_call>", "repeats": true,
                    "content": "json",
                    "transform": {"type": "function", "function": "{content}"}
                },
                "content": {}
            }
        }));
        assert_eq!(
            got,
            vec![
                ("thinking".into(), Role::Reasoning),
                ("reasoning".into(), Role::Other),
                (
                    "tool_calls".into(),
                    Role::ToolCalls {
                        family: Some(ToolFamily::JsonCall)
                    }
                ),
                ("content".into(), Role::Content),
            ]
        );
    }

    #[test]
    fn reasoning_needs_both_delimiters_and_text() {
        let got = roles(serde_json::json!({
            "start_anchor": "<s>",
            "fields": {
                "reasoning_content": {"open": "<think>", "content": "json", "close": "</think>"},
                "thinking": {"open": "<t>"},
                "reasoning": {"open": "<r>", "close": "</r>"},
                "tool_calls": {"open_pattern": "<call (?P<name>\\w+)>", "close": "</call>",
                               "content": "json",
                               "transform": {"function": {"name": "{name}",
                                                          "arguments": "{content}"}}}
            }
        }));
        assert_eq!(got[0].1, Role::Other);
        assert_eq!(got[1].1, Role::Other);
        assert_eq!(got[2].1, Role::Reasoning);
        assert_eq!(
            got[3].1,
            Role::ToolCalls {
                family: Some(ToolFamily::NamedJson)
            }
        );
    }

    #[test]
    fn python_call_lists_have_their_family() {
        let got = roles(serde_json::json!({
            "start_anchor": "<|im_start|>assistant\n",
            "fields": {"tool_calls": {
                "open": "<|tool_call_start|>", "close": "<|tool_call_end|>",
                "content": "python-call-list", "transform_each": true,
                "transform": {"type": "function",
                              "function": {"name": "{name}", "arguments": "{arguments}"}}
            }}
        }));
        assert_eq!(
            got[0].1,
            Role::ToolCalls {
                family: Some(ToolFamily::PythonCallList)
            }
        );
    }

    #[test]
    fn lists_of_json_calls_have_their_families() {
        let family = |content: Value, transform: Value| {
            roles(serde_json::json!({
                "start_anchor": "<s>",
                "fields": {"tool_calls": {"open": "<a>", "close": "</a>", "content": content,
                                          "transform_each": true, "transform": transform}}
            }))[0]
                .1
        };
        let keys = |name: &str, arguments: &str| {
            serde_json::json!({"type": "function",
                               "function": {"name": name, "arguments": arguments}})
        };
        assert_eq!(
            family("json-call-list".into(), keys("{name}", "{arguments}")),
            Role::ToolCalls {
                family: Some(ToolFamily::JsonCallList)
            }
        );
        assert_eq!(
            family("json".into(), keys("{tool_name}", "{parameters}")),
            Role::ToolCalls {
                family: Some(ToolFamily::JsonList)
            }
        );
        // A dotted path or the whole element is not one key of a call.
        for (name, arguments) in [("{call.name}", "{arguments}"), ("{name}", "{content}")] {
            assert_eq!(
                family("json".into(), keys(name, arguments)),
                Role::ToolCalls { family: None }
            );
        }
    }

    #[test]
    fn xml_parameters_in_three_tag_styles() {
        let family = |tag_pattern: &str, value_parser: Value| {
            roles(serde_json::json!({
                "start_anchor": "<s>",
                "fields": {"tool_calls": {"open_pattern": "<call (?P<name>\\w+)>",
                    "close": "</call>", "content": "xml-inline",
                    "content_args": {"tag_pattern": tag_pattern, "value_parser": value_parser},
                    "transform": {"function": {"name": "{name}", "arguments": "{content}"}}}}
            }))[0]
                .1
        };
        let xml = Role::ToolCalls {
            family: Some(ToolFamily::XmlParameters),
        };
        let text = serde_json::json!({"name": "text"});
        // Qwen3-Coder / Nemotron 3, MiniMax M2, GLM 4.5.
        for pattern in [
            "<parameter=(?P<key>[^>\\n]+)>\\s*(?P<value>.*?)\\s*</parameter>",
            "<parameter name=\"(?P<key>[^\"]+)\">(?P<value>.*?)</parameter>",
            "<arg_key>(?P<key>[^<]+)</arg_key>\\s*(?:<arg_value>)?(?P<value>.*?)</arg_value>",
        ] {
            assert_eq!(family(pattern, text.clone()), xml, "{pattern}");
        }
        // A value parser other than text, or tags of another shape: none.
        let qwen = "<parameter=(?P<key>[^>\\n]+)>\\s*(?P<value>.*?)\\s*</parameter>";
        let json = serde_json::json!({"name": "json"});
        assert_eq!(family(qwen, json), Role::ToolCalls { family: None });
        assert_eq!(
            family("<p k=(?P<key>\\w+)>(?P<value>.*?)</p>", text),
            Role::ToolCalls { family: None }
        );
    }

    #[test]
    fn a_name_group_in_the_close_leaves_no_family() {
        // The name in the open, JSON arguments; `close` is the close pattern.
        let family = |close: &str| {
            roles(serde_json::json!({
                "start_anchor": "<s>",
                "fields": {"tool_calls": {"open_pattern": "<call (?P<name>\\w+)>",
                                          "close_pattern": close, "content": "json",
                                          "transform": {"function": {"name": "{name}",
                                                                     "arguments": "{content}"}}}}
            }))[0]
                .1
        };
        assert_eq!(
            family("</call(?: (?P<name>\\w+))?>"),
            Role::ToolCalls { family: None }
        );
        // Other groups in the close leave the name alone.
        assert_eq!(
            family("</call(?: (?P<id>\\d+))?>"),
            Role::ToolCalls {
                family: Some(ToolFamily::NamedJson)
            }
        );
    }

    #[test]
    fn unknown_call_shapes_have_no_family() {
        let got = roles(serde_json::json!({
            "start_anchor": "<s>",
            "fields": {"tool_calls": {"open": "[", "close": "]", "content": "text"}}
        }));
        assert_eq!(got[0].1, Role::ToolCalls { family: None });
    }
}
