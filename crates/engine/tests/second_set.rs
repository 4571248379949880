//! The second set of cases (`tests/data/cases/rw-29` to `rw-51`): values that
//! were silently wrong, and what users could not express. Each test names its
//! case and asserts the values of the case README. Runs natively and in
//! headless Chromium, like `cases.rs`.
//!
//! Sections follow the kinds of issue 9: rules and rows (kinds 1 and 6, the
//! right to be forgotten), bronze reading (kinds 2, 4, 5, duplicate JSON
//! keys), time zones and offsets, MERGE and checks (kind 3, snapshots,
//! composite `unique`), JSON arrays.

#![allow(dead_code)]

use std::sync::Arc;

use medallion_engine::api::{PipelineView, Request, Response, TableView};
use medallion_engine::bronze::{BatchInfo, IngestOptions};
use medallion_engine::env::{FixedClock, SequentialIds};
use medallion_engine::model::PipelineDef;
use medallion_engine::Playground;
use serde_json::json;
use wasm_bindgen_test::wasm_bindgen_test;

#[cfg(target_arch = "wasm32")]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

macro_rules! case {
    ($name:literal) => {
        include_bytes!(concat!("data/cases/", $name))
    };
}

/// One bronze table `t` read with `columns` (name, type), silver `t` with
/// `rules` (JSON rule objects), and gold models `(name, sql)`.
fn pipeline(
    columns: &[(&str, &str)],
    rules: serde_json::Value,
    gold: &[(&str, &str)],
) -> PipelineDef {
    pipeline_json(json!({
        "title": "case",
        "bronze": [{
            "name": "t",
            "source_system": "case_files",
            "schema": {"columns": columns.iter().map(|(n, t)| json!({"name": n, "type": t})).collect::<Vec<_>>()},
            "description": ""
        }],
        "silver": [{"name": "t", "source": "t", "rules": {"rules": rules}, "description": ""}],
        "gold": gold.iter().map(|(n, sql)| json!({"name": n, "sql": sql, "description": ""})).collect::<Vec<_>>(),
        "checks": []
    }))
}

/// A pipeline from its JSON form (the API's `load_pipeline` shape).
fn pipeline_json(value: serde_json::Value) -> PipelineDef {
    serde_json::from_value(value).expect("pipeline JSON")
}

/// A rule object: `kind` is filter / normalize / enrich / expect.
fn rule(id: &str, kind: &str, column: &str, expression: &str) -> serde_json::Value {
    json!({"id": id, "kind": kind, "column": column, "expression": expression, "enabled": true, "rationale": ""})
}

async fn playground(def: PipelineDef) -> Playground {
    let mut p = Playground::with_env(
        Arc::new(FixedClock::new(1_700_000_000_000_000)),
        Arc::new(SequentialIds::default()),
    )
    .expect("playground");
    p.load_pipeline(def).await.expect("pipeline loads");
    p
}

async fn send(p: &mut Playground, request: Request) -> PipelineView {
    match p.handle(request).await {
        Response::Snapshot(v) => v,
        other => panic!("unexpected {other:?}"),
    }
}

async fn ingest_with(
    p: &mut Playground,
    file: &str,
    bytes: &[u8],
    options: IngestOptions,
) -> PipelineView {
    send(
        p,
        Request::Ingest {
            table: "t".into(),
            file_name: file.into(),
            bytes: bytes.to_vec(),
            options,
        },
    )
    .await
}

async fn ingest(p: &mut Playground, file: &str, bytes: &[u8]) -> PipelineView {
    ingest_with(p, file, bytes, IngestOptions::default()).await
}

