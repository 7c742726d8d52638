#!/usr/bin/env python3
"""Publish payload of `mapwright lsp` on big generated mappers.

Generates 5,000-line files from the public corpus's statements, with unused
names, shadowed names and undefined names mixed in (one seed per file),
opens each in a fresh server and prints the size in bytes of the
`textDocument/publishDiagnostics` message and its number of diagnostics.

Usage: measure.py MAPWRIGHT_BINARY [SEEDS...]   (corpus from ../shared)
"""
import json, os, random, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "..", "..", "shared", "corpus", "public")


def corpus_lines():
    lines = []
    for name in sorted(os.listdir(CORPUS)):
        if name.endswith(".mapper") or name.endswith(".py") or "." not in name:
            path = os.path.join(CORPUS, name)
            if os.path.isfile(path):
                with open(path, encoding="utf-8", errors="replace") as f:
                    lines += [l.rstrip("\n") for l in f if l.strip().endswith(";")]
    return lines


def generate(seed, n_lines=5000):
    rng = random.Random(seed)
    stmts = corpus_lines()
    out = []
    while len(out) < n_lines:
        r = rng.random()
        i = len(out)
        if r < 0.15:
            out.append(f"unused_{i} = {rng.randint(0, 99)};")  # unused name
        elif r < 0.25:
            out.append(f"shadow = {i};")  # shadowing (redefined)
        elif r < 0.35:
            out.append(f"y_{i} = undefined_{i} + 1;")  # undefined name
        else:
            out.append(rng.choice(stmts))
    return "\n".join(out) + "\n"


def frame(msg):
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_msg(stream):
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return stream.read(length)


def measure(binary, text):
    p = subprocess.Popen([binary, "lsp", "--stdio"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    uri = "file:///tmp/payload.mapper"
    p.stdin.write(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                         "params": {"processId": None, "rootUri": None, "capabilities": {},
                                    "initializationOptions": {"debounceMs": 0}}}))
    p.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    p.stdin.write(frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": uri, "languageId": "mapper", "version": 1, "text": text}}}))
    p.stdin.flush()
    while True:
        raw = read_msg(p.stdout)
        if raw is None:
            raise SystemExit("server ended before publishing")
        msg = json.loads(raw)
        if msg.get("method") == "workspace/configuration":
            p.stdin.write(frame({"jsonrpc": "2.0", "id": msg["id"],
                                 "result": [None] * len(msg["params"]["items"])}))
            p.stdin.flush()
        elif "id" in msg and "method" in msg:
            p.stdin.write(frame({"jsonrpc": "2.0", "id": msg["id"], "result": None}))
            p.stdin.flush()
        elif msg.get("method") == "textDocument/publishDiagnostics" and msg["params"]["uri"] == uri:
            p.kill()
            return len(raw), len(msg["params"]["diagnostics"])


def main():
    binary = sys.argv[1]
    seeds = [int(s) for s in sys.argv[2:]] or [1, 2, 3]
    sizes = []
    for seed in seeds:
        size, n = measure(binary, generate(seed))
        sizes.append(size)
        print(f"seed {seed}: {n} diagnostics, publish {size:,} bytes")
    print(f"mean {sum(sizes) / len(sizes):,.0f} bytes, worst {max(sizes):,} bytes")


if __name__ == "__main__":
    main()
