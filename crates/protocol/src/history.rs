//! Table versions (time travel) as the history panel lists them.

use serde::{Deserialize, Serialize};

/// One entry of a table's history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionInfo {
    /// 0 for the first commit, then 1, 2, ...
    pub version: u64,
    /// Commit time, microseconds since the Unix epoch (UTC).
    pub ts_micros: i64,
    /// `CREATE TABLE`, `APPEND`, `WRITE`, `RESTORE`, `DELETE`.
    pub operation: String,
    /// Rows in the table at this version.
    pub rows: usize,
    /// Rows present now and not in the previous version (as a multiset).
    pub rows_added: usize,
    /// Rows of the previous version that are gone.
    pub rows_removed: usize,
    /// What made the commit ("batch 3: trips.csv", "run 12", "restore of version 2").
    pub detail: String,
    /// Can this version still be read? (`false` once its snapshot expired.)
    pub readable: bool,
    /// (Bronze.) Of `rows`, those erased since by a right-to-be-forgotten
    /// request: reading this version now gives `rows - erased_since` rows
    /// (time travel never brings erased records back).
    #[serde(default)]
    pub erased_since: usize,
}
