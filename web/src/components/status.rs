//! The engine's status under the top bar: the engine's download ("loading
//! engine… 12 of 54 MB") before the first answer, a progress bar with
//! **Cancel** while a request runs longer than a moment, and a notice with
//! **Restart** if the engine stopped. Only this component re-renders on
//! progress reports, never the panels.

use medallion_protocol::wire::Progress;
use medallion_protocol::{Lang, Response};
use yew::prelude::*;

use crate::engine::{Engine, EngineStatus};
use crate::i18n::t;

#[derive(Properties, PartialEq, Clone)]
pub struct Props {
    pub engine: Engine,
    pub lang: Lang,
    /// Hears the engine's answer after a cancel or restart (the state before).
    pub on_restored: Callback<Response>,
}

/// `12.3 MB` for a byte count.
fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1_000_000.0)
}

/// One line saying what a progress report is about.
fn progress_text(lang: Lang, p: &Progress) -> String {
    match p {
        Progress::Reading {
            file,
            bytes,
            total_bytes,
            records,
        } => format!(
            "{} {file}: {} / {}, {records} {}",
            t(lang, "progress_reading"),
            megabytes(*bytes),
            megabytes(*total_bytes),
            t(lang, "progress_records")
        ),
        Progress::Rule { table, rule, n, of } => {
            format!("{table}: {} {rule} ({n} / {of})", t(lang, "progress_rule"))
        }
        Progress::Model { table, n, of } => {
            format!("{} {table} ({n} / {of})", t(lang, "progress_model"))
        }
        Progress::Writing { table, n, of } => {
            format!("{} {table} ({n} / {of})", t(lang, "progress_writing"))
        }
    }
}

#[function_component(EngineStatusBar)]
pub fn engine_status_bar(p: &Props) -> Html {
    let status = use_state(|| EngineStatus::Loading {
        loaded: 0,
        total: 0,
    });
    {
        let (engine, status) = (p.engine.clone(), status.clone());
        use_effect_with((), move |_| {
            engine.listen(Callback::from(move |s| status.set(s)));
        });
    }
    let lang = p.lang;
    let cancel = {
        let (engine, restored) = (p.engine.clone(), p.on_restored.clone());
        Callback::from(move |_| engine.cancel(t(lang, "cancelled").into(), restored.clone()))
    };
    let restart = {
        let (engine, restored) = (p.engine.clone(), p.on_restored.clone());
        Callback::from(move |_| engine.restart(restored.clone()))
    };
    let bar = |fraction: Option<f64>| match fraction {
        Some(f) => html! { <progress id="engine-progress" max="1000" value={format!("{:.0}", f * 1000.0)} /> },
        None => html! { <progress id="engine-progress" /> },
    };
    match &*status {
        EngineStatus::Idle => html! {},
        EngineStatus::Loading { loaded, total } => html! {
            <div class="engine-status loading-engine" id="engine-status">
                <span>{ t(lang, "loading_engine") }</span>
                { bar((*total > 0).then(|| *loaded as f64 / *total as f64)) }
                <span class="muted">{ if *total > 0 { format!("{} / {}", megabytes(*loaded), megabytes(*total)) } else { megabytes(*loaded) } }</span>
            </div>
        },
        EngineStatus::Starting => html! {
            <div class="engine-status loading-engine" id="engine-status">
                <span>{ t(lang, "starting_engine") }</span>
                { bar(None) }
            </div>
        },
        EngineStatus::Busy { progress } => html! {
            <div class="engine-status busy" id="engine-status">
                <span id="engine-progress-text">{ progress.as_ref().map(|pr| progress_text(lang, pr)).unwrap_or_else(|| t(lang, "working").into()) }</span>
                { bar(progress.as_ref().map(Progress::fraction)) }
                <button class="ghost" id="engine-cancel" onclick={cancel}>{ t(lang, "cancel") }</button>
            </div>
        },
        EngineStatus::Restoring => html! {
            <div class="engine-status busy" id="engine-status">
                <span>{ t(lang, "restoring") }</span>
                { bar(None) }
            </div>
        },
        EngineStatus::Failed(message) => html! {
            <div class="engine-status failed" id="engine-failed">
                <span>{ message.clone() }</span>
                <button id="engine-restart" onclick={restart}>{ t(lang, "restart_engine") }</button>
            </div>
        },
    }
}
