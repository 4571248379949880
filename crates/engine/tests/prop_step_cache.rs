//! Property test for the rule step cache and the kept check results
//! (issue 12: "a rule edit recomputes only what depends on that rule ...
//! checks re-run only for the tables that changed"): reusing the last
//! run's steps and check results never changes a result.
//!
//! Two playgrounds get the same requests: a pipeline with random bronze
//! rows, then random rule edits (a rule switched on or off, another action,
//! another expression). One reuses the rule steps of its last run (the
//! default), the other computes every rule on every run
//! (`set_reuse_last_run(false)`). After every request both must show the
//! same page: every table's rows at every version, the rule stats (checked,
//! failed, changed, samples), the errors next to the rules, the checks
//! (row checks over silver.t, over the lookup's silver.lk that no edit
//! changes, over both, over gold, with a subquery: the reused side keeps
//! the results of those whose tables did not change).
//!
//! The rules are chosen to meet every way a step can differ over more rows
//! than the filters let through: a division by zero and a DECIMAL that
//! does not convert (failures of rows a filter drops), a lookup whose key is
//! not unique only for rows a filter drops (the join fails over every row,
//! not over those let through), a rule that normalizes the column a lookup
//! joins on, `random()` (never reused), a window (never reused), and
//! expectations with every action. `PROPTEST_CASES` sets the number of
//! cases (default 24).
#![cfg(not(target_arch = "wasm32"))]

use medallion_engine::api::{Request, Response};
use medallion_engine::Playground;
use proptest::prelude::*;
use serde_json::{json, Value};

#[path = "support/page.rs"]
#[allow(dead_code)]
mod shown;

/// The rules the pipeline may hold, each `(rule, another expression)`.
fn pool() -> Vec<(Value, &'static str)> {
    let rule = |id: &str, kind: &str, column: &str, expression: &str| {
        json!({"id": id, "kind": kind, "column": column, "expression": expression,
               "enabled": true, "rationale": ""})
    };
    let mut n2 = rule("N2", "normalize", "price", "price");
    n2["type"] = json!("DECIMAL(10,2)");
    let mut e2 = rule("E2", "enrich", "name", "l.name");
    e2["lookup"] = json!({"table": "bronze.lk", "alias": "l", "on": "code = l.code"});
    vec![
        (rule("F1", "filter", "qty", "qty < 0"), "qty < 1"),
        (rule("F2", "filter", "code", "code = 'dup'"), "code IS NULL"),
        (rule("F3", "filter", "price", "price IS NULL"), "price = ''"),
        (rule("N1", "normalize", "code", "upper(trim(code))"), "lower(code)"),
        (n2, "replace(price, 'x', '1')"),
        (rule("E1", "enrich", "ratio", "100 / qty"), "qty * 2"),
        (e2, "concat(l.name, '!')"),
        (rule("E3", "enrich", "one", "CASE WHEN random() < 2 THEN 1 ELSE 0 END"), "1"),
        (rule("E4", "enrich", "same_code", "count(*) OVER (PARTITION BY code)"), "2"),
        (rule("X1", "expect", "ratio", "ratio > 0"), "ratio IS NOT NULL"),
        (rule("X2", "expect", "qty", "qty < 4"), "qty IS NOT NULL"),
    ]
}

