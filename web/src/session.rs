//! The session saved in the browser, so a reload (or closing and reopening
//! the tab) brings back exactly the same playground.
//!
//! What is saved is the engine's journal (see `engine.rs`): every answered
//! request that changed the engine's state, with the dropped file it read
//! (a `Blob` in IndexedDB) and the time it was made, plus the session seed
//! the engine's ids come from. A new engine given the journal again builds
//! the same tables, versions, quarantine history, rules and batch ids.
//! IndexedDB database `medallion-playground`: store `journal` (auto keys,
//! `{request: JSON text, now: µs, file: Blob | null}`), store `meta` (`seed`).
//!
//! One tab owns the saved session at a time (Web Locks, lock
//! `medallion-playground`): another tab opens it read-only (its changes are
//! not saved) until it takes over.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen(inline_js = r#"
const DB = "medallion-playground";
const LOCK = "medallion-playground";
function open() {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB, 1);
    req.onupgradeneeded = () => {
      req.result.createObjectStore("journal", { autoIncrement: true });
      req.result.createObjectStore("meta");
    };
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}
function done(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error || new DOMException("aborted", "AbortError"));
  });
}
export async function session_load() {
  const db = await open();
  const tx = db.transaction(["journal", "meta"], "readonly");
  const entries = new Promise((resolve, reject) => {
    const r = tx.objectStore("journal").getAll();
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
  const seed = new Promise((resolve, reject) => {
    const r = tx.objectStore("meta").get("seed");
    r.onsuccess = () => resolve(r.result ?? null);
    r.onerror = () => reject(r.error);
  });
  const out = { seed: await seed, entries: await entries };
  db.close();
  return out;
}
export async function session_append(seed, request, now, file, clear, lake) {
  const db = await open();
  try {
    const tx = db.transaction(["journal", "meta"], "readwrite");
    const journal = tx.objectStore("journal");
    if (clear) journal.clear();
    journal.add({ request, now, file: file ?? null, lake: lake ?? null });
    tx.objectStore("meta").put(seed, "seed");
    await done(tx);
  } finally {
    db.close();
  }
}
export async function lake_clear() {
  if (!navigator.storage?.getDirectory) return;
  const root = await navigator.storage.getDirectory();
  try { await root.removeEntry("medallion-lake", { recursive: true }); }
  catch (e) { if (e.name !== "NotFoundError") throw e; }
}
export async function session_clear() {
  const db = await open();
  try {
    const tx = db.transaction(["journal", "meta"], "readwrite");
    tx.objectStore("journal").clear();
    tx.objectStore("meta").clear();
    await done(tx);
  } finally {
    db.close();
  }
}
export async function storage_used() {
  if (!navigator.storage?.estimate) return -1;
  const e = await navigator.storage.estimate();
  return e.usage ?? -1;
}
// Resolves true when this tab holds the lock (kept until the tab closes or
// another tab steals it; then on_lost is called), false if another tab has it.
export function session_lock(steal, on_lost) {
  if (!navigator.locks) return Promise.resolve(true);
  return new Promise((resolve) => {
    const opts = steal ? { steal: true } : { ifAvailable: true };
    navigator.locks.request(LOCK, opts, (lock) => {
      if (!lock) { resolve(false); return null; }
      resolve(true);
      return new Promise(() => {});
    }).catch(() => on_lost());
  });
}
"#)]
extern "C" {
    #[wasm_bindgen(catch)]
    async fn session_load() -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch)]
    async fn session_append(
        seed: &str,
        request: &str,
        now: f64,
        file: Option<web_sys::File>,
        clear: bool,
        lake: Option<f64>,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch)]
    async fn session_clear() -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch)]
    async fn lake_clear() -> Result<JsValue, JsValue>;
    async fn storage_used() -> JsValue;
    async fn session_lock(steal: bool, on_lost: &js_sys::Function) -> JsValue;
}

/// One saved journal entry.
pub struct Saved {
    /// The request as JSON text (an ingest's bytes are in `file`).
    pub request: String,
    /// When it was first made, µs since the Unix epoch (UTC).
    pub now_micros: i64,
    pub file: Option<web_sys::File>,
    /// The `meta.session` version of the lake in the browser's storage
    /// (OPFS) that holds the state after it, if it was written there.
    pub lake: Option<u64>,
}

