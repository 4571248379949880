//! Strict conversion of texts to declared column types: the schema
//! enforcement of seed `003_d5c9e63b9bc06e62.txt` §4 ("no STRING for numbers",
//! `amount DECIMAL(10,2)`, timestamps in one zone) and the explicit schemas of
//! seed `001_ae16f07f217e9df3.txt`.
//!
//! A value either converts exactly or is reported with the column, the text
//! and why (`amount: '12.345' is not DECIMAL(10,2) (3 decimals; silver never
//! rounds)`): never a silent NULL, never a rounded or rolled-over value.
//! - Integers accept an integral exponent form (`"5.0000002E+8"` → 500000020)
//!   and refuse fractions and out-of-range values.
//! - DECIMAL(p,s) is parsed exactly (exponent form allowed); digits beyond `s`
//!   that are not zero, or more than `p - s` digits before the point, refuse
//!   the value. Format `base64`: Debezium's encoding of a decimal (big-endian
//!   two's-complement unscaled bytes, the scale from the declared type).
//! - TIMESTAMP without declared formats takes the ISO-8601 / RFC 3339
//!   spellings ([`parse_iso_timestamp`]): `2024-02-01`, then optionally `T`
//!   or a space and `HH:MM`, `:SS`, `.f` (up to 9 digits, only zeros past
//!   microseconds), then optionally an offset `Z`, `+01:00`, `-0500` or
//!   `+01`. A text with an offset is converted to UTC. Anything else does not
//!   convert (`ts: '03/01/2024' is not TIMESTAMP`). DATE without formats
//!   takes Arrow's standard form (`2024-03-01`), or an ISO timestamp at
//!   midnight without an offset (`2024-03-01 00:00:00`).
//! - A DATE is never cut out of a timestamp: a text with a time of day other
//!   than midnight ([`DATE_WITH_TIME`]) or with an offset, which could shift
//!   its date ([`DATE_WITH_OFFSET`]), does not convert, with or without
//!   declared formats; an epoch value converts only on a UTC day boundary.
//! - With declared formats, only those: a chrono pattern (`%d/%m/%Y %H:%M`),
//!   a Spark pattern (`MM/dd/yyyy HH:mm`, offsets with `XXX` etc., see
//!   [`check_formats`]), or `epoch_ms`, `epoch_s`, `epoch_us` (UTC by
//!   definition). Impossible dates (`2024-02-30`) never roll over.
//! - A TIMESTAMP text without an offset is a local time: in the column's
//!   declared `time_zone` (IANA, chrono-tz), with its policies for repeated
//!   and skipped local times ([`AmbiguousTime`], [`NonexistentTime`]); without
//!   a zone it is taken as UTC and counted ([`Converted::read_as_utc`]), so
//!   the run can say how many values carried no offset.

use std::collections::HashMap;
use std::sync::Arc;

use base64::Engine as _;
use chrono::{
    DateTime, MappedLocalTime, NaiveDate, NaiveDateTime, NaiveTime, Offset, TimeZone, Timelike,
};
use chrono_tz::Tz;
use datafusion::arrow::array::{
    Array, ArrayRef, Date32Array, Decimal128Array, Float64Array, Int32Array, Int64Array,
    StringArray, TimestampMicrosecondArray,
};
use datafusion::arrow::compute::{cast_with_options, CastOptions};

use crate::error::{EngineError, Result};
use crate::model::{AmbiguousTime, ArrowColumnType, ColumnType, NonexistentTime, SourceColumn};

/// Why a column's declaration cannot convert its texts: an unknown time
/// zone or a declared format this reader cannot follow. Refuses the schema
/// (or the run), naming the column ([`ConvertError::InColumn`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConvertError {
    /// `name` is no IANA time zone; `close`: the one whose name it matches
    /// ignoring case and with `_` for spaces, if any.
    #[error("unknown time zone '{name}'{}: use an IANA name, Area/Location as in America/New_York, Europe/Berlin or Asia/Tokyo, or UTC (abbreviations such as PST or CEST do not say when daylight saving applies)", did_you_mean(.close))]
    UnknownTimeZone { name: String, close: Option<String> },
    /// A chrono format with `%Z`, which skips a zone name without reading it.
    #[error("format {format:?}: %Z would skip a zone name without reading it; use %z, %:z or %#z for an offset, or declare the column's time_zone")]
    SkipsZoneName { format: String },
    /// A Spark format with a quote that is not closed.
    #[error("format {format:?}: a quote (') is not closed")]
    UnclosedQuote { format: String },
    /// A Spark format with zone-name letters (`letters`, e.g. `z` or `VV`).
    #[error("format {format:?}: zone names ({letters}) are not read; declare the column's time_zone (an IANA name such as America/New_York) for local times, or read offsets with XXX")]
    ZoneNames { format: String, letters: String },
    /// A Spark format with pattern letters this reader does not map.
    #[error("format {format:?}: the pattern letters {letters} are not supported here (supported: yyyy yy MM M dd d HH H hh h mm m ss s SSS SSSSSS SSSSSSSSS a XXX XX X xxx xx x Z ZZZZZ; quote literal text as in 'T')")]
    UnsupportedLetters { format: String, letters: String },
    /// One of the above in the declaration of column `column`.
    #[error("column {column}: {error}")]
    InColumn {
        column: String,
        #[source]
        error: Box<ConvertError>,
    },
}

impl ConvertError {
    /// This error, said of declared column `column`.
    pub fn in_column(self, column: &str) -> ConvertError {
        ConvertError::InColumn {
            column: column.to_string(),
            error: Box::new(self),
        }
    }
}

impl From<ConvertError> for EngineError {
    fn from(e: ConvertError) -> Self {
        EngineError::Request(e.to_string())
    }
}

/// ` (did you mean America/New_York?)`, or nothing.
fn did_you_mean(close: &Option<String>) -> String {
    close
        .as_ref()
        .map(|tz| format!(" (did you mean {tz}?)"))
        .unwrap_or_default()
}

/// Why a text is not a TIMESTAMP value. Its text completes a quarantine
/// reason `ts: '<text>' is …` (`not TIMESTAMP (declared formats: …)`,
/// `a nonexistent local time in …`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimestampError {
    /// Not one of the ISO-8601 / RFC 3339 spellings, or an impossible date
    /// or time (`2024-02-30`, `25:00`).
    #[error("not TIMESTAMP")]
    NotIso,
    /// Digits past microseconds that are not zeros.
    #[error("not TIMESTAMP{}", SUB_MICROS)]
    SubMicros,
    /// Matches none of the column's declared `formats`.
    #[error("not TIMESTAMP{}", listed_formats(.formats))]
    NotInFormats { formats: Vec<String> },
    /// A local time that happened twice in `zone` (the clocks went back at
    /// `back_at` to `back_to`, from UTC offset `before` to `after`, in
    /// seconds), with `ambiguous: reject`.
    #[error("an ambiguous local time in {zone} (clocks went back from {} to {} on {}, so {}–{} happened twice, at UTC{} and at UTC{}; set ambiguous to earlier, later or arrival_order to choose)", hm(.back_at), hm(.back_to), .back_to.date(), hm(.back_to), hm(.back_at), offset_text(.before), offset_text(.after))]
    Ambiguous {
        zone: Tz,
        back_at: NaiveDateTime,
        back_to: NaiveDateTime,
        before: i32,
        after: i32,
    },
    /// A local time that never happened in `zone`: the clocks skipped
    /// `skipped` (from, to) if known; `shift_forward`: what the policy
    /// `shift_forward` would read it as (said with `nonexistent: reject`).
    #[error("a nonexistent local time in {zone}{}{})", skipped_text(.skipped), shift_hint(.shift_forward))]
    Nonexistent {
        zone: Tz,
        skipped: Option<(NaiveDateTime, NaiveDateTime)>,
        shift_forward: Option<NaiveDateTime>,
    },
}

/// ` (clocks skipped 02:00–03:00 on 2024-03-10` (closed by the message).
fn skipped_text(skipped: &Option<(NaiveDateTime, NaiveDateTime)>) -> String {
    match skipped {
        Some((from, to)) => format!(
            " (clocks skipped {}–{} on {}",
            hm(from),
            hm(to),
            from.date()
        ),
        None => " (clocks skipped this time".to_string(),
    }
}

/// `; nonexistent: shift_forward would read it as 03:30`, or nothing.
fn shift_hint(shift_forward: &Option<NaiveDateTime>) -> String {
    shift_forward
        .as_ref()
        .map(|at| format!("; nonexistent: shift_forward would read it as {}", hm(at)))
        .unwrap_or_default()
}

/// One column converted to its declared type.
#[derive(Debug, Clone)]
pub struct Converted {
    /// The typed array: NULL where the text is NULL or did not convert.
    pub array: ArrayRef,
    /// Per row, why the text did not convert (`qty: 'three' is not INT`).
    pub errors: Vec<Option<String>>,
    /// Per row: a TIMESTAMP text that carried no offset and was taken as UTC
    /// because the column declares no `time_zone` (always false elsewhere).
    pub read_as_utc: Vec<bool>,
}

/// How a TIMESTAMP column reads texts without an offset: local times in `zone`.
#[derive(Debug, Clone, Copy)]
pub struct LocalTimes {
    pub zone: Tz,
    pub ambiguous: AmbiguousTime,
    pub nonexistent: NonexistentTime,
}

