//! Bundled scenarios beside the NYC taxi module: small, realistic data
//! written for the playground (in `static/examples/<name>/`), each showing
//! one part of seeds 000, 001 and 003 on silver and gold. Their expected
//! results are pinned in `crates/engine/tests/scenarios.rs`.
//!
//! - `kafka_orders`: seed 003 §3–5, four raw Kafka events (a duplicate and
//!   `amount: "bad_data"`) → silver orders (DECIMAL, MERGE by `order_id`),
//!   quarantine, `gold.revenue_daily`, `gold.user_kpi`.
//! - `landing_retry`: seed 000 §4, two landing-zone files, the retry
//!   re-sending `order_1` next to a null amount.
//! - `ecommerce`: seed 001, `orders.csv` (typed bronze, PERMISSIVE) and
//!   `customers.json` (raw) with corrupt records → SCD1 customers, orders
//!   enriched with the customer's current city, gold revenue per city.
//! - `cdc_order`: seed 000 §3, one order's five CDC events (one arriving out
//!   of order) → current state (SCD1) beside the full history (SCD2).

use crate::api::Lang;
use crate::model::{
    BronzeMode, BronzeTableDef, CheckDef, CheckKind, CheckLevel, GoldModelDef, PipelineDef,
    SilverTableDef,
};
use crate::silver::merge::{MergeSpec, Scd};
use crate::silver::rules::{Lookup, Rule, RuleKind::*, RuleRegistry};
use crate::silver::source::{ColumnType as T, SourceSchema};
use medallion_protocol::examples;
use medallion_protocol::TableName;

pub use super::parts::ExampleFile;
use super::parts::{rule, tr, typed, Tr};

fn bronze(
    name: &str,
    source_system: &str,
    schema: SourceSchema,
    description: String,
) -> BronzeTableDef {
    BronzeTableDef {
        name: name.into(),
        source_system: source_system.into(),
        schema,
        description,
        kafka_topic: None,
        mode: BronzeMode::Raw,
        ingest_options: Default::default(),
    }
}

fn silver(
    name: &str,
    source: &str,
    rules: Vec<Rule>,
    merge: Option<MergeSpec>,
    description: String,
) -> SilverTableDef {
    SilverTableDef {
        name: name.into(),
        source: source.into(),
        rules: RuleRegistry { rules },
        description,
        merge,
        select: vec![],
        explode: None,
    }
}

fn merge_by(keys: &[&str], sequence_by: Option<&str>, stored_as: Scd) -> MergeSpec {
    MergeSpec {
        keys: keys.iter().map(|k| k.to_string()).collect(),
        sequence_by: sequence_by.map(String::from),
        stored_as,
        delete_when: None,
        track_history_except: vec![],
        ..Default::default()
    }
}

fn gold(name: &str, sql: &str, description: String) -> GoldModelDef {
    GoldModelDef {
        name: name.into(),
        sql: sql.into(),
        description,
        merge_on: vec![],
    }
}

fn check(id: &str, level: CheckLevel, description: String, kind: CheckKind) -> CheckDef {
    CheckDef {
        id: id.into(),
        level,
        description,
        kind,
        severity: Default::default(),
    }
}

fn reconcile(bronze: &str, silver: &str) -> CheckKind {
    CheckKind::Reconciliation {
        bronze_table: TableName::bronze(bronze),
        silver_table: TableName::silver(silver),
    }
}

fn with_lookup(mut r: Rule, table: TableName, alias: &str, on: &str) -> Rule {
    r.lookup = Some(Lookup {
        table,
        alias: alias.into(),
        on: on.into(),
    });
    r
}

const KAFKA_ORDERS: &str =
    include_str!("../../../../static/examples/kafka_orders/orders_raw.jsonl");
const KAFKA_USERS: &[u8] = include_bytes!("../../../../static/examples/kafka_orders/users.csv");

/// Kafka-fed bronze table: the example's messages, polled at load.
pub fn kafka_orders_messages() -> Vec<(&'static str, &'static str)> {
    vec![("orders", KAFKA_ORDERS)]
}

