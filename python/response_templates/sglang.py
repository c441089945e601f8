"""SGLang integration: a tool-call detector and a reasoning detector on this package's parser.

SGLang 0.5.23 picks a tool-call parser by name (``--tool-call-parser NAME``, a key of
``FunctionCallParser.ToolCallParserEnum``) and a reasoning parser by name
(``--reasoning-parser NAME``, a key of ``ReasoningParser.DetectorMap``). :func:`register` adds
this module's detectors under ``"response_templates"`` to both maps. SGLang calls it in every
process when the package declares it as a general plugin (entry point group
``sglang.srt.plugins``: ``response_templates = "response_templates.sglang:register"``);
without that, call it before SGLang parses its arguments, e.g. in a launcher script::

    import runpy, response_templates.sglang
    response_templates.sglang.register()
    runpy.run_module("sglang.launch_server", run_name="__main__")

and start the server with ``--tool-call-parser response_templates`` (and, for reasoning,
``--reasoning-parser response_templates``). The template is the model's: the tokenizer's
``response_template`` attribute or the ``response_template`` key of its
``tokenizer_config.json``. The environment variable ``RESPONSE_TEMPLATES_TEMPLATE`` overrides it
with a vendored template's name (``qwen3``) or a path (a template, a ``tokenizer_config.json``
or a model directory).

How the detectors read the output follows SGLang's own ``response_template`` detectors, which
the tests compare with: the tool detector parses the output with the template's
``tool_calls`` field alone (every other byte, delimiters included, is normal text, so text the
reasoning parser handed on parses the same as the whole output), and the reasoning detector
with the template's reasoning field alone (``thinking`` or ``reasoning_content``). Each
request stream has its own parser, fed with SGLang's increments; each call is reported once,
when its region closes, as ``ToolCallItem(tool_index=<call ordinal>, name, parameters=<JSON
arguments>)``.
"""

from __future__ import annotations

import functools
import json
import logging
import os
from typing import Any, Callable, Iterable

logger = logging.getLogger(__name__)

__all__ = [
    "PARSER_NAME",
    "TEMPLATE_ENV",
    "ResponseTemplatesReasoningDetector",
    "ResponseTemplatesToolDetector",
    "ResponseTemplatesGrammar",
    "ResponseTemplatesGrammarBackend",
    "TAG_FORMAT",
    "grammar_backend",
    "load_template",
    "register",
    "tool_template",
    "reasoning_template",
]

#: The name the detectors are registered under.
PARSER_NAME = "response_templates"
#: Environment variable naming the template (a vendored name or a path) for every request.
TEMPLATE_ENV = "RESPONSE_TEMPLATES_TEMPLATE"

_TOOL_FIELD = "tool_calls"
_REASONING_FIELDS = ("thinking", "reasoning_content", "reasoning")
# The field that takes every byte outside the kept field (it has no delimiters).
_PASSTHROUGH = "passthrough"


# ----------------------------------------------------------------------------------------------
# The parser: this package's native ResponseParser, lenient
# ----------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _compiled(template_json: str) -> Any:
    from response_templates import Template

    return Template.from_dict(json.loads(template_json))


def _parser(template: dict, prefix: str, tools: list[dict]) -> Any:
    """A lenient ``ResponseParser`` over ``template`` (compiled once per template): a malformed
    call is reported (``region_malformed``) instead of ending the stream, a call cut off by the
    end of the output is reported (``region_truncated``) instead of being run."""
    from response_templates import ResponseParser

    compiled = _compiled(json.dumps(template, sort_keys=True))
    return ResponseParser(compiled, prefix, tools=tools, lenient=True)


# ----------------------------------------------------------------------------------------------
# Templates
# ----------------------------------------------------------------------------------------------


def _bare(template: Any) -> dict:
    """The bare template dict of a dict, a ``tokenizer_config.json`` dict or a ``Template``."""
    if hasattr(template, "to_dict") and not isinstance(template, dict):
        template = template.to_dict()
    if isinstance(template, dict) and "response_template" in template and "fields" not in template:
        template = template["response_template"]
    if not isinstance(template, dict) or not isinstance(template.get("fields"), dict):
        raise ValueError(
            "a response template must be a dict with a 'fields' object (the 'response_template' "
            f"of tokenizer_config.json), not {type(template).__name__}"
        )
    return template


