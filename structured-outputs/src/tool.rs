//! OpenAI tool JSON, read once for every consumer (no `std`): the parser's argument typing
//! (`parser-runtime-core`, which skips what it cannot read, as the reference does), strict
//! tools ([`crate::StrictTools`], which report it) and constrained generation (`constrain`,
//! through strict tools).
//!
//! A tool list is `[{"type": "function", "function": {"name", "description", "parameters",
//! "strict"}}, ...]`; an item without a `function` member holds those fields itself (`{"name",
//! "parameters"}`). Errors name the JSON pointer of the offending part, relative to the list
//! (`/0/function/name`).

use alloc::format;
use alloc::string::String;
use core::fmt;

use serde_json::{Map, Value};

/// One tool of a tool list, as declared (borrowed from the list).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tool<'a> {
    /// Its place in the list.
    pub index: usize,
    /// Whether its fields are in a `function` member (`{"type": "function", "function":
    /// {...}}`) rather than in the item itself.
    pub wrapped: bool,
    /// `name`.
    pub name: &'a str,
    /// `description`, when it is a string.
    pub description: Option<&'a str>,
    /// `parameters` (a JSON Schema), whatever its value.
    pub parameters: Option<&'a Value>,
    /// `strict`, when it is a boolean.
    pub strict: Option<bool>,
}

impl<'a> Tool<'a> {
    /// Reads the item at `index` of a tool list: the fields of its `function` member when it
    /// has one (whatever its value), else its own.
    ///
    /// Errors: [`ToolErrorKind::NoName`] when that object has no string `name` (or is no
    /// object).
    pub fn read(item: &'a Value, index: usize) -> Result<Self, ToolError> {
        let (function, wrapped) = match item.get("function") {
            Some(f) => (f, true),
            None => (item, false),
        };
        let Some(name) = function.get("name").and_then(Value::as_str) else {
            return Err(ToolError {
                pointer: format!("{}/name", base(index, wrapped)),
                kind: ToolErrorKind::NoName,
            });
        };
        Ok(Self {
            index,
            wrapped,
            name,
            description: function.get("description").and_then(Value::as_str),
            parameters: function.get("parameters"),
            strict: function.get("strict").and_then(Value::as_bool),
        })
    }

    /// The JSON pointer of the object holding the tool's fields, in the list: `/{index}/function`
    /// or `/{index}`.
    pub fn pointer(&self) -> String {
        base(self.index, self.wrapped)
    }

    /// The parameters schema.
    ///
    /// Errors: [`ToolErrorKind::NoParameters`] (at `.../parameters`) when the tool has none.
    pub fn require_parameters(&self) -> Result<&'a Value, ToolError> {
        self.parameters.ok_or_else(|| ToolError {
            pointer: format!("{}/parameters", self.pointer()),
            kind: ToolErrorKind::NoParameters(self.name.into()),
        })
    }

    /// The declared parameters: the `properties` object of the parameters schema, when both are
    /// objects.
    pub fn properties(&self) -> Option<&'a Map<String, Value>> {
        self.parameters?.get("properties")?.as_object()
    }

    /// The error for this tool when an earlier tool has its name (at `.../name`).
    pub fn duplicate(&self) -> ToolError {
        ToolError {
            pointer: format!("{}/name", self.pointer()),
            kind: ToolErrorKind::Duplicate(self.name.into()),
        }
    }
}

fn base(index: usize, wrapped: bool) -> String {
    if wrapped {
        format!("/{index}/function")
    } else {
        format!("/{index}")
    }
}

/// Every item of a tool list, in order, read by [`Tool::read`].
pub fn read_tools(tools: &[Value]) -> impl Iterator<Item = Result<Tool<'_>, ToolError>> {
    tools
        .iter()
        .enumerate()
        .map(|(index, item)| Tool::read(item, index))
}

/// What is wrong with a tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolErrorKind {
    /// No string `name`.
    NoName,
    /// The named tool has no `parameters`.
    NoParameters(String),
    /// The named tool is declared again.
    Duplicate(String),
}

/// A tool that cannot be read: where (a JSON pointer into the tool list) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    /// JSON pointer into the tool list (`/0/function/name`).
    pub pointer: String,
    /// What is wrong.
    pub kind: ToolErrorKind,
}

impl ToolError {
    /// The field at fault: `name` or `parameters`.
    pub fn keyword(&self) -> &'static str {
        match self.kind {
            ToolErrorKind::NoName | ToolErrorKind::Duplicate(_) => "name",
            ToolErrorKind::NoParameters(_) => "parameters",
        }
    }

    /// Why, in words.
    pub fn reason(&self) -> String {
        match &self.kind {
            ToolErrorKind::NoName => "a tool needs a name".into(),
            ToolErrorKind::NoParameters(name) => format!("tool {name:?} has no parameters schema"),
            ToolErrorKind::Duplicate(name) => format!("tool {name:?} is declared twice"),
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.pointer, self.keyword(), self.reason())
    }
}

impl core::error::Error for ToolError {}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec::Vec;
    use serde_json::json;

    #[test]
    fn reads_both_forms_and_names_the_offending_part() {
        let list = [
            json!({"type": "function", "function": {"name": "f", "description": "does f",
                "parameters": {"type": "object", "properties": {"a": {}}}, "strict": true}}),
            json!({"name": "bare", "parameters": true, "strict": "yes"}),
            json!({"function": null, "name": "shadow"}),
            json!("junk"),
            json!({"function": {"name": 5}}),
            json!({"name": "g"}),
        ];
        let read: Vec<_> = read_tools(&list).collect();
        let f = read[0].as_ref().unwrap();
        assert_eq!(
            (f.name, f.description, f.strict, f.pointer().as_str()),
            ("f", Some("does f"), Some(true), "/0/function")
        );
        assert_eq!(
            f.properties().map(|p| p.len()),
            Some(1),
            "the declared parameters"
        );
        let bare = read[1].as_ref().unwrap();
        assert_eq!(
            (bare.name, bare.strict, bare.pointer().as_str()),
            ("bare", None, "/1")
        );
        assert_eq!(bare.properties(), None);
        let errors: Vec<String> = read[2..5]
            .iter()
            .map(|r| r.as_ref().unwrap_err().to_string())
            .collect();
        assert_eq!(
            errors,
            [
                "/2/function/name: name: a tool needs a name",
                "/3/name: name: a tool needs a name",
                "/4/function/name: name: a tool needs a name",
            ]
        );
        let g = read[5].as_ref().unwrap();
        assert_eq!(
            g.require_parameters().unwrap_err().to_string(),
            "/5/parameters: parameters: tool \"g\" has no parameters schema"
        );
        assert_eq!(
            f.duplicate().to_string(),
            "/0/function/name: name: tool \"f\" is declared twice"
        );
    }
}
