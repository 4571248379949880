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
//! | `_warning`       | Utf8, nullable       | what silver reads in a defined way but the user should know: a JSON object with a duplicate key (the last value is read); not a reason for the quarantine |
//! | `_raw_bytes`     | Binary, nullable     | the original bytes when they are not valid UTF-8           |
//! | `_producer_ts`   | Timestamp(µs, UTC)?  | Kafka producer time, kept apart from `_ingest_ts`          |
//!
//! Nothing is filtered, typed, deduplicated or rewritten here: deciding what is
//! garbage is silver's job. The batch is encoded completely before the single
//! write, so it lands whole or not at all.

pub mod batch_log;
pub mod kafka;
mod split;

use std::sync::Arc;

use datafusion::arrow::array::{
    ArrayRef, BinaryArray, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use sha2::{Digest, Sha256};

use crate::error::Result;
use crate::model::ArrowColumnType;

pub use medallion_protocol::bronze::{
    BatchInfo, CsvDialect, HeaderRename, IngestOptions, SourceFormat,
};
pub(crate) use split::{csv_reader, json_record, TopKeys};
pub use split::{
    is_invisible_in_names, map_header_names, nfc, same_name_ignoring_case, split_file,
    split_file_reporting, RawRecord, SplitFile, MAX_FILE_BYTES, MAX_KEYS, MAX_RECORDS,
};

/// Names of the five audit columns of seed 000, in table order after `raw_payload`.
pub const AUDIT_COLUMNS: [&str; 5] = [
    "_ingest_ts",
    "_source_system",
    "_source_file",
    "_event_id",
    "_batch_id",
];

/// Column names the engine gives its own meaning, with what each holds:
/// the columns of [`bronze_schema`], typed bronze's `_corrupt_record`, and
/// `_arrival` (silver's hidden arrival order). A declared source column may
/// not take one of them, ignoring case (it would replace the lineage or be
/// replaced by it); a file's column of that name is read under another name
/// (see [`map_header_names`]).
pub const RESERVED_COLUMNS: [(&str, &str); 13] = [
    ("raw_payload", "bronze's copy of the record's text"),
    ("_ingest_ts", "bronze's time of the batch"),
    ("_source_system", "bronze's name of the sending system"),
    (
        "_source_file",
        "bronze's name of the file a record came from",
    ),
    ("_event_id", "bronze's id of the record"),
    ("_batch_id", "bronze's id of the batch"),
    ("_source_line", "bronze's line of the record in its file"),
    (
        "_corrupt_reason",
        "bronze's reason a record is not well-formed",
    ),
    ("_warning", "bronze's warning about a record"),
    (
        "_raw_bytes",
        "bronze's original bytes of a record that is not UTF-8",
    ),
    ("_producer_ts", "bronze's Kafka producer time"),
    (
        "_corrupt_record",
        "typed bronze's text of a record that did not fit",
    ),
    ("_arrival", "silver's hidden arrival order of the rows"),
];

/// The reserved column (see [`RESERVED_COLUMNS`]) `name` equals ignoring
/// case ([`same_name_ignoring_case`]), with what the engine keeps in it.
pub fn reserved_column(name: &str) -> Option<(&'static str, &'static str)> {
    RESERVED_COLUMNS
        .iter()
        .copied()
        .find(|(r, _)| same_name_ignoring_case(r, name))
}

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
        Field::new("_warning", DataType::Utf8, true),
        Field::new("_raw_bytes", DataType::Binary, true),
        Field::new("_producer_ts", utc_micros(), true),
    ]))
}

