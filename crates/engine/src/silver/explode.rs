//! Exploding a JSON array of each bronze record into a child silver table:
//! one row per array element, keyed by the parent's columns and the
//! element's position (Spark's `posexplode` / `posexplode_outer`, Databricks'
//! `explode` over `from_json`; seed 003 §4: nested data is flattened in
//! silver, typed and checked like any column).
//!
//! A silver table whose definition has an [`ExplodeSpec`] does not read its
//! bronze table with the declared source schema; it reads, from each raw
//! JSON record, the parent columns (declared columns of the bronze table,
//! with their types, paths and formats), the array at [`ExplodeSpec::path`]
//! and each element's declared fields ([`ExplodeSpec::columns`]), converted
//! exactly by [`crate::silver::convert`] (numbers are taken as written: `2.00` stays
//! `2.00`). What comes out has the shape of [`crate::silver::source::Parsed`], so
//! the table's rules, select list, merge and gold work on it as on any silver
//! table, and its rows keep the parent record's lineage (`_event_id`,
//! `_batch_id`, `_source_file`, `raw_payload`); the position tells the
//! elements of one record apart.
//!
//! What goes to `silver.quarantine` (rule `parse`, with the parent record's
//! lineage):
//! - a whole record that cannot be read: flagged corrupt at ingest, not a
//!   JSON object, the array path holding something else than an array
//!   (`lines is not an array: "oops"`), or a parent column that does not
//!   convert (`order_id: ...`). One quarantine row per record.
//! - one element: not an object (`lines[1] is not an object: 5`), or a
//!   field that does not convert (`lines[1].qty: 'three' is not INT`). The
//!   record's other elements are rows of the table.
//!
//! Whether a record's array was an empty array, JSON `null` or absent is
//! counted in [`ExplodeStats`] (shown on the table's card and in the
//! reconciliation check), and with [`ExplodeSpec::state_column`] set, every
//! row says it (`array`, `empty`, `null`, `missing`; the last three only on
//! the rows an outer explode adds).
//!
//! Reconciliation of a child table (check `Reconciliation`): its rows are
//! elements, not records, so it checks `exploded rows = silver + open
//! quarantine + removed by merge`, where exploded rows are the elements of
//! every readable record, plus one row per record without elements when the
//! explode is outer, plus one per unreadable record ([`ExplodeStats::rows`]).

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, Int32Array, RecordBatch, StringArray, StringBuilder, UInt32Array,
};
use datafusion::arrow::compute::take;
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use serde_json::value::RawValue;

use crate::bronze::{same_name_ignoring_case, BatchInfo};
use crate::error::EngineError;
use crate::model::{BronzeMode, BronzeTableDef, SilverTableDef};
use crate::silver::source::{
    json_key, raw_text, ArrowColumnType, Parsed, RawObject, ReadAsUtc, Rejected, SourceColumn,
    SourceError, LINEAGE_COLUMNS, PARSE_RULE_ID,
};

pub use medallion_protocol::explode::{ExplodeSpec, ExplodeStats};

