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
use datafusion::logical_expr::{Expr, JoinType, LogicalPlan};
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::parser::Parser;
use serde::{Deserialize, Serialize};

use crate::bronze::BatchInfo;
use crate::error::{clean_datafusion_message, EngineError, Result};
use crate::model::{PipelineDef, SilverTableDef};
use crate::rules::{Action, Rule, RuleKind};
use crate::source::{parse_bronze, MissingColumn, Parsed, ReadAsUtc, Rejected, LINEAGE_COLUMNS};

pub use medallion_protocol::lineage::TraceEntry;
pub use medallion_protocol::rules::RuleStat;

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

/// An error attached to the thing that caused it, for display next to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// `rule`, `gold` or `pipeline`.
    pub scope: String,
    /// Rule id or gold model name (empty for `pipeline`).
    pub id: String,
    pub message: String,
    /// For a rule: its silver table (name without the layer); rule ids are
    /// unique per table only.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub table: String,
}

impl Diagnostic {
    fn rule(id: &str, message: impl Into<String>) -> Self {
        Self {
            scope: "rule".into(),
            id: id.into(),
            message: message.into(),
            table: String::new(),
        }
    }
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
    /// TIMESTAMP source columns without a declared zone whose values had no
    /// offset and were taken as UTC, per bronze table (name without layer).
    pub read_as_utc: BTreeMap<String, Vec<ReadAsUtc>>,
    /// Gold models that failed (scope `gold`); their tables are missing from `tables`.
    pub gold_errors: Vec<Diagnostic>,
    /// Per silver table (qualified): rows that passed the rules but are not
    /// rows of the table (duplicates, superseded states, deletes), counted
    /// over every run that built the current table.
    pub removed: BTreeMap<String, usize>,
    /// Per silver table (qualified): this run's rows removed by the merge, for the row trail.
    pub merge_log: BTreeMap<String, Vec<crate::merge::RemovedRow>>,
    /// Per merged silver table (qualified): what has been merged into it,
    /// so an incremental run can tell whether merging its new rows into the
    /// current table gives what a full refresh would (see [`crate::merge::MergeState`]).
    pub merge_state: BTreeMap<String, crate::merge::MergeState>,
    /// What the run wants the user to know, e.g. that an incremental run
    /// rebuilt a merged table from all of bronze (and why).
    pub notes: Vec<String>,
    /// Gold models (name without the layer) that read bronze tables: only
    /// with the "gold reads bronze" anti-pattern on.
    pub gold_reads_bronze: BTreeMap<String, Vec<String>>,
    /// Per child silver table (qualified; one with an `explode`): what its
    /// explode read, counted over every run that built the current table.
    pub exploded: BTreeMap<String, crate::explode::ExplodeStats>,
    /// Per bronze table (qualified): records of batches read again with
    /// other options (`BatchInfo::superseded_by`), which silver does not read.
    pub superseded: BTreeMap<String, usize>,
    /// Per child silver table (qualified; one with an `explode`): its
    /// element TIMESTAMP columns (no declared zone) whose values had no
    /// offset and were taken as UTC, counted over every run that built the
    /// current table, as [`RunOutput::read_as_utc`] counts source columns.
    pub exploded_read_as_utc: BTreeMap<String, Vec<ReadAsUtc>>,
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
    /// Number of this run (`run_id` of the quarantine rows it adds).
    pub run_id: u64,
    /// The last successful run's output: the quarantine history to append
    /// to, and the base an incremental run merges into.
    pub previous: Option<&'a RunOutput>,
    /// An incremental run: only these batches (`_batch_id`s past the
    /// watermark, seed 000 §5) go through the rules, and their rows are
    /// appended / merged into `previous`'s silver tables.
    pub new_batches: Option<&'a std::collections::HashSet<String>>,
    /// Hears which rule and which gold model the run is at.
    pub progress: crate::progress::Reporter<'a>,
}

