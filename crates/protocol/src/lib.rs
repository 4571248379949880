//! Medallion Playground protocol: everything that crosses the engine's
//! boundary, as plain serde data. Requests and responses, the views the UI
//! draws, the pipeline definition (bronze / silver / gold, rules, checks)
//! and the list of bundled examples.
//!
//! No Arrow, DataFusion or web dependency: the UI links this crate alone,
//! and the engine re-exports these types under its own module paths
//! (`medallion_engine::rules::Rule` is [`Rule`]). The JSON form of every
//! type is the engine's wire format (requests from the UI and JavaScript,
//! the example files in `static/examples/`).
//!
//! - [`request`]: [`Request`], [`Response`], [`Lang`].
//! - [`view`]: [`PipelineView`] and the table, silver and gold views in it.
//! - [`runs`]: run mode, checkpoints and watermarks, run records, replay.
//! - [`pipeline_def`]: [`PipelineDef`] and its bronze, silver and gold parts.
//! - [`schema`]: declared source schemas and column types.
//! - [`table`]: [`TableName`] (`layer.name`) and [`Layer`].
//! - [`rules`]: the rule registry and each rule's run figures.
//! - [`checks`]: quality check definitions and results.
//! - [`bronze`]: the batch log and ingest options.
//! - [`kafka`], [`merge`], [`explode`]: topics, merge specs, exploded arrays.
//! - [`history`]: table versions. [`lineage`]: row trails.
//! - [`forget`]: right-to-be-forgotten plans and the erasure log.
//! - [`lab`]: the instructor's lab (anti-patterns, events, the twin compared).
//! - [`pii`]: the right to be forgotten three ways (tokenization,
//!   crypto-shredding, DELETE + expiry) side by side.
//! - [`examples`]: the bundled examples' keys and titles.
//! - [`wire`]: messages between the page and the engine's Web Worker
//!   (request ids, progress reports).

pub mod bronze;
pub mod checks;
pub mod examples;
pub mod explode;
pub mod forget;
pub mod history;
pub mod kafka;
pub mod lab;
pub mod lineage;
pub mod merge;
pub mod pii;
pub mod pipeline_def;
pub mod request;
pub mod rules;
pub mod runs;
pub mod schema;
pub mod table;
pub mod view;
pub mod wire;

pub use bronze::{BatchInfo, CsvDialect, HeaderRename, IngestOptions, SourceFormat};
pub use checks::{
    CheckDef, CheckKind, CheckLevel, CheckResult, CheckStatus, ContractColumn, Severity,
    SAMPLE_ROWS,
};
pub use examples::{example_catalog, example_names, ExampleInfo, DEFAULT_EXAMPLE, EXAMPLES};
pub use explode::{ExplodeSpec, ExplodeStats};
pub use forget::{Erasure, ErasureChange, ErasurePlan, PLAN_SAMPLE_ROWS};
pub use history::VersionInfo;
pub use kafka::{KafkaMessage, TopicView};
pub use lab::{
    AntiPattern, HealthCheck, HealthSign, LabCheck, LabCount, LabEvent, LabEventRecord, LabGold,
    LabMeasure, LabRow, LabView, SignState,
};
pub use lineage::{RowTrail, TraceEntry, TrailRecord, TrailSilverRow};
pub use merge::{MergeSpec, Scd};
pub use pii::{PiiCell, PiiCustomer, PiiFacts, PiiMethod, PiiMethodView, PiiTable, PiiView};
pub use pipeline_def::{
    AntiPatterns, BronzeMode, BronzeTableDef, GoldModelDef, PipelineDef, SilverTableDef,
};
pub use request::{Lang, Request, Response};
pub use rules::{Action, Lookup, Rule, RuleKind, RuleParam, RuleRegistry, RuleStat};
pub use runs::{
    watermarks, Checkpoint, ReplayReport, ReplayTable, RunInfo, RunMode, RunRecord, RUN_HISTORY,
};
pub use schema::{
    AmbiguousTime, ColumnType, NonexistentTime, ReadAsUtc, SourceColumn, SourceSchema,
};
pub use table::{IntoTableName, Layer, TableName, TableNameError};
pub use view::{
    ColumnView, GoldView, PipelineView, ReadAsUtcView, RuleView, SilverView, TableView,
    PREVIEW_ROWS,
};
