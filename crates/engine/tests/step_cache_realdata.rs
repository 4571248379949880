//! The rule step cache (`silver::step_cache`, issue 12) and the kept check
//! results (`checks::CheckCache`) on real data and realistic edit
//! sequences: two sessions get the same requests, one reusing the last
//! run's rule steps and the results of checks over unchanged tables (the
//! default), the other computing every rule and check on every run
//! (`set_reuse_last_run(false)`). After every
//! request both must give the same response and show the same page: the
//! view (rule stats per rule, rule and run errors, checks, history,
//! batches, values read as UTC) and every silver and gold table's current
//! rows (the quarantine with its rule ids and reasons), exact cells in
//! order. At the end of each scenario every version of every table
//! (bronze too) is compared.
//!
//! Data: the NYC taxi example (266 real trips of July 2020, the TLC zone
//! lookup) plus the bad-input case `rw-27` and a variant batch written
//! here; the flights example's definition over the first 1,100 flights of
//! its gzipped download and the lookup rows they meet; the bad-input cases
//! `rw-01`, `rw-13`, `rw-23`, `rw-29`, `rw-33`, `rw-39`, `rw-45` (copied
//! here as literals) with a silver lookup, a merged table, gold and checks.
//!
//! Edits: filters switched off and on repeatedly, normalizations' and
//! enrichments' expressions changed and reverted, actions switched between
//! warn / drop / fail, failing expectations added, rules with `now()` and
//! windows, lookups' `on` changed, files ingested between edits (new
//! batches), a batch read again with other options, duplicate lookup keys
//! arriving (first only for rows a filter drops, then for kept rows),
//! bronze rows forgotten, rules deleted, renamed, reordered, or of another
//! kind, rules that fail at run time on some rows (CAST of a bad string,
//! division by zero), an incremental run between full ones, a restore, a
//! replay, the language and anti-patterns switched.
//!
//! `STEP_CACHE_VERBOSE=1` prints each request's outcome and timing.
#![cfg(not(target_arch = "wasm32"))]

#[path = "support/page.rs"]
#[allow(dead_code)]
mod shown;

use medallion_engine::api::{Request, Response};
use serde_json::{json, Value};
use shown::Tab;

// ---------------------------------------------------------------------------
// Two sessions, one reusing rule steps.

struct Twin {
    name: &'static str,
    reuse: Tab,
    compute: Tab,
    at: i64,
    done: Vec<String>,
    /// The rule registry of each silver table as edited so far.
    rules: std::collections::BTreeMap<String, Vec<Value>>,
    /// Requests after which the reusing side's last run had kept check
    /// results (the same run counts again after a request that runs nothing).
    checks_kept: usize,
}

fn request(v: Value) -> Request {
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("request {v}: {e}"))
}

fn strip(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.remove("duration_ms");
            m.values_mut().for_each(strip);
        }
        Value::Array(a) => a.iter_mut().for_each(strip),
        _ => {}
    }
}

/// Up to 12 paths where `a` and `b` differ, with both values.
fn diff(a: &Value, b: &Value, path: String, out: &mut Vec<String>) {
    if out.len() >= 12 || a == b {
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                diff(
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                    format!("{path}.{k}"),
                    out,
                );
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                diff(p, q, format!("{path}[{i}]"), out);
            }
        }
        _ => {
            let short = |v: &Value| {
                let s = v.to_string();
                if s.len() > 600 {
                    format!("{}…", &s[..600])
                } else {
                    s
                }
            };
            out.push(format!(
                "{path}:\n    reuse:   {}\n    compute: {}",
                short(a),
                short(b)
            ));
        }
    }
}

impl Twin {
    fn new(name: &'static str) -> Self {
        let reuse = Tab::new();
        let mut compute = Tab::new();
        compute.p.set_reuse_last_run(false);
        Twin {
            name,
            reuse,
            compute,
            at: 0,
            done: vec![],
            rules: Default::default(),
            checks_kept: 0,
        }
    }

    /// The view and the current rows of every silver and gold table
    /// (bronze does not depend on the rules; [`Twin::compare_history`]
    /// compares it with every version).
    async fn page(tab: &mut Tab) -> Value {
        let Response::Snapshot(view) = tab.p.handle(Request::Snapshot).await else {
            panic!("snapshot")
        };
        let mut tables = serde_json::Map::new();
        for t in view.tables.iter().filter(|t| !t.name.is_bronze()) {
            let r = tab
                .p
                .handle(Request::GetTable {
                    table: t.name.clone(),
                    offset: 0,
                    limit: 1_000_000,
                    version: None,
                    corrupt_only: false,
                })
                .await;
            tables.insert(t.name.to_string(), serde_json::to_value(r).unwrap());
        }
        let mut v = json!({ "view": serde_json::to_value(&view).unwrap(), "tables": tables });
        strip(&mut v);
        v
    }

    fn fail(&self, what: &str, a: &Value, b: &Value) -> ! {
        let mut out = vec![];
        diff(a, b, String::new(), &mut out);
        panic!(
            "[{}] reuse on and off differ {what}\nsequence:\n  {}\nfirst differences:\n{}",
            self.name,
            self.done.join("\n  "),
            out.join("\n")
        );
    }

    /// Sends `r` to both sessions (same clock time) and compares the pages.
    async fn send(&mut self, what: impl Into<String>, r: Value) {
        self.at += 10;
        self.done.push(what.into());
        let r = request(r);
        let clock = std::time::Instant::now();
        let mut a =
            serde_json::to_value(Box::pin(self.reuse.send(self.at, r.clone())).await).unwrap();
        let mut b = serde_json::to_value(Box::pin(self.compute.send(self.at, r)).await).unwrap();
        strip(&mut a);
        strip(&mut b);
        if a != b {
            self.fail("in the response", &a, &b);
        }
        let sent = clock.elapsed();
        self.checks_kept += usize::from(self.reuse.p.checks_reused() > 0);
        assert_eq!(self.compute.p.checks_reused(), 0);
        let response = a;
        let (a, b) = (
            Box::pin(Self::page(&mut self.reuse)).await,
            Box::pin(Self::page(&mut self.compute)).await,
        );
        if std::env::var_os("STEP_CACHE_VERBOSE").is_some() {
            eprintln!(
                "[{}] {} -> {} ({sent:?} + {:?})",
                self.name,
                self.done.last().unwrap(),
                summary(&response),
                clock.elapsed() - sent
            );
        }
        if a != b {
            self.fail("in the page", &a, &b);
        }
    }

