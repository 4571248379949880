//! JavaScript facade over the engine, in the style of Ruff's `ruff_wasm`: one
//! exported type, a handful of methods, JSON across the boundary, and one
//! place where engine errors become JavaScript errors.
//!
//! ```js
//! import init, { Playground } from "./medallion_wasm.js";
//! await init();
//! const pg = await Playground.example("nyc_taxi_silver", "en");
//! const view = JSON.parse(await pg.request(JSON.stringify({ type: "snapshot" })));
//! view.snapshot ?? view; // see `medallion_engine::api::Response`
//! await pg.ingest("bronze.nyc_taxi_yellow", "more.csv", new Uint8Array(bytes));
//! ```

use std::rc::Rc;

use futures::lock::Mutex;
use medallion_engine::api::{Lang, Request, Response};
use wasm_bindgen::prelude::*;

/// A playground for JavaScript callers. Requests are serialized through an
/// async lock, so overlapping calls queue instead of failing.
#[wasm_bindgen]
pub struct Playground {
    inner: Rc<Mutex<medallion_engine::Playground>>,
}

fn js_err(message: impl std::fmt::Display) -> JsError {
    JsError::new(&message.to_string())
}

fn parse_lang(lang: &str) -> Result<Lang, JsError> {
    match lang {
        "en" => Ok(Lang::En),
        "ru" => Ok(Lang::Ru),
        other => Err(js_err(format!(
            "unknown language {other:?}; use \"en\" or \"ru\""
        ))),
    }
}

#[wasm_bindgen]
impl Playground {
    /// An empty playground (no tables until an example is loaded).
    #[wasm_bindgen(constructor)]
    pub fn new() -> Result<Playground, JsError> {
        console_error_panic_hook::set_once();
        let inner = medallion_engine::Playground::new().map_err(js_err)?;
        Ok(Playground {
            inner: Rc::new(Mutex::new(inner)),
        })
    }

    /// A playground with a bundled example loaded and run (`lang`: "en" or "ru").
    pub async fn example(name: String, lang: String) -> Result<Playground, JsError> {
        let pg = Playground::new()?;
        pg.inner
            .lock()
            .await
            .load_example(&name, parse_lang(&lang)?)
            .await
            .map_err(js_err)?;
        Ok(pg)
    }

    /// Sends one request (JSON of `medallion_engine::api::Request`) and returns
    /// the response as JSON. Rejects with the engine's message when the
    /// response is an error.
    pub async fn request(&self, request_json: String) -> Result<String, JsError> {
        let request: Request =
            serde_json::from_str(&request_json).map_err(|e| js_err(format!("bad request: {e}")))?;
        let response = self.inner.lock().await.handle(request).await;
        respond(response)
    }

    /// Appends a file to a bronze table as a new batch and returns the new snapshot (JSON).
    pub async fn ingest(
        &self,
        table: String,
        file_name: String,
        bytes: Vec<u8>,
    ) -> Result<String, JsError> {
        let response = self
            .inner
            .lock()
            .await
            .handle(Request::Ingest {
                table,
                file_name,
                bytes,
                options: Default::default(),
            })
            .await;
        respond(response)
    }

    /// The current snapshot (JSON of `medallion_engine::api::PipelineView`).
    pub async fn snapshot(&self) -> Result<String, JsError> {
        respond(self.inner.lock().await.handle(Request::Snapshot).await)
    }
}

fn respond(response: Response) -> Result<String, JsError> {
    if let Response::Error { message } = &response {
        return Err(js_err(message));
    }
    serde_json::to_string(&response).map_err(js_err)
}
