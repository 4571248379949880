//! Bronze appends commit through the table's log (`_delta_log`): the data
//! file first, the log entry last. A failure between the two leaves the
//! previous version: no batch, no rows, no version, nothing for silver.

use std::sync::{Arc, Mutex};

use failing_store::{FailingLogStore, Faults};
use medallion_engine::api::{Lang, Request, Response};
use medallion_engine::env::{FixedClock, SequentialIds};
use medallion_engine::lake::log::TableLog;
use medallion_engine::Playground;

#[path = "support/failing_store.rs"]
mod failing_store;

/// Log entries fail from now on (`true`) or no longer (`false`).
fn fail_logs(faults: &Mutex<Faults>, on: bool) {
    faults.lock().unwrap().on = on;
}

const CSV: &str = "VendorID,tpep_pickup_datetime,tpep_dropoff_datetime,passenger_count,trip_distance,RatecodeID,store_and_fwd_flag,PULocationID,DOLocationID,payment_type,fare_amount,extra,mta_tax,tip_amount,tolls_amount,improvement_surcharge,total_amount,congestion_surcharge\n\
1,2020-07-01 00:25:32,2020-07-01 00:33:39,1,1.50,1,N,238,75,2,8,0.5,0.5,0,0,0.3,9.3,0\n\
2,2020-07-01 00:05:00,2020-07-01 00:15:00,1,2.00,1,N,161,236,1,10,0.5,0.5,2,0,0.3,15.8,2.5\n";

fn ingest(name: &str) -> Request {
    Request::Ingest {
        table: "nyc_taxi_yellow".into(),
        file_name: name.into(),
        bytes: CSV.as_bytes().to_vec(),
        options: Default::default(),
    }
}

#[tokio::test]
async fn a_failure_between_the_data_file_and_the_log_entry_leaves_the_previous_version() {
    let (mut p, fail, store) = failing_playground().await;
    let log = TableLog::new(store, "bronze/nyc_taxi_yellow");

    let Response::Snapshot(before) = p.handle(ingest("first.csv")).await else {
        panic!()
    };
    let table = |v: &medallion_engine::PipelineView, t: &str| v.table(t).unwrap().row_count;
    assert_eq!(table(&before, "bronze.nyc_taxi_yellow"), 268);
    let versions = before.history["bronze.nyc_taxi_yellow"].len();
    let logged = log.snapshot(None).await.unwrap().unwrap();
    // Every bronze version is a log version: CREATE TABLE, the example's file, first.csv.
    assert_eq!(logged.version as usize + 1, versions);
    assert_eq!(logged.num_records(), 268);
    assert_eq!(
        logged
            .commits
            .iter()
            .map(|(_, c)| c.operation.as_str())
            .collect::<Vec<_>>(),
        ["CREATE TABLE", "WRITE", "WRITE"]
    );

    // The data file is written, the log entry is not: the ingest fails and nothing changed.
    fail_logs(&fail, true);
    let Response::Error { message } = p.handle(ingest("second.csv")).await else {
        panic!("the ingest should fail")
    };
    assert_eq!(
        message,
        "storage: bronze/nyc_taxi_yellow: the lake's store failed: Generic test error: no space left on device"
    );
    let Response::Snapshot(after) = p.handle(Request::Snapshot).await else {
        panic!()
    };
    assert_eq!(table(&after, "bronze.nyc_taxi_yellow"), 268);
    assert_eq!(
        table(&after, "silver.nyc_taxi_yellow"),
        table(&before, "silver.nyc_taxi_yellow")
    );
    assert_eq!(after.batches, before.batches);
    assert_eq!(
        after.history["bronze.nyc_taxi_yellow"],
        before.history["bronze.nyc_taxi_yellow"]
    );
    assert_eq!(log.snapshot(None).await.unwrap().unwrap(), logged);

    // The store works again: the next append is the next version, no gap, no leftover rows.
    fail_logs(&fail, false);
    let Response::Snapshot(again) = p.handle(ingest("second.csv")).await else {
        panic!()
    };
    assert_eq!(table(&again, "bronze.nyc_taxi_yellow"), 270);
    let now = log.snapshot(None).await.unwrap().unwrap();
    assert_eq!(now.version, logged.version + 1);
    assert_eq!(now.num_records(), 270);
    assert_eq!(again.history["bronze.nyc_taxi_yellow"].len(), versions + 1);
    assert_eq!(again.batches.len(), before.batches.len() + 1);
}

