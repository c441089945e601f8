"""vLLM tool parser and reasoning parser driven by a response template.

Load it into vLLM (0.33 interfaces) with either flag pair; the module registers the parsers
under the names ``response_templates`` (tool parser) and ``response_templates`` (reasoning
parser), which do not clash with vLLM's own ``hf`` parsers::

    vllm serve MODEL \\
        --tool-parser-plugin response_templates.vllm --tool-call-parser response_templates \\
        --enable-auto-tool-choice \\
        --reasoning-parser-plugin response_templates.vllm --reasoning-parser response_templates

``--tool-parser-plugin`` / ``--reasoning-parser-plugin`` take a module name (as here) or a file
path: give the path of ``vllm_plugin.py`` beside this file, never of this file (vLLM imports a
file under its base name, and ``vllm`` would replace vLLM itself). Importing registers both parsers with vLLM's ``ToolParserManager`` and
``ReasoningParserManager``. The package also declares the entry point
``response_templates = response_templates.vllm:register`` in the ``vllm.general_plugins`` group,
which vLLM loads in every process it starts, so with the package installed the ``--*-plugin``
flags are optional.

Which template: the environment variable ``RESPONSE_TEMPLATES_VLLM_TEMPLATE`` (a vendored template
name such as ``qwen3``, or the path of a template JSON file or of a ``tokenizer_config.json``);
when it is unset, the tokenizer's ``response_template`` (``tokenizer_config.json``), as vLLM's
``hf`` parsers read it. An environment variable, because vLLM gives plugins no options of their
own and starts its engine processes with the server's environment.

Where fields go: ``thinking``, ``reasoning_content`` and ``reasoning`` are reasoning; ``content`` is
content; ``tool_calls`` are tool calls. Any other field (vLLM's ``hf`` parser refuses templates with
one) goes to content when its content parser is ``text``, and is dropped otherwise; set
``RESPONSE_TEMPLATES_VLLM_FIELDS`` to ``name=target,...`` (target ``content``, ``reasoning`` or
``drop``) to route fields yourself.

Both parsers of one request share one streaming :class:`ResponseParser` over the whole output
(the prompt is its prefix), so each delta is parsed once, whichever of the two vLLM calls.

How outputs are read: as transformers (and vLLM's ``hf`` parser) reads them, byte for byte,
while that reading succeeds. When it fails (a call's JSON does not parse, a close delimiter
inside a JSON string), the request does not fail: the output so far is read again in the
native package's lenient mode (README "Lenient mode": a malformed region's text goes to the
content, a close delimiter inside a JSON string does not end a call, a call cut off by the end
is left out and its text kept as content), and what that reading has beyond what was already
sent is sent. Without the native package (``use_backend`` with transformers' parser) the rest
of such an output is content.
"""

from __future__ import annotations

if __name__ == "vllm":  # loaded by file path: vLLM named this module after the file
    raise ImportError(
        "load the response_templates vLLM plugin by module name (--tool-parser-plugin "
        "response_templates.vllm) or through the file vllm_plugin.py beside this one: vLLM "
        "imports a plugin file under its base name, and this file's would replace vLLM"
    )

import copy
import json
import logging
import os
import threading
import weakref
from collections.abc import Iterable, Sequence
from typing import Any

from vllm.entrypoints.generate.base.protocol import (
    DeltaFunctionCall,
    DeltaMessage,
    DeltaToolCall,
    ExtractedToolCallInformation,
    FunctionCall,
    ToolCall,
)
from vllm.reasoning.abs_reasoning_parsers import ReasoningParser, ReasoningParserManager
from vllm.renderers.chat_utils import make_tool_call_id
from vllm.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager

__all__ = [
    "PARSER_NAME",
    "TEMPLATE_ENV",
    "FIELDS_ENV",
    "LOGITS_PROCESSOR_ENV",
    "EXTRA_ARGS_KEY",
    "constraint_extra_args",
    "logits_processor_active",
    "ResponseTemplateToolParser",
    "ResponseTemplateReasoningParser",
    "register",
    "use_backend",
]

logger = logging.getLogger(__name__)

#: The name both parsers are registered under (``--tool-call-parser`` / ``--reasoning-parser``).
PARSER_NAME = "response_templates"
#: Environment variable naming the template: a vendored name or a JSON file.
TEMPLATE_ENV = "RESPONSE_TEMPLATES_VLLM_TEMPLATE"
#: Environment variable routing fields: ``name=content|reasoning|drop,...``.
FIELDS_ENV = "RESPONSE_TEMPLATES_VLLM_FIELDS"
#: Environment variable: ``1`` when the engine runs :mod:`response_templates.vllm_logits`
#: (given by ``--logits-processors``), ``0`` to refuse guarantees although it is installed.
LOGITS_PROCESSOR_ENV = "RESPONSE_TEMPLATES_VLLM_LOGITS_PROCESSOR"
#: ``SamplingParams.extra_args`` key of a request's constraint (read by vllm_logits.py).
EXTRA_ARGS_KEY = "response_templates"
_LOGITS_PROCESSOR_MODULE = "response_templates.vllm_logits"

