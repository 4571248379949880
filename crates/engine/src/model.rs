//! What a pipeline is made of: bronze tables with their declared source
//! schemas, silver tables with their rule registries, gold models and quality
//! checks. All plain serde data, so a scenario can be saved, shared and loaded.

use serde::{Deserialize, Serialize};

use crate::rules::RuleRegistry;
use crate::source::{ColumnType, SourceSchema};

/// How bronze stores records (seed `000_87b8dd7200a8cd99.txt` §4, raw string vs
/// structured; seed `001_ae16f07f217e9df3.txt`, explicit schema with PERMISSIVE).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum BronzeMode {
    /// The record's text in `raw_payload`: robust to schema drift (the default).
    #[default]
    Raw,
    /// Typed with the declared schema; a record that does not fit keeps its
    /// text in `_corrupt_record` (typed columns NULL) and its reason in `_corrupt_reason`.
    Permissive,
    /// Typed; the first record that does not fit stops the batch (nothing is written).
    FailFast,
    /// Typed; records that do not fit are dropped. An anti-pattern: the batch
    /// log counts what was lost, bronze no longer holds it.
    DropMalformed,
}

impl BronzeMode {
    /// Is the table stored typed (declared columns instead of `raw_payload`)?
    pub fn is_typed(self) -> bool {
        self != BronzeMode::Raw
    }

    /// Spark's name for the mode (`PERMISSIVE`, ...), or `raw`.
    pub fn label(self) -> &'static str {
        match self {
            BronzeMode::Raw => "raw",
            BronzeMode::Permissive => "PERMISSIVE",
            BronzeMode::FailFast => "FAILFAST",
            BronzeMode::DropMalformed => "DROPMALFORMED",
        }
    }
}

/// A bronze table and the schema silver reads it with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BronzeTableDef {
    /// Name without the layer: `nyc_taxi_yellow` is `bronze.nyc_taxi_yellow`.
    pub name: String,
    /// Default `_source_system` of files dropped on this table.
    pub source_system: String,
    pub schema: SourceSchema,
    pub description: String,
    /// Fed by this (simulated) Kafka topic as well as by files.
    #[serde(default)]
    pub kafka_topic: Option<String>,
    /// Raw (default) or typed with `schema`.
    #[serde(default)]
    pub mode: BronzeMode,
    /// Settings for this source's files (format, CSV dialect, encoding);
    /// unset ones are detected per file. Set from "Read again…" with "remember".
    #[serde(default)]
    pub ingest_options: crate::bronze::IngestOptions,
}

impl BronzeTableDef {
    /// The Arrow schema of this bronze table's rows.
    pub fn arrow_schema(&self) -> datafusion::arrow::datatypes::SchemaRef {
        if self.mode.is_typed() {
            crate::bronze::typed_bronze_schema(&self.schema)
        } else {
            crate::bronze::bronze_schema()
        }
    }
}

/// A silver table built from one bronze table by a rule registry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SilverTableDef {
    /// Name without the layer: `silver.nyc_taxi_yellow`.
    pub name: String,
    /// Bronze table it reads (name without the layer).
    pub source: String,
    pub rules: RuleRegistry,
    pub description: String,
    /// Written by business key (dedup, MERGE as SCD1, or SCD2 history)
    /// instead of appended; see [`crate::merge`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge: Option<crate::merge::MergeSpec>,
    /// Silver's own columns, as a SQL select list applied after the rules
    /// (`uid AS user_id`, `amount`): renames that conform names across
    /// sources (seed 003 §4, principle 5) and leave out working columns.
    /// Empty: every column the rules produced. Merge keys name these columns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub select: Vec<String>,
    /// A child table: one row per element of a JSON array of each bronze
    /// record (parent columns, position, the element's typed fields) instead
    /// of one row per record; see [`crate::explode::ExplodeSpec`] for the
    /// JSON shape. Unset: the table reads the bronze table's source schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explode: Option<crate::explode::ExplodeSpec>,
}

