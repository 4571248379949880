//! The instructor's lab (seed 000 §6, seed 003 §6): anti-patterns switched
//! on in a twin of the session, the twin built from the same bronze input
//! after every change, events injected into both, and the comparison the
//! page shows ([`LabView`]).
//!
//! The session stays the correct pipeline. The twin is a throw-away
//! playground in its own in-memory lake (never saved): the session's
//! definition with the anti-patterns' behaviour, the session's bronze
//! batches taken in as the ingest anti-patterns would have taken them, one
//! run of the job over them, then one more run per re-run on the timeline.

use std::collections::HashSet;

use datafusion::arrow::array::{Array, StringArray};
use serde::{Deserialize, Serialize};

use crate::bronze::IngestOptions;
use crate::env::{FixedClock, SeededIds};
use crate::lab::compare::{compare_checks, compare_gold};
use crate::lab::health::{evaluate, HealthFacts};
use crate::lab::tr;
use crate::lab::twin_bronze::{drop_duplicates, keep_passed, overwrite_partitions};
use crate::lab::{
    AntiPattern, HealthCheck, HealthSign, LabCount, LabEvent, LabEventRecord, LabView, SignState,
};
use crate::silver::source::PARSE_RULE_ID;

use super::*;

/// The lab's state, saved with the session (`meta.session`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LabState {
    /// Anti-patterns on, in [`AntiPattern::ALL`]'s order.
    pub on: Vec<AntiPattern>,
    /// Events since the lab was last switched, oldest first.
    pub timeline: Vec<LabEventRecord>,
}

impl LabState {
    /// Is there anything to show (a switch on, or an event)?
    pub fn active(&self) -> bool {
        !self.on.is_empty() || !self.timeline.is_empty()
    }

    fn has(&self, a: AntiPattern) -> bool {
        self.on.contains(&a)
    }

    /// Re-runs of the job on the timeline (the twin runs once more for each).
    fn reruns(&self) -> usize {
        self.timeline
            .iter()
            .filter(|e| e.event == LabEvent::RerunJob)
            .count()
    }
}

/// Records each ingest anti-pattern left out of the twin's bronze, per table.
type LeftOut = BTreeMap<AntiPattern, BTreeMap<String, usize>>;

/// "rows" in a change list (Russian: the genitive plural, as after a number range).
fn rows_word(lang: Lang) -> &'static str {
    match lang {
        Lang::En => "rows",
        Lang::Ru => "строк",
    }
}

impl Playground {
    /// Switches the lab to exactly `on`; its timeline goes on (the twin
    /// replays its re-runs), except that all off (`on` empty) clears it.
    pub(super) async fn set_lab(&mut self, on: Vec<AntiPattern>) -> Result<()> {
        let on: Vec<AntiPattern> = AntiPattern::ALL
            .iter()
            .copied()
            .filter(|a| on.contains(a))
            .collect();
        if on.is_empty() {
            self.lab.timeline.clear();
        }
        self.lab.on = on;
        self.refresh_lab().await;
        Ok(())
    }

    /// Injects `event` into the session and, with the lab on, its twin.
    pub(super) async fn lab_event(&mut self, event: LabEvent) -> Result<()> {
        if self.def.bronze.is_empty() {
            return Err(EngineError::Request(tr(
                self.lang,
                "load a scenario first: there is no pipeline to send the event to".into(),
                "сначала загрузите сценарий: событию некуда прийти".into(),
            )));
        }
        let lang = self.lang;
        let before = self.table_versions();
        let rows_before = self.row_counts();
        let twin_before = self.lab_view.as_ref().map(|v| v.counts.clone());
        // Everything an event needs is read before it writes anything: a
        // refusal (no file to re-send, no Kafka topic) changes nothing.
        let lesson = match event {
            LabEvent::RerunJob => {
                self.run().await;
                None
            }
            LabEvent::ResendFile => Some(self.resend_file().await?),
            LabEvent::TechnicalFailure => Some(self.technical_failure().await?),
            LabEvent::KafkaRedelivery => Some(self.kafka_redeliver().await?),
            LabEvent::SchemaDrift | LabEvent::BusinessError => Some(self.send_edited(event).await?),
        };
        let after = self.table_versions();
        let rows_after = self.row_counts();
        let n = |m: &BTreeMap<TableName, usize>, t: &TableName| {
            m.get(t).map_or("-".to_string(), |n| n.to_string())
        };
        let changed: Vec<String> = match event {
            LabEvent::RerunJob => after
                .iter()
                .filter(|(t, v)| before.get(*t) != Some(*v))
                .map(|(t, v)| {
                    format!(
                        "{t}: v{} → v{v} ({} → {} {})",
                        before.get(t).map_or("-".to_string(), |v| v.to_string()),
                        n(&rows_before, t),
                        n(&rows_after, t),
                        rows_word(lang)
                    )
                })
                .collect(),
            _ => rows_after
                .keys()
                .filter(|t| rows_before.get(*t) != rows_after.get(*t))
                .map(|t| {
                    format!(
                        "{t}: {} → {} {}",
                        n(&rows_before, t),
                        n(&rows_after, t),
                        rows_word(lang)
                    )
                })
                .collect(),
        };
        let outcome = if !self.run_info.ok {
            tr(
                lang,
                format!("the run failed: {}", self.run_info.errors.join("; ")),
                format!("запуск не удался: {}", self.run_info.errors.join("; ")),
            )
        } else if changed.is_empty() && event == LabEvent::RerunJob {
            tr(
                lang,
                "no table changed: the job wrote the same rows again (MERGE and a full refresh are idempotent), so no new version".into(),
                "ни одна таблица не изменилась: джоба записала те же строки (MERGE и полная перезапись идемпотентны), новой версии нет".into(),
            )
        } else if changed.is_empty() {
            tr(
                lang,
                "no table changed".into(),
                "ни одна таблица не изменилась".into(),
            )
        } else {
            changed.join("; ")
        };
        let correct = match lesson {
            Some(l) => format!("{l} {outcome}"),
            None => outcome,
        };
        self.lab.timeline.push(LabEventRecord {
            n: self.lab.timeline.len() as u32 + 1,
            event,
            correct,
            anti: String::new(),
        });
        self.refresh_lab().await;
        let anti = match (&twin_before, &self.lab_view) {
            _ if self.lab.on.is_empty() => String::new(),
            (Some(b), Some(v)) if v.error.is_none() => {
                let moved: Vec<String> = v
                    .counts
                    .iter()
                    .filter(|c| event != LabEvent::RerunJob || !c.table.is_bronze())
                    .filter_map(|c| {
                        let was = b.iter().find(|o| o.table == c.table)?.anti;
                        (was != c.anti).then(|| {
                            let n = |x: Option<usize>| x.map_or("-".into(), |n| n.to_string());
                            format!(
                                "{}: {} → {} {}",
                                c.table,
                                n(was),
                                n(c.anti),
                                rows_word(lang)
                            )
                        })
                    })
                    .collect();
                if moved.is_empty() {
                    tr(
                        lang,
                        "no table changed".into(),
                        "ни одна таблица не изменилась".into(),
                    )
                } else {
                    moved.join("; ")
                }
            }
            (_, Some(v)) => v.error.clone().unwrap_or_default(),
            _ => String::new(),
        };
        if let Some(last) = self.lab.timeline.last_mut() {
            last.anti = anti;
        }
        if let Some(v) = &mut self.lab_view {
            v.timeline = self.lab.timeline.clone();
        }
        Ok(())
    }

