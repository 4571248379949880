//! The "NYC flights 2013" example end to end on its real files (336,776
//! flights and four lookups, downloaded on demand in the browser; read from
//! `static/downloads/` here), with exact figures computed independently from
//! the CSV (Python's csv module over the same file). Native only: the
//! browser path is `tests/e2e/flights.test.mjs`.
#![cfg(not(target_arch = "wasm32"))]

#[path = "support/page.rs"]
#[allow(dead_code)]
mod shown;
#[allow(dead_code)] // yield_to_browser: this file is native only
mod support;
use support::col;

use std::sync::Arc;

use medallion_engine::api::{PipelineView, Request, Response, TableView};
use medallion_engine::checks::CheckStatus;
use medallion_engine::env::{FixedClock, SequentialIds};
use medallion_engine::{Lang, Playground};

async fn flights() -> Playground {
    let mut p = Playground::with_env(
        Arc::new(FixedClock::new(1_700_000_000_000_000)),
        Arc::new(SequentialIds::default()),
    )
    .expect("playground");
    support::flights::add_flights_downloads(&mut p);
    p.load_example("nyc_flights_2013", Lang::En)
        .await
        .expect("example loads");
    p
}

fn counts(v: &PipelineView) -> Vec<(&str, usize)> {
    v.tables
        .iter()
        .map(|t| (t.name.as_str(), t.row_count))
        .collect()
}



async fn rows(p: &mut Playground, table: &str) -> TableView {
    support::rows_at(p, table, None, 10000).await
}

#[tokio::test]
async fn a_year_of_flights_goes_through_every_layer_with_exact_figures() {
    let mut p = flights().await;
    let v = p.view();
    assert!(v.run.ok, "{:?}", v.run);
    assert_eq!(
        counts(&v),
        [
            ("bronze.flights", 336_776),
            ("bronze.airlines", 16),
            ("bronze.airports", 1_458),
            ("bronze.planes", 3_322),
            ("bronze.weather", 26_115),
            ("silver.flights", 327_346),
            ("silver.quarantine", 9_430),
            ("gold.delays_by_carrier_month", 185),
        ]
    );
    let statuses: Vec<(&str, CheckStatus)> =
        v.checks.iter().map(|c| (c.id.as_str(), c.status)).collect();
    assert!(
        statuses
            .iter()
            .all(|(id, s)| *s == CheckStatus::Pass || (*id == "A3" && *s == CheckStatus::Info)),
        "{statuses:?}"
    );

    // Gold, UA in January: 4,590 flights, 8.32 / 3.18 minutes, 21.3 % late.
    let gold = rows(&mut p, "gold.delays_by_carrier_month").await;
    let at = col(&gold, "carrier")
        .iter()
        .zip(col(&gold, "month"))
        .position(|(c, m)| *c == Some("UA") && m == Some("1"))
        .expect("UA, January");
    let cell = |name: &str| col(&gold, name)[at];
    assert_eq!(cell("carrier_name"), Some("United Air Lines Inc."));
    assert_eq!(cell("flights"), Some("4590"));
    assert_eq!(cell("avg_dep_delay_min"), Some("8.32"));
    assert_eq!(cell("avg_arr_delay_min"), Some("3.18"));
    assert_eq!(cell("late_pct"), Some("21.3"));
    let flights_total: u64 = col(&gold, "flights")
        .iter()
        .map(|f| f.unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(flights_total, 327_346);

    // The quarantine names its rules: 8,255 cancelled (F1), 1,175 diverted (F2).
    let q = rows(&mut p, "silver.quarantine").await;
    let by_rule = |id: &str| {
        col(&q, "rule_id")
            .iter()
            .filter(|r| **r == Some(id))
            .count()
    };
    assert_eq!(
        (q.rows.len(), by_rule("F1"), by_rule("F2")),
        (9_430, 8_255, 1_175)
    );
}

#[tokio::test]
async fn switching_the_diverted_filter_off_lets_unknown_delays_into_silver_and_r1_says_so() {
    let mut p = flights().await;
    let mut rules = p.definition().silver[0].rules.rules.clone();
    rules.iter_mut().find(|r| r.id == "F2").expect("F2").enabled = false;
    let v = match p
        .handle(Request::SetRules {
            silver_table: "silver.flights".into(),
            rules,
        })
        .await
    {
        Response::Snapshot(v) => v,
        other => panic!("unexpected {other:?}"),
    };
    let silver = v.table("silver.flights").expect("silver").row_count;
    let quarantine = v.table("silver.quarantine").expect("quarantine").row_count;
    // The quarantine is history (seed 003 §4): the 1,175 diverted flights'
    // F2 rows stay, closed as `released` by this run.
    assert_eq!((silver, quarantine), (328_521, 9_430));
    let q = rows(&mut p, "silver.quarantine").await;
    let released = col(&q, "closed_as")
        .iter()
        .filter(|c| **c == Some("released"))
        .count();
    assert_eq!(released, 1_175);
    let r1 = v.checks.iter().find(|c| c.id == "R1").expect("R1");
    assert_eq!(r1.status, CheckStatus::Fail);
    assert!(r1.observed.contains("1175"), "{}", r1.observed);

    // The saved session (what a reload finds) opens again as it was.
    let reopened = Playground::open(
        Arc::new(FixedClock::new(1_700_000_000_000_000)),
        Arc::new(SequentialIds::default()),
        shown::store_factory(),
        shown::copy_of(p.lake_store()).await,
    )
    .await
    .expect("opens")
    .expect("a saved session");
    let again = reopened.view();
    assert_eq!(counts(&again), counts(&v));
    let statuses = |v: &PipelineView| -> Vec<(String, CheckStatus)> {
        v.checks.iter().map(|c| (c.id.clone(), c.status)).collect()
    };
    assert_eq!(statuses(&again), statuses(&v));
}
