// A plain static server for a site built by scripts/deploy.sh: serves each
// file as it is, or its precompressed `.br` / `.gz` twin when the browser
// accepts that encoding (Content-Encoding, Vary: Accept-Encoding), with the
// MIME types browsers need (application/wasm for streaming compilation).
// Last-Modified and 304 Not Modified for an unchanged file. No reload
// script, no websocket: what any static host does.
//   node scripts/static-server.mjs dist 8080
import { createServer } from 'node:http';
import { existsSync, statSync, createReadStream } from 'node:fs';
import { join, extname, normalize, sep } from 'node:path';

const root = normalize(process.argv[2] ?? 'dist');
const port = Number(process.argv[3] ?? process.env.PORT ?? 8080);
const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.csv': 'text/csv; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

createServer((req, res) => {
  const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
  let file = normalize(join(root, path));
  if (file !== root && !file.startsWith(root + sep)) {
    res.writeHead(403).end();
    return;
  }
  if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html');
  if (!existsSync(file)) {
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
    return;
  }
  const accepts = String(req.headers['accept-encoding'] ?? '');
  // Revalidated on every use, answered 304 when unchanged (as static hosts
  // do: the browser then keeps its copy, and the engine's compiled code with it).
  const modified = new Date(Math.floor(statSync(file).mtimeMs / 1000) * 1000);
  const since = Date.parse(String(req.headers['if-modified-since'] ?? ''));
  const headers = {
    'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
    Vary: 'Accept-Encoding',
    'Cache-Control': 'no-cache',
    'Last-Modified': modified.toUTCString(),
  };
  if (!Number.isNaN(since) && modified.getTime() <= since) {
    res.writeHead(304, headers).end();
    return;
  }
  let body = file;
  for (const [enc, ext] of [['br', '.br'], ['gzip', '.gz']]) {
    if (accepts.includes(enc) && existsSync(file + ext)) {
      headers['Content-Encoding'] = enc;
      body = file + ext;
      break;
    }
  }
  headers['Content-Length'] = statSync(body).size;
  res.writeHead(200, headers);
  if (req.method === 'HEAD') res.end();
  else createReadStream(body).pipe(res);
}).listen(port, '127.0.0.1', () => {
  console.log(`serving ${root} at http://127.0.0.1:${port}/ (precompressed .br / .gz when accepted)`);
});
