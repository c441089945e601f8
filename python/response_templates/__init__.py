"""response_templates: parse model output with Hugging Face response templates.

The public API follows transformers 5.24 (``transformers.utils.chat_parsing``):
``parse_response`` and ``ResponseParser``, with the same signatures and the same dicts, on a
compiled engine (the template's delimiters compiled to DFAs, in Rust). ``Template`` holds a
compiled template; ``install(tokenizer)`` makes a transformers tokenizer's ``parse_response``
and ``get_response_parser`` use this package. All errors derive from ValueError:
``ResponseTemplateError``, ``ResponseParseError``, ``ContractViolation``, ``SchemaError``, and
for token masks ``ConstraintError`` (``TemplateConstraintError`` is both a
``ResponseTemplateError`` and a ``ConstraintError``) and ``VocabularyError``.

Token masks (``Matcher``, ``allocate_token_bitmask``, ``fill_next_token_bitmask_batch``,
``apply_token_bitmask_inplace``) follow the conventions of llguidance and xgrammar: an int32
bitmask of shape ``[batch, ceil(vocab_size / 32)]``, bit ``i`` of word ``w`` is token
``32 * w + i``, 1 = allowed. The vLLM and SGLang integrations are the modules
``response_templates.vllm`` and ``response_templates.sglang``.
"""

from . import _native
from ._api import ResponseParser, Template, parse_response, vendored_names
from ._errors import ContractViolation, ResponseParseError, ResponseTemplateError, SchemaError
from ._install import install, uninstall
from .masks import (
    BUILTIN_VOCABULARIES,
    ConstraintError,
    Matcher,
    TemplateConstraintError,
    Vocabulary,
    VocabularyError,
    allocate_token_bitmask,
    apply_token_bitmask_inplace,
    fill_next_token_bitmask_batch,
    load_vocabulary,
)

__all__ = [
    "BUILTIN_VOCABULARIES",
    "ConstraintError",
    "ContractViolation",
    "Matcher",
    "Vocabulary",
    "VocabularyError",
    "allocate_token_bitmask",
    "apply_token_bitmask_inplace",
    "fill_next_token_bitmask_batch",
    "load_vocabulary",
    "ResponseParseError",
    "ResponseParser",
    "ResponseTemplateError",
    "SchemaError",
    "Template",
    "TemplateConstraintError",
    "install",
    "parse_response",
    "uninstall",
    "vendored_names",
]
