"""File to name in ``--tool-parser-plugin`` / ``--reasoning-parser-plugin`` by path.

vLLM imports a plugin given as a file under the file's base name, so ``.../vllm.py`` would be
imported as ``vllm`` and replace vLLM itself; this file's base name is harmless. It registers
the parsers of :mod:`response_templates.vllm` (the installed package's, or, without it, the
``vllm.py`` beside this file). Naming the module instead (``response_templates.vllm``) works
as well.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

try:
    from response_templates.vllm import register
except ImportError:
    _name = "response_templates_vllm"
    _module = sys.modules.get(_name)
    if _module is None:
        _spec = importlib.util.spec_from_file_location(_name, Path(__file__).with_name("vllm.py"))
        _module = importlib.util.module_from_spec(_spec)
        sys.modules[_name] = _module
        _spec.loader.exec_module(_module)
    register = _module.register

register()
