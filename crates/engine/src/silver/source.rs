//! Reading bronze for silver: each raw payload is parsed with its batch's
//! header (CSV) or as a JSON object (JSON Lines), and every declared column is
//! converted to its declared type.
//!
//! A record that cannot be read, or a value that does not convert, sends the
//! row to `silver.quarantine` with rule id [`PARSE_RULE_ID`] and a reason that
//! names the column and the value (`fare_amount: 'abc' is not DOUBLE`): never a
//! silent NULL. An empty CSV field or a JSON `null` is a missing value (NULL),
//! not an error. A declared column absent from a batch's header is read as
//! NULL for that batch, noted in the batch log at ingest ([`absent_columns`])
//! and reported as a [`MissingColumn`] notice.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use serde::{Deserialize, Serialize};

use serde_json::value::RawValue;

use crate::bronze::{
    same_name_ignoring_case, BatchInfo, CsvDialect, HeaderRename, SourceFormat, SplitFile,
};
use crate::error::{EngineError, Result};
use crate::silver::convert::ConvertError;
use crate::silver::csv_read::{BulkCsv, CsvLayout, Joined, RecordError, TextColumns};

pub use crate::model::ArrowColumnType;
pub use medallion_protocol::schema::{
    AmbiguousTime, ColumnType, NonexistentTime, ReadAsUtc, SourceColumn, SourceSchema,
};

/// Rule id under which unreadable records and unconvertible values are quarantined.
pub const PARSE_RULE_ID: &str = "parse";

/// Lineage columns carried from bronze through silver's intermediate steps.
pub const LINEAGE_COLUMNS: [&str; 4] = ["_event_id", "_batch_id", "_source_file", "raw_payload"];

/// Why a declared schema cannot be used, or a bronze record cannot be read
/// with it. A schema's error refuses the schema, naming the column; a
/// record's error is its quarantine reason (rule [`PARSE_RULE_ID`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    /// A `time_zone` (or a policy for local times) on `column`, of type
    /// `data_type`, which is no TIMESTAMP.
    #[error("column {column}: a time_zone (and ambiguous / nonexistent) applies to TIMESTAMP columns only, and {column} is {data_type}")]
    ZoneNotOnTimestamp {
        column: String,
        data_type: ColumnType,
    },
    /// `ambiguous` / `nonexistent` set on TIMESTAMP `column` without a `time_zone`.
    #[error("column {column}: ambiguous / nonexistent say how local times in a time zone are read; declare the column's time_zone too (an IANA name such as America/New_York)")]
    PolicyWithoutZone { column: String },
    /// A column's time zone or declared formats (the error names the column).
    #[error(transparent)]
    Convert(#[from] ConvertError),
    /// Declared `column` takes the name of engine column `reserved` (equal
    /// ignoring case, or exactly), which is `meaning`.
    #[error("column {column}: the name is reserved{}: {reserved} is {meaning}, so a declared column of that name would replace it or be replaced by it. A file's column named {column} is read as {column}_2 (CSV header, Parquet column; the batch log's header renames give the name): declare that; a JSON key {column} is read by a column with another name and \"path\": \"{column}\"", equal_ignoring_case(.column, .reserved))]
    ReservedName {
        column: String,
        reserved: &'static str,
        meaning: &'static str,
    },
    /// Declared columns `first` and `second` have names equal ignoring case.
    #[error("columns {first} and {second} are equal ignoring case (names bind the file's columns ignoring case, as Spark does), so both would read the same column; name them apart (a file's names equal ignoring case are read as <name>_2, <name>_3 in CSV and Parquet; a JSON key is read by a column with another name and a \"path\")")]
    SameIgnoringCase { first: String, second: String },
    /// Declared `column` binds several source columns, each given as (its
    /// own name, the name it is read by): one name in Unicode NFC (`nfc`),
    /// or equal ignoring case.
    #[error("{}", ambiguous_text(.column, .names, *.nfc))]
    AmbiguousName {
        column: String,
        names: Vec<(String, String)>,
        nfc: bool,
    },
    /// The record was flagged at ingest (`_corrupt_reason`), with this reason.
    #[error("{0}")]
    Corrupt(String),
    /// A CSV file whose `header` has none of the `declared` columns.
    #[error("{}", foreign_header_text(.header, .declared))]
    ForeignHeader {
        header: Vec<String>,
        declared: Vec<String>,
    },
    /// A CSV record with nothing in it.
    #[error("empty record")]
    EmptyRecord,
    /// A CSV record the CSV reader cannot read (its message).
    #[error("unreadable CSV record: {0}")]
    UnreadableCsv(String),
    /// A CSV record with `found` fields where the header has `expected`.
    #[error("expected {expected} fields (as in the header), found {found}")]
    FieldCount { expected: usize, found: usize },
    /// JSON text that does not parse: the parser's `message` and the
    /// `column` (1-based character position) where it stopped.
    #[error("invalid JSON at column {column}: {message}")]
    InvalidJson { column: usize, message: String },
    /// A JSON value that is no object where a record (or a nested path) needs one.
    #[error("JSON value is not an object")]
    NotAnObject,
    /// A JSON string `text` that does not decode.
    #[error("invalid JSON string {text}: {message}")]
    InvalidJsonString { text: String, message: String },
    /// A JSON object with none of the declared `columns`.
    #[error("the object has none of the declared columns ({})", short_list(.columns))]
    NoDeclaredColumns { columns: Vec<String> },
}

impl From<SourceError> for EngineError {
    fn from(e: SourceError) -> Self {
        EngineError::Request(e.to_string())
    }
}

impl From<RecordError> for SourceError {
    fn from(e: RecordError) -> Self {
        match e {
            RecordError::FieldCount { expected, found } => {
                SourceError::FieldCount { expected, found }
            }
            RecordError::Empty => SourceError::EmptyRecord,
            RecordError::Unreadable(message) => SourceError::UnreadableCsv(message),
        }
    }
}

impl SourceError {
    /// A JSON parse error, with the position where it stopped.
    pub(crate) fn json(e: serde_json::Error) -> SourceError {
        SourceError::InvalidJson {
            column: e.column(),
            message: e.to_string(),
        }
    }
}

/// ` (equal to _EVENT_ID ignoring case)` when `column` is not exactly `reserved`.
fn equal_ignoring_case(column: &str, reserved: &str) -> String {
    if column == reserved {
        String::new()
    } else {
        format!(" (equal to {reserved} ignoring case)")
    }
}

/// Is a declared column usable? Checks the time zone name (an IANA name;
/// a wrong one names the column and suggests the form), that a zone or a
/// policy is only set on a TIMESTAMP column, and the declared formats.
pub fn validate_column(column: &SourceColumn) -> std::result::Result<(), SourceError> {
    let name = &column.name;
    let zoned_policy = column.ambiguous != AmbiguousTime::default()
        || column.nonexistent != NonexistentTime::default();
    if column.data_type != ColumnType::Timestamp {
        if column.time_zone.is_some() || zoned_policy {
            return Err(SourceError::ZoneNotOnTimestamp {
                column: name.clone(),
                data_type: column.data_type,
            });
        }
    } else if column.time_zone.is_none() && zoned_policy {
        return Err(SourceError::PolicyWithoutZone {
            column: name.clone(),
        });
    }
    if let Some(zone) = &column.time_zone {
        crate::silver::convert::time_zone(zone).map_err(|e| e.in_column(name))?;
    }
    crate::silver::convert::check_formats(column.data_type, &column.formats)
        .map_err(|e| e.in_column(name).into())
}

/// Checks a declared schema: every column's definition (see [`validate_column`]),
/// that no column takes a name the engine keeps for itself
/// ([`crate::bronze::RESERVED_COLUMNS`], ignoring case: it would replace
/// the lineage or be replaced by it), and that no two columns have names
/// equal ignoring case (both would read the same source column).
pub fn validate_schema(schema: &SourceSchema) -> std::result::Result<(), SourceError> {
    schema.columns.iter().try_for_each(validate_column)?;
    for (i, c) in schema.columns.iter().enumerate() {
        if let Some((reserved, meaning)) = crate::bronze::reserved_column(&c.name) {
            return Err(SourceError::ReservedName {
                column: c.name.clone(),
                reserved,
                meaning,
            });
        }
        if let Some(other) = schema.columns[..i]
            .iter()
            .find(|o| same_name_ignoring_case(&o.name, &c.name))
        {
            return Err(SourceError::SameIgnoringCase {
                first: other.name.clone(),
                second: c.name.clone(),
            });
        }
    }
    Ok(())
}

