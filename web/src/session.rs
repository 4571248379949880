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
//! not saved) until it takes over. Taking over is a handover (channel
//! `medallion-playground-session`): the owner stops its engine, which may
//! be writing the lake, before it lets go, so two engines never write it.

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
// The owner of the session and the other tabs talk on this channel:
// "take-over" (a tab asks the owner to let go: it stops its engine, which
// may be writing the lake, then releases the lock) and "owner-left" (the
// owner's page is going away).
const CHANNEL = "medallion-playground-session";
let held = null; // releases the lock this tab holds
// Resolves true when this tab holds the lock (kept until the tab closes, it
// lets go on request, or another tab steals it: then on_lost is called),
// false if another tab has it. With take_over, asks the owner to let go and
// waits for the lock (10 s; then takes it: the owner did not answer).
export function session_lock(take_over, on_lost, on_release_asked, on_owner_left) {
  const channel = typeof BroadcastChannel === "function" ? new BroadcastChannel(CHANNEL) : null;
  if (channel) {
    channel.onmessage = (e) => {
      if (e.data === "take-over" && held) on_release_asked();
      if (e.data === "owner-left" && !held) on_owner_left();
    };
    addEventListener("pagehide", () => { if (held) channel.postMessage("owner-left"); });
  }
  if (!navigator.locks) return Promise.resolve(true);
  return new Promise((resolve) => {
    let granted = false;
    const hold = (lock) => {
      if (!lock) { resolve(false); return null; }
      granted = true;
      resolve(true);
      return new Promise((release) => { held = release; });
    };
    const lost = () => { held = null; on_lost(); };
    if (!take_over) {
      navigator.locks.request(LOCK, { ifAvailable: true }, hold).catch(lost);
      return;
    }
    if (channel) channel.postMessage("take-over");
    const signal = typeof AbortSignal.timeout === "function" ? AbortSignal.timeout(10000) : undefined;
    navigator.locks.request(LOCK, { signal }, hold).catch(() => {
      if (granted) { lost(); return; }
      // The owner did not let go in time (a frozen tab): take the lock.
      navigator.locks.request(LOCK, { steal: true }, hold).catch(lost);
    });
  });
}
// Lets go of the lock this tab holds (after a "take-over" request).
export function session_release() {
  const release = held;
  held = null;
  if (release) release();
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
    async fn session_lock(
        take_over: bool,
        on_lost: &js_sys::Function,
        on_release_asked: &js_sys::Function,
        on_owner_left: &js_sys::Function,
    ) -> JsValue;
    fn session_release();
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

/// What the tab that owns the session, or shows it read-only, hears from the others.
pub struct LockEvents {
    /// Another tab stole the lock (it asked and this tab did not let go in time).
    pub lost: Box<dyn FnOnce()>,
    /// Another tab asks to take the session over: stop writing the lake,
    /// then call [`release`].
    pub release_asked: Box<dyn FnMut()>,
    /// (In a tab that does not own it.) The owner's page is going away.
    pub owner_left: Box<dyn FnMut()>,
}

/// Takes the session's lock: `true` if this tab owns the saved session now.
/// With `take_over`, asks the tab that has it to let go (it stops its
/// engine first, so nothing writes the lake while this tab opens it) and
/// waits for it; a tab that does not answer within 10 s loses it anyway.
pub async fn lock(take_over: bool, events: LockEvents) -> bool {
    let lost = Closure::once_into_js(events.lost);
    let asked = Closure::<dyn FnMut()>::new(events.release_asked).into_js_value();
    let left = Closure::<dyn FnMut()>::new(events.owner_left).into_js_value();
    session_lock(
        take_over,
        lost.unchecked_ref(),
        asked.unchecked_ref(),
        left.unchecked_ref(),
    )
    .await
    .as_bool()
    .unwrap_or(true)
}

/// Lets go of the session's lock (after [`LockEvents::release_asked`]).
pub fn release() {
    session_release();
}

/// The key in `sessionStorage` naming the files whose ingest was under way
/// when this tab was left (a JSON array of `file → bronze.table` texts).
const LOST_INGESTS: &str = "medallion-playground-lost-ingests";

/// Remembers, for the next load of this tab, the ingests that were still
/// on their way when the page was left (nothing when `files` is empty).
pub fn remember_lost_ingests(files: &[String]) {
    if files.is_empty() {
        return;
    }
    if let (Ok(Some(s)), Ok(json)) = (gloo::utils::window().session_storage(), serde_json::to_string(files)) {
        let _ = s.set_item(LOST_INGESTS, &json);
    }
}

/// The ingests lost when this tab was last left mid-way (asked once).
pub fn lost_ingests() -> Vec<String> {
    let Ok(Some(s)) = gloo::utils::window().session_storage() else {
        return vec![];
    };
    let lost = s.get_item(LOST_INGESTS).ok().flatten();
    let _ = s.remove_item(LOST_INGESTS);
    lost.and_then(|j| serde_json::from_str(&j).ok()).unwrap_or_default()
}

/// The key in `sessionStorage` that makes the next load of this tab take
/// the saved session over from another tab.
const TAKE_OVER: &str = "medallion-playground-take-over";

/// Reloads this tab so that it takes the saved session over (the other tab
/// is asked to stop its engine and let go, see [`lock`]).
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
