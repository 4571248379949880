//! Right to be forgotten (seed 000 §7): the one logged way to delete bronze
//! rows. Deliberately tucked away and demanding a reason.

use medallion_engine::api::Erasure;
use medallion_engine::Lang;
use yew::prelude::*;

use crate::i18n::{fmt_ts, t};

#[derive(Properties, PartialEq, Clone)]
pub struct Props {
    /// Qualified bronze table.
    pub table: String,
    pub erasures: Vec<Erasure>,
    pub lang: Lang,
    /// (condition, reason).
    pub on_forget: Callback<(String, String)>,
}

#[function_component(ForgetPanel)]
pub fn forget_panel(p: &Props) -> Html {
    let lang = p.lang;
    let predicate = use_state(String::new);
    let reason = use_state(String::new);
    let input = |state: &UseStateHandle<String>| {
        let state = state.clone();
        Callback::from(move |e: InputEvent| {
            let el: web_sys::HtmlInputElement = e.target_unchecked_into();
            state.set(el.value());
        })
    };
    let submit = {
        let (cb, predicate, reason, table) = (
            p.on_forget.clone(),
            predicate.clone(),
            reason.clone(),
            p.table.clone(),
        );
        Callback::from(move |_| {
            let question = format!(
                "{} {table} WHERE {} ?",
                t(lang, "confirm_forget"),
                *predicate
            );
            if crate::app::confirm(&question) {
                cb.emit(((*predicate).clone(), (*reason).clone()))
            }
        })
    };
    let mine: Vec<&Erasure> = p.erasures.iter().filter(|e| e.table == p.table).collect();
    html! {
        <details class="forget" id="forget-panel">
            <summary>{ t(lang, "forget") }{ if mine.is_empty() { String::new() } else { format!(" ({})", mine.len()) } }</summary>
            <p class="muted">{ t(lang, "forget_hint") }</p>
            <div class="forget-form">
                <input id="forget-predicate" class="mono" placeholder="raw_payload LIKE '%C-17%'" value={(*predicate).clone()} oninput={input(&predicate)} />
                <input id="forget-reason" placeholder={t(lang, "forget_reason")} value={(*reason).clone()} oninput={input(&reason)} />
                <button class="small danger" id="forget-submit" onclick={submit}>{ t(lang, "forget_button") }</button>
            </div>
            if !mine.is_empty() {
                <table class="grid small" id="erasures">
                    <thead><tr><th>{ t(lang, "version") }</th><th>{ t(lang, "time") }</th><th>{ t(lang, "forget_condition") }</th><th>{ t(lang, "rows") }</th><th>{ t(lang, "forget_reason") }</th></tr></thead>
                    <tbody>
                        { for mine.iter().map(|e| html! {
                            <tr><td>{ e.version }</td><td>{ fmt_ts(e.ts_micros) }</td><td class="mono">{ &e.predicate }</td><td>{ e.rows }</td><td>{ &e.reason }</td></tr>
                        }) }
                    </tbody>
                </table>
            }
        </details>
    }
}
