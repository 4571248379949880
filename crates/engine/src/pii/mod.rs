//! PII in an immutable bronze (seed `000_87b8dd7200a8cd99.txt` §7): the
//! pieces that live *outside* the lake and the stream that feeds it.
//!
//! - [`orders`]: the bundled orders (`static/examples/pii/orders.csv`):
//!   six orders of four customers, with names, emails and phones.
//! - [`Vault`] (variant 1, tokenization before bronze): token → value,
//!   one token per customer and field; forgetting deletes the entries.
//! - [`KeyStore`] (variant 2, crypto-shredding): one AES-256-GCM key per
//!   customer (RustCrypto's `aes-gcm`); each PII cell is `enc:` + base64 of
//!   nonce ‖ ciphertext ‖ tag, authenticated with the customer and the field
//!   (the associated data), so a cell cannot be moved to another customer.
//!   Forgetting deletes the key.
//! - [`landed_files`]: what the source's stream lands in bronze for each
//!   method: JSON lines, one file per order date, the PII fields as tokens,
//!   as ciphertexts, or as they are (variant 3, the physical DELETE).
//! - [`definition`]: the pipeline every method's lake runs (bronze →
//!   silver → gold), the same for all three.
//!
//! Tokens, keys and nonces come from the engine's [`IdGenerator`] (never a
//! direct call for randomness: there is no OS entropy on
//! `wasm32-unknown-unknown`, and tests pin the generator). The playground's
//! PII lab (`playground/pii.rs`) runs them with a fixed seed so the lesson
//! repeats exactly; a real vault or KMS draws them from a CSPRNG.

use std::collections::BTreeMap;

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::Aes256Gcm;
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::env::IdGenerator;
use crate::error::{EngineError, Result};
use crate::model::{BronzeMode, BronzeTableDef, GoldModelDef, PipelineDef, SilverTableDef};
use crate::silver::rules::RuleRegistry;
use crate::silver::source::{ColumnType, SourceSchema};
use medallion_protocol::{Lang, PiiMethod};

/// The bundled orders with personal data (CSV, one order a line).
pub const ORDERS_CSV: &[u8] = include_bytes!("../../../../static/examples/pii/orders.csv");

/// The fields that are personal data, in the order shown.
pub const PII_FIELDS: &[&str] = &["name", "email", "phone"];

/// The bronze table every method's lake lands the orders in.
pub const BRONZE_TABLE: &str = "orders";

/// Prefix of a token in bronze (`tok_3f9a0c…`).
pub const TOKEN_PREFIX: &str = "tok_";

/// Prefix of a crypto-shredded cell in bronze (`enc:` + base64).
pub const CIPHER_PREFIX: &str = "enc:";

/// One order of the bundled data (a line of `orders.csv`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Order {
    pub order_id: String,
    pub user_id: String,
    pub name: String,
    pub email: String,
    pub phone: String,
    pub country: String,
    pub order_date: String,
    /// Exact decimal text (`49.90`).
    pub amount: String,
}

impl Order {
    /// The value of PII field `field` ([`PII_FIELDS`]).
    pub fn pii(&self, field: &str) -> Option<&str> {
        match field {
            "name" => Some(&self.name),
            "email" => Some(&self.email),
            "phone" => Some(&self.phone),
            _ => None,
        }
    }

    fn set_pii(&mut self, field: &str, value: String) {
        match field {
            "name" => self.name = value,
            "email" => self.email = value,
            "phone" => self.phone = value,
            _ => {}
        }
    }
}

/// The bundled orders, in file order.
pub fn orders() -> Result<Vec<Order>> {
    let mut reader = csv::Reader::from_reader(ORDERS_CSV);
    reader
        .deserialize()
        .map(|r| r.map_err(|e| EngineError::Internal(format!("the bundled orders.csv: {e}"))))
        .collect()
}

