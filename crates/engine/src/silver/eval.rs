//! Evaluating one SQL expression for every row of a batch, with each result
//! on its own row.
//!
//! Every rule of the registry (filters, normalizations, enrichments,
//! expectations), a merge's `delete_when`, a silver `select` list and the
//! right-to-be-forgotten condition compute one value per row. Two things
//! must never happen (issue 9, kinds 1 and 6):
//!
//! - **A result attached to another row.** A query with a window
//!   (`count(*) OVER (PARTITION BY sku)`), an aggregate or a subquery may
//!   return its rows in another order (a window sorts by its partition
//!   key). Results are therefore never matched by position: a row-local
//!   expression is evaluated directly on the batch (DataFusion's physical
//!   expression, which cannot reorder), and any other one runs as a query
//!   that carries a row id, and its values are put back on the rows the ids
//!   name. A query that does not return each row exactly once is refused.
//! - **One bad row failing everything.** A run-time error on one row (a
//!   `CAST` of `'ten'` to INT, a division by zero) is that row's problem:
//!   the batch is split in halves until the failing rows stand alone, each
//!   gets its error, the others their values. This needs a row-local
//!   expression; for a window, aggregate or subquery (whose value depends
//!   on other rows) a run-time error is the rule's error, with a message
//!   that says why.

use std::sync::Arc;

use datafusion::arrow::array::{new_null_array, Array, ArrayRef, RecordBatch, UInt32Array};
use datafusion::arrow::compute::{concat, take};
use datafusion::arrow::datatypes::{DataType, Schema};
use datafusion::catalog::MemTable;
use datafusion::common::tree_node::TreeNode;
use datafusion::common::DFSchema;
use datafusion::logical_expr::simplify::SimplifyContext;
use datafusion::logical_expr::{Expr, ExprSchemable};
use datafusion::optimizer::simplify_expressions::ExprSimplifier;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::prelude::SessionContext;

use crate::error::{clean_datafusion_message, EngineError};
use crate::query::{is_row_error, QueryError};

/// Hidden column carrying each row's position through a query that may reorder rows.
pub(crate) const ROW_ID: &str = "__mp_row_id";

/// Most rows whose evaluation may fail at run time before the expression
/// itself is taken to be wrong (each one costs a few evaluations).
pub const MAX_ROW_ERRORS: usize = 10_000;

