//! Group names defined more than once, merged as the Python `regex` module merges them.
//!
//! In the `regex` module, groups of the same name (`(?P<a>x)|(?P<a>y)`, `(?P<a>x)(?P<a>y)`)
//! are one group with one number, and after a match the name's value (`m.group(name)`,
//! `m.groupdict()`) is the span of the copy that closed last in the match. Our engines refuse
//! a name twice, so the compiler (`template-build`'s `pyregex`) writes such a pattern with
//! every further copy under a hidden name, the name followed by its copy number in
//! superscript digits ([`copy_name`]: `a`, `a¹`, `a²`, ...; superscript digits are never part
//! of a Python identifier, so no name a template writes looks like a copy), and writes a copy
//! nested inside another copy of the same name as a plain group (it closes before the copy
//! around it, so it is never the value). This holds for the capture regexes of delimiter
//! branches and for the `fancy-regex` translation of `tag_pattern`; the compiler refuses a
//! copy inside a look-around and a backreference to a name defined more than once.
//!
//! The copies left are not nested in one another, and a match runs forward without
//! look-around between them, so the one that closed last is the one that ends last; of copies
//! that end at one place, only an empty one can have run after a non-empty one (it starts
//! where the other ended), so the one that starts last ([`merged_span`]). Checked against the
//! module itself on randomly generated patterns (`scripts/pyregex-merge-rule.py`) and by the
//! truth cases of `template-build/tests/data/pyregex-truth.jsonl`.

#[cfg(feature = "alloc")]
use alloc::{string::String, vec::Vec};

/// The superscript digits of copy numbers, `⁰` to `⁹`.
const COPY_DIGITS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];

fn is_copy_digit(c: char) -> bool {
    COPY_DIGITS.contains(&c)
}

/// The name under which copy `copy` of the group `name` is written: `name` itself for the first
/// copy (0), else `name` followed by `copy` in superscript digits (`a¹`, `a¹²`).
#[cfg(feature = "alloc")]
pub fn copy_name(name: &str, copy: usize) -> String {
    let mut out = String::from(name);
    if copy > 0 {
        let digits = alloc::format!("{copy}");
        out.extend(digits.bytes().map(|d| COPY_DIGITS[usize::from(d - b'0')]));
    }
    out
}

/// The Python name of a group of a translated pattern: `group` without the copy number that
/// [`copy_name`] appends.
pub fn base_name(group: &str) -> &str {
    group.trim_end_matches(is_copy_digit)
}

/// The span a name gets from the spans of its copies (`None`: the copy did not take part), as
/// the Python module gives it: of the copies that took part, the one that ends last, and of
/// those ending at one place, the one that starts last. `None` when no copy took part.
pub fn merged_span(
    copies: impl IntoIterator<Item = Option<(usize, usize)>>,
) -> Option<(usize, usize)> {
    copies
        .into_iter()
        .flatten()
        .max_by_key(|&(start, end)| (end, start))
}

/// The indices of the copies of the group `name` among a regex's group names in index order
/// (`None` for an unnamed group), as `fancy_regex::Regex::capture_names` lists them.
#[cfg(feature = "alloc")]
pub fn copies_of<'n>(names: impl IntoIterator<Item = Option<&'n str>>, name: &str) -> Vec<usize> {
    names
        .into_iter()
        .enumerate()
        .filter(|(_, group)| group.is_some_and(|g| base_name(g) == name))
        .map(|(i, _)| i)
        .collect()
}

/// The named groups of a match merged by name: each Python name once, in the order its first
/// copy appears, with its [`merged_span`]. `groups` are the regex's named groups with their
/// spans in the match.
#[cfg(feature = "alloc")]
pub fn merge<'n>(
    groups: impl IntoIterator<Item = (&'n str, Option<(usize, usize)>)>,
) -> Vec<(&'n str, Option<(usize, usize)>)> {
    let mut out: Vec<(&'n str, Option<(usize, usize)>)> = Vec::new();
    for (group, span) in groups {
        let name = base_name(group);
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = merged_span([slot.1, span]),
            None => out.push((name, span)),
        }
    }
    out
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn copy_names_round_trip() {
        assert_eq!(copy_name("a", 0), "a");
        assert_eq!(copy_name("a", 1), "a¹");
        assert_eq!(copy_name("key", 12), "key¹²");
        assert_eq!(copy_name("名", 30), "名³⁰");
        for (name, copy) in [("a", 0), ("a", 7), ("value_2", 109), ("名", 1)] {
            assert_eq!(base_name(&copy_name(name, copy)), name);
        }
        assert_eq!(base_name("x1"), "x1");
    }

    #[test]
    fn the_copy_that_closed_last_wins() {
        // `(?P<a>x)(?P<a>y)` on "xy": the later copy.
        assert_eq!(merged_span([Some((0, 1)), Some((1, 2))]), Some((1, 2)));
        // `(?P<a>y)(?P<a>)` on "y": the empty copy ran last (Python gives '').
        assert_eq!(merged_span([Some((0, 1)), Some((1, 1))]), Some((1, 1)));
        // `(?:(?P<a>x)|(?P<a>y))+` on "xyx": the last iteration's copy, the first one.
        assert_eq!(merged_span([Some((2, 3)), Some((1, 2))]), Some((2, 3)));
        // `(?:(?P<a>x)|y)(?P<a>z)?` on "y": none took part.
        assert_eq!(merged_span([None, None]), None);
        assert_eq!(merged_span([None, Some((4, 6))]), Some((4, 6)));
    }

    #[test]
    fn merge_by_name_in_first_order() {
        let groups = [
            ("b", Some((0, 1))),
            ("a", None),
            ("a¹", Some((1, 2))),
            ("b¹", Some((1, 1))),
            ("c", None),
        ];
        assert_eq!(
            merge(groups),
            vec![("b", Some((1, 1))), ("a", Some((1, 2))), ("c", None)]
        );
        let names = [
            None,
            Some("key"),
            Some("value"),
            None,
            Some("key¹"),
            Some("keys"),
        ];
        assert_eq!(copies_of(names, "key"), vec![1, 4]);
        assert_eq!(copies_of(names, "value"), vec![2]);
    }
}
