//! The instructor's lab: one switch per anti-pattern of the course (with
//! its two-line explanation and the seed section it comes from), the events
//! a real pipeline meets, and, while one is on, the session and its twin
//! compared: row counts, gold side by side with the changed cells marked,
//! each measure's total and ratio, the checks that differ, what exposes the
//! damage, and the events' timeline. The engine builds the twin
//! (`medallion_protocol::lab`); this panel only draws it.

use medallion_protocol::{AntiPattern, LabEvent, LabGold, LabView, Lang, SignState};
use yew::prelude::*;

use super::checks::badge as status;
use super::use_locked;
use crate::i18n::t;

#[derive(Properties, PartialEq, Clone)]
pub struct Props {
    pub lab: Option<LabView>,
    pub lang: Lang,
    /// Switch the lab to exactly these anti-patterns.
    pub on_set: Callback<Vec<AntiPattern>>,
    pub on_event: Callback<LabEvent>,
    /// Instructor mode: the panel opens by itself.
    #[prop_or_default]
    pub instructor: bool,
    /// Why the last event was refused (it does not fit the scenario).
    #[prop_or_default]
    pub notice: Option<String>,
}

/// The terms the lab's texts use, explained for a learner (i18n keys
/// `lab_term_<key>` and `lab_term_<key>_def`).
const TERMS: &[&str] = &[
    "twin",
    "merge",
    "insert",
    "idempotent",
    "at_least_once",
    "watermark",
    "scd",
    "quarantine",
    "replay",
    "time_travel",
    "lineage",
];

/// The i18n keys of an anti-pattern's title and explanation.
fn keys(a: AntiPattern) -> (&'static str, &'static str) {
    match a {
        AntiPattern::DedupAtIngest => ("lab_dedup", "lab_dedup_hint"),
        AntiPattern::FilterAtIngest => ("lab_filter", "lab_filter_hint"),
        AntiPattern::InsertInsteadOfMerge => ("lab_insert", "lab_insert_hint"),
        AntiPattern::OverwritePartition => ("lab_overwrite", "lab_overwrite_hint"),
        AntiPattern::DropMalformed => ("lab_dropmalformed", "lab_dropmalformed_hint"),
        AntiPattern::FixJobInBronze => ("lab_fixjob", "lab_fixjob_hint"),
        AntiPattern::WeeklyDelete => ("lab_weekly_delete", "lab_weekly_delete_hint"),
        AntiPattern::Shortcut => ("lab_shortcut", "lab_shortcut_hint"),
        AntiPattern::JoinAtIngest => ("lab_join", "lab_join_hint"),
        AntiPattern::MonolithicSilver => ("lab_monolithic", "lab_monolithic_hint"),
    }
}

/// "1 row differs", "2 rows differ"; Russian "1 строка", "3 строки", "5 строк".
fn changed_rows_key(n: usize, lang: Lang) -> &'static str {
    if lang == Lang::En {
        return if n == 1 {
            "lab_changed_row"
        } else {
            "lab_changed_rows"
        };
    }
    match (n % 10, n % 100) {
        (1, h) if h != 11 => "lab_changed_row",
        (2..=4, h) if !(12..=14).contains(&h) => "lab_changed_rows_few",
        _ => "lab_changed_rows",
    }
}

fn cell(v: &Option<String>) -> String {
    v.clone().unwrap_or_else(|| "NULL".into())
}