/// The IANA time zone named `name` (`America/New_York`, `Europe/Berlin`,
/// `UTC`), from chrono-tz's copy of the tz database. An unknown name is an
/// error that suggests the IANA form and, where one matches ignoring case
/// and spaces, the right spelling.
pub fn time_zone(name: &str) -> std::result::Result<Tz, ConvertError> {
    if let Ok(tz) = name.trim().parse::<Tz>() {
        return Ok(tz);
    }
    let wanted = name.trim().replace(' ', "_");
    let close = chrono_tz::TZ_VARIANTS
        .iter()
        .find(|tz| tz.name().eq_ignore_ascii_case(&wanted))
        .map(|tz| tz.name().to_string());
    Err(ConvertError::UnknownTimeZone {
        name: name.to_string(),
        close,
    })
}

/// Converts one declared source column's texts, with its formats and, for a
/// TIMESTAMP, its time zone and policies. A repeated local time read in
/// arrival order is decided over `texts` in order, so pass one batch at a
/// time. Errors: an unknown zone name or an unusable declared format, naming
/// the column.
pub fn convert_source_column(col: &SourceColumn, texts: &StringArray) -> Result<Converted> {
    let local = match &col.time_zone {
        Some(zone) if col.data_type == ColumnType::Timestamp => Some(LocalTimes {
            zone: time_zone(zone).map_err(|e| e.in_column(&col.name))?,
            ambiguous: col.ambiguous,
            nonexistent: col.nonexistent,
        }),
        _ => None,
    };
    convert(
        &col.name,
        texts,
        col.data_type,
        &col.formats,
        local.as_ref(),
    )
}

/// Converts `texts` (one column) to `ty`. Returns the typed array (NULL
/// where the text is NULL or did not convert) and, per row, the message for a
/// text that did not convert, prefixed with `name`. A TIMESTAMP text without
/// an offset is taken as UTC (see [`convert_source_column`] for zones).
pub fn convert_column(
    name: &str,
    texts: &StringArray,
    ty: ColumnType,
    formats: &[String],
) -> Result<(ArrayRef, Vec<Option<String>>)> {
    let c = convert(name, texts, ty, formats, None)?;
    Ok((c.array, c.errors))
}

fn convert(
    name: &str,
    texts: &StringArray,
    ty: ColumnType,
    formats: &[String],
    local: Option<&LocalTimes>,
) -> Result<Converted> {
    let n = texts.len();
    let mut read_as_utc = vec![false; n];
    let mut errors: Vec<Option<String>> = vec![None; n];
    let mut fail = |row: usize, detail: String| {
        errors[row] = Some(format!(
            "{name}: '{}' is not {ty}{detail}",
            texts.value(row)
        ));
    };
    let values = |row: usize| texts.is_valid(row).then(|| texts.value(row));
    let array: ArrayRef = match ty {
        ColumnType::Int | ColumnType::Bigint => {
            let fast = arrow_cast(texts, ty)?;
            let (lo, hi) = if ty == ColumnType::Int {
                (i32::MIN as i128, i32::MAX as i128)
            } else {
                (i64::MIN as i128, i64::MAX as i128)
            };
            let mut out: Vec<Option<i64>> = Vec::with_capacity(n);
            for row in 0..n {
                let Some(text) = values(row) else {
                    out.push(None);
                    continue;
                };
                if fast.is_valid(row) {
                    out.push(Some(integer_at(&fast, row)));
                    continue;
                }
                match parse_decimal_exact(text, 38, 0) {
                    Ok(v) if (lo..=hi).contains(&v) => out.push(Some(v as i64)),
                    Ok(_) => {
                        fail(row, " (out of range)".into());
                        out.push(None)
                    }
                    Err(DecimalError::Rounded(_)) => {
                        fail(row, " (not a whole number)".into());
                        out.push(None)
                    }
                    Err(DecimalError::TooManyDigits(_)) => {
                        fail(row, " (out of range)".into());
                        out.push(None)
                    }
                    Err(DecimalError::NotANumber) => {
                        fail(row, String::new());
                        out.push(None)
                    }
                }
            }
            if ty == ColumnType::Int {
                Arc::new(Int32Array::from_iter(
                    out.into_iter().map(|v| v.map(|v| v as i32)),
                ))
            } else {
                Arc::new(Int64Array::from(out))
            }
        }
        ColumnType::Decimal { precision, scale } => {
            let base64 = formats.iter().any(|f| f.eq_ignore_ascii_case("base64"));
            let mut out: Vec<Option<i128>> = Vec::with_capacity(n);
            for row in 0..n {
                let Some(text) = values(row) else {
                    out.push(None);
                    continue;
                };
                let parsed = if base64 {
                    decode_base64_decimal(text, precision)
                } else {
                    parse_decimal_exact(text, precision, scale)
                };
                match parsed {
                    Ok(v) => out.push(Some(v)),
                    Err(e) => {
                        fail(row, e.detail(precision, scale, base64));
                        out.push(None)
                    }
                }
            }
            Arc::new(Decimal128Array::from(out).with_precision_and_scale(precision, scale)?)
        }
        ColumnType::Date => {
            let patterns = patterns_of(name, formats)?;
            let listed = listed_formats(formats);
            // Without formats, Arrow's reading of the forms without a time part.
            let fast = match formats.is_empty() {
                true => Some(arrow_cast(texts, ty)?),
                false => None,
            };
            let fast = fast
                .as_ref()
                .and_then(|a| a.as_any().downcast_ref::<Date32Array>());
            let mut timestamps: Vec<(usize, &str)> = Vec::new();
            let mut days: Vec<Option<i32>> = Vec::with_capacity(n);
            for row in 0..n {
                let Some(text) = values(row) else {
                    days.push(None);
                    continue;
                };
                let read = match fast {
                    Some(fast) => date_from_text(text, fast.is_valid(row).then(|| fast.value(row))),
                    None => patterns
                        .iter()
                        .find_map(|p| p.parse(text.trim()).map(|r| (r, p.is_epoch())))
                        .map_or_else(|| Err(DateError::Not(listed.clone())), date_of),
                };
                match read {
                    Ok(d) => days.push(Some(d)),
                    Err(DateError::Not(detail)) => {
                        fail(row, detail);
                        days.push(None)
                    }
                    Err(DateError::Timestamp(why)) => {
                        timestamps.push((row, why));
                        days.push(None)
                    }
                }
            }
            for (row, why) in timestamps {
                errors[row] = Some(format!("{name}: '{}' {why}", texts.value(row)));
            }
            Arc::new(Date32Array::from(days))
        }
        ColumnType::Timestamp => {
            let patterns = patterns_of(name, formats)?;
            let mut folds = Folds::default();
            let mut local_errors: Vec<(usize, TimestampError)> = Vec::new();
            let mut micros: Vec<Option<i64>> = Vec::with_capacity(n);
            for (row, utc) in read_as_utc.iter_mut().enumerate() {
                let Some(text) = values(row) else {
                    micros.push(None);
                    continue;
                };
                let reading = if patterns.is_empty() {
                    parse_iso_timestamp(text)
                } else {
                    let text = text.trim();
                    patterns.iter().find_map(|p| p.parse(text)).ok_or_else(|| {
                        TimestampError::NotInFormats {
                            formats: formats.to_vec(),
                        }
                    })
                };
                let value = match reading {
                    Err(e) => Err(e),
                    Ok(Reading::Instant(v)) => Ok(v),
                    Ok(Reading::Local(t)) if t.nanosecond() % 1_000 != 0 => {
                        Err(TimestampError::SubMicros)
                    }
                    Ok(Reading::Local(t)) => match local {
                        None => {
                            *utc = true;
                            Ok(t.and_utc().timestamp_micros())
                        }
                        Some(lt) => match resolve_local(lt, t, &mut folds) {
                            Ok(v) => Ok(v),
                            Err(why) => {
                                local_errors.push((row, why));
                                micros.push(None);
                                continue;
                            }
                        },
                    },
                };
                match value {
                    Ok(v) => micros.push(Some(v)),
                    Err(e) => {
                        local_errors.push((row, e));
                        micros.push(None)
                    }
                }
            }
            for (row, why) in local_errors {
                errors[row] = Some(format!("{name}: '{}' is {why}", texts.value(row)));
            }
            Arc::new(TimestampMicrosecondArray::from(micros))
        }
        ColumnType::Double => {
            let out = arrow_cast(texts, ty)?;
            let doubles = out
                .as_any()
                .downcast_ref::<Float64Array>()
                .ok_or_else(|| EngineError::Internal("a DOUBLE cast gave no Float64 array".into()))?;
            // A value that did not fit is NULL beside its message, never ±inf or 0.
            let kept: Float64Array = (0..n)
                .map(|row| {
                    if !texts.is_valid(row) {
                        return None;
                    }
                    if doubles.is_null(row) {
                        fail(row, String::new());
                        return None;
                    }
                    let v = doubles.value(row);
                    match double_out_of_range(texts.value(row), v) {
                        Some(why) => {
                            fail(row, why.into());
                            None
                        }
                        None => Some(v),
                    }
                })
                .collect();
            Arc::new(kept)
        }
        _ => {
            let out = arrow_cast(texts, ty)?;
            for row in 0..n {
                if texts.is_valid(row) && out.is_null(row) {
                    fail(row, String::new());
                }
            }
            out
        }
    };
    Ok(Converted {
        array,
        errors,
        read_as_utc,
    })
}

/// The declared formats of column `name`, parsed.
fn patterns_of(name: &str, formats: &[String]) -> Result<Vec<Pattern>> {
    formats
        .iter()
        .map(|f| Pattern::new(f))
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| e.in_column(name).into())
}

/// " (declared formats: a, b)" for a message, or nothing.
fn listed_formats(formats: &[String]) -> String {
    if formats.is_empty() {
        String::new()
    } else {
        format!(" (declared formats: {})", formats.join(", "))
    }
}

