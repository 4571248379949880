//! Writing a silver table by business key: deduplication, MERGE (upsert) as
//! SCD type 1, SCD type 2 history for CDC sources, and merging full snapshots.
//!
//! Seed `003_d5c9e63b9bc06e62.txt` §4 (principles 2 and 3: one row per
//! entity, MERGE INTO instead of INSERT so a rerun creates no duplicates;
//! "CDC and SCD") and seed `000_87b8dd7200a8cd99.txt` §3 (at-least-once
//! duplicates; a CDC stream is a history, not duplicates). The vocabulary is
//! that of Delta Live Tables' `APPLY CHANGES INTO`: `KEYS`, `SEQUENCE BY`,
//! `APPLY AS DELETE WHEN`, `STORED AS SCD TYPE 1 | 2`, `TRACK HISTORY ... EXCEPT`,
//! and `APPLY CHANGES FROM SNAPSHOT` (dbt: a snapshot with `hard_deletes`).
//!
//! Rules, for each key:
//! - events are applied in `sequence_by` order, so the outcome never depends
//!   on the order files or rows arrived in; without `sequence_by` the bronze
//!   arrival order is the sequence (every row its own position);
//! - rows of one key with the **same** sequence value form a tie group. Rows
//!   equal in every column but the lineage ids (`_event_id`, `_batch_id`),
//!   `track_history_except` columns included, are duplicates (a re-sent
//!   event); all delete events count as one content, since a delete stores
//!   none of its values. A group with two different contents is
//!   **ambiguous**: nothing tells which came last, so none of its rows is
//!   applied, the key keeps its earlier state (or, without one, stays out of
//!   silver unless a later row gives it one; the reason says which), and every row of the group is
//!   reported in [`Merged::ambiguous`] (the pipeline quarantines them, naming
//!   the key, the sequence value and the columns that differ). That holds
//!   for rows differing only in a `track_history_except` column too (`src` =
//!   crm / web): such a column opens no new version, but silver stores one
//!   value of it, and at a tie only the arrival order could pick it. An SCD2
//!   table therefore never holds a zero-length version;
//! - an event (at a later sequence value) whose tracked values equal the
//!   current row's is a duplicate: nothing changes, and the current row keeps
//!   its values, `track_history_except` columns included (decided by the
//!   sequence, never by arrival);
//! - SCD1 keeps the latest state; a delete removes the key;
//! - SCD2 keeps every version with `valid_from` / `valid_to` (the sequence
//!   values of the event that opened / closed it, NULL while open) and
//!   `is_current`; a delete closes the current version.
//!
//! Keys: a NULL key part is refused (the pipeline quarantines such rows
//! before the merge) unless [`MergeSpec::null_safe_keys`] is set: then key
//! parts compare with NULL = NULL, as SQL's `IS NOT DISTINCT FROM`.
//!
//! Sequence values: a NULL or a NaN is refused (quarantined by the pipeline:
//! NaN is neither before nor after any value, see `is_nan`); numbers that
//! are equal are one position whatever their bits, so `-0.0` and `0.0` tie
//! (a group whose rows store `-0.0` and `0.0` differs in that column, and
//! is ambiguous like any other).
//!
//! Snapshots ([`MergeSpec::from_snapshots`]): every row belongs to a full
//! snapshot of the source table. With `sequence_by` the snapshot version is
//! that column (`snapshot_date`) and the rows sharing a value form one
//! snapshot, whichever batches they came in; without it each batch is one
//! snapshot, in arrival order. Snapshots apply in version order; a key in a
//! snapshot is an upsert at that version, a key that is current but missing
//! from a newer snapshot was deleted at that version (SCD1: removed; SCD2:
//! its current version closes with `valid_to` = the snapshot version). A key
//! whose row in a snapshot was quarantined was in that snapshot: see
//! [`SnapshotHolds`]; it keeps its current version.
//!
//! Incremental merges: `base` is the result of merging earlier rows, and
//! every `new` row must come after them (for its key; for snapshots, every new
//! snapshot after every earlier one). [`MergeState`] remembers what was merged
//! (including rows that were removed) so that [`MergeState::late_row`] tells
//! a caller when an incremental merge could differ from merging all rows
//! from scratch; the pipeline then rebuilds the table from all of bronze.
//!
//! Rows in = rows out + rows removed (duplicates, superseded states, delete
//! events, deleted states) + ambiguous rows, which the reconciliation check uses.
//!
//! What arrival order may decide: with a sequence, no value of the table,
//! no count of removed rows (per kind) or ambiguous rows, no quarantine
//! reason, and not the order the table's rows (key order) or a tie group's
//! ambiguous rows (value order) are listed in. Only lineage may: of several
//! duplicates (equal in every column but lineage) the earliest arrival
//! stands for the group, so the stored `_event_id` / `_batch_id`, the
//! `kept_event_id` of the [`RemovedRow`]s (and so which record the row
//! trail shows as "kept" and which as "duplicate") follow arrival; their
//! values are the same whichever it is. Snapshot holds
//! ([`SnapshotHolds`]) do not depend on the order of rows either: a held
//! row without a snapshot value holds its key in every snapshot its batch
//! has rows in. Without `sequence_by` the arrival order *is* the sequence
//! (documented above).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, RecordBatch, StringArray, UInt32Array,
};
use crate::lake::concat_batches;
use datafusion::arrow::compute::{cast, concat, take};
use datafusion::arrow::datatypes::{
    DataType, Field, Float16Type, Float32Type, Float64Type, Schema,
};
use datafusion::arrow::row::{RowConverter, Rows, SortField};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use serde::{Deserialize, Serialize};

use crate::error::EngineError;
use crate::model::ArrowColumnType;

pub use medallion_protocol::merge::{MergeSpec, Scd};

