"""Errors: typed, derived from ValueError (RuntimeError after finalize, TypeError for wrong
Python types, as transformers raises them), carrying JSON path, field, line and column for
templates and field, byte offset and kind for output; never a panic."""

import json
import math

import pytest

import response_templates as rt
from conftest import FIXTURE_LIST, TEMPLATES, read_text

QWEN3 = json.loads(read_text(TEMPLATES / "qwen3.json"))


def test_every_error_is_a_value_error():
    for cls in (rt.ResponseTemplateError, rt.ResponseParseError, rt.ContractViolation, rt.SchemaError):
        assert issubclass(cls, ValueError)


def test_template_problems_carry_path_and_field():
    bad = json.loads(json.dumps(QWEN3))
    field = next(iter(bad["fields"]))
    bad["fields"][field]["no_such_key"] = 1
    bad["fields"][field]["optional"] = "false"
    with pytest.raises(rt.ResponseTemplateError) as info:
        rt.parse_response("x", bad, prefix="")
    problems = info.value.problems
    paths = sorted(p["path"] for p in problems)
    assert paths == sorted([f"fields.{field}.no_such_key", f"fields.{field}.optional"])
    assert {p["field"] for p in problems} == {field}
    assert all(p["line"] is None and p["file"] is None for p in problems)
    assert "no_such_key" in str(info.value) and "optional" in str(info.value)
    # The reference refuses it too (it reports only its first problem).
    ref = pytest.importorskip("transformers.utils.chat_parsing")
    bad2 = json.loads(json.dumps(QWEN3))
    bad2["fields"][field]["no_such_key"] = 1
    with pytest.raises(ValueError):
        ref.parse_response("x", bad2, prefix="")


def test_template_file_problems_carry_file_line_and_column(tmp_path):
    text = '{\n  "start_anchor": "<|im_start|>assistant\\n",\n  "fields": {\n    "content": {"open_pattern": "(?<=ab)x", "close": "y"}\n  }\n}\n'
    path = tmp_path / "broken.json"
    path.write_text(text)
    with pytest.raises(rt.ResponseTemplateError) as info:
        rt.Template.from_file(path)
    (problem,) = info.value.problems
    assert problem["file"] == str(path)
    assert problem["path"] == "fields.content.open_pattern"
    assert problem["field"] == "content"
    # Line 4 of the text, at the key "open_pattern".
    assert problem["line"] == 4
    assert problem["column"] == text.split("\n")[3].index('"open_pattern"') + 1
    assert str(path) in str(info.value)


def test_tokenizer_config_file_and_model_directory(tmp_path):
    config = {"model_max_length": 4096, "response_template": QWEN3}
    model = tmp_path / "my-model"
    model.mkdir()
    (model / "tokenizer_config.json").write_text(json.dumps(config, indent=2))
    t = rt.Template.from_pretrained(model)
    assert t.name == "my-model"
    assert t.to_dict() == QWEN3
    assert rt.Template.from_file(model / "tokenizer_config.json").to_dict() == QWEN3
    # A tokenizer_config.json without a template, and a directory without the file.
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "tokenizer_config.json").write_text('{"model_max_length": 1}')
    with pytest.raises(rt.ResponseTemplateError, match="response_template"):
        rt.Template.from_pretrained(tmp_path / "other")
    with pytest.raises(rt.ResponseTemplateError) as info:
        rt.Template.from_pretrained(tmp_path / "missing")
    assert info.value.problems[0]["file"].endswith("tokenizer_config.json")


def test_invalid_json_text_gives_line_and_column():
    with pytest.raises(rt.ResponseTemplateError) as info:
        rt.Template.from_json('{"fields": {}\n  "start_anchor": "x"}')
    (problem,) = info.value.problems
    assert (problem["line"], problem["column"]) == (2, 3)


def test_unknown_vendored_name_is_a_template_error_naming_the_vendored_ones():
    with pytest.raises(rt.ResponseTemplateError) as info:
        rt.Template.vendored("no-such-model")
    e = info.value
    assert isinstance(e, ValueError)
    assert '"no-such-model"' in str(e) and "vendored_names()" in str(e)
    assert all(name in str(e) for name in rt.vendored_names())
    (problem,) = e.problems
    assert problem["kind"] == "UnknownVendoredName"
    assert (problem["path"], problem["field"], problem["file"], problem["line"]) == ("", None, None, None)
    assert problem["reason"] == str(e)


def content_error_case():
    """A qwen3 output whose tool call is not JSON, after a multi-byte character; the byte offset
    of the region's body is computed from the text (where the open delimiter ends)."""
    open_delim = "<tool_call>"
    text = "Réponse é.\n" + open_delim + "\n{not json}\n</tool_call>"
    body_start = len(text[: text.index(open_delim) + len(open_delim)].encode("utf-8"))
    return text, body_start


