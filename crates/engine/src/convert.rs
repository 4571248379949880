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
//! - TIMESTAMP / DATE without declared formats take Arrow's standard forms
//!   (`2024-03-01 08:15:00`, `2024-03-01T08:15:00`, `+03:00` offsets converted
//!   to UTC). With declared formats, only those: a chrono pattern
//!   (`%d/%m/%Y %H:%M`), a Spark pattern (`MM/dd/yyyy HH:mm`), or `epoch_ms`,
//!   `epoch_s`, `epoch_us`. Impossible dates (`2024-02-30`) never roll over.

use std::sync::Arc;

use base64::Engine as _;
use chrono::{DateTime, NaiveDate, NaiveDateTime};
use datafusion::arrow::array::{
    Array, ArrayRef, Date32Array, Decimal128Array, Int32Array, Int64Array, StringArray,
    TimestampMicrosecondArray,
};
use datafusion::arrow::compute::{cast_with_options, CastOptions};

use crate::error::Result;
use crate::source::ColumnType;

/// Converts `texts` (one column) to `ty`. Returns the typed array (NULL
/// where the text is NULL or did not convert) and, per row, the message for a
/// text that did not convert, prefixed with `name`.
pub fn convert_column(
    name: &str,
    texts: &StringArray,
    ty: ColumnType,
    formats: &[String],
) -> Result<(ArrayRef, Vec<Option<String>>)> {
    let n = texts.len();
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
        ColumnType::Timestamp | ColumnType::Date if !formats.is_empty() => {
            let patterns: Vec<Pattern> = formats.iter().map(|f| Pattern::new(f)).collect();
            let listed = format!(" (declared formats: {})", formats.join(", "));
            let mut micros: Vec<Option<i64>> = Vec::with_capacity(n);
            for row in 0..n {
                let Some(text) = values(row) else {
                    micros.push(None);
                    continue;
                };
                let text = text.trim();
                match patterns.iter().find_map(|p| p.parse_micros(text)) {
                    Some(v) => micros.push(Some(v)),
                    None => {
                        fail(row, listed.clone());
                        micros.push(None)
                    }
                }
            }
            if ty == ColumnType::Date {
                const DAY: i64 = 86_400_000_000;
                Arc::new(Date32Array::from_iter(
                    micros
                        .into_iter()
                        .map(|m| m.map(|m| m.div_euclid(DAY) as i32)),
                ))
            } else {
                Arc::new(TimestampMicrosecondArray::from(micros))
            }
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
    Ok((array, errors))
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
    let shift = exponent - frac_part.len() as i64 + scale as i64;
    let digits = digits.trim_start_matches('0');
    let kept = if shift >= 0 {
        if digits.is_empty() {
            String::new()
        } else if digits.len() as i64 + shift > precision as i64 {
            return Err(DecimalError::TooManyDigits(
                (digits.len() as i64 + shift) as usize,
            ));
        } else {
            format!("{digits}{}", "0".repeat(shift as usize))
        }
    } else {
        let cut = (-shift) as usize;
        let (head, tail) = digits.split_at(digits.len().saturating_sub(cut));
        if tail.bytes().any(|b| b != b'0') {
            let decimals = (frac_part.len() as i64 - exponent).max(0) as usize;
            return Err(DecimalError::Rounded(decimals));
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

/// One declared timestamp / date format.
enum Pattern {
    /// Whole units since 1970-01-01 UTC; micros per unit.
    Epoch(i64),
    /// A chrono pattern; `zoned` when it reads an offset.
    Chrono { pattern: String, zoned: bool },
}

impl Pattern {
    fn new(format: &str) -> Self {
        match format.trim().to_ascii_lowercase().as_str() {
            "epoch_ms" => return Pattern::Epoch(1_000),
            "epoch_s" => return Pattern::Epoch(1_000_000),
            "epoch_us" => return Pattern::Epoch(1),
            _ => {}
        }
        let pattern = if format.contains('%') {
            format.to_string()
        } else {
            spark_to_chrono(format)
        };
        let zoned = pattern.contains("%z") || pattern.contains("%:z") || pattern.contains("%#z");
        Pattern::Chrono { pattern, zoned }
    }

    /// Microseconds since the epoch (UTC) if `text` matches.
    fn parse_micros(&self, text: &str) -> Option<i64> {
        match self {
            Pattern::Epoch(unit) => text.parse::<i64>().ok()?.checked_mul(*unit),
            Pattern::Chrono {
                pattern,
                zoned: true,
            } => DateTime::parse_from_str(text, pattern)
                .ok()
                .map(|d| d.timestamp_micros()),
            Pattern::Chrono { pattern, .. } => NaiveDateTime::parse_from_str(text, pattern)
                .ok()
                .or_else(|| {
                    NaiveDate::parse_from_str(text, pattern)
                        .ok()
                        .and_then(|d| d.and_hms_opt(0, 0, 0))
                })
                .map(|d| d.and_utc().timestamp_micros()),
        }
    }
}

/// A Spark / Java date pattern (`MM/dd/yyyy HH:mm`, `yyyy-MM-dd'T'HH:mm:ss`)
/// as a chrono pattern (`%m/%d/%Y %H:%M`, `%Y-%m-%dT%H:%M:%S`).
fn spark_to_chrono(format: &str) -> String {
    const TOKENS: [(&str, &str); 13] = [
        ("yyyy", "%Y"),
        ("yy", "%y"),
        ("MM", "%m"),
        ("dd", "%d"),
        ("HH", "%H"),
        ("hh", "%I"),
        ("mm", "%M"),
        ("ss", "%S"),
        ("SSSSSS", "%6f"),
        ("SSS", "%3f"),
        ("XXX", "%:z"),
        ("Z", "%z"),
        ("a", "%p"),
    ];
    let mut out = String::new();
    let mut rest = format;
    while !rest.is_empty() {
        if let Some(quoted) = rest.strip_prefix('\'') {
            let end = quoted.find('\'').unwrap_or(quoted.len());
            out.push_str(&quoted[..end]);
            rest = quoted.get(end + 1..).unwrap_or("");
            continue;
        }
        if let Some((token, chrono)) = TOKENS.iter().find(|(t, _)| rest.starts_with(t)) {
            out.push_str(chrono);
            rest = &rest[token.len()..];
            continue;
        }
        let c = rest.chars().next().unwrap_or_default();
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
