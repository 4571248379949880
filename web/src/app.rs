//! Top-level component: holds the engine and the [`State`] reducer, turns
//! the panels' callbacks into requests and actions, and lays the panels out.
//! Panels get what they draw down and hand callbacks up (as in Yew's
//! function_todomvc example).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use gloo::timers::callback::Timeout;
use medallion_protocol::{
    AntiPattern, AntiPatterns, BatchInfo, BronzeMode, IngestOptions, KafkaMessage, LabEvent, Lang,
    PipelineView, Request, Response, Rule, RunMode, TableName, DEFAULT_EXAMPLE, PREVIEW_ROWS,
};
use wasm_bindgen::JsCast;
use yew::prelude::*;

use crate::components::banners::{Messages, RunNotices, Stale};
use crate::components::batches::ReingestDialog;
use crate::components::checks::ChecksPanel;
use crate::components::export::ExportDialog;
use crate::components::kafka;
use crate::components::lab::LabPanel;
use crate::components::pii::PiiPanel;
use crate::components::pipeline::PipelineStrip;
use crate::components::rules::{RulesPanel, When};
use crate::components::runbar::RunBar;
use crate::components::status::EngineStatusBar;
use crate::components::table::TablePanel;
use crate::components::topbar::{Loaded, TopBar};
use crate::components::trail::TrailDialog;
use crate::components::Locked;
use crate::engine::{Engine, EngineStatus, SessionState};
use crate::i18n::t;
use crate::state::{Action, Banner, State};
use crate::ui::{confirm, initial_lang};

/// Delay between the last keystroke in an editor and the rerun it triggers.
const EDIT_DEBOUNCE_MS: u32 = 300;

type Dispatcher = UseReducerDispatcher<State>;

/// An editor's pending send: its timer, and whether it has fired.
type EditSlot = Rc<RefCell<Option<(Timeout, Rc<Cell<bool>>)>>>;

/// The page: creates the engine and tells every panel whether this tab may
/// change the lake ([`Locked`]: not while another tab owns the saved session).
#[function_component(App)]
pub fn app() -> Html {
    let engine = use_memo((), |_| Engine::new());
    // Whether another tab owns the session; whether the tables are being restored.
    let read_only = use_state_eq(|| false);
    let restoring = use_state_eq(|| false);
    let loading = use_state_eq(|| false);
    {
        let (engine, read_only, restoring, loading) =
            (engine.clone(), read_only.clone(), restoring.clone(), loading.clone());
        use_effect_with((), move |_| {
            engine.listen_session(Callback::from(move |s: SessionState| {
                read_only.set(s.is_read_only());
            }));
            let weak = Rc::downgrade(&engine);
            engine.listen(Callback::from(move |s: EngineStatus| {
                restoring.set(s.restoring().is_some());
                loading.set(weak.upgrade().is_some_and(|e| e.loading_scenario()));
            }));
        });
    }
    let locked = if *read_only {
        Locked::ReadOnly
    } else if *restoring {
        Locked::Restoring
    } else if *loading {
        Locked::Loading
    } else {
        Locked::Open
    };
    html! {
        <ContextProvider<Locked> context={locked}>
            <Playground engine={(*engine).clone()} />
        </ContextProvider<Locked>>
    }
}

#[derive(Properties, PartialEq)]
struct PlaygroundProps {
    engine: Engine,
}