#[tokio::test]
async fn a_right_to_be_forgotten_delete_is_a_delete_commit_and_the_log_counts_what_is_left() {
    let mut p = taxi().await;
    let Response::Snapshot(_) = p.handle(ingest("first.csv")).await else {
        panic!()
    };
    let r = p
        .handle(Request::Forget {
            table: "nyc_taxi_yellow".into(),
            predicate: "_source_file = 'first.csv' AND raw_payload LIKE '2,%'".into(),
            reason: "erasure request 17".into(),
            expected_rows: Some(1),
            plan_state: None,
        })
        .await;
    let Response::Snapshot(v) = r else {
        panic!("{r:?}")
    };
    assert_eq!(v.table("bronze.nyc_taxi_yellow").unwrap().row_count, 267);
    let log = TableLog::new(p.lake_store(), "bronze/nyc_taxi_yellow");
    let now = log.snapshot(None).await.unwrap().unwrap();
    assert_eq!(now.num_records(), 267);
    let (version, last) = now.commits.last().unwrap();
    assert_eq!(last.operation, "DELETE");
    assert_eq!(last.operation_parameters["reason"], "erasure request 17");
    assert_eq!(
        *version as usize + 1,
        v.history["bronze.nyc_taxi_yellow"].len()
    );
}

#[tokio::test]
async fn the_batch_log_is_read_from_the_bronze_log_alone_read_again_and_erasures_included() {
    use medallion_engine::bronze::batch_log;
    let mut p = taxi().await;
    let Response::Snapshot(v) = p.handle(ingest("first.csv")).await else {
        panic!()
    };
    let first = v.batches.last().unwrap().batch_id.clone();
    let r = p
        .handle(Request::Reingest {
            batch_id: first.clone(),
            options: Default::default(),
            remember: false,
        })
        .await;
    let Response::Snapshot(v) = r else {
        panic!("{r:?}")
    };
    let again = v.batches.last().unwrap().batch_id.clone();
    let r = p
        .handle(Request::Forget {
            table: "nyc_taxi_yellow".into(),
            predicate: "_source_file = 'first.csv' AND raw_payload LIKE '2,%'".into(),
            reason: "erasure request 18".into(),
            expected_rows: None,
            plan_state: None,
        })
        .await;
    let Response::Snapshot(v) = r else {
        panic!("{r:?}")
    };
    let log = TableLog::new(p.lake_store(), "bronze/nyc_taxi_yellow");
    let logged: Vec<_> = batch_log::read(&log).await.unwrap();
    let page: Vec<_> = v
        .batches
        .iter()
        .filter(|b| b.table == "nyc_taxi_yellow")
        .cloned()
        .collect();
    assert_eq!(
        logged.iter().map(|(_, b)| b.clone()).collect::<Vec<_>>(),
        page
    );
    assert_eq!(
        logged.iter().map(|(o, _)| *o).collect::<Vec<_>>(),
        [1, 2, 3],
        "the zone lookup's batch is the session's first"
    );
    let old = &logged[1].1;
    assert_eq!(old.batch_id, first);
    assert_eq!(old.superseded_by.as_deref(), Some(again.as_str()));
    assert_eq!(old.erased_records, 1);
    assert_eq!(old.landing_path, None);
    assert_eq!(
        old.notes[old.notes.len() - 2..],
        [
            format!("read again as batch {again} with other options: silver reads that batch instead of this one, which stays in bronze"),
            "1 record(s) erased (right to be forgotten: erasure request 18); the landed file was deleted".to_string(),
        ]
    );
    let new = &logged[2].1;
    assert_eq!(new.erased_records, 1);
    assert!(new.path.ends_with(".v4.parquet"), "{}", new.path);
    assert_eq!(
        new.notes.iter().filter(|n| n.starts_with("reads the file of batch")).count(),
        1
    );
}