    /// The newest batch that has a landed file (not a Kafka micro-batch).
    fn newest_landed(&self, table: Option<&str>) -> Option<BatchInfo> {
        self.batches
            .iter()
            .rev()
            .find(|b| b.landing_path.is_some() && table.is_none_or(|t| b.table == t))
            .cloned()
    }

    /// The newest landed file's batch and bytes (what the source sends again).
    async fn newest_file(&self) -> Result<(BatchInfo, Vec<u8>)> {
        let b = self.newest_landed(None).ok_or_else(|| {
            EngineError::Request(
                tr(self.lang, "no file has landed yet, so there is none to send again: drop one on a bronze table".into(), "в landing zone ещё нет файла, повторять нечего: перетащите файл на таблицу bronze".into()),
            )
        })?;
        let bytes = self
            .lake
            .get_bytes(b.landing_path.as_deref().unwrap_or_default())
            .await?;
        Ok((b, bytes.to_vec()))
    }

    /// The source sends its newest file again: the same bytes as a new batch.
    async fn resend_file(&mut self) -> Result<String> {
        let (b, bytes) = self.newest_file().await?;
        self.append(&b.table, &b.file_name, &bytes, &IngestOptions::default())
            .await?;
        self.run().await;
        let t = TableName::bronze(&b.table);
        let readers = |merged: bool| -> Vec<String> {
            self.def
                .silver
                .iter()
                .filter(|s| s.source == b.table && s.merge.is_some() == merged)
                .map(|s| TableName::silver(&s.name).to_string())
                .collect()
        };
        let (merged, appended) = (readers(true), readers(false));
        let mut text = tr(
            self.lang,
            format!(
                "The source re-sent {}: {t} keeps both copies (append-only).",
                b.file_name
            ),
            format!(
                "Источник повторно прислал {}: {t} хранит обе копии (только добавление).",
                b.file_name
            ),
        );
        if !merged.is_empty() {
            text.push_str(&tr(
                self.lang,
                format!(" MERGE takes it once in {}.", merged.join(", ")),
                format!(" MERGE учитывает его один раз в {}.", merged.join(", ")),
            ));
        }
        if !appended.is_empty() {
            text.push_str(&tr(
                self.lang,
                format!(" {} has no key to merge on, so it now holds the file's rows twice (a MERGE key, or a dedup rule, is what protects it).", appended.join(", ")),
                format!(" У {} нет ключа для MERGE, поэтому строки файла теперь в нём дважды (защищает ключ MERGE или правило дедупликации).", appended.join(", ")),
            ));
        }
        Ok(text)
    }

    /// A technical failure (seed 000 §8): the source's newest file arrives
    /// again and the object store answers 503 after the first write of the
    /// batch (the landed copy): nothing becomes visible, bronze stays at
    /// its version. The platform retries, and the retry lands the batch.
    async fn technical_failure(&mut self) -> Result<String> {
        let lang = self.lang;
        let (b, bytes) = self.newest_file().await?;
        let t = TableName::bronze(&b.table);
        let version = |p: &Playground| p.history.current(&t);
        let (before, rows) = (version(self), self.bronze_rows(&b.table, None)?.num_rows());
        self.lake.outage().arm(1);
        let first = self
            .append(&b.table, &b.file_name, &bytes, &IngestOptions::default())
            .await;
        let seen = self.lake.outage().disarm();
        let failed = match first {
            Err(e) => e.to_string(),
            Ok(_) => {
                return Err(EngineError::Internal(
                    "the simulated outage did not stop the write (the batch landed on the first attempt)".into(),
                ))
            }
        };
        let untouched =
            version(self) == before && self.bronze_rows(&b.table, None)?.num_rows() == rows;
        if !untouched {
            return Err(EngineError::Internal(format!(
                "{t} changed although its write failed: {failed}"
            )));
        }
        self.append(&b.table, &b.file_name, &bytes, &IngestOptions::default())
            .await?;
        self.run().await;
        let v = |x: Option<u64>| x.map_or("-".to_string(), |v| v.to_string());
        Ok(tr(
            lang,
            format!("Attempt 1 of writing {} to {t}: the object store answered 503 after {} of its writes ({failed}); nothing became visible, {t} stayed at version {}. Attempt 2, the platform's retry, landed it as version {}. A technical failure: the platform fixes it by retrying, the data needs nobody.", b.file_name, seen.written.len(), v(before), v(version(self))),
            format!("Попытка 1 записать {} в {t}: хранилище ответило 503 после {} записей ({failed}); ничего не стало видимым, {t} осталась на версии {}. Попытка 2, повтор платформы, записала его версией {}. Техническая ошибка: её исправляет платформа повтором, данным никто не нужен.", b.file_name, seen.written.len(), v(before), v(version(self))),
        ))
    }

