#!/usr/bin/env python3
"""Peak memory of `mapwright check FILE` and `mapwright fmt FILE` over
generated inputs of several kinds, sizes and seeds, by two measures:

- heap: the most heap bytes live at once while the command ran, counted
  exactly by `mapwright-heap` (the same command-line code under a counting
  allocator; see `server/src/bin/mapwright-heap.rs`), divided by the size
  of FILE. Nothing is subtracted: it includes the text read, tokens, tree,
  names, checker tables, diagnostics, rendering and output buffers. It
  leaves out what does not grow with the input: the binary, libc, thread
  stacks and the allocator's own arenas and page rounding.
- rss: (peak RSS of the command on FILE - peak RSS on an empty file) /
  size of FILE, peak RSS as `/usr/bin/time -f %M` reports it. Noisy below
  100 KB, where arenas and page granularity dominate.

Prints one row per input and the worst case and mean per command and
measure.

Usage: bench/memory/run.py [--bin target/release/mapwright]
       [--heap-bin BIN_DIR/mapwright-heap] [--seeds 3] [--scale 1.0]
       [--corpus ../shared/corpus] [--only KIND] [--heap-only]

--heap-only skips the rss measure (the exact heap count does not depend on
the machine's load, so it can run while builds do).
"""
import json
import argparse, os, random, subprocess, sys, tempfile, glob

def random_bytes(rng, n):
    return bytes(rng.getrandbits(8) for _ in range(n))

TOKENS = ["Task", "Region", "Layout", "GPU", "CPU", "FBMEM", "SYSMEM", "def", "return",
          "m", "x", "t", "(", ")", "[", "]", "{", "}", ";", ",", ".", "=", "+", "*",
          "?", ":", "0", "1", "42", "\"s\"", "merge", "split", "Machine", "\n", "#c\n"]

def random_tokens(rng, n):
    out, size = [], 0
    while size < n:
        t = rng.choice(TOKENS); out.append(t); size += len(t) + 1
    return " ".join(out).encode()

def numbered_lines(n, line):
    """`line(i)` for i = 0, 1, ... until the text reaches n bytes."""
    out, size, i = [], 0, 0
    while size < n:
        s = line(i); out.append(s); size += len(s); i += 1
    return "".join(out).encode()

def statements(rng, n):
    return numbered_lines(n, lambda i: f"x{i} = {rng.randrange(1000)} + 1;\n")

def rules(rng, n):
    # One mapping rule a line, each with its own key: the streaming check
    # keeps one entry per key to find shadowed rules (14x the file at
    # 18 MB when the entry was the key itself).
    kinds = ["Task t{i} GPU;\n", "Region t{i} r{r} GPU FBMEM;\n",
             "Layout t{i} * * SOA C_order;\n", "InstanceLimit t{i} 4;\n"]
    return numbered_lines(n, lambda i: rng.choice(kinds).format(i=i, r=rng.randrange(8)))

def task_rules(rng, n):
    # The shortest rule, so the most keys a byte: `Task NAME PROC;`.
    return numbered_lines(n, lambda i: f"Task task_{i} {rng.choice(['GPU', 'CPU', 'OMP'])};\n")

def deep_nesting(rng, n):
    depth = n // 2
    return ("x = " + "(" * depth + "1" + ")" * depth + ";\n").encode()

def long_lines(rng, n):
    line = " ".join(f"a{rng.randrange(100)} + " for _ in range(2000)) + "1;\n"
    out = []
    while sum(map(len, out)) < n:
        out.append(f"y{len(out)} = " + line)
    return "".join(out).encode()

def many_diagnostics(rng, n):
    bad = ["x = ;\n", "Task GPU\n", "y = m[;\n", "def f(:\n", "z = q;\n", "$ @ !\n"]
    out, size = [], 0
    while size < n:
        s = rng.choice(bad); out.append(s); size += len(s)
    return "".join(out).encode()

def function_defs(rng, n):
    # Functions: pass one of the streaming check keeps what calls read of
    # each (16x the file when it kept their trees).
    out, size, i = [], 0, 0
    while size < n:
        s = (f"def f{i}(Task t) {{\n  x = t.ipoint[{rng.randrange(3)}];\n"
             f"  return t.parent.processor(m)[x % {rng.randrange(1, 9)}];\n}}\n")
        out.append(s); size += len(s); i += 1
    return "".join(out).encode()

def undefined_names(rng, n):
    # Every line uses two names nobody defines, each close to the line's
    # own global: its own message, note and suggestion (43x the file at
    # 1 KB before templates).
    out, size, i = [], 0, rng.randrange(1000)
    while size < n:
        s = f"y{i} = q{i} + w{i};\n"; out.append(s); size += len(s); i += 1
    return "".join(out).encode()

