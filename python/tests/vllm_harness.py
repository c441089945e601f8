"""Drives vLLM parsers the way vLLM 0.33's OpenAI chat serving does (test helper).

Used by ``test_vllm.py``. Importing it needs vLLM; ``load_vllm()`` imports vLLM's parser
modules, with ``_torch_stub`` standing in for torch when no torch is installed, and takes
the stub out of ``sys.modules`` again afterwards so that no other test sees a fake torch.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
FIXTURES = REPO / "templates" / "fixtures"
TEMPLATES = REPO / "templates"


def with_torch_stub(load: Any) -> Any:
    """``load()`` with ``_torch_stub`` answering ``import torch`` when no torch is installed;
    the stub is taken out again afterwards."""
    sys.path.insert(0, str(HERE))
    try:
        import _torch_stub
    finally:
        sys.path.remove(str(HERE))
    stubbed = _torch_stub.install()
    try:
        return load()
    finally:
        if stubbed:
            _torch_stub.uninstall()


def load_vllm() -> dict[str, Any]:
    """Import the vLLM pieces the tests use; raises ImportError when vLLM is missing."""
    import importlib.util

    if importlib.util.find_spec("vllm") is None:
        raise ImportError("vllm is not installed")

    def load() -> dict[str, Any]:
        from vllm.entrypoints.openai.chat_completion.message_assembly import (
            assemble_chat_message_fields,
        )
        from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
        from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
        from vllm.parser.parser_manager import ParserManager
        from vllm.parser.response_template import validate_response_template_for_serving

        return {
            "assemble": assemble_chat_message_fields,
            "Request": ChatCompletionRequest,
            "StreamProcessor": ChatStreamProcessor,
            "ParserManager": ParserManager,
            "hf_validate": validate_response_template_for_serving,
            "stubbed_torch": stubbed,
        }

    stubbed = importlib.util.find_spec("torch") is None  # before the stub answers for it
    return with_torch_stub(load)


class FixtureTokenizer:
    """A deterministic tokenizer for tests: special-token-like markup (``<|...|>``,
    ``<｜...｜>``, ``[TOOL_CALLS]``, ``<think>``) is one token, other text is cut into
    whitespace runs, words of at most four characters and single symbols. Ids are given out
    as pieces are first seen; ``decode(encode(s)) == s`` for every string."""

    _PIECE = re.compile(
        r"<\|[^|<>\s]{1,40}\|>|<｜[^｜]{1,40}｜>|\[/?[A-Z_]{2,20}\]|</?[a-z_:]{1,20}>"
        r"|\s+|\w{1,4}|[^\w\s]",
    )

    def __init__(self, response_template: dict | None = None) -> None:
        self.response_template = response_template
        self.init_kwargs = {}
        self._ids: dict[str, int] = {}
        self._pieces: list[str] = []
        self.eos_token_id = self._id("<eos>")

    def _id(self, piece: str) -> int:
        token_id = self._ids.get(piece)
        if token_id is None:
            token_id = self._ids[piece] = len(self._pieces)
            self._pieces.append(piece)
        return token_id

    def tokenize(self, text: str) -> list[str]:
        pieces = self._PIECE.findall(text)
        assert "".join(pieces) == text, "tokenizer lost text"
        return pieces

    def encode(self, text: str, add_special_tokens: bool = False, **_: Any) -> list[int]:
        return [self._id(piece) for piece in self.tokenize(text)]

    def decode(self, ids: Any, skip_special_tokens: bool = False, **_: Any) -> str:
        if isinstance(ids, int):
            ids = [ids]
        return "".join(self._pieces[i] for i in ids)

    def convert_ids_to_tokens(self, ids: Any, skip_special_tokens: bool = False) -> list[str]:
        return [self._pieces[i] for i in ids]

    def get_vocab(self) -> dict[str, int]:
        return dict(self._ids)

    @property
    def vocab(self) -> dict[str, int]:
        return self.get_vocab()

    def __len__(self) -> int:
        return len(self._pieces)


@dataclass
class Case:
    """One fixture: a template family, a case name, its texts and tools."""

    family: str
    name: str
    template: dict
    prefix: str
    text: str
    tools: list[dict] | None
    expected: dict

    @property
    def id(self) -> str:
        return f"{self.family}/{self.name}"


def load_template(family: str) -> dict:
    data = json.loads((TEMPLATES / f"{family}.json").read_text(encoding="utf-8"))
    return data.get("response_template", data)


def fixture_cases() -> list[Case]:
    cases = []
    for directory in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
        family = directory.name
        if not (TEMPLATES / f"{family}.json").is_file():
            continue
        template = load_template(family)
        for text_path in sorted(directory.glob("*.txt")):
            stem = text_path.name[: -len(".txt")]
            prefix_path = directory / f"{stem}.prefix"
            expected_path = directory / f"{stem}.expected.json"
            tools_path = directory / f"{stem}.tools.json"
            if not expected_path.is_file():
                continue
            cases.append(
                Case(
                    family=family,
                    name=stem,
                    template=template,
                    prefix=prefix_path.read_text(encoding="utf-8") if prefix_path.is_file() else "",
                    text=text_path.read_text(encoding="utf-8"),
                    tools=json.loads(tools_path.read_text(encoding="utf-8"))
                    if tools_path.is_file()
                    else None,
                    expected=json.loads(expected_path.read_text(encoding="utf-8")),
                )
            )
    return cases


def as_hf_template(template: dict) -> dict:
    """The template with ``reasoning_content`` renamed ``thinking``, the one reasoning name
    vLLM's ``hf`` parser knows (same delimiters, same parse)."""
    fields = template.get("fields", {})
    if "reasoning_content" not in fields or "thinking" in fields:
        return template
    renamed = dict(template)
    renamed["fields"] = {
        ("thinking" if name == "reasoning_content" else name): value
        for name, value in fields.items()
    }
    return renamed


