//! What silver's rule stages share: the hidden arrival column that keeps
//! each row's bronze position through joins, a stage's failing rows, the
//! tables an enrichment may join ([`Lookups`]), and run-time reasons.

use std::collections::BTreeMap;

use datafusion::arrow::array::{Array, RecordBatch};
use datafusion::arrow::datatypes::DataType;
use datafusion::sql::sqlparser::parser::ParserError;

use crate::error::{joined_messages, Diagnostic, EngineError};
use crate::query::QueryError;
use crate::silver::eval::EvalError;
use crate::silver::rules::{Rule, RuleKind};
use crate::silver::source::{Parsed, LINEAGE_COLUMNS};

/// Why a rule (a filter, normalization, enrichment or expectation), a
/// merge's `delete_when` or a silver `select` list cannot run on a silver
/// table: the error of the whole rule, shown next to it. A row that fails
/// is no error here: it gets a reason ([`Failures`]).
#[derive(Debug, thiserror::Error)]
pub(crate) enum RuleError {
    /// The rule's target column `name` holds a comma: several names.
    #[error("{name:?} is several names; a {} rule works on one column (a lookup enrichment can add several)", .kind.as_str())]
    SeveralNames { name: String, kind: RuleKind },
    /// The rule's target column `name` is a lineage column.
    #[error("{name} is a lineage column from bronze; rules cannot change it")]
    LineageColumn { name: String },
    /// A rule of kind `kind` names no target column.
    #[error("{} needs a column name", .kind.as_str())]
    NoColumnName { kind: RuleKind },
    /// A normalization names a `column` the rows do not have.
    #[error("column {column} does not exist here, so it cannot be normalized (use an enrich rule to add a new column)")]
    NoColumnToNormalize { column: String },
    /// An enrichment adds a `column` the rows already have.
    #[error("column {column} already exists (use a normalize rule to change it)")]
    ColumnExists { column: String },
    /// A condition (a `delete_when`, a right-to-be-forgotten request) gives
    /// `data_type` values instead of TRUE / FALSE.
    #[error(
        "the condition must be TRUE or FALSE for each row, but this expression gives {data_type}"
    )]
    NotCondition { data_type: DataType },
    /// A filter's expression gives `data_type` values instead of TRUE / FALSE.
    #[error("a filter must be a condition (TRUE = send the row to quarantine), but this expression gives {data_type}")]
    FilterNotCondition { data_type: DataType },
    /// An expectation's expression gives `data_type` values instead of TRUE / FALSE.
    #[error("an expectation must be a condition every row satisfies (TRUE = the row is fine), but this expression gives {data_type}")]
    ExpectationNotCondition { data_type: DataType },
    /// A condition failed because a text could not be read as a number (a
    /// text column compared with a number, or a `CAST` of a text that is
    /// not one): the hint names `TRY_CAST`, never `CAST` again.
    #[error("{0}. A text here is not a number: use TRY_CAST(column AS type), which gives NULL for a text that is not a number where CAST fails, or declare a type on the normalization that produces the column (e.g. DECIMAL(12,2)).")]
    TextComparedWithNumber(EvalError),
    /// A lookup's join condition or output list is not SQL.
    #[error("SQL syntax: {0}")]
    Syntax(ParserError),
    /// A lookup's output expressions are not a comma-separated SQL list.
    #[error("{0}")]
    OutputList(ParserError),
    /// A lookup enrichment without its lookup.
    #[error("no lookup")]
    NoLookup,
    /// A lookup enrichment that names no output column.
    #[error("name the new column(s) this lookup adds, e.g. pickup_borough, pickup_zone")]
    NoOutputColumns,
    /// A lookup with `outputs` output columns but `expressions` expressions.
    #[error("{outputs} output column(s) but {expressions} expression(s): give one expression per column, in the same order")]
    OutputCount { outputs: usize, expressions: usize },
    /// A lookup on silver table `table`, which is not built before this one.
    #[error("lookup table {table} is not built before this table (tables available here: {}). A silver table can join silver tables listed before it.", .available.join(", "))]
    LookupNotBuilt {
        table: String,
        available: Vec<String>,
    },
    /// A lookup on a table `table` that does not exist.
    #[error("lookup table {table} does not exist (tables: {})", .available.join(", "))]
    NoLookupTable {
        table: String,
        available: Vec<String>,
    },
    /// The lookup join turned `rows` rows into `joined`: the key of lookup
    /// `table` is not unique.
    #[error("the join changed the row count from {rows} to {joined}: the lookup key is not unique in {table}. Make it unique (join a silver table deduplicated by that key, or extend ON); if its file was dropped twice, bronze (append-only) holds every key twice: start over with \"Reload example\".")]
    KeyNotUnique {
        rows: usize,
        joined: JoinedRows,
        table: String,
    },
    /// A lookup's join condition does not plan (DataFusion's message, cleaned).
    #[error("join condition: {0}")]
    JoinCondition(String),
    /// A lookup output expression does not evaluate; the message shows it as
    /// `written` in the rule, not as the engine's `qualified` form.
    #[error("{}", .error.to_string().replace(.qualified.as_str(), .written))]
    LookupOutput {
        #[source]
        error: EvalError,
        qualified: String,
        written: String,
    },
    /// A select-list item that does not parse.
    #[error("{item}: {error}")]
    SelectSyntax {
        item: String,
        #[source]
        error: ParserError,
    },
    /// A select-list item that is not one expression with an optional name.
    #[error("{item}: write one column or expression, with an optional AS name")]
    NotSelectItem { item: String },
    /// A select list names lineage column `name`.
    #[error("{name} is a lineage column; it is kept without being listed")]
    SelectsLineage { name: String },
    /// A select list gives two columns the name `name`.
    #[error("{name} is listed twice; give each column one name")]
    ListedTwice { name: String },
    /// The rule's parameters do not fit its kind (the registry's own check).
    #[error("{0}")]
    Params(String),
    /// DataFusion cannot plan the lookup join (its message, cleaned).
    #[error("{0}")]
    Plan(String),
    /// The engine lost track of something it built itself.
    #[error("{0}")]
    Internal(&'static str),
    /// The rules of a replayed table failed (the row trail): their messages.
    #[error("{}", joined_messages(.0))]
    Failed(Vec<Diagnostic>),
    /// The rule's expression cannot be evaluated.
    #[error(transparent)]
    Eval(#[from] EvalError),
    /// A query of the rule failed or was refused (size, parallel plan, rows).
    #[error(transparent)]
    Query(#[from] QueryError),
    /// Arrow failed building the rule's output.
    #[error(transparent)]
    Arrow(#[from] datafusion::arrow::error::ArrowError),
    /// The engine failed (converting a value to the rule's type, a column).
    #[error(transparent)]
    Engine(#[from] EngineError),
}

impl From<datafusion::error::DataFusionError> for RuleError {
    fn from(e: datafusion::error::DataFusionError) -> Self {
        RuleError::Plan(crate::query::df_err(e))
    }
}

impl From<RuleError> for EngineError {
    fn from(e: RuleError) -> Self {
        EngineError::Request(e.to_string())
    }
}

/// How many rows a lookup join gave, for [`RuleError::KeyNotUnique`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JoinedRows {
    /// Exactly this many.
    Rows(usize),
    /// More than this many (the join stopped there).
    MoreThan(usize),
    /// More than the rows of the slice that was joined.
    More,
}

impl std::fmt::Display for JoinedRows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JoinedRows::Rows(n) => write!(f, "{n}"),
            JoinedRows::MoreThan(n) => write!(f, "more than {n}"),
            JoinedRows::More => write!(f, "more"),
        }
    }
}

