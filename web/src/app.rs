//! Top-level component: holds the last [`PipelineView`], the user's rule and
//! SQL drafts, and sends requests to the engine. Panels get data down and
//! hand callbacks up (as in Yew's function_todomvc example).

use std::cell::RefCell;
use std::rc::Rc;

use gloo::timers::callback::Timeout;
use medallion_protocol::{
    BatchInfo, BronzeMode, GoldView, IngestOptions, KafkaMessage, Lang, PipelineView, Request,
    Response, Rule, RunMode, SilverView, TableView, DEFAULT_EXAMPLE, PREVIEW_ROWS,
};
use yew::prelude::*;

use crate::components::batches::ReingestDialog;
use crate::components::checks::ChecksPanel;
use crate::components::pipeline::PipelineStrip;
use crate::components::rules::RulesPanel;
use crate::components::runbar::RunBar;
use crate::components::status::{EngineStatusBar, SessionBar};
use crate::components::table::TablePanel;
use crate::components::trail::TrailDialog;
use crate::engine::Engine;
use crate::i18n::t;

/// Messages offered in the Kafka panel of the taxi example: two trips in July 2020.
const KAFKA_SAMPLE: &str = r#"{"VendorID": 2, "tpep_pickup_datetime": "2020-07-15 08:00:00", "tpep_dropoff_datetime": "2020-07-15 08:20:00", "passenger_count": 1, "trip_distance": 3.2, "RatecodeID": 1, "store_and_fwd_flag": "N", "PULocationID": 142, "DOLocationID": 236, "payment_type": 1, "fare_amount": 14.5, "extra": 0.5, "mta_tax": 0.5, "tip_amount": 3.0, "tolls_amount": 0, "improvement_surcharge": 0.3, "total_amount": 21.3, "congestion_surcharge": 2.5}
{"VendorID": 1, "tpep_pickup_datetime": "2020-07-15 08:05:00", "tpep_dropoff_datetime": "2020-07-15 08:11:00", "passenger_count": 2, "trip_distance": 1.1, "RatecodeID": 1, "store_and_fwd_flag": "N", "PULocationID": 161, "DOLocationID": 162, "payment_type": 2, "fare_amount": 6.5, "extra": 0.5, "mta_tax": 0.5, "tip_amount": 0, "tolls_amount": 0, "improvement_surcharge": 0.3, "total_amount": 10.3, "congestion_surcharge": 2.5}"#;

/// Messages offered in the Kafka panel of the Kafka orders scenario: a late
/// update of 1002 (now PAID) and a brand-new order.
const KAFKA_ORDERS_SAMPLE: &str = r#"{"order_id": 1002, "user_id": 15, "amount": "149.00", "status": "PAID", "created_at": "2024-01-15T11:20:00"}
{"order_id": 1004, "user_id": 15, "amount": "20.50", "status": "PAID", "created_at": "2024-01-16T09:10:00"}"#;

/// Delay between the last keystroke in an editor and the rerun it triggers.
const EDIT_DEBOUNCE_MS: u32 = 300;

fn initial_lang() -> Lang {
    let query = gloo::utils::window()
        .location()
        .search()
        .unwrap_or_default();
    if let Ok(params) = web_sys::UrlSearchParams::new_with_str(&query) {
        match params.get("lang").as_deref() {
            Some("ru") => return Lang::Ru,
            Some("en") => return Lang::En,
            _ => {}
        }
    }
    let nav = gloo::utils::window()
        .navigator()
        .language()
        .unwrap_or_default();
    if nav.starts_with("ru") {
        Lang::Ru
    } else {
        Lang::En
    }
}

/// The messages on screen. A reducer, so several answers arriving in one
/// tick (a multi-file drop) each add their message instead of overwriting.
#[derive(Clone, PartialEq, Default)]
pub struct Banners(pub Vec<Banner>);

/// What to do with the messages.
pub enum BannerAction {
    /// Add one. Success notes replace earlier success notes; errors stay
    /// (the last three) until closed.
    Push(Banner),
    /// A success that makes earlier messages moot.
    Replace(Banner),
    Remove(usize),
    Clear,
}

