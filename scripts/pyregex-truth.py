#!/usr/bin/env python3
"""Regenerates the Python side of template-build/tests/data/pyregex-truth.jsonl, the truth cases
of the Python `regex` dialect that `template_build::pyregex` translates.

Each line is one JSON object:

  {"pattern": "a$", "ours": "exact", "python_error": null,
   "searches": [{"hay": "a\\n", "groups": [[0, 1]]}, {"hay": "ab", "groups": null}]}

Written by hand (kept as they are):
  pattern   the pattern, in the Python `regex` dialect;
  ours      what our translations claim: "exact" (`to_fancy` and `to_dfa` both reproduce every
            search below), "fancy" (`to_fancy` does; `to_dfa` rejects the pattern or
            approximates it, e.g. a `$` as `\\z`), "dfa" (the compiled DFA tables reproduce every
            match span, with the module's own word characters; the regex engines' word table,
            an older Unicode, does not: word boundaries next to characters new in Unicode 17)
            or "rejected" (both reject it, and so does `group_names` when Python rejects it
            too);
  hay       the text each search runs on;
  pos       (optional, default 0) the UTF-8 byte offset where the search starts: Python's
            `.search(hay, pos)` (in characters), which sees the text before it (`\\b`).
Computed here from the real module (rewritten on every run):
  python_error  null if `regex.compile(pattern, regex.DOTALL)` compiles (module default
                VERSION0), else its error message (with the exception's type in front when it
                is not `regex.error`, as for `(?V0V1)`);
  groups        for `.search(hay, pos)`: null (no match) or the UTF-8 byte spans [start, end] of
                group 0, 1, ... (null for a group that did not participate).

The Rust side is template-build/tests/pyregex_truth.rs. To add a case, add a line with
"python_error": null and "groups": null, run this script, read `git diff`, then run
`cargo test -p template-build --test pyregex_truth`.

Usage (from the workspace root; the dialect rules follow `regex` 2026.11.19):
  python3 -m venv target/pyregex-venv
  target/pyregex-venv/bin/pip install regex==2026.11.19
  target/pyregex-venv/bin/python scripts/pyregex-truth.py           # rewrite the file
  target/pyregex-venv/bin/python scripts/pyregex-truth.py --check   # exit 1 if it would change
Another version of the module is refused unless --any-version is given.
"""
import argparse
import json
import sys
from pathlib import Path

import regex

REGEX_VERSION = "2026.11.19"
DEFAULT_FILE = Path(__file__).resolve().parents[1] / "template-build/tests/data/pyregex-truth.jsonl"
OURS = ("exact", "dfa", "fancy", "rejected")


def byte_offset(text, index):
    return len(text[:index].encode("utf-8"))


def groups(compiled, hay, pos):
    m = compiled.search(hay, len(hay.encode("utf-8")[:pos].decode("utf-8")))
    if m is None:
        return None
    spans = []
    for i in range(compiled.groups + 1):
        start, end = m.span(i)
        spans.append(None if start < 0 else [byte_offset(hay, start), byte_offset(hay, end)])
    return spans


def search(compiled, s):
    pos = s.get("pos", 0)
    out = {"hay": s["hay"]}
    if pos:
        out["pos"] = pos
    out["groups"] = groups(compiled, s["hay"], pos)
    return out


def regenerate(case, where):
    pattern, ours, searches = case["pattern"], case["ours"], case["searches"]
    if not isinstance(pattern, str) or ours not in OURS or not isinstance(searches, list):
        sys.exit(f"{where}: needs a string 'pattern', 'ours' one of {OURS} and a list 'searches'")
    try:
        compiled = regex.compile(pattern, regex.DOTALL)
        error = None
    except regex.error as e:
        compiled, error = None, str(e)
    except Exception as e:  # `(?V0V1)` raises ValueError
        compiled, error = None, f"{type(e).__name__}: {e}"
    if error is not None and searches:
        sys.exit(f"{where}: Python rejects {pattern!r} ({error}), so it can have no searches")
    return {
        "pattern": pattern,
        "ours": ours,
        "python_error": error,
        "searches": [search(compiled, s) for s in searches],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if the file is out of date")
    parser.add_argument("--any-version", action="store_true",
                        help=f"accept a `regex` other than {REGEX_VERSION}")
    args = parser.parse_args()
    if regex.__version__ != REGEX_VERSION and not args.any_version:
        sys.exit(f"regex {regex.__version__} is installed; the truth cases follow {REGEX_VERSION} "
                 "(or pass --any-version)")
    old = args.file.read_text(encoding="utf-8")
    lines = []
    for number, line in enumerate(old.split("\n"), 1):
        if line.strip():
            case = regenerate(json.loads(line), f"{args.file}:{number}")
            lines.append(json.dumps(case, ensure_ascii=True))
    new = "\n".join(lines) + "\n"
    if args.check:
        if new != old:
            sys.exit(f"{args.file} is out of date: run {sys.argv[0]} without --check")
        print(f"{args.file}: {len(lines)} cases, up to date")
        return
    if new != old:
        args.file.write_text(new, encoding="utf-8")
    print(f"{args.file}: {len(lines)} cases, {'rewritten' if new != old else 'unchanged'}")


if __name__ == "__main__":
    main()