/// Runs silver and gold. Returns the output tables (written to the lake), or
/// every rule / pipeline diagnostic found if silver could not be built. Gold
/// model errors do not fail the run: they are in [`RunOutput::gold_errors`].
pub async fn run(input: RunInput<'_>) -> std::result::Result<RunOutput, Vec<Diagnostic>> {
    let ctx = input.ctx;
    let def = input.def;
    let incremental = match (input.new_batches, input.previous) {
        (Some(new), Some(base)) => Some((new, base)),
        _ => None,
    };
    let mut diagnostics = Vec::new();
    let mut tables = Vec::new();
    let mut typed_bronze = BTreeMap::new();
    let mut missing_columns = BTreeMap::new();
    let mut read_as_utc = BTreeMap::new();
    let mut parsed_tables: BTreeMap<String, Parsed> = BTreeMap::new();
    let mut superseded = BTreeMap::new();

    for b in &def.bronze {
        let all_batches = input.bronze.get(&b.name).map(Vec::as_slice).unwrap_or(&[]);
        let rows: Vec<RecordBatch> = all_batches.iter().map(|(_, rb)| rb.clone()).collect();
        // Silver reads a file's latest read only (see `BatchInfo::superseded_by`).
        let batches: Vec<(BatchInfo, RecordBatch)> = all_batches
            .iter()
            .filter(|(i, _)| live(i))
            .cloned()
            .collect();
        let set_aside: usize = all_batches
            .iter()
            .filter(|(i, _)| !live(i))
            .map(|(_, rb)| rb.num_rows())
            .sum();
        if set_aside > 0 {
            superseded.insert(format!("bronze.{}", b.name), set_aside);
        }
        let batches = batches.as_slice();
        let all = concat_batches(&crate::bronze::table_schema(b), &rows)
            .map_err(|e| vec![pipeline_diag(e.into())])?;
        tables.push(TableData {
            name: format!("bronze.{}", b.name),
            batch: all,
        });
        let parsed = parse_bronze(&b.schema, batches).map_err(|e| vec![pipeline_diag(e)])?;
        typed_bronze.insert(b.name.clone(), parsed.rows.clone());
        if !parsed.missing.is_empty() {
            missing_columns.insert(b.name.clone(), parsed.missing.clone());
        }
        if !parsed.read_as_utc.is_empty() {
            read_as_utc.insert(b.name.clone(), parsed.read_as_utc.clone());
        }
        parsed_tables.insert(b.name.clone(), parsed);
    }

    let mut quarantine: Vec<(String, Rejected)> = Vec::new();
    let mut rule_stats = Vec::new();
    let mut silver_out = Vec::new();
    let mut removed = BTreeMap::new();
    let mut merge_log = BTreeMap::new();
    let mut merge_state = BTreeMap::new();
    let mut notes = Vec::new();
    // Silver tables an incremental run rebuilt from all of their bronze.
    let mut rebuilt = std::collections::HashSet::new();
    let mut silver_done: BTreeMap<String, RecordBatch> = BTreeMap::new();
    let mut exploded_stats = BTreeMap::new();
    let mut exploded_read_as_utc = BTreeMap::new();
    for s in &def.silver {
        // A child table reads an array of each record instead (crate::explode).
        let exploded = if s.explode.is_some() {
            let batches: Vec<(BatchInfo, RecordBatch)> = input
                .bronze
                .get(&s.source)
                .map(|v| {
                    v.iter()
                        .filter(|(i, _)| {
                            live(i) && incremental.is_none_or(|(new, _)| new.contains(&i.batch_id))
                        })
                        .cloned()
                        .collect()
                })
                .unwrap_or_default();
            match crate::explode::for_silver(s, def.bronze_table(&s.source), &batches) {
                Some(Ok(e)) => Some(e),
                Some(Err(message)) => {
                    diagnostics.push(Diagnostic {
                        scope: "pipeline".into(),
                        id: s.name.clone(),
                        message,
                        table: String::new(),
                    });
                    continue;
                }
                None => None,
            }
        } else {
            None
        };
        // An incremental run reads only the new batches of the silver table's
        // own source; lookups still see their whole bronze table.
        let filtered = match (&incremental, def.bronze_table(&s.source)) {
            _ if exploded.is_some() => None,
            (Some((new_batches, _)), Some(b)) => {
                let batches: Vec<(BatchInfo, RecordBatch)> = input
                    .bronze
                    .get(&s.source)
                    .map(|v| {
                        v.iter()
                            .filter(|(i, _)| live(i) && new_batches.contains(&i.batch_id))
                            .cloned()
                            .collect()
                    })
                    .unwrap_or_default();
                Some(parse_bronze(&b.schema, &batches).map_err(|e| vec![pipeline_diag(e)])?)
            }
            _ => None,
        };
        let Some(parsed) = exploded
            .as_ref()
            .map(|e| &e.parsed)
            .or(filtered.as_ref())
            .or_else(|| parsed_tables.get(&s.source))
        else {
            diagnostics.push(Diagnostic {
                scope: "pipeline".into(),
                id: s.name.clone(),
                message: format!(
                    "silver.{} reads bronze.{}, which does not exist",
                    s.name, s.source
                ),
                table: String::new(),
            });
            continue;
        };
        let name = format!("silver.{}", s.name);
        if let Some(e) = &exploded {
            let before = incremental.and_then(|(_, b)| b.exploded.get(&name));
            exploded_stats.insert(name.clone(), e.stats.plus(before));
            let before = incremental.and_then(|(_, b)| b.exploded_read_as_utc.get(&name));
            let counted = read_as_utc_plus(&e.parsed.read_as_utc, before);
            if !counted.is_empty() {
                exploded_read_as_utc.insert(name.clone(), counted);
            }
        }
        let lookups = Lookups {
            bronze: &parsed_tables,
            silver: &silver_done,
        };
        if incremental.is_some() {
            let refused = values_from_other_rows(ctx, s);
            if !refused.is_empty() {
                diagnostics.extend(refused);
                continue;
            }
        }
        // An incremental run merges the new rows into the current table when
        // that gives what a full refresh would; otherwise (a late or tied
        // row, see `MergeState::late_row`) it rebuilds the table from all of
        // its bronze, in this same run.
        let mut parsed = parsed;
        let mut whole = incremental.is_none();
        // A child table rebuilt in an incremental run explodes every batch.
        let mut exploded_all: Option<crate::explode::Exploded> = None;
        let first_stat = rule_stats.len();
        let done = loop {
            rule_stats.truncate(first_stat);
            let base = incremental
                .filter(|_| !whole)
                .and_then(|(_, b)| b.table(&name));
            let built = build_silver(ctx, s, parsed, &lookups, &mut rule_stats, None, input.progress).await;
            for st in &mut rule_stats[first_stat..] {
                st.silver_table = s.name.clone();
            }
            let built = match built {
                Ok(b) => b,
                Err(d) => {
                    break Err(d
                        .into_iter()
                        .map(|mut d| {
                            d.table = s.name.clone();
                            d
                        })
                        .collect::<Vec<_>>());
                }
            };
            let mut rejected: Vec<Rejected> = parsed
                .rejected
                .iter()
                .map(|r| {
                    let mut r = r.clone();
                    r.reason = format!("{}: {}", r.rule_id, r.reason);
                    r
                })
                .collect();
            rejected.extend(built.rejected);
            let Some(spec) = &s.merge else {
                let batch = match base {
                    Some(old) => match append_rows(&name, old, &built.rows) {
                        Ok(b) => b,
                        Err(d) => break Err(vec![d]),
                    },
                    None => built.rows,
                };
                break Ok((batch, rejected));
            };
            let previous_state = incremental
                .filter(|_| !whole)
                .and_then(|(_, b)| b.merge_state.get(&name));
            if !whole {
                let late = match previous_state {
                    None => Some("no earlier merge of this table".to_string()),
                    Some(st) => match st.late_row(spec, &built.rows) {
                        Ok(late) => late,
                        Err(m) => break Err(vec![merge_diag(s, m)]),
                    },
                };
                if let Some(why) = late {
                    notes.push(format!(
                        "silver.{} was rebuilt from all of bronze.{} in this incremental run: {why} is not newer than the rows merged before, and only a merge of every row gives the table a full refresh would",
                        s.name, s.source
                    ));
                    if s.explode.is_some() {
                        let batches = input
                            .bronze
                            .get(&s.source)
                            .map(Vec::as_slice)
                            .unwrap_or(&[]);
                        match crate::explode::for_silver(s, def.bronze_table(&s.source), batches) {
                            Some(Ok(e)) => {
                                exploded_stats.insert(name.clone(), e.stats.plus(None));
                                exploded_read_as_utc.remove(&name);
                                if !e.parsed.read_as_utc.is_empty() {
                                    exploded_read_as_utc
                                        .insert(name.clone(), e.parsed.read_as_utc.clone());
                                }
                                parsed = &exploded_all.insert(e).parsed;
                            }
                            Some(Err(m)) => break Err(vec![merge_diag(s, m)]),
                            None => {
                                break Err(vec![merge_diag(
                                    s,
                                    "its bronze table is missing".into(),
                                )])
                            }
                        }
                    } else {
                        let Some(all) = parsed_tables.get(&s.source) else {
                            break Err(vec![merge_diag(s, "its bronze table is missing".into())]);
                        };
                        parsed = all;
                    }
                    whole = true;
                    continue;
                }
            }
            let holds = spec
                .from_snapshots
                .then(|| snapshot_holds(s, spec, parsed, &rejected));
            let merged = crate::merge::merge(crate::merge::MergeInput {
                spec,
                base,
                new: &built.rows,
                deletes: &built.deletes,
                holds: holds.as_ref(),
            });
            let m = match merged {
                Ok(m) => m,
                Err(message) => break Err(vec![merge_diag(s, message)]),
            };
            let state = previous_state
                .cloned()
                .unwrap_or_default()
                .observe(spec, &built.rows);
            match state {
                Ok(st) => {
                    merge_state.insert(name.clone(), st);
                }
                Err(message) => break Err(vec![merge_diag(s, message)]),
            }
            // Ambiguous ties go to the quarantine with their bronze lineage.
            let lineage = lineage_of(parsed);
            for a in &m.ambiguous {
                let (raw_payload, source_file) = lineage
                    .get(a.event_id.as_str())
                    .cloned()
                    .unwrap_or_default();
                rejected.push(Rejected {
                    event_id: a.event_id.clone(),
                    batch_id: a.batch_id.clone(),
                    source_file,
                    raw_payload,
                    rule_id: "merge".into(),
                    reason: a.reason.clone(),
                });
            }
            let rows_in = built.rows.num_rows() + base.map_or(0, |b| b.num_rows());
            let base_removed = incremental
                .filter(|_| !whole)
                .and_then(|(_, b)| b.removed.get(&name).copied())
                .unwrap_or(0);
            removed.insert(
                name.clone(),
                base_removed + rows_in.saturating_sub(m.batch.num_rows() + m.ambiguous.len()),
            );
            merge_log.insert(name.clone(), m.removed);
            break Ok((m.batch, rejected));
        };
        if whole && incremental.is_some() {
            rebuilt.insert(s.name.clone());
        }
        match done {
            Ok((batch, rejected)) => {
                quarantine.extend(rejected.into_iter().map(|r| (s.name.clone(), r)));
                silver_done.insert(name.clone(), batch.clone());
                silver_out.push(TableData { name, batch });
            }
            Err(d) => diagnostics.extend(d),
        }
    }
    if !diagnostics.is_empty() {
        return Err(diagnostics);
    }
    tables.extend(silver_out);
    let previous_quarantine = input.previous.and_then(|p| p.table("silver.quarantine"));
    tables.push(TableData {
        name: "silver.quarantine".into(),
        batch: quarantine_history(
            previous_quarantine,
            &quarantine,
            input.run_id as i64,
            incremental.map(|_| &rebuilt),
        )
        .map_err(|e| vec![pipeline_diag(e)])?,
    });

    // Silver goes to the lake before gold runs: gold reads silver's Parquet files.
    // (Bronze files are written and registered at ingest.)
    for t in tables.iter().filter(|t| !t.name.starts_with("bronze.")) {
        if let Err(e) = register_table(ctx, &t.name, &t.batch).await {
            return Err(vec![pipeline_diag(e)]);
        }
    }
    let gold = build_gold(ctx, def, input.previous, input.progress).await?;
    tables.extend(gold.tables);
    diagnostics.extend(gold.errors);
    let gold_reads_bronze = gold.reads_bronze;
    // A broken gold model does not hold silver back: silver, quarantine and the
    // other models are fresh; the caller keeps that model's last good table.
    Ok(RunOutput {
        tables,
        typed_bronze,
        rule_stats,
        missing_columns,
        read_as_utc,
        gold_errors: diagnostics,
        removed,
        merge_log,
        merge_state,
        notes,
        gold_reads_bronze,
        exploded: exploded_stats,
        superseded,
        exploded_read_as_utc,
    })
}