/// Why rows cannot be merged into a table (see [`merge`]): the error of the
/// whole silver table (or gold model with MERGE ON). Keys are shown as
/// `customer_id=C-203`, values as silver shows them.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// The spec names no key column.
    #[error("merge needs at least one key column")]
    NoKeys,
    /// SCD type 2 without `sequence_by`.
    #[error("SCD type 2 needs sequence_by: the column that orders the changes (a CDC LSN or an update timestamp), or the snapshot version")]
    Scd2WithoutSequence,
    /// The caller passed a delete flag count other than the row count.
    #[error("internal: one delete flag per row is needed")]
    DeleteFlags,
    /// An SCD2 merge lost its sequence values.
    #[error("no sequence")]
    NoSequence,
    /// A key or sequence `column` that the rows do not have; `columns`: the
    /// table's columns (`name TYPE`).
    #[error("{column} is not a column of this silver table (columns: {})", .columns.join(", "))]
    NoColumn {
        column: String,
        columns: Vec<String>,
    },
    /// An incremental merge whose new rows have other columns (`now`, as
    /// `name TYPE`) than the table (`before`).
    #[error("an incremental run cannot merge into this table: the rules changed its columns (now: {}; before: {}). Run a full refresh to rebuild it from bronze.", .now.join(", "), .before.join(", "))]
    ColumnsChanged {
        now: Vec<String>,
        before: Vec<String>,
    },
    /// Key `column` is NULL in the row with key `key`, without null_safe_keys.
    #[error("{column} is NULL in a row ({key}): merge keys must not be NULL (such rows go to the quarantine), or set null_safe_keys so that NULL equals NULL")]
    NullKey { column: String, key: String },
    /// The `sequence_by` column is NULL in the row with key `key`.
    #[error("{column} is NULL in a row ({key}): the sequence_by column orders the changes and must not be NULL")]
    NullSequence { column: String, key: String },
    /// The `sequence_by` column is NaN in the row with key `key`.
    #[error("{column} is NaN in a row ({key}): the sequence_by column orders the changes and NaN is not an order")]
    NanSequence { column: String, key: String },
    /// A new row (key `key`, sequence `column` = `value`) is not after the
    /// rows merged before (up to `last`).
    #[error("{key} at {column}={value} is not after the rows already merged into the table (up to {column}={last}): merge all rows from scratch (a full refresh)")]
    NotAfterBase {
        key: String,
        column: String,
        value: String,
        last: String,
    },
    /// Arrow failed comparing or assembling the rows.
    #[error(transparent)]
    Arrow(#[from] datafusion::arrow::error::ArrowError),
}

impl From<MergeError> for EngineError {
    fn from(e: MergeError) -> Self {
        EngineError::Request(e.to_string())
    }
}

/// SCD2 columns added before the lineage columns.
pub const SCD2_COLUMNS: [&str; 3] = ["valid_from", "valid_to", "is_current"];

/// Why an input row is not a row of the merged table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Removed {
    /// Same values as the key's current row, or as another row of the same
    /// key and sequence value (a re-sent or re-delivered event).
    Duplicate,
    /// An older state replaced by a later event (SCD1).
    Superseded,
    /// A delete event, or the state it deleted (SCD1; also a key missing
    /// from a newer snapshot).
    Deleted,
}

/// An input row that did not become a row of the merged table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemovedRow {
    pub event_id: String,
    pub batch_id: String,
    pub why: Removed,
    /// `_event_id` of the row that stands for the key now (None after a delete).
    pub kept_event_id: Option<String>,
}

/// An input row of an ambiguous tie group: not applied, for the quarantine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AmbiguousRow {
    pub event_id: String,
    pub batch_id: String,
    /// `merge: ambiguous tie: 2 rows have customer_id=C-203 and
    /// updated_at=2024-08-02 08:00:00 but differ in tier (silver, gold); ...`
    /// (the same text for every row of the group).
    pub reason: String,
}

/// Result of a merge.
#[derive(Debug, Clone)]
pub struct Merged {
    pub batch: RecordBatch,
    pub removed: Vec<RemovedRow>,
    /// Rows of tie groups with different contents: groups in key then
    /// sequence order, the rows of a group in order of their values
    /// (deletes first; arrival only among equal rows).
    pub ambiguous: Vec<AmbiguousRow>,
}

/// Quarantined rows of snapshot sources: their keys were in their snapshot,
/// so that snapshot must not delete them (they keep their current version).
#[derive(Debug, Clone, Default)]
pub struct SnapshotHolds {
    /// Rows whose key could be read: the merge key columns (silver's names
    /// and types), the `sequence_by` column when set, and `_batch_id`.
    pub rows: Option<RecordBatch>,
    /// Batches with a quarantined row whose key could not be read (it did not
    /// parse, or rules change the key): their snapshots delete nothing.
    pub batches: HashSet<String>,
}

/// Inputs of [`merge`]. `new` and `base` have silver's layout (lineage
/// `_event_id`, `_batch_id` last); `base` is the table's current content
/// (for SCD2 with its [`SCD2_COLUMNS`]), all of it older than `new`.
pub struct MergeInput<'a> {
    pub spec: &'a MergeSpec,
    pub base: Option<&'a RecordBatch>,
    pub new: &'a RecordBatch,
    /// Per `new` row: is it a delete event?
    pub deletes: &'a BooleanArray,
    /// Snapshot sources only: keys and batches whose deletes are held back.
    pub holds: Option<&'a SnapshotHolds>,
}

/// What has been merged into a table, for [`MergeState::late_row`]: per key
/// (a hash of its value, so no key is kept verbatim) the largest sequence
/// value seen, and the largest over all keys. Rows that were removed or
/// ambiguous count: they are in bronze.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct MergeState {
    #[serde(with = "data_type_text")]
    sequence_type: Option<DataType>,
    last: HashMap<u64, Vec<u8>>,
    max: Option<Vec<u8>>,
}

/// An Arrow type saved as its text (`Timestamp(µs, "UTC")`), read back
/// with `DataType::from_str` (a saved session keeps its merge states).
mod data_type_text {
    use std::str::FromStr;

    use datafusion::arrow::datatypes::DataType;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(t: &Option<DataType>, s: S) -> Result<S::Ok, S::Error> {
        match t {
            Some(t) => s.serialize_some(&t.to_string()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DataType>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|t| DataType::from_str(&t).map_err(serde::de::Error::custom))
            .transpose()
    }
}

impl MergeState {
    /// This state with the rows `rows` (silver's layout) merged as well.
    pub fn observe(&self, spec: &MergeSpec, rows: &RecordBatch) -> Result<MergeState, MergeError> {
        let mut next = self.clone();
        let Some(seq) = &spec.sequence_by else {
            return Ok(next);
        };
        let s = column(rows, seq)?;
        let keys = spec
            .keys
            .iter()
            .map(|k| column(rows, k))
            .collect::<Result<Vec<_>, _>>()?;
        if next
            .sequence_type
            .as_ref()
            .is_some_and(|t| t != s.data_type())
        {
            next.last.clear();
            next.max = None;
        }
        next.sequence_type = Some(s.data_type().clone());
        let key_rows = rows_of(&keys)?;
        let seq_rows = sequence_rows(&s)?;
        for i in 0..rows.num_rows() {
            let v = seq_rows.row(i).data();
            let slot = next.last.entry(hash(key_rows.row(i).data())).or_default();
            if slot.is_empty() || v > slot.as_slice() {
                *slot = v.to_vec();
            }
            if next.max.as_deref().is_none_or(|m| v > m) {
                next.max = Some(v.to_vec());
            }
        }
        Ok(next)
    }

