//! How runs read bronze (full refresh or incremental past the watermark),
//! run buttons, the watermark checkpoints and the replay check.

use medallion_protocol::{watermarks, Checkpoint, Lang, ReplayReport, RunMode};
use yew::prelude::*;

use crate::components::use_locked;
use crate::i18n::{fmt_ts, t};

#[derive(Properties, PartialEq, Clone)]
pub struct Props {
    pub run_mode: RunMode,
    pub checkpoints: Vec<Checkpoint>,
    /// The last replay check, if any.
    pub replay: Option<ReplayReport>,
    /// The session's state now ([`medallion_protocol::PipelineView::state`]):
    /// a replay made on another one is marked as older than the last change.
    pub state: String,
    pub lang: Lang,
    pub on_mode: Callback<RunMode>,
    /// `true`: a full refresh.
    pub on_run: Callback<bool>,
    pub on_replay: Callback<()>,
}

#[function_component(RunBar)]
pub fn run_bar(p: &Props) -> Html {
    let lang = p.lang;
    let (locked, hint) = use_locked(lang);
    let onchange = {
        let cb = p.on_mode.clone();
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlSelectElement = e.target_unchecked_into();
            cb.emit(if el.value() == "incremental" {
                RunMode::Incremental
            } else {
                RunMode::Full
            });
        })
    };
    let run = |full: bool| {
        let cb = p.on_run.clone();
        Callback::from(move |_| cb.emit(full))
    };
    let replay = {
        let cb = p.on_replay.clone();
        Callback::from(move |_| cb.emit(()))
    };
    let incremental = p.run_mode == RunMode::Incremental;
    // The newest checkpoint per bronze table is its watermark.
    let marks = watermarks(&p.checkpoints);
    // A replay compared the tables of another state: say it is older than the last change.
    let stale = p.replay.as_ref().is_some_and(|r| r.state != p.state);
    let replay_text = p.replay.as_ref().map(|r| {
        if r.identical {
            (true, t(lang, "replay_identical").to_string())
        } else if let Some(e) = &r.error {
            (false, format!("{}: {e}", t(lang, "replay_failed")))
        } else {
            let diffs: Vec<String> = r
                .tables
                .iter()
                .filter(|d| d.only_current > 0 || d.only_replayed > 0)
                .map(|d| {
                    format!(
                        "{}: {} {} {} / {} {}",
                        d.name,
                        d.only_current,
                        crate::i18n::rows_word(lang, d.only_current),
                        t(lang, "only_current"),
                        d.only_replayed,
                        t(lang, "only_replayed")
                    )
                })
                .collect();
            (
                false,
                format!("{} {}", t(lang, "replay_differs"), diffs.join("; ")),
            )
        }
    });
    html! {
        <div class="runbar" id="runbar">
            <label>{ t(lang, "runs") }</label>
            <select id="run-mode" disabled={locked} title={hint.clone()} {onchange}>
                <option value="full" selected={!incremental}>{ t(lang, "mode_full") }</option>
                <option value="incremental" selected={incremental}>{ t(lang, "mode_incremental") }</option>
            </select>
            <button class="small" id="run-now" disabled={locked} title={hint.clone()} onclick={run(false)}>{ t(lang, "run_now") }</button>
            if incremental {
                <button class="small" id="full-refresh" disabled={locked} title={hint.clone()} onclick={run(true)}>{ t(lang, "full_refresh") }</button>
            }
            <button class="small" id="replay" disabled={locked} title={hint} onclick={replay}>{ t(lang, "replay") }</button>
            if let Some((ok, text)) = replay_text {
                <span id="replay-result" class={classes!("replay-result", if stale { "stale" } else if ok { "ok" } else { "bad" })}
                    title={stale.then(|| t(lang, "replay_stale_hint"))}>
                    { if stale { format!("{} {text}", t(lang, "replay_stale")) } else { text } }
                </span>
            }
            <span class="spacer"></span>
            <details id="watermark">
                <summary title={marks.iter().map(|(t, ts)| format!("{t} ≤ {}", fmt_ts(*ts))).collect::<Vec<_>>().join("\n")}>
                    { t(lang, "watermark") }{ ": " }
                    { marks.values().copied().max().map(fmt_ts).unwrap_or_else(|| "—".into()) }
                    { format!(" · {} {}", p.checkpoints.len(), crate::i18n::checkpoints_word(lang, p.checkpoints.len())) }
                </summary>
                <div class="muted">{ t(lang, "watermark_hint") }</div>
                <table class="grid small" id="checkpoints">
                    <thead><tr><th>{ t(lang, "run_word") }</th><th>{ t(lang, "cp_bronze_table") }</th><th>{ t(lang, "cp_last_ingest_ts") }</th><th title={t(lang, "cp_new_hint")}>{ t(lang, "cp_new_batches") }</th><th title={t(lang, "cp_new_hint")}>{ t(lang, "cp_new_rows") }</th><th>{ t(lang, "cp_mode") }</th></tr></thead>
                    <tbody>
                        { for p.checkpoints.iter().rev().map(|c| html! {
                            <tr>
                                <td>{ c.run }</td><td class="mono">{ c.bronze_table.as_str() }</td><td>{ fmt_ts(c.last_ingest_ts_micros) }</td>
                                <td>{ c.batches }</td><td>{ c.rows }</td>
                                <td>{ t(lang, if c.mode == RunMode::Incremental { "cp_incremental" } else { "cp_full" }) }</td>
                            </tr>
                        }) }
                    </tbody>
                </table>
            </details>
        </div>
    }
}