    /// Every version of every table (the history) on both sides.
    async fn compare_history(&mut self) {
        // Requests after which the reusing side's last run kept check results.
        eprintln!("[{}] requests after which check results were kept: {}", self.name, self.checks_kept);
        assert!(self.checks_kept > 0, "[{}] no check result was ever kept", self.name);
        let started = std::time::Instant::now();
        let mut a = shown::page(&mut self.reuse.p).await;
        let mut b = shown::page(&mut self.compute.p).await;
        strip(&mut a);
        strip(&mut b);
        if a != b {
            self.fail("in the history", &a, &b);
        }
        eprintln!(
            "[{}] history compared in {:?}",
            self.name,
            started.elapsed()
        );
    }

    /// Loads the rules of every silver table from the reusing side's definition.
    fn read_rules(&mut self) {
        for s in &self.reuse.p.definition().silver {
            let rules = serde_json::to_value(&s.rules.rules).unwrap();
            self.rules.insert(
                s.name.clone(),
                rules.as_array().cloned().unwrap_or_default(),
            );
        }
    }

    fn rule_mut(&mut self, table: &str, id: &str) -> &mut Value {
        self.rules
            .get_mut(table)
            .and_then(|r| r.iter_mut().find(|r| r["id"] == id))
            .unwrap_or_else(|| panic!("no rule {id} in {table}"))
    }

    async fn push_rules(&mut self, table: &str, what: String) {
        let rules = self.rules[table].clone();
        Box::pin(self.send(
            what,
            json!({"type": "set_rules", "silver_table": table, "rules": rules}),
        ))
        .await;
    }

    async fn toggle(&mut self, table: &str, id: &str) {
        let r = self.rule_mut(table, id);
        let on = r["enabled"].as_bool().unwrap_or(false);
        r["enabled"] = json!(!on);
        self.push_rules(table, format!("{table}: {id} enabled={}", !on))
            .await;
    }

    /// Switches rule `id` on or off if it is not so already.
    async fn enable(&mut self, table: &str, id: &str, on: bool) {
        if self.rule_mut(table, id)["enabled"] != json!(on) {
            self.toggle(table, id).await;
        }
    }

    /// Did the last run succeed?
    fn ok(&self) -> bool {
        self.reuse.p.view().run.ok
    }

    async fn set(&mut self, table: &str, id: &str, field: &str, value: Value) {
        let r = self.rule_mut(table, id);
        r[field] = value.clone();
        self.push_rules(table, format!("{table}: {id}.{field} = {value}"))
            .await;
    }

    async fn set_lookup_on(&mut self, table: &str, id: &str, on: &str) {
        let r = self.rule_mut(table, id);
        r["lookup"]["on"] = json!(on);
        self.push_rules(table, format!("{table}: {id}.lookup.on = {on:?}"))
            .await;
    }

    async fn add(&mut self, table: &str, rule: Value) {
        let what = format!("{table}: add {rule}");
        self.rules.get_mut(table).expect("table").push(rule);
        self.push_rules(table, what).await;
    }

    async fn remove(&mut self, table: &str, id: &str) {
        self.rules
            .get_mut(table)
            .expect("table")
            .retain(|r| r["id"] != id);
        self.push_rules(table, format!("{table}: delete {id}"))
            .await;
    }

    async fn ingest(&mut self, table: &str, file: &str, bytes: &[u8], options: Value) {
        self.send(
            format!("ingest {file} ({} bytes) into bronze.{table}", bytes.len()),
            json!({"type": "ingest", "table": table, "file_name": file,
                   "bytes": bytes, "options": options}),
        )
        .await;
    }

    /// The id of the last batch of bronze table `table`.
    fn last_batch(&self, table: &str) -> String {
        self.reuse
            .p
            .view()
            .batches
            .iter()
            .rev()
            .find(|b| b.table == table)
            .map(|b| b.batch_id.clone())
            .expect("a batch")
    }

    /// The silver view as JSON: what the assertions below look at by name.
    fn view(&self) -> Value {
        serde_json::to_value(self.reuse.p.view()).unwrap()
    }
}

/// A response in a line: an error, or a view's run errors and rule errors.
fn summary(r: &Value) -> String {
    if r["type"] != "snapshot" {
        let s = r.to_string();
        return s.chars().take(300).collect();
    }
    let view = r;
    let mut out = vec![format!(
        "ok={} errors={}",
        view["run"]["ok"], view["run"]["errors"]
    )];
    for s in view["silver"].as_array().into_iter().flatten() {
        for r in s["rules"].as_array().into_iter().flatten() {
            if !r["error"].is_null() {
                let e: String = r["error"]
                    .as_str()
                    .unwrap_or("")
                    .chars()
                    .take(160)
                    .collect();
                out.push(format!("{} {}: {e}", s["name"], r["rule"]["id"]));
            }
        }
    }
    out.join(" | ")
}

fn rule(id: &str, kind: &str, column: &str, expression: &str) -> Value {
    json!({"id": id, "kind": kind, "column": column, "expression": expression,
           "enabled": true, "rationale": ""})
}

/// Runs a scenario on a thread with a large stack (a debug build's
/// DataFusion plans nest deeply), and reports how long it took.
fn run<F>(name: &'static str, f: impl FnOnce() -> F + Send + 'static)
where
    F: std::future::Future<Output = ()>,
{
    let started = std::time::Instant::now();
    let done = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || futures::executor::block_on(Box::pin(f())))
        .expect("thread")
        .join();
    eprintln!("{name}: took {:?}", started.elapsed());
    if let Err(panic) = done {
        std::panic::resume_unwind(panic);
    }
}

/// The rule stats of silver table `table` in the last run: `id failed/checked` (`ERR`: the rule's error).
fn stats(v: &Value, table: &str) -> Vec<String> {
    v["silver"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["name"] == format!("silver.{table}"))
        .flat_map(|s| s["rules"].as_array().cloned().unwrap_or_default())
        .map(|r| {
            format!(
                "{} {}/{}{}",
                r["rule"]["id"].as_str().unwrap_or("?"),
                r["stat"]["failed"],
                r["stat"]["checked"],
                if r["error"].is_null() { "" } else { " ERR" }
            )
        })
        .collect()
}

// ---------------------------------------------------------------------------
// NYC taxi: the example, then edits and new batches.

