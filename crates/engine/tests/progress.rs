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
    let written: Vec<(&str, u32, u32)> = heard
        .iter()
        .filter_map(|pr| match pr {
            Progress::Writing { table, n, of } => Some((table.as_str(), *n, *of)),
            _ => None,
        })
        .collect();
    // Both trips pass the filters: the quarantine holds the rows its
    // current version holds, so no version of it is written.
    assert_eq!(
        written,
        [
            // The new batch first (typed, encoded, hashed), then the run's tables.
            ("bronze.nyc_taxi_yellow", 1, 1),
            ("silver.nyc_taxi_yellow", 1, 2),
            ("gold.trips_by_borough_daily", 2, 2)
        ]
    );
    assert_eq!(
        heard.iter().filter_map(Progress::fraction).fold(0.0, f64::max),
        1.0
    );
}

/// The Reading events of one ingest of `bytes` into a raw bronze table.
async fn reading_events(file_name: &str, bytes: Vec<u8>) -> Vec<(u64, u64, u64)> {
    // One raw bronze table, as a JavaScript caller sends it (page.mjs of the benchmark).
    let def = serde_json::from_value(serde_json::json!({
        "title": "progress",
        "bronze": [{ "name": "input", "source_system": "test", "schema": { "columns": [] }, "description": "" }],
        "silver": [], "gold": [], "checks": [],
    }))
    .expect("pipeline definition");
    let mut p = Playground::with_env(
        Arc::new(FixedClock::new(1_700_000_000_000_000)),
        Arc::new(SequentialIds::default()),
    )
    .expect("playground");
    p.load_pipeline(def).await.expect("pipeline");
    let heard: Rc<RefCell<Vec<Progress>>> = Rc::default();
    let sink = heard.clone();
    p.set_progress(Some(Box::new(move |pr| sink.borrow_mut().push(pr))));
    let r = p
        .handle(Request::Ingest {
            table: "input".into(),
            file_name: file_name.into(),
            bytes,
            options: Default::default(),
        })
        .await;
    assert!(matches!(r, Response::Snapshot(_)), "{r:?}");
    let events = heard
        .borrow()
        .iter()
        .filter_map(|pr| match pr {
            Progress::Reading {
                file,
                bytes,
                total_bytes,
                records,
            } => {
                assert_eq!(file, file_name);
                Some((*bytes, *total_bytes, *records))
            }
            _ => None,
        })
        .collect();
    events
}

#[tokio::test]
async fn a_large_csv_reports_its_bytes_and_records_as_it_is_read() {
    // 300,000 records of 16 bytes after an 8-byte header: 4.8 MB.
    let mut csv = String::from("id,name\n");
    for i in 0..300_000 {
        csv.push_str(&format!("{i:07},{:07}\n", i * 3));
    }
    let total = csv.len() as u64;
    assert_eq!(total, 4_800_008);
    let events = reading_events("big.csv", csv.into_bytes()).await;
    assert_eq!(events.first(), Some(&(0, total, 0)));
    assert_eq!(events.last(), Some(&(total, total, 300_000)));
    let between = &events[1..events.len() - 1];
    // One report per 256 KiB read (2% of 4.8 MB is less): 18 of them.
    assert_eq!(between.len(), 18, "{events:?}");
    for (bytes, t, records) in between {
        assert_eq!(*t, total);
        // Reported at the start of a record: the ones before it are counted.
        assert_eq!((bytes - 8) % 16, 0, "{bytes}");
        assert_eq!(*records, (bytes - 8) / 16);
    }
    assert!(between
        .windows(2)
        .all(|w| w[0].0 < w[1].0 && w[0].2 < w[1].2));
}

#[tokio::test]
async fn json_lines_and_a_utf16_file_report_bytes_of_the_file_as_given() {
    // JSON Lines: 200,000 records of 16 bytes.
    let mut jsonl = String::new();
    for i in 0..200_000 {
        jsonl.push_str(&format!("{{\"i\":\"{i:07}\"}}\n"));
    }
    let total = jsonl.len() as u64;
    assert_eq!(total, 3_200_000);
    let events = reading_events("big.jsonl", jsonl.into_bytes()).await;
    assert_eq!(events.last(), Some(&(total, total, 200_000)));
    let between = &events[1..events.len() - 1];
    assert_eq!(between.len(), 12, "{events:?}");
    assert!(between.iter().all(|(b, _, r)| b % 16 == 0 && *r == b / 16));

    // The same CSV in UTF-16LE with its mark is twice the bytes: what is
    // reported is a share of those, never more than the file.
    let mut csv = String::from("id,name\n");
    for i in 0..100_000 {
        csv.push_str(&format!("{i:07},{:07}\n", i));
    }
    let mut utf16 = vec![0xFF, 0xFE];
    for u in csv.encode_utf16() {
        utf16.extend(u.to_le_bytes());
    }
    let total = utf16.len() as u64;
    let events = reading_events("wide.csv", utf16).await;
    assert_eq!(events.last(), Some(&(total, total, 100_000)));
    let between = &events[1..events.len() - 1];
    assert_eq!(between.len(), 6, "{events:?}");
    assert!(between
        .windows(2)
        .all(|w| w[0].0 < w[1].0 && w[0].2 < w[1].2 && w[1].0 < total));
}
