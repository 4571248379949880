//! Progress reports of long requests (what the Web Worker posts to the page
//! as a progress bar): a file's bytes and records, each rule of the run in
//! order, each gold model, each table written.

use medallion_engine::TableName;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use medallion_engine::api::{Lang, Request, Response};
use medallion_engine::env::{FixedClock, SequentialIds};
use medallion_engine::progress::Progress;
use medallion_engine::Playground;

#[tokio::test]
async fn an_ingest_reports_the_file_then_every_rule_model_and_table_in_order() {
    let mut p = Playground::with_env(
        Arc::new(FixedClock::new(1_700_000_000_000_000)),
        Arc::new(SequentialIds::default()),
    )
    .expect("playground");
    p.load_example("nyc_taxi_silver", Lang::En)
        .await
        .expect("example");
    let heard: Rc<RefCell<Vec<Progress>>> = Rc::default();
    let sink = heard.clone();
    p.set_progress(Some(Box::new(move |pr| sink.borrow_mut().push(pr))));

    let csv = "VendorID,tpep_pickup_datetime,tpep_dropoff_datetime,passenger_count,trip_distance,RatecodeID,store_and_fwd_flag,PULocationID,DOLocationID,payment_type,fare_amount,extra,mta_tax,tip_amount,tolls_amount,improvement_surcharge,total_amount,congestion_surcharge\n\
                1,2020-07-01 00:25:32,2020-07-01 00:33:39,1,1.50,1,N,238,75,2,8,0.5,0.5,0,0,0.3,9.3,0\n\
                2,2020-07-01 00:05:00,2020-07-01 00:15:00,1,2.00,1,N,161,236,1,10,0.5,0.5,2,0,0.3,15.8,2.5\n";
    let r = p
        .handle(Request::Ingest {
            table: "nyc_taxi_yellow".into(),
            file_name: "two.csv".into(),
            bytes: csv.as_bytes().to_vec(),
            options: Default::default(),
        })
        .await;
    assert!(matches!(r, Response::Snapshot(_)), "{r:?}");

    let heard = heard.borrow();
    let total = csv.len() as u64;
    assert_eq!(
        heard[..2],
        [
            Progress::Reading {
                file: "two.csv".into(),
                bytes: 0,
                total_bytes: total,
                records: 0
            },
            Progress::Reading {
                file: "two.csv".into(),
                bytes: total,
                total_bytes: total,
                records: 2
            },
        ]
    );
    // The run reads each bronze table with its declared schema first.
    assert!(
        heard.contains(&Progress::Parsing {
            table: TableName::bronze("nyc_taxi_yellow"),
            records: 268,
            n: 1,
            of: 2,
        }),
        "{heard:?}"
    );
    let rules: Vec<(String, u32, u32)> = heard
        .iter()
        .filter_map(|pr| match pr {
            Progress::Rule { table, rule, n, of } if table == "silver.nyc_taxi_yellow" => {
                Some((rule.clone(), *n, *of))
            }
            _ => None,
        })
        .collect();
    // The enabled rules of the course's registry (F4, N5, E4 are exercises, off),
    // filters first, numbered 1..=of.
    let ids: Vec<&str> = rules.iter().map(|(id, _, _)| id.as_str()).collect();
    assert_eq!(&ids[..3], ["F1", "F2", "F3"]);
    assert_eq!(
        rules.iter().map(|r| r.1).collect::<Vec<_>>(),
        (1..=rules.len() as u32).collect::<Vec<_>>()
    );
    assert!(rules.iter().all(|r| r.2 == rules.len() as u32));
    assert!(heard.iter().any(|pr| matches!(pr, Progress::Model { table, n: 1, of: 1 } if table == "gold.trips_by_borough_daily")));
    let written: Vec<&str> = heard
        .iter()
        .filter_map(|pr| match pr {
            Progress::Writing { table, .. } => Some(table.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        written.contains(&"silver.nyc_taxi_yellow") && written.contains(&"silver.quarantine"),
        "{written:?}"
    );
    assert_eq!(
        heard.iter().map(Progress::fraction).fold(0.0, f64::max),
        1.0
    );
}
