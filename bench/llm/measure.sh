#!/usr/bin/env bash
# Prior versus search on a real small model (docs/llm.md): `mapwright bench
# optimize` with the search, hybrid and llm proposers against SmolLM2-135M
# served by bench/llm/serve.py (one thread), from the benchmark's start
# (`Task * GPU,CPU;`), several seeds each (mean, worst and best per app).
# Writes one text report per bench run under $OUT (default target/llm-bench);
# a report already there is kept, so an interrupted run resumes.
#   bench/llm/measure.sh [APPS...]      default: all nine
# Stages: hybrid against search on every app ($SEEDS seeds, $ITER
# iterations); the llm proposer alone on $GRID_APPS at each temperature with
# and without AutoGuide's feedback, structured ($GRID_SEEDS seeds,
# $LLM_ITER iterations); free text on the first of $GRID_APPS; and, stage
# `measured` (not in the default $STAGES: it needs real Legion), the llm
# proposer on real Legion ($LEGION_CPUS CPUs) on $GRID_APPS with and without
# the measured figures in its prompt ($SEEDS seeds, $LLM_ITER iterations).
#   STAGES=measured bench/llm/measure.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${MAPWRIGHT_LLM_PYTHON:-target/llm-venv/bin/python}
BIN=${MAPWRIGHT_BIN:-target/debug/mapwright}
OUT=${OUT:-target/llm-bench}
SEEDS=${SEEDS:-3}
GRID_SEEDS=${GRID_SEEDS:-2}
ITER=${ITER:-10}
LLM_ITER=${LLM_ITER:-5}
TEXT_ITER=${TEXT_ITER:-3}
TEMPS=${TEMPS:-"0.1 0.7 1.0"}
GRID_APPS=${GRID_APPS:-"circuit,stencil,cannon"}
LEGION_CPUS=${LEGION_CPUS:-4}
STAGES=${STAGES:-"hybrid grid text"}
APPS=("$@"); [ ${#APPS[@]} -gt 0 ] || APPS=(circuit stencil cannon pennant summa pumma johnson solomonik cosma)
mkdir -p "$OUT"
coproc SERVER { exec "$PY" bench/llm/serve.py --quiet --threads 1 --ctx 8192 --predict 1024; }
read -r _ URL <&"${SERVER[0]}"
echo "model at $URL" >&2
bench() { # name args...: one `bench optimize` into $OUT/name.txt
  local name=$1; shift
  [ -s "$OUT/$name.txt" ] && return 0
  local t0=$SECONDS
  if "$BIN" bench optimize --scalar-long 0 --llm-base-url "$URL" --llm-model smollm2 \
      --llm-timeout 180 --llm-max-tokens 400 "$@" > "$OUT/$name.part" 2>&1; then
    echo "# $(date -u +%FT%TZ), $((SECONDS - t0)) s: bench optimize $*" >> "$OUT/$name.part"
    mv "$OUT/$name.part" "$OUT/$name.txt"
  else
    echo "failed: $name (see $OUT/$name.part)" >&2
  fi
  echo "$name: $((SECONDS - t0)) s" >&2
}
for stage in $STAGES; do
  case $stage in
    hybrid)
      for app in "${APPS[@]}"; do
        bench "hybrid-vs-search-$app" --apps "$app" --proposers search,hybrid --seeds "$SEEDS" \
          --iterations "$ITER" --llm-output structured --llm-temperature 0.7
      done ;;
    grid)
      for t in $TEMPS; do
        bench "llm-structured-t$t" --apps "$GRID_APPS" --proposers llm --feedback suggest,execution-only \
          --seeds "$GRID_SEEDS" --iterations "$LLM_ITER" --llm-output structured --llm-temperature "$t"
      done ;;
    measured)
      for with in with without; do
        flag=(); [ $with = without ] && flag=(--llm-no-measurements)
        bench "llm-legion-$with-measurements" --backend legion --legion-cpus "$LEGION_CPUS" \
          --apps "$GRID_APPS" --proposers llm --seeds "$SEEDS" --iterations "$LLM_ITER" \
          --llm-output structured --llm-temperature 0.7 ${flag[@]+"${flag[@]}"}
      done ;;
    text)
      bench "llm-text-t0.7" --apps "${GRID_APPS%%,*}" --proposers llm --feedback suggest,execution-only \
        --seeds "$GRID_SEEDS" --iterations "$TEXT_ITER" --llm-output text --llm-temperature 0.7 --llm-retries 0 ;;
  esac
done