/// Does silver read this batch (it was not read again as another batch)?
fn live(batch: &BatchInfo) -> bool {
    batch.superseded_by.is_none()
}

/// `now`'s counts of values read as UTC plus a previous run's (an
/// incremental run), per column, in `now`'s order then the previous ones.
fn read_as_utc_plus(now: &[ReadAsUtc], before: Option<&Vec<ReadAsUtc>>) -> Vec<ReadAsUtc> {
    let mut all: Vec<ReadAsUtc> = now.to_vec();
    for b in before.into_iter().flatten() {
        match all.iter_mut().find(|a| a.column == b.column) {
            Some(a) => {
                a.without_offset += b.without_offset;
                a.values += b.values;
            }
            None => all.push(b.clone()),
        }
    }
    all
}

/// An incremental run refuses expressions whose value for a row depends on
/// the other rows (a window, an aggregate): it sees only the new batches, so
/// they would give other values than a full refresh, silently. Spark
/// Structured Streaming refuses such windows on streams for the same reason.
fn values_from_other_rows(ctx: &SessionContext, s: &SilverTableDef) -> Vec<Diagnostic> {
    let why = "uses a window or an aggregate: its value for a row depends on the other rows, and an incremental run sees only the new batches, so it would give other values than a full refresh (Spark Structured Streaming refuses such windows on streams too). Run a full refresh, or write it without OVER (...) / aggregates.";
    let mut out: Vec<Diagnostic> = s
        .rules
        .rules
        .iter()
        .filter(|r| r.enabled && crate::eval::uses_other_rows(ctx, &r.resolved_expression()))
        .map(|r| Diagnostic {
            table: s.name.clone(),
            ..Diagnostic::rule(&r.id, format!("{} {why}", r.id))
        })
        .collect();
    for (what, sql) in s.select.iter().map(|x| ("select", x)).chain(
        s.merge
            .iter()
            .filter_map(|m| m.delete_when.as_ref())
            .map(|x| ("delete_when", x)),
    ) {
        // A select item is an expression with an optional `AS` name.
        let expr = match what {
            "select" => select_item(sql).map_or_else(|_| sql.clone(), |(e, _)| e),
            _ => sql.clone(),
        };
        if crate::eval::uses_other_rows(ctx, &expr) {
            out.push(Diagnostic {
                scope: "pipeline".into(),
                id: s.name.clone(),
                message: format!("silver.{} {what}: {sql} {why}", s.name),
                table: String::new(),
            });
        }
    }
    out
}

/// Gold models of a run: each model's table (or its error), and the bronze
/// tables models read (only with the anti-pattern on). `previous` holds the
/// tables `merge_on` models merge into. Silver must be registered already.
pub(crate) struct GoldBuild {
    pub tables: Vec<TableData>,
    pub errors: Vec<Diagnostic>,
    pub reads_bronze: BTreeMap<String, Vec<String>>,
}

/// Runs every gold model over the registered silver tables and registers the results.
pub(crate) async fn build_gold(
    ctx: &SessionContext,
    def: &PipelineDef,
    previous: Option<&RunOutput>,
    progress: crate::progress::Reporter<'_>,
) -> std::result::Result<GoldBuild, Vec<Diagnostic>> {
    let mut tables = Vec::new();
    let mut diagnostics = Vec::new();
    let mut gold_reads_bronze = BTreeMap::new();
    for (i, g) in def.gold.iter().enumerate() {
        progress.report(crate::progress::Progress::Model {
            table: format!("gold.{}", g.name),
            n: i as u32 + 1,
            of: def.gold.len() as u32,
        });
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
                        .and_then(|p| p.table(&format!("gold.{}", g.name)))
                        .filter(|p| p.schema().fields() == batch.schema().fields());
                    // Two different rows for one key: which one is written
                    // would depend on the query's row order.
                    let on = g.merge_on.join(", ");
                    let conflict = match crate::merge::conflicting_key(&batch, &g.merge_on) {
                        Ok(None) => None,
                        Ok(Some(key)) => Some(format!(
                            "MERGE ON {on}: the query returns different rows for {key}; a MERGE needs one row per key (group by {on}, or filter), or the row order would decide which one is written"
                        )),
                        Err(m) => Some(format!("MERGE ON {on}: {m}")),
                    };
                    if let Some(message) = conflict {
                        diagnostics.push(Diagnostic {
                            scope: "gold".into(),
                            id: g.name.clone(),
                            message,
                            table: String::new(),
                        });
                        continue;
                    }
                    // A query's NULL group is one group: NULL keys match NULL.
                    let spec = crate::merge::MergeSpec {
                        keys: g.merge_on.clone(),
                        null_safe_keys: true,
                        ..Default::default()
                    };
                    let none = BooleanArray::from(vec![false; batch.num_rows()]);
                    match crate::merge::merge(crate::merge::MergeInput {
                        spec: &spec,
                        base: previous,
                        new: &batch,
                        deletes: &none,
                        holds: None,
                    }) {
                        Ok(m) => m.batch,
                        Err(message) => {
                            diagnostics.push(Diagnostic {
                                scope: "gold".into(),
                                id: g.name.clone(),
                                message: format!("MERGE ON {}: {message}", g.merge_on.join(", ")),
                                table: String::new(),
                            });
                            continue;
                        }
                    }
                };
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
                table: String::new(),
            }),
        }
    }
    Ok(GoldBuild {
        tables,
        errors: diagnostics,
        reads_bronze: gold_reads_bronze,
    })
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
/// in a full run.
fn quarantine_history(
    previous: Option<&RecordBatch>,
    rejected: &[(String, Rejected)],
    run_id: i64,
    incremental: Option<&std::collections::HashSet<String>>,
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

fn merge_diag(s: &SilverTableDef, message: String) -> Diagnostic {
    Diagnostic {
        scope: "pipeline".into(),
        id: s.name.clone(),
        message: format!("silver.{} (merge): {message}", s.name),
        table: String::new(),
    }
}

/// `_event_id` → (`raw_payload`, `_source_file`) of the parsed bronze rows,
/// for quarantine rows that only know their event.
fn lineage_of(parsed: &Parsed) -> std::collections::HashMap<&str, (String, String)> {
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
fn snapshot_holds(
    s: &SilverTableDef,
    spec: &crate::merge::MergeSpec,
    parsed: &Parsed,
    rejected: &[Rejected],
) -> crate::merge::SnapshotHolds {
    let mut holds = crate::merge::SnapshotHolds::default();
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
            table: String::new(),
        });
    }
    concat_batches(&old.schema(), [old, new]).map_err(|e| pipeline_diag(e.into()))
}

