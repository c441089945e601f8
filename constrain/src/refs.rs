//! `$ref` resolution within one schema document for general mode: base URIs from `$id`
//! (draft 4: `id`), anchors (`$anchor`, `$dynamicAnchor`, and the plain-name fragments
//! `"$id": "#name"` of drafts 6 and 7), JSON-pointer fragments (percent-decoded), and
//! RFC 3986 reference resolution (section 5.2, with dot-segment removal).
//!
//! Only the document itself is searched: a reference that resolves to another document
//! (a remote schema, a meta-schema) is an error naming it.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::json::Draft;

/// The base URI of a document without `$id`.
pub const DEFAULT_BASE: &str = "json-schema:///root.json";

/// Keywords whose value is one schema.
const ONE: &[&str] = &[
    "additionalProperties",
    "additionalItems",
    "items",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contentSchema",
];
/// Keywords whose value is an array of schemas.
const LIST: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];
/// Keywords whose value is an object of schemas.
const MAP: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];

/// The identifiers of one document.
#[derive(Debug, Default)]
pub(crate) struct Refs {
    draft: Draft,
    /// Absolute URI without fragment -> JSON pointer of the resource's root schema.
    resources: HashMap<String, String>,
    /// (resource URI, anchor name) -> JSON pointer.
    anchors: HashMap<(String, String), String>,
    /// JSON pointer of a schema -> its base URI (after its own identifier).
    bases: HashMap<String, String>,
}

impl Refs {
    /// Walks `document`'s schema places (not `enum`/`const` values or unknown keywords) for
    /// identifiers.
    pub fn new(document: &Value, draft: Draft) -> Self {
        let mut refs = Self {
            draft,
            ..Self::default()
        };
        refs.resources
            .insert(DEFAULT_BASE.to_string(), String::new());
        refs.walk(document, "", DEFAULT_BASE);
        refs
    }

    /// The identifier of a schema object under `draft`: `$id` (draft 4: `id`), ignored next
    /// to `$ref` before 2019-09 (the reference replaces the whole schema).
    fn identifier(map: &Map<String, Value>, draft: Draft) -> Option<&str> {
        if draft <= Draft::Draft7 && map.contains_key("$ref") {
            return None;
        }
        let key = if draft == Draft::Draft4 { "id" } else { "$id" };
        map.get(key).and_then(Value::as_str)
    }

    /// The base URI of a schema object whose parent's base is `parent`.
    pub fn own_base(&self, map: &Map<String, Value>, parent: &str) -> String {
        match Self::identifier(map, self.draft) {
            // A plain-name fragment names an anchor; it does not change the base.
            Some(id) if !id.starts_with('#') => strip_fragment(&resolve_uri(parent, id)),
            _ => parent.to_string(),
        }
    }

    fn walk(&mut self, value: &Value, pointer: &str, parent: &str) {
        let Value::Object(map) = value else {
            return;
        };
        let base = self.own_base(map, parent);
        if let Some(id) = Self::identifier(map, self.draft) {
            if let Some(name) = id.strip_prefix('#') {
                if self.draft <= Draft::Draft7 && !name.is_empty() {
                    self.anchors
                        .insert((base.clone(), name.to_string()), pointer.to_string());
                }
            } else {
                self.resources
                    .entry(base.clone())
                    .or_insert_with(|| pointer.to_string());
            }
        }
        for key in ["$anchor", "$dynamicAnchor"] {
            if let (Some(name), true) = (
                map.get(key).and_then(Value::as_str),
                self.draft >= Draft::Draft2019,
            ) {
                self.anchors
                    .entry((base.clone(), name.to_string()))
                    .or_insert_with(|| pointer.to_string());
            }
        }
        self.bases.insert(pointer.to_string(), base.clone());
        for (key, v) in map {
            let at = format!("{pointer}/{}", escape(key));
            let k = key.as_str();
            if ONE.contains(&k) && (v.is_object() || v.is_boolean()) {
                self.walk(v, &at, &base);
            }
            if LIST.contains(&k) {
                if let Value::Array(items) = v {
                    for (i, item) in items.iter().enumerate() {
                        self.walk(item, &format!("{at}/{i}"), &base);
                    }
                }
            }
            if MAP.contains(&k) {
                if let Value::Object(schemas) = v {
                    for (name, item) in schemas {
                        self.walk(item, &format!("{at}/{}", escape(name)), &base);
                    }
                }
            }
        }
    }

