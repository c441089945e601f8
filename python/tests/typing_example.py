"""A typed user of the public API (parse_response, ResponseParser, Template, Matcher with a
numpy bitmask). test_typing.py checks it with ``mypy --strict`` against the installed
package (its ``py.typed`` and ``_native.pyi``) and runs it: the types it asserts are the
ones the calls return."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import numpy.typing as npt
from typing_extensions import assert_type

import response_templates as rt
from response_templates import _native

WEATHER: Dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "additionalProperties": False,
        },
    },
}


def templates() -> rt.Template:
    template = rt.Template.vendored("qwen3")
    assert_type(template, _native.Template)
    assert_type(template.name, Optional[str])
    assert_type(template.fields, List[str])
    assert_type(rt.vendored_names(), List[str])
    as_dict = template.to_dict()
    assert_type(as_dict, Dict[str, Any])
    again = rt.Template.from_dict(as_dict, "copy")
    assert again.fields == rt.Template.from_json(template.to_json()).fields
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "qwen3.json"
        path.write_text(json.dumps(as_dict), encoding="utf-8")
        assert rt.Template.from_file(path).name == "qwen3"
        assert rt.Template.from_file(os.fspath(path), name="mine").name == "mine"
    return template


def parse(template: rt.Template) -> None:
    message = rt.parse_response("<think>why</think>hello", template, prefix="")
    assert_type(message, Dict[str, Any])
    assert message["content"] == "hello"
    batch = rt.parse_response(["a", "b"], template, prefix="", reasoning_calls="keep")
    assert_type(batch, List[Dict[str, Any]])
    assert [m["content"] for m in batch] == ["a", "b"]
    try:
        rt.parse_response("<tool_call>{", template, prefix="", tools=[WEATHER])
    except rt.ResponseParseError as e:
        offset: Optional[int] = e.offset
        assert offset is None or offset >= 0


def stream(template: rt.Template) -> None:
    parser = rt.ResponseParser(template, "", tools=[WEATHER], strict_tools=True)
    assert_type(parser.initial_events, List[Dict[str, Any]])
    events = parser.feed("<think>a</think>b")
    assert_type(events, List[Dict[str, Any]])
    assert [e["type"] for e in events][:1] == ["region_open"]
    done = parser.finalize()
    assert_type(done, Tuple[Dict[str, Any], List[Dict[str, Any]]])
    message, final_events = done
    assert message["content"] == "b" and final_events
    assert_type(parser.violations(), List[Dict[str, Any]])


def masks(template: rt.Template) -> None:
    matcher = rt.Matcher(template, "o200k_base", tools=[WEATHER], tool_choice="auto")
    assert_type(matcher, rt.Matcher)
    vocab = matcher.vocabulary
    assert_type(vocab, _native.Vocabulary)
    ids = vocab.encode("hello")
    assert_type(ids, List[int])
    assert_type(vocab.decode(ids), bytes)
    assert matcher.consume_tokens(ids)
    bitmask = rt.allocate_token_bitmask(1, matcher.vocab_size)
    assert_type(bitmask, npt.NDArray[np.int32])
    matcher.fill_next_token_bitmask(bitmask, 0)
    logits = np.zeros((1, matcher.vocab_size), dtype=np.float32)
    logits[0, matcher.eos_token_ids] = 1.0
    rt.apply_token_bitmask_inplace(logits, bitmask)
    token = np.argmax(logits[0])  # a numpy integer is a token id too
    assert matcher.consume_token(token) and matcher.is_stopped()
    assert_type(matcher.num_tokens, int)
    copy = matcher.copy()
    assert_type(copy, rt.Matcher)
    copy.rollback(copy.num_tokens)
    allowed = copy.allowed_token_ids()
    assert_type(allowed, List[int])
    assert copy.validate_tokens(allowed[:1]) == 1
    rows = rt.allocate_token_bitmask(2, matcher.vocab_size)
    rt.fill_next_token_bitmask_batch([matcher, copy], rows)
    rt.fill_next_token_bitmask_batch([copy], rows, [1])


def main() -> int:
    template = templates()
    parse(template)
    stream(template)
    masks(template)
    print("typing example: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
