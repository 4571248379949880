//! Medallion Playground UI entry point.

mod app;
mod components;
mod engine;
mod i18n;
mod session;
mod state;
mod ui;

/// A panic aborts the WebAssembly module: every later call fails. Say so on
/// the page (plainly, without Yew, which is gone too) instead of leaving a
/// page that silently stops reacting.
fn show_crash_notice(info: &std::panic::PanicHookInfo<'_>) {
    console_error_panic_hook::hook(info);
    let doc = gloo::utils::document();
    let Ok(el) = doc.create_element("div") else {
        return;
    };
    el.set_id("crash-notice");
    el.set_class_name("crash");
    el.set_text_content(Some(&format!(
        "Medallion Playground stopped after an internal error and cannot continue. Reload the page to start again \
         (this is a bug in Medallion Playground; the details are in the browser console).\n\n{info}"
    )));
    if let Some(body) = doc.body() {
        let _ = body.append_child(&el);
    }
}

fn main() {
    std::panic::set_hook(Box::new(show_crash_notice));
    // The first draw in a task of its own: `main` runs in the task that
    // finished compiling this module, which with the draw was one task of
    // 60 to 110 ms on the page's thread (Chromium).
    gloo::timers::callback::Timeout::new(0, || {
        if let Some(el) = gloo::utils::document().get_element_by_id("loading") {
            el.remove();
        }
        yew::Renderer::<app::App>::new().render();
    })
    .forget();
}
