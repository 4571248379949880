//! The playground: one pipeline, its lake and its last good results, driven
//! by [`Request`]s. This is the only stateful type callers hold.
//! Operations live one per file under `playground/` as they move out of
//! this one (`forget.rs`: the right to be forgotten).

mod forget;

pub use forget::{ErasureChange, ErasurePlan, PLAN_SAMPLE_ROWS};
pub use medallion_protocol::view::PREVIEW_ROWS;

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use datafusion::arrow::array::{Array, RecordBatch};
use datafusion::arrow::compute::concat_batches;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::catalog::MemorySchemaProvider;
use datafusion::execution::disk_manager::{DiskManagerBuilder, DiskManagerMode};
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};

use crate::api::{
    diagnostics_for, Checkpoint, ColumnView, Erasure, GoldView, Lang, PipelineView, ReadAsUtcView,
    ReplayReport, ReplayTable, Request, Response, RuleView, RunInfo, RunMode, SilverView,
    TableView,
};
use crate::bronze::kafka::{KafkaMessage, Topic};
use crate::bronze::{
    bronze_batch, bronze_schema, sha256_hex, split_file, table_schema, typed_bronze_batch, Audit,
    BatchInfo, IngestOptions, SplitFile,
};
use crate::checks::{evaluate, CheckResult};
use crate::env::{Clock, IdGenerator, RandomIds, SystemClock};
use crate::error::Diagnostic;
use crate::error::{EngineError, Result};
use crate::lake::log::{schema_string, Action, Add, CommitInfo, Format, MetaData, TableLog};
use crate::lake::versions::{row_diff, Commit, History, KEEP_SNAPSHOTS};
use crate::lake::{decode_parquet, encode_parquet, Lake, LAKE_URL};
use crate::model::{BronzeMode, PipelineDef};
use crate::output::{RunInput, RunOutput};
use crate::pipeline::run;
use crate::query::register_table;
use crate::silver::source::{type_records, validate_schema, ArrowColumnType, ColumnType};