/// Why a child table cannot be exploded from its bronze table (a
/// definition problem: a pipeline diagnostic), or why one record or one
/// element of its array cannot be read (its quarantine reason, rule
/// [`PARSE_RULE_ID`]; element reasons name the element, `lines[1]`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExplodeError {
    /// Silver table `silver` reads bronze table `bronze`, which does not exist.
    #[error("silver.{silver} reads bronze.{bronze}, which does not exist")]
    NoBronzeTable { silver: String, bronze: String },
    /// Silver table `silver` cannot explode its bronze table.
    #[error("silver.{silver} explode: {error}")]
    InTable {
        silver: String,
        #[source]
        error: Box<ExplodeError>,
    },
    /// The array `path` has an empty step (`a..b`).
    #[error(
        "path {path:?} must name the array's key (dot-separated for nested objects: order.lines)"
    )]
    EmptyPathStep { path: String },
    /// The bronze table stores typed rows (`mode`), not the records' JSON text.
    #[error("explode reads the JSON text of raw bronze records, but bronze.{bronze} is stored typed ({}); switch it to raw", .mode.label())]
    TypedBronze { bronze: String, mode: BronzeMode },
    /// A parent `column` that bronze table `bronze` does not declare.
    #[error("parent column {column} is not declared in bronze.{bronze} (declared: {})", .declared.join(", "))]
    UnknownParent {
        column: String,
        bronze: String,
        declared: Vec<String>,
    },
    /// A parent, position, state or element column with an empty name.
    #[error("a column name is empty")]
    EmptyName,
    /// A `column` named as engine column `reserved` (ignoring case), which is `meaning`.
    #[error("{column} is a reserved name ({reserved} is {meaning}); name the column otherwise (an element key of that name is read with \"path\": \"{column}\")")]
    ReservedName {
        column: String,
        reserved: &'static str,
        meaning: &'static str,
    },
    /// Two of the table's columns are both named `column` (ignoring case).
    #[error("column {column} is named twice (parent, position, state and element columns need distinct names)")]
    NamedTwice { column: String },
    /// A bronze batch without its lineage or payload `column`.
    #[error("bronze column {column} missing")]
    NoBronzeColumn { column: String },
    /// Arrow failed assembling the rows (its message).
    #[error("{0}")]
    Arrow(String),
    /// A declared column's values could not be converted (a declaration problem).
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The record was flagged at ingest (`_corrupt_reason`), with this reason.
    #[error("{0}")]
    Corrupt(String),
    /// The record looks like a JSON object but cannot be read as one.
    #[error("the record is not a readable JSON object")]
    UnreadableObject,
    /// The record is JSON, but not an object (`value`, cut after 40 characters).
    #[error("the record is not a JSON object: {value}")]
    NotAnObject { value: String },
    /// On the way along a path, `walked` holds `value`, which is no object.
    #[error("{walked} is {value}, not an object")]
    StepNotObject { walked: String, value: String },
    /// The array at `path` holds `value`, which is no array.
    #[error("{path} is not an array: {value}")]
    NotAnArray { path: String, value: String },
    /// The array at `path` does not parse (the parser's message).
    #[error("{path}: {message}")]
    ArrayJson { path: String, message: String },
    /// Parent `column`'s value cannot be read.
    #[error("{column}: {error}")]
    ParentValue {
        column: String,
        #[source]
        error: SourceError,
    },
    /// The record is no JSON, or a key matches several keys ignoring case.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// Element `pos` of the array at `path` is no object (`value`) and a
    /// column reads a key of it.
    #[error("{path}[{pos}] is not an object: {value}")]
    ElementNotObject {
        path: String,
        pos: usize,
        value: String,
    },
    /// In element `pos` of the array at `path`, `walked` holds `value`, no object.
    #[error("{path}[{pos}].{walked} is {value}, not an object")]
    ElementStep {
        path: String,
        pos: usize,
        walked: String,
        value: String,
    },
    /// In element `pos` of the array at `path`, a key matches several keys.
    #[error("{path}[{pos}]: {error}")]
    ElementKey {
        path: String,
        pos: usize,
        #[source]
        error: SourceError,
    },
    /// In element `pos` of the array at `path`, `column`'s value cannot be read.
    #[error("{path}[{pos}].{column}: {error}")]
    ElementValue {
        path: String,
        pos: usize,
        column: String,
        #[source]
        error: SourceError,
    },
}

impl From<datafusion::arrow::error::ArrowError> for ExplodeError {
    fn from(e: datafusion::arrow::error::ArrowError) -> Self {
        ExplodeError::Arrow(e.to_string())
    }
}

impl From<ExplodeError> for EngineError {
    fn from(e: ExplodeError) -> Self {
        EngineError::Request(e.to_string())
    }
}

/// A child table's input rows and what was read.
pub(crate) struct Exploded {
    pub parsed: Parsed,
    pub stats: ExplodeStats,
}

/// What a record held at the array's path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ArrayState {
    Array,
    Empty,
    Null,
    Missing,
}

impl ArrayState {
    fn label(self) -> &'static str {
        match self {
            ArrayState::Array => "array",
            ArrayState::Empty => "empty",
            ArrayState::Null => "null",
            ArrayState::Missing => "missing",
        }
    }
}

/// The rows of silver table `s` when it explodes an array (None: it does
/// not). `batches` are the bronze batches to read (all of them, or an
/// incremental run's new ones). An error is a definition problem, for a
/// pipeline diagnostic.
pub(crate) fn for_silver(
    s: &SilverTableDef,
    bronze: Option<&BronzeTableDef>,
    batches: &[(BatchInfo, RecordBatch)],
) -> Option<Result<Exploded, ExplodeError>> {
    let spec = s.explode.as_ref()?;
    let Some(bronze) = bronze else {
        return Some(Err(ExplodeError::NoBronzeTable {
            silver: s.name.clone(),
            bronze: s.source.clone(),
        }));
    };
    Some(
        explode_bronze(spec, bronze, batches).map_err(|e| ExplodeError::InTable {
            silver: s.name.clone(),
            error: Box::new(e),
        }),
    )
}

