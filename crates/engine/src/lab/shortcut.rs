//! The shortcut (seed 003 §6, anti-pattern 1): under a deadline, gold
//! reads bronze and cleans it in its own query; months later a second gold
//! model does the same with a slightly different cleaning. Both answer
//! "the total amount of the orders", and they disagree.
//!
//! [`models`] writes the two queries for the scenario's first bronze table
//! with an amount column and a business key, and the same measure over the
//! silver table that reads it (the single source of truth) to compare them
//! with. Each query gives one row: `records BIGINT`, `total` (the amount's
//! declared type summed).

use medallion_protocol::bronze::{BatchInfo, SourceFormat};
use medallion_protocol::schema::ColumnType;
use medallion_protocol::{Scd, TableName};

use crate::model::{BronzeMode, PipelineDef};

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
    /// `(gold model name, SQL over bronze)`: `{table}_total_a` keeps one
    /// record per distinct payload (an amount that does not convert is
    /// NULL, its record still counted); `{table}_total_b` keeps the newest
    /// record (by `_ingest_ts`) of each business key whose amount is above
    /// 0. Neither applies silver's rules.
    pub models: Vec<(String, String)>,
    /// The same measure over the silver table (its current rows for SCD2).
    pub silver_sql: String,
}

/// The shortcut for `def`, or `None` when no bronze table has an amount
/// column, a silver table with a MERGE key that bronze declares, and
/// (stored raw) only CSV, JSON or Kafka batches in `batches`.
pub fn models(def: &PipelineDef, batches: &[BatchInfo]) -> Option<Shortcut> {
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
        let sql_type = match ty {
            ColumnType::Decimal { .. } => ty.sql_name(),
            ColumnType::Int | ColumnType::Bigint => "BIGINT".into(),
            _ => "DOUBLE".into(),
        };
        let quote = |s: &str| s.replace('\'', "''");
        let table = TableName::bronze(&b.name);
        let (field, distinct): (Box<dyn Fn(&str) -> String>, String) =
            if b.mode != BronzeMode::Raw {
                let cols: Vec<String> = b
                    .schema
                    .columns
                    .iter()
                    .map(|c| format!("\"{}\"", c.name.replace('"', "\"\"")))
                    .collect();
                (
                    Box::new(|c: &str| format!("CAST(\"{}\" AS VARCHAR)", c.replace('"', "\"\""))),
                    format!("SELECT DISTINCT {} FROM {table}", cols.join(", ")),
                )
            } else {
                let live: Vec<&BatchInfo> = batches
                    .iter()
                    .filter(|i| i.table == b.name && i.superseded_by.is_none())
                    .collect();
                let first = live.first()?;
                if live.iter().any(|i| i.format != first.format) {
                    return None;
                }
                let field: Box<dyn Fn(&str) -> String> = match first.format {
                    SourceFormat::Csv => {
                        let delim = first.dialect.as_ref().map_or(',', |d| d.delimiter);
                        let header = first.header.clone();
                        Box::new(move |c: &str| {
                            let n = header.iter().position(|h| h == c).map_or(0, |i| i + 1);
                            format!("split_part(raw_payload, '{}', {n})", quote(&delim.to_string()))
                        })
                    }
                    SourceFormat::Parquet => return None,
                    _ => Box::new(move |c: &str| format!("json_as_text(raw_payload, '{}')", quote(c))),
                };
                (field, format!("SELECT DISTINCT raw_payload FROM {table}"))
            };
        let amount_sql = format!("TRY_CAST({} AS {sql_type})", field(&amount));
        let cols = |name: &str| {
            if b.mode != BronzeMode::Raw {
                format!("\"{}\"", name.replace('"', "\"\""))
            } else {
                field(name)
            }
        };
        let a = format!(
            "SELECT COUNT(*) AS records, SUM(amount) AS total\nFROM (SELECT {} AS amount FROM ({distinct}) d) x",
            if b.mode != BronzeMode::Raw { format!("TRY_CAST({} AS {sql_type})", cols(&amount)) } else { amount_sql.clone() }
        );
        let bq = format!(
            "SELECT COUNT(*) AS records, SUM(amount) AS total\nFROM (SELECT {amount_sql} AS amount,\n             ROW_NUMBER() OVER (PARTITION BY {} ORDER BY _ingest_ts DESC, _event_id DESC) AS rn\n      FROM {table}) x\nWHERE rn = 1 AND amount > 0",
            field(&key)
        );
        let current = if merge.stored_as == Scd::Scd2 {
            "\nWHERE is_current"
        } else {
            ""
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
            silver_sql: format!(
                "SELECT COUNT(*) AS records, SUM(\"{}\") AS total\nFROM {}{current}",
                amount.replace('"', "\"\""),
                TableName::silver(&s.name)
            ),
        })
    })
}
