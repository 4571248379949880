//! One pipeline run: bronze → silver (+ quarantine) → gold → checks.
//!
//! ```text
//!  bronze.<t> (raw_payload + audit)      parse with declared schema ─┐ rejected → quarantine (rule "parse")
//!        │                                                          ▼
//!        └──────────────────────────────► typed rows ── filters F* ─┤ rejected → quarantine (rule ids)
//!                                                         │
//!                                    normalizations N* (in place)  │
//!                                    enrichments E* (new columns, LEFT JOIN lookups)
//!                                                         ▼
//!                                            silver.<t>  (Parquet)  ──► gold.<m> = SQL over silver
//! ```
//!
//! Each rule runs on the materialized output of the previous one, so an error
//! (syntax, unknown column, type mismatch, runtime failure) is attributed to
//! exactly one rule. A run that has any rule or gold error produces no output:
//! the caller keeps the last good results and shows the errors next to their rules.

use std::collections::BTreeMap;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, BooleanArray, RecordBatch, StringArray};
use datafusion::arrow::compute::{cast, concat_batches, filter_record_batch};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::catalog::MemTable;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::dataframe::DataFrame;
use datafusion::execution::context::SQLOptions;
use datafusion::logical_expr::{Expr, ExprSchemable, JoinType, LogicalPlan};
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::parser::Parser;
use serde::{Deserialize, Serialize};

use crate::bronze::BatchInfo;
use crate::error::{clean_datafusion_message, EngineError, Result};
use crate::model::{PipelineDef, SilverTableDef};
use crate::rules::{Rule, RuleKind};
use crate::source::{parse_bronze, MissingColumn, Parsed, Rejected, LINEAGE_COLUMNS};

/// Columns of `silver.quarantine` (all Utf8, in this order): `rule_id` (one id,
/// or several joined by ", "), `reason` (`F1: fare_amount < 0 (fare_amount = -21.0)`),
/// `raw_payload` (the bronze text), `silver_table`, `_source_file`, `_event_id`,
/// `_batch_id` (lineage back to the bronze row).
pub fn quarantine_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("rule_id", DataType::Utf8, false),
        Field::new("reason", DataType::Utf8, false),
        Field::new("raw_payload", DataType::Utf8, false),
        Field::new("silver_table", DataType::Utf8, false),
        Field::new("_source_file", DataType::Utf8, false),
        Field::new("_event_id", DataType::Utf8, false),
        Field::new("_batch_id", DataType::Utf8, false),
    ]))
}

/// An error attached to the thing that caused it, for display next to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// `rule`, `gold` or `pipeline`.
    pub scope: String,
    /// Rule id or gold model name (empty for `pipeline`).
    pub id: String,
    pub message: String,
}

impl Diagnostic {
    fn rule(id: &str, message: impl Into<String>) -> Self {
        Self {
            scope: "rule".into(),
            id: id.into(),
            message: message.into(),
        }
    }
}

/// What one rule did in the last run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleStat {
    pub rule_id: String,
    pub kind: RuleKind,
    /// Rows the rule saw.
    pub rows_in: usize,
    /// Filter: rows rejected. Normalize: rows whose value changed.
    /// Enrich: rows where the new column is NULL (for a lookup: no match).
    pub affected: usize,
}

/// Output of a table in the run.
#[derive(Debug, Clone)]
pub struct TableData {
    /// Qualified name: `silver.nyc_taxi_yellow`.
    pub name: String,
    pub batch: RecordBatch,
}

/// Everything a successful run produced.
#[derive(Debug, Clone)]
pub struct RunOutput {
    /// `bronze.*`, then silver tables, `silver.quarantine`, then `gold.*`.
    pub tables: Vec<TableData>,
    /// Readable (typed) bronze rows per bronze table, before any rule.
    pub typed_bronze: BTreeMap<String, RecordBatch>,
    pub rule_stats: Vec<RuleStat>,
    /// Declared source columns missing from some batches, per bronze table.
    pub missing_columns: BTreeMap<String, Vec<MissingColumn>>,
    /// Gold models that failed (scope `gold`); their tables are missing from `tables`.
    pub gold_errors: Vec<Diagnostic>,
}

impl RunOutput {
    /// The output table named `name` (qualified).
    pub fn table(&self, name: &str) -> Option<&RecordBatch> {
        self.tables
            .iter()
            .find(|t| t.name == name)
            .map(|t| &t.batch)
    }
}

