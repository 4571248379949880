//! The bundled examples as the scenario picker lists them: key and title in
//! each language. The engine holds their definitions and data, in this
//! order, and takes each definition's title from here.

use crate::request::Lang;

/// A bundled example: its key (`Request::LoadExample`'s `example`) and title.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExampleInfo {
    pub name: &'static str,
    pub title_en: &'static str,
    pub title_ru: &'static str,
}

impl ExampleInfo {
    /// The title in `lang` (the definition's `title` when loaded in `lang`).
    pub fn title(&self, lang: Lang) -> &'static str {
        match lang {
            Lang::En => self.title_en,
            Lang::Ru => self.title_ru,
        }
    }
}

/// Key of the example the playground opens with.
pub const DEFAULT_EXAMPLE: &str = "nyc_taxi_silver";

/// Seed 002's silver module on real NYC taxi trips (the default).
pub const NYC_TAXI: ExampleInfo = ExampleInfo {
    name: DEFAULT_EXAMPLE,
    title_en: "NYC taxi: silver module",
    title_ru: "NYC taxi: модуль silver",
};

/// Raw Kafka events deduplicated and merged into silver, with revenue in gold.
pub const KAFKA_ORDERS: ExampleInfo = ExampleInfo {
    name: "kafka_orders",
    title_en: "Orders from Kafka: dedup, MERGE, revenue_daily",
    title_ru: "Заказы из Kafka: дедупликация, MERGE, revenue_daily",
};

/// Two landing-zone files, the retry re-sending an order.
pub const LANDING_RETRY: ExampleInfo = ExampleInfo {
    name: "landing_retry",
    title_en: "Landing-zone retry: a re-sent order and a null amount",
    title_ru: "Повтор в landing zone: пересланный заказ и пустая сумма",
};

/// Explicit schemas, typed and raw bronze, SCD1 customers.
pub const ECOMMERCE: ExampleInfo = ExampleInfo {
    name: "ecommerce",
    title_en: "E-commerce: explicit schemas, SCD1 customers, revenue per city",
    title_ru: "E-commerce: явные схемы, клиенты SCD1, выручка по городам",
};

/// One order's CDC events as SCD1 current state and SCD2 history.
pub const CDC_ORDER: ExampleInfo = ExampleInfo {
    name: "cdc_order",
    title_en: "One order's CDC lifecycle: SCD1 current state vs SCD2 history",
    title_ru: "Жизненный цикл заказа в CDC: текущее состояние SCD1 и история SCD2",
};

/// Every bundled example, in picker order.
pub const EXAMPLES: &[ExampleInfo] = &[NYC_TAXI, KAFKA_ORDERS, LANDING_RETRY, ECOMMERCE, CDC_ORDER];

/// `(name, title)` of every example, titles in `lang`, for a picker.
pub fn example_catalog(lang: Lang) -> Vec<(&'static str, String)> {
    EXAMPLES
        .iter()
        .map(|e| (e.name, e.title(lang).to_string()))
        .collect()
}

/// Names of all examples.
pub fn example_names() -> Vec<&'static str> {
    EXAMPLES.iter().map(|e| e.name).collect()
}
