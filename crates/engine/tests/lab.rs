//! The instructor's lab (seed 000 §6, seed 003 §6): each anti-pattern in the
//! twin, on the bundled scenarios, with the damage pinned: counts, gold
//! side by side, the measures' ratio, the checks that differ, the findings,
//! and the orchestrator's re-run. Runs natively and in headless Chromium.

mod support;

use std::sync::Arc;

use medallion_engine::api::{Lang, PipelineView, Request, Response};
use medallion_engine::checks::CheckStatus;
use medallion_engine::env::{FixedClock, SequentialIds};
use medallion_engine::lab::{AntiPattern, LabCount, LabEvent, LabView};
use medallion_engine::{Playground, TableName};
use wasm_bindgen_test::wasm_bindgen_test;

#[cfg(target_arch = "wasm32")]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

async fn scenario(name: &str, lang: Lang) -> Playground {
    support::yield_to_browser().await;
    let mut p = Playground::with_env(
        Arc::new(FixedClock::new(1_700_000_000_000_000)),
        Arc::new(SequentialIds::default()),
    )
    .expect("playground");
    p.load_example(name, lang).await.expect("scenario loads");
    p
}

async fn send(p: &mut Playground, request: Request) -> PipelineView {
    support::yield_to_browser().await;
    match p.handle(request).await {
        Response::Snapshot(v) => v,
        other => panic!("unexpected {other:?}"),
    }
}

fn lab(v: &PipelineView) -> &LabView {
    let lab = v.lab.as_ref().expect("the lab is on");
    assert_eq!(lab.error, None);
    lab
}

/// `(correct, anti)` rows of `table`.
fn count(lab: &LabView, table: &str) -> (Option<usize>, Option<usize>) {
    let t: TableName = table.parse().unwrap();
    let c: &LabCount = lab.counts.iter().find(|c| c.table == t).expect(table);
    (c.correct, c.anti)
}

