//! Medallion Playground engine: bronze / silver / gold semantics on
//! DataFusion, Arrow and Parquet in an in-memory object store.
//!
//! Compiles natively and for `wasm32-unknown-unknown`; imports nothing from
//! the web. Callers hold a [`Playground`] and send it [`api::Request`]s.
//!
//! Folders follow the medallion layers; a module only uses those below it
//! (`scripts/check-cycles.py` checks there is no import cycle):
//!
//! - ground: [`api`] (serializable requests and views), [`env`] (clock, ids),
//!   [`error`], [`model`] (the pipeline definition), [`progress`] (how far a
//!   long request got), [`query`] (running SQL in one partition), `checked`
//!   (internal: integer arithmetic and `sum` that fail on overflow).
//! - [`lake`]: object-store paths, the commit log, [`lake::versions`]
//!   (table versions, time travel, restore).
//! - [`bronze`]: append-only ingest with audit columns (seed 000 §2), the
//!   split of a file into records, the Spark read modes, [`bronze::kafka`]
//!   (a simulated topic with at-least-once delivery).
//! - [`silver`]: reading bronze with the declared schema, conversion, the
//!   rules and their stages, explode, merge, quarantine.
//! - [`output`] (what a run reads and produces), [`gold`] (SQL models),
//!   [`pipeline`] (one run: silver then gold), [`checks`] (row, schema and
//!   aggregate checks, seed 002 §8), [`trail`] (row lineage back to bronze).
//! - [`lab`]: the instructor's lab: the twin's bronze and its comparison
//!   with the session (anti-patterns, seed 000 §6, seed 003 §6).
//! - [`pii`]: the right to be forgotten three ways (seed 000 §7): the
//!   vault, the key store and the stream that lands tokens or ciphertexts.
//! - [`examples`]: the bundled examples and scenarios.
//! - [`playground`]: the [`Playground`] facade, one file per operation.
//!
//! The serde types that cross the boundary (requests, views, the pipeline
//! definition) live in [`medallion_protocol`], which has no Arrow or
//! DataFusion; the modules above re-export them under their old paths.

pub mod api;
pub mod bronze;
pub(crate) mod checked;
pub mod checks;
pub mod env;
pub mod error;
pub mod examples;
pub mod gold;
pub mod lab;
pub mod lake;
pub mod model;
pub mod output;
pub mod pii;
pub mod pipeline;
pub mod playground;
pub mod progress;
pub mod query;
pub mod silver;
pub mod trail;

// Paths kept for callers (the tests, `crates/wasm`, `crates/worker`) from
// before the modules moved into their layer's folder.
pub use bronze::kafka;
pub use examples as example;
pub use examples::scenarios;
pub use lake::versions;
pub use silver::{convert, explode, merge, rules, source};

pub use api::{Lang, PipelineView, Request, Response};
pub use error::{EngineError, Result};
pub use medallion_protocol::table::{Layer, TableName};
pub use playground::Playground;