    /// The first row of `rows` that is not after everything merged so far
    /// (for its key; for snapshots, after every earlier snapshot), as
    /// `customer_id=C-202 at updated_at=2024-08-01 09:00:00`: merging `rows`
    /// into the current table could then differ from merging all rows from
    /// scratch. None: an incremental merge gives the same table.
    pub fn late_row(
        &self,
        spec: &MergeSpec,
        rows: &RecordBatch,
    ) -> Result<Option<String>, MergeError> {
        let Some(seq) = &spec.sequence_by else {
            return Ok(None); // arrival order: new rows come last
        };
        let s = column(rows, seq)?;
        if self
            .sequence_type
            .as_ref()
            .is_some_and(|t| t != s.data_type())
        {
            return Ok(Some(format!("{seq} changed its type")));
        }
        let keys = spec
            .keys
            .iter()
            .map(|k| column(rows, k))
            .collect::<Result<Vec<_>, _>>()?;
        let key_rows = rows_of(&keys)?;
        let seq_rows = sequence_rows(&s)?;
        for i in 0..rows.num_rows() {
            let v = seq_rows.row(i).data();
            let before = if spec.from_snapshots {
                self.max.as_deref()
            } else {
                self.last
                    .get(&hash(key_rows.row(i).data()))
                    .map(Vec::as_slice)
            };
            if before.is_some_and(|b| v <= b) {
                return Ok(Some(format!(
                    "{} at {seq}={}",
                    describe_key(&spec.keys, &keys, i),
                    show(&s, i)
                )));
            }
        }
        Ok(None)
    }
}

fn hash(bytes: &[u8]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

fn column(batch: &RecordBatch, name: &str) -> Result<ArrayRef, MergeError> {
    batch
        .column_by_name(name)
        .cloned()
        .ok_or_else(|| MergeError::NoColumn {
            column: name.to_string(),
            columns: describe(&batch.schema()),
        })
}

/// One event of a key: a row of the combined input, or (snapshots) a key
/// missing from a snapshot.
#[derive(Clone, Copy)]
enum Step {
    /// Rows at one position (same sequence value), as a range of `members`.
    Group(usize, usize),
    /// The key is missing from the snapshot whose version is at this
    /// index of the sequence values (None: no sequence, SCD1 only).
    Missing(Option<usize>),
}

/// Merges `new` into `base` by `spec` (see the module doc). Errors are
/// messages for the silver table (unknown key or sequence column, SCD2
/// without a sequence, a NULL key or sequence value, a rules change that
/// altered the columns, a row older than the table it is merged into).
pub fn merge(input: MergeInput<'_>) -> std::result::Result<Merged, MergeError> {
    let spec = input.spec;
    let scd2 = spec.stored_as == Scd::Scd2;
    if spec.keys.is_empty() {
        return Err(MergeError::NoKeys);
    }
    if scd2 && spec.sequence_by.is_none() {
        return Err(MergeError::Scd2WithoutSequence);
    }
    if input.deletes.len() != input.new.num_rows() {
        return Err(MergeError::DeleteFlags);
    }
    let layout = input.new.schema();
    // The base without its SCD2 columns must have the new rows' layout.
    let (base_rows, base_valid_to) = match input.base {
        Some(b) if scd2 => {
            let keep: Vec<usize> = (0..b.num_columns())
                .filter(|&i| !SCD2_COLUMNS.contains(&b.schema().field(i).name().as_str()))
                .collect();
            let to = b.column_by_name("valid_to").cloned();
            (Some(b.project(&keep)?), to)
        }
        Some(b) => (Some(b.clone()), None),
        None => (None, None),
    };
    if let Some(b) = &base_rows {
        if b.schema().fields() != layout.fields() {
            return Err(MergeError::ColumnsChanged {
                now: describe(&layout),
                before: describe(&b.schema()),
            });
        }
    }
    let n_base = base_rows.as_ref().map_or(0, |b| b.num_rows());
    let all = match &base_rows {
        Some(b) => concat_batches(&layout, [b, input.new])?,
        None => input.new.clone(),
    };
    let n_all = all.num_rows();
    let keys: Vec<ArrayRef> = spec
        .keys
        .iter()
        .map(|k| column(&all, k))
        .collect::<Result<_, _>>()?;
    if !spec.null_safe_keys {
        for (name, k) in spec.keys.iter().zip(&keys) {
            if let Some(i) = (0..n_all).find(|&i| k.is_null(i)) {
                return Err(MergeError::NullKey {
                    column: name.clone(),
                    key: describe_key(&spec.keys, &keys, i),
                });
            }
        }
    }
    let key_rows = rows_of(&keys)?;
    // Sequence values: the column for every row, then (SCD2) the base's valid_to values.
    let seq_col = spec
        .sequence_by
        .as_deref()
        .map(|s| column(&all, s))
        .transpose()?;
    if let (Some(name), Some(c)) = (&spec.sequence_by, &seq_col) {
        if let Some(i) = (0..n_all).find(|&i| c.is_null(i)) {
            return Err(MergeError::NullSequence {
                column: name.clone(),
                key: describe_key(&spec.keys, &keys, i),
            });
        }
        if let Some(i) = (0..n_all).find(|&i| is_nan(c.as_ref(), i)) {
            return Err(MergeError::NanSequence {
                column: name.clone(),
                key: describe_key(&spec.keys, &keys, i),
            });
        }
    }
    let seq_values: Option<ArrayRef> = match (&seq_col, &base_valid_to) {
        (Some(c), Some(to)) => Some(concat(&[c.as_ref(), to.as_ref()])?),
        (Some(c), None) => Some(c.clone()),
        (None, _) => None,
    };
    let seq_rows = seq_values.as_ref().map(sequence_rows).transpose()?;
    // The values as ordered (-0.0 as 0.0), for the sequence value a tie names.
    let seq_order = seq_col.as_ref().map(ordered_values);
    let lineage = ["_event_id", "_batch_id"];
    // `all` has `layout`'s columns, in the same order.
    let tracked_names: Vec<&str> = layout
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .filter(|n| {
            !lineage.contains(n)
                && Some(*n) != spec.sequence_by.as_deref()
                && !spec.track_history_except.iter().any(|e| e == n)
        })
        .collect();
    let tracked: Vec<ArrayRef> = tracked_names
        .iter()
        .map(|n| column(&all, n))
        .collect::<Result<_, _>>()?;
    let value_rows = rows_of(&tracked)?;
    // Every column but lineage (untracked ones too): what a tie group's
    // rows must share to be duplicates.
    let stored_names: Vec<&str> = layout
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .filter(|n| !lineage.contains(n))
        .collect();
    let stored: Vec<ArrayRef> = stored_names
        .iter()
        .map(|n| column(&all, n))
        .collect::<Result<_, _>>()?;
    let stored_rows = rows_of(&stored)?;
    let ids = all
        .column_by_name("_event_id")
        .and_then(|c| c.as_any().downcast_ref::<StringArray>().cloned());
    let batches = all
        .column_by_name("_batch_id")
        .and_then(|c| c.as_any().downcast_ref::<StringArray>().cloned());
    let event = |i: usize| {
        ids.as_ref()
            .map(|a| a.value(i).to_string())
            .unwrap_or_default()
    };
    let batch_of = |i: usize| {
        batches
            .as_ref()
            .map(|a| a.value(i).to_string())
            .unwrap_or_default()
    };
    let is_delete = |i: usize| {
        i >= n_base && input.deletes.is_valid(i - n_base) && input.deletes.value(i - n_base)
    };

    // Position of each new row: its sequence value; without one, its batch
    // (snapshots: one batch, one snapshot) or its arrival (changes).
    let mut batch_rank: Vec<usize> = Vec::with_capacity(n_all - n_base);
    {
        let mut seen: HashMap<String, usize> = HashMap::new();
        for i in n_base..n_all {
            let n = seen.len();
            batch_rank.push(*seen.entry(batch_of(i)).or_insert(n));
        }
    }
    let position = |i: usize| -> Vec<u8> {
        match &seq_rows {
            Some(s) => s.row(i).data().to_vec(),
            None if spec.from_snapshots => {
                (batch_rank.get(i.wrapping_sub(n_base)).copied().unwrap_or(0) as u64)
                    .to_be_bytes()
                    .to_vec()
            }
            None => (i as u64).to_be_bytes().to_vec(),
        }
    };

    // Base rows, per key (the state new rows are merged into).
    let mut base_of: BTreeMap<Vec<u8>, Vec<usize>> = BTreeMap::new();
    for i in 0..n_base {
        base_of
            .entry(key_rows.row(i).data().to_vec())
            .or_default()
            .push(i);
    }
    // New rows, per key, sorted by position then arrival.
    let mut new_of: BTreeMap<Vec<u8>, Vec<usize>> = BTreeMap::new();
    for i in n_base..n_all {
        new_of
            .entry(key_rows.row(i).data().to_vec())
            .or_default()
            .push(i);
    }
    // The base's last sequence value (per key, and over all keys).
    // (bytes, index into the sequence values) of base row i's last value.
    let base_last = |i: usize| -> Option<(Vec<u8>, usize)> {
        let s = seq_rows.as_ref()?;
        let from = (s.row(i).data().to_vec(), i);
        let to = base_valid_to
            .as_ref()
            .filter(|to| to.is_valid(i))
            .map(|_| (s.row(n_all + i).data().to_vec(), n_all + i));
        Some(match to {
            Some(t) if t.0 > from.0 => t,
            _ => from,
        })
    };
    // Snapshot versions of the new rows, in order, with a row holding each.
    let mut snapshots: BTreeMap<Vec<u8>, usize> = BTreeMap::new();
    if spec.from_snapshots {
        for i in n_base..n_all {
            snapshots.entry(position(i)).or_insert(i);
        }
    }
    // Rows that came after the base: refused when they are not.
    if n_base > 0 {
        if let (Some(seq), Some(name)) = (&seq_values, &spec.sequence_by) {
            let late = |i: usize, last: usize| MergeError::NotAfterBase {
                key: describe_key(&spec.keys, &keys, i),
                column: name.clone(),
                value: show(seq, i),
                last: show(seq, last),
            };
            if spec.from_snapshots {
                let max = (0..n_base).filter_map(base_last).max();
                if let (Some((max, at)), Some((first, &i))) = (max, snapshots.iter().next()) {
                    if *first <= max {
                        return Err(late(i, at));
                    }
                }
            } else {
                for (k, rows) in &new_of {
                    let last = base_of
                        .get(k)
                        .into_iter()
                        .flatten()
                        .filter_map(|&b| base_last(b))
                        .max();
                    if let Some((last, at)) = last {
                        if let Some(&i) = rows.iter().find(|&&i| position(i) <= last) {
                            return Err(late(i, at));
                        }
                    }
                }
            }
        }
    }
    // Held snapshot keys: (key bytes, position) pairs, and fully held positions.
    let (held_keys, held_positions) = match input.holds {
        Some(h) if spec.from_snapshots => held(
            spec,
            h,
            &keys,
            &seq_col,
            n_base..n_all,
            &batch_of,
            &position,
        )?,
        _ => Default::default(),
    };
    let mut removed = Vec::new();
    let mut ambiguous = Vec::new();
    // (row index, valid_to sequence index) of each output row.
    let mut out: Vec<(usize, Option<usize>)> = Vec::new();
    // A delete of the current version `c` at sequence index `at`: SCD2
    // closes it, SCD1 removes its row.
    let end = |out: &mut Vec<(usize, Option<usize>)>,
               removed: &mut Vec<RemovedRow>,
               c: usize,
               at: Option<usize>| {
        if scd2 {
            out[c].1 = at;
        } else {
            let (ci, _) = out.remove(c);
            removed.push(RemovedRow {
                event_id: event(ci),
                batch_id: batch_of(ci),
                why: Removed::Deleted,
                kept_event_id: None,
            });
        }
    };
    let all_keys: std::collections::BTreeSet<Vec<u8>> =
        base_of.keys().chain(new_of.keys()).cloned().collect();
    for k in all_keys {
        let mut current: Option<usize> = None; // index into `out`
                                               // The base: the table's rows for this key, in sequence order.
        let mut base = base_of.remove(&k).unwrap_or_default();
        if let Some(s) = &seq_rows {
            base.sort_by(|a, b| s.row(*a).cmp(&s.row(*b)).then(a.cmp(b)));
        }
        for b in base {
            let to = base_valid_to
                .as_ref()
                .filter(|to| scd2 && to.is_valid(b))
                .map(|_| n_all + b);
            if !scd2 {
                if let Some(c) = current {
                    // An SCD1 table holds one row per key; a second one is superseded.
                    let (ci, _) = out.remove(c);
                    removed.push(RemovedRow {
                        event_id: event(ci),
                        batch_id: batch_of(ci),
                        why: Removed::Superseded,
                        kept_event_id: Some(event(b)),
                    });
                }
            }
            out.push((b, to));
            current = if to.is_none() {
                Some(out.len() - 1)
            } else {
                None
            };
        }
        let mut members = new_of.remove(&k).unwrap_or_default();
        members.sort_by(|a, b| position(*a).cmp(&position(*b)).then(a.cmp(b)));
        // The steps: tie groups, and (snapshots) the snapshots missing the key.
        let mut steps: Vec<(Vec<u8>, Step)> = Vec::new();
        let mut start = 0;
        while start < members.len() {
            let p = position(members[start]);
            let mut end = start + 1;
            while end < members.len() && position(members[end]) == p {
                end += 1;
            }
            steps.push((p, Step::Group(start, end)));
            start = end;
        }
        if spec.from_snapshots {
            for (v, &i) in &snapshots {
                if !steps.iter().any(|(p, _)| p == v) {
                    let held =
                        held_positions.contains(v) || held_keys.contains(&(k.clone(), v.clone()));
                    if !held {
                        steps.push((v.clone(), Step::Missing(seq_rows.as_ref().map(|_| i))));
                    }
                }
            }
            steps.sort_by(|a, b| a.0.cmp(&b.0));
        }
        for (_, step) in steps {
            let group = match step {
                Step::Missing(at) => {
                    if let Some(c) = current.take() {
                        end(&mut out, &mut removed, c, at);
                    }
                    continue;
                }
                Step::Group(a, b) => &members[a..b],
            };
            // Contents of the group: a delete, or every stored value.
            let content =
                |i: usize| -> Option<&[u8]> { (!is_delete(i)).then(|| stored_rows.row(i).data()) };
            let first = content(group[0]);
            if group.iter().any(|&i| content(i) != first) {
                let deleting: Vec<bool> = group.iter().map(|&i| is_delete(i)).collect();
                let reason = tie_reason(
                    spec,
                    &keys,
                    &seq_order,
                    (&stored_names, &stored),
                    group,
                    &deleting,
                    &batch_of(group[0]),
                    current.is_some(),
                );
                // In order of their contents (deletes first), not of arrival.
                let mut by_value = group.to_vec();
                by_value.sort_by(|&a, &b| content(a).cmp(&content(b)).then(a.cmp(&b)));
                for i in by_value {
                    ambiguous.push(AmbiguousRow {
                        event_id: event(i),
                        batch_id: batch_of(i),
                        reason: reason.clone(),
                    });
                }
                continue;
            }
            if first.is_none() {
                // Delete events (all alike): linked to the row they close or delete.
                let kept = current.map(|c| event(out[c].0));
                for &i in group {
                    removed.push(RemovedRow {
                        event_id: event(i),
                        batch_id: batch_of(i),
                        why: Removed::Deleted,
                        kept_event_id: kept.clone(),
                    });
                }
                if let Some(c) = current.take() {
                    end(&mut out, &mut removed, c, Some(group[0]));
                }
                continue;
            }
            // One content (equal but for lineage): the earliest arrival stands for the group.
            let rep = group[0];
            for &i in &group[1..] {
                removed.push(RemovedRow {
                    event_id: event(i),
                    batch_id: batch_of(i),
                    why: Removed::Duplicate,
                    kept_event_id: Some(event(rep)),
                });
            }
            if let Some(c) = current {
                let (ci, _) = out[c];
                if value_rows.row(ci) == value_rows.row(rep) {
                    removed.push(RemovedRow {
                        event_id: event(rep),
                        batch_id: batch_of(rep),
                        why: Removed::Duplicate,
                        kept_event_id: Some(event(ci)),
                    });
                    continue;
                }
                if scd2 {
                    out[c].1 = Some(rep);
                } else {
                    removed.push(RemovedRow {
                        event_id: event(ci),
                        batch_id: batch_of(ci),
                        why: Removed::Superseded,
                        kept_event_id: Some(event(rep)),
                    });
                    out.remove(c);
                }
            }
            out.push((rep, None));
            current = Some(out.len() - 1);
        }
    }
    let idx = UInt32Array::from_iter_values(out.iter().map(|(i, _)| *i as u32));
    let columns: Vec<ArrayRef> = all
        .columns()
        .iter()
        .map(|c| take(c.as_ref(), &idx, None))
        .collect::<Result<_, _>>()?;
    let mut batch = RecordBatch::try_new(layout.clone(), columns)?;
    if scd2 {
        let seq = seq_values.as_ref().ok_or(MergeError::NoSequence)?;
        let from_idx = UInt32Array::from_iter_values(out.iter().map(|(i, _)| *i as u32));
        let to_idx = UInt32Array::from_iter(out.iter().map(|(_, t)| t.map(|t| t as u32)));
        let from = take(seq.as_ref(), &from_idx, None)?;
        let to = take(seq.as_ref(), &to_idx, None)?;
        let current = BooleanArray::from(out.iter().map(|(_, t)| t.is_none()).collect::<Vec<_>>());
        let n_data = layout.fields().len() - lineage.len();
        let mut fields: Vec<Field> = layout.fields()[..n_data]
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        let mut cols: Vec<ArrayRef> = batch.columns()[..n_data].to_vec();
        fields.push(Field::new("valid_from", seq.data_type().clone(), true));
        fields.push(Field::new("valid_to", seq.data_type().clone(), true));
        fields.push(Field::new("is_current", DataType::Boolean, false));
        cols.extend([from, to, Arc::new(current) as ArrayRef]);
        for f in &layout.fields()[n_data..] {
            fields.push(f.as_ref().clone());
        }
        cols.extend(batch.columns()[n_data..].iter().cloned());
        batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), cols)?;
    }
    Ok(Merged {
        batch,
        removed,
        ambiguous,
    })
}

