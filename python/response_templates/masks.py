"""Token masks for constrained generation with response templates.

A `Matcher` follows one generation through the grammar of valid whole responses that a
response template defines for a request (its tools, ``tool_choice`` and response format),
over a tokenizer's vocabulary, and writes the mask of the next token into an int32 bitmask
with the conventions of llguidance and xgrammar:

* shape ``[batch, ceil(vocab_size / 32)]``, dtype int32, C-contiguous (``allocate_token_bitmask``);
* bit ``i`` of word ``w`` is token ``32 * w + i``; 1 = allowed.

Example::

    import numpy as np
    from response_templates.masks import Matcher, allocate_token_bitmask, apply_token_bitmask_inplace

    m = Matcher("qwen3", tokenizer="o200k_base", tools=tools, tool_choice="required")
    bitmask = allocate_token_bitmask(1, m.vocab_size)
    m.fill_next_token_bitmask(bitmask, 0)
    apply_token_bitmask_inplace(logits, bitmask)     # logits: float [1, vocab] (numpy or torch)
    m.consume_token(int(np.argmax(logits)))

The compiled constraint and its per-state masks are shared by every matcher of the same
(template, tools, tool_choice, response_format, vocabulary), so creating a matcher per
request is cheap after the first.
"""

from __future__ import annotations

import os
import weakref
from typing import TYPE_CHECKING, Any, Dict, List, Literal, Optional, Sequence, Union

from . import _api, _native
from ._api import Template
from ._errors import ConstraintError, ResponseTemplateError, TemplateConstraintError, VocabularyError

if TYPE_CHECKING:  # numpy is optional: only its types, for allocate_token_bitmask
    import numpy as np
    import numpy.typing as npt


__all__ = [
    "Matcher",
    "Vocabulary",
    "ConstraintError",
    "TemplateConstraintError",
    "VocabularyError",
    "load_vocabulary",
    "allocate_token_bitmask",
    "fill_next_token_bitmask_batch",
    "apply_token_bitmask_inplace",
    "BUILTIN_VOCABULARIES",
]

Vocabulary = _native.Vocabulary

#: Vocabularies available by name (their token files ship inside the package's native module).
BUILTIN_VOCABULARIES = ("o200k_base", "cl100k_base", "o200k_harmony")

# Special tokens of OpenAI's published .tiktoken files (the files list ordinary tokens only).
_TIKTOKEN_SPECIALS = {
    "o200k_base": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    "cl100k_base": {
        "<|endoftext|>": 100257,
        "<|fim_prefix|>": 100258,
        "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260,
        "<|endofprompt|>": 100276,
    },
}

# Vocabularies made from tokenizer objects, by object (building one reads the whole
# tokenizer.json text, about 0.1 s for 150,000 tokens).
_FROM_OBJECTS: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()


