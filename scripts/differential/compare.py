#!/usr/bin/env python3
"""Compares our engine's results with the reference's on differential cases.

usage: compare.py CASES REF_RESULTS OURS_RESULTS [--details FILE]
                  [--minimize --ours-cmd CMD [--oracle PATH] [--max-minimize N] [--minimize-seconds S]]
                  [--ours-is-reference | --simulate-ideal] [-v]

CASES is gen.py's output: base cases and their one-shot twins ("twin_of"). Results
are JSON Lines as oracle.py prints them (events merged here as check.py does, so
running with or without --merge-chunks does not matter).

For each base case (and its twin, when the base is fed in chunks) it compares:
  - reference vs ours, chunked run and one-shot run: ok vs not ok (error texts differ
    by design), message, initial_events, events (adjacent region_chunk merged); JSON
    equality is strict: 1, 1.0 and true differ, key order does not matter;
  - ours chunked vs ours one-shot: streaming must give what one-shot parsing gives
    (DESIGN: a deliberate guarantee; the reference breaks it).
A difference is classified
  "deliberate: delimiter committed at once (initial_events/events boundary moved)" when
      the results are equal once initial_events and events are taken as one stream
      (DESIGN: a complete delimiter that the DFA shows cannot grow is committed at once;
      the reference waits for one more chunk for any regex delimiter and any literal
      list where one literal is a prefix of another, so such a delimiter ending the
      prefix opens or closes its region in events instead of initial_events);
  "deliberate: streaming==one-shot (reference chunking artefact)" when the reference's
      chunked result differs from its own one-shot result while both our results equal
      the reference's one-shot result;
  "deliberate: regex construct outside the DFA dialect" when the template uses one
      (tag unsupported_regex) and we refuse it while the reference runs it;
  "deliberate: the reference's value is not representable in JSON" when the reference's
      result holds NaN, an infinity or an integer beyond 64 bits (ours errors or keeps text);
  "deliberate: template checked strictly at load" when the template uses a truthy
      non-bool flag or a content_arg the reference only checks when a region is parsed
      (tags loose_typing, lazy_validation) and we reject it at load;
  "deliberate: streaming==one-shot at the prefix/output boundary" when the reference,
      given the part of the prefix after its last start anchor as the start of the output
      instead (prefix and output are then one stream), gives exactly our result: the
      reference replays the prefix as a chunk of its own, so its partial regex can commit a
      short match at the prefix's end (README difference 1);
  with --lenient (OURS_RESULTS from `rtpl run-cases --lenient`): where the reference
  succeeds the lenient result must be identical, with one exception,
  "lenient: a tool call cut off by the end of output is left out of tool_calls" when our
      result has a region_truncated event and its message is the reference's with the last
      tool call removed (other keys but content equal); where the reference fails,
  "lenient: the reference fails, lenient mode returns a message" when our chunked and
      one-shot runs agree;
  "lenient: string arguments repaired by the tools' schemas" when the messages differ only
      in tool-call arguments the reference left as a string holding a literal (`[...]`,
      `{...}`, or a whole single-quoted string) that ours read;
  "UNEXPLAINED" otherwise (a crash or hang of ours always is).
Prints `N cases, D differences (E explained, U unexplained)` last; writes every
difference (case JSON, minimized when asked, with both engines' results) to --details.
Exit status 1 if any difference is unexplained.

--minimize shrinks each unexplained case (up to --max-minimize of them) while it keeps
an unexplained difference of the same kind: it re-runs the reference in this process
(run this with the oracle venv's python) and ours with --ours-cmd ("oracle" = the
reference itself).
Self-tests: --ours-is-reference (OURS_RESULTS come from the reference: the
streaming == one-shot check is skipped, must give 0 differences); --simulate-ideal
(OURS_RESULTS ignored; an ideal engine is simulated by giving the reference's one-shot
result for both runs: every difference must be explained as a chunking artefact).
"""
import argparse
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import engines  # noqa: E402

