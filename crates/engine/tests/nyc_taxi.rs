//! The "NYC taxi: silver module" example end to end, with exact figures.
//! Every test runs natively (`cargo test`) and in headless Chromium
//! (`cargo test --target wasm32-unknown-unknown`), so each SQL shape the
//! engine uses is proven in the browser too.

mod support;

use medallion_engine::TableName;
use std::sync::Arc;

use medallion_engine::api::{PipelineView, Request, Response, TableView};
use medallion_engine::bronze::IngestOptions;
use medallion_engine::checks::CheckStatus;
use medallion_engine::env::{FixedClock, SequentialIds};
use medallion_engine::rules::Rule;
use medallion_engine::{Lang, Playground};
use wasm_bindgen_test::wasm_bindgen_test;

#[cfg(target_arch = "wasm32")]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

const SILVER: &str = "silver.nyc_taxi_yellow";

async fn example() -> Playground {
    // 2023-11-14T22:13:20Z
    support::yield_to_browser().await;
    let mut p = Playground::with_env(
        Arc::new(FixedClock::new(1_700_000_000_000_000)),
        Arc::new(SequentialIds::default()),
    )
    .expect("playground");
    p.load_example("nyc_taxi_silver", Lang::En)
        .await
        .expect("example loads");
    p
}

fn table<'a>(v: &'a PipelineView, name: &str) -> &'a TableView {
    v.table(name)
        .unwrap_or_else(|| panic!("table {name} missing"))
}

fn cell<'a>(t: &'a TableView, row: usize, column: &str) -> Option<&'a str> {
    let i = t
        .columns
        .iter()
        .position(|c| c.name == column)
        .unwrap_or_else(|| panic!("column {column} missing"));
    t.rows[row][i].as_deref()
}

fn check<'a>(v: &'a PipelineView, id: &str) -> &'a medallion_engine::checks::CheckResult {
    v.checks
        .iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("check {id} missing"))
}

fn rules(p: &Playground) -> Vec<Rule> {
    p.definition().silver[0].rules.rules.clone()
}