    /// The base URI in force at `pointer`: its own if the walk met it, else that of its
    /// nearest ancestor the walk met.
    pub fn base_of(&self, pointer: &str) -> String {
        let mut p = pointer;
        loop {
            if let Some(b) = self.bases.get(p) {
                return b.clone();
            }
            match p.rfind('/') {
                Some(i) => p = &p[..i],
                None => return DEFAULT_BASE.to_string(),
            }
        }
    }

    /// The JSON pointer a reference leads to, resolved against `base`.
    ///
    /// Errors (the reason): a target outside the document, an unknown anchor, a fragment
    /// that is neither a pointer nor an anchor.
    pub fn resolve(&self, base: &str, reference: &str) -> Result<String, String> {
        let absolute = resolve_uri(base, reference);
        let (doc, fragment) = match absolute.split_once('#') {
            Some((d, f)) => (d.to_string(), f.to_string()),
            None => (absolute.clone(), String::new()),
        };
        let root = self.resources.get(&doc).ok_or_else(|| {
            format!(
                "{reference:?} refers to another document ({doc}); only references within \
                 the schema are followed"
            )
        })?;
        if fragment.is_empty() || fragment.starts_with('/') {
            let pointer = structured_outputs::types::decode_fragment(&fragment)
                .ok_or_else(|| format!("{reference:?}: invalid percent-encoding"))?;
            Ok(format!("{root}{pointer}"))
        } else {
            self.anchors
                .get(&(doc, fragment.clone()))
                .cloned()
                .ok_or_else(|| format!("{reference:?}: no anchor {fragment:?} in the document"))
        }
    }
}

/// RFC 6901 escaping of one reference token.
fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

fn strip_fragment(uri: &str) -> String {
    uri.split_once('#')
        .map_or_else(|| uri.to_string(), |(d, _)| d.to_string())
}

/// The parts of a URI reference (RFC 3986 appendix B).
struct Parts<'a> {
    scheme: Option<&'a str>,
    authority: Option<&'a str>,
    path: &'a str,
    query: Option<&'a str>,
    fragment: Option<&'a str>,
}

fn split(uri: &str) -> Parts<'_> {
    let (rest, fragment) = match uri.split_once('#') {
        Some((r, f)) => (r, Some(f)),
        None => (uri, None),
    };
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (rest, None),
    };
    let (scheme, rest) = match rest.find(':') {
        Some(i)
            if i > 0
                && !rest[..i].contains('/')
                && rest[..1].chars().all(|c| c.is_ascii_alphabetic()) =>
        {
            (Some(&rest[..i]), &rest[i + 1..])
        }
        _ => (None, rest),
    };
    let (authority, path) = match rest.strip_prefix("//") {
        Some(r) => match r.find('/') {
            Some(i) => (Some(&r[..i]), &r[i..]),
            None => (Some(r), ""),
        },
        None => (None, rest),
    };
    Parts {
        scheme,
        authority,
        path,
        query,
        fragment,
    }
}

/// RFC 3986 section 5.2.4.
fn remove_dot_segments(path: &str) -> String {
    let mut input = path.to_string();
    let mut out: Vec<String> = Vec::new();
    let mut trailing = false;
    let absolute = input.starts_with('/');
    if absolute {
        input.remove(0);
    }
    let segments: Vec<&str> = input.split('/').collect();
    for (i, seg) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        match *seg {
            "." => trailing = last,
            ".." => {
                out.pop();
                trailing = last;
            }
            s => {
                out.push(s.to_string());
                trailing = false;
            }
        }
    }
    let mut joined = out.join("/");
    if trailing && !joined.is_empty() {
        joined.push('/');
    } else if trailing {
        joined = String::new();
    }
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