/// Arrow schema of a table parsed with `schema`: the lineage columns, then the declared columns.
pub fn parsed_arrow_schema(schema: &SourceSchema) -> SchemaRef {
    let mut fields: Vec<Field> = LINEAGE_COLUMNS
        .iter()
        .map(|n| Field::new(*n, DataType::Utf8, false))
        .collect();
    fields.extend(
        schema
            .columns
            .iter()
            .map(|c| Field::new(&c.name, c.data_type.arrow_type(), true)),
    );
    Arc::new(Schema::new(fields))
}

/// A row that could not be read into the declared schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rejected {
    pub event_id: String,
    pub batch_id: String,
    pub source_file: String,
    pub raw_payload: String,
    pub rule_id: String,
    pub reason: String,
}

/// A declared column that some batches do not have.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MissingColumn {
    pub column: String,
    /// Batches (of this table) whose header or objects lack the column.
    pub batches_without: usize,
    pub batches_total: usize,
}

/// Result of reading one bronze table with its declared schema.
#[derive(Debug, Clone)]
pub struct Parsed {
    /// Rows that parsed, with [`parsed_arrow_schema`].
    pub rows: RecordBatch,
    pub rejected: Vec<Rejected>,
    pub missing: Vec<MissingColumn>,
    /// TIMESTAMP columns (no declared zone) with values read as UTC for lack of an offset.
    pub read_as_utc: Vec<ReadAsUtc>,
}

/// One batch's declared columns converted: typed arrays, and per row the
/// values that did not convert; per column and row, a value read as UTC.
struct ConvertedBatch {
    arrays: Vec<ArrayRef>,
    errors: Vec<Vec<String>>,
    /// Empty for a column taken as typed bronze stored it (counted at ingest).
    read_as_utc: Vec<Vec<bool>>,
}

/// Parses every bronze row of one table (`bronze` holds the rows of the
/// batches in `batches`, same order) with `schema`. Each batch is converted
/// on its own (a repeated local time read in arrival order is decided within
/// its batch); the rows of a typed bronze batch are already typed.
pub fn parse_bronze(schema: &SourceSchema, batches: &[(BatchInfo, RecordBatch)]) -> Result<Parsed> {
    let ncols = schema.columns.len();
    // Per batch: its rows' lineage columns and its converted declared columns.
    let mut parts: Vec<([ArrayRef; 4], ConvertedBatch)> = Vec::new();
    let mut keep: Vec<bool> = Vec::new();
    let mut rejected = Vec::new();
    let mut unconverted = Vec::new();
    let mut missing_counts = vec![0usize; ncols];
    // Per column: (values without an offset read as UTC, values read).
    let mut utc_counts = vec![(0usize, 0usize); ncols];
    let counted: Vec<bool> = schema
        .columns
        .iter()
        .map(|c| c.data_type == ColumnType::Timestamp && c.time_zone.is_none())
        .collect();

    for (info, batch) in batches {
        if batch.column_by_name("raw_payload").is_none() {
            let mut lineage: Vec<Vec<String>> = vec![Vec::new(); LINEAGE_COLUMNS.len()];
            let part = read_typed_batch(batch, schema, &mut lineage, &mut rejected)?;
            parts.push((string_arrays(lineage), part));
            // Typed at ingest: the batch log has the counts of the records that fit.
            for (c, col) in schema.columns.iter().enumerate() {
                if let Some(r) = info.read_as_utc.iter().find(|r| r.column == col.name) {
                    utc_counts[c].0 += r.without_offset;
                    utc_counts[c].1 += r.values;
                }
            }
            continue;
        }
        let mut texts = TextColumns::new(ncols);
        let payloads = string_column(batch, "raw_payload")?;
        let event_ids = string_column(batch, "_event_id")?;
        let batch_ids = string_column(batch, "_batch_id")?;
        let files = string_column(batch, "_source_file")?;
        let corrupt = batch
            .column_by_name("_corrupt_reason")
            .and_then(|c| c.as_any().downcast_ref::<StringArray>());
        let csv = info.format == SourceFormat::Csv;
        let (header_index, ambiguous) =
            match header_positions(&info.header, &info.header_renames, schema) {
                Ok(index) => (index, None),
                Err(reason) => (HashMap::new(), Some(reason).filter(|_| csv)),
            };
        let dialect = info.dialect.clone().unwrap_or_else(default_dialect);
        // A CSV whose header shares no column with the declared schema is some
        // other data set: its rows are quarantined rather than read as all-NULL rows.
        // (With no column declared, nothing is expected of the header: each
        // well-formed record is a row of lineage columns only.)
        let foreign_header = csv
            && ambiguous.is_none()
            && !schema.columns.is_empty()
            && !header_index.values().any(Option::is_some);
        if csv && batch.num_rows() > 0 && !foreign_header && ambiguous.is_none() {
            for (c, col) in schema.columns.iter().enumerate() {
                if header_index
                    .get(col.name.as_str())
                    .copied()
                    .flatten()
                    .is_none()
                {
                    missing_counts[c] += 1;
                }
            }
        }
        let mut json_seen = vec![false; ncols];
        let flagged_at = |row: usize| corrupt.filter(|c| c.is_valid(row)).map(|c| c.value(row));
        let layout = CsvLayout::new(&dialect, &info.header, &header_index, schema);
        // With no column declared, a CSV record is a row when the split found
        // it well-formed: it flags in `_corrupt_reason` every record whose
        // quoting is broken or whose field count is not the header's, which
        // is all the reader below would find (a row of lineage columns only
        // needs no field). So the payloads are not read a second time
        // (tests/prop_bronze.rs compares with the file read with a column).
        let split_checked = csv && ncols == 0;
        // Flagged payloads are never parsed (an unterminated quote would run
        // into the next payload): the bulk reader holds the others, in order.
        let readable = csv && !foreign_header && ambiguous.is_none() && !split_checked;
        let joined = Joined::new(
            (0..batch.num_rows())
                .filter(|r| readable && flagged_at(*r).is_none())
                .map(|r| payloads.value(r)),
        );
        let mut bulk = BulkCsv::new(&joined, &dialect);
        // The rows that were read (the lineage of the texts), in order.
        let mut read: Vec<u32> = Vec::new();
        for row in 0..batch.num_rows() {
            let raw = payloads.value(row);
            let outcome = match (flagged_at(row), info.format) {
                (Some(reason), _) => Err(SourceError::Corrupt(reason.to_string())),
                (None, SourceFormat::Csv) => match &ambiguous {
                    Some(a) => Err(a.clone()),
                    None if foreign_header => Err(foreign_header_reason(&info.header, schema)),
                    None if split_checked => Ok(()),
                    None => match bulk.next_record() {
                        Some(record) => layout.append(record, &mut texts),
                        None => layout.append_payload(raw, &mut texts),
                    }
                    .map_err(SourceError::from),
                },
                // Null tokens and the decimal separator are CSV settings: a JSON
                // `""` is the empty string (only `null` or an absent key is NULL).
                (None, _) => read_json_record(raw, schema, &mut json_seen).map(|v| texts.push(v)),
            };
            match outcome {
                Ok(()) => read.push(row as u32),
                Err(reason) => rejected.push(Rejected {
                    event_id: event_ids.value(row).to_string(),
                    batch_id: batch_ids.value(row).to_string(),
                    source_file: files.value(row).to_string(),
                    raw_payload: raw.to_string(),
                    rule_id: PARSE_RULE_ID.to_string(),
                    reason: reason.to_string(),
                }),
            }
        }
        if !csv && batch.num_rows() > 0 {
            for (c, seen) in json_seen.iter().enumerate() {
                if !seen {
                    missing_counts[c] += 1;
                }
            }
        }
        // Every row read (the usual case): the batch's own arrays, not copies.
        let all_read = read.len() == batch.num_rows();
        let read = datafusion::arrow::array::UInt32Array::from(read);
        let take = |a: &StringArray| -> Result<ArrayRef> {
            Ok(if all_read {
                Arc::new(a.clone())
            } else {
                datafusion::arrow::compute::take(a, &read, None)?
            })
        };
        let lineage = [
            take(event_ids)?,
            take(batch_ids)?,
            take(files)?,
            take(payloads)?,
        ];
        // Each batch is converted on its own (arrival order is per batch).
        parts.push((lineage, convert_texts(schema, texts.finish(), read.len())?));
    }

    for (lineage, part) in &parts {
        for (row, errs) in part.errors.iter().enumerate() {
            if errs.is_empty() {
                keep.push(true);
                for (c, count) in utc_counts.iter_mut().enumerate() {
                    // No flags: typed at ingest and counted there.
                    let flag = part.read_as_utc[c].get(row);
                    if let Some(utc) = flag.filter(|_| counted[c] && part.arrays[c].is_valid(row)) {
                        count.1 += 1;
                        count.0 += usize::from(*utc);
                    }
                }
                continue;
            }
            keep.push(false);
            let text = |k: usize| text_at(&lineage[k], row);
            unconverted.push(Rejected {
                event_id: text(0),
                batch_id: text(1),
                source_file: text(2),
                raw_payload: text(3),
                rule_id: PARSE_RULE_ID.to_string(),
                reason: errs.join("; "),
            });
        }
    }
    // Unreadable records first, then values that did not convert, each in bronze order.
    rejected.extend(unconverted);

    let mut columns: Vec<ArrayRef> = Vec::with_capacity(LINEAGE_COLUMNS.len() + ncols);
    for k in 0..LINEAGE_COLUMNS.len() {
        let arrays: Vec<&dyn Array> = parts.iter().map(|(l, _)| l[k].as_ref()).collect();
        columns.push(concat_or_empty(&arrays, &DataType::Utf8)?);
    }
    for (c, col) in schema.columns.iter().enumerate() {
        let arrays: Vec<&dyn Array> = parts.iter().map(|(_, p)| p.arrays[c].as_ref()).collect();
        columns.push(concat_or_empty(&arrays, &col.data_type.arrow_type())?);
    }
    let all = RecordBatch::try_new(parsed_arrow_schema(schema), columns)?;
    let mask = datafusion::arrow::array::BooleanArray::from(keep);
    let rows = datafusion::arrow::compute::filter_record_batch(&all, &mask)?;

    let total = batches.len();
    let missing = schema
        .columns
        .iter()
        .zip(missing_counts)
        .filter(|(_, k)| *k > 0)
        .map(|(c, k)| MissingColumn {
            column: c.name.clone(),
            batches_without: k,
            batches_total: total,
        })
        .collect();
    Ok(Parsed {
        rows,
        rejected,
        missing,
        read_as_utc: read_as_utc_counts(schema, &utc_counts),
    })
}