/// `(correct, anti, ratio)` of a gold model's measure.
fn measure(lab: &LabView, model: &str, column: &str) -> (String, String, Option<f64>) {
    let g = lab
        .gold
        .iter()
        .find(|g| g.model == TableName::gold(model))
        .expect(model);
    let m = g
        .measures
        .iter()
        .find(|m| m.column == column)
        .expect(column);
    (m.correct.clone(), m.anti.clone(), m.ratio)
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn insert_instead_of_merge_doubles_revenue_on_a_rerun_while_merge_changes_nothing() {
    let mut p = scenario("kafka_orders", Lang::En).await;
    let v = send(
        &mut p,
        Request::SetLab {
            on: vec![AntiPattern::InsertInsteadOfMerge],
        },
    )
    .await;
    let l = lab(&v);
    assert_eq!(l.on, vec![AntiPattern::InsertInsteadOfMerge]);
    // One run: INSERT of the run's rows deduplicated by key equals the MERGE.
    assert_eq!(count(l, "silver.orders"), (Some(2), Some(2)));
    assert_eq!(count(l, "bronze.orders"), (Some(4), Some(4)));
    assert_eq!(
        measure(l, "revenue_daily", "revenue"),
        ("99.99".into(), "99.99".into(), Some(1.0))
    );
    let g = &l.gold[0];
    assert_eq!(g.key, vec!["report_date", "country"]);
    assert_eq!(g.changed_rows, 0);
    assert!(l.checks.is_empty(), "{:?}", l.checks);
    assert!(l.findings[0].starts_with("One run of the job gives the same silver with INSERT INTO (silver.orders) as with MERGE."), "{:?}", l.findings);
    let versions = v.history.clone();

    // The orchestrator re-runs the job.
    let v = send(
        &mut p,
        Request::LabEvent {
            event: LabEvent::RerunJob,
        },
    )
    .await;
    let l = lab(&v);
    assert_eq!(count(l, "silver.orders"), (Some(2), Some(4)));
    assert_eq!(
        measure(l, "revenue_daily", "revenue"),
        ("99.99".into(), "199.98".into(), Some(2.0))
    );
    assert_eq!(
        measure(l, "revenue_daily", "orders_count"),
        ("1".into(), "2".into(), Some(2.0))
    );
    let g = &l.gold[0];
    assert_eq!(g.changed_rows, 1);
    let row = &g.rows[0];
    assert_eq!(row.correct[2].as_deref(), Some("99.99"));
    assert_eq!(row.anti[2].as_deref(), Some("199.98"));
    assert_eq!(row.changed, vec![2, 3]);
    // The unique check on order_id exposes it.
    let r3 = l.checks.iter().find(|c| c.id == "R3").expect("R3 differs");
    assert_eq!(
        (r3.correct, r3.anti),
        (CheckStatus::Pass, CheckStatus::Fail)
    );
    assert_eq!(l.timeline.len(), 1);
    let e = &l.timeline[0];
    assert_eq!(
        e.correct,
        "no table changed: the job wrote the same rows again (MERGE and a full refresh are idempotent), so no new version"
    );
    assert!(e.anti.contains("silver.orders: 2 → 4 rows"), "{}", e.anti);
    // MERGE: the re-run added no version to any silver or gold table.
    for (t, vs) in &v.history {
        if t.is_silver_table() || t.is_gold() {
            assert_eq!(vs.len(), versions[t].len(), "{t} got a new version");
        }
    }
    assert!(l
        .findings
        .iter()
        .any(|f| f == "gold.revenue_daily: total revenue is 99.99 in the correct pipeline and 199.98 (×2) with the anti-pattern."), "{:?}", l.findings);

    // A second re-run: three runs of the same job, three times the rows.
    let v = send(
        &mut p,
        Request::LabEvent {
            event: LabEvent::RerunJob,
        },
    )
    .await;
    let l = lab(&v);
    assert_eq!(count(l, "silver.orders"), (Some(2), Some(6)));
    assert_eq!(measure(l, "revenue_daily", "revenue").2, Some(3.0));

    // A change of the session rebuilds the twin with its re-runs.
    let v = send(
        &mut p,
        Request::Run {
            full_refresh: false,
        },
    )
    .await;
    assert_eq!(count(lab(&v), "silver.orders"), (Some(2), Some(6)));

    // Another switch keeps the timeline: the twin still replays both re-runs.
    let v = send(
        &mut p,
        Request::SetLab {
            on: vec![
                AntiPattern::InsertInsteadOfMerge,
                AntiPattern::DedupAtIngest,
            ],
        },
    )
    .await;
    let l = lab(&v);
    assert_eq!(l.timeline.len(), 2);
    assert_eq!(count(l, "silver.orders"), (Some(2), Some(6)));
    assert_eq!(count(l, "bronze.orders"), (Some(4), Some(3)));

    // Switched off: the lab and its timeline are gone from the view.
    let v = send(&mut p, Request::SetLab { on: vec![] }).await;
    assert_eq!(v.lab, None);
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn dedup_at_ingest_loses_the_kafka_redelivery_and_the_cdc_history() {
    let mut p = scenario("kafka_orders", Lang::En).await;
    let v = send(
        &mut p,
        Request::SetLab {
            on: vec![AntiPattern::DedupAtIngest],
        },
    )
    .await;
    let l = lab(&v);
    assert_eq!(count(l, "bronze.orders"), (Some(4), Some(3)));
    // MERGE already removed the duplicate: silver and gold agree.
    assert_eq!(count(l, "silver.orders"), (Some(2), Some(2)));
    assert_eq!(l.findings[0], "bronze.orders: the source sent 4 records, bronze with dropDuplicates holds 3. The one dropped (re-deliveries, later changes of a key) cannot be counted by a reconciliation, replayed or audited: what the source sent is no longer known.");

    let mut p = scenario("cdc_order", Lang::En).await;
    let v = send(
        &mut p,
        Request::SetLab {
            on: vec![AntiPattern::DedupAtIngest],
        },
    )
    .await;
    let l = lab(&v);
    // Five change events of one order: dropDuplicates(order_id) keeps the first.
    assert_eq!(count(l, "bronze.order_cdc"), (Some(5), Some(1)));
    assert_eq!(count(l, "silver.order_history"), (Some(5), Some(1)));
    assert_eq!(count(l, "silver.order_current"), (Some(1), Some(1)));
    let g = &l.gold[0];
    assert_eq!(g.model, TableName::gold("time_in_status"));
    assert_eq!(g.key, vec!["status"]);
    assert_eq!(
        measure(l, "time_in_status", "versions"),
        ("5".into(), "1".into(), Some(0.2))
    );
    // The order is PAID now; the deduplicated bronze never saw it paid.
    let paid = g
        .rows
        .iter()
        .find(|r| r.correct.first() == Some(&Some("PAID".into())))
        .expect("PAID row");
    assert!(paid.anti.is_empty());
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_business_filter_at_ingest_leaves_nothing_to_audit() {
    let mut p = scenario("kafka_orders", Lang::Ru).await;
    let v = send(
        &mut p,
        Request::SetLab {
            on: vec![AntiPattern::FilterAtIngest],
        },
    )
    .await;
    let l = lab(&v);
    assert_eq!(count(l, "bronze.orders"), (Some(4), Some(3)));
    assert_eq!(count(l, "silver.quarantine"), (Some(1), Some(0)));
    assert_eq!(count(l, "silver.orders"), (Some(2), Some(2)));
    assert_eq!(l.findings, vec![
        "bronze.orders: из 4 присланных записей бизнес-правило не прошли и не записаны 1. Аудит-запрос к bronze находит 0 строк (в правильном bronze: 1); ослабленное позже правило не вернёт их через replay.".to_string(),
        "silver.quarantine: открытых строк в правильном пайплайне — 1, с фильтром при загрузке — 0: никто не видит, что отброшено и почему.".to_string(),
    ]);
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn the_lab_survives_a_new_scenario_and_is_refused_without_one() {
    let mut p = Playground::with_env(
        Arc::new(FixedClock::new(1_700_000_000_000_000)),
        Arc::new(SequentialIds::default()),
    )
    .unwrap();
    match p
        .handle(Request::LabEvent {
            event: LabEvent::RerunJob,
        })
        .await
    {
        Response::Error { message } => {
            assert_eq!(
                message,
                "load a scenario first: there is no pipeline to send the event to"
            )
        }
        other => panic!("unexpected {other:?}"),
    }
    let v = send(
        &mut p,
        Request::SetLab {
            on: vec![
                AntiPattern::InsertInsteadOfMerge,
                AntiPattern::DedupAtIngest,
            ],
        },
    )
    .await;
    // Ordered as the panel lists them.
    assert_eq!(
        v.lab.unwrap().on,
        vec![
            AntiPattern::DedupAtIngest,
            AntiPattern::InsertInsteadOfMerge
        ]
    );
    let v = send(
        &mut p,
        Request::LoadExample {
            example: "kafka_orders".into(),
            lang: Lang::En,
            bronze_mode: None,
        },
    )
    .await;
    let l = lab(&v);
    assert_eq!(
        l.on,
        vec![
            AntiPattern::DedupAtIngest,
            AntiPattern::InsertInsteadOfMerge
        ]
    );
    assert_eq!(count(l, "bronze.orders"), (Some(4), Some(3)));
    assert!(l.timeline.is_empty());
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_language_switch_keeps_the_lab_and_translates_its_findings() {
    let mut p = scenario("cdc_order", Lang::En).await;
    send(
        &mut p,
        Request::SetLab {
            on: vec![AntiPattern::DedupAtIngest],
        },
    )
    .await;
    send(
        &mut p,
        Request::LabEvent {
            event: LabEvent::RerunJob,
        },
    )
    .await;
    let v = send(&mut p, Request::SetLang { lang: Lang::Ru }).await;
    let l = lab(&v);
    assert_eq!(l.on, vec![AntiPattern::DedupAtIngest]);
    // The timeline written in English reads in Russian too, and back.
    assert_eq!(
        (l.timeline[0].correct.as_str(), l.timeline[0].anti.as_str()),
        (
            "ни одна таблица не изменилась: джоба записала те же строки (MERGE и полный пересчёт идемпотентны), новой версии нет",
            "ни число строк, ни значения gold не изменились"
        )
    );
    assert!(
        l.findings[0].starts_with(
            "bronze.order_cdc: источник прислал 5 записей, bronze с dropDuplicates хранит 1."
        ),
        "{:?}",
        l.findings
    );
    let v = send(&mut p, Request::SetLang { lang: Lang::En }).await;
    assert_eq!(
        lab(&v).timeline[0].anti,
        "no row count or gold value changed"
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn overwrite_of_the_days_partition_loses_the_first_file_and_its_order() {
    let mut p = scenario("landing_retry", Lang::En).await;
    let v = send(
        &mut p,
        Request::SetLab {
            on: vec![AntiPattern::OverwritePartition],
        },
    )
    .await;
    let l = lab(&v);
    // The retry file overwrote the day's first file: order_2 was only in that one.
    assert_eq!(count(l, "bronze.orders"), (Some(4), Some(2)));
    assert_eq!(count(l, "silver.orders"), (Some(2), Some(1)));
    assert_eq!(l.findings[0], "bronze.orders: 1 of its 2 batches was overwritten by a later batch of the same day; its 2 records are gone (4 → 2). Time travel to the versions it made and a replay of that day can only show the last batch.");
    assert_eq!(
        measure(l, "orders_by_status", "amount"),
        ("350.00".into(), "100.00".into(), Some(100.0 / 350.0))
    );

    // One file a day: nothing to overwrite yet, and the lab says what to do.
    let mut p = scenario("kafka_orders", Lang::En).await;
    let v = send(
        &mut p,
        Request::SetLab {
            on: vec![AntiPattern::OverwritePartition],
        },
    )
    .await;
    let l = lab(&v);
    assert_eq!(count(l, "bronze.orders"), (Some(4), Some(4)));
    assert!(
        l.findings[0].starts_with("Every bronze table has one batch a day so far"),
        "{:?}",
        l.findings
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn dropmalformed_at_ingest_empties_the_quarantine_of_what_did_not_fit() {
    let mut p = scenario("ecommerce", Lang::En).await;
    let v = send(
        &mut p,
        Request::SetLab {
            on: vec![AntiPattern::DropMalformed],
        },
    )
    .await;
    let l = lab(&v);
    assert_eq!(count(l, "bronze.customers"), (Some(6), Some(5)));
    assert_eq!(count(l, "bronze.orders"), (Some(8), Some(5)));
    assert_eq!(count(l, "silver.quarantine"), (Some(4), Some(0)));
    // The same silver and gold: the damage is in what bronze no longer holds.
    assert_eq!(count(l, "silver.orders"), (Some(5), Some(5)));
    assert_eq!(l.gold[0].changed_rows, 0);
    assert_eq!(l.findings, vec![
        "bronze.customers: DROPMALFORMED dropped 1 of 6 records that did not fit the declared schema; bronze holds 5. With PERMISSIVE they stay, with their reason, and reach the quarantine.".to_string(),
        "bronze.orders: DROPMALFORMED dropped 3 of 8 records that did not fit the declared schema; bronze holds 5. With PERMISSIVE they stay, with their reason, and reach the quarantine.".to_string(),
    ]);
}

/// The health panel's colours: `(correct, anti)` per sign, `G` green, `R`
/// red, `-` no twin; in the seed's order (bronze keeps everything, nothing
/// reads bronze, gold speaks business, gold rebuildable, lineage known).
fn colours(v: &PipelineView) -> Vec<String> {
    lab(v)
        .health
        .iter()
        .map(|h| {
            let c = |ok: bool| if ok { 'G' } else { 'R' };
            format!(
                "{}{}",
                c(h.correct.ok),
                h.anti.as_ref().map_or('-', |a| c(a.ok))
            )
        })
        .collect()
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn each_switch_turns_the_right_sign_of_health_red() {
    let all_green = ["GG", "GG", "GG", "GG", "GG"];
    let bronze_red = ["GR", "GG", "GG", "GG", "GG"];
    for (scenario_name, a, expected) in [
        ("kafka_orders", AntiPattern::DedupAtIngest, bronze_red),
        ("kafka_orders", AntiPattern::FilterAtIngest, bronze_red),
        (
            "landing_retry",
            AntiPattern::OverwritePartition,
            ["GR", "GG", "GG", "GR", "GG"],
        ),
        ("kafka_orders", AntiPattern::FixJobInBronze, bronze_red),
        (
            "kafka_orders",
            AntiPattern::WeeklyDelete,
            ["GR", "GG", "GG", "GR", "GG"],
        ),
        (
            "kafka_orders",
            AntiPattern::JoinAtIngest,
            ["GG", "GG", "GG", "GG", "GR"],
        ),
        (
            "kafka_orders",
            AntiPattern::Shortcut,
            ["GG", "GR", "GG", "GG", "GG"],
        ),
        ("ecommerce", AntiPattern::DropMalformed, bronze_red),
        ("kafka_orders", AntiPattern::InsertInsteadOfMerge, all_green),
        // Its damage is lateness, which none of the five signs measures.
        ("cdc_order", AntiPattern::MonolithicSilver, all_green),
    ] {
        let mut p = scenario(scenario_name, Lang::En).await;
        let v = send(&mut p, Request::SetLab { on: vec![a] }).await;
        assert_eq!(
            colours(&v),
            expected,
            "{scenario_name} {a:?}: {:?}",
            lab(&v).health
        );
    }
    // INSERT: the damage shows at the re-run, and a replay exposes it.
    let mut p = scenario("kafka_orders", Lang::En).await;
    send(
        &mut p,
        Request::SetLab {
            on: vec![AntiPattern::InsertInsteadOfMerge],
        },
    )
    .await;
    let v = send(
        &mut p,
        Request::LabEvent {
            event: LabEvent::RerunJob,
        },
    )
    .await;
    assert_eq!(colours(&v), ["GG", "GG", "GG", "GR", "GG"]);
    let h = &lab(&v).health[3];
    assert_eq!(
        h.correct.reason,
        "every run rebuilds silver and gold from all of bronze, so a replay gives the same gold"
    );
    assert!(
        h.anti.as_ref().unwrap().reason.starts_with(
            "a replay from bronze gives another gold (rows that differ): gold.revenue_daily ("
        ),
        "{:?}",
        h.anti
    );
    let h = &lab(&v).health[0];
    assert_eq!(
        h.correct.reason,
        "bronze holds every record the source sent: 6 with duplicates and rejects"
    );

    // The session's own shortcut and a technical gold column turn its signs red.
    let mut p = scenario("kafka_orders", Lang::En).await;
    send(
        &mut p,
        Request::SetAntiPatterns {
            anti_patterns: medallion_engine::model::AntiPatterns {
                gold_reads_bronze: true,
                ..Default::default()
            },
        },
    )
    .await;
    send(&mut p, Request::SetGoldSql { model: "user_kpi".into(), sql: "SELECT user_id AS user_id_fk, COUNT(*) AS orders, MIN(_event_id) AS _event_id FROM silver.orders GROUP BY user_id".into() }).await;
    send(&mut p, Request::SetGoldSql { model: "revenue_daily".into(), sql: "SELECT _source_system AS source, COUNT(*) AS records FROM bronze.orders GROUP BY _source_system".into() }).await;
    let v = send(
        &mut p,
        Request::LabEvent {
            event: LabEvent::RerunJob,
        },
    )
    .await;
    assert_eq!(colours(&v), ["G-", "R-", "R-", "G-", "G-"]);
    let h = &lab(&v).health;
    assert_eq!(
        h[1].correct.reason,
        "gold reads bronze: gold.revenue_daily ← bronze.orders"
    );
    assert_eq!(
        h[2].correct.reason,
        "technical column names in gold: gold.user_kpi.user_id_fk, gold.user_kpi._event_id"
    );
}

async fn event(p: &mut Playground, e: LabEvent) -> PipelineView {
    send(p, Request::LabEvent { event: e }).await
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn events_a_real_pipeline_meets_land_in_the_session_and_its_twin() {
    let mut p = scenario("kafka_orders", Lang::En).await;
    send(
        &mut p,
        Request::SetLab {
            on: vec![AntiPattern::DedupAtIngest],
        },
    )
    .await;
    // The re-sent file: bronze keeps both copies, MERGE takes it once;
    // dropDuplicates at ingest hides that it was ever sent again.
    let v = event(&mut p, LabEvent::ResendFile).await;
    let e = &lab(&v).timeline[0];
    assert_eq!(e.correct, "The source re-sent users.csv: bronze.users keeps both copies (append-only). MERGE takes it once in silver.users. bronze.users: 2 → 4 rows");
    assert_eq!(e.anti, "no row count or gold value changed");
    assert_eq!(count(lab(&v), "silver.users"), (Some(2), Some(2)));
    // The consumer's crash before commit: the micro-batch comes again.
    let v = event(&mut p, LabEvent::KafkaRedelivery).await;
    let e = &lab(&v).timeline[1];
    assert_eq!(e.correct, "The consumer of orders_raw crashed after writing offsets 0–3 to bronze and before committing them: on restart they were delivered again (at-least-once), and bronze keeps both deliveries. bronze.orders: 4 → 8 rows; silver.quarantine: 1 → 2 rows");
    assert_eq!(count(lab(&v), "bronze.orders"), (Some(8), Some(3)));
    assert_eq!(count(lab(&v), "silver.orders"), (Some(2), Some(2)));
    // A business error goes to the quarantine, for the data owner.
    let v = event(&mut p, LabEvent::BusinessError).await;
    let e = &lab(&v).timeline[2];
    assert!(e.correct.starts_with("A record with amount = -100 arrived in bronze.orders (new messages on orders_raw): a business error."), "{}", e.correct);
    assert!(
        e.correct
            .ends_with("bronze.orders: 8 → 9 rows; silver.quarantine: 2 → 3 rows"),
        "{}",
        e.correct
    );
    assert_eq!(v.topics[0].end_offset, 5);
    let Response::Table(t) = p
        .handle(Request::GetTable {
            table: TableName::bronze("orders"),
            offset: 8,
            limit: 1,
            version: None,
            corrupt_only: false,
        })
        .await
    else {
        panic!("bronze.orders")
    };
    let payload = t
        .columns
        .iter()
        .position(|c| c.name == "raw_payload")
        .unwrap();
    assert_eq!(
        t.rows[0][payload].as_deref(),
        Some(
            r#"{"amount":"-100","created_at":"2024-01-15T10:03:00","order_id":901001,"status":"PAID","user_id":42}"#
        )
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn schema_drift_on_a_csv_source_keeps_its_format_and_the_checks_catch_it() {
    // Schema drift on a CSV source: the new file keeps the source's format.
    let mut p = scenario("nyc_taxi_silver", Lang::En).await;
    let v = event(&mut p, LabEvent::SchemaDrift).await;
    let e = &lab(&v).timeline[0];
    assert!(e.correct.starts_with("The source renamed fare_amount to fare_amount_v2 and added source_version (yellow_tripdata_sample_2020-07_v2.csv)"), "{}", e.correct);
    let b = v.batches.last().unwrap();
    assert_eq!(b.file_name, "yellow_tripdata_sample_2020-07_v2.csv");
    assert_eq!(b.records, 266);
    assert!(
        b.header.contains(&"fare_amount_v2".to_string())
            && b.header.last().map(String::as_str) == Some("source_version"),
        "{:?}",
        b.header
    );
    // The row check catches what silver read as NULL.
    let r1 = v.checks.iter().find(|c| c.id == "R1").unwrap();
    assert_eq!(
        r1.observed,
        "261 of 521 rows violate (261 because a value is NULL)"
    );
    assert_eq!(lab(&v).health.len(), 5);
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_technical_failure_leaves_nothing_visible_and_the_retry_lands_the_file() {
    // A technical failure: 503 halfway, nothing visible, the retry lands it.
    let mut p = scenario("landing_retry", Lang::En).await;
    let v = event(&mut p, LabEvent::TechnicalFailure).await;
    let e = &lab(&v).timeline[0];
    assert_eq!(e.correct, "Attempt 1 of writing batch_2024_01_15_retry.json to bronze.orders: the object store answered 503 Service Unavailable after 1 write; nothing became visible, bronze.orders stayed at version 2. Attempt 2, the platform's retry, landed it as version 3. A technical failure: the platform fixes it by retrying; no data owner has anything to fix. bronze.orders: 4 → 6 rows; silver.quarantine: 1 → 2 rows");
    assert_eq!(v.batches.len(), 3);
    assert_eq!(v.history[&TableName::bronze("orders")].len(), 4);
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn an_event_that_does_not_fit_the_scenario_is_refused_and_changes_nothing() {
    // Without a topic, the Kafka event says what to load; nothing changes.
    let mut p = scenario("cdc_order", Lang::En).await;
    match p.handle(Request::LabEvent { event: LabEvent::KafkaRedelivery }).await {
        Response::Error { message } => assert_eq!(message, "no Kafka topic has delivered a micro-batch in this scenario: load the Kafka orders scenario"),
        other => panic!("unexpected {other:?}"),
    }
    assert!(p.view().lab.is_none());
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn what_the_fresh_instructor_found_stays_fixed() {
    // A re-sent file into a silver table without a key: the text says it doubles.
    let mut p = scenario("nyc_taxi_silver", Lang::En).await;
    let v = event(&mut p, LabEvent::ResendFile).await;
    let e = &lab(&v).timeline[0];
    assert!(
        e.correct.contains(
            "silver.nyc_taxi_yellow has no key to merge on, so it now holds the file's rows twice"
        ),
        "{}",
        e.correct
    );
    assert!(!e.correct.contains("MERGE takes it once"), "{}", e.correct);

    // The CDC business error is a new order: the PAID state stays, and the
    // text says no rule rejects -100.
    let mut p = scenario("cdc_order", Lang::En).await;
    let v = event(&mut p, LabEvent::BusinessError).await;
    let e = &lab(&v).timeline[0];
    assert!(
        e.correct
            .contains("no rule of silver rejects it, so it went through to silver and gold"),
        "{}",
        e.correct
    );
    assert_eq!(v.quarantine_open, 0);
    let current = v.table(TableName::silver("order_current")).unwrap();
    assert_eq!(current.row_count, 2);
    let status = current
        .columns
        .iter()
        .position(|c| c.name == "status")
        .unwrap();
    assert!(
        current
            .rows
            .iter()
            .any(|r| r[status].as_deref() == Some("PAID")),
        "{:?}",
        current.rows
    );

    // Averages are not summed; the combination counts each record once.
    let mut p = scenario("kafka_orders", Lang::En).await;
    let v = send(
        &mut p,
        Request::SetLab {
            on: vec![AntiPattern::DedupAtIngest, AntiPattern::FilterAtIngest],
        },
    )
    .await;
    let l = lab(&v);
    let g = l
        .gold
        .iter()
        .find(|g| g.model == TableName::gold("revenue_daily"))
        .unwrap();
    assert!(
        g.measures.iter().all(|m| m.column != "avg_order"),
        "{:?}",
        g.measures
    );
    assert_eq!(count(l, "bronze.orders"), (Some(4), Some(2)));
    assert_eq!(l.findings[0], "bronze.orders: the source sent 4 records, bronze with dropDuplicates holds 3. The one dropped (re-deliveries, later changes of a key) cannot be counted by a reconciliation, replayed or audited: what the source sent is no longer known.");
    assert!(
        l.findings[1].starts_with(
            "bronze.orders: 1 of the 4 records the source sent failed a business rule"
        ),
        "{:?}",
        l.findings
    );

    // A switch with nothing to show says so.
    let mut p = scenario("cdc_order", Lang::En).await;
    let v = send(
        &mut p,
        Request::SetLab {
            on: vec![AntiPattern::FilterAtIngest],
        },
    )
    .await;
    assert!(
        lab(&v).findings[0].starts_with("The business filter at ingest changes nothing here"),
        "{:?}",
        lab(&v).findings
    );

    // Gold that reads bronze reads the twin's bronze too.
    let mut p = scenario("kafka_orders", Lang::En).await;
    send(
        &mut p,
        Request::SetAntiPatterns {
            anti_patterns: medallion_engine::model::AntiPatterns {
                gold_reads_bronze: true,
                ..Default::default()
            },
        },
    )
    .await;
    send(
        &mut p,
        Request::SetGoldSql {
            model: "revenue_daily".into(),
            sql: "SELECT COUNT(*) AS records FROM bronze.orders".into(),
        },
    )
    .await;
    let v = send(
        &mut p,
        Request::SetLab {
            on: vec![AntiPattern::DedupAtIngest],
        },
    )
    .await;
    let g = lab(&v)
        .gold
        .iter()
        .find(|g| g.model == TableName::gold("revenue_daily"))
        .unwrap();
    assert_eq!(g.error, None);
    assert_eq!(g.rows[0].correct, vec![Some("4".to_string())]);
    assert_eq!(g.rows[0].anti, vec![Some("3".to_string())]);
}

/// The sign's `(correct, anti)` colours and the twin's reason.
fn sign(l: &LabView, key: &str) -> (bool, Option<bool>, String) {
    let h = l.health.iter().find(|h| h.sign.key() == key).expect(key);
    (
        h.correct.ok,
        h.anti.as_ref().map(|a| a.ok),
        h.anti
            .as_ref()
            .map(|a| a.reason.clone())
            .unwrap_or_default(),
    )
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn the_weekly_fix_job_updates_a_business_error_so_replay_no_longer_gives_the_published_gold()
{
    let mut p = scenario("kafka_orders", Lang::En).await;
    send(
        &mut p,
        Request::LabEvent {
            event: LabEvent::BusinessError,
        },
    )
    .await;
    let v = send(
        &mut p,
        Request::SetLab {
            on: vec![AntiPattern::FixJobInBronze],
        },
    )
    .await;
    let l = lab(&v);
    // The -100 record is UPDATEd to 100 and passes; the bad_data one is DELETEd.
    assert_eq!(count(l, "bronze.orders"), (Some(5), Some(4)));
    assert_eq!(count(l, "silver.orders"), (Some(2), Some(3)));
    assert_eq!(count(l, "silver.quarantine"), (Some(2), Some(0)));
    assert_eq!(
        measure(l, "revenue_daily", "revenue"),
        ("99.99".into(), "199.99".into(), Some(199.99 / 99.99))
    );
    assert!(l.findings.contains(&"gold.revenue_daily: total revenue is 99.99 in the correct pipeline and 199.99 (×≈2) with the anti-pattern.".to_string()), "{:?}", l.findings);
    assert_eq!(l.findings[4..], [
        "bronze.orders: the weekly fix job rewrote 2 records the source sent: 1 UPDATEd in place (the minus of a negative amount dropped), 1 DELETEd (the other records silver rejected). The quarantine no longer shows them and the source's originals exist nowhere.".to_string(),
        "gold.revenue_daily: the version published before bronze was rewritten and a replay of today's bronze differ in 1 row (Σ revenue 99.99 → 199.99, Σ orders_count 1 → 2): last period's report can no longer be reproduced.".to_string(),
        "gold.user_kpi: the version published before bronze was rewritten and a replay of today's bronze differ in 1 row (Σ orders 2 → 3, Σ paid_revenue 99.99 → 199.99): last period's report can no longer be reproduced.".to_string(),
    ]);
    assert_eq!(
        sign(l, "gold_rebuildable"),
        (true, Some(false), "bronze was rewritten after gold was published: a replay gives another gold than the one published (rows that differ): gold.revenue_daily (1), gold.user_kpi (1)".to_string())
    );
    assert_eq!(
        sign(l, "bronze_keeps_everything").2,
        "2 records the source sent are not in bronze: bronze.orders: 2 (fix_job_in_bronze)"
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn the_weekly_delete_request_removes_a_customer_from_bronze_and_the_published_gold_is_lost() {
    let mut p = scenario("kafka_orders", Lang::En).await;
    let v = send(
        &mut p,
        Request::SetLab {
            on: vec![AntiPattern::WeeklyDelete],
        },
    )
    .await;
    let l = lab(&v);
    // user 42 has three of the four order records.
    assert_eq!(count(l, "bronze.orders"), (Some(4), Some(1)));
    // uid 42 leaves bronze.users too: silver renames uid to user_id.
    assert_eq!(count(l, "bronze.users"), (Some(2), Some(1)));
    assert_eq!(
        measure(l, "revenue_daily", "revenue"),
        ("99.99".into(), "0.00".into(), Some(0.0))
    );
    assert_eq!(
        measure(l, "user_kpi", "orders"),
        ("2".into(), "1".into(), Some(0.5))
    );
    assert!(l.findings.iter().any(|f| f.starts_with("The weekly DELETE … WHERE user_id = 42 removed that customer's records from bronze.orders (3), bronze.users (1): bronze became a mutable database")), "{:?}", l.findings);
    assert_eq!(sign(l, "gold_rebuildable").1, Some(false));
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn the_shortcut_gives_two_gold_models_over_bronze_that_disagree() {
    let mut p = scenario("kafka_orders", Lang::En).await;
    let v = send(
        &mut p,
        Request::SetLab {
            on: vec![AntiPattern::Shortcut],
        },
    )
    .await;
    let l = lab(&v);
    assert_eq!(l.findings, vec!["Two gold models read bronze.orders and clean it their own way: gold.orders_total_a keeps distinct payloads, gold.orders_total_b the newest record of each order_id with amount > 0. They disagree: 3 records against 2 (50.0%). Silver, the one cleaned source (silver.orders), says Σ amount 248.99 over 2 records. Which dashboard is right? Nobody can tell.".to_string()]);
    assert_eq!(
        measure(l, "orders_total_a", "records"),
        ("2".into(), "3".into(), Some(1.5))
    );
    // A business error: one model counts the -100, the other filters it.
    let v = send(
        &mut p,
        Request::LabEvent {
            event: LabEvent::BusinessError,
        },
    )
    .await;
    let l = lab(&v);
    assert_eq!(
        measure(l, "orders_total_a", "total"),
        ("248.99".into(), "148.99".into(), Some(148.99 / 248.99))
    );
    assert_eq!(
        measure(l, "orders_total_b", "total"),
        ("248.99".into(), "248.99".into(), Some(1.0))
    );
    assert!(
        l.findings.iter().any(|f| f.contains(
            "They disagree: Σ amount 148.99 against 248.99 (40.2%), 4 records against 2 (100.0%)."
        )),
        "{:?}",
        l.findings
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn late_records_after_the_watermark_reach_an_earlier_day_of_gold() {
    let mut p = scenario("kafka_orders", Lang::En).await;
    let v = send(
        &mut p,
        Request::LabEvent {
            event: LabEvent::LateRecords,
        },
    )
    .await;
    let e = &v.lab.as_ref().expect("the timeline").timeline[0];
    assert_eq!(e.correct, "Late records arrived in bronze.orders (new messages on orders_raw): created_at on 2024-01-12, 3 days before the newest records (2024-01-15). Bronze is partitioned and watermarked by _ingest_ts, not by the business date: the full refresh reads all of bronze (the watermark on _ingest_ts was 2023-11-14 22:13:23 UTC), so it took them, and gold's figures for 2024-01-12 move. A watermark on created_at would have skipped them for good. bronze.orders: 4 → 6 rows; gold.revenue_daily: 1 → 2 rows; gold.user_kpi: 2 rows, 2 changed (v0 → v1); silver.orders: 2 → 4 rows");
    let Response::Table(t) = p
        .handle(Request::GetTable {
            table: "gold.revenue_daily".parse().unwrap(),
            offset: 0,
            limit: 100,
            version: None,
            corrupt_only: false,
        })
        .await
    else {
        panic!("gold.revenue_daily")
    };
    assert_eq!(t.rows[0][0].as_deref(), Some("2024-01-12"));
    assert_eq!(t.rows[0][2].as_deref(), Some("99.99"));
    assert_eq!(t.rows.len(), 2);
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_join_at_ingest_keeps_yesterdays_lookup_in_bronze_when_a_customer_moves() {
    let mut p = scenario("kafka_orders", Lang::En).await;
    let v = send(
        &mut p,
        Request::SetLab {
            on: vec![AntiPattern::JoinAtIngest],
        },
    )
    .await;
    let l = lab(&v);
    // Today the stored values match the lookup: the damage is in lineage only.
    assert!(l.findings[0].ends_with("Today they match silver.users; let it change (Events: a dimension changes) and yesterday's bronze keeps the old values while silver's lookup moves on."), "{:?}", l.findings);
    assert_eq!(colours(&v), ["GG", "GG", "GG", "GG", "GR"]);
    // Jonas (uid 42) moves from DE to RU.
    let v = send(
        &mut p,
        Request::LabEvent {
            event: LabEvent::DimensionChange,
        },
    )
    .await;
    let l = lab(&v);
    let e = &l.timeline[0];
    assert!(e.correct.starts_with("bronze.users received a change (users_change.csv): the record uid = 42 now has country = RU (was DE), the same key."), "{}", e.correct);
    assert_eq!(
        e.anti,
        "bronze.users: 2 → 3 rows; gold.user_kpi: 2 rows, 1 changed"
    );
    assert!(
        l.findings[0].contains("3 of them hold values silver.users no longer has"),
        "{:?}",
        l.findings
    );
    // The correct gold follows the move; the twin's keeps the country stored at ingest.
    let g = &l.gold[0];
    assert_eq!(g.model, TableName::gold("revenue_daily"));
    assert_eq!(g.rows[0].correct[1].as_deref(), Some("RU"));
    assert!(g.rows[0].anti.is_empty());
    assert_eq!(g.rows[1].anti[1].as_deref(), Some("DE"));
    assert_eq!(colours(&v), ["GG", "GG", "GG", "GR", "GR"]);
    assert_eq!(
        sign(l, "gold_rebuildable").2,
        "bronze holds a JOIN made at ingest: a replay of the ingest joins with today's lookup and gives another gold (rows that differ): gold.revenue_daily (1)"
    );
}

/// A semicolon CSV with decimal commas and a text business key (C-17).
fn decimal_comma_sales() -> medallion_engine::model::PipelineDef {
    serde_json::from_value(serde_json::json!({
        "title": "semicolon sales",
        "bronze": [{
            "name": "sales", "source_system": "erp", "description": "",
            "schema": {"columns": [
                {"name": "order_id", "type": "STRING"},
                {"name": "customer_id", "type": "STRING"},
                {"name": "total_amount", "type": "DECIMAL(10,2)"},
                {"name": "status", "type": "STRING"},
                {"name": "order_date", "type": "DATE"}
            ]},
            "ingest_options": {"delimiter": ";", "decimal_separator": ","}
        }],
        "silver": [{
            "name": "sales", "source": "sales", "description": "",
            "rules": {"rules": [
                {"id": "X1", "kind": "expect", "column": "total_amount", "expression": "total_amount > 0", "enabled": true, "rationale": ""},
                {"id": "X2", "kind": "expect", "column": "status", "expression": "status IN ('PAID', 'NEW')", "enabled": true, "rationale": ""}
            ]},
            "merge": {"keys": ["order_id"]}
        }],
        "gold": [
            {"name": "revenue_by_day", "description": "", "sql": "SELECT order_date, COUNT(*) AS orders, SUM(total_amount) AS revenue, MAX(total_amount) AS max_amount FROM silver.sales GROUP BY order_date ORDER BY order_date"}
        ],
        "checks": []
    }))
    .expect("the pipeline parses")
}

async fn sales_session() -> Playground {
    support::yield_to_browser().await;
    let mut p = Playground::with_env(
        Arc::new(FixedClock::new(1_700_000_000_000_000)),
        Arc::new(SequentialIds::default()),
    )
    .expect("playground");
    p.load_pipeline(decimal_comma_sales()).await.expect("loads");
    for (name, text) in [
        ("sales_1.csv", "order_id;customer_id;total_amount;status;order_date\nC-17;K-1;12,50;PAID;2024-01-15\nC-18;K-2;100,00;PAID;2024-01-15\nC-19;K-1;-5,00;PAID;2024-01-16\nC-20;K-1;7,25;BAD;2024-01-16\n"),
        ("sales_2.csv", "order_id;customer_id;total_amount;status;order_date\nC-17;K-1;12,50;PAID;2024-01-15\nC-21;K-3;30,00;NEW;2024-01-16\n"),
    ] {
        send(
            &mut p,
            Request::Ingest {
                table: "sales".into(),
                file_name: name.into(),
                bytes: text.as_bytes().to_vec(),
                options: Default::default(),
            },
        )
        .await;
    }
    p
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn the_lab_reads_a_decimal_comma_source_and_a_text_key_as_the_session_does() {
    // The fix job: -5,00 is a negative amount in this source's notation.
    let mut p = sales_session().await;
    let v = send(
        &mut p,
        Request::SetLab {
            on: vec![AntiPattern::FixJobInBronze],
        },
    )
    .await;
    let l = lab(&v);
    assert!(l.findings.iter().any(|f| f.starts_with("bronze.sales: the weekly fix job rewrote 2 records the source sent: 1 UPDATEd in place")), "{:?}", l.findings);
    assert!(
        l.findings
            .iter()
            .any(|f| f.contains("Σ revenue 142.50 → 147.50")),
        "{:?}",
        l.findings
    );
    // A maximum is no total: it is not summed.
    assert!(l.gold[0].measures.iter().all(|m| m.column != "max_amount"));
    assert_eq!(sign(l, "gold_rebuildable").1, Some(false));

    // The shortcut parses bronze as declared: decimal commas and all.
    let v = send(
        &mut p,
        Request::SetLab {
            on: vec![AntiPattern::Shortcut],
        },
    )
    .await;
    let l = lab(&v);
    assert_eq!(
        measure(l, "sales_total_a", "total"),
        ("142.50".into(), "144.75".into(), Some(14475.0 / 14250.0))
    );
    assert_eq!(
        measure(l, "sales_total_b", "total"),
        ("142.50".into(), "149.75".into(), Some(14975.0 / 14250.0))
    );
    assert!(l.findings.iter().any(|f| f.contains("They disagree: Σ total_amount 144.75 against 149.75 (3.3%), 5 records against 4 (25.0%).")), "{:?}", l.findings);

    // The weekly DELETE names a text customer as SQL would.
    let v = send(
        &mut p,
        Request::SetLab {
            on: vec![AntiPattern::WeeklyDelete],
        },
    )
    .await;
    assert!(lab(&v).findings.iter().any(|f| f.starts_with("The weekly DELETE … WHERE customer_id = 'K-1' removed that customer's records from bronze.sales (4)")), "{:?}", lab(&v).findings);
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_failed_silver_job_stops_a_monolithic_silver_and_only_its_readers_otherwise() {
    // CDC: order_current fails; order_history and the gold over it do not read it.
    let mut p = scenario("cdc_order", Lang::En).await;
    let v = send(
        &mut p,
        Request::SetLab {
            on: vec![AntiPattern::MonolithicSilver],
        },
    )
    .await;
    assert_eq!(
        lab(&v).findings[0],
        "One job builds every silver table in the twin. Fire \"A silver job fails halfway\" (Events): one table's failure then stops all of them."
    );
    let v = event(&mut p, LabEvent::SilverJobFails).await;
    let l = lab(&v);
    assert_eq!(
        l.timeline.last().unwrap().correct,
        "New records arrived in bronze.order_cdc (order_cdc_new.jsonl), and the job of silver.order_current failed halfway (injected by the lab, once). Each silver table is its own job. Waiting for the retry at their last good version (re-run the job): silver.order_current. Refreshed: silver.order_history, gold.time_in_status. bronze.order_cdc: 5 → 7 rows; gold.time_in_status: 2 rows, 2 changed (v0 → v1); silver.order_history: 5 → 7 rows"
    );
    assert_eq!(
        l.timeline.last().unwrap().anti,
        "bronze.order_cdc: 5 → 7 rows"
    );
    assert_eq!(count(l, "silver.order_current"), (Some(1), Some(1)));
    assert_eq!(count(l, "silver.order_history"), (Some(7), Some(5)));
    assert_eq!(
        measure(l, "time_in_status", "versions"),
        ("7".into(), "5".into(), Some(5.0 / 7.0))
    );
    assert_eq!(
        l.findings[0],
        "The job of silver.order_current failed. Monolithic silver: the whole run stopped, and no silver table (2) and no gold model was refreshed (gold models waiting for the retry: 1 of 1). With independent jobs only these wait: silver.order_current (gold models: 0 of 1); up to date: silver.order_history, gold.time_in_status."
    );
    assert_eq!(colours(&v), ["GG", "GG", "GG", "GG", "GG"]);
    // The monolithic run checked nothing: no check of the twin passes over
    // the bronze it never read.
    assert!(
        l.checks.iter().all(|c| c.anti != CheckStatus::Pass),
        "{:?}",
        l.checks
    );
    assert!(!v.run.ok);
    assert_eq!(
        v.run.errors,
        ["silver.order_current: the job failed halfway (the lab's injected failure: an executor was lost); press Run now or re-run the job to retry"]
    );
    assert_eq!(v.gold[0].error, None);
    // The retry builds it; the monolithic twin catches up.
    let v = event(&mut p, LabEvent::RerunJob).await;
    let l = lab(&v);
    assert!(v.run.ok, "{:?}", v.run);
    assert_eq!(
        l.timeline.last().unwrap().correct,
        "The retry: the job of silver.order_current ran again and succeeded, so every silver table and gold model is up to date. silver.order_current: v0 → v1 (1 → 2 rows)"
    );
    assert_eq!(count(l, "silver.order_current"), (Some(2), Some(2)));
    assert_eq!(count(l, "silver.order_history"), (Some(7), Some(7)));
    assert!(
        l.findings[0].starts_with("One job builds every silver table"),
        "{:?}",
        l.findings
    );

    // Kafka orders in Russian: orders fails, the new users still land in silver.
    let mut p = scenario("kafka_orders", Lang::Ru).await;
    send(
        &mut p,
        Request::SetLab {
            on: vec![AntiPattern::MonolithicSilver],
        },
    )
    .await;
    // (A re-run before the failure stays before it: the twin still stops.)
    event(&mut p, LabEvent::RerunJob).await;
    let v = event(&mut p, LabEvent::SilverJobFails).await;
    let l = lab(&v);
    assert_eq!(count(l, "silver.users"), (Some(4), Some(2)));
    assert_eq!(count(l, "silver.orders"), (Some(2), Some(2)));
    assert_eq!(
        v.run.errors,
        ["silver.orders: джоба упала на полпути (сбой внесён лабораторией: потерян executor); нажмите «Запустить» или перезапустите джобу, чтобы повторить"]
    );
    for g in &v.gold {
        assert_eq!(
            g.error.as_deref(),
            Some("не обновлена: читает silver.orders, которую этот запуск не смог построить; показывает последний успешный результат, пока запуск не построит silver.orders"),
            "{}",
            g.model.name
        );
    }
    assert!(
        l.findings[0]
            .starts_with("Джоба silver.orders упала. Монолитный silver: остановился весь запуск"),
        "{:?}",
        l.findings
    );

    // One silver table: nothing else could keep running.
    let mut p = scenario("landing_retry", Lang::En).await;
    match p.handle(Request::LabEvent { event: LabEvent::SilverJobFails }).await {
        Response::Error { message } => assert_eq!(message, "this scenario has one silver table: there is no other job to keep running (load e-commerce, Kafka orders or the CDC order)"),
        other => panic!("unexpected {other:?}"),
    }
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn insert_takes_a_kafka_redelivery_twice_while_merge_takes_it_once() {
    let mut p = scenario("kafka_orders", Lang::En).await;
    send(
        &mut p,
        Request::SetLab {
            on: vec![AntiPattern::InsertInsteadOfMerge],
        },
    )
    .await;
    let v = event(&mut p, LabEvent::KafkaRedelivery).await;
    let l = lab(&v);
    assert_eq!(count(l, "bronze.orders"), (Some(8), Some(8)));
    assert_eq!(count(l, "silver.orders"), (Some(2), Some(4)));
    assert_eq!(
        l.findings[0],
        "silver.orders: 2 rows with MERGE, 4 with INSERT: what the source delivered again (orders_raw:0:0-3) was inserted again; MERGE matched it to the rows it repeats."
    );
    assert_eq!(
        measure(l, "revenue_daily", "revenue"),
        ("99.99".into(), "199.98".into(), Some(2.0))
    );
    assert_eq!(
        l.timeline.last().unwrap().anti,
        "bronze.orders: 4 → 8 rows; silver.orders: 2 → 4 rows; silver.quarantine: 1 → 2 rows; gold.revenue_daily: 1 row, 1 changed; gold.user_kpi: 2 rows, 2 changed"
    );
    // The appended rows cannot be rebuilt by a replay.
    let (mine, theirs, _) = sign(l, "gold_rebuildable");
    assert_eq!((mine, theirs), (true, Some(false)));
    // A re-run after it: three runs, two rows each (found by a fresh pass).
    let v = event(&mut p, LabEvent::RerunJob).await;
    let l = lab(&v);
    assert_eq!(count(l, "silver.orders"), (Some(2), Some(6)));
    assert_eq!(
        l.findings[0],
        "silver.orders: 2 rows with MERGE, 6 with INSERT after 3 runs of the same job (2 each run): every re-run appended the same rows again."
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn schema_drift_that_repeats_keys_says_why_silver_empties() {
    // The CDC source sends its five events again with amount renamed: each
    // ties with the event it repeats, so MERGE quarantines both.
    let mut p = scenario("cdc_order", Lang::En).await;
    let v = event(&mut p, LabEvent::SchemaDrift).await;
    let text = &lab(&v).timeline.last().unwrap().correct;
    assert!(
        text.contains("They came again under the keys and sequence values of records silver already had, with other values, so a MERGE cannot tell which one is right: 20 quarantine rows (rule merge)"),
        "{text}"
    );
    assert!(
        text.ends_with("silver.order_history: 5 → 0 rows; silver.quarantine: 0 → 20 rows"),
        "{text}"
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_join_at_ingest_on_typed_bronze_or_two_lookups_of_one_table_runs_and_says_what_it_did() {
    // Found by a fresh instructor: on e-commerce (typed bronze.orders) the
    // switch panicked the engine; on NYC taxi two lookups of the zone table
    // stored the same joined_borough twice and the twin could not run.
    let mut p = scenario("ecommerce", Lang::En).await;
    let v = send(
        &mut p,
        Request::SetLab {
            on: vec![AntiPattern::JoinAtIngest],
        },
    )
    .await;
    assert_eq!(
        lab(&v).findings,
        ["bronze.orders is stored typed here (its columns, not the record's text), so the bronze job has no raw record to write the looked-up columns into: the JOIN at ingest is shown on raw bronze (load the Kafka orders scenario)."]
    );
    let mut p = scenario("nyc_taxi_silver", Lang::En).await;
    let v = send(
        &mut p,
        Request::SetLab {
            on: vec![AntiPattern::JoinAtIngest],
        },
    )
    .await;
    let f = &lab(&v).findings;
    assert!(f[0].starts_with("bronze.nyc_taxi_yellow: the bronze job joined its 266 records with bronze.taxi_zone_lookup at ingest and stored borough, zone in them (joined_pu_borough, joined_pu_zone)."), "{f:?}");
    assert!(
        f[1].contains("(joined_dz_borough, joined_dz_zone)"),
        "{f:?}"
    );
    assert_eq!(
        count(lab(&v), "silver.nyc_taxi_yellow"),
        (Some(260), Some(260))
    );
}