def _named_template(name: str) -> dict:
    """A vendored template's dict, or the template at a path (file or model directory)."""
    from response_templates import Template

    if os.path.isdir(name):
        return _bare(Template.from_pretrained(name))
    if os.path.exists(name):
        return _bare(Template.from_file(name))
    return _bare(Template.vendored(name))


def load_template(tokenizer: Any = None, template: Any = None) -> dict:
    """The response template a detector parses with, as a dict.

    In order: ``template`` (a dict, a ``Template``, or a vendored name or path), the
    ``RESPONSE_TEMPLATES_TEMPLATE`` environment variable (a vendored name or a path), the
    tokenizer's ``response_template`` attribute, the ``response_template`` of its
    ``init_kwargs`` (what ``tokenizer_config.json`` holds). Raises ValueError when there is none.
    """
    if template is not None:
        return _named_template(template) if isinstance(template, str) else _bare(template)
    named = os.environ.get(TEMPLATE_ENV)
    if named:
        return _named_template(named)
    if tokenizer is not None:
        found = getattr(tokenizer, "response_template", None)
        if not isinstance(found, dict):
            found = (getattr(tokenizer, "init_kwargs", None) or {}).get("response_template")
        if isinstance(found, dict):
            return _bare(found)
    raise ValueError(
        "no response template: the model's tokenizer has no 'response_template' (in "
        f"tokenizer_config.json); set {TEMPLATE_ENV} to a vendored template's name "
        "(response_templates.vendored_names()) or to a template file"
    )


def _kept_field_template(template: dict, name: str) -> dict:
    """``template`` with only the field ``name`` (optional) and a delimiter-less field taking
    every other byte of the output."""
    field = template["fields"][name]
    if "open" not in field and "open_pattern" not in field:
        raise ValueError(
            f"response template field {name!r} has no 'open' or 'open_pattern': the SGLang "
            "detectors need a delimiter that tells its regions from other text"
        )
    derived = {key: value for key, value in template.items() if key != "fields"}
    derived["fields"] = {name: {**field, "optional": True}, _PASSTHROUGH: {}}
    return derived


def tool_template(template: dict) -> dict:
    """The template the tool detector parses with: the ``tool_calls`` field alone, everything
    else passing through as normal text. Raises ValueError without a ``tool_calls`` field."""
    template = _bare(template)
    if _TOOL_FIELD not in template["fields"]:
        raise ValueError(
            f"response template has no {_TOOL_FIELD!r} field (fields: {sorted(template['fields'])})"
        )
    return _kept_field_template(template, _TOOL_FIELD)


def _reasoning_field(template: dict) -> str:
    for name in _REASONING_FIELDS:
        if name in template["fields"]:
            return name
    raise ValueError(
        "response template has no reasoning field (one of "
        f"{', '.join(_REASONING_FIELDS)}; fields: {sorted(template['fields'])})"
    )


def reasoning_template(template: dict) -> tuple[str, dict]:
    """The reasoning field's name and the template the reasoning detector parses with (that
    field alone, everything else passing through). Raises ValueError without one."""
    template = _bare(template)
    name = _reasoning_field(template)
    return name, _kept_field_template(template, name)


def _tool_dicts(tools: Iterable[Any] | None) -> list[dict]:
    """SGLang's ``Tool`` models (or dicts) as the dicts ``ResponseParser(tools=)`` takes."""
    result = []
    for tool in tools or []:
        if hasattr(tool, "model_dump"):
            tool = tool.model_dump()
        if isinstance(tool, dict):
            result.append(tool)
    return result


# ----------------------------------------------------------------------------------------------
# One request stream
# ----------------------------------------------------------------------------------------------