/// Inputs of a run: the definition, the bronze rows per table, and the context
/// holding the lake (object store registered at [`crate::lake::LAKE_URL`]).
pub struct RunInput<'a> {
    pub ctx: &'a SessionContext,
    pub def: &'a PipelineDef,
    /// Per bronze table (name without layer): its batches with their rows, in ingest order.
    pub bronze: &'a BTreeMap<String, Vec<(BatchInfo, RecordBatch)>>,
    /// An incremental run: only these batches go through the rules, and their
    /// silver and quarantine rows are appended to `base`'s tables.
    pub incremental: Option<Incremental<'a>>,
}

/// What an incremental run starts from (seed 000 §5: only batches past the watermark).
pub struct Incremental<'a> {
    /// `_batch_id`s past the watermark.
    pub new_batches: &'a std::collections::HashSet<String>,
    /// The current silver and quarantine tables, to append to.
    pub base: &'a RunOutput,
}

/// Runs silver and gold. Returns the output tables (written to the lake), or
/// every rule / pipeline diagnostic found if silver could not be built. Gold
/// model errors do not fail the run: they are in [`RunOutput::gold_errors`].
pub async fn run(input: RunInput<'_>) -> std::result::Result<RunOutput, Vec<Diagnostic>> {
    let ctx = input.ctx;
    let def = input.def;
    let mut diagnostics = Vec::new();
    let mut tables = Vec::new();
    let mut typed_bronze = BTreeMap::new();
    let mut missing_columns = BTreeMap::new();
    let mut parsed_tables: BTreeMap<String, Parsed> = BTreeMap::new();

    for b in &def.bronze {
        let batches = input.bronze.get(&b.name).map(Vec::as_slice).unwrap_or(&[]);
        let rows: Vec<RecordBatch> = batches.iter().map(|(_, rb)| rb.clone()).collect();
        let all =
            concat_batches(&b.arrow_schema(), &rows).map_err(|e| vec![pipeline_diag(e.into())])?;
        tables.push(TableData {
            name: format!("bronze.{}", b.name),
            batch: all,
        });
        let parsed = parse_bronze(&b.schema, batches).map_err(|e| vec![pipeline_diag(e)])?;
        typed_bronze.insert(b.name.clone(), parsed.rows.clone());
        if !parsed.missing.is_empty() {
            missing_columns.insert(b.name.clone(), parsed.missing.clone());
        }
        parsed_tables.insert(b.name.clone(), parsed);
    }

    let mut quarantine: Vec<(String, Rejected)> = Vec::new();
    let mut rule_stats = Vec::new();
    let mut silver_out = Vec::new();
    for s in &def.silver {
        // An incremental run reads only the new batches of the silver table's
        // own source; lookups still see their whole bronze table.
        let filtered = match (&input.incremental, def.bronze_table(&s.source)) {
            (Some(inc), Some(b)) => {
                let batches: Vec<(BatchInfo, RecordBatch)> = input
                    .bronze
                    .get(&s.source)
                    .map(|v| {
                        v.iter()
                            .filter(|(i, _)| inc.new_batches.contains(&i.batch_id))
                            .cloned()
                            .collect()
                    })
                    .unwrap_or_default();
                Some(parse_bronze(&b.schema, &batches).map_err(|e| vec![pipeline_diag(e)])?)
            }
            _ => None,
        };
        let Some(parsed) = filtered.as_ref().or_else(|| parsed_tables.get(&s.source)) else {
            diagnostics.push(Diagnostic {
                scope: "pipeline".into(),
                id: s.name.clone(),
                message: format!(
                    "silver.{} reads bronze.{}, which does not exist",
                    s.name, s.source
                ),
            });
            continue;
        };
        for r in &parsed.rejected {
            let mut r = r.clone();
            r.reason = format!("{}: {}", r.rule_id, r.reason);
            quarantine.push((s.name.clone(), r));
        }
        match build_silver(ctx, s, parsed, &parsed_tables, &mut rule_stats).await {
            Ok((batch, rejected)) => {
                quarantine.extend(rejected.into_iter().map(|r| (s.name.clone(), r)));
                silver_out.push(TableData {
                    name: format!("silver.{}", s.name),
                    batch,
                });
            }
            Err(mut d) => diagnostics.append(&mut d),
        }
    }
    if !diagnostics.is_empty() {
        return Err(diagnostics);
    }
    tables.extend(silver_out);
    tables.push(TableData {
        name: "silver.quarantine".into(),
        batch: quarantine_batch(&quarantine).map_err(|e| vec![pipeline_diag(e)])?,
    });
    if let Some(inc) = &input.incremental {
        for t in tables.iter_mut().filter(|t| t.name.starts_with("silver.")) {
            if let Some(old) = inc.base.table(&t.name) {
                t.batch = append_rows(&t.name, old, &t.batch).map_err(|e| vec![e])?;
            }
        }
    }

    // Silver goes to the lake before gold runs: gold reads silver's Parquet files.
    // (Bronze files are written and registered at ingest.)
    for t in tables.iter().filter(|t| !t.name.starts_with("bronze.")) {
        if let Err(e) = register_table(ctx, &t.name, &t.batch).await {
            return Err(vec![pipeline_diag(e)]);
        }
    }
    for g in &def.gold {
        match run_gold(ctx, &g.name, &g.sql).await {
            Ok(batch) => {
                let name = format!("gold.{}", g.name);
                if let Err(e) = register_table(ctx, &name, &batch).await {
                    return Err(vec![pipeline_diag(e)]);
                }
                tables.push(TableData { name, batch });
            }
            Err(message) => diagnostics.push(Diagnostic {
                scope: "gold".into(),
                id: g.name.clone(),
                message,
            }),
        }
    }
    // A broken gold model does not hold silver back: silver, quarantine and the
    // other models are fresh; the caller keeps that model's last good table.
    Ok(RunOutput {
        tables,
        typed_bronze,
        rule_stats,
        missing_columns,
        gold_errors: diagnostics,
    })
}

