//! A child silver table: one row per element of a JSON array of each
//! bronze record.

use serde::{Deserialize, Serialize};

use crate::schema::SourceColumn;

/// How a silver table explodes an array of its bronze records (the
/// `explode` field of a silver table). JSON form:
///
/// ```json
/// "explode": {
///   "path": "lines",
///   "parent_columns": ["order_id"],
///   "position_column": "position",
///   "columns": [
///     {"name": "sku", "type": "STRING"},
///     {"name": "qty", "type": "INT"},
///     {"name": "price", "type": "DECIMAL(10,2)"}
///   ],
///   "outer": false,
///   "state_column": "lines_state"
/// }
/// ```
///
/// The table's columns, before its rules: the parent columns (their
/// declared types), the position (INT), the state column if named (STRING),
/// then the element columns (their declared types).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExplodeSpec {
    /// Where each record holds the array, as dot-separated keys (`lines`,
    /// `order.items`), matched exactly or else ignoring case, as
    /// [`SourceColumn::path`].
    pub path: String,
    /// Declared columns of the bronze table's source schema copied onto every
    /// element row (the parent key, e.g. `order_id`), read with their
    /// declared type, path and formats.
    #[serde(default)]
    pub parent_columns: Vec<String>,
    /// Name of the INT column holding the element's position in the array,
    /// from 0 (as Spark's `posexplode`); NULL on a row an outer explode adds
    /// for a record without elements. Default `position`.
    #[serde(default = "default_position")]
    pub position_column: String,
    /// The element's fields, typed: `path` is relative to the element (unset:
    /// the key `name`); `"$"` is the element itself (an array of scalars).
    pub columns: Vec<SourceColumn>,
    /// Outer explode (Spark's `posexplode_outer`): a record whose array is
    /// empty, `null` or missing gives one row with NULL position and element
    /// columns. Default false: such a record gives no row.
    #[serde(default)]
    pub outer: bool,
    /// If set, a STRING column with what the record held at `path`: `array`
    /// (a row of an element), or on an outer explode's added row `empty`
    /// (`[]`), `null` (JSON `null`) or `missing` (no such key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_column: Option<String>,
}

fn default_position() -> String {
    "position".into()
}

/// What an explode read, for the table's card and the reconciliation
/// check. Counts are of bronze records unless they say elements or rows; an
/// incremental run adds its counts to the previous run's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ExplodeStats {
    /// Bronze records read.
    pub records: usize,
    /// Records whose array has at least one element.
    pub with_elements: usize,
    /// Elements of those arrays (each one a row or a quarantine row).
    pub elements: usize,
    /// Records whose array is `[]`.
    pub empty: usize,
    /// Records whose array is JSON `null`.
    pub null: usize,
    /// Records without the array's key.
    pub missing: usize,
    /// Records quarantined whole (not readable, not an array, a parent
    /// column that does not convert).
    pub unreadable: usize,
    /// Rows the explode handed on or quarantined: `elements`, plus `empty +
    /// null + missing` when outer, plus `unreadable`. The reconciliation
    /// check compares this with silver + quarantine + removed.
    pub rows: usize,
}

impl ExplodeStats {
    fn add(&mut self, o: &ExplodeStats) {
        self.records += o.records;
        self.with_elements += o.with_elements;
        self.elements += o.elements;
        self.empty += o.empty;
        self.null += o.null;
        self.missing += o.missing;
        self.unreadable += o.unreadable;
        self.rows += o.rows;
    }

    /// The counts of a previous run plus these (an incremental run).
    pub fn plus(mut self, previous: Option<&ExplodeStats>) -> ExplodeStats {
        if let Some(p) = previous {
            self.add(p);
        }
        self
    }
}