    /// The Kafka consumer crashed after writing its last micro-batch and
    /// before committing: the offsets go back and the micro-batch comes again.
    async fn kafka_redeliver(&mut self) -> Result<String> {
        let found = self.def.bronze.iter().find_map(|b| {
            let topic = self.topics.get(&b.name)?;
            let last =
                self.batches.iter().rev().find(|i| {
                    i.table == b.name && i.format == crate::bronze::SourceFormat::Kafka
                })?;
            (topic.committed > 0).then(|| {
                (
                    b.name.clone(),
                    topic.name.clone(),
                    last.records.min(topic.committed),
                )
            })
        });
        let (table, topic, n) = found.ok_or_else(|| {
            EngineError::Request(tr(self.lang, "no Kafka topic has delivered a micro-batch in this scenario: load the Kafka orders scenario".into(), "в этом сценарии ни один топик Kafka не доставил микробатч: загрузите сценарий заказов из Kafka".into()))
        })?;
        let to = self.topics.get(&table).map_or(0, |t| t.committed);
        let from = to - n;
        if let Some(t) = self.topics.get_mut(&table) {
            t.committed = from;
        }
        if let Err(e) = self.poll_into_bronze(&table, Some(n), false).await {
            if let Some(t) = self.topics.get_mut(&table) {
                t.committed = to;
            }
            return Err(e);
        }
        self.run().await;
        Ok(tr(
            self.lang,
            format!("The consumer of {topic} crashed after writing offsets {from}–{} to bronze and before committing them: on restart they were delivered again (at-least-once), and bronze keeps both deliveries.", to - 1),
            format!("Консьюмер {topic} упал после записи смещений {from}–{} в bronze и до их коммита: после рестарта они пришли снова (at-least-once), и bronze хранит обе доставки.", to - 1),
        ))
    }

