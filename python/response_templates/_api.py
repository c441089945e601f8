"""The public parsing API: transformers 5.24's ``parse_response`` and ``ResponseParser``
signatures (``transformers.utils.chat_parsing``), on the compiled engine of ``_native``."""

from __future__ import annotations

import inspect
import json
import threading
from typing import Any, Callable, Dict, List, Literal, Optional, Sequence, Tuple, Union, overload

from . import _native

Template = _native.Template
ResponseParser = _native.ResponseParser

TemplateLike = Union[Dict[str, Any], "Template"]
Tools = Optional[Sequence[Union[Dict[str, Any], Callable[..., Any]]]]
ReasoningCalls = Literal["keep", "extract"]

# Template dicts compiled so far, by their JSON text (insertion order = age). Bounded: past
# _CACHE_SIZE entries the oldest is dropped.
_CACHE: Dict[str, Any] = {}
_CACHE_SIZE = 64
_CACHE_LOCK = threading.Lock()


def _cached(key: str, build: Callable[[], Any]) -> Any:
    """The Template cached under ``key``, or the one ``build()`` makes (then cached)."""
    template = _CACHE.get(key)
    if template is None:
        template = build()
        with _CACHE_LOCK:
            if len(_CACHE) >= _CACHE_SIZE:
                _CACHE.pop(next(iter(_CACHE)), None)
            _CACHE[key] = template
    return template


