//! Quality checks on three levels (seed `002_b94de4dc08a8f02d.txt` section 8):
//! row (a predicate every silver row must satisfy; dbt's `not_null`,
//! `unique`, `accepted_values`, `accepted_range`, `relationships`), schema
//! (columns and types; a model contract), aggregate (bronze vs silver
//! reconciliation, share filtered, averages, a custom SQL audit that must
//! return no rows, as in SQLMesh). Each check has a severity (`error` fails,
//! `warn` warns) and shows a sample of the rows that violate it. Evaluated
//! after every successful run; the playground keeps the results per run.

use medallion_protocol::{Layer, TableName};
use std::sync::Arc;

use datafusion::arrow::array::{Array, Float64Array, RecordBatch};
use datafusion::arrow::compute::{cast, sum};
use datafusion::arrow::datatypes::DataType;
use datafusion::catalog::MemTable;
use datafusion::prelude::SessionContext;

use crate::api::{tr as t, Lang};
use crate::error::{clean_datafusion_message, EngineError};
use crate::model::{CheckKind, PipelineDef, Severity};
use crate::output::RunOutput;
use crate::query::{collect_single, QueryError};
use crate::silver::source::{ArrowColumnType, ColumnType};

pub use medallion_protocol::checks::{CheckResult, CheckStatus, SAMPLE_ROWS};
pub use reuse::CheckCache;

mod reuse;

