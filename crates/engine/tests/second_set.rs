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

// ---- end of rules and rows ----

// ---- bronze reading: kinds 2, 4, 5, duplicate JSON keys ----

// ---- end of bronze reading ----

// ---- time zones and offsets: rw-43, rw-45 ----

// ---- end of time zones and offsets ----

// ---- MERGE, snapshots and checks: kind 3, rw-47, rw-51 ----

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
            table: "silver.order_lines".into(),
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

// ---- end of JSON arrays ----
