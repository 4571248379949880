//! The engine's dedicated Web Worker (built by Trunk, `data-type="worker"`).
//!
//! The page posts `{ id, request, file? }` (see [`medallion_protocol::wire`]);
//! this worker runs each request on one [`Playground`], in the order they
//! arrive, and posts back [`FromEngine`] messages as JSON text: `ready` once
//! the module is loaded, `progress` while a request runs, `done` with its
//! response. A `file` (a `File` or an `ArrayBuffer`) becomes the bytes of an
//! `ingest` request here, off the page's thread.
//!
//! Natively this binary does nothing: the engine's native callers use the
//! `medallion-engine` crate directly.

#[cfg(target_arch = "wasm32")]
mod worker {
    use std::rc::Rc;
    use std::sync::Arc;

    use futures::lock::Mutex;
    use medallion_engine::env::{IdGenerator, RandomIds, RequestClock, SeededIds};
    use medallion_engine::Playground;
    use medallion_protocol::wire::{Envelope, FromEngine};
    use medallion_protocol::{Request, Response};
    use wasm_bindgen::prelude::*;
    use wasm_bindgen::JsCast;
    use wasm_bindgen_futures::JsFuture;
    use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

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
    async fn file_bytes(data: &JsValue) -> Result<Option<Vec<u8>>, String> {
        let file =
            js_sys::Reflect::get(data, &JsValue::from_str("file")).map_err(|e| format!("{e:?}"))?;
        if file.is_undefined() || file.is_null() {
            return Ok(None);
        }
        let buffer = if let Some(blob) = file.dyn_ref::<web_sys::Blob>() {
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
        if let Some(bytes) = file_bytes(data).await.map_err(|m| (id, m))? {
            if let Request::Ingest { bytes: b, .. } = &mut env.request {
                *b = bytes;
            }
        }
        Ok(env)
    }

    /// The `session` parameter of the worker's URL (`engine-loader.js?session=<32 hex digits>`).
    fn session_seed() -> Option<u128> {
        let search = scope().location().search();
        search
            .trim_start_matches('?')
            .split('&')
            .find_map(|kv| kv.strip_prefix("session="))
            .and_then(|hex| u128::from_str_radix(hex, 16).ok())
    }

    pub fn start() {
        std::panic::set_hook(Box::new(|info| {
            console_error_panic_hook::hook(info);
            post(&FromEngine::Failed {
                message: format!("the pipeline engine stopped after an internal error: {info}"),
            });
        }));
        // Ids from the page's session seed: a new worker given the session's
        // requests again after a cancel names every batch as before.
        let ids: Arc<dyn IdGenerator> = match session_seed() {
            Some(seed) => Arc::new(SeededIds::new(seed)),
            None => Arc::new(RandomIds),
        };
        // The clock reads the time the page made each request, so a request
        // given again to a new worker stamps exactly what it stamped first.
        let clock = Arc::new(RequestClock::default());
        let engine = match Playground::with_env(clock.clone(), ids) {
            Ok(pg) => Rc::new(Mutex::new(pg)),
            Err(e) => {
                post(&FromEngine::Failed {
                    message: format!("the pipeline engine could not start in this browser: {e}"),
                });
                return;
            }
        };
        let on_message = Closure::<dyn Fn(MessageEvent)>::new(move |ev: MessageEvent| {
            let (engine, clock) = (engine.clone(), clock.clone());
            wasm_bindgen_futures::spawn_local(async move {
                // Requests run in arrival order: each task takes the lock
                // before its first await (the lock queues in order).
                let mut pg = engine.lock().await;
                let data = ev.data();
                let env = match envelope(&data).await {
                    Ok(env) => env,
                    Err((id, message)) => {
                        post(&FromEngine::Done {
                            id,
                            response: Response::Error { message },
                        });
                        return;
                    }
                };
                let id = env.id;
                if let Some(now) = env.now_micros {
                    clock.set(now);
                }
                pg.set_progress(Some(Box::new(move |progress| {
                    post(&FromEngine::Progress { id, progress })
                })));
                let response = pg.handle(env.request).await;
                pg.set_progress(None);
                post(&FromEngine::Done { id, response });
            });
        });
        scope().set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        on_message.forget();
        post(&FromEngine::Ready);
    }
}

fn main() {
    #[cfg(target_arch = "wasm32")]
    worker::start();
}
