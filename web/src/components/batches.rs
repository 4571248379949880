//! The batch log of a bronze table, and the dialog that reads a landed file
//! again with other settings (a new batch; the old one stays).

use medallion_protocol::{BatchInfo, IngestOptions, Lang, SourceFormat};
use yew::prelude::*;

use crate::components::use_locked;
use crate::i18n::{fmt_ts, t};

#[derive(Properties, PartialEq, Clone)]
pub struct LogProps {
    pub batches: Vec<BatchInfo>,
    pub lang: Lang,
    pub on_reread: Callback<BatchInfo>,
}

/// "delimiter ';', quote '"', header line, 1 line skipped" in `lang`.
fn dialect_text(lang: Lang, d: &medallion_protocol::CsvDialect) -> String {
    let delim = match d.delimiter {
        '\t' => t(lang, "tab").to_string(),
        c => format!("'{c}'"),
    };
    let mut s = format!(
        "{} {delim}, {} '{}', {}",
        t(lang, "delimiter"),
        t(lang, "quote"),
        d.quote,
        if d.has_header {
            t(lang, "header_line")
        } else {
            t(lang, "no_header")
        }
    );
    if d.skip_rows > 0 {
        s.push_str(&format!(", {}: {}", t(lang, "skip_rows"), d.skip_rows));
    }
    if let Some(e) = d.escape {
        s.push_str(&format!(", {} '{e}'", t(lang, "escape")));
    }
    if d.decimal_separator != '.' {
        s.push_str(&format!(
            ", {} '{}'",
            t(lang, "decimal_sep"),
            d.decimal_separator
        ));
    }
    // Only an empty field reads as NULL unless the learner said otherwise.
    if d.null_tokens != [String::new()] {
        let tokens: Vec<String> = d.null_tokens.iter().map(|n| format!("'{n}'")).collect();
        s.push_str(&format!(", {} {}", t(lang, "null_tokens"), tokens.join(" ")));
    }
    s
}


