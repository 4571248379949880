//! The lake: every table is Parquet in an `object_store` store (in memory),
//! registered with DataFusion under `memory://lake/`.
//!
//! Layout: `{layer}/{table}/` holds the table's commit log (`_delta_log/`,
//! see [`log`]) and the data files it names, `part-{n:06}.parquet`: bronze
//! gets one file per batch (append-only); silver, the quarantine and gold
//! one file per version ([`versions`]). DataFusion reads bronze from its
//! files and a silver or gold table from the rows the last run produced,
//! in memory ([`crate::query::register_table`]); versions, time travel and
//! restore read the log. A file is
//! written with a single `put` of fully encoded bytes, so a reader sees
//! either the whole file or none of it.
//!
//! A commit is visible only once its log entry is written, after its files.

use std::sync::Arc;

use bytes::Bytes;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::basic::Compression;
use datafusion::parquet::file::properties::WriterProperties;
use futures::TryStreamExt;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

use crate::error::Result;

pub mod checkpoints;
pub mod log;
pub mod outage;
pub mod versions;

/// URL under which the store is registered with DataFusion.
pub const LAKE_URL: &str = "memory://lake/";

/// Handle to the in-memory object store holding every table's Parquet files.
#[derive(Debug, Clone)]
pub struct Lake {
    store: Arc<dyn ObjectStore>,
    /// The same store, as the lab's outage switch (see [`outage`]).
    outage: Arc<outage::Outage>,
}

impl Default for Lake {
    fn default() -> Self {
        Self::from_store(Arc::new(InMemory::new()))
    }
}

impl Lake {
    /// A lake over `store`, wrapped so the lab can make it answer 503
    /// ([`Lake::outage`]); the wrapper is what DataFusion registers.
    pub fn from_store(store: Arc<dyn ObjectStore>) -> Self {
        let outage = Arc::new(outage::Outage::new(store));
        Self {
            store: outage.clone(),
            outage,
        }
    }

    /// The switch of an object-store outage on this lake (the lab's technical failure).
    pub fn outage(&self) -> &outage::Outage {
        &self.outage
    }

    /// The store, for registration with a DataFusion runtime.
    pub fn store(&self) -> Arc<dyn ObjectStore> {
        self.store.clone()
    }

    /// Encodes `batches` (all of `schema`) as one Snappy-compressed Parquet file
    /// and writes it at `path` with a single `put`. Returns the file size in bytes.
    pub async fn write_parquet(
        &self,
        path: &str,
        schema: SchemaRef,
        batches: &[RecordBatch],
    ) -> Result<usize> {
        let bytes = encode_parquet(schema, batches)?;
        let len = bytes.len();
        self.store
            .put(&Path::from(path), PutPayload::from(bytes))
            .await
            .map_err(|e| at(path, e))?;
        Ok(len)
    }

    /// Writes `bytes` as they are (the landing zone keeps files as received).
    pub async fn put_bytes(&self, path: &str, bytes: Vec<u8>) -> Result<()> {
        self.store
            .put(&Path::from(path), PutPayload::from(bytes))
            .await
            .map_err(|e| at(path, e))?;
        Ok(())
    }

    /// Deletes one file.
    pub async fn delete(&self, path: &str) -> Result<()> {
        self.store
            .delete(&Path::from(path))
            .await
            .map_err(|e| at(path, e))?;
        Ok(())
    }

    /// Reads a file's bytes.
    pub async fn get_bytes(&self, path: &str) -> Result<Bytes> {
        let read = async { self.store.get(&Path::from(path)).await?.bytes().await };
        read.await.map_err(|e| at(path, e))
    }

    /// Reads one Parquet file back into record batches.
    pub async fn read_parquet(&self, path: &str) -> Result<Vec<RecordBatch>> {
        decode_parquet(self.get_bytes(path).await?)
    }

    /// The paths of every file under `dir` (`""`: the whole lake).
    pub async fn list(&self, dir: &str) -> Result<Vec<String>> {
        let prefix = (!dir.is_empty()).then(|| Path::from(dir));
        self.store
            .list(prefix.as_ref())
            .map_ok(|m| m.location.to_string())
            .try_collect()
            .await
            .map_err(|e| at(dir, e))
    }
}

/// A store error naming the file it was about (`silver/orders/part-000003.parquet: …`).
fn at(path: &str, e: object_store::Error) -> crate::error::EngineError {
    crate::error::EngineError::Storage(format!("{path}: {e}"))
}

