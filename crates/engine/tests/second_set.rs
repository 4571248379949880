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

mod support;
use support::col;

use medallion_engine::TableName;
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
    support::yield_to_browser().await;
    let mut p = Playground::with_env(
        Arc::new(FixedClock::new(1_700_000_000_000_000)),
        Arc::new(SequentialIds::default()),
    )
    .expect("playground");
    p.load_pipeline(def).await.expect("pipeline loads");
    p
}

async fn send(p: &mut Playground, request: Request) -> PipelineView {
    support::yield_to_browser().await;
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

async fn rows(p: &mut Playground, table: &str) -> TableView {
    support::rows_at(p, table, None, 1000).await
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
            plan_state: None,
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
            plan_state: None,
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

/// The trial's finding: a JSON batch said nothing of the keys no declared
/// column reads (silver never sees them; the raw bronze keeps them in
/// raw_payload). Every such key is named, in the order first seen over all
/// records (a key that only a later record has too); a key a declared
/// column binds ignoring case, or by the first key of its path, is not.
/// A CSV batch names its header's unread columns the same way.
#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_raw_batch_names_the_keys_and_columns_silver_does_not_read() {
    let mut def = pipeline(&[("id", "INT"), ("Amount", "DECIMAL(10,2)")], json!([]), &[]);
    let mut v = serde_json::to_value(&def).unwrap();
    v["bronze"][0]["schema"]["columns"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "city", "type": "STRING", "path": "address.city"}));
    def = pipeline_json(v);
    let mut p = playground(def).await;
    let v = ingest(
        &mut p,
        "orders.jsonl",
        b"{\"id\": 1, \"amount\": 2.50, \"note\": \"gift\", \"address\": {\"city\": \"Oslo\", \"zip\": \"0150\"}}\n{\"id\": 2, \"amount\": 1, \"coupon\": \"X1\", \"note\": null}\n",
    )
    .await;
    let notes = &last_batch(&v).notes;
    let unread = "keys silver does not read (the declared schema lacks them; bronze keeps them in raw_payload): note, coupon";
    assert!(notes.iter().any(|n| n == unread), "{notes:?}");
    let v = ingest(&mut p, "orders.csv", b"id,amount,comment,city\n3,4.00,late,Bergen\n").await;
    let notes = &last_batch(&v).notes;
    let unread = "columns silver does not read (the declared schema lacks them; bronze keeps them in raw_payload): comment";
    assert!(notes.iter().any(|n| n == unread), "{notes:?}");
    // A file whose every key is read says nothing of the kind.
    let v = ingest(&mut p, "clean.jsonl", b"{\"id\": 4, \"AMOUNT\": 5}\n").await;
    assert!(!last_batch(&v).notes.iter().any(|n| n.contains("does not read")), "{:?}", last_batch(&v).notes);
}

/// A declared name with a dot and no path is one key, as silver reads it:
/// the key `geo.lat` is read (not named unread), and `geo` is not read.
#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_dotted_column_name_without_a_path_reads_its_whole_key() {
    let mut p = playground(pipeline(&[("id", "INT"), ("geo.lat", "DOUBLE")], json!([]), &[])).await;
    let v = ingest(&mut p, "points.jsonl", b"{\"id\": 1, \"geo.lat\": 59.9, \"geo\": 1}\n").await;
    let notes = &last_batch(&v).notes;
    let unread = "keys silver does not read (the declared schema lacks them; bronze keeps them in raw_payload): geo";
    assert!(notes.iter().any(|n| n == unread), "{notes:?}");
    assert_eq!(grid(&rows(&mut p, "silver.t").await, &["id", "geo.lat"]), ["1|59.9"]);
}

/// The trial's `CAST(tailnum AS INT) > 0` on the flights: more rows fail
/// than a rule may quarantine, so the rule stops, and its hint must name
/// TRY_CAST (it said "CAST it in the condition", to a condition that did).
#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_cast_that_fails_on_too_many_rows_points_to_try_cast_not_cast() {
    let mut p = playground(pipeline(&[("id", "STRING"), ("tailnum", "STRING")], json!([]), &[])).await;
    let mut csv = b"id,tailnum\n".to_vec();
    for i in 0..10_001 {
        csv.extend_from_slice(format!("{i},N{i}XY\n").as_bytes());
    }
    ingest(&mut p, "flights.csv", &csv).await;
    let v = with_rules(&mut p, json!([rule("F1", "filter", "tailnum", "CAST(tailnum AS INT) > 0")])).await;
    let e = rule_view(&v, "F1").error.clone().expect("F1 error");
    assert!(e.starts_with("CAST(tailnum AS INT) > 0 fails on more than 10000 rows; the first: "), "{e}");
    assert!(e.ends_with(". A text here is not a number: use TRY_CAST(column AS type), which gives NULL for a text that is not a number where CAST fails, or declare a type on the normalization that produces the column (e.g. DECIMAL(12,2))."), "{e}");
    // The advice works: no row is quarantined, every row reaches silver.
    let v = with_rules(&mut p, json!([rule("F1", "filter", "tailnum", "TRY_CAST(tailnum AS INT) > 0")])).await;
    assert!(v.run.ok && v.run.errors.is_empty(), "{:?}", v.run);
    assert_eq!(rows(&mut p, "silver.t").await.row_count, 10_001);
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
            table: TableName::silver("quarantine"),
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

/// Two bronze tables: `t` (columns) and `lk` (lookup columns), silver `t` with rules.
fn with_lookup(
    columns: &[(&str, &str)],
    lk: &[(&str, &str)],
    rules: serde_json::Value,
) -> PipelineDef {
    let cols = |c: &[(&str, &str)]| {
        c.iter()
            .map(|(n, t)| json!({"name": n, "type": t}))
            .collect::<Vec<_>>()
    };
    pipeline_json(json!({
        "title": "case",
        "bronze": [
            {"name": "t", "source_system": "f", "schema": {"columns": cols(columns)}, "description": ""},
            {"name": "lk", "source_system": "f", "schema": {"columns": cols(lk)}, "description": ""}
        ],
        "silver": [{"name": "t", "source": "t", "rules": {"rules": rules}, "description": ""}],
        "gold": [],
        "checks": []
    }))
}

async fn ingest_to(p: &mut Playground, table: &str, file: &str, bytes: &[u8]) -> PipelineView {
    send(
        p,
        Request::Ingest {
            table: table.into(),
            file_name: file.into(),
            bytes: bytes.to_vec(),
            options: IngestOptions::default(),
        },
    )
    .await
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_lookup_failure_reason_quotes_the_lookups_value_not_the_rows() {
    let mut lk = rule("L1", "enrich", "per", "100 / l.qty");
    lk["lookup"] = json!({"table": "bronze.lk", "alias": "l", "on": "sku = l.sku"});
    lk["action"] = json!("drop");
    let mut p = playground(with_lookup(
        &[("sku", "STRING"), ("qty", "INT")],
        &[("sku", "STRING"), ("qty", "INT")],
        json!([lk]),
    ))
    .await;
    ingest_to(&mut p, "lk", "lk.csv", b"sku,qty\nA,0\nB,5\n").await;
    ingest(&mut p, "a.csv", b"sku,qty\nB,7\nA,3\n").await;
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &["sku", "qty", "per"]),
        ["B|7|20"]
    );
    assert_eq!(
        quarantined(&mut p).await,
        ["L1|L1: 100 / l.qty failed on this row: Divide by zero error (l.qty = 0)"]
    );
}

/// Issue 12's trial: the flights weather lookup said "no match" for 1,508
/// flights, 17 of which had a weather row whose `temp` was NA. A row
/// without a match and a row whose match gives NULL are told apart.
#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_lookup_match_that_gives_null_is_not_called_no_match() {
    let mut lk = rule("L1", "enrich", "name", "l.name");
    lk["lookup"] = json!({"table": "bronze.lk", "alias": "l", "on": "sku = l.sku"});
    lk["action"] = json!("drop");
    let mut p = playground(with_lookup(
        &[("sku", "STRING"), ("qty", "INT")],
        &[("sku", "STRING"), ("name", "STRING")],
        json!([lk]),
    ))
    .await;
    ingest_to(&mut p, "lk", "lk.csv", b"sku,name\nA,apple\nB,\n").await;
    let v = ingest(&mut p, "a.csv", b"sku,qty\nA,1\nB,2\nC,3\n").await;
    assert_eq!(grid(&rows(&mut p, "silver.t").await, &["sku", "qty", "name"]), ["A|1|apple"]);
    assert_eq!(
        quarantined(&mut p).await,
        [
            "L1|L1: name is NULL (its match in bronze.lk gives NULL)",
            "L1|L1: name is NULL (no match in bronze.lk)",
        ]
    );
    assert_eq!(rule_view(&v, "L1").stat.as_ref().unwrap().failed, 2);
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_join_condition_that_fails_on_one_row_quarantines_that_row_only() {
    let mut lk = rule("L1", "enrich", "name", "l.name");
    lk["lookup"] = json!({"table": "bronze.lk", "alias": "l", "on": "CAST(code AS INT) = l.id"});
    lk["action"] = json!("drop");
    let mut p = playground(with_lookup(
        &[("code", "STRING"), ("qty", "INT")],
        &[("id", "INT"), ("name", "STRING")],
        json!([lk]),
    ))
    .await;
    ingest_to(&mut p, "lk", "lk.csv", b"id,name\n1,one\n2,two\n").await;
    let v = ingest(&mut p, "a.csv", b"code,qty\n1,7\nx2,3\n2,4\n").await;
    assert!(v.run.ok, "{:?} {:?}", v.run, rule_view(&v, "L1").error);
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &["code", "qty", "name"]),
        ["1|7|one", "2|4|two"]
    );
    let q = quarantined(&mut p).await;
    assert_eq!(q.len(), 1, "{q:?}");
    assert!(
        q[0].starts_with("L1|L1: join condition CAST(code AS INT) = l.id failed on this row: ")
            && q[0].contains("'x2'")
            && q[0].ends_with("(code = 'x2')"),
        "{q:?}"
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn an_error_that_does_not_depend_on_the_row_is_the_rules_error() {
    let mut p = playground(pipeline(
        &[("sku", "STRING"), ("qty", "INT")],
        json!([]),
        &[],
    ))
    .await;
    ingest(&mut p, "a.csv", b"sku,qty\nA,1\nB,2\nC,3\n").await;
    for (e, says) in [
        (
            "qty IN (SELECT CAST(column1 AS INT) FROM (VALUES ('1'), ('x')))",
            "fails by itself, whatever the row",
        ),
        (
            "qty > (SELECT CAST(column1 AS INT) FROM (VALUES ('x')))",
            "fails by itself, whatever the row",
        ),
        ("qty > CAST('x' AS INT)", "would fail on every row"),
    ] {
        let v = with_rules(&mut p, json!([rule("X1", "expect", "qty", e)])).await;
        let error = rule_view(&v, "X1").error.clone().unwrap_or_default();
        assert!(error.contains(says), "{e}: {error}");
        // The last good silver stays; nothing was quarantined for it.
        assert_eq!(
            grid(&rows(&mut p, "silver.t").await, &["sku", "qty"]),
            ["A|1", "B|2", "C|3"]
        );
        assert!(quarantined(&mut p).await.is_empty());
    }
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn misspelt_fields_are_refused_with_the_known_names_everywhere() {
    let refused_json = |v: serde_json::Value| -> String {
        serde_json::from_value::<Request>(v)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    assert!(refused_json(
        json!({"type": "ingest", "table": "t", "file_name": "a.csv", "bytes": [49], "option": {}})
    )
    .contains("unknown field `option`, expected one of"));
    assert!(
        refused_json(json!({"type": "reingest", "batch_id": "b", "remeber": true}))
            .contains("unknown field `remeber`")
    );
    let load = |silver: serde_json::Value, checks: serde_json::Value| {
        json!({"type": "load_pipeline", "pipeline": {
            "title": "c",
            "bronze": [{"name": "t", "source_system": "f", "description": "", "schema": {"columns": [
                {"name": "id", "type": "STRING"}, {"name": "ts", "type": "TIMESTAMP"}]}}],
            "silver": [silver], "gold": [], "checks": checks}})
    };
    let silver = |merge: serde_json::Value, rule: serde_json::Value| json!({"name": "t", "source": "t", "rules": {"rules": [rule]}, "description": "", "merge": merge});
    let ok_rule = rule("X1", "expect", "id", "id IS NOT NULL");
    let mut bad_rule = ok_rule.clone();
    bad_rule["acton"] = json!("fail");
    for (what, request, field) in [
        (
            "merge",
            load(
                silver(json!({"keys": ["id"], "sequnce_by": "ts"}), ok_rule.clone()),
                json!([]),
            ),
            "sequnce_by",
        ),
        (
            "rule",
            load(silver(json!({"keys": ["id"]}), bad_rule), json!([])),
            "acton",
        ),
        (
            "check",
            load(
                silver(json!({"keys": ["id"]}), ok_rule.clone()),
                json!([{"id": "U1", "level": "row", "description": "", "kind": "unique", "table": "silver.t", "column": ["id"]}]),
            ),
            "column",
        ),
    ] {
        let message = refused_json(request);
        assert!(
            message.contains(&format!("unknown field `{field}`")),
            "{what}: {message}"
        );
    }
    assert!(
        serde_json::from_value::<medallion_engine::source::SourceColumn>(
            json!({"name": "ts", "type": "TIMESTAMP", "timezone": "Europe/Berlin"})
        )
        .is_err_and(|e| e
            .to_string()
            .contains("unknown field `timezone`, expected one of"))
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_normalization_to_timestamp_counts_values_read_as_utc() {
    let mut n1 = rule("N1", "normalize", "ts", "ts");
    n1["type"] = json!("TIMESTAMP");
    let mut p = playground(pipeline(
        &[("id", "STRING"), ("ts", "STRING")],
        json!([n1]),
        &[],
    ))
    .await;
    let v = ingest(
        &mut p,
        "a.csv",
        b"id,ts\n1,2024-02-01 09:00:00\n2,2024-02-01T09:00:00+01:00\n",
    )
    .await;
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &["id", "ts"]),
        ["1|2024-02-01 09:00:00", "2|2024-02-01 08:00:00"]
    );
    assert_eq!(
        rule_view(&v, "N1").stat.as_ref().map(|s| s.read_as_utc),
        Some(1)
    );
    let r = v
        .read_as_utc
        .iter()
        .find(|r| r.bronze_table == "silver.t")
        .expect("counted on the silver table");
    assert_eq!(
        (r.column.as_str(), r.without_offset, r.values),
        ("ts (N1)", 1, 2)
    );
}

/// A window after a rule that quarantines rows (a failed CAST, a division by
/// zero, a failed expectation) counts and ranks only the rows still headed
/// for silver, as it does after a filter.
#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_window_after_a_quarantining_rule_does_not_count_the_quarantined_rows() {
    let mut n1 = rule("N1", "normalize", "amount", "CAST(amount AS INT)");
    n1["type"] = json!("INT");
    let mut e1 = rule("E1", "enrich", "per", "100 / amount");
    e1["action"] = json!("drop");
    let mut p = playground(pipeline(
        &[("sku", "STRING"), ("amount", "STRING")],
        json!([
            n1,
            e1,
            rule(
                "E2",
                "enrich",
                "n_in_sku",
                "count(*) OVER (PARTITION BY sku)"
            ),
            rule(
                "E3",
                "enrich",
                "rank",
                "row_number() OVER (ORDER BY amount)"
            ),
            rule("X1", "expect", "amount", "amount < 50"),
            rule(
                "X2",
                "expect",
                "sku",
                "count(*) OVER (PARTITION BY sku) = 2"
            ),
        ]),
        &[],
    ))
    .await;
    let v = ingest(
        &mut p,
        "a.csv",
        b"sku,amount\nA,1\nA,ten\nA,0\nA,4\nB,5\nB,60\nC,7\n",
    )
    .await;
    assert!(v.run.ok, "{:?}", v.run);
    // ten (N1) and 0 (E1) leave before E2 / E3; 60 fails X1 before X2, so
    // B is alone when X2 counts and B,5 fails X2 too; C,7 fails X2.
    assert_eq!(
        grid(
            &rows(&mut p, "silver.t").await,
            &["sku", "amount", "n_in_sku", "rank"]
        ),
        ["A|1|2|1", "A|4|2|2"]
    );
    let q = quarantined(&mut p).await;
    assert_eq!(q.len(), 5, "{q:?}");
    assert!(
        q.iter().any(|r| r.starts_with("N1") && r.contains("'ten'")),
        "{q:?}"
    );
    assert!(
        q.iter()
            .any(|r| r.starts_with("E1") && r.contains("(amount = 0)")),
        "{q:?}"
    );
    assert!(
        q.iter()
            .any(|r| r.starts_with("X1") && r.contains("(amount = 60)")),
        "{q:?}"
    );
    assert_eq!(q.iter().filter(|r| r.starts_with("X2")).count(), 2, "{q:?}");
}

/// `NOT EXISTS (SELECT ...)` as a filter is computed per row like `EXISTS`
/// and `IN (SELECT ...)`.
#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_not_exists_subquery_filter_keeps_each_result_on_its_row() {
    let mut p = playground(with_lookup(
        &[("sku", "STRING"), ("qty", "INT")],
        &[("code", "STRING"), ("price", "INT")],
        json!([rule(
            "F1",
            "filter",
            "sku",
            "NOT EXISTS (SELECT 1 FROM bronze.lk l WHERE split_part(l.raw_payload, ',', 1) = sku)"
        )]),
    ))
    .await;
    ingest_to(&mut p, "lk", "lk.csv", b"code,price\nA,10\nB,20\n").await;
    let v = ingest_to(&mut p, "t", "a.csv", b"sku,qty\nC,1\nA,2\nD,3\nB,4\n").await;
    assert!(v.run.ok, "{:?}", v.run);
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &["sku", "qty"]),
        ["A|2", "B|4"]
    );
    assert_eq!(quarantined(&mut p).await.len(), 2);
}

/// A timestamp outside the TIMESTAMP range (microseconds) is that row's
/// error, never a value no reader can show.
#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_timestamp_out_of_range_on_one_row_is_quarantined() {
    let mut e1 = rule("E1", "enrich", "ts", "to_timestamp_seconds(n)");
    e1["action"] = json!("drop");
    let mut p = playground(pipeline(
        &[("id", "STRING"), ("n", "BIGINT")],
        json!([e1]),
        &[],
    ))
    .await;
    let v = ingest(&mut p, "a.csv", b"id,n\n1,0\n2,9223372036855\n").await;
    assert!(v.run.ok, "{:?}", v.run);
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &["id", "ts"]),
        ["1|1970-01-01 00:00:00"]
    );
    let q = quarantined(&mut p).await;
    assert_eq!(q.len(), 1, "{q:?}");
    assert!(
        q[0].starts_with("E1|E1: to_timestamp_seconds(n) failed on this row: ")
            && q[0].ends_with("(n = 9223372036855)"),
        "{q:?}"
    );
}

/// A window in the select list reads every row too: an incremental run
/// refuses it, as it refuses window rules, instead of numbering or counting
/// the new batch alone.
#[wasm_bindgen_test(unsupported = tokio::test)]
async fn incremental_runs_refuse_select_list_windows_too() {
    let mut def = rw29();
    def.silver[0].select = vec![
        "sku".into(),
        "qty".into(),
        "count(*) OVER (PARTITION BY sku) AS n".into(),
    ];
    let mut p = playground(def).await;
    ingest(&mut p, "a.csv", b"sku,qty\nA,1\nA,2\n").await;
    send(
        &mut p,
        Request::SetRunMode {
            mode: medallion_engine::api::RunMode::Incremental,
        },
    )
    .await;
    let v = ingest(&mut p, "b.csv", b"sku,qty\nA,3\n").await;
    assert!(!v.run.ok, "{:?}", v.run);
    assert!(
        v.run.errors.iter().any(|e| e.contains(
            "silver.t select: count(*) OVER (PARTITION BY sku) AS n uses a window or an aggregate"
        )),
        "{:?}",
        v.run.errors
    );
    let v = send(&mut p, Request::Run { full_refresh: true }).await;
    assert!(v.run.ok, "{:?}", v.run);
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &["sku", "qty", "n"]),
        ["A|1|3", "A|2|3", "A|3|3"]
    );
}

// ---- end of rules and rows ----

// ---- integer overflow ----

/// Integer arithmetic never wraps around: a result outside its type is the
/// row's error (quarantined, the reason names the values) or the gold
/// model's error, as Spark's ANSI mode (ARITHMETIC_OVERFLOW) does.
const INT_RANGE: &str = "INT range (-2147483648 to 2147483647)";
const BIGINT_RANGE: &str = "BIGINT range (-9223372036854775808 to 9223372036854775807)";
const TO_BIGINT: &str = "CAST an operand to BIGINT (or DECIMAL(38, 0)) to compute it";
const TO_DECIMAL: &str = "CAST an operand to DECIMAL(38, 0) to compute it";

/// A rule with `action` set.
fn rule_with(
    id: &str,
    kind: &str,
    column: &str,
    expression: &str,
    action: &str,
) -> serde_json::Value {
    let mut r = rule(id, kind, column, expression);
    r["action"] = json!(action);
    r
}

/// Table `t` (id STRING, n BIGINT) with `rules`, gold `gold`, fed `csv`.
async fn bigint_table(
    rules: serde_json::Value,
    gold: &[(&str, &str)],
    csv: &[u8],
) -> (Playground, PipelineView) {
    let mut p = playground(pipeline(&[("id", "STRING"), ("n", "BIGINT")], rules, gold)).await;
    let v = ingest(&mut p, "a.csv", csv).await;
    (p, v)
}

/// The open quarantine rows as `rule_id | reason` (rows a later run closed left out).
async fn open_quarantined(p: &mut Playground) -> Vec<String> {
    let q = rows(p, "silver.quarantine").await;
    grid(&q, &["rule_id", "reason", "closed_in_run"])
        .into_iter()
        .filter_map(|r| r.strip_suffix("|NULL").map(str::to_string))
        .collect()
}