/// Completes "'<text>' …" for a DATE text with a time of day.
pub const DATE_WITH_TIME: &str =
    "is a timestamp, not a DATE (declare the column TIMESTAMP, or CAST it in a rule)";
/// Completes "'<text>' …" for a DATE text with an offset (`Z`, `-05:00`).
pub const DATE_WITH_OFFSET: &str = "is a timestamp with an offset, not a DATE (its date depends on the time zone; declare the column TIMESTAMP, or CAST it in a rule)";

const DAY_MICROS: i64 = 86_400_000_000;

/// Why a text is not a DATE.
enum DateError {
    /// Not a date at all: the detail after "is not DATE".
    Not(String),
    /// A timestamp ([`DATE_WITH_TIME`], [`DATE_WITH_OFFSET`]).
    Timestamp(&'static str),
}

/// A DATE text without declared formats: Arrow's forms without a time part
/// (`2024-03-01`, `20240301`, `+10999-12-31`; `arrow` is Arrow's reading),
/// or an ISO-8601 timestamp at midnight without an offset
/// (`2024-03-01 00:00:00`), read as the date it writes. A time of day other
/// than midnight, or any offset, is a timestamp: its date is never cut or
/// shifted out of it. Days since 1970-01-01.
fn date_from_text(text: &str, arrow: Option<i32>) -> std::result::Result<i32, DateError> {
    // Arrow reads a longer text without a sign as a timestamp (and takes its UTC date).
    if text.len() <= 10 || text.starts_with(['+', '-']) {
        return arrow.ok_or(DateError::Not(String::new()));
    }
    match parse_iso_timestamp(text) {
        Ok(r) => date_of((r, false)),
        Err(_) if arrow.is_some() => Err(DateError::Timestamp(DATE_WITH_TIME)),
        Err(TimestampError::SubMicros) => Err(DateError::Timestamp(DATE_WITH_TIME)),
        Err(_) => Err(DateError::Not(String::new())),
    }
}

/// The date a reading writes (days since 1970-01-01): a local time at
/// midnight; an epoch value (`epoch`) on a UTC day boundary. Any other time
/// of day, or an instant read from an offset, is a timestamp.
fn date_of((reading, epoch): (Reading, bool)) -> std::result::Result<i32, DateError> {
    let days = match reading {
        Reading::Local(t) if t.time() == NaiveTime::MIN => {
            t.and_utc().timestamp().div_euclid(86_400)
        }
        Reading::Local(_) => return Err(DateError::Timestamp(DATE_WITH_TIME)),
        Reading::Instant(v) if epoch && v.rem_euclid(DAY_MICROS) == 0 => v.div_euclid(DAY_MICROS),
        Reading::Instant(_) if epoch => return Err(DateError::Timestamp(DATE_WITH_TIME)),
        Reading::Instant(_) => return Err(DateError::Timestamp(DATE_WITH_OFFSET)),
    };
    i32::try_from(days).map_err(|_| DateError::Not(" (out of range)".into()))
}

/// Why `text`, read as the DOUBLE `value`, does not fit a DOUBLE: a number
/// past ±1.7976931348623157e308 reads as ±infinity, one nearer to 0 than
/// 4.9e-324 reads as 0, and either would be a different value stored
/// silently. Texts that spell infinity (`inf`, `-Infinity`) or zero
/// (`0.0e-999`) are what they say.
pub fn double_out_of_range(text: &str, value: f64) -> Option<&'static str> {
    let t = text.trim();
    let unsigned = t.trim_start_matches(['+', '-']).to_ascii_lowercase();
    if value.is_infinite() && unsigned != "inf" && unsigned != "infinity" {
        return Some(" (out of range: a DOUBLE holds at most ±1.7976931348623157e308)");
    }
    let mantissa = unsigned.split('e').next().unwrap_or_default();
    if value == 0.0 && mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b)) {
        return Some(" (too close to 0: a DOUBLE would hold it as 0; the smallest is ±4.9e-324)");
    }
    None
}

/// Arrow's cast with NULL for a value that does not convert.
fn arrow_cast(texts: &StringArray, ty: ColumnType) -> Result<ArrayRef> {
    let opts = CastOptions {
        safe: true,
        ..Default::default()
    };
    Ok(cast_with_options(texts, &ty.arrow_type(), &opts)?)
}

fn integer_at(array: &ArrayRef, row: usize) -> i64 {
    if let Some(a) = array.as_any().downcast_ref::<Int32Array>() {
        a.value(row) as i64
    } else if let Some(a) = array.as_any().downcast_ref::<Int64Array>() {
        a.value(row)
    } else {
        0
    }
}

/// Why a text is not an exact decimal.
#[derive(Debug, PartialEq, Eq)]
pub enum DecimalError {
    NotANumber,
    /// Non-zero digits beyond the scale; carries how many decimals the text has.
    Rounded(usize),
    /// More digits than the precision allows; carries the digit count.
    TooManyDigits(usize),
}

impl DecimalError {
    fn detail(&self, precision: u8, scale: i8, base64: bool) -> String {
        match self {
            DecimalError::NotANumber if base64 => " (not base64-encoded decimal bytes)".into(),
            DecimalError::NotANumber => String::new(),
            DecimalError::Rounded(d) => format!(" ({d} decimals; silver never rounds)"),
            DecimalError::TooManyDigits(_) => format!(
                " (more than {} digits before the point)",
                precision as i32 - scale as i32
            ),
        }
    }
}

/// The unscaled value of `text` at `scale` (`"99.99"` at scale 2 → 9999),
/// exactly: optional sign, digits with an optional point, optional exponent
/// (`5.0000002E+8`), surrounding spaces. Refuses non-zero digits beyond
/// `scale` and more than `precision` digits in all.
pub fn parse_decimal_exact(
    text: &str,
    precision: u8,
    scale: i8,
) -> std::result::Result<i128, DecimalError> {
    let t = text.trim();
    let (negative, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (mantissa, exponent) = match t.find(['e', 'E']) {
        Some(i) => {
            let e: i64 = t[i + 1..].parse().map_err(|_| DecimalError::NotANumber)?;
            (&t[..i], e)
        }
        None => (t, 0),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int_part.is_empty() && frac_part.is_empty()
        || !int_part.bytes().all(|b| b.is_ascii_digit())
        || !frac_part.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(DecimalError::NotANumber);
    }
    let digits: String = format!("{int_part}{frac_part}");
    // value = digits × 10^(exponent − frac_len); unscaled = value × 10^scale.
    // In 128 bits: an exponent near the i64 limits (`1.5E-9223372036854775808`)
    // must not wrap around into a small shift.
    let shift = i128::from(exponent) - frac_part.len() as i128 + i128::from(scale);
    let digits = digits.trim_start_matches('0');
    let kept = if shift >= 0 {
        if digits.is_empty() {
            String::new()
        } else if digits.len() as i128 + shift > i128::from(precision) {
            let n = digits.len() as i128 + shift;
            return Err(DecimalError::TooManyDigits(
                usize::try_from(n).unwrap_or(usize::MAX),
            ));
        } else {
            // At most `precision` (38) digits in all.
            format!("{digits}{}", "0".repeat(shift as usize))
        }
    } else {
        let cut = usize::try_from(-shift).unwrap_or(usize::MAX);
        let (head, tail) = digits.split_at(digits.len().saturating_sub(cut));
        if tail.bytes().any(|b| b != b'0') {
            let decimals = (frac_part.len() as i128 - i128::from(exponent)).max(0);
            return Err(DecimalError::Rounded(
                usize::try_from(decimals).unwrap_or(usize::MAX),
            ));
        }
        head.to_string()
    };
    if kept.len() > precision as usize {
        return Err(DecimalError::TooManyDigits(kept.len()));
    }
    let v: i128 = if kept.is_empty() {
        0
    } else {
        kept.parse().map_err(|_| DecimalError::NotANumber)?
    };
    Ok(if negative { -v } else { v })
}

/// Debezium's `decimal.handling.mode=precise` value: base64 of the unscaled
/// value's big-endian two's-complement bytes (`"BNI="` → 1234).
fn decode_base64_decimal(text: &str, precision: u8) -> std::result::Result<i128, DecimalError> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|_| DecimalError::NotANumber)?;
    if bytes.is_empty() || bytes.len() > 16 {
        return Err(DecimalError::NotANumber);
    }
    let fill = if bytes[0] & 0x80 != 0 { 0xff } else { 0 };
    let mut buf = [fill; 16];
    buf[16 - bytes.len()..].copy_from_slice(&bytes);
    let v = i128::from_be_bytes(buf);
    let digits = v.unsigned_abs().to_string().len();
    if digits > precision as usize {
        return Err(DecimalError::TooManyDigits(digits));
    }
    Ok(v)
}

/// Why a text with more than microsecond precision does not convert.
const SUB_MICROS: &str =
    " (more than 6 decimals of a second; silver keeps microseconds and never rounds)";

/// A TIMESTAMP text read: an instant (the text carried an offset, or is an
/// epoch count), or a local time (no offset: the column's zone, or UTC, decides).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// Microseconds since 1970-01-01T00:00:00Z.
    Instant(i64),
    Local(NaiveDateTime),
}

