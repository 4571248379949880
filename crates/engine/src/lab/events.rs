//! Files the lab's events send (seed 000 §8, seed 003 §6): a source's
//! records edited the way a real source changes them, written back in the
//! source's own format (JSON Lines for JSON and Kafka sources, CSV with the
//! source's delimiter and header for CSV). Each function takes the records
//! of one received file (their exact texts, as bronze keeps them) and gives
//! the texts of the new records, or why it cannot.

use serde_json::{Map, Value};

use crate::bronze::{CsvDialect, SourceFormat};
use crate::error::{EngineError, Result};

/// A record's fields in order, as names and values (JSON values; a CSV
/// field is a JSON string).
type Fields = Vec<(String, Value)>;

/// The records of a file in `format`, as fields. CSV records are read with
/// `dialect` under `header`; a record that is not a JSON object (or a CSV
/// line that does not parse) is an error naming it.
fn read(
    format: SourceFormat,
    dialect: Option<&CsvDialect>,
    header: &[String],
    texts: &[String],
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
                    EngineError::Request(format!("record {} of the file is not a CSV line", i + 1))
                })?;
                Ok(header
                    .iter()
                    .zip(rec.iter())
                    .map(|(h, v)| (h.clone(), Value::String(v.to_string())))
                    .collect())
            }
            SourceFormat::Parquet => Err(EngineError::Request(
                "this event edits a CSV or JSON source; the newest file is Parquet".into(),
            )),
            _ => match serde_json::from_str::<Value>(text) {
                Ok(Value::Object(m)) => Ok(m.into_iter().collect()),
                _ => Err(EngineError::Request(format!(
                    "record {} of the file is not a JSON object",
                    i + 1
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
    if format == SourceFormat::Csv {
        let d = dialect.map_or(b',', |d| d.delimiter as u8);
        let mut w = csv::WriterBuilder::new().delimiter(d).from_writer(vec![]);
        if let Some(first) = records.first() {
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
) -> Result<(String, &'static str, String)> {
    // Records that are not objects (a line cut off in transit) are left out.
    let mut records: Vec<Fields> = texts
        .iter()
        .filter_map(|t| read(format, dialect, header, std::slice::from_ref(t)).ok())
        .flatten()
        .collect();
    let renamed = candidates
        .iter()
        .find(|c| records.iter().any(|r| r.iter().any(|(k, _)| k == *c)))
        .cloned()
        .ok_or_else(|| {
            EngineError::Request(
                "the newest records have none of the declared columns left to rename".into(),
            )
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

/// A business error: the last record again with field `column` set to
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
) -> Result<(String, &'static str)> {
    let last = texts
        .last()
        .ok_or_else(|| EngineError::Request("the file has no record to copy".into()))?;
    let mut records = read(format, dialect, header, std::slice::from_ref(last))?;
    for r in &mut records {
        let Some((_, v)) = r.iter_mut().find(|(k, _)| k == column) else {
            return Err(EngineError::Request(format!(
                "the newest record has no field {column}"
            )));
        };
        *v = match v {
            Value::String(_) => Value::String("-100".into()),
            _ => Value::from(-100),
        };
        if let Some((_, k)) = key.and_then(|key| r.iter_mut().find(|(n, _)| n == key)) {
            *k = match &*k {
                Value::Number(n) if n.as_i64().is_some() => {
                    Value::from(n.as_i64().unwrap_or(0) + 900_000)
                }
                Value::String(t) => match t.parse::<i64>() {
                    Ok(n) => Value::String((n + 900_000).to_string()),
                    Err(_) => Value::String(format!("{t}-B")),
                },
                other => other.clone(),
            };
        }
    }
    write(format, dialect, &records)
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
            drifted(SourceFormat::JsonLines, None, &[], &texts, &cands).unwrap();
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
        let (_, _, renamed) = drifted(SourceFormat::JsonLines, None, &[], &again, &cands).unwrap();
        assert_eq!(renamed, "id");
        let header = ["id".to_string(), "amount".to_string()];
        let (text, ext, _) = drifted(
            SourceFormat::Csv,
            None,
            &header,
            &["1,\"9,50\"".into()],
            &cands,
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
        )
        .unwrap();
        assert_eq!(text, "{\"amount\":-100,\"order_id\":900002}\n");
        let err = with_negative_amount(SourceFormat::JsonLines, None, &[], &texts, "fare", None)
            .unwrap_err();
        assert_eq!(err.to_string(), "the newest record has no field fare");
    }
}
