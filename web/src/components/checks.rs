//! Quality checks grouped by level (row, schema, aggregate).

use medallion_engine::checks::{CheckResult, CheckStatus};
use medallion_engine::model::CheckLevel;
use medallion_engine::Lang;
use yew::prelude::*;

use crate::i18n::t;

#[derive(Properties, PartialEq, Clone)]
pub struct Props {
    pub checks: Vec<CheckResult>,
    pub lang: Lang,
}

fn badge(s: CheckStatus) -> (&'static str, &'static str) {
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
            { for groups.iter().map(|(level, key)| html! {
                <div class="check-group">
                    <h4>{ t(p.lang, key) }</h4>
                    { for p.checks.iter().filter(|c| c.level == *level).map(|c| {
                        let (label, class) = badge(c.status);
                        html! {
                            <div class="check" id={format!("check-{}", c.id)}>
                                <span class={classes!("badge", class)}>{ label }</span>
                                <span class="check-id">{ &c.id }</span>
                                <span class="check-desc">{ &c.description }</span>
                                <span class="check-observed">{ &c.observed }</span>
                            </div>
                        }
                    }) }
                </div>
            }) }
        </div>
    }
}