/// Why an expression cannot be evaluated over a batch: the error of the rule
/// (select item, condition) that holds it, never of one row (a row's
/// run-time error is in [`Evaluated::errors`]).
#[derive(Debug, thiserror::Error)]
pub(crate) enum EvalError {
    /// The text is not a SQL expression (the parser's message).
    #[error("SQL syntax: {0}")]
    Syntax(#[from] datafusion::sql::sqlparser::parser::ParserError),
    /// One expression, then more text (`a > 1 b`).
    #[error("SQL syntax: {sql} must be one expression; it goes on after {parsed}")]
    NotOneExpression { sql: String, parsed: String },
    /// DataFusion cannot plan it (an unknown column or table, a type
    /// mismatch); DataFusion's message, cleaned.
    #[error("{0}")]
    Plan(String),
    /// Planning failed over an aggregate or a GROUP BY in a per-row
    /// expression: DataFusion's message, cleaned, and how to make it per row.
    #[error("{message}. {}", AGGREGATE_HINT)]
    PlanNeedsOver { message: String },
    /// The expression `sql` uses an aggregate without OVER.
    #[error(
        "{sql} uses an aggregate, which gives one value for all the rows. {}",
        AGGREGATE_HINT
    )]
    Aggregate { sql: String },
    /// The expression as a query over the `rows` rows did not give each row
    /// exactly one value; `got`: how many it gave (None: more than `rows`).
    #[error("{sql} must give one value for each of the {rows} rows, but gives {}. {}", got_values(.rows, .got), AGGREGATE_HINT)]
    NotOneValuePerRow {
        sql: String,
        rows: usize,
        got: Option<usize>,
    },
    /// An expression with a window or an aggregate failed at run time
    /// (`message`, cleaned): its rows cannot be set aside one by one.
    #[error("{message}. The expression uses a window or an aggregate, so a row's value depends on the other rows and a failing row cannot be set aside on its own{}", window_fix(.message))]
    Window { message: String },
    /// More than [`MAX_ROW_ERRORS`] rows fail; `first` is the first row's error.
    #[error("{sql} fails on more than {} rows; the first: {first}", MAX_ROW_ERRORS)]
    TooManyRowErrors { sql: String, first: String },
    /// A lookup output `sql` uses a window, an aggregate or a subquery.
    #[error("{sql}: a lookup's output is computed row by row; it cannot use a window, an aggregate or a subquery")]
    LookupNotRowLocal { sql: String },
    /// The subquery `query` fails when run alone, with `message`.
    #[error("the subquery ({query}) fails by itself, whatever the row: {message}")]
    Subquery { query: String, message: String },
    /// A part that reads no column (`part`, e.g. `CAST('x' AS INT)`) fails
    /// with `message`, so it would fail on every row.
    #[error("{part}: {message} (this part reads no column, so it would fail on every row)")]
    Constant { part: String, message: String },
    /// Every row fails with this run-time error, and the expression reads no
    /// column of the row: the expression itself is wrong.
    #[error("{0}")]
    EveryRow(String),
    /// Running the expression as a query failed before any row's value.
    #[error(transparent)]
    Query(#[from] QueryError),
    /// Arrow failed putting the values together.
    #[error(transparent)]
    Arrow(#[from] datafusion::arrow::error::ArrowError),
    /// The batch could not get its row ids.
    #[error(transparent)]
    Engine(#[from] EngineError),
}

impl From<datafusion::error::DataFusionError> for EvalError {
    fn from(e: datafusion::error::DataFusionError) -> Self {
        EvalError::Plan(df_err(e))
    }
}

impl From<EvalError> for EngineError {
    fn from(e: EvalError) -> Self {
        EngineError::Request(e.to_string())
    }
}

/// How an aggregate in a per-row expression can give every row a value.
const AGGREGATE_HINT: &str = "A rule computes one value per row: an aggregate such as count(*) needs OVER (...) (a window) to give every row its own value.";

/// `3`, or `more than 4` when a query gave more values than the 4 rows.
fn got_values(rows: &usize, got: &Option<usize>) -> String {
    got.map(|g| g.to_string())
        .unwrap_or_else(|| format!("more than {rows}"))
}

/// How to make a failing window expression fail on no row (nothing to say
/// for an overflow).
fn window_fix(message: &str) -> &'static str {
    if message.contains("integer overflow") {
        ""
    } else {
        ": make it fail on no row (TRY_CAST, NULLIF(x, 0))"
    }
}

/// An expression's value for every row of a batch.
#[derive(Debug, Clone)]
pub(crate) struct Evaluated {
    /// One value per input row, in the input's order; NULL where the row's
    /// evaluation failed (see `errors`).
    pub values: ArrayRef,
    /// Rows (0-based, in the input) whose evaluation failed at run time, with
    /// the cleaned error message (`Divide by zero error`), in row order.
    pub errors: Vec<(usize, String)>,
    /// Columns the expression reads, for reasons (`fare_amount = -21.0`):
    /// the name to show (qualified when the expression qualifies it,
    /// `l.qty`) and the column's index in the evaluated batch, by name.
    pub columns: Vec<(String, usize)>,
}

impl Evaluated {
    /// The run-time error of row `row`, if its evaluation failed.
    pub fn error_of(&self, row: usize) -> Option<&str> {
        self.errors
            .binary_search_by_key(&row, |(r, _)| *r)
            .ok()
            .map(|i| self.errors[i].1.as_str())
    }
}

/// How an expression can be evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// Each row's value depends on that row alone.
    RowLocal,
    /// Reads other tables through a subquery; still one value per row that
    /// does not depend on the batch's other rows.
    Subquery,
    /// Uses a window or an aggregate: a row's value depends on the other rows.
    Window,
}

/// How `expr` can be evaluated (see [`Shape`]).
pub(crate) fn shape_of(expr: &Expr) -> Shape {
    let has = |f: fn(&Expr) -> bool| expr.exists(|e| Ok(f(e))).unwrap_or(true);
    if has(|e| matches!(e, Expr::WindowFunction(_) | Expr::AggregateFunction(_))) {
        Shape::Window
    } else if has(|e| {
        matches!(
            e,
            Expr::ScalarSubquery(_) | Expr::InSubquery(_) | Expr::Exists(_)
        )
    }) {
        Shape::Subquery
    } else {
        Shape::RowLocal
    }
}

/// What the SQL text of one expression holds, read with the SQL parser
/// (before any table is resolved).
struct SqlFacts {
    /// A window or an aggregate outside subqueries.
    other_rows: bool,
    /// A subquery (`IN (SELECT ...)`, `EXISTS`, a scalar subquery).
    subquery: bool,
    /// Bare or qualified column names outside subqueries (last part).
    identifiers: Vec<String>,
    /// The outermost subqueries, as SQL text.
    subqueries: Vec<String>,
    /// A function outside subqueries that is not immutable (`now()`,
    /// `random()`: another value each run) or not a known scalar function.
    not_immutable: bool,
}