impl Reducible for Banners {
    type Action = BannerAction;
    fn reduce(self: Rc<Self>, action: BannerAction) -> Rc<Self> {
        let mut all = self.0.clone();
        match action {
            BannerAction::Push(b) => {
                if !b.error {
                    all.retain(|x| x.error);
                }
                all.push(b);
                if all.iter().filter(|x| x.error).count() > 3 {
                    if let Some(first) = all.iter().position(|x| x.error) {
                        all.remove(first);
                    }
                }
            }
            BannerAction::Replace(b) => all = vec![b],
            BannerAction::Remove(i) => {
                if i < all.len() {
                    all.remove(i);
                }
            }
            BannerAction::Clear => all.clear(),
        }
        Rc::new(Banners(all))
    }
}

type BannerHandle = UseReducerHandle<Banners>;

/// A message shown in the banner.
#[derive(Clone, PartialEq)]
pub struct Banner {
    pub text: String,
    pub error: bool,
}

#[function_component(App)]
pub fn app() -> Html {
    let engine = use_memo((), |_| Engine::new());
    let lang = use_state(initial_lang);
    let view = use_state(|| None::<PipelineView>);
    let selected = use_state(|| "silver.nyc_taxi_yellow".to_string());
    let page = use_state(|| None::<TableView>);
    let rules_draft = use_state(Vec::<Rule>::new);
    // The silver table whose rules the registry panel edits (qualified name).
    let rules_table = use_state(String::new);
    let gold_draft = use_state(String::new);
    let banner = use_reducer(Banners::default);
    let export = use_state(|| None::<String>);
    // Time travel: the earlier version of the selected table being read.
    let travel = use_state(|| None::<u64>);
    let corrupt_only = use_state(|| false);
    let reingest = use_state(|| None::<BatchInfo>);
    let trail = use_state(|| None::<medallion_protocol::RowTrail>);
    // The right-to-be-forgotten plan on screen, if one was asked for.
    let erasure_plan = use_state(|| None::<medallion_protocol::ErasurePlan>);
    // One pending timer per editor, so a gold edit never cancels a rule edit.
    let rules_timer: Rc<RefCell<Option<Timeout>>> = use_mut_ref(|| None);
    // Scenario titles for the picker (the protocol's example list, once per language).
    let catalog = use_memo(*lang, |l| medallion_protocol::example_catalog(*l));
    let gold_timer: Rc<RefCell<Option<Timeout>>> = use_mut_ref(|| None);

    // Every response lands here. `reset_drafts` re-seeds the editors from the engine.
    let handles = Handles {
        view: view.clone(),
        page: page.clone(),
        rules_draft: rules_draft.clone(),
        rules_table: rules_table.clone(),
        gold_draft: gold_draft.clone(),
        banner: banner.clone(),
        export: export.clone(),
        trail: trail.clone(),
        erasure_plan: erasure_plan.clone(),
        selected: selected.clone(),
        travel: travel.clone(),
        corrupt_only: corrupt_only.clone(),
        engine: (*engine).clone(),
    };
    let on_response = {
        let h = handles.clone();
        move |reset_drafts: bool| {
            let h = h.clone();
            Callback::from(move |resp: Response| apply_response(&h, reset_drafts, resp))
        }
    };

    // Answers to actions that add bronze data (drops, re-reads, polls, erasures):
    // the table is shown at its new current version, page one.
    let on_fresh = {
        let h = handles;
        Callback::from(move |resp: Response| {
            if matches!(resp, Response::Snapshot(_)) {
                h.page.set(None);
                h.travel.set(None);
                h.corrupt_only.set(false);
                if let Response::Snapshot(v) = resp {
                    h.view.set(Some(v));
                }
            } else {
                apply_response(&h, false, resp);
            }
        })
    };

    {
        let engine = engine.clone();
        let on_response = on_response.clone();
        let lang = *lang;
        let banner = banner.clone();
        use_effect_with((), move |_| {
            engine.listen_restore_problems(Callback::from(move |m: String| {
                push_banner(
                    &banner,
                    Banner {
                        text: format!("{} {m}", t(lang, "restore_problem")),
                        error: true,
                    },
                )
            }));
            // The saved session if there is one (the state before a reload), else the default example.
            let start = on_response(true);
            let engine2 = engine.clone();
            engine.start(
                crate::session::take_over_requested(),
                Request::LoadExample {
                    example: DEFAULT_EXAMPLE.into(),
                    lang,
                    bronze_mode: None,
                },
                Callback::from(move |r: Response| {
                    // Engine-written texts follow the page's language.
                    let other_lang = matches!(&r, Response::Snapshot(v) if v.lang != lang);
                    start.emit(r);
                    if other_lang {
                        engine2.send(Request::SetLang { lang }, start.clone());
                    }
                }),
            );
        });
    }

    let on_lang = {
        let (engine, lang, on_response) = (engine.clone(), lang.clone(), on_response.clone());
        Callback::from(move |_| {
            let next = if *lang == Lang::En {
                Lang::Ru
            } else {
                Lang::En
            };
            lang.set(next);
            engine.send(Request::SetLang { lang: next }, on_response(true));
        })
    };

    // Loads a scenario (the current one to reload or re-store it), clearing messages.
    let load_example = {
        let (engine, lang, on_response, banner) = (
            engine.clone(),
            lang.clone(),
            on_response.clone(),
            banner.clone(),
        );
        move |example: String, bronze_mode: Option<BronzeMode>| {
            banner.dispatch(BannerAction::Clear);
            engine.send(
                Request::LoadExample {
                    example,
                    lang: *lang,
                    bronze_mode,
                },
                on_response(true),
            );
        }
    };

    let on_bronze_mode = {
        let (load, view) = (load_example.clone(), view.clone());
        Callback::from(move |mode: BronzeMode| load(current_example(&view), Some(mode)))
    };

    let on_example = {
        let (load, lang, view, selected, rules_table) = (
            load_example.clone(),
            lang.clone(),
            view.clone(),
            selected.clone(),
            rules_table.clone(),
        );
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlSelectElement = e.target_unchecked_into();
            let name = el.value();
            if name == current_example(&view) {
                return;
            }
            if !confirm(t(*lang, "confirm_example")) {
                el.set_value(&current_example(&view));
                return;
            }
            selected.set(String::new());
            rules_table.set(String::new());
            load(name, None);
        })
    };

    let on_reload = {
        let (load, lang, view) = (load_example, lang.clone(), view.clone());
        Callback::from(move |_| {
            if confirm(t(*lang, "confirm_reload")) {
                load(current_example(&view), None);
            }
        })
    };

    // Editors send their request once typing pauses; a newer edit replaces the pending one.
    let send_debounced = {
        let (engine, on_response) = (engine.clone(), on_response.clone());
        move |slot: &Rc<RefCell<Option<Timeout>>>, request: Request| {
            let (engine, on_response) = (engine.clone(), on_response.clone());
            let timer = Timeout::new(EDIT_DEBOUNCE_MS, move || {
                engine.send(request, on_response(false))
            });
            *slot.borrow_mut() = Some(timer);
        }
    };

    let on_rules = {
        let (rules_draft, view, send, slot) = (
            rules_draft.clone(),
            view.clone(),
            send_debounced.clone(),
            rules_timer.clone(),
        );
        let rules_table = rules_table.clone();
        Callback::from(move |rules: Vec<Rule>| {
            rules_draft.set(rules.clone());
            let silver_table = view
                .as_ref()
                .and_then(|v| active_silver(v, &rules_table))
                .map(|s| s.name.clone())
                .unwrap_or_default();
            send(
                &slot,
                Request::SetRules {
                    silver_table,
                    rules,
                },
            );
        })
    };

    let on_gold_sql = {
        let (gold_draft, view, send, slot) = (
            gold_draft.clone(),
            view.clone(),
            send_debounced,
            gold_timer.clone(),
        );
        let selected = selected.clone();
        Callback::from(move |sql: String| {
            gold_draft.set(sql.clone());
            let model = view
                .as_ref()
                .and_then(|v| active_gold(v, &selected))
                .map(|g| g.model.name.clone())
                .unwrap_or_default();
            send(&slot, Request::SetGoldSql { model, sql });
        })
    };

    let on_files = {
        let (engine, banner, lang, selected, travel, on_fresh) = (
            engine.clone(),
            banner.clone(),
            lang.clone(),
            selected.clone(),
            travel.clone(),
            on_fresh.clone(),
        );
        Callback::from(move |(table, files): (String, Vec<web_sys::File>)| {
            // A new batch is a new version: show the current one.
            travel.set(None);
            for file in files {
                let (done, banner2, lang, table, selected) = (
                    on_fresh.clone(),
                    banner.clone(),
                    *lang,
                    table.clone(),
                    selected.clone(),
                );
                let name = file.name();
                let name2 = name.clone();
                let msg = format!("{name}: {}", t(lang, "ingest_ok"));
                let table2 = table.clone();
                engine.send_file(
                    Request::Ingest {
                        table,
                        file_name: name,
                        bytes: vec![],
                        options: Default::default(),
                    },
                    file,
                    Callback::from(move |r: Response| match r {
                        Response::Snapshot(v) => {
                            // Flagged records and repeated bytes are worth a word.
                            let mut text = msg.clone();
                            if let Some(b) = v.batches.last() {
                                if b.corrupt_records > 0 {
                                    text.push_str(&format!(
                                        "; {} / {} {}",
                                        b.corrupt_records,
                                        b.records,
                                        t(lang, "flagged")
                                    ));
                                }
                                if let Some(n) = b
                                    .notes
                                    .iter()
                                    .find(|n| n.starts_with("same content"))
                                {
                                    text.push_str(&format!(" ({n})"));
                                }
                            }
                            push_banner(&banner2, Banner { text, error: false });
                            selected.set(table2.clone());
                            done.emit(Response::Snapshot(v));
                        }
                        // Name the file: several may be dropped at once.
                        Response::Error { message } => push_banner(
                            &banner2,
                            Banner {
                                text: format!("{name2}: {message}"),
                                error: true,
                            },
                        ),
                        other => done.emit(other),
                    }),
                );
            }
        })
    };

    let on_select = {
        let (selected, page, travel, corrupt_only) = (
            selected.clone(),
            page.clone(),
            travel.clone(),
            corrupt_only.clone(),
        );
        let (view, rules_table, rules_draft, gold_draft) = (
            view.clone(),
            rules_table.clone(),
            rules_draft.clone(),
            gold_draft.clone(),
        );
        Callback::from(move |name: String| {
            page.set(None);
            travel.set(None);
            corrupt_only.set(false);
            if let Some(v) = view.as_ref() {
                // A silver table's rules and a gold model's SQL follow the selection.
                if let Some(s) = v.silver.iter().find(|s| s.name == name) {
                    rules_table.set(name.clone());
                    rules_draft.set(s.rules.iter().map(|r| r.rule.clone()).collect());
                }
                if let Some(g) = v
                    .gold
                    .iter()
                    .find(|g| format!("gold.{}", g.model.name) == name)
                {
                    gold_draft.set(g.model.sql.clone());
                }
            }
            selected.set(name);
        })
    };

    let on_rules_table = {
        let (view, rules_table, rules_draft) =
            (view.clone(), rules_table.clone(), rules_draft.clone());
        Callback::from(move |name: String| {
            if let Some(s) = view
                .as_ref()
                .and_then(|v| v.silver.iter().find(|s| s.name == name))
            {
                rules_draft.set(s.rules.iter().map(|r| r.rule.clone()).collect());
                rules_table.set(name);
            }
        })
    };

    // One page of a table, at a version, optionally only its corrupt records.
    let fetch = {
        let (engine, on_response) = (engine.clone(), on_response.clone());
        move |table: String, offset: usize, version: Option<u64>, corrupt_only: bool| {
            engine.send(
                Request::GetTable {
                    table,
                    offset,
                    limit: PREVIEW_ROWS,
                    version,
                    corrupt_only,
                },
                on_response(false),
            );
        }
    };
    let on_page = {
        let (fetch, travel, corrupt_only) = (fetch.clone(), travel.clone(), corrupt_only.clone());
        Callback::from(move |(table, offset): (String, usize)| {
            fetch(table, offset, *travel, *corrupt_only)
        })
    };

    // Reading another version or only the corrupt records fetches page one again.
    let refetch = {
        let selected = selected.clone();
        move |version: Option<u64>, corrupt: bool| fetch((*selected).clone(), 0, version, corrupt)
    };
    let on_travel = {
        let (travel, corrupt_only, refetch) =
            (travel.clone(), corrupt_only.clone(), refetch.clone());
        Callback::from(move |v: Option<u64>| {
            travel.set(v);
            refetch(v, *corrupt_only);
        })
    };
    let on_corrupt_only = {
        let (travel, corrupt_only, refetch) = (travel.clone(), corrupt_only.clone(), refetch);
        Callback::from(move |on: bool| {
            corrupt_only.set(on);
            refetch(*travel, on);
        })
    };
    let on_restore = {
        let (engine, on_response, travel, banner, lang) = (
            engine.clone(),
            on_response.clone(),
            travel.clone(),
            banner.clone(),
            lang.clone(),
        );
        Callback::from(move |(table, version): (String, u64)| {
            travel.set(None);
            let msg = format!("{table} v{version}: {}", t(*lang, "restored"));
            engine.send(
                Request::Restore { table, version },
                noting(on_response(false), banner.clone(), move |_| {
                    Some(msg.clone())
                }),
            );
        })
    };
    let on_reread = {
        let reingest = reingest.clone();
        Callback::from(move |b: BatchInfo| reingest.set(Some(b)))
    };
    let close_reingest = {
        let reingest = reingest.clone();
        Callback::from(move |_| reingest.set(None))
    };
    let on_reingest = {
        let (engine, on_fresh, reingest, banner, lang) = (
            engine.clone(),
            on_fresh.clone(),
            reingest.clone(),
            banner.clone(),
            lang.clone(),
        );
        Callback::from(
            move |(batch_id, options, remember): (String, IngestOptions, bool)| {
                let file = (*reingest)
                    .as_ref()
                    .map(|b| b.file_name.clone())
                    .unwrap_or_default();
                reingest.set(None);
                let msg = format!("{file}: {}", t(*lang, "read_again_ok"));
                engine.send(
                    Request::Reingest {
                        batch_id,
                        options,
                        remember,
                    },
                    noting(on_fresh.clone(), banner.clone(), move |_| Some(msg.clone())),
                );
            },
        )
    };
    let on_mode = {
        let (engine, on_response) = (engine.clone(), on_response.clone());
        Callback::from(move |mode: RunMode| {
            engine.send(Request::SetRunMode { mode }, on_response(false))
        })
    };
    let on_run = {
        let (engine, on_response) = (engine.clone(), on_response.clone());
        Callback::from(move |full_refresh: bool| {
            engine.send(Request::Run { full_refresh }, on_response(false))
        })
    };
    let on_replay = {
        let (engine, on_response) = (engine.clone(), on_response.clone());
        Callback::from(move |_| engine.send(Request::Replay, on_response(false)))
    };
    let on_produce = {
        let (engine, on_response, selected, banner, lang) = (
            engine.clone(),
            on_response.clone(),
            selected.clone(),
            banner.clone(),
            lang.clone(),
        );
        Callback::from(move |messages: Vec<KafkaMessage>| {
            let msg = format!("{}: {}", t(*lang, "produced"), messages.len());
            engine.send(
                Request::KafkaProduce {
                    table: (*selected).clone(),
                    messages,
                },
                noting(on_response(false), banner.clone(), move |_| {
                    Some(msg.clone())
                }),
            );
        })
    };
    let on_plan_forget = {
        let (engine, on_response, selected, erasure_plan) = (
            engine.clone(),
            on_response.clone(),
            selected.clone(),
            erasure_plan.clone(),
        );
        Callback::from(move |predicate: String| {
            erasure_plan.set(None);
            engine.send(
                Request::PlanForget {
                    table: (*selected).clone(),
                    predicate,
                },
                on_response(false),
            )
        })
    };
    let on_cancel_forget = {
        let erasure_plan = erasure_plan.clone();
        Callback::from(move |_| erasure_plan.set(None))
    };
    let on_forget = {
        let (engine, on_fresh, selected, banner, lang, erasure_plan) = (
            engine.clone(),
            on_fresh.clone(),
            selected.clone(),
            banner.clone(),
            lang.clone(),
            erasure_plan.clone(),
        );
        Callback::from(move |(predicate, reason, rows): (String, String, usize)| {
            let lang = *lang;
            erasure_plan.set(None);
            engine.send(
                Request::Forget {
                    table: (*selected).clone(),
                    predicate,
                    reason,
                    expected_rows: Some(rows),
                },
                noting(on_fresh.clone(), banner.clone(), move |v| {
                    v.erasures
                        .last()
                        .map(|e| format!("{}: {}: {}", e.table, t(lang, "forgotten"), e.rows))
                }),
            );
        })
    };
    let on_poll = {
        let (engine, on_fresh, selected) = (engine.clone(), on_fresh.clone(), selected.clone());
        Callback::from(move |crash_before_commit: bool| {
            engine.send(
                Request::KafkaPoll {
                    table: (*selected).clone(),
                    max: None,
                    crash_before_commit,
                },
                on_fresh.clone(),
            )
        })
    };

    let on_export = {
        let (engine, on_response, view, rules_table) = (
            engine.clone(),
            on_response.clone(),
            view.clone(),
            rules_table.clone(),
        );
        Callback::from(move |_| {
            if let Some(s) = view.as_ref().and_then(|v| active_silver(v, &rules_table)) {
                engine.send(
                    Request::ExportRules {
                        silver_table: s.name.clone(),
                    },
                    on_response(false),
                );
            }
        })
    };

    let on_trail = {
        let (engine, on_response) = (engine.clone(), on_response.clone());
        Callback::from(move |(table, row): (String, usize)| {
            engine.send(Request::Trail { table, row }, on_response(false));
        })
    };
    let on_anti_patterns = {
        let (engine, on_response, lang) = (engine.clone(), on_response.clone(), lang.clone());
        Callback::from(move |anti_patterns: medallion_protocol::AntiPatterns| {
            if anti_patterns.gold_reads_bronze && !confirm(t(*lang, "shortcut_confirm")) {
                return;
            }
            engine.send(
                Request::SetAntiPatterns { anti_patterns },
                on_response(false),
            );
        })
    };
    let close_trail = {
        let trail = trail.clone();
        Callback::from(move |_| trail.set(None))
    };

    let close_export = {
        let export = export.clone();
        Callback::from(move |_| export.set(None))
    };
    let lang_v = *lang;
    let status_bar = html! {
        <EngineStatusBar engine={(*engine).clone()} lang={lang_v} on_restored={on_response(false)} />
    };
    // The page's skeleton is drawn before the engine has loaded (it runs in a
    // worker and takes a while to download and compile).
    let Some(v) = (*view).clone() else {
        return html! {
            <div class="app">
                <header class="topbar">
                    <h1>{ t(lang_v, "app_title") }</h1>
                    <span class="tagline">{ t(lang_v, "tagline") }</span>
                </header>
                { status_bar }
                { banner_html(&banner) }
                <div class="loading" id="loading-example">{ t(lang_v, "loading") }</div>
                <div class="skeleton" aria-hidden="true"><div></div><div></div><div></div><div></div></div>
            </div>
        };
    };

    let table_view = (*page)
        .clone()
        .filter(|p| p.name == *selected)
        .or_else(|| v.table(&selected).cloned());

    // A file dropped outside a bronze card must not make the browser open it
    // (that would leave the page and lose the session).
    let ignore_drag = Callback::from(|e: DragEvent| e.prevent_default());
    let stray_drop = {
        let banner = banner.clone();
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            push_banner(
                &banner,
                Banner {
                    text: t(lang_v, "drop_on_bronze").into(),
                    error: true,
                },
            );
        })
    };
    html! {
        <div class="app" ondragover={ignore_drag} ondrop={stray_drop}>
            <header class="topbar">
                <h1>{ t(lang_v, "app_title") }</h1>
                <select class="example-picker" id="example-picker" title={t(lang_v, "example")} onchange={on_example}>
                    { for catalog.iter().map(|(name, title)| html! {
                        <option value={*name} selected={*name == v.example}>{ title }</option>
                    }) }
                </select>
                <span class="tagline">{ t(lang_v, "tagline") }</span>
                <span class="spacer"></span>
                <span class={classes!("run-status", (!v.run.ok).then_some("bad"))} id="run-status">
                    { format!("{} {:.0} {}", t(lang_v, "recomputed"), v.run.duration_ms, t(lang_v, "ms")) }
                </span>
                <SessionBar engine={(*engine).clone()} lang={lang_v} />
                <button class="ghost" onclick={on_reload}>{ t(lang_v, "reload") }</button>
                <button class="ghost" id="lang-switch" onclick={on_lang}>{ t(lang_v, "lang_switch") }</button>
            </header>
            { status_bar }
            { banner_html(&banner) }
            if let Some(n) = &v.notice {
                <div class="banner warn" id="notice">{ n }</div>
            }
            if !v.run.ok {
                <div class="banner error stale" id="stale-banner">
                    <div>{ if v.silver.iter().all(|s| s.rules.iter().all(|r| r.error.is_none())) && v.run.errors.is_empty() { t(lang_v, "stale_gold") } else { t(lang_v, "stale") } }</div>
                    { for error_lines(&v).into_iter().map(|e| html!{ <div class="mono">{ e }</div> }) }
                </div>
            }
            <main class="workspace">
                <section class="left">
                    <RunBar view={v.clone()} lang={lang_v} on_mode={on_mode} on_run={on_run} on_replay={on_replay} />
                    <PipelineStrip view={v.clone()} lang={lang_v} selected={(*selected).clone()} on_select={on_select} on_files={on_files} on_bronze_mode={on_bronze_mode} />
                    if let Some(tv) = table_view {
                        <TablePanel
                            table={tv}
                            lang={lang_v}
                            batches={v.batches.clone()}
                            gold={active_gold(&v, &selected).cloned()}
                            gold_draft={(*gold_draft).clone()}
                            on_gold_sql={on_gold_sql}
                            on_page={on_page}
                            versions={v.history.get(&*selected).cloned().unwrap_or_default()}
                            viewing={*travel}
                            on_travel={on_travel}
                            on_restore={on_restore}
                            on_corrupt_only={on_corrupt_only}
                            on_reread={on_reread}
                            topic={v.topics.iter().find(|tp| tp.table == *selected).cloned()}
                            kafka_sample={if v.example == "kafka_orders" { KAFKA_ORDERS_SAMPLE } else { KAFKA_SAMPLE }}
                            on_produce={on_produce}
                            on_poll={on_poll}
                            erasures={v.erasures.clone()}
                            on_forget={on_forget}
                            on_plan_forget={on_plan_forget}
                            on_cancel_forget={on_cancel_forget}
                            erasure_plan={(*erasure_plan).clone()}
                            on_trail={on_trail}
                            anti_patterns={v.anti_patterns}
                            on_anti_patterns={on_anti_patterns}
                        />
                    }
                </section>
                <section class="right">
                    <RulesPanel
                        silver={active_silver(&v, &rules_table).cloned()}
                        silver_tables={v.silver.iter().map(|s| s.name.clone()).collect::<Vec<_>>()}
                        on_table={on_rules_table}
                        draft={(*rules_draft).clone()}
                        lang={lang_v}
                        on_change={on_rules}
                        on_export={on_export}
                        history={v.run_history.clone()}
                        columns={active_silver(&v, &rules_table)
                            .and_then(|s| v.table(&s.name))
                            .map(|tv| tv.columns.iter().filter(|c| !c.name.starts_with('_')).map(|c| (c.name.clone(), c.data_type.clone())).collect::<Vec<_>>())
                            .unwrap_or_default()}
                    />
                    <ChecksPanel checks={v.checks.clone()} history={v.run_history.clone()} lang={lang_v} />
                </section>
            </main>
            if let Some(b) = (*reingest).clone() {
                <ReingestDialog batch={b} lang={lang_v} on_submit={on_reingest} on_close={close_reingest} />
            }
            if let Some(tr) = (*trail).clone() {
                <TrailDialog trail={tr} lang={lang_v} on_close={close_trail} />
            }
            if let Some(md) = (*export).clone() {
                <div class="modal-backdrop">
                    <div class="modal">
                        <p>{ t(lang_v, "copy_hint") }</p>
                        <textarea class="mono export" readonly=true value={md} />
                        <button onclick={close_export}>{ t(lang_v, "close") }</button>
                    </div>
                </div>
            }
        </div>
    }
}

