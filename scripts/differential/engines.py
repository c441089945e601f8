"""Running engines on cases: the reference (shared/oracle/oracle.py, in a subprocess or
in this process) and any command that speaks the same JSON Lines protocol
(`rtpl run-cases --merge-chunks`). Used by run.py and compare.py."""
import importlib.util
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The keys of the case schema (shared/README.md); our own keys (tags, twin_of) are
# stripped before a case reaches an engine.
SCHEMA_KEYS = ("id", "origin", "template", "prefix", "text", "chunks", "tools")

REPO = Path(__file__).resolve().parents[2]
DEFAULT_ORACLE = REPO.parent / "shared" / "oracle" / "oracle.py"


def strip(case):
    return {k: case[k] for k in SCHEMA_KEYS if k in case}


def merge_chunks(events):
    """Adjacent region_chunk events of one field merged (as check.py and oracle.py do)."""
    out = []
    for e in events or []:
        if (isinstance(e, dict) and e.get("type") == "region_chunk" and out and out[-1].get("type") == "region_chunk"
                and out[-1].get("field") == e.get("field")):
            out[-1] = dict(out[-1], text=out[-1].get("text", "") + e.get("text", ""))
        else:
            out.append(dict(e) if isinstance(e, dict) else e)
    return out


def oracle_command(oracle=DEFAULT_ORACLE, python=None):
    return [python or sys.executable, str(oracle), "--merge-chunks"]


def parse_command(cmd):
    """A command given as a string (split like a shell would) or a list."""
    return shlex.split(cmd) if isinstance(cmd, str) else list(cmd)


def _run_batch(cmd, cases, timeout):
    """Runs cmd once on all cases; returns ({id: result}, problem or None)."""
    payload = "".join(json.dumps(strip(c), ensure_ascii=False) + "\n" for c in cases)
    with tempfile.TemporaryFile("w+b") as out, tempfile.TemporaryFile("w+b") as err:
        try:
            p = subprocess.run(cmd, input=payload.encode(), stdout=out, stderr=err, timeout=timeout)
            problem = None if p.returncode == 0 else f"exit status {p.returncode}"
        except subprocess.TimeoutExpired:
            problem = f"timed out after {timeout:.0f}s"
        out.seek(0)
        err.seek(0)
        text = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    results = {}
    for line in text.split("\n"):  # not splitlines(): it also splits at U+2028, U+0085, \x1c...
        line = line.strip()
        if not line:
            continue
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(r, dict) and "id" in r:
            results[r["id"]] = r
    if problem:
        problem += ": " + stderr.strip()[-400:]
    return results, problem


def run_command(cmd, cases, jobs=1, case_timeout=20.0, log=None):
    """Runs `cmd` (JSON Lines in, JSON Lines out) on `cases`; returns {id: result}.

    Cases are split into `jobs` shards run side by side. When a run dies, hangs or
    leaves cases without a result, those cases are run again one by one, and a case
    that still has none gets {"ok": false, "crash": "..."}: a crash or a hang is
    always reported, whatever the reference did."""
    cmd = parse_command(cmd)
    cases = list(cases)
    if not cases:
        return {}
    jobs = max(1, min(jobs, len(cases)))
    shards = [cases[i::jobs] for i in range(jobs)]
    results = {}
    def budget(n):  # seconds for a batch of n cases (a whole batch hanging must not stall the run)
        return 60 + 0.5 * n

    if jobs == 1:
        got, problem = _run_batch(cmd, cases, budget(len(cases)))
        results.update(got)
        if problem and log:
            log(f"{cmd[0]}: {problem}")
    else:
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(jobs) as ex:
            for got, problem in ex.map(lambda s: _run_batch(cmd, s, budget(len(s))), shards):
                results.update(got)
                if problem and log:
                    log(f"{cmd[0]}: {problem}")
    missing = [c for c in cases if c["id"] not in results]
    if missing and log:
        log(f"{cmd[0]}: {len(missing)} case(s) without a result; running them one by one")
    for c in missing:
        got, problem = _run_batch(cmd, [c], case_timeout)
        results[c["id"]] = got.get(c["id"]) or {"id": c["id"], "ok": False,
                                                "crash": problem or "no result line", "error": "no result"}
    return results


class InProcessOracle:
    """The reference run in this process (needs the oracle venv's python): fast enough
    to re-run many shrunk variants of one case while minimizing."""

    def __init__(self, oracle=DEFAULT_ORACLE):
        spec = importlib.util.spec_from_file_location("_rt_oracle", str(oracle))
        self.mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(self.mod)
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

    def run(self, cases):
        return {c["id"]: self.mod.run_case(strip(c), True) for c in cases}


class Engine:
    """Either a command (a string or list) or "oracle" (the reference in this process)."""

    def __init__(self, spec, oracle=DEFAULT_ORACLE):
        self.spec = spec
        self.inproc = InProcessOracle(oracle) if spec == "oracle" else None

    def run(self, cases, case_timeout=20.0):
        if self.inproc:
            return self.inproc.run(cases)
        return run_command(self.spec, cases, 1, case_timeout)


def log_stderr(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)
