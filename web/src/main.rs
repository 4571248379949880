//! Medallion Playground UI entry point.

mod app;
mod components;
mod engine;
mod i18n;

fn main() {
    console_error_panic_hook::set_once();
    if let Some(el) = gloo::utils::document().get_element_by_id("loading") {
        el.remove();
    }
    yew::Renderer::<app::App>::new().render();
}
