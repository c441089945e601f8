"""Token masks from Python (issue 18, point 6): the bitmask layout, the matcher's moves, its
errors, and the guarantee: outputs sampled under the masks (numpy RNG over the allowed set)
parse with the template and keep the contract (strict tools, tool_choice, response format),
checked by the parser's contract check and by jsonschema on the arguments."""

import glob
import json
import os
import re

import numpy as np
import pytest

import response_templates as rt
from response_templates import _native
from response_templates.masks import (
    ConstraintError,
    Matcher,
    Vocabulary,
    VocabularyError,
    allocate_token_bitmask,
    apply_token_bitmask_inplace,
    fill_next_token_bitmask_batch,
    load_vocabulary,
)

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
            "additionalProperties": False,
        },
    },
}

# Nested objects, arrays, formats, patterns, anyOf and $ref (as constrain/tests/guarantee.rs).
FLIGHTS = {
    "type": "function",
    "function": {
        "name": "search_flights",
        "parameters": {
            "type": "object",
            "properties": {
                "origin": {"type": "string", "pattern": "[A-Z]{3}"},
                "date": {"type": "string", "format": "date"},
                "passengers": {
                    "type": "object",
                    "properties": {"adults": {"type": "integer"}, "children": {"type": "integer"}},
                    "required": ["adults"],
                },
                "cabin": {"anyOf": [{"enum": ["economy", "business"]}, {"type": "null"}]},
                "max_price": {"type": "number"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "flexible": {"type": "boolean"},
            },
            "required": ["origin", "date", "passengers"],
        },
    },
}

EVENT = {
    "type": "function",
    "function": {
        "name": "create_event",
        "parameters": {
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "start": {"type": "string", "format": "date-time"},
                "attendees": {"type": "array", "items": {"$ref": "#/$defs/person"}},
                "id": {"type": "string", "format": "uuid"},
            },
            "required": ["title", "start"],
            "$defs": {
                "person": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "email": {"type": "string"}},
                    "required": ["name"],
                }
            },
        },
    },
}

TOOLS = [WEATHER, FLIGHTS, EVENT]

ANSWER = {
    "type": "json_schema",
    "json_schema": {
        "name": "answer",
        "schema": {
            "type": "object",
            "properties": {
                "answer": {"type": "string"},
                "confidence": {"type": "number"},
                "kind": {"enum": ["fact", "opinion"]},
            },
            "required": ["answer", "kind"],
            "additionalProperties": False,
        },
    },
}

# A valid qwen3 output (the format of the template: a JSON call between <tool_call> tags, the
# turn closed by <|im_end|>; with o200k_base that is plain text, EOS is <|endoftext|>).
QWEN3_CALL = (
    '<tool_call>{"name":"get_weather","arguments":{"city":"Paris"}}</tool_call><|im_end|>'
)


@pytest.fixture(scope="module")
def o200k():
    return Vocabulary.builtin("o200k_base")


@pytest.fixture(scope="module")
def harmony():
    return Vocabulary.builtin("o200k_harmony")


def bits(row, vocab_size):
    """The token ids whose bit is set in one int32 bitmask row, by the documented layout
    (bit i of word w = token 32 w + i), computed without numpy's bit helpers."""
    ids = []
    for w, word in enumerate(row.tolist()):
        word &= 0xFFFFFFFF
        for i in range(32):
            if word >> i & 1:
                ids.append(32 * w + i)
    return [t for t in ids if t < vocab_size] if ids and ids[-1] >= vocab_size else ids


def allowed_fast(row, vocab_size):
    return np.flatnonzero(np.unpackbits(row.view(np.uint8), bitorder="little")[:vocab_size])


# --- layout and moves ---------------------------------------------------------------------


