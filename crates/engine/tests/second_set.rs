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

fn check<'a>(v: &'a PipelineView, id: &str) -> &'a medallion_engine::checks::CheckResult {
    v.checks.iter().find(|c| c.id == id).expect("check")
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
        [
            format!("merge|{RW33_TIE}|C-203,mia.q@example.test,silver,2024-08-02T08:00:00Z|rw-33-merge-ties-batch-2.csv"),
            format!("merge|{RW33_TIE}|C-203,mia.q@example.test,gold,2024-08-02T08:00:00Z|rw-33-merge-ties-batch-2.csv"),
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
            "C-203,mia.q@example.test,silver,2024-08-02T08:00:00Z|NULL",
            "C-203,mia.q@example.test,gold,2024-08-02T08:00:00Z|NULL",
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
            table: "silver.quarantine".into(),
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
            "C-203,mia.q@example.test,gold,2024-08-02T08:00:00Z",
            "quarantined"
        )
    );
    assert_eq!(
        r.steps.last().map(|s| (s.rule_id.as_str(), s.text.clone())),
        Some(("merge", format!("failed (drop): {RW33_TIE}")))
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

// ---- end of MERGE, snapshots and checks ----

// ---- JSON arrays: rw-49 ----

// ---- end of JSON arrays ----