pub fn kafka_orders_files() -> Vec<ExampleFile> {
    vec![("users", "users.csv", KAFKA_USERS)]
}

/// Seed 003 §3–5 on its own four events.
pub fn kafka_orders(lang: Lang) -> PipelineDef {
    let mut orders = bronze(
        "orders",
        "kafka.orders_raw",
        SourceSchema::new(&[
            ("order_id", T::Bigint),
            ("user_id", T::Bigint),
            ("amount", T::String),
            ("status", T::String),
            ("created_at", T::Timestamp),
        ]),
        tr(lang, Tr {
            en: "Raw order events from the Kafka topic orders_raw, as delivered: the duplicate of 1001 and the 'bad_data' amount included.",
            ru: "Сырые события заказов из топика Kafka orders_raw, как пришли: вместе с дублем 1001 и суммой 'bad_data'.",
        }),
    );
    orders.kafka_topic = Some("orders_raw".into());
    let users = bronze(
        "users",
        "crm_export",
        SourceSchema::new(&[
            ("uid", T::Bigint),
            ("name", T::String),
            ("country", T::String),
            ("segment", T::String),
        ]),
        tr(
            lang,
            Tr {
                en: "User reference data exported from the CRM, which calls the user id uid.",
                ru:
                    "Справочник пользователей, выгрузка из CRM, где id пользователя называется uid.",
            },
        ),
    );
    let order_rules = vec![
        typed(
            rule(lang, "N1", Normalize, "amount", "trim(amount)", true, Tr {
                en: "Bronze keeps the amount as the producer sent it (text). Silver stores money as an exact DECIMAL(12,2): '99.99' converts, 'bad_data' does not and goes to quarantine (never a silent NULL).",
                ru: "Bronze хранит сумму как её прислал продюсер (текстом). Silver хранит деньги точным DECIMAL(12,2): '99.99' приводится, 'bad_data' — нет и уходит в карантин (никаких тихих NULL).",
            }),
            "DECIMAL(12,2)",
        ),
        with_lookup(
            rule(lang, "E1", Enrich, "country, segment", "u.country, u.segment", true, Tr {
                en: "Country and segment from silver.users, once, here in silver, so every gold model groups the same way. LEFT JOIN: an order of an unknown user keeps its row (warn).",
                ru: "Страна и сегмент из silver.users — один раз, здесь в silver, чтобы все gold-модели группировали одинаково. LEFT JOIN: заказ неизвестного пользователя не теряется (warn).",
            }),
            TableName::silver("users"),
            "u",
            "user_id = u.user_id",
        ),
        rule(lang, "X1", Expect, "user_id", "user_id IS NOT NULL AND user_id > 0", true, Tr {
            en: "Seed 003, principle 4: an order without a valid user cannot be attributed.",
            ru: "Seed 003, принцип 4: заказ без корректного пользователя ни к кому не отнести.",
        }),
        rule(lang, "X2", Expect, "amount", "amount IS NOT NULL AND amount > 0", true, Tr {
            en: "A missing or non-positive amount is not a sale.",
            ru: "Пустая или неположительная сумма — не продажа.",
        }),
        rule(lang, "X3", Expect, "status", "status IN ('PAID', 'PENDING', 'CANCELLED')", true, Tr {
            en: "Only the statuses the business knows; anything else is looked at in quarantine.",
            ru: "Только известные бизнесу статусы; всё остальное разбираем в карантине.",
        }),
    ];
    PipelineDef {
        title: examples::KAFKA_ORDERS.title(lang).into(),
        bronze: vec![orders, users],
        silver: vec![
            {
                let mut users = silver(
                    "users",
                    "users",
                    vec![rule(lang, "N1", Normalize, "country", "upper(trim(country))", true, Tr {
                        en: "Country codes in one form (upper case, no spaces): a conformed dimension.",
                        ru: "Коды стран в одном виде (верхний регистр, без пробелов): согласованное измерение.",
                    })],
                    Some(merge_by(&["user_id"], None, Scd::Scd1)),
                    tr(lang, Tr {
                        en: "One row per user (MERGE by user_id). The CRM's uid is renamed user_id, the name every silver table uses (conformed dimensions, seed 003 §4).",
                        ru: "Одна строка на пользователя (MERGE по user_id). uid из CRM переименован в user_id — имя, общее для всех таблиц silver (согласованные измерения, seed 003 §4).",
                    }),
                );
                users.select = ["uid AS user_id", "name", "country", "segment"]
                    .map(String::from)
                    .to_vec();
                users
            },
            silver(
                "orders",
                "orders",
                order_rules,
                Some(merge_by(&["order_id"], None, Scd::Scd1)),
                tr(lang, Tr {
                    en: "One row per order_id: typed, checked, deduplicated by MERGE (seed 003 §4). Rerunning changes nothing.",
                    ru: "Одна строка на order_id: типизировано, проверено, без дублей через MERGE (seed 003 §4). Повторный запуск ничего не меняет.",
                }),
            ),
        ],
        gold: vec![
            gold(
                "revenue_daily",
                "SELECT CAST(created_at AS DATE) AS report_date,\n       country,\n       SUM(amount) AS revenue,\n       COUNT(*) AS orders_count,\n       CAST(AVG(amount) AS DECIMAL(10,2)) AS avg_order\nFROM silver.orders\nWHERE status = 'PAID'\nGROUP BY CAST(created_at AS DATE), country\nORDER BY report_date, country",
                tr(lang, Tr {
                    en: "Revenue per day and country: PAID orders only (seed 003 §5).",
                    ru: "Выручка по дням и странам: только оплаченные заказы (seed 003 §5).",
                }),
            ),
            gold(
                "user_kpi",
                "SELECT u.user_id,\n       u.name,\n       u.country,\n       u.segment,\n       COUNT(o.order_id) AS orders,\n       COALESCE(SUM(CASE WHEN o.status = 'PAID' THEN o.amount END), 0) AS paid_revenue\nFROM silver.users u\nLEFT JOIN silver.orders o ON o.user_id = u.user_id\nGROUP BY u.user_id, u.name, u.country, u.segment\nORDER BY u.user_id",
                tr(lang, Tr {
                    en: "Per user: orders and paid revenue (a first LTV), denormalized for BI.",
                    ru: "По пользователю: заказы и оплаченная выручка (первый LTV), денормализовано для BI.",
                }),
            ),
        ],
        anti_patterns: Default::default(),
        checks: vec![
            check(
                "R1",
                CheckLevel::Row,
                tr(lang, Tr { en: "Every order in silver has a positive amount", ru: "У каждого заказа в silver положительная сумма" }),
                CheckKind::RowPredicate { table: TableName::silver("orders"), predicate: "amount > 0".into() },
            ),
            check(
                "S1",
                CheckLevel::Schema,
                tr(lang, Tr { en: "amount is DECIMAL(12,2)", ru: "amount — DECIMAL(12,2)" }),
                CheckKind::ColumnType {
                    table: TableName::silver("orders"),
                    column: "amount".into(),
                    data_type: T::Decimal { precision: 12, scale: 2 },
                },
            ),
            check(
                "R2",
                CheckLevel::Row,
                tr(lang, Tr { en: "order_id is never NULL (not_null)", ru: "order_id не бывает NULL (not_null)" }),
                CheckKind::NotNull { table: TableName::silver("orders"), column: "order_id".into() },
            ),
            check(
                "R3",
                CheckLevel::Row,
                tr(lang, Tr { en: "One row per order_id (unique)", ru: "Одна строка на order_id (unique)" }),
                CheckKind::Unique { table: TableName::silver("orders"), columns: vec!["order_id".into()] },
            ),
            check(
                "R4",
                CheckLevel::Row,
                tr(lang, Tr { en: "status is a known status (accepted_values)", ru: "status — известный статус (accepted_values)" }),
                CheckKind::AcceptedValues {
                    table: TableName::silver("orders"),
                    column: "status".into(),
                    values: ["PAID", "PENDING", "CANCELLED"].map(String::from).to_vec(),
                },
            ),
            check(
                "R5",
                CheckLevel::Row,
                tr(lang, Tr { en: "amount between 0 and 10000 (accepted_range)", ru: "amount от 0 до 10000 (accepted_range)" }),
                CheckKind::AcceptedRange {
                    table: TableName::silver("orders"),
                    column: "amount".into(),
                    min: Some("0".into()),
                    max: Some("10000".into()),
                },
            ),
            check(
                "R6",
                CheckLevel::Row,
                tr(lang, Tr { en: "Every order's user exists in silver.users (relationships)", ru: "Пользователь каждого заказа есть в silver.users (relationships)" }),
                CheckKind::Relationships {
                    table: TableName::silver("orders"),
                    column: "user_id".into(),
                    to: TableName::silver("users"),
                    field: "user_id".into(),
                },
            ),
            check(
                "S2",
                CheckLevel::Schema,
                tr(lang, Tr { en: "silver.orders keeps its contract", ru: "silver.orders соблюдает контракт" }),
                CheckKind::Contract {
                    table: TableName::silver("orders"),
                    columns: [
                        ("order_id", "BIGINT", false),
                        ("user_id", "BIGINT", false),
                        ("amount", "DECIMAL(12,2)", false),
                        ("status", "STRING", false),
                        ("created_at", "TIMESTAMP", true),
                        ("country", "STRING", true),
                        ("segment", "STRING", true),
                    ]
                    .into_iter()
                    .map(|(n, t, nullable)| crate::model::ContractColumn {
                        name: n.into(),
                        data_type: t.parse().unwrap_or(T::String),
                        nullable,
                    })
                    .collect(),
                },
            ),
            check(
                "A1",
                CheckLevel::Aggregate,
                tr(lang, Tr {
                    en: "Bronze events = silver orders + quarantine + duplicates removed",
                    ru: "События bronze = заказы silver + карантин + удалённые дубли",
                }),
                reconcile("orders", "orders"),
            ),
            check(
                "A2",
                CheckLevel::Aggregate,
                tr(lang, Tr {
                    en: "Share of events that did not reach silver (warn above 5%)",
                    ru: "Доля событий, не дошедших до silver (предупреждение выше 5%)",
                }),
                CheckKind::FilteredShare {
                    bronze_table: TableName::bronze("orders"),
                    silver_table: TableName::silver("orders"),
                    warn_above_pct: 5.0,
                },
            ),
            check(
                "A3",
                CheckLevel::Aggregate,
                tr(lang, Tr {
                    en: "Audit: gold revenue equals silver's PAID amount (no rows expected)",
                    ru: "Аудит: выручка gold равна сумме PAID в silver (строк быть не должно)",
                }),
                CheckKind::Audit {
                    sql: "SELECT g.revenue AS gold_revenue, s.paid AS silver_paid\nFROM (SELECT SUM(revenue) AS revenue FROM gold.revenue_daily) g\nCROSS JOIN (SELECT SUM(amount) AS paid FROM silver.orders WHERE status = 'PAID') s\nWHERE g.revenue IS DISTINCT FROM s.paid".into(),
                },
            ),
        ],
    }
}