/// The customers (`user_id`s) of `orders`, first appearance first, with
/// their order counts.
pub fn customers(orders: &[Order]) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for o in orders {
        match out.iter_mut().find(|(u, _)| *u == o.user_id) {
            Some((_, n)) => *n += 1,
            None => out.push((o.user_id.clone(), 1)),
        }
    }
    out
}

/// A vault entry: the value a token stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VaultEntry {
    pub user_id: String,
    pub field: String,
    pub value: String,
}

/// Variant 1's PII vault (seed 000 §7: "the original PII is kept in a
/// protected store, linked to the token"): outside the lake, token → value.
#[derive(Debug, Clone, Default)]
pub struct Vault {
    entries: BTreeMap<String, VaultEntry>,
}

impl Vault {
    /// The token for `value` of `user_id`'s `field`: the one already issued
    /// for the same value, else a new one (`tok_` + the low 64 bits of a new id in hex).
    pub fn tokenize(
        &mut self,
        ids: &dyn IdGenerator,
        user_id: &str,
        field: &str,
        value: &str,
    ) -> String {
        if let Some((token, _)) = self
            .entries
            .iter()
            .find(|(_, e)| e.user_id == user_id && e.field == field && e.value == value)
        {
            return token.clone();
        }
        // The id's low 64 bits (a counter's bits for sequential ids).
        let bits = ids.new_id().as_u128() as u64;
        let mut token = format!("{TOKEN_PREFIX}{bits:016x}");
        if self.entries.contains_key(&token) {
            token = format!("{token}_{}", self.entries.len());
        }
        self.entries.insert(
            token.clone(),
            VaultEntry {
                user_id: user_id.into(),
                field: field.into(),
                value: value.into(),
            },
        );
        token
    }

    /// The value `token` stands for; `None` once its entry was deleted.
    pub fn resolve(&self, token: &str) -> Option<&str> {
        self.entries.get(token).map(|e| e.value.as_str())
    }

    /// Entries of `user_id`.
    pub fn entries_of(&self, user_id: &str) -> usize {
        self.entries
            .values()
            .filter(|e| e.user_id == user_id)
            .count()
    }

    /// All entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Has it no entry?
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Deletes `user_id`'s entries (the right to be forgotten); how many.
    pub fn forget(&mut self, user_id: &str) -> usize {
        let before = self.entries.len();
        self.entries.retain(|_, e| e.user_id != user_id);
        before - self.entries.len()
    }
}

/// Why a crypto-shredded cell cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unreadable {
    /// The customer's key is not in the key store (shredded).
    #[error("the key store has no key for {0}: the data was crypto-shredded")]
    NoKey(String),
    /// Not `enc:` + base64 of at least a nonce and a tag.
    #[error("not a ciphertext of this key store")]
    Malformed,
    /// AES-GCM refused it: another key, another customer or field, or altered bytes.
    #[error("AES-GCM authentication failed (another key, customer or field, or altered bytes)")]
    Authentication,
}

/// Bytes of an AES-GCM nonce.
const NONCE_BYTES: usize = 12;
/// Bytes of an AES-GCM tag.
const TAG_BYTES: usize = 16;

/// Variant 2's key store (seed 000 §7: "the key is kept in the KMS, bound to
/// user_id"): one AES-256 key per customer, outside the lake.
#[derive(Clone, Default)]
pub struct KeyStore {
    keys: BTreeMap<String, [u8; 32]>,
}

impl std::fmt::Debug for KeyStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print key bytes.
        f.debug_struct("KeyStore")
            .field("customers", &self.keys.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// 32 bytes from two new ids of `ids`, through SHA-256.
fn key_bytes(ids: &dyn IdGenerator) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(ids.new_id().as_bytes());
    h.update(ids.new_id().as_bytes());
    h.finalize().into()
}

/// 12 bytes from a new id of `ids` (through SHA-256: the id's version bits
/// are not repeated in every nonce).
fn nonce_bytes(ids: &dyn IdGenerator) -> [u8; NONCE_BYTES] {
    let digest: [u8; 32] = Sha256::digest(ids.new_id().as_bytes()).into();
    let mut nonce = [0u8; NONCE_BYTES];
    nonce.copy_from_slice(&digest[..NONCE_BYTES]);
    nonce
}

