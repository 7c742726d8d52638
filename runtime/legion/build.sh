#!/usr/bin/env bash
# Builds everything the `legion` backend runs: the Legion SDK (sdk.sh,
# unless LEGION_DIR names a user's own Legion), the Rust side of the mapper
# (crate mapwright-legion-abi, a static library), then libmapwright_mapper.so
# and the benchmark programs (Makefile). Prints the folder with bin/ and lib/.
# Running it again rebuilds only what changed.
#
# MAPWRIGHT_LEGION_OUT: output folder (default target/legion).
# MAPWRIGHT_LEGION_PROFILE: cargo profile of the Rust side (default debug).
# MAPWRIGHT_LEGION_APPS: the programs to build (default: all of the
#   Makefile's APPS; the DISTAL ones need a CPU BLAS, see docs/legion.md).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
eval "$("$here/sdk.sh" --env)"
profile="${MAPWRIGHT_LEGION_PROFILE:-debug}"
target="${CARGO_TARGET_DIR:-$root/target}"
out="${MAPWRIGHT_LEGION_OUT:-$root/target/legion}"
flag=()
[ "$profile" = release ] && flag=(--release)
(cd "$root" && cargo build --quiet -p mapwright-legion-abi "${flag[@]}" >&2)
apps=()
[ -n "${MAPWRIGHT_LEGION_APPS:-}" ] && apps=(APPS="$MAPWRIGHT_LEGION_APPS")
make --no-print-directory -s -C "$here" -j2 OUT="$out" ABI_LIB="$target/$profile/libmapwright_legion_abi.a" \
  "${apps[@]}" >&2
echo "$out"
