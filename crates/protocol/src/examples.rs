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
    /// Files too large to compile into the engine, fetched when the example
    /// is loaded, in this order, before its bundled files (empty for most).
    pub downloads: &'static [Download],
}

/// A file an example ingests that is served beside the app instead of
/// compiled into it: `path` (relative to the page, gzip-compressed; the
/// deploy build copies `static/downloads/` there) holds file `file` of
/// `bytes` bytes (`gzip_bytes` compressed), ingested into bronze table `table`.
/// The browser's worker fetches and decompresses it; a native caller gives
/// the decompressed bytes with `Playground::add_download`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Download {
    pub table: &'static str,
    pub file: &'static str,
    pub path: &'static str,
    pub bytes: u64,
    pub gzip_bytes: u64,
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
    downloads: &[],
};

/// Raw Kafka events deduplicated and merged into silver, with revenue in gold.
pub const KAFKA_ORDERS: ExampleInfo = ExampleInfo {
    name: "kafka_orders",
    title_en: "Orders from Kafka: dedup, MERGE, revenue_daily",
    title_ru: "Заказы из Kafka: дедупликация, MERGE, revenue_daily",
    downloads: &[],
};

/// Two landing-zone files, the retry re-sending an order.
pub const LANDING_RETRY: ExampleInfo = ExampleInfo {
    name: "landing_retry",
    title_en: "Landing-zone retry: a re-sent order and a null amount",
    title_ru: "Повтор в landing zone: пересланный заказ и пустая сумма",
    downloads: &[],
};

/// Explicit schemas, typed and raw bronze, SCD1 customers.
pub const ECOMMERCE: ExampleInfo = ExampleInfo {
    name: "ecommerce",
    title_en: "E-commerce: explicit schemas, SCD1 customers, revenue per city",
    title_ru: "E-commerce: явные схемы, клиенты SCD1, выручка по городам",
    downloads: &[],
};

/// One order's CDC events as SCD1 current state and SCD2 history.
pub const CDC_ORDER: ExampleInfo = ExampleInfo {
    name: "cdc_order",
    title_en: "One order's CDC lifecycle: SCD1 current state vs SCD2 history",
    title_ru: "Жизненный цикл заказа в CDC: текущее состояние SCD1 и история SCD2",
    downloads: &[],
};

/// The 2013 NYC flights (nycflights13, CC0) and their lookups.
const FLIGHTS_DOWNLOADS: &[Download] = &[
    Download {
        table: "airlines",
        file: "airlines.csv",
        path: "downloads/nycflights13/airlines.csv.gz",
        bytes: 386,
        gzip_bytes: 229,
    },
    Download {
        table: "airports",
        file: "airports.csv",
        path: "downloads/nycflights13/airports.csv.gz",
        bytes: 104_302,
        gzip_bytes: 37_766,
    },
    Download {
        table: "planes",
        file: "planes.csv",
        path: "downloads/nycflights13/planes.csv.gz",
        bytes: 247_198,
        gzip_bytes: 14_574,
    },
    Download {
        table: "weather",
        file: "weather.csv",
        path: "downloads/nycflights13/weather.csv.gz",
        bytes: 2_294_215,
        gzip_bytes: 398_032,
    },
    Download {
        table: "flights",
        file: "flights.csv",
        path: "downloads/nycflights13/flights.csv.gz",
        bytes: 31_053_850,
        gzip_bytes: 8_200_150,
    },
];

/// A year of real data: all 336,776 flights from New York in 2013, typed,
/// filtered and enriched in silver, delays by carrier and month in gold.
pub const FLIGHTS: ExampleInfo = ExampleInfo {
    name: "nyc_flights_2013",
    title_en: "NYC flights 2013: 336,776 flights, 8 MB download",
    title_ru: "Рейсы NYC 2013: 336 776 рейсов, загрузка 8 МБ",
    downloads: FLIGHTS_DOWNLOADS,
};

/// Every bundled example, in picker order.
pub const EXAMPLES: &[ExampleInfo] =
    &[NYC_TAXI, KAFKA_ORDERS, LANDING_RETRY, ECOMMERCE, CDC_ORDER, FLIGHTS];

/// The example named `name`, if there is one.
pub fn example_info(name: &str) -> Option<&'static ExampleInfo> {
    EXAMPLES.iter().find(|e| e.name == name)
}

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
