//! The batch log, read from each bronze table's own commit log: the log is
//! its single source of truth, the page's batch log and the session's
//! memory are folds of it (seed `000_87b8dd7200a8cd99.txt` §3: every batch
//! carries its lineage; the issue's "versions ... and the batch log are read
//! from the log").
//!
//! Three kinds of bronze commit change it, each carrying what it changes in
//! its `commitInfo.operationParameters` (Delta writes these as strings):
//!
//! | commit                      | parameter            | what it holds                                   |
//! |-----------------------------|----------------------|-------------------------------------------------|
//! | `WRITE` (a batch appended)  | `batch`              | the [`BatchInfo`] as JSON, as it was written     |
//! |                             | `batchOrdinal`       | its place in the session's batch log (0, 1, ...) |
//! |                             | `supersedes`         | (a file read again) the batch it replaces for silver |
//! | `DELETE` (right to be forgotten) | `erased`        | JSON list of [`ErasedBatch`]: batch, records erased, its new file |
//! |                             | `reason`             | the request's reason                             |
//!
//! Folding a table's entries in version order gives each batch as the page
//! shows it: `superseded_by` and the notes of a read-again pair, the erased
//! count, file and note of an erasure.

use serde::{Deserialize, Serialize};

use crate::bronze::BatchInfo;
use crate::error::{EngineError, Result};
use crate::lake::log::{Action, CommitInfo, TableLog};

/// `operationParameters` key of a `WRITE`: the batch as JSON.
pub const BATCH: &str = "batch";
/// `operationParameters` key of a `WRITE`: the batch's place in the session's batch log.
pub const BATCH_ORDINAL: &str = "batchOrdinal";
/// `operationParameters` key of a `WRITE`: the batch this one reads again.
pub const SUPERSEDES: &str = "supersedes";
/// `operationParameters` key of a `DELETE`: the batches it rewrote.
pub const ERASED: &str = "erased";

/// One batch a right-to-be-forgotten `DELETE` rewrote.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErasedBatch {
    pub batch_id: String,
    /// Records erased from it by this request.
    pub records: usize,
    /// The lake path of the file without them (`bronze/t/part-000001.v3.parquet`).
    pub path: String,
}

/// The parameters a `WRITE` of `info` carries: the batch, its ordinal and,
/// for a file read again, the batch it supersedes. Errors: `info` cannot be
/// written as JSON (it always can; the error is a value all the same).
pub fn write_params(
    commit: CommitInfo,
    info: &BatchInfo,
    ordinal: usize,
    supersedes: Option<&str>,
) -> Result<CommitInfo> {
    let json = serde_json::to_string(info)
        .map_err(|e| EngineError::Internal(format!("batch {}: {e}", info.batch_id)))?;
    let commit = commit
        .with(BATCH, json)
        .with(BATCH_ORDINAL, ordinal.to_string());
    Ok(match supersedes {
        Some(old) => commit.with(SUPERSEDES, old),
        None => commit,
    })
}

/// The parameter a `DELETE` carries for the batches it rewrote.
pub fn delete_params(commit: CommitInfo, erased: &[ErasedBatch]) -> Result<CommitInfo> {
    let json = serde_json::to_string(erased)
        .map_err(|e| EngineError::Internal(format!("erased batches: {e}")))?;
    Ok(commit.with(ERASED, json))
}

/// The note on a batch read again as `by`.
pub fn superseded_note(by: &str) -> String {
    format!("read again as batch {by} with other options: silver reads that batch instead of this one, which stays in bronze")
}

/// The note on the batch that read batch `old` (of `records` records) again.
pub fn supersedes_note(old: &str, records: usize) -> String {
    format!("reads the file of batch {old} again: silver reads this batch instead of that one ({records} records set aside)")
}

/// The note on a batch a right-to-be-forgotten request erased `records` from.
pub fn erased_note(records: usize, reason: &str) -> String {
    format!(
        "{records} record(s) erased (right to be forgotten: {reason}); the landed file was deleted"
    )
}

/// The batches of the bronze table whose log is `log`, each with its
/// ordinal, in version order, as the whole log makes them. Errors: the
/// log cannot be read, or a commit's batch parameters are not what
/// [`write_params`] / [`delete_params`] write (naming the version).
pub async fn read(log: &TableLog) -> Result<Vec<(usize, BatchInfo)>> {
    let mut batches: Vec<(usize, BatchInfo)> = Vec::new();
    for version in log.versions().await? {
        let Some(commit) = log.entry(version).await?.into_iter().find_map(|a| match a {
            Action::CommitInfo(c) => Some(c),
            _ => None,
        }) else {
            continue;
        };
        let bad = |what: &str, e: String| {
            EngineError::Storage(format!(
                "{}: version {version}: {what} cannot be read ({e})",
                log.dir()
            ))
        };
        let params = &commit.operation_parameters;
        if let Some(json) = params.get(BATCH) {
            let mut info: BatchInfo =
                serde_json::from_str(json).map_err(|e| bad(BATCH, e.to_string()))?;
            let ordinal = params
                .get(BATCH_ORDINAL)
                .and_then(|o| o.parse().ok())
                .ok_or_else(|| bad(BATCH_ORDINAL, "not a number".into()))?;
            info.version = version;
            if let Some(old) = params.get(SUPERSEDES) {
                let (_, first) = batches
                    .iter_mut()
                    .find(|(_, b)| &b.batch_id == old)
                    .ok_or_else(|| bad(SUPERSEDES, format!("no batch {old} before it")))?;
                first.superseded_by = Some(info.batch_id.clone());
                first.notes.push(superseded_note(&info.batch_id));
                info.notes.push(supersedes_note(old, first.records));
            }
            batches.push((ordinal, info));
        }
        if let Some(json) = params.get(ERASED) {
            let erased: Vec<ErasedBatch> =
                serde_json::from_str(json).map_err(|e| bad(ERASED, e.to_string()))?;
            let reason = params.get("reason").map(String::as_str).unwrap_or_default();
            for e in erased {
                let (_, info) = batches
                    .iter_mut()
                    .find(|(_, b)| b.batch_id == e.batch_id)
                    .ok_or_else(|| bad(ERASED, format!("no batch {} before it", e.batch_id)))?;
                info.erased_records += e.records;
                info.path = e.path;
                info.landing_path = None;
                info.notes.push(erased_note(e.records, reason));
            }
        }
    }
    Ok(batches)
}