_REASONING_FIELDS = frozenset({"thinking", "reasoning_content", "reasoning"})
_TARGETS = frozenset({"content", "reasoning", "tool_calls", "drop"})
_STREAMED_CONTENT = frozenset({None, "text"})


# --------------------------------------------------------------------------------------------
# Backend: the package's native parser, or another object with the same API (tests use
# transformers' own `chat_parsing` while the native module is not built).
# --------------------------------------------------------------------------------------------


class _Backend:
    """A ``ResponseParser`` implementation and a way to compile a template dict for it."""

    def __init__(
        self, response_parser: Any, compile_template: Any, vendored: Any = None, lenient: bool = False
    ) -> None:
        self.response_parser = response_parser
        self.compile_template = compile_template
        self.vendored = vendored
        # lenient=True: the backend has a lenient mode (the native package's), used once an
        # output fails the reference's reading (see _Stream).
        self.lenient = lenient

    def parser(self, template: Any, prefix: str, tools: list[dict], lenient: bool = False) -> Any:
        """A streaming parser over one output (``lenient`` only when the backend has it)."""
        if lenient and self.lenient:
            return self.response_parser(template, prefix=prefix, tools=tools, lenient=True)
        return self.response_parser(template, prefix=prefix, tools=tools)


_backend: _Backend | None = None
_backend_lock = threading.Lock()


def use_backend(response_parser: Any, compile_template: Any = None, vendored: Any = None) -> None:
    """Parse with another implementation of the transformers ``ResponseParser`` API.

    ``response_parser(template, prefix=..., tools=...)`` must behave as
    ``transformers.utils.chat_parsing.ResponseParser``; ``compile_template(dict)`` turns a
    template dict into what it accepts (default: the dict itself); ``vendored(name)`` returns
    a vendored template dict (default: none). Pass ``None`` to go back to the native package.
    """
    global _backend
    with _backend_lock:
        if response_parser is None:
            _backend = None
        else:
            _backend = _Backend(response_parser, compile_template or (lambda d: d), vendored)
        _compiled.clear()


def _get_backend() -> _Backend:
    global _backend
    with _backend_lock:
        if _backend is None:
            try:
                from response_templates import ResponseParser, Template
            except ImportError as exc:  # the native module is missing or broken
                raise ImportError(
                    "response_templates.vllm needs the native response_templates package "
                    f"(pip install response_templates): {exc}"
                ) from exc
            _backend = _Backend(
                ResponseParser,
                Template.from_dict,
                lambda name: Template.vendored(name).to_dict(),
                lenient=True,
            )
        return _backend


# --------------------------------------------------------------------------------------------
# Template resolution and the serving form of a template
# --------------------------------------------------------------------------------------------


def _template_from_env(value: str) -> dict:
    if os.path.isfile(value):
        try:
            with open(value, encoding="utf-8") as file:
                data = json.load(file)
        except (OSError, ValueError) as exc:
            raise ValueError(f"{TEMPLATE_ENV}={value!r}: cannot read the template: {exc}") from exc
        if isinstance(data, dict) and isinstance(data.get("response_template"), dict):
            data = data["response_template"]
        if not isinstance(data, dict) or "fields" not in data:
            raise ValueError(
                f"{TEMPLATE_ENV}={value!r}: the file is neither a response template nor a "
                "tokenizer_config.json with a response_template"
            )
        return data
    backend = _get_backend()
    if backend.vendored is None:
        raise ValueError(
            f"{TEMPLATE_ENV}={value!r} is not a file, and the parser backend has no vendored "
            "templates"
        )
    try:
        return backend.vendored(value)
    except (KeyError, ValueError) as exc:
        raise ValueError(
            f"{TEMPLATE_ENV}={value!r} is neither a file nor a vendored template name: {exc}"
        ) from exc


def _template_from_tokenizer(tokenizer: Any) -> dict | None:
    if tokenizer is None:
        return None
    template = getattr(tokenizer, "response_template", None)
    if not isinstance(template, dict):
        template = (getattr(tokenizer, "init_kwargs", None) or {}).get("response_template")
    return template if isinstance(template, dict) else None


def _resolve_template(tokenizer: Any) -> dict:
    """The template this server parses with: the env variable's, else the tokenizer's."""
    value = os.environ.get(TEMPLATE_ENV, "").strip()
    if value:
        return _template_from_env(value)
    template = _template_from_tokenizer(tokenizer)
    if template is None:
        raise ValueError(
            f"the {PARSER_NAME} parsers need a response template: the tokenizer has no "
            f"`response_template` (tokenizer_config.json); set {TEMPLATE_ENV} to a vendored "
            "template name or to the path of a template JSON file"
        )
    return template


def _parse_routes(value: str) -> dict[str, str]:
    routes: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in value.split(","))):
        name, sep, target = item.partition("=")
        name, target = name.strip(), target.strip()
        if not sep or not name or target not in _TARGETS:
            raise ValueError(
                f"{FIELDS_ENV}: {item!r} is not `field=target` with target one of "
                f"{sorted(_TARGETS)}"
            )
        routes[name] = target
    return routes