/// Why a table with `schema` cannot be stored as Parquet, naming the column:
/// a Union column (what `json_get` returns, a JSON value of mixed type)
/// makes the Parquet writer panic ("See ARROW-8817"), which would kill the
/// browser module. `None`: it can be stored.
pub fn unstorable_column(schema: &datafusion::arrow::datatypes::Schema) -> Option<String> {
    use datafusion::arrow::datatypes::DataType;
    fn has_union(t: &DataType) -> bool {
        match t {
            DataType::Union(..) => true,
            DataType::List(f)
            | DataType::LargeList(f)
            | DataType::ListView(f)
            | DataType::LargeListView(f)
            | DataType::FixedSizeList(f, _)
            | DataType::Map(f, _) => has_union(f.data_type()),
            DataType::Struct(fields) => fields.iter().any(|f| has_union(f.data_type())),
            DataType::Dictionary(_, v) => has_union(v),
            DataType::RunEndEncoded(_, v) => has_union(v.data_type()),
            _ => false,
        }
    }
    let field = schema.fields().iter().find(|f| has_union(f.data_type()))?;
    Some(format!(
        "column {} holds JSON values of mixed types (what json_get returns), which a table cannot store: use json_get_str, json_get_int, json_get_float, json_get_bool or json_get_json (the value's JSON text) instead",
        field.name()
    ))
}

/// Columns whose every value is its own (the record's text, its event id
/// and its line in the file): written without a dictionary, which would
/// only fill up and be dropped. The first two also without min / max
/// statistics, which no query prunes by. The writer then spends its time
/// on the other columns (measured on the 336,776 flights records in wasm:
/// 10% less time per file).
const NO_DICTIONARY: [&str; 3] = ["raw_payload", "_event_id", "_source_line"];
const NO_STATISTICS: [&str; 2] = ["raw_payload", "_event_id"];

/// Parquet bytes for `batches` (Snappy: pure Rust, builds for wasm32).
/// Refuses a schema the writer cannot store ([`unstorable_column`]).
pub fn encode_parquet(schema: SchemaRef, batches: &[RecordBatch]) -> Result<Bytes> {
    use datafusion::parquet::file::properties::EnabledStatistics;
    use datafusion::parquet::schema::types::ColumnPath;
    if let Some(why) = unstorable_column(&schema) {
        return Err(crate::error::EngineError::Request(why));
    }
    let mut props = WriterProperties::builder().set_compression(Compression::SNAPPY);
    for name in NO_DICTIONARY {
        if schema.column_with_name(name).is_some() {
            props = props.set_column_dictionary_enabled(ColumnPath::from(name), false);
        }
    }
    for name in NO_STATISTICS {
        if schema.column_with_name(name).is_some() {
            props = props
                .set_column_statistics_enabled(ColumnPath::from(name), EnabledStatistics::None);
        }
    }
    let props = props.build();
    let mut buf = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut buf, schema, Some(props))?;
    for b in batches {
        writer.write(b)?;
    }
    writer.close()?;
    Ok(Bytes::from(buf))
}

