//! The selected table: its columns and a page of rows; the batch log under a
//! bronze table; the SQL editor above a gold table.

use medallion_engine::api::{GoldView, TableView};
use medallion_engine::bronze::BatchInfo;
use medallion_engine::Lang;
use yew::prelude::*;

use crate::i18n::t;

use medallion_engine::playground::PREVIEW_ROWS as PAGE;

#[derive(Properties, PartialEq, Clone)]
pub struct Props {
    pub table: TableView,
    pub lang: Lang,
    pub batches: Vec<BatchInfo>,
    pub gold: Option<GoldView>,
    pub gold_draft: String,
    pub on_gold_sql: Callback<String>,
    /// (table, offset) to show another page.
    pub on_page: Callback<(String, usize)>,
}

fn fmt_ts(micros: i64) -> String {
    let secs = micros.div_euclid(1_000_000);
    let d = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(secs as f64 * 1000.0));
    d.to_iso_string()
        .as_string()
        .unwrap_or_default()
        .replace('T', " ")
        .trim_end_matches(".000Z")
        .to_string()
        + " UTC"
}

#[function_component(TablePanel)]
pub fn table_panel(p: &Props) -> Html {
    let tv = &p.table;
    let lang = p.lang;
    let first = if tv.row_count == 0 { 0 } else { tv.offset + 1 };
    let last = tv.offset + tv.rows.len();
    let nav = |offset: usize| {
        let (cb, name) = (p.on_page.clone(), tv.name.clone());
        Callback::from(move |_| cb.emit((name.clone(), offset)))
    };
    let gold_editor = match (&p.gold, tv.layer.as_str()) {
        (Some(g), "gold") if format!("gold.{}", g.model.name) == tv.name => {
            let oninput = {
                let cb = p.on_gold_sql.clone();
                Callback::from(move |e: InputEvent| {
                    let el: web_sys::HtmlTextAreaElement = e.target_unchecked_into();
                    cb.emit(el.value());
                })
            };
            html! {
                <div class="gold-editor">
                    <label>{ t(lang, "gold_sql") }</label>
                    <textarea id="gold-sql" class="mono" rows="6" spellcheck="false" value={p.gold_draft.clone()} {oninput} />
                    if let Some(err) = &g.error {
                        <div class="rule-error" id="gold-error">{ err }</div>
                    }
                </div>
            }
        }
        _ => html! {},
    };
    let batches: Vec<&BatchInfo> = p
        .batches
        .iter()
        .filter(|b| tv.layer == "bronze" && format!("bronze.{}", b.table) == tv.name)
        .collect();
    html! {
        <div class="panel table-panel" id="table-view">
            <div class="table-head">
                <h2 id="table-title">{ &tv.name }</h2>
                <span class="muted">{ &tv.description }</span>
            </div>
            { gold_editor }
            <div class="pager">
                <span id="table-range">{ format!("{} {first}–{last} {} {} · {} {}", t(lang, "showing"), t(lang, "of"), tv.row_count, tv.columns.len(), t(lang, "columns")) }</span>
                <button class="ghost small" disabled={tv.offset == 0} onclick={nav(tv.offset.saturating_sub(PAGE))}>{ t(lang, "prev") }</button>
                <button class="ghost small" disabled={last >= tv.row_count} onclick={nav(tv.offset + PAGE)}>{ t(lang, "next") }</button>
            </div>
            <div class="grid-wrap">
                <table class="grid">
                    <thead>
                        <tr>
                            <th class="rownum">{ "#" }</th>
                            { for tv.columns.iter().map(|c| html! {
                                <th title={c.data_type.clone()}>{ &c.name }<span class="type">{ &c.data_type }</span></th>
                            }) }
                        </tr>
                    </thead>
                    <tbody>
                        { for tv.rows.iter().enumerate().map(|(i, row)| html! {
                            <tr>
                                <td class="rownum">{ tv.offset + i + 1 }</td>
                                { for row.iter().zip(&tv.columns).map(|(cell, col)| match cell {
                                    Some(v) => html! { <td class={classes!((col.name == "raw_payload" || col.name == "reason").then_some("wide"))} title={v.clone()}>{ v }</td> },
                                    None => html! { <td class="null">{ "NULL" }</td> },
                                }) }
                            </tr>
                        }) }
                    </tbody>
                </table>
            </div>
            if !batches.is_empty() {
                <div class="batches" id="batch-log">
                    <h4>{ t(lang, "batches") }</h4>
                    <table class="grid small">
                        <thead><tr>
                            <th>{ t(lang, "batch") }</th><th>{ t(lang, "file") }</th><th>{ t(lang, "format") }</th>
                            <th>{ t(lang, "records") }</th><th>{ "bytes" }</th><th>{ t(lang, "ingested") }</th>
                        </tr></thead>
                        <tbody>
                            { for batches.iter().map(|b| html! {
                                <tr>
                                    <td class="mono" title={b.batch_id.clone()}>{ b.batch_id.chars().take(8).collect::<String>() }</td>
                                    <td>{ &b.file_name }{ for b.notes.iter().map(|n| html!{ <span class="note">{ format!(" ({n})") }</span> }) }</td>
                                    <td>{ b.format.label() }</td>
                                    <td>{ b.records }</td>
                                    <td>{ b.bytes }</td>
                                    <td>{ fmt_ts(b.ingest_ts_micros) }</td>
                                </tr>
                            }) }
                        </tbody>
                    </table>
                </div>
            }
        </div>
    }
}
