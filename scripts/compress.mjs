// Precompresses a built site for any static host: next to each asset
// (wasm, js, css, html, json, svg, txt) a `.br` (brotli) and a `.gz`
// (gzip) file, then prints each wasm's size raw / gzip / brotli as a
// markdown table. Node's own zlib does both (no download).
//   node scripts/compress.mjs dist
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, extname, relative } from 'node:path';
import { brotliCompressSync, gzipSync, constants } from 'node:zlib';

const dir = process.argv[2] ?? 'dist';
const TYPES = new Set(['.wasm', '.js', '.mjs', '.css', '.html', '.json', '.svg', '.txt', '.csv']);

function* files(d) {
  for (const name of readdirSync(d)) {
    const p = join(d, name);
    if (statSync(p).isDirectory()) yield* files(p);
    else yield p;
  }
}

const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
const rows = [];
for (const p of [...files(dir)]) {
  if (!TYPES.has(extname(p)) || p.endsWith('.br') || p.endsWith('.gz')) continue;
  const raw = readFileSync(p);
  // Unchanged since the last compression (Trunk keeps unchanged files): keep it.
  const fresh = (q) => {
    try { return statSync(q).mtimeMs >= statSync(p).mtimeMs; } catch { return false; }
  };
  if (fresh(`${p}.br`) && fresh(`${p}.gz`)) {
    if (extname(p) === '.wasm') rows.push([relative(dir, p), raw.length, statSync(`${p}.gz`).size, statSync(`${p}.br`).size]);
    continue;
  }
  const gz = gzipSync(raw, { level: 9 });
  const br = brotliCompressSync(raw, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: 11,
      [constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
      [constants.BROTLI_PARAM_LGWIN]: 24,
    },
  });
  writeFileSync(`${p}.gz`, gz);
  writeFileSync(`${p}.br`, br);
  if (extname(p) === '.wasm') rows.push([relative(dir, p), raw.length, gz.length, br.length]);
}
console.log('| wasm | raw | gzip | brotli |');
console.log('|---|---|---|---|');
for (const [name, raw, gz, br] of rows) console.log(`| ${name} | ${mb(raw)} | ${mb(gz)} | ${mb(br)} |`);
