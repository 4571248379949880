//! A silver table's `select` list: the columns it keeps, each an
//! expression with an optional `AS` name, after the rules.

use std::sync::Arc;

use datafusion::arrow::array::{Array, RecordBatch};
use datafusion::arrow::datatypes::{Field, Schema};
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::parser::Parser;

use super::stage::*;
use crate::query::*;
use crate::silver::source::LINEAGE_COLUMNS;

/// Rule id of rows whose select-list value could not be computed.
pub(crate) const SELECT_RULE_ID: &str = "select";

/// `batch` projected to the SQL select list `items` (each `expr [AS name]`),
/// with the lineage and arrival columns carried along, rows in the same
/// order; and the rows whose value of some item could not be computed (a
/// run-time error), which leave for the quarantine.
/// One item of a `select` list (`fare * 100 AS cents`): its expression and
/// its `AS` name, if any. Errors: not one expression with an optional name.
pub(crate) fn select_item(item: &str) -> std::result::Result<(String, Option<String>), RuleError> {
    use datafusion::sql::sqlparser::ast::SelectItem;
    let parsed = Parser::new(&GenericDialect {})
        .try_with_sql(item)
        .and_then(|mut p| p.parse_select_item())
        .map_err(|error| RuleError::SelectSyntax {
            item: item.to_string(),
            error,
        })?;
    match parsed {
        SelectItem::UnnamedExpr(e) => Ok((e.to_string(), None)),
        SelectItem::ExprWithAlias { expr, alias } => Ok((expr.to_string(), Some(alias.value))),
        _ => Err(RuleError::NotSelectItem {
            item: item.to_string(),
        }),
    }
}

pub(crate) async fn select_columns(
    ctx: &SessionContext,
    batch: &RecordBatch,
    items: &[String],
) -> std::result::Result<(RecordBatch, Failures), RuleError> {
    let mut fields = Vec::with_capacity(items.len() + LINEAGE_COLUMNS.len() + 1);
    let mut columns = Vec::with_capacity(fields.capacity());
    let mut failures = Vec::new();
    let arrival = arrivals(batch);
    for item in items {
        check_size(item, MAX_EXPRESSION_TOKENS)?;
        let (expr, alias) = select_item(item)?;
        let name = alias.unwrap_or_else(|| expr.clone());
        if is_internal(&name) {
            return Err(RuleError::SelectsLineage { name });
        }
        if fields.iter().any(|f: &Field| f.name() == &name) {
            return Err(RuleError::ListedTwice { name });
        }
        let e = crate::silver::eval::evaluate(ctx, batch, &expr).await?;
        for (row, error) in &e.errors {
            failures.push((
                arrival[*row],
                format!(
                    "{SELECT_RULE_ID}: {expr} failed on this row: {error}{}",
                    crate::silver::eval::describe(batch, &e.columns, *row, true)
                ),
            ));
        }
        fields.push(Field::new(name, e.values.data_type().clone(), true));
        columns.push(e.values);
    }
    let schema = batch.schema();
    for c in LINEAGE_COLUMNS.iter().chain([ARRIVAL].iter()) {
        if let Ok(i) = schema.index_of(c) {
            fields.push(schema.field(i).clone());
            columns.push(batch.column(i).clone());
        }
    }
    let out = RecordBatch::try_new_with_options(
        Arc::new(Schema::new(fields)),
        columns,
        &datafusion::arrow::array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
    )?;
    failures.sort_by_key(|(a, _)| *a);
    Ok((out, failures))
}
