//! Bronze: the append-only archive of everything a source sent.
//!
//! Each ingest call is one batch. Every record of the file becomes one row:
//!
//! | column           | type                 | meaning (seed `000_87b8dd7200a8cd99.txt` §2, §3)           |
//! |------------------|----------------------|------------------------------------------------------------|
//! | `raw_payload`    | Utf8                 | the record's text exactly as in the file                   |
//! | `_ingest_ts`     | Timestamp(µs, UTC)   | when the playground wrote the batch                        |
//! | `_source_system` | Utf8                 | which system sent it (`tlc_trip_files`)                    |
//! | `_source_file`   | Utf8                 | file name, or `topic:partition:offset` for Kafka           |
//! | `_event_id`      | Utf8 (UUID v4)       | one per record; not a dedup key                            |
//! | `_batch_id`      | Utf8 (UUID v4)       | one per ingest call                                        |
//! | `_source_line`   | Int64, nullable      | 1-based line where the record starts (row for Parquet)     |
//! | `_corrupt_reason`| Utf8, nullable       | why the record is not well-formed (kept all the same)      |
//! | `_raw_bytes`     | Binary, nullable     | the original bytes when they are not valid UTF-8           |
//! | `_producer_ts`   | Timestamp(µs, UTC)?  | Kafka producer time, kept apart from `_ingest_ts`          |
//!
//! Nothing is filtered, typed, deduplicated or rewritten here: deciding what is
//! garbage is silver's job. The batch is encoded completely before the single
//! write, so it lands whole or not at all.

mod split;

use std::sync::Arc;

use datafusion::arrow::array::{
    ArrayRef, BinaryArray, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::Result;

pub(crate) use split::{csv_reader, json_record};
pub use split::{
    split_file, CsvDialect, IngestOptions, RawRecord, SourceFormat, SplitFile, MAX_RECORDS,
};

/// Names of the five audit columns of seed 000, in table order after `raw_payload`.
pub const AUDIT_COLUMNS: [&str; 5] = [
    "_ingest_ts",
    "_source_system",
    "_source_file",
    "_event_id",
    "_batch_id",
];

fn utc_micros() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
}

/// Arrow schema of every bronze table (see the module docs).
pub fn bronze_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("raw_payload", DataType::Utf8, false),
        Field::new("_ingest_ts", utc_micros(), false),
        Field::new("_source_system", DataType::Utf8, false),
        Field::new("_source_file", DataType::Utf8, false),
        Field::new("_event_id", DataType::Utf8, false),
        Field::new("_batch_id", DataType::Utf8, false),
        Field::new("_source_line", DataType::Int64, true),
        Field::new("_corrupt_reason", DataType::Utf8, true),
        Field::new("_raw_bytes", DataType::Binary, true),
        Field::new("_producer_ts", utc_micros(), true),
    ]))
}

/// Arrow schema of a typed bronze table (modes PERMISSIVE, FAILFAST,
/// DROPMALFORMED): the declared columns (nullable, their declared types),
/// `_corrupt_record` (Utf8, the text of a record that did not fit), then the
/// audit columns of [`bronze_schema`] after `raw_payload`.
pub fn typed_bronze_schema(schema: &crate::source::SourceSchema) -> SchemaRef {
    let mut fields: Vec<Field> = schema
        .columns
        .iter()
        .map(|c| Field::new(&c.name, c.data_type.arrow_type(), true))
        .collect();
    fields.push(Field::new("_corrupt_record", DataType::Utf8, true));
    fields.extend(
        bronze_schema()
            .fields()
            .iter()
            .skip(1)
            .map(|f| f.as_ref().clone()),
    );
    Arc::new(Schema::new(fields))
}

/// A typed bronze batch: `typed` holds one array per declared column (NULL
/// where the record did not fit); `records` gives `_corrupt_record` (the text
/// of records with a reason) and the audit columns.
pub fn typed_bronze_batch(
    schema: &crate::source::SourceSchema,
    typed: Vec<ArrayRef>,
    records: &[RawRecord],
    audit: Audit<'_>,
) -> Result<RecordBatch> {
    let mut columns = typed;
    columns.push(Arc::new(StringArray::from_iter(
        records
            .iter()
            .map(|r| r.corrupt_reason.as_ref().map(|_| r.text.as_str())),
    )));
    columns.extend(audit_columns(records, audit));
    Ok(RecordBatch::try_new(typed_bronze_schema(schema), columns)?)
}