/// Resolves `reference` against `base` (RFC 3986 section 5.2.2).
pub(crate) fn resolve_uri(base: &str, reference: &str) -> String {
    let r = split(reference);
    let b = split(base);
    let (scheme, authority, path, query) = if r.scheme.is_some() {
        (r.scheme, r.authority, remove_dot_segments(r.path), r.query)
    } else if r.authority.is_some() {
        (b.scheme, r.authority, remove_dot_segments(r.path), r.query)
    } else if r.path.is_empty() {
        (
            b.scheme,
            b.authority,
            b.path.to_string(),
            r.query.or(b.query),
        )
    } else if r.path.starts_with('/') {
        (b.scheme, b.authority, remove_dot_segments(r.path), r.query)
    } else {
        // Merge (section 5.2.3): the base path up to its last `/`, then the reference.
        let merged = if b.authority.is_some() && b.path.is_empty() {
            format!("/{}", r.path)
        } else {
            match b.path.rfind('/') {
                Some(i) => format!("{}{}", &b.path[..=i], r.path),
                None => r.path.to_string(),
            }
        };
        (b.scheme, b.authority, remove_dot_segments(&merged), r.query)
    };
    let mut out = String::new();
    if let Some(s) = scheme {
        out.push_str(s);
        out.push(':');
    }
    if let Some(a) = authority {
        out.push_str("//");
        out.push_str(a);
    }
    out.push_str(&path);
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    if let Some(f) = r.fragment {
        out.push('#');
        out.push_str(f);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rfc3986_examples() {
        // RFC 3986 section 5.4.1 and 5.4.2 (a selection).
        let base = "http://a/b/c/d;p?q";
        for (r, want) in [
            ("g", "http://a/b/c/g"),
            ("./g", "http://a/b/c/g"),
            ("g/", "http://a/b/c/g/"),
            ("/g", "http://a/g"),
            ("//g", "http://g"),
            ("?y", "http://a/b/c/d;p?y"),
            ("#s", "http://a/b/c/d;p?q#s"),
            ("", "http://a/b/c/d;p?q"),
            (".", "http://a/b/c/"),
            ("..", "http://a/b/"),
            ("../g", "http://a/b/g"),
            ("../../g", "http://a/g"),
            ("../../../g", "http://a/g"),
            ("g;x=1/../y", "http://a/b/c/y"),
            ("urn:x:y", "urn:x:y"),
        ] {
            assert_eq!(resolve_uri(base, r), want, "{r}");
        }
    }

    #[test]
    fn identifiers_and_anchors() {
        let doc = json!({
            "$id": "http://example.com/root.json",
            "$defs": {
                "A": {"$anchor": "foo", "type": "integer"},
                "B": {"$id": "other.json", "$defs": {"X": {"$anchor": "bar"}}},
                "C": {"$id": "t/inner.json"}
            },
            "enum": [{"$id": "http://example.com/fake.json"}]
        });
        let refs = Refs::new(&doc, Draft::Draft2020);
        let base = refs.base_of("");
        assert_eq!(refs.resolve(&base, "#foo").unwrap(), "/$defs/A");
        assert_eq!(
            refs.resolve(&base, "other.json#bar").unwrap(),
            "/$defs/B/$defs/X"
        );
        assert_eq!(refs.resolve(&base, "#/$defs/A").unwrap(), "/$defs/A");
        assert_eq!(refs.resolve(&base, "t/inner.json").unwrap(), "/$defs/C");
        assert_eq!(
            refs.resolve(&refs.base_of("/$defs/B"), "#/$defs/X")
                .unwrap(),
            "/$defs/B/$defs/X"
        );
        assert_eq!(refs.resolve(&base, "#/$defs/a%25b").unwrap(), "/$defs/a%b");
        assert!(refs.resolve(&base, "fake.json").is_err());
        assert!(refs.resolve(&base, "http://other/x.json").is_err());
        // Draft 4: `id`, plain-name fragments as anchors.
        let doc = json!({"id": "http://x/y.json", "definitions": {"a": {"id": "#a"}}});
        let refs = Refs::new(&doc, Draft::Draft4);
        assert_eq!(
            refs.resolve(&refs.base_of(""), "#a").unwrap(),
            "/definitions/a"
        );
    }
}