const RETRY_FIRST: &[u8] =
    include_bytes!("../../../../static/examples/landing_retry/batch_2024_01_15.json");
const RETRY_SECOND: &[u8] =
    include_bytes!("../../../../static/examples/landing_retry/batch_2024_01_15_retry.json");

pub fn landing_retry_files() -> Vec<ExampleFile> {
    vec![
        ("orders", "batch_2024_01_15.json", RETRY_FIRST),
        ("orders", "batch_2024_01_15_retry.json", RETRY_SECOND),
    ]
}

/// Seed 000 §4: a landing-zone retry re-sends `order_1`; `order_3` has no amount.
pub fn landing_retry(lang: Lang) -> PipelineDef {
    PipelineDef {
        title: examples::LANDING_RETRY.title(lang).into(),
        bronze: vec![bronze(
            "orders",
            "ecom_files_s3",
            SourceSchema::new(&[
                ("id", T::String),
                ("amount", T::Decimal { precision: 10, scale: 2 }),
                ("status", T::String),
            ]),
            tr(lang, Tr {
                en: "Both files as received: order_1 twice (the retry), order_3 with a null amount.",
                ru: "Оба файла как пришли: order_1 дважды (повтор), order_3 с пустой суммой.",
            }),
        )],
        silver: vec![silver(
            "orders",
            "orders",
            vec![
                rule(lang, "X1", Expect, "amount", "amount IS NOT NULL", true, Tr {
                    en: "An order without an amount cannot be counted in revenue.",
                    ru: "Заказ без суммы нельзя учесть в выручке.",
                }),
                rule(lang, "X2", Expect, "status", "status IN ('NEW', 'PAID', 'SHIPPED', 'CANCELLED')", true, Tr {
                    en: "Known statuses only; 'ERROR' is a source problem to look at.",
                    ru: "Только известные статусы; 'ERROR' — проблема источника, её надо разобрать.",
                }),
            ],
            Some(merge_by(&["id"], None, Scd::Scd1)),
            tr(lang, Tr {
                en: "One row per order id: the re-sent order_1 is a duplicate, removed by MERGE.",
                ru: "Одна строка на id заказа: пересланный order_1 — дубль, его убирает MERGE.",
            }),
        )],
        gold: vec![gold(
            "orders_by_status",
            "SELECT status, COUNT(*) AS orders, SUM(amount) AS amount\nFROM silver.orders\nGROUP BY status\nORDER BY status",
            tr(lang, Tr { en: "Orders and amount per status.", ru: "Заказы и сумма по статусам." }),
        )],
        anti_patterns: Default::default(),
        checks: vec![
            check(
                "R1",
                CheckLevel::Row,
                tr(lang, Tr { en: "No order without an amount in silver", ru: "В silver нет заказов без суммы" }),
                CheckKind::RowPredicate { table: TableName::silver("orders"), predicate: "amount IS NOT NULL".into() },
            ),
            check(
                "A1",
                CheckLevel::Aggregate,
                tr(lang, Tr {
                    en: "Bronze rows = silver + quarantine + duplicates removed",
                    ru: "Строки bronze = silver + карантин + удалённые дубли",
                }),
                reconcile("orders", "orders"),
            ),
        ],
    }
}

