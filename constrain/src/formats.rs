//! String formats of general mode as regular expressions over the string's text (between
//! the quotes; none of them writes a character JSON escapes).
//!
//! Each is a subset of its definition (so that no written string breaks it), chosen to hold
//! what real data holds:
//!
//! * `date`, `time`, `date-time`: RFC 3339 (upper-case `T` and `Z`, seconds `00`-`59`: no
//!   leap seconds, real month lengths and leap years);
//! * `uuid`: RFC 4122 text, either case;
//! * `ipv4`: dotted quad without leading zeros; `ipv6`: RFC 4291 text forms (RFC 3986's
//!   `IPv6address`, with an embedded IPv4 tail);
//! * `hostname`: RFC 1123 labels (letters, digits, inner hyphens; not hyphens in both the
//!   third and fourth places, which RFC 5891 reserves for IDNA labels such as `xn--`), at
//!   most 253 characters: up to 3 labels of up to 63 characters, or up to 8 labels of up to
//!   30;
//! * `email`: RFC 5321 dot-atom local part (no quoted local parts) `@` a hostname or an IPv4
//!   address literal `[a.b.c.d]`;
//! * `uri`, `uri-reference`: RFC 3986 `URI` and `URI-reference`, exactly;
//! * `json-pointer`: RFC 6901, exactly; `relative-json-pointer`: its draft (a non-negative
//!   integer without leading zeros, then `#` or a JSON pointer). Their tokens may hold any
//!   character, so these two are written over the string's canonical JSON text (the
//!   escapes serde_json writes for `"`, `\` and control characters), as general mode writes
//!   strings;
//! * `duration`: RFC 3339 appendix A (`P` with ASCII digits: date elements in order,
//!   optionally then `T` and time elements in order, or weeks alone).
//!
//! Other formats are annotations in draft 2020-12 (and may be in the earlier drafts): their
//! strings are any strings.

use crate::json::{DATE, TIME};

fn ipv4() -> &'static str {
    r"(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
}

/// RFC 3986 `IPv6address`.
fn ipv6() -> String {
    let h16 = "[0-9A-Fa-f]{1,4}";
    let ls32 = format!("(?:{h16}:{h16}|{})", ipv4());
    // `n` groups `h16:` then ls32 (no `::`), or up to `k` groups before `::` and `m` after.
    let mut forms = vec![format!("(?:{h16}:){{6}}{ls32}")];
    // After `::`: 5, 4, 3, 2, 1 groups then ls32; then ls32 alone; then h16; then nothing.
    let tails: Vec<String> = (0..=5)
        .rev()
        .map(|n| format!("(?:{h16}:){{{n}}}{ls32}"))
        .chain([h16.to_string(), String::new()])
        .collect();
    for (i, tail) in tails.iter().enumerate() {
        // Before `::`: at most i - 1 groups `h16:` and one `h16` (none for the first form).
        let before = if i == 0 {
            String::new()
        } else {
            format!("(?:(?:{h16}:){{0,{}}}{h16})?", i - 1)
        };
        forms.push(format!("{before}::{tail}"));
    }
    format!("(?:{})", forms.join("|"))
}

/// An RFC 1123 label of at most `max` characters, without hyphens in both the third and
/// fourth places (RFC 5891 reserves those labels, `xn--` included, for IDNA).
fn label(max: usize) -> String {
    let a = "[A-Za-z0-9]";
    let h = "[A-Za-z0-9-]";
    format!(
        "(?:{a}(?:{h}?{a})?|{a}{h}{h}{a}|{a}{h}(?:{a}{h}|-{a}){h}{{0,{}}}{a})",
        max - 5
    )
}

fn hostname() -> String {
    format!(
        "(?:{l63}(?:\\.{l63}){{0,2}}|{l30}(?:\\.{l30}){{0,7}})",
        l63 = label(63),
        l30 = label(30)
    )
}