fn pipeline_diag(e: EngineError) -> Diagnostic {
    Diagnostic {
        scope: "pipeline".into(),
        id: String::new(),
        message: e.to_string(),
        table: String::new(),
    }
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
    /// DataFusion or Arrow error while planning, cleaned for display.
    Query(String),
    /// DataFusion or Arrow error while running (a row's value), cleaned.
    Execution(String),
    /// The plan needs several partitions (threads), which the browser lacks.
    Parallel(String),
    /// More than the allowed rows; carries the limit.
    TooManyRows(usize),
}

impl std::fmt::Display for CollectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CollectError::Query(m) | CollectError::Execution(m) => write!(f, "{m}"),
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
        .map_err(|e| CollectError::Execution(df_err(e)))?;
    let mut batches = Vec::new();
    let mut rows = 0;
    while let Some(batch) = stream.next().await {
        let batch = batch.map_err(|e| {
            if crate::eval::is_row_error(&e) {
                CollectError::Execution(df_err(e))
            } else {
                CollectError::Query(df_err(e))
            }
        })?;
        rows += batch.num_rows();
        if max_rows.is_some_and(|m| rows > m) {
            return Err(CollectError::TooManyRows(max_rows.unwrap_or_default()));
        }
        batches.push(batch);
    }
    concat_batches(&schema, &batches).map_err(|e| CollectError::Query(e.to_string()))
}

fn read_batch(ctx: &SessionContext, batch: &RecordBatch) -> Result<DataFrame> {
    let table = MemTable::try_new(batch.schema(), vec![vec![batch.clone()]])?;
    Ok(ctx.read_table(Arc::new(table))?)
}

fn df_err(e: datafusion::error::DataFusionError) -> String {
    clean_datafusion_message(&e.to_string())
}

/// Hidden column carrying each row's position in bronze order through the
/// rules (joins may reorder rows); dropped before silver is written.
const ARRIVAL: &str = "_arrival";

/// Tables an enrichment can join: bronze tables read with their declared
/// schema, and the silver tables built earlier in this run.
pub(crate) struct Lookups<'a> {
    pub bronze: &'a BTreeMap<String, Parsed>,
    /// Qualified names (`silver.customers`), in build order.
    pub silver: &'a BTreeMap<String, RecordBatch>,
}

/// A rule's name for a column users may not target.
fn is_internal(name: &str) -> bool {
    LINEAGE_COLUMNS.contains(&name) || name == ARRIVAL
}

/// What one silver table's rules produced.
pub(crate) struct SilverRows {
    /// Rows in silver's layout (declared and added columns, `_event_id`, `_batch_id` last).
    pub rows: RecordBatch,
    /// Rows a `drop` rule failed (all reasons of a stage listed).
    pub rejected: Vec<Rejected>,
    /// Per row of `rows`: is it a delete event (`merge.delete_when`)?
    pub deletes: BooleanArray,
}

/// Failing rows of one rule, by arrival position, with their reasons.
type Failures = Vec<(i64, String)>;

/// Applies a rule's action to its failing rows: `drop` records them against
/// their rows, `fail` makes a diagnostic, `warn` only counts. Returns the stat.
#[allow(clippy::too_many_arguments)]
fn apply_action(
    rule: &Rule,
    checked: usize,
    changed: usize,
    failures: Failures,
    drops: &mut BTreeMap<i64, Vec<String>>,
    diags: &mut Vec<Diagnostic>,
) -> RuleStat {
    let action = rule.action();
    let sample: Vec<String> = failures.iter().take(3).map(|(_, r)| r.clone()).collect();
    let failed = failures.len();
    // A row an earlier rule already sends to quarantine does not stop the update.
    let stopping: Vec<&(i64, String)> = failures
        .iter()
        .filter(|(a, _)| !drops.contains_key(a))
        .collect();
    match action {
        Action::Drop => {
            for (row, reason) in failures {
                drops.entry(row).or_default().push(reason);
            }
        }
        Action::Fail if !stopping.is_empty() => diags.push(Diagnostic::rule(
            &rule.id,
            format!(
                "{n} {rows} failed {id}, whose action is fail: the update stopped and silver, quarantine and gold stay at their previous version. First: {first}",
                n = stopping.len(),
                rows = if stopping.len() == 1 { "row" } else { "rows" },
                id = rule.id,
                first = stopping[0].1
            ),
        )),
        Action::Fail | Action::Warn => {}
    }
    RuleStat {
        silver_table: String::new(),
        rule_id: rule.id.clone(),
        kind: rule.kind,
        action,
        checked,
        failed,
        changed,
        sample,
        read_as_utc: 0,
    }
}

