//! Right to be forgotten (seed `000_87b8dd7200a8cd99.txt` §7, the last
//! resort of an append-only bronze): plan first, write second.
//!
//! ```text
//!  plan_forget(table, condition)                     forget(table, condition, reason, expected_rows)
//!   ├─ match: the condition over the whole bronze      ├─ match again (same rows, or refused:
//!   │  table (one value per row, a window included),   │  "the matching rows changed since the plan")
//!   │  and over the Kafka topic in front of it          ├─ rewrite the batches' Parquet files without
//!   ├─ dry run: silver, quarantine and gold rebuilt    │  them, delete their landed files, erase topic
//!   │  from the remaining bronze in a scratch lake     │  messages, log a DELETE version
//!   └─ ErasurePlan: per table, rows that leave /       └─ full refresh; older silver / gold snapshots
//!      appear, with a sample                              expire
//! ```
//!
//! Nothing changes until `forget`; a condition that cannot be computed for
//! some row, or that matches nothing, changes nothing.

use medallion_protocol::{Layer, TableName};
use std::collections::{BTreeMap, HashSet};

use datafusion::arrow::array::{Array, BooleanArray, RecordBatch, StringArray};
use crate::lake::concat_batches;
use datafusion::arrow::compute::{filter_record_batch, not};

use super::Playground;
use crate::api::Erasure;
use crate::bronze::batch_log::{self, ErasedBatch};
use crate::bronze::{bronze_batch, Audit, BatchInfo};
use crate::error::{EngineError, Result};
use crate::lake::encode_parquet;
use crate::lake::log::{Action, CommitInfo, TableLog};
use crate::lake::versions::batch_file;
use crate::output::RunOutput;

pub use medallion_protocol::forget::{ErasureChange, ErasurePlan, PLAN_SAMPLE_ROWS};

/// The bronze rows and topic messages a condition matches.
struct Matches {
    /// Per batch (index in the table's batch list): the rows to keep.
    keep: Vec<(usize, BooleanArray)>,
    rows: usize,
    /// `_event_id`s of the matching rows.
    event_ids: HashSet<String>,
    /// Offsets of matching topic messages.
    topic_offsets: Vec<usize>,
    /// Up to [`PLAN_SAMPLE_ROWS`] matching rows, described.
    sample: Vec<String>,
}

impl Playground {
    /// The rows `predicate` matches in bronze `name` (whole table) and its topic.
    async fn match_rows(&self, name: &str, predicate: &str) -> Result<Matches> {
        if self.def.bronze_table(name).is_none() {
            return Err(EngineError::Request(format!(
                "there is no bronze table {name}"
            )));
        }
        if predicate.trim().is_empty() {
            return Err(EngineError::Request(
                "say which rows to delete with a condition, e.g. raw_payload LIKE '%C-17%'; nothing was deleted".into(),
            ));
        }
        let refuse = |e: String| {
            EngineError::Request(format!(
                "the condition {predicate}: {e}; nothing was deleted"
            ))
        };
        let batches: &[(BatchInfo, RecordBatch)] =
            self.bronze.get(name).map(Vec::as_slice).unwrap_or(&[]);
        // One evaluation over the whole table, as a SQL DELETE ... WHERE would:
        // a window in the condition sees every row of the table.
        let schema = self.bronze_schema_of(name);
        let all = concat_batches(&schema, batches.iter().map(|(_, b)| b))?;
        let (mask, errors) = crate::silver::filter::predicate_mask(&self.ctx, &all, predicate)
            .await
            .map_err(|e| refuse(e.to_string()))?;
        if let Some((row, error)) = errors.first() {
            return Err(refuse(format!(
                "cannot be computed for {} {} ({}: {error}), so whether {} should be erased is unknown",
                errors.len(),
                if errors.len() == 1 { "row" } else { "rows" },
                describe_bronze(&all, *row),
                if errors.len() == 1 { "it" } else { "they" },
            )));
        }
        let ids = all
            .column_by_name("_event_id")
            .and_then(|c| c.as_any().downcast_ref::<StringArray>());
        let matching: Vec<usize> = (0..all.num_rows()).filter(|&r| mask.value(r)).collect();
        let event_ids: HashSet<String> = matching
            .iter()
            .filter_map(|&r| ids.map(|i| i.value(r).to_string()))
            .collect();
        let sample = matching
            .iter()
            .take(PLAN_SAMPLE_ROWS)
            .map(|&r| describe_bronze(&all, r))
            .collect();
        let mut keep = Vec::new();
        let mut start = 0;
        for (i, (_, b)) in batches.iter().enumerate() {
            let part = mask.slice(start, b.num_rows());
            start += b.num_rows();
            if part.true_count() > 0 {
                keep.push((i, not(&part)?));
            }
        }
        // Messages still in the Kafka topic would come back with the next poll.
        let mut topic_offsets = Vec::new();
        if let Some(topic) = self.topics.get(name) {
            let (split, files, producer) = topic.micro_batch(0, topic.log.len());
            let audit = Audit {
                ingest_ts_micros: 0,
                source_system: "",
                source_file: "",
                source_files: files,
                producer_ts: producer,
                batch_id: "",
                event_ids: vec![""; split.records.len()].into(),
            };
            let offsets: Vec<usize> = topic.live_offsets();
            if let Ok(rows) = bronze_batch(&split.records, audit) {
                let (mask, _) = crate::silver::filter::predicate_mask(&self.ctx, &rows, predicate)
                    .await
                    .map_err(|e| refuse(e.to_string()))?;
                topic_offsets = (0..mask.len())
                    .filter(|i| mask.value(*i))
                    .filter_map(|i| offsets.get(i).copied())
                    .collect();
            }
        }
        if matching.is_empty() && topic_offsets.is_empty() {
            return Err(EngineError::Request(format!(
                "no row of bronze.{name} matches {predicate}; nothing was deleted"
            )));
        }
        Ok(Matches {
            keep,
            rows: matching.len(),
            event_ids,
            topic_offsets,
            sample,
        })
    }

