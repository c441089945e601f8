#!/usr/bin/env python3
"""Checks the design card's form of `response_template!` from a crate outside the workspace.

1. Builds this crate (its own workspace, path dependency on parser-runtime) and runs it on
   every SmolLM3 fixture output in templates/fixtures/smollm3/ with an empty prefix, as the
   card does; each printed message must equal the reference's message for the same template,
   text and prefix (shared/oracle/oracle.py, run once on all of them).
2. Copies the crate to a temporary directory with a broken template in place of
   smollm3.json; its build must fail naming the file, the line:column and the JSON path.

Environment: ORACLE_PYTHON (default <repo>/target/oracle-venv/bin/python),
             ORACLE (default <repo>/../shared/oracle/oracle.py),
             CARGO_TARGET_DIR (default <repo>/target/card).
Exit status 0 when both hold, 1 otherwise.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
TEMPLATE = REPO / "templates" / "smollm3.json"
FIXTURES = REPO / "templates" / "fixtures" / "smollm3"
BROKEN = REPO / "parser-runtime" / "tests" / "ui" / "templates" / "invalid_regex.json"


def cargo(manifest: Path, target: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["cargo", *args, "--manifest-path", str(manifest), "--target-dir", target],
        capture_output=True, text=True)


def main() -> int:
    target = os.environ.get("CARGO_TARGET_DIR", str(REPO / "target" / "card"))
    python = os.environ.get("ORACLE_PYTHON", str(REPO / "target" / "oracle-venv" / "bin" / "python"))
    oracle = os.environ.get("ORACLE", str(REPO.parent / "shared" / "oracle" / "oracle.py"))
    failures = 0

    built = cargo(HERE / "Cargo.toml", target, "build", "--quiet")
    if built.returncode != 0:
        print(built.stderr, file=sys.stderr)
        print("error: the card crate does not build", file=sys.stderr)
        return 1
    binary = Path(target) / "debug" / "card"
    template = json.loads(TEMPLATE.read_text())
    outputs = sorted(FIXTURES.glob("*.txt"))
    cases = [{"id": p.stem, "template": template, "prefix": "", "text": p.read_text()}
             for p in outputs]
    ran = subprocess.run([python, oracle], input="".join(json.dumps(c) + "\n" for c in cases),
                         capture_output=True, text=True)
    if ran.returncode != 0:
        print(ran.stderr, file=sys.stderr)
        print("error: the oracle failed", file=sys.stderr)
        return 1
    reference = {r["id"]: r for r in map(json.loads, ran.stdout.splitlines())}
    for path in outputs:
        ref = reference[path.stem]
        run = subprocess.run([str(binary), str(path)], capture_output=True, text=True)
        if not ref["ok"]:
            if run.returncode == 0:
                failures += 1
                print(f"FAIL {path.name}: the reference fails ({ref['error']}), the card printed a message")
            continue
        if run.returncode != 0:
            failures += 1
            print(f"FAIL {path.name}: {run.stderr.strip()}")
        elif json.loads(run.stdout) != ref["message"]:
            failures += 1
            print(f"FAIL {path.name}: message differs from the reference's")
    print(f"card: {len(outputs) - failures}/{len(outputs)} SmolLM3 outputs give the reference's message")

    with tempfile.TemporaryDirectory() as tmp:
        crate = Path(tmp) / "card"
        # New modification times (shutil.copy, not copy2), so cargo does not take the copy for
        # the crate it already built.
        shutil.copytree(HERE, crate, symlinks=False, ignore=shutil.ignore_patterns("check.py"),
                        copy_function=shutil.copy)
        (crate / "src" / "smollm3.json").unlink()
        shutil.copy(BROKEN, crate / "src" / "smollm3.json")
        manifest = crate / "Cargo.toml"
        manifest.write_text(manifest.read_text().replace(
            'path = "../../parser-runtime"', f'path = "{REPO / "parser-runtime"}"'))
        broken = cargo(manifest, target, "build", "--quiet")
        wanted = "smollm3.json:13:7: fields.content.close_pattern: invalid or unsupported regex"
        if broken.returncode == 0 or wanted not in broken.stderr:
            failures += 1
            print(f"rc={broken.returncode}\n{broken.stdout}\n{broken.stderr}", file=sys.stderr)
            print(f"FAIL broken template: the build must fail with {wanted!r}")
        else:
            print("card: a broken template fails the build naming the file, line:column and JSON path")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
