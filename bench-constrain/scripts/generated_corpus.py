#!/usr/bin/env python3
"""Writes three corpora of real-world schemas with generated instances for the corpus runner
(`--bin corpus`): `kubernetes`, `snowplow` and `functions`.

The schemas are real; their instances are made here. Per schema:

- up to 6 valid instances, drawn by hypothesis-jsonschema (Hypothesis seeded from the file
  name, no example database, no constants taken from local source files, generate phase
  only, 30 examples at most), in a forked worker ended after 5 s of CPU time (the schema is
  then skipped as `timeout`), with strategies for the formats `uuid` and `duration` it
  lacks (the engines assert them), each object's keys put in the order its schema declares
  them (both engines of the runner emit declared properties in that order only;
  `--keep-key-order` keeps hypothesis's order);
- up to 4 invalid instances, made from the valid ones by simple mutations: drop a required
  property, add one where `additionalProperties` is false, leave an `enum`/`const`, break a
  `maxLength`/`minLength`/`maximum`/`minimum`/`maxItems`/`minItems`, give a value a type
  its schema does not allow (one of each kind before a second of any);
- every instance is written only if the `jsonschema` package, reading it back from its
  compact JSON (no NaN or infinity), gives the verdict it is labelled with, with
  `validator_for(schema, default=DEFAULT)` and format assertions off (its default).

A schema with no confirmed valid instance is skipped, and so is one that `check_schema`
rejects, one with `$ref`s into other documents, or one hypothesis-jsonschema refuses
(recursive `$ref`s, unsupported keywords, unsatisfiable); the summary counts each reason.
Each corpus holds at most 400 schemas: past that, 400 taken with a fixed stride from the
list sorted by file name. Files are in the JSONSchemaBench/MaskBench shape:

    {"schema": ..., "tests": [{"description", "data", "valid"}, ...],
     "draft": "2020-12", "source": ..., "description": ...}

where `draft` names the draft of the validator class that checked the instances.

- kubernetes: the PyPI wheel kubernetes-validate 1.37.0, directory
  `kubernetes-json-schema/v1.37.0-local-strict` (`additionalProperties: false` everywhere),
  every type file but `all.json` (862, sampled to 400). Its `$ref`s point into the shared
  `_definitions.json`; each schema gets the definitions it reaches copied into its own
  `$defs`, its refs rewritten to `#/$defs/NAME`. Draft 2020-12 (their `$schema`).
- snowplow: Iglu Central (github.com/snowplow/iglu-central) `schemas/VENDOR/NAME/jsonschema/
  VERSION`, the highest version of each VENDOR/NAME (519, sampled to 400). Their `$schema`
  is Iglu's self-describing meta-schema, an extension of draft 4, which both engines refuse
  (neither knows the URI): it is dropped, and DEFAULT is draft 4 here. `self` is kept.
- functions: the function docs of the Berkeley Function Calling Leaderboard (PyPI wheel
  bfcl-eval 2026.3.23, `bfcl_eval/data`), each distinct (name, parameters) once (3360,
  sampled to 400). Their Gorilla types (`dict`, `float`, `tuple`, `any`, ...) become JSON
  Schema types with the wheel's own `GORILLA_TO_OPENAPI` table, as BFCL does for
  tool-calling models (an unknown or missing type becomes `string`; the root becomes
  `object`). DEFAULT is draft 7.

    python3 -m venv VENV
    VENV/bin/pip install hypothesis==6.170.0 hypothesis-jsonschema==0.23.1 jsonschema
    VENV/bin/python bench-constrain/scripts/generated_corpus.py \\
        [--only kubernetes,snowplow,functions] [--iglu PATH] \\
        [--kubernetes-wheel WHL] [--bfcl-wheel WHL] [--out DIR] [--keep-key-order] [-v]

The wheels are fetched with `pip download --no-deps` into a temporary directory unless
given. PATH is an iglu-central checkout or its git directory (read with `git ls-tree` /
`git cat-file`); without it snowplow is skipped. The output goes to DIR/NAME, DIR defaulting
to bench-constrain/target/corpora (each NAME emptied first). `-v` lists the skipped schemas.
A rerun writes the same files, save for a schema whose generation ends near the 5 s cap
(CPU time varies a little from run to run).
Pin hypothesis: 0.23.1 uses its internal `many.more()`, which 6.170.17 no longer has (every
object schema then fails with AttributeError); 6.170.0 works (the script also replaces its
internal `_get_local_constants`). Written with jsonschema 4.26.0.
"""

