#!/usr/bin/env python3
"""Builds the seed corpus of the fuzz targets into fuzz/corpus/<target>/, and the content
parser settings the `content` target runs (fuzz/specs/content.json).

Sources: the vendored templates with their fixtures (templates/*.json,
templates/fixtures/*/*.txt with .prefix and .tools.json), the shared conformance cases
(../shared/cases/conformance*.jsonl, beside the checkout), the JSON-Schema-Test-Suite schemas
(../shared/jsts/*.json) and the benchmark tools (bench-constrain/schemas/tools.json). What is
outside the repository is skipped when absent. The committed corpus is this script's output
(a few hundred KB); `--max-bytes` caps each seed.

Usage: python3 fuzz/seed.py [--max-bytes N]   (from anywhere; writes into the fuzz/ beside it)

The input layouts are those of the targets (fuzz/src/lib.rs and each fuzz_targets/*.rs).
"""

import argparse
import hashlib
import json
import random
from pathlib import Path

FUZZ = Path(__file__).resolve().parent
ROOT = FUZZ.parent
SHARED = ROOT.parent / "shared"

CONTENT_PARSERS = {"text", "int", "float", "bool", "json", "xml-inline", "kv-lines",
                   "python-call-list"}

# Settings no vendored template or conformance case may have, for the `content` target.
EXTRA_SPECS = [
    {"content": "text", "content_args": {"strip": False}},
    {"content": "int", "content_args": {"strip": False}},
    {"content": "float"},
    {"content": "bool"},
    {"content": "bool", "content_args": {"strip": False}},
    {"content": "json", "content_args": {"allow_non_json": True}},
    {"content": "json", "content_args": {"unquoted_keys": True, "allow_non_json": True}},
    {"content": "json", "content_args": {"string_delims": [["'", "'"], ["<|\"|>", "<|\"|>"]]}},
    {"content": "kv-lines"},
    {"content": "kv-lines", "content_args": {"line_sep": ";", "kv_sep": "=", "strip": False}},
    {"content": "kv-lines", "content_args": {"kv_sep": ": ", "value_parser": {"content": "json"}}},
    {"content": "python-call-list"},
    {"content": "xml-inline",
     "content_args": {"tag_pattern": "<(?P<key>\\w+)>(?P<value>.*?)</(?P=key)>"}},
]


def write(target, data):
    """Writes one seed, named by its hash (as libFuzzer names corpus files)."""
    folder = FUZZ / "corpus" / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)


def jsonl(path):
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def field_specs(template):
    """The content settings of each field of a template (as the field writes them)."""
    fields = template.get("fields") if isinstance(template, dict) else None
    if not isinstance(fields, dict):
        return []
    out = []
    for field in fields.values():
        if not isinstance(field, dict):
            continue
        content = field.get("content", "text")
        if content not in CONTENT_PARSERS:
            continue
        spec = {"content": content}
        if "content_args" in field:
            spec["content_args"] = field["content_args"]
        out.append(spec)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max-bytes", type=int, default=2048, help="most bytes of one seed")
    args = ap.parse_args()
    cap = args.max_bytes
    for old in (FUZZ / "corpus").glob("*/*"):
        old.unlink()

    cases = [c for name in ("conformance.jsonl", "conformance-5.24.jsonl")
             for c in jsonl(SHARED / "cases" / name)]

    # Vendored templates, in the order of `templates::names()` (sorted file stems).
    names = sorted(p.stem for p in (ROOT / "templates").glob("*.json"))
    specs = []
    for i, name in enumerate(names):
        source = json.loads((ROOT / "templates" / f"{name}.json").read_text())
        source = source.get("response_template", source)
        specs += field_specs(source)
        fixtures = sorted((ROOT / "templates" / "fixtures" / name).glob("*.txt"))
        for j, txt in enumerate(fixtures):
            text = txt.read_bytes()[:cap]
            # parse_chunks / router: template, context (fixture j), chunk sizes, output.
            write("parse_chunks", bytes([i, j + 1, 1, 2]) + text)
            write("router", bytes([i, 0, 1, 6]) + text)
            if j == 0:
                template_text = (ROOT / "templates" / f"{name}.json").read_bytes()
                write("template_load", template_text + b"\xff" + text)
            tools = txt.with_suffix(".tools.json")
            if tools.exists():
                for tool in json.loads(tools.read_text()):
                    params = tool.get("function", tool).get("parameters")
                    if params is not None:
                        write("schema", json.dumps(params).encode())

    # Conformance cases: their templates with their outputs, and bodies for the content
    # parsers their fields use.
    seen = set()
    for case in cases:
        template, text = case.get("template"), case.get("text")
        if not isinstance(text, str):
            continue
        key = json.dumps(template, sort_keys=True)
        specs += field_specs(template)
        if key in seen:
            continue
        seen.add(key)
        data = (json.dumps(template).encode() + b"\xff" + text.encode()
                + b"\xff" + str(case.get("prefix") or "").encode())
        if len(data) <= cap:
            write("template_load", data)

    unique = []
    for spec in specs + EXTRA_SPECS:
        if spec not in unique:
            unique.append(spec)
    (FUZZ / "specs").mkdir(exist_ok=True)
    (FUZZ / "specs" / "content.json").write_text(json.dumps(unique, indent=1) + "\n")
    by_parser = {}
    for k, spec in enumerate(unique):
        by_parser.setdefault(spec["content"], []).append(k)
    bodies = 0
    for case in cases:
        text = case.get("text")
        if not isinstance(text, str) or len(text.encode()) > cap:
            continue
        for spec in field_specs(case.get("template")):
            if spec["content"] != "text" and spec in unique and bodies < 300:
                write("content", bytes([unique.index(spec)]) + text.encode())
                bodies += 1
    for parser, ks in by_parser.items():
        for body in ["", " 1 ", "-12", "3.5e2", "True", "{\"a\": [1, 2.5, null]}",
                     "[f(a=1, b='x'), g()]", "<a>1</a><b>x</b>", "a: 1\nb: 2"]:
            write("content", bytes([ks[0]]) + body.encode())

    # Schemas: the JSON-Schema-Test-Suite's and the benchmark's tool parameters.
    for path in sorted((SHARED / "jsts").glob("*.json")):
        for group in json.loads(path.read_text()):
            data = json.dumps(group["schema"]).encode()
            if len(data) <= cap // 4:
                write("schema", data)
    bench = ROOT / "bench-constrain" / "schemas" / "tools.json"
    if bench.exists():
        for tool in json.loads(bench.read_text())[:40]:
            data = json.dumps(tool["parameters"]).encode()
            if len(data) <= cap:
                write("schema", data)
    write("schema", json.dumps({"type": "object", "properties": {"a": {"type": "string"}},
                                "required": ["a"], "additionalProperties": False}).encode())

    # constrain: `arbitrary` bytes, deterministic.
    rng = random.Random(17)
    for n in range(48):
        write("constrain", bytes([n % len(names)]) + bytes(rng.randrange(256) for _ in range(63)))

    total = sum(p.stat().st_size for p in (FUZZ / "corpus").glob("*/*"))
    counts = {d.name: len(list(d.iterdir())) for d in sorted((FUZZ / "corpus").iterdir())}
    print(f"seed corpus: {total // 1024} KB, {counts}, {len(unique)} content specs")


if __name__ == "__main__":
    main()
