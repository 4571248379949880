//! What a pipeline is made of: bronze tables with their declared source
//! schemas, silver tables with their rule registries, gold models and quality
//! checks. All plain serde data, so a scenario can be saved, shared and loaded.

use serde::{Deserialize, Serialize};

use crate::bronze::IngestOptions;
use crate::checks::CheckDef;
use crate::explode::ExplodeSpec;
use crate::merge::MergeSpec;
use crate::rules::RuleRegistry;
use crate::schema::SourceSchema;

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
#[serde(deny_unknown_fields)]
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
    pub ingest_options: IngestOptions,
}

/// A silver table built from one bronze table by a rule registry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SilverTableDef {
    /// Name without the layer: `silver.nyc_taxi_yellow`.
    pub name: String,
    /// Bronze table it reads (name without the layer).
    pub source: String,
    pub rules: RuleRegistry,
    pub description: String,
    /// Written by business key (dedup, MERGE as SCD1, or SCD2 history)
    /// instead of appended; see [`MergeSpec`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge: Option<MergeSpec>,
    /// Silver's own columns, as a SQL select list applied after the rules
    /// (`uid AS user_id`, `amount`): renames that conform names across
    /// sources (seed 003 §4, principle 5) and leave out working columns.
    /// Empty: every column the rules produced. Merge keys name these columns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub select: Vec<String>,
    /// A child table: one row per element of a JSON array of each bronze
    /// record (parent columns, position, the element's typed fields) instead
    /// of one row per record; see [`ExplodeSpec`] for the
    /// JSON shape. Unset: the table reads the bronze table's source schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explode: Option<ExplodeSpec>,
}

/// A gold model: one SQL query over silver tables (never bronze).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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

/// Anti-patterns an instructor switches on to show what breaks (seed 003 §6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct AntiPatterns {
    /// "The shortcut": gold models may read bronze tables (duplicates and
    /// rejected records then count in business figures).
    #[serde(default)]
    pub gold_reads_bronze: bool,
    /// Silver tables (names without the layer) written by `INSERT INTO`
    /// instead of `MERGE INTO` (seed 003 §6, anti-pattern 4): each run's
    /// rows are deduplicated by the MERGE key among themselves, then
    /// appended to the table the last run left, so running the same job
    /// twice holds every row twice. The lab's twin sets it for
    /// [`crate::lab::AntiPattern::InsertInsteadOfMerge`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub insert_into: Vec<String>,
    /// "Monolithic silver" (seed 003 §6, anti-pattern 3): every silver
    /// table is one job, so a failure in any of them stops the whole run
    /// (no silver table, no gold model is refreshed). Off: each silver table
    /// is its own job and a failure holds back only what reads it. The
    /// lab's twin sets it for [`crate::lab::AntiPattern::MonolithicSilver`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub monolithic_silver: bool,
}

/// A whole pipeline: what the playground runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
