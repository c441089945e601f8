"""response_templates: parse model output with Hugging Face response templates.

The public API follows transformers 5.24 (``transformers.utils.chat_parsing``):
``parse_response`` and ``ResponseParser``, with the same signatures and the same dicts, on a
compiled engine (the template's delimiters compiled to DFAs, in Rust). ``Template`` holds a
compiled template; ``install(tokenizer)`` makes a transformers tokenizer's ``parse_response``
and ``get_response_parser`` use this package. All errors derive from ValueError:
``ResponseTemplateError``, ``ResponseParseError``, ``ContractViolation``, ``SchemaError``.
"""

from . import _native
from ._api import ResponseParser, Template, parse_response, vendored_names
from ._errors import ContractViolation, ResponseParseError, ResponseTemplateError, SchemaError
from ._install import install, uninstall

__all__ = [
    "ContractViolation",
    "ResponseParseError",
    "ResponseParser",
    "ResponseTemplateError",
    "SchemaError",
    "Template",
    "install",
    "parse_response",
    "uninstall",
    "vendored_names",
]