/// One side of a gold model: its rows aligned with the other side's (an
/// empty row where this side lacks one), changed cells marked.
fn side(g: &LabGold, anti: bool, lang: Lang) -> Html {
    html! {
        <div class="lab-side">
            <h5>{ t(lang, if anti { "lab_anti" } else { "lab_correct" }) }</h5>
            <table class="lab-gold-table" data-side={if anti { "anti" } else { "correct" }}>
                <thead><tr>{ for g.columns.iter().map(|c| html! { <th>{ c }</th> }) }</tr></thead>
                <tbody>
                    { for g.rows.iter().map(|r| {
                        let cells = if anti { &r.anti } else { &r.correct };
                        if cells.is_empty() {
                            html! { <tr class="lab-absent"><td colspan={g.columns.len().to_string()}>{ t(lang, "lab_no_row") }</td></tr> }
                        } else {
                            html! { <tr>{ for cells.iter().enumerate().map(|(i, v)| html! {
                                <td class={classes!(r.changed.contains(&i).then_some("changed"))}>{ cell(v) }</td>
                            }) }</tr> }
                        }
                    }) }
                </tbody>
            </table>
        </div>
    }
}

#[function_component(LabPanel)]
pub fn lab_panel(p: &Props) -> Html {
    let lang = p.lang;
    let (locked, hint) = use_locked(lang);
    let shown: Vec<AntiPattern> = p.lab.as_ref().map(|l| l.on.clone()).unwrap_or_default();
    // The switches as last clicked: a click before the engine answered the
    // previous one builds on it, not on the older view (rapid toggles).
    // `sent` lists the switches of each click not answered yet, in order:
    // an answer to an earlier click (the engine answers in order) leaves
    // the later clicks standing; a state no click asked for (a new example,
    // a reload) replaces them.
    let wanted = use_mut_ref(|| shown.clone());
    let sent: std::rc::Rc<std::cell::RefCell<Vec<Vec<AntiPattern>>>> = use_mut_ref(Vec::new);
    {
        let (wanted, sent) = (wanted.clone(), sent.clone());
        use_effect_with(shown.clone(), move |shown| {
            let mut sent = sent.borrow_mut();
            let same = |s: &Vec<AntiPattern>| {
                s.len() == shown.len() && s.iter().all(|a| shown.contains(a))
            };
            match sent.iter().position(same) {
                Some(i) => {
                    sent.drain(..=i);
                }
                None => sent.clear(),
            }
            if sent.is_empty() {
                *wanted.borrow_mut() = shown.clone();
            }
        });
    }
    let on = shown;
    // Open while the lab is active (after a reload too); otherwise as the
    // instructor leaves it.
    let open = use_state(|| p.lab.is_some() || p.instructor);
    {
        let open = open.clone();
        use_effect_with(
            (p.lab.is_some(), p.instructor),
            move |(active, instructor)| {
                if *active || *instructor {
                    open.set(true);
                }
            },
        );
    }
    let ontoggle = {
        let open = open.clone();
        Callback::from(move |e: Event| {
            if let Some(d) = e.target_dyn_into::<web_sys::HtmlDetailsElement>() {
                open.set(d.open());
            }
        })
    };
    html! {
        <details class="panel lab" id="lab" open={*open} ontoggle={ontoggle}>
            <summary><h2>{ t(lang, "lab_title") }</h2></summary>
            <p class="hint">{ t(lang, "lab_intro") }</p>
            <details class="lab-glossary" id="lab-glossary">
                <summary>{ t(lang, "lab_terms") }</summary>
                <dl>
                    { for TERMS.iter().map(|k| html! {
                        <>
                            <dt>{ t(lang, &format!("lab_term_{k}")) }</dt>
                            <dd>{ t(lang, &format!("lab_term_{k}_def")) }</dd>
                        </>
                    }) }
                </dl>
            </details>
            if !on.is_empty() {
                <div class="lab-reset-row">
                    <button id="lab-reset" class="secondary" disabled={locked} title={t(lang, "lab_reset_hint")}
                        onclick={{ let (cb, wanted, sent) = (p.on_set.clone(), wanted.clone(), sent.clone()); Callback::from(move |_| { wanted.borrow_mut().clear(); sent.borrow_mut().push(vec![]); cb.emit(vec![]) }) }}>
                        { t(lang, "lab_reset") }
                    </button>
                </div>
            }
            <div class="lab-switches">
                { for AntiPattern::ALL.iter().map(|a| {
                    let (title, explain) = keys(*a);
                    let checked = on.contains(a);
                    let onchange = {
                        let (cb, wanted, sent, a) = (p.on_set.clone(), wanted.clone(), sent.clone(), *a);
                        Callback::from(move |_| {
                            let mut next: Vec<AntiPattern> = wanted.borrow().clone();
                            if next.contains(&a) {
                                next.retain(|x| *x != a);
                            } else {
                                next.push(a);
                            }
                            *wanted.borrow_mut() = next.clone();
                            sent.borrow_mut().push(next.clone());
                            cb.emit(next)
                        })
                    };
                    html! {
                        <label class={classes!("lab-switch", checked.then_some("on"))} id={format!("lab-{}", a.key())} title={hint.clone()}>
                            <input type="checkbox" checked={checked} disabled={locked} onchange={onchange} />
                            <span class="lab-switch-text">
                                <strong>{ t(lang, title) }</strong>
                                <span class="chip">{ format!("{} · {}", a.layer(), a.seed()) }</span>
                                <span class="lab-explain">{ t(lang, explain) }</span>
                            </span>
                        </label>
                    }
                }) }
            </div>
            <div class="lab-events">
                <h4>{ t(lang, "lab_events") }</h4>
                { for LabEvent::ALL.iter().map(|e| {
                    let cb = p.on_event.clone();
                    let e = *e;
                    html! {
                        <button id={format!("lab-{}", e.key().replace('_', "-"))} disabled={locked}
                            title={hint.clone().unwrap_or_else(|| t(lang, &format!("lab_ev_{}_hint", e.key())).into())}
                            onclick={Callback::from(move |_| cb.emit(e))}>
                            { t(lang, &format!("lab_ev_{}", e.key())) }
                        </button>
                    }
                }) }
            </div>
            if let Some(n) = &p.notice {
                <div class="banner error" id="lab-refusal" role="alert">{ n }</div>
            }
            // The newest event's outcome right under the buttons that fired it.
            if let Some(e) = p.lab.as_ref().and_then(|l| l.timeline.last()) {
                <div class="lab-last-event" id="lab-last-event">
                    <strong>{ format!("{}. {}", e.n, t(lang, &format!("lab_ev_{}_done", e.event.key()))) }</strong>
                    <div>{ format!("{}: {}", t(lang, "lab_correct"), e.correct) }</div>
                    if !e.anti.is_empty() {
                        <div>{ format!("{}: {}", t(lang, "lab_anti"), e.anti) }</div>
                    }
                </div>
            }
            if let Some(l) = &p.lab {
                { comparison(l, lang) }
            }
        </details>
    }
}