/// Hidden column carrying each row's position in bronze order through the
/// rules (joins may reorder rows); dropped before silver is written.
pub(crate) const ARRIVAL: &str = "_arrival";

/// Tables an enrichment can join: bronze tables read with their declared
/// schema, and the silver tables built earlier in this run.
pub(crate) struct Lookups<'a> {
    pub bronze: &'a BTreeMap<String, Parsed>,
    /// Silver tables built so far in the run.
    pub silver: &'a BTreeMap<medallion_protocol::TableName, RecordBatch>,
}

/// A rule's name for a column users may not target.
pub(crate) fn is_internal(name: &str) -> bool {
    LINEAGE_COLUMNS.contains(&name) || name == ARRIVAL
}

/// Failing rows of one rule, by arrival position, with their reasons.
pub(crate) type Failures = Vec<(i64, String)>;

/// Arrival positions of `batch`'s rows.
pub(crate) fn arrivals(batch: &RecordBatch) -> Vec<i64> {
    batch
        .column_by_name(ARRIVAL)
        .and_then(|c| {
            c.as_any()
                .downcast_ref::<datafusion::arrow::array::Int64Array>()
        })
        .map(|a| a.values().to_vec())
        .unwrap_or_default()
}

pub(crate) fn check_target_column(rule: &Rule, name: &str) -> std::result::Result<(), RuleError> {
    if name.contains(',') {
        return Err(RuleError::SeveralNames {
            name: name.to_string(),
            kind: rule.kind,
        });
    }
    if is_internal(name) {
        return Err(RuleError::LineageColumn {
            name: name.to_string(),
        });
    }
    if name.is_empty() {
        return Err(RuleError::NoColumnName { kind: rule.kind });
    }
    Ok(())
}

/// Why a row failed a rule whose expression could not be computed for it:
/// `E1: 100 / amount failed on this row: Divide by zero error (amount = 0)`.
pub(crate) fn run_time_reason(
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
        crate::silver::eval::describe(batch, columns, row, true)
    )
}

/// A comparison of a text column with a number fails at run time; say why.
pub(crate) fn text_compare_hint(e: EvalError) -> RuleError {
    if e.to_string().contains("Cannot cast string") {
        RuleError::TextComparedWithNumber(e)
    } else {
        RuleError::Eval(e)
    }
}

/// Output of a normalization or enrichment.
pub(crate) struct Step {
    pub(crate) rows: RecordBatch,
    /// Normalize: the rows (arrival positions) whose value changed.
    pub(crate) changed: Vec<i64>,
    pub(crate) failures: Failures,
    /// Normalize to TIMESTAMP: the rows (arrival positions) whose value had
    /// no offset and was read as UTC.
    pub(crate) read_as_utc: Vec<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_errors_name_the_column_and_the_lookup_table() {
        let e = RuleError::SeveralNames {
            name: "pickup_zone, dropoff_zone".into(),
            kind: RuleKind::Normalize,
        };
        assert_eq!(
            e.to_string(),
            "\"pickup_zone, dropoff_zone\" is several names; a normalize rule works on one column (a lookup enrichment can add several)"
        );
        let e = RuleError::KeyNotUnique {
            rows: 4,
            joined: JoinedRows::MoreThan(4),
            table: "bronze.zones".into(),
        };
        assert_eq!(
            e.to_string(),
            "the join changed the row count from 4 to more than 4: the lookup key is not unique in bronze.zones. Make it unique (join a silver table deduplicated by that key, or extend ON); if its file was dropped twice, bronze (append-only) holds every key twice: start over with \"Reload example\"."
        );
    }
}
