//! The rule registry editor: one card per rule with its expression,
//! parameters, on/off switch, what it did in the last run and its error.

use medallion_protocol::{
    Action, ColumnType, Lang, Rule, RuleKind, RuleStat, RunRecord, SilverView, TableName,
};
use yew::prelude::*;

use crate::components::use_locked;
use crate::i18n::t;

#[derive(Properties, PartialEq, Clone)]
pub struct Props {
    pub silver: Option<SilverView>,
    /// Every silver table (qualified), to switch between registries.
    pub silver_tables: Vec<TableName>,
    pub on_table: Callback<TableName>,
    /// The user's current rules (may be ahead of the engine while typing).
    pub draft: Vec<Rule>,
    pub lang: Lang,
    /// The rules after an edit, and when the edit should run.
    pub on_change: Callback<(Vec<Rule>, When)>,
    pub on_export: Callback<()>,
    /// Earlier runs' rule figures, oldest first.
    pub history: Vec<RunRecord>,
    /// The silver table's columns (name, type), for new rules' templates.
    pub columns: Vec<(String, String)>,
}

/// When an edit of the rules runs: typing waits for a pause (a rule is
/// run once, not per keystroke); a switch, a choice, an added or deleted
/// rule is complete as it is and runs at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    AfterTyping,
    Now,
}

#[derive(Properties, PartialEq, Clone)]
struct TypeProps {
    value: Option<ColumnType>,
    lang: Lang,
    on_change: Callback<Option<ColumnType>>,
}

/// A normalization's declared type: applied when the box is left (or Enter),
/// so half-typed text is never rewritten; a text that is not a type is
/// shown as an error and changes nothing.
#[function_component(TypeInput)]
fn type_input(p: &TypeProps) -> Html {
    let error = use_state(|| None::<String>);
    let onchange = {
        let (cb, error) = (p.on_change.clone(), error.clone());
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlInputElement = e.target_unchecked_into();
            let text = el.value();
            if text.trim().is_empty() {
                error.set(None);
                cb.emit(None);
                return;
            }
            match text.parse::<ColumnType>() {
                Ok(t) => {
                    error.set(None);
                    el.set_value(&t.to_string());
                    cb.emit(Some(t));
                }
                Err(m) => error.set(Some(m)),
            }
        })
    };
    html! {
        <label class="rule-type muted" title={t(p.lang, "cast_hint")}>{ format!("→ {} ", t(p.lang, "cast_type")) }
            <input class={classes!("mono", error.is_some().then_some("invalid"))} placeholder="—"
                value={p.value.map(|c| c.to_string()).unwrap_or_default()} {onchange} />
            if let Some(m) = &*error {
                <span class="type-error">{ format!("{m} ({})", t(p.lang, "type_error")) }</span>
            }
        </label>
    }
}

fn stat_text(lang: Lang, rule: &Rule, stat: Option<&RuleStat>) -> String {
    if !rule.enabled {
        return t(lang, "off").to_string();
    }
    let Some(s) = stat else { return String::new() };
    let failed_word = match (s.kind, s.action, rule.lookup.is_some()) {
        (_, Action::Warn, _) if s.kind != RuleKind::Enrich => t(lang, "warned"),
        (RuleKind::Filter, _, _) => t(lang, "rejected"),
        (RuleKind::Enrich, _, true) => t(lang, "no_match"),
        (RuleKind::Enrich, _, false) => t(lang, "null_in"),
        _ => t(lang, "failed"),
    };
    let failed = format!("{failed_word} {} / {}", s.failed, s.checked);
    match s.kind {
        RuleKind::Normalize if s.failed == 0 => {
            format!("{} {} / {}", t(lang, "changed"), s.changed, s.checked)
        }
        RuleKind::Normalize => format!("{failed} · {} {}", t(lang, "changed"), s.changed),
        _ => failed,
    }
}

