//! The top bar: title, scenario picker, the last run's time, the saved
//! session, reload and the language switch.

use medallion_protocol::{Lang, RunInfo};
use yew::prelude::*;

use crate::components::status::SessionBar;
use crate::components::use_locked;
use crate::engine::Engine;
use crate::i18n::t;
use crate::ui::confirm;

/// What the bar shows once the engine has answered.
#[derive(PartialEq, Clone)]
pub struct Loaded {
    /// The scenario loaded now (empty for a pipeline loaded from a file).
    pub example: String,
    /// Nothing is loaded (the very first load was cancelled).
    pub empty: bool,
    pub run: RunInfo,
}

#[derive(Properties, PartialEq, Clone)]
pub struct Props {
    pub lang: Lang,
    pub engine: Engine,
    /// `None` while the engine loads: only the title is drawn.
    pub loaded: Option<Loaded>,
    /// Another scenario, once confirmed.
    pub on_example: Callback<String>,
    /// Reload the current scenario, once confirmed.
    pub on_reload: Callback<()>,
    pub on_lang: Callback<()>,
    /// Instructor mode (larger type for a projector, the lab up front).
    pub instructor: bool,
    pub on_instructor: Callback<()>,
}

#[function_component(TopBar)]
pub fn top_bar(p: &Props) -> Html {
    let lang = p.lang;
    // Scenario titles for the picker (the protocol's example list, once per language).
    let catalog = use_memo(lang, |l| medallion_protocol::example_catalog(*l));
    let (locked, hint) = use_locked(lang);
    // The picker names the scenario on screen. A pick whose load was
    // cancelled or failed goes back to it once the page is unlocked: the
    // options did not change, so rendering alone would leave the select
    // showing the learner's pick over the old scenario's tables.
    let picker = use_node_ref();
    {
        let (picker, on_screen) = (
            picker.clone(),
            p.loaded.as_ref().filter(|l| !l.empty).map(|l| l.example.clone()),
        );
        use_effect(move || {
            if let (false, Some(example)) = (locked, on_screen) {
                if let Some(select) = picker.cast::<web_sys::HtmlSelectElement>() {
                    if select.value() != example {
                        select.set_value(&example);
                    }
                }
            }
        });
    }
    let Some(loaded) = &p.loaded else {
        return html! {
            <header class="topbar">
                <h1>{ t(lang, "app_title") }</h1>
                <span class="tagline">{ t(lang, "tagline") }</span>
            </header>
        };
    };
    let on_example = {
        let (cb, current, empty, engine) =
            (p.on_example.clone(), loaded.example.clone(), loaded.empty, p.engine.clone());
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlSelectElement = e.target_unchecked_into();
            let name = el.value();
            if name == current {
                return;
            }
            // Nothing to lose when nothing is loaded, or nothing changed
            // since it was.
            if !empty && engine.changed_since_load() && !confirm(t(lang, "confirm_example")) {
                el.set_value(&current);
                return;
            }
            cb.emit(name);
        })
    };
    let on_reload = {
        let (cb, engine) = (p.on_reload.clone(), p.engine.clone());
        Callback::from(move |_| {
            if !engine.changed_since_load() || confirm(t(lang, "confirm_reload")) {
                cb.emit(());
            }
        })
    };
    let on_lang = p.on_lang.reform(|_| ());
    let run = &loaded.run;
    html! {
        <header class="topbar">
            <h1>{ t(lang, "app_title") }</h1>
            <select class="example-picker" id="example-picker" ref={picker} disabled={locked}
                title={hint.clone().unwrap_or_else(|| t(lang, "example").into())} onchange={on_example}>
                if loaded.empty {
                    <option value="" disabled=true selected=true>{ t(lang, "choose_scenario") }</option>
                }
                { for catalog.iter().map(|(name, title)| html! {
                    <option value={*name} selected={*name == loaded.example}>{ title }</option>
                }) }
            </select>
            <span class="tagline">{ t(lang, "tagline") }</span>
            <span class="spacer"></span>
            <span class={classes!("run-status", (!run.ok).then_some("bad"))} id="run-status">
                { format!("{} {:.0} {}", t(lang, "recomputed"), run.duration_ms, t(lang, "ms")) }
            </span>
            <SessionBar engine={p.engine.clone()} lang={lang} />
            <button class="ghost" id="reload-scenario" disabled={locked} title={hint} onclick={on_reload}>{ t(lang, "reload") }</button>
            <button class={classes!("ghost", p.instructor.then_some("on"))} id="instructor-mode"
                aria-pressed={if p.instructor { "true" } else { "false" }} title={t(lang, "instructor_hint")}
                onclick={p.on_instructor.reform(|_| ())}>{ t(lang, "instructor") }</button>
            <button class="ghost" id="lang-switch" onclick={on_lang}>{ t(lang, "lang_switch") }</button>
        </header>
    }
}
