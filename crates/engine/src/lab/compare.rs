//! The session and its twin compared: gold models side by side (rows
//! matched on the model's key, the cells that differ), each numeric gold
//! column's total on both sides with the ratio, and the checks whose status
//! differs. Row counts are [`medallion_protocol::lab::LabCount`]s built by the caller.

use std::collections::{BTreeMap, VecDeque};

use datafusion::arrow::array::{
    Array, ArrayRef, Decimal128Array, Float64Array, Int64Array, RecordBatch,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};

use crate::checks::CheckResult;
use crate::error::Result;
use medallion_protocol::lab::{LabCheck, LabGold, LabMeasure, LabRow};
use medallion_protocol::TableName;

/// Rows a [`LabGold`] lists at most; past it, only rows with a change.
pub const LAB_ROWS: usize = 200;

/// Cells of `batch` as text, by row (`None` for NULL), in the page's formats.
fn cells(batch: &RecordBatch) -> Result<Vec<Vec<Option<String>>>> {
    let opts = FormatOptions::default()
        .with_timestamp_format(Some("%Y-%m-%d %H:%M:%S%.f"))
        .with_timestamp_tz_format(Some("%Y-%m-%d %H:%M:%S%.f UTC"));
    let formatters = batch
        .columns()
        .iter()
        .map(|c| ArrayFormatter::try_new(c.as_ref(), &opts))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    Ok((0..batch.num_rows())
        .map(|r| {
            batch
                .columns()
                .iter()
                .zip(&formatters)
                .map(|(c, f)| (!c.is_null(r)).then(|| f.value(r).to_string()))
                .collect()
        })
        .collect())
}

/// Gold model `model` on both sides: rows matched on `key` (column names;
/// empty: every column), the i-th row of a key on one side with the i-th on
/// the other, in the correct side's order, then rows only the twin has
/// (one row on each side and no key: those two rows).
/// The twin's cells follow the correct side's columns by name. `None` for
/// a side: the model has no table there (it failed: `error`).
pub fn compare_gold(
    model: TableName,
    key: &[String],
    correct: Option<&RecordBatch>,
    anti: Option<&RecordBatch>,
    error: Option<String>,
) -> Result<LabGold> {
    let Some(shape) = correct.or(anti) else {
        return Ok(LabGold {
            model,
            columns: vec![],
            key: key.to_vec(),
            rows: vec![],
            changed_rows: 0,
            measures: vec![],
            error,
        });
    };
    let columns: Vec<String> = shape
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let key_idx: Vec<usize> = if key.is_empty() {
        (0..columns.len()).collect()
    } else {
        key.iter()
            .filter_map(|k| columns.iter().position(|c| c == k))
            .collect()
    };
    let side = |b: Option<&RecordBatch>| -> Result<Vec<Vec<Option<String>>>> {
        let Some(b) = b else { return Ok(vec![]) };
        let all = cells(b)?;
        let names: Vec<String> = b
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        Ok(all
            .into_iter()
            .map(|row| {
                columns
                    .iter()
                    .map(|c| {
                        names
                            .iter()
                            .position(|n| n == c)
                            .and_then(|i| row[i].clone())
                    })
                    .collect()
            })
            .collect())
    };
    let left = side(correct)?;
    let right = side(anti)?;
    // One row on each side and no key (an aggregate without GROUP BY): the
    // two rows are the same figure.
    let single = key.is_empty() && left.len() == 1 && right.len() == 1;
    let key_of = |row: &Vec<Option<String>>| -> Vec<Option<String>> {
        if single {
            return vec![];
        }
        key_idx.iter().map(|&i| row[i].clone()).collect()
    };
    let mut waiting: BTreeMap<Vec<Option<String>>, VecDeque<usize>> = BTreeMap::new();
    for (i, r) in right.iter().enumerate() {
        waiting.entry(key_of(r)).or_default().push_back(i);
    }
    let all_cells: Vec<usize> = (0..columns.len()).collect();
    let mut rows = Vec::new();
    for l in &left {
        match waiting.get_mut(&key_of(l)).and_then(VecDeque::pop_front) {
            Some(j) => {
                let r = &right[j];
                let changed = (0..columns.len())
                    .filter(|&c| !same_cell(&l[c], &r[c]))
                    .collect();
                rows.push(LabRow {
                    correct: l.clone(),
                    anti: r.clone(),
                    changed,
                });
            }
            None => rows.push(LabRow {
                correct: l.clone(),
                anti: vec![],
                changed: all_cells.clone(),
            }),
        }
    }
    let mut only_anti: Vec<usize> = waiting.into_values().flatten().collect();
    only_anti.sort();
    rows.extend(only_anti.into_iter().map(|j| LabRow {
        correct: vec![],
        anti: right[j].clone(),
        changed: all_cells.clone(),
    }));
    let changed_rows = rows.iter().filter(|r| !r.changed.is_empty()).count();
    if rows.len() > LAB_ROWS {
        rows.retain(|r| !r.changed.is_empty());
        rows.truncate(LAB_ROWS);
    }
    let measures = shape
        .schema()
        .fields()
        .iter()
        .enumerate()
        .filter(|(i, f)| {
            // A one-row aggregate's figures are all measures.
            (single || (!key.is_empty() && !key_idx.contains(i)))
                && is_numeric(f.data_type())
                && additive(f.name())
        })
        .map(|(_, f)| {
            let total = |b: Option<&RecordBatch>| {
                b.and_then(|b| b.column_by_name(f.name())).and_then(total)
            };
            let (c, a) = (total(correct), total(anti));
            LabMeasure {
                column: f.name().clone(),
                ratio: match (&c, &a) {
                    (Some(c), Some(a)) if c.value != 0.0 => {
                        Some(a.value / c.value * 10f64.powi(c.scale - a.scale))
                    }
                    _ => None,
                },
                correct: c.map(|t| t.text).unwrap_or_else(|| "NULL".into()),
                anti: a.map(|t| t.text).unwrap_or_else(|| "NULL".into()),
            }
        })
        .collect();
    Ok(LabGold {
        model,
        columns,
        key: key_idx
            .iter()
            .map(|&i| shape.schema().field(i).name().clone())
            .collect(),
        rows,
        changed_rows,
        measures,
        error,
    })
}

