//! Enrichments (`E*` rules, seed 002 §3): new columns computed per row, or
//! joined from a lookup table (bronze read with its schema, or a silver
//! table built earlier in the run) with a LEFT JOIN.

use medallion_protocol::TableName;
use std::sync::Arc;

use crate::lake::concat_batches;
use datafusion::arrow::array::{Array, ArrayRef, RecordBatch};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::logical_expr::{Expr, JoinType};
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::parser::Parser;

use super::stage::*;
use crate::query::*;
use crate::silver::rules::Rule;

/// Adds a computed column. A row fails when its value cannot be computed
/// (a run-time error, e.g. a division by zero) or is NULL. Rows keep their order.
pub(crate) async fn enrich_computed(
    ctx: &SessionContext,
    input: &RecordBatch,
    rule: &Rule,
) -> std::result::Result<Step, RuleError> {
    let column = rule.column.trim();
    check_target_column(rule, column)?;
    if input.schema().index_of(column).is_ok() {
        return Err(RuleError::ColumnExists {
            column: column.to_string(),
        });
    }
    let sql = rule.resolved_expression();
    let e = crate::silver::eval::evaluate(ctx, input, &sql).await?;
    let out = with_column(input, column, e.values.clone())?;
    let failures = enrich_failures(input, &out, rule, column, &|_| String::new(), &sql, &e);
    Ok(Step {
        rows: out,
        changed: vec![],
        failures,
        read_as_utc: vec![],
    })
}

/// Rows whose enrichment failed: its expression could not be computed for
/// the row (`e`'s errors, reasons over `input`'s values), or the rule's first
/// new column is NULL in `out` (`why(row)` says more: no lookup match, or a
/// match whose values give NULL).
pub(crate) fn enrich_failures(
    input: &RecordBatch,
    out: &RecordBatch,
    rule: &Rule,
    column: &str,
    why: &dyn Fn(usize) -> String,
    sql: &str,
    e: &crate::silver::eval::Evaluated,
) -> Failures {
    let arrival = arrivals(out);
    let Some(values) = out.column_by_name(column) else {
        return vec![];
    };
    (0..out.num_rows())
        .filter_map(|r| {
            match e.error_of(r) {
                Some(error) => Some(run_time_reason(rule, sql, error, input, &e.columns, r)),
                None if values.is_null(r) => Some(format!("{}: {column} is NULL{}", rule.id, why(r))),
                None => None,
            }
            .map(|reason| (arrival[r], reason))
        })
        .collect()
}

/// A lookup join's marker column on the lookup side (TRUE on every lookup
/// row): NULL after the LEFT JOIN marks a row without a match.
const MATCHED: &str = "__lookup_matched";

/// Qualifier of the row's own columns in a lookup join.
pub(crate) const ROW_ALIAS: &str = "__row";