/// [`parse_bronze`] of whole batches, keeping only the rows (and rejections)
/// of the records `events` names: each record is read as the run read it,
/// in its batch (a repeated local time in arrival order depends on the
/// records before it). For row trails.
pub fn parse_bronze_events(
    schema: &SourceSchema,
    batches: &[(BatchInfo, RecordBatch)],
    events: &std::collections::HashSet<String>,
) -> Result<Parsed> {
    let mut parsed = parse_bronze(schema, batches)?;
    parsed.rejected.retain(|r| events.contains(&r.event_id));
    let ids = string_column(&parsed.rows, "_event_id")?;
    let mask: datafusion::arrow::array::BooleanArray = (0..ids.len())
        .map(|i| Some(events.contains(ids.value(i))))
        .collect();
    parsed.rows = datafusion::arrow::compute::filter_record_batch(&parsed.rows, &mask)?;
    Ok(parsed)
}

/// The columns of `counts` (without offset, values) that had a value read as UTC.
fn read_as_utc_counts(schema: &SourceSchema, counts: &[(usize, usize)]) -> Vec<ReadAsUtc> {
    schema
        .columns
        .iter()
        .zip(counts)
        .filter(|(_, (without, _))| *without > 0)
        .map(|(c, (without, values))| ReadAsUtc {
            column: c.name.clone(),
            without_offset: *without,
            values: *values,
        })
        .collect()
}

/// Converts each declared column's texts (one batch, rows in order) to its
/// declared type, with its formats and time zone (see
/// [`crate::silver::convert::convert_source_column`]). Per row: the values that did
/// not convert (`qty: 'three' is not INT`).
fn convert_texts(
    schema: &SourceSchema,
    texts: Vec<StringArray>,
    n: usize,
) -> Result<ConvertedBatch> {
    let mut part = ConvertedBatch {
        arrays: Vec::with_capacity(schema.columns.len()),
        errors: vec![Vec::new(); n],
        read_as_utc: Vec::with_capacity(schema.columns.len()),
    };
    for (col, texts) in schema.columns.iter().zip(&texts) {
        let (array, read_as_utc) = convert_one(col, texts, &mut part.errors)?;
        part.arrays.push(array);
        part.read_as_utc.push(read_as_utc);
    }
    Ok(part)
}

/// One column's texts converted: the typed array and, per row, whether the
/// value was read as UTC for lack of an offset; messages go to `errors[row]`.
fn convert_one(
    col: &SourceColumn,
    texts: &StringArray,
    errors: &mut [Vec<String>],
) -> Result<(ArrayRef, Vec<bool>)> {
    let converted = crate::silver::convert::convert_source_column(col, texts)?;
    for (row, e) in converted.errors.into_iter().enumerate() {
        if let (Some(e), Some(errs)) = (e, errors.get_mut(row)) {
            errs.push(e);
        }
    }
    Ok((converted.array, converted.read_as_utc))
}

/// The lineage columns of a typed batch's rows, as arrays.
fn string_arrays(lineage: Vec<Vec<String>>) -> [ArrayRef; 4] {
    let mut arrays = lineage
        .into_iter()
        .map(|v| Arc::new(StringArray::from(v)) as ArrayRef);
    std::array::from_fn(|_| {
        arrays
            .next()
            .unwrap_or_else(|| datafusion::arrow::array::new_empty_array(&DataType::Utf8))
    })
}

/// The text at `row` of a lineage column (`""` if it is not text).
fn text_at(array: &ArrayRef, row: usize) -> String {
    array
        .as_any()
        .downcast_ref::<StringArray>()
        .filter(|a| a.is_valid(row))
        .map(|a| a.value(row).to_string())
        .unwrap_or_default()
}

/// `arrays` concatenated; an empty array of `data_type` when there are none.
fn concat_or_empty(arrays: &[&dyn Array], data_type: &DataType) -> Result<ArrayRef> {
    Ok(match arrays {
        [] => datafusion::arrow::array::new_empty_array(data_type),
        [one] => datafusion::arrow::array::make_array(one.to_data()),
        _ => datafusion::arrow::compute::concat(arrays)?,
    })
}

/// Records typed at ingest (typed bronze modes).
#[derive(Debug, Clone)]
pub struct TypedRecords {
    /// One array per declared column; NULL in every column of a record that did not fit.
    pub columns: Vec<ArrayRef>,
    /// Per record: why it does not fit the declared schema, if it does not.
    pub reasons: Vec<Option<String>>,
    /// Source columns (CSV header names, JSON keys) the schema does not declare:
    /// a typed bronze does not store them (the schema-drift trade-off of seed 000 §4).
    pub undeclared: Vec<String>,
    /// Declared columns the file does not have (stored as NULL).
    pub missing: Vec<String>,
    /// TIMESTAMP columns (no declared zone) with values stored as UTC for
    /// lack of an offset, counted over the records that fit.
    pub read_as_utc: Vec<ReadAsUtc>,
}