/// Why a check could not be evaluated: its status is `error` and this is
/// what it observed (in English, whatever the language of the page).
#[derive(Debug, thiserror::Error)]
pub(crate) enum CheckError {
    /// The check names a `table` the run did not produce.
    #[error("table {table} does not exist")]
    NoTable { table: String },
    /// The check names a bronze `table` (name without the layer) that is not defined.
    #[error("table bronze.{table} does not exist")]
    NoBronzeTable { table: String },
    /// The check needs a table of `layer` and names `table`, of another layer.
    #[error("{table} is not a {layer} table")]
    WrongLayer { table: TableName, layer: Layer },
    /// An average over silver `table`, whose bronze rows are not there.
    #[error("{table} has no bronze source")]
    NoBronzeSource { table: String },
    /// An average over a `column` the table does not have.
    #[error("column {column} is missing")]
    NoColumn { column: String },
    /// An average over a column that is no number.
    #[error("not numeric")]
    NotNumeric,
    /// `silver.quarantine` without its `column`.
    #[error("quarantine has no {column} column")]
    QuarantineColumn { column: &'static str },
    /// An accepted_range check without bounds.
    #[error("accepted_range needs min, max or both")]
    RangeWithoutBounds,
    /// An audit that is not one SELECT.
    #[error("an audit is one SELECT that returns the bad rows")]
    AuditNotQuery,
    /// An audit whose SQL does not parse.
    #[error("SQL syntax: {0}")]
    AuditSyntax(datafusion::sql::sqlparser::parser::ParserError),
    /// The check's SQL (a predicate, a query) does not plan; DataFusion's
    /// message, cleaned.
    #[error("{0}")]
    Plan(String),
    /// A check kind evaluated with SQL was sent the other way (an engine bug).
    #[error("internal: SQL check")]
    SqlCheck,
    /// The check's query was refused or failed (size, parallel plan, rows).
    #[error(transparent)]
    Query(#[from] QueryError),
    /// DataFusion failed reading the table.
    #[error(transparent)]
    DataFusion(datafusion::error::DataFusionError),
    /// Arrow failed casting the column.
    #[error(transparent)]
    Arrow(#[from] datafusion::arrow::error::ArrowError),
}

impl From<CheckError> for EngineError {
    fn from(e: CheckError) -> Self {
        EngineError::Request(e.to_string())
    }
}

/// A planning error of a check's SQL, cleaned for reading.
fn plan(e: datafusion::error::DataFusionError) -> CheckError {
    CheckError::Plan(clean_datafusion_message(&e.to_string()))
}

/// Evaluates every check against a run's output.
pub async fn evaluate(
    ctx: &SessionContext,
    def: &PipelineDef,
    out: &RunOutput,
    lang: Lang,
) -> Vec<CheckResult> {
    evaluate_reusing(ctx, def, out, lang, None).await.0
}

/// [`evaluate`], taking from `kept` the result of each check whose tables
/// are the very same rows as when it was kept ([`reuse`]). Returns the
/// results and what a later evaluation may take again (every reusable
/// check of this one, kept or computed).
pub async fn evaluate_reusing(
    ctx: &SessionContext,
    def: &PipelineDef,
    out: &RunOutput,
    lang: Lang,
    kept: Option<&CheckCache>,
) -> (Vec<CheckResult>, CheckCache) {
    let mut results = Vec::with_capacity(def.checks.len());
    let mut cache = CheckCache::default();
    for c in &def.checks {
        let reusable = reuse::tables_read(ctx, &c.kind)
            .and_then(|names| {
                let keys = names.first().map(|t| keys_of(def, t)).unwrap_or_default();
                reuse::rows_of(out, &names).map(|rows| (keys, rows))
            });
        let found = match (&reusable, kept) {
            (Some((keys, rows)), Some(kept)) => kept.find(&c.kind, lang, keys, rows).cloned(),
            _ => None,
        };
        let reused = found.is_some();
        let raw = match found {
            Some(raw) => raw,
            None => evaluate_raw(ctx, def, &c.kind, out, lang).await,
        };
        if let Some((keys, rows)) = reusable {
            cache.keep(&c.kind, lang, keys, rows, raw.clone(), reused);
        }
        let (status, observed, sample, nulls) = raw;
        let status = match (status, c.severity) {
            (CheckStatus::Fail, Severity::Warn) => CheckStatus::Warn,
            (s, _) => s,
        };
        let (status, observed) = match not_refreshed_by(&c.kind, out) {
            None => (status, observed),
            Some((t, true)) => (
                CheckStatus::Info,
                crate::api::tr(
                    lang,
                    format!("not evaluated: {t} was not refreshed by this run, so it and the quarantine need not account for every bronze record ({observed})"),
                    format!("не оценивалась: {t} не обновлена этим запуском, поэтому она и карантин могут учитывать не все записи bronze ({observed})"),
                ),
            ),
            Some((t, false)) => (
                status,
                crate::api::tr(
                    lang,
                    format!("{observed} (on the last good version of {t}: this run did not refresh it)"),
                    format!("{observed} (по последней успешной версии {t}: этот запуск её не обновил)"),
                ),
            ),
        };
        results.push(CheckResult {
            id: c.id.clone(),
            level: c.level,
            description: c.description.clone(),
            status,
            observed,
            severity: c.severity,
            sample,
            nulls,
        });
    }
    (results, cache)
}

/// One check's result over `out` before its severity and the
/// not-refreshed note (an error to evaluate is the check's `error` status).
async fn evaluate_raw(
    ctx: &SessionContext,
    def: &PipelineDef,
    kind: &CheckKind,
    out: &RunOutput,
    lang: Lang,
) -> reuse::Raw {
    match evaluate_sql_check(ctx, def, kind, lang).await {
        Some(Ok(o)) => {
            let observed = match o.nulls {
                Some(n) => format!("{}; {}", o.observed, nulls_seen(lang, n)),
                None => o.observed,
            };
            (o.status, observed, o.sample, o.nulls)
        }
        Some(Err(e)) => (CheckStatus::Error, e.to_string(), vec![], None),
        None => match evaluate_one(ctx, def, kind, out, lang).await {
            Ok((status, observed, nulls)) => {
                let sample = match (kind, status) {
                    (CheckKind::RowPredicate { table, predicate }, CheckStatus::Fail) => {
                        let sql = format!(
                            "SELECT * FROM {} WHERE ({predicate}) IS NOT TRUE",
                            table_sql(table)
                        );
                        match violations(ctx, &sql).await {
                            Ok((_, bad)) => sample_rows(&bad, &keys_of(def, table)),
                            Err(_) => vec![],
                        }
                    }
                    _ => vec![],
                };
                (status, observed, sample, nulls)
            }
            Err(e) => (CheckStatus::Error, e.to_string(), vec![], None),
        },
    }
}

/// The table of check `kind` that the run did not refresh
/// ([`RunOutput::not_refreshed`]), and whether the check compares it with
/// bronze (the table keeps its last good rows while the quarantine and
/// bronze are this run's, so the comparison says nothing this run).
fn not_refreshed_by(kind: &CheckKind, out: &RunOutput) -> Option<(TableName, bool)> {
    let stale = |t: &TableName| out.not_refreshed.contains(t);
    match kind {
        CheckKind::Reconciliation { silver_table, .. }
        | CheckKind::FilteredShare { silver_table, .. }
        | CheckKind::CompareAverage { silver_table, .. } => {
            stale(silver_table).then(|| (silver_table.clone(), true))
        }
        CheckKind::Relationships { table, to, .. } => [table, to]
            .into_iter()
            .find(|t| stale(t))
            .map(|t| (t.clone(), false)),
        CheckKind::RowPredicate { table, .. }
        | CheckKind::ColumnType { table, .. }
        | CheckKind::ColumnsExist { table, .. }
        | CheckKind::NotNull { table, .. }
        | CheckKind::Unique { table, .. }
        | CheckKind::AcceptedValues { table, .. }
        | CheckKind::AcceptedRange { table, .. }
        | CheckKind::Contract { table, .. } => stale(table).then(|| (table.clone(), false)),
        CheckKind::SourceColumnsPresent { .. }
        | CheckKind::TimestampOffsets { .. }
        | CheckKind::Audit { .. } => None,
    }
}

/// Open quarantine rows (not closed by a later run) of silver table `t`.
fn open_quarantine_rows(out: &RunOutput, t: &TableName) -> usize {
    use datafusion::arrow::array::{Array, StringArray};
    let Some(q) = out.table(TableName::quarantine()) else {
        return 0;
    };
    let Some(names) = q
        .column_by_name("silver_table")
        .and_then(|c| c.as_any().downcast_ref::<StringArray>())
    else {
        return 0;
    };
    let closed = q.column_by_name("closed_in_run");
    (0..q.num_rows())
        .filter(|&i| names.value(i) == t.name() && closed.is_none_or(|c| c.is_null(i)))
        .count()
}

/// Reconciliation of a child table (see [`crate::silver::explode`]): its rows are
/// array elements, so the exploded rows (elements, plus one per record
/// without elements on an outer explode, plus one per unreadable record)
/// must equal silver + open quarantine + removed by merge. The text also
/// says how many records had an empty, `null` or missing array.
fn reconcile_child(
    e: &crate::silver::explode::ExplodeStats,
    silver: usize,
    quarantined: usize,
    removed: Option<usize>,
    lang: Lang,
) -> (CheckStatus, String) {
    let right = silver + quarantined + removed.unwrap_or(0);
    let (status, eq) = if e.rows == right {
        (CheckStatus::Pass, "=")
    } else {
        (CheckStatus::Fail, "≠")
    };
    let removed = |en: bool| match (removed, en) {
        (Some(r), true) => format!(" + removed by merge {r}"),
        (Some(r), false) => format!(" + удалено слиянием {r}"),
        (None, _) => String::new(),
    };
    let text = match lang {
        Lang::En => format!(
            "bronze {} records → {} exploded rows ({} elements; records without elements: {} empty, {} null, {} missing; {} unreadable) {eq} silver {silver} + quarantine {quarantined}{}",
            e.records, e.rows, e.elements, e.empty, e.null, e.missing, e.unreadable, removed(true)
        ),
        Lang::Ru => format!(
            "bronze {} записей → {} строк после explode ({} элементов; записи без элементов: {} пустых, {} null, {} без ключа; {} нечитаемых) {eq} silver {silver} + карантин {quarantined}{}",
            e.records, e.rows, e.elements, e.empty, e.null, e.missing, e.unreadable, removed(false)
        ),
    };
    (status, text)
}

fn table<'a>(out: &'a RunOutput, name: &TableName) -> Result<&'a RecordBatch, CheckError> {
    out.table(name).ok_or_else(|| CheckError::NoTable {
        table: name.to_string(),
    })
}

/// The name within its layer of `table`, which must be of `layer`.
fn in_layer(table: &TableName, layer: Layer) -> Result<&str, CheckError> {
    if table.layer() == layer && !table.is_quarantine() {
        Ok(table.name())
    } else {
        Err(CheckError::WrongLayer {
            table: table.clone(),
            layer,
        })
    }
}

/// A check evaluated over the run's tables: status, text, NULLs seen (see
/// [`CheckResult::nulls`]).
type Evaluated = (CheckStatus, String, Option<usize>);

/// `text`, with `; 2 NULLs seen` when `nulls` is above 0.
fn noting_nulls(lang: Lang, text: String, nulls: usize) -> String {
    if nulls == 0 {
        text
    } else {
        format!("{text}; {}", nulls_seen(lang, nulls))
    }
}

/// NULL values of the columns of `batch` named in `columns` (absent ones count none).
fn null_values<'a>(batch: &RecordBatch, columns: impl IntoIterator<Item = &'a str>) -> usize {
    columns
        .into_iter()
        .filter_map(|c| batch.column_by_name(c))
        .map(|a| a.null_count())
        .sum()
}