#[function_component(Playground)]
fn playground(p: &PlaygroundProps) -> Html {
    let engine = use_memo((), {
        let engine = p.engine.clone();
        move |_| engine
    });
    let state = use_reducer(|| State::new(initial_lang()));
    let dispatch = state.dispatcher();
    // One pending timer per editor, so a gold edit never cancels a rule edit.
    // With it, whether it has fired (an edit not sent yet counts as unsaved).
    let rules_timer: EditSlot = use_mut_ref(|| None);
    let gold_timer: EditSlot = use_mut_ref(|| None);
    let lang = state.lang;

    // Every answer lands here. `reseed` re-seeds the editors from a snapshot.
    let answer = {
        let (engine, state) = (engine.clone(), state.clone());
        move |reseed_drafts: bool| {
            let (engine, state) = (engine.clone(), state.clone());
            Callback::from(move |response: Response| {
                // Stay on the page (and version, and filter) the learner was
                // reading: fetch it again from the new results.
                if let Some(request) = match &response {
                    Response::Snapshot(v) => state.page_refetch(v),
                    _ => None,
                } {
                    let dispatch = state.dispatcher();
                    engine.send(
                        request,
                        Callback::from(move |r: Response| {
                            if matches!(r, Response::Table(_)) {
                                dispatch.dispatch(answered(r));
                            }
                        }),
                    );
                }
                state.dispatch(Action::Answer {
                    response,
                    reseed_drafts,
                });
            })
        }
    };
    // Answers to actions that add bronze data (drops, re-reads, polls, erasures):
    // the table is shown at its new current version, page one.
    let fresh = {
        let (answer, dispatch) = (answer(false), dispatch.clone());
        Callback::from(move |r: Response| match r {
            Response::Snapshot(v) => dispatch.dispatch(Action::Fresh(v)),
            other => answer.emit(other),
        })
    };
    {
        let (engine, answer, dispatch) = (engine.clone(), answer(true), dispatch.clone());
        use_effect_with((), move |_| {
            // Files that were on their way into bronze when the page was
            // reloaded or left: not in the saved session, so say so.
            let lost = crate::session::lost_ingests();
            if !lost.is_empty() {
                dispatch.dispatch(Action::PushBanner(Banner {
                    text: format!("{} {}", t(lang, "lost_on_reload"), lost.join(", ")),
                    error: true,
                }));
            }
            // A run's result is shown as soon as it is computed, its new
            // versions marked as being written until the answer comes.
            let previews = dispatch.clone();
            // A loaded scenario's preview brings its rules to the editors.
            engine.set_on_preview(Callback::from(move |(v, starts_over)| {
                previews.dispatch(Action::Answer {
                    response: Response::Snapshot(v),
                    reseed_drafts: starts_over,
                })
            }));
            engine.listen_restore_problems(Callback::from(move |m: String| {
                dispatch.dispatch(Action::PushBanner(Banner {
                    text: format!("{} {m}", t(lang, "restore_problem")),
                    error: true,
                }))
            }));
            // The saved session if there is one (the state before a reload), else the default example.
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
                    answer.emit(r);
                    if other_lang {
                        engine2.send(Request::SetLang { lang }, answer.clone());
                    }
                }),
            );
        });
    }

    // Escape closes the open dialog (row trail, markdown export, Read again).
    {
        let dispatch = dispatch.clone();
        use_effect_with((), move |_| {
            let listener =
                gloo::events::EventListener::new(&gloo::utils::window(), "keydown", move |e| {
                    if e.dyn_ref::<web_sys::KeyboardEvent>()
                        .is_some_and(|k| k.key() == "Escape")
                    {
                        for close in [
                            Action::CloseTrail,
                            Action::CloseExport,
                            Action::CloseReingest,
                        ] {
                            dispatch.dispatch(close);
                        }
                    }
                });
            move || drop(listener)
        });
    }

    // Changes refused while restoring or in a read-only tab: said in the
    // page's language; the editors then show the state in effect again.
    {
        let (engine, answer) = (engine.clone(), answer(true));
        use_effect_with(lang, move |lang| {
            engine.set_refusals(
                crate::engine::Refusals {
                    restoring: t(*lang, "refused_restoring").into(),
                    read_only: t(*lang, "refused_read_only").into(),
                    taken_over: t(*lang, "cancelled_taken_over").into(),
                    lang: *lang,
                },
                answer,
            );
        });
    }

    let on_lang = {
        let (engine, dispatch, answer) = (engine.clone(), dispatch.clone(), answer(true));
        Callback::from(move |()| {
            let next = if lang == Lang::En { Lang::Ru } else { Lang::En };
            crate::ui::remember_lang(next);
            dispatch.dispatch(Action::SetLang(next));
            engine.send(Request::SetLang { lang: next }, answer.clone());
        })
    };

    // Loads a scenario (`other`: not the current one), clearing messages.
    let load_example = {
        let (engine, dispatch, answer) = (engine.clone(), dispatch.clone(), answer(true));
        move |example: String, bronze_mode: Option<BronzeMode>, other: bool| {
            dispatch.dispatch(Action::Loading { other });
            engine.send(
                Request::LoadExample {
                    example,
                    lang,
                    bronze_mode,
                },
                answer.clone(),
            );
        }
    };
    let on_example = {
        let load = load_example.clone();
        Callback::from(move |name: String| load(name, None, true))
    };
    let on_reload = {
        let (load, example) = (load_example.clone(), state.example());
        Callback::from(move |()| load(example.clone(), None, false))
    };
    let on_bronze_mode = {
        let example = state.example();
        Callback::from(move |mode: BronzeMode| load_example(example.clone(), Some(mode), false))
    };

    // Editors send their request once typing pauses; a newer edit replaces
    // the pending one. An edit that is complete as it is (a switch, a
    // choice) goes at once, in place of the pending one (it holds the
    // typed text too).
    let send_debounced = {
        let (engine, answer) = (engine.clone(), answer(false));
        move |slot: &EditSlot, request: Request, when: When| {
            // The edit it replaces (cancelled when its timer is dropped) is no
            // longer waiting; this one is, until it is sent.
            let replaced = slot
                .borrow()
                .as_ref()
                .is_some_and(|(_, fired)| !fired.get());
            if when == When::Now {
                if let Some((timer, _)) = slot.borrow_mut().take() {
                    timer.cancel();
                }
                if replaced {
                    engine.edit_waiting(false);
                }
                engine.send(request, answer.clone());
                return;
            }
            if !replaced {
                engine.edit_waiting(true);
            }
            let fired = Rc::new(Cell::new(false));
            let (engine, answer, done) = (engine.clone(), answer.clone(), fired.clone());
            let timer = Timeout::new(EDIT_DEBOUNCE_MS, move || {
                done.set(true);
                engine.edit_waiting(false);
                engine.send(request, answer);
            });
            *slot.borrow_mut() = Some((timer, fired));
        }
    };
    let on_rules = {
        let (dispatch, send, slot) = (dispatch.clone(), send_debounced.clone(), rules_timer);
        let silver_table = state
            .active_silver()
            .map(|s| s.name.to_string())
            .unwrap_or_default();
        Callback::from(move |(rules, when): (Vec<Rule>, When)| {
            dispatch.dispatch(Action::EditRules(rules.clone()));
            let silver_table = silver_table.clone();
            send(
                &slot,
                Request::SetRules {
                    silver_table,
                    rules,
                },
                when,
            );
        })
    };
    let on_gold_sql = {
        let (dispatch, send, slot) = (dispatch.clone(), send_debounced, gold_timer);
        let model = state
            .active_gold()
            .map(|g| g.model.name.clone())
            .unwrap_or_default();
        Callback::from(move |sql: String| {
            dispatch.dispatch(Action::EditGoldSql(sql.clone()));
            let model = model.clone();
            send(&slot, Request::SetGoldSql { model, sql }, When::AfterTyping);
        })
    };

    let on_files = {
        let (engine, dispatch, fresh) = (engine.clone(), dispatch.clone(), fresh.clone());
        Callback::from(move |(table, files): (String, Vec<web_sys::File>)| {
            // A new batch is a new version: show the current one, of the
            // table the file goes to (its preview fills it in; the answer
            // does not move the page: the learner may be elsewhere by then).
            dispatch.dispatch(Action::Travel(None));
            if let Ok(table) = table.parse() {
                dispatch.dispatch(Action::Select(table));
            }
            for file in files {
                let name = file.name();
                let done = ingested(&dispatch, &fresh, lang, &name);
                engine.send_file(
                    Request::Ingest {
                        table: table.clone(),
                        file_name: name,
                        bytes: vec![],
                        options: Default::default(),
                    },
                    file,
                    done,
                );
            }
        })
    };

    let on_select = acting(&dispatch, Action::Select);
    let on_rules_table = acting(&dispatch, Action::SetRulesTable);

    // One page of a table, at a version, optionally only its corrupt records.
    let fetch = {
        let (engine, answer) = (engine.clone(), answer(false));
        move |table: TableName, offset: usize, version: Option<u64>, corrupt_only: bool| {
            engine.send(
                Request::GetTable {
                    table,
                    offset,
                    limit: PREVIEW_ROWS,
                    version,
                    corrupt_only,
                },
                answer.clone(),
            );
        }
    };
    let (travel, corrupt_only, selected) =
        (state.travel, state.corrupt_only, state.selected.clone());
    let on_page = {
        let fetch = fetch.clone();
        Callback::from(move |(table, offset): (TableName, usize)| {
            fetch(table, offset, travel, corrupt_only)
        })
    };
    // Reading another version or only the corrupt records fetches page one again.
    let on_travel = {
        let (fetch, dispatch, table) = (fetch.clone(), dispatch.clone(), selected.clone());
        Callback::from(move |v: Option<u64>| {
            dispatch.dispatch(Action::Travel(v));
            if let Some(table) = &table {
                fetch(table.clone(), 0, v, corrupt_only);
            }
        })
    };
    let on_corrupt_only = {
        let (dispatch, table) = (dispatch.clone(), selected.clone());
        Callback::from(move |on: bool| {
            dispatch.dispatch(Action::CorruptOnly(on));
            if let Some(table) = &table {
                fetch(table.clone(), 0, travel, on);
            }
        })
    };
    let on_restore = {
        let (engine, dispatch, answer) = (engine.clone(), dispatch.clone(), answer(false));
        Callback::from(move |(table, version): (TableName, u64)| {
            dispatch.dispatch(Action::Travel(None));
            let msg = format!("{table} v{version}: {}", t(lang, "restored"));
            let done = noting(answer.clone(), dispatch.clone(), move |_| Some(msg.clone()));
            engine.send(Request::Restore { table, version }, done);
        })
    };
    let on_reread = acting(&dispatch, Action::OpenReingest);
    let close_reingest = acting(&dispatch, |()| Action::CloseReingest);
    let on_reingest = {
        let (engine, dispatch, fresh) = (engine.clone(), dispatch.clone(), fresh.clone());
        let file = state
            .reingest
            .as_ref()
            .map(|b: &BatchInfo| b.file_name.clone())
            .unwrap_or_default();
        Callback::from(
            move |(batch_id, options, remember): (String, IngestOptions, bool)| {
                dispatch.dispatch(Action::CloseReingest);
                let msg = format!("{file}: {}", t(lang, "read_again_ok"));
                engine.send(
                    Request::Reingest {
                        batch_id,
                        options,
                        remember,
                    },
                    noting(fresh.clone(), dispatch.clone(), move |_| Some(msg.clone())),
                );
            },
        )
    };
    let on_mode = sending(&engine, &answer(false), |mode: RunMode| {
        Request::SetRunMode { mode }
    });
    let on_run = sending(&engine, &answer(false), |full_refresh: bool| Request::Run {
        full_refresh,
    });
    let on_replay = sending(&engine, &answer(false), |()| Request::Replay);
    let on_trail = sending(
        &engine,
        &answer(false),
        |(table, row): (TableName, usize)| Request::Trail { table, row },
    );
    // The Kafka and erasure requests name the selected (bronze) table.
    let selected_text = selected.as_ref().map(|t| t.to_string()).unwrap_or_default();
    let on_poll = {
        let (engine, dispatch, fresh, table) = (
            engine.clone(),
            dispatch.clone(),
            fresh.clone(),
            selected_text.clone(),
        );
        Callback::from(move |crash_before_commit: bool| {
            // What the poll did, in its micro-batch's own words (offsets
            // committed, or to be delivered again after the crash). A poll
            // that wrote no batch has the notice say why instead.
            let done = noting(fresh.clone(), dispatch.clone(), move |v| {
                let b = v.batches.last().filter(|_| v.notice.is_none())?;
                Some(format!(
                    "{}: {} {}; {}",
                    b.file_name,
                    b.records,
                    t(lang, "progress_records"),
                    b.notes.join("; ")
                ))
            });
            engine.send(
                Request::KafkaPoll {
                    table: table.clone(),
                    max: None,
                    crash_before_commit,
                },
                done,
            );
        })
    };
    let on_produce = {
        let (engine, dispatch, answer, table) = (
            engine.clone(),
            dispatch.clone(),
            answer(false),
            selected_text.clone(),
        );
        Callback::from(move |messages: Vec<KafkaMessage>| {
            let msg = format!("{}: {}", t(lang, "produced"), messages.len());
            let done = noting(answer.clone(), dispatch.clone(), move |_| Some(msg.clone()));
            let table = table.clone();
            engine.send(Request::KafkaProduce { table, messages }, done);
        })
    };
    let on_plan_forget = {
        let (engine, dispatch, answer, table) = (
            engine.clone(),
            dispatch.clone(),
            answer(false),
            selected_text.clone(),
        );
        Callback::from(move |predicate: String| {
            dispatch.dispatch(Action::CloseErasurePlan);
            let table = table.clone();
            engine.send(Request::PlanForget { table, predicate }, answer.clone())
        })
    };
    let on_cancel_forget = acting(&dispatch, |()| Action::CloseErasurePlan);
    let on_forget = {
        let (engine, dispatch, fresh, table) = (
            engine.clone(),
            dispatch.clone(),
            fresh,
            selected_text.clone(),
        );
        Callback::from(
            move |(predicate, reason, rows, state): (String, String, usize, String)| {
                dispatch.dispatch(Action::CloseErasurePlan);
                let done = noting(fresh.clone(), dispatch.clone(), move |v| {
                    v.erasures
                        .last()
                        .map(|e| format!("{}: {}: {}", e.table, t(lang, "forgotten"), e.rows))
                });
                let request = Request::Forget {
                    table: table.clone(),
                    predicate,
                    reason,
                    expected_rows: Some(rows),
                    plan_state: Some(state),
                };
                engine.send(request, done);
            },
        )
    };
    let on_export = match state.active_silver() {
        Some(s) => {
            let silver_table = s.name.to_string();
            sending(&engine, &answer(false), move |()| Request::ExportRules {
                silver_table: silver_table.clone(),
            })
        }
        None => Callback::noop(),
    };
    let on_anti_patterns = {
        let (engine, answer) = (engine.clone(), answer(false));
        Callback::from(move |anti_patterns: AntiPatterns| {
            if anti_patterns.gold_reads_bronze && !confirm(t(lang, "shortcut_confirm")) {
                return;
            }
            engine.send(Request::SetAntiPatterns { anti_patterns }, answer.clone());
        })
    };

    let on_lab = sending(&engine, &answer(false), |on: Vec<AntiPattern>| {
        Request::SetLab { on }
    });
    // A refusal is also shown in the lab, where the instructor is looking.
    let lab_done = {
        let (done, dispatch) = (answer(false), state.dispatcher());
        Callback::from(move |r: Response| {
            let notice = match &r {
                Response::Error { message } => Some(message.clone()),
                _ => None,
            };
            dispatch.dispatch(Action::LabNotice(notice));
            done.emit(r)
        })
    };
    let on_lab_event = sending(&engine, &lab_done, |event: LabEvent| Request::LabEvent {
        event,
    });

    // The right to be forgotten three ways: the panel's requests as they are.
    let on_pii = sending(&engine, &answer(false), |r: Request| r);

    let instructor = use_state(crate::ui::instructor_mode);
    let drawn = use_first_draw_in_steps(state.view.is_some());
    let on_instructor = {
        let instructor = instructor.clone();
        Callback::from(move |()| {
            crate::ui::remember_instructor(!*instructor);
            instructor.set(!*instructor);
        })
    };
    let top_bar = html! {
        <TopBar lang={lang} engine={(*engine).clone()} instructor={*instructor} on_instructor={on_instructor}
            loaded={state.view.as_ref().map(|v| Loaded { example: v.example.clone(), empty: v.tables.is_empty(), run: v.run.clone() })}
            on_example={on_example} on_reload={on_reload} on_lang={on_lang} />
    };
    let status_bar = html! {
        <EngineStatusBar engine={(*engine).clone()} lang={lang} on_restored={answer(true)} />
    };
    let messages = html! {
        <Messages banners={state.banners.clone()} on_close={acting(&dispatch, Action::RemoveBanner)} />
    };
    // The page's skeleton is drawn before the engine has loaded (it runs in a
    // worker and takes a while to download and compile).
    let Some(v) = &state.view else {
        return html! {
            <div class="app">
                { top_bar }
                { status_bar }
                { messages }
                <div class="loading" id="loading-example">{ t(lang, "loading") }</div>
                <div class="skeleton" aria-hidden="true"><div></div><div></div><div></div><div></div></div>
            </div>
        };
    };

    // Nothing loaded (the very first load was cancelled): say how to go on.
    if v.tables.is_empty() {
        return html! {
            <div class="app">
                { top_bar }
                { status_bar }
                { messages }
                <div class="loading" id="no-scenario">{ t(lang, "no_scenario") }</div>
            </div>
        };
    }

    // A file dropped outside a bronze card must not make the browser open it
    // (that would leave the page and lose the session).
    let ignore_drag = Callback::from(|e: DragEvent| e.prevent_default());
    let stray_drop = {
        let dispatch = dispatch.clone();
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            dispatch.dispatch(Action::PushBanner(Banner {
                text: t(lang, "drop_on_bronze").into(),
                error: true,
            }));
        })
    };
    html! {
        <div class={classes!("app", instructor.then_some("instructor"))} ondragover={ignore_drag} ondrop={stray_drop}>
            { top_bar }
            { status_bar }
            { messages }
            <RunNotices lang={lang} notice={v.notice.clone()} stale={Stale::of(v)} />
            <main class="workspace">
                <section class="left">
                    <LabPanel lab={v.lab.clone()} lang={lang} instructor={*instructor} on_set={on_lab} on_event={on_lab_event} notice={state.lab_notice.clone()} />
                    <PiiPanel view={state.pii.clone()} lang={lang} on_request={on_pii} />
                    <RunBar run_mode={v.run_mode} checkpoints={v.checkpoints.clone()} replay={v.replay.clone()} state={v.state.clone()}
                        lang={lang} on_mode={on_mode} on_run={on_run} on_replay={on_replay} />
                    <PipelineStrip tables={v.tables.clone()} silver={v.silver.clone()} gold={v.gold.clone()}
                        bronze_modes={v.bronze_modes.clone()} bronze_mode={v.bronze_mode}
                        read_as_utc={v.read_as_utc.clone()} quarantine_open={v.quarantine_open}
                        not_refreshed={v.run.not_refreshed.clone()}
                        lang={lang} selected={selected.clone()} on_select={on_select} on_files={on_files} on_bronze_mode={on_bronze_mode} />
                    if let Some(tv) = state.table_view().filter(|_| drawn >= DrawStep::Table) {
                        <TablePanel
                            // The rows are the preview's, not a page read from the version before it.
                            saving={v.saving.contains(&tv.name) && tv.version.is_none()}
                            table={tv}
                            lang={lang}
                            batches={v.batches.clone()}
                            gold={state.active_gold().cloned()}
                            gold_draft={state.gold_draft.clone()}
                            on_gold_sql={on_gold_sql}
                            on_page={on_page}
                            versions={selected.as_ref().and_then(|t| v.history.get(t)).cloned().unwrap_or_default()}
                            viewing={travel}
                            on_travel={on_travel}
                            on_restore={on_restore}
                            corrupt_only={state.corrupt_only}
                            on_corrupt_only={on_corrupt_only}
                            on_reread={on_reread}
                            topic={v.topics.iter().find(|tp| Some(&tp.table) == selected.as_ref()).cloned()}
                            kafka_sample={kafka::sample(&v.example)}
                            on_produce={on_produce}
                            on_poll={on_poll}
                            erasures={v.erasures.clone()}
                            on_forget={on_forget}
                            on_plan_forget={on_plan_forget}
                            on_cancel_forget={on_cancel_forget}
                            erasure_plan={state.erasure_plan.clone()}
                            on_trail={on_trail}
                            anti_patterns={v.anti_patterns.clone()}
                            on_anti_patterns={on_anti_patterns}
                        />
                    }
                </section>
                <section class="right">
                  if drawn >= DrawStep::All {
                    <RulesPanel
                        silver={state.active_silver().cloned()}
                        silver_tables={v.silver.iter().map(|s| s.name.clone()).collect::<Vec<_>>()}
                        on_table={on_rules_table}
                        draft={state.rules_draft.clone()}
                        lang={lang}
                        on_change={on_rules}
                        on_export={on_export}
                        history={v.run_history.clone()}
                        columns={state.rule_columns()}
                    />
                    <ChecksPanel checks={v.checks.clone()} history={v.run_history.clone()} lang={lang} />
                  }
                </section>
            </main>
            if let Some(b) = state.reingest.clone() {
                <ReingestDialog batch={b} lang={lang} on_submit={on_reingest} on_close={close_reingest} />
            }
            if let Some(tr) = state.trail.clone() {
                <TrailDialog trail={tr} lang={lang} on_close={acting(&dispatch, |()| Action::CloseTrail)} />
            }
            if let Some(text) = state.export.clone() {
                <ExportDialog text={text} lang={lang} on_close={acting(&dispatch, |()| Action::CloseExport)} />
            }
        </div>
    }
}

