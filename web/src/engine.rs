//! The UI's handle on the engine, which runs in a dedicated Web Worker
//! (`crates/worker`, started by `static/engine-loader.js`). The page's own
//! WebAssembly never links DataFusion: it speaks `medallion_protocol` only.
//!
//! Requests go to the worker as `{ id, request, file? }` (request as JSON
//! text, a dropped `File` as itself, never as a JSON array of numbers) and
//! run there one at a time, in the order sent; answers and progress come
//! back as [`FromEngine`] JSON text (see `medallion_protocol::wire`).
//!
//! **Cancel** terminates the worker, answers every open request with the
//! cancel note, and starts a new worker that is given again every request
//! that changed the engine's state and was answered (the journal): the
//! state the page showed before the cancelled request, without any trace of
//! it (no partial batch). The journal is also saved in the browser
//! (`session.rs`), so a reload starts a worker the same way.

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::{Rc, Weak};

use medallion_protocol::wire::{Envelope, FromEngine, Progress, RequestId};
use medallion_protocol::{Lang, PipelineView, Request, Response};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{ErrorEvent, File, MessageEvent, Worker};
use yew::Callback;

/// The script that starts the worker (copied to `dist/` by Trunk); its
/// settings follow as `?session=<32 hex digits>&lake=write|read` (or come
/// as the first message to the early worker, [`take_early_worker`]).
const WORKER_SCRIPT: &str = "./engine-loader.js";

/// The engine's worker that index.html starts before the page's own wasm
/// has loaded (`window.medallionEarlyEngine`), so the engine downloads and
/// compiles meanwhile. It waits for its settings (the query a worker is
/// otherwise started with, `?session=…&lake=…`) as its first message;
/// index.html keeps what it posted until the page listens.
struct EarlyWorker {
    worker: Worker,
    /// Its messages so far (JSON text), oldest first.
    messages: Vec<JsValue>,
    /// Its error event's message, if it had one.
    error: Option<String>,
}

/// The early worker, taken once (`None` after that, or if index.html
/// could not start one).
fn take_early_worker() -> Option<EarlyWorker> {
    let window = web_sys::window()?;
    let key = JsValue::from_str("medallionEarlyEngine");
    let early = js_sys::Reflect::get(&window, &key).ok()?;
    if early.is_undefined() || early.is_null() {
        return None;
    }
    let _ = js_sys::Reflect::delete_property(window.unchecked_ref::<js_sys::Object>(), &key);
    let field = |name: &str| js_sys::Reflect::get(&early, &JsValue::from_str(name)).ok();
    let worker = field("worker")?.dyn_into::<Worker>().ok()?;
    let messages = field("messages")
        .map(|m| js_sys::Array::from(&m).to_vec())
        .unwrap_or_default();
    let error = field("error").and_then(|e| e.as_string());
    Some(EarlyWorker {
        worker,
        messages,
        error,
    })
}

/// Random bits chosen once per page load: the worker draws batch and event
/// ids from them, so a new worker given the session's requests again names
/// everything as before.
fn session_seed() -> u128 {
    (0..4).fold(0u128, |acc, _| {
        (acc << 32) | (js_sys::Math::random() * 4_294_967_296.0) as u128
    })
}

/// How long after a save the storage used is asked for again (ms).
const USED_SETTLE_MS: u32 = 2_000;

/// What the engine is doing, for the page's status line and progress bar.
#[derive(Debug, Clone, PartialEq)]
pub enum EngineStatus {
    /// Downloading the engine's WebAssembly (bytes; `total` 0 if unknown).
    /// `restoring`: the engine is loaded to give the session back (after a
    /// reload or a cancel), which the page says for the whole wait.
    Loading {
        loaded: u64,
        total: u64,
        restoring: Option<Restore>,
    },
    /// Downloaded; the module is being compiled and started.
    Starting { restoring: Option<Restore> },
    /// Ready and idle.
    Idle,
    /// Working on requests; `progress` is the latest report of the oldest;
    /// before its first one, `file` names the file (and its size in bytes)
    /// the oldest is sending to the engine, if it is an ingest.
    Busy {
        progress: Option<Progress>,
        file: Option<(String, u64)>,
    },
    /// A new engine is being given the session's requests again, after a
    /// reload ([`Restore::Saved`]) or a cancel ([`Restore::Cancelled`]).
    Restoring(Restore),
    /// The engine stopped or could not start; the text says why.
    Failed(String),
}

impl EngineStatus {
    /// Why the engine is being (re)started or given the session's requests
    /// again, if it is: the tables then are not the ones the page will
    /// show, so nothing may change them (the download and start included).
    pub fn restoring(&self) -> Option<Restore> {
        match self {
            EngineStatus::Restoring(why) => Some(*why),
            EngineStatus::Loading { restoring, .. } | EngineStatus::Starting { restoring } => {
                *restoring
            }
            _ => None,
        }
    }
}

/// Why the session's requests are given to a new engine again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Restore {
    /// The page was reloaded (or reopened): the saved session comes back.
    Saved,
    /// Work was cancelled (or the engine restarted): back to the state before it.
    Cancelled,
}