/// The first key of `batch` (on `keys`, NULL equal to NULL) that has two
/// rows with different values, as `report_date=2024-01-15, country=DE`: a
/// MERGE source must have one row per key (Delta refuses a MERGE whose
/// source rows match one target row twice), or the row order would decide.
/// Rows equal in every column are one row. None when every key is unique.
/// Of several such keys the smallest (in the keys' sort order) is named, so
/// the message does not depend on the query's row order.
pub fn conflicting_key(batch: &RecordBatch, keys: &[String]) -> Result<Option<String>, MergeError> {
    let key_cols = keys
        .iter()
        .map(|k| column(batch, k))
        .collect::<Result<Vec<_>, _>>()?;
    let key_rows = rows_of(&key_cols)?;
    let value_rows = rows_of(batch.columns())?;
    let mut first: HashMap<&[u8], usize> = HashMap::new();
    let mut smallest: Option<usize> = None;
    for i in 0..batch.num_rows() {
        let f = *first.entry(key_rows.row(i).data()).or_insert(i);
        if value_rows.row(f) != value_rows.row(i)
            && smallest.is_none_or(|s| key_rows.row(i) < key_rows.row(s))
        {
            smallest = Some(i);
        }
    }
    Ok(smallest.map(|i| describe_key(keys, &key_cols, i)))
}