    /// What `forget(table, predicate, ..)` would erase, per table, with a
    /// sample of the rows, computed with a dry run of silver and gold in a
    /// scratch lake. Changes nothing. Errors as [`Playground::forget`].
    pub async fn plan_forget(&self, table: &str, predicate: &str) -> Result<ErasurePlan> {
        let name = Layer::Bronze.unqualified(table).to_string();
        let m = self.match_rows(&name, predicate).await?;
        let batches = self.bronze.get(&name).map(Vec::as_slice).unwrap_or(&[]);
        let files = m
            .keep
            .iter()
            .filter_map(|(i, _)| batches.get(*i))
            .filter_map(|(info, _)| info.landing_path.clone())
            .collect();
        let qualified = TableName::bronze(&name);
        let mut tables = vec![ErasureChange {
            name: qualified.clone(),
            rows_before: batches.iter().map(|(_, b)| b.num_rows()).sum(),
            removed: m.rows,
            added: 0,
            sample_removed: m.sample.clone(),
            sample_added: vec![],
        }];
        // The dry run: the pipeline over the bronze that would remain.
        let mut remaining = self.bronze.clone();
        if let Some(list) = remaining.get_mut(&name) {
            for (i, keep) in &m.keep {
                if let Some(entry) = list.get_mut(*i) {
                    entry.1 = filter_record_batch(&entry.1, keep)?;
                }
            }
        }
        let mut rebuild_error = None;
        match self.rebuild(&remaining).await {
            Err(e) => rebuild_error = Some(e.to_string()),
            Ok(out) => {
                if !out.gold_errors.is_empty() {
                    rebuild_error = Some(
                        out.gold_errors
                            .iter()
                            .map(|d| format!("{}: {}", TableName::gold(&d.id), d.message))
                            .collect::<Vec<_>>()
                            .join("; "),
                    );
                }
                tables.extend(self.changes(&out, &m.event_ids)?);
            }
        }
        Ok(ErasurePlan {
            table: qualified,
            predicate: predicate.to_string(),
            rows: m.rows,
            messages: m.topic_offsets.len(),
            files,
            tables,
            rebuild_error,
            state: self.state_token(),
        })
    }

