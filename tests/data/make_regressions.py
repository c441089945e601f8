#!/usr/bin/env python3
"""Turns regression case inputs (tests/data/regressions.in.jsonl) into cases with the
reference's expectations (tests/data/regressions.jsonl), in the conformance schema of
shared/README.md. Run with the oracle venv's python from the repo root:
  PY=$(ORACLE_TRANSFORMERS=5.24.0 ../shared/oracle/setup.sh); $PY tests/data/make_regressions.py
Another pair of files: `$PY tests/data/make_regressions.py IN OUT`, e.g. the transformers
5.24 behaviours (tests/data/reference-5.24.in.jsonl -> tests/data/reference-5.24.jsonl, made
with the 5.24.0 oracle). The origin of each case names the transformers version that ran.
The word-boundary cases likewise:
  $PY tests/data/make_regressions.py tests/data/word-boundary.in.jsonl tests/data/word-boundary.jsonl
"""
import json
import subprocess
import sys

from transformers import __version__ as reference_version

src, dst = sys.argv[1:3] if len(sys.argv) == 3 else ("tests/data/regressions.in.jsonl", "tests/data/regressions.jsonl")
ins = [json.loads(l) for l in open(src) if l.strip()]
payload = "".join(json.dumps({k: v for k, v in c.items() if k != "note"}) + "\n" for c in ins)
out = subprocess.run([sys.executable, "../shared/oracle/oracle.py", "--merge-chunks"], input=payload,
                     capture_output=True, text=True, check=True).stdout
results = {r["id"]: r for r in map(json.loads, out.splitlines())}
with open(dst, "w") as f:
    for c in ins:
        r = results[c["id"]]
        case = dict(c, origin=f"reference oracle (transformers {reference_version}) on a regression input")
        case.setdefault("chunks", None)
        case.setdefault("tools", None)
        if c.get("script"):
            case["script"] = [dict(op, expect_error=bool(log["error"])) for op, log in zip(c["script"], r["script_log"])]
            case["expect_error"] = False
        elif not r["ok"]:
            case["expect_error"] = True
        else:
            case["expect_error"] = False
            case["expect"] = r["message"]
            case["expect_events"] = {"initial": r["initial_events"], "events": r["events"]}
        f.write(json.dumps(case, ensure_ascii=False) + "\n")
print(f"{len(ins)} cases written", file=sys.stderr)