def test_parse_error_carries_field_offset_and_kind():
    text, body_start = content_error_case()
    with pytest.raises(rt.ResponseParseError) as info:
        rt.parse_response(text, QWEN3, prefix="")
    e = info.value
    assert (e.kind, e.field, e.in_prefix) == ("content", "tool_calls", False)
    # The body starts right after the open delimiter (its newline may belong to it).
    assert e.offset in (body_start, body_start + 1)
    assert "tool_calls" in str(e)
    # Streamed in small pieces: the same error.
    parser = rt.ResponseParser(QWEN3, prefix="")
    with pytest.raises(rt.ResponseParseError) as streamed:
        for i in range(0, len(text), 2):
            parser.feed(text[i : i + 2])
        parser.finalize()
    assert (streamed.value.field, streamed.value.offset) == (e.field, e.offset)
    # transformers fails on the same output (with a ValueError).
    ref = pytest.importorskip("transformers.utils.chat_parsing")
    with pytest.raises(ValueError):
        ref.parse_response(text, QWEN3, prefix="")


def test_missing_required_fields():
    template = {"start_anchor": "<s>", "fields": {"answer": {"open": "<a>", "close": "</a>", "optional": False}, "content": {}}}
    with pytest.raises(rt.ResponseParseError) as info:
        rt.parse_response("no answer", template, prefix="")
    assert info.value.kind == "missing_required" and info.value.fields == ["answer"]
    ref = pytest.importorskip("transformers.utils.chat_parsing")
    with pytest.raises(ValueError):
        ref.parse_response("no answer", template, prefix="")


def test_prefix_none_is_a_value_error_as_in_transformers():
    with pytest.raises(ValueError, match="prefix"):
        rt.parse_response("x", QWEN3)
    with pytest.raises(ValueError, match="prefix"):
        rt.ResponseParser(QWEN3)
    ref = pytest.importorskip("transformers.utils.chat_parsing")
    with pytest.raises(ValueError):
        ref.ResponseParser(QWEN3)


def test_feed_or_finalize_after_finalize_is_a_runtime_error():
    parser = rt.ResponseParser(QWEN3, prefix="")
    parser.feed("hello")
    parser.finalize()
    with pytest.raises(RuntimeError):
        parser.feed("more")
    with pytest.raises(RuntimeError):
        parser.finalize()
    ref = pytest.importorskip("transformers.utils.chat_parsing")
    theirs = ref.ResponseParser(QWEN3, prefix="")
    theirs.finalize()
    with pytest.raises(RuntimeError):
        theirs.feed("more")


@pytest.mark.parametrize(
    "value, error",
    [
        ("not a dict", TypeError),
        (["a", "list"], TypeError),
        ({"fields": {}, "start_anchor": "<s>", "defaults": {1: "int key"}}, TypeError),
        ({"fields": {}, "start_anchor": "<s>", "defaults": {"x": float("nan")}}, ValueError),
        ({"fields": {}, "start_anchor": "<s>", "defaults": {"x": object()}}, TypeError),
        ({"fields": {}, "start_anchor": "<s>", "defaults": {"x": 2**70 + 1}}, ValueError),
    ],
)
def test_templates_python_cannot_hold_as_json(value, error):
    with pytest.raises(error):
        rt.parse_response("x", value, prefix="")


def test_deep_nesting_is_refused_not_a_crash():
    deep = "x"
    for _ in range(10_000):
        deep = [deep]
    template = {"fields": {"content": {}}, "start_anchor": "<s>", "defaults": {"d": deep}}
    with pytest.raises(rt.ResponseTemplateError, match="nested more than 256 levels") as info:
        rt.parse_response("x", template, prefix="")
    (problem,) = info.value.problems
    assert problem["kind"] == "TooDeep"
    # The list at level 257: defaults, d, then 254 items in.
    assert problem["path"] == "defaults.d" + "[0]" * 254


def number_tool(**extra):
    return [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"x": dict({"type": "number"}, **extra)}}}}]


def number_format(**extra):
    return {"type": "json_schema", "json_schema": {"name": "r", "schema": {
        "type": "object", "properties": {"x": dict({"type": "number"}, **extra)}}}}


def nested_items(levels):
    schema = {"type": "number"}
    for _ in range(levels):
        schema = {"type": "array", "items": schema}
    return schema


TOOL_X = "/0/function/parameters/properties/x"
FORMAT_X = "/json_schema/schema/properties/x"


