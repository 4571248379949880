//! `silver.quarantine` (seed 003 §4): the rows silver rejected, with the
//! rule and the reason, as history: a run appends what it newly rejects and
//! closes what it no longer reproduces, never deleting a row.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, RecordBatch, StringArray};
use crate::lake::concat_batches;
use datafusion::arrow::compute::filter_record_batch;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};

use crate::error::Result;
use crate::model::SilverTableDef;
use crate::silver::rules::RuleKind;
use crate::silver::source::{Parsed, Rejected};

/// Columns of `silver.quarantine`, in this order: `run_id` (Int64, the run
/// that quarantined the row), `rule_id` (one id, or several joined by ", "),
/// `reason` (`F1: fare_amount < 0 (fare_amount = -21.0)`), `raw_payload`
/// (the bronze text), `silver_table`, `_source_file`, `_event_id`,
/// `_batch_id` (lineage back to the bronze row), all Utf8, then
/// `closed_in_run` (Int64) and `closed_as` (Utf8), NULL while the row is
/// quarantined: the full run after which it no longer stands, `released`
/// (the record now passes the rules) or `requarantined` (still rejected,
/// for other reasons: a newer row has them). The table is history: a run
/// appends what it newly rejects and never deletes rows (seed 003 §4).
pub fn quarantine_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("run_id", DataType::Int64, false),
        Field::new("rule_id", DataType::Utf8, false),
        Field::new("reason", DataType::Utf8, false),
        Field::new("raw_payload", DataType::Utf8, false),
        Field::new("silver_table", DataType::Utf8, false),
        Field::new("_source_file", DataType::Utf8, false),
        Field::new("_event_id", DataType::Utf8, false),
        Field::new("_batch_id", DataType::Utf8, false),
        Field::new("closed_in_run", DataType::Int64, true),
        Field::new("closed_as", DataType::Utf8, true),
    ]))
}

/// How many rows of a `silver.quarantine` table are still quarantined (no
/// `closed_in_run`); every row of a table without that column.
pub fn open_rows(batch: &RecordBatch) -> usize {
    batch
        .column_by_name("closed_in_run")
        .map_or(batch.num_rows(), |c| c.null_count())
}

/// The rows of a `silver.quarantine` table still quarantined, without the
/// run columns: what a rebuild from bronze must reproduce (replay compares this).
pub fn open_quarantine(batch: &RecordBatch) -> Result<RecordBatch> {
    let Some(closed) = batch.column_by_name("closed_in_run") else {
        return Ok(batch.clone());
    };
    let open = datafusion::arrow::compute::is_null(closed)?;
    let rows = filter_record_batch(batch, &open)?;
    let keep: Vec<usize> = (0..rows.num_columns())
        .filter(|&i| {
            !matches!(
                rows.schema().field(i).name().as_str(),
                "run_id" | "closed_in_run" | "closed_as"
            )
        })
        .collect();
    Ok(rows.project(&keep)?)
}

/// The quarantine after this run: the previous history, then this run's
/// rejected rows. A row already quarantined (same table, event, rules and
/// reason) and still open is not added again, so rerunning the same rules
/// on the same bronze changes nothing. In a full run, an open row that this
/// run does not reproduce is closed: `released` when its record now passes,
/// `requarantined` when the record is rejected for other reasons (the new
/// row says why). An incremental run only sees new batches: it closes nothing,
/// except for the silver tables in `incremental` (tables it rebuilt from all
/// of bronze), whose rows are treated as in a full run. `incremental`: None
/// in a full run. The rows of the silver tables in `kept` (tables this run
/// did not refresh, see [`crate::pipeline`]) stay as they were.
pub(crate) fn quarantine_history(
    previous: Option<&RecordBatch>,
    rejected: &[(String, Rejected)],
    run_id: i64,
    incremental: Option<&std::collections::HashSet<String>>,
    kept: &std::collections::HashSet<String>,
) -> Result<RecordBatch> {
    use datafusion::arrow::array::Int64Array;
    let key = |table: &str, event: &str, rules: &str, reason: &str| {
        format!("{table}\u{1}{event}\u{1}{rules}\u{1}{reason}")
    };
    let current: std::collections::HashSet<String> = rejected
        .iter()
        .map(|(t, r)| key(t, &r.event_id, &r.rule_id, &r.reason))
        .collect();
    let current_events: std::collections::HashSet<(&str, &str)> = rejected
        .iter()
        .map(|(t, r)| (t.as_str(), r.event_id.as_str()))
        .collect();
    let mut open = std::collections::HashSet::new();
    let mut closed_in: Vec<Option<i64>> = Vec::new();
    let mut closed_as: Vec<Option<String>> = Vec::new();
    let previous = previous.filter(|p| p.schema() == quarantine_schema());
    if let Some(prev) = previous {
        let s = |name: &str| {
            prev.column_by_name(name)
                .and_then(|c| c.as_any().downcast_ref::<StringArray>())
        };
        let closed = prev
            .column_by_name("closed_in_run")
            .and_then(|c| c.as_any().downcast_ref::<Int64Array>());
        if let (Some(t), Some(e), Some(ru), Some(re), Some(was), Some(how)) = (
            s("silver_table"),
            s("_event_id"),
            s("rule_id"),
            s("reason"),
            closed,
            s("closed_as"),
        ) {
            for row in 0..prev.num_rows() {
                let k = key(t.value(row), e.value(row), ru.value(row), re.value(row));
                if was.is_valid(row) {
                    closed_in.push(Some(was.value(row)));
                    closed_as.push(how.is_valid(row).then(|| how.value(row).to_string()));
                } else if incremental.is_some_and(|rebuilt| !rebuilt.contains(t.value(row)))
                    || kept.contains(t.value(row))
                    || current.contains(&k)
                {
                    open.insert(k);
                    closed_in.push(None);
                    closed_as.push(None);
                } else {
                    closed_in.push(Some(run_id));
                    closed_as.push(Some(
                        if current_events.contains(&(t.value(row), e.value(row))) {
                            "requarantined"
                        } else {
                            "released"
                        }
                        .to_string(),
                    ));
                }
            }
        }
    }
    let added: Vec<&(String, Rejected)> = rejected
        .iter()
        .filter(|(t, r)| !open.contains(&key(t, &r.event_id, &r.rule_id, &r.reason)))
        .collect();
    let col = |f: &dyn Fn(&(String, Rejected)) -> &str| -> ArrayRef {
        Arc::new(StringArray::from_iter_values(added.iter().map(|x| f(x))))
    };
    let new_rows = RecordBatch::try_new(
        quarantine_schema(),
        vec![
            Arc::new(Int64Array::from(vec![run_id; added.len()])),
            col(&|(_, r)| &r.rule_id),
            col(&|(_, r)| &r.reason),
            col(&|(_, r)| &r.raw_payload),
            col(&|(t, _)| t),
            col(&|(_, r)| &r.source_file),
            col(&|(_, r)| &r.event_id),
            col(&|(_, r)| &r.batch_id),
            Arc::new(Int64Array::from(vec![None::<i64>; added.len()])),
            Arc::new(StringArray::from(vec![None::<String>; added.len()])),
        ],
    )?;
    match previous {
        Some(prev) if prev.num_rows() == closed_in.len() => {
            let mut cols = prev.columns().to_vec();
            let n = cols.len();
            cols[n - 2] = Arc::new(Int64Array::from(closed_in));
            cols[n - 1] = Arc::new(StringArray::from(closed_as));
            let prev = RecordBatch::try_new(quarantine_schema(), cols)?;
            Ok(concat_batches(&quarantine_schema(), [&prev, &new_rows])?)
        }
        _ => Ok(new_rows),
    }
}

