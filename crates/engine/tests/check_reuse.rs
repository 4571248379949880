//! Checks re-run only for the tables that changed (issue 12): a run keeps
//! the result of a row or schema check whose tables are the same rows as
//! at the last run (`checks::CheckCache`), and evaluates every other one.
//! These tests pin which checks are kept after which edit, and that a kept
//! result is what evaluating it gives (`set_reuse_last_run(false)`).
//! `prop_step_cache.rs` compares the two on random edits.
#![cfg(not(target_arch = "wasm32"))]

use medallion_engine::api::{Request, Response};
use medallion_engine::checks::CheckResult;
use medallion_engine::Playground;
use serde_json::{json, Value};

#[path = "support/page.rs"]
#[allow(dead_code)] // the reuse tests use fixed_session only
mod support;

fn rules(f1_on: bool) -> Value {
    json!([
        {"id": "F1", "kind": "filter", "column": "qty", "expression": "qty < 0",
         "enabled": f1_on, "rationale": ""},
        {"id": "N1", "kind": "normalize", "column": "code", "expression": "upper(trim(code))",
         "enabled": true, "rationale": ""}
    ])
}

/// Two silver tables (`t` with rules, `lk` without), a gold over `t`,
/// and checks of every kind: over `t`, over `lk`, over both, and the ones
/// never kept (aggregate, audit, subquery, `now()`).
fn pipeline() -> Value {
    let table = |name: &str, columns: &[(&str, &str)]| {
        json!({"name": name, "source_system": "test", "description": "",
               "schema": {"columns": columns.iter()
                   .map(|(n, t)| json!({"name": n, "type": t})).collect::<Vec<_>>()}})
    };
    json!({
        "title": "check reuse",
        "bronze": [table("t", &[("id", "INT"), ("code", "STRING"), ("qty", "INT")]),
                   table("lk", &[("code", "STRING"), ("name", "STRING")])],
        "silver": [{"name": "t", "source": "t", "rules": {"rules": rules(true)}, "description": ""},
                   {"name": "lk", "source": "lk", "rules": {"rules": []}, "description": ""}],
        "gold": [{"name": "by_code", "description": "",
                  "sql": "SELECT code, count(*) AS n FROM silver.t GROUP BY code ORDER BY code"}],
        "checks": [
            {"id": "T1", "level": "row", "description": "", "kind": "row_predicate",
             "table": "silver.t", "predicate": "qty >= 0"},
            {"id": "T2", "level": "row", "description": "", "kind": "accepted_range",
             "table": "silver.t", "column": "qty", "min": "0", "max": "4"},
            {"id": "L1", "level": "row", "description": "", "kind": "unique",
             "table": "silver.lk", "columns": ["code"]},
            {"id": "L2", "level": "row", "description": "", "kind": "not_null",
             "table": "silver.lk", "column": "name"},
            {"id": "B1", "level": "row", "description": "", "kind": "relationships",
             "table": "silver.t", "column": "code", "to": "silver.lk", "field": "code"},
            {"id": "G1", "level": "row", "description": "", "kind": "row_predicate",
             "table": "gold.by_code", "predicate": "n < 3"},
            {"id": "A1", "level": "aggregate", "description": "", "kind": "reconciliation",
             "bronze_table": "bronze.t", "silver_table": "silver.t"},
            {"id": "Q1", "level": "aggregate", "description": "", "kind": "audit",
             "sql": "SELECT * FROM silver.lk WHERE name = 'Zulu'"},
            {"id": "S1", "level": "row", "description": "", "kind": "row_predicate",
             "table": "silver.lk", "predicate": "code IN (SELECT code FROM silver.t)"},
            {"id": "N1", "level": "row", "description": "", "kind": "row_predicate",
             "table": "silver.lk", "predicate": "now() > TIMESTAMP '2000-01-01 00:00:00'"}
        ]
    })
}

async fn send(p: &mut Playground, r: Request) {
    if let Response::Error { message } = p.handle(r).await {
        panic!("request failed: {message}");
    }
}

async fn session(reuse: bool) -> Playground {
    let mut p = support::fixed_session(pipeline(), reuse).await;
    for (table, csv) in [
        ("lk", "code,name\nA,Alpha\nB,Bravo\nB,Bis\nZ,\n"),
        ("t", "id,code,qty\n1,a,1\n2, b,5\n3,c,-1\n4,a,2\n"),
    ] {
        send(
            &mut p,
            Request::Ingest {
                table: table.into(),
                file_name: format!("{table}.csv"),
                bytes: csv.as_bytes().to_vec(),
                options: Default::default(),
            },
        )
        .await;
    }
    p
}

