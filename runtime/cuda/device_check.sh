#!/usr/bin/env bash
# The cuda backend's device check (runtime/CUDA.md): run in the repository
# root on a machine with an NVIDIA GPU, within about 8 minutes on one H200.
#
#   1. finds the CUDA libraries (driver, NVRTC, cuBLAS) for the loader;
#   2. builds `mapwright` with `--features cuda` in release when cargo is
#      there (offline), else uses a binary built elsewhere and carried in
#      .cuda-bin/mapwright (the device machine has no Rust and no registry);
#   3. optionally runs the runtime's cuda tests (GPU tests included) when
#      cargo is there;
#   4. calibrates the machine (`mapwright calibrate --backend cuda`);
#   5. runs all nine benchmarks with the expert and a default mapper on the
#      GPU (`mapwright run --backend cuda --json`), each checked against the
#      CPU reference, with the simulator's prediction for the same problem;
#   5b. runs the experts again on the uncalibrated description (the
#      simulator's uncalibrated prediction) and a failing mapper (cannon's
#      expert with F_order layouts);
#   5c. runs `mapwright optimize --backend cuda --iterations 10` from three
#      naive starts (circuit, pennant, cannon), time-boxed;
#   6. writes $OUT/cuda_report.md (figures and tables), $OUT/runs.json,
#      $OUT/machine.json, $OUT/machine-uncalibrated.json,
#      $OUT/calibration.json, $OUT/raw.tar.gz (every run's output) and
#      $OUT/device_check.log.
#
# Environment: OUT (default ./cuda-out), MAPWRIGHT_CUDA_SCALE (default 1/64
# of each benchmark's data), RUN_TIMEOUT per run in seconds (default 120),
# DEADLINE for the whole check in seconds (default 500), SKIP_OPTIMIZE
# (set: no optimize runs), MAPWRIGHT_CUDA_VERIFY (0: no CPU reference check,
# for larger scales).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/cuda-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/device_check.log") 2>&1
START=$(date +%s)
RUN_TIMEOUT=${RUN_TIMEOUT:-120}
export MAPWRIGHT_CUDA_SCALE=${MAPWRIGHT_CUDA_SCALE:-1/64}
WORK=$(mktemp -d)
elapsed() { echo "$(( $(date +%s) - START ))s"; }
# Seconds the whole check may take (the device lease is short): the later,
# optional steps shrink or are skipped to leave time for the report.
DEADLINE=${DEADLINE:-500}
left() { echo $(( DEADLINE - ($(date +%s) - START) )); }

echo "== device_check $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1 | tee "$WORK/gpus.csv"

# 1. CUDA libraries.
libdirs=""
for lib in libnvrtc.so libcublas.so libcuda.so; do
  for root in /usr/local/cuda /usr/local/cuda/targets/x86_64-linux /usr/local/nvidia /usr/lib/x86_64-linux-gnu /usr/lib64; do
    for f in "$root"/lib64/$lib* "$root"/lib/$lib* "$root"/$lib*; do
      [ -e "$f" ] && libdirs="$libdirs:$(dirname "$f")" && break 2
    done
  done
done
# Python wheels (nvidia-cublas, nvidia-cuda-nvrtc) as a fallback.
if command -v python3 >/dev/null; then
  pylibs=$(python3 - <<'PY' 2>/dev/null
import glob, os, site
dirs = set()
for s in site.getsitepackages():
    for pat in ("nvidia/*/lib", "nvidia/cu*/lib"):
        for d in glob.glob(os.path.join(s, pat)):
            if glob.glob(os.path.join(d, "libnvrtc.so*")) or glob.glob(os.path.join(d, "libcublas.so*")):
                dirs.add(d)
print(":".join(sorted(dirs)))
PY
)
  [ -n "$pylibs" ] && libdirs="$libdirs:$pylibs"
fi
export LD_LIBRARY_PATH="${libdirs#:}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"

# 2. The binary.
BIN=""
if command -v cargo >/dev/null; then
  echo "== building (release, --features cuda) [$(elapsed)]"
  if timeout 300 cargo build --release --offline -p mapwright --features cuda; then
    BIN=target/release/mapwright
  fi
fi
if [ -z "$BIN" ] && [ -x .cuda-bin/mapwright ]; then
  BIN=.cuda-bin/mapwright
  echo "== using the carried binary $BIN"
fi
if [ -z "$BIN" ]; then
  echo "no mapwright binary: build one with 'cargo build --release -p mapwright --features cuda'"
  echo "and copy it to .cuda-bin/mapwright (see runtime/CUDA.md)"
  exit 1