/// Is the session saved in this browser (see `session.rs`)?
#[derive(Debug, Clone, PartialEq)]
pub enum SessionState {
    /// Reading the saved session.
    Opening,
    /// This tab owns the saved session; every change is saved. `used`:
    /// bytes this site uses in the browser's storage, if known.
    Saved { used: Option<u64> },
    /// Another tab owns the saved session: this one shows it, but its
    /// changes are not saved (until it takes over).
    ReadOnly,
    /// Another tab took the saved session over: changes here are not saved.
    Lost,
    /// (Was `ReadOnly`.) The tab that owned the saved session was closed or
    /// reloaded: a reload of this tab opens the latest state, as its owner
    /// if no other tab has it by then.
    OwnerLeft,
    /// Saving failed (e.g. the browser's storage is full): the session goes
    /// on in this tab, changes from now on are not saved. The text says why.
    NotSaved(String),
    /// A right-to-be-forgotten erasure ran: the saved requests held the
    /// erased records (the files as dropped), so they were deleted. With
    /// `lake_kept`, the lake saved in the browser's storage (which holds no
    /// erased record) goes on being saved after every change; without it,
    /// this session goes on in this tab, not saved. `used` as for `Saved`.
    Erased { lake_kept: bool, used: Option<u64> },
}

impl SessionState {
    /// Does this tab only show the session (another tab owns it, or did)?
    pub fn is_read_only(&self) -> bool {
        matches!(
            self,
            SessionState::ReadOnly | SessionState::Lost | SessionState::OwnerLeft
        )
    }
}

/// Texts of the requests this tab refuses (in the page's language).
#[derive(Debug, Clone, PartialEq)]
pub struct Refusals {
    /// While a new engine is given the session again.
    pub restoring: String,
    /// In a tab that does not own the saved session.
    pub read_only: String,
    /// The answer to work under way when another tab takes the session over.
    pub taken_over: String,
    /// The page's language, for naming the requests a cancel stops.
    pub lang: Lang,
}

/// A request on its way: not yet posted (the worker is loading) or posted
/// and not answered.
struct Pending {
    id: RequestId,
    request: Request,
    file: Option<File>,
    /// When the request was first made (µs since the epoch; kept in the journal).
    now_micros: i64,
    /// Save it with the session once answered (not when it is a journal
    /// entry given again to a new worker: that one is saved already).
    save: bool,
    origin: Origin,
    done: Callback<Response>,
}

/// Where a pending request comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Origin {
    /// The learner (or the page) made it now.
    Page,
    /// A journal entry given again to a new worker; `lake`: the saved
    /// lake's `meta.session` version that holds its result, if any.
    Journal { lake: Option<u64> },
    /// The default example of a first visit.
    FirstLoad,
}

struct Inner {
    worker: Option<Worker>,
    on_message: Option<Closure<dyn FnMut(MessageEvent)>>,
    /// The worker's messages read but not handled yet, oldest first: each
    /// is handled in a task of its own after the one that read it, so
    /// reading a large snapshot and drawing it are two tasks, not one long
    /// one (the first snapshot of a visit was over 50 ms).
    inbox: VecDeque<FromEngine>,
    /// A task is scheduled to handle the inbox.
    draining: bool,
    on_error: Option<Closure<dyn FnMut(ErrorEvent)>>,
    ready: bool,
    failed: bool,
    next_id: RequestId,
    unsent: Vec<Pending>,
    sent: BTreeMap<RequestId, Pending>,
    /// Answered requests that changed the engine's state, oldest first,
    /// since the last example or pipeline was loaded.
    journal: Vec<Journaled>,
    /// Set while a new engine is given the journal again.
    restoring: Option<Restore>,
    status: Vec<Callback<EngineStatus>>,
    last_status: EngineStatus,
    seed: u128,
    session: SessionState,
    session_listeners: Vec<Callback<SessionState>>,
    problems: Callback<String>,
    /// Changes answered in this tab that are not in the saved session
    /// (read-only or lost tab, storage full, a save that failed).
    unsaved: usize,
    /// Edits typed but not sent yet (the editors wait for a pause).
    edits_waiting: usize,
    /// The learner changed something since the scenario or pipeline now
    /// shown was loaded (`true` until a load is answered: a session restored
    /// from the browser's storage may hold changes).
    changed_since_load: bool,
    /// The page reloads on purpose (see [`Engine::leave`]).
    leaving: bool,
    /// The worker keeps its lake in the browser's storage after every change.
    persisted: bool,
    refusals: Refusals,
    /// Hears the state after a refused change (the editors show it again).
    on_refused: Callback<Response>,
    /// Hears a request's tables as computed, while their versions are
    /// written ([`FromEngine::Preview`]; the request's answer follows),
    /// and whether that request replaced the session.
    on_preview: Callback<(PipelineView, bool)>,
}

/// An answered request that changed the engine's state, with its file and
/// the time it was made (a new worker is given it again as it was).
struct Journaled {
    request: Request,
    file: Option<File>,
    now_micros: i64,
    /// The `meta.session` version of the lake in the browser's storage
    /// that holds the state after it (`None`: not written there).
    lake: Option<u64>,
}

