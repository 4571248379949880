//! The NYC taxi example: seed `002_b94de4dc08a8f02d.txt` ("silver module")
//! on 266 real yellow-taxi trips of July 2020 and the TLC zone lookup.

use medallion_protocol::examples;
use medallion_protocol::TableName;

use crate::api::Lang;
use crate::model::{
    BronzeMode, BronzeTableDef, CheckDef, CheckKind, CheckLevel, GoldModelDef, PipelineDef,
    Severity, SilverTableDef,
};
use crate::silver::rules::{Lookup, RuleKind, RuleParam, RuleRegistry};
use crate::silver::source::{ColumnType as T, SourceSchema};

use super::parts::{rule, tr, typed, ExampleFile, Tr};

/// 266 real NYC yellow-taxi trips of July 2020 (TLC, 18 columns, no `Airport_fee`).
pub const TAXI_TRIPS_CSV: &[u8] =
    include_bytes!("../../../../static/examples/nyc_taxi/yellow_tripdata_sample_2020-07.csv");
/// TLC zone lookup: 265 zones, `locationid,borough,zone,service_zone`.
pub const TAXI_ZONES_CSV: &[u8] =
    include_bytes!("../../../../static/examples/nyc_taxi/taxi_zone_lookup.csv");

pub(super) fn nyc_taxi_files() -> Vec<ExampleFile> {
    vec![
        ("taxi_zone_lookup", "taxi_zone_lookup.csv", TAXI_ZONES_CSV),
        (
            "nyc_taxi_yellow",
            "yellow_tripdata_sample_2020-07.csv",
            TAXI_TRIPS_CSV,
        ),
    ]
}

