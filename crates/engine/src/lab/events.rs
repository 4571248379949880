//! Files the lab's events send (seed 000 §8, seed 003 §6): a source's
//! records edited the way a real source changes them, written back in the
//! source's own format (JSON Lines for JSON and Kafka sources, CSV with the
//! source's delimiter and header for CSV). Each function takes the records
//! of one received file (their exact texts, as bronze keeps them) and gives
//! the texts of the new records, or why it cannot.

use serde_json::{Map, Value};

use super::tr;
use crate::api::Lang;
use crate::bronze::{CsvDialect, SourceFormat};
use crate::error::{EngineError, Result};

/// A record's fields in order, as names and values (JSON values; a CSV
/// field is a JSON string).
pub(crate) type Fields = Vec<(String, Value)>;

/// The records of a file in `format`, as fields. CSV records are read with
/// `dialect` under `header`; a record that is not a JSON object (or a CSV
/// line that does not parse) is an error naming it.
fn read(
    format: SourceFormat,
    dialect: Option<&CsvDialect>,
    header: &[String],
    texts: &[String],
    lang: Lang,
) -> Result<Vec<Fields>> {
    texts
        .iter()
        .enumerate()
        .map(|(i, text)| match format {
            SourceFormat::Csv => {
                let d = dialect.map_or(b',', |d| d.delimiter as u8);
                let mut r = csv::ReaderBuilder::new()
                    .has_headers(false)
                    .delimiter(d)
                    .from_reader(text.as_bytes());
                let rec = r.records().next().and_then(|r| r.ok()).ok_or_else(|| {
                    EngineError::Request(tr(
                        lang,
                        format!("record {} of the file is not a CSV line", i + 1),
                        format!("запись {} файла — не строка CSV", i + 1),
                    ))
                })?;
                Ok(header
                    .iter()
                    .zip(rec.iter())
                    .map(|(h, v)| (h.clone(), Value::String(v.to_string())))
                    .collect())
            }
            SourceFormat::Parquet => Err(EngineError::Request(tr(
                lang,
                "this event edits a CSV or JSON source; the newest file is Parquet".into(),
                "это событие меняет источник CSV или JSON, а последний файл — Parquet".into(),
            ))),
            _ => match serde_json::from_str::<Value>(text) {
                Ok(Value::Object(m)) => Ok(m.into_iter().collect()),
                _ => Err(EngineError::Request(tr(
                    lang,
                    format!("record {} of the file is not a JSON object", i + 1),
                    format!("запись {} файла — не объект JSON", i + 1),
                ))),
            },
        })
        .collect()
}

/// `records` written as a file in the source's format: `(file text, extension)`.
fn write(
    format: SourceFormat,
    dialect: Option<&CsvDialect>,
    records: &[Fields],
) -> Result<(String, &'static str)> {
    write_records(format, dialect, records, true)
}

/// `records` in the source's format, a CSV header line first when `header`.
fn write_records(
    format: SourceFormat,
    dialect: Option<&CsvDialect>,
    records: &[Fields],
    header: bool,
) -> Result<(String, &'static str)> {
    if format == SourceFormat::Csv {
        let d = dialect.map_or(b',', |d| d.delimiter as u8);
        let mut w = csv::WriterBuilder::new().delimiter(d).from_writer(vec![]);
        if let Some(first) = records.first().filter(|_| header) {
            w.write_record(first.iter().map(|(k, _)| k.as_str()))
                .map_err(|e| EngineError::Internal(e.to_string()))?;
        }
        for r in records {
            w.write_record(r.iter().map(|(_, v)| match v {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                other => other.to_string(),
            }))
            .map_err(|e| EngineError::Internal(e.to_string()))?;
        }
        let bytes = w
            .into_inner()
            .map_err(|e| EngineError::Internal(e.to_string()))?;
        return Ok((String::from_utf8_lossy(&bytes).into_owned(), "csv"));
    }
    let lines: Vec<String> = records
        .iter()
        .map(|r| Value::Object(r.iter().cloned().collect::<Map<_, _>>()).to_string())
        .collect();
    Ok((lines.join("\n") + "\n", "jsonl"))
}

