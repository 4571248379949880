//! What a pipeline is made of: bronze tables with their declared source
//! schemas, silver tables with their rule registries, gold models and quality
//! checks. The types are plain serde data in [`medallion_protocol`]
//! (`pipeline_def`, `checks`), re-exported here.

pub use medallion_protocol::checks::{CheckDef, CheckKind, CheckLevel, ContractColumn, Severity};
pub use medallion_protocol::pipeline_def::{
    AntiPatterns, BronzeMode, BronzeTableDef, GoldModelDef, PipelineDef, SilverTableDef,
};