/// `sql` (one expression) with every bare identifier that names one of the
/// row's columns qualified as [`ROW_ALIAS`] (`user_id` → `__row.user_id`).
pub(crate) fn qualify_row_columns(
    sql: &str,
    row_columns: &std::collections::HashSet<String>,
) -> std::result::Result<String, RuleError> {
    use datafusion::sql::sqlparser::ast::{visit_expressions_mut, Expr as SqlExpr, Ident};
    let dialect = GenericDialect {};
    let mut expr = Parser::new(&dialect)
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_expr())
        .map_err(RuleError::Syntax)?;
    let _ = visit_expressions_mut(&mut expr, |e| {
        if let SqlExpr::Identifier(id) = e {
            if row_columns.contains(&id.value) {
                *e = SqlExpr::CompoundIdentifier(vec![Ident::new(ROW_ALIAS), id.clone()]);
            }
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    Ok(expr.to_string())
}

/// Every name `sqls` (expressions) may use for a column: each identifier,
/// and the last part of each compound one (subqueries included). A lookup
/// join carries the columns of each side with one of these names and no
/// others; a name too many is harmless.
pub(crate) fn mentioned_names(
    sqls: &[&str],
) -> std::result::Result<std::collections::HashSet<String>, RuleError> {
    use datafusion::sql::sqlparser::ast::{visit_expressions, Expr as SqlExpr};
    let dialect = GenericDialect {};
    let mut found = std::collections::HashSet::new();
    for sql in sqls {
        let expr = Parser::new(&dialect)
            .try_with_sql(sql)
            .and_then(|mut p| p.parse_expr())
            .map_err(RuleError::Syntax)?;
        let _ = visit_expressions(&expr, |e| {
            match e {
                SqlExpr::Identifier(id) => found.insert(id.value.clone()),
                SqlExpr::CompoundIdentifier(parts) => {
                    parts.last().is_some_and(|p| found.insert(p.value.clone()))
                }
                _ => false,
            };
            std::ops::ControlFlow::<()>::Continue(())
        });
    }
    Ok(found)
}

/// Splits "pu.borough, upper(pu.zone)" into SQL expressions with the SQL parser.
pub(crate) fn split_expressions(text: &str) -> std::result::Result<Vec<String>, RuleError> {
    let dialect = GenericDialect {};
    let mut parser = Parser::new(&dialect)
        .try_with_sql(text)
        .map_err(RuleError::OutputList)?;
    let exprs = parser
        .parse_comma_separated(Parser::parse_expr)
        .map_err(RuleError::OutputList)?;
    Ok(exprs.into_iter().map(|e| e.to_string()).collect())
}

/// LEFT JOIN with a lookup table, then adds the rule's output columns. A
/// row fails when it found no match (its first new column is NULL). Errors
/// when the join would change the number of rows (lookup key not unique).
pub(crate) async fn enrich_lookup(
    ctx: &SessionContext,
    input: &RecordBatch,
    rule: &Rule,
    lookups: &Lookups<'_>,
) -> std::result::Result<Step, RuleError> {
    match join_lookup(ctx, input, rule, lookups, true).await {
        // A lookup key that is not unique says the same over every column.
        Ok(step) => Ok(step),
        Err(e @ RuleError::KeyNotUnique { .. }) => Err(e),
        // The same rule over every column: the error then names what a
        // misspelt column could be ("Did you mean 'pu.zone'?").
        Err(_) => join_lookup(ctx, input, rule, lookups, false).await,
    }
}

/// [`enrich_lookup`]; `narrow`: only the columns of each side that the
/// condition and the outputs name take part in the join.
async fn join_lookup(
    ctx: &SessionContext,
    input: &RecordBatch,
    rule: &Rule,
    lookups: &Lookups<'_>,
    narrow: bool,
) -> std::result::Result<Step, RuleError> {
    let lookup = rule.lookup.as_ref().ok_or(RuleError::NoLookup)?;
    let outputs = rule.output_columns();
    if outputs.is_empty() {
        return Err(RuleError::NoOutputColumns);
    }
    for c in &outputs {
        check_target_column(rule, c)?;
        if input.schema().index_of(c).is_ok() {
            return Err(RuleError::ColumnExists { column: c.clone() });
        }
    }
    let exprs = split_expressions(&rule.resolved_expression())?;
    if exprs.len() != outputs.len() {
        return Err(RuleError::OutputCount {
            outputs: outputs.len(),
            expressions: exprs.len(),
        });
    }
    let known = || {
        lookups
            .bronze
            .keys()
            .map(TableName::bronze)
            .chain(lookups.silver.keys().cloned())
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
    };
    let rows = if lookup.table.is_silver() {
        lookups
            .silver
            .get(&lookup.table)
            .ok_or_else(|| RuleError::LookupNotBuilt {
                table: lookup.table.to_string(),
                available: known(),
            })?
    } else {
        &lookups
            .bronze
            .get(lookup.table.name())
            .filter(|_| lookup.table.is_bronze())
            .ok_or_else(|| RuleError::NoLookupTable {
                table: lookup.table.to_string(),
                available: known(),
            })?
            .rows
    };
    // Only the lookup's own columns take part (not its lineage columns),
    // and of those the ones the condition and the outputs may name.
    let mentioned: Vec<&str> = std::iter::once(lookup.on.as_str())
        .chain(exprs.iter().map(String::as_str))
        .collect();
    let named = mentioned_names(&mentioned)?;
    let schema = rows.schema();
    let own: Vec<usize> = (0..schema.fields().len())
        .filter(|&i| {
            let name = schema.field(i).name();
            !is_internal(name) && (!narrow || named.contains(name))
        })
        .collect();
    // A column TRUE on every lookup row: NULL after the LEFT JOIN means the
    // row found no match (a match whose values are NULL is not one).
    let lookup_rows = rows.project(&own)?;
    let lookup_rows = with_column(
        &lookup_rows,
        MATCHED,
        Arc::new(datafusion::arrow::array::BooleanArray::from(vec![true; lookup_rows.num_rows()])),
    )?;

    // The row's own columns are qualified as `__row`, and a bare name in the
    // rule's SQL that is one of them means the row's column: in
    // `user_id = u.user_id` the lookup may have a `user_id` too. The rows
    // carry ids through the join (a hash join reorders them).
    let n = input.num_rows();
    let row_names: std::collections::HashSet<String> = input
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let on_sql = qualify_row_columns(&lookup.on, &row_names)?;
    // Only the row's columns the condition and the outputs name take part
    // in the join: the new columns are then put on the whole rows by
    // position. (Joining every column copied the whole table twice per
    // lookup: most of a flights rule edit's rules; issue 12.)
    let keep: Vec<usize> = (0..input.num_columns())
        .filter(|&i| !narrow || named.contains(input.schema().field(i).name()))
        .collect();
    let with_ids = crate::silver::eval::with_row_ids(&input.project(&keep)?)?;
    let not_unique = |joined: JoinedRows| RuleError::KeyNotUnique {
        rows: n,
        joined,
        table: lookup.table.to_string(),
    };
    // The join of some rows (a slice of `with_ids`): every column of both
    // sides under a plain name; the qualified names stay in the schema for
    // the output expressions.
    let lookup_rows = &lookup_rows;
    let join = |rows: RecordBatch| {
        let on_sql = on_sql.clone();
        async move {
            let left = read_batch(ctx, &rows)?.alias(ROW_ALIAS)?;
            let right = read_batch(ctx, lookup_rows)?.alias(&lookup.alias)?;
            let both = left.schema().join(right.schema())?;
            let on = ctx
                .state()
                .create_logical_expr(&on_sql, &both)
                .map_err(|e| RuleError::JoinCondition(df_err(e)))?;
            let joined = left.join_on(right, JoinType::Left, vec![on])?;
            let schema = joined.schema().clone();
            let select: Vec<Expr> = schema
                .columns()
                .into_iter()
                .enumerate()
                .map(|(i, c)| Expr::Column(c).alias(format!("__c{i}")))
                .collect();
            let out = collect_single(joined.select(select)?, Some(rows.num_rows())).await?;
            Ok::<_, RuleError>((schema, out))
        }
    };
    // A join condition that fails at run time on some rows (a CAST of a bad
    // code) fails those rows only: halve until they stand alone.
    let mut pieces = Vec::new();
    let mut failed_rows: Vec<(usize, String)> = Vec::new();
    let mut schema = None;
    let mut todo = vec![(0usize, n)];
    while let Some((offset, len)) = todo.pop() {
        match join(with_ids.slice(offset, len)).await {
            Ok((s, out)) => {
                schema = Some(s);
                pieces.push(out);
            }
            Err(RuleError::Query(QueryError::TooManyRows(m))) => {
                return Err(not_unique(if len == n {
                    JoinedRows::MoreThan(m)
                } else {
                    JoinedRows::More
                }))
            }
            Err(RuleError::Query(QueryError::Execution(m))) if len <= 1 => {
                failed_rows.push((offset, m))
            }
            Err(RuleError::Query(QueryError::Execution(_))) => {
                let half = len / 2;
                todo.push((offset + half, len - half));
                todo.push((offset, half));
            }
            Err(e) => return Err(e),
        }
    }
    // The schema of the join, also when every row failed.
    let schema = match schema {
        Some(s) => s,
        None => join(with_ids.slice(0, 0)).await?.0,
    };
    let arrow_schema: SchemaRef = Arc::new(schema.as_arrow().clone());
    let id_index = schema
        .index_of_column_by_name(Some(&ROW_ALIAS.into()), crate::silver::eval::ROW_ID)
        .ok_or(RuleError::Internal("row ids lost in the join"))?;
    // Rows whose join failed: their own columns (with their id), the
    // lookup's NULL, as a LEFT JOIN without a match gives them.
    failed_rows.sort_by_key(|(r, _)| *r);
    if !failed_rows.is_empty() {
        let at = datafusion::arrow::array::UInt32Array::from_iter_values(
            failed_rows.iter().map(|(r, _)| *r as u32),
        );
        let columns: Vec<ArrayRef> = schema
            .iter()
            .map(|(qualifier, f)| {
                let own = qualifier
                    .filter(|q| q.table() == ROW_ALIAS)
                    .and_then(|_| with_ids.column_by_name(f.name()));
                match own {
                    Some(c) => datafusion::arrow::compute::take(c.as_ref(), &at, None),
                    None => Ok(datafusion::arrow::array::new_null_array(
                        f.data_type(),
                        failed_rows.len(),
                    )),
                }
            })
            .collect::<std::result::Result<_, _>>()?;
        pieces.push(RecordBatch::try_new(Arc::clone(&arrow_schema), columns)?);
    }
    let pieces: Vec<RecordBatch> = pieces
        .into_iter()
        .map(|p| RecordBatch::try_new(Arc::clone(&arrow_schema), p.columns().to_vec()))
        .collect::<std::result::Result<_, _>>()?;
    let out = concat_batches(&arrow_schema, &pieces)?;
    let order = crate::silver::eval::input_order(out.column(id_index), n)
        .ok_or_else(|| not_unique(JoinedRows::Rows(out.num_rows())))?;
    let joined_rows = RecordBatch::try_new(
        Arc::clone(&arrow_schema),
        out.columns()
            .iter()
            .map(|c| datafusion::arrow::compute::take(c.as_ref(), &order, None))
            .collect::<std::result::Result<Vec<_>, _>>()?,
    )?;
    // Each output column, row by row (a failing row fails the rule, not the run).
    let mut out = input.clone();
    let mut evaluated = Vec::with_capacity(outputs.len());
    for (c, e) in outputs.iter().zip(&exprs) {
        let qualified = qualify_row_columns(e, &row_names)?;
        let values =
            crate::silver::eval::evaluate_qualified(ctx, &joined_rows, &schema, &qualified)
                .map_err(|error| RuleError::LookupOutput {
                    error,
                    qualified: qualified.clone(),
                    written: e.clone(),
                })?;
        out = with_column(&out, c, values.values.clone())?;
        // Reasons show the rule's own text, not the internal qualification.
        evaluated.push((e.clone(), values));
    }
    let mut failures = Vec::new();
    let arrival = arrivals(input);
    let on_columns: Vec<(String, usize)> = input
        .schema()
        .fields()
        .iter()
        .enumerate()
        .filter(|(_, f)| lookup.on.contains(f.name().as_str()) && !is_internal(f.name()))
        .map(|(i, f)| (f.name().clone(), i))
        .collect();
    for (row, error) in &failed_rows {
        failures.push((
            arrival[*row],
            format!(
                "{}: join condition {} failed on this row: {error}{}",
                rule.id,
                lookup.on,
                crate::silver::eval::describe(input, &on_columns, *row, true)
            ),
        ));
    }
    for (sql, values) in &evaluated[1..] {
        for (row, error) in &values.errors {
            failures.push((
                arrival[*row],
                run_time_reason(rule, sql, error, &joined_rows, &values.columns, *row),
            ));
        }
    }
    // Reasons quote the joined row: the lookup's columns too (`l.qty = 0`).
    let (first_sql, first) = &evaluated[0];
    let matched = schema
        .index_of_column_by_name(Some(&lookup.alias.as_str().into()), MATCHED)
        .map(|i| joined_rows.column(i).clone())
        .ok_or(RuleError::Internal("the lookup's match marker lost in the join"))?;
    let why = |r: usize| {
        if matched.is_valid(r) {
            format!(" (its match in {} gives NULL)", lookup.table)
        } else {
            format!(" (no match in {})", lookup.table)
        }
    };
    failures.extend(
        enrich_failures(&joined_rows, &out, rule, &outputs[0], &why, first_sql, first)
        .into_iter()
        .filter(|(a, _)| !failed_rows.iter().any(|(r, _)| arrival[*r] == *a)),
    );
    failures.sort_by_key(|(a, _)| *a);
    Ok(Step {
        rows: out,
        changed: vec![],
        failures,
        read_as_utc: vec![],
    })
}
