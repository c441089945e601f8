#!/usr/bin/env bash
# Throughput of our parser against smg-response-template 0.1.0 and the reference
# (transformers 5.24.0, transformers/utils/chat_parsing) on generated realistic outputs
# (bench/: SmolLM3, Qwen3-Coder and a regex-heavy template at 10 KB, 100 KB and 2 MB;
# one-shot, 16-byte and 4-byte chunks). Prints one Markdown table with all three columns.
#
# usage: scripts/bench-vs-reference.sh [--quick] [--runs N] [--slow-runs N] [--timeout S]
#   --quick        skip the reference's streaming runs at 2 MB (minutes each)
#   --runs N       runs per measurement, median reported (default 7 for ours and smg,
#                  5 for the reference; at least 5)
#   --slow-runs N  the reference's runs at 2 MB (default 1: one run takes 25-100 s there;
#                  the table says how many runs a cell took when fewer than 5)
#   --timeout S    give up a reference run after S seconds and report a bound (default 150)
# Needs ../shared/oracle/setup.sh (the reference's virtual environment; it is made if
# missing). Takes about 12-15 minutes on a 2-core machine (about 4 without the 2 MB
# streaming runs of the reference). Inputs, messages and raw results go to
# target/bench-inputs/.
set -euo pipefail

quick="" runs=7 ref_runs=5 slow_runs=1 timeout=150
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=--quick; shift ;;
    --runs) runs=$2; ref_runs=$2; shift 2 ;;
    --slow-runs) slow_runs=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "bench-vs-reference.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

cd "$(dirname "$0")/.."
out=target/bench-inputs
python=$(ORACLE_TRANSFORMERS="${ORACLE_TRANSFORMERS:-5.24.0}" ../shared/oracle/setup.sh target/oracle-venv | tail -n 1)

echo "== build (release)" >&2
cargo build --release -q -p response-bench --bin compare

echo "== ours and smg (inputs -> $out)" >&2
rm -f "$out/reference.json"
target/release/compare --out "$out" --runs "$runs" > /dev/null

echo "== reference" >&2
"$python" scripts/bench_reference.py "$out" --runs "$ref_runs" --slow-runs "$slow_runs" \
  --timeout "$timeout" $quick 2> >(grep --line-buffered -v 'PyTorch was not found' >&2)

echo "== $(uptime)" >&2
target/release/compare --out "$out" --table-only
