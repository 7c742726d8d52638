#!/usr/bin/env bash
# End-to-end test of the extension inside a real VS Code workbench:
# code-server (VS Code's web build, from the npm registry) serves the
# workbench on a free loopback port with the .vsix installed, and headless
# Chromium (Debian's `chromium`, driven by playwright-core; no browser
# download) runs the scenarios of test/e2e/scenarios.test.mjs.
#
# Usage: test/e2e/run.sh [node --test options]   (exits non-zero on failure)
# Environment:
#   MAPWRIGHT_BIN     the server binary (default: the workspace's debug build,
#                     built with `cargo build -p mapwright` if missing)
#   CHROMIUM          the browser (default: chromium on PATH)
#   E2E_DIR           install + scratch folder (default: editors/vscode/.e2e, git-ignored)
#   E2E_SCREENSHOTS   where to write the README screenshots (default: none)
# Screenshots of failing scenarios go to $E2E_DIR/artifacts/.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
EXT="$(cd "$HERE/../.." && pwd)"
REPO="$(cd "$EXT/../.." && pwd)"
E2E_DIR="${E2E_DIR:-$EXT/.e2e}"
mkdir -p "$E2E_DIR"
E2E_DIR="$(cd "$E2E_DIR" && pwd)"
# One run at a time per folder (a second one would delete the first's files).
exec 9>"$E2E_DIR/.lock"
flock -n 9 || { echo "another e2e run is using $E2E_DIR"; exit 1; }
t0=$(date +%s)

# --- the server binary --------------------------------------------------
if [ -z "${MAPWRIGHT_BIN:-}" ]; then
  TARGET="${CARGO_TARGET_DIR:-$REPO/target}"
  MAPWRIGHT_BIN="$TARGET/debug/mapwright"
  [ -x "$MAPWRIGHT_BIN" ] || (cd "$REPO" && cargo build -p mapwright)
fi
[ -x "$MAPWRIGHT_BIN" ] || { echo "no mapwright binary at $MAPWRIGHT_BIN"; exit 1; }
export MAPWRIGHT_BIN="$(cd "$(dirname "$MAPWRIGHT_BIN")" && pwd)/$(basename "$MAPWRIGHT_BIN")"

# --- the browser --------------------------------------------------------
export CHROMIUM="${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
[ -n "$CHROMIUM" ] || { echo "chromium is required (apt-get install chromium)"; exit 1; }

# --- code-server and the extension -------------------------------------
"$HERE/install-code-server.sh" "$E2E_DIR"
t_install=$(date +%s)
CODE_SERVER="$E2E_DIR/node_modules/code-server/out/node/entry.js"
[ -f "$EXT/node_modules/playwright-core/package.json" ] || (cd "$EXT" && npm ci --no-audit --no-fund)
# Always repackaged (a few seconds): a stale .vsix would test old code.
(cd "$EXT" && npm run build && npm run package)

RUN="$E2E_DIR/run"
rm -rf "$RUN"
mkdir -p "$RUN/user-data" "$RUN/extensions" "$E2E_DIR/artifacts"
rm -f "$E2E_DIR"/artifacts/*.png "$E2E_DIR"/artifacts/*-trace.log
# code-server writes its config file under $XDG_CONFIG_HOME: keep it here.
export XDG_CONFIG_HOME="$RUN/config" XDG_DATA_HOME="$RUN/data"
node "$CODE_SERVER" --user-data-dir "$RUN/user-data" --extensions-dir "$RUN/extensions" \
  --install-extension "$EXT/mapwright.vsix"

# A free loopback port (the kernel picks one).
PORT=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
LOG="$E2E_DIR/artifacts/code-server.log"
setsid node "$CODE_SERVER" --bind-addr "127.0.0.1:$PORT" --auth none --disable-telemetry \
  --disable-update-check --disable-workspace-trust --disable-getting-started-override \
  --user-data-dir "$RUN/user-data" --extensions-dir "$RUN/extensions" >"$LOG" 2>&1 &
CS_PID=$!
cleanup() {
  # code-server forks the VS Code server, which starts the extension hosts
  # and they mapwright: end the process group (its own session, by setsid)
  # started here, by its id.
  kill -TERM -- "-$CS_PID" 2>/dev/null || true
  sleep 1
  kill -KILL -- "-$CS_PID" 2>/dev/null || true
}
trap cleanup EXIT

for _ in $(seq 1 120); do
  if node -e 'require("http").get(process.argv[1],r=>process.exit(r.statusCode<500?0:1)).on("error",()=>process.exit(1))' \
    "http://127.0.0.1:$PORT/healthz"; then break; fi
  kill -0 "$CS_PID" 2>/dev/null || { echo "code-server exited:"; cat "$LOG"; exit 1; }
  sleep 0.5
done
echo "code-server on http://127.0.0.1:$PORT (pid $CS_PID)"

export CODE_SERVER_URL="http://127.0.0.1:$PORT" E2E_RUN="$RUN" E2E_ARTIFACTS="$E2E_DIR/artifacts"
status=0
# Extra arguments go to `node --test` (e.g. --test-name-pattern='^g\.').
node --test --test-reporter=spec --test-concurrency=1 "$@" "$HERE/scenarios.test.mjs" || status=$?
t_end=$(date +%s)
echo "e2e: install/check $((t_install - t0)) s, scenarios $((t_end - t_install)) s; code-server install $(du -sh "$E2E_DIR/node_modules" | cut -f1)"
[ "$status" -eq 0 ] || { echo "e2e FAILED: screenshots and code-server.log in $E2E_DIR/artifacts"; ls "$E2E_DIR/artifacts"; }
exit "$status"
