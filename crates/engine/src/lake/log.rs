//! A table's commit log in the object store, shaped like Delta Lake's
//! `_delta_log` (<https://github.com/delta-io/delta/blob/master/PROTOCOL.md>,
//! "Delta Log Entries" and "Actions"): version `v` of a table is the file
//! `{table_dir}/_delta_log/{v:020}.json`, one JSON action per line:
//!
//! - `commitInfo`: `timestamp` (ms since the Unix epoch), `operation`
//!   (`WRITE`, `DELETE`, ...), `operationParameters` (e.g. `mode`, the
//!   batch id and file name of a bronze append);
//! - `metaData`: the table's id, `schemaString` (a Delta struct type as
//!   JSON), `partitionColumns`, `format`; written by version 0 and whenever
//!   the schema changes;
//! - `add` / `remove`: a data file (path relative to the table's folder,
//!   `size` in bytes, `modificationTime` / `deletionTimestamp` in ms,
//!   `dataChange`; `stats` JSON with `numRecords`).
//!
//! **Nothing is visible half-written**: a commit's data files are written
//! first and its log entry last, with `PutMode::Create`, so a version exists
//! only once its whole entry exists, and two writers can never both create
//! one version. A failure between the two (a crash, a full disk) leaves the
//! previous version intact; the data files written before it are named by
//! no entry and never read (Delta's `VACUUM` would remove them).

use std::collections::BTreeMap;
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Schema, TimeUnit};
use futures::TryStreamExt;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};
use serde::{Deserialize, Serialize};

/// Why a log could not be read or written. Nothing was committed.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// Another commit created version `version` first.
    #[error(
        "{table}: version {version} was committed by another writer first; nothing was written"
    )]
    Conflict { table: String, version: u64 },
    /// A log entry is not valid JSON actions.
    #[error("{table}: log entry {version} cannot be read ({message})")]
    Corrupt {
        table: String,
        version: u64,
        message: String,
    },
    /// The version asked for does not exist.
    #[error("{table} has no version {version} (its log ends at {latest:?})")]
    NoVersion {
        table: String,
        version: u64,
        latest: Option<u64>,
    },
    /// The object store failed (writing or listing).
    #[error("{table}: the lake's store failed: {source}")]
    Store {
        table: String,
        #[source]
        source: object_store::Error,
    },
}

impl From<LogError> for crate::error::EngineError {
    fn from(e: LogError) -> Self {
        crate::error::EngineError::Storage(e.to_string())
    }
}

/// One line of a log entry (Delta's action names, externally tagged).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Action {
    CommitInfo(CommitInfo),
    MetaData(MetaData),
    Add(Add),
    Remove(Remove),
}

impl Action {
    /// `add` of the data file `path` (relative to the table's folder) of
    /// `size` bytes written at `ms` (ms since the Unix epoch), holding
    /// `rows` rows when known (`stats.numRecords`).
    pub fn add_file(path: impl Into<String>, size: u64, ms: i64, rows: Option<usize>) -> Action {
        Action::Add(Add {
            path: path.into(),
            partition_values: Default::default(),
            size,
            modification_time: ms,
            data_change: true,
            stats: rows.map(|n| format!("{{\"numRecords\":{n}}}")),
        })
    }

    /// `remove` of the data file `path` (relative to the table's folder) at
    /// `ms` (ms since the Unix epoch).
    pub fn remove_file(path: impl Into<String>, ms: i64) -> Action {
        Action::Remove(Remove {
            path: path.into(),
            deletion_timestamp: ms,
            data_change: true,
        })
    }
}

