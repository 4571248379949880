//! The layer strip: bronze → silver (+ quarantine) → gold, one card per
//! table with its row count. Bronze cards take dropped files and have a picker.

use medallion_protocol::{
    BronzeMode, GoldView, Lang, Layer, ReadAsUtcView, SilverView, TableName, TableView,
};
use wasm_bindgen::JsCast;
use yew::prelude::*;

use crate::components::use_locked;
use crate::i18n::{rows_word, t};

#[derive(Properties, PartialEq, Clone)]
pub struct Props {
    /// Every table (the cards).
    pub tables: Vec<TableView>,
    pub silver: Vec<SilverView>,
    pub gold: Vec<GoldView>,
    /// The mode each bronze table is stored in.
    pub bronze_modes: Vec<(TableName, BronzeMode)>,
    /// The scenario's mode (the picker's value unless the tables differ).
    pub bronze_mode: BronzeMode,
    pub read_as_utc: Vec<ReadAsUtcView>,
    /// Rows in quarantine now (the card's count).
    pub quarantine_open: usize,
    pub lang: Lang,
    pub selected: Option<TableName>,
    pub on_select: Callback<TableName>,
    /// (bronze table, files) when files are dropped or picked.
    pub on_files: Callback<(String, Vec<web_sys::File>)>,
    /// Reload the example with bronze stored in this mode.
    pub on_bronze_mode: Callback<BronzeMode>,
    /// Tables the last run did not refresh (shown at their last good version).
    #[prop_or_default]
    pub not_refreshed: Vec<TableName>,
}

fn files_of(list: Option<web_sys::FileList>) -> Vec<web_sys::File> {
    let Some(list) = list else { return vec![] };
    (0..list.length()).filter_map(|i| list.get(i)).collect()
}

/// `gold.trips_by_borough_daily` with a line-break opportunity after the layer.
fn card_name(name: &TableName) -> Html {
    html! { <>{ format!("{}.", name.layer()) }<wbr />{ name.name() }</> }
}

fn mode_label(lang: Lang, m: BronzeMode) -> &'static str {
    match m {
        BronzeMode::Raw => t(lang, "mode_raw"),
        BronzeMode::Permissive => t(lang, "mode_permissive"),
        BronzeMode::FailFast => t(lang, "mode_failfast"),
        BronzeMode::DropMalformed => t(lang, "mode_dropmalformed"),
    }
}

/// `MERGE ON order_id · SCD1 · SEQUENCE BY lsn` (Delta Live Tables' words).
fn merge_label(m: &medallion_protocol::MergeSpec) -> String {
    let mut s = format!(
        "MERGE ON {} · {}",
        m.keys.join(", "),
        match m.stored_as {
            medallion_protocol::Scd::Scd1 => "SCD1",
            medallion_protocol::Scd::Scd2 => "SCD2",
        }
    );
    if let Some(seq) = &m.sequence_by {
        s.push_str(&format!(" · SEQUENCE BY {seq}"));
    }
    if m.null_safe_keys {
        s.push_str(" · NULL-SAFE KEYS");
    }
    if m.from_snapshots {
        s.push_str(" · FROM SNAPSHOTS");
    }
    s
}

/// "ts: 1 of 5 values had no offset, read as UTC" for a bronze table's columns.
fn read_as_utc_hints(lang: Lang, hints: &[ReadAsUtcView], bronze: &TableName) -> Html {
    html! {
        { for hints.iter().filter(|r| r.bronze_table == *bronze).map(|r| html! {
            <div class="hint warn read-as-utc" title={t(lang, "read_as_utc_hint")}>
                { format!("{}: {} {} {} {}", r.column, r.without_offset, t(lang, "of"), r.values, t(lang, "read_as_utc")) }
            </div>
        }) }
    }
}

