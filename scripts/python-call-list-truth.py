#!/usr/bin/env python3
"""Regenerates parser-runtime-core/tests/data/python-call-list.jsonl: what the reference's
`python-call-list` content parser (transformers 5.24.0, `content_parsers._python_call_list`) gives
for each input below.

Each line is one JSON object:

  {"name": "escapes/newline", "text": "[f(s=\\"a\\\\nb\\")]", "expect": [{"name": "f", ...}]}
  {"name": "int/2^53", "text": "[f(a=9007199254740992)]",
   "error": {"offset": 7, "reference": "python-call-list: integer outside ... at position 7."}}

  name, text  the inputs, written in CASES below;
  expect      the value, as `json.dumps` writes it (integers stay integers, floats are floats);
  error       when the reference raises: `offset` is the UTF-8 byte offset of the position the
              reference reports (it reports a str index), `reference` the first line of its
              message (without the `Content:` line).

The Rust side is the unit test `call_list_truth` in
parser-runtime-core/src/content/python_call_list.rs: the same value (compared serialized, so
integer vs float and key order count) or an error at the same byte offset.

Usage (from the workspace root), with the 5.24.0 oracle venv:
  PY=$(ORACLE_TRANSFORMERS=5.24.0 ../shared/oracle/setup.sh target/oracle-venv-5.24)
  $PY scripts/python-call-list-truth.py            # rewrite the file
  $PY scripts/python-call-list-truth.py --check    # exit 1 if it would change
Another transformers version is refused unless --any-version is given.
"""
import argparse
import json
import re
import sys
from pathlib import Path

import transformers
from transformers.utils.chat_parsing.content_parsers import _python_call_list

VERSION = "5.24.0"
DEFAULT_FILE = Path(__file__).resolve().parents[1] / "parser-runtime-core/tests/data/python-call-list.jsonl"


def nested(depth, open_, close, inner="1"):
    return open_ * depth + inner + close * depth


def dicts(depth):
    return '{"k": ' * depth + "1" + "}" * depth