/// `old` rows then `new` rows; refused when the rules changed the table's columns.
fn append_rows(
    name: &str,
    old: &RecordBatch,
    new: &RecordBatch,
) -> std::result::Result<RecordBatch, Diagnostic> {
    if old.schema().fields() != new.schema().fields() {
        let names = |b: &RecordBatch| {
            b.schema()
                .fields()
                .iter()
                .map(|f| format!("{} {}", f.name(), f.data_type()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(Diagnostic {
            scope: "pipeline".into(),
            id: String::new(),
            message: format!(
                "an incremental run cannot append to {name}: the rules changed its columns (now: {}; before: {}). Run a full refresh to rebuild it from bronze.",
                names(new),
                names(old)
            ),
        });
    }
    concat_batches(&old.schema(), [old, new]).map_err(|e| pipeline_diag(e.into()))
}

fn pipeline_diag(e: EngineError) -> Diagnostic {
    Diagnostic {
        scope: "pipeline".into(),
        id: String::new(),
        message: e.to_string(),
    }
}

/// `(silver table, rejected row)` pairs as a `silver.quarantine` batch.
fn quarantine_batch(rows: &[(String, Rejected)]) -> Result<RecordBatch> {
    let col = |f: &dyn Fn(&(String, Rejected)) -> &str| -> ArrayRef {
        Arc::new(StringArray::from_iter_values(rows.iter().map(f)))
    };
    Ok(RecordBatch::try_new(
        quarantine_schema(),
        vec![
            col(&|(_, r)| &r.rule_id),
            col(&|(_, r)| &r.reason),
            col(&|(_, r)| &r.raw_payload),
            col(&|(t, _)| t),
            col(&|(_, r)| &r.source_file),
            col(&|(_, r)| &r.event_id),
            col(&|(_, r)| &r.batch_id),
        ],
    )?)
}

/// Writes `batch` as the single Parquet file of table `name` and (re)registers
/// the table with DataFusion as a Parquet listing table over that folder.
pub async fn register_table(ctx: &SessionContext, name: &str, batch: &RecordBatch) -> Result<()> {
    let (layer, table) = name
        .split_once('.')
        .ok_or_else(|| EngineError::Internal(format!("unqualified table {name}")))?;
    let dir = crate::lake::Lake::table_dir(layer, table);
    let store = lake_of(ctx)?;
    if layer != "bronze" {
        store.clear_dir(&dir).await?;
        store
            .write_parquet(
                &format!("{dir}/part-000001.parquet"),
                batch.schema(),
                std::slice::from_ref(batch),
            )
            .await?;
    }
    ctx.deregister_table(name)?;
    ctx.register_parquet(
        name,
        &format!("{}{dir}/", crate::lake::LAKE_URL),
        Default::default(),
    )
    .await?;
    Ok(())
}

fn lake_of(ctx: &SessionContext) -> Result<crate::lake::Lake> {
    let url = datafusion::execution::object_store::ObjectStoreUrl::parse(crate::lake::LAKE_URL)?;
    let store = ctx.runtime_env().object_store(&url)?;
    Ok(crate::lake::Lake::from_store(store))
}

/// Most rows a gold model may produce. A gold table is an aggregate for
/// people to read; a query that explodes (a cross join) stops here instead of
/// exhausting the tab's memory.
pub const GOLD_MAX_ROWS: usize = 100_000;

/// Why a query was not run or stopped early.
#[derive(Debug)]
pub(crate) enum CollectError {
    /// DataFusion or Arrow error, cleaned for display.
    Query(String),
    /// The plan needs several partitions (threads), which the browser lacks.
    Parallel(String),
    /// More than the allowed rows; carries the limit.
    TooManyRows(usize),
}

impl std::fmt::Display for CollectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CollectError::Query(m) => write!(f, "{m}"),
            CollectError::Parallel(node) => write!(
                f,
                "this query would run in several parallel parts ({node}), which the in-browser engine cannot do (a browser tab has no threads for it). UNION / UNION ALL is the usual cause: write it without UNION."
            ),
            CollectError::TooManyRows(n) => write!(f, "the result has more than {n} rows; stopped. Aggregate (GROUP BY) or add a LIMIT."),
        }
    }
}

