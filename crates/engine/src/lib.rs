//! Medallion Playground engine: bronze / silver / gold semantics on
//! DataFusion, Arrow and Parquet in an in-memory object store.
//!
//! Compiles natively and for `wasm32-unknown-unknown`; imports nothing from
//! the web. Callers hold a [`Playground`] and send it [`api::Request`]s.
//!
//! - [`bronze`]: append-only ingest with audit columns (seed 000 §2).
//! - [`source`]: reading bronze payloads with a declared schema.
//! - [`convert`]: strict text → type conversion (DECIMAL, formats; never rounded).
//! - [`rules`]: the rule registry (seed 002 §3).
//! - [`pipeline`]: filters → normalizations → enrichments → silver, quarantine, gold.
//! - [`explode`]: a JSON array of each bronze record as a child silver table.
//! - [`merge`]: dedup by business key, MERGE as SCD type 1, SCD type 2 history.
//! - [`kafka`]: a simulated Kafka topic with at-least-once delivery.
//! - [`versions`]: table versions, time travel, restore.
//! - [`checks`]: row, schema and aggregate checks (seed 002 §8).
//! - [`trail`]: row lineage, from a silver / quarantine / gold row back to bronze.
//! - [`api`]: serializable requests and views for the UI and JavaScript.
//! - [`progress`]: how far a long request got (read by the Web Worker).
//! - `checked` (internal): integer arithmetic and `sum` that fail on overflow instead of wrapping.
//!
//! The serde types that cross the boundary (requests, views, the pipeline
//! definition) live in [`medallion_protocol`], which has no Arrow or
//! DataFusion; the modules above re-export them under their old paths.

pub mod api;
pub mod bronze;
pub(crate) mod checked;
pub mod checks;
pub mod convert;
pub mod env;
pub mod error;
pub(crate) mod eval;
pub mod example;
pub mod explode;
pub mod kafka;
pub mod lake;
pub mod merge;
pub mod model;
pub mod pipeline;
pub mod playground;
pub mod progress;
pub mod rules;
pub mod scenarios;
pub mod source;
pub mod trail;
pub mod versions;

pub use api::{Lang, PipelineView, Request, Response};
pub use error::{EngineError, Result};
pub use playground::Playground;
