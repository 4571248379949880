//! Quality checks grouped by level (row, schema, aggregate), each with its
//! severity, a sample of the violating rows, and its status in earlier runs.

use medallion_protocol::{CheckLevel, CheckResult, CheckStatus, Lang, RunRecord, Severity};
use yew::prelude::*;

use crate::i18n::t;

#[derive(Properties, PartialEq, Clone)]
pub struct Props {
    pub checks: Vec<CheckResult>,
    /// Earlier runs, oldest first (for the status trail).
    pub history: Vec<RunRecord>,
    pub lang: Lang,
}

/// A status's badge: its label and CSS class.
pub fn badge(s: CheckStatus) -> (&'static str, &'static str) {
    match s {
        CheckStatus::Pass => ("PASS", "pass"),
        CheckStatus::Warn => ("WARN", "warn"),
        CheckStatus::Fail => ("FAIL", "fail"),
        CheckStatus::Error => ("ERROR", "fail"),
        CheckStatus::Info => ("INFO", "info"),
    }
}

#[function_component(ChecksPanel)]
pub fn checks_panel(p: &Props) -> Html {
    let groups = [
        (CheckLevel::Row, "row"),
        (CheckLevel::Schema, "schema"),
        (CheckLevel::Aggregate, "aggregate"),
    ];
    html! {
        <div class="panel checks" id="checks">
            <h2>{ t(p.lang, "checks") }</h2>
            { for groups.iter().filter(|(level, _)| p.checks.iter().any(|c| c.level == *level)).map(|(level, key)| html! {
                <div class="check-group">
                    <h4>{ t(p.lang, key) }</h4>
                    { for p.checks.iter().filter(|c| c.level == *level).map(|c| {
                        let (label, class) = badge(c.status);
                        // This check's status in the last runs, oldest first.
                        let trail: Vec<(u64, CheckStatus)> = p
                            .history
                            .iter()
                            .rev()
                            .take(12)
                            .filter_map(|r| r.checks.iter().find(|(id, _)| *id == c.id).map(|(_, s)| (r.run, *s)))
                            .collect::<Vec<_>>()
                            .into_iter()
                            .rev()
                            .collect();
                        html! {
                            <div class="check" id={format!("check-{}", c.id)}>
                                <span class={classes!("badge", class)}>{ label }</span>
                                <span class="check-id">{ &c.id }</span>
                                <span class="check-desc">
                                    { &c.description }
                                    if c.severity == Severity::Warn {
                                        <span class="severity" title={t(p.lang, "severity_warn_hint")}>{ " · warn" }</span>
                                    }
                                </span>
                                <span class="check-observed">
                                    { &c.observed }
                                    if trail.len() > 1 {
                                        <span class="trail" title={t(p.lang, "check_trail")}>
                                            { for trail.iter().map(|(run, s)| html! {
                                                <span class={classes!("dot", badge(*s).1)} title={format!("{} {run}: {}", t(p.lang, "run_word"), badge(*s).0)} />
                                            }) }
                                        </span>
                                    }
                                </span>
                                if !c.sample.is_empty() {
                                    <details class="check-sample">
                                        <summary>{ format!("{} ({})", t(p.lang, "failing_rows"), c.sample.len()) }</summary>
                                        { for c.sample.iter().map(|r| html! { <div class="mono">{ r }</div> }) }
                                    </details>
                                }
                            </div>
                        }
                    }) }
                </div>
            }) }
        </div>
    }
}
