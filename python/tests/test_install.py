"""install(tokenizer): a transformers tokenizer's parse_response and get_response_parser on this
package, with the tokenizer's rules for token ids and batches. The tokenizer is built offline: a
byte-level BPE over the 256 byte symbols (every text round-trips through encode/decode) with the
chat delimiters as added tokens. Expected values: the same tokenizer's own methods (transformers),
run before install."""

import json

import pytest

import response_templates as rt
from conftest import FIXTURE_LIST

transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")
np = pytest.importorskip("numpy")


def byte_level_tokenizer(template):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    symbols = pre_tokenizers.ByteLevel.alphabet()
    vocab = {s: i for i, s in enumerate(sorted(symbols))}
    core = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    core.decoder = decoders.ByteLevel()
    tok = PreTrainedTokenizerFast(tokenizer_object=core)
    tok.add_tokens(["<tool_call>", "</tool_call>", "<think>", "</think>"])
    tok.add_special_tokens({"additional_special_tokens": ["<|im_start|>", "<|im_end|>"]})
    tok.response_template = template
    return tok


@pytest.fixture
def case():
    return next(f for f in FIXTURE_LIST if f.id == "qwen3/tool-call")


@pytest.fixture
def tok(case):
    return byte_level_tokenizer(case.template)


def ids(tok, text):
    return tok.encode(text, add_special_tokens=False)


def test_the_tokenizer_round_trips(tok, case):
    assert tok.decode(ids(tok, case.text)) == case.text
    assert tok.decode(ids(tok, case.prefix)) == case.prefix


def both(tok, call):
    """(transformers' result, ours) of call(tok); exceptions as their types."""

    def run():
        try:
            return call(tok)
        except Exception as e:  # compared by type below
            return type(e)

    theirs = run()
    rt.install(tok)
    try:
        ours = run()
    finally:
        rt.uninstall(tok)
    return theirs, ours


@pytest.mark.parametrize(
    "shape",
    ["str", "ids", "ids_array", "batch_str", "batch_ids", "batch_array", "batch_per_item_prefix", "empty_prefix_list"],
)
def test_parse_response_shapes(tok, case, shape):
    text_ids, prefix_ids = ids(tok, case.text), ids(tok, case.prefix)
    calls = {
        "str": lambda t: t.parse_response(case.text, prefix=case.prefix, tools=case.tools),
        "ids": lambda t: t.parse_response(text_ids, prefix=prefix_ids, tools=case.tools),
        "ids_array": lambda t: t.parse_response(np.array(text_ids), prefix=np.array(prefix_ids), tools=case.tools),
        "batch_str": lambda t: t.parse_response([case.text, "Just text."], prefix=case.prefix, tools=case.tools),
        "batch_ids": lambda t: t.parse_response([text_ids, text_ids], prefix=prefix_ids, tools=case.tools),
        "batch_array": lambda t: t.parse_response(np.array([text_ids, text_ids]), prefix=case.prefix),
        "batch_per_item_prefix": lambda t: t.parse_response([case.text, case.text], prefix=[case.prefix, ""]),
        "empty_prefix_list": lambda t: t.parse_response(case.text, prefix=[]),
    }
    theirs, ours = both(tok, calls[shape])
    assert not isinstance(theirs, type), theirs
    assert ours == theirs
    if shape == "str":
        assert ours == case.expected


@pytest.mark.parametrize(
    "call",
    [
        lambda t: t.parse_response("x"),  # no prefix
        lambda t: t.parse_response(["a", "b"], prefix=["p"] * 3),  # count mismatch
        lambda t: t.parse_response("x", schema={"fields": "nope"}, prefix=""),  # bad template
        lambda t: t.get_response_parser(),  # no prefix
        lambda t: t.get_response_parser(prefix=[[1, 2], [3]]),  # a batch prefix
    ],
)
def test_errors_as_transformers_raises_them(tok, call):
    theirs, ours = both(tok, call)
    assert isinstance(theirs, type) and isinstance(ours, type)
    assert issubclass(ours, theirs) or issubclass(theirs, ours) or (issubclass(ours, ValueError) and issubclass(theirs, ValueError))


def test_no_template_is_an_attribute_error(case):
    tok = byte_level_tokenizer(None)
    theirs, ours = both(tok, lambda t: t.parse_response("x", prefix=""))
    assert theirs is AttributeError and ours is AttributeError


def test_get_response_parser_streams_like_transformers(tok, case):
    prefix_ids = ids(tok, case.prefix)

    def run(t):
        p = t.get_response_parser(prefix=prefix_ids, tools=case.tools)
        events = list(p.initial_events)
        for i in range(0, len(case.text), 5):
            events.extend(p.feed(case.text[i : i + 5]))
        message, final = p.finalize()
        return message, merge_all(events + final)

    from conftest import merge as merge_all

    theirs, ours = both(tok, run)
    assert ours == theirs
    rt.install(tok)
    assert isinstance(tok.get_response_parser(prefix=""), rt.ResponseParser)
    # The extras pass through.
    with pytest.raises(ValueError, match="lenient"):
        tok.parse_response("x", prefix="", reasoning_calls="extract")
    assert tok.parse_response("x", prefix="", lenient=True) == rt.parse_response("x", case.template, prefix="", lenient=True)
    rt.uninstall(tok)
    assert not isinstance(tok.get_response_parser(prefix=""), rt.ResponseParser)
