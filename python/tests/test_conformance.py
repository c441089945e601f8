"""The public conformance suites through this package and through transformers in one process
(conformance.py): every case equal to transformers or explained by a named deliberate
difference, and every case as its file expects."""

import pytest

from conftest import SHARED_CASES

import conformance


@pytest.mark.parametrize("name", ["conformance.jsonl", "conformance-5.24.jsonl"])
def test_conformance_through_python(name, ref):
    path = SHARED_CASES / name
    if not path.exists():
        pytest.skip(f"{path} is missing (../shared beside the checkout)")
    summary, failures = conformance.run_file(path)
    print(conformance.summary_line(name, summary))
    assert summary["cases"] >= 50
    assert not failures, "\n".join(failures)
    assert summary["equal"] + sum(summary["deliberate"].values()) == summary["cases"]