/// Parses `sql` as exactly one SQL expression and reads its [`SqlFacts`].
fn sql_facts(ctx: &SessionContext, sql: &str) -> Result<SqlFacts, EvalError> {
    use datafusion::sql::sqlparser::ast::{Expr as SqlExpr, Query, Visit, Visitor};
    use datafusion::sql::sqlparser::dialect::GenericDialect;
    use datafusion::sql::sqlparser::parser::Parser;
    use datafusion::sql::sqlparser::tokenizer::Token;
    use std::ops::ControlFlow;
    struct Find<'a> {
        state: &'a datafusion::execution::SessionState,
        depth: usize,
        facts: SqlFacts,
    }
    impl Visitor for Find<'_> {
        type Break = ();
        fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
            if self.depth == 0 {
                self.facts.subqueries.push(q.to_string());
            }
            self.depth += 1;
            self.facts.subquery = true;
            ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            self.depth -= 1;
            ControlFlow::Continue(())
        }
        fn pre_visit_expr(&mut self, e: &SqlExpr) -> ControlFlow<()> {
            if self.depth > 0 {
                return ControlFlow::Continue(());
            }
            match e {
                SqlExpr::Function(f) => {
                    let name = f.name.to_string().to_lowercase();
                    if f.over.is_some() || self.state.aggregate_functions().contains_key(&name) {
                        self.facts.other_rows = true;
                    }
                    let immutable = self.state.scalar_functions().get(&name).is_some_and(|u| {
                        u.signature().volatility
                            == datafusion::logical_expr::Volatility::Immutable
                    });
                    if !immutable {
                        self.facts.not_immutable = true;
                    }
                }
                SqlExpr::Identifier(id) => self.facts.identifiers.push(id.value.clone()),
                SqlExpr::CompoundIdentifier(ids) => {
                    if let Some(last) = ids.last() {
                        self.facts.identifiers.push(last.value.clone());
                    }
                }
                _ => {}
            }
            ControlFlow::Continue(())
        }
    }
    let mut parser = Parser::new(&GenericDialect {}).try_with_sql(sql)?;
    let expr = parser.parse_expr()?;
    if parser.peek_token().token != Token::EOF {
        return Err(EvalError::NotOneExpression {
            sql: sql.to_string(),
            parsed: expr.to_string(),
        });
    }
    let state = ctx.state();
    let mut find = Find {
        state: &state,
        depth: 0,
        facts: SqlFacts {
            other_rows: false,
            subquery: false,
            identifiers: vec![],
            subqueries: vec![],
            not_immutable: false,
        },
    };
    let _ = expr.visit(&mut find);
    Ok(find.facts)
}

/// Does the SQL expression `sql` use a window or an aggregate outside
/// subqueries, i.e. does a row's value depend on which other rows are
/// there? (`false` when it does not parse: the run reports that.)
pub(crate) fn uses_other_rows(ctx: &SessionContext, sql: &str) -> bool {
    sql_facts(ctx, sql).is_ok_and(|f| f.other_rows)
}

/// May the values of `sql` (one expression) computed in one run be reused
/// by the next over the same rows? Only when each row's value depends on
/// that row alone and cannot change: no window or aggregate, no subquery
/// (it reads tables a run may change), only immutable functions (not
/// `now()` or `random()`). `false` when it does not parse.
pub(crate) fn reusable(ctx: &SessionContext, sql: &str) -> bool {
    sql_facts(ctx, sql).is_ok_and(|f| !f.subquery && !f.not_immutable && !f.other_rows)
}

/// Does the SQL expression `sql` give the same values whenever it is
/// evaluated over the same rows of one table? A window or an aggregate
/// over that table may (the rows are the same), a subquery may not (it
/// reads other tables), nor a function that is not immutable. `false` when
/// it does not parse. Used to keep check results ([`crate::checks`]).
pub(crate) fn fixed_over_same_rows(ctx: &SessionContext, sql: &str) -> bool {
    sql_facts(ctx, sql).is_ok_and(|f| !f.subquery && !f.not_immutable)
}

fn schema_of(batch: &RecordBatch) -> Result<DFSchema, EvalError> {
    Ok(DFSchema::try_from(batch.schema().as_ref().clone())?)
}

/// One expression, checked against a batch's columns and ready to evaluate.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    sql: String,
    /// The value's type.
    pub data_type: DataType,
    shape: Shape,
    /// Row-local expressions: the planned expression.
    expr: Option<Expr>,
    /// Columns of the batch the expression reads (name shown, index).
    columns: Vec<(String, usize)>,
}

/// Plans `sql` (one expression) over `batch`'s columns. Errors: syntax,
/// unknown columns or tables, types, an aggregate without OVER.
pub(crate) async fn prepare(
    ctx: &SessionContext,
    batch: &RecordBatch,
    sql: &str,
) -> Result<Prepared, EvalError> {
    let facts = sql_facts(ctx, sql)?;
    if facts.subquery {
        // A subquery that fails by itself fails on every row: the rule's error.
        for q in &facts.subqueries {
            if let Some(e) = subquery_error(ctx, q).await {
                return Err(e);
            }
        }
        // Tables in a subquery resolve only in a whole statement.
        let data_type = with_rows_table(ctx, batch, sql, |df| async move {
            df.schema().field(1).data_type().clone()
        })
        .await
        .map_err(|e| match e {
            QueryFailure::Refused(e) => e,
            QueryFailure::RunTime(m) => EvalError::EveryRow(m),
        })?;
        let schema = batch.schema();
        let mut columns: Vec<(String, usize)> = facts
            .identifiers
            .into_iter()
            .filter_map(|c| schema.index_of(&c).ok().map(|i| (c, i)))
            .collect();
        columns.sort();
        columns.dedup();
        return Ok(Prepared {
            sql: sql.to_string(),
            data_type,
            shape: if facts.other_rows {
                Shape::Window
            } else {
                Shape::Subquery
            },
            expr: None,
            columns,
        });
    }
    let schema = schema_of(batch)?;
    let expr = ctx.parse_sql_expr(sql, &schema)?;
    if expr
        .exists(|e| Ok(matches!(e, Expr::AggregateFunction(_))))
        .unwrap_or(false)
    {
        return Err(EvalError::Aggregate {
            sql: sql.to_string(),
        });
    }
    let data_type = expr.get_type(&schema)?;
    let (expr, data_type) = in_microseconds(expr, data_type);
    let shape = shape_of(&expr);
    Ok(Prepared {
        sql: sql.to_string(),
        data_type,
        shape,
        columns: columns_of(&expr, &schema),
        expr: (shape == Shape::RowLocal).then_some(expr),
    })
}