/// `_event_id` → (`raw_payload`, `_source_file`) of the parsed bronze rows,
/// for quarantine rows that only know their event.
pub(crate) fn lineage_of(parsed: &Parsed) -> std::collections::HashMap<&str, (String, String)> {
    let text = |name: &str| {
        parsed
            .rows
            .column_by_name(name)
            .and_then(|c| c.as_any().downcast_ref::<StringArray>())
    };
    let mut out = std::collections::HashMap::new();
    if let (Some(ev), Some(raw), Some(file)) =
        (text("_event_id"), text("raw_payload"), text("_source_file"))
    {
        for i in 0..ev.len() {
            out.insert(
                ev.value(i),
                (raw.value(i).to_string(), file.value(i).to_string()),
            );
        }
    }
    out
}

/// Keys of a snapshot source's quarantined rows (they were in their
/// snapshot, which must not delete them), read from the rows' typed bronze
/// values. A row whose key cannot be read that way (it did not parse, a rule
/// or the select list changes the key or the snapshot column) holds its
/// whole batch instead.
pub(crate) fn snapshot_holds(
    s: &SilverTableDef,
    spec: &crate::silver::merge::MergeSpec,
    parsed: &Parsed,
    rejected: &[Rejected],
) -> crate::silver::merge::SnapshotHolds {
    let mut holds = crate::silver::merge::SnapshotHolds::default();
    if rejected.is_empty() {
        return holds;
    }
    let needed: Vec<&str> = spec
        .keys
        .iter()
        .chain(spec.sequence_by.iter())
        .map(String::as_str)
        .collect();
    let changed_by_rules = s.rules.rules.iter().any(|r| {
        r.enabled
            && matches!(r.kind, RuleKind::Normalize | RuleKind::Enrich)
            && r.column.split(',').any(|c| needed.contains(&c.trim()))
    });
    let readable = s.select.is_empty()
        && !changed_by_rules
        && needed
            .iter()
            .all(|c| parsed.rows.column_by_name(c).is_some());
    let events: std::collections::HashMap<&str, u32> = parsed
        .rows
        .column_by_name("_event_id")
        .and_then(|c| c.as_any().downcast_ref::<StringArray>())
        .map(|ev| (0..ev.len()).map(|i| (ev.value(i), i as u32)).collect())
        .unwrap_or_default();
    let mut take_rows = Vec::new();
    for r in rejected {
        match events.get(r.event_id.as_str()) {
            Some(&i) if readable => take_rows.push(i),
            _ => {
                holds.batches.insert(r.batch_id.clone());
            }
        }
    }
    if take_rows.is_empty() {
        return holds;
    }
    let cols: Vec<usize> = needed
        .iter()
        .copied()
        .chain(["_batch_id"])
        .filter_map(|c| parsed.rows.schema().index_of(c).ok())
        .collect();
    let idx = datafusion::arrow::array::UInt32Array::from(take_rows);
    match parsed
        .rows
        .project(&cols)
        .and_then(|b| datafusion::arrow::compute::take_record_batch(&b, &idx))
    {
        Ok(rows) => holds.rows = Some(rows),
        Err(_) => holds
            .batches
            .extend(rejected.iter().map(|r| r.batch_id.clone())),
    }
    holds
}
