"""vLLM logits processor: strict tools and ``tool_choice`` required/named with response templates.

A v1 logits processor (vLLM 0.33, ``vllm.v1.sample.logits_processor.LogitsProcessor``) that
masks each constrained request's next token to the valid whole responses of its response
template, its tools (arguments follow their schemas) and its ``tool_choice``, with one
:class:`response_templates.Matcher` per request row.

Enabling it: installing this package declares it in the entry-point group
``vllm.logits_processors``, which vLLM loads in every engine; without the installed package's
metadata (a checkout on ``PYTHONPATH``), pass
``--logits-processors response_templates.vllm_logits:ResponseTemplateLogitsProcessor`` and set
``RESPONSE_TEMPLATES_VLLM_LOGITS_PROCESSOR=1`` for the API server, so that the tool parser
knows. vLLM does not run custom logits processors with speculative decoding (nor on TPU).

Per request: the tool parser of :mod:`response_templates.vllm` puts the constraint in
``SamplingParams.extra_args["response_templates"]`` (a JSON string with ``template``,
``tools``, ``tool_choice``) when a request asks for strict tools or ``tool_choice``
``"required"`` or named; other requests are left alone (their rows are not masked). With the
offline ``LLM`` API, set that key yourself:
``SamplingParams(extra_args={"response_templates": constraint_extra_args(template, tools, "required")})``
(``constraint_extra_args`` from :mod:`response_templates.vllm`).

The vocabulary is the model's tokenizer (``model_config.tokenizer``, loaded with transformers'
``AutoTokenizer``), or ``RESPONSE_TEMPLATES_VLLM_TOKENIZER`` (a ``tokenizer.json`` or
``.tiktoken`` path, or a built-in name such as ``o200k_base``).

Limits: the matcher starts at the first output token; a chat template that writes the start of
the response into the prompt (an opening ``<think>``) is not followed. A token the mask did not
allow (another processor overrode it) ends the constraint of that row, with a warning.
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any

from vllm.v1.sample.logits_processor import BatchUpdate, LogitsProcessor, MoveDirectionality

from .masks import Matcher, allocate_token_bitmask, apply_token_bitmask_inplace, fill_next_token_bitmask_batch

__all__ = ["EXTRA_ARGS_KEY", "TOKENIZER_ENV", "ResponseTemplateLogitsProcessor"]

logger = logging.getLogger(__name__)

#: Key of ``SamplingParams.extra_args`` holding a request's constraint (a JSON string, as
#: ``response_templates.vllm.constraint_extra_args`` writes it; the same key there).
EXTRA_ARGS_KEY = "response_templates"
#: Environment variable naming the vocabulary (else the model's tokenizer).
TOKENIZER_ENV = "RESPONSE_TEMPLATES_VLLM_TOKENIZER"


def _read_args(params: Any) -> dict | None:
    """The request's constraint, or None. Raises ValueError for a malformed one."""
    extra = getattr(params, "extra_args", None) or {}
    value = extra.get(EXTRA_ARGS_KEY)
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise ValueError(f"extra_args[{EXTRA_ARGS_KEY!r}] is not JSON: {exc}") from exc
    if not isinstance(value, dict) or not isinstance(value.get("template"), (dict, str)):
        raise ValueError(
            f"extra_args[{EXTRA_ARGS_KEY!r}] must be an object with `template` (a template "
            "dict or vendored name), `tools` and `tool_choice`"
        )
    return value


class _Row:
    """One constrained request: its matcher, how many of its output tokens it has read, and
    whether one of them was EOS (then its constraint is over)."""

    __slots__ = ("matcher", "output", "read", "ended", "eos")

    def __init__(self, matcher: Matcher, output: list[int]) -> None:
        self.matcher = matcher
        self.output = output  # vLLM's list of the request's output ids; it grows in place
        self.read = 0
        self.ended = False
        self.eos = frozenset(matcher.eos_token_ids)

    def catch_up(self) -> bool:
        """Consume the output tokens not read yet, up to EOS; False when one was not allowed."""
        new = self.output[self.read :]
        for n, token in enumerate(new):
            if token < 0:  # a placeholder of a token not sampled yet (async scheduling)
                new = new[:n]
                break
        self.read += len(new)
        if self.ended or not new:
            return True
        for n, token in enumerate(new):
            if token in self.eos:  # tokens past EOS (ignore_eos) are not the response's
                new = new[: n + 1]
                self.ended = True
                break
        return self.matcher.consume_tokens(new)