/// Does summing the column make sense? Not for averages, rates, shares,
/// percentages, extremes and first / last values (`avg_order`,
/// `tip_rate`, `pct_late`, `max_amount`, `latest_fare`): their sum is no figure.
fn additive(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ![
        "avg", "mean", "average", "rate", "ratio", "share", "pct", "percent", "median", "max",
        "min", "maximum", "minimum", "highest", "lowest", "peak", "first", "last", "latest",
        "earliest",
    ]
    .iter()
    .any(|w| n.split('_').any(|part| part == *w) || n.starts_with(w))
}

/// Two cells hold the same value: the same text, or the same number
/// written at another scale or type (`72.00` DECIMAL and `72.0` DOUBLE).
fn same_cell(a: &Option<String>, b: &Option<String>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) if x != y => matches!(
            (x.parse::<f64>(), y.parse::<f64>()),
            (Ok(p), Ok(q)) if p == q && p.is_finite()
        ),
        _ => a == b,
    }
}

fn is_numeric(t: &DataType) -> bool {
    t.is_integer() || t.is_floating() || matches!(t, DataType::Decimal128(..))
}

/// A column's total: exact text, and its unscaled value as a float with
/// its decimal scale (the ratio of two totals of one scale divides the
/// unscaled integers: 29997 / 9999 is exactly 3).
struct Total {
    text: String,
    value: f64,
    scale: i32,
}

/// The sum of a numeric column's non-NULL values: exact for integers and
/// DECIMAL (`None` on overflow or when every value is NULL).
fn total(col: &ArrayRef) -> Option<Total> {
    if col.is_empty() {
        // No rows: the total is 0, not unknown.
        let scale = match col.data_type() {
            DataType::Decimal128(_, s) => *s as i32,
            _ => 0,
        };
        let text = if scale > 0 {
            format!("0.{:0w$}", 0, w = scale as usize)
        } else {
            "0".into()
        };
        return Some(Total {
            text,
            value: 0.0,
            scale,
        });
    }
    if col.null_count() == col.len() {
        return None;
    }
    match col.data_type() {
        DataType::Decimal128(_, scale) => {
            let a = col.as_any().downcast_ref::<Decimal128Array>()?;
            let mut sum: i128 = 0;
            for v in a.iter().flatten() {
                sum = sum.checked_add(v)?;
            }
            let scale = *scale as u32;
            let text = if scale == 0 {
                sum.to_string()
            } else {
                let p = 10i128.pow(scale);
                let sign = if sum < 0 { "-" } else { "" };
                format!(
                    "{sign}{}.{:0w$}",
                    (sum / p).abs(),
                    (sum % p).abs(),
                    w = scale as usize
                )
            };
            Some(Total {
                text,
                value: sum as f64,
                scale: scale as i32,
            })
        }
        t if t.is_integer() => {
            let c = cast(col, &DataType::Int64).ok()?;
            let a = c.as_any().downcast_ref::<Int64Array>()?;
            let mut sum: i128 = 0;
            for v in a.iter().flatten() {
                sum = sum.checked_add(v as i128)?;
            }
            Some(Total {
                text: sum.to_string(),
                value: sum as f64,
                scale: 0,
            })
        }
        _ => {
            let c = cast(col, &DataType::Float64).ok()?;
            let a = c.as_any().downcast_ref::<Float64Array>()?;
            let sum: f64 = a.iter().flatten().sum();
            Some(Total {
                text: sum.to_string(),
                value: sum,
                scale: 0,
            })
        }
    }
}

