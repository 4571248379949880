//! Adversarial comparison of check reuse (`set_reuse_last_run(true)`) with
//! evaluation from scratch (`false`): two sessions get the very same
//! requests, and after every request the full `view.checks` JSON (status,
//! observed text, sample rows, NULLs) and whether the request failed must be
//! the same. Each test is one scenario aimed at a way a kept result could go
//! stale: gold models that fail, restores, replay, erasure, language,
//! incremental runs, anti-patterns, bronze tables, non-immutable and
//! subquery predicates / bounds, type changes, merged tables with reordered
//! rows, silver tables held back by a `fail` expectation, lookups between
//! silver tables.
#![cfg(not(target_arch = "wasm32"))]

use medallion_engine::api::{Request, Response};
use medallion_engine::Playground;
use serde_json::{json, Value};

#[path = "support/page.rs"]
#[allow(dead_code)] // the reuse tests use fixed_session only
mod support;

/// Rules of silver.t: `f1` filter of negative qty, `fail` an expectation
/// with the `fail` action (qty < 100), `dbl` a normalization of qty to DOUBLE.
fn t_rules(f1: bool, fail: bool, dbl: bool) -> Value {
    json!([
        {"id": "F1", "kind": "filter", "column": "qty", "expression": "qty < 0",
         "enabled": f1, "rationale": ""},
        {"id": "N1", "kind": "normalize", "column": "code", "expression": "upper(trim(code))",
         "enabled": true, "rationale": ""},
        {"id": "N2", "kind": "normalize", "column": "qty", "expression": "CAST(qty AS DOUBLE)",
         "enabled": dbl, "rationale": ""},
        {"id": "X1", "kind": "expect", "column": "qty", "expression": "qty < 100",
         "enabled": fail, "action": "fail", "rationale": ""}
    ])
}

fn tl_rules(on: bool) -> Value {
    json!([
        {"id": "N1", "kind": "normalize", "column": "code", "expression": "upper(trim(code))",
         "enabled": true, "rationale": ""},
        {"id": "E1", "kind": "enrich", "column": "name", "expression": "l.name",
         "lookup": {"table": "silver.lk", "alias": "l", "on": "code = l.code"},
         "enabled": on, "rationale": ""}
    ])
}

const GOLD_T: &str =
    "SELECT code, count(*) AS n, sum(qty) AS total FROM silver.t GROUP BY code ORDER BY code";
const GOLD_LK: &str = "SELECT code, count(*) AS n FROM silver.lk GROUP BY code ORDER BY code";

