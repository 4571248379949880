//! Right to be forgotten: what a delete would change (the plan) and the
//! log of deletes made.

use serde::{Deserialize, Serialize};

use crate::table::TableName;

/// Rows shown per table in a plan's samples.
pub const PLAN_SAMPLE_ROWS: usize = 5;

/// What a right-to-be-forgotten request would change, worked out before
/// anything changes ([`crate::Request::PlanForget`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErasurePlan {
    /// The bronze table (`bronze.orders`).
    pub table: TableName,
    pub predicate: String,
    /// Bronze records that match: every bronze version loses them.
    pub rows: usize,
    /// Messages of the Kafka topic in front of the table that match (they
    /// would come back with the next poll otherwise).
    pub messages: usize,
    /// Landed files deleted with them (one per batch that loses records).
    pub files: Vec<String>,
    /// Per table, bronze first, then silver, the quarantine and gold: what
    /// the erasure and the full refresh after it change. Tables that do not
    /// change are left out.
    pub tables: Vec<ErasureChange>,
    /// Why the dry run of silver and gold could not be made, if it could not
    /// (the bronze part of the plan still holds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rebuild_error: Option<String>,
    /// The session state the plan was made on ([`crate::PipelineView::state`]);
    /// a plan whose state is no longer the view's does not hold.
    #[serde(default)]
    pub state: String,
}

/// How one table changes in an [`ErasurePlan`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErasureChange {
    pub name: TableName,
    /// Rows now.
    pub rows_before: usize,
    /// Rows that leave the table.
    pub removed: usize,
    /// Rows that appear (an older state of a merged key comes back, a gold
    /// aggregate changes its value).
    pub added: usize,
    /// Up to [`PLAN_SAMPLE_ROWS`] rows that leave, each as
    /// `column=value, ...` (bronze: `file line N: raw text`).
    pub sample_removed: Vec<String>,
    /// Up to [`PLAN_SAMPLE_ROWS`] rows that appear.
    pub sample_added: Vec<String>,
}

/// A logged right-to-be-forgotten delete from bronze.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Erasure {
    /// The bronze table.
    pub table: TableName,
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
