//! Property test for issue 9's kinds 1 and 6: every rule's result belongs to
//! its own row. Random small tables go through random filters and
//! expectations (row-local conditions, windows with PARTITION BY and ORDER
//! BY, a subquery with ORDER BY and LIMIT, a division that fails at run time
//! on some rows); the quarantine must hold exactly the rows an independent
//! evaluation in Rust says fail, and bronze = silver + open quarantine.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use medallion_engine::api::{Request, Response, TableView};
use medallion_engine::env::{FixedClock, SequentialIds};
use medallion_engine::Playground;
use proptest::prelude::*;
use serde_json::json;

/// One row of the generated table: `id` is unique.
#[derive(Debug, Clone)]
struct Row {
    id: i64,
    k: Option<&'static str>,
    v: Option<i64>,
}

/// A condition template, with its meaning in Rust.
#[derive(Debug, Clone, Copy)]
enum Cond {
    /// `v > c`
    Greater(i64),
    /// `count(*) OVER (PARTITION BY k) > c`
    PartitionCount(i64),
    /// `row_number() OVER (PARTITION BY k ORDER BY v DESC NULLS LAST, id) = 1`
    FirstOfPartition,
    /// `v >= avg(v) OVER (PARTITION BY k)`
    AtLeastAverage,
    /// `id IN (SELECT <id> FROM bronze.t ORDER BY <id> DESC LIMIT 2)`
    TopTwoIds,
    /// `100 / v > 0` (fails at run time where v = 0)
    Division,
    /// `coalesce(v, 0) > c` (a function that exists only as a rewrite)
    Coalesce(i64),
}

impl Cond {
    fn sql(self) -> String {
        match self {
            Cond::Greater(c) => format!("v > {c}"),
            Cond::PartitionCount(c) => format!("count(*) OVER (PARTITION BY k) > {c}"),
            Cond::FirstOfPartition => {
                "row_number() OVER (PARTITION BY k ORDER BY v DESC NULLS LAST, id) = 1".into()
            }
            Cond::AtLeastAverage => "v >= avg(v) OVER (PARTITION BY k)".into(),
            Cond::TopTwoIds => "id IN (SELECT CAST(split_part(raw_payload, ',', 1) AS INT) AS i FROM bronze.t ORDER BY i DESC LIMIT 2)".into(),
            Cond::Division => "100 / v > 0".into(),
            Cond::Coalesce(c) => format!("coalesce(v, 0) > {c}"),
        }
    }

    /// The condition's value for each of `rows` (the rows the rule sees):
    /// `Err` for a run-time error, `Ok(None)` for NULL. `all` is the whole
    /// bronze table (subqueries read it).
    fn eval(self, rows: &[Row], all: &[Row]) -> Vec<Result<Option<bool>, ()>> {
        let part = |k: Option<&'static str>| rows.iter().filter(move |r| r.k == k);
        rows.iter()
            .map(|r| match self {
                Cond::Greater(c) => Ok(r.v.map(|v| v > c)),
                Cond::PartitionCount(c) => Ok(Some(part(r.k).count() as i64 > c)),
                Cond::FirstOfPartition => {
                    let first = part(r.k)
                        .min_by_key(|x| (x.v.is_none(), x.v.map(|v| -v), x.id))
                        .map(|x| x.id);
                    Ok(Some(first == Some(r.id)))
                }
                Cond::AtLeastAverage => {
                    let vs: Vec<i64> = part(r.k).filter_map(|x| x.v).collect();
                    let avg =
                        (!vs.is_empty()).then(|| vs.iter().sum::<i64>() as f64 / vs.len() as f64);
                    Ok(r.v.zip(avg).map(|(v, a)| v as f64 >= a))
                }
                Cond::TopTwoIds => {
                    let mut ids: Vec<i64> = all.iter().map(|x| x.id).collect();
                    ids.sort_unstable_by(|a, b| b.cmp(a));
                    Ok(Some(ids.iter().take(2).any(|i| *i == r.id)))
                }
                Cond::Division => match r.v {
                    Some(0) => Err(()),
                    Some(v) => Ok(Some(100 / v > 0)),
                    None => Ok(None),
                },
                Cond::Coalesce(c) => Ok(Some(r.v.unwrap_or(0) > c)),
            })
            .collect()
    }
}

impl Cond {
    /// Does a row's value depend on the other rows (a window)?
    fn reads_other_rows(self) -> bool {
        matches!(
            self,
            Cond::PartitionCount(_) | Cond::FirstOfPartition | Cond::AtLeastAverage
        )
    }
}

fn cond() -> impl Strategy<Value = Cond> {
    prop_oneof![
        (-2i64..3).prop_map(Cond::Greater),
        (0i64..3).prop_map(Cond::PartitionCount),
        Just(Cond::FirstOfPartition),
        Just(Cond::AtLeastAverage),
        Just(Cond::TopTwoIds),
        Just(Cond::Division),
        (-1i64..2).prop_map(Cond::Coalesce),
    ]
}

fn table() -> impl Strategy<Value = Vec<Row>> {
    prop::collection::vec(
        (
            prop::option::weighted(0.8, prop::sample::select(vec!["a", "b", "c"])),
            prop::option::weighted(0.8, -3i64..4),
        ),
        1..12,
    )
    .prop_map(|cells| {
        cells
            .into_iter()
            .enumerate()
            .map(|(i, (k, v))| Row {
                id: i as i64 + 1,
                k,
                v,
            })
            .collect()
    })
}