fn pipeline() -> Value {
    let table = |name: &str, columns: &[(&str, &str)]| {
        json!({"name": name, "source_system": "test", "description": "",
               "schema": {"columns": columns.iter()
                   .map(|(n, t)| json!({"name": n, "type": t})).collect::<Vec<_>>()}})
    };
    let row = |id: &str, table: &str, predicate: &str| {
        json!({"id": id, "level": "row", "description": "", "kind": "row_predicate",
               "table": table, "predicate": predicate})
    };
    json!({
        "title": "adversarial check reuse",
        "bronze": [table("t", &[("id", "INT"), ("code", "STRING"), ("qty", "INT")]),
                   table("lk", &[("code", "STRING"), ("name", "STRING")]),
                   table("m", &[("id", "INT"), ("v", "INT")]),
                   table("t2", &[("id", "INT"), ("code", "STRING"), ("qty", "INT")])],
        "silver": [
            {"name": "t", "source": "t", "rules": {"rules": t_rules(true, false, false)}, "description": ""},
            {"name": "lk", "source": "lk", "rules": {"rules": []}, "description": ""},
            {"name": "tl", "source": "t2", "rules": {"rules": tl_rules(true)}, "description": ""},
            {"name": "m", "source": "m", "rules": {"rules": []}, "description": "",
             "merge": {"keys": ["id"]}}
        ],
        "gold": [{"name": "by_code", "description": "", "sql": GOLD_T},
                 {"name": "lk_codes", "description": "", "sql": GOLD_LK}],
        "checks": [
            row("T1", "silver.t", "qty >= 0"),
            {"id": "T2", "level": "row", "description": "", "kind": "accepted_range",
             "table": "silver.t", "column": "qty", "min": "0", "max": "4"},
            {"id": "T3", "level": "row", "description": "", "kind": "accepted_range",
             "table": "silver.t", "column": "qty", "max": "(SELECT count(*) FROM silver.lk)"},
            {"id": "T4", "level": "row", "description": "", "kind": "accepted_range",
             "table": "silver.t", "column": "id", "max": "extract(year FROM CURRENT_DATE) - 2000"},
            row("T5", "silver.t", "qty <= max(qty) OVER () - 1"),
            row("T6", "silver.t", "row_number() OVER () < 3"),
            row("T7", "silver.t", "CURRENT_DATE > DATE '2000-01-01' AND qty < 3"),
            row("T8", "silver.t", "random() < 2 AND qty < 2"),
            row("T9", "silver.t", "now() > TIMESTAMP '2000-01-01 00:00:00' AND id < 3"),
            row("T10", "silver.t", "code IN (SELECT code FROM silver.lk)"),
            {"id": "T11", "level": "schema", "description": "", "kind": "column_type",
             "table": "silver.t", "column": "qty", "data_type": "INT"},
            {"id": "T12", "level": "schema", "description": "", "kind": "contract",
             "table": "silver.t", "columns": [
                 {"name": "id", "type": "INT"}, {"name": "code", "type": "STRING"},
                 {"name": "qty", "type": "INT", "nullable": false}]},
            {"id": "T13", "level": "row", "description": "", "kind": "not_null",
             "table": "silver.t", "column": "qty"},
            {"id": "T14", "level": "row", "description": "", "kind": "unique",
             "table": "silver.t", "columns": ["code"], "severity": "warn"},
            {"id": "T15", "level": "row", "description": "", "kind": "accepted_values",
             "table": "silver.t", "column": "code", "values": ["A", "B"]},
            {"id": "R1", "level": "row", "description": "", "kind": "relationships",
             "table": "silver.t", "column": "code", "to": "silver.lk", "field": "code"},
            {"id": "R2", "level": "row", "description": "", "kind": "relationships",
             "table": "silver.t", "column": "code", "to": "bronze.lk", "field": "raw_payload"},
            {"id": "B1", "level": "row", "description": "", "kind": "not_null",
             "table": "bronze.t", "column": "raw_payload"},
            row("B2", "bronze.t", "raw_payload NOT LIKE '%-%'"),
            {"id": "B3", "level": "row", "description": "", "kind": "unique",
             "table": "bronze.lk", "columns": ["raw_payload"]},
            {"id": "L1", "level": "row", "description": "", "kind": "unique",
             "table": "silver.lk", "columns": ["code"]},
            {"id": "L2", "level": "row", "description": "", "kind": "not_null",
             "table": "silver.lk", "column": "name"},
            {"id": "TL1", "level": "row", "description": "", "kind": "not_null",
             "table": "silver.tl", "column": "name"},
            row("TL2", "silver.tl", "name IS NOT NULL OR qty < 0"),
            {"id": "M1", "level": "row", "description": "", "kind": "unique",
             "table": "silver.m", "columns": ["id"]},
            row("M2", "silver.m", "v > 1"),
            row("M3", "silver.m", "row_number() OVER () = id"),
            row("M4", "silver.m", "v < lag(v) OVER () OR id = 1"),
            row("G1", "gold.by_code", "n < 2"),
            {"id": "G2", "level": "row", "description": "", "kind": "accepted_range",
             "table": "gold.by_code", "column": "total", "min": "0", "max": "3"},
            {"id": "G3", "level": "row", "description": "", "kind": "unique",
             "table": "gold.lk_codes", "columns": ["code"]},
            {"id": "G4", "level": "row", "description": "", "kind": "relationships",
             "table": "gold.by_code", "column": "code", "to": "silver.lk", "field": "code"},
            {"id": "G5", "level": "schema", "description": "", "kind": "column_type",
             "table": "gold.by_code", "column": "total", "data_type": "BIGINT"},
            {"id": "Q1", "level": "row", "description": "", "kind": "row_predicate",
             "table": "silver.quarantine", "predicate": "true"},
            {"id": "A1", "level": "aggregate", "description": "", "kind": "reconciliation",
             "bronze_table": "bronze.t", "silver_table": "silver.t"}
        ]
    })
}

const T_CSV: &str = "id,code,qty\n1,a,1\n2, b,5\n3,c,-1\n4,a,2\n";
const LK_CSV: &str = "code,name\nA,Alpha\nB,Bravo\nB,Bis\nZ,\n";
const M_CSV: &str = "id,v\n1,5\n2,3\n3,1\n";

fn ingest(table: &str, csv: &str) -> Request {
    Request::Ingest {
        table: table.into(),
        file_name: format!("{table}-{}.csv", csv.len()),
        bytes: csv.as_bytes().to_vec(),
        options: Default::default(),
    }
}

fn req(v: Value) -> Request {
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("request {v}: {e}"))
}

fn set_t(f1: bool, fail: bool, dbl: bool) -> Request {
    req(json!({"type": "set_rules", "silver_table": "t", "rules": t_rules(f1, fail, dbl)}))
}

fn set_tl(on: bool) -> Request {
    req(json!({"type": "set_rules", "silver_table": "tl", "rules": tl_rules(on)}))
}

fn gold(sql: &str) -> Request {
    req(json!({"type": "set_gold_sql", "model": "by_code", "sql": sql}))
}