/// 30 real trips of the sample with what real feeds send: a fare that is
/// no number, pickups with an offset (`+02:00`, `Z`), an empty passenger
/// count, a zone the lookup lacks (999), a zero-distance charged trip, a
/// negative fare.
fn taxi_variant() -> Vec<u8> {
    let text = std::str::from_utf8(medallion_engine::examples::TAXI_TRIPS_CSV).unwrap();
    let mut lines: Vec<String> = text.lines().take(31).map(String::from).collect();
    let edit = |line: &mut String, col: usize, value: &str| {
        let mut cells: Vec<String> = line.split(',').map(String::from).collect();
        cells[col] = value.to_string();
        *line = cells.join(",");
    };
    // Columns: 0 VendorID, 1 pickup, 2 dropoff, 3 passenger_count, 4 trip_distance,
    // 7 PULocationID, 8 DOLocationID, 9 payment_type, 10 fare_amount, 16 total_amount.
    edit(&mut lines[2], 10, "abc");
    let with_offset = |s: &str, o: &str| format!("{}{o}", s.replace(' ', "T"));
    let p3 = lines[3].split(',').nth(1).unwrap().to_string();
    edit(&mut lines[3], 1, &with_offset(&p3, "+02:00"));
    let p4 = lines[4].split(',').nth(1).unwrap().to_string();
    edit(&mut lines[4], 1, &with_offset(&p4, "Z"));
    edit(&mut lines[5], 3, "");
    edit(&mut lines[6], 7, "999");
    edit(&mut lines[7], 4, "0");
    edit(&mut lines[8], 10, "-7.5");
    edit(&mut lines[9], 3, "0");
    edit(&mut lines[10], 1, "2020-07-31 23:59:59");
    edit(&mut lines[11], 1, "2020-08-01 00:00:00");
    let mut s = lines.join("\n");
    s.push('\n');
    s.into_bytes()
}

#[test]
fn taxi_rule_edits_and_new_batches_show_the_same_with_and_without_reuse() {
    run("taxi", || async {
        let mut t = Twin::new("taxi");
        t.send(
            "load nyc_taxi_silver",
            json!({"type": "load_example", "example": "nyc_taxi_silver", "lang": "en"}),
        )
        .await;
        t.read_rules();
        let s = "nyc_taxi_yellow";
        assert!(t.rules.contains_key(s), "{:?}", t.rules.keys());

        // Filters off and on, repeatedly (F4 is off in the example).
        for id in ["F4", "F1", "F4", "F1"] {
            t.toggle(s, id).await;
        }
        // F3's parameters: every trip outside the period, then back.
        let params = t.rule_mut(s, "F3")["params"].clone();
        let mut wide = params.clone();
        wide[0]["value"] = json!("2024-01-01");
        wide[1]["value"] = json!("2025-01-01");
        t.set(s, "F3", "params", wide).await;
        let mut quoted = params.clone();
        quoted[0]["value"] = json!("2020-07-01'");
        t.set(s, "F3", "params", quoted).await; // refused: a quote in a parameter
        t.set(s, "F3", "params", params).await;

        // A normalization's expression changed (filters toggled meanwhile), and back.
        t.set(
            s,
            "N3",
            "expression",
            json!("coalesce(congestion_surcharge, 0.0) * 2"),
        )
        .await;
        t.toggle(s, "F1").await;
        t.set(
            s,
            "N3",
            "expression",
            json!("coalesce(congestion_surcharge, 0.0)"),
        )
        .await;
        t.toggle(s, "F1").await;
        // N1 (declared INT) to values that are not whole for some rows; its action switched.
        t.set(
            s,
            "N1",
            "expression",
            json!("coalesce(passenger_count, 0) / 2"),
        )
        .await;
        for a in ["warn", "fail", "drop"] {
            t.set(s, "N1", "action", json!(a)).await;
        }
        t.toggle(s, "F4").await;
        t.set(s, "N1", "expression", json!("coalesce(passenger_count, 0)"))
            .await;

        // An enrichment changed and reverted; a lookup's `on` changed and reverted.
        t.set_lookup_on(s, "E2", "DOLocationID = pu.locationid")
            .await;
        t.toggle(s, "F2").await;
        t.set_lookup_on(s, "E2", "PULocationID = pu.locationid")
            .await;
        t.toggle(s, "F2").await;
        t.set_lookup_on(
            s,
            "E3",
            "DOLocationID = dz.locationid AND dz.borough <> 'Manhattan'",
        )
        .await;
        t.set(s, "E3", "action", json!("drop")).await;
        t.set_lookup_on(s, "E3", "DOLocationID = dz.locationid")
            .await;
        t.set(s, "E3", "action", json!("warn")).await;
        t.toggle(s, "E4").await;

        // Expectations failing on some rows, every action.
        t.add(s, rule("X1", "expect", "tip_amount", "tip_amount > 0"))
            .await;
        for a in ["fail", "warn"] {
            t.set(s, "X1", "action", json!(a)).await;
        }
        t.toggle(s, "F1").await;
        t.add(
            s,
            rule(
                "X2",
                "expect",
                "trip_duration_minutes",
                "trip_duration_minutes < 45",
            ),
        )
        .await;
        t.toggle(s, "F1").await;
        t.set(s, "X2", "expression", json!("speed_mph < 30")).await;

        // Run-time errors on some rows: a division by zero, a CAST of a bad string.
        t.add(
            s,
            rule(
                "E5",
                "enrich",
                "fare_per_mile_int",
                "CAST(fare_amount AS BIGINT) / CAST(trip_distance AS BIGINT)",
            ),
        )
        .await;
        for a in ["fail", "warn"] {
            t.set(s, "E5", "action", json!(a)).await;
        }
        t.toggle(s, "F4").await;
        t.add(s, rule("E6", "enrich", "pay_code", "CAST(CASE WHEN payment_type = 1 THEN 'card' ELSE CAST(payment_type AS VARCHAR) END AS INT)")).await;
        t.set(s, "E6", "action", json!("drop")).await;
        t.toggle(s, "F1").await;
        t.set(s, "E6", "action", json!("warn")).await;
        t.toggle(s, "F1").await;
        // A normalization to TIMESTAMP from text without an offset: read as UTC, counted.
        let mut n6 = rule(
            "N6",
            "normalize",
            "store_and_fwd_flag",
            "CAST(tpep_pickup_datetime AS VARCHAR)",
        );
        n6["type"] = json!("TIMESTAMP");
        t.add(s, n6).await;
        t.toggle(s, "F3").await;
        t.toggle(s, "F3").await;
        t.remove(s, "N6").await;

        // now() and a window: never reused.
        t.add(
            s,
            rule(
                "E7",
                "enrich",
                "when_seen",
                "CASE WHEN tpep_pickup_datetime < now() THEN 'past' ELSE 'future' END",
            ),
        )
        .await;
        t.add(
            s,
            rule(
                "F5",
                "filter",
                "tpep_pickup_datetime",
                "tpep_pickup_datetime > now()",
            ),
        )
        .await;
        t.toggle(s, "F3").await;
        t.add(
            s,
            rule(
                "E8",
                "enrich",
                "trips_from_zone",
                "count(*) OVER (PARTITION BY PULocationID)",
            ),
        )
        .await;
        t.toggle(s, "F3").await;
        let mut x3 = rule(
            "X3",
            "expect",
            "PULocationID",
            "count(*) OVER (PARTITION BY PULocationID) < 12",
        );
        x3["action"] = json!("drop");
        t.add(s, x3).await;
        t.toggle(s, "F1").await;
        t.remove(s, "X3").await;
        t.remove(s, "E8").await;
        t.toggle(s, "F1").await;

        // New batches between edits: the negative-fare pair (rw-27), a variant batch.
        t.ingest(
            "nyc_taxi_yellow",
            "rw-27-tlc-negative-fare-void-pair.csv",
            RW27,
            json!({}),
        )
        .await;
        t.toggle(s, "F1").await;
        t.set(
            s,
            "E1",
            "expression",
            json!("(to_unixtime(tpep_dropoff_datetime) - to_unixtime(tpep_pickup_datetime)) / 60"),
        )
        .await;
        t.toggle(s, "F1").await;
        t.ingest(
            "nyc_taxi_yellow",
            "yellow_variant.csv",
            &taxi_variant(),
            json!({}),
        )
        .await;
        t.toggle(s, "F3").await;
        t.set(s, "N1", "action", json!("warn")).await;
        t.toggle(s, "F3").await;
        // The same file read again with "abc" as NULL: a new batch.
        let variant = t.last_batch("nyc_taxi_yellow");
        t.send(
            "reingest the variant batch with null_tokens [abc]",
            json!({"type": "reingest", "batch_id": variant, "options": {"null_tokens": ["abc"]}}),
        )
        .await;
        t.toggle(s, "F4").await;

        // Lookup keys that are not unique: zone 247 is only the drop-off of
        // a trip the filters drop (and the pickup of a trip F4 drops); zone
        // 45 only of trips F4 drops.
        let dup247 = b"\"locationid\",\"borough\",\"zone\",\"service_zone\"\n247,\"Bronx\",\"West Concourse (again)\",\"Boro Zone\"\n";
        t.ingest("taxi_zone_lookup", "zones_fix_247.csv", dup247, json!({}))
            .await;
        let dup45 = b"\"locationid\",\"borough\",\"zone\",\"service_zone\"\n45,\"Manhattan\",\"Chinatown (again)\",\"Yellow Zone\"\n";
        t.ingest("taxi_zone_lookup", "zones_fix_45.csv", dup45, json!({}))
            .await;
        assert_eq!(t.rule_mut(s, "F4")["enabled"], json!(true));
        t.toggle(s, "F3").await; // the 247 drop-off passes: E3's join is not unique
        t.toggle(s, "F3").await;
        t.toggle(s, "F4").await; // the 45 and 247 pickups pass: E2's join is not unique
        t.toggle(s, "F4").await;
        t.set(s, "E2", "expression", json!("pu.zone, pu.borough"))
            .await;
        t.set(s, "E2", "expression", json!("pu.borough, pu.zone"))
            .await;
        // The duplicates forgotten (bronze rows deleted, full refresh).
        t.send(
            "forget the duplicate zones",
            json!({"type": "forget", "table": "taxi_zone_lookup",
                   "predicate": "raw_payload LIKE '%(again)%'", "reason": "duplicate zones"}),
        )
        .await;
        t.toggle(s, "F4").await;

        // Deleted rules; every filter off, then on.
        t.remove(s, "E3").await;
        t.remove(s, "X1").await;
        for id in ["F1", "F5", "F1", "F5"] {
            t.toggle(s, id).await;
        }

        // An incremental run between full ones.
        t.send(
            "run mode incremental",
            json!({"type": "set_run_mode", "mode": "incremental"}),
        )
        .await;
        t.ingest("nyc_taxi_yellow", "rw-27-again.csv", RW27, json!({}))
            .await;
        t.set(s, "E6", "action", json!("drop")).await;
        t.send(
            "run mode full",
            json!({"type": "set_run_mode", "mode": "full"}),
        )
        .await;
        t.send("full refresh", json!({"type": "run", "full_refresh": true}))
            .await;
        t.toggle(s, "F1").await;
        t.set(s, "E6", "action", json!("warn")).await;
        // A gold edit with the rules unchanged.
        let gold = t.reuse.p.definition().gold[0].clone();
        t.send(
            "gold sql edited",
            json!({"type": "set_gold_sql", "model": gold.name, "sql": gold.sql + " "}),
        )
        .await;

        eprintln!("taxi stats at the end: {:?}", stats(&t.view(), s));
        t.compare_history().await;
        eprintln!("taxi: {} requests compared", t.done.len());
    });
}

