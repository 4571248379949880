//! Table versions (snapshots), as Delta Lake and Iceberg keep them: every
//! commit to a table is a numbered version with its time, operation and row
//! counts; earlier versions can be read (time travel) and silver or gold can
//! be restored to one (seed `001_ae16f07f217e9df3.txt`, "time travel";
//! seed `000_87b8dd7200a8cd99.txt` §6 on why bronze is never overwritten).
//!
//! **The commit log is the truth** ([`super::log`]): [`History`] lists each
//! table's versions as its `_delta_log` has them, read back after every
//! commit, and reads an older version's rows from the data files the log
//! names. It keeps in memory only that listing and the current rows of each
//! silver and gold table (to see whether a run changed them).
//!
//! Bronze versions are cumulative appends: each commit adds one batch's
//! file (or rewrites files for an erasure). Silver, the quarantine and gold
//! are rewritten by each run: a run whose result equals the current version
//! commits nothing (rerunning is idempotent); otherwise the new snapshot is
//! written as one Parquet file, `part-{version:06}.parquet`, and the commit
//! removes the previous one. Only the newest [`KEEP_SNAPSHOTS`] versions of a
//! table keep their file (the browser holds everything in memory); older
//! versions stay listed, marked as expired, like Delta's `VACUUM`.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::lake::concat_batches;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::row::{RowConverter, SortField};

use super::log::{schema_string, Action, CommitInfo, Format, MetaData, TableLog};
use super::{decode_parquet_table, encode_parquet, Lake};
use crate::error::Result;
use medallion_protocol::{IntoTableName, TableName};

pub use medallion_protocol::history::VersionInfo;

/// Versions per silver or gold table whose data file is kept.
pub const KEEP_SNAPSHOTS: usize = 25;

/// Each table's versions as read from its log, by qualified name
/// (`silver.nyc_taxi_yellow`), and the current rows of silver and gold.
#[derive(Debug, Clone, Default)]
pub struct History {
    versions: BTreeMap<TableName, Vec<VersionInfo>>,
    /// Live files (paths in the store) of each version, by table.
    files: BTreeMap<TableName, BTreeMap<u64, Vec<String>>>,
    current: BTreeMap<TableName, RecordBatch>,
}

impl History {
    /// The versions of `table`, oldest first (empty if it has none).
    pub fn versions(&self, table: impl IntoTableName) -> &[VersionInfo] {
        table
            .into_table_name()
            .and_then(|t| self.versions.get(&t))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// Every table's versions.
    pub fn all(&self) -> BTreeMap<TableName, Vec<VersionInfo>> {
        self.versions.clone()
    }

    /// The newest version number of `table`.
    pub fn current(&self, table: impl IntoTableName) -> Option<u64> {
        self.versions(table).last().map(|v| v.version)
    }

    /// The rows of silver or gold `table` at its newest version (as
    /// committed by this session), if it has one.
    pub fn current_data(&self, table: impl IntoTableName) -> Option<&RecordBatch> {
        self.current.get(&table.into_table_name()?)
    }

    /// The versions of `tables` read from their logs, with the
    /// current rows of each silver and gold one (a session opened from a
    /// saved lake).
    pub async fn open<'a>(
        lake: &Lake,
        tables: impl IntoIterator<Item = &'a TableName>,
    ) -> Result<History> {
        let mut history = History::default();
        for table in tables {
            history.refresh(lake, table).await?;
            if table.is_bronze() {
                continue;
            }
            if let Some(v) = history.current(table) {
                if let Some(rows) = history.snapshot(lake, table, v).await? {
                    history.current.insert(table.clone(), rows);
                }
            }
        }
        Ok(history)
    }

