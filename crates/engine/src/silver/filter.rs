//! Filters (`F*` rules, seed 002 §3): a condition per row, its failing rows
//! dropped to the quarantine, failed or counted, as the rule's action says.

use std::collections::BTreeMap;

use datafusion::arrow::array::{Array, BooleanArray, RecordBatch, StringArray};
use datafusion::arrow::compute::filter_record_batch;
use datafusion::arrow::datatypes::DataType;
use datafusion::prelude::SessionContext;

use super::stage::*;
use crate::error::{pipeline_diag, Diagnostic, EngineError};
use crate::query::*;
use crate::silver::rules::Rule;
use crate::silver::source::Rejected;

/// The rows of `batch` without drop reasons (nothing moved to the quarantine yet).
pub(crate) fn without_dropped(
    batch: &RecordBatch,
    drops: &BTreeMap<i64, Vec<String>>,
) -> std::result::Result<RecordBatch, Diagnostic> {
    let keep = not_dropped(&arrivals(batch), drops);
    filter_record_batch(batch, &keep).map_err(|e| pipeline_diag(e.into()))
}

/// Per row (by arrival position): has no rule dropped it?
pub(crate) fn not_dropped(arrival: &[i64], drops: &BTreeMap<i64, Vec<String>>) -> BooleanArray {
    arrival
        .iter()
        .map(|a| Some(!drops.contains_key(a)))
        .collect()
}

/// Moves the rows of `batch` that have drop reasons into `rejected` (one
/// quarantine row each, every reason listed) and returns the others.
/// On a child table (`element`: array path and position column, see
/// [`crate::silver::explode::element_label`]) the reason ends with the element
/// (` [element lines[1]]`): its lineage is its parent record's.
pub(crate) fn split_rejected(
    batch: &RecordBatch,
    drops: &mut BTreeMap<i64, Vec<String>>,
    rejected: &mut Vec<Rejected>,
    element: Option<(&str, &str)>,
) -> std::result::Result<RecordBatch, Diagnostic> {
    if drops.is_empty() {
        return Ok(batch.clone());
    }
    let keep = reject_dropped(batch, drops, rejected, element)?;
    filter_record_batch(batch, &keep).map_err(|e| pipeline_diag(e.into()))
}

/// [`split_rejected`] without the copy: moves the rows of `batch` that have
/// drop reasons into `rejected` and returns, per row of `batch`, whether it
/// stays (no nulls).
pub(crate) fn reject_dropped(
    batch: &RecordBatch,
    drops: &mut BTreeMap<i64, Vec<String>>,
    rejected: &mut Vec<Rejected>,
    element: Option<(&str, &str)>,
) -> std::result::Result<BooleanArray, Diagnostic> {
    if drops.is_empty() {
        return Ok(BooleanArray::from(vec![true; batch.num_rows()]));
    }
    let lineage = |name: &str| {
        batch
            .column_by_name(name)
            .and_then(|c| c.as_any().downcast_ref::<StringArray>().cloned())
    };
    let (Some(ev), Some(ba), Some(fi), Some(raw)) = (
        lineage("_event_id"),
        lineage("_batch_id"),
        lineage("_source_file"),
        lineage("raw_payload"),
    ) else {
        return Err(pipeline_diag(EngineError::Internal(
            "lineage columns missing".into(),
        )));
    };
    let arrival = arrivals(batch);
    // The rows that have drop reasons, in row order: found from the
    // reasons when the arrivals ascend (as a batch's rows do), so a few
    // thousand drops cost no lookup per kept row.
    let dropped: Vec<(usize, i64)> = if arrival.windows(2).all(|w| w[0] < w[1]) {
        drops
            .keys()
            .filter_map(|a| Some((arrival.binary_search(a).ok()?, *a)))
            .collect()
    } else {
        arrival
            .iter()
            .enumerate()
            .filter(|(_, a)| drops.contains_key(a))
            .map(|(row, a)| (row, *a))
            .collect()
    };
    let mut keep = vec![true; arrival.len()];
    for (row, a) in dropped {
        // Each arrival is one row: its reasons are taken once.
        let Some(reasons) = drops.remove(&a) else {
            continue;
        };
        keep[row] = false;
        rejected.push(Rejected {
            event_id: ev.value(row).to_string(),
            batch_id: ba.value(row).to_string(),
            source_file: fi.value(row).to_string(),
            raw_payload: raw.value(row).to_string(),
            rule_id: reasons
                .iter()
                .map(|r| r.split(':').next().unwrap_or_default())
                .collect::<Vec<_>>()
                .join(", "),
            reason: match element {
                Some(label) => format!(
                    "{}{}",
                    reasons.join("; "),
                    crate::silver::explode::element_suffix(batch, label, row)
                ),
                None => reasons.join("; "),
            },
        });
    }
    Ok(BooleanArray::from(keep))
}

