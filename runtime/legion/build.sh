#!/usr/bin/env bash
# Builds everything the `legion` backend runs: the Legion SDK (sdk.sh,
# unless LEGION_DIR names a user's own Legion), the Rust side of the mapper
# (crate mapwright-legion-abi, a static library), then libmapwright_mapper.so
# and the benchmark programs (Makefile). Prints the folder with bin/ and lib/.
# Running it again rebuilds only what changed.
#
# MAPWRIGHT_LEGION_OUT: output folder (default target/legion).
# MAPWRIGHT_LEGION_PROFILE: cargo profile of the Rust side: release (the
#   default: every mapper call runs it, and a debug build made pennant 1.3x
#   slower) or debug (for a developer stepping through it).
# MAPWRIGHT_LEGION_APPS: the programs to build (default: all of the
#   Makefile's APPS; the DISTAL ones need a CPU BLAS, see docs/legion.md).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
eval "$("$here/sdk.sh" --env)"
profile="${MAPWRIGHT_LEGION_PROFILE:-release}"
target="${CARGO_TARGET_DIR:-$root/target}"
out="${MAPWRIGHT_LEGION_OUT:-$root/target/legion}"
flag=()
[ "$profile" = release ] && flag=(--release)
# Progress goes to stderr as `mapwright: ...` lines, which `--backend
# legion` shows on the terminal and as the editor's progress; the rest of
# stderr is kept for the error message if a step fails.
say() { echo "mapwright: $*" >&2; }
cargo_progress() {
  while IFS= read -r line; do
    case "$line" in
      *Compiling\ *) say "compiling $(echo "$line" | awk '{print $2}') (the mapper's Rust side, $profile)" ;;
      *Finished\ * | *Blocking\ *) ;;
      *) echo "$line" >&2 ;;
    esac
  done
}
(cd "$root" && cargo build --color never -p mapwright-legion-abi "${flag[@]}" 2>&1 >&2 | cargo_progress)
abi="$target/$profile/libmapwright_legion_abi.a"
# The mapper is relinked when the Rust side's profile changes, even where
# the other profile's library is older than it.
mkdir -p "$out"
if [ "$(cat "$out/.abi-profile" 2>/dev/null)" != "$profile" ]; then
  rm -f "$out/lib/libmapwright_mapper.so"
  echo "$profile" >"$out/.abi-profile"
fi
apps=()
[ -n "${MAPWRIGHT_LEGION_APPS:-}" ] && apps=(APPS="$MAPWRIGHT_LEGION_APPS")
make_args=(--no-print-directory -s -C "$here" -j2 OUT="$out" ABI_LIB="$abi" "${apps[@]}")
if ! make -q "${make_args[@]}" >/dev/null 2>&1; then
  say "building libmapwright_mapper.so and the programs (${MAPWRIGHT_LEGION_APPS:-all nine}) into $out"
  make "${make_args[@]}" >&2
fi
echo "$out"
