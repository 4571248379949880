//! The playground: one pipeline, its lake and its last good results, driven
//! by [`Request`]s. This is the only stateful type callers hold.
//! This file holds the state, the constructors and [`Playground::handle`];
//! each operation lives in its own file, as delta-rs keeps one file per
//! operation: `load`, `ingest`, `reingest`, `kafka`, `edit` (rules, gold
//! SQL), `run`, `restore`, `replay`, `view` (snapshot, table pages, trail,
//! export), `forget` (the right to be forgotten) and `pii` (the right to be
//! forgotten three ways, in throw-away lakes beside the session).

mod edit;
mod forget;
mod ingest;
mod kafka;
mod lab;
mod load;
mod memory;
mod open;
mod pii;
mod reingest;
mod replay;
mod restore;
mod run;
mod save;
mod view;
mod warm;

pub use forget::{ErasureChange, ErasurePlan, PLAN_SAMPLE_ROWS};
pub use lab::LabState;
pub use medallion_protocol::view::PREVIEW_ROWS;
pub use memory::{estimated_bytes, MEMORY_BUDGET_BYTES};
pub use save::{SavedState, SESSION_DIR, SESSION_FORMAT};

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::lake::concat_batches;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::MemorySchemaProvider;
use datafusion::execution::disk_manager::{DiskManagerBuilder, DiskManagerMode};
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};

use crate::api::{
    Checkpoint, Erasure, Lang, PipelineView, ReplayReport, Request, Response, RunInfo, RunMode,
};
use crate::bronze::kafka::Topic;
use crate::bronze::{bronze_schema, table_schema, BatchInfo};
use crate::checks::CheckResult;
use crate::env::{Clock, IdGenerator, RandomIds, SystemClock};
use crate::error::Diagnostic;
use crate::error::{EngineError, Result};
use crate::lake::versions::History;
use crate::lake::{Lake, LAKE_URL};
use crate::model::PipelineDef;
use crate::output::RunOutput;
use crate::query::register_table;
use medallion_protocol::TableName;

pub use crate::bronze::MAX_FILE_BYTES;

/// The refusal of a file of `bytes` (over [`MAX_FILE_BYTES`]): an
/// [`EngineError::Ingest`] naming the exact size, or `None` when it fits.
/// The worker asks this of a dropped `File` before reading it, so a file of
/// gigabytes is refused at once, in the same words as here.
pub fn file_too_big(file_name: &str, bytes: u64) -> Option<EngineError> {
    (bytes > MAX_FILE_BYTES as u64).then(|| {
        EngineError::Ingest(format!(
            "{file_name} is {bytes} bytes, over the {} MiB ({MAX_FILE_BYTES} bytes) the playground accepts. Nothing was written.",
            MAX_FILE_BYTES / 1048576
        ))
    })
}

/// Makes an empty object store for a new lake (an in-memory one, or a test's
/// store that fails on purpose).
pub type StoreFactory = Arc<dyn Fn() -> Arc<dyn object_store::ObjectStore> + Send + Sync>;

