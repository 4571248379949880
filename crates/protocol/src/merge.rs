//! How a silver table is written by business key (dedup, MERGE as SCD1,
//! SCD2 history).

use serde::{Deserialize, Serialize};

/// SCD type of a merged silver table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Scd {
    /// Current state only (upsert).
    #[default]
    Scd1,
    /// Every version, with `valid_from`, `valid_to`, `is_current`.
    Scd2,
}

/// How a silver table is merged by business key. JSON form:
/// `{"keys": ["warehouse", "item", "bin"], "sequence_by": "snapshot_date",
/// "stored_as": "scd2", "null_safe_keys": true, "from_snapshots": true}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct MergeSpec {
    /// Business key columns (`order_id`).
    pub keys: Vec<String>,
    /// Column ordering the changes of one key (a CDC LSN, an update
    /// timestamp), or the snapshot version with [`Self::from_snapshots`].
    /// Unset: bronze arrival order (`_ingest_ts`, then position).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence_by: Option<String>,
    #[serde(default)]
    pub stored_as: Scd,
    /// SQL condition marking a delete event (`op = 'd'`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_when: Option<String>,
    /// Columns whose change alone is not a new state (`op`, `ts_ms`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub track_history_except: Vec<String>,
    /// Compare keys with NULL = NULL (SQL `IS NOT DISTINCT FROM`): a NULL
    /// key part is a value like any other. Off (the default): a row with a
    /// NULL key part is quarantined (`merge: bin is NULL (a merge key ...)`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub null_safe_keys: bool,
    /// The source sends full snapshots, not changes (DLT `APPLY CHANGES FROM
    /// SNAPSHOT`, a dbt snapshot with hard deletes): a key missing from a
    /// newer snapshot was deleted. See the engine's `merge` module for what a snapshot is.
    #[serde(default, skip_serializing_if = "is_false")]
    pub from_snapshots: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}
