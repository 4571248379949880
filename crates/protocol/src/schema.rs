//! Declared source schemas: the columns silver reads a bronze table with
//! (the "explicit schema" of seed 001), their types and time-zone policies.

use serde::{Deserialize, Serialize};

/// Column types a source schema (or a typed normalization) can declare,
/// named as in Spark SQL / seed 002. Written as text in the JSON form:
/// `"STRING"`, `"INT"`, `"BIGINT"`, `"DOUBLE"`, `"DECIMAL(10,2)"`,
/// `"TIMESTAMP"`, `"DATE"`, `"BOOLEAN"` (also accepted: `INTEGER`, `LONG`,
/// `FLOAT`, `VARCHAR`, `TEXT`, `BOOL`, `NUMERIC(p,s)`, any case).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    String,
    Int,
    Bigint,
    Double,
    /// Exact decimal: `precision` digits in all (1–38), `scale` after the point
    /// (seed 003 §4: `amount DECIMAL(10,2)`). A text with more decimals than
    /// `scale` does not convert (it is never rounded).
    Decimal {
        precision: u8,
        scale: i8,
    },
    /// Timestamp in UTC, microsecond precision, stored without a zone: a text
    /// with an offset (`+03:00`, `Z`) is converted to UTC; a text without one
    /// is a local time in the column's declared `time_zone`, or else taken as
    /// UTC and counted ([`ReadAsUtc`]).
    Timestamp,
    Date,
    Boolean,
}

impl ColumnType {
    /// Is this a number type (where a decimal separator applies)?
    pub fn is_numeric(self) -> bool {
        matches!(
            self,
            ColumnType::Int | ColumnType::Bigint | ColumnType::Double | ColumnType::Decimal { .. }
        )
    }

    /// SQL name shown to users (`BIGINT`, `DECIMAL(10,2)`, ...).
    pub fn sql_name(self) -> String {
        match self {
            ColumnType::String => "STRING".into(),
            ColumnType::Int => "INT".into(),
            ColumnType::Bigint => "BIGINT".into(),
            ColumnType::Double => "DOUBLE".into(),
            ColumnType::Decimal { precision, scale } => format!("DECIMAL({precision},{scale})"),
            ColumnType::Timestamp => "TIMESTAMP".into(),
            ColumnType::Date => "DATE".into(),
            ColumnType::Boolean => "BOOLEAN".into(),
        }
    }
}

impl std::fmt::Display for ColumnType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.sql_name())
    }
}

impl std::str::FromStr for ColumnType {
    type Err = String;

    /// Parses `DECIMAL(10,2)`, `bigint`, ... (see the type's doc for the names).
    fn from_str(text: &str) -> std::result::Result<Self, String> {
        let t = text.trim().to_ascii_uppercase();
        let simple = match t.as_str() {
            "STRING" | "VARCHAR" | "TEXT" => Some(ColumnType::String),
            "INT" | "INTEGER" => Some(ColumnType::Int),
            "BIGINT" | "LONG" => Some(ColumnType::Bigint),
            "DOUBLE" | "FLOAT" => Some(ColumnType::Double),
            "TIMESTAMP" => Some(ColumnType::Timestamp),
            "DATE" => Some(ColumnType::Date),
            "BOOLEAN" | "BOOL" => Some(ColumnType::Boolean),
            _ => None,
        };
        if let Some(s) = simple {
            return Ok(s);
        }
        let args = t
            .strip_prefix("DECIMAL")
            .or_else(|| t.strip_prefix("NUMERIC"))
            .map(str::trim);
        let bad = || {
            format!(
                "unknown type {text:?}: use STRING, INT, BIGINT, DOUBLE, DECIMAL(p,s), TIMESTAMP, DATE or BOOLEAN"
            )
        };
        let args = args.ok_or_else(bad)?;
        let (precision, scale) = if args.is_empty() {
            (10, 0) // Spark's DECIMAL without arguments
        } else {
            let inner = args
                .strip_prefix('(')
                .and_then(|a| a.strip_suffix(')'))
                .ok_or_else(bad)?;
            let (p, s) = inner.split_once(',').unwrap_or((inner, "0"));
            let p: u8 = p.trim().parse().map_err(|_| bad())?;
            let s: i8 = s.trim().parse().map_err(|_| bad())?;
            (p, s)
        };
        if !(1..=38).contains(&precision) || scale < 0 || scale as u8 > precision {
            return Err(format!(
                "{text}: a DECIMAL has 1 to 38 digits (precision) and 0 to precision of them after the point (scale)"
            ));
        }
        Ok(ColumnType::Decimal { precision, scale })
    }
}

impl Serialize for ColumnType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.sql_name())
    }
}

