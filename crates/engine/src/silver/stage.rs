//! What silver's rule stages share: the hidden arrival column that keeps
//! each row's bronze position through joins, a stage's failing rows, the
//! tables an enrichment may join ([`Lookups`]), and run-time reasons.

use std::collections::BTreeMap;

use datafusion::arrow::array::{Array, RecordBatch};

use crate::silver::rules::Rule;
use crate::silver::source::{Parsed, LINEAGE_COLUMNS};

/// Hidden column carrying each row's position in bronze order through the
/// rules (joins may reorder rows); dropped before silver is written.
pub(crate) const ARRIVAL: &str = "_arrival";

/// Tables an enrichment can join: bronze tables read with their declared
/// schema, and the silver tables built earlier in this run.
pub(crate) struct Lookups<'a> {
    pub bronze: &'a BTreeMap<String, Parsed>,
    /// Qualified names (`silver.customers`), in build order.
    pub silver: &'a BTreeMap<String, RecordBatch>,
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

pub(crate) fn check_target_column(rule: &Rule, name: &str) -> std::result::Result<(), String> {
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
pub(crate) fn text_compare_hint(message: String) -> String {
    if message.contains("Cannot cast string") {
        format!("{message}. A column compared with a number holds text here: declare a type on the normalization that produces it (e.g. DECIMAL(12,2)) or CAST it in the condition.")
    } else {
        message
    }
}

/// Output of a normalization or enrichment.
pub(crate) struct Step {
    pub(crate) rows: RecordBatch,
    /// Normalize: values changed.
    pub(crate) changed: usize,
    pub(crate) failures: Failures,
    /// Normalize to TIMESTAMP: values without an offset, read as UTC.
    pub(crate) read_as_utc: usize,
}
