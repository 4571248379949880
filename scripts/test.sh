#!/usr/bin/env bash
# Runs every test: engine tests natively, the same tests plus the JavaScript
# facade's in headless Chromium, then the built app end to end in Chromium.
# Installs whatever is missing first (scripts/setup.sh browser).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/medallion-playground/target}"
bash scripts/setup.sh browser

step() { printf '\n\033[1;34m== %s\033[0m\n' "$*"; }

step "protocol and engine, native"
python3 scripts/check-cycles.py
cargo test -p medallion-protocol -p medallion-engine

step "engine and JavaScript facade, in headless Chromium (wasm-bindgen-test)"
# The runner's default 20 s budget covers the whole test binary; the debug
# DataFusion module alone takes seconds to load on 2 cores.
export WASM_BINDGEN_TEST_TIMEOUT="${WASM_BINDGEN_TEST_TIMEOUT:-300}"
cargo test --target wasm32-unknown-unknown -p medallion-engine --test nyc_taxi --test cases --test scenarios --test second_set --test lab --test pii
cargo test --target wasm32-unknown-unknown -p medallion-wasm --test facade

step "build the app: the deploy build (release, precompressed)"
DIST=dist bash scripts/deploy.sh

step "end to end: the deployed app, from a plain static server, in headless Chromium"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
node scripts/static-server.mjs dist "$port" >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
APP_URL="http://127.0.0.1:$port/" node --test tests/e2e/
