//! Property test for integer overflow (issue 9: never silently wrong).
//! Random INT or BIGINT operands, biased to the edges of the type, go
//! through a rule `a <op> b` (+, -, *, unary minus) and a gold model over
//! the same arithmetic and `sum` (and DECIMAL(38, 2) sums near 38 digits).
//! Rust's checked arithmetic is the oracle:
//! where it overflows, the row is quarantined with an overflow reason
//! naming the operands and the exact value (and the gold model fails);
//! elsewhere the engine's value is exactly Rust's.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;
use std::sync::Arc;

use medallion_engine::api::{PipelineView, Request, Response, TableView};
use medallion_engine::env::{FixedClock, SequentialIds};
use medallion_engine::Playground;
use proptest::prelude::*;
use serde_json::json;

/// The column type of the generated operands.
#[derive(Debug, Clone, Copy)]
enum Ty {
    Int,
    Bigint,
}

impl Ty {
    fn sql(self) -> &'static str {
        match self {
            Ty::Int => "INT",
            Ty::Bigint => "BIGINT",
        }
    }

    fn range(self) -> (i128, i128) {
        match self {
            Ty::Int => (i32::MIN.into(), i32::MAX.into()),
            Ty::Bigint => (i64::MIN.into(), i64::MAX.into()),
        }
    }

    fn hint(self) -> &'static str {
        match self {
            Ty::Int => "BIGINT (or DECIMAL(38, 0))",
            Ty::Bigint => "DECIMAL(38, 0)",
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Op {
    Add,
    Sub,
    Mul,
    /// `-a` (b is not used)
    Neg,
}

impl Op {
    fn sql(self) -> &'static str {
        match self {
            Op::Add => "a + b",
            Op::Sub => "a - b",
            Op::Mul => "a * b",
            Op::Neg => "-a",
        }
    }

    /// The exact result (128 bits hold every product of two i64).
    fn exact(self, a: i128, b: i128) -> i128 {
        match self {
            Op::Add => a + b,
            Op::Sub => a - b,
            Op::Mul => a * b,
            Op::Neg => -a,
        }
    }

    /// `100000 * 30000` / `-(-128)`, as the overflow message writes it.
    fn written(self, a: i128, b: i128) -> String {
        match self {
            Op::Add => format!("{a} + {b}"),
            Op::Sub => format!("{a} - {b}"),
            Op::Mul => format!("{a} * {b}"),
            Op::Neg => format!("-({a})"),
        }
    }
}

/// `a <op> b` with Rust's checked operations of type `$t`.
macro_rules! rust_checked {
    ($t:ty, $op:expr, $a:expr, $b:expr) => {{
        let (a, b) = ($a as $t, $b as $t);
        match $op {
            Op::Add => a.checked_add(b),
            Op::Sub => a.checked_sub(b),
            Op::Mul => a.checked_mul(b),
            Op::Neg => a.checked_neg(),
        }
        .map(i128::from)
    }};
}

/// Rust's checked arithmetic in the column's type: `None` on overflow.
fn checked(ty: Ty, op: Op, a: i128, b: i128) -> Option<i128> {
    let rust = match ty {
        Ty::Int => rust_checked!(i32, op, a, b),
        Ty::Bigint => rust_checked!(i64, op, a, b),
    };
    // The exact value is in range exactly when Rust's operation succeeds.
    let (lo, hi) = ty.range();
    let v = op.exact(a, b);
    assert_eq!(rust, (lo..=hi).contains(&v).then_some(v));
    rust
}

/// Operands of `ty`, half of them at or next to the edges of its range.
fn operand(ty: Ty) -> BoxedStrategy<i128> {
    let (lo, hi) = ty.range();
    let root = match ty {
        Ty::Int => 46_341,           // ⌈√2^31⌉
        Ty::Bigint => 3_037_000_500, // ⌈√2^63⌉
    };
    let edges = prop::sample::select(vec![
        lo,
        lo + 1,
        -1,
        0,
        1,
        2,
        hi - 1,
        hi,
        root,
        -root,
        root - 1,
        hi / 2 + 1,
        lo / 2,
    ]);
    let any = match ty {
        Ty::Int => any::<i32>().prop_map(i128::from).boxed(),
        Ty::Bigint => any::<i64>().prop_map(i128::from).boxed(),
    };
    let small = (-1000i128..1000).boxed();
    prop_oneof![2 => edges, 1 => any, 1 => small].boxed()
}