    /// Schema drift or a business error: the newest records of a source
    /// edited as a real source would change them, sent as a new file (or
    /// new messages on its Kafka topic), then a run.
    async fn send_edited(&mut self, event: LabEvent) -> Result<String> {
        let lang = self.lang;
        let amount_of = |b: &crate::model::BronzeTableDef| {
            let names: Vec<&str> = b.schema.columns.iter().map(|c| c.name.as_str()).collect();
            names
                .iter()
                .find(|n| n.eq_ignore_ascii_case("amount"))
                .or_else(|| {
                    names
                        .iter()
                        .find(|n| n.to_ascii_lowercase().contains("amount"))
                })
                .map(|n| n.to_string())
        };
        let keys: HashSet<String> = self
            .def
            .silver
            .iter()
            .filter_map(|s| s.merge.as_ref())
            .flat_map(|m| m.keys.clone())
            .collect();
        let target = self.def.bronze.iter().find_map(|b| {
            let column = match event {
                LabEvent::BusinessError => amount_of(b)?,
                _ => amount_of(b).or_else(|| {
                    b.schema
                        .columns
                        .iter()
                        .rev()
                        .map(|c| c.name.clone())
                        .find(|n| !keys.contains(n))
                })?,
            };
            let fed = self.topics.get(&b.name).is_some_and(|t| t.committed > 0)
                || self.newest_landed(Some(&b.name)).is_some();
            fed.then(|| (b.name.clone(), column))
        });
        let (table, mut column) = target.ok_or_else(|| {
            EngineError::Request(match event {
                LabEvent::BusinessError => {
                    tr(self.lang, "no bronze table of this scenario has an amount column that has received data".into(), "ни в одной таблице bronze этого сценария нет колонки с суммой, получившей данные".into())
                }
                _ => tr(self.lang, "no bronze table of this scenario has received data to change".into(), "ни одна таблица bronze этого сценария ещё не получила данных, которые можно изменить".into()),
            })
        })?;
        let t = TableName::bronze(&table);
        // Schema drift renames the first of these the newest records still have.
        let candidates: Vec<String> = match self.def.bronze_table(&table) {
            Some(b) => {
                let mut c: Vec<String> = amount_of(b).into_iter().collect();
                c.extend(
                    b.schema
                        .columns
                        .iter()
                        .rev()
                        .map(|c| c.name.clone())
                        .filter(|n| !keys.contains(n)),
                );
                c
            }
            None => vec![column.clone()],
        };
        // The business error is a new record: a key of its own (no tie with a real change).
        let key: Option<String> = self
            .def
            .silver
            .iter()
            .filter(|s| s.source == table)
            .find_map(|s| s.merge.as_ref())
            .and_then(|m| m.keys.first().cloned());
        let quarantined = |p: &Playground| {
            p.row_counts()
                .get(&TableName::quarantine())
                .copied()
                .unwrap_or(0)
        };
        let held_before = quarantined(self);
        let kafka = self.topics.get(&table).filter(|t| t.committed > 0).cloned();
        let (text, what) = if let Some(topic) = &kafka {
            let live: Vec<String> = topic
                .log
                .iter()
                .filter(|m| !m.erased)
                .filter_map(|m| m.value.clone())
                .collect();
            let texts = match event {
                LabEvent::BusinessError => live.last().cloned().into_iter().collect::<Vec<_>>(),
                _ => live,
            };
            let format = crate::bronze::SourceFormat::JsonLines;
            let (text, _) = match event {
                LabEvent::BusinessError => crate::lab::events::with_negative_amount(
                    format,
                    None,
                    &[],
                    &texts,
                    &column,
                    key.as_deref(),
                )?,
                _ => {
                    let (text, ext, renamed) =
                        crate::lab::events::drifted(format, None, &[], &texts, &candidates)?;
                    column = renamed;
                    (text, ext)
                }
            };
            (
                text,
                tr(
                    lang,
                    format!("new messages on {}", topic.name),
                    format!("новые сообщения в {}", topic.name),
                ),
            )
        } else {
            let b = self
                .newest_landed(Some(&table))
                .ok_or_else(|| EngineError::Internal("no landed file".into()))?;
            let bytes = self
                .lake
                .get_bytes(b.landing_path.as_deref().unwrap_or_default())
                .await?;
            let options = self
                .def
                .bronze_table(&table)
                .map(|d| d.ingest_options.clone())
                .unwrap_or_default();
            let split = crate::bronze::split_file(&bytes, &options)?;
            let texts: Vec<String> = split.records.iter().map(|r| r.text.clone()).collect();
            let (text, ext) = match event {
                LabEvent::BusinessError => crate::lab::events::with_negative_amount(
                    split.format,
                    split.dialect.as_ref(),
                    &split.header,
                    &texts,
                    &column,
                    key.as_deref(),
                )?,
                _ => {
                    let (text, ext, renamed) = crate::lab::events::drifted(
                        split.format,
                        split.dialect.as_ref(),
                        &split.header,
                        &texts,
                        &candidates,
                    )?;
                    column = renamed;
                    (text, ext)
                }
            };
            let stem = b
                .file_name
                .rsplit_once('.')
                .map_or(b.file_name.as_str(), |(s, _)| s)
                .to_string();
            let name = match event {
                LabEvent::BusinessError => format!("{stem}_business_error.{ext}"),
                _ => format!("{stem}_v2.{ext}"),
            };
            (text, name)
        };
        if kafka.is_some() {
            let messages = text
                .lines()
                .map(|l| crate::bronze::kafka::KafkaMessage {
                    key: None,
                    value: Some(l.to_string()),
                    producer_ts_micros: None,
                    erased: false,
                })
                .collect();
            self.kafka_produce(&table, messages)?;
            self.poll_into_bronze(&table, None, false).await?;
        } else {
            self.append(&table, &what, text.as_bytes(), &IngestOptions::default())
                .await?;
        }
        self.run().await;
        Ok(match event {
            LabEvent::BusinessError if quarantined(self) > held_before => tr(
                lang,
                format!("A record with {column} = -100 arrived in {t} ({what}): a business error. The pipeline did its job; the data owner fixes the record, from the quarantine (seed 000 §8)."),
                format!("В {t} пришла запись с {column} = -100 ({what}): бизнес-ошибка. Пайплайн отработал как надо; запись исправляет владелец данных — из карантина (seed 000 §8)."),
            ),
            LabEvent::BusinessError => tr(
                lang,
                format!("A record with {column} = -100 arrived in {t} ({what}): a business error, and no rule of silver rejects it, so it went through to silver and gold. A rule is missing: an expectation {column} > 0 would quarantine it for the data owner (seed 000 §8)."),
                format!("В {t} пришла запись с {column} = -100 ({what}): бизнес-ошибка, и ни одно правило silver её не отклоняет, поэтому она прошла в silver и gold. Не хватает правила: ожидание {column} > 0 отправило бы её в карантин владельцу данных (seed 000 §8)."),
            ),
            _ => tr(
                lang,
                format!("The source renamed {column} to {column}_v2 and added source_version ({what}): {t} took the records as they came; silver reads the declared {column} as missing in them (see the batch log and the schema checks)."),
                format!("Источник переименовал {column} в {column}_v2 и добавил source_version ({what}): {t} принял записи как есть; silver не находит в них объявленную {column} (см. журнал батчей и проверки схемы)."),
            ),
        })
    }

    /// The newest version of every silver, quarantine and gold table.
    fn table_versions(&self) -> BTreeMap<TableName, u64> {
        self.history
            .all()
            .into_iter()
            .filter(|(t, _)| !t.is_bronze() && t.layer() != medallion_protocol::Layer::Meta)
            .filter_map(|(t, v)| Some((t, v.last()?.version)))
            .collect()
    }

    /// Rows of every table of the last good run (the quarantine: open rows).
    fn row_counts(&self) -> BTreeMap<TableName, usize> {
        let Some(out) = self.last_good.as_ref() else {
            return BTreeMap::new();
        };
        out.tables
            .iter()
            .map(|t| {
                let n = if t.name.is_quarantine() {
                    crate::silver::quarantine::open_rows(&t.batch)
                } else {
                    t.batch.num_rows()
                };
                (t.name.clone(), n)
            })
            .collect()
    }

