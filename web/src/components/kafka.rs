//! A simulated Kafka topic in front of a bronze table: produce messages,
//! poll a micro-batch, or poll and crash before committing the offset.

use medallion_protocol::{KafkaMessage, Lang, TopicView};
use yew::prelude::*;

use crate::components::use_locked;
use crate::i18n::t;

/// Messages offered in the Kafka panel of the taxi example: two trips in July 2020.
const KAFKA_SAMPLE: &str = r#"{"VendorID": 2, "tpep_pickup_datetime": "2020-07-15 08:00:00", "tpep_dropoff_datetime": "2020-07-15 08:20:00", "passenger_count": 1, "trip_distance": 3.2, "RatecodeID": 1, "store_and_fwd_flag": "N", "PULocationID": 142, "DOLocationID": 236, "payment_type": 1, "fare_amount": 14.5, "extra": 0.5, "mta_tax": 0.5, "tip_amount": 3.0, "tolls_amount": 0, "improvement_surcharge": 0.3, "total_amount": 21.3, "congestion_surcharge": 2.5}
{"VendorID": 1, "tpep_pickup_datetime": "2020-07-15 08:05:00", "tpep_dropoff_datetime": "2020-07-15 08:11:00", "passenger_count": 2, "trip_distance": 1.1, "RatecodeID": 1, "store_and_fwd_flag": "N", "PULocationID": 161, "DOLocationID": 162, "payment_type": 2, "fare_amount": 6.5, "extra": 0.5, "mta_tax": 0.5, "tip_amount": 0, "tolls_amount": 0, "improvement_surcharge": 0.3, "total_amount": 10.3, "congestion_surcharge": 2.5}"#;

/// Messages offered in the Kafka panel of the Kafka orders scenario: a late
/// update of 1002 (now PAID) and a brand-new order.
const KAFKA_ORDERS_SAMPLE: &str = r#"{"order_id": 1002, "user_id": 15, "amount": "149.00", "status": "PAID", "created_at": "2024-01-15T11:20:00"}
{"order_id": 1004, "user_id": 15, "amount": "20.50", "status": "PAID", "created_at": "2024-01-16T09:10:00"}"#;

/// The messages offered for a scenario.
pub fn sample(example: &str) -> &'static str {
    if example == "kafka_orders" {
        KAFKA_ORDERS_SAMPLE
    } else {
        KAFKA_SAMPLE
    }
}

#[derive(Properties, PartialEq, Clone)]
pub struct Props {
    pub topic: TopicView,
    pub lang: Lang,
    /// One JSON value per message; the text `null` is a tombstone.
    pub sample: String,
    pub on_produce: Callback<Vec<KafkaMessage>>,
    /// `true`: crash after writing bronze, before committing the offset.
    pub on_poll: Callback<bool>,
}

/// One message per non-blank line; `null` is a tombstone (no value).
pub fn messages_of(text: &str) -> Vec<KafkaMessage> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| KafkaMessage {
            key: None,
            value: (l != "null").then(|| l.to_string()),
            producer_ts_micros: None,
            erased: false,
        })
        .collect()
}

#[function_component(KafkaPanel)]
pub fn kafka_panel(p: &Props) -> Html {
    let lang = p.lang;
    let (locked, hint) = use_locked(lang);
    let text = use_state(|| p.sample.clone());
    let oninput = {
        let text = text.clone();
        Callback::from(move |e: InputEvent| {
            let el: web_sys::HtmlTextAreaElement = e.target_unchecked_into();
            text.set(el.value());
        })
    };
    let produce = {
        let (cb, text) = (p.on_produce.clone(), text.clone());
        Callback::from(move |_| cb.emit(messages_of(&text)))
    };
    let poll = |crash: bool| {
        let cb = p.on_poll.clone();
        Callback::from(move |_| cb.emit(crash))
    };
    let tp = &p.topic;
    html! {
        <details class="kafka" id="kafka-panel">
            <summary>
                { format!("Kafka: {}:{} · ", tp.topic, tp.partition) }
                <span id="kafka-offsets">
                    { format!("{} {} · {} {} · {} {}", t(lang, "end_offset"), tp.end_offset, t(lang, "committed"), tp.committed_offset, t(lang, "lag"), tp.lag) }
                    if tp.erased_waiting > 0 {
                        <span class="muted" id="kafka-erased" title={t(lang, "erased_waiting_hint")}>{ format!(" ({} {})", tp.erased_waiting, t(lang, "erased_waiting")) }</span>
                    }
                </span>
            </summary>
            <p class="muted">{ t(lang, "kafka_hint") }</p>
            <textarea id="kafka-messages" class="mono" rows="4" spellcheck="false" readonly={locked} value={(*text).clone()} {oninput} />
            <div class="kafka-actions">
                <button class="small" id="kafka-produce" disabled={locked} title={hint.clone()} onclick={produce}>{ t(lang, "produce") }</button>
                <button class="small" id="kafka-poll" disabled={locked || tp.lag == 0} title={hint.clone()} onclick={poll(false)}>{ t(lang, "poll") }</button>
                <button class="small" id="kafka-crash" disabled={locked || tp.lag == 0} title={hint} onclick={poll(true)}>{ t(lang, "poll_crash") }</button>
            </div>
        </details>
    }
}