#[tokio::test]
async fn an_erasure_plan_holds_for_the_state_it_was_made_on_only() {
    let mut p = taxi().await;
    let Response::Snapshot(v) = p.handle(ingest("first.csv")).await else {
        panic!()
    };
    let predicate = "_source_file = 'first.csv' AND raw_payload LIKE '2,%'";
    let plan_request = || Request::PlanForget {
        table: "nyc_taxi_yellow".into(),
        predicate: predicate.into(),
    };
    let forget = |plan: &medallion_engine::playground::ErasurePlan| Request::Forget {
        table: "nyc_taxi_yellow".into(),
        predicate: predicate.into(),
        reason: "request 19".into(),
        expected_rows: Some(plan.rows),
        plan_state: Some(plan.state.clone()),
    };
    let Response::ErasurePlan(first) = p.handle(plan_request()).await else {
        panic!()
    };
    assert_eq!(first.rows, 1);
    assert_eq!(first.state, v.state);
    // A file that the condition does not match: the same rows, another gold.
    let mut other = ingest("second.csv");
    if let Request::Ingest { bytes, .. } = &mut other {
        *bytes = CSV.replace("2,2020-07-01 00:05:00", "1,2020-07-01 00:05:00").into_bytes();
    }
    let Response::Snapshot(after) = p.handle(other).await else {
        panic!()
    };
    assert_ne!(after.state, first.state);
    let r = p.handle(forget(&first)).await;
    assert_eq!(
        r,
        Response::Error {
            message: "the session changed since the plan was made (a file, a rule, a version or a Kafka message), so it may no longer show what this delete does; look at the plan again. Nothing was deleted.".into()
        }
    );
    let Response::Snapshot(unchanged) = p.handle(Request::Snapshot).await else {
        panic!()
    };
    assert_eq!(unchanged.erasures.len(), 0);
    assert_eq!(unchanged.table("bronze.nyc_taxi_yellow").unwrap().row_count, 270);
    // A plan made now holds, and the erasure does what it showed.
    let Response::ErasurePlan(second) = p.handle(plan_request()).await else {
        panic!()
    };
    assert_eq!(second.state, unchanged.state);
    let Response::Snapshot(done) = p.handle(forget(&second)).await else {
        panic!()
    };
    assert_eq!(done.erasures.len(), 1);
    assert_eq!(done.table("bronze.nyc_taxi_yellow").unwrap().row_count, 269);
}

#[tokio::test]
async fn the_state_token_moves_with_every_change_and_marks_a_replay_as_older() {
    let mut p = taxi().await;
    let Response::Snapshot(replayed) = p.handle(Request::Replay).await else {
        panic!()
    };
    let report = replayed.replay.clone().unwrap();
    assert!(report.identical);
    assert_eq!(report.state, replayed.state);
    // A run that changes nothing keeps the state (and the replay current).
    let Response::Snapshot(same) = p.handle(Request::Run { full_refresh: false }).await else {
        panic!()
    };
    assert_eq!(same.state, replayed.state);
    // A rule edit, an ingest, a run mode: each gives another state.
    let v = set_f2(&mut p, "total_amount > 50").await;
    assert_ne!(v.state, replayed.state);
    assert_eq!(v.replay.unwrap().state, replayed.state, "the report says which state it compared");
    let Response::Snapshot(w) = p.handle(ingest("first.csv")).await else {
        panic!()
    };
    assert_ne!(w.state, v.state);
    let Response::Snapshot(m) = p
        .handle(Request::SetRunMode {
            mode: medallion_engine::api::RunMode::Incremental,
        })
        .await
    else {
        panic!()
    };
    assert_ne!(m.state, w.state);
    assert_eq!(m.state.len(), 16);
}

