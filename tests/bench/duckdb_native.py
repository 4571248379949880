"""The native DuckDB side of scripts/bench.sh: the same files read into a
table, and the flights example's silver and gold as one SQL each, on one
thread. Prints one JSON object per line (median of RUNS after a warm-up),
with the shapes crates/engine/examples/bench.rs prints.

    python3 tests/bench/duckdb_native.py FLIGHTS_CSV LOOKUP_DIR VEGA_DIR RUNS
"""

import json
import os
import statistics
import sys
import time

import duckdb

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "queries.json")) as f:
    Q = json.load(f)
INGEST, SILVER, GOLD = Q["ingest"], Q["silver"], Q["gold"]

flights_csv, lookups, vega, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])


def timed(con, sql, n=runs):
    times = []
    for i in range(n + 1):
        t = time.perf_counter()
        con.execute(sql).fetchall()
        if i > 0:
            times.append((time.perf_counter() - t) * 1e3)
    times.sort()
    return statistics.median(times), times[max(0, int(len(times) * 0.95 + 0.999) - 1)]


con = duckdb.connect()
con.execute("SET threads = 1")
files = {
    "flights.csv": flights_csv,
    "flights-200k.json": os.path.join(vega, "flights-200k.json"),
    "flights-3m.parquet": os.path.join(vega, "flights-3m.parquet"),
}
for name, path in files.items():
    sql = INGEST[name.rsplit(".", 1)[1]].format(path=path)
    p50, _ = timed(con, sql)
    records = con.execute("SELECT count(*) FROM input").fetchone()[0]
    mb = os.path.getsize(path) / 1e6
    print(json.dumps({"bench": "ingest", "file": name, "mb": mb, "records": records, "ms": p50,
                      "mb_per_s": mb / (p50 / 1e3), "records_per_s": records / (p50 / 1e3)}))

con.execute(INGEST["csv"].format(path=flights_csv).replace("TABLE input", "TABLE flights"))
for t in ["airlines", "airports", "planes"]:
    con.execute(f"CREATE OR REPLACE TABLE {t} AS SELECT * FROM read_csv('{lookups}/{t}.csv', nullstr='NA')")
p50, p95 = timed(con, SILVER)
g50, g95 = timed(con, GOLD)
print(json.dumps({"bench": "silver_gold_sql", "silver_p50_ms": p50, "silver_p95_ms": p95,
                  "gold_p50_ms": g50, "gold_p95_ms": g95,
                  "silver_rows": con.execute("SELECT count(*) FROM silver").fetchone()[0]}))
print(json.dumps({"bench": "version", "duckdb": duckdb.__version__}))