class _Stream:
    """One parser over one request's output, returning transformers' event dicts.

    Prompt text the parser held back as a possible delimiter when it read the prefix comes out
    of the parser with the first output; it is taken off again here (it is not output). After
    an error the parser cannot recover from (lenient mode reports malformed and cut-off regions
    as events; what is left is e.g. output cut inside a UTF-8 character) the stream stops
    parsing: the rest of the output passes through as ``passthrough`` chunks.
    """

    def __init__(self, template: dict, prefix: str, tools: list[dict]):
        self._parser = _parser(template, prefix or "", tools)
        self._held = _held_prompt_text(template, prefix, tools) if prefix else ""
        self.initial_events = list(self._parser.initial_events)
        self.failed = False
        self.finalized = False

    def feed(self, text: str) -> list[dict]:
        """The events of the next piece of output."""
        if self.finalized:
            return []
        if self.failed:
            return [_chunk(text)] if text else []
        try:
            return self._strip_held(self._parser.feed(text))
        except ValueError as error:
            logger.warning("response_templates: cannot parse the output any further: %s", error)
            self.failed = True
            return [_chunk(text)] if text else []

    def finalize(self) -> list[dict]:
        """The events of the end of the output (what the parser held back, regions it ends)."""
        if self.finalized:
            return []
        self.finalized = True
        if self.failed:
            return []
        try:
            _, events = self._parser.finalize()
        except ValueError as error:
            logger.warning("response_templates: the output's end does not parse: %s", error)
            self.failed = True
            return [{"type": "region_malformed", "field": None, "error": str(error), "text": ""}]
        return self._strip_held(events)

    def _strip_held(self, events: list[dict]) -> list[dict]:
        if not self._held:
            return events
        kept = []
        for event in events:
            if self._held and event.get("type") == "region_chunk":
                text = event["text"]
                if text.startswith(self._held):
                    text, self._held = text[len(self._held) :], ""
                elif self._held.startswith(text):
                    text, self._held = "", self._held[len(text) :]
                else:
                    self._held = ""
                if not text:
                    continue
                event = {**event, "text": text}
            kept.append(event)
        return kept


def _chunk(text: str) -> dict:
    return {"type": "region_chunk", "field": _PASSTHROUGH, "text": text, "dirty": False}


def _held_prompt_text(template: dict, prefix: str, tools: list[dict]) -> str:
    """The tail of ``prefix`` a parser keeps back after reading it: what a fresh parser emits
    before a NUL, a character no delimiter of the derived templates takes."""
    try:
        events = _parser(template, prefix, tools).feed("\0")
    except (ValueError, RuntimeError):
        return ""
    text = "".join(e["text"] for e in events if e.get("type") == "region_chunk")
    return text[:-1] if text.endswith("\0") else ""


def _parse_all(template: dict, prefix: str, tools: list[dict], text: str) -> list[dict]:
    stream = _Stream(template, prefix, tools)
    return stream.feed(text) + stream.finalize()


def _forward_unknown_tools() -> bool:
    try:
        from sglang.srt.environ import envs

        return bool(envs.SGLANG_FORWARD_UNKNOWN_TOOLS.get())
    except Exception:  # noqa: BLE001 - SGLang without its environ module: the default
        return False


def _calls_of(value: Any) -> list[tuple[str, str]]:
    """``(name, JSON arguments)`` of each well-formed call a tool region's value holds."""
    calls = []
    for item in value if isinstance(value, list) else [value]:
        function = item.get("function") if isinstance(item, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str) or "arguments" not in function:
            logger.warning("response_templates: malformed tool call value: %r", item)
            continue
        arguments = function["arguments"]
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        calls.append((name, arguments))
    return calls


# ----------------------------------------------------------------------------------------------
# The detectors
# ----------------------------------------------------------------------------------------------


def _sglang_classes():
    from sglang.srt.function_call.core_types import StreamingParseResult, ToolCallItem
    from sglang.srt.parser.response_template import (
        ResponseTemplateReasoningDetector,
        ResponseTemplateToolDetector,
    )

    return StreamingParseResult, ToolCallItem, ResponseTemplateToolDetector, ResponseTemplateReasoningDetector