fn case() -> impl Strategy<Value = (Ty, Op, Vec<(i128, i128)>)> {
    let ty = prop_oneof![Just(Ty::Int), Just(Ty::Bigint)];
    let op = prop_oneof![Just(Op::Add), Just(Op::Sub), Just(Op::Mul), Just(Op::Neg)];
    (ty, op).prop_flat_map(|(ty, op)| {
        (
            Just(ty),
            Just(op),
            prop::collection::vec((operand(ty), operand(ty)), 1..7),
        )
    })
}

fn send(p: &mut Playground, request: Request) -> PipelineView {
    match futures::executor::block_on(p.handle(request)) {
        Response::Snapshot(v) => v,
        other => panic!("unexpected {other:?}"),
    }
}

fn table_rows(p: &mut Playground, name: &str) -> TableView {
    match futures::executor::block_on(p.handle(Request::GetTable {
        table: name.parse().unwrap(),
        offset: 0,
        limit: 1000,
        version: None,
        corrupt_only: false,
    })) {
        Response::Table(t) => t,
        other => panic!("unexpected {other:?}"),
    }
}

fn column(t: &TableView, name: &str) -> Vec<Option<String>> {
    let i = t
        .columns
        .iter()
        .position(|c| c.name == name)
        .unwrap_or_else(|| panic!("no {name} in {}", t.name));
    t.rows.iter().map(|r| r[i].clone()).collect()
}

/// Rows `id` → cell of `name`.
fn by_id(t: &TableView, name: &str) -> BTreeMap<usize, Option<String>> {
    column(t, "id")
        .into_iter()
        .zip(column(t, name))
        .filter_map(|(id, v)| Some((id?.parse().ok()?, v)))
        .collect()
}

fn playground(ty: Ty, rules: serde_json::Value, gold: serde_json::Value) -> Playground {
    let def = serde_json::from_value(json!({
        "title": "prop",
        "bronze": [{"name": "t", "source_system": "prop", "description": "",
                    "schema": {"columns": [{"name": "id", "type": "INT"}, {"name": "a", "type": ty.sql()}, {"name": "b", "type": ty.sql()}]}}],
        "silver": [{"name": "t", "source": "t", "rules": {"rules": rules}, "description": ""}],
        "gold": gold, "checks": []
    }))
    .expect("pipeline");
    let mut p = Playground::with_env(
        Arc::new(FixedClock::new(1_700_000_000_000_000)),
        Arc::new(SequentialIds::default()),
    )
    .expect("playground");
    futures::executor::block_on(p.load_pipeline(def)).expect("loads");
    p
}

fn ingest(p: &mut Playground, operands: &[(i128, i128)]) -> PipelineView {
    let mut csv = String::from("id,a,b\n");
    for (i, (a, b)) in operands.iter().enumerate() {
        csv.push_str(&format!("{i},{a},{b}\n"));
    }
    send(
        p,
        Request::Ingest {
            table: "t".into(),
            file_name: "t.csv".into(),
            bytes: csv.into_bytes(),
            options: Default::default(),
        },
    )
}