const RW27: &[u8] = b"VendorID,tpep_pickup_datetime,tpep_dropoff_datetime,passenger_count,trip_distance,RatecodeID,store_and_fwd_flag,PULocationID,DOLocationID,payment_type,fare_amount,extra,mta_tax,tip_amount,tolls_amount,improvement_surcharge,total_amount,congestion_surcharge
2,2021-03-04 08:00:10,2021-03-04 08:14:40,1,3.10,1,N,140,236,1,12.00,0.5,0.5,3.00,0,0.3,18.80,2.5
2,2021-03-04 09:12:00,2021-03-04 09:30:05,1,5.75,1,N,170,88,4,-19.50,-0.5,-0.5,0,0,-0.3,-23.30,-2.5
2,2021-03-04 09:12:00,2021-03-04 09:30:05,1,5.75,1,N,170,88,2,19.50,0.5,0.5,0,0,0.3,23.30,2.5
1,2021-03-04 10:40:00,2021-03-04 10:41:00,1,0.00,1,N,264,264,3,-998.00,0,0,0,0,0,-998.00,0
";

// ---------------------------------------------------------------------------
// nycflights13: the flights example's definition over slices of its files.

/// Lines of a gzipped download of the flights example (`static/downloads/`):
/// the header and the data lines `keep` accepts, at most `limit` of them.
fn flights_file(name: &str, keep: impl Fn(&str) -> bool, limit: usize) -> Vec<String> {
    use std::io::BufRead;
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../static/downloads/nycflights13/"
    );
    let gz = std::fs::File::open(format!("{path}{name}.csv.gz")).expect("download file");
    let mut lines = std::io::BufReader::new(flate2::read::GzDecoder::new(gz)).lines();
    let mut out = vec![lines.next().expect("header").expect("text")];
    for line in lines {
        let line = line.expect("text");
        if keep(&line) {
            out.push(line);
            if out.len() > limit {
                break;
            }
        }
    }
    out
}