fn run(full_refresh: bool) -> Request {
    req(json!({"type": "run", "full_refresh": full_refresh}))
}

fn restore(table: &str, version: u64) -> Request {
    req(json!({"type": "restore", "table": table, "version": version}))
}

fn mode(m: &str) -> Request {
    req(json!({"type": "set_run_mode", "mode": m}))
}

fn lang(l: &str) -> Request {
    req(json!({"type": "set_lang", "lang": l}))
}

async fn session(reuse: bool) -> Playground {
    support::fixed_session(pipeline(), reuse).await
}

/// What a request did, as comparable text: the error, or "ok".
fn outcome(r: &Response) -> String {
    match r {
        Response::Error { message } => format!("error: {message}"),
        _ => "ok".into(),
    }
}

async fn checks(p: &mut Playground) -> Value {
    let Response::Snapshot(view) = p.handle(Request::Snapshot).await else {
        panic!("snapshot")
    };
    serde_json::to_value(&view.checks).expect("checks json")
}

/// Differences between two checks arrays, one line per differing check.
fn diff(a: &Value, b: &Value) -> Vec<String> {
    let (a, b) = (a.as_array().unwrap(), b.as_array().unwrap());
    let mut out = Vec::new();
    if a.len() != b.len() {
        out.push(format!("lengths {} vs {}", a.len(), b.len()));
    }
    for (x, y) in a.iter().zip(b) {
        if x != y {
            out.push(format!("  reuse ON : {x}\n  reuse OFF: {y}"));
        }
    }
    out
}

/// Sends `steps` (after the standard ingests) to a reusing and a fresh
/// session and compares the checks after each. Panics listing every step
/// where they differed.
async fn compare(name: &str, steps: Vec<Request>) {
    let mut on = session(true).await;
    let mut off = session(false).await;
    let mut all = vec![
        ingest("lk", LK_CSV),
        ingest("t", T_CSV),
        ingest("t2", T_CSV),
        ingest("m", M_CSV),
    ];
    all.extend(steps);
    let mut problems = Vec::new();
    let mut reused_total = 0;
    for (i, r) in all.into_iter().enumerate() {
        let shown = format!("{r:?}");
        let shown: String = shown.chars().take(160).collect();
        let (a, b) = (on.handle(r.clone()).await, off.handle(r).await);
        let (oa, ob) = (outcome(&a), outcome(&b));
        reused_total += on.checks_reused();
        if oa != ob {
            problems.push(format!("step {i} {shown}: response differs: {oa} vs {ob}"));
        }
        let (ca, cb) = (checks(&mut on).await, checks(&mut off).await);
        let d = diff(&ca, &cb);
        if !d.is_empty() {
            problems.push(format!(
                "step {i} {shown} (reused {}):\n{}",
                on.checks_reused(),
                d.join("\n")
            ));
        }
        if std::env::var("SHOW_STEPS").is_ok() {
            eprintln!(
                "[{name}] step {i} {shown}: {oa}; reused {}",
                on.checks_reused()
            );
        }
    }
    eprintln!("[{name}] checks reused over the scenario: {reused_total}");
    // The comparison means something only if results were kept.
    assert!(reused_total > 0, "[{name}] no check result was kept");
    assert!(
        problems.is_empty(),
        "[{name}] reuse on/off differ:\n{}",
        problems.join("\n")
    );
}

#[tokio::test]
async fn gold_model_fails_then_is_fixed() {
    compare("gold_fails", vec![
        set_t(true, false, false),
        gold("SELECT code, count(*) AS n, sum(qty) AS total FROM silver.nope GROUP BY code"),
        set_t(false, false, false),
        set_t(false, false, false),
        gold("SELECT code, count(*) AS n, sum(qty) AS total FROM silver.t GROUP BY code ORDER BY code DESC"),
        gold(GOLD_T),
        gold("SELECT code, count(*) AS n, sum(qty) / 0 AS total FROM silver.t GROUP BY code"),
        set_t(true, false, false),
        run(false),
        gold(GOLD_T),
        run(false),
    ])
    .await;
}

#[tokio::test]
async fn restore_silver_and_gold_then_run() {
    compare(
        "restore",
        vec![
            set_t(false, false, false),
            set_t(true, false, false),
            restore("silver.t", 1),
            run(false),
            restore("silver.t", 0),
            restore("silver.t", 2),
            set_t(true, false, false),
            restore("gold.by_code", 1),
            run(false),
            restore("gold.by_code", 0),
            gold("SELECT broken"),
            restore("silver.lk", 0),
            run(false),
            restore("gold.by_code", 2),
            set_t(false, false, false),
            restore("silver.t", 3),
            gold(GOLD_T),
            restore("silver.m", 0),
            run(false),
        ],
    )
    .await;
}

