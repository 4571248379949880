//! Row trail (lineage): for a silver, quarantine or gold row, the bronze
//! records it came from and what every rule did to them.
//!
//! - A silver row: the bronze record that stands for it now, and the records
//!   the merge folded into it (duplicates, superseded states), each with its
//!   file, batch and line and every rule's outcome on it (re-run on just
//!   those records with the current rules).
//! - A quarantine row: the rejected record and the rule outcomes that sent it there.
//! - A gold row: the silver rows it was computed from. For a model that is
//!   one GROUP BY (the usual gold shape), the rows of its input (after its
//!   WHERE and JOINs) whose group values equal the gold row's; for a model
//!   without aggregation, the input rows that produce the same values.

use medallion_protocol::TableName;
use std::collections::{BTreeMap, HashSet};

use datafusion::arrow::array::{Array, RecordBatch, StringArray};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::dataframe::DataFrame;
use datafusion::logical_expr::{Expr, LogicalPlan};
use datafusion::prelude::SessionContext;

use crate::bronze::BatchInfo;
use crate::error::EngineError;
use crate::model::PipelineDef;
use crate::output::RunOutput;
use crate::query::{collect_single, QueryError};
use crate::silver::build::trace_silver;
use crate::silver::explode::ExplodeError;
use crate::silver::merge::RemovedRow;
use crate::silver::source::{parse_bronze, parse_bronze_events, Parsed};
use crate::silver::stage::{Lookups, RuleError};
use medallion_protocol::lineage::TraceEntry;

pub use medallion_protocol::lineage::{RowTrail, TrailRecord, TrailSilverRow};