/// The example loaded now (the default before the first answer).
fn current_example(view: &UseStateHandle<Option<PipelineView>>) -> String {
    view.as_ref()
        .map(|v| v.example.clone())
        .filter(|e| !e.is_empty())
        .unwrap_or_else(|| DEFAULT_EXAMPLE.into())
}

/// The silver table the rule registry panel shows: the chosen one, else the first.
fn active_silver<'a>(v: &'a PipelineView, chosen: &str) -> Option<&'a SilverView> {
    v.silver
        .iter()
        .find(|s| s.name == chosen)
        .or_else(|| v.silver.first())
}

/// The gold model whose SQL is edited: the selected gold table's, else the first.
fn active_gold<'a>(v: &'a PipelineView, selected: &str) -> Option<&'a GoldView> {
    v.gold
        .iter()
        .find(|g| format!("gold.{}", g.model.name) == selected)
        .or_else(|| v.gold.first())
}

/// Asks the browser's confirm dialog; `false` if it cannot be shown.
pub fn confirm(text: &str) -> bool {
    gloo::utils::window()
        .confirm_with_message(text)
        .unwrap_or(false)
}

/// `done`, after a success note `note(view)` when the engine answers with a snapshot.
fn noting(
    done: Callback<Response>,
    banner: BannerHandle,
    note: impl Fn(&PipelineView) -> Option<String> + 'static,
) -> Callback<Response> {
    Callback::from(move |r: Response| {
        let text = match &r {
            Response::Snapshot(v) => note(v),
            _ => None,
        };
        done.emit(r);
        // A success replaces older messages (they were about earlier steps).
        if let Some(text) = text {
            banner.dispatch(BannerAction::Replace(Banner { text, error: false }));
        }
    })
}

