//! Benchmark: bronze ingest of a large CSV (the taxi sample's rows repeated
//! to about 20 MB): splitting into records, then a whole ingest (split,
//! audit columns, Parquet write and read-back, batch log) in raw and in typed
//! PERMISSIVE mode, then the first silver run. Goal: a 20 MB file lands in
//! bronze in a few seconds natively (the browser is 2-4x slower).
//!
//! `cargo run --release -p medallion-engine --example ingest_bench`
//! Prints sizes, milliseconds and MB/s.

use std::time::Instant;

use medallion_engine::bronze::{split_file, IngestOptions};
use medallion_engine::model::{BronzeMode, PipelineDef};
use medallion_engine::Playground;

const SAMPLE: &str =
    include_str!("../../../static/examples/nyc_taxi/yellow_tripdata_sample_2020-07.csv");

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn main() {
    let mut lines = SAMPLE.lines();
    let header = lines.next().expect("header");
    let body: Vec<&str> = lines.collect();
    let mut csv = String::from(header);
    csv.push('\n');
    while csv.len() < 20 * 1024 * 1024 {
        for l in &body {
            csv.push_str(l);
            csv.push('\n');
        }
    }
    let mb = csv.len() as f64 / 1048576.0;
    let t = Instant::now();
    let split = split_file(csv.as_bytes(), &IngestOptions::default()).expect("split");
    let split_ms = ms(t);
    println!(
        "split {:.1} MB into {} records: {split_ms:.0} ms ({:.0} MB/s)",
        mb,
        split.records.len(),
        mb / (split_ms / 1e3)
    );

    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    rt.block_on(async {
        for mode in [BronzeMode::Raw, BronzeMode::Permissive] {
            let mut p = Playground::new().expect("playground");
            p.load_example("nyc_taxi_silver", medallion_engine::Lang::En)
                .await
                .expect("example");
            let mut def: PipelineDef = p.definition().clone();
            def.bronze.retain(|b| b.name == "nyc_taxi_yellow");
            def.bronze[0].mode = mode;
            def.silver[0].rules.rules.clear();
            def.gold.clear();
            def.checks.clear();
            p.load_pipeline(def).await.expect("pipeline");
            let t = Instant::now();
            let info = p
                .ingest("nyc_taxi_yellow", "big.csv", csv.as_bytes(), &IngestOptions::default())
                .await
                .expect("ingest");
            let total = ms(t);
            let view = p.view();
            println!(
                "{} bronze: ingest + first silver run of {} records: {total:.0} ms ({:.1} MB/s); silver {} rows; run alone {:.0} ms",
                mode.label(),
                info.records,
                mb / (total / 1e3),
                view.table("silver.nyc_taxi_yellow").map(|t| t.row_count).unwrap_or(0),
                view.run.duration_ms
            );
        }
    });
}