/// Schema drift: in every record, the first of `candidates` the records
/// have (`renamed`) becomes `{renamed}_v2` and a new field `source_version`
/// = 2 is added (the source's new release). Returns the file and `renamed`.
pub fn drifted(
    format: SourceFormat,
    dialect: Option<&CsvDialect>,
    header: &[String],
    texts: &[String],
    candidates: &[String],
    lang: Lang,
) -> Result<(String, &'static str, String)> {
    // Records that are not objects (a line cut off in transit) are left out.
    let mut records: Vec<Fields> = texts
        .iter()
        .filter_map(|t| read(format, dialect, header, std::slice::from_ref(t), lang).ok())
        .flatten()
        .collect();
    let renamed = candidates
        .iter()
        .find(|c| records.iter().any(|r| r.iter().any(|(k, _)| k == *c)))
        .cloned()
        .ok_or_else(|| {
            EngineError::Request(tr(
                lang,
                "the newest records have none of the declared columns left to rename".into(),
                "в последних записях не осталось ни одной объявленной колонки, которую можно переименовать".into(),
            ))
        })?;
    for r in &mut records {
        for (k, _) in r.iter_mut() {
            if *k == renamed {
                *k = format!("{renamed}_v2");
            }
        }
        let two = if format == SourceFormat::Csv {
            Value::String("2".into())
        } else {
            Value::from(2)
        };
        r.push(("source_version".into(), two));
    }
    let (text, ext) = write(format, dialect, &records)?;
    Ok((text, ext, renamed))
}

/// A business error: the last of `texts` again with field `column` set to
/// -100 (a JSON string if it was one, else a number), as a new record:
/// its business `key` field (if given and present) gets a new value (a
/// number + 900000, a text + `-B`), so it ties with no earlier change.
pub fn with_negative_amount(
    format: SourceFormat,
    dialect: Option<&CsvDialect>,
    header: &[String],
    texts: &[String],
    column: &str,
    key: Option<&str>,
    lang: Lang,
) -> Result<(String, &'static str)> {
    let last = texts.last().ok_or_else(|| {
        EngineError::Request(tr(
            lang,
            "the file has no record to copy".into(),
            "в файле нет записи, которую можно скопировать".into(),
        ))
    })?;
    let mut records = read(format, dialect, header, std::slice::from_ref(last), lang)?;
    for r in &mut records {
        let Some((_, v)) = r.iter_mut().find(|(k, _)| k == column) else {
            return Err(no_field(column, lang));
        };
        *v = match v {
            Value::String(_) => Value::String("-100".into()),
            _ => Value::from(-100),
        };
        if let Some((_, k)) = key.and_then(|key| r.iter_mut().find(|(n, _)| n == key)) {
            *k = new_key(k, 900_000, "-B");
        }
    }
    write(format, dialect, &records)
}

/// A business key moved so it ties with no earlier record: a number (or a
/// text holding one) plus `plus`, any other text with `suffix` appended.
fn new_key(k: &Value, plus: i64, suffix: &str) -> Value {
    match k {
        Value::Number(n) if n.as_i64().is_some() => Value::from(n.as_i64().unwrap_or(0) + plus),
        Value::String(t) => match t.parse::<i64>() {
            Ok(n) => Value::String((n + plus).to_string()),
            Err(_) => Value::String(format!("{t}{suffix}")),
        },
        other => other.clone(),
    }
}

/// One record's text edited in place by `edit` (which says whether it
/// changed anything) and written back in the source's format: a CSV line
/// without the header, a compact JSON object. `None` when `edit` changed
/// nothing; an error when the text is not a record of `format`.
pub fn edit_record(
    format: SourceFormat,
    dialect: Option<&CsvDialect>,
    header: &[String],
    text: &str,
    edit: impl FnOnce(&mut Fields) -> bool,
    lang: Lang,
) -> Result<Option<String>> {
    let mut records = read(format, dialect, header, &[text.to_string()], lang)?;
    let Some(r) = records.first_mut() else {
        return Ok(None);
    };
    if !edit(r) {
        return Ok(None);
    }
    let (text, _) = write_records(format, dialect, &records, false)?;
    Ok(Some(text.trim_end_matches(['\r', '\n']).to_string()))
}

