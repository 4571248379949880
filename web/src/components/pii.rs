//! PII in an immutable bronze (seed 000 §7): the right to be forgotten three
//! ways side by side, on the same bundled orders. A learner picks a customer
//! and forgets them under tokenization, crypto-shredding or the physical
//! DELETE (or all three); each column shows, before and after, what bronze
//! holds (as stored and as read), its row count, whether it was rewritten,
//! time travel to the version before the forget, the gold a replay rebuilds,
//! and what outside the lake still holds the data. The engine builds the
//! three throw-away lakes (`medallion_protocol::pii`); this panel draws them.
//!
//! Stable hooks for tests: `#pii` (the panel), `#pii-customer` (the picker),
//! `#pii-forget-all`, `#pii-reset`, one `section#pii-{token,shred,delete}`
//! per method (`data-forgotten`), `#pii-forget-{key}`, `[data-fact=…]` rows
//! with `data-before` / `data-after`, and cells with `data-readable`.

use medallion_protocol::{Lang, PiiFacts, PiiMethod, PiiMethodView, PiiTable, PiiView, Request};
use yew::prelude::*;

use crate::i18n::t;

#[derive(Properties, PartialEq, Clone)]
pub struct Props {
    /// The engine's last answer to a `pii_*` request (`None`: not asked yet).
    pub view: Option<PiiView>,
    pub lang: Lang,
    /// Sends a `pii_lab`, `pii_forget` or `pii_reset` request.
    pub on_request: Callback<Request>,
}

/// The i18n keys of a method's title, rank and explanation.
fn keys(m: PiiMethod) -> (&'static str, &'static str, &'static str) {
    match m {
        PiiMethod::Tokenize => ("pii_token", "pii_token_rank", "pii_token_hint"),
        PiiMethod::CryptoShred => ("pii_shred", "pii_shred_rank", "pii_shred_hint"),
        PiiMethod::Delete => ("pii_delete", "pii_delete_rank", "pii_delete_hint"),
    }
}

/// A stored value shortened for the page (the whole one is its tooltip).
fn short(s: &str) -> String {
    if s.chars().count() > 22 {
        format!("{}…", s.chars().take(20).collect::<String>())
    } else {
        s.to_string()
    }
}

/// Some rows of a table, each personal-data cell as stored and as read.
fn table(tb: &PiiTable, class: &str, lang: Lang) -> Html {
    if let Some(e) = &tb.error {
        return html! { <div class={classes!("pii-table-error", class.to_string())}>{ e }</div> };
    }
    if tb.rows.is_empty() {
        return html! {
            <div class={classes!("pii-none", class.to_string())} data-rows="0">{ t(lang, "pii_no_rows") }</div>
        };
    }
    html! {
        <table class={classes!("pii-cells", class.to_string())} data-rows={tb.rows.len().to_string()}>
            <thead><tr>{ for tb.columns.iter().zip(&tb.pii).map(|(c, pii)| html! {
                <th class={classes!(pii.then_some("pii-col"))}>{ c }</th>
            }) }</tr></thead>
            <tbody>
                { for tb.rows.iter().map(|row| html! {
                    <tr>{ for row.iter().zip(&tb.pii).map(|(cell, pii)| {
                        let stored = cell.stored.clone().unwrap_or_else(|| "NULL".into());
                        if !*pii {
                            return html! { <td>{ stored }</td> };
                        }
                        let readable = cell.readable();
                        html! {
                            <td class={classes!("pii-cell", (!readable).then_some("unreadable"))}
                                data-readable={readable.to_string()} title={stored.clone()}>
                                <code class="pii-stored">{ short(&stored) }</code>
                                <span class="pii-read">{
                                    cell.read.clone().unwrap_or_else(|| t(lang, "pii_unreadable").to_string())
                                }</span>
                            </td>
                        }
                    }) }</tr>
                }) }
            </tbody>
        </table>
    }
}

/// One fact row: before → after (only the value while not forgotten).
fn fact(key: &str, label: &str, before: Option<String>, now: String) -> Html {
    let changed = before.as_ref().is_some_and(|b| *b != now);
    html! {
        <tr data-fact={key.to_string()} data-before={before.clone().unwrap_or_default()} data-after={now.clone()}
            class={classes!(changed.then_some("changed"))}>
            <th>{ label.to_string() }</th>
            <td>{ match before { Some(b) => format!("{b} → {now}"), None => now } }</td>
        </tr>
    }
}

