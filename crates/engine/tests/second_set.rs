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
            bronze_table: "bronze.t".into(),
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
            table: "silver.t".into(),
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
            bronze_table: "bronze.t".into(),
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

// ---- end of MERGE, snapshots and checks ----

// ---- JSON arrays: rw-49 ----

// ---- end of JSON arrays ----