/// Keys held back from snapshot deletes: (key, snapshot position) pairs, and
/// snapshot positions that delete nothing.
type Held = (HashSet<(Vec<u8>, Vec<u8>)>, HashSet<Vec<u8>>);

fn held(
    spec: &MergeSpec,
    holds: &SnapshotHolds,
    keys: &[ArrayRef],
    seq: &Option<ArrayRef>,
    new_rows: std::ops::Range<usize>,
    batch_of: &dyn Fn(usize) -> String,
    position: &dyn Fn(usize) -> Vec<u8>,
) -> Result<Held, MergeError> {
    let mut positions = HashSet::new();
    // Every snapshot a batch has rows in (with `sequence_by` a file may
    // hold several snapshot versions; all of them, not its first row's).
    let mut of_batch: HashMap<String, HashSet<Vec<u8>>> = HashMap::new();
    for i in new_rows {
        let b = batch_of(i);
        if holds.batches.contains(&b) {
            positions.insert(position(i));
        }
        of_batch.entry(b).or_default().insert(position(i));
    }
    let mut pairs = HashSet::new();
    let Some(rows) = holds.rows.as_ref().filter(|r| r.num_rows() > 0) else {
        return Ok((pairs, positions));
    };
    // The held rows' keys (and sequence values) as the merged rows' types;
    // a key that cannot be compared holds every snapshot.
    let as_type = |name: &str, like: &ArrayRef| -> Option<ArrayRef> {
        let c = rows.column_by_name(name)?;
        cast(c, like.data_type()).ok()
    };
    let held_keys: Option<Vec<ArrayRef>> = spec
        .keys
        .iter()
        .zip(keys)
        .map(|(k, like)| as_type(k, like))
        .collect();
    let held_seq: Option<Option<ArrayRef>> = match (seq, &spec.sequence_by) {
        (Some(like), Some(name)) => as_type(name, like).map(Some),
        _ => Some(None),
    };
    let (Some(held_keys), Some(held_seq)) = (held_keys, held_seq) else {
        positions.extend(of_batch.into_values().flatten());
        return Ok((pairs, positions));
    };
    let key_rows = rows_of(&held_keys)?;
    let seq_rows = held_seq.as_ref().map(sequence_rows).transpose()?;
    let batch_ids = rows
        .column_by_name("_batch_id")
        .and_then(|c| c.as_any().downcast_ref::<StringArray>().cloned());
    for r in 0..rows.num_rows() {
        let key = key_rows.row(r).data();
        match (&seq_rows, &held_seq) {
            (Some(s), Some(c)) if c.is_valid(r) => {
                pairs.insert((key.to_vec(), s.row(r).data().to_vec()));
            }
            // No snapshot value (without `sequence_by` the batch is the
            // snapshot; with it, a NULL version): the key is held in every
            // snapshot of the row's batch.
            _ => {
                let of_row = batch_ids.as_ref().and_then(|b| of_batch.get(b.value(r)));
                for p in of_row.into_iter().flatten() {
                    pairs.insert((key.to_vec(), p.clone()));
                }
            }
        }
    }
    Ok((pairs, positions))
}

