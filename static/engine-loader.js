// The engine's Web Worker starts here (a classic worker script, copied to
// dist/ by Trunk). It downloads the engine's WebAssembly while telling the
// page how many bytes have arrived (`{"type":"loading",...}` as JSON text,
// the protocol's FromEngine::Loading), then starts it; the engine then posts
// `{"type":"ready"}` and takes requests. See crates/worker.
// The module is asked for before anything else, so its download (the
// longest step of a first visit) overlaps loading the glue script below.
const medallion_wasm = fetch("./medallion-worker_bg.wasm");
importScripts("./medallion-worker.js");

// The worker's settings, the query text `?session=<32 hex digits>&lake=write|read`
// (crates/worker reads them): from its own address, or, for the worker
// index.html starts before the page knows them (`engine-loader.js?settings=later`,
// so the engine downloads while the page loads), from the page's first message.
const medallion_settings = new URLSearchParams(location.search).get("settings") === "later"
  ? new Promise((resolve) => {
    self.onmessage = (e) => {
      self.onmessage = null;
      resolve(String(e.data));
    };
  })
  : Promise.resolve(location.search);
function medallion_worker_settings() {
  return medallion_settings;
}

// The lake kept in the browser's storage (OPFS), used by the engine
// (crates/worker): one file per lake path, its name URI-encoded, in the
// folder `medallion-lake`. A file is written whole (createWritable commits
// on close), so a tab closed mid-write leaves the previous file.
const MEDALLION_LAKE = "medallion-lake";
async function medallion_lake_dir(create) {
  const root = await navigator.storage.getDirectory();
  return await root.getDirectoryHandle(MEDALLION_LAKE, { create });
}
function medallion_lake_available() {
  return !!(self.navigator && navigator.storage && navigator.storage.getDirectory);
}
async function medallion_lake_read() {
  let d;
  try { d = await medallion_lake_dir(false); } catch (e) { if (e.name === "NotFoundError") return []; throw e; }
  const out = [];
  for await (const [name, h] of d.entries()) {
    if (h.kind !== "file") continue;
    const f = await h.getFile();
    out.push([decodeURIComponent(name), new Uint8Array(await f.arrayBuffer())]);
  }
  return out;
}
async function medallion_lake_write(path, bytes) {
  const d = await medallion_lake_dir(true);
  const h = await d.getFileHandle(encodeURIComponent(path), { create: true });
  const w = await h.createWritable();
  await w.write(bytes);
  await w.close();
}
async function medallion_lake_delete(path) {
  const d = await medallion_lake_dir(true);
  try { await d.removeEntry(encodeURIComponent(path)); } catch (e) { if (e.name !== "NotFoundError") throw e; }
}
async function medallion_lake_clear() {
  const root = await navigator.storage.getDirectory();
  try { await root.removeEntry(MEDALLION_LAKE, { recursive: true }); } catch (e) { if (e.name !== "NotFoundError") throw e; }
}

// `stream` passed through as it is, while `progress(bytes, done)` hears
// the bytes that have gone by, every 100 ms, and once more at the end with
// done = true.
function medallion_counted(stream, progress) {
  let loaded = 0;
  let reported = 0;
  return stream.pipeThrough(new TransformStream({
    transform(chunk, out) {
      loaded += chunk.length;
      if (Date.now() - reported > 100) {
        reported = Date.now();
        progress(loaded, false);
      }
      out.enqueue(chunk);
    },
    flush() {
      progress(loaded, true);
    },
  }));
}

// An example's download (crates/protocol/src/examples.rs, Download): the
// gzip file at `path`, relative to the page; `progress(bytes, decoded)`
// hears the bytes that have arrived, every 100 ms. Returns the file's own
// bytes. A host that sends it with a Content-Encoding (Apache's
// `AddEncoding gzip .gz`, S3 metadata) hands over the unzipped bytes:
// `decoded` is then true (the gzip size is no total for them), and the
// bytes are unzipped here only if they start as gzip does.
async function medallion_download(path, progress) {
  const response = await fetch("./" + path);
  if (!response.ok) throw new Error(`HTTP ${response.status} for ${path}`);
  const decoded = (response.headers.get("content-encoding") || "identity") !== "identity";
  const bytes = await new Response(medallion_counted(response.body, (n) => progress(n, decoded))).blob();
  const head = new Uint8Array(await bytes.slice(0, 2).arrayBuffer());
  if (head[0] !== 0x1f || head[1] !== 0x8b) return new Uint8Array(await bytes.arrayBuffer());
  const plain = bytes.stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(plain).arrayBuffer());
}

(async () => {
  const post = (message) => postMessage(JSON.stringify(message));
  try {
    const response = await medallion_wasm;
    if (!response.ok) throw new Error(`HTTP ${response.status} for medallion-worker_bg.wasm`);
    // Content-Length counts the bytes sent; served compressed (the deploy
    // build's .br / .gz), those are fewer than the module's bytes read
    // here, so the total is then unknown until the end.
    const encoding = response.headers.get("content-encoding") || "identity";
    const total = encoding === "identity" ? Number(response.headers.get("content-length")) || 0 : 0;
    // Compiled as it arrives (streaming compilation). From the response
    // itself, so the browser may keep the compiled code with its cached
    // copy for the next visit, while a clone of it is counted; a host that
    // does not say `application/wasm` gets the counted bytes compiled
    // under that type instead.
    const progress = (n, done) =>
      post({ type: "loading", loaded_bytes: n, total_bytes: done ? total || n : total });
    const wasm = (response.headers.get("content-type") || "").split(";")[0].trim() === "application/wasm";
    const [source, counted] = wasm
      ? [response, medallion_counted(response.clone().body, progress).pipeTo(new WritableStream())]
      : [new Response(medallion_counted(response.body, progress), { headers: { "Content-Type": "application/wasm" } }), null];
    const [module] = await Promise.all([WebAssembly.compileStreaming(source), counted]);
    await wasm_bindgen({ module_or_path: module });
  } catch (e) {
    post({ type: "failed", message: `the pipeline engine could not be loaded: ${e}` });
  }
})();