/// Checks the spec against the bronze table; returns the parent columns' definitions.
fn check_spec<'a>(
    spec: &ExplodeSpec,
    bronze: &'a BronzeTableDef,
) -> Result<Vec<&'a SourceColumn>, ExplodeError> {
    if spec.path.split('.').any(|p| p.trim().is_empty()) {
        return Err(ExplodeError::EmptyPathStep {
            path: spec.path.clone(),
        });
    }
    if bronze.mode.is_typed() {
        return Err(ExplodeError::TypedBronze {
            bronze: bronze.name.clone(),
            mode: bronze.mode,
        });
    }
    let parents = spec
        .parent_columns
        .iter()
        .map(|name| {
            bronze
                .schema
                .columns
                .iter()
                .find(|c| c.name == *name)
                .ok_or_else(|| ExplodeError::UnknownParent {
                    column: name.clone(),
                    bronze: bronze.name.clone(),
                    declared: bronze.schema.column_names(),
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut names: Vec<&str> = spec.parent_columns.iter().map(String::as_str).collect();
    names.push(&spec.position_column);
    names.extend(spec.state_column.as_deref());
    names.extend(spec.columns.iter().map(|c| c.name.as_str()));
    // Distinct ignoring case in every script (DataFusion and Spark resolve
    // column names ignoring case).
    let mut seen: Vec<&str> = Vec::new();
    for n in names {
        if n.trim().is_empty() {
            return Err(ExplodeError::EmptyName);
        }
        if let Some((reserved, meaning)) = crate::bronze::reserved_column(n) {
            return Err(ExplodeError::ReservedName {
                column: n.to_string(),
                reserved,
                meaning,
            });
        }
        if seen.iter().any(|s| same_name_ignoring_case(s, n)) {
            return Err(ExplodeError::NamedTwice {
                column: n.to_string(),
            });
        }
        seen.push(n);
    }
    Ok(parents)
}

/// Explodes the array of every record of `batches` (see the module doc).
fn explode_bronze(
    spec: &ExplodeSpec,
    bronze: &BronzeTableDef,
    batches: &[(BatchInfo, RecordBatch)],
) -> Result<Exploded, ExplodeError> {
    let parents = check_spec(spec, bronze)?;
    let mut stats = ExplodeStats::default();
    // Per readable record: lineage, parent texts, state, elements.
    let mut records: Vec<Record> = Vec::new();
    let mut rejected: Vec<Rejected> = Vec::new();
    for (_, batch) in batches {
        let s = |name: &str| {
            batch
                .column_by_name(name)
                .and_then(|c| c.as_any().downcast_ref::<StringArray>())
                .ok_or_else(|| ExplodeError::NoBronzeColumn {
                    column: name.to_string(),
                })
        };
        let (payloads, events, batch_ids, files) = (
            s("raw_payload")?,
            s("_event_id")?,
            s("_batch_id")?,
            s("_source_file")?,
        );
        let corrupt = s("_corrupt_reason").ok();
        for row in 0..batch.num_rows() {
            stats.records += 1;
            let lineage = [events, batch_ids, files, payloads].map(|a| a.value(row).to_string());
            let read = match corrupt.filter(|c| c.is_valid(row)) {
                Some(c) => Err(ExplodeError::Corrupt(c.value(row).to_string())),
                None => read_record(payloads.value(row), spec, &parents),
            };
            match read {
                Ok((parent, state, elements)) => records.push(Record {
                    lineage,
                    parent,
                    state,
                    elements,
                }),
                Err(reason) => {
                    stats.unreadable += 1;
                    rejected.push(rejection(&lineage, reason.to_string()));
                }
            }
        }
    }

    // Parent columns, converted once per record; a record whose parent
    // value does not convert is quarantined whole.
    // Their values read as UTC are counted on the bronze table already.
    let (parent_typed, parent_errors, _) = convert(
        parents.iter().copied(),
        records.iter().map(|r| r.parent.as_slice()),
        records.len(),
    )?;
    let mut record_of_row: Vec<u32> = Vec::new();
    let mut positions: Vec<Option<i32>> = Vec::new();
    let mut states: Vec<&'static str> = Vec::new();
    let mut texts: Vec<Vec<Option<String>>> = Vec::new();
    let mut row_lineage: Vec<usize> = Vec::new();
    for (i, r) in records.iter().enumerate() {
        if !parent_errors[i].is_empty() {
            stats.unreadable += 1;
            rejected.push(rejection(&r.lineage, parent_errors[i].join("; ")));
            continue;
        }
        match r.state {
            ArrayState::Array => {
                stats.with_elements += 1;
                stats.elements += r.elements.len();
            }
            ArrayState::Empty => stats.empty += 1,
            ArrayState::Null => stats.null += 1,
            ArrayState::Missing => stats.missing += 1,
        }
        if r.elements.is_empty() {
            if spec.outer {
                record_of_row.push(i as u32);
                positions.push(None);
                states.push(r.state.label());
                texts.push(vec![None; spec.columns.len()]);
                row_lineage.push(i);
            }
            continue;
        }
        for (pos, e) in r.elements.iter().enumerate() {
            match e {
                Ok(values) => {
                    record_of_row.push(i as u32);
                    positions.push(Some(pos as i32));
                    states.push(r.state.label());
                    texts.push(values.clone());
                    row_lineage.push(i);
                }
                Err(reason) => rejected.push(rejection(&r.lineage, reason.to_string())),
            }
        }
    }
    stats.rows = stats.elements
        + stats.unreadable
        + if spec.outer {
            stats.empty + stats.null + stats.missing
        } else {
            0
        };

    // Element columns, converted per row; a value that does not convert
    // quarantines that element only.
    let (element_typed, element_errors, element_utc) = convert(
        spec.columns.iter(),
        texts.iter().map(Vec::as_slice),
        texts.len(),
    )?;
    let mut keep = Vec::with_capacity(texts.len());
    for (row, errs) in element_errors.iter().enumerate() {
        keep.push(errs.is_empty());
        if !errs.is_empty() {
            let pos = positions[row].unwrap_or_default();
            let reason = errs
                .iter()
                .map(|e| format!("{}[{pos}].{e}", spec.path))
                .collect::<Vec<_>>()
                .join("; ");
            rejected.push(rejection(&records[row_lineage[row]].lineage, reason));
        }
    }

    // The rows: lineage, parent columns, position, state, element columns.
    let kept: Vec<usize> = (0..keep.len()).filter(|&r| keep[r]).collect();
    let record_idx = UInt32Array::from_iter_values(kept.iter().map(|&r| record_of_row[r]));
    let row_idx = UInt32Array::from_iter_values(kept.iter().map(|&r| r as u32));
    let mut fields: Vec<Field> = LINEAGE_COLUMNS
        .iter()
        .map(|n| Field::new(*n, DataType::Utf8, false))
        .collect();
    let mut columns: Vec<ArrayRef> = (0..LINEAGE_COLUMNS.len())
        .map(|l| {
            Arc::new(StringArray::from_iter_values(
                kept.iter()
                    .map(|&r| records[row_lineage[r]].lineage[l].as_str()),
            )) as ArrayRef
        })
        .collect();
    for (c, a) in parents.iter().zip(&parent_typed) {
        fields.push(Field::new(&c.name, c.data_type.arrow_type(), true));
        columns.push(take(a.as_ref(), &record_idx, None)?);
    }
    fields.push(Field::new(&spec.position_column, DataType::Int32, true));
    columns.push(Arc::new(Int32Array::from_iter(
        kept.iter().map(|&r| positions[r]),
    )));
    if let Some(name) = &spec.state_column {
        fields.push(Field::new(name, DataType::Utf8, true));
        columns.push(Arc::new(StringArray::from_iter_values(
            kept.iter().map(|&r| states[r]),
        )));
    }
    for (c, a) in spec.columns.iter().zip(&element_typed) {
        fields.push(Field::new(&c.name, c.data_type.arrow_type(), true));
        columns.push(take(a.as_ref(), &row_idx, None)?);
    }
    let rows = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)?;
    Ok(Exploded {
        parsed: Parsed {
            rows,
            rejected,
            missing: vec![],
            // The element columns' values read as UTC for lack of an offset
            // (the parent columns' are counted on the bronze table): the
            // run reports them for the child table.
            read_as_utc: element_utc,
        },
        stats,
    })
}

/// One readable record: lineage (in [`LINEAGE_COLUMNS`] order), the parent
/// columns' texts, the array's state and each element's texts (or why the
/// element cannot be read).
struct Record {
    lineage: [String; 4],
    parent: Vec<Option<String>>,
    state: ArrayState,
    elements: Vec<Result<Vec<Option<String>>, ExplodeError>>,
}

type ReadRecord = (
    Vec<Option<String>>,
    ArrayState,
    Vec<Result<Vec<Option<String>>, ExplodeError>>,
);

fn rejection(lineage: &[String; 4], reason: String) -> Rejected {
    let [event_id, batch_id, source_file, raw_payload] = lineage.clone();
    Rejected {
        event_id,
        batch_id,
        source_file,
        raw_payload,
        rule_id: PARSE_RULE_ID.to_string(),
        reason,
    }
}

/// Converts text columns (`rows` give each row's texts, one per column) to
/// the columns' declared types, with their time zones (see
/// [`crate::silver::convert::convert_source_column`]). Returns the typed arrays,
/// per row the values that did not convert (`qty: 'three' is not INT`), and
/// the TIMESTAMP columns with values taken as UTC for lack of an offset.
fn convert<'a, 'r>(
    columns: impl Iterator<Item = &'a SourceColumn>,
    rows: impl Iterator<Item = &'r [Option<String>]> + Clone,
    n: usize,
) -> Result<(Vec<ArrayRef>, Vec<Vec<String>>, Vec<ReadAsUtc>), ExplodeError> {
    let mut typed = Vec::new();
    let mut errors: Vec<Vec<String>> = vec![Vec::new(); n];
    let mut utc = Vec::new();
    for (c, col) in columns.enumerate() {
        let mut b = StringBuilder::new();
        for r in rows.clone() {
            b.append_option(r.get(c).cloned().flatten());
        }
        let texts = b.finish();
        let converted = crate::silver::convert::convert_source_column(col, &texts)?;
        for (row, e) in converted.errors.into_iter().enumerate() {
            if let (Some(e), Some(list)) = (e, errors.get_mut(row)) {
                list.push(e);
            }
        }
        let without_offset = converted.read_as_utc.iter().filter(|f| **f).count();
        if without_offset > 0 {
            utc.push(ReadAsUtc {
                column: col.name.clone(),
                without_offset,
                values: texts.len() - texts.null_count(),
            });
        }
        typed.push(converted.array);
    }
    Ok((typed, errors, utc))
}

/// A JSON object with its values as written.
type Object<'a> = RawObject<'a>;

/// The JSON kind of a value, by its first character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Object,
    Array,
    String,
    Null,
    Other,
}

fn kind(v: &RawValue) -> Kind {
    match v.get().trim_start().as_bytes().first() {
        Some(b'{') => Kind::Object,
        Some(b'[') => Kind::Array,
        Some(b'"') => Kind::String,
        Some(b'n') => Kind::Null,
        _ => Kind::Other,
    }
}

fn object(v: &RawValue) -> Option<Object<'_>> {
    (kind(v) == Kind::Object)
        .then(|| serde_json::from_str(v.get()).ok())
        .flatten()
}