#[tokio::test]
async fn replay_and_forget() {
    compare("replay_forget", vec![
        req(json!({"type": "replay"})),
        run(false),
        req(json!({"type": "forget", "table": "t", "predicate": "raw_payload LIKE '%b%'", "reason": "gdpr"})),
        run(false),
        req(json!({"type": "forget", "table": "lk", "predicate": "raw_payload LIKE '%Z%'", "reason": "gdpr"})),
        req(json!({"type": "replay"})),
        set_t(false, false, false),
        req(json!({"type": "forget", "table": "m", "predicate": "raw_payload LIKE '%3%'", "reason": "gdpr"})),
        run(false),
    ])
    .await;
}

#[tokio::test]
async fn language_switches() {
    compare(
        "lang",
        vec![
            lang("ru"),
            run(false),
            lang("en"),
            run(false),
            lang("ru"),
            set_t(false, false, false),
            lang("en"),
            lang("ru"),
            run(false),
        ],
    )
    .await;
}

#[tokio::test]
async fn incremental_runs() {
    compare(
        "incremental",
        vec![
            mode("incremental"),
            run(false),
            ingest("t", "id,code,qty\n5,b,3\n"),
            run(false),
            ingest("m", "id,v\n2,7\n4,0\n"),
            run(false),
            ingest("lk", "code,name\nC,Charlie\n"),
            set_t(false, false, false),
            run(true),
            run(false),
            mode("full"),
            run(false),
            mode("incremental"),
            ingest("m", "id,v\n3,1\n2,7\n"),
            run(false),
        ],
    )
    .await;
}

#[tokio::test]
async fn anti_patterns() {
    let ap = |v: Value| req(json!({"type": "set_anti_patterns", "anti_patterns": v}));
    compare("anti_patterns", vec![
        ap(json!({"insert_into": ["m", "t"]})),
        run(false),
        run(false),
        ap(json!({"gold_reads_bronze": true})),
        gold("SELECT code, count(*) AS n, sum(qty) AS total FROM bronze.t GROUP BY code ORDER BY code"),
        ingest("t", "id,code,qty\n6,a,1\n"),
        run(false),
        ap(json!({"monolithic_silver": true})),
        set_t(true, true, false),
        ingest("t", "id,code,qty\n7,a,500\n"),
        set_t(true, false, false),
        ap(json!({})),
        run(false),
    ])
    .await;
}

#[tokio::test]
async fn bronze_tables_and_new_batches() {
    compare(
        "bronze",
        vec![
            ingest("lk", "code,name\nC,\n"),
            run(false),
            ingest("t", "id,code,qty\n8,zz,\n"),
            run(false),
            req(json!({"type": "reingest", "batch_id": "batch-1", "options": {}})),
            run(false),
        ],
    )
    .await;
}

#[tokio::test]
async fn column_type_changes_under_rules() {
    compare(
        "types",
        vec![
            set_t(true, false, true),
            set_t(true, false, true),
            set_t(true, false, false),
            set_t(true, false, true),
            set_t(false, false, true),
            set_t(false, false, false),
            run(false),
        ],
    )
    .await;
}

#[tokio::test]
async fn merged_table_with_reordered_equal_rows() {
    compare(
        "merge_reorder",
        vec![
            ingest("m", "id,v\n3,1\n1,5\n2,3\n"),
            run(false),
            ingest("m", "id,v\n2,3\n3,1\n1,5\n"),
            mode("incremental"),
            ingest("m", "id,v\n1,5\n3,1\n"),
            run(false),
            run(true),
            ingest("m", "id,v\n1,9\n"),
            ingest("m", "id,v\n1,5\n"),
        ],
    )
    .await;
}

#[tokio::test]
async fn silver_held_back_by_a_fail_expectation() {
    compare(
        "fail_held",
        vec![
            ingest("t", "id,code,qty\n9,b,500\n"),
            set_t(true, true, false),
            run(false),
            set_t(false, true, false),
            ingest("lk", "code,name\nC,Charlie\n"),
            set_tl(false),
            set_t(true, false, false),
            set_t(true, true, false),
            restore("silver.t", 1),
            run(false),
            mode("incremental"),
            ingest("t", "id,code,qty\n10,a,1\n"),
            set_t(true, false, false),
            run(false),
        ],
    )
    .await;
}

#[tokio::test]
async fn silver_lookup_of_another_silver_table() {
    compare("lookup", vec![
        set_tl(false),
        set_tl(true),
        ingest("lk", "code,name\nC,Charlie\n"),
        set_tl(true),
        req(json!({"type": "forget", "table": "lk", "predicate": "raw_payload LIKE '%Bis%'", "reason": "x"})),
        set_tl(true),
        restore("silver.lk", 0),
        run(false),
        restore("silver.tl", 0),
        set_tl(true),
    ])
    .await;
}