/// Reads `text` in the ISO-8601 / RFC 3339 spellings the default TIMESTAMP
/// reader takes (surrounding spaces ignored):
/// `YYYY-MM-DD`, optionally followed by `T` (or `t`, or one space) and
/// `HH:MM`, optionally `:SS`, optionally `.` and 1 to 9 digits, then
/// optionally an offset: `Z` (or `z`), `±HH:MM`, `±HHMM` or `±HH`.
/// `Err` carries the detail for the message (empty, or why): a text that
/// is none of these, an impossible date or time (`2024-02-30`, `25:00`;
/// never rolled over), digits past microseconds that are not zeros.
pub fn parse_iso_timestamp(text: &str) -> std::result::Result<Reading, TimestampError> {
    let t = text.trim().as_bytes();
    let not = || TimestampError::NotIso;
    let num = |from: usize, len: usize| -> Option<u32> {
        let digits = t.get(from..from + len)?;
        digits
            .iter()
            .all(u8::is_ascii_digit)
            .then(|| digits.iter().fold(0u32, |v, d| v * 10 + (d - b'0') as u32))
    };
    let (Some(y), Some(b'-'), Some(m), Some(b'-'), Some(d)) =
        (num(0, 4), t.get(4), num(5, 2), t.get(7), num(8, 2))
    else {
        return Err(not());
    };
    let date = NaiveDate::from_ymd_opt(y as i32, m, d).ok_or_else(not)?;
    if t.len() == 10 {
        return Ok(Reading::Local(date.and_time(NaiveTime::MIN)));
    }
    if !matches!(t.get(10), Some(b'T' | b't' | b' ')) {
        return Err(not());
    }
    let (Some(h), Some(b':'), Some(mi)) = (num(11, 2), t.get(13), num(14, 2)) else {
        return Err(not());
    };
    let mut at = 16;
    let mut sec = 0;
    let mut nanos = 0;
    if t.get(at) == Some(&b':') {
        sec = num(at + 1, 2).ok_or_else(not)?;
        at += 3;
        if t.get(at) == Some(&b'.') {
            let digits = t[at + 1..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            if digits == 0 || digits > 9 {
                return Err(not());
            }
            let frac = num(at + 1, digits).ok_or_else(not)?;
            nanos = frac * 10u32.pow(9 - digits as u32);
            at += 1 + digits;
        }
    }
    let time = NaiveTime::from_hms_nano_opt(h, mi, sec, nanos)
        .filter(|_| sec < 60)
        .ok_or_else(not)?;
    if nanos % 1_000 != 0 {
        return Err(TimestampError::SubMicros);
    }
    let local = date.and_time(time);
    let offset_secs: i64 = match &t[at..] {
        [] => return Ok(Reading::Local(local)),
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), rest @ ..] => {
            let (oh, om) = match rest.len() {
                2 => (num(at + 1, 2), Some(0)),
                4 => (num(at + 1, 2), num(at + 3, 2)),
                5 if rest[2] == b':' => (num(at + 1, 2), num(at + 4, 2)),
                _ => return Err(not()),
            };
            let (Some(oh), Some(om)) = (oh, om) else {
                return Err(not());
            };
            if oh > 23 || om > 59 {
                return Err(not());
            }
            let secs = (oh * 3600 + om * 60) as i64;
            if *sign == b'-' {
                -secs
            } else {
                secs
            }
        }
        _ => return Err(not()),
    };
    Ok(Reading::Instant(
        local.and_utc().timestamp_micros() - offset_secs * 1_000_000,
    ))
}

/// The repeated hours seen so far in one column of one batch (for
/// [`AmbiguousTime::ArrivalOrder`]), by the instant the clocks went back:
/// the latest local time seen inside the hour, and whether the clock has
/// already gone back.
#[derive(Debug, Default)]
struct Folds(HashMap<i64, (NaiveDateTime, bool)>);

/// The instant (UTC micros) of local time `t` in `lt.zone`, by the column's
/// policies. `Err` completes "'<text>' is …" for the quarantine reason.
fn resolve_local(
    lt: &LocalTimes,
    t: NaiveDateTime,
    folds: &mut Folds,
) -> std::result::Result<i64, TimestampError> {
    let zone = lt.zone;
    match zone.from_local_datetime(&t) {
        MappedLocalTime::Single(d) => Ok(d.timestamp_micros()),
        MappedLocalTime::Ambiguous(earlier, later) => {
            let change = transition(zone, earlier.timestamp(), later.timestamp());
            let pick_later = match lt.ambiguous {
                AmbiguousTime::Earlier => false,
                AmbiguousTime::Later => true,
                AmbiguousTime::ArrivalOrder => match folds.0.get_mut(&change) {
                    None => {
                        folds.0.insert(change, (t, false));
                        false
                    }
                    Some((latest, went_back)) => {
                        // Not later than a time already seen in this hour: the clock went back.
                        *went_back |= t <= *latest;
                        *latest = (*latest).max(t);
                        *went_back
                    }
                },
                AmbiguousTime::Reject => {
                    let (before, after) = (offset_secs(&earlier), offset_secs(&later));
                    return Err(TimestampError::Ambiguous {
                        zone,
                        back_at: local_at(change, before),
                        back_to: local_at(change, after),
                        before,
                        after,
                    });
                }
            };
            Ok(if pick_later { later } else { earlier }.timestamp_micros())
        }
        MappedLocalTime::None => {
            let gap = chrono_tz::GapInfo::new(&t, &zone);
            let begin = gap.as_ref().and_then(|g| g.begin);
            let end = gap.as_ref().and_then(|g| g.end.map(|e| e.naive_local()));
            let shifted = begin.map(|(_, before)| {
                t.and_utc().timestamp_micros()
                    - i64::from(before.fix().local_minus_utc()) * 1_000_000
            });
            match (lt.nonexistent, shifted) {
                (NonexistentTime::ShiftForward, Some(v)) => Ok(v),
                _ => Err(TimestampError::Nonexistent {
                    zone,
                    skipped: begin.map(|(from, _)| from).zip(end),
                    shift_forward: shifted
                        .and_then(DateTime::from_timestamp_micros)
                        .filter(|_| lt.nonexistent == NonexistentTime::Reject)
                        .map(|at| at.with_timezone(&zone).naive_local()),
                }),
            }
        }
    }
}

