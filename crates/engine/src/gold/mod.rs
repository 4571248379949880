//! Gold: each model is SQL over the silver tables (seed 000 §6, seed 002
//! §7), registered as `gold.<model>`. A model that fails does not fail the
//! run: the caller keeps its last good table. `MERGE ON` models merge into
//! their previous table; a model reading bronze is refused unless the
//! "gold reads bronze" anti-pattern is on.

use medallion_protocol::TableName;
use std::collections::BTreeMap;

use datafusion::arrow::array::{BooleanArray, RecordBatch};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::parser::Parser;

use crate::error::{clean_datafusion_message, pipeline_diag, Diagnostic, EngineError};
use crate::model::PipelineDef;
use crate::output::{RunOutput, TableData};
use crate::query::*;
use crate::silver::merge::MergeError;

/// Why a gold model has no new table this run (it keeps its last good one):
/// the model's diagnostic, shown next to it.
#[derive(Debug, thiserror::Error)]
pub(crate) enum GoldError {
    /// The SQL does not parse (the parser's message, cleaned).
    #[error("SQL syntax: {0}")]
    Syntax(String),
    /// The model has no statement.
    #[error("the model is empty: write one SELECT query over silver tables")]
    Empty,
    /// Model `model` is one statement, but no query (DDL, DML).
    #[error("gold.{model} must be one SELECT query. Statements that create, change or drop tables are not allowed: a gold model only reads silver.")]
    NotQuery { model: String },
    /// Model `model` has `count` statements.
    #[error("gold.{model} must be one SELECT query, not {count} statements")]
    Statements { model: String, count: usize },
    /// DataFusion cannot plan the query (its message, cleaned).
    #[error("{0}")]
    Plan(String),
    /// Model `model` reads the bronze `tables` (anti-pattern off).
    #[error("gold.{model} reads {}: gold reads silver only. Bronze holds raw, unchecked records (duplicates, rejected rows); build gold from silver. (An instructor can switch on the anti-pattern \"gold reads bronze\" to show what goes wrong.)", .tables.join(", "))]
    ReadsBronze { model: String, tables: Vec<String> },
    /// Model `model` has a column the lake cannot store (`why`).
    #[error("gold.{model}: {why}")]
    Unstorable { model: String, why: String },
    /// A MERGE ON `on` model returns two different rows for key `key`.
    #[error("MERGE ON {}: the query returns different rows for {key}; a MERGE needs one row per key (group by {}, or filter), or the row order would decide which one is written", .on.join(", "), .on.join(", "))]
    ConflictingKey { on: Vec<String>, key: String },
    /// A MERGE ON `on` model cannot be merged into its previous table.
    #[error("MERGE ON {}: {error}", .on.join(", "))]
    Merge {
        on: Vec<String>,
        #[source]
        error: MergeError,
    },
    /// The query was refused or failed (size, parallel plan, rows, a value).
    #[error(transparent)]
    Query(#[from] QueryError),
}

impl From<GoldError> for EngineError {
    fn from(e: GoldError) -> Self {
        EngineError::Request(e.to_string())
    }
}

/// The diagnostic of gold model `model`.
fn gold_diag(model: &str, e: GoldError) -> Diagnostic {
    Diagnostic {
        scope: "gold".into(),
        id: model.to_string(),
        message: e.to_string(),
        table: String::new(),
    }
}

/// Gold models of a run: each model's table (or its error), and the bronze
/// tables models read (only with the anti-pattern on). `previous` holds the
/// tables `merge_on` models merge into. Silver must be registered already.
pub(crate) struct GoldBuild {
    pub tables: Vec<TableData>,
    pub errors: Vec<Diagnostic>,
    pub reads_bronze: BTreeMap<String, Vec<String>>,
    /// Models not run (qualified) because they read a table the run did not
    /// refresh; each has a diagnostic in `errors`.
    pub blocked: Vec<TableName>,
}

/// Runs every gold model over the registered silver tables and registers the
/// results. A model that reads a silver table in `not_refreshed` (names
/// without the layer), or a model blocked before it, is not run: it gets a
/// diagnostic saying which table holds it back, and keeps its last good
/// table (seed 003 §6: independent pipelines, a failure blocks only what
/// depends on it).
pub(crate) async fn build_gold(
    ctx: &SessionContext,
    def: &PipelineDef,
    previous: Option<&RunOutput>,
    progress: crate::progress::Reporter<'_>,
    not_refreshed: &std::collections::HashSet<String>,
    lang: medallion_protocol::request::Lang,
) -> std::result::Result<GoldBuild, Vec<Diagnostic>> {
    let mut tables = Vec::new();
    let mut diagnostics = Vec::new();
    let mut gold_reads_bronze = BTreeMap::new();
    let mut held: Vec<String> = not_refreshed
        .iter()
        .map(|t| TableName::silver(t).to_string())
        .collect();
    let mut blocked = Vec::new();
    for (i, g) in def.gold.iter().enumerate() {
        progress.report(crate::progress::Progress::Model {
            table: TableName::gold(&g.name),
            n: i as u32 + 1,
            of: def.gold.len() as u32,
        });
        // (SQL too long to plan safely is refused by `run_gold`.)
        if !held.is_empty() && check_size(&g.sql, MAX_SQL_TOKENS).is_ok() {
            // A table that was never built does not plan: its name is read from the SQL.
            let reads = match inputs(ctx, &g.sql).await {
                Ok(r) => r,
                Err(_) => named_tables(ctx, &g.sql),
            };
            if let Some(t) = reads.iter().find(|t| held.contains(t)) {
                diagnostics.push(Diagnostic {
                    scope: "gold".into(),
                    id: g.name.clone(),
                    message: crate::api::tr(
                        lang,
                        format!("not refreshed: it reads {t}, which this run could not build; it shows its last good result until a run builds {t}"),
                        format!("не обновлена: читает {t}, которую этот запуск не смог построить; показывает последний успешный результат, пока запуск не построит {t}"),
                    ),
                    table: String::new(),
                });
                held.push(TableName::gold(&g.name).to_string());
                blocked.push(TableName::gold(&g.name));
                continue;
            }
        }
        match run_gold(ctx, &g.name, &g.sql, def.anti_patterns.gold_reads_bronze).await {
            Ok((batch, bronze_read)) => {
                if !bronze_read.is_empty() {
                    gold_reads_bronze.insert(g.name.clone(), bronze_read);
                }
                let batch = if g.merge_on.is_empty() {
                    batch
                } else {
                    // A model whose columns changed starts over from its result.
                    let previous = previous
                        .and_then(|p| p.table(TableName::gold(&g.name)))
                        .filter(|p| p.schema().fields() == batch.schema().fields());
                    // Two different rows for one key: which one is written
                    // would depend on the query's row order.
                    let on = g.merge_on.clone();
                    let conflict = match crate::silver::merge::conflicting_key(&batch, &g.merge_on)
                    {
                        Ok(None) => None,
                        Ok(Some(key)) => Some(GoldError::ConflictingKey { on, key }),
                        Err(error) => Some(GoldError::Merge { on, error }),
                    };
                    if let Some(e) = conflict {
                        diagnostics.push(gold_diag(&g.name, e));
                        continue;
                    }
                    // A query's NULL group is one group: NULL keys match NULL.
                    let spec = crate::silver::merge::MergeSpec {
                        keys: g.merge_on.clone(),
                        null_safe_keys: true,
                        ..Default::default()
                    };
                    let none = BooleanArray::from(vec![false; batch.num_rows()]);
                    match crate::silver::merge::merge(crate::silver::merge::MergeInput {
                        spec: &spec,
                        base: previous,
                        new: &batch,
                        deletes: &none,
                        holds: None,
                    }) {
                        Ok(m) => m.batch,
                        Err(error) => {
                            let on = g.merge_on.clone();
                            diagnostics.push(gold_diag(&g.name, GoldError::Merge { on, error }));
                            continue;
                        }
                    }
                };
                let name = TableName::gold(&g.name);
                if let Err(e) = register_table(ctx, &name, &batch).await {
                    return Err(vec![pipeline_diag(e)]);
                }
                tables.push(TableData { name, batch });
            }
            Err(e) => diagnostics.push(gold_diag(&g.name, e)),
        }
    }
    Ok(GoldBuild {
        tables,
        errors: diagnostics,
        reads_bronze: gold_reads_bronze,
        blocked,
    })
}

/// Plans a gold model's SQL (a query only: no DDL or DML), refuses it if it
/// reads a bronze table, and runs it.
pub(crate) async fn run_gold(
    ctx: &SessionContext,
    name: &str,
    sql: &str,
    allow_bronze: bool,
) -> std::result::Result<(RecordBatch, Vec<String>), GoldError> {
    check_size(sql, MAX_SQL_TOKENS)?;
    let dialect = GenericDialect {};
    let statements = Parser::parse_sql(&dialect, sql)
        .map_err(|e| GoldError::Syntax(clean_datafusion_message(&e.to_string())))?;
    let model = || name.to_string();
    match statements.as_slice() {
        [datafusion::sql::sqlparser::ast::Statement::Query(_)] => {}
        [] => return Err(GoldError::Empty),
        [_] => return Err(GoldError::NotQuery { model: model() }),
        _ => {
            return Err(GoldError::Statements {
                model: model(),
                count: statements.len(),
            })
        }
    }
    let df = ctx
        .sql_with_options(sql, queries_only())
        .await
        .map_err(|e| GoldError::Plan(df_err(e)))?;
    let mut read_bronze: Vec<String> = scanned_tables(df.logical_plan())
        .map_err(|e| GoldError::Plan(df_err(e)))?
        .into_iter()
        .filter(|t| t.starts_with("bronze."))
        .collect();
    if !read_bronze.is_empty() && !allow_bronze {
        read_bronze.sort();
        read_bronze.dedup();
        return Err(GoldError::ReadsBronze {
            model: model(),
            tables: read_bronze,
        });
    }
    read_bronze.sort();
    read_bronze.dedup();
    let batch = collect_single(df, Some(GOLD_MAX_ROWS)).await?;
    if let Some(why) = crate::lake::unstorable_column(&batch.schema()) {
        return Err(GoldError::Unstorable {
            model: model(),
            why,
        });
    }
    Ok((batch, read_bronze))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_conflicting_merge_key_names_the_key_columns_and_values() {
        let e = GoldError::ConflictingKey {
            on: vec!["report_date".into(), "country".into()],
            key: "report_date=2024-01-15, country=DE".into(),
        };
        assert_eq!(
            e.to_string(),
            "MERGE ON report_date, country: the query returns different rows for report_date=2024-01-15, country=DE; a MERGE needs one row per key (group by report_date, country, or filter), or the row order would decide which one is written"
        );
    }
}

/// The columns that name a row of gold model `g`: its `MERGE ON` columns;
/// else the output columns of its GROUP BY (`report_date`, `country` of
/// `SELECT CAST(created_at AS DATE) AS report_date, country, SUM(amount) …
/// GROUP BY 1, 2`); empty when it has neither or does not plan (then every
/// column names the row). The lab matches the two sides' rows on them.
pub async fn key_columns(ctx: &SessionContext, g: &crate::model::GoldModelDef) -> Vec<String> {
    use datafusion::logical_expr::Expr;
    if !g.merge_on.is_empty() {
        return g.merge_on.clone();
    }
    let Ok(df) = ctx.sql(&g.sql).await else {
        return vec![];
    };
    let mut plan = df.logical_plan().clone();
    loop {
        plan = match &plan {
            LogicalPlan::Sort(s) => s.input.as_ref().clone(),
            LogicalPlan::Limit(l) => l.input.as_ref().clone(),
            _ => break,
        };
    }
    let LogicalPlan::Projection(proj) = &plan else {
        return vec![];
    };
    let LogicalPlan::Aggregate(agg) = proj.input.as_ref() else {
        return vec![];
    };
    let group_names: Vec<String> = (0..agg.group_expr.len())
        .map(|i| agg.schema.qualified_field(i).1.name().clone())
        .collect();
    proj.expr
        .iter()
        .zip(proj.schema.fields())
        .filter_map(|(e, f)| {
            let inner = match e {
                Expr::Alias(a) => a.expr.as_ref(),
                other => other,
            };
            match inner {
                Expr::Column(c) if group_names.contains(&c.name) => Some(f.name().clone()),
                _ => None,
            }
        })
        .collect()
}

/// The tables gold model `sql` reads (`silver.orders`, …, sorted, each
/// once, subqueries included), or why it does not plan.
pub async fn inputs(ctx: &SessionContext, sql: &str) -> std::result::Result<Vec<String>, String> {
    let df = ctx
        .sql_with_options(sql, queries_only())
        .await
        .map_err(|e| clean_datafusion_message(&e.to_string()))?;
    let mut tables = scanned_tables(df.logical_plan()).map_err(|e| e.to_string())?;
    tables.sort();
    tables.dedup();
    Ok(tables)
}

/// The tables the SQL names (`silver.orders`; CTEs left out), read from
/// its syntax without planning: empty when it does not parse.
fn named_tables(ctx: &SessionContext, sql: &str) -> Vec<String> {
    let state = ctx.state();
    let dialect = state.config().options().sql_parser.dialect;
    state
        .sql_to_statement(sql, &dialect)
        .and_then(|st| state.resolve_table_references(&st))
        .map(|refs| refs.iter().map(|r| r.to_string()).collect())
        .unwrap_or_default()
}

/// The tables `plan` scans (`schema.table`, subqueries included), in plan order.
fn scanned_tables(plan: &LogicalPlan) -> datafusion::error::Result<Vec<String>> {
    let mut tables = Vec::new();
    plan.apply_with_subqueries(|node| {
        if let LogicalPlan::TableScan(scan) = node {
            tables.push(scan.table_name.to_string());
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    Ok(tables)
}
