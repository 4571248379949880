//! What one pipeline run reads ([`RunInput`]: the definition, bronze, the
//! previous run) and produces ([`RunOutput`]: every table, the rule stats,
//! the notices). Below [`crate::gold`] and [`crate::pipeline`], which both
//! take the previous run's output; above [`crate::silver`], whose results
//! it carries.

use std::collections::BTreeMap;

use datafusion::arrow::array::RecordBatch;
use datafusion::prelude::SessionContext;

use crate::bronze::BatchInfo;
use crate::error::Diagnostic;
use crate::model::PipelineDef;
use crate::silver::source::{MissingColumn, ReadAsUtc};
use medallion_protocol::rules::RuleStat;
use medallion_protocol::{IntoTableName, TableName};

/// Output of a table in the run.
#[derive(Debug, Clone)]
pub struct TableData {
    /// `silver.nyc_taxi_yellow`.
    pub name: TableName,
    pub batch: RecordBatch,
}

/// Everything a successful run produced. A saved session keeps all but
/// the rows (`tables`, `typed_bronze`) as JSON; those are in the lake.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct RunOutput {
    /// `bronze.*`, then silver tables, `silver.quarantine`, then `gold.*`.
    #[serde(skip)]
    pub tables: Vec<TableData>,
    /// Readable (typed) bronze rows per bronze table, before any rule.
    #[serde(skip)]
    pub typed_bronze: BTreeMap<String, RecordBatch>,
    /// The batches (`_batch_id`s, in ingest order) of each bronze table
    /// (name without layer) the run read: its `bronze.*` tables; the live
    /// ones (not superseded) are what `typed_bronze` holds.
    #[serde(default)]
    pub bronze_batches: BTreeMap<String, Vec<String>>,
    pub rule_stats: Vec<RuleStat>,
    /// Declared source columns missing from some batches, per bronze table.
    pub missing_columns: BTreeMap<String, Vec<MissingColumn>>,
    /// TIMESTAMP source columns without a declared zone whose values had no
    /// offset and were taken as UTC, per bronze table (name without layer).
    pub read_as_utc: BTreeMap<String, Vec<ReadAsUtc>>,
    /// Gold models that failed (scope `gold`), or were not run because they
    /// read a table this run did not refresh; their tables are missing from `tables`.
    pub gold_errors: Vec<Diagnostic>,
    /// Why silver tables were not refreshed: rule diagnostics (scope `rule`,
    /// `table` set) and pipeline ones (a failed or blocked table, scope
    /// `pipeline`, `id` the silver table). Empty when every silver table was built.
    #[serde(default)]
    pub silver_errors: Vec<Diagnostic>,
    /// Tables this run did not refresh (qualified): silver tables whose rules
    /// failed or that read one, gold models over them. Each silver one in
    /// `tables` holds its last good rows (absent if it never had any).
    #[serde(default)]
    pub not_refreshed: Vec<TableName>,
    /// Per silver table (qualified): rows that passed the rules but are not
    /// rows of the table (duplicates, superseded states, deletes), counted
    /// over every run that built the current table.
    pub removed: BTreeMap<TableName, usize>,
    /// Per silver table (qualified): this run's rows removed by the merge, for the row trail.
    pub merge_log: BTreeMap<TableName, Vec<crate::silver::merge::RemovedRow>>,
    /// Per merged silver table (qualified): what has been merged into it,
    /// so an incremental run can tell whether merging its new rows into the
    /// current table gives what a full refresh would (see [`crate::silver::merge::MergeState`]).
    pub merge_state: BTreeMap<TableName, crate::silver::merge::MergeState>,
    /// What the run wants the user to know, e.g. that an incremental run
    /// rebuilt a merged table from all of bronze (and why).
    pub notes: Vec<String>,
    /// Gold models (name without the layer) that read bronze tables: only
    /// with the "gold reads bronze" anti-pattern on.
    pub gold_reads_bronze: BTreeMap<String, Vec<String>>,
    /// Per child silver table (qualified; one with an `explode`): what its
    /// explode read, counted over every run that built the current table.
    pub exploded: BTreeMap<TableName, crate::silver::explode::ExplodeStats>,
    /// Per bronze table (qualified): records of batches read again with
    /// other options (`BatchInfo::superseded_by`), which silver does not read.
    pub superseded: BTreeMap<TableName, usize>,
    /// Per child silver table (qualified; one with an `explode`): its
    /// element TIMESTAMP columns (no declared zone) whose values had no
    /// offset and were taken as UTC, counted over every run that built the
    /// current table, as [`RunOutput::read_as_utc`] counts source columns.
    pub exploded_read_as_utc: BTreeMap<TableName, Vec<ReadAsUtc>>,
}

impl RunOutput {
    /// The output table named `name`.
    pub fn table(&self, name: impl IntoTableName) -> Option<&RecordBatch> {
        let name = name.into_table_name()?;
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
    /// A silver table (name without layer) whose job this run fails on
    /// purpose before it reads anything: the lab's "a silver job fails"
    /// event (seed 003 §6). `None` outside the lab.
    pub fail_silver: Option<&'a str>,
    /// The language of that failure's message (the session's).
    pub lang: medallion_protocol::request::Lang,
    /// Bronze as the last run read it ([`crate::silver::parse_cache`]):
    /// `None` reads every table again.
    pub parse_cache: Option<&'a crate::silver::parse_cache::ParseCache>,
    /// Each silver table's rule steps as the last full run computed them
    /// ([`crate::silver::step_cache`]): `None` runs every rule.
    pub step_cache: Option<&'a crate::silver::step_cache::StepCache>,
}