    /// Rebuilds the twin and the comparison (after every change while the
    /// lab is active); a twin that cannot be built is the lab's error, never
    /// the session's.
    pub(super) async fn refresh_lab(&mut self) {
        if !self.lab.active() {
            self.lab_view = None;
            return;
        }
        let mut view = LabView {
            on: self.lab.on.clone(),
            timeline: self.lab.timeline.clone(),
            ..Default::default()
        };
        let mine = self.health(None, 0).await;
        let mut theirs = None;
        if !self.lab.on.is_empty() {
            match self.build_twin().await {
                Ok((twin, left_out)) => {
                    if let Err(e) = self.compare_twin(&twin, &left_out, &mut view).await {
                        view.error = Some(e.to_string());
                    }
                    theirs = Some(
                        twin.health(Some((&left_out, &self.lab.on)), self.lab.reruns())
                            .await,
                    );
                }
                Err(e) => view.error = Some(e.to_string()),
            }
        }
        view.health = HealthSign::ALL
            .iter()
            .enumerate()
            .map(|(i, sign)| HealthCheck {
                sign: *sign,
                correct: mine[i].clone(),
                anti: theirs.as_ref().map(|t| t[i].clone()),
            })
            .collect();
        self.lab_view = Some(view);
    }

    /// The twin: this session's definition and bronze with the lab's
    /// anti-patterns, run once, then once per re-run on the timeline.
    /// Returns it with the records its ingest left out, per bronze table.
    async fn build_twin(&self) -> Result<(Playground, LeftOut)> {
        let mut def = self.def.clone();
        if self.lab.has(AntiPattern::InsertInsteadOfMerge) {
            def.anti_patterns.insert_into = self
                .inserted_tables()
                .into_iter()
                .map(|t| t.name().to_string())
                .collect();
        }
        let mut bronze = self.bronze.clone();
        // Records each ingest anti-pattern left out, per table (each counted once, by the first that drops it).
        let mut left_out = LeftOut::new();
        if self.lab.has(AntiPattern::DedupAtIngest) {
            let (b, n) = drop_duplicates(&self.def, &bronze)?;
            bronze = b;
            left_out.insert(AntiPattern::DedupAtIngest, n);
        }
        if self.lab.has(AntiPattern::DropMalformed) {
            let (b, n) = keep_passed(&bronze, &self.rejected_events(Some(PARSE_RULE_ID)))?;
            bronze = b;
            left_out.insert(AntiPattern::DropMalformed, n);
        }
        if self.lab.has(AntiPattern::FilterAtIngest) {
            let (b, n) = keep_passed(&bronze, &self.rejected_events(None))?;
            bronze = b;
            left_out.insert(AntiPattern::FilterAtIngest, n);
        }
        if self.lab.has(AntiPattern::OverwritePartition) {
            let (b, n, _) = overwrite_partitions(&bronze);
            bronze = b;
            left_out.insert(AntiPattern::OverwritePartition, n);
        }
        let twin = self
            .run_copy(def, bronze, self.lab.reruns())
            .await
            .map_err(|why| {
                EngineError::Request(format!(
                    "the twin with the anti-pattern could not run: {why}"
                ))
            })?;
        Ok((twin, left_out))
    }

    /// A throw-away playground in its own in-memory lake: `def` over
    /// `bronze` (this session's batch order), run once, then `reruns` more
    /// times. Errs with the run's errors when it produced no output.
    async fn run_copy(
        &self,
        def: PipelineDef,
        bronze: BTreeMap<String, Vec<(BatchInfo, RecordBatch)>>,
        reruns: usize,
    ) -> std::result::Result<Playground, String> {
        let start = self
            .batches
            .iter()
            .map(|b| b.ingest_ts_micros)
            .max()
            .unwrap_or(0)
            + 1;
        let built = async {
            let mut copy = Playground::with_env(
                Arc::new(FixedClock::new(start)),
                Arc::new(SeededIds::new(0x1ab_7e1_u128)),
            )?;
            copy.reset(&self.example, def, self.lang).await?;
            copy.batches = bronze.values().flatten().map(|(i, _)| i.clone()).collect();
            copy.batches.sort_by_key(|b| {
                self.batches
                    .iter()
                    .position(|o| o.batch_id == b.batch_id)
                    .unwrap_or(usize::MAX)
            });
            copy.bronze = bronze;
            for b in self.def.bronze.clone() {
                // Gold that reads bronze scans its files: one file with all its rows.
                let rows = copy.bronze_rows(&b.name, None)?;
                if rows.num_rows() > 0 {
                    let path = format!("{}/part-000001.parquet", TableName::bronze(&b.name).path());
                    copy.lake
                        .write_parquet(&path, rows.schema(), std::slice::from_ref(&rows))
                        .await?;
                }
                copy.register_bronze(&b.name).await?;
            }
            copy.run().await;
            for _ in 0..reruns {
                copy.run().await;
            }
            Ok::<_, EngineError>(copy)
        }
        .await;
        let copy = built.map_err(|e| e.to_string())?;
        if copy.last_good.is_none() || !copy.run_info.ok {
            let mut why: Vec<String> = copy.run_info.errors.clone();
            why.extend(
                copy.diagnostics
                    .iter()
                    .map(|d| format!("{}: {}", d.id, d.message)),
            );
            return Err(why.join("; "));
        }
        Ok(copy)
    }

