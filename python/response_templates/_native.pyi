"""Types of the extension module ``response_templates._native`` (Rust, python/src/*.rs).

Signatures follow the ``#[pyo3(signature = ...)]`` of each function: names, defaults and
keyword-only markers are the native ones. JSON values (messages, events, violations, template
and tool dicts) are ``dict[str, Any]``. A token id, a count or a row index accepts any integer
(``int``, numpy's integers: ``SupportsIndex``). ``stubtest`` checks this file against the
built module (python/tests/test_typing.py).
"""

import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal, NoReturn, SupportsIndex, final, overload

from typing_extensions import Self, disjoint_base

__all__ = [
    "Template",
    "ResponseParser",
    "parse_batch",
    "Vocabulary",
    "Matcher",
    "fill_next_token_bitmask_batch",
    "_masks_check_response",
    "_masks_template_source",
    "_masks_clear_cache",
]

# The tools of a request as the native conversion reads them: OpenAI tool dicts
# (``{"type": "function", "function": {...}}``) in a list or tuple (another sequence is a
# TypeError at run time).
_ToolDicts = Sequence[dict[str, Any]]
# The tools `ResponseParser` takes: also functions, turned into JSON schemas through
# transformers' `get_json_schema` (response_templates._api._tools).
_Tools = Sequence[dict[str, Any] | Callable[..., Any]]
_ReasoningCalls = Literal["keep", "extract"]

@final
class Template:
    """A compiled response template (the ``response_template`` object of a
    ``tokenizer_config.json``). Made by the static constructors; immutable; pickles.

    The constructors raise ``ResponseTemplateError`` (a ``ValueError``) listing every problem.
    """

    @staticmethod
    def from_json(text: str, name: str | None = None) -> Template:
        """From JSON text: a bare template or a whole ``tokenizer_config.json``."""
    @staticmethod
    def from_dict(value: dict[str, Any], name: str | None = None) -> Template:
        """From a template dict. Also raises TypeError/ValueError for a value JSON cannot
        hold."""
    @staticmethod
    def from_file(path: str | os.PathLike[str], name: str | None = None) -> Template:
        """From a template file or a ``tokenizer_config.json``; ``name`` defaults to the
        file's stem (for a ``tokenizer_config.json``, its directory's name)."""
    @staticmethod
    def from_pretrained(model_dir: str | os.PathLike[str]) -> Template:
        """The ``response_template`` of ``model_dir/tokenizer_config.json``."""
    @staticmethod
    def vendored(name: str) -> Template:
        """A template built into the module (``vendored_names()``)."""
    @staticmethod
    def vendored_names() -> list[str]: ...
    @property
    def name(self) -> str | None: ...
    @property
    def fields(self) -> list[str]:
        """The field names, in template order."""
    def to_dict(self) -> dict[str, Any]: ...
    def to_json(self) -> str: ...
    def __reduce__(self) -> tuple[Any, ...]: ...
    def __copy__(self) -> Self: ...
    def __deepcopy__(self, _memo: Any) -> Self: ...

