#!/usr/bin/env python3
"""Checks that the reference reads constrained LFM2.5 calls as ours does: every sample of
`rtpl constrain --model lfm2.5` given (one JSON line each, `{"text", "message", ...}`) is parsed
whole by the reference (transformers 5.24.0, `parse_response` with the template and the tools)
and its message compared with ours (content, reasoning, every call's name and arguments, key
order, and integer vs float). Exit 1 on any difference or reference error.

Usage (from the workspace root), with the 5.24.0 oracle venv:
  cargo run -q -p rtpl -- constrain --model lfm2.5 --tools cli/tests/data/keyword-calls.tools.json \\
      --tool-choice required --vocab o200k_base --sample 1000 --seed 11 > /tmp/lfm25.jsonl
  $PY scripts/keyword-calls-constrained.py /tmp/lfm25.jsonl \\
      templates/lfm2.5.json cli/tests/data/keyword-calls.tools.json
"""
import json
import sys

from transformers.utils.chat_parsing import parse_response


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
    samples_path, template_path, tools_path = sys.argv[1:4]
    with open(template_path, encoding="utf-8") as f:
        template = json.load(f)
    template = template.get("response_template", template)
    with open(tools_path, encoding="utf-8") as f:
        tools = json.load(f)
    samples = blocks = calls = bad = 0
    with open(samples_path, encoding="utf-8") as lines:
        for line in lines:
            sample = json.loads(line)
            if "message" not in sample:
                continue
            samples += 1
            text = sample["text"]
            blocks += text.count("<|tool_call_start|>")
            try:
                reference = parse_response(text, template, prefix="", tools=tools)
            except Exception as e:  # the reference raising is a difference too
                bad += 1
                print("reference error:", str(e).splitlines()[0], repr(text))
                continue
            calls += len(reference.get("tool_calls", []))
            if not same(sample["message"], reference):
                bad += 1
                print("read differently:", repr(text), sample["message"], reference)
    print(
        f"{samples} samples, {blocks} call blocks, {calls} calls, "
        f"{bad} read differently by the reference"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