/// A timestamp in seconds, milliseconds or nanoseconds (`to_timestamp_seconds(n)`)
/// is cast to microseconds, the lake's TIMESTAMP unit: a value outside its
/// range (about ±292,000 years) is then that row's run-time error, not a
/// value no reader can show.
fn in_microseconds(expr: Expr, data_type: DataType) -> (Expr, DataType) {
    use datafusion::arrow::datatypes::TimeUnit;
    match data_type {
        DataType::Timestamp(unit, tz) if unit != TimeUnit::Microsecond => {
            let to = DataType::Timestamp(TimeUnit::Microsecond, tz);
            (
                Expr::Cast(datafusion::logical_expr::Cast::new(
                    Box::new(expr),
                    to.clone(),
                )),
                to,
            )
        }
        other => (expr, other),
    }
}

/// Evaluates the SQL expression `sql` for every row of `batch` (see the
/// module docs). Errors: as [`prepare`], and: it does not give one value per
/// row, more than [`MAX_ROW_ERRORS`] rows fail, or a window / aggregate
/// fails at run time.
pub(crate) async fn evaluate(
    ctx: &SessionContext,
    batch: &RecordBatch,
    sql: &str,
) -> Result<Evaluated, EvalError> {
    let prepared = prepare(ctx, batch, sql).await?;
    evaluate_prepared(ctx, batch, &prepared).await
}

/// [`evaluate`] for an expression [`prepare`]d over `batch`'s columns.
pub(crate) async fn evaluate_prepared(
    ctx: &SessionContext,
    batch: &RecordBatch,
    p: &Prepared,
) -> Result<Evaluated, EvalError> {
    let sql = p.sql.as_str();
    if let (Shape::RowLocal, Some(expr)) = (p.shape, &p.expr) {
        return evaluate_in(ctx, batch, &schema_of(batch)?, expr.clone(), sql);
    }
    let mut errors = Vec::new();
    let n = batch.num_rows();
    // Pieces (first row, values) that evaluated; failing ranges are halved.
    let mut pieces: Vec<(usize, ArrayRef)> = Vec::new();
    let mut todo = vec![(0usize, n)];
    while let Some((offset, len)) = todo.pop() {
        match query_values(ctx, &batch.slice(offset, len), sql, &p.data_type).await {
            Ok(values) => pieces.push((offset, values)),
            Err(QueryFailure::Refused(m)) => return Err(m),
            Err(QueryFailure::RunTime(message)) if p.shape == Shape::Window => {
                return Err(EvalError::Window { message });
            }
            Err(QueryFailure::RunTime(m)) if len <= 1 => {
                errors.push((offset, m));
                if errors.len() > MAX_ROW_ERRORS {
                    return Err(too_many_errors(sql, &errors));
                }
            }
            Err(QueryFailure::RunTime(_)) => {
                let half = len / 2;
                todo.push((offset + half, len - half));
                todo.push((offset, half));
            }
        }
    }
    errors.sort_by_key(|(r, _)| *r);
    for (row, _) in &errors {
        pieces.push((*row, new_null_array(&p.data_type, 1)));
    }
    pieces.sort_by_key(|(offset, _)| *offset);
    let arrays: Vec<&dyn Array> = pieces.iter().map(|(_, a)| a.as_ref()).collect();
    let values = if arrays.is_empty() {
        new_null_array(&p.data_type, 0)
    } else {
        concat(&arrays)?
    };
    Ok(Evaluated {
        values,
        errors,
        columns: p.columns.clone(),
    })
}

/// A row-local expression over a batch whose columns `schema` names (the
/// qualified columns of a join, say). Errors: the expression needs other
/// rows (a window, an aggregate, a subquery), or does not plan.
pub(crate) fn evaluate_qualified(
    ctx: &SessionContext,
    batch: &RecordBatch,
    schema: &DFSchema,
    sql: &str,
) -> Result<Evaluated, EvalError> {
    let expr = ctx.parse_sql_expr(sql, schema)?;
    if shape_of(&expr) != Shape::RowLocal {
        return Err(EvalError::LookupNotRowLocal {
            sql: sql.to_string(),
        });
    }
    evaluate_in(ctx, batch, schema, expr, sql)
}