impl From<CollectError> for String {
    fn from(e: CollectError) -> String {
        e.to_string()
    }
}

/// First operator of `plan` (depth first) that produces more than one
/// partition. Running such a plan spawns tasks, which panics in a browser.
fn parallel_node(plan: &Arc<dyn datafusion::physical_plan::ExecutionPlan>) -> Option<String> {
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
) -> std::result::Result<RecordBatch, CollectError> {
    use futures::StreamExt;
    let task_ctx = Arc::new(df.task_ctx());
    let plan = df
        .create_physical_plan()
        .await
        .map_err(|e| CollectError::Query(df_err(e)))?;
    if let Some(node) = parallel_node(&plan) {
        return Err(CollectError::Parallel(node));
    }
    let schema = plan.schema();
    let mut stream = plan
        .execute(0, task_ctx)
        .map_err(|e| CollectError::Query(df_err(e)))?;
    let mut batches = Vec::new();
    let mut rows = 0;
    while let Some(batch) = stream.next().await {
        let batch = batch.map_err(|e| CollectError::Query(df_err(e)))?;
        rows += batch.num_rows();
        if max_rows.is_some_and(|m| rows > m) {
            return Err(CollectError::TooManyRows(max_rows.unwrap_or_default()));
        }
        batches.push(batch);
    }
    concat_batches(&schema, &batches).map_err(|e| CollectError::Query(e.to_string()))
}

async fn collect_one(df: DataFrame) -> std::result::Result<RecordBatch, String> {
    Ok(collect_single(df, None).await?)
}

fn read_batch(ctx: &SessionContext, batch: &RecordBatch) -> Result<DataFrame> {
    let table = MemTable::try_new(batch.schema(), vec![vec![batch.clone()]])?;
    Ok(ctx.read_table(Arc::new(table))?)
}

fn df_err(e: datafusion::error::DataFusionError) -> String {
    clean_datafusion_message(&e.to_string())
}

