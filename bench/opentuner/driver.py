#!/usr/bin/env python3
"""The real OpenTuner as the scalar-feedback baseline of `mapwright bench optimize`.

OpenTuner (Ansel et al., PACT 2014; the baseline of the ASI paper) tunes the
same search space the built-in proposers walk, through `mapwright bench space`
(the parameters) and `mapwright bench evaluate` (one JSON line per point, the
same simulator, machine and expert normalization). It sees only the score:
execution time, with a high penalty for a mapper that fails, as in the paper.

Each run starts from the benchmark's naive mapper (every parameter "base"),
like the built-in proposers, or with `--starts DIR` from every `.mapper` in
DIR (`bench evaluate --base FILE`), as `bench optimize --starts` does. Prints one line per (app, seed) and a summary;
`--json` prints the rows instead.

    python3 -m venv .venv && .venv/bin/pip install opentuner
    .venv/bin/python bench/opentuner/driver.py --mapwright target/release/mapwright \
        --iterations 1000 --seeds 3
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

APPS = ["circuit", "stencil", "pennant", "cannon", "summa", "pumma",
        "johnson", "solomonik", "cosma"]
# What a failing mapper "takes": far slower than any mapper that runs.
FAILURE_PENALTY_S = 1.0e6
LAYOUTS = {
    "SOA_C": {"soa": True, "c_order": True},
    "SOA_F": {"soa": True, "c_order": False},
    "AOS_C": {"soa": False, "c_order": True},
    "AOS_F": {"soa": False, "c_order": False},
}


def parameters(space):
    """(name, values) of every parameter; "base" keeps the base mapper's choice."""
    out = []
    for task, kinds in space["procs"].items():
        out.append((f"proc:{task}", ["base"] + kinds))
    for task, region in space["regions"]:
        out.append((f"mem:{task}:{region}", ["base"] + space["memories"]))
    for task in space["layout_tasks"]:
        out.append((f"layout:{task}", ["base"] + sorted(LAYOUTS)))
    for task in space["index_tasks"]:
        out.append((f"index:{task}", ["base"] + space["index_fns"]))
    for task in space["child_tasks"]:
        out.append((f"same:{task}", ["base", "on", "off"]))
    for task in space["collect_tasks"]:
        out.append((f"collect:{task}", ["base", "on", "off"]))
    return out


def point(config):
    """An OpenTuner configuration as a `mapwright bench evaluate` point."""
    p = {"procs": {}, "memories": [], "layouts": {}, "index_fns": {},
         "same_point": {}, "collect": {}}
    for name, value in config.items():
        if value == "base":
            continue
        kind, rest = name.split(":", 1)
        if kind == "proc":
            p["procs"][rest] = value
        elif kind == "mem":
            task, region = rest.split(":", 1)
            p["memories"].append([task, region, value])
        elif kind == "layout":
            p["layouts"][rest] = LAYOUTS[value]
        elif kind == "index":
            p["index_fns"][rest] = value
        elif kind == "same":
            p["same_point"][rest] = value == "on"
        elif kind == "collect":
            p["collect"][rest] = value == "on"
    return p