fn csv(lines: &[String]) -> Vec<u8> {
    let mut s = lines.join("\n");
    s.push('\n');
    s.into_bytes()
}

#[test]
fn flights_rule_edits_over_lookups_and_new_batches_show_the_same_with_and_without_reuse() {
    run("flights", || async {
        let mut t = Twin::new("flights");
        let def = medallion_engine::examples::flights::nyc_flights(medallion_engine::Lang::En);
        t.send(
            "load the flights pipeline",
            json!({"type": "load_pipeline", "pipeline": serde_json::to_value(&def).unwrap()}),
        )
        .await;
        t.read_rules();
        let s = "flights";
        let na = json!({"null_tokens": ["NA"]});
        // The first 1,100 flights (January 1-2; 4 cancelled and 7 diverted in
        // the first 900), and the lookups' rows these flights can meet.
        let flights = flights_file("flights", |_| true, 1100);
        let cell = |l: &str, i: usize| l.split(',').nth(i).unwrap_or_default().to_string();
        let tails: std::collections::HashSet<String> =
            flights.iter().map(|l| cell(l, 11)).collect();
        let dests: std::collections::HashSet<String> =
            flights.iter().map(|l| cell(l, 13)).collect();
        let airlines = flights_file("airlines", |_| true, 100);
        let airports = flights_file("airports", |l| dests.contains(&cell(l, 0)), 5000);
        let planes = flights_file("planes", |l| tails.contains(&cell(l, 0)), 5000);
        // Weather of January 1-2 at the three airports.
        let jan = |l: &str| cell(l, 2) == "1" && (cell(l, 3) == "1" || cell(l, 3) == "2");
        let weather = flights_file("weather", jan, 1000);
        t.ingest("airlines", "airlines.csv", &csv(&airlines), na.clone())
            .await;
        t.ingest("airports", "airports.csv", &csv(&airports), na.clone())
            .await;
        t.ingest("planes", "planes.csv", &csv(&planes), na.clone())
            .await;
        t.ingest("weather", "weather.csv", &csv(&weather), na.clone())
            .await;
        t.ingest(
            "flights",
            "flights_1.csv",
            &csv(&flights[..901]),
            na.clone(),
        )
        .await;

        // Filters off and on.
        for id in ["F1", "F2", "F1", "F2"] {
            t.toggle(s, id).await;
        }
        // The two-column weather lookup (a TIMESTAMP key) on, filters toggled.
        t.toggle(s, "E4").await;
        t.toggle(s, "F1").await;
        t.toggle(s, "F2").await;
        // N1 changed: E1's lookup then finds no carrier (warn); reverted.
        t.set(s, "N1", "expression", json!("lower(carrier)")).await;
        t.toggle(s, "F2").await;
        t.set(s, "N1", "expression", json!("upper(trim(carrier))"))
            .await;
        // A lookup's `on` and an enrichment changed and reverted.
        t.set_lookup_on(s, "E1", "lower(carrier) = lower(al.carrier)")
            .await;
        t.set_lookup_on(s, "E1", "carrier = al.carrier").await;
        t.set(s, "E3", "expression", json!("pl.seats * 2")).await;
        t.set(s, "E3", "action", json!("drop")).await;
        t.toggle(s, "F1").await;
        t.set(s, "E3", "expression", json!("pl.seats")).await;
        t.toggle(s, "F1").await;
        t.set(s, "E3", "action", json!("warn")).await;
        // Division by zero (dep_delay 0) and a CAST of a bad string, every action.
        t.add(
            s,
            rule("E6", "enrich", "delay_ratio", "arr_delay / dep_delay"),
        )
        .await;
        for a in ["drop", "fail", "warn"] {
            t.set(s, "E6", "action", json!(a)).await;
        }
        t.add(
            s,
            rule(
                "E7",
                "enrich",
                "tail_digits",
                "CAST(substr(tailnum, 2, 3) AS INT)",
            ),
        )
        .await;
        t.set(s, "E7", "action", json!("drop")).await;
        t.toggle(s, "F2").await;
        t.set(s, "E6", "expression", json!("arr_delay / (dep_delay + 1)"))
            .await;
        t.set(s, "E6", "expression", json!("arr_delay / dep_delay"))
            .await;
        t.toggle(s, "F2").await;
        // A normalization with a declared type that some values do not fit.
        let mut n2 = rule("N2", "normalize", "dep_delay", "dep_delay / 2.0");
        n2["type"] = json!("INT");
        t.add(s, n2).await;
        t.toggle(s, "F1").await;
        t.set(s, "N2", "action", json!("warn")).await;
        t.toggle(s, "F1").await;
        t.remove(s, "N2").await;
        // A failing expectation, every action.
        t.add(s, rule("X1", "expect", "arr_delay", "arr_delay < 60"))
            .await;
        for a in ["fail", "warn", "drop"] {
            t.set(s, "X1", "action", json!(a)).await;
        }
        // A window and now().
        t.add(
            s,
            rule(
                "E8",
                "enrich",
                "flights_of_plane",
                "count(*) OVER (PARTITION BY tailnum)",
            ),
        )
        .await;
        t.toggle(s, "F2").await;
        t.toggle(s, "F2").await;
        t.remove(s, "E8").await;
        t.add(
            s,
            rule(
                "E9",
                "enrich",
                "flown",
                "CASE WHEN time_hour < now() THEN 1 ELSE 0 END",
            ),
        )
        .await;
        t.toggle(s, "F1").await;
        t.toggle(s, "F1").await;

        // Duplicate lookup keys of rows only the filters drop: N31412 (a
        // diverted flight's plane) and TUL (a diverted flight's destination).
        t.enable(s, "F1", true).await;
        t.enable(s, "F2", true).await;
        let n31412: Vec<String> = planes
            .iter()
            .take(1)
            .chain(planes.iter().filter(|l| l.starts_with("N31412,")))
            .cloned()
            .collect();
        assert_eq!(n31412.len(), 2);
        t.ingest("planes", "planes_fix.csv", &csv(&n31412), na.clone())
            .await;
        assert!(t.ok(), "E3's key is not unique only over rows F2 drops");
        let tul: Vec<String> = airports
            .iter()
            .take(1)
            .chain(airports.iter().filter(|l| l.starts_with("TUL,")))
            .cloned()
            .collect();
        assert_eq!(tul.len(), 2);
        t.ingest("airports", "airports_fix.csv", &csv(&tul), na.clone())
            .await;
        assert!(t.ok(), "E2's key is not unique only over rows F2 drops");
        t.set(s, "E5", "expression", json!("arr_delay >= 15")).await;
        t.toggle(s, "E2").await;
        t.toggle(s, "F1").await;
        t.toggle(s, "F2").await; // the diverted flights pass: E3's join is not unique
        assert!(!t.ok());
        t.toggle(s, "E2").await;
        t.toggle(s, "F2").await;
        t.toggle(s, "F1").await;
        assert!(t.ok());
        // The second rows forgotten (the next batch has TUL and N31412 flights that stay).
        for (table, file) in [
            ("airports", "airports_fix.csv"),
            ("planes", "planes_fix.csv"),
        ] {
            t.send(
                format!("forget {file}"),
                json!({"type": "forget", "table": table,
                       "predicate": format!("_source_file = '{file}'"), "reason": "duplicate key"}),
            )
            .await;
        }
        assert!(t.ok());

        // A second batch of flights whose time_hour has no offset (read as
        // UTC), then the same file read with NA as text (INT conversions fail).
        let mut second: Vec<String> = vec![flights[0].clone()];
        second.extend(flights[901..].iter().map(|l| {
            let (head, ts) = l.rsplit_once(',').unwrap();
            format!("{head},{}", ts.trim_end_matches('Z').replace('T', " "))
        }));
        t.ingest("flights", "flights_2_local.csv", &csv(&second), na.clone())
            .await;
        t.toggle(s, "F1").await;
        t.set(s, "E7", "action", json!("warn")).await;
        t.toggle(s, "F1").await;
        let batch = t.last_batch("flights");
        t.send(
            "reingest flights_2 with NA as text",
            json!({"type": "reingest", "batch_id": batch, "options": {"null_tokens": [""]}}),
        )
        .await;
        t.toggle(s, "F1").await;
        t.set(s, "X1", "expression", json!("arr_delay < 90")).await;
        t.toggle(s, "F1").await;

        // Rules deleted.
        t.remove(s, "E3").await;
        t.remove(s, "X1").await;
        t.toggle(s, "F2").await;

        eprintln!("flights stats at the end: {:?}", stats(&t.view(), s));
        t.compare_history().await;
        eprintln!("flights: {} requests compared", t.done.len());
    });
}

