//! The boundary between the engine and its callers (the Yew UI, the
//! wasm-bindgen facade, tests): plain serde requests and responses, never
//! Arrow or DataFusion types, so the engine can move into a web worker
//! without touching the panels.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::bronze::{BatchInfo, IngestOptions};
use crate::checks::CheckResult;
use crate::kafka::{KafkaMessage, TopicView};
use crate::model::{BronzeMode, CheckLevel, GoldModelDef, PipelineDef};
use crate::pipeline::{Diagnostic, RuleStat};
use crate::rules::Rule;
use crate::versions::VersionInfo;

/// Language of the texts the engine writes (check observations, example rationales).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    #[default]
    En,
    Ru,
}

/// What a caller can ask.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Request {
    /// Replace everything with a bundled example (see [`crate::example::EXAMPLES`]) and run it.
    LoadExample {
        example: String,
        lang: Lang,
        /// Store every bronze table of the example in this mode (default: as the example declares, raw).
        #[serde(default)]
        bronze_mode: Option<BronzeMode>,
    },
    /// Replace everything with this pipeline (empty bronze tables) and run it.
    LoadPipeline { pipeline: PipelineDef },
    /// Append a file to a bronze table as a new batch, then rerun.
    Ingest {
        /// Bronze table, with or without the `bronze.` prefix.
        table: String,
        file_name: String,
        bytes: Vec<u8>,
        /// Format and CSV dialect overrides; anything unset is detected.
        #[serde(default)]
        options: IngestOptions,
    },
    /// Read a batch's file again from the landing zone with other options and
    /// append it as a new batch (the old batch stays), then rerun.
    Reingest {
        batch_id: String,
        #[serde(default)]
        options: IngestOptions,
        /// Keep `options` as the table's settings for its next files.
        #[serde(default)]
        remember: bool,
    },
    /// Make an earlier version of a silver or gold table current (a new RESTORE version).
    Restore { table: String, version: u64 },
    /// Rebuild silver and gold from bronze alone and compare with the current tables.
    Replay,
    /// Append messages to the Kafka topic in front of a bronze table (nothing reaches bronze yet).
    KafkaProduce {
        table: String,
        messages: Vec<KafkaMessage>,
    },
    /// Poll up to `max` messages from the committed offset into bronze as one
    /// micro-batch, then commit, then rerun. With `crash_before_commit` the
    /// consumer dies after writing and before committing: the next poll
    /// delivers the same messages again.
    KafkaPoll {
        table: String,
        #[serde(default)]
        max: Option<usize>,
        #[serde(default)]
        crash_before_commit: bool,
    },
    /// Right to be forgotten (seed 000 §7): delete the bronze rows where the SQL
    /// `predicate` over bronze's columns is TRUE, from every version, with the
    /// landed files they came from and silver / gold snapshots that held them.
    /// Logged with `reason`; then a full refresh.
    Forget {
        table: String,
        predicate: String,
        reason: String,
        /// The bronze row count the plan showed ([`Request::PlanForget`]):
        /// the delete is refused if the condition now matches another number.
        #[serde(default)]
        expected_rows: Option<usize>,
    },
    /// What a [`Request::Forget`] with this condition would erase, per table
    /// with a sample of the rows (a dry run; nothing changes). Answered with
    /// [`Response::ErasurePlan`].
    PlanForget { table: String, predicate: String },
    /// Choose how runs process bronze: everything, or only batches past the watermark.
    SetRunMode { mode: RunMode },
    /// Run now, in the current mode; `full_refresh` rebuilds from all of bronze once.
    Run {
        #[serde(default)]
        full_refresh: bool,
    },
    /// Replace the rule registry of a silver table, then rerun.
    SetRules {
        silver_table: String,
        rules: Vec<Rule>,
    },
    /// Replace a gold model's SQL, then rerun.
    SetGoldSql { model: String, sql: String },
    /// Switch anti-patterns on or off (seed 003 §6), then rerun.
    SetAntiPatterns {
        anti_patterns: crate::model::AntiPatterns,
    },
    /// Change the language of engine-written texts.
    SetLang { lang: Lang },
    /// A page of one table's rows.
    GetTable {
        table: String,
        offset: usize,
        limit: usize,
        /// An earlier version (time travel); `None` is the current one.
        #[serde(default)]
        version: Option<u64>,
        /// Only bronze rows with a `_corrupt_reason`.
        #[serde(default)]
        corrupt_only: bool,
    },
    /// The rule registry of a silver table as a markdown table.
    ExportRules { silver_table: String },
    /// The row trail of row `row` (0-based, in the current version) of a
    /// silver, quarantine or gold table: its bronze records and every rule's
    /// outcome on them, or the silver rows behind a gold row.
    Trail { table: String, row: usize },
    /// The current state, unchanged.
    Snapshot,
}