def _make_tool_detector_class():
    StreamingParseResult, ToolCallItem, SGLangToolDetector, _ = _sglang_classes()
    from sglang.srt.function_call.base_format_detector import BaseFormatDetector

    class ResponseTemplatesToolDetector(SGLangToolDetector):
        """SGLang tool-call detector on this package's parser (``--tool-call-parser
        response_templates``).

        It subclasses SGLang's own ``ResponseTemplateToolDetector`` so that SGLang's serving code
        treats it as a response-template detector: it passes the prompt as ``prefix`` and keeps
        special tokens in the detokenized output. Everything that parses is this package's.
        """

        def __init__(
            self,
            tokenizer: Any = None,
            response_template: Any = None,
            prefix: str = "",
            tools: list | None = None,
            constrained: bool = False,
        ):
            BaseFormatDetector.__init__(self)
            self.response_template = load_template(tokenizer, response_template)
            self._template = tool_template(self.response_template)
            self._prefix = prefix or ""
            self._tools = tools
            self._constrained = constrained
            self._stream: _Stream | None = None
            self._tool_indices: dict[str, int] | None = None
            field = self.response_template["fields"][_TOOL_FIELD]
            close = field.get("close")
            self.tool_close_literals = [close] if isinstance(close, str) else list(close or [])
            if self.tool_close_literals:
                self.eot_token = self.tool_close_literals[0]
            # Calls are reported whole, so none is ever left half-streamed.
            self.incomplete_tool_call_indices: set[int] = set()

        # --- one-shot -----------------------------------------------------------------------

        def has_tool_call(self, text: str) -> bool:
            """Whether a ``tool_calls`` region opens in ``text``."""
            events = _parse_all(self._template, self._prefix, _tool_dicts(self._tools), text)
            return any(e["type"] == "region_open" and e.get("field") == _TOOL_FIELD for e in events)

        def detect_and_parse(self, text: str, tools: list) -> Any:
            """The calls and the normal text of a whole output."""
            events = _parse_all(self._template, self._prefix, _tool_dicts(tools), text)
            normal, calls = self._route(events, self._get_tool_indices(tools), first_index=0)
            return StreamingParseResult(
                normal_text=normal,
                calls=[ToolCallItem(tool_index=i, name=n, parameters=a) for i, n, a in calls],
            )

        # --- streaming ----------------------------------------------------------------------

        def parse_streaming_increment(self, new_text: str, tools: list) -> Any:
            """Feed the next increment; returns the normal text and the calls it completes."""
            if self._stream is None:
                self._stream = _Stream(self._template, self._prefix, _tool_dicts(tools))
            return self._emit(self._stream.feed(new_text), tools)

        def finish(self, tools: list) -> Any:
            """End of the stream: what the parser held back, and a call closed by the end."""
            if self._stream is None:
                self._stream = _Stream(self._template, self._prefix, _tool_dicts(tools))
            return self._emit(self._stream.finalize(), tools)

        def _emit(self, events: list[dict], tools: list) -> Any:
            if self._tool_indices is None:
                self._tool_indices = self._get_tool_indices(tools)
            first = max(self.current_tool_id, 0)
            normal, calls = self._route(events, self._tool_indices, first_index=first)
            items = []
            for index, name, arguments in calls:
                self.current_tool_id = index
                while len(self.prev_tool_call_arr) <= index:
                    self.prev_tool_call_arr.append({})
                    self.streamed_args_for_tool.append("")
                try:
                    parsed = json.loads(arguments)
                except json.JSONDecodeError:
                    parsed = arguments
                self.prev_tool_call_arr[index] = {"name": name, "arguments": parsed}
                self.streamed_args_for_tool[index] = arguments
                items.append(ToolCallItem(tool_index=index, name=name, parameters=arguments))
                self.current_tool_id = index + 1
            return StreamingParseResult(normal_text=normal, calls=items)

        def _route(
            self, events: list[dict], tool_indices: dict[str, int], first_index: int
        ) -> tuple[str, list[tuple[int, str, str]]]:
            normal: list[str] = []
            calls: list[tuple[int, str, str]] = []
            forward = None
            for event in events:
                kind, field = event["type"], event.get("field")
                if field != _TOOL_FIELD:
                    if kind == "region_chunk":
                        normal.append(event["text"])
                elif kind == "region_close":
                    for name, arguments in _calls_of(event["value"]):
                        if name not in tool_indices:
                            if forward is None:
                                forward = _forward_unknown_tools()
                            logger.warning("Model attempted to call undefined function: %s", name)
                            if not forward:
                                continue
                        calls.append((first_index + len(calls), name, arguments))
                elif kind in ("region_malformed", "region_truncated"):
                    logger.warning("response_templates: dropping a %s tool call", kind[7:])
            return "".join(normal), calls

        # --- what SGLang's serving code asks a response-template detector -------------------

        def open_call_closer(self, text: str) -> str | None:
            """The closer of a call that ``text`` leaves open at its end, if the closer is a
            literal."""
            if not self.tool_close_literals:
                return None
            stream = _Stream(self._template, self._prefix, _tool_dicts(self._tools))
            state = None
            for event in stream.feed(text):
                if event.get("field") == _TOOL_FIELD and event["type"] != "region_chunk":
                    state = event["type"]
            return self.tool_close_literals[0] if state == "region_open" else None

        # --- constrained tool calls, through this package's grammar backend -----------------

        def supports_structural_tag(self) -> bool:
            """True when the server runs ``--grammar-backend response_templates``: then
            ``tool_choice`` required or named (and strict tools) are constrained by the
            template's own grammar, and SGLang parses such output with this detector."""
            return _grammar_backend_active()

        def validate_structure_constraint_request(
            self,
            tool_choice: Any,
            parallel_tool_calls: bool,
            strict_requested: bool,
            *,
            tools: list,
            thinking_mode: bool = False,
        ) -> Any:
            """The structural tag for this request's calls (read by this package's grammar
            backend), or None to leave ``tool_choice="auto"`` unconstrained. Raises ValueError
            for what cannot be enforced: ``parallel_tool_calls=False``, or any constraint
            when the grammar backend is not this package's."""
            constrain = tool_choice != "auto" or strict_requested
            if tool_choice == "none" or not constrain:
                return None
            if not _grammar_backend_active():
                raise ValueError(
                    f"--tool-call-parser {PARSER_NAME} constrains tool_choice 'required', a named "
                    f"tool or strict tools only with --grammar-backend {PARSER_NAME}"
                )
            if not parallel_tool_calls:
                raise ValueError(f"{PARSER_NAME} cannot enforce parallel_tool_calls=False")
            return _Tag(_tool_dicts(tools), _tool_choice_arg(tool_choice))

        def get_structural_tag(self, tools: list | None = None, tool_choice: Any = "auto", **_kwargs: Any) -> None:
            """None: unconstrained turns take no grammar (SGLang then leaves them free)."""
            return None

        def structure_info(self) -> Any:
            """Not used: a response template's delimiters (patterns, several closers) do not
            fit SGLang's begin/end/trigger structures; the structural tag comes from
            ``validate_structure_constraint_request``."""
            raise NotImplementedError(
                f"{PARSER_NAME}: tool calls are constrained by the template's own grammar "
                "(validate_structure_constraint_request), not by begin/end structures"
            )

    return ResponseTemplatesToolDetector


