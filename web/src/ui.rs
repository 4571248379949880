//! Small browser helpers the app and the components share.

use medallion_protocol::Lang;

/// Asks the browser's confirm dialog; `false` if it cannot be shown.
pub fn confirm(text: &str) -> bool {
    gloo::utils::window()
        .confirm_with_message(text)
        .unwrap_or(false)
}

/// The page's language: `?lang=ru|en`, else the browser's.
pub fn initial_lang() -> Lang {
    let query = gloo::utils::window()
        .location()
        .search()
        .unwrap_or_default();
    if let Ok(params) = web_sys::UrlSearchParams::new_with_str(&query) {
        match params.get("lang").as_deref() {
            Some("ru") => return Lang::Ru,
            Some("en") => return Lang::En,
            _ => {}
        }
    }
    let nav = gloo::utils::window()
        .navigator()
        .language()
        .unwrap_or_default();
    if nav.starts_with("ru") {
        Lang::Ru
    } else {
        Lang::En
    }
}