/// How much of the workspace is drawn: the first time tables are shown, in
/// three steps, each after the frame of the one before, so that building
/// the page's elements and laying them out is never one long task on the
/// page's thread (the first snapshot drawn at once was a task of 60 to 90 ms
/// of style and layout, after one of 40 to 55 ms of drawing, in Chromium).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum DrawStep {
    /// The bars, the lab and the pipeline strip (every table's count).
    Strip,
    /// And the selected table's rows.
    Table,
    /// And the rules and the checks: everything.
    All,
}

/// The [`DrawStep`] reached: [`DrawStep::Strip`] until `shown` (the page
/// has tables to show), then one step more after each frame drawn, up to
/// [`DrawStep::All`], where it stays.
#[hook]
fn use_first_draw_in_steps(shown: bool) -> DrawStep {
    let step = use_state_eq(|| DrawStep::Strip);
    {
        let setter = step.setter();
        use_effect_with((shown, *step), move |&(shown, now)| {
            let next = match now {
                DrawStep::Strip => Some(DrawStep::Table),
                DrawStep::Table => Some(DrawStep::All),
                DrawStep::All => None,
            };
            // After the next frame is drawn (a timeout set in the frame's
            // callback runs after its rendering), not before it.
            let frame = next.filter(|_| shown).map(|next| {
                gloo::render::request_animation_frame(move |_| {
                    Timeout::new(0, move || setter.set(next)).forget();
                })
            });
            move || drop(frame)
        });
    }
    *step
}