const SHOP_ORDERS: &[u8] = include_bytes!("../../../../static/examples/ecommerce/orders.csv");
const SHOP_CUSTOMERS: &[u8] =
    include_bytes!("../../../../static/examples/ecommerce/customers.json");

pub fn ecommerce_files() -> Vec<ExampleFile> {
    vec![
        ("customers", "customers.json", SHOP_CUSTOMERS),
        ("orders", "orders.csv", SHOP_ORDERS),
    ]
}

/// Seed 001: explicit schemas, PERMISSIVE orders, SCD1 customers, revenue per city.
pub fn ecommerce(lang: Lang) -> PipelineDef {
    let mut orders = bronze(
        "orders",
        "shop_exports",
        SourceSchema::new(&[
            ("order_id", T::Int),
            ("customer_id", T::Int),
            ("product_id", T::Int),
            ("quantity", T::Int),
            ("price", T::Decimal { precision: 10, scale: 2 }),
            ("order_date", T::Date),
            ("status", T::String),
        ]),
        tr(lang, Tr {
            en: "orders.csv with its explicit schema, stored typed (PERMISSIVE, seed 001): rows that do not fit keep their text in _corrupt_record.",
            ru: "orders.csv с явной схемой, хранится типизированно (PERMISSIVE, seed 001): неподходящие строки сохраняют текст в _corrupt_record.",
        }),
    );
    orders.mode = BronzeMode::Permissive;
    let customers = bronze(
        "customers",
        "shop_exports",
        SourceSchema::new(&[
            ("customer_id", T::Int),
            ("name", T::String),
            ("email", T::String),
            ("city", T::String),
            ("registration_date", T::Date),
            ("updated_at", T::Timestamp),
        ]),
        tr(lang, Tr {
            en: "customers.json (JSON Lines), raw: customer 102 appears twice (moved city), the last line is cut off.",
            ru: "customers.json (JSON Lines), как есть: клиент 102 встречается дважды (сменил город), последняя строка обрезана.",
        }),
    );
    PipelineDef {
        title: examples::ECOMMERCE.title(lang).into(),
        bronze: vec![customers, orders],
        silver: vec![
            silver(
                "customers",
                "customers",
                vec![rule(lang, "N1", Normalize, "email", "lower(trim(email))", true, Tr {
                    en: "E-mails compared as written by people differ only in case and spaces: one form.",
                    ru: "E-mail, набранные людьми, отличаются регистром и пробелами: приводим к одному виду.",
                })],
                Some(merge_by(&["customer_id"], Some("updated_at"), Scd::Scd1)),
                tr(lang, Tr {
                    en: "SCD type 1: the current row per customer, by updated_at (not by the order the records arrived in).",
                    ru: "SCD type 1: текущая строка на клиента по updated_at (а не по порядку прихода записей).",
                }),
            ),
            silver(
                "orders",
                "orders",
                vec![
                    with_lookup(
                        rule(lang, "E1", Enrich, "city, customer_name", "c.city, c.name", true, Tr {
                            en: "The customer's current city from silver.customers (LEFT JOIN: an order of an unknown customer stays, with NULL, and is counted).",
                            ru: "Текущий город клиента из silver.customers (LEFT JOIN: заказ неизвестного клиента остаётся с NULL и учитывается).",
                        }),
                        TableName::silver("customers"),
                        "c",
                        "customer_id = c.customer_id",
                    ),
                    rule(lang, "E2", Enrich, "revenue", "quantity * price", true, Tr {
                        en: "Line revenue, computed once in silver.",
                        ru: "Выручка строки, считается один раз в silver.",
                    }),
                    rule(lang, "X1", Expect, "quantity", "quantity > 0", true, Tr {
                        en: "A quantity must be positive.",
                        ru: "Количество должно быть положительным.",
                    }),
                    rule(lang, "X2", Expect, "status", "status IN ('delivered', 'shipped', 'cancelled')", true, Tr {
                        en: "Known order statuses only.",
                        ru: "Только известные статусы заказа.",
                    }),
                ],
                Some(merge_by(&["order_id"], None, Scd::Scd1)),
                tr(lang, Tr {
                    en: "Orders with the customer's city: readable rows only (corrupt ones are in quarantine with their reasons).",
                    ru: "Заказы с городом клиента: только читаемые строки (битые — в карантине с причинами).",
                }),
            ),
        ],
        gold: vec![gold(
            "revenue_by_city",
            "SELECT city, COUNT(*) AS orders, SUM(revenue) AS revenue\nFROM silver.orders\nWHERE status <> 'cancelled'\nGROUP BY city\nORDER BY revenue DESC",
            tr(lang, Tr {
                en: "Revenue per customer city (current city: SCD1), cancelled orders excluded.",
                ru: "Выручка по городу клиента (текущему: SCD1), без отменённых заказов.",
            }),
        )],
        anti_patterns: Default::default(),
        checks: vec![
            check(
                "S1",
                CheckLevel::Schema,
                tr(lang, Tr { en: "price is DECIMAL(10,2)", ru: "price — DECIMAL(10,2)" }),
                CheckKind::ColumnType {
                    table: TableName::silver("orders"),
                    column: "price".into(),
                    data_type: T::Decimal { precision: 10, scale: 2 },
                },
            ),
            check(
                "A1",
                CheckLevel::Aggregate,
                tr(lang, Tr {
                    en: "Bronze orders = silver + quarantine + duplicates removed",
                    ru: "Заказы bronze = silver + карантин + удалённые дубли",
                }),
                reconcile("orders", "orders"),
            ),
            check(
                "A2",
                CheckLevel::Aggregate,
                tr(lang, Tr {
                    en: "Bronze customers = silver + quarantine + superseded versions",
                    ru: "Клиенты bronze = silver + карантин + устаревшие версии",
                }),
                reconcile("customers", "customers"),
            ),
        ],
    }
}

