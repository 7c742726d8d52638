#!/usr/bin/env bash
# Prior versus search on a real small model (docs/llm.md): mapwright optimize
# with the llm, hybrid and search proposers against SmolLM2-135M served by
# bench/llm/serve.py (one thread), from bench/starts/01-naive-gpu.mapper.
# Writes one report.json per run under $OUT (default target/llm-bench) and a
# summary table on stdout (bench/llm/summarize.py).
#   bench/llm/measure.sh [APPS...]      default: all nine
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${MAPWRIGHT_LLM_PYTHON:-target/llm-venv/bin/python}
BIN=${MAPWRIGHT_BIN:-target/debug/mapwright}
OUT=${OUT:-target/llm-bench}
ITER=${ITER:-10}
LLM_ITER=${LLM_ITER:-5}
TEMPS=${TEMPS:-"0.1 0.7 1.0"}
APPS=("$@"); [ ${#APPS[@]} -gt 0 ] || APPS=(circuit stencil cannon pennant summa pumma johnson solomonik cosma)
mkdir -p "$OUT"
coproc SERVER { exec "$PY" bench/llm/serve.py --quiet --threads 1 --ctx 8192 --predict 1024; }
read -r _ URL <&"${SERVER[0]}"
echo "model at $URL" >&2
run() { # name app proposer extra...
  local name=$1 app=$2 proposer=$3; shift 3
  local dir="$OUT/$name/$app"
  [ -f "$dir/report.json" ] && return 0
  mkdir -p "$dir"; cp bench/starts/01-naive-gpu.mapper "$dir/m.mapper"
  "$BIN" optimize "$dir/m.mapper" --app "$app" --proposer "$proposer" --iterations "$ITER" \
    --run-dir "$dir" --llm-base-url "$URL" --llm-model smollm2 --llm-timeout 180 "$@" \
    > "$dir/stdout.txt" 2> "$dir/progress.txt" || echo "failed: $name $app" >&2
}
for app in "${APPS[@]}"; do
  run search "$app" search
  run hybrid-structured "$app" hybrid --llm-output structured --llm-temperature 0.7 --llm-max-tokens 400
done
for app in "${APPS[@]:0:3}"; do
  for t in $TEMPS; do
    ITER=$LLM_ITER run "llm-structured-t$t" "$app" llm --llm-output structured --llm-temperature "$t" --llm-max-tokens 400
  done
  ITER=$LLM_ITER run llm-structured-t0.7-exec "$app" llm --llm-output structured --llm-temperature 0.7 --llm-max-tokens 400 --feedback execution-only
done
for app in "${APPS[@]:0:1}"; do
  ITER=3 run llm-text-t0.7 "$app" llm --llm-output text --llm-temperature 0.7 --llm-max-tokens 400 --llm-retries 0
done
"$PY" bench/llm/summarize.py "$OUT"
