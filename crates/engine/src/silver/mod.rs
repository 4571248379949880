//! Silver: bronze read with its declared schema, cleaned by the rule
//! registry, merged, with what it rejects in `silver.quarantine`
//! (seed 000 §4, seed 002 §3, seed 003 §4).
//!
//! - [`source`]: reading bronze payloads with a declared schema.
//! - [`parse_cache`]: bronze as silver last read it, reused by the next run.
//! - [`step_cache`]: each table's rule steps as the last run computed them.
//! - [`convert`]: strict text → type conversion (DECIMAL, formats; never rounded).
//! - [`explode`]: a JSON array of each bronze record as a child silver table.
//! - [`rules`]: the rule registry (seed 002 §3).
//! - `eval` (internal): one SQL expression evaluated for every row, on its row.
//! - `stage`, `filter`, `normalize`, `enrich`, `select`, `build` (internal):
//!   the rule stages of one silver table, in that order.
//! - [`merge`]: dedup by business key, MERGE as SCD type 1, SCD type 2 history.
//! - [`quarantine`]: the history of rejected rows.
//!
//! [`crate::pipeline`] runs them for every silver table of a run.

pub mod convert;
pub(crate) mod csv_read;
pub(crate) mod eval;
pub mod explode;
pub mod merge;
pub mod parse_cache;
pub mod quarantine;
pub mod rules;
pub mod source;
pub mod step_cache;

pub(crate) mod build;
pub(crate) mod enrich;
pub(crate) mod filter;
pub(crate) mod normalize;
pub(crate) mod select;
pub(crate) mod stage;