/// The first second in `(lo, hi]` (Unix seconds) whose offset in `zone`
/// differs from the offset at `lo`: when the clocks changed.
fn transition(zone: Tz, mut lo: i64, mut hi: i64) -> i64 {
    let offset = |s: i64| {
        DateTime::from_timestamp(s, 0).map(|d| {
            zone.offset_from_utc_datetime(&d.naive_utc())
                .fix()
                .local_minus_utc()
        })
    };
    let first = offset(lo);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if offset(mid) == first {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

fn offset_secs<T: TimeZone>(d: &DateTime<T>) -> i32 {
    d.offset().fix().local_minus_utc()
}

/// Local wall-clock time at Unix second `s` with offset `offset` (seconds).
fn local_at(s: i64, offset: i32) -> NaiveDateTime {
    DateTime::from_timestamp(s + i64::from(offset), 0)
        .map(|d| d.naive_utc())
        .unwrap_or_default()
}

/// `02:00`, or `02:00:30` when the seconds are not zero.
fn hm(t: &NaiveDateTime) -> String {
    if t.second() == 0 {
        t.format("%H:%M").to_string()
    } else {
        t.format("%H:%M:%S").to_string()
    }
}

/// `-04:00` for -14400 seconds.
fn offset_text(secs: &i32) -> String {
    let sign = if *secs < 0 { '-' } else { '+' };
    let a = secs.unsigned_abs();
    format!("{sign}{:02}:{:02}", a / 3600, a % 3600 / 60)
}

/// Checks the declared formats of a column of type `ty` (see
/// [`SourceColumn::formats`]): every Spark pattern letter must be one this
/// reader maps, and a chrono pattern must not use `%Z` (chrono skips a zone
/// name without reading it, so the time would silently be taken as UTC).
/// The message names the format and says what to use instead.
pub fn check_formats(ty: ColumnType, formats: &[String]) -> std::result::Result<(), ConvertError> {
    if matches!(ty, ColumnType::Timestamp | ColumnType::Date) {
        formats.iter().try_for_each(|f| Pattern::new(f).map(|_| ()))
    } else {
        Ok(())
    }
}

/// One declared timestamp / date format.
#[derive(Debug)]
enum Pattern {
    /// Whole units since 1970-01-01 UTC; micros per unit.
    Epoch(i64),
    /// A chrono pattern; `zoned` when it reads an offset.
    Chrono { pattern: String, zoned: bool },
}

impl Pattern {
    fn new(format: &str) -> std::result::Result<Self, ConvertError> {
        match format.trim().to_ascii_lowercase().as_str() {
            "epoch_ms" => return Ok(Pattern::Epoch(1_000)),
            "epoch_s" => return Ok(Pattern::Epoch(1_000_000)),
            "epoch_us" => return Ok(Pattern::Epoch(1)),
            _ => {}
        }
        let pattern = if format.contains('%') {
            chrono_pattern(format)?
        } else {
            spark_to_chrono(format)?
        };
        let zoned = pattern.contains("%z") || pattern.contains("%:z") || pattern.contains("%#z");
        Ok(Pattern::Chrono { pattern, zoned })
    }

    /// Whole units since the epoch (`epoch_ms` ...): UTC by definition.
    fn is_epoch(&self) -> bool {
        matches!(self, Pattern::Epoch(_))
    }

    /// What `text` reads as, if it matches.
    fn parse(&self, text: &str) -> Option<Reading> {
        match self {
            Pattern::Epoch(unit) => text
                .parse::<i64>()
                .ok()?
                .checked_mul(*unit)
                .map(Reading::Instant),
            Pattern::Chrono {
                pattern,
                zoned: true,
            } => DateTime::parse_from_str(text, pattern)
                .ok()
                .filter(|d| d.nanosecond() % 1_000 == 0)
                .map(|d| Reading::Instant(d.timestamp_micros())),
            Pattern::Chrono { pattern, .. } => NaiveDateTime::parse_from_str(text, pattern)
                .ok()
                .or_else(|| {
                    NaiveDate::parse_from_str(text, pattern)
                        .ok()
                        .and_then(|d| d.and_hms_opt(0, 0, 0))
                })
                .map(Reading::Local),
        }
    }
}

/// A chrono pattern as declared, except that a literal `Z` reads as the
/// UTC designator it is (`%#z`, which also takes `+01:00`), so a declared
/// time zone never shifts a text that says it is UTC. `%Z` is refused.
fn chrono_pattern(format: &str) -> std::result::Result<String, ConvertError> {
    let mut out = String::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        match c {
            '%' => {
                out.push('%');
                for spec in chars.by_ref() {
                    out.push(spec);
                    if spec == 'Z' {
                        return Err(ConvertError::SkipsZoneName {
                            format: format.to_string(),
                        });
                    }
                    if spec.is_ascii_alphabetic() || spec == '%' {
                        break;
                    }
                }
            }
            'Z' => out.push_str("%#z"),
            c => out.push(c),
        }
    }
    Ok(out)
}

/// A Spark / Java date pattern (`MM/dd/yyyy HH:mm`, `yyyy-MM-dd'T'HH:mm:ss`)
/// as a chrono pattern (`%m/%d/%Y %H:%M`, `%Y-%m-%dT%H:%M:%S`). Letters are
/// read in runs as Spark's datetime patterns define them: `y` `yyyy` `yy`,
/// `M` `MM`, `d` `dd`, `H` `HH`, `h` `hh`, `m` `mm`, `s` `ss`, `SSS`,
/// `SSSSSS`, `SSSSSSSSS`, `a`; offsets `X` `XX` `XXX` and `ZZZZZ` (`Z` for
/// zero, `+01`, `+0100`, `+01:00`), `x` `xx` `xxx` and `Z` `ZZ` `ZZZ`
/// (`+0100`, `+01:00`). A quoted `'Z'` is read as the UTC designator. Zone
/// names (`z`, `V`, `O`, `ZZZZ`) and other letters are refused with a
/// message; so is an unclosed quote. An unquoted `T` is taken literally.
fn spark_to_chrono(format: &str) -> std::result::Result<String, ConvertError> {
    let mut out = String::new();
    let mut rest = format;
    while let Some(c) = rest.chars().next() {
        if let Some(quoted) = rest.strip_prefix('\'') {
            let end = quoted
                .find('\'')
                .ok_or_else(|| ConvertError::UnclosedQuote {
                    format: format.to_string(),
                })?;
            match &quoted[..end] {
                "" => out.push('\''),
                "Z" => out.push_str("%#z"),
                text => out.push_str(&text.replace('%', "%%")),
            }
            rest = &quoted[end + 1..];
            continue;
        }
        if !c.is_ascii_alphabetic() || c == 'T' {
            if c == '%' {
                out.push('%');
            }
            out.push(c);
            rest = &rest[c.len_utf8()..];
            continue;
        }
        let run = rest.chars().take_while(|x| *x == c).count();
        let chrono = match (c, run) {
            ('y', 2) => "%y",
            ('y', 1 | 4) => "%Y",
            ('M', 1 | 2) => "%m",
            ('d', 1 | 2) => "%d",
            ('H', 1 | 2) => "%H",
            ('h', 1 | 2) => "%I",
            ('m', 1 | 2) => "%M",
            ('s', 1 | 2) => "%S",
            ('S', 3) => "%3f",
            ('S', 6) => "%6f",
            ('S', 9) => "%9f",
            ('a', 1) => "%p",
            ('X', 1..=3) | ('x', 1) | ('Z', 5) => "%#z",
            ('x', 2 | 3) | ('Z', 1..=3) => "%z",
            ('z' | 'V' | 'O' | 'v', _) | ('Z', 4) => {
                return Err(ConvertError::ZoneNames {
                    format: format.to_string(),
                    letters: c.to_string().repeat(run),
                })
            }
            _ => {
                return Err(ConvertError::UnsupportedLetters {
                    format: format.to_string(),
                    letters: c.to_string().repeat(run),
                })
            }
        };
        out.push_str(chrono);
        rest = &rest[run..];
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::silver::source::validate_column;

    fn convert(
        texts: &[Option<&str>],
        ty: &str,
        formats: &[&str],
    ) -> (ArrayRef, Vec<Option<String>>) {
        let formats: Vec<String> = formats.iter().map(|f| f.to_string()).collect();
        convert_column(
            "c",
            &StringArray::from(texts.to_vec()),
            ty.parse().unwrap(),
            &formats,
        )
        .unwrap()
    }

    fn shown(a: &ArrayRef) -> Vec<String> {
        let f = datafusion::arrow::util::display::ArrayFormatter::try_new(
            a.as_ref(),
            &datafusion::arrow::util::display::FormatOptions::default().with_null("NULL"),
        )
        .unwrap();
        (0..a.len()).map(|i| f.value(i).to_string()).collect()
    }

    #[test]
    fn decimals_are_exact_never_rounded() {
        assert_eq!(parse_decimal_exact("99.99", 10, 2), Ok(9999));
        assert_eq!(parse_decimal_exact("99.990", 10, 2), Ok(9999));
        assert_eq!(parse_decimal_exact("-0.5", 10, 2), Ok(-50));
        assert_eq!(parse_decimal_exact("5.0000002E+8", 10, 0), Ok(500000020));
        assert_eq!(parse_decimal_exact("1e3", 10, 2), Ok(100000));
        assert_eq!(
            parse_decimal_exact("12.345", 10, 2),
            Err(DecimalError::Rounded(3))
        );
        assert_eq!(
            parse_decimal_exact("123456789", 10, 2),
            Err(DecimalError::TooManyDigits(11))
        );
        assert_eq!(
            parse_decimal_exact("1e999999", 38, 0),
            Err(DecimalError::TooManyDigits(1000000))
        );
        assert_eq!(
            parse_decimal_exact("99,99", 10, 2),
            Err(DecimalError::NotANumber)
        );
        assert_eq!(
            parse_decimal_exact(".", 10, 2),
            Err(DecimalError::NotANumber)
        );
        assert_eq!(parse_decimal_exact("0.000", 10, 2), Ok(0));
    }

    #[test]
    fn exponents_at_the_i64_limits_do_not_wrap_around() {
        // The shift exponent − decimals + scale used to be computed in i64:
        // these overflowed (a panic in a debug build, a wrapped shift in the
        // release build the browser runs).
        let big = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        assert_eq!(
            parse_decimal_exact("1.5E-9223372036854775808", 38, 0),
            Err(DecimalError::Rounded(big(9223372036854775809)))
        );
        assert_eq!(
            parse_decimal_exact("50E-9223372036854775808", 38, 0),
            Err(DecimalError::Rounded(big(9223372036854775808)))
        );
        assert_eq!(
            parse_decimal_exact("1E9223372036854775807", 38, 2),
            Err(DecimalError::TooManyDigits(big(9223372036854775810)))
        );
        assert_eq!(parse_decimal_exact("0E9223372036854775807", 38, 2), Ok(0));
        assert_eq!(parse_decimal_exact("0E-9223372036854775808", 38, 2), Ok(0));
    }

    #[test]
    fn numbers_as_strings_rw21() {
        let (a, e) = convert(
            &[
                Some("500000001"),
                Some("5.0000002E+8"),
                Some("3"),
                Some("3.5"),
                Some("3000000000"),
                None,
            ],
            "INT",
            &[],
        );
        assert_eq!(
            shown(&a),
            ["500000001", "500000020", "3", "NULL", "NULL", "NULL"]
        );
        assert_eq!(e[1], None);
        assert_eq!(
            e[4].as_deref(),
            Some("c: '3000000000' is not INT (out of range)")
        );
        assert_eq!(
            e[3].as_deref(),
            Some("c: '3.5' is not INT (not a whole number)")
        );
        assert_eq!(e[5], None);
        let (a, _) = convert(&[Some("5.0000002E+8")], "BIGINT", &[]);
        assert_eq!(shown(&a), ["500000020"]);
        let (a, e) = convert(
            &[Some("99.99"), Some("99,99"), Some("12.345")],
            "DECIMAL(10,2)",
            &[],
        );
        assert_eq!(shown(&a), ["99.99", "NULL", "NULL"]);
        assert_eq!(e[1].as_deref(), Some("c: '99,99' is not DECIMAL(10,2)"));
        assert_eq!(
            e[2].as_deref(),
            Some("c: '12.345' is not DECIMAL(10,2) (3 decimals; silver never rounds)")
        );
    }

    #[test]
    fn debezium_base64_decimals() {
        let (a, e) = convert(
            &[
                Some("BNI="),
                Some("BXg="),
                Some("B88="),
                Some("not base64!"),
            ],
            "DECIMAL(10,2)",
            &["base64"],
        );
        assert_eq!(shown(&a), ["12.34", "14.00", "19.99", "NULL"]);
        assert_eq!(
            e[3].as_deref(),
            Some("c: 'not base64!' is not DECIMAL(10,2) (not base64-encoded decimal bytes)")
        );
    }

    #[test]
    fn declared_timestamp_formats_rw23() {
        let texts = [
            Some("2024-03-01 08:15:00"),
            Some("2024-03-01T08:15:00"),
            Some("1709280900000"),
            Some("03/01/2024 08:15"),
            None,
            Some("2024-02-30 10:00:00"),
        ];
        // Standard forms only: epoch and US dates are not guessed.
        let (a, _) = convert(&texts, "TIMESTAMP", &[]);
        assert_eq!(
            shown(&a),
            [
                "2024-03-01T08:15:00",
                "2024-03-01T08:15:00",
                "NULL",
                "NULL",
                "NULL",
                "NULL"
            ]
        );
        let (a, e) = convert(
            &texts,
            "TIMESTAMP",
            &[
                "yyyy-MM-dd HH:mm:ss",
                "yyyy-MM-dd'T'HH:mm:ss",
                "epoch_ms",
                "MM/dd/yyyy HH:mm",
            ],
        );
        assert_eq!(
            shown(&a),
            [
                "2024-03-01T08:15:00",
                "2024-03-01T08:15:00",
                "2024-03-01T08:15:00",
                "2024-03-01T08:15:00",
                "NULL",
                "NULL"
            ]
        );
        assert_eq!(e[4], None, "empty is missing, not an error");
        assert_eq!(
            e[5].as_deref(),
            Some("c: '2024-02-30 10:00:00' is not TIMESTAMP (declared formats: yyyy-MM-dd HH:mm:ss, yyyy-MM-dd'T'HH:mm:ss, epoch_ms, MM/dd/yyyy HH:mm)")
        );
        let (a, _) = convert(
            &[Some("2024-03-01T08:15:00+03:00")],
            "TIMESTAMP",
            &["%Y-%m-%dT%H:%M:%S%:z"],
        );
        assert_eq!(shown(&a), ["2024-03-01T05:15:00"]);
        let (a, _) = convert(
            &[Some("01.03.2024"), Some("30.02.2024")],
            "DATE",
            &["dd.MM.yyyy"],
        );
        assert_eq!(shown(&a), ["2024-03-01", "NULL"]);
    }

    /// A TIMESTAMP column `c` read in `zone` with these policies and formats.
    fn zoned(
        texts: &[&str],
        zone: &str,
        ambiguous: AmbiguousTime,
        nonexistent: NonexistentTime,
        formats: &[&str],
    ) -> Converted {
        let col = SourceColumn::new("c", ColumnType::Timestamp)
            .formats(formats)
            .zoned(zone, ambiguous, nonexistent);
        let texts: Vec<Option<&str>> = texts.iter().map(|t| Some(*t)).collect();
        convert_source_column(&col, &StringArray::from(texts)).unwrap()
    }

    /// `texts` read as local times in `zone` (standard form) with these policies.
    fn local(
        zone: &str,
        ambiguous: AmbiguousTime,
        nonexistent: NonexistentTime,
        texts: &[&str],
    ) -> Converted {
        zoned(texts, zone, ambiguous, nonexistent, &[])
    }

    fn micros(text: &str) -> Reading {
        Reading::Instant(
            DateTime::parse_from_rfc3339(text)
                .unwrap()
                .timestamp_micros(),
        )
    }

    #[test]
    fn iso_offsets_in_every_spelling_rw45() {
        let nine = micros("2024-02-01T09:00:00Z");
        for text in [
            "2024-02-01T10:00:00+01:00",
            "2024-02-01 09:00Z",
            "2024-02-01 04:00-05:00",
            "2024-02-01T09:00:00+0000",
            "2024-02-01T10:00+01",
            "2024-02-01t09:00:00z",
            " 2024-02-01T09:00:00.000000000Z ",
            "2024-02-01T14:30:00+05:30",
        ] {
            assert_eq!(parse_iso_timestamp(text), Ok(nine), "{text}");
        }
        assert_eq!(
            parse_iso_timestamp("2024-02-01T09:00:00.5+0000"),
            Ok(micros("2024-02-01T09:00:00.5Z"))
        );
        assert_eq!(
            parse_iso_timestamp("2024-02-01T09:00:00.123456-00:00"),
            Ok(micros("2024-02-01T09:00:00.123456Z"))
        );
        let local = |t: &str| Ok(Reading::Local(t.parse::<NaiveDateTime>().unwrap()));
        assert_eq!(
            parse_iso_timestamp("2024-02-01T09:00:00"),
            local("2024-02-01T09:00:00")
        );
        assert_eq!(
            parse_iso_timestamp("2024-02-01 09:00"),
            local("2024-02-01T09:00:00")
        );
        assert_eq!(
            parse_iso_timestamp("2024-02-01"),
            local("2024-02-01T00:00:00")
        );
        // Strict: none of these is a TIMESTAMP, and nothing rolls over.
        for text in [
            "2024-02-30 10:00:00",
            "2024-02-01T24:00:00",
            "2024-02-01T09:60",
            "2024-02-01T09:00:60",
            "2024-02-01T9:00",
            "2024-2-01T09:00",
            "2024-02-01X09:00",
            "2024-02-01T09:00:00+1",
            "2024-02-01T09:00:00+01:0",
            "2024-02-01T09:00:00+24:00",
            "2024-02-01T09:00:00+01:60",
            "2024-02-01T09:00:00 +01:00",
            "2024-02-01T09:00:00UTC",
            "2024-02-01T09:00:00.",
            "2024-02-01T09:00:00.1234567890Z",
            "2024-02-01T09:00:00ZZ",
            "2024-02-01T09",
            "1709280900000",
            "03/01/2024 08:15",
            "",
        ] {
            assert_eq!(
                parse_iso_timestamp(text),
                Err(TimestampError::NotIso),
                "{text}"
            );
        }
        assert_eq!(
            parse_iso_timestamp("2024-02-01T09:00:00.1234567Z"),
            Err(TimestampError::SubMicros)
        );
    }

    #[test]
    fn values_without_offset_are_flagged_as_read_as_utc_rw45() {
        let texts = StringArray::from(vec![
            Some("2024-02-01T10:00:00+01:00"),
            Some("2024-02-01 09:00Z"),
            Some("2024-02-01 04:00-05:00"),
            Some("2024-02-01T09:00:00.5+0000"),
            Some("2024-02-01T09:00:00"),
            None,
            Some("2024-02-01T09:00:00 CET"),
        ]);
        let col = SourceColumn::new("ts", ColumnType::Timestamp);
        let c = convert_source_column(&col, &texts).unwrap();
        assert_eq!(
            shown(&c.array),
            [
                "2024-02-01T09:00:00",
                "2024-02-01T09:00:00",
                "2024-02-01T09:00:00",
                "2024-02-01T09:00:00.500",
                "2024-02-01T09:00:00",
                "NULL",
                "NULL"
            ]
        );
        assert_eq!(
            c.read_as_utc,
            [false, false, false, false, true, false, false]
        );
        assert_eq!(
            c.errors[6].as_deref(),
            Some("ts: '2024-02-01T09:00:00 CET' is not TIMESTAMP")
        );
        // A declared zone: the same text is a local time there, not counted.
        let c = local(
            "Europe/Berlin",
            AmbiguousTime::Reject,
            NonexistentTime::Reject,
            &["2024-02-01T10:00:00", "2024-02-01T10:00:00+01:00"],
        );
        assert_eq!(
            shown(&c.array),
            ["2024-02-01T09:00:00", "2024-02-01T09:00:00"]
        );
        assert_eq!(c.read_as_utc, [false, false]);
    }

    /// rw-43's S1 rows around New York's fall-back change (2024-11-03,
    /// 02:00 EDT → 01:00 EST) and S2's row in its spring gap (2024-03-10).
    const NEW_YORK: [&str; 4] = [
        "2024-11-03 00:30:00",
        "2024-11-03 01:30:00",
        "2024-11-03 01:30:00",
        "2024-11-03 03:00:00",
    ];

    #[test]
    fn new_york_repeated_hour_by_each_policy_rw43() {
        let ny = |a| local("America/New_York", a, NonexistentTime::Reject, &NEW_YORK);
        let c = ny(AmbiguousTime::ArrivalOrder);
        assert_eq!(
            shown(&c.array),
            [
                "2024-11-03T04:30:00",
                "2024-11-03T05:30:00",
                "2024-11-03T06:30:00",
                "2024-11-03T08:00:00"
            ]
        );
        assert!(c.errors.iter().all(Option::is_none));
        assert_eq!(
            shown(&ny(AmbiguousTime::Earlier).array),
            [
                "2024-11-03T04:30:00",
                "2024-11-03T05:30:00",
                "2024-11-03T05:30:00",
                "2024-11-03T08:00:00"
            ]
        );
        assert_eq!(
            shown(&ny(AmbiguousTime::Later).array),
            [
                "2024-11-03T04:30:00",
                "2024-11-03T06:30:00",
                "2024-11-03T06:30:00",
                "2024-11-03T08:00:00"
            ]
        );
        let c = ny(AmbiguousTime::Reject);
        assert_eq!(
            shown(&c.array),
            ["2024-11-03T04:30:00", "NULL", "NULL", "2024-11-03T08:00:00"]
        );
        assert_eq!(
            c.errors[1].as_deref(),
            Some("c: '2024-11-03 01:30:00' is an ambiguous local time in America/New_York (clocks went back from 02:00 to 01:00 on 2024-11-03, so 01:00–02:00 happened twice, at UTC-04:00 and at UTC-05:00; set ambiguous to earlier, later or arrival_order to choose)")
        );
    }

    #[test]
    fn arrival_order_switches_when_the_clock_goes_back_and_stays() {
        let c = local(
            "America/New_York",
            AmbiguousTime::ArrivalOrder,
            NonexistentTime::Reject,
            &[
                "2024-11-03 01:00:00",
                "2024-11-03 01:20:00",
                "2024-11-03 01:50:00",
                "2024-11-03 01:10:00", // not later than 01:50: the clock went back
                "2024-11-03 01:55:00", // later offset from now on
                "2024-11-03 02:10:00",
            ],
        );
        assert_eq!(
            shown(&c.array),
            [
                "2024-11-03T05:00:00",
                "2024-11-03T05:20:00",
                "2024-11-03T05:50:00",
                "2024-11-03T06:10:00",
                "2024-11-03T06:55:00",
                "2024-11-03T07:10:00"
            ]
        );
        // Each call (one batch) starts afresh; another year's repeated hour is its own.
        let c = local(
            "America/New_York",
            AmbiguousTime::ArrivalOrder,
            NonexistentTime::Reject,
            &[
                "2023-11-05 01:30:00",
                "2023-11-05 01:30:00",
                "2024-11-03 01:30:00",
            ],
        );
        assert_eq!(
            shown(&c.array),
            [
                "2023-11-05T05:30:00",
                "2023-11-05T06:30:00",
                "2024-11-03T05:30:00"
            ]
        );
    }

    #[test]
    fn new_york_skipped_hour_rejected_or_shifted_forward_rw43() {
        let c = local(
            "America/New_York",
            AmbiguousTime::ArrivalOrder,
            NonexistentTime::Reject,
            &[
                "2024-03-10 02:30:00",
                "2024-03-10 01:59:59",
                "2024-03-10 03:00:00",
            ],
        );
        assert_eq!(
            shown(&c.array),
            ["NULL", "2024-03-10T06:59:59", "2024-03-10T07:00:00"]
        );
        assert_eq!(
            c.errors[0].as_deref(),
            Some("c: '2024-03-10 02:30:00' is a nonexistent local time in America/New_York (clocks skipped 02:00–03:00 on 2024-03-10; nonexistent: shift_forward would read it as 03:30)")
        );
        let c = local(
            "America/New_York",
            AmbiguousTime::Reject,
            NonexistentTime::ShiftForward,
            &["2024-03-10 02:30:00", "2024-03-10 02:00:00"],
        );
        // 03:30 EDT and 03:00 EDT.
        assert_eq!(
            shown(&c.array),
            ["2024-03-10T07:30:00", "2024-03-10T07:00:00"]
        );
        assert!(c.errors.iter().all(Option::is_none));
    }

    #[test]
    fn berlin_dst_edges() {
        // Spring: 02:00 CET → 03:00 CEST on 2024-03-31.
        let c = local(
            "Europe/Berlin",
            AmbiguousTime::Reject,
            NonexistentTime::Reject,
            &[
                "2024-03-31 01:59:00",
                "2024-03-31 02:30:00",
                "2024-03-31 03:00:00",
            ],
        );
        assert_eq!(
            shown(&c.array),
            ["2024-03-31T00:59:00", "NULL", "2024-03-31T01:00:00"]
        );
        assert_eq!(
            c.errors[1].as_deref(),
            Some("c: '2024-03-31 02:30:00' is a nonexistent local time in Europe/Berlin (clocks skipped 02:00–03:00 on 2024-03-31; nonexistent: shift_forward would read it as 03:30)")
        );
        let c = local(
            "Europe/Berlin",
            AmbiguousTime::Reject,
            NonexistentTime::ShiftForward,
            &["2024-03-31 02:30:00"],
        );
        assert_eq!(shown(&c.array), ["2024-03-31T01:30:00"]);
        // Autumn: 03:00 CEST → 02:00 CET on 2024-10-27; 02:30 happened twice.
        let autumn = ["2024-10-27 02:30:00", "2024-10-27 02:15:00"];
        let read = |a| local("Europe/Berlin", a, NonexistentTime::Reject, &autumn);
        assert_eq!(
            shown(&read(AmbiguousTime::Earlier).array),
            ["2024-10-27T00:30:00", "2024-10-27T00:15:00"]
        );
        assert_eq!(
            shown(&read(AmbiguousTime::Later).array),
            ["2024-10-27T01:30:00", "2024-10-27T01:15:00"]
        );
        assert_eq!(
            shown(&read(AmbiguousTime::ArrivalOrder).array),
            ["2024-10-27T00:30:00", "2024-10-27T01:15:00"]
        );
        assert_eq!(
            read(AmbiguousTime::Reject).errors[0].as_deref(),
            Some("c: '2024-10-27 02:30:00' is an ambiguous local time in Europe/Berlin (clocks went back from 03:00 to 02:00 on 2024-10-27, so 02:00–03:00 happened twice, at UTC+02:00 and at UTC+01:00; set ambiguous to earlier, later or arrival_order to choose)")
        );
    }

    #[test]
    fn a_zone_applies_to_local_formats_never_to_offsets_or_epochs() {
        let c = zoned(
            &[
                "11/03/2024 00:30",
                "2024-11-03T00:30:00Z",
                "2024-11-03T00:30:00-04:00",
                "1730593800000",
            ],
            "America/New_York",
            AmbiguousTime::Reject,
            NonexistentTime::Reject,
            &[
                "MM/dd/yyyy HH:mm",
                "yyyy-MM-dd'T'HH:mm:ss'Z'",
                "yyyy-MM-dd'T'HH:mm:ssXXX",
                "epoch_ms",
            ],
        );
        assert_eq!(
            shown(&c.array),
            [
                "2024-11-03T04:30:00",
                "2024-11-03T00:30:00",
                "2024-11-03T04:30:00",
                "2024-11-03T00:30:00"
            ]
        );
        // A chrono pattern's literal Z is the UTC designator too.
        let c = zoned(
            &["2024-11-03T00:30:00Z"],
            "America/New_York",
            AmbiguousTime::Reject,
            NonexistentTime::Reject,
            &["%Y-%m-%dT%H:%M:%SZ"],
        );
        assert_eq!(shown(&c.array), ["2024-11-03T00:30:00"]);
        // Without a zone, a declared format without an offset is read as UTC and flagged.
        let (a, _) = convert(
            &[Some("11/03/2024 00:30")],
            "TIMESTAMP",
            &["MM/dd/yyyy HH:mm"],
        );
        assert_eq!(shown(&a), ["2024-11-03T00:30:00"]);
        let col =
            SourceColumn::new("c", ColumnType::Timestamp).formats(&["MM/dd/yyyy HH:mm", "epoch_s"]);
        let c = convert_source_column(
            &col,
            &StringArray::from(vec!["11/03/2024 00:30", "1730593800"]),
        )
        .unwrap();
        assert_eq!(c.read_as_utc, [true, false]);
    }

    #[test]
    fn spark_offset_letters() {
        let read = |format: &str, text: &str| {
            let (a, e) = convert(&[Some(text)], "TIMESTAMP", &[format]);
            (shown(&a).remove(0), e[0].clone())
        };
        let ok = |v: &str| (v.to_string(), None);
        // XXX (and X, XX, ZZZZZ) take Z for zero as well as offsets.
        for (format, text) in [
            ("yyyy-MM-dd'T'HH:mm:ssXXX", "2024-02-01T09:00:00Z"),
            ("yyyy-MM-dd'T'HH:mm:ssXXX", "2024-02-01T10:00:00+01:00"),
            ("yyyy-MM-dd'T'HH:mm:ssXX", "2024-02-01T10:00:00+0100"),
            ("yyyy-MM-dd'T'HH:mm:ssX", "2024-02-01T10:00:00+01"),
            ("yyyy-MM-dd'T'HH:mm:ssX", "2024-02-01T09:00:00Z"),
            ("yyyy-MM-dd'T'HH:mm:ssZZZZZ", "2024-02-01T04:00:00-05:00"),
            ("yyyy-MM-dd'T'HH:mm:ssZ", "2024-02-01T04:00:00-0500"),
            ("yyyy-MM-dd'T'HH:mm:ssxxx", "2024-02-01T04:00:00-05:00"),
            ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2024-02-01T09:00:00.000Z"),
            (
                "yyyy-MM-dd HH:mm:ss.SSSSSSSSS",
                "2024-02-01 09:00:00.000000000",
            ),
        ] {
            assert_eq!(
                read(format, text),
                ok("2024-02-01T09:00:00"),
                "{format} {text}"
            );
        }
        // The offset letters without Z do not take it.
        assert_eq!(
            read("yyyy-MM-dd'T'HH:mm:ssZ", "2024-02-01T09:00:00Z").0,
            "NULL"
        );
        assert_eq!(
            read("yyyy-MM-dd'T'HH:mm:ssxx", "2024-02-01T09:00:00Z").0,
            "NULL"
        );
        // Single letters: no zero padding needed.
        assert_eq!(
            read("M/d/yyyy H:mm", "3/1/2024 8:15"),
            ok("2024-03-01T08:15:00")
        );
        // Nanoseconds past microseconds are not rounded away.
        assert_eq!(
            read(
                "yyyy-MM-dd HH:mm:ss.SSSSSSSSSXXX",
                "2024-02-01 09:00:00.123456789Z"
            )
            .0,
            "NULL"
        );
    }

    #[test]
    fn formats_that_would_misread_are_refused() {
        let check = |f: &str| check_formats(ColumnType::Timestamp, &[f.to_string()]);
        assert!(check("yyyy-MM-dd'T'HH:mm:ss.SSSXXX").is_ok());
        assert!(check("yyyy-MM-ddTHH:mm:ss").is_ok());
        assert!(check("%Y-%m-%d %H:%M:%S%#z").is_ok());
        assert!(check("epoch_ms").is_ok());
        assert_eq!(
            check("yyyy-MM-dd HH:mm z").unwrap_err().to_string(),
            "format \"yyyy-MM-dd HH:mm z\": zone names (z) are not read; declare the column's time_zone (an IANA name such as America/New_York) for local times, or read offsets with XXX"
        );
        assert!(check("yyyy-MM-dd HH:mm VV")
            .unwrap_err()
            .to_string()
            .contains("zone names (VV)"));
        assert!(check("yyyy-MM-dd HH:mm ZZZZ")
            .unwrap_err()
            .to_string()
            .contains("zone names (ZZZZ)"));
        assert!(check("EEE, dd MMM yyyy")
            .unwrap_err()
            .to_string()
            .contains("the pattern letters EEE are not supported here"));
        assert!(check("yyyy-MM-dd'T")
            .unwrap_err()
            .to_string()
            .contains("a quote (') is not closed"));
        assert!(check("%Y-%m-%d %H:%M %Z")
            .unwrap_err()
            .to_string()
            .contains("%Z would skip a zone name"));
        // Not a date type: formats are DECIMAL's business (base64).
        assert!(check_formats(
            ColumnType::Decimal {
                precision: 10,
                scale: 2
            },
            &["base64".into()]
        )
        .is_ok());
    }

    #[test]
    fn unknown_zones_are_named_with_the_iana_form() {
        assert_eq!(time_zone("America/New_York"), Ok(Tz::America__New_York));
        assert_eq!(time_zone("UTC"), Ok(Tz::UTC));
        assert_eq!(
            time_zone("america/new york").unwrap_err().to_string(),
            "unknown time zone 'america/new york' (did you mean America/New_York?): use an IANA name, Area/Location as in America/New_York, Europe/Berlin or Asia/Tokyo, or UTC (abbreviations such as PST or CEST do not say when daylight saving applies)"
        );
        assert!(time_zone("PST")
            .unwrap_err()
            .to_string()
            .starts_with("unknown time zone 'PST': use an IANA name"));
        assert!(time_zone("Mars/Olympus").is_err());
        let col = SourceColumn::new("local_ts", ColumnType::Timestamp).zoned(
            "New York",
            AmbiguousTime::Reject,
            NonexistentTime::Reject,
        );
        assert!(validate_column(&col)
            .unwrap_err()
            .to_string()
            .starts_with("column local_ts: unknown time zone 'New York': use an IANA name"));
        let err = convert_source_column(&col, &StringArray::from(vec!["2024-01-01"])).unwrap_err();
        assert!(err
            .to_string()
            .starts_with("column local_ts: unknown time zone"));
        let col = SourceColumn::new("d", ColumnType::Date).zoned(
            "UTC",
            AmbiguousTime::Reject,
            NonexistentTime::Reject,
        );
        assert!(validate_column(&col)
            .unwrap_err()
            .to_string()
            .contains("applies to TIMESTAMP columns only"));
        let mut col = SourceColumn::new("t", ColumnType::Timestamp);
        col.ambiguous = AmbiguousTime::Later;
        assert!(validate_column(&col)
            .unwrap_err()
            .to_string()
            .contains("declare the column's time_zone too"));
    }

    #[test]
    fn zone_settings_in_json() {
        let col: SourceColumn = serde_json::from_value(serde_json::json!({
            "name": "local_ts", "type": "TIMESTAMP", "time_zone": "America/New_York",
            "ambiguous": "arrival_order", "nonexistent": "shift_forward"
        }))
        .unwrap();
        assert_eq!(col.ambiguous, AmbiguousTime::ArrivalOrder);
        assert_eq!(col.nonexistent, NonexistentTime::ShiftForward);
        let plain: SourceColumn =
            serde_json::from_value(serde_json::json!({"name": "ts", "type": "TIMESTAMP"})).unwrap();
        assert_eq!(
            (plain.ambiguous, plain.nonexistent),
            (AmbiguousTime::Reject, NonexistentTime::Reject)
        );
        assert_eq!(
            serde_json::to_value(&plain).unwrap(),
            serde_json::json!({"name": "ts", "type": "TIMESTAMP"})
        );
        assert!(serde_json::from_value::<SourceColumn>(serde_json::json!({
            "name": "t", "type": "TIMESTAMP", "time_zone": "UTC", "ambiguous": "guess"
        }))
        .is_err());
    }

    #[test]
    fn type_names_parse_and_print() {
        assert_eq!(
            "decimal(12, 2)".parse::<ColumnType>().unwrap().to_string(),
            "DECIMAL(12,2)"
        );
        assert_eq!("Integer".parse::<ColumnType>(), Ok(ColumnType::Int));
        assert_eq!(
            "DECIMAL".parse::<ColumnType>().unwrap().to_string(),
            "DECIMAL(10,0)"
        );
        assert!("DECIMAL(40,2)"
            .parse::<ColumnType>()
            .unwrap_err()
            .contains("1 to 38"));
        assert!("MONEY"
            .parse::<ColumnType>()
            .unwrap_err()
            .starts_with("unknown type \"MONEY\""));
        assert_eq!(
            serde_json::to_string(&ColumnType::Decimal {
                precision: 10,
                scale: 2
            })
            .unwrap(),
            "\"DECIMAL(10,2)\""
        );
    }

    #[test]
    fn a_format_error_names_the_column_and_the_format() {
        let e = check_formats(ColumnType::Timestamp, &["dd/MM/yyyy HH:mm z".to_string()])
            .unwrap_err()
            .in_column("pickup_ts");
        assert_eq!(
            e.to_string(),
            "column pickup_ts: format \"dd/MM/yyyy HH:mm z\": zone names (z) are not read; declare the column's time_zone (an IANA name such as America/New_York) for local times, or read offsets with XXX"
        );
    }

    #[test]
    fn a_nonexistent_local_time_names_the_zone_and_the_skipped_hour() {
        let at = |t: &str| t.parse::<NaiveDateTime>().unwrap();
        let e = TimestampError::Nonexistent {
            zone: Tz::America__New_York,
            skipped: Some((at("2024-03-10T02:00:00"), at("2024-03-10T03:00:00"))),
            shift_forward: Some(at("2024-03-10T03:30:00")),
        };
        assert_eq!(
            e.to_string(),
            "a nonexistent local time in America/New_York (clocks skipped 02:00–03:00 on 2024-03-10; nonexistent: shift_forward would read it as 03:30)"
        );
    }

    /// A number a DOUBLE cannot hold is flagged, never stored as ±inf or 0
    /// (a CSV's `1e400` was stored as inf, `1e-400` as 0, both silently).
    #[test]
    fn a_double_past_its_range_is_flagged_not_stored_as_infinity_or_zero() {
        let texts = [
            Some("1e400"),
            Some("-1e400"),
            Some("1.7976931348623159e308"),
            Some("1e-400"),
            Some("-0.5e-330"),
            Some("Infinity"),
            Some("-inf"),
            Some("0.000e-999"),
            Some("1.7976931348623157e308"),
            Some("5e-324"),
            Some("12.5"),
            None,
        ];
        let (array, errors) = convert(&texts, "DOUBLE", &[]);
        assert_eq!(
            shown(&array),
            ["NULL", "NULL", "NULL", "NULL", "NULL", "inf", "-inf", "0.0", "1.7976931348623157e308", "5e-324", "12.5", "NULL"]
        );
        let over = " (out of range: a DOUBLE holds at most ±1.7976931348623157e308)";
        let under = " (too close to 0: a DOUBLE would hold it as 0; the smallest is ±4.9e-324)";
        assert_eq!(
            errors,
            [
                Some(format!("c: '1e400' is not DOUBLE{over}")),
                Some(format!("c: '-1e400' is not DOUBLE{over}")),
                Some(format!("c: '1.7976931348623159e308' is not DOUBLE{over}")),
                Some(format!("c: '1e-400' is not DOUBLE{under}")),
                Some(format!("c: '-0.5e-330' is not DOUBLE{under}")),
                None, None, None, None, None, None, None,
            ]
        );
    }

    proptest::proptest! {
        // The kind: whatever number a text writes, a DOUBLE either holds it
        // (finite, and 0 only for a zero) or the row is flagged; and every
        // finite double, written out, reads back as itself.
        #[test]
        fn a_double_is_the_number_written_or_flagged(
            negative in proptest::bool::ANY,
            digits in "[0-9]{1,6}",
            fraction in "[0-9]{0,6}",
            exponent in -800i32..800,
            bits in proptest::num::f64::NORMAL | proptest::num::f64::SUBNORMAL | proptest::num::f64::ZERO,
        ) {
            let sign = if negative { "-" } else { "" };
            let text = format!("{sign}{digits}.{fraction}e{exponent}");
            let (array, errors) = convert(&[Some(text.as_str())], "DOUBLE", &[]);
            let got = array.as_any().downcast_ref::<Float64Array>().unwrap();
            if errors[0].is_none() {
                let v = got.value(0);
                proptest::prop_assert!(v.is_finite(), "{} read as {}", text, v);
                let zero = !format!("{digits}{fraction}").bytes().any(|b| b != b'0');
                proptest::prop_assert_eq!(v == 0.0, zero, "{} read as {}", text, v);
            } else {
                proptest::prop_assert!(got.is_null(0));
            }
            let written = format!("{bits:e}");
            let (array, errors) = convert(&[Some(written.as_str())], "DOUBLE", &[]);
            proptest::prop_assert_eq!(&errors[0], &None);
            let back = array.as_any().downcast_ref::<Float64Array>().unwrap().value(0);
            proptest::prop_assert_eq!(back.to_bits(), bits.to_bits());
        }
    }
}
