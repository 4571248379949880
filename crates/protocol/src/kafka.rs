//! A simulated Kafka topic in front of a bronze table: its messages and
//! the consumer's offsets.

use serde::{Deserialize, Serialize};

use crate::table::TableName;

/// One message as produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KafkaMessage {
    /// Message key (a Debezium key, an order id), if any.
    #[serde(default)]
    pub key: Option<String>,
    /// Message value; `None` is a tombstone (a delete marker for log compaction).
    pub value: Option<String>,
    /// Producer time, µs since the Unix epoch (UTC); the engine's clock when not given.
    #[serde(default)]
    pub producer_ts_micros: Option<i64>,
    /// Erased by a right-to-be-forgotten request: the offset stays, nothing is delivered.
    #[serde(default)]
    pub erased: bool,
}

/// A topic's log and its consumer's committed offset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopicView {
    /// Bronze table the consumer writes to.
    pub table: TableName,
    pub topic: String,
    pub partition: u32,
    /// Offset the next produced message gets (= messages in the log).
    pub end_offset: u64,
    /// Offset the consumer resumes from.
    pub committed_offset: u64,
    /// Messages waiting: `end_offset - committed_offset`.
    pub lag: u64,
    /// Of the waiting messages, those erased by a right-to-be-forgotten
    /// request: a poll skips them (their offsets are committed, nothing of
    /// them reaches bronze).
    #[serde(default)]
    pub erased_waiting: u64,
}