def _template(response_template: Any) -> Any:
    """A ``Template`` for ``response_template`` (a Template, or a template dict compiled once
    and cached by its JSON text). Errors: TypeError for another type; ResponseTemplateError."""
    if isinstance(response_template, Template):
        return response_template
    if not isinstance(response_template, dict):
        raise TypeError(
            "response_template must be a dict (the `response_template` object of a "
            f"tokenizer_config.json) or a response_templates.Template, not {type(response_template).__name__}"
        )
    try:
        key = json.dumps(response_template, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        # Not JSON (or too deep for json.dumps): from_dict raises an error naming the place.
        return Template.from_dict(response_template)
    return _cached(key, lambda: Template.from_dict(response_template))


def _template_from_text(text: str) -> Any:
    """``Template.from_json(text)``, cached by the text (keys apart from the dicts' keys, which
    are JSON texts: a ``tokenizer_config.json`` text is a template, its dict is not)."""
    return _cached("text:" + text, lambda: Template.from_json(text))


def _tools(tools: Tools) -> Optional[List[Any]]:
    """The tools as JSON: functions become their JSON schema through transformers'
    ``get_json_schema`` (as transformers does). Errors: TypeError when a function is given and
    transformers is not installed, or for a `tools` that is not a list."""
    if tools is None:
        return None
    if isinstance(tools, (str, bytes, dict)) or not isinstance(tools, (list, tuple)):
        raise TypeError(f"tools must be a list of tool dicts or functions, not {type(tools).__name__}")
    out = []
    for tool in tools:
        if inspect.isfunction(tool) or inspect.ismethod(tool):
            try:
                from transformers.utils import get_json_schema
            except ImportError as e:
                raise TypeError(
                    f"tool {getattr(tool, '__name__', tool)!r} is a function: turning it into a "
                    "JSON schema needs transformers (pip install transformers), or pass the tool "
                    "as a dict"
                ) from e
            tool = get_json_schema(tool)
        out.append(tool)
    return out


def _resolve(response_template: Any, tools: Tools) -> Tuple[Any, Optional[List[Any]]]:
    """For the native ResponseParser's constructor: the Template and the tools as JSON."""
    return _template(response_template), _tools(tools)


def _prefixes(prefix: Any, count: int) -> List[str]:
    """The batch's prefixes: one str for every text, or one per text. Errors: ValueError for
    None or a count mismatch, TypeError for anything else."""
    if prefix is None:
        raise ValueError(_PREFIX_REQUIRED)
    if isinstance(prefix, str):
        return [prefix]
    if isinstance(prefix, (list, tuple)):
        if not prefix:
            return [""]  # an empty list opts out, as in transformers' tokenizer
        if not all(isinstance(p, str) for p in prefix):
            raise TypeError("prefix must be a str or a list of str")
        if len(prefix) != count:
            raise ValueError(
                f"{count} text(s) but {len(prefix)} prefixes: pass one prefix (used for every "
                "text) or one prefix per text"
            )
        return list(prefix)
    raise TypeError(f"prefix must be a str or a list of str, not {type(prefix).__name__}")


_PREFIX_REQUIRED = (
    "a prefix is required: the chat prompt the model saw before generating (chat templates "
    "often write the start of the assistant message, such as an opening <think>, into it). "
    'Pass prefix="" if the output holds the whole message.'
)


# Typing only: a str gives one message, a list or tuple of str a list of them.
@overload
def parse_response(
    text: str,
    response_template: TemplateLike,
    *,
    prefix: Union[str, Sequence[str], None] = None,
    tools: Tools = None,
    lenient: bool = False,
    reasoning_calls: ReasoningCalls = "keep",
    response_format: Optional[Dict[str, Any]] = None,
    strict_tools: bool = False,
) -> Dict[str, Any]: ...


@overload
def parse_response(
    text: Union[List[str], Tuple[str, ...]],
    response_template: TemplateLike,
    *,
    prefix: Union[str, Sequence[str], None] = None,
    tools: Tools = None,
    lenient: bool = False,
    reasoning_calls: ReasoningCalls = "keep",
    response_format: Optional[Dict[str, Any]] = None,
    strict_tools: bool = False,
) -> List[Dict[str, Any]]: ...


def parse_response(
    text: Union[str, Sequence[str]],
    response_template: TemplateLike,
    *,
    prefix: Union[str, Sequence[str], None] = None,
    tools: Tools = None,
    lenient: bool = False,
    reasoning_calls: ReasoningCalls = "keep",
    response_format: Optional[Dict[str, Any]] = None,
    strict_tools: bool = False,
) -> Union[Dict[str, Any], List[Dict[str, Any]]]:
    """Parses a whole model output into a message dict, as transformers'
    ``parse_response(text, response_template, *, prefix=None, tools=None)`` does.

    ``text``: the generated text (str), or a list of texts (a batch: parsed in parallel with
    the GIL released; returns a list of dicts). ``response_template``: a template dict or a
    ``Template``. ``prefix``: the chat prompt the model saw (required; ``""`` opts out); for a
    batch, one str for every text or a list with one per text. ``tools``: the request's tools
    (OpenAI tool dicts or functions): tool-call arguments are typed by their schemas.

    Extras (keyword-only, off by default): ``lenient`` (README "Lenient mode"),
    ``reasoning_calls`` (``"keep"`` or ``"extract"``, lenient mode only), ``response_format``
    (an OpenAI response_format object) and ``strict_tools`` (calls checked against ``tools``).

    Errors (all ValueError): ``ResponseTemplateError`` (template), ``ResponseParseError``
    (output: ``.field``, ``.offset`` in bytes, ``.kind``), ``ContractViolation``, ``SchemaError``;
    ValueError for a missing prefix or a prefix count that does not match the batch. In a
    batch the first failing text (in order) raises.
    """
    template = _template(response_template)
    tool_list = _tools(tools)
    if isinstance(text, str):
        if prefix is None:
            raise ValueError(_PREFIX_REQUIRED)
        if not isinstance(prefix, str):
            prefix = _prefixes(prefix, 1)[0]
        return _native.parse_batch(
            template, [text], [prefix], tool_list, lenient, reasoning_calls, response_format, strict_tools
        )[0]
    if isinstance(text, (list, tuple)):
        texts = list(text)
        if not all(isinstance(t, str) for t in texts):
            raise TypeError("text must be a str or a list of str")
        prefixes = _prefixes(prefix, len(texts))
        return _native.parse_batch(
            template, texts, prefixes, tool_list, lenient, reasoning_calls, response_format, strict_tools
        )
    raise TypeError(f"text must be a str or a list of str, not {type(text).__name__}")


def vendored_names() -> List[str]:
    """The names of the vendored templates (``templates/*.json`` of the project), sorted."""
    return list(_native.Template.vendored_names())
