//! The right to be forgotten three ways, side by side (seed
//! `000_87b8dd7200a8cd99.txt` §7): three throw-away lakes, one per
//! [`PiiMethod`], each a full bronze → silver → gold pipeline
//! ([`crate::pii::definition`]) over the same bundled orders, landed as
//! the method's stream would land them ([`crate::pii::landed_files`]).
//!
//! ```text
//!  orders.csv ─┬─ tokenize ──► lake 1: bronze holds tok_…     vault (outside): tok_… → value
//!              ├─ encrypt ───► lake 2: bronze holds enc:…     key store (outside): user → AES-256 key
//!              └─ as is ─────► lake 3: bronze holds values    (nothing outside)
//!  forget U-2:  1. delete the vault entries   2. delete the key   3. DELETE + expire (playground/forget.rs)
//! ```
//!
//! For a customer, each lake shows ([`PiiFacts`]) what bronze holds (stored
//! and read), its row count, version and SHA-256 (rewritten or not), time
//! travel to the version that was newest before the forget, the customer's
//! row of gold after a replay from bronze, and what outside the lake still
//! holds the data. The lakes live in the playground's memory only: never
//! saved, not part of the session; their ids and clocks are fixed, so the
//! lesson (and its tests) repeat exactly.

use datafusion::arrow::array::{Array, Decimal128Array, StringArray};
use datafusion::arrow::util::display::array_value_to_string;
use sha2::{Digest, Sha256};

use crate::api::tr;
use crate::bronze::IngestOptions;
use crate::env::{FixedClock, SeededIds};
use crate::pii::{
    customers, definition, landed_files, orders, read_cell, Order, OutsideLake, BRONZE_TABLE,
    GOLD_COUNTRIES, GOLD_CUSTOMERS, PII_FIELDS,
};
use medallion_protocol::{
    PiiCell, PiiCustomer, PiiFacts, PiiMethod, PiiMethodView, PiiTable, PiiView,
};

use super::*;

/// The lakes' clock starts at the first order date, 2024-03-01 09:00 UTC.
const LAKE_START_MICROS: i64 = 1_709_283_600_000_000;
/// Seed of each lake's batch and event ids.
const LAKE_SEED: u128 = 0x9f1_0c0_a11_u128;
/// Seed of the stream's tokens, keys and nonces (one generator per method).
const STREAM_SEED: u128 = 0x7e5_5ea_1ed_u128;

/// The PII lab: the bundled orders and one lake per method.
pub struct PiiLab {
    orders: Vec<Order>,
    lakes: Vec<MethodLake>,
}

/// One method's lake, what it keeps outside the lake, and who was forgotten.
struct MethodLake {
    method: PiiMethod,
    /// The lake, or why it could not be built.
    lake: std::result::Result<Box<Playground>, String>,
    outside: OutsideLake,
    /// Customers forgotten since the last reset: the facts just before, and
    /// bronze's newest version then.
    forgotten: BTreeMap<String, (PiiFacts, u64)>,
    /// Why the last forget failed, if it did.
    error: Option<String>,
}

impl MethodLake {
    async fn build(method: PiiMethod, orders: &[Order], lang: Lang) -> Self {
        let mut outside = OutsideLake::default();
        let ids = SeededIds::new(STREAM_SEED + method as u128);
        let built = async {
            let files = landed_files(method, orders, &mut outside, &ids)?;
            let mut lake = Box::new(Playground::with_env(
                Arc::new(FixedClock::new(LAKE_START_MICROS)),
                Arc::new(SeededIds::new(LAKE_SEED)),
            )?);
            lake.lang = lang;
            Box::pin(lake.load_pipeline(definition(lang))).await?;
            for (name, bytes) in files {
                Box::pin(lake.ingest(BRONZE_TABLE, &name, &bytes, &IngestOptions::default()))
                    .await?;
                if !lake.run_info.ok {
                    return Err(EngineError::Internal(lake.run_info.errors.join("; ")));
                }
            }
            Ok::<_, EngineError>(lake)
        }
        .await;
        MethodLake {
            method,
            lake: built.map_err(|e| e.to_string()),
            outside,
            forgotten: BTreeMap::new(),
            error: None,
        }
    }
}

