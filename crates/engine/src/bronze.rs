//! Bronze: the append-only archive of everything a source sent.
//!
//! Each ingest call is one batch. Every record of the file becomes one row:
//!
//! | column           | type                      | meaning (seed `000_87b8dd7200a8cd99.txt` §2)      |
//! |------------------|---------------------------|---------------------------------------------------|
//! | `raw_payload`    | Utf8                      | the record's text exactly as in the file          |
//! | `_ingest_ts`     | Timestamp(µs, UTC)        | when the playground wrote the row                 |
//! | `_source_system` | Utf8                      | which system sent it (`tlc_trip_files`)           |
//! | `_source_file`   | Utf8                      | the file name it came from                        |
//! | `_event_id`      | Utf8 (UUID v4)            | one per record; not a dedup key                   |
//! | `_batch_id`      | Utf8 (UUID v4)            | one per ingest call                               |
//!
//! Nothing is filtered, typed, deduplicated or rewritten here: deciding what is
//! garbage is silver's job. The batch is encoded completely before the single
//! write, so it lands whole or not at all.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, RecordBatch, StringArray, TimestampMicrosecondArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use serde::{Deserialize, Serialize};

use crate::error::{EngineError, Result};

/// Names of the audit columns, in table order after `raw_payload`.
pub const AUDIT_COLUMNS: [&str; 5] = [
    "_ingest_ts",
    "_source_system",
    "_source_file",
    "_event_id",
    "_batch_id",
];

/// Arrow schema of every bronze table (see the module docs).
pub fn bronze_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("raw_payload", DataType::Utf8, false),
        Field::new(
            "_ingest_ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("_source_system", DataType::Utf8, false),
        Field::new("_source_file", DataType::Utf8, false),
        Field::new("_event_id", DataType::Utf8, false),
        Field::new("_batch_id", DataType::Utf8, false),
    ]))
}

/// How a file's bytes are split into records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceFormat {
    /// RFC 4180 CSV with a header line; quoted fields may hold delimiters and newlines.
    Csv,
    /// One JSON value per line (JSON Lines).
    JsonLines,
    /// One top-level JSON array; each element is a record (its exact text).
    JsonArray,
}

impl SourceFormat {
    /// Detects the format from the content, not the file name: a first
    /// non-blank character `{` means JSON Lines, `[` a JSON array, anything else CSV.
    pub fn detect(text: &str) -> SourceFormat {
        match text
            .trim_start_matches('\u{feff}')
            .trim_start()
            .chars()
            .next()
        {
            Some('{') => SourceFormat::JsonLines,
            Some('[') => SourceFormat::JsonArray,
            _ => SourceFormat::Csv,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            SourceFormat::Csv => "CSV",
            SourceFormat::JsonLines => "JSON Lines",
            SourceFormat::JsonArray => "JSON array",
        }
    }
}

/// A file split into records, before audit columns are added.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitFile {
    pub format: SourceFormat,
    /// CSV header field names (BOM and surrounding spaces removed); empty for JSON Lines.
    pub header: Vec<String>,
    /// Each record's exact text, without its line terminator.
    pub records: Vec<String>,
}

/// Splits `text` into records. CSV: the first record is the header; every
/// later record's text is the exact byte range the CSV reader consumed for it
/// (so quoted newlines stay inside one record). JSON Lines: every non-blank line.
///
/// JSON array: every element, as the exact text it has in the file.
///
/// Errors when the CSV structure itself cannot be read (the `csv` crate's
/// message) or a JSON array is not valid JSON (line and column): then nothing
/// is written. A record with the wrong number of fields is kept here and
/// quarantined by silver.
pub fn split_records(text: &str) -> Result<SplitFile> {
    let format = SourceFormat::detect(text);
    match format {
        SourceFormat::JsonArray => {
            let body = text.trim_start_matches('\u{feff}');
            let elements: Vec<&serde_json::value::RawValue> = serde_json::from_str(body).map_err(|e| {
                EngineError::Ingest(format!("the file starts like a JSON array but is not valid JSON ({e}); nothing was written"))
            })?;
            Ok(SplitFile {
                format,
                header: Vec::new(),
                records: elements.iter().map(|r| r.get().to_string()).collect(),
            })
        }
        SourceFormat::JsonLines => Ok(SplitFile {
            format,
            header: Vec::new(),
            records: text
                .lines()
                .map(|l| l.strip_suffix('\r').unwrap_or(l))
                .filter(|l| !l.trim().is_empty())
                .map(str::to_string)
                .collect(),
        }),
        SourceFormat::Csv => split_csv(text),
    }
}