@pytest.mark.parametrize(
    "kwargs, error, pointer",
    [
        ({"tools": number_tool(default=float("nan"))}, ValueError, TOOL_X + "/default"),
        ({"tools": number_tool(enum={1, 2})}, TypeError, TOOL_X + "/enum"),
        ({"tools": number_tool(meta={1: "one"})}, TypeError, TOOL_X + "/meta"),
        ({"response_format": number_format(maximum=float("inf"))}, ValueError, FORMAT_X + "/maximum"),
        ({"response_format": number_format(maximum=2**70 + 1)}, ValueError, FORMAT_X + "/maximum"),
        ({"response_format": number_format(default=object())}, TypeError, FORMAT_X + "/default"),
        # Past the conversion's 256 levels: the container at level 257, 256 steps in.
        ({"tools": number_tool(items=nested_items(5000))}, rt.SchemaError, TOOL_X + "/items" * 251),
        ({"response_format": number_format(items=nested_items(5000))}, rt.SchemaError, FORMAT_X + "/items" * 252),
    ],
    ids=["tools-nan", "tools-set", "tools-int-key", "format-inf", "format-big-int", "format-object",
         "tools-deep", "format-deep"],
)
def test_python_values_json_cannot_hold_give_one_error_for_parsing_and_masks(kwargs, error, pointer):
    """tools and response_format go through one conversion for parse_response,
    ResponseParser and Matcher: the same error type and message, naming the JSON pointer; too
    deep is the typed SchemaError naming the depth limit (never RecursionError)."""
    from response_templates.masks import Matcher

    errors = []
    for make in (
        lambda: rt.parse_response("x", QWEN3, prefix="", **kwargs),
        lambda: rt.ResponseParser(QWEN3, prefix="", **kwargs),
        lambda: Matcher(QWEN3, "o200k_base", **kwargs),
    ):
        with pytest.raises(error) as info:
            make()
        errors.append(info.value)
    assert {type(e) for e in errors} == {type(errors[0])}
    assert {str(e) for e in errors} == {str(errors[0])}
    assert f'pointer "{pointer}"' in str(errors[0])
    if error is rt.SchemaError:
        assert "256 levels" in str(errors[0])
        assert [p["pointer"] for p in errors[0].problems] == [pointer]


def test_big_integers_and_floats_keep_their_values():
    defaults = {"role": "assistant", "big": 2**64, "neg": -(2**63), "u": 2**63, "f": 0.1, "e": 1e300}
    message = rt.parse_response("hi", {"fields": {"content": {}}, "start_anchor": "<s>", "defaults": defaults}, prefix="")
    assert message["neg"] == -(2**63) and isinstance(message["neg"], int)
    assert message["u"] == 2**63 and isinstance(message["u"], int)
    assert message["big"] == 2**64  # a float that holds it exactly (README, deliberate difference 5)
    assert message["f"] == 0.1 and message["e"] == 1e300
    assert list(message) == ["role", "big", "neg", "u", "f", "e", "content"]


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        ({"reasoning_calls": "sometimes"}, ValueError, "reasoning_calls"),
        ({"reasoning_calls": "extract"}, ValueError, "lenient"),
        ({"strict_tools": True}, ValueError, "tools"),
        ({"tools": "get_weather"}, TypeError, "tools"),
        ({"tools": [lambda: None]}, None, None),
        ({"response_format": {"type": "json_schema", "json_schema": {"schema": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}}}}}, rt.SchemaError, "minimum"),
    ],
)
def test_bad_options(kwargs, error, words):
    if error is None:
        # A lambda is a function: transformers' get_json_schema is used, and refuses it
        # (no docstring), or without transformers a TypeError says what to do.
        with pytest.raises(Exception) as info:
            rt.parse_response("x", QWEN3, prefix="", **kwargs)
        assert not type(info.value).__name__ == "PanicException"
        return
    with pytest.raises(error, match=words):
        rt.parse_response("x", QWEN3, prefix="", **kwargs)


def test_schema_error_problems():
    fmt = {"type": "json_schema", "json_schema": {"schema": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}}}}
    with pytest.raises(rt.SchemaError) as info:
        rt.ResponseParser(QWEN3, prefix="", response_format=fmt)
    assert any(p["pointer"].endswith("/properties/n/minimum") for p in info.value.problems)


@pytest.mark.parametrize("chunk", [b"bytes", 7, None, ["list"]])
def test_feed_wrong_type_is_a_type_error(chunk):
    parser = rt.ResponseParser(QWEN3, prefix="")
    with pytest.raises(TypeError):
        parser.feed(chunk)


def test_hostile_inputs_never_panic():
    """Odd strings (lone surrogates, NUL, huge repeats of delimiter starts) give a message or a
    typed error, never a PanicException."""
    cases = ["\x00" * 10, "<tool_call>" * 1000, "<" * 5000, "<think>" + "\ud800", "é" * 3 + "<tool_call>\n{\"name\": \"\ud83d\"}"]
    for fx_template in {f.template_path: f for f in FIXTURE_LIST}.values():
        for text in cases:
            for prefix in ("", text):
                try:
                    rt.parse_response(text, fx_template.template, prefix=prefix)
                except (ValueError, UnicodeEncodeError, TypeError):
                    pass