/// `name` in `obj`, bound as a source column binds a key
/// ([`crate::silver::source::json_key`]): the exact key, else the one key equal
/// ignoring case; two such keys are an error naming both and `column`.
fn key<'a>(
    obj: &Object<'a>,
    name: &str,
    column: &str,
) -> Result<Option<&'a RawValue>, ExplodeError> {
    Ok(json_key(obj, name, column)?.map(|(_, v)| v))
}

/// The value at a dot path: `Ok(None)` when a key is absent, JSON `null`
/// when a `null` is met on the way; an error when a step is not an object,
/// or when a key matches two keys ignoring case (`column` names the
/// declared column in that message).
fn at_path<'a>(
    obj: &Object<'a>,
    path: &str,
    column: &str,
) -> Result<Option<&'a RawValue>, ExplodeError> {
    let mut parts = path.split('.');
    let Some(first) = parts.next() else {
        return Ok(None);
    };
    let Some(mut v) = key(obj, first, column)? else {
        return Ok(None);
    };
    let mut walked = first.to_string();
    for p in parts {
        if kind(v) == Kind::Null {
            return Ok(Some(v));
        }
        let Some(o) = object(v) else {
            return Err(ExplodeError::StepNotObject {
                walked,
                value: short(v),
            });
        };
        match key(&o, p, column)? {
            Some(next) => v = next,
            None => return Ok(None),
        }
        walked = format!("{walked}.{p}");
    }
    Ok(Some(v))
}