/// The saved session: its seed (32 hex digits) and journal, oldest first.
pub struct SavedSession {
    pub seed: Option<String>,
    pub entries: Vec<Saved>,
}

fn get(obj: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(obj, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// A storage error as one line (`QuotaExceededError: …` says the browser's storage is full).
fn describe(e: &JsValue) -> String {
    let name = get(e, "name").as_string().unwrap_or_default();
    let message = get(e, "message")
        .as_string()
        .unwrap_or_else(|| format!("{e:?}"));
    if name.is_empty() {
        message
    } else {
        format!("{name}: {message}")
    }
}

/// Is this error the browser saying its storage for the page is full?
pub fn is_quota(message: &str) -> bool {
    message.starts_with("QuotaExceededError")
}

/// Reads the saved session (empty if there is none or storage is unavailable: the error says why).
pub async fn load() -> Result<SavedSession, String> {
    let v = session_load().await.map_err(|e| describe(&e))?;
    let seed = get(&v, "seed").as_string();
    let entries = js_sys::Array::from(&get(&v, "entries"))
        .iter()
        .filter_map(|e| {
            Some(Saved {
                request: get(&e, "request").as_string()?,
                now_micros: get(&e, "now").as_f64()? as i64,
                file: get(&e, "file").dyn_into::<web_sys::File>().ok(),
                lake: get(&e, "lake").as_f64().map(|v| v as u64),
            })
        })
        .collect();
    Ok(SavedSession { seed, entries })
}

/// Appends one journal entry (clearing the journal first when `clear`: the
/// request replaced the whole session). Err names the storage error.
pub async fn append(
    seed: &str,
    request: &str,
    now_micros: i64,
    file: Option<web_sys::File>,
    clear: bool,
    lake: Option<u64>,
) -> Result<(), String> {
    session_append(
        seed,
        request,
        now_micros as f64,
        file,
        clear,
        lake.map(|v| v as f64),
    )
    .await
    .map(|_| ())
    .map_err(|e| describe(&e))
}

/// Deletes the lake saved in the browser's storage (OPFS folder
/// `medallion-lake`, written by the engine's worker). Only once that
/// worker has stopped: it may be writing.
pub async fn clear_lake() -> Result<(), String> {
    lake_clear().await.map(|_| ()).map_err(|e| describe(&e))
}

/// Forgets the saved requests (the journal and the seed).
pub async fn clear() -> Result<(), String> {
    session_clear().await.map(|_| ()).map_err(|e| describe(&e))
}

/// Bytes this origin uses in the browser's storage, if the browser says.
pub async fn used_bytes() -> Option<u64> {
    storage_used()
        .await
        .as_f64()
        .filter(|b| *b >= 0.0)
        .map(|b| b as u64)
}

/// Takes the session's lock: `true` if this tab owns the saved session now.
/// With `steal`, takes it from the tab that has it. `on_lost` runs if
/// another tab steals it later.
pub async fn lock(steal: bool, on_lost: impl FnOnce() + 'static) -> bool {
    let cb = Closure::once_into_js(on_lost);
    session_lock(steal, cb.unchecked_ref())
        .await
        .as_bool()
        .unwrap_or(true)
}

/// The key in `sessionStorage` that makes the next load of this tab take
/// the saved session over from another tab.
const TAKE_OVER: &str = "medallion-playground-take-over";

/// Reloads this tab so that it takes the saved session over (the other tab
/// is told and stops saving).
pub fn take_over_on_reload() {
    let w = gloo::utils::window();
    if let Ok(Some(s)) = w.session_storage() {
        let _ = s.set_item(TAKE_OVER, "1");
    }
    let _ = w.location().reload();
}

/// Was this load asked to take the saved session over? (Asked once.)
pub fn take_over_requested() -> bool {
    let Ok(Some(s)) = gloo::utils::window().session_storage() else {
        return false;
    };
    let asked = s.get_item(TAKE_OVER).ok().flatten().is_some();
    let _ = s.remove_item(TAKE_OVER);
    asked
}