/// Readable rows of bronze table `name` (typed, declared columns) and its declared columns.
fn typed_bronze<'a>(
    def: &'a PipelineDef,
    out: &'a RunOutput,
    name: &str,
) -> Result<(Option<&'a RecordBatch>, &'a crate::model::BronzeTableDef), CheckError> {
    let b = def
        .bronze_table(name)
        .ok_or_else(|| CheckError::NoBronzeTable {
            table: name.to_string(),
        })?;
    Ok((out.typed_bronze.get(name), b))
}

async fn evaluate_one(
    ctx: &SessionContext,
    def: &PipelineDef,
    kind: &CheckKind,
    out: &RunOutput,
    lang: Lang,
) -> Result<Evaluated, CheckError> {
    match kind {
        CheckKind::RowPredicate {
            table: name,
            predicate,
        } => {
            let batch = table(out, name)?;
            let mem = MemTable::try_new(batch.schema(), vec![vec![batch.clone()]])
                .map_err(CheckError::DataFusion)?;
            let df = ctx
                .read_table(Arc::new(mem))
                .map_err(CheckError::DataFusion)?;
            let expr = df.parse_sql_expr(predicate).map_err(plan)?;
            let count = |e: datafusion::prelude::Expr| {
                let df = df.clone();
                async move {
                    let rows = df.filter(e).map_err(plan)?;
                    Ok::<usize, CheckError>(collect_single(rows, None).await?.num_rows())
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
                Some(unknown),
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
                    None,
                ));
            };
            let actual = ColumnType::from_arrow(field.data_type())
                .map(|t| t.sql_name().to_string())
                .unwrap_or_else(|| field.data_type().to_string());
            let expected = data_type.sql_name();
            let nulls = null_values(batch, [column.as_str()]);
            let (status, text) = if actual == expected {
                (CheckStatus::Pass, actual)
            } else {
                (
                    CheckStatus::Fail,
                    t(
                        lang,
                        format!("{actual}, expected {expected}"),
                        format!("{actual}, ожидался {expected}"),
                    ),
                )
            };
            Ok((status, noting_nulls(lang, text, nulls), Some(nulls)))
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
            let nulls = null_values(batch, columns.iter().map(String::as_str));
            let (status, text) = if missing.is_empty() {
                (
                    CheckStatus::Pass,
                    t(
                        lang,
                        format!("all {} present", columns.len()),
                        format!("все {} на месте", columns.len()),
                    ),
                )
            } else {
                (
                    CheckStatus::Fail,
                    t(
                        lang,
                        format!("missing: {}", missing.join(", ")),
                        format!("нет: {}", missing.join(", ")),
                    ),
                )
            };
            Ok((status, noting_nulls(lang, text, nulls), Some(nulls)))
        }
        CheckKind::SourceColumnsPresent { bronze_table } => {
            let name = in_layer(bronze_table, Layer::Bronze)?;
            let (rows, _) = typed_bronze(def, out, name)?;
            let nulls = match (rows, out.missing_columns.get(name)) {
                (Some(r), Some(missing)) => {
                    null_values(r, missing.iter().map(|m| m.column.as_str()))
                }
                _ => 0,
            };
            let (status, text) = match out.missing_columns.get(name) {
                None => (
                    CheckStatus::Pass,
                    t(
                        lang,
                        "every declared column is in every batch".into(),
                        "все объявленные колонки есть в каждом батче".into(),
                    ),
                ),
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
                    (CheckStatus::Warn, list.join("; "))
                }
            };
            Ok((status, noting_nulls(lang, text, nulls), Some(nulls)))
        }
        CheckKind::TimestampOffsets { bronze_table } => {
            let name = in_layer(bronze_table, Layer::Bronze)?;
            let (rows, b) = typed_bronze(def, out, name)?;
            let nulls = rows.map_or(0, |r| {
                null_values(
                    r,
                    b.schema
                        .columns
                        .iter()
                        .filter(|c| c.data_type == ColumnType::Timestamp)
                        .map(|c| c.name.as_str()),
                )
            });
            let (status, text) = match out.read_as_utc.get(name) {
                None => (
                    CheckStatus::Pass,
                    t(
                        lang,
                        "every TIMESTAMP value had an offset or a declared time zone".into(),
                        "у каждого значения TIMESTAMP есть смещение или объявленный часовой пояс"
                            .into(),
                    ),
                ),
                Some(columns) => {
                    let list: Vec<String> = columns
                        .iter()
                        .map(|r| match lang {
                            Lang::En => format!(
                                "{}: {} of {} values without an offset, read as UTC (declare the column's time_zone if they are local times)",
                                r.column, r.without_offset, r.values
                            ),
                            Lang::Ru => format!(
                                "{}: {} из {} значений без смещения, прочитаны как UTC (объявите time_zone колонки, если это местное время)",
                                r.column, r.without_offset, r.values
                            ),
                        })
                        .collect();
                    (CheckStatus::Warn, list.join("; "))
                }
            };
            Ok((status, noting_nulls(lang, text, nulls), Some(nulls)))
        }
        CheckKind::Reconciliation {
            bronze_table,
            silver_table,
        } => {
            in_layer(bronze_table, Layer::Bronze)?;
            let silver_name = in_layer(silver_table, Layer::Silver)?;
            let bronze = table(out, bronze_table)?.num_rows();
            let silver = table(out, silver_table)?.num_rows();
            let quarantined = quarantined_rows(out, silver_name)?;
            let removed = out.removed.get(silver_table).copied();
            // Records of a file read again are in bronze twice, in silver once.
            let reread = out.superseded.get(bronze_table).copied().unwrap_or(0);
            if let Some(e) = out.exploded.get(silver_table) {
                let (status, text) = reconcile_child(e, silver, quarantined, removed, lang);
                return Ok((status, text, None));
            }
            let status = if bronze == silver + quarantined + removed.unwrap_or(0) + reread {
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
                    (Lang::En, Some(r)) => format!("bronze {bronze} {eq} silver {silver} + quarantine {quarantined} + removed by merge {r}"),
                    (Lang::Ru, Some(r)) => format!("bronze {bronze} {eq} silver {silver} + карантин {quarantined} + удалено слиянием {r}"),
                } + &match (lang, reread) {
                    (_, 0) => String::new(),
                    (Lang::En, n) => format!(" + read again {n}"),
                    (Lang::Ru, n) => format!(" + прочитано заново {n}"),
                },
                None,
            ))
        }
        CheckKind::FilteredShare {
            bronze_table,
            silver_table,
            warn_above_pct,
        } => {
            // A child table's input is its exploded rows, not bronze records.
            let bronze = match out.exploded.get(silver_table) {
                Some(e) => e.rows,
                None => table(out, bronze_table)?
                    .num_rows()
                    .saturating_sub(out.superseded.get(bronze_table).copied().unwrap_or(0)),
            };
            let silver = table(out, silver_table)?.num_rows();
            // Rows a merge removed (duplicates, older states) were not filtered.
            let removed = out.removed.get(silver_table).copied().unwrap_or(0);
            // More rows than bronze can explain (with what a merge removed and
            // the quarantine holds for this table): some were written again.
            let held = open_quarantine_rows(out, silver_table);
            if silver + removed + held > bronze {
                let extra = silver + removed + held - bronze;
                return Ok((
                    CheckStatus::Fail,
                    t(
                        lang,
                        format!("{silver_table} holds {silver} rows; with {removed} removed by its merge and {held} in the quarantine that is {extra} more than the {bronze} rows of {bronze_table}: rows were written more than once (an INSERT re-run?)"),
                        format!("в {silver_table} строк: {silver}; вместе с удалёнными слиянием ({removed}) и карантином ({held}) это на {extra} больше, чем строк в {bronze_table} ({bronze}): строки записаны больше одного раза (перезапуск INSERT?)"),
                    ),
                    None,
                ));
            }
            let dropped = bronze.saturating_sub(silver + removed);
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
                    format!(
                        "{dropped} из {bronze} строк не дошли до silver ({}%, порог {}%)",
                        Lang::Ru.decimal(format!("{pct:.2}")),
                        Lang::Ru.decimal(warn_above_pct.to_string())
                    ),
                ),
                None,
            ))
        }
        CheckKind::CompareAverage {
            silver_table,
            column,
        } => {
            let silver_name = in_layer(silver_table, Layer::Silver)?;
            let silver = table(out, silver_table)?;
            let source = def
                .silver
                .iter()
                .find(|s| s.name == silver_name)
                .and_then(|s| out.typed_bronze.get(&s.source))
                .ok_or_else(|| CheckError::NoBronzeSource {
                    table: silver_table.to_string(),
                })?;
            let a = average(source, column)?;
            let b = average(silver, column)?;
            let (na, nb) = (
                null_values(source, [column.as_str()]),
                null_values(silver, [column.as_str()]),
            );
            let mut text = format!(
                "bronze {} → silver {}",
                lang.decimal(fmt_avg(a)),
                lang.decimal(fmt_avg(b))
            );
            if na + nb > 0 {
                let seen = nulls_seen(lang, na + nb);
                text = match lang {
                    Lang::En => format!(
                        "{text}; {seen} (bronze {na}, silver {nb}), left out of the averages"
                    ),
                    Lang::Ru => {
                        format!("{text}; {seen} (bronze {na}, silver {nb}), не входят в средние")
                    }
                };
            }
            Ok((CheckStatus::Info, text, Some(na + nb)))
        }
        // Evaluated with SQL by `evaluate_sql_check`.
        CheckKind::NotNull { .. }
        | CheckKind::Unique { .. }
        | CheckKind::AcceptedValues { .. }
        | CheckKind::AcceptedRange { .. }
        | CheckKind::Relationships { .. }
        | CheckKind::Contract { .. }
        | CheckKind::Audit { .. } => Err(CheckError::SqlCheck),
    }
}