/// Largest file accepted by one ingest (bytes). Larger files are refused
/// before anything is written: the browser tab holds the whole lake in memory.
pub const MAX_FILE_BYTES: usize = 64 * 1024 * 1024;

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
    /// Set while `reingest` appends (the same bytes are expected).
    rereading: bool,
    checks: Vec<CheckResult>,
    diagnostics: Vec<Diagnostic>,
    run_info: RunInfo,
    run_history: Vec<crate::api::RunRecord>,
    /// Hears how far a long request got (see [`Playground::set_progress`]).
    progress: Option<Box<dyn Fn(crate::progress::Progress)>>,
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
        Self::with_env(Arc::new(SystemClock), Arc::new(RandomIds))
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
        let lake = Lake::from_store(new_store());
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
            rereading: false,
            checks: vec![],
            diagnostics: vec![],
            run_history: vec![],
            run_info: RunInfo {
                ok: true,
                duration_ms: 0.0,
                runs: 0,
                errors: vec![],
            },
            progress: None,
        })
    }

    /// From now on `listener` hears how far each long request got: bytes and
    /// records of a file being read, the rule and gold model a run is at,
    /// the table being written. `None`: nobody listens (the default).
    pub fn set_progress(&mut self, listener: Option<Box<dyn Fn(crate::progress::Progress)>>) {
        self.progress = listener;
    }

    fn reporter(&self) -> crate::progress::Reporter<'_> {
        crate::progress::Reporter::new(self.progress.as_deref())
    }

    /// Carries out a request. Never panics; failures come back as [`Response::Error`].
    pub async fn handle(&mut self, request: Request) -> Response {
        if !matches!(request, Request::GetTable { .. } | Request::Snapshot) {
            self.notice = None;
        }
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
            } => self
                .forget(&table, &predicate, &reason, expected_rows)
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
            Request::SetLang { lang } => self.set_lang(lang).await.map(|_| self.snapshot()),
            Request::GetTable {
                table,
                offset,
                limit,
                version,
                corrupt_only,
            } => self
                .table_view_at(&table, offset, limit, version, corrupt_only)
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

    /// Replaces everything with a bundled example and runs it.
    pub async fn load_example(&mut self, name: &str, lang: Lang) -> Result<()> {
        self.load_example_with(name, lang, None).await
    }

    /// [`Self::load_example`] with every bronze table stored in `mode`
    /// (raw, or typed: PERMISSIVE, FAILFAST, DROPMALFORMED).
    pub async fn load_example_with(
        &mut self,
        name: &str,
        lang: Lang,
        mode: Option<BronzeMode>,
    ) -> Result<()> {
        let example = crate::examples::find(name).ok_or_else(|| {
            EngineError::Request(format!(
                "unknown example {name}; known: {}",
                crate::examples::names().join(", ")
            ))
        })?;
        let mut def = (example.definition)(lang);
        if let Some(mode) = mode {
            for b in &mut def.bronze {
                b.mode = mode;
            }
        }
        self.reset(name, def, lang).await?;
        for (table, file, bytes) in (example.files)() {
            self.append(table, file, bytes, &IngestOptions::default())
                .await?;
        }
        // Kafka-fed tables: the example's messages are produced, then polled
        // as one micro-batch.
        for (table, lines) in (example.kafka)() {
            let messages = lines
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| KafkaMessage {
                    key: None,
                    value: (l.trim() != "null").then(|| l.to_string()),
                    producer_ts_micros: None,
                    erased: false,
                })
                .collect();
            self.kafka_produce(table, messages)?;
            self.poll_into_bronze(table, None, false).await?;
        }
        self.run().await;
        Ok(())
    }

    /// Replaces everything with `pipeline` and empty bronze tables (the
    /// scripting entry point: define tables, rules and gold, then ingest).
    /// A source column with an unknown time zone or an unusable declared
    /// format refuses the pipeline (nothing changes), naming table and column.
    pub async fn load_pipeline(&mut self, pipeline: PipelineDef) -> Result<()> {
        for b in &pipeline.bronze {
            validate_schema(&b.schema)
                .map_err(|e| EngineError::Request(format!("bronze.{}: {e}", b.name)))?;
        }
        let lang = self.lang;
        self.reset("", pipeline, lang).await?;
        self.run().await;
        Ok(())
    }

    async fn reset(&mut self, name: &str, def: PipelineDef, lang: Lang) -> Result<()> {
        let lake = Lake::from_store((self.new_store)());
        self.ctx = new_session(&lake)?;
        self.lake = lake;
        self.lang = lang;
        self.example = name.to_string();
        self.def = def;
        self.batches.clear();
        self.bronze.clear();
        self.last_good = None;
        self.history = History::default();
        self.replay = None;
        self.mode = RunMode::Full;
        self.checkpoints.clear();
        self.erasures.clear();
        self.topics = self
            .def
            .bronze
            .iter()
            .filter_map(|b| {
                b.kafka_topic.as_ref().map(|t| {
                    (
                        b.name.clone(),
                        Topic {
                            name: t.clone(),
                            ..Default::default()
                        },
                    )
                })
            })
            .collect();
        self.checks.clear();
        self.run_history.clear();
        self.diagnostics.clear();
        self.run_info = RunInfo {
            ok: true,
            duration_ms: 0.0,
            runs: 0,
            errors: vec![],
        };
        let created = self.clock.now_micros();
        for b in self.def.bronze.clone() {
            self.register_bronze(&b.name).await?;
            let schema = table_schema(&b);
            TableLog::new(self.lake.store(), Lake::table_dir("bronze", &b.name))
                .commit(
                    None,
                    &[
                        Action::CommitInfo(CommitInfo {
                            timestamp: created / 1000,
                            operation: "CREATE TABLE".into(),
                            operation_parameters: [(
                                "description".to_string(),
                                b.description.clone(),
                            )]
                            .into(),
                        }),
                        Action::MetaData(MetaData {
                            id: format!("bronze.{}@{created}", b.name),
                            name: format!("bronze.{}", b.name),
                            format: Format {
                                provider: "parquet".into(),
                                options: Default::default(),
                            },
                            schema_string: schema_string(&schema),
                            partition_columns: vec![],
                            configuration: [(
                                "medallion.appendOnly".to_string(),
                                "true".to_string(),
                            )]
                            .into(),
                            created_time: created / 1000,
                        }),
                    ],
                )
                .await?;
            self.history.commit(
                &format!("bronze.{}", b.name),
                Commit {
                    ts_micros: created,
                    operation: "CREATE TABLE",
                    detail: if b.mode.is_typed() {
                        format!(
                            "append-only, typed ({}): the declared columns + audit columns",
                            b.mode.label()
                        )
                    } else {
                        "append-only, raw_payload + audit columns".to_string()
                    },
                    rows: 0,
                    rows_added: 0,
                    rows_removed: 0,
                },
            );
        }
        Ok(())
    }

    /// The object store of the current lake (tables' Parquet files and their
    /// `_delta_log`s, the landing zone), for reading the commit logs.
    pub fn lake_store(&self) -> Arc<dyn object_store::ObjectStore> {
        self.lake.store()
    }

    /// The pipeline definition currently loaded.
    pub fn definition(&self) -> &PipelineDef {
        &self.def
    }

    /// Appends `bytes` as a new batch of bronze table `table`, then reruns.
    /// Refuses (writing nothing) an unknown table, a file over
    /// [`MAX_FILE_BYTES`], bad options or an unreadable Parquet file. Records
    /// that are not well-formed are kept with a `_corrupt_reason`.
    pub async fn ingest(
        &mut self,
        table: &str,
        file_name: &str,
        bytes: &[u8],
        options: &IngestOptions,
    ) -> Result<BatchInfo> {
        let info = self.append(table, file_name, bytes, options).await?;
        self.run().await;
        Ok(info)
    }

    async fn append(
        &mut self,
        table: &str,
        file_name: &str,
        bytes: &[u8],
        options: &IngestOptions,
    ) -> Result<BatchInfo> {
        let table = table.strip_prefix("bronze.").unwrap_or(table).to_string();
        self.def.bronze_table(&table).ok_or_else(|| {
            EngineError::Ingest(format!(
                "there is no bronze table {table}; drop the file on one of: {}",
                self.def
                    .bronze
                    .iter()
                    .map(|b| format!("bronze.{}", b.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
        if bytes.len() > MAX_FILE_BYTES {
            return Err(EngineError::Ingest(format!(
                "{file_name} is {:.1} MiB; the playground accepts files up to {} MiB. Nothing was written.",
                bytes.len() as f64 / 1048576.0,
                MAX_FILE_BYTES / 1048576
            )));
        }
        // Settings left unset fall back to the table's remembered ones.
        let options = &options.or(&self
            .def
            .bronze_table(&table)
            .map(|b| b.ingest_options.clone())
            .unwrap_or_default());
        // Everything is prepared before the first write, so a refusal leaves no trace.
        let reading = |bytes_read: usize, records: usize| {
            self.reporter().report(crate::progress::Progress::Reading {
                file: file_name.to_string(),
                bytes: bytes_read as u64,
                total_bytes: bytes.len() as u64,
                records: records as u64,
            })
        };
        reading(0, 0);
        let split = split_file(bytes, options)?;
        reading(bytes.len(), split.records.len());
        self.commit_batch(NewBatch {
            table,
            file_name: file_name.to_string(),
            split,
            bytes,
            landing: true,
            options: options.clone(),
            source_files: vec![],
            producer_ts: vec![],
            notes: vec![],
        })
        .await
    }

    /// Writes one batch to bronze: Parquet file, version, batch log entry.
    async fn commit_batch(&mut self, nb: NewBatch<'_>) -> Result<BatchInfo> {
        let NewBatch {
            table,
            file_name,
            split,
            bytes,
            landing,
            options,
            source_files,
            producer_ts,
            notes,
        } = nb;
        let def = self
            .def
            .bronze_table(&table)
            .cloned()
            .ok_or_else(|| EngineError::Ingest(format!("there is no bronze table {table}")))?;
        // Kafka micro-batches name their topic as the source system (seed 000 §3).
        let source_system = match split.format {
            crate::bronze::SourceFormat::Kafka => {
                format!("kafka_{}", file_name.split(':').next().unwrap_or_default())
            }
            _ => def.source_system.clone(),
        };
        let mut split = split;
        let mut notes = notes;
        let mut dropped = 0usize;
        // A declared column the file lacks is never a silent NULL: the batch log says so.
        let absent = crate::silver::source::absent_columns(&def.schema, &split);
        if !absent.is_empty() {
            notes.push(crate::silver::source::absent_columns_note(
                &absent,
                def.mode.is_typed(),
            ));
        }
        // Typed bronze: the declared schema is applied here, in the mode the table declares.
        let typed = if def.mode.is_typed() {
            let mut typed = type_records(&def.schema, &split)?;
            if def.mode == BronzeMode::FailFast {
                if let Some((i, reason)) = typed
                    .reasons
                    .iter()
                    .enumerate()
                    .find_map(|(i, r)| r.as_ref().map(|r| (i, r)))
                {
                    let at = match split.records[i].line {
                        0 => format!("record {}", i + 1),
                        line => format!("line {line}"),
                    };
                    return Err(EngineError::Ingest(format!(
                        "FAILFAST: {at} of {file_name} does not fit the declared schema ({reason}); the whole batch was refused and nothing was written"
                    )));
                }
            }
            if def.mode == BronzeMode::DropMalformed {
                let keep: Vec<bool> = typed.reasons.iter().map(Option::is_none).collect();
                let lost: Vec<String> = split
                    .records
                    .iter()
                    .zip(&keep)
                    .enumerate()
                    .filter(|(_, (_, k))| !**k)
                    .map(|(i, (r, _))| match r.line {
                        0 => format!("record {}", i + 1),
                        line => format!("line {line}"),
                    })
                    .collect();
                dropped = lost.len();
                if dropped > 0 {
                    notes.push(format!(
                        "DROPMALFORMED dropped {dropped} of {} records ({}): they are not in bronze, so no replay can bring them back",
                        split.records.len(),
                        lost.join(", ")
                    ));
                    let mask = datafusion::arrow::array::BooleanArray::from(keep.clone());
                    typed.columns = typed
                        .columns
                        .iter()
                        .map(|c| datafusion::arrow::compute::filter(c.as_ref(), &mask))
                        .collect::<std::result::Result<_, _>>()?;
                    let mut k = keep.iter();
                    split.records.retain(|_| *k.next().unwrap_or(&true));
                    typed.reasons.retain(Option::is_none);
                }
            }
            for (r, reason) in split.records.iter_mut().zip(&typed.reasons) {
                if r.corrupt_reason.is_none() {
                    r.corrupt_reason = reason.clone();
                }
            }
            // The split's count covered malformed records only; typing flags more.
            let flagged = split
                .records
                .iter()
                .filter(|r| r.corrupt_reason.is_some())
                .count();
            split
                .notes
                .retain(|n| !n.contains("records flagged in _corrupt_reason"));
            if flagged > 0 {
                split.notes.insert(
                    0,
                    format!(
                        "{flagged} of {} records flagged in _corrupt_reason (their text kept in _corrupt_record)",
                        split.records.len()
                    ),
                );
            }
            if !typed.undeclared.is_empty() {
                notes.push(format!(
                    "not stored (the declared schema lacks them; a raw bronze would keep them): {}",
                    typed.undeclared.join(", ")
                ));
            }
            notes.extend(typed.read_as_utc.iter().map(|r| {
                format!(
                    "{}: {} of {} values had no offset and were stored as UTC (declare the column's time_zone if they are local times)",
                    r.column, r.without_offset, r.values
                )
            }));
            Some(typed)
        } else {
            None
        };
        let batch_id = self.ids.new_id().to_string();
        let event_ids = (0..split.records.len())
            .map(|_| self.ids.new_id().to_string())
            .collect();
        let ts = self.clock.now_micros();
        let audit = Audit {
            ingest_ts_micros: ts,
            source_system: &source_system,
            source_file: &file_name,
            source_files,
            producer_ts,
            batch_id: &batch_id,
            event_ids,
        };
        let read_as_utc = typed
            .as_ref()
            .map(|t| t.read_as_utc.clone())
            .unwrap_or_default();
        let rows = match typed {
            Some(t) => typed_bronze_batch(&def.schema, t.columns, &split.records, audit)?,
            None => bronze_batch(&split.records, audit)?,
        };
        let table_schema = table_schema(&def);
        let encoded = encode_parquet(table_schema.clone(), std::slice::from_ref(&rows))?;
        let seq = self.bronze.get(&table).map(Vec::len).unwrap_or(0) + 1;
        let path = format!(
            "{}/part-{seq:06}.parquet",
            Lake::table_dir("bronze", &table)
        );
        // What silver sees is what Parquet holds: decode before committing.
        let stored = concat_batches(&table_schema, &decode_parquet(encoded.clone())?)?;
        let landing_path = if landing {
            let p = format!("landing/{table}/{batch_id}/{}", safe_file_name(&file_name));
            self.lake.put_bytes(&p, bytes.to_vec()).await?;
            Some(p)
        } else {
            None
        };
        // The file first, its log entry last: the batch exists only once the
        // entry does (a failure in between leaves the previous version).
        self.lake.put_bytes(&path, encoded.to_vec()).await?;
        let log = TableLog::new(self.lake.store(), Lake::table_dir("bronze", &table));
        let read_version = log.latest().await?;
        log.commit(
            read_version,
            &[
                Action::CommitInfo(CommitInfo {
                    timestamp: ts / 1000,
                    operation: "WRITE".into(),
                    operation_parameters: [
                        ("mode".to_string(), "Append".to_string()),
                        ("batchId".to_string(), batch_id.clone()),
                        ("sourceFile".to_string(), file_name.clone()),
                    ]
                    .into(),
                }),
                Action::Add(Add {
                    path: format!("part-{seq:06}.parquet"),
                    partition_values: Default::default(),
                    size: encoded.len() as u64,
                    modification_time: ts / 1000,
                    data_change: true,
                    stats: Some(format!("{{\"numRecords\":{}}}", stored.num_rows())),
                }),
            ],
        )
        .await?;
        let version = self.history.commit_change(
            &format!("bronze.{table}"),
            ts,
            "APPEND",
            format!("batch {seq}: {file_name}"),
            stored.num_rows(),
            0,
        );
        let mut all_notes = split.notes;
        all_notes.extend(notes);
        let warned_records = split.records.iter().filter(|r| r.warning.is_some()).count();
        if warned_records > 0 {
            all_notes.push(format!(
                "{warned_records} {} a warning in _warning (a JSON object with a duplicate key: silver reads the last value); not quarantined",
                if warned_records == 1 { "record has" } else { "records have" }
            ));
        }
        let sha = sha256_hex(bytes);
        // Reading a landed file again is the same bytes by design: no note then.
        if let Some(same) = (!self.rereading).then_some(()).and(
            self.batches
                .iter()
                .find(|b| b.table == table && b.sha256 == sha && !bytes.is_empty()),
        ) {
            all_notes.push(format!(
                "same content (SHA-256) as batch {} ({}): appended again; bronze keeps duplicates, silver has to remove them",
                same.batch_id.chars().take(8).collect::<String>(),
                same.file_name
            ));
        }
        let info = BatchInfo {
            batch_id,
            table: table.clone(),
            source_system,
            file_name,
            format: split.format,
            dialect: split.dialect,
            encoding: split.encoding,
            header: split.header,
            header_text: split.header_text,
            header_renames: split.header_renames,
            skipped_lines: split.skipped,
            records: stored.num_rows(),
            dropped_records: dropped,
            mode: def.mode,
            erased_records: 0,
            superseded_by: None,
            corrupt_records: split
                .records
                .iter()
                .filter(|r| r.corrupt_reason.is_some())
                .count(),
            warned_records,
            read_as_utc,
            bytes: bytes.len(),
            sha256: sha,
            ingest_ts_micros: ts,
            path,
            landing_path,
            options,
            version,
            notes: all_notes,
        };
        self.batches.push(info.clone());
        self.bronze
            .entry(table.clone())
            .or_default()
            .push((info.clone(), stored));
        self.register_bronze(&table).await?;
        Ok(info)
    }

    fn topic_mut(&mut self, table: &str) -> Result<(String, &mut Topic)> {
        let table = table.strip_prefix("bronze.").unwrap_or(table).to_string();
        if !self.topics.contains_key(&table) {
            let known: Vec<String> = self.topics.keys().map(|t| format!("bronze.{t}")).collect();
            return Err(EngineError::Request(format!(
                "bronze.{table} has no Kafka topic{}",
                if known.is_empty() {
                    String::new()
                } else {
                    format!("; tables with one: {}", known.join(", "))
                }
            )));
        }
        let topic = self
            .topics
            .get_mut(&table)
            .ok_or_else(|| EngineError::Internal("topic vanished".into()))?;
        Ok((table, topic))
    }

    /// Appends messages to the topic of bronze table `table` (producer side).
    pub fn kafka_produce(&mut self, table: &str, messages: Vec<KafkaMessage>) -> Result<()> {
        if messages.is_empty() {
            return Err(EngineError::Request(
                "no messages to produce: write one JSON value per line".into(),
            ));
        }
        let now = self.clock.now_micros();
        let (_, topic) = self.topic_mut(table)?;
        topic.log.extend(messages.into_iter().map(|mut m| {
            m.producer_ts_micros.get_or_insert(now);
            m
        }));
        Ok(())
    }

    /// Polls up to `max` messages (all waiting ones by default) from the
    /// committed offset into bronze as one micro-batch, commits the offset
    /// unless `crash_before_commit`, then reruns. Nothing waiting: an error
    /// that says so, and nothing is written.
    pub async fn kafka_poll(
        &mut self,
        table: &str,
        max: Option<usize>,
        crash_before_commit: bool,
    ) -> Result<BatchInfo> {
        let info = self
            .poll_into_bronze(table, max, crash_before_commit)
            .await?;
        self.run().await;
        Ok(info)
    }

    /// [`Self::kafka_poll`] without the rerun.
    async fn poll_into_bronze(
        &mut self,
        table: &str,
        max: Option<usize>,
        crash_before_commit: bool,
    ) -> Result<BatchInfo> {
        let (table, topic) = self.topic_mut(table)?;
        let from = topic.committed;
        let to = topic
            .log
            .len()
            .min(from.saturating_add(max.unwrap_or(usize::MAX).max(1)));
        if from >= to {
            return Err(EngineError::Request(format!(
                "topic {} has no messages after offset {from}: produce some first",
                topic.name
            )));
        }
        let name = format!("{}:0:{from}-{}", topic.name, to - 1);
        let (split, files, producer) = topic.micro_batch(from, to);
        let payload: Vec<u8> = split
            .records
            .iter()
            .flat_map(|r| r.text.bytes().chain(std::iter::once(b'\n')))
            .collect();
        let notes = if crash_before_commit {
            vec![format!(
                "the consumer crashed after writing this micro-batch and before committing offset {to}: the next poll delivers offsets {from}-{} again (at-least-once)",
                to - 1
            )]
        } else {
            vec![format!("offsets {from}-{} committed", to - 1)]
        };
        let info = self
            .commit_batch(NewBatch {
                table: table.clone(),
                file_name: name,
                split,
                bytes: &payload,
                landing: false,
                options: IngestOptions::default(),
                source_files: files,
                producer_ts: producer,
                notes,
            })
            .await?;
        if !crash_before_commit {
            if let Some(t) = self.topics.get_mut(&table) {
                t.committed = to;
            }
        }
        Ok(info)
    }

    /// Reads a batch's file again from the landing zone with other options
    /// (a delimiter, an encoding) and appends it as a new batch, then runs a
    /// full refresh. The first batch stays (bronze is append-only) but is
    /// superseded: silver reads the new batch instead (`superseded_by`), and
    /// reconciliation counts the old records apart.
    /// With `remember`, `options` become the table's settings for later files.
    pub async fn reingest(
        &mut self,
        batch_id: &str,
        options: &IngestOptions,
        remember: bool,
    ) -> Result<BatchInfo> {
        let old = self
            .batches
            .iter()
            .find(|b| b.batch_id == batch_id)
            .cloned()
            .ok_or_else(|| EngineError::Request(format!("there is no batch {batch_id}")))?;
        // One live read per landed file: reading a superseded read again
        // would bring its records back next to the newer read.
        if let Some(by) = &old.superseded_by {
            return Err(EngineError::Request(format!(
                "batch {batch_id} was read again as batch {by}, which silver reads instead: read batch {by} again"
            )));
        }
        let landing = old.landing_path.clone().ok_or_else(|| {
            EngineError::Request(if old.erased_records > 0 {
                format!("the landed file of batch {batch_id} was deleted by a right-to-be-forgotten request, so it cannot be read again")
            } else {
                format!("batch {batch_id} did not come from a file, so it cannot be read again")
            })
        })?;
        let bytes = self.lake.get_bytes(&landing).await?;
        self.rereading = true;
        let info = self
            .append(&old.table, &old.file_name, &bytes, options)
            .await;
        self.rereading = false;
        let mut info = info?;
        if remember {
            if let Some(b) = self.def.bronze.iter_mut().find(|b| b.name == old.table) {
                b.ingest_options = options.clone();
            }
        }
        // Silver reads the new read of the file instead of the old one.
        let note_old = format!(
            "read again as batch {} with other options: silver reads that batch instead of this one, which stays in bronze",
            info.batch_id
        );
        let note_new = format!(
            "reads the file of batch {batch_id} again: silver reads this batch instead of that one ({} records set aside)",
            old.records
        );
        let stored = self
            .batches
            .iter_mut()
            .chain(self.bronze.values_mut().flatten().map(|(b, _)| b));
        for b in stored {
            if b.batch_id == batch_id {
                b.superseded_by = Some(info.batch_id.clone());
                b.notes.push(note_old.clone());
            } else if b.batch_id == info.batch_id {
                b.notes.push(note_new.clone());
            }
        }
        info.notes.push(note_new);
        // Rows of the old read already in silver leave only in a full refresh.
        self.run_with(false).await;
        Ok(info)
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
            let path = format!("{}/part-000000.parquet", Lake::table_dir("bronze", table));
            self.lake
                .write_parquet(&path, self.bronze_schema_of(table), &[])
                .await?;
        }
        register_table(&self.ctx, &format!("bronze.{table}"), &rows).await
    }

    /// Replaces the rules of `silver_table` (with or without `silver.`) and reruns.
    /// Invalid rules are kept (so they can be fixed) and reported next to their id.
    pub async fn set_rules(
        &mut self,
        silver_table: &str,
        rules: Vec<crate::silver::rules::Rule>,
    ) -> Result<()> {
        let name = silver_table.strip_prefix("silver.").unwrap_or(silver_table);
        let s = self
            .def
            .silver
            .iter_mut()
            .find(|s| s.name == name)
            .ok_or_else(|| EngineError::Request(format!("there is no silver table {name}")))?;
        s.rules.rules = rules;
        self.run().await;
        Ok(())
    }

    /// Replaces the SQL of gold model `model` (with or without `gold.`) and reruns.
    pub async fn set_gold_sql(&mut self, model: &str, sql: &str) -> Result<()> {
        let name = model.strip_prefix("gold.").unwrap_or(model);
        let g = self
            .def
            .gold
            .iter_mut()
            .find(|g| g.name == name)
            .ok_or_else(|| EngineError::Request(format!("there is no gold model {name}")))?;
        g.sql = sql.to_string();
        self.run().await;
        Ok(())
    }

    /// Switches the language of engine-written texts. If the example is
    /// untouched (no rule, SQL or file changed), it is reloaded in that
    /// language so its rationales follow too.
    pub async fn set_lang(&mut self, lang: Lang) -> Result<()> {
        let mode = self.def.bronze.first().map(|b| b.mode);
        // Modes as the example defines them, or all switched to one ("stored as").
        let mut mode_override = None;
        let untouched = crate::examples::find(&self.example).is_some_and(|e| {
            let mut def = (e.definition)(self.lang);
            if def != self.def {
                for b in &mut def.bronze {
                    b.mode = mode.unwrap_or_default();
                }
                mode_override = mode;
            }
            def == self.def && self.batches.len() == (e.files)().len() + (e.kafka)().len()
        });
        let mode = mode_override;
        if untouched && lang != self.lang {
            let example = self.example.clone();
            return self.load_example_with(&example, lang, mode).await;
        }
        // An edited example keeps its edits; texts still as the example wrote
        // them (titles, descriptions, rationales) switch language.
        if let Some(e) = crate::examples::find(&self.example) {
            let (old, new) = ((e.definition)(self.lang), (e.definition)(lang));
            translate_untouched(&mut self.def, &old, &new);
        }
        self.lang = lang;
        if let Some(out) = &self.last_good {
            self.checks = evaluate(&self.ctx, &self.def, out, lang).await;
        }
        Ok(())
    }

    /// Runs the whole pipeline from bronze. On success the results replace the
    /// last good ones; on failure the last good results stay and the errors are
    /// kept for display.
    pub async fn run(&mut self) {
        self.run_with(self.mode == RunMode::Incremental).await
    }

    /// The watermark of each bronze table: the largest `_ingest_ts` a
    /// successful run has processed.
    pub fn watermarks(&self) -> BTreeMap<String, i64> {
        crate::api::watermarks(&self.checkpoints)
    }

    /// Batches past the watermark of their table.
    fn batches_past_watermark(&self) -> HashSet<String> {
        let w = self.watermarks();
        self.batches
            .iter()
            .filter(|b| {
                w.get(&format!("bronze.{}", b.table))
                    .is_none_or(|ts| b.ingest_ts_micros > *ts)
            })
            .map(|b| b.batch_id.clone())
            .collect()
    }

    async fn run_with(&mut self, incremental: bool) {
        let started = web_time::Instant::now();
        self.run_info.runs += 1;
        self.run_info.errors.clear();
        let new_batches = self.batches_past_watermark();
        let result = run(RunInput {
            ctx: &self.ctx,
            def: &self.def,
            bronze: &self.bronze,
            run_id: self.run_info.runs,
            previous: self.last_good.as_ref(),
            new_batches: incremental.then_some(&new_batches),
            progress: self.reporter(),
        })
        .await;
        match result {
            Ok(mut out) => {
                // A failed gold model keeps showing its last good table (marked in the UI).
                for d in &out.gold_errors {
                    let name = format!("gold.{}", d.id);
                    if let Some(old) = self
                        .last_good
                        .as_ref()
                        .and_then(|o| o.tables.iter().find(|t| t.name == name))
                    {
                        out.tables.push(old.clone());
                    }
                }
                let ts = self.clock.now_micros();
                let detail = format!(
                    "run {}{}",
                    self.run_info.runs,
                    if incremental { " (incremental)" } else { "" }
                );
                self.save_watermarks(&new_batches, incremental);
                let written: Vec<_> = out
                    .tables
                    .iter()
                    .filter(|t| !t.name.starts_with("bronze."))
                    .collect();
                for (i, t) in written.iter().enumerate() {
                    self.reporter().report(crate::progress::Progress::Writing {
                        table: t.name.clone(),
                        n: i as u32 + 1,
                        of: written.len() as u32,
                    });
                    if let Err(e) =
                        self.history
                            .commit_snapshot(&t.name, ts, "WRITE", detail.clone(), &t.batch)
                    {
                        self.run_info.errors.push(e.to_string());
                    }
                }
                self.checks = evaluate(&self.ctx, &self.def, &out, self.lang).await;
                self.run_history.push(crate::api::RunRecord {
                    run: self.run_info.runs,
                    ts_micros: ts,
                    incremental,
                    rules: out.rule_stats.clone(),
                    checks: self
                        .checks
                        .iter()
                        .map(|c| (c.id.clone(), c.status))
                        .collect(),
                });
                if self.run_history.len() > crate::api::RUN_HISTORY {
                    self.run_history.remove(0);
                }
                if !out.notes.is_empty() {
                    self.notice = Some(out.notes.join(" "));
                }
                self.diagnostics = std::mem::take(&mut out.gold_errors);
                self.run_info.ok = self.diagnostics.is_empty() && self.run_info.errors.is_empty();
                self.last_good = Some(out);
            }
            Err(diags) => {
                self.run_info.ok = false;
                self.run_info.errors = diags
                    .iter()
                    .filter(|d| d.scope == "pipeline")
                    .map(|d| d.message.clone())
                    .collect();
                self.diagnostics = diags;
            }
        }
        self.run_info.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
    }

    /// Makes version `version` of a silver or gold table current again (a new
    /// `RESTORE` version). The next run rewrites the table from bronze as usual.
    /// Bronze cannot be restored: it is append-only.
    pub async fn restore(&mut self, table: &str, version: u64) -> Result<()> {
        if table.starts_with("bronze.") {
            return Err(EngineError::Request(format!(
                "{table} is append-only: its versions can be read (time travel) but not restored; restore applies to silver and gold tables"
            )));
        }
        let data = self.table_batch_at(table, version)?;
        let out = self
            .last_good
            .as_mut()
            .ok_or_else(|| EngineError::Request("nothing has run yet".into()))?;
        let slot = out
            .tables
            .iter_mut()
            .find(|t| t.name == table)
            .ok_or_else(|| EngineError::Request(format!("there is no table {table}")))?;
        slot.batch = data.clone();
        register_table(&self.ctx, table, &data).await?;
        let ts = self.clock.now_micros();
        self.history.commit_snapshot(
            table,
            ts,
            "RESTORE",
            format!("restore of version {version}"),
            &data,
        )?;
        // Gold follows the restored silver (the next run rebuilds silver from bronze).
        if table.starts_with("silver.") {
            let previous = self.last_good.clone();
            match crate::gold::build_gold(&self.ctx, &self.def, previous.as_ref(), self.reporter())
                .await
            {
                Ok(gold) => {
                    if let Some(out) = self.last_good.as_mut() {
                        for g in gold.tables {
                            self.history.commit_snapshot(
                                &g.name,
                                ts,
                                "WRITE",
                                format!("refresh after the restore of {table}"),
                                &g.batch,
                            )?;
                            match out.tables.iter_mut().find(|t| t.name == g.name) {
                                Some(slot) => *slot = g,
                                None => out.tables.push(g),
                            }
                        }
                        out.gold_reads_bronze = gold.reads_bronze;
                    }
                    self.diagnostics.retain(|d| d.scope != "gold");
                    self.diagnostics.extend(gold.errors);
                }
                Err(d) => self.diagnostics.extend(d),
            }
        }
        if let Some(out) = &self.last_good {
            self.checks = evaluate(&self.ctx, &self.def, out, self.lang).await;
        }
        if self.mode == RunMode::Incremental {
            self.notice = Some(format!(
                "{table} is back at version {version}, but the watermark did not move: batches processed after that version will not be processed again by incremental runs. Run a full refresh to rebuild from bronze (Replay shows the difference)."
            ));
        }
        Ok(())
    }

    /// Appends a checkpoint row for every bronze table whose watermark moves.
    fn save_watermarks(&mut self, processed: &HashSet<String>, incremental: bool) {
        let mut per_table: BTreeMap<String, (i64, usize, usize)> = BTreeMap::new();
        for b in self
            .batches
            .iter()
            .filter(|b| processed.contains(&b.batch_id))
        {
            let e = per_table
                .entry(format!("bronze.{}", b.table))
                .or_insert((i64::MIN, 0, 0));
            e.0 = e.0.max(b.ingest_ts_micros);
            e.1 += 1;
            e.2 += b.records;
        }
        for (table, (ts, batches, rows)) in per_table {
            self.checkpoints.push(Checkpoint {
                bronze_table: table,
                last_ingest_ts_micros: ts,
                batches,
                rows,
                mode: if incremental {
                    RunMode::Incremental
                } else {
                    RunMode::Full
                },
                run: self.run_info.runs,
            });
        }
    }

    /// Rebuilds every silver and gold table from bronze alone, in a fresh lake
    /// and session, and compares the result with the current tables row by
    /// row (as multisets). The current tables are not changed.
    pub async fn replay(&mut self) -> Result<ReplayReport> {
        let report = match self.rebuild(&self.bronze).await {
            Err(error) => ReplayReport {
                identical: false,
                tables: vec![],
                error: Some(error),
            },
            Ok(out) => {
                let mut tables = Vec::new();
                for t in out.tables.iter().filter(|t| !t.name.starts_with("bronze.")) {
                    let mut current = self.table_batch(&t.name);
                    let mut t = t.clone();
                    // The quarantine is history; a rebuild reproduces its open rows.
                    if t.name == "silver.quarantine" {
                        t.batch = crate::silver::quarantine::open_quarantine(&t.batch)?;
                        current = current
                            .map(|c| crate::silver::quarantine::open_quarantine(&c))
                            .transpose()?;
                    }
                    let (only_replayed, only_current) = match &current {
                        Some(c) => row_diff(c, &t.batch)?,
                        None => (t.batch.num_rows(), 0),
                    };
                    tables.push(ReplayTable {
                        name: t.name.clone(),
                        current_rows: current.as_ref().map(|c| c.num_rows()).unwrap_or(0),
                        replayed_rows: t.batch.num_rows(),
                        only_current,
                        only_replayed,
                    });
                }
                let error = (!out.gold_errors.is_empty()).then(|| {
                    out.gold_errors
                        .iter()
                        .map(|d| format!("gold.{}: {}", d.id, d.message))
                        .collect::<Vec<_>>()
                        .join("; ")
                });
                ReplayReport {
                    identical: error.is_none()
                        && tables
                            .iter()
                            .all(|t| t.only_current == 0 && t.only_replayed == 0),
                    tables,
                    error,
                }
            }
        };
        self.replay = Some(report.clone());
        Ok(report)
    }

    /// Silver, quarantine and gold built from `bronze` alone (a full
    /// refresh) in a fresh lake and session; the current state is not
    /// touched. Errors: the rule and pipeline diagnostics, joined.
    async fn rebuild(
        &self,
        bronze: &forget::BronzeTables,
    ) -> std::result::Result<RunOutput, String> {
        let setup = async {
            let lake = Lake::default();
            let ctx = new_session(&lake)?;
            for b in &self.def.bronze {
                let batches = bronze.get(&b.name).map(Vec::as_slice).unwrap_or(&[]);
                let rows: Vec<RecordBatch> = batches.iter().map(|(_, r)| r.clone()).collect();
                let path = format!("{}/part-000001.parquet", Lake::table_dir("bronze", &b.name));
                let schema = table_schema(b);
                lake.write_parquet(&path, schema.clone(), &rows).await?;
                let all = concat_batches(&schema, &rows)?;
                register_table(&ctx, &format!("bronze.{}", b.name), &all).await?;
            }
            Ok::<_, EngineError>(ctx)
        };
        let ctx = setup.await.map_err(|e| e.to_string())?;
        run(RunInput {
            ctx: &ctx,
            def: &self.def,
            bronze,
            run_id: 1,
            previous: None,
            new_batches: None,
            progress: self.reporter(),
        })
        .await
        .map_err(|diags| {
            diags
                .iter()
                .map(|d| d.message.clone())
                .collect::<Vec<_>>()
                .join("; ")
        })
    }

    /// The column rule `st` works on (its id when the rule is gone).
    fn rule_column(&self, st: &crate::silver::rules::RuleStat) -> String {
        self.def
            .silver
            .iter()
            .filter(|s| s.name == st.silver_table)
            .flat_map(|s| &s.rules.rules)
            .find(|r| r.id == st.rule_id)
            .map(|r| r.column.trim().to_string())
            .unwrap_or_else(|| st.rule_id.clone())
    }

    /// The row trail of row `row` of `table` (see [`crate::trail`]).
    pub async fn trail(&self, table: &str, row: usize) -> Result<crate::trail::RowTrail> {
        let out = self
            .last_good
            .as_ref()
            .ok_or_else(|| EngineError::Request("nothing has run yet".into()))?;
        crate::trail::trail(
            crate::trail::TrailInput {
                ctx: &self.ctx,
                def: &self.def,
                bronze: &self.bronze,
                out,
            },
            table,
            row,
        )
        .await
        .map_err(EngineError::Request)
    }

    /// Everything the UI shows, with the first [`PREVIEW_ROWS`] rows of each table.
    pub fn view(&self) -> PipelineView {
        let mut tables = Vec::new();
        for b in &self.def.bronze {
            let name = format!("bronze.{}", b.name);
            if let Ok(v) = self.table_view(&name, 0, PREVIEW_ROWS) {
                tables.push(v);
            }
        }
        if let Some(out) = &self.last_good {
            for t in out.tables.iter().filter(|t| !t.name.starts_with("bronze.")) {
                if let Ok(v) = self.table_view(&t.name, 0, PREVIEW_ROWS) {
                    tables.push(v);
                }
            }
        }
        let stats = self
            .last_good
            .as_ref()
            .map(|o| o.rule_stats.as_slice())
            .unwrap_or(&[]);
        let silver = self
            .def
            .silver
            .iter()
            .map(|s| SilverView {
                name: format!("silver.{}", s.name),
                source: format!("bronze.{}", s.source),
                rules: s
                    .rules
                    .rules
                    .iter()
                    .map(|r| RuleView {
                        rule: r.clone(),
                        stat: if r.enabled {
                            stats
                                .iter()
                                .find(|st| st.rule_id == r.id && st.silver_table == s.name)
                                .cloned()
                        } else {
                            None
                        },
                        error: diagnostics_for(
                            self.diagnostics.iter().filter(|d| d.table == s.name),
                            "rule",
                            &r.id,
                        ),
                    })
                    .collect(),
                merge: s.merge.clone(),
                explode: s.explode.clone(),
                explode_stats: self
                    .last_good
                    .as_ref()
                    .and_then(|o| o.exploded.get(&format!("silver.{}", s.name)).copied()),
            })
            .collect();
        let gold = self
            .def
            .gold
            .iter()
            .map(|g| GoldView {
                model: g.clone(),
                error: diagnostics_for(self.diagnostics.iter(), "gold", &g.name),
                reads_bronze: self
                    .last_good
                    .as_ref()
                    .and_then(|o| o.gold_reads_bronze.get(&g.name).cloned())
                    .unwrap_or_default(),
            })
            .collect();
        PipelineView {
            example: self.example.clone(),
            title: self.def.title.clone(),
            lang: self.lang,
            tables,
            silver,
            gold,
            checks: self.checks.clone(),
            run_history: self.run_history.clone(),
            anti_patterns: self.def.anti_patterns,
            quarantine_open: self
                .last_good
                .as_ref()
                .and_then(|o| o.table("silver.quarantine"))
                .and_then(|q| q.column_by_name("closed_in_run"))
                .map_or(0, |r| r.null_count()),
            batches: self.batches.clone(),
            history: self.history.all(),
            replay: self.replay.clone(),
            run_mode: self.mode,
            bronze_mode: self.def.bronze.first().map(|b| b.mode).unwrap_or_default(),
            bronze_modes: self
                .def
                .bronze
                .iter()
                .map(|b| (format!("bronze.{}", b.name), b.mode))
                .collect(),
            read_as_utc: self
                .last_good
                .iter()
                .flat_map(|o| &o.read_as_utc)
                .flat_map(|(table, cols)| {
                    cols.iter().map(move |r| ReadAsUtcView {
                        bronze_table: format!("bronze.{table}"),
                        column: r.column.clone(),
                        without_offset: r.without_offset,
                        values: r.values,
                    })
                })
                // Element columns of exploded arrays (child silver tables).
                .chain(
                    self.last_good
                        .iter()
                        .flat_map(|o| &o.exploded_read_as_utc)
                        .flat_map(|(table, cols)| {
                            cols.iter().map(move |r| ReadAsUtcView {
                                bronze_table: table.clone(),
                                column: r.column.clone(),
                                without_offset: r.without_offset,
                                values: r.values,
                            })
                        }),
                )
                // Normalizations that convert text to TIMESTAMP read the same way.
                .chain(
                    self.last_good
                        .iter()
                        .flat_map(|o| &o.rule_stats)
                        .filter(|st| st.read_as_utc > 0)
                        .map(|st| ReadAsUtcView {
                            bronze_table: format!("silver.{}", st.silver_table),
                            column: format!("{} ({})", self.rule_column(st), st.rule_id),
                            without_offset: st.read_as_utc,
                            values: st.checked,
                        }),
                )
                .collect(),
            checkpoints: self.checkpoints.clone(),
            topics: self.topics.iter().map(|(t, topic)| topic.view(t)).collect(),
            erasures: self.erasures.clone(),
            notice: self.notice.clone(),
            run: self.run_info.clone(),
        }
    }

    fn table_batch(&self, name: &str) -> Option<RecordBatch> {
        if let Some(t) = name.strip_prefix("bronze.") {
            self.def.bronze_table(t)?;
            return self.bronze_rows(t, None).ok();
        }
        self.last_good.as_ref()?.table(name).cloned()
    }

    /// Rows `offset..offset+limit` of the current version of table `name` (qualified) as text.
    pub fn table_view(&self, name: &str, offset: usize, limit: usize) -> Result<TableView> {
        self.table_view_at(name, offset, limit, None, false)
    }

    /// The data of `name` at `version` (time travel), as kept in its history.
    fn table_batch_at(&self, name: &str, version: u64) -> Result<RecordBatch> {
        let versions = self.history.versions(name);
        let newest = versions
            .last()
            .map(|v| v.version)
            .ok_or_else(|| EngineError::Request(format!("there is no table {name}")))?;
        if version > newest {
            return Err(EngineError::Request(format!(
                "{name} has no version {version}; the newest is {newest}"
            )));
        }
        if let Some(t) = name.strip_prefix("bronze.") {
            return self.bronze_rows(t, Some(version));
        }
        self.history.snapshot(name, version).cloned().ok_or_else(|| {
            EngineError::Request(format!(
                "version {version} of {name} has expired: only the newest {KEEP_SNAPSHOTS} snapshots of a table keep their data"
            ))
        })
    }

    /// Like [`Self::table_view`], at an earlier `version` when given (time travel).
    pub fn table_view_at(
        &self,
        name: &str,
        offset: usize,
        limit: usize,
        version: Option<u64>,
        corrupt_only: bool,
    ) -> Result<TableView> {
        let batch = match version {
            Some(v) => self.table_batch_at(name, v)?,
            None => self
                .table_batch(name)
                .ok_or_else(|| EngineError::Request(format!("there is no table {name}")))?,
        };
        // Bronze rows flagged at ingest (the `_corrupt_reason` column is set).
        let flagged = batch
            .column_by_name("_corrupt_reason")
            .map(|c| datafusion::arrow::compute::is_not_null(c.as_ref()))
            .transpose()?;
        let corrupt_rows = flagged.as_ref().map(|f| f.true_count()).unwrap_or(0);
        let batch = match (&flagged, corrupt_only) {
            (Some(mask), true) => datafusion::arrow::compute::filter_record_batch(&batch, mask)?,
            _ => batch,
        };
        let layer = name.split('.').next().unwrap_or_default().to_string();
        let description = self.describe(name);
        let schema = batch.schema();
        let columns = schema
            .fields()
            .iter()
            .map(|f| ColumnView {
                name: f.name().clone(),
                data_type: ColumnType::from_arrow(f.data_type())
                    .map(|t| t.sql_name().to_string())
                    .unwrap_or_else(|| sql_type_name(f.data_type())),
            })
            .collect();
        let start = offset.min(batch.num_rows());
        let len = limit.min(batch.num_rows() - start);
        let page = batch.slice(start, len);
        let opts = FormatOptions::default()
            .with_timestamp_format(Some("%Y-%m-%d %H:%M:%S%.f"))
            .with_timestamp_tz_format(Some("%Y-%m-%d %H:%M:%S%.f UTC"));
        let formatters: Vec<_> = page
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &opts))
            .collect::<std::result::Result<_, _>>()?;
        let rows = (0..page.num_rows())
            .map(|r| {
                page.columns()
                    .iter()
                    .zip(&formatters)
                    .map(|(c, f)| {
                        if c.is_null(r) {
                            None
                        } else {
                            Some(f.value(r).to_string())
                        }
                    })
                    .collect()
            })
            .collect();
        Ok(TableView {
            name: name.to_string(),
            version: version.or_else(|| self.history.current(name)),
            corrupt_rows,
            corrupt_only,
            layer,
            description,
            columns,
            row_count: batch.num_rows(),
            offset: start,
            rows,
        })
    }

    fn describe(&self, name: &str) -> String {
        let (layer, table) = name.split_once('.').unwrap_or(("", name));
        let ru = self.lang == Lang::Ru;
        match layer {
            "bronze" => self
                .def
                .bronze_table(table)
                .map(|b| b.description.clone())
                .unwrap_or_default(),
            "silver" if table == "quarantine" => if ru {
                "Строки, не дошедшие до silver: id правила и причина, исходный текст из bronze."
            } else {
                "Rows that did not reach silver: the rule id and reason, with the bronze text."
            }
            .to_string(),
            "silver" => self
                .def
                .silver
                .iter()
                .find(|s| s.name == table)
                .map(|s| s.description.clone())
                .unwrap_or_default(),
            "gold" => self
                .def
                .gold
                .iter()
                .find(|g| g.name == table)
                .map(|g| g.description.clone())
                .unwrap_or_default(),
            _ => String::new(),
        }
    }

    /// The registry of `silver_table` as the markdown table of seed 002 section 3.
    pub fn export_rules(&self, silver_table: &str) -> Result<String> {
        let name = silver_table.strip_prefix("silver.").unwrap_or(silver_table);
        self.def
            .silver
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.rules.to_markdown())
            .ok_or_else(|| EngineError::Request(format!("there is no silver table {name}")))
    }
}

fn sql_type_name(dt: &datafusion::arrow::datatypes::DataType) -> String {
    use datafusion::arrow::datatypes::DataType as D;
    match dt {
        D::Timestamp(_, Some(tz)) => format!("TIMESTAMP ({tz})"),
        D::Int8 | D::Int16 => "SMALLINT".into(),
        D::UInt32 | D::UInt64 | D::Int64 => "BIGINT".into(),
        D::Float32 => "FLOAT".into(),
        D::Decimal128(p, s) => format!("DECIMAL({p},{s})"),
        other => other.to_string(),
    }
}

/// One batch about to be written to bronze.
struct NewBatch<'a> {
    /// Bronze table without the layer.
    table: String,
    file_name: String,
    split: SplitFile,
    /// What arrived (its size and SHA-256 go to the batch log).
    bytes: &'a [u8],
    /// Keep `bytes` in the landing zone (files), so they can be read again.
    landing: bool,
    options: IngestOptions,
    /// Per-record `_source_file` (Kafka `topic:partition:offset`), or empty.
    source_files: Vec<String>,
    /// Per-record producer time (Kafka), or empty.
    producer_ts: Vec<Option<i64>>,
    notes: Vec<String>,
}

