#!/usr/bin/env bash
# The real-Legion check for a machine with an NVIDIA driver: the same
# programs and mapper, built the same way, run with the real libcuda (sdk.sh
# builds the stub only where no driver is present). Run it when a GPU is
# lent (runtime/legion/gpu_check.sh from the checkout root); it prints
# every figure with the GPU, the date and the command, and exits nonzero if
# a check fails. About 2 minutes, most of it the first build.
#
# What it checks:
#  1. the mapper describes the host with its GPUs, framebuffers and
#     zero-copy memory (Legion's machine query through the real driver);
#  2. circuit with the expert mapper adapted to CPU placement functions
#     runs to completion with -ll:gpu 1 and its decision log equals
#     `explain` for that host (the programs have CPU variants only until
#     GPU variants land, so every task runs on the CPUs);
#  3. the expert as written stops with the reference's message, as
#     `explain` predicts for that host.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-target/legion-gpu-check}"
mkdir -p "$out"
echo "== $(date -u '+%Y-%m-%d %H:%M UTC') on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || echo 'no nvidia-smi')"
eval "$(runtime/legion/sdk.sh --env)"
case "$LD_LIBRARY_PATH" in *cuda-stub*) echo "FAIL: no NVIDIA driver found (sdk.sh chose the stub)"; exit 1;; esac
# Only circuit runs here: a lent machine may have no CPU BLAS for the
# DISTAL programs.
build="$(MAPWRIGHT_LEGION_APPS=circuit runtime/legion/build.sh)"
cargo build --quiet -p mapwright
mw=target/debug/mapwright
gpus="${GPUS:-1}"
flags=(-ll:cpu 4 -ll:util 1 -ll:gpu "$gpus" -ll:fsize 1024 -ll:zsize 256 -tm:use_semantic_name)
expert=runtime/apps/experts/legion-circuit.mapper
sed 's/return mgpu\[task.ipoint\[0\] \/ mgpu.size\[1\], task.ipoint\[0\] % mgpu.size\[1\]\]/return mcpu[task.ipoint[0] \/ mcpu.size[1], task.ipoint[0] % mcpu.size[1]]/' \
  "$expert" > "$out/expert-cpu.mapper"
status=0
for m in expert-cpu expert; do
  file="$out/$m.mapper"; [ "$m" = expert ] && file="$expert"
  cmd=("$build/bin/circuit" "${flags[@]}" -mapping "$file" -mapwright:log "$out/$m.jsonl" -mapwright:machine "$out/host.json")
  echo "== ${cmd[*]}"
  set +e; "${cmd[@]}" > "$out/$m.out" 2>&1; rc=$?; set -e
  grep -E "ELAPSED TIME|GFLOPS|CHECK|actually mapped|error" "$out/$m.out" | grep -v WARNING || true
  echo "exit status $rc"
  "$mw" explain "$file" --app circuit --machine "$out/host.json" --json > "$out/$m.explain.json"
  python3 - "$out/$m.explain.json" "$out/$m.jsonl" "$rc" "$m" <<'PY' || status=1
import json, sys
explain = json.load(open(sys.argv[1])); rc = int(sys.argv[3]); name = sys.argv[4]
log = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
tasks = {t["task"]: t for t in explain["tasks"]}
bad = []
for m in log:
    t = tasks.get(m["task"])
    if t is None: bad.append(f"{m['task']}: unknown to explain"); continue
    if t["proc_kind"] != m["proc_kind"]: bad.append(f"{m['task']}: {m['proc_kind']} vs {t['proc_kind']}")
    p = [p for p in t["placement"] if p["point"] == m["point"]] or (t["placement"] if len(t["placement"]) == 1 else [])
    if not p or (p[0]["node"], p[0]["proc"]) != (m["node"], m["proc"]): bad.append(f"{m['task']} {m['point']}: placement")
    for r in m["regions"]:
        d = [x for x in t["regions"] if x["index"] == r["index"]][0]
        if r["instance"] == "physical" and (d["memory"] != r["memory"] or not r.get("layout_holds")):
            bad.append(f"{m['task']} arg {r['index']}: {r.get('memory')} vs {d['memory']}")
fatal = explain.get("fatal")
print(f"{name}: {len(log)} mapped tasks, {len(bad)} differences from explain; explain's fatal: {fatal and fatal['raw_output']}")
for b in bad[:20]: print("  ", b)
ok = not bad and ((rc == 0) == (fatal is None))
print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY
done
python3 - "$out/host.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
kinds = {p["kind"]: p["count"] for p in m["node"]["processors"]}
mems = {x["kind"]: x["count"] for x in m["node"]["memories"]}
print("host as Legion reports it:", kinds, mems)
if kinds.get("GPU", 0) < 1 or "FBMEM" not in mems: print("FAIL: no GPU in the host description"); sys.exit(1)
PY
exit $status