def _make_reasoning_detector_class():
    _, _, _, SGLangReasoningDetector = _sglang_classes()
    from sglang.srt.parser.reasoning_parser import StreamingParseResult

    class ResponseTemplatesReasoningDetector(SGLangReasoningDetector):
        """SGLang reasoning detector on this package's parser (``--reasoning-parser
        response_templates``): the reasoning field's text is reasoning, every other byte
        (calls included, for the tool detector after it) is normal text."""

        def __init__(
            self,
            stream_reasoning: bool = True,
            tokenizer: Any = None,
            response_template: Any = None,
            prefix: str = "",
            force_nonempty_content: bool = False,
            grammar_start: str | None = None,
            tools: list | None = None,
            constrained: bool = False,
            **_ignored: Any,
        ):
            self.response_template = load_template(tokenizer, response_template)
            self._field, self._template = reasoning_template(self.response_template)
            field = self.response_template["fields"][self._field]
            self.stream_reasoning = stream_reasoning
            self.think_start_token = field["open"] if isinstance(field.get("open"), str) else ""
            close = field.get("close")
            self.think_end_token = close if isinstance(close, str) else (close or [""])[0]
            self.think_excluded_tokens = None
            self.message_start_think_openers = []
            self.think_start_self_label = ""
            self.answer_started = False
            self._prefix = prefix or ""
            self._tools = tools
            self._force_nonempty_content = force_nonempty_content
            if grammar_start is not None:
                logger.warning(
                    "response_templates: JSON output after the reasoning (grammar_start=%r) is "
                    "parsed as normal text", grammar_start
                )
            self._stream: _Stream | None = None
            self._pending = ""
            self._open_reasoning = ""

        def _new_stream(self) -> _Stream:
            return _Stream(self._template, self._prefix, _tool_dicts(self._tools))

        def detect_and_parse(self, text: str) -> Any:
            """Reasoning and normal text of a whole output."""
            stream = self._new_stream()
            reasoning, normal = self._route(stream.feed(text) + stream.finalize(), True)
            if self._force_nonempty_content and not normal:
                reasoning, normal = "", reasoning
            return StreamingParseResult(normal_text=normal, reasoning_text=reasoning)

        def parse_streaming_increment(self, new_text: str) -> Any:
            """Feed the next increment; returns its reasoning and normal text."""
            if self._stream is None:
                self._stream = self._new_stream()
            reasoning, normal = self._route(self._stream.feed(new_text), self.stream_reasoning)
            return StreamingParseResult(normal_text=normal, reasoning_text=reasoning)

        def finish(self) -> Any:
            """End of the stream; under ``force_nonempty_content`` reasoning left open is
            returned as normal text."""
            if self._stream is None:
                self._stream = self._new_stream()
            reasoning, normal = self._route(self._stream.finalize(), self.stream_reasoning)
            if self._force_nonempty_content and self._open_reasoning:
                normal, reasoning = normal + reasoning, ""
            return StreamingParseResult(normal_text=normal, reasoning_text=reasoning)

        def _route(self, events: list[dict], stream_reasoning: bool) -> tuple[str, str]:
            reasoning: list[str] = []
            normal: list[str] = []
            for event in events:
                kind = event["type"]
                if event.get("field") == self._field:
                    if kind == "region_chunk":
                        self._open_reasoning += event["text"]
                        if stream_reasoning:
                            reasoning.append(event["text"])
                        else:
                            self._pending += event["text"]
                    elif kind in ("region_close", "region_malformed", "region_truncated"):
                        self._open_reasoning = ""
                        if not stream_reasoning:
                            reasoning.append(self._pending)
                            self._pending = ""
                elif kind == "region_chunk":
                    normal.append(event["text"])
            return "".join(reasoning), "".join(normal)

        # What SGLang's serving code asks a response-template reasoning detector; this one
        # leaves constrained output to the grammar backend and never skips the reasoning.
        def starts_message(self, prefix: str) -> bool:
            """False: the prompt is never taken as the start of the assistant message."""
            return False

        def answer_opener(self, prefix: str) -> str:
            """No answer opener is added to continued messages."""
            return ""

        def json_output_started(self, text: str) -> bool:
            """False: there is no JSON-schema output section to find."""
            return False

    return ResponseTemplatesReasoningDetector