/// A file name usable as one object-store path segment.
/// Texts of `def` that still read as in `old` (the example in the previous
/// language) become `new`'s; texts the user edited stay.
fn translate_untouched(def: &mut PipelineDef, old: &PipelineDef, new: &PipelineDef) {
    fn swap(text: &mut String, old: Option<&String>, new: Option<&String>) {
        if let (Some(o), Some(n)) = (old, new) {
            if text == o {
                *text = n.clone();
            }
        }
    }
    swap(&mut def.title, Some(&old.title), Some(&new.title));
    for b in &mut def.bronze {
        let [o, n] = [old, new].map(|d| d.bronze.iter().find(|x| x.name == b.name));
        swap(
            &mut b.description,
            o.map(|x| &x.description),
            n.map(|x| &x.description),
        );
    }
    for s in &mut def.silver {
        let [o, n] = [old, new].map(|d| d.silver.iter().find(|x| x.name == s.name));
        swap(
            &mut s.description,
            o.map(|x| &x.description),
            n.map(|x| &x.description),
        );
        for r in &mut s.rules.rules {
            let [ro, rn] =
                [o, n].map(|t| t.and_then(|t| t.rules.rules.iter().find(|y| y.id == r.id)));
            swap(
                &mut r.rationale,
                ro.map(|x| &x.rationale),
                rn.map(|x| &x.rationale),
            );
        }
    }
    for g in &mut def.gold {
        let [o, n] = [old, new].map(|d| d.gold.iter().find(|x| x.name == g.name));
        swap(
            &mut g.description,
            o.map(|x| &x.description),
            n.map(|x| &x.description),
        );
    }
    for c in &mut def.checks {
        let [o, n] = [old, new].map(|d| d.checks.iter().find(|x| x.id == c.id));
        swap(
            &mut c.description,
            o.map(|x| &x.description),
            n.map(|x| &x.description),
        );
    }
}

fn safe_file_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if cleaned.is_empty() {
        "file".to_string()
    } else {
        cleaned
    }
}
