//! The twin's bronze: the session's bronze batches as an ingest
//! anti-pattern would have stored them (seed 000 §6). Each function takes
//! the batches of every bronze table (`(BatchInfo, rows)` in ingest order,
//! raw or typed) and returns them with the records the anti-pattern never
//! writes left out, each batch's `records` count lowered to match, and the
//! number of records left out per table (name without the layer).

use std::collections::{BTreeMap, HashSet};

use datafusion::arrow::array::{Array, BooleanArray, RecordBatch, StringArray};
use datafusion::arrow::compute::filter_record_batch;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};

use crate::bronze::BatchInfo;
use crate::error::{EngineError, Result};
use crate::model::PipelineDef;
use crate::silver::source::parse_bronze;

/// Every bronze table's batches, by table name without the layer.
pub type BronzeBatches = BTreeMap<String, Vec<(BatchInfo, RecordBatch)>>;

/// `dropDuplicates(keys)` at ingest: per bronze table, only the first record
/// (in arrival order) of each business key is kept. The key is the MERGE
/// key of the silver table that reads the table, where bronze's declared
/// schema has those columns; otherwise, or for a record whose key does not
/// parse, the record's whole text (`raw_payload`). Batches read again with
/// other options (superseded) are left as they are.
pub fn drop_duplicates(
    def: &PipelineDef,
    bronze: &BronzeBatches,
) -> Result<(BronzeBatches, BTreeMap<String, usize>)> {
    let mut dropped_ids: HashSet<String> = HashSet::new();
    for b in &def.bronze {
        let Some(batches) = bronze.get(&b.name) else {
            continue;
        };
        let keys: Vec<String> = def
            .silver
            .iter()
            .filter(|s| s.source == b.name && s.explode.is_none())
            .find_map(|s| s.merge.as_ref())
            .map(|m| m.keys.clone())
            .unwrap_or_default()
            .into_iter()
            .filter(|k| b.schema.columns.iter().any(|c| &c.name == k))
            .collect();
        let live: Vec<(BatchInfo, RecordBatch)> = batches
            .iter()
            .filter(|(i, _)| i.superseded_by.is_none())
            .cloned()
            .collect();
        let parsed = parse_bronze(&b.schema, &live)?;
        let mut seen: HashSet<String> = HashSet::new();
        let rows = &parsed.rows;
        let text = |name: &str| -> Result<Vec<Option<String>>> { column_text(rows, name) };
        let ids = text("_event_id")?;
        let payloads = text("raw_payload")?;
        let key_cols = keys.iter().map(|k| text(k)).collect::<Result<Vec<_>>>()?;
        // Parsed rows and rejected ones, back in arrival order by event id.
        let mut order: std::collections::HashMap<String, usize> = Default::default();
        for (_, rb) in &live {
            for id in column_text(rb, "_event_id")?.into_iter().flatten() {
                let n = order.len();
                order.entry(id).or_insert(n);
            }
        }
        let mut records: Vec<(usize, String, String)> = Vec::new();
        for r in 0..rows.num_rows() {
            let id = ids[r].clone().unwrap_or_default();
            let key = if key_cols.is_empty() || key_cols.iter().any(|c| c[r].is_none()) {
                format!("r:{}", payloads[r].clone().unwrap_or_default())
            } else {
                format!(
                    "k:{}",
                    key_cols
                        .iter()
                        .map(|c| c[r].clone().unwrap_or_default())
                        .collect::<Vec<_>>()
                        .join("\u{1f}")
                )
            };
            records.push((order.get(&id).copied().unwrap_or(usize::MAX), id, key));
        }
        for rj in &parsed.rejected {
            records.push((
                order.get(&rj.event_id).copied().unwrap_or(usize::MAX),
                rj.event_id.clone(),
                format!("r:{}", rj.raw_payload),
            ));
        }
        records.sort();
        for (_, id, key) in records {
            if !seen.insert(key) {
                dropped_ids.insert(id);
            }
        }
    }
    without_events(bronze, &dropped_ids)
}

/// A business filter at ingest: the records whose `_event_id` is in
/// `rejected` (what silver's rules quarantined or filtered out) are never
/// written to bronze.
pub fn keep_passed(
    bronze: &BronzeBatches,
    rejected: &HashSet<String>,
) -> Result<(BronzeBatches, BTreeMap<String, usize>)> {
    without_events(bronze, rejected)
}

/// `bronze` without the records whose `_event_id` is in `ids`.
fn without_events(
    bronze: &BronzeBatches,
    ids: &HashSet<String>,
) -> Result<(BronzeBatches, BTreeMap<String, usize>)> {
    let mut out = BronzeBatches::new();
    let mut left_out = BTreeMap::new();
    for (table, batches) in bronze {
        let mut kept = Vec::with_capacity(batches.len());
        let mut n = 0usize;
        for (info, rows) in batches {
            let events = rows
                .column_by_name("_event_id")
                .and_then(|c| c.as_any().downcast_ref::<StringArray>())
                .ok_or_else(|| EngineError::Internal(format!("bronze.{table} has no _event_id")))?;
            let keep: BooleanArray = (0..events.len())
                .map(|i| Some(events.is_null(i) || !ids.contains(events.value(i))))
                .collect();
            let rows = filter_record_batch(rows, &keep)?;
            let gone = events.len() - rows.num_rows();
            n += gone;
            let mut info = info.clone();
            info.records = info.records.saturating_sub(gone);
            kept.push((info, rows));
        }
        left_out.insert(table.clone(), n);
        out.insert(table.clone(), kept);
    }
    Ok((out, left_out))
}

/// Column `name` of `rows` as text (`None` for NULL); an error when absent.
pub(crate) fn column_text(rows: &RecordBatch, name: &str) -> Result<Vec<Option<String>>> {
    let col = rows
        .column_by_name(name)
        .ok_or_else(|| EngineError::Internal(format!("no column {name}")))?;
    let opts = FormatOptions::default();
    let f = ArrayFormatter::try_new(col.as_ref(), &opts)?;
    Ok((0..col.len())
        .map(|i| (!col.is_null(i)).then(|| f.value(i).to_string()))
        .collect())
}

/// `mode("overwrite")` of the day's partition: per bronze table, each
/// batch replaces the earlier live batches that landed the same UTC day
/// (`_ingest_ts`), so only the last batch of each day is left. Returns the
/// batches kept and, per table, the records overwritten; the overwritten
/// batches' ids are in the third value (their versions are gone).
pub fn overwrite_partitions(
    bronze: &BronzeBatches,
) -> (BronzeBatches, BTreeMap<String, usize>, Vec<String>) {
    const DAY: i64 = 86_400_000_000;
    let mut out = BronzeBatches::new();
    let mut left_out = BTreeMap::new();
    let mut gone = Vec::new();
    for (table, batches) in bronze {
        let last_of_day: BTreeMap<i64, &str> = batches
            .iter()
            .filter(|(i, _)| i.superseded_by.is_none())
            .map(|(i, _)| (i.ingest_ts_micros.div_euclid(DAY), i.batch_id.as_str()))
            .collect();
        let mut n = 0;
        let mut kept = Vec::new();
        for (info, rows) in batches {
            let day = info.ingest_ts_micros.div_euclid(DAY);
            if info.superseded_by.is_none()
                && last_of_day.get(&day) != Some(&info.batch_id.as_str())
            {
                n += rows.num_rows();
                gone.push(info.batch_id.clone());
            } else {
                kept.push((info.clone(), rows.clone()));
            }
        }
        left_out.insert(table.clone(), n);
        out.insert(table.clone(), kept);
    }
    (out, left_out, gone)
}
