//! The engine's dedicated Web Worker (built by Trunk, `data-type="worker"`).
//!
//! The page posts `{ id, request, file? }` (see [`medallion_protocol::wire`]);
//! this worker runs each request on one [`Playground`], in the order they
//! arrive, and posts back [`FromEngine`] messages as JSON text: `ready` once
//! the module is loaded, `progress` while a request runs, `done` with its
//! response. A `file` (a `File` or an `ArrayBuffer`) becomes the bytes of an
//! `ingest` request here, off the page's thread.
//!
//! The lake is kept in the browser's storage (OPFS, folder
//! `medallion-lake`, one file per lake path, its name URI-encoded): at start
//! the worker reads it back and opens the saved session
//! (`Playground::open`), and in the tab that owns the session
//! (`engine-loader.js?...&lake=write`) every request that changes state is
//! followed by writing what changed (data files first, the table logs, the
//! session's state, the session's log entry last, then deletions) before
//! the answer is posted.
//!
//! Natively this binary does nothing: the engine's native callers use the
//! `medallion-engine` crate directly.

#[cfg(target_arch = "wasm32")]
mod worker {
    use std::cell::RefCell;
    use std::collections::{HashMap, VecDeque};
    use std::rc::Rc;
    use std::sync::Arc;

    use futures::lock::Mutex;
    use futures::{StreamExt, TryStreamExt};
    use medallion_engine::env::{IdGenerator, RandomIds, RequestClock, SeededIds};
    use medallion_engine::Playground;
    use medallion_protocol::wire::{Envelope, FromEngine, Progress};
    use medallion_protocol::{Request, Response};
    use object_store::memory::InMemory;
    use object_store::path::Path;
    use object_store::{ObjectStore, ObjectStoreExt};
    use wasm_bindgen::prelude::*;
    use wasm_bindgen::JsCast;
    use wasm_bindgen_futures::JsFuture;
    use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

    // Defined in `static/engine-loader.js` (a classic worker script: the
    // `no-modules` output cannot import JavaScript snippets).
    #[wasm_bindgen]
    extern "C" {
        #[wasm_bindgen(js_name = medallion_lake_available)]
        fn lake_available() -> bool;
        #[wasm_bindgen(catch, js_name = medallion_lake_read)]
        async fn lake_read() -> Result<JsValue, JsValue>;
        #[wasm_bindgen(catch, js_name = medallion_lake_write)]
        async fn lake_write(path: &str, bytes: &js_sys::Uint8Array) -> Result<JsValue, JsValue>;
        #[wasm_bindgen(catch, js_name = medallion_lake_delete)]
        async fn lake_delete(path: &str) -> Result<JsValue, JsValue>;
        #[wasm_bindgen(catch, js_name = medallion_lake_clear)]
        async fn lake_clear() -> Result<JsValue, JsValue>;
        #[wasm_bindgen(catch, js_name = medallion_download)]
        async fn download(path: &str, progress: &js_sys::Function) -> Result<JsValue, JsValue>;
        /// A promise of the worker's settings, `?session=…&lake=…`.
        #[wasm_bindgen(js_name = medallion_worker_settings)]
        fn worker_settings() -> js_sys::Promise;
    }