/// RFC 3986 `URI` (`reference`: `URI-reference`).
fn uri(reference: bool) -> String {
    let unreserved = r"A-Za-z0-9\-._~";
    let sub = r"!$&'()*+,;=";
    let pct = "%[0-9A-Fa-f]{2}";
    let pchar = format!("(?:[{unreserved}{sub}:@]|{pct})");
    let userinfo = format!("(?:[{unreserved}{sub}:]|{pct})*");
    let reg_name = format!("(?:[{unreserved}{sub}]|{pct})*");
    let ip_future = format!("v[0-9A-Fa-f]+\\.[{unreserved}{sub}:]+");
    let host = format!("(?:\\[(?:{}|{ip_future})\\]|{}|{reg_name})", ipv6(), ipv4());
    let authority = format!("(?:{userinfo}@)?{host}(?::[0-9]*)?");
    let segment = format!("{pchar}*");
    let segment_nz = format!("{pchar}+");
    let segment_nz_nc = format!("(?:[{unreserved}{sub}@]|{pct})+");
    let abempty = format!("(?:/{segment})*");
    let absolute = format!("/(?:{segment_nz}(?:/{segment})*)?");
    let rootless = format!("{segment_nz}(?:/{segment})*");
    let noscheme = format!("{segment_nz_nc}(?:/{segment})*");
    let query = format!("(?:\\?(?:{pchar}|[/?])*)?");
    let fragment = format!("(?:#(?:{pchar}|[/?])*)?");
    let hier = format!("(?://{authority}{abempty}|{absolute}|{rootless}|)");
    let full = format!("[A-Za-z][A-Za-z0-9+.\\-]*:{hier}{query}{fragment}");
    if reference {
        let relative = format!("(?://{authority}{abempty}|{absolute}|{noscheme}|)");
        format!("(?:{full}|{relative}{query}{fragment})")
    } else {
        full
    }
}

/// An e-mail address: a dot-atom local part of at most 64 characters, `@`, a hostname or an
/// IPv4 address literal.
fn email() -> String {
    let atext = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~\-]";
    // At most 64 characters: up to 4 words of up to 15 characters, or one word of up to 64.
    let local = format!("(?:{atext}{{1,64}}|{atext}{{1,15}}(?:\\.{atext}{{1,15}}){{1,3}})");
    format!("{local}@(?:{}|\\[{}\\])", hostname(), ipv4())
}

/// An RFC 6901 JSON pointer, over canonical JSON string text: a token character is any
/// canonical character but `~` and `/` (written as themselves), or `~0`/`~1`.
fn json_pointer() -> &'static str {
    concat!(
        r#"(?:/(?:[^~/"\\\x00-\x1F]|~[01]|\\["\\bfnrt]"#,
        r"|\\u00(?:0[0-7bef]|1[0-9a-f]))*)*"
    )
}

/// RFC 3339 appendix A `duration`.
fn duration() -> &'static str {
    concat!(
        r"P(?:(?:[0-9]+D|[0-9]+M(?:[0-9]+D)?|[0-9]+Y(?:[0-9]+M(?:[0-9]+D)?)?)",
        r"(?:T(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S))?",
        r"|T(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S)",
        r"|[0-9]+W)"
    )
}

/// The regular expression of a string format's text, if general mode asserts it.
pub fn string_format(name: &str) -> Option<String> {
    Some(match name {
        "date" => DATE.to_string(),
        "time" => TIME.to_string(),
        "date-time" => format!("{DATE}T{TIME}"),
        "uuid" => "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
            .to_string(),
        "ipv4" => ipv4().to_string(),
        "ipv6" => ipv6(),
        "hostname" => hostname(),
        "email" => email(),
        "uri" => uri(false),
        "uri-reference" => uri(true),
        "json-pointer" => json_pointer().to_string(),
        "relative-json-pointer" => format!("(?:0|[1-9][0-9]*)(?:#|{})", json_pointer()),
        "duration" => duration().to_string(),
        _ => return None,
    })
}

