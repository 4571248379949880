//! A simulated Kafka topic in front of a bronze table: produce messages,
//! poll a micro-batch, or poll and crash before committing the offset.

use medallion_protocol::{KafkaMessage, Lang, TopicView};
use yew::prelude::*;

use crate::i18n::t;

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
                <span id="kafka-offsets">{ format!("{} {} · {} {} · lag {}", t(lang, "end_offset"), tp.end_offset, t(lang, "committed"), tp.committed_offset, tp.lag) }</span>
            </summary>
            <p class="muted">{ t(lang, "kafka_hint") }</p>
            <textarea id="kafka-messages" class="mono" rows="4" spellcheck="false" value={(*text).clone()} {oninput} />
            <div class="kafka-actions">
                <button class="small" id="kafka-produce" onclick={produce}>{ t(lang, "produce") }</button>
                <button class="small" id="kafka-poll" disabled={tp.lag == 0} onclick={poll(false)}>{ t(lang, "poll") }</button>
                <button class="small" id="kafka-crash" disabled={tp.lag == 0} onclick={poll(true)}>{ t(lang, "poll_crash") }</button>
            </div>
        </details>
    }
}