fi
"$BIN" --version

# 3. Tests, where cargo is.
if command -v cargo >/dev/null; then
  echo "== cuda tests [$(elapsed)]"
  timeout 240 cargo test --release --offline -p mapwright-runtime --features cuda --lib cuda:: -- --nocapture 2>&1 | tail -40
fi

# 4. Calibration.
echo "== calibrate [$(elapsed)]"
# The experts are written for four GPUs per node: with fewer, four logical
# GPUs share them (one stream each, a share of the rates each).
LOGICAL=4
timeout 180 "$BIN" calibrate --backend cuda --logical-gpus $LOGICAL --out "$OUT/machine.json" --report "$OUT/calibration.json"
MACHINE_ARGS=()
[ -s "$OUT/machine.json" ] && MACHINE_ARGS=(--machine "$OUT/machine.json")
# The same machine from the device attributes alone (datasheet rates), for
# the simulator's uncalibrated predictions.
timeout 60 "$BIN" calibrate --backend cuda --uncalibrated --logical-gpus $LOGICAL --out "$OUT/machine-uncalibrated.json"

# The expert mapper file of an app (runtime/apps/experts/).
expert_of() {
  ls runtime/apps/experts/ | grep -E "^(legion-$1|taco-${1}(MM)?-cuda)\.mapper$" | head -1
}

# 5. The nine benchmarks, expert and default mappers.
printf 'Task * GPU,OMP,CPU;\nRegion * * GPU FBMEM;\nRegion * * * SYSMEM;\n' > "$WORK/default-legion.mapper"
printf 'Task * GPU,OMP,CPU;\nRegion * * GPU FBMEM;\nRegion * * * SYSMEM;\nLayout * * * SOA C_order;\n' > "$WORK/default-distal.mapper"
mkdir -p "$WORK/runs"
for app in circuit stencil pennant cannon summa pumma johnson solomonik cosma; do
  expert=$(expert_of "$app")
  case $app in circuit|stencil|pennant) def=default-legion ;; *) def=default-distal ;; esac
  for which in expert default; do
    if [ $which = expert ]; then file=runtime/apps/experts/$expert; else file=$WORK/$def.mapper; fi
    echo "== $app / $which ($file) [$(elapsed)]"
    timeout "$RUN_TIMEOUT" "$BIN" run "$file" --app "$app" "${MACHINE_ARGS[@]}" --backend cuda --json --no-normalize \
      > "$WORK/runs/$app-$which.json" 2> "$WORK/runs/$app-$which.err"
    echo "   exit $? $(head -c 300 "$WORK/runs/$app-$which.err")"
  done
done

# 5b. The experts again on the uncalibrated description (a second measurement
# of each, and the uncalibrated prediction), and a failing mapper: cannon's
# expert with F_order layouts, which cuBLAS's column-major GEMM rejects.
for app in circuit stencil pennant cannon summa pumma johnson solomonik cosma; do
  expert=$(expert_of "$app")
  [ "$(left)" -lt 150 ] && { echo "== $app / expert, uncalibrated: skipped, $(left)s left"; continue; }
  echo "== $app / expert, uncalibrated machine [$(elapsed)]"
  timeout "$RUN_TIMEOUT" "$BIN" run "runtime/apps/experts/$expert" --app "$app" --machine "$OUT/machine-uncalibrated.json" \
    --backend cuda --json --no-normalize > "$WORK/runs/$app-uncal.json" 2> "$WORK/runs/$app-uncal.err"
  echo "   exit $?"
done
sed 's/C_order/F_order/g' runtime/apps/experts/taco-cannonMM-cuda.mapper > "$WORK/cannon-f-order.mapper"
echo "== cannon / F_order [$(elapsed)]"
timeout "$RUN_TIMEOUT" "$BIN" run "$WORK/cannon-f-order.mapper" --app cannon "${MACHINE_ARGS[@]}" --backend cuda --json --no-normalize \
  > "$WORK/runs/cannon-forder.json" 2> "$WORK/runs/cannon-forder.err"
echo "   exit $?"