/// What a commit did and when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommitInfo {
    /// ms since the Unix epoch (UTC).
    pub timestamp: i64,
    /// `WRITE`, `DELETE`, `RESTORE`, ...
    pub operation: String,
    /// Delta writes these as strings (`"mode": "Append"`).
    pub operation_parameters: BTreeMap<String, String>,
    /// Row counts as text (Delta's `operationMetrics`): `numAddedRows`,
    /// `numRemovedRows` (rows of the table not in the previous version,
    /// rows of the previous version no longer in it).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub operation_metrics: BTreeMap<String, String>,
    /// What the commit did in the learner's words (Delta's
    /// `userMetadata`), e.g. `batch 2: trips.csv`, `run 3 (incremental)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_metadata: Option<String>,
    /// The commit's time in µs since the Unix epoch (`timestamp` has ms,
    /// as Delta writes it; versions show the exact time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp_micros: Option<i64>,
}

impl CommitInfo {
    /// A commit of `operation` at `ts_micros` (µs since the Unix epoch)
    /// described by `detail`, adding and removing that many rows.
    pub fn new(
        ts_micros: i64,
        operation: &str,
        detail: impl Into<String>,
        rows_added: usize,
        rows_removed: usize,
    ) -> Self {
        Self {
            timestamp: ts_micros.div_euclid(1000),
            operation: operation.to_string(),
            operation_parameters: BTreeMap::new(),
            operation_metrics: [
                ("numAddedRows".to_string(), rows_added.to_string()),
                ("numRemovedRows".to_string(), rows_removed.to_string()),
            ]
            .into(),
            user_metadata: Some(detail.into()),
            timestamp_micros: Some(ts_micros),
        }
    }

    /// The same with the operation parameter `key` = `value`.
    pub fn with(mut self, key: &str, value: impl Into<String>) -> Self {
        self.operation_parameters
            .insert(key.to_string(), value.into());
        self
    }

    /// A row count from `operationMetrics` (0 when missing).
    pub fn metric(&self, key: &str) -> usize {
        self.operation_metrics
            .get(key)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }

    /// µs since the Unix epoch (from `timestamp` when written without them).
    pub fn ts_micros(&self) -> i64 {
        self.timestamp_micros.unwrap_or(self.timestamp * 1000)
    }
}

/// The table's identity and schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MetaData {
    pub id: String,
    pub name: String,
    pub format: Format,
    /// A Delta struct type as JSON text (see [`schema_string`]).
    pub schema_string: String,
    pub partition_columns: Vec<String>,
    pub configuration: BTreeMap<String, String>,
    /// ms since the Unix epoch.
    pub created_time: i64,
}

/// The data files' format (always Parquet here).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Format {
    pub provider: String,
    pub options: BTreeMap<String, String>,
}

/// A data file added to the table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Add {
    /// Relative to the table's folder: `part-000001.parquet`.
    pub path: String,
    pub partition_values: BTreeMap<String, String>,
    /// Bytes.
    pub size: u64,
    /// ms since the Unix epoch.
    pub modification_time: i64,
    pub data_change: bool,
    /// `{"numRecords": N}` as JSON text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats: Option<String>,
}

impl Add {
    /// Rows in the file, from `stats.numRecords`.
    pub fn num_records(&self) -> Option<u64> {
        let stats: serde_json::Value = serde_json::from_str(self.stats.as_deref()?).ok()?;
        stats.get("numRecords")?.as_u64()
    }
}

/// A data file no longer part of the table (still readable by time travel).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Remove {
    pub path: String,
    /// ms since the Unix epoch.
    pub deletion_timestamp: i64,
    pub data_change: bool,
}

/// A table as of one version: its live files (in the order they were
/// added), its schema and every commit up to that version.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub version: u64,
    pub files: Vec<Add>,
    pub metadata: Option<MetaData>,
    /// `(version, commitInfo)`, oldest first.
    pub commits: Vec<(u64, CommitInfo)>,
}

impl Snapshot {
    /// Rows of the live files, from their stats (files without stats count 0).
    pub fn num_records(&self) -> u64 {
        self.files.iter().filter_map(Add::num_records).sum()
    }
}

/// One version as the log has it: its commit and the files live after it.
#[derive(Debug, Clone, PartialEq)]
pub struct LoggedVersion {
    pub version: u64,
    /// `None` when the entry has no `commitInfo` (a writer other than this engine).
    pub commit: Option<CommitInfo>,
    /// The table's data files as of this version, in the order they were added.
    pub files: Vec<Add>,
}

