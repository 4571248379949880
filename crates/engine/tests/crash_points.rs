//! Nothing is written half: every path that writes to the lake (a Kafka
//! poll, a re-read, a restore and the gold refresh it triggers, a run's
//! silver / quarantine / gold commits, a replay, loading an example or a
//! pipeline, a typed or empty ingest, an incremental run, an erasure's
//! refresh) is crashed between its data files and its log entry (or at its
//! data files, or at its Nth write). After the crash the page shows exactly
//! the previous state, the commit logs agree with the page, the error says
//! what failed, and once the store works again the same request commits
//! exactly one new version.

use medallion_engine::TableName;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use failing_store::{FailingLogStore, Faults, Target};
use medallion_engine::api::{Lang, Request, Response, RunMode};
use medallion_engine::kafka::KafkaMessage;
use medallion_engine::lake::log::TableLog;
use medallion_engine::lake::Lake;
use medallion_engine::versions::History;
use medallion_engine::{PipelineView, Playground};

#[path = "support/failing_store.rs"]
mod failing_store;

/// The message a failed log entry of table folder `dir` gives.
fn log_failed(dir: &str) -> String {
    format!("storage: {dir}: the lake's store failed: Generic test error: no space left on device")
}

/// The run error when `silver` could not be saved, so that the tables
/// computed from it (`held`: the quarantine, gold) were not written either.
fn held_back(silver: &str, held: &[&str]) -> String {
    format!(
        "not refreshed: {}, because {silver} could not be saved and this run computed them from it; they stay at their versions until a run succeeds",
        held.join(", ")
    )
}

/// The taxi example (`v`), then a rule edit (its answer: `after`) whose one
/// log entry under `prefix` fails; the store works again afterwards.
async fn f2_edit_failing_at(prefix: &str) -> (Rig, PipelineView, PipelineView) {
    let mut rig = Rig::new("nyc_taxi_silver").await;
    let v = rig.view().await;
    rig.fail(Target::Logs, Some(prefix), 0);
    let r = set_f2(&rig.p, "total_amount > 50");
    let after = rig.ok(r).await;
    let failed = rig.heal();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(failed[0].starts_with(prefix), "{failed:?}");
    (rig, v, after)
}

/// Once the store works: the next run succeeds and the page agrees with the logs.
async fn run_ok(rig: &mut Rig) -> PipelineView {
    let done = rig
        .ok(Request::Run {
            full_refresh: false,
        })
        .await;
    assert!(done.run.ok, "{:?}", done.run);
    assert_view_matches_log(rig, &done).await;
    done
}

/// `table` has the versions and shows the rows it had in `before`.
fn assert_kept(after: &PipelineView, before: &PipelineView, table: &str) {
    assert_eq!(after.history[table], before.history[table], "{table}");
    assert_eq!(
        after.table(table).unwrap().rows,
        before.table(table).unwrap().rows,
        "{table}"
    );
}

/// The run errors when the taxi example's silver entry fails: that, and the
/// quarantine and gold held back.
fn taxi_silver_failed() -> [String; 2] {
    [
        log_failed("silver/nyc_taxi_yellow"),
        held_back(
            "silver.nyc_taxi_yellow",
            &["silver.quarantine", "gold.trips_by_borough_daily"],
        ),
    ]
}

/// The refusal when the data file at `path` could not be written.
fn data_failed(path: &str) -> String {
    format!("storage: {path}: Generic test error: no space left on device")
}

/// A playground over [`FailingLogStore`]s, its fault switch and the stores
/// it made (one per example or pipeline loaded).
struct Rig {
    p: Playground,
    faults: Arc<Mutex<Faults>>,
    stores: Arc<Mutex<Vec<Arc<FailingLogStore>>>>,
}

impl Rig {
    async fn new(example: &str) -> Self {
        let mut rig = Self::empty();
        rig.p.load_example(example, Lang::En).await.unwrap();
        rig
    }

    fn empty() -> Self {
        let (p, faults, stores) = failing_store::playground();
        Self { p, faults, stores }
    }

    /// The store of the session's lake (a load that failed made a newer one
    /// the session does not use).
    fn store(&self) -> Arc<FailingLogStore> {
        let current = Arc::as_ptr(&self.p.lake_store()) as *const ();
        self.stores
            .lock()
            .unwrap()
            .iter()
            .find(|s| Arc::as_ptr(s) as *const () == current)
            .expect("the session's store")
            .clone()
    }

    /// How many stores (lakes) were made so far.
    fn lakes(&self) -> usize {
        self.stores.lock().unwrap().len()
    }

    /// From now on, writes of `target` (whose path contains `contains`) fail,
    /// after `skip` of them went through.
    fn fail(&self, target: Target, contains: Option<&str>, skip: usize) {
        *self.faults.lock().unwrap() = Faults {
            on: true,
            target,
            contains: contains.map(str::to_string),
            skip,
            ..Default::default()
        };
    }

    /// Only the Nth + 1 write of `target` fails (a crash at that point).
    fn crash_at(&self, target: Target, n: usize) {
        self.fail(target, None, n);
        self.faults.lock().unwrap().once = true;
    }

    /// Log entries of every table fail.
    fn fail_logs(&self) {
        self.fail(Target::Logs, None, 0)
    }

    /// The store works again; returns the paths whose writes failed.
    fn heal(&self) -> Vec<String> {
        let mut f = self.faults.lock().unwrap();
        f.on = false;
        std::mem::take(&mut f.failed)
    }

    async fn send(&mut self, r: Request) -> Response {
        self.p.handle(r).await
    }

    async fn ok(&mut self, r: Request) -> PipelineView {
        match self.send(r).await {
            Response::Snapshot(v) => v,
            other => panic!("expected a snapshot, got {other:?}"),
        }
    }

    async fn refused(&mut self, r: Request) -> String {
        match self.send(r).await {
            Response::Error { message } => message,
            Response::Snapshot(v) => panic!(
                "expected an error, got a snapshot (run: {:?}, notice: {:?})",
                v.run, v.notice
            ),
            other => panic!("expected an error, got {other:?}"),
        }
    }

    async fn view(&mut self) -> PipelineView {
        self.ok(Request::Snapshot).await
    }

    /// Every row of `table` (current, or at `version`).
    async fn rows(&mut self, table: &str, version: Option<u64>) -> Vec<Vec<Option<String>>> {
        match self
            .send(Request::GetTable {
                table: table.parse().unwrap(),
                offset: 0,
                limit: 1_000_000,
                version,
                corrupt_only: false,
            })
            .await
        {
            Response::Table(t) => t.rows,
            other => panic!("{table} at {version:?}: {other:?}"),
        }
    }
}

fn rows(v: &PipelineView, table: &str) -> usize {
    v.table(table)
        .unwrap_or_else(|| panic!("the view has no table {table}"))
        .row_count
}

fn versions(v: &PipelineView, table: &str) -> usize {
    v.history.get(table).map_or(0, Vec::len)
}

/// Qualified table name → its folder (`silver.quarantine` → `silver/quarantine`).
fn dir(table: &TableName) -> String {
    table.path()
}

/// The request failed: the page shows exactly what it showed before (the
/// notice of the previous request is cleared by any request that changes
/// state, nothing else moves).
fn assert_unchanged(before: &PipelineView, after: &PipelineView) {
    let changed = changes(before, after);
    assert!(
        changed.is_empty(),
        "the page changed:\n{}",
        changed.join("\n")
    );
}