    /// The five signs of a healthy medallion for this playground (the
    /// session, or a twin: `twin` gives the records its ingest left out and
    /// the anti-patterns that did it; it ran `reruns` times more than once).
    async fn health(
        &self,
        twin: Option<(&LeftOut, &[AntiPattern])>,
        reruns: usize,
    ) -> Vec<SignState> {
        let lang = self.lang;
        let out = self.last_good.as_ref();
        let mut lost: Vec<(TableName, usize, String)> = Vec::new();
        for b in &self.def.bronze {
            let t = TableName::bronze(&b.name);
            let dropped: usize = self
                .batches
                .iter()
                .filter(|i| i.table == b.name)
                .map(|i| i.dropped_records)
                .sum();
            if dropped > 0 {
                lost.push((t.clone(), dropped, "DROPMALFORMED".into()));
            }
            if let Some((left_out, _)) = twin {
                let n: usize = left_out.values().filter_map(|m| m.get(&b.name)).sum();
                if n > 0 {
                    let how: Vec<&str> = left_out
                        .iter()
                        .filter(|(_, m)| m.get(&b.name).is_some_and(|k| *k > 0))
                        .map(|(a, _)| a.key())
                        .collect();
                    lost.push((t, n, how.join(", ")));
                }
            }
        }
        let mut gold = Vec::new();
        let mut lineage = Vec::new();
        for s in &self.def.silver {
            let t = TableName::silver(&s.name);
            let mut inputs = vec![TableName::bronze(&s.source).to_string()];
            inputs.extend(
                s.rules
                    .rules
                    .iter()
                    .filter_map(|r| r.lookup.as_ref().map(|l| l.table.to_string())),
            );
            let known = if self.def.bronze_table(&s.source).is_some() {
                Ok(inputs)
            } else {
                Err(tr(
                    lang,
                    format!(
                        "reads {}, which does not exist",
                        TableName::bronze(&s.source)
                    ),
                    format!("читает {}, которой нет", TableName::bronze(&s.source)),
                ))
            };
            lineage.push((t.clone(), known, !self.history.versions(&t).is_empty()));
        }
        for g in &self.def.gold {
            let t = TableName::gold(&g.name);
            if let Some(b) = out.and_then(|o| o.table(&t)) {
                gold.push((
                    t.clone(),
                    b.schema(),
                    crate::gold::key_columns(&self.ctx, g).await,
                ));
            }
            lineage.push((
                t.clone(),
                crate::gold::inputs(&self.ctx, &g.sql).await,
                !self.history.versions(&t).is_empty(),
            ));
        }
        let rebuild_differs = if self.mode == RunMode::Full
            && reruns == 0
            && self.def.gold.iter().all(|g| g.merge_on.is_empty())
        {
            None
        } else {
            match self
                .run_copy(self.def.clone(), self.bronze.clone(), 0)
                .await
            {
                Ok(fresh) => {
                    let mut differs = Vec::new();
                    for g in &self.def.gold {
                        let t = TableName::gold(&g.name);
                        let (a, b) = (
                            out.and_then(|o| o.table(&t)),
                            fresh.last_good.as_ref().and_then(|o| o.table(&t)),
                        );
                        if let (Some(a), Some(b)) = (a, b) {
                            let n = crate::lake::versions::row_diff(a, b)
                                .map(|(x, y)| x + y)
                                .unwrap_or(usize::MAX);
                            if n > 0 {
                                differs.push((t, n));
                            }
                        }
                    }
                    Some(Ok(differs))
                }
                Err(why) => Some(Err(why)),
            }
        };
        evaluate(&HealthFacts {
            lang,
            bronze_records: self
                .bronze
                .values()
                .flatten()
                .map(|(_, r)| r.num_rows())
                .sum(),
            lost,
            erased: self.batches.iter().map(|b| b.erased_records).sum(),
            reads_bronze: out.map(|o| o.gold_reads_bronze.clone()).unwrap_or_default(),
            gold,
            rebuild_differs,
            lineage,
        })
    }

    /// The silver tables the INSERT anti-pattern writes: those with a MERGE
    /// key that no other silver table looks up (the facts the job appends;
    /// a dimension looked up stays merged, as its own job would keep it),
    /// or every merged table when each is a lookup.
    fn inserted_tables(&self) -> Vec<TableName> {
        let merged: Vec<TableName> = self
            .def
            .silver
            .iter()
            .filter(|s| s.merge.is_some())
            .map(|s| TableName::silver(&s.name))
            .collect();
        let looked_up: HashSet<TableName> = self
            .def
            .silver
            .iter()
            .flat_map(|s| s.rules.rules.iter())
            .filter_map(|r| r.lookup.as_ref().map(|l| l.table.clone()))
            .collect();
        let facts: Vec<TableName> = merged
            .iter()
            .filter(|t| !looked_up.contains(*t))
            .cloned()
            .collect();
        if facts.is_empty() {
            merged
        } else {
            facts
        }
    }

    /// `_event_id`s of the bronze records the last run's rules kept out of
    /// silver (open quarantine rows; ambiguous merge ties aside), or only
    /// those of rule `only` (`parse`: records that do not fit the schema).
    fn rejected_events(&self, only: Option<&str>) -> HashSet<String> {
        let Some(q) = self
            .last_good
            .as_ref()
            .and_then(|o| o.table(TableName::quarantine()))
        else {
            return HashSet::new();
        };
        let col = |n: &str| {
            q.column_by_name(n)
                .and_then(|c| c.as_any().downcast_ref::<StringArray>().cloned())
        };
        let (Some(ids), Some(rules)) = (col("_event_id"), col("rule_id")) else {
            return HashSet::new();
        };
        let closed = q.column_by_name("closed_in_run");
        (0..q.num_rows())
            .filter(|&i| closed.is_none_or(|c| c.is_null(i)) && rules.value(i) != "merge")
            .filter(|&i| only.is_none_or(|r| rules.value(i) == r))
            .map(|i| ids.value(i).to_string())
            .collect()
    }