/// How long a tab that hands the session over waits, after stopping its
/// worker, before it lets go of the lock (ms): a file the worker was
/// closing (OPFS `createWritable`) lands before the new owner opens the lake.
const HAND_OVER_GRACE_MS: u32 = 300;

/// Shared handle on the engine worker.
#[derive(Clone)]
pub struct Engine(Rc<RefCell<Inner>>);

impl PartialEq for Engine {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl Engine {
    /// A handle; the worker starts with [`Engine::start`].
    pub fn new() -> Self {
        let engine = Engine(Rc::new(RefCell::new(Inner {
            worker: None,
            on_message: None,
            inbox: VecDeque::new(),
            draining: false,
            on_error: None,
            ready: false,
            failed: false,
            next_id: 1,
            unsent: vec![],
            sent: BTreeMap::new(),
            journal: vec![],
            restoring: None,
            status: vec![],
            last_status: EngineStatus::Loading {
                loaded: 0,
                total: 0,
                restoring: None,
            },
            seed: session_seed(),
            session: SessionState::Opening,
            session_listeners: vec![],
            problems: Callback::noop(),
            unsaved: 0,
            edits_waiting: 0,
            changed_since_load: true,
            leaving: false,
            persisted: false,
            refusals: Refusals {
                restoring: "The tables are being restored: try again in a moment".into(),
                read_only: "This tab does not own the saved session: take over to make changes"
                    .into(),
                taken_over:
                    "Another tab took this session over: this was stopped, nothing of it was kept"
                        .into(),
                lang: Lang::En,
            },
            on_refused: Callback::noop(),
            on_preview: Callback::noop(),
        })));
        engine
    }

    /// Opens the saved session and starts the worker: the saved requests
    /// are given to it again (the state before the reload), or else
    /// `first` runs (the default example); `done` hears the answer. With
    /// `steal`, this tab takes the saved session over from another tab.
    pub fn start(&self, steal: bool, first: Request, done: Callback<Response>) {
        self.warn_before_leaving();
        let this = self.clone();
        wasm_bindgen_futures::spawn_local(async move {
            let events = {
                let (lost, asked, left) = (this.clone(), this.clone(), this.clone());
                crate::session::LockEvents {
                    lost: Box::new(move || lost.hand_over()),
                    release_asked: Box::new(move || {
                        asked.hand_over();
                        // The worker is stopped; a file it was closing lands first.
                        gloo::timers::callback::Timeout::new(
                            HAND_OVER_GRACE_MS,
                            crate::session::release,
                        )
                        .forget();
                    }),
                    owner_left: Box::new(move || {
                        if matches!(left.0.borrow().session, SessionState::ReadOnly) {
                            left.set_session(SessionState::OwnerLeft);
                        }
                    }),
                }
            };
            let owner = crate::session::lock(steal, events).await;
            let (saved, problem) = match crate::session::load().await {
                Ok(s) => (s, None),
                Err(e) => (
                    crate::session::SavedSession {
                        seed: None,
                        entries: vec![],
                    },
                    Some(e),
                ),
            };
            if let Some(seed) = saved
                .seed
                .as_deref()
                .and_then(|h| u128::from_str_radix(h, 16).ok())
            {
                this.0.borrow_mut().seed = seed;
            }
            this.set_session(match problem {
                Some(e) => SessionState::NotSaved(e),
                None if owner => SessionState::Saved { used: None },
                None => SessionState::ReadOnly,
            });
            this.refresh_used();
            let entries: Vec<Journaled> = saved
                .entries
                .into_iter()
                .filter_map(|e| {
                    Some(Journaled {
                        request: serde_json::from_str(&e.request).ok()?,
                        file: e.file,
                        now_micros: e.now_micros,
                        lake: e.lake,
                    })
                })
                .collect();
            // Said from the first moment, while the engine still loads.
            if !entries.is_empty() {
                this.0.borrow_mut().restoring = Some(Restore::Saved);
                this.status(EngineStatus::Restoring(Restore::Saved));
            }
            this.spawn();
            if entries.is_empty() {
                // Only an owner saves it; elsewhere it is no change of the learner's.
                let save = matches!(this.0.borrow().session, SessionState::Saved { .. });
                this.enqueue(first, None, now_micros(), save, Origin::FirstLoad, done);
            } else {
                this.replay(entries, done);
            }
        });
    }

    /// Gives `entries` (journal entries, already saved) to the worker again;
    /// `done` hears a snapshot of the state after all of them.
    fn replay(&self, entries: Vec<Journaled>, done: Callback<Response>) {
        let of = entries.len();
        let problems = self.0.borrow().problems.clone();
        for (i, j) in entries.into_iter().enumerate() {
            // A step that fails now did not fail before: the state differs
            // from the one saved. Never silent: say which step and why.
            let problems = problems.clone();
            let kind = j.request.kind();
            let cb = Callback::from(move |r: Response| {
                if let Response::Error { message } = r {
                    problems.emit(format!("step {} of {of} ({kind}): {message}", i + 1));
                }
            });
            let origin = Origin::Journal { lake: j.lake };
            self.enqueue(j.request, j.file, j.now_micros, false, origin, cb);
        }
        // The state after every step (whichever failed), for the page.
        self.send(Request::Snapshot, done);
    }