/// A running playground.
pub struct Playground {
    ctx: SessionContext,
    lake: Lake,
    /// Makes the store of a new lake (each example or pipeline loaded starts one).
    new_store: StoreFactory,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGenerator>,
    lang: Lang,
    example: String,
    def: PipelineDef,
    batches: Vec<BatchInfo>,
    bronze: BTreeMap<String, Vec<(BatchInfo, RecordBatch)>>,
    last_good: Option<RunOutput>,
    history: History,
    replay: Option<ReplayReport>,
    mode: RunMode,
    checkpoints: Vec<Checkpoint>,
    /// Kafka topics by bronze table (name without the layer).
    topics: BTreeMap<String, Topic>,
    erasures: Vec<Erasure>,
    /// A warning about the last request's consequences, shown once.
    notice: Option<String>,
    /// While `reingest` appends: the batch read again (the same bytes are
    /// expected; the new batch supersedes it).
    rereading: Option<String>,
    checks: Vec<CheckResult>,
    diagnostics: Vec<Diagnostic>,
    /// The lab's "a silver job fails" event: the next run fails this silver
    /// table's job (name without the layer), once (never saved).
    fail_silver_once: Option<String>,
    run_info: RunInfo,
    run_history: Vec<crate::api::RunRecord>,
    /// Hears how far a long request got (see [`Playground::set_progress`]).
    progress: Option<Box<dyn Fn(crate::progress::Progress)>>,
    /// Hears the next run's tables as computed, before their versions are
    /// written (see [`Playground::set_preview`]); taken by that run.
    preview: Option<Box<dyn FnOnce(PipelineView)>>,
    /// The `meta.session` version this session last saved (see `save.rs`).
    saved: save::Saved,
    /// The instructor's lab: anti-patterns on and the events' timeline (saved).
    lab: LabState,
    /// The lab's last comparison with its twin (rebuilt, never saved).
    lab_view: Option<crate::lab::LabView>,
    /// The right to be forgotten three ways (seed 000 §7): three throw-away
    /// lakes, built on first use (never saved, not the session's state).
    pii: Option<Box<pii::PiiLab>>,
    /// Examples' downloaded files by their `Download::path`, decompressed
    /// (see [`Playground::add_download`]); kept across loads, never saved.
    downloads: BTreeMap<&'static str, Arc<[u8]>>,
    /// Bronze as the last run read it (a rule edit reads it again only
    /// where bronze or its schema changed); never saved.
    parse_cache: crate::silver::parse_cache::ParseCache,
    /// Each silver table's rule steps as the last run computed them (a
    /// rule edit recomputes the rules it changed); never saved.
    step_cache: crate::silver::step_cache::StepCache,
    /// The check results of the last run, with the tables each read (a
    /// check whose tables are unchanged keeps its result); never saved.
    check_cache: crate::checks::CheckCache,
    /// Whether runs use `step_cache` and `check_cache` (see
    /// [`Playground::set_reuse_last_run`]).
    reuse_last_run: bool,
    /// What the session may hold in memory, bytes (see `memory.rs`).
    memory_budget: u64,
}

/// A DataFusion session fit for the browser: one partition (nothing is
/// spawned; `JoinSet::spawn` panics without a tokio runtime), no disk spilling,
/// case-sensitive identifiers (TLC columns are `PULocationID`, `VendorID`),
/// the JSON functions of `datafusion-functions-json` (`json_get_str(col,
/// 'key', 0)`, `json_get_int`, `json_get_float`, `json_get_bool`,
/// `json_get_json`, `json_as_text`, `json_length(col[, path…])`,
/// `json_contains`, `json_object_keys`: path steps are keys or 0-based array
/// indexes; a missing path or JSON `null` gives NULL; `json_get`'s value of
/// mixed type cannot be stored, see [`crate::lake::unstorable_column`]), and
/// the lake registered at `memory://lake/` with schemas bronze, silver, gold.
/// Integer arithmetic and `sum` fail on overflow instead of wrapping around
/// (as Spark's ANSI mode does; see `checked`).
pub fn new_session(lake: &Lake) -> Result<SessionContext> {
    let mut config = SessionConfig::new()
        .with_target_partitions(1)
        .with_repartition_joins(false)
        .with_repartition_aggregations(false)
        .with_repartition_windows(false)
        .with_repartition_sorts(false)
        .with_round_robin_repartition(false)
        .with_repartition_file_scans(false);
    config.options_mut().sql_parser.enable_ident_normalization = false;
    // One pass of the logical optimizer: each rule leaves a correct plan,
    // and the second pass DataFusion makes by default mostly confirms the
    // first (planning is a large part of a small query's time in the tab).
    config.options_mut().optimizer.max_passes = 1;
    let runtime = RuntimeEnvBuilder::new()
        .with_disk_manager_builder(
            DiskManagerBuilder::default().with_mode(DiskManagerMode::Disabled),
        )
        .build_arc()?;
    let mut ctx = SessionContext::new_with_config_rt(config, runtime);
    // JSON in SQL: json_get_str(lines, 0, 'sku'), json_length(lines), ...
    // (datafusion-functions-json; every session the engine makes is this one).
    datafusion_functions_json::register_all(&mut ctx)?;
    let url = ObjectStoreUrl::parse(LAKE_URL)?;
    ctx.register_object_store(url.as_ref(), lake.store());
    let catalog = ctx
        .catalog("datafusion")
        .ok_or_else(|| EngineError::Internal("default catalog missing".into()))?;
    for layer in ["bronze", "silver", "gold"] {
        catalog.register_schema(layer, Arc::new(MemorySchemaProvider::new()))?;
    }
    // Integer +, -, *, unary minus and sum fail on overflow instead of wrapping.
    crate::checked::install(&ctx);
    Ok(ctx)
}