    /// Reads `table`'s versions from its log again (after a commit to it).
    /// A version is readable when every file it names is still in the
    /// store; bronze's always are (time travel reads its batches up to the
    /// version, without erased records). An append (`WRITE` in mode
    /// `Append`) is listed as `APPEND`.
    pub async fn refresh(&mut self, lake: &Lake, table: &TableName) -> Result<()> {
        let log = TableLog::new(lake.store(), table.path());
        let logged = log.history().await?;
        let present: HashSet<String> = lake.list(log.dir()).await?.into_iter().collect();
        let bronze = table.is_bronze();
        let rewritten = if bronze {
            erasure_rewrites(&logged)
        } else {
            HashMap::new()
        };
        let mut versions = Vec::with_capacity(logged.len());
        let mut files = BTreeMap::new();
        for v in logged {
            let paths: Vec<String> = v
                .files
                .iter()
                .map(|f| format!("{}/{}", log.dir(), f.path))
                .collect();
            let info = v
                .commit
                .clone()
                .unwrap_or_else(|| CommitInfo::new(0, "WRITE", "", 0, 0));
            let append = info.operation == "WRITE"
                && info.operation_parameters.get("mode").map(String::as_str) == Some("Append");
            versions.push(VersionInfo {
                version: v.version,
                ts_micros: info.ts_micros(),
                operation: if append {
                    "APPEND".into()
                } else {
                    info.operation.clone()
                },
                rows: v.num_records() as usize,
                erased_since: v
                    .files
                    .iter()
                    .map(|f| {
                        let now = rows_now(&rewritten, f);
                        f.num_records().unwrap_or(0).saturating_sub(now) as usize
                    })
                    .sum(),
                rows_added: info.metric("numAddedRows"),
                rows_removed: info.metric("numRemovedRows"),
                detail: info.user_metadata.clone().unwrap_or_default(),
                readable: bronze || paths.iter().all(|p| present.contains(p)),
            });
            files.insert(v.version, paths);
        }
        self.versions.insert(table.clone(), versions);
        self.files.insert(table.clone(), files);
        Ok(())
    }

    /// Commits `data` as a new version of silver or gold `table` unless it
    /// equals the current one: its Parquet file first, then the log entry
    /// (removing the previous version's file from the table, adding this
    /// one; `metaData` on the first version and when the schema changes).
    /// Returns the new version, or `None` when nothing changed.
    pub async fn commit_snapshot(
        &mut self,
        lake: &Lake,
        table: &TableName,
        ts_micros: i64,
        operation: &str,
        detail: String,
        data: &RecordBatch,
    ) -> Result<Option<u64>> {
        if self.current.get(table) == Some(data) {
            return Ok(None);
        }
        self.commit_changed_snapshot(lake, table, ts_micros, operation, detail, data)
            .await
            .map(Some)
    }