/// Filters, then normalizations, enrichments and expectations, for one
/// silver table. Filters are evaluated together on the typed rows; rows a
/// `drop` filter rejects leave before the normalizations (seed 002 §4: drop
/// the garbage first). Normalizations, enrichments and expectations then
/// each see every remaining row, and a row failing `drop` rules among them
/// is quarantined with all their reasons.
async fn build_silver(
    ctx: &SessionContext,
    def: &SilverTableDef,
    parsed: &Parsed,
    lookups: &Lookups<'_>,
    stats: &mut Vec<RuleStat>,
    mut trace: Option<&mut Vec<TraceEntry>>,
    progress: crate::progress::Reporter<'_>,
) -> std::result::Result<SilverRows, Vec<Diagnostic>> {
    let mut diags = Vec::new();
    let enabled = def.rules.rules.iter().filter(|r| r.enabled).count() as u32;
    let mut at = 0u32;
    let mut report = |rule: &Rule| {
        at += 1;
        progress.report(crate::progress::Progress::Rule {
            table: format!("silver.{}", def.name),
            rule: rule.id.clone(),
            n: at,
            of: enabled,
        });
    };
    for id in def.rules.duplicate_ids() {
        diags.push(Diagnostic::rule(
            &id,
            format!("rule id {id} is used more than once; ids must be unique"),
        ));
    }
    let element = crate::explode::element_label(def.explode.as_ref());
    let n = parsed.rows.num_rows();
    let typed = with_column(
        &parsed.rows,
        ARRIVAL,
        Arc::new(datafusion::arrow::array::Int64Array::from_iter_values(
            0..n as i64,
        )),
    )
    .map_err(|e| vec![pipeline_diag(e)])?;

    // Filters: each evaluated on the typed rows.
    let mut drops: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for rule in def
        .rules
        .rules
        .iter()
        .filter(|r| r.enabled && r.kind == RuleKind::Filter)
    {
        report(rule);
        if let Err(m) = rule.check_params().and_then(|_| check_rule_size(rule)) {
            diags.push(Diagnostic::rule(&rule.id, m));
            continue;
        }
        match eval_condition(ctx, &typed, rule, true).await {
            Ok(failures) => {
                if let Some(t) = trace.as_deref_mut() {
                    trace_rule(t, rule, &typed, None, &failures);
                }
                stats.push(apply_action(rule, n, 0, failures, &mut drops, &mut diags));
            }
            Err(m) => diags.push(Diagnostic::rule(&rule.id, m)),
        }
    }
    let mut rejected = Vec::new();
    let current =
        split_rejected(&typed, &mut drops, &mut rejected, element).map_err(|e| vec![e])?;
    let mut current = current;

    // Normalizations, enrichments, expectations: each on the materialized
    // output of the previous rule; failures collected per row.
    let mut expect_rows: Option<RecordBatch> = None;
    for rule in def
        .rules
        .in_execution_order()
        .into_iter()
        .filter(|r| r.enabled && r.kind != RuleKind::Filter)
    {
        report(rule);
        if let Err(m) = rule.check_params().and_then(|_| check_rule_size(rule)) {
            diags.push(Diagnostic::rule(&rule.id, m));
            continue;
        }
        // A rule that reads other rows (a window, a subquery over the rows)
        // sees only the rows still headed for silver: rows an earlier `drop`
        // rule failed leave first, as filtered rows do, so they are neither
        // counted nor ranked (`count(*) OVER (...)` after a failed CAST).
        let reads_others =
            !drops.is_empty() && crate::eval::uses_other_rows(ctx, &rule.resolved_expression());
        if reads_others && rule.kind != RuleKind::Expect {
            current = split_rejected(&current, &mut drops, &mut rejected, element)
                .map_err(|e| vec![e])?;
        }
        let checked = current.num_rows();
        if rule.kind == RuleKind::Expect {
            // Expectations all see the same rows: the output of the last
            // enrichment (less the dropped ones, for a rule reading other rows).
            let shared = expect_rows.get_or_insert_with(|| current.clone());
            let remaining;
            let batch = if reads_others {
                remaining = without_dropped(shared, &drops).map_err(|e| vec![e])?;
                &remaining
            } else {
                &*shared
            };
            let checked = batch.num_rows();
            match eval_condition(ctx, batch, rule, false).await {
                Ok(failures) => {
                    if let Some(t) = trace.as_deref_mut() {
                        trace_rule(t, rule, batch, None, &failures);
                    }
                    stats.push(apply_action(
                        rule, checked, 0, failures, &mut drops, &mut diags,
                    ));
                }
                Err(m) => diags.push(Diagnostic::rule(&rule.id, m)),
            }
            continue;
        }
        let result = match (&rule.kind, &rule.lookup) {
            (RuleKind::Normalize, _) => normalize(ctx, &current, rule).await,
            (RuleKind::Enrich, None) => enrich_computed(ctx, &current, rule).await,
            (RuleKind::Enrich, Some(_)) => enrich_lookup(ctx, &current, rule, lookups).await,
            (RuleKind::Filter | RuleKind::Expect, _) => continue,
        };
        match result {
            Ok(step) => {
                // A column silver cannot store is this rule's error.
                if let Some(why) = crate::lake::unstorable_column(&step.rows.schema()) {
                    diags.push(Diagnostic::rule(&rule.id, why));
                    continue;
                }
                if let Some(t) = trace.as_deref_mut() {
                    trace_rule(t, rule, &current, Some(&step.rows), &step.failures);
                }
                let mut stat = apply_action(
                    rule,
                    checked,
                    step.changed,
                    step.failures,
                    &mut drops,
                    &mut diags,
                );
                stat.read_as_utc = step.read_as_utc;
                stats.push(stat);
                current = step.rows;
            }
            Err(m) => diags.push(Diagnostic::rule(&rule.id, m)),
        }
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    let current =
        split_rejected(&current, &mut drops, &mut rejected, element).map_err(|e| vec![e])?;

    // Delete events of a merged table; a row whose condition cannot be
    // computed is quarantined.
    let table_diag = |what: &str, m: String| {
        vec![Diagnostic {
            scope: "pipeline".into(),
            id: def.name.clone(),
            message: format!("silver.{}{what}: {m}", def.name),
            table: String::new(),
        }]
    };
    let arrival = arrivals(&current);
    let deletes = match def.merge.as_ref().and_then(|m| m.delete_when.as_deref()) {
        Some(cond) => {
            let (mask, errors) = predicate_mask(ctx, &current, cond)
                .await
                .map_err(|m| table_diag(": delete_when", m))?;
            for (row, error) in errors {
                drops
                    .entry(arrival[row])
                    .or_default()
                    .push(format!("delete_when: {cond} failed on this row: {error}"));
            }
            mask
        }
        None => BooleanArray::from(vec![false; current.num_rows()]),
    };

    // The declared select list (renames, chosen columns), lineage kept.
    let current = if def.select.is_empty() {
        current
    } else {
        let (selected, failures) = select_columns(ctx, &current, &def.select)
            .await
            .map_err(|m| table_diag(" select", m))?;
        for (a, reason) in failures {
            drops.entry(a).or_default().push(reason);
        }
        selected
    };
    let (current, deletes) = if drops.is_empty() {
        (current, deletes)
    } else {
        let keep = not_dropped(&arrival, &drops);
        let deletes = datafusion::arrow::compute::filter(&deletes, &keep)
            .map_err(|e| vec![pipeline_diag(e.into())])?
            .as_any()
            .downcast_ref::<BooleanArray>()
            .cloned()
            .unwrap_or_else(|| BooleanArray::from(Vec::<bool>::new()));
        let current =
            split_rejected(&current, &mut drops, &mut rejected, element).map_err(|e| vec![e])?;
        (current, deletes)
    };

    // A merged table's rows need their business key (and sequence), named
    // as silver names them (after the select list). Such rows are quarantined.
    let (current, deletes) = match &def.merge {
        Some(m) => {
            let arrival = arrivals(&current);
            let mut keep = vec![true; current.num_rows()];
            // With null_safe_keys a NULL key part is a value (NULL = NULL).
            let keys = m.keys.iter().filter(|_| !m.null_safe_keys);
            for (col, what) in keys
                .map(|k| (k, "a merge key"))
                .chain(m.sequence_by.iter().map(|s| (s, "the sequence_by column")))
            {
                if let Some(values) = current.column_by_name(col) {
                    for (row, a) in arrival.iter().enumerate() {
                        if values.is_null(row) {
                            keep[row] = false;
                            drops.entry(*a).or_default().push(format!(
                                "merge: {col} is NULL ({what} of silver.{})",
                                def.name
                            ));
                        }
                    }
                }
            }
            // A NaN sequence value is no order (neither before nor after a number).
            let key_values: Option<Vec<ArrayRef>> = m
                .keys
                .iter()
                .map(|k| current.column_by_name(k).cloned())
                .collect();
            if let Some(values) = m
                .sequence_by
                .as_ref()
                .and_then(|s| current.column_by_name(s))
            {
                let seq = m.sequence_by.as_deref().unwrap_or_default();
                for (row, a) in arrival.iter().enumerate() {
                    if crate::merge::is_nan(values.as_ref(), row) {
                        keep[row] = false;
                        let key = key_values
                            .as_ref()
                            .map(|k| {
                                format!(" for {}", crate::merge::describe_key(&m.keys, k, row))
                            })
                            .unwrap_or_default();
                        drops.entry(*a).or_default().push(format!(
                            "merge: {seq} is NaN{key} (the sequence_by column of silver.{}: NaN is not an order, neither before nor after any value)",
                            def.name
                        ));
                    }
                }
            }
            let deletes = datafusion::arrow::compute::filter(&deletes, &BooleanArray::from(keep))
                .map_err(|e| vec![pipeline_diag(e.into())])?
                .as_any()
                .downcast_ref::<BooleanArray>()
                .cloned()
                .unwrap_or_else(|| BooleanArray::from(Vec::<bool>::new()));
            let current = split_rejected(&current, &mut drops, &mut rejected, element)
                .map_err(|e| vec![e])?;
            (current, deletes)
        }
        None => (current, deletes),
    };

    // Silver's columns: everything but the bronze text, with the lineage ids last.
    let schema = current.schema();
    let mut order: Vec<usize> = (0..schema.fields().len())
        .filter(|&i| !is_internal(schema.field(i).name().as_str()))
        .collect();
    for name in ["_event_id", "_batch_id"] {
        if let Ok(i) = schema.index_of(name) {
            order.push(i);
        }
    }
    let rows = current
        .project(&order)
        .map_err(|e| vec![pipeline_diag(e.into())])?;
    Ok(SilverRows {
        rows,
        rejected,
        deletes,
    })
}

/// Records what `rule` did to each row of `before` (`after`: the rule's
/// output, for normalizations and enrichments).
fn trace_rule(
    trace: &mut Vec<TraceEntry>,
    rule: &Rule,
    before: &RecordBatch,
    after: Option<&RecordBatch>,
    failures: &Failures,
) {
    let opts = FormatOptions::default()
        .with_null("NULL")
        .with_timestamp_format(Some("%Y-%m-%d %H:%M:%S"));
    let show = |batch: &RecordBatch, col: &str, row: usize| -> String {
        batch
            .column_by_name(col)
            .and_then(|a| {
                ArrayFormatter::try_new(a.as_ref(), &opts)
                    .ok()
                    .map(|f| f.value(row).to_string())
            })
            .unwrap_or_else(|| "?".into())
    };
    let after_rows: std::collections::HashMap<i64, usize> = after
        .map(|a| {
            arrivals(a)
                .into_iter()
                .enumerate()
                .map(|(i, x)| (x, i))
                .collect()
        })
        .unwrap_or_default();
    for (row, arrival) in arrivals(before).into_iter().enumerate() {
        let failure = failures.iter().find(|(a, _)| *a == arrival);
        let text = match (failure, rule.kind, after.zip(after_rows.get(&arrival))) {
            (Some((_, reason)), _, _) => format!("failed ({}): {reason}", rule.action().as_str()),
            (None, RuleKind::Normalize, Some((a, &r))) => {
                let col = rule.column.trim();
                let (old, new) = (show(before, col, row), show(a, col, r));
                match rule.cast {
                    Some(ty) if old == "NULL" => format!("{col}: NULL → {new} as {ty}"),
                    Some(ty) => format!("{col}: '{old}' → {new} as {ty}"),
                    None if old == new => format!("{col} unchanged ({old})"),
                    None => format!("{col}: {old} → {new}"),
                }
            }
            (None, RuleKind::Enrich, Some((a, &r))) => rule
                .output_columns()
                .iter()
                .map(|c| format!("{c} = {}", show(a, c, r)))
                .collect::<Vec<_>>()
                .join(", "),
            _ => "passed".into(),
        };
        trace.push(TraceEntry {
            arrival,
            rule_id: rule.id.clone(),
            kind: rule.kind,
            text,
            failed: failure.is_some(),
        });
    }
}

/// Runs one silver table's rules over a few parsed bronze records and
/// records what every rule did to each (the row trail). Returns the entries
/// by `_event_id`, and the rows quarantined with their reasons.
pub(crate) async fn trace_silver(
    ctx: &SessionContext,
    def: &SilverTableDef,
    parsed: &Parsed,
    lookups: &Lookups<'_>,
) -> std::result::Result<(Vec<(String, TraceEntry)>, Vec<Rejected>), String> {
    let mut entries = Vec::new();
    let mut stats = Vec::new();
    let built = build_silver(
        ctx,
        def,
        parsed,
        lookups,
        &mut stats,
        Some(&mut entries),
        crate::progress::Reporter::NONE,
    )
        .await
        .map_err(|d| {
            d.into_iter()
                .map(|d| d.message)
                .collect::<Vec<_>>()
                .join("; ")
        })?;
    let events = parsed
        .rows
        .column_by_name("_event_id")
        .and_then(|c| c.as_any().downcast_ref::<StringArray>())
        .map(|a| {
            (0..a.len())
                .map(|i| a.value(i).to_string())
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    Ok((
        entries
            .into_iter()
            .filter_map(|e| events.get(e.arrival as usize).map(|ev| (ev.clone(), e)))
            .collect(),
        built.rejected,
    ))
}

/// Rule id of rows whose select-list value could not be computed.
const SELECT_RULE_ID: &str = "select";

/// `batch` projected to the SQL select list `items` (each `expr [AS name]`),
/// with the lineage and arrival columns carried along, rows in the same
/// order; and the rows whose value of some item could not be computed (a
/// run-time error), which leave for the quarantine.
/// One item of a `select` list (`fare * 100 AS cents`): its expression and
/// its `AS` name, if any. Errors: not one expression with an optional name.
fn select_item(item: &str) -> std::result::Result<(String, Option<String>), String> {
    use datafusion::sql::sqlparser::ast::SelectItem;
    let parsed = Parser::new(&GenericDialect {})
        .try_with_sql(item)
        .and_then(|mut p| p.parse_select_item())
        .map_err(|e| format!("{item}: {e}"))?;
    match parsed {
        SelectItem::UnnamedExpr(e) => Ok((e.to_string(), None)),
        SelectItem::ExprWithAlias { expr, alias } => Ok((expr.to_string(), Some(alias.value))),
        _ => Err(format!(
            "{item}: write one column or expression, with an optional AS name"
        )),
    }
}

async fn select_columns(
    ctx: &SessionContext,
    batch: &RecordBatch,
    items: &[String],
) -> std::result::Result<(RecordBatch, Failures), String> {
    let mut fields = Vec::with_capacity(items.len() + LINEAGE_COLUMNS.len() + 1);
    let mut columns = Vec::with_capacity(fields.capacity());
    let mut failures = Vec::new();
    let arrival = arrivals(batch);
    for item in items {
        check_size(item, MAX_EXPRESSION_TOKENS)?;
        let (expr, alias) = select_item(item)?;
        let name = alias.unwrap_or_else(|| expr.clone());
        if is_internal(&name) {
            return Err(format!(
                "{name} is a lineage column; it is kept without being listed"
            ));
        }
        if fields.iter().any(|f: &Field| f.name() == &name) {
            return Err(format!("{name} is listed twice; give each column one name"));
        }
        let e = crate::eval::evaluate(ctx, batch, &expr).await?;
        for (row, error) in &e.errors {
            failures.push((
                arrival[*row],
                format!(
                    "{SELECT_RULE_ID}: {expr} failed on this row: {error}{}",
                    crate::eval::describe(batch, &e.columns, *row, true)
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
    )
    .map_err(|e| e.to_string())?;
    failures.sort_by_key(|(a, _)| *a);
    Ok((out, failures))
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

/// Arrival positions of `batch`'s rows.
fn arrivals(batch: &RecordBatch) -> Vec<i64> {
    batch
        .column_by_name(ARRIVAL)
        .and_then(|c| {
            c.as_any()
                .downcast_ref::<datafusion::arrow::array::Int64Array>()
        })
        .map(|a| a.values().to_vec())
        .unwrap_or_default()
}

/// The rows of `batch` without drop reasons (nothing moved to the quarantine yet).
fn without_dropped(
    batch: &RecordBatch,
    drops: &BTreeMap<i64, Vec<String>>,
) -> std::result::Result<RecordBatch, Diagnostic> {
    let keep = not_dropped(&arrivals(batch), drops);
    filter_record_batch(batch, &keep).map_err(|e| pipeline_diag(e.into()))
}

/// Per row (by arrival position): has no rule dropped it?
fn not_dropped(arrival: &[i64], drops: &BTreeMap<i64, Vec<String>>) -> BooleanArray {
    arrival
        .iter()
        .map(|a| Some(!drops.contains_key(a)))
        .collect()
}

/// Moves the rows of `batch` that have drop reasons into `rejected` (one
/// quarantine row each, every reason listed) and returns the others.
/// On a child table (`element`: array path and position column, see
/// [`crate::explode::element_label`]) the reason ends with the element
/// (` [element lines[1]]`): its lineage is its parent record's.
fn split_rejected(
    batch: &RecordBatch,
    drops: &mut BTreeMap<i64, Vec<String>>,
    rejected: &mut Vec<Rejected>,
    element: Option<(&str, &str)>,
) -> std::result::Result<RecordBatch, Diagnostic> {
    if drops.is_empty() {
        return Ok(batch.clone());
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
    let mut keep = Vec::with_capacity(batch.num_rows());
    for (row, a) in arrival.iter().enumerate() {
        match drops.remove(a) {
            Some(reasons) => {
                keep.push(false);
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
                            crate::explode::element_suffix(batch, label, row)
                        ),
                        None => reasons.join("; "),
                    },
                });
            }
            None => keep.push(true),
        }
    }
    filter_record_batch(batch, &BooleanArray::from(keep)).map_err(|e| pipeline_diag(e.into()))
}

fn check_rule_size(rule: &Rule) -> std::result::Result<(), String> {
    check_size(&rule.resolved_expression(), MAX_EXPRESSION_TOKENS)?;
    match &rule.lookup {
        Some(l) => check_size(&l.on, MAX_EXPRESSION_TOKENS),
        None => Ok(()),
    }
}

fn check_target_column(rule: &Rule, name: &str) -> std::result::Result<(), String> {
    if name.contains(',') {
        return Err(format!(
            "{name:?} is several names; a {} rule works on one column (a lookup enrichment can add several)",
            rule.kind.as_str()
        ));
    }
    if is_internal(name) {
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
/// matches), each result on its own row whatever the predicate (a window
/// included; see [`crate::eval`]), and the rows whose evaluation failed at
/// run time with the error. Used by the right-to-be-forgotten delete on
/// bronze and a merge's `delete_when`.
pub(crate) async fn predicate_mask(
    ctx: &SessionContext,
    batch: &RecordBatch,
    predicate: &str,
) -> std::result::Result<(BooleanArray, Vec<(usize, String)>), String> {
    check_size(predicate, MAX_EXPRESSION_TOKENS)?;
    let prepared = crate::eval::prepare(ctx, batch, predicate).await?;
    let ty = &prepared.data_type;
    if *ty != DataType::Boolean && *ty != DataType::Null {
        return Err(format!(
            "the condition must be TRUE or FALSE for each row, but this expression gives {ty}"
        ));
    }
    let e = crate::eval::evaluate_prepared(ctx, batch, &prepared)
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
async fn eval_condition(
    ctx: &SessionContext,
    batch: &RecordBatch,
    rule: &Rule,
    reject_when_true: bool,
) -> std::result::Result<Failures, String> {
    let sql = rule.resolved_expression();
    let prepared = crate::eval::prepare(ctx, batch, &sql).await?;
    let ty = &prepared.data_type;
    if *ty != DataType::Boolean && *ty != DataType::Null {
        return Err(if reject_when_true {
            format!("a filter must be a condition (TRUE = send the row to quarantine), but this expression gives {ty}")
        } else {
            format!("an expectation must be a condition every row satisfies (TRUE = the row is fine), but this expression gives {ty}")
        });
    }
    let e = crate::eval::evaluate_prepared(ctx, batch, &prepared)
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
                        crate::eval::describe(batch, &e.columns, r, false)
                    )
                }
            };
            Some((arrival.get(r).copied().unwrap_or(r as i64), reason))
        })
        .collect())
}

/// Why a row failed a rule whose expression could not be computed for it:
/// `E1: 100 / amount failed on this row: Divide by zero error (amount = 0)`.
fn run_time_reason(
    rule: &Rule,
    sql: &str,
    error: &str,
    batch: &RecordBatch,
    columns: &[(String, usize)],
    row: usize,
) -> String {
    format!(
        "{}: {sql} failed on this row: {error}{}",
        rule.id,
        crate::eval::describe(batch, columns, row, true)
    )
}

/// A comparison of a text column with a number fails at run time; say why.
fn text_compare_hint(message: String) -> String {
    if message.contains("Cannot cast string") {
        format!("{message}. A column compared with a number holds text here: declare a type on the normalization that produces it (e.g. DECIMAL(12,2)) or CAST it in the condition.")
    } else {
        message
    }
}

/// Output of a normalization or enrichment.
struct Step {
    rows: RecordBatch,
    /// Normalize: values changed.
    changed: usize,
    failures: Failures,
    /// Normalize to TIMESTAMP: values without an offset, read as UTC.
    read_as_utc: usize,
}

/// Replaces an existing column with the expression's value, converted
/// exactly to the rule's declared `type` if it has one. A row fails when its
/// value cannot be computed (a run-time error such as a failed CAST), does
/// not convert, or becomes NULL from a non-NULL value. Rows keep their order.
async fn normalize(
    ctx: &SessionContext,
    input: &RecordBatch,
    rule: &Rule,
) -> std::result::Result<Step, String> {
    let column = rule.column.trim();
    check_target_column(rule, column)?;
    let Ok(old_index) = input.schema().index_of(column) else {
        return Err(format!(
            "column {column} does not exist here, so it cannot be normalized (use an enrich rule to add a new column)"
        ));
    };
    let sql = rule.resolved_expression();
    let e = crate::eval::evaluate(ctx, input, &sql).await?;
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
    let mut read_as_utc = 0;
    if let Some(ty) = rule.cast {
        let text = cast(&value, &DataType::Utf8).map_err(|e| e.to_string())?;
        let text = text
            .as_any()
            .downcast_ref::<StringArray>()
            .ok_or("value as text")?;
        let converted = crate::convert::convert_source_column(
            &crate::source::SourceColumn::new(column, ty),
            text,
        )
        .map_err(|e| e.to_string())?;
        for (row, e) in converted.errors.into_iter().enumerate() {
            if let Some(e) = e {
                failed[row] = true;
                failures.push((arrival[row], format!("{}: {e}", rule.id)));
            }
        }
        read_as_utc = converted.read_as_utc.iter().filter(|f| **f).count();
        value = converted.array;
    }
    let out = with_column(input, column, value).map_err(|e| e.to_string())?;
    let old = input.column(old_index);
    let new = out.column(old_index);
    let opts = FormatOptions::default().with_null("NULL");
    let old_text = ArrayFormatter::try_new(old.as_ref(), &opts).map_err(|e| e.to_string())?;
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
        changed: changed_values(old, new),
        rows: out,
        failures,
        read_as_utc,
    })
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

/// Adds a computed column. A row fails when its value cannot be computed
/// (a run-time error, e.g. a division by zero) or is NULL. Rows keep their order.
async fn enrich_computed(
    ctx: &SessionContext,
    input: &RecordBatch,
    rule: &Rule,
) -> std::result::Result<Step, String> {
    let column = rule.column.trim();
    check_target_column(rule, column)?;
    if input.schema().index_of(column).is_ok() {
        return Err(format!(
            "column {column} already exists (use a normalize rule to change it)"
        ));
    }
    let sql = rule.resolved_expression();
    let e = crate::eval::evaluate(ctx, input, &sql).await?;
    let out = with_column(input, column, e.values.clone()).map_err(|e| e.to_string())?;
    let failures = enrich_failures(input, &out, rule, column, "", &sql, &e);
    Ok(Step {
        rows: out,
        changed: 0,
        failures,
        read_as_utc: 0,
    })
}

/// Rows whose enrichment failed: its expression could not be computed for
/// the row (`e`'s errors, reasons over `input`'s values), or the rule's first
/// new column is NULL in `out` (`why` says more, e.g. no lookup match).
fn enrich_failures(
    input: &RecordBatch,
    out: &RecordBatch,
    rule: &Rule,
    column: &str,
    why: &str,
    sql: &str,
    e: &crate::eval::Evaluated,
) -> Failures {
    let arrival = arrivals(out);
    let Some(values) = out.column_by_name(column) else {
        return vec![];
    };
    (0..out.num_rows())
        .filter_map(|r| {
            match e.error_of(r) {
                Some(error) => Some(run_time_reason(rule, sql, error, input, &e.columns, r)),
                None if values.is_null(r) => Some(format!("{}: {column} is NULL{why}", rule.id)),
                None => None,
            }
            .map(|reason| (arrival[r], reason))
        })
        .collect()
}

/// Qualifier of the row's own columns in a lookup join.
const ROW_ALIAS: &str = "__row";

/// `sql` (one expression) with every bare identifier that names one of the
/// row's columns qualified as [`ROW_ALIAS`] (`user_id` → `__row.user_id`).
fn qualify_row_columns(
    sql: &str,
    row_columns: &std::collections::HashSet<String>,
) -> std::result::Result<String, String> {
    use datafusion::sql::sqlparser::ast::{visit_expressions_mut, Expr as SqlExpr, Ident};
    let dialect = GenericDialect {};
    let mut expr = Parser::new(&dialect)
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| format!("SQL syntax: {e}"))?;
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

/// LEFT JOIN with a lookup table, then adds the rule's output columns. A
/// row fails when it found no match (its first new column is NULL). Errors
/// when the join would change the number of rows (lookup key not unique).
async fn enrich_lookup(
    ctx: &SessionContext,
    input: &RecordBatch,
    rule: &Rule,
    lookups: &Lookups<'_>,
) -> std::result::Result<Step, String> {
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
    let known = || {
        lookups
            .bronze
            .keys()
            .map(|k| format!("bronze.{k}"))
            .chain(lookups.silver.keys().cloned())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let rows = if lookup.table.starts_with("silver.") {
        lookups.silver.get(&lookup.table).ok_or_else(|| {
            format!(
                "lookup table {} is not built before this table (tables available here: {}). A silver table can join silver tables listed before it.",
                lookup.table,
                known()
            )
        })?
    } else {
        let table = lookup
            .table
            .strip_prefix("bronze.")
            .unwrap_or(&lookup.table);
        &lookups
            .bronze
            .get(table)
            .ok_or_else(|| {
                format!(
                    "lookup table {} does not exist (tables: {})",
                    lookup.table,
                    known()
                )
            })?
            .rows
    };
    // Only the lookup's own columns take part (not its lineage columns).
    let schema = rows.schema();
    let own: Vec<usize> = (0..schema.fields().len())
        .filter(|&i| !is_internal(schema.field(i).name().as_str()))
        .collect();
    let lookup_rows = rows.project(&own).map_err(|e| e.to_string())?;

    // The row's own columns are qualified as `__row`, and a bare name in the
    // rule's SQL that is one of them means the row's column: in
    // `user_id = u.user_id` the lookup may have a `user_id` too. The rows
    // carry ids through the join (a hash join reorders them).
    let n = input.num_rows();
    let with_ids = crate::eval::with_row_ids(input)?;
    let row_names: std::collections::HashSet<String> = input
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let on_sql = qualify_row_columns(&lookup.on, &row_names)?;
    let not_unique = |got: String| {
        format!(
            "the join changed the row count from {n} to {got}: the lookup key is not unique in {}. Bronze appends every file, so a lookup dropped twice holds every key twice; start over with \"Reload example\".",
            lookup.table
        )
    };
    // The join of some rows (a slice of `with_ids`): every column of both
    // sides under a plain name; the qualified names stay in the schema for
    // the output expressions.
    let lookup_rows = &lookup_rows;
    let join = |rows: RecordBatch| {
        let on_sql = on_sql.clone();
        async move {
            let plan = |e: datafusion::error::DataFusionError| CollectError::Query(df_err(e));
            let left = read_batch(ctx, &rows)
                .map_err(|e| CollectError::Query(e.to_string()))?
                .alias(ROW_ALIAS)
                .map_err(plan)?;
            let right = read_batch(ctx, lookup_rows)
                .map_err(|e| CollectError::Query(e.to_string()))?
                .alias(&lookup.alias)
                .map_err(plan)?;
            let both = left.schema().join(right.schema()).map_err(plan)?;
            let on = ctx
                .state()
                .create_logical_expr(&on_sql, &both)
                .map_err(|e| CollectError::Query(format!("join condition: {}", df_err(e))))?;
            let joined = left
                .join_on(right, JoinType::Left, vec![on])
                .map_err(plan)?;
            let schema = joined.schema().clone();
            let select: Vec<Expr> = schema
                .columns()
                .into_iter()
                .enumerate()
                .map(|(i, c)| Expr::Column(c).alias(format!("__c{i}")))
                .collect();
            let out =
                collect_single(joined.select(select).map_err(plan)?, Some(rows.num_rows())).await?;
            Ok::<_, CollectError>((schema, out))
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
            Err(CollectError::TooManyRows(m)) => {
                return Err(not_unique(if len == n {
                    format!("more than {m}")
                } else {
                    "more".into()
                }))
            }
            Err(CollectError::Execution(m)) if len <= 1 => failed_rows.push((offset, m)),
            Err(CollectError::Execution(_)) => {
                let half = len / 2;
                todo.push((offset + half, len - half));
                todo.push((offset, half));
            }
            Err(e) => return Err(e.into()),
        }
    }
    // The schema of the join, also when every row failed.
    let schema = match schema {
        Some(s) => s,
        None => join(with_ids.slice(0, 0)).await.map_err(String::from)?.0,
    };
    let arrow_schema: SchemaRef = Arc::new(schema.as_arrow().clone());
    let id_index = schema
        .index_of_column_by_name(Some(&ROW_ALIAS.into()), crate::eval::ROW_ID)
        .ok_or("row ids lost in the join")?;
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
                    Some(c) => datafusion::arrow::compute::take(c.as_ref(), &at, None)
                        .map_err(|e| e.to_string()),
                    None => Ok(datafusion::arrow::array::new_null_array(
                        f.data_type(),
                        failed_rows.len(),
                    )),
                }
            })
            .collect::<std::result::Result<_, _>>()?;
        pieces.push(
            RecordBatch::try_new(Arc::clone(&arrow_schema), columns).map_err(|e| e.to_string())?,
        );
    }
    let pieces: Vec<RecordBatch> = pieces
        .into_iter()
        .map(|p| RecordBatch::try_new(Arc::clone(&arrow_schema), p.columns().to_vec()))
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let out = concat_batches(&arrow_schema, &pieces).map_err(|e| e.to_string())?;
    let order = crate::eval::input_order(out.column(id_index), n)
        .ok_or_else(|| not_unique(out.num_rows().to_string()))?;
    let joined_rows = RecordBatch::try_new(
        Arc::clone(&arrow_schema),
        out.columns()
            .iter()
            .map(|c| datafusion::arrow::compute::take(c.as_ref(), &order, None))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?,
    )
    .map_err(|e| e.to_string())?;
    // Each output column, row by row (a failing row fails the rule, not the run).
    let mut out = input.clone();
    let mut evaluated = Vec::with_capacity(outputs.len());
    for (c, e) in outputs.iter().zip(&exprs) {
        let qualified = qualify_row_columns(e, &row_names)?;
        let values = crate::eval::evaluate_qualified(ctx, &joined_rows, &schema, &qualified)
            .map_err(|m| m.replace(&qualified, e))?;
        out = with_column(&out, c, values.values.clone()).map_err(|e| e.to_string())?;
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
                crate::eval::describe(input, &on_columns, *row, true)
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
    failures.extend(
        enrich_failures(
            &joined_rows,
            &out,
            rule,
            &outputs[0],
            &format!(" (no match in {})", lookup.table),
            first_sql,
            first,
        )
        .into_iter()
        .filter(|(a, _)| !failed_rows.iter().any(|(r, _)| arrival[*r] == *a)),
    );
    failures.sort_by_key(|(a, _)| *a);
    Ok(Step {
        rows: out,
        changed: 0,
        failures,
        read_as_utc: 0,
    })
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
    allow_bronze: bool,
) -> std::result::Result<(RecordBatch, Vec<String>), String> {
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
    let df = ctx
        .sql_with_options(sql, queries_only())
        .await
        .map_err(df_err)?;
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
    if !read_bronze.is_empty() && !allow_bronze {
        read_bronze.sort();
        read_bronze.dedup();
        return Err(format!(
            "gold.{name} reads {}: gold reads silver only. Bronze holds raw, unchecked records (duplicates, rejected rows); build gold from silver. (An instructor can switch on the anti-pattern \"gold reads bronze\" to show what goes wrong.)",
            read_bronze.join(", ")
        ));
    }
    read_bronze.sort();
    read_bronze.dedup();
    let batch = collect_single(df, Some(GOLD_MAX_ROWS)).await?;
    if let Some(why) = crate::lake::unstorable_column(&batch.schema()) {
        return Err(format!("gold.{name}: {why}"));
    }
    Ok((batch, read_bronze))
}
