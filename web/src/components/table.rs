//! The selected table: its columns and a page of rows; the batch log under a
//! bronze table; the SQL editor above a gold table.

use medallion_protocol::{
    AntiPatterns, BatchInfo, Erasure, GoldView, KafkaMessage, Lang, Layer, TableName, TableView,
    TopicView, VersionInfo, PREVIEW_ROWS as PAGE,
};
use yew::prelude::*;

use crate::components::batches::BatchLog;
use crate::components::forget::ForgetPanel;
use crate::components::history::VersionBar;
use crate::components::kafka::KafkaPanel;
use crate::components::use_locked;
use crate::i18n::t;

#[derive(Properties, PartialEq, Clone)]
pub struct Props {
    pub table: TableView,
    pub lang: Lang,
    pub batches: Vec<BatchInfo>,
    pub gold: Option<GoldView>,
    pub gold_draft: String,
    pub on_gold_sql: Callback<String>,
    /// (table, offset) to show another page.
    pub on_page: Callback<(TableName, usize)>,
    /// This table's versions, oldest first.
    pub versions: Vec<VersionInfo>,
    /// The earlier version being read, if any.
    pub viewing: Option<u64>,
    /// The rows are a run's, their version being written.
    #[prop_or_default]
    pub saving: bool,
    pub on_travel: Callback<Option<u64>>,
    pub on_restore: Callback<(TableName, u64)>,
    /// Show only bronze rows with a `_corrupt_reason`.
    /// The learner's choice of "only corrupt records" (the table shown
    /// follows once the engine answers; the box shows the choice at once).
    pub corrupt_only: bool,
    pub on_corrupt_only: Callback<bool>,
    pub on_reread: Callback<BatchInfo>,
    /// The Kafka topic in front of this bronze table, if any.
    pub topic: Option<TopicView>,
    pub kafka_sample: String,
    pub on_produce: Callback<Vec<KafkaMessage>>,
    pub on_poll: Callback<bool>,
    pub erasures: Vec<Erasure>,
    /// (condition, reason, planned rows) for a right-to-be-forgotten delete.
    pub on_forget: Callback<(String, String, usize, String)>,
    /// Ask for the erasure plan of a condition.
    pub on_plan_forget: Callback<String>,
    pub on_cancel_forget: Callback<()>,
    pub erasure_plan: Option<medallion_protocol::ErasurePlan>,
    /// (table, row) whose trail to show.
    pub on_trail: Callback<(TableName, usize)>,
    pub anti_patterns: AntiPatterns,
    pub on_anti_patterns: Callback<AntiPatterns>,
}