/// Types the records of one file with `schema`, as a typed bronze stores them.
pub fn type_records(schema: &SourceSchema, split: &SplitFile) -> Result<TypedRecords> {
    let ncols = schema.columns.len();
    let dialect = split.dialect.clone().unwrap_or_else(default_dialect);
    let csv = split.format == SourceFormat::Csv;
    let (header_index, ambiguous) =
        match header_positions(&split.header, &split.header_renames, schema) {
            Ok(index) => (index, None),
            Err(reason) => (HashMap::new(), Some(reason).filter(|_| csv)),
        };
    let mut undeclared = unbound_header(&split.header, &header_index);
    let foreign = csv && ambiguous.is_none() && !header_index.values().any(Option::is_some);
    let mut missing: Vec<String> = if csv && !foreign && ambiguous.is_none() {
        schema
            .columns
            .iter()
            .filter(|c| {
                header_index
                    .get(c.name.as_str())
                    .copied()
                    .flatten()
                    .is_none()
            })
            .map(|c| c.name.clone())
            .collect()
    } else {
        vec![]
    };
    let mut texts = TextColumns::new(ncols);
    let mut reasons = Vec::with_capacity(split.records.len());
    let mut seen = vec![false; ncols];
    let layout = CsvLayout::new(&dialect, &split.header, &header_index, schema);
    // Flagged records are never parsed (see `parse_bronze`).
    let readable = csv && !foreign && ambiguous.is_none();
    let joined = Joined::new(
        split
            .records
            .iter()
            .filter(|r| readable && r.corrupt_reason.is_none())
            .map(|r| r.text.as_str()),
    );
    let mut bulk = BulkCsv::new(&joined, &dialect);
    for r in &split.records {
        let outcome = match (&r.corrupt_reason, split.format) {
            (Some(reason), _) => Err(SourceError::Corrupt(reason.clone())),
            (None, SourceFormat::Csv) => match &ambiguous {
                Some(a) => Err(a.clone()),
                None if foreign => Err(foreign_header_reason(&split.header, schema)),
                None => match bulk.next_record() {
                    Some(record) => layout.append(record, &mut texts),
                    None => layout.append_payload(&r.text, &mut texts),
                }
                .map_err(SourceError::from),
            },
            (None, _) => {
                if let Ok(obj) = raw_object(&r.text) {
                    // Keys no declared column binds (a column with a path binds its first key).
                    let bound: Vec<&String> = schema
                        .columns
                        .iter()
                        .filter_map(|c| {
                            json_key(&obj, first_key(c), &c.name)
                                .ok()
                                .flatten()
                                .map(|(k, _)| k)
                        })
                        .collect();
                    for k in obj.keys() {
                        if undeclared.len() < 20 && !undeclared.contains(k) && !bound.contains(&k) {
                            undeclared.push(k.clone());
                        }
                    }
                }
                // CSV settings only (see `parse_bronze`): JSON `""` stays the empty string.
                read_json_record(&r.text, schema, &mut seen).map(|v| texts.push(v))
            }
        };
        match outcome {
            Ok(()) => reasons.push(None),
            Err(reason) => {
                texts.push_nulls();
                reasons.push(Some(reason.to_string()));
            }
        }
    }
    let n = reasons.len();
    // One conversion in record order (a repeated local time read in arrival
    // order sees every record, as silver reading a raw batch does).
    let converted = convert_texts(schema, texts.finish(), n)?;
    for (row, errs) in converted.errors.iter().enumerate() {
        if !errs.is_empty() {
            reasons[row] = Some(errs.join("; "));
        }
    }
    // PERMISSIVE: a record that does not fit keeps no typed values.
    let misfit = datafusion::arrow::array::BooleanArray::from(
        reasons.iter().map(Option::is_some).collect::<Vec<_>>(),
    );
    let columns = converted
        .arrays
        .iter()
        .map(|a| datafusion::arrow::compute::nullif(a.as_ref(), &misfit))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let mut counts = vec![(0usize, 0usize); ncols];
    for (c, col) in schema.columns.iter().enumerate() {
        if col.data_type != ColumnType::Timestamp || col.time_zone.is_some() {
            continue;
        }
        for row in (0..n).filter(|r| reasons[*r].is_none()) {
            if columns[c].is_valid(row) {
                counts[c].1 += 1;
                counts[c].0 += usize::from(converted.read_as_utc[c][row]);
            }
        }
    }
    if !csv && !split.records.is_empty() {
        missing = schema
            .columns
            .iter()
            .zip(&seen)
            .filter(|(_, s)| !**s)
            .map(|(c, _)| c.name.clone())
            .collect();
    }
    Ok(TypedRecords {
        columns,
        reasons,
        undeclared: if foreign { vec![] } else { undeclared },
        missing,
        read_as_utc: read_as_utc_counts(schema, &counts),
    })
}

/// A declared column a file does not have: silver reads it as NULL for the
/// file's batch (a typed bronze stores NULL), and the batch log says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbsentColumn {
    /// The declared column.
    pub column: String,
    /// The file's names that come close: equal to the declared name (for a
    /// column with a `path`, its first key) once spaces, invisible characters
    /// ([`crate::bronze::is_invisible_in_names`]), Unicode normalization
    /// (NFC) and case are ignored. CSV: the
    /// names the batch reads the columns by; JSON: top-level keys.
    pub close: Vec<String>,
}

/// Are `a` and `b` equal once spaces, invisible characters, Unicode
/// normalization and case are ignored ([`same_name_ignoring_case`]
/// compares under NFC)?
fn close_names(a: &str, b: &str) -> bool {
    let squeeze = |s: &str| -> String {
        s.chars()
            .filter(|c| !c.is_whitespace() && !crate::bronze::is_invisible_in_names(*c))
            .collect()
    };
    same_name_ignoring_case(&squeeze(a), &squeeze(b))
}

/// The declared columns of `schema` that the file `split` does not have, so
/// that no column is a silent NULL. CSV: the columns no header name binds
/// (none when the header binds no column at all or is ambiguous: then every
/// record is quarantined with that reason). JSON (and Parquet, Kafka): the
/// columns no well-formed record has, as silver counts them. Nothing for a
/// file without records.
pub fn absent_columns(schema: &SourceSchema, split: &SplitFile) -> Vec<AbsentColumn> {
    if split.records.is_empty() || schema.columns.is_empty() {
        return vec![];
    }
    if split.format == SourceFormat::Csv {
        let Ok(index) = header_positions(&split.header, &split.header_renames, schema) else {
            return vec![];
        };
        if !index.values().any(Option::is_some) {
            return vec![];
        }
        return schema
            .columns
            .iter()
            .filter(|c| index.get(c.name.as_str()).copied().flatten().is_none())
            .map(|c| AbsentColumn {
                column: c.name.clone(),
                close: split
                    .header
                    .iter()
                    .enumerate()
                    .filter(|(i, read)| {
                        let own = split
                            .header_renames
                            .iter()
                            .find(|r| r.position == *i)
                            .map_or(read.as_str(), |r| r.original.as_str());
                        close_names(read, &c.name) || close_names(own, &c.name)
                    })
                    .map(|(_, read)| read.clone())
                    .collect(),
            })
            .collect();
    }
    let mut seen = vec![false; schema.columns.len()];
    let mut keys: Vec<String> = Vec::new();
    for r in split.records.iter().filter(|r| r.corrupt_reason.is_none()) {
        if seen.iter().all(|s| *s) {
            break;
        }
        // A record silver cannot read (two keys bind one column: it is
        // quarantined naming both) still has the columns its keys bind; a
        // column two keys bind is in the file too, not absent from it.
        if read_json_record(&r.text, schema, &mut seen).is_err() {
            if let Ok(obj) = raw_object(&r.text) {
                for (i, c) in schema.columns.iter().enumerate() {
                    if !matches!(json_key(&obj, first_key(c), &c.name), Ok(None)) {
                        seen[i] = true;
                    }
                }
            }
        }
        if let Ok(obj) = raw_object(&r.text) {
            for k in obj.keys() {
                if keys.len() < 1000 && !keys.contains(k) {
                    keys.push(k.clone());
                }
            }
        }
    }
    schema
        .columns
        .iter()
        .zip(&seen)
        .filter(|(_, s)| !**s)
        .map(|(c, _)| AbsentColumn {
            column: c.name.clone(),
            close: keys
                .iter()
                .filter(|k| close_names(k, first_key(c)))
                .cloned()
                .collect(),
        })
        .collect()
}

/// The batch log's note on a CSV file whose header binds none of the
/// declared columns (a file dropped on the wrong table, or read with the
/// wrong delimiter): silver sends every record to the quarantine with
/// that reason, and the batch log says so at once. `None` for any other
/// file (for JSON, [`absent_columns`] names every declared column).
pub fn foreign_header_note(schema: &SourceSchema, split: &SplitFile) -> Option<String> {
    if split.format != SourceFormat::Csv || split.records.is_empty() || schema.columns.is_empty() {
        return None;
    }
    let index = header_positions(&split.header, &split.header_renames, schema).ok()?;
    if index.values().any(Option::is_some) {
        return None;
    }
    Some(format!(
        "{}: silver sends {} to the quarantine",
        foreign_header_text(&split.header, &schema.column_names()),
        match split.records.len() {
            1 => "its one record".to_string(),
            n => format!("all {n} records"),
        }
    ))
}