/// Adds a message, so a refused file's message is not hidden by the next
/// file's success.
fn push_banner(banner: &BannerHandle, b: Banner) {
    banner.dispatch(BannerAction::Push(b));
}

fn banner_html(banner: &BannerHandle) -> Html {
    html! {
        { for banner.0.iter().enumerate().map(|(i, b)| {
            let close = {
                let banner = banner.clone();
                Callback::from(move |_| banner.dispatch(BannerAction::Remove(i)))
            };
            html! {
                <div class={classes!("banner", if b.error { "error" } else { "info" })} id={format!("message-banner-{i}")}>
                    <span>{ b.text.clone() }</span>
                    <button class="ghost small" onclick={close}>{ "×" }</button>
                </div>
            }
        }) }
    }
}

/// "F2: message" and "gold.x: message" for every error of the last run.
fn error_lines(v: &PipelineView) -> Vec<String> {
    let mut out: Vec<String> = v
        .silver
        .iter()
        .flat_map(|s| {
            s.rules
                .iter()
                .filter_map(|r| r.error.as_ref().map(|e| format!("{}: {e}", r.rule.id)))
        })
        .collect();
    out.extend(v.gold.iter().filter_map(|g| {
        g.error
            .as_ref()
            .map(|e| format!("gold.{}: {e}", g.model.name))
    }));
    out.extend(v.run.errors.iter().cloned());
    out
}

