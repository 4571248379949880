//! `meta.bronze_checkpoints`: the watermarks of incremental runs as a table
//! of the lake with its own commit log (seed `000_87b8dd7200a8cd99.txt` §5:
//! `save_watermark` appends a row to `lakehouse.meta.bronze_checkpoints`
//! only after a successful run; the next incremental run reads past it).
//!
//! One row per checkpoint saved, oldest first:
//!
//! | column            | type               | meaning                                            |
//! |-------------------|--------------------|----------------------------------------------------|
//! | `bronze_table`    | Utf8               | the bronze table, with its layer (`bronze.orders`) |
//! | `last_ingest_ts`  | Timestamp(µs, UTC) | the new watermark: the largest `_ingest_ts` read   |
//! | `batches`         | Int64              | batches processed past the previous watermark      |
//! | `rows`            | Int64              | their rows                                         |
//! | `mode`            | Utf8               | `full` or `incremental`                            |
//! | `run`             | Int64              | the run that saved it                              |
//!
//! The session commits a new version of it with its own state
//! (`playground/save.rs`) whenever a run saved checkpoints, and opening a
//! lake reads the watermarks back from it.

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
};
use datafusion::arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use medallion_protocol::TableName;

use crate::api::{Checkpoint, RunMode};
use crate::error::{EngineError, Result};

/// The table's name: `meta.bronze_checkpoints`.
pub fn table() -> TableName {
    TableName::meta("bronze_checkpoints")
}

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("bronze_table", DataType::Utf8, false),
        Field::new(
            "last_ingest_ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("batches", DataType::Int64, false),
        Field::new("rows", DataType::Int64, false),
        Field::new("mode", DataType::Utf8, false),
        Field::new("run", DataType::Int64, false),
    ]))
}

fn mode_text(mode: RunMode) -> &'static str {
    match mode {
        RunMode::Full => "full",
        RunMode::Incremental => "incremental",
    }
}

/// The rows of `checkpoints`, in their order. Errors: a count past the
/// Int64 range (never in a tab: the engine refuses such files first).
pub fn to_batch(checkpoints: &[Checkpoint]) -> Result<RecordBatch> {
    let int = |n: u64, what: &str| {
        i64::try_from(n)
            .map_err(|_| EngineError::Internal(format!("{}: {what} {n} is past Int64", table())))
    };
    let mut batches = Vec::with_capacity(checkpoints.len());
    let mut rows = Vec::with_capacity(checkpoints.len());
    let mut runs = Vec::with_capacity(checkpoints.len());
    for c in checkpoints {
        batches.push(int(c.batches as u64, "batches")?);
        rows.push(int(c.rows as u64, "rows")?);
        runs.push(int(c.run, "run")?);
    }
    Ok(RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(StringArray::from_iter_values(
                checkpoints.iter().map(|c| c.bronze_table.to_string()),
            )),
            Arc::new(
                TimestampMicrosecondArray::from_iter_values(
                    checkpoints.iter().map(|c| c.last_ingest_ts_micros),
                )
                .with_timezone("UTC"),
            ),
            Arc::new(Int64Array::from(batches)),
            Arc::new(Int64Array::from(rows)),
            Arc::new(StringArray::from_iter_values(
                checkpoints.iter().map(|c| mode_text(c.mode)),
            )),
            Arc::new(Int64Array::from(runs)),
        ],
    )?)
}

/// The checkpoints a version of the table holds, in its row order.
/// Errors: the rows are not this table's (a column missing or of another
/// type, an unknown table or mode), naming the column.
pub fn from_batch(batch: &RecordBatch) -> Result<Vec<Checkpoint>> {
    let bad = |what: &str| EngineError::Storage(format!("{}: {what}", table()));
    fn column<'a, T: 'static>(batch: &'a RecordBatch, name: &str) -> Option<&'a T> {
        batch.column_by_name(name)?.as_any().downcast_ref::<T>()
    }
    let tables = column::<StringArray>(batch, "bronze_table")
        .ok_or_else(|| bad("no Utf8 column bronze_table"))?;
    let ts = column::<TimestampMicrosecondArray>(batch, "last_ingest_ts")
        .ok_or_else(|| bad("no Timestamp(µs) column last_ingest_ts"))?;
    let batches =
        column::<Int64Array>(batch, "batches").ok_or_else(|| bad("no Int64 column batches"))?;
    let rows = column::<Int64Array>(batch, "rows").ok_or_else(|| bad("no Int64 column rows"))?;
    let modes = column::<StringArray>(batch, "mode").ok_or_else(|| bad("no Utf8 column mode"))?;
    let runs = column::<Int64Array>(batch, "run").ok_or_else(|| bad("no Int64 column run"))?;
    let mut out = Vec::with_capacity(batch.num_rows());
    for r in 0..batch.num_rows() {
        let columns: [&dyn Array; 6] = [tables, ts, batches, rows, modes, runs];
        if columns.iter().any(|c| c.is_null(r)) {
            return Err(bad(&format!("row {r} has a NULL")));
        }
        let count = |a: &Int64Array, what: &str| {
            usize::try_from(a.value(r))
                .map_err(|_| bad(&format!("row {r}: {what} {} is negative", a.value(r))))
        };
        out.push(Checkpoint {
            bronze_table: TableName::parse(tables.value(r))
                .map_err(|e| bad(&format!("row {r}: {e}")))?,
            last_ingest_ts_micros: ts.value(r),
            batches: count(batches, "batches")?,
            rows: count(rows, "rows")?,
            mode: match modes.value(r) {
                "full" => RunMode::Full,
                "incremental" => RunMode::Incremental,
                other => {
                    return Err(bad(&format!(
                        "row {r}: mode '{other}' is neither full nor incremental"
                    )))
                }
            },
            run: count(runs, "run")? as u64,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoints_go_to_rows_and_back_unchanged() {
        let cps = vec![
            Checkpoint {
                bronze_table: TableName::bronze("orders"),
                last_ingest_ts_micros: 1_700_000_000_123_456,
                batches: 2,
                rows: 7,
                mode: RunMode::Full,
                run: 1,
            },
            Checkpoint {
                bronze_table: TableName::bronze("users"),
                last_ingest_ts_micros: -5,
                batches: 1,
                rows: 0,
                mode: RunMode::Incremental,
                run: 4,
            },
        ];
        let batch = to_batch(&cps).unwrap();
        assert_eq!(batch.num_rows(), 2);
        assert_eq!(
            batch.schema().field(1).data_type(),
            &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
        );
        assert_eq!(from_batch(&batch).unwrap(), cps);
    }

    #[test]
    fn rows_of_another_table_are_refused_naming_the_column() {
        let batch = RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new(
                "bronze_table",
                DataType::Int64,
                false,
            )])),
            vec![Arc::new(Int64Array::from(vec![1]))],
        )
        .unwrap();
        assert_eq!(
            from_batch(&batch).unwrap_err().to_string(),
            "storage: meta.bronze_checkpoints: no Utf8 column bronze_table"
        );
    }
}