impl PiiLab {
    async fn build(lang: Lang) -> Result<Self> {
        let orders = orders()?;
        let mut lakes = Vec::new();
        for m in PiiMethod::ALL {
            lakes.push(Box::pin(MethodLake::build(*m, &orders, lang)).await);
        }
        Ok(PiiLab { orders, lakes })
    }

    /// `customer` if the bundled data has it; `None`: the first customer.
    fn customer(&self, customer: Option<&str>, lang: Lang) -> Result<String> {
        let all = customers(&self.orders);
        match customer {
            None => all
                .first()
                .map(|(u, _)| u.clone())
                .ok_or_else(|| EngineError::Internal("the bundled orders are empty".into())),
            Some(c) if all.iter().any(|(u, _)| u == c) => Ok(c.to_string()),
            Some(c) => {
                let known = all
                    .iter()
                    .map(|(u, _)| u.as_str())
                    .collect::<Vec<_>>()
                    .join(", ");
                Err(EngineError::Request(tr(
                    lang,
                    format!("there is no customer {c}; the bundled orders have {known}"),
                    format!("клиента {c} нет; в заказах есть {known}"),
                )))
            }
        }
    }
}

/// The Russian word for `n` things: `one` (1, 21), `few` (2–4, 22–24), `many`.
fn ru_plural(n: usize, one: &'static str, few: &'static str, many: &'static str) -> &'static str {
    match (n % 10, n % 100) {
        (1, r) if r != 11 => one,
        (2..=4, r) if !(12..=14).contains(&r) => few,
        _ => many,
    }
}

impl Playground {
    /// Builds the PII lab when it is not there yet (or was reset).
    async fn pii_lab(&mut self) -> Result<&mut PiiLab> {
        if self.pii.is_none() {
            let lab = Box::pin(PiiLab::build(self.lang)).await?;
            self.pii = Some(Box::new(lab));
        }
        self.pii
            .as_deref_mut()
            .ok_or_else(|| EngineError::Internal("the PII lab is missing".into()))
    }

    /// [`crate::api::Request::PiiLab`]: the three lakes for `customer`.
    pub async fn pii_view(&mut self, customer: Option<&str>) -> Result<PiiView> {
        let lang = self.lang;
        let lab = self.pii_lab().await?;
        let customer = lab.customer(customer, lang)?;
        Box::pin(view(lab, &customer, lang)).await
    }

    /// [`crate::api::Request::PiiForget`]: forgets `customer` under `method`
    /// (`None`: all three), then shows them. A method under which the
    /// customer is already forgotten changes nothing.
    pub async fn pii_forget(
        &mut self,
        customer: &str,
        method: Option<PiiMethod>,
    ) -> Result<PiiView> {
        let lang = self.lang;
        let lab = self.pii_lab().await?;
        let customer = lab.customer(Some(customer), lang)?;
        for m in lab.lakes.iter_mut() {
            if method.is_some_and(|x| x != m.method) || m.forgotten.contains_key(&customer) {
                continue;
            }
            m.error = None;
            let outcome = Box::pin(forget_in(m, &customer, lang)).await;
            if let Err(e) = outcome {
                m.error = Some(e.to_string());
            }
        }
        Box::pin(view(lab, &customer, lang)).await
    }

    /// [`crate::api::Request::PiiReset`]: the three lakes built again from
    /// the bundled orders (every customer back), then `customer` shown.
    pub async fn pii_reset(&mut self, customer: Option<&str>) -> Result<PiiView> {
        self.pii = None;
        Box::pin(self.pii_view(customer)).await
    }
}

/// Forgets `customer` in `m`: the facts before are kept for the comparison.
async fn forget_in(m: &mut MethodLake, customer: &str, lang: Lang) -> Result<()> {
    let lake = m
        .lake
        .as_deref_mut()
        .map_err(|e| EngineError::Request(e.clone()))?;
    let version = bronze_version(lake);
    let before = Box::pin(facts(lake, &m.outside, m.method, customer, version)).await?;
    match m.method {
        PiiMethod::Tokenize => {
            m.outside.vault.forget(customer);
        }
        PiiMethod::CryptoShred => {
            m.outside.keys.shred(customer);
        }
        PiiMethod::Delete => {
            // The customer ids are the bundled data's (checked by the
            // caller), so the condition is never built from free text.
            let predicate = format!("json_get_str(raw_payload, 'user_id') = '{customer}'");
            let reason = tr(
                lang,
                format!("GDPR art. 17 / 152-FZ request of {customer}"),
                format!("запрос {customer} по GDPR ст. 17 / ФЗ-152"),
            );
            Box::pin(lake.forget(BRONZE_TABLE, &predicate, &reason, None, None)).await?;
        }
    }
    let mut before = before;
    redact(&mut before, m.method);
    m.forgotten.insert(customer.to_string(), (before, version));
    Ok(())
}

/// What a forgotten customer's personal cells read as in the facts kept
/// from before the forget: the comparison keeps their number, not them.
pub const REDACTED: &str = "•••";

/// The facts kept from before `customer` was forgotten, with every
/// personal value they read replaced by [`REDACTED`] (and, for the
/// physical DELETE, the stored plain values too; tokens and ciphertext
/// stay, they are what bronze holds): keeping them to show would keep
/// what the request asked to forget.
fn redact(facts: &mut PiiFacts, method: PiiMethod) {
    for table in [&mut facts.bronze, &mut facts.time_travel, &mut facts.replay] {
        let pii = table.pii.clone();
        for row in &mut table.rows {
            for (cell, personal) in row.iter_mut().zip(&pii) {
                if !*personal {
                    continue;
                }
                if cell.read.is_some() {
                    cell.read = Some(REDACTED.into());
                }
                if method == PiiMethod::Delete && cell.stored.is_some() {
                    cell.stored = Some(REDACTED.into());
                }
            }
        }
    }
}

/// Bronze's newest version in `lake`.
fn bronze_version(lake: &Playground) -> u64 {
    lake.history
        .current(&TableName::bronze(BRONZE_TABLE))
        .unwrap_or_default()
}

/// The comparison for `customer`.
async fn view(lab: &PiiLab, customer: &str, lang: Lang) -> Result<PiiView> {
    let mut methods = Vec::new();
    for m in &lab.lakes {
        let forgotten = m.forgotten.get(customer);
        let (now, error) = match &m.lake {
            Err(e) => (PiiFacts::default(), Some(e.clone())),
            Ok(lake) => {
                let version = forgotten.map_or_else(|| bronze_version(lake), |(_, v)| *v);
                match Box::pin(facts(lake, &m.outside, m.method, customer, version)).await {
                    Ok(f) => (f, m.error.clone()),
                    Err(e) => (PiiFacts::default(), Some(e.to_string())),
                }
            }
        };
        let before = forgotten.map(|(f, _)| f.clone());
        methods.push(PiiMethodView {
            method: m.method,
            forgotten: forgotten.is_some(),
            findings: findings(m.method, customer, before.as_ref(), &now, lang),
            before,
            now,
            error,
        });
    }
    Ok(PiiView {
        customers: customers(&lab.orders)
            .into_iter()
            .map(|(user_id, orders)| PiiCustomer { user_id, orders })
            .collect(),
        customer: customer.to_string(),
        fields: PII_FIELDS.iter().map(|f| f.to_string()).collect(),
        methods,
    })
}

/// Bronze's columns as the comparison shows them (`user_id` is the customer).
const BRONZE_COLUMNS: &[&str] = &[
    "order_id",
    "name",
    "email",
    "phone",
    "country",
    "order_date",
    "amount",
];

/// `customer`'s rows of raw bronze `rows` (their `raw_payload`), each
/// column of [`BRONZE_COLUMNS`] stored and read.
fn bronze_table(
    rows: &RecordBatch,
    method: PiiMethod,
    outside: &OutsideLake,
    customer: &str,
    version: Option<u64>,
) -> PiiTable {
    let payloads = rows
        .column_by_name("raw_payload")
        .and_then(|c| c.as_any().downcast_ref::<StringArray>());
    let mut out = PiiTable {
        name: TableName::bronze(BRONZE_TABLE).to_string(),
        version,
        columns: BRONZE_COLUMNS.iter().map(|c| c.to_string()).collect(),
        pii: BRONZE_COLUMNS
            .iter()
            .map(|c| PII_FIELDS.contains(c))
            .collect(),
        rows: vec![],
        total_rows: rows.num_rows(),
        error: None,
    };
    let Some(payloads) = payloads else {
        return out;
    };
    for r in 0..payloads.len() {
        if payloads.is_null(r) {
            continue;
        }
        // Each field's JSON text as received (a number keeps its digits: 120.00).
        let Ok(record) = serde_json::from_str::<BTreeMap<String, Box<serde_json::value::RawValue>>>(
            payloads.value(r),
        ) else {
            continue;
        };
        let text = |c: &str| {
            let raw = record.get(c)?.get();
            match serde_json::from_str::<Option<String>>(raw) {
                Ok(s) => s,
                Err(_) => Some(raw.to_string()),
            }
        };
        if text("user_id").as_deref() != Some(customer) {
            continue;
        }
        out.rows.push(
            BRONZE_COLUMNS
                .iter()
                .map(|c| cell(method, outside, customer, c, text(c)))
                .collect(),
        );
    }
    out
}

/// A cell: personal data read through what `method` keeps outside the
/// lake, anything else as stored.
fn cell(
    method: PiiMethod,
    outside: &OutsideLake,
    customer: &str,
    column: &str,
    stored: Option<String>,
) -> PiiCell {
    let read = match &stored {
        Some(s) if PII_FIELDS.contains(&column) => read_cell(method, outside, customer, column, s),
        other => other.clone(),
    };
    PiiCell { stored, read }
}

/// SHA-256 over every file of bronze's folder (path, size, bytes; by path).
async fn bronze_sha256(lake: &Playground) -> Result<String> {
    let mut paths = lake
        .lake
        .list(&TableName::bronze(BRONZE_TABLE).path())
        .await?;
    paths.sort();
    let mut h = Sha256::new();
    for p in paths {
        let bytes = lake.lake.get_bytes(&p).await?;
        h.update(p.as_bytes());
        h.update((bytes.len() as u64).to_be_bytes());
        h.update(&bytes);
    }
    Ok(h.finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>())
}

/// What `lake` shows for `customer`; time travel goes to bronze `version`.
async fn facts(
    lake: &Playground,
    outside: &OutsideLake,
    method: PiiMethod,
    customer: &str,
    version: u64,
) -> Result<PiiFacts> {
    let bronze_name = TableName::bronze(BRONZE_TABLE);
    let current = bronze_version(lake);
    let rows = lake.bronze_rows(BRONZE_TABLE, None)?;
    let bronze = bronze_table(&rows, method, outside, customer, Some(current));
    let versions = lake.history.versions(&bronze_name);
    let time_travel = match lake.table_batch_at(&bronze_name, version).await {
        Ok(rows) => bronze_table(&rows, method, outside, customer, Some(version)),
        Err(e) => PiiTable {
            name: bronze_name.to_string(),
            version: Some(version),
            error: Some(e.to_string()),
            ..Default::default()
        },
    };
    let (replay, replay_revenue) = Box::pin(replay_gold(lake, outside, method, customer)).await;
    // Landed files (kept as received) that still hold the customer's records.
    let needle = format!("\"user_id\":\"{customer}\"");
    let mut landed_files = 0;
    for b in lake.batches.iter() {
        let Some(path) = &b.landing_path else {
            continue;
        };
        if let Ok(bytes) = lake.lake.get_bytes(path).await {
            if String::from_utf8_lossy(&bytes).contains(&needle) {
                landed_files += 1;
            }
        }
    }
    let expired_versions = lake
        .history
        .all()
        .iter()
        .filter(|(t, _)| !t.is_bronze())
        .flat_map(|(_, v)| v.iter())
        .filter(|v| !v.readable)
        .count();
    Ok(PiiFacts {
        bronze,
        bronze_version: current,
        bronze_operation: versions
            .last()
            .map(|v| v.operation.clone())
            .unwrap_or_default(),
        bronze_versions: versions.len(),
        bronze_sha256: bronze_sha256(lake).await?,
        time_travel,
        replay,
        replay_revenue,
        vault_entries: (method == PiiMethod::Tokenize).then(|| outside.vault.entries_of(customer)),
        key_present: (method == PiiMethod::CryptoShred).then(|| outside.keys.has_key(customer)),
        landed_files,
        expired_versions,
    })
}

/// Gold after a replay from bronze: `customer`'s row of
/// `gold.customer_orders` (name and email read) and Σ revenue of
/// `gold.revenue_by_country`.
async fn replay_gold(
    lake: &Playground,
    outside: &OutsideLake,
    method: PiiMethod,
    customer: &str,
) -> (PiiTable, String) {
    let name = TableName::gold(GOLD_CUSTOMERS);
    let mut table = PiiTable {
        name: name.to_string(),
        ..Default::default()
    };
    let out = match Box::pin(lake.rebuild(&lake.bronze)).await {
        Ok(out) => out,
        Err(e) => {
            table.error = Some(e.to_string());
            return (table, String::new());
        }
    };
    if let Some(gold) = out.table(&name) {
        let schema = gold.schema();
        table.columns = schema.fields().iter().map(|f| f.name().clone()).collect();
        table.pii = table
            .columns
            .iter()
            .map(|c| PII_FIELDS.contains(&c.as_str()))
            .collect();
        table.total_rows = gold.num_rows();
        let text = |col: usize, row: usize| {
            let c = gold.column(col);
            (!c.is_null(row))
                .then(|| array_value_to_string(c, row).ok())
                .flatten()
        };
        let user = table.columns.iter().position(|c| c == "user_id");
        for r in 0..gold.num_rows() {
            if user.and_then(|u| text(u, r)).as_deref() != Some(customer) {
                continue;
            }
            table.rows.push(
                table
                    .columns
                    .iter()
                    .enumerate()
                    .map(|(i, c)| cell(method, outside, customer, c, text(i, r)))
                    .collect(),
            );
        }
    }
    let revenue = out
        .table(TableName::gold(GOLD_COUNTRIES))
        .and_then(|g| g.column_by_name("revenue"))
        .and_then(|c| c.as_any().downcast_ref::<Decimal128Array>().cloned())
        .map(|c| {
            let sum: i128 = c.iter().flatten().sum();
            Decimal128Array::from(vec![sum])
                .with_precision_and_scale(38, c.scale())
                .map(|d| d.value_as_string(0))
                .unwrap_or_default()
        })
        .unwrap_or_default();
    (table, revenue)
}

/// The first 12 hex digits of a SHA-256 (enough to see it changed).
fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

/// What `method` did for `customer` (forgotten: `before` and `now`
/// compared), or would do, in `lang`.
fn findings(
    method: PiiMethod,
    c: &str,
    before: Option<&PiiFacts>,
    now: &PiiFacts,
    lang: Lang,
) -> Vec<String> {
    let t = TableName::bronze(BRONZE_TABLE);
    let Some(b) = before else {
        let rows = now.bronze.rows.len();
        return vec![match method {
            PiiMethod::Tokenize => tr(
                lang,
                format!("{t} holds only tokens for {c}'s name, email and phone; the vault, outside the lake, maps its {} tokens to the values. Forgetting deletes the vault entries: bronze is not touched.", now.vault_entries.unwrap_or(0)),
                format!("{t} хранит для имени, email и телефона {c} только токены; vault вне озера сопоставляет {} {} со значениями. Забвение удаляет записи vault: bronze не трогаем.", now.vault_entries.unwrap_or(0), ru_plural(now.vault_entries.unwrap_or(0), "токен", "токена", "токенов")),
            ),
            PiiMethod::CryptoShred => tr(
                lang,
                format!("{t} holds {c}'s name, email and phone encrypted with {c}'s own AES-256-GCM key; the key store, outside the lake, holds the key. Forgetting deletes the key: bronze is not touched."),
                format!("{t} хранит имя, email и телефон {c}, зашифрованные собственным ключом AES-256-GCM клиента; ключ лежит в хранилище ключей вне озера. Забвение удаляет ключ: bronze не трогаем."),
            ),
            PiiMethod::Delete => tr(
                lang,
                format!("{t} holds {c}'s name, email and phone as they came, in {rows} rows. Forgetting is a logged DELETE of those rows from every version (their files rewritten, the landed files deleted), then the older silver and gold snapshots expire."),
                format!("{t} хранит имя, email и телефон {c} как они пришли (строк: {rows}). Забвение — это DELETE этих строк из всех версий с записью в журнал (их файлы переписываются, файлы из landing zone удаляются), затем старые снапшоты silver и gold истекают."),
            ),
        }];
    };
    let mut out = Vec::new();
    let (n0, n1) = (b.bronze.total_rows, now.bronze.total_rows);
    let untouched = b.bronze_sha256 == now.bronze_sha256;
    out.push(if untouched {
        tr(
            lang,
            format!("{t}: {n0} rows before, {n1} after; still version {} ({}), its files byte for byte the same (SHA-256 {}…): nothing in bronze was rewritten.", now.bronze_version, now.bronze_operation, short(&now.bronze_sha256)),
            format!("{t}: строк было {n0}, стало {n1}; всё та же версия {} ({}), файлы совпадают байт в байт (SHA-256 {}…): в bronze ничего не переписано.", now.bronze_version, now.bronze_operation, short(&now.bronze_sha256)),
        )
    } else {
        tr(
            lang,
            format!("{t}: {n0} rows before, {n1} after; the DELETE is version {} ({}), the files were rewritten (SHA-256 {}… → {}…): bronze is no longer what the source sent.", now.bronze_version, now.bronze_operation, short(&b.bronze_sha256), short(&now.bronze_sha256)),
            format!("{t}: строк было {n0}, стало {n1}; DELETE — версия {} ({}), файлы переписаны (SHA-256 {}… → {}…): bronze больше не то, что прислал источник.", now.bronze_version, now.bronze_operation, short(&b.bronze_sha256), short(&now.bronze_sha256)),
        )
    });
    let (cells, readable) = now.bronze.pii_cells();
    let (cells0, _) = b.bronze.pii_cells();
    out.push(match method {
        PiiMethod::Tokenize => tr(
            lang,
            format!("{c}'s {cells} personal cells are still in bronze as tokens; {readable} of {cells} resolve: the vault entries were deleted ({} → {}).", b.vault_entries.unwrap_or(0), now.vault_entries.unwrap_or(0)),
            format!("Персональные ячейки {c} ({cells}) остались в bronze токенами; разрешаются {readable} из {cells}: записи vault удалены ({} → {}).", b.vault_entries.unwrap_or(0), now.vault_entries.unwrap_or(0)),
        ),
        PiiMethod::CryptoShred => tr(
            lang,
            format!("{c}'s {cells} personal cells are still in bronze as ciphertext, in the same {} rows; {readable} of {cells} decrypt: the key was deleted from the key store.", now.bronze.rows.len()),
            format!("Персональные ячейки {c} ({cells}) остались в bronze шифртекстом, в тех же строках ({}); расшифровываются {readable} из {cells}: ключ удалён из хранилища ключей.", now.bronze.rows.len()),
        ),
        PiiMethod::Delete => tr(
            lang,
            format!("{c}'s rows left bronze: {} → {} rows, {cells0} → {cells} personal cells.", b.bronze.rows.len(), now.bronze.rows.len()),
            format!("Строки {c} ушли из bronze: {} → {}, персональных ячеек {cells0} → {cells}.", b.bronze.rows.len(), now.bronze.rows.len()),
        ),
    });
    let v = now.time_travel.version.unwrap_or_default();
    let (tt_cells, tt_readable) = now.time_travel.pii_cells();
    out.push(match method {
        PiiMethod::Tokenize | PiiMethod::CryptoShred => tr(
            lang,
            format!("Time travel to v{v} (the newest before the forget) reads the same {} rows, with {tt_readable} of {tt_cells} personal cells readable: an old version is no way back.", now.time_travel.rows.len()),
            format!("Time travel к v{v} (последней до забвения) читает те же строки ({}), читаемых персональных ячеек {tt_readable} из {tt_cells}: старая версия не лазейка.", now.time_travel.rows.len()),
        ),
        PiiMethod::Delete => tr(
            lang,
            format!("Time travel to v{v} (the newest before the forget) finds {} of {c}'s rows: the DELETE rewrote the files every version reads; {} older silver and gold snapshots expired.", now.time_travel.rows.len(), now.expired_versions),
            format!("Time travel к v{v} (последней до забвения) находит строк {c}: {}. DELETE переписал файлы, которые читает каждая версия; истекших снапшотов silver и gold: {}.", now.time_travel.rows.len(), now.expired_versions),
        ),
    });
    let g = TableName::gold(GOLD_CUSTOMERS);
    out.push(match now.replay.rows.first() {
        Some(row) => {
            let (pc, pr) = now.replay.pii_cells();
            let orders = now
                .replay
                .columns
                .iter()
                .position(|x| x == "orders")
                .and_then(|i| row.get(i))
                .and_then(|x| x.read.clone())
                .unwrap_or_default();
            tr(
                lang,
                format!("A replay from bronze rebuilds {g} with {c}'s row ({orders} orders) and {pr} of {pc} personal cells readable; Σ revenue {} → {}: the facts stay, the person is gone.", b.replay_revenue, now.replay_revenue),
                format!("Replay из bronze пересобирает {g} со строкой {c} (заказов: {orders}), читаемых персональных ячеек {pr} из {pc}; Σ выручки {} → {}: факты остались, человека нет.", b.replay_revenue, now.replay_revenue),
            )
        }
        None => tr(
            lang,
            format!("A replay from bronze rebuilds {g} without {c}: Σ revenue {} → {}; the orders are gone from every report rebuilt from now on.", b.replay_revenue, now.replay_revenue),
            format!("Replay из bronze пересобирает {g} без {c}: Σ выручки {} → {}; заказы пропали из всех отчётов, пересобранных с этого момента.", b.replay_revenue, now.replay_revenue),
        ),
    });
    out.push(match method {
        PiiMethod::Tokenize => tr(
            lang,
            "Also to delete: the vault's backups and replicas. Nothing in the lake: bronze, silver, gold and the landed files hold tokens only.".into(),
            "Удалить также: резервные копии и реплики vault. В озере ничего: bronze, silver, gold и файлы landing zone хранят только токены.".into(),
        ),
        PiiMethod::CryptoShred => tr(
            lang,
            "Also to delete: the key's copies in the KMS's backups. Nothing in the lake: bronze, its versions and the landed files hold only ciphertext no key opens.".into(),
            "Удалить также: копии ключа в резервных копиях KMS. В озере ничего: bronze, его версии и файлы landing zone хранят только шифртекст, который не открыть ни одним ключом.".into(),
        ),
        PiiMethod::Delete => tr(
            lang,
            format!("Deleted with it: the landed files that held {c} ({} → {}) and the older silver and gold snapshots (expire_snapshots: {} expired). A rare exception for a named customer, never a weekly batch: bronze can no longer replay what the source sent.", b.landed_files, now.landed_files, now.expired_versions),
            format!("Вместе с ним удалены: файлы landing zone с данными {c} ({} → {}) и старые снапшоты silver и gold (expire_snapshots: истекло {}). Редкое исключение для конкретного клиента, никогда не еженедельный батч: bronze больше не переиграет то, что прислал источник.", b.landed_files, now.landed_files, now.expired_versions),
        ),
    });
    out
}