# (name, text): inputs only; the expectations come from the reference.
CASES = [
    # calls and lists
    ("list/empty", "[]"),
    ("list/empty-spaced", " [ \n\t] "),
    ("list/one", '[get_weather(city="Paris")]'),
    ("list/two", '[get_weather(city="Paris", days=3), get_time(tz="CET")]'),
    ("list/same-name-twice", "[f(a=1), f(a=2)]"),
    ("list/argument-order-kept", "[f(z=1, a=2, m=3)]"),
    ("args/empty", "[get_time()]"),
    ("args/empty-spaced", "[get_time( \n )]"),
    # whitespace
    ("ws/everywhere", '[ \n get_weather ( city = "Oslo" , days = 2 ) \n ]'),
    ("ws/tabs-crlf", '\t[\r\n\tf(\r\n\t\ta\t=\t1\r\n\t)\r\n]\r\n'),
    ("ws/leading", ' \t\r\n[f()]'),
    ("ws/trailing", '[f()] \n\t\r '),
    ("ws/nbsp-before", "\u00a0[f()]"),
    ("ws/nbsp-inside", "[f(\u00a0a=1)]"),
    ("ws/form-feed", "[f(a=1,\x0cb=2)]"),
    ("ws/vertical-tab", "[\x0bf()]"),
    ("ws/ideographic-space", "[f(a=1,\u3000b=2)]"),
    # names
    ("name/dotted-hyphen", '[tools.search-web(q="rust")]'),
    ("name/hyphen", '[get-weather(city="Rome")]'),
    ("name/many-parts", "[a.b-c.d_e-1(x=1)]"),
    ("name/underscore", "[_private(_x=1)]"),
    ("name/digits", "[f2(a1=1)]"),
    ("name/trailing-hyphen", "[f-(a=1)]"),
    ("name/double-dot", "[a..b(x=1)]"),
    ("name/leading-digit", "[1f(a=1)]"),
    ("name/non-ascii", "[größe(a=1)]"),
    ("name/with-space", "[get weather(a=1)]"),
    ("name/hyphenated-keyword", "[f(max-results=5)]"),
    ("name/dotted-keyword", "[f(a.b=5)]"),
    # strings and escapes
    ("string/double", '[f(s="Paris")]'),
    ("string/single", "[f(s='Paris')]"),
    ("string/empty", "[f(s='', t=\"\")]"),
    ("string/quotes-inside", "[f(s='say \"hi\"', t=\"it's\")]"),
    ("string/close-delimiters-inside", '[f(q="a)] b, g(x=1)", r=\'[{\')]'),
    ("escape/backslash", r'[f(s="a\\b")]'),
    ("escape/single-quote", r"[f(s='it\'s')]"),
    ("escape/single-quote-in-double", r'[f(s="it\'s")]'),
    ("escape/double-quote", r'[f(s="a\"b")]'),
    ("escape/double-quote-in-single", r"[f(s='a\"b')]"),
    ("escape/slash", r'[f(s="a\/b")]'),
    ("escape/b", r'[f(s="a\bb")]'),
    ("escape/f", r'[f(s="a\fb")]'),
    ("escape/n", r'[f(s="a\nb")]'),
    ("escape/r", r'[f(s="a\rb")]'),
    ("escape/t", r'[f(s="a\tb")]'),
    ("escape/all", r'[f(s="\\ \' \" \/ \b \f \n \r \t")]'),
    ("escape/u-lower", r'[f(s="caf\u00e9")]'),
    ("escape/u-upper", r'[f(s="caf\u00E9")]'),
    ("escape/u-nul", r'[f(s="a\u0000b")]'),
    ("escape/u-then-digits", r'[f(s="\u00411")]'),
    ("escape/u-cjk", r'[f(s="\u6771\u4eac")]'),
    ("escape/u-short", r'[f(s="\u12")]'),
    ("escape/u-short-at-end", r'[f(s="ab\u")]'),
    ("escape/u-non-hex", r'[f(s="\u00g1")]'),
    ("escape/U-upper", r'[f(s="\U0001F600")]'),
    ("escape/x", r'[f(s="\x41")]'),
    ("escape/a", r'[f(s="\a")]'),
    ("escape/zero", r'[f(s="\0")]'),
    ("escape/non-ascii", '[f(s="\\é")]'),
    ("escape/backslash-newline", '[f(s="a\\\nb")]'),
    ("escape/second-string-bad", r'[f(a="ok\n", b="bad\q")]'),
    ("escape/bad-then-unterminated", r'[f(s="\q)]'),
    ("surrogate/pair", r'[f(s="\ud83d\ude00")]'),
    ("surrogate/pair-upper", r'[f(s="\uD83D\uDE00")]'),
    ("surrogate/pair-mixed-case", r'[f(s="\uD83d\uDe00x")]'),
    ("surrogate/two-pairs", r'[f(s="\ud83d\ude00\ud83c\udf89")]'),
    ("surrogate/lone-high", r'[f(s="\ud800")]'),
    ("surrogate/lone-low", r'[f(s="\udc00")]'),
    ("surrogate/high-then-bmp", r'[f(s="\ud83d\u0041")]'),
    ("surrogate/high-then-text", r'[f(s="\ud83dx")]'),
    ("surrogate/high-then-escaped-backslash", r'[f(s="\ud83d\\udc00")]'),
    ("surrogate/low-then-high", r'[f(s="\ude00\ud83d")]'),
    ("surrogate/high-high-low", r'[f(s="\ud83d\ud83d\ude00")]'),
    ("surrogate/in-key", r'[f(a={"\ud83d\ude00": 1})]'),
    ("string/raw-newline", '[f(s="a\nb")]'),
    ("string/raw-cr", '[f(s="a\rb")]'),
    ("string/raw-tab", '[f(s="a\tb")]'),
    ("string/raw-nul", '[f(s="a\x00b")]'),
    ("string/raw-line-separator", '[f(s="a\u2028b\u0085c")]'),
    ("string/unterminated", '[get_weather(city="Par'),
    ("string/unterminated-before-close", '[f(s="abc)]'),
    ("string/backslash-at-end", '[f(s="abc\\'),
    ("string/mismatched-quotes", "[f(s=\"abc')]"),
    ("unicode/values", '[get_weather(city="東京", tags=["雨", "☔"], note="naïve café 🎉")]'),
    ("unicode/error-after", '[f(city="東京", x=bad)]'),
    ("unicode/error-in-string-after", '[f(city="東京🎉", x="\\q")]'),
    ("unicode/combining", '[f(s="e\u0301")]'),
    # numbers
    ("int/zero", "[f(a=0)]"),
    ("int/minus-zero", "[f(a=-0)]"),
    ("int/negative", "[f(a=-12)]"),
    ("int/max", "[f(a=9007199254740991)]"),
    ("int/min", "[f(a=-9007199254740991)]"),
    ("int/2^53", "[f(a=9007199254740992)]"),
    ("int/-2^53", "[f(a=-9007199254740992)]"),
    ("int/17-digits", "[f(a=10000000000000000)]"),
    ("int/18-digits", "[f(a=100000000000000000)]"),
    ("int/18-chars-negative", "[f(a=-10000000000000000)]"),
    ("int/leading-zeros-18", "[f(a=000000000000000001)]"),
    ("int/huge", "[f(a=" + "9" * 5000 + ")]"),
    ("int/leading-zero", "[f(a=01)]"),
    ("int/double-zero", "[f(a=00)]"),
    ("int/plus", "[f(a=+1)]"),
    ("int/underscore", "[f(a=1_000)]"),
    ("int/hex", "[f(a=0x10)]"),
    ("int/minus-alone", "[f(a=-)]"),
    ("int/double-minus", "[f(a=--1)]"),
    ("int/in-list", "[f(a=[1, -2, 3])]"),
    ("float/simple", "[f(a=3.5, b=-0.25)]"),
    ("float/exponent", "[f(a=1e3, b=1E5, c=1e+2, d=-0.25E-2)]"),
    ("float/small", "[f(a=1.5e-3, b=0.1)]"),
    ("float/1e308", "[f(a=1e308)]"),
    ("float/max", "[f(a=1.7976931348623157e308)]"),
    ("float/just-below-overflow", "[f(a=1.7976931348623158e308)]"),
    ("float/overflow-rounding", "[f(a=1.7976931348623159e308)]"),
    ("float/1e400", "[f(a=1e400)]"),
    ("float/-1e400", "[f(a=-1e400)]"),
    ("float/1e999", "[f(a=1e999)]"),
    ("float/underflow", "[f(a=1e-400)]"),
    ("float/minus-zero", "[f(a=-0.0)]"),
    ("float/zero-exponent", "[f(a=0e0)]"),
    ("float/long-integer-part", "[f(a=123456789012345678901234567890.5)]"),
    ("float/big-exponent-integer", "[f(a=1e16)]"),
    ("float/trailing-dot", "[f(a=1.)]"),
    ("float/leading-dot", "[f(a=.5)]"),
    ("float/dangling-exponent", "[f(a=1e)]"),
    ("float/dangling-exponent-sign", "[f(a=1e+)]"),
    ("float/dot-exponent", "[f(a=1.e5)]"),
    ("float/nan", "[f(a=nan)]"),
    ("float/NaN", "[f(a=NaN)]"),
    ("float/Infinity", "[f(a=Infinity)]"),
    ("float/minus-Infinity", "[f(a=-Infinity)]"),
    # constants
    ("const/all", "[f(a=True, b=true, c=False, d=false, e=None, g=null)]"),
    ("const/upper", "[f(a=TRUE)]"),
    ("const/dotted", "[f(a=True.x)]"),
    ("const/hyphenated", "[f(a=true-1)]"),
    ("const/trailing-hyphen", "[f(a=True-)]"),
    ("const/suffix", "[f(a=None_)]"),
    ("const/in-list", "[f(a=[True, None, false])]"),
    ("const/unquoted-word", "[f(a=Paris)]"),
    # lists and dicts
    ("nested/mixed", '[f(a=[1, [2, {"k": "v"}]], b={"x": {"y": [true, None]}})]'),
    ("nested/empty", "[f(a=[], b={}, c=[[]], d={'k': {}})]"),
    ("nested/single-quoted-keys", "[f(a={'k': 1, \"l\": 'v'})]"),
    ("nested/key-escapes", r'[f(a={"k\"\u00e9": 1})]'),
    ("nested/list-100", "[f(a=" + nested(100, "[", "]") + ")]"),
    ("nested/list-101", "[f(a=" + nested(101, "[", "]") + ")]"),
    ("nested/dict-100", "[f(a=" + dicts(100) + ")]"),
    ("nested/dict-101", "[f(a=" + dicts(101) + ")]"),
    ("nested/mixed-100", "[f(a=" + '[{"k": ' * 50 + "1" + "}]" * 50 + ")]"),
    ("nested/mixed-101", "[f(a=" + '[{"k": ' * 50 + "[1]" + "}]" * 50 + ")]"),
    ("nested/101-empty", "[f(a=" + nested(101, "[", "]", "") + ")]"),
    ("nested/100-then-bad", "[f(a=" + nested(100, "[", "]", "x") + ")]"),
    ("nested/unclosed", "[f(a=[1, 2)]"),
    ("nested/dict-missing-colon", '[f(a={"k" 1})]'),
    ("nested/dict-missing-value", '[f(a={"k": })]'),
    ("nested/list-missing-comma", "[f(a=[1 2])]"),
    # repeated names
    ("repeat/argument", "[f(a=1, a=2)]"),
    ("repeat/argument-spaced", "[f(a=1, a=2 )  ]"),
    ("repeat/key", '[f(a={"k": 1, "k": 2})]'),
    ("repeat/key-other-quotes", "[f(a={'k': 1, \"k\": 2})]"),
    ("repeat/key-by-escape", r'[f(a={"é": 1, "\u00e9": 2})]'),
    ("repeat/nested-key", '[f(a=[{"k": 1, "k": 2}, 3])]'),
    ("repeat/argument-then-syntax-error", "[f(a=1, a=2, b=)]"),
    ("repeat/key-then-later-argument-error", '[f(a={"k": 1, "k": 2}, b=)]'),
    ("repeat/same-key-in-two-dicts", '[f(a={"k": 1}, b={"k": 2})]'),
    ("repeat/same-argument-in-two-calls", "[f(a=1), g(a=2)]"),
    # dict keys
    ("key/integer", "[f(a={1: 2})]"),
    ("key/bare", "[f(a={k: 1})]"),
    ("key/constant", "[f(a={True: 1})]"),
    ("key/list", "[f(a={[1]: 1})]"),
    # positional arguments, trailing commas
    ("positional/string", '[get_weather("Paris")]'),
    ("positional/number", "[f(1)]"),
    ("positional/name", "[f(x)]"),
    ("positional/after-keyword", "[f(a=1, 2)]"),
    ("positional/name-space-value", "[f(a 1)]"),
    ("trailing-comma/args", '[get_weather(city="Paris",)]'),
    ("trailing-comma/calls", '[get_weather(city="Paris"),]'),
    ("trailing-comma/list", "[f(a=[1, 2,])]"),
    ("trailing-comma/dict", '[f(a={"k": 1,})]'),
    ("comma/leading-args", "[f(, a=1)]"),
    ("comma/double", "[f(a=1,, b=2)]"),
    ("comma/missing-between-args", "[f(a=1 b=2)]"),
    ("comma/missing-between-calls", "[f() g()]"),
    # shape of the body
    ("body/empty", ""),
    ("body/whitespace", "  \n "),
    ("body/no-list", 'get_weather(city="Paris")'),
    ("body/text", "Sure, here you go."),
    ("body/after-bracket", '[get_weather(city="Paris")] extra'),
    ("body/second-list", "[f()][g()]"),
    ("body/extra-bracket", "[f()]]"),
    ("body/unclosed-list", "[f()"),
    ("body/unclosed-call", "[f(a=1"),
    ("body/unclosed-after-value", "[f(a=1)"),
    ("body/no-parens", "[f]"),
    ("body/no-parens-args", "[f a=1)]"),
    ("body/list-of-values", "[1, 2]"),
    ("body/json-call", '[{"name": "f", "arguments": {}}]'),
    ("body/bom", "\ufeff[f()]"),
    ("body/code-fence", "```python\n[f()]\n```"),
]