/// A value's JSON text for a message, cut after 40 characters.
fn short(v: &RawValue) -> String {
    let t = v.get().trim();
    match t.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &t[..i]),
        None => t.to_string(),
    }
}

/// One record's payload → parent texts, the array's state and its elements.
fn read_record(
    raw: &str,
    spec: &ExplodeSpec,
    parents: &[&SourceColumn],
) -> Result<ReadRecord, ExplodeError> {
    let obj: Object = match serde_json::from_str::<&RawValue>(raw) {
        Ok(v) if kind(v) == Kind::Object => object(v).ok_or(ExplodeError::UnreadableObject)?,
        Ok(v) => return Err(ExplodeError::NotAnObject { value: short(v) }),
        Err(e) => return Err(SourceError::json(e).into()),
    };
    let parent = parents
        .iter()
        .map(
            |c| match at_path(&obj, c.path.as_deref().unwrap_or(&c.name), &c.name)? {
                Some(v) => raw_text(v).map_err(|error| ExplodeError::ParentValue {
                    column: c.name.clone(),
                    error,
                }),
                None => Ok(None),
            },
        )
        .collect::<Result<Vec<_>, ExplodeError>>()?;
    let array = at_path(&obj, &spec.path, &spec.path)?;
    let (state, items): (ArrayState, Vec<&RawValue>) = match array {
        None => (ArrayState::Missing, vec![]),
        Some(v) if kind(v) == Kind::Null => (ArrayState::Null, vec![]),
        Some(v) if kind(v) == Kind::Array => {
            let items: Vec<&RawValue> =
                serde_json::from_str(v.get()).map_err(|e| ExplodeError::ArrayJson {
                    path: spec.path.clone(),
                    message: e.to_string(),
                })?;
            let state = if items.is_empty() {
                ArrayState::Empty
            } else {
                ArrayState::Array
            };
            (state, items)
        }
        Some(v) => {
            return Err(ExplodeError::NotAnArray {
                path: spec.path.clone(),
                value: short(v),
            })
        }
    };
    let elements = items
        .into_iter()
        .enumerate()
        .map(|(pos, item)| read_element(item, pos, spec))
        .collect();
    Ok((parent, state, elements))
}