class _Spec:
    """A template prepared for serving: compiled once, with each field's destination."""

    def __init__(self, template: dict) -> None:
        serving = copy.deepcopy(template)
        fields = serving.get("fields")
        if not isinstance(fields, dict) or not fields:
            raise ValueError("response template has no `fields`")
        # Serving must not fail a whole response because the model skipped a field.
        for field in fields.values():
            if isinstance(field, dict):
                field["optional"] = True
        routes = _parse_routes(os.environ.get(FIELDS_ENV, ""))
        unknown = sorted(set(routes) - set(fields))
        if unknown:
            raise ValueError(f"{FIELDS_ENV} names fields the template does not have: {unknown}")
        self.fields = list(fields)
        self.target: dict[str, str] = {}
        self.streamed: dict[str, bool] = {}
        self.join: dict[str, str | None] = {}
        for name, field in fields.items():
            field = field if isinstance(field, dict) else {}
            content = field.get("content")
            if name in routes:
                target = routes[name]
            elif name == "tool_calls":
                target = "tool_calls"
            elif name in _REASONING_FIELDS:
                target = "reasoning"
            elif name == "content" or content in _STREAMED_CONTENT:
                target = "content"
            else:
                target = "drop"
            self.target[name] = target
            self.streamed[name] = content in _STREAMED_CONTENT and field.get("transform") is None
            join = field.get("join")
            self.join[name] = join if isinstance(join, str) else None
        self.implicit = next(
            (
                name
                for name, field in fields.items()
                if isinstance(field, dict) and "open" not in field and "open_pattern" not in field
            ),
            None,
        )
        self.has_reasoning = any(t == "reasoning" for t in self.target.values())
        self.compiled = _get_backend().compile_template(serving)


_compiled: dict[str, _Spec] = {}
_compiled_lock = threading.Lock()


def _spec_for(tokenizer: Any) -> _Spec:
    template = _resolve_template(tokenizer)
    key = json.dumps(
        [template, os.environ.get(FIELDS_ENV, "")], sort_keys=True, ensure_ascii=False
    )
    with _compiled_lock:
        spec = _compiled.get(key)
        if spec is None:
            spec = _compiled[key] = _Spec(template)
        return spec


# --------------------------------------------------------------------------------------------
# One request's stream: events -> delta parts
# --------------------------------------------------------------------------------------------


def _decode(tokenizer: Any, token_ids: Sequence[int]) -> str:
    """Token ids as text with special tokens kept (templates match them)."""
    if not token_ids:
        return ""
    try:
        return tokenizer.decode(
            list(token_ids),
            skip_special_tokens=False,
            clean_up_tokenization_spaces=False,
            spaces_between_special_tokens=False,
        )
    except TypeError:
        return tokenizer.decode(list(token_ids), skip_special_tokens=False)


def _tool_dicts(tools: Iterable[Any] | None) -> list[dict]:
    """Request tools as the ``{"type": "function", "function": {...}}`` dicts parsers take."""
    out = []
    for tool in tools or ():
        if hasattr(tool, "model_dump"):
            tool = tool.model_dump(exclude_none=True)
        if not isinstance(tool, dict):
            continue
        if isinstance(tool.get("function"), dict):
            out.append(tool)
        elif isinstance(tool.get("name"), str):  # Responses API function tool
            function = {k: tool[k] for k in ("name", "description", "parameters") if k in tool}
            out.append({"type": "function", "function": function})
    return out


def _calls_of(value: Any) -> list[tuple[str, str, str | None]]:
    """``(name, arguments JSON, id)`` of each call of a closed tool region; nothing if any
    call lacks a name or arguments (as vLLM's ``hf`` parser)."""
    calls = []
    for item in value if isinstance(value, list) else [value]:
        function = item.get("function") if isinstance(item, dict) else None
        if not isinstance(function, dict):
            return []
        name, arguments = function.get("name"), function.get("arguments")
        if not isinstance(name, str) or not name or arguments is None:
            return []
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        call_id = item.get("id")
        calls.append((name, arguments, call_id if isinstance(call_id, str) and call_id else None))
    return calls


class _Parts:
    """What one feed produced, before it becomes a ``DeltaMessage``."""

    __slots__ = ("reasoning", "content", "tool_calls")

    def __init__(self) -> None:
        self.reasoning: list[str] = []
        self.content: list[str] = []
        self.tool_calls: list[DeltaToolCall] = []

    def extend(self, other: _Parts) -> None:
        self.reasoning += other.reasoning
        self.content += other.content
        self.tool_calls += other.tool_calls

    def message(self, *, reasoning: bool = True) -> DeltaMessage | None:
        fields: dict[str, Any] = {}
        if reasoning and (text := "".join(self.reasoning)):
            fields["reasoning"] = text
        if text := "".join(self.content):
            fields["content"] = text
        if self.tool_calls:
            fields["tool_calls"] = list(self.tool_calls)
        return DeltaMessage(**fields) if fields else None