/// A callback dispatching the action `make` builds from its input.
fn acting<T: 'static>(dispatch: &Dispatcher, make: impl Fn(T) -> Action + 'static) -> Callback<T> {
    let dispatch = dispatch.clone();
    Callback::from(move |x: T| dispatch.dispatch(make(x)))
}

/// A callback sending the request `make` builds from its input, answered by `done`.
fn sending<T: 'static>(
    engine: &Engine,
    done: &Callback<Response>,
    make: impl Fn(T) -> Request + 'static,
) -> Callback<T> {
    let (engine, done) = (engine.clone(), done.clone());
    Callback::from(move |x: T| engine.send(make(x), done.clone()))
}

/// An answer as an action that keeps the editors' drafts.
fn answered(response: Response) -> Action {
    Action::Answer {
        response,
        reseed_drafts: false,
    }
}

/// The answer to ingesting one file: a message naming the file (several
/// may be dropped at once), then the session as committed (the table was
/// opened when the file was dropped, and the preview showed the batch).
fn ingested(
    dispatch: &Dispatcher,
    fresh: &Callback<Response>,
    lang: Lang,
    name: &str,
) -> Callback<Response> {
    let (dispatch, fresh, name) = (dispatch.clone(), fresh.clone(), name.to_string());
    Callback::from(move |r: Response| match r {
        Response::Snapshot(v) => {
            // Flagged records and repeated bytes are worth a word.
            let mut text = format!("{name}: {}", t(lang, "ingest_ok"));
            if let Some(b) = v.batches.last() {
                if b.corrupt_records > 0 {
                    text.push_str(&format!(
                        "; {} / {} {}",
                        b.corrupt_records,
                        b.records,
                        t(lang, "flagged")
                    ));
                }
                if let Some(n) = b.notes.iter().find(|n| n.starts_with("same content")) {
                    text.push_str(&format!(" ({n})"));
                }
                if b.records == 0 {
                    text.push_str(&format!("; {}", t(lang, "no_records")));
                }
            }
            dispatch.dispatch(Action::PushBanner(Banner { text, error: false }));
            fresh.emit(Response::Snapshot(v));
        }
        Response::Error { message } => dispatch.dispatch(Action::PushBanner(Banner {
            text: format!("{name}: {message}"),
            error: true,
        })),
        other => fresh.emit(other),
    })
}

/// `done`, after a success note `note(view)` when the engine answers with a snapshot.
fn noting(
    done: Callback<Response>,
    dispatch: Dispatcher,
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
            dispatch.dispatch(Action::ReplaceBanners(Banner { text, error: false }));
        }
    })
}