/// Rows of `silver.quarantine` for `silver_name` that are still quarantined
/// (not closed by a later run).
fn quarantined_rows(out: &RunOutput, silver_name: &str) -> Result<usize, CheckError> {
    let q = table(out, &TableName::quarantine())?;
    let col = q
        .column_by_name("silver_table")
        .and_then(|c| {
            c.as_any()
                .downcast_ref::<datafusion::arrow::array::StringArray>()
        })
        .ok_or(CheckError::QuarantineColumn {
            column: "silver_table",
        })?;
    let released = q
        .column_by_name("closed_in_run")
        .ok_or(CheckError::QuarantineColumn {
            column: "closed_in_run",
        })?;
    Ok((0..q.num_rows())
        .filter(|&i| col.value(i) == silver_name && released.is_null(i))
        .count())
}

fn fmt_avg(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.2}"))
        .unwrap_or_else(|| "NULL".into())
}

/// Mean of the non-NULL values of a numeric column.
fn average(batch: &RecordBatch, column: &str) -> Result<Option<f64>, CheckError> {
    let arr = batch
        .column_by_name(column)
        .ok_or_else(|| CheckError::NoColumn {
            column: column.to_string(),
        })?;
    let f = cast(arr, &DataType::Float64)?;
    let f = f
        .as_any()
        .downcast_ref::<Float64Array>()
        .ok_or(CheckError::NotNumeric)?;
    let n = f.len() - f.null_count();
    Ok(sum(f).map(|s| s / n as f64).filter(|_| n > 0))
}