    /// [`Self::commit_snapshot`] of `data` that the caller already found
    /// to differ from the current version (a run compares each table once:
    /// `Playground::keep_unchanged`). Returns the new version.
    pub async fn commit_changed_snapshot(
        &mut self,
        lake: &Lake,
        table: &TableName,
        ts_micros: i64,
        operation: &str,
        detail: String,
        data: &RecordBatch,
    ) -> Result<u64> {
        let (added, removed) = match self.current.get(table) {
            Some(old) => row_diff(old, data)?,
            None => (data.num_rows(), 0),
        };
        let dir = table.path();
        let log = TableLog::new(lake.store(), dir.clone());
        let read_version = log.latest().await?;
        let version = read_version.map_or(0, |v| v + 1);
        let file = format!("part-{version:06}.parquet");
        let file_path = format!("{dir}/{file}");
        let bytes = encode_parquet(data.schema(), std::slice::from_ref(data))?;
        let size = bytes.len() as u64;
        lake.put_bytes(&format!("{dir}/{file}"), bytes.to_vec())
            .await?;
        let ms = ts_micros.div_euclid(1000);
        let mut actions = vec![Action::CommitInfo(CommitInfo::new(
            ts_micros, operation, detail, added, removed,
        ))];
        let schema_changed = self
            .current
            .get(table)
            .is_none_or(|old| old.schema().fields() != data.schema().fields());
        if schema_changed {
            actions.push(Action::MetaData(MetaData {
                id: format!("{table}@{ts_micros}"),
                name: table.to_string(),
                format: Format {
                    provider: "parquet".into(),
                    options: Default::default(),
                },
                schema_string: schema_string(&data.schema()),
                partition_columns: vec![],
                configuration: Default::default(),
                created_time: ms,
            }));
        }
        let previous = self
            .current(table)
            .and_then(|v| self.files.get(table)?.get(&v).cloned())
            .unwrap_or_default();
        for p in previous {
            let relative = p.strip_prefix(&format!("{dir}/")).unwrap_or(&p);
            actions.push(Action::remove_file(relative, ms));
        }
        actions.push(Action::add_file(file, size, ms, Some(data.num_rows())));
        if let Err(e) = log.commit(read_version, &actions).await {
            // No entry names the file: it goes (a later commit of this
            // version writes its own).
            let _ = lake.delete(&file_path).await;
            return Err(e.into());
        }
        self.current.insert(table.clone(), data.clone());
        self.refresh(lake, table).await?;
        // VACUUM: only the newest KEEP_SNAPSHOTS versions keep their file.
        let readable: Vec<u64> = self
            .versions(table)
            .iter()
            .filter(|v| v.readable)
            .map(|v| v.version)
            .collect();
        if readable.len() > KEEP_SNAPSHOTS {
            let expired = readable[..readable.len() - KEEP_SNAPSHOTS].to_vec();
            self.vacuum(lake, table, &expired).await?;
        }
        Ok(version)
    }

    /// Deletes the data files of every version of `table` but the current
    /// one (they stay listed, unreadable): `VACUUM` after an erasure, so no
    /// older snapshot keeps erased records.
    pub async fn expire_all_but_current(&mut self, lake: &Lake, table: &TableName) -> Result<()> {
        let current = self.current(table);
        let old: Vec<u64> = self
            .versions(table)
            .iter()
            .map(|v| v.version)
            .filter(|v| Some(*v) != current)
            .collect();
        self.vacuum(lake, table, &old).await
    }

    /// Deletes the data files of every version of `table` written before
    /// `ts_micros` but the current one: after an erasure whose rebuild left
    /// `table` at a version from before it, the first run that writes a
    /// new version expires that one too (seed 000 §7: no snapshot keeps
    /// erased records once a run could rebuild the table). Returns how
    /// many versions expired.
    pub async fn expire_before(
        &mut self,
        lake: &Lake,
        table: &TableName,
        ts_micros: i64,
    ) -> Result<usize> {
        let current = self.current(table);
        let old: Vec<u64> = self
            .versions(table)
            .iter()
            .filter(|v| v.readable && v.ts_micros < ts_micros && Some(v.version) != current)
            .map(|v| v.version)
            .collect();
        if old.is_empty() {
            return Ok(0);
        }
        self.vacuum(lake, table, &old).await?;
        Ok(old.len())
    }

    async fn vacuum(&mut self, lake: &Lake, table: &TableName, versions: &[u64]) -> Result<()> {
        let keep: HashSet<String> = self
            .current(table)
            .and_then(|v| self.files.get(table)?.get(&v).cloned())
            .unwrap_or_default()
            .into_iter()
            .collect();
        let doomed: HashSet<String> = versions
            .iter()
            .filter_map(|v| self.files.get(table)?.get(v).cloned())
            .flatten()
            .filter(|p| !keep.contains(p))
            .collect();
        for p in doomed {
            lake.delete(&p).await?;
        }
        self.refresh(lake, table).await
    }