/// The state handles a response updates.
#[derive(Clone)]
struct Handles {
    view: UseStateHandle<Option<PipelineView>>,
    page: UseStateHandle<Option<TableView>>,
    rules_draft: UseStateHandle<Vec<Rule>>,
    rules_table: UseStateHandle<String>,
    gold_draft: UseStateHandle<String>,
    banner: BannerHandle,
    export: UseStateHandle<Option<String>>,
    trail: UseStateHandle<Option<medallion_protocol::RowTrail>>,
    erasure_plan: UseStateHandle<Option<medallion_protocol::ErasurePlan>>,
    selected: UseStateHandle<String>,
    travel: UseStateHandle<Option<u64>>,
    corrupt_only: UseStateHandle<bool>,
    engine: Engine,
}

/// Applies one engine response to the UI state.
fn apply_response(h: &Handles, reset_drafts: bool, resp: Response) {
    match resp {
        Response::Snapshot(v) => {
            // A new example opens on its first silver table.
            let selected = if v.table(&h.selected).is_some() {
                (*h.selected).clone()
            } else {
                let first = v
                    .silver
                    .first()
                    .map(|s| s.name.clone())
                    .or_else(|| v.tables.first().map(|t| t.name.clone()))
                    .unwrap_or_default();
                h.selected.set(first.clone());
                first
            };
            if reset_drafts {
                h.rules_draft.set(
                    active_silver(&v, &h.rules_table)
                        .map(|s| s.rules.iter().map(|r| r.rule.clone()).collect())
                        .unwrap_or_default(),
                );
                h.gold_draft.set(
                    active_gold(&v, &selected)
                        .map(|g| g.model.sql.clone())
                        .unwrap_or_default(),
                );
            }
            // Stay on the page (and version, and filter) the learner was
            // reading: fetch it again from the new results.
            let travel = (*h.travel).filter(|ver| {
                v.history
                    .get(&*h.selected)
                    .is_some_and(|hs| hs.iter().any(|x| x.version == *ver && x.readable))
            });
            if travel != *h.travel {
                h.travel.set(travel);
            }
            match (*h.page).clone() {
                Some(old)
                    if (old.offset > 0 || travel.is_some() || *h.corrupt_only)
                        && v.table(&old.name).is_some() =>
                {
                    let page = h.page.clone();
                    h.engine.send(
                        Request::GetTable {
                            table: old.name,
                            offset: old.offset,
                            limit: PREVIEW_ROWS,
                            version: travel,
                            corrupt_only: *h.corrupt_only,
                        },
                        Callback::from(move |r: Response| {
                            if let Response::Table(t) = r {
                                page.set(Some(t));
                            }
                        }),
                    );
                }
                _ => h.page.set(None),
            }
            h.view.set(Some(v));
        }
        Response::Table(tv) => h.page.set(Some(tv)),
        Response::Text { text } => h.export.set(Some(text)),
        Response::Trail(tr) => h.trail.set(Some(tr)),
        Response::ErasurePlan(plan) => h.erasure_plan.set(Some(plan)),
        Response::Error { message } => push_banner(
            &h.banner,
            Banner {
                text: message,
                error: true,
            },
        ),
    }
}