impl<'de> Deserialize<'de> for ColumnType {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// One declared column of a source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceColumn {
    pub name: String,
    #[serde(rename = "type")]
    pub data_type: ColumnType,
    /// Where a JSON record holds the value, as dot-separated keys
    /// (`after.price`, `source.lsn`); unset: the key `name`. CSV reads the
    /// header column `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Declared text formats, tried in order (see the engine's `convert` module):
    /// for TIMESTAMP / DATE a chrono pattern (`%d/%m/%Y %H:%M`), a Spark
    /// pattern (`MM/dd/yyyy HH:mm`) or `epoch_ms` / `epoch_s`; for DECIMAL
    /// `base64` (Debezium's bytes encoding). Empty: the type's standard text form.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub formats: Vec<String>,
    /// TIMESTAMP only: the IANA time zone (`America/New_York`,
    /// `Europe/Berlin`, `UTC`) of texts that carry no offset (the standard
    /// form and declared formats without an offset letter): they are local
    /// wall-clock times there and are converted to UTC. A text with its own
    /// offset (`+01:00`, `Z`) ignores the zone; epoch formats are UTC.
    /// Unset: a text without an offset is taken as UTC and counted
    /// ([`ReadAsUtc`]). An unknown name refuses the pipeline at load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    /// With `time_zone`: how a local time in the repeated hour (clocks going
    /// back) is read. Default `reject` (quarantined with the reason).
    #[serde(default, skip_serializing_if = "AmbiguousTime::is_default")]
    pub ambiguous: AmbiguousTime,
    /// With `time_zone`: how a local time in the skipped hour (clocks going
    /// forward) is read. Default `reject` (quarantined with the reason).
    #[serde(default, skip_serializing_if = "NonexistentTime::is_default")]
    pub nonexistent: NonexistentTime,
}

/// Which instant a local time in a repeated hour is (a TIMESTAMP column with
/// a `time_zone`, when clocks go back: in America/New_York on 2024-11-03,
/// 01:30 happened at 05:30Z and again at 06:30Z). The names follow pandas'
/// `tz_localize(ambiguous=...)`; JSON `"earlier"`, `"later"`,
/// `"arrival_order"`, `"reject"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum AmbiguousTime {
    /// The first occurrence (the offset before the change, e.g. EDT).
    Earlier,
    /// The second occurrence (the offset after the change, e.g. EST).
    Later,
    /// Rows are taken as chronological in their batch (file): a local time
    /// inside the repeated hour is read with the earlier offset until a row
    /// inside that same hour shows a time not later than one already seen
    /// there (the clock went back); from that row on, the later offset.
    /// The scope is one batch and one column: each batch starts afresh, so
    /// reading a batch again (replay, incremental runs, row trails) gives
    /// the same instants. Like pandas' `ambiguous="infer"`, but decided row
    /// by row in file order.
    ArrivalOrder,
    /// Not guessed: the row goes to the quarantine with the reason (the default).
    #[default]
    Reject,
}

impl AmbiguousTime {
    fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// How a local time in a skipped hour is read (a TIMESTAMP column with a
/// `time_zone`, when clocks go forward: in America/New_York on 2024-03-10,
/// 02:00–03:00 never happened). JSON `"shift_forward"`, `"reject"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum NonexistentTime {
    /// Moved later by the length of the gap, as `java.time.ZonedDateTime.of`
    /// (and so Spark) reads it: 02:30 → 03:30 local (07:30Z in New York);
    /// the instant is the local time minus the offset before the gap.
    ShiftForward,
    /// Not guessed: the row goes to the quarantine with the reason (the default).
    #[default]
    Reject,
}

impl NonexistentTime {
    fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

impl SourceColumn {
    /// A column read from the key / header `name` in the type's standard form.
    pub fn new(name: &str, data_type: ColumnType) -> Self {
        Self {
            name: name.to_string(),
            data_type,
            path: None,
            formats: vec![],
            time_zone: None,
            ambiguous: AmbiguousTime::default(),
            nonexistent: NonexistentTime::default(),
        }
    }

    /// The same column read as local times in the IANA zone `zone`, with
    /// these policies for repeated and skipped local times.
    pub fn zoned(
        mut self,
        zone: &str,
        ambiguous: AmbiguousTime,
        nonexistent: NonexistentTime,
    ) -> Self {
        self.time_zone = Some(zone.to_string());
        self.ambiguous = ambiguous;
        self.nonexistent = nonexistent;
        self
    }

    /// The same column read from the JSON path `path` (`after.price`).
    pub fn at(mut self, path: &str) -> Self {
        self.path = Some(path.to_string());
        self
    }

    /// The same column with declared text formats.
    pub fn formats(mut self, formats: &[&str]) -> Self {
        self.formats = formats.iter().map(|f| f.to_string()).collect();
        self
    }
}

/// The schema silver reads a bronze table with (the "explicit schema" of seed 001).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct SourceSchema {
    pub columns: Vec<SourceColumn>,
}

impl SourceSchema {
    /// Builds a schema from `(name, type)` pairs.
    pub fn new(cols: &[(&str, ColumnType)]) -> Self {
        Self {
            columns: cols.iter().map(|(n, t)| SourceColumn::new(n, *t)).collect(),
        }
    }

    /// Declared column names, in order.
    pub fn column_names(&self) -> Vec<String> {
        self.columns.iter().map(|c| c.name.clone()).collect()
    }
}

/// A TIMESTAMP source column without a declared `time_zone` whose values
/// carried no offset and were taken as UTC: how many of how many. Only
/// columns with at least one such value are listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadAsUtc {
    pub column: String,
    /// Values without an offset (`2024-02-01T09:00:00`), read as UTC.
    pub without_offset: usize,
    /// Non-NULL values of the column that were read (rows that reached silver's rules).
    pub values: usize,
}
