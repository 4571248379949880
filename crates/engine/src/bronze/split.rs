//! Splitting a file's bytes into bronze records, keeping every byte.
//!
//! Formats are detected from the content, never from the file name:
//! Parquet by its `PAR1` magic, JSON by a first non-blank `{` or `[`
//! (then JSON Lines, one top-level array, or pretty-printed / concatenated
//! values), anything else is CSV with its dialect (delimiter, quote, header
//! line, lines before the header) detected from the first records. Every
//! detected setting can be overridden by [`IngestOptions`].
//!
//! A record that is not well-formed is still a record: it keeps its exact
//! text (and its bytes when they are not UTF-8) and gets a `_corrupt_reason`.
//! Only a file that cannot be split at all (an unreadable Parquet file, bad
//! options) is refused, and then nothing is written.

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};

use crate::error::{EngineError, Result};

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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct IngestOptions {
    pub format: Option<SourceFormat>,
    /// CSV field delimiter (one ASCII character).
    pub delimiter: Option<char>,
    /// CSV quote character (one ASCII character).
    pub quote: Option<char>,
    /// Does the CSV have a header line? Without one, columns are named `_c0`, `_c1`, ...
    pub has_header: Option<bool>,
    /// CSV lines (records) before the header to keep aside, e.g. a report banner.
    pub skip_rows: Option<usize>,
    /// Field texts silver reads as NULL (default: only the empty field).
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
        if self.skip_rows > 0 {
            s.push_str(&format!(", {} line(s) skipped before it", self.skip_rows));
        }
        if self.decimal_separator != '.' {
            s.push_str(&format!(", decimal '{}'", self.decimal_separator));
        }
        s
    }
}

/// One record of a file as bronze keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawRecord {
    /// The record's exact text, without its line terminator. If the bytes are
    /// not UTF-8, invalid sequences are shown as U+FFFD and `bytes` holds the original.
    pub text: String,
    /// The original bytes, only when they are not valid UTF-8.
    pub bytes: Option<Vec<u8>>,
    /// 1-based line of the file where the record starts (row number for
    /// Parquet); 0 when the record has no line (a Kafka message).
    pub line: i64,
    /// Why silver cannot read this record as it is (`None`: well-formed).
    pub corrupt_reason: Option<String>,
}

/// A file split into records, before audit columns are added.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitFile {
    pub format: SourceFormat,
    /// CSV only.
    pub dialect: Option<CsvDialect>,
    /// WHATWG name of the encoding the bytes were read as.
    pub encoding: String,
    /// CSV header names (or `_c0`.. without a header); Parquet column names; empty for JSON.
    pub header: Vec<String>,
    /// Exact text of the CSV header record, if any.
    pub header_text: Option<String>,
    /// Exact text of CSV records skipped before the header (banners), in order.
    pub skipped: Vec<String>,
    pub records: Vec<RawRecord>,
    /// Observations for the batch log ("empty file: 0 records", hints).
    pub notes: Vec<String>,
}

const UTF8: &str = "utf-8";

/// Most records one file may hold. The browser tab keeps every table in
/// memory (wasm32: 4 GiB at most, often less); a 3-million-row Parquet file
/// ran it out of memory, a 336,000-row CSV did not.
pub const MAX_RECORDS: usize = 500_000;

fn too_many(records: usize) -> EngineError {
    EngineError::Ingest(format!(
        "the file holds {records} records; the playground takes at most {MAX_RECORDS} per file (the browser keeps everything in memory). Nothing was written. Split it, or sample it first."
    ))
}