/// `batches` as one batch of `schema`, like arrow's `concat_batches`, which
/// indexes each batch's columns by the schema's positions and panics when a
/// batch has fewer (a panic kills the whole module in the browser). A batch
/// whose columns are the schema's in another order is read by name; one
/// that lacks a column, has one more, or has another type is an error that
/// names the column.
pub fn concat_batches<'a>(
    schema: &SchemaRef,
    batches: impl IntoIterator<Item = &'a RecordBatch>,
) -> std::result::Result<RecordBatch, datafusion::arrow::error::ArrowError> {
    use datafusion::arrow::error::ArrowError;
    let mut aligned: Vec<RecordBatch> = Vec::new();
    for b in batches {
        if b.schema().fields() == schema.fields() {
            aligned.push(b.clone());
            continue;
        }
        let mismatch = |why: String| ArrowError::SchemaError(why);
        if b.num_columns() != schema.fields().len() {
            return Err(mismatch(format!(
                "a batch has {} columns where the table has {} ({})",
                b.num_columns(),
                schema.fields().len(),
                schema
                    .fields()
                    .iter()
                    .map(|f| f.name().as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let mut columns = Vec::with_capacity(schema.fields().len());
        for f in schema.fields() {
            let Some(c) = b.column_by_name(f.name()) else {
                return Err(mismatch(format!("a batch has no column {}", f.name())));
            };
            if c.data_type() != f.data_type() {
                return Err(mismatch(format!(
                    "column {} is {} in a batch and {} in the table",
                    f.name(),
                    c.data_type(),
                    f.data_type()
                )));
            }
            columns.push(c.clone());
        }
        aligned.push(RecordBatch::try_new_with_options(
            schema.clone(),
            columns,
            &datafusion::arrow::array::RecordBatchOptions::new().with_row_count(Some(b.num_rows())),
        )?);
    }
    // One batch: its arrays as they are (arrow's concat copies them, which
    // for a bronze table read whole on every run was 7% of a rule edit).
    // (A batch whose schema carries metadata `schema` lacks is copied.)
    if let [only] = aligned.as_slice() {
        if let Ok(batch) = only.clone().with_schema(schema.clone()) {
            return Ok(batch);
        }
    }
    datafusion::arrow::compute::concat_batches(schema, &aligned)
}

/// The whole Parquet file as one record batch (with its schema even when
/// it holds no rows).
pub fn decode_parquet_table(data: Bytes) -> Result<RecordBatch> {
    let builder = ParquetRecordBatchReaderBuilder::try_new(data)?;
    let schema = builder.schema().clone();
    let mut batches = Vec::new();
    for b in builder.build()? {
        batches.push(b?);
    }
    Ok(concat_batches(&schema, &batches)?)
}

/// Does `column` come back from [`encode_parquet`] and [`decode_parquet`]
/// with the very same values and type? True for the types bronze stores
/// (raw: `Utf8`, `Int64`, `Binary`, `Timestamp(µs, UTC)`; typed: also
/// `Int32`, `Float64`, `Boolean`, `Date32`, `Timestamp(µs)`, and
/// `Decimal128` whose values fit its precision: Parquet keeps a DECIMAL of
/// precision 9 or less in 32 bits, 18 or less in 64). Parquet holds these
/// values bit for bit and the embedded Arrow schema gives the type back
/// (time zone, precision and scale). `tests/prop_parquet_exact.rs` checks
/// it on random columns of each type, NULLs, empty strings, NaN and -0.0
/// included. Ingest skips decoding the file it just encoded when every
/// column is exact.
pub fn parquet_round_trip_exact(column: &dyn datafusion::arrow::array::Array) -> bool {
    use datafusion::arrow::array::AsArray;
    use datafusion::arrow::datatypes::{DataType as D, Decimal128Type, TimeUnit};
    match column.data_type() {
        D::Utf8
        | D::Int64
        | D::Int32
        | D::Binary
        | D::Boolean
        | D::Float64
        | D::Date32
        | D::Timestamp(TimeUnit::Microsecond, _) => true,
        D::Decimal128(precision, _) => column
            .as_primitive_opt::<Decimal128Type>()
            .is_some_and(|a| a.validate_decimal_precision(*precision).is_ok()),
        _ => false,
    }
}

/// Record batches from Parquet bytes.
pub fn decode_parquet(data: Bytes) -> Result<Vec<RecordBatch>> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(data)?.build()?;
    let mut out = Vec::new();
    for b in reader {
        out.push(b?);
    }
    Ok(out)
}

#[cfg(test)]
mod concat_tests {
    use super::*;
    use datafusion::arrow::array::{ArrayRef, Int64Array, StringArray};
    use datafusion::arrow::datatypes::{DataType, Field, Schema};

    fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
        RecordBatch::try_from_iter(columns).unwrap()
    }

    #[test]
    fn a_batch_that_does_not_fit_the_schema_is_an_error_not_a_panic() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("b", DataType::Utf8, true),
        ]));
        let a: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
        let b: ArrayRef = Arc::new(StringArray::from(vec!["x", "y"]));
        // Fewer columns: arrow's concat_batches indexes past the end.
        let short = batch(vec![("a", a.clone())]);
        assert_eq!(
            concat_batches(&schema, [&short]).unwrap_err().to_string(),
            "Schema error: a batch has 1 columns where the table has 2 (a, b)"
        );
        // The same columns in another order are read by name.
        let swapped = batch(vec![("b", b.clone()), ("a", a.clone())]);
        let both = concat_batches(
            &schema,
            [&batch(vec![("a", a.clone()), ("b", b.clone())]), &swapped],
        )
        .unwrap();
        assert_eq!(both.num_rows(), 4);
        assert_eq!(both.schema(), schema);
        // Another type is named.
        let typed = batch(vec![("a", b.clone()), ("b", b)]);
        assert_eq!(
            concat_batches(&schema, [&typed]).unwrap_err().to_string(),
            "Schema error: column a is Utf8 in a batch and Int64 in the table"
        );
    }

    #[test]
    fn one_batch_keeps_its_arrays_and_gets_the_tables_schema() {
        let a: ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 3]));
        let one = batch(vec![("a", a.clone())]);
        let schema = one.schema();
        let out = concat_batches(&schema, [&one]).unwrap();
        assert_eq!(out, one);
        // Not copied: the same buffer.
        assert!(Arc::ptr_eq(out.column(0), &a));
        // A batch whose schema has metadata the table's lacks: copied, same rows.
        let tagged = one
            .clone()
            .with_schema(Arc::new(
                schema
                    .as_ref()
                    .clone()
                    .with_metadata([("k".to_string(), "v".to_string())].into()),
            ))
            .unwrap();
        let out = concat_batches(&schema, [&tagged]).unwrap();
        assert_eq!((out.num_rows(), out.schema()), (3, schema.clone()));
        assert_eq!(out.column(0).as_ref(), a.as_ref());
    }
}
