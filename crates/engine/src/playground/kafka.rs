//! The simulated Kafka topic in front of a bronze table (seed 000 §3):
//! producing messages, and polling them into bronze as one micro-batch with
//! at-least-once delivery (a crash before the offset commit delivers them again).

use crate::bronze::kafka::{KafkaMessage, Topic};
use crate::bronze::{BatchInfo, IngestOptions};
use crate::error::{EngineError, Result};
use medallion_protocol::{Lang, Layer, TableName};

use super::ingest::NewBatch;
use super::*;

impl Playground {
    pub(super) fn topic_mut(&mut self, table: &str) -> Result<(String, &mut Topic)> {
        let table = Layer::Bronze.unqualified(table).to_string();
        if !self.topics.contains_key(&table) {
            let known: Vec<String> = self
                .topics
                .keys()
                .map(|t| TableName::bronze(t).to_string())
                .collect();
            return Err(EngineError::Request(format!(
                "{} has no Kafka topic{}",
                TableName::bronze(&table),
                if known.is_empty() {
                    String::new()
                } else {
                    format!("; tables with one: {}", known.join(", "))
                }
            )));
        }
        let topic = self
            .topics
            .get_mut(&table)
            .ok_or_else(|| EngineError::Internal("topic vanished".into()))?;
        Ok((table, topic))
    }

    /// Appends messages to the topic of bronze table `table` (producer side).
    pub fn kafka_produce(&mut self, table: &str, messages: Vec<KafkaMessage>) -> Result<()> {
        if messages.is_empty() {
            return Err(EngineError::Request(
                "no messages to produce: write one JSON value per line".into(),
            ));
        }
        let now = self.clock.now_micros();
        let (_, topic) = self.topic_mut(table)?;
        topic.log.extend(messages.into_iter().map(|mut m| {
            m.producer_ts_micros.get_or_insert(now);
            m
        }));
        Ok(())
    }

    /// Polls up to `max` messages (all waiting ones by default) from the
    /// committed offset into bronze as one micro-batch, commits the offset
    /// unless `crash_before_commit`, then reruns. Nothing waiting: an error
    /// that says so, and nothing is written. Messages erased by a
    /// right-to-be-forgotten request are skipped (the batch's notes name
    /// their offsets); when every polled message was erased, no batch is
    /// written (`None`), the offset is committed and the notice says so.
    pub async fn kafka_poll(
        &mut self,
        table: &str,
        max: Option<usize>,
        crash_before_commit: bool,
    ) -> Result<Option<BatchInfo>> {
        let info = self
            .poll_into_bronze(table, max, crash_before_commit)
            .await?;
        if info.is_some() {
            self.run().await;
        }
        Ok(info)
    }

    /// [`Self::kafka_poll`] without the rerun.
    pub(super) async fn poll_into_bronze(
        &mut self,
        table: &str,
        max: Option<usize>,
        crash_before_commit: bool,
    ) -> Result<Option<BatchInfo>> {
        let lang = self.lang;
        let (table, topic) = self.topic_mut(table)?;
        let from = topic.committed;
        let to = topic
            .log
            .len()
            .min(from.saturating_add(max.unwrap_or(usize::MAX).max(1)));
        if from >= to {
            return Err(EngineError::Request(format!(
                "topic {} has no messages after offset {from}: produce some first",
                topic.name
            )));
        }
        let erased = topic.erased_in(from, to);
        let erased_list = erased
            .iter()
            .map(|o| o.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        if erased.len() == to - from {
            // Nothing left to write: an empty bronze batch would be noise.
            let committed = if crash_before_commit {
                from
            } else {
                topic.committed = to;
                to
            };
            self.notice = Some(match lang {
                Lang::En => format!(
                    "{}: offsets {from}-{} hold only messages erased by a right-to-be-forgotten request ({erased_list}); nothing was written to bronze, committed offset {committed}.",
                    TableName::bronze(&table),
                    to - 1
                ),
                Lang::Ru => format!(
                    "{}: в смещениях {from}-{} только сообщения, удалённые по праву на забвение ({erased_list}); в bronze ничего не записано, закоммиченное смещение {committed}.",
                    TableName::bronze(&table),
                    to - 1
                ),
            });
            return Ok(None);
        }
        let name = format!("{}:0:{from}-{}", topic.name, to - 1);
        let (split, files, producer) = topic.micro_batch(from, to);
        let payload: Vec<u8> = split
            .records
            .iter()
            .flat_map(|r| r.text.bytes().chain(std::iter::once(b'\n')))
            .collect();
        let mut notes = if crash_before_commit {
            vec![format!(
                "the consumer crashed after writing this micro-batch and before committing offset {to}: the next poll delivers offsets {from}-{} again (at-least-once)",
                to - 1
            )]
        } else {
            vec![format!("offsets {from}-{} committed", to - 1)]
        };
        if !erased.is_empty() {
            notes.push(format!(
                "offsets {erased_list} skipped: erased by a right-to-be-forgotten request before this poll"
            ));
        }
        let info = self
            .commit_batch(NewBatch {
                table: table.clone(),
                file_name: name,
                split,
                bytes: &payload,
                landing: false,
                options: IngestOptions::default(),
                source_files: files,
                producer_ts: producer,
                notes,
            })
            .await?;
        if !crash_before_commit {
            if let Some(t) = self.topics.get_mut(&table) {
                t.committed = to;
            }
        }
        Ok(Some(info))
    }
}