/// Splits a file into records (see the module docs). Errors only for bad
/// options or a file that cannot be split at all; then nothing is written.
pub fn split_file(bytes: &[u8], opts: &IngestOptions) -> Result<SplitFile> {
    let mut notes = Vec::new();
    let is_parquet = bytes.starts_with(b"PAR1");
    if opts.format == Some(SourceFormat::Parquet) || (opts.format.is_none() && is_parquet) {
        return split_parquet(bytes);
    }
    let (body, encoding) = decode(bytes, opts.encoding.as_deref(), &mut notes)?;
    // Text has no NUL bytes to speak of (UTF-16 was decoded above); an image or
    // an archive starts with a magic number or is full of them. A stray NUL in
    // a text file stays in its record.
    let sample = &body[..body.len().min(8192)];
    let nuls = sample.iter().filter(|b| **b == 0).count();
    const MAGIC: [&[u8]; 6] = [
        b"\x89PNG",
        b"PK\x03\x04",
        b"\x1f\x8b",
        b"%PDF",
        b"\xff\xd8\xff",
        b"GIF8",
    ];
    if MAGIC.iter().any(|m| body.starts_with(m)) || (nuls >= 4 && nuls * 100 > sample.len()) {
        return Err(EngineError::Ingest(
            "the file looks binary (it has NUL bytes), not CSV, JSON or Parquet; nothing was written".into(),
        ));
    }
    let body: &[u8] = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&body);
    if body.iter().all(u8::is_ascii_whitespace) {
        notes.push(if body.is_empty() {
            "empty file: 0 records".to_string()
        } else {
            "blank file: 0 records".to_string()
        });
        return Ok(SplitFile {
            format: opts.format.unwrap_or(SourceFormat::Csv),
            dialect: None,
            encoding,
            header: vec![],
            header_text: None,
            skipped: vec![],
            records: vec![],
            notes,
        });
    }
    let first = body.iter().find(|b| !b.is_ascii_whitespace()).copied();
    let format = match opts.format {
        Some(f) => f,
        None => match first {
            Some(b'[') => SourceFormat::JsonArray,
            Some(b'{') => {
                let first_line = body.split(|b| *b == b'\n').find(|l| !is_blank(l));
                if first_line.is_some_and(|l| serde_json::from_slice::<IgnoredAny>(l).is_ok()) {
                    SourceFormat::JsonLines
                } else {
                    SourceFormat::Json
                }
            }
            _ => SourceFormat::Csv,
        },
    };
    let mut split = match format {
        SourceFormat::Csv => split_csv(body, opts, &mut notes)?,
        SourceFormat::JsonLines => split_json_lines(body),
        SourceFormat::JsonArray => split_json_array(body, &mut notes),
        SourceFormat::Json => split_json_stream(body),
        SourceFormat::Parquet | SourceFormat::Kafka => not_text_file()?,
    };
    split.encoding = encoding;
    if split.records.len() > MAX_RECORDS {
        return Err(too_many(split.records.len()));
    }
    let corrupt = split
        .records
        .iter()
        .filter(|r| r.corrupt_reason.is_some())
        .count();
    if split.records.is_empty() {
        notes.push(if split.header_text.is_some() {
            "header only: 0 records".to_string()
        } else {
            "no records".to_string()
        });
    } else if corrupt > 0 {
        notes.push(format!(
            "{corrupt} of {} records flagged in _corrupt_reason (kept as they arrived)",
            split.records.len()
        ));
    }
    split.notes.splice(0..0, notes);
    Ok(split)
}

/// Kafka messages are polled, not split from a file (Parquet was handled above).
fn not_text_file() -> Result<SplitFile> {
    Err(EngineError::Internal(
        "Parquet is handled before decoding".into(),
    ))
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

/// The file as UTF-8 bytes: unchanged for UTF-8 (records are checked one by
/// one later), decoded for a declared encoding or a UTF-16 byte-order mark.
fn decode<'a>(
    bytes: &'a [u8],
    label: Option<&str>,
    notes: &mut Vec<String>,
) -> Result<(std::borrow::Cow<'a, [u8]>, String)> {
    let declared = match label.map(str::trim).filter(|l| !l.is_empty()) {
        Some(l) => Some(encoding_rs::Encoding::for_label(l.as_bytes()).ok_or_else(|| {
            EngineError::Ingest(format!(
                "unknown encoding '{l}'; use a name such as utf-8, windows-1251, latin1 or utf-16le. Nothing was written."
            ))
        })?),
        None => None,
    };
    let bom = encoding_rs::Encoding::for_bom(bytes).map(|(e, _)| e);
    let enc = match (declared, bom) {
        (Some(e), _) => e,
        (None, Some(e)) if e != encoding_rs::UTF_8 => e,
        _ => return Ok((std::borrow::Cow::Borrowed(bytes), UTF8.to_string())),
    };
    if enc == encoding_rs::UTF_8 {
        return Ok((std::borrow::Cow::Borrowed(bytes), UTF8.to_string()));
    }
    let (text, used, had_errors) = enc.decode(bytes);
    let name = used.name().to_ascii_lowercase();
    notes.push(if had_errors {
        format!("decoded from {name}; some byte sequences were not valid {name} and show as U+FFFD")
    } else {
        format!("decoded from {name}")
    });
    Ok((
        std::borrow::Cow::Owned(text.into_owned().into_bytes()),
        name,
    ))
}

