//! Template errors: every problem of a response template, each with the JSON path of the key
//! that causes it.
//!
//! The loader ([`crate::model::load`]) collects **all** problems of a template instead of
//! stopping at the first one (the reference, transformers' `load_response_template`, raises on
//! the first), so a template author sees everything to fix in one run.

use std::fmt;

/// One problem of a template.
///
/// `path` is the JSON path of the offending key: object keys joined with dots, list items as
/// `[index]`, keys that are not plain words (alphanumerics, `_`, `-`) quoted as JSON strings in
/// brackets. Examples:
/// `fields.tool_calls.open_pattern`, `fields.content.content_args.tag_pattern`,
/// `start_anchor[2]`, `fields["a.b"].open`, or `""` for the template itself (the root).
///
/// `reason` is a sentence in English saying what is wrong; its words are ours, not the
/// reference's. `file` is `None` unless a file loader set it ([`TemplateErrors::with_file`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    /// The JSON path of the offending key (`""` for the root).
    pub path: String,
    /// What is wrong.
    pub reason: String,
    /// The file the template came from, set by file loaders.
    pub file: Option<String>,
    /// 1-based line and column (in chars) of the offending key in the file, set by file
    /// loaders ([`crate::load_file`]); for invalid JSON, where the JSON parser stopped.
    pub line_col: Option<(usize, usize)>,
}

impl TemplateError {
    /// A problem at `path` (no file).
    pub fn new(path: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            reason: reason.into(),
            file: None,
            line_col: None,
        }
    }
}

impl fmt::Display for TemplateError {
    /// `{file}:{line}:{column}: {path}: {reason}`, leaving out the file, the position and the
    /// path when they are not known.
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
        let root = TemplateError::new("", "must be a JSON object");
        assert_eq!(root.to_string(), "must be a JSON object");
        let at = TemplateError::new("fields.x.open", "must not be empty");
        assert_eq!(at.to_string(), "fields.x.open: must not be empty");
        let errors = TemplateErrors(vec![root, at]).with_file("t.json");
        assert_eq!(
            errors.to_string(),
            "t.json: must be a JSON object\nt.json: fields.x.open: must not be empty"
        );
        assert_eq!(errors.len(), 2);
    }
}
