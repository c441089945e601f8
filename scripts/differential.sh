#!/usr/bin/env bash
# Differential testing of our engine against the reference implementation
# (transformers 5.24.0, transformers/utils/chat_parsing) on seeded random cases.
# With a reference of 5.24.0 or later (the default here) the cases also use the
# python-call-list content parser (gen.py --python-call-list).
#
# usage: scripts/differential.sh [--seed N] [--count N] [--rtpl PATH|oracle] [--out DIR]
#                                [--avoid TAG,..] [--only TAG,..] [--no-minimize] [--lenient]
#   --seed N      generator seed (default 1); --count N: base cases (default 300; each
#                 chunked case also gets its one-shot twin)
#   --rtpl PATH   the rtpl binary to test; default: cargo build --release -p rtpl.
#                 "oracle": self-test, the reference against itself (must give 0
#                 differences; the reference's own chunked-vs-one-shot artefacts must
#                 all be detected and explained)
#   --out DIR     where cases, results and differences go
#                 (default target/differential/seed<N>-n<COUNT>)
#   --avoid/--only  skip cases with / keep only cases with these tags (see gen.py)
#   --no-minimize do not shrink unexplained cases
#   --lenient     run ours in lenient mode (rtpl run-cases --lenient): where the reference
#                 succeeds the result must be identical (a tool call cut off by the end of
#                 output excepted, checked exactly); where it fails ours may succeed
# Prints `N cases, D differences (E explained, U unexplained)`; exit status 1 if any
# difference is unexplained. Details: DIR/differences.jsonl (case JSON, minimized,
# and both engines' results, unexplained first).
set -euo pipefail

seed=1 count=300 rtpl="" out="" minimize=1 avoid="" only="" lenient=""
while [ $# -gt 0 ]; do
  case "$1" in
    --seed) seed=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
    --rtpl) rtpl=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --avoid) avoid=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --no-minimize) minimize=""; shift ;;
    --lenient) lenient=1; shift ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "differential.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
# Paths given relative to the caller's directory stay valid after the cd below.
if [ -n "$rtpl" ] && [ "$rtpl" != oracle ]; then rtpl=$(realpath "$rtpl"); fi
if [ -n "$out" ]; then mkdir -p "$out" && out=$(realpath "$out"); fi

cd "$(dirname "$0")/.."
PY=$(ORACLE_TRANSFORMERS="${ORACLE_TRANSFORMERS:-5.24.0}" ../shared/oracle/setup.sh)
if [ -z "$rtpl" ]; then
  cargo build --release -p rtpl
  rtpl=$PWD/target/release/rtpl
fi
out=${out:-target/differential/seed$seed-n$count${lenient:+-lenient}}
mkdir -p "$out"
d=scripts/differential
gen_args=(--seed "$seed" --count "$count")
[ -n "$avoid" ] && gen_args+=(--avoid "$avoid")
[ -n "$only" ] && gen_args+=(--only "$only")
if "$PY" -c 'import sys, transformers; sys.exit(tuple(map(int, transformers.__version__.split(".")[:2])) < (5, 24))'; then
  gen_args+=(--python-call-list)
fi

"$PY" "$d/gen.py" "${gen_args[@]}" > "$out/cases.jsonl"
echo "generated $(grep -c . "$out/cases.jsonl") cases (with one-shot twins) in $out/cases.jsonl" >&2
"$PY" "$d/run.py" --oracle < "$out/cases.jsonl" > "$out/ref.jsonl"

if [ "$rtpl" = oracle ]; then
  echo "== self-test 1: the reference against itself (streaming check off)" >&2
  "$PY" "$d/compare.py" "$out/cases.jsonl" "$out/ref.jsonl" "$out/ref.jsonl" --ours-is-reference \
    --details "$out/selftest-identical.jsonl"
  echo "== self-test 2: an ideal engine (the reference's one-shot result for every run)" >&2
  exec "$PY" "$d/compare.py" "$out/cases.jsonl" "$out/ref.jsonl" --simulate-ideal \
    --details "$out/selftest-ideal.jsonl"
fi

ours_cmd="$(printf '%q' "$rtpl") run-cases --merge-chunks${lenient:+ --lenient}"
"$PY" "$d/run.py" --cmd "$ours_cmd" < "$out/cases.jsonl" > "$out/ours.jsonl"
cmp_args=("$out/cases.jsonl" "$out/ref.jsonl" "$out/ours.jsonl" --details "$out/differences.jsonl")
[ -n "$minimize" ] && cmp_args+=(--minimize --ours-cmd "$ours_cmd")
[ -n "$lenient" ] && cmp_args+=(--lenient)
exec "$PY" "$d/compare.py" "${cmp_args[@]}"