/// The quarantine reason of an ambiguous tie group (same text for each row,
/// whatever order its rows arrived in). `stored`: the names and values of
/// every column but lineage; `had_state`: the key had a state before this
/// group (else none of its rows gives it one).
#[allow(clippy::too_many_arguments)]
fn tie_reason(
    spec: &MergeSpec,
    keys: &[ArrayRef],
    seq: &Option<ArrayRef>,
    stored: (&[&str], &[ArrayRef]),
    group: &[usize],
    deleting: &[bool],
    batch: &str,
    had_state: bool,
) -> String {
    let at = match (&spec.sequence_by, seq) {
        (Some(name), Some(s)) => format!("{name}={}", show(s, group[0])),
        _ => format!("the same snapshot (batch {batch})"),
    };
    let upserts: Vec<usize> = group
        .iter()
        .zip(deleting)
        .filter(|(_, d)| !**d)
        .map(|(i, _)| *i)
        .collect();
    let mut differ: Vec<String> = Vec::new();
    let mut untracked_only = true;
    for (name, c) in stored.0.iter().zip(stored.1) {
        let mut values: Vec<String> = upserts.iter().map(|&i| show(c, i)).collect();
        values.sort();
        values.dedup();
        if values.len() > 1 {
            differ.push(format!("{name} ({})", values.join(", ")));
            untracked_only &= spec.track_history_except.iter().any(|e| e == name);
        }
    }
    let mut what = Vec::new();
    if deleting.iter().any(|d| *d) && !upserts.is_empty() {
        what.push("one is a delete".to_string());
    }
    if differ.is_empty() && what.is_empty() {
        // Values that differ but print alike (a NaN's payload).
        what.push("they differ in a value that prints alike".to_string());
    } else if !differ.is_empty() {
        let note = if untracked_only {
            " (in track_history_except, so no new version, but silver stores one value of it)"
        } else {
            ""
        };
        what.push(format!("they differ in {}{note}", differ.join(", ")));
    }
    let then = if had_state {
        "the key keeps its earlier state"
    } else {
        "the key had no state before them, so it is not in silver unless a later row gives it one"
    };
    format!(
        "merge: ambiguous tie: {n} rows have {key} and {at}, and {what}; none of them is applied (nothing says which came last) and {then}",
        n = group.len(),
        key = describe_key(&spec.keys, keys, group[0]),
        what = what.join("; ")
    )
}

/// A value as text for messages: `NULL`, `2024-08-02 08:00:00`.
fn show(arr: &ArrayRef, i: usize) -> String {
    let opts = FormatOptions::default()
        .with_null("NULL")
        .with_timestamp_format(Some("%Y-%m-%d %H:%M:%S%.f"));
    ArrayFormatter::try_new(arr.as_ref(), &opts)
        .map(|f| f.value(i).to_string())
        .unwrap_or_default()
}