class _Stream:
    """One generation parsed by one ``ResponseParser`` and routed into delta parts."""

    def __init__(
        self,
        spec: _Spec,
        *,
        prefix: str,
        tools: list[dict],
        parse_reasoning: bool,
        parse_tools: bool,
    ) -> None:
        self.spec = spec
        self.parse_reasoning = parse_reasoning
        self.parse_tools = parse_tools
        self.prefix, self.tools = prefix, tools
        self.finished = False
        self.failed = False
        self.lenient = False
        self.fed: list[str] = []  # the output so far (replayed on the switch to lenient mode)
        # What went out so far: reasoning and content lengths, calls (for the switch).
        self.sent_reasoning, self.sent_content = "", ""
        self.sent_calls = 0
        # Prompt text the parser held back as a possible delimiter comes out with the first
        # chunk of output; it belongs to the prompt, so it is cut from that chunk.
        self.held_prefix = _held_prefix_text(spec, prefix, tools) if prefix else ""
        try:
            self._start(lenient=False)
        except (ValueError, RuntimeError):
            if not _get_backend().lenient:
                raise
            self._start(lenient=True)  # the prompt itself breaks the reference's reading

    def _start(self, lenient: bool) -> None:
        self.parser = _get_backend().parser(self.spec.compiled, self.prefix, self.tools, lenient)
        self.lenient = lenient
        self.next_tool_index = 0
        self.open_field: str | None = None
        self.opened_text = False  # the open region has produced text
        self.closed: dict[str, int] = {}
        self.reasoning_ended = not self.spec.has_reasoning
        self.held = self.held_prefix
        self._track(self.parser.initial_events)

    # -- state ------------------------------------------------------------------------------

    def _track(self, events: Iterable[dict]) -> None:
        for event in events:
            field, kind = event.get("field"), event.get("type")
            is_reasoning = self.spec.target.get(field) == "reasoning"
            if kind == "region_open":
                self.open_field, self.opened_text = field, False
            elif kind == "region_chunk":
                self.opened_text = True
                # (a NUL is the probe of _reasoning_ended_in_prefix, not text)
                if not is_reasoning and event.get("text", "").replace("\0", "").strip():
                    self.reasoning_ended = True
            elif kind in ("region_close", "region_malformed", "region_truncated"):
                self.closed[field] = self.closed.get(field, 0) + 1
                self.open_field = None
                if is_reasoning or self.spec.target.get(field) == "tool_calls":
                    self.reasoning_ended = True

    # -- feeding ----------------------------------------------------------------------------

    def feed(self, text: str) -> _Parts:
        parts = _Parts()
        if self.finished or not text:
            return parts
        if self.failed:
            parts.content.append(text)
            return parts
        try:
            events = self.parser.feed(text)
        except (ValueError, RuntimeError) as exc:
            parts = self._to_lenient(exc, text, finish=False)
        else:
            self.fed.append(text)
            self._route(events, parts)
        return self._sent(parts)

    def finish(self) -> _Parts:
        parts = _Parts()
        if self.finished:
            return parts
        self.finished = True
        if self.failed:
            return parts
        try:
            _message, events = self.parser.finalize()
        except (ValueError, RuntimeError) as exc:
            parts = self._to_lenient(exc, "", finish=True)
        else:
            self._route(events, parts)
        return self._sent(parts)

    def _sent(self, parts: _Parts) -> _Parts:
        self.sent_reasoning += "".join(parts.reasoning)
        self.sent_content += "".join(parts.content)
        self.sent_calls += len(parts.tool_calls)
        return parts

    def _to_lenient(self, exc: Exception, text: str, finish: bool) -> _Parts:
        """The output broke the reference's reading (vLLM's ``hf`` parser reads it as the
        reference does while it can): parse it all again in the native lenient mode (a
        malformed region's text goes to the content, a close delimiter inside a JSON string
        does not end a call; README "Lenient mode") and send what that reading has beyond
        what was already sent. Without a lenient backend, the rest is content."""
        parts = _Parts()
        if self.lenient or not _get_backend().lenient:
            self._fail(exc, parts, text)
            return parts
        logger.info("response_templates: the output does not parse as the reference reads it "
                    "(%s); reading it in lenient mode", exc)
        replay = _Parts()
        try:
            self._start(lenient=True)
            self._route(self.parser.feed("".join(self.fed) + text), replay)
            if finish:
                self._route(self.parser.finalize()[1], replay)
        except (ValueError, RuntimeError) as again:
            self._fail(again, parts, text)
            return parts
        self.fed.append(text)
        reasoning, content = "".join(replay.reasoning), "".join(replay.content)
        if reasoning.startswith(self.sent_reasoning):
            parts.reasoning.append(reasoning[len(self.sent_reasoning):])
        if content.startswith(self.sent_content):
            parts.content.append(content[len(self.sent_content):])
        else:  # the lenient reading disagrees with what was sent: keep the new text at least
            parts.content.append(text)
        parts.tool_calls = replay.tool_calls[self.sent_calls:]
        return parts

    def _fail(self, exc: Exception, parts: _Parts, text: str) -> None:
        # The backend raised on the model's output (e.g. a tool call's JSON does not parse):
        # keep the text rather than lose it, as content from here on.
        logger.warning("response_templates: the output does not parse (%s); passing it on as content", exc)
        self.failed = True
        if text:
            parts.content.append(text)

    def _unhold(self, event: dict) -> dict | None:
        """``event`` without the held prompt text (None when nothing of it is left)."""
        kind = event.get("type")
        if kind == "region_open" and event.get("field") == self.spec.implicit:
            return event
        if kind != "region_chunk":
            self.held = ""
            return event
        text, held = event.get("text", ""), self.held
        if text.startswith(held):
            self.held = ""
            text = text[len(held) :]
        elif held.startswith(text):
            self.held = held[len(text) :]
            text = ""
        else:
            self.held = ""
        return {**event, "text": text} if text else None

    def _route(self, events: list[dict], parts: _Parts) -> None:
        for event in events:
            if self.held:
                event = self._unhold(event)
                if event is None:
                    continue
            kind, field = event.get("type"), event.get("field")
            target = self.spec.target.get(field, "drop")
            if target == "reasoning" and not self.parse_reasoning:
                target = "content"
            if target == "tool_calls":
                self._route_tool(event, parts)
            elif target in ("content", "reasoning"):
                self._route_text(event, field, target, parts)
        self._track(events)

    def _route_text(self, event: dict, field: str, target: str, parts: _Parts) -> None:
        sink = parts.reasoning if target == "reasoning" else parts.content
        kind = event.get("type")
        streamed = self.spec.streamed.get(field, True)
        if kind == "region_open":
            join = self.spec.join.get(field)
            if join and self.closed.get(field):
                sink.append(join)
        elif kind == "region_chunk" and streamed:
            sink.append(event.get("text", ""))
        elif kind == "region_close" and not streamed:
            value = event.get("value")
            if value is not None:
                sink.append(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))

    def _route_tool(self, event: dict, parts: _Parts) -> None:
        kind = event.get("type")
        if not self.parse_tools:
            # Tool parsing is off for this request: the call's text stays in the content.
            if kind == "region_chunk":
                parts.content.append(event.get("text", ""))
            return
        if kind in ("region_malformed", "region_truncated"):
            logger.warning("response_templates: dropping a tool call that does not parse (%s)", kind)
            return
        if kind != "region_close":
            return
        calls = _calls_of(event.get("value"))
        if not calls:
            logger.warning("response_templates: dropping a tool call without a name or arguments")
        for name, arguments, call_id in calls:
            parts.tool_calls.append(
                DeltaToolCall(
                    index=self.next_tool_index,
                    id=call_id or make_tool_call_id(),
                    type="function",
                    function=DeltaFunctionCall(name=name, arguments=arguments),
                )
            )
            self.next_tool_index += 1


