#!/usr/bin/env python3
"""Runs one engine on a case file and writes its results (JSON Lines, in case order).

usage: run.py (--oracle [PATH] | --cmd "rtpl run-cases --merge-chunks") [--jobs N] < CASES > RESULTS

--oracle runs ../shared/oracle/oracle.py with this Python (use the oracle venv's).
Only the keys of the case schema reach the engine. A case whose run crashes or hangs
gets {"ok": false, "crash": "..."} (see engines.run_command)."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import engines  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--oracle", nargs="?", const=str(engines.DEFAULT_ORACLE), help="path of oracle.py")
    g.add_argument("--cmd", help="command reading cases on stdin, printing results")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--case-timeout", type=float, default=20.0, help="seconds, when a case is re-run alone")
    a = ap.parse_args()
    cases = [json.loads(line) for line in sys.stdin if line.strip()]
    cmd = engines.oracle_command(a.oracle) if a.oracle else a.cmd
    results = engines.run_command(cmd, cases, a.jobs, a.case_timeout, log=engines.log_stderr)
    for c in cases:
        print(json.dumps(results[c["id"]], ensure_ascii=False))


if __name__ == "__main__":
    main()