#[function_component(RulesPanel)]
pub fn rules_panel(p: &Props) -> Html {
    let lang = p.lang;
    let (locked, hint) = use_locked(lang);
    let Some(silver) = &p.silver else {
        return html! {};
    };
    let edit = |i: usize, f: fn(&mut Rule, String)| {
        let (draft, cb) = (p.draft.clone(), p.on_change.clone());
        Callback::from(move |value: String| {
            let mut rules = draft.clone();
            if let Some(r) = rules.get_mut(i) {
                f(r, value);
            }
            cb.emit((rules, When::AfterTyping));
        })
    };
    let text_input = |cb: Callback<String>| {
        Callback::from(move |e: InputEvent| {
            let el: web_sys::HtmlTextAreaElement = e.target_unchecked_into();
            cb.emit(el.value());
        })
    };
    let line_input = |cb: Callback<String>| {
        Callback::from(move |e: InputEvent| {
            let el: web_sys::HtmlInputElement = e.target_unchecked_into();
            cb.emit(el.value());
        })
    };
    let delete = |i: usize| {
        let (draft, cb) = (p.draft.clone(), p.on_change.clone());
        Callback::from(move |_: MouseEvent| {
            let mut rules = draft.clone();
            if i < rules.len() {
                rules.remove(i);
            }
            cb.emit((rules, When::Now));
        })
    };
    let add = |kind: RuleKind| {
        let (draft, cb, columns) = (p.draft.clone(), p.on_change.clone(), p.columns.clone());
        Callback::from(move |_: MouseEvent| {
            let mut rules = draft.clone();
            // Keep the registry in execution order: after the last rule of the same kind.
            let at = rules
                .iter()
                .rposition(|r| r.kind == kind)
                .map(|i| i + 1)
                .unwrap_or(rules.len());
            let rule = new_rule(&rules, kind, &columns);
            rules.insert(at, rule);
            cb.emit((rules, When::Now));
        })
    };
    let on_export = {
        let cb = p.on_export.clone();
        Callback::from(move |_| cb.emit(()))
    };

    html! {
        <div class="panel rules" id="rules">
            <div class="panel-head">
                <h2>{ t(lang, "rules") }<small>{ format!(" {} → ", silver.source) }</small>
                    if p.silver_tables.len() > 1 {
                        <select id="rules-table" class="rules-table" onchange={
                            let cb = p.on_table.clone();
                            Callback::from(move |e: Event| {
                                let el: web_sys::HtmlSelectElement = e.target_unchecked_into();
                                if let Ok(t) = el.value().parse() {
                                    cb.emit(t);
                                }
                            })
                        }>
                            { for p.silver_tables.iter().map(|n| html! { <option value={n.to_string()} selected={*n == silver.name}>{ n.as_str() }</option> }) }
                        </select>
                    } else {
                        <small>{ silver.name.as_str() }</small>
                    }
                </h2>
                <button class="ghost small" onclick={on_export}>{ t(lang, "export_md") }</button>
            </div>
            <p class="muted">{ t(lang, "rules_hint") }</p>
            // Read-only tab: every editor below is off (a disabled fieldset).
            <fieldset class="rule-list" disabled={locked} title={hint.clone()}>
                { for p.draft.iter().enumerate().map(|(i, rule)| {
                    let engine_view = silver.rules.iter().find(|r| r.rule.id == rule.id);
                    let error = engine_view.and_then(|r| r.error.clone());
                    let stat_ref = engine_view.and_then(|r| r.stat.as_ref());
                    let stat = stat_text(lang, rule, stat_ref);
                    // The sample of failing rows, then this rule's figures in the last runs.
                    let table_short = silver.name.name().to_string();
                    let runs: Vec<String> = p
                        .history
                        .iter()
                        .rev()
                        .take(8)
                        .filter_map(|r| {
                            r.rules
                                .iter()
                                .find(|s| s.rule_id == rule.id && s.silver_table == table_short)
                                .map(|s| format!("{} {}: {} / {}", t(lang, "run_word"), r.run, s.failed, s.checked))
                        })
                        .collect();
                    let mut sample = stat_ref.map(|s| s.sample.join("\n")).unwrap_or_default();
                    if !runs.is_empty() {
                        if !sample.is_empty() {
                            sample.push_str("\n\n");
                        }
                        sample.push_str(&format!("{}\n{}", t(lang, "rule_runs"), runs.join("\n")));
                    }
                    let on_action = {
                        let (draft, cb) = (p.draft.clone(), p.on_change.clone());
                        Callback::from(move |e: Event| {
                            let el: web_sys::HtmlSelectElement = e.target_unchecked_into();
                            let mut rules = draft.clone();
                            if let Some(r) = rules.get_mut(i) {
                                r.action = match el.value().as_str() {
                                    "warn" => Some(Action::Warn),
                                    "fail" => Some(Action::Fail),
                                    _ => Some(Action::Drop),
                                };
                            }
                            cb.emit((rules, When::Now));
                        })
                    };
                    let on_cast = {
                        let (draft, cb) = (p.draft.clone(), p.on_change.clone());
                        Callback::from(move |cast: Option<ColumnType>| {
                            let mut rules = draft.clone();
                            if let Some(r) = rules.get_mut(i) {
                                r.cast = cast;
                            }
                            cb.emit((rules, When::Now));
                        })
                    };
                    let action = rule.action();
                    let toggle = {
                        let (draft, cb) = (p.draft.clone(), p.on_change.clone());
                        Callback::from(move |_| {
                            let mut rules = draft.clone();
                            if let Some(r) = rules.get_mut(i) {
                                r.enabled = !r.enabled;
                            }
                            cb.emit((rules, When::Now));
                        })
                    };
                    let on_expr = text_input(edit(i, |r, v| r.expression = v));
                    let kind_class = rule.kind.as_str();
                    html! {
                        <div class={classes!("rule", kind_class, (!rule.enabled).then_some("disabled"), error.is_some().then_some("has-error"))} id={format!("rule-{}", rule.id)}>
                            <div class="rule-head">
                                <input type="checkbox" class="rule-enabled" checked={rule.enabled} onclick={toggle} title={t(lang, "enabled")} />
                                <span class="rule-id">{ &rule.id }</span>
                                <span class={classes!("kind", kind_class)}>{ t(lang, kind_class) }</span>
                                <input class="mono rule-column" value={rule.column.clone()} title={rule.column.clone()}
                                    oninput={line_input(edit(i, |r, v| r.column = v))} />
                                <span class="rule-stat" title={sample}>{ stat }</span>
                                <select class={classes!("rule-action", action.as_str())} title={t(lang, "on_failure")} onchange={on_action}>
                                    { for [Action::Warn, Action::Drop, Action::Fail].into_iter().map(|a| html! {
                                        <option value={a.as_str()} selected={a == action} title={t(lang, &format!("action_{}", a.as_str()))}>{ a.as_str() }</option>
                                    }) }
                                </select>
                                <button class="ghost small delete" title={t(lang, "delete_rule")} onclick={delete(i)}>{ "×" }</button>
                            </div>
                            if let Some(l) = &rule.lookup {
                                <div class="lookup mono">
                                    { format!("{} {} AS {} ON ", t(lang, "lookup"), l.table, l.alias) }
                                    <input class="mono on" value={l.on.clone()} oninput={line_input(edit(i, |r, v| if let Some(l) = r.lookup.as_mut() { l.on = v }))} />
                                </div>
                            }
                            <textarea class="mono rule-expr" rows={if rule.expression.len() > 60 { "2" } else { "1" }} spellcheck="false" value={rule.expression.clone()} oninput={on_expr} />
                            if rule.kind == RuleKind::Normalize {
                                <TypeInput value={rule.cast} lang={lang} on_change={on_cast} />
                            }
                            if !rule.params.is_empty() {
                                <div class="params">
                                    <span class="muted">{ t(lang, "params") }</span>
                                    { for rule.params.iter().enumerate().map(|(k, prm)| {
                                        let (draft, cb) = (p.draft.clone(), p.on_change.clone());
                                        let oninput = Callback::from(move |e: InputEvent| {
                                            let el: web_sys::HtmlInputElement = e.target_unchecked_into();
                                            let mut rules = draft.clone();
                                            if let Some(pp) = rules.get_mut(i).and_then(|r| r.params.get_mut(k)) {
                                                pp.value = el.value();
                                            }
                                            cb.emit((rules, When::AfterTyping));
                                        });
                                        html! {
                                            <label class="param">{ format!("{{{}}}", prm.name) }
                                                <input class="mono" id={format!("param-{}-{}", rule.id, prm.name)} value={prm.value.clone()} {oninput} />
                                            </label>
                                        }
                                    }) }
                                </div>
                            }
                            if let Some(err) = error {
                                <div class="rule-error">{ err }</div>
                            }
                            <textarea class="rationale" rows="2" placeholder={t(lang, "new_rationale")} value={rule.rationale.clone()}
                                oninput={text_input(edit(i, |r, v| r.rationale = v))} />
                        </div>
                    }
                }) }
                <div class="add-rules">
                    <span class="muted">{ t(lang, "add_rule") }</span>
                    <button class="ghost small" id="add-filter" onclick={add(RuleKind::Filter)}>{ format!("+ {}", t(lang, "filter")) }</button>
                    <button class="ghost small" id="add-normalize" onclick={add(RuleKind::Normalize)}>{ format!("+ {}", t(lang, "normalize")) }</button>
                    <button class="ghost small" id="add-enrich" onclick={add(RuleKind::Enrich)}>{ format!("+ {}", t(lang, "enrich")) }</button>
                    <button class="ghost small" id="add-expect" onclick={add(RuleKind::Expect)}>{ format!("+ {}", t(lang, "expect")) }</button>
                </div>
            </fieldset>
        </div>
    }
}

