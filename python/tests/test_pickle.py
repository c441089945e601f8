"""Pickling and copying, for multiprocessing (vLLM workers, ProcessPoolExecutor): a Template
pickles with its name and source and copies as itself; Matcher and ResponseParser refuse
pickling with a TypeError saying so; the exceptions pickle with their attributes."""

import concurrent.futures
import copy
import json
import multiprocessing
import pickle

import pytest

import response_templates as rt
from conftest import FIXTURES, TEMPLATES, read_text

QWEN3 = json.loads(read_text(TEMPLATES / "qwen3.json"))
SMOLLM3_CALL = FIXTURES / "smollm3" / "tool-call"
ANSWER_FORMAT = {"type": "json_schema", "json_schema": {"name": "a", "schema": {
    "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"],
    "additionalProperties": False}}}


def smollm3_call():
    text = read_text(str(SMOLLM3_CALL) + ".txt")
    prefix = read_text(str(SMOLLM3_CALL) + ".prefix")
    tools = json.loads(read_text(str(SMOLLM3_CALL) + ".tools.json"))
    expected = json.loads(read_text(str(SMOLLM3_CALL) + ".expected.json"))
    return text, prefix, tools, expected


def templates(tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(QWEN3, indent=1))
    return [
        rt.Template.vendored("qwen3"),
        rt.Template.from_dict(QWEN3),
        rt.Template.from_dict(QWEN3, name="label"),
        rt.Template.from_json(json.dumps(QWEN3)),
        rt.Template.from_file(path),
    ]


def test_a_template_pickles_with_its_name_and_source(tmp_path):
    for t in templates(tmp_path):
        for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
            data = pickle.dumps(t, protocol)
            back = pickle.loads(data)
            assert type(back) is rt.Template and back is not t
            assert (back.name, back.fields, back.to_json()) == (t.name, t.fields, t.to_json())
            assert back.to_dict() == t.to_dict() == QWEN3
            assert repr(back) == repr(t)
            # A vendored template goes by its name, the others by their JSON.
            assert (b"vendored" in data) == (t.name == "qwen3")
            assert (b"from_json" in data) == (t.name != "qwen3")
    text, prefix, tools, expected = smollm3_call()
    smollm3 = pickle.loads(pickle.dumps(rt.Template.vendored("smollm3")))
    assert rt.parse_response(text, smollm3, prefix=prefix, tools=tools) == expected


def test_a_template_copies_as_itself(tmp_path):
    for t in templates(tmp_path):
        assert copy.copy(t) is t
        assert copy.deepcopy(t) is t
        holder = copy.deepcopy({"template": t, "again": [t]})
        assert holder["template"] is t and holder["again"][0] is t


def parse_in_worker(template, text, prefix, tools, response_format=None):
    return rt.parse_response(text, template, prefix=prefix, tools=tools, response_format=response_format)


def test_templates_and_errors_cross_to_a_worker_process(tmp_path):
    text, prefix, tools, expected = smollm3_call()
    path = tmp_path / "smollm3.json"
    path.write_text(rt.Template.vendored("smollm3").to_json())
    spawn = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=spawn) as pool:
        for template in (rt.Template.vendored("smollm3"), rt.Template.from_file(path)):
            assert pool.submit(parse_in_worker, template, text, prefix, tools).result() == expected
        # An error raised in the worker comes back whole.
        broken = pool.submit(parse_in_worker, rt.Template.vendored("smollm3"), '{"n": "x"}<|im_end|>', "", None,
                             ANSWER_FORMAT)
        with pytest.raises(rt.ContractViolation) as info:
            broken.result()
    assert [(v["kind"], v["pointer"]) for v in info.value.violations] == [("type_mismatch", "/content/n")]
    assert info.value.message["content"] == '{"n": "x"}'


def test_matchers_and_parsers_refuse_pickling_with_a_type_error():
    from response_templates.masks import Matcher

    m = Matcher("qwen3", "o200k_base")
    with pytest.raises(TypeError, match="Matcher cannot be pickled.*one in each process"):
        pickle.dumps(m)
    assert copy.copy(m).num_tokens == copy.deepcopy(m).num_tokens == 0
    parser = rt.ResponseParser(QWEN3, prefix="")
    for refused in (pickle.dumps, copy.copy, copy.deepcopy):
        with pytest.raises(TypeError, match="ResponseParser cannot be pickled or copied"):
            refused(parser)


def raised(make):
    try:
        make()
    except ValueError as e:
        return e
    raise AssertionError("no error")


def test_every_exception_pickles_with_its_attributes():
    from response_templates.masks import Matcher, Vocabulary

    errors = [
        raised(lambda: rt.Template.vendored("nope")),
        raised(lambda: rt.parse_response("<tool_call>\n{not json}\n</tool_call>", QWEN3, prefix="")),
        raised(lambda: rt.parse_response('{"n": "x"}', QWEN3, prefix="", response_format=ANSWER_FORMAT)),
        raised(lambda: rt.parse_response("x", QWEN3, prefix="", response_format={"type": "json_schema", "json_schema": {
            "schema": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}}}})),
        raised(lambda: Matcher("qwen3", "o200k_base", tool_choice="get_time")),
        raised(lambda: Matcher({"fields": {"content": {"content": "nonsense"}}}, "o200k_base")),
        raised(lambda: Vocabulary.builtin("gpt9")),
    ]
    kinds = [rt.ResponseTemplateError, rt.ResponseParseError, rt.ContractViolation, rt.SchemaError,
             rt.ConstraintError, rt.TemplateConstraintError, rt.VocabularyError]
    assert [type(e) for e in errors] == kinds
    for e in errors:
        back = pickle.loads(pickle.dumps(e))
        assert type(back) is type(e)
        assert str(back) == str(e) and back.args == e.args
        assert back.__dict__ == e.__dict__
