//! Property test for exploding JSON arrays into a child silver table
//! (issue 9, rw-49): for random orders whose `lines` are arrays (with good
//! and bad elements), empty, `null`, missing or not an array, every element
//! is exactly one silver row with its own values or one quarantine row, a
//! record without elements gives one row only on an outer explode, and the
//! reconciliation check holds. Native only.
#![cfg(not(target_arch = "wasm32"))]

use std::sync::Arc;

use medallion_engine::api::{Request, Response, TableView};
use medallion_engine::checks::CheckStatus;
use medallion_engine::env::{FixedClock, SequentialIds};
use medallion_engine::Playground;
use proptest::prelude::*;
use serde_json::json;

/// One element of a `lines` array.
#[derive(Debug, Clone)]
enum Element {
    /// qty, price in cents, sku.
    Good(i32, i64, String),
    /// A qty that is not a whole number.
    BadQty(String),
    /// A price with three decimals (DECIMAL(10,2) never rounds).
    BadPrice(i64),
    /// Not an object.
    Scalar(i64),
}

#[derive(Debug, Clone)]
enum Lines {
    Array(Vec<Element>),
    Null,
    Missing,
    NotArray(String),
}

fn element() -> impl Strategy<Value = Element> {
    prop_oneof![
        4 => (0..100i32, 0..100_000i64, "[A-Z]{1,3}").prop_map(|(q, p, s)| Element::Good(q, p, s)),
        1 => "[a-z]{1,5}".prop_map(Element::BadQty),
        1 => (1..100_000i64).prop_map(|p| Element::BadPrice(p * 10 + 1)),
        1 => any::<i64>().prop_map(Element::Scalar),
    ]
}

fn lines() -> impl Strategy<Value = Lines> {
    prop_oneof![
        4 => prop::collection::vec(element(), 0..4).prop_map(Lines::Array),
        1 => Just(Lines::Null),
        1 => Just(Lines::Missing),
        1 => "[a-z]{0,4}".prop_map(Lines::NotArray),
    ]
}

fn record(i: usize, l: &Lines) -> String {
    let mut o = json!({"order_id": format!("K-{i}")});
    let el = |e: &Element| match e {
        Element::Good(q, p, s) => {
            format!(
                r#"{{"sku":"{s}","qty":{q},"price":{}.{:02}}}"#,
                p / 100,
                p % 100
            )
        }
        Element::BadQty(q) => format!(r#"{{"sku":"B","qty":"{q}","price":1.00}}"#),
        Element::BadPrice(p) => format!(
            r#"{{"sku":"B","qty":1,"price":{}.{:03}}}"#,
            p / 1000,
            p % 1000
        ),
        Element::Scalar(n) => n.to_string(),
    };
    match l {
        Lines::Missing => o.to_string(),
        Lines::Null => {
            o["lines"] = serde_json::Value::Null;
            o.to_string()
        }
        Lines::NotArray(t) => {
            o["lines"] = json!(t);
            o.to_string()
        }
        Lines::Array(items) => {
            let inner: Vec<String> = items.iter().map(el).collect();
            let base = o.to_string();
            format!(
                "{},\"lines\":[{}]}}",
                &base[..base.len() - 1],
                inner.join(",")
            )
        }
    }
}

fn col<'a>(t: &'a TableView, name: &str) -> Vec<Option<&'a str>> {
    let i = t
        .columns
        .iter()
        .position(|c| c.name == name)
        .expect("column");
    t.rows.iter().map(|r| r[i].as_deref()).collect()
}

async fn table(p: &mut Playground, name: &str) -> TableView {
    match p
        .handle(Request::GetTable {
            table: name.parse().unwrap(),
            offset: 0,
            limit: 10_000,
            version: None,
            corrupt_only: false,
        })
        .await
    {
        Response::Table(t) => t,
        other => panic!("{other:?}"),
    }
}

fn run_case(records: &[Lines], outer: bool) -> Result<(), TestCaseError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        let def = serde_json::from_value(json!({
            "title": "prop",
            "bronze": [{"name": "t", "source_system": "s", "description": "",
                "schema": {"columns": [{"name": "order_id", "type": "STRING"}]}}],
            "silver": [{"name": "lines", "source": "t", "rules": {"rules": []}, "description": "",
                "explode": {"path": "lines", "parent_columns": ["order_id"], "outer": outer,
                    "state_column": "state",
                    "columns": [{"name": "sku", "type": "STRING"}, {"name": "qty", "type": "INT"},
                                {"name": "price", "type": "DECIMAL(10,2)"}]}}],
            "gold": [],
            "checks": [{"id": "A1", "level": "aggregate", "description": "", "kind": "reconciliation",
                "bronze_table": "bronze.t", "silver_table": "silver.lines"}]
        }))
        .unwrap();
        let mut p = Playground::with_env(
            Arc::new(FixedClock::new(1_700_000_000_000_000)),
            Arc::new(SequentialIds::default()),
        )
        .unwrap();
        p.load_pipeline(def).await.unwrap();
        let text: String = records
            .iter()
            .enumerate()
            .map(|(i, l)| record(i, l) + "\n")
            .collect();
        let v = match p
            .handle(Request::Ingest {
                table: "t".into(),
                file_name: "f.jsonl".into(),
                bytes: text.into_bytes(),
                options: Default::default(),
            })
            .await
        {
            Response::Snapshot(v) => v,
            other => panic!("{other:?}"),
        };
        prop_assert!(v.run.ok, "{:?}", v.run.errors);

        // What a correct explode gives, worked out from the generated records.
        let mut want_rows: Vec<String> = Vec::new();
        let mut want_quarantined = 0;
        for (i, l) in records.iter().enumerate() {
            let no_elements = |state: &str| format!("K-{i}|NULL|{state}|NULL|NULL|NULL");
            match l {
                Lines::NotArray(_) => want_quarantined += 1,
                Lines::Null if outer => want_rows.push(no_elements("null")),
                Lines::Missing if outer => want_rows.push(no_elements("missing")),
                Lines::Array(items) if items.is_empty() && outer => want_rows.push(no_elements("empty")),
                Lines::Array(items) => {
                    for (pos, e) in items.iter().enumerate() {
                        match e {
                            Element::Good(q, p, s) => want_rows.push(format!(
                                "K-{i}|{pos}|array|{s}|{q}|{}.{:02}",
                                p / 100,
                                p % 100
                            )),
                            _ => want_quarantined += 1,
                        }
                    }
                }
                _ => {}
            }
        }
        let t = table(&mut p, "silver.lines").await;
        let cols: Vec<Vec<Option<&str>>> = ["order_id", "position", "state", "sku", "qty", "price"]
            .iter()
            .map(|c| col(&t, c))
            .collect();
        let got: Vec<String> = (0..t.rows.len())
            .map(|r| cols.iter().map(|c| c[r].unwrap_or("NULL")).collect::<Vec<_>>().join("|"))
            .collect();
        prop_assert_eq!(&got, &want_rows);
        let q = table(&mut p, "silver.quarantine").await;
        prop_assert_eq!(q.row_count, want_quarantined);
        let a1 = v.checks.iter().find(|c| c.id == "A1").unwrap();
        prop_assert_eq!(a1.status, CheckStatus::Pass, "{}", a1.observed);
        Ok(())
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_element_is_one_row_or_one_quarantine_row(
        records in prop::collection::vec(lines(), 1..8),
        outer in any::<bool>(),
    ) {
        run_case(&records, outer)?;
    }
}
