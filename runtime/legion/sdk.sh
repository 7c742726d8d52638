#!/usr/bin/env bash
# The Legion SDK from the package registry: Legion 25.12 and Realm 25.6 as
# shipped in the `legate` wheel (Apache-2.0), unpacked into a cache folder.
#
#   runtime/legion/sdk.sh            install (or check) the SDK, print its folder
#   eval "$(runtime/legion/sdk.sh --env)"   also set LEGION_SDK and LD_LIBRARY_PATH
#
# LEGION_SDK picks the folder (default: target/legion-sdk in the checkout).
# A user's own Legion build is used instead when LEGION_DIR is set (its
# include/ and lib/ folders; see docs/legion.md): then nothing is fetched.
# Running it again does nothing once the SDK is in place.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
version="26.6.1"
wheel="legate-${version}-cp311-cp311-manylinux_2_28_x86_64.whl"
sha256="74fc878835fcb2e5371799c087b41308931042171c626b390c5689199af3d695"
sdk="${LEGION_SDK:-$root/target/legion-sdk}"
want_env=0
[ "${1:-}" = "--env" ] && want_env=1

emit() {
  # $1: folder with the libraries; $2: folder with a libcuda stub, or "".
  if [ "$want_env" = 1 ]; then
    echo "export LEGION_SDK='$sdk'"
    local path="$1"
    [ -n "$2" ] && path="$2:$path"
    echo "export LD_LIBRARY_PATH='$path'\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
  else
    echo "$sdk"
  fi
}

if [ -n "${LEGION_DIR:-}" ]; then
  # A user's own Legion: nothing to fetch, only check that it is there.
  for f in include/legion.h; do
    [ -e "$LEGION_DIR/$f" ] || { echo "LEGION_DIR=$LEGION_DIR has no $f" >&2; exit 1; }
  done
  sdk="$LEGION_DIR"
  emit "$LEGION_DIR/lib" ""
  exit 0
fi

# An NVIDIA driver present means the real libcuda; otherwise a stub whose
# cuInit says "no device", so Realm starts with CPUs only.
have_driver() {
  ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 ' || [ -e /dev/nvidiactl ]
}

stamp="$sdk/.installed-$version"
if [ ! -e "$stamp" ]; then
  command -v python3 >/dev/null || { echo "sdk.sh needs python3 with pip" >&2; exit 1; }
  mkdir -p "$sdk"
  dl="$(mktemp -d)"
  trap 'rm -rf "$dl"' EXIT
  echo "mapwright: fetching Legion 25.12 (the legate==$version wheel, 87 MB; once, into $sdk)" >&2
  python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.11 \
    --platform manylinux_2_28_x86_64 "legate==$version" -d "$dl" >&2
  echo "$sha256  $dl/$wheel" | sha256sum -c --quiet - >&2 \
    || { echo "sha256 of $wheel does not match the pinned one" >&2; exit 1; }
  echo "mapwright: unpacking Legion's headers and libraries" >&2
  rm -rf "$sdk/include" "$sdk/lib"
  mkdir -p "$sdk/unpack"
  python3 - "$dl/$wheel" "$sdk/unpack" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for n in z.namelist():
        if n.startswith("legate/include/legate/deps/") or n.startswith("legate/lib64/lib"):
            z.extract(n, sys.argv[2])
PY
  mv "$sdk/unpack/legate/include/legate/deps" "$sdk/include"
  mkdir -p "$sdk/lib"
  for lib in liblegion-legate.so.1 librealm-legate.so.25; do
    cp -L "$sdk/unpack/legate/lib64/$lib" "$sdk/lib/$lib"
  done
  ln -sf liblegion-legate.so.1 "$sdk/lib/liblegion-legate.so"
  ln -sf librealm-legate.so.25 "$sdk/lib/librealm-legate.so"
  rm -rf "$sdk/unpack"
  touch "$stamp"
  # The real-Legion tests are marked ignored until the SDK is here; their
  # build script checks again when it changes (tests/build.rs).
  touch "$root/tests/build.rs"
fi

stub=""
if ! have_driver; then
  stub="$sdk/cuda-stub"
  if [ ! -e "$stub/libcuda.so.1" ] || [ "$here/cuda_stub.c" -nt "$stub/libcuda.so.1" ]; then
    mkdir -p "$stub"
    cc -shared -fPIC -Wall -Werror -O1 -Wl,-soname,libcuda.so.1 \
      -o "$stub/libcuda.so.1" "$here/cuda_stub.c"
  fi
fi
emit "$sdk/lib" "$stub"
