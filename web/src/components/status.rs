//! The engine's status under the top bar: the engine's download ("loading
//! engine… 12 of 54 MB") before the first answer, a progress bar with
//! **Cancel** while a request runs longer than a moment, and a notice with
//! **Restart** if the engine stopped. Only this component re-renders on
//! progress reports, never the panels. [`SessionBar`]: whether the session
//! is saved in this browser.

use medallion_protocol::wire::Progress;
use medallion_protocol::{Lang, Response};
use yew::prelude::*;

use crate::engine::{Engine, EngineStatus, Restore, SessionState};
use crate::i18n::t;

#[derive(Properties, PartialEq, Clone)]
pub struct Props {
    pub engine: Engine,
    pub lang: Lang,
    /// Hears the engine's answer after a cancel or restart (the state before).
    pub on_restored: Callback<Response>,
}

/// A byte count for people: `512 B`, `4.2 KB`, `12.3 MB` (decimal units;
/// `Б`, `КБ`, `12,3 МБ` in Russian, with a decimal comma), so a small file
/// never reads `0.0 MB`.
fn size_text(lang: Lang, bytes: u64) -> String {
    let (value, unit) = if bytes < 1_000 {
        return format!("{bytes} {}", t(lang, "bytes_unit"));
    } else if bytes < 1_000_000 {
        (bytes as f64 / 1_000.0, "kb")
    } else {
        (bytes as f64 / 1_000_000.0, "mb")
    };
    format!("{} {}", lang.decimal(format!("{value:.1}")), t(lang, unit))
}