    /// From now on `listener` hears each saved step that failed when given
    /// again to a new worker (after a reload or a cancel): the tables then
    /// differ from the ones saved.
    pub fn listen_restore_problems(&self, listener: Callback<String>) {
        self.0.borrow_mut().problems = listener;
    }

    /// Saves one answered request with the session (in the background);
    /// `lake`: the saved lake's version that holds its result.
    fn save(&self, p: &Pending, clear: bool, lake: Option<u64>, seed: String) {
        let Ok(text) = serde_json::to_string(&p.request) else {
            return;
        };
        let (file, now, this) = (p.file.clone(), p.now_micros, self.clone());
        wasm_bindgen_futures::spawn_local(async move {
            match crate::session::append(&seed, &text, now, file, clear, lake).await {
                Ok(()) => this.refresh_used(),
                // The lake holds it: only its second copy is missing.
                Err(e) if lake.is_some() => web_sys::console::warn_1(
                    &format!("a saved request could not be written: {e}").into(),
                ),
                Err(e) => {
                    this.0.borrow_mut().unsaved += 1;
                    this.set_session(SessionState::NotSaved(e));
                }
            }
        });
    }

    /// Asks the browser how much storage the site uses, for the session
    /// line; and once more a moment later (the browser's estimate lags
    /// behind files just deleted, e.g. the lake a load replaced).
    fn refresh_used(&self) {
        let this = self.clone();
        wasm_bindgen_futures::spawn_local(async move { this.show_used().await });
        let this = self.clone();
        gloo::timers::callback::Timeout::new(USED_SETTLE_MS, move || {
            wasm_bindgen_futures::spawn_local(async move { this.show_used().await })
        })
        .forget();
    }

    async fn show_used(&self) {
        let used = crate::session::used_bytes().await;
        let now = self.0.borrow().session.clone();
        match now {
            SessionState::Saved { .. } => self.set_session(SessionState::Saved { used }),
            SessionState::Erased { lake_kept, .. } => {
                self.set_session(SessionState::Erased { lake_kept, used })
            }
            _ => {}
        }
    }

    /// From now on `listener` hears every change of [`SessionState`] (the
    /// current one first), as does every listener added before.
    pub fn listen_session(&self, listener: Callback<SessionState>) {
        let current = {
            let mut inner = self.0.borrow_mut();
            inner.session_listeners.push(listener.clone());
            inner.session.clone()
        };
        listener.emit(current);
    }

    /// The browser asks before the page is closed or reloaded while
    /// [`Engine::unsaved_changes`] is not 0 (unless the page itself reloads,
    /// see [`Engine::leave`]).
    fn warn_before_leaving(&self) {
        let this = self.clone();
        gloo::events::EventListener::new(&gloo::utils::window(), "beforeunload", move |e| {
            if this.0.borrow().leaving || this.unsaved_changes() == 0 {
                return;
            }
            if let Some(e) = e.dyn_ref::<web_sys::BeforeUnloadEvent>() {
                e.prevent_default();
                e.set_return_value("unsaved");
            }
        })
        .forget();
        // Left anyway (the learner confirmed the browser's question): the
        // files still on their way into bronze are lost; the next load of
        // this tab says which. Not when the page reloads on purpose
        // (`Engine::leave`: the learner already chose to discard them).
        let this = self.clone();
        gloo::events::EventListener::new(&gloo::utils::window(), "pagehide", move |_| {
            let files: Vec<String> = {
                let inner = this.0.borrow();
                if inner.leaving {
                    return;
                }
                inner
                    .sent
                    .values()
                    .chain(inner.unsent.iter())
                    .filter(|p| p.save)
                    .filter_map(|p| match &p.request {
                        Request::Ingest { table, file_name, .. } => Some(format!("{file_name} → {table}")),
                        _ => None,
                    })
                    .collect()
            };
            crate::session::remember_lost_ingests(&files);
        })
        .forget();
    }

    /// The page is about to reload on purpose (the learner confirmed what
    /// it discards): no second question from the browser.
    pub fn leave(&self, reload: impl FnOnce()) {
        self.0.borrow_mut().leaving = true;
        reload();
    }

    /// Stops the worker for good (before the saved lake is deleted: the
    /// worker may be writing it). Requests after this are not answered.
    pub fn stop(&self) {
        self.0.borrow_mut().terminate();
    }

    /// Deletes the saved session (after an erasure: it holds the erased
    /// records); the tab goes on unsaved.
    /// `lake_kept`: the worker keeps its lake in the browser's storage.
    /// Called while `Inner` is borrowed: reads nothing of it.
    fn forget_saved(&self, lake_kept: bool) {
        let this = self.clone();
        wasm_bindgen_futures::spawn_local(async move {
            match crate::session::clear().await {
                Ok(()) => this.set_session(SessionState::Erased {
                    lake_kept,
                    used: None,
                }),
                Err(e) => this.set_session(SessionState::NotSaved(e)),
            }
            this.refresh_used();
        });
    }