/// The five signs of a healthy medallion: the session's and the twin's.
fn health(l: &LabView, lang: Lang) -> Html {
    let dot = |s: &SignState| {
        html! {
            <span class={classes!("sign", if s.ok { "ok" } else { "bad" })} title={s.reason.clone()}>
                <span class="dot">{ "●" }</span>
                { format!(" {}", s.reason) }
            </span>
        }
    };
    let twin = l.health.iter().any(|h| h.anti.is_some());
    html! {
        <div class="lab-health" id="lab-health">
            <h4>{ t(lang, "health_title") }</h4>
            <table>
                <thead><tr>
                    <th></th>
                    <th>{ t(lang, "lab_correct") }</th>
                    if twin { <th>{ t(lang, "lab_anti") }</th> }
                </tr></thead>
                <tbody>
                    { for l.health.iter().map(|h| html! {
                        <tr data-sign={h.sign.key()} data-correct={if h.correct.ok { "green" } else { "red" }}
                            data-anti={h.anti.as_ref().map(|a| if a.ok { "green" } else { "red" }).unwrap_or("")}>
                            <th>{ t(lang, &format!("health_{}", h.sign.key())) }</th>
                            <td>{ dot(&h.correct) }</td>
                            if let Some(a) = &h.anti { <td>{ dot(a) }</td> }
                        </tr>
                    }) }
                </tbody>
            </table>
        </div>
    }
}