# 5c. The optimizer on the GPU: three naive starts (a Legion app, a Regent
# app, a DISTAL GEMM), 10 proposals each, every candidate run on the GPU.
mkdir -p "$WORK/optimize"
cp "$WORK/default-legion.mapper" "$WORK/optimize/circuit.mapper"
cp "$WORK/default-legion.mapper" "$WORK/optimize/pennant.mapper"
cp server/examples/naive-cannon.mapper "$WORK/optimize/cannon.mapper"
n=3
for app in circuit pennant cannon; do
  budget=$(( ($(left) - 20) / n )); n=$((n - 1))
  [ "$budget" -gt 150 ] && budget=150
  [ -n "${SKIP_OPTIMIZE:-}" ] && { echo "== optimize $app: skipped (SKIP_OPTIMIZE)"; continue; }
  [ "$budget" -lt 15 ] && { echo "== optimize $app: skipped, $(left)s left"; continue; }
  echo "== optimize $app (at most ${budget}s) [$(elapsed)]"
  timeout $((budget + 20)) "$BIN" optimize "$WORK/optimize/$app.mapper" --app "$app" "${MACHINE_ARGS[@]}" --backend cuda \
    --iterations 10 --time-budget "$budget" --json > "$WORK/optimize/$app.json" 2> "$WORK/optimize/$app.err"
  echo "   exit $? $(tail -c 300 "$WORK/optimize/$app.err")"
done
tar -C "$WORK" -czf "$OUT/raw.tar.gz" runs optimize cannon-f-order.mapper gpus.csv 2>/dev/null

# 6. The report.
echo "== report [$(elapsed)]"
python3 - "$WORK" "$OUT" <<'PY'
import json, os, sys, glob, datetime
work, out = sys.argv[1], sys.argv[2]
apps = ["circuit", "stencil", "pennant", "cannon", "summa", "pumma", "johnson", "solomonik", "cosma"]
def load(p):
    """A run's JSON, or its error output when it gave none."""
    try:
        return json.load(open(p))
    except Exception as e:
        q = p.replace(".json", ".err")
        err = open(q).read() if os.path.exists(q) else ""
        return {"status": "no_result", "error": (err or str(e))[-500:]}
runs = {}
for app in apps:
    for which in ("expert", "default"):
        runs[f"{app}/{which}"] = load(os.path.join(work, "runs", f"{app}-{which}.json"))
for app in apps:
    runs[f"{app}/expert-uncalibrated"] = load(os.path.join(work, "runs", f"{app}-uncal.json"))
runs["cannon/expert-F_order"] = load(os.path.join(work, "runs", "cannon-forder.json"))
opts = {app: load(os.path.join(work, "optimize", f"{app}.json")) for app in ("circuit", "pennant", "cannon")}
json.dump({"runs": runs, "optimize": {a: {k: v for k, v in o.items() if k != "records"} for a, o in opts.items()}},
          open(os.path.join(out, "runs.json"), "w"), indent=1)
gpus = open(os.path.join(work, "gpus.csv")).read().strip().splitlines()
cal = {}
try:
    cal = json.load(open(os.path.join(out, "calibration.json")))
except Exception:
    pass
L = []
L.append("# cuda backend device check\n")
L.append(f"Date: {datetime.datetime.utcnow().strftime('%Y-%m-%d %H:%M UTC')}  ")
L.append(f"GPU: {gpus[1] if len(gpus) > 1 else 'unknown'}  ")
L.append(f"Problem scale: {os.environ.get('MAPWRIGHT_CUDA_SCALE')} of each benchmark's data  ")
L.append(f"CPU reference check: {'off' if os.environ.get('MAPWRIGHT_CUDA_VERIFY') == '0' else 'on'}  ")
try:
    mname = json.load(open(os.path.join(out, "machine.json")))["name"]
except Exception:
    mname = "none (calibration failed)"
L.append(f"Machine description: {mname} (calibrated; 4 logical GPUs share the physical ones when there are fewer)\n")
if cal:
    c = cal["calibration"]
    peak64 = cal.get("peak_fp64_tensor_gflops") or cal["peak_fp64_gflops"]
    dg = c.get("dgemm_gflops") or 0
    d2d = c.get("d2d_gbps") or 0
    L.append("## Calibration\n")
    L.append("| figure | measured | peak | of peak |")
    L.append("| --- | --- | --- | --- |")
    L.append(f"| DGEMM n={cal['gemm_n']} (cuBLAS) | {dg/1e3:.2f} TFLOP/s | {peak64/1e3:.2f} TFLOP/s FP64{' (tensor)' if cal.get('peak_fp64_tensor_gflops') else ''} | {dg/peak64*100:.0f} % |")
    L.append(f"| device memory copy (read + write) | {d2d:.0f} GB/s | {cal['peak_mem_gbps']:.0f} GB/s | {d2d/cal['peak_mem_gbps']*100:.0f} % |")
    for k, name in (("h2d_gbps", "host to device (pinned)"), ("d2h_gbps", "device to host (pinned)"),
                    ("peer_gbps", "GPU to GPU"), ("zero_copy_gbps", "kernel writing zero-copy memory")):
        if c.get(k):
            L.append(f"| {name} | {c[k]:.1f} GB/s | | |")
    if c.get("launch_us"):
        L.append(f"| kernel launch + wait | {c['launch_us']:.1f} us | | |")
    L.append("")