/// The columns `expr` reads: the name as written (`l.qty` or `qty`) and the
/// column's index in `schema`.
fn columns_of(expr: &Expr, schema: &DFSchema) -> Vec<(String, usize)> {
    let mut columns: Vec<(String, usize)> = expr
        .column_refs()
        .into_iter()
        .filter_map(|c| {
            let index = schema.index_of_column(c).ok()?;
            // A lookup qualifies the row's own columns as `__row`: show them bare.
            let name = c.flat_name();
            let shown = name.strip_prefix("__row.").unwrap_or(&name).to_string();
            Some((shown, index))
        })
        .collect();
    columns.sort();
    columns.dedup();
    columns
}

/// " (fare_amount = -21, l.qty = 0)": the values of `columns` (see
/// [`Evaluated::columns`]) in row `row` of `batch`; `quote_text` puts text
/// values in quotes (`amount = 'ten'`).
pub(crate) fn describe(
    batch: &RecordBatch,
    columns: &[(String, usize)],
    row: usize,
    quote_text: bool,
) -> String {
    use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
    let opts = FormatOptions::default()
        .with_null("NULL")
        .with_timestamp_format(Some("%Y-%m-%d %H:%M:%S%.f"));
    let parts: Vec<String> = columns
        .iter()
        .filter(|(_, i)| *i < batch.num_columns())
        .filter_map(|(name, i)| {
            let arr = batch.column(*i);
            let f = ArrayFormatter::try_new(arr.as_ref(), &opts).ok()?;
            let text = matches!(
                arr.data_type(),
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
            );
            Some(if quote_text && text && arr.is_valid(row) {
                format!("{name} = '{}'", f.value(row))
            } else {
                format!("{name} = {}", f.value(row))
            })
        })
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}

fn too_many_errors(sql: &str, errors: &[(usize, String)]) -> EvalError {
    EvalError::TooManyRowErrors {
        sql: sql.to_string(),
        first: errors.first().map(|(_, e)| e.clone()).unwrap_or_default(),
    }
}

/// A row-local expression, evaluated directly on the batch's arrays.
fn evaluate_in(
    ctx: &SessionContext,
    batch: &RecordBatch,
    schema: &DFSchema,
    expr: Expr,
    sql: &str,
) -> Result<Evaluated, EvalError> {
    let columns = columns_of(&expr, schema);
    if let Some(e) = constant_error(ctx, &expr, schema) {
        return Err(e);
    }
    // As a query plan would: types coerced, then the simplifier's rewrites
    // (some functions, `coalesce` among them, exist only as rewrites).
    let state = ctx.state();
    let simplifier = ExprSimplifier::new(
        SimplifyContext::builder()
            .with_schema(Arc::new(schema.clone()))
            .with_config_options(Arc::clone(state.config_options()))
            .with_query_execution_start_time(state.execution_props().query_execution_start_time)
            .build(),
    );
    // Integer arithmetic checked before constants fold (never a wrapped value).
    let expr = simplifier
        .coerce(expr, schema)
        .and_then(|e| crate::checked::checked_logical(e, schema))
        .and_then(|e| simplifier.simplify(e))?;
    let physical = crate::checked::checked_arithmetic(ctx.create_physical_expr(expr, schema)?)?;
    let mut errors = Vec::new();
    let values = evaluate_rows(physical.as_ref(), batch, 0, &mut errors)?;
    if errors.len() > MAX_ROW_ERRORS {
        return Err(too_many_errors(sql, &errors));
    }
    if !errors.is_empty() && columns.is_empty() {
        // Nothing of the row takes part: the expression itself is wrong.
        return Err(EvalError::EveryRow(errors.swap_remove(0).1));
    }
    Ok(Evaluated {
        values,
        errors,
        columns,
    })
}

/// The run-time error of subquery `q` run on its own, if it fails (one that
/// reads the outer row does not plan alone: `None`).
async fn subquery_error(ctx: &SessionContext, q: &str) -> Option<EvalError> {
    let df = ctx
        .sql_with_options(
            &format!("SELECT * FROM ({q}) AS __mp_subquery"),
            crate::query::queries_only(),
        )
        .await
        .ok()?;
    match crate::query::collect_single(df, None).await {
        Err(QueryError::Execution(message)) => Some(EvalError::Subquery {
            query: q.to_string(),
            message,
        }),
        _ => None,
    }
}

