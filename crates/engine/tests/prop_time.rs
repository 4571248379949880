//! Property tests (issue 9, time zones and offsets): a timestamp is never
//! silently shifted.
//! - Any instant written as local time with its offset, in any of the ISO
//!   spellings the default reader takes, reads back as that instant (the
//!   offset wins; no zone is needed and nothing is counted as UTC).
//! - Any instant written as local time without an offset and read in that
//!   zone gives the instant when the local time is unambiguous; in a
//!   repeated hour `earlier` and `later` give the two instants of that local
//!   time, one of which is it; a skipped local time is never produced.
//! - A chronological series of one clock (steps under an hour) around a
//!   clocks-go-back change, written as local times and read in arrival
//!   order, gives back every instant.
#![cfg(not(target_arch = "wasm32"))]

use chrono::{DateTime, Datelike, Duration, NaiveDate, Offset, TimeZone, Utc};
use chrono_tz::Tz;
use datafusion::arrow::array::{Array, StringArray, TimestampMicrosecondArray};
use medallion_engine::convert::{convert_source_column, Converted};
use medallion_engine::source::{AmbiguousTime, ColumnType, NonexistentTime, SourceColumn};
use proptest::prelude::*;

/// Zones with a one-hour daylight-saving change, north and south, and one without.
const ZONES: [Tz; 6] = [
    Tz::America__New_York,
    Tz::Europe__Berlin,
    Tz::Australia__Sydney,
    Tz::America__Santiago,
    Tz::Pacific__Auckland,
    Tz::Asia__Tokyo,
];

fn read(texts: &[String], zone: Option<(Tz, AmbiguousTime)>) -> Converted {
    let mut col = SourceColumn::new("ts", ColumnType::Timestamp);
    if let Some((tz, ambiguous)) = zone {
        col = col.zoned(tz.name(), ambiguous, NonexistentTime::Reject);
    }
    let texts = StringArray::from(texts.to_vec());
    convert_source_column(&col, &texts).expect("a known zone")
}

fn instants(c: &Converted) -> Vec<Option<i64>> {
    let a = c
        .array
        .as_any()
        .downcast_ref::<TimestampMicrosecondArray>()
        .expect("TIMESTAMP");
    (0..a.len())
        .map(|i| a.is_valid(i).then(|| a.value(i)))
        .collect()
}

/// Microseconds from 1971 to 2037, whole milliseconds or microseconds.
fn instant() -> impl Strategy<Value = i64> {
    (31_536_000i64..2_114_380_800, 0i64..1_000_000, any::<bool>())
        .prop_map(|(s, us, ms)| s * 1_000_000 + if ms { us / 1000 * 1000 } else { us })
}

/// The instant (Unix seconds, to the hour) in `year` when `zone`'s clocks
/// go back, if they do.
fn fall_back(zone: Tz, year: i32) -> Option<DateTime<Utc>> {
    let offset = |at: DateTime<Utc>| {
        zone.offset_from_utc_datetime(&at.naive_utc())
            .fix()
            .local_minus_utc()
    };
    let mut at = NaiveDate::from_ymd_opt(year, 1, 1)?
        .and_hms_opt(0, 0, 0)?
        .and_utc();
    while at.year() == year {
        let next = at + Duration::minutes(30);
        if offset(next) < offset(at) {
            return Some(next);
        }
        at = next;
    }
    None
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn an_instant_written_with_its_offset_reads_back(
        micros in instant(),
        z in 0usize..ZONES.len(),
        spelling in 0usize..4,
    ) {
        let zone = ZONES[z];
        let at = DateTime::from_timestamp_micros(micros).unwrap().with_timezone(&zone);
        let offset = at.offset().fix().local_minus_utc();
        let text = match spelling {
            0 => at.format("%Y-%m-%dT%H:%M:%S%.6f%:z").to_string(),
            1 => at.format("%Y-%m-%d %H:%M:%S%.f%z").to_string(),
            2 => at.with_timezone(&Utc).format("%Y-%m-%dT%H:%M:%S%.fZ").to_string(),
            // ±HH when the offset is whole hours.
            _ if offset % 3600 == 0 => format!(
                "{}{}{:02}",
                at.format("%Y-%m-%dT%H:%M:%S%.f"),
                if offset < 0 { '-' } else { '+' },
                offset.abs() / 3600
            ),
            _ => at.format("%Y-%m-%dT%H:%M:%S%.f%:z").to_string(),
        };
        // With or without a declared zone: the text's own offset decides.
        for declared in [None, Some((Tz::America__Sao_Paulo, AmbiguousTime::Reject))] {
            let c = read(std::slice::from_ref(&text), declared);
            prop_assert_eq!(instants(&c), vec![Some(micros)], "{}", text);
            prop_assert_eq!(&c.read_as_utc, &vec![false]);
        }
    }

    #[test]
    fn a_local_time_read_in_its_zone_gives_the_instant(
        micros in instant(),
        z in 0usize..ZONES.len(),
    ) {
        let zone = ZONES[z];
        let at = DateTime::from_timestamp_micros(micros).unwrap().with_timezone(&zone);
        let local = at.naive_local();
        let text = vec![local.format("%Y-%m-%d %H:%M:%S%.6f").to_string()];
        let earlier = instants(&read(&text, Some((zone, AmbiguousTime::Earlier))))[0];
        let later = instants(&read(&text, Some((zone, AmbiguousTime::Later))))[0];
        let (Some(earlier), Some(later)) = (earlier, later) else {
            return Err(TestCaseError::fail(format!("{text:?} not read")));
        };
        prop_assert!(earlier == micros || later == micros, "{:?}: {} {} {}", text, earlier, later, micros);
        if zone.from_local_datetime(&local).single().is_some() {
            prop_assert_eq!((earlier, later), (micros, micros));
            let rejected = instants(&read(&text, Some((zone, AmbiguousTime::Reject))))[0];
            prop_assert_eq!(rejected, Some(micros));
        } else {
            prop_assert!(earlier < later);
            prop_assert_eq!(instants(&read(&text, Some((zone, AmbiguousTime::Reject))))[0], None);
        }
        // Without a zone the same text is UTC, and says so.
        let utc = read(&text, None);
        prop_assert_eq!(instants(&utc)[0], Some(local.and_utc().timestamp_micros()));
        prop_assert_eq!(&utc.read_as_utc, &vec![true]);
    }

    #[test]
    fn a_chronological_series_across_the_repeated_hour_reads_back_in_arrival_order(
        z in 0usize..5,
        year in 2000i32..2030,
        start_s in 0i64..(6 * 3600),
        steps in proptest::collection::vec(1i64..3600, 10..60),
    ) {
        let zone = ZONES[z];
        let Some(change) = fall_back(zone, year) else {
            return Ok(());
        };
        // Up to 6 hours before the change: it is usually inside the series.
        let mut at = change - Duration::seconds(start_s);
        // A series that starts inside the second pass cannot know it: skip.
        prop_assume!(zone.from_local_datetime(&at.with_timezone(&zone).naive_local()).single().is_some());
        let mut expected = Vec::new();
        let mut texts = Vec::new();
        for s in steps {
            expected.push(Some(at.timestamp_micros()));
            texts.push(at.with_timezone(&zone).naive_local().format("%Y-%m-%dT%H:%M:%S").to_string());
            at += Duration::seconds(s);
        }
        let c = read(&texts, Some((zone, AmbiguousTime::ArrivalOrder)));
        prop_assert_eq!(instants(&c), expected, "{:?}", texts);
    }
}
