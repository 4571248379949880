//! Benchmark: how long a rule edit takes to recompute silver, quarantine,
//! gold and checks on the NYC taxi example (goal: well under a second).
//!
//! `cargo run --release -p medallion-engine --example rerun_bench`
//! Prints load time and min / median / max of 20 reruns, in milliseconds.

use medallion_engine::api::{Request, Response};
use medallion_engine::{Lang, Playground};

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let t0 = std::time::Instant::now();
        let mut p = Playground::new().expect("playground");
        p.load_example("nyc_taxi_silver", Lang::En)
            .await
            .expect("example");
        println!(
            "load example (ingest 531 records + first run): {:.1} ms",
            t0.elapsed().as_secs_f64() * 1e3
        );
        let mut rules = p.definition().silver[0].rules.rules.clone();
        let mut times = Vec::new();
        for i in 0..20 {
            rules[1].expression = format!("total_amount > {}", 50 + i * 10);
            let t = std::time::Instant::now();
            let r = p
                .handle(Request::SetRules {
                    silver_table: "nyc_taxi_yellow".into(),
                    rules: rules.clone(),
                })
                .await;
            times.push(t.elapsed().as_secs_f64() * 1e3);
            assert!(matches!(r, Response::Snapshot(ref v) if v.run.ok));
        }
        times.sort_by(|a, b| a.total_cmp(b));
        println!(
            "rule edit → full rerun (20 runs): min {:.1} ms, median {:.1} ms, max {:.1} ms",
            times[0], times[10], times[19]
        );
    });
}
