// The benchmark's page (bundled by esbuild into bench.js by scripts/bench.sh,
// served beside the deployed playground): the same files read by our engine
// (its Web Worker, driven through the worker protocol of
// crates/protocol/src/wire.rs, as any JavaScript caller would) and by
// DuckDB-Wasm (one thread, the `eh` bundle), in one page load. Each figure
// is the median of `runs` after one warm-up. Results are JSON objects with
// the shapes crates/engine/examples/bench.rs prints.
import * as duckdb from '@duckdb/duckdb-wasm';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function fetchBytes(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`HTTP ${r.status} for ${url}`);
  return new Uint8Array(await r.arrayBuffer());
}

/// Our engine in its worker: `send(request, file?)` resolves to the response.
async function startEngine() {
  const t0 = performance.now();
  const worker = new Worker('/engine-loader.js');
  const waiting = new Map();
  let id = 0;
  const ready = new Promise((resolve, reject) => {
    worker.onmessage = (ev) => {
      const m = JSON.parse(ev.data);
      if (m.type === 'ready') resolve();
      else if (m.type === 'failed') reject(new Error(m.message));
      else if (m.type === 'done') waiting.get(m.id)?.(m.response);
    };
  });
  await ready;
  const send = (request, file) => new Promise((resolve) => {
    id += 1;
    waiting.set(id, resolve);
    worker.postMessage({ id, request: JSON.stringify({ id, request }), file }, file ? [file] : []);
  });
  return { send, startMs: performance.now() - t0, worker };
}

const BRONZE_ONLY = {
  title: 'bench',
  bronze: [{ name: 'input', source_system: 'bench', schema: { columns: [] }, description: '' }],
  silver: [], gold: [], checks: [],
};

export async function ours(files, runs) {
  const engine = await startEngine();
  const out = [{ bench: 'engine_start', ms: engine.startMs }];
  for (const [name, url] of files) {
    const bytes = await fetchBytes(url);
    const mb = bytes.length / 1e6;
    const times = [];
    let result = null;
    for (let run = 0; run <= runs; run += 1) {
      await engine.send({ type: 'load_pipeline', pipeline: BRONZE_ONLY });
      const t = performance.now();
      // A copy each time: the buffer is transferred to the worker.
      const response = await engine.send({ type: 'ingest', table: 'input', file_name: name, bytes: [] }, bytes.slice().buffer);
      const ms = performance.now() - t;
      if (response.type === 'error') { result = { bench: 'ingest', file: name, mb, refused: response.message, ms }; break; }
      const records = response.tables.find((x) => x.name === 'bronze.input').row_count;
      if (run > 0) times.push(ms);
      result = { bench: 'ingest', file: name, mb, records };
    }
    if (!result.refused) {
      const ms = median(times);
      Object.assign(result, { ms, mb_per_s: mb / (ms / 1e3), records_per_s: result.records / (ms / 1e3) });
    }
    out.push(result);
  }
  engine.worker.terminate();
  return out;
}

export async function duck(files, lookups, queries, runs) {
  const t0 = performance.now();
  const worker = new Worker('/bench/duckdb/duckdb-browser-eh.worker.js');
  const db = new duckdb.AsyncDuckDB(new duckdb.VoidLogger(), worker);
  await db.instantiate('/bench/duckdb/duckdb-eh.wasm');
  const con = await db.connect();
  const out = [{ bench: 'duckdb_start', ms: performance.now() - t0 }];
  const version = (await con.query('SELECT version() AS v')).toArray()[0].v;
  const timed = async (sql) => {
    const times = [];
    for (let run = 0; run <= runs; run += 1) {
      const t = performance.now();
      await con.query(sql);
      if (run > 0) times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    return [median(times), times[Math.max(0, Math.ceil(times.length * 0.95) - 1)]];
  };
  for (const [name, url] of [...files, ...lookups]) await db.registerFileBuffer(name, await fetchBytes(url));
  // The CSV and the flights SQL first: a file DuckDB-Wasm cannot read (an
  // extension it would fetch from the network, say) is reported as its
  // error and leaves the other figures standing.
  const ingest = async (name) => {
    const ext = name.split('.').pop();
    const mb = (await fetchBytes(files.find((f) => f[0] === name)[1])).length / 1e6;
    try {
      const [ms] = await timed(queries.ingest[ext].replace('{path}', name));
      const records = Number((await con.query('SELECT count(*) AS n FROM input')).toArray()[0].n);
      out.push({ bench: 'ingest', file: name, mb, records, ms, mb_per_s: mb / (ms / 1e3), records_per_s: records / (ms / 1e3) });
    } catch (e) {
      out.push({ bench: 'ingest', file: name, mb, error: String(e.message ?? e) });
    }
  };
  const [csv, ...others] = files.map((f) => f[0]);
  await ingest(csv);
  await con.query(queries.ingest.csv.replace('{path}', csv).replace('TABLE input', 'TABLE flights'));
  for (const [name] of lookups) {
    const t = name.replace('.csv', '');
    await con.query(`CREATE OR REPLACE TABLE ${t} AS SELECT * FROM read_csv('${name}', nullstr='NA')`);
  }
  const [s50, s95] = await timed(queries.silver);
  const [g50, g95] = await timed(queries.gold);
  const rows = Number((await con.query('SELECT count(*) AS n FROM silver')).toArray()[0].n);
  out.push({ bench: 'silver_gold_sql', silver_p50_ms: s50, silver_p95_ms: s95, gold_p50_ms: g50, gold_p95_ms: g95, silver_rows: rows });
  for (const name of others) await ingest(name);
  out.push({ bench: 'version', duckdb: version });
  await con.close();
  await db.terminate();
  return out;
}

window.bench = { ours, duck };