// ---------------------------------------------------------------------------
// The bad-input cases of /work/shared/cases (copied here), one silver
// table each, a silver lookup, gold and checks over them.

const RW01: &str = "order_id,customer_id,quantity,unit_price\n1001,C-17,2,4.50\n1002,C-22,three,4.50\n1003,C-17,1,12.00\n";
const RW13: &str = "id,flag_or_count\n1,43200000\n2,true\n3,7\n";
const RW23: &str = "trip_id,pickup_ts\n1,2024-03-01 08:15:00\n2,2024-03-01T08:15:00\n3,1709280900000\n4,03/01/2024 08:15\n5,\n6,2024-02-30 10:00:00\n";
const RW29: &str = "sku,qty\nP-2,1\nP-1,4\nP-2,3\nP-3,2\n";
const RW39: &str = "id,amount\n1,10\n2,ten\n3,30\n4,0\n";
const RW45: &str = "id,ts\nT1,2024-02-01T10:00:00+01:00\nT2,2024-02-01 09:00Z\nT3,2024-02-01 04:00-05:00\nT4,2024-02-01T09:00:00.5+0000\nT5,2024-02-01T09:00:00\n";
const RW33_1: &str = "customer_id,email,tier,updated_at\nC-201,kai.m@example.test,silver,2024-08-01T09:00:00Z\nC-202,lou.n@example.test,gold,2024-08-01T09:00:00Z\nC-203,mia.q@example.test,bronze,2024-08-01T09:00:00Z\n";
const RW33_2: &str = "customer_id,email,tier,updated_at\nC-201,kai.m@example.test,gold,2024-08-02T10:00:00Z\nC-201,kai.m@example.test,platinum,2024-08-02T11:30:00Z\nC-202,lou.n@example.test,gold,2024-08-01T09:00:00Z\nC-202,lou.n@example.test,gold,2024-08-01T09:00:00Z\nC-203,mia.q@example.test,silver,2024-08-02T08:00:00Z\nC-203,mia.q@example.test,gold,2024-08-02T08:00:00Z\nC-204,noa.r@example.test,bronze,2024-08-02T12:00:00Z\n";
const CUSTOMERS: &str = "customer_id,name,tier\nC-17,Ada Lovelace,gold\nC-22,Alan Turing,silver\n";

