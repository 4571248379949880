//! The UI's handle on the engine. Requests and responses are the engine's
//! serializable API types, so this bridge could move the engine into a web
//! worker without any panel changing.

use std::rc::Rc;

use futures::lock::Mutex;
use medallion_engine::api::{Request, Response};
use medallion_engine::Playground;
use yew::Callback;

/// Shared engine; requests queue on an async lock and run one at a time.
#[derive(Clone)]
pub struct Engine(Rc<Mutex<Option<Playground>>>);

impl PartialEq for Engine {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl Engine {
    pub fn new() -> Self {
        let pg = Playground::new().ok();
        Engine(Rc::new(Mutex::new(pg)))
    }

    /// Runs `request` and hands the response to `done`.
    pub fn send(&self, request: Request, done: Callback<Response>) {
        let inner = self.0.clone();
        wasm_bindgen_futures::spawn_local(async move {
            let mut guard = inner.lock().await;
            let response = match guard.as_mut() {
                Some(pg) => pg.handle(request).await,
                None => Response::Error {
                    message: "the pipeline engine could not start in this browser".into(),
                },
            };
            drop(guard);
            done.emit(response);
        });
    }
}
