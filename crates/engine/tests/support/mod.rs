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

#[cfg(not(target_arch = "wasm32"))]
#[allow(dead_code)]
pub mod flights;

use medallion_engine::api::{Request, Response, TableView};
use medallion_engine::Playground;

/// Rows `0..limit` of `table` (`bronze.t`, `silver.quarantine`) at
/// `version` (`None`: the current one); panics on any other answer.
#[allow(dead_code)]
pub async fn rows_at(
    p: &mut Playground,
    table: &str,
    version: Option<u64>,
    limit: usize,
) -> TableView {
    match p
        .handle(Request::GetTable {
            table: table.parse().unwrap(),
            offset: 0,
            limit,
            version,
            corrupt_only: false,
        })
        .await
    {
        Response::Table(t) => t,
        other => panic!("unexpected {other:?}"),
    }
}

/// The cells of `column` in every row of `t` (`None`: NULL); panics naming
/// the columns `t` has when it has no such column.
#[allow(dead_code)]
pub fn col<'a>(t: &'a TableView, column: &str) -> Vec<Option<&'a str>> {
    let i = t
        .columns
        .iter()
        .position(|c| c.name == column)
        .unwrap_or_else(|| {
            panic!(
                "no column {column} in {}: {:?}",
                t.name,
                t.columns.iter().map(|c| &c.name).collect::<Vec<_>>()
            )
        });
    t.rows.iter().map(|r| r[i].as_deref()).collect()
}