/// Element `pos` of the array → its declared fields' texts. An element that
/// is not an object can only be read by a column whose path is `$` (the
/// element itself).
fn read_element(
    item: &RawValue,
    pos: usize,
    spec: &ExplodeSpec,
) -> Result<Vec<Option<String>>, ExplodeError> {
    let columns = &spec.columns;
    let path = || spec.path.clone();
    let whole = |c: &SourceColumn| c.path.as_deref() == Some("$");
    let obj = object(item);
    if obj.is_none() && !columns.iter().all(whole) {
        return Err(ExplodeError::ElementNotObject {
            path: path(),
            pos,
            value: short(item),
        });
    }
    columns
        .iter()
        .map(|c| {
            let v = if whole(c) {
                Some(item)
            } else {
                match &obj {
                    Some(o) => at_path(o, c.path.as_deref().unwrap_or(&c.name), &c.name)
                        // A step that is no object names its path (`lines[1].a.b is 5,
                        // ...`); a key matching two keys is said after the element.
                        .map_err(|e| match e {
                            ExplodeError::StepNotObject { walked, value } => {
                                ExplodeError::ElementStep {
                                    path: path(),
                                    pos,
                                    walked,
                                    value,
                                }
                            }
                            ExplodeError::Source(error) => ExplodeError::ElementKey {
                                path: path(),
                                pos,
                                error,
                            },
                            other => other,
                        })?,
                    None => None,
                }
            };
            match v {
                Some(v) => raw_text(v).map_err(|error| ExplodeError::ElementValue {
                    path: path(),
                    pos,
                    column: c.name.clone(),
                    error,
                }),
                None => Ok(None),
            }
        })
        .collect()
}

/// The pieces of a spec a quarantine reason of a rule names: `(array path,
/// position column)`, so a rule failure on an element row says which element.
pub(crate) fn element_label(spec: Option<&ExplodeSpec>) -> Option<(&str, &str)> {
    spec.map(|s| (s.path.as_str(), s.position_column.as_str()))
}

