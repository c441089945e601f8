#!/usr/bin/env python3
"""Times the reference implementation (transformers' `transformers.utils.chat_parsing`) on the
inputs the `compare` binary of bench/ wrote, and checks that it gives our message.

usage: bench_reference.py [DIR] [--runs N] [--slow-runs N] [--timeout S] [--quick] [--only SUBSTR]

  DIR          where `compare` wrote manifest.json and the inputs (default target/bench-inputs)
  --runs N     runs per measurement, the median is reported (default 5, at least 5)
  --slow-runs N  runs at 2 MB, where one run takes 25-100 s (default 1)
  --timeout S  give up a run after S seconds (default 150); the cell then reports a bound
  --quick      skip streaming at 2 MB
  --only S     only inputs whose id contains S

Each run: `ResponseParser(template, prefix=prefix)` on the template loaded once
(`load_response_template`), `feed` of every chunk, `finalize`; one-shot is `parse_response`.
Chunks are cut exactly as `compare` cuts them: every N bytes of UTF-8, extended to the next
char boundary. A run shorter than ~50 ms is repeated and averaged. The first run's message is
compared with ours (JSON, key order included); on a mismatch the cell is not timed and the
difference is reported. Writes DIR/reference.json.
"""
import argparse
import gc
import json
import platform
import signal
import statistics
import sys
import time
from pathlib import Path

import transformers
from transformers.utils.chat_parsing import ResponseParser, parse_response
from transformers.utils.chat_parsing.response_templates import load_response_template

MODES = [("one-shot", None), ("16-byte", 16), ("4-byte", 4)]


def chunks(data: bytes, n: int) -> list[str]:
    out, start = [], 0
    while start < len(data):
        end = min(start + n, len(data))
        while end < len(data) and (data[end] & 0xC0) == 0x80:
            end += 1
        out.append(data[start:end].decode("utf-8"))
        start = end
    return out


def run_once(template, prefix, text, pieces):
    if pieces is None:
        return parse_response(text, template, prefix=prefix)
    parser = ResponseParser(template, prefix=prefix)
    for piece in pieces:
        parser.feed(piece)
    message, _events = parser.finalize()
    return message


class RunTimeout(Exception):
    pass


def _alarm(_signum, _frame):
    raise RunTimeout()


def first_difference(a: str, b: str) -> str:
    i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    i = max(0, i - 40)
    return f"ours ...{a[i:i + 100]!r} vs ...{b[i:i + 100]!r}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", nargs="?", default="target/bench-inputs")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--slow-runs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=150.0)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default=None)
    args = ap.parse_args()
    runs = max(args.runs, 5)
    out_dir = Path(args.dir)
    manifest = json.loads((out_dir / "manifest.json").read_text(encoding="utf-8"))

    rows, notes = [], []
    for entry in manifest:
        if args.only and args.only not in entry["id"]:
            continue
        template = load_response_template(entry["template"])
        data = (out_dir / entry["text_file"]).read_bytes()
        text = data.decode("utf-8")
        prefix = entry["prefix"]
        expected = json.dumps(entry["expected"], ensure_ascii=False)
        large = entry["size_label"] == "2MB"
        for mode, n in MODES:
            row = {"id": entry["id"], "mode": mode, "seconds": None, "runs": 0, "note": None}
            rows.append(row)
            if n is not None and large and args.quick:
                row["note"] = "skipped (--quick)"
                continue
            pieces = None if n is None else chunks(data, n)
            want = args.slow_runs if large else runs
            gc.collect()
            signal.signal(signal.SIGALRM, _alarm)
            signal.setitimer(signal.ITIMER_REAL, args.timeout)
            start = time.perf_counter()
            try:
                message = run_once(template, prefix, text, pieces)
            except RunTimeout:
                row["note"] = "timeout"
                row["timeout"] = args.timeout
                print(f"{entry['id']} {mode}: timed out after {args.timeout:g} s", file=sys.stderr, flush=True)
                continue
            except Exception as e:  # the reference signals bad input by raising
                row["note"] = "error"
                notes.append(f"{entry['id']} {mode}: the reference raises {type(e).__name__}: {e}")
                continue
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            first = time.perf_counter() - start
            got = json.dumps(message, ensure_ascii=False)
            if got != expected:
                row["note"] = "mismatch"
                notes.append(f"{entry['id']} {mode}: the reference's message differs: "
                             f"{first_difference(expected, got)}")
                continue
            iters = max(1, int(0.05 / max(first, 1e-9)) + 1) if first < 0.05 else 1
            samples = [first] if iters == 1 else []
            while len(samples) < want:
                gc.collect()
                start = time.perf_counter()
                for _ in range(iters):
                    run_once(template, prefix, text, pieces)
                samples.append((time.perf_counter() - start) / iters)
            row["seconds"] = statistics.median(samples)
            row["runs"] = len(samples)
            print(f"{entry['id']} {mode}: {len(data) / row['seconds'] / 1e6:.3f} MB/s "
                  f"({len(samples)} run{'s' if len(samples) != 1 else ''})", file=sys.stderr, flush=True)
    result = {
        "transformers": transformers.__version__,
        "python": platform.python_version(),
        "runs": runs,
        "rows": rows,
        "notes": notes,
    }
    (out_dir / "reference.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