/// The integer range of a numeric format (`int32`, `int64`), if general mode asserts it.
pub fn integer_format(name: &str) -> Option<(&'static str, &'static str)> {
    Some(match name {
        "int32" => ("-2147483648", "2147483647"),
        "int64" => ("-9223372036854775808", "9223372036854775807"),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(name: &str) -> regex_automata::meta::Regex {
        let p = string_format(name).unwrap();
        regex_automata::meta::Regex::new(&format!("^(?:{p})$")).unwrap()
    }

    #[test]
    fn formats_accept_and_refuse() {
        for (name, yes, no) in [
            (
                "ipv4",
                &["0.0.0.0", "192.168.0.1", "255.255.255.255"][..],
                &["256.0.0.1", "01.2.3.4", "1.2.3", "1.2.3.4.5", "a.b.c.d"][..],
            ),
            (
                "ipv6",
                &[
                    "::1",
                    "::",
                    "1::",
                    "fe80::1",
                    "1:2:3:4:5:6:7:8",
                    "1:2:3:4:5:6:7::",
                    "::ffff:192.168.0.1",
                    "1:2:3:4:5:6:1.2.3.4",
                    "1::2:3",
                ],
                &[
                    "1:2:3:4:5:6:7:8:9",
                    ":::",
                    "1::2::3",
                    "12345::",
                    "1:2:3:4:5:6:7",
                    "::1.2.3",
                    "g::1",
                ],
            ),
            (
                "hostname",
                &[
                    "localhost",
                    "www.example.com",
                    "a-b.c",
                    "ab-c.d",
                    "abc-d",
                    "a--b",
                ],
                &[
                    "-a.com",
                    "a-.com",
                    "a..b",
                    "",
                    "a_b.com",
                    ".com",
                    "xn--bcher-kva.example",
                    "ab--c",
                ],
            ),
            (
                "email",
                &[
                    "joe.bloggs@example.com",
                    "te~st@example.com",
                    "a@[127.0.0.1]",
                ],
                &[
                    ".a@b.c",
                    "a.@b.c",
                    "a..b@c.d",
                    "a@b_c.d",
                    "ab",
                    "a@[127.0.0.300]",
                ],
            ),
            (
                "uri",
                &[
                    "http://foo.bar/?baz=qux#quux",
                    "urn:oasis:names:specification:docbook:dtd:xml:4.1.2",
                    "mailto:John.Doe@example.com",
                    "http://[2001:db8::7]/c=GB?objectClass?one",
                    "ftp://ftp.is.co.za/rfc/rfc1808.txt",
                    "tel:+1-816-555-1212",
                    "http://x/%41",
                ],
                &[
                    "//foo.bar/?baz=qux",
                    "abc",
                    "http:// shouldfail.com",
                    "\\\\x",
                    "http://x/%4",
                ],
            ),
            (
                "uri-reference",
                &["http://foo.bar/", "/abc", "abc", "#fragment", "", "../x?y"],
                &["\\\\WINDOWS\\fileshare", "abc#fra#gment", "a b"],
            ),
            (
                "json-pointer",
                // Canonical text: `/a\"b` is the pointer `/a"b`, `/\u0001` holds U+0001.
                &[
                    "",
                    "/",
                    "/foo/0",
                    "/a~1b/m~0n",
                    "//",
                    "/é 東",
                    r#"/a\"b"#,
                    r"/\\",
                    r"/\u0001",
                ],
                &[
                    "foo", "/~", "/~2", "#/a", "/a\"b", "/a\\q", r"/\u0041", "/\u{1}",
                ],
            ),
            (
                "relative-json-pointer",
                &["0", "1/foo", "0#", "12/a~1b", "3"],
                &["", "01", "-1/a", "/a", "0##", "1#/a"],
            ),
            (
                "duration",
                &[
                    "P4DT12H30M5S",
                    "P1Y",
                    "P1M",
                    "P2W",
                    "PT1H",
                    "PT1M",
                    "PT36H",
                    "P1Y2M3D",
                    "P1DT2H",
                    "PT1H2M3S",
                    "P0D",
                ],
                &[
                    "PT1D",
                    "4DT12H30M5S",
                    "P",
                    "P1YT",
                    "PT",
                    "P2D1Y",
                    "P1D2H",
                    "P2S",
                    "P1Y2W",
                    "P\u{09e8}Y",
                    "P1",
                    "PT0.5S",
                    " P1D",
                    "P1D ",
                    "",
                    "P1Y2D",
                    "PT1H2S",
                    "-P1D",
                    "P1D2T3H",
                    "P1e2D",
                    "P1D\n",
                    "P1WT1H",
                    "P0Y1W",
                ],
            ),
            (
                "uuid",
                &[
                    "2eb8aa08-aa98-11ea-b4aa-73b441d16380",
                    "2EB8AA08-AA98-11EA-B4AA-73B441D16380",
                ],
                &[
                    "2eb8aa08-aa98-11ea-b4aa-73b441d1638",
                    "2eb8aa08aa9811eab4aa73b441d16380",
                ],
            ),
        ] {
            let re = whole(name);
            for y in yes {
                assert!(re.is_match(y), "{name}: {y}");
            }
            for n in no {
                assert!(!re.is_match(n), "{name}: {n}");
            }
        }
        // Hostnames stay within 253 characters, e-mail local parts within 64.
        let host = whole("hostname");
        let l63 = "a".repeat(63);
        assert!(host.is_match(&format!("{l63}.{l63}.{l63}")));
        assert!(!host.is_match(&format!("{l63}.{l63}.{l63}.{l63}")));
        assert!(!host.is_match(&"a".repeat(64)));
        let mail = whole("email");
        assert!(mail.is_match(&format!("{}@x.y", "a".repeat(64))));
        assert!(!mail.is_match(&format!("{}@x.y", "a".repeat(65))));
    }
}