def test_bitmask_bits_are_the_allowed_tokens_along_a_valid_text(o200k):
    m = Matcher("qwen3", o200k, tools=[WEATHER], tool_choice="required")
    assert m.vocab_size == 200019 == o200k.vocab_size
    bitmask = allocate_token_bitmask(3, m.vocab_size)
    assert bitmask.shape == (3, 6251) and bitmask.dtype == np.int32
    ids = o200k.encode(QWEN3_CALL)
    for k, token in enumerate(ids):
        bitmask[:] = -1
        m.fill_next_token_bitmask(bitmask, 1)
        got = bits(bitmask[1], m.vocab_size)
        assert got == m.allowed_token_ids(), k
        assert token in got
        # Other rows are untouched; bits past the vocabulary are 0.
        assert (bitmask[0] == -1).all() and (bitmask[2] == -1).all()
        assert bitmask[1, -1] >> (m.vocab_size % 32) == 0
        assert m.consume_token(token)
    assert m.is_accepting() and not m.is_stopped() or m.is_stopped()
    eos = o200k.special_id("<|endoftext|>")
    assert m.eos_token_ids == [eos]
    m.fill_next_token_bitmask(bitmask, 0)
    assert eos in bits(bitmask[0], m.vocab_size)
    assert m.consume_token(eos)
    assert m.is_stopped() and m.is_accepting()
    # After EOS, only EOS.
    m.fill_next_token_bitmask(bitmask, 2)
    assert bits(bitmask[2], m.vocab_size) == [eos]
    assert not m.consume_token(o200k.encode("x")[0])