/// The NYC taxi example in an in-memory lake, with a fixed clock.
async fn taxi() -> Playground {
    let mut p = Playground::with_env(
        Arc::new(FixedClock::new(1_700_000_000_000_000)),
        Arc::new(SequentialIds::default()),
    )
    .unwrap();
    p.load_example("nyc_taxi_silver", Lang::En).await.unwrap();
    p
}

/// A playground over a [`FailingLogStore`] (its fault switch and store).
async fn failing_playground() -> (Playground, Arc<Mutex<Faults>>, Arc<FailingLogStore>) {
    let (mut p, faults, stores) = failing_store::playground();
    p.load_example("nyc_taxi_silver", Lang::En).await.unwrap();
    let store = stores.lock().unwrap().last().unwrap().clone();
    (p, faults, store)
}

async fn set_f2(p: &mut Playground, expression: &str) -> medallion_engine::PipelineView {
    let mut rules = p.definition().silver[0].rules.rules.clone();
    rules.iter_mut().find(|r| r.id == "F2").unwrap().expression = expression.into();
    let r = p
        .handle(Request::SetRules {
            silver_table: "nyc_taxi_yellow".into(),
            rules,
        })
        .await;
    let Response::Snapshot(v) = r else {
        panic!("{r:?}")
    };
    v
}

#[tokio::test]
async fn every_table_lists_the_versions_its_log_has_and_time_travel_reads_the_logged_files() {
    use medallion_engine::lake::Lake;
    use medallion_engine::versions::History;
    let (mut p, _, store) = failing_playground().await;
    let v = set_f2(&mut p, "total_amount > 50").await;
    assert_eq!(v.table("silver.nyc_taxi_yellow").unwrap().row_count, 247);
    // Bronze, silver, the quarantine and gold each have a log; a History that
    // reads only the store lists exactly what the page shows.
    let lake = Lake::from_store(store.clone());
    for layer in ["bronze.", "silver.nyc", "silver.quarantine", "gold."] {
        assert!(
            v.history.keys().any(|t| t.as_str().starts_with(layer)),
            "{layer} has versions"
        );
    }
    for (table, versions) in &v.history {
        let mut read = History::default();
        read.refresh(&lake, table).await.unwrap();
        assert_eq!(read.versions(table), versions.as_slice(), "{table}");
    }
    let silver = &v.history["silver.nyc_taxi_yellow"];
    assert_eq!(
        silver
            .iter()
            .map(|v| (v.version, v.operation.as_str(), v.rows))
            .collect::<Vec<_>>(),
        [(0, "WRITE", 260), (1, "WRITE", 247)]
    );
    assert_eq!((silver[1].rows_added, silver[1].rows_removed), (0, 13));
    let log = TableLog::new(store, "silver/nyc_taxi_yellow");
    let now = log.snapshot(None).await.unwrap().unwrap();
    assert_eq!(
        now.files
            .iter()
            .map(|f| f.path.as_str())
            .collect::<Vec<_>>(),
        ["part-000001.parquet"]
    );
    // Version 0 is read back from its own file.
    let r = p
        .handle(Request::GetTable {
            table: "silver.nyc_taxi_yellow".parse().unwrap(),
            offset: 0,
            limit: 5,
            version: Some(0),
            corrupt_only: false,
        })
        .await;
    let Response::Table(t) = r else {
        panic!("{r:?}")
    };
    assert_eq!((t.row_count, t.version), (260, Some(0)));
}