/// Ids of the rows the rules fail, by the rules' semantics: filters (TRUE
/// fails) over every row, then expectations (not TRUE fails) in order over
/// the rows the filters kept, a window only over the rows no earlier
/// expectation failed; a run-time error fails the row.
fn oracle(rows: &[Row], rules: &[(bool, Cond)]) -> BTreeSet<i64> {
    let mut failed = BTreeSet::new();
    for (_, c) in rules.iter().filter(|(is_filter, _)| *is_filter) {
        for (r, v) in rows.iter().zip(c.eval(rows, rows)) {
            if !matches!(v, Ok(None) | Ok(Some(false))) {
                failed.insert(r.id);
            }
        }
    }
    let kept: Vec<Row> = rows
        .iter()
        .filter(|r| !failed.contains(&r.id))
        .cloned()
        .collect();
    for (_, c) in rules.iter().filter(|(is_filter, _)| !*is_filter) {
        // A window sees only the rows no earlier expectation failed.
        let seen: Vec<Row> = if c.reads_other_rows() {
            kept.iter()
                .filter(|r| !failed.contains(&r.id))
                .cloned()
                .collect()
        } else {
            kept.clone()
        };
        for (r, v) in seen.iter().zip(c.eval(&seen, rows)) {
            if v != Ok(Some(true)) {
                failed.insert(r.id);
            }
        }
    }
    failed
}

fn csv(rows: &[Row]) -> String {
    let mut s = String::from("id,k,v\n");
    for r in rows {
        s.push_str(&format!(
            "{},{},{}\n",
            r.id,
            r.k.unwrap_or(""),
            r.v.map(|v| v.to_string()).unwrap_or_default()
        ));
    }
    s
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

fn check(rows: Vec<Row>, rules: Vec<(bool, Cond)>) -> Result<(), TestCaseError> {
    let rule_json: Vec<serde_json::Value> = rules
        .iter()
        .enumerate()
        .map(|(i, (is_filter, c))| {
            json!({"id": format!("R{i}"), "kind": if *is_filter { "filter" } else { "expect" },
                   "column": "v", "expression": c.sql(), "enabled": true, "rationale": ""})
        })
        .collect();
    let def = serde_json::from_value(json!({
        "title": "prop",
        "bronze": [{"name": "t", "source_system": "prop", "description": "",
                    "schema": {"columns": [{"name": "id", "type": "INT"}, {"name": "k", "type": "STRING"}, {"name": "v", "type": "INT"}]}}],
        "silver": [{"name": "t", "source": "t", "rules": {"rules": rule_json}, "description": ""}],
        "gold": [], "checks": []
    }))
    .expect("pipeline");
    let mut p = Playground::with_env(
        Arc::new(FixedClock::new(1_700_000_000_000_000)),
        Arc::new(SequentialIds::default()),
    )
    .expect("playground");
    futures::executor::block_on(p.load_pipeline(def)).expect("loads");
    let view = match futures::executor::block_on(p.handle(Request::Ingest {
        table: "t".into(),
        file_name: "t.csv".into(),
        bytes: csv(&rows).into_bytes(),
        options: Default::default(),
    })) {
        Response::Snapshot(v) => v,
        other => panic!("unexpected {other:?}"),
    };
    let errors: Vec<String> = view
        .silver
        .iter()
        .flat_map(|s| &s.rules)
        .filter_map(|r| r.error.clone())
        .chain(view.run.errors.clone())
        .collect();
    prop_assert!(errors.is_empty(), "errors: {errors:?}");

    let expected = oracle(&rows, &rules);
    let quarantine = table_rows(&mut p, "silver.quarantine");
    let quarantined: BTreeMap<i64, String> = column(&quarantine, "raw_payload")
        .into_iter()
        .zip(column(&quarantine, "reason"))
        .filter_map(|(raw, reason)| {
            let id = raw?.split(',').next()?.parse().ok()?;
            Some((id, reason.unwrap_or_default()))
        })
        .collect();
    prop_assert_eq!(
        quarantined.keys().copied().collect::<BTreeSet<_>>(),
        expected.clone(),
        "rules {:?}; reasons {:?}",
        rules.iter().map(|(f, c)| (f, c.sql())).collect::<Vec<_>>(),
        quarantined
    );
    // A reason quotes its own row's values (`v = 0` for the row with v = 0).
    for (id, reason) in &quarantined {
        let row = rows.iter().find(|r| r.id == *id).expect("row");
        if reason.contains("failed on this row") {
            prop_assert_eq!(row.v, Some(0), "{}", reason);
        }
        if let (Some(v), true) = (row.v, reason.contains("(v = ")) {
            prop_assert!(
                reason.contains(&format!("v = {v})")) || reason.contains(&format!("v = {v},")),
                "row {:?}: {}",
                row,
                reason
            );
        }
    }
    let silver = table_rows(&mut p, "silver.t");
    let kept: BTreeSet<i64> = column(&silver, "id")
        .into_iter()
        .filter_map(|v| v?.parse().ok())
        .collect();
    let all: BTreeSet<i64> = rows.iter().map(|r| r.id).collect();
    prop_assert_eq!(
        kept,
        all.difference(&expected).copied().collect::<BTreeSet<_>>()
    );
    prop_assert_eq!(silver.rows.len() + quarantine.rows.len(), rows.len());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn every_quarantined_row_fails_the_rule_on_its_own_values(
        rows in table(),
        rules in prop::collection::vec((any::<bool>(), cond()), 1..4),
    ) {
        check(rows, rules)?;
    }
}
