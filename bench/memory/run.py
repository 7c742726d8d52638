#!/usr/bin/env python3
"""Peak resident memory of `mapwright check FILE` and `mapwright fmt FILE`
over generated inputs of several kinds, sizes and seeds.

Measure: (peak RSS of the command on FILE - peak RSS on an empty file) /
size of FILE, peak RSS as `/usr/bin/time -f %M` reports it. Prints one row
per input and the worst case and mean per command.

Usage: bench/memory/run.py [--bin target/release/mapwright] [--seeds 3]
       [--scale 1.0] [--corpus ../shared/corpus]
"""
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

def statements(rng, n):
    out, size, i = [], 0, 0
    while size < n:
        s = f"x{i} = {rng.randrange(1000)} + 1;\n"; out.append(s); size += len(s); i += 1
    return "".join(out).encode()

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

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/mapwright")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--corpus", default="../shared/corpus")
    a = ap.parse_args()
    kinds = [("random-bytes", random_bytes, [10_000, 2_000_000]),
             ("random-tokens", random_tokens, [10_000, 2_000_000]),
             ("statements", statements, [10_000, 2_000_000, 20_000_000]),
             ("deep-nesting", deep_nesting, [10_000, 200_000]),
             ("long-lines", long_lines, [100_000, 2_000_000]),
             ("many-diagnostics", many_diagnostics, [10_000, 2_000_000])]
    if os.path.isdir(a.corpus):
        kinds.append(("corpus-concat", corpus_concat(a.corpus), [100_000, 2_000_000]))
    tmp = tempfile.mkdtemp()
    empty = os.path.join(tmp, "empty.mapper"); open(empty, "w").close()
    base = {c: peak_kb([a.bin, c, empty]) for c in ("check", "fmt")}
    print(f"baseline (empty file): check {base['check']} KB, fmt {base['fmt']} KB")
    ratios = {"check": [], "fmt": []}
    for name, gen, sizes in kinds:
        for size in sizes:
            size = int(size * a.scale)
            for seed in range(a.seeds):
                data = gen(random.Random(seed), size)
                path = os.path.join(tmp, f"{name}-{size}-{seed}.mapper")
                open(path, "wb").write(data)
                row = []
                for c in ("check", "fmt"):
                    kb = peak_kb([a.bin, c, path])
                    ratio = max(0, kb - base[c]) * 1024 / len(data)
                    ratios[c].append((ratio, f"{name} {len(data)} B seed {seed}"))
                    row.append(f"{c} {kb} KB ({ratio:.1f}x)")
                os.remove(path)
                print(f"{name:17} {len(data):>10} B seed {seed}: " + ", ".join(row), flush=True)
    for c, rs in ratios.items():
        worst = max(rs)
        mean = sum(r for r, _ in rs) / len(rs)
        print(f"{c}: worst {worst[0]:.1f}x ({worst[1]}), mean {mean:.1f}x over {len(rs)} inputs")

if __name__ == "__main__":
    sys.exit(main())