# ----------------------------------------------------------------------------------------------
# The grammar backend (``--grammar-backend response_templates``)
# ----------------------------------------------------------------------------------------------

#: The ``format.type`` of the structural tag the tool detector asks the grammar backend for.
TAG_FORMAT = "response_templates"


def _grammar_backend_active() -> bool:
    """Whether this server constrains with this package's grammar backend (the structural tag
    the tool detector reports is read by no other backend)."""
    try:
        from sglang.srt.runtime_context import get_exec

        return get_exec().kernel.grammar_backend == PARSER_NAME
    except Exception:  # noqa: BLE001 - no runtime context (a detector made outside a server)
        return False


class _Tag:
    """The structural tag the tool detector reports: SGLang's serving code serializes it with
    ``model_dump(by_alias=True)`` into the request's ``structural_tag``, which reaches the
    grammar backend's ``dispatch_structural_tag`` unchanged."""

    def __init__(self, tools: list[dict], tool_choice: Any):
        self.tools, self.tool_choice = tools, tool_choice

    def model_dump(self, **_kwargs: Any) -> dict:
        return {
            "type": "structural_tag",
            "format": {"type": TAG_FORMAT, "tools": self.tools, "tool_choice": self.tool_choice},
        }


def _tool_choice_arg(tool_choice: Any) -> Any:
    """SGLang's ``tool_choice`` (a string or a ``ToolChoice`` model) as ``Matcher`` takes it."""
    if isinstance(tool_choice, str) or tool_choice is None:
        return tool_choice or "auto"
    if hasattr(tool_choice, "model_dump"):
        tool_choice = tool_choice.model_dump()
    name = (tool_choice.get("function") or {}).get("name") if isinstance(tool_choice, dict) else None
    if not isinstance(name, str):
        raise ValueError(f"tool_choice: expected 'auto', 'required', 'none' or a named function, got {tool_choice!r}")
    return {"type": "function", "function": {"name": name}}