def _read(path: Union[str, "os.PathLike[str]"]) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def load_vocabulary(
    tokenizer: Any,
    *,
    special_tokens: Optional[Dict[str, int]] = None,
    eos: Optional[Sequence[str]] = None,
) -> "Vocabulary":
    """The `Vocabulary` of a tokenizer, prepared for masks (cached per source).

    ``tokenizer`` is one of:

    * a built-in name: ``"o200k_base"``, ``"cl100k_base"``, ``"o200k_harmony"``;
    * a path to a ``tokenizer.json`` (or a model directory holding one);
    * a path to a ``.tiktoken`` file: give ``special_tokens`` (``{text: id}``) and ``eos``
      unless the file is OpenAI's ``o200k_base``/``cl100k_base`` (named so), whose special
      tokens are known (EOS ``<|endoftext|>``);
    * a transformers tokenizer (a fast one: its ``backend_tokenizer``), or a ``tokenizers``
      ``Tokenizer``; EOS is the tokenizer's ``eos_token`` unless ``eos`` is given;
    * a `Vocabulary` (returned as is).

    ``eos``: the texts of the special tokens that end a generation.

    Raises VocabularyError (a ValueError) for a file that does not read as a vocabulary or
    without an EOS, ValueError for a name that is neither built in nor a file, TypeError for
    another kind of object (such as a slow transformers tokenizer).
    """
    if isinstance(tokenizer, _native.Vocabulary):
        return tokenizer
    if isinstance(tokenizer, (str, os.PathLike)):
        source = os.fspath(tokenizer)
        if source in BUILTIN_VOCABULARIES:
            return _native.Vocabulary.builtin(source)
        if os.path.isdir(source):
            source = os.path.join(source, "tokenizer.json")
        if not os.path.isfile(source):
            raise ValueError(
                f"tokenizer {source!r}: not a built-in vocabulary "
                f"({', '.join(BUILTIN_VOCABULARIES)}) and no such file"
            )
        if source.endswith(".tiktoken"):
            stem = os.path.basename(source)[: -len(".tiktoken")]
            specials = special_tokens
            if specials is None:
                specials = _TIKTOKEN_SPECIALS.get(stem)
                if specials is None:
                    raise VocabularyError(
                        f"{source}: a .tiktoken file does not list its special tokens: pass "
                        "special_tokens={text: id} and eos=[text, ...]"
                    )
            eos_texts = list(eos) if eos is not None else (
                ["<|endoftext|>"] if "<|endoftext|>" in specials else []
            )
            return _native.Vocabulary.from_tiktoken(
                _read(source), dict(specials), eos_texts, source=source
            )
        return _native.Vocabulary.from_tokenizer_json(
            _read(source), eos=None if eos is None else list(eos), source=source
        )
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None and callable(getattr(tokenizer, "to_str", None)):
        backend = tokenizer  # a tokenizers.Tokenizer
    if backend is None or not callable(getattr(backend, "to_str", None)):
        raise TypeError(
            "tokenizer: expected a built-in vocabulary name, a tokenizer.json or .tiktoken "
            "path, a fast transformers tokenizer or a tokenizers.Tokenizer, got "
            f"{type(tokenizer).__name__}"
        )
    names: Optional[List[str]] = None
    if eos is not None:
        names = list(eos)
    else:
        eos_token = getattr(tokenizer, "eos_token", None)
        if isinstance(eos_token, str) and eos_token:
            names = [eos_token]
    key = (tuple(names) if names is not None else None)
    try:
        cached = _FROM_OBJECTS.get(tokenizer)
    except TypeError:  # not weak-referenceable or not hashable
        cached = None
    if cached is not None and cached[0] == key:
        return cached[1]
    source = getattr(tokenizer, "name_or_path", None) or type(tokenizer).__name__
    vocab = _native.Vocabulary.from_tokenizer_json(
        backend.to_str(), eos=names, source=f"{source} (tokenizer.json)"
    )
    try:
        _FROM_OBJECTS[tokenizer] = (key, vocab)
    except TypeError:
        pass
    return vocab


def _template(response_template: Any) -> Any:
    """The `Template` of a response template given as a `Template`, a dict, JSON text, a path
    (a template, a ``tokenizer_config.json`` or a model directory), a vendored template's name,
    or an object with ``to_json()`` / ``to_dict()``: made by the `Template` constructors, so a
    template that does not load raises the `ResponseTemplateError` they raise. Dicts and JSON
    texts are compiled once and cached."""
    if isinstance(response_template, Template):
        return response_template
    if isinstance(response_template, dict):
        return _api._template(response_template)
    if isinstance(response_template, str) and response_template.lstrip().startswith("{"):
        return _api._template_from_text(response_template)
    if isinstance(response_template, (str, os.PathLike)):
        path = os.fspath(response_template)
        if os.path.isdir(path):
            return Template.from_pretrained(path)
        named = isinstance(response_template, str) and "/" not in path and os.sep not in path
        if named and not path.endswith(".json") and not os.path.exists(path):
            return Template.vendored(path)
        return Template.from_file(path)
    to_json = getattr(response_template, "to_json", None)
    if callable(to_json):
        return _api._template_from_text(to_json())
    to_dict = getattr(response_template, "to_dict", None)
    if callable(to_dict):
        return _api._template(to_dict())
    raise TypeError(
        "response_template: expected a dict, a JSON string, a path, a vendored template's "
        f"name or a Template, got {type(response_template).__name__}"
    )


