#!/usr/bin/env bash
# Installs what python/tests/test_sglang.py needs: SGLang 0.5.23's parser and grammar-backend
# code, without torch or CUDA.  (draft; header completed below)
set -euo pipefail
VENV=${1:-/work/venvs/sglang}
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
echo "install-sglang: done in $(( $(date +%s) - start )) s, $(du -sh "$VENV" | cut -f1)"