impl LoggedVersion {
    /// Rows of the live files, from their stats.
    pub fn num_records(&self) -> u64 {
        self.files.iter().filter_map(Add::num_records).sum()
    }
}

/// The log of one table's folder in a store.
#[derive(Debug, Clone)]
pub struct TableLog {
    store: Arc<dyn ObjectStore>,
    /// `bronze/orders` (the table's folder in the lake).
    dir: String,
}

impl TableLog {
    /// The log of the table in folder `dir` (e.g. `bronze/orders`).
    pub fn new(store: Arc<dyn ObjectStore>, dir: impl Into<String>) -> Self {
        Self {
            store,
            dir: dir.into(),
        }
    }

    fn entry_path(&self, version: u64) -> Path {
        Path::from(format!("{}/_delta_log/{version:020}.json", self.dir))
    }

    fn store_err(&self, source: object_store::Error) -> LogError {
        LogError::Store {
            table: self.dir.clone(),
            source,
        }
    }

    /// The versions in the log, ascending (empty: no commit yet).
    pub async fn versions(&self) -> Result<Vec<u64>, LogError> {
        let prefix = Path::from(format!("{}/_delta_log", self.dir));
        let metas: Vec<_> = self
            .store
            .list(Some(&prefix))
            .try_collect()
            .await
            .map_err(|e| self.store_err(e))?;
        let mut versions: Vec<u64> = metas
            .iter()
            .filter_map(|m| m.location.filename()?.strip_suffix(".json")?.parse().ok())
            .collect();
        versions.sort_unstable();
        Ok(versions)
    }

    /// The newest version, if any.
    pub async fn latest(&self) -> Result<Option<u64>, LogError> {
        Ok(self.versions().await?.last().copied())
    }

    /// Writes `actions` as the next version after `read_version` (the
    /// version the writer read; `None` for a new table). The data files
    /// they add must be written already. Err(`Conflict`) if that version
    /// exists: another commit came first.
    pub async fn commit(
        &self,
        read_version: Option<u64>,
        actions: &[Action],
    ) -> Result<u64, LogError> {
        let version = read_version.map_or(0, |v| v + 1);
        let mut text = String::new();
        for a in actions {
            // Serializing plain structs of strings and numbers cannot fail.
            text.push_str(&serde_json::to_string(a).unwrap_or_default());
            text.push('\n');
        }
        let opts = PutOptions {
            mode: PutMode::Create,
            ..Default::default()
        };
        match self
            .store
            .put_opts(&self.entry_path(version), PutPayload::from(text), opts)
            .await
        {
            Ok(_) => Ok(version),
            Err(object_store::Error::AlreadyExists { .. }) => Err(LogError::Conflict {
                table: self.dir.clone(),
                version,
            }),
            Err(e) => Err(self.store_err(e)),
        }
    }