    /// Fills `view` with the comparison of this session and `twin`.
    async fn compare_twin(
        &self,
        twin: &Playground,
        left_out: &LeftOut,
        view: &mut LabView,
    ) -> Result<()> {
        let lang = self.lang;
        let mine = self.row_counts();
        let theirs = twin.row_counts();
        let mut names: Vec<TableName> = self
            .def
            .bronze
            .iter()
            .map(|b| TableName::bronze(&b.name))
            .collect();
        names.extend(self.def.silver.iter().map(|s| TableName::silver(&s.name)));
        names.push(TableName::quarantine());
        names.extend(self.def.gold.iter().map(|g| TableName::gold(&g.name)));
        view.counts = names
            .iter()
            .map(|t| LabCount {
                table: t.clone(),
                correct: if t.is_bronze() {
                    self.bronze_rows(t.name(), None).ok().map(|b| b.num_rows())
                } else {
                    mine.get(t).copied()
                },
                anti: if t.is_bronze() {
                    twin.bronze_rows(t.name(), None).ok().map(|b| b.num_rows())
                } else {
                    theirs.get(t).copied()
                },
            })
            .collect();
        for g in &self.def.gold {
            let name = TableName::gold(&g.name);
            let key = crate::gold::key_columns(&self.ctx, g).await;
            let error = crate::api::diagnostics_for(twin.diagnostics.iter(), "gold", &g.name)
                .or_else(|| crate::api::diagnostics_for(self.diagnostics.iter(), "gold", &g.name));
            view.gold.push(compare_gold(
                name.clone(),
                &key,
                self.last_good.as_ref().and_then(|o| o.table(&name)),
                twin.last_good.as_ref().and_then(|o| o.table(&name)),
                error,
            )?);
        }
        view.checks = compare_checks(&self.checks, &twin.checks);
        view.findings = self.findings(view, left_out, twin, lang);
        Ok(())
    }

