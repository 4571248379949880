//! Table versions (snapshots), as Delta Lake and Iceberg keep them: every
//! commit to a table is a numbered version with its time, operation and row
//! counts; earlier versions can be read (time travel) and silver or gold can
//! be restored to one (seed `001_ae16f07f217e9df3.txt`, "time travel";
//! seed `000_87b8dd7200a8cd99.txt` §6 on why bronze is never overwritten).
//!
//! Bronze versions are cumulative appends: version `v` is every batch whose
//! [`crate::bronze::BatchInfo::version`] is at most `v`, so bronze needs no
//! copies. Silver and gold are rewritten by each run: a run whose result
//! equals the current version commits nothing (rerunning is idempotent);
//! otherwise the new snapshot is kept. Only the newest [`KEEP_SNAPSHOTS`]
//! snapshots of a table keep their data (the browser holds everything in
//! memory); older entries stay in the history marked as expired, like
//! `VACUUM` / `expire_snapshots`.

use std::collections::{BTreeMap, HashMap};

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::row::{RowConverter, SortField};

use crate::error::Result;

pub use medallion_protocol::history::VersionInfo;

/// Snapshots whose data is kept per silver or gold table.
pub const KEEP_SNAPSHOTS: usize = 25;

#[derive(Debug, Clone, Default)]
struct TableLog {
    versions: Vec<VersionInfo>,
    snapshots: BTreeMap<u64, RecordBatch>,
}

/// Histories of every table, by qualified name (`silver.nyc_taxi_yellow`).
#[derive(Debug, Clone, Default)]
pub struct History {
    tables: BTreeMap<String, TableLog>,
}

/// What to record in a commit.
pub struct Commit<'a> {
    pub ts_micros: i64,
    pub operation: &'a str,
    pub detail: String,
    pub rows: usize,
    pub rows_added: usize,
    pub rows_removed: usize,
}

impl History {
    /// The versions of `table`, oldest first (empty if it has none).
    pub fn versions(&self, table: &str) -> &[VersionInfo] {
        self.tables
            .get(table)
            .map(|t| t.versions.as_slice())
            .unwrap_or(&[])
    }

    /// Every table's versions.
    pub fn all(&self) -> BTreeMap<String, Vec<VersionInfo>> {
        self.tables
            .iter()
            .map(|(k, v)| (k.clone(), v.versions.clone()))
            .collect()
    }

    /// The newest version number of `table`.
    pub fn current(&self, table: &str) -> Option<u64> {
        self.versions(table).last().map(|v| v.version)
    }

    /// Rows of `table` at its newest version (0 if it has none).
    pub fn current_rows(&self, table: &str) -> usize {
        self.versions(table).last().map(|v| v.rows).unwrap_or(0)
    }

    /// Records a commit that adds and removes rows relative to the current
    /// version (bronze: an append, an erasure). Returns the version.
    pub fn commit_change(
        &mut self,
        table: &str,
        ts_micros: i64,
        operation: &str,
        detail: String,
        rows_added: usize,
        rows_removed: usize,
    ) -> u64 {
        let rows = (self.current_rows(table) + rows_added).saturating_sub(rows_removed);
        self.commit(
            table,
            Commit {
                ts_micros,
                operation,
                detail,
                rows,
                rows_added,
                rows_removed,
            },
        )
    }

    /// Records a commit without data (bronze: its batches are the data). Returns the version.
    pub fn commit(&mut self, table: &str, c: Commit<'_>) -> u64 {
        let log = self.tables.entry(table.to_string()).or_default();
        let version = log.versions.last().map(|v| v.version + 1).unwrap_or(0);
        log.versions.push(VersionInfo {
            version,
            ts_micros: c.ts_micros,
            operation: c.operation.to_string(),
            rows: c.rows,
            rows_added: c.rows_added,
            rows_removed: c.rows_removed,
            detail: c.detail,
            readable: true,
        });
        version
    }

    /// Commits `data` as a new snapshot of `table` unless it equals the current
    /// one. Returns the new version, or `None` when nothing changed.
    pub fn commit_snapshot(
        &mut self,
        table: &str,
        ts_micros: i64,
        operation: &str,
        detail: String,
        data: &RecordBatch,
    ) -> Result<Option<u64>> {
        let previous = self.current(table).and_then(|v| self.snapshot(table, v));
        let (added, removed) = match previous {
            Some(old) if old == data => return Ok(None),
            Some(old) => row_diff(old, data)?,
            None => (data.num_rows(), 0),
        };
        let version = self.commit(
            table,
            Commit {
                ts_micros,
                operation,
                detail,
                rows: data.num_rows(),
                rows_added: added,
                rows_removed: removed,
            },
        );
        let log = self.tables.entry(table.to_string()).or_default();
        log.snapshots.insert(version, data.clone());
        while log.snapshots.len() > KEEP_SNAPSHOTS {
            let oldest = *log.snapshots.keys().next().unwrap_or(&version);
            log.snapshots.remove(&oldest);
            if let Some(v) = log.versions.iter_mut().find(|v| v.version == oldest) {
                v.readable = false;
            }
        }
        Ok(Some(version))
    }

