// The engine's Web Worker starts here (a classic worker script, copied to
// dist/ by Trunk). It downloads the engine's WebAssembly while telling the
// page how many bytes have arrived (`{"type":"loading",...}` as JSON text,
// the protocol's FromEngine::Loading), then starts it; the engine then posts
// `{"type":"ready"}` and takes requests. See crates/worker.
importScripts("./medallion-worker.js");

(async () => {
  const post = (message) => postMessage(JSON.stringify(message));
  try {
    const response = await fetch("./medallion-worker_bg.wasm");
    if (!response.ok) throw new Error(`HTTP ${response.status} for medallion-worker_bg.wasm`);
    const total = Number(response.headers.get("content-length")) || 0;
    const reader = response.body.getReader();
    const chunks = [];
    let loaded = 0;
    let reported = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      loaded += value.length;
      if (Date.now() - reported > 100) {
        reported = Date.now();
        post({ type: "loading", loaded_bytes: loaded, total_bytes: total });
      }
    }
    post({ type: "loading", loaded_bytes: loaded, total_bytes: total || loaded });
    const bytes = new Uint8Array(loaded);
    let at = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, at);
      at += chunk.length;
    }
    await wasm_bindgen({ module_or_path: bytes });
  } catch (e) {
    post({ type: "failed", message: `the pipeline engine could not be loaded: ${e}` });
  }
})();