def _held_prefix_text(spec: _Spec, prefix: str, tools: list[dict]) -> str:
    """The tail of ``prefix`` a parser holds back after reading it as its prefix."""
    try:
        probe = _get_backend().parser(spec.compiled, prefix, tools)
        events = probe.feed("\0")
    except (ValueError, RuntimeError):
        return ""
    if any(event.get("type") not in ("region_open", "region_chunk") for event in events):
        return ""
    text = "".join(event.get("text", "") for event in events if event.get("type") == "region_chunk")
    return text[:-1] if text.endswith("\0") else ""


def _reasoning_ended_in_prefix(spec: _Spec, text: str) -> bool:
    """Whether a prompt (or prompt + output) ``text`` leaves reasoning behind."""
    if not spec.has_reasoning:
        return True
    try:
        stream = _Stream(spec, prefix=text, tools=[], parse_reasoning=True, parse_tools=False)
    except (ValueError, RuntimeError):
        return False
    if stream.reasoning_ended:
        return True
    if stream.open_field is not None and spec.target.get(stream.open_field) != "reasoning":
        return True  # the prompt opened another field's region (e.g. a prefilled response)
    # A delimiter at the very end of the text may still be held back: a NUL byte, which no
    # model writes, resolves it without being text anyone would see.
    stream.feed("\0")
    return stream.reasoning_ended


# --------------------------------------------------------------------------------------------
# Linking the two parsers of one request
# --------------------------------------------------------------------------------------------

# vLLM's DelegatingParser builds a request's reasoning parser, then its tool parser, in the
# same thread: the reasoning parser leaves itself here and the tool parser takes it, so that
# both feed one stream.
_pending = threading.local()


def _session_options_from(request: Any) -> bool:
    """Whether the request lets tool calls be parsed (``tool_choice`` other than ``"none"``)."""
    return getattr(request, "tool_choice", None) != "none"


# --------------------------------------------------------------------------------------------
# The reasoning parser
# --------------------------------------------------------------------------------------------


