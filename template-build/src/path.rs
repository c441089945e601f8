//! JSON paths of template keys, as errors name them (`fields.tool_calls.open_pattern`,
//! `start_anchor[2]`, `fields["a.b"].open`): one quoting rule for the model, the compiler and
//! `constrain`.

/// `s` as a JSON string literal (quoted, escaped).
pub fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
}

/// Most characters of a string that an error message quotes whole ([`excerpt`]).
pub const EXCERPT_CHARS: usize = 120;

/// `s` quoted like [`quote`] when it has at most [`EXCERPT_CHARS`] characters; a longer one is
/// cut to its first [`EXCERPT_CHARS`] characters, with `…` before the closing quote and its
/// whole length after it (`"aaaa…" (300000 bytes)`): a diagnostic never repeats a 300 KB
/// pattern.
pub fn excerpt(s: &str) -> String {
    match s.char_indices().nth(EXCERPT_CHARS) {
        None => quote(s),
        Some((cut, _)) => {
            let head = quote(&s[..cut]);
            format!("{}…\" ({} bytes)", &head[..head.len() - 1], s.len())
        }
    }
}

/// Whether `key` can appear bare in a dotted path: non-empty, only (Unicode) alphanumerics,
/// `_` and `-`.
pub fn is_plain_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

/// The path of `key` inside the object at `parent` (`""`: the root): `parent.key`, or
/// `parent["odd key"]` for a key that is not plain.
pub fn key(parent: &str, key: &str) -> String {
    if !is_plain_key(key) {
        format!("{parent}[{}]", quote(key))
    } else if parent.is_empty() {
        key.to_owned()
    } else {
        format!("{parent}.{key}")
    }
}

/// The path of item `index` of the list at `parent`.
pub fn index(parent: &str, index: usize) -> String {
    format!("{parent}[{index}]")
}

/// The path of `key` of the field `name`: `fields.name.key`, or `fields["a.b"].key`.
pub fn field(name: &str, key: &str) -> String {
    self::key(&self::key("fields", name), key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_keys_are_dotted_and_others_quoted() {
        assert_eq!(
            field("tool_calls", "open_pattern"),
            "fields.tool_calls.open_pattern"
        );
        assert_eq!(field("a.b", "open"), r#"fields["a.b"].open"#);
        assert_eq!(field("", "open"), r#"fields[""].open"#);
        assert_eq!(key("", "start_anchor"), "start_anchor");
        assert_eq!(index("start_anchor", 2), "start_anchor[2]");
        assert_eq!(key("fields", "x\"y"), r#"fields["x\"y"]"#);
    }

    #[test]
    fn excerpt_cuts_long_strings_and_names_their_length() {
        assert_eq!(excerpt("a\"b"), "\"a\\\"b\"");
        let long = "é".repeat(300_000);
        let shown = excerpt(&long);
        assert!(shown.len() < 400, "{shown}");
        assert!(shown.starts_with("\"éé"), "{shown}");
        assert!(shown.ends_with("é…\" (600000 bytes)"), "{shown}");
        assert_eq!(shown.matches('é').count(), EXCERPT_CHARS);
        assert_eq!(
            excerpt(&"x".repeat(EXCERPT_CHARS)),
            quote(&"x".repeat(EXCERPT_CHARS))
        );
    }
}