#[function_component(TablePanel)]
pub fn table_panel(p: &Props) -> Html {
    let tv = &p.table;
    let lang = p.lang;
    let (locked, hint) = use_locked(lang);
    let first = if tv.row_count == 0 { 0 } else { tv.offset + 1 };
    let last = tv.offset + tv.rows.len();
    // The page asked for last, until it is the one shown: a second click on
    // "Next" while a page is on its way goes on from that page, not from the
    // one still shown (each click asked for the same page before). Read at
    // the click, so clicks faster than a render count too.
    let wanted = use_mut_ref(|| None::<(TableName, usize)>);
    if wanted.borrow().as_ref().is_some_and(|(t, o)| *t != tv.name || *o == tv.offset) {
        *wanted.borrow_mut() = None;
    }
    let nav = |forward: bool| {
        let (cb, name, wanted) = (p.on_page.clone(), tv.name.clone(), wanted.clone());
        let (shown, rows) = (tv.offset, tv.row_count);
        Callback::from(move |_| {
            let at = match &*wanted.borrow() {
                Some((t, o)) if *t == name => *o,
                _ => shown,
            };
            let to = match forward {
                true if at + PAGE < rows => at + PAGE,
                false if at > 0 => at.saturating_sub(PAGE),
                _ => return,
            };
            *wanted.borrow_mut() = Some((name.clone(), to));
            cb.emit((name.clone(), to))
        })
    };
    // Rows of the current silver / gold tables can be traced back to bronze.
    let traceable = tv.layer != Layer::Bronze && p.viewing.is_none();
    let gold_editor = match (&p.gold, tv.layer) {
        (Some(g), Layer::Gold) if TableName::gold(&g.model.name) == tv.name => {
            let oninput = {
                let cb = p.on_gold_sql.clone();
                Callback::from(move |e: InputEvent| {
                    let el: web_sys::HtmlTextAreaElement = e.target_unchecked_into();
                    cb.emit(el.value());
                })
            };
            html! {
                <div class="gold-editor">
                    <label>{ t(lang, if p.anti_patterns.gold_reads_bronze { "gold_sql_shortcut" } else { "gold_sql" }) }</label>
                    <textarea id="gold-sql" class="mono" rows="6" spellcheck="false" readonly={locked} title={hint.clone()} value={p.gold_draft.clone()} {oninput} />
                    if let Some(err) = &g.error {
                        <div class="rule-error" id="gold-error">{ err }</div>
                    }
                    if !g.reads_bronze.is_empty() {
                        <div class="banner warn" id="gold-shortcut">{ format!("{} {}", t(lang, "shortcut_warning"), g.reads_bronze.join(", ")) }</div>
                    }
                    <label class="anti-pattern" title={t(lang, "shortcut_hint")}>
                        <input type="checkbox" id="gold-reads-bronze" disabled={locked} checked={p.anti_patterns.gold_reads_bronze}
                            onchange={
                                let (cb, ap) = (p.on_anti_patterns.clone(), p.anti_patterns.clone());
                                Callback::from(move |_| cb.emit(AntiPatterns { gold_reads_bronze: !ap.gold_reads_bronze, ..ap.clone() }))
                            } />
                        { t(lang, "shortcut_switch") }
                    </label>
                </div>
            }
        }
        _ => html! {},
    };
    let batches: Vec<BatchInfo> = p
        .batches
        .iter()
        .filter(|b| tv.name == TableName::bronze(&b.table))
        .cloned()
        .collect();
    let corrupt_col = tv.columns.iter().position(|c| c.name == "_corrupt_reason");
    let corrupt_toggle = {
        let cb = p.on_corrupt_only.clone();
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlInputElement = e.target_unchecked_into();
            cb.emit(el.checked());
        })
    };
    html! {
        <div class="panel table-panel" id="table-view">
            <div class="table-head">
                <h2 id="table-title">{ tv.name.as_str() }</h2>
                <span class="muted">{ &tv.description }</span>
            </div>
            <VersionBar table={tv.name.clone()} versions={p.versions.clone()} viewing={p.viewing} saving={p.saving} lang={lang}
                on_travel={p.on_travel.clone()} on_restore={p.on_restore.clone()} />
            if let Some(topic) = p.topic.clone() {
                <KafkaPanel topic={topic} lang={lang} sample={p.kafka_sample.clone()} on_produce={p.on_produce.clone()} on_poll={p.on_poll.clone()} />
            }
            { gold_editor }
            <div class="pager">
                <span id="table-range">{ format!("{} {}–{} {} {} · {} {}", t(lang, "showing"), lang.grouped(first), lang.grouped(last), t(lang, "of"), lang.grouped(tv.row_count), tv.columns.len(), t(lang, "columns")) }</span>
                if traceable && tv.row_count > 0 {
                    <span class="muted trail-hint">{ format!("· {}", t(lang, "trail_hint")) }</span>
                }
                <button class="ghost small" id="page-prev" disabled={tv.offset == 0} onclick={nav(false)}>{ t(lang, "prev") }</button>
                <button class="ghost small" id="page-next" disabled={last >= tv.row_count} onclick={nav(true)}>{ t(lang, "next") }</button>
                if corrupt_col.is_some() && (tv.corrupt_rows > 0 || tv.corrupt_only || p.corrupt_only) {
                    <label class="corrupt-toggle">
                        <input type="checkbox" id="corrupt-only" checked={p.corrupt_only} onchange={corrupt_toggle} />
                        { format!("{} ({})", t(lang, "only_corrupt"), tv.corrupt_rows) }
                    </label>
                }
            </div>
            <div class="grid-wrap">
                <table class="grid" id="rows-grid">
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
                            <tr class={classes!(corrupt_col.and_then(|c| row.get(c)).is_some_and(|v| v.is_some()).then_some("corrupt"), traceable.then_some("traceable"))}
                                title={if traceable { t(lang, "trail_hint") } else { "" }}
                                onclick={
                                    let (cb, name, at) = (p.on_trail.clone(), tv.name.clone(), tv.offset + i);
                                    Callback::from(move |_| if traceable { cb.emit((name.clone(), at)) })
                                }>
                                <td class="rownum">{ tv.offset + i + 1 }</td>
                                { for row.iter().zip(&tv.columns).map(|(cell, col)| match cell {
                                    Some(v) => html! { <td class={classes!((col.name == "raw_payload" || col.name == "reason" || col.name == "_corrupt_reason" || col.name == "_warning").then_some("wide"))} title={v.clone()}>{ v }</td> },
                                    None => html! { <td class="null">{ "NULL" }</td> },
                                }) }
                            </tr>
                        }) }
                    </tbody>
                </table>
            </div>
            if !batches.is_empty() {
                <BatchLog batches={batches} lang={lang} on_reread={p.on_reread.clone()} />
            }
            if tv.layer == Layer::Bronze && p.viewing.is_none() {
                <ForgetPanel key={tv.name.to_string()} table={tv.name.clone()} erasures={p.erasures.clone()} lang={lang} on_forget={p.on_forget.clone()}
                    plan={p.erasure_plan.clone()} on_plan={p.on_plan_forget.clone()} on_cancel={p.on_cancel_forget.clone()} />
            }
        </div>
    }
}