    /// How every silver and gold table changes from now to `after`, and the
    /// quarantine rows of the erased events (the quarantine is history: the
    /// erasure removes them, open or closed).
    fn changes(&self, after: &RunOutput, erased: &HashSet<String>) -> Result<Vec<ErasureChange>> {
        let mut out = Vec::new();
        let current = self.last_good.as_ref();
        let names: Vec<&TableName> = current
            .map(|c| c.tables.iter().map(|t| &t.name).collect())
            .unwrap_or_default();
        for name in names.into_iter().filter(|n| !n.is_bronze()) {
            let Some(before) = self.table_batch(name) else {
                continue;
            };
            let change = if name.is_quarantine() {
                let gone: Vec<usize> = before
                    .column_by_name("_event_id")
                    .and_then(|c| c.as_any().downcast_ref::<StringArray>())
                    .map(|ids| {
                        (0..ids.len())
                            .filter(|&r| erased.contains(ids.value(r)))
                            .collect()
                    })
                    .unwrap_or_default();
                ErasureChange {
                    name: name.clone(),
                    rows_before: before.num_rows(),
                    removed: gone.len(),
                    added: 0,
                    sample_removed: sample(&before, &gone),
                    sample_added: vec![],
                }
            } else {
                let after = after.table(name);
                let (removed, added) = match after {
                    Some(a) => crate::lake::versions::diff_rows(&before, a)?,
                    None => ((0..before.num_rows()).collect(), vec![]),
                };
                ErasureChange {
                    name: name.clone(),
                    rows_before: before.num_rows(),
                    removed: removed.len(),
                    added: added.len(),
                    sample_removed: sample(&before, &removed),
                    sample_added: after.map(|a| sample(a, &added)).unwrap_or_default(),
                }
            };
            if change.removed > 0 || change.added > 0 {
                out.push(change);
            }
        }
        Ok(out)
    }