    /// The actions of one version.
    pub async fn entry(&self, version: u64) -> Result<Vec<Action>, LogError> {
        let bytes = match self.store.get(&self.entry_path(version)).await {
            Ok(r) => r.bytes().await.map_err(|e| self.store_err(e))?,
            Err(object_store::Error::NotFound { .. }) => {
                return Err(LogError::NoVersion {
                    table: self.dir.clone(),
                    version,
                    latest: self.latest().await?,
                })
            }
            Err(e) => return Err(self.store_err(e)),
        };
        let corrupt = |message: String| LogError::Corrupt {
            table: self.dir.clone(),
            version,
            message,
        };
        let text = std::str::from_utf8(&bytes).map_err(|e| corrupt(e.to_string()))?;
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).map_err(|e| corrupt(e.to_string())))
            .collect()
    }

    /// Every version, oldest first, each with the files live after it
    /// (the log replayed once). Empty: the table has no commit yet.
    pub async fn history(&self) -> Result<Vec<LoggedVersion>, LogError> {
        let mut files: Vec<Add> = Vec::new();
        let mut out = Vec::new();
        for version in self.versions().await? {
            let mut commit = None;
            for action in self.entry(version).await? {
                match action {
                    Action::Add(a) => {
                        files.retain(|f| f.path != a.path);
                        files.push(a);
                    }
                    Action::Remove(r) => files.retain(|f| f.path != r.path),
                    Action::MetaData(_) => {}
                    Action::CommitInfo(c) => commit = Some(c),
                }
            }
            out.push(LoggedVersion {
                version,
                commit,
                files: files.clone(),
            });
        }
        Ok(out)
    }

    /// The table's folder in the lake (`silver/orders`).
    pub fn dir(&self) -> &str {
        &self.dir
    }

    /// The table as of `version` (`None`: the newest), replaying the log
    /// from version 0. `Ok(None)`: the table has no commit yet.
    pub async fn snapshot(&self, version: Option<u64>) -> Result<Option<Snapshot>, LogError> {
        let versions = self.versions().await?;
        let Some(&latest) = versions.last() else {
            return match version {
                None => Ok(None),
                Some(v) => Err(LogError::NoVersion {
                    table: self.dir.clone(),
                    version: v,
                    latest: None,
                }),
            };
        };
        let upto = version.unwrap_or(latest);
        if upto > latest {
            return Err(LogError::NoVersion {
                table: self.dir.clone(),
                version: upto,
                latest: Some(latest),
            });
        }
        let mut files: Vec<Add> = Vec::new();
        let mut metadata = None;
        let mut commits = Vec::new();
        for v in versions.into_iter().filter(|v| *v <= upto) {
            for action in self.entry(v).await? {
                match action {
                    Action::Add(a) => {
                        files.retain(|f| f.path != a.path);
                        files.push(a);
                    }
                    Action::Remove(r) => files.retain(|f| f.path != r.path),
                    Action::MetaData(m) => metadata = Some(m),
                    Action::CommitInfo(c) => commits.push((v, c)),
                }
            }
        }
        Ok(Some(Snapshot {
            version: upto,
            files,
            metadata,
            commits,
        }))
    }
}

/// A Delta struct type (as JSON text) for an Arrow schema: `string`,
/// `integer`, `long`, `double`, `boolean`, `date`, `timestamp_ntz`,
/// `timestamp`, `decimal(p,s)`, `binary`; other Arrow types by their Arrow name.
pub fn schema_string(schema: &Schema) -> String {
    let fields: Vec<serde_json::Value> = schema
        .fields()
        .iter()
        .map(|f| {
            serde_json::json!({
                "name": f.name(),
                "type": delta_type(f.data_type()),
                "nullable": f.is_nullable(),
                "metadata": {},
            })
        })
        .collect();
    serde_json::json!({ "type": "struct", "fields": fields }).to_string()
}