const MAX_AND_ONE: &[u8] = b"id,n\n1,9223372036854775807\n2,1\n";
const MIN_AND_ONE: &[u8] = b"id,n\n1,-9223372036854775808\n2,1\n";

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn overflow_an_int_product_in_an_enrichment_is_quarantined_not_wrapped() {
    // The probe's case: INT 100000 × INT 30000 was stored as -1294967296.
    let mut p = playground(pipeline(
        &[("id", "STRING"), ("qty", "INT"), ("unit_cents", "INT")],
        json!([rule_with(
            "E1",
            "enrich",
            "total_cents",
            "qty * unit_cents",
            "drop"
        )]),
        &[("g", "SELECT sum(total_cents) AS s FROM silver.t")],
    ))
    .await;
    let v = ingest(
        &mut p,
        "a.csv",
        b"id,qty,unit_cents\n1,100000,30000\n2,3,5\n",
    )
    .await;
    assert!(v.run.ok && v.gold[0].error.is_none(), "{:?}", v.run);
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &["id", "total_cents"]),
        ["2|15"]
    );
    assert_eq!(
        quarantined(&mut p).await,
        [format!(
            "E1|E1: qty * unit_cents failed on this row: integer overflow: 100000 * 30000 = 3000000000 is outside the {INT_RANGE}; {TO_BIGINT} (qty = 100000, unit_cents = 30000)"
        )]
    );
    assert_eq!(grid(&rows(&mut p, "gold.g").await, &["s"]), ["15"]);
    let e1 = rule_view(&v, "E1").stat.clone().expect("E1 stat");
    assert_eq!((e1.checked, e1.failed), (2, 1));
    // What the message advises computes the exact value.
    let v = with_rules(
        &mut p,
        json!([rule_with(
            "E1",
            "enrich",
            "total_cents",
            "CAST(qty AS BIGINT) * unit_cents",
            "drop"
        )]),
    )
    .await;
    assert!(v.run.ok, "{:?}", v.run);
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &["id", "total_cents"]),
        ["1|3000000000", "2|15"]
    );
    assert_eq!(grid(&rows(&mut p, "gold.g").await, &["s"]), ["3000000015"]);
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn overflow_bigint_plus_one_at_the_maximum_is_quarantined() {
    // The probe's case: n + 1 at 9223372036854775807 gave -9223372036854775808.
    let (mut p, v) = bigint_table(
        json!([rule_with("E1", "enrich", "next", "n + 1", "drop")]),
        &[],
        MAX_AND_ONE,
    )
    .await;
    assert!(v.run.ok, "{:?}", v.run);
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &["id", "next"]),
        ["2|2"]
    );
    assert_eq!(
        quarantined(&mut p).await,
        [format!(
            "E1|E1: n + 1 failed on this row: integer overflow: 9223372036854775807 + 1 = 9223372036854775808 is outside the {BIGINT_RANGE}; {TO_DECIMAL} (n = 9223372036854775807)"
        )]
    );
    // DECIMAL(38, 0) holds it.
    with_rules(
        &mut p,
        json!([rule_with(
            "E1",
            "enrich",
            "next",
            "CAST(n AS DECIMAL(38, 0)) + 1",
            "drop"
        )]),
    )
    .await;
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &["id", "next"]),
        ["1|9223372036854775808", "2|2"]
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn overflow_subtraction_and_unary_minus_below_the_minimum_are_quarantined() {
    let (mut p, _) = bigint_table(
        json!([
            rule_with("E1", "enrich", "before", "n - 1", "drop"),
            rule_with("E2", "enrich", "negated", "-n", "drop")
        ]),
        &[],
        MIN_AND_ONE,
    )
    .await;
    assert_eq!(
        grid(
            &rows(&mut p, "silver.t").await,
            &["id", "before", "negated"]
        ),
        ["2|0|-1"]
    );
    let q = quarantined(&mut p).await;
    assert_eq!(
        q,
        [format!(
            "E1, E2|E1: n - 1 failed on this row: integer overflow: -9223372036854775808 - 1 = -9223372036854775809 is outside the {BIGINT_RANGE}; {TO_DECIMAL} (n = -9223372036854775808); E2: -n failed on this row: integer overflow: -(-9223372036854775808) = 9223372036854775808 is outside the {BIGINT_RANGE}; CAST the value to DECIMAL(38, 0) first (n = -9223372036854775808)"
        )]
    );
    // INT: -2147483648 - 1 and 2147483647 - (-1).
    let mut p = playground(pipeline(
        &[("id", "STRING"), ("a", "INT"), ("b", "INT")],
        json!([rule_with("E1", "enrich", "d", "a - b", "drop")]),
        &[],
    ))
    .await;
    ingest(
        &mut p,
        "a.csv",
        b"id,a,b\n1,-2147483648,1\n2,2147483647,-1\n3,-2147483647,1\n",
    )
    .await;
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &["id", "d"]),
        ["3|-2147483648"],
        "the minimum itself is in range"
    );
    assert_eq!(
        quarantined(&mut p).await,
        [
            format!("E1|E1: a - b failed on this row: integer overflow: -2147483648 - 1 = -2147483649 is outside the {INT_RANGE}; {TO_BIGINT} (a = -2147483648, b = 1)"),
            format!("E1|E1: a - b failed on this row: integer overflow: 2147483647 - -1 = 2147483648 is outside the {INT_RANGE}; {TO_BIGINT} (a = 2147483647, b = -1)"),
        ]
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn overflow_in_a_filter_an_expectation_and_a_typed_normalization_is_the_rows_problem() {
    let mut p = playground(pipeline(
        &[("id", "STRING"), ("qty", "INT"), ("unit_cents", "INT")],
        json!([]),
        &[],
    ))
    .await;
    ingest(
        &mut p,
        "a.csv",
        b"id,qty,unit_cents\n1,100000,30000\n2,3,5\n3,70000,40000\n4,7,1\n",
    )
    .await;
    // A filter keeps rows where its condition is false: an overflowing row is
    // neither kept nor dropped silently.
    let v = with_rules(
        &mut p,
        json!([rule("F1", "filter", "qty", "qty * unit_cents > 10")]),
    )
    .await;
    assert!(v.run.ok, "{:?}", v.run);
    assert_eq!(col(&rows(&mut p, "silver.t").await, "id"), [Some("4")]);
    let q = quarantined(&mut p).await;
    assert_eq!(q.len(), 3, "{q:?}");
    assert_eq!(
        q[1],
        "F1|F1: qty * unit_cents > 10 (qty = 3, unit_cents = 5)"
    );
    assert_eq!(
        q[2],
        format!("F1|F1: qty * unit_cents > 10 failed on this row: integer overflow: 70000 * 40000 = 2800000000 is outside the {INT_RANGE}; {TO_BIGINT} (qty = 70000, unit_cents = 40000)")
    );
    // An expectation.
    with_rules(
        &mut p,
        json!([rule("X1", "expect", "qty", "qty * unit_cents < 1000")]),
    )
    .await;
    assert_eq!(
        col(&rows(&mut p, "silver.t").await, "id"),
        [Some("2"), Some("4")]
    );
    let q = open_quarantined(&mut p).await;
    assert_eq!(q.len(), 2, "{q:?}");
    assert!(
        q[0].starts_with("X1|X1: qty * unit_cents < 1000 failed on this row: integer overflow: 100000 * 30000 = 3000000000"),
        "{q:?}"
    );
    // A normalization with a declared type.
    let mut n1 = rule("N1", "normalize", "qty", "qty * qty");
    n1["type"] = json!("INT");
    let v = with_rules(&mut p, json!([n1])).await;
    assert!(v.run.ok, "{:?}", v.run);
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &["id", "qty"]),
        ["2|9", "4|49"]
    );
    let q = open_quarantined(&mut p).await;
    assert_eq!(q.len(), 2, "{q:?}");
    assert_eq!(
        q[0],
        format!("N1|N1: qty * qty failed on this row: integer overflow: 100000 * 100000 = 10000000000 is outside the {INT_RANGE}; {TO_BIGINT} (qty = 100000)")
    );
    let n1 = rule_view(&v, "N1").stat.clone().expect("N1 stat");
    assert_eq!((n1.checked, n1.failed), (4, 2));
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn overflow_in_a_subquery_or_window_rule_is_not_a_wrapped_value() {
    // A subquery rule runs as a query: its overflowing row is still set aside alone.
    let (mut p, v) = bigint_table(
        json!([rule(
            "X1",
            "expect",
            "n",
            "n + 1 IN (SELECT column1 FROM (VALUES (2), (3)))"
        )]),
        &[],
        b"id,n\n1,9223372036854775807\n2,1\n3,5\n",
    )
    .await;
    assert!(v.run.ok, "{:?}", v.run);
    assert_eq!(col(&rows(&mut p, "silver.t").await, "id"), [Some("2")]);
    let q = quarantined(&mut p).await;
    assert_eq!(q.len(), 2, "{q:?}");
    assert!(
        q[0].starts_with("X1|X1: n + 1 IN (SELECT column1 FROM (VALUES (2), (3))) failed on this row: integer overflow: 9223372036854775807 + 1 = 9223372036854775808 is outside the BIGINT range"),
        "{q:?}"
    );
    // A window's value depends on the other rows: its overflow is the rule's
    // error (the last good silver stays), never a wrapped running total.
    let v = with_rules(
        &mut p,
        json!([rule("F1", "filter", "n", "sum(n) OVER (ORDER BY id) < 0")]),
    )
    .await;
    let e = rule_view(&v, "F1").error.clone().expect("F1 error");
    assert!(
        e.contains("integer overflow: sum = 9223372036854775808 is outside the BIGINT range")
            && e.contains("sum(CAST(n AS DECIMAL(38, 0)))"),
        "{e}"
    );
    assert_eq!(col(&rows(&mut p, "silver.t").await, "id"), [Some("2")]);
    // Arithmetic inside a window's argument.
    let v = with_rules(
        &mut p,
        json!([rule("F2", "filter", "n", "max(n * 2) OVER () < 0")]),
    )
    .await;
    let e = rule_view(&v, "F2").error.clone().expect("F2 error");
    assert!(
        e.contains("integer overflow: 9223372036854775807 * 2 = 18446744073709551614 is outside the BIGINT range"),
        "{e}"
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn overflow_in_a_select_list_is_quarantined() {
    let mut def = pipeline(&[("id", "STRING"), ("n", "BIGINT")], json!([]), &[]);
    def.silver[0].select = vec!["id".into(), "n * 2 AS doubled".into()];
    let mut p = playground(def).await;
    let v = ingest(&mut p, "a.csv", MAX_AND_ONE).await;
    assert!(v.run.ok, "{:?}", v.run);
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &["id", "doubled"]),
        ["2|2"]
    );
    assert_eq!(
        quarantined(&mut p).await,
        [format!("select|select: n * 2 failed on this row: integer overflow: 9223372036854775807 * 2 = 18446744073709551614 is outside the {BIGINT_RANGE}; {TO_DECIMAL} (n = 9223372036854775807)")]
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn overflow_in_a_lookup_enrichment_is_quarantined() {
    let mut def = pipeline_json(json!({
        "title": "case",
        "bronze": [
            {"name": "prices", "source_system": "case_files", "description": "",
             "schema": {"columns": [{"name": "sku", "type": "STRING"}, {"name": "unit_cents", "type": "INT"}]}},
            {"name": "t", "source_system": "case_files", "description": "",
             "schema": {"columns": [{"name": "sku", "type": "STRING"}, {"name": "qty", "type": "INT"}]}}
        ],
        "silver": [{"name": "t", "source": "t", "description": "", "rules": {"rules": []}}],
        "gold": [],
        "checks": []
    }));
    let mut e1 = rule_with("E1", "enrich", "total_cents", "qty * pr.unit_cents", "drop");
    e1["lookup"] = json!({"table": "bronze.prices", "alias": "pr", "on": "sku = pr.sku"});
    def.silver[0].rules = serde_json::from_value(json!({ "rules": [e1] })).expect("rules");
    let mut p = playground(def).await;
    send(
        &mut p,
        Request::Ingest {
            table: "prices".into(),
            file_name: "prices.csv".into(),
            bytes: b"sku,unit_cents\nA,30000\nB,5\n".to_vec(),
            options: IngestOptions::default(),
        },
    )
    .await;
    let v = ingest(&mut p, "t.csv", b"sku,qty\nA,100000\nB,3\n").await;
    assert!(v.run.ok, "{:?}", v.run);
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &["sku", "total_cents"]),
        ["B|15"]
    );
    let q = quarantined(&mut p).await;
    assert_eq!(q.len(), 1, "{q:?}");
    assert!(
        q[0].starts_with("E1|E1: ")
            && q[0].contains(&format!("qty * pr.unit_cents failed on this row: integer overflow: 100000 * 30000 = 3000000000 is outside the {INT_RANGE}; {TO_BIGINT}")),
        "{q:?}"
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn overflow_in_a_gold_projection_fails_the_model_and_keeps_its_last_good_table() {
    let (mut p, v) = bigint_table(
        json!([]),
        &[("next", "SELECT id, n + 1 AS m FROM silver.t")],
        b"id,n\n1,41\n",
    )
    .await;
    assert!(v.gold[0].error.is_none(), "{:?}", v.gold[0].error);
    assert_eq!(
        grid(&rows(&mut p, "gold.next").await, &["id", "m"]),
        ["1|42"]
    );
    let v = ingest(&mut p, "b.csv", b"id,n\n2,9223372036854775807\n").await;
    let e = v.gold[0].error.clone().expect("gold error");
    assert!(
        e.contains(&format!("integer overflow: 9223372036854775807 + 1 = 9223372036854775808 is outside the {BIGINT_RANGE}; {TO_DECIMAL}")),
        "{e}"
    );
    assert_eq!(
        grid(&rows(&mut p, "gold.next").await, &["id", "m"]),
        ["1|42"],
        "the last good table stays"
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn overflow_a_gold_bigint_sum_fails_instead_of_a_wrapped_negative_total() {
    // The probe's case: sum(n) over 9223372036854775807 and 1 gave -9223372036854775808.
    let (mut p, v) = bigint_table(
        json!([]),
        &[
            ("total", "SELECT sum(n) AS s FROM silver.t"),
            (
                "exact",
                "SELECT sum(CAST(n AS DECIMAL(38, 0))) AS s FROM silver.t",
            ),
            ("mean", "SELECT avg(n) AS a, count(n) AS c FROM silver.t"),
        ],
        MAX_AND_ONE,
    )
    .await;
    let e = v.gold[0].error.clone().expect("gold error");
    assert!(
        e.contains(&format!("integer overflow: sum = 9223372036854775808 is outside the {BIGINT_RANGE}; sum a DECIMAL instead: sum(CAST(n AS DECIMAL(38, 0)))")),
        "{e}"
    );
    assert!(
        v.gold[1].error.is_none() && v.gold[2].error.is_none(),
        "{:?}",
        v.gold
    );
    assert_eq!(
        grid(&rows(&mut p, "gold.exact").await, &["s"]),
        ["9223372036854775808"]
    );
    // avg of integers is a DOUBLE: 2^62, not a wrapped value.
    assert_eq!(
        grid(&rows(&mut p, "gold.mean").await, &["a", "c"]),
        ["4.611686018427388e18|2"]
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn overflow_sums_are_exact_when_the_total_fits_even_if_a_partial_one_does_not() {
    // 9223372036854775807 + 1 - 5 = 9223372036854775803: in range, exactly.
    let (mut p, v) = bigint_table(
        json!([]),
        &[
            ("total", "SELECT sum(n) AS s, sum(DISTINCT n) AS d FROM silver.t"),
            ("grouped", "SELECT id, sum(n) AS s FROM silver.t GROUP BY id ORDER BY id"),
            ("running", "SELECT id, sum(n) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s FROM silver.t ORDER BY id"),
            ("negative", "SELECT sum(-n) AS s FROM silver.t"),
        ],
        b"id,n\n1,9223372036854775807\n2,1\n3,-5\n3,-5\n",
    )
    .await;
    let errors: Vec<Option<&str>> = v.gold.iter().map(|g| g.error.as_deref()).collect();
    assert!(
        errors[0].is_none() && errors[1].is_none() && errors[3].is_none(),
        "{errors:?}"
    );
    assert_eq!(
        grid(&rows(&mut p, "gold.total").await, &["s", "d"]),
        ["9223372036854775798|9223372036854775803"]
    );
    assert_eq!(
        grid(&rows(&mut p, "gold.grouped").await, &["id", "s"]),
        ["1|9223372036854775807", "2|1", "3|-10"]
    );
    // Row 2's frame (rows 1 and 2) is 2^63: the window fails, naming the total.
    let e = errors[2].unwrap_or_default();
    assert!(
        e.contains("integer overflow: sum = 9223372036854775808 is outside the BIGINT range"),
        "{e}"
    );
    assert_eq!(
        grid(&rows(&mut p, "gold.negative").await, &["s"]),
        ["-9223372036854775798"]
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn overflow_constant_arithmetic_in_gold_is_not_folded_to_a_wrapped_value() {
    let (mut p, v) = bigint_table(
        json!([]),
        &[
            ("c", "SELECT 9223372036854775807 + 1 AS x FROM silver.t"),
            (
                "ok",
                "SELECT 9223372036854775806 + 1 AS x, -(-9223372036854775807) AS y FROM silver.t",
            ),
        ],
        b"id,n\n1,1\n",
    )
    .await;
    let e = v.gold[0].error.clone().expect("gold error");
    assert!(
        e.contains("integer overflow: 9223372036854775807 + 1 = 9223372036854775808 is outside the BIGINT range"),
        "{e}"
    );
    assert!(v.gold[1].error.is_none(), "{:?}", v.gold[1].error);
    assert_eq!(
        grid(&rows(&mut p, "gold.ok").await, &["x", "y"]),
        ["9223372036854775807|9223372036854775807"]
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn overflow_in_a_constant_part_of_a_rule_is_the_rules_error_not_every_rows() {
    let mut p = playground(pipeline(
        &[("id", "STRING"), ("n", "BIGINT")],
        json!([]),
        &[],
    ))
    .await;
    ingest(&mut p, "a.csv", b"id,n\n1,3\n2,4\n").await;
    let mut e1 = rule("E1", "enrich", "m", "n + (9223372036854775807 + 1)");
    e1["action"] = json!("drop");
    let v = with_rules(&mut p, json!([e1])).await;
    let error = rule_view(&v, "E1").error.clone().unwrap_or_default();
    assert!(
        error.contains("integer overflow") && error.contains("would fail on every row"),
        "{error}"
    );
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &["id", "n"]),
        ["1|3", "2|4"]
    );
    assert!(quarantined(&mut p).await.is_empty());
}

/// DECIMAL sums are exact too: a total with more digits than the result's
/// precision fails the gold model or the window rule, where DataFusion
/// wraps around 128 bits or keeps a value it shows with digits lost.
#[wasm_bindgen_test(unsupported = tokio::test)]
async fn overflow_a_decimal_sum_past_its_precision_fails_instead_of_losing_digits() {
    let nines = "99999999999999999999999999999999999999";
    let mut p = playground(pipeline(
        &[
            ("id", "STRING"),
            ("a", "DECIMAL(38,0)"),
            ("b", "DECIMAL(38,2)"),
        ],
        json!([]),
        &[
            ("wide", "SELECT sum(a) AS s FROM silver.t"),
            ("digits", "SELECT sum(b) AS s FROM silver.t"),
            ("fits", "SELECT sum(b) AS s FROM silver.t WHERE id = '2'"),
        ],
    ))
    .await;
    let file =
        format!("id,a,b\n1,{nines},999999999999999999999999999999999999.99\n2,{nines},0.01\n");
    let v = ingest(&mut p, "a.csv", file.as_bytes()).await;
    let error = |name: &str| {
        v.gold
            .iter()
            .find(|g| g.model.name == name)
            .and_then(|g| g.error.clone())
            .unwrap_or_default()
    };
    assert!(
        error("wide").contains(
            "decimal overflow: sum(a) has more than 38 digits, the most DECIMAL(38, 0) holds"
        ),
        "{:?}",
        v.gold
    );
    assert!(
        error("digits").contains("decimal overflow: sum(b) = 1000000000000000000000000000000000000.00 has 39 digits, more than the 38 DECIMAL(38, 2) holds"),
        "{:?}",
        v.gold
    );
    assert_eq!(error("fits"), "");
    assert_eq!(grid(&rows(&mut p, "gold.fits").await, &["s"]), ["0.01"]);
    // As a window in a rule: the rule's error (a window's value depends on
    // every row), silver keeps its last good version.
    let v = with_rules(
        &mut p,
        json!([rule("E1", "enrich", "tot", "sum(a) OVER ()")]),
    )
    .await;
    let e = rule_view(&v, "E1").error.clone().unwrap_or_default();
    assert!(
        e.contains("decimal overflow: sum(a) has more than 38 digits"),
        "{e}"
    );
    assert_eq!(rows(&mut p, "silver.t").await.rows.len(), 2);
}

// ---- end of integer overflow ----

// ---- bronze reading: kinds 2, 4, 5, duplicate JSON keys ----

/// The pipeline of `pipeline(columns, [], [])` with its bronze table typed in `mode`.
fn typed_pipeline(mode: &str, columns: &[(&str, &str)]) -> PipelineDef {
    let mut def = pipeline(columns, json!([]), &[]);
    def.bronze[0].mode = serde_json::from_value(json!(mode)).expect("bronze mode");
    def
}

/// Asserts that the batch log entry `b` has the note `note`.
fn assert_note(b: &BatchInfo, note: &str) {
    assert!(
        b.notes.iter().any(|n| n == note),
        "no note {note:?} in {:?}",
        b.notes
    );
}

const RW31_UNTERMINATED: &str = "unterminated quote in field 2 (label): the quote opened on this line is never closed, so the line is kept as it arrived and the next line is read as a new record";

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw31_an_unterminated_quote_costs_its_line_not_the_records_after_it() {
    let columns = [("code", "STRING"), ("label", "STRING"), ("weight", "INT")];
    let mut p = playground(pipeline(&columns, json!([]), &[])).await;
    let v = ingest(&mut p, "rw-31.csv", case!("rw-31-unterminated-quote.csv")).await;
    let b = last_batch(&v);
    assert_eq!((b.records, b.corrupt_records), (4, 1));
    let bronze = rows(&mut p, "bronze.t").await;
    assert_eq!(
        col(&bronze, "raw_payload"),
        [
            Some("A7,\"Bolt, hex\",12"),
            Some("B2,\"Nut, wing,4"),
            Some("C9,\"Washer\",3"),
            Some("D1,\"Pin\",8")
        ]
    );
    assert_eq!(
        col(&bronze, "_source_line"),
        [Some("2"), Some("3"), Some("4"), Some("5")]
    );
    assert_eq!(
        col(&bronze, "_corrupt_reason"),
        [None, Some(RW31_UNTERMINATED), None, None]
    );
    let silver = rows(&mut p, "silver.t").await;
    assert_eq!(
        grid(&silver, &["code", "label", "weight"]),
        ["A7|Bolt, hex|12", "C9|Washer|3", "D1|Pin|8"]
    );
    let q = rows(&mut p, "silver.quarantine").await;
    assert_eq!(
        col(&q, "reason"),
        [Some(format!("parse: {RW31_UNTERMINATED}").as_str())]
    );
    assert_eq!(col(&q, "raw_payload"), [Some("B2,\"Nut, wing,4")]);

    // Typed bronze (PERMISSIVE) splits the file the same way.
    let mut p = playground(typed_pipeline("permissive", &columns)).await;
    ingest(&mut p, "rw-31.csv", case!("rw-31-unterminated-quote.csv")).await;
    let bronze = rows(&mut p, "bronze.t").await;
    assert_eq!(
        grid(&bronze, &["code", "weight", "_corrupt_record"]),
        [
            "A7|12|NULL",
            "NULL|NULL|B2,\"Nut, wing,4",
            "C9|3|NULL",
            "D1|8|NULL"
        ]
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw31_quoted_newlines_in_well_formed_records_still_make_one_record() {
    // Like rw-12 of the first set: a quoted field spanning two lines, 3 records.
    let mut p = playground(pipeline(
        &[("id", "INT"), ("note", "STRING"), ("qty", "INT")],
        json!([]),
        &[],
    ))
    .await;
    let v = ingest(
        &mut p,
        "notes.csv",
        b"id,note,qty\n1,plain,2\n2,\"first line\nsecond, \"\"quoted\"\" line\",5\n3,\"x\",7\n",
    )
    .await;
    assert_eq!(
        (last_batch(&v).records, last_batch(&v).corrupt_records),
        (3, 0)
    );
    let bronze = rows(&mut p, "bronze.t").await;
    assert_eq!(
        col(&bronze, "_source_line"),
        [Some("2"), Some("3"), Some("5")]
    );
    let silver = rows(&mut p, "silver.t").await;
    assert_eq!(
        grid(&silver, &["id", "note", "qty"]),
        [
            "1|plain|2",
            "2|first line\nsecond, \"quoted\" line|5",
            "3|x|7"
        ]
    );
}

const RW35_HINT: &str = "field 2 (title) has text after its closing quote: a quote inside a quoted field must be doubled (\"\"); this one follows a backslash (\\\"): the file seems to escape quotes with a backslash, read it again with escape '\\'";

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw35_backslash_escaped_quotes_are_flagged_then_read_with_escape() {
    let columns = [("id", "INT"), ("title", "STRING"), ("path", "STRING")];
    let mut p = playground(pipeline(&columns, json!([]), &[])).await;
    // Without an escape: row 1 is flagged with a hint, rows 2-3 keep their backslashes.
    let v = ingest(
        &mut p,
        "rw-35.csv",
        case!("rw-35-backslash-escaped-quotes.csv"),
    )
    .await;
    let b = last_batch(&v).clone();
    assert_eq!((b.records, b.corrupt_records), (3, 1));
    assert_note(&b, "1 record has a backslash before a quote inside a quoted field (\\\"): the file seems to escape quotes with a backslash; read it again with escape '\\' (those records are flagged, never read garbled)");
    let bronze = rows(&mut p, "bronze.t").await;
    assert_eq!(
        col(&bronze, "_corrupt_reason"),
        [Some(RW35_HINT), None, None]
    );
    let silver = rows(&mut p, "silver.t").await;
    assert_eq!(
        grid(&silver, &["id", "title", "path"]),
        ["2|Tab \\\\ bar|x", "3|D:\\\\data\\\\|ends with backslash"]
    );
    let q = rows(&mut p, "silver.quarantine").await;
    assert_eq!(
        col(&q, "reason"),
        [Some(format!("parse: {RW35_HINT}").as_str())]
    );

    // Read again with escape '\': 3 clean rows, the dialect says so.
    let v = send(
        &mut p,
        Request::Reingest {
            batch_id: b.batch_id.clone(),
            options: IngestOptions {
                escape: Some('\\'),
                ..Default::default()
            },
            remember: false,
        },
    )
    .await;
    let again = last_batch(&v);
    assert_eq!((again.records, again.corrupt_records), (3, 0));
    let dialect = again.dialect.clone().expect("a CSV dialect");
    assert_eq!(dialect.escape, Some('\\'));
    assert_eq!(
        dialect.describe(),
        "delimiter ',', quote '\"', header line, escape '\\'"
    );
    assert_eq!(again.options.escape, Some('\\'));
    // The new read supersedes the first for silver: no record twice.
    let silver = rows(&mut p, "silver.t").await;
    assert_eq!(
        grid(&silver, &["id", "title", "path"]),
        [
            "1|The \"Quick\" Fox|plain",
            "2|Tab \\ bar|x",
            "3|D:\\data\\|ends with backslash"
        ]
    );
    assert_eq!(rows(&mut p, "bronze.t").await.rows.len(), 6);
    let first = v
        .batches
        .iter()
        .find(|x| x.batch_id == b.batch_id)
        .expect("first batch");
    assert_eq!(
        first.superseded_by.as_deref(),
        Some(again.batch_id.as_str())
    );
    assert_note(first, &format!("read again as batch {} with other options: silver reads that batch instead of this one, which stays in bronze", again.batch_id));
    assert_note(again, &format!("reads the file of batch {} again: silver reads this batch instead of that one (3 records set aside)", b.batch_id));
    assert!(open_quarantined(&mut p).await.is_empty());
    // The superseded read cannot be read again: its records would come back.
    assert_eq!(
        refused(
            &mut p,
            Request::Reingest {
                batch_id: b.batch_id.clone(),
                options: IngestOptions::default(),
                remember: false,
            },
        )
        .await,
        format!(
            "batch {} was read again as batch {}, which silver reads instead: read batch {} again",
            b.batch_id, again.batch_id, again.batch_id
        )
    );

    // Typed bronze reads with the escape too.
    let mut p = playground(typed_pipeline("permissive", &columns)).await;
    ingest_with(
        &mut p,
        "rw-35.csv",
        case!("rw-35-backslash-escaped-quotes.csv"),
        IngestOptions {
            escape: Some('\\'),
            ..Default::default()
        },
    )
    .await;
    let bronze = rows(&mut p, "bronze.t").await;
    assert_eq!(
        grid(&bronze, &["id", "title", "_corrupt_record"]),
        [
            "1|The \"Quick\" Fox|NULL",
            "2|Tab \\ bar|NULL",
            "3|D:\\data\\|NULL"
        ]
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw35_an_unknown_ingest_option_is_refused_with_the_known_names() {
    let known = "expected one of `format`, `delimiter`, `quote`, `escape`, `has_header`, `skip_rows`, `null_tokens`, `decimal_separator`, `encoding`";
    let request = serde_json::from_value::<Request>(json!({
        "type": "ingest",
        "table": "t",
        "file_name": "rw-35.csv",
        "bytes": [49],
        "options": {"escpae": "\\"}
    }));
    let message = request.expect_err("an unknown option").to_string();
    assert!(
        message.starts_with(&format!("unknown field `escpae`, {known}")),
        "{message}"
    );
    // The same JSON with the right name is an ingest with escape '\'.
    let request = serde_json::from_value::<Request>(json!({
        "type": "ingest",
        "table": "t",
        "file_name": "rw-35.csv",
        "bytes": [49],
        "options": {"escape": "\\"}
    }))
    .expect("a known option");
    match request {
        Request::Ingest { options, .. } => assert_eq!(options.escape, Some('\\')),
        other => panic!("unexpected {other:?}"),
    }
    // A pipeline's ingest_options are checked the same way.
    let mut def = serde_json::to_value(pipeline(&[("id", "INT")], json!([]), &[])).unwrap();
    def["bronze"][0]["ingest_options"] = json!({"delimeter": ";"});
    let message = serde_json::from_value::<PipelineDef>(def)
        .expect_err("an unknown option")
        .to_string();
    assert!(
        message.starts_with(&format!("unknown field `delimeter`, {known}")),
        "{message}"
    );
}

const RW37_COLUMNS: &[(&str, &str)] = &[
    ("id", "INT"),
    ("qty", "INT"),
    ("qty_2", "INT"),
    ("Qty_3", "INT"),
    ("_c4", "STRING"),
    ("note", "STRING"),
];

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw37_duplicate_and_empty_header_names_lose_no_column() {
    let mut p = playground(pipeline(RW37_COLUMNS, json!([]), &[])).await;
    let v = ingest(
        &mut p,
        "rw-37.csv",
        case!("rw-37-duplicate-header-names.csv"),
    )
    .await;
    let b = last_batch(&v);
    assert_eq!(b.header, ["id", "qty", "qty_2", "Qty_3", "_c4", "note"]);
    assert_eq!(b.header_text.as_deref(), Some("id, qty ,qty,Qty,,note"));
    let renames: Vec<(usize, &str, &str)> = b
        .header_renames
        .iter()
        .map(|r| (r.position, r.original.as_str(), r.name.as_str()))
        .collect();
    assert_eq!(
        renames,
        [
            (1, " qty ", "qty"),
            (2, "qty", "qty_2"),
            (3, "Qty", "Qty_3"),
            (4, "", "_c4")
        ]
    );
    assert_note(
        b,
        "header names read as: \" qty \" → qty, \"qty\" → qty_2, \"Qty\" → Qty_3, \"\" → _c4 (names are trimmed; an empty name becomes _c<position> and a repeated one <name>_<n>, never a name the header has)",
    );
    let bronze = rows(&mut p, "bronze.t").await;
    assert_eq!(
        col(&bronze, "raw_payload"),
        [Some("1,5,6,7,x,hello"), Some("2,8,9,10,y,world")]
    );
    let names: Vec<&str> = RW37_COLUMNS.iter().map(|(n, _)| *n).collect();
    let silver = rows(&mut p, "silver.t").await;
    assert_eq!(
        grid(&silver, &names),
        ["1|5|6|7|x|hello", "2|8|9|10|y|world"]
    );

    // Typed bronze stores every column under its mapped name.
    let mut p = playground(typed_pipeline("permissive", RW37_COLUMNS)).await;
    let v = ingest(
        &mut p,
        "rw-37.csv",
        case!("rw-37-duplicate-header-names.csv"),
    )
    .await;
    assert!(
        !last_batch(&v)
            .notes
            .iter()
            .any(|n| n.starts_with("not stored")),
        "{:?}",
        last_batch(&v).notes
    );
    let bronze = rows(&mut p, "bronze.t").await;
    assert_eq!(
        grid(&bronze, &names),
        ["1|5|6|7|x|hello", "2|8|9|10|y|world"]
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw37_a_declared_name_matching_two_keys_ignoring_case_is_an_error_naming_both() {
    let file = b"{\"id\":1,\"Qty\":1,\"qty\":2}\n{\"id\":2,\"QTY\":3}\n";
    let mut p = playground(pipeline(&[("id", "INT"), ("QTY", "INT")], json!([]), &[])).await;
    ingest(&mut p, "qty.jsonl", file).await;
    let silver = rows(&mut p, "silver.t").await;
    assert_eq!(grid(&silver, &["id", "QTY"]), ["2|3"]);
    let q = rows(&mut p, "silver.quarantine").await;
    assert_eq!(
        col(&q, "reason"),
        [Some("parse: declared column QTY matches 2 source names ignoring case: \"Qty\" and \"qty\"; declare it with the exact name of one of them")]
    );
    // The exact name still wins.
    let mut p = playground(pipeline(&[("id", "INT"), ("qty", "INT")], json!([]), &[])).await;
    ingest(&mut p, "qty.jsonl", file).await;
    let silver = rows(&mut p, "silver.t").await;
    assert_eq!(grid(&silver, &["id", "qty"]), ["1|2", "2|3"]);
    // Typed bronze flags the record the same way, and nested paths too.
    let mut p = playground(typed_pipeline(
        "permissive",
        &[("id", "INT"), ("QTY", "INT")],
    ))
    .await;
    ingest(&mut p, "qty.jsonl", file).await;
    let bronze = rows(&mut p, "bronze.t").await;
    assert_eq!(
        col(&bronze, "_corrupt_reason"),
        [
            Some("declared column QTY matches 2 source names ignoring case: \"Qty\" and \"qty\"; declare it with the exact name of one of them"),
            None
        ]
    );
    let mut def = pipeline(&[("id", "INT"), ("price", "INT")], json!([]), &[]);
    def.bronze[0].schema.columns[1].path = Some("after.PRICE".into());
    let mut p = playground(def).await;
    ingest(
        &mut p,
        "cdc.jsonl",
        b"{\"id\":1,\"after\":{\"Price\":1,\"price\":2}}\n{\"id\":2,\"after\":{\"price\":5}}\n",
    )
    .await;
    let silver = rows(&mut p, "silver.t").await;
    assert_eq!(grid(&silver, &["id", "price"]), ["2|5"]);
    let q = rows(&mut p, "silver.quarantine").await;
    assert_eq!(
        col(&q, "reason"),
        [Some("parse: declared column price matches 2 source names ignoring case: \"Price\" and \"price\"; declare it with the exact name of one of them")]
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw41_duplicate_json_keys_are_warned_and_the_last_value_is_read() {
    let mut p = playground(pipeline(
        &[("id", "INT"), ("status", "STRING")],
        json!([]),
        &[],
    ))
    .await;
    let v = ingest(
        &mut p,
        "rw-41.jsonl",
        case!("rw-41-duplicate-json-keys.jsonl"),
    )
    .await;
    let b = last_batch(&v);
    assert_eq!((b.records, b.corrupt_records, b.warned_records), (2, 0, 1));
    assert_note(b, "1 record has a warning in _warning (a JSON object with a duplicate key: silver reads the last value); not quarantined");
    let bronze = rows(&mut p, "bronze.t").await;
    assert_eq!(
        col(&bronze, "raw_payload"),
        [
            Some("{\"id\":1,\"status\":\"new\",\"status\":\"paid\"}"),
            Some("{\"id\":2,\"status\":\"new\"}")
        ]
    );
    assert_eq!(
        col(&bronze, "_warning"),
        [
            Some("duplicate key \"status\": the last value is read, as most JSON readers do"),
            None
        ]
    );
    assert_eq!(col(&bronze, "_corrupt_reason"), [None, None]);
    let silver = rows(&mut p, "silver.t").await;
    assert_eq!(grid(&silver, &["id", "status"]), ["1|paid", "2|new"]);
    assert_eq!(rows(&mut p, "silver.quarantine").await.row_count, 0);
    // Nested objects count too.
    let v = ingest(
        &mut p,
        "nested.jsonl",
        b"{\"id\":3,\"status\":\"new\",\"customer\":{\"name\":\"A\",\"name\":\"B\"}}\n",
    )
    .await;
    assert_eq!(last_batch(&v).warned_records, 1);
    let bronze = rows(&mut p, "bronze.t").await;
    assert_eq!(
        col(&bronze, "_warning")[2],
        Some("duplicate key \"customer.name\": the last value is read, as most JSON readers do")
    );
}

// Second round (probe of issue 9): the header line with a quote fault, JSON
// records after a bad one, generated header names, names equal ignoring case
// beyond ASCII, and JSON numbers read with their exact text.

/// One file ingested alone into `pipeline(columns)`: bronze rows as
/// `_source_line|raw_payload|_corrupt_reason`, silver rows (the declared
/// columns, `|`-joined) and the batch log entry.
async fn bronze_and_silver(
    columns: &[(&str, &str)],
    file: &[u8],
) -> (Vec<String>, Vec<String>, BatchInfo) {
    let mut p = playground(pipeline(columns, json!([]), &[])).await;
    let v = ingest(&mut p, "f", file).await;
    let bronze = rows(&mut p, "bronze.t").await;
    let names: Vec<&str> = columns.iter().map(|(n, _)| *n).collect();
    let silver = grid(&rows(&mut p, "silver.t").await, &names);
    (
        grid(&bronze, &["_source_line", "raw_payload", "_corrupt_reason"]),
        silver,
        last_batch(&v).clone(),
    )
}

const CODE_LABEL_W: [(&str, &str); 3] = [("code", "STRING"), ("label", "STRING"), ("w", "INT")];

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn an_unterminated_quote_in_the_header_line_keeps_it_the_header_and_loses_no_record() {
    let file = b"code,\"label,w\nA7,Bolt,12\nB2,Nut,4\n";
    let (bronze, silver, b) = bronze_and_silver(&CODE_LABEL_W, file).await;
    assert!(b.skipped_lines.is_empty(), "{:?}", b.skipped_lines);
    assert_eq!(b.header, ["code", "label", "w"]);
    assert_eq!(b.header_text.as_deref(), Some("code,\"label,w"));
    assert_eq!(bronze, ["2|A7,Bolt,12|NULL", "3|B2,Nut,4|NULL"]);
    assert_eq!(silver, ["A7|Bolt|12", "B2|Nut|4"]);
    let renames: Vec<(usize, &str, &str)> = b
        .header_renames
        .iter()
        .map(|r| (r.position, r.original.as_str(), r.name.as_str()))
        .collect();
    assert_eq!(renames, [(1, "\"label", "label")]);
    assert_note(&b, "the header line has an unterminated quote in field 2 (\"label): the quote is never closed, so the header is this line alone, read without that quote and split at every ',' after it: 3 names (code, label, w)");
    // Typed bronze reads the same header.
    let mut p = playground(typed_pipeline("permissive", &CODE_LABEL_W)).await;
    ingest(&mut p, "f.csv", file).await;
    let bronze = rows(&mut p, "bronze.t").await;
    assert_eq!(
        grid(&bronze, &["code", "label", "w", "_corrupt_record"]),
        ["A7|Bolt|12|NULL", "B2|Nut|4|NULL"]
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn unterminated_quotes_in_data_lines_and_banners_still_cost_only_their_line() {
    let cases: &[(&[u8], &[&str], &[&str])] = &[
        (
            b"code,label,w\n\"A7,Bolt,12\nB2,Nut,4\nC9,Washer,3\n",
            &["2", "3", "4"],
            &["B2|Nut|4", "C9|Washer|3"],
        ),
        (
            b"code;label;w\nA7;\"Bolt;12\nB2;Nut;4\nC9;\"Washer\";3\nD1;Pin;8\n",
            &["2", "3", "4", "5"],
            &["B2|Nut|4", "C9|Washer|3", "D1|Pin|8"],
        ),
        (
            b"code,label,w\rA7,\"Bolt,12\rB2,Nut,4\rC9,Washer,3\r",
            &["2", "3", "4"],
            &["B2|Nut|4", "C9|Washer|3"],
        ),
        (
            b"\"Inventory report, Q3\ncode,label,w\nA7,Bolt,12\nB2,\"Nut\",4\nC9,Washer,3\n",
            &["3", "4", "5"],
            &["A7|Bolt|12", "B2|Nut|4", "C9|Washer|3"],
        ),
        (
            b"code,\"label,w\r\nA7,\"Bolt,12\r\nB2,Nut,4\r\n",
            &["2", "3"],
            &["B2|Nut|4"],
        ),
    ];
    for (file, want_lines, want_silver) in cases {
        let (bronze, silver, _) = bronze_and_silver(&CODE_LABEL_W, file).await;
        let lines: Vec<&str> = bronze
            .iter()
            .map(|r| r.split('|').next().unwrap_or_default())
            .collect();
        assert_eq!(lines, *want_lines, "{}", String::from_utf8_lossy(file));
        assert_eq!(silver, *want_silver, "{}", String::from_utf8_lossy(file));
    }
}

const ID_S: [(&str, &str); 2] = [("id", "INT"), ("s", "STRING")];

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_malformed_indented_json_object_costs_only_itself() {
    let flat = b"{\n  \"id\": 1,\n  \"s\": \"abc\n}\n{\n  \"id\": 2,\n  \"s\": \"x\"\n}\n{\n  \"id\": 3,\n  \"s\": \"y\"\n}\n";
    let indented = b"  {\n    \"id\": 1,\n    \"s\": \"abc\n  }\n  {\n    \"id\": 2,\n    \"s\": \"x\"\n  }\n  {\n    \"id\": 3,\n    \"s\": \"y\"\n  }\n";
    for (file, reason) in [
        (&flat[..], "invalid JSON at byte 24 (line 3, column 12): control character (\\u0000-\\u001F) found while parsing a string"),
        (&indented[..], "invalid JSON at byte 30 (line 3, column 14): control character (\\u0000-\\u001F) found while parsing a string"),
    ] {
        let (bronze, silver, b) = bronze_and_silver(&ID_S, file).await;
        assert_eq!((b.records, b.corrupt_records), (3, 1));
        assert_eq!(silver, ["2|x", "3|y"]);
        let lines: Vec<&str> = bronze
            .iter()
            .map(|r| r.split('|').next().unwrap_or_default())
            .collect();
        assert_eq!(lines, ["1", "5", "9"]);
        assert!(bronze[0].ends_with(reason), "{bronze:?}");
    }
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_bad_element_of_a_json_array_costs_only_itself() {
    // Pretty-printed, and on one line.
    let pretty = b"[\n  {\n    \"id\": 1,\n    \"s\": \"abc\n  },\n  {\n    \"id\": 2,\n    \"s\": \"x\"\n  },\n  {\"id\": 3, \"s\": \"y\"}\n]\n";
    let (bronze, silver, b) = bronze_and_silver(&ID_S, pretty).await;
    assert_eq!((b.records, b.corrupt_records), (3, 1));
    assert_eq!(silver, ["2|x", "3|y"]);
    assert_eq!(
        bronze,
        [
            "2|{\n    \"id\": 1,\n    \"s\": \"abc\n  }|invalid JSON at byte 32 (line 4, column 14): control character (\\u0000-\\u001F) found while parsing a string",
            "6|{\n    \"id\": 2,\n    \"s\": \"x\"\n  }|NULL",
            "10|{\"id\": 3, \"s\": \"y\"}|NULL"
        ]
    );
    let one_line = b"[{\"id\":1,\"s\":\"abc},{\"id\":2,\"s\":\"x\"},{\"id\":3,\"s\":\"y\"}]";
    let (bronze, silver, _) = bronze_and_silver(&ID_S, one_line).await;
    assert_eq!(silver, ["2|x", "3|y"]);
    assert_eq!(
        bronze,
        [
            "1|{\"id\":1,\"s\":\"abc}|invalid JSON at byte 17 (line 1, column 17): EOF while parsing a string",
            "1|{\"id\":2,\"s\":\"x\"}|NULL",
            "1|{\"id\":3,\"s\":\"y\"}|NULL"
        ]
    );
    // An array cut short keeps the elements before the cut, and says so.
    let (bronze, silver, b) =
        bronze_and_silver(&ID_S, b"[{\"id\":1,\"s\":\"a\"},\n{\"id\":2,").await;
    assert_eq!(silver, ["1|a"]);
    assert_eq!(bronze.len(), 2);
    assert_note(&b, "the JSON array is never closed (no ']' at its end): the file may be cut short; the 2 element(s) before its end are records");
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_generated_header_name_never_takes_a_name_the_file_has() {
    let columns = [
        ("id", "INT"),
        ("qty", "INT"),
        ("qty_2", "INT"),
        ("qty_3", "INT"),
    ];
    let (_, silver, b) = bronze_and_silver(&columns, b"id,qty,qty,qty_2\n1,5,6,7\n").await;
    assert_eq!(b.header, ["id", "qty", "qty_3", "qty_2"]);
    assert_eq!(silver, ["1|5|7|6"]);
    assert_note(&b, "header names read as: \"qty\" → qty_3 (names are trimmed; an empty name becomes _c<position> and a repeated one <name>_<n>, never a name the header has)");
    let columns = [("a", "INT"), ("_c1", "INT"), ("_c1_2", "INT")];
    let (_, silver, b) = bronze_and_silver(&columns, b"a,,_c1\n1,2,3\n").await;
    assert_eq!(b.header, ["a", "_c1_2", "_c1"]);
    assert_eq!(silver, ["1|3|2"]);
    // Typed bronze stores them under the same names.
    let mut p = playground(typed_pipeline("permissive", &columns)).await;
    ingest(&mut p, "f.csv", b"a,,_c1\n1,2,3\n").await;
    let bronze = rows(&mut p, "bronze.t").await;
    assert_eq!(grid(&bronze, &["a", "_c1", "_c1_2"]), ["1|3|2"]);
}

const EMISSION_BOTH: &str =
    "declared column ÉMISSION matches 2 source names ignoring case: \"Émission\" and \"émission\"";

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_declared_name_matching_two_names_ignoring_case_in_any_script_is_an_error() {
    let columns = [("id", "INT"), ("ÉMISSION", "INT")];
    for (file, bytes) in [
        ("a.csv", "id,Émission,émission\n1,5,6\n".as_bytes()),
        (
            "a.jsonl",
            "{\"id\":1,\"Émission\":5,\"émission\":6}\n".as_bytes(),
        ),
    ] {
        let mut p = playground(pipeline(&columns, json!([]), &[])).await;
        ingest(&mut p, file, bytes).await;
        assert!(rows(&mut p, "silver.t").await.rows.is_empty(), "{file}");
        let q = quarantined(&mut p).await;
        assert_eq!(q.len(), 1, "{file}: {q:?}");
        assert!(q[0].contains(EMISSION_BOTH), "{file}: {q:?}");
    }
    // The CSV's columns read by their mapped names (declared names equal
    // ignoring case are refused: both would read one column).
    let mut p = playground(pipeline(
        &[("id", "INT"), ("Émission", "INT"), ("émission_2", "INT")],
        json!([]),
        &[],
    ))
    .await;
    let v = ingest(&mut p, "a.csv", "id,Émission,émission\n1,5,6\n".as_bytes()).await;
    assert_eq!(last_batch(&v).header, ["id", "Émission", "émission_2"]);
    assert_eq!(
        grid(
            &rows(&mut p, "silver.t").await,
            &["id", "Émission", "émission_2"]
        ),
        ["1|5|6"]
    );
    // A JSON path, and Parquet columns.
    let mut def = pipeline(&[("id", "INT"), ("e", "INT")], json!([]), &[]);
    def.bronze[0].schema.columns[1].path = Some("after.ÉMISSION".into());
    let mut p = playground(def).await;
    ingest(
        &mut p,
        "cdc.jsonl",
        "{\"id\":1,\"after\":{\"Émission\":5,\"émission\":6}}\n".as_bytes(),
    )
    .await;
    let q = quarantined(&mut p).await;
    assert!(
        q.len() == 1 && q[0].contains("\"Émission\" and \"émission\""),
        "{q:?}"
    );
    use datafusion::arrow::array::{ArrayRef, Int32Array};
    let batch = datafusion::arrow::record_batch::RecordBatch::try_from_iter(vec![
        ("id", Arc::new(Int32Array::from(vec![1])) as ArrayRef),
        ("Émission", Arc::new(Int32Array::from(vec![5])) as ArrayRef),
        ("émission", Arc::new(Int32Array::from(vec![6])) as ArrayRef),
    ])
    .expect("a batch");
    let parquet =
        medallion_engine::lake::encode_parquet(batch.schema(), &[batch]).expect("parquet");
    let mut p = playground(pipeline(&columns, json!([]), &[])).await;
    ingest(&mut p, "a.parquet", &parquet).await;
    let q = quarantined(&mut p).await;
    assert!(q.len() == 1 && q[0].contains(EMISSION_BOTH), "{q:?}");
}

/// The message of a pipeline `load_pipeline` refuses.
async fn load_refused(def: PipelineDef) -> String {
    support::yield_to_browser().await;
    let mut p = Playground::with_env(
        Arc::new(FixedClock::new(1_700_000_000_000_000)),
        Arc::new(SequentialIds::default()),
    )
    .expect("playground");
    p.load_pipeline(def)
        .await
        .expect_err("the pipeline is refused")
        .to_string()
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_declared_column_with_a_reserved_name_is_refused_naming_it() {
    // Every bronze column, typed bronze's _corrupt_record and silver's _arrival.
    let mut reserved: Vec<String> = medallion_engine::bronze::bronze_schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    reserved.extend(["_corrupt_record".to_string(), "_arrival".to_string()]);
    assert_eq!(
        reserved.len(),
        medallion_engine::bronze::RESERVED_COLUMNS.len()
    );
    for name in &reserved {
        for mode in ["raw", "permissive"] {
            let msg = load_refused(typed_pipeline(mode, &[("id", "INT"), (name, "STRING")])).await;
            assert!(
                msg.starts_with(&format!(
                    "bronze.t: column {name}: the name is reserved: {name} is "
                )),
                "{mode}: {msg}"
            );
        }
    }
    assert_eq!(
        load_refused(pipeline(&[("id", "INT"), ("_batch_id", "STRING")], json!([]), &[])).await,
        "bronze.t: column _batch_id: the name is reserved: _batch_id is bronze's id of the batch, so a declared column of that name would replace it or be replaced by it. A file's column named _batch_id is read as _batch_id_2 (CSV header, Parquet column; the batch log's header renames give the name): declare that; a JSON key _batch_id is read by a column with another name and \"path\": \"_batch_id\""
    );
    // Ignoring case.
    let msg = load_refused(pipeline(
        &[("id", "INT"), ("_Source_File", "STRING")],
        json!([]),
        &[],
    ))
    .await;
    assert!(
        msg.starts_with("bronze.t: column _Source_File: the name is reserved (equal to _source_file ignoring case): _source_file is bronze's name of the file a record came from"),
        "{msg}"
    );
}

const AUDIT_LIKE_FILE: &[u8] = b"id,_batch_id,_Source_File,raw_payload\n1,FAKE,FAKE.csv,text\n";

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_file_column_named_like_an_audit_column_is_read_under_another_name_and_lineage_stays() {
    let columns = [
        ("id", "INT"),
        ("_batch_id_2", "STRING"),
        ("_source_file_2", "STRING"),
        ("raw_payload_2", "STRING"),
    ];
    for mode in ["raw", "permissive"] {
        let mut p = playground(typed_pipeline(mode, &columns)).await;
        let v = ingest(&mut p, "real.csv", AUDIT_LIKE_FILE).await;
        let b = last_batch(&v);
        assert_eq!(
            b.header,
            ["id", "_batch_id_2", "_Source_File_2", "raw_payload_2"],
            "{mode}"
        );
        assert_eq!(b.header_renames.len(), 3, "{mode}");
        assert_note(b, "header names read as: \"_batch_id\" → _batch_id_2 (_batch_id is bronze's id of the batch; declare _batch_id_2 to read the file's column), \"_Source_File\" → _Source_File_2 (_source_file is bronze's name of the file a record came from; declare _Source_File_2 to read the file's column), \"raw_payload\" → raw_payload_2 (raw_payload is bronze's copy of the record's text; declare raw_payload_2 to read the file's column) (names are trimmed; an empty name becomes _c<position> and a repeated one <name>_<n>, never a name the header has)");
        let batch_id = b.batch_id.clone();
        // The file's values reach silver; the lineage is the real one.
        let silver = rows(&mut p, "silver.t").await;
        let names: Vec<&str> = silver.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names.iter().filter(|n| **n == "_batch_id").count(),
            1,
            "{mode}: {names:?}"
        );
        assert_eq!(
            grid(
                &silver,
                &[
                    "id",
                    "_batch_id_2",
                    "_source_file_2",
                    "raw_payload_2",
                    "_batch_id"
                ]
            ),
            [format!("1|FAKE|FAKE.csv|text|{batch_id}")],
            "{mode}"
        );
        // Bronze's own audit columns too (typed bronze stores the file's columns beside them).
        let bronze = rows(&mut p, "bronze.t").await;
        assert_eq!(col(&bronze, "_source_file"), [Some("real.csv")], "{mode}");
        assert_eq!(
            col(&bronze, "_batch_id"),
            [Some(batch_id.as_str())],
            "{mode}"
        );
    }
    // JSON: the key is read with a path; Parquet: the column is mapped as in CSV.
    let mut def = pipeline(&[("id", "INT"), ("src", "STRING")], json!([]), &[]);
    def.bronze[0].schema.columns[1].path = Some("_source_file".into());
    let mut p = playground(def).await;
    ingest(
        &mut p,
        "real.jsonl",
        b"{\"id\":1,\"_source_file\":\"FAKE.csv\"}\n",
    )
    .await;
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &["id", "src"]),
        ["1|FAKE.csv"]
    );
    assert_eq!(
        col(&rows(&mut p, "bronze.t").await, "_source_file"),
        [Some("real.jsonl")]
    );
    use datafusion::arrow::array::{ArrayRef, Int32Array, StringArray};
    let batch = datafusion::arrow::record_batch::RecordBatch::try_from_iter(vec![
        ("id", Arc::new(Int32Array::from(vec![1])) as ArrayRef),
        (
            "_source_file",
            Arc::new(StringArray::from(vec!["FAKE.csv"])) as ArrayRef,
        ),
    ])
    .expect("a batch");
    let parquet =
        medallion_engine::lake::encode_parquet(batch.schema(), &[batch]).expect("parquet");
    let mut p = playground(pipeline(
        &[("id", "INT"), ("_source_file_2", "STRING")],
        json!([]),
        &[],
    ))
    .await;
    let v = ingest(&mut p, "real.parquet", &parquet).await;
    assert_eq!(last_batch(&v).header, ["id", "_source_file_2"]);
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &["id", "_source_file_2"]),
        ["1|FAKE.csv"]
    );
    assert_eq!(
        col(&rows(&mut p, "bronze.t").await, "_source_file"),
        [Some("real.parquet")]
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn invisible_characters_in_header_names_are_removed_and_logged() {
    let columns = [("id", "INT"), ("qty", "INT"), ("note", "STRING")];
    let file = "id,q\u{200b}ty,\u{feff}no\u{2060}te\n1,5,x\n";
    for mode in ["raw", "permissive"] {
        let mut p = playground(typed_pipeline(mode, &columns)).await;
        let v = ingest(&mut p, "f.csv", file.as_bytes()).await;
        let b = last_batch(&v);
        assert_eq!(b.header, ["id", "qty", "note"], "{mode}");
        let renames: Vec<(usize, &str, &str)> = b
            .header_renames
            .iter()
            .map(|r| (r.position, r.original.as_str(), r.name.as_str()))
            .collect();
        assert_eq!(
            renames,
            [
                (1, "q\u{200b}ty", "qty"),
                (2, "\u{feff}no\u{2060}te", "note")
            ]
        );
        assert_note(b, "header names read as: \"q\\u{200b}ty\" → qty (invisible character U+200B removed), \"\\u{feff}no\\u{2060}te\" → note (invisible characters U+FEFF, U+2060 removed) (names are trimmed; an empty name becomes _c<position> and a repeated one <name>_<n>, never a name the header has)");
        assert_eq!(
            grid(&rows(&mut p, "silver.t").await, &["id", "qty", "note"]),
            ["1|5|x"],
            "{mode}"
        );
    }
    // ZERO WIDTH (NON-)JOINER, a BOM before a later name, and Parquet column names.
    let (_, silver, b) = bronze_and_silver(
        &columns,
        "id,\u{200c}qty\u{200d},\u{feff}note\n1,5,x\n".as_bytes(),
    )
    .await;
    assert_eq!(b.header, ["id", "qty", "note"]);
    assert_eq!(silver, ["1|5|x"]);
    use datafusion::arrow::array::{ArrayRef, Int32Array};
    let batch = datafusion::arrow::record_batch::RecordBatch::try_from_iter(vec![
        ("id", Arc::new(Int32Array::from(vec![1])) as ArrayRef),
        (
            "q\u{200b}ty",
            Arc::new(Int32Array::from(vec![5])) as ArrayRef,
        ),
    ])
    .expect("a batch");
    let parquet =
        medallion_engine::lake::encode_parquet(batch.schema(), &[batch]).expect("parquet");
    let (_, silver, b) = bronze_and_silver(&[("id", "INT"), ("qty", "INT")], &parquet).await;
    assert_eq!(silver, ["1|5"]);
    assert_note(&b, "Parquet column names read as: \"q\\u{200b}ty\" (column 2) → qty (invisible character U+200B removed) (a repeated name gets _<n>, an empty one _c<position>, never a name the file has)");
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_declared_column_the_file_lacks_is_noted_naming_a_close_name() {
    let columns = [("id", "INT"), ("qty", "INT")];
    let close =
        "qty (the file has \"q ty\": the same name but for spaces, invisible characters or case)";
    let close_json = "qty (the file has \"q\\u{200b}ty\": the same name but for spaces, invisible characters or case)";
    for (mode, read) in [
        ("raw", "silver reads them as NULL"),
        ("permissive", "stored as NULL"),
    ] {
        for (file, bytes, named) in [
            ("a.csv", "id,q ty\n1,5\n", close),
            ("b.jsonl", "{\"id\":1,\"q\u{200b}ty\":5}\n", close_json),
            ("c.csv", "id,other\n1,5\n", "qty"),
            ("d.jsonl", "{\"id\":1}\n{\"id\":2,\"other\":3}\n", "qty"),
        ] {
            let mut p = playground(typed_pipeline(mode, &columns)).await;
            let v = ingest(&mut p, file, bytes.as_bytes()).await;
            assert_note(
                last_batch(&v),
                &format!("declared columns absent from this file ({read}): {named}"),
            );
            let silver = grid(&rows(&mut p, "silver.t").await, &["id", "qty"]);
            assert_eq!(silver[0], "1|NULL", "{mode} {file}");
        }
    }
    // A column some records have is not absent; a file that has every column gets no note.
    for bytes in ["{\"id\":1}\n{\"id\":2,\"qty\":3}\n", "id,qty\n1,2\n"] {
        let mut p = playground(pipeline(&columns, json!([]), &[])).await;
        let v = ingest(&mut p, "f", bytes.as_bytes()).await;
        assert!(
            last_batch(&v)
                .notes
                .iter()
                .all(|n| !n.starts_with("declared columns absent")),
            "{:?}",
            last_batch(&v).notes
        );
    }
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn declared_columns_equal_ignoring_case_are_refused_naming_both() {
    assert_eq!(
        load_refused(pipeline(&[("id", "INT"), ("qty", "INT"), ("QTY", "INT")], json!([]), &[])).await,
        "bronze.t: columns qty and QTY are equal ignoring case (names bind the file's columns ignoring case, as Spark does), so both would read the same column; name them apart (a file's names equal ignoring case are read as <name>_2, <name>_3 in CSV and Parquet; a JSON key is read by a column with another name and a \"path\")"
    );
    for mode in ["raw", "permissive"] {
        let msg = load_refused(typed_pipeline(
            mode,
            &[("Émission", "INT"), ("id", "INT"), ("ÉMISSION", "INT")],
        ))
        .await;
        assert!(
            msg.starts_with("bronze.t: columns Émission and ÉMISSION are equal ignoring case"),
            "{msg}"
        );
    }
    // Two JSON keys equal ignoring case are read apart by paths.
    let mut def = pipeline(
        &[("id", "INT"), ("lower", "INT"), ("upper", "INT")],
        json!([]),
        &[],
    );
    def.bronze[0].schema.columns[1].path = Some("qty".into());
    def.bronze[0].schema.columns[2].path = Some("QTY".into());
    let mut p = playground(def).await;
    ingest(&mut p, "f.jsonl", b"{\"id\":1,\"qty\":5,\"QTY\":6}\n").await;
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &["id", "lower", "upper"]),
        ["1|5|6"]
    );
}

const EXACT_COLUMNS: [(&str, &str); 4] = [
    ("id", "BIGINT"),
    ("amount", "DECIMAL(38,2)"),
    ("big", "BIGINT"),
    ("lines", "STRING"),
];

const EXACT_SILVER: &str =
    "1|12345678901234567890.10|9007199254740993|[{\"sku\": \"a\", \"qty\": 2.00}]";

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn json_numbers_and_nested_values_keep_their_exact_text() {
    let names: Vec<&str> = EXACT_COLUMNS.iter().map(|(n, _)| *n).collect();
    let file = b"{\"id\": 1, \"amount\": 12345678901234567890.10, \"big\": 9007199254740993, \"lines\": [{\"sku\": \"a\", \"qty\": 2.00}]}\n";
    let (_, silver, _) = bronze_and_silver(&EXACT_COLUMNS, file).await;
    assert_eq!(silver, [EXACT_SILVER]);
    // Typed bronze stores the same values.
    let mut p = playground(typed_pipeline("permissive", &EXACT_COLUMNS)).await;
    ingest(&mut p, "f.jsonl", file).await;
    assert_eq!(
        grid(&rows(&mut p, "bronze.t").await, &names),
        [EXACT_SILVER]
    );
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &names),
        [EXACT_SILVER]
    );
    // A JSON path reads the nested number as written.
    let mut def = pipeline(
        &[("id", "BIGINT"), ("price", "DECIMAL(38,20)")],
        json!([]),
        &[],
    );
    def.bronze[0].schema.columns[1].path = Some("after.price".into());
    let mut p = playground(def).await;
    ingest(
        &mut p,
        "cdc.jsonl",
        b"{\"id\": 1, \"after\": {\"price\": 0.10000000000000000001}}\n",
    )
    .await;
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &["id", "price"]),
        ["1|0.10000000000000000001"]
    );
    // Parquet rows (written as JSON objects) keep Decimal and Int64 digits.
    use datafusion::arrow::array::{ArrayRef, Decimal128Array, Int64Array};
    let amount = Decimal128Array::from(vec![1234567890123456789010_i128])
        .with_precision_and_scale(38, 2)
        .expect("a decimal");
    let batch = datafusion::arrow::record_batch::RecordBatch::try_from_iter(vec![
        ("id", Arc::new(Int64Array::from(vec![1])) as ArrayRef),
        ("amount", Arc::new(amount) as ArrayRef),
        (
            "big",
            Arc::new(Int64Array::from(vec![9007199254740993])) as ArrayRef,
        ),
    ])
    .expect("a batch");
    let parquet =
        medallion_engine::lake::encode_parquet(batch.schema(), &[batch]).expect("parquet");
    let mut p = playground(pipeline(&EXACT_COLUMNS[..3], json!([]), &[])).await;
    ingest(&mut p, "a.parquet", &parquet).await;
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &names[..3]),
        ["1|12345678901234567890.10|9007199254740993"]
    );
}

// Third probe (issue 9, kind 5): every Unicode format character (general
// category Cf) is removed from header names, and names are read and
// compared in Unicode NFC.

const NAMES_NOTE_END: &str = " (names are trimmed; an empty name becomes _c<position> and a repeated one <name>_<n>, never a name the header has)";

/// `(position, original, name)` of a batch's header renames.
fn renames_of(b: &BatchInfo) -> Vec<(usize, &str, &str)> {
    b.header_renames
        .iter()
        .map(|r| (r.position, r.original.as_str(), r.name.as_str()))
        .collect()
}

/// RIGHT-TO-LEFT MARK, WORD JOINER and SOFT HYPHEN are removed from header names.
#[wasm_bindgen_test(unsupported = tokio::test)]
async fn k5_rlm_word_joiner_and_soft_hyphen_are_removed_from_header_names() {
    let columns = [
        ("id", "INT"),
        ("qty", "INT"),
        ("name", "STRING"),
        ("price", "INT"),
    ];
    let file = "id,qty\u{200f},n\u{2060}ame,pri\u{ad}ce\n1,5,x,7\n";
    let (_, silver, b) = bronze_and_silver(&columns, file.as_bytes()).await;
    assert_eq!(b.header, ["id", "qty", "name", "price"]);
    assert_eq!(
        renames_of(&b),
        [
            (1, "qty\u{200f}", "qty"),
            (2, "n\u{2060}ame", "name"),
            (3, "pri\u{ad}ce", "price")
        ]
    );
    assert_note(&b, &format!("header names read as: \"qty\\u{{200f}}\" → qty (invisible character U+200F removed), \"n\\u{{2060}}ame\" → name (invisible character U+2060 removed), \"pri\\u{{ad}}ce\" → price (invisible character U+00AD removed){NAMES_NOTE_END}"));
    assert_eq!(silver, ["1|5|x|7"]);
}

/// LEFT-TO-RIGHT MARK and ARABIC LETTER MARK at the end of header names; the
/// rest of general category Cf (embeddings, isolates, invisible operators,
/// interlinear annotation, tags) the same.
#[wasm_bindgen_test(unsupported = tokio::test)]
async fn k5_lrm_and_alm_are_removed_from_header_names() {
    let columns = [("id", "INT"), ("qty", "INT"), ("name", "STRING")];
    let file = "id,qty\u{200e},name\u{61c}\n1,5,x\n";
    let (_, silver, b) = bronze_and_silver(&columns, file.as_bytes()).await;
    assert_eq!(b.header, ["id", "qty", "name"]);
    assert_eq!(
        renames_of(&b),
        [(1, "qty\u{200e}", "qty"), (2, "name\u{61c}", "name")]
    );
    assert_note(&b, &format!("header names read as: \"qty\\u{{200e}}\" → qty (invisible character U+200E removed), \"name\\u{{61c}}\" → name (invisible character U+061C removed){NAMES_NOTE_END}"));
    assert_eq!(silver, ["1|5|x"]);
    let file = "\u{202a}id\u{202c},\u{2066}q\u{2064}ty\u{2069},\u{fff9}na\u{e0041}me\u{fffb},\u{180e}\u{600}\n1,5,x,y\n";
    let (_, silver, b) = bronze_and_silver(&columns, file.as_bytes()).await;
    assert_eq!(b.header, ["id", "qty", "name", "_c3"]);
    assert_eq!(silver, ["1|5|x"]);
    assert_eq!(b.header_renames.len(), 4, "{:?}", b.header_renames);
}

/// Typed PERMISSIVE bronze: a header name with an RLM is the declared
/// column, stored with its value, not a NULL column beside a dropped one.
#[wasm_bindgen_test(unsupported = tokio::test)]
async fn k5_typed_permissive_header_with_an_rlm_is_not_a_silent_null_column() {
    let mut p = playground(typed_pipeline(
        "permissive",
        &[("id", "INT"), ("qty", "INT")],
    ))
    .await;
    let v = ingest(&mut p, "a.csv", "id,qty\u{200f}\n1,5\n".as_bytes()).await;
    let b = last_batch(&v);
    assert_eq!(b.header, ["id", "qty"]);
    assert_eq!(
        b.notes,
        [format!("header names read as: \"qty\\u{{200f}}\" → qty (invisible character U+200F removed){NAMES_NOTE_END}")]
    );
    assert_eq!(
        grid(&rows(&mut p, "bronze.t").await, &["id", "qty"]),
        ["1|5"]
    );
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &["id", "qty"]),
        ["1|5"]
    );
}

const CAFE_NFC: &str = "caf\u{e9}";
const CAFE_NFD: &str = "cafe\u{301}";

/// A header name written in NFD (`e` + COMBINING ACUTE ACCENT) is read in
/// NFC, so the declared `café` (NFC) reads it; the batch log says why.
#[wasm_bindgen_test(unsupported = tokio::test)]
async fn k5_nfd_header_matches_the_nfc_declared_name() {
    let file = format!("id,{CAFE_NFD}\n1,5\n");
    let (_, silver, b) =
        bronze_and_silver(&[("id", "INT"), (CAFE_NFC, "INT")], file.as_bytes()).await;
    assert_eq!(b.header, ["id", CAFE_NFC]);
    assert_eq!(renames_of(&b), [(1, CAFE_NFD, CAFE_NFC)]);
    assert_note(&b, &format!("header names read as: \"cafe\\u{{301}}\" → {CAFE_NFC} (not in Unicode NFC: read in its composed form){NAMES_NOTE_END}"));
    assert_eq!(silver, ["1|5"]);
    // A declared name in NFD binds the NFC header name too.
    let file = format!("id,{CAFE_NFC}\n1,5\n");
    let (_, silver, b) =
        bronze_and_silver(&[("id", "INT"), (CAFE_NFD, "INT")], file.as_bytes()).await;
    assert!(b.header_renames.is_empty());
    assert_eq!(silver, ["1|5"]);
}

/// A JSON key in NFD binds the declared NFC name (keys are data: not
/// renamed); two keys that are one name in NFC are the record's error
/// naming both; a key with a format character is noted as a close name.
#[wasm_bindgen_test(unsupported = tokio::test)]
async fn k5_json_key_in_nfd_matches_the_nfc_declared_name() {
    let columns = [("id", "INT"), (CAFE_NFC, "INT")];
    let file = format!("{{\"id\":1,\"{CAFE_NFD}\":5}}\n");
    let (_, silver, b) = bronze_and_silver(&columns, file.as_bytes()).await;
    assert_eq!(silver, ["1|5"]);
    assert!(b.notes.is_empty(), "{:?}", b.notes);
    let file =
        format!("{{\"id\":1,\"{CAFE_NFC}\":5}}\n{{\"id\":2,\"{CAFE_NFC}\":5,\"{CAFE_NFD}\":6}}\n");
    let mut p = playground(pipeline(&columns, json!([]), &[])).await;
    ingest(&mut p, "k.jsonl", file.as_bytes()).await;
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &["id", CAFE_NFC]),
        ["1|5"]
    );
    assert_eq!(
        grid(&rows(&mut p, "silver.quarantine").await, &["rule_id", "reason"]),
        [format!("parse|parse: declared column {CAFE_NFC} matches 2 source names that are one name in Unicode normalization form C (they look alike): \"cafe\\u{{301}}\" and \"{CAFE_NFC}\"; which one is meant cannot be told, so the record is not read")]
    );
    let file = format!("{{\"id\":1,\"{CAFE_NFD}\u{200f}\":5}}\n");
    let (_, silver, b) = bronze_and_silver(&columns, file.as_bytes()).await;
    assert_eq!(silver, ["1|NULL"]);
    assert_note(&b, &format!("declared columns absent from this file (silver reads them as NULL): {CAFE_NFC} (the file has \"cafe\\u{{301}}\\u{{200f}}\": the same name but for spaces, invisible characters or case)"));
}

/// NFC and NFD spellings of one name in one header are one name: the
/// second is read as `café_2`, and the batch log says so.
#[wasm_bindgen_test(unsupported = tokio::test)]
async fn k5_nfc_and_nfd_spellings_of_one_header_name_are_mapped_distinct() {
    let cafe_2 = format!("{CAFE_NFC}_2");
    let file = format!("id,{CAFE_NFC},{CAFE_NFD}\n1,5,6\n");
    let (_, silver, b) = bronze_and_silver(
        &[("id", "INT"), (CAFE_NFC, "INT"), (&cafe_2, "INT")],
        file.as_bytes(),
    )
    .await;
    assert_eq!(b.header, ["id", CAFE_NFC, &cafe_2]);
    assert_eq!(renames_of(&b), [(2, CAFE_NFD, cafe_2.as_str())]);
    assert_note(&b, &format!("header names read as: \"cafe\\u{{301}}\" → {cafe_2} (not in Unicode NFC: read in its composed form){NAMES_NOTE_END}"));
    assert_eq!(silver, ["1|5|6"]);
}

// ---- end of bronze reading ----

// ---- time zones and offsets: rw-43, rw-45 ----

/// rw-43's pipeline: `local_ts` read in America/New_York with these
/// policies (`None`: no zone declared), typed bronze in `mode` if given.
fn rw43_pipeline(zone: Option<(&str, &str)>, mode: &str) -> PipelineDef {
    let mut local_ts = json!({"name": "local_ts", "type": "TIMESTAMP"});
    if let Some((ambiguous, nonexistent)) = zone {
        local_ts["time_zone"] = json!("America/New_York");
        local_ts["ambiguous"] = json!(ambiguous);
        local_ts["nonexistent"] = json!(nonexistent);
    }
    zone_pipeline(
        vec![
            json!({"name": "sensor", "type": "STRING"}),
            local_ts,
            json!({"name": "value", "type": "INT"}),
        ],
        mode,
        json!([]),
    )
}

/// One bronze table `t` with these source columns (JSON), stored in `mode`,
/// silver `t` without rules, and these checks.
fn zone_pipeline(
    columns: Vec<serde_json::Value>,
    mode: &str,
    checks: serde_json::Value,
) -> PipelineDef {
    pipeline_json(json!({
        "title": "case",
        "bronze": [{
            "name": "t", "source_system": "case_files", "description": "",
            "schema": {"columns": columns}, "mode": mode
        }],
        "silver": [{"name": "t", "source": "t", "rules": {"rules": []}, "description": ""}],
        "gold": [],
        "checks": checks
    }))
}

/// rw-43 ingested with `def`: silver as `sensor|local_ts|value`, and the quarantine's reasons.
async fn rw43_read(def: PipelineDef) -> (Vec<String>, Vec<String>, PipelineView) {
    let mut p = playground(def).await;
    let v = ingest(
        &mut p,
        "rw-43.csv",
        case!("rw-43-local-time-dst-new-york.csv"),
    )
    .await;
    let silver = rows(&mut p, "silver.t").await;
    let q = rows(&mut p, "silver.quarantine").await;
    let reasons = col(&q, "reason")
        .into_iter()
        .map(|r| r.unwrap_or("NULL").to_string())
        .collect();
    (grid(&silver, &["sensor", "local_ts", "value"]), reasons, v)
}

/// rw-43's S1 rows read in America/New_York in arrival order, as silver shows them (UTC).
const RW43_ARRIVAL_ORDER: [&str; 4] = [
    "S1|2024-11-03 04:30:00|1",
    "S1|2024-11-03 05:30:00|2",
    "S1|2024-11-03 06:30:00|3",
    "S1|2024-11-03 08:00:00|4",
];

/// Status and observation of check S5 (`timestamp_offsets` on bronze.t).
fn offsets_check(v: &PipelineView) -> (medallion_engine::checks::CheckStatus, &str) {
    let check = v.checks.iter().find(|c| c.id == "S5").expect("check S5");
    (check.status, check.observed.as_str())
}

const RW43_NONEXISTENT: &str = "parse: local_ts: '2024-03-10 02:30:00' is a nonexistent local time in America/New_York (clocks skipped 02:00–03:00 on 2024-03-10; nonexistent: shift_forward would read it as 03:30)";

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw43_new_york_local_times_in_arrival_order_and_the_skipped_hour_quarantined() {
    let (silver, reasons, v) =
        rw43_read(rw43_pipeline(Some(("arrival_order", "reject")), "raw")).await;
    assert_eq!(silver, RW43_ARRIVAL_ORDER);
    assert_eq!(reasons, [RW43_NONEXISTENT]);
    // Read in a declared zone: nothing was taken as UTC.
    assert!(v.read_as_utc.is_empty());
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw43_each_policy_for_repeated_and_skipped_local_times() {
    let (silver, reasons, _) =
        rw43_read(rw43_pipeline(Some(("earlier", "shift_forward")), "raw")).await;
    assert_eq!(
        silver,
        [
            "S1|2024-11-03 04:30:00|1",
            "S1|2024-11-03 05:30:00|2",
            "S1|2024-11-03 05:30:00|3",
            "S1|2024-11-03 08:00:00|4",
            // 02:30 does not exist: moved forward by the gap to 03:30 EDT.
            "S2|2024-03-10 07:30:00|5",
        ]
    );
    assert!(reasons.is_empty());
    let (silver, _, _) = rw43_read(rw43_pipeline(Some(("later", "reject")), "raw")).await;
    assert_eq!(
        silver,
        [
            "S1|2024-11-03 04:30:00|1",
            "S1|2024-11-03 06:30:00|2",
            "S1|2024-11-03 06:30:00|3",
            "S1|2024-11-03 08:00:00|4",
        ]
    );
    // The defaults: nothing guessed, both kinds quarantined with the reason.
    let (silver, reasons, _) = rw43_read(rw43_pipeline(Some(("reject", "reject")), "raw")).await;
    assert_eq!(
        silver,
        ["S1|2024-11-03 04:30:00|1", "S1|2024-11-03 08:00:00|4"]
    );
    let ambiguous = "parse: local_ts: '2024-11-03 01:30:00' is an ambiguous local time in America/New_York (clocks went back from 02:00 to 01:00 on 2024-11-03, so 01:00–02:00 happened twice, at UTC-04:00 and at UTC-05:00; set ambiguous to earlier, later or arrival_order to choose)";
    assert_eq!(reasons, [ambiguous, ambiguous, RW43_NONEXISTENT]);
    let mut plain = rw43_pipeline(None, "raw");
    plain.bronze[0].schema.columns[1].time_zone = Some("America/New_York".into());
    let (_, reasons, _) = rw43_read(plain).await;
    assert_eq!(reasons.len(), 3, "the JSON defaults reject: {reasons:?}");
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw43_without_a_zone_the_text_is_read_as_utc_and_the_column_says_so() {
    let def = rw43_pipeline(None, "raw");
    let mut def = def;
    def.checks = serde_json::from_value(json!([{
        "id": "S5", "level": "schema", "description": "timestamps carry offsets",
        "kind": "timestamp_offsets", "bronze_table": "bronze.t"
    }]))
    .unwrap();
    let (silver, reasons, v) = rw43_read(def).await;
    assert_eq!(
        silver,
        [
            "S1|2024-11-03 00:30:00|1",
            "S1|2024-11-03 01:30:00|2",
            "S1|2024-11-03 01:30:00|3",
            "S1|2024-11-03 03:00:00|4",
            "S2|2024-03-10 02:30:00|5",
        ]
    );
    assert!(reasons.is_empty());
    assert_eq!(
        v.read_as_utc,
        [medallion_engine::api::ReadAsUtcView {
            bronze_table: TableName::bronze("t"),
            column: "local_ts".into(),
            without_offset: 5,
            values: 5
        }]
    );
    assert_eq!(
        offsets_check(&v),
        (
            medallion_engine::checks::CheckStatus::Warn,
            "local_ts: 5 of 5 values without an offset, read as UTC (declare the column's time_zone if they are local times)"
        )
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw43_typed_bronze_applies_the_zone_once() {
    let def = rw43_pipeline(Some(("arrival_order", "reject")), "permissive");
    let mut p = playground(def).await;
    let v = ingest(
        &mut p,
        "rw-43.csv",
        case!("rw-43-local-time-dst-new-york.csv"),
    )
    .await;
    assert_eq!(last_batch(&v).corrupt_records, 1);
    let bronze = rows(&mut p, "bronze.t").await;
    assert_eq!(
        grid(&bronze, &["sensor", "local_ts", "_corrupt_reason"]),
        [
            "S1|2024-11-03 04:30:00|NULL",
            "S1|2024-11-03 05:30:00|NULL",
            "S1|2024-11-03 06:30:00|NULL",
            "S1|2024-11-03 08:00:00|NULL",
            "NULL|NULL|local_ts: '2024-03-10 02:30:00' is a nonexistent local time in America/New_York (clocks skipped 02:00–03:00 on 2024-03-10; nonexistent: shift_forward would read it as 03:30)",
        ]
    );
    // Silver takes the typed instants as stored: never shifted a second time.
    let silver = rows(&mut p, "silver.t").await;
    assert_eq!(
        grid(&silver, &["sensor", "local_ts", "value"]),
        RW43_ARRIVAL_ORDER
    );
    assert_eq!(rows(&mut p, "silver.quarantine").await.row_count, 1);
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw43_typed_bronze_with_a_declared_format_is_not_read_again() {
    // A typed value is not text in the declared format any more: silver
    // takes it as stored instead of quarantining it.
    let def = zone_pipeline(
        vec![
            json!({"name": "sensor", "type": "STRING"}),
            json!({"name": "local_ts", "type": "TIMESTAMP", "formats": ["MM/dd/yyyy HH:mm"],
                   "time_zone": "America/New_York", "ambiguous": "later"}),
        ],
        "permissive",
        json!([]),
    );
    let mut p = playground(def).await;
    ingest(&mut p, "us.csv", b"sensor,local_ts\nS1,11/03/2024 01:30\n").await;
    let silver = rows(&mut p, "silver.t").await;
    assert_eq!(
        grid(&silver, &["sensor", "local_ts"]),
        ["S1|2024-11-03 06:30:00"]
    );
    assert_eq!(rows(&mut p, "silver.quarantine").await.row_count, 0);
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw43_arrival_order_is_per_batch_and_the_trail_reads_rows_as_the_run_did() {
    let mut def = rw43_pipeline(Some(("arrival_order", "reject")), "raw");
    def.silver[0].rules = serde_json::from_value(json!({"rules": [{
        "id": "E1", "kind": "expect", "column": "local_ts",
        "expression": "local_ts < TIMESTAMP '2024-11-03 06:00:00'",
        "enabled": true, "rationale": "", "action": "warn"
    }]}))
    .unwrap();
    let mut p = playground(def).await;
    ingest(
        &mut p,
        "rw-43.csv",
        case!("rw-43-local-time-dst-new-york.csv"),
    )
    .await;
    // A second file that repeats 01:30 once: a batch of its own starts afresh (EDT).
    ingest(
        &mut p,
        "later.csv",
        b"sensor,local_ts,value\nS3,2024-11-03 01:30:00,6\n",
    )
    .await;
    let silver = rows(&mut p, "silver.t").await;
    assert_eq!(
        grid(&silver, &["sensor", "local_ts", "value"]),
        [
            "S1|2024-11-03 04:30:00|1",
            "S1|2024-11-03 05:30:00|2",
            "S1|2024-11-03 06:30:00|3",
            "S1|2024-11-03 08:00:00|4",
            "S3|2024-11-03 05:30:00|6",
        ]
    );
    // The trail of row 2 (the second 01:30, 06:30Z) reads its record within its batch.
    let trail = match p
        .handle(Request::Trail {
            table: TableName::silver("t"),
            row: 2,
        })
        .await
    {
        Response::Trail(t) => t,
        other => panic!("unexpected {other:?}"),
    };
    let steps: Vec<String> = trail.records[0]
        .steps
        .iter()
        .map(|s| format!("{} {}", s.rule_id, s.failed))
        .collect();
    assert_eq!(steps, ["E1 true"], "{trail:?}");
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw43_an_unknown_zone_refuses_the_pipeline_naming_the_column() {
    let mut p = playground(rw43_pipeline(None, "raw")).await;
    let mut def = rw43_pipeline(Some(("arrival_order", "reject")), "raw");
    def.bronze[0].schema.columns[1].time_zone = Some("america/new_york".into());
    assert_eq!(
        refused(&mut p, Request::LoadPipeline { pipeline: def }).await,
        "bronze.t: column local_ts: unknown time zone 'america/new_york' (did you mean America/New_York?): use an IANA name, Area/Location as in America/New_York, Europe/Berlin or Asia/Tokyo, or UTC (abbreviations such as PST or CEST do not say when daylight saving applies)"
    );
    let mut def = rw43_pipeline(None, "raw");
    def.bronze[0].schema.columns[0].time_zone = Some("UTC".into());
    assert_eq!(
        refused(&mut p, Request::LoadPipeline { pipeline: def }).await,
        "bronze.t: column sensor: a time_zone (and ambiguous / nonexistent) applies to TIMESTAMP columns only, and sensor is STRING"
    );
}

/// rw-45's pipeline: `id STRING, ts TIMESTAMP` (no format), with the
/// offsets check, bronze stored in `mode`.
fn rw45_pipeline(mode: &str) -> PipelineDef {
    zone_pipeline(
        vec![
            json!({"name": "id", "type": "STRING"}),
            json!({"name": "ts", "type": "TIMESTAMP"}),
        ],
        mode,
        json!([{
            "id": "S5", "level": "schema", "description": "timestamps carry offsets",
            "kind": "timestamp_offsets", "bronze_table": "bronze.t"
        }]),
    )
}

const RW45_SILVER: [&str; 5] = [
    "T1|2024-02-01 09:00:00",
    "T2|2024-02-01 09:00:00",
    "T3|2024-02-01 09:00:00",
    "T4|2024-02-01 09:00:00.500",
    "T5|2024-02-01 09:00:00",
];

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw45_iso_offsets_in_every_spelling_and_the_value_without_one_is_counted() {
    let mut p = playground(rw45_pipeline("raw")).await;
    let v = ingest(&mut p, "rw-45.csv", case!("rw-45-iso-offsets.csv")).await;
    let silver = rows(&mut p, "silver.t").await;
    assert_eq!(grid(&silver, &["id", "ts"]), RW45_SILVER);
    let counted = |without_offset, values| {
        vec![medallion_engine::api::ReadAsUtcView {
            bronze_table: TableName::bronze("t"),
            column: "ts".into(),
            without_offset,
            values,
        }]
    };
    assert_eq!(v.read_as_utc, counted(1, 5));
    assert_eq!(
        offsets_check(&v),
        (
            medallion_engine::checks::CheckStatus::Warn,
            "ts: 1 of 5 values without an offset, read as UTC (declare the column's time_zone if they are local times)"
        )
    );
    // Strict: other spellings are quarantined, never guessed; counts add up over batches.
    let v = ingest(
        &mut p,
        "more.csv",
        b"id,ts\nT6,2024-02-01T09:00:00 CET\nT7,2024-02-01 10:00\nT8,2024-02-31T09:00Z\n",
    )
    .await;
    let q = rows(&mut p, "silver.quarantine").await;
    assert_eq!(
        col(&q, "reason"),
        [
            Some("parse: ts: '2024-02-01T09:00:00 CET' is not TIMESTAMP"),
            Some("parse: ts: '2024-02-31T09:00Z' is not TIMESTAMP"),
        ]
    );
    assert_eq!(v.read_as_utc, counted(2, 6));
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw45_a_declared_zone_or_utc_silences_the_warning() {
    let mut def = rw45_pipeline("raw");
    def.bronze[0].schema.columns[1].time_zone = Some("UTC".into());
    let mut p = playground(def).await;
    let v = ingest(&mut p, "rw-45.csv", case!("rw-45-iso-offsets.csv")).await;
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &["id", "ts"]),
        RW45_SILVER
    );
    assert!(v.read_as_utc.is_empty());
    assert_eq!(
        offsets_check(&v),
        (
            medallion_engine::checks::CheckStatus::Pass,
            "every TIMESTAMP value had an offset or a declared time zone"
        )
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw45_typed_bronze_counts_in_the_batch_log_and_the_view() {
    let mut p = playground(rw45_pipeline("permissive")).await;
    let v = ingest(&mut p, "rw-45.csv", case!("rw-45-iso-offsets.csv")).await;
    let batch = last_batch(&v);
    assert!(
        batch.notes.iter().any(|n| n
            == "ts: 1 of 5 values had no offset and were stored as UTC (declare the column's time_zone if they are local times)"),
        "{:?}",
        batch.notes
    );
    assert_eq!(batch.read_as_utc.len(), 1);
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &["id", "ts"]),
        RW45_SILVER
    );
    assert_eq!(
        (v.read_as_utc[0].without_offset, v.read_as_utc[0].values),
        (1, 5)
    );
    assert_eq!(
        v.checks[0].status,
        medallion_engine::checks::CheckStatus::Warn
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw45_spark_xxx_pattern_accepts_z() {
    let def = zone_pipeline(
        vec![
            json!({"name": "id", "type": "STRING"}),
            json!({"name": "ts", "type": "TIMESTAMP", "formats": ["yyyy-MM-dd'T'HH:mm:ssXXX"]}),
        ],
        "raw",
        json!([]),
    );
    let mut p = playground(def).await;
    let v = ingest(
        &mut p,
        "xxx.csv",
        b"id,ts\nT1,2024-02-01T09:00:00Z\nT2,2024-02-01T10:00:00+01:00\nT3,2024-02-01T09:00:00\n",
    )
    .await;
    let silver = rows(&mut p, "silver.t").await;
    assert_eq!(
        grid(&silver, &["id", "ts"]),
        ["T1|2024-02-01 09:00:00", "T2|2024-02-01 09:00:00"]
    );
    let q = rows(&mut p, "silver.quarantine").await;
    assert_eq!(
        col(&q, "reason"),
        [Some("parse: ts: '2024-02-01T09:00:00' is not TIMESTAMP (declared formats: yyyy-MM-dd'T'HH:mm:ssXXX)")]
    );
    assert!(v.read_as_utc.is_empty());
}

// ---- end of time zones and offsets ----

// ---- MERGE, snapshots and checks: kind 3, rw-47, rw-51 ----

/// Ingests the case file `name` under its own name into table `t`.
macro_rules! ingest_case {
    ($p:expr, $name:literal) => {
        ingest($p, $name, case!($name))
    };
}

/// One bronze table `t` with `columns`, silver `t` merged by `merge` (the
/// JSON `merge` object), and check A1 (reconciliation) plus `checks`.
fn merged(
    columns: &[(&str, &str)],
    merge: serde_json::Value,
    rules: serde_json::Value,
    checks: serde_json::Value,
) -> PipelineDef {
    let mut def = pipeline(columns, rules, &[]);
    def.silver[0].merge = Some(serde_json::from_value(merge).expect("merge JSON"));
    let mut all = vec![json!({"id": "A1", "level": "aggregate", "description": "",
        "kind": "reconciliation", "bronze_table": "bronze.t", "silver_table": "silver.t"})];
    all.extend(checks.as_array().cloned().unwrap_or_default());
    def.checks = serde_json::from_value(serde_json::Value::Array(all)).expect("checks JSON");
    def
}

fn versions_of(v: &PipelineView, table: &str) -> usize {
    v.history.get(table).map_or(0, |h| h.len())
}

async fn replay_identical(p: &mut Playground) -> bool {
    send(p, Request::Replay)
        .await
        .replay
        .expect("replay report")
        .identical
}

async fn set_mode(p: &mut Playground, mode: medallion_engine::api::RunMode) {
    send(p, Request::SetRunMode { mode }).await;
}

const RW33_COLUMNS: [(&str, &str); 4] = [
    ("customer_id", "STRING"),
    ("email", "STRING"),
    ("tier", "STRING"),
    ("updated_at", "TIMESTAMP"),
];

fn rw33(scd: &str) -> PipelineDef {
    merged(
        &RW33_COLUMNS,
        json!({"keys": ["customer_id"], "sequence_by": "updated_at", "stored_as": scd}),
        json!([]),
        json!([]),
    )
}

const RW33_TIE: &str = "merge: ambiguous tie: 2 rows have customer_id=C-203 and updated_at=2024-08-02 08:00:00, and they differ in tier (gold, silver); none of them is applied (nothing says which came last) and the key keeps its earlier state";

const RW33_SILVER: [&str; 4] = [
    "C-201|platinum|2024-08-02 11:30:00",
    "C-202|gold|2024-08-01 09:00:00",
    "C-203|bronze|2024-08-01 09:00:00",
    "C-204|bronze|2024-08-02 12:00:00",
];

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw33_a_merge_tie_is_quarantined_never_decided_by_arrival() {
    let mut p = playground(rw33("scd1")).await;
    ingest_case!(&mut p, "rw-33-merge-ties-batch-1.csv").await;
    let before = rows(&mut p, "silver.t").await;
    let c202 = col(&before, "_event_id")[1].map(str::to_string);
    let v = ingest_case!(&mut p, "rw-33-merge-ties-batch-2.csv").await;
    let silver = rows(&mut p, "silver.t").await;
    assert_eq!(
        grid(&silver, &["customer_id", "tier", "updated_at"]),
        RW33_SILVER
    );
    // C-202: its identical rows collapse into the row already there.
    assert_eq!(col(&silver, "_event_id")[1].map(str::to_string), c202);
    let q = rows(&mut p, "silver.quarantine").await;
    assert_eq!(
        grid(&q, &["rule_id", "reason", "raw_payload", "_source_file"]),
        // The tied rows in order of their values (gold, silver), not of arrival.
        [
            format!("merge|{RW33_TIE}|C-203,mia.q@example.test,gold,2024-08-02T08:00:00Z|rw-33-merge-ties-batch-2.csv"),
            format!("merge|{RW33_TIE}|C-203,mia.q@example.test,silver,2024-08-02T08:00:00Z|rw-33-merge-ties-batch-2.csv"),
        ]
    );
    assert_eq!(
        check(&v, "A1").observed,
        "bronze 10 = silver 4 + quarantine 2 + removed by merge 4"
    );
    // A rerun on the same bronze commits no new version.
    let (s, qv) = (
        versions_of(&v, "silver.t"),
        versions_of(&v, "silver.quarantine"),
    );
    let v = send(&mut p, Request::Run { full_refresh: true }).await;
    assert_eq!(
        (
            versions_of(&v, "silver.t"),
            versions_of(&v, "silver.quarantine")
        ),
        (s, qv)
    );
    assert!(replay_identical(&mut p).await);
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw33_batch_2_alone_into_an_empty_table() {
    let mut p = playground(rw33("scd1")).await;
    let v = ingest_case!(&mut p, "rw-33-merge-ties-batch-2.csv").await;
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &["customer_id", "tier"]),
        ["C-201|platinum", "C-202|gold", "C-204|bronze"]
    );
    assert_eq!(rows(&mut p, "silver.quarantine").await.row_count, 2);
    assert_eq!(
        check(&v, "A1").observed,
        "bronze 7 = silver 3 + quarantine 2 + removed by merge 2"
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw33_scd2_keeps_no_zero_length_version_from_a_tie() {
    let mut p = playground(rw33("scd2")).await;
    ingest_case!(&mut p, "rw-33-merge-ties-batch-1.csv").await;
    let v = ingest_case!(&mut p, "rw-33-merge-ties-batch-2.csv").await;
    let h = rows(&mut p, "silver.t").await;
    assert_eq!(
        grid(
            &h,
            &[
                "customer_id",
                "tier",
                "valid_from",
                "valid_to",
                "is_current"
            ]
        ),
        [
            "C-201|silver|2024-08-01 09:00:00|2024-08-02 10:00:00|false",
            "C-201|gold|2024-08-02 10:00:00|2024-08-02 11:30:00|false",
            "C-201|platinum|2024-08-02 11:30:00|NULL|true",
            "C-202|gold|2024-08-01 09:00:00|NULL|true",
            "C-203|bronze|2024-08-01 09:00:00|NULL|true",
            "C-204|bronze|2024-08-02 12:00:00|NULL|true",
        ]
    );
    let from = col(&h, "valid_from");
    assert!(from.iter().zip(col(&h, "valid_to")).all(|(f, t)| *f != t));
    assert_eq!(rows(&mut p, "silver.quarantine").await.row_count, 2);
    assert_eq!(
        check(&v, "A1").observed,
        "bronze 10 = silver 6 + quarantine 2 + removed by merge 2"
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw33_incremental_runs_give_the_full_refresh_table_even_for_a_tie_with_a_merged_row() {
    use medallion_engine::api::RunMode;
    let mut p = playground(rw33("scd1")).await;
    set_mode(&mut p, RunMode::Incremental).await;
    ingest_case!(&mut p, "rw-33-merge-ties-batch-1.csv").await;
    // C-202's re-sent rows are not newer than the merged one: the table is
    // rebuilt from bronze in this run, and the notice says why.
    let v = ingest_case!(&mut p, "rw-33-merge-ties-batch-2.csv").await;
    assert_eq!(
        v.notice.as_deref(),
        Some("silver.t was rebuilt from all of bronze.t in this incremental run: customer_id=C-202 at updated_at=2024-08-01 09:00:00 is not newer than the rows merged before, and only a merge of every row gives the table a full refresh would")
    );
    assert_eq!(
        grid(
            &rows(&mut p, "silver.t").await,
            &["customer_id", "tier", "updated_at"]
        ),
        RW33_SILVER
    );
    assert_eq!(
        check(&v, "A1").observed,
        "bronze 10 = silver 4 + quarantine 2 + removed by merge 4"
    );
    assert!(replay_identical(&mut p).await);
    // Newer rows merge into the current table (no rebuild, no notice).
    let newer = b"customer_id,email,tier,updated_at\nC-201,kai.m@example.test,diamond,2024-08-03T09:00:00Z\n";
    let v = ingest(&mut p, "newer.csv", newer).await;
    assert_eq!(v.notice, None);
    assert_eq!(
        check(&v, "A1").observed,
        "bronze 11 = silver 4 + quarantine 2 + removed by merge 5"
    );
    assert!(replay_identical(&mut p).await);
    // A tie between a new row and a row already in the table: both are
    // ambiguous, as in a full refresh; C-204 had no earlier state, so it leaves silver.
    let tie =
        b"customer_id,email,tier,updated_at\nC-204,noa.r@example.test,gold,2024-08-02T12:00:00Z\n";
    let v = ingest(&mut p, "tie.csv", tie).await;
    assert!(v
        .notice
        .as_deref()
        .unwrap_or_default()
        .contains("customer_id=C-204"));
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &["customer_id", "tier"]),
        ["C-201|diamond", "C-202|gold", "C-203|bronze"]
    );
    let q = rows(&mut p, "silver.quarantine").await;
    assert_eq!(
        grid(&q, &["raw_payload", "closed_in_run"]),
        [
            "C-203,mia.q@example.test,gold,2024-08-02T08:00:00Z|NULL",
            "C-203,mia.q@example.test,silver,2024-08-02T08:00:00Z|NULL",
            "C-204,noa.r@example.test,bronze,2024-08-02T12:00:00Z|NULL",
            "C-204,noa.r@example.test,gold,2024-08-02T12:00:00Z|NULL",
        ]
    );
    assert_eq!(
        check(&v, "A1").observed,
        "bronze 12 = silver 3 + quarantine 4 + removed by merge 5"
    );
    assert!(replay_identical(&mut p).await);
    // The same bronze in full-refresh mode: the same tables, no new version.
    let (s, qv) = (
        versions_of(&v, "silver.t"),
        versions_of(&v, "silver.quarantine"),
    );
    set_mode(&mut p, RunMode::Full).await;
    let v = send(&mut p, Request::Run { full_refresh: true }).await;
    assert_eq!(
        (
            versions_of(&v, "silver.t"),
            versions_of(&v, "silver.quarantine")
        ),
        (s, qv)
    );
}

const RW47_COLUMNS: [(&str, &str); 5] = [
    ("snapshot_date", "DATE"),
    ("warehouse", "STRING"),
    ("item", "STRING"),
    ("bin", "STRING"),
    ("qty", "INT"),
];

fn rw47(scd: &str, null_safe: bool, rules: serde_json::Value) -> PipelineDef {
    merged(
        &RW47_COLUMNS,
        json!({"keys": ["warehouse", "item", "bin"], "sequence_by": "snapshot_date",
            "stored_as": scd, "null_safe_keys": null_safe, "from_snapshots": true}),
        rules,
        json!([]),
    )
}

const RW47_HISTORY: [&str; 4] = [
    "W1|I-1|NULL|2|2024-07-01|2024-07-02|false",
    "W1|I-1|NULL|3|2024-07-02|NULL|true",
    "W1|I-1|A|5|2024-07-01|NULL|true",
    "W1|I-2|B|7|2024-07-01|2024-07-02|false",
];
const SCD2_GRID: [&str; 7] = [
    "warehouse",
    "item",
    "bin",
    "qty",
    "valid_from",
    "valid_to",
    "is_current",
];

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw47_snapshots_scd2_with_a_null_safe_composite_key() {
    let mut p = playground(rw47("scd2", true, json!([]))).await;
    ingest_case!(&mut p, "rw-47-snapshot-day-1.csv").await;
    let v = ingest_case!(&mut p, "rw-47-snapshot-day-2.csv").await;
    let h = rows(&mut p, "silver.t").await;
    assert_eq!(grid(&h, &SCD2_GRID), RW47_HISTORY);
    assert_eq!(
        col(&h, "is_current")
            .iter()
            .filter(|c| **c == Some("true"))
            .count(),
        2
    );
    // Day 2's (W1,I-1,A) is a duplicate of day 1's: removed.
    assert_eq!(
        check(&v, "A1").observed,
        "bronze 5 = silver 4 + quarantine 0 + removed by merge 1"
    );
    // Day 2 once more: nothing changes, no new version.
    let before = versions_of(&v, "silver.t");
    let v = ingest(
        &mut p,
        "rw-47-snapshot-day-2-again.csv",
        case!("rw-47-snapshot-day-2.csv"),
    )
    .await;
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &SCD2_GRID),
        RW47_HISTORY
    );
    assert_eq!(versions_of(&v, "silver.t"), before);
    assert_eq!(
        check(&v, "A1").observed,
        "bronze 7 = silver 4 + quarantine 0 + removed by merge 3"
    );
    assert!(replay_identical(&mut p).await);
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw47_snapshots_scd1_and_incremental_runs() {
    use medallion_engine::api::RunMode;
    let mut p = playground(rw47("scd1", true, json!([]))).await;
    set_mode(&mut p, RunMode::Incremental).await;
    ingest_case!(&mut p, "rw-47-snapshot-day-1.csv").await;
    // A newer snapshot merges into the current table: I-2 was deleted.
    let v = ingest_case!(&mut p, "rw-47-snapshot-day-2.csv").await;
    assert_eq!(v.notice, None);
    assert_eq!(
        grid(
            &rows(&mut p, "silver.t").await,
            &["warehouse", "item", "bin", "qty", "snapshot_date"]
        ),
        ["W1|I-1|NULL|3|2024-07-02", "W1|I-1|A|5|2024-07-01"]
    );
    // Removed: A's duplicate, NULL-bin qty 2 superseded, I-2 deleted.
    assert_eq!(
        check(&v, "A1").observed,
        "bronze 5 = silver 2 + quarantine 0 + removed by merge 3"
    );
    assert!(replay_identical(&mut p).await);
    // Day 2 again is not newer than day 2: rebuilt from bronze, same table.
    let v = ingest(&mut p, "again.csv", case!("rw-47-snapshot-day-2.csv")).await;
    assert!(v
        .notice
        .as_deref()
        .unwrap_or_default()
        .starts_with("silver.t was rebuilt"));
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &["bin", "qty"]),
        ["NULL|3", "A|5"]
    );
    assert_eq!(
        check(&v, "A1").observed,
        "bronze 7 = silver 2 + quarantine 0 + removed by merge 5"
    );
    assert!(replay_identical(&mut p).await);
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw47_without_null_safe_keys_a_null_key_part_is_quarantined() {
    let mut p = playground(rw47("scd2", false, json!([]))).await;
    ingest_case!(&mut p, "rw-47-snapshot-day-1.csv").await;
    let q = rows(&mut p, "silver.quarantine").await;
    assert_eq!(
        grid(&q, &["rule_id", "reason"]),
        ["merge|merge: bin is NULL (a merge key of silver.t)"]
    );
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &["bin", "qty"]),
        ["A|5", "B|7"]
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw47_a_quarantined_snapshot_row_keeps_its_key_current() {
    // An expectation drops (W1,I-1,A) on day 2: its key was in the snapshot,
    // so its current version stays; I-2 is still deleted.
    let rules = json!([rule("X1", "expect", "qty", "qty < 100")]);
    let mut p = playground(rw47("scd2", true, rules)).await;
    ingest_case!(&mut p, "rw-47-snapshot-day-1.csv").await;
    let day2 =
        b"snapshot_date,warehouse,item,bin,qty\n2024-07-02,W1,I-1,A,500\n2024-07-02,W1,I-1,,3\n";
    let v = ingest(&mut p, "day-2.csv", day2).await;
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &SCD2_GRID),
        RW47_HISTORY
    );
    assert_eq!(
        grid(&rows(&mut p, "silver.quarantine").await, &["rule_id"]),
        ["X1"]
    );
    assert_eq!(
        check(&v, "A1").observed,
        "bronze 5 = silver 4 + quarantine 1 + removed by merge 0"
    );
    // A row that does not even parse has no key to read: that snapshot
    // deletes nothing (I-2 stays current) until a complete one misses it.
    let mut p = playground(rw47("scd2", true, json!([]))).await;
    ingest_case!(&mut p, "rw-47-snapshot-day-1.csv").await;
    let day2 =
        b"snapshot_date,warehouse,item,bin,qty\n2024-07-02,W1,I-1,A,five\n2024-07-02,W1,I-1,,3\n";
    ingest(&mut p, "day-2.csv", day2).await;
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &SCD2_GRID),
        [
            "W1|I-1|NULL|2|2024-07-01|2024-07-02|false",
            "W1|I-1|NULL|3|2024-07-02|NULL|true",
            "W1|I-1|A|5|2024-07-01|NULL|true",
            "W1|I-2|B|7|2024-07-01|NULL|true",
        ]
    );
    let day3 =
        b"snapshot_date,warehouse,item,bin,qty\n2024-07-03,W1,I-1,A,5\n2024-07-03,W1,I-1,,3\n";
    ingest(&mut p, "day-3.csv", day3).await;
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &SCD2_GRID)[3],
        "W1|I-2|B|7|2024-07-01|2024-07-03|false"
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw51_composite_unique_groups_nulls_and_checks_count_nulls() {
    let mut def = pipeline(
        &[
            ("country", "STRING"),
            ("region", "STRING"),
            ("manager", "STRING"),
        ],
        json!([]),
        &[],
    );
    let c = |id: &str, kind: serde_json::Value| {
        let mut o = json!({"id": id, "level": "row", "description": ""});
        o.as_object_mut()
            .unwrap()
            .extend(kind.as_object().unwrap().clone());
        o
    };
    def.checks = serde_json::from_value(json!([
        c("U2", json!({"kind": "unique", "table": "silver.t", "columns": ["country", "region"]})),
        c("U1", json!({"kind": "unique", "table": "silver.t", "columns": ["region"]})),
        c("N1", json!({"kind": "not_null", "table": "silver.t", "column": "region"})),
        c("V1", json!({"kind": "accepted_values", "table": "silver.t", "column": "region", "values": ["North", "South"]})),
        c("R1", json!({"kind": "accepted_range", "table": "silver.t", "column": "manager", "min": "'A'"})),
        c("C1", json!({"kind": "contract", "level": "schema", "table": "silver.t", "columns": [
            {"name": "country", "type": "STRING", "nullable": false},
            {"name": "region", "type": "STRING"},
            {"name": "manager", "type": "STRING"}]})),
    ]))
    .unwrap();
    let mut p = playground(def).await;
    let v = ingest(
        &mut p,
        "rw-51.csv",
        case!("rw-51-composite-unique-nulls.csv"),
    )
    .await;
    let r = |id: &str| {
        let c = check(&v, id);
        (format!("{:?}", c.status), c.observed.clone(), c.nulls)
    };
    assert_eq!(
        r("U2"),
        (
            "Fail".into(),
            "1 duplicated key; 2 NULLs seen".into(),
            Some(2)
        )
    );
    assert_eq!(
        check(&v, "U2").sample,
        ["country=PT, region=NULL, rows_with_this_key=2"]
    );
    assert_eq!(
        r("U1"),
        (
            "Pass".into(),
            "0 duplicated keys; 2 NULLs seen".into(),
            Some(2)
        )
    );
    assert_eq!(
        r("N1"),
        (
            "Fail".into(),
            "2 of 4 rows violate; 2 NULLs seen".into(),
            Some(2)
        )
    );
    assert_eq!(
        r("V1"),
        (
            "Pass".into(),
            "0 of 4 rows violate; 2 NULLs seen".into(),
            Some(2)
        )
    );
    assert_eq!(
        r("R1"),
        (
            "Pass".into(),
            "0 of 4 rows violate; 0 NULLs seen".into(),
            Some(0)
        )
    );
    assert_eq!(
        r("C1"),
        (
            "Pass".into(),
            "3 columns as declared; 2 NULLs seen".into(),
            Some(2)
        )
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw33_the_row_trail_of_a_tied_row_says_the_merge_quarantined_it() {
    let mut p = playground(rw33("scd1")).await;
    ingest_case!(&mut p, "rw-33-merge-ties-batch-2.csv").await;
    let trail = match p
        .handle(Request::Trail {
            table: TableName::silver("quarantine"),
            row: 1,
        })
        .await
    {
        Response::Trail(t) => t,
        other => panic!("unexpected {other:?}"),
    };
    assert_eq!(trail.records.len(), 1);
    let r = &trail.records[0];
    assert_eq!(
        (r.raw_payload.as_str(), r.role.as_str()),
        (
            "C-203,mia.q@example.test,silver,2024-08-02T08:00:00Z",
            "quarantined"
        )
    );
    assert_eq!(
        r.steps.last().map(|s| (s.rule_id.as_str(), s.text.clone())),
        // Only the second batch: C-203 has no state before the tie.
        Some((
            "merge",
            format!(
                "failed (drop): {}",
                RW33_TIE.replace("the key keeps its earlier state", "the key had no state before them, so it is not in silver unless a later row gives it one")
            )
        ))
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_gold_merge_on_key_with_two_different_rows_is_an_error_not_a_row_order_pick() {
    let mut def = rw33("scd1");
    def.gold = serde_json::from_value(json!([{"name": "tiers", "description": "",
        "sql": "SELECT tier, customer_id FROM silver.t", "merge_on": ["tier"]}]))
    .unwrap();
    let mut p = playground(def).await;
    let v = ingest_case!(&mut p, "rw-33-merge-ties-batch-1.csv").await;
    assert_eq!(v.gold[0].error, None);
    let v = ingest_case!(&mut p, "rw-33-merge-ties-batch-2.csv").await;
    assert_eq!(
        v.gold[0].error.as_deref(),
        Some("MERGE ON tier: the query returns different rows for tier=bronze; a MERGE needs one row per key (group by tier, or filter), or the row order would decide which one is written")
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_null_key_renamed_by_the_select_list_is_quarantined_not_a_failed_run() {
    let mut def = merged(
        &RW33_COLUMNS,
        json!({"keys": ["cid"], "sequence_by": "updated_at"}),
        json!([]),
        json!([]),
    );
    def.silver[0].select = vec![
        "customer_id AS cid".into(),
        "tier".into(),
        "updated_at".into(),
    ];
    let mut p = playground(def).await;
    let csv = b"customer_id,email,tier,updated_at\n,x@example.test,gold,2024-08-01T09:00:00Z\nC-1,a@example.test,silver,2024-08-01T09:00:00Z\n";
    let v = ingest(&mut p, "t.csv", csv).await;
    assert!(v.run.ok, "{:?}", v.run.errors);
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &["cid", "tier"]),
        ["C-1|silver"]
    );
    assert_eq!(
        grid(
            &rows(&mut p, "silver.quarantine").await,
            &["rule_id", "reason"]
        ),
        ["merge|merge: cid is NULL (a merge key of silver.t)"]
    );
    assert_eq!(
        check(&v, "A1").observed,
        "bronze 2 = silver 1 + quarantine 1 + removed by merge 0"
    );
}

/// Silver `t` (columns `cols`), the open quarantine as `raw_payload|reason`
/// and check A1's text after ingesting `files` in order, one run each.
async fn merged_files(
    def: PipelineDef,
    files: &[&[u8]],
    cols: &[&str],
) -> (Vec<String>, Vec<String>, String) {
    let mut p = playground(def).await;
    let mut a1 = String::new();
    for (i, f) in files.iter().enumerate() {
        let v = ingest(&mut p, &format!("f{i}.csv"), f).await;
        assert!(v.run.ok, "{:?}", v.run.errors);
        a1 = check(&v, "A1").observed.clone();
    }
    let silver = grid(&rows(&mut p, "silver.t").await, cols);
    let q = grid(
        &rows(&mut p, "silver.quarantine").await,
        &["raw_payload", "reason", "closed_in_run"],
    )
    .into_iter()
    .filter_map(|r| r.strip_suffix("|NULL").map(str::to_string))
    .collect();
    (silver, q, a1)
}

const SRC_COLUMNS: [(&str, &str); 4] = [
    ("id", "STRING"),
    ("tier", "STRING"),
    ("ts", "TIMESTAMP"),
    ("src", "STRING"),
];

/// Probe (kind 3): two rows of one key and one `sequence_by` value that
/// differ only in a `track_history_except` column (`src` = crm / web), in two
/// files in either order. Before: silver kept whichever arrived first. Now
/// the tie is ambiguous (silver stores `src`, and only arrival could pick
/// it): both rows quarantined, the same table and quarantine in both orders.
#[wasm_bindgen_test(unsupported = tokio::test)]
async fn k3_a_tie_differing_only_in_an_untracked_column_is_ambiguous_in_either_order() {
    let crm: &[u8] = b"id,tier,ts,src\nA,gold,2024-01-01T00:00:00Z,crm\n";
    let web: &[u8] = b"id,tier,ts,src\nA,gold,2024-01-01T00:00:00Z,web\n";
    let earlier: &[u8] = b"id,tier,ts,src\nA,silver,2023-12-31T00:00:00Z,crm\n";
    let reason = "merge: ambiguous tie: 2 rows have id=A and ts=2024-01-01 00:00:00, and they differ in src (crm, web) (in track_history_except, so no new version, but silver stores one value of it); none of them is applied (nothing says which came last) and the key had no state before them, so it is not in silver unless a later row gives it one";
    let quarantine = vec![
        format!("A,gold,2024-01-01T00:00:00Z,crm|{reason}"),
        format!("A,gold,2024-01-01T00:00:00Z,web|{reason}"),
    ];
    for scd in ["scd1", "scd2"] {
        let spec = json!({"keys": ["id"], "sequence_by": "ts", "stored_as": scd, "track_history_except": ["src"]});
        let def = || merged(&SRC_COLUMNS, spec.clone(), json!([]), json!([]));
        for files in [[crm, web], [web, crm]] {
            let got = merged_files(def(), &files, &["id", "tier", "src"]).await;
            assert_eq!(
                got,
                (
                    vec![],
                    quarantine.clone(),
                    "bronze 2 = silver 0 + quarantine 2 + removed by merge 0".to_string()
                ),
                "{scd}"
            );
            // With an earlier state, the key keeps it.
            let got = merged_files(
                def(),
                &[earlier, files[0], files[1]],
                &["id", "tier", "src", "ts"],
            )
            .await;
            assert_eq!(got.0, ["A|silver|crm|2023-12-31 00:00:00"], "{scd}");
            assert_eq!(
                (got.1.len(), got.2.as_str()),
                (2, "bronze 3 = silver 1 + quarantine 2 + removed by merge 0"),
                "{scd}"
            );
            let kept = reason.replace("the key had no state before them, so it is not in silver unless a later row gives it one", "the key keeps its earlier state");
            assert!(
                got.1.iter().all(|q| q.ends_with(&kept)),
                "{scd}: {:?}",
                got.1
            );
        }
        // The same src twice at one ts: a re-sent row, one stands for both.
        let got = merged_files(def(), &[crm, crm], &["id", "tier", "src"]).await;
        assert_eq!(
            got,
            (
                vec!["A|gold|crm".to_string()],
                vec![],
                "bronze 2 = silver 1 + quarantine 0 + removed by merge 1".to_string()
            ),
            "{scd}"
        );
        // A later row that changes only src opens no version and changes
        // nothing: the sequence decides which src is kept, never arrival.
        let later: &[u8] = b"id,tier,ts,src\nA,gold,2024-01-02T00:00:00Z,web\n";
        for files in [[crm, later], [later, crm]] {
            let got = merged_files(def(), &files, &["id", "tier", "src", "ts"]).await;
            assert_eq!(got.0, ["A|gold|crm|2024-01-01 00:00:00"], "{scd}");
            assert_eq!(
                got.2, "bronze 2 = silver 1 + quarantine 0 + removed by merge 1",
                "{scd}"
            );
        }
    }
}

/// Probe (kind 3, passing shapes): ties between two spellings of one
/// instant, 1.0 vs 1, null-safe keys, two rows of a key in one snapshot, a
/// delete tied with an upsert (and two deletes that differ in a value: one
/// delete), an incremental SCD2 tie with a merged row.
#[wasm_bindgen_test(unsupported = tokio::test)]
async fn k3_ties_in_other_shapes_are_ambiguous() {
    let spec = json!({"keys": ["id"], "sequence_by": "ts"});
    let (s, q, _) = merged_files(
        merged(&SRC_COLUMNS, spec, json!([]), json!([])),
        &[b"id,tier,ts,src\nA,gold,2024-01-01T08:00:00Z,x\nA,silver,2024-01-01T10:00:00+02:00,x\n"],
        &["id"],
    )
    .await;
    assert_eq!((s.len(), q.len()), (0, 2));
    assert!(q[0].ends_with("2 rows have id=A and ts=2024-01-01 08:00:00, and they differ in tier (gold, silver); none of them is applied (nothing says which came last) and the key had no state before them, so it is not in silver unless a later row gives it one"), "{q:?}");
    let (s, q, _) = merged_files(
        merged(
            &[("id", "STRING"), ("tier", "STRING"), ("seq", "DOUBLE")],
            json!({"keys": ["id"], "sequence_by": "seq"}),
            json!([]),
            json!([]),
        ),
        &[b"id,tier,seq\nA,silver,1.0\nA,gold,1\n"],
        &["id"],
    )
    .await;
    assert_eq!((s.len(), q.len()), (0, 2));
    let (s, q, a1) = merged_files(
        merged(
            &[
                ("w", "STRING"),
                ("bin", "STRING"),
                ("qty", "INT"),
                ("ts", "INT"),
            ],
            json!({"keys": ["w", "bin"], "sequence_by": "ts", "null_safe_keys": true}),
            json!([]),
            json!([]),
        ),
        &[b"w,bin,qty,ts\nW1,,1,5\nW1,,2,5\nW1,B,3,6\n"],
        &["w", "bin", "qty"],
    )
    .await;
    assert_eq!(s, ["W1|B|3"]);
    assert!(
        q[0].contains("ambiguous tie: 2 rows have w=W1, bin=NULL and ts=5"),
        "{q:?}"
    );
    assert_eq!(
        a1,
        "bronze 3 = silver 1 + quarantine 2 + removed by merge 0"
    );
    let (s, q, _) = merged_files(
        merged(
            &[("d", "DATE"), ("k", "STRING"), ("qty", "INT")],
            json!({"keys": ["k"], "sequence_by": "d", "from_snapshots": true}),
            json!([]),
            json!([]),
        ),
        &[
            b"d,k,qty\n2024-01-01,A,1\n2024-01-01,B,1\n",
            b"d,k,qty\n2024-01-02,A,2\n2024-01-02,A,3\n",
        ],
        &["k", "qty"],
    )
    .await;
    assert_eq!((s, q.len()), (vec!["A|1".to_string()], 2));
    let cdc = [
        ("id", "STRING"),
        ("op", "STRING"),
        ("v", "INT"),
        ("ts", "INT"),
    ];
    let (s, q, _) = merged_files(
        merged(&cdc, json!({"keys": ["id"], "sequence_by": "ts", "stored_as": "scd2", "delete_when": "op = 'd'"}), json!([]), json!([])),
        &[b"id,op,v,ts\nA,c,1,1\nB,c,1,1\n", b"id,op,v,ts\nA,d,1,2\nA,u,2,2\nB,d,1,2\nB,d,9,2\n"],
        &["id", "v", "valid_from", "valid_to", "is_current"],
    )
    .await;
    assert_eq!(s, ["A|1|1|NULL|true", "B|1|1|2|false"]);
    // The delete listed first, whichever arrived first.
    assert_eq!(
        q.iter()
            .map(|r| r.split('|').next().unwrap_or(""))
            .collect::<Vec<_>>(),
        ["A,d,1,2", "A,u,2,2"]
    );
    let mut p = playground(merged(
        &cdc,
        json!({"keys": ["id"], "sequence_by": "ts", "stored_as": "scd2"}),
        json!([]),
        json!([]),
    ))
    .await;
    set_mode(&mut p, medallion_engine::api::RunMode::Incremental).await;
    ingest(&mut p, "1.csv", b"id,op,v,ts\nA,c,1,1\nA,u,2,2\n").await;
    ingest(&mut p, "2.csv", b"id,op,v,ts\nA,u,3,2\n").await;
    assert_eq!(
        grid(
            &rows(&mut p, "silver.t").await,
            &["id", "v", "valid_from", "valid_to", "is_current"]
        ),
        ["A|1|1|NULL|true"]
    );
    assert!(replay_identical(&mut p).await);
}

/// Snapshots (kind 3): a file holding two snapshot versions, one of whose
/// rows (B) is quarantined with a NULL version. B was in that file's
/// snapshots, so none of them deletes it; C is really gone from day 2.
/// Before, only the snapshot of the file's first row was held: silver was
/// `A|2` (B deleted) in one row order and `A|2, B|1, C|1` (C kept) in the other.
/// Two files with the same snapshot version in either order are one snapshot.
#[wasm_bindgen_test(unsupported = tokio::test)]
async fn k3_snapshot_holds_and_versions_do_not_depend_on_row_or_file_order() {
    let def = || {
        merged(
            &[("d", "DATE"), ("k", "STRING"), ("qty", "INT")],
            json!({"keys": ["k"], "sequence_by": "d", "from_snapshots": true}),
            json!([]),
            json!([]),
        )
    };
    for file in [
        &b"d,k,qty\n2024-01-01,A,1\n2024-01-01,B,1\n2024-01-01,C,1\n2024-01-02,A,2\n,B,2\n"[..],
        &b"d,k,qty\n2024-01-02,A,2\n,B,2\n2024-01-01,A,1\n2024-01-01,B,1\n2024-01-01,C,1\n"[..],
    ] {
        let (s, q, a1) = merged_files(def(), &[file], &["k", "qty", "d"]).await;
        assert_eq!(s, ["A|2|2024-01-02", "B|1|2024-01-01"]);
        assert_eq!(
            q,
            [",B,2|merge: d is NULL (the sequence_by column of silver.t)"]
        );
        assert_eq!(
            a1,
            "bronze 5 = silver 2 + quarantine 1 + removed by merge 2"
        );
    }
    let one: &[u8] = b"d,k,qty\n2024-01-01,A,1\n2024-01-01,B,1\n";
    let two: &[u8] = b"d,k,qty\n2024-01-01,C,1\n2024-01-01,B,2\n";
    let day2: &[u8] = b"d,k,qty\n2024-01-02,A,1\n";
    for files in [[one, two, day2], [two, one, day2]] {
        let (s, q, a1) = merged_files(def(), &files, &["k", "qty", "d"]).await;
        assert_eq!(s, ["A|1|2024-01-01"]);
        assert_eq!(q.len(), 2);
        assert_eq!(
            a1,
            "bronze 5 = silver 1 + quarantine 2 + removed by merge 2"
        );
    }
}

/// A check's status, text and NULL count.
fn figures(v: &PipelineView, id: &str) -> (String, String, Option<usize>) {
    let c = check(v, id);
    (format!("{:?}", c.status), c.observed.clone(), c.nulls)
}

/// Probe (kind 7): every check that looks at column values says how many
/// NULLs it saw. Before: `row_predicate` said "(1 because a value is NULL)"
/// but its `nulls` was None, and so were column_type, columns_exist,
/// source_columns_present, timestamp_offsets and compare_average.
#[wasm_bindgen_test(unsupported = tokio::test)]
async fn k7_every_check_that_reads_values_counts_its_nulls() {
    let mut def = pipeline(
        &[("a", "STRING"), ("n", "INT"), ("ts", "TIMESTAMP")],
        json!([]),
        &[],
    );
    let c = |id: &str, level: &str, kind: serde_json::Value| {
        let mut o = json!({"id": id, "level": level, "description": ""});
        o.as_object_mut()
            .unwrap()
            .extend(kind.as_object().unwrap().clone());
        o
    };
    def.checks = serde_json::from_value(json!([
        c("P1", "row", json!({"kind": "row_predicate", "table": "silver.t", "predicate": "n > 0"})),
        c("T1", "schema", json!({"kind": "column_type", "table": "silver.t", "column": "n", "data_type": "INT"})),
        c("T2", "schema", json!({"kind": "column_type", "table": "silver.t", "column": "zz", "data_type": "INT"})),
        c("E1", "schema", json!({"kind": "columns_exist", "table": "silver.t", "columns": ["a", "n", "zz"]})),
        c("S1", "schema", json!({"kind": "source_columns_present", "bronze_table": "bronze.t"})),
        c("S2", "schema", json!({"kind": "timestamp_offsets", "bronze_table": "bronze.t"})),
        c("M1", "aggregate", json!({"kind": "compare_average", "silver_table": "silver.t", "column": "n"})),
        c("N1", "row", json!({"kind": "not_null", "table": "silver.t", "column": "n"})),
        c("A1", "aggregate", json!({"kind": "reconciliation", "bronze_table": "bronze.t", "silver_table": "silver.t"})),
        c("F1", "aggregate", json!({"kind": "filtered_share", "bronze_table": "bronze.t", "silver_table": "silver.t", "warn_above_pct": 50.0})),
        c("Q1", "aggregate", json!({"kind": "audit", "sql": "SELECT * FROM silver.t WHERE n > 5"})),
    ]))
    .unwrap();
    let mut p = playground(def).await;
    let v = ingest(&mut p, "a.csv", b"a,n,ts\nx,1,2024-01-01T00:00:00Z\ny,,\n").await;
    let r = |id: &str| figures(&v, id);
    let want = |status: &str, observed: &str, nulls: Option<usize>| {
        (status.to_string(), observed.to_string(), nulls)
    };
    assert_eq!(
        r("P1"),
        want(
            "Fail",
            "1 of 2 rows violate (1 because a value is NULL)",
            Some(1)
        )
    );
    assert_eq!(r("T1"), want("Pass", "INT; 1 NULL seen", Some(1)));
    assert_eq!(r("T2"), want("Fail", "column zz is missing", None));
    assert_eq!(r("E1"), want("Fail", "missing: zz; 1 NULL seen", Some(1)));
    assert_eq!(
        r("S1"),
        want("Pass", "every declared column is in every batch", Some(0))
    );
    assert_eq!(
        r("S2"),
        want(
            "Pass",
            "every TIMESTAMP value had an offset or a declared time zone; 1 NULL seen",
            Some(1)
        )
    );
    assert_eq!(r("M1"), want("Info", "bronze 1.00 → silver 1.00; 2 NULLs seen (bronze 1, silver 1), left out of the averages", Some(2)));
    assert_eq!(
        r("N1"),
        want("Fail", "1 of 2 rows violate; 1 NULL seen", Some(1))
    );
    assert_eq!(
        r("A1"),
        want("Pass", "bronze 2 = silver 2 + quarantine 0", None)
    );
    assert_eq!(
        r("F1"),
        want(
            "Pass",
            "0 of 2 rows did not reach silver (0.00%, threshold 50%)",
            None
        )
    );
    assert_eq!(r("Q1"), want("Pass", "0 rows returned (0 expected)", None));
    // No NULL: the count is 0 and the texts are as before.
    // No NULL among the values read: the count is 0 and the texts are as
    // before; a column absent from a batch is counted by S1.
    let mut p2 = playground({
        let mut d = pipeline(&[("a", "STRING"), ("n", "INT"), ("ts", "TIMESTAMP")], json!([]), &[]);
        d.checks = serde_json::from_value(json!([
            c("P1", "row", json!({"kind": "row_predicate", "table": "silver.t", "predicate": "n > 0"})),
            c("T1", "schema", json!({"kind": "column_type", "table": "silver.t", "column": "n", "data_type": "INT"})),
            c("M1", "aggregate", json!({"kind": "compare_average", "silver_table": "silver.t", "column": "n"})),
            c("S1", "schema", json!({"kind": "source_columns_present", "bronze_table": "bronze.t"})),
        ]))
        .unwrap();
        d
    })
    .await;
    ingest(&mut p2, "a.csv", b"a,n,ts\nx,1,2024-01-01T00:00:00Z\n").await;
    let v = ingest(&mut p2, "b.csv", b"a,n\nz,2\n").await;
    let r = |id: &str| figures(&v, id);
    assert_eq!(r("P1"), want("Pass", "0 of 2 rows violate", Some(0)));
    assert_eq!(r("T1"), want("Pass", "INT", Some(0)));
    assert_eq!(r("M1"), want("Info", "bronze 1.50 → silver 1.50", Some(0)));
    assert_eq!(
        r("S1"),
        want(
            "Warn",
            "ts (absent in 1 of 2 batches, read as NULL); 1 NULL seen",
            Some(1)
        )
    );
}

// ---- end of MERGE, snapshots and checks ----

// ---- JSON arrays: rw-49 ----

/// rw-49's pipeline: bronze `t` read as `order_id` and `lines` (STRING: the
/// array's JSON text), silver `t` (one row per order, `parent_rules`) and
/// silver `order_lines` exploding `lines` (`child` is merged into its
/// definition), `gold` models, and an A1 reconciliation check for each table.
fn orders(
    child: serde_json::Value,
    parent_rules: serde_json::Value,
    gold: &[(&str, &str)],
) -> PipelineDef {
    let mut lines = json!({
        "name": "order_lines",
        "source": "t",
        "rules": {"rules": []},
        "description": "one row per order line",
        "explode": {
            "path": "lines",
            "parent_columns": ["order_id"],
            "position_column": "position",
            "columns": [
                {"name": "sku", "type": "STRING"},
                {"name": "qty", "type": "INT"},
                {"name": "price", "type": "DECIMAL(10,2)"}
            ]
        }
    });
    if let (Some(target), Some(extra)) = (lines.as_object_mut(), child.as_object()) {
        for (k, v) in extra {
            if k == "explode" {
                for (ek, ev) in v.as_object().expect("explode object") {
                    target["explode"][ek] = ev.clone();
                }
            } else {
                target.insert(k.clone(), v.clone());
            }
        }
    }
    let a1 = |id: &str, silver: &str| {
        json!({"id": id, "level": "aggregate", "description": "", "kind": "reconciliation",
               "bronze_table": "bronze.t", "silver_table": silver})
    };
    pipeline_json(json!({
        "title": "rw-49",
        "bronze": [{
            "name": "t",
            "source_system": "case_files",
            "schema": {"columns": [
                {"name": "order_id", "type": "STRING"},
                {"name": "lines", "type": "STRING"}
            ]},
            "description": ""
        }],
        "silver": [
            {"name": "t", "source": "t", "rules": {"rules": parent_rules}, "description": ""},
            lines
        ],
        "gold": gold.iter().map(|(n, sql)| json!({"name": n, "sql": sql, "description": ""})).collect::<Vec<_>>(),
        "checks": [a1("A1", "silver.t"), a1("A1_lines", "silver.order_lines")]
    }))
}

/// Replaces silver table `table`'s rules (JSON rule objects) and reruns.
async fn set_rules(p: &mut Playground, table: &str, rules: serde_json::Value) -> PipelineView {
    let rules = serde_json::from_value(rules).expect("rules");
    send(
        p,
        Request::SetRules {
            silver_table: table.into(),
            rules,
        },
    )
    .await
}

/// `rule` with its `action` (warn / drop / fail).
fn with_action(mut rule: serde_json::Value, action: &str) -> serde_json::Value {
    rule["action"] = json!(action);
    rule
}

fn check<'a>(v: &'a PipelineView, id: &str) -> &'a medallion_engine::checks::CheckResult {
    v.checks
        .iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("no check {id}"))
}

const REVENUE: (&str, &str) = (
    "revenue",
    "SELECT SUM(qty * price) AS revenue FROM silver.order_lines",
);

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw49_explode_gives_one_row_per_line_keyed_by_order_and_position() {
    let mut p = playground(orders(json!({}), json!([]), &[REVENUE])).await;
    let v = ingest(&mut p, "rw-49.jsonl", case!("rw-49-json-arrays.jsonl")).await;
    assert!(v.run.ok, "{:?}", v.run.errors);

    let parent = rows(&mut p, "silver.t").await;
    assert_eq!(
        col(&parent, "order_id"),
        [Some("K-1"), Some("K-2"), Some("K-3"), Some("K-4")]
    );
    let k1_event = col(&parent, "_event_id")[0].expect("event id").to_string();
    let k1_batch = col(&parent, "_batch_id")[0].expect("batch id").to_string();

    let lines = rows(&mut p, "silver.order_lines").await;
    assert_eq!(
        grid(&lines, &["order_id", "position", "sku", "qty", "price"]),
        ["K-1|0|X|1|2.00", "K-1|1|Y|3|1.50"]
    );
    let types: Vec<(&str, &str)> = lines
        .columns
        .iter()
        .map(|c| (c.name.as_str(), c.data_type.as_str()))
        .collect();
    assert_eq!(
        types[..5],
        [
            ("order_id", "STRING"),
            ("position", "INT"),
            ("sku", "STRING"),
            ("qty", "INT"),
            ("price", "DECIMAL(10,2)")
        ]
    );
    // Lineage: both elements are the K-1 record's event and batch.
    assert_eq!(col(&lines, "_event_id"), [Some(k1_event.as_str()); 2]);
    assert_eq!(col(&lines, "_batch_id"), [Some(k1_batch.as_str()); 2]);

    let gold = rows(&mut p, "gold.revenue").await;
    assert_eq!(col(&gold, "revenue"), [Some("6.50")]);

    // What the explode read: K-2 empty, K-3 null, K-4 missing.
    let card = v
        .silver
        .iter()
        .find(|s| s.name == "silver.order_lines")
        .expect("child card");
    let stats = card.explode_stats.expect("explode stats");
    assert_eq!(
        (
            stats.records,
            stats.with_elements,
            stats.elements,
            stats.empty,
            stats.null,
            stats.missing,
            stats.unreadable,
            stats.rows
        ),
        (4, 1, 2, 1, 1, 1, 0, 2)
    );
    assert_eq!(
        card.explode.as_ref().map(|e| e.path.as_str()),
        Some("lines")
    );
    // Reconciliation: the parent counts records, the child counts elements.
    assert_eq!(
        check(&v, "A1").observed,
        "bronze 4 = silver 4 + quarantine 0"
    );
    let a1 = check(&v, "A1_lines");
    assert_eq!(a1.status, medallion_engine::checks::CheckStatus::Pass);
    assert_eq!(
        a1.observed,
        "bronze 4 records → 2 exploded rows (2 elements; records without elements: 1 empty, 1 null, 1 missing; 0 unreadable) = silver 2 + quarantine 0"
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw49_child_table_merges_on_order_and_position() {
    let merge = json!({"merge": {"keys": ["order_id", "position"]}});
    let mut p = playground(orders(merge, json!([]), &[REVENUE])).await;
    ingest(&mut p, "rw-49.jsonl", case!("rw-49-json-arrays.jsonl")).await;
    // The same file again: bronze holds every line twice, the merge keeps one.
    let v = ingest(
        &mut p,
        "rw-49-again.jsonl",
        case!("rw-49-json-arrays.jsonl"),
    )
    .await;
    assert!(v.run.ok, "{:?}", v.run.errors);
    let lines = rows(&mut p, "silver.order_lines").await;
    assert_eq!(
        grid(&lines, &["order_id", "position", "sku", "qty", "price"]),
        ["K-1|0|X|1|2.00", "K-1|1|Y|3|1.50"]
    );
    assert_eq!(
        col(&rows(&mut p, "gold.revenue").await, "revenue"),
        [Some("6.50")]
    );
    let a1 = check(&v, "A1_lines");
    assert_eq!(a1.status, medallion_engine::checks::CheckStatus::Pass);
    assert_eq!(
        a1.observed,
        "bronze 8 records → 4 exploded rows (4 elements; records without elements: 2 empty, 2 null, 2 missing; 0 unreadable) = silver 2 + quarantine 0 + removed by merge 2"
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw49_outer_explode_keeps_orders_without_lines_and_says_why() {
    let outer = json!({"explode": {"outer": true, "state_column": "lines_state"}});
    let by_state = (
        "lines_by_state",
        "SELECT lines_state, COUNT(*) AS n FROM silver.order_lines GROUP BY lines_state ORDER BY lines_state",
    );
    let mut p = playground(orders(outer, json!([]), &[REVENUE, by_state])).await;
    let v = ingest(&mut p, "rw-49.jsonl", case!("rw-49-json-arrays.jsonl")).await;
    assert!(v.run.ok, "{:?}", v.run.errors);
    let lines = rows(&mut p, "silver.order_lines").await;
    assert_eq!(
        grid(
            &lines,
            &["order_id", "position", "lines_state", "sku", "qty", "price"]
        ),
        [
            "K-1|0|array|X|1|2.00",
            "K-1|1|array|Y|3|1.50",
            "K-2|NULL|empty|NULL|NULL|NULL",
            "K-3|NULL|null|NULL|NULL|NULL",
            "K-4|NULL|missing|NULL|NULL|NULL"
        ]
    );
    assert_eq!(
        col(&rows(&mut p, "gold.revenue").await, "revenue"),
        [Some("6.50")]
    );
    assert_eq!(
        grid(
            &rows(&mut p, "gold.lines_by_state").await,
            &["lines_state", "n"]
        ),
        ["array|2", "empty|1", "missing|1", "null|1"]
    );
    assert_eq!(
        check(&v, "A1_lines").observed,
        "bronze 4 records → 5 exploded rows (2 elements; records without elements: 1 empty, 1 null, 1 missing; 0 unreadable) = silver 5 + quarantine 0"
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw49_bad_element_is_quarantined_with_its_record_lineage() {
    let file = concat!(
        "{\"order_id\":\"K-1\",\"lines\":[{\"sku\":\"X\",\"qty\":1,\"price\":2.00},{\"sku\":\"Y\",\"qty\":\"three\",\"price\":1.50}]}\n",
        "{\"order_id\":\"K-5\",\"lines\":\"oops\"}\n",
        "{\"order_id\":\"K-6\",\"lines\":[5,{\"sku\":\"Z\",\"qty\":2,\"price\":1.005}]}\n",
        "{\"order_id\":\"K-7\",\"lines\":[{\"sku\":\"W\",\"qty\":0,\"price\":1.00}]}\n",
    );
    let child = json!({"rules": {"rules": [rule("E1", "expect", "qty", "qty > 0")]}});
    let mut p = playground(orders(child, json!([]), &[REVENUE])).await;
    let v = ingest(&mut p, "bad-lines.jsonl", file.as_bytes()).await;
    assert!(v.run.ok, "{:?}", v.run.errors);
    let lines = rows(&mut p, "silver.order_lines").await;
    assert_eq!(
        grid(&lines, &["order_id", "position", "sku", "qty", "price"]),
        ["K-1|0|X|1|2.00"]
    );
    // The parent keeps every order: its `lines` is only text.
    assert_eq!(rows(&mut p, "silver.t").await.row_count, 4);

    let q = rows(&mut p, "silver.quarantine").await;
    let parent = rows(&mut p, "silver.t").await;
    let event_of = |order: &str| {
        let i = col(&parent, "order_id")
            .iter()
            .position(|o| *o == Some(order))
            .expect("order");
        col(&parent, "_event_id")[i].expect("event").to_string()
    };
    let mut got: Vec<(String, String, String)> = (0..q.rows.len())
        .filter(|&r| col(&q, "silver_table")[r] == Some("order_lines"))
        .map(|r| {
            (
                col(&q, "_event_id")[r].unwrap_or_default().to_string(),
                col(&q, "rule_id")[r].unwrap_or_default().to_string(),
                col(&q, "reason")[r].unwrap_or_default().to_string(),
            )
        })
        .collect();
    got.sort();
    let mut want = vec![
        (
            event_of("K-1"),
            "parse".to_string(),
            "parse: lines[1].qty: 'three' is not INT".to_string(),
        ),
        (
            event_of("K-5"),
            "parse".to_string(),
            "parse: lines is not an array: \"oops\"".to_string(),
        ),
        (
            event_of("K-6"),
            "parse".to_string(),
            "parse: lines[0] is not an object: 5".to_string(),
        ),
        (
            event_of("K-6"),
            "parse".to_string(),
            "parse: lines[1].price: '1.005' is not DECIMAL(10,2)".to_string(),
        ),
        (
            event_of("K-7"),
            "E1".to_string(),
            "E1: qty > 0 (qty = 0) [element lines[0]]".to_string(),
        ),
    ];
    want.sort();
    assert_eq!(got.len(), want.len(), "{got:?}");
    for (g, w) in got.iter().zip(&want) {
        assert_eq!((&g.0, &g.1), (&w.0, &w.1));
        assert!(g.2.starts_with(&w.2), "{} should start with {}", g.2, w.2);
    }
    // A quarantined element keeps its record's text and batch.
    let k1 = (0..q.rows.len())
        .find(|&r| col(&q, "reason")[r].is_some_and(|x| x.contains("'three'")))
        .expect("K-1 row");
    assert_eq!(col(&q, "raw_payload")[k1], file.lines().next());
    assert_eq!(col(&q, "_batch_id")[k1], col(&parent, "_batch_id")[0]);
    // Elements: 2 + 2 + 1, plus the unreadable K-5 record: 6 = 1 + 5.
    let a1 = check(&v, "A1_lines");
    assert_eq!(a1.status, medallion_engine::checks::CheckStatus::Pass);
    assert_eq!(
        a1.observed,
        "bronze 4 records → 6 exploded rows (5 elements; records without elements: 0 empty, 0 null, 0 missing; 1 unreadable) = silver 1 + quarantine 5"
    );
    // The trail of the child row shows its own element's outcome only.
    let trail = match p
        .handle(Request::Trail {
            table: TableName::silver("order_lines"),
            row: 0,
        })
        .await
    {
        Response::Trail(t) => t,
        other => panic!("unexpected {other:?}"),
    };
    assert_eq!(trail.records.len(), 1);
    assert_eq!(trail.records[0].event_id, event_of("K-1"));
    let e1: Vec<&str> = trail.records[0]
        .steps
        .iter()
        .filter(|s| s.rule_id == "E1")
        .map(|s| s.text.as_str())
        .collect();
    assert_eq!(e1, ["passed"]);
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw49_sql_rules_and_gold_read_json_text() {
    let n_lines = with_action(
        rule("E1", "enrich", "n_lines", "json_length(lines)"),
        "warn",
    );
    let has_lines = with_action(
        rule("X1", "expect", "lines", "json_length(lines) > 0"),
        "warn",
    );
    let first_sku = (
        "first_lines",
        "SELECT order_id, json_get_str(lines, 0, 'sku') AS first_sku, json_get_float(lines, 1, 'price') AS second_price FROM silver.t ORDER BY order_id",
    );
    let mut p = playground(orders(json!({}), json!([n_lines, has_lines]), &[first_sku])).await;
    let v = ingest(&mut p, "rw-49.jsonl", case!("rw-49-json-arrays.jsonl")).await;
    assert!(v.run.ok, "{:?}", v.run.errors);
    let parent = rows(&mut p, "silver.t").await;
    assert_eq!(
        grid(&parent, &["order_id", "n_lines"]),
        ["K-1|2", "K-2|0", "K-3|NULL", "K-4|NULL"]
    );
    let stat = |id: &str| {
        v.silver[0]
            .rules
            .iter()
            .find(|r| r.rule.id == id)
            .and_then(|r| r.stat.clone())
            .expect("stat")
    };
    assert_eq!((stat("E1").checked, stat("E1").failed), (4, 2));
    assert_eq!((stat("X1").checked, stat("X1").failed), (4, 3));
    assert_eq!(
        grid(
            &rows(&mut p, "gold.first_lines").await,
            &["order_id", "first_sku", "second_price"]
        ),
        [
            "K-1|X|1.5",
            "K-2|NULL|NULL",
            "K-3|NULL|NULL",
            "K-4|NULL|NULL"
        ]
    );

    // As a drop expectation: the orders without lines go to the quarantine.
    let drop = with_action(
        rule("X1", "expect", "lines", "json_length(lines) > 0"),
        "drop",
    );
    let v = set_rules(&mut p, "t", json!([drop])).await;
    assert!(v.run.ok, "{:?}", v.run.errors);
    assert_eq!(
        col(&rows(&mut p, "silver.t").await, "order_id"),
        [Some("K-1")]
    );
    let q = rows(&mut p, "silver.quarantine").await;
    let open: Vec<&str> = (0..q.rows.len())
        .filter(|&r| {
            col(&q, "silver_table")[r] == Some("t") && col(&q, "closed_in_run")[r].is_none()
        })
        .map(|r| col(&q, "rule_id")[r].unwrap_or_default())
        .collect();
    assert_eq!(open, ["X1", "X1", "X1"]);
    assert_eq!(
        check(&v, "A1").observed,
        "bronze 4 = silver 1 + quarantine 3"
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw49_gold_reads_json_of_raw_bronze_only_with_the_anti_pattern() {
    let shortcut = (
        "lines_from_bronze",
        "SELECT json_get_str(raw_payload, 'order_id') AS order_id, json_length(raw_payload, 'lines') AS n_lines FROM bronze.t ORDER BY order_id",
    );
    let mut p = playground(orders(json!({}), json!([]), &[shortcut])).await;
    let v = ingest(&mut p, "rw-49.jsonl", case!("rw-49-json-arrays.jsonl")).await;
    let error = v.gold[0].error.clone().unwrap_or_default();
    assert!(error.contains("reads bronze.t"), "{error}");
    let v = send(
        &mut p,
        Request::SetAntiPatterns {
            anti_patterns: medallion_engine::model::AntiPatterns {
                gold_reads_bronze: true,
                ..Default::default()
            },
        },
    )
    .await;
    assert_eq!(v.gold[0].error, None);
    assert_eq!(v.gold[0].reads_bronze, ["bronze.t"]);
    assert_eq!(
        grid(
            &rows(&mut p, "gold.lines_from_bronze").await,
            &["order_id", "n_lines"]
        ),
        ["K-1|2", "K-2|0", "K-3|NULL", "K-4|NULL"]
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw49_incremental_runs_append_lines_and_still_reconcile() {
    let mut p = playground(orders(json!({}), json!([]), &[REVENUE])).await;
    send(
        &mut p,
        Request::SetRunMode {
            mode: medallion_engine::api::RunMode::Incremental,
        },
    )
    .await;
    ingest(&mut p, "rw-49.jsonl", case!("rw-49-json-arrays.jsonl")).await;
    let more = b"{\"order_id\":\"K-8\",\"lines\":[{\"sku\":\"V\",\"qty\":2,\"price\":0.25}]}\n";
    let v = ingest(&mut p, "more.jsonl", more).await;
    assert!(v.run.ok, "{:?}", v.run.errors);
    assert_eq!(
        grid(
            &rows(&mut p, "silver.order_lines").await,
            &["order_id", "position", "sku"]
        ),
        ["K-1|0|X", "K-1|1|Y", "K-8|0|V"]
    );
    assert_eq!(
        col(&rows(&mut p, "gold.revenue").await, "revenue"),
        [Some("7.00")]
    );
    assert_eq!(
        check(&v, "A1_lines").observed,
        "bronze 5 records → 3 exploded rows (3 elements; records without elements: 1 empty, 1 null, 1 missing; 0 unreadable) = silver 3 + quarantine 0"
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn rw49_json_get_of_mixed_type_is_refused_with_the_typed_functions_named() {
    // json_get returns a value of mixed type (an Arrow Union), which Parquet
    // cannot store (its writer panics: that would kill the browser module).
    let first = with_action(
        rule("E1", "enrich", "first_qty", "json_get(lines, 0, 'qty')"),
        "warn",
    );
    let typed = ("g", "SELECT json_get(lines, 0) AS first_line FROM silver.t");
    let mut p = playground(orders(json!({}), json!([first]), &[typed])).await;
    let v = ingest(&mut p, "rw-49.jsonl", case!("rw-49-json-arrays.jsonl")).await;
    assert!(!v.run.ok);
    assert_eq!(
        v.silver[0].rules[0].error.as_deref(),
        Some("column first_qty holds JSON values of mixed types (what json_get returns), which a table cannot store: use json_get_str, json_get_int, json_get_float, json_get_bool or json_get_json (the value's JSON text) instead")
    );
    // The same in gold is that model's error; silver is built.
    let ok = with_action(
        rule("E1", "enrich", "first_qty", "json_get_int(lines, 0, 'qty')"),
        "warn",
    );
    let v = set_rules(&mut p, "t", json!([ok])).await;
    assert_eq!(v.silver[0].rules[0].error, None);
    assert_eq!(v.run.errors, Vec::<String>::new());
    assert_eq!(
        grid(&rows(&mut p, "silver.t").await, &["order_id", "first_qty"]),
        ["K-1|1", "K-2|NULL", "K-3|NULL", "K-4|NULL"]
    );
    assert_eq!(
        v.gold[0].error.as_deref(),
        Some("gold.g: column first_line holds JSON values of mixed types (what json_get returns), which a table cannot store: use json_get_str, json_get_int, json_get_float, json_get_bool or json_get_json (the value's JSON text) instead")
    );
}

/// An element's TIMESTAMP field without an offset is read as UTC and counted
/// for the child table, as a source column's is (third probe, kind 7); the
/// parent's columns are counted on the bronze table only.
#[wasm_bindgen_test(unsupported = tokio::test)]
async fn k7_explode_child_timestamp_without_offset_is_counted_as_read_as_utc() {
    let def = orders(
        json!({"explode": {"columns": [{"name": "sku", "type": "STRING"}, {"name": "at", "type": "TIMESTAMP"}]}}),
        json!([]),
        &[],
    );
    let mut p = playground(def).await;
    let file = b"{\"order_id\":\"K-1\",\"lines\":[{\"sku\":\"X\",\"at\":\"2024-01-01 10:00:00\"},{\"sku\":\"Y\",\"at\":\"2024-01-01T10:00:00Z\"}]}\n";
    let v = ingest(&mut p, "o.jsonl", file).await;
    assert_eq!(
        grid(&rows(&mut p, "silver.order_lines").await, &["sku", "at"]),
        ["X|2024-01-01 10:00:00", "Y|2024-01-01 10:00:00"]
    );
    let counted = |v: &PipelineView| -> Vec<(String, String, usize, usize)> {
        v.read_as_utc
            .iter()
            .map(|r| {
                (
                    r.bronze_table.to_string(),
                    r.column.clone(),
                    r.without_offset,
                    r.values,
                )
            })
            .collect()
    };
    assert_eq!(
        counted(&v),
        [("silver.order_lines".to_string(), "at".to_string(), 1, 2)]
    );
    // Every run counts all of the table's batches once.
    let v = ingest(&mut p, "o2.jsonl", file).await;
    assert_eq!(
        counted(&v),
        [("silver.order_lines".to_string(), "at".to_string(), 2, 4)]
    );
    // An incremental run adds its new batch's counts to the earlier ones.
    set_mode(&mut p, medallion_engine::api::RunMode::Incremental).await;
    let v = ingest(&mut p, "o3.jsonl", file).await;
    assert_eq!(
        counted(&v),
        [("silver.order_lines".to_string(), "at".to_string(), 3, 6)]
    );
}

// ---- end of JSON arrays ----

// ---- Third round (probe 2 of issue 9): JSON "" strings, NaN and -0.0
// sequences, DATE columns given a timestamp ----

/// Silver `t`'s data rows and the open quarantine (`rule_id|reason`) after
/// ingesting `files` in order (one run each) into `def`.
async fn silver_and_quarantine(def: PipelineDef, files: &[&[u8]]) -> (Vec<String>, Vec<String>) {
    let mut p = playground(def).await;
    for (i, f) in files.iter().enumerate() {
        let v = ingest(&mut p, &format!("f{i}"), f).await;
        assert!(v.run.ok, "{:?}", v.run.errors);
    }
    let t = rows(&mut p, "silver.t").await;
    let names: Vec<&str> = t
        .columns
        .iter()
        .map(|c| c.name.as_str())
        .filter(|n| !n.starts_with('_'))
        .collect();
    let silver = grid(&t, &names);
    let q = grid(
        &rows(&mut p, "silver.quarantine").await,
        &["rule_id", "reason", "closed_in_run"],
    )
    .into_iter()
    .filter_map(|r| r.strip_suffix("|NULL").map(str::to_string))
    .collect();
    (silver, q)
}

/// Probe 2 (kind 7): JSON `""` in a STRING column was read as NULL (the CSV
/// null token applied to JSON). Now `""` is the empty string, `null` and a
/// missing key are NULL, in raw and typed bronze; `""` for an INT does not
/// convert (as Spark 3 refuses it), and an empty CSV field is still NULL.
#[wasm_bindgen_test(unsupported = tokio::test)]
async fn json_empty_string_is_the_empty_string_and_null_is_null() {
    let cols = [("id", "INT"), ("s", "STRING"), ("n", "INT")];
    let json: &[u8] = b"{\"id\":1,\"s\":\"\",\"n\":1}\n{\"id\":2,\"s\":null,\"n\":2}\n{\"id\":3,\"n\":3}\n{\"id\":4,\"s\":\"x\",\"n\":\"\"}\n";
    let csv: &[u8] = b"id,s,n\n5,,5\n";
    let (silver, q) = silver_and_quarantine(pipeline(&cols, json!([]), &[]), &[json, csv]).await;
    assert_eq!(silver, ["1||1", "2|NULL|2", "3|NULL|3", "5|NULL|5"]);
    assert_eq!(q, ["parse|parse: n: '' is not INT"]);
    let (silver, q) =
        silver_and_quarantine(typed_pipeline("permissive", &cols), &[json, csv]).await;
    assert_eq!(silver, ["1||1", "2|NULL|2", "3|NULL|3", "5|NULL|5"]);
    assert_eq!(q, ["parse|parse: n: '' is not INT"]);
}

/// Probe 2 (kind 3): with null-safe keys, JSON `null` and `""` are two keys
/// (before, `""` was read as NULL and one record silently superseded the other).
#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_null_safe_key_of_null_and_one_of_empty_string_are_two_keys() {
    let cols = [
        ("w", "STRING"),
        ("bin", "STRING"),
        ("qty", "INT"),
        ("ts", "INT"),
    ];
    let def = merged(
        &cols,
        json!({"keys": ["w", "bin"], "sequence_by": "ts", "null_safe_keys": true}),
        json!([]),
        json!([]),
    );
    let file: &[u8] = b"{\"w\":\"W1\",\"bin\":null,\"qty\":1,\"ts\":5}\n{\"w\":\"W1\",\"bin\":\"\",\"qty\":2,\"ts\":6}\n";
    let (silver, q) = silver_and_quarantine(def, &[file]).await;
    assert_eq!(silver, ["W1|NULL|1|5", "W1||2|6"]);
    assert!(q.is_empty(), "{q:?}");
}

/// An exploded element's `""` is the empty string too; `""` for an INT field does not convert.
#[wasm_bindgen_test(unsupported = tokio::test)]
async fn an_exploded_elements_empty_string_is_the_empty_string() {
    let mut p = playground(orders(json!({}), json!([]), &[])).await;
    let v = ingest(
        &mut p,
        "o.jsonl",
        b"{\"order_id\":\"K-1\",\"lines\":[{\"sku\":\"\",\"qty\":1,\"price\":1.00},{\"sku\":null,\"qty\":2,\"price\":2.00},{\"sku\":\"C\",\"qty\":\"\",\"price\":3.00}]}\n",
    )
    .await;
    assert!(v.run.ok, "{:?}", v.run.errors);
    let lines = rows(&mut p, "silver.order_lines").await;
    assert_eq!(
        grid(&lines, &["order_id", "position", "sku", "qty"]),
        ["K-1|0||1", "K-1|1|NULL|2"]
    );
    assert_eq!(
        quarantined(&mut p).await,
        ["parse|parse: lines[2].qty: '' is not INT"]
    );
}

const SEQ_D: [(&str, &str); 3] = [("id", "STRING"), ("tier", "STRING"), ("seq", "DOUBLE")];
const NAN_REASON: &str = "merge: seq is NaN for id=A (the sequence_by column of silver.t: NaN is not an order, neither before nor after any value)";

/// Probe 2 (kind 3): a NaN `sequence_by` value sorted after every number
/// (Arrow's total order), so it silently became the latest state (SCD1) or
/// the current version (SCD2). NaN is no order: the row is quarantined, as a
/// NULL sequence value is, naming the key and the column; Infinity is an order.
#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_nan_sequence_value_is_quarantined_never_the_latest() {
    let scd1 = json!({"keys": ["id"], "sequence_by": "seq"});
    let scd2 = json!({"keys": ["id"], "sequence_by": "seq", "stored_as": "scd2"});
    for file in [
        &b"id,tier,seq\nA,gold,5\nA,silver,NaN\n"[..],
        &b"id,tier,seq\nA,silver,NaN\nA,gold,5\n"[..],
    ] {
        let (silver, q) =
            silver_and_quarantine(merged(&SEQ_D, scd1.clone(), json!([]), json!([])), &[file])
                .await;
        assert_eq!(silver, ["A|gold|5.0"]);
        assert_eq!(q, [format!("merge|{NAN_REASON}")]);
        let (silver, q) =
            silver_and_quarantine(merged(&SEQ_D, scd2.clone(), json!([]), json!([])), &[file])
                .await;
        assert_eq!(silver, ["A|gold|5.0|5.0|NULL|true"]);
        assert_eq!(q, [format!("merge|{NAN_REASON}")]);
    }
    let (silver, q) = silver_and_quarantine(
        merged(&SEQ_D, scd1, json!([]), json!([])),
        &[b"id,tier,seq\nA,gold,Infinity\nA,silver,NaN\nA,bronze,1e308\n"],
    )
    .await;
    assert_eq!(silver, ["A|gold|inf"]);
    assert_eq!(q, [format!("merge|{NAN_REASON}")]);
}

const ZERO_TIE: &str = "merge: ambiguous tie: 2 rows have id=A and seq=0.0, and they differ in tier (gold, silver), seq (-0.0, 0.0); none of them is applied (nothing says which came last) and the key keeps its earlier state";

/// Probe 2 (kind 3): -0.0 sorted before 0.0 (by its sign bit), so the 0.0
/// row won in either order. They are one sequence value: a tie, ambiguous
/// when the rows differ, in either order, in one file or an incremental run.
#[wasm_bindgen_test(unsupported = tokio::test)]
async fn minus_zero_and_zero_sequence_values_are_a_tie() {
    let spec = json!({"keys": ["id"], "sequence_by": "seq"});
    let earlier: &[u8] = b"id,tier,seq\nA,bronze,-1\n";
    for (a, b) in [
        ("A,gold,-0.0", "A,silver,0.0"),
        ("A,silver,0.0", "A,gold,-0.0"),
    ] {
        let file = format!("id,tier,seq\n{a}\n{b}\n");
        let (silver, q) = silver_and_quarantine(
            merged(&SEQ_D, spec.clone(), json!([]), json!([])),
            &[earlier, file.as_bytes()],
        )
        .await;
        assert_eq!(silver, ["A|bronze|-1.0"]);
        assert_eq!(
            q,
            [format!("merge|{ZERO_TIE}"), format!("merge|{ZERO_TIE}")]
        );
        // The second row of the tie arrives in a later incremental run.
        let mut p = playground(merged(&SEQ_D, spec.clone(), json!([]), json!([]))).await;
        set_mode(&mut p, medallion_engine::api::RunMode::Incremental).await;
        for (i, f) in [format!("id,tier,seq\n{a}\n"), format!("id,tier,seq\n{b}\n")]
            .iter()
            .enumerate()
        {
            let v = ingest(&mut p, &format!("f{i}"), f.as_bytes()).await;
            assert!(v.run.ok, "{:?}", v.run.errors);
        }
        assert!(rows(&mut p, "silver.t").await.rows.is_empty());
        assert_eq!(quarantined(&mut p).await.len(), 2);
    }
    // 0.0 then 1.0: an order as before.
    let (silver, _) = silver_and_quarantine(
        merged(&SEQ_D, spec, json!([]), json!([])),
        &[b"id,tier,seq\nA,silver,1.0\nA,gold,-0.0\n"],
    )
    .await;
    assert_eq!(silver, ["A|silver|1.0"]);
}

const DATE_TIME: &str =
    "is a timestamp, not a DATE (declare the column TIMESTAMP, or CAST it in a rule)";
const DATE_OFFSET: &str = "is a timestamp with an offset, not a DATE (its date depends on the time zone; declare the column TIMESTAMP, or CAST it in a rule)";

/// Probe 2 (kind 7): a DATE column read `2024-01-01T23:30:00-05:00` as
/// 2024-01-02 (its UTC date) and `2024-01-01 23:30:00` as 2024-01-01, the
/// time dropped, both silently. A time of day is not a DATE: quarantined.
/// Midnight without an offset is the date it writes; an offset never gives
/// a date (even at midnight: the date depends on the zone). In raw and
/// typed bronze alike.
#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_date_column_given_a_timestamp_quarantines_it_never_cuts_or_shifts_it() {
    let cols = [("id", "STRING"), ("d", "DATE")];
    let file: &[u8] = b"id,d\n1,2024-01-01T23:30:00-05:00\n2,2024-01-02\n3,2024-01-01 23:30:00\n4,2024-01-03 00:00:00\n5,2024-01-04T00:00:00Z\n6,2024-01-05T00:00\n";
    let want_q = [
        format!("parse: d: '2024-01-01T23:30:00-05:00' {DATE_OFFSET}"),
        format!("parse: d: '2024-01-01 23:30:00' {DATE_TIME}"),
        format!("parse: d: '2024-01-04T00:00:00Z' {DATE_OFFSET}"),
    ];
    let (silver, q) = silver_and_quarantine(pipeline(&cols, json!([]), &[]), &[file]).await;
    assert_eq!(silver, ["2|2024-01-02", "4|2024-01-03", "6|2024-01-05"]);
    let want_q = want_q.map(|r| format!("parse|{r}"));
    assert_eq!(q, want_q);
    let (silver, q) = silver_and_quarantine(typed_pipeline("permissive", &cols), &[file]).await;
    assert_eq!(silver, ["2|2024-01-02", "4|2024-01-03", "6|2024-01-05"]);
    assert_eq!(q, want_q);
}

/// The same for a DATE with declared formats (a time part in the pattern,
/// an epoch), a normalization with type DATE and an exploded DATE field.
#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_date_read_by_format_normalization_or_explode_is_never_cut() {
    let def = pipeline_json(json!({
        "title": "dates", "gold": [], "checks": [],
        "bronze": [{"name": "t", "source_system": "f", "description": "", "schema": {"columns": [
            {"name": "id", "type": "STRING"},
            {"name": "d", "type": "DATE", "formats": ["MM/dd/yyyy HH:mm", "epoch_s"]},
            {"name": "s", "type": "STRING"}]}}],
        "silver": [{"name": "t", "source": "t", "description": "", "rules": {"rules": [
            {"id": "N1", "kind": "normalize", "column": "s", "expression": "s", "type": "DATE",
             "enabled": true, "rationale": ""}]}}]
    }));
    let file: &[u8] = b"id,d,s\n1,01/02/2024 00:00,2024-02-01\n2,01/02/2024 10:00,2024-02-01\n3,1704153600,2024-02-01 00:00:00\n4,1704157200,2024-02-01\n5,1704153600,2024-02-01 08:00:00\n";
    let (silver, q) = silver_and_quarantine(def, &[file]).await;
    assert_eq!(
        silver,
        ["1|2024-01-02|2024-02-01", "3|2024-01-02|2024-02-01"]
    );
    assert_eq!(
        q,
        [
            format!("parse|parse: d: '01/02/2024 10:00' {DATE_TIME}"),
            format!("parse|parse: d: '1704157200' {DATE_TIME}"),
            format!("N1|N1: s: '2024-02-01 08:00:00' {DATE_TIME}"),
        ]
    );
    let child = json!({"explode": {"columns": [{"name": "sku", "type": "STRING"}, {"name": "day", "type": "DATE"}]}});
    let mut p = playground(orders(child, json!([]), &[])).await;
    ingest(
        &mut p,
        "o.jsonl",
        b"{\"order_id\":\"K-1\",\"lines\":[{\"sku\":\"A\",\"day\":\"2024-03-01\"},{\"sku\":\"B\",\"day\":\"2024-03-01T22:00:00-05:00\"}]}\n",
    )
    .await;
    let lines = rows(&mut p, "silver.order_lines").await;
    assert_eq!(
        grid(&lines, &["position", "sku", "day"]),
        ["0|A|2024-03-01"]
    );
    assert_eq!(
        quarantined(&mut p).await,
        [format!(
            "parse|parse: lines[1].day: '2024-03-01T22:00:00-05:00' {DATE_OFFSET}"
        )]
    );
}
