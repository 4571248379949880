//! The JavaScript facade in headless Chromium: JSON in, JSON out, errors as JS errors.
#![cfg(target_arch = "wasm32")]

use medallion_wasm::Playground;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
async fn example_snapshot_and_ingest_through_json() {
    let pg = Playground::example("nyc_taxi_silver".into(), "en".into())
        .await
        .unwrap();
    let snap: serde_json::Value = serde_json::from_str(&pg.snapshot().await.unwrap()).unwrap();
    assert_eq!(snap["type"], "snapshot");
    let tables = snap["tables"].as_array().unwrap();
    assert_eq!(tables[0]["name"], "bronze.nyc_taxi_yellow");
    assert_eq!(tables[0]["row_count"], 266);
    assert_eq!(tables[2]["row_count"], 260);

    let csv = "VendorID,tpep_pickup_datetime,tpep_dropoff_datetime,fare_amount,total_amount\n1,2020-07-03 10:00:00,2020-07-03 10:10:00,-5,-5\n";
    let after: serde_json::Value = serde_json::from_str(
        &pg.ingest(
            "nyc_taxi_yellow".into(),
            "neg.csv".into(),
            csv.as_bytes().to_vec(),
        )
        .await
        .unwrap(),
    )
    .unwrap();
    assert_eq!(after["tables"][0]["row_count"], 267);
    assert_eq!(after["tables"][3]["row_count"], 7);

    let refused = |json: &'static str| {
        let pg = &pg;
        async move {
            let err: wasm_bindgen::JsValue = pg.request(json.into()).await.err().unwrap().into();
            js_sys::Reflect::get(&err, &"message".into())
                .unwrap()
                .as_string()
                .unwrap()
        }
    };
    // A name without its layer is refused where the request is read.
    let msg = refused("{\"type\":\"get_table\",\"table\":\"nope\",\"offset\":0,\"limit\":5}").await;
    assert!(
        msg.starts_with("bad request: 'nope' is not a table name: write the layer, a dot and the table (bronze.orders, silver.orders, silver.quarantine, gold.revenue)"),
        "{msg}"
    );
    let msg =
        refused("{\"type\":\"get_table\",\"table\":\"silver.nope\",\"offset\":0,\"limit\":5}")
            .await;
    assert_eq!(msg, "there is no table silver.nope");
}
