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


def test_deliberate_difference_2_is_recognised_and_nothing_else():
    """The classifier of conformance.py: the same stream split differently between
    initial_events and events is difference 2; other differences are not explained."""
    case = {"id": "x"}
    open_, close = {"type": "region_open", "field": "r"}, {"type": "region_close", "field": "r", "value": ""}
    ours = {"ok": True, "message": {"a": 1}, "initial_events": [open_, close], "events": []}
    theirs = {"ok": True, "message": {"a": 1}, "initial_events": [open_], "events": [close]}
    assert conformance.compare(case, ours, theirs) is not None
    assert conformance.deliberate(case, ours, theirs) == 2
    other = dict(theirs, message={"a": 2})
    assert conformance.deliberate(case, ours, other) is None
    assert conformance.deliberate(case, ours, {"ok": False, "error": "ValueError: x"}) is None