/// What the engine answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Response {
    Snapshot(PipelineView),
    Table(TableView),
    /// Answer to [`Request::Trail`].
    Trail(crate::trail::RowTrail),
    /// Answer to [`Request::PlanForget`].
    ErasurePlan(crate::playground::ErasurePlan),
    Text {
        text: String,
    },
    /// The request could not be carried out; nothing changed.
    Error {
        message: String,
    },
}

/// A column of a table view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnView {
    pub name: String,
    /// SQL-style type name (`BIGINT`, `DOUBLE`, `STRING`, `TIMESTAMP`, ...).
    pub data_type: String,
}

/// Rows of a table, as text for display.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableView {
    /// Qualified name: `bronze.nyc_taxi_yellow`.
    pub name: String,
    /// The table version shown (`None` before the first commit).
    pub version: Option<u64>,
    /// Rows with a `_corrupt_reason` in the whole table (bronze; 0 elsewhere).
    pub corrupt_rows: usize,
    /// Are only those rows listed (`row_count` then counts them)?
    pub corrupt_only: bool,
    /// `bronze`, `silver` or `gold`.
    pub layer: String,
    pub description: String,
    pub columns: Vec<ColumnView>,
    /// All rows of the table (not only those in `rows`).
    pub row_count: usize,
    /// Index of the first row in `rows`.
    pub offset: usize,
    /// Cell texts; `None` is SQL NULL.
    pub rows: Vec<Vec<Option<String>>>,
}

/// A rule with what it did in the last run and its error, if any.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleView {
    pub rule: Rule,
    /// From the last successful run; `None` if the rule was off or has never run.
    pub stat: Option<RuleStat>,
    pub error: Option<String>,
}

/// A silver table's registry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SilverView {
    pub name: String,
    pub source: String,
    pub rules: Vec<RuleView>,
    /// How the table is written by key, if it is (else rows are appended).
    pub merge: Option<crate::merge::MergeSpec>,
    /// A child table: the array of each bronze record it explodes (one row
    /// per element), see [`crate::explode::ExplodeSpec`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explode: Option<crate::explode::ExplodeSpec>,
    /// A child table: what the last good run's explode read (records,
    /// elements, empty / null / missing arrays, unreadable records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explode_stats: Option<crate::explode::ExplodeStats>,
}

/// A gold model with its error, if any.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GoldView {
    pub model: GoldModelDef,
    pub error: Option<String>,
    /// Bronze tables the model reads (only possible with the anti-pattern on).
    pub reads_bronze: Vec<String>,
}

/// About the last run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// Did the last run succeed? If not, tables and checks are from the last good run.
    pub ok: bool,
    /// Wall time of the last run, milliseconds.
    pub duration_ms: f64,
    /// Runs so far (successful or not).
    pub runs: u64,
    /// Errors not tied to a rule or gold model.
    pub errors: Vec<String>,
}

/// Everything the UI shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PipelineView {
    pub example: String,
    pub title: String,
    pub lang: Lang,
    /// Bronze tables, silver tables, `silver.quarantine`, gold tables, each with its first rows.
    pub tables: Vec<TableView>,
    pub silver: Vec<SilverView>,
    pub gold: Vec<GoldView>,
    pub checks: Vec<CheckResult>,
    pub batches: Vec<BatchInfo>,
    /// Every table's versions, oldest first, by qualified name.
    pub history: BTreeMap<String, Vec<VersionInfo>>,
    /// Result of the last replay, if one was asked for.
    pub replay: Option<ReplayReport>,
    pub run_mode: RunMode,
    /// How the bronze tables store records (the mode of the first one).
    pub bronze_mode: BronzeMode,
    /// `meta.bronze_checkpoints`, oldest first.
    pub checkpoints: Vec<Checkpoint>,
    /// Kafka topics in front of bronze tables.
    pub topics: Vec<TopicView>,
    /// Right-to-be-forgotten deletes, oldest first.
    pub erasures: Vec<Erasure>,
    /// A warning about what the last request did (e.g. a restore in incremental mode).
    pub notice: Option<String>,
    pub run: RunInfo,
    /// Results of the successful runs, oldest first (the last [`RUN_HISTORY`]):
    /// each rule's expectation figures and each check's status.
    pub run_history: Vec<RunRecord>,
    pub anti_patterns: crate::model::AntiPatterns,
    /// Rows of `silver.quarantine` still quarantined (not closed by a
    /// later run); the table's other rows are history.
    pub quarantine_open: usize,
    /// How each bronze table (qualified name) stores records.
    pub bronze_modes: Vec<(String, BronzeMode)>,
    /// TIMESTAMP source columns without a declared `time_zone` whose values
    /// had no offset and were taken as UTC, from the last good run
    /// (`[{"bronze_table": "bronze.t", "column": "ts", "without_offset": 1,
    /// "values": 5}]`); only columns with at least one such value.
    #[serde(default)]
    pub read_as_utc: Vec<ReadAsUtcView>,
}

