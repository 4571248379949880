//! The row trail dialog: where a silver, quarantine or gold row came from.

use medallion_protocol::{Lang, RowTrail};
use yew::prelude::*;

use crate::i18n::{fmt_ts, t};

#[derive(Properties, PartialEq, Clone)]
pub struct Props {
    pub trail: RowTrail,
    pub lang: Lang,
    pub on_close: Callback<()>,
}

/// A trail step as the engine writes it (`passed`, `failed (drop): …`,
/// `col unchanged (x)`, `col: a → b`), said in `lang`; values and the
/// engine's reasons stay as written.
fn step_text(lang: Lang, text: &str) -> String {
    if lang == Lang::En {
        return text.to_string();
    }
    if text == "passed" {
        return t(lang, "step_passed").to_string();
    }
    if let Some(rest) = text.strip_prefix("failed (") {
        return format!("{} ({rest}", t(lang, "step_failed"));
    }
    // `col: 'a' → 1 as INT`: the declared type after the last ` as `.
    if let Some((head, ty)) = text.rsplit_once(" as ") {
        if head.contains(" → ") && !ty.is_empty() && !ty.contains(' ') {
            return format!("{head} {} {ty}", t(lang, "step_as"));
        }
    }
    text.replacen(
        " unchanged (",
        &format!(" {} (", t(lang, "step_unchanged")),
        1,
    )
}

#[function_component(TrailDialog)]
pub fn trail_dialog(p: &Props) -> Html {
    let lang = p.lang;
    let tr = &p.trail;
    let close = {
        let cb = p.on_close.clone();
        Callback::from(move |_| cb.emit(()))
    };
    html! {
        <div class="modal-backdrop">
            <div class="modal trail" id="trail">
                <h3>{ format!("{} · {}", t(lang, "trail_title"), tr.table) }</h3>
                <div class="mono trail-row">{ &tr.row }</div>
                if let Some(n) = &tr.note {
                    <p class="muted">{ n }</p>
                }
                if !tr.records.is_empty() {
                    <p class="muted">{ t(lang, "trail_records") }</p>
                }
                { for tr.records.iter().map(|r| html! {
                    <div class={classes!("trail-record", r.role.clone())}>
                        <div class="trail-head">
                            <span class={classes!("role", r.role.clone())}>{ t(lang, &format!("role_{}", r.role)) }</span>
                            <span class="mono">{ &r.source_file }</span>
                            <span class="muted" title={r.batch_id.clone()}>{ format!("{} {}", t(lang, "batch"), crate::ui::short_id(&r.batch_id)) }</span>
                            if let Some(ts) = r.ingest_ts_micros {
                                <span class="muted">{ fmt_ts(ts) }</span>
                            }
                            <span class="muted mono" title={r.event_id.clone()}>{ format!("{} {}", t(lang, "event"), crate::ui::short_id(&r.event_id)) }</span>
                        </div>
                        <div class="mono raw" title={r.raw_payload.clone()}>{ &r.raw_payload }</div>
                        <ol class="steps">
                            { for r.steps.iter().map(|s| html! {
                                <li class={classes!(s.failed.then_some("failed"))}>
                                    <span class="rule-id">{ &s.rule_id }</span>{ " " }<span class="mono">{ step_text(lang, &s.text) }</span>
                                </li>
                            }) }
                        </ol>
                    </div>
                }) }
                if !tr.silver_rows.is_empty() {
                    <p class="muted">{ t(lang, "trail_silver") }</p>
                    <ul class="trail-silver">
                        { for tr.silver_rows.iter().map(|r| html! {
                            <li><span class="mono">{ r.table.as_str() }</span>{ " " }<span class="mono">{ &r.row }</span></li>
                        }) }
                    </ul>
                }
                <div class="modal-actions"><button onclick={close}>{ t(lang, "close") }</button></div>
            </div>
        </div>
    }
}