/// A record's text, with its bytes and a reason when they are not UTF-8.
/// `offset` is the record's byte offset in the file, `line` its first line.
fn text_of(raw: &[u8], offset: usize, line: i64) -> (String, Option<Vec<u8>>, Option<String>) {
    match std::str::from_utf8(raw) {
        Ok(s) => (s.to_string(), None, None),
        Err(e) => {
            let bad_at = offset + e.valid_up_to();
            let bad_line = line
                + raw[..e.valid_up_to()]
                    .iter()
                    .filter(|b| **b == b'\n')
                    .count() as i64;
            (
                String::from_utf8_lossy(raw).into_owned(),
                Some(raw.to_vec()),
                Some(format!(
                    "invalid UTF-8 at line {bad_line}, byte {bad_at} (0x{:02X}); the original bytes are in _raw_bytes",
                    raw[e.valid_up_to()]
                )),
            )
        }
    }
}

fn ascii_option(name: &str, c: Option<char>) -> Result<Option<u8>> {
    match c {
        None => Ok(None),
        Some(c) if c.is_ascii() && c != '\n' && c != '\r' => Ok(Some(c as u8)),
        Some(c) => Err(EngineError::Ingest(format!(
            "the {name} must be one ASCII character other than a line break, not {c:?}; nothing was written"
        ))),
    }
}

/// Line breaks in `bytes`: LF, CRLF (once) and a lone CR (old Mac files).
/// `next` is the byte after `bytes`, so a CR at the end followed by LF counts once.
fn line_breaks(bytes: &[u8], next: Option<u8>) -> i64 {
    let mut n = 0;
    for (i, b) in bytes.iter().enumerate() {
        match b {
            b'\n' => n += 1,
            b'\r' if bytes.get(i + 1).copied().or(next) != Some(b'\n') => n += 1,
            _ => {}
        }
    }
    n
}

/// A reader of every record (the header too), whatever its field count.
pub(crate) fn csv_reader(bytes: &[u8], delimiter: u8, quote: u8) -> csv::Reader<&[u8]> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delimiter)
        .quote(quote)
        .from_reader(bytes)
}

/// Field counts of the first records for one delimiter.
fn sample_counts(sample: &[u8], delimiter: u8, quote: u8) -> Vec<usize> {
    let mut reader = csv_reader(sample, delimiter, quote);
    let mut rec = csv::ByteRecord::new();
    let mut counts = Vec::new();
    while counts.len() < 50 && matches!(reader.read_byte_record(&mut rec), Ok(true)) {
        counts.push(rec.len());
    }
    counts
}

/// The most common field count and how many records have it.
fn modal(counts: &[usize]) -> (usize, usize) {
    let mut best = (1, 0);
    for &c in counts {
        let n = counts.iter().filter(|x| **x == c).count();
        if n > best.1 || (n == best.1 && c > best.0) {
            best = (c, n);
        }
    }
    best
}

fn looks_numeric(field: &[u8]) -> bool {
    std::str::from_utf8(field)
        .ok()
        .map(str::trim)
        .is_some_and(|s| !s.is_empty() && s.parse::<f64>().is_ok())
}