class Evaluator:
    """One `mapwright bench evaluate` process per app, spoken to line by line."""

    def __init__(self, mapwright, app, machine, base=None):
        cmd = [mapwright, "bench", "evaluate", "--app", app, "--machine", machine]
        if base:
            cmd += ["--base", base]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def __call__(self, p):
        self.proc.stdin.write(json.dumps(p) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("mapwright bench evaluate stopped")
        return json.loads(line)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def tune(mapwright, app, machine, seed, iterations, base=None):
    """One OpenTuner run from `base` (a mapper file; default the naive
    mapper); returns (best normalized, share of points that ran)."""
    import opentuner
    from opentuner import (ConfigurationManipulator, EnumParameter,
                           MeasurementInterface, Result)

    space = json.loads(subprocess.check_output(
        [mapwright, "bench", "space", "--app", app, "--machine", machine], text=True))
    params = parameters(space)
    evaluate = Evaluator(mapwright, app, machine, base)
    seen = {"best": 0.0, "runs": 0, "ok": 0}

    class MapperTuner(MeasurementInterface):
        def manipulator(self):
            m = ConfigurationManipulator()
            for name, values in params:
                m.add_parameter(EnumParameter(name, values))
            return m

        def run(self, desired_result, input, limit):
            answer = evaluate(point(desired_result.configuration.data))
            # OpenTuner may test a point or two past --test-limit; only the
            # naive mapper and the first `iterations` proposals count, as
            # for the built-in proposers.
            counted = seen["runs"] <= iterations
            seen["runs"] += 1
            if answer["status"] != "ok" or answer["normalized"] <= 0:
                return Result(time=FAILURE_PENALTY_S)
            if counted:
                seen["ok"] += 1
                seen["best"] = max(seen["best"], answer["normalized"])
            # Lower is better for OpenTuner: time relative to the expert's.
            return Result(time=1.0 / answer["normalized"])

        def save_final_config(self, configuration):
            pass

    with tempfile.TemporaryDirectory() as tmp:
        start = os.path.join(tmp, "naive.json")
        with open(start, "w") as f:
            json.dump({name: "base" for name, _ in params}, f)
        random.seed(seed)
        try:
            import numpy
            numpy.random.seed(seed)
        except ImportError:
            pass
        args = opentuner.default_argparser().parse_args([
            "--test-limit", str(iterations + 1),  # + the naive mapper itself
            "--database", "sqlite:///" + os.path.join(tmp, "opentuner.db"),
            "--seed-configuration", start,
            "--no-dups",
        ])
        cwd = os.getcwd()
        os.chdir(tmp)  # OpenTuner writes its files beside the database
        try:
            MapperTuner.main(args)
        finally:
            os.chdir(cwd)
            evaluate.close()
    return seen["best"], seen["ok"] / max(min(seen["runs"], iterations + 1), 1)


def self_test(mapwright, machine):
    """Checks the encoding against a live `bench evaluate` (no OpenTuner
    needed): all-"base" is the naive mapper, and the point that gives cannon's
    GEMMs the layout cuBLAS needs and spreads them runs at least at the expert's speed."""
    space = json.loads(subprocess.check_output(
        [mapwright, "bench", "space", "--app", "cannon", "--machine", machine], text=True))
    params = dict(parameters(space))
    evaluate = Evaluator(mapwright, "cannon", machine)
    try:
        naive = evaluate(point({name: "base" for name in params}))
        assert naive["status"] == "cublas_illegal_parameter", naive
        good = {name: "base" for name in params}
        good.update({"layout:task_4": "SOA_C", "same:task_4": "on",
                     "same:task_6": "on", "collect:task_4": "on"})
        for name, value in good.items():
            assert value in params[name], (name, value, params[name])
        answer = evaluate(point(good))
        # Without the expert's InstanceLimit the next step's tiles are
        # prefetched during the current GEMM: ~4.5 % above the expert.
        assert answer["status"] == "ok" and 1.0 < answer["normalized"] < 1.06, answer
    finally:
        evaluate.close()
    print("self-test passed")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mapwright", default="target/release/mapwright")
    ap.add_argument("--apps", default=",".join(APPS))
    ap.add_argument("--machine", default="p100x4")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--starts", help="run from every .mapper in this folder "
                    "(e.g. bench/starts) instead of the naive mapper")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--self-test", action="store_true",
                    help="check the encoding against mapwright (needs no OpenTuner)")
    a = ap.parse_args()
    if a.self_test:
        self_test(a.mapwright, a.machine)
        return
    import logging
    import warnings
    logging.disable(logging.WARNING)  # OpenTuner logs every new best
    warnings.filterwarnings("ignore")  # OpenTuner's SQLAlchemy 2 warnings
    starts = [("naive", None)]
    if a.starts:
        starts = [(os.path.splitext(f)[0], os.path.join(a.starts, f))
                  for f in sorted(os.listdir(a.starts)) if f.endswith(".mapper")]
    rows = []
    for start, base in starts:
        for app in a.apps.split(","):
            for seed in range(a.seeds):
                best, success = tune(a.mapwright, app, a.machine, seed,
                                     a.iterations, base)
                rows.append({"proposer": "opentuner", "start": start, "app": app,
                             "seed": seed, "iterations": a.iterations,
                             "normalized": best, "success_rate": success})
                if not a.json:
                    print(f"opentuner {a.iterations:>5} it  {start:<28} {app:<10} "
                          f"seed {seed}  {best:.3f}x  success {success:.0%}",
                          file=sys.stderr, flush=True)
    if a.json:
        print(json.dumps(rows))
        return
    print(f"{'start':<28} {'mean':>8} {'worst':>8} {'best':>8} {'success':>8}")
    for start, _ in starts:
        sel = [r for r in rows if r["start"] == start]
        vals = [r["normalized"] for r in sel]
        succ = sum(r["success_rate"] for r in sel) / len(sel)
        print(f"{start:<28} {sum(vals) / len(vals):>7.3f}x {min(vals):>7.3f}x "
              f"{max(vals):>7.3f}x {succ:>8.0%}")
    vals = [r["normalized"] for r in rows]
    print(f"\nopentuner {a.iterations} iterations: mean over starts and apps "
          f"{sum(vals) / len(vals):.3f}x, worst start/app/seed {min(vals):.3f}x")


if __name__ == "__main__":
    main()