/// A TIMESTAMP source column whose values had no offset and were read as UTC
/// (no `time_zone` declared): shown on the bronze and silver cards.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadAsUtcView {
    /// Qualified: `bronze.t`; or `silver.t` for an element column of a
    /// child table's exploded array, or for a normalization that converts
    /// text to TIMESTAMP (then `column` is `ts (N1)`).
    pub bronze_table: String,
    pub column: String,
    /// Values without an offset, taken as UTC.
    pub without_offset: usize,
    /// Non-NULL values of the column read in all (rows that reached silver's rules).
    pub values: usize,
}

/// Runs kept in [`PipelineView::run_history`].
pub const RUN_HISTORY: usize = 30;

/// What one successful run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Run number (the quarantine's `run_id`).
    pub run: u64,
    /// Start of the run, µs since the Unix epoch (UTC).
    pub ts_micros: i64,
    pub incremental: bool,
    pub rules: Vec<crate::pipeline::RuleStat>,
    /// `(check id, status)` in definition order.
    pub checks: Vec<(String, crate::checks::CheckStatus)>,
}

/// How a run reads bronze (seed 000 §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RunMode {
    /// Every run rebuilds silver and gold from all of bronze (what a learner
    /// editing rules wants: every edit shows on all the data).
    #[default]
    Full,
    /// A run processes only batches whose `_ingest_ts` is past the watermark
    /// and appends their rows to silver and the quarantine; the watermark
    /// advances only after the run succeeds.
    Incremental,
}

/// One row of `meta.bronze_checkpoints`: the watermark a successful run saved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// Bronze table (qualified).
    pub bronze_table: String,
    /// The new watermark: the largest `_ingest_ts` processed, µs since the Unix epoch (UTC).
    pub last_ingest_ts_micros: i64,
    /// Batches and rows processed past the previous watermark.
    pub batches: usize,
    pub rows: usize,
    pub mode: RunMode,
    /// Run number that saved it.
    pub run: u64,
}

/// A logged right-to-be-forgotten delete from bronze.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Erasure {
    /// Qualified bronze table.
    pub table: String,
    pub predicate: String,
    /// Why (a request reference, the law).
    pub reason: String,
    pub rows: usize,
    /// Batches that lost rows (their landed files were deleted too).
    pub batches: usize,
    /// Messages of the Kafka topic in front of the table that matched and
    /// were erased too (they would come back with the next poll otherwise).
    pub messages: usize,
    /// When, µs since the Unix epoch (UTC).
    pub ts_micros: i64,
    /// Bronze version the delete created.
    pub version: u64,
}

/// The watermark of each bronze table: its newest checkpoint's `last_ingest_ts`.
pub fn watermarks(checkpoints: &[Checkpoint]) -> BTreeMap<String, i64> {
    checkpoints
        .iter()
        .map(|c| (c.bronze_table.clone(), c.last_ingest_ts_micros))
        .collect()
}

/// One table compared by a replay.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayTable {
    /// Qualified name.
    pub name: String,
    pub current_rows: usize,
    pub replayed_rows: usize,
    /// Rows of the current table the replay did not produce (multiset difference).
    pub only_current: usize,
    /// Rows the replay produced that the current table lacks.
    pub only_replayed: usize,
}

/// Result of rebuilding silver and gold from bronze alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayReport {
    /// Every table equal, row for row, and no error.
    pub identical: bool,
    pub tables: Vec<ReplayTable>,
    /// Why the replay could not build something.
    pub error: Option<String>,
}

impl PipelineView {
    /// The table view named `name` (qualified).
    pub fn table(&self, name: &str) -> Option<&TableView> {
        self.tables.iter().find(|t| t.name == name)
    }

    /// Checks of one level.
    pub fn checks_at(&self, level: CheckLevel) -> impl Iterator<Item = &CheckResult> {
        self.checks.iter().filter(move |c| c.level == level)
    }
}

pub(crate) fn diagnostics_for<'a>(
    diags: impl Iterator<Item = &'a Diagnostic>,
    scope: &'a str,
    id: &'a str,
) -> Option<String> {
    let msgs: Vec<&str> = diags
        .filter(|d| d.scope == scope && d.id == id)
        .map(|d| d.message.as_str())
        .collect();
    (!msgs.is_empty()).then(|| msgs.join("; "))
}
