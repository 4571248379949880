//! The native half of `scripts/bench.sh` (issue 12's benchmark): prints one
//! JSON object per line, each figure the median (and p95 where asked) of
//! several runs after one warm-up.
//!
//! - `ingest`: one file into an empty raw bronze table (split, audit
//!   columns, Parquet write, batch log; no silver): ms, MB/s, records/s. A
//!   file above the record limit is refused up front: its message is printed.
//! - `rule_edit`: the NYC flights example (336,776 flights), rule F2
//!   switched off and on again; each edit re-runs silver, gold and checks.
//!   Also where the time goes (median ms per stage, from the progress
//!   events: parsing bronze, the rules, gold, writing versions, and the
//!   rest: checks and the snapshot), and `shown_p50_ms`: when the run's
//!   result is ready to show (its preview, before the versions are written;
//!   `p50_ms` is until the request is done).
//!
//! `cargo run --profile bench-native -p medallion-engine --example bench -- DATA_DIR RUNS [ingest|rule_edit]`
//! (DATA_DIR is `../shared/data`; the flights CSV comes from `static/downloads/`;
//! the last argument runs one half alone).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::Read;
use std::rc::Rc;
use std::time::Instant;

use medallion_engine::api::{Request, Response};
use medallion_engine::bronze::IngestOptions;
use medallion_engine::model::{BronzeMode, BronzeTableDef, PipelineDef};
use medallion_engine::progress::Progress;
use medallion_engine::silver::source::SourceSchema;
use medallion_engine::{Lang, Playground};

const STATIC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../static/");

fn gunzip(path: &str) -> Vec<u8> {
    let gz = std::fs::read(format!("{STATIC}{path}")).expect("download file");
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut out)
        .expect("gunzip");
    out
}

/// Median and 95th percentile (nearest rank) of `ms`.
fn stats(mut ms: Vec<f64>) -> (f64, f64) {
    ms.sort_by(|a, b| a.total_cmp(b));
    let p95 = ms[((ms.len() as f64 * 0.95).ceil() as usize).clamp(1, ms.len()) - 1];
    (ms[ms.len() / 2], p95)
}

fn bronze_only() -> PipelineDef {
    PipelineDef {
        title: "bench".into(),
        bronze: vec![BronzeTableDef {
            name: "input".into(),
            source_system: "bench".into(),
            schema: SourceSchema { columns: vec![] },
            description: String::new(),
            kafka_topic: None,
            mode: BronzeMode::Raw,
            ingest_options: Default::default(),
        }],
        silver: vec![],
        gold: vec![],
        checks: vec![],
        anti_patterns: Default::default(),
    }
}