    /// Would leaving the page now lose work? Changes made here that are not
    /// in the saved session, or a change the engine is still working on (its
    /// entry is saved once it is answered).
    pub fn unsaved_changes(&self) -> usize {
        let inner = self.0.borrow();
        let open = inner
            .sent
            .values()
            .chain(inner.unsent.iter())
            .filter(|p| {
                p.save && p.request.changes_state() && !matches!(p.request, Request::SetLang { .. })
            })
            .count();
        inner.unsaved + inner.edits_waiting + open
    }

    /// Would loading another scenario replace anything the learner did? A
    /// change answered since the last load, one on its way or waiting, or
    /// a session restored from the browser's storage (it may hold changes).
    /// Switching the language is not a change.
    pub fn changed_since_load(&self) -> bool {
        let inner = self.0.borrow();
        inner.changed_since_load
            || inner.edits_waiting > 0
            || inner.sent.values().chain(inner.unsent.iter()).any(|p| {
                p.request.changes_state()
                    && !p.request.starts_over()
                    && !matches!(p.request, Request::SetLang { .. })
            })
    }

    /// An editor has an edit waiting to be sent (`true`), or sent it (`false`).
    pub fn edit_waiting(&self, waiting: bool) {
        let mut inner = self.0.borrow_mut();
        if waiting {
            inner.edits_waiting += 1;
        } else {
            inner.edits_waiting = inner.edits_waiting.saturating_sub(1);
        }
    }

    fn set_session(&self, state: SessionState) {
        let listeners = {
            let mut inner = self.0.borrow_mut();
            if inner.session == state {
                return;
            }
            inner.session = state.clone();
            inner.session_listeners.clone()
        };
        for cb in listeners {
            cb.emit(state.clone());
        }
    }

