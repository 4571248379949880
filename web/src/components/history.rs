//! A table's versions: pick one to read it as it was (time travel), restore
//! it (silver and gold), or read the whole history.

use medallion_protocol::{Lang, TableName, VersionInfo};
use yew::prelude::*;

use crate::components::use_locked;
use crate::i18n::{fmt_ts, t};

#[derive(Properties, PartialEq, Clone)]
pub struct Props {
    pub table: TableName,
    pub versions: Vec<VersionInfo>,
    /// The version being read, when it is not the current one.
    pub viewing: Option<u64>,
    /// The rows shown are a run's as computed, not yet in any version
    /// ([`medallion_protocol::PipelineView::saving`]).
    #[prop_or_default]
    pub saving: bool,
    pub lang: Lang,
    /// `None` goes back to the current version.
    pub on_travel: Callback<Option<u64>>,
    pub on_restore: Callback<(TableName, u64)>,
}

fn label(lang: Lang, v: &VersionInfo) -> String {
    format!(
        "v{} · {} · {} · {} {}{}",
        v.version,
        operation_text(lang, &v.operation),
        detail_text(lang, &v.detail),
        v.rows,
        crate::i18n::rows_word(lang, v.rows),
        erased_text(lang, v)
    )
}

/// ` (1 erased since)` for a version some of whose rows a right-to-be-forgotten
/// request erased later (reading it gives the rest); empty otherwise.
fn erased_text(lang: Lang, v: &VersionInfo) -> String {
    if v.erased_since == 0 {
        String::new()
    } else {
        format!(" ({} {})", v.erased_since, t(lang, "erased_since"))
    }
}

/// A commit's operation as the log names it (Delta's names: `WRITE`,
/// `APPEND`, `DELETE`, `RESTORE`, `CREATE TABLE`, `MERGE`), glossed in
/// Russian (`WRITE (запись)`); the name itself stays, as in every tool.
pub fn operation_text(lang: Lang, operation: &str) -> String {
    let gloss = match operation {
        "WRITE" => "запись",
        "APPEND" => "добавление",
        "DELETE" => "удаление",
        "RESTORE" => "восстановление",
        "CREATE TABLE" => "создание таблицы",
        "MERGE" => "слияние",
        _ => "",
    };
    if lang == Lang::En || gloss.is_empty() {
        operation.to_string()
    } else {
        format!("{operation} ({gloss})")
    }
}

/// The engine writes commit details in English ("batch 3: f.csv", "run 12
/// (incremental)", "restore of version 2"); this says them in `lang`.
pub fn detail_text(lang: Lang, detail: &str) -> String {
    if lang == Lang::En {
        return detail.to_string();
    }
    detail
        .replacen("batch ", "батч ", 1)
        .replacen("run ", "запуск ", 1)
        .replace("(incremental)", "(инкрементально)")
        .replace("restore of version", "восстановление версии")
        .replacen("right to be forgotten", "право на забвение", 1)
        .replace(
            "append-only, raw_payload + audit columns",
            "только добавление, raw_payload + аудит-колонки",
        )
}

#[function_component(VersionBar)]
pub fn version_bar(p: &Props) -> Html {
    let lang = p.lang;
    let (locked, hint) = use_locked(lang);
    let Some(current) = p.versions.last().map(|v| v.version) else {
        return html! {};
    };
    let onchange = {
        let cb = p.on_travel.clone();
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlSelectElement = e.target_unchecked_into();
            let v = el.value().parse::<u64>().ok();
            cb.emit(v.filter(|v| *v != current));
        })
    };
    let back = {
        let cb = p.on_travel.clone();
        Callback::from(move |_| cb.emit(None))
    };
    let restore = p.viewing.map(|v| {
        let (cb, table) = (p.on_restore.clone(), p.table.clone());
        Callback::from(move |_| cb.emit((table.clone(), v)))
    });
    let selected = p.viewing.unwrap_or(current);
    let bronze = p.table.is_bronze();
    html! {
        <div class="version-bar">
            <label>{ t(lang, "version") }</label>
            <select id="version-select" {onchange}>
                { for p.versions.iter().rev().map(|v| html! {
                    <option value={v.version.to_string()} selected={v.version == selected} disabled={!v.readable}>
                        { label(lang, v) }{ if v.version == current { format!(" ({})", t(lang, "current")) } else if !v.readable { format!(" ({})", t(lang, "expired")) } else { String::new() } }
                    </option>
                }) }
            </select>
            if p.saving && p.viewing.is_none() {
                <span class="muted saving" id="version-saving">{ t(lang, "saving_version") }</span>
            }
            <details id="history">
                <summary>{ format!("{} ({})", t(lang, "history"), p.versions.len()) }</summary>
                <table class="grid small">
                    <thead><tr>
                        <th>{ t(lang, "version") }</th><th>{ t(lang, "time") }</th><th>{ t(lang, "operation") }</th>
                        <th>{ t(lang, "what") }</th><th>{ t(lang, "rows") }</th><th>{ "+" }</th><th>{ "−" }</th>
                    </tr></thead>
                    <tbody>
                        { for p.versions.iter().rev().map(|v| html! {
                            <tr class={classes!((!v.readable).then_some("expired"))}>
                                <td>{ v.version }</td>
                                <td>{ fmt_ts(v.ts_micros) }</td>
                                <td class="mono">{ operation_text(lang, &v.operation) }</td>
                                <td>{ detail_text(lang, &v.detail) }</td>
                                <td>{ v.rows }{ erased_text(lang, v) }</td>
                                <td class="added">{ v.rows_added }</td>
                                <td class="removed">{ v.rows_removed }</td>
                            </tr>
                        }) }
                    </tbody>
                </table>
            </details>
            if let Some(v) = p.viewing {
                <span class="travel" id="time-travel">
                    { format!("{} {v}{} {current}", t(lang, "travel_reading"), t(lang, "travel_current")) }
                    <button class="ghost small" id="back-to-current" onclick={back}>{ t(lang, "back_to_current") }</button>
                    if let Some(restore) = restore.filter(|_| !bronze) {
                        <button class="small" id="restore-version" disabled={locked} title={hint.clone()} onclick={restore}>{ format!("{} {v}", t(lang, "restore")) }</button>
                    }
                    if bronze {
                        <span class="muted">{ t(lang, "bronze_no_restore") }</span>
                    }
                </span>
            }
        </div>
    }
}
