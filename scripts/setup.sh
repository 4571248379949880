#!/usr/bin/env bash
# Installs what building, serving and testing the playground need, skipping
# whatever is already there at the right version. Safe to run repeatedly.
#   scripts/setup.sh          tools to build and serve (wasm target, wasm-bindgen, trunk, wasm-opt, clang, node)
#   scripts/setup.sh browser  also Chromium, ChromeDriver and the end-to-end test's npm packages
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

WASM_BINDGEN_VERSION=0.2.130   # must equal the exact pin in Cargo.toml
TRUNK_VERSION=0.21.14          # 0.22 needs a newer rustc than this machine's

say() { printf '\033[1;34m[setup]\033[0m %s\n' "$*"; }

apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then
    say "apt-get update"
    apt-get update -qq
    apt_updated=1
  fi
  say "apt-get install $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

# zstd-sys (pulled in by arrow-ipc) compiles C for wasm32 and needs clang.
command -v clang >/dev/null || apt_install clang

if ! wasm-bindgen --version 2>/dev/null | grep -q " $WASM_BINDGEN_VERSION\$"; then
  say "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (~2 min)"
  # --locked fails for this version on the registry mirror; fall back to a plain install.
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --locked \
    || cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"
fi

if ! trunk --version 2>/dev/null | grep -q " $TRUNK_VERSION\$"; then
  say "installing trunk $TRUNK_VERSION (~5 min)"
  cargo install trunk --version "$TRUNK_VERSION" --locked
fi

# The deploy build's compression and its static server run on Node (zlib has brotli).
command -v node >/dev/null || apt_install nodejs npm

# The deploy build's wasm-opt: binaryen's npm build (scripts/node/package.json),
# run by Trunk from that folder's .bin (scripts/deploy.sh puts it on PATH).
if [ "$(scripts/node/node_modules/.bin/wasm-opt --version 2>/dev/null)" != "wasm-opt version 132 (version_132)" ]; then
  say "installing wasm-opt (npm binaryen 132)"
  (cd scripts/node && npm ci --no-audit --no-fund --loglevel=error)
fi

if [ "${1:-}" = browser ]; then
  { command -v chromium >/dev/null && command -v chromedriver >/dev/null; } || apt_install chromium chromium-driver
  if [ ! -d tests/e2e/node_modules/playwright-core ]; then
    say "installing the end-to-end test's npm packages"
    (cd tests/e2e && npm ci --no-audit --no-fund --loglevel=error)
  fi
fi

# Trunk runs cargo offline (Trunk.toml), so fetch crates now.
cargo fetch --quiet