#[function_component(PipelineStrip)]
pub fn pipeline_strip(p: &Props) -> Html {
    let lang = p.lang;
    let (locked, hint) = use_locked(lang);
    let card = |name: &TableName, count: usize, layer: &str, extra: Html| {
        let stale = p.not_refreshed.contains(name);
        let has_error = !stale
            && p.gold
                .iter()
                .any(|g| g.error.is_some() && TableName::gold(&g.model.name) == *name);
        let on_click = {
            let cb = p.on_select.clone();
            let name = name.clone();
            Callback::from(move |_| cb.emit(name.clone()))
        };
        let id = format!("card-{}", name.as_str().replace('.', "-"));
        html! {
            <div class={classes!("card", layer.to_string(), (p.selected.as_ref() == Some(name)).then_some("selected"), (has_error || stale).then_some("has-error"), stale.then_some("not-refreshed"))} id={id} onclick={on_click}>
                <div class="card-name">{ card_name(name) }</div>
                <div class="card-count"><span class="count">{ lang.grouped(count) }</span>{ " " }{ rows_word(lang, count) }</div>
                if has_error {
                    <div class="card-error">{ t(lang, "has_error") }</div>
                }
                if stale {
                    <div class="card-error not-refreshed">{ t(lang, "not_refreshed_card") }</div>
                }
                { extra }
            </div>
        }
    };
    let by_layer = |layer: Layer| {
        p.tables
            .iter()
            .filter(|t| t.layer == layer)
            .collect::<Vec<_>>()
    };

    let bronze: Html = by_layer(Layer::Bronze)
        .into_iter()
        .map(|tv| {
            let table = tv.name.to_string();
            let ondragover = Callback::from(|e: DragEvent| e.prevent_default());
            let ondrop = {
                let (cb, table) = (p.on_files.clone(), table.clone());
                Callback::from(move |e: DragEvent| {
                    e.prevent_default();
                    e.stop_propagation();
                    let files = files_of(e.data_transfer().and_then(|d| d.files()));
                    if !files.is_empty() {
                        cb.emit((table.clone(), files));
                    }
                })
            };
            let onchange = {
                let (cb, table) = (p.on_files.clone(), table.clone());
                Callback::from(move |e: Event| {
                    let Some(input) = e.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) else { return };
                    let files = files_of(input.files());
                    input.set_value("");
                    if !files.is_empty() {
                        cb.emit((table.clone(), files));
                    }
                })
            };
            let stop = Callback::from(|e: MouseEvent| e.stop_propagation());
            let input_id = format!("file-{}", table.replace('.', "-"));
            let mode = p.bronze_modes
                .iter()
                .find(|(n, _)| *n == tv.name)
                .map(|(_, m)| *m)
                .unwrap_or_default();
            let extra = html! {
                <div class="drop">
                    <div class="hint mono">{ mode_label(lang, mode) }</div>
                    { read_as_utc_hints(lang, &p.read_as_utc, &tv.name) }
                    <label class={classes!("file-button", locked.then_some("disabled"))} for={input_id.clone()} title={hint.clone()} onclick={stop}>{ t(lang, "add_file") }</label>
                    <input id={input_id} type="file" disabled={locked} multiple=true accept=".csv,.tsv,.json,.jsonl,.ndjson,.txt,.parquet" {onchange} />
                    <span class="hint">{ t(lang, "drop_here") }</span>
                </div>
            };
            html! { <div class="drop-target" {ondragover} {ondrop}>{ card(&tv.name, tv.row_count, "bronze", extra) }</div> }
        })
        .collect();
    let silver: Html = by_layer(Layer::Silver)
        .into_iter()
        .map(|tv| {
            let q = tv.name.is_quarantine();
            let merge = p.silver
                .iter()
                .find(|s| s.name == tv.name)
                .and_then(|s| s.merge.as_ref());
            let source = p.silver
                .iter()
                .find(|s| s.name == tv.name)
                .map(|s| s.source.clone());
            let utc = html! {
                <>
                    { source.map(|b| read_as_utc_hints(lang, &p.read_as_utc, &b)).unwrap_or_default() }
                    { read_as_utc_hints(lang, &p.read_as_utc, &tv.name) }
                </>
            };
            let extra = match (q, merge) {
                (true, _) => html! { <div class="hint">{ t(lang, "quarantine_hint") }</div> },
                (false, Some(m)) => html! {
                    <div class="hint mono merge-label" title={t(lang, if m.from_snapshots { "snapshot_hint" } else { "merge_hint" })}>{ merge_label(m) }</div>
                },
                (false, None) => html! { <div class="hint">{ t(lang, "append_label") }</div> },
            };
            // A child table says what it explodes and what the records held.
            let explode = p.silver.iter().find(|s| s.name == tv.name).and_then(|s| {
                let spec = s.explode.as_ref()?;
                let key: Vec<String> = spec
                    .parent_columns
                    .iter()
                    .cloned()
                    .chain([spec.position_column.clone()])
                    .collect();
                let counts = s.explode_stats.as_ref().map(|c| {
                    format!(
                        "{} {} {} {} ({} {}: {} empty, {} null, {} missing){}",
                        c.records,
                        t(lang, "explode_counts"),
                        c.elements,
                        t(lang, "explode_elements"),
                        c.empty + c.null + c.missing,
                        t(lang, "explode_without"),
                        c.empty,
                        c.null,
                        c.missing,
                        if c.unreadable > 0 {
                            format!("; {} {}", c.unreadable, t(lang, "explode_unreadable"))
                        } else {
                            String::new()
                        }
                    )
                });
                let bad = s.explode_stats.as_ref().is_some_and(|c| c.unreadable > 0);
                Some(html! {
                    <>
                        <div class="hint mono explode-label" title={t(lang, "explode_hint")}>
                            { format!("EXPLODE {} OF bronze.{} · {} · {}{}", spec.path, s.source, t(lang, "explode_label"), key.join(", "), if spec.outer { " · OUTER" } else { "" }) }
                        </div>
                        if let Some(c) = counts {
                            <div class={classes!("hint", "explode-counts", bad.then_some("warn"))}>{ c }</div>
                        }
                    </>
                })
            });
            let extra = html! { <>{ explode.unwrap_or_default() }{ extra }{ utc }</> };
            // The quarantine is history: the card counts what is quarantined now.
            let (count, extra) = if q && tv.row_count > p.quarantine_open {
                (
                    p.quarantine_open,
                    html! {
                        <>
                            { extra }
                            <div class="hint">{ format!("{} {}", lang.grouped(tv.row_count - p.quarantine_open), t(lang, "released_rows")) }</div>
                        </>
                    },
                )
            } else {
                (tv.row_count, extra)
            };
            card(
                &tv.name,
                count,
                if q { "quarantine" } else { "silver" },
                extra,
            )
        })
        .collect();
    let gold: Html = by_layer(Layer::Gold)
        .into_iter()
        .map(|tv| {
            let model = p.gold
                .iter()
                .find(|g| TableName::gold(&g.model.name) == tv.name);
            let extra = match model {
                Some(g) if !g.model.merge_on.is_empty() => html! {
                    <div class="hint mono merge-label" title={t(lang, "gold_merge_hint")}>{ format!("MERGE ON {}", g.model.merge_on.join(", ")) }</div>
                },
                Some(g) if !g.reads_bronze.is_empty() => html! {
                    <div class="hint warn-text">{ t(lang, "reads_bronze") }</div>
                },
                _ => html! {},
            };
            card(&tv.name, tv.row_count, "gold", extra)
        })
        .collect();

    let mixed = p.bronze_modes.iter().any(|(_, m)| *m != p.bronze_mode);
    // The select shows the mode bronze is in: until a reload in another mode
    // succeeds (a refused one changes nothing), and after it.
    let shown = if mixed { "" } else { p.bronze_mode.label() };
    let mode_select = use_node_ref();
    {
        let mode_select = mode_select.clone();
        use_effect_with(shown, move |shown| {
            if let Some(el) = mode_select.cast::<web_sys::HtmlSelectElement>() {
                el.set_value(shown);
            }
        });
    }
    let on_mode = {
        let cb = p.on_bronze_mode.clone();
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlSelectElement = e.target_unchecked_into();
            let mode = match el.value().as_str() {
                "PERMISSIVE" => BronzeMode::Permissive,
                "FAILFAST" => BronzeMode::FailFast,
                "DROPMALFORMED" => BronzeMode::DropMalformed,
                _ => BronzeMode::Raw,
            };
            el.set_value(shown);
            if crate::ui::confirm(t(lang, "confirm_reload")) {
                cb.emit(mode);
            }
        })
    };
    html! {
        <div class="strip" id="pipeline">
            <div class="layer">
                <h3>{ "Bronze" }<small>{ t(lang, "bronze_hint") }</small></h3>
                <label class="bronze-mode" title={t(lang, "bronze_mode_hint")}>
                    { t(lang, "bronze_mode") }
                    <select id="bronze-mode" ref={mode_select} disabled={locked} title={hint.clone()} onchange={on_mode}>
                        // Tables stored in different ways (as the scenario defines them).
                        if mixed {
                            <option value="" selected=true disabled=true>{ t(lang, "mode_mixed") }</option>
                        }
                        { for [BronzeMode::Raw, BronzeMode::Permissive, BronzeMode::FailFast, BronzeMode::DropMalformed].into_iter().map(|m| html! {
                            <option value={m.label()} selected={!mixed && p.bronze_mode == m}>{ mode_label(lang, m) }</option>
                        }) }
                    </select>
                </label>
                { bronze }
            </div>
            <div class="arrow">{ "→" }</div>
            <div class="layer">
                <h3>{ "Silver" }<small>{ t(lang, "silver_hint") }</small></h3>
                { silver }
            </div>
            <div class="arrow">{ "→" }</div>
            <div class="layer">
                <h3>{ "Gold" }<small>{ t(lang, "gold_hint") }</small></h3>
                { gold }
            </div>
        </div>
    }
}