/// Filters, then normalizations, then enrichments, for one silver table.
/// Returns silver's rows and the rows the filters rejected.
async fn build_silver(
    ctx: &SessionContext,
    def: &SilverTableDef,
    parsed: &Parsed,
    all_parsed: &BTreeMap<String, Parsed>,
    stats: &mut Vec<RuleStat>,
) -> std::result::Result<(RecordBatch, Vec<Rejected>), Vec<Diagnostic>> {
    let mut diags = Vec::new();
    for id in def.rules.duplicate_ids() {
        diags.push(Diagnostic::rule(
            &id,
            format!("rule id {id} is used more than once; ids must be unique"),
        ));
    }
    let typed = parsed.rows.clone();
    let typed_df = read_batch(ctx, &typed).map_err(|e| vec![pipeline_diag(e)])?;

    // Filters: each evaluated on the typed rows; a row is rejected by every filter that is TRUE for it.
    let mut reject_by: Vec<Vec<String>> = vec![Vec::new(); typed.num_rows()];
    for rule in def
        .rules
        .rules
        .iter()
        .filter(|r| r.enabled && r.kind == RuleKind::Filter)
    {
        if let Err(m) = rule.check_params().and_then(|_| check_rule_size(rule)) {
            diags.push(Diagnostic::rule(&rule.id, m));
            continue;
        }
        match eval_filter(&typed_df, rule).await {
            Ok((flags, cols)) => {
                let mut n = 0;
                for (row, reasons) in reject_by.iter_mut().enumerate() {
                    if flags.is_valid(row) && flags.value(row) {
                        n += 1;
                        reasons.push(format!(
                            "{}: {}{}",
                            rule.id,
                            rule.resolved_expression(),
                            describe_values(&typed, &cols, row)
                        ));
                    }
                }
                stats.push(RuleStat {
                    rule_id: rule.id.clone(),
                    kind: rule.kind,
                    rows_in: typed.num_rows(),
                    affected: n,
                });
            }
            Err(m) => diags.push(Diagnostic::rule(&rule.id, m)),
        }
    }
    let mut rejected = Vec::new();
    let lineage = |name: &str| {
        typed
            .column_by_name(name)
            .and_then(|c| c.as_any().downcast_ref::<StringArray>().cloned())
    };
    let (Some(ev), Some(ba), Some(fi), Some(raw)) = (
        lineage("_event_id"),
        lineage("_batch_id"),
        lineage("_source_file"),
        lineage("raw_payload"),
    ) else {
        return Err(vec![pipeline_diag(EngineError::Internal(
            "lineage columns missing".into(),
        ))]);
    };
    for (row, reasons) in reject_by.iter().enumerate() {
        if !reasons.is_empty() {
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
                reason: reasons.join("; "),
            });
        }
    }
    let keep = BooleanArray::from(reject_by.iter().map(|r| r.is_empty()).collect::<Vec<_>>());
    let mut current =
        filter_record_batch(&typed, &keep).map_err(|e| vec![pipeline_diag(e.into())])?;

    // Normalizations and enrichments: each on the materialized output of the previous rule.
    for rule in def
        .rules
        .in_execution_order()
        .into_iter()
        .filter(|r| r.enabled && r.kind != RuleKind::Filter)
    {
        if let Err(m) = rule.check_params().and_then(|_| check_rule_size(rule)) {
            diags.push(Diagnostic::rule(&rule.id, m));
            continue;
        }
        let result = match (&rule.kind, &rule.lookup) {
            (RuleKind::Normalize, _) => normalize(ctx, &current, rule).await,
            (RuleKind::Enrich, None) => enrich_computed(ctx, &current, rule).await,
            (RuleKind::Enrich, Some(_)) => enrich_lookup(ctx, &current, rule, all_parsed).await,
            (RuleKind::Filter, _) => continue,
        };
        match result {
            Ok((next, affected)) => {
                stats.push(RuleStat {
                    rule_id: rule.id.clone(),
                    kind: rule.kind,
                    rows_in: current.num_rows(),
                    affected,
                });
                current = next;
            }
            Err(m) => diags.push(Diagnostic::rule(&rule.id, m)),
        }
    }
    if !diags.is_empty() {
        return Err(diags);
    }

    // Silver's columns: everything but the bronze text, with the lineage ids last.
    let schema = current.schema();
    let mut order: Vec<usize> = (0..schema.fields().len())
        .filter(|&i| !LINEAGE_COLUMNS.contains(&schema.field(i).name().as_str()))
        .collect();
    for name in ["_event_id", "_batch_id"] {
        if let Ok(i) = schema.index_of(name) {
            order.push(i);
        }
    }
    let silver = current
        .project(&order)
        .map_err(|e| vec![pipeline_diag(e.into())])?;
    Ok((silver, rejected))
}

fn check_rule_size(rule: &Rule) -> std::result::Result<(), String> {
    check_size(&rule.resolved_expression(), MAX_EXPRESSION_TOKENS)?;
    match &rule.lookup {
        Some(l) => check_size(&l.on, MAX_EXPRESSION_TOKENS),
        None => Ok(()),
    }
}