/// The associated data of a cell: the customer and the field it belongs to.
fn aad(user_id: &str, field: &str) -> Vec<u8> {
    format!("{user_id}\u{1f}{field}").into_bytes()
}

impl KeyStore {
    /// Encrypts `value` of `user_id`'s `field` with the customer's key (made
    /// on first use) and a fresh nonce: `enc:` + base64(nonce ‖ ciphertext ‖ tag).
    pub fn encrypt(
        &mut self,
        ids: &dyn IdGenerator,
        user_id: &str,
        field: &str,
        value: &str,
    ) -> Result<String> {
        let key = *self
            .keys
            .entry(user_id.to_string())
            .or_insert_with(|| key_bytes(ids));
        let nonce = nonce_bytes(ids);
        let cipher = Aes256Gcm::new(&key.into());
        let sealed = cipher
            .encrypt(
                &nonce.into(),
                Payload {
                    msg: value.as_bytes(),
                    aad: &aad(user_id, field),
                },
            )
            .map_err(|e| EngineError::Internal(format!("AES-GCM encryption failed: {e}")))?;
        let mut bytes = nonce.to_vec();
        bytes.extend_from_slice(&sealed);
        Ok(format!(
            "{CIPHER_PREFIX}{}",
            base64::engine::general_purpose::STANDARD.encode(bytes)
        ))
    }

    /// The plain text of cell `stored` of `user_id`'s `field`.
    pub fn decrypt(
        &self,
        user_id: &str,
        field: &str,
        stored: &str,
    ) -> std::result::Result<String, Unreadable> {
        self.decrypt_with_key_of(user_id, user_id, field, stored)
    }

    /// Is `user_id`'s key in the store?
    pub fn has_key(&self, user_id: &str) -> bool {
        self.keys.contains_key(user_id)
    }

    /// Keys held.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Holds it no key?
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Deletes `user_id`'s key (crypto-shredding); was there one?
    pub fn shred(&mut self, user_id: &str) -> bool {
        self.keys.remove(user_id).is_some()
    }

    /// Tries `user_id`'s cell with *another* customer's key (`key_of`): what
    /// an attacker holding the rest of the key store gets. For tests and the
    /// lesson that one key opens one customer only.
    pub fn decrypt_with_key_of(
        &self,
        key_of: &str,
        user_id: &str,
        field: &str,
        stored: &str,
    ) -> std::result::Result<String, Unreadable> {
        let key = self
            .keys
            .get(key_of)
            .ok_or_else(|| Unreadable::NoKey(key_of.to_string()))?;
        decrypt_with(key, user_id, field, stored)
    }
}

fn decrypt_with(
    key: &[u8; 32],
    user_id: &str,
    field: &str,
    stored: &str,
) -> std::result::Result<String, Unreadable> {
    let encoded = stored
        .strip_prefix(CIPHER_PREFIX)
        .ok_or(Unreadable::Malformed)?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|_| Unreadable::Malformed)?;
    if bytes.len() < NONCE_BYTES + TAG_BYTES {
        return Err(Unreadable::Malformed);
    }
    let (nonce, sealed) = bytes.split_at(NONCE_BYTES);
    let mut n = [0u8; NONCE_BYTES];
    n.copy_from_slice(nonce);
    let cipher = Aes256Gcm::new(&(*key).into());
    let plain = cipher
        .decrypt(
            &n.into(),
            Payload {
                msg: sealed,
                aad: &aad(user_id, field),
            },
        )
        .map_err(|_| Unreadable::Authentication)?;
    String::from_utf8(plain).map_err(|_| Unreadable::Malformed)
}

/// What a method keeps outside the lake: the vault, the key store, or nothing.
#[derive(Debug, Clone, Default)]
pub struct OutsideLake {
    pub vault: Vault,
    pub keys: KeyStore,
}