    fn spawn(&self) {
        let weak = Rc::downgrade(&self.0);
        let settings = {
            let inner = self.0.borrow();
            // Only the tab that owns the session writes the lake to the browser's storage.
            let owns = !(inner.session == SessionState::Opening || inner.session.is_read_only());
            format!(
                "?session={:032x}&lake={}",
                inner.seed,
                if owns { "write" } else { "read" }
            )
        };
        // The worker index.html started while the page loaded (the first
        // time only), told its settings; else a new one started with them.
        let early = take_early_worker();
        let is_early = early.is_some();
        let (worker, posted_early, failed_early) = match early {
            Some(early) => (early.worker, early.messages, early.error),
            None => match Worker::new(&format!("{WORKER_SCRIPT}{settings}")) {
                Ok(w) => (w, vec![], None),
                Err(e) => {
                    self.fail(format!(
                        "the pipeline engine could not start in this browser: {e:?}"
                    ));
                    return;
                }
            },
        };
        let receive = {
            let weak = weak.clone();
            move |data: JsValue| {
                let Some(inner) = Weak::upgrade(&weak) else {
                    return;
                };
                let engine = Engine(inner);
                match data
                    .as_string()
                    .map(|t| serde_json::from_str::<FromEngine>(&t))
                {
                    Some(Ok(msg)) => engine.receive(msg),
                    Some(Err(e)) => engine.fail(format!(
                        "the engine sent a message the page cannot read: {e}"
                    )),
                    None => engine.fail("the engine sent a message that is not text".into()),
                }
            }
        };
        let on_message = {
            let receive = receive.clone();
            Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| receive(ev.data()))
        };
        let on_error = Closure::<dyn FnMut(ErrorEvent)>::new(move |ev: ErrorEvent| {
            ev.prevent_default();
            if let Some(inner) = Weak::upgrade(&weak) {
                Engine(inner).fail(format!(
                    "the pipeline engine stopped after an internal error: {}",
                    ev.message()
                ));
            }
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        {
            let mut inner = self.0.borrow_mut();
            inner.worker = Some(worker.clone());
            inner.on_message = Some(on_message);
            inner.on_error = Some(on_error);
            inner.ready = false;
            inner.failed = false;
        }
        if !is_early {
            return;
        }
        // An early worker: what it said before the page listened, in
        // order, then its settings (it waits for them to open the lake).
        if let Some(message) = failed_early {
            self.fail(format!(
                "the pipeline engine stopped after an internal error: {message}"
            ));
            return;
        }
        for data in posted_early {
            receive(data);
        }
        if let Err(e) = worker.post_message(&JsValue::from_str(&settings)) {
            self.fail(format!(
                "the pipeline engine could not start in this browser: {e:?}"
            ));
        }
    }

    /// Is a scenario or pipeline being loaded (sent, or waiting to be)?
    /// Its answer seeds the editors again: the page keeps them locked
    /// until it comes ([`crate::components::Locked::Loading`]).
    pub fn loading_scenario(&self) -> bool {
        let inner = self.0.borrow();
        inner
            .sent
            .values()
            .chain(inner.unsent.iter())
            .any(|p| p.request.starts_over())
    }

    /// Runs `request` and hands the response to `done`.
    pub fn send(&self, request: Request, done: Callback<Response>) {
        if !self.refuse(&request, &done) {
            self.enqueue(request, None, now_micros(), true, Origin::Page, done);
        }
    }

    /// Runs an ingest whose bytes are `file`'s (read in the worker).
    pub fn send_file(&self, request: Request, file: File, done: Callback<Response>) {
        if !self.refuse(&request, &done) {
            self.enqueue(request, Some(file), now_micros(), true, Origin::Page, done);
        }
    }

    /// Who hears a request's result before its versions are written (the
    /// page shows it at once; the answer to the request follows), with
    /// whether the request replaced the session (a scenario was loaded:
    /// the editors take the new session's rules).
    pub fn set_on_preview(&self, on_preview: Callback<(PipelineView, bool)>) {
        self.0.borrow_mut().on_preview = on_preview;
    }

    /// The texts of refusals, and who hears the state after one (the
    /// page re-seeds its editors from it).
    pub fn set_refusals(&self, refusals: Refusals, on_refused: Callback<Response>) {
        let mut inner = self.0.borrow_mut();
        inner.refusals = refusals;
        inner.on_refused = on_refused;
    }

    /// Refuses a change while the session is being restored (it would be
    /// made on top of a state the page does not show yet) or in a tab that
    /// does not own the saved session (it is read-only). Reading and the
    /// language are always allowed. Answers `done` with the reason.
    fn refuse(&self, request: &Request, done: &Callback<Response>) -> bool {
        if !request.changes_state() || matches!(request, Request::SetLang { .. }) {
            return false;
        }
        let (why, on_refused) = {
            let inner = self.0.borrow();
            let why = if inner.restoring.is_some() {
                inner.refusals.restoring.clone()
            } else if inner.session.is_read_only() {
                inner.refusals.read_only.clone()
            } else {
                return false;
            };
            (why, inner.on_refused.clone())
        };
        done.emit(Response::Error { message: why });
        self.send(Request::Snapshot, on_refused);
        true
    }

    fn enqueue(
        &self,
        request: Request,
        file: Option<File>,
        now_micros: i64,
        save: bool,
        origin: Origin,
        done: Callback<Response>,
    ) {
        let failed = {
            let mut inner = self.0.borrow_mut();
            let id = inner.next_id;
            inner.next_id += 1;
            let pending = Pending {
                id,
                request,
                file,
                now_micros,
                save,
                origin,
                done,
            };
            if inner.failed {
                Some(pending.done)
            } else {
                inner.unsent.push(pending);
                None
            }
        };
        if let Some(done) = failed {
            done.emit(Response::Error {
                message: "the pipeline engine has stopped; press Restart".into(),
            });
            return;
        }
        self.flush();
    }

    /// Posts the requests waiting for the worker, if it is ready.
    fn flush(&self) {
        let (errors, status) = {
            let mut inner = self.0.borrow_mut();
            if !inner.ready {
                return;
            }
            let Some(worker) = inner.worker.clone() else {
                return;
            };
            let mut errors = Vec::new();
            for p in std::mem::take(&mut inner.unsent) {
                match post(&worker, &p) {
                    Ok(()) => {
                        inner.sent.insert(p.id, p);
                    }
                    Err(message) => errors.push((p.done, message)),
                }
            }
            (errors, inner.busy_status())
        };
        self.status(status);
        for (done, message) in errors {
            done.emit(Response::Error { message });
        }
    }

    /// Keeps `msg` for a task of its own (see [`Inner::inbox`]).
    fn receive(&self, msg: FromEngine) {
        let schedule = {
            let mut inner = self.0.borrow_mut();
            inner.inbox.push_back(msg);
            !std::mem::replace(&mut inner.draining, true)
        };
        if schedule {
            self.handle_next_later();
        }
    }

    /// Handles the oldest message of the inbox in the next task, then the
    /// next one in the task after, and so on.
    fn handle_next_later(&self) {
        let weak = Rc::downgrade(&self.0);
        gloo::timers::callback::Timeout::new(0, move || {
            let Some(inner) = Weak::upgrade(&weak) else {
                return;
            };
            let engine = Engine(inner);
            let next = engine.0.borrow_mut().inbox.pop_front();
            if let Some(msg) = next {
                engine.on_message(msg);
            }
            let more = {
                let mut inner = engine.0.borrow_mut();
                inner.draining = !inner.inbox.is_empty();
                inner.draining
            };
            if more {
                engine.handle_next_later();
            }
        })
        .forget();
    }

    fn on_message(&self, msg: FromEngine) {
        match msg {
            FromEngine::Loading {
                loaded_bytes,
                total_bytes,
            } => {
                let restoring = self.0.borrow().restoring;
                self.status(if total_bytes > 0 && loaded_bytes >= total_bytes {
                    EngineStatus::Starting { restoring }
                } else {
                    EngineStatus::Loading {
                        loaded: loaded_bytes,
                        total: total_bytes,
                        restoring,
                    }
                })
            }
            FromEngine::Ready { opened, persisted } => {
                {
                    let mut inner = self.0.borrow_mut();
                    inner.ready = true;
                    inner.persisted = persisted;
                    if let Some(version) = opened {
                        inner.skip_saved(version);
                    }
                }
                self.flush();
            }
            FromEngine::Failed { message } => self.fail(message),
            FromEngine::Progress { id, progress } => {
                let oldest = self.0.borrow().sent.keys().next().copied();
                if oldest == Some(id) {
                    let restoring = self.0.borrow().restoring;
                    self.status(if let Some(why) = restoring {
                        EngineStatus::Restoring(why)
                    } else {
                        EngineStatus::Busy {
                            progress: Some(progress),
                            file: None,
                        }
                    });
                }
            }
            FromEngine::Preview { id, view } => {
                // Only for the request under way (one cancelled is gone).
                let listener = {
                    let inner = self.0.borrow();
                    let oldest = inner.sent.iter().next().filter(|(sent, _)| **sent == id);
                    oldest
                        .filter(|_| inner.restoring.is_none())
                        .map(|(_, p)| (inner.on_preview.clone(), p.request.starts_over()))
                };
                if let Some((listener, starts_over)) = listener {
                    listener.emit((*view, starts_over));
                }
            }
            FromEngine::Done {
                id,
                response,
                saved,
                not_saved,
            } => {
                let mut session = None;
                let (done, status) = {
                    let mut inner = self.0.borrow_mut();
                    let Some(p) = inner.sent.remove(&id) else {
                        return;
                    };
                    if p.request.changes_state() && !matches!(response, Response::Error { .. }) {
                        let clear = p.request.starts_over();
                        if clear {
                            inner.journal.clear();
                        }
                        if clear || !matches!(p.request, Request::SetLang { .. }) {
                            inner.changed_since_load = !clear;
                        }
                        let erasure = matches!(p.request, Request::Forget { .. });
                        // The language is kept apart (see `ui::remember_lang`):
                        // a switch that is not saved with the session loses nothing.
                        let counts = !matches!(p.request, Request::SetLang { .. });
                        if erasure && p.save && matches!(inner.session, SessionState::Saved { .. })
                        {
                            // The saved requests hold the erased records: delete
                            // them. Without a lake kept in the browser's storage
                            // (saved after this request), that loses everything
                            // saved so far; with one, nothing.
                            let lake_saved =
                                inner.persisted && saved.is_some() && not_saved.is_none();
                            if !lake_saved {
                                inner.unsaved += inner.journal.len() + 1;
                            }
                            self.forget_saved(inner.persisted);
                        } else if inner.persisted && p.save {
                            // The lake in the browser's storage is the saved
                            // session; the saved request is a second copy.
                            // A change the lake could not take is not saved at all:
                            // its second copy alone would bring it back on a
                            // reload that the page said returns to before it.
                            match not_saved {
                                Some(why) => {
                                    inner.unsaved += usize::from(counts);
                                    if matches!(inner.session, SessionState::Saved { .. }) {
                                        session = Some(SessionState::NotSaved(why));
                                    }
                                }
                                None => {
                                    self.refresh_used();
                                    if matches!(inner.session, SessionState::Saved { .. }) {
                                        self.save(&p, clear, saved, format!("{:032x}", inner.seed));
                                    }
                                }
                            }
                        } else if p.save && matches!(inner.session, SessionState::Saved { .. }) {
                            self.save(&p, clear, saved, format!("{:032x}", inner.seed));
                        } else if p.save && counts {
                            inner.unsaved += 1;
                        }
                        inner.journal.push(Journaled {
                            request: p.request,
                            file: p.file,
                            now_micros: p.now_micros,
                            lake: saved,
                        });
                    }
                    if inner.sent.is_empty() && inner.unsent.is_empty() {
                        inner.restoring = None;
                    }
                    (p.done, inner.busy_status())
                };
                if let Some(state) = session {
                    self.set_session(state);
                }
                self.status(status);
                done.emit(response);
            }
        }
    }

    /// Stops whatever the engine is doing: every open request is answered
    /// with `note` (an error; the ones waiting behind the first name
    /// themselves, so a rule edit made during a long ingest is never dropped
    /// without a word), and a new worker gets the journal again; `restored`
    /// hears the answer to its last request (the state before the cancelled
    /// work).
    pub fn cancel(&self, note: String, restored: Callback<Response>) {
        let (open, lang) = {
            let mut inner = self.0.borrow_mut();
            inner.terminate();
            inner.restoring = Some(Restore::Cancelled);
            (inner.take_open(), inner.refusals.lang)
        };
        for (i, p) in open.into_iter().enumerate() {
            // An ingest's answer names its file already.
            let label = (i > 0)
                .then(|| crate::i18n::request_label(lang, &p.request))
                .flatten();
            p.done.emit(Response::Error {
                message: match label {
                    Some(what) => format!("{what}: {note}"),
                    None => note.clone(),
                },
            });
        }
        self.status(EngineStatus::Restoring(Restore::Cancelled));
        self.spawn();
        let journal = std::mem::take(&mut self.0.borrow_mut().journal);
        self.replay(journal, restored);
    }

    /// Another tab takes the session over (or took it): this tab stops
    /// writing the lake at once. Work under way is stopped (answered with
    /// [`Refusals::taken_over`]: it is not in the saved session), and a new
    /// engine that only reads the lake gets the journal again, so this tab
    /// goes on showing the session, read-only.
    fn hand_over(&self) {
        let (note, restored) = {
            let inner = self.0.borrow();
            if inner.session == SessionState::Lost {
                return;
            }
            (inner.refusals.taken_over.clone(), inner.on_refused.clone())
        };
        self.set_session(SessionState::Lost);
        self.cancel(note, restored);
    }

    /// After a failure: the same as a cancel (a new engine with the journal).
    pub fn restart(&self, restored: Callback<Response>) {
        self.cancel("the pipeline engine was restarted".into(), restored);
    }

    fn fail(&self, message: String) {
        let open = {
            let mut inner = self.0.borrow_mut();
            inner.failed = true;
            inner.ready = false;
            // A failed request stays out of the journal; the others can run again.
            inner.take_open()
        };
        self.status(EngineStatus::Failed(message.clone()));
        for p in open {
            p.done.emit(Response::Error {
                message: message.clone(),
            });
        }
    }

    /// From now on `status` hears every change of [`EngineStatus`] (the
    /// current one first), as does every listener added before.
    pub fn listen(&self, status: Callback<EngineStatus>) {
        let current = {
            let mut inner = self.0.borrow_mut();
            inner.status.push(status.clone());
            inner.last_status.clone()
        };
        status.emit(current);
    }

    fn status(&self, status: EngineStatus) {
        let cb = {
            let mut inner = self.0.borrow_mut();
            if inner.last_status == status {
                return;
            }
            inner.last_status = status.clone();
            inner.status.clone()
        };
        for cb in cb {
            cb.emit(status.clone());
        }
    }
}

impl Inner {
    /// Ends the worker (whatever it is doing) and forgets its handlers.
    fn terminate(&mut self) {
        if let Some(w) = self.worker.take() {
            w.terminate();
        }
        self.on_message = None;
        // Its messages not handled yet go with it.
        self.inbox.clear();
        self.on_error = None;
        self.ready = false;
    }