const CDC_EVENTS: &[u8] = include_bytes!("../../../../static/examples/cdc_order/order_cdc.jsonl");

pub fn cdc_order_files() -> Vec<ExampleFile> {
    vec![("order_cdc", "order_cdc.jsonl", CDC_EVENTS)]
}

/// Seed 000 §3: five CDC events of one order → SCD1 current state and SCD2 history.
pub fn cdc_order(lang: Lang) -> PipelineDef {
    let cdc = |scd: Scd| MergeSpec {
        keys: vec!["order_id".into()],
        sequence_by: Some("updated_at".into()),
        stored_as: scd,
        delete_when: Some("op = 'd'".into()),
        track_history_except: vec!["op".into(), "lsn".into()],
        ..Default::default()
    };
    let amount = || {
        typed(
            rule(
                lang,
                "N1",
                Normalize,
                "amount",
                "amount",
                true,
                Tr {
                    en: "The source sends amounts as text; silver keeps an exact DECIMAL(10,2).",
                    ru: "Источник присылает суммы текстом; silver хранит точный DECIMAL(10,2).",
                },
            ),
            "DECIMAL(10,2)",
        )
    };
    PipelineDef {
        title: examples::CDC_ORDER.title(lang).into(),
        bronze: vec![bronze(
            "order_cdc",
            "debezium.shop.orders",
            SourceSchema::new(&[
                ("op", T::String),
                ("lsn", T::Bigint),
                ("order_id", T::Bigint),
                ("updated_at", T::Timestamp),
                ("quantity", T::Int),
                ("address", T::String),
                ("coupon", T::String),
                ("amount", T::String),
                ("status", T::String),
            ]),
            tr(lang, Tr {
                en: "Five change events of order 7001, all kept: they are its history, not duplicates. The coupon event (10:30) arrived before the address change (10:20).",
                ru: "Пять событий изменения заказа 7001, все сохранены: это его история, а не дубли. Событие с купоном (10:30) пришло раньше смены адреса (10:20).",
            }),
        )],
        silver: vec![
            silver(
                "order_current",
                "order_cdc",
                vec![amount()],
                Some(cdc(Scd::Scd1)),
                tr(lang, Tr {
                    en: "SCD type 1: the order as it is now (the latest event by updated_at); older states are gone.",
                    ru: "SCD type 1: заказ как он есть сейчас (последнее событие по updated_at); прежние состояния не хранятся.",
                }),
            ),
            silver(
                "order_history",
                "order_cdc",
                vec![amount()],
                Some(cdc(Scd::Scd2)),
                tr(lang, Tr {
                    en: "SCD type 2: every version with valid_from / valid_to / is_current, in updated_at order whatever the arrival order.",
                    ru: "SCD type 2: все версии с valid_from / valid_to / is_current в порядке updated_at, независимо от порядка прихода.",
                }),
            ),
        ],
        gold: vec![gold(
            "time_in_status",
            "SELECT status,\n       COUNT(*) AS versions,\n       MIN(valid_from) AS first_at,\n       MAX(COALESCE(valid_to, valid_from)) AS last_at\nFROM silver.order_history\nGROUP BY status\nORDER BY first_at",
            tr(lang, Tr {
                en: "How the order moved through its statuses, from the SCD2 history.",
                ru: "Как заказ проходил статусы — по истории SCD2.",
            }),
        )],
        anti_patterns: Default::default(),
        checks: vec![
            check(
                "R1",
                CheckLevel::Row,
                tr(lang, Tr {
                    en: "Exactly the open version is current",
                    ru: "Текущая ровно открытая версия",
                }),
                CheckKind::RowPredicate {
                    table: TableName::silver("order_history"),
                    predicate: "is_current = (valid_to IS NULL)".into(),
                },
            ),
            check(
                "A1",
                CheckLevel::Aggregate,
                tr(lang, Tr {
                    en: "Events = current rows + superseded states",
                    ru: "События = текущие строки + устаревшие состояния",
                }),
                reconcile("order_cdc", "order_current"),
            ),
            check(
                "A2",
                CheckLevel::Aggregate,
                tr(lang, Tr {
                    en: "Events = history versions + duplicates and deletes",
                    ru: "События = версии истории + дубли и удаления",
                }),
                reconcile("order_cdc", "order_history"),
            ),
        ],
    }
}
