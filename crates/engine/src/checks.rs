//! Quality checks on three levels (seed `002_b94de4dc08a8f02d.txt` section 8):
//! row (a predicate every silver row must satisfy), schema (columns and
//! types), aggregate (bronze vs silver reconciliation, share filtered,
//! averages). Evaluated after every successful run.

use std::sync::Arc;

use datafusion::arrow::array::{Array, Float64Array, RecordBatch};
use datafusion::arrow::compute::{cast, sum};
use datafusion::arrow::datatypes::DataType;
use datafusion::catalog::MemTable;
use datafusion::prelude::SessionContext;
use serde::{Deserialize, Serialize};

use crate::api::Lang;
use crate::error::clean_datafusion_message;
use crate::model::{CheckKind, CheckLevel, PipelineDef};
use crate::pipeline::{collect_single, RunOutput};
use crate::source::ColumnType;

/// Outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckStatus {
    Pass,
    /// Holds, but something deserves a look (share filtered above the threshold, missing source column).
    Warn,
    Fail,
    /// The check itself could not run (bad SQL, unknown table).
    Error,
    /// A figure to read, not a pass/fail (averages bronze vs silver).
    Info,
}

/// Result of one check in the last run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    pub id: String,
    pub level: CheckLevel,
    pub description: String,
    pub status: CheckStatus,
    /// What was measured, in the playground's language ("0 rows violate", "6 of 266 (2.26%)").
    pub observed: String,
}

/// Evaluates every check against a run's output.
pub async fn evaluate(
    ctx: &SessionContext,
    def: &PipelineDef,
    out: &RunOutput,
    lang: Lang,
) -> Vec<CheckResult> {
    let mut results = Vec::with_capacity(def.checks.len());
    for c in &def.checks {
        let (status, observed) = match evaluate_one(ctx, def, &c.kind, out, lang).await {
            Ok(r) => r,
            Err(m) => (CheckStatus::Error, m),
        };
        results.push(CheckResult {
            id: c.id.clone(),
            level: c.level,
            description: c.description.clone(),
            status,
            observed,
        });
    }
    results
}

fn table<'a>(out: &'a RunOutput, name: &str) -> Result<&'a RecordBatch, String> {
    out.table(name)
        .ok_or_else(|| format!("table {name} does not exist"))
}

fn t(lang: Lang, en: String, ru: String) -> String {
    match lang {
        Lang::En => en,
        Lang::Ru => ru,
    }
}