    /// Right to be forgotten (seed 000 §7, the last resort): deletes the rows
    /// of bronze `table` where `predicate` (SQL over the bronze columns,
    /// evaluated over the whole table) is TRUE. The batches' Parquet files
    /// are rewritten without them, so no bronze version shows them any more;
    /// their landed files are deleted; matching messages still in the Kafka
    /// topic are erased; silver and gold are rebuilt (full refresh) and their
    /// older snapshots expire. The delete is logged with `reason` and is a
    /// `DELETE` version. With `expected_rows` (the count a
    /// [`Playground::plan_forget`] showed), refused when the condition now
    /// matches another number of rows; with `plan_state` (the plan's
    /// [`ErasurePlan::state`]), refused when the session changed since.
    /// Refused, changing nothing, without a
    /// reason, when no row matches, or when the condition cannot be computed
    /// for some row.
    pub async fn forget(
        &mut self,
        table: &str,
        predicate: &str,
        reason: &str,
        expected_rows: Option<usize>,
        plan_state: Option<&str>,
    ) -> Result<Erasure> {
        let name = Layer::Bronze.unqualified(table).to_string();
        if reason.trim().is_empty() {
            return Err(EngineError::Request(
                "a right-to-be-forgotten delete needs a reason (the request it answers); nothing was deleted".into(),
            ));
        }
        // The plan showed what this state gives; on another state it may not hold.
        if plan_state.is_some_and(|s| s != self.state_token()) {
            return Err(EngineError::Request(
                "the session changed since the plan was made (a file, a rule, a version or a Kafka message), so it may no longer show what this delete does; look at the plan again. Nothing was deleted.".into(),
            ));
        }
        let m = self.match_rows(&name, predicate).await?;
        if let Some(expected) = expected_rows.filter(|e| *e != m.rows) {
            return Err(EngineError::Request(format!(
                "the condition now matches {} bronze rows, not the {expected} of the plan (bronze changed since); look at the plan again. Nothing was deleted.",
                m.rows
            )));
        }
        // Work out every change before the first write.
        let schema = self.bronze_schema_of(&name);
        let mut rewrites = Vec::new();
        for (i, keep) in &m.keep {
            let Some((info, rows)) = self.bronze.get(&name).and_then(|v| v.get(*i)) else {
                continue;
            };
            let kept = filter_record_batch(rows, keep)?;
            let hits = rows.num_rows() - kept.num_rows();
            let encoded = encode_parquet(schema.clone(), std::slice::from_ref(&kept))?;
            rewrites.push((*i, info.clone(), kept, encoded, hits));
        }
        let ts = self.clock.now_micros();
        let batches = rewrites.len();
        let dir = TableName::bronze(&name).path();
        let log = TableLog::new(self.lake.store(), dir.clone());
        let read_version = log.latest().await?;
        let version = read_version.map_or(0, |v| v + 1);
        let mut logged = vec![];
        // Each rewritten batch gets a new file beside the old one; the
        // entry removes the old and adds the new; only once it is written
        // are the old files (with the erased rows) deleted. A failure
        // before that leaves the previous version as it was.
        let relative = |path: &str| {
            path.strip_prefix(&format!("{dir}/"))
                .unwrap_or(path)
                .to_string()
        };
        let mut new_paths = Vec::with_capacity(rewrites.len());
        for (_, info, kept, encoded, _) in &rewrites {
            // Named from the batch (`part-000003.v7.parquet`), however
            // often it was rewritten before.
            let new_path = format!("{}.v{version}.parquet", batch_file(&info.path));
            logged.push(Action::remove_file(relative(&info.path), ts / 1000));
            logged.push(Action::add_file(
                relative(&new_path),
                encoded.len() as u64,
                ts / 1000,
                Some(kept.num_rows()),
            ));
            new_paths.push(new_path);
        }
        // The batch log reads what this request erased from its entry.
        let erased: Vec<ErasedBatch> = rewrites
            .iter()
            .zip(&new_paths)
            .map(|((_, info, _, _, hits), path)| ErasedBatch {
                batch_id: info.batch_id.clone(),
                records: *hits,
                path: path.clone(),
            })
            .collect();
        logged.insert(
            0,
            Action::CommitInfo(batch_log::delete_params(
                CommitInfo::new(
                    ts,
                    "DELETE",
                    format!("right to be forgotten: {reason}"),
                    0,
                    m.rows,
                )
                .with("predicate", predicate)
                .with("reason", reason),
                &erased,
            )?),
        );
        let mut written = Vec::new();
        let mut outcome = Ok(());
        for ((_, _, _, encoded, _), path) in rewrites.iter().zip(&new_paths) {
            outcome = self.lake.put_bytes(path, encoded.to_vec()).await;
            if outcome.is_err() {
                break;
            }
            written.push(path.clone());
        }
        if outcome.is_ok() {
            outcome = log
                .commit(read_version, &logged)
                .await
                .map(|_| ())
                .map_err(Into::into);
        }
        if let Err(e) = outcome {
            // Not committed: the new files are named by no entry; remove them.
            for path in written {
                let _ = self.lake.delete(&path).await;
            }
            return Err(e);
        }
        if let Some(topic) = self.topics.get_mut(&name) {
            for o in &m.topic_offsets {
                if let Some(msg) = topic.log.get_mut(*o) {
                    msg.value = None;
                    msg.erased = true;
                }
            }
        }
        for (i, info, kept, _, _) in rewrites {
            self.lake.delete(&info.path).await?;
            if let Some(landing) = &info.landing_path {
                self.lake.delete(landing).await?;
            }
            if let Some(entry) = self.bronze.get_mut(&name).and_then(|v| v.get_mut(i)) {
                entry.1 = kept;
            }
        }
        self.refresh_batch_log(&name).await?;
        self.register_bronze(&name).await?;
        let qualified = TableName::bronze(&name);
        self.history.refresh(&self.lake, &qualified).await?;
        let version = self.history.current(&qualified).unwrap_or_default();
        let erasure = Erasure {
            table: qualified,
            predicate: predicate.to_string(),
            reason: reason.to_string(),
            rows: m.rows,
            batches,
            messages: m.topic_offsets.len(),
            ts_micros: ts,
            version,
        };
        self.erasures.push(erasure.clone());
        // Silver and gold may hold the erased data: rebuild them from what is left,
        // and let none of their older snapshots keep it. The quarantine's
        // history and gold tables refreshed by MERGE carry rows over from run
        // to run: the erased records leave them first.
        let shown: Vec<TableName> = self
            .last_good
            .iter()
            .flat_map(|o| o.tables.iter().map(|t| t.name.clone()))
            .collect();
        if let Some(out) = self.last_good.as_mut() {
            let merged_gold: Vec<TableName> = self
                .def
                .gold
                .iter()
                .filter(|g| !g.merge_on.is_empty())
                .map(|g| TableName::gold(&g.name))
                .collect();
            out.tables.retain(|t| !merged_gold.contains(&t.name));
            for t in out.tables.iter_mut().filter(|t| t.name.is_quarantine()) {
                t.batch = without_events(&t.batch, &m.event_ids)?;
            }
        }
        if !self.run_with(false).await {
            // Silver could not be rebuilt: the page shows what the lake
            // holds (bronze without the records, silver and gold at their
            // versions), never the in-memory tables changed above.
            self.show_lake_after_erasure(&shown, &m.event_ids)?;
        }
        if !self.run_info.ok {
            // The rules' errors, then what they held back.
            let mut why: Vec<String> = self
                .diagnostics
                .iter()
                .filter(|d| d.scope != "pipeline")
                .map(|d| format!("{}: {}", d.id, d.message))
                .collect();
            why.extend(self.run_info.errors.iter().cloned());
            self.notice = Some(format!(
                "{}: {} record(s) erased from bronze, but silver and gold could not all be rebuilt ({}): a table still at its previous version may hold the erased records until a run succeeds.",
                erasure.table,
                erasure.rows,
                why.join("; ")
            ));
        }
        let tables: Vec<TableName> = self
            .history
            .all()
            .into_keys()
            .filter(|t| !t.is_bronze())
            .collect();
        for t in tables {
            self.history.expire_all_but_current(&self.lake, &t).await?;
        }
        Ok(erasure)
    }
}