L.append("## Benchmarks: measured vs simulated (same scaled problem, calibrated machine)\n")
L.append("| app | mapper | status | measured s | predicted s | predicted / measured | checked |")
L.append("| --- | --- | --- | --- | --- | --- | --- |")
for key, r in runs.items():
    app, which = key.split("/")
    if which not in ("expert", "default"):
        continue
    st = r.get("status")
    m = r.get("elapsed_s"); p = r.get("predicted_elapsed_s")
    ratio = f"{p/m:.2f}" if m and p else ""
    raw = r.get("raw_output", "")
    checked = "yes" if "match the CPU reference" in raw else ""
    L.append(f"| {app} | {which} | {st} | {m if m is None else f'{m:.6f}'} | {p if p is None else f'{p:.6f}'} | {ratio} | {checked} |")
L.append("")
L.append("## Expert vs default (measured and simulated speed-up of the expert)\n")
L.append("| app | measured | simulated |")
L.append("| --- | --- | --- |")
for app in apps:
    e, d = runs.get(f"{app}/expert", {}), runs.get(f"{app}/default", {})
    def sp(a, b):
        return f"{b/a:.2f}x" if a and b else "n/a"
    L.append(f"| {app} | {sp(e.get('elapsed_s'), d.get('elapsed_s'))} | {sp(e.get('predicted_elapsed_s'), d.get('predicted_elapsed_s'))} |")
L.append("")
L.append("## Simulator prediction error per app, expert mappers (predicted / measured)\n")
L.append("| app | measured s (calibrated run) | calibrated prediction | ratio | measured s (second run) | uncalibrated prediction | ratio |")
L.append("| --- | --- | --- | --- | --- | --- | --- |")
def fmt(v):
    return "" if v is None else f"{v:.6f}"
def rat(p, m):
    return f"{p/m:.2f}" if p and m else "n/a"
for app in apps:
    c, u = runs.get(f"{app}/expert", {}), runs.get(f"{app}/expert-uncalibrated", {})
    L.append(f"| {app} | {fmt(c.get('elapsed_s'))} | {fmt(c.get('predicted_elapsed_s'))} | {rat(c.get('predicted_elapsed_s'), c.get('elapsed_s'))} "
             f"| {fmt(u.get('elapsed_s'))} | {fmt(u.get('predicted_elapsed_s'))} | {rat(u.get('predicted_elapsed_s'), u.get('elapsed_s'))} |")
f = runs.get("cannon/expert-F_order", {})
L.append("")
L.append(f"## A failing mapper: cannon's expert with F_order layouts\n\nstatus: {f.get('status')}\n\n```\n{(f.get('raw_output') or f.get('error') or '').strip()[-800:]}\n```\n")
L.append("## optimize --backend cuda --iterations 10 (search proposer)\n")
L.append("| app | start | status | best normalized | best iteration | trajectory (best normalized after each proposal) |")
L.append("| --- | --- | --- | --- | --- | --- |")
for app, o in opts.items():
    traj = " ".join(f"{v:.3f}" for v in o.get("trajectory", []))
    start = "server/examples/naive-cannon.mapper" if app == "cannon" else "default-legion"
    st = "ran" if "trajectory" in o else o.get("status")
    L.append(f"| {app} | {start} | {st} | {o.get('best_normalized')} | {o.get('best_iteration')} | {traj} |")
    if "trajectory" not in o:
        L.append(f"\n```\n{o.get('error', '')[-400:]}\n```\n")
bad = [k for k, r in runs.items() if r.get("status") in ("wrong_result", "no_result", "error", "internal_error") and k != "cannon/expert-F_order"]
L.append("")
L.append(f"Runs that failed to produce a checked result: {', '.join(bad) if bad else 'none'}.")
if bad:
    first = runs[bad[0]]
    msg = first.get("error") or first.get("raw_output") or ""
    L.append(f"\nFirst failure ({bad[0]}):\n\n```\n{msg.strip()[:800]}\n```")
open(os.path.join(out, "cuda_report.md"), "w").write("\n".join(L) + "\n")
print("\n".join(L))
PY
echo "== done in $(elapsed)"