/// Lowercase hex SHA-256 of `bytes` (the batch log's checksum).
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// One entry of the batch log: what one ingest call appended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchInfo {
    pub batch_id: String,
    /// Bronze table name without the layer, e.g. `nyc_taxi_yellow`.
    pub table: String,
    pub source_system: String,
    /// File name (or `topic:partition` for a Kafka micro-batch).
    pub file_name: String,
    pub format: SourceFormat,
    /// CSV only: the dialect the file was read with.
    pub dialect: Option<CsvDialect>,
    /// WHATWG name of the encoding (`utf-8`, `windows-1251`, `binary` for Parquet).
    pub encoding: String,
    /// CSV header fields (silver reads this batch's payloads with them); Parquet columns.
    pub header: Vec<String>,
    /// Exact text of the CSV header record.
    pub header_text: Option<String>,
    /// Exact text of CSV records before the header (banners), kept here.
    pub skipped_lines: Vec<String>,
    pub records: usize,
    /// Records a DROPMALFORMED bronze discarded (not in `records`, gone).
    #[serde(default)]
    pub dropped_records: usize,
    /// The bronze mode the batch was written in.
    #[serde(default)]
    pub mode: crate::model::BronzeMode,
    /// Records with a `_corrupt_reason`.
    pub corrupt_records: usize,
    /// Typed bronze: TIMESTAMP columns without a declared `time_zone` whose
    /// values had no offset and were stored as UTC, counted over the records
    /// that fit (a raw bronze's are counted when silver reads it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_as_utc: Vec<crate::source::ReadAsUtc>,
    /// Records later deleted by a right-to-be-forgotten request.
    #[serde(default)]
    pub erased_records: usize,
    /// Size of the source file in bytes.
    pub bytes: usize,
    /// SHA-256 of the file's bytes, lowercase hex.
    pub sha256: String,
    /// `_ingest_ts` of the batch, microseconds since the Unix epoch (UTC).
    pub ingest_ts_micros: i64,
    /// Path of the batch's Parquet file in the lake.
    pub path: String,
    /// Path of the file as received, in the lake's landing zone (for re-ingest).
    pub landing_path: Option<String>,
    /// The options the user set (detected settings are in `dialect`).
    pub options: IngestOptions,
    /// Version of the bronze table this batch created.
    pub version: u64,
    /// Human notes (for example "empty file: 0 records").
    pub notes: Vec<String>,
}

/// Audit values of one batch; `source_files` and `producer_ts` have one entry
/// per record (Kafka records differ), or are empty to use `source_file` / NULL.
pub struct Audit<'a> {
    pub ingest_ts_micros: i64,
    pub source_system: &'a str,
    pub source_file: &'a str,
    pub source_files: Vec<String>,
    pub producer_ts: Vec<Option<i64>>,
    pub batch_id: &'a str,
    pub event_ids: Vec<String>,
}

/// Builds the bronze rows of one batch: one row per record, audit columns
/// from `audit` (`event_ids` must have one id per record).
pub fn bronze_batch(records: &[RawRecord], audit: Audit<'_>) -> Result<RecordBatch> {
    let mut columns: Vec<ArrayRef> = vec![Arc::new(StringArray::from_iter_values(
        records.iter().map(|r| &r.text),
    ))];
    columns.extend(audit_columns(records, audit));
    Ok(RecordBatch::try_new(bronze_schema(), columns)?)
}