/// The error of a part of `expr` that reads no column (`CAST('x' AS INT)`),
/// if one fails: it would fail on every row, so it is the expression's
/// error, not the rows'.
fn constant_error(ctx: &SessionContext, expr: &Expr, schema: &DFSchema) -> Option<EvalError> {
    use datafusion::common::tree_node::TreeNodeRecursion;
    let one_row = RecordBatch::try_new_with_options(
        Arc::new(Schema::empty()),
        vec![],
        &datafusion::arrow::array::RecordBatchOptions::new().with_row_count(Some(1)),
    )
    .ok()?;
    let empty = DFSchema::empty();
    let mut found = None;
    let _ = expr.apply(|e| {
        if matches!(e, Expr::Literal(..) | Expr::Column(_) | Expr::Alias(_)) {
            return Ok(TreeNodeRecursion::Continue);
        }
        if !e.column_refs().is_empty() || e.is_volatile() {
            return Ok(TreeNodeRecursion::Continue);
        }
        // A part without columns: compute it once.
        let result = ctx
            .create_physical_expr(e.clone(), &empty)
            .and_then(crate::checked::checked_arithmetic)
            .and_then(|p| p.evaluate(&one_row).map(|_| ()));
        match result {
            Err(err) if is_row_error(&err) => {
                found = Some(EvalError::Constant {
                    part: e.human_display().to_string(),
                    message: df_err(err),
                });
                Ok(TreeNodeRecursion::Stop)
            }
            _ => Ok(TreeNodeRecursion::Jump),
        }
    });
    let _ = schema;
    found
}

/// A row-local expression over `batch`; rows that fail are split off until
/// each stands alone (`offset`: the batch's first row in the caller's input).
fn evaluate_rows(
    expr: &dyn PhysicalExpr,
    batch: &RecordBatch,
    offset: usize,
    errors: &mut Vec<(usize, String)>,
) -> Result<ArrayRef, EvalError> {
    let n = batch.num_rows();
    let message = match expr.evaluate(batch).and_then(|v| v.into_array(n)) {
        Ok(values) => return Ok(values),
        Err(e) if !is_row_error(&e) => return Err(e.into()),
        Err(e) => df_err(e),
    };
    if n <= 1 || errors.len() > MAX_ROW_ERRORS {
        let ty = expr.data_type(batch.schema().as_ref())?;
        errors.extend((0..n).map(|r| (offset + r, message.clone())));
        return Ok(new_null_array(&ty, n));
    }
    let half = n / 2;
    let left = evaluate_rows(expr, &batch.slice(0, half), offset, errors)?;
    let right = evaluate_rows(expr, &batch.slice(half, n - half), offset + half, errors)?;
    Ok(concat(&[left.as_ref(), right.as_ref()])?)
}

enum QueryFailure {
    /// The expression cannot run on any row (planning, shape): the rule's error.
    Refused(EvalError),
    /// It failed while running (a row's value).
    RunTime(String),
}

/// `batch` with the hidden [`ROW_ID`] column 0..n appended.
pub(crate) fn with_row_ids(batch: &RecordBatch) -> Result<RecordBatch, EvalError> {
    let ids = Arc::new(UInt32Array::from_iter_values(0..batch.num_rows() as u32));
    Ok(crate::query::with_column(batch, ROW_ID, ids)?)
}

/// Registers `batch` with row ids as the table [`ROWS_TABLE`] for one
/// statement (the caller deregisters it).
fn register_rows(ctx: &SessionContext, batch: &RecordBatch) -> Result<(), QueryFailure> {
    let refused = QueryFailure::Refused;
    let with_id = with_row_ids(batch).map_err(refused)?;
    let table =
        MemTable::try_new(with_id.schema(), vec![vec![with_id]]).map_err(|e| refused(e.into()))?;
    ctx.register_table(ROWS_TABLE, Arc::new(table))
        .map_err(|e| refused(e.into()))?;
    Ok(())
}

/// The order that puts `out`'s rows back on the input rows their ids
/// (column `ids` of `out`) name: `take(out, order)` is in input order.
/// `None` unless every one of the `n` input rows is there exactly once.
pub(crate) fn input_order(ids: &ArrayRef, n: usize) -> Option<UInt32Array> {
    let ids = ids.as_any().downcast_ref::<UInt32Array>()?;
    let mut position: Vec<Option<u32>> = vec![None; n];
    for (i, id) in ids.iter().enumerate() {
        match position.get_mut(id? as usize)? {
            slot @ None => *slot = Some(i as u32),
            Some(_) => return None,
        }
    }
    let order: Option<Vec<u32>> = position.into_iter().collect();
    order.map(UInt32Array::from)
}

/// Name under which a batch is registered for one statement.
const ROWS_TABLE: &str = "__mp_rows";

/// Plans `SELECT row id, (sql) AS __value FROM <batch with row ids>` and
/// hands the DataFrame to `then`; the batch is registered as a table only
/// for that (subqueries resolve their tables only in a whole statement).
async fn with_rows_table<T, F, Fut>(
    ctx: &SessionContext,
    batch: &RecordBatch,
    sql: &str,
    then: F,
) -> Result<T, QueryFailure>
where
    F: FnOnce(datafusion::dataframe::DataFrame) -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let refused = QueryFailure::Refused;
    register_rows(ctx, batch)?;
    let planned = ctx
        .sql_with_options(
            &format!("SELECT \"{ROW_ID}\", ({sql}) AS __value FROM {ROWS_TABLE}"),
            crate::query::queries_only(),
        )
        .await;
    let result = match planned {
        Ok(df) => Ok(then(df).await),
        Err(e) => Err(refused(aggregate_hint_if_needed(df_err(e)))),
    };
    let _ = ctx.deregister_table(ROWS_TABLE);
    result
}

