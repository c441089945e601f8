"""Token-mask speed from Python: response_templates' Matcher against llguidance's LLMatcher
(issue 18, point 7: mask fill at least 3x faster, medians, same schemas).

Both engines run in this process, on the same JSON schemas (the 220 generated tool-parameter
schemas of bench-constrain/schemas/tools.json), the same vocabulary (o200k_base: ours built
in, llguidance's from tiktoken's Encoding of the same .tiktoken file, read offline) and the
same valid outputs, walked token by token:

* ours: the schema as the response format (``{"type": "json_schema", ...}``) of the qwen3
  template, so the content must be that JSON (what a server enforces with a response
  template); ``Matcher.fill_next_token_bitmask(bitmask, 0)`` is timed;
* llguidance 1.9.1: ``LLMatcher(tokenizer, LLMatcher.grammar_from_json_schema(schema))``;
  ``llguidance.numpy.fill_next_token_bitmask(matcher, bitmask, 0)`` is timed.

Outputs: two per schema, sampled under our masks (the sampler of tests/test_masks.py), the
content JSON taken from the parsed message, checked with jsonschema when installed, and
re-tokenized canonically (tiktoken's BPE). Each engine times the fill at every token position
of the JSON and one more after it (where the value may end), checks the token is in its mask
and consumes it. Output 1 runs right after a fresh compile (ours: constraint cache emptied,
cold masks); output 2 on the same compiled schema (ours: a new Matcher, cache hit, warm
masks; llguidance: a deep copy of the fresh matcher).

Compile time: ours ``Matcher(...)`` after emptying the cache (template load + compile +
index), llguidance ``grammar_from_json_schema`` + ``LLMatcher(...)``. Vocabulary preparation
is once per engine and not counted.

Run: python bench/bench_masks.py [--limit N] [--seed S] [--out results.json]
(needs numpy, llguidance, tiktoken; a release build: maturin develop --release).
"""

import argparse
import glob
import json
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from response_templates import _native  # noqa: E402
from response_templates.masks import Matcher, Vocabulary, allocate_token_bitmask  # noqa: E402

TEMPLATE = "qwen3"


def tiktoken_file():
    files = glob.glob(os.path.expanduser(
        "~/.cargo/registry/src/*/tiktoken-rs-*/assets/o200k_base.tiktoken"))
    if not files:
        sys.exit("no o200k_base.tiktoken found (tiktoken-rs's assets in the cargo registry)")
    return files[0]


def llguidance_tokenizer():
    """llguidance's tokenizer for o200k_base, from tiktoken's Encoding of the local file (the
    encoding's definition from tiktoken_ext, its file read offline)."""
    import tiktoken
    import tiktoken.load
    import tiktoken_ext.openai_public as public
    from llguidance.tiktoken import lltokenizer_from_encoding

    path = tiktoken_file()
    real = public.load_tiktoken_bpe
    public.load_tiktoken_bpe = lambda *_a, **_k: tiktoken.load.load_tiktoken_bpe(path)
    try:
        encoding = tiktoken.Encoding(**public.o200k_base())
    finally:
        public.load_tiktoken_bpe = real
    return lltokenizer_from_encoding(encoding)


def response_format(schema):
    return {"type": "json_schema", "json_schema": {"name": "bench", "schema": schema, "strict": True}}


def valid_outputs(vocab, schema, rng, count, validator):
    """`count` JSON texts valid for `schema` (sampled under our masks through the template,
    content parsed out), or fewer if sampling keeps getting cut off."""
    import test_masks as T

    rf = response_format(schema)
    proto = Matcher(TEMPLATE, vocab, response_format=rf)
    proposals = T.phrases(vocab, TEMPLATE, None, rf)
    template_json = _native._masks_template_source(TEMPLATE)
    out = []
    for _ in range(count * 4):
        tokens, done = T.sample(proto.copy(), vocab, rng, proposals, cap=1500)
        if not done:
            continue
        text = vocab.decode(tokens).decode("utf-8")
        message, violations = _native._masks_check_response(template_json, text, None, json.dumps(rf))
        if json.loads(violations):
            raise AssertionError(f"a sampled output broke the contract: {text!r}")
        content = json.loads(message)["content"].strip()
        if validator is not None:
            validator(json.loads(content), schema)
        out.append(content)
        if len(out) == count:
            break
    return out