/// " (fare_amount = -21, total_amount = -24.8)" for the columns a rule reads.
fn describe_values(batch: &RecordBatch, cols: &[String], row: usize) -> String {
    let opts = FormatOptions::default()
        .with_null("NULL")
        .with_timestamp_format(Some("%Y-%m-%d %H:%M:%S%.f"));
    let parts: Vec<String> = cols
        .iter()
        .filter_map(|c| {
            let arr = batch.column_by_name(c)?;
            let f = ArrayFormatter::try_new(arr.as_ref(), &opts).ok()?;
            Some(format!("{c} = {}", f.value(row)))
        })
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}

fn check_target_column(rule: &Rule, name: &str) -> std::result::Result<(), String> {
    if name.contains(',') {
        return Err(format!(
            "{name:?} is several names; a {} rule works on one column (a lookup enrichment can add several)",
            rule.kind.as_str()
        ));
    }
    if LINEAGE_COLUMNS.contains(&name) {
        return Err(format!(
            "{name} is a lineage column from bronze; rules cannot change it"
        ));
    }
    if name.is_empty() {
        return Err(format!("{} needs a column name", rule.kind.as_str()));
    }
    Ok(())
}

/// Rows of `batch` where the SQL `predicate` is TRUE (FALSE and NULL are not
/// matches). Used by the right-to-be-forgotten delete on bronze.
pub(crate) async fn predicate_mask(
    ctx: &SessionContext,
    batch: &RecordBatch,
    predicate: &str,
) -> std::result::Result<BooleanArray, String> {
    check_size(predicate, MAX_EXPRESSION_TOKENS)?;
    let df = read_batch(ctx, batch).map_err(|e| e.to_string())?;
    let expr = df.parse_sql_expr(predicate).map_err(df_err)?;
    let ty = expr.get_type(df.schema()).map_err(df_err)?;
    if ty != DataType::Boolean && ty != DataType::Null {
        return Err(format!(
            "the condition must be TRUE or FALSE for each row, but this expression gives {ty}"
        ));
    }
    let out = collect_one(
        df.select(vec![expr.is_true().alias("__match")])
            .map_err(df_err)?,
    )
    .await?;
    out.column(0)
        .as_any()
        .downcast_ref::<BooleanArray>()
        .cloned()
        .ok_or_else(|| "the condition did not produce a boolean".to_string())
}

/// Evaluates a filter's predicate per row. Returns TRUE = reject, and the
/// columns the predicate reads (for the quarantine reason).
async fn eval_filter(
    df: &DataFrame,
    rule: &Rule,
) -> std::result::Result<(BooleanArray, Vec<String>), String> {
    let expr = df
        .parse_sql_expr(&rule.resolved_expression())
        .map_err(df_err)?;
    let ty = expr.get_type(df.schema()).map_err(df_err)?;
    if ty != DataType::Boolean && ty != DataType::Null {
        return Err(format!("a filter must be a condition (TRUE = send the row to quarantine), but this expression gives {ty}"));
    }
    let mut cols: Vec<String> = expr
        .column_refs()
        .into_iter()
        .map(|c| c.name.clone())
        .collect();
    cols.sort();
    cols.dedup();
    let out = collect_one(
        df.clone()
            .select(vec![expr.is_true().alias("__reject")])
            .map_err(df_err)?,
    )
    .await?;
    let flags = out
        .column(0)
        .as_any()
        .downcast_ref::<BooleanArray>()
        .cloned()
        .ok_or_else(|| "filter did not produce a boolean".to_string())?;
    Ok((flags, cols))
}

/// Replaces an existing column with the expression's value. Returns the new
/// rows and how many values changed.
async fn normalize(
    ctx: &SessionContext,
    input: &RecordBatch,
    rule: &Rule,
) -> std::result::Result<(RecordBatch, usize), String> {
    let column = rule.column.trim();
    check_target_column(rule, column)?;
    let Ok(old_index) = input.schema().index_of(column) else {
        return Err(format!(
            "column {column} does not exist here, so it cannot be normalized (use an enrich rule to add a new column)"
        ));
    };
    let df = read_batch(ctx, input).map_err(|e| e.to_string())?;
    let expr = df
        .parse_sql_expr(&rule.resolved_expression())
        .map_err(df_err)?;
    let out = collect_one(df.with_column(column, expr).map_err(df_err)?).await?;
    let new_index = out.schema().index_of(column).map_err(|e| e.to_string())?;
    Ok((
        out.clone(),
        changed_values(input.column(old_index), out.column(new_index)),
    ))
}

