//! Bundled examples: the list the playground loads from ([`EXAMPLES`],
//! [`find`]), in the order of the protocol's list the UI's picker shows. The
//! data files live in `static/examples/` at the repository root (served with
//! the app and compiled into the engine).
//!
//! - [`nyc_taxi`]: seed 002 on the real July 2020 taxi sample.
//! - [`scenarios`]: small scenarios for seeds 000, 001 and 003.
//! - [`flights`]: a year of real NYC flights, its files downloaded on demand.
//! - `parts` (internal): what the definitions are written with.

pub mod flights;
pub mod nyc_taxi;
mod parts;
pub mod scenarios;

use medallion_protocol::examples::{self, ExampleInfo};

use crate::api::Lang;
use crate::model::PipelineDef;

pub use medallion_protocol::examples::{
    example_catalog as catalog, example_names as names, DEFAULT_EXAMPLE,
};
pub use nyc_taxi::{nyc_taxi, TAXI_TRIPS_CSV, TAXI_ZONES_CSV};
pub use parts::ExampleFile;

/// A bundled example: its key and titles ([`ExampleInfo`], from the
/// protocol's list the UI's picker shows), a pipeline definition (in the
/// chosen language) and the files ingested into bronze when it loads, as
/// `(bronze table, file name, bytes)`.
pub struct Example {
    pub info: ExampleInfo,
    pub definition: fn(Lang) -> PipelineDef,
    pub files: fn() -> Vec<ExampleFile>,
    /// `(bronze table, messages)`: one JSON value per line (`null` is a
    /// tombstone), produced to the table's topic and polled at load.
    pub kafka: fn() -> Vec<(&'static str, &'static str)>,
}

fn no_kafka() -> Vec<(&'static str, &'static str)> {
    vec![]
}

/// Every bundled example, in the order of [`medallion_protocol::EXAMPLES`]
/// (a test holds the two lists equal).
pub const EXAMPLES: &[Example] = &[
    Example {
        info: examples::NYC_TAXI,
        definition: nyc_taxi,
        files: nyc_taxi::nyc_taxi_files,
        kafka: no_kafka,
    },
    Example {
        info: examples::KAFKA_ORDERS,
        definition: scenarios::kafka_orders,
        files: scenarios::kafka_orders_files,
        kafka: scenarios::kafka_orders_messages,
    },
    Example {
        info: examples::LANDING_RETRY,
        definition: scenarios::landing_retry,
        files: scenarios::landing_retry_files,
        kafka: no_kafka,
    },
    Example {
        info: examples::ECOMMERCE,
        definition: scenarios::ecommerce,
        files: scenarios::ecommerce_files,
        kafka: no_kafka,
    },
    Example {
        info: examples::CDC_ORDER,
        definition: scenarios::cdc_order,
        files: scenarios::cdc_order_files,
        kafka: no_kafka,
    },
    Example {
        info: examples::FLIGHTS,
        definition: flights::nyc_flights,
        files: flights::flights_files,
        kafka: no_kafka,
    },
];

/// The example named `name`.
pub fn find(name: &str) -> Option<&'static Example> {
    EXAMPLES.iter().find(|e| e.info.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_follow_the_protocol_list_and_take_its_titles() {
        let engine: Vec<ExampleInfo> = EXAMPLES.iter().map(|e| e.info).collect();
        assert_eq!(engine, medallion_protocol::EXAMPLES);
        for e in EXAMPLES {
            for lang in [Lang::En, Lang::Ru] {
                assert_eq!((e.definition)(lang).title, e.info.title(lang));
            }
        }
    }
}
