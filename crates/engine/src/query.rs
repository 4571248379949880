//! Running SQL the way the in-browser engine can: one partition on the
//! calling task ([`collect_single`]), queries only ([`queries_only`]), a
//! bounded size ([`check_size`]) and row count ([`GOLD_MAX_ROWS`]), and
//! the tables SQL reads ([`register_table`]). Shared
//! by silver's rules, gold's models and the checks.

use std::sync::Arc;

use crate::lake::concat_batches;
use datafusion::arrow::array::{Array, ArrayRef, RecordBatch};
use datafusion::arrow::datatypes::{Field, Schema};
use datafusion::catalog::MemTable;
use datafusion::dataframe::DataFrame;
use datafusion::execution::context::SQLOptions;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::dialect::GenericDialect;

use crate::error::{clean_datafusion_message, EngineError, Result};
use medallion_protocol::TableName;

/// Registers silver or gold table `name` with DataFusion as its rows in
/// memory (`batch`, shared, not copied), so the next rules, gold's models
/// and the checks query exactly the rows this run produced; the table's
/// versions are its commit log's Parquet files ([`crate::lake::versions`]).
/// Bronze is registered over its own folder in the lake: its batch files
/// are its data. (Silver used to be written to a Parquet working copy for
/// this as well: a second encoding of every silver row per run, 12% of a
/// native flights rule edit; issue 12.)
pub async fn register_table(
    ctx: &SessionContext,
    table: &TableName,
    batch: &RecordBatch,
) -> Result<()> {
    let name = table.to_string();
    ctx.deregister_table(&name)?;
    if !table.is_bronze() {
        // One partition: the browser runs no parallel plans.
        let rows = MemTable::try_new(batch.schema(), vec![vec![batch.clone()]])?;
        ctx.register_table(&name, Arc::new(rows))?;
        return Ok(());
    }
    ctx.register_parquet(
        &name,
        &format!("{}{}/", crate::lake::LAKE_URL, table.path()),
        Default::default(),
    )
    .await?;
    Ok(())
}

/// Most rows a gold model may produce. A gold table is an aggregate for
/// people to read; a query that explodes (a cross join) stops here instead of
/// exhausting the tab's memory.
pub const GOLD_MAX_ROWS: usize = 100_000;