/// Each check as the page shows it: id, status, what it observed.
async fn shown(p: &mut Playground) -> Vec<(String, String, String)> {
    let Response::Snapshot(view) = p.handle(Request::Snapshot).await else {
        panic!("snapshot")
    };
    view.checks
        .iter()
        .map(|c: &CheckResult| {
            (
                c.id.clone(),
                format!("{:?}", c.status).to_lowercase(),
                c.observed.clone(),
            )
        })
        .collect()
}

async fn check(p: &mut Playground, id: &str) -> (String, String, String) {
    shown(p)
        .await
        .into_iter()
        .find(|c| c.0 == id)
        .expect("check")
}

async fn set_rules(p: &mut Playground, f1_on: bool) {
    send(
        p,
        Request::SetRules {
            silver_table: "t".into(),
            rules: serde_json::from_value(rules(f1_on)).expect("rules"),
        },
    )
    .await;
}

#[tokio::test]
async fn a_rule_edit_re_runs_the_checks_of_the_table_it_changed_and_keeps_the_others() {
    let mut p = session(true).await;
    let mut fresh = session(false).await;
    // F1 off: silver.t gains the row with qty -1, gold changes with it.
    set_rules(&mut p, false).await;
    set_rules(&mut fresh, false).await;
    // Kept: the two checks over silver.lk alone. Evaluated: T1, T2 and
    // G1 (their tables changed), B1 (it reads silver.t too), A1, Q1, S1, N1
    // (never kept).
    assert_eq!(p.checks_reused(), 2);
    assert_eq!(fresh.checks_reused(), 0);
    assert_eq!(shown(&mut p).await, shown(&mut fresh).await);
    let t1 = check(&mut p, "T1").await;
    assert_eq!(t1.1, "fail");
    assert!(t1.2.starts_with("1 of 4 rows violate"), "{t1:?}");
    assert_eq!(
        check(&mut p, "L1").await.2,
        "1 duplicated key; 0 NULLs seen"
    );
    assert_eq!(check(&mut p, "L2").await.1, "fail");

    // The same rules again: silver.t and gold hold the same rows, so every
    // check that can be kept is (T1, T2, L1, L2, B1, G1).
    set_rules(&mut p, false).await;
    set_rules(&mut fresh, false).await;
    assert_eq!(p.checks_reused(), 6);
    assert_eq!(shown(&mut p).await, shown(&mut fresh).await);

    // F1 on again: silver.t and gold change; the silver.lk checks are kept.
    set_rules(&mut p, true).await;
    set_rules(&mut fresh, true).await;
    assert_eq!(p.checks_reused(), 2);
    assert_eq!(shown(&mut p).await, shown(&mut fresh).await);
    assert_eq!(check(&mut p, "T1").await.1, "pass");
}

#[tokio::test]
async fn new_rows_in_a_lookup_re_run_its_checks() {
    let mut p = session(true).await;
    let mut fresh = session(false).await;
    for s in [&mut p, &mut fresh] {
        send(
            s,
            Request::Ingest {
                table: "lk".into(),
                file_name: "lk2.csv".into(),
                bytes: b"code,name\nA,Again\n".to_vec(),
                options: Default::default(),
            },
        )
        .await;
    }
    // silver.lk changed (one more A): its checks are evaluated again;
    // silver.t and gold did not (T1, T2, G1 kept; B1 reads silver.lk).
    assert_eq!(p.checks_reused(), 3);
    assert_eq!(shown(&mut p).await, shown(&mut fresh).await);
    let l1 = check(&mut p, "L1").await;
    assert_eq!(l1.1, "fail");
    assert_eq!(l1.2, "2 duplicated keys; 0 NULLs seen");
}

#[tokio::test]
async fn a_result_is_kept_only_in_the_language_it_was_observed_in() {
    let mut p = session(true).await;
    let mut fresh = session(false).await;
    for s in [&mut p, &mut fresh] {
        send(
            s,
            Request::SetLang {
                lang: medallion_engine::Lang::Ru,
            },
        )
        .await;
        set_rules(s, true).await;
    }
    // The results kept were observed in English: evaluated again.
    assert_eq!(p.checks_reused(), 0);
    for s in [&mut p, &mut fresh] {
        set_rules(s, true).await;
    }
    // Same rules, same rows, same language: kept.
    assert_eq!(p.checks_reused(), 6);
    assert_eq!(shown(&mut p).await, shown(&mut fresh).await);
    let l1 = check(&mut p, "L1").await;
    assert_eq!(l1.2, "повторяющихся ключей: 1; NULL: 0");
}