/// A new, switched-off rule of `kind` with the next free id (F5, N6, X2, ...)
/// and a working expression over the silver table's first columns to start from.
fn new_rule(existing: &[Rule], kind: RuleKind, columns: &[(String, String)]) -> Rule {
    let prefix = match kind {
        RuleKind::Filter => "F",
        RuleKind::Normalize => "N",
        RuleKind::Enrich => "E",
        RuleKind::Expect => "X",
    };
    let next = existing
        .iter()
        .filter_map(|r| {
            r.id.strip_prefix(prefix)
                .and_then(|n| n.parse::<u32>().ok())
        })
        .max()
        .unwrap_or(0)
        + 1;
    // A text column for the normalization's template, else the first column.
    let first = columns
        .first()
        .map(|(n, _)| n.clone())
        .unwrap_or_else(|| "id".into());
    let text = columns
        .iter()
        .find(|(_, ty)| ty == "STRING")
        .map(|(n, _)| n.clone())
        .unwrap_or_else(|| first.clone());
    let (column, expression) = match kind {
        RuleKind::Filter => (first.clone(), format!("{first} IS NULL")),
        RuleKind::Normalize => (text.clone(), format!("trim({text})")),
        RuleKind::Enrich => (format!("{first}_text"), format!("CAST({first} AS VARCHAR)")),
        RuleKind::Expect => (first.clone(), format!("{first} IS NOT NULL")),
    };
    Rule {
        id: format!("{prefix}{next}"),
        kind,
        column,
        expression,
        params: vec![],
        lookup: None,
        enabled: false,
        rationale: String::new(),
        action: None,
        cast: None,
    }
}