fn cases_pipeline() -> Value {
    let bronze = |name: &str, cols: &[(&str, &str)]| {
        let columns: Vec<Value> = cols
            .iter()
            .map(|(n, t)| json!({"name": n, "type": t}))
            .collect();
        json!({"name": name, "source_system": "cases", "description": "", "schema": {"columns": columns}})
    };
    let typed = |mut r: Value, ty: &str| {
        r["type"] = json!(ty);
        r
    };
    let off = |mut r: Value| {
        r["enabled"] = json!(false);
        r
    };
    let mut e2 = rule("E2", "enrich", "tier", "c.tier");
    e2["lookup"] =
        json!({"table": "silver.customers", "alias": "c", "on": "customer_id = c.customer_id"});
    let mut x1 = rule(
        "X1",
        "expect",
        "sku",
        "count(*) OVER (PARTITION BY sku) = 1",
    );
    x1["action"] = json!("drop");
    let silver = |name: &str, rules: Vec<Value>| json!({"name": name, "source": name, "description": "", "rules": {"rules": rules}});
    let check = |id: &str, level: &str, kind: Value| {
        let mut c = kind;
        c["id"] = json!(id);
        c["level"] = json!(level);
        c["description"] = json!("");
        c
    };
    json!({
        "title": "bad-input cases",
        "bronze": [
            bronze("customers", &[("customer_id", "STRING"), ("name", "STRING"), ("tier", "STRING")]),
            bronze("orders", &[("order_id", "INT"), ("customer_id", "STRING"), ("quantity", "INT"), ("unit_price", "DECIMAL(10,2)")]),
            bronze("mixed", &[("id", "INT"), ("flag_or_count", "STRING")]),
            bronze("trips", &[("trip_id", "INT"), ("pickup_ts", "STRING")]),
            bronze("iso", &[("id", "STRING"), ("ts", "STRING")]),
            bronze("skus", &[("sku", "STRING"), ("qty", "INT")]),
            bronze("amounts", &[("id", "INT"), ("amount", "STRING")]),
            bronze("members", &[("customer_id", "STRING"), ("email", "STRING"), ("tier", "STRING"), ("updated_at", "TIMESTAMP")]),
        ],
        "silver": [
            silver("customers", vec![rule("N1", "normalize", "name", "upper(name)")]),
            silver("orders", vec![
                off(rule("F1", "filter", "customer_id", "customer_id = 'C-22'")),
                rule("E1", "enrich", "total", "quantity * unit_price"),
                e2,
                rule("X1", "expect", "total", "total > 5"),
            ]),
            silver("mixed", vec![
                off(rule("F1", "filter", "id", "id = 2")),
                typed(rule("N1", "normalize", "flag_or_count", "flag_or_count"), "INT"),
            ]),
            silver("trips", vec![
                off(rule("F1", "filter", "trip_id", "trip_id >= 5")),
                typed(rule("N1", "normalize", "pickup_ts", "pickup_ts"), "TIMESTAMP"),
            ]),
            silver("iso", vec![
                off(rule("F1", "filter", "id", "id = 'T5'")),
                typed(rule("N1", "normalize", "ts", "ts"), "TIMESTAMP"),
            ]),
            silver("skus", vec![rule("N1", "normalize", "qty", "qty * 10"), x1]),
            silver("amounts", vec![
                off(rule("F1", "filter", "id", "id = 2")),
                typed(rule("N1", "normalize", "amount", "CAST(amount AS INT)"), "INT"),
                rule("E1", "enrich", "ratio", "100 / amount"),
            ]),
            {
                "name": "members", "source": "members", "description": "",
                "merge": {"keys": ["customer_id"], "sequence_by": "updated_at", "stored_as": "scd2"},
                "rules": {"rules": [
                    off(rule("F1", "filter", "tier", "tier = 'bronze'")),
                    rule("N1", "normalize", "tier", "upper(tier)"),
                    rule("E1", "enrich", "domain", "split_part(email, '@', 2)"),
                ]}
            },
        ],
        "gold": [
            {"name": "revenue", "description": "",
             "sql": "SELECT customer_id, tier, sum(total) AS revenue, count(*) AS n FROM silver.orders GROUP BY customer_id, tier ORDER BY customer_id"},
            {"name": "ratios", "description": "",
             "sql": "SELECT count(*) AS n, sum(ratio) AS s, min(amount) AS lo FROM silver.amounts"},
            {"name": "times", "description": "",
             "sql": "SELECT t.trip_id, t.pickup_ts, i.id, i.ts FROM silver.trips t FULL JOIN silver.iso i ON t.pickup_ts = i.ts ORDER BY t.trip_id, i.id"}
        ],
        "checks": [
            check("A1", "aggregate", json!({"kind": "reconciliation", "bronze_table": "bronze.orders", "silver_table": "silver.orders"})),
            check("A2", "aggregate", json!({"kind": "reconciliation", "bronze_table": "bronze.amounts", "silver_table": "silver.amounts"})),
            check("R1", "row", json!({"kind": "unique", "table": "silver.orders", "columns": ["order_id"]})),
            check("R2", "row", json!({"kind": "not_null", "table": "silver.amounts", "column": "ratio"})),
            check("R3", "row", json!({"kind": "row_predicate", "table": "silver.trips", "predicate": "pickup_ts IS NOT NULL"})),
            check("S1", "schema", json!({"kind": "timestamp_offsets", "bronze_table": "bronze.iso"})),
            check("R4", "row", json!({"kind": "accepted_values", "table": "silver.members", "column": "tier", "values": ["BRONZE", "SILVER", "GOLD", "PLATINUM"]})),
        ]
    })
}

