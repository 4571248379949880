#!/usr/bin/env bash
# The benchmark (issue 12): builds the deploy site and the native engine,
# then prints a markdown table of ingest, rule edit, cold start and served
# sizes, in headless Chromium and natively, beside DuckDB-Wasm (npm, same
# Chromium, same page load) and native DuckDB (PyPI, one thread). Each
# figure is the median of RUNS runs after a warm-up (default 5).
#   bash scripts/bench.sh                 → the table on stdout, raw figures in $OUT
#   RUNS=3 DATA=../shared/data bash scripts/bench.sh
# Needs the real data of ../shared/data (vega-datasets, nycflights13).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/medallion-playground/target}"
CACHE="$HOME/.cache/medallion-playground"
RUNS="${RUNS:-5}"
DATA="$(cd "${DATA:-../shared/data}" && pwd)"
OUT="${OUT:-$CACHE/bench}"
DIST="$CACHE/bench-dist"
say() { printf '\033[1;34m[bench]\033[0m %s\n' "$*" >&2; }

bash scripts/setup.sh browser >&2
if [ ! -d tests/bench/node_modules/@duckdb/duckdb-wasm ]; then
  say "installing DuckDB-Wasm and esbuild (tests/bench)"
  (cd tests/bench && npm ci --no-audit --no-fund --loglevel=error) >&2
fi
VENV="$CACHE/bench-venv"
if ! "$VENV/bin/python" -c "import duckdb" 2>/dev/null; then
  say "installing DuckDB for Python in $VENV"
  python3 -m venv "$VENV" >&2
  "$VENV/bin/pip" install -q "duckdb==1.4.2" >&2
fi

say "deploy build"
DIST="$DIST" bash scripts/deploy.sh >&2

# The site the browser half reads: the deployed playground, with the
# benchmark page, DuckDB-Wasm's files and the data under /bench/.
SITE="$CACHE/bench-site"
rm -rf "$SITE" && mkdir -p "$SITE/bench/data" "$SITE/bench/duckdb"
for f in "$DIST"/*; do ln -s "$f" "$SITE/"; done
(cd tests/bench && npx esbuild page.mjs --bundle --format=iife --outfile="$SITE/bench/bench.js" --log-level=warning)
cp tests/bench/bench.html "$SITE/bench/"
for f in duckdb-eh.wasm duckdb-browser-eh.worker.js; do ln -s "$PWD/tests/bench/node_modules/@duckdb/duckdb-wasm/dist/$f" "$SITE/bench/duckdb/"; done
mkdir -p "$OUT"
gunzip -c static/downloads/nycflights13/flights.csv.gz > "$OUT/flights.csv"
ln -s "$OUT/flights.csv" "$SITE/bench/data/flights.csv"
for f in flights-200k.json flights-3m.parquet; do ln -s "$DATA/vega-datasets/$f" "$SITE/bench/data/"; done
for f in airlines airports planes; do ln -s "$DATA/nycflights13/$f.csv" "$SITE/bench/data/"; done

say "native engine (profile bench-native)"
cargo build --profile bench-native -p medallion-engine --example bench >&2
"$CARGO_TARGET_DIR/bench-native/examples/bench" "$DATA" "$RUNS" > "$OUT/native.jsonl"

say "native DuckDB"
"$VENV/bin/python" tests/bench/duckdb_native.py "$OUT/flights.csv" "$DATA/nycflights13" "$DATA/vega-datasets" "$RUNS" > "$OUT/duckdb.jsonl"

say "headless Chromium: ours and DuckDB-Wasm"
port=$((20000 + RANDOM % 20000))
node scripts/static-server.mjs "$SITE" "$port" >&2 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
sleep 1
BENCH_URL="http://127.0.0.1:$port/" RUNS="$RUNS" node tests/bench/browser.mjs > "$OUT/browser.jsonl"

node tests/bench/report.mjs "$OUT" "$DIST" | tee "$OUT/report.md"
