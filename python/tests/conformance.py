"""Conformance through Python: the public case files (../shared/cases/conformance.jsonl and
conformance-5.24.jsonl) run through this package AND through transformers itself, in one
process, comparing results as ../shared/cases/check.py does (messages; events after merging
adjacent region_chunk events of one field; errors by presence; script steps by presence of an
error). Each case is also checked against the case file's own expectation.

Usage: python conformance.py [CASES.jsonl ...] [-v]   (default: both public files)
Prints one summary line per file, e.g.
  conformance.jsonl: 487 cases, 487 equal to transformers, 0 deliberate, 0 unexplained; 487 as expected
and exits 1 when a case differs from transformers for no named reason or misses its expectation.

Deliberate differences (README, "Deliberate differences from the reference") are recognised by
what differs, not by case id:
  2 — the events are the same once initial_events and events are read as one stream: a
      delimiter at the very end of the prefix is committed there (ours) or on the next feed
      (transformers); README difference 2.
"""

import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = Path(os.environ.get("RT_SHARED", HERE.parents[2] / "shared"))  # ../shared beside the checkout
DEFAULT_FILES = [SHARED / "cases/conformance.jsonl", SHARED / "cases/conformance-5.24.jsonl"]

DELIBERATE = {
    2: "a delimiter at the end of the prefix is committed with the prefix's events (README, deliberate difference 2)",
}


def merge(events):
    out = []
    for e in events or []:
        if e.get("type") == "region_chunk" and out and out[-1].get("type") == "region_chunk" and out[-1]["field"] == e["field"]:
            out[-1] = dict(out[-1], text=out[-1]["text"] + e["text"])
        else:
            out.append(dict(e))
    return out


def run(module, case):
    """The case through `module` (response_templates or transformers.utils.chat_parsing), in the
    results schema of shared/README.md."""
    try:
        parser = module.ResponseParser(case["template"], prefix=case.get("prefix"), tools=case.get("tools"))
        initial = list(parser.initial_events)
        if case.get("script"):
            log, events, message = [], [], None
            for op in case["script"]:
                try:
                    if op["op"] == "feed":
                        events.extend(parser.feed(op.get("text", "")))
                    else:
                        message, final = parser.finalize()
                        events.extend(final)
                    log.append({"op": op["op"], "error": None})
                except Exception as e:  # each step's error is recorded, as the oracle does
                    log.append({"op": op["op"], "error": type(e).__name__})
            return {"ok": True, "message": message, "initial_events": initial, "events": events, "script_log": log}
        chunks = case.get("chunks")
        if chunks is None:
            chunks = [case.get("text", "")]
        events = []
        for chunk in chunks:
            events.extend(parser.feed(chunk))
        message, final = parser.finalize()
        return {"ok": True, "message": message, "initial_events": initial, "events": events + final}
    except Exception as e:  # bad templates and bad output raise, in both
        return {"ok": False, "error": f"{type(e).__name__}: {e}"}


def compare(case, a, b):
    """None when results a and b agree as check.py compares them, else a description."""
    if case.get("script"):
        la, lb = a.get("script_log") or [], b.get("script_log") or []
        if [bool(x["error"]) for x in la] != [bool(x["error"]) for x in lb]:
            return f"script steps differ: {la} vs {lb}"
        return None
    if a["ok"] != b["ok"]:
        return f"ok={a['ok']} vs ok={b['ok']}: {a.get('error') or ''}{b.get('error') or ''}"
    if not a["ok"]:
        return None
    if a["message"] != b["message"]:
        return f"messages differ:\n    {json.dumps(a['message'], ensure_ascii=False)[:400]}\n    {json.dumps(b['message'], ensure_ascii=False)[:400]}"
    if merge(a["initial_events"]) != merge(b["initial_events"]) or merge(a["events"]) != merge(b["events"]):
        return "events differ"
    return None


def deliberate(case, ours, theirs):
    """The number of the deliberate difference that explains `ours` != `theirs`, or None."""
    if ours["ok"] and theirs["ok"] and ours["message"] == theirs["message"] and not case.get("script"):
        if merge(ours["initial_events"] + ours["events"]) == merge(theirs["initial_events"] + theirs["events"]):
            return 2
    return None


def expected(case, res):
    """None when `res` meets the case file's expectation (check.py's rules), else why not."""
    if case.get("script"):
        log = res.get("script_log") or []
        if [bool(s.get("expect_error")) for s in case["script"]] != [bool(x["error"]) for x in log]:
            return f"script steps: {log}"
        return None
    if case.get("expect_error"):
        return None if not res["ok"] else "expected an error"
    if not res["ok"]:
        return f"unexpected error: {res['error']}"
    if res["message"] != case.get("expect"):
        return "message differs from expect"
    want = case.get("expect_events")
    if want:
        if merge(res["initial_events"]) != merge(want["initial"]) or merge(res["events"]) != merge(want["events"]):
            return "events differ from expect_events"
    return None


def run_file(path, verbose=False):
    """Runs one case file; returns a summary dict and the list of failure descriptions."""
    import response_templates as rt
    from transformers.utils import chat_parsing as ref

    cases = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    summary = {"cases": len(cases), "equal": 0, "deliberate": {}, "unexplained": 0, "as_expected": 0}
    failures = []
    for case in cases:
        ours, theirs = run(rt, case), run(ref, case)
        why = compare(case, ours, theirs)
        if why is None:
            summary["equal"] += 1
        else:
            number = deliberate(case, ours, theirs)
            if number is None:
                summary["unexplained"] += 1
                failures.append(f"{case['id']}: differs from transformers: {why}")
            else:
                summary["deliberate"][number] = summary["deliberate"].get(number, 0) + 1
                if verbose:
                    print(f"deliberate {number}: {case['id']}")
        miss = expected(case, ours)
        if miss is None:
            summary["as_expected"] += 1
        else:
            failures.append(f"{case['id']}: {miss}")
    return summary, failures


def summary_line(name, s):
    deliberate = sum(s["deliberate"].values())
    named = ", ".join(f"{n}: {c} ({DELIBERATE[n]})" for n, c in sorted(s["deliberate"].items()))
    return (
        f"{name}: {s['cases']} cases, {s['equal']} equal to transformers, {deliberate} deliberate"
        + (f" [{named}]" if named else "")
        + f", {s['unexplained']} unexplained; {s['as_expected']} as the case file expects"
    )


def main(argv):
    verbose = "-v" in argv
    files = [Path(a) for a in argv if not a.startswith("-")] or DEFAULT_FILES
    bad = 0
    for path in files:
        s, failures = run_file(path, verbose)
        for f in failures:
            print("FAIL", f)
        print(summary_line(path.name, s))
        bad += len(failures)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