/// Arrow schema of a typed bronze table (modes PERMISSIVE, FAILFAST,
/// DROPMALFORMED): the declared columns (nullable, their declared types),
/// `_corrupt_record` (Utf8, the text of a record that did not fit), then the
/// audit columns of [`bronze_schema`] after `raw_payload`.
pub fn typed_bronze_schema(schema: &crate::model::SourceSchema) -> SchemaRef {
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

/// The Arrow schema of `def`'s rows: [`typed_bronze_schema`] of its source
/// schema if the table is typed, else [`bronze_schema`].
pub fn table_schema(def: &crate::model::BronzeTableDef) -> SchemaRef {
    if def.mode.is_typed() {
        typed_bronze_schema(&def.schema)
    } else {
        bronze_schema()
    }
}

/// A typed bronze batch: `typed` holds one array per declared column (NULL
/// where the record did not fit); `records` gives `_corrupt_record` (the text
/// of records with a reason) and the audit columns.
pub fn typed_bronze_batch(
    schema: &crate::model::SourceSchema,
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

/// Audit values of one batch; `source_files` and `producer_ts` have one entry
/// per record (Kafka records differ), or are empty to use `source_file` / NULL.
pub struct Audit<'a> {
    pub ingest_ts_micros: i64,
    pub source_system: &'a str,
    pub source_file: &'a str,
    pub source_files: Vec<String>,
    pub producer_ts: Vec<Option<i64>>,
    pub batch_id: &'a str,
    /// One UUID per record, as text (see [`event_ids`]).
    pub event_ids: StringArray,
}

/// `n` new event ids from `ids` as one Utf8 array of hyphenated lower-case
/// UUIDs (36 bytes each), written straight into the array's buffer: a
/// 336,776-record file made as many `String`s before (issue 12).
pub fn event_ids(ids: &dyn crate::env::IdGenerator, n: usize) -> StringArray {
    let mut b = datafusion::arrow::array::StringBuilder::with_capacity(n, n * 36);
    let mut buf = uuid::Uuid::encode_buffer();
    for _ in 0..n {
        b.append_value(ids.new_id().hyphenated().encode_lower(&mut buf));
    }
    b.finish()
}

/// `value` on each of `n` rows: the bytes repeated once and equal offsets
/// (what `StringArray::from(vec![value; n])` holds, without a `Vec` of `n`
/// references walked one by one). Beyond Utf8's 2 GiB of offsets it falls
/// back to that very call, which panics on the overflow as it did before this
/// helper. With at most [`MAX_RECORDS`] (500,000) records per file, only a
/// value over 4,294 bytes (a source system or file name) gets there.
fn repeated(value: &str, n: usize) -> StringArray {
    use datafusion::arrow::buffer::{Buffer, OffsetBuffer, ScalarBuffer};
    let len = value.len();
    match n.checked_mul(len).filter(|t| *t <= i32::MAX as usize) {
        Some(_) => {
            let offsets: ScalarBuffer<i32> = (0..=n).map(|i| (i * len) as i32).collect();
            let values = Buffer::from_vec(value.as_bytes().repeat(n));
            // Offsets are 0, len, 2·len, … and every slice is `value`: valid UTF-8.
            StringArray::new(OffsetBuffer::new(offsets), values, None)
        }
        None => StringArray::from(vec![value; n]),
    }
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
        Arc::new(repeated(audit.source_file, n))
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
        Arc::new(repeated(audit.source_system, n)),
        files,
        Arc::new(audit.event_ids),
        Arc::new(repeated(audit.batch_id, n)),
        Arc::new(Int64Array::from_iter(
            records.iter().map(|r| Some(r.line).filter(|l| *l > 0)),
        )),
        Arc::new(StringArray::from_iter(
            records.iter().map(|r| r.corrupt_reason.as_deref()),
        )),
        Arc::new(StringArray::from_iter(
            records.iter().map(|r| r.warning.as_deref()),
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
        // An array cut short keeps the elements before the cut, and says so.
        let cut = split(b"[{\"id\": 1},");
        assert_eq!(texts(&cut), ["{\"id\": 1}"]);
        assert_eq!(reasons(&cut), [None]);
        assert!(
            cut.notes.iter().any(|n| n
                == "the JSON array is never closed (no ']' at its end): the file may be cut short; the 1 element(s) before its end are records"),
            "{:?}",
            cut.notes
        );
    }

    #[test]
    fn a_bad_array_element_is_its_own_record_and_the_others_are_read() {
        // Pretty-printed: the next element starts on a line indented like the bad one.
        let s = split(b"[\n  {\n    \"id\": 1,\n    \"s\": \"abc\n  },\n  {\n    \"id\": 2\n  },\n  {\"id\": 3}\n]\n");
        assert_eq!(
            texts(&s),
            [
                "{\n    \"id\": 1,\n    \"s\": \"abc\n  }",
                "{\n    \"id\": 2\n  }",
                "{\"id\": 3}"
            ]
        );
        assert_eq!(lines(&s), [2, 6, 9]);
        assert_eq!(
            reasons(&s),
            [
                Some("invalid JSON at byte 32 (line 4, column 14): control character (\\u0000-\\u001F) found while parsing a string"),
                None,
                None
            ]
        );
        // One line: the next element starts after a comma.
        let s = split(b"[{\"id\":1,\"s\":\"abc},{\"id\":2,\"s\":\"x\"},{\"id\":3}]");
        assert_eq!(
            texts(&s),
            [
                "{\"id\":1,\"s\":\"abc}",
                "{\"id\":2,\"s\":\"x\"}",
                "{\"id\":3}"
            ]
        );
        assert!(reasons(&s)[0].is_some());
        assert_eq!(reasons(&s)[1..], [None, None]);
        // An object inside the bad element is no element of the array.
        let s = split(b"[{\"id\":1,\"s\":\"a,\"items\":[{\"k\":1},{\"k\":2}]},{\"id\":2}]");
        assert_eq!(
            texts(&s),
            [
                "{\"id\":1,\"s\":\"a,\"items\":[{\"k\":1},{\"k\":2}]}",
                "{\"id\":2}"
            ]
        );
        assert_eq!(reasons(&s)[1], None);
        // Garbage between elements, a missing comma, text after the end.
        let s = split(b"[{\"id\":1}, oops, {\"id\":2}]");
        assert_eq!(texts(&s), ["{\"id\":1}", "oops", "{\"id\":2}"]);
        assert_eq!(
            reasons(&s),
            [
                None,
                Some("invalid JSON at byte 11 (line 1, column 1): expected value"),
                None
            ]
        );
        let s = split(b"[{\"id\":1}\n{\"id\":2}, {\"id\":3}]");
        assert_eq!(texts(&s), ["{\"id\":1}", "{\"id\":2}", "{\"id\":3}"]);
        assert_eq!(lines(&s), [1, 2, 2]);
        assert_eq!(
            reasons(&s),
            [
                None,
                Some("malformed JSON array: no ',' between this element and the one before it; kept as it arrived"),
                None
            ]
        );
        let s = split(b"[{\"id\":1}]\ntail\n");
        assert_eq!(texts(&s), ["{\"id\":1}", "tail"]);
        assert_eq!(lines(&s), [1, 2]);
        assert_eq!(
            reasons(&s)[1],
            Some("text after the end of the JSON array (its closing ']'); kept as it arrived")
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
    fn parquet_columns_with_the_same_name_are_read_apart() {
        use datafusion::arrow::array::Int64Array;
        let schema = Arc::new(Schema::new(vec![
            Field::new("qty", DataType::Int64, false),
            Field::new("qty", DataType::Int64, false),
            Field::new("Qty", DataType::Int64, false),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from(vec![1])),
                Arc::new(Int64Array::from(vec![2])),
                Arc::new(Int64Array::from(vec![3])),
            ],
        )
        .unwrap();
        let bytes = crate::lake::encode_parquet(schema, &[batch]).unwrap();
        let s = split(&bytes);
        assert_eq!(s.header, ["qty", "qty_2", "Qty"]);
        assert_eq!(texts(&s), ["{\"qty\":1,\"qty_2\":2,\"Qty\":3}"]);
        assert_eq!(s.header_renames.len(), 1);
        assert!(
            s.notes.iter().any(|n| n
                == "Parquet column names read as: \"qty\" (column 2) → qty_2 (a repeated name gets _<n>, an empty one _c<position>, never a name the file has)"),
            "{:?}",
            s.notes
        );
    }

    fn lines(s: &SplitFile) -> Vec<i64> {
        s.records.iter().map(|r| r.line).collect()
    }

    #[test]
    fn an_unterminated_quote_costs_its_line_only() {
        // rw-31: the csv crate alone reads lines 3-4 as one record of 3 fields.
        let s = split(b"code,label,weight\nA7,\"Bolt, hex\",12\nB2,\"Nut, wing,4\nC9,\"Washer\",3\nD1,\"Pin\",8\n");
        assert_eq!(
            texts(&s),
            [
                "A7,\"Bolt, hex\",12",
                "B2,\"Nut, wing,4",
                "C9,\"Washer\",3",
                "D1,\"Pin\",8"
            ]
        );
        assert_eq!(lines(&s), [2, 3, 4, 5]);
        assert_eq!(
            reasons(&s),
            [
                None,
                Some("unterminated quote in field 2 (label): the quote opened on this line is never closed, so the line is kept as it arrived and the next line is read as a new record"),
                None,
                None
            ]
        );
        // At the end of the file there is no next line to read.
        let s = split(b"a,b\n1,\"x\n");
        assert_eq!(texts(&s), ["1,\"x"]);
        assert_eq!(
            reasons(&s),
            [Some("unterminated quote in field 2 (b): the quote opened on this line is never closed before the file ends; kept as it arrived")]
        );
    }

    #[test]
    fn quoted_newlines_in_well_formed_records_stay_one_record() {
        // Like rw-12 of the first set: 3 records, the second spans 3 lines.
        let s = split(b"id,note,qty\r\n1,plain,2\r\n2,\"first line\r\nsecond, with \"\"quotes\"\"\r\nthird\",5\r\n3,\"x\",7\r\n");
        assert_eq!(
            texts(&s),
            [
                "1,plain,2",
                "2,\"first line\r\nsecond, with \"\"quotes\"\"\r\nthird\",5",
                "3,\"x\",7"
            ]
        );
        assert_eq!(lines(&s), [2, 3, 6]);
        assert_eq!(reasons(&s), [None, None, None]);
        // A quoted field ending in a line break is kept when the next record is well-formed...
        let s = split(b"a,b\n1,\"note\n\"\n2,x\n");
        assert_eq!(texts(&s), ["1,\"note\n\"", "2,x"]);
        assert_eq!(reasons(&s), [None, None]);
        // ...but when it closes where a later field's opening quote stands
        // (line 2 lost its closing quote), the lines are read one by one.
        let s = split(b"a,b\n1,\"p\n2,\"\nq\",3\n4,z\n");
        assert_eq!(texts(&s), ["1,\"p", "2,\"", "q\",3", "4,z"]);
        assert_eq!(lines(&s), [2, 3, 4, 5]);
        assert!(reasons(&s)[0]
            .unwrap()
            .starts_with("unterminated quote in field 2 (b)"));
        assert_eq!(reasons(&s)[3], None);
        // A record spanning lines with the wrong field count is not one record either.
        let s = split(b"a,b,c\n1,\"x\ny\"\n2,3,4\n");
        assert_eq!(texts(&s), ["1,\"x", "y\"", "2,3,4"]);
        assert_eq!(reasons(&s)[1], Some("1 field, the header has 3"));
        assert_eq!(reasons(&s)[2], None);
    }

    #[test]
    fn text_after_a_closing_quote_is_flagged_with_a_hint_for_backslashes() {
        let body = b"id,title,path\n1,\"The \\\"Quick\\\" Fox\",plain\n2,\"Tab \\\\ bar\",x\n3,\"D:\\\\data\\\\\",ends\n4,\"a\"b,c\n";
        let s = split(body);
        assert_eq!(s.records.len(), 4);
        assert_eq!(
            reasons(&s),
            [
                Some("field 2 (title) has text after its closing quote: a quote inside a quoted field must be doubled (\"\"); this one follows a backslash (\\\"): the file seems to escape quotes with a backslash, read it again with escape '\\'"),
                None,
                None,
                Some("field 2 (title) has text after its closing quote: a quote inside a quoted field must be doubled (\"\")"),
            ]
        );
        assert!(
            s.notes
                .iter()
                .any(|n| n.starts_with("1 record has a backslash before a quote")),
            "{:?}",
            s.notes
        );
        let escaped = IngestOptions {
            escape: Some('\\'),
            ..Default::default()
        };
        let s = split_file(body, &escaped).unwrap();
        assert_eq!(reasons(&s)[..3], [None, None, None]);
        let d = s.dialect.unwrap();
        assert_eq!(d.escape, Some('\\'));
        assert_eq!(
            d.describe(),
            "delimiter ',', quote '\"', header line, escape '\\'"
        );
        // NULL tokens other than the empty field are part of the dialect.
        let nulls = IngestOptions {
            null_tokens: Some(vec!["NA".into(), String::new()]),
            ..Default::default()
        };
        assert_eq!(
            split_file(body, &nulls)
                .unwrap()
                .dialect
                .unwrap()
                .describe(),
            "delimiter ',', quote '\"', header line, read as NULL 'NA' ''"
        );
        let same = IngestOptions {
            escape: Some('"'),
            ..Default::default()
        };
        assert_eq!(
            split_file(body, &same).unwrap_err().to_string(),
            "ingest failed: the delimiter (','), the quote ('\"') and the escape ('\"') must be three different characters; nothing was written"
        );
    }

    #[test]
    fn unknown_ingest_options_are_refused_with_the_known_names() {
        let err = serde_json::from_str::<IngestOptions>(r#"{"escpae": "\\"}"#)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("unknown field `escpae`, expected one of `format`, `delimiter`, `quote`, `escape`, `has_header`, `skip_rows`, `null_tokens`, `decimal_separator`, `encoding`"),
            "{err}"
        );
        let ok: IngestOptions = serde_json::from_str(r#"{"escape": "\\"}"#).unwrap();
        assert_eq!(ok.escape, Some('\\'));
    }

    #[test]
    fn header_names_are_mapped_so_no_column_is_lost() {
        let s = split(b"id, qty ,qty,Qty,,note\n1,5,6,7,x,hello\n");
        assert_eq!(s.header, ["id", "qty", "qty_2", "Qty_3", "_c4", "note"]);
        assert_eq!(s.header_renames.len(), 4);
        // A generated name never takes a name the header has (anywhere, any
        // case): the next free number.
        let names =
            |h: &[&str]| map_header_names(&h.iter().map(|n| n.to_string()).collect::<Vec<_>>()).0;
        assert_eq!(
            names(&["qty", "qty", "QTY_2", "_c3", ""]),
            ["qty", "qty_3", "QTY_2", "_c3", "_c4"]
        );
        assert_eq!(
            names(&["id", "qty", "qty", "qty_2"]),
            ["id", "qty", "qty_3", "qty_2"]
        );
        assert_eq!(names(&["a", "", "_c1"]), ["a", "_c1_2", "_c1"]);
        assert_eq!(names(&["", "_c0"]), ["_c0_2", "_c0"]);
        assert_eq!(names(&["qty_2", "qty", "qty"]), ["qty_2", "qty", "qty_3"]);
        // Case is compared in every script.
        assert_eq!(
            names(&["Émission", "émission", "ÉMISSION_2"]),
            ["Émission", "émission_3", "ÉMISSION_2"]
        );
    }

    #[test]
    fn names_are_compared_ignoring_case_in_every_script() {
        for (a, b) in [
            ("Émission", "ÉMISSION"),
            ("émission", "ÉMISSION"),
            ("straße", "STRAẞE"),
            ("ΣΊΣΥΦΟΣ", "σίσυφος"),
            ("ς", "Σ"),
            ("Qty", "qTY"),
        ] {
            assert!(same_name_ignoring_case(a, b), "{a} / {b}");
        }
        for (a, b) in [("straße", "STRASSE"), ("qty", "qty_2"), ("e", "é")] {
            assert!(!same_name_ignoring_case(a, b), "{a} / {b}");
        }
    }

    #[test]
    fn an_unterminated_quote_in_the_header_line_leaves_the_header_there() {
        let s = split(b"code,\"label,w\nA7,Bolt,12\nB2,Nut,4\n");
        assert!(s.skipped.is_empty(), "{:?}", s.skipped);
        assert_eq!(s.header, ["code", "label", "w"]);
        assert_eq!(s.header_text.as_deref(), Some("code,\"label,w"));
        assert_eq!(texts(&s), ["A7,Bolt,12", "B2,Nut,4"]);
        assert_eq!(lines(&s), [2, 3]);
        assert_eq!(reasons(&s), [None, None]);
        assert_eq!(
            s.header_renames,
            [HeaderRename {
                position: 1,
                original: "\"label".into(),
                name: "label".into()
            }]
        );
        assert!(s.notes.iter().any(|n| n == "the header line has an unterminated quote in field 2 (\"label): the quote is never closed, so the header is this line alone, read without that quote and split at every ',' after it: 3 names (code, label, w)"), "{:?}", s.notes);
        // In the first field, with ';', and as the only line.
        let s = split(b"\"code;label;w\nA7;Bolt;12\n");
        assert_eq!(s.header, ["code", "label", "w"]);
        assert_eq!(texts(&s), ["A7;Bolt;12"]);
        let s = split(b"code,\"label,w\n");
        assert_eq!(s.header, ["code", "label", "w"]);
        assert!(s.records.is_empty());
        // A banner with an unterminated quote is still a banner.
        let s = split(b"\"Inventory report, Q3\ncode,label,w\nA7,Bolt,12\n");
        assert_eq!(s.skipped, ["\"Inventory report, Q3"]);
        assert_eq!(s.header, ["code", "label", "w"]);
    }

    #[test]
    fn a_malformed_indented_object_in_a_stream_costs_only_itself() {
        let s = split(b"  {\n    \"id\": 1,\n    \"s\": \"abc\n  }\n  {\n    \"id\": 2,\n    \"s\": \"x\"\n  }\n  {\n    \"id\": 3,\n    \"s\": {\"n\": {\"m\": 1}}\n  }\n");
        assert_eq!(s.format, SourceFormat::Json);
        assert_eq!(lines(&s), [1, 5, 9]);
        assert_eq!(
            texts(&s)[1..],
            [
                "{\n    \"id\": 2,\n    \"s\": \"x\"\n  }",
                "{\n    \"id\": 3,\n    \"s\": {\"n\": {\"m\": 1}}\n  }"
            ]
        );
        assert_eq!(
            reasons(&s),
            [
                Some("invalid JSON at byte 30 (line 3, column 14): control character (\\u0000-\\u001F) found while parsing a string"),
                None,
                None
            ]
        );
        // An object inside the bad one, indented no deeper, is not a record:
        // it is followed by the rest of its object.
        let s =
            split(b"{\n\"id\": 1,\n\"s\": \"abc,\n\"c\":\n{\"k\": 1},\n\"z\": 2\n}\n{\"id\": 2}\n");
        assert_eq!(s.records.len(), 2, "{:?}", texts(&s));
        assert_eq!(texts(&s)[1], "{\"id\": 2}");
    }

    #[test]
    fn duplicate_json_keys_are_a_warning_not_a_reason() {
        let s = split(b"{\"id\":1,\"status\":\"new\",\"status\":\"paid\"}\n{\"id\":2,\"c\":{\"n\":1,\"n\":2},\"l\":[{\"k\":1,\"k\":1}]}\n{\"id\":3,\"Id\":3}\n");
        assert_eq!(reasons(&s), [None, None, None]);
        let warnings: Vec<Option<&str>> = s.records.iter().map(|r| r.warning.as_deref()).collect();
        assert_eq!(
            warnings,
            [
                Some("duplicate key \"status\": the last value is read, as most JSON readers do"),
                Some("duplicate keys \"c.n\", \"l[0].k\": the last value of each is read, as most JSON readers do"),
                None
            ]
        );
        assert_eq!(
            s.records[0].text,
            "{\"id\":1,\"status\":\"new\",\"status\":\"paid\"}"
        );
        // The same walk still gives the reasons of records that are not objects.
        let s = split(b"[{\"a\":1,\"a\":2}, 7]");
        assert_eq!(reasons(&s), [None, Some("not a JSON object: a number 7")]);
        assert!(s.records[0].warning.is_some());
    }

    #[test]
    fn sha256_is_hex() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
