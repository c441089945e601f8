"""The exceptions of response_templates: all derive from ValueError, as transformers' parser
raises ValueError for bad templates and bad output. The native module raises these classes
(it imports them from here), so each is defined once; each pickles with its attributes (an
error raised in a worker process reaches the parent whole)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

__all__ = [
    "ResponseTemplateError",
    "ResponseParseError",
    "ContractViolation",
    "SchemaError",
    "ConstraintError",
    "TemplateConstraintError",
    "VocabularyError",
]


class ResponseTemplateError(ValueError):
    """A response template that cannot be loaded.

    ``problems`` lists every problem found (not only the first), each a dict:
    ``file`` (str or None: the file the template came from), ``path`` (the JSON path of the
    offending key, e.g. ``"fields.tool_calls.open_pattern"``; ``""`` for the template itself),
    ``field`` (the field that path is under, or None), ``line`` and ``column`` (1-based, in the
    JSON text, or None for a template given as a dict), ``kind`` (which check failed, e.g.
    ``"UnknownKey"``; ``"UnknownVendoredName"`` for a ``Template.vendored`` name that does not
    exist) and ``reason`` (a sentence).
    """

    def __init__(self, message: str, problems: Optional[List[Dict[str, Any]]] = None):
        super().__init__(message)
        self.problems: List[Dict[str, Any]] = list(problems or [])


class ResponseParseError(ValueError):
    """Model output that the template cannot turn into a message.

    ``kind`` says what failed: ``"content"`` (a region's body rejected by its content parser,
    transform or join), ``"missing_required"`` (fields with ``optional: false`` absent; their
    names in ``fields``), ``"no_progress"``, ``"invalid_utf8"``, ``"hold_overflow"``,
    ``"start_anchor"``, ``"route"``, ``"tables"``. ``field`` is the field concerned (or None),
    ``offset`` the byte offset (UTF-8) where its region's body starts, in the output, or when
    ``in_prefix`` is true in the prefix after its last start anchor (or None).
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str = "content",
        field: Optional[str] = None,
        offset: Optional[int] = None,
        in_prefix: bool = False,
        fields: Optional[List[str]] = None,
    ):
        super().__init__(message)
        self.kind = kind
        self.field = field
        self.offset = offset
        self.in_prefix = in_prefix
        self.fields = fields


class ContractViolation(ValueError):
    """A parsed message that breaks its contract (``response_format`` or ``strict_tools``).

    ``message`` is the parsed message (dict); ``violations`` a list of dicts with ``kind``
    (e.g. ``"unknown_tool"``, ``"type_mismatch"``), ``pointer`` (a JSON pointer into the
    message, e.g. ``"/tool_calls/0/function/arguments/city"``), ``expected`` and ``found``.
    """

    def __init__(
        self,
        text: str,
        *,
        message: Optional[Dict[str, Any]] = None,
        violations: Optional[List[Dict[str, Any]]] = None,
    ):
        super().__init__(text)
        # Defaults only so that pickle can rebuild it from its text (then its attributes).
        self.message: Dict[str, Any] = message if message is not None else {}
        self.violations: List[Dict[str, Any]] = violations if violations is not None else []


class SchemaError(ValueError):
    """A ``response_format`` or ``tools`` schema outside the subset the contracts support.

    ``problems`` lists each problem as a dict: ``pointer`` (JSON pointer into the schema),
    ``keyword`` and ``reason``.
    """

    def __init__(self, message: str, problems: Optional[List[Dict[str, Any]]] = None):
        super().__init__(message)
        self.problems: List[Dict[str, Any]] = list(problems or [])


class ConstraintError(ValueError):
    """A template or request that cannot be compiled into a token constraint (``Matcher``).

    ``at`` says where: a template path such as ``"fields.tool_calls.open_pattern"`` (a template
    that loads but that constrained generation cannot write), ``"template"`` (a template that
    does not load: then the error is a `TemplateConstraintError`, with ``problems``), a pointer
    into the tools (``"tools/0/function/parameters/..."``), ``"response_format/..."`` or
    ``"tool_choice"``; ``reason`` says why; ``budget`` is the name of the size or time budget
    that ended the compile, or None.
    """

    def __init__(
        self,
        message: str,
        *,
        at: Optional[str] = None,
        reason: Optional[str] = None,
        budget: Optional[str] = None,
    ):
        super().__init__(message)
        self.at = at
        self.reason = reason
        self.budget = budget


class TemplateConstraintError(ResponseTemplateError, ConstraintError):
    """A response template given to ``Matcher`` that cannot be loaded: the same error, with the
    same ``problems``, as ``Template.from_dict`` / ``from_json`` / ``from_file`` /
    ``vendored`` and ``parse_response`` raise for it (a `ResponseTemplateError`), and a
    `ConstraintError` (``at == "template"``, ``reason``: the message, ``budget``: None), the
    error ``Matcher`` raises for what it cannot constrain."""

    def __init__(self, message: str, problems: Optional[List[Dict[str, Any]]] = None):
        super().__init__(message, problems)
        self.at = "template"
        self.reason = message
        self.budget = None


class VocabularyError(ValueError):
    """A vocabulary that cannot be read: the message names the source and the reason (a line of
    a .tiktoken file, a JSON path of a tokenizer.json, a missing EOS)."""