fn yes_no(lang: Lang, b: bool) -> String {
    t(lang, if b { "pii_yes" } else { "pii_no" }).to_string()
}

/// The facts of one method, before → after.
fn facts(m: &PiiMethodView, lang: Lang) -> Html {
    let now = &m.now;
    let before = m.before.as_ref();
    let of = |f: &dyn Fn(&PiiFacts) -> String| (before.map(f), f(now));
    let (b, n) = of(&|f| f.bronze.total_rows.to_string());
    let rows = fact("bronze_rows", t(lang, "pii_bronze_rows"), b, n);
    let (b, n) = of(&|f| f.bronze.rows.len().to_string());
    let customer_rows = fact("customer_rows", t(lang, "pii_customer_rows"), b, n);
    let (b, n) = of(&|f| format!("v{} {}", f.bronze_version, f.bronze_operation));
    let version = fact("bronze_version", t(lang, "pii_bronze_version"), b, n);
    let rewritten = before.map(|b| b.bronze_sha256 != now.bronze_sha256);
    let rewritten = html! {
        <tr data-fact="rewritten" data-after={rewritten.map(|r| if r { "yes" } else { "no" }).unwrap_or("")}
            class={classes!(rewritten.unwrap_or(false).then_some("changed"))}>
            <th>{ t(lang, "pii_rewritten") }</th>
            <td>
                { rewritten.map(|r| yes_no(lang, r)).unwrap_or_else(|| "—".into()) }
                <code class="pii-sha" title={now.bronze_sha256.clone()}>
                    { format!(" SHA-256 {}…", now.bronze_sha256.get(..12).unwrap_or_default()) }
                </code>
            </td>
        </tr>
    };
    let (cells, readable) = now.bronze.pii_cells();
    let cells = fact(
        "readable_cells",
        t(lang, "pii_readable_cells"),
        before.map(|b| {
            let (c, r) = b.bronze.pii_cells();
            format!("{r} / {c}")
        }),
        format!("{readable} / {cells}"),
    );
    let outside = match m.method {
        PiiMethod::Tokenize => {
            let (b, n) = of(&|f| f.vault_entries.unwrap_or(0).to_string());
            fact("vault_entries", t(lang, "pii_vault_entries"), b, n)
        }
        PiiMethod::CryptoShred => {
            let (b, n) = of(&|f| yes_no(lang, f.key_present.unwrap_or(false)));
            fact("key", t(lang, "pii_key"), b, n)
        }
        PiiMethod::Delete => {
            let (b, n) = of(&|f| f.expired_versions.to_string());
            fact("expired", t(lang, "pii_expired"), b, n)
        }
    };
    let (b, n) = of(&|f| f.landed_files.to_string());
    let landed = fact("landed_files", t(lang, "pii_landed"), b, n);
    let (b, n) = of(&|f| f.replay_revenue.clone());
    let revenue = fact("replay_revenue", t(lang, "pii_replay_revenue"), b, n);
    html! {
        <table class="pii-facts">
            <tbody>
                { rows }{ customer_rows }{ version }{ rewritten }{ cells }{ outside }{ landed }{ revenue }
            </tbody>
        </table>
    }
}

