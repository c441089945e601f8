"""The exceptions of response_templates: all derive from ValueError, as transformers' parser
raises ValueError for bad templates and bad output. The native module raises these classes
(it imports them from here), so each is defined once."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

__all__ = ["ResponseTemplateError", "ResponseParseError", "ContractViolation", "SchemaError"]


class ResponseTemplateError(ValueError):
    """A response template that cannot be loaded.

    ``problems`` lists every problem found (not only the first), each a dict:
    ``file`` (str or None: the file the template came from), ``path`` (the JSON path of the
    offending key, e.g. ``"fields.tool_calls.open_pattern"``; ``""`` for the template itself),
    ``field`` (the field that path is under, or None), ``line`` and ``column`` (1-based, in the
    JSON text, or None for a template given as a dict), ``kind`` (which check failed, e.g.
    ``"UnknownKey"``) and ``reason`` (a sentence).
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

    def __init__(self, text: str, *, message: Dict[str, Any], violations: List[Dict[str, Any]]):
        super().__init__(text)
        self.message = message
        self.violations = violations


class SchemaError(ValueError):
    """A ``response_format`` or ``tools`` schema outside the subset the contracts support.

    ``problems`` lists each problem as a dict: ``pointer`` (JSON pointer into the schema),
    ``keyword`` and ``reason``.
    """

    def __init__(self, message: str, problems: Optional[List[Dict[str, Any]]] = None):
        super().__init__(message)
        self.problems: List[Dict[str, Any]] = list(problems or [])