/// Outcome of a check evaluated with SQL over the registered tables.
struct Outcome {
    status: CheckStatus,
    observed: String,
    sample: Vec<String>,
    /// NULLs the check saw (see [`CheckResult::nulls`]).
    nulls: Option<usize>,
}

/// `2 NULLs seen` / `NULL: 2`.
fn nulls_seen(lang: Lang, n: usize) -> String {
    match lang {
        Lang::En if n == 1 => "1 NULL seen".to_string(),
        Lang::En => format!("{n} NULLs seen"),
        Lang::Ru => format!("NULL: {n}"),
    }
}

/// Rows of `table` with a NULL in one of `columns`.
async fn count_nulls(
    ctx: &SessionContext,
    table: &TableName,
    columns: &[String],
) -> Result<usize, CheckError> {
    let any_null = columns
        .iter()
        .map(|c| format!("{} IS NULL", q(c)))
        .collect::<Vec<_>>()
        .join(" OR ");
    let b = query(
        ctx,
        &format!(
            "SELECT COUNT(*) AS n FROM {} WHERE {any_null}",
            table_sql(table)
        ),
    )
    .await?;
    Ok(count_in(&b, 0))
}

/// The `COUNT(*)` in column `i` of a one-row result (0 if it is not one).
fn count_in(counted: &RecordBatch, i: usize) -> usize {
    counted
        .column(i)
        .as_any()
        .downcast_ref::<datafusion::arrow::array::Int64Array>()
        .map_or(0, |a| a.value(0) as usize)
}