def _real_torch() -> Any:
    """The torch module when a real one is installed (not a stand-in without ``__file__``)."""
    try:
        import torch
    except ImportError:
        return None
    return torch if getattr(torch, "__file__", None) else None


def _numpy_rows(vocab_mask: Any) -> Any:
    """A writable numpy view of a mask: the array itself, or a CPU tensor's memory."""
    if type(vocab_mask).__module__.startswith("torch") and hasattr(vocab_mask, "numpy"):
        if vocab_mask.device.type != "cpu":
            raise ValueError("response_templates: vocab masks are filled on the CPU (allocate_vocab_mask makes them there)")
        return vocab_mask.numpy()
    return vocab_mask


def _make_grammar_classes():
    from sglang.srt.constrained.base_grammar_backend import (
        BaseGrammarBackend,
        BaseGrammarObject,
        InvalidGrammarObject,
    )

    from response_templates import masks

    class ResponseTemplatesGrammar(BaseGrammarObject):
        """One request's grammar: a ``response_templates.Matcher`` over the whole response
        (reasoning, content, tool calls) of the model's template. Masks are int32
        ``[batch, ceil(vocab_size / 32)]`` arrays (numpy; with torch installed, CPU tensors
        sharing the numpy memory, moved to the logits' device by ``move_vocab_mask``)."""

        def __init__(self, matcher: Any, key_string: str = ""):
            super().__init__()
            self.matcher = matcher
            self.key_string = key_string

        def accept_token(self, token: int) -> None:
            """Move past ``token``; ValueError if the grammar does not allow it here."""
            if self.is_terminated():
                return
            self.current_token = token
            if not self.matcher.consume_token(int(token)):
                raise ValueError(f"response_templates: token {token} is not allowed here (grammar {self.key_string[:200]!r})")

        def rollback(self, k: int) -> None:
            self.matcher.rollback(k)

        def is_terminated(self) -> bool:
            return bool(self.matcher.is_stopped())

        def allocate_vocab_mask(self, vocab_size: int, batch_size: int, device: Any) -> Any:
            array = masks.allocate_token_bitmask(batch_size, vocab_size)
            torch = _real_torch()
            return torch.from_numpy(array) if torch is not None else array

        def fill_vocab_mask(self, vocab_mask: Any, idx: int) -> None:
            self.matcher.fill_next_token_bitmask(_numpy_rows(vocab_mask), idx)

        @staticmethod
        def fill_vocab_mask_batched(entries: list, vocab_mask: Any) -> None:
            """Fills the listed rows at once (masks not cached yet are computed without the GIL)."""
            masks.fill_next_token_bitmask_batch(
                [entry.grammar.matcher for entry in entries],
                _numpy_rows(vocab_mask),
                [entry.row for entry in entries],
            )

        @staticmethod
        def reset_vocab_mask(vocab_mask: Any) -> None:
            _numpy_rows(vocab_mask)[...] = -1

        @staticmethod
        def move_vocab_mask(vocab_mask: Any, device: Any) -> Any:
            if type(vocab_mask).__module__.startswith("torch"):
                return vocab_mask.to(device, non_blocking=True)
            return vocab_mask

        @staticmethod
        def apply_vocab_mask(logits: Any, vocab_mask: Any) -> None:
            masks.apply_token_bitmask_inplace(logits, vocab_mask)

        def copy(self) -> "ResponseTemplatesGrammar":
            """A grammar at the start (SGLang copies the cached grammar for each request)."""
            matcher = self.matcher.copy()
            matcher.reset()
            return ResponseTemplatesGrammar(matcher, self.key_string)

        def try_jump_forward(self, tokenizer: Any) -> None:
            return None

    class ResponseTemplatesGrammarBackend(BaseGrammarBackend):
        """SGLang grammar backend on ``response_templates.Matcher``: serves ``json`` keys (a
        JSON Schema, the answer of the model's template: reasoning and the template's framing
        stay allowed) and the structural tag the ``response_templates`` tool detector reports
        (``tool_choice`` required, named, or strict tools). Regex and EBNF keys, and other
        structural tags, are refused with a message saying so."""

        def __init__(self, tokenizer: Any, vocab_size: int, eos_token_ids: Any = None):
            super().__init__()
            self.template = load_template(tokenizer)
            self.vocabulary = masks.load_vocabulary(tokenizer)
            self.vocab_size = vocab_size

        def _grammar(self, key_string: str, **request: Any) -> Any:
            try:
                matcher = masks.Matcher(self.template, self.vocabulary, **request)
            except (ValueError, TypeError) as error:
                return InvalidGrammarObject(f"response_templates: {error}")
            return ResponseTemplatesGrammar(matcher, key_string)

        def dispatch_json(self, key_string: str) -> Any:
            try:
                schema = json.loads(key_string)
            except ValueError as error:
                return InvalidGrammarObject(f"response_templates: the JSON schema is not JSON: {error}")
            if schema == {"type": "object"} or key_string.strip() == "$$ANY$$":
                response_format = {"type": "json_object"}
            else:
                response_format = {"type": "json_schema", "json_schema": {"name": "response", "schema": schema}}
            return self._grammar(key_string, response_format=response_format)

        def dispatch_structural_tag(self, key_string: str) -> Any:
            try:
                tag = json.loads(key_string)
            except ValueError as error:
                return InvalidGrammarObject(f"response_templates: the structural tag is not JSON: {error}")
            tag_format = tag.get("format") if isinstance(tag, dict) else None
            if not isinstance(tag_format, dict) or tag_format.get("type") != TAG_FORMAT:
                return InvalidGrammarObject(
                    "response_templates: this grammar backend serves only the structural tag of "
                    f"--tool-call-parser {PARSER_NAME} (format type {TAG_FORMAT!r}) and JSON schemas"
                )
            return self._grammar(key_string, tools=tag_format.get("tools") or [], tool_choice=tag_format.get("tool_choice") or "auto")

        def dispatch_regex(self, key_string: str) -> Any:
            return InvalidGrammarObject("response_templates: regex constraints are not supported (use xgrammar or llguidance)")

        def dispatch_ebnf(self, key_string: str) -> Any:
            return InvalidGrammarObject("response_templates: EBNF constraints are not supported (use xgrammar or llguidance)")

    return ResponseTemplatesGrammar, ResponseTemplatesGrammarBackend


