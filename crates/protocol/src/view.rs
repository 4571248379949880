//! What the engine shows: the pipeline's state after each request, and
//! pages of table rows.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::bronze::BatchInfo;
use crate::checks::{CheckLevel, CheckResult};
use crate::explode::{ExplodeSpec, ExplodeStats};
use crate::forget::Erasure;
use crate::history::VersionInfo;
use crate::kafka::TopicView;
use crate::lab::LabView;
use crate::merge::MergeSpec;
use crate::pipeline_def::{AntiPatterns, BronzeMode, GoldModelDef};
use crate::request::Lang;
use crate::rules::{Rule, RuleStat};
use crate::runs::{Checkpoint, ReplayReport, RunInfo, RunMode, RunRecord};
use crate::table::{IntoTableName, Layer, TableName};

/// Rows of each table included in a [`PipelineView`].
pub const PREVIEW_ROWS: usize = 20;

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
    /// `bronze.nyc_taxi_yellow`.
    pub name: TableName,
    /// The table version shown (`None` before the first commit).
    pub version: Option<u64>,
    /// Rows with a `_corrupt_reason` in the whole table (bronze; 0 elsewhere).
    pub corrupt_rows: usize,
    /// Are only those rows listed (`row_count` then counts them)?
    pub corrupt_only: bool,
    /// The name's layer (`bronze`, `silver` or `gold` in JSON), kept for
    /// JavaScript callers.
    pub layer: Layer,
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
    pub name: TableName,
    pub source: TableName,
    pub rules: Vec<RuleView>,
    /// How the table is written by key, if it is (else rows are appended).
    pub merge: Option<MergeSpec>,
    /// A child table: the array of each bronze record it explodes (one row
    /// per element), see [`ExplodeSpec`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explode: Option<ExplodeSpec>,
    /// A child table: what the last good run's explode read (records,
    /// elements, empty / null / missing arrays, unreadable records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explode_stats: Option<ExplodeStats>,
}

/// A gold model with its error, if any.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GoldView {
    pub model: GoldModelDef,
    pub error: Option<String>,
    /// Bronze tables the model reads (only possible with the anti-pattern on).
    pub reads_bronze: Vec<String>,
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
    pub history: BTreeMap<TableName, Vec<VersionInfo>>,
    /// A token of the session's state (16 hex digits): every table's newest
    /// version, the pipeline definition, the Kafka topics and the run mode.
    /// It changes with any of them, so a plan or a replay made on another
    /// state is known to be stale.
    #[serde(default)]
    pub state: String,
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
    /// Results of the successful runs, oldest first (the last [`crate::RUN_HISTORY`]):
    /// each rule's expectation figures and each check's status.
    pub run_history: Vec<RunRecord>,
    pub anti_patterns: AntiPatterns,
    /// Rows of `silver.quarantine` still quarantined (not closed by a
    /// later run); the table's other rows are history.
    pub quarantine_open: usize,
    /// How each bronze table (qualified name) stores records.
    pub bronze_modes: Vec<(TableName, BronzeMode)>,
    /// TIMESTAMP source columns without a declared `time_zone` whose values
    /// had no offset and were taken as UTC, from the last good run
    /// (`[{"bronze_table": "bronze.t", "column": "ts", "without_offset": 1,
    /// "values": 5}]`); only columns with at least one such value.
    #[serde(default)]
    pub read_as_utc: Vec<ReadAsUtcView>,
    /// The instructor's lab: `None` while no anti-pattern is on and no
    /// event was injected (see [`crate::lab`]).
    #[serde(default)]
    pub lab: Option<LabView>,
    /// In a preview ([`crate::wire::FromEngine::Preview`]) only: the
    /// tables (qualified names) whose rows are the run's as computed and
    /// whose new version is being written. No version holds those rows
    /// yet (their `version` is `None`); the request's answer follows with
    /// them committed, or back at their version with the reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub saving: Vec<TableName>,
}

/// A TIMESTAMP source column whose values had no offset and were read as UTC
/// (no `time_zone` declared): shown on the bronze and silver cards.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadAsUtcView {
    /// Qualified: `bronze.t`; or `silver.t` for an element column of a
    /// child table's exploded array, or for a normalization that converts
    /// text to TIMESTAMP (then `column` is `ts (N1)`).
    pub bronze_table: TableName,
    pub column: String,
    /// Values without an offset, taken as UTC.
    pub without_offset: usize,
    /// Non-NULL values of the column read in all (rows that reached silver's rules).
    pub values: usize,
}

impl PipelineView {
    /// The table view named `name`.
    pub fn table(&self, name: impl IntoTableName) -> Option<&TableView> {
        let name = name.into_table_name()?;
        self.tables.iter().find(|t| t.name == name)
    }

    /// Checks of one level.
    pub fn checks_at(&self, level: CheckLevel) -> impl Iterator<Item = &CheckResult> {
        self.checks.iter().filter(move |c| c.level == level)
    }
}
