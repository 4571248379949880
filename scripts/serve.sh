#!/usr/bin/env bash
# Builds the playground as the deploy build (scripts/deploy.sh: release,
# precompressed) and serves it on http://127.0.0.1:${PORT:-8080}/ as a static
# host would, brotli / gzip when the browser accepts them, with the "NYC taxi:
# silver module" example loaded. The first build takes a while (DataFusion
# compiles to WebAssembly); later ones are incremental.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/medallion-playground/target}"
PORT="${PORT:-8080}"
echo "Medallion Playground: building, then serving at http://127.0.0.1:$PORT/"
DIST=dist bash scripts/deploy.sh
exec node scripts/static-server.mjs dist "$PORT"