/// `customer_id=C-203` or `warehouse=W1, item=I-1, bin=NULL`.
pub(crate) fn describe_key(names: &[String], keys: &[ArrayRef], i: usize) -> String {
    names
        .iter()
        .zip(keys)
        .map(|(n, k)| format!("{n}={}", show(k, i)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Is row `i` of `values` a floating-point NaN? A NaN `sequence_by` value
/// is no order (NaN is neither before nor after any number), so such a
/// row is quarantined as a NULL one is, never sorted last by its bits.
pub(crate) fn is_nan(values: &dyn Array, i: usize) -> bool {
    values.is_valid(i)
        && match values.data_type() {
            DataType::Float64 => values.as_primitive::<Float64Type>().value(i).is_nan(),
            DataType::Float32 => values.as_primitive::<Float32Type>().value(i).is_nan(),
            DataType::Float16 => values.as_primitive::<Float16Type>().value(i).is_nan(),
            _ => false,
        }
}

/// Sequence values as they are ordered: equal numbers at one position, so
/// `-0.0` is `0.0` (a tie, never an order by the sign bit).
fn ordered_values(values: &ArrayRef) -> ArrayRef {
    // Adding +0.0 turns -0.0 into +0.0 and changes no other value.
    match values.data_type() {
        DataType::Float64 => Arc::new(
            values
                .as_primitive::<Float64Type>()
                .unary::<_, Float64Type>(|v| v + 0.0),
        ),
        DataType::Float32 => Arc::new(
            values
                .as_primitive::<Float32Type>()
                .unary::<_, Float32Type>(|v| v + 0.0),
        ),
        DataType::Float16 => Arc::new(
            values
                .as_primitive::<Float16Type>()
                .unary::<_, Float16Type>(|v| {
                    if v.to_f32() == 0.0 {
                        Default::default()
                    } else {
                        v
                    }
                }),
        ),
        _ => values.clone(),
    }
}

/// Comparable bytes of sequence values ([`ordered_values`]), one row each.
fn sequence_rows(values: &ArrayRef) -> std::result::Result<Rows, MergeError> {
    rows_of(&[ordered_values(values)])
}

fn rows_of(columns: &[ArrayRef]) -> std::result::Result<Rows, MergeError> {
    let converter = RowConverter::new(
        columns
            .iter()
            .map(|c| SortField::new(c.data_type().clone()))
            .collect(),
    )?;
    Ok(converter.convert_columns(columns)?)
}

/// A schema's columns as `name TYPE` (lineage left out), for messages.
fn describe(schema: &Schema) -> Vec<String> {
    schema
        .fields()
        .iter()
        .filter(|f| !f.name().starts_with('_'))
        .map(|f| {
            let ty = crate::model::ColumnType::from_arrow(f.data_type())
                .map(|t| t.sql_name())
                .unwrap_or_else(|| f.data_type().to_string());
            format!("{} {ty}", f.name())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::Int64Array;

    /// Rows (key, seq, value, batch) with ids `e0`, `e1`, ...
    fn rows(data: &[(Option<&str>, i64, i64, &str)]) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("k", DataType::Utf8, true),
            Field::new("seq", DataType::Int64, false),
            Field::new("v", DataType::Int64, false),
            Field::new("_event_id", DataType::Utf8, false),
            Field::new("_batch_id", DataType::Utf8, false),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(StringArray::from_iter(data.iter().map(|d| d.0))),
                Arc::new(Int64Array::from_iter_values(data.iter().map(|d| d.1))),
                Arc::new(Int64Array::from_iter_values(data.iter().map(|d| d.2))),
                Arc::new(StringArray::from_iter_values(
                    (0..data.len()).map(|i| format!("e{i}")),
                )),
                Arc::new(StringArray::from_iter_values(data.iter().map(|d| d.3))),
            ],
        )
        .unwrap()
    }

    fn spec(seq: bool, snapshots: bool) -> MergeSpec {
        MergeSpec {
            keys: vec!["k".into()],
            sequence_by: seq.then(|| "seq".into()),
            from_snapshots: snapshots,
            null_safe_keys: true,
            ..Default::default()
        }
    }

    fn run(
        spec: &MergeSpec,
        new: &RecordBatch,
        deletes: &[bool],
        base: Option<&RecordBatch>,
        holds: Option<&SnapshotHolds>,
    ) -> Result<Merged, MergeError> {
        merge(MergeInput {
            spec,
            base,
            new,
            deletes: &BooleanArray::from(deletes.to_vec()),
            holds,
        })
    }

    fn values(m: &Merged) -> Vec<(Option<String>, i64)> {
        let k = m
            .batch
            .column(0)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        let v = m
            .batch
            .column(2)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        (0..m.batch.num_rows())
            .map(|i| (k.is_valid(i).then(|| k.value(i).to_string()), v.value(i)))
            .collect()
    }

    #[test]
    fn an_upsert_and_a_delete_at_one_sequence_value_are_a_tie() {
        let new = rows(&[
            (Some("a"), 1, 10, "b1"),
            (Some("a"), 2, 20, "b1"),
            (Some("a"), 2, 20, "b1"),
        ]);
        let m = run(&spec(true, false), &new, &[false, false, true], None, None).unwrap();
        assert_eq!(values(&m), [(Some("a".into()), 10)]);
        assert_eq!(m.ambiguous.len(), 2);
        assert_eq!(
            m.ambiguous[0].reason,
            "merge: ambiguous tie: 2 rows have k=a and seq=2, and one is a delete; none of them is applied (nothing says which came last) and the key keeps its earlier state"
        );
    }

    #[test]
    fn null_key_parts_are_one_key_when_null_safe() {
        let new = rows(&[
            (None, 1, 10, "b1"),
            (None, 2, 20, "b1"),
            (Some("a"), 1, 5, "b1"),
        ]);
        let m = run(&spec(true, false), &new, &[false; 3], None, None).unwrap();
        assert_eq!(values(&m), [(None, 20), (Some("a".into()), 5)]);
        assert_eq!(m.removed.len(), 1);
        assert_eq!(m.removed[0].why, Removed::Superseded);
    }

    #[test]
    fn a_row_not_newer_than_the_table_is_refused() {
        let s = spec(true, false);
        let first = run(&s, &rows(&[(Some("a"), 5, 10, "b1")]), &[false], None, None).unwrap();
        let late = rows(&[(Some("a"), 5, 11, "b2")]);
        assert_eq!(
            run(&s, &late, &[false], Some(&first.batch), None)
                .unwrap_err()
                .to_string(),
            "k=a at seq=5 is not after the rows already merged into the table (up to seq=5): merge all rows from scratch (a full refresh)"
        );
        let state = MergeState::default()
            .observe(&s, &rows(&[(Some("a"), 5, 10, "b1")]))
            .unwrap();
        assert_eq!(
            state.late_row(&s, &late).unwrap().as_deref(),
            Some("k=a at seq=5")
        );
        assert_eq!(
            state
                .late_row(&s, &rows(&[(Some("a"), 6, 1, "b2")]))
                .unwrap(),
            None
        );
        assert_eq!(
            state
                .late_row(&s, &rows(&[(Some("b"), 1, 1, "b2")]))
                .unwrap(),
            None
        );
    }

    #[test]
    fn without_a_sequence_each_batch_is_a_snapshot_in_arrival_order() {
        let s = spec(false, true);
        let new = rows(&[
            (Some("a"), 0, 1, "b1"),
            (Some("b"), 0, 1, "b1"),
            (Some("a"), 0, 2, "b2"),
        ]);
        let m = run(&s, &new, &[false; 3], None, None).unwrap();
        assert_eq!(values(&m), [(Some("a".into()), 2)]);
        let why: Vec<Removed> = m.removed.iter().map(|r| r.why).collect();
        assert_eq!(why, [Removed::Superseded, Removed::Deleted]);
        // b2's snapshot lost a row whose key is unknown: it deletes nothing.
        let holds = SnapshotHolds {
            rows: None,
            batches: HashSet::from(["b2".to_string()]),
        };
        let m = run(&s, &new, &[false; 3], None, Some(&holds)).unwrap();
        assert_eq!(values(&m), [(Some("a".into()), 2), (Some("b".into()), 1)]);
        // Two different rows of one key in one snapshot are a tie.
        let tie = rows(&[(Some("a"), 0, 1, "b1"), (Some("a"), 0, 2, "b1")]);
        let m = run(&s, &tie, &[false; 2], None, None).unwrap();
        assert_eq!(m.batch.num_rows(), 0);
        assert!(m.ambiguous[0]
            .reason
            .contains("k=a and the same snapshot (batch b1)"));
    }

    #[test]
    fn a_held_key_keeps_its_current_version_in_that_snapshot() {
        let s = MergeSpec {
            stored_as: Scd::Scd2,
            ..spec(true, true)
        };
        let new = rows(&[
            (Some("a"), 1, 1, "b1"),
            (Some("b"), 1, 1, "b1"),
            (Some("a"), 2, 1, "b2"),
        ]);
        let m = run(&s, &new, &[false; 3], None, None).unwrap();
        let to = m.batch.column_by_name("valid_to").unwrap().clone();
        assert_eq!(show(&to, 1), "2"); // b closed by snapshot 2
        let holds = SnapshotHolds {
            rows: Some(rows(&[(Some("b"), 2, 99, "b2")])),
            batches: HashSet::new(),
        };
        let m = run(&s, &new, &[false; 3], None, Some(&holds)).unwrap();
        let to = m.batch.column_by_name("valid_to").unwrap().clone();
        assert_eq!((show(&to, 0), show(&to, 1)), ("NULL".into(), "NULL".into()));
    }

    #[test]
    fn a_tie_differing_only_in_an_untracked_column_is_ambiguous_in_either_order() {
        for scd in [Scd::Scd1, Scd::Scd2] {
            let s = MergeSpec {
                stored_as: scd,
                track_history_except: vec!["v".into()],
                ..spec(true, false)
            };
            let one = rows(&[(Some("a"), 1, 1, "b1"), (Some("a"), 1, 2, "b2")]);
            let two = rows(&[(Some("a"), 1, 2, "b2"), (Some("a"), 1, 1, "b1")]);
            let a = run(&s, &one, &[false; 2], None, None).unwrap();
            let b = run(&s, &two, &[false; 2], None, None).unwrap();
            assert_eq!((a.batch.num_rows(), b.batch.num_rows()), (0, 0));
            let reasons = |m: &Merged| {
                m.ambiguous
                    .iter()
                    .map(|r| r.reason.clone())
                    .collect::<Vec<_>>()
            };
            assert_eq!(reasons(&a), reasons(&b));
            assert_eq!(
                a.ambiguous[0].reason,
                "merge: ambiguous tie: 2 rows have k=a and seq=1, and they differ in v (1, 2) (in track_history_except, so no new version, but silver stores one value of it); none of them is applied (nothing says which came last) and the key had no state before them, so it is not in silver unless a later row gives it one"
            );
            // Listed by value (v=1 first), whichever arrived first.
            let ids = |m: &Merged| {
                m.ambiguous
                    .iter()
                    .map(|r| r.event_id.clone())
                    .collect::<Vec<_>>()
            };
            assert_eq!(
                (ids(&a), ids(&b)),
                (
                    vec!["e0".into(), "e1".into()],
                    vec!["e1".into(), "e0".into()]
                )
            );
            // Equal in every column but lineage: duplicates, one stands for them.
            let same = rows(&[(Some("a"), 1, 1, "b1"), (Some("a"), 1, 1, "b2")]);
            let m = run(&s, &same, &[false; 2], None, None).unwrap();
            assert_eq!(
                (m.batch.num_rows(), m.removed[0].why),
                (1, Removed::Duplicate)
            );
        }
    }

    #[test]
    fn a_held_row_without_a_snapshot_value_holds_its_key_in_every_snapshot_of_its_batch() {
        let s = spec(true, true);
        // One file with snapshots 1 and 2; b's row of snapshot 2 was
        // quarantined with a NULL version, c is really gone from snapshot 2.
        let held_rows = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("k", DataType::Utf8, true),
                Field::new("seq", DataType::Int64, true),
                Field::new("_batch_id", DataType::Utf8, false),
            ])),
            vec![
                Arc::new(StringArray::from(vec!["b"])),
                Arc::new(Int64Array::from(vec![None::<i64>])),
                Arc::new(StringArray::from(vec!["f1"])),
            ],
        )
        .unwrap();
        let holds = SnapshotHolds {
            rows: Some(held_rows),
            batches: HashSet::new(),
        };
        for data in [
            [
                (Some("a"), 1, 1, "f1"),
                (Some("b"), 1, 1, "f1"),
                (Some("c"), 1, 1, "f1"),
                (Some("a"), 2, 1, "f1"),
            ],
            [
                (Some("a"), 2, 1, "f1"),
                (Some("a"), 1, 1, "f1"),
                (Some("b"), 1, 1, "f1"),
                (Some("c"), 1, 1, "f1"),
            ],
        ] {
            let m = run(&s, &rows(&data), &[false; 4], None, Some(&holds)).unwrap();
            assert_eq!(values(&m), [(Some("a".into()), 1), (Some("b".into()), 1)]);
        }
    }

    #[test]
    fn conflicting_keys_of_a_merge_source() {
        let b = rows(&[(Some("a"), 1, 1, "x"), (Some("a"), 1, 1, "x")]);
        let same = b.project(&[0, 1, 2]).unwrap();
        assert_eq!(conflicting_key(&same, &["k".into()]).unwrap(), None);
        let b = rows(&[(None, 1, 1, "x"), (None, 1, 2, "x")]);
        assert_eq!(
            conflicting_key(&b, &["k".into()]).unwrap().as_deref(),
            Some("k=NULL")
        );
        // Of several conflicting keys the smallest is named, in any row order.
        for data in [
            [
                (Some("b"), 1, 1, "x"),
                (Some("b"), 1, 2, "x"),
                (Some("a"), 1, 1, "x"),
                (Some("a"), 1, 2, "x"),
            ],
            [
                (Some("a"), 1, 2, "x"),
                (Some("b"), 1, 1, "x"),
                (Some("a"), 1, 1, "x"),
                (Some("b"), 1, 2, "x"),
            ],
        ] {
            let b = rows(&data).project(&[0, 1, 2]).unwrap();
            assert_eq!(
                conflicting_key(&b, &["k".into()]).unwrap().as_deref(),
                Some("k=a")
            );
        }
    }

    #[test]
    fn a_null_key_names_the_column_and_the_row() {
        let e = MergeError::NullKey {
            column: "customer_id".into(),
            key: "customer_id=NULL, region=EU".into(),
        };
        assert_eq!(
            e.to_string(),
            "customer_id is NULL in a row (customer_id=NULL, region=EU): merge keys must not be NULL (such rows go to the quarantine), or set null_safe_keys so that NULL equals NULL"
        );
    }
}
