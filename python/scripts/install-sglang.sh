#!/usr/bin/env bash
# Installs what python/tests/test_sglang.py needs: SGLang 0.5.23's tool-call, reasoning and
# grammar-backend modules, without torch or CUDA.
#
# Usage: python/scripts/install-sglang.sh [VENV]   (default /work/venvs/sglang)
# Then:  VENV/bin/pip install ./python   (or the wheel: the tests run on the native package)
#        VENV/bin/python -m pytest python/tests/test_sglang.py
#
# What and why:
# - sglang==0.5.23 with --no-deps: the wheel is 39 MB; its declared dependencies pull torch
#   2.14 + the nvidia-* wheels, flashinfer, triton and more (several GB: PyPI's torch with its
#   nvidia-* wheels alone is a 5.6 GB venv). The CPU torch index (download.pytorch.org) is not
#   reachable from this project's machines, so no torch is installed here (.ci/run's torch
#   step installs this script's packages beside PyPI's torch for python/tests/test_torch.py):
#   sglang.srt.utils.common imports torch and triton at module level
#   (numbers, dtypes, base classes; nothing the parsers run), and the test puts a permissive
#   stand-in for torch/triton on sys.meta_path when no real torch is importable.
# - exactly the packages that importing sglang.srt.function_call.function_call_parser
#   (FunctionCallParser and its detector registry, BaseFormatDetector, StreamingParseResult,
#   ToolCallItem), sglang.srt.parser.response_template (the response_template detectors),
#   sglang.srt.parser.reasoning_parser (ReasoningParser), sglang.srt.constrained.
#   base_grammar_backend (register_grammar_backend) and sglang.srt.arg_groups.choices reach,
#   found by importing them and adding each missing module, all --no-deps, at the versions
#   SGLang pins where it pins them (openai 2.8.0, xgrammar 0.2.7, apache-tvm-ffi 0.1.11);
# - transformers==5.24.0 with its own dependencies (tokenizers, safetensors, huggingface_hub,
#   ...): SGLang asks for 5.19.0 but its parser modules import with 5.24, the reference the
#   fixtures were made with; numpy (above) holds the grammar backend's masks in the tests;
# - pytest.
# Time: 80 s measured on the 2-core dev machine with PIP_NO_CACHE_DIR=1 (86 s with the final
# import check); size 610 MB in the venv.
set -euo pipefail
VENV=${1:-/work/venvs/sglang}
HERE=$(cd "$(dirname "$0")" && pwd)
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
PIP=("$VENV/bin/pip" install -q --disable-pip-version-check)
start=$(date +%s)
"${PIP[@]}" --no-deps sglang==0.5.23
"${PIP[@]}" transformers==5.24.0 pytest
"${PIP[@]}" --no-deps \
  numpy orjson psutil pybase64 requests charset-normalizer idna urllib3 certifi \
  packaging pillow starlette anyio sniffio msgspec pydantic pydantic-core typing-inspection \
  annotated-types typing-extensions pyzmq tqdm ipython traitlets pygments \
  aiohttp multidict attrs yarl propcache aiohappyeyeballs aiosignal frozenlist \
  openai==2.8.0 httpx httpcore h11 distro jiter partial-json-parser regex \
  xgrammar==0.2.7 apache-tvm-ffi==0.1.11 jinja2 markupsafe
# No import check here: test_sglang.py imports SGLang's modules (over its torch stand-in) and
# the package, which is installed after this script (VENV/bin/pip install the wheel).
echo "install-sglang: done in $(( $(date +%s) - start )) s, $(du -sh "$VENV" | cut -f1)"