/// A rule `r = a <op> b` (enrich, drop): each row's value is Rust's, or the
/// row is quarantined with the overflow named exactly.
fn rule_case(ty: Ty, op: Op, operands: Vec<(i128, i128)>) -> Result<(), TestCaseError> {
    let rules = json!([{"id": "E1", "kind": "enrich", "column": "r", "expression": op.sql(),
                        "enabled": true, "rationale": "", "action": "drop"}]);
    let mut p = playground(ty, rules, json!([]));
    let view = ingest(&mut p, &operands);
    prop_assert!(view.run.ok && view.run.errors.is_empty(), "{:?}", view.run);
    let silver = by_id(&table_rows(&mut p, "silver.t"), "r");
    let quarantine = table_rows(&mut p, "silver.quarantine");
    let reasons: BTreeMap<usize, String> = column(&quarantine, "raw_payload")
        .into_iter()
        .zip(column(&quarantine, "reason"))
        .filter_map(|(raw, reason)| Some((raw?.split(',').next()?.parse().ok()?, reason?)))
        .collect();
    prop_assert_eq!(silver.len() + reasons.len(), operands.len());
    let (lo, hi) = ty.range();
    for (id, &(a, b)) in operands.iter().enumerate() {
        match checked(ty, op, a, b) {
            Some(v) => prop_assert_eq!(
                silver.get(&id),
                Some(&Some(v.to_string())),
                "{} with a = {}, b = {}",
                op.sql(),
                a,
                b
            ),
            None => {
                let operands = match op {
                    Op::Neg => format!("a = {a}"),
                    _ => format!("a = {a}, b = {b}"),
                };
                let expected = format!(
                    "E1: {} failed on this row: integer overflow: {} = {} is outside the {} range ({lo} to {hi}); {} ({operands})",
                    op.sql(),
                    op.written(a, b),
                    op.exact(a, b),
                    ty.sql(),
                    match op {
                        Op::Neg => format!("CAST the value to {} first", ty.hint()),
                        _ => format!("CAST an operand to {} to compute it", ty.hint()),
                    },
                );
                prop_assert_eq!(reasons.get(&id), Some(&expected));
            }
        }
    }
    Ok(())
}

/// The same arithmetic in a gold model, and `sum(a)`: exact values when
/// nothing overflows, else the model fails with an overflow message (and
/// never shows a wrapped value).
fn gold_case(ty: Ty, op: Op, operands: Vec<(i128, i128)>) -> Result<(), TestCaseError> {
    let gold = json!([
        {"name": "r", "sql": format!("SELECT id, {} AS r FROM silver.t", op.sql()), "description": ""},
        {"name": "s", "sql": "SELECT sum(a) AS s, sum(b) OVER () AS w FROM silver.t GROUP BY b", "description": ""}
    ]);
    let mut p = playground(ty, json!([]), gold);
    let view = ingest(&mut p, &operands);
    let results: Vec<Option<i128>> = operands
        .iter()
        .map(|&(a, b)| checked(ty, op, a, b))
        .collect();
    let error = view.gold[0].error.clone();
    if results.iter().all(Option::is_some) {
        prop_assert!(error.is_none(), "{:?}", error);
        let got = by_id(&table_rows(&mut p, "gold.r"), "r");
        for (id, v) in results.iter().enumerate() {
            prop_assert_eq!(got.get(&id), Some(&v.map(|v| v.to_string())));
        }
    } else {
        let e = error.unwrap_or_default();
        prop_assert!(
            e.contains("integer overflow: ") && e.contains(&format!("the {} range", ty.sql())),
            "{}",
            e
        );
        // The message names a pair that does overflow.
        let named = operands.iter().any(|&(a, b)| {
            checked(ty, op, a, b).is_none()
                && e.contains(&format!("{} = {}", op.written(a, b), op.exact(a, b)))
        });
        prop_assert!(named, "{}", e);
    }
    // sum(a) per group of b, and sum(b) over the groups' b values (one per
    // group, as a window over the grouped rows), in BIGINT.
    let mut groups: BTreeMap<i128, i128> = BTreeMap::new();
    for &(a, b) in &operands {
        *groups.entry(b).or_default() += a;
    }
    let fits = |v: i128| i64::try_from(v).is_ok();
    let window: i128 = groups.keys().sum();
    let error = view.gold[1].error.clone();
    if groups.values().all(|&s| fits(s)) && fits(window) {
        prop_assert!(error.is_none(), "{:?}", error);
        let s = table_rows(&mut p, "gold.s");
        let mut got: Vec<String> = column(&s, "s").into_iter().flatten().collect();
        got.sort();
        let mut want: Vec<String> = groups.values().map(i128::to_string).collect();
        want.sort();
        prop_assert_eq!(got, want);
        let w: Vec<Option<String>> = column(&s, "w");
        prop_assert!(w
            .iter()
            .all(|x| x.as_deref() == Some(window.to_string().as_str())));
    } else {
        let e = error.unwrap_or_default();
        prop_assert!(
            e.contains("integer overflow: sum = ") && e.contains("the BIGINT range"),
            "{}",
            e
        );
    }
    Ok(())
}