/// The expression as a query over `batch` that carries row ids, its values
/// put back in the batch's row order. A condition DataFusion cannot compute
/// as a value (an `IN (SELECT ...)` / `EXISTS` outside WHERE) is computed as
/// two WHERE filters: the rows where it is TRUE, and where it is FALSE
/// (the others are NULL).
async fn query_values(
    ctx: &SessionContext,
    batch: &RecordBatch,
    sql: &str,
    data_type: &DataType,
) -> Result<ArrayRef, QueryFailure> {
    let n = batch.num_rows();
    let refused = QueryFailure::Refused;
    let collected = with_rows_table(ctx, batch, sql, |df| {
        crate::query::collect_single(df, Some(n))
    })
    .await?;
    let out = match collected {
        Ok(out) => out,
        Err(crate::query::QueryError::Query(m))
            if *data_type == DataType::Boolean
                && (m.contains("subqueries") || m.contains("logical expression Exists")) =>
        {
            return condition_by_filters(ctx, batch, sql).await;
        }
        Err(e) => return Err(collect_failure(e, sql, n)),
    };
    let order = input_order(out.column(0), n)
        .ok_or_else(|| refused(one_value_per_row(sql, n, Some(out.num_rows()))))?;
    take(out.column(1).as_ref(), &order, None).map_err(|e| refused(e.into()))
}

fn collect_failure(e: crate::query::QueryError, sql: &str, n: usize) -> QueryFailure {
    match e {
        crate::query::QueryError::TooManyRows(_) => {
            QueryFailure::Refused(one_value_per_row(sql, n, None))
        }
        crate::query::QueryError::Execution(m) => QueryFailure::RunTime(m),
        other => QueryFailure::Refused(other.into()),
    }
}