/// Position of row `row` (`[2]`), read from the position column if it is still there.
pub(crate) fn element_suffix(batch: &RecordBatch, label: (&str, &str), row: usize) -> String {
    let pos = batch
        .column_by_name(label.1)
        .and_then(|c| c.as_any().downcast_ref::<Int32Array>())
        .filter(|a| a.is_valid(row))
        .map(|a| a.value(row));
    match pos {
        Some(p) => format!(" [element {}[{p}]]", label.0),
        None => format!(" [no element of {}]", label.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::BronzeMode;
    use crate::silver::source::{ColumnType, SourceSchema};

    fn spec(value: serde_json::Value) -> ExplodeSpec {
        serde_json::from_value(value).unwrap()
    }

    fn bronze(mode: BronzeMode) -> BronzeTableDef {
        BronzeTableDef {
            name: "orders".into(),
            source_system: "s".into(),
            schema: SourceSchema {
                columns: vec![
                    SourceColumn::new("order_id", ColumnType::String),
                    SourceColumn::new("shop", ColumnType::Int).at("meta.shop"),
                ],
            },
            description: String::new(),
            kafka_topic: None,
            mode,
            ingest_options: Default::default(),
        }
    }

    #[test]
    fn the_spec_has_defaults_and_round_trips() {
        let s = spec(serde_json::json!({
            "path": "lines",
            "columns": [{"name": "qty", "type": "int"}]
        }));
        assert_eq!(s.position_column, "position");
        assert!(!s.outer && s.parent_columns.is_empty() && s.state_column.is_none());
        assert_eq!(s.columns[0].data_type, ColumnType::Int);
        let text = serde_json::to_value(&s).unwrap();
        assert_eq!(
            text,
            serde_json::json!({"path": "lines", "parent_columns": [], "position_column": "position",
                "columns": [{"name": "qty", "type": "INT"}], "outer": false})
        );
    }

    #[test]
    fn definition_errors_name_what_is_wrong() {
        let b = bronze(BronzeMode::Raw);
        let bad = |v: serde_json::Value| check_spec(&spec(v), &b).unwrap_err().to_string();
        assert_eq!(
            bad(serde_json::json!({"path": "lines", "parent_columns": ["id"], "columns": []})),
            "parent column id is not declared in bronze.orders (declared: order_id, shop)"
        );
        assert_eq!(
            bad(serde_json::json!({"path": "lines", "parent_columns": ["order_id"],
                "columns": [{"name": "Order_ID", "type": "STRING"}]})),
            "column Order_ID is named twice (parent, position, state and element columns need distinct names)"
        );
        assert_eq!(
            bad(serde_json::json!({"path": "a..b", "columns": []})),
            "path \"a..b\" must name the array's key (dot-separated for nested objects: order.lines)"
        );
        assert_eq!(
            bad(
                serde_json::json!({"path": "lines", "position_column": "_event_id", "columns": []})
            ),
            "_event_id is a reserved name (_event_id is bronze's id of the record); name the column otherwise (an element key of that name is read with \"path\": \"_event_id\")"
        );
        // Every reserved name, ignoring case.
        assert!(bad(serde_json::json!({"path": "lines",
            "columns": [{"name": "_Warning", "type": "STRING"}]}))
        .starts_with("_Warning is a reserved name (_warning is bronze's warning about a record)"));
        let typed = bronze(BronzeMode::Permissive);
        assert!(check_spec(&spec(serde_json::json!({"path": "lines", "columns": []})), &typed)
            .unwrap_err()
            .to_string()
            .starts_with("explode reads the JSON text of raw bronze records, but bronze.orders is stored typed (PERMISSIVE)"));
    }

    #[test]
    fn records_are_read_exactly_with_nested_paths_and_scalar_elements() {
        let b = bronze(BronzeMode::Raw);
        let s = spec(serde_json::json!({
            "path": "order.lines",
            "parent_columns": ["order_id", "shop"],
            "columns": [
                {"name": "price", "type": "DECIMAL(38,2)", "path": "p.amount"},
                {"name": "all", "type": "STRING", "path": "$"}
            ]
        }));
        let parents = check_spec(&s, &b).unwrap();
        let raw = r#"{"Order_Id": "A\u0031", "meta": {"shop": 7}, "order": {"lines": [{"p": {"amount": 12345678901234567890.10}}, {"p": null}]}}"#;
        let (parent, state, elements) = read_record(raw, &s, &parents).unwrap();
        assert_eq!(parent, [Some("A1".to_string()), Some("7".to_string())]);
        assert_eq!(state, ArrayState::Array);
        // The number as written (a float would have rounded it), the element as its JSON text.
        assert_eq!(
            elements[0],
            Ok(vec![
                Some("12345678901234567890.10".to_string()),
                Some(r#"{"p": {"amount": 12345678901234567890.10}}"#.to_string())
            ])
        );
        assert_eq!(
            elements[1],
            Ok(vec![None, Some(r#"{"p": null}"#.to_string())])
        );
        // An array of scalars is read through "$".
        let tags = spec(
            serde_json::json!({"path": "tags", "columns": [{"name": "tag", "type": "STRING", "path": "$"}]}),
        );
        let (_, _, e) = read_record(r#"{"tags": ["a", 5, null]}"#, &tags, &[]).unwrap();
        assert_eq!(
            e,
            [
                Ok(vec![Some("a".to_string())]),
                Ok(vec![Some("5".to_string())]),
                Ok(vec![None])
            ]
        );
        // States, and what is not readable.
        let state = |raw: &str| {
            read_record(raw, &s, &parents)
                .map(|r| r.1)
                .map_err(|e| e.to_string())
        };
        assert_eq!(state(r#"{"order": {"lines": []}}"#), Ok(ArrayState::Empty));
        assert_eq!(state(r#"{"order": null}"#), Ok(ArrayState::Null));
        assert_eq!(state(r#"{"order": {}}"#), Ok(ArrayState::Missing));
        assert_eq!(state(r#"{}"#), Ok(ArrayState::Missing));
        assert_eq!(
            state(r#"{"order": 5}"#),
            Err("order is 5, not an object".to_string())
        );
        assert_eq!(
            state(r#"{"order": {"lines": {"a": 1}}}"#),
            Err("order.lines is not an array: {\"a\": 1}".to_string())
        );
        assert_eq!(
            state("[1]"),
            Err("the record is not a JSON object: [1]".to_string())
        );
        assert!(state("{oops")
            .unwrap_err()
            .starts_with("invalid JSON at column 2"));
    }

    #[test]
    fn a_key_matching_two_keys_ignoring_case_is_an_error_not_a_first_pick() {
        let b = bronze(BronzeMode::Raw);
        let s = spec(serde_json::json!({
            "path": "lines",
            "parent_columns": ["order_id"],
            "columns": [{"name": "émission", "type": "INT", "path": "ÉMISSION"}]
        }));
        let parents = check_spec(&s, &b).unwrap();
        let (_, _, elements) = read_record(
            r#"{"order_id": "A", "lines": [{"Émission": 1, "émission": 2}, {"émission": 3}]}"#,
            &s,
            &parents,
        )
        .unwrap();
        assert_eq!(
            elements[0].as_ref().map_err(|e| e.to_string()),
            Err("lines[0]: declared column émission matches 2 source names ignoring case: \"Émission\" and \"émission\"; declare it with the exact name of one of them".to_string())
        );
        assert_eq!(elements[1], Ok(vec![Some("3".to_string())]));
        // The parent columns and the array's path too.
        let err = read_record(
            r#"{"Order_ID": "A", "order_id": "B", "lines": []}"#,
            &s,
            &parents,
        );
        assert_eq!(err.map(|r| r.0), Ok(vec![Some("B".to_string())]));
        let err = read_record(
            r#"{"order_id": "A", "Lines": [], "LINES": []}"#,
            &s,
            &parents,
        );
        assert!(err
            .unwrap_err()
            .to_string()
            .contains("\"LINES\" and \"Lines\""));
        // Column names are compared ignoring case in every script.
        let twice = spec(serde_json::json!({"path": "lines",
            "columns": [{"name": "émission", "type": "INT"}, {"name": "ÉMISSION", "type": "INT"}]}));
        assert_eq!(
            check_spec(&twice, &b).unwrap_err().to_string(),
            "column ÉMISSION is named twice (parent, position, state and element columns need distinct names)"
        );
    }

    #[test]
    fn an_element_error_names_the_array_the_position_and_the_step() {
        let e = ExplodeError::ElementStep {
            path: "lines".into(),
            pos: 1,
            walked: "price".into(),
            value: "5".into(),
        };
        assert_eq!(e.to_string(), "lines[1].price is 5, not an object");
        let e = ExplodeError::InTable {
            silver: "order_lines".into(),
            error: Box::new(ExplodeError::NamedTwice {
                column: "qty".into(),
            }),
        };
        assert_eq!(
            e.to_string(),
            "silver.order_lines explode: column qty is named twice (parent, position, state and element columns need distinct names)"
        );
    }
}
