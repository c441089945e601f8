#!/usr/bin/env python3
"""Writes JSON Schema Store's schemas with their test instances as a corpus for the corpus
runner (`--bin corpus`).

JSON Schema Store (https://github.com/SchemaStore/schemastore) keeps, per schema
`src/schemas/json/NAME.json`, instances its CI validates against it: `src/test/NAME/*`
must be valid and `src/negative_test/NAME/*` invalid. Each schema with at least one usable
instance becomes `NAME.json` in the JSONSchemaBench/MaskBench shape:

    {"schema": ..., "tests": [{"description": "test/NAME/x.json", "data": ..., "valid": true}, ...],
     "source": "schemastore", "name": NAME, "draft": "draft-07", "remote_refs": [...]}

- Instances: `.json` files (JSON, or JSON with comments and trailing commas, which a few
  test files use) and `.toml` files (tomllib), except TOML with dates or times, which have
  no JSON form the store's validator would agree on. YAML instances are left out (no YAML
  reader in the standard library); the summary counts them.
- Schemas on the store's `skiptest` list (src/schema-validation.jsonc: schemas it does not
  validate, mostly a single `$ref` to another site) are left out.
- `remote_refs` lists the `$ref`s into other documents (other store schemas, other sites):
  such schemas are written all the same, and an engine that loads no remote documents
  refuses them.

    python3 bench-constrain/scripts/schemastore_corpus.py --repo PATH [--out DIR]

PATH is a SchemaStore checkout (a work tree with `src/`) or its git directory (read with
`git ls-tree` / `git cat-file`; blobs missing from a partial snapshot are skipped and
counted). The output defaults to bench-constrain/target/corpora/schemastore (emptied first).
Python 3.11 standard library only (tomllib).
"""

import argparse
import datetime
import json
import subprocess
import tomllib
from collections import Counter
from pathlib import Path

from corpus_common import fresh_dir, remote_refs, write_entry

HERE = Path(__file__).resolve().parent
PARTS = ["src/schemas/json", "src/test", "src/negative_test", "src/schema-validation.jsonc"]


def read_tree(repo):
    """`{path: bytes or None}` for every file under PARTS (None: a blob the snapshot lacks)."""
    if (repo / "src").is_dir():
        files = {}
        for part in PARTS:
            base = repo / part
            paths = [base] if base.is_file() else [p for p in base.rglob("*") if p.is_file()]
            for p in paths:
                files[p.relative_to(repo).as_posix()] = p.read_bytes()
        return files
    git = ["git", "--git-dir", str(repo)]
    listing = subprocess.run(
        git + ["ls-tree", "-r", "-z", "HEAD", *PARTS], check=True, capture_output=True
    ).stdout
    entries = []
    for record in listing.split(b"\0"):
        if record:
            meta, path = record.split(b"\t", 1)
            if meta.split()[1] == b"blob":
                entries.append((meta.split()[2].decode(), path.decode()))
    batch = subprocess.run(
        git + ["cat-file", "--batch"],
        input="".join(f"{sha}\n" for sha, _ in entries).encode(),
        check=True,
        capture_output=True,
    ).stdout
    files, at = {}, 0
    for _, path in entries:
        end = batch.index(b"\n", at)
        header = batch[at:end].split()
        at = end + 1
        if header[1] == b"missing":
            files[path] = None
            continue
        size = int(header[2])
        files[path] = batch[at : at + size]
        at += size + 1
    return files


def strip_jsonc(text):
    """JSON with `//` and `/* */` comments and trailing commas, as plain JSON text."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            i = text.find("\n", i) if "\n" in text[i:] else n
        elif text.startswith("/*", i):
            i = text.index("*/", i) + 2
        elif c in "]}":
            # A trailing comma: the last non-blank piece written is a lone ",".
            while out and out[-1].isspace():
                out.pop()
            if out and out[-1] == ",":
                out.pop()
            out.append(c)
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def has_datetime(value):
    if isinstance(value, (datetime.date, datetime.time)):
        return True
    if isinstance(value, dict):
        return any(has_datetime(v) for v in value.values())
    if isinstance(value, list):
        return any(has_datetime(v) for v in value)
    return False


def load_instance(path, raw, skipped):
    """The instance in `raw` (file `path`), or None with the reason counted in `skipped`."""
    suffix = path.rsplit(".", 1)[-1].lower()
    if suffix not in ("json", "toml"):
        skipped[suffix] += 1
        return None
    try:
        text = raw.decode("utf-8-sig")
        if suffix == "toml":
            value = tomllib.loads(text)
            if has_datetime(value):
                skipped["toml with dates"] += 1
                return None
            return value
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            value = json.loads(strip_jsonc(text))
            skipped["json with comments (read)"] += 1
            return value
    except (ValueError, UnicodeDecodeError):
        skipped[f"unreadable {suffix}"] += 1
        return None


def draft_of(schema):
    uri = schema.get("$schema", "") if isinstance(schema, dict) else ""
    for marker, name in [
        ("2020-12", "2020-12"),
        ("2019-09", "2019-09"),
        ("draft-07", "draft-07"),
        ("draft-06", "draft-06"),
        ("draft-04", "draft-04"),
    ]:
        if marker in uri:
            return name
    return "unspecified"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument(
        "--out", type=Path, default=HERE.parent / "target" / "corpora" / "schemastore"
    )
    args = parser.parse_args()

    files = read_tree(args.repo)
    config = json.loads(strip_jsonc(files["src/schema-validation.jsonc"].decode("utf-8")))
    skiptest = set(config.get("skiptest", []))
    skipped = Counter()
    tests = {}
    for path in sorted(files):
        parts = path.split("/")
        if parts[1] not in ("test", "negative_test") or len(parts) < 4:
            continue
        if files[path] is None:
            skipped["missing from the snapshot"] += 1
            continue
        data = load_instance(path, files[path], skipped)
        if data is not None:
            tests.setdefault(parts[2], []).append(
                {"description": "/".join(parts[1:]), "data": data, "valid": parts[1] == "test"}
            )

    fresh_dir(args.out)
    drafts, written, with_remote, instances, valid = Counter(), 0, 0, 0, 0
    left_out = Counter()
    for name in sorted(tests):
        raw = files.get(f"src/schemas/json/{name}.json")
        if f"{name}.json" in skiptest:
            left_out["on skiptest"] += 1
            continue
        if raw is None:
            left_out["schema missing"] += 1
            continue
        try:
            schema = json.loads(raw.decode("utf-8-sig"))
        except ValueError:
            left_out["schema unreadable"] += 1
            continue
        remote = remote_refs(schema)
        with_remote += bool(remote)
        drafts[draft_of(schema)] += 1
        instances += len(tests[name])
        valid += sum(t["valid"] for t in tests[name])
        write_entry(
            args.out / f"{name}.json",
            schema,
            tests[name],
            source="schemastore",
            name=name,
            draft=draft_of(schema),
            remote_refs=remote,
        )
        written += 1
    print(
        f"wrote {written} schemas to {args.out}: {with_remote} with remote $refs; "
        f"drafts {dict(drafts)}; instances {instances} ({valid} valid, {instances - valid} invalid)"
    )
    missing = sum(raw is None for raw in files.values())
    print(f"instances left out: {dict(skipped)}; schemas left out: {dict(left_out)}")
    print(f"files missing from the snapshot: {missing}")


if __name__ == "__main__":
    main()