/// A boolean condition as `WHERE (sql)` and `WHERE NOT (sql)` over the rows.
async fn condition_by_filters(
    ctx: &SessionContext,
    batch: &RecordBatch,
    sql: &str,
) -> Result<ArrayRef, QueryFailure> {
    let n = batch.num_rows();
    let refused = QueryFailure::Refused;
    register_rows(ctx, batch)?;
    let mut values: Vec<Option<bool>> = vec![None; n];
    let mut result = Ok(());
    for (condition, value) in [(format!("({sql})"), true), (negation(sql), false)] {
        let query = format!("SELECT \"{ROW_ID}\" FROM {ROWS_TABLE} WHERE {condition}");
        let ids = match ctx
            .sql_with_options(&query, crate::query::queries_only())
            .await
        {
            Ok(df) => crate::query::collect_single(df, Some(n))
                .await
                .map_err(|e| collect_failure(e, sql, n)),
            Err(e) => Err(refused(e.into())),
        };
        match ids {
            Ok(ids) => {
                if let Some(ids) = ids.column(0).as_any().downcast_ref::<UInt32Array>() {
                    for id in ids.iter().flatten() {
                        if let Some(slot) = values.get_mut(id as usize) {
                            *slot = Some(value);
                        }
                    }
                }
            }
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    let _ = ctx.deregister_table(ROWS_TABLE);
    result?;
    Ok(Arc::new(datafusion::arrow::array::BooleanArray::from(
        values,
    )))
}

/// `NOT (sql)` with the outer negation folded into the expression where it
/// has one (`NOT x` → `x`, `EXISTS` ↔ `NOT EXISTS`, `IN (SELECT ...)` ↔
/// `NOT IN (SELECT ...)`): DataFusion turns a subquery into a join only when
/// it is not under a further NOT. Same three-valued result either way.
fn negation(sql: &str) -> String {
    use datafusion::sql::sqlparser::ast::{Expr as SqlExpr, UnaryOperator};
    use datafusion::sql::sqlparser::dialect::GenericDialect;
    use datafusion::sql::sqlparser::parser::Parser;
    let parsed = Parser::new(&GenericDialect {})
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_expr());
    let mut expr = match parsed {
        Ok(e) => e,
        Err(_) => return format!("NOT ({sql})"),
    };
    while let SqlExpr::Nested(inner) = expr {
        expr = *inner;
    }
    match expr {
        SqlExpr::UnaryOp {
            op: UnaryOperator::Not,
            expr,
        } => format!("({expr})"),
        SqlExpr::Exists { subquery, negated } => SqlExpr::Exists {
            subquery,
            negated: !negated,
        }
        .to_string(),
        SqlExpr::InSubquery {
            expr,
            subquery,
            negated,
        } => SqlExpr::InSubquery {
            expr,
            subquery,
            negated: !negated,
        }
        .to_string(),
        _ => format!("NOT ({sql})"),
    }
}

/// A planning error about an aggregate in a per-row expression gets the hint.
fn aggregate_hint_if_needed(message: String) -> EvalError {
    if message.contains("aggregate") || message.contains("GROUP BY") {
        EvalError::PlanNeedsOver { message }
    } else {
        EvalError::Plan(message)
    }
}

fn one_value_per_row(sql: &str, n: usize, got: Option<usize>) -> EvalError {
    EvalError::NotOneValuePerRow {
        sql: sql.to_string(),
        rows: n,
        got,
    }
}

fn df_err(e: datafusion::error::DataFusionError) -> String {
    clean_datafusion_message(&e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{BooleanArray, Int64Array, StringArray};

    fn batch() -> RecordBatch {
        // rw-29: P-2 twice, P-1, P-3.
        RecordBatch::try_from_iter(vec![
            (
                "sku",
                Arc::new(StringArray::from(vec!["P-2", "P-1", "P-2", "P-3"])) as ArrayRef,
            ),
            (
                "qty",
                Arc::new(Int64Array::from(vec![1, 4, 3, 2])) as ArrayRef,
            ),
            (
                "amount",
                Arc::new(StringArray::from(vec!["10", "ten", "30", "0"])) as ArrayRef,
            ),
        ])
        .unwrap()
    }

    fn bools(e: &Evaluated) -> Vec<Option<bool>> {
        e.values
            .as_any()
            .downcast_ref::<BooleanArray>()
            .unwrap()
            .iter()
            .collect()
    }

    fn run<F: std::future::Future>(f: F) -> F::Output {
        futures::executor::block_on(f)
    }

    /// The condition `sql`'s value per row of [`batch`].
    fn condition(sql: &str) -> Vec<Option<bool>> {
        bools(&run(evaluate(&SessionContext::new(), &batch(), sql)).unwrap())
    }

    #[test]
    fn a_window_result_stays_on_its_own_row() {
        assert_eq!(
            condition("count(*) OVER (PARTITION BY sku) > 1"),
            vec![Some(true), Some(false), Some(true), Some(false)]
        );
        assert_eq!(
            condition("row_number() OVER (ORDER BY qty DESC) = 1"),
            vec![Some(false), Some(true), Some(false), Some(false)]
        );
    }

    #[test]
    fn a_run_time_error_belongs_to_its_row() {
        let ctx = SessionContext::new();
        let e = run(evaluate(&ctx, &batch(), "CAST(amount AS INT)")).unwrap();
        assert_eq!(e.errors.len(), 1);
        assert_eq!(e.errors[0].0, 1);
        assert!(e.errors[0].1.contains("'ten'"), "{}", e.errors[0].1);
        let ints: Vec<Option<i32>> = e
            .values
            .as_any()
            .downcast_ref::<datafusion::arrow::array::Int32Array>()
            .unwrap()
            .iter()
            .collect();
        assert_eq!(ints, vec![Some(10), None, Some(30), Some(0)]);
        let e = run(evaluate(&ctx, &batch(), "100 / (qty - 3)")).unwrap();
        assert_eq!(
            e.errors.iter().map(|(r, _)| *r).collect::<Vec<_>>(),
            vec![2]
        );
        assert!(
            e.errors[0].1.contains("Divide by zero"),
            "{}",
            e.errors[0].1
        );
    }

    #[test]
    fn an_aggregate_without_over_is_refused() {
        let ctx = SessionContext::new();
        let err = run(evaluate(&ctx, &batch(), "count(*) > 1")).unwrap_err();
        assert!(err.to_string().contains("OVER"), "{err}");
    }

    #[test]
    fn a_subquery_with_order_by_and_limit() {
        assert_eq!(
            condition(
                "qty IN (SELECT column1 FROM (VALUES (4), (3), (1)) ORDER BY column1 DESC LIMIT 2)"
            ),
            vec![Some(false), Some(true), Some(true), Some(false)]
        );
        assert_eq!(
            condition(
                "qty = (SELECT column1 FROM (VALUES (4), (3), (1)) ORDER BY column1 LIMIT 1)"
            ),
            vec![Some(true), Some(false), Some(false), Some(false)]
        );
    }

    #[test]
    fn shapes() {
        let ctx = SessionContext::new();
        let b = batch();
        let shape = |sql: &str| run(prepare(&ctx, &b, sql)).unwrap().shape;
        assert_eq!(shape("qty > 1 AND sku <> 'x'"), Shape::RowLocal);
        assert_eq!(shape("sum(qty) OVER () > 3"), Shape::Window);
        assert_eq!(shape("qty IN (SELECT 1)"), Shape::Subquery);
    }

    #[test]
    fn not_one_value_per_row_names_the_expression_and_the_rows() {
        let e = EvalError::NotOneValuePerRow {
            sql: "count(*) > 1".into(),
            rows: 4,
            got: None,
        };
        assert_eq!(
            e.to_string(),
            "count(*) > 1 must give one value for each of the 4 rows, but gives more than 4. A rule computes one value per row: an aggregate such as count(*) needs OVER (...) (a window) to give every row its own value."
        );
    }
}