#[tokio::test]
async fn a_run_whose_silver_commit_fails_keeps_showing_the_previous_version() {
    let (mut p, fail, _) = failing_playground().await;
    let before = set_f2(&mut p, "total_amount > 1000").await;
    fail_logs(&fail, true);
    let v = set_f2(&mut p, "total_amount > 50").await;
    assert!(!v.run.ok);
    assert!(
        v.run.errors.iter().any(|e| e == "storage: silver/nyc_taxi_yellow: the lake's store failed: Generic test error: no space left on device"),
        "{:?}",
        v.run.errors
    );
    // Silver is shown as its log has it: 260 rows, the same versions.
    assert_eq!(v.table("silver.nyc_taxi_yellow").unwrap().row_count, 260);
    assert_eq!(
        v.history["silver.nyc_taxi_yellow"],
        before.history["silver.nyc_taxi_yellow"]
    );
    // The store works again: the next run commits the edit as the next version.
    fail_logs(&fail, false);
    let v = set_f2(&mut p, "total_amount > 50").await;
    assert!(v.run.ok, "{:?}", v.run);
    assert_eq!(v.table("silver.nyc_taxi_yellow").unwrap().row_count, 247);
    assert_eq!(
        v.history["silver.nyc_taxi_yellow"].len(),
        before.history["silver.nyc_taxi_yellow"].len() + 1
    );
}

#[tokio::test]
async fn an_erasure_whose_log_entry_fails_erases_nothing_and_leaves_no_file_behind() {
    let (mut p, fail, store) = failing_playground().await;
    let Response::Snapshot(before) = p.handle(ingest("first.csv")).await else {
        panic!()
    };
    let files = || async {
        use futures::TryStreamExt;
        use object_store::ObjectStore;
        let mut paths: Vec<String> = store
            .inner
            .list(Some(&"bronze/nyc_taxi_yellow".into()))
            .map_ok(|m| m.location.to_string())
            .try_collect()
            .await
            .unwrap();
        paths.sort();
        paths
    };
    let files_before = files().await;
    let forget = || Request::Forget {
        table: "nyc_taxi_yellow".into(),
        predicate: "_source_file = 'first.csv' AND raw_payload LIKE '2,%'".into(),
        reason: "erasure request 18".into(),
        expected_rows: Some(1),
        plan_state: None,
    };
    fail_logs(&fail, true);
    let r = p.handle(forget()).await;
    let Response::Error { message } = r else {
        panic!("{r:?}")
    };
    assert_eq!(
        message,
        "storage: bronze/nyc_taxi_yellow: the lake's store failed: Generic test error: no space left on device"
    );
    let Response::Snapshot(after) = p.handle(Request::Snapshot).await else {
        panic!()
    };
    assert_eq!(
        after.table("bronze.nyc_taxi_yellow").unwrap().row_count,
        268
    );
    assert_eq!(after.batches, before.batches);
    assert!(after.erasures.is_empty());
    assert_eq!(
        files().await,
        files_before,
        "no new file left, no old file deleted"
    );
    let old = before
        .batches
        .iter()
        .find(|b| b.file_name == "first.csv")
        .unwrap();
    let lake = medallion_engine::lake::Lake::from_store(store.clone());
    let kept =
        medallion_engine::lake::decode_parquet_table(lake.get_bytes(&old.path).await.unwrap())
            .unwrap();
    assert_eq!(
        kept.num_rows(),
        2,
        "the batch's file still holds both records"
    );
    // With the store back, the same erasure goes through: the rewritten
    // batch is a new file and the old one (with the erased row) is gone.
    fail_logs(&fail, false);
    let r = p.handle(forget()).await;
    let Response::Snapshot(done) = r else {
        panic!("{r:?}")
    };
    assert_eq!(done.table("bronze.nyc_taxi_yellow").unwrap().row_count, 267);
    let now = files().await;
    let rewritten = done
        .batches
        .iter()
        .find(|b| b.file_name == "first.csv")
        .unwrap();
    assert!(
        rewritten.path.ends_with(".v3.parquet"),
        "{}",
        rewritten.path
    );
    assert!(now.contains(&rewritten.path));
    assert!(!now.contains(&old.path), "{now:?}");
}