fn comparison(l: &LabView, lang: Lang) -> Html {
    html! {
        <div class="lab-compare">
            if let Some(e) = &l.error {
                <div class="banner error" id="lab-error">{ e }</div>
            }
            if !l.findings.is_empty() {
                <ul class="lab-findings" id="lab-findings">
                    { for l.findings.iter().map(|f| html! { <li>{ f }</li> }) }
                </ul>
            }
            if !l.on.is_empty() && l.error.is_none() {
                { for l.gold.iter().map(|g| html! {
                    <div class="lab-gold" id={format!("lab-gold-{}", g.model.name())}>
                        <h4>
                            { g.model.to_string() }
                            <span class="hint">{ format!(" · {} {}", g.changed_rows, t(lang, changed_rows_key(g.changed_rows, lang))) }</span>
                        </h4>
                        if let Some(e) = &g.error {
                            <div class="banner error">{ e }</div>
                        }
                        if !g.measures.is_empty() {
                            <div class="lab-measures">
                                { for g.measures.iter().map(|m| html! {
                                    <span class={classes!("lab-measure", (m.correct != m.anti).then_some("changed"))} data-column={m.column.clone()}>
                                        { format!("Σ {}: {} → {}", m.column, m.correct, m.anti) }
                                        if let Some(r) = m.ratio {
                                            <strong>{ format!(" (×{})", medallion_protocol::lab::ratio_text(r)) }</strong>
                                        }
                                    </span>
                                }) }
                            </div>
                        }
                        <div class="lab-sides">
                            { side(g, false, lang) }
                            { side(g, true, lang) }
                        </div>
                    </div>
                }) }
                <table class="lab-counts" id="lab-counts">
                    <thead><tr>
                        <th>{ t(lang, "lab_table") }</th>
                        <th>{ t(lang, "lab_correct") }</th>
                        <th>{ t(lang, "lab_anti") }</th>
                    </tr></thead>
                    <tbody>
                        { for l.counts.iter().map(|c| {
                            let n = |x: Option<usize>| x.map_or("-".to_string(), |n| n.to_string());
                            html! {
                                <tr class={classes!((c.correct != c.anti).then_some("changed"))} data-table={c.table.to_string()}>
                                    <td>{ c.table.to_string() }</td>
                                    <td class="num">{ n(c.correct) }</td>
                                    <td class="num">{ n(c.anti) }</td>
                                </tr>
                            }
                        }) }
                    </tbody>
                </table>
                if !l.checks.is_empty() {
                    <div class="lab-checks" id="lab-checks">
                        <h4>{ t(lang, "lab_checks") }</h4>
                        { for l.checks.iter().map(|c| {
                            let ((cl, cc), (al, ac)) = (status(c.correct), status(c.anti));
                            html! {
                                <div class="lab-check" data-check={c.id.clone()}>
                                    <span class="check-id">{ &c.id }</span>
                                    <span class={classes!("badge", cc)}>{ cl }</span>
                                    { " → " }
                                    <span class={classes!("badge", ac)}>{ al }</span>
                                    <span class="check-desc">{ format!(" {} — {}", c.description, c.observation) }</span>
                                </div>
                            }
                        }) }
                    </div>
                }
            }
            { health(l, lang) }
            if !l.timeline.is_empty() {
                <div class="lab-timeline">
                    <h4>{ t(lang, "lab_timeline") }</h4>
                    <ol id="lab-timeline">
                        { for l.timeline.iter().map(|e| html! {
                            <li>
                                <strong>{ t(lang, &format!("lab_ev_{}_done", e.event.key())) }</strong>
                                <div>{ format!("{}: {}", t(lang, "lab_correct"), e.correct) }</div>
                                if !e.anti.is_empty() {
                                    <div>{ format!("{}: {}", t(lang, "lab_anti"), e.anti) }</div>
                                }
                            </li>
                        }) }
                    </ol>
                </div>
            }
        </div>
    }
}