def _tool_choice(tool_choice: Any) -> Any:
    if tool_choice is None or isinstance(tool_choice, (str, dict)):
        return tool_choice
    raise TypeError(
        "tool_choice: expected 'auto', 'required', 'none', a tool name or "
        f"{{'type': 'function', 'function': {{'name': ...}}}}, got {type(tool_choice).__name__}"
    )


def _response_format(response_format: Any) -> Any:
    if response_format is None or isinstance(response_format, dict):
        return response_format
    raise TypeError(
        f"response_format: expected an OpenAI response_format dict, got {type(response_format).__name__}"
    )


def _schema_mode(schema_mode: Any) -> "Literal['strict', 'general']":
    if schema_mode in ("strict", "general"):
        return schema_mode
    if isinstance(schema_mode, str):
        raise ValueError(f"schema_mode: expected 'strict' or 'general', got {schema_mode!r}")
    raise TypeError(f"schema_mode: expected 'strict' or 'general', got {type(schema_mode).__name__}")


class Matcher(_native.Matcher):
    """Where one generation is in the grammar of valid responses, and which tokens may come next.

    ``Matcher(response_template, tokenizer, *, tools=None, tool_choice="auto",
    response_format=None, schema_mode="strict")``:

    * ``response_template``: a ``Template``, a dict, a JSON string, a path (template,
      ``tokenizer_config.json`` or model directory), or a vendored template's name
      (``"qwen3"``); dicts and JSON strings are compiled once and cached;
    * ``tokenizer``: see `load_vocabulary` (a built-in name, a tokenizer.json or .tiktoken
      path, a transformers tokenizer, a `Vocabulary`);
    * ``tools``: OpenAI tools (``[{"type": "function", "function": {"name", "parameters"}}]``)
      or functions (as ``parse_response`` takes them), enforced strictly (arguments follow the
      schemas);
    * ``tool_choice``: ``"auto"``, ``"required"``, ``"none"``, a tool's name, or
      ``{"type": "function", "function": {"name": ...}}``;
    * ``response_format``: OpenAI's (``{"type": "json_schema", "json_schema": {...}}`` or
      ``{"type": "json_object"}``), enforced on the content;
    * ``schema_mode``: how the tool and response-format schemas are read. ``"strict"`` (the
      default): the structured-outputs subset, the contract ``parse_response`` checks with
      ``response_format=`` and ``strict_tools=``; a schema outside it is a ConstraintError.
      ``"general"``: general JSON Schema (drafts 2020-12, 2019-09, 7, 6 and 4), as serving
      engines get it: objects open unless ``additionalProperties: false``, unknown keywords
      ignored; ``uniqueItems`` is not enforced and ``oneOf`` is read as ``anyOf`` where its
      branches may overlap (see ``constrain/src/general.rs``), so the masks may allow an
      instance the schema refuses there; what cannot be generated is a ConstraintError
      naming the keyword.

    The Python values are read as JSON by the conversion ``parse_response`` uses: a value JSON
    cannot hold (a ``set``, a non-``str`` key, ``nan``) is the same TypeError / ValueError
    naming its JSON pointer, and tools or a response format nested more than 256 levels deep
    the same `SchemaError`.

    Methods (native): ``vocab_size``, ``eos_token_ids``, ``num_tokens``,
    ``consume_token(id) -> bool`` (False: not allowed, the matcher does not move),
    ``consume_tokens(ids) -> bool``, ``validate_tokens(ids) -> int``,
    ``fill_next_token_bitmask(bitmask, index=0)``, ``allowed_token_ids()``,
    ``rollback(n)``, ``reset()``, ``is_accepting()``, ``is_stopped()``, ``copy()``
    (also ``copy.copy`` and ``copy.deepcopy``). A matcher cannot be pickled (TypeError): it is
    tied to the constraint compiled in its process; make one per process (the ``Template``
    pickles).

    Raises ConstraintError (a ValueError with ``at``, ``reason``, ``budget``) for a template
    or request that cannot be constrained; for a template that does not load, a
    `TemplateConstraintError`: both the `ResponseTemplateError` that ``Template.from_dict``
    and ``parse_response`` raise for it (``problems``) and a ConstraintError (``at ==
    "template"``). VocabularyError / ValueError / TypeError for the other arguments (see
    `load_vocabulary`).
    """

    def __new__(
        cls,
        response_template: Any,
        tokenizer: Any = None,
        *,
        tools: Optional[Sequence[Any]] = None,
        tool_choice: Union[str, Dict[str, Any]] = "auto",
        response_format: Optional[Dict[str, Any]] = None,
        schema_mode: "Literal['strict', 'general']" = "strict",
    ) -> "Matcher":
        if isinstance(response_template, _native.Matcher) and tokenizer is None:
            return super().__new__(cls, response_template)
        if tokenizer is None:
            raise TypeError(
                "Matcher: tokenizer= is required (a built-in vocabulary name, a "
                "tokenizer.json or .tiktoken path, or a transformers tokenizer)"
            )
        try:
            template = _template(response_template)
        except ResponseTemplateError as e:
            # The same error as Template's constructors give, also a ConstraintError.
            raise TemplateConstraintError(str(e), e.problems) from None
        vocab = load_vocabulary(tokenizer)
        return super().__new__(
            cls,
            template,
            vocab,
            _api._tools(tools),
            _tool_choice(tool_choice),
            _response_format(response_format),
            _schema_mode(schema_mode),
        )

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # arguments are read by __new__
        pass

    def copy(self) -> "Matcher":
        """A copy at the same position (sharing the compiled constraint and its masks)."""
        return type(self)(self)

    __copy__ = copy

    def __deepcopy__(self, memo: Dict[int, Any]) -> "Matcher":
        return self.copy()

    def __reduce__(self) -> Any:
        raise TypeError(
            "a Matcher cannot be pickled: it is a position in a constraint compiled over a "
            "vocabulary in this process. Make one in each process with Matcher(template, "
            "tokenizer, ...) (a Template pickles; the compiled constraint is cached per "
            "process), or copy() it within a process"
        )