/// Why a query was not run, stopped early, or was refused before planning.
#[derive(Debug, thiserror::Error)]
pub(crate) enum QueryError {
    /// DataFusion or Arrow error while planning, cleaned for display.
    #[error("{0}")]
    Query(String),
    /// DataFusion or Arrow error while running (a row's value), cleaned.
    #[error("{0}")]
    Execution(String),
    /// The plan needs several partitions (threads), which the browser lacks;
    /// carries the first operator that would run in parallel.
    #[error("this query would run in several parallel parts ({0}), which the in-browser engine cannot do (a browser tab has no threads for it). UNION / UNION ALL is the usual cause: write it without UNION.")]
    Parallel(String),
    /// More than the allowed rows; carries the limit.
    #[error("the result has more than {0} rows; stopped. Aggregate (GROUP BY) or add a LIMIT.")]
    TooManyRows(usize),
    /// The SQL text does not tokenize (an unterminated string literal, ...).
    #[error("SQL syntax: {0}")]
    Syntax(#[from] datafusion::sql::sqlparser::tokenizer::TokenizerError),
    /// The SQL has more tokens than the in-browser engine takes ([`check_size`]).
    #[error("this SQL has {tokens} tokens; the in-browser engine takes at most {limit} here (very long expressions overflow its stack). Split it up or simplify it.")]
    TooLong { tokens: usize, limit: usize },
}

impl From<QueryError> for EngineError {
    fn from(e: QueryError) -> Self {
        EngineError::Request(e.to_string())
    }
}

/// First operator of `plan` (depth first) that produces more than one
/// partition. Running such a plan spawns tasks, which panics in a browser.
pub(crate) fn parallel_node(
    plan: &Arc<dyn datafusion::physical_plan::ExecutionPlan>,
) -> Option<String> {
    use datafusion::physical_plan::ExecutionPlanProperties;
    if plan.output_partitioning().partition_count() > 1 {
        return Some(plan.name().to_string());
    }
    plan.children().into_iter().find_map(parallel_node)
}

/// Runs `df` as one partition on the calling task (nothing is spawned, so it
/// works without a tokio runtime) and concatenates the result. Refuses plans
/// that need several partitions; stops after `max_rows` rows if given.
pub(crate) async fn collect_single(
    df: DataFrame,
    max_rows: Option<usize>,
) -> std::result::Result<RecordBatch, QueryError> {
    use futures::StreamExt;
    let task_ctx = Arc::new(df.task_ctx());
    let plan = df
        .create_physical_plan()
        .await
        .map_err(|e| QueryError::Query(df_err(e)))?;
    if let Some(node) = parallel_node(&plan) {
        return Err(QueryError::Parallel(node));
    }
    let schema = plan.schema();
    let mut stream = plan
        .execute(0, task_ctx)
        .map_err(|e| QueryError::Execution(df_err(e)))?;
    let mut batches = Vec::new();
    let mut rows = 0;
    while let Some(batch) = stream.next().await {
        let batch = batch.map_err(|e| {
            if is_row_error(&e) {
                QueryError::Execution(df_err(e))
            } else {
                QueryError::Query(df_err(e))
            }
        })?;
        rows += batch.num_rows();
        if max_rows.is_some_and(|m| rows > m) {
            return Err(QueryError::TooManyRows(max_rows.unwrap_or_default()));
        }
        batches.push(batch);
    }
    concat_batches(&schema, &batches).map_err(|e| QueryError::Query(e.to_string()))
}

pub(crate) fn read_batch(ctx: &SessionContext, batch: &RecordBatch) -> Result<DataFrame> {
    let table = MemTable::try_new(batch.schema(), vec![vec![batch.clone()]])?;
    Ok(ctx.read_table(Arc::new(table))?)
}

pub(crate) fn df_err(e: datafusion::error::DataFusionError) -> String {
    clean_datafusion_message(&e.to_string())
}

/// SQL options for statements that only read: no DDL, no DML, no `SET`.
pub(crate) fn queries_only() -> SQLOptions {
    SQLOptions::new()
        .with_allow_ddl(false)
        .with_allow_dml(false)
        .with_allow_statements(false)
}

/// `batch` with `array` added (or replaced) as column `name` (nullable).
pub(crate) fn with_column(batch: &RecordBatch, name: &str, array: ArrayRef) -> Result<RecordBatch> {
    let mut fields: Vec<Field> = batch
        .schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    let mut cols = batch.columns().to_vec();
    let field = Field::new(name, array.data_type().clone(), true);
    match batch.schema().index_of(name) {
        Ok(i) => {
            fields[i] = field;
            cols[i] = array;
        }
        Err(_) => {
            fields.push(field);
            cols.push(array);
        }
    }
    Ok(RecordBatch::try_new(Arc::new(Schema::new(fields)), cols)?)
}

/// Most SQL tokens in a gold model / a rule expression. DataFusion walks
/// expression trees recursively, and a browser's WebAssembly stack is small:
/// a sum of a thousand terms overflows it and kills the module. Far above
/// anything a readable model needs.
pub const MAX_SQL_TOKENS: usize = 800;

/// See [`MAX_SQL_TOKENS`]; for one rule expression.
pub const MAX_EXPRESSION_TOKENS: usize = 300;

/// Refuses SQL longer than `limit` tokens (whitespace and comments not counted).
pub(crate) fn check_size(sql: &str, limit: usize) -> std::result::Result<(), QueryError> {
    use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};
    let dialect = GenericDialect {};
    let tokens = Tokenizer::new(&dialect, sql).tokenize()?;
    let n = tokens
        .iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .count();
    if n > limit {
        return Err(QueryError::TooLong { tokens: n, limit });
    }
    Ok(())
}

/// Is `e` about the values of the rows (a failed cast, a division by zero,
/// an overflow), rather than about the expression or the engine (an
/// internal error, something not implemented)? Only the first kind is a
/// row's problem.
pub(crate) fn is_row_error(e: &datafusion::error::DataFusionError) -> bool {
    use datafusion::error::DataFusionError as E;
    matches!(
        e.find_root(),
        E::ArrowError(..) | E::Execution(..) | E::External(..)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_long_sql_names_its_token_count_and_the_limit() {
        let e = check_size("fare_amount + tip_amount", 2).unwrap_err();
        assert!(
            matches!(
                e,
                QueryError::TooLong {
                    tokens: 3,
                    limit: 2
                }
            ),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "this SQL has 3 tokens; the in-browser engine takes at most 2 here (very long expressions overflow its stack). Split it up or simplify it."
        );
    }
}
