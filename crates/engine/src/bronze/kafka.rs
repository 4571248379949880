//! A simulated Kafka topic in front of a bronze table (seed
//! `000_87b8dd7200a8cd99.txt` §3): a producer appends messages to a log; a
//! consumer polls a micro-batch from its committed offset, writes it to
//! bronze, then commits the new offset. If the consumer crashes after the
//! write and before the commit, the next poll delivers the same messages
//! again: at-least-once delivery, so bronze holds duplicates that silver
//! must deduplicate.
//!
//! Each bronze row from Kafka has `_source_file` = `topic:partition:offset`
//! and `_producer_ts` = the producer's timestamp, kept apart from
//! `_ingest_ts` (their difference is the pipeline's end-to-end latency).
//! One partition (0) per topic.

use crate::bronze::{RawRecord, SourceFormat, SplitFile};
use medallion_protocol::TableName;

pub use medallion_protocol::kafka::{KafkaMessage, TopicView};

/// A topic: its messages (offset = index) and the committed offset.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Topic {
    pub name: String,
    pub log: Vec<KafkaMessage>,
    pub committed: usize,
}

impl Topic {
    /// Offsets of the messages not erased, in order (one per record of
    /// `micro_batch(0, log.len())`).
    pub fn live_offsets(&self) -> Vec<usize> {
        (0..self.log.len())
            .filter(|o| !self.log[*o].erased)
            .collect()
    }

    /// The view for callers.
    pub fn view(&self, table: &str) -> TopicView {
        TopicView {
            table: TableName::bronze(table),
            topic: self.name.clone(),
            partition: 0,
            end_offset: self.log.len() as u64,
            committed_offset: self.committed as u64,
            lag: (self.log.len() - self.committed.min(self.log.len())) as u64,
            erased_waiting: self.erased_in(self.committed, self.log.len()).len() as u64,
        }
    }

    /// Offsets in `from..to` whose messages were erased (right to be forgotten).
    pub fn erased_in(&self, from: usize, to: usize) -> Vec<usize> {
        (from..to.min(self.log.len()))
            .filter(|o| self.log[*o].erased)
            .collect()
    }

    /// Messages `from..to` as bronze records, with their `_source_file`s and
    /// producer times. Values are JSON (checked like JSON Lines records); a
    /// tombstone is kept as an empty payload with a reason naming its key.
    pub fn micro_batch(
        &self,
        from: usize,
        to: usize,
    ) -> (SplitFile, Vec<String>, Vec<Option<i64>>) {
        let mut records = Vec::new();
        let mut keys = crate::bronze::TopKeys::default();
        let mut files = Vec::new();
        let mut producer = Vec::new();
        for (offset, m) in self
            .log
            .iter()
            .enumerate()
            .take(to)
            .skip(from)
            .filter(|(_, m)| !m.erased)
        {
            files.push(format!("{}:0:{offset}", self.name));
            producer.push(m.producer_ts_micros);
            records.push(match &m.value {
                Some(v) => {
                    // Byte and line in a reason count within the message.
                    let mut r = crate::bronze::json_record(v.as_bytes(), 0, 1, &mut keys);
                    r.line = 0;
                    r
                }
                None => RawRecord {
                    text: String::new(),
                    bytes: None,
                    line: 0,
                    corrupt_reason: Some(format!(
                        "tombstone: Kafka message with a null value (key {})",
                        m.key.as_deref().unwrap_or("none")
                    )),
                    warning: None,
                },
            });
        }
        let split = SplitFile {
            format: SourceFormat::Kafka,
            dialect: None,
            encoding: "utf-8".into(),
            header: vec![],
            header_text: None,
            header_renames: vec![],
            skipped: vec![],
            records,
            notes: vec![],
            keys: keys.into_keys(),
        };
        (split, files, producer)
    }
}
