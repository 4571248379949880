//! Small browser helpers the app and the components share.

use medallion_protocol::Lang;

/// Asks the browser's confirm dialog; `false` if it cannot be shown.
pub fn confirm(text: &str) -> bool {
    gloo::utils::window()
        .confirm_with_message(text)
        .unwrap_or(false)
}

/// The page's language: `?lang=ru|en`, else the one chosen last in this browser, else the browser's.
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
    let saved = gloo::utils::window()
        .local_storage()
        .ok()
        .flatten()
        .and_then(|s| s.get_item(LANG_KEY).ok().flatten());
    match saved.as_deref() {
        Some("ru") => return Lang::Ru,
        Some("en") => return Lang::En,
        _ => {}
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

/// Where the learner's language choice is kept in this browser.
const LANG_KEY: &str = "medallion-playground-lang";

/// Keeps `lang` for the next visit and reload: in this browser's storage,
/// and in the address's `?lang=` if it has one (it wins over the storage).
pub fn remember_lang(lang: Lang) {
    let code = if lang == Lang::Ru { "ru" } else { "en" };
    let w = gloo::utils::window();
    if let Ok(Some(s)) = w.local_storage() {
        let _ = s.set_item(LANG_KEY, code);
    }
    let location = w.location();
    let query = location.search().unwrap_or_default();
    if let Ok(params) = web_sys::UrlSearchParams::new_with_str(&query) {
        if params.get("lang").is_some() {
            params.set("lang", code);
            let url = format!(
                "{}?{}{}",
                location.pathname().unwrap_or_default(),
                String::from(params.to_string()),
                location.hash().unwrap_or_default()
            );
            if let Ok(history) = w.history() {
                let _ =
                    history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
            }
        }
    }
}

/// A batch or event id as the page shows it: its first 8 characters (the
/// whole id in the element's title), the same in every panel.
pub fn short_id(id: &str) -> String {
    id.chars().take(8).collect()
}

/// Where the instructor mode choice is kept in this browser.
const INSTRUCTOR_KEY: &str = "medallion-playground-instructor";

/// Is instructor mode on? `?instructor=1` (or `0`) in the address wins over
/// the choice kept in this browser; off by default.
pub fn instructor_mode() -> bool {
    let w = gloo::utils::window();
    let query = w.location().search().unwrap_or_default();
    if let Ok(params) = web_sys::UrlSearchParams::new_with_str(&query) {
        if let Some(v) = params.get("instructor") {
            return v == "1";
        }
    }
    w.local_storage()
        .ok()
        .flatten()
        .and_then(|s| s.get_item(INSTRUCTOR_KEY).ok().flatten())
        .is_some_and(|v| v == "1")
}

/// Keeps the instructor mode choice for the next visit.
pub fn remember_instructor(on: bool) {
    if let Ok(Some(s)) = gloo::utils::window().local_storage() {
        let _ = s.set_item(INSTRUCTOR_KEY, if on { "1" } else { "0" });
    }
}