import argparse
import ast
import copy
import hashlib
import json
import multiprocessing
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import Counter
from pathlib import Path
from urllib.parse import unquote

import jsonschema
from hypothesis.configuration import set_hypothesis_home_dir

# Hypothesis's caches (written from the import of hypothesis_jsonschema on) go to a temporary
# folder, not to ./.hypothesis.
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "generated_corpus-hypothesis")

from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.internal.conjecture import providers  # noqa: E402
from hypothesis_jsonschema import from_schema  # noqa: E402

from corpus_common import fresh_dir, remote_refs, write_entry

HERE = Path(__file__).resolve().parent
CORPORA = ["kubernetes", "snowplow", "functions"]
LIMIT = 400
VALID, INVALID = 6, 4
MAX_EXAMPLES = 30
CAP = 5  # seconds of CPU time for one schema's generation
KUBE_SPEC = "kubernetes-validate==1.37.0"
KUBE_DIR = "kubernetes_validate/kubernetes-json-schema/v1.37.0-local-strict/"
BFCL_SPEC = "bfcl-eval==2026.3.23"
V = jsonschema.validators
# String formats the engines assert that hypothesis-jsonschema 0.23.1 does not know (it
# draws any string for them, which jsonschema, formats off, accepts and the engines refuse).
CUSTOM_FORMATS = {
    "uuid": st.uuids().map(str),
    "duration": st.from_regex(r"P(?:[1-9][0-9]?[YMWD]|T[1-9][0-9]?[HMS])", fullmatch=True),
}
DRAFT_NAMES = {
    V.Draft4Validator: "draft-04",
    V.Draft6Validator: "draft-06",
    V.Draft7Validator: "draft-07",
    V.Draft201909Validator: "2019-09",
    V.Draft202012Validator: "2020-12",
}


# ---------------------------------------------------------------------------- sources
# Each returns [(file name, schema, source, description)], sorted by file name.


def pip_download(spec, tmp):
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-q", spec, "-d", tmp],
        check=True,
    )
    return next(Path(tmp).glob("*.whl"))