fn delta_type(dt: &DataType) -> String {
    match dt {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "string".into(),
        DataType::Int32 => "integer".into(),
        DataType::Int64 => "long".into(),
        DataType::Float64 => "double".into(),
        DataType::Boolean => "boolean".into(),
        DataType::Date32 => "date".into(),
        DataType::Timestamp(TimeUnit::Microsecond, None) => "timestamp_ntz".into(),
        DataType::Timestamp(_, Some(_)) => "timestamp".into(),
        DataType::Decimal128(p, s) => format!("decimal({p},{s})"),
        DataType::Binary | DataType::LargeBinary => "binary".into(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::memory::InMemory;

    fn add(path: &str, rows: usize) -> Action {
        Action::add_file(path, 10, 1, Some(rows))
    }

    fn info(op: &str) -> Action {
        Action::CommitInfo(CommitInfo {
            timestamp: 1_700_000_000_000,
            operation: op.into(),
            operation_parameters: [("mode".to_string(), "Append".to_string())].into(),
            operation_metrics: Default::default(),
            user_metadata: None,
            timestamp_micros: None,
        })
    }

    #[tokio::test]
    async fn versions_replay_adds_and_removes_and_time_travel_reads_an_older_one() {
        let log = TableLog::new(Arc::new(InMemory::new()), "bronze/t");
        assert_eq!(log.snapshot(None).await.unwrap(), None);
        assert_eq!(log.commit(None, &[info("CREATE TABLE")]).await.unwrap(), 0);
        assert_eq!(
            log.commit(Some(0), &[info("WRITE"), add("part-1.parquet", 3)])
                .await
                .unwrap(),
            1
        );
        assert_eq!(
            log.commit(Some(1), &[info("WRITE"), add("part-2.parquet", 4)])
                .await
                .unwrap(),
            2
        );
        let remove = Action::remove_file("part-1.parquet", 2);
        assert_eq!(
            log.commit(Some(2), &[info("DELETE"), remove])
                .await
                .unwrap(),
            3
        );

        let now = log.snapshot(None).await.unwrap().unwrap();
        assert_eq!(now.version, 3);
        assert_eq!(
            now.files
                .iter()
                .map(|f| f.path.as_str())
                .collect::<Vec<_>>(),
            ["part-2.parquet"]
        );
        assert_eq!(now.num_records(), 4);
        assert_eq!(
            now.commits
                .iter()
                .map(|(v, c)| (*v, c.operation.as_str()))
                .collect::<Vec<_>>(),
            [
                (0, "CREATE TABLE"),
                (1, "WRITE"),
                (2, "WRITE"),
                (3, "DELETE")
            ]
        );
        let v2 = log.snapshot(Some(2)).await.unwrap().unwrap();
        assert_eq!(v2.num_records(), 7);
        assert_eq!(v2.files.len(), 2);
        let err = log.snapshot(Some(9)).await.unwrap_err().to_string();
        assert_eq!(err, "bronze/t has no version 9 (its log ends at Some(3))");
    }

    #[tokio::test]
    async fn the_entry_is_delta_json_one_action_per_line() {
        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let log = TableLog::new(store.clone(), "bronze/t");
        log.commit(None, &[info("WRITE"), add("part-1.parquet", 3)])
            .await
            .unwrap();
        let text = store
            .get(&Path::from("bronze/t/_delta_log/00000000000000000000.json"))
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        assert_eq!(
            std::str::from_utf8(&text).unwrap(),
            "{\"commitInfo\":{\"timestamp\":1700000000000,\"operation\":\"WRITE\",\"operationParameters\":{\"mode\":\"Append\"}}}\n\
             {\"add\":{\"path\":\"part-1.parquet\",\"partitionValues\":{},\"size\":10,\"modificationTime\":1,\"dataChange\":true,\"stats\":\"{\\\"numRecords\\\":3}\"}}\n"
        );
    }

    #[tokio::test]
    async fn a_second_writer_of_the_same_version_is_refused() {
        let log = TableLog::new(Arc::new(InMemory::new()), "silver/t");
        log.commit(None, &[info("WRITE")]).await.unwrap();
        let err = log.commit(None, &[info("WRITE")]).await.unwrap_err();
        assert!(
            matches!(err, LogError::Conflict { version: 0, .. }),
            "{err}"
        );
        assert_eq!(
            err.to_string(),
            "silver/t: version 0 was committed by another writer first; nothing was written"
        );
        assert_eq!(log.versions().await.unwrap(), [0]);
    }

    #[tokio::test]
    async fn a_corrupt_entry_is_named_not_skipped() {
        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let log = TableLog::new(store.clone(), "gold/t");
        log.commit(None, &[info("WRITE")]).await.unwrap();
        store
            .put(
                &Path::from("gold/t/_delta_log/00000000000000000001.json"),
                PutPayload::from("{\"add\": 42}\n"),
            )
            .await
            .unwrap();
        let err = log.snapshot(None).await.unwrap_err().to_string();
        assert!(
            err.starts_with("gold/t: log entry 1 cannot be read ("),
            "{err}"
        );
    }
}