/// What changed on the page from `before` to `after` (empty: nothing but
/// the notice).
fn changes(before: &PipelineView, after: &PipelineView) -> Vec<String> {
    let mut changed = Vec::new();
    let counts = |v: &PipelineView| {
        v.tables
            .iter()
            .map(|t| (t.name.clone(), t.row_count, t.version))
            .collect::<Vec<_>>()
    };
    let mut differ = |what: &str, a: String, b: String| {
        if a != b {
            changed.push(format!("{what}: {b} -> {a}"));
        }
    };
    differ(
        "tables (name, rows, version)",
        format!("{:?}", counts(after)),
        format!("{:?}", counts(before)),
    );
    let versions = |v: &PipelineView| {
        v.history
            .iter()
            .map(|(t, h)| {
                (
                    t.clone(),
                    h.iter()
                        .map(|v| (v.version, v.operation.clone(), v.rows))
                        .collect::<Vec<_>>(),
                )
            })
            .collect::<Vec<_>>()
    };
    differ(
        "versions",
        format!("{:?}", versions(after)),
        format!("{:?}", versions(before)),
    );
    let batches = |v: &PipelineView| {
        v.batches
            .iter()
            .map(|b| {
                (
                    b.file_name.clone(),
                    b.records,
                    b.version,
                    b.superseded_by.clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    differ(
        "batches",
        format!("{:?}", batches(after)),
        format!("{:?}", batches(before)),
    );
    differ(
        "erasures",
        format!("{:?}", after.erasures),
        format!("{:?}", before.erasures),
    );
    differ(
        "topics",
        format!("{:?}", after.topics),
        format!("{:?}", before.topics),
    );
    differ(
        "checkpoints",
        format!("{:?}", after.checkpoints),
        format!("{:?}", before.checkpoints),
    );
    differ(
        "run",
        format!("{:?}", after.run),
        format!("{:?}", before.run),
    );
    differ("example", after.example.clone(), before.example.clone());
    differ(
        "run mode",
        format!("{:?}", after.run_mode),
        format!("{:?}", before.run_mode),
    );
    for (a, b) in after.tables.iter().zip(&before.tables) {
        if a != b {
            changed.push(format!("{}: the rows shown changed", a.name));
        }
    }
    let mut expected = before.clone();
    expected.notice = None;
    if changed.is_empty() && *after != expected {
        changed.push("the rest of the view changed".into());
    }
    changed
}

/// What the page shows is what the logs hold: the same tables have logs,
/// each lists the same versions (read by a fresh [`History`]), each table's
/// current version and row count are its log's, a silver or gold table's
/// current rows are the rows of its newest logged file, and bronze's batches
/// are the files its log names.
async fn assert_view_matches_log(rig: &mut Rig, v: &PipelineView) {
    let wrong = view_log_mismatches(rig, v).await;
    assert!(
        wrong.is_empty(),
        "the page disagrees with the logs:\n{}",
        wrong.join("\n")
    );
}

/// How the page disagrees with the logs (empty: it does not).
async fn view_log_mismatches(rig: &mut Rig, v: &PipelineView) -> Vec<String> {
    use futures::TryStreamExt;
    use object_store::ObjectStore;
    let mut wrong = Vec::new();
    let store = rig.store();
    let lake = Lake::from_store(store.clone());
    let paths: Vec<String> = store
        .inner
        .list(None)
        .map_ok(|m| m.location.to_string())
        .try_collect()
        .await
        .unwrap();
    let logged: BTreeSet<String> = paths
        .iter()
        .filter_map(|p| p.split_once("/_delta_log/"))
        .map(|(d, _)| d.replacen('/', ".", 1))
        // The session's own log (`meta.session`) is not a table of the
        // page; `meta.bronze_checkpoints` is.
        .filter(|t| t != "meta.session")
        .collect();
    let shown: BTreeSet<String> = v.history.keys().map(|t| t.to_string()).collect();
    if logged != shown {
        wrong.push(format!(
            "tables with a log {logged:?}, with versions on the page {shown:?}"
        ));
    }
    for (table, shown) in &v.history {
        let mut read = History::default();
        read.refresh(&lake, table).await.unwrap();
        if read.versions(table) != shown.as_slice() {
            wrong.push(format!(
                "{table}: the page lists versions {:?}, the log {:?}",
                shown
                    .iter()
                    .map(|v| (v.version, &v.operation, v.rows))
                    .collect::<Vec<_>>(),
                read.versions(table)
                    .iter()
                    .map(|v| (v.version, &v.operation, v.rows))
                    .collect::<Vec<_>>()
            ));
        }
        let Some(snap) = TableLog::new(store.clone(), dir(table))
            .snapshot(None)
            .await
            .unwrap()
        else {
            wrong.push(format!("{table}: versions on the page, no log"));
            continue;
        };
        if Some(snap.version) != shown.last().map(|s| s.version) {
            wrong.push(format!(
                "{table}: newest version {:?} on the page, {} in the log",
                shown.last().map(|s| s.version),
                snap.version
            ));
        }
        let Some(t) = v.table(table) else {
            continue;
        };
        if t.version != Some(snap.version) {
            wrong.push(format!(
                "{table}: shown at version {:?}, the log is at {}",
                t.version, snap.version
            ));
        }
        if t.row_count as u64 != snap.num_records() {
            wrong.push(format!(
                "{table}: the page shows {} rows, its log {}",
                t.row_count,
                snap.num_records()
            ));
        }
        if table.is_bronze() {
            let name = table.name();
            let mut from_batches: Vec<String> = v
                .batches
                .iter()
                .filter(|b| b.table == name)
                .map(|b| b.path.clone())
                .collect();
            let mut from_log: Vec<String> = snap
                .files
                .iter()
                .map(|f| format!("{}/{}", dir(table), f.path))
                .collect();
            from_batches.sort();
            from_log.sort();
            if from_batches != from_log {
                wrong.push(format!(
                    "{table}: batch files {from_batches:?}, logged files {from_log:?}"
                ));
            }
            // SQL reads every Parquet file of the folder: only logged ones
            // may be there (and `part-000000.parquet`, the empty file that
            // lets SQL see a table before its first batch).
            let mut in_folder: Vec<String> = paths
                .iter()
                .filter(|p| {
                    p.strip_prefix(&format!("{}/", dir(table)))
                        .is_some_and(|f| {
                            !f.contains('/')
                                && f.ends_with(".parquet")
                                && f != "part-000000.parquet"
                        })
                })
                .cloned()
                .collect();
            in_folder.sort();
            if in_folder != from_log {
                wrong.push(format!(
                    "{table}: Parquet files in its folder {in_folder:?}, logged files {from_log:?}"
                ));
            }
        } else {
            let now = rig.rows(table.as_str(), None).await;
            let logged = rig.rows(table.as_str(), Some(snap.version)).await;
            if now != logged {
                wrong.push(format!(
                    "{table}: the current rows are not those of version {}",
                    snap.version
                ));
            }
        }
    }
    for t in &v.tables {
        if !v.history.contains_key(&t.name) {
            wrong.push(format!(
                "{} is shown ({} rows) but has no version",
                t.name, t.row_count
            ));
        }
    }
    wrong
}

// ---------------------------------------------------------------- requests

const TRIPS: &str = "VendorID,tpep_pickup_datetime,tpep_dropoff_datetime,passenger_count,trip_distance,RatecodeID,store_and_fwd_flag,PULocationID,DOLocationID,payment_type,fare_amount,extra,mta_tax,tip_amount,tolls_amount,improvement_surcharge,total_amount,congestion_surcharge\n\
1,2020-07-01 00:25:32,2020-07-01 00:33:39,1,1.50,1,N,238,75,2,8,0.5,0.5,0,0,0.3,9.3,0\n\
2,2020-07-01 00:05:00,2020-07-01 00:15:00,1,2.00,1,N,161,236,1,10,0.5,0.5,2,0,0.3,15.8,2.5\n";

fn ingest(table: &str, name: &str, bytes: &[u8]) -> Request {
    Request::Ingest {
        table: table.into(),
        file_name: name.into(),
        bytes: bytes.to_vec(),
        options: Default::default(),
    }
}

fn trips(name: &str) -> Request {
    ingest("nyc_taxi_yellow", name, TRIPS.as_bytes())
}

fn set_f2(p: &Playground, expression: &str) -> Request {
    let mut rules = p.definition().silver[0].rules.rules.clone();
    rules.iter_mut().find(|r| r.id == "F2").unwrap().expression = expression.into();
    Request::SetRules {
        silver_table: "nyc_taxi_yellow".into(),
        rules,
    }
}

fn order(id: u32, amount: &str) -> KafkaMessage {
    KafkaMessage {
        key: Some(id.to_string()),
        value: Some(format!(
            r#"{{"order_id": {id}, "user_id": 15, "amount": "{amount}", "status": "PAID", "created_at": "2024-01-16T09:00:00"}}"#
        )),
        producer_ts_micros: None,
        erased: false,
    }
}

fn poll() -> Request {
    Request::KafkaPoll {
        table: "orders".into(),
        max: None,
        crash_before_commit: false,
    }
}

// ---------------------------------------------------------------- Kafka

#[tokio::test]
async fn a_kafka_poll_whose_log_entry_fails_commits_no_offset_and_delivers_the_same_messages_again()
{
    let mut rig = Rig::new("kafka_orders").await;
    let v = rig
        .ok(Request::KafkaProduce {
            table: "orders".into(),
            messages: vec![order(2001, "10.00"), order(2002, "20.00")],
        })
        .await;
    let topic = &v.topics[0];
    assert_eq!(
        (
            topic.topic.as_str(),
            topic.end_offset,
            topic.committed_offset,
            topic.lag
        ),
        ("orders_raw", 6, 4, 2)
    );
    assert_eq!(rows(&v, "bronze.orders"), 4);
    assert_view_matches_log(&mut rig, &v).await;
    let bronze_log = TableLog::new(rig.store(), "bronze/orders");
    let logged = bronze_log.snapshot(None).await.unwrap().unwrap();

    rig.fail_logs();
    let message = rig.refused(poll()).await;
    assert_eq!(message, log_failed("bronze/orders"));
    assert_eq!(
        rig.heal(),
        ["bronze/orders/_delta_log/00000000000000000002.json"]
    );
    let after = rig.view().await;
    assert_unchanged(&v, &after);
    assert_eq!(
        (after.topics[0].committed_offset, after.topics[0].lag),
        (4, 2)
    );
    assert_eq!(bronze_log.snapshot(None).await.unwrap().unwrap(), logged);
    assert_view_matches_log(&mut rig, &after).await;

    // The same poll again: the same two offsets, one new bronze version.
    let done = rig.ok(poll()).await;
    assert_eq!(
        (done.topics[0].committed_offset, done.topics[0].lag),
        (6, 0)
    );
    assert_eq!(rows(&done, "bronze.orders"), 6);
    assert_eq!(
        versions(&done, "bronze.orders"),
        versions(&v, "bronze.orders") + 1
    );
    assert_eq!(done.batches.len(), v.batches.len() + 1);
    assert_eq!(done.batches.last().unwrap().file_name, "orders_raw:0:4-5");
    assert_eq!(rows(&done, "silver.orders"), rows(&v, "silver.orders") + 2);
    assert_view_matches_log(&mut rig, &done).await;
}

#[tokio::test]
async fn a_kafka_poll_whose_data_file_fails_commits_no_offset_and_writes_no_entry() {
    let mut rig = Rig::new("kafka_orders").await;
    let v = rig
        .ok(Request::KafkaProduce {
            table: "orders".into(),
            messages: vec![order(2001, "10.00")],
        })
        .await;
    rig.fail(Target::Data, Some("bronze/"), 0);
    let message = rig.refused(poll()).await;
    assert_eq!(message, data_failed("bronze/orders/part-000002.parquet"));
    assert_eq!(rig.heal(), ["bronze/orders/part-000002.parquet"]);
    let after = rig.view().await;
    assert_unchanged(&v, &after);
    assert_view_matches_log(&mut rig, &after).await;
    let done = rig.ok(poll()).await;
    assert_eq!(
        (done.topics[0].committed_offset, done.topics[0].lag),
        (5, 0)
    );
    assert_eq!(
        versions(&done, "bronze.orders"),
        versions(&v, "bronze.orders") + 1
    );
    assert_view_matches_log(&mut rig, &done).await;
}

#[tokio::test]

async fn a_failed_data_file_write_names_the_table_it_was_for() {
    let mut rig = Rig::new("kafka_orders").await;
    rig.ok(Request::KafkaProduce {
        table: "orders".into(),
        messages: vec![order(2001, "10.00")],
    })
    .await;
    rig.fail(Target::Data, Some("bronze/"), 0);
    let message = rig.refused(poll()).await;
    assert!(
        message.contains("bronze/orders") || message.contains("bronze.orders"),
        "{message}"
    );
}

// ---------------------------------------------------------------- reingest

#[tokio::test]
async fn a_reread_whose_log_entry_fails_supersedes_nothing_and_remembers_no_option() {
    let mut rig = Rig::new("nyc_taxi_silver").await;
    let v = rig.ok(trips("first.csv")).await;
    let first = v
        .batches
        .iter()
        .find(|b| b.file_name == "first.csv")
        .unwrap()
        .clone();
    let reread = || Request::Reingest {
        batch_id: first.batch_id.clone(),
        options: medallion_engine::bronze::IngestOptions {
            delimiter: Some(','),
            ..Default::default()
        },
        remember: true,
    };
    let remembered = |p: &Playground| p.definition().bronze[0].ingest_options.clone();
    assert_eq!(remembered(&rig.p), Default::default());

    rig.fail_logs();
    let message = rig.refused(reread()).await;
    assert_eq!(message, log_failed("bronze/nyc_taxi_yellow"));
    assert_eq!(rig.heal().len(), 1);
    let after = rig.view().await;
    assert_unchanged(&v, &after);
    assert!(after.batches.iter().all(|b| b.superseded_by.is_none()));
    assert_eq!(
        remembered(&rig.p),
        Default::default(),
        "the failed re-read remembers nothing"
    );
    assert_view_matches_log(&mut rig, &after).await;

    let done = rig.ok(reread()).await;
    assert_eq!(done.batches.len(), v.batches.len() + 1);
    let new = done.batches.last().unwrap();
    let old = done
        .batches
        .iter()
        .find(|b| b.batch_id == first.batch_id)
        .unwrap();
    assert_eq!(old.superseded_by.as_deref(), Some(new.batch_id.as_str()));
    assert_eq!(
        rows(&done, "bronze.nyc_taxi_yellow"),
        rows(&v, "bronze.nyc_taxi_yellow") + 2
    );
    assert_eq!(
        versions(&done, "bronze.nyc_taxi_yellow"),
        versions(&v, "bronze.nyc_taxi_yellow") + 1
    );
    assert_eq!(
        rows(&done, "silver.nyc_taxi_yellow"),
        rows(&v, "silver.nyc_taxi_yellow")
    );
    assert_eq!(remembered(&rig.p).delimiter, Some(','));
    assert_view_matches_log(&mut rig, &done).await;
}

// ---------------------------------------------------------------- restore

/// nyc_taxi_silver with two silver versions: 260 rows, then 247.
async fn two_silver_versions() -> (Rig, PipelineView) {
    let mut rig = Rig::new("nyc_taxi_silver").await;
    let r = set_f2(&rig.p, "total_amount > 50");
    let v = rig.ok(r).await;
    assert_eq!(rows(&v, "silver.nyc_taxi_yellow"), 247);
    assert_eq!(versions(&v, "silver.nyc_taxi_yellow"), 2);
    (rig, v)
}

fn restore(table: &str, version: u64) -> Request {
    Request::Restore {
        table: table.parse().unwrap(),
        version,
    }
}

#[tokio::test]

async fn a_restore_whose_silver_entry_fails_keeps_the_current_version() {
    let (mut rig, v) = two_silver_versions().await;
    rig.fail(Target::Logs, Some("silver/nyc_taxi_yellow/"), 0);
    let message = rig.refused(restore("silver.nyc_taxi_yellow", 0)).await;
    assert_eq!(message, log_failed("silver/nyc_taxi_yellow"));
    assert_eq!(rig.heal().len(), 1);
    let after = rig.view().await;
    assert_eq!(rows(&after, "silver.nyc_taxi_yellow"), 247);
    assert_unchanged(&v, &after);
    assert_view_matches_log(&mut rig, &after).await;
}

#[tokio::test]
async fn a_restore_commits_one_restore_version_and_the_gold_refresh() {
    // The success half of the test above (without the crash, which corrupts the state).
    let (mut rig, v) = two_silver_versions().await;
    let done = rig.ok(restore("silver.nyc_taxi_yellow", 0)).await;
    assert_eq!(rows(&done, "silver.nyc_taxi_yellow"), 260);
    let silver = &done.history["silver.nyc_taxi_yellow"];
    assert_eq!(silver.len(), 3);
    assert_eq!(
        (silver[2].operation.as_str(), silver[2].rows),
        ("RESTORE", 260)
    );
    let gold = &done.history["gold.trips_by_borough_daily"];
    assert_eq!(gold.len(), versions(&v, "gold.trips_by_borough_daily") + 1);
    assert_eq!(
        gold.last().unwrap().detail,
        "refresh after the restore of silver.nyc_taxi_yellow"
    );
    assert_view_matches_log(&mut rig, &done).await;
}

#[tokio::test]

async fn a_restore_whose_gold_refresh_fails_is_all_or_nothing() {
    let (mut rig, v) = two_silver_versions().await;
    rig.fail(Target::Logs, Some("gold/"), 0);
    let r = rig.send(restore("silver.nyc_taxi_yellow", 0)).await;
    assert_eq!(rig.heal().len(), 1);
    let after = rig.view().await;
    assert_view_matches_log(&mut rig, &after).await;
    match r {
        // Refused: nothing changed, silver included.
        Response::Error { message } => {
            assert_eq!(message, log_failed("gold/trips_by_borough_daily"));
            assert_unchanged(&v, &after);
        }
        // Or done, with the failed gold refresh reported.
        Response::Snapshot(s) => {
            assert_eq!(rows(&s, "silver.nyc_taxi_yellow"), 260);
            assert!(
                s.run
                    .errors
                    .contains(&log_failed("gold/trips_by_borough_daily")),
                "{:?}",
                s.run
            );
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_restore_whose_gold_refresh_fails_still_shows_what_the_logs_hold() {
    // What the page shows after the crash above agrees with the logs
    // (silver restored and committed, gold at its previous version).
    let (mut rig, v) = two_silver_versions().await;
    rig.fail(Target::Logs, Some("gold/"), 0);
    // The restore is done (silver committed); the gold refresh that failed
    // is the run's error, gold stays at its version.
    let answered = rig.ok(restore("silver.nyc_taxi_yellow", 0)).await;
    assert!(!answered.run.ok);
    assert_eq!(
        answered.run.errors,
        [log_failed("gold/trips_by_borough_daily")]
    );
    assert_eq!(
        rig.heal(),
        ["gold/trips_by_borough_daily/_delta_log/00000000000000000002.json"]
    );
    let after = rig.view().await;
    assert_eq!(rows(&after, "silver.nyc_taxi_yellow"), 260);
    assert_eq!(versions(&after, "silver.nyc_taxi_yellow"), 3);
    assert_eq!(
        after.history["gold.trips_by_borough_daily"],
        v.history["gold.trips_by_borough_daily"]
    );
    assert_eq!(
        rows(&after, "gold.trips_by_borough_daily"),
        rows(&v, "gold.trips_by_borough_daily")
    );
    assert_view_matches_log(&mut rig, &after).await;
    // The same restore again: silver already holds version 0's rows (no
    // new silver version); the gold refresh commits one new gold version.
    let done = rig.ok(restore("silver.nyc_taxi_yellow", 0)).await;
    assert_eq!(versions(&done, "silver.nyc_taxi_yellow"), 3);
    let gold = &done.history["gold.trips_by_borough_daily"];
    assert_eq!(gold.len(), versions(&v, "gold.trips_by_borough_daily") + 1);
    assert_eq!(
        gold.last().unwrap().detail,
        "refresh after the restore of silver.nyc_taxi_yellow"
    );
    assert_view_matches_log(&mut rig, &done).await;
}

#[tokio::test]

async fn a_restore_whose_gold_version_file_fails_says_so() {
    // Gold is queried from the run's rows in memory; what can fail after
    // the restore is the data file of gold's new version.
    let (mut rig, v) = two_silver_versions().await;
    rig.fail(Target::Data, Some("gold/trips_by_borough_daily/"), 0);
    let r = rig.send(restore("silver.nyc_taxi_yellow", 0)).await;
    assert_eq!(
        rig.heal(),
        ["gold/trips_by_borough_daily/part-000002.parquet"]
    );
    let after = rig.view().await;
    assert_view_matches_log(&mut rig, &after).await;
    // Gold was not refreshed after the restore ...
    assert_eq!(
        version_list(&after, "gold.trips_by_borough_daily"),
        version_list(&v, "gold.trips_by_borough_daily")
    );
    // ... and the answer says why.
    match r {
        Response::Snapshot(s) => assert_eq!(
            s.run.errors,
            [data_failed(
                "gold/trips_by_borough_daily/part-000002.parquet"
            )]
        ),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]

async fn a_restore_of_a_gold_version_whose_entry_fails_keeps_the_current_version() {
    let (mut rig, v) = two_silver_versions().await;
    assert_eq!(versions(&v, "gold.trips_by_borough_daily"), 2);
    rig.fail_logs();
    let message = rig.refused(restore("gold.trips_by_borough_daily", 0)).await;
    assert_eq!(message, log_failed("gold/trips_by_borough_daily"));
    rig.heal();
    let after = rig.view().await;
    assert_unchanged(&v, &after);
    assert_view_matches_log(&mut rig, &after).await;
}

// ---------------------------------------------------------------- previews

/// `rig` with a preview listener for the next run; what it heard.
fn listen_preview(rig: &mut Rig) -> std::rc::Rc<std::cell::RefCell<Option<PipelineView>>> {
    let heard: std::rc::Rc<std::cell::RefCell<Option<PipelineView>>> = Default::default();
    let h = heard.clone();
    rig.p
        .set_preview(Some(Box::new(move |v| *h.borrow_mut() = Some(v))));
    heard
}

#[tokio::test]
async fn a_preview_shows_the_run_before_its_versions_and_the_answer_commits_them() {
    let mut rig = Rig::new("nyc_taxi_silver").await;
    let before = rig.view().await;
    let heard = listen_preview(&mut rig);
    let r = set_f2(&rig.p, "total_amount > 50");
    let after = rig.ok(r).await;
    let preview = heard.borrow_mut().take().expect("the run was previewed");
    // The run's rows, checks and rule figures, before any version holds them.
    assert_eq!(rows(&preview, "silver.nyc_taxi_yellow"), 247);
    assert_eq!(
        preview.table("silver.nyc_taxi_yellow").unwrap().version,
        None
    );
    assert_eq!(preview.history, before.history);
    assert_eq!(
        preview.saving,
        [
            "silver.nyc_taxi_yellow",
            "silver.quarantine",
            "gold.trips_by_borough_daily"
        ]
        .map(|t| t.parse::<TableName>().unwrap())
    );
    assert_eq!(preview.checks, after.checks);
    assert_eq!(preview.silver, after.silver);
    for t in [
        "silver.nyc_taxi_yellow",
        "silver.quarantine",
        "gold.trips_by_borough_daily",
    ] {
        assert_eq!(
            preview.table(t).unwrap().rows,
            after.table(t).unwrap().rows,
            "{t}"
        );
    }
    // The answer: committed, nothing left saving.
    assert!(after.saving.is_empty());
    assert_eq!(versions(&after, "silver.nyc_taxi_yellow"), 2);
    assert_eq!(
        after.table("silver.nyc_taxi_yellow").unwrap().version,
        Some(1)
    );
    assert_view_matches_log(&mut rig, &after).await;
    // The listener is taken by the run it heard: the next run is not previewed.
    let r = set_f2(&rig.p, "total_amount > 40");
    rig.ok(r).await;
    assert!(heard.borrow().is_none());
}

/// Loading scenario `example` in English, stored as it declares.
fn load(example: &str) -> Request {
    Request::LoadExample {
        example: example.into(),
        lang: Lang::En,
        bronze_mode: None,
    }
}

#[tokio::test]
async fn a_scenario_load_previews_its_run_and_the_answer_commits_it() {
    let mut rig = Rig::new("nyc_taxi_silver").await;
    let heard = listen_preview(&mut rig);
    let after = rig.ok(load("kafka_orders")).await;
    let preview = heard.borrow_mut().take().expect("the load's run was previewed");
    // The new scenario, its bronze committed, its run's tables not yet.
    assert_eq!(preview.example, "kafka_orders");
    assert_eq!(preview.silver, after.silver);
    let bronze = preview.table("bronze.orders").unwrap().version;
    assert!(bronze.is_some());
    assert_eq!(bronze, after.table("bronze.orders").unwrap().version);
    let names: Vec<String> = preview.saving.iter().map(ToString::to_string).collect();
    assert_eq!(
        names,
        [
            "silver.users",
            "silver.orders",
            "silver.quarantine",
            "gold.revenue_daily",
            "gold.user_kpi"
        ]
    );
    assert_eq!(preview.checks, after.checks);
    for t in &preview.saving {
        let (p, a) = (preview.table(t).unwrap(), after.table(t).unwrap());
        assert_eq!((p.version, p.rows.clone()), (None, a.rows.clone()), "{t}");
        assert!(a.version.is_some(), "{t}");
    }
    assert_eq!(rows(&preview, "silver.orders"), rows(&after, "silver.orders"));
    assert!(after.saving.is_empty());
    assert_view_matches_log(&mut rig, &after).await;
    // A load that fails runs nothing: not previewed, and the session stays.
    let heard = listen_preview(&mut rig);
    let message = rig.refused(load("no_such_scenario")).await;
    assert!(message.starts_with("unknown example no_such_scenario"), "{message}");
    assert!(heard.borrow().is_none());
    assert_eq!(rig.view().await.example, "kafka_orders");
}

#[tokio::test]
async fn a_previewed_gold_whose_commit_fails_is_back_at_its_version_in_the_answer() {
    let mut rig = Rig::new("nyc_taxi_silver").await;
    let before = rig.view().await;
    let heard = listen_preview(&mut rig);
    rig.fail(Target::Logs, Some("gold/"), 0);
    let r = set_f2(&rig.p, "total_amount > 50");
    let after = rig.ok(r).await;
    rig.heal();
    let preview = heard.borrow_mut().take().expect("the run was previewed");
    // The preview showed gold as computed, being written ...
    assert!(preview
        .saving
        .contains(&"gold.trips_by_borough_daily".parse().unwrap()));
    assert!(preview.run.errors.is_empty());
    // ... the answer shows the version gold is at, and why.
    assert_kept(&after, &before, "gold.trips_by_borough_daily");
    assert_eq!(
        after.run.errors,
        [log_failed("gold/trips_by_borough_daily")]
    );
    assert!(after.saving.is_empty());
    assert_view_matches_log(&mut rig, &after).await;
}

#[tokio::test]
async fn a_request_that_runs_nothing_leaves_the_preview_to_the_next_run() {
    let mut rig = Rig::new("nyc_taxi_silver").await;
    let heard = listen_preview(&mut rig);
    let page = rig
        .send(Request::GetTable {
            table: "silver.nyc_taxi_yellow".parse().unwrap(),
            offset: 0,
            limit: 5,
            version: None,
            corrupt_only: false,
        })
        .await;
    assert!(matches!(page, Response::Table(_)), "{page:?}");
    assert!(heard.borrow().is_none());
    let done = run_ok(&mut rig).await;
    let preview = heard.borrow_mut().take().expect("the run was previewed");
    assert_eq!(
        rows(&preview, "silver.nyc_taxi_yellow"),
        rows(&done, "silver.nyc_taxi_yellow")
    );
    // Nothing changed: every table's rows are its current version's.
    assert!(preview.saving.is_empty(), "{:?}", preview.saving);
    assert_eq!(
        preview.table("silver.nyc_taxi_yellow").unwrap().version,
        Some(0)
    );
}

// ---------------------------------------------------------------- runs

#[tokio::test]
async fn a_run_whose_gold_entry_fails_commits_silver_and_keeps_gold_at_its_version() {
    let (mut rig, v, after) = f2_edit_failing_at("gold/").await;
    assert!(!after.run.ok);
    assert_eq!(
        after.run.errors,
        [log_failed("gold/trips_by_borough_daily")]
    );
    assert_eq!(rows(&after, "silver.nyc_taxi_yellow"), 247);
    assert_eq!(versions(&after, "silver.nyc_taxi_yellow"), 2);
    assert_kept(&after, &v, "gold.trips_by_borough_daily");
    assert_view_matches_log(&mut rig, &after).await;
    // The same run again commits gold once; silver (unchanged) commits nothing.
    let done = run_ok(&mut rig).await;
    assert_eq!(versions(&done, "gold.trips_by_borough_daily"), 2);
    assert_eq!(versions(&done, "silver.nyc_taxi_yellow"), 2);
}

#[tokio::test]
async fn a_run_whose_silver_entry_fails_keeps_gold_at_its_version_too() {
    let (mut rig, v, after) = f2_edit_failing_at("silver/nyc_taxi_yellow/").await;
    assert_eq!(after.run.errors, taxi_silver_failed());
    assert_eq!(
        rows(&after, "silver.nyc_taxi_yellow"),
        rows(&v, "silver.nyc_taxi_yellow")
    );
    assert_eq!(
        after.history["silver.quarantine"],
        v.history["silver.quarantine"]
    );
    assert_kept(&after, &v, "gold.trips_by_borough_daily");
    assert_view_matches_log(&mut rig, &after).await;
    // Once the store works, the next run commits silver, then gold from it.
    let done = run_ok(&mut rig).await;
    assert_eq!(rows(&done, "silver.nyc_taxi_yellow"), 247);
    assert_eq!(versions(&done, "silver.nyc_taxi_yellow"), 2);
    assert_eq!(versions(&done, "gold.trips_by_borough_daily"), 2);
}

#[tokio::test]
async fn a_run_whose_quarantine_entry_fails_keeps_the_quarantine_at_its_version() {
    let (mut rig, v, after) = f2_edit_failing_at("silver/quarantine/").await;
    assert_eq!(after.run.errors, [log_failed("silver/quarantine")]);
    assert_eq!(rows(&after, "silver.nyc_taxi_yellow"), 247);
    assert_eq!(
        rows(&after, "silver.quarantine"),
        rows(&v, "silver.quarantine")
    );
    assert_eq!(
        after.history["silver.quarantine"],
        v.history["silver.quarantine"]
    );
    assert_view_matches_log(&mut rig, &after).await;
    let done = rig
        .ok(Request::Run {
            full_refresh: false,
        })
        .await;
    assert!(done.run.ok, "{:?}", done.run);
    assert_eq!(
        versions(&done, "silver.quarantine"),
        versions(&v, "silver.quarantine") + 1
    );
    assert_eq!(
        rows(&done, "silver.quarantine"),
        rows(&v, "silver.quarantine") + 13
    );
    assert_view_matches_log(&mut rig, &done).await;
}

#[tokio::test]
async fn a_gold_sql_edit_whose_entry_fails_keeps_the_old_gold_rows() {
    let mut rig = Rig::new("nyc_taxi_silver").await;
    let v = rig.view().await;
    let edit = || {
        Request::SetGoldSql {
        model: "trips_by_borough_daily".into(),
        sql: "SELECT pickup_borough, COUNT(*) AS trips FROM silver.nyc_taxi_yellow GROUP BY pickup_borough ORDER BY pickup_borough".into(),
    }
    };
    rig.fail_logs();
    let after = rig.ok(edit()).await;
    assert_eq!(rig.heal().len(), 1);
    assert_eq!(
        after.run.errors,
        [log_failed("gold/trips_by_borough_daily")]
    );
    assert_eq!(
        after.table("gold.trips_by_borough_daily").unwrap(),
        v.table("gold.trips_by_borough_daily").unwrap()
    );
    assert_eq!(after.history, v.history);
    assert_view_matches_log(&mut rig, &after).await;
    let done = rig.ok(edit()).await;
    assert!(done.run.ok, "{:?}", done.run);
    assert_eq!(versions(&done, "gold.trips_by_borough_daily"), 2);
    assert_eq!(
        done.table("gold.trips_by_borough_daily")
            .unwrap()
            .columns
            .len(),
        2
    );
    assert_view_matches_log(&mut rig, &done).await;
}

// ---------------------------------------------------------------- incremental

async fn incremental_rig() -> (Rig, PipelineView) {
    let mut rig = Rig::new("nyc_taxi_silver").await;
    let v = rig
        .ok(Request::SetRunMode {
            mode: RunMode::Incremental,
        })
        .await;
    assert_eq!(v.run_mode, RunMode::Incremental);
    (rig, v)
}

#[tokio::test]
async fn an_incremental_ingest_whose_bronze_entry_fails_moves_no_watermark() {
    let (mut rig, v) = incremental_rig().await;
    rig.fail(Target::Logs, Some("bronze/"), 0);
    let message = rig.refused(trips("first.csv")).await;
    assert_eq!(message, log_failed("bronze/nyc_taxi_yellow"));
    rig.heal();
    let after = rig.view().await;
    assert_unchanged(&v, &after);
    assert_view_matches_log(&mut rig, &after).await;
    let done = rig.ok(trips("first.csv")).await;
    assert_eq!(done.checkpoints.len(), v.checkpoints.len() + 1);
    let c = done.checkpoints.last().unwrap();
    assert_eq!(
        (c.bronze_table.as_str(), c.batches, c.rows, c.mode),
        ("bronze.nyc_taxi_yellow", 1, 2, RunMode::Incremental)
    );
    assert_eq!(
        rows(&done, "silver.nyc_taxi_yellow"),
        rows(&v, "silver.nyc_taxi_yellow") + 2
    );
    assert_eq!(
        versions(&done, "silver.nyc_taxi_yellow"),
        versions(&v, "silver.nyc_taxi_yellow") + 1
    );
    assert_view_matches_log(&mut rig, &done).await;
}

#[tokio::test]

async fn an_incremental_run_whose_silver_entry_fails_processes_the_batch_next_time() {
    let (mut rig, v) = incremental_rig().await;
    rig.fail(Target::Logs, Some("silver/nyc_taxi_yellow/"), 0);
    let after = rig.ok(trips("first.csv")).await;
    assert_eq!(rig.heal().len(), 1);
    assert_eq!(after.run.errors, taxi_silver_failed());
    assert_eq!(
        rows(&after, "bronze.nyc_taxi_yellow"),
        rows(&v, "bronze.nyc_taxi_yellow") + 2
    );
    assert_eq!(
        rows(&after, "silver.nyc_taxi_yellow"),
        rows(&v, "silver.nyc_taxi_yellow")
    );
    assert_view_matches_log(&mut rig, &after).await;
    // The store works again: the next incremental run must bring the batch
    // silver did not commit (one new silver version, two more rows).
    let done = rig
        .ok(Request::Run {
            full_refresh: false,
        })
        .await;
    assert!(done.run.ok, "{:?}", done.run);
    assert_view_matches_log(&mut rig, &done).await;
    assert_eq!(
        rows(&done, "silver.nyc_taxi_yellow"),
        rows(&v, "silver.nyc_taxi_yellow") + 2,
        "the batch whose silver commit failed never reaches silver"
    );
    assert_eq!(
        versions(&done, "silver.nyc_taxi_yellow"),
        versions(&v, "silver.nyc_taxi_yellow") + 1
    );
    // Silver did not take the batch: the watermark must not pass it.
    assert_eq!(
        after.checkpoints, v.checkpoints,
        "no checkpoint for a batch silver did not commit"
    );
}

#[tokio::test]
async fn a_full_refresh_brings_the_batch_an_incremental_run_failed_to_commit() {
    // The way out of the bug above: a full refresh reads all of bronze.
    let (mut rig, v) = incremental_rig().await;
    rig.fail(Target::Logs, Some("silver/nyc_taxi_yellow/"), 0);
    let after = rig.ok(trips("first.csv")).await;
    assert_eq!(rig.heal().len(), 1);
    assert_eq!(after.run.errors, taxi_silver_failed());
    assert_eq!(
        rows(&after, "silver.nyc_taxi_yellow"),
        rows(&v, "silver.nyc_taxi_yellow")
    );
    assert_view_matches_log(&mut rig, &after).await;
    let done = rig.ok(Request::Run { full_refresh: true }).await;
    assert!(done.run.ok, "{:?}", done.run);
    assert_eq!(
        rows(&done, "silver.nyc_taxi_yellow"),
        rows(&v, "silver.nyc_taxi_yellow") + 2
    );
    assert_eq!(
        versions(&done, "silver.nyc_taxi_yellow"),
        versions(&v, "silver.nyc_taxi_yellow") + 1
    );
    assert_view_matches_log(&mut rig, &done).await;
}

// ---------------------------------------------------------------- typed and empty ingests

#[tokio::test]
async fn a_typed_bronze_ingest_whose_entry_fails_leaves_the_previous_version() {
    let mut rig = Rig::new("ecommerce").await;
    let v = rig.view().await;
    assert!(v.bronze_modes.contains(&(
        TableName::bronze("orders"),
        medallion_engine::model::BronzeMode::Permissive
    )));
    let file = b"order_id,customer_id,product_id,quantity,price,order_date,status\n9001,101,5,2,10.50,2024-02-01,PAID\n9002,101,5,x,10.50,2024-02-01,PAID\n";
    rig.fail_logs();
    let message = rig.refused(ingest("orders", "more.csv", file)).await;
    assert_eq!(message, log_failed("bronze/orders"));
    rig.heal();
    let after = rig.view().await;
    assert_unchanged(&v, &after);
    assert_view_matches_log(&mut rig, &after).await;
    let done = rig.ok(ingest("orders", "more.csv", file)).await;
    let b = done.batches.last().unwrap();
    assert_eq!((b.records, b.corrupt_records), (2, 1));
    assert_eq!(rows(&done, "bronze.orders"), rows(&v, "bronze.orders") + 2);
    assert_eq!(
        done.table("bronze.orders").unwrap().corrupt_rows,
        v.table("bronze.orders").unwrap().corrupt_rows + 1
    );
    assert_eq!(
        versions(&done, "bronze.orders"),
        versions(&v, "bronze.orders") + 1
    );
    assert_view_matches_log(&mut rig, &done).await;
}

#[tokio::test]
async fn an_empty_file_whose_entry_fails_leaves_the_previous_version() {
    let mut rig = Rig::new("nyc_taxi_silver").await;
    let v = rig.view().await;
    rig.fail_logs();
    let message = rig
        .refused(ingest("nyc_taxi_yellow", "empty.csv", b""))
        .await;
    assert_eq!(message, log_failed("bronze/nyc_taxi_yellow"));
    rig.heal();
    let after = rig.view().await;
    assert_unchanged(&v, &after);
    assert_view_matches_log(&mut rig, &after).await;
    let done = rig.ok(ingest("nyc_taxi_yellow", "empty.csv", b"")).await;
    let b = done.batches.last().unwrap();
    assert_eq!((b.file_name.as_str(), b.records), ("empty.csv", 0));
    assert_eq!(
        rows(&done, "bronze.nyc_taxi_yellow"),
        rows(&v, "bronze.nyc_taxi_yellow")
    );
    assert_eq!(
        versions(&done, "bronze.nyc_taxi_yellow"),
        versions(&v, "bronze.nyc_taxi_yellow") + 1
    );
    assert_eq!(
        versions(&done, "silver.nyc_taxi_yellow"),
        versions(&v, "silver.nyc_taxi_yellow")
    );
    assert_view_matches_log(&mut rig, &done).await;
}

#[tokio::test]
async fn an_ingest_whose_landed_file_fails_writes_nothing() {
    let mut rig = Rig::new("nyc_taxi_silver").await;
    let v = rig.view().await;
    rig.fail(Target::Data, Some("landing/"), 0);
    let message = rig.refused(trips("first.csv")).await;
    assert!(
        message.starts_with("storage: landing/nyc_taxi_yellow/")
            && message.ends_with("/first.csv: Generic test error: no space left on device"),
        "{message}"
    );
    assert_eq!(rig.heal().len(), 1);
    let after = rig.view().await;
    assert_unchanged(&v, &after);
    assert_view_matches_log(&mut rig, &after).await;
    let done = rig.ok(trips("first.csv")).await;
    assert_eq!(
        versions(&done, "bronze.nyc_taxi_yellow"),
        versions(&v, "bronze.nyc_taxi_yellow") + 1
    );
    assert_view_matches_log(&mut rig, &done).await;
}

// ---------------------------------------------------------------- replay

#[tokio::test]
async fn a_replay_writes_nothing_to_the_lake_so_a_failing_store_does_not_matter() {
    let mut rig = Rig::new("nyc_taxi_silver").await;
    let v = rig.view().await;
    rig.fail(Target::All, None, 0);
    let after = rig.ok(Request::Replay).await;
    assert_eq!(
        rig.heal(),
        Vec::<String>::new(),
        "a replay writes nothing to the lake"
    );
    let report = after.replay.clone().unwrap();
    assert!(report.identical, "{report:?}");
    assert_eq!(report.error, None);
    let mut without = after.clone();
    without.replay = v.replay.clone();
    assert_unchanged(&v, &without);
    assert_view_matches_log(&mut rig, &after).await;
}

// ---------------------------------------------------------------- loading

/// The session a failed load must leave in place: nyc_taxi_silver with one
/// more file and an edited rule.
async fn a_session() -> (Rig, PipelineView) {
    let mut rig = Rig::new("nyc_taxi_silver").await;
    rig.ok(trips("first.csv")).await;
    let r = set_f2(&rig.p, "total_amount > 50");
    let v = rig.ok(r).await;
    (rig, v)
}

#[tokio::test]

async fn loading_an_example_whose_first_entry_fails_keeps_the_previous_session() {
    let (mut rig, v) = a_session().await;
    rig.fail_logs();
    let message = rig
        .refused(Request::LoadExample {
            example: "kafka_orders".into(),
            lang: Lang::En,
            bronze_mode: None,
        })
        .await;
    assert_eq!(message, log_failed("bronze/orders"));
    rig.heal();
    let after = rig.view().await;
    assert_view_matches_log(&mut rig, &after).await;
    assert_unchanged(&v, &after);
}

/// The number of log entries a clean load of `example` writes, and the
/// page it gives.
async fn clean_load(example: &str) -> (usize, PipelineView) {
    let mut clean = Rig::empty();
    let v = clean
        .ok(Request::LoadExample {
            example: example.into(),
            lang: Lang::En,
            bronze_mode: None,
        })
        .await;
    let n = clean
        .faults
        .lock()
        .unwrap()
        .written
        .iter()
        .filter(|p| p.contains("/_delta_log/") && !p.starts_with("meta/session/"))
        .count();
    (n, v)
}

/// Tables, versions, batches and topics, without times and ids.
fn shape(v: &PipelineView) -> impl PartialEq + std::fmt::Debug {
    (
        v.tables
            .iter()
            .map(|t| (t.name.clone(), t.row_count))
            .collect::<Vec<_>>(),
        v.history
            .iter()
            .map(|(t, h)| {
                (
                    t.clone(),
                    h.iter()
                        .map(|v| (v.version, v.operation.clone(), v.rows))
                        .collect::<Vec<_>>(),
                )
            })
            .collect::<Vec<_>>(),
        v.batches
            .iter()
            .map(|b| (b.file_name.clone(), b.records))
            .collect::<Vec<_>>(),
        v.topics.clone(),
    )
}

#[tokio::test]
async fn loading_an_example_again_after_a_crash_at_any_log_entry_gives_the_clean_load() {
    // Whatever the crash point of a load (CREATE TABLE, the file of a
    // table, the Kafka micro-batch, a run's commit), loading again once the
    // store works gives exactly what a clean load gives.
    let (entries, reference) = clean_load("kafka_orders").await;
    // CREATE TABLE of the bronze tables, their batches, silver, the
    // quarantine, gold and the watermarks (meta.bronze_checkpoints).
    assert_eq!(entries, 10);
    for n in 0..entries {
        let mut rig = Rig::new("nyc_taxi_silver").await;
        rig.crash_at(Target::Logs, n);
        let load = Request::LoadExample {
            example: "kafka_orders".into(),
            lang: Lang::En,
            bronze_mode: None,
        };
        let r = rig.send(load.clone()).await;
        let failed = rig.heal();
        assert_eq!(failed.len(), 1, "crash point {n}: {failed:?}");
        let table = failed[0].split("/_delta_log/").next().unwrap().to_string();
        match &r {
            // A bronze entry fails the load; silver and gold ones fail the run.
            Response::Error { message } => {
                assert!(table.starts_with("bronze/"), "crash point {n}: {table}");
                assert_eq!(*message, log_failed(&table), "crash point {n}");
            }
            Response::Snapshot(s) => {
                assert!(!table.starts_with("bronze/"), "crash point {n}: {table}");
                // A silver table that did not commit holds back what was
                // computed from it: the quarantine and gold.
                let mut expected = vec![log_failed(&table)];
                let name = table.replacen('/', ".", 1);
                if table.starts_with("silver/") && table != "silver/quarantine" {
                    // In the order the run writes them (those of a clean
                    // load: a table never saved is not shown).
                    let held: Vec<String> = reference
                        .tables
                        .iter()
                        .filter(|t| t.name.is_gold() || t.name.is_quarantine())
                        .map(|t| t.name.to_string())
                        .collect();
                    let held: Vec<&str> = held.iter().map(String::as_str).collect();
                    expected.push(held_back(&name, &held));
                }
                // The watermarks stay: the next incremental run says it reads
                // those batches again.
                if table == "meta/bronze_checkpoints" {
                    expected.push("meta.bronze_checkpoints was not saved, so the watermarks did not move: the next incremental run reads these 2 batches again (a MERGE table takes them once, an appending one twice: run a full refresh then)".into());
                }
                assert_eq!(s.run.errors, expected, "crash point {n}");
                assert_view_matches_log(&mut rig, s).await;
            }
            other => panic!("{other:?}"),
        }
        let again = rig.ok(load).await;
        assert_eq!(
            shape(&again),
            shape(&reference),
            "crash point {n}: load again"
        );
        assert_view_matches_log(&mut rig, &again).await;
    }
}

#[tokio::test]

async fn a_load_that_crashes_at_any_log_entry_leaves_the_previous_session_or_a_page_that_agrees_with_its_logs(
) {
    let (entries, _) = clean_load("kafka_orders").await;
    let mut wrong = Vec::new();
    for n in 0..entries {
        let (mut rig, v) = a_session().await;
        rig.crash_at(Target::Logs, n);
        let r = rig
            .send(Request::LoadExample {
                example: "kafka_orders".into(),
                lang: Lang::En,
                bronze_mode: None,
            })
            .await;
        let failed = rig.heal();
        let after = rig.view().await;
        let mismatches = view_log_mismatches(&mut rig, &after).await;
        if !mismatches.is_empty() {
            wrong.push(format!("crash at {failed:?}: {}", mismatches.join("; ")));
        }
        if matches!(r, Response::Error { .. }) && after.example != v.example {
            wrong.push(format!(
                "crash at {failed:?}: refused, yet the session is now {:?} with {} batches (was {:?} with {})",
                after.example,
                after.batches.len(),
                v.example,
                v.batches.len()
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[tokio::test]

async fn loading_a_pipeline_whose_entry_fails_keeps_the_previous_session() {
    let (mut rig, v) = a_session().await;
    let mut pipeline = rig.p.definition().clone();
    pipeline.title = "my pipeline".into();
    rig.fail_logs();
    let message = rig.refused(Request::LoadPipeline { pipeline }).await;
    assert_eq!(message, log_failed("bronze/nyc_taxi_yellow"));
    rig.heal();
    let after = rig.view().await;
    assert_view_matches_log(&mut rig, &after).await;
    assert_unchanged(&v, &after);
}

#[tokio::test]
async fn loading_a_pipeline_again_after_a_failed_load_gives_empty_tables_with_one_version_each() {
    let (mut rig, _) = a_session().await;
    let mut pipeline = rig.p.definition().clone();
    pipeline.title = "my pipeline".into();
    rig.fail_logs();
    let message = rig
        .refused(Request::LoadPipeline {
            pipeline: pipeline.clone(),
        })
        .await;
    assert_eq!(message, log_failed("bronze/nyc_taxi_yellow"));
    assert_eq!(
        rig.heal(),
        ["bronze/nyc_taxi_yellow/_delta_log/00000000000000000000.json"]
    );
    let lakes = rig.lakes();
    let done = rig.ok(Request::LoadPipeline { pipeline }).await;
    assert_eq!(rig.lakes(), lakes + 1, "a load starts a new lake");
    assert_eq!(done.title, "my pipeline");
    assert!(done.batches.is_empty());
    for b in ["bronze.nyc_taxi_yellow", "bronze.taxi_zone_lookup"] {
        assert_eq!(rows(&done, b), 0);
        let h = &done.history[b];
        assert_eq!(
            h.iter().map(|v| v.operation.as_str()).collect::<Vec<_>>(),
            ["CREATE TABLE"]
        );
    }
    assert_view_matches_log(&mut rig, &done).await;
}

#[tokio::test]

async fn switching_the_language_whose_reload_fails_keeps_the_previous_session() {
    let mut rig = Rig::new("nyc_taxi_silver").await;
    let v = rig.view().await;
    rig.fail_logs();
    let message = rig.refused(Request::SetLang { lang: Lang::Ru }).await;
    assert_eq!(message, log_failed("bronze/nyc_taxi_yellow"));
    rig.heal();
    let after = rig.view().await;
    assert_view_matches_log(&mut rig, &after).await;
    assert_unchanged(&v, &after);
}

#[tokio::test]

async fn switching_the_language_again_after_a_failed_reload_reloads_the_example() {
    let mut rig = Rig::new("nyc_taxi_silver").await;
    let v = rig.view().await;
    rig.fail_logs();
    rig.refused(Request::SetLang { lang: Lang::Ru }).await;
    rig.heal();
    let done = rig.ok(Request::SetLang { lang: Lang::Ru }).await;
    assert_eq!(done.lang, Lang::Ru);
    let shape = |v: &PipelineView| {
        v.tables
            .iter()
            .map(|t| (t.name.clone(), t.row_count, t.version))
            .collect::<Vec<_>>()
    };
    assert_eq!(shape(&done), shape(&v));
    assert_view_matches_log(&mut rig, &done).await;
}

// ---------------------------------------------------------------- erasure

/// Two trips; the second has a negative fare, so rule F1 quarantines it.
const TRIPS_ONE_QUARANTINED: &str = "VendorID,tpep_pickup_datetime,tpep_dropoff_datetime,passenger_count,trip_distance,RatecodeID,store_and_fwd_flag,PULocationID,DOLocationID,payment_type,fare_amount,extra,mta_tax,tip_amount,tolls_amount,improvement_surcharge,total_amount,congestion_surcharge\n\
1,2020-07-01 00:25:32,2020-07-01 00:33:39,1,1.50,1,N,238,75,2,8,0.5,0.5,0,0,0.3,9.3,0\n\
7,2020-07-01 00:05:00,2020-07-01 00:15:00,1,2.00,1,N,161,236,1,-10,0.5,0.5,2,0,0.3,15.8,2.5\n";

fn forget(predicate: &str) -> Request {
    Request::Forget {
        table: "nyc_taxi_yellow".into(),
        predicate: predicate.into(),
        reason: "erasure request 19".into(),
        expected_rows: Some(1),
        plan_state: None,
    }
}

/// Does any shown row of `table` (all its rows) contain `text`?
async fn holds(rig: &mut Rig, table: &str, text: &str) -> bool {
    rig.rows(table, None)
        .await
        .iter()
        .flatten()
        .flatten()
        .any(|cell| cell.contains(text))
}

#[tokio::test]
async fn an_erasure_whose_silver_refresh_fails_shows_what_the_logs_hold() {
    let mut rig = Rig::new("nyc_taxi_silver").await;
    let v = rig.ok(trips("first.csv")).await;
    rig.fail(Target::Logs, Some("silver/nyc_taxi_yellow/"), 0);
    let s = rig
        .ok(forget(
            "_source_file = 'first.csv' AND raw_payload LIKE '2,%'",
        ))
        .await;
    assert_eq!(
        rig.heal(),
        ["silver/nyc_taxi_yellow/_delta_log/00000000000000000002.json"]
    );
    assert_eq!(
        rows(&s, "bronze.nyc_taxi_yellow"),
        rows(&v, "bronze.nyc_taxi_yellow") - 1
    );
    assert_eq!(s.erasures.len(), 1);
    assert!(!s.run.ok);
    assert_eq!(s.run.errors, taxi_silver_failed());
    assert_eq!(
        rows(&s, "silver.nyc_taxi_yellow"),
        rows(&v, "silver.nyc_taxi_yellow")
    );
    assert_view_matches_log(&mut rig, &s).await;
    // The next run commits the refresh: one new silver version, one row fewer.
    let done = rig
        .ok(Request::Run {
            full_refresh: false,
        })
        .await;
    assert!(done.run.ok, "{:?}", done.run);
    assert_eq!(
        rows(&done, "silver.nyc_taxi_yellow"),
        rows(&v, "silver.nyc_taxi_yellow") - 1
    );
    assert_eq!(
        versions(&done, "silver.nyc_taxi_yellow"),
        versions(&v, "silver.nyc_taxi_yellow") + 1
    );
    assert_view_matches_log(&mut rig, &done).await;
}

#[tokio::test]
async fn an_erasure_whose_silver_refresh_fails_says_silver_may_still_hold_the_record() {
    let mut rig = Rig::new("nyc_taxi_silver").await;
    rig.ok(trips("first.csv")).await;
    // The erased trip, picked up at 2020-07-01 00:05:00 (no other trip
    // of the sample was), is in silver now.
    let erased = "2020-07-01 00:05:00";
    assert!(holds(&mut rig, "silver.nyc_taxi_yellow", erased).await);
    rig.fail(Target::Logs, Some("silver/nyc_taxi_yellow/"), 0);
    let r = rig
        .send(forget(
            "_source_file = 'first.csv' AND raw_payload LIKE '2,%'",
        ))
        .await;
    rig.heal();
    let Response::Snapshot(s) = r else {
        panic!("{r:?}")
    };
    assert_eq!(s.erasures.len(), 1);
    assert!(
        !holds(&mut rig, "bronze.nyc_taxi_yellow", "2,2020-07-01 00:05:00").await,
        "erased from bronze"
    );
    // Silver could not commit its rebuild: it is at its previous version,
    // which still holds the record, and the answer says so.
    assert!(holds(&mut rig, "silver.nyc_taxi_yellow", erased).await);
    assert_eq!(
        s.notice,
        Some(format!("bronze.nyc_taxi_yellow: 1 record(s) erased from bronze, but silver and gold could not all be rebuilt (storage: silver/nyc_taxi_yellow: the lake's store failed: Generic test error: no space left on device; {}): a table still at its previous version may hold the erased records until a run succeeds.", taxi_silver_failed()[1]))
    );
    assert!(!s.run.ok);
    // The next successful run takes the record out of silver.
    let r = rig.send(Request::Run { full_refresh: true }).await;
    assert!(matches!(r, Response::Snapshot(_)), "{r:?}");
    assert!(!holds(&mut rig, "silver.nyc_taxi_yellow", erased).await);
}

#[tokio::test]

async fn an_erasure_whose_quarantine_commit_fails_shows_what_the_logs_hold() {
    let mut rig = Rig::new("nyc_taxi_silver").await;
    let v = rig
        .ok(ingest(
            "nyc_taxi_yellow",
            "first.csv",
            TRIPS_ONE_QUARANTINED.as_bytes(),
        ))
        .await;
    assert!(holds(&mut rig, "silver.quarantine", "7,2020-07-01 00:05:00").await);
    rig.fail(Target::Logs, Some("silver/quarantine/"), 0);
    let s = rig
        .ok(forget(
            "_source_file = 'first.csv' AND raw_payload LIKE '7,%'",
        ))
        .await;
    assert_eq!(rig.heal().len(), 1);
    assert_eq!(s.run.errors, [log_failed("silver/quarantine")]);
    assert_eq!(
        rows(&s, "bronze.nyc_taxi_yellow"),
        rows(&v, "bronze.nyc_taxi_yellow") - 1
    );
    assert_view_matches_log(&mut rig, &s).await;
}

// ---------------------------------------------------------------- every crash point

/// The table folder a write went to (`silver/quarantine/_current/…` → `silver/quarantine`).
fn table_of(path: &str) -> String {
    path.split('/').take(2).collect::<Vec<_>>().join("/")
}

/// Crashes `request` at each of its writes in turn (data files, working
/// copies, log entries; exactly one write fails), each time in a fresh
/// session of `example` prepared by `setup`, and returns every way the
/// outcome breaks the rule (empty: none):
///
/// - the page always agrees with the logs;
/// - a refused request changed nothing, and says which write failed;
/// - an accepted one (a run whose commit failed) reports the failure in
///   `run.errors` and the table whose write failed keeps its versions;
/// - once the store works, the same request succeeds and the page agrees
///   with the logs.
///
/// Also returns how many writes the request makes.
async fn sweep(example: &str, setup: &[Request], request: Request) -> (usize, Vec<String>) {
    async fn prepared(example: &str, setup: &[Request]) -> Rig {
        let mut rig = Rig::new(example).await;
        for r in setup {
            rig.ok(r.clone()).await;
        }
        rig
    }
    let mut clean = prepared(example, setup).await;
    let start = clean.faults.lock().unwrap().written.len();
    clean.ok(request.clone()).await;
    // The session's save is not a crash point here (see `failing_store`).
    let writes: Vec<String> = clean.faults.lock().unwrap().written[start..]
        .iter()
        .filter(|p| !p.starts_with("meta/session/"))
        .cloned()
        .collect();
    let mut wrong = Vec::new();
    for (n, path) in writes.iter().enumerate() {
        let mut rig = prepared(example, setup).await;
        let v = rig.view().await;
        rig.crash_at(Target::All, n);
        let r = rig.send(request.clone()).await;
        let failed = rig.heal();
        let at = format!("crash at write {n} ({path})");
        if failed != [path.clone()] {
            wrong.push(format!("{at}: the writes that failed were {failed:?}"));
            continue;
        }
        let table = table_of(path);
        let expected = if path.contains("/_delta_log/") {
            log_failed(&table)
        } else {
            data_failed(path)
        };
        let after = rig.view().await;
        for m in view_log_mismatches(&mut rig, &after).await {
            wrong.push(format!("{at}: {m}"));
        }
        match &r {
            Response::Error { message } => {
                if *message != expected {
                    wrong.push(format!(
                        "{at}: refused with {message:?}, expected {expected:?}"
                    ));
                }
                for c in changes(&v, &after) {
                    wrong.push(format!("{at}: refused, yet {c}"));
                }
            }
            Response::Snapshot(s) => {
                // A run's commit failed (run.errors), or a gold refresh did
                // (shown next to the model).
                let gold_errors: Vec<&String> =
                    s.gold.iter().filter_map(|g| g.error.as_ref()).collect();
                if !s.run.errors.contains(&expected)
                    && !gold_errors.iter().any(|e| e.contains(&expected))
                {
                    wrong.push(format!(
                        "{at}: accepted with run {:?}, gold errors {gold_errors:?}",
                        s.run
                    ));
                }
                let qualified = table.replacen('/', ".", 1);
                if version_list(s, &qualified) != version_list(&v, &qualified) {
                    wrong.push(format!(
                        "{at}: {qualified} has new versions though its write failed"
                    ));
                }
                // The quarantine and gold are computed from silver: a silver
                // version that was never saved leaves them where they were.
                if qualified.starts_with("silver.") && qualified != "silver.quarantine" {
                    for g in s
                        .history
                        .keys()
                        .filter(|t| t.is_gold() || t.is_quarantine())
                    {
                        if version_list(s, g.as_str()) != version_list(&v, g.as_str()) {
                            wrong.push(format!(
                                "{at}: {g} committed a version computed from {qualified}, which was not saved"
                            ));
                        }
                    }
                }
            }
            other => wrong.push(format!("{at}: answered {other:?}")),
        }
        // Once the store works: a refused request is sent again; after an
        // accepted one whose run failed to commit, the next run commits.
        let retry = match r {
            Response::Error { .. } => request.clone(),
            _ => Request::Run {
                full_refresh: false,
            },
        };
        match rig.send(retry).await {
            Response::Snapshot(done) => {
                if !done.run.ok {
                    wrong.push(format!("{at}: once the store works: run {:?}", done.run));
                }
                for m in view_log_mismatches(&mut rig, &done).await {
                    wrong.push(format!("{at}: once the store works: {m}"));
                }
            }
            other => wrong.push(format!("{at}: once the store works, answered {other:?}")),
        }
    }
    (writes.len(), wrong)
}

/// `table`'s versions as (number, operation, rows).
fn version_list(v: &PipelineView, table: &str) -> Vec<(u64, String, usize)> {
    v.history
        .get(table)
        .into_iter()
        .flatten()
        .map(|v| (v.version, v.operation.clone(), v.rows))
        .collect()
}

fn assert_none(wrong: &[String]) {
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[tokio::test]
async fn every_crash_point_of_an_ingest_leaves_a_page_that_agrees_with_the_logs() {
    // landing, bronze file, bronze entry, silver file and entry, gold file
    // and entry (the quarantine does not change), the watermarks' file and
    // entry (meta.bronze_checkpoints). SQL reads silver and gold from the
    // run's rows in memory: no working copies to write.
    let (writes, wrong) = sweep("nyc_taxi_silver", &[], trips("first.csv")).await;
    assert_eq!(writes, 9);
    assert_none(&wrong);
}

#[tokio::test]
async fn every_crash_point_of_a_kafka_poll_leaves_a_page_that_agrees_with_the_logs() {
    let produce = Request::KafkaProduce {
        table: "orders".into(),
        messages: vec![order(2001, "10.00"), order(2002, "oops")],
    };
    let (writes, wrong) = sweep("kafka_orders", &[produce], poll()).await;
    assert!(writes >= 6, "{writes}");
    assert_none(&wrong);
}

#[tokio::test]
async fn every_crash_point_of_a_rule_edit_leaves_a_page_that_agrees_with_the_logs() {
    let p = Rig::new("nyc_taxi_silver").await.p;
    let (writes, wrong) = sweep("nyc_taxi_silver", &[], set_f2(&p, "total_amount > 50")).await;
    // Silver, quarantine and gold each a file and an entry (no working copies).
    assert_eq!(writes, 6);
    assert_none(&wrong);
}

#[tokio::test]
async fn every_crash_point_of_a_reread_leaves_a_page_that_agrees_with_the_logs() {
    let mut rig = Rig::new("nyc_taxi_silver").await;
    let v = rig.ok(trips("first.csv")).await;
    let batch_id = v.batches.last().unwrap().batch_id.clone();
    let (writes, wrong) = sweep(
        "nyc_taxi_silver",
        &[trips("first.csv")],
        Request::Reingest {
            batch_id,
            options: Default::default(),
            remember: false,
        },
    )
    .await;
    assert!(writes >= 3, "{writes}");
    assert_none(&wrong);
}

#[tokio::test]

async fn every_crash_point_of_a_restore_leaves_a_page_that_agrees_with_the_logs() {
    let p = Rig::new("nyc_taxi_silver").await.p;
    let (writes, wrong) = sweep(
        "nyc_taxi_silver",
        &[set_f2(&p, "total_amount > 50")],
        restore("silver.nyc_taxi_yellow", 0),
    )
    .await;
    assert!(writes >= 4, "{writes}");
    assert_none(&wrong);
}

#[tokio::test]
async fn every_crash_point_of_an_erasure_leaves_a_page_that_agrees_with_the_logs() {
    let (writes, wrong) = sweep(
        "nyc_taxi_silver",
        &[trips("first.csv")],
        forget("_source_file = 'first.csv' AND raw_payload LIKE '2,%'"),
    )
    .await;
    assert!(writes >= 4, "{writes}");
    assert_none(&wrong);
}