async fn ingest(name: &str, bytes: &[u8], runs: usize) {
    let mb = bytes.len() as f64 / 1e6;
    let mut times = Vec::new();
    let mut records = 0u64;
    for run in 0..=runs {
        let mut p = Playground::new().expect("playground");
        p.load_pipeline(bronze_only()).await.expect("pipeline");
        let t = Instant::now();
        match p
            .ingest("input", name, bytes, &IngestOptions::default())
            .await
        {
            Ok(info) => records = info.records as u64,
            Err(e) => {
                println!(
                    "{}",
                    serde_json::json!({"bench": "ingest", "file": name, "mb": mb, "refused": e.to_string(), "ms": t.elapsed().as_secs_f64() * 1e3})
                );
                return;
            }
        }
        if run > 0 {
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    let (p50, _) = stats(times);
    println!(
        "{}",
        serde_json::json!({"bench": "ingest", "file": name, "mb": mb, "records": records, "ms": p50,
            "mb_per_s": mb / (p50 / 1e3), "records_per_s": records as f64 / (p50 / 1e3)})
    );
}

async fn rule_edit(runs: usize) {
    let mut p = Playground::new().expect("playground");
    for d in medallion_engine::examples::find("nyc_flights_2013")
        .expect("flights example")
        .info
        .downloads
    {
        p.add_download(d.path, gunzip(d.path)).expect("download");
    }
    let t = Instant::now();
    p.load_example("nyc_flights_2013", Lang::En)
        .await
        .expect("example");
    let load_ms = t.elapsed().as_secs_f64() * 1e3;
    let memory_mb = p.memory_bytes().await.expect("memory") as f64 / 1e6;
    let estimated_mb = medallion_engine::playground::estimated_bytes(&gunzip(
        "downloads/nycflights13/flights.csv.gz",
    )) as f64
        / 1e6;
    let events: Rc<RefCell<Vec<(Instant, &'static str)>>> = Default::default();
    let seen = events.clone();
    p.set_progress(Some(Box::new(move |e: Progress| {
        let stage = match e {
            Progress::Parsing { .. } => "parse",
            Progress::Rule { .. } => "rules",
            Progress::Model { .. } => "gold",
            Progress::Writing { .. } => "write",
            _ => "other",
        };
        let mut seen = seen.borrow_mut();
        if seen.last().is_none_or(|(_, s)| *s != stage) {
            seen.push((Instant::now(), stage));
        }
    })));
    let mut stages: BTreeMap<&'static str, Vec<f64>> = BTreeMap::new();
    let mut times = Vec::new();
    let mut shown_times = Vec::new();
    for run in 0..=(2 * runs) {
        events.borrow_mut().clear();
        let mut rules = p.definition().silver[0].rules.rules.clone();
        let f2 = rules.iter_mut().find(|r| r.id == "F2").expect("F2");
        f2.enabled = !f2.enabled;
        // When the run's result is ready to show (before its versions are
        // written), as the page shows it.
        let shown: Rc<RefCell<Option<Instant>>> = Default::default();
        let at = shown.clone();
        p.set_preview(Some(Box::new(move |_| {
            *at.borrow_mut() = Some(Instant::now())
        })));
        let t = Instant::now();
        match p
            .handle(Request::SetRules {
                silver_table: "silver.flights".into(),
                rules,
            })
            .await
        {
            Response::Snapshot(v) => assert!(v.run.ok, "{:?}", v.run),
            other => panic!("unexpected {other:?}"),
        }
        let end = Instant::now();
        if run > 0 {
            times.push((end - t).as_secs_f64() * 1e3);
            let shown = shown.borrow().expect("the run was previewed");
            shown_times.push((shown - t).as_secs_f64() * 1e3);
            let events = events.borrow();
            let mut per_run: BTreeMap<&'static str, f64> = BTreeMap::new();
            let mut from = t;
            let mut stage = "start";
            for (at, next) in events.iter().chain([(end, "end")].iter()) {
                *per_run.entry(stage).or_default() += (*at - from).as_secs_f64() * 1e3;
                (from, stage) = (*at, *next);
            }
            // After the last write: the checks and the snapshot.
            if let Some(rest) = per_run.remove("write") {
                per_run.insert("write+checks+view", rest);
            }
            for (s, ms) in per_run {
                stages.entry(s).or_default().push(ms);
            }
        }
    }
    let stages: BTreeMap<&str, f64> = stages.into_iter().map(|(s, ms)| (s, stats(ms).0)).collect();
    let (p50, p95) = stats(times);
    let (shown_p50, shown_p95) = stats(shown_times);
    println!(
        "{}",
        serde_json::json!({"bench": "rule_edit", "example": "nyc_flights_2013", "load_ms": load_ms, "memory_mb": memory_mb, "flights_estimated_mb": estimated_mb, "p50_ms": p50, "p95_ms": p95, "shown_p50_ms": shown_p50, "shown_p95_ms": shown_p95, "runs": 2 * runs, "stages_ms": stages})
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let data = args.next().unwrap_or_else(|| "../shared/data".into());
    let runs: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(3);
    // `ingest` or `rule_edit` runs that half alone (profiling one of them).
    let only = args.next();
    let wants = |part: &str| only.as_deref().is_none_or(|o| o == part);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    rt.block_on(async {
        if wants("ingest") {
            let flights = gunzip("downloads/nycflights13/flights.csv.gz");
            ingest("flights.csv", &flights, runs).await;
            drop(flights);
            for file in ["flights-200k.json", "flights-3m.parquet"] {
                let bytes = std::fs::read(format!("{data}/vega-datasets/{file}"))
                    .unwrap_or_else(|e| panic!("{data}/vega-datasets/{file}: {e}"));
                ingest(file, &bytes, runs).await;
            }
        }
        if wants("rule_edit") {
            rule_edit(runs).await;
        }
    });
}