/// Values that differ, comparing in the old column's type (so 1.5 → 1 counts as a change).
fn changed_values(old: &ArrayRef, new: &ArrayRef) -> usize {
    match cast(new, old.data_type())
        .and_then(|n| datafusion::arrow::compute::kernels::cmp::distinct(old, &n))
    {
        Ok(d) => d.iter().filter(|v| v == &Some(true)).count(),
        Err(_) => old.len(),
    }
}

/// Adds a computed column. Returns the new rows and how many are NULL in it.
async fn enrich_computed(
    ctx: &SessionContext,
    input: &RecordBatch,
    rule: &Rule,
) -> std::result::Result<(RecordBatch, usize), String> {
    let column = rule.column.trim();
    check_target_column(rule, column)?;
    if input.schema().index_of(column).is_ok() {
        return Err(format!(
            "column {column} already exists (use a normalize rule to change it)"
        ));
    }
    let df = read_batch(ctx, input).map_err(|e| e.to_string())?;
    let expr = df
        .parse_sql_expr(&rule.resolved_expression())
        .map_err(df_err)?;
    let out = collect_one(df.with_column(column, expr).map_err(df_err)?).await?;
    let nulls = out
        .column_by_name(column)
        .map(|c| c.null_count())
        .unwrap_or(0);
    Ok((out, nulls))
}

/// Splits "pu.borough, upper(pu.zone)" into SQL expressions with the SQL parser.
fn split_expressions(text: &str) -> std::result::Result<Vec<String>, String> {
    let dialect = GenericDialect {};
    let mut parser = Parser::new(&dialect)
        .try_with_sql(text)
        .map_err(|e| e.to_string())?;
    let exprs = parser
        .parse_comma_separated(Parser::parse_expr)
        .map_err(|e| e.to_string())?;
    Ok(exprs.into_iter().map(|e| e.to_string()).collect())
}

