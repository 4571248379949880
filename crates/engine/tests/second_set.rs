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
    let silver = rows(&mut p, "silver.t").await;
    assert_eq!(
        grid(&silver, &["id", "title", "path"]),
        [
            "2|Tab \\\\ bar|x",
            "3|D:\\\\data\\\\|ends with backslash",
            "1|The \"Quick\" Fox|plain",
            "2|Tab \\ bar|x",
            "3|D:\\data\\|ends with backslash"
        ]
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
        "header names read as: \" qty \" → qty, \"qty\" → qty_2, \"Qty\" → Qty_3, \"\" → _c4",
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

// ---- end of bronze reading ----

// ---- time zones and offsets: rw-43, rw-45 ----

// ---- end of time zones and offsets ----

// ---- MERGE, snapshots and checks: kind 3, rw-47, rw-51 ----

// ---- end of MERGE, snapshots and checks ----

// ---- JSON arrays: rw-49 ----

// ---- end of JSON arrays ----
