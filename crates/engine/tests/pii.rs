//! PII in an immutable bronze (seed 000 §7): the right to be forgotten
//! three ways on the same bundled orders, each in its own throw-away lake:
//! tokenization before bronze (forget = delete the vault entries),
//! crypto-shredding (forget = delete the customer's AES-256-GCM key) and the
//! physical DELETE + expiry. Pinned: the cells before and after, bronze's
//! row count, version and bytes, time travel, the gold a replay rebuilds.
//! Runs natively and in headless Chromium (each test small: one lab).

mod support;

use std::sync::Arc;

use medallion_engine::api::{Lang, Request, Response};
use medallion_engine::env::{FixedClock, SeededIds, SequentialIds};
use medallion_engine::pii::{landed_files, orders, OutsideLake, Unreadable, PII_FIELDS};
use medallion_engine::Playground;
use medallion_protocol::{PiiMethod, PiiMethodView, PiiTable, PiiView};
use wasm_bindgen_test::wasm_bindgen_test;

#[cfg(target_arch = "wasm32")]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

fn playground() -> Playground {
    Playground::with_env(
        Arc::new(FixedClock::new(1_700_000_000_000_000)),
        Arc::new(SequentialIds::default()),
    )
    .expect("playground")
}

async fn pii(p: &mut Playground, request: Request) -> PiiView {
    support::yield_to_browser().await;
    match p.handle(request).await {
        Response::Pii(v) => v,
        other => panic!("unexpected {other:?}"),
    }
}

fn method(v: &PiiView, m: PiiMethod) -> &PiiMethodView {
    let view = v.methods.iter().find(|x| x.method == m).expect("method");
    assert_eq!(view.error, None, "{m:?}");
    view
}

/// Column `column` of every row: (stored, read).
fn column(t: &PiiTable, column: &str) -> Vec<(Option<String>, Option<String>)> {
    let i = t.columns.iter().position(|c| c == column).expect(column);
    t.rows
        .iter()
        .map(|r| (r[i].stored.clone(), r[i].read.clone()))
        .collect()
}

fn read(t: &PiiTable, name: &str) -> Vec<Option<String>> {
    column(t, name).into_iter().map(|(_, r)| r).collect()
}

fn stored(t: &PiiTable, name: &str) -> Vec<Option<String>> {
    column(t, name).into_iter().map(|(s, _)| s).collect()
}

fn some(v: &[&str]) -> Vec<Option<String>> {
    v.iter().map(|s| Some(s.to_string())).collect()
}