/// The JSON key a declared column reads first: its `path`'s first key
/// (`address` for `address.city`), else its whole name (a name with a dot
/// in it is one key, as silver reads it).
fn first_key(c: &SourceColumn) -> &str {
    match &c.path {
        Some(p) => p.split('.').next().unwrap_or(p),
        None => &c.name,
    }
}

/// The header names at positions no declared column binds (`index`: see
/// [`header_positions`]), in the header's order.
fn unbound_header(header: &[String], index: &HashMap<&str, Option<usize>>) -> Vec<String> {
    header
        .iter()
        .enumerate()
        .filter(|(i, _)| !index.values().any(|p| *p == Some(*i)))
        .map(|(_, h)| h.clone())
        .collect()
}

/// The file's columns that no declared column reads, in the file's order
/// (silver does not see them; a raw bronze keeps them in `raw_payload`):
/// - CSV: header names no declared column binds ([`header_positions`]);
///   none when the header binds no declared column or is ambiguous (every
///   record is quarantined then, and the batch log says why);
/// - JSON (and Kafka): the top-level keys of its records
///   ([`SplitFile::keys`]) no declared column binds by [`bind_name`] (a
///   column with a `path` binds its first key);
/// - Parquet: its column names, likewise.
///
/// Empty when the schema declares no column or the file has no record.
pub fn unread_columns(schema: &SourceSchema, split: &SplitFile) -> Vec<String> {
    if split.records.is_empty() || schema.columns.is_empty() {
        return vec![];
    }
    if split.format == SourceFormat::Csv {
        let Ok(index) = header_positions(&split.header, &split.header_renames, schema) else {
            return vec![];
        };
        if !index.values().any(Option::is_some) {
            return vec![];
        }
        return unbound_header(&split.header, &index);
    }
    let keys = match split.format {
        SourceFormat::Parquet => &split.header,
        _ => &split.keys,
    };
    keys.iter()
        .filter(|k| {
            !schema.columns.iter().any(|c| {
                matches!(
                    bind_name(std::iter::once((k.as_str(), k.as_str())), first_key(c), &c.name),
                    Ok(Some(_))
                )
            })
        })
        .cloned()
        .collect()
}

/// The batch log's note on [`unread_columns`] of a raw bronze: at most 20
/// names, then how many more.
pub fn unread_columns_note(unread: &[String], format: SourceFormat) -> String {
    let shown = unread.iter().take(20).cloned().collect::<Vec<_>>().join(", ");
    let more = match unread.len().saturating_sub(20) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    format!(
        "{} silver does not read (the declared schema lacks them; bronze keeps them in raw_payload): {shown}{more}",
        match format {
            SourceFormat::Csv | SourceFormat::Parquet => "columns",
            _ => "keys",
        }
    )
}