def test_a_hallucinated_tool_name_is_refused_and_the_state_stays(o200k):
    m = Matcher("qwen3", o200k, tools=[WEATHER], tool_choice="required")
    assert m.consume_tokens(o200k.encode('<tool_call>{"name":"get_'))
    n = m.num_tokens
    before = allocate_token_bitmask(1, m.vocab_size)
    m.fill_next_token_bitmask(before)
    wrong = o200k.encode("time")[0]
    assert not (before[0, wrong // 32] >> (wrong % 32)) & 1
    assert m.consume_token(wrong) is False
    assert m.num_tokens == n
    after = allocate_token_bitmask(1, m.vocab_size)
    m.fill_next_token_bitmask(after)
    assert (before == after).all()
    assert m.consume_token(o200k.encode("weather")[0])
    # An id past the vocabulary is never allowed.
    assert m.consume_token(m.vocab_size + 5) is False


def test_required_tool_choice_refuses_to_end_without_a_call(o200k):
    m = Matcher("qwen3", o200k, tools=[WEATHER], tool_choice="required")
    auto = Matcher("qwen3", o200k, tools=[WEATHER], tool_choice="auto")
    eos = o200k.eos_token_ids[0]
    text = o200k.encode("Hello<|im_end|>")
    assert auto.consume_tokens(text) and auto.is_accepting()
    assert auto.consume_token(eos)
    # "<|im_end|>" here is text (o200k has no such special token). The parser reads the
    # implicit field's close wherever no region is open, so a call may still follow it
    # (transformers 5.24 parses "Hello<|im_end|><tool_call>...</tool_call>" as content plus
    # the call): the text is a valid start, but the turn may not end there.
    assert m.consume_tokens(text)
    assert not m.is_accepting() and not m.consume_token(eos)
    assert m.consume_tokens(o200k.encode(QWEN3_CALL)) and m.is_accepting()
    assert m.consume_token(eos)


def test_named_tool_choice_refuses_another_tool(o200k):
    m = Matcher("qwen3", o200k, tools=TOOLS,
                tool_choice={"type": "function", "function": {"name": "create_event"}})
    prefix = o200k.encode('<tool_call>{"name":"')
    assert m.consume_tokens(prefix)
    assert m.validate_tokens(o200k.encode("get_weather")) == 0
    assert m.validate_tokens(o200k.encode('create_event","')) == len(o200k.encode('create_event","'))


def test_rollback_and_reset_restore_the_mask(o200k):
    m = Matcher("qwen3", o200k, tools=[WEATHER], tool_choice="required")
    start = allocate_token_bitmask(1, m.vocab_size)
    m.fill_next_token_bitmask(start)
    ids = o200k.encode(QWEN3_CALL)
    assert m.consume_tokens(ids[:6])
    mid = allocate_token_bitmask(1, m.vocab_size)
    m.fill_next_token_bitmask(mid)
    assert not (mid == start).all()
    assert m.consume_tokens(ids[6:10])
    m.rollback(4)
    again = allocate_token_bitmask(1, m.vocab_size)
    m.fill_next_token_bitmask(again)
    assert (again == mid).all() and m.num_tokens == 6
    m.rollback(0)
    assert m.num_tokens == 6
    with pytest.raises(ValueError, match="7"):
        m.rollback(7)
    with pytest.raises(ValueError):
        m.rollback(-1)
    m.reset()
    m.fill_next_token_bitmask(again)
    assert (again == start).all() and m.num_tokens == 0


def test_copy_is_independent(o200k):
    m = Matcher("qwen3", o200k, tools=[WEATHER])
    assert m.consume_tokens(o200k.encode("<tool_call>"))
    c = m.copy()
    assert isinstance(c, Matcher) and c.num_tokens == m.num_tokens
    assert c.consume_tokens(o200k.encode('{"name"'))
    assert c.num_tokens > m.num_tokens


def test_validate_tokens_counts_the_valid_prefix_without_moving(o200k):
    m = Matcher("qwen3", o200k, tools=[WEATHER], tool_choice="required")
    ids = o200k.encode(QWEN3_CALL)
    assert m.validate_tokens(ids) == len(ids)
    good = o200k.encode('<tool_call>{"name":"get_')
    bad = good + o200k.encode("time") + o200k.encode('"')
    assert m.validate_tokens(bad) == len(good)
    assert m.num_tokens == 0


def test_the_date_checkers_of_the_test():
    assert rfc3339_date("0000-02-29") and rfc3339_date("2024-02-29")
    assert not rfc3339_date("2023-02-29") and not rfc3339_date("2024-13-01")
    assert not rfc3339_date("1900-02-29") and not rfc3339_date("24-01-01")
    assert rfc3339_date_time("2025-05-01T10:00:60+02:00") and rfc3339_date_time("0000-01-01t00:00:00z")
    assert not rfc3339_date_time("2025-05-01T24:00:00Z")
    assert not rfc3339_date_time("2025-05-01T10:00:00")
    assert rfc3339_time("17:17:49-00:17") and rfc3339_time("23:59:60.5Z")
    assert not rfc3339_time("17:17:49") and not rfc3339_time("17:60:00Z")


def test_batch_fill_equals_single_fills(o200k):
    tools = [WEATHER]
    ms = [Matcher("qwen3", o200k, tools=tools, tool_choice=c) for c in ("auto", "required", "none")]
    ms.append(Matcher("hermes", o200k, response_format=ANSWER))
    ids = o200k.encode(QWEN3_CALL)
    ms[1].consume_tokens(ids[:5])
    ms[0].consume_tokens(ids[:3])
    batch = allocate_token_bitmask(6, o200k.vocab_size)
    fill_next_token_bitmask_batch(ms, batch, [5, 0, 2, 3])
    for row, m in zip([5, 0, 2, 3], ms):
        one = allocate_token_bitmask(1, o200k.vocab_size)
        m.fill_next_token_bitmask(one)
        assert (batch[row] == one[0]).all()
    assert (batch[1] == -1).all() and (batch[4] == -1).all()
    fill_next_token_bitmask_batch([], batch)  # nothing to do
    with pytest.raises(ValueError, match="indices"):
        fill_next_token_bitmask_batch(ms, batch, [0])
    with pytest.raises(TypeError, match=r"matchers\[1\]"):
        fill_next_token_bitmask_batch([ms[0], "x"], batch)


def test_wider_rows_get_zero_words_and_numpy_apply_masks_logits(o200k):
    m = Matcher("qwen3", o200k, tools=[WEATHER], tool_choice="required")
    wide = np.full((1, 6300), -1, dtype=np.int32)  # a model's logits wider than the vocabulary
    m.fill_next_token_bitmask(wide)
    assert (wide[0, 6251:] == 0).all()
    allowed = set(m.allowed_token_ids())
    logits = np.zeros((1, 6300 * 32 - 10), dtype=np.float32)
    apply_token_bitmask_inplace(logits, wide)
    kept = set(np.flatnonzero(np.isfinite(logits[0])).tolist())
    assert kept == allowed
    # 1-D logits and bitmask.
    flat = np.zeros(m.vocab_size, dtype=np.float32)
    apply_token_bitmask_inplace(flat, wide[0])
    assert set(np.flatnonzero(np.isfinite(flat)).tolist()) == allowed
    with pytest.raises(TypeError, match="int32"):
        apply_token_bitmask_inplace(flat, wide[0].astype(np.int64))
    with pytest.raises(ValueError, match="batch"):
        apply_token_bitmask_inplace(np.zeros((2, 10), np.float32), wide)


def test_one_dimensional_and_array_module_buffers(o200k):
    import array

    m = Matcher("qwen3", o200k, tools=[WEATHER], tool_choice="required")
    row = np.zeros(6251, dtype=np.int32)
    m.fill_next_token_bitmask(row)
    assert bits(row, m.vocab_size) == m.allowed_token_ids()
    buf = array.array("i", [0] * 6251)
    m.fill_next_token_bitmask(buf)
    assert list(buf) == row.tolist()


# --- errors --------------------------------------------------------------------------------


def test_bitmask_errors_are_typed_and_say_why(o200k):
    m = Matcher("qwen3", o200k)
    with pytest.raises(TypeError, match="int32"):
        m.fill_next_token_bitmask(np.zeros((1, 6251), dtype=np.int64))
    with pytest.raises(TypeError, match="int32"):
        m.fill_next_token_bitmask(np.zeros((1, 6251), dtype=np.float32))
    with pytest.raises(TypeError, match="buffer"):
        m.fill_next_token_bitmask([[0] * 6251])
    with pytest.raises(ValueError, match="6251"):
        m.fill_next_token_bitmask(np.zeros((1, 6250), dtype=np.int32))
    with pytest.raises(ValueError, match="shape"):
        m.fill_next_token_bitmask(np.zeros((1, 1, 6251), dtype=np.int32))
    with pytest.raises(IndexError, match="index 2"):
        m.fill_next_token_bitmask(allocate_token_bitmask(2, m.vocab_size), 2)
    m.fill_next_token_bitmask(allocate_token_bitmask(2, m.vocab_size), -1)  # numpy-style
    ro = allocate_token_bitmask(1, m.vocab_size)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        m.fill_next_token_bitmask(ro)
    strided = np.zeros((2, 6251 * 2), dtype=np.int32)[:, ::2]
    with pytest.raises(ValueError, match="contiguous"):
        m.fill_next_token_bitmask(strided)
    with pytest.raises(ValueError, match="negative"):
        m.consume_token(-1)
    with pytest.raises(ValueError):
        allocate_token_bitmask(-1, 10)


def test_ids_counts_and_indices_of_any_size(o200k):
    """An id past the vocabulary, however large, is refused like any other (False, the state
    kept: llguidance's and xgrammar's rule); a negative id or a rollback past the history is a
    ValueError, a bitmask row outside the array an IndexError (numpy's): never OverflowError."""
    m = Matcher("qwen3", o200k, tools=[WEATHER], tool_choice="required")
    ok = o200k.encode("<tool_call>")
    huge = [m.vocab_size, 2**32, 2**63, 2**64, 10**30, np.uint64(2**64 - 1)]
    for big in huge:
        assert m.consume_token(big) is False
        assert m.validate_tokens(ok + [big]) == len(ok)
        assert m.consume_tokens([big]) is False
        assert m.num_tokens == 0
        with pytest.raises(ValueError, match="outside the vocabulary"):
            o200k.token_bytes(big)
        with pytest.raises(ValueError, match="outside the vocabulary"):
            o200k.decode(ok + [big])
    for negative in [-1, -(2**63), -(2**63) - 1, -(10**30), np.int64(-5)]:
        with pytest.raises(ValueError, match="negative"):
            m.consume_token(negative)
        with pytest.raises(ValueError, match="negative"):
            m.consume_tokens(ok + [negative])
        assert m.num_tokens == 0  # checked before any token moves the matcher
        with pytest.raises(ValueError, match="negative"):
            m.validate_tokens([negative])
        with pytest.raises(ValueError, match="outside the vocabulary"):
            o200k.is_special(negative)
    with pytest.raises(TypeError):
        m.consume_token(1.5)
    assert m.consume_tokens(ok)
    for n in [len(ok) + 1, 2**63, 10**30, -1, -(2**70)]:
        with pytest.raises(ValueError, match=f"rollback\\({n}\\): {len(ok)} tokens"):
            m.rollback(n)
    m.rollback(np.int64(len(ok)))
    assert m.num_tokens == 0
    bitmask = allocate_token_bitmask(2, m.vocab_size)
    for index in [2, 2**63, 10**30, -3, -(2**63) - 1]:
        with pytest.raises(IndexError, match=f"index {index} is outside the bitmask's 2 rows"):
            m.fill_next_token_bitmask(bitmask, index)
        with pytest.raises(IndexError, match=f"index {index} is outside"):
            fill_next_token_bitmask_batch([m], bitmask, [index])
    m.fill_next_token_bitmask(bitmask, np.int64(-2))
    fill_next_token_bitmask_batch([m, m], bitmask, [np.uint64(1), -2])
    assert (bitmask[0] == bitmask[1]).all()


def test_request_and_source_errors(o200k):
    with pytest.raises(ConstraintError) as e:
        Matcher("qwen3", o200k, tools=[WEATHER], tool_choice="get_time")
    assert isinstance(e.value, ValueError) and e.value.at == "tool_choice"
    with pytest.raises(ConstraintError) as e:
        Matcher("qwen3", o200k, tools=[WEATHER], tool_choice={"type": "function"})
    assert e.value.at == "tool_choice" and "name" in e.value.reason
    with pytest.raises(ConstraintError) as e:
        Matcher({"fields": {"content": {"content": "nonsense"}}}, o200k)
    assert e.value.at == "template"
    with pytest.raises(rt.ResponseTemplateError, match="no vendored template") as e:
        Matcher("no-such-template", o200k)
    assert e.value.problems[0]["kind"] == "UnknownVendoredName" and e.value.at == "template"
    with pytest.raises(TypeError, match="tools"):
        Matcher("qwen3", o200k, tools={"name": "x"})
    with pytest.raises(TypeError, match="tokenizer"):
        Matcher("qwen3")
    with pytest.raises(TypeError, match="tokenizer"):
        Matcher("qwen3", object())
    with pytest.raises(ValueError, match="no such file"):
        load_vocabulary("o300k_base")
    with pytest.raises(VocabularyError, match="unknown built-in"):
        Vocabulary.builtin("gpt9")
    with pytest.raises(VocabularyError, match="EOS"):
        Vocabulary.from_tiktoken("YQ== 0\n", {"<e>": 1}, ["<x>"])
    with pytest.raises(ValueError, match="outside the vocabulary"):
        o200k.token_bytes(10**7)
    with pytest.raises(ValueError, match="built-in"):
        Vocabulary.from_tiktoken("YQ== 0\nYg== 1\n", {"<e>": 2}, ["<e>"]).encode("a")


def test_general_schema_mode_reads_json_schema_outside_the_subset(o200k):
    """schema_mode="general": lengths, bounds, draft-4 definitions and open objects, which
    the strict subset (the default) refuses; expected verdicts are the schema's (JSON Schema
    validation), not the engine's."""
    fmt = {
        "type": "json_schema",
        "json_schema": {
            "name": "item",
            "schema": {
                "$schema": "http://json-schema.org/draft-04/schema#",
                "definitions": {"code": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 4}},
                "type": "object",
                "properties": {
                    "code": {"$ref": "#/definitions/code"},
                    "n": {"type": "integer", "minimum": 10, "exclusiveMinimum": True},
                },
                "required": ["code"],
            },
        },
    }
    with pytest.raises(ConstraintError):
        Matcher("qwen3", o200k, response_format=fmt)
    with pytest.raises(ConstraintError):
        Matcher("qwen3", o200k, response_format=fmt, schema_mode="strict")
    eos = o200k.eos_token_ids[0]

    def accepts(text):
        m = Matcher("qwen3", o200k, response_format=fmt, schema_mode="general")
        return m.consume_tokens(o200k.encode(text + "<|im_end|>")) and m.consume_token(eos)

    # Valid: declared order, optional n left out, an undeclared member (objects are open).
    assert accepts('{"code":"abc","n":11}')
    assert accepts('{"code":"abcd"}')
    assert accepts('{"code":"ab","n":12,"note":[1,{"x":null}]}')
    # Invalid: the pattern, maxLength, the exclusive minimum, the required member, the type.
    assert not accepts('{"code":"aB"}')
    assert not accepts('{"code":"abcde"}')
    assert not accepts('{"code":"abc","n":10}')
    assert not accepts('{"n":11}')
    assert not accepts('{"code":"abc","n":11.5}')
    with pytest.raises(ValueError, match="schema_mode"):
        Matcher("qwen3", o200k, response_format=fmt, schema_mode="lax")
    with pytest.raises(TypeError, match="schema_mode"):
        Matcher("qwen3", o200k, response_format=fmt, schema_mode=None)


def test_a_template_that_does_not_load_raises_what_template_raises(o200k, tmp_path):
    """The same problems (path, field, file, line, column, kind, reason) as the Template
    constructors and parse_response give, from a dict, JSON text, a path and a str path; the
    error is also a ConstraintError, as Matcher's other refusals."""
    bad = json.loads(_native._masks_template_source("qwen3"))
    field = next(iter(bad["fields"]))
    bad["fields"][field]["no_such_key"] = 1
    bad["fields"][field]["optional"] = "false"
    text = json.dumps(bad, indent=2)
    path = tmp_path / "bad.json"
    path.write_text(text)
    cases = [
        (bad, lambda: rt.Template.from_dict(bad)),
        (bad, lambda: rt.parse_response("x", bad, prefix="")),
        (text, lambda: rt.Template.from_json(text)),
        (path, lambda: rt.Template.from_file(path)),
        (str(path), lambda: rt.Template.from_file(path)),
    ]
    for given, reference in cases:
        with pytest.raises(rt.ResponseTemplateError) as expected:
            reference()
        with pytest.raises(rt.ResponseTemplateError) as got:
            Matcher(given, o200k)
        assert len(got.value.problems) == 2
        assert got.value.problems == expected.value.problems
        assert str(got.value) == str(expected.value)
        assert isinstance(got.value, ConstraintError) and got.value.at == "template"
    assert {p["path"] for p in got.value.problems} == {
        f"fields.{field}.no_such_key", f"fields.{field}.optional"}
    assert all(p["file"] == str(path) and p["line"] for p in got.value.problems)


def test_vocabularies_are_cached_per_source(o200k):
    assert Vocabulary.builtin("o200k_base").name == "o200k_base"
    t = Vocabulary.from_tiktoken("YQ== 0\nYg== 1\n", {"<e>": 2}, ["<e>"], source="tiny")
    assert (t.vocab_size, t.eos_token_ids, t.token_bytes(1)) == (3, [2], b"b")
    assert t.decode([1, 0, 2]) == b"ba"


def test_a_tiktoken_file_reads_like_the_builtin(o200k):
    files = glob.glob(os.path.expanduser(
        "~/.cargo/registry/src/*/tiktoken-rs-*/assets/o200k_base.tiktoken"))
    if not files:
        pytest.skip("no o200k_base.tiktoken file on this machine")
    v = load_vocabulary(files[0])
    assert v.vocab_size == o200k.vocab_size and v.eos_token_ids == o200k.eos_token_ids
    a = Matcher("qwen3", v, tools=[WEATHER], tool_choice="required")
    b = Matcher("qwen3", o200k, tools=[WEATHER], tool_choice="required")
    for token in o200k.encode(QWEN3_CALL)[:8]:
        assert a.allowed_token_ids() == b.allowed_token_ids()
        assert a.consume_token(token) and b.consume_token(token)


def test_a_transformers_tokenizer_built_offline(tmp_path):
    transformers = pytest.importorskip("transformers")
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import Tokenizer, models, pre_tokenizers, decoders, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    corpus = [QWEN3_CALL.replace("<|im_end|>", ""), "The weather in Paris is mild.",
              '{"city": "Lyon", "unit": "celsius"}'] * 20
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<|im_end|>", "<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(corpus, trainer)
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    hf = transformers.PreTrainedTokenizerFast(tokenizer_file=str(path), eos_token="<|im_end|>")
    m = Matcher("qwen3", hf, tools=[WEATHER], tool_choice="required")
    eos = hf.convert_tokens_to_ids("<|im_end|>")
    assert m.eos_token_ids == [eos] and m.vocab_size == len(hf)
    text = '<tool_call>{"name":"get_weather","arguments":{"city":"Lyon"}}</tool_call>'
    ids = hf.encode(text, add_special_tokens=False)
    for token in ids:
        assert token in m.allowed_token_ids()
        assert m.consume_token(token)
    assert m.consume_token(eos) and m.is_stopped()
    # The path and the tokenizer object give the same masks.
    p = Matcher("qwen3", str(path), tools=[WEATHER], tool_choice="required")
    assert p.vocab_size == m.vocab_size
    assert p.validate_tokens(ids) == len(ids)


def rfc3339_date(value):
    """RFC 3339 full-date (any year 0000-9999, real month lengths with leap years). Python's
    datetime, which jsonschema's own checker uses, refuses year 0."""
    if not isinstance(value, str):
        return True
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", value)
    if not m:
        return False
    y, mo, d = (int(g) for g in m.groups())
    leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
    days = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    return 1 <= mo <= 12 and 1 <= d <= days[mo - 1]


def rfc3339_time(value):
    """RFC 3339 full-time: partial-time (leap second 60 allowed) and an offset (Z or +-hh:mm;
    -00:17 included, which jsonschema's own checker refuses)."""
    if not isinstance(value, str):
        return True
    m = re.fullmatch(r"(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))", value)
    if not m:
        return False
    h, mi, sec = int(m.group(1)), int(m.group(2)), int(m.group(3))
    oh, om = int(m.group(4) or 0), int(m.group(5) or 0)
    return h <= 23 and mi <= 59 and sec <= 60 and oh <= 23 and om <= 59


def rfc3339_date_time(value):
    """RFC 3339 date-time: full-date, T, full-time."""
    if not isinstance(value, str):
        return True
    return (len(value) > 11 and value[10] in "Tt" and rfc3339_date(value[:10])
            and rfc3339_time(value[11:]))


def format_checker(jsonschema):
    checker = jsonschema.FormatChecker()
    checker.checks("date")(rfc3339_date)
    checker.checks("date-time")(rfc3339_date_time)
    checker.checks("time")(rfc3339_time)
    return checker


# --- the guarantee: sampled outputs parse and keep the contract -----------------------------


def literal_pieces(template):
    """Texts a response template writes: its literal delimiters, and the words and `<...>`
    markers of its patterns (for steering samples toward structure)."""
    out = set()

    def walk(v, key=""):
        if isinstance(v, dict):
            for k, x in v.items():
                walk(x, k)
        elif isinstance(v, list):
            for x in v:
                walk(x, key)
        elif isinstance(v, str) and key in ("open", "close", "start_anchor"):
            out.add(v)
        elif isinstance(v, str) and key.endswith("_pattern"):
            plain = v.replace("\\|", "|").replace("\\.", ".")
            out.update(re.findall(r"<\|?/?[A-Za-z_]+\|?>", plain))
            out.update(w for w in re.findall(r"[A-Za-z_=.]{3,}", plain))
    walk(template)
    return out


def schema_strings(value):
    out = set()
    if isinstance(value, dict):
        for k, v in value.items():
            out.add(k)
            out |= schema_strings(v)
    elif isinstance(value, list):
        for v in value:
            out |= schema_strings(v)
    elif isinstance(value, str):
        out.add(value)
    return out


def phrases(vocab, template_name, tools, response_format):
    """Proposals for samples, as (token ids, weight): the template's delimiters, JSON pieces
    made of the tools' and schema's names, a few values of each JSON type, EOS. A sample
    consumes a proposal only where the matcher validates it whole, token by token through the
    bitmask (see `sample`)."""
    template = json.loads(_native._masks_template_source(template_name))
    out = {}
    # Sorted: set order follows PYTHONHASHSEED, and the samples must not depend on it.
    for t in sorted(literal_pieces(template)):
        out[t] = 5.0
    for t in sorted(schema_strings(tools or []) | schema_strings(response_format or {})):
        out[json.dumps(t)] = 1.0
        out[json.dumps(t) + ":"] = 1.0
    for t in ['{"name":', '"arguments":', "{", "}", "[", "]", ",", ":", '"', "true", "false",
              "null", "0", "17", "-3.5", '"Paris"', '"ABC"', '"2025-05-01"',
              '"2025-05-01T10:00:00Z"', '"123e4567-e89b-12d3-a456-426614174000"', " ", "\n",
              "Hello", " world", "to=functions."]:
        out[t] = 1.0
    pieces = [(vocab.encode(t, allow_special=True), w) for t, w in out.items()]
    pieces += [([eos], 10.0) for eos in vocab.eos_token_ids]
    return [(ids, w) for ids, w in pieces if ids]


def sample(m, vocab, rng, proposals, cap=1000):
    """One output drawn under the masks. Each step either draws one token uniformly from the
    allowed set read from the bitmask (numpy RNG; 15% of the steps, and whenever no proposal
    fits), or draws one of the proposals the matcher validates whole (weighted) and consumes
    its tokens, each checked against the bitmask first."""
    bitmask = allocate_token_bitmask(1, m.vocab_size)

    def take(token):
        m.fill_next_token_bitmask(bitmask, 0)
        assert bitmask[0, token // 32] >> (token % 32) & 1, token
        assert m.consume_token(token), token
        tokens.append(token)

    tokens = []
    while len(tokens) < cap:
        fits = []
        if rng.random() < 0.85:
            fits = [(ids, w) for ids, w in proposals if m.validate_tokens(ids) == len(ids)]
        if fits:
            weights = np.array([w for _, w in fits])
            ids = fits[rng.choice(len(fits), p=weights / weights.sum())][0]
            for token in ids:
                take(token)
        else:
            m.fill_next_token_bitmask(bitmask, 0)
            allowed = allowed_fast(bitmask[0], m.vocab_size)
            assert len(allowed) > 0, "a live state with no allowed token"
            take(int(rng.choice(allowed)))
        if m.is_stopped():
            return tokens, True
    return tokens, False


CASES = [
    # (template, vocabulary, tools, tool_choice, response_format)
    ("qwen3", "o200k_base", TOOLS, "required", None),
    ("qwen3", "o200k_base", TOOLS, "search_flights", None),
    ("qwen3", "o200k_base", None, "auto", ANSWER),
    ("smollm3", "o200k_base", TOOLS, "required", None),
    ("smollm3", "o200k_base", TOOLS, {"type": "function", "function": {"name": "create_event"}}, None),
    ("hermes", "o200k_base", TOOLS, "required", None),
    ("hermes", "o200k_base", TOOLS, "get_weather", None),
    ("gpt-oss", "o200k_harmony", TOOLS, "required", None),
    ("gpt-oss", "o200k_harmony", TOOLS, "search_flights", None),
]


def case_id(case):
    choice = case[3] if isinstance(case[3], str) else case[3]["function"]["name"]
    return f"{case[0]}-{choice}-{'schema' if case[4] else 'tools'}"


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_sampled_outputs_parse_and_keep_the_contract(case):
    jsonschema = pytest.importorskip("jsonschema")
    template_name, vocab_name, tools, tool_choice, response_format = case
    vocab = Vocabulary.builtin(vocab_name)
    proto = Matcher(template_name, vocab, tools=tools, tool_choice=tool_choice,
                    response_format=response_format)
    proposals = phrases(vocab, template_name, tools, response_format)
    template_json = _native._masks_template_source(template_name)
    required = tool_choice != "auto"
    named = None
    if isinstance(tool_choice, dict):
        named = tool_choice["function"]["name"]
    elif tool_choice not in ("auto", "required", "none"):
        named = tool_choice
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in tools or []}
    checker = format_checker(jsonschema)
    rng = np.random.default_rng(CASES.index(case) + 1)
    complete = 0
    calls = 0
    for _ in range(20):
        m = proto.copy()
        tokens, done = sample(m, vocab, rng, proposals)
        if not done:
            continue  # cut off at the cap: a prefix of a valid output, nothing to check
        complete += 1
        text = vocab.decode(tokens).decode("utf-8")
        message, violations = _native._masks_check_response(
            template_json, text, json.dumps(tools) if tools else None,
            json.dumps(response_format) if response_format else None)
        message, violations = json.loads(message), json.loads(violations)
        assert violations == [], (text, violations)
        found = message.get("tool_calls") or []
        if required:
            assert found, text
        for call in found:
            name = call["function"]["name"]
            assert name in schemas, text
            if named:
                assert name == named, text
            arguments = call["function"]["arguments"]
            if isinstance(arguments, str):
                arguments = json.loads(arguments)
            jsonschema.validate(arguments, schemas[name], format_checker=checker)
            calls += 1
        if response_format:
            content = json.loads(message["content"])
            jsonschema.validate(content, response_format["json_schema"]["schema"],
                                format_checker=checker)
    assert complete >= 10, f"only {complete} of 20 samples completed"
    if required:
        assert calls >= complete