/// LEFT JOIN with a lookup table, then adds the rule's output columns.
/// Returns the new rows and how many rows found no match. Fails when the
/// join would change the number of rows (lookup key not unique).
async fn enrich_lookup(
    ctx: &SessionContext,
    input: &RecordBatch,
    rule: &Rule,
    all_parsed: &BTreeMap<String, Parsed>,
) -> std::result::Result<(RecordBatch, usize), String> {
    let lookup = rule.lookup.as_ref().ok_or("no lookup")?;
    let outputs = rule.output_columns();
    if outputs.is_empty() {
        return Err(
            "name the new column(s) this lookup adds, e.g. pickup_borough, pickup_zone".into(),
        );
    }
    for c in &outputs {
        check_target_column(rule, c)?;
        if input.schema().index_of(c).is_ok() {
            return Err(format!(
                "column {c} already exists (use a normalize rule to change it)"
            ));
        }
    }
    let exprs = split_expressions(&rule.resolved_expression())?;
    if exprs.len() != outputs.len() {
        return Err(format!(
            "{} output column(s) but {} expression(s): give one expression per column, in the same order",
            outputs.len(),
            exprs.len()
        ));
    }
    let table = lookup
        .table
        .strip_prefix("bronze.")
        .unwrap_or(&lookup.table);
    let parsed = all_parsed.get(table).ok_or_else(|| {
        format!(
            "lookup table {} does not exist (bronze tables: {})",
            lookup.table,
            all_parsed
                .keys()
                .map(|k| format!("bronze.{k}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })?;
    // Only the lookup's own columns take part (not its lineage columns).
    let schema = parsed.rows.schema();
    let own: Vec<usize> = (0..schema.fields().len())
        .filter(|&i| !LINEAGE_COLUMNS.contains(&schema.field(i).name().as_str()))
        .collect();
    let lookup_rows = parsed.rows.project(&own).map_err(|e| e.to_string())?;

    let left = read_batch(ctx, input).map_err(|e| e.to_string())?;
    let left_cols: Vec<Expr> = left
        .schema()
        .columns()
        .into_iter()
        .map(Expr::Column)
        .collect();
    let right = read_batch(ctx, &lookup_rows)
        .map_err(|e| e.to_string())?
        .alias(&lookup.alias)
        .map_err(df_err)?;
    let both = left.schema().join(right.schema()).map_err(df_err)?;
    let on = ctx
        .state()
        .create_logical_expr(&lookup.on, &both)
        .map_err(|e| format!("join condition: {}", df_err(e)))?;
    let joined = left
        .join_on(right, JoinType::Left, vec![on])
        .map_err(df_err)?;
    let mut select = left_cols;
    for (c, e) in outputs.iter().zip(&exprs) {
        let expr = joined.parse_sql_expr(e).map_err(df_err)?;
        select.push(expr.alias(c));
    }
    let not_unique = |got: String| {
        format!(
            "the join changed the row count from {} to {got}: the lookup key is not unique in {}. Bronze appends every file, so a lookup dropped twice holds every key twice; start over with \"Reload example\".",
            input.num_rows(),
            lookup.table
        )
    };
    let out = match collect_single(
        joined.select(select).map_err(df_err)?,
        Some(input.num_rows()),
    )
    .await
    {
        Ok(out) => out,
        Err(CollectError::TooManyRows(n)) => return Err(not_unique(format!("more than {n}"))),
        Err(e) => return Err(e.into()),
    };
    if out.num_rows() != input.num_rows() {
        return Err(not_unique(out.num_rows().to_string()));
    }
    let unmatched = out
        .column_by_name(&outputs[0])
        .map(|c| c.null_count())
        .unwrap_or(0);
    Ok((out, unmatched))
}

/// Plans a gold model's SQL (a query only: no DDL or DML), refuses it if it
/// reads a bronze table, and runs it.
/// Most SQL tokens in a gold model / a rule expression. DataFusion walks
/// expression trees recursively, and a browser's WebAssembly stack is small:
/// a sum of a thousand terms overflows it and kills the module. Far above
/// anything a readable model needs.
pub const MAX_SQL_TOKENS: usize = 800;
/// See [`MAX_SQL_TOKENS`]; for one rule expression.
pub const MAX_EXPRESSION_TOKENS: usize = 300;

/// Refuses SQL longer than `limit` tokens (whitespace and comments not counted).
pub(crate) fn check_size(sql: &str, limit: usize) -> std::result::Result<(), String> {
    use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};
    let dialect = GenericDialect {};
    let tokens = Tokenizer::new(&dialect, sql)
        .tokenize()
        .map_err(|e| format!("SQL syntax: {e}"))?;
    let n = tokens
        .iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .count();
    if n > limit {
        return Err(format!(
            "this SQL has {n} tokens; the in-browser engine takes at most {limit} here (very long expressions overflow its stack). Split it up or simplify it."
        ));
    }
    Ok(())
}

async fn run_gold(
    ctx: &SessionContext,
    name: &str,
    sql: &str,
) -> std::result::Result<RecordBatch, String> {
    check_size(sql, MAX_SQL_TOKENS)?;
    let dialect = GenericDialect {};
    let statements = Parser::parse_sql(&dialect, sql)
        .map_err(|e| format!("SQL syntax: {}", clean_datafusion_message(&e.to_string())))?;
    match statements.as_slice() {
        [datafusion::sql::sqlparser::ast::Statement::Query(_)] => {}
        [] => return Err("the model is empty: write one SELECT query over silver tables".into()),
        [_] => {
            return Err(format!(
                "gold.{name} must be one SELECT query. Statements that create, change or drop tables are not allowed: a gold model only reads silver."
            ))
        }
        _ => return Err(format!("gold.{name} must be one SELECT query, not {} statements", statements.len())),
    }
    let opts = SQLOptions::new()
        .with_allow_ddl(false)
        .with_allow_dml(false)
        .with_allow_statements(false);
    let df = ctx.sql_with_options(sql, opts).await.map_err(df_err)?;
    let mut read_bronze = Vec::new();
    df.logical_plan()
        .apply_with_subqueries(|node| {
            if let LogicalPlan::TableScan(scan) = node {
                if scan.table_name.schema() == Some("bronze") {
                    read_bronze.push(scan.table_name.to_string());
                }
            }
            Ok(TreeNodeRecursion::Continue)
        })
        .map_err(df_err)?;
    if !read_bronze.is_empty() {
        read_bronze.sort();
        read_bronze.dedup();
        return Err(format!(
            "gold.{name} reads {}: gold reads silver only. Bronze holds raw, unchecked records (duplicates, rejected rows); build gold from silver.",
            read_bronze.join(", ")
        ));
    }
    Ok(collect_single(df, Some(GOLD_MAX_ROWS)).await?)
}
