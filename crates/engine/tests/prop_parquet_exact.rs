//! Property test for `lake::parquet_round_trip_exact` (issue 12: ingest
//! keeps the rows it built instead of decoding the Parquet file it just
//! wrote, when every column comes back exactly): a column the function
//! calls exact is, after `encode_parquet` and `decode_parquet`, equal to the
//! original, value for value, with the same type. Random columns of every
//! type bronze stores (raw and typed), with NULLs, empty and non-ASCII
//! strings, NaN, -0.0, extreme integers and dates, DECIMALs at the edge of
//! their precision; and a DECIMAL whose values do not fit its precision,
//! which must not be called exact (Parquet keeps precision ≤ 9 in 32 bits).
#![cfg(not(target_arch = "wasm32"))]

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, Float64Array,
    Int32Array, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
};
use datafusion::arrow::datatypes::{Field, Schema};
use medallion_engine::lake::{concat_batches, decode_parquet, encode_parquet, parquet_round_trip_exact};
use proptest::prelude::*;

fn round_trip(columns: Vec<ArrayRef>) -> (RecordBatch, RecordBatch) {
    let fields: Vec<Field> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| Field::new(format!("c{i}"), c.data_type().clone(), true))
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(schema.clone(), columns).expect("batch");
    let bytes = encode_parquet(schema.clone(), std::slice::from_ref(&batch)).expect("encodes");
    let back = concat_batches(&schema, &decode_parquet(bytes).expect("decodes")).expect("concat");
    (batch, back)
}

fn opt<T: std::fmt::Debug + Clone>(s: impl Strategy<Value = T>) -> impl Strategy<Value = Option<T>> {
    prop::option::weighted(0.8, s)
}

fn float() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>(),
        Just(f64::NAN),
        Just(-0.0),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(f64::MIN_POSITIVE),
    ]
}

/// Unscaled values of a DECIMAL(`p`, s) that fit its precision.
fn decimal_fits(p: u8) -> impl Strategy<Value = i128> {
    let max = 10i128.pow(p as u32) - 1;
    prop_oneof![-max..=max, Just(max), Just(-max), Just(0)]
}

prop_compose! {
    /// One column of each exact type, `n` rows.
    fn columns()(n in 0usize..40)(
        text in prop::collection::vec(opt(".{0,12}"), n),
        big in prop::collection::vec(opt(any::<i64>()), n),
        int in prop::collection::vec(opt(any::<i32>()), n),
        bin in prop::collection::vec(opt(prop::collection::vec(any::<u8>(), 0..8)), n),
        flag in prop::collection::vec(opt(any::<bool>()), n),
        dbl in prop::collection::vec(opt(float()), n),
        day in prop::collection::vec(opt(any::<i32>()), n),
        ts in prop::collection::vec(opt(any::<i64>()), n),
        ts_utc in prop::collection::vec(opt(any::<i64>()), n),
        d9 in prop::collection::vec(opt(decimal_fits(9)), n),
        d18 in prop::collection::vec(opt(decimal_fits(18)), n),
        d38 in prop::collection::vec(opt(decimal_fits(38)), n),
    ) -> Vec<ArrayRef> {
        vec![
            Arc::new(StringArray::from(text)) as ArrayRef,
            Arc::new(Int64Array::from(big)) as ArrayRef,
            Arc::new(Int32Array::from(int)) as ArrayRef,
            Arc::new(BinaryArray::from_iter(bin)) as ArrayRef,
            Arc::new(BooleanArray::from(flag)) as ArrayRef,
            Arc::new(Float64Array::from(dbl)) as ArrayRef,
            Arc::new(Date32Array::from(day)) as ArrayRef,
            Arc::new(TimestampMicrosecondArray::from(ts)) as ArrayRef,
            Arc::new(TimestampMicrosecondArray::from(ts_utc).with_timezone("UTC")) as ArrayRef,
            Arc::new(Decimal128Array::from(d9).with_precision_and_scale(9, 2).unwrap()) as ArrayRef,
            Arc::new(Decimal128Array::from(d18).with_precision_and_scale(18, 0).unwrap()) as ArrayRef,
            Arc::new(Decimal128Array::from(d38).with_precision_and_scale(38, 10).unwrap()) as ArrayRef,
        ]
    }
}

/// NaN is not equal to itself: compare floats by their bits.
fn same(a: &RecordBatch, b: &RecordBatch) -> bool {
    a.schema() == b.schema()
        && a.columns().iter().zip(b.columns()).all(|(x, y)| {
            match (
                x.as_any().downcast_ref::<Float64Array>(),
                y.as_any().downcast_ref::<Float64Array>(),
            ) {
                (Some(x), Some(y)) => {
                    x.len() == y.len()
                        && (0..x.len()).all(|i| {
                            x.is_null(i) == y.is_null(i)
                                && (x.is_null(i) || x.value(i).to_bits() == y.value(i).to_bits())
                        })
                }
                _ => x.to_data() == y.to_data(),
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(64),
        ..ProptestConfig::default()
    })]

    #[test]
    fn a_column_called_exact_comes_back_from_parquet_unchanged(columns in columns()) {
        for c in &columns {
            prop_assert!(parquet_round_trip_exact(c.as_ref()), "{:?}", c.data_type());
        }
        let (batch, back) = round_trip(columns);
        prop_assert!(same(&batch, &back), "wrote {batch:?}\nread {back:?}");
    }

    #[test]
    fn a_decimal_beyond_its_precision_is_not_called_exact(
        v in prop_oneof![1_000_000_000i128..i128::MAX / 2, i128::MIN / 2..-1_000_000_000i128]
    ) {
        let a = Decimal128Array::from(vec![Some(1), Some(v)])
            .with_precision_and_scale(9, 2)
            .unwrap();
        prop_assert!(!parquet_round_trip_exact(&a));
    }
}

#[test]
fn the_bronze_audit_columns_are_exact() {
    let schema = medallion_engine::bronze::bronze_schema();
    assert!(schema.fields().iter().all(|f| {
        let empty = datafusion::arrow::array::new_empty_array(f.data_type());
        parquet_round_trip_exact(empty.as_ref())
    }));
}