class ResponseTemplateReasoningParser(ReasoningParser):
    """vLLM reasoning parser that reads reasoning with the model's response template.

    With this package's tool parser in the same server it parses the whole output for both
    (one stream per request); alone it routes the whole output itself: reasoning to
    ``reasoning``, the other fields to ``content`` (tool calls' text included).
    """

    engine_based_streaming = True

    def __init__(self, tokenizer: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(tokenizer, *args, **kwargs)
        self.spec = _spec_for(tokenizer)
        chat_template_kwargs = kwargs.get("chat_template_kwargs") or {}
        self.thinking_disabled = chat_template_kwargs.get("enable_thinking", True) is False
        self.prefix = ""
        self.tool_parser: ResponseTemplateToolParser | None = None
        self.stream: _Stream | None = None
        self.parse_tools = True
        self._handoff: _Parts | None = None
        self._ended_signalled = False
        self._scan: tuple[list[int], _Stream] | None = None
        _pending.reasoning = weakref.ref(self)

    # -- shared stream ------------------------------------------------------------------------

    def _stream(self) -> _Stream:
        if self.stream is None:
            self.stream = _Stream(
                self.spec,
                prefix=self.prefix,
                tools=self.tool_parser.tool_dicts if self.tool_parser else [],
                parse_reasoning=True,
                parse_tools=self.tool_parser is not None and self.parse_tools,
            )
        return self.stream

    def set_prompt_token_ids(self, prompt_token_ids: Sequence[int]) -> None:
        """Take the rendered prompt as the parser's prefix (it may open the reasoning)."""
        self.prefix = _decode(self.model_tokenizer, prompt_token_ids)
        self.stream = None

    def adjust_request(self, request: Any) -> Any:
        """Keep special tokens in the decoded output: templates match them."""
        request.skip_special_tokens = False
        if hasattr(request, "spaces_between_special_tokens"):
            request.spaces_between_special_tokens = False
        return request

    # -- where reasoning ends ---------------------------------------------------------------

    @property
    def reasoning_start_str(self) -> str | None:  # noqa: D401 - vLLM's property
        """Not a single literal for a template (delimiters may be patterns)."""
        return None

    @property
    def reasoning_end_str(self) -> str | None:
        """Not a single literal for a template (delimiters may be patterns)."""
        return None

    def is_reasoning_end(self, input_ids: Sequence[int]) -> bool:
        """Whether the text of ``input_ids`` (a prompt, or a prompt and output) has left
        reasoning: a reasoning region closed, or another field's region has text."""
        if _reasoning_ended_in_prefix(self.spec, _decode(self.model_tokenizer, input_ids)):
            return True
        return self.thinking_disabled and not self._reasoning_open(input_ids)

    def _reasoning_stream(self, input_ids: Sequence[int]) -> "_Stream | None":
        """A stream that has read the text of ``input_ids`` as its prefix, reasoning only
        (None when that text cannot be read)."""
        try:
            return _Stream(
                self.spec,
                prefix=_decode(self.model_tokenizer, input_ids),
                tools=[],
                parse_reasoning=True,
                parse_tools=False,
            )
        except (ValueError, RuntimeError):
            return None

    def _reasoning_open(self, input_ids: Sequence[int]) -> bool:
        stream = self._reasoning_stream(input_ids)
        if stream is None:
            return False
        return stream.open_field is not None and self.spec.target.get(stream.open_field) == "reasoning"

    def is_reasoning_end_streaming(self, input_ids: Sequence[int], delta_ids: Iterable[int]) -> bool:
        """As :meth:`is_reasoning_end` for a growing sequence, parsing each new token once."""
        input_ids = list(input_ids)
        if self._scan is not None:
            seen, stream = self._scan
            if input_ids[: len(seen)] == seen:
                stream.feed(_decode(self.model_tokenizer, input_ids[len(seen) :]))
                self._scan = (input_ids, stream)
                return stream.reasoning_ended
        stream = self._reasoning_stream(input_ids)
        if stream is None:
            return False
        self._scan = (input_ids, stream)
        return stream.reasoning_ended

    def extract_content_ids(self, input_ids: list[int]) -> list[int]:
        """The ids after the token at which reasoning ends (all of them if it never began)."""
        if not self.spec.has_reasoning:
            return list(input_ids)
        stream = _Stream(self.spec, prefix="", tools=[], parse_reasoning=True, parse_tools=False)
        for index, token_id in enumerate(input_ids):
            stream.feed(_decode(self.model_tokenizer, [token_id]))
            if stream.reasoning_ended:
                return list(input_ids[index + 1 :])
        return []

    def has_engine_confirmed_reasoning_end(self) -> bool:
        """True once the shared stream has left reasoning and a tool parser of this package
        can take the rest; alone, this parser keeps routing the whole output."""
        if self.tool_parser is None or self.stream is None or not self.stream.reasoning_ended:
            return False
        self._ended_signalled = True
        return True

    # -- parsing ----------------------------------------------------------------------------

    def extract_reasoning(self, model_output: str, request: Any) -> tuple[str | None, str | None]:
        """Parse a whole output; returns ``(reasoning, content)``.

        The content is the template's content (and, without a tool parser of this package,
        the text of tool calls); the tool parser then takes the calls from the same parse.
        """
        self.parse_tools = _session_options_from(request)
        stream = _Stream(
            self.spec,
            prefix=self.prefix,
            tools=self.tool_parser.tool_dicts if self.tool_parser else [],
            parse_reasoning=True,
            parse_tools=self.tool_parser is not None and self.parse_tools,
        )
        parts = stream.feed(model_output)
        parts.extend(stream.finish())
        content = "".join(parts.content) or None
        if self.tool_parser is not None:
            self.tool_parser._oneshot = (model_output, content, parts)
        return "".join(parts.reasoning) or None, content

    def extract_reasoning_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
    ) -> DeltaMessage | None:
        """Feed ``delta_text`` to the request's stream; reasoning, content and (with this
        package's tool parser) tool calls of the delta."""
        stream = self._stream()
        parts = stream.feed(delta_text)
        if self.tool_parser is not None and stream.reasoning_ended:
            # vLLM hands this delta's content to the tool parser next; it returns these parts.
            self._handoff = parts
            return _reasoning_only(parts).message()
        return parts.message()

    def finish_streaming(self) -> DeltaMessage | None:
        """End of output (or, when vLLM asks at the hand-over to the tool parser, nothing)."""
        if self._ended_signalled or self.stream is None:
            return None
        return self.stream.finish().message()