/// `"name"` as a SQL identifier.
fn q(ident: &str) -> String {
    format!("\"{}\"", ident.replace('"', "\"\""))
}

/// `silver.orders` as a SQL table reference (`"silver"."orders"`).
fn table_sql(table: &TableName) -> String {
    format!("{}.{}", q(table.layer().as_str()), q(table.name()))
}

/// `'text'` as a SQL string literal.
fn lit(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// Business key columns of a silver table (its merge keys), for samples.
fn keys_of(def: &PipelineDef, table: &TableName) -> Vec<String> {
    def.silver
        .iter()
        .find(|s| TableName::silver(&s.name) == *table)
        .and_then(|s| s.merge.as_ref())
        .map(|m| m.keys.clone())
        .unwrap_or_default()
}

/// Runs a read-only SELECT and collects its rows.
async fn query(ctx: &SessionContext, sql: &str) -> Result<RecordBatch, CheckError> {
    crate::query::check_size(sql, crate::query::MAX_SQL_TOKENS)?;
    let df = ctx
        .sql_with_options(sql, crate::query::queries_only())
        .await
        .map_err(plan)?;
    Ok(collect_single(df, Some(crate::query::GOLD_MAX_ROWS)).await?)
}

/// How many rows the SELECT `sql` returns, and the first [`SAMPLE_ROWS`]
/// of them (counted without collecting them all; see [`sample`]).
async fn violations(ctx: &SessionContext, sql: &str) -> Result<(usize, RecordBatch), CheckError> {
    let counted = query(
        ctx,
        &format!("SELECT COUNT(*) AS n FROM ({sql}) AS __violations"),
    )
    .await?;
    let n = count_in(&counted, 0);
    Ok((n, sample(ctx, sql, n).await?))
}

/// The first [`SAMPLE_ROWS`] rows the SELECT `sql` returns, which
/// returns `n` rows: none asked for when `n` is 0 (no second scan when a
/// check passes).
async fn sample(ctx: &SessionContext, sql: &str, n: usize) -> Result<RecordBatch, CheckError> {
    if n == 0 {
        return Ok(RecordBatch::new_empty(Arc::new(
            datafusion::arrow::datatypes::Schema::empty(),
        )));
    }
    query(
        ctx,
        &format!("SELECT * FROM ({sql}) AS __violations LIMIT {SAMPLE_ROWS}"),
    )
    .await
}

/// Up to [`SAMPLE_ROWS`] rows of `batch` as `column=value, ...`, with
/// `first` columns (keys, the checked column) before the others, at most 6 columns.
fn sample_rows(batch: &RecordBatch, first: &[String]) -> Vec<String> {
    use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
    let schema = batch.schema();
    let mut cols: Vec<usize> = first
        .iter()
        .filter_map(|c| schema.index_of(c).ok())
        .collect();
    for i in 0..schema.fields().len() {
        let name = schema.field(i).name();
        if !cols.contains(&i) && !name.starts_with('_') {
            cols.push(i);
        }
    }
    cols.dedup();
    cols.truncate(6);
    let opts = FormatOptions::default()
        .with_null("NULL")
        .with_timestamp_format(Some("%Y-%m-%d %H:%M:%S"));
    let formatters: Vec<_> = cols
        .iter()
        .filter_map(|&i| {
            ArrayFormatter::try_new(batch.column(i).as_ref(), &opts)
                .ok()
                .map(|f| (schema.field(i).name().clone(), f))
        })
        .collect();
    (0..batch.num_rows().min(SAMPLE_ROWS))
        .map(|r| {
            formatters
                .iter()
                .map(|(n, f)| format!("{n}={}", f.value(r)))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect()
}

fn violated(lang: Lang, bad: usize, total: Option<usize>) -> String {
    match (lang, total) {
        (Lang::En, Some(n)) => format!("{bad} of {n} rows violate"),
        (Lang::Ru, Some(n)) => format!("нарушают {bad} из {n} строк"),
        (Lang::En, None) => format!("{bad} rows violate"),
        (Lang::Ru, None) => format!("нарушают {bad} строк"),
    }
}

fn pass_or_fail(bad: usize) -> CheckStatus {
    if bad == 0 {
        CheckStatus::Pass
    } else {
        CheckStatus::Fail
    }
}

/// The dbt-style row checks, the contract and the audit: evaluated with SQL
/// over the tables registered in `ctx`. `None` for the other kinds.
async fn evaluate_sql_check(
    ctx: &SessionContext,
    def: &PipelineDef,
    kind: &CheckKind,
    lang: Lang,
) -> Option<Result<Outcome, CheckError>> {
    let rows_where = |table: &TableName, condition: String| {
        format!("SELECT * FROM {} WHERE {condition}", table_sql(table))
    };
    let simple = |table: &TableName, column: &str, condition: String| {
        let table = table.clone();
        let mut first = keys_of(def, &table);
        first.push(column.to_string());
        // The violations, the NULLs and the rows, counted in one scan.
        let counts = format!(
            "SELECT COUNT(*) FILTER (WHERE {condition}) AS bad, COUNT(*) FILTER (WHERE {} IS NULL) AS nulls, COUNT(*) AS n FROM {}",
            q(column),
            table_sql(&table)
        );
        let sql = rows_where(&table, condition);
        async move {
            let counted = query(ctx, &counts).await?;
            let (bad, nulls, n) = (
                count_in(&counted, 0),
                count_in(&counted, 1),
                count_in(&counted, 2),
            );
            let sample = sample(ctx, &sql, bad).await?;
            Ok(Outcome {
                status: pass_or_fail(bad),
                observed: violated(lang, bad, Some(n)),
                sample: sample_rows(&sample, &first),
                nulls: Some(nulls),
            })
        }
    };
    Some(match kind {
        CheckKind::NotNull { table, column } => {
            simple(table, column, format!("{} IS NULL", q(column))).await
        }
        CheckKind::AcceptedValues {
            table,
            column,
            values,
        } => {
            let list = values.iter().map(|v| lit(v)).collect::<Vec<_>>().join(", ");
            simple(
                table,
                column,
                format!("CAST({} AS VARCHAR) NOT IN ({list})", q(column)),
            )
            .await
        }
        CheckKind::AcceptedRange {
            table,
            column,
            min,
            max,
        } => {
            let mut parts = Vec::new();
            if let Some(m) = min {
                parts.push(format!("{} < {m}", q(column)));
            }
            if let Some(m) = max {
                parts.push(format!("{} > {m}", q(column)));
            }
            if parts.is_empty() {
                return Some(Err(CheckError::RangeWithoutBounds));
            }
            simple(table, column, parts.join(" OR ")).await
        }
        CheckKind::Unique { table, columns } => {
            let cols = columns.iter().map(|c| q(c)).collect::<Vec<_>>().join(", ");
            // One column (dbt `unique`): NULLs are not compared. Several
            // (dbt_utils `unique_combination_of_columns`): GROUP BY puts
            // NULLs in one group, so (PT, NULL) twice is a duplicate.
            let only_values = match columns.as_slice() {
                [c] => format!(" WHERE {} IS NOT NULL", q(c)),
                _ => String::new(),
            };
            let sql = format!(
                "SELECT {cols}, COUNT(*) AS rows_with_this_key FROM {}{only_values} GROUP BY {cols} HAVING COUNT(*) > 1",
                table_sql(table)
            );
            let nulls = match count_nulls(ctx, table, columns).await {
                Ok(n) => n,
                Err(e) => return Some(Err(e)),
            };
            match violations(ctx, &sql).await {
                Err(e) => Err(e),
                Ok((groups, bad)) => Ok(Outcome {
                    nulls: Some(nulls),
                    status: pass_or_fail(groups),
                    observed: match lang {
                        Lang::En if groups == 1 => "1 duplicated key".to_string(),
                        Lang::En => format!("{groups} duplicated keys"),
                        Lang::Ru => format!("повторяющихся ключей: {groups}"),
                    },
                    sample: sample_rows(&bad, columns),
                }),
            }
        }
        CheckKind::Relationships {
            table,
            column,
            to,
            field,
        } => {
            let sql = format!(
                "SELECT c.* FROM {} c LEFT JOIN (SELECT DISTINCT {} AS __key FROM {}) p ON c.{} = p.__key WHERE c.{} IS NOT NULL AND p.__key IS NULL",
                table_sql(table),
                q(field),
                table_sql(to),
                q(column),
                q(column)
            );
            let mut first = keys_of(def, table);
            first.push(column.clone());
            let nulls = match count_nulls(ctx, table, std::slice::from_ref(column)).await {
                Ok(n) => n,
                Err(e) => return Some(Err(e)),
            };
            match violations(ctx, &sql).await {
                Err(e) => Err(e),
                Ok((n, bad)) => Ok(Outcome {
                    nulls: Some(nulls),
                    status: pass_or_fail(n),
                    observed: match lang {
                        Lang::En if n == 1 => format!("1 row points to no {to}.{field}"),
                        Lang::En => format!("{n} rows point to no {to}.{field}"),
                        Lang::Ru => format!("{n} строк ссылаются на несуществующий {to}.{field}"),
                    },
                    sample: sample_rows(&bad, &first),
                }),
            }
        }
        CheckKind::Contract { table, columns } => contract(ctx, table, columns, lang).await,
        CheckKind::Audit { sql } => {
            use datafusion::sql::sqlparser::{dialect::GenericDialect, parser::Parser};
            match Parser::parse_sql(&GenericDialect {}, sql) {
                Ok(st)
                    if st.len() == 1
                        && matches!(
                            st[0],
                            datafusion::sql::sqlparser::ast::Statement::Query(_)
                        ) => {}
                Ok(_) => return Some(Err(CheckError::AuditNotQuery)),
                Err(e) => return Some(Err(CheckError::AuditSyntax(e))),
            }
            match violations(ctx, sql.trim().trim_end_matches(';')).await {
                Err(e) => Err(e),
                Ok((n, bad)) => Ok(Outcome {
                    status: pass_or_fail(n),
                    observed: match lang {
                        Lang::En if n == 1 => "1 row returned (0 expected)".to_string(),
                        Lang::En => format!("{n} rows returned (0 expected)"),
                        Lang::Ru => format!("вернулось строк: {n} (ожидалось 0)"),
                    },
                    sample: sample_rows(&bad, &[]),
                    nulls: None,
                }),
            }
        }
        _ => return None,
    })
}

/// A model contract: exact columns (lineage and SCD2 columns aside), types,
/// and no NULL in the columns declared not nullable.
async fn contract(
    ctx: &SessionContext,
    table: &TableName,
    columns: &[crate::model::ContractColumn],
    lang: Lang,
) -> Result<Outcome, CheckError> {
    let batch = query(ctx, &format!("SELECT * FROM {}", table_sql(table))).await?;
    let schema = batch.schema();
    let mut problems = Vec::new();
    let nulls = columns
        .iter()
        .filter_map(|c| batch.column_by_name(&c.name))
        .map(|a| a.null_count())
        .sum();
    for c in columns {
        let Ok(field) = schema.field_with_name(&c.name) else {
            problems.push(match lang {
                Lang::En => format!("{} is missing", c.name),
                Lang::Ru => format!("нет колонки {}", c.name),
            });
            continue;
        };
        let actual = ColumnType::from_arrow(field.data_type())
            .map(|t| t.sql_name())
            .unwrap_or_else(|| field.data_type().to_string());
        if actual != c.data_type.sql_name() {
            problems.push(match lang {
                Lang::En => format!("{} is {actual}, the contract says {}", c.name, c.data_type),
                Lang::Ru => format!("{} имеет тип {actual}, в контракте {}", c.name, c.data_type),
            });
        }
        if !c.nullable {
            let nulls = batch.column_by_name(&c.name).map_or(0, |a| a.null_count());
            if nulls > 0 {
                problems.push(match lang {
                    Lang::En if nulls == 1 => format!("{} is NOT NULL but has 1 NULL", c.name),
                    Lang::En => format!("{} is NOT NULL but has {nulls} NULLs", c.name),
                    Lang::Ru => format!("{} NOT NULL, но NULL: {nulls}", c.name),
                });
            }
        }
    }
    let extra: Vec<&str> = schema
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .filter(|n| {
            !n.starts_with('_')
                && !crate::silver::merge::SCD2_COLUMNS.contains(n)
                && !columns.iter().any(|c| c.name == *n)
        })
        .collect();
    if !extra.is_empty() {
        problems.push(match lang {
            Lang::En => format!("not in the contract: {}", extra.join(", ")),
            Lang::Ru => format!("нет в контракте: {}", extra.join(", ")),
        });
    }
    Ok(Outcome {
        status: pass_or_fail(problems.len()),
        observed: if problems.is_empty() {
            match lang {
                Lang::En => format!("{} columns as declared", columns.len()),
                Lang::Ru => format!("{} колонок как объявлено", columns.len()),
            }
        } else {
            problems.join("; ")
        },
        sample: vec![],
        nulls: Some(nulls),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_table_is_named() {
        let e = CheckError::NoTable {
            table: "silver.orders".into(),
        };
        assert_eq!(e.to_string(), "table silver.orders does not exist");
    }
}
