"""``install(tokenizer)``: a transformers tokenizer's ``parse_response`` and
``get_response_parser`` on this package, with the tokenizer's rules for token ids and batches
(transformers 5.24 ``PreTrainedTokenizerBase``)."""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

from . import _native
from ._api import ResponseParser, _PREFIX_REQUIRED, _template, _tools

_MARK = "_response_templates_installed"


def _texts(tokenizer: Any, value: Any) -> Tuple[List[str], bool]:
    """(texts, batched) for a response or prefix: a str is one text; a list or tuple of str is
    a batch; anything else (token ids: a list, a list of lists, an array, a tensor) goes
    through ``tokenizer.decode``, which gives a str (one sequence) or a list of str (a batch)."""
    if isinstance(value, str):
        return [value], False
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], str):
        return list(value), True
    decoded = tokenizer.decode(value)
    if isinstance(decoded, str):
        return [decoded], False
    return list(decoded), True


def install(tokenizer: Any) -> Any:
    """Makes ``tokenizer.parse_response`` and ``tokenizer.get_response_parser`` (of this
    tokenizer object only) parse with this package, with transformers' signatures:

    - ``parse_response(response, schema=None, *, prefix=None, tools=None, **extras)``: the
      response and the prefix may be text, token ids (decoded with the tokenizer), or batches
      (a list of texts, a list of id lists, a 2-D array or tensor); a batch gives a list of
      messages, parsed in parallel with the GIL released. One prefix serves every item of a
      batch, or pass one per item; an empty list opts out like ``""``.
    - ``get_response_parser(response_template=None, *, prefix=None, tools=None, **extras)``:
      a ``ResponseParser``; a token-id prefix is decoded.

    ``schema``/``response_template`` default to ``tokenizer.response_template``. ``extras``
    are this package's keyword arguments (``lenient``, ``reasoning_calls``,
    ``response_format``, ``strict_tools``).

    Errors, as transformers raises them: AttributeError when the tokenizer has no
    ``response_template`` and none is passed; ValueError for a missing prefix, a prefix count
    that does not match the batch, or a batch prefix given to ``get_response_parser``; this
    package's errors (all ValueError) for templates and output. Returns the tokenizer.
    """

    def parse_response(response: Any, schema: Any = None, *, prefix: Any = None, tools: Any = None, **extras: Any) -> Any:
        if schema is None:
            schema = getattr(tokenizer, "response_template", None)
            if schema is None:
                raise AttributeError(
                    "this tokenizer has no `response_template`: set one, or pass the template as `schema`"
                )
        if prefix is None:
            raise ValueError(_PREFIX_REQUIRED)
        template = _template(schema)
        tool_list = _tools(tools)
        responses, batched = _texts(tokenizer, response) if not (
            isinstance(response, (list, tuple)) and not response
        ) else ([], True)
        if isinstance(prefix, (list, tuple)) and not prefix:
            prefixes, per_item = [""], False
        else:
            prefixes, per_item = _texts(tokenizer, prefix)
        if per_item and len(prefixes) != len(responses):
            raise ValueError(
                f"{len(responses)} response(s) but {len(prefixes)} prefixes: pass one prefix (used "
                "for every response) or one prefix per response"
            )
        if not per_item:
            prefixes = prefixes[:1]
        if not batched:
            return _native.parse_batch(template, responses[:1], prefixes[:1], tool_list, **_extras(extras))[0]
        return _native.parse_batch(template, responses, prefixes, tool_list, **_extras(extras))

    def get_response_parser(response_template: Any = None, *, prefix: Any = None, tools: Any = None, **extras: Any) -> ResponseParser:
        template = response_template if response_template is not None else getattr(tokenizer, "response_template", None)
        if template is None:
            raise AttributeError(
                "this tokenizer has no `response_template`: set one, or pass it as `response_template`"
            )
        if prefix is not None and not isinstance(prefix, str):
            prefix = tokenizer.decode(prefix)
            if not isinstance(prefix, str):
                raise ValueError(
                    "get_response_parser takes one prefix (a str, a list of token ids or a 1-D "
                    "tensor), not a batch"
                )
        return ResponseParser(template, prefix, tools=tools, **extras)

    parse_response.__doc__ = install.__doc__
    get_response_parser.__doc__ = install.__doc__
    tokenizer.parse_response = parse_response
    tokenizer.get_response_parser = get_response_parser
    setattr(tokenizer, _MARK, True)
    return tokenizer


def _extras(extras: Dict[str, Any]) -> Dict[str, Any]:
    known = {"lenient", "reasoning_calls", "response_format", "strict_tools"}
    unknown = sorted(set(extras) - known)
    if unknown:
        raise TypeError(f"unexpected keyword argument(s): {', '.join(unknown)}")
    return extras


def uninstall(tokenizer: Any) -> Any:
    """Undoes ``install``: the tokenizer's own ``parse_response`` and ``get_response_parser``
    are used again. Returns the tokenizer."""
    if getattr(tokenizer, _MARK, False):
        for name in ("parse_response", "get_response_parser", _MARK):
            try:
                delattr(tokenizer, name)
            except AttributeError:
                pass
    return tokenizer
