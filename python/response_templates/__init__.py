"""response_templates: parse model output with Hugging Face response templates.

The public API follows transformers 5.24 (`transformers.utils.chat_parsing`): `parse_response`
and `ResponseParser`, with the same signatures and the same dicts, on a compiled engine.
"""

from . import _native  # noqa: F401

__all__: list = []