    /// Before a request that loads an example with downloads: fetches each
    /// one the session does not hold yet (reporting the bytes that arrived as
    /// [`Progress::Downloading`] under request `id`, of the gzip size, or of
    /// no known total when the host decoded the file on the way) and gives it to the
    /// engine. The error says which file could not be fetched, and why.
    async fn fetch_downloads(
        pg: &mut Playground,
        request: &Request,
        id: u64,
    ) -> Result<(), String> {
        let Request::LoadExample { example, .. } = request else {
            return Ok(());
        };
        let Some(info) = medallion_protocol::examples::example_info(example) else {
            return Ok(());
        };
        for d in pg.missing_downloads(info) {
            let (file, total) = (d.file.to_string(), d.gzip_bytes);
            // `decoded`: the host sent the file with a Content-Encoding, so
            // the bytes counted are the unzipped ones and the gzip size is
            // no total for them.
            let progress = Closure::<dyn Fn(f64, bool)>::new(move |bytes: f64, decoded: bool| {
                post(&FromEngine::Progress {
                    id,
                    progress: Progress::Downloading {
                        file: file.clone(),
                        bytes: bytes as u64,
                        total_bytes: if decoded { 0 } else { total },
                    },
                })
            });
            let bytes = download(d.path, progress.as_ref().unchecked_ref())
                .await
                .map_err(|e| {
                    format!(
                        "{} could not be downloaded from {}: {}",
                        d.file,
                        d.path,
                        js_text(&e)
                    )
                })?;
            let bytes = bytes
                .dyn_into::<js_sys::Uint8Array>()
                .map_err(|_| format!("{}: the download gave no bytes", d.file))?
                .to_vec();
            pg.add_download(d.path, bytes).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// A JavaScript error as `Name: message` (`QuotaExceededError: …`).
    fn js_text(e: &JsValue) -> String {
        let get = |k: &str| {
            js_sys::Reflect::get(e, &JsValue::from_str(k))
                .ok()
                .and_then(|v| v.as_string())
        };
        match (get("name"), get("message")) {
            (Some(n), Some(m)) => format!("{n}: {m}"),
            (None, Some(m)) => m,
            _ => e.as_string().unwrap_or_else(|| format!("{e:?}")),
        }
    }

    /// What of the lake is in the browser's storage: the store it mirrors
    /// (a load makes a new one) and each file's `e_tag` when written.
    #[derive(Default)]
    struct Mirror {
        store: Option<Arc<dyn ObjectStore>>,
        files: HashMap<String, String>,
    }

    /// How many files of one rank are written to OPFS at once.
    const SAVED_AT_ONCE: usize = 4;

    /// Order of writes: data files, table logs, the session's files, the
    /// session's log entry (a commit is visible only after its files).
    fn rank(path: &str) -> u8 {
        match (
            path.starts_with("meta/session/"),
            path.contains("/_delta_log/"),
        ) {
            (false, false) => 0,
            (false, true) => 1,
            (true, false) => 2,
            (true, true) => 3,
        }
    }

    impl Mirror {
        /// Writes what changed in `store` since the last call (everything
        /// when it is a new store: the old lake is cleared first), then
        /// deletes what is gone; `saving(n, of)` hears each file once it
        /// is written (n of them so far).
        async fn flush(
            &mut self,
            store: Arc<dyn ObjectStore>,
            saving: impl Fn(u32, u32),
        ) -> Result<(), String> {
            let same = self.store.as_ref().is_some_and(|s| Arc::ptr_eq(s, &store));
            if !same {
                lake_clear().await.map_err(|e| js_text(&e))?;
                self.files.clear();
                self.store = Some(store.clone());
            }
            let listing: Vec<object_store::ObjectMeta> = store
                .list(None)
                .try_collect()
                .await
                .map_err(|e| e.to_string())?;
            let mut now = HashMap::new();
            let mut writes = Vec::new();
            for m in listing {
                let path = m.location.to_string();
                let tag = m.e_tag.unwrap_or_default();
                if self.files.get(&path) != Some(&tag) {
                    writes.push((rank(&path), path.clone(), m.location.clone(), tag.clone()));
                }
                now.insert(path, tag);
            }
            writes.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
            let of = writes.len() as u32;
            let mut written = 0;
            // One rank at a time (a commit is visible only after its
            // files); the files of a rank are written side by side, a few
            // at once (OPFS writes wait on the disk more than on the CPU).
            for rank_files in writes.chunk_by(|a, b| a.0 == b.0) {
                let store = &store;
                let mut landed = futures::stream::iter(rank_files)
                    .map(|(_, path, location, tag)| async move {
                        let bytes = async { store.get(location).await?.bytes().await }
                            .await
                            .map_err(|e| e.to_string())?;
                        let array = js_sys::Uint8Array::from(bytes.as_ref());
                        lake_write(path, &array)
                            .await
                            .map_err(|e| format!("{} ({path})", js_text(&e)))?;
                        Ok::<_, String>((path, tag))
                    })
                    .buffer_unordered(SAVED_AT_ONCE);
                while let Some(done) = landed.next().await {
                    let (path, tag) = done?;
                    written += 1;
                    saving(written, of);
                    self.files.insert(path.clone(), tag.clone());
                }
            }
            let gone: Vec<String> = self
                .files
                .keys()
                .filter(|p| !now.contains_key(*p))
                .cloned()
                .collect();
            for path in gone {
                lake_delete(&path)
                    .await
                    .map_err(|e| format!("{} ({path})", js_text(&e)))?;
                self.files.remove(&path);
            }
            Ok(())
        }
    }

    /// The session saved in the browser's storage, opened (with the
    /// `meta.session` version it was at), or `None` when there is none or
    /// it cannot be read (said on the console).
    async fn open_saved(
        clock: Arc<RequestClock>,
        ids: Arc<dyn IdGenerator>,
        mirror: &mut Mirror,
    ) -> Option<(Playground, u64)> {
        if !lake_available() {
            return None;
        }
        let files = match lake_read().await {
            Ok(f) => js_sys::Array::from(&f),
            Err(e) => {
                web_sys::console::warn_1(
                    &format!("the saved lake could not be read: {}", js_text(&e)).into(),
                );
                return None;
            }
        };
        if files.length() == 0 {
            return None;
        }
        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let mut tags = HashMap::new();
        for pair in files.iter() {
            let pair = js_sys::Array::from(&pair);
            let path = pair.get(0).as_string().unwrap_or_default();
            let bytes = js_sys::Uint8Array::new(&pair.get(1)).to_vec();
            match store.put(&Path::from(path.as_str()), bytes.into()).await {
                Ok(r) => {
                    tags.insert(path, r.e_tag.unwrap_or_default());
                }
                Err(e) => {
                    web_sys::console::warn_1(&format!("{path}: {e}").into());
                    return None;
                }
            }
        }
        let opened = Playground::open(
            clock,
            ids,
            Arc::new(|| Arc::new(InMemory::new())),
            store.clone(),
        )
        .await;
        match opened {
            Ok(Some(pg)) => {
                let version = pg.saved_version()?;
                // What the browser holds: the files as read (opening may
                // have rolled some back and rewritten working copies).
                mirror.store = Some(store);
                mirror.files = tags;
                Some((pg, version))
            }
            Ok(None) => None,
            Err(e) => {
                web_sys::console::warn_1(
                    &format!("the saved lake could not be opened: {e}").into(),
                );
                None
            }
        }
    }

    fn scope() -> DedicatedWorkerGlobalScope {
        js_sys::global().unchecked_into()
    }

    /// Posts one message to the page. A message that cannot be serialized
    /// or posted is reported as the request's error instead of being lost.
    fn post(message: &FromEngine) {
        let text = serde_json::to_string(message).unwrap_or_else(|e| {
            serde_json::json!({
                "type": "failed",
                "message": format!("an engine message could not be encoded: {e}"),
            })
            .to_string()
        });
        if let Err(e) = scope().post_message(&JsValue::from_str(&text)) {
            web_sys::console::error_1(&format!("posting to the page failed: {e:?}").into());
        }
    }

    /// The bytes of the message's `file` (a `File`/`Blob` or an `ArrayBuffer`), if it has one.
    async fn file_bytes(data: &JsValue, file_name: &str) -> Result<Option<Vec<u8>>, String> {
        let file =
            js_sys::Reflect::get(data, &JsValue::from_str("file")).map_err(|e| format!("{e:?}"))?;
        if file.is_undefined() || file.is_null() {
            return Ok(None);
        }
        let buffer = if let Some(blob) = file.dyn_ref::<web_sys::Blob>() {
            // Refused by its size before it is read: reading a file of
            // gigabytes takes seconds, or fails with the browser's own words.
            let size = blob.size() as u64;
            if let Some(refusal) = medallion_engine::playground::file_too_big(file_name, size) {
                return Err(refusal.to_string());
            }
            JsFuture::from(blob.array_buffer())
                .await
                .map_err(|e| format!("the file could not be read: {e:?}"))?
        } else {
            file
        };
        Ok(Some(js_sys::Uint8Array::new(&buffer).to_vec()))
    }

    /// Parses one posted message into its envelope (with the file's bytes in an ingest).
    async fn envelope(data: &JsValue) -> Result<Envelope, (u64, String)> {
        let id = js_sys::Reflect::get(data, &JsValue::from_str("id"))
            .ok()
            .and_then(|v| v.as_f64())
            .unwrap_or(0.0) as u64;
        let text = js_sys::Reflect::get(data, &JsValue::from_str("request"))
            .ok()
            .and_then(|v| v.as_string())
            .ok_or((
                id,
                "a request reached the engine without its JSON text".to_string(),
            ))?;
        let mut env: Envelope = serde_json::from_str(&text)
            .map_err(|e| (id, format!("the engine could not read the request: {e}")))?;
        let file_name = match &env.request {
            Request::Ingest { file_name, .. } => file_name.clone(),
            _ => String::new(),
        };
        if let Some(bytes) = file_bytes(data, &file_name).await.map_err(|m| (id, m))? {
            if let Request::Ingest { bytes: b, .. } = &mut env.request {
                *b = bytes;
            }
        }
        Ok(env)
    }

    /// A parameter of the worker's settings (`?session=<32 hex digits>&lake=write`:
    /// its URL's query, or the early worker's first message, see `engine-loader.js`).
    fn parameter(settings: &str, name: &str) -> Option<String> {
        settings
            .trim_start_matches('?')
            .split('&')
            .find_map(|kv| kv.strip_prefix(&format!("{name}=")).map(str::to_string))
    }

    /// The `session` parameter: the seed of the session's ids.
    fn session_seed(settings: &str) -> Option<u128> {
        parameter(settings, "session").and_then(|hex| u128::from_str_radix(&hex, 16).ok())
    }

    pub fn start() {
        std::panic::set_hook(Box::new(|info| {
            console_error_panic_hook::hook(info);
            post(&FromEngine::Failed {
                message: format!("the pipeline engine stopped after an internal error: {info}"),
            });
        }));
        wasm_bindgen_futures::spawn_local(async move {
            let settings = JsFuture::from(worker_settings())
                .await
                .ok()
                .and_then(|s| s.as_string())
                .unwrap_or_default();
            // Ids from the page's session seed: a new worker given the session's
            // requests again after a cancel names every batch as before.
            let ids: Arc<dyn IdGenerator> = match session_seed(&settings) {
                Some(seed) => Arc::new(SeededIds::new(seed)),
                None => Arc::new(RandomIds::default()),
            };
            // The clock reads the time the page made each request, so a request
            // given again to a new worker stamps exactly what it stamped first.
            let clock = Arc::new(RequestClock::default());
            let persist =
                parameter(&settings, "lake").as_deref() == Some("write") && lake_available();
            let mut mirror = Mirror::default();
            let (pg, opened) = match open_saved(clock.clone(), ids.clone(), &mut mirror).await {
                Some((pg, version)) => {
                    // Opening deleted what a save cut short left (data files
                    // no log names): the browser's copy loses them too.
                    if let (true, Some(store)) = (persist, mirror.store.clone()) {
                        if let Err(e) = mirror.flush(store, |_, _| {}).await {
                            web_sys::console::warn_1(
                                &format!("the saved lake could not be tidied: {e}").into(),
                            );
                        }
                    }
                    (pg, Some(version))
                }
                None => match Playground::with_env(clock.clone(), ids) {
                    Ok(pg) => (pg, None),
                    Err(e) => {
                        post(&FromEngine::Failed {
                            message: format!(
                                "the pipeline engine could not start in this browser: {e}"
                            ),
                        });
                        return;
                    }
                },
            };
            let engine = Rc::new(Mutex::new((pg, mirror)));
            listen(engine, clock, persist, opened.is_some());
            post(&FromEngine::Ready {
                opened,
                persisted: persist,
            });
        });
    }

    /// The page's messages not carried out yet, oldest first, and whether
    /// a task is carrying them out.
    #[derive(Default)]
    struct Inbox {
        waiting: VecDeque<JsValue>,
        draining: bool,
    }

    /// Carries out the page's messages. `warm`: a saved session was
    /// opened, so once the inbox is first empty the engine reads bronze
    /// into its parse cache ([`Playground::warm_up`]) and the first rule
    /// edit after a reload is as quick as the ones after it.
    fn listen(
        engine: Rc<Mutex<(Playground, Mirror)>>,
        clock: Arc<RequestClock>,
        persist: bool,
        warm: bool,
    ) {
        // Requests run one at a time in arrival order: one task takes them
        // from the inbox (the lock's waiters are woken in no set order, so
        // a task per message could run a later edit before an earlier one).
        let inbox: Rc<RefCell<Inbox>> = Rc::default();
        let warm = Rc::new(std::cell::Cell::new(warm));
        let on_message = Closure::<dyn Fn(MessageEvent)>::new(move |ev: MessageEvent| {
            let start = {
                let mut i = inbox.borrow_mut();
                i.waiting.push_back(ev.data());
                !std::mem::replace(&mut i.draining, true)
            };
            if !start {
                return;
            }
            let (engine, clock, inbox, warm) =
                (engine.clone(), clock.clone(), inbox.clone(), warm.clone());
            wasm_bindgen_futures::spawn_local(async move {
                loop {
                    let next = {
                        let mut i = inbox.borrow_mut();
                        let next = i.waiting.pop_front();
                        i.draining = next.is_some();
                        next
                    };
                    let Some(data) = next else { break };
                    carry_out(&engine, &clock, persist, data).await;
                    if inbox.borrow().waiting.is_empty() && warm.replace(false) {
                        engine.lock().await.0.warm_up();
                    }
                }
            });
        });
        scope().set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        on_message.forget();
    }

    /// Carries out one posted message and posts its progress, preview and answer.
    async fn carry_out(
        engine: &Mutex<(Playground, Mirror)>,
        clock: &RequestClock,
        persist: bool,
        data: JsValue,
    ) {
        let mut held = engine.lock().await;
        let (pg, mirror) = &mut *held;
        let env = match envelope(&data).await {
            Ok(env) => env,
            Err((id, message)) => {
                post(&FromEngine::Done {
                    id,
                    response: Response::Error { message },
                    saved: None,
                    not_saved: None,
                });
                return;
            }
        };
        let id = env.id;
        if let Some(now) = env.now_micros {
            clock.set(now);
        }
        let changes = env.request.changes_state();
        pg.set_progress(Some(Box::new(move |progress| {
            post(&FromEngine::Progress { id, progress })
        })));
        // The run's result goes to the page before its versions are
        // written (the answer follows with them committed).
        if env.request.previews() {
            pg.set_preview(Some(Box::new(move |view| {
                post(&FromEngine::Preview {
                    id,
                    view: Box::new(view),
                })
            })));
        }
        let response = match fetch_downloads(pg, &env.request, id).await {
            Ok(()) => pg.handle(env.request).await,
            Err(message) => Response::Error { message },
        };
        pg.set_progress(None);
        pg.set_preview(None);
        let (mut saved, mut not_saved) = (None, None);
        if persist && changes {
            let saving = |n, of| {
                post(&FromEngine::Progress {
                    id,
                    progress: Progress::Saving { n, of },
                })
            };
            match mirror.flush(pg.lake_store(), saving).await {
                Ok(()) => saved = pg.saved_version(),
                Err(e) => not_saved = Some(e),
            }
        }
        post(&FromEngine::Done {
            id,
            response,
            saved,
            not_saved,
        });
    }
}

fn main() {
    #[cfg(target_arch = "wasm32")]
    worker::start();
}