class ResponseTemplateLogitsProcessor(LogitsProcessor):
    """Masks constrained requests to their response template's grammar (see the module).

    Not argmax-invariant (it changes which token is greedy). ``update_state`` follows vLLM's
    persistent batch (added, removed, moved rows) and reads each row's new output tokens;
    ``apply`` fills one int32 bitmask row per constrained request with
    :func:`fill_next_token_bitmask_batch` (GIL released) and applies it with
    :func:`apply_token_bitmask_inplace`, which takes a torch tensor (vLLM) or a numpy array.
    """

    @classmethod
    def validate_params(cls, sampling_params: Any) -> None:
        """Reject a malformed constraint at the API boundary (HTTP 400)."""
        _read_args(sampling_params)

    def __init__(self, vllm_config: Any, device: Any, is_pin_memory: bool) -> None:
        self.vllm_config = vllm_config
        self.device = device
        self.rows: dict[int, _Row] = {}
        self._vocabulary: Any = None
        self._bitmask: Any = None

    def is_argmax_invariant(self) -> bool:
        """False: masking changes the greedy token."""
        return False

    # -- the vocabulary and matchers --------------------------------------------------------

    def _tokenizer(self) -> Any:
        if self._vocabulary is None:
            named = os.environ.get(TOKENIZER_ENV, "").strip()
            if named:
                self._vocabulary = named
            else:
                model_config = getattr(self.vllm_config, "model_config", None)
                path = getattr(model_config, "tokenizer", None)
                if not path:
                    raise ValueError(
                        f"no tokenizer for the response template masks: the model config names "
                        f"none; set {TOKENIZER_ENV}"
                    )
                from transformers import AutoTokenizer

                self._vocabulary = AutoTokenizer.from_pretrained(
                    path,
                    revision=getattr(model_config, "tokenizer_revision", None),
                    trust_remote_code=bool(getattr(model_config, "trust_remote_code", False)),
                )
        return self._vocabulary

    def _matcher(self, args: dict) -> Matcher:
        return Matcher(
            args["template"],
            self._tokenizer(),
            tools=args.get("tools") or None,
            tool_choice=args.get("tool_choice") or "auto",
            response_format=args.get("response_format"),
        )

    # -- vLLM's interface -------------------------------------------------------------------

    def update_state(self, batch_update: BatchUpdate | None) -> None:
        """Follow the batch's changes, then read every row's new output tokens."""
        if batch_update is not None:
            for index, params, _prompt, output in batch_update.added:
                args = _read_args(params)
                if args is None:
                    self.rows.pop(index, None)
                else:
                    self.rows[index] = _Row(self._matcher(args), output)
            for index in batch_update.removed:
                self.rows.pop(index, None)
            for a, b, direction in batch_update.moved:
                row_a, row_b = self.rows.pop(a, None), self.rows.pop(b, None)
                if row_a is not None:
                    self.rows[b] = row_a
                if row_b is not None and direction == MoveDirectionality.SWAP:
                    self.rows[a] = row_b
        for index, row in list(self.rows.items()):
            if not row.catch_up():
                logger.warning(
                    "response_templates: row %d took a token its mask did not allow; its "
                    "constraint ends here", index,
                )
                del self.rows[index]

    def apply(self, logits: Any) -> Any:
        """Mask the logits of the constrained rows in place and return them (``logits``: a
        float ``[batch, vocab]`` tensor, any device; numpy works too). A row whose response is
        complete gets EOS only (vLLM's structured outputs do the same with a stopped
        matcher), until it samples EOS; then its row is left alone."""
        live = [(i, r.matcher) for i, r in self.rows.items() if not r.ended]
        if not live:
            return logits
        batch, width = logits.shape[0], logits.shape[1]
        words = (max(width, max(m.vocab_size for _, m in live)) + 31) // 32
        if self._bitmask is None or self._bitmask.shape != (batch, words):
            self._bitmask = allocate_token_bitmask(batch, 32 * words)
        else:
            self._bitmask.fill(-1)  # rows without a constraint: everything allowed
        fill_next_token_bitmask_batch([m for _, m in live], self._bitmask, [i for i, _ in live])
        apply_token_bitmask_inplace(logits, self._bitmask)
        return logits
