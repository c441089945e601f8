#!/usr/bin/env python3
"""Checks that the reference reads constrained LFM2 calls as ours does: every call block of the
`rtpl constrain --model lfm2` samples given (one JSON line each, `{"text", "message", ...}`) is
read by the reference's `python-call-list` content parser (transformers 5.24.0,
`content_parsers._python_call_list`) and compared with the calls of our message (names,
arguments, key order, and integer vs float). Exit 1 on any difference or reference error.

Usage (from the workspace root), with the 5.24.0 oracle venv:
  cargo run -q -p rtpl -- constrain --model lfm2 --tools cli/tests/data/python-calls.tools.json \\
      --tool-choice required --vocab o200k_base --sample 700 --seed 11 > /tmp/lfm2.jsonl
  $PY scripts/python-call-list-constrained.py /tmp/lfm2.jsonl
"""
import json
import sys

from transformers.utils.chat_parsing.content_parsers import _python_call_list

OPEN, CLOSE = "<|tool_call_start|>", "<|tool_call_end|>"


def same(a, b) -> bool:
    """Equal with the same types (an int is not a float) and the same key order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def main() -> int:
    blocks = calls = bad = 0
    with open(sys.argv[1], encoding="utf-8") as lines:
        for line in lines:
            sample = json.loads(line)
            text = sample["text"]
            start = text.find(OPEN)
            if "message" not in sample or start < 0:
                continue
            body = text[start + len(OPEN) : text.find(CLOSE, start)]
            blocks += 1
            try:
                reference = _python_call_list(body, {})
            except ValueError as e:
                bad += 1
                print("reference error:", str(e).splitlines()[0], repr(body))
                continue
            ours = [c["function"] for c in sample["message"].get("tool_calls", [])]
            reference = [{"name": c["name"], "arguments": c["arguments"]} for c in reference]
            calls += len(reference)
            if not same(ours, reference):
                bad += 1
                print("read differently:", repr(body), ours, reference)
    print(f"{blocks} call blocks, {calls} calls, {bad} read differently by the reference")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