/// The batch log's note on [`absent_columns`]; `stored` for a typed bronze
/// (which stores NULL), else silver reads NULL.
pub fn absent_columns_note(absent: &[AbsentColumn], stored: bool) -> String {
    format!(
        "declared columns absent from this file ({}): {}",
        if stored {
            "stored as NULL"
        } else {
            "silver reads them as NULL"
        },
        absent
            .iter()
            .map(|a| match a.close.as_slice() {
                [] => a.column.clone(),
                close => format!(
                    "{} (the file has {}: the same name but for spaces, invisible characters or case)",
                    a.column,
                    close
                        .iter()
                        .map(|n| format!("{n:?}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Silver reading a typed bronze batch: the declared columns are already
/// typed (zones applied at ingest), so they are taken as stored, never
/// converted again; a column stored with another type than declared is read
/// from its text. A record with `_corrupt_record` goes to quarantine with its
/// reason. The lineage `raw_payload` is the corrupt text, or the row as a JSON object.
fn read_typed_batch(
    batch: &RecordBatch,
    schema: &SourceSchema,
    lineage: &mut [Vec<String>],
    rejected: &mut Vec<Rejected>,
) -> Result<ConvertedBatch> {
    let event_ids = string_column(batch, "_event_id")?;
    let batch_ids = string_column(batch, "_batch_id")?;
    let files = string_column(batch, "_source_file")?;
    let corrupt = string_column(batch, "_corrupt_record")?;
    let reasons = string_column(batch, "_corrupt_reason")?;
    let stored: Vec<ArrayRef> = schema
        .columns
        .iter()
        .map(|c| {
            batch.column_by_name(&c.name).cloned().ok_or_else(|| {
                crate::error::EngineError::Internal(format!("typed bronze lacks {}", c.name))
            })
        })
        .collect::<Result<_>>()?;
    let texts: Vec<ArrayRef> = stored
        .iter()
        .map(|col| Ok(datafusion::arrow::compute::cast(col, &DataType::Utf8)?))
        .collect::<Result<_>>()?;
    let texts: Vec<&StringArray> = texts
        .iter()
        .map(|a| a.as_any().downcast_ref::<StringArray>())
        .collect::<Option<_>>()
        .ok_or_else(|| crate::error::EngineError::Internal("cast to Utf8".into()))?;
    let mut text_cols = TextColumns::new(schema.columns.len());
    let mut readable = Vec::with_capacity(batch.num_rows());
    for row in 0..batch.num_rows() {
        readable.push(!corrupt.is_valid(row));
        if corrupt.is_valid(row) {
            rejected.push(Rejected {
                event_id: event_ids.value(row).to_string(),
                batch_id: batch_ids.value(row).to_string(),
                source_file: files.value(row).to_string(),
                raw_payload: corrupt.value(row).to_string(),
                rule_id: PARSE_RULE_ID.to_string(),
                reason: if reasons.is_valid(row) {
                    reasons.value(row).to_string()
                } else {
                    "corrupt record".to_string()
                },
            });
            continue;
        }
        let mut obj = serde_json::Map::new();
        let mut values = Vec::with_capacity(schema.columns.len());
        for (c, col) in schema.columns.iter().enumerate() {
            let v = texts[c]
                .is_valid(row)
                .then(|| texts[c].value(row).to_string());
            obj.insert(
                col.name.clone(),
                v.clone()
                    .map(serde_json::Value::String)
                    .unwrap_or(serde_json::Value::Null),
            );
            values.push(v);
        }
        text_cols.push(values);
        lineage[0].push(event_ids.value(row).to_string());
        lineage[1].push(batch_ids.value(row).to_string());
        lineage[2].push(files.value(row).to_string());
        lineage[3].push(serde_json::Value::Object(obj).to_string());
    }
    let n = readable.iter().filter(|r| **r).count();
    let readable = datafusion::arrow::array::BooleanArray::from(readable);
    let mut part = ConvertedBatch {
        arrays: Vec::with_capacity(schema.columns.len()),
        errors: vec![Vec::new(); n],
        read_as_utc: Vec::with_capacity(schema.columns.len()),
    };
    let text_cols = text_cols.finish();
    for (c, col) in schema.columns.iter().enumerate() {
        if stored[c].data_type() == &col.data_type.arrow_type() {
            part.arrays.push(datafusion::arrow::compute::filter(
                stored[c].as_ref(),
                &readable,
            )?);
            part.read_as_utc.push(Vec::new());
            continue;
        }
        let (array, read_as_utc) = convert_one(col, &text_cols[c], &mut part.errors)?;
        part.arrays.push(array);
        part.read_as_utc.push(read_as_utc);
    }
    Ok(part)
}

/// Why a CSV whose header shares no column with the schema is not read.
fn foreign_header_reason(header: &[String], schema: &SourceSchema) -> SourceError {
    SourceError::ForeignHeader {
        header: header.to_vec(),
        declared: schema.column_names(),
    }
}

/// The text of [`SourceError::ForeignHeader`], with a hint when the header
/// is one name holding another delimiter.
fn foreign_header_text(header: &[String], declared: &[String]) -> String {
    format!(
        "the file's header ({}) has none of the declared columns ({}){}",
        short_list(header),
        short_list(declared),
        match header {
            [one] if one.contains(';') =>
                "; the file looks ';'-separated: set the delimiter to ';' and ingest it again",
            [one] if one.contains('\t') =>
                "; the file looks tab-separated: set the delimiter to tab and ingest it again",
            _ => "",
        }
    )
}

/// Where each declared column is in a CSV header (see [`bind_name`]):
/// `header` holds the names the batch reads the columns by, `renames` the
/// file's own names where they differ ([`crate::bronze::map_header_names`]).
/// A declared name that matches two of the file's columns ignoring case
/// (`ÉMISSION` for `Émission` and `émission`, though the second is read as
/// `émission_2`) is an error naming both (the batch's rows are quarantined
/// with it), never a silent first pick.
fn header_positions<'a>(
    header: &[String],
    renames: &[HeaderRename],
    schema: &'a SourceSchema,
) -> std::result::Result<HashMap<&'a str, Option<usize>>, SourceError> {
    let names: Vec<(&str, &str)> = header
        .iter()
        .enumerate()
        .map(|(i, read)| {
            let own = renames
                .iter()
                .find(|r| r.position == i)
                .map_or(read.as_str(), |r| r.original.trim());
            (read.as_str(), own)
        })
        .collect();
    schema
        .columns
        .iter()
        .map(|c| {
            let pos = bind_name(names.iter().copied(), &c.name, &c.name)?;
            Ok((c.name.as_str(), pos))
        })
        .collect()
}

/// Which source column a declared `name` binds. `names` gives, per source
/// column, the name silver reads it by and the file's own name (the same
/// for JSON keys and Parquet columns; a CSV header name may be mapped, see
/// [`crate::bronze::map_header_names`]):
/// 1. the column read by exactly `name`, unless another column's name is
///    the same once both are in Unicode NFC (JSON keys `café` and `cafe` +
///    U+0301, which look alike: an error naming both; CSV and Parquet names
///    are mapped apart, `café` and `café_2`, so never there);
/// 2. else the one column whose own name is exactly `name`;
/// 3. else the one column read by `name` once both are in NFC (a declared
///    `café` binds a JSON key `cafe` + U+0301);
/// 4. else the one column whose name (either) equals `name` ignoring case,
///    for every script, under NFC ([`crate::bronze::same_name_ignoring_case`],
///    as Spark's resolver, Java's `equalsIgnoreCase`, compares).
///
/// Two or more columns at step 1, 3 or 4: an error naming them and the
/// declared column `column`, never a silent first pick.
fn bind_name<'n>(
    names: impl Iterator<Item = (&'n str, &'n str)>,
    name: &str,
    column: &str,
) -> std::result::Result<Option<usize>, SourceError> {
    let names: Vec<(&str, &str)> = names.collect();
    let composed = crate::bronze::nfc(name);
    let same_nfc: Vec<usize> = (0..names.len())
        .filter(|i| {
            names
                .get(*i)
                .is_some_and(|(read, _)| crate::bronze::nfc(read) == composed)
        })
        .collect();
    if let Some(i) = names.iter().position(|(read, _)| *read == name) {
        return match same_nfc.as_slice() {
            [_, _, ..] => Err(ambiguous(&names, &same_nfc, column, true)),
            _ => Ok(Some(i)),
        };
    }
    let own: Vec<usize> = (0..names.len())
        .filter(|i| names.get(*i).is_some_and(|(_, own)| *own == name))
        .collect();
    if let [i] = own.as_slice() {
        return Ok(Some(*i));
    }
    match same_nfc.as_slice() {
        [i] => return Ok(Some(*i)),
        [_, _, ..] => return Err(ambiguous(&names, &same_nfc, column, true)),
        [] => {}
    }
    let folded: Vec<usize> = (0..names.len())
        .filter(|i| {
            names.get(*i).is_some_and(|(read, own)| {
                same_name_ignoring_case(read, name) || same_name_ignoring_case(own, name)
            })
        })
        .collect();
    match folded.as_slice() {
        [] => Ok(None),
        [i] => Ok(Some(*i)),
        _ => Err(ambiguous(&names, &folded, column, false)),
    }
}

/// The error of a declared `column` that binds the source columns `found`
/// of `names` (see [`bind_name`]); `nfc`: they are equal once in Unicode
/// NFC, else ignoring case. A name that is not in NFC or holds invisible
/// characters is shown escaped (`"cafe\u{301}"`), as it would look like
/// the other.
fn ambiguous(names: &[(&str, &str)], found: &[usize], column: &str, nfc: bool) -> SourceError {
    SourceError::AmbiguousName {
        column: column.to_string(),
        names: found
            .iter()
            .filter_map(|i| names.get(*i))
            .map(|(read, own)| (own.to_string(), read.to_string()))
            .collect(),
        nfc,
    }
}

/// The text of [`SourceError::AmbiguousName`].
fn ambiguous_text(column: &str, names: &[(String, String)], nfc: bool) -> String {
    // A character that an invisible one, or that NFC replaces (the Kelvin
    // sign U+212A is K), is written as its code point: the two names would
    // look the same otherwise ("Kg" and "Kg").
    let show = |n: &str| {
        let mut out = String::from("\"");
        for c in n.chars() {
            let own = c.to_string();
            if crate::bronze::is_invisible_in_names(c) || crate::bronze::nfc(&own) != own.as_str() {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            } else {
                out.extend(c.escape_debug());
            }
        }
        out.push('"');
        out
    };
    let (how, then) = if nfc {
        (
            "that are one name in Unicode normalization form C (they look alike)",
            "which one is meant cannot be told, so the record is not read",
        )
    } else {
        (
            "ignoring case",
            "declare it with the exact name of one of them",
        )
    };
    format!(
        "declared column {column} matches {} source names {how}: {}; {then}",
        names.len(),
        names
            .iter()
            .map(|(own, read)| if read == own {
                show(own)
            } else {
                format!("{} (read as {read})", show(own))
            })
            .collect::<Vec<_>>()
            .join(" and ")
    )
}

/// A JSON object's members, each value as its exact text (a key given twice
/// keeps its last value, as serde_json, Spark and most JSON readers do).
pub(crate) type RawObject<'a> = std::collections::BTreeMap<String, &'a RawValue>;

/// `text` as a JSON object with raw values, if it is one.
pub(crate) fn raw_object(text: &str) -> std::result::Result<RawObject<'_>, SourceError> {
    match text.trim_start().as_bytes().first() {
        Some(b'{') => serde_json::from_str(text).map_err(SourceError::json),
        _ => Err(SourceError::NotAnObject),
    }
}

/// The key of `obj` that `name` binds, and its value (see [`bind_name`]).
pub(crate) fn json_key<'o, 'a>(
    obj: &'o RawObject<'a>,
    name: &str,
    column: &str,
) -> std::result::Result<Option<(&'o String, &'a RawValue)>, SourceError> {
    // ASCII name and keys (nearly every file): NFC changes none of them, so
    // `bind_name` comes down to the exact key, else the one key equal
    // ignoring ASCII case; two such keys go on to it for their error. One
    // pass, nothing allocated: this runs per record and declared column.
    if name.is_ascii() && obj.keys().all(|k| k.is_ascii()) {
        if let Some((k, v)) = obj.get_key_value(name) {
            return Ok(Some((k, *v)));
        }
        let mut folded = obj.iter().filter(|(k, _)| k.eq_ignore_ascii_case(name));
        match (folded.next(), folded.next()) {
            (None, _) => return Ok(None),
            (Some((k, v)), None) => return Ok(Some((k, *v))),
            _ => {}
        }
    }
    if let Some((k, v)) = obj.get_key_value(name) {
        // Another key equal to it in NFC is an error (see `bind_name`).
        let composed = crate::bronze::nfc(name);
        if !obj
            .keys()
            .any(|o| o != k && crate::bronze::nfc(o) == composed)
        {
            return Ok(Some((k, *v)));
        }
    }
    let found = bind_name(obj.keys().map(|k| (k.as_str(), k.as_str())), name, column)?;
    Ok(found.and_then(|i| obj.iter().nth(i)).map(|(k, v)| (k, *v)))
}

/// The text silver reads from a JSON value: a string's characters, `null`
/// as NULL, anything else (numbers, booleans, nested objects and arrays)
/// exactly as the record writes it, so `12345678901234567890.10` keeps
/// every digit and `[{"qty": 2.00}]` its zeros (a `serde_json::Value`
/// would hold numbers as `f64`).
pub(crate) fn raw_text(v: &RawValue) -> std::result::Result<Option<String>, SourceError> {
    let text = v.get().trim();
    match text.as_bytes().first() {
        Some(b'"') => serde_json::from_str::<String>(text).map(Some).map_err(|e| {
            SourceError::InvalidJsonString {
                text: text.to_string(),
                message: e.to_string(),
            }
        }),
        _ if text == "null" => Ok(None),
        _ => Ok(Some(text.to_string())),
    }
}

/// "a, b, c, d, e, … (18)" for messages.
fn short_list(items: &[String]) -> String {
    if items.len() <= 5 {
        items.join(", ")
    } else {
        format!("{}, … ({} in all)", items[..5].join(", "), items.len())
    }
}

fn string_column<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a StringArray> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_any().downcast_ref::<StringArray>())
        .ok_or_else(|| {
            crate::error::EngineError::Internal(format!("bronze column {name} missing or not Utf8"))
        })
}

fn default_dialect() -> CsvDialect {
    CsvDialect {
        delimiter: ',',
        quote: '"',
        escape: None,
        has_header: true,
        skip_rows: 0,
        null_tokens: vec![String::new()],
        decimal_separator: '.',
        detected: vec![],
    }
}

/// One JSON payload → the declared columns' texts (see [`raw_text`]):
/// strings are taken as they are, numbers, booleans and nested values by
/// their exact JSON text, `null` as NULL. A column with a `path` walks
/// nested objects; a `null` on the way is a missing value (NULL).
fn read_json_record(
    raw: &str,
    schema: &SourceSchema,
    seen: &mut [bool],
) -> std::result::Result<Vec<Option<String>>, SourceError> {
    let obj = raw_object(raw)?;
    let field = |c: &SourceColumn| -> std::result::Result<Option<Option<String>>, SourceError> {
        // The keys after the first, for a column with a path.
        let parts = c.path.as_deref().map(|p| p.split('.').skip(1)).into_iter().flatten();
        let Some((_, mut v)) = json_key(&obj, first_key(c), &c.name)? else {
            return Ok(None);
        };
        for p in parts {
            match v.get().trim_start().as_bytes().first() {
                Some(b'{') => {
                    let nested = raw_object(v.get())?;
                    match json_key(&nested, p, &c.name)? {
                        Some((_, inner)) => v = inner,
                        None => return Ok(None),
                    }
                }
                Some(b'n') => return Ok(Some(None)),
                _ => return Ok(None),
            }
        }
        raw_text(v).map(Some)
    };
    let values = schema
        .columns
        .iter()
        .map(field)
        .collect::<std::result::Result<Vec<_>, SourceError>>()?;
    if values.iter().all(Option::is_none) {
        return Err(SourceError::NoDeclaredColumns {
            columns: schema.column_names(),
        });
    }
    Ok(values
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            let v = v?;
            seen[i] = true;
            v
        })
        .collect())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::bronze::{bronze_batch, split_file, Audit};
    use proptest::prelude::*;

    #[test]
    fn a_column_two_keys_bind_is_not_called_absent() {
        let schema = SourceSchema::new(&[("id", ColumnType::String), ("AMOUNT", ColumnType::String)]);
        let split = split_file(b"{\"id\":\"1\",\"Amount\":\"1\",\"amount\":\"2\"}\n", &Default::default()).unwrap();
        assert_eq!(absent_columns(&schema, &split), vec![]);
        let split = split_file(b"{\"id\":\"1\",\"total\":\"1\"}\n", &Default::default()).unwrap();
        assert_eq!(
            absent_columns(&schema, &split),
            vec![AbsentColumn { column: "AMOUNT".into(), close: vec![] }]
        );
    }

    #[test]
    fn names_that_would_look_alike_in_an_ambiguity_are_written_with_code_points() {
        let names = |list: &[&str]| list.iter().map(|n| (n.to_string(), n.to_string())).collect::<Vec<_>>();
        assert_eq!(
            ambiguous_text("Kg", &names(&["Kg", "\u{212A}g"]), true),
            "declared column Kg matches 2 source names that are one name in Unicode normalization form C (they look alike): \"Kg\" and \"\\u{212a}g\"; which one is meant cannot be told, so the record is not read"
        );
        assert_eq!(
            ambiguous_text("café", &names(&["café", "cafe\u{301}", "ca\u{200B}fé"]), true)
                .split(": ")
                .nth(1)
                .unwrap(),
            "\"café\" and \"cafe\\u{301}\" and \"ca\\u{200b}fé\"; which one is meant cannot be told, so the record is not read"
        );
    }

    proptest! {
        /// The ASCII shortcut of `json_key` binds what `bind_name` binds, or
        /// gives its error: random ASCII keys (some equal to the name in
        /// another case) and names.
        #[test]
        fn json_key_for_ascii_names_binds_as_bind_name_does(
            keys in proptest::collection::vec("[a-cA-C_]{1,3}", 0..6),
            name in "[a-cA-C_]{1,3}",
        ) {
            let raw: Vec<Box<RawValue>> = keys.iter().map(|_| RawValue::from_string("1".into()).unwrap()).collect();
            let obj: RawObject = keys.iter().cloned().zip(raw.iter().map(|r| &**r)).collect();
            let fast = json_key(&obj, &name, &name).map(|f| f.map(|(k, _)| k.clone()));
            let slow = bind_name(obj.keys().map(|k| (k.as_str(), k.as_str())), &name, &name)
                .map(|f| f.and_then(|i| obj.keys().nth(i)).cloned());
            prop_assert_eq!(fast, slow, "{:?} {:?}", obj.keys().collect::<Vec<_>>(), name);
        }
    }

    /// One bronze batch (`b1`) of `text` as file `file`, split as ingest splits it.
    pub(crate) fn batch_of(text: &str, file: &str) -> (BatchInfo, RecordBatch) {
        let split = split_file(text.as_bytes(), &Default::default()).unwrap();
        let ids: Vec<String> = (0..split.records.len()).map(|i| format!("e{i}")).collect();
        let rb = bronze_batch(
            &split.records,
            Audit {
                ingest_ts_micros: 0,
                source_system: "test",
                source_file: file,
                source_files: vec![],
                producer_ts: vec![],
                batch_id: "b1",
                event_ids: ids.into(),
            },
        )
        .unwrap();
        let info = BatchInfo {
            batch_id: "b1".into(),
            table: "t".into(),
            source_system: "test".into(),
            file_name: file.into(),
            format: split.format,
            dialect: split.dialect.clone(),
            encoding: split.encoding.clone(),
            header: split.header.clone(),
            header_text: split.header_text.clone(),
            header_renames: split.header_renames.clone(),
            skipped_lines: split.skipped.clone(),
            records: split.records.len(),
            dropped_records: 0,
            mode: Default::default(),
            corrupt_records: 0,
            warned_records: 0,
            read_as_utc: vec![],
            erased_records: 0,
            superseded_by: None,
            bytes: text.len(),
            sha256: String::new(),
            ingest_ts_micros: 0,
            path: String::new(),
            landing_path: None,
            options: Default::default(),
            version: 1,
            notes: vec![],
        };
        (info, rb)
    }

    #[test]
    fn bad_values_are_rejected_with_column_and_value() {
        let schema = SourceSchema::new(&[
            ("id", ColumnType::Bigint),
            ("qty", ColumnType::Int),
            ("note", ColumnType::String),
        ]);
        let parsed = parse_bronze(
            &schema,
            &[batch_of(
                "id,qty,note\n1,2,a\n2,three,b\n3,,c\n4,5\n",
                "f.csv",
            )],
        )
        .unwrap();
        assert_eq!(parsed.rows.num_rows(), 2);
        let reasons: Vec<_> = parsed
            .rejected
            .iter()
            .map(|r| (r.event_id.as_str(), r.reason.as_str()))
            .collect();
        assert_eq!(
            reasons,
            [
                ("e3", "2 fields, the header has 3"),
                ("e1", "qty: 'three' is not INT")
            ]
        );
        // the empty qty of id 3 is a missing value, not an error
        let qty = parsed.rows.column_by_name("qty").unwrap();
        assert!(qty.is_null(1));
    }

    #[test]
    fn a_declared_name_binds_the_exact_name_else_one_name_ignoring_case() {
        let names = ["Qty", "qty", "Note"];
        let bind =
            |n: &str| bind_name(names.iter().map(|n| (*n, *n)), n, n).map_err(|e| e.to_string());
        assert_eq!(bind("qty"), Ok(Some(1)));
        assert_eq!(bind("NOTE"), Ok(Some(2)));
        assert_eq!(bind("id"), Ok(None));
        assert_eq!(
            bind("QTY"),
            Err("declared column QTY matches 2 source names ignoring case: \"Qty\" and \"qty\"; declare it with the exact name of one of them".to_string())
        );
        // A header given with such names (not mapped by the splitter) is refused for the batch.
        let schema = SourceSchema::new(&[("QTY", ColumnType::Int)]);
        assert!(header_positions(&["Qty".into(), "qty".into()], &[], &schema).is_err());
        let (mut info, rb) = batch_of("a,b\n1,2\n", "f.csv");
        info.header = vec!["Qty".into(), "qty".into()];
        let parsed = parse_bronze(&schema, &[(info, rb)]).unwrap();
        assert_eq!(parsed.rows.num_rows(), 0);
        assert!(parsed.rejected[0]
            .reason
            .starts_with("declared column QTY matches 2"));
    }

    #[test]
    fn a_declared_name_matching_two_file_names_ignoring_case_is_an_error_in_any_script() {
        // The file's own names count, though the second is read as émission_2.
        let split = split_file(
            "id,Émission,émission\n1,5,6\n".as_bytes(),
            &Default::default(),
        )
        .unwrap();
        assert_eq!(split.header, ["id", "Émission", "émission_2"]);
        let positions = |name: &str| {
            let schema = SourceSchema::new(&[(name, ColumnType::Int)]);
            header_positions(&split.header, &split.header_renames, &schema)
                .map(|index| index.get(name).copied().flatten())
                .map_err(|e| e.to_string())
        };
        assert_eq!(
            positions("ÉMISSION"),
            Err("declared column ÉMISSION matches 2 source names ignoring case: \"Émission\" and \"émission\" (read as émission_2); declare it with the exact name of one of them".to_string())
        );
        assert_eq!(positions("Émission"), Ok(Some(1)));
        assert_eq!(positions("émission"), Ok(Some(2)));
        assert_eq!(positions("émission_2"), Ok(Some(2)));
        assert_eq!(positions("ID"), Ok(Some(0)));
        // JSON keys and nested paths alike.
        let names = ["Émission", "émission"];
        assert!(bind_name(names.iter().map(|n| (*n, *n)), "ÉMISSION", "e").is_err());
        let schema = SourceSchema {
            columns: vec![SourceColumn::new("e", ColumnType::Int).at("after.ÉMISSION")],
        };
        let mut seen = [false];
        assert!(read_json_record(
            "{\"after\":{\"Émission\":1,\"émission\":2}}",
            &schema,
            &mut seen
        )
        .unwrap_err()
        .to_string()
        .contains("\"Émission\" and \"émission\""));
    }

    #[test]
    fn json_values_are_read_with_their_exact_text() {
        let schema = SourceSchema::new(&[
            ("amount", ColumnType::String),
            ("big", ColumnType::String),
            ("lines", ColumnType::String),
            ("s", ColumnType::String),
            ("n", ColumnType::String),
        ]);
        let mut seen = [false; 5];
        let values = read_json_record(
            "{\"amount\": 12345678901234567890.10, \"big\": 9007199254740993, \"lines\": [ {\"qty\": 2.00,\"p\":1e2} ], \"s\": \"a\\\"b\\u00e9\", \"n\": null, \"big\": 9007199254740995}",
            &schema,
            &mut seen,
        )
        .unwrap();
        assert_eq!(
            values,
            [
                Some("12345678901234567890.10".to_string()),
                Some("9007199254740995".to_string()),
                Some("[ {\"qty\": 2.00,\"p\":1e2} ]".to_string()),
                Some("a\"bé".to_string()),
                None
            ]
        );
        // Paths walk nested objects as written; a null on the way is NULL.
        let schema = SourceSchema {
            columns: vec![
                SourceColumn::new("price", ColumnType::String).at("after.price"),
                SourceColumn::new("lsn", ColumnType::String).at("source.lsn"),
            ],
        };
        let mut seen = [false; 2];
        assert_eq!(
            read_json_record(
                "{\"after\": {\"price\": 0.10000000000000000001}, \"source\": null}",
                &schema,
                &mut seen
            )
            .unwrap(),
            [Some("0.10000000000000000001".to_string()), None]
        );
        // Typed: a DECIMAL(38,2) and a BIGINT keep every digit.
        let schema = SourceSchema::new(&[
            (
                "amount",
                ColumnType::Decimal {
                    precision: 38,
                    scale: 2,
                },
            ),
            ("big", ColumnType::Bigint),
        ]);
        let parsed = parse_bronze(
            &schema,
            &[batch_of(
                "{\"amount\": 12345678901234567890.10, \"big\": 9007199254740993}\n",
                "f.jsonl",
            )],
        )
        .unwrap();
        let amount = parsed.rows.column_by_name("amount").unwrap();
        let amount = datafusion::arrow::compute::cast(amount, &DataType::Utf8).unwrap();
        let amount = amount.as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(amount.value(0), "12345678901234567890.10");
        let big = parsed.rows.column_by_name("big").unwrap();
        let big = big
            .as_any()
            .downcast_ref::<datafusion::arrow::array::Int64Array>()
            .unwrap();
        assert_eq!(big.value(0), 9007199254740993);
    }

    #[test]
    fn flagged_csv_payloads_are_not_parsed_with_the_others() {
        let schema = SourceSchema::new(&[("a", ColumnType::String), ("b", ColumnType::Int)]);
        let parsed =
            parse_bronze(&schema, &[batch_of("a,b\n\"x,1\n\"y\",2\nz,3\n", "f.csv")]).unwrap();
        let a = parsed.rows.column_by_name("a").unwrap();
        let a = a.as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!((a.value(0), a.value(1)), ("y", "z"));
        assert_eq!(parsed.rejected.len(), 1);
        assert!(parsed.rejected[0]
            .reason
            .starts_with("unterminated quote in field 1 (a)"));
    }

    #[test]
    fn typed_records_list_keys_no_declared_column_binds() {
        let schema = SourceSchema::new(&[("id", ColumnType::Int), ("qty", ColumnType::Int)]);
        let split = split_file(b"{\"id\":1,\"Qty\":1,\"qty\":2}\n", &Default::default()).unwrap();
        let typed = type_records(&schema, &split).unwrap();
        assert_eq!(typed.undeclared, ["Qty"]);
        assert_eq!(typed.reasons, [None]);
        let split = split_file(b"id, qty ,qty\n1,2,3\n", &Default::default()).unwrap();
        let typed = type_records(&schema, &split).unwrap();
        assert_eq!(typed.undeclared, ["qty_2"]);
    }

    #[test]
    fn json_lines_and_missing_columns() {
        let schema = SourceSchema::new(&[("id", ColumnType::Bigint), ("fee", ColumnType::Double)]);
        let parsed = parse_bronze(
            &schema,
            &[batch_of(
                "{\"id\": 1}\n{\"id\": \"2\"}\n[1]\n{oops\n",
                "f.jsonl",
            )],
        )
        .unwrap();
        assert_eq!(parsed.rows.num_rows(), 2);
        assert_eq!(parsed.rejected[0].reason, "not a JSON object: an array [1]");
        assert_eq!(
            parsed.rejected[1].reason,
            "invalid JSON at byte 27 (line 4, column 2): key must be a string"
        );
        assert_eq!(
            parsed.missing,
            [MissingColumn {
                column: "fee".into(),
                batches_without: 1,
                batches_total: 1
            }]
        );
    }

    #[test]
    fn a_zone_on_a_date_column_names_the_column_and_its_type() {
        let col = SourceColumn::new("pickup_date", ColumnType::Date).zoned(
            "Europe/Berlin",
            AmbiguousTime::default(),
            NonexistentTime::default(),
        );
        let e = validate_column(&col).unwrap_err();
        assert_eq!(
            e,
            SourceError::ZoneNotOnTimestamp {
                column: "pickup_date".into(),
                data_type: ColumnType::Date,
            }
        );
        assert_eq!(
            e.to_string(),
            "column pickup_date: a time_zone (and ambiguous / nonexistent) applies to TIMESTAMP columns only, and pickup_date is DATE"
        );
    }
}