/// The checks whose status differs between the sides, in the correct side's order.
pub fn compare_checks(correct: &[CheckResult], anti: &[CheckResult]) -> Vec<LabCheck> {
    correct
        .iter()
        .filter_map(|c| {
            let a = anti.iter().find(|a| a.id == c.id)?;
            (a.status != c.status).then(|| LabCheck {
                id: c.id.clone(),
                description: c.description.clone(),
                correct: c.status,
                anti: a.status,
                observation: a.observed.clone(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extremes_are_not_summed_and_equal_numbers_are_the_same_cell() {
        assert!(!additive("max_amount") && !additive("min_fare") && !additive("latest_fare"));
        assert!(additive("revenue") && additive("orders_count"));
        let c = |s: &str| Some(s.to_string());
        assert!(same_cell(&c("72.00"), &c("72.0")));
        assert!(!same_cell(&c("72.00"), &c("72.01")));
        assert!(!same_cell(&c("DE"), &c("RU")));
        assert!(!same_cell(&None, &c("0")));
    }
    use datafusion::arrow::array::StringArray;
    use datafusion::arrow::datatypes::{Field, Schema};
    use std::sync::Arc;

    fn revenue(countries: &[&str], cents: &[i128]) -> RecordBatch {
        RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("country", DataType::Utf8, true),
                Field::new("revenue", DataType::Decimal128(12, 2), true),
            ])),
            vec![
                Arc::new(StringArray::from(countries.to_vec())),
                Arc::new(
                    Decimal128Array::from(cents.to_vec())
                        .with_precision_and_scale(12, 2)
                        .unwrap(),
                ),
            ],
        )
        .unwrap()
    }

    #[test]
    fn rows_match_on_the_key_and_totals_are_exact() {
        let correct = revenue(&["DE", "US"], &[9999, 14900]);
        let anti = revenue(&["US", "DE", "FR"], &[14900, 19998, 100]);
        let g = compare_gold(
            TableName::gold("r"),
            &["country".into()],
            Some(&correct),
            Some(&anti),
            None,
        )
        .unwrap();
        assert_eq!(g.key, vec!["country"]);
        assert_eq!(g.rows.len(), 3);
        assert_eq!(
            g.rows[0].correct,
            vec![Some("DE".into()), Some("99.99".into())]
        );
        assert_eq!(
            g.rows[0].anti,
            vec![Some("DE".into()), Some("199.98".into())]
        );
        assert_eq!(g.rows[0].changed, vec![1]);
        assert!(g.rows[1].changed.is_empty());
        assert!(g.rows[2].correct.is_empty());
        assert_eq!(g.rows[2].changed, vec![0, 1]);
        assert_eq!(g.changed_rows, 2);
        assert_eq!(g.measures.len(), 1);
        assert_eq!(
            (g.measures[0].correct.as_str(), g.measures[0].anti.as_str()),
            ("248.99", "349.98")
        );
    }

    #[test]
    fn a_doubled_total_has_ratio_two_exactly() {
        let correct = revenue(&["DE"], &[9999]);
        let anti = revenue(&["DE"], &[19998]);
        let g = compare_gold(
            TableName::gold("r"),
            &["country".into()],
            Some(&correct),
            Some(&anti),
            None,
        )
        .unwrap();
        assert_eq!(g.measures[0].ratio, Some(2.0));
        let neg = revenue(&["DE"], &[-5]);
        let g = compare_gold(
            TableName::gold("r"),
            &["country".into()],
            Some(&neg),
            Some(&neg),
            None,
        )
        .unwrap();
        assert_eq!(g.measures[0].correct, "-0.05");
    }
}