async fn evaluate_one(
    ctx: &SessionContext,
    def: &PipelineDef,
    kind: &CheckKind,
    out: &RunOutput,
    lang: Lang,
) -> Result<(CheckStatus, String), String> {
    match kind {
        CheckKind::RowPredicate {
            table: name,
            predicate,
        } => {
            let batch = table(out, name)?;
            let mem = MemTable::try_new(batch.schema(), vec![vec![batch.clone()]])
                .map_err(|e| e.to_string())?;
            let df = ctx.read_table(Arc::new(mem)).map_err(|e| e.to_string())?;
            let expr = df
                .parse_sql_expr(predicate)
                .map_err(|e| clean_datafusion_message(&e.to_string()))?;
            let count = |e: datafusion::prelude::Expr| {
                let df = df.clone();
                async move {
                    let rows = df
                        .filter(e)
                        .map_err(|e| clean_datafusion_message(&e.to_string()))?;
                    Ok::<usize, String>(collect_single(rows, None).await?.num_rows())
                }
            };
            let bad = count(expr.clone().is_not_true()).await?;
            let unknown = count(expr.is_null()).await?;
            let status = if bad == 0 {
                CheckStatus::Pass
            } else {
                CheckStatus::Fail
            };
            let n = batch.num_rows();
            Ok((
                status,
                match (lang, unknown) {
                    (Lang::En, 0) => format!("{bad} of {n} rows violate"),
                    (Lang::En, u) => {
                        format!("{bad} of {n} rows violate ({u} because a value is NULL)")
                    }
                    (Lang::Ru, 0) => format!("нарушают {bad} из {n} строк"),
                    (Lang::Ru, u) => format!("нарушают {bad} из {n} строк ({u} из-за NULL)"),
                },
            ))
        }
        CheckKind::ColumnType {
            table: name,
            column,
            data_type,
        } => {
            let batch = table(out, name)?;
            let schema = batch.schema();
            let Ok(field) = schema.field_with_name(column) else {
                return Ok((
                    CheckStatus::Fail,
                    t(
                        lang,
                        format!("column {column} is missing"),
                        format!("колонки {column} нет"),
                    ),
                ));
            };
            let actual = ColumnType::from_arrow(field.data_type())
                .map(|t| t.sql_name().to_string())
                .unwrap_or_else(|| field.data_type().to_string());
            let expected = data_type.sql_name();
            if actual == expected {
                Ok((CheckStatus::Pass, actual))
            } else {
                Ok((
                    CheckStatus::Fail,
                    t(
                        lang,
                        format!("{actual}, expected {expected}"),
                        format!("{actual}, ожидался {expected}"),
                    ),
                ))
            }
        }
        CheckKind::ColumnsExist {
            table: name,
            columns,
        } => {
            let batch = table(out, name)?;
            let missing: Vec<&str> = columns
                .iter()
                .filter(|c| batch.schema().index_of(c).is_err())
                .map(String::as_str)
                .collect();
            if missing.is_empty() {
                Ok((
                    CheckStatus::Pass,
                    t(
                        lang,
                        format!("all {} present", columns.len()),
                        format!("все {} на месте", columns.len()),
                    ),
                ))
            } else {
                Ok((
                    CheckStatus::Fail,
                    t(
                        lang,
                        format!("missing: {}", missing.join(", ")),
                        format!("нет: {}", missing.join(", ")),
                    ),
                ))
            }
        }
        CheckKind::SourceColumnsPresent { bronze_table } => {
            let name = bronze_table.strip_prefix("bronze.").unwrap_or(bronze_table);
            match out.missing_columns.get(name) {
                None => Ok((
                    CheckStatus::Pass,
                    t(
                        lang,
                        "every declared column is in every batch".into(),
                        "все объявленные колонки есть в каждом батче".into(),
                    ),
                )),
                Some(missing) => {
                    let list: Vec<String> = missing
                        .iter()
                        .map(|m| match lang {
                            Lang::En => format!(
                                "{} (absent in {} of {} batches, read as NULL)",
                                m.column, m.batches_without, m.batches_total
                            ),
                            Lang::Ru => format!(
                                "{} (нет в {} из {} батчей, читается как NULL)",
                                m.column, m.batches_without, m.batches_total
                            ),
                        })
                        .collect();
                    Ok((CheckStatus::Warn, list.join("; ")))
                }
            }
        }
        CheckKind::Reconciliation {
            bronze_table,
            silver_table,
        } => {
            let bronze = table(out, bronze_table)?.num_rows();
            let silver = table(out, silver_table)?.num_rows();
            let silver_name = silver_table.strip_prefix("silver.").unwrap_or(silver_table);
            let quarantined = quarantined_rows(out, silver_name)?;
            let removed = out.removed.get(silver_table).copied();
            let status = if bronze == silver + quarantined + removed.unwrap_or(0) {
                CheckStatus::Pass
            } else {
                CheckStatus::Fail
            };
            let eq = if status == CheckStatus::Pass {
                "="
            } else {
                "≠"
            };
            Ok((
                status,
                match (lang, removed) {
                    (Lang::En, None) => format!("bronze {bronze} {eq} silver {silver} + quarantine {quarantined}"),
                    (Lang::Ru, None) => format!("bronze {bronze} {eq} silver {silver} + карантин {quarantined}"),
                    (Lang::En, Some(r)) => format!("bronze {bronze} {eq} silver {silver} + quarantine {quarantined} + duplicates/superseded {r}"),
                    (Lang::Ru, Some(r)) => format!("bronze {bronze} {eq} silver {silver} + карантин {quarantined} + дубли/устаревшие {r}"),
                },
            ))
        }
        CheckKind::FilteredShare {
            bronze_table,
            silver_table,
            warn_above_pct,
        } => {
            let bronze = table(out, bronze_table)?.num_rows();
            let silver = table(out, silver_table)?.num_rows();
            let dropped = bronze.saturating_sub(silver);
            let pct = if bronze == 0 {
                0.0
            } else {
                dropped as f64 * 100.0 / bronze as f64
            };
            let status = if pct > *warn_above_pct {
                CheckStatus::Warn
            } else {
                CheckStatus::Pass
            };
            Ok((
                status,
                t(
                    lang,
                    format!("{dropped} of {bronze} rows did not reach silver ({pct:.2}%, threshold {warn_above_pct}%)"),
                    format!("{dropped} из {bronze} строк не дошли до silver ({pct:.2}%, порог {warn_above_pct}%)"),
                ),
            ))
        }
        CheckKind::CompareAverage {
            silver_table,
            column,
        } => {
            let silver = table(out, silver_table)?;
            let silver_name = silver_table.strip_prefix("silver.").unwrap_or(silver_table);
            let source = def
                .silver
                .iter()
                .find(|s| s.name == silver_name)
                .and_then(|s| out.typed_bronze.get(&s.source))
                .ok_or_else(|| format!("{silver_table} has no bronze source"))?;
            let a = average(source, column)?;
            let b = average(silver, column)?;
            Ok((
                CheckStatus::Info,
                t(
                    lang,
                    format!("bronze {} → silver {}", fmt_avg(a), fmt_avg(b)),
                    format!("bronze {} → silver {}", fmt_avg(a), fmt_avg(b)),
                ),
            ))
        }
    }
}

/// Rows of `silver.quarantine` for `silver_name` that are still quarantined
/// (not released by a later run).
fn quarantined_rows(out: &RunOutput, silver_name: &str) -> Result<usize, String> {
    let q = table(out, "silver.quarantine")?;
    let col = q
        .column_by_name("silver_table")
        .and_then(|c| {
            c.as_any()
                .downcast_ref::<datafusion::arrow::array::StringArray>()
        })
        .ok_or("quarantine has no silver_table column")?;
    let released = q
        .column_by_name("released_in_run")
        .ok_or("quarantine has no released_in_run column")?;
    Ok((0..q.num_rows())
        .filter(|&i| col.value(i) == silver_name && released.is_null(i))
        .count())
}

fn fmt_avg(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.2}"))
        .unwrap_or_else(|| "NULL".into())
}

/// Mean of the non-NULL values of a numeric column.
fn average(batch: &RecordBatch, column: &str) -> Result<Option<f64>, String> {
    let arr = batch
        .column_by_name(column)
        .ok_or_else(|| format!("column {column} is missing"))?;
    let f = cast(arr, &DataType::Float64).map_err(|e| e.to_string())?;
    let f = f
        .as_any()
        .downcast_ref::<Float64Array>()
        .ok_or("not numeric")?;
    let n = f.len() - f.null_count();
    Ok(sum(f).map(|s| s / n as f64).filter(|_| n > 0))
}