/// One order as the source's JSON line: fields in the source's order, the
/// amount as a JSON number written as received.
#[derive(Serialize)]
struct Line<'a> {
    order_id: &'a str,
    user_id: &'a str,
    name: &'a str,
    email: &'a str,
    phone: &'a str,
    country: &'a str,
    order_date: &'a str,
    amount: &'a serde_json::value::RawValue,
}

/// The files the stream lands in bronze for `method`: one JSON Lines file
/// per order date (`orders_2024-03-01.jsonl`), each order a line, its PII
/// fields tokenized into `outside.vault`, encrypted with `outside.keys`, or
/// as they are ([`PiiMethod::Delete`]).
pub fn landed_files(
    method: PiiMethod,
    orders: &[Order],
    outside: &mut OutsideLake,
    ids: &dyn IdGenerator,
) -> Result<Vec<(String, Vec<u8>)>> {
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for order in orders {
        let mut o = order.clone();
        for field in PII_FIELDS {
            let value = order.pii(field).unwrap_or_default();
            let stored = match method {
                PiiMethod::Tokenize => outside.vault.tokenize(ids, &o.user_id, field, value),
                PiiMethod::CryptoShred => outside.keys.encrypt(ids, &o.user_id, field, value)?,
                PiiMethod::Delete => value.to_string(),
            };
            o.set_pii(field, stored);
        }
        let amount = serde_json::value::RawValue::from_string(o.amount.clone())
            .map_err(|e| EngineError::Internal(format!("the bundled amount {}: {e}", o.amount)))?;
        let line = serde_json::to_string(&Line {
            order_id: &o.order_id,
            user_id: &o.user_id,
            name: &o.name,
            email: &o.email,
            phone: &o.phone,
            country: &o.country,
            order_date: &o.order_date,
            amount: &amount,
        })
        .map_err(|e| EngineError::Internal(e.to_string()))?;
        let file = format!("orders_{}.jsonl", o.order_date);
        match files.iter_mut().find(|(f, _)| *f == file) {
            Some((_, bytes)) => {
                bytes.extend_from_slice(line.as_bytes());
                bytes.push(b'\n');
            }
            None => files.push((file, format!("{line}\n").into_bytes())),
        }
    }
    Ok(files)
}

/// Reads stored cell `stored` of `user_id`'s PII `field` as a reader with
/// access to what `method` keeps outside the lake: through the vault, by
/// decryption, or as it is. `None`: it cannot be read any more.
pub fn read_cell(
    method: PiiMethod,
    outside: &OutsideLake,
    user_id: &str,
    field: &str,
    stored: &str,
) -> Option<String> {
    match method {
        PiiMethod::Tokenize => outside.vault.resolve(stored).map(str::to_string),
        PiiMethod::CryptoShred => outside.keys.decrypt(user_id, field, stored).ok(),
        PiiMethod::Delete => Some(stored.to_string()),
    }
}

/// Gold's per-customer model: the customer's orders and amount, with the
/// name and email as silver holds them (tokens, ciphertexts or values).
pub const GOLD_CUSTOMERS: &str = "customer_orders";
/// Gold's model without personal data: orders and revenue per country.
pub const GOLD_COUNTRIES: &str = "revenue_by_country";