def corpus_concat(corpus):
    files = sorted(glob.glob(os.path.join(corpus, "**", "*.mapper"), recursive=True))
    text = b"".join(open(f, "rb").read() + b"\n" for f in files)
    def gen(rng, n):
        reps = max(1, n // max(1, len(text)))
        return text * reps
    return gen

def peak_kb(cmd):
    r = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    return int(r.stderr.strip().splitlines()[-1])

def heap_peak(cmd):
    """`mapwright-heap` prints its figures as the last line of stderr."""
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return json.loads(r.stderr.strip().splitlines()[-1])["heap_peak"]

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/mapwright")
    ap.add_argument("--heap-bin", default=None)
    ap.add_argument("--only", default=None, help="run only this kind")
    ap.add_argument("--heap-only", action="store_true", help="skip the rss measure")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--corpus", default="../shared/corpus")
    a = ap.parse_args()
    heap_bin = a.heap_bin or os.path.join(os.path.dirname(a.bin), "mapwright-heap")
    kinds = [("random-bytes", random_bytes, [1_000, 10_000, 2_000_000]),
             ("random-tokens", random_tokens, [1_000, 10_000, 2_000_000]),
             ("statements", statements, [1_000, 10_000, 2_000_000, 20_000_000]),
             ("rules", rules, [1_000, 100_000, 2_000_000, 20_000_000]),
             ("task-rules", task_rules, [1_000, 100_000, 2_000_000, 20_000_000]),
             ("deep-nesting", deep_nesting, [1_000, 10_000, 200_000]),
             ("long-lines", long_lines, [1_000, 100_000, 2_000_000]),
             ("many-diagnostics", many_diagnostics, [1_000, 10_000, 2_000_000]),
             ("function-defs", function_defs, [1_000, 100_000, 2_000_000]),
             ("undefined-names", undefined_names, [1_000, 100_000, 2_000_000])]
    if os.path.isdir(a.corpus):
        kinds.append(("corpus-concat", corpus_concat(a.corpus), [1_000, 100_000, 2_000_000]))
    if a.only:
        kinds = [k for k in kinds if k[0] == a.only]
    tmp = tempfile.mkdtemp()
    empty = os.path.join(tmp, "empty.mapper"); open(empty, "w").close()
    measures = ("heap",) if a.heap_only else ("heap", "rss")
    base = {c: 0 if a.heap_only else peak_kb([a.bin, c, empty]) for c in ("check", "fmt")}
    empty_heap = {c: heap_peak([heap_bin, c, empty]) for c in ("check", "fmt")}
    print(f"baseline (empty file): RSS check {base['check']} KB, fmt {base['fmt']} KB; "
          f"heap check {empty_heap['check']} B, fmt {empty_heap['fmt']} B (not subtracted)")
    ratios = {(c, m): [] for c in ("check", "fmt") for m in measures}
    for name, gen, sizes in kinds:
        for size in sizes:
            size = int(size * a.scale)
            for seed in range(a.seeds):
                data = gen(random.Random(seed), size)
                path = os.path.join(tmp, f"{name}-{size}-{seed}.mapper")
                row = []
                label = f"{name} {len(data)} B seed {seed}"
                for c in ("check", "fmt"):
                    # `fmt FILE` rewrites FILE: every run starts from the input.
                    open(path, "wb").write(data)
                    heap = heap_peak([heap_bin, c, path])
                    heap_ratio = heap / len(data)
                    ratios[(c, "heap")].append((heap_ratio, label))
                    if a.heap_only:
                        row.append(f"{c} heap {heap_ratio:.1f}x")
                        continue
                    open(path, "wb").write(data)
                    kb = peak_kb([a.bin, c, path])
                    ratio = max(0, kb - base[c]) * 1024 / len(data)
                    ratios[(c, "rss")].append((ratio, label))
                    row.append(f"{c} heap {heap_ratio:.1f}x rss {kb} KB ({ratio:.1f}x)")
                os.remove(path)
                print(f"{name:17} {len(data):>10} B seed {seed}: " + ", ".join(row), flush=True)
    for (c, m), rs in ratios.items():
        worst = max(rs)
        mean = sum(r for r, _ in rs) / len(rs)
        print(f"{c} {m}: worst {worst[0]:.1f}x ({worst[1]}), mean {mean:.1f}x over {len(rs)} inputs")
    # Per kind: worst and mean of each measure (the README table).
    keys = [k for k in [("check", "heap"), ("check", "rss"), ("fmt", "heap"), ("fmt", "rss")]
            if k in ratios]
    print("kind | " + " | ".join(f"{c} {m} worst/mean" for c, m in keys))
    for name, _, _ in kinds:
        cells = []
        for key in keys:
            rs = [r for r, l in ratios[key] if l.startswith(name + " ")]
            cells.append(f"{max(rs):.1f}x / {sum(rs) / len(rs):.1f}x")
        print(f"{name} | " + " | ".join(cells))

if __name__ == "__main__":
    sys.exit(main())