@final
class ResponseParser:
    """transformers' streaming ``ResponseParser`` on the compiled engine.

    ``response_template``: a ``Template`` or a template dict. ``prefix``: the chat prompt the
    model saw; required (``None`` raises ValueError: pass ``""`` to opt out).

    Raises ``ResponseParseError`` from ``feed``/``finalize``, ``ContractViolation`` from
    ``finalize`` with a contract, RuntimeError for ``feed``/``finalize`` after ``finalize``.
    Cannot be pickled or copied (TypeError).
    """

    def __new__(
        cls,
        response_template: Template | dict[str, Any],
        prefix: str | None = None,
        *,
        tools: _Tools | None = None,
        lenient: bool = False,
        reasoning_calls: _ReasoningCalls = "keep",
        response_format: dict[str, Any] | None = None,
        strict_tools: bool = False,
    ) -> Self: ...
    @property
    def initial_events(self) -> list[dict[str, Any]]:
        """The events of the prefix's replay (the same list object on every access)."""
    def feed(self, text: str) -> list[dict[str, Any]]:
        """The events ``text`` causes (``region_open``, ``region_chunk``, ``region_close``)."""
    def finalize(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Ends the output: ``(message, final_events)``."""
    def violations(self) -> list[dict[str, Any]]:
        """The contract violations found so far (``kind``, ``pointer``, ``expected``,
        ``found``); empty without a contract."""
    def __reduce__(self) -> NoReturn:
        """Always raises TypeError: a parser cannot be pickled or copied."""

def parse_batch(
    template: Template,
    texts: Sequence[str],
    prefixes: Sequence[str],
    tools: _ToolDicts | None = None,
    lenient: bool = False,
    reasoning_calls: _ReasoningCalls = "keep",
    response_format: dict[str, Any] | None = None,
    strict_tools: bool = False,
) -> list[dict[str, Any]]:
    """Parses whole outputs in parallel (GIL released): one message dict per text.
    ``prefixes``: one for all texts or one per text (else ValueError). Raises the error of the
    first failing output, in batch order."""

@final
class Vocabulary:
    """A tokenizer's vocabulary prepared for token masks (cached per source). Made by the
    static constructors; they raise ``VocabularyError`` (a ``ValueError``)."""

    @staticmethod
    def builtin(name: str) -> Vocabulary:
        """``"o200k_base"``, ``"cl100k_base"`` or ``"o200k_harmony"``."""
    @staticmethod
    def from_tokenizer_json(
        text: str, *, eos: Sequence[str] | None = None, source: str = "tokenizer.json"
    ) -> Vocabulary:
        """From the text of a Hugging Face ``tokenizer.json``; ``eos``: texts of the special
        tokens that end a generation."""
    @staticmethod
    def from_tiktoken(
        text: str, special_tokens: dict[str, int], eos: Sequence[str], *, source: str = ".tiktoken"
    ) -> Vocabulary:
        """From the text of a ``.tiktoken`` file, its special tokens (``{text: id}``) and the
        texts of those that end a generation (at least one)."""
    @property
    def vocab_size(self) -> int: ...
    @property
    def eos_token_ids(self) -> list[int]: ...
    @property
    def name(self) -> str: ...
    def token_bytes(self, id: SupportsIndex) -> bytes:
        """Raises ValueError for an id outside ``0..vocab_size``."""
    def is_special(self, id: SupportsIndex) -> bool:
        """Raises ValueError for an id outside ``0..vocab_size``."""
    def special_id(self, text: str) -> int | None: ...
    def decode(self, ids: Sequence[SupportsIndex]) -> bytes:
        """Raises ValueError for an id outside ``0..vocab_size``."""
    def encode(self, text: str, *, allow_special: bool = False) -> list[int]:
        """Built-in vocabularies only (ValueError for others)."""
    def __len__(self) -> int: ...

@disjoint_base
class Matcher:
    """A position in a compiled token constraint for one generation (see
    ``response_templates.Matcher``, the subclass that takes templates and tokenizers in any
    form). ``Matcher(other_matcher)`` copies a matcher.

    Raises ``ConstraintError`` (a ``ValueError``) for a template or request that cannot be
    constrained.
    """

    @overload
    def __new__(cls, template: Matcher, vocabulary: None = None) -> Self: ...
    @overload
    def __new__(
        cls,
        template: Template,
        vocabulary: Vocabulary,
        tools: _ToolDicts | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        response_format: dict[str, Any] | None = None,
        schema_mode: Literal["strict", "general"] | None = None,
    ) -> Self: ...
    @property
    def vocab_size(self) -> int: ...
    @property
    def eos_token_ids(self) -> list[int]: ...
    @property
    def vocabulary(self) -> Vocabulary: ...
    @property
    def num_tokens(self) -> int:
        """Tokens consumed (and that can be rolled back)."""
    def consume_token(self, id: SupportsIndex) -> bool:
        """False (the matcher does not move) for a token not allowed here. Raises ValueError
        for a negative id."""
    def consume_tokens(self, ids: Sequence[SupportsIndex]) -> bool:
        """False at the first refused token (the ones before it are consumed)."""
    def validate_tokens(self, ids: Sequence[SupportsIndex]) -> int:
        """How many of ``ids``, from the first, would be accepted (does not move)."""
    def fill_next_token_bitmask(self, bitmask: Any, index: SupportsIndex | None = None) -> None:
        """Writes the next token's mask into row ``index`` (default 0) of ``bitmask``: a
        writable, C-contiguous int32 buffer (numpy array) of shape
        ``[batch, ceil(vocab_size / 32)]`` or ``[ceil(vocab_size / 32)]``.

        Raises TypeError (not an int32 buffer), ValueError (read-only, non-contiguous, wrong
        shape), IndexError (row out of range)."""
    def allowed_token_ids(self) -> list[int]: ...
    def rollback(self, n: SupportsIndex) -> None:
        """Raises ValueError for a negative ``n`` or more than ``num_tokens``."""
    def reset(self) -> None: ...
    def is_accepting(self) -> bool: ...
    def is_stopped(self) -> bool: ...
    def copy(self) -> Matcher:
        """A copy at the same position (a native ``Matcher``, also for a subclass)."""

def fill_next_token_bitmask_batch(
    matchers: Iterable[Matcher], bitmask: Any, indices: Sequence[SupportsIndex] | None = None
) -> None:
    """Fills row ``indices[k]`` (default ``k``) of ``bitmask`` (as
    ``Matcher.fill_next_token_bitmask``) with the mask of ``matchers[k]``."""

def _masks_check_response(
    template_json: str,
    text: str,
    tools_json: str | None = None,
    response_format_json: str | None = None,
) -> tuple[str, str]:
    """Test helper: ``(message_json, violations_json)``."""

def _masks_template_source(name: str) -> str | None: ...
def _masks_clear_cache() -> None: ...