fn split_csv(body: &[u8], opts: &IngestOptions, notes: &mut Vec<String>) -> Result<SplitFile> {
    let quote = ascii_option("quote", opts.quote)?.unwrap_or(b'"');
    let mut detected = Vec::new();
    // A sample of whole lines for detection.
    let mut cut = body.len().min(64 * 1024);
    if cut < body.len() {
        cut = body[..cut].iter().rposition(|b| *b == b'\n').unwrap_or(cut);
    }
    let sample = &body[..cut];
    let delimiter = match ascii_option("delimiter", opts.delimiter)? {
        Some(d) => d,
        None => {
            detected.push("delimiter".to_string());
            // The candidate whose modal field count (> 1) covers most records wins.
            let mut best = (b',', (1, 0));
            for d in [b',', b';', b'\t', b'|'] {
                let m = modal(&sample_counts(sample, d, quote));
                if m.0 > 1 && (m.1 > best.1 .1 || (m.1 == best.1 .1 && m.0 > best.1 .0)) {
                    best = (d, m);
                }
            }
            best.0
        }
    };
    let counts = sample_counts(sample, delimiter, quote);
    let skip_rows = match opts.skip_rows {
        Some(n) => n,
        None => {
            detected.push("skip_rows".to_string());
            // Lines before the first record with the usual field count (banners).
            let (m, _) = modal(&counts);
            if m > 1 {
                counts
                    .iter()
                    .position(|c| *c == m)
                    .filter(|p| *p <= 10)
                    .unwrap_or(0)
            } else {
                0
            }
        }
    };

    let mut reader = csv_reader(body, delimiter, quote);
    let mut rec = csv::ByteRecord::new();
    let mut skipped = Vec::new();
    let mut header: Option<(Vec<String>, String)> = None;
    let mut has_header = opts.has_header;
    let mut records = Vec::new();
    let mut index = 0usize;
    // Lines are counted here: the reader's own line numbers lag behind a CRLF.
    let (mut counted_to, mut line_no) = (0usize, 1i64);
    loop {
        let start = reader.position().byte() as usize;
        let more = match reader.read_byte_record(&mut rec) {
            Ok(more) => more,
            Err(e) => {
                // The csv crate only fails on I/O (never for bytes in memory); keep the rest as one record.
                let rest = &body[start.min(body.len())..];
                let line = reader.position().line() as i64;
                let (text, bytes, _) = text_of(rest, start, line);
                records.push(RawRecord {
                    text,
                    bytes,
                    line,
                    corrupt_reason: Some(format!("CSV could not be read from here on: {e}")),
                });
                break;
            }
        };
        if !more {
            break;
        }
        let pos = rec.position().cloned();
        let begin = pos.as_ref().map(|p| p.byte() as usize).unwrap_or(start);
        let end = (reader.position().byte() as usize).min(body.len());
        // The reader's range can include the previous record's CR; no record starts with one.
        let mut raw = body.get(begin..end).unwrap_or_default();
        let mut offset = begin;
        while let [b'\r' | b'\n', rest @ ..] = raw {
            raw = rest;
            offset += 1;
        }
        let raw = raw.strip_suffix(b"\n").unwrap_or(raw);
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        line_no += line_breaks(
            &body[counted_to.min(offset)..offset],
            body.get(offset).copied(),
        );
        counted_to = offset;
        let line = line_no;
        let this = index;
        index += 1;
        if this < skip_rows {
            skipped.push(String::from_utf8_lossy(raw).into_owned());
            continue;
        }
        if header.is_none() {
            let header_present = *has_header.get_or_insert_with(|| {
                detected.push("has_header".to_string());
                // A first line where most fields are numbers is data, not names.
                rec.iter().filter(|f| looks_numeric(f)).count() * 2 < rec.len().max(1)
            });
            if header_present {
                let names = rec
                    .iter()
                    .enumerate()
                    .map(|(i, f)| {
                        let name = String::from_utf8_lossy(f).trim().to_string();
                        if name.is_empty() {
                            format!("_c{i}")
                        } else {
                            name
                        }
                    })
                    .collect();
                header = Some((names, String::from_utf8_lossy(raw).into_owned()));
                continue;
            }
            header = Some((
                (0..rec.len()).map(|i| format!("_c{i}")).collect(),
                String::new(),
            ));
            notes.push(if rec.len() == 1 {
                "no header line: the column is named _c0".to_string()
            } else {
                format!(
                    "no header line: columns are named _c0 … _c{}",
                    rec.len() - 1
                )
            });
        }
        let expected = header.as_ref().map(|h| h.0.len()).unwrap_or(0);
        let (text, bytes, mut reason) = text_of(raw, offset, line);
        if reason.is_none() && rec.len() != expected {
            reason = Some(format!(
                "{} {}, the header has {expected}",
                rec.len(),
                if rec.len() == 1 { "field" } else { "fields" },
            ));
        }
        records.push(RawRecord {
            text,
            bytes,
            line,
            corrupt_reason: reason,
        });
    }
    let (header, header_text) = header.unwrap_or_default();
    let null_tokens = opts
        .null_tokens
        .clone()
        .unwrap_or_else(|| vec![String::new()]);
    let decimal_separator = opts.decimal_separator.unwrap_or('.');
    if !matches!(decimal_separator, '.' | ',') {
        return Err(EngineError::Ingest(format!(
            "the decimal separator must be '.' or ',', not {decimal_separator:?}; nothing was written"
        )));
    }
    if decimal_separator as u32 == delimiter as u32 {
        return Err(EngineError::Ingest(format!(
            "the decimal separator and the delimiter are both '{decimal_separator}': a field like 1,5 could not be told apart. Nothing was written."
        )));
    }
    if decimal_separator == '.'
        && delimiter != b','
        && records
            .iter()
            .take(200)
            .any(|r| has_decimal_comma(&r.text, delimiter as char))
    {
        notes.push(
            "some fields look like numbers with a decimal comma (1234,5): they stay text unless the decimal separator is set to ','"
                .to_string(),
        );
    }
    if !skipped.is_empty() {
        notes.push(format!(
            "{} line(s) before the header kept aside in the batch log",
            skipped.len()
        ));
    }
    Ok(SplitFile {
        format: SourceFormat::Csv,
        dialect: Some(CsvDialect {
            delimiter: delimiter as char,
            quote: quote as char,
            has_header: has_header.unwrap_or(true),
            skip_rows,
            null_tokens,
            decimal_separator,
            detected,
        }),
        encoding: UTF8.to_string(),
        header,
        header_text: (!header_text.is_empty()).then_some(header_text),
        skipped,
        records,
        notes: vec![],
    })
}

