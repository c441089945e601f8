"""Speed of parsing in Python: response_templates against transformers' own parse_response and
ResponseParser, in one process, on generated model outputs of 10 KB, 100 KB and 2 MB.

The outputs have the shape of the Rust benches' (bench/src/lib.rs): about 40% reasoning in
<think>...</think>, 20% tool calls, then the final content and <|im_end|>; two formats
(smollm3: JSON calls in <tool_call>; qwen3-coder: XML parameter calls). This generator is its
own (a seeded random.Random), written for this script.

Modes: one-shot (parse_response on the whole text; for ours the template is a Template, for
transformers the dict, as each is used) and streamed in 4-character feeds (about one token; the
pieces are cut before timing), including construction and finalize. Before timing, both implementations must give the same
message. Prints one Markdown table row per input and mode: medians in ms, MB/s (10^6 bytes of
output per second) and the ratio.

usage: python bench_parse.py [--quick] [--runs N] [--sizes 10KB,100KB,2MB] [--formats smollm3,qwen3-coder]
  --quick: the reference runs once at 2 MB and not at all when streaming 2 MB (about 90 s a run)
"""

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

import response_templates as rt

REPO = Path(__file__).resolve().parents[2]
PREFIX = (
    "<|im_start|>system\nYou are a careful coding assistant.<|im_end|>\n"
    "<|im_start|>user\nPlease refactor the parser module and run the tests.<|im_end|>\n<|im_start|>assistant\n"
)
SIZES = {"10KB": 10 * 1024, "100KB": 100 * 1024, "2MB": 2 * 1024 * 1024}
WORDS = (
    "the parser reads each region once and commits text when no delimiter can still match; "
    "a buffer holds what may become a delimiter, so streaming equals one-shot parsing for every chunking. "
    "We check the tests, then the benchmarks, and finally the documentation of the module."
).split()
FILES = ["src/lib.rs", "src/engine.rs", "tests/parse.rs", "README.md", "docs/internals.md"]


def prose(rng, size):
    out, length = [], 0
    while length < size:
        sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 18)))
        sentence = sentence[0].upper() + sentence[1:] + rng.choice([". ", ".\n", "? ", ".\n\n"])
        if rng.random() < 0.05:
            sentence += "`fn feed(&mut self, text: &str)` returns the events < and > of a region.\n"
        out.append(sentence)
        length += len(sentence)
    return "".join(out)


def call(rng, fmt, budget):
    name = rng.choice(["write_file", "edit_file", "read_file", "search"])
    if name in ("write_file", "edit_file"):
        args = {"path": rng.choice(FILES), "content": prose(rng, budget)}
    elif name == "read_file":
        args = {"path": rng.choice(FILES), "start_line": rng.randint(1, 400)}
    else:
        args = {"query": prose(rng, 40).strip(), "max_results": rng.randint(5, 50)}
    if fmt == "smollm3":
        return "<tool_call>\n" + json.dumps({"name": name, "arguments": args}) + "\n</tool_call>"
    params = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in args.items())
    return f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>"


def generate(fmt, size, seed=2026):
    rng = random.Random(f"{fmt}-{size}-{seed}")
    calls = max(size // 2048, 2)
    parts = ["<think>\n", prose(rng, size * 2 // 5), "\n</think>\n\n"]
    for _ in range(calls):
        parts.append(call(rng, fmt, max(size // 5 // calls - 80, 16)) + "\n")
    parts.append("\n")
    used = sum(map(len, parts))
    parts.append(prose(rng, max(size - used - 16, 64)))
    parts.append("<|im_end|>")
    return "".join(parts)


def median_time(fn, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def pieces_of(text, step=4):
    """The output cut into feeds of `step` characters (cut before timing: a server has each
    token's text already, so the slicing is not the parser's cost)."""
    return [text[i : i + step] for i in range(0, len(text), step)]


def streamed(module, template, pieces, prefix):
    parser = module.ResponseParser(template, prefix=prefix)
    feed = parser.feed
    for piece in pieces:
        feed(piece)
    return parser.finalize()[0]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--ref-runs", type=int, default=5)
    ap.add_argument("--sizes", default="10KB,100KB,2MB")
    ap.add_argument("--formats", default="smollm3,qwen3-coder")
    args = ap.parse_args(argv)
    from transformers.utils import chat_parsing as ref
    import transformers

    print(f"transformers {transformers.__version__}, Python {sys.version.split()[0]}")
    print("| input | size | mode | ours ms | transformers ms | ours MB/s | transformers MB/s | ours/transformers |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for fmt in args.formats.split(","):
        spec = json.loads((REPO / "templates" / f"{fmt}.json").read_text())
        template = rt.Template.from_dict(spec)
        for label in args.sizes.split(","):
            text = generate(fmt, SIZES[label])
            mb = len(text.encode()) / 1e6
            pieces = pieces_of(text)
            ours_msg = rt.parse_response(text, template, prefix=PREFIX)
            assert streamed(rt, template, pieces, PREFIX) == ours_msg
            for mode in ("one-shot", "4-char feeds"):
                if mode == "one-shot":
                    ours_fn = lambda: rt.parse_response(text, template, prefix=PREFIX)
                    ref_fn = lambda: ref.parse_response(text, spec, prefix=PREFIX)
                else:
                    ours_fn = lambda: streamed(rt, template, pieces, PREFIX)
                    ref_fn = lambda: streamed(ref, spec, pieces, PREFIX)
                ours = median_time(ours_fn, args.runs)
                ref_runs = args.ref_runs
                note = ""
                if label == "2MB":
                    ref_runs = 1
                    note = " (1 run)"
                    if args.quick and mode != "one-shot":
                        ref_runs = 0
                if ref_runs:
                    if mode == "one-shot":
                        assert ref.parse_response(text, spec, prefix=PREFIX) == ours_msg, f"{fmt} {label}: messages differ"
                    theirs = median_time(ref_fn, ref_runs)
                    ratio = f"{theirs / ours:.1f}x"
                    theirs_ms, theirs_mbs = f"{theirs * 1e3:.1f}{note}", f"{mb / theirs:.3g}"
                else:
                    ratio = theirs_ms = theirs_mbs = "-"
                print(
                    f"| {fmt} | {label} | {mode} | {ours * 1e3:.2f} | {theirs_ms} | {mb / ours:.3g} | {theirs_mbs} | {ratio} |",
                    flush=True,
                )


if __name__ == "__main__":
    main(sys.argv[1:])