def _numpy(what: str) -> Any:
    """numpy, or an ImportError saying which function needs it (numpy is an optional
    dependency: ``pip install numpy``, or the package's ``masks`` extra)."""
    try:
        import numpy
    except ImportError as e:
        raise ImportError(f"{what} needs numpy (pip install numpy)") from e
    return numpy


def allocate_token_bitmask(batch_size: int, vocab_size: int) -> "npt.NDArray[np.int32]":
    """A numpy int32 array of shape ``[batch_size, ceil(vocab_size / 32)]``, every bit set
    (every token allowed), as llguidance and xgrammar allocate it.

    Raises ValueError for a negative size; ImportError without numpy.
    """
    np = _numpy("allocate_token_bitmask")

    if batch_size < 0 or vocab_size < 0:
        raise ValueError(f"allocate_token_bitmask({batch_size}, {vocab_size}): sizes must be >= 0")
    return np.full((batch_size, (vocab_size + 31) // 32), -1, dtype=np.int32)


def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "data_ptr")


def fill_next_token_bitmask_batch(
    matchers: Sequence["Matcher"], bitmask: Any, indices: Optional[Sequence[int]] = None
) -> None:
    """Fills row ``indices[k]`` (default ``k``) of ``bitmask`` with the mask of
    ``matchers[k]``. ``bitmask``: int32 ``[batch, ceil(vocab_size / 32)]``, numpy (or any
    writable buffer) or a torch tensor (a CPU tensor is written in place; another device's
    through a CPU copy). Masks not cached yet are computed without the GIL, in parallel.

    Raises TypeError / ValueError as `Matcher.fill_next_token_bitmask`.
    """
    if _is_torch(bitmask):
        if bitmask.device.type == "cpu":
            _native.fill_next_token_bitmask_batch(matchers, bitmask.numpy(), indices)
        else:
            staging = bitmask.cpu()
            _native.fill_next_token_bitmask_batch(matchers, staging.numpy(), indices)
            bitmask.copy_(staging, non_blocking=False)
        return
    _native.fill_next_token_bitmask_batch(matchers, bitmask, indices)


def apply_token_bitmask_inplace(logits: Any, bitmask: Any) -> None:
    """Sets to -inf, in place, the logits of tokens whose bit is 0. ``logits``: float
    ``[batch, vocab]`` or ``[vocab]``, a numpy array or a torch tensor (any float dtype, any
    device, strided views included: the tensor itself is written); ``bitmask``: int32
    ``[batch, words]`` or ``[words]`` with as many rows as ``logits``, numpy or torch (with
    torch logits it is moved to their device). Logits past ``32 * words`` are set to -inf;
    bits past the logits' width are ignored.

    Raises TypeError for a bitmask that is not int32, ValueError for logits or a bitmask of
    another number of dimensions than one or two, or mismatched batch sizes.
    """
    if _is_torch(logits):
        _apply_torch(logits, bitmask)
        return
    np = _numpy("apply_token_bitmask_inplace")

    mask = np.asarray(bitmask)
    if mask.dtype != np.int32:
        raise TypeError(f"bitmask: expected dtype int32, got {mask.dtype}")
    _check_dims(logits.shape, mask.shape)
    view = logits if logits.ndim == 2 else logits[None, :]
    mask2 = mask if mask.ndim == 2 else mask[None, :]
    bits = np.unpackbits(
        np.ascontiguousarray(mask2, dtype="<i4").view(np.uint8), axis=1, bitorder="little"
    )
    width = view.shape[1]
    cutoff = min(width, bits.shape[1])
    view[:, cutoff:] = -np.inf
    region = view[:, :cutoff]
    region[bits[:, :cutoff] == 0] = -np.inf


def _check_dims(logits_shape: Sequence[int], mask_shape: Sequence[int]) -> None:
    """ValueError unless logits and bitmask have one or two dimensions and as many rows (a
    one-dimensional array is one row)."""
    if len(logits_shape) not in (1, 2) or len(mask_shape) not in (1, 2):
        raise ValueError(
            "logits and bitmask must have one or two dimensions, got shapes "
            f"{list(logits_shape)} and {list(mask_shape)}"
        )
    rows = [shape[0] if len(shape) == 2 else 1 for shape in (logits_shape, mask_shape)]
    if rows[0] != rows[1]:
        raise ValueError(f"batch size mismatch: logits {rows[0]} rows, bitmask {rows[1]}")


def _apply_torch(logits: Any, bitmask: Any) -> None:
    import torch

    if _is_torch(bitmask):
        mask = bitmask
    else:
        np = _numpy("apply_token_bitmask_inplace")
        array = np.asarray(bitmask)
        if array.dtype != np.int32:
            raise TypeError(f"bitmask: expected dtype int32, got {array.dtype}")
        array = np.ascontiguousarray(array)
        if not array.flags.writeable:  # torch warns on tensors over read-only memory
            array = array.copy()
        mask = torch.from_numpy(array)
    if mask.dtype != torch.int32:
        raise TypeError(f"bitmask: expected dtype int32, got {mask.dtype}")
    _check_dims(logits.shape, mask.shape)
    mask = mask.to(logits.device, non_blocking=True)
    view = logits if logits.dim() == 2 else logits.unsqueeze(0)
    if mask.dim() == 1:
        mask = mask.unsqueeze(0)
    shifts = torch.arange(32, device=logits.device, dtype=torch.int32)
    bits = ((mask.unsqueeze(-1) >> shifts) & 1).reshape(mask.shape[0], -1).bool()
    width = view.shape[1]
    cutoff = min(width, bits.shape[1])
    if cutoff < width:
        view[:, cutoff:] = float("-inf")
    view[:, :cutoff].masked_fill_(~bits[:, :cutoff], float("-inf"))


def _define_logits_processor() -> Optional[type]:
    """transformers' LogitsProcessor for response templates, when torch and transformers
    import (None otherwise)."""
    try:
        import torch  # noqa: F401
        from transformers import LogitsProcessor
    except Exception:  # ImportError, or a broken optional install
        return None

    class ResponseTemplateLogitsProcessor(LogitsProcessor):
        """Masks a transformers generation to the valid responses of a response template for
        a request: strict tools, ``tool_choice`` required or named, the response format.

        ``ResponseTemplateLogitsProcessor(response_template, tokenizer, *, tools=None,
        tool_choice="auto", response_format=None)``; pass it in ``logits_processor=[...]`` of
        ``model.generate``. One matcher per row of the batch, created where a generation
        starts (the prompt's end); each later call consumes the row's last token. A call
        whose ``input_ids`` are not the previous call's plus one token per row starts a new
        generation, so one processor serves several ``generate`` calls. Rows that ended
        (EOS) get EOS only (``generate`` writes its pad token there). For sampling and
        greedy search (beam search reorders rows, which a matcher per row does not follow).
        ``scores``: the float ``[batch, vocab]`` tensor ``generate`` passes, masked in place
        (any device) and returned.

        Raises RuntimeError if a row's token is not allowed (the scores were not masked by
        this processor, or another processor chose against it).
        """

        def __init__(
            self,
            response_template: Any,
            tokenizer: Any,
            *,
            tools: Optional[Sequence[Any]] = None,
            tool_choice: Union[str, Dict[str, Any]] = "auto",
            response_format: Optional[Dict[str, Any]] = None,
        ) -> None:
            self._prototype = Matcher(response_template, tokenizer, tools=tools,
                                      tool_choice=tool_choice, response_format=response_format)
            self._matchers: Optional[List[Matcher]] = None
            self._bitmask: Any = None
            self._seen: Any = None  # the input_ids of the previous call

        def reset(self) -> None:
            """Forget the rows: the next call starts new generations."""
            self._matchers = None
            self._seen = None

        def _continues(self, input_ids: Any) -> bool:
            """Whether ``input_ids`` are the previous call's plus one token per row."""
            seen = self._seen
            return (
                seen is not None
                and input_ids.shape[0] == seen.shape[0]
                and input_ids.shape[1] == seen.shape[1] + 1
                and bool((input_ids[:, :-1] == seen).all())
            )

        def __call__(self, input_ids: Any, scores: Any) -> Any:
            batch = input_ids.shape[0]
            if self._matchers is None or not self._continues(input_ids):
                self._matchers = [self._prototype.copy() for _ in range(batch)]
            else:
                last = input_ids[:, -1].tolist()
                for row, (m, token) in enumerate(zip(self._matchers, last)):
                    if m.is_stopped():
                        continue
                    if not m.consume_token(int(token)):
                        raise RuntimeError(
                            f"row {row}: token {token} is not allowed by the response template"
                        )
            words = (max(scores.shape[1], self._prototype.vocab_size) + 31) // 32
            if self._bitmask is None or self._bitmask.shape != (batch, words):
                self._bitmask = allocate_token_bitmask(batch, 32 * words)
            self._seen = input_ids.detach().clone()
            fill_next_token_bitmask_batch(self._matchers, self._bitmask)
            apply_token_bitmask_inplace(scores, self._bitmask)
            return scores

    return ResponseTemplateLogitsProcessor


ResponseTemplateLogitsProcessor = _define_logits_processor()
if ResponseTemplateLogitsProcessor is not None:
    __all__.append("ResponseTemplateLogitsProcessor")