STREAM = "deliberate: streaming==one-shot (reference chunking artefact)"
SPLIT = "deliberate: delimiter committed at once (initial_events/events boundary moved)"
DIALECT = "deliberate: regex construct outside the DFA dialect"
NONJSON = "deliberate: the reference's value is not representable in JSON (NaN/Infinity, int beyond 64 bits)"
STRICT = "deliberate: template checked strictly at load (bool types, content_args)"
PREFIX = "deliberate: streaming==one-shot at the prefix/output boundary (reference artefact)"
LENIENT_RESCUE = "lenient: the reference fails, lenient mode returns a message"
LENIENT_TRUNC = "lenient: a tool call cut off by the end of output is left out of tool_calls"
LENIENT_REPAIR = "lenient: string arguments repaired by the tools' schemas"
UNEXPLAINED = "UNEXPLAINED"
SELF = "ours chunked vs ours one-shot"


# ----------------------------------------------------------------- comparing


def canon(v):
    """A hashable, type-strict form of a JSON value (Python's == says 1 == 1.0 == True)."""
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, int):
        return ("i", v)
    if isinstance(v, float):
        return ("f", repr(v))  # repr tells -0.0 from 0.0 and makes nan equal to itself
    if isinstance(v, str):
        return ("s", v)
    if v is None:
        return ("n",)
    if isinstance(v, list):
        return ("l",) + tuple(canon(x) for x in v)
    if isinstance(v, dict):
        return ("d",) + tuple(sorted(((k, canon(x)) for k, x in v.items()), key=lambda kv: kv[0]))
    return ("?", repr(v))


def view(r):
    """What is compared of one result."""
    if r is None:
        return ("missing",)
    if r.get("crash"):
        return ("crash",)
    if not r.get("ok"):
        return ("error",)
    return ("ok", canon(r.get("message")), canon(engines.merge_chunks(r.get("initial_events"))),
            canon(engines.merge_chunks(r.get("events"))))


def flat(r):
    """The view without the initial_events / events boundary: the reference holds a
    complete regex delimiter at the end of the prefix for one more chunk, we commit it
    when it cannot grow (DESIGN), so its events may move from events to initial_events."""
    v = view(r)
    if v[0] != "ok":
        return v
    return ("ok", v[1], canon(engines.merge_chunks(list(r.get("initial_events") or []) + list(r.get("events") or []))))


