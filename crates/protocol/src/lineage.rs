//! Row trails: the bronze records behind a silver, quarantine or gold row
//! and what every rule did to them.

use serde::{Deserialize, Serialize};

use crate::rules::RuleKind;
use crate::table::TableName;

/// The trail of one row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowTrail {
    /// The row's table.
    pub table: TableName,
    /// The row, as `column=value, ...`.
    pub row: String,
    /// Bronze records behind a silver or quarantine row, in bronze order.
    pub records: Vec<TrailRecord>,
    /// Silver rows behind a gold row.
    pub silver_rows: Vec<TrailSilverRow>,
    /// How the trail was found, or why it is partial.
    pub note: Option<String>,
}

/// One bronze record and what happened to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrailRecord {
    pub event_id: String,
    pub batch_id: String,
    pub source_file: String,
    /// The batch's file and when it was ingested (µs since the Unix epoch, UTC).
    pub ingest_ts_micros: Option<i64>,
    pub raw_payload: String,
    /// `kept` (this record is the row), `duplicate`, `superseded`, `deleted`, `quarantined`.
    pub role: String,
    /// Every rule's outcome on it, in execution order (`parse` first when it could not be read).
    pub steps: Vec<TraceEntry>,
}

/// A silver row a gold row was computed from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrailSilverRow {
    /// The silver table.
    pub table: TableName,
    pub event_id: String,
    /// The row, as `column=value, ...`.
    pub row: String,
}

/// What one rule did to one row, for the row trail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceEntry {
    /// Position of the row in the traced input (internal).
    #[serde(skip)]
    pub arrival: i64,
    pub rule_id: String,
    pub kind: RuleKind,
    /// `passed`, `failed (drop): F1: …`, `amount: '99.99' → 99.99`, `country = DE`.
    pub text: String,
    pub failed: bool,
}
