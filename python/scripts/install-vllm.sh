#!/usr/bin/env bash
# Installs what python/tests/test_vllm.py needs: vLLM 0.33.0's parser code, without torch or CUDA.
#
# Usage: python/scripts/install-vllm.sh [VENV]   (default /work/venvs/vllm; CI: any path)
# Then:  VENV/bin/python -m pytest python/tests/test_vllm.py
#
# What and why (measured on the 2-core dev machine, warm pip cache off):
# - vllm==0.33.0 with --no-deps: the wheel is ~500 MB (it carries its CUDA kernels, 877 MB
#   unpacked); pip resolving its dependencies would pull torch 2.14 + the nvidia-* wheels
#   (several GB). No torch is installed here: PyPI's only x86_64 torch wheel is the CUDA
#   build (554 MB, and it does not import without the nvidia-* wheels: a 5.6 GB venv), and
#   the CPU index is not reachable from this project's machines (.ci/run's torch step
#   installs this script's packages beside PyPI's torch for python/tests/test_torch.py).
#   `import vllm` runs `import torch`
#   (vllm/env_override.py) and the config modules the parsers import touch torch at import
#   time, so the tests put python/tests/_torch_stub.py in place while importing vLLM and take
#   it out again afterwards; no parsing code calls torch.
# - exactly the modules that importing vllm.parser.{response_template,parser_manager,
#   abstract_parser}, vllm.tool_parsers, vllm.reasoning and the chat-completion protocol,
#   message-assembly and stream-processor modules reaches (found by importing them and
#   adding each missing module), all with --no-deps, at the versions vLLM 0.33 pins where it
#   pins them (xgrammar 0.2.8, apache-tvm-ffi 0.1.11, fastapi < 0.137: newer fastapi imports
#   opentelemetry);
# - transformers==5.24.0 with its own dependencies (tokenizers, safetensors,
#   huggingface_hub, ...): vLLM 0.33 asks for < 5.21, but its parser modules work with 5.24,
#   and 5.24 is the reference the fixtures were made with (the tests use its ResponseParser
#   as the plugin's backend until the native package is installed, and its parse_response
#   for expected values where vLLM refuses a template);
# - pytest.
# Time: 164 s for the pip steps into a fresh venv on the 2-core machine (the vllm wheel
# ~25 s, transformers with its dependencies ~50 s, the rest ~90 s); size: 1.3 GB in the
# venv, 877 MB of it vLLM's own wheel. pip prints vLLM's unmet requirements as errors
# (--no-deps on purpose); they are not failures. The tests then take ~45 s.
set -euo pipefail
VENV=${1:-/work/venvs/vllm}
HERE=$(cd "$(dirname "$0")" && pwd)
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
PIP=("$VENV/bin/pip" install -q --disable-pip-version-check)
start=$(date +%s)
"${PIP[@]}" --no-deps vllm==0.33.0
"${PIP[@]}" transformers==5.24.0 pytest
"${PIP[@]}" --no-deps \
  packaging openai typing-extensions pydantic pydantic-core typing-inspection annotated-types \
  httpx2 httpcore2 h11 idna sniffio anyio truststore certifi urllib3 requests \
  xgrammar==0.2.8 apache-tvm-ffi==0.1.11 regex numpy tqdm pyyaml filelock \
  cbor2 psutil pyzmq aiohttp yarl multidict propcache aiohappyeyeballs aiosignal frozenlist attrs \
  oss-harmony "fastapi>=0.133.0,<0.137.0" starlette annotated-doc \
  pillow pybase64 cachetools prometheus-client msgspec cloudpickle uvloop py-cpuinfo \
  partial-json-parser
# The check the tests make: vLLM's hf parser and its serving pieces import (with the stub).
"$VENV/bin/python" - "$HERE/../tests" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import vllm_harness
v = vllm_harness.load_vllm()
print("vLLM parser modules import; torch stub used:", v["stubbed_torch"])
PY
echo "install-vllm: done in $(( $(date +%s) - start )) s, $(du -sh "$VENV" | cut -f1)"
