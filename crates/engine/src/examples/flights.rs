//! A year of real data: every flight that left New York City in 2013
//! (nycflights13, CC0: 336,776 flights, 19 columns, missing values written
//! `NA`) with its four lookups (airlines, airports, planes, hourly weather).
//! The files are downloads ([`medallion_protocol::examples::FLIGHTS`]), not
//! compiled into the engine: `static/downloads/nycflights13/*.csv.gz`.
//!
//! Bronze → silver (typed, cancelled and diverted flights quarantined, four
//! lookups) → gold (delays by carrier and month) → checks on the three
//! levels (seed 002's rule registry and checks, on data of real size).

use medallion_protocol::examples;
use medallion_protocol::TableName;

use crate::api::Lang;
use crate::model::{
    BronzeMode, BronzeTableDef, CheckKind, CheckLevel, GoldModelDef, PipelineDef,
    SilverTableDef,
};
use crate::silver::rules::{Lookup, RuleKind, RuleRegistry};
use crate::silver::source::{ColumnType as T, SourceSchema};
use medallion_protocol::bronze::IngestOptions;

use super::parts::{rule, tr, ExampleFile, Tr};

/// Every file of the example is a download.
pub(super) fn flights_files() -> Vec<ExampleFile> {
    vec![]
}

/// The flights pipeline (see the module's text). Silver keeps 327,346 of
/// the 336,776 flights: 8,255 cancelled (no departure time) and 1,175
/// diverted (no arrival delay) go to the quarantine; gold has 185 rows
/// (carrier × month).
pub fn nyc_flights(lang: Lang) -> PipelineDef {
    let flights_schema = SourceSchema::new(&[
        ("year", T::Int),
        ("month", T::Int),
        ("day", T::Int),
        ("dep_time", T::Int),
        ("sched_dep_time", T::Int),
        ("dep_delay", T::Int),
        ("arr_time", T::Int),
        ("sched_arr_time", T::Int),
        ("arr_delay", T::Int),
        ("carrier", T::String),
        ("flight", T::Int),
        ("tailnum", T::String),
        ("origin", T::String),
        ("dest", T::String),
        ("air_time", T::Int),
        ("distance", T::Int),
        ("hour", T::Int),
        ("minute", T::Int),
        ("time_hour", T::Timestamp),
    ]);
    let lookup_table = |name: &str, schema: SourceSchema, en: &'static str, ru: &'static str| {
        BronzeTableDef {
            name: name.into(),
            source_system: "nycflights13".into(),
            schema,
            description: tr(lang, Tr { en, ru }),
            kafka_topic: None,
            mode: BronzeMode::Raw,
            ingest_options: na_is_null(),
        }
    };
    let lookup = |table: &str, alias: &str, on: &str| Lookup {
        table: TableName::bronze(table),
        alias: alias.into(),
        on: on.into(),
    };
    use RuleKind::*;
    let mut e1 = rule(lang, "E1", Enrich, "carrier_name", "al.name", true, Tr {
        en: "The carrier's name from the airlines lookup (16 carriers), so gold reads 'United Air Lines Inc.' instead of UA.",
        ru: "Название перевозчика из справочника airlines (16 перевозчиков): в gold «United Air Lines Inc.», а не UA.",
    });
    e1.lookup = Some(lookup("airlines", "al", "carrier = al.carrier"));
    let mut e2 = rule(lang, "E2", Enrich, "dest_name", "ap.name", true, Tr {
        en: "The destination airport's name. LEFT JOIN: 7,537 flights go to San Juan, St. Thomas and Ponce (BQN, SJU, STT, PSE), which the airports lookup lacks; they keep their rows with a NULL name.",
        ru: "Название аэропорта назначения. LEFT JOIN: 7 537 рейсов летят в Сан-Хуан, Сент-Томас и Понсе (BQN, SJU, STT, PSE), которых нет в справочнике аэропортов; строки остаются, название NULL.",
    });
    e2.lookup = Some(lookup("airports", "ap", "dest = ap.faa"));
    let mut e3 = rule(lang, "E3", Enrich, "plane_seats", "pl.seats", true, Tr {
        en: "Seats of the aircraft from the planes lookup, by tail number. 48,329 flights (mostly American and Envoy) fly planes the lookup does not list: NULL, not a lost row.",
        ru: "Число мест самолёта из справочника planes по бортовому номеру. 48 329 рейсов (в основном American и Envoy) — на самолётах, которых нет в справочнике: NULL, а не потерянная строка.",
    });
    e3.lookup = Some(lookup("planes", "pl", "tailnum = pl.tailnum"));
    let mut e4 = rule(lang, "E4", Enrich, "dep_temp_f, dep_visib_mi", "w.temp, w.visib", false, Tr {
        en: "Exercise: the weather at the origin in the hour of departure (a lookup on two columns: origin and time_hour). Switch it on and compare late flights in fog.",
        ru: "Задание: погода в аэропорту вылета в час вылета (справочник по двум колонкам: origin и time_hour). Включите и сравните опоздания в туман.",
    });
    e4.lookup = Some(lookup("weather", "w", "origin = w.origin AND time_hour = w.time_hour"));
    let rules = vec![
        rule(lang, "F1", Filter, "dep_time", "dep_time IS NULL", true, Tr {
            en: "A cancelled flight never left: it has no departure time and no delay to average. It waits in the quarantine, counted, instead of pulling averages toward NULL.",
            ru: "Отменённый рейс не вылетел: у него нет времени вылета и задержки. Он ждёт в карантине, посчитанный, а не портит средние.",
        }),
        rule(lang, "F2", Filter, "arr_delay", "dep_time IS NOT NULL AND arr_delay IS NULL", true, Tr {
            en: "A flight that left but has no arrival delay was diverted or lost its arrival record: its delay is unknown, not zero.",
            ru: "Рейс вылетел, но задержки прилёта нет: его перенаправили или потеряли запись о прилёте. Задержка неизвестна, а не ноль.",
        }),
        rule(lang, "N1", Normalize, "carrier", "upper(trim(carrier))", true, Tr {
            en: "Carrier codes compared and joined as upper-case codes with no spaces, whatever a source sends.",
            ru: "Коды перевозчиков — заглавными, без пробелов, как бы их ни прислал источник: так они сравниваются и соединяются.",
        }),
        e1,
        e2,
        e3,
        e4,
        rule(lang, "E5", Enrich, "late", "arr_delay > 15", true, Tr {
            en: "Late means more than 15 minutes after schedule at arrival (the US DOT's definition), decided once here for every consumer.",
            ru: "Опоздание — прилёт позже расписания больше чем на 15 минут (определение US DOT); решаем один раз здесь для всех потребителей.",
        }),
    ];

    let silver = TableName::silver("flights");
    let bronze = TableName::bronze("flights");
    let check = |id: &str, level: CheckLevel, d: Tr, kind: CheckKind| {
        super::parts::check(lang, id, level, d, kind)
    };
    let checks = vec![
        check("R1", CheckLevel::Row, Tr {
            en: "Every flight in silver has its arrival delay",
            ru: "У каждого рейса в silver есть задержка прилёта",
        }, CheckKind::RowPredicate {
            table: silver.clone(),
            predicate: "arr_delay IS NOT NULL AND dep_delay IS NOT NULL".into(),
        }),
        check("R2", CheckLevel::Row, Tr {
            en: "Flights leave from the three NYC airports (accepted_values)",
            ru: "Рейсы вылетают из трёх аэропортов Нью-Йорка (accepted_values)",
        }, CheckKind::AcceptedValues {
            table: silver.clone(),
            column: "origin".into(),
            values: ["EWR", "JFK", "LGA"].map(String::from).to_vec(),
        }),
        check("R3", CheckLevel::Row, Tr {
            en: "month between 1 and 12 (accepted_range)",
            ru: "month от 1 до 12 (accepted_range)",
        }, CheckKind::AcceptedRange {
            table: silver.clone(),
            column: "month".into(),
            min: Some("1".into()),
            max: Some("12".into()),
        }),
        check("S1", CheckLevel::Schema, Tr {
            en: "Delays are INT minutes",
            ru: "Задержки — INT, в минутах",
        }, CheckKind::ColumnType {
            table: silver.clone(),
            column: "arr_delay".into(),
            data_type: T::Int,
        }),
        check("S2", CheckLevel::Schema, Tr {
            en: "Enrichment columns exist",
            ru: "Колонки обогащения на месте",
        }, CheckKind::ColumnsExist {
            table: silver.clone(),
            columns: ["carrier_name", "dest_name", "plane_seats", "late"].map(String::from).to_vec(),
        }),
        check("S3", CheckLevel::Schema, Tr {
            en: "Every declared source column arrived",
            ru: "Все объявленные колонки источника пришли",
        }, CheckKind::SourceColumnsPresent {
            bronze_table: bronze.clone(),
        }),
        check("A1", CheckLevel::Aggregate, Tr {
            en: "Bronze rows = silver rows + quarantined rows",
            ru: "Строк в bronze = silver + карантин",
        }, CheckKind::Reconciliation {
            bronze_table: bronze.clone(),
            silver_table: silver.clone(),
        }),
        check("A2", CheckLevel::Aggregate, Tr {
            en: "Share of flights filtered out (warn above 5%)",
            ru: "Доля отфильтрованных рейсов (предупреждение выше 5%)",
        }, CheckKind::FilteredShare {
            bronze_table: bronze.clone(),
            silver_table: silver.clone(),
            warn_above_pct: 5.0,
        }),
        check("A3", CheckLevel::Aggregate, Tr {
            en: "Average distance, bronze vs silver",
            ru: "Средняя дальность, bronze и silver",
        }, CheckKind::CompareAverage {
            silver_table: silver.clone(),
            column: "distance".into(),
        }),
    ];

    PipelineDef {
        title: examples::FLIGHTS.title(lang).into(),
        bronze: vec![
            BronzeTableDef {
                name: "flights".into(),
                source_system: "nycflights13".into(),
                schema: flights_schema,
                description: tr(lang, Tr {
                    en: "Every flight from EWR, JFK and LGA in 2013 as the file has it: each CSV line in raw_payload (NA for a missing value), plus audit columns.",
                    ru: "Все рейсы из EWR, JFK и LGA за 2013 год как в файле: каждая строка CSV в raw_payload (NA — пропуск) плюс аудит-колонки.",
                }),
                kafka_topic: None,
                mode: BronzeMode::Raw,
                ingest_options: na_is_null(),
            },
            lookup_table(
                "airlines",
                SourceSchema::new(&[("carrier", T::String), ("name", T::String)]),
                "Carrier codes and names (16).",
                "Коды и названия перевозчиков (16).",
            ),
            lookup_table(
                "airports",
                SourceSchema::new(&[
                    ("faa", T::String),
                    ("name", T::String),
                    ("lat", T::Double),
                    ("lon", T::Double),
                    ("alt", T::Int),
                    ("tz", T::Double),
                    ("dst", T::String),
                    ("tzone", T::String),
                ]),
                "US airports by FAA code (1,458).",
                "Аэропорты США по коду FAA (1 458).",
            ),
            lookup_table(
                "planes",
                SourceSchema::new(&[
                    ("tailnum", T::String),
                    ("year", T::Int),
                    ("type", T::String),
                    ("manufacturer", T::String),
                    ("model", T::String),
                    ("engines", T::Int),
                    ("seats", T::Int),
                    ("speed", T::Int),
                    ("engine", T::String),
                ]),
                "Aircraft by tail number (3,322).",
                "Самолёты по бортовому номеру (3 322).",
            ),
            lookup_table(
                "weather",
                SourceSchema::new(&[
                    ("origin", T::String),
                    ("year", T::Int),
                    ("month", T::Int),
                    ("day", T::Int),
                    ("hour", T::Int),
                    ("temp", T::Double),
                    ("dewp", T::Double),
                    ("humid", T::Double),
                    ("wind_dir", T::Int),
                    ("wind_speed", T::Double),
                    ("wind_gust", T::Double),
                    ("precip", T::Double),
                    ("pressure", T::Double),
                    ("visib", T::Double),
                    ("time_hour", T::Timestamp),
                ]),
                "Hourly weather at the three airports (26,115 hours).",
                "Погода по часам в трёх аэропортах (26 115 часов).",
            ),
        ],
        silver: vec![SilverTableDef {
            name: "flights".into(),
            source: "flights".into(),
            rules: RuleRegistry { rules },
            description: tr(lang, Tr {
                en: "Flights that left and arrived: typed, with carrier, destination and aircraft from the lookups, and whether they were late.",
                ru: "Рейсы, которые вылетели и прилетели: с типами, перевозчиком, аэропортом назначения и самолётом из справочников и признаком опоздания.",
            }),
            merge: None,
            select: vec![],
            explode: None,
        }],
        gold: vec![GoldModelDef {
            name: "delays_by_carrier_month".into(),
            sql: "SELECT carrier,\n       carrier_name,\n       month,\n       COUNT(*) AS flights,\n       ROUND(AVG(dep_delay), 2) AS avg_dep_delay_min,\n       ROUND(AVG(arr_delay), 2) AS avg_arr_delay_min,\n       ROUND(100.0 * SUM(CASE WHEN late THEN 1 ELSE 0 END) / COUNT(*), 1) AS late_pct\nFROM silver.flights\nGROUP BY carrier, carrier_name, month\nORDER BY carrier, month".into(),
            description: tr(lang, Tr {
                en: "Flights, average delays (minutes) and the share arriving late, per carrier and month, from silver only.",
                ru: "Рейсы, средние задержки (минуты) и доля опоздавших по перевозчикам и месяцам, только из silver.",
            }),
            merge_on: vec![],
        }],
        checks,
        anti_patterns: Default::default(),
    }
}

/// The files write a missing value as `NA`: silver reads it as NULL.
fn na_is_null() -> IngestOptions {
    IngestOptions {
        null_tokens: Some(vec!["NA".into()]),
        ..Default::default()
    }
}