/// The absolute value of field `column` when it holds a negative number
/// (a JSON number, or a text that parses as one with `decimal` as its
/// decimal separator: the minus is dropped, the digits kept exactly).
/// Returns whether it changed.
pub fn make_positive(fields: &mut Fields, column: &str, decimal: char) -> bool {
    let Some((_, v)) = fields.iter_mut().find(|(k, _)| k == column) else {
        return false;
    };
    let text = match &*v {
        Value::String(s) => s.trim().to_string(),
        Value::Number(n) => n.to_string(),
        _ => return false,
    };
    let Some(digits) = text.strip_prefix('-') else {
        return false;
    };
    if digits.replace(decimal, ".").parse::<f64>().is_err() {
        return false;
    }
    *v = match &*v {
        Value::String(_) => Value::String(digits.to_string()),
        _ => match serde_json::from_str::<Value>(digits) {
            Ok(n @ Value::Number(_)) => n,
            _ => return false,
        },
    };
    true
}

/// Late records (seed 000 §5): the records again with the date of field
/// `date_column` moved `days` back (the `YYYY-MM-DD` at the start of its
/// text; the rest, a time or an offset, kept) and their business `key`
/// moved (+800000, or `-L`), so they are new records of an earlier day.
/// Records without a date there are left out. Returns the file and the
/// earliest original and shifted dates.
pub fn late(
    format: SourceFormat,
    dialect: Option<&CsvDialect>,
    header: &[String],
    texts: &[String],
    date_column: &str,
    key: Option<&str>,
    days: i64,
    lang: Lang,
) -> Result<(String, &'static str, String, String)> {
    let mut records: Vec<Fields> = Vec::new();
    let mut dates: Vec<(String, String)> = Vec::new();
    for t in texts {
        let Ok(mut rs) = read(format, dialect, header, std::slice::from_ref(t), lang) else {
            continue;
        };
        let Some(mut r) = rs.pop() else { continue };
        let Some((_, v)) = r.iter_mut().find(|(k, _)| k == date_column) else {
            continue;
        };
        let Value::String(s) = &*v else { continue };
        let Some(day) = s
            .get(..10)
            .and_then(|d| chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
        else {
            continue;
        };
        let shifted = day - chrono::Duration::days(days);
        let new = format!("{}{}", shifted.format("%Y-%m-%d"), &s[10..]);
        dates.push((day.to_string(), shifted.to_string()));
        *v = Value::String(new);
        if let Some((_, k)) = key.and_then(|key| r.iter_mut().find(|(n, _)| n == key)) {
            *k = new_key(k, 800_000, "-L");
        }
        records.push(r);
    }
    let (from, to) = dates.iter().min().cloned().ok_or_else(|| {
        EngineError::Request(tr(
            lang,
            format!("the newest records have no date in {date_column} to move back"),
            format!("в последних записях нет даты в {date_column}, которую можно сдвинуть назад"),
        ))
    })?;
    let (text, ext) = write(format, dialect, &records)?;
    Ok((text, ext, from, to))
}

/// New records: `texts` again, each under a new value of its business
/// key `key` (so none ties with a record the source sent before), in the
/// source's format. Records that do not parse are left out. Errors: none
/// of them parses (nothing to send).
pub fn again(
    format: SourceFormat,
    dialect: Option<&CsvDialect>,
    header: &[String],
    texts: &[String],
    key: Option<&str>,
    lang: Lang,
) -> Result<(String, &'static str)> {
    let mut records: Vec<Fields> = Vec::new();
    for t in texts {
        let Ok(mut rs) = read(format, dialect, header, std::slice::from_ref(t), lang) else {
            continue;
        };
        let Some(mut r) = rs.pop() else { continue };
        if let Some((_, k)) = key.and_then(|key| r.iter_mut().find(|(n, _)| n == key)) {
            *k = new_key(k, 900_000, "-N");
        }
        records.push(r);
    }
    if records.is_empty() {
        return Err(EngineError::Request(tr(
            lang,
            "the source's newest records cannot be read to send new ones like them".into(),
            "последние записи источника не читаются, чтобы прислать похожие новые".into(),
        )));
    }
    write(format, dialect, &records)
}

/// The texts of field `column` over `texts` (records that do not parse,
/// or lack it, left out; JSON non-strings in their JSON form).
pub fn field_texts(
    format: SourceFormat,
    dialect: Option<&CsvDialect>,
    header: &[String],
    texts: &[String],
    column: &str,
    lang: Lang,
) -> Vec<String> {
    texts
        .iter()
        .filter_map(|t| read(format, dialect, header, std::slice::from_ref(t), lang).ok())
        .flatten()
        .filter_map(|r| {
            r.into_iter()
                .find(|(k, _)| k == column)
                .and_then(|(_, v)| match v {
                    Value::String(s) => Some(s),
                    Value::Null => None,
                    other => Some(other.to_string()),
                })
        })
        .collect()
}

/// The newest record lacks field `column`.
fn no_field(column: &str, lang: Lang) -> EngineError {
    EngineError::Request(tr(
        lang,
        format!("the newest record has no field {column}"),
        format!("в последней записи нет поля {column}"),
    ))
}

/// A slowly changing dimension: `text` (one record) again with field
/// `column` set to the text `value`, its key and every other field kept,
/// as a file in the source's format. Returns the file, its extension, the
/// record's first field as `name = value` (which record it is) and the
/// old value; an error when the record has no such field.
pub fn changed_record(
    format: SourceFormat,
    dialect: Option<&CsvDialect>,
    header: &[String],
    text: &str,
    column: &str,
    value: &str,
    lang: Lang,
) -> Result<(String, &'static str, String, String)> {
    let mut records = read(format, dialect, header, &[text.to_string()], lang)?;
    let r = records.first_mut().ok_or_else(|| {
        EngineError::Request(tr(
            lang,
            "the record to change is empty".into(),
            "изменяемая запись пуста".into(),
        ))
    })?;
    let which = r
        .first()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k} = {s}"),
            other => format!("{k} = {other}"),
        })
        .unwrap_or_default();
    let (_, v) = r
        .iter_mut()
        .find(|(k, _)| k == column)
        .ok_or_else(|| no_field(column, lang))?;
    let old = match &*v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    *v = Value::String(value.to_string());
    let (text, ext) = write(format, dialect, &records)?;
    Ok((text, ext, which, old))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drift_renames_a_field_and_adds_one_in_json_and_csv() {
        let cands = ["amount".to_string(), "id".to_string()];
        let texts = [
            r#"{"id": 1, "amount": "9.50"}"#.to_string(),
            r#"{"id": 2, "amo"#.to_string(),
        ];
        let (text, ext, renamed) =
            drifted(SourceFormat::JsonLines, None, &[], &texts, &cands, Lang::En).unwrap();
        assert_eq!(
            (text.as_str(), ext, renamed.as_str()),
            (
                "{\"amount_v2\":\"9.50\",\"id\":1,\"source_version\":2}\n",
                "jsonl",
                "amount"
            )
        );
        // Drifted once already: the next candidate the records still have.
        let again = [r#"{"id": 1, "amount_v2": "9.50"}"#.to_string()];
        let (_, _, renamed) =
            drifted(SourceFormat::JsonLines, None, &[], &again, &cands, Lang::En).unwrap();
        assert_eq!(renamed, "id");
        let header = ["id".to_string(), "amount".to_string()];
        let (text, ext, _) = drifted(
            SourceFormat::Csv,
            None,
            &header,
            &["1,\"9,50\"".into()],
            &cands,
            Lang::En,
        )
        .unwrap();
        assert_eq!(
            (text.as_str(), ext),
            ("id,amount_v2,source_version\n1,\"9,50\",2\n", "csv")
        );
    }

    #[test]
    fn a_business_error_copies_the_last_record_with_amount_minus_100() {
        let texts = [
            r#"{"order_id": 1, "amount": "5.00"}"#.to_string(),
            r#"{"order_id": 2, "amount": 7}"#.to_string(),
        ];
        let (text, _) = with_negative_amount(
            SourceFormat::JsonLines,
            None,
            &[],
            &texts,
            "amount",
            Some("order_id"),
            Lang::En,
        )
        .unwrap();
        assert_eq!(text, "{\"amount\":-100,\"order_id\":900002}\n");
        let err = with_negative_amount(
            SourceFormat::JsonLines,
            None,
            &[],
            &texts,
            "fare",
            None,
            Lang::En,
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "the newest record has no field fare");
    }

    #[test]
    fn the_fix_job_drops_the_minus_of_a_negative_amount_in_json_and_csv() {
        let fix = |format, header: &[String], text: &str| {
            edit_record(
                format,
                None,
                header,
                text,
                |f| make_positive(f, "amount", '.'),
                Lang::En,
            )
            .unwrap()
        };
        assert_eq!(
            fix(
                SourceFormat::JsonLines,
                &[],
                r#"{"id": 9, "amount": "-100.50"}"#
            )
            .as_deref(),
            Some(r#"{"amount":"100.50","id":9}"#)
        );
        assert_eq!(
            fix(SourceFormat::JsonLines, &[], r#"{"id": 9, "amount": -100}"#).as_deref(),
            Some(r#"{"amount":100,"id":9}"#)
        );
        assert_eq!(
            fix(SourceFormat::JsonLines, &[], r#"{"amount": "7"}"#),
            None
        );
        assert_eq!(
            fix(SourceFormat::JsonLines, &[], r#"{"amount": "-x"}"#),
            None
        );
        let header = ["id".to_string(), "amount".to_string()];
        assert_eq!(
            fix(SourceFormat::Csv, &header, "9,\"-1,5\"").as_deref(),
            None,
            "a decimal comma is not a number here: the job leaves it (and deletes the record)"
        );
        assert_eq!(
            fix(SourceFormat::Csv, &header, "9,-1.5").as_deref(),
            Some("9,1.5")
        );
        // A source that writes decimal commas: the table's separator.
        let mut f = vec![("amount".to_string(), Value::String("-5,00".into()))];
        assert!(make_positive(&mut f, "amount", ','));
        assert_eq!(f[0].1, Value::String("5,00".into()));
    }

    #[test]
    fn a_dimension_change_keeps_the_key_and_changes_one_field() {
        let header = ["uid".to_string(), "country".to_string()];
        let (text, ext, which, old) = changed_record(
            SourceFormat::Csv,
            None,
            &header,
            "42,DE",
            "country",
            "RU",
            Lang::En,
        )
        .unwrap();
        assert_eq!(
            (text.as_str(), ext, which.as_str(), old.as_str()),
            ("uid,country\n42,RU\n", "csv", "uid = 42", "DE")
        );
        let texts = ["15,RU".to_string(), "42,DE".to_string(), "x".to_string()];
        assert_eq!(
            field_texts(
                SourceFormat::Csv,
                None,
                &header,
                &texts,
                "country",
                Lang::En
            ),
            ["RU", "DE"]
        );
    }

    #[test]
    fn late_records_move_their_date_back_and_get_new_keys() {
        let texts = [
            r#"{"order_id": 7, "order_ts": "2024-03-05T10:00:00Z"}"#.to_string(),
            r#"{"order_id": 8, "order_ts": null}"#.to_string(),
        ];
        let (text, ext, from, to) = late(
            SourceFormat::JsonLines,
            None,
            &[],
            &texts,
            "order_ts",
            Some("order_id"),
            3,
            Lang::En,
        )
        .unwrap();
        assert_eq!(
            (text.as_str(), ext, from.as_str(), to.as_str()),
            (
                "{\"order_id\":800007,\"order_ts\":\"2024-03-02T10:00:00Z\"}\n",
                "jsonl",
                "2024-03-05",
                "2024-03-02"
            )
        );
        let err = late(
            SourceFormat::JsonLines,
            None,
            &[],
            &texts[1..],
            "order_ts",
            None,
            3,
            Lang::En,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the newest records have no date in order_ts to move back"
        );
    }
}