/// The pipeline each method's lake runs, the same for all three: raw
/// bronze `orders` (JSON lines), typed silver `orders`, and two gold
/// models: `customer_orders` (carries name and email) and
/// `revenue_by_country` (no personal data).
pub fn definition(lang: Lang) -> PipelineDef {
    let tr = |en: &str, ru: &str| match lang {
        Lang::En => en.to_string(),
        Lang::Ru => ru.to_string(),
    };
    let decimal = ColumnType::Decimal {
        precision: 10,
        scale: 2,
    };
    PipelineDef {
        title: tr(
            "PII in an immutable bronze",
            "PII в иммутабельном bronze",
        ),
        bronze: vec![BronzeTableDef {
            name: BRONZE_TABLE.into(),
            source_system: "shop.checkout".into(),
            schema: SourceSchema::new(&[
                ("order_id", ColumnType::String),
                ("user_id", ColumnType::String),
                ("name", ColumnType::String),
                ("email", ColumnType::String),
                ("phone", ColumnType::String),
                ("country", ColumnType::String),
                ("order_date", ColumnType::Date),
                ("amount", decimal),
            ]),
            description: tr(
                "Orders as the checkout stream landed them, with the customer's name, email and phone.",
                "Заказы так, как их записал поток checkout, с именем, email и телефоном клиента.",
            ),
            kafka_topic: None,
            mode: BronzeMode::Raw,
            ingest_options: Default::default(),
        }],
        silver: vec![SilverTableDef {
            name: BRONZE_TABLE.into(),
            source: BRONZE_TABLE.into(),
            rules: RuleRegistry { rules: vec![] },
            description: tr("Typed orders.", "Типизированные заказы."),
            merge: None,
            select: vec![],
            explode: None,
        }],
        gold: vec![
            GoldModelDef {
                name: GOLD_CUSTOMERS.into(),
                sql: "SELECT user_id, MAX(name) AS name, MAX(email) AS email, COUNT(*) AS orders, SUM(amount) AS amount\nFROM silver.orders\nGROUP BY user_id\nORDER BY user_id".into(),
                description: tr(
                    "Orders and amount per customer, with the name and email as silver holds them.",
                    "Заказы и сумма по клиентам, с именем и email в том виде, в каком их хранит silver.",
                ),
                merge_on: vec![],
            },
            GoldModelDef {
                name: GOLD_COUNTRIES.into(),
                sql: "SELECT country, COUNT(*) AS orders, SUM(amount) AS revenue\nFROM silver.orders\nGROUP BY country\nORDER BY country".into(),
                description: tr(
                    "Orders and revenue per country: no personal data.",
                    "Заказы и выручка по странам: без персональных данных.",
                ),
                merge_on: vec![],
            },
        ],
        checks: vec![],
        anti_patterns: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::SequentialIds;

    #[test]
    fn a_key_opens_its_own_customer_only_and_nothing_once_shredded() {
        let ids = SequentialIds::default();
        let mut keys = KeyStore::default();
        let a = keys.encrypt(&ids, "U-1", "name", "Anna").unwrap();
        let b = keys.encrypt(&ids, "U-2", "name", "Ben").unwrap();
        assert!(a.starts_with(CIPHER_PREFIX));
        assert_eq!(keys.decrypt("U-1", "name", &a).as_deref(), Ok("Anna"));
        assert_eq!(
            keys.decrypt_with_key_of("U-1", "U-2", "name", &b),
            Err(Unreadable::Authentication)
        );
        assert_eq!(
            keys.decrypt("U-1", "email", &a),
            Err(Unreadable::Authentication),
            "the field is authenticated"
        );
        assert!(keys.shred("U-2"));
        assert_eq!(
            keys.decrypt("U-2", "name", &b),
            Err(Unreadable::NoKey("U-2".into()))
        );
        assert_eq!(keys.decrypt("U-1", "name", &a).as_deref(), Ok("Anna"));
    }

    #[test]
    fn the_vault_gives_one_token_per_value_and_forgets_a_customer() {
        let ids = SequentialIds::default();
        let mut v = Vault::default();
        let t1 = v.tokenize(&ids, "U-1", "name", "Anna");
        assert_eq!(v.tokenize(&ids, "U-1", "name", "Anna"), t1);
        let t2 = v.tokenize(&ids, "U-2", "name", "Ben");
        assert_ne!(t1, t2);
        assert_eq!(v.resolve(&t2), Some("Ben"));
        assert_eq!(v.forget("U-2"), 1);
        assert_eq!(v.resolve(&t2), None);
        assert_eq!(v.resolve(&t1), Some("Anna"));
    }
}
