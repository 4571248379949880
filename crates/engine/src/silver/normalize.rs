//! Normalizations (`N*` rules, seed 002 §3): a column rewritten in place,
//! row by row, counting the values changed.

use datafusion::arrow::array::{Array, ArrayRef, RecordBatch, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::prelude::SessionContext;

use super::stage::*;
use crate::query::*;
use crate::silver::rules::Rule;

/// Replaces an existing column with the expression's value, converted
/// exactly to the rule's declared `type` if it has one. A row fails when its
/// value cannot be computed (a run-time error such as a failed CAST), does
/// not convert, or becomes NULL from a non-NULL value. Rows keep their order.
pub(crate) async fn normalize(
    ctx: &SessionContext,
    input: &RecordBatch,
    rule: &Rule,
) -> std::result::Result<Step, RuleError> {
    let column = rule.column.trim();
    check_target_column(rule, column)?;
    let Ok(old_index) = input.schema().index_of(column) else {
        return Err(RuleError::NoColumnToNormalize {
            column: column.to_string(),
        });
    };
    let sql = rule.resolved_expression();
    let e = crate::silver::eval::evaluate(ctx, input, &sql).await?;
    let arrival = arrivals(input);
    let mut failures = Vec::new();
    let mut failed = vec![false; input.num_rows()];
    for (row, error) in &e.errors {
        failed[*row] = true;
        failures.push((
            arrival[*row],
            run_time_reason(rule, &sql, error, input, &e.columns, *row),
        ));
    }
    let mut value = e.values;
    let mut read_as_utc = Vec::new();
    if let Some(ty) = rule.cast {
        let text = cast(&value, &DataType::Utf8)?;
        let text = text
            .as_any()
            .downcast_ref::<StringArray>()
            .ok_or(RuleError::Internal("value as text"))?;
        let converted = crate::silver::convert::convert_source_column(
            &crate::silver::source::SourceColumn::new(column, ty),
            text,
        )?;
        for (row, e) in converted.errors.into_iter().enumerate() {
            if let Some(e) = e {
                failed[row] = true;
                failures.push((arrival[row], format!("{}: {e}", rule.id)));
            }
        }
        read_as_utc = converted
            .read_as_utc
            .iter()
            .zip(&arrival)
            .filter(|(f, _)| **f)
            .map(|(_, a)| *a)
            .collect();
        value = converted.array;
    }
    let out = with_column(input, column, value)?;
    let old = input.column(old_index);
    let new = out.column(old_index);
    let opts = FormatOptions::default().with_null("NULL");
    let old_text = ArrayFormatter::try_new(old.as_ref(), &opts)?;
    for row in 0..out.num_rows() {
        if old.is_valid(row) && new.is_null(row) && !failed[row] {
            failures.push((
                arrival[row],
                format!(
                    "{}: {column} became NULL (was {})",
                    rule.id,
                    old_text.value(row)
                ),
            ));
        }
    }
    failures.sort_by_key(|(a, _)| *a);
    Ok(Step {
        changed: changed_rows(old, new, &arrival),
        rows: out,
        failures,
        read_as_utc,
    })
}

/// The rows (their `arrival` positions) whose value differs, comparing in
/// the old column's type (so 1.5 → 1 counts as a change); every row when
/// the new values do not cast to the old type.
pub(crate) fn changed_rows(old: &ArrayRef, new: &ArrayRef, arrival: &[i64]) -> Vec<i64> {
    match cast(new, old.data_type())
        .and_then(|n| datafusion::arrow::compute::kernels::cmp::distinct(old, &n))
    {
        Ok(d) => d
            .iter()
            .zip(arrival)
            .filter(|(v, _)| v == &Some(true))
            .map(|(_, a)| *a)
            .collect(),
        Err(_) => arrival.to_vec(),
    }
}