def grammar_backend(server_args: Any, tokenizer: Any, vocab_size: int, eos_token_ids: Any = None) -> Any:
    """The factory SGLang's ``create_grammar_backend`` calls for ``--grammar-backend
    response_templates`` (registered by :func:`register`)."""
    return _classes()["grammar_backend"](tokenizer, vocab_size, eos_token_ids)


@functools.lru_cache(maxsize=None)
def _classes() -> dict:
    return {
        "tool": _make_tool_detector_class(),
        "reasoning": _make_reasoning_detector_class(),
        **dict(zip(("grammar", "grammar_backend"), _make_grammar_classes())),
    }


def __getattr__(name: str) -> Any:
    # The detector classes subclass SGLang's, so they exist only once SGLang imports.
    if name == "ResponseTemplatesToolDetector":
        return _classes()["tool"]
    if name == "ResponseTemplatesReasoningDetector":
        return _classes()["reasoning"]
    if name == "ResponseTemplatesGrammar":
        return _classes()["grammar"]
    if name == "ResponseTemplatesGrammarBackend":
        return _classes()["grammar_backend"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def register(name: str = PARSER_NAME) -> None:
    """Make the detectors available to SGLang under ``name``.

    Adds the tool detector to ``FunctionCallParser.ToolCallParserEnum``, the reasoning
    detector to ``ReasoningParser.DetectorMap`` and the grammar backend to SGLang's registry
    and ``--grammar-backend`` choices, so that ``--tool-call-parser NAME``,
    ``--reasoning-parser NAME`` and ``--grammar-backend NAME`` accept them (SGLang's argument parser lists the maps' keys once
    these modules are imported). Idempotent. This is the function SGLang's plugin loader calls.
    """
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    from sglang.srt.arg_groups.choices import GRAMMAR_BACKEND_CHOICES
    from sglang.srt.constrained.base_grammar_backend import register_grammar_backend

    FunctionCallParser.ToolCallParserEnum[name] = _classes()["tool"]
    ReasoningParser.DetectorMap[name] = _classes()["reasoning"]
    register_grammar_backend(name, grammar_backend)
    if name not in GRAMMAR_BACKEND_CHOICES:
        GRAMMAR_BACKEND_CHOICES.append(name)
