"""Lenient mode and contracts through Python, on the Rust tests' own data:
tests/data/lenient.jsonl (each case's lenient message, lenient events, and what the default
mode does) and cli/tests/data/strict-tools.* / json-schema.* (the violations the CLI tests
expect)."""

import json
from pathlib import Path

import pytest

import response_templates as rt
from conftest import FIXTURES, REPO, TEMPLATES, merge, read_text, stream

LENIENT = [json.loads(line) for line in read_text(REPO / "tests/data/lenient.jsonl").splitlines() if line.strip()]
DATA = REPO / "cli/tests/data"


def case_input(case):
    if "fixture" in case:
        stem = FIXTURES / case["template"] / case["fixture"]
        text = read_text(Path(str(stem) + ".txt"))
        prefix_path = Path(str(stem) + ".prefix")
        prefix = read_text(prefix_path) if prefix_path.exists() else ""
        tools_path = stem.parent / (stem.name + ".tools.json")
        tools = json.loads(read_text(tools_path)) if tools_path.exists() else None
        return text, prefix, tools
    return case["text"], case.get("prefix", ""), case.get("tools")


def lenient_events(events):
    return [e for e in events if e["type"] in ("region_malformed", "region_truncated")]


def test_lenient_cases_found():
    assert len(LENIENT) >= 20


@pytest.mark.parametrize("case", LENIENT, ids=[c["name"] for c in LENIENT])
def test_lenient_case(case):
    template = rt.Template.vendored(case["template"])
    text, prefix, tools = case_input(case)
    expected = json.loads(read_text(REPO / case["expected_file"])) if "expected_file" in case else case["expected"]
    options = dict(lenient=True, reasoning_calls=case.get("options", {}).get("reasoning_calls", "keep"))
    assert rt.parse_response(text, template, prefix=prefix, tools=tools, **options) == expected
    runs = []
    for size in (max(len(text), 1), 1):
        parser = rt.ResponseParser(template, prefix, tools=tools, **options)
        message, events = stream(parser, text, size)
        assert message == expected
        got = lenient_events(list(parser.initial_events) + events)
        want = case["events"]
        assert len(got) == len(want), got
        for g, w in zip(got, want):
            assert g["type"] == w["type"] and g["field"] == w["field"] and g["text"] == w["text"]
            if "error" in w:
                assert g["error"].startswith(w["error"])
        runs.append(merge(events))
    assert runs[0] == runs[1]
    # The default mode, as the case says.
    try:
        default = rt.parse_response(text, template, prefix=prefix, tools=tools)
    except rt.ResponseParseError:
        default = "error"
    if case["default"] == "error":
        assert default == "error"
    elif case["default"] == "same":
        assert default == expected
    else:
        assert default != "error" and default != expected


def strict_tools_request():
    return (
        read_text(DATA / "strict-tools.txt"),
        read_text(DATA / "strict-tools.prefix"),
        json.loads(read_text(DATA / "strict-tools.tools.json")),
    )


# What cli/tests/contract.rs expects of the same data.
STRICT_TOOLS_VIOLATIONS = [
    ("unknown_tool", "/tool_calls/0/function/name"),
    ("missing_required", "/tool_calls/1/function/arguments/city"),
    ("unknown_parameter", "/tool_calls/1/function/arguments/country"),
    ("type_mismatch", "/tool_calls/2/function/arguments/max_results"),
]


def test_strict_tools_raise_a_contract_violation():
    text, prefix, tools = strict_tools_request()
    with pytest.raises(rt.ContractViolation) as info:
        rt.parse_response(text, rt.Template.vendored("smollm3"), prefix=prefix, tools=tools, strict_tools=True)
    got = [(v["kind"], v["pointer"]) for v in info.value.violations]
    assert got == STRICT_TOOLS_VIOLATIONS
    assert len(info.value.message["tool_calls"]) == 3
    assert all(set(v) == {"kind", "pointer", "expected", "found"} for v in info.value.violations)
    # Without strict tools: just the message, as transformers gives it.
    plain = rt.parse_response(text, rt.Template.vendored("smollm3"), prefix=prefix, tools=tools)
    assert plain == info.value.message
    ref = pytest.importorskip("transformers.utils.chat_parsing")
    assert plain == ref.parse_response(text, rt.Template.vendored("smollm3").to_dict(), prefix=prefix, tools=tools)


def test_strict_tools_streaming_reports_on_region_close():
    text, prefix, tools = strict_tools_request()
    parser = rt.ResponseParser(rt.Template.vendored("smollm3"), prefix, tools=tools, strict_tools=True)
    events = []
    for i in range(0, len(text), 4):
        events.extend(parser.feed(text[i : i + 4]))
    # Every tool call's region has closed before the end of the output.
    on_events = [(v["kind"], v["pointer"]) for e in events if e["type"] == "region_close" for v in e.get("violations", [])]
    assert sorted(on_events) == sorted(STRICT_TOOLS_VIOLATIONS)
    assert sorted((v["kind"], v["pointer"]) for v in parser.violations()) == sorted(STRICT_TOOLS_VIOLATIONS)
    with pytest.raises(rt.ContractViolation):
        parser.finalize()
    with pytest.raises(RuntimeError):
        parser.finalize()


def test_response_format_json_schema():
    fmt = json.loads(read_text(DATA / "json-schema.response-format.json"))
    text = read_text(DATA / "json-schema.txt")
    with pytest.raises(rt.ContractViolation) as info:
        rt.parse_response(text, rt.Template.vendored("smollm3"), prefix="", response_format=fmt)
    assert [(v["kind"], v["pointer"]) for v in info.value.violations] == [("type_mismatch", "/content/confidence")]
    ok = '{"answer": "Paris", "confidence": 0.9}<|im_end|>'
    message = rt.parse_response(ok, rt.Template.vendored("smollm3"), prefix="", response_format=fmt)
    assert message["content"] == '{"answer": "Paris", "confidence": 0.9}'
    # A batch: the first breaking text raises.
    with pytest.raises(rt.ContractViolation):
        rt.parse_response([ok, text], rt.Template.vendored("smollm3"), prefix="", response_format=fmt)
