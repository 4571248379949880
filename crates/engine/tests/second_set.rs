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

// ---- end of JSON arrays ----