/// The columns after `raw_payload` in [`bronze_schema`] (raw and typed bronze share them).
fn audit_columns(records: &[RawRecord], audit: Audit<'_>) -> Vec<ArrayRef> {
    let n = records.len();
    let files: ArrayRef = if audit.source_files.len() == n && n > 0 {
        Arc::new(StringArray::from(audit.source_files))
    } else {
        Arc::new(StringArray::from(vec![audit.source_file; n]))
    };
    let producer: Vec<Option<i64>> = if audit.producer_ts.len() == n {
        audit.producer_ts
    } else {
        vec![None; n]
    };
    vec![
        Arc::new(
            TimestampMicrosecondArray::from(vec![audit.ingest_ts_micros; n]).with_timezone("UTC"),
        ),
        Arc::new(StringArray::from(vec![audit.source_system; n])),
        files,
        Arc::new(StringArray::from(audit.event_ids)),
        Arc::new(StringArray::from(vec![audit.batch_id; n])),
        Arc::new(Int64Array::from_iter(
            records.iter().map(|r| Some(r.line).filter(|l| *l > 0)),
        )),
        Arc::new(StringArray::from_iter(
            records.iter().map(|r| r.corrupt_reason.as_deref()),
        )),
        Arc::new(BinaryArray::from_iter(
            records.iter().map(|r| r.bytes.as_deref()),
        )),
        Arc::new(TimestampMicrosecondArray::from(producer).with_timezone("UTC")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(bytes: &[u8]) -> SplitFile {
        split_file(bytes, &IngestOptions::default()).unwrap()
    }

    fn texts(s: &SplitFile) -> Vec<&str> {
        s.records.iter().map(|r| r.text.as_str()).collect()
    }

    fn reasons(s: &SplitFile) -> Vec<Option<&str>> {
        s.records
            .iter()
            .map(|r| r.corrupt_reason.as_deref())
            .collect()
    }

    #[test]
    fn csv_records_keep_their_exact_text_including_quoted_newlines() {
        let s = split(b"id,note\r\n1,\"a,b\"\r\n2,\"line1\nline2\"\r\n\r\n3,plain");
        assert_eq!(s.format, SourceFormat::Csv);
        assert_eq!(s.header, ["id", "note"]);
        assert_eq!(s.header_text.as_deref(), Some("id,note"));
        assert_eq!(texts(&s), ["1,\"a,b\"", "2,\"line1\nline2\"", "3,plain"]);
        let lines: Vec<i64> = s.records.iter().map(|r| r.line).collect();
        assert_eq!(lines, [2, 3, 6]);
        assert_eq!(reasons(&s), [None, None, None]);
    }

    #[test]
    fn lines_count_lone_cr_as_a_break() {
        let s = split(b"id,x\r1,a\r2,b\r");
        assert_eq!(texts(&s), ["1,a", "2,b"]);
        let lines: Vec<i64> = s.records.iter().map(|r| r.line).collect();
        assert_eq!(lines, [2, 3]);
    }

    #[test]
    fn bom_is_not_part_of_the_first_column_name() {
        let s = split(b"\xEF\xBB\xBFid,x\n1,2\n");
        assert_eq!(s.header, ["id", "x"]);
        assert_eq!(texts(&s), ["1,2"]);
    }

    #[test]
    fn wrong_field_counts_are_flagged_not_dropped() {
        let s = split(b"a,b,c\n1,2,3\n4,5\n6,7,8,9\n");
        assert_eq!(texts(&s), ["1,2,3", "4,5", "6,7,8,9"]);
        assert_eq!(
            reasons(&s),
            [
                None,
                Some("2 fields, the header has 3"),
                Some("4 fields, the header has 3")
            ]
        );
    }

    #[test]
    fn semicolon_dialect_and_banner_are_detected() {
        let s = split(b"Exported 2024-05-01 by Tool\nA;B;C\n1;\"x;y\";1234,5\n2;z;3\n");
        let d = s.dialect.clone().unwrap();
        assert_eq!((d.delimiter, d.skip_rows, d.has_header), (';', 1, true));
        assert_eq!(d.detected, ["delimiter", "skip_rows", "has_header"]);
        assert_eq!(s.skipped, ["Exported 2024-05-01 by Tool"]);
        assert_eq!(s.header, ["A", "B", "C"]);
        assert_eq!(texts(&s), ["1;\"x;y\";1234,5", "2;z;3"]);
        assert!(
            s.notes.iter().any(|n| n.contains("decimal comma")),
            "{:?}",
            s.notes
        );
    }

    #[test]
    fn options_override_detection() {
        let opts = IngestOptions {
            delimiter: Some('|'),
            has_header: Some(false),
            ..Default::default()
        };
        let s = split_file(b"1|2\n3|4\n", &opts).unwrap();
        assert_eq!(s.header, ["_c0", "_c1"]);
        assert_eq!(texts(&s), ["1|2", "3|4"]);
        assert_eq!(s.dialect.unwrap().detected, ["skip_rows"]);
        let bad = IngestOptions {
            delimiter: Some('é'),
            ..Default::default()
        };
        assert_eq!(
            split_file(b"a", &bad).unwrap_err().to_string(),
            "ingest failed: the delimiter must be one ASCII character other than a line break, not 'é'; nothing was written"
        );
    }

    #[test]
    fn a_numeric_first_line_means_no_header() {
        let s = split(b"1,2.5,x\n2,3.5,y\n");
        assert_eq!(s.header, ["_c0", "_c1", "_c2"]);
        assert_eq!(texts(&s), ["1,2.5,x", "2,3.5,y"]);
    }

    #[test]
    fn json_lines_flag_invalid_records_and_tombstones() {
        let s = split(b"{\"a\":1}\r\n\n{\"a\":NaN}\nnull\n[1]\n");
        assert_eq!(s.format, SourceFormat::JsonLines);
        assert_eq!(texts(&s), ["{\"a\":1}", "{\"a\":NaN}", "null", "[1]"]);
        assert_eq!(
            reasons(&s),
            [
                None,
                Some("invalid JSON at byte 15 (line 3, column 6): expected value"),
                Some(
                    "tombstone: the record is JSON null (a Kafka/CDC delete marker), not an object"
                ),
                Some("not a JSON object: an array [1]"),
            ]
        );
    }

    #[test]
    fn json_array_elements_keep_their_exact_text() {
        let s = split(b"[\n  {\"id\": 1,\n   \"a\": \"x\"},\n  42\n]\n");
        assert_eq!(s.format, SourceFormat::JsonArray);
        assert_eq!(texts(&s), ["{\"id\": 1,\n   \"a\": \"x\"}", "42"]);
        assert_eq!(s.records[1].line, 4);
        assert_eq!(reasons(&s), [None, Some("not a JSON object: a number 42")]);
        // An invalid array is kept whole as one flagged record.
        let bad = split(b"[{\"id\": 1},");
        assert_eq!(texts(&bad), ["[{\"id\": 1},"]);
        assert_eq!(
            reasons(&bad),
            [Some(
                "invalid JSON at byte 10 (line 1, column 11): EOF while parsing a value"
            )]
        );
    }

    #[test]
    fn pretty_printed_objects_are_one_record_each() {
        let s = split(b"{\n  \"id\": 1\n}\n{\n  \"id\": oops\n}\n{\"id\": 3}\n");
        assert_eq!(s.format, SourceFormat::Json);
        assert_eq!(
            texts(&s),
            ["{\n  \"id\": 1\n}", "{\n  \"id\": oops\n}", "{\"id\": 3}"]
        );
        assert_eq!(s.records[1].line, 4);
        assert_eq!(
            reasons(&s),
            [
                None,
                Some("invalid JSON at byte 24 (line 5, column 9): expected value"),
                None
            ]
        );
    }

    #[test]
    fn empty_and_header_only_files_are_batches_with_a_note() {
        let empty = split(b"");
        assert!(empty.records.is_empty() && empty.header.is_empty());
        assert_eq!(empty.notes, ["empty file: 0 records"]);
        let header_only = split(b"a,b\n");
        assert_eq!(header_only.header, ["a", "b"]);
        assert!(header_only.records.is_empty());
        assert_eq!(header_only.notes, ["header only: 0 records"]);
    }

    #[test]
    fn invalid_utf8_is_kept_with_its_bytes_and_position() {
        let s = split(b"id,name\n1,ok\n2,M\xfcller\n");
        assert_eq!(texts(&s), ["1,ok", "2,M\u{fffd}ller"]);
        assert_eq!(s.records[1].bytes.as_deref(), Some(&b"2,M\xfcller"[..]));
        assert_eq!(
            s.records[1].corrupt_reason.as_deref(),
            Some("invalid UTF-8 at line 3, byte 16 (0xFC); the original bytes are in _raw_bytes")
        );
        // Declared as latin1, the same bytes are text.
        let opts = IngestOptions {
            encoding: Some("latin1".into()),
            ..Default::default()
        };
        let s = split_file(b"id,name\n2,M\xfcller\n", &opts).unwrap();
        assert_eq!(texts(&s), ["2,Müller"]);
        assert_eq!(s.encoding, "windows-1252");
        assert_eq!(reasons(&s), [None]);
    }

    #[test]
    fn parquet_rows_become_json_records() {
        use datafusion::arrow::array::{Int64Array, StringArray};
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("city", DataType::Utf8, true),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from(vec![1, 2])),
                Arc::new(StringArray::from(vec![Some("Oslo"), None])),
            ],
        )
        .unwrap();
        let bytes = crate::lake::encode_parquet(schema, &[batch]).unwrap();
        let s = split(&bytes);
        assert_eq!(s.format, SourceFormat::Parquet);
        assert_eq!(s.header, ["id", "city"]);
        assert_eq!(
            texts(&s),
            ["{\"id\":1,\"city\":\"Oslo\"}", "{\"id\":2,\"city\":null}"]
        );
        assert_eq!(
            split_file(b"PAR1 broken PAR1", &IngestOptions::default())
                .unwrap_err()
                .to_string()
                .split(" (")
                .next(),
            Some("ingest failed: the file is not a readable Parquet file")
        );
    }

    #[test]
    fn sha256_is_hex() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