impl Playground {
    /// An empty playground with the real clock and random UUIDs.
    pub fn new() -> Result<Self> {
        Self::with_env(Arc::new(SystemClock), Arc::new(RandomIds::default()))
    }

    /// An empty playground with the given clock and id generator (tests pin both).
    pub fn with_env(clock: Arc<dyn Clock>, ids: Arc<dyn IdGenerator>) -> Result<Self> {
        Self::with_store(
            clock,
            ids,
            Arc::new(|| Arc::new(object_store::memory::InMemory::new())),
        )
    }

    /// An empty playground whose lakes live in stores made by `new_store`
    /// (tests use a store that fails a write on purpose).
    pub fn with_store(
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGenerator>,
        new_store: StoreFactory,
    ) -> Result<Self> {
        Self::blank(clock, ids, new_store.clone(), Lake::from_store(new_store()))
    }

    /// An empty playground over `lake` (a load builds its new session on
    /// the current lake until it makes its own).
    pub(super) fn blank(
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGenerator>,
        new_store: StoreFactory,
        lake: Lake,
    ) -> Result<Self> {
        let ctx = new_session(&lake)?;
        Ok(Self {
            ctx,
            lake,
            new_store,
            clock,
            ids,
            lang: Lang::En,
            example: String::new(),
            def: PipelineDef {
                title: String::new(),
                bronze: vec![],
                silver: vec![],
                gold: vec![],
                checks: vec![],
                anti_patterns: Default::default(),
            },
            batches: vec![],
            bronze: BTreeMap::new(),
            last_good: None,
            history: History::default(),
            replay: None,
            mode: RunMode::Full,
            checkpoints: vec![],
            topics: BTreeMap::new(),
            erasures: vec![],
            notice: None,
            rereading: None,
            checks: vec![],
            diagnostics: vec![],
            fail_silver_once: None,
            run_history: vec![],
            run_info: RunInfo {
                ok: true,
                duration_ms: 0.0,
                runs: 0,
                errors: vec![],
                not_refreshed: vec![],
            },
            progress: None,
            preview: None,
            saved: Default::default(),
            lab: LabState::default(),
            lab_view: None,
            pii: None,
            downloads: BTreeMap::new(),
            parse_cache: Default::default(),
            step_cache: Default::default(),
            check_cache: Default::default(),
            reuse_last_run: true,
            memory_budget: MEMORY_BUDGET_BYTES,
        })
    }

    /// From now on `listener` hears how far each long request got: bytes and
    /// records of a file being read, the rule and gold model a run is at,
    /// the table being written. `None`: nobody listens (the default).
    pub fn set_progress(&mut self, listener: Option<Box<dyn Fn(crate::progress::Progress)>>) {
        self.progress = listener;
    }

    /// `listener` hears the next run's result before its versions are
    /// written: the view as it will be once they are, with the tables
    /// being written named in [`PipelineView::saving`] (their `version`
    /// `None`: no version holds those rows yet) and the checks already
    /// evaluated on them. The run's own answer (the state as committed:
    /// a table whose commit failed back at its version, with the reason)
    /// follows as usual. A request that does not run the pipeline leaves
    /// it unheard; set `None` after the request. The worker sets it for
    /// requests that [`medallion_protocol::Request::previews`].
    pub fn set_preview(&mut self, listener: Option<Box<dyn FnOnce(PipelineView)>>) {
        self.preview = listener;
    }

    /// Whether a run reuses what the last one computed: the rule steps
    /// whose rules and rows are the same ([`crate::silver::step_cache`]),
    /// and the results of the checks whose tables are the same rows
    /// ([`crate::checks::CheckCache`]). On by default, kept across loads.
    /// Off, every rule and every check is computed on every run: the
    /// results are the same (`tests/prop_step_cache.rs` and
    /// `tests/step_cache_realdata.rs` compare the two), only slower.
    pub fn set_reuse_last_run(&mut self, on: bool) {
        self.reuse_last_run = on;
        self.step_cache.retain(&[]);
        self.check_cache = Default::default();
    }

