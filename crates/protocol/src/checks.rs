//! Quality checks as a pipeline declares them (row, schema and aggregate
//! levels of seed `002_b94de4dc08a8f02d.txt` section 8) and their results.

use serde::{Deserialize, Serialize};

use crate::schema::ColumnType;
use crate::table::TableName;

/// The three levels of quality checks of seed 002 section 8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckLevel {
    Row,
    Schema,
    Aggregate,
}

/// What a check verifies. Table names are qualified (`silver.nyc_taxi_yellow`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CheckKind {
    /// Row level: `predicate` (SQL) must be TRUE for every row of `table`;
    /// FALSE or NULL counts as a violation.
    RowPredicate { table: TableName, predicate: String },
    /// Schema level: `column` exists in `table` with type `data_type`.
    ColumnType {
        table: TableName,
        column: String,
        data_type: ColumnType,
    },
    /// Schema level: every column of `columns` exists in `table`.
    ColumnsExist {
        table: TableName,
        columns: Vec<String>,
    },
    /// Schema level: every column the bronze table's source schema declares is
    /// present in every batch (a missing one is read as NULL: warning).
    SourceColumnsPresent { bronze_table: TableName },
    /// Schema level: every TIMESTAMP value of the bronze table's source
    /// columns either carried an offset (`Z`, `+01:00`) or was read in its
    /// column's declared `time_zone`; values taken as UTC for lack of both
    /// warn, with the column and the count (`ts: 1 of 5 values ...`).
    /// JSON `{"kind": "timestamp_offsets", "bronze_table": "bronze.t"}`.
    TimestampOffsets { bronze_table: TableName },
    /// Aggregate level: bronze rows = silver rows + quarantined rows (exact).
    Reconciliation {
        bronze_table: TableName,
        silver_table: TableName,
    },
    /// Aggregate level: share of bronze rows that did not reach silver; warning above `warn_above_pct` (percent).
    FilteredShare {
        bronze_table: TableName,
        silver_table: TableName,
        warn_above_pct: f64,
    },
    /// Aggregate level: average of `column` over readable bronze rows vs over silver (informational).
    CompareAverage {
        silver_table: TableName,
        column: String,
    },
    /// Row level (dbt `not_null`): `column` is never NULL.
    NotNull { table: TableName, column: String },
    /// Row level: no two rows share the values of `columns`. One column
    /// (dbt `unique`): NULLs are not compared. Several columns (dbt_utils
    /// `unique_combination_of_columns`): NULLs group together as in GROUP BY,
    /// so two rows `(PT, NULL)` are a duplicated group. The result counts
    /// the rows with a NULL in one of the columns (`nulls`).
    Unique {
        table: TableName,
        columns: Vec<String>,
    },
    /// Row level (dbt `accepted_values`): `column`, as text, is one of
    /// `values` (NULL passes: pair it with `not_null`).
    AcceptedValues {
        table: TableName,
        column: String,
        values: Vec<String>,
    },
    /// Row level (dbt_utils `accepted_range`): `min <= column <= max`, bounds
    /// as SQL literals (`0`, `DATE '2024-01-01'`); either may be omitted.
    AcceptedRange {
        table: TableName,
        column: String,
        #[serde(default)]
        min: Option<String>,
        #[serde(default)]
        max: Option<String>,
    },
    /// Row level (dbt `relationships`): every non-NULL `column` value exists
    /// in `to`.`field` (a foreign key).
    Relationships {
        table: TableName,
        column: String,
        to: TableName,
        field: String,
    },
    /// Schema level (a dbt model contract): `table` has exactly these
    /// columns (lineage columns aside) with these types, and the ones not
    /// nullable hold no NULL. Fails when silver's schema drifts.
    Contract {
        table: TableName,
        columns: Vec<ContractColumn>,
    },
    /// Aggregate level (a SQLMesh audit): `sql` is a SELECT that returns
    /// the bad rows; the check passes when it returns none. It may read any layer.
    Audit { sql: String },
}

/// One column of a [`CheckKind::Contract`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContractColumn {
    pub name: String,
    #[serde(rename = "type")]
    pub data_type: ColumnType,
    #[serde(default = "yes")]
    pub nullable: bool,
}

fn yes() -> bool {
    true
}

/// How bad a failing check is (dbt's `severity`): `error` fails, `warn` warns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Warn,
    #[default]
    Error,
}

/// A named quality check: `id`, `level`, `description`, `severity` and the
/// fields of its `kind` in one JSON object. A field no kind knows is refused
/// (written by hand: serde cannot deny unknown fields with `flatten`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckDef {
    pub id: String,
    pub level: CheckLevel,
    pub description: String,
    /// `error` (default): a violation fails the check; `warn`: it warns.
    #[serde(default)]
    pub severity: Severity,
    #[serde(flatten)]
    pub kind: CheckKind,
}

impl<'de> Deserialize<'de> for CheckDef {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        /// The fields every check has.
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Common {
            id: String,
            level: CheckLevel,
            description: String,
            #[serde(default)]
            severity: Severity,
        }
        let mut rest = serde_json::Map::<String, serde_json::Value>::deserialize(d)?;
        let mut common = serde_json::Map::new();
        for key in ["id", "level", "description", "severity"] {
            if let Some(v) = rest.remove(key) {
                common.insert(key.to_string(), v);
            }
        }
        let id = common
            .get("id")
            .and_then(|v| v.as_str())
            .unwrap_or("?")
            .to_string();
        let c: Common =
            serde_json::from_value(serde_json::Value::Object(common)).map_err(D::Error::custom)?;
        let kind: CheckKind = serde_json::from_value(serde_json::Value::Object(rest))
            .map_err(|e| D::Error::custom(format!("check {id}: {e}")))?;
        Ok(CheckDef {
            id: c.id,
            level: c.level,
            description: c.description,
            severity: c.severity,
            kind,
        })
    }
}

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
    pub severity: Severity,
    /// Up to [`SAMPLE_ROWS`] violating rows, as `column=value, ...` (keys first).
    #[serde(default)]
    pub sample: Vec<String>,
    /// How many NULLs the check saw, for every check that looks at column
    /// values (issue 9: "every check result says how many NULLs it saw"):
    /// - `not_null`, `accepted_values`, `accepted_range`, `relationships`:
    ///   rows whose checked column is NULL;
    /// - `unique`: rows with a NULL in one of its columns;
    /// - `row_predicate`: rows where the predicate is NULL rather than TRUE
    ///   or FALSE (a NULL value made it unknown; such a row violates);
    /// - `contract`, `columns_exist`: NULL values in the listed columns that
    ///   exist (summed over the columns); `column_type`: NULL values in the
    ///   column (None when it is missing);
    /// - `source_columns_present`: NULL values in the declared columns that
    ///   some batch lacks, over the table's readable rows (each row of a
    ///   batch without the column is one; 0 when no column is missing);
    /// - `timestamp_offsets`: NULL values in its TIMESTAMP source columns
    ///   over the readable rows (they carry no offset and are not counted as
    ///   read as UTC);
    /// - `compare_average`: NULL values of the column in bronze and silver
    ///   together (the averages leave them out; the text gives each).
    ///
    /// None for the checks that count rows, not values (`reconciliation`,
    /// `filtered_share`, `audit`) and for a check that could not run. The
    /// text says it too: the SQL-evaluated checks always (`...; 0 NULLs
    /// seen`), `row_predicate` as `(1 because a value is NULL)`, the
    /// others when there is at least one (`INT; 2 NULLs seen`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nulls: Option<usize>,
}

/// Violating rows shown per check.
pub const SAMPLE_ROWS: usize = 5;