@dataclass
class Result:
    """What a client sees: a message, or a stream merged per field and per call index."""

    reasoning: str | None
    content: str | None
    calls: list[dict] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)

    def comparable(self) -> tuple:
        return (self.reasoning or None, self.content or None, self.calls)


def make_request(v: dict, tools: list[dict] | None, tool_choice: Any = None, **extra: Any) -> Any:
    data: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "hi"}], **extra}
    if tools:
        data["tools"] = tools
        if tool_choice is not None:
            data["tool_choice"] = tool_choice
    return v["Request"](**data)


def parser_class(v: dict, tokenizer: Any, tool: str | None, reasoning: str | None) -> Any:
    return v["ParserManager"].get_parser(
        tool_parser_name=tool,
        reasoning_parser_name=reasoning,
        enable_auto_tools=True,
        model_name="m",
        tokenizer=tokenizer,
    )


def run_oneshot(v: dict, parser_cls: Any, tokenizer: Any, prefix: str, text: str, request: Any) -> Result:
    """Non-streaming chat completion: ``Parser.parse`` + ``assemble_chat_message_fields``."""
    renderer_parser = parser_cls(tokenizer, request.tools, chat_template_kwargs={}, model_config=None)
    prompt_ids = tokenizer.encode(prefix)
    renderer_parser.set_prompt_token_ids(prompt_ids)
    request = renderer_parser.adjust_request(request)
    parser = parser_cls(tokenizer, request.tools, chat_template_kwargs={}, model_config=None)
    parser.set_prompt_token_ids(prompt_ids)
    reasoning, content, tool_calls = parser.parse(
        text, request, enable_auto_tools=True, model_output_token_ids=tokenizer.encode(text)
    )
    fields = v["assemble"](
        request, reasoning, content, tool_calls, enable_auto_tools=True, parser_cls=parser_cls
    )
    calls = [
        {"name": call.function.name, "arguments": json.loads(call.function.arguments)}
        for call in fields.tool_calls
    ]
    return Result(fields.reasoning, fields.content, calls, [call.id for call in fields.tool_calls])


def run_stream(
    v: dict, parser_cls: Any, tokenizer: Any, prefix: str, text: str, request: Any, per_step: int = 1
) -> tuple[Result, list[Any]]:
    """Streaming chat completion: one ``ChatStreamProcessor`` step per ``per_step`` tokens."""
    prompt_ids = tokenizer.encode(prefix)
    parser = parser_cls(tokenizer, request.tools, chat_template_kwargs={}, model_config=None)
    processor = v["StreamProcessor"](
        request, parser, enable_auto_tools=True, parser_cls=parser_cls
    )
    ids = tokenizer.encode(text)
    steps = [ids[i : i + per_step] for i in range(0, len(ids), per_step)] or [[]]
    deltas = []
    for n, step_ids in enumerate(steps):
        last = n == len(steps) - 1
        out = processor.step(
            tokenizer.decode(step_ids), step_ids, "stop" if last else None, prompt_ids
        )
        if out.delta is not None:
            deltas.append(out.delta)
    return merge(deltas), deltas


def merge(deltas: list[Any]) -> Result:
    reasoning, content = [], []
    calls: dict[int, dict] = {}
    for delta in deltas:
        if delta.reasoning:
            reasoning.append(delta.reasoning)
        if delta.content:
            content.append(delta.content)
        for call in delta.tool_calls or ():
            slot = calls.setdefault(call.index, {"id": None, "name": None, "arguments": ""})
            if call.id and slot["id"] is None:
                slot["id"] = call.id
            if call.function is not None:
                if call.function.name:
                    slot["name"] = (slot["name"] or "") + call.function.name
                if call.function.arguments:
                    slot["arguments"] += call.function.arguments
    ordered = [calls[i] for i in sorted(calls)]
    return Result(
        "".join(reasoning) or None,
        "".join(content) or None,
        [{"name": c["name"], "arguments": json.loads(c["arguments"] or "null")} for c in ordered],
        [c["id"] for c in ordered],
    )