def byte_offset(text, index):
    return len(text[:index].encode("utf-8"))


def run(text):
    try:
        return {"expect": _python_call_list(text, {})}
    except ValueError as e:
        first = str(e).split("\n", 1)[0]
        m = re.search(r" at position (\d+)\.$", first)
        if m is None:
            raise SystemExit(f"no position in the reference's message: {first!r}")
        return {"error": {"offset": byte_offset(text, int(m.group(1))), "reference": first}}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file", nargs="?", type=Path, default=DEFAULT_FILE)
    ap.add_argument("--check", action="store_true", help="exit 1 if the file would change")
    ap.add_argument("--any-version", action="store_true")
    a = ap.parse_args()
    if transformers.__version__ != VERSION and not a.any_version:
        raise SystemExit(f"transformers {transformers.__version__}, expected {VERSION} (or --any-version)")
    names = [name for name, _ in CASES]
    if len(set(names)) != len(names):
        raise SystemExit("duplicate case names")
    lines = []
    for name, text in CASES:
        lines.append(json.dumps({"name": name, "text": text, **run(text)}, ensure_ascii=False) + "\n")
    out = "".join(lines)
    if a.check:
        current = a.file.read_text(encoding="utf-8") if a.file.exists() else ""
        if current != out:
            print(f"{a.file} is out of date; run {sys.argv[0]} without --check", file=sys.stderr)
            sys.exit(1)
        return
    a.file.parent.mkdir(parents=True, exist_ok=True)
    a.file.write_text(out, encoding="utf-8")
    print(f"{len(lines)} cases written to {a.file}", file=sys.stderr)


if __name__ == "__main__":
    main()