    /// How many check results the last run took from the run before
    /// instead of evaluating them ([`Self::set_reuse_last_run`]).
    pub fn checks_reused(&self) -> usize {
        self.check_cache.reused()
    }

    fn reporter(&self) -> crate::progress::Reporter<'_> {
        crate::progress::Reporter::new(self.progress.as_deref())
    }

    /// Carries out a request. Never panics; failures come back as [`Response::Error`].
    /// A request that changes the session is followed by a save of the
    /// session to the lake (`meta.session`); a save that fails is told in
    /// the notice (the session goes on; opening the lake gives the state
    /// before that request).
    pub async fn handle(&mut self, request: Request) -> Response {
        // The notice is about the last change (and saved with it): reading
        // requests leave it as it is.
        if request.changes_state() {
            self.notice = None;
        }
        let save = request.changes_state().then(|| request.kind());
        // The lab's twin follows every change of the session but its own.
        let lab_follows = request.changes_state()
            && !matches!(request, Request::SetLab { .. } | Request::LabEvent { .. });
        let starts_over = request.starts_over();
        let lab_before = self.lab.clone();
        let mut response = self.carry_out(request).await;
        if starts_over {
            // A new scenario keeps the lab's switches; its timeline starts over.
            self.lab = LabState {
                on: lab_before.on,
                ..Default::default()
            };
        } else if lab_follows {
            // Only the lab's requests change it (a language switch that
            // reloads an untouched example keeps it too), and a run that
            // builds every silver table again (the retry of a failed job).
            let job_failed = self.lab.job_failed.take();
            self.lab = lab_before;
            self.lab.job_failed = job_failed;
        }
        if lab_follows && self.lab.active() {
            Box::pin(self.refresh_lab()).await;
            if matches!(response, Response::Snapshot(_)) {
                response = self.snapshot();
            }
        }
        if let Some(kind) = save {
            if let Err(e) = self.save_session(&kind).await {
                let note = format!("The session could not be saved ({e}): a reload would give the state before this change.");
                self.notice = Some(match self.notice.take() {
                    Some(n) => format!("{n} {note}"),
                    None => note,
                });
                if matches!(response, Response::Snapshot(_)) {
                    response = self.snapshot();
                }
            }
        }
        response
    }

    async fn carry_out(&mut self, request: Request) -> Response {
        let result = match request {
            Request::LoadExample {
                example,
                lang,
                bronze_mode,
            } => self
                .load_example_with(&example, lang, bronze_mode)
                .await
                .map(|_| self.snapshot()),
            Request::LoadPipeline { pipeline } => {
                self.load_pipeline(pipeline).await.map(|_| self.snapshot())
            }
            Request::Ingest {
                table,
                file_name,
                bytes,
                options,
            } => self
                .ingest(&table, &file_name, &bytes, &options)
                .await
                .map(|_| self.snapshot()),
            Request::Reingest {
                batch_id,
                options,
                remember,
            } => self
                .reingest(&batch_id, &options, remember)
                .await
                .map(|_| self.snapshot()),
            Request::Restore { table, version } => {
                self.restore(&table, version).await.map(|_| self.snapshot())
            }
            Request::Replay => self.replay().await.map(|_| self.snapshot()),
            Request::KafkaProduce { table, messages } => self
                .kafka_produce(&table, messages)
                .map(|_| self.snapshot()),
            Request::KafkaPoll {
                table,
                max,
                crash_before_commit,
            } => self
                .kafka_poll(&table, max, crash_before_commit)
                .await
                .map(|_| self.snapshot()),
            Request::PlanForget { table, predicate } => self
                .plan_forget(&table, &predicate)
                .await
                .map(Response::ErasurePlan),
            Request::Forget {
                table,
                predicate,
                reason,
                expected_rows,
                plan_state,
            } => self
                .forget(
                    &table,
                    &predicate,
                    &reason,
                    expected_rows,
                    plan_state.as_deref(),
                )
                .await
                .map(|_| self.snapshot()),
            Request::SetRunMode { mode } => {
                let was = self.mode;
                self.mode = mode;
                // Back to full refresh: the tables are rebuilt from bronze now.
                if mode == RunMode::Full && was != RunMode::Full {
                    self.run().await;
                }
                Ok(self.snapshot())
            }
            Request::Run { full_refresh } => {
                self.run_with(self.mode == RunMode::Incremental && !full_refresh)
                    .await;
                Ok(self.snapshot())
            }
            Request::SetRules {
                silver_table,
                rules,
            } => self
                .set_rules(&silver_table, rules)
                .await
                .map(|_| self.snapshot()),
            Request::SetGoldSql { model, sql } => self
                .set_gold_sql(&model, &sql)
                .await
                .map(|_| self.snapshot()),
            Request::SetAntiPatterns { anti_patterns } => {
                self.def.anti_patterns = anti_patterns;
                self.run().await;
                Ok(self.snapshot())
            }
            Request::SetLab { on } => Box::pin(self.set_lab(on)).await.map(|_| self.snapshot()),
            Request::LabEvent { event } => Box::pin(self.lab_event(event))
                .await
                .map(|_| self.snapshot()),
            Request::PiiLab { customer } => Box::pin(self.pii_view(customer.as_deref()))
                .await
                .map(Response::Pii),
            Request::PiiForget { customer, method } => Box::pin(self.pii_forget(&customer, method))
                .await
                .map(Response::Pii),
            Request::PiiReset { customer } => Box::pin(self.pii_reset(customer.as_deref()))
                .await
                .map(Response::Pii),
            Request::SetLang { lang } => self.set_lang(lang).await.map(|_| self.snapshot()),
            Request::GetTable {
                table,
                offset,
                limit,
                version,
                corrupt_only,
            } => self
                .table_view_at(&table, offset, limit, version, corrupt_only)
                .await
                .map(Response::Table),
            Request::ExportRules { silver_table } => self
                .export_rules(&silver_table)
                .map(|text| Response::Text { text }),
            Request::Trail { table, row } => self.trail(&table, row).await.map(Response::Trail),
            Request::Snapshot => Ok(self.snapshot()),
        };
        result.unwrap_or_else(|e| Response::Error {
            message: e.to_string(),
        })
    }

    fn snapshot(&self) -> Response {
        Response::Snapshot(self.view())
    }

    /// The object store of the current lake (tables' Parquet files and their
    /// `_delta_log`s, the landing zone), for reading the commit logs.
    pub fn lake_store(&self) -> Arc<dyn object_store::ObjectStore> {
        // The store the factory made, not the lab's outage wrapper around it.
        self.lake.outage().inner()
    }

    /// The newest `meta.session` version this session saved in its lake
    /// (`None`: nothing saved yet, or the last save failed and nothing before it).
    pub fn saved_version(&self) -> Option<u64> {
        self.saved.version
    }

    /// The pipeline definition currently loaded.
    pub fn definition(&self) -> &PipelineDef {
        &self.def
    }

    /// Arrow schema of bronze table `table` (raw or typed, as declared).
    fn bronze_schema_of(&self, table: &str) -> SchemaRef {
        self.def
            .bronze_table(table)
            .map(table_schema)
            .unwrap_or_else(bronze_schema)
    }

    /// Rows of bronze `table` (without the layer) from the batches up to
    /// version `upto` (all of them when `None`).
    fn bronze_rows(&self, table: &str, upto: Option<u64>) -> Result<RecordBatch> {
        let rows = self
            .bronze
            .get(table)
            .into_iter()
            .flatten()
            .filter(|(i, _)| upto.is_none_or(|v| i.version <= v));
        Ok(concat_batches(
            &self.bronze_schema_of(table),
            rows.map(|(_, r)| r),
        )?)
    }

    async fn register_bronze(&self, table: &str) -> Result<()> {
        let rows = self.bronze_rows(table, None)?;
        if rows.num_rows() == 0 && !self.bronze.contains_key(table) {
            // No file yet: write an empty part so the table exists for SQL.
            let path = format!("{}/part-000000.parquet", TableName::bronze(table).path());
            self.lake
                .write_parquet(&path, self.bronze_schema_of(table), &[])
                .await?;
        }
        register_table(&self.ctx, &TableName::bronze(table), &rows).await
    }
}
