#!/usr/bin/env bash
# Writes the playground as a static site to dist/ (release build, no
# development websocket or reload script), with a precompressed .br and .gz
# next to each asset, ready for any static host; prints each wasm's size
# raw / gzip / brotli. scripts/serve.sh serves the same build.
#   bash scripts/deploy.sh            → dist/
#   DIST=/tmp/site bash scripts/deploy.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/scripts/node/node_modules/.bin:$HOME/.cargo/bin:$PATH"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/medallion-playground/target}"
DIST="${DIST:-dist}"
bash scripts/setup.sh
trunk build --release --dist "$DIST"
if grep -q "__trunk_address__\|/.well-known/trunk/ws" "$DIST/index.html"; then
  echo "deploy: $DIST/index.html holds Trunk's reload script" >&2
  exit 1
fi
# The engine's wasm through wasm-opt -Oz (npm binaryen, scripts/node): about
# 4 minutes; served, it is 24.8 MB, 4.86 MB brotli (8154fe9). The worker fetches it
# without a subresource-integrity hash, so it is optimized here, after
# Trunk; the result is kept by the input's hash, so an unchanged engine
# costs nothing the next time.
engine="$DIST/medallion-worker_bg.wasm"
opt_cache="$CARGO_TARGET_DIR/wasm-opt"
mkdir -p "$opt_cache"
optimized="$opt_cache/$(sha256sum "$engine" | cut -c1-32).wasm"
if [ ! -f "$optimized" ]; then
  echo "deploy: wasm-opt -Oz on the engine's wasm (a few minutes)"
  wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals "$engine" -o "$optimized.part"
  mv "$optimized.part" "$optimized"
fi
cp "$optimized" "$engine"
node scripts/compress.mjs "$DIST"
echo "deploy: a static site in $DIST/ (serve it with any static server, e.g. node scripts/static-server.mjs $DIST 8080)"