def unrepresentable(v):
    """Whether a JSON value holds something a JSON message cannot: NaN or an infinity
    (Python's json accepts them), or an integer outside i64/u64."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return False
    if isinstance(v, float):
        return math.isnan(v) or math.isinf(v)
    if isinstance(v, int):
        return not (-(2 ** 63) <= v < 2 ** 64)
    if isinstance(v, list):
        return any(unrepresentable(x) for x in v)
    if isinstance(v, dict):
        return any(unrepresentable(x) for x in v.values())
    return False


def result_unrepresentable(r):
    if not r or not r.get("ok"):
        return False
    return any(unrepresentable(x) for x in (r.get("message"), r.get("initial_events"), r.get("events")))


def kinds(a, b):
    """The parts in which two views differ."""
    if a == b:
        return []
    if a[0] != b[0]:
        return ["crash" if "crash" in (a[0], b[0]) else "missing" if "missing" in (a[0], b[0]) else "ok/error"]
    if a[0] != "ok":
        return []
    return [name for name, x, y in zip(("message", "initial_events", "events"), a[1:], b[1:]) if x != y]


class Analysis:
    def __init__(self, entries, cls, artefact):
        self.entries = entries  # [(where, [kinds])]
        self.cls = cls
        self.artefact = artefact  # the reference's chunked result differs from its one-shot result

    def signature(self):
        return frozenset(w for w, _ in self.entries)


def truncated_only(r, o):
    """Lenient mode: whether our result `o` differs from the reference's `r` only by a tool
    call cut off by the end of output (a region_truncated event; the reference kept the call
    as the last of tool_calls; the call's text went to our content)."""
    if not (r and o and r.get("ok") and o.get("ok")):
        return False
    if not any(e.get("type") == "region_truncated" for e in (o.get("events") or []) + (o.get("initial_events") or [])):
        return False
    rm, om = dict(r.get("message") or {}), dict(o.get("message") or {})
    rcalls, ocalls = rm.pop("tool_calls", None), om.pop("tool_calls", None)
    if isinstance(rcalls, list):
        if not rcalls or canon(rcalls[:-1]) != canon(ocalls or []):
            return False
    elif rcalls is None or ocalls is not None:  # a field that does not repeat: the call is its value
        return False
    rm.pop("content", None), om.pop("content", None)
    return canon(rm) == canon(om)


def repaired_only(r, o):
    """Lenient mode: whether the messages differ only where a string argument of the
    reference's (a list or dict literal, or a whole single-quoted string) is read by ours."""
    if not (r and o and r.get("ok") and o.get("ok")):
        return False

    def literal(s):
        s = s.strip()
        return s[:1] in ("[", "{", "(") or (len(s) >= 2 and s[0] == s[-1] == "'")

    found = []

    def same(a, b, in_args):
        if canon(a) == canon(b):
            return True
        if in_args and isinstance(a, str) and not isinstance(b, str) or isinstance(b, str) and b != a:
            if isinstance(a, str) and literal(a):
                found.append(a)
                return True
        if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
            return all(same(a[k], b[k], in_args or k == "arguments") for k in a)
        if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            return all(same(x, y, in_args) for x, y in zip(a, b))
        return False

    return same(r.get("message"), o.get("message"), False) and bool(found)


def lenient_class(base, twin, ref, ours, entries):
    """The lenient classes (see the module docs), or None."""
    if any(w == SELF for w, _ in entries):
        return None
    runs = [(ref.get(base["id"]), ours.get(base["id"]))]
    if twin is not None:
        one_shot = (ref.get(twin["id"]), ours.get(twin["id"]))
        if view(runs[0][0]) != view(one_shot[0]) and view(runs[0][1]) == view(one_shot[1]):
            # The reference's chunked run is its own artefact (STREAM): judge by one-shot.
            runs = []
        runs.append(one_shot)
    classes = set()
    for r, o in runs:
        rv, ov = view(r), view(o)
        if rv == ov or flat(r) == flat(o):
            continue
        if rv[0] == "error" and ov[0] == "ok":
            classes.add(LENIENT_RESCUE)
        elif truncated_only(r, o):
            classes.add(LENIENT_TRUNC)
        elif repaired_only(r, o):
            classes.add(LENIENT_REPAIR)
        else:
            return None
    for cls in (LENIENT_TRUNC, LENIENT_REPAIR, LENIENT_RESCUE):
        if cls in classes:
            return cls
    return None


def analyse(base, twin, ref, ours, ours_is_ref=False, lenient=False):
    """Compares one base case (and its one-shot twin); returns an Analysis (entries empty
    when there is no difference)."""
    rc, oc = view(ref.get(base["id"])), view(ours.get(base["id"]))
    entries = []
    if twin is None:
        k = kinds(rc, oc)
        if k:
            entries.append(("one-shot", k))
        artefact = False
        rt = ot = None
    else:
        rt, ot = view(ref.get(twin["id"])), view(ours.get(twin["id"]))
        for where, a, b in (("chunked", rc, oc), ("one-shot", rt, ot)):
            k = kinds(a, b)
            if k:
                entries.append((where, k))
        if not ours_is_ref:
            k = kinds(oc, ot)
            if k:
                entries.append((SELF, k))
        artefact = rc != rt
    if not entries:
        return Analysis([], None, artefact)
    crashed = any(v is not None and v[0] in ("crash", "missing") for v in (oc, ot))
    f = {k: flat(res.get(c["id"])) for k, res, c in
         (("rc", ref, base), ("oc", ours, base)) + ((("rt", ref, twin), ("ot", ours, twin)) if twin else ())}
    if crashed:
        cls = UNEXPLAINED
    elif f["rc"] == f["oc"] and (twin is None or f["rt"] == f["ot"] == f["oc"]):
        cls = SPLIT
    elif twin is not None and artefact and f["oc"] == f["rt"] and f["ot"] == f["rt"]:
        cls = STREAM
    elif ("unsupported_regex" in base.get("tags", ()) and oc[0] == "error" and (ot is None or ot[0] == "error")
          and "ok" in (rc[0], rt and rt[0])):
        cls = DIALECT
    elif any(result_unrepresentable(ref.get(c["id"])) for c in (base, twin) if c is not None):
        cls = NONJSON
    elif (set(base.get("tags", ())) & {"loose_typing", "lazy_validation"} and oc[0] == "error"
          and (ot is None or ot[0] == "error") and "ok" in (rc[0], rt and rt[0])):
        cls = STRICT
    elif lenient and lenient_class(base, twin, ref, ours, entries):
        cls = lenient_class(base, twin, ref, ours, entries)
    else:
        cls = UNEXPLAINED
    return Analysis(entries, cls, artefact)


def reclassify_prefix_boundary(found, ours, oracle):
    """Re-checks unexplained differences of cases with a prefix: the reference is run once
    more with the prefix's tail (after the last start anchor) moved to the front of the
    output, in one piece; if that equals our one-shot result (taking initial_events and
    events as one stream) and our chunked run equals our one-shot run, the difference is the
    reference's prefix/output chunk boundary (PREFIX)."""
    todo = [(b, t, an) for b, t, an in found if an.cls == UNEXPLAINED and b.get("prefix")]
    if not todo:
        return
    try:
        from transformers.utils.chat_parsing.response_templates import load_response_template
    except ImportError:
        return
    ref = engines.Engine("oracle", oracle)
    for b, t, an in todo:
        if any(w == SELF for w, _ in an.entries):
            continue
        try:
            tail = load_response_template(b["template"]).truncate_past_last_anchor(b["prefix"])
        except Exception:  # the reference cannot load the template: no boundary to blame
            continue
        text = b.get("text") if b.get("chunks") is None else "".join(b["chunks"])
        variant = dict(b, id=b["id"] + "~joined", prefix=b["prefix"][: len(b["prefix"]) - len(tail)],
                       text=tail + (text or ""), chunks=None)
        joined = ref.run([variant]).get(variant["id"])
        mine = ours.get((t or b)["id"])
        if joined is not None and mine is not None and flat(joined) == flat(mine):
            an.cls = PREFIX


def by_id(records, i):
    return next(r for r in records if r["id"] == i)


def twin_of(case):
    return dict(case, id=case["id"] + "~1shot", chunks=None, twin_of=case["id"])


# ---------------------------------------------------------------- minimizing


def with_text(case, text_chunks):
    c = dict(case)
    if case.get("chunks") is None:
        c["text"] = text_chunks
    else:
        chunks = [x for x in text_chunks if x] or [""]
        c["chunks"], c["text"] = chunks, "".join(chunks)
    return c


def delete_range(case, i, j):
    """The case with characters [i, j) of its output removed (chunk boundaries kept)."""
    if case.get("chunks") is None:
        return with_text(case, case["text"][:i] + case["text"][j:])
    out, pos = [], 0
    for ch in case["chunks"]:
        s, e = pos, pos + len(ch)
        pos = e
        keep = ch[: max(0, min(e, i) - s)] + ch[max(0, j - s):] if s < j and e > i else ch
        out.append(keep)
    return with_text(case, out)


class Minimizer:
    lenient = False

    def __init__(self, ours_spec, oracle, seconds, log):
        self.ref = engines.Engine("oracle", oracle)
        self.ours = self.ref if ours_spec == "oracle" else engines.Engine(ours_spec)
        self.seconds = seconds
        self.log = log
        self.n = 0

    def evaluate(self, case):
        self.n += 1
        base = dict(case, id=f"min{self.n}")
        cases = [base] + ([twin_of(base)] if base.get("chunks") is not None else [])
        ref = self.ref.run(cases)
        ours = self.ours.run(cases, case_timeout=10.0)
        return analyse(base, cases[1] if len(cases) > 1 else None, ref, ours, lenient=self.lenient), ref, ours

    def keeps(self, cand, sig):
        if time.time() > self.deadline:
            raise TimeoutError
        a, _, _ = self.evaluate(cand)
        return a.cls == UNEXPLAINED and a.signature() == sig

    def first(self, cands, sig):
        for c in cands:
            if self.keeps(c, sig):
                return c
        return None

    def fixpoint(self, cur, gen, sig):
        while True:
            nxt = self.first(gen(cur), sig)
            if nxt is None:
                return cur
            cur = nxt

    # candidate generators -------------------------------------------------

    @staticmethod
    def structural(c):
        if c.get("tools"):
            yield dict(c, tools=None)
            for i in range(len(c["tools"])):
                yield dict(c, tools=c["tools"][:i] + c["tools"][i + 1:])
        if c.get("prefix"):
            yield dict(c, prefix="")
        ch = c.get("chunks")
        if ch is not None and len(ch) > 1:
            yield dict(c, chunks=[c["text"]])
            yield dict(c, chunks=None)
            merged = ["".join(ch[i:i + 2]) for i in range(0, len(ch), 2)]
            yield dict(c, chunks=merged)
            for i in range(len(ch) - 1):
                if len(ch) > 40:
                    break
                yield dict(c, chunks=ch[:i] + [ch[i] + ch[i + 1]] + ch[i + 2:])

    @staticmethod
    def template(c):
        t = c["template"]
        fields = t.get("fields")
        def tw(**kw):
            return dict(c, template=dict(t, **kw))
        if isinstance(fields, dict):
            if len(fields) > 1:
                for name in fields:
                    yield tw(fields={k: v for k, v in fields.items() if k != name})
            for name, f in fields.items():
                if not isinstance(f, dict):
                    continue
                for key in ("transform", "transform_each", "content_args", "join", "repeats", "optional", "close",
                            "close_pattern", "content"):
                    if key in f:
                        g = {k: v for k, v in f.items() if k != key}
                        if key == "transform":
                            g.pop("transform_each", None)
                        yield tw(fields=dict(fields, **{name: g}))
                args = f.get("content_args")
                if isinstance(args, dict):
                    for key in args:
                        g = dict(f, content_args={k: v for k, v in args.items() if k != key})
                        yield tw(fields=dict(fields, **{name: g}))
        d = t.get("defaults")
        if isinstance(d, dict):
            yield dict(c, template={k: v for k, v in t.items() if k != "defaults"})
            for key in d:
                yield tw(defaults={k: v for k, v in d.items() if k != key})
        if "version" in t:
            yield dict(c, template={k: v for k, v in t.items() if k != "version"})

    def ddmin(self, cur, get_len, delete, sig):
        """Delta debugging over a string: remove ever smaller windows while the difference stays."""
        n = 2
        while get_len(cur) > 0:
            length = get_len(cur)
            size = max(1, math.ceil(length / n))
            found = None
            for i in range(0, length, size):
                cand = delete(cur, i, i + size)
                if self.keeps(cand, sig):
                    found = cand
                    break
            if found is not None:
                cur = found
                n = max(n - 1, 2)
            elif size == 1:
                break
            else:
                n = min(length, n * 2)
        return cur

    def minimize(self, case, sig):
        self.deadline = time.time() + self.seconds
        cur = case
        try:
            for _ in range(3):
                before = json.dumps(cur, sort_keys=True)
                cur = self.fixpoint(cur, self.structural, sig)
                cur = self.fixpoint(cur, self.template, sig)
                cur = self.ddmin(cur, lambda c: len(c["text"]), delete_range, sig)
                if cur.get("prefix"):
                    cur = self.ddmin(cur, lambda c: len(c["prefix"]),
                                     lambda c, i, j: dict(c, prefix=c["prefix"][:i] + c["prefix"][j:]), sig)
                if json.dumps(cur, sort_keys=True) == before:
                    break
        except TimeoutError:
            self.log(f"minimizing {case['id']}: time is up, keeping the smallest so far")
        return cur


# ------------------------------------------------------------------ reporting


def load_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def brief(v, n=300):
    s = json.dumps(v, ensure_ascii=False)
    return s if len(s) <= n else s[:n] + "..."


def show_case(c):
    return {k: c[k] for k in engines.SCHEMA_KEYS + ("tags",) if k in c}


def status(r):
    """"ok", or the error's type (the text before the first colon), or "crash"."""
    if r is None:
        return "missing"
    if r.get("crash"):
        return "crash"
    return "ok" if r.get("ok") else str(r.get("error", "")).split(":")[0].strip()


def group_key(b, t, an, ref, ours):
    """A rough kind of difference, so that a few examples of each kind come first."""
    one = t or b
    return (tuple((w, tuple(k)) for w, k in an.entries), status(ref.get(one["id"])), status(ours.get(one["id"])))


def order(found, ref, ours):
    """Unexplained first, taking one of each kind of difference in turn; then the rest."""
    groups = {}
    for item in found:
        if item[2].cls == UNEXPLAINED:
            groups.setdefault(group_key(*item, ref, ours), []).append(item)
    out, queues = [], list(groups.values())
    while queues:
        out += [q.pop(0) for q in queues]
        queues = [q for q in queues if q]
    return out + [item for item in found if item[2].cls != UNEXPLAINED]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cases")
    ap.add_argument("ref")
    ap.add_argument("ours", nargs="?")
    ap.add_argument("--details", default="differences.jsonl")
    ap.add_argument("--ours-is-reference", action="store_true")
    ap.add_argument("--simulate-ideal", action="store_true")
    ap.add_argument("--minimize", action="store_true")
    ap.add_argument("--ours-cmd")
    ap.add_argument("--oracle", default=str(engines.DEFAULT_ORACLE))
    ap.add_argument("--max-minimize", type=int, default=10, help="cases to shrink at most")
    ap.add_argument("--minimize-seconds", type=float, default=30.0, help="time to shrink one case")
    ap.add_argument("--lenient", action="store_true", help="OURS_RESULTS are lenient mode's")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    if not a.simulate_ideal and not a.ours:
        ap.error("OURS_RESULTS is required (unless --simulate-ideal)")
    if a.minimize and not a.ours_cmd:
        ap.error("--minimize needs --ours-cmd")

    cases = load_jsonl(a.cases)
    ref = {r["id"]: r for r in load_jsonl(a.ref)}
    bases = [c for c in cases if "twin_of" not in c]
    twins = {c["twin_of"]: c for c in cases if "twin_of" in c}
    if a.simulate_ideal:
        ours = {}
        for b in bases:
            t = twins.get(b["id"])
            ours[b["id"]] = ref.get(t["id"] if t else b["id"])
            if t:
                ours[t["id"]] = ref.get(t["id"])
    else:
        ours = {r["id"]: r for r in load_jsonl(a.ours)}

    found = []
    chunked = artefacts = 0
    for b in bases:
        t = twins.get(b["id"])
        an = analyse(b, t, ref, ours, a.ours_is_reference, a.lenient)
        chunked += t is not None
        artefacts += an.artefact
        if an.entries:
            found.append((b, t, an))

    reclassify_prefix_boundary(found, ours, a.oracle)

    minimizer = None
    if a.minimize:
        minimizer = Minimizer(a.ours_cmd, a.oracle, a.minimize_seconds, engines.log_stderr)
        minimizer.lenient = a.lenient
    shrunk = 0
    records = []
    for b, t, an in order(found, ref, ours):
        rec = {"id": b["id"], "class": an.cls, "diffs": [{"where": w, "kinds": k} for w, k in an.entries],
               "tags": b.get("tags", []), "case": show_case(b),
               "ref": {"chunked" if t else "one_shot": ref.get(b["id"])},
               "ours": {"chunked" if t else "one_shot": ours.get(b["id"])}}
        if t:
            rec["ref"]["one_shot"] = ref.get(t["id"])
            rec["ours"]["one_shot"] = ours.get(t["id"])
        if minimizer and an.cls == UNEXPLAINED and shrunk < a.max_minimize:
            shrunk += 1
            small = minimizer.minimize(show_case(b), an.signature())
            if small != show_case(b):
                man, mref, mours = minimizer.evaluate(small)
                if man.cls == UNEXPLAINED:
                    n = minimizer.n
                    rec["original_case"] = rec["case"]
                    rec["case"] = engines.strip(small)
                    rec["diffs"] = [{"where": w, "kinds": k} for w, k in man.entries]
                    rec["ref"] = {("chunked" if small.get("chunks") is not None else "one_shot"): mref.get(f"min{n}")}
                    rec["ours"] = {("chunked" if small.get("chunks") is not None else "one_shot"): mours.get(f"min{n}")}
                    if small.get("chunks") is not None:
                        rec["ref"]["one_shot"] = mref.get(f"min{n}~1shot")
                        rec["ours"]["one_shot"] = mours.get(f"min{n}~1shot")
        records.append(rec)

    with open(a.details, "w", encoding="utf-8") as f:
        for rec in records:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")

    unexplained = [r for r in records if r["class"] == UNEXPLAINED]
    by_class = {}
    for r in records:
        by_class[r["class"]] = by_class.get(r["class"], 0) + 1
    for r in unexplained[: (len(unexplained) if a.verbose else 10)]:
        print(f"UNEXPLAINED {r['id']} [{', '.join(r['tags'])}]: "
              + "; ".join(f"{d['where']}: {'/'.join(d['kinds'])}" for d in r["diffs"]))
        print(f"  case: {brief(r['case'], 600)}")
        for side in ("ref", "ours"):
            for run, res in r[side].items():
                if res is None:
                    continue
                shown = res.get("message") if res.get("ok") else (res.get("crash") or res.get("error"))
                print(f"  {side:4} {run:9} {'ok' if res.get('ok') else 'ERR'} {brief(shown, 300)}")
    if len(unexplained) > 10 and not a.verbose:
        print(f"... {len(unexplained) - 10} more unexplained in {a.details}")
    for cls, n in sorted(by_class.items()):
        print(f"  {n:5}  {cls}")
    print(f"reference chunked != one-shot in {artefacts} of {chunked} chunked cases")
    if a.lenient:
        diff_ids = {r["id"] for r in records}
        def one_shot(b):
            t = twins.get(b["id"])
            return (t or b)["id"]
        ref_ok = [b for b in bases if (ref.get(one_shot(b)) or {}).get("ok")]
        ref_err = [b for b in bases if not (ref.get(one_shot(b)) or {}).get("ok")]
        same = sum(1 for b in ref_ok if b["id"] not in diff_ids or
                   by_id(records, b["id"])["class"] not in (UNEXPLAINED, LENIENT_TRUNC, LENIENT_REPAIR))
        rescued = sum(1 for b in ref_err if (ours.get(one_shot(b)) or {}).get("ok"))
        print(f"lenient: reference ok in {len(ref_ok)} cases: identical in {same}, "
              f"{by_class.get(LENIENT_TRUNC, 0)} truncated tool calls left out, "
              f"{by_class.get(LENIENT_REPAIR, 0)} with arguments repaired; "
              f"reference fails in {len(ref_err)}: lenient returns a message in {rescued}")
    explained = len(records) - len(unexplained)
    print(f"{len(bases)} cases, {len(records)} differences ({explained} explained, {len(unexplained)} unexplained)")
    if a.simulate_ideal and by_class.get(STREAM, 0) != artefacts:
        print(f"self-test failed: {artefacts} reference artefacts, {by_class.get(STREAM, 0)} explained as such")
        sys.exit(1)
    sys.exit(1 if unexplained else 0)


if __name__ == "__main__":
    main()