    /// What exposes each anti-pattern that is on, from the figures compared.
    fn findings(
        &self,
        view: &LabView,
        left_out: &LeftOut,
        twin: &Playground,
        lang: Lang,
    ) -> Vec<String> {
        let mut out = Vec::new();
        let count = |t: &TableName| view.counts.iter().find(|c| &c.table == t);
        for a in &view.on {
            match a {
                AntiPattern::OverwritePartition | AntiPattern::DropMalformed => {
                    for b in &self.def.bronze {
                        let t = TableName::bronze(&b.name);
                        let n = left_out
                            .get(a)
                            .and_then(|m| m.get(&b.name))
                            .copied()
                            .unwrap_or(0);
                        let Some(c) = count(&t) else { continue };
                        let (sent, kept) = (c.correct.unwrap_or(0), c.anti.unwrap_or(0));
                        if *a == AntiPattern::DropMalformed {
                            if n > 0 {
                                out.push(tr(
                                    lang,
                                    format!("{t}: DROPMALFORMED dropped {n} of {sent} records that did not fit the declared schema; bronze holds {kept}. With PERMISSIVE they stay, with their reason, and reach the quarantine."),
                                    format!("{t}: DROPMALFORMED отбросил {n} из {sent} записей, не подошедших к объявленной схеме; в bronze {kept}. С PERMISSIVE они остаются вместе с причиной и попадают в карантин."),
                                ));
                            }
                            continue;
                        }
                        let batches =
                            |p: &Playground| p.batches.iter().filter(|i| i.table == b.name).count();
                        let (mine, theirs) = (batches(self), batches(twin));
                        if mine > theirs {
                            out.push(tr(
                                lang,
                                format!("{t}: {} of its {mine} batches were overwritten by a later batch of the same day; their {n} records are gone ({sent} → {kept}). Time travel to the versions they made and a replay of that day can only show the last batch.", mine - theirs),
                                format!("{t}: {} из {mine} батчей перезаписаны более поздним батчем того же дня; их {n} записей больше нет ({sent} → {kept}). Time travel к их версиям и replay этого дня покажут только последний батч.", mine - theirs),
                            ));
                        }
                    }
                    if *a == AntiPattern::OverwritePartition
                        && !out
                            .iter()
                            .any(|f| f.contains("overwritten") || f.contains("перезаписаны"))
                    {
                        out.push(tr(
                            lang,
                            "Every bronze table has one batch a day so far, so nothing is overwritten yet: drop a second file on a bronze table (or load the landing-zone retry scenario).".into(),
                            "Пока у каждой таблицы bronze один батч в день, перезаписывать нечего: добавьте второй файл в таблицу bronze (или загрузите сценарий с повторной выгрузкой).".into(),
                        ));
                    }
                }
                AntiPattern::DedupAtIngest | AntiPattern::FilterAtIngest => {
                    for b in &self.def.bronze {
                        let n = left_out
                            .get(a)
                            .and_then(|m| m.get(&b.name))
                            .copied()
                            .unwrap_or(0);
                        let Some(c) = count(&TableName::bronze(&b.name)) else {
                            continue;
                        };
                        let (sent, kept) = (c.correct.unwrap_or(0), c.anti.unwrap_or(0));
                        if n == 0 {
                            continue;
                        }
                        let t = TableName::bronze(&b.name);
                        out.push(match a {
                            AntiPattern::DedupAtIngest => tr(
                                lang,
                                format!("{t}: the source sent {sent} records, bronze with dropDuplicates holds {kept}. The {n} dropped (re-deliveries, later changes of a key) cannot be counted by a reconciliation, replayed or audited: what the source sent is no longer known."),
                                format!("{t}: источник прислал {sent} записей, bronze с dropDuplicates хранит {kept}. {n} отброшенных (повторные доставки, последующие изменения ключа) не учесть при сверке, не переиграть и не проверить: что прислал источник, больше неизвестно."),
                            ),
                            _ => tr(
                                lang,
                                format!("{t}: {n} of the {sent} records the source sent failed a business rule and were never written. An audit query over bronze for them finds 0 rows (the correct bronze: {n}); a rule relaxed later cannot bring them back by replay."),
                                format!("{t}: {n} из {sent} присланных записей не прошли бизнес-правило и не записаны. Аудит-запрос к bronze находит 0 строк (в правильном bronze: {n}); ослабленное позже правило не вернёт их через replay."),
                            ),
                        });
                    }
                    if *a == AntiPattern::FilterAtIngest {
                        if let Some(q) = count(&TableName::quarantine()) {
                            if q.correct != q.anti {
                                out.push(tr(
                                    lang,
                                    format!("silver.quarantine: {} open rows in the correct pipeline, {} with the filter at ingest: nobody sees what was rejected, or why.", q.correct.unwrap_or(0), q.anti.unwrap_or(0)),
                                    format!("silver.quarantine: {} открытых строк в правильном пайплайне, {} с фильтром при загрузке: никто не видит, что отброшено и почему.", q.correct.unwrap_or(0), q.anti.unwrap_or(0)),
                                ));
                            }
                        }
                    }
                }
                AntiPattern::InsertInsteadOfMerge => {
                    let reruns = self.lab.reruns();
                    let merged = self.inserted_tables();
                    if merged.is_empty() {
                        out.push(tr(
                            lang,
                            "No silver table of this scenario is written by MERGE, so INSERT changes nothing here: load the Kafka orders scenario.".into(),
                            "В этом сценарии нет таблиц silver, которые пишутся через MERGE, поэтому INSERT здесь ничего не меняет: загрузите сценарий заказов из Kafka.".into(),
                        ));
                    } else if reruns == 0 {
                        let names = merged
                            .iter()
                            .map(|t| t.to_string())
                            .collect::<Vec<_>>()
                            .join(", ");
                        out.push(tr(
                            lang,
                            format!("One run of the job gives the same silver with INSERT INTO ({names}) as with MERGE. Now let the orchestrator re-run the job (Events): INSERT appends the same rows again, MERGE changes nothing."),
                            format!("Один запуск джобы даёт тот же silver с INSERT INTO ({names}), что и с MERGE. Теперь пусть оркестратор перезапустит джобу (События): INSERT допишет те же строки ещё раз, MERGE ничего не изменит."),
                        ));
                    } else {
                        for t in &merged {
                            if let Some(c) = count(t) {
                                let (m, i, runs) =
                                    (c.correct.unwrap_or(0), c.anti.unwrap_or(0), reruns + 1);
                                out.push(if i > m {
                                    tr(
                                        lang,
                                        format!("{t}: {m} rows with MERGE, {i} with INSERT after {runs} runs of the same job: every re-run appended the same rows again."),
                                        format!("{t}: строк с MERGE — {m}, с INSERT — {i} после {runs} запусков той же джобы: каждый перезапуск дописал те же строки ещё раз."),
                                    )
                                } else {
                                    tr(
                                        lang,
                                        format!("{t}: {m} rows with MERGE, {i} with INSERT after {runs} runs of the same job (the rows a re-run repeats are the ones this twin's other switches left out of bronze)."),
                                        format!("{t}: строк с MERGE — {m}, с INSERT — {i} после {runs} запусков той же джобы (строки, которые повторяет перезапуск, другие переключатели двойника не пустили в bronze)."),
                                    )
                                });
                            }
                        }
                    }
                }
            }
        }
        for a in &view.on {
            let none = left_out.get(a).is_some_and(|m| m.values().all(|n| *n == 0));
            let why = match a {
                AntiPattern::DedupAtIngest => Some(tr(lang, "dropDuplicates at ingest changes nothing here: no two records of a bronze table share a business key (re-send a file or let the Kafka consumer crash to see it).".into(), "dropDuplicates при загрузке здесь ничего не меняет: ни у каких двух записей таблицы bronze нет общего бизнес-ключа (пришлите файл повторно или уроните консьюмер Kafka, чтобы увидеть эффект).".into())),
                AntiPattern::FilterAtIngest => Some(tr(lang, "The business filter at ingest changes nothing here: silver's rules reject no record of this scenario (send a business error to see it).".into(), "Бизнес-фильтр при загрузке здесь ничего не меняет: правила silver не отклоняют ни одной записи этого сценария (пришлите бизнес-ошибку, чтобы увидеть эффект).".into())),
                AntiPattern::DropMalformed => Some(tr(lang, "DROPMALFORMED changes nothing here: every record fits the declared schema (load the e-commerce scenario, whose files have records that do not).".into(), "DROPMALFORMED здесь ничего не меняет: каждая запись подходит к объявленной схеме (загрузите сценарий e-commerce, где есть неподходящие записи).".into())),
                _ => None,
            };
            if let (true, Some(why)) = (none, why) {
                out.push(why);
            }
        }
        for g in &view.gold {
            for m in &g.measures {
                if m.correct != m.anti {
                    let ratio = m
                        .ratio
                        .map(|r| format!(" (×{})", medallion_protocol::lab::ratio_text(r)))
                        .unwrap_or_default();
                    out.push(tr(
                        lang,
                        format!("{}: total {} is {} in the correct pipeline and {}{ratio} with the anti-pattern.", g.model, m.column, m.correct, m.anti),
                        format!("{}: итог {} — {} в правильном пайплайне и {}{ratio} с антипаттерном.", g.model, m.column, m.correct, m.anti),
                    ));
                }
            }
        }
        out
    }
}