fn short(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

#[function_component(BatchLog)]
pub fn batch_log(p: &LogProps) -> Html {
    let lang = p.lang;
    let (locked, hint) = use_locked(lang);
    html! {
        <div class="batches" id="batch-log">
            <h4>{ t(lang, "batches") }</h4>
            <table class="grid small">
                <thead><tr>
                    <th>{ "v" }</th><th>{ t(lang, "batch") }</th><th>{ t(lang, "file") }</th><th>{ t(lang, "format") }</th>
                    <th>{ t(lang, "records") }</th><th>{ t(lang, "corrupt") }</th><th>{ t(lang, "size") }</th>
                    <th>{ "SHA-256" }</th><th>{ t(lang, "ingested") }</th>
                </tr></thead>
                <tbody>
                    { for p.batches.iter().map(|b| {
                        let reread = {
                            let (cb, b2) = (p.on_reread.clone(), b.clone());
                            Callback::from(move |_| cb.emit(b2.clone()))
                        };
                        let dialect = b.dialect.as_ref().map(|d| dialect_text(lang, d)).unwrap_or_default();
                        html! {
                            <tr class="batch-row">
                                <td>{ b.version }</td>
                                <td class="mono" title={b.batch_id.clone()}>{ crate::ui::short_id(&b.batch_id) }</td>
                                <td class="batch-file" title={b.header_text.clone().unwrap_or_default()}>
                                    { &b.file_name }
                                    if let Some(by) = &b.superseded_by {
                                        { " " }<span class="muted superseded" title={by.clone()}>{ format!("{} {}", t(lang, "superseded_by"), crate::ui::short_id(by)) }</span>
                                    } else if b.landing_path.is_none() && b.erased_records > 0 {
                                        { " " }<span class="muted" title={t(lang, "landed_erased_hint")}>{ t(lang, "landed_erased") }</span>
                                    } else if b.landing_path.is_some() {
                                        { " " }<button class="ghost small reread" disabled={locked} title={hint.clone()} onclick={reread}>{ t(lang, "read_again") }</button>
                                    }
                                    if !b.header_renames.is_empty() {
                                        <div class="note header-renames">
                                            { format!("{}: ", t(lang, "header_renames")) }
                                            <span class="mono">{ b.header_renames.iter().map(|r| format!("{:?} → {}", r.original, r.name)).collect::<Vec<_>>().join(", ") }</span>
                                        </div>
                                    }
                                    { for b.notes.iter().map(|n| html!{ <div class="note">{ n }</div> }) }
                                    { for b.skipped_lines.iter().map(|l| html!{ <div class="note mono">{ format!("{}: {l}", t(lang, "kept_aside")) }</div> }) }
                                </td>
                                <td class="batch-format">{ b.format.label() }{ if b.mode.is_typed() { format!(" · {} {}", t(lang, "typed"), b.mode.label()) } else { String::new() } }<div class="muted">{ dialect }</div><div class="muted">{ &b.encoding }</div></td>
                                <td>
                                    { lang.grouped(b.records) }
                                    if b.dropped_records > 0 {
                                        <div class="bad">{ format!("{} {}", t(lang, "dropped"), lang.grouped(b.dropped_records)) }</div>
                                    }
                                    if b.erased_records > 0 {
                                        <div class="bad erased">{ format!("{} {}", t(lang, "erased_records"), lang.grouped(b.erased_records)) }</div>
                                    }
                                </td>
                                <td class={classes!((b.corrupt_records > 0).then_some("bad"))}>
                                    { lang.grouped(b.corrupt_records) }
                                    if b.warned_records > 0 {
                                        <div class="warn-count" title={t(lang, "warned_hint")}>{ format!("{} {}", lang.grouped(b.warned_records), t(lang, "warned_records")) }</div>
                                    }
                                </td>
                                <td>{ b.bytes }</td>
                                <td class="mono" title={b.sha256.clone()}>{ short(&b.sha256, 12) }</td>
                                <td>{ fmt_ts(b.ingest_ts_micros) }</td>
                            </tr>
                        }
                    }) }
                </tbody>
            </table>
        </div>
    }
}

#[derive(Properties, PartialEq, Clone)]
pub struct DialogProps {
    pub batch: BatchInfo,
    pub lang: Lang,
    /// (batch id, options, remember them for the table's next files).
    pub on_submit: Callback<(String, IngestOptions, bool)>,
    pub on_close: Callback<()>,
}

fn input_value(e: &Event) -> String {
    let el: web_sys::HtmlInputElement = e.target_unchecked_into();
    el.value()
}

/// Settings for reading a landed file again; starts from what was detected.
#[function_component(ReingestDialog)]
pub fn reingest_dialog(p: &DialogProps) -> Html {
    let lang = p.lang;
    let (locked, hint) = use_locked(lang);
    let opts = use_state(|| {
        let mut o = p.batch.options.clone();
        if let Some(d) = &p.batch.dialect {
            o.delimiter.get_or_insert(d.delimiter);
            o.has_header.get_or_insert(d.has_header);
            o.skip_rows.get_or_insert(d.skip_rows);
            o.decimal_separator.get_or_insert(d.decimal_separator);
        }
        o
    });
    let set = |f: fn(&mut IngestOptions, String)| {
        let opts = opts.clone();
        Callback::from(move |e: Event| {
            let mut o = (*opts).clone();
            f(
                &mut o,
                if let Some(v) = e.target_dyn_into::<web_sys::HtmlSelectElement>() {
                    v.value()
                } else {
                    input_value(&e)
                },
            );
            opts.set(o);
        })
    };
    // Off by default: re-reading one batch does not change how the table's next files are read.
    let remember = use_state(|| false);
    let submit = {
        let (cb, opts, id, remember) = (
            p.on_submit.clone(),
            opts.clone(),
            p.batch.batch_id.clone(),
            remember.clone(),
        );
        Callback::from(move |_| cb.emit((id.clone(), (*opts).clone(), *remember)))
    };
    let toggle_remember = {
        let remember = remember.clone();
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlInputElement = e.target_unchecked_into();
            remember.set(el.checked());
        })
    };
    let close = {
        let cb = p.on_close.clone();
        Callback::from(move |_| cb.emit(()))
    };
    let o = (*opts).clone();
    let delim = match o.delimiter {
        None => "auto".to_string(),
        Some('\t') => "tab".to_string(),
        Some(c) => c.to_string(),
    };
    let format = match o.format {
        None => "auto",
        Some(SourceFormat::Csv) => "csv",
        Some(SourceFormat::JsonLines) => "json_lines",
        Some(SourceFormat::JsonArray) => "json_array",
        Some(SourceFormat::Json) => "json",
        Some(SourceFormat::Parquet) => "parquet",
        Some(SourceFormat::Kafka) => "auto",
    };
    let header = match o.has_header {
        None => "auto",
        Some(true) => "yes",
        Some(false) => "no",
    };
    let opt = |v: &str, label: &str, cur: &str| html! { <option value={v.to_string()} selected={v == cur}>{ label.to_string() }</option> };
    html! {
        <div class="modal-backdrop">
            <div class="modal reingest" id="reingest-dialog">
                <h3>{ format!("{} {}", t(lang, "read_again_title"), p.batch.file_name) }</h3>
                <p class="muted">{ t(lang, "read_again_hint") }</p>
                <div class="form-grid">
                    <label>{ t(lang, "format") }</label>
                    <select id="opt-format" onchange={set(|o, v| o.format = match v.as_str() {
                        "csv" => Some(SourceFormat::Csv), "json_lines" => Some(SourceFormat::JsonLines),
                        "json_array" => Some(SourceFormat::JsonArray), "json" => Some(SourceFormat::Json),
                        "parquet" => Some(SourceFormat::Parquet), _ => None })}>
                        { opt("auto", t(lang, "detect"), format) }{ opt("csv", "CSV", format) }{ opt("json_lines", t(lang, "json_lines"), format) }
                        { opt("json_array", t(lang, "json_array"), format) }{ opt("json", t(lang, "json_pretty"), format) }{ opt("parquet", "Parquet", format) }
                    </select>
                    <label>{ t(lang, "delimiter") }</label>
                    <select id="opt-delimiter" onchange={set(|o, v| o.delimiter = match v.as_str() { "auto" => None, "tab" => Some('\t'), s => s.chars().next() })}>
                        { opt("auto", t(lang, "detect"), &delim) }{ opt(",", ",", &delim) }{ opt(";", ";", &delim) }{ opt("tab", t(lang, "tab"), &delim) }{ opt("|", "|", &delim) }
                    </select>
                    <label>{ t(lang, "quote") }</label>
                    <select id="opt-quote" onchange={set(|o, v| o.quote = match v.as_str() { "auto" => None, s => s.chars().next() })}>
                        { opt("auto", "\"", &o.quote.map(|c| c.to_string()).unwrap_or_else(|| "auto".into())) }
                        { opt("'", "'", &o.quote.map(|c| c.to_string()).unwrap_or_default()) }
                    </select>
                    <label>{ t(lang, "escape") }</label>
                    <select id="opt-escape" onchange={set(|o, v| o.escape = if v == "none" { None } else { v.chars().next() })}>
                        { opt("none", t(lang, "escape_none"), &o.escape.map(|c| c.to_string()).unwrap_or_else(|| "none".into())) }
                        { opt("\\", "\\ (\\\")", &o.escape.map(|c| c.to_string()).unwrap_or_else(|| "none".into())) }
                    </select>
                    <label>{ t(lang, "header_row") }</label>
                    <select id="opt-header" onchange={set(|o, v| o.has_header = match v.as_str() { "yes" => Some(true), "no" => Some(false), _ => None })}>
                        { opt("auto", t(lang, "detect"), header) }{ opt("yes", t(lang, "yes"), header) }{ opt("no", t(lang, "no"), header) }
                    </select>
                    <label>{ t(lang, "skip_rows") }</label>
                    <input id="opt-skip" type="number" min="0" value={o.skip_rows.map(|n| n.to_string()).unwrap_or_default()}
                        onchange={set(|o, v| o.skip_rows = v.trim().parse().ok())} />
                    <label>{ t(lang, "decimal_sep") }</label>
                    <select id="opt-decimal" onchange={set(|o, v| o.decimal_separator = v.chars().next())}>
                        { opt(".", ".", &o.decimal_separator.unwrap_or('.').to_string()) }{ opt(",", ",", &o.decimal_separator.unwrap_or('.').to_string()) }
                    </select>
                    <label>{ t(lang, "null_tokens") }</label>
                    <input id="opt-nulls" type="text" placeholder="NA, NULL, \\N" value={o.null_tokens.clone().map(|v| v.into_iter().filter(|s| !s.is_empty()).collect::<Vec<_>>().join(", ")).unwrap_or_default()}
                        onchange={set(|o, v| o.null_tokens = { let mut t: Vec<String> = v.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect(); if t.is_empty() { None } else { t.insert(0, String::new()); Some(t) } })} />
                    <label>{ t(lang, "encoding") }</label>
                    <select id="opt-encoding" onchange={set(|o, v| o.encoding = if v == "auto" { None } else { Some(v) })}>
                        { for ["auto", "utf-8", "windows-1251", "windows-1252", "utf-16le"].iter().map(|e| opt(e, if *e == "auto" { t(lang, "detect") } else { e }, o.encoding.as_deref().unwrap_or("auto"))) }
                    </select>
                </div>
                <label class="remember">
                    <input type="checkbox" id="opt-remember" checked={*remember} onchange={toggle_remember} />
                    { t(lang, "remember_options") }
                </label>
                <div class="modal-actions">
                    <button id="reingest-submit" disabled={locked} title={hint.clone()} onclick={submit}>{ t(lang, "ingest_new_batch") }</button>
                    <button class="ghost" onclick={close}>{ t(lang, "close") }</button>
                </div>
            </div>
        </div>
    }
}