    /// Drops the data of every snapshot of `table` but the current one (they
    /// stay listed, unreadable): `expire_snapshots` after an erasure.
    pub fn expire_all_but_current(&mut self, table: &str) {
        let current = self.current(table);
        if let Some(log) = self.tables.get_mut(table) {
            log.snapshots.retain(|v, _| Some(*v) == current);
            for v in log.versions.iter_mut() {
                if Some(v.version) != current {
                    v.readable = false;
                }
            }
        }
    }

    /// The data of `table` at `version`, if that snapshot is kept.
    pub fn snapshot(&self, table: &str, version: u64) -> Option<&RecordBatch> {
        self.tables.get(table)?.snapshots.get(&version)
    }
}

/// Rows added and removed from `old` to `new`, compared as multisets of
/// whole rows (a row present twice in `old` and once in `new` counts one
/// removed). Tables with different columns differ in every row.
pub fn row_diff(old: &RecordBatch, new: &RecordBatch) -> Result<(usize, usize)> {
    let (removed, added) = diff_rows(old, new)?;
    Ok((added.len(), removed.len()))
}

/// The rows of `old` that are not in `new` and the rows of `new` that are not
/// in `old` (indices, ascending), as multisets like [`row_diff`]: of equal
/// rows, the last ones are the surplus.
pub fn diff_rows(old: &RecordBatch, new: &RecordBatch) -> Result<(Vec<usize>, Vec<usize>)> {
    if old.schema().fields() != new.schema().fields() {
        return Ok(((0..old.num_rows()).collect(), (0..new.num_rows()).collect()));
    }
    let fields = old
        .schema()
        .fields()
        .iter()
        .map(|f| SortField::new(f.data_type().clone()))
        .collect();
    let converter = RowConverter::new(fields)?;
    let old_rows = converter.convert_columns(old.columns())?;
    let new_rows = converter.convert_columns(new.columns())?;
    let mut in_new: HashMap<&[u8], usize> = HashMap::new();
    for r in new_rows.iter() {
        *in_new.entry(r.data()).or_default() += 1;
    }
    let mut in_old: HashMap<&[u8], usize> = HashMap::new();
    let mut removed = Vec::new();
    for (i, r) in old_rows.iter().enumerate() {
        let seen = in_old.entry(r.data()).or_default();
        *seen += 1;
        if *seen > in_new.get(r.data()).copied().unwrap_or(0) {
            removed.push(i);
        }
    }
    let mut matched: HashMap<&[u8], usize> = HashMap::new();
    let mut added = Vec::new();
    for (i, r) in new_rows.iter().enumerate() {
        let seen = matched.entry(r.data()).or_default();
        *seen += 1;
        if *seen > in_old.get(r.data()).copied().unwrap_or(0) {
            added.push(i);
        }
    }
    Ok((removed, added))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::array::Int64Array;
    use datafusion::arrow::datatypes::{DataType, Field, Schema};

    use super::*;

    fn ints(v: &[i64]) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)]));
        RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(v.to_vec()))]).unwrap()
    }

    #[test]
    fn unchanged_data_commits_nothing_and_diffs_count_duplicates() {
        let mut h = History::default();
        let t = "silver.t";
        assert_eq!(
            h.commit_snapshot(t, 1, "WRITE", "run 1".into(), &ints(&[1, 2, 2]))
                .unwrap(),
            Some(0)
        );
        assert_eq!(
            h.commit_snapshot(t, 2, "WRITE", "run 2".into(), &ints(&[1, 2, 2]))
                .unwrap(),
            None
        );
        assert_eq!(
            h.commit_snapshot(t, 3, "WRITE", "run 3".into(), &ints(&[1, 2, 3, 3]))
                .unwrap(),
            Some(1)
        );
        let v = &h.versions(t)[1];
        assert_eq!((v.rows, v.rows_added, v.rows_removed), (4, 2, 1));
        assert_eq!(h.snapshot(t, 0).unwrap().num_rows(), 3);
    }

    #[test]
    fn old_snapshots_expire_but_stay_listed() {
        let mut h = History::default();
        for i in 0..(KEEP_SNAPSHOTS as i64 + 2) {
            h.commit_snapshot("gold.g", i, "WRITE", format!("run {i}"), &ints(&[i]))
                .unwrap();
        }
        let versions = h.versions("gold.g");
        assert_eq!(versions.len(), KEEP_SNAPSHOTS + 2);
        assert!(!versions[0].readable && !versions[1].readable && versions[2].readable);
        assert!(h.snapshot("gold.g", 1).is_none());
        assert!(h.snapshot("gold.g", 2).is_some());
    }
}