/// A gold model: one SQL query over silver tables (never bronze).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GoldModelDef {
    /// Name without the layer: `gold.trips_by_borough_daily`.
    pub name: String,
    pub sql: String,
    pub description: String,
    /// How a refresh writes the table. Empty: the query's result replaces
    /// the table. Key columns: the result is MERGEd into the table on them
    /// (seed 003 §5, `MERGE INTO gold.revenue_daily ON report_date, country`):
    /// rows with a key the query returns are updated or inserted, other rows
    /// stay, so a query over a recent window keeps older days. Both are
    /// idempotent: the same silver gives the same table and no new version.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merge_on: Vec<String>,
}

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
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CheckKind {
    /// Row level: `predicate` (SQL) must be TRUE for every row of `table`;
    /// FALSE or NULL counts as a violation.
    RowPredicate { table: String, predicate: String },
    /// Schema level: `column` exists in `table` with type `data_type`.
    ColumnType {
        table: String,
        column: String,
        data_type: ColumnType,
    },
    /// Schema level: every column of `columns` exists in `table`.
    ColumnsExist { table: String, columns: Vec<String> },
    /// Schema level: every column the bronze table's source schema declares is
    /// present in every batch (a missing one is read as NULL: warning).
    SourceColumnsPresent { bronze_table: String },
    /// Schema level: every TIMESTAMP value of the bronze table's source
    /// columns either carried an offset (`Z`, `+01:00`) or was read in its
    /// column's declared `time_zone`; values taken as UTC for lack of both
    /// warn, with the column and the count (`ts: 1 of 5 values ...`).
    /// JSON `{"kind": "timestamp_offsets", "bronze_table": "bronze.t"}`.
    TimestampOffsets { bronze_table: String },
    /// Aggregate level: bronze rows = silver rows + quarantined rows (exact).
    Reconciliation {
        bronze_table: String,
        silver_table: String,
    },
    /// Aggregate level: share of bronze rows that did not reach silver; warning above `warn_above_pct` (percent).
    FilteredShare {
        bronze_table: String,
        silver_table: String,
        warn_above_pct: f64,
    },
    /// Aggregate level: average of `column` over readable bronze rows vs over silver (informational).
    CompareAverage {
        silver_table: String,
        column: String,
    },
    /// Row level (dbt `not_null`): `column` is never NULL.
    NotNull { table: String, column: String },
    /// Row level: no two rows share the values of `columns`. One column
    /// (dbt `unique`): NULLs are not compared. Several columns (dbt_utils
    /// `unique_combination_of_columns`): NULLs group together as in GROUP BY,
    /// so two rows `(PT, NULL)` are a duplicated group. The result counts
    /// the rows with a NULL in one of the columns (`nulls`).
    Unique { table: String, columns: Vec<String> },
    /// Row level (dbt `accepted_values`): `column`, as text, is one of
    /// `values` (NULL passes: pair it with `not_null`).
    AcceptedValues {
        table: String,
        column: String,
        values: Vec<String>,
    },
    /// Row level (dbt_utils `accepted_range`): `min <= column <= max`, bounds
    /// as SQL literals (`0`, `DATE '2024-01-01'`); either may be omitted.
    AcceptedRange {
        table: String,
        column: String,
        #[serde(default)]
        min: Option<String>,
        #[serde(default)]
        max: Option<String>,
    },
    /// Row level (dbt `relationships`): every non-NULL `column` value exists
    /// in `to`.`field` (a foreign key).
    Relationships {
        table: String,
        column: String,
        to: String,
        field: String,
    },
    /// Schema level (a dbt model contract): `table` has exactly these
    /// columns (lineage columns aside) with these types, and the ones not
    /// nullable hold no NULL. Fails when silver's schema drifts.
    Contract {
        table: String,
        columns: Vec<ContractColumn>,
    },
    /// Aggregate level (a SQLMesh audit): `sql` is a SELECT that returns
    /// the bad rows; the check passes when it returns none. It may read any layer.
    Audit { sql: String },
}

/// One column of a [`CheckKind::Contract`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// A named quality check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// Anti-patterns an instructor switches on to show what breaks (seed 003 §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct AntiPatterns {
    /// "The shortcut": gold models may read bronze tables (duplicates and
    /// rejected records then count in business figures).
    #[serde(default)]
    pub gold_reads_bronze: bool,
}

/// A whole pipeline: what the playground runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PipelineDef {
    /// Example name shown in the UI ("NYC taxi: silver module").
    pub title: String,
    pub bronze: Vec<BronzeTableDef>,
    pub silver: Vec<SilverTableDef>,
    pub gold: Vec<GoldModelDef>,
    pub checks: Vec<CheckDef>,
    /// Off unless an instructor switches one on.
    #[serde(default)]
    pub anti_patterns: AntiPatterns,
}

impl PipelineDef {
    /// The bronze definition named `name` (without the layer).
    pub fn bronze_table(&self, name: &str) -> Option<&BronzeTableDef> {
        self.bronze.iter().find(|b| b.name == name)
    }
}