/// An edit of the registry: of rule `.1` (an index into the pool).
#[derive(Debug, Clone)]
enum Edit {
    Toggle(usize),
    Action(usize, &'static str),
    Expression(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    let n = pool().len();
    prop_oneof![
        3 => (0..n).prop_map(Edit::Toggle),
        1 => (0..n, prop::sample::select(vec!["warn", "drop", "fail"]))
            .prop_map(|(i, a)| Edit::Action(i, a)),
        2 => (0..n).prop_map(Edit::Expression),
    ]
}

/// Bronze rows `id,code,qty,price`: codes with spaces, case, a code the
/// lookup holds twice (`dup`) and one it lacks; a zero quantity; prices
/// that are no DECIMAL.
fn rows() -> impl Strategy<Value = String> {
    let code = prop::sample::select(vec!["a", " b", "B", "dup", "zz", ""]);
    let qty = prop::sample::select(vec!["-1", "0", "1", "5", ""]);
    let price = prop::sample::select(vec!["1.5", "x", "10", "", "2.25"]);
    prop::collection::vec((code, qty, price), 1..14).prop_map(|rows| {
        let mut s = String::from("id,code,qty,price\n");
        for (i, (c, q, p)) in rows.into_iter().enumerate() {
            s.push_str(&format!("{},{c},{q},{p}\n", i + 1));
        }
        s
    })
}

async fn send(p: &mut Playground, r: Request) {
    if let Response::Error { message } = p.handle(r).await {
        panic!("request failed: {message}");
    }
}

/// The pipeline with the rules of `on` enabled, `rules` as edited so far.
fn pipeline(rules: &[Value]) -> Value {
    json!({
        "title": "step cache",
        "bronze": [
            {"name": "t", "source_system": "prop", "description": "",
             "schema": {"columns": [{"name": "id", "type": "INT"}, {"name": "code", "type": "STRING"},
                                    {"name": "qty", "type": "INT"}, {"name": "price", "type": "STRING"}]}},
            {"name": "lk", "source_system": "prop", "description": "",
             "schema": {"columns": [{"name": "code", "type": "STRING"}, {"name": "name", "type": "STRING"}]}}
        ],
        "silver": [{"name": "t", "source": "t", "rules": {"rules": rules}, "description": ""},
                   {"name": "lk", "source": "lk", "rules": {"rules": []}, "description": ""}],
        "gold": [{"name": "by_code", "description": "", "sql": "SELECT code, count(*) AS n FROM silver.t GROUP BY code ORDER BY code"}],
        "checks": [
            {"id": "A1", "level": "aggregate", "description": "", "kind": "reconciliation",
             "bronze_table": "bronze.t", "silver_table": "silver.t"},
            {"id": "R1", "level": "row", "description": "", "kind": "row_predicate",
             "table": "silver.t", "predicate": "qty IS NOT NULL"},
            {"id": "R2", "level": "row", "description": "", "kind": "accepted_range",
             "table": "silver.t", "column": "qty", "min": "0", "max": "4"},
            {"id": "R3", "level": "row", "description": "", "kind": "not_null",
             "table": "silver.t", "column": "code"},
            {"id": "R4", "level": "row", "description": "", "kind": "relationships",
             "table": "silver.t", "column": "code", "to": "silver.lk", "field": "code"},
            {"id": "R5", "level": "row", "description": "", "kind": "unique",
             "table": "silver.lk", "columns": ["code"]},
            {"id": "R6", "level": "row", "description": "", "kind": "row_predicate",
             "table": "gold.by_code", "predicate": "n < 3"},
            {"id": "R7", "level": "row", "description": "", "kind": "row_predicate",
             "table": "silver.t", "predicate": "qty < (SELECT count(*) FROM silver.lk)"}
        ]
    })
}

/// The page, without what differs between two runs by nature: each run's
/// duration in milliseconds.
async fn page(p: &mut Playground) -> Value {
    let mut v = shown::page(p).await;
    strip_durations(&mut v);
    v
}

fn strip_durations(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.remove("duration_ms");
            m.values_mut().for_each(strip_durations);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_durations),
        _ => {}
    }
}

fn check(bronze: String, enabled: Vec<bool>, edits: Vec<Edit>) -> Result<(), TestCaseError> {
    futures::executor::block_on(async {
        let pool = pool();
        let mut rules: Vec<Value> = pool.iter().map(|(r, _)| r.clone()).collect();
        for (r, on) in rules.iter_mut().zip(&enabled) {
            r["enabled"] = json!(on);
        }
        let mut sides = Vec::new();
        for reuse in [true, false] {
            let mut p = shown::fixed_session(pipeline(&rules), reuse).await;
            let lookup = "code,name\na,Alpha\nB,Bravo\ndup,One\ndup,Two\nzz,Zulu\n";
            send(&mut p, Request::Ingest {
                table: "lk".into(),
                file_name: "lk.csv".into(),
                bytes: lookup.as_bytes().to_vec(),
                options: Default::default(),
            })
            .await;
            send(&mut p, Request::Ingest {
                table: "t".into(),
                file_name: "t.csv".into(),
                bytes: bronze.as_bytes().to_vec(),
                options: Default::default(),
            })
            .await;
            sides.push(p);
        }
        let (reusing, computing) = sides.split_at_mut(1);
        let (a, b) = (&mut reusing[0], &mut computing[0]);
        prop_assert_eq!(page(a).await, page(b).await, "after the ingest");
        let mut done = Vec::new();
        for e in edits {
            match &e {
                Edit::Toggle(i) => {
                    let on = rules[*i]["enabled"].as_bool().unwrap_or(false);
                    rules[*i]["enabled"] = json!(!on);
                }
                Edit::Action(i, action) => rules[*i]["action"] = json!(action),
                Edit::Expression(i) => {
                    let other = pool[*i].1;
                    let now = rules[*i]["expression"].as_str().unwrap_or_default().to_string();
                    rules[*i]["expression"] = json!(if now == other {
                        pool[*i].0["expression"].as_str().unwrap_or_default()
                    } else {
                        other
                    });
                }
            }
            done.push(e);
            let request = || Request::SetRules {
                silver_table: "t".into(),
                rules: serde_json::from_value(json!(rules)).expect("rules"),
            };
            send(a, request()).await;
            send(b, request()).await;
            prop_assert_eq!(page(a).await, page(b).await, "after {:?}", done);
        }
        Ok(())
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(24),
        ..ProptestConfig::default()
    })]

    #[test]
    fn reusing_the_last_runs_steps_shows_what_computing_every_rule_shows(
        bronze in rows(),
        enabled in prop::collection::vec(any::<bool>(), 11),
        edits in prop::collection::vec(edit(), 1..7),
    ) {
        check(bronze, enabled, edits)?;
    }
}