/// Seed `002_b94de4dc08a8f02d.txt` ("silver module") on the real July 2020 sample:
/// rules F1–F3, N1–N4, E1–E3, the exercises F4, N5, E4 (off), one gold model
/// and checks on the three levels.
///
/// Two adaptations to the sample, both visible in the UI:
/// - F3's period is a parameter. The seed's `[2024-01-01, 2025-01-01)` fits
///   its 2024 data; on this July 2020 sample it would quarantine every trip, so
///   the example uses `[2020-07-01, 2020-08-01)`, which catches the five pickups
///   on 2020-06-30.
/// - The sample predates the `Airport_fee` column. The source schema still
///   declares it: silver reads it as NULL, N4 turns that into 0.0, and check S4
///   warns that the column is absent from the file.
pub fn nyc_taxi(lang: Lang) -> PipelineDef {
    let taxi_schema = SourceSchema::new(&[
        ("VendorID", T::Bigint),
        ("tpep_pickup_datetime", T::Timestamp),
        ("tpep_dropoff_datetime", T::Timestamp),
        ("passenger_count", T::Double),
        ("trip_distance", T::Double),
        ("RatecodeID", T::Double),
        ("store_and_fwd_flag", T::String),
        ("PULocationID", T::Bigint),
        ("DOLocationID", T::Bigint),
        ("payment_type", T::Bigint),
        ("fare_amount", T::Double),
        ("extra", T::Double),
        ("mta_tax", T::Double),
        ("tip_amount", T::Double),
        ("tolls_amount", T::Double),
        ("improvement_surcharge", T::Double),
        ("total_amount", T::Double),
        ("congestion_surcharge", T::Double),
        ("Airport_fee", T::Double),
    ]);
    let zone_schema = SourceSchema::new(&[
        ("locationid", T::Bigint),
        ("borough", T::String),
        ("zone", T::String),
        ("service_zone", T::String),
    ]);
    use RuleKind::*;
    let mut f3 = rule(
        lang,
        "F3",
        Filter,
        "tpep_pickup_datetime",
        "tpep_pickup_datetime < TIMESTAMP '{from}' OR tpep_pickup_datetime >= TIMESTAMP '{to}'",
        true,
        Tr {
            en: "Pickups outside the period the data covers are clock errors or stray records. The seed uses [2024-01-01, 2025-01-01) for its 2024 data; this sample is July 2020, so the period is July 2020. Set from = 2024-01-01 and to = 2025-01-01 to see the seed's range quarantine every trip.",
            ru: "Поездки вне периода данных — сбой часов или чужие записи. В курсе диапазон [2024-01-01, 2025-01-01) для данных 2024 года; этот пример — июль 2020, поэтому период — июль 2020. Поставьте from = 2024-01-01 и to = 2025-01-01: диапазон из курса отправит в карантин все поездки.",
        },
    );
    f3.params = vec![
        RuleParam {
            name: "from".into(),
            value: "2020-07-01".into(),
        },
        RuleParam {
            name: "to".into(),
            value: "2020-08-01".into(),
        },
    ];
    let lookup = |alias: &str, key: &str| Lookup {
        table: TableName::bronze("taxi_zone_lookup"),
        alias: alias.into(),
        on: format!("{key} = {alias}.locationid"),
    };
    let mut e2 = rule(
        lang,
        "E2",
        Enrich,
        "pickup_borough, pickup_zone",
        "pu.borough, pu.zone",
        true,
        Tr {
            en: "Zone names instead of ids for pickups. LEFT JOIN, not INNER: a trip whose zone is missing from the lookup keeps its row (with NULLs) instead of vanishing.",
            ru: "Названия зон посадки вместо id. LEFT JOIN, а не INNER: поездка с зоной, которой нет в справочнике, остаётся (с NULL), а не исчезает.",
        },
    );
    e2.lookup = Some(lookup("pu", "PULocationID"));
    let mut e3 = rule(
        lang,
        "E3",
        Enrich,
        "dropoff_borough, dropoff_zone",
        "dz.borough, dz.zone",
        true,
        Tr {
            en: "Zone names for drop-offs, same LEFT JOIN as E2.",
            ru: "Названия зон высадки, тот же LEFT JOIN, что в E2.",
        },
    );
    e3.lookup = Some(lookup("dz", "DOLocationID"));

    let rules = vec![
        rule(lang, "F1", Filter, "fare_amount", "fare_amount < 0", true, Tr {
            en: "A negative fare is a refund or dispute record, not a trip; it would pull revenue down.",
            ru: "Отрицательный тариф — возврат или спор, а не поездка; он занизит выручку.",
        }),
        rule(lang, "F2", Filter, "total_amount", "total_amount > 1000", true, Tr {
            en: "A total above $1000 for a city taxi ride is almost surely an entry error and would skew averages.",
            ru: "Сумма больше $1000 за городскую поездку — почти наверняка ошибка ввода; она исказит средние.",
        }),
        f3,
        rule(lang, "F4", Filter, "trip_distance, total_amount", "trip_distance = 0 AND total_amount != 0", false, Tr {
            en: "Exercise from the course: a charged trip with zero distance. Switch it on and watch silver and the checks.",
            ru: "Задание курса: оплаченная поездка с нулевой дистанцией. Включите и посмотрите на silver и проверки.",
        }),
        typed(rule(lang, "N1", Normalize, "passenger_count", "coalesce(passenger_count, 0)", true, Tr {
            en: "DOUBLE → INT: a passenger count is a whole number; a missing count becomes 0. The type is declared, so a count like 1.5 would go to quarantine instead of being cut to 1.",
            ru: "DOUBLE → INT: число пассажиров целое; пропуск становится 0. Тип объявлен, поэтому значение вроде 1.5 уйдёт в карантин, а не обрежется до 1.",
        }), "INT"),
        typed(rule(lang, "N2", Normalize, "RatecodeID", "coalesce(RatecodeID, 99)", true, Tr {
            en: "DOUBLE → INT: rate codes are categories; a missing code becomes 99 (unknown).",
            ru: "DOUBLE → INT: тариф — категория; пропуск становится 99 (неизвестно).",
        }), "INT"),
        rule(lang, "N3", Normalize, "congestion_surcharge", "coalesce(congestion_surcharge, 0.0)", true, Tr {
            en: "A missing congestion surcharge means none was charged: NULL → 0.0, so sums add up.",
            ru: "Пустая доплата за пробки означает, что её не было: NULL → 0.0, чтобы суммы сходились.",
        }),
        rule(lang, "N4", Normalize, "Airport_fee", "coalesce(Airport_fee, 0.0)", true, Tr {
            en: "NULL → 0.0. This 2020 sample has no Airport_fee column at all: silver reads it as NULL (check S4 warns) and this rule makes it 0.0.",
            ru: "NULL → 0.0. В выгрузке 2020 года колонки Airport_fee нет совсем: silver читает её как NULL (проверка S4 предупреждает), а это правило делает 0.0.",
        }),
        typed(rule(lang, "N5", Normalize, "payment_type", "coalesce(payment_type, 0)", false, Tr {
            en: "Exercise: BIGINT → INT, NULL → 0 (unknown); watch payment_type's type change in silver.",
            ru: "Задание: BIGINT → INT, NULL → 0 (неизвестно). Тип payment_type меняется.",
        }), "INT"),
        rule(lang, "E1", Enrich, "trip_duration_minutes", "(to_unixtime(tpep_dropoff_datetime) - to_unixtime(tpep_pickup_datetime)) / 60.0", true, Tr {
            en: "Trip length in minutes, computed once here so every consumer uses the same definition.",
            ru: "Длительность поездки в минутах: считаем один раз здесь, чтобы все потребители брали одно определение.",
        }),
        e2,
        e3,
        rule(lang, "E4", Enrich, "speed_mph", "CASE WHEN trip_duration_minutes > 0 THEN trip_distance / (trip_duration_minutes / 60.0) END", false, Tr {
            en: "Exercise: average speed in mph; NULL (not an error) when the duration is 0.",
            ru: "Задание: средняя скорость в милях в час; NULL (а не ошибка), если длительность 0.",
        }),
    ];

    let silver = TableName::silver("nyc_taxi_yellow");
    let check = |id: &str, level: CheckLevel, d: Tr, kind: CheckKind| {
        super::parts::check(lang, id, level, d, kind)
    };
    let row = |pred: &str| CheckKind::RowPredicate {
        table: silver.clone(),
        predicate: pred.into(),
    };
    let checks = vec![
        check(
            "R1",
            CheckLevel::Row,
            Tr {
                en: "No negative fare in silver",
                ru: "В silver нет отрицательных тарифов",
            },
            row("fare_amount >= 0"),
        ),
        check(
            "R2",
            CheckLevel::Row,
            Tr {
                en: "No total above $1000 in silver",
                ru: "В silver нет сумм больше $1000",
            },
            row("total_amount <= 1000"),
        ),
        check(
            "R3",
            CheckLevel::Row,
            Tr {
                en: "passenger_count and RatecodeID are never NULL",
                ru: "passenger_count и RatecodeID не бывают NULL",
            },
            row("passenger_count IS NOT NULL AND RatecodeID IS NOT NULL"),
        ),
        check(
            "S1",
            CheckLevel::Schema,
            Tr {
                en: "passenger_count is INT",
                ru: "passenger_count имеет тип INT",
            },
            CheckKind::ColumnType {
                table: silver.clone(),
                column: "passenger_count".into(),
                data_type: T::Int,
            },
        ),
        check(
            "S2",
            CheckLevel::Schema,
            Tr {
                en: "RatecodeID is INT",
                ru: "RatecodeID имеет тип INT",
            },
            CheckKind::ColumnType {
                table: silver.clone(),
                column: "RatecodeID".into(),
                data_type: T::Int,
            },
        ),
        check(
            "S3",
            CheckLevel::Schema,
            Tr {
                en: "Enrichment columns exist",
                ru: "Колонки обогащения на месте",
            },
            CheckKind::ColumnsExist {
                table: silver.clone(),
                columns: [
                    "trip_duration_minutes",
                    "pickup_borough",
                    "pickup_zone",
                    "dropoff_borough",
                    "dropoff_zone",
                ]
                .map(String::from)
                .to_vec(),
            },
        ),
        check(
            "S4",
            CheckLevel::Schema,
            Tr {
                en: "Every declared source column arrived",
                ru: "Все объявленные колонки источника пришли",
            },
            CheckKind::SourceColumnsPresent {
                bronze_table: TableName::bronze("nyc_taxi_yellow"),
            },
        ),
        check(
            "A1",
            CheckLevel::Aggregate,
            Tr {
                en: "Bronze rows = silver rows + quarantined rows",
                ru: "Строк в bronze = silver + карантин",
            },
            CheckKind::Reconciliation {
                bronze_table: TableName::bronze("nyc_taxi_yellow"),
                silver_table: silver.clone(),
            },
        ),
        check(
            "A2",
            CheckLevel::Aggregate,
            Tr {
                en: "Share of rows filtered out (warn above 5%)",
                ru: "Доля отфильтрованных строк (предупреждение выше 5%)",
            },
            CheckKind::FilteredShare {
                bronze_table: TableName::bronze("nyc_taxi_yellow"),
                silver_table: silver.clone(),
                warn_above_pct: 5.0,
            },
        ),
        check(
            "A3",
            CheckLevel::Aggregate,
            Tr {
                en: "Average fare_amount, bronze vs silver",
                ru: "Средний fare_amount, bronze и silver",
            },
            CheckKind::CompareAverage {
                silver_table: silver.clone(),
                column: "fare_amount".into(),
            },
        ),
        check(
            "A4",
            CheckLevel::Aggregate,
            Tr {
                en: "Average trip_distance, bronze vs silver",
                ru: "Средний trip_distance, bronze и silver",
            },
            CheckKind::CompareAverage {
                silver_table: silver.clone(),
                column: "trip_distance".into(),
            },
        ),
    ];
    // The exercises' checks: warnings until the learner switches F4, N5, E4 on.
    let warn = |mut c: CheckDef| {
        c.severity = Severity::Warn;
        c
    };
    let mut checks = checks;
    checks.extend([
        warn(check(
            "R4",
            CheckLevel::Row,
            Tr {
                en: "Exercise F4: no charged trip with zero distance",
                ru: "Задание F4: нет оплаченных поездок с нулевым расстоянием",
            },
            row("NOT (trip_distance = 0 AND total_amount != 0)"),
        )),
        warn(check(
            "S5",
            CheckLevel::Schema,
            Tr {
                en: "Exercise N5: payment_type is INT",
                ru: "Задание N5: payment_type — INT",
            },
            CheckKind::ColumnType {
                table: silver.clone(),
                column: "payment_type".into(),
                data_type: T::Int,
            },
        )),
        warn(check(
            "S6",
            CheckLevel::Schema,
            Tr {
                en: "Exercise E4: speed_mph exists",
                ru: "Задание E4: колонка speed_mph есть",
            },
            CheckKind::ColumnsExist {
                table: silver.clone(),
                columns: vec!["speed_mph".into()],
            },
        )),
        check(
            "R5",
            CheckLevel::Row,
            Tr {
                en: "passenger_count between 0 and 9 (accepted_range)",
                ru: "passenger_count от 0 до 9 (accepted_range)",
            },
            CheckKind::AcceptedRange {
                table: silver.clone(),
                column: "passenger_count".into(),
                min: Some("0".into()),
                max: Some("9".into()),
            },
        ),
        check(
            "R6",
            CheckLevel::Row,
            Tr {
                en: "payment_type is a TLC code 1–6 (accepted_values)",
                ru: "payment_type — код TLC 1–6 (accepted_values)",
            },
            CheckKind::AcceptedValues {
                table: silver.clone(),
                column: "payment_type".into(),
                values: ["1", "2", "3", "4", "5", "6"].map(String::from).to_vec(),
            },
        ),
    ]);

    PipelineDef {
        title: examples::NYC_TAXI.title(lang).into(),
        bronze: vec![
            BronzeTableDef {
                name: "nyc_taxi_yellow".into(),
                source_system: "tlc_trip_files".into(),
                schema: taxi_schema,
                description: tr(lang, Tr {
                    en: "Yellow-taxi trips as the TLC files sent them: each CSV line in raw_payload, plus audit columns.",
                    ru: "Поездки жёлтого такси как их прислал TLC: каждая строка CSV в raw_payload плюс аудит-колонки.",
                }),
                kafka_topic: Some("tlc_yellow_trips".into()),
                mode: BronzeMode::Raw,
                ingest_options: Default::default(),
            },
            BronzeTableDef {
                name: "taxi_zone_lookup".into(),
                source_system: "tlc_reference_files".into(),
                schema: zone_schema,
                description: tr(lang, Tr { en: "TLC zone lookup (265 zones), raw.", ru: "Справочник зон TLC (265 зон), как есть." }),
                kafka_topic: None,
                mode: BronzeMode::Raw,
                ingest_options: Default::default(),
            },
        ],
        silver: vec![SilverTableDef {
            name: "nyc_taxi_yellow".into(),
            source: "nyc_taxi_yellow".into(),
            rules: RuleRegistry { rules },
            description: tr(lang, Tr {
                en: "Trips after filters, normalizations and enrichments: typed, with zone names and duration.",
                ru: "Поездки после фильтров, нормализаций и обогащений: с типами, названиями зон и длительностью.",
            }),
            merge: None,
            select: vec![],
            explode: None,
        }],
        gold: vec![GoldModelDef {
            name: "trips_by_borough_daily".into(),
            sql: "SELECT CAST(tpep_pickup_datetime AS DATE) AS pickup_date,\n       pickup_borough,\n       COUNT(*) AS trips,\n       ROUND(SUM(total_amount), 2) AS revenue_usd,\n       ROUND(AVG(trip_distance), 2) AS avg_distance_mi\nFROM silver.nyc_taxi_yellow\nGROUP BY CAST(tpep_pickup_datetime AS DATE), pickup_borough\nORDER BY pickup_date, pickup_borough".into(),
            description: tr(lang, Tr {
                en: "Trips and revenue per pickup borough per day, from silver only.",
                ru: "Поездки и выручка по районам посадки за день, только из silver.",
            }),
            merge_on: vec![],
        }],
        checks,
        anti_patterns: Default::default(),
    }
}
