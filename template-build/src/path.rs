//! JSON paths of template keys, as errors name them (`fields.tool_calls.open_pattern`,
//! `start_anchor[2]`, `fields["a.b"].open`): one quoting rule for the model, the compiler and
//! `constrain`.

/// `s` as a JSON string literal (quoted, escaped).
pub fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
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
}
