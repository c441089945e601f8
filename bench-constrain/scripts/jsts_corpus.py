#!/usr/bin/env python3
"""Writes the JSON-Schema-Test-Suite as a corpus for the corpus runner (`--bin corpus`).

Each test group of drafts 2020-12, 7 and 4 (their `optional/` folders included) becomes one
file in the JSONSchemaBench/MaskBench shape:

    {"schema": ..., "tests": [{"description", "data", "valid"}, ...],
     "draft": "draft2020-12", "source": "draft2020-12/optional/format/date.json#3",
     "description": ..., "remote_refs": [...]}

named `<draft>--<path with / as ->--<group index>.json`, so that a sorted listing keeps the
suite's order. `remote_refs` lists the `$ref`s into documents outside the schema (the suite's
`remotes/`, served at http://localhost:1234/, or the meta-schemas): such groups are written
all the same, and an engine that loads no remote documents refuses them.

    python3 bench-constrain/scripts/jsts_corpus.py [--suite DIR] [--out DIR]

Defaults: the suite in ../shared/jsts-full (next to the repository), the output in
bench-constrain/target/corpora/jsts (emptied first). Python 3 standard library only.
"""

import argparse
import json
from pathlib import Path

from corpus_common import fresh_dir, remote_refs, write_entry

HERE = Path(__file__).resolve().parent
DRAFTS = ["draft2020-12", "draft7", "draft4"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", type=Path, default=HERE.parents[2] / "shared" / "jsts-full")
    parser.add_argument("--out", type=Path, default=HERE.parent / "target" / "corpora" / "jsts")
    args = parser.parse_args()

    fresh_dir(args.out)
    written = {}
    needing_remotes = 0
    for draft in DRAFTS:
        root = args.suite / "tests" / draft
        for path in sorted(root.rglob("*.json")):
            rel = path.relative_to(root).with_suffix("").as_posix()
            groups = json.loads(path.read_text(encoding="utf-8"))
            for i, group in enumerate(groups):
                remote = remote_refs(group["schema"])
                needing_remotes += bool(remote)
                name = f"{draft}--{rel.replace('/', '-')}--{i:02}.json"
                write_entry(
                    args.out / name,
                    group["schema"],
                    group["tests"],
                    draft=draft,
                    source=f"{draft}/{rel}.json#{i}",
                    description=group.get("description", ""),
                    remote_refs=remote,
                )
                written[draft] = written.get(draft, 0) + 1
    total = sum(written.values())
    print(
        f"wrote {total} groups to {args.out} ("
        + ", ".join(f"{d} {n}" for d, n in written.items())
        + f"); {needing_remotes} need remote documents"
    )


if __name__ == "__main__":
    main()