/// The message of a request that must be refused.
async fn refused(p: &mut Playground, request: Request) -> String {
    match p.handle(request).await {
        Response::Error { message } => message,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

async fn rows(p: &mut Playground, table: &str) -> TableView {
    match p
        .handle(Request::GetTable {
            table: table.into(),
            offset: 0,
            limit: 1000,
            version: None,
            corrupt_only: false,
        })
        .await
    {
        Response::Table(t) => t,
        other => panic!("unexpected {other:?}"),
    }
}

fn col<'a>(t: &'a TableView, column: &str) -> Vec<Option<&'a str>> {
    let i = t
        .columns
        .iter()
        .position(|c| c.name == column)
        .unwrap_or_else(|| panic!("no column {column} in {}", t.name));
    t.rows.iter().map(|r| r[i].as_deref()).collect()
}

/// The table as lines of `|`-joined cells (NULL for a missing value).
fn grid(t: &TableView, columns: &[&str]) -> Vec<String> {
    let cols: Vec<Vec<Option<&str>>> = columns.iter().map(|c| col(t, c)).collect();
    (0..t.rows.len())
        .map(|r| {
            cols.iter()
                .map(|c| c[r].unwrap_or("NULL"))
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect()
}

fn last_batch(v: &PipelineView) -> &BatchInfo {
    v.batches.last().expect("a batch")
}

// ---- rules and rows: kinds 1 and 6, right to be forgotten ----

/// The quarantine's open rows as `rule_id | reason`, in table order.
async fn quarantined(p: &mut Playground) -> Vec<String> {
    let q = rows(p, "silver.quarantine").await;
    grid(&q, &["rule_id", "reason"])
}

/// Rule `id` of silver table `t` in the view, with its stat and error.
fn rule_view<'a>(v: &'a PipelineView, id: &str) -> &'a medallion_engine::api::RuleView {
    v.silver
        .iter()
        .flat_map(|s| &s.rules)
        .find(|r| r.rule.id == id)
        .unwrap_or_else(|| panic!("no rule {id}"))
}

fn rw29() -> PipelineDef {
    pipeline(&[("sku", "STRING"), ("qty", "INT")], json!([]), &[])
}

