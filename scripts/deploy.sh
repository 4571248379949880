#!/usr/bin/env bash
# Writes the playground as a static site to dist/ (release build, no
# development websocket or reload script), with a precompressed .br and .gz
# next to each asset, ready for any static host; prints each wasm's size
# raw / gzip / brotli. scripts/serve.sh serves the same build.
#   bash scripts/deploy.sh            → dist/
#   DIST=/tmp/site bash scripts/deploy.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/medallion-playground/target}"
DIST="${DIST:-dist}"
bash scripts/setup.sh
trunk build --release --dist "$DIST"
if grep -q "__trunk_address__\|/.well-known/trunk/ws" "$DIST/index.html"; then
  echo "deploy: $DIST/index.html holds Trunk's reload script" >&2
  exit 1
fi
node scripts/compress.mjs "$DIST"
echo "deploy: a static site in $DIST/ (serve it with any static server, e.g. node scripts/static-server.mjs $DIST 8080)"
