//! PII in an immutable bronze: the right to be forgotten three ways, side by
//! side, on the same customer data (seed `000_87b8dd7200a8cd99.txt` §7).
//!
//! Bronze must stay append-only, yet GDPR and Russia's 152-FZ give a
//! customer the right to have their personal data erased. The course gives
//! three answers, each shown here in a throw-away lake of its own (never
//! saved, never part of the session), every lake a full bronze → silver →
//! gold pipeline over the same bundled orders with names, emails and phones:
//!
//! 1. [`PiiMethod::Tokenize`] (the best): the PII fields are replaced by
//!    tokens in the stream, before bronze; the vault (token → value) lives
//!    outside the lake. Forgetting deletes the customer's vault entries:
//!    bronze stays byte for byte as it was, and its tokens resolve to nothing.
//! 2. [`PiiMethod::CryptoShred`] (good): each customer's PII is encrypted
//!    with their own AES-256-GCM key before bronze; the key store lives
//!    outside the lake. Forgetting deletes the key: bronze, its row count and
//!    its versions stay, the customer's cells can no longer be decrypted.
//! 3. [`PiiMethod::Delete`] (the last resort, when the law demands physical
//!    deletion): a logged `DELETE` of the customer's bronze rows (every
//!    version's files rewritten, the landed files deleted) and the expiry of
//!    silver and gold snapshots that held them (Iceberg's
//!    `DELETE ... WHERE user_id = ?` + `expire_snapshots()`).
//!
//! Requests: [`crate::Request::PiiLab`] (show), [`crate::Request::PiiForget`],
//! [`crate::Request::PiiReset`]; all three are answered with
//! [`crate::Response::Pii`] ([`PiiView`]) and none changes the session:
//!
//! ```text
//! {"type": "pii_lab", "customer": "U-2"}
//! {"type": "pii_forget", "customer": "U-2", "method": "crypto_shred"}   (no method: all three)
//! {"type": "pii_reset", "customer": "U-2"}
//! → {"type": "pii", "customer": "U-2", "fields": ["name", "email", "phone"],
//!    "customers": [{"user_id": "U-1", "orders": 2}, …],
//!    "methods": [{"method": "tokenize", "forgotten": true,
//!                 "before": {…PiiFacts}, "now": {"bronze": {"name": "bronze.orders",
//!                   "columns": ["order_id", "name", …], "pii": [false, true, …],
//!                   "rows": [[{"stored": "O-1002", "read": "O-1002"},
//!                             {"stored": "tok_8e7301895915c2c1", "read": null}, …]],
//!                   "total_rows": 6, "version": 2},
//!                 "bronze_version": 2, "bronze_operation": "APPEND", "bronze_sha256": "e155…",
//!                 "time_travel": {…}, "replay": {…}, "replay_revenue": "572.65",
//!                 "vault_entries": 0, "landed_files": 2, "expired_versions": 0, …},
//!                 "findings": ["bronze.orders: 6 rows before, 6 after; …", …]}, …]}
//! ```

use serde::{Deserialize, Serialize};

/// One way to honour the right to be forgotten (seed 000 §7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PiiMethod {
    /// Variant 1: tokenization before bronze, values in a vault outside the lake.
    Tokenize,
    /// Variant 2: crypto-shredding, one AES-256-GCM key per customer in a key store.
    CryptoShred,
    /// Variant 3: physical `DELETE` of bronze rows plus snapshot expiry.
    Delete,
}

impl PiiMethod {
    /// The three, in the course's order (best first).
    pub const ALL: &'static [PiiMethod] = &[
        PiiMethod::Tokenize,
        PiiMethod::CryptoShred,
        PiiMethod::Delete,
    ];

    /// Short key for ids and i18n keys: `token`, `shred`, `delete`
    /// (the page's tables are `#pii-token`, `#pii-shred`, `#pii-delete`).
    pub fn key(self) -> &'static str {
        match self {
            PiiMethod::Tokenize => "token",
            PiiMethod::CryptoShred => "shred",
            PiiMethod::Delete => "delete",
        }
    }
}

/// A customer of the bundled data, for the page's picker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PiiCustomer {
    /// `U-2`: the pseudonymous key every method keeps in the clear.
    pub user_id: String,
    /// How many orders (bronze rows) the customer has in the source data.
    pub orders: usize,
}