async fn set_rule(p: &mut Playground, id: &str, f: impl FnOnce(&mut Rule)) -> PipelineView {
    let mut rs = rules(p);
    f(rs.iter_mut().find(|r| r.id == id).expect("rule"));
    match p
        .handle(Request::SetRules {
            silver_table: SILVER.into(),
            rules: rs,
        })
        .await
    {
        Response::Snapshot(v) => v,
        other => panic!("unexpected {other:?}"),
    }
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn example_has_exact_layer_counts() {
    let v = example().await.view();
    assert!(v.run.ok, "{:?}", v.run);
    assert_eq!(v.title, "NYC taxi: silver module");
    let counts: Vec<(&str, usize)> = v
        .tables
        .iter()
        .map(|t| (t.name.as_str(), t.row_count))
        .collect();
    assert_eq!(
        counts,
        [
            ("bronze.nyc_taxi_yellow", 266),
            ("bronze.taxi_zone_lookup", 265),
            ("silver.nyc_taxi_yellow", 260),
            ("silver.quarantine", 6),
            ("gold.trips_by_borough_daily", 5),
        ]
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn bronze_keeps_raw_text_and_audit_columns() {
    let v = example().await.view();
    let b = table(&v, "bronze.nyc_taxi_yellow");
    let names: Vec<&str> = b.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "raw_payload",
            "_ingest_ts",
            "_source_system",
            "_source_file",
            "_event_id",
            "_batch_id",
            "_source_line",
            "_corrupt_reason",
            "_warning",
            "_raw_bytes",
            "_producer_ts"
        ]
    );
    assert_eq!(cell(b, 0, "_source_line"), Some("2"));
    assert_eq!(cell(b, 0, "_corrupt_reason"), None);
    assert_eq!(
        cell(b, 0, "raw_payload"),
        Some(
            "1,2020-07-01 00:25:32,2020-07-01 00:33:39,1,1.50,1,N,238,75,2,8,0.5,0.5,0,0,0.3,9.3,0"
        )
    );
    assert_eq!(cell(b, 0, "_source_system"), Some("tlc_trip_files"));
    assert_eq!(
        cell(b, 0, "_source_file"),
        Some("yellow_tripdata_sample_2020-07.csv")
    );
    // The zone lookup was ingested first (ids 1..=266), then the trips: batch id, then one event id per record.
    assert_eq!(
        cell(b, 0, "_batch_id"),
        Some("00000000-0000-4000-8000-00000000010b")
    );
    assert_eq!(
        cell(b, 0, "_event_id"),
        Some("00000000-0000-4000-8000-00000000010c")
    );
    assert_eq!(
        cell(b, 1, "_event_id"),
        Some("00000000-0000-4000-8000-00000000010d")
    );
    // (the clock ticked once for CREATE TABLE, once for the lookup batch)
    assert_eq!(cell(b, 0, "_ingest_ts"), Some("2023-11-14 22:13:22 UTC"));
    assert_eq!(v.batches.len(), 2);
    assert_eq!(v.batches[1].records, 266);
    assert_eq!(v.batches[1].header.len(), 18);
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn quarantine_names_rule_and_value() {
    let v = example().await.view();
    let q = table(&v, "silver.quarantine");
    let ids: Vec<&str> = (0..q.row_count)
        .map(|r| cell(q, r, "rule_id").unwrap())
        .collect();
    assert_eq!(ids, ["F3", "F1", "F3", "F3", "F3", "F3"]);
    assert_eq!(
        cell(q, 1, "reason"),
        Some("F1: fare_amount < 0 (fare_amount = -21.0)")
    );
    assert_eq!(
        cell(q, 0, "reason"),
        Some("F3: tpep_pickup_datetime < TIMESTAMP '2020-07-01' OR tpep_pickup_datetime >= TIMESTAMP '2020-08-01' (tpep_pickup_datetime = 2020-06-30 23:59:23)")
    );
    assert!(
        cell(q, 1, "raw_payload").unwrap().contains(",-21,"),
        "{:?}",
        cell(q, 1, "raw_payload")
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn silver_is_typed_normalized_and_enriched() {
    let v = example().await.view();
    let s = table(&v, SILVER);
    assert_eq!(s.columns.len(), 26);
    let ty = |n: &str| {
        s.columns
            .iter()
            .find(|c| c.name == n)
            .map(|c| c.data_type.as_str())
    };
    assert_eq!(ty("passenger_count"), Some("INT"));
    assert_eq!(ty("RatecodeID"), Some("INT"));
    assert_eq!(ty("trip_duration_minutes"), Some("DOUBLE"));
    assert_eq!(cell(s, 0, "Airport_fee"), Some("0.0"));
    assert_eq!(
        cell(s, 0, "trip_duration_minutes"),
        Some("8.116666666666667")
    );
    assert_eq!(cell(s, 0, "pickup_zone"), Some("Upper West Side North"));
    assert_eq!(cell(s, 0, "dropoff_zone"), Some("East Harlem South"));
    let stat = |id: &str| {
        v.silver[0]
            .rules
            .iter()
            .find(|r| r.rule.id == id)
            .and_then(|r| r.stat.as_ref())
            .map(|s| (s.checked, s.failed, s.changed))
    };
    assert_eq!(stat("F1"), Some((266, 1, 0)));
    assert_eq!(stat("F3"), Some((266, 5, 0)));
    assert_eq!(stat("N4"), Some((260, 0, 260)));
    assert_eq!(stat("F4"), None);
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn checks_on_three_levels() {
    let v = example().await.view();
    assert_eq!(check(&v, "R1").status, CheckStatus::Pass);
    assert_eq!(check(&v, "S1").observed, "INT");
    assert_eq!(check(&v, "S4").status, CheckStatus::Warn);
    assert_eq!(
        check(&v, "S4").observed,
        "Airport_fee (absent in 1 of 1 batches, read as NULL); 266 NULLs seen"
    );
    assert_eq!(
        check(&v, "A1").observed,
        "bronze 266 = silver 260 + quarantine 6"
    );
    assert_eq!(check(&v, "A2").status, CheckStatus::Pass);
    assert_eq!(
        check(&v, "A2").observed,
        "6 of 266 rows did not reach silver (2.26%, threshold 5%)"
    );
    assert_eq!(check(&v, "A3").observed, "bronze 16.22 → silver 16.37");
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn editing_f2_moves_rows_to_quarantine_and_warns() {
    let mut p = example().await;
    let v = set_rule(&mut p, "F2", |r| r.expression = "total_amount > 50".into()).await;
    assert!(v.run.ok);
    assert_eq!(table(&v, SILVER).row_count, 247);
    assert_eq!(table(&v, "silver.quarantine").row_count, 19);
    assert_eq!(check(&v, "A2").status, CheckStatus::Warn);
    assert_eq!(
        check(&v, "A2").observed,
        "19 of 266 rows did not reach silver (7.14%, threshold 5%)"
    );
    assert_eq!(check(&v, "A1").status, CheckStatus::Pass);
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn the_russian_share_check_writes_a_decimal_comma() {
    let mut p = example().await;
    p.load_example("nyc_taxi_silver", Lang::Ru)
        .await
        .expect("example loads");
    let v = set_rule(&mut p, "F2", |r| r.expression = "total_amount > 50".into()).await;
    assert_eq!(
        check(&v, "A2").observed,
        "19 из 266 строк не дошли до silver (7,14%, порог 5%)"
    );
    // The averages too (A3 wrote them with a decimal point in Russian).
    assert_eq!(check(&v, "A3").observed, "bronze 16,22 → silver 13,72");
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn bad_rule_shows_its_error_and_keeps_last_good_results() {
    let mut p = example().await;
    let v = set_rule(&mut p, "F2", |r| r.expression = "total_amout > 50".into()).await;
    assert!(!v.run.ok);
    let f2 = v.silver[0]
        .rules
        .iter()
        .find(|r| r.rule.id == "F2")
        .unwrap();
    assert_eq!(
        f2.error.as_deref(),
        Some("No field named total_amout. Did you mean 'total_amount'?")
    );
    assert!(
        v.silver[0]
            .rules
            .iter()
            .filter(|r| r.error.is_some())
            .count()
            == 1
    );
    // last good results stay
    assert_eq!(table(&v, SILVER).row_count, 260);
    assert_eq!(
        f2.rule.expression, "total_amout > 50",
        "the user's text is kept for fixing"
    );

    let v = set_rule(&mut p, "F2", |r| r.expression = "total_amount >".into()).await;
    let err = v.silver[0]
        .rules
        .iter()
        .find(|r| r.rule.id == "F2")
        .unwrap()
        .error
        .clone()
        .unwrap();
    assert!(err.to_lowercase().contains("expected"), "{err}");

    let v = set_rule(&mut p, "F2", |r| {
        r.expression = "total_amount > 1000".into()
    })
    .await;
    assert!(v.run.ok);
    assert!(v.silver[0].rules.iter().all(|r| r.error.is_none()));
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn f3_with_the_seed_range_quarantines_every_trip() {
    let mut p = example().await;
    let v = set_rule(&mut p, "F3", |r| {
        r.params[0].value = "2024-01-01".into();
        r.params[1].value = "2025-01-01".into();
    })
    .await;
    assert_eq!(table(&v, SILVER).row_count, 0);
    // History: run 1's six rows stay, closed (the F3 trips' reason changed, the
    // F1 trip is now rejected by F1 and F3: "requarantined"; none passes, so
    // none is "released"), and this run adds all 266 trips.
    let q = table(&v, "silver.quarantine");
    assert_eq!(q.row_count, 272);
    assert_eq!(
        (
            cell(q, 0, "closed_in_run"),
            cell(q, 0, "closed_as"),
            cell(q, 6, "closed_in_run")
        ),
        (Some("2"), Some("requarantined"), None)
    );
    assert_eq!(
        check(&v, "A1").observed,
        "bronze 266 = silver 0 + quarantine 266"
    );
    assert_eq!(table(&v, "gold.trips_by_borough_daily").row_count, 0);
    assert_eq!(check(&v, "A2").status, CheckStatus::Warn);
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn exercises_f4_n5_e4_can_be_switched_on() {
    let mut p = example().await;
    let mut rs = rules(&p);
    for r in rs
        .iter_mut()
        .filter(|r| ["F4", "N5", "E4"].contains(&r.id.as_str()))
    {
        r.enabled = true;
    }
    let Response::Snapshot(v) = p
        .handle(Request::SetRules {
            silver_table: SILVER.into(),
            rules: rs,
        })
        .await
    else {
        panic!()
    };
    assert!(
        v.run.ok,
        "{:?}",
        v.silver[0]
            .rules
            .iter()
            .filter_map(|r| r.error.clone())
            .collect::<Vec<_>>()
    );
    let s = table(&v, SILVER);
    assert_eq!(s.row_count, 249);
    assert_eq!(
        s.columns
            .iter()
            .find(|c| c.name == "payment_type")
            .unwrap()
            .data_type,
        "INT"
    );
    assert!(s.columns.iter().any(|c| c.name == "speed_mph"));
    assert_eq!(check(&v, "S2").observed, "INT");
    // The exercises' checks, warnings before, pass now.
    for id in ["R4", "S5", "S6", "R5", "R6"] {
        assert_eq!(check(&v, id).status, CheckStatus::Pass, "{id}");
    }
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn exercise_checks_warn_until_the_exercises_are_switched_on() {
    let v = example().await.view();
    let r4 = check(&v, "R4");
    assert_eq!(
        (r4.status, r4.observed.as_str()),
        (CheckStatus::Warn, "11 of 260 rows violate")
    );
    assert_eq!(r4.sample.len(), 5);
    assert!(
        r4.sample[0].contains("trip_distance=0.0"),
        "{}",
        r4.sample[0]
    );
    assert_eq!(
        (check(&v, "S5").status, check(&v, "S5").observed.as_str()),
        (CheckStatus::Warn, "BIGINT, expected INT")
    );
    assert_eq!(
        (check(&v, "S6").status, check(&v, "S6").observed.as_str()),
        (CheckStatus::Warn, "missing: speed_mph")
    );
    assert_eq!(check(&v, "R5").status, CheckStatus::Pass);
    assert_eq!(
        check(&v, "R6").observed,
        "0 of 260 rows violate; 0 NULLs seen"
    );
    assert_eq!(check(&v, "R6").nulls, Some(0));
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn dropped_json_lines_file_is_a_new_batch_and_flows_downstream() {
    let mut p = example().await;
    let file = concat!(
        r#"{"VendorID": 2, "tpep_pickup_datetime": "2020-07-02 10:00:00", "tpep_dropoff_datetime": "2020-07-02 10:30:00", "passenger_count": 2, "trip_distance": 5.0, "RatecodeID": 1, "store_and_fwd_flag": "N", "PULocationID": 132, "DOLocationID": 230, "payment_type": 1, "fare_amount": 20.0, "extra": 0, "mta_tax": 0.5, "tip_amount": 4, "tolls_amount": 0, "improvement_surcharge": 0.3, "total_amount": 27.3, "congestion_surcharge": 2.5, "Airport_fee": 1.25}"#,
        "\n",
        r#"{"VendorID": "two", "fare_amount": 5}"#,
        "\n"
    );
    let v = ingest(
        &mut p,
        "bronze.nyc_taxi_yellow",
        "extra.jsonl",
        file.as_bytes(),
    )
    .await;
    assert_eq!(v.batches.len(), 3);
    assert_eq!(v.batches[2].file_name, "extra.jsonl");
    assert_eq!(table(&v, "bronze.nyc_taxi_yellow").row_count, 268);
    assert_eq!(table(&v, SILVER).row_count, 261);
    let q = table(&v, "silver.quarantine");
    assert_eq!(q.row_count, 7);
    // The quarantine is history: run 1's six rows, then this run's one.
    assert_eq!(
        cell(q, 6, "reason"),
        Some("parse: VendorID: 'two' is not BIGINT")
    );
    assert_eq!(cell(q, 6, "_source_file"), Some("extra.jsonl"));
    assert_eq!(
        (cell(q, 0, "run_id"), cell(q, 6, "run_id")),
        (Some("1"), Some("2"))
    );
    assert_eq!(
        check(&v, "A1").observed,
        "bronze 268 = silver 261 + quarantine 7"
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn gold_reading_bronze_is_refused_with_an_explanation() {
    let mut p = example().await;
    let v = gold_sql(&mut p, "SELECT count(*) AS n FROM bronze.nyc_taxi_yellow").await;
    assert!(!v.run.ok);
    let err = v.gold[0].error.as_deref().unwrap();
    assert!(
        err.starts_with(
            "gold.trips_by_borough_daily reads bronze.nyc_taxi_yellow: gold reads silver only."
        ),
        "{err}"
    );
    assert_eq!(table(&v, "gold.trips_by_borough_daily").row_count, 5);
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn registry_exports_as_markdown() {
    let mut p = example().await;
    let Response::Text { text } = p
        .handle(Request::ExportRules {
            silver_table: SILVER.into(),
        })
        .await
    else {
        panic!()
    };
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "| # | Column / scope | Rule | Kind | On failure | Rationale |"
    );
    assert_eq!(lines.len(), 2 + 13);
    assert!(
        lines[3].starts_with("| F2 | total_amount | `total_amount > 1000` | filter |"),
        "{}",
        lines[3]
    );
    assert!(
        lines[4].contains("`tpep_pickup_datetime < TIMESTAMP '2020-07-01' OR"),
        "{}",
        lines[4]
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn bad_input_gets_a_clear_message_and_changes_nothing() {
    let mut p = example().await;
    let Response::Error { message } = p
        .handle(Request::Ingest {
            table: "nyc_taxi_yellow".into(),
            file_name: "latin1.csv".into(),
            bytes: b"a,b\n\xe9,1\n".to_vec(),
            options: IngestOptions {
                encoding: Some("klingon".into()),
                ..Default::default()
            },
        })
        .await
    else {
        panic!()
    };
    assert_eq!(message, "ingest failed: unknown encoding 'klingon'; use a name such as utf-8, windows-1251, latin1 or utf-16le. Nothing was written.");
    let Response::Error { message } = p
        .handle(Request::Ingest {
            table: "orders".into(),
            file_name: "o.csv".into(),
            bytes: b"a\n1\n".to_vec(),
            options: Default::default(),
        })
        .await
    else {
        panic!()
    };
    assert_eq!(message, "ingest failed: there is no bronze table orders; drop the file on one of: bronze.nyc_taxi_yellow, bronze.taxi_zone_lookup");
    assert_eq!(p.view().batches.len(), 2);
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn russian_texts() {
    let mut p = example().await;
    let Response::Snapshot(v) = p.handle(Request::SetLang { lang: Lang::Ru }).await else {
        panic!()
    };
    assert_eq!(v.title, "NYC taxi: модуль silver");
    assert_eq!(
        check(&v, "A1").observed,
        "bronze 266 = silver 260 + карантин 6"
    );
    assert_eq!(
        check(&v, "A1").description,
        "Строк в bronze = silver + карантин"
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn every_csv_record_reaches_bronze_even_when_silver_cannot_read_it() {
    let mut p = example().await;
    let header = "VendorID,tpep_pickup_datetime,tpep_dropoff_datetime,passenger_count,trip_distance,RatecodeID,store_and_fwd_flag,PULocationID,DOLocationID,payment_type,fare_amount,extra,mta_tax,tip_amount,tolls_amount,improvement_surcharge,total_amount,congestion_surcharge";
    let file = format!(
        "{header}\r\n\
         1,2020-07-05 10:00:00,2020-07-05 10:10:00,1,1.0,1,\"N\nwith newline\",100,101,1,7,0,0.5,1,0,0.3,8.8,0\r\n\
         1,2020-07-05 11:00:00,2020-07-05 11:10:00,1,1.0\r\n\
         1,2020-07-05 12:00:00,2020-07-05 12:10:00,one,1.0,1,N,100,101,1,7,0,0.5,1,0,0.3,8.8,0\r\n"
    );
    let v = ingest(&mut p, "nyc_taxi_yellow", "odd.csv", file.as_bytes()).await;
    let b = table(&v, "bronze.nyc_taxi_yellow");
    assert_eq!(b.row_count, 269);
    assert_eq!(v.batches[2].records, 3);
    let Response::Table(last) = p
        .handle(Request::GetTable {
            table: TableName::bronze("nyc_taxi_yellow"),
            offset: 266,
            limit: 10,
            version: None,
            corrupt_only: false,
        })
        .await
    else {
        panic!()
    };
    assert_eq!(last.rows.len(), 3);
    assert_eq!(
        cell(&last, 0, "raw_payload"),
        Some("1,2020-07-05 10:00:00,2020-07-05 10:10:00,1,1.0,1,\"N\nwith newline\",100,101,1,7,0,0.5,1,0,0.3,8.8,0")
    );
    assert_eq!(
        cell(&last, 1, "raw_payload"),
        Some("1,2020-07-05 11:00:00,2020-07-05 11:10:00,1,1.0")
    );
    // one readable (quoted newline kept inside the field), two quarantined with reasons
    assert_eq!(table(&v, SILVER).row_count, 261);
    let q = table(&v, "silver.quarantine");
    let reasons: Vec<&str> = (0..q.row_count)
        .filter_map(|r| cell(q, r, "reason"))
        .collect();
    assert_eq!(reasons.len(), 8, "run 1's six rows, then this run's two");
    assert_eq!(reasons[6], "parse: 5 fields, the header has 18");
    assert_eq!(reasons[7], "parse: passenger_count: 'one' is not DOUBLE");
    assert_eq!(
        check(&v, "A1").observed,
        "bronze 269 = silver 261 + quarantine 8"
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn gold_sql_cannot_change_tables() {
    let mut p = example().await;
    for sql in [
        "DROP TABLE silver.nyc_taxi_yellow",
        "CREATE TABLE gold.x AS SELECT 1 AS a",
        "INSERT INTO silver.nyc_taxi_yellow SELECT * FROM silver.nyc_taxi_yellow",
    ] {
        let v = gold_sql(&mut p, sql).await;
        assert!(!v.run.ok, "{sql}");
        assert!(v.gold[0].error.is_some(), "{sql}");
        assert_eq!(table(&v, SILVER).row_count, 260, "{sql}");
    }
    let v = gold_sql(&mut p, "SELECT pickup_borough, COUNT(*) AS trips FROM silver.nyc_taxi_yellow GROUP BY pickup_borough ORDER BY trips DESC").await;
    assert!(v.run.ok);
    let g = table(&v, "gold.trips_by_borough_daily");
    assert_eq!(g.row_count, 5);
    assert_eq!(
        (cell(g, 0, "pickup_borough"), cell(g, 0, "trips")),
        (Some("Manhattan"), Some("219"))
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn switching_n1_off_fails_the_schema_check() {
    let mut p = example().await;
    let v = set_rule(&mut p, "N1", |r| r.enabled = false).await;
    assert!(v.run.ok);
    assert_eq!(check(&v, "S1").status, CheckStatus::Fail);
    assert_eq!(check(&v, "S1").observed, "DOUBLE, expected INT");
}

async fn gold_sql(p: &mut Playground, sql: &str) -> PipelineView {
    match p
        .handle(Request::SetGoldSql {
            model: "trips_by_borough_daily".into(),
            sql: sql.into(),
        })
        .await
    {
        Response::Snapshot(v) => v,
        other => panic!("unexpected {other:?}"),
    }
}

async fn ingest(p: &mut Playground, table: &str, name: &str, bytes: &[u8]) -> PipelineView {
    match p
        .handle(Request::Ingest {
            table: table.into(),
            file_name: name.into(),
            bytes: bytes.to_vec(),
            options: Default::default(),
        })
        .await
    {
        Response::Snapshot(v) => v,
        other => panic!("unexpected {other:?}"),
    }
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn union_and_exploding_gold_queries_get_messages_not_crashes() {
    let mut p = example().await;
    let v = gold_sql(&mut p, "SELECT 1 AS n UNION ALL SELECT 2 AS n").await;
    let err = v.gold[0].error.clone().unwrap();
    assert!(
        err.starts_with("this query would run in several parallel parts (UnionExec)"),
        "{err}"
    );
    assert!(
        err.contains("UNION / UNION ALL is the usual cause"),
        "{err}"
    );

    let v = gold_sql(&mut p, "SELECT a.fare_amount FROM silver.nyc_taxi_yellow a, silver.nyc_taxi_yellow b, silver.nyc_taxi_yellow c").await;
    assert_eq!(
        v.gold[0].error.as_deref(),
        Some("the result has more than 100000 rows; stopped. Aggregate (GROUP BY) or add a LIMIT.")
    );

    let v = gold_sql(&mut p, "DROP TABLE silver.nyc_taxi_yellow").await;
    assert_eq!(
        v.gold[0].error.as_deref(),
        Some("gold.trips_by_borough_daily must be one SELECT query. Statements that create, change or drop tables are not allowed: a gold model only reads silver.")
    );

    // the engine is still alive and well
    let v = gold_sql(
        &mut p,
        "SELECT COUNT(*) AS trips FROM silver.nyc_taxi_yellow",
    )
    .await;
    assert!(v.run.ok);
    assert_eq!(
        cell(table(&v, "gold.trips_by_borough_daily"), 0, "trips"),
        Some("260")
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_file_with_none_of_the_declared_columns_is_quarantined_not_read_as_nulls() {
    let mut p = example().await;
    let v = ingest(
        &mut p,
        "nyc_taxi_yellow",
        "unrelated.csv",
        b"a,b,c\n1,2,3\n",
    )
    .await;
    assert_eq!(table(&v, "bronze.nyc_taxi_yellow").row_count, 267);
    assert_eq!(table(&v, SILVER).row_count, 260);
    let q = table(&v, "silver.quarantine");
    assert_eq!(
        cell(q, 6, "reason"),
        Some("parse: the file's header (a, b, c) has none of the declared columns (VendorID, tpep_pickup_datetime, tpep_dropoff_datetime, passenger_count, trip_distance, … (19 in all))")
    );
    assert_eq!(check(&v, "R1").status, CheckStatus::Pass);
    assert_eq!(table(&v, "gold.trips_by_borough_daily").row_count, 5);
    // The batch log says so at once (issue 12's trial: it had no note).
    let batch = v.batches.last().unwrap();
    assert_eq!(batch.file_name, "unrelated.csv");
    assert!(
        batch.notes.contains(&"the file's header (a, b, c) has none of the declared columns (VendorID, tpep_pickup_datetime, tpep_dropoff_datetime, passenger_count, trip_distance, … (19 in all)): silver sends its one record to the quarantine".to_string()),
        "{:?}",
        batch.notes
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn json_array_files_and_lower_case_headers_are_read() {
    let mut p = example().await;
    let array = br#"[
  {"VendorID": 1, "tpep_pickup_datetime": "2020-07-03 08:00:00", "tpep_dropoff_datetime": "2020-07-03 08:12:00",
   "PULocationID": 161, "DOLocationID": 236, "fare_amount": 11.5, "total_amount": 15.3},
  {"vendorid": 2, "tpep_pickup_datetime": "2020-07-03 09:00:00", "tpep_dropoff_datetime": "2020-07-03 09:05:00",
   "pulocationid": 236, "dolocationid": 161, "fare_amount": 6, "total_amount": 8.8}
]"#;
    let v = ingest(&mut p, "nyc_taxi_yellow", "two.json", array).await;
    assert_eq!(v.batches[2].format.label(), "JSON array");
    assert_eq!(v.batches[2].records, 2);
    assert_eq!(table(&v, SILVER).row_count, 262);
    let csv = b"vendorid,tpep_pickup_datetime,tpep_dropoff_datetime,pulocationid,dolocationid,fare_amount,total_amount\n2,2020-07-04 10:00:00,2020-07-04 10:20:00,132,230,40,52.8\n";
    let v = ingest(&mut p, "nyc_taxi_yellow", "lower.csv", csv).await;
    assert_eq!(table(&v, SILVER).row_count, 263);
    let Response::Table(last) = p
        .handle(Request::GetTable {
            table: SILVER.parse().unwrap(),
            offset: 262,
            limit: 1,
            version: None,
            corrupt_only: false,
        })
        .await
    else {
        panic!()
    };
    assert_eq!(cell(&last, 0, "VendorID"), Some("2"));
    assert_eq!(cell(&last, 0, "pickup_zone"), Some("JFK Airport"));
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn empty_file_is_a_batch_with_a_note() {
    let mut p = example().await;
    let v = ingest(&mut p, "nyc_taxi_yellow", "empty.csv", b"").await;
    assert_eq!(v.batches[2].records, 0);
    assert_eq!(v.batches[2].notes, ["empty file: 0 records"]);
    assert_eq!(table(&v, SILVER).row_count, 260);
    assert_eq!(
        check(&v, "S4").observed,
        "Airport_fee (absent in 1 of 2 batches, read as NULL); 266 NULLs seen"
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_quote_in_a_parameter_is_refused() {
    let mut p = example().await;
    let v = set_rule(&mut p, "F3", |r| {
        r.params[0].value = "2020-07-01' OR fare_amount > 20 OR '1".into()
    })
    .await;
    assert!(!v.run.ok);
    let f3 = v.silver[0]
        .rules
        .iter()
        .find(|r| r.rule.id == "F3")
        .unwrap();
    assert_eq!(f3.error.as_deref(), Some("parameter {from} must not contain a quote ('): its value is pasted inside a SQL string"));
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn row_checks_say_when_nulls_are_the_violation() {
    let mut p = example().await;
    let csv = b"VendorID,tpep_pickup_datetime,tpep_dropoff_datetime,fare_amount,total_amount\n1,2020-07-03 10:00:00,2020-07-03 10:10:00,,\n";
    let v = ingest(&mut p, "nyc_taxi_yellow", "nofare.csv", csv).await;
    assert_eq!(table(&v, SILVER).row_count, 261);
    assert_eq!(check(&v, "R1").status, CheckStatus::Fail);
    assert_eq!(
        check(&v, "R1").observed,
        "1 of 261 rows violate (1 because a value is NULL)"
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn very_long_sql_is_refused_before_it_can_overflow_the_stack() {
    let mut p = example().await;
    let terms = vec!["fare_amount"; 1000].join(" + ");
    let v = gold_sql(
        &mut p,
        &format!("SELECT {terms} AS x FROM silver.nyc_taxi_yellow"),
    )
    .await;
    assert_eq!(
        v.gold[0].error.as_deref(),
        Some("this SQL has 2006 tokens; the in-browser engine takes at most 800 here (very long expressions overflow its stack). Split it up or simplify it.")
    );
    let v = set_rule(&mut p, "F2", |r| {
        r.expression = vec!["total_amount"; 200].join(" + ") + " > 0"
    })
    .await;
    let err = v.silver[0]
        .rules
        .iter()
        .find(|r| r.rule.id == "F2")
        .unwrap()
        .error
        .clone()
        .unwrap();
    assert!(
        err.starts_with("this SQL has 401 tokens; the in-browser engine takes at most 300 here"),
        "{err}"
    );
    // still alive: the model plans, and waits for the silver table F2 stops
    let v = gold_sql(
        &mut p,
        "SELECT COUNT(*) AS trips FROM silver.nyc_taxi_yellow",
    )
    .await;
    assert_eq!(
        v.gold[0].error.as_deref(),
        Some("not refreshed: it reads silver.nyc_taxi_yellow, which this run could not build; it shows its last good result until a run builds silver.nyc_taxi_yellow")
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_semicolon_file_is_read_with_its_dialect_and_a_wrong_override_gets_a_hint() {
    let mut p = example().await;
    let v = ingest(
        &mut p,
        "nyc_taxi_yellow",
        "semi.csv",
        b"VendorID;tpep_pickup_datetime;fare_amount;total_amount\n1;2020-07-09 10:00:00;-5;-5\n",
    )
    .await;
    let batch = v.batches.last().unwrap();
    assert_eq!(batch.dialect.as_ref().unwrap().delimiter, ';');
    assert_eq!(
        batch.header,
        [
            "VendorID",
            "tpep_pickup_datetime",
            "fare_amount",
            "total_amount"
        ]
    );
    let q = table(&v, "silver.quarantine");
    assert_eq!(q.row_count, 7);
    // Forcing ',' re-reads the landed file as a new batch; the hint names the fix.
    let id = batch.batch_id.clone();
    let Response::Snapshot(v) = p
        .handle(Request::Reingest {
            batch_id: id,
            options: IngestOptions {
                delimiter: Some(','),
                ..Default::default()
            },
            remember: false,
        })
        .await
    else {
        panic!()
    };
    assert_eq!(v.batches.len(), 4);
    assert_eq!(v.batches[3].file_name, "semi.csv");
    assert_eq!(table(&v, "bronze.nyc_taxi_yellow").row_count, 268);
    let q = table(&v, "silver.quarantine");
    assert_eq!(q.row_count, 8);
    let parse_row = (0..q.rows.len())
        .find(|r| cell(q, *r, "rule_id") == Some("parse"))
        .unwrap();
    assert_eq!(
        cell(q, parse_row, "reason"),
        Some("parse: the file's header (VendorID;tpep_pickup_datetime;fare_amount;total_amount) has none of the declared columns (VendorID, tpep_pickup_datetime, tpep_dropoff_datetime, passenger_count, trip_distance, … (19 in all)); the file looks ';'-separated: set the delimiter to ';' and ingest it again")
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_broken_gold_model_does_not_hold_silver_back() {
    let mut p = example().await;
    let v = gold_sql(
        &mut p,
        "SELECT pickup_borough FROM silver.nyc_taxi_yellow GROUP BY 1 HAVING",
    )
    .await;
    assert!(!v.run.ok);
    assert!(v.gold[0].error.is_some());
    let v = set_rule(&mut p, "F2", |r| r.expression = "total_amount > 50".into()).await;
    assert_eq!(table(&v, SILVER).row_count, 247);
    assert_eq!(
        check(&v, "A1").observed,
        "bronze 266 = silver 247 + quarantine 19"
    );
    // gold keeps its last good table, and its error
    assert_eq!(table(&v, "gold.trips_by_borough_daily").row_count, 5);
    assert!(v.gold[0].error.is_some());
    assert!(!v.run.ok);
}

/// A lookup join carries only the columns its condition and outputs name
/// (issue 12): an output may still use any column of the row or the lookup,
/// and a misspelt one is named with what it could be, as over every column.
#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_lookup_output_reads_any_column_of_either_side() {
    let mut p = example().await;
    let v = set_rule(&mut p, "E2", |r| {
        // The columns are pickup_borough, pickup_zone.
        r.expression = "upper(pu.borough), pu.zone || ' / ' || pu.service_zone || ' / ' || CAST(payment_type AS VARCHAR)".into()
    })
    .await;
    assert!(v.run.ok, "{:?}", v.run);
    let s = table(&v, SILVER);
    assert_eq!(s.row_count, 260);
    let (zone, borough) = (cell(s, 0, "pickup_zone"), cell(s, 0, "pickup_borough"));
    let payment = cell(s, 0, "payment_type").expect("payment_type");
    assert!(
        zone.is_some_and(|z| z.ends_with(&format!(" / {payment}")) && z.matches(" / ").count() == 2),
        "{zone:?}"
    );
    assert!(
        borough.is_some_and(|b| b == b.to_uppercase()),
        "{borough:?}"
    );
    let v = set_rule(&mut p, "E2", |r| r.expression = "pu.borough, pu.zon".into()).await;
    assert!(!v.run.ok);
    let e2 = v.silver[0]
        .rules
        .iter()
        .find(|r| r.rule.id == "E2")
        .unwrap();
    assert_eq!(
        e2.error.as_deref(),
        Some("No field named pu.zon. Did you mean 'pu.zone'?")
    );
}