/// One method's column.
fn method(m: &PiiMethodView, customer: &str, lang: Lang, on: &Callback<Request>) -> Html {
    let (title, rank, hint) = keys(m.method);
    let forget = {
        let (on, customer, method) = (on.clone(), customer.to_string(), m.method);
        Callback::from(move |_| {
            on.emit(Request::PiiForget {
                customer: customer.clone(),
                method: Some(method),
            })
        })
    };
    let key = m.method.key();
    let travel = m.now.time_travel.version.unwrap_or_default();
    html! {
        <section class={classes!("pii-method", m.forgotten.then_some("forgotten"))} id={format!("pii-{key}")}
            data-forgotten={m.forgotten.to_string()}>
            <h3>{ t(lang, title) }<span class="chip">{ t(lang, rank) }</span></h3>
            <p class="hint">{ t(lang, hint) }</p>
            <button id={format!("pii-forget-{key}")} class="pii-forget" disabled={m.forgotten}
                onclick={forget}>{ format!("{} {customer}", t(lang, "pii_forget_one")) }</button>
            if let Some(e) = &m.error {
                <div class="banner error pii-error">{ e }</div>
            }
            { facts(m, lang) }
            <h4>{ t(lang, "pii_bronze_now") }</h4>
            { table(&m.now.bronze, "pii-bronze-now", lang) }
            if let Some(b) = &m.before {
                <h4>{ t(lang, "pii_bronze_before") }</h4>
                { table(&b.bronze, "pii-bronze-before", lang) }
            }
            <h4>{ format!("{} v{travel}", t(lang, "pii_time_travel")) }</h4>
            { table(&m.now.time_travel, "pii-time-travel", lang) }
            <h4>{ format!("{} → {}", t(lang, "pii_replay"), m.now.replay.name) }</h4>
            { table(&m.now.replay, "pii-replay", lang) }
            <ul class="pii-findings">
                { for m.findings.iter().map(|f| html! { <li>{ f }</li> }) }
            </ul>
        </section>
    }
}

#[function_component(PiiPanel)]
pub fn pii_panel(p: &Props) -> Html {
    let lang = p.lang;
    let open = use_state(|| false);
    // The customer picked (the view's, once it came).
    let customer = p
        .view
        .as_ref()
        .map(|v| v.customer.clone())
        .unwrap_or_default();
    // Opened for the first time: ask for the lakes. The language changed
    // while open: ask again (the findings are engine-written).
    {
        let (on, asked) = (p.on_request.clone(), p.view.is_some());
        let customer = customer.clone();
        use_effect_with((*open, lang), move |(open, _)| {
            if *open {
                on.emit(Request::PiiLab {
                    customer: asked.then_some(customer),
                });
            }
        });
    }
    let ontoggle = {
        let open = open.clone();
        Callback::from(move |e: Event| {
            if let Some(d) = e.target_dyn_into::<web_sys::HtmlDetailsElement>() {
                open.set(d.open());
            }
        })
    };
    let on_pick = {
        let on = p.on_request.clone();
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlSelectElement = e.target_unchecked_into();
            on.emit(Request::PiiLab {
                customer: Some(el.value()),
            });
        })
    };
    let on_all = {
        let (on, customer) = (p.on_request.clone(), customer.clone());
        Callback::from(move |_| {
            on.emit(Request::PiiForget {
                customer: customer.clone(),
                method: None,
            })
        })
    };
    let on_reset = {
        let (on, customer) = (p.on_request.clone(), customer.clone());
        Callback::from(move |_| {
            on.emit(Request::PiiReset {
                customer: Some(customer.clone()),
            })
        })
    };
    html! {
        <details class="panel pii" id="pii" open={*open} ontoggle={ontoggle}>
            <summary><h2>{ t(lang, "pii_title") }</h2></summary>
            <p class="hint">{ t(lang, "pii_intro") }</p>
            if let Some(v) = &p.view {
                <div class="pii-controls">
                    <label>
                        { t(lang, "pii_customer") }
                        <select id="pii-customer" onchange={on_pick}>
                            { for v.customers.iter().map(|c| html! {
                                <option value={c.user_id.clone()} selected={c.user_id == v.customer}>
                                    { format!("{} ({} {})", c.user_id, c.orders, t(lang, "pii_orders")) }
                                </option>
                            }) }
                        </select>
                    </label>
                    <button id="pii-forget-all" disabled={v.methods.iter().all(|m| m.forgotten)} onclick={on_all}>
                        { format!("{} {}", t(lang, "pii_forget_all"), v.customer) }
                    </button>
                    <button id="pii-reset" class="secondary" title={t(lang, "pii_reset_hint")} onclick={on_reset}>
                        { t(lang, "pii_reset") }
                    </button>
                </div>
                <div class="pii-methods">
                    { for v.methods.iter().map(|m| method(m, &v.customer, lang, &p.on_request)) }
                </div>
            } else if *open {
                <div class="loading" id="pii-loading">{ t(lang, "pii_loading") }</div>
            }
        </details>
    }
}