fn has_decimal_comma(record: &str, delimiter: char) -> bool {
    record.split(delimiter).any(|f| {
        let f = f.trim();
        f.split_once(',').is_some_and(|(a, b)| {
            !a.is_empty()
                && !b.is_empty()
                && a.trim_start_matches('-')
                    .chars()
                    .all(|c| c.is_ascii_digit())
                && b.chars().all(|c| c.is_ascii_digit())
        })
    })
}

/// Why a JSON record is not a readable object, if it is not.
fn json_reason(raw: &[u8], offset: usize, line: i64) -> Option<String> {
    match serde_json::from_slice::<serde_json::Value>(raw) {
        Err(e) => {
            // serde_json counts lines and columns (1-based) within the record.
            let col = e.column();
            let in_line = e.line().max(1);
            let mut at = 0usize;
            let mut l = 1;
            for (i, b) in raw.iter().enumerate() {
                if l == in_line {
                    at = i;
                    break;
                }
                if *b == b'\n' {
                    l += 1;
                }
            }
            let byte = offset + at + col.saturating_sub(1);
            let msg = e.to_string();
            let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
            Some(format!(
                "invalid JSON at byte {byte} (line {}, column {col}): {msg}",
                line + in_line as i64 - 1
            ))
        }
        Ok(serde_json::Value::Object(_)) => None,
        Ok(serde_json::Value::Null) => Some(
            "tombstone: the record is JSON null (a Kafka/CDC delete marker), not an object"
                .to_string(),
        ),
        Ok(v) => Some(format!(
            "not a JSON object: {} {}",
            match v {
                serde_json::Value::Bool(_) => "a boolean",
                serde_json::Value::Number(_) => "a number",
                serde_json::Value::String(_) => "a string",
                _ => "an array",
            },
            short(&v.to_string())
        )),
    }
}

fn short(s: &str) -> String {
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s.to_string()
    }
}

/// A JSON record with its reason, if it is not a readable object.
pub(crate) fn json_record(raw: &[u8], offset: usize, line: i64) -> RawRecord {
    let (text, bytes, reason) = text_of(raw, offset, line);
    let reason = reason.or_else(|| json_reason(raw, offset, line));
    RawRecord {
        text,
        bytes,
        line,
        corrupt_reason: reason,
    }
}

fn empty_json(format: SourceFormat, records: Vec<RawRecord>) -> SplitFile {
    SplitFile {
        format,
        dialect: None,
        encoding: UTF8.to_string(),
        header: vec![],
        header_text: None,
        skipped: vec![],
        records,
        notes: vec![],
    }
}

fn split_json_lines(body: &[u8]) -> SplitFile {
    let mut records = Vec::new();
    let mut offset = 0usize;
    for (i, line) in body.split(|b| *b == b'\n').enumerate() {
        let this = offset;
        offset += line.len() + 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if is_blank(line) {
            continue;
        }
        records.push(json_record(line, this, i as i64 + 1));
    }
    empty_json(SourceFormat::JsonLines, records)
}