def _reasoning_only(parts: _Parts) -> _Parts:
    only = _Parts()
    only.reasoning = parts.reasoning
    return only


# --------------------------------------------------------------------------------------------
# Guarantees (strict tools, tool_choice required / named) through the logits processor
# --------------------------------------------------------------------------------------------


def logits_processor_active() -> bool:
    """Whether the engine masks constrained requests: ``RESPONSE_TEMPLATES_VLLM_LOGITS_PROCESSOR``
    (``1``/``0``) if set, else whether this package's ``vllm.logits_processors`` entry point is
    installed (vLLM loads every installed one)."""
    value = os.environ.get(LOGITS_PROCESSOR_ENV, "").strip().lower()
    if value:
        if value not in ("0", "1", "true", "false", "yes", "no"):
            raise ValueError(f"{LOGITS_PROCESSOR_ENV}={value!r}: expected 1 or 0")
        return value in ("1", "true", "yes")
    try:
        from importlib.metadata import entry_points

        found = entry_points(group="vllm.logits_processors")
    except Exception:  # noqa: BLE001 - broken metadata: not active
        return False
    return any(ep.value.startswith(_LOGITS_PROCESSOR_MODULE) for ep in found)


def _named_tool(tool_choice: Any) -> str | None:
    """The tool name a named ``tool_choice`` forces (Chat Completions or Responses form)."""
    if hasattr(tool_choice, "model_dump"):
        tool_choice = tool_choice.model_dump(exclude_none=True)
    if not isinstance(tool_choice, dict):
        return None
    function = tool_choice.get("function")
    name = function.get("name") if isinstance(function, dict) else tool_choice.get("name")
    return name if isinstance(name, str) and name else None


def _guarantees(request: Any, tools: list[dict]) -> list[str]:
    """What the request asks the output to guarantee beyond parsing."""
    asked = []
    if any((tool.get("function") or {}).get("strict") for tool in tools):
        asked.append("strict tools")
    if getattr(request, "tool_choice", None) == "required":
        asked.append("tool_choice required")
    if _named_tool(getattr(request, "tool_choice", None)) is not None:
        asked.append("a named tool_choice")
    return asked


def constraint_extra_args(template: dict, tools: list[dict], tool_choice: Any) -> str:
    """The ``SamplingParams.extra_args[EXTRA_ARGS_KEY]`` value that makes the logits processor
    enforce ``tools`` (their schemas) and ``tool_choice`` (``"auto"``, ``"required"``, a name)
    with ``template``: JSON, since vLLM's ``vllm_xargs`` hold strings, numbers and lists."""
    name = _named_tool(tool_choice)
    choice = name if name is not None else (tool_choice or "auto")
    return json.dumps({"template": template, "tools": tools, "tool_choice": choice}, ensure_ascii=False)


def _constrain(request: Any, template: dict) -> Any:
    """Pass the request's guarantees to the logits processor, or refuse them (ValueError,
    which vLLM answers with HTTP 400) when nothing would enforce them."""
    tools = _tool_dicts(getattr(request, "tools", None))
    if not tools or getattr(request, "tool_choice", None) == "none":
        return request
    asked = _guarantees(request, tools)
    if getattr(request, "parallel_tool_calls", True) is False:
        raise ValueError(
            "response_templates: parallel_tool_calls=false cannot be guaranteed (the masks "
            "allow any number of calls); leave it unset"
        )
    if not asked:
        return request
    if not logits_processor_active():
        raise ValueError(
            f"response_templates: {' and '.join(asked)} need the response_templates logits "
            "processor: install the package in the engine's environment (entry point "
            "vllm.logits_processors), or pass --logits-processors "
            "response_templates.vllm_logits:ResponseTemplateLogitsProcessor and set "
            f"{LOGITS_PROCESSOR_ENV}=1"
        )
    xargs = dict(getattr(request, "vllm_xargs", None) or {})
    xargs[EXTRA_ARGS_KEY] = constraint_extra_args(template, tools, request.tool_choice)
    request.vllm_xargs = xargs
    return request