def kubernetes_schemas(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = sorted(n for n in z.namelist() if n.startswith(KUBE_DIR) and n.endswith(".json"))
        defs = json.loads(z.read(KUBE_DIR + "_definitions.json"))["$defs"]
        out = []
        for n in names:
            base = n[len(KUBE_DIR) :]
            if base in ("_definitions.json", "all.json"):
                continue
            schema = bundle_kubernetes(json.loads(z.read(n)), defs)
            desc = schema.get("description", "")
            out.append((base, schema, f"{KUBE_SPEC} {KUBE_DIR.split('/')[1]}/{base}", desc))
    return out


def bundle_kubernetes(schema, defs):
    """`schema` with the `_definitions.json` entries it reaches in its own `$defs`."""
    needed, queue = set(), []

    def rewrite(node):
        if isinstance(node, list):
            return [rewrite(v) for v in node]
        if not isinstance(node, dict):
            return node
        out = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and "#/$defs/" in value:
                name = value.split("#/$defs/", 1)[1]
                if name not in needed:
                    needed.add(name)
                    queue.append(name)
                value = "#/$defs/" + name
            out[key] = rewrite(value)
        return out

    root = rewrite(schema)
    bundled = {}
    while queue:
        name = queue.pop()
        bundled[name] = rewrite(defs[name])
    root["$defs"] = {name: bundled[name] for name in sorted(bundled)}
    return root


def git_files(repo, prefix):
    """`{path: bytes}` for the files under `prefix` of a work tree or a git directory."""
    if (repo / prefix).is_dir():
        return {
            p.relative_to(repo).as_posix(): p.read_bytes()
            for p in sorted((repo / prefix).rglob("*"))
            if p.is_file()
        }
    git = ["git", "--git-dir", str(repo)]
    listing = subprocess.run(
        git + ["ls-tree", "-r", "-z", "HEAD", prefix], check=True, capture_output=True
    ).stdout
    files = {}
    for record in listing.split(b"\0"):
        if record:
            meta, path = record.split(b"\t", 1)
            sha = meta.split()[2].decode()
            files[path.decode()] = subprocess.run(
                git + ["cat-file", "blob", sha], check=True, capture_output=True
            ).stdout
    return files


def snowplow_schemas(repo):
    latest = {}
    for path, raw in git_files(repo, "schemas").items():
        parts = path.split("/")
        if len(parts) != 5 or parts[3] != "jsonschema":
            continue
        version = tuple(int(x) for x in parts[4].split("-"))
        key = (parts[1], parts[2])
        if key not in latest or version > latest[key][0]:
            latest[key] = (version, path, raw)
    out = []
    for (vendor, name), (_, path, raw) in latest.items():
        schema = json.loads(raw.decode("utf-8-sig"))
        schema.pop("$schema", None)  # Iglu's meta-schema: both engines refuse it
        version = path.rsplit("/", 1)[1]
        out.append((f"{vendor}--{name}--{version}.json", schema, f"iglu-central {path}",
                    schema.get("description", "")))
    return sorted(out, key=lambda e: e[0])


def bfcl_schemas(wheel):
    with zipfile.ZipFile(wheel) as z:
        tree = ast.parse(z.read("bfcl_eval/constants/type_mappings.py"))
        mapping = next(
            ast.literal_eval(node.value)
            for node in tree.body
            if isinstance(node, ast.Assign) and node.targets[0].id == "GORILLA_TO_OPENAPI"
        )
        names = sorted(
            n for n in z.namelist()
            if re.fullmatch(r"bfcl_eval/data/(BFCL_v4_\w+|multi_turn_func_doc/\w+)\.json", n)
        )
        seen = {}
        for n in names:
            text = z.read(n).decode("utf-8")
            try:  # one JSON document (format_sensitivity.json: ids only), else JSON lines
                entries = [json.loads(text)]
            except ValueError:
                entries = [json.loads(line) for line in text.splitlines() if line.strip()]
            for entry in entries:
                functions = entry.get("function", [entry] if "parameters" in entry else [])
                for f in functions:
                    schema = gorilla_to_json_schema(f["parameters"], mapping)
                    key = json.dumps(schema, sort_keys=True)
                    digest = hashlib.sha256(key.encode()).hexdigest()[:8]
                    file = re.sub(r"[^A-Za-z0-9_.-]", "_", f["name"]) + f"--{digest}.json"
                    if file not in seen:
                        seen[file] = (file, schema, f"{BFCL_SPEC} {n[len('bfcl_eval/'):]}",
                                      f"{f['name']}: {f.get('description', '')}")
    return [seen[k] for k in sorted(seen)]


def gorilla_to_json_schema(params, mapping):
    """BFCL's parameters with Gorilla types mapped (`_cast_to_openai_type`, applied at
    every depth rather than BFCL's three)."""

    def cast(node, is_property):
        node = dict(node)
        if "type" in node or is_property:
            node["type"] = mapping.get(node.get("type"), "string")
        if isinstance(node.get("properties"), dict):
            node["properties"] = {k: cast(v, True) for k, v in node["properties"].items()}
        if isinstance(node.get("items"), dict):
            node["items"] = cast(node["items"], False)
        return node

    schema = cast(params, False)
    schema["type"] = "object"
    return schema


# ------------------------------------------------------------------------- generation


def _generate(schema, seed_, conn):
    """Worker: the values hypothesis-jsonschema draws for `schema` from the seed `seed_`, or
    why it cannot. The kernel ends it with SIGXCPU past CAP seconds of CPU time."""
    resource.setrlimit(resource.RLIMIT_CPU, (CAP, CAP + 1))
    # Hypothesis mixes into its draws the literals of the "local" modules loaded (this
    # script's among them): the instances would change with any edit here, and hold
    # strings such as "not-allowed". An empty pool keeps the draws to the seed alone.
    providers._get_local_constants = lambda: providers.Constants()
    found = []

    @settings(
        max_examples=MAX_EXAMPLES,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
    )
    @seed(seed_)
    @given(from_schema(schema, custom_formats=CUSTOM_FORMATS))
    def collect(value):
        found.append(value)

    try:
        collect()
        conn.send(("ok", (found, time.process_time())))
    except Exception as e:  # noqa: BLE001 - every failure is a reason to skip
        conn.send(("error", type(e).__name__))


def generate(schema, seed_):
    """`("ok", values)` or `(reason, None)`. The cap is on CPU time, not wall time, so that
    another load on the machine changes fewer verdicts; wall time is capped at 4 CAP."""
    ctx = multiprocessing.get_context("fork")
    receiver, sender = ctx.Pipe(duplex=False)
    worker = ctx.Process(target=_generate, args=(schema, seed_, sender))
    worker.start()
    sender.close()
    try:
        if not receiver.poll(4 * CAP):
            return "timeout (wall)", None
        status, payload = receiver.recv()
        return (status, payload) if status == "ok" else (payload, None)
    except EOFError:
        worker.join()
        return ("timeout" if worker.exitcode == -signal.SIGXCPU else "worker crashed"), None
    finally:
        if worker.is_alive():
            worker.kill()
        worker.join()
        receiver.close()


def declared_order(root, node, value, depth=0):
    """`value` with each object's keys in the order its schema declares them: `properties`,
    then those of `allOf`/`anyOf`/`oneOf` branches, then undeclared keys as drawn. Both
    engines of the runner emit declared properties in this order only; hypothesis draws
    them in any order, which would make most valid instances wrong verdicts."""
    s = resolve(root, node)
    if depth > 50:
        return value
    if isinstance(value, list):
        # Positional schemas: `prefixItems` (2020-12) or a list `items` (drafts 4 to 2019-09).
        items = s.get("items")
        prefix = s.get("prefixItems", items if isinstance(items, list) else [])
        rest = s.get("additionalItems") if isinstance(items, list) else items
        prefix = prefix if isinstance(prefix, list) else []
        rest = rest if isinstance(rest, dict) else {}
        return [declared_order(root, prefix[i] if i < len(prefix) else rest, v, depth + 1)
                for i, v in enumerate(value)]
    if not isinstance(value, dict):
        return value
    subs = {}
    for branch in [s] + [resolve(root, b) for key in ("allOf", "anyOf", "oneOf")
                         for b in (s.get(key) if isinstance(s.get(key), list) else [])]:
        if isinstance(branch.get("properties"), dict):
            for k, sub in branch["properties"].items():
                subs.setdefault(k, sub)
    extra = s.get("additionalProperties") if isinstance(s.get("additionalProperties"),
                                                        dict) else {}
    keys = [k for k in subs if k in value] + [k for k in value if k not in subs]
    return {k: declared_order(root, subs.get(k, extra), value[k], depth + 1) for k in keys}


def compact(value):
    """`(text, value read back)` of the compact JSON of `value`, or None (NaN, infinity)."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (ValueError, TypeError):
        return None
    return text, json.loads(text)


def spread(items, n):
    """`n` of `items` spread evenly over them, first and last included."""
    if len(items) <= n:
        return items
    return [items[round(i * (len(items) - 1) / (n - 1))] for i in range(n)]


# -------------------------------------------------------------------------- mutations

KINDS = ["drop-required", "extra-property", "enum", "const", "max-length", "min-length",
         "maximum", "minimum", "max-items", "min-items", "type", "root-type"]
JSON_TYPES = [("string", "mutated"), ("integer", 12345), ("boolean", True), ("null", None),
              ("array", []), ("object", {})]


def json_type(value):
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return {float: "number", str: "string", list: "array", dict: "object"}.get(type(value), "null")


def resolve(root, node):
    """`node` with local `$ref`s followed (siblings kept), as a dict."""
    for _ in range(20):
        if not (isinstance(node, dict) and isinstance(node.get("$ref"), str)
                and node["$ref"].startswith("#")):
            break
        target = root
        for token in filter(None, node["$ref"][1:].split("/")):
            token = unquote(token).replace("~1", "/").replace("~0", "~")
            try:
                target = target[int(token) if isinstance(target, list) else token]
            except (KeyError, IndexError, ValueError, TypeError):
                return {}
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}} if isinstance(
            target, dict) else target
    return node if isinstance(node, dict) else {}


def local_mutations(s, value, is_root):
    """`(kind, new value)` for `value` under the (resolved) subschema `s`."""
    if isinstance(value, dict):
        for name in s.get("required", []) if isinstance(s.get("required"), list) else []:
            if name in value:
                yield "drop-required", {k: v for k, v in value.items() if k != name}
        if s.get("additionalProperties") is False:
            name = next(f"extra{i or ''}" for i in range(99)
                        if f"extra{i or ''}" not in value and f"extra{i or ''}" not in s.get(
                            "properties", {}))
            yield "extra-property", {**value, name: 1}
    if isinstance(s.get("enum"), list):
        yield "enum", off_value(value, s["enum"])
    if "const" in s:
        yield "const", off_value(value, [s["const"]])
    if isinstance(value, str):
        if isinstance(s.get("maxLength"), int) and s["maxLength"] <= 200:
            yield "max-length", "x" * (s["maxLength"] + 1)
        if isinstance(s.get("minLength"), int) and s["minLength"] > 0:
            yield "min-length", ""
    if json_type(value) in ("integer", "number"):
        for key, kind, step in [("maximum", "maximum", 1), ("exclusiveMaximum", "maximum", 0),
                                ("minimum", "minimum", -1), ("exclusiveMinimum", "minimum", 0)]:
            bound = s.get(key)
            if json_type(bound) in ("integer", "number"):
                yield kind, bound + step
    if isinstance(value, list):
        top = s.get("maxItems")
        if isinstance(top, int) and top <= 50:
            filler = value[-1] if value else None
            yield "max-items", value + [filler] * (top + 1 - len(value))
        if isinstance(s.get("minItems"), int) and s["minItems"] > 0:
            yield "min-items", []
    types = s.get("type")
    if types is not None or is_root:
        allowed = set(types if isinstance(types, list) else [types])
        if "number" in allowed:
            allowed.add("integer")
        for name, other in JSON_TYPES:
            if name not in allowed and name != json_type(value):
                yield ("root-type" if is_root else "type"), copy.deepcopy(other)
                break


def off_value(value, allowed):
    """A value not in `allowed`, of `value`'s type where that is easy."""
    if json_type(value) == "integer":
        numbers = [a for a in allowed if json_type(a) in ("integer", "number")]
        return int(max(numbers, default=value)) + 1
    return next(c for c in ["not-allowed", "not-allowed-2", 987654321] if c not in allowed)


def mutations(root, node, value, path=(), depth=0):
    """`(kind, path, new value)` over `value` and its properties/items, 3 levels deep."""
    s = resolve(root, node)
    for kind, new in local_mutations(s, value, not path):
        yield kind, path, new
    if depth >= 3:
        return
    if isinstance(value, dict) and isinstance(s.get("properties"), dict):
        for key in value:
            if key in s["properties"]:
                yield from mutations(root, s["properties"][key], value[key], path + (key,),
                                     depth + 1)
    if isinstance(value, list) and value and isinstance(s.get("items"), dict):
        yield from mutations(root, s["items"], value[0], path + (0,), depth + 1)


def put(instance, path, new):
    if not path:
        return new
    out = copy.deepcopy(instance)
    target = out
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    return out


def invalid_instances(schema, validator, valids):
    """Up to INVALID mutations of `valids` that `validator` rejects, one per kind first."""
    seen = {text for text, _ in valids}
    by_kind = {}
    tried = 0
    for _, value in valids:
        for kind, path, new in mutations(schema, schema, value):
            tried += 1
            if tried > 300:
                break
            got = compact(put(value, path, new))
            if got is None or got[0] in seen:
                continue
            seen.add(got[0])
            if not validator.is_valid(got[1]):
                where = "/" + "/".join(str(p) for p in path)
                by_kind.setdefault(kind, []).append((f"{kind} at {where}", got[1]))
    picked = []
    for round_ in range(INVALID):
        for kind in KINDS:
            if len(picked) < INVALID and len(by_kind.get(kind, [])) > round_:
                picked.append(by_kind[kind][round_])
    return picked


# ------------------------------------------------------------------------------ main


def build(corpus, entries, default, out, verbose, keep_order):
    fresh_dir(out)
    total = len(entries)
    if len(entries) > LIMIT:
        entries = [entries[i * len(entries) // LIMIT] for i in range(LIMIT)]
    skipped, drafts = Counter(), Counter()
    written = n_valid = n_invalid = 0
    start = time.monotonic()
    for file, schema, source, description in entries:
        cls = V.validator_for(schema, default=default)
        reason = None
        try:
            cls.check_schema(schema)
        except jsonschema.SchemaError:
            reason = "check_schema fails"
        if reason is None and remote_refs(schema):
            reason = "remote $ref"
        if reason is None:
            # hypothesis-jsonschema checks `$schema` itself: name the draft we validate with.
            # One seed per schema, from its file name: with one seed for all (derandomize),
            # every schema's draws share a shape, and one odd value fails many schemas.
            seed_ = int(hashlib.sha256(file.encode()).hexdigest()[:16], 16)
            reason, values = generate({**schema, "$schema": cls.META_SCHEMA["$schema"]}, seed_)
            if reason == "ok":
                values, cpu = values
                if verbose and cpu > 0.6 * CAP:
                    print(f"  near the cap: {corpus}/{file} ({cpu:.1f} s of CPU)")
                validator = cls(schema)
                valids, seen = [], set()
                for value in values:
                    if not keep_order:
                        value = declared_order(schema, schema, value)
                    got = compact(value)
                    if got and got[0] not in seen and validator.is_valid(got[1]):
                        seen.add(got[0])
                        valids.append(got)
                valids = spread(valids, VALID)
                reason = None if valids else "no valid instance confirmed"
        if reason is not None:
            skipped[reason] += 1
            if verbose:
                print(f"  skipped {corpus}/{file}: {reason}")
            continue
        invalids = invalid_instances(schema, validator, valids)
        tests = [{"description": f"generated {i}", "data": v, "valid": True}
                 for i, (_, v) in enumerate(valids)]
        tests += [{"description": d, "data": v, "valid": False} for d, v in invalids]
        draft = DRAFT_NAMES.get(cls, "unspecified")
        write_entry(out / file, schema, tests, draft=draft, source=source,
                    description=description if isinstance(description, str) else "")
        written += 1
        drafts[draft] += 1
        n_valid += len(valids)
        n_invalid += len(invalids)
    print(
        f"{corpus}: wrote {written}/{len(entries)} schemas (of {total}) to {out} in "
        f"{time.monotonic() - start:.0f} s; drafts {dict(drafts)}; instances "
        f"{n_valid + n_invalid} ({n_valid} valid, {n_invalid} invalid); "
        f"skipped {dict(skipped)}"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=",".join(CORPORA))
    parser.add_argument("--iglu", type=Path)
    parser.add_argument("--kubernetes-wheel", type=Path)
    parser.add_argument("--bfcl-wheel", type=Path)
    parser.add_argument("--out", type=Path, default=HERE.parent / "target" / "corpora")
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("--keep-key-order", action="store_true",
                        help="keep hypothesis's key order (see declared_order)")
    args = parser.parse_args()
    only = args.only.split(",")

    with tempfile.TemporaryDirectory() as tmp:
        if "kubernetes" in only:
            wheel = args.kubernetes_wheel or pip_download(KUBE_SPEC, f"{tmp}/k")
            build("kubernetes", kubernetes_schemas(wheel), V.Draft7Validator,
                  args.out / "kubernetes", args.verbose, args.keep_key_order)
        if "snowplow" in only:
            if args.iglu is None:
                print("snowplow: skipped (no --iglu)")
            else:
                build("snowplow", snowplow_schemas(args.iglu), V.Draft4Validator,
                      args.out / "snowplow", args.verbose, args.keep_key_order)
        if "functions" in only:
            wheel = args.bfcl_wheel or pip_download(BFCL_SPEC, f"{tmp}/b")
            build("functions", bfcl_schemas(wheel), V.Draft7Validator,
                  args.out / "functions", args.verbose, args.keep_key_order)


if __name__ == "__main__":
    main()
