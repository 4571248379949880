//! The shortcut (seed 003 §6, anti-pattern 1): under a deadline, gold
//! reads bronze and cleans it in its own query; months later a second gold
//! model does the same with a slightly different cleaning. Both answer
//! "the total amount of the orders", and they disagree.
//!
//! [`models`] writes the two queries for the scenario's first bronze table
//! with an amount column and a business key, and the same measure over the
//! silver table that reads it (the single source of truth) to compare them
//! with. Both read bronze's records as its declared schema parses them
//! ([`SOURCE`]: the parsed rows with their lineage columns and `_arrival`,
//! the record's place in arrival order), then clean them their own way.
//! Each query gives one row: `records BIGINT`, `total` (the amount summed).

use medallion_protocol::{Scd, TableName};

use crate::model::{BronzeMode, PipelineDef};

/// The table name the two models read: bronze's parsed records.
pub const SOURCE: &str = "shortcut_bronze_records";

/// The shortcut's two gold models over one bronze table.
#[derive(Debug, Clone, PartialEq)]
pub struct Shortcut {
    /// The bronze table both read (without the layer).
    pub table: String,
    /// The silver table that reads it (without the layer).
    pub silver: String,
    /// The amount column they total, as bronze declares it.
    pub amount: String,
    /// The business key the second model keeps the newest record of.
    pub key: String,
    /// `(gold model name, SQL over [`SOURCE`])`: `{table}_total_a` keeps one
    /// record per distinct payload (an amount that does not convert is
    /// NULL, its record still counted); `{table}_total_b` keeps the newest
    /// record of each business key whose amount is above 0. Neither applies
    /// silver's rules.
    pub models: Vec<(String, String)>,
    /// The same measure over the silver table (its current rows for SCD2);
    /// the second form reads a text amount as a number.
    pub silver_sql: [String; 2],
}

fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The shortcut for `def`, or `None` when no bronze table has an amount
/// column and a silver table with a MERGE key that bronze declares.
/// `decimal` is the table's decimal separator (for an amount declared as
/// text).
pub fn models(def: &PipelineDef, decimal: impl Fn(&str) -> char) -> Option<Shortcut> {
    def.bronze.iter().find_map(|b| {
        let amount = super::amount_column(b)?;
        let s = def
            .silver
            .iter()
            .find(|s| s.source == b.name && s.explode.is_none() && s.merge.is_some())?;
        let merge = s.merge.as_ref()?;
        let key = merge
            .keys
            .iter()
            .find(|k| b.schema.columns.iter().any(|c| &c.name == *k))?
            .clone();
        let ty = b.schema.columns.iter().find(|c| c.name == amount)?.data_type;
        let amount_sql = if ty.is_numeric() {
            quoted(&amount)
        } else {
            let d = decimal(&b.name).to_string().replace('\'', "''");
            format!("TRY_CAST(replace({}, '{d}', '.') AS DOUBLE)", quoted(&amount))
        };
        // A typed bronze keeps no payload text: its declared columns are the record.
        let distinct = if b.mode == BronzeMode::Raw {
            format!("SELECT DISTINCT raw_payload, {amount_sql} AS amount FROM {SOURCE}")
        } else {
            let cols: Vec<String> = b.schema.columns.iter().map(|c| quoted(&c.name)).collect();
            format!(
                "SELECT DISTINCT {}, {amount_sql} AS amount FROM {SOURCE}",
                cols.join(", ")
            )
        };
        let a = format!(
            "SELECT COUNT(*) AS records, SUM(amount) AS total\nFROM ({distinct}) d"
        );
        let bq = format!(
            "SELECT COUNT(*) AS records, SUM(amount) AS total\nFROM (SELECT {amount_sql} AS amount,\n             ROW_NUMBER() OVER (PARTITION BY {} ORDER BY _arrival DESC) AS rn\n      FROM {SOURCE}) x\nWHERE rn = 1 AND amount > 0",
            quoted(&key)
        );
        let current = if merge.stored_as == Scd::Scd2 {
            "\nWHERE is_current"
        } else {
            ""
        };
        let silver = |amount_sql: String| {
            format!(
                "SELECT COUNT(*) AS records, SUM({amount_sql}) AS total\nFROM {}{current}",
                TableName::silver(&s.name)
            )
        };
        Some(Shortcut {
            table: b.name.clone(),
            silver: s.name.clone(),
            amount: amount.clone(),
            key: key.clone(),
            models: vec![
                (format!("{}_total_a", b.name), a),
                (format!("{}_total_b", b.name), bq),
            ],
            silver_sql: [
                silver(quoted(&amount)),
                silver(format!("TRY_CAST({} AS DOUBLE)", quoted(&amount))),
            ],
        })
    })
}
