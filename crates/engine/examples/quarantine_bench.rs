//! Benchmark: an ingest whose every record goes to the quarantine (a file
//! dropped on a table whose columns it does not have: by default the
//! 200,000 vega `flights-200k.json` records on the taxi example's
//! `bronze.nyc_taxi_yellow`), timed step by step from the engine's
//! progress reports, then the tables' row counts. The happy-path ingest
//! figures are in `bench` and `ingest_bench`; this is the path where each
//! record becomes a quarantine row with its reason and raw payload.
//!
//! `cargo run --profile bench-native -p medallion-engine --example quarantine_bench -- [FILE] [TABLE]`
//! (FILE defaults to `../shared/data/vega-datasets/flights-200k.json`,
//! TABLE to `nyc_taxi_yellow`). Prints milliseconds since the ingest began.

use std::time::Instant;

use medallion_engine::bronze::IngestOptions;
use medallion_engine::Playground;

fn main() {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "../shared/data/vega-datasets/flights-200k.json".into());
    let table = std::env::args()
        .nth(2)
        .unwrap_or_else(|| "nyc_taxi_yellow".into());
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let mut p = Playground::new().expect("playground");
        p.load_example("nyc_taxi_silver", medallion_engine::Lang::En)
            .await
            .expect("example");
        let started = Instant::now();
        p.set_progress(Some(Box::new(move |step| {
            let text = format!("{step:?}");
            if !text.starts_with("Reading") {
                println!("{:8.0} ms  {text}", started.elapsed().as_secs_f64() * 1e3);
            }
        })));
        let name = std::path::Path::new(&path)
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let landed = p
            .ingest(&table, &name, &bytes, &IngestOptions::default())
            .await;
        println!(
            "{:8.0} ms  ingest done: {:?} records",
            started.elapsed().as_secs_f64() * 1e3,
            landed.map(|b| b.records)
        );
        for t in &p.view().tables {
            println!("{} {}", t.name, t.row_count);
        }
    });
}
