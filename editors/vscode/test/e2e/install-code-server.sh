#!/usr/bin/env bash
# Installs code-server (VS Code's web build, from the npm registry) into $1
# without anything outside the package registries.
#
# code-server's own postinstall runs `npm install` in lib/vscode, where
# @vscode/ripgrep's install script downloads ripgrep from GitHub (blocked in
# CI: "Downloading ripgrep failed after multiple retries: Error: getaddrinfo
# ENOTFOUND api.github.com"). So: install with --ignore-scripts, do the
# postinstall's steps here, put Debian's `rg` where @vscode/ripgrep expects its
# binary (its install script then skips the download), and build the native
# modules (node-gyp against the system Node headers; kerberos needs
# libkrb5-dev).
#
# Needs: node 20 (code-server 4.100.x's requirement), npm, a C++ toolchain,
# python3, libkrb5-dev, ripgrep.
set -euo pipefail
PREFIX=${1:?usage: install-code-server.sh PREFIX}
# Absolute: the steps below change directory.
PREFIX=$(mkdir -p "$PREFIX" && cd "$PREFIX" && pwd)
VERSION=${CODE_SERVER_VERSION:-4.100.3}
CS="$PREFIX/node_modules/code-server"

# The marker is written last: a partial install is redone.
if [ -f "$CS/.mapwright-installed-$VERSION" ]; then
  echo "code-server $VERSION already in $PREFIX"
  exit 0
fi
RG=$(command -v rg) || { echo "ripgrep (rg) is required (apt-get install ripgrep)"; exit 1; }
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" = 20 ] || echo "WARNING: code-server $VERSION wants node 20, this is node $node_major"

mkdir -p "$PREFIX"
[ -f "$PREFIX/package.json" ] || echo '{"name":"mapwright-e2e","private":true}' > "$PREFIX/package.json"
npm install --prefix "$PREFIX" --ignore-scripts --no-audit --no-fund --no-save "code-server@$VERSION"

# code-server's own native module: argon2 (node-pre-gyp would download it).
(cd "$PREFIX" && npm_config_build_from_source=true npm rebuild argon2)

# code-server's postinstall.sh, step by step.
cd "$CS/lib/vscode"
npm install --omit=dev --ignore-scripts --no-audit --no-fund
mkdir -p node_modules/@vscode/ripgrep/bin
ln -sf "$RG" node_modules/@vscode/ripgrep/bin/rg
npm_config_yes=true npm rebuild
rm -rf node_modules.asar && ln -s node_modules node_modules.asar
(cd bin/remote-cli && ln -sf code-linux.sh code-server)
(cd bin/helpers && ln -sf browser-linux.sh browser.sh)
cd extensions
npm install --omit=dev --ignore-scripts --no-audit --no-fund
npm run postinstall
touch "$CS/.mapwright-installed-$VERSION"
echo "code-server $VERSION installed in $PREFIX ($(du -sh "$PREFIX" | cut -f1))"