async fn forget(m: PiiMethod) -> PiiView {
    let mut p = playground();
    pii(
        &mut p,
        Request::PiiForget {
            customer: "U-2".into(),
            method: Some(m),
        },
    )
    .await
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn every_lake_lands_the_same_orders_as_tokens_ciphertext_or_values() {
    let mut p = playground();
    let v = pii(
        &mut p,
        Request::PiiLab {
            customer: Some("U-2".into()),
        },
    )
    .await;
    assert_eq!(v.customer, "U-2");
    assert_eq!(v.fields, ["name", "email", "phone"]);
    let customers: Vec<(&str, usize)> = v
        .customers
        .iter()
        .map(|c| (c.user_id.as_str(), c.orders))
        .collect();
    assert_eq!(customers, [("U-1", 2), ("U-2", 2), ("U-3", 1), ("U-4", 1)]);
    for m in PiiMethod::ALL {
        let view = method(&v, *m);
        assert!(!view.forgotten);
        assert_eq!(view.before, None);
        let now = &view.now;
        assert_eq!(now.bronze.total_rows, 6, "{m:?}");
        assert_eq!(
            now.bronze_version, 2,
            "two batches after the table's creation"
        );
        assert_eq!(now.bronze_operation, "APPEND");
        assert_eq!(read(&now.bronze, "order_id"), some(&["O-1002", "O-1004"]));
        assert_eq!(
            read(&now.bronze, "name"),
            some(&["Ben Miller", "Ben Miller"])
        );
        assert_eq!(
            read(&now.bronze, "email"),
            some(&["ben.miller@example.org", "ben.miller@example.org"])
        );
        assert_eq!(
            stored(&now.bronze, "amount"),
            some(&["120.00", "75.25"]),
            "the JSON number as received"
        );
        assert_eq!(now.time_travel.version, Some(2));
        assert_eq!(now.time_travel.rows.len(), 2);
        assert_eq!(
            now.replay.total_rows, 4,
            "gold.customer_orders: four customers"
        );
        assert_eq!(read(&now.replay, "name"), some(&["Ben Miller"]));
        assert_eq!(read(&now.replay, "orders"), some(&["2"]));
        assert_eq!(read(&now.replay, "amount"), some(&["195.25"]));
        assert_eq!(now.replay_revenue, "572.65");
        assert_eq!(now.landed_files, 2);
        assert_eq!(view.findings.len(), 1, "what forgetting would do");
    }
    let token = &method(&v, PiiMethod::Tokenize).now;
    let names = stored(&token.bronze, "name");
    assert!(names[0].as_deref().is_some_and(|s| s.starts_with("tok_")));
    assert_eq!(names[0], names[1], "one token per customer and value");
    assert_eq!(token.vault_entries, Some(3));
    let shred = &method(&v, PiiMethod::CryptoShred).now;
    let names = stored(&shred.bronze, "name");
    assert!(names
        .iter()
        .all(|s| s.as_deref().is_some_and(|s| s.starts_with("enc:"))));
    assert_ne!(names[0], names[1], "a fresh nonce per cell");
    assert_eq!(shred.key_present, Some(true));
    let plain = &method(&v, PiiMethod::Delete).now;
    assert_eq!(
        stored(&plain.bronze, "name"),
        some(&["Ben Miller", "Ben Miller"])
    );
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn tokenization_forgets_in_the_vault_and_bronze_stays_byte_for_byte() {
    let v = forget(PiiMethod::Tokenize).await;
    let view = method(&v, PiiMethod::Tokenize);
    assert!(view.forgotten);
    let before = view.before.as_ref().expect("before");
    let now = &view.now;
    assert_eq!(
        now.bronze_sha256, before.bronze_sha256,
        "bronze not touched"
    );
    assert_eq!((before.bronze.total_rows, now.bronze.total_rows), (6, 6));
    assert_eq!((before.bronze_version, now.bronze_version), (2, 2));
    assert_eq!(now.bronze_versions, before.bronze_versions);
    assert_eq!(
        stored(&now.bronze, "email"),
        stored(&before.bronze, "email"),
        "the same tokens"
    );
    assert_eq!(read(&now.bronze, "email"), vec![None, None]);
    assert_eq!(read(&now.bronze, "country"), some(&["GB", "GB"]));
    assert_eq!(now.bronze.pii_cells(), (6, 0));
    assert_eq!(
        (before.vault_entries, now.vault_entries),
        (Some(3), Some(0))
    );
    assert_eq!(now.time_travel.version, Some(2));
    assert_eq!(
        now.time_travel.pii_cells(),
        (6, 0),
        "time travel reads the same tokens"
    );
    assert_eq!(read(&now.replay, "name"), vec![None]);
    assert_eq!(read(&now.replay, "amount"), some(&["195.25"]));
    assert_eq!(now.replay_revenue, "572.65", "the facts stay");
    // The other lakes did not forget anyone.
    assert!(!method(&v, PiiMethod::CryptoShred).forgotten);
    assert_eq!(method(&v, PiiMethod::Delete).now.bronze.total_rows, 6);
    assert_eq!(view.findings.len(), 5);
    assert!(view.findings[0].contains("6 rows before, 6 after; still version 2"));
    assert!(view.findings[1].contains("0 of 6 resolve: the vault entries were deleted (3 → 0)"));
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn crypto_shredding_keeps_the_rows_and_makes_the_payloads_unreadable() {
    let v = forget(PiiMethod::CryptoShred).await;
    let view = method(&v, PiiMethod::CryptoShred);
    assert!(view.forgotten);
    let before = view.before.as_ref().expect("before");
    let now = &view.now;
    assert_eq!(now.bronze_sha256, before.bronze_sha256, "no bronze rewrite");
    assert_eq!((before.bronze.total_rows, now.bronze.total_rows), (6, 6));
    assert_eq!(now.bronze.rows.len(), 2, "the customer's rows stay");
    assert_eq!(
        (now.bronze_version, now.bronze_operation.as_str()),
        (2, "APPEND")
    );
    for field in PII_FIELDS {
        assert_eq!(stored(&now.bronze, field), stored(&before.bronze, field));
        assert_eq!(read(&now.bronze, field), vec![None, None], "{field}");
    }
    assert_eq!(read(&now.bronze, "amount"), some(&["120.00", "75.25"]));
    assert_eq!(
        (before.key_present, now.key_present),
        (Some(true), Some(false))
    );
    assert_eq!(now.time_travel.pii_cells(), (6, 0));
    assert_eq!(read(&now.replay, "email"), vec![None]);
    assert_eq!(read(&now.replay, "orders"), some(&["2"]));
    assert_eq!(now.replay_revenue, "572.65");
    assert!(view.findings[1].contains("0 of 6 decrypt: the key was deleted"));
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn the_physical_delete_rewrites_bronze_and_expires_older_snapshots() {
    let v = forget(PiiMethod::Delete).await;
    let view = method(&v, PiiMethod::Delete);
    let before = view.before.as_ref().expect("before");
    let now = &view.now;
    assert_ne!(now.bronze_sha256, before.bronze_sha256, "bronze rewritten");
    assert_eq!((before.bronze.total_rows, now.bronze.total_rows), (6, 4));
    assert_eq!((before.bronze.rows.len(), now.bronze.rows.len()), (2, 0));
    // What bronze held before is shown without the personal data it held.
    assert_eq!(stored(&before.bronze, "email"), some(&["•••", "•••"]));
    assert_eq!(read(&before.bronze, "email"), some(&["•••", "•••"]));
    assert_eq!(read(&before.bronze, "country"), some(&["GB", "GB"]));
    assert_eq!(before.bronze.pii_cells(), (6, 6));
    assert_eq!(
        (now.bronze_version, now.bronze_operation.as_str()),
        (3, "DELETE")
    );
    assert_eq!(now.time_travel.version, Some(2));
    assert_eq!(
        now.time_travel.total_rows, 4,
        "v2 reads the rewritten files"
    );
    assert!(now.time_travel.rows.is_empty());
    assert!(
        now.expired_versions > 0,
        "older silver and gold snapshots expired"
    );
    assert_eq!(before.expired_versions, 0);
    assert_eq!((before.landed_files, now.landed_files), (2, 0));
    assert!(now.replay.rows.is_empty(), "gold rebuilt without U-2");
    assert_eq!(now.replay.total_rows, 3);
    assert_eq!(now.replay_revenue, "377.40");
    assert!(view.findings[0].contains("6 rows before, 4 after; the DELETE is version 3"));
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn no_key_left_in_the_store_opens_a_shredded_customer() {
    let orders = orders().expect("bundled orders");
    let mut outside = OutsideLake::default();
    let ids = SeededIds::new(7);
    let files = landed_files(PiiMethod::CryptoShred, &orders, &mut outside, &ids).expect("files");
    assert_eq!(
        files.iter().map(|(f, _)| f.as_str()).collect::<Vec<_>>(),
        ["orders_2024-03-01.jsonl", "orders_2024-03-02.jsonl"]
    );
    let text: String = files
        .iter()
        .map(|(_, b)| String::from_utf8_lossy(b).to_string())
        .collect();
    assert!(!text.contains("Ben Miller") && !text.contains("example.org"));
    let cells: Vec<(String, String)> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|r| r["user_id"] == "U-2")
        .flat_map(|r| {
            PII_FIELDS
                .iter()
                .map(|f| {
                    (
                        f.to_string(),
                        r[*f].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(cells.len(), 6);
    assert_eq!(
        outside.keys.decrypt("U-2", "name", &cells[0].1).as_deref(),
        Ok("Ben Miller")
    );
    assert!(outside.keys.shred("U-2"));
    for (field, cell) in &cells {
        assert_eq!(
            outside.keys.decrypt("U-2", field, cell),
            Err(Unreadable::NoKey("U-2".into()))
        );
        for other in ["U-1", "U-3", "U-4"] {
            assert_eq!(
                outside.keys.decrypt_with_key_of(other, "U-2", field, cell),
                Err(Unreadable::Authentication),
                "{other}'s key"
            );
        }
    }
    assert_eq!(outside.keys.len(), 3);
}

#[wasm_bindgen_test(unsupported = tokio::test)]
async fn a_reset_brings_the_customer_back_and_the_session_never_changes() {
    let mut p = playground();
    p.load_example("landing_retry", Lang::Ru)
        .await
        .expect("scenario");
    let Response::Snapshot(session) = p.handle(Request::Snapshot).await else {
        panic!("snapshot")
    };
    let forget = Request::PiiForget {
        customer: "U-1".into(),
        method: None,
    };
    assert!(
        !forget.changes_state(),
        "the lab's lakes are not the session"
    );
    let v = pii(&mut p, forget).await;
    assert!(v.methods.iter().all(|m| m.forgotten && m.error.is_none()));
    let shred = method(&v, PiiMethod::CryptoShred);
    assert!(
        shred.findings[1].contains("расшифровываются 0 из 6: ключ удалён"),
        "{:?}",
        shred.findings
    );
    // Another customer is untouched by U-1's forget.
    let other = pii(
        &mut p,
        Request::PiiLab {
            customer: Some("U-3".into()),
        },
    )
    .await;
    assert_eq!(
        read(&method(&other, PiiMethod::CryptoShred).now.bronze, "name"),
        some(&["Chloé Dubois"])
    );
    assert_eq!(method(&other, PiiMethod::Delete).now.bronze.total_rows, 4);
    let back = pii(
        &mut p,
        Request::PiiReset {
            customer: Some("U-1".into()),
        },
    )
    .await;
    for m in PiiMethod::ALL {
        let view = method(&back, *m);
        assert!(!view.forgotten);
        assert_eq!(view.now.bronze.total_rows, 6);
        assert_eq!(view.now.bronze.pii_cells(), (6, 6));
    }
    let refused = p
        .handle(Request::PiiForget {
            customer: "U-9' OR 'x'='x".into(),
            method: Some(PiiMethod::Delete),
        })
        .await;
    assert!(
        matches!(&refused, Response::Error { message } if message.starts_with("клиента U-9' OR 'x'='x нет")),
        "{refused:?}"
    );
    let Response::Snapshot(after) = p.handle(Request::Snapshot).await else {
        panic!("snapshot")
    };
    assert_eq!(after.state, session.state);
    assert_eq!(after.history, session.history);
}
