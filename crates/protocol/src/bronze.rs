//! The batch log and ingest settings: how a file was (or is to be) read
//! into bronze.

use serde::{Deserialize, Serialize};

use crate::pipeline_def::BronzeMode;
use crate::schema::ReadAsUtc;

/// How a file's bytes are split into records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceFormat {
    /// RFC 4180 CSV; quoted fields may hold delimiters and newlines.
    Csv,
    /// One JSON value per line (JSON Lines).
    JsonLines,
    /// One top-level JSON array; each element is a record (its exact text).
    JsonArray,
    /// Pretty-printed or concatenated JSON values; each top-level value is a record.
    Json,
    /// Apache Parquet; each row becomes a JSON-object record.
    Parquet,
    /// Messages polled from a (simulated) Kafka topic; values are JSON.
    Kafka,
}

impl SourceFormat {
    /// Name shown to users.
    pub fn label(self) -> &'static str {
        match self {
            SourceFormat::Csv => "CSV",
            SourceFormat::JsonLines => "JSON Lines",
            SourceFormat::JsonArray => "JSON array",
            SourceFormat::Json => "JSON (pretty-printed)",
            SourceFormat::Parquet => "Parquet",
            SourceFormat::Kafka => "Kafka",
        }
    }

    /// Is every record of this format JSON text (silver reads it as an object)?
    pub fn is_json(self) -> bool {
        !matches!(self, SourceFormat::Csv)
    }
}

/// What the user sets for one source; `None` means "detect from the content".
///
/// JSON form (every key optional): `{"format": "csv", "delimiter": ";",
/// "quote": "\"", "escape": "\\", "has_header": true, "skip_rows": 1,
/// "null_tokens": ["NA"], "decimal_separator": ",", "encoding": "latin1"}`.
/// A key the reader does not know is refused (serde's message lists the
/// known ones), never ignored: a misspelt option would otherwise read the
/// file with a setting the user did not choose.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IngestOptions {
    pub format: Option<SourceFormat>,
    /// CSV field delimiter (one ASCII character).
    pub delimiter: Option<char>,
    /// CSV quote character (one ASCII character).
    pub quote: Option<char>,
    /// CSV escape character inside quoted fields (one ASCII character, e.g. `\`
    /// for files that write `\"` instead of `""`, as Spark's `escape` option and
    /// MySQL's exports do). Unset: a quote inside a quoted field must be doubled,
    /// and a backslash is an ordinary character.
    pub escape: Option<char>,
    /// Does the CSV have a header line? Without one, columns are named `_c0`, `_c1`, ...
    pub has_header: Option<bool>,
    /// CSV lines (records) before the header to keep aside, e.g. a report banner.
    pub skip_rows: Option<usize>,
    /// CSV field texts silver reads as NULL (default: only the empty field;
    /// in JSON only `null` or a missing key is NULL, `""` is the empty string).
    pub null_tokens: Option<Vec<String>>,
    /// Decimal separator silver uses for numeric columns: `.` (default) or `,`.
    pub decimal_separator: Option<char>,
    /// Text encoding label (WHATWG names: `utf-8`, `windows-1251`, `latin1`, `utf-16le`).
    pub encoding: Option<String>,
}

impl IngestOptions {
    /// These options, with every unset one taken from `fallback`.
    pub fn or(&self, fallback: &IngestOptions) -> IngestOptions {
        IngestOptions {
            format: self.format.or(fallback.format),
            delimiter: self.delimiter.or(fallback.delimiter),
            quote: self.quote.or(fallback.quote),
            escape: self.escape.or(fallback.escape),
            has_header: self.has_header.or(fallback.has_header),
            skip_rows: self.skip_rows.or(fallback.skip_rows),
            null_tokens: self
                .null_tokens
                .clone()
                .or_else(|| fallback.null_tokens.clone()),
            decimal_separator: self.decimal_separator.or(fallback.decimal_separator),
            encoding: self.encoding.clone().or_else(|| fallback.encoding.clone()),
        }
    }
}

/// The CSV dialect a batch was read with, detected or set by the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CsvDialect {
    pub delimiter: char,
    pub quote: char,
    /// Escape character inside quoted fields (`\\`), if the user set one.
    #[serde(default)]
    pub escape: Option<char>,
    pub has_header: bool,
    /// Records before the header, kept in the batch log as `skipped_lines`.
    pub skip_rows: usize,
    pub null_tokens: Vec<String>,
    pub decimal_separator: char,
    /// Which settings were detected from the content (`delimiter`, `has_header`, `skip_rows`).
    pub detected: Vec<String>,
}

impl CsvDialect {
    /// "delimiter ';', quote '\"', header on, 1 line skipped" for the batch log.
    pub fn describe(&self) -> String {
        let delim = match self.delimiter {
            '\t' => "tab".to_string(),
            c => format!("'{c}'"),
        };
        let mut s = format!(
            "delimiter {delim}, quote '{}', {}",
            self.quote,
            if self.has_header {
                "header line"
            } else {
                "no header"
            }
        );
        if let Some(e) = self.escape {
            s.push_str(&format!(", escape '{e}'"));
        }
        if self.skip_rows > 0 {
            s.push_str(&format!(", {} line(s) skipped before it", self.skip_rows));
        }
        if self.decimal_separator != '.' {
            s.push_str(&format!(", decimal '{}'", self.decimal_separator));
        }
        if self.null_tokens != [String::new()] {
            let tokens: Vec<String> = self.null_tokens.iter().map(|n| format!("'{n}'")).collect();
            s.push_str(&format!(", read as NULL {}", tokens.join(" ")));
        }
        s
    }
}

/// A CSV header name that a batch reads under another name (see the engine's `bronze::map_header_names`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeaderRename {
    /// 0-based position of the column in the header.
    pub position: usize,
    /// The name exactly as the header has it (possibly padded or empty).
    pub original: String,
    /// The name silver, typed bronze and rules read the column by.
    pub name: String,
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
    /// CSV header names this batch reads under another name than the file
    /// has (padded, with invisible characters, empty, duplicate, or a
    /// reserved name such as `_source_file`; see the engine's `bronze::map_header_names`):
    /// e.g. `{"position": 2, "original": "qty", "name": "qty_2"}`.
    #[serde(default)]
    pub header_renames: Vec<HeaderRename>,
    /// Exact text of CSV records before the header (banners), kept here.
    pub skipped_lines: Vec<String>,
    pub records: usize,
    /// Records a DROPMALFORMED bronze discarded (not in `records`, gone).
    #[serde(default)]
    pub dropped_records: usize,
    /// The bronze mode the batch was written in.
    #[serde(default)]
    pub mode: BronzeMode,
    /// Records with a `_corrupt_reason`.
    pub corrupt_records: usize,
    /// Records with a `_warning` (read by silver all the same), e.g. JSON
    /// objects with a duplicate key.
    #[serde(default)]
    pub warned_records: usize,
    /// Typed bronze: TIMESTAMP columns without a declared `time_zone` whose
    /// values had no offset and were stored as UTC, counted over the records
    /// that fit (a raw bronze's are counted when silver reads it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_as_utc: Vec<ReadAsUtc>,
    /// Records later deleted by a right-to-be-forgotten request.
    #[serde(default)]
    pub erased_records: usize,
    /// The batch that read this batch's file again with other options
    /// (`Request::Reingest`): silver reads that batch instead of this one,
    /// which stays in bronze (append-only) and is counted apart in
    /// reconciliation, so no record reaches silver twice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
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
