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
                        |f| {
                            let decimal = info
                                .dialect
                                .as_ref()
                                .map(|d| d.decimal_separator)
                                .or(info.options.decimal_separator)
                                .unwrap_or('.');
                            crate::lab::events::make_positive(f, col, decimal)
                        },
                        crate::api::Lang::En,
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
/// first of [`CUSTOMER_COLUMNS`] a bronze table holds) and its value
/// with the most records (ties: the smallest text), over every bronze
/// table that declares it. `None` when no table has such a column.
pub fn customer_to_delete(
    def: &PipelineDef,
    bronze: &BronzeBatches,
) -> Result<Option<(String, String)>> {
    let Some(column) = CUSTOMER_COLUMNS
        .iter()
        .find(|c| def.bronze.iter().any(|b| column_in(def, b, c).is_some()))
    else {
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

/// The column of bronze table `b` that holds `column`: itself when `b`
/// declares it, else the declared column a silver table reading `b`
/// renames to it in its select list (`uid AS user_id`).
pub(crate) fn column_in(
    def: &PipelineDef,
    b: &crate::model::BronzeTableDef,
    column: &str,
) -> Option<String> {
    let declared = |n: &str| b.schema.columns.iter().any(|c| c.name == n);
    if declared(column) {
        return Some(column.to_string());
    }
    def.silver
        .iter()
        .filter(|s| s.source == b.name)
        .flat_map(|s| s.select.iter())
        .find_map(|item| {
            let (src, alias) = crate::silver::select::select_item(item).ok()?;
            (alias.as_deref() == Some(column) && declared(&src)).then_some(src)
        })
}

/// Per bronze table holding `column` (see [`column_in`]): each parsed record's `_event_id`
/// and its value there (as text; records without one left out).
fn customer_values(
    def: &PipelineDef,
    bronze: &BronzeBatches,
    column: &str,
) -> Result<Vec<(String, Vec<(String, String)>)>> {
    let mut out = Vec::new();
    for b in &def.bronze {
        let Some(own) = column_in(def, b, column) else {
            continue;
        };
        let Some(batches) = bronze.get(&b.name) else {
            continue;
        };
        let parsed = parse_bronze(&b.schema, batches)?;
        let ids = column_text(&parsed.rows, "_event_id")?;
        let values = column_text(&parsed.rows, &own)?;
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
/// the records of that customer leave every bronze table holding
/// `column` (declared, or renamed to it by silver: `uid AS user_id`). Returns the batches and the records deleted per table.
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

/// A lookup a silver rule joins at ingest under the JOIN-at-ingest
/// anti-pattern (seed 000 §6): the rule's `on` as pairs of a fact column
/// and a lookup column (`user_id = u.user_id`), and the lookup columns its
/// expression reads (`u.country, u.segment`: `country`, `segment`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IngestJoin {
    /// The silver table whose rule it is, and the rule's id.
    pub silver: String,
    pub rule: String,
    /// The bronze table the facts land in (without the layer).
    pub facts: String,
    pub lookup: medallion_protocol::TableName,
    pub alias: String,
    /// `(fact column, lookup column)` pairs, ANDed.
    pub on: Vec<(String, String)>,
    /// Lookup columns the rule's expression reads.
    pub columns: Vec<String>,
}

impl IngestJoin {
    /// The rule's lookup, when its `on` is column equalities joined by AND
    /// (`a = u.b AND c = u.d`, either side first) and its expression reads
    /// at least one lookup column; `None` for any other join.
    pub fn of(
        silver: &crate::model::SilverTableDef,
        rule: &medallion_protocol::rules::Rule,
    ) -> Option<IngestJoin> {
        let l = rule.lookup.as_ref()?;
        let prefix = format!("{}.", l.alias);
        let ident =
            |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        let mut on = Vec::new();
        let cond = l.on.replace(" and ", " AND ");
        for part in cond.split(" AND ") {
            let (a, b) = part.split_once('=')?;
            let (a, b) = (a.trim(), b.trim());
            let (fact, look) = match (a.strip_prefix(&prefix), b.strip_prefix(&prefix)) {
                (None, Some(lb)) => (a, lb),
                (Some(la), None) => (b, la),
                _ => return None,
            };
            if !ident(fact) || !ident(look) {
                return None;
            }
            on.push((fact.to_string(), look.to_string()));
        }
        let expr = rule.resolved_expression();
        let mut columns: Vec<String> = Vec::new();
        let mut rest = expr.as_str();
        while let Some(i) = rest.find(&prefix) {
            let before_ok = rest[..i]
                .chars()
                .last()
                .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'));
            let tail = &rest[i + prefix.len()..];
            let name: String = tail
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if before_ok && !name.is_empty() && !columns.contains(&name) {
                columns.push(name.clone());
            }
            rest = &tail[name.len().min(tail.len())..];
        }
        (!columns.is_empty()).then(|| IngestJoin {
            silver: silver.name.clone(),
            rule: rule.id.clone(),
            facts: silver.source.clone(),
            lookup: l.table.clone(),
            alias: l.alias.clone(),
            on,
            columns,
        })
    }

    /// The bronze field a joined column is stored in: `joined_country`.
    /// The field the bronze job stores a looked-up column in:
    /// `joined_{alias}_{column}` (`joined_u_country`), so two lookups of
    /// the same table (pickup and drop-off zones) do not collide.
    pub fn field(&self, column: &str) -> String {
        format!("joined_{}_{column}", self.alias)
    }
}

/// The lookup's rows as the JOIN at ingest reads them: per `on` key (the
/// lookup columns' texts), the looked-up columns' texts. The last row of a
/// key wins (a lookup holds one row per key).
pub fn lookup_values(
    join: &IngestJoin,
    lookup: &RecordBatch,
) -> Result<std::collections::HashMap<Vec<Option<String>>, Vec<Option<String>>>> {
    let keys = join
        .on
        .iter()
        .map(|(_, l)| column_text(lookup, l))
        .collect::<Result<Vec<_>>>()?;
    let values = join
        .columns
        .iter()
        .map(|c| column_text(lookup, c))
        .collect::<Result<Vec<_>>>()?;
    let mut out = std::collections::HashMap::new();
    for r in 0..lookup.num_rows() {
        out.insert(
            keys.iter().map(|k| k[r].clone()).collect(),
            values.iter().map(|v| v[r].clone()).collect(),
        );
    }
    Ok(out)
}

/// The facts of `join` with the looked-up columns written into each raw
/// record as `joined_{column}` fields (a CSV batch's header gets them too):
/// `values_for(batch index)` gives the lookup as the bronze job saw it when
/// that batch landed, `keys` each record's `on` key by `_event_id`. A
/// record without a match gets empty fields (NULL). Typed batches (no
/// `raw_payload`) are left as they are. Returns the batches and the
/// records written.
pub fn bake_joined(
    bronze: &BronzeBatches,
    join: &IngestJoin,
    keys: &std::collections::HashMap<String, Vec<Option<String>>>,
    mut values_for: impl FnMut(
        usize,
    ) -> Result<
        std::collections::HashMap<Vec<Option<String>>, Vec<Option<String>>>,
    >,
) -> Result<(BronzeBatches, usize)> {
    use datafusion::arrow::array::ArrayRef;
    use serde_json::Value;
    let mut out = bronze.clone();
    let mut n = 0;
    let Some(batches) = out.get_mut(&join.facts) else {
        return Ok((out, 0));
    };
    for (bi, (info, rows)) in batches.iter_mut().enumerate() {
        let Ok(at) = rows.schema().index_of("raw_payload") else {
            continue;
        };
        let Some(payloads) = rows.column(at).as_any().downcast_ref::<StringArray>() else {
            continue;
        };
        let events = rows
            .column_by_name("_event_id")
            .and_then(|c| c.as_any().downcast_ref::<StringArray>())
            .ok_or_else(|| {
                EngineError::Internal(format!("bronze.{} has no _event_id", join.facts))
            })?;
        let lookup = values_for(bi)?;
        let csv = info.format == crate::bronze::SourceFormat::Csv;
        let header = info.header.clone();
        let mut texts: Vec<Option<String>> = Vec::with_capacity(rows.num_rows());
        for i in 0..rows.num_rows() {
            if payloads.is_null(i) {
                texts.push(None);
                continue;
            }
            let text = payloads.value(i).to_string();
            let found = keys.get(events.value(i)).and_then(|k| lookup.get(k));
            let edited = crate::lab::events::edit_record(
                info.format,
                info.dialect.as_ref(),
                &header,
                &text,
                |f| {
                    for (c, col) in join.columns.iter().enumerate() {
                        let v = found.and_then(|v| v[c].clone());
                        let v = match (v, csv) {
                            (Some(v), _) => Value::String(v),
                            (None, true) => Value::String(String::new()),
                            (None, false) => Value::Null,
                        };
                        f.push((join.field(col), v));
                    }
                    true
                },
                crate::api::Lang::En,
            )
            .ok()
            .flatten();
            if edited.is_some() {
                n += 1;
            }
            texts.push(Some(edited.unwrap_or(text)));
        }
        let mut columns: Vec<ArrayRef> = rows.columns().to_vec();
        columns[at] = std::sync::Arc::new(StringArray::from(texts));
        *rows = RecordBatch::try_new(rows.schema(), columns)?;
        if csv {
            info.header
                .extend(join.columns.iter().map(|c| join.field(c)));
        }
    }
    Ok((out, n))
}

/// The batches (`_batch_id`, in `batches`' order) whose bytes repeat an
/// earlier batch of the same bronze table (same SHA-256): a re-sent file,
/// a Kafka micro-batch delivered again after a crash before commit.
pub fn repeated(batches: &[BatchInfo]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    batches
        .iter()
        .filter(|b| !b.sha256.is_empty() && !seen.insert((b.table.as_str(), b.sha256.as_str())))
        .map(|b| b.batch_id.clone())
        .collect()
}
