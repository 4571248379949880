//! Shared by the test files that also run in headless Chromium.

/// Gives the browser's event loop a turn (a `setTimeout(0)` task) before the
/// caller goes on; natively it does nothing.
///
/// The engine's futures finish without ever waiting in wasm (the lake is in
/// memory), so a whole test binary would otherwise run as one uninterrupted
/// task. ChromeDriver gives up on a page whose renderer has not answered for
/// 30 s ("Timed out receiving message from renderer"), which a debug build of
/// DataFusion reaches after a few dozen pipeline runs. The request helpers of
/// each test file call this, so no stretch lasts longer than one request.
#[cfg(target_arch = "wasm32")]
pub async fn yield_to_browser() {
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        let set_timeout = js_sys::Reflect::get(&js_sys::global(), &"setTimeout".into())
            .ok()
            .and_then(|f| wasm_bindgen::JsCast::dyn_into::<js_sys::Function>(f).ok());
        match set_timeout {
            Some(f) => {
                let _ = f.call2(&wasm_bindgen::JsValue::UNDEFINED, &resolve, &0.into());
            }
            None => {
                let _ = resolve.call0(&wasm_bindgen::JsValue::UNDEFINED);
            }
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}

/// Natively there is no event loop to give a turn to.
#[cfg(not(target_arch = "wasm32"))]
pub async fn yield_to_browser() {}