/// One line saying what a progress report is about.
fn progress_text(lang: Lang, p: &Progress) -> String {
    match p {
        Progress::Downloading {
            file,
            bytes,
            total_bytes,
        } if *total_bytes > 0 => format!(
            "{} {file}: {} / {}",
            t(lang, "progress_downloading"),
            size_text(lang, *bytes),
            size_text(lang, *total_bytes)
        ),
        Progress::Downloading { file, bytes, .. } => format!(
            "{} {file}: {}",
            t(lang, "progress_downloading"),
            size_text(lang, *bytes)
        ),
        Progress::Reading {
            file,
            bytes,
            total_bytes,
            records,
        } => format!(
            "{} {file}: {} / {}, {records} {}",
            t(lang, "progress_reading"),
            size_text(lang, *bytes),
            size_text(lang, *total_bytes),
            t(lang, "progress_records")
        ),
        Progress::Parsing {
            table,
            records,
            n,
            of,
        } => format!(
            "{} {table}: {records} {} ({n} / {of})",
            t(lang, "progress_parsing"),
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
        Progress::Saving { n, of } => {
            format!("{} ({n} / {of})", t(lang, "progress_saving"))
        }
    }
}

/// What the page is waiting for when the engine is (re)started to give the
/// session back: said for the whole wait, the engine's download included.
fn restoring_label(lang: Lang, why: Option<Restore>) -> Html {
    match why {
        Some(why) => html! {
            <strong class="restoring">{ t(lang, match why {
                Restore::Saved => "restoring_saved",
                Restore::Cancelled => "restoring",
            }) }</strong>
        },
        None => html! {},
    }
}

#[function_component(EngineStatusBar)]
pub fn engine_status_bar(p: &Props) -> Html {
    let status = use_state(|| EngineStatus::Loading {
        loaded: 0,
        total: 0,
        restoring: None,
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
        Some(f) => {
            html! { <progress id="engine-progress" max="1000" value={format!("{:.0}", f * 1000.0)} /> }
        }
        None => html! { <progress id="engine-progress" /> },
    };
    // The bar sits in a slot that keeps its height when idle: a run that
    // starts never pushes the page down under the pointer (a quick second
    // click landed on the rule below the one meant).
    let inner = match &*status {
        EngineStatus::Idle => html! {},
        EngineStatus::Loading {
            loaded,
            total,
            restoring,
        } => {
            let size = if *total > 0 {
                format!("{} / {}", size_text(lang, *loaded), size_text(lang, *total))
            } else {
                size_text(lang, *loaded)
            };
            html! {
                <div class="engine-status loading-engine" id="engine-status">
                    { restoring_label(lang, *restoring) }
                    <span>{ t(lang, "loading_engine") }</span>
                    { bar((*total > 0).then(|| *loaded as f64 / *total as f64)) }
                    <span class="muted">{ size }</span>
                </div>
            }
        }
        EngineStatus::Starting { restoring } => html! {
            <div class="engine-status loading-engine" id="engine-status">
                { restoring_label(lang, *restoring) }
                <span>{ t(lang, "starting_engine") }</span>
                { bar(None) }
            </div>
        },
        EngineStatus::Busy { progress, file } => html! {
            <div class="engine-status busy" id="engine-status">
                <span id="engine-progress-text">{ match (progress, file) {
                    (Some(pr), _) => progress_text(lang, pr),
                    (None, Some((name, size))) => format!("{} {name} ({})…", t(lang, "sending_file"), size_text(lang, *size)),
                    (None, None) => t(lang, "working").into(),
                } }</span>
                { bar(progress.as_ref().and_then(Progress::fraction)) }
                <button class="ghost" id="engine-cancel" onclick={cancel}>{ t(lang, "cancel") }</button>
            </div>
        },
        EngineStatus::Restoring(why) => html! {
            <div class="engine-status busy" id="engine-status">
                { restoring_label(lang, Some(*why)) }
                { bar(None) }
            </div>
        },
        EngineStatus::Failed(message) => html! {
            <div class="engine-status failed" id="engine-failed">
                <span>{ message.clone() }</span>
                <button id="engine-restart" onclick={restart}>{ t(lang, "restart_engine") }</button>
            </div>
        },
    };
    html! { <div class="engine-status-slot">{ inner }</div> }
}

#[derive(Properties, PartialEq, Clone)]
pub struct SessionProps {
    pub engine: Engine,
    pub lang: Lang,
}

/// The top bar's word on the saved session: saved in this browser (with
/// the storage used) and **Start fresh**; or read-only because another
/// tab has it, with **Take over**; or not saved, and why.
#[function_component(SessionBar)]
pub fn session_bar(p: &SessionProps) -> Html {
    let state = use_state(|| SessionState::Opening);
    {
        let (engine, state) = (p.engine.clone(), state.clone());
        use_effect_with((), move |_| {
            engine.listen_session(Callback::from(move |s| state.set(s)));
        });
    }
    let lang = p.lang;
    let start_fresh = {
        let engine = p.engine.clone();
        Callback::from(move |_| {
            if !crate::ui::confirm(t(lang, "start_fresh_confirm")) {
                return;
            }
            let engine = engine.clone();
            wasm_bindgen_futures::spawn_local(async move {
                // The worker stops first: it may be writing the lake.
                engine.stop();
                if let Err(e) = crate::session::clear().await {
                    web_sys::console::error_1(
                        &format!("the saved session could not be cleared: {e}").into(),
                    );
                }
                if let Err(e) = crate::session::clear_lake().await {
                    web_sys::console::error_1(
                        &format!("the saved lake could not be cleared: {e}").into(),
                    );
                }
                engine.leave(|| {
                    let _ = gloo::utils::window().location().reload();
                });
            });
        })
    };
    // Taking over or reloading shows the saved session: changes made only
    // here are gone then, so ask first when there are any.
    let discard_ok = {
        let engine = p.engine.clone();
        move || {
            let n = engine.unsaved_changes();
            n == 0 || crate::ui::confirm(&t(lang, "discard_unsaved").replace("{n}", &n.to_string()))
        }
    };
    let take_over = {
        let (engine, discard_ok) = (p.engine.clone(), discard_ok.clone());
        Callback::from(move |_| {
            if discard_ok() {
                engine.leave(crate::session::take_over_on_reload);
            }
        })
    };
    let reload = {
        let engine = p.engine.clone();
        Callback::from(move |_| {
            if discard_ok() {
                engine.leave(|| {
                    let _ = gloo::utils::window().location().reload();
                });
            }
        })
    };
    match &*state {
        SessionState::Opening => html! {},
        SessionState::Saved { used } => html! {
            <span class="session" id="session-state">
                <span title={t(lang, "saved_hint")}>{ t(lang, "saved") }{ used.map(|b| format!(" · {}", size_text(lang, b))).unwrap_or_default() }</span>
                <button class="ghost" id="start-fresh" onclick={start_fresh}>{ t(lang, "start_fresh") }</button>
            </span>
        },
        SessionState::ReadOnly => html! {
            <span class="session warn" id="session-state">
                <span>{ t(lang, "read_only") }</span>
                <button class="ghost" id="take-over" title={t(lang, "take_over_hint")} onclick={take_over}>{ t(lang, "take_over") }</button>
                <button class="ghost" id="reload-page" title={t(lang, "reload_hint")} onclick={reload}>{ t(lang, "reload_page") }</button>
            </span>
        },
        SessionState::OwnerLeft => html! {
            <span class="session warn" id="session-state">
                <span>{ t(lang, "owner_left") }</span>
                <button class="ghost" id="reload-page" title={t(lang, "owner_left_hint")} onclick={reload.clone()}>{ t(lang, "reload_page") }</button>
            </span>
        },
        SessionState::Lost => html! {
            <span class="session warn" id="session-state">
                <span>{ t(lang, "taken_over") }</span>
                <button class="ghost" id="take-over" title={t(lang, "take_over_hint")} onclick={take_over}>{ t(lang, "take_over") }</button>
                <button class="ghost" id="reload-page" title={t(lang, "reload_hint")} onclick={reload}>{ t(lang, "reload_page") }</button>
            </span>
        },
        SessionState::Erased { lake_kept, used } => html! {
            <span class={if *lake_kept { "session" } else { "session warn" }} id="session-state">
                <span>{ t(lang, if *lake_kept { "saved_erased" } else { "not_saved_erased" }) }{ used.filter(|_| *lake_kept).map(|b| format!(" · {}", size_text(lang, b))).unwrap_or_default() }</span>
                <button class="ghost" id="start-fresh" onclick={start_fresh.clone()}>{ t(lang, "start_fresh") }</button>
            </span>
        },
        SessionState::NotSaved(why) => html! {
            <span class="session warn" id="session-state">
                <span title={why.clone()}>{ if crate::session::is_quota(why) { t(lang, "storage_full") } else { t(lang, "not_saved") } }</span>
                <button class="ghost" id="start-fresh" onclick={start_fresh}>{ t(lang, "start_fresh") }</button>
            </span>
        },
    }
}