    /// The worker opened the lake saved at `meta.session` version `version`:
    /// the journal entries waiting to be given again whose result it holds
    /// (up to the last one saved at that version or before) are not sent
    /// (they go back to the journal as they are), and a first visit's
    /// default example becomes a snapshot of the opened session.
    fn skip_saved(&mut self, version: u64) {
        let upto = self
            .unsent
            .iter()
            .rposition(|p| matches!(p.origin, Origin::Journal { lake: Some(v) } if v <= version));
        if let Some(k) = upto {
            for p in self.unsent.drain(..=k) {
                if let Origin::Journal { lake } = p.origin {
                    self.journal.push(Journaled {
                        request: p.request,
                        file: p.file,
                        now_micros: p.now_micros,
                        lake,
                    });
                }
            }
        }
        for p in self
            .unsent
            .iter_mut()
            .filter(|p| p.origin == Origin::FirstLoad)
        {
            p.request = Request::Snapshot;
            p.save = false;
        }
    }

    /// Every request not answered yet (sent first, oldest first), taken out.
    fn take_open(&mut self) -> Vec<Pending> {
        let mut open: Vec<Pending> = std::mem::take(&mut self.sent).into_values().collect();
        open.append(&mut self.unsent);
        open
    }

    fn busy_status(&self) -> EngineStatus {
        if self.sent.is_empty() && self.unsent.is_empty() {
            EngineStatus::Idle
        } else if let Some(why) = self.restoring {
            EngineStatus::Restoring(why)
        } else {
            let oldest = self.sent.values().next().or(self.unsent.first());
            EngineStatus::Busy {
                progress: None,
                file: oldest
                    .and_then(|p| p.file.as_ref())
                    .map(|f| (f.name(), f.size() as u64)),
            }
        }
    }
}

/// The page's clock, µs since the Unix epoch (UTC).
fn now_micros() -> i64 {
    (js_sys::Date::now() * 1000.0) as i64
}

/// Posts one request to the worker: `{ id, request: <JSON text>, file? }`.
fn post(worker: &Worker, p: &Pending) -> Result<(), String> {
    let text = serde_json::to_string(&Envelope {
        id: p.id,
        request: p.request.clone(),
        now_micros: Some(p.now_micros),
    })
    .map_err(|e| format!("the request could not be encoded: {e}"))?;
    let msg = js_sys::Object::new();
    let set = |k: &str, v: &JsValue| js_sys::Reflect::set(&msg, &JsValue::from_str(k), v);
    set("id", &JsValue::from_f64(p.id as f64))
        .and_then(|_| set("request", &JsValue::from_str(&text)))
        .and_then(|_| match &p.file {
            Some(f) => set("file", f.as_ref()),
            None => Ok(true),
        })
        .map_err(|e| format!("the request could not be sent to the engine: {e:?}"))?;
    worker
        .post_message(&msg)
        .map_err(|e| format!("the request could not be sent to the engine: {e:?}"))
}