/// Why the trail of a row cannot be shown (the request's error).
#[derive(Debug, thiserror::Error)]
pub(crate) enum TrailError {
    /// There is no table `table` (qualified) in the last good run.
    #[error("there is no table {table}")]
    NoTable { table: String },
    /// Row `row` (0-based; shown 1-based) is past the `rows` rows of `table`.
    #[error("{table} has {rows} rows; there is no row {}", .row + 1)]
    NoRow {
        table: String,
        rows: usize,
        row: usize,
    },
    /// A bronze row: nothing to trace.
    #[error("a bronze row is its own source: its file, batch and line are in its audit columns")]
    BronzeRow,
    /// The row has no `_event_id` to follow.
    #[error("this row has no _event_id")]
    NoEventId,
    /// A quarantine row without its `silver_table`.
    #[error("quarantine row without silver_table")]
    NoSilverTable,
    /// Silver table `table` (name without the layer) is not in the pipeline.
    #[error("silver.{table} is not defined")]
    SilverNotDefined { table: String },
    /// Bronze table `table` (name without the layer) is not in the pipeline.
    #[error("bronze.{table} is not defined")]
    BronzeNotDefined { table: String },
    /// `table` is no gold model of the pipeline.
    #[error("{table} is not a gold model")]
    NotGold { table: String },
    /// The child table's records could not be exploded again.
    #[error(transparent)]
    Explode(#[from] ExplodeError),
    /// The table's rules failed on the replayed records.
    #[error(transparent)]
    Rules(#[from] RuleError),
    /// The gold model's input rows could not be read.
    #[error(transparent)]
    Query(#[from] QueryError),
    /// DataFusion failed planning the gold model's input.
    #[error(transparent)]
    DataFusion(#[from] datafusion::error::DataFusionError),
    /// Arrow failed picking the records.
    #[error(transparent)]
    Arrow(#[from] datafusion::arrow::error::ArrowError),
    /// Bronze could not be read with its schema.
    #[error(transparent)]
    Engine(#[from] EngineError),
}

impl From<TrailError> for EngineError {
    fn from(e: TrailError) -> Self {
        EngineError::Request(e.to_string())
    }
}

/// Everything the trail needs from the playground.
pub(crate) struct TrailInput<'a> {
    pub ctx: &'a SessionContext,
    pub def: &'a PipelineDef,
    pub bronze: &'a BTreeMap<String, Vec<(BatchInfo, RecordBatch)>>,
    pub out: &'a RunOutput,
}

fn opts() -> FormatOptions<'static> {
    FormatOptions::default()
        .with_null("NULL")
        .with_timestamp_format(Some("%Y-%m-%d %H:%M:%S"))
}

/// Row `row` of `batch` as `column=value, ...` (lineage columns left out).
pub(crate) fn describe_row(batch: &RecordBatch, row: usize) -> String {
    let opts = opts();
    batch
        .schema()
        .fields()
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.name().starts_with('_') && f.name() != "raw_payload")
        .filter_map(|(i, f)| {
            ArrayFormatter::try_new(batch.column(i).as_ref(), &opts)
                .ok()
                .map(|fmt| format!("{}={}", f.name(), fmt.value(row)))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn text(batch: &RecordBatch, column: &str, row: usize) -> Option<String> {
    batch
        .column_by_name(column)
        .and_then(|c| c.as_any().downcast_ref::<StringArray>())
        .filter(|a| a.is_valid(row))
        .map(|a| a.value(row).to_string())
}

/// The trail of row `row` of table `table`.
pub(crate) async fn trail(
    input: TrailInput<'_>,
    table: &TableName,
    row: usize,
) -> Result<RowTrail, TrailError> {
    let batch = input.out.table(table).ok_or_else(|| TrailError::NoTable {
        table: table.to_string(),
    })?;
    if row >= batch.num_rows() {
        return Err(TrailError::NoRow {
            table: table.to_string(),
            rows: batch.num_rows(),
            row,
        });
    }
    let shown = describe_row(batch, row);
    if table.is_gold() {
        return gold_trail(&input, table, batch, row, shown).await;
    }
    if table.is_bronze() {
        return Err(TrailError::BronzeRow);
    }
    let event = text(batch, "_event_id", row).ok_or(TrailError::NoEventId)?;
    let silver_name = if table.is_quarantine() {
        text(batch, "silver_table", row).ok_or(TrailError::NoSilverTable)?
    } else {
        table.name().to_string()
    };
    // A child table's row is one element of its record: its position picks
    // that element's rule outcomes.
    let position = input
        .def
        .silver
        .iter()
        .find(|s| s.name == silver_name && !table.is_quarantine())
        .and_then(|s| s.explode.as_ref())
        .map(|e| {
            batch
                .column_by_name(&e.position_column)
                .and_then(|c| {
                    c.as_any()
                        .downcast_ref::<datafusion::arrow::array::Int32Array>()
                })
                .filter(|a| a.is_valid(row))
                .map(|a| a.value(row))
        });
    let mut t = silver_trail(&input, &silver_name, &event, position).await?;
    t.table = table.clone();
    t.row = shown;
    Ok(t)
}

/// Bronze records behind silver row `event` of silver table `silver_name`.
/// `position`: for a row of a child table, the element's position (NULL for
/// the row an outer explode adds); only that element's rule outcomes are kept.
async fn silver_trail(
    input: &TrailInput<'_>,
    silver_name: &str,
    event: &str,
    position: Option<Option<i32>>,
) -> Result<RowTrail, TrailError> {
    let def = input
        .def
        .silver
        .iter()
        .find(|s| s.name == silver_name)
        .ok_or_else(|| TrailError::SilverNotDefined {
            table: silver_name.to_string(),
        })?;
    let source =
        input
            .def
            .bronze_table(&def.source)
            .ok_or_else(|| TrailError::BronzeNotDefined {
                table: def.source.clone(),
            })?;
    // The record itself and every record the merge folded into it (transitively).
    let log: &[RemovedRow] = input
        .out
        .merge_log
        .get(&TableName::silver(silver_name))
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let mut wanted: HashSet<String> = HashSet::from([event.to_string()]);
    let mut roles: BTreeMap<String, String> =
        BTreeMap::from([(event.to_string(), "kept".to_string())]);
    loop {
        let before = wanted.len();
        for r in log {
            if r.kept_event_id.as_ref().is_some_and(|k| wanted.contains(k))
                && wanted.insert(r.event_id.clone())
            {
                roles.insert(r.event_id.clone(), format!("{:?}", r.why).to_lowercase());
            }
        }
        if wanted.len() == before {
            break;
        }
    }
    // Those records, as bronze batches of their own (`whole`: their batches,
    // read whole so each record is read as the run read it).
    let mut mini: Vec<(BatchInfo, RecordBatch)> = Vec::new();
    let mut whole: Vec<(BatchInfo, RecordBatch)> = Vec::new();
    for (info, b) in input
        .bronze
        .get(&def.source)
        .map(Vec::as_slice)
        .unwrap_or(&[])
    {
        let Some(ids) = b
            .column_by_name("_event_id")
            .and_then(|c| c.as_any().downcast_ref::<StringArray>())
        else {
            continue;
        };
        let mask: datafusion::arrow::array::BooleanArray = (0..b.num_rows())
            .map(|i| Some(wanted.contains(ids.value(i))))
            .collect();
        if mask.true_count() > 0 {
            let rows = datafusion::arrow::compute::filter_record_batch(b, &mask)?;
            mini.push((info.clone(), rows));
            whole.push((info.clone(), b.clone()));
        }
    }
    // A rule whose value depends on other rows (a window, an aggregate)
    // gives the run's result only over the whole table: trace that, and
    // keep the records of this row.
    let whole_table = def
        .rules
        .rules
        .iter()
        .filter(|r| r.enabled)
        .map(|r| r.resolved_expression())
        .chain(def.select.iter().cloned())
        .chain(def.merge.iter().filter_map(|m| m.delete_when.clone()))
        .any(|sql| crate::silver::eval::uses_other_rows(input.ctx, &sql));
    let all = input
        .bronze
        .get(&def.source)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let parsed = match crate::silver::explode::for_silver(
        def,
        Some(source),
        if whole_table { all } else { &mini },
    ) {
        Some(exploded) => exploded?.parsed,
        None if whole_table => parse_bronze(&source.schema, all)?,
        None => parse_bronze_events(&source.schema, &whole, &wanted)?,
    };
    // Lookups see what the run saw: bronze tables read with their schemas, silver tables as built.
    let mut bronze_parsed: BTreeMap<String, Parsed> = BTreeMap::new();
    for b in &input.def.bronze {
        if def.rules.rules.iter().any(|r| {
            r.enabled
                && r.lookup
                    .as_ref()
                    .is_some_and(|l| l.table == TableName::bronze(&b.name))
        }) {
            let batches = input.bronze.get(&b.name).map(Vec::as_slice).unwrap_or(&[]);
            bronze_parsed.insert(b.name.clone(), parse_bronze(&b.schema, batches)?);
        }
    }
    let silver_tables: BTreeMap<TableName, RecordBatch> = input
        .out
        .tables
        .iter()
        .filter(|t| t.name.is_silver_table())
        .map(|t| (t.name.clone(), t.batch.clone()))
        .collect();
    let lookups = Lookups {
        bronze: &bronze_parsed,
        silver: &silver_tables,
    };
    let (mut entries, rejected) = trace_silver(input.ctx, def, &parsed, &lookups).await?;
    let merge_ties = open_merge_rows(input.out, silver_name);
    if let (Some(wanted), Some(spec)) = (position, &def.explode) {
        let positions = parsed
            .rows
            .column_by_name(&spec.position_column)
            .and_then(|c| {
                c.as_any()
                    .downcast_ref::<datafusion::arrow::array::Int32Array>()
            })
            .cloned();
        if let Some(p) = positions {
            entries.retain(|(_, e)| {
                let at = e.arrival as usize;
                at < p.len() && p.is_valid(at).then(|| p.value(at)) == wanted
            });
        }
    }
    let mut records = Vec::new();
    for (info, b) in &mini {
        for i in 0..b.num_rows() {
            let Some(ev) = text(b, "_event_id", i) else {
                continue;
            };
            let mut steps: Vec<TraceEntry> = Vec::new();
            if let Some(r) = parsed.rejected.iter().find(|r| r.event_id == ev) {
                steps.push(TraceEntry {
                    arrival: 0,
                    rule_id: crate::silver::source::PARSE_RULE_ID.into(),
                    kind: crate::silver::rules::RuleKind::Filter,
                    text: format!("failed (drop): {}", r.reason),
                    failed: true,
                });
            }
            steps.extend(
                entries
                    .iter()
                    .filter(|(e, _)| *e == ev)
                    .map(|(_, s)| s.clone()),
            );
            // An ambiguous tie passes every rule; the merge quarantined it.
            let tie = merge_ties.get(ev.as_str());
            if let Some(reason) = tie {
                steps.push(TraceEntry {
                    arrival: 0,
                    rule_id: "merge".into(),
                    kind: crate::silver::rules::RuleKind::Filter,
                    text: format!("failed (drop): {reason}"),
                    failed: true,
                });
            }
            let quarantined = parsed.rejected.iter().any(|r| r.event_id == ev)
                || rejected.iter().any(|r| r.event_id == ev)
                || tie.is_some();
            records.push(TrailRecord {
                event_id: ev.clone(),
                batch_id: info.batch_id.clone(),
                source_file: text(b, "_source_file", i).unwrap_or_default(),
                ingest_ts_micros: Some(info.ingest_ts_micros),
                raw_payload: text(b, "raw_payload", i)
                    .or_else(|| text(b, "_corrupt_record", i))
                    .unwrap_or_else(|| describe_row(b, i)),
                role: if quarantined {
                    "quarantined".into()
                } else {
                    roles.get(&ev).cloned().unwrap_or_else(|| "kept".into())
                },
                steps,
            });
        }
    }
    let note = (records.len() < wanted.len()).then(|| {
        "some records of this row are no longer in bronze (erased by a right-to-be-forgotten request)".to_string()
    });
    Ok(RowTrail {
        table: TableName::silver(silver_name),
        row: String::new(),
        records,
        silver_rows: vec![],
        note,
    })
}

/// `_event_id` → reason of the open quarantine rows of `silver_name` that
/// the merge put there (ambiguous ties).
fn open_merge_rows(out: &RunOutput, silver_name: &str) -> BTreeMap<String, String> {
    let mut rows = BTreeMap::new();
    let Some(q) = out.table(TableName::quarantine()) else {
        return rows;
    };
    let s = |name: &str| {
        q.column_by_name(name)
            .and_then(|c| c.as_any().downcast_ref::<StringArray>())
    };
    let closed = q.column_by_name("closed_in_run");
    if let (Some(t), Some(rule), Some(ev), Some(reason), Some(closed)) = (
        s("silver_table"),
        s("rule_id"),
        s("_event_id"),
        s("reason"),
        closed,
    ) {
        for i in 0..q.num_rows() {
            if t.value(i) == silver_name && rule.value(i) == "merge" && closed.is_null(i) {
                rows.insert(ev.value(i).to_string(), reason.value(i).to_string());
            }
        }
    }
    rows
}

/// The silver rows a gold row was computed from.
async fn gold_trail(
    input: &TrailInput<'_>,
    table: &TableName,
    gold: &RecordBatch,
    row: usize,
    shown: String,
) -> Result<RowTrail, TrailError> {
    let model = input
        .def
        .gold
        .iter()
        .find(|g| TableName::gold(&g.name) == *table)
        .ok_or_else(|| TrailError::NotGold {
            table: table.to_string(),
        })?;
    let df = input.ctx.sql(&model.sql).await?;
    let mut plan = df.logical_plan().clone();
    while let LogicalPlan::Sort(s) = &plan {
        plan = s.input.as_ref().clone();
    }
    while let LogicalPlan::Limit(l) = &plan {
        plan = l.input.as_ref().clone();
    }
    let LogicalPlan::Projection(proj) = &plan else {
        return Ok(untraced(
            table,
            shown,
            "this model's shape is not traced (expected SELECT … [GROUP BY …])",
        ));
    };
    // (expression over the input, gold column index) pairs to match on.
    let (input_plan, keys): (LogicalPlan, Vec<(Expr, usize)>) = match proj.input.as_ref() {
        LogicalPlan::Aggregate(agg) => {
            let agg_schema = agg.schema.clone();
            let mut keys = Vec::new();
            for (i, e) in proj.expr.iter().enumerate() {
                let inner = match e {
                    Expr::Alias(a) => a.expr.as_ref(),
                    other => other,
                };
                if let Expr::Column(c) = inner {
                    if let Some(g) = agg
                        .group_expr
                        .iter()
                        .enumerate()
                        .find(|(gi, _)| agg_schema.qualified_field(*gi).1.name() == &c.name)
                        .map(|(_, g)| g.clone())
                    {
                        keys.push((g, i));
                    }
                }
            }
            (agg.input.as_ref().clone(), keys)
        }
        other => (
            other.clone(),
            proj.expr
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    (
                        match e {
                            Expr::Alias(a) => a.expr.as_ref().clone(),
                            other => other.clone(),
                        },
                        i,
                    )
                })
                .collect(),
        ),
    };
    // Lineage columns of the input: one `_event_id` per silver table read.
    let aliases = table_aliases(&input_plan);
    // (A qualifier that names no table, such as a CTE's, is not followed.)
    let lineage: Vec<(TableName, Expr)> = input_plan
        .schema()
        .iter()
        .filter(|(_, f)| f.name() == "_event_id")
        .filter_map(|(q, f)| {
            let qualifier = q.map(|q| q.to_string()).unwrap_or_default();
            let name = aliases.get(&qualifier).unwrap_or(&qualifier);
            Some((
                TableName::parse(name).ok()?,
                Expr::Column(datafusion::common::Column::new(q.cloned(), f.name())),
            ))
        })
        .collect();
    if lineage.is_empty() {
        return Ok(untraced(
            table,
            shown,
            "the model's input has no _event_id to follow",
        ));
    }
    let mut select: Vec<Expr> = keys
        .iter()
        .enumerate()
        .map(|(k, (e, _))| e.clone().alias(format!("__key{k}")))
        .collect();
    select.extend(
        lineage
            .iter()
            .enumerate()
            .map(|(k, (_, e))| e.clone().alias(format!("__event{k}"))),
    );
    let rows_df = DataFrame::new(input.ctx.state(), input_plan).select(select)?;
    let rows = collect_single(rows_df, Some(crate::query::GOLD_MAX_ROWS)).await?;
    let opts = opts();
    let cell = |b: &RecordBatch, col: usize, r: usize| -> String {
        ArrayFormatter::try_new(b.column(col).as_ref(), &opts)
            .map(|f| f.value(r).to_string())
            .unwrap_or_default()
    };
    let wanted: Vec<String> = keys.iter().map(|(_, gi)| cell(gold, *gi, row)).collect();
    let mut silver_rows = Vec::new();
    let mut seen = HashSet::new();
    for r in 0..rows.num_rows() {
        if (0..keys.len()).any(|k| cell(&rows, k, r) != wanted[k]) {
            continue;
        }
        for (k, (name, _)) in lineage.iter().enumerate() {
            let col = keys.len() + k;
            let ev = cell(&rows, col, r);
            if ev == "NULL" || !seen.insert((name.clone(), ev.clone())) {
                continue;
            }
            let row_text = input
                .out
                .table(name)
                .and_then(|t| {
                    let ids = t
                        .column_by_name("_event_id")?
                        .as_any()
                        .downcast_ref::<StringArray>()?
                        .clone();
                    (0..t.num_rows())
                        .find(|&i| ids.value(i) == ev)
                        .map(|i| describe_row(t, i))
                })
                .unwrap_or_default();
            silver_rows.push(TrailSilverRow {
                table: name.clone(),
                event_id: ev,
                row: row_text,
            });
        }
    }
    Ok(RowTrail {
        table: table.clone(),
        row: shown,
        records: vec![],
        silver_rows,
        note: Some(if keys.is_empty() {
            "the model aggregates every input row into one".to_string()
        } else {
            format!(
                "input rows of the model (after its WHERE and JOINs) with the same {}",
                keys.iter()
                    .map(|(_, gi)| gold.schema().field(*gi).name().clone())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }),
    })
}

fn untraced(table: &TableName, row: String, why: &str) -> RowTrail {
    RowTrail {
        table: table.clone(),
        row,
        records: vec![],
        silver_rows: vec![],
        note: Some(why.to_string()),
    }
}

/// Qualifier used in a plan → the table it scans (`o` → `silver.orders`).
fn table_aliases(plan: &LogicalPlan) -> BTreeMap<String, String> {
    use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
    let mut out = BTreeMap::new();
    let _ = plan.apply(|node| {
        match node {
            LogicalPlan::TableScan(scan) => {
                let name = scan.table_name.to_string();
                out.insert(name.clone(), name);
            }
            LogicalPlan::SubqueryAlias(a) => {
                if let LogicalPlan::TableScan(scan) = a.input.as_ref() {
                    out.insert(a.alias.to_string(), scan.table_name.to_string());
                }
            }
            _ => {}
        }
        Ok(TreeNodeRecursion::Continue)
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_past_the_end_is_named_from_one() {
        let e = TrailError::NoRow {
            table: "silver.orders".into(),
            rows: 3,
            row: 3,
        };
        assert_eq!(e.to_string(), "silver.orders has 3 rows; there is no row 4");
    }
}