/// Rows of `batch` where the SQL `predicate` is TRUE (FALSE and NULL are not
/// matches), each result on its own row whatever the predicate (a window
/// included; see [`crate::silver::eval`]), and the rows whose evaluation failed at
/// run time with the error. Used by the right-to-be-forgotten delete on
/// bronze and a merge's `delete_when`.
pub(crate) async fn predicate_mask(
    ctx: &SessionContext,
    batch: &RecordBatch,
    predicate: &str,
) -> std::result::Result<(BooleanArray, Vec<(usize, String)>), RuleError> {
    check_size(predicate, MAX_EXPRESSION_TOKENS)?;
    let prepared = crate::silver::eval::prepare(ctx, batch, predicate).await?;
    let ty = &prepared.data_type;
    if *ty != DataType::Boolean && *ty != DataType::Null {
        return Err(RuleError::NotCondition {
            data_type: ty.clone(),
        });
    }
    let e = crate::silver::eval::evaluate_prepared(ctx, batch, &prepared)
        .await
        .map_err(text_compare_hint)?;
    let values = e.values.as_any().downcast_ref::<BooleanArray>();
    let mask: BooleanArray = (0..batch.num_rows())
        .map(|r| Some(values.is_some_and(|v| v.is_valid(r) && v.value(r))))
        .collect();
    Ok((mask, e.errors))
}

/// Evaluates a rule's condition for every row of `batch` and returns the
/// rows that fail it, with their reasons: a filter fails a row where the
/// condition is TRUE, an expectation where it is not TRUE, and both where
/// the condition cannot be computed for the row (a run-time error: that row
/// goes with it, not the run).
pub(crate) async fn eval_condition(
    ctx: &SessionContext,
    batch: &RecordBatch,
    rule: &Rule,
    reject_when_true: bool,
) -> std::result::Result<Failures, RuleError> {
    let sql = rule.resolved_expression();
    let prepared = crate::silver::eval::prepare(ctx, batch, &sql).await?;
    let ty = &prepared.data_type;
    if *ty != DataType::Boolean && *ty != DataType::Null {
        let data_type = ty.clone();
        return Err(if reject_when_true {
            RuleError::FilterNotCondition { data_type }
        } else {
            RuleError::ExpectationNotCondition { data_type }
        });
    }
    let e = crate::silver::eval::evaluate_prepared(ctx, batch, &prepared)
        .await
        .map_err(text_compare_hint)?;
    let values = e
        .values
        .as_any()
        .downcast_ref::<BooleanArray>()
        .cloned()
        .unwrap_or_else(|| BooleanArray::from(vec![None; batch.num_rows()]));
    let arrival = arrivals(batch);
    Ok((0..batch.num_rows())
        .filter_map(|r| {
            let reason = match e.error_of(r) {
                Some(error) => run_time_reason(rule, &sql, error, batch, &e.columns, r),
                None => {
                    let is_true = values.is_valid(r) && values.value(r);
                    if is_true != reject_when_true {
                        return None;
                    }
                    format!(
                        "{}: {sql}{}",
                        rule.id,
                        crate::silver::eval::describe(batch, &e.columns, r, false)
                    )
                }
            };
            Some((arrival.get(r).copied().unwrap_or(r as i64), reason))
        })
        .collect())
}