/// `v` hundredths written as a DECIMAL(38, 2) literal (`-5` → `-0.05`).
fn hundredths(v: i128) -> String {
    let sign = if v < 0 { "-" } else { "" };
    let a = v.unsigned_abs();
    format!("{sign}{}.{:02}", a / 100, a % 100)
}

/// DECIMAL(38, 2) values, biased to the 38-digit edge, summed by a gold
/// model: the exact total, or a decimal overflow error when the total (added
/// in row order, as one partition does) has more than 38 digits.
fn decimal_sum_case(values: Vec<i128>) -> Result<(), TestCaseError> {
    let def = serde_json::from_value(json!({
        "title": "prop",
        "bronze": [{"name": "t", "source_system": "prop", "description": "",
                    "schema": {"columns": [{"name": "id", "type": "INT"}, {"name": "a", "type": "DECIMAL(38,2)"}]}}],
        "silver": [{"name": "t", "source": "t", "rules": {"rules": []}, "description": ""}],
        "gold": [{"name": "s", "sql": "SELECT sum(a) AS s FROM silver.t", "description": ""}],
        "checks": []
    }))
    .expect("pipeline");
    let mut p = Playground::with_env(
        Arc::new(FixedClock::new(1_700_000_000_000_000)),
        Arc::new(SequentialIds::default()),
    )
    .expect("playground");
    futures::executor::block_on(p.load_pipeline(def)).expect("loads");
    let mut csv = String::from("id,a\n");
    for (i, v) in values.iter().enumerate() {
        csv.push_str(&format!("{i},{}\n", hundredths(*v)));
    }
    let view = send(
        &mut p,
        Request::Ingest {
            table: "t".into(),
            file_name: "t.csv".into(),
            bytes: csv.into_bytes(),
            options: Default::default(),
        },
    );
    let limit = 10i128.pow(38);
    let total = values
        .iter()
        .try_fold(0i128, |t, v| t.checked_add(*v))
        .filter(|t| t.unsigned_abs() < limit as u128);
    let error = view.gold.first().and_then(|g| g.error.clone());
    match total {
        Some(t) => {
            prop_assert!(error.is_none(), "{:?}", error);
            let s = table_rows(&mut p, "gold.s");
            prop_assert_eq!(column(&s, "s"), vec![Some(hundredths(t))]);
        }
        None => {
            let e = error.unwrap_or_default();
            prop_assert!(e.contains("decimal overflow: sum(a)"), "{}", e);
        }
    }
    Ok(())
}

fn decimal_value() -> BoxedStrategy<i128> {
    let max = 10i128.pow(38) - 1;
    prop_oneof![
        (max - 1000..=max),
        (-max..=-max + 1000),
        (-1000i128..1000),
        (-max..=max),
    ]
    .boxed()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn a_rules_integer_arithmetic_is_exact_or_quarantines_the_row((ty, op, operands) in case()) {
        rule_case(ty, op, operands)?;
    }

    #[test]
    fn gold_arithmetic_and_sums_are_exact_or_fail((ty, op, operands) in case()) {
        gold_case(ty, op, operands)?;
    }

    #[test]
    fn decimal_sums_are_exact_or_fail(values in prop::collection::vec(decimal_value(), 1..5)) {
        decimal_sum_case(values)?;
    }
}