/// One cell as the lake holds it and as a reader with access to the vault
/// or the key store gets it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PiiCell {
    /// What is stored: a token (`tok_…`), a ciphertext (`enc:…`, base64
    /// of nonce and AES-GCM output), or the plain value. `None`: SQL NULL.
    pub stored: Option<String>,
    /// What it reads as: the value the vault maps the token to, the
    /// decrypted text, or the stored value itself when it is not personal
    /// data. `None` when it cannot be read any more (the vault entry or the
    /// key was deleted): the page marks it `data-readable="false"`.
    pub read: Option<String>,
}

impl PiiCell {
    /// Can the cell still be read?
    pub fn readable(&self) -> bool {
        self.read.is_some() || self.stored.is_none()
    }
}

/// Some rows of one table, each cell stored and read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct PiiTable {
    /// `bronze.orders`, `gold.customer_orders`.
    pub name: String,
    /// The table version read (`None`: the current one of a replay).
    pub version: Option<u64>,
    pub columns: Vec<String>,
    /// Per column: does it hold personal data?
    pub pii: Vec<bool>,
    /// The customer's rows only.
    pub rows: Vec<Vec<PiiCell>>,
    /// All rows of the table (every customer).
    pub total_rows: usize,
    /// Why the table could not be read (an expired snapshot, a failed replay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl PiiTable {
    /// Cells of personal data in the customer's rows: (all, readable).
    pub fn pii_cells(&self) -> (usize, usize) {
        let mut all = 0;
        let mut readable = 0;
        for row in &self.rows {
            for (cell, pii) in row.iter().zip(&self.pii) {
                if *pii && cell.stored.is_some() {
                    all += 1;
                    readable += usize::from(cell.read.is_some());
                }
            }
        }
        (all, readable)
    }
}

/// What one method's lake shows for one customer at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct PiiFacts {
    /// The customer's bronze rows (all columns a reader sees: order,
    /// personal data, country, amount); `total_rows` is bronze's row count.
    pub bronze: PiiTable,
    /// Bronze's newest version and its operation (`WRITE`, `DELETE`).
    pub bronze_version: u64,
    pub bronze_operation: String,
    /// Bronze's versions (its commit log's entries).
    pub bronze_versions: usize,
    /// SHA-256 of every file in bronze's folder (data files and commit
    /// log), hex: equal before and after means bronze was not touched.
    pub bronze_sha256: String,
    /// Time travel: bronze read at the version that was newest before the
    /// customer was forgotten (the customer's rows).
    pub time_travel: PiiTable,
    /// A replay from bronze (silver and gold rebuilt in a fresh lake): the
    /// customer's row of `gold.customer_orders`.
    pub replay: PiiTable,
    /// Σ revenue of the replay's `gold.revenue_by_country` (exact decimal text).
    pub replay_revenue: String,
    /// Tokenization: the customer's entries in the vault.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vault_entries: Option<usize>,
    /// Crypto-shredding: is the customer's key in the key store?
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_present: Option<bool>,
    /// Landed files (the landing zone keeps each file as received) that
    /// hold the customer's records.
    pub landed_files: usize,
    /// Silver and gold versions whose snapshot expired (their data is gone).
    pub expired_versions: usize,
}

/// One method's column of the comparison.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PiiMethodView {
    pub method: PiiMethod,
    /// Has the customer been forgotten under this method (since the last reset)?
    pub forgotten: bool,
    /// The facts just before the customer was forgotten (`None` while not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<PiiFacts>,
    /// The facts now.
    pub now: PiiFacts,
    /// What this method leaves in bronze, in time travel and in replay,
    /// and what else must be deleted, in the session's language
    /// (engine-written, compared before / after once forgotten).
    pub findings: Vec<String>,
    /// Why this method's lake could not be built or the forget failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The three methods side by side for one customer (answer to the `pii_*` requests).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PiiView {
    /// The bundled data's customers.
    pub customers: Vec<PiiCustomer>,
    /// The customer shown (`user_id`).
    pub customer: String,
    /// The fields that are personal data: `name`, `email`, `phone`.
    pub fields: Vec<String>,
    /// [`PiiMethod::ALL`], in order.
    pub methods: Vec<PiiMethodView>,
}
