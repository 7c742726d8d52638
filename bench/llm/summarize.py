#!/usr/bin/env python3
"""Summarizes bench/llm/measure.sh's reports: per configuration, the mean
best normalized throughput, the success rate, the share of valid proposals
(an answer that became a mapper that compiles and resolves), the parameter
entropy, the feedback sensitivity, and seconds and tokens per request."""
import json, math, os, sys

root = sys.argv[1] if len(sys.argv) > 1 else "target/llm-bench"
COMPILE_FAIL = {"proposer_error", "compile_error"}


def proposals_with_parameters(records):
    # As mapwright computes them: an answer that could not be used is no
    # proposal (reports written before that rule still carry its parameters).
    return [x for x in records if x["parameters"] and x["evaluation"]["status"] != "proposer_error"]


def entropy(records):
    props = [x for x in proposals_with_parameters(records) if x["iteration"] > 0]
    if not props:
        return 0.0
    keys = sorted({k for x in props for k in x["parameters"]})
    total = 0.0
    for k in keys:
        counts = {}
        for x in props:
            v = x["parameters"].get(k, "")
            counts[v] = counts.get(v, 0) + 1
        total += sum(-(c / len(props)) * math.log2(c / len(props)) for c in counts.values())
    return total / len(keys)


def sensitivity(records):
    xs = proposals_with_parameters(records)
    if len(xs) < 2:
        return 0.0
    s = 0.0
    for a, b in zip(xs, xs[1:]):
        keys = set(a["parameters"]) | set(b["parameters"])
        s += sum(a["parameters"].get(k) != b["parameters"].get(k) for k in keys) / max(len(keys), 1)
    return s / (len(xs) - 1)


rows = []
for name in sorted(os.listdir(root)):
    d = os.path.join(root, name)
    if not os.path.isdir(d):
        continue
    for app in sorted(os.listdir(d)):
        f = os.path.join(d, app, "report.json")
        if not os.path.isfile(f):
            continue
        r = json.load(open(f))
        props = [x for x in r["records"][1:]]
        if r["proposer"] == "hybrid":
            # The LLM's turns: a strategy, or an unusable answer given to search.
            llm = [x for x in props if x["rationale"].startswith("LLM strategy")
                   or "the LLM's answer was unusable" in x["rationale"]]
            valid = [x for x in llm if x["rationale"].startswith("LLM strategy")
                     and x["evaluation"]["status"] not in COMPILE_FAIL]
        else:
            llm = props
            valid = [x for x in llm if x["evaluation"]["status"] not in COMPILE_FAIL]
        u = r.get("usage") or {}
        rows.append((name, app, r.get("best_normalized") or 0.0, r["success_rate"], len(valid), len(llm),
                     entropy(r["records"]), sensitivity(r["records"]), u.get("requests", 0),
                     u.get("prompt_tokens", 0), u.get("completion_tokens", 0),
                     {x["evaluation"]["status"] for x in props}))
print(f"{'config':28} {'app':10} {'best':>7} {'success':>7} {'valid':>7} {'entropy':>7} {'sensit':>6} {'req':>4} {'tok/req':>9}")
for n, a, b, s, v, l, e, fs, rq, pt, ct, st in rows:
    tok = f"{pt//rq}+{ct//rq}" if rq else "-"
    print(f"{n:28} {a:10} {b:7.3f} {s:7.0%} {v:>3}/{l:<3} {e:7.2f} {fs:6.2f} {rq:4} {tok:>9}")
by = {}
for n, a, b, s, v, l, e, fs, *_ in rows:
    by.setdefault(n, []).append((b, s, v, l, e, fs))
print()
print(f"{'config':28} {'apps':>4} {'mean best':>9} {'success':>7} {'valid':>7} {'entropy':>7} {'sensit':>6}")
for n, xs in by.items():
    k = len(xs)
    v = sum(x[2] for x in xs); l = sum(x[3] for x in xs)
    print(f"{n:28} {k:4} {sum(x[0] for x in xs)/k:9.3f} {sum(x[1] for x in xs)/k:7.0%} "
          f"{(v/l if l else 0):7.0%} {sum(x[4] for x in xs)/k:7.2f} {sum(x[5] for x in xs)/k:6.2f}")
