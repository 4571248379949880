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

/// What the weekly fix job did to one bronze table (seed 000 §6).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct FixedRecords {
    /// Records rewritten in place (`UPDATE`): a negative amount made positive.
    pub updated: usize,
    /// Records removed (`DELETE`): every other record silver rejected.
    pub deleted: usize,
}

/// The weekly "fix" job on bronze (`UPDATE` / `DELETE` of raw records,
/// seed 000 §6): every record whose `_event_id` is in `rejected` (what
/// silver's rules kept out) is either UPDATEd, when its table's amount
/// column (`amount`, table name → column) holds a negative number in a
/// raw payload (the minus dropped: [`crate::lab::events::make_positive`]),
/// or DELETEd. A typed bronze batch (no `raw_payload`) only has DELETEs.
/// Returns the fixed batches and, per table, what the job did.
pub fn fix_job(
    bronze: &BronzeBatches,
    rejected: &HashSet<String>,
    amount: &BTreeMap<String, String>,
) -> Result<(BronzeBatches, BTreeMap<String, FixedRecords>)> {
    use datafusion::arrow::array::ArrayRef;
    let mut out = BronzeBatches::new();
    let mut done = BTreeMap::new();
    for (table, batches) in bronze {
        let mut fixed = FixedRecords::default();
        let mut kept = Vec::with_capacity(batches.len());
        for (info, rows) in batches {
            let events = rows
                .column_by_name("_event_id")
                .and_then(|c| c.as_any().downcast_ref::<StringArray>())
                .ok_or_else(|| EngineError::Internal(format!("bronze.{table} has no _event_id")))?;
            let payload_at = rows.schema().index_of("raw_payload").ok();
            let payloads = payload_at.and_then(|i| {
                rows.column(i)
                    .as_any()
                    .downcast_ref::<StringArray>()
                    .cloned()
            });
            let mut texts: Vec<Option<String>> = Vec::with_capacity(rows.num_rows());
            let mut keep = Vec::with_capacity(rows.num_rows());
            for i in 0..rows.num_rows() {
                let text = payloads
                    .as_ref()
                    .and_then(|p| (!p.is_null(i)).then(|| p.value(i).to_string()));
                if events.is_null(i) || !rejected.contains(events.value(i)) {
                    texts.push(text);
                    keep.push(Some(true));
                    continue;
                }
                let updated = match (&text, amount.get(table)) {
                    (Some(t), Some(col)) => crate::lab::events::edit_record(
                        info.format,
                        info.dialect.as_ref(),
                        &info.header,
                        t,
                        |f| crate::lab::events::make_positive(f, col),
                    )
                    .ok()
                    .flatten(),
                    _ => None,
                };
                match updated {
                    Some(new) => {
                        fixed.updated += 1;
                        texts.push(Some(new));
                        keep.push(Some(true));
                    }
                    None => {
                        fixed.deleted += 1;
                        texts.push(text);
                        keep.push(Some(false));
                    }
                }
            }
            let mut columns: Vec<ArrayRef> = rows.columns().to_vec();
            if let Some(i) = payload_at {
                columns[i] = std::sync::Arc::new(StringArray::from(texts));
            }
            let rows = RecordBatch::try_new(rows.schema(), columns)?;
            let rows = filter_record_batch(&rows, &BooleanArray::from(keep))?;
            let mut info = info.clone();
            info.records = rows.num_rows();
            kept.push((info, rows));
        }
        done.insert(table.clone(), fixed);
        out.insert(table.clone(), kept);
    }
    Ok((out, done))
}

/// Column names a customer is identified by, most specific first.
const CUSTOMER_COLUMNS: &[&str] = &["user_id", "customer_id", "client_id", "passenger_id"];

/// The customer a weekly DELETE request names: the customer column (the
/// first of [`CUSTOMER_COLUMNS`] a bronze table declares) and its value
/// with the most records (ties: the smallest text), over every bronze
/// table that declares it. `None` when no table has such a column.
pub fn customer_to_delete(
    def: &PipelineDef,
    bronze: &BronzeBatches,
) -> Result<Option<(String, String)>> {
    let Some(column) = CUSTOMER_COLUMNS.iter().find(|c| {
        def.bronze
            .iter()
            .any(|b| b.schema.columns.iter().any(|d| d.name == **c))
    }) else {
        return Ok(None);
    };
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for (_, ids) in customer_values(def, bronze, column)? {
        for (_, v) in ids {
            *counts.entry(v).or_default() += 1;
        }
    }
    let best = counts
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .map(|(v, _)| (column.to_string(), v));
    Ok(best)
}

/// Per bronze table declaring `column`: each parsed record's `_event_id`
/// and its value there (as text; records without one left out).
fn customer_values(
    def: &PipelineDef,
    bronze: &BronzeBatches,
    column: &str,
) -> Result<Vec<(String, Vec<(String, String)>)>> {
    let mut out = Vec::new();
    for b in &def.bronze {
        if !b.schema.columns.iter().any(|c| c.name == column) {
            continue;
        }
        let Some(batches) = bronze.get(&b.name) else {
            continue;
        };
        let parsed = parse_bronze(&b.schema, batches)?;
        let ids = column_text(&parsed.rows, "_event_id")?;
        let values = column_text(&parsed.rows, column)?;
        let pairs = ids
            .into_iter()
            .zip(values)
            .filter_map(|(i, v)| Some((i?, v?)))
            .collect();
        out.push((b.name.clone(), pairs));
    }
    Ok(out)
}

/// The weekly `DELETE FROM bronze.… WHERE column = value` (seed 000 §7):
/// the records of that customer leave every bronze table declaring
/// `column`. Returns the batches and the records deleted per table.
pub fn weekly_delete(
    def: &PipelineDef,
    bronze: &BronzeBatches,
    column: &str,
    value: &str,
) -> Result<(BronzeBatches, BTreeMap<String, usize>)> {
    let ids: HashSet<String> = customer_values(def, bronze, column)?
        .into_iter()
        .flat_map(|(_, pairs)| pairs)
        .filter(|(_, v)| v == value)
        .map(|(i, _)| i)
        .collect();
    without_events(bronze, &ids)
}