# --------------------------------------------------------------------------------------------
# The tool parser
# --------------------------------------------------------------------------------------------


class ResponseTemplateToolParser(ToolParser):
    """vLLM tool parser that reads tool calls with the model's response template.

    Calls are emitted whole when their region closes (index, id, type, name and the
    arguments as one JSON string), as vLLM's ``hf`` parser does; content streams as it comes.
    """

    engine_based_streaming = True
    # tool_choice "required" / named: parse the model's own format, never vLLM's JSON list.
    supports_required_and_named = False

    def __init__(self, tokenizer: Any, tools: list[Any] | None = None) -> None:
        super().__init__(tokenizer, tools)
        self.spec = _spec_for(tokenizer)
        self.tool_dicts = _tool_dicts(tools)
        self.skip_reasoning_parsing = False
        self._oneshot: tuple[str, str | None, _Parts] | None = None
        self._own_stream: _Stream | None = None
        self.reasoning_parser: ResponseTemplateReasoningParser | None = None
        pending = getattr(_pending, "reasoning", None)
        _pending.reasoning = None
        partner = pending() if pending is not None else None
        if (
            partner is not None
            and partner.tool_parser is None
            and partner.model_tokenizer is tokenizer
            and partner.spec is self.spec
        ):
            partner.tool_parser = self
            self.reasoning_parser = partner

    def adjust_request(self, request: Any) -> Any:
        """Keep special tokens in the decoded output (templates match them), and hand strict
        tools / ``tool_choice`` required or named to the logits processor (``vllm_xargs``),
        or refuse them when it is not running (see :func:`logits_processor_active`)."""
        request.skip_special_tokens = False
        if hasattr(request, "spaces_between_special_tokens"):
            request.spaces_between_special_tokens = False
        return _constrain(request, _resolve_template(self.model_tokenizer))

    def _stream(self, request: Any) -> _Stream:
        partner = self.reasoning_parser
        if partner is not None:
            if partner.stream is None:
                partner.parse_tools = _session_options_from(request)
            return partner._stream()
        if self._own_stream is None:
            self._own_stream = _Stream(
                self.spec,
                prefix="",
                tools=self.tool_dicts,
                parse_reasoning=not self.skip_reasoning_parsing,
                parse_tools=_session_options_from(request),
            )
        return self._own_stream

    def extract_tool_calls(self, model_output: str, request: Any) -> ExtractedToolCallInformation:
        """Parse a whole output (or take the parse the reasoning parser just made of it)."""
        oneshot, self._oneshot = self._oneshot, None
        if oneshot is not None and (oneshot[1] or "") == (model_output or ""):
            parts = oneshot[2]
        else:
            stream = _Stream(
                self.spec,
                prefix="",
                tools=self.tool_dicts,
                parse_reasoning=not self.skip_reasoning_parsing,
                parse_tools=_session_options_from(request),
            )
            parts = stream.feed(model_output)
            parts.extend(stream.finish())
        calls = [
            ToolCall(
                id=call.id or make_tool_call_id(),
                type="function",
                function=FunctionCall(name=call.function.name, arguments=call.function.arguments),
            )
            for call in parts.tool_calls
            if call.function is not None and call.function.name
        ]
        content = "".join(parts.content) or None
        return ExtractedToolCallInformation(tools_called=bool(calls), tool_calls=calls, content=content)

    def extract_tool_calls_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
        request: Any,
    ) -> DeltaMessage | None:
        """Feed ``delta_text`` to the request's stream: content, reasoning and whole calls."""
        partner = self.reasoning_parser
        if partner is not None and partner._handoff is not None:
            # The reasoning parser already parsed this delta; vLLM passed us its content.
            parts, partner._handoff = partner._handoff, None
            return _non_reasoning(parts).message()
        stream = self._stream(request)
        stream.parse_tools = _session_options_from(request)
        return stream.feed(delta_text).message()

    def finish_streaming(self) -> DeltaMessage | None:
        """End of output: what the stream held back (a region closed by the end)."""
        partner = self.reasoning_parser
        stream = partner.stream if partner is not None else self._own_stream
        if stream is None:
            return None
        return stream.finish().message()

    def get_remaining_unstreamed_args(self) -> str:
        """Nothing: every call is sent whole."""
        return ""


def _non_reasoning(parts: _Parts) -> _Parts:
    rest = _Parts()
    rest.content = parts.content
    rest.tool_calls = parts.tool_calls
    return rest


# --------------------------------------------------------------------------------------------
# Registration
# --------------------------------------------------------------------------------------------


def register() -> None:
    """Register both parsers with vLLM under :data:`PARSER_NAME` (idempotent).

    Called on import and by vLLM's ``vllm.general_plugins`` entry point.
    """
    ToolParserManager.register_module(PARSER_NAME, module=ResponseTemplateToolParser)
    ReasoningParserManager.register_module(PARSER_NAME, module=ResponseTemplateReasoningParser)


register()