fn line_at(body: &[u8], offset: usize) -> i64 {
    body[..offset.min(body.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count() as i64
        + 1
}

fn split_json_array(body: &[u8], notes: &mut Vec<String>) -> SplitFile {
    if let Ok(elements) = serde_json::from_slice::<Vec<&serde_json::value::RawValue>>(body) {
        let base = body.as_ptr() as usize;
        let mut records = Vec::with_capacity(elements.len());
        let mut line = 1i64;
        let mut last = 0usize;
        for el in elements {
            let text = el.get();
            let offset = (text.as_ptr() as usize)
                .saturating_sub(base)
                .min(body.len());
            line += body[last..offset].iter().filter(|b| **b == b'\n').count() as i64;
            last = offset;
            records.push(RawRecord {
                text: text.to_string(),
                bytes: None,
                line,
                corrupt_reason: json_reason(text.as_bytes(), offset, line),
            });
        }
        return empty_json(SourceFormat::JsonArray, records);
    }
    // Not a valid array: keep the file as one record with the parser's reason.
    notes.push(
        "the file starts like a JSON array but is not valid JSON: kept as one corrupt record"
            .to_string(),
    );
    let mut rec = json_record(body, 0, 1);
    if rec.corrupt_reason.is_none() {
        rec.corrupt_reason = Some("not a valid JSON array".to_string());
    }
    empty_json(SourceFormat::JsonArray, vec![rec])
}

/// Concatenated (often pretty-printed) JSON values. After an invalid value,
/// reading resumes at the next line that starts with `{`.
fn split_json_stream(body: &[u8]) -> SplitFile {
    let mut records = Vec::new();
    let mut pos = 0usize;
    while pos < body.len() {
        let mut stream =
            serde_json::Deserializer::from_slice(&body[pos..]).into_iter::<IgnoredAny>();
        loop {
            let before = stream.byte_offset();
            let start = pos
                + before
                + body[pos + before..]
                    .iter()
                    .take_while(|b| b.is_ascii_whitespace())
                    .count();
            match stream.next() {
                None => {
                    pos = body.len();
                    break;
                }
                Some(Ok(_)) => {
                    let end = pos + stream.byte_offset();
                    records.push(json_record(&body[start..end], start, line_at(body, start)));
                }
                Some(Err(_)) => {
                    // The bad value runs to the next line that opens an object.
                    let next = body[start + 1..]
                        .windows(2)
                        .position(|w| w == b"\n{")
                        .map(|p| start + 1 + p + 1)
                        .unwrap_or(body.len());
                    let mut raw = &body[start..next];
                    while let [rest @ .., b'\n' | b'\r' | b' ' | b'\t'] = raw {
                        raw = rest;
                    }
                    records.push(json_record(raw, start, line_at(body, start)));
                    pos = next;
                    break;
                }
            }
        }
    }
    empty_json(SourceFormat::Json, records)
}

fn split_parquet(bytes: &[u8]) -> Result<SplitFile> {
    use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let refuse = |e: String| {
        EngineError::Ingest(format!(
            "the file is not a readable Parquet file ({e}); nothing was written"
        ))
    };
    let builder = ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::copy_from_slice(bytes))
        .map_err(|e| refuse(e.to_string()))?;
    let schema = builder.schema().clone();
    let rows = builder.metadata().file_metadata().num_rows().max(0) as usize;
    if rows > MAX_RECORDS {
        return Err(too_many(rows));
    }
    let reader = builder.build().map_err(|e| refuse(e.to_string()))?;
    let mut records = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| refuse(e.to_string()))?;
        let mut buf = Vec::new();
        let mut writer = arrow_json::WriterBuilder::new()
            .with_explicit_nulls(true)
            .build::<_, arrow_json::writer::LineDelimited>(&mut buf);
        writer
            .write(&batch)
            .map_err(|e| refuse(format!("a row could not be written as JSON: {e}")))?;
        writer.finish().map_err(|e| refuse(e.to_string()))?;
        drop(writer);
        for line in buf.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let n = records.len() as i64 + 1;
            records.push(RawRecord {
                text: String::from_utf8_lossy(line).into_owned(),
                bytes: None,
                line: n,
                corrupt_reason: None,
            });
        }
    }
    let header: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    let mut notes = vec![format!(
        "Parquet: {} rows; columns {}",
        records.len(),
        schema
            .fields()
            .iter()
            .map(|f| format!("{} ({})", f.name(), f.data_type()))
            .collect::<Vec<_>>()
            .join(", ")
    )];
    if records.is_empty() {
        notes.push("no rows: 0 records".to_string());
    }
    Ok(SplitFile {
        format: SourceFormat::Parquet,
        dialect: None,
        encoding: "binary".to_string(),
        header,
        header_text: None,
        skipped: vec![],
        records,
        notes,
    })
}