impl Playground {
    /// After an erasure whose rebuild failed: the last run's tables `names`
    /// as the lake holds them, and its typed bronze rows without the erased
    /// records (`erased` `_event_id`s).
    fn show_lake_after_erasure(
        &mut self,
        names: &[TableName],
        erased: &HashSet<String>,
    ) -> Result<()> {
        let Some(out) = self.last_good.as_ref() else {
            return Ok(());
        };
        let tables = self.committed_tables(names, &out.bronze_batches)?;
        let mut typed = BTreeMap::new();
        for (table, rows) in &out.typed_bronze {
            typed.insert(table.clone(), without_events(rows, erased)?);
        }
        if let Some(out) = self.last_good.as_mut() {
            out.tables = tables;
            out.typed_bronze = typed;
        }
        Ok(())
    }
}

/// `rows` without those whose `_event_id` is in `erased`.
fn without_events(rows: &RecordBatch, erased: &HashSet<String>) -> Result<RecordBatch> {
    let Some(ids) = rows
        .column_by_name("_event_id")
        .and_then(|c| c.as_any().downcast_ref::<StringArray>())
    else {
        return Ok(rows.clone());
    };
    let keep: BooleanArray = (0..rows.num_rows())
        .map(|r| Some(!(ids.is_valid(r) && erased.contains(ids.value(r)))))
        .collect();
    Ok(filter_record_batch(rows, &keep)?)
}

/// A bronze row for a plan: `rw-29.csv line 2: P-2,1`.
fn describe_bronze(batch: &RecordBatch, row: usize) -> String {
    let text = |name: &str| {
        batch
            .column_by_name(name)
            .and_then(|c| c.as_any().downcast_ref::<StringArray>())
            .filter(|c| c.is_valid(row))
            .map(|c| c.value(row).to_string())
    };
    let line = batch
        .column_by_name("_source_line")
        .and_then(|c| {
            c.as_any()
                .downcast_ref::<datafusion::arrow::array::Int64Array>()
        })
        .filter(|c| c.is_valid(row) && c.value(row) > 0)
        .map(|c| format!(" line {}", c.value(row)))
        .unwrap_or_default();
    let payload = text("raw_payload")
        .or_else(|| text("_corrupt_record"))
        .unwrap_or_else(|| crate::trail::describe_row(batch, row));
    format!(
        "{}{line}: {payload}",
        text("_source_file").unwrap_or_default()
    )
}

fn sample(batch: &RecordBatch, rows: &[usize]) -> Vec<String> {
    rows.iter()
        .take(PLAN_SAMPLE_ROWS)
        .map(|&r| crate::trail::describe_row(batch, r))
        .collect()
}

/// Bronze batches per table (name without the layer), as [`Playground`] keeps them.
pub(super) type BronzeTables = BTreeMap<String, Vec<(BatchInfo, RecordBatch)>>;
