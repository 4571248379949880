//! Runs: how they read bronze (full or incremental), the watermarks they
//! save, what each measured, and replays.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::checks::CheckStatus;
use crate::rules::RuleStat;
use crate::table::TableName;

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
    /// Tables the last run did not refresh (qualified): a silver table whose
    /// rules failed, what reads it, gold over them; each shows its last good
    /// version (silver tables are independent jobs, seed 003 §6).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_refreshed: Vec<TableName>,
}

/// Runs kept in [`crate::PipelineView::run_history`].
pub const RUN_HISTORY: usize = 30;

/// What one successful run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Run number (the quarantine's `run_id`).
    pub run: u64,
    /// Start of the run, µs since the Unix epoch (UTC).
    pub ts_micros: i64,
    pub incremental: bool,
    pub rules: Vec<RuleStat>,
    /// `(check id, status)` in definition order.
    pub checks: Vec<(String, CheckStatus)>,
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
    /// The bronze table.
    pub bronze_table: TableName,
    /// The new watermark: the largest `_ingest_ts` processed, µs since the Unix epoch (UTC).
    pub last_ingest_ts_micros: i64,
    /// Batches and rows processed past the previous watermark.
    pub batches: usize,
    pub rows: usize,
    pub mode: RunMode,
    /// Run number that saved it.
    pub run: u64,
}

/// The watermark of each bronze table: its newest checkpoint's `last_ingest_ts`.
pub fn watermarks(checkpoints: &[Checkpoint]) -> BTreeMap<TableName, i64> {
    checkpoints
        .iter()
        .map(|c| (c.bronze_table.clone(), c.last_ingest_ts_micros))
        .collect()
}

/// One table compared by a replay.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayTable {
    pub name: TableName,
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
    /// The session state it compared ([`crate::PipelineView::state`]): a
    /// replay whose state is not the view's is older than the last change.
    #[serde(default)]
    pub state: String,
}