#[test]
fn the_bad_input_cases_under_rule_edits_show_the_same_with_and_without_reuse() {
    run("cases", || async {
        let mut t = Twin::new("cases");
        t.send(
            "load the cases pipeline",
            json!({"type": "load_pipeline", "pipeline": cases_pipeline()}),
        )
        .await;
        t.read_rules();
        for (table, file, text) in [
            ("customers", "customers.csv", CUSTOMERS),
            ("orders", "rw-01-permissive-malformed-value.csv", RW01),
            ("mixed", "rw-13-mixed-int-bool-column.csv", RW13),
            ("trips", "rw-23-mixed-timestamp-formats.csv", RW23),
            ("iso", "rw-45-iso-offsets.csv", RW45),
            ("skus", "rw-29-window-predicate.csv", RW29),
            ("amounts", "rw-39-runtime-error-one-row.csv", RW39),
            ("members", "rw-33-merge-ties-batch-1.csv", RW33_1),
        ] {
            t.ingest(table, file, text.as_bytes(), json!({})).await;
        }
        assert!(t.ok(), "{:?}", t.reuse.p.view().run);

        // rw-39: the bad CAST and the division by zero, filters and actions.
        let a = "amounts";
        t.toggle(a, "F1").await; // 'ten' dropped by the filter
        t.set(a, "E1", "expression", json!("100 / (amount - 10)"))
            .await; // id 1 divides by zero
        t.toggle(a, "F1").await;
        for act in ["warn", "fail", "drop"] {
            t.set(a, "N1", "action", json!(act)).await;
        }
        t.set(a, "E1", "action", json!("drop")).await;
        t.set(a, "E1", "expression", json!("100 / amount")).await;
        t.toggle(a, "F1").await;
        t.add(a, rule("X1", "expect", "ratio", "ratio < 20")).await;
        t.toggle(a, "F1").await;
        t.ingest(a, "rw-39-again.csv", RW39.as_bytes(), json!({}))
            .await;
        t.set(a, "X1", "action", json!("warn")).await;
        t.toggle(a, "F1").await;
        // E1 renamed (reasons carry the id), its rationale edited, then its kind changed.
        t.set(a, "E1", "id", json!("E1b")).await;
        t.set(a, "E1b", "rationale", json!("ratio to 100")).await;
        t.set(a, "E1b", "id", json!("E1")).await;
        t.set(a, "X1", "kind", json!("filter")).await;
        t.set(a, "X1", "kind", json!("expect")).await;
        let n1 = t.rule_mut(a, "N1").clone();
        t.remove(a, "N1").await; // E1 on text: the rule's error, the table not refreshed
        t.toggle(a, "F1").await;
        t.add(a, n1).await; // back, last in the registry (normalizations still run first)
        assert!(t.ok(), "{:?}", t.reuse.p.view().run);

        // rw-13: an INT normalization of a column holding `true`.
        let m = "mixed";
        t.toggle(m, "F1").await;
        for act in ["fail", "warn"] {
            t.set(m, "N1", "action", json!(act)).await;
        }
        t.toggle(m, "F1").await;

        // rw-23 / rw-45: TIMESTAMP normalizations, values read as UTC counted.
        t.toggle("trips", "F1").await;
        t.toggle("iso", "F1").await;
        t.toggle("trips", "F1").await;
        t.set(
            "trips",
            "N1",
            "expression",
            json!("replace(pickup_ts, 'T', ' ')"),
        )
        .await;
        t.toggle("trips", "F1").await;
        t.set("trips", "N1", "action", json!("warn")).await;
        t.set("iso", "N1", "expression", json!("concat(ts, '')"))
            .await;
        t.set("iso", "N1", "type", json!("DATE")).await;
        t.toggle("iso", "F1").await;
        t.set("trips", "N1", "expression", json!("pickup_ts")).await;
        t.toggle("trips", "F1").await;

        // rw-29: a window expectation and filter around a row-local normalization.
        let k = "skus";
        t.set(k, "N1", "expression", json!("qty * 100")).await;
        t.add(
            k,
            rule(
                "F1",
                "filter",
                "sku",
                "count(*) OVER (PARTITION BY sku) > 1",
            ),
        )
        .await;
        t.toggle(k, "F1").await;
        t.add(
            k,
            rule(
                "E1",
                "enrich",
                "rank_in_sku",
                "row_number() OVER (PARTITION BY sku ORDER BY qty)",
            ),
        )
        .await;
        t.remove(k, "E1").await;

        // rw-01 with a silver lookup: the lookup's own rules edited, a
        // duplicate customer arriving, the filter around it.
        let o = "orders";
        // More orders: C-22 (whose only rw-01 row does not type), a
        // customer the lookup lacks, a NULL quantity.
        let more = "order_id,customer_id,quantity,unit_price\n1004,C-22,3,2.00\n1005,C-31,1,9.99\n1006,C-17,,3.00\n";
        t.ingest(o, "orders-2.csv", more.as_bytes(), json!({}))
            .await;
        t.toggle(o, "F1").await;
        t.set("customers", "N1", "expression", json!("lower(name)"))
            .await;
        t.toggle(o, "F1").await;
        t.set("customers", "N1", "expression", json!("upper(name)"))
            .await;
        let dup = "customer_id,name,tier\nC-22,Alan M. Turing,platinum\n";
        t.ingest("customers", "customers_fix.csv", dup.as_bytes(), json!({}))
            .await;
        assert!(!t.ok(), "C-22 twice in silver.customers");
        t.toggle(o, "F1").await; // C-22 dropped: the lookup is unique over the rest
        assert!(t.ok(), "{:?}", t.reuse.p.view().run);
        t.set(o, "X1", "expression", json!("total > 10")).await;
        t.set(o, "X1", "action", json!("fail")).await;
        t.set(o, "X1", "action", json!("warn")).await;
        // The enrichments reordered in the registry (E2 before E1), and back.
        let rules = t.rules[o].clone();
        let order = |ids: [&str; 4]| -> Vec<Value> {
            ids.iter()
                .map(|id| rules.iter().find(|r| r["id"] == *id).unwrap().clone())
                .collect()
        };
        t.rules.insert(o.into(), order(["F1", "E2", "X1", "E1"]));
        t.push_rules(o, "orders: E2 moved before E1".into()).await;
        t.rules.insert(o.into(), order(["F1", "E1", "E2", "X1"]));
        t.push_rules(o, "orders: E1 moved back before E2".into())
            .await;
        t.set_lookup_on(o, "E2", "upper(customer_id) = c.customer_id")
            .await;
        t.toggle(o, "F1").await;
        t.set_lookup_on(o, "E2", "customer_id = c.customer_id")
            .await;
        t.toggle(o, "F1").await;
        t.add(
            "customers",
            rule("F1", "filter", "name", "name LIKE '%M.%'"),
        )
        .await; // the duplicate leaves silver.customers
        t.toggle(o, "F1").await;
        t.ingest(o, "rw-01-again.csv", RW01.as_bytes(), json!({}))
            .await;
        t.set(o, "E1", "expression", json!("quantity * unit_price * 2"))
            .await;
        t.remove(o, "E2").await; // gold.revenue reads its column: the gold model fails
        t.send(
            "gold.revenue without tier",
            json!({"type": "set_gold_sql", "model": "revenue",
                   "sql": "SELECT customer_id, sum(total) AS revenue, count(*) AS n FROM silver.orders GROUP BY customer_id ORDER BY customer_id"}),
        )
        .await;
        assert!(t.ok(), "{:?}", t.reuse.p.view().run);
        t.toggle("customers", "F1").await;

        // rw-33: a merged table (SCD2, ties in a batch) under rule edits;
        // the language switched, a restore, a replay, INSERT INTO instead of MERGE.
        let b = "members";
        t.toggle(b, "F1").await;
        t.ingest(
            b,
            "rw-33-merge-ties-batch-2.csv",
            RW33_2.as_bytes(),
            json!({}),
        )
        .await;
        t.toggle(b, "F1").await;
        t.set(b, "N1", "expression", json!("lower(tier)")).await; // R4 fails
        t.send("language ru", json!({"type": "set_lang", "lang": "ru"}))
            .await;
        t.set(b, "N1", "expression", json!("upper(tier)")).await;
        t.set(b, "E1", "expression", json!("split_part(email, '.', 1)"))
            .await;
        t.toggle(b, "F1").await;
        t.send("language en", json!({"type": "set_lang", "lang": "en"}))
            .await;
        t.send(
            "restore silver.orders to version 2",
            json!({"type": "restore", "table": "silver.orders", "version": 2}),
        )
        .await;
        t.toggle(b, "F1").await;
        t.send("replay", json!({"type": "replay"})).await;
        t.set(b, "E1", "expression", json!("split_part(email, '@', 2)"))
            .await;
        t.send(
            "anti-pattern: INSERT INTO members",
            json!({"type": "set_anti_patterns", "anti_patterns": {"insert_into": ["members"]}}),
        )
        .await;
        t.toggle(b, "F1").await;
        t.send(
            "anti-patterns off, monolithic silver on",
            json!({"type": "set_anti_patterns", "anti_patterns": {"monolithic_silver": true}}),
        )
        .await;
        t.set("amounts", "N1", "action", json!("fail")).await; // every silver table stops
        t.toggle(b, "F1").await;
        t.set("amounts", "N1", "action", json!("drop")).await;
        t.toggle(b, "F1").await;

        t.compare_history().await;
        eprintln!("cases: {} requests compared", t.done.len());
    });
}
