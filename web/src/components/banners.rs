//! Messages under the top bar: the answers' messages (closable), the
//! scenario's notice, and the banner saying the last run failed.

use medallion_protocol::{Lang, PipelineView};
use yew::prelude::*;

use crate::i18n::t;
use crate::state::Banner;

#[derive(Properties, PartialEq, Clone)]
pub struct MessagesProps {
    pub banners: Vec<Banner>,
    /// The index of the message closed.
    pub on_close: Callback<usize>,
}

#[function_component(Messages)]
pub fn messages(p: &MessagesProps) -> Html {
    html! {
        { for p.banners.iter().enumerate().map(|(i, b)| {
            let close = p.on_close.reform(move |_| i);
            html! {
                <div class={classes!("banner", if b.error { "error" } else { "info" })} id={format!("message-banner-{i}")}>
                    <span>{ b.text.clone() }</span>
                    <button class="ghost small" onclick={close}>{ "×" }</button>
                </div>
            }
        }) }
    }
}

/// Why the last run failed.
#[derive(PartialEq, Clone)]
pub struct Stale {
    /// Only gold failed (no rule and no run-wide error).
    pub gold_only: bool,
    /// "F2: message" and "gold.x: message" lines.
    pub errors: Vec<String>,
}

impl Stale {
    /// Why the last run of `v` failed; `None` if it did not.
    pub fn of(v: &PipelineView) -> Option<Stale> {
        if v.run.ok {
            return None;
        }
        let mut errors: Vec<String> = v
            .silver
            .iter()
            .flat_map(|s| {
                s.rules.iter().filter_map(|r| {
                    r.error
                        .as_ref()
                        .map(|e| format!("{} {}: {e}", s.name, r.rule.id))
                })
            })
            .collect();
        let gold_only = errors.is_empty() && v.run.errors.is_empty();
        errors.extend(v.gold.iter().filter_map(|g| {
            g.error.as_ref().map(|e| {
                format!(
                    "{}: {e}",
                    medallion_protocol::TableName::gold(&g.model.name)
                )
            })
        }));
        errors.extend(v.run.errors.iter().cloned());
        Some(Stale { gold_only, errors })
    }
}

#[derive(Properties, PartialEq, Clone)]
pub struct RunNoticesProps {
    pub lang: Lang,
    pub notice: Option<String>,
    /// Set when the last run failed.
    pub stale: Option<Stale>,
}

#[function_component(RunNotices)]
pub fn run_notices(p: &RunNoticesProps) -> Html {
    html! {
        <>
            if let Some(n) = &p.notice {
                <div class="banner warn" id="notice">{ n }</div>
            }
            if let Some(s) = &p.stale {
                <div class="banner error stale" id="stale-banner">
                    <div>{ t(p.lang, if s.gold_only { "stale_gold" } else { "stale" }) }</div>
                    { for s.errors.iter().map(|e| html!{ <div class="mono">{ e }</div> }) }
                </div>
            }
        </>
    }
}
