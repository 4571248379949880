//! Right to be forgotten (seed 000 §7): the one logged way to delete bronze
//! rows. Deliberately tucked away and demanding a reason. The engine plans
//! first (the exact rows per table, with a sample) and the learner confirms
//! that plan; the delete carries the session state the plan was made on, so
//! it is refused if anything changed in between (and the page drops a plan
//! once the state it was made on is gone).

use medallion_protocol::{Erasure, ErasurePlan, Lang, TableName};
use yew::prelude::*;

use crate::components::use_locked;
use crate::i18n::{fmt_ts, rows_word, t};

#[derive(Properties, PartialEq, Clone)]
pub struct Props {
    pub table: TableName,
    pub erasures: Vec<Erasure>,
    pub lang: Lang,
    /// The plan for the condition in the form, once asked for.
    pub plan: Option<ErasurePlan>,
    /// Ask for the plan of (condition).
    pub on_plan: Callback<String>,
    /// Carry out the shown plan: (condition, reason, planned bronze rows,
    /// the session state it was made on).
    pub on_forget: Callback<(String, String, usize, String)>,
    /// Drop the shown plan.
    pub on_cancel: Callback<()>,
}

#[function_component(ForgetPanel)]
pub fn forget_panel(p: &Props) -> Html {
    let lang = p.lang;
    let (locked, hint) = use_locked(lang);
    let predicate = use_state(String::new);
    let reason = use_state(String::new);
    let input = |state: &UseStateHandle<String>, cancel: Option<Callback<()>>| {
        let state = state.clone();
        Callback::from(move |e: InputEvent| {
            let el: web_sys::HtmlInputElement = e.target_unchecked_into();
            state.set(el.value());
            // A plan belongs to the condition it was made for.
            if let Some(c) = &cancel {
                c.emit(());
            }
        })
    };
    let ask = {
        let (cb, predicate) = (p.on_plan.clone(), predicate.clone());
        Callback::from(move |_| cb.emit((*predicate).clone()))
    };
    let plan = p
        .plan
        .as_ref()
        .filter(|pl| pl.table == p.table && pl.predicate == *predicate);
    let confirm = {
        let (cb, predicate, reason) = (p.on_forget.clone(), predicate.clone(), reason.clone());
        let rows = plan.map(|pl| pl.rows).unwrap_or_default();
        let state = plan.map(|pl| pl.state.clone()).unwrap_or_default();
        Callback::from(move |_| {
            cb.emit((
                (*predicate).clone(),
                (*reason).clone(),
                rows,
                state.clone(),
            ))
        })
    };
    let cancel = {
        let cb = p.on_cancel.clone();
        Callback::from(move |_| cb.emit(()))
    };
    let mine: Vec<&Erasure> = p.erasures.iter().filter(|e| e.table == p.table).collect();
    html! {
        <details class="forget" id="forget-panel">
            <summary>{ t(lang, "forget") }{ if mine.is_empty() { String::new() } else { format!(" ({})", mine.len()) } }</summary>
            <p class="muted">{ t(lang, "forget_hint") }</p>
            <div class="forget-form">
                <input id="forget-predicate" class="mono" placeholder="raw_payload LIKE '%C-17%'" value={(*predicate).clone()} oninput={input(&predicate, Some(p.on_cancel.clone()))} />
                <input id="forget-reason" placeholder={t(lang, "forget_reason")} value={(*reason).clone()} oninput={input(&reason, None)} />
                <button class="small" id="forget-plan" disabled={predicate.trim().is_empty()} onclick={ask}>{ t(lang, "forget_plan_button") }</button>
            </div>
            if let Some(pl) = plan {
                <div class="erasure-plan" id="erasure-plan">
                    <p class="plan-head">
                        { format!("{} {} {} ({})", t(lang, "forget_plan_head"), pl.rows, rows_word(lang, pl.rows), pl.table) }
                        if pl.messages > 0 {
                            { format!(" · {} {}", pl.messages, t(lang, "forget_plan_messages")) }
                        }
                        if !pl.files.is_empty() {
                            { format!(" · {} {}", pl.files.len(), t(lang, "forget_plan_files")) }
                        }
                    </p>
                    <table class="grid small">
                        <thead><tr><th>{ t(lang, "table") }</th><th>{ t(lang, "rows") }</th><th>{ t(lang, "forget_plan_leave") }</th><th>{ t(lang, "forget_plan_appear") }</th><th>{ t(lang, "forget_plan_sample") }</th></tr></thead>
                        <tbody>
                            { for pl.tables.iter().map(|c| html! {
                                <tr class="plan-table" id={format!("plan-{}", c.name.as_str().replace('.', "-"))}>
                                    <td class="mono">{ c.name.as_str() }</td>
                                    <td>{ c.rows_before }</td>
                                    <td class={classes!((c.removed > 0).then_some("bad"))}>{ format!("−{}", c.removed) }</td>
                                    <td>{ if c.added > 0 { format!("+{}", c.added) } else { String::new() } }</td>
                                    <td>
                                        { for c.sample_removed.iter().map(|r| html! { <div class="mono removed">{ format!("− {r}") }</div> }) }
                                        { for c.sample_added.iter().map(|r| html! { <div class="mono added">{ format!("+ {r}") }</div> }) }
                                    </td>
                                </tr>
                            }) }
                        </tbody>
                    </table>
                    if let Some(e) = &pl.rebuild_error {
                        <p class="rule-error">{ format!("{}: {e}", t(lang, "forget_plan_rebuild_error")) }</p>
                    }
                    <p class="muted">{ t(lang, "forget_plan_final") }</p>
                    <div class="modal-actions">
                        <button class="small danger" id="forget-submit" disabled={locked || reason.trim().is_empty()}
                            title={hint.clone().unwrap_or_else(|| if reason.trim().is_empty() { t(lang, "forget_reason_needed") } else { "" }.into())}
                            onclick={confirm}>{ format!("{} ({} {})", t(lang, "forget_button"), pl.rows, rows_word(lang, pl.rows)) }</button>
                        <button class="ghost small" id="forget-cancel" onclick={cancel}>{ t(lang, "cancel") }</button>
                    </div>
                </div>
            }
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