def walk(matcher, ids, bitmask, times, fill):
    """Times `fill(matcher, bitmask, 0)` at every position of `ids` and one past the end,
    checking each token is in the mask and consumed; False at the first refusal."""
    for t in ids + [None]:
        t0 = time.perf_counter_ns()
        fill(matcher, bitmask, 0)
        times.append(time.perf_counter_ns() - t0)
        if t is None:
            break
        if not (bitmask[0, t // 32] >> (t % 32)) & 1 or not matcher.consume_token(t):
            return False
    return True


def ours_fill(matcher, bitmask, index):
    matcher.fill_next_token_bitmask(bitmask, index)


def pct(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def fmt(ns):
    return f"{ns / 1000:.1f} us" if ns < 1_000_000 else f"{ns / 1e6:.2f} ms"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=0, help="first N schemas only")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", help="per-schema results as JSON")
    args = ap.parse_args()

    import llguidance
    from llguidance.numpy import fill_next_token_bitmask as llg_fill

    try:
        import jsonschema
        import test_masks as T
        checker = T.format_checker(jsonschema)

        def validator(value, schema):
            jsonschema.validate(value, schema, format_checker=checker)
    except ImportError:
        validator = None

    tools_path = os.path.join(HERE, "..", "..", "bench-constrain", "schemas", "tools.json")
    with open(tools_path) as f:
        tools = json.load(f)
    schemas = [(t["name"], t["parameters"]) for t in tools]
    if args.limit:
        schemas = schemas[: args.limit]

    t0 = time.perf_counter()
    vocab = Vocabulary.builtin("o200k_base")
    ours_vocab_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    lltok = llguidance_tokenizer()
    llg_vocab_s = time.perf_counter() - t0
    assert lltok.vocab_size == vocab.vocab_size, (lltok.vocab_size, vocab.vocab_size)

    rng = np.random.default_rng(args.seed)
    bitmask = allocate_token_bitmask(1, vocab.vocab_size)
    results = []
    skipped = []
    for k, (name, schema) in enumerate(schemas):
        outputs = valid_outputs(vocab, schema, rng, 2, validator)
        if len(outputs) < 2:
            skipped.append((name, "fewer than 2 outputs sampled"))
            continue
        token_ids = [vocab.encode(o) for o in outputs]
        rf = response_format(schema)
        r = {"name": name, "tokens": [len(t) for t in token_ids]}
        # ours
        _native._masks_clear_cache()
        t0 = time.perf_counter_ns()
        m = Matcher(TEMPLATE, vocab, response_format=rf)
        r["ours_compile"] = time.perf_counter_ns() - t0
        r["ours_1"], r["ours_2"] = [], []
        ok1 = walk(m, token_ids[0], bitmask, r["ours_1"], ours_fill)
        m2 = Matcher(TEMPLATE, vocab, response_format=rf)
        ok2 = walk(m2, token_ids[1], bitmask, r["ours_2"], ours_fill)
        # llguidance
        t0 = time.perf_counter_ns()
        grammar = llguidance.LLMatcher.grammar_from_json_schema(schema)
        lm = llguidance.LLMatcher(lltok, grammar, log_level=0)
        r["llg_compile"] = time.perf_counter_ns() - t0
        if lm.is_error():
            skipped.append((name, "llguidance: " + lm.get_error()[:200]))
            continue
        fresh = lm.deep_copy()
        r["llg_1"], r["llg_2"] = [], []
        lok1 = walk(lm, token_ids[0], bitmask, r["llg_1"], llg_fill)
        lok2 = walk(fresh, token_ids[1], bitmask, r["llg_2"], llg_fill)
        if not (ok1 and ok2 and lok1 and lok2):
            skipped.append((name, f"refused a token: ours {ok1, ok2}, llguidance {lok1, lok2}"))
            continue
        results.append(r)
        if (k + 1) % 20 == 0:
            print(f"{k + 1}/{len(schemas)} schemas", file=sys.stderr)

    def pooled(key):
        return [x for r in results for x in r[key]]

    print(f"schemas: {len(results)} of {len(schemas)} measured ({len(skipped)} skipped)")
    for name, why in skipped[:10]:
        print(f"  skipped {name}: {why}")
    print(f"vocabulary o200k_base ({vocab.vocab_size} ids); preparation, once: ours "
          f"{ours_vocab_s:.2f} s, llguidance {llg_vocab_s:.2f} s (not in the numbers)")
    print(f"output tokens: median {statistics.median([n for r in results for n in r['tokens']])}, "
          f"{sum(n for r in results for n in r['tokens'])} in all")
    print()
    print("| engine | compile p50 | fill p50 | fill p90 | fill p99 | fill mean | 2nd output p50 / mean |")
    print("|---|---|---|---|---|---|---|")
    rows = {}
    for eng, label in (("ours", "response_templates (qwen3 + response_format)"),
                       ("llg", f"llguidance {llguidance.__version__ if hasattr(llguidance, '__version__') else '1.9.1'} LLMatcher")):
        comp = [r[f"{eng}_compile"] for r in results]
        one, two = pooled(f"{eng}_1"), pooled(f"{eng}_2")
        both = one + two
        rows[eng] = dict(compile=statistics.median(comp), p50=statistics.median(both),
                         p90=pct(both, 0.9), p99=pct(both, 0.99), mean=statistics.mean(both),
                         p50_2=statistics.median(two), mean_2=statistics.mean(two),
                         p50_1=statistics.median(one), mean_1=statistics.mean(one))
        x = rows[eng]
        print(f"| {label} | {fmt(x['compile'])} | {fmt(x['p50'])} | {fmt(x['p90'])} | "
              f"{fmt(x['p99'])} | {fmt(x['mean'])} | {fmt(x['p50_2'])} / {fmt(x['mean_2'])} |")
    o, l = rows["ours"], rows["llg"]
    print()
    print(f"ratios llguidance / ours: fill median {l['p50'] / o['p50']:.1f}x "
          f"(1st output {l['p50_1'] / o['p50_1']:.1f}x, 2nd {l['p50_2'] / o['p50_2']:.1f}x), "
          f"fill mean {l['mean'] / o['mean']:.1f}x, p99 {l['p99'] / o['p99']:.1f}x, "
          f"compile median {l['compile'] / o['compile']:.2f}x")
    print(f"fill calls timed: {len(pooled('ours_1')) + len(pooled('ours_2'))} per engine")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"results": results, "skipped": skipped}, f)


if __name__ == "__main__":
    main()