fn split_csv(text: &str) -> Result<SplitFile> {
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(body.as_bytes());
    let mut record = csv::ByteRecord::new();
    let mut header = Vec::new();
    let mut records = Vec::new();
    let mut first = true;
    loop {
        let start = reader.position().byte() as usize;
        let more = reader
            .read_byte_record(&mut record)
            .map_err(|e| EngineError::Ingest(format!("CSV could not be read: {e}")))?;
        if !more {
            break;
        }
        let begin = record
            .position()
            .map(|p| p.byte() as usize)
            .unwrap_or(start);
        let end = (reader.position().byte() as usize).min(body.len());
        // The reader's positions can include the previous record's line
        // terminator (CRLF is split); no record starts with one, so drop it.
        let raw = body
            .get(begin..end)
            .unwrap_or_default()
            .trim_start_matches(['\r', '\n']);
        let raw = raw.strip_suffix('\n').unwrap_or(raw);
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        if first {
            first = false;
            header = record
                .iter()
                .map(|f| String::from_utf8_lossy(f).trim().to_string())
                .collect();
        } else {
            records.push(raw.to_string());
        }
    }
    Ok(SplitFile {
        format: SourceFormat::Csv,
        header,
        records,
    })
}

/// One entry of the batch log: what one ingest call appended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchInfo {
    pub batch_id: String,
    /// Bronze table name without the layer, e.g. `nyc_taxi_yellow`.
    pub table: String,
    pub source_system: String,
    pub file_name: String,
    pub format: SourceFormat,
    /// CSV header fields; silver parses the payloads of this batch with it.
    pub header: Vec<String>,
    pub records: usize,
    /// Size of the source file in bytes.
    pub bytes: usize,
    /// `_ingest_ts` of the batch, microseconds since the Unix epoch (UTC).
    pub ingest_ts_micros: i64,
    /// Path of the batch's Parquet file in the lake.
    pub path: String,
    /// Human notes (for example "empty file: 0 records").
    pub notes: Vec<String>,
}

/// Builds the bronze rows of one batch: one row per record, audit columns
/// filled from the arguments; `event_ids` must have one id per record.
pub fn bronze_batch(
    split: &SplitFile,
    ingest_ts_micros: i64,
    source_system: &str,
    source_file: &str,
    batch_id: &str,
    event_ids: Vec<String>,
) -> Result<RecordBatch> {
    let n = split.records.len();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(split.records.iter())),
        Arc::new(TimestampMicrosecondArray::from(vec![ingest_ts_micros; n]).with_timezone("UTC")),
        Arc::new(StringArray::from(vec![source_system; n])),
        Arc::new(StringArray::from(vec![source_file; n])),
        Arc::new(StringArray::from(event_ids)),
        Arc::new(StringArray::from(vec![batch_id; n])),
    ];
    Ok(RecordBatch::try_new(bronze_schema(), columns)?)
}

/// Decodes a file's bytes as UTF-8, or says where the first invalid byte is.
pub fn decode_utf8(file_name: &str, bytes: &[u8]) -> Result<String> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(s.to_string()),
        Err(e) => Err(EngineError::Ingest(format!(
            "{file_name} is not UTF-8 text (invalid byte at offset {}); nothing was written. Save it as UTF-8 and drop it again.",
            e.valid_up_to()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_records_keep_their_exact_text_including_quoted_newlines() {
        let text = "id,note\r\n1,\"a,b\"\r\n2,\"line1\nline2\"\r\n\r\n3,plain";
        let split = split_records(text).unwrap();
        assert_eq!(split.format, SourceFormat::Csv);
        assert_eq!(split.header, ["id", "note"]);
        assert_eq!(
            split.records,
            ["1,\"a,b\"", "2,\"line1\nline2\"", "3,plain"]
        );
    }

    #[test]
    fn bom_is_not_part_of_the_first_column_name() {
        let split = split_records("\u{feff}id,x\n1,2\n").unwrap();
        assert_eq!(split.header, ["id", "x"]);
        assert_eq!(split.records, ["1,2"]);
    }

    #[test]
    fn json_lines_detected_from_content_and_blank_lines_skipped() {
        let split = split_records("{\"a\":1}\r\n\n{not json}\n").unwrap();
        assert_eq!(split.format, SourceFormat::JsonLines);
        assert_eq!(split.records, ["{\"a\":1}", "{not json}"]);
    }

    #[test]
    fn json_array_elements_keep_their_exact_text() {
        let split = split_records("[\n  {\"id\": 1,\n   \"a\": \"x\"},\n  42\n]\n").unwrap();
        assert_eq!(split.format, SourceFormat::JsonArray);
        assert_eq!(split.records, ["{\"id\": 1,\n   \"a\": \"x\"}", "42"]);
        let err = split_records("[{\"id\": 1},").unwrap_err().to_string();
        assert_eq!(
            err,
            "ingest failed: the file starts like a JSON array but is not valid JSON (EOF while parsing a value at line 1 column 11); nothing was written"
        );
    }

    #[test]
    fn header_only_file_has_no_records() {
        let split = split_records("a,b\n").unwrap();
        assert_eq!(split.header, ["a", "b"]);
        assert!(split.records.is_empty());
    }

    #[test]
    fn invalid_utf8_is_refused_with_its_offset() {
        let err = decode_utf8("x.csv", b"ab\xffc").unwrap_err();
        assert_eq!(
            err.to_string(),
            "ingest failed: x.csv is not UTF-8 text (invalid byte at offset 2); nothing was written. Save it as UTF-8 and drop it again."
        );
    }
}