    /// The rows of silver or gold `table` at `version`, read from the files
    /// its log names; `None` when that version has expired.
    pub async fn snapshot(
        &self,
        lake: &Lake,
        table: &TableName,
        version: u64,
    ) -> Result<Option<RecordBatch>> {
        if !self
            .versions(table)
            .iter()
            .any(|v| v.version == version && v.readable)
        {
            return Ok(None);
        }
        let paths = self
            .files
            .get(table)
            .and_then(|f| f.get(&version))
            .cloned()
            .unwrap_or_default();
        let mut tables = Vec::new();
        for p in &paths {
            tables.push(decode_parquet_table(lake.get_bytes(p).await?)?);
        }
        match tables.first() {
            Some(first) => Ok(Some(concat_batches(&first.schema(), &tables)?)),
            None => Ok(None),
        }
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
///
/// Rows are grouped by a 64-bit hash of their values (DataFusion's
/// `create_hashes`, column by column) and every row is then compared with
/// its group's first row, column by column (arrow's `not_distinct`: NULL
/// equals NULL). Only when a group holds rows that differ (a hash
/// collision) or a column type those kernels lack (nested types) does the
/// diff encode whole rows and compare their bytes ([`exact_diff`]). Every
/// version commit of a rule edit diffs silver: encoding 336,776 flights
/// rows twice was 40% of a native flights rule edit (issue 12).
pub fn diff_rows(old: &RecordBatch, new: &RecordBatch) -> Result<(Vec<usize>, Vec<usize>)> {
    diff_rows_by(old, new, row_hashes)
}

/// [`diff_rows`] with `hash` giving each row's hash (tests give colliding ones).
fn diff_rows_by(
    old: &RecordBatch,
    new: &RecordBatch,
    hash: impl Fn(&RecordBatch) -> Result<Vec<u64>>,
) -> Result<(Vec<usize>, Vec<usize>)> {
    if old.schema().fields() != new.schema().fields() {
        return Ok(((0..old.num_rows()).collect(), (0..new.num_rows()).collect()));
    }
    match hashed_diff(old, new, hash) {
        Ok(Some(diff)) => Ok(diff),
        // A collision, or a type the comparison kernels lack.
        Ok(None) | Err(_) => exact_diff(old, new),
    }
}

/// Each row's hash over all of its columns.
fn row_hashes(batch: &RecordBatch) -> Result<Vec<u64>> {
    use datafusion::common::hash_utils::{create_hashes, RandomState};
    let mut hashes = vec![0u64; batch.num_rows()];
    create_hashes(batch.columns(), &RandomState::with_seed(0), &mut hashes)?;
    Ok(hashes)
}

/// [`diff_rows`] by row hash; `None` when rows sharing a hash differ.
fn hashed_diff(
    old: &RecordBatch,
    new: &RecordBatch,
    hash: impl Fn(&RecordBatch) -> Result<Vec<u64>>,
) -> Result<Option<(Vec<usize>, Vec<usize>)>> {
    /// Rows of one hash: the first in `new`, and counts as in [`exact_diff`].
    struct Group {
        first: u32,
        new: usize,
        old_seen: usize,
        new_seen: usize,
    }
    let (old_hashes, new_hashes) = (hash(old)?, hash(new)?);
    let mut groups: datafusion::common::HashMap<u64, Group> =
        datafusion::common::HashMap::with_capacity(new.num_rows());
    // Rows to compare with their group's first row of `new`.
    let (mut new_rows, mut new_firsts) = (Vec::new(), Vec::new());
    for (i, h) in new_hashes.iter().enumerate() {
        let g = groups.entry(*h).or_insert(Group {
            first: i as u32,
            new: 0,
            old_seen: 0,
            new_seen: 0,
        });
        g.new += 1;
        if g.first != i as u32 {
            new_rows.push(i as u32);
            new_firsts.push(g.first);
        }
    }
    let mut removed = Vec::new();
    let (mut old_rows, mut old_firsts) = (Vec::new(), Vec::new());
    for (i, h) in old_hashes.iter().enumerate() {
        match groups.get_mut(h) {
            // No row of `new` has this hash: no row of `new` equals it.
            None => removed.push(i),
            Some(g) => {
                old_rows.push(i as u32);
                old_firsts.push(g.first);
                g.old_seen += 1;
                if g.old_seen > g.new {
                    removed.push(i);
                }
            }
        }
    }
    let mut added = Vec::new();
    for (i, h) in new_hashes.iter().enumerate() {
        if let Some(g) = groups.get_mut(h) {
            g.new_seen += 1;
            if g.new_seen > g.old_seen {
                added.push(i);
            }
        }
    }
    if !same_rows(new, &new_rows, new, &new_firsts)?
        || !same_rows(old, &old_rows, new, &old_firsts)?
    {
        return Ok(None);
    }
    Ok(Some((removed, added)))
}

/// Is row `a_rows[k]` of `a` equal to row `b_rows[k]` of `b` for every `k`
/// (same columns; NULL equals NULL)?
fn same_rows(a: &RecordBatch, a_rows: &[u32], b: &RecordBatch, b_rows: &[u32]) -> Result<bool> {
    use datafusion::arrow::array::UInt32Array;
    use datafusion::arrow::compute::{kernels::cmp::not_distinct, take};
    if a_rows.is_empty() {
        return Ok(true);
    }
    // `a`'s rows in order, all of them: its columns as they are.
    let all_of_a =
        a_rows.len() == a.num_rows() && a_rows.iter().enumerate().all(|(i, r)| *r as usize == i);
    let (a_idx, b_idx) = (
        UInt32Array::from(a_rows.to_vec()),
        UInt32Array::from(b_rows.to_vec()),
    );
    for (x, y) in a.columns().iter().zip(b.columns()) {
        let x = if all_of_a {
            x.clone()
        } else {
            take(x, &a_idx, None)?
        };
        let y = take(y, &b_idx, None)?;
        if not_distinct(&x, &y)?.true_count() != a_rows.len() {
            return Ok(false);
        }
    }
    Ok(true)
}

/// [`diff_rows`] by each row's bytes in arrow's row format: exact for every type.
fn exact_diff(old: &RecordBatch, new: &RecordBatch) -> Result<(Vec<usize>, Vec<usize>)> {
    let fields = old
        .schema()
        .fields()
        .iter()
        .map(|f| SortField::new(f.data_type().clone()))
        .collect();
    let converter = RowConverter::new(fields)?;
    let old_rows = converter.convert_columns(old.columns())?;
    let new_rows = converter.convert_columns(new.columns())?;
    // Per distinct row: (rows of `new`, rows of `old` seen so far, rows of
    // `new` seen so far).
    let mut counts: datafusion::common::HashMap<&[u8], (usize, usize, usize)> =
        datafusion::common::HashMap::with_capacity(new.num_rows());
    for r in new_rows.iter() {
        counts.entry(r.data()).or_default().0 += 1;
    }
    let mut removed = Vec::new();
    for (i, r) in old_rows.iter().enumerate() {
        let c = counts.entry(r.data()).or_default();
        c.1 += 1;
        if c.1 > c.0 {
            removed.push(i);
        }
    }
    let mut added = Vec::new();
    for (i, r) in new_rows.iter().enumerate() {
        let c = counts.entry(r.data()).or_default();
        c.2 += 1;
        if c.2 > c.1 {
            added.push(i);
        }
    }
    Ok((removed, added))
}

/// A bronze data file's batch name: the path without `.parquet` and
/// without every `.v{N}` an erasure's rewrite added (`part-000003.v7.parquet`
/// and, as lakes written before the rewrite named from the batch hold,
/// `part-000003.v4.v7.parquet` → `part-000003`).
pub(crate) fn batch_file(path: &str) -> &str {
    let mut stem = path.strip_suffix(".parquet").unwrap_or(path);
    while let Some((base, n)) = stem.rsplit_once(".v") {
        if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
            break;
        }
        stem = base;
    }
    stem
}

/// (Bronze.) For each data file an erasure (`DELETE`) replaced: the file
/// that replaced it and its record count. Time travel to an older version
/// reads the replacement, so the version's rows now are the replacements'.
fn erasure_rewrites(
    logged: &[super::log::LoggedVersion],
) -> HashMap<String, (String, Option<u64>)> {
    let mut next = HashMap::new();
    let mut before: &[super::log::Add] = &[];
    for v in logged {
        let erasure = v.commit.as_ref().is_some_and(|c| c.operation == "DELETE");
        if erasure {
            for old in before
                .iter()
                .filter(|o| !v.files.iter().any(|f| f.path == o.path))
            {
                if let Some(new) = v.files.iter().find(|f| {
                    !before.iter().any(|o| o.path == f.path)
                        && batch_file(&f.path) == batch_file(&old.path)
                }) {
                    next.insert(old.path.clone(), (new.path.clone(), new.num_records()));
                }
            }
        }
        before = &v.files;
    }
    next
}

/// Records of `file` readable now: those of the last file that replaced it
/// (see [`erasure_rewrites`]), or its own.
fn rows_now(rewritten: &HashMap<String, (String, Option<u64>)>, file: &super::log::Add) -> u64 {
    let mut rows = file.num_records().unwrap_or(0);
    let mut path = &file.path;
    // Each rewrite names a newer file: the chain ends (bounded by its length).
    for _ in 0..=rewritten.len() {
        match rewritten.get(path) {
            Some((p, n)) => {
                path = p;
                rows = n.unwrap_or(0);
            }
            None => break,
        }
    }
    rows
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

    #[tokio::test]
    async fn unchanged_data_commits_nothing_and_diffs_count_duplicates() {
        let (lake, mut h, t) = (Lake::default(), History::default(), &TableName::silver("t"));
        let mut commit = async |ts: i64, rows: &[i64]| {
            h.commit_snapshot(&lake, t, ts, "WRITE", format!("run {ts}"), &ints(rows))
                .await
                .unwrap()
        };
        assert_eq!(commit(1, &[1, 2, 2]).await, Some(0));
        assert_eq!(commit(2, &[1, 2, 2]).await, None);
        assert_eq!(commit(3, &[1, 2, 3, 3]).await, Some(1));
        let v = &h.versions(t)[1];
        assert_eq!((v.rows, v.rows_added, v.rows_removed), (4, 2, 1));
        assert_eq!(
            (v.operation.as_str(), v.detail.as_str(), v.ts_micros),
            ("WRITE", "run 3", 3)
        );
        assert_eq!(
            h.snapshot(&lake, t, 0).await.unwrap().unwrap(),
            ints(&[1, 2, 2])
        );
        // The log says the same: version 1 removed version 0's file and added its own.
        let log = TableLog::new(lake.store(), "silver/t");
        let snap = log.snapshot(None).await.unwrap().unwrap();
        assert_eq!(
            snap.files
                .iter()
                .map(|f| f.path.as_str())
                .collect::<Vec<_>>(),
            ["part-000001.parquet"]
        );
        assert_eq!(snap.num_records(), 4);
    }

    #[tokio::test]
    async fn old_snapshots_expire_but_stay_listed() {
        let (lake, mut h, g) = (Lake::default(), History::default(), &TableName::gold("g"));
        for i in 0..(KEEP_SNAPSHOTS as i64 + 2) {
            h.commit_snapshot(&lake, g, i, "WRITE", format!("run {i}"), &ints(&[i]))
                .await
                .unwrap();
        }
        let versions = h.versions(g);
        assert_eq!(versions.len(), KEEP_SNAPSHOTS + 2);
        assert!(!versions[0].readable && !versions[1].readable && versions[2].readable);
        assert!(h.snapshot(&lake, g, 1).await.unwrap().is_none());
        assert_eq!(h.snapshot(&lake, g, 2).await.unwrap().unwrap(), ints(&[2]));
        // A new History reading the same lake lists the same versions: the log is the truth.
        let mut again = History::default();
        again.refresh(&lake, g).await.unwrap();
        assert_eq!(again.versions(g), h.versions(g));
        h.expire_all_but_current(&lake, g).await.unwrap();
        assert_eq!(h.versions(g).iter().filter(|v| v.readable).count(), 1);
    }

    #[test]
    fn a_batch_file_is_named_without_its_rewrites() {
        assert_eq!(batch_file("part-000003.parquet"), "part-000003");
        assert_eq!(batch_file("part-000003.v7.parquet"), "part-000003");
        assert_eq!(batch_file("part-000003.v4.v7.parquet"), "part-000003");
        // Not a rewrite: a name whose `.v` is not followed by digits only.
        assert_eq!(batch_file("orders.vx.parquet"), "orders.vx");
        assert_eq!(batch_file("orders.v.parquet"), "orders.v");
    }

    /// Rows of (a small int, a short text) with many duplicates.
    fn rows(values: &[(i64, u8)]) -> RecordBatch {
        use datafusion::arrow::array::{ArrayRef, StringArray};
        let ints: Int64Array = values.iter().map(|v| Some(v.0)).collect();
        let texts: StringArray = values
            .iter()
            .map(|v| (v.1 != 0).then(|| format!("t{}", v.1)))
            .collect();
        // Both columns nullable, whatever the rows: a schema change is
        // another case (every row differs).
        RecordBatch::try_from_iter_with_nullable([
            ("n", Arc::new(ints) as ArrayRef, true),
            ("s", Arc::new(texts) as ArrayRef, true),
        ])
        .unwrap()
    }

    /// The multiset difference, spelled out: row i of `a` is surplus when
    /// it is the k-th copy of its value in `a` and `b` holds fewer than k.
    fn surplus(a: &[(i64, u8)], b: &[(i64, u8)]) -> Vec<usize> {
        (0..a.len())
            .filter(|&i| {
                let k = a[..=i].iter().filter(|v| **v == a[i]).count();
                b.iter().filter(|v| **v == a[i]).count() < k
            })
            .collect()
    }

    proptest::proptest! {
        /// `diff_rows` is the multiset difference both ways, NULLs
        /// included, whatever the duplicates.
        #[test]
        fn diff_rows_is_the_multiset_difference(
            old in proptest::collection::vec((0i64..4, 0u8..3), 0..40),
            new in proptest::collection::vec((0i64..4, 0u8..3), 0..40),
        ) {
            let (removed, added) = diff_rows(&rows(&old), &rows(&new)).unwrap();
            proptest::prop_assert_eq!(&removed, &surplus(&old, &new));
            proptest::prop_assert_eq!(&added, &surplus(&new, &old));
            proptest::prop_assert_eq!(
                row_diff(&rows(&old), &rows(&new)).unwrap(),
                (added.len(), removed.len())
            );
            // Every row hashing alike (a collision in each group): the
            // comparison notices and the exact diff gives the same answer.
            let (old, new) = (rows(&old), rows(&new));
            let collide = |b: &RecordBatch| Ok(vec![7u64; b.num_rows()]);
            proptest::prop_assert_eq!(
                diff_rows_by(&old, &new, collide).unwrap(),
                (removed, added)
            );
        }
    }

    #[test]
    fn a_hash_collision_is_noticed() {
        let (old, new) = (rows(&[(1, 1), (2, 0)]), rows(&[(2, 0), (3, 1)]));
        let collide = |b: &RecordBatch| Ok(vec![7u64; b.num_rows()]);
        assert_eq!(hashed_diff(&old, &new, collide).unwrap(), None);
        assert_eq!(
            hashed_diff(&old, &new, row_hashes).unwrap(),
            Some((vec![0], vec![1]))
        );
        assert_eq!(exact_diff(&old, &new).unwrap(), (vec![0], vec![1]));
    }

    #[test]
    fn diff_rows_counts_copies() {
        let old = [(1, 1), (1, 1), (2, 0), (3, 2)];
        let new = [(1, 1), (2, 0), (2, 0), (4, 1)];
        let (removed, added) = diff_rows(&rows(&old), &rows(&new)).unwrap();
        // The second (1, t1) and (3, t2) went; a second (2, NULL) and (4, t1) came.
        assert_eq!(removed, vec![1, 3]);
        assert_eq!(added, vec![2, 3]);
    }
}