async fn with_rules(p: &mut Playground, rules: serde_json::Value) -> PipelineView {
    send(
        p,
        Request::SetRules {
            silver_table: "t".into(),
            rules: serde_json::from_value(rules).expect("rules"),
        },
    )
    .await
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw29_a_window_expectation_quarantines_both_p2_rows_and_keeps_p1_p3() {
    let mut p = playground(rw29()).await;
    ingest(
        &mut p,
        "rw-29-window-predicate.csv",
        case!("rw-29-window-predicate.csv"),
    )
    .await;
    let v = with_rules(
        &mut p,
        json!([rule(
            "X1",
            "expect",
            "sku",
            "count(*) OVER (PARTITION BY sku) = 1"
        )]),
    )
    .await;
    assert!(v.run.errors.is_empty(), "{:?}", v.run.errors);
    let silver = rows(&mut p, "silver.t").await;
    assert_eq!(grid(&silver, &["sku", "qty"]), vec!["P-1|4", "P-3|2"]);
    let q = rows(&mut p, "silver.quarantine").await;
    assert_eq!(
        grid(&q, &["rule_id", "raw_payload"]),
        vec!["X1|P-2,1", "X1|P-2,3"],
        "both P-2 rows, each on its own record"
    );
    assert_eq!(
        col(&q, "reason"),
        vec![
            Some("X1: count(*) OVER (PARTITION BY sku) = 1 (sku = P-2)"),
            Some("X1: count(*) OVER (PARTITION BY sku) = 1 (sku = P-2)")
        ]
    );
    // The filter form rejects the same two rows.
    with_rules(
        &mut p,
        json!([rule(
            "F1",
            "filter",
            "sku",
            "count(*) OVER (PARTITION BY sku) > 1"
        )]),
    )
    .await;
    let silver = rows(&mut p, "silver.t").await;
    assert_eq!(grid(&silver, &["sku", "qty"]), vec!["P-1|4", "P-3|2"]);
    let q = rows(&mut p, "silver.quarantine").await;
    let open: Vec<String> = grid(&q, &["rule_id", "raw_payload", "closed_in_run"])
        .into_iter()
        .filter(|r| r.ends_with("|NULL"))
        .collect();
    assert_eq!(open, vec!["F1|P-2,1|NULL", "F1|P-2,3|NULL"]);
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw29_a_window_normalization_quotes_each_rows_own_value() {
    let mut p = playground(rw29()).await;
    ingest(
        &mut p,
        "rw-29-window-predicate.csv",
        case!("rw-29-window-predicate.csv"),
    )
    .await;
    // ORDER BY inside the window: the largest qty per sku; other rows become NULL.
    with_rules(
        &mut p,
        json!([rule(
            "N1",
            "normalize",
            "qty",
            "CASE WHEN row_number() OVER (PARTITION BY sku ORDER BY qty DESC) = 1 THEN qty END"
        )]),
    )
    .await;
    assert_eq!(
        quarantined(&mut p).await,
        vec!["N1|N1: qty became NULL (was 1)"],
        "P-2 with qty 1 is the second of its sku; its own value is quoted"
    );
    let silver = rows(&mut p, "silver.t").await;
    assert_eq!(
        grid(&silver, &["sku", "qty"]),
        vec!["P-1|4", "P-2|3", "P-3|2"]
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw29_right_to_be_forgotten_plans_then_erases_exactly_the_two_p2_records() {
    let mut p = playground(rw29()).await;
    ingest(
        &mut p,
        "rw-29-window-predicate.csv",
        case!("rw-29-window-predicate.csv"),
    )
    .await;
    let predicate = "count(*) OVER (PARTITION BY split_part(raw_payload, ',', 1)) > 1";
    let plan = match p
        .handle(Request::PlanForget {
            table: "t".into(),
            predicate: predicate.into(),
        })
        .await
    {
        Response::ErasurePlan(plan) => plan,
        other => panic!("expected a plan, got {other:?}"),
    };
    assert_eq!(plan.rows, 2);
    let bronze = &plan.tables[0];
    assert_eq!(bronze.name, "bronze.t");
    assert_eq!((bronze.rows_before, bronze.removed), (4, 2));
    assert_eq!(
        bronze.sample_removed,
        vec![
            "rw-29-window-predicate.csv line 2: P-2,1",
            "rw-29-window-predicate.csv line 4: P-2,3"
        ]
    );
    let silver = plan
        .tables
        .iter()
        .find(|t| t.name == "silver.t")
        .expect("silver.t changes");
    assert_eq!(
        (silver.rows_before, silver.removed, silver.added),
        (4, 2, 0)
    );
    assert_eq!(
        silver.sample_removed,
        vec!["sku=P-2, qty=1", "sku=P-2, qty=3"]
    );
    // Planning changed nothing.
    assert_eq!(rows(&mut p, "bronze.t").await.rows.len(), 4);
    assert_eq!(rows(&mut p, "silver.t").await.rows.len(), 4);

    // The plan's count guards the delete.
    let msg = refused(
        &mut p,
        Request::Forget {
            table: "t".into(),
            predicate: predicate.into(),
            reason: "GDPR #29".into(),
            expected_rows: Some(3),
        },
    )
    .await;
    assert!(
        msg.contains("now matches 2 bronze rows, not the 3 of the plan"),
        "{msg}"
    );
    send(
        &mut p,
        Request::Forget {
            table: "t".into(),
            predicate: predicate.into(),
            reason: "GDPR #29".into(),
            expected_rows: Some(2),
        },
    )
    .await;
    let bronze = rows(&mut p, "bronze.t").await;
    assert_eq!(
        col(&bronze, "raw_payload"),
        vec![Some("P-1,4"), Some("P-3,2")]
    );
    let silver = rows(&mut p, "silver.t").await;
    assert_eq!(grid(&silver, &["sku", "qty"]), vec!["P-1|4", "P-3|2"]);
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_forget_condition_that_fails_on_a_row_erases_nothing() {
    let mut p = playground(rw29()).await;
    ingest(
        &mut p,
        "rw-29-window-predicate.csv",
        case!("rw-29-window-predicate.csv"),
    )
    .await;
    let msg = refused(
        &mut p,
        Request::PlanForget {
            table: "t".into(),
            predicate: "CAST(split_part(raw_payload, ',', 1) AS INT) > 0".into(),
        },
    )
    .await;
    assert!(
        msg.contains("cannot be computed for 4 rows")
            && msg.contains("rw-29-window-predicate.csv line 2: P-2,1")
            && msg.ends_with("nothing was deleted"),
        "{msg}"
    );
    assert_eq!(rows(&mut p, "bronze.t").await.rows.len(), 4);
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw39_a_failed_cast_and_a_division_by_zero_quarantine_only_their_rows() {
    let mut p = playground(pipeline(
        &[("id", "STRING"), ("amount", "STRING")],
        json!([]),
        &[],
    ))
    .await;
    ingest(
        &mut p,
        "rw-39-runtime-error-one-row.csv",
        case!("rw-39-runtime-error-one-row.csv"),
    )
    .await;
    let mut n1 = rule("N1", "normalize", "amount", "CAST(amount AS INT)");
    n1["type"] = json!("INT");
    let mut e1 = rule("E1", "enrich", "per_unit", "100 / amount");
    e1["action"] = json!("drop");
    let v = with_rules(&mut p, json!([n1, e1])).await;
    assert!(v.run.ok && v.run.errors.is_empty(), "{:?}", v.run);
    let silver = rows(&mut p, "silver.t").await;
    assert_eq!(
        grid(&silver, &["id", "amount", "per_unit"]),
        vec!["1|10|10", "3|30|3"]
    );
    let q = rows(&mut p, "silver.quarantine").await;
    assert_eq!(col(&q, "raw_payload"), vec![Some("2,ten"), Some("4,0")]);
    let reasons = col(&q, "reason");
    let id2 = reasons[0].unwrap_or_default();
    assert!(
        id2.starts_with("N1: CAST(amount AS INT) failed on this row: ")
            && id2.contains("'ten'")
            && id2.contains("(amount = 'ten')"),
        "{id2}"
    );
    let id4 = reasons[1].unwrap_or_default();
    assert!(
        id4.starts_with("E1: 100 / amount failed on this row: ")
            && id4.to_lowercase().contains("divide by zero")
            && id4.ends_with("(amount = 0)"),
        "{id4}"
    );
    // Per-rule figures: N1 checked 4 rows, failed 1; E1 failed on id 4, and
    // on id 2, whose amount N1 could not compute.
    let n1 = rule_view(&v, "N1").stat.clone().expect("N1 stat");
    assert_eq!((n1.checked, n1.failed), (4, 1));
    let e1 = rule_view(&v, "E1").stat.clone().expect("E1 stat");
    assert_eq!((e1.checked, e1.failed), (4, 2));
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_run_time_error_in_a_filter_or_expectation_is_the_rows_problem() {
    let mut p = playground(pipeline(
        &[("id", "STRING"), ("amount", "STRING")],
        json!([]),
        &[],
    ))
    .await;
    ingest(
        &mut p,
        "rw-39-runtime-error-one-row.csv",
        case!("rw-39-runtime-error-one-row.csv"),
    )
    .await;
    with_rules(
        &mut p,
        json!([
            rule("F1", "filter", "amount", "CAST(amount AS INT) > 25"),
            rule("X1", "expect", "amount", "100 / CAST(amount AS INT) > 0")
        ]),
    )
    .await;
    let silver = rows(&mut p, "silver.t").await;
    assert_eq!(col(&silver, "id"), vec![Some("1")]);
    assert_eq!(
        grid(
            &rows(&mut p, "silver.quarantine").await,
            &["raw_payload", "rule_id"]
        ),
        vec!["2,ten|F1", "3,30|F1", "4,0|X1"]
    );
    // A window that fails at run time cannot be pinned to a row: the rule says so.
    let v = with_rules(
        &mut p,
        json!([rule(
            "F2",
            "filter",
            "amount",
            "sum(CAST(amount AS INT)) OVER () > 0"
        )]),
    )
    .await;
    let e = rule_view(&v, "F2").error.clone().expect("F2 error");
    assert!(e.contains("cannot be set aside on its own"), "{e}");
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn an_aggregate_without_over_is_refused_with_a_hint() {
    let mut p = playground(rw29()).await;
    ingest(
        &mut p,
        "rw-29-window-predicate.csv",
        case!("rw-29-window-predicate.csv"),
    )
    .await;
    let v = with_rules(&mut p, json!([rule("F1", "filter", "qty", "count(*) > 1")])).await;
    let e = rule_view(&v, "F1").error.clone().expect("F1 error");
    assert!(e.contains("needs OVER (...)"), "{e}");
    // The last good silver stays.
    assert_eq!(rows(&mut p, "silver.t").await.rows.len(), 4);
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn incremental_runs_refuse_window_rules_instead_of_computing_them_on_new_batches_only() {
    let mut p = playground(rw29()).await;
    ingest(
        &mut p,
        "rw-29-window-predicate.csv",
        case!("rw-29-window-predicate.csv"),
    )
    .await;
    with_rules(
        &mut p,
        json!([rule(
            "F1",
            "filter",
            "sku",
            "count(*) OVER (PARTITION BY sku) > 1"
        )]),
    )
    .await;
    send(
        &mut p,
        Request::SetRunMode {
            mode: medallion_engine::api::RunMode::Incremental,
        },
    )
    .await;
    let v = ingest(&mut p, "more.csv", b"sku,qty\nP-1,9\n").await;
    let e = rule_view(&v, "F1").error.clone().expect("F1 refused");
    assert!(
        e.contains("an incremental run sees only the new batches"),
        "{e}"
    );
    // A full refresh computes it over every row: P-1 now has two rows too.
    let v = send(&mut p, Request::Run { full_refresh: true }).await;
    assert!(v.run.ok, "{:?}", v.run);
    let silver = rows(&mut p, "silver.t").await;
    assert_eq!(grid(&silver, &["sku", "qty"]), vec!["P-3|2"]);
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn the_row_trail_of_a_window_rule_shows_the_runs_outcome() {
    let mut p = playground(rw29()).await;
    ingest(
        &mut p,
        "rw-29-window-predicate.csv",
        case!("rw-29-window-predicate.csv"),
    )
    .await;
    with_rules(
        &mut p,
        json!([rule(
            "F1",
            "filter",
            "sku",
            "count(*) OVER (PARTITION BY sku) > 1"
        )]),
    )
    .await;
    // Quarantine row 0 is P-2,1: alone, it would pass F1; in the table it fails.
    let trail = match p
        .handle(Request::Trail {
            table: "silver.quarantine".into(),
            row: 0,
        })
        .await
    {
        Response::Trail(t) => t,
        other => panic!("unexpected {other:?}"),
    };
    assert_eq!(trail.records.len(), 1);
    assert_eq!(trail.records[0].role, "quarantined");
    let step = &trail.records[0].steps[0];
    assert_eq!(step.rule_id, "F1");
    assert!(
        step.failed && step.text.starts_with("failed (drop): F1:"),
        "{}",
        step.text
    );
}

// ---- end of rules and rows ----

// ---- bronze reading: kinds 2, 4, 5, duplicate JSON keys ----

// ---- end of bronze reading ----

// ---- time zones and offsets: rw-43, rw-45 ----

// ---- end of time zones and offsets ----

// ---- MERGE, snapshots and checks: kind 3, rw-47, rw-51 ----

// ---- end of MERGE, snapshots and checks ----

// ---- JSON arrays: rw-49 ----

// ---- end of JSON arrays ----
