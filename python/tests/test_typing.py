"""Typing: the package ships ``py.typed`` and a stub of its native module (``_native.pyi``);
mypy's stubtest checks the stub against the built module (every class, method, property and
function, with parameter names, defaults and keyword-only markers), and ``mypy --strict``
checks a typed user of the public API (typing_example.py), which also runs. The mypy tests
skip when mypy is not installed (``pip install mypy``)."""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import response_templates
from conftest import REPO

PYTHON = REPO / "python"
STUB = PYTHON / "response_templates" / "_native.pyi"
EXAMPLE = Path(__file__).resolve().parent / "typing_example.py"
INSTALLED = Path(response_templates.__file__).resolve().parent

needs_mypy = pytest.mark.skipif(
    importlib.util.find_spec("mypy") is None,
    reason="mypy is not installed (pip install mypy): the stub and the typed example are not checked",
)


def mypy(tmp_path, *args, mypypath=None):
    """Runs ``python -m <args>`` (mypy or mypy.stubtest) in an empty folder, so that the
    installed package is the one imported and, without ``mypypath``, the one type-checked."""
    env = {k: v for k, v in os.environ.items() if k != "MYPYPATH"}
    if mypypath is not None:
        env["MYPYPATH"] = str(mypypath)
    return subprocess.run(
        [sys.executable, "-m", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_installed_package_is_typed():
    # The wheel carries the marker and the stub (maturin packs the files of
    # python/response_templates/ beside the native module).
    assert (INSTALLED / "py.typed").is_file(), f"no py.typed in {INSTALLED}"
    installed = INSTALLED / "_native.pyi"
    assert installed.is_file(), f"no _native.pyi in {INSTALLED}"
    assert installed.read_text(encoding="utf-8") == STUB.read_text(encoding="utf-8"), (
        f"{installed} differs from {STUB}: reinstall the package (pip install ./python)"
    )


@needs_mypy
def test_stubtest_accepts_the_native_stub(tmp_path):
    # The repository's stub (MYPYPATH) against the installed module: a name missing from the
    # stub, or a parameter named, defaulted or marked otherwise than the module's, fails.
    done = mypy(
        tmp_path,
        "mypy.stubtest",
        "response_templates._native",
        "--mypy-config-file",
        str(PYTHON / "pyproject.toml"),
        mypypath=PYTHON,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@needs_mypy
def test_the_typed_example_passes_mypy_strict(tmp_path):
    done = mypy(tmp_path, "mypy", "--strict", "--no-incremental", str(EXAMPLE))
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_typed_example_runs():
    pytest.importorskip("typing_extensions")
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "typing example: ok" in done.stdout


# Calls the stub refuses: the types are in force (not Any), and precise.
WRONG = '''\
import response_templates as rt
t = rt.Template.vendored(3)
m = rt.Matcher(t, "o200k_base")
m.consume_token("1")
rt.ResponseParser(t, "", reasoning_calls="extracted")
message: list = rt.parse_response("x", t, prefix="")
rt.Template.vendored_names().upper()
rt.fill_next_token_bitmask_batch([t], None)
rt.Vocabulary.builtin("o200k_base").encode("x", True)
'''


@needs_mypy
def test_mypy_refuses_wrong_calls(tmp_path):
    path = tmp_path / "wrong.py"
    path.write_text(WRONG, encoding="utf-8")
    done = mypy(tmp_path, "mypy", "--no-incremental", "--no-error-summary", str(path))
    lines = {int(n) for n in re.findall(r"^(?:.*/)?wrong\.py:(\d+): error:", done.stdout, re.M)}
    assert lines == {2, 4, 5, 6, 7, 8, 9}, done.stdout + done.stderr
